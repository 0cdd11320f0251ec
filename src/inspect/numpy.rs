//! NumPy `.npy` header reader.
//!
//! A `.npy` file (alone, or as a member of an `.npz` zip) is a magic string, a version, and a
//! header that is a Python dict literal naming the dtype, memory order and shape; raw array bytes
//! follow. `numpy.load` evaluates that header with `ast.literal_eval`, and when the dtype is (or
//! contains) `object` the "array bytes" are a pickle, which `np.load(..., allow_pickle=True)`
//! unpickles. This module parses the header with a tiny, strict, bounded literal parser (never
//! `eval`), reports whether a pickle follows, and computes the expected data size with checked
//! arithmetic so a file that is longer than its header says (bytes appended after the array) is
//! visible.

use std::io::Read;

use super::problem::Problem;

const MAGIC: &[u8; 6] = b"\x93NUMPY";

/// Caps for header parsing.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Longest header dict accepted (numpy's own default `max_header_size` is 10000).
    pub max_header_len: usize,
    /// Deepest nesting of tuples/lists/dicts in the header literal.
    pub max_depth: usize,
    /// Most literal values (strings, numbers, containers) in the header.
    pub max_items: usize,
    /// Most array dimensions.
    pub max_dims: usize,
}

impl From<&crate::model::limits::Limits> for Limits {
    /// `numpy_header_bytes` from the policy; depth, items and dimensions of the header literal
    /// are fixed internal caps (a header within the byte limit cannot hold much more).
    fn from(l: &crate::model::limits::Limits) -> Self {
        Limits {
            max_header_len: crate::model::limits::usize_of(l.numpy_header_bytes),
            max_depth: 16,
            max_items: 10_000,
            max_dims: 64,
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self::from(&crate::model::limits::Limits::default())
    }
}

/// A dtype description as written in the header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Descr {
    /// A type string such as `<f4`, `|b1`, `|O`.
    Simple(String),
    /// A structured dtype: a list of fields.
    Structured(Vec<Field>),
}

/// One field of a structured dtype.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// Field name (the name, not the title, when a `(title, name)` pair is given).
    pub name: String,
    /// Field type.
    pub descr: Descr,
    /// Sub-array shape (empty for a scalar field).
    pub shape: Vec<u64>,
}

/// Facts from a `.npy` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NpyHeader {
    /// Format version (major, minor).
    pub version: (u8, u8),
    /// Length of the header dict in bytes.
    pub header_len: u64,
    /// Offset of the first data byte (magic + version + length field + header).
    pub data_offset: u64,
    /// The dtype.
    pub descr: Descr,
    /// The dtype rendered as one line, e.g. `<f4` or `[('a', '<i4'), ('b', '|O')]`.
    pub dtype: String,
    /// Column-major data.
    pub fortran_order: bool,
    /// Array shape.
    pub shape: Vec<u64>,
    /// Bytes per element, when the dtype is understood.
    pub item_size: Option<u64>,
    /// Bytes of array data the header implies; `None` for object dtypes (a pickle follows) and
    /// dtypes whose size is not understood.
    pub data_bytes: Option<u64>,
    /// The dtype is or contains `object`: a pickle follows the header.
    pub has_object_dtype: bool,
}

/// Whether `head` starts with the `.npy` magic.
pub fn is_npy(head: &[u8]) -> bool {
    head.starts_with(MAGIC)
}

fn problem(code: &'static str, message: impl Into<String>) -> Problem {
    Problem::malformed(code, message)
}

/// Reads and validates the preamble and header of a `.npy` stream; `r` is left at the first
/// data byte.
pub fn read_header<R: Read + ?Sized>(r: &mut R, limits: &Limits) -> Result<NpyHeader, Problem> {
    let mut pre = [0u8; 8];
    read_exact(r, &mut pre, "magic")?;
    if !pre.starts_with(MAGIC) {
        return Err(problem("bad-magic", "file does not start with \\x93NUMPY").at(0));
    }
    let version = (pre[6], pre[7]);
    let (header_len, fixed) = match version {
        (1, 0) => {
            let mut b = [0u8; 2];
            read_exact(r, &mut b, "header length")?;
            (u64::from(u16::from_le_bytes(b)), 10u64)
        }
        (2, 0) | (3, 0) => {
            let mut b = [0u8; 4];
            read_exact(r, &mut b, "header length")?;
            (u64::from(u32::from_le_bytes(b)), 12u64)
        }
        (major, minor) => {
            return Err(problem(
                "unsupported-version",
                format!("npy version {major}.{minor}"),
            )
            .at(6));
        }
    };
    let len = usize::try_from(header_len)
        .ok()
        .filter(|&l| l <= limits.max_header_len)
        .ok_or_else(|| {
            Problem::limit(
                "header-too-large",
                format!(
                    "header of {header_len} bytes, limit {}",
                    limits.max_header_len
                ),
            )
            .at(fixed)
        })?;
    let mut raw = vec![0u8; len];
    read_exact(r, &mut raw, "header")?;
    // Versions 1 and 2 are latin-1, version 3 is utf-8 (numpy's own rule).
    let text: String = if version.0 == 3 {
        String::from_utf8(raw).map_err(|e| {
            problem(
                "bad-header",
                format!(
                    "header is not utf-8 at byte {}",
                    e.utf8_error().valid_up_to()
                ),
            )
            .at(fixed)
        })?
    } else {
        raw.iter().map(|&b| char::from(b)).collect()
    };
    let lit = Parser::new(&text, limits)
        .parse_document()
        .map_err(|(pos, msg)| {
            problem(
                "bad-header",
                format!("header literal: {msg} at character {pos}"),
            )
            .at(fixed)
        })?;
    let header = interpret(lit, limits).map_err(|p| p.at(fixed))?;
    let data_offset = fixed + header_len;
    let item_size = item_size(&header.descr, limits.max_depth);
    let count = header
        .shape
        .iter()
        .try_fold(1u64, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| {
            problem(
                "size-overflow",
                format!("shape {:?} overflows u64", header.shape),
            )
        })?;
    let has_object_dtype = has_object(&header.descr);
    let data_bytes = match item_size {
        Some(s) if !has_object_dtype => Some(s.checked_mul(count).ok_or_else(|| {
            problem(
                "size-overflow",
                format!("{count} elements of {s} bytes overflow u64"),
            )
        })?),
        _ => None,
    };
    Ok(NpyHeader {
        version,
        header_len,
        data_offset,
        dtype: render(&header.descr),
        descr: header.descr,
        fortran_order: header.fortran_order,
        shape: header.shape,
        item_size,
        data_bytes,
        has_object_dtype,
    })
}

/// Compares the stream length with what the header implies. Bytes past the array are where a
/// second payload hides; too few means a truncated array. Object arrays are skipped: their
/// pickle has no length in the header.
pub fn check_size(h: &NpyHeader, total_len: u64) -> Option<Problem> {
    let data = h.data_bytes?;
    let expected = h.data_offset.checked_add(data)?;
    (expected != total_len).then(|| {
        problem(
            "size-mismatch",
            format!(
                "stream has {total_len} bytes, header implies {expected} ({} header + {data} data)",
                h.data_offset
            ),
        )
        .at(expected.min(total_len))
    })
}

fn read_exact<R: Read + ?Sized>(r: &mut R, buf: &mut [u8], what: &str) -> Result<(), Problem> {
    r.read_exact(buf)
        .map_err(|e| problem("truncated", format!("stream ends inside the {what}: {e}")))
}

/// A Python literal, as far as `.npy` headers need.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Lit {
    Str(String),
    Int(i64),
    Bool(bool),
    Nothing,
    Tuple(Vec<Lit>),
    List(Vec<Lit>),
    Dict(Vec<(Lit, Lit)>),
}

type ParseResult<T> = Result<T, (usize, String)>;

struct Parser<'a> {
    chars: Vec<char>,
    pos: usize,
    items: usize,
    limits: &'a Limits,
}

impl<'a> Parser<'a> {
    fn new(text: &str, limits: &'a Limits) -> Self {
        Parser {
            chars: text.chars().collect(),
            pos: 0,
            items: 0,
            limits,
        }
    }

    fn err<T>(&self, msg: impl Into<String>) -> ParseResult<T> {
        Err((self.pos, msg.into()))
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while self
            .peek()
            .is_some_and(|c| c == ' ' || c == '\t' || c == '\n' || c == '\r')
        {
            self.pos += 1;
        }
    }

    fn parse_document(&mut self) -> ParseResult<Lit> {
        self.skip_ws();
        let v = self.value(0)?;
        self.skip_ws();
        if self.pos != self.chars.len() {
            return self.err("unexpected text after the literal");
        }
        Ok(v)
    }

    fn value(&mut self, depth: usize) -> ParseResult<Lit> {
        self.items += 1;
        if self.items > self.limits.max_items {
            return self.err(format!("more than {} values", self.limits.max_items));
        }
        if depth > self.limits.max_depth {
            return self.err(format!("nesting deeper than {}", self.limits.max_depth));
        }
        self.skip_ws();
        match self.peek() {
            Some('\'' | '"') => self.string().map(Lit::Str),
            Some('(') => {
                let (items, trailing) = self.sequence(')', depth)?;
                // `(x)` is just x in Python; a one-element tuple needs the comma.
                if items.len() == 1 && !trailing {
                    return Ok(items.into_iter().next().unwrap_or(Lit::Nothing));
                }
                Ok(Lit::Tuple(items))
            }
            Some('[') => Ok(Lit::List(self.sequence(']', depth)?.0)),
            Some('{') => self.dict(depth),
            Some(c) if c == '-' || c.is_ascii_digit() => self.int(),
            Some(c) if c.is_ascii_alphabetic() => {
                let start = self.pos;
                while self
                    .peek()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                {
                    self.pos += 1;
                }
                let word: String = self
                    .chars
                    .get(start..self.pos)
                    .unwrap_or(&[])
                    .iter()
                    .collect();
                match word.as_str() {
                    "True" => Ok(Lit::Bool(true)),
                    "False" => Ok(Lit::Bool(false)),
                    "None" => Ok(Lit::Nothing),
                    _ => Err((start, format!("name '{word}' is not a literal"))),
                }
            }
            Some(c) => self.err(format!("unexpected character {c:?}")),
            None => self.err("unexpected end"),
        }
    }

    /// Items up to `close`; also says whether a trailing comma was present.
    fn sequence(&mut self, close: char, depth: usize) -> ParseResult<(Vec<Lit>, bool)> {
        self.pos += 1;
        let mut items = Vec::new();
        let mut trailing = false;
        loop {
            self.skip_ws();
            if self.peek() == Some(close) {
                self.pos += 1;
                return Ok((items, trailing));
            }
            items.push(self.value(depth + 1)?);
            self.skip_ws();
            match self.peek() {
                Some(',') => {
                    self.pos += 1;
                    trailing = true;
                }
                Some(c) if c == close => {
                    trailing = false;
                }
                _ => return self.err(format!("expected ',' or '{close}'")),
            }
        }
    }

    fn dict(&mut self, depth: usize) -> ParseResult<Lit> {
        self.pos += 1;
        let mut entries = Vec::new();
        loop {
            self.skip_ws();
            if self.peek() == Some('}') {
                self.pos += 1;
                return Ok(Lit::Dict(entries));
            }
            let k = self.value(depth + 1)?;
            self.skip_ws();
            if self.peek() != Some(':') {
                return self.err("expected ':'");
            }
            self.pos += 1;
            let v = self.value(depth + 1)?;
            entries.push((k, v));
            self.skip_ws();
            match self.peek() {
                Some(',') => self.pos += 1,
                Some('}') => {}
                _ => return self.err("expected ',' or '}'"),
            }
        }
    }

    fn int(&mut self) -> ParseResult<Lit> {
        let start = self.pos;
        let neg = self.peek() == Some('-');
        if neg {
            self.pos += 1;
        }
        let mut v: i64 = 0;
        let mut digits = 0;
        while let Some(d) = self.peek().and_then(|c| c.to_digit(10)) {
            v = v
                .checked_mul(10)
                .and_then(|v| v.checked_add(i64::from(d)))
                .ok_or((start, "integer too large".to_string()))?;
            digits += 1;
            self.pos += 1;
        }
        if digits == 0 {
            return self.err("expected digits");
        }
        // Python 2 wrote long integers as `3L`; numpy still reads such headers.
        if matches!(self.peek(), Some('L' | 'l')) {
            self.pos += 1;
        }
        Ok(Lit::Int(if neg { -v } else { v }))
    }

    fn string(&mut self) -> ParseResult<String> {
        let quote = self.peek();
        self.pos += 1;
        let mut out = String::new();
        loop {
            let Some(c) = self.peek() else {
                return self.err("unterminated string");
            };
            self.pos += 1;
            if Some(c) == quote {
                return Ok(out);
            }
            if c == '\n' {
                return self.err("newline in string");
            }
            if c != '\\' {
                out.push(c);
                continue;
            }
            let Some(e) = self.peek() else {
                return self.err("unterminated escape");
            };
            self.pos += 1;
            match e {
                '\\' | '\'' | '"' => out.push(e),
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                '0' => out.push('\0'),
                'x' => {
                    let hex: String = self
                        .chars
                        .get(self.pos..self.pos + 2)
                        .unwrap_or(&[])
                        .iter()
                        .collect();
                    let v = u8::from_str_radix(&hex, 16)
                        .map_err(|_| (self.pos, "bad \\x escape".to_string()))?;
                    self.pos += 2;
                    out.push(char::from(v));
                }
                _ => return self.err(format!("unsupported escape \\{e}")),
            }
        }
    }
}

struct Interpreted {
    descr: Descr,
    fortran_order: bool,
    shape: Vec<u64>,
}

/// Checks the header dict has exactly numpy's three keys with the right value types.
fn interpret(lit: Lit, limits: &Limits) -> Result<Interpreted, Problem> {
    let Lit::Dict(entries) = lit else {
        return Err(problem("bad-header", "header is not a dict"));
    };
    let (mut descr, mut fortran, mut shape) = (None, None, None);
    for (k, v) in entries {
        let Lit::Str(key) = k else {
            return Err(problem("bad-header-keys", "header key is not a string"));
        };
        let slot_taken = match key.as_str() {
            "descr" => descr.replace(v).is_some(),
            "fortran_order" => fortran.replace(v).is_some(),
            "shape" => shape.replace(v).is_some(),
            _ => {
                return Err(problem(
                    "bad-header-keys",
                    format!("unexpected header key '{key}'"),
                ));
            }
        };
        if slot_taken {
            return Err(problem(
                "bad-header-keys",
                format!("header key '{key}' repeated"),
            ));
        }
    }
    let (Some(descr), Some(fortran), Some(shape)) = (descr, fortran, shape) else {
        return Err(problem(
            "bad-header-keys",
            "header lacks one of 'descr', 'fortran_order', 'shape'",
        ));
    };
    let Lit::Bool(fortran_order) = fortran else {
        return Err(problem(
            "bad-header",
            "'fortran_order' is not True or False",
        ));
    };
    Ok(Interpreted {
        descr: to_descr(descr, limits, 0)?,
        fortran_order,
        shape: to_shape(shape, limits)?,
    })
}

fn to_shape(lit: Lit, limits: &Limits) -> Result<Vec<u64>, Problem> {
    let items = match lit {
        Lit::Tuple(items) => items,
        Lit::Int(n) => vec![Lit::Int(n)],
        other => {
            return Err(problem(
                "bad-shape",
                format!("shape is not a tuple of integers: {other:?}"),
            ));
        }
    };
    if items.len() > limits.max_dims {
        return Err(problem(
            "bad-shape",
            format!("{} dimensions, limit {}", items.len(), limits.max_dims),
        ));
    }
    items
        .into_iter()
        .map(|i| match i {
            Lit::Int(n) => u64::try_from(n)
                .map_err(|_| problem("bad-shape", format!("negative dimension {n}"))),
            other => Err(problem(
                "bad-shape",
                format!("dimension is not an integer: {other:?}"),
            )),
        })
        .collect()
}

fn to_descr(lit: Lit, limits: &Limits, depth: usize) -> Result<Descr, Problem> {
    if depth > limits.max_depth {
        return Err(problem("bad-descr", "structured dtype nested too deep"));
    }
    match lit {
        Lit::Str(s) => Ok(Descr::Simple(s)),
        Lit::List(fields) => fields
            .into_iter()
            .map(|f| to_field(f, limits, depth))
            .collect::<Result<Vec<_>, _>>()
            .map(Descr::Structured),
        other => Err(problem(
            "bad-descr",
            format!("descr is neither a string nor a list: {other:?}"),
        )),
    }
}

fn to_field(lit: Lit, limits: &Limits, depth: usize) -> Result<Field, Problem> {
    let Lit::Tuple(parts) = lit else {
        return Err(problem(
            "bad-descr",
            "structured dtype field is not a tuple",
        ));
    };
    let mut it = parts.into_iter();
    let (Some(name), Some(descr), shape, None) = (it.next(), it.next(), it.next(), it.next())
    else {
        return Err(problem(
            "bad-descr",
            "structured dtype field needs 2 or 3 items",
        ));
    };
    let name = match name {
        Lit::Str(s) => s,
        // (title, name) pair
        Lit::Tuple(pair) => match pair.as_slice() {
            [_, Lit::Str(n)] => n.clone(),
            _ => {
                return Err(problem(
                    "bad-descr",
                    "field title pair is not (title, name)",
                ));
            }
        },
        other => {
            return Err(problem(
                "bad-descr",
                format!("field name is not a string: {other:?}"),
            ));
        }
    };
    Ok(Field {
        name,
        descr: to_descr(descr, limits, depth + 1)?,
        shape: match shape {
            Some(s) => to_shape(s, limits)?,
            None => Vec::new(),
        },
    })
}

fn has_object(d: &Descr) -> bool {
    match d {
        Descr::Simple(s) => simple_kind(s).0 == Some('O'),
        Descr::Structured(fields) => fields.iter().any(|f| has_object(&f.descr)),
    }
}

/// Kind character and explicit size of a type string like `<f4`, `|S10`, `<M8[ns]`, `O`.
fn simple_kind(s: &str) -> (Option<char>, Option<u64>) {
    let body = s.trim_start_matches(['<', '>', '|', '=', '!']);
    let mut chars = body.chars();
    let kind = chars.next();
    let rest: String = chars.take_while(char::is_ascii_digit).collect();
    (kind, rest.parse().ok())
}

fn item_size(d: &Descr, depth_left: usize) -> Option<u64> {
    match d {
        Descr::Simple(s) => {
            let (kind, size) = simple_kind(s);
            match (kind?, size) {
                ('U', Some(n)) => n.checked_mul(4),
                ('b' | 'i' | 'u' | 'f' | 'c' | 'S' | 'a' | 'V' | 'M' | 'm' | 'O', Some(n)) => {
                    Some(n)
                }
                ('?' | 'b' | 'B', None) => Some(1),
                ('h' | 'H' | 'e', None) => Some(2),
                ('i' | 'I' | 'f', None) => Some(4),
                ('l' | 'L' | 'q' | 'Q' | 'd' | 'F' | 'O', None) => Some(8),
                ('g' | 'D', None) => Some(16),
                ('G', None) => Some(32),
                _ => None,
            }
        }
        Descr::Structured(fields) => {
            let depth_left = depth_left.checked_sub(1)?;
            fields.iter().try_fold(0u64, |acc, f| {
                let n = f.shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d))?;
                acc.checked_add(item_size(&f.descr, depth_left)?.checked_mul(n)?)
            })
        }
    }
}

fn render(d: &Descr) -> String {
    match d {
        Descr::Simple(s) => format!("{s:?}").replace('"', "'"),
        Descr::Structured(fields) => {
            let parts: Vec<String> = fields
                .iter()
                .map(|f| {
                    if f.shape.is_empty() {
                        format!("('{}', {})", f.name, render(&f.descr))
                    } else {
                        format!("('{}', {}, {:?})", f.name, render(&f.descr), f.shape)
                    }
                })
                .collect();
            format!("[{}]", parts.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes a `.npy` preamble the way `numpy.lib.format` does (padding to 64 bytes).
    fn npy(version: u8, dict: &str, data: &[u8]) -> Vec<u8> {
        let fixed = if version == 1 { 10 } else { 12 };
        let mut header = dict.as_bytes().to_vec();
        let total = fixed + header.len() + 1;
        header.extend(std::iter::repeat_n(b' ', (64 - total % 64) % 64));
        header.push(b'\n');
        let mut out = b"\x93NUMPY".to_vec();
        out.extend_from_slice(&[version, 0]);
        if version == 1 {
            out.extend_from_slice(&(header.len() as u16).to_le_bytes());
        } else {
            out.extend_from_slice(&(header.len() as u32).to_le_bytes());
        }
        out.extend_from_slice(&header);
        out.extend_from_slice(data);
        out
    }

    fn read(bytes: &[u8]) -> Result<NpyHeader, Problem> {
        read_header(&mut &bytes[..], &Limits::default())
    }

    #[test]
    fn reads_plain_float_array() {
        // Byte-identical to `np.save(f, np.zeros((2, 3), '<f4'))`.
        let bytes = npy(
            1,
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
            &[0; 24],
        );
        assert_eq!(bytes.len(), 128 + 24);
        let h = read(&bytes).unwrap();
        assert_eq!(h.dtype, "'<f4'");
        assert_eq!(h.shape, vec![2, 3]);
        assert_eq!(
            (h.data_offset, h.item_size, h.data_bytes),
            (128, Some(4), Some(24))
        );
        assert!(!h.has_object_dtype && !h.fortran_order);
        assert_eq!(check_size(&h, bytes.len() as u64), None);
    }

    #[test]
    fn flags_object_dtype() {
        let bytes = npy(
            1,
            "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }",
            b"\x80\x02.",
        );
        let h = read(&bytes).unwrap();
        assert!(h.has_object_dtype);
        assert_eq!(h.data_bytes, None);
        assert_eq!(check_size(&h, 999), None);
    }

    #[test]
    fn flags_object_field_in_structured_dtype() {
        let dict = "{'descr': [('a', '<i4'), (('title', 'b'), '|O'), ('c', [('d', '<f8', (2,))])], 'fortran_order': True, 'shape': (), }";
        let h = read(&npy(2, dict, b"")).unwrap();
        assert!(h.has_object_dtype && h.fortran_order);
        assert_eq!(h.shape, Vec::<u64>::new());
        assert_eq!(h.item_size, Some(4 + 8 + 16));
        let Descr::Structured(f) = &h.descr else {
            panic!()
        };
        assert_eq!(f[1].name, "b");
    }

    #[test]
    fn reads_version_3_and_python2_longs() {
        let h = read(&npy(
            3,
            "{'descr': '<U2', 'fortran_order': False, 'shape': (3L,), }",
            &[0; 24],
        ))
        .unwrap();
        assert_eq!(h.data_bytes, Some(24));
        assert_eq!(h.version, (3, 0));
    }

    #[test]
    fn rejects_bad_magic() {
        assert!(matches!(
            read(b"\x93NUMPX\x01\x00"),
            Err(Problem {
                code: "bad-magic",
                ..
            })
        ));
    }

    #[test]
    fn rejects_unsupported_version() {
        assert!(matches!(
            read(b"\x93NUMPY\x04\x00\x00\x00"),
            Err(Problem {
                code: "unsupported-version",
                ..
            })
        ));
    }

    #[test]
    fn rejects_header_too_large() {
        assert!(matches!(
            read(b"\x93NUMPY\x02\x00\xff\xff\xff\xff"),
            Err(Problem {
                code: "header-too-large",
                ..
            })
        ));
    }

    #[test]
    fn rejects_truncated_header() {
        let bytes = npy(
            1,
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
            b"",
        );
        assert!(matches!(
            read(&bytes[..40]),
            Err(Problem {
                code: "truncated",
                ..
            })
        ));
        assert!(matches!(
            read(&bytes[..3]),
            Err(Problem {
                code: "truncated",
                ..
            })
        ));
    }

    #[test]
    fn rejects_code_in_header() {
        for dict in [
            "{'descr': __import__('os').system('x'), 'fortran_order': False, 'shape': ()}",
            "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} + 1",
            "{'descr': '<f4\\q', 'fortran_order': False, 'shape': ()}",
            "{'descr': '<f4'",
        ] {
            assert!(
                matches!(
                    read(&npy(1, dict, b"")),
                    Err(Problem {
                        code: "bad-header",
                        ..
                    })
                ),
                "{dict}"
            );
        }
    }

    #[test]
    fn rejects_bad_header_keys() {
        for dict in [
            "{'descr': '<f4', 'fortran_order': False}",
            "{'descr': '<f4', 'fortran_order': False, 'shape': (), 'extra': 1}",
            "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': ()}",
        ] {
            assert!(
                matches!(
                    read(&npy(1, dict, b"")),
                    Err(Problem {
                        code: "bad-header-keys",
                        ..
                    })
                ),
                "{dict}"
            );
        }
    }

    #[test]
    fn rejects_bad_descr_and_shape() {
        let d = npy(1, "{'descr': 5, 'fortran_order': False, 'shape': ()}", b"");
        assert!(matches!(
            read(&d),
            Err(Problem {
                code: "bad-descr",
                ..
            })
        ));
        let s = npy(
            1,
            "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}",
            b"",
        );
        assert!(matches!(
            read(&s),
            Err(Problem {
                code: "bad-shape",
                ..
            })
        ));
    }

    #[test]
    fn rejects_deep_nesting() {
        let deep = format!(
            "{{'descr': {}'<f4'{}, 'fortran_order': False, 'shape': ()}}",
            "[".repeat(50),
            "]".repeat(50)
        );
        assert!(matches!(
            read(&npy(2, &deep, b"")),
            Err(Problem {
                code: "bad-header",
                ..
            })
        ));
    }

    #[test]
    fn rejects_size_overflow() {
        let bytes = npy(
            1,
            "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }",
            b"",
        );
        assert!(matches!(
            read(&bytes),
            Err(Problem {
                code: "size-overflow",
                ..
            })
        ));
    }

    #[test]
    fn reports_size_mismatch() {
        let bytes = npy(
            1,
            "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }",
            &[0; 20],
        );
        let h = read(&bytes).unwrap();
        let p = check_size(&h, bytes.len() as u64).unwrap();
        assert_eq!(p.code, "size-mismatch");
        assert!(
            p.message
                .contains("stream has 148 bytes, header implies 144")
        );
    }

    proptest::proptest! {
        #[test]
        fn never_panics(tail in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300), v in 0u8..5) {
            let mut bytes = b"\x93NUMPY".to_vec();
            bytes.push(v);
            bytes.push(0);
            bytes.extend_from_slice(&tail);
            let _ = read(&bytes);
        }

        #[test]
        fn never_panics_on_header_text(s in "[\\[\\](){}:,' 0-9a-zA-Z<>|\\\\-]{0,200}") {
            let _ = read(&npy(1, &s, b""));
        }
    }
}
