//! Phase 1 of header validation: a strict RFC 8259 syntax pass over the header text.
//!
//! serde_json would accept what some loaders refuse (and hide duplicate keys and number
//! spellings), so the header is lexed by hand: any byte another JSON reader could read
//! differently is a violation here, before the schema pass in `schema` looks at meaning.

use super::header::{Limits, PREFIX_LEN, Violation, code, violation};

/// Phase 1 of the header: byte 0 is `{`, the whole text is one strict JSON value within the
/// depth limit, and only 0x20 padding follows it. Tab/newline padding is refused because a
/// different JSON reader could stop elsewhere (parser differential).
pub(super) fn check_syntax(text: &str, limits: &Limits) -> Result<(), Violation> {
    let mut p = Json::new(text);
    match p.peek() {
        Some(b'{') => {}
        Some(c @ (b'[' | b'"' | b't' | b'f' | b'n' | b'-' | b'0'..=b'9')) => {
            return Err(p.fail(
                code::NOT_AN_OBJECT,
                format!(
                    "header starts with {:?}: top level must be a json object",
                    char::from(c)
                ),
            ));
        }
        Some(c) => {
            return Err(p.fail(
                code::HEADER_LEADING_BYTE,
                format!("header starts with byte 0x{c:02x}, not '{{'"),
            ));
        }
        None => return Err(p.fail(code::HEADER_INVALID_JSON, "header is empty")),
    }
    p.value(0, limits.max_json_depth)?;
    let rest = text.as_bytes().get(p.pos..).unwrap_or_default();
    if let Some(i) = rest.iter().position(|&c| c != b' ') {
        let bad = rest.get(i).copied().unwrap_or_default();
        p.pos = p.pos.saturating_add(i);
        return Err(p.fail(
            code::HEADER_TRAILING_BYTES,
            format!(
                "byte 0x{bad:02x} after the header's closing brace; only spaces (0x20) may pad it"
            ),
        ));
    }
    Ok(())
}

/// A cursor over the header text with strict RFC 8259 lexing. Positions are header-relative;
/// violations report `8 + pos`.
pub(super) struct Json<'a> {
    pub(super) text: &'a str,
    pub(super) pos: usize,
}

impl<'a> Json<'a> {
    pub(super) fn new(text: &'a str) -> Self {
        Self { text, pos: 0 }
    }

    pub(super) fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    pub(super) fn bump(&mut self) {
        self.pos = self.pos.saturating_add(1);
    }

    pub(super) fn file_offset(&self, pos: usize) -> u64 {
        PREFIX_LEN.saturating_add(pos as u64)
    }

    pub(super) fn fail(&self, code: &'static str, message: impl Into<String>) -> Violation {
        violation(code, message).at(self.file_offset(self.pos))
    }

    pub(super) fn found(&self) -> String {
        match self.peek() {
            Some(c) if c.is_ascii_graphic() => format!("{:?}", char::from(c)),
            Some(c) => format!("byte 0x{c:02x}"),
            None => "end of header".to_owned(),
        }
    }

    pub(super) fn invalid(&self, expected: &str) -> Violation {
        self.fail(
            code::HEADER_INVALID_JSON,
            format!("expected {expected}, found {}", self.found()),
        )
    }

    pub(super) fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.bump();
        }
    }

    pub(super) fn expect_byte(&mut self, c: u8) -> Result<(), Violation> {
        if self.peek() == Some(c) {
            self.bump();
            Ok(())
        } else {
            Err(self.invalid(&format!("{:?}", char::from(c))))
        }
    }

    /// Recursive descent over any value; recursion is bounded by `max_depth`.
    pub(super) fn value(&mut self, depth: usize, max_depth: usize) -> Result<(), Violation> {
        match self.peek() {
            Some(b'{') | Some(b'[') => {
                if depth >= max_depth {
                    return Err(self.fail(
                        code::JSON_TOO_DEEP,
                        format!("json nesting exceeds the limit of {max_depth}"),
                    ));
                }
                let object = self.peek() == Some(b'{');
                let close = if object { b'}' } else { b']' };
                self.bump();
                self.skip_ws();
                if self.peek() == Some(close) {
                    self.bump();
                    return Ok(());
                }
                loop {
                    self.skip_ws();
                    if object {
                        self.string(None)?;
                        self.skip_ws();
                        self.expect_byte(b':')?;
                        self.skip_ws();
                    }
                    self.value(depth.saturating_add(1), max_depth)?;
                    self.skip_ws();
                    match self.peek() {
                        Some(b',') => self.bump(),
                        Some(c) if c == close => {
                            self.bump();
                            return Ok(());
                        }
                        _ => {
                            return Err(self.invalid(if object {
                                "',' or '}'"
                            } else {
                                "',' or ']'"
                            }));
                        }
                    }
                }
            }
            Some(b'"') => self.string(None),
            Some(b't') => self.literal("true"),
            Some(b'f') => self.literal("false"),
            Some(b'n') => self.literal("null"),
            Some(b'-' | b'0'..=b'9') => self.number().map(|_| ()),
            _ => Err(self.invalid("a json value")),
        }
    }

    pub(super) fn literal(&mut self, word: &str) -> Result<(), Violation> {
        let end = self.pos.saturating_add(word.len());
        if self.text.as_bytes().get(self.pos..end) == Some(word.as_bytes()) {
            self.pos = end;
            Ok(())
        } else {
            Err(self.invalid(word))
        }
    }

    /// Lexes a number with the RFC 8259 grammar (no `+`, no leading zeros, no bare `.`) and
    /// returns its exact spelling.
    pub(super) fn number(&mut self) -> Result<&'a str, Violation> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.bump();
        }
        match self.peek() {
            Some(b'0') => {
                self.bump();
                if matches!(self.peek(), Some(b'0'..=b'9')) {
                    return Err(self.fail(code::HEADER_INVALID_JSON, "number with a leading zero"));
                }
            }
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.invalid("a digit")),
        }
        if self.peek() == Some(b'.') {
            self.bump();
            self.required_digits()?;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.bump();
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.bump();
            }
            self.required_digits()?;
        }
        Ok(self.text.get(start..self.pos).unwrap_or_default())
    }

    pub(super) fn digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.bump();
        }
    }

    pub(super) fn required_digits(&mut self) -> Result<(), Violation> {
        if !matches!(self.peek(), Some(b'0'..=b'9')) {
            return Err(self.invalid("a digit"));
        }
        self.digits();
        Ok(())
    }

    /// Lexes a string, unescaping into `out` when given. Lone surrogates are refused: they have
    /// no UTF-8 form, and loaders that replace them with U+FFFD would merge distinct names.
    pub(super) fn string(&mut self, mut out: Option<&mut String>) -> Result<(), Violation> {
        self.expect_byte(b'"')?;
        loop {
            let start = self.pos;
            while let Some(c) = self.peek() {
                if c == b'"' || c == b'\\' || c < 0x20 {
                    break;
                }
                self.bump();
            }
            if let Some(o) = out.as_deref_mut() {
                o.push_str(self.text.get(start..self.pos).unwrap_or_default());
            }
            match self.peek() {
                None => return Err(self.fail(code::HEADER_INVALID_JSON, "unterminated string")),
                Some(b'"') => {
                    self.bump();
                    return Ok(());
                }
                Some(b'\\') => {
                    self.bump();
                    let ch = self.escape()?;
                    if let Some(o) = out.as_deref_mut() {
                        o.push(ch);
                    }
                }
                Some(c) => {
                    return Err(self.fail(
                        code::HEADER_INVALID_JSON,
                        format!("unescaped control character 0x{c:02x} in string"),
                    ));
                }
            }
        }
    }

    pub(super) fn escape(&mut self) -> Result<char, Violation> {
        let simple = match self.peek() {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                self.bump();
                return self.unicode_escape();
            }
            _ => return Err(self.invalid("an escape character")),
        };
        self.bump();
        Ok(simple)
    }

    pub(super) fn unicode_escape(&mut self) -> Result<char, Violation> {
        let at = self.pos;
        let first = self.hex4()?;
        let scalar = match first {
            0xD800..=0xDBFF => {
                if self.peek() != Some(b'\\')
                    || self.text.as_bytes().get(self.pos.saturating_add(1)) != Some(&b'u')
                {
                    return Err(violation(
                        code::HEADER_INVALID_JSON,
                        format!("lone high surrogate \\u{first:04x} in string"),
                    )
                    .at(self.file_offset(at)));
                }
                self.pos = self.pos.saturating_add(2);
                let second = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&second) {
                    return Err(violation(
                        code::HEADER_INVALID_JSON,
                        format!("high surrogate \\u{first:04x} followed by \\u{second:04x}, not a low surrogate"),
                    )
                    .at(self.file_offset(at)));
                }
                0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
            }
            0xDC00..=0xDFFF => {
                return Err(violation(
                    code::HEADER_INVALID_JSON,
                    format!("lone low surrogate \\u{first:04x} in string"),
                )
                .at(self.file_offset(at)));
            }
            other => other,
        };
        char::from_u32(scalar).ok_or_else(|| {
            violation(
                code::HEADER_INVALID_JSON,
                format!("invalid code point {scalar:#x}"),
            )
            .at(self.file_offset(at))
        })
    }

    pub(super) fn hex4(&mut self) -> Result<u32, Violation> {
        let mut v = 0u32;
        for _ in 0..4 {
            let d = match self.peek() {
                Some(c @ b'0'..=b'9') => c - b'0',
                Some(c @ b'a'..=b'f') => c - b'a' + 10,
                Some(c @ b'A'..=b'F') => c - b'A' + 10,
                _ => return Err(self.invalid("four hex digits")),
            };
            v = (v << 4) | u32::from(d);
            self.bump();
        }
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::super::code;
    use super::super::tests::{T_A, check, code_of, file};

    #[test]
    fn accepts_space_padding_and_inner_whitespace() {
        assert_eq!(code_of(&format!("{{\n\t{T_A}\r\n}}      "), 8), "ok");
    }

    #[test]
    fn rejects_leading_whitespace_and_bom() {
        assert_eq!(code_of(" {}", 0), code::HEADER_LEADING_BYTE);
        assert_eq!(code_of("\u{feff}{}", 0), code::HEADER_LEADING_BYTE);
    }

    #[test]
    fn rejects_non_object_header() {
        for h in ["[]", "\"x\"", "12", "null", "true"] {
            assert_eq!(code_of(h, 0), code::NOT_AN_OBJECT, "{h}");
        }
    }

    #[test]
    fn rejects_invalid_json() {
        for h in [
            "",
            "{",
            "{/*c*/}",
            r#"{"__metadata__":{"k":"v",}}"#,
            r#"{"__metadata__":{"k":"v"},}"#,
            r#"{"a":{"dtype":"F32","shape":[NaN],"data_offsets":[0,0]}}"#,
            r#"{"a":{"dtype":"F32","shape":[+1],"data_offsets":[0,4]}}"#,
            r#"{"a":{"dtype":"F32","shape":[01],"data_offsets":[0,4]}}"#,
            r#"{"a":{"dtype":"F32","shape":[1.],"data_offsets":[0,4]}}"#,
            r#"{"\ud800":{"dtype":"F32","shape":[0],"data_offsets":[0,0]}}"#,
            r#"{"\udc00":{"dtype":"F32","shape":[0],"data_offsets":[0,0]}}"#,
            r#"{"\ud800\u0041":{"dtype":"F32","shape":[0],"data_offsets":[0,0]}}"#,
            "{\"a\tb\":1}",
            r#"{"\x":1}"#,
            "{'a':1}",
            "{\"a\":tru}",
        ] {
            assert_eq!(code_of(h, 0), code::HEADER_INVALID_JSON, "{h}");
        }
    }

    #[test]
    fn rejects_too_deep_json() {
        let deep = format!(
            "{{\"__metadata__\":{}{}}}",
            "[".repeat(200),
            "]".repeat(200)
        );
        assert_eq!(code_of(&deep, 0), code::JSON_TOO_DEEP);
    }

    #[test]
    fn rejects_bad_padding_after_header() {
        for pad in ["\t", "\n", "\r", "\0", " x", "{}"] {
            let v = check(&file(&format!("{{{T_A}}}{pad}"), 8)).unwrap_err();
            assert_eq!(v.code, code::HEADER_TRAILING_BYTES, "{pad:?}");
        }
    }
}
