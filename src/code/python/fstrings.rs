//! F-strings nested deeper than Python accepts, blanked before parsing.
//!
//! tree-sitter-python's scanner keeps its stack of open string delimiters in a state buffer
//! that holds at most 255 of them: an f-string nested deeper is misparsed with no syntax error,
//! and the call around it (`exec(f"{f"{…}"}")` 1,000 deep) disappears from the tree. CPython
//! itself refuses the 150th nested f-string ("too many nested f-strings", `MAXFSTRINGLEVEL` in
//! 3.12 and 3.13; earlier versions cannot nest one quote inside itself at all), so no Python
//! runs such a file. Every f-string that would open at that level is replaced, before parsing,
//! by a name of the same length (`_` then spaces; line breaks kept, so lines and byte offsets do
//! not move): the f-string around it then holds a value computed at run time, and its sink is
//! reported like any other value the judge cannot know.
//!
//! The lexer here follows PEP 701 (3.12) f-strings, a superset of the older ones: prefixes,
//! single and triple quotes, escapes, `{{`/`}}`, replacement fields holding any expression
//! (strings and f-strings included), conversions and format specs with nested fields. It runs
//! in one pass with an explicit stack, and only on sources with at least as many quotes as the
//! deepest nesting Python accepts needs.

use std::borrow::Cow;

/// The first f-string nesting level CPython refuses (`MAXFSTRINGLEVEL`).
pub(super) const MAX_FSTRING_NESTING: usize = 150;

/// `source` with every f-string nested [`MAX_FSTRING_NESTING`] deep or deeper blanked, and
/// whether anything was.
pub(super) fn clamp(source: &str) -> (Cow<'_, str>, bool) {
    let spans = spans_to_blank(source.as_bytes());
    if spans.is_empty() {
        return (Cow::Borrowed(source), false);
    }
    let mut out = source.as_bytes().to_vec();
    for (start, end) in spans {
        for (i, b) in out[start..end].iter_mut().enumerate() {
            if *b != b'\n' && *b != b'\r' {
                *b = if i == 0 { b'_' } else { b' ' };
            }
        }
    }
    // Whole characters were replaced by ASCII, so the text stays UTF-8; should that ever fail,
    // the lossy decoding keeps the same length for ASCII and loses nothing that matters.
    let text = String::from_utf8(out)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    (Cow::Owned(text), true)
}

/// Whether [`clamp`] would blank anything (it allocates nothing to say so).
pub(super) fn needs_clamp(source: &str) -> bool {
    !spans_to_blank(source.as_bytes()).is_empty()
}

/// The f-strings to blank; most sources are let through after counting their quotes (each
/// nested f-string needs two).
fn spans_to_blank(bytes: &[u8]) -> Vec<(usize, usize)> {
    let quotes = bytes.iter().filter(|&&b| b == b'"' || b == b'\'').count();
    if quotes < 2 * MAX_FSTRING_NESTING {
        return Vec::new();
    }
    too_deep(bytes)
}

/// One open construct of the lexer.
#[derive(Debug, Clone, Copy)]
enum Frame {
    /// A string literal: its quote, whether tripled, f-string (or t-string), raw.
    Str {
        quote: u8,
        triple: bool,
        fstring: bool,
        raw: bool,
    },
    /// A replacement field of an f-string: the brackets open inside it.
    Field { brackets: usize },
    /// The format spec of a replacement field (after its top-level `:`).
    Spec,
}

/// The byte ranges of the outermost f-strings opened at [`MAX_FSTRING_NESTING`] or deeper.
fn too_deep(b: &[u8]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut stack: Vec<Frame> = Vec::new();
    let mut fdepth = 0usize;
    // Start of the f-string being blanked, and the stack height it was opened at.
    let mut blanking: Option<(usize, usize)> = None;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match stack.last().copied() {
            Some(Frame::Str {
                quote,
                triple,
                fstring,
                raw,
            }) => {
                if c == b'\\' && !raw {
                    i += 2;
                    continue;
                }
                if c == b'\\' {
                    // A raw string still cannot end on an escaped quote.
                    i += if b.get(i + 1) == Some(&quote) { 2 } else { 1 };
                    continue;
                }
                if c == quote && (!triple || b[i..].starts_with(&[quote; 3])) {
                    i += if triple { 3 } else { 1 };
                    stack.pop();
                    if fstring {
                        fdepth -= 1;
                    }
                    if let Some((start, height)) = blanking
                        && stack.len() <= height
                    {
                        spans.push((start, i));
                        blanking = None;
                    }
                    continue;
                }
                if (c == b'\n' || c == b'\r') && !triple {
                    // An unterminated string ends at the line: recover there.
                    pop_string(&mut stack, &mut fdepth, &mut blanking, &mut spans, i);
                    i += 1;
                    continue;
                }
                if fstring && c == b'{' {
                    if b.get(i + 1) == Some(&b'{') {
                        i += 2;
                    } else {
                        stack.push(Frame::Field { brackets: 0 });
                        i += 1;
                    }
                    continue;
                }
                i += 1;
            }
            Some(Frame::Spec) => {
                match c {
                    b'{' => stack.push(Frame::Field { brackets: 0 }),
                    // The spec and its field end together.
                    b'}' => {
                        stack.pop();
                        stack.pop();
                    }
                    b'\n' | b'\r' if !in_triple(&stack) => {
                        stack.pop();
                        stack.pop();
                        pop_string(&mut stack, &mut fdepth, &mut blanking, &mut spans, i);
                    }
                    _ => {}
                }
                i += 1;
            }
            top => {
                // Code: the file itself, or a replacement field.
                let brackets = match top {
                    Some(Frame::Field { brackets }) => Some(brackets),
                    _ => None,
                };
                match c {
                    b'#' => {
                        while i < b.len() && b[i] != b'\n' && b[i] != b'\r' {
                            i += 1;
                        }
                        continue;
                    }
                    b'"' | b'\'' => {
                        let start = i;
                        open_string(b, &mut i, start, "", &mut stack, &mut fdepth, &mut blanking);
                        continue;
                    }
                    b'(' | b'[' | b'{' => set_brackets(&mut stack, brackets.map(|n| n + 1)),
                    b')' | b']' => set_brackets(&mut stack, brackets.map(|n| n.saturating_sub(1))),
                    b'}' => match brackets {
                        Some(0) => {
                            stack.pop();
                        }
                        Some(n) => set_brackets(&mut stack, Some(n - 1)),
                        None => {}
                    },
                    b':' if brackets == Some(0) => {
                        stack.push(Frame::Spec);
                    }
                    _ if c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80 => {
                        let start = i;
                        while i < b.len()
                            && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] >= 0x80)
                        {
                            i += 1;
                        }
                        if matches!(b.get(i), Some(b'"' | b'\''))
                            && let Ok(prefix) = std::str::from_utf8(&b[start..i])
                            && is_prefix(prefix)
                        {
                            let at = i;
                            open_string(
                                b,
                                &mut i,
                                start,
                                prefix,
                                &mut stack,
                                &mut fdepth,
                                &mut blanking,
                            );
                            debug_assert!(i > at);
                        }
                        continue;
                    }
                    _ => {}
                }
                i += 1;
            }
        }
    }
    if let Some((start, _)) = blanking {
        spans.push((start, b.len()));
    }
    spans
}

/// Whether the innermost string literal on the stack is triple-quoted (a line break in its
/// format spec is text). A replacement field may span lines even in a single-quoted f-string
/// (3.12), so only the spec recovers at a line break.
fn in_triple(stack: &[Frame]) -> bool {
    stack
        .iter()
        .rev()
        .find_map(|f| match f {
            Frame::Str { triple, .. } => Some(*triple),
            _ => None,
        })
        .unwrap_or(false)
}

fn set_brackets(stack: &mut [Frame], brackets: Option<usize>) {
    if let (Some(Frame::Field { brackets: b }), Some(n)) = (stack.last_mut(), brackets) {
        *b = n;
    }
}

/// Python's string prefixes (`t` is 3.14's template string, lexed like an f-string).
fn is_prefix(p: &str) -> bool {
    let p = p.to_ascii_lowercase();
    matches!(
        p.as_str(),
        "r" | "u" | "b" | "f" | "t" | "br" | "rb" | "fr" | "rf" | "tr" | "rt"
    )
}

/// Opens the string whose quote is at `*i` (its prefix starts at `start`).
fn open_string(
    b: &[u8],
    i: &mut usize,
    start: usize,
    prefix: &str,
    stack: &mut Vec<Frame>,
    fdepth: &mut usize,
    blanking: &mut Option<(usize, usize)>,
) {
    let quote = b[*i];
    let triple = b[*i..].starts_with(&[quote; 3]);
    let lower = prefix.to_ascii_lowercase();
    let fstring = lower.contains('f') || lower.contains('t');
    if fstring {
        *fdepth += 1;
        if *fdepth >= MAX_FSTRING_NESTING && blanking.is_none() {
            *blanking = Some((start, stack.len()));
        }
    }
    stack.push(Frame::Str {
        quote,
        triple,
        fstring,
        raw: lower.contains('r'),
    });
    *i += if triple { 3 } else { 1 };
}

/// Ends the innermost string (unterminated at a line break) with what it holds open.
fn pop_string(
    stack: &mut Vec<Frame>,
    fdepth: &mut usize,
    blanking: &mut Option<(usize, usize)>,
    spans: &mut Vec<(usize, usize)>,
    at: usize,
) {
    while let Some(frame) = stack.pop() {
        if let Frame::Str { fstring, .. } = frame {
            if fstring {
                *fdepth -= 1;
            }
            break;
        }
    }
    if let Some((start, height)) = *blanking
        && stack.len() <= height
    {
        spans.push((start, at));
        *blanking = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(n: usize) -> String {
        format!("exec({}1{})\n", "f\"{".repeat(n), "}\"".repeat(n))
    }

    #[test]
    fn ordinary_sources_are_untouched() {
        for src in [
            "x = 1\n",
            "print(f\"{a!r:>{w}} {{b}} {c['k']}\")\n",
            &"s = 'a' + \"b\"\n".repeat(200),
            &nested(149),
        ] {
            let (out, changed) = clamp(src);
            assert!(!changed, "{src}");
            assert_eq!(out, src);
        }
    }

    #[test]
    fn the_level_python_refuses_is_blanked_keeping_lines_and_offsets() {
        let src = nested(1000);
        let (out, changed) = clamp(&src);
        assert!(changed);
        assert_eq!(out.len(), src.len());
        // 149 levels are kept; the 150th f-string and everything inside it is one name.
        let kept = "exec(".len() + 3 * (MAX_FSTRING_NESTING - 1);
        assert_eq!(&out[..kept], &src[..kept]);
        assert_eq!(&out[kept..kept + 1], "_");
        let end = src.len() - ")\n".len() - "}\"".len() * (MAX_FSTRING_NESTING - 1);
        assert!(
            out[kept + 1..end].bytes().all(|b| b == b' '),
            "{}",
            &out[kept..]
        );
        assert_eq!(&out[end..], &src[end..]);

        // Line breaks inside stay where they were.
        let src = format!(
            "x = 1\n{}\ny = 2\n",
            nested(300).replace("1}", "\"\"\"a\nb\"\"\"}")
        );
        let (out, changed) = clamp(&src);
        assert!(changed);
        assert_eq!(out.len(), src.len());
        assert_eq!(out.lines().count(), src.lines().count());
        assert!(out.ends_with("\ny = 2\n"));
    }

    #[test]
    fn quotes_inside_strings_specs_and_comments_do_not_nest() {
        // Plain strings, comments and escaped quotes full of `f"` are not f-strings.
        let src = "a = 'f\"{' \\\n# f\"{f\"{\n".repeat(400);
        assert!(!clamp(&src).1);
        let src = format!(
            "a = r'\\'' + \"\\\"\"\n{}",
            "b = f'{x:{y}}' + rf'\\{{'\n".repeat(400)
        );
        assert!(!clamp(&src).1);
    }

    #[test]
    fn hostile_text_never_panics() {
        for src in [
            "f\"{".repeat(10_000),
            "{f'".repeat(10_000),
            "f'''{".repeat(10_000) + "\n}}}}",
            "\"".repeat(1_000) + "f\"{:" + &"{".repeat(1000),
            "rb'\\".repeat(1_000),
            "é f\"{é".repeat(2_000),
        ] {
            let (out, _) = clamp(&src);
            assert_eq!(out.len(), src.len());
        }
    }
}
