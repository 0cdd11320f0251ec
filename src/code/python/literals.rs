//! Where a Python source's comments and plain string literals are, found in one pass over the
//! bytes, so that the pre-filter can ignore the identifiers they mention: in library code
//! `from_pretrained` and `torch.load` appear mostly in docstrings and comments, and a file that
//! only mentions them can never report anything (issue 22).
//!
//! The lexing mirrors tree-sitter-python's (its external scanner for strings, its `comment`
//! token), not CPython's, because the items come from tree-sitter's tree. It only ever needs to
//! be right about what it calls quiet: everything else counts as code, which can only let more
//! sources through. So it is conservative:
//!
//! - f-strings (and t-strings) are code as a whole, replacement fields and all; they are lexed
//!   only to find where they end, with nested strings inside replacement fields as tree-sitter
//!   (and Python 3.12) nests them.
//! - Whatever tree-sitter would lex differently from a well-formed source, or might re-lex
//!   during error recovery, is an *anomaly*, and a source with one gets no quiet ranges at all:
//!   an unterminated string or a newline in a single-quoted one, an unmatched closing bracket,
//!   a backslash outside a string that does not continue the line, a lone carriage return, a
//!   NUL byte, a backtick string (Python 2), a string prefix glued to a number or to non-ASCII
//!   text, an unusual f-string (a comment, backslash or quote where the lexers could disagree),
//!   and nesting deeper than [`MAX_DEPTH`].
//!
//! Only ASCII bytes steer the lexing, so invalid UTF-8 is judged as its lossy decoding (which
//! tree-sitter parses) would be.

use std::ops::Range;

/// Deepest nesting of brackets, f-strings and replacement fields followed before the source
/// counts as an anomaly (bounds the stack on hostile input).
const MAX_DEPTH: usize = 200;

/// The lexing hit something tree-sitter may read differently: the source gets no quiet ranges.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Anomaly;

/// Appends to `quiet` the byte ranges of `source` that are comments or the insides of plain
/// (non-f) string literals, in order; on an [`Anomaly`] `quiet` is left as it was.
pub(super) fn quiet_ranges(source: &[u8], quiet: &mut Vec<Range<usize>>) -> Result<(), Anomaly> {
    let first = quiet.len();
    let mut lexer = Lexer {
        src: source,
        pos: 0,
        quiet,
        lines: None,
    };
    let result = lexer.code();
    if result.is_err() {
        lexer.quiet.truncate(first);
    }
    result
}

/// One logical line of a source: the statements up to a newline outside brackets and strings
/// that no backslash continues (tree-sitter's `_newline` token), which is where the statement
/// parsing of [`super::select`] cuts a source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct LogicalLine {
    /// Start of the physical line it begins on: its indentation starts here.
    pub start: usize,
    /// Its first byte of code.
    pub code: usize,
    /// Its last byte of code (a comment after it is not code).
    pub last: usize,
    /// The index of the newline that ends it, or the length of the source.
    pub end: usize,
    /// Its last `=` or `:` outside brackets and strings that is not part of `==`: every target
    /// of an assignment or annotation on the line lies before it.
    pub assign: Option<usize>,
}

/// A source's comments and plain strings ([`quiet_ranges`]) and its logical lines.
#[derive(Debug, Default)]
pub(super) struct Outline {
    /// As [`quiet_ranges`] finds them.
    pub quiet: Vec<Range<usize>>,
    /// In order; blank and comment-only lines are not logical lines.
    pub lines: Vec<LogicalLine>,
}

/// The [`Outline`] of `source`, or the [`Anomaly`] that makes its lexing uncertain.
pub(super) fn outline(source: &[u8]) -> Result<Outline, Anomaly> {
    let mut quiet = Vec::new();
    let mut lexer = Lexer {
        src: source,
        pos: 0,
        quiet: &mut quiet,
        lines: Some(LineTracker::default()),
    };
    lexer.code()?;
    let mut lines = lexer.lines.take().unwrap_or_default();
    lines.finish(source.len());
    Ok(Outline {
        quiet,
        lines: lines.done,
    })
}

/// Logical lines as the top-level lexing loop meets their bytes.
#[derive(Debug, Default)]
struct LineTracker {
    done: Vec<LogicalLine>,
    /// The line being read, once it has code.
    current: Option<LogicalLine>,
    /// Start of the current physical line.
    physical: usize,
}

impl LineTracker {
    /// Code from `at` to `last` (a token, or one byte of one).
    fn code(&mut self, at: usize, last: usize) {
        let physical = self.physical;
        let line = self.current.get_or_insert(LogicalLine {
            start: physical,
            code: at,
            last,
            end: at,
            assign: None,
        });
        line.last = last;
    }

    /// A newline at `at`; `top` when no bracket is open, where it ends the logical line.
    fn newline(&mut self, at: usize, top: bool) {
        if top {
            self.finish(at);
            self.physical = at + 1;
        }
    }

    fn finish(&mut self, end: usize) {
        if let Some(mut line) = self.current.take() {
            line.end = end;
            self.done.push(line);
        }
    }
}

struct Lexer<'a, 'q> {
    src: &'a [u8],
    pos: usize,
    quiet: &'q mut Vec<Range<usize>>,
    /// Set when the logical lines are wanted ([`outline`]).
    lines: Option<LineTracker>,
}

/// A string literal's delimiter and prefix flags.
#[derive(Debug, Clone, Copy)]
struct Delimiter {
    quote: u8,
    triple: bool,
    raw: bool,
    format: bool,
    bytes: bool,
}

impl Lexer<'_, '_> {
    fn peek(&self, ahead: usize) -> Option<u8> {
        self.src.get(self.pos.checked_add(ahead)?).copied()
    }

    /// Top-level code, up to the end of the source.
    fn code(&mut self) -> Result<(), Anomaly> {
        let mut brackets: Vec<u8> = Vec::new();
        let special = if self.lines.is_some() {
            &OUTLINE_SPECIAL
        } else {
            &CODE_SPECIAL
        };
        while let Some(b) = self.peek(0) {
            // Most bytes of code steer nothing: skip them a run at a time (issue 22: this loop
            // sees every byte of every Python file with a watched name in it).
            if !special[usize::from(b)] {
                let start = self.pos;
                let run = &self.src[start..];
                let len = run
                    .iter()
                    .position(|&c| special[usize::from(c)])
                    .unwrap_or(run.len());
                if let Some(lines) = self.lines.as_mut() {
                    let run = &run[..len];
                    if let (Some(first), Some(last)) = (
                        run.iter().position(|&c| !is_blank(c)),
                        run.iter().rposition(|&c| !is_blank(c)),
                    ) {
                        lines.code(start + first, start + last);
                    }
                }
                self.pos = start + len;
                continue;
            }
            if let Some(lines) = self.lines.as_mut() {
                let at = self.pos;
                match b {
                    b'\n' => lines.newline(at, brackets.is_empty()),
                    b' ' | b'\t' | b'\x0c' | b'\r' | b'#' | b'\\' => {}
                    // A string's last byte is known once it is lexed, below.
                    b'\'' | b'"' => lines.code(at, at),
                    _ => {
                        lines.code(at, at);
                        let assigns = (b == b'=' || b == b':') && brackets.is_empty();
                        let doubled = b == b'='
                            && (self.src.get(at + 1) == Some(&b'=')
                                || at.checked_sub(1).and_then(|i| self.src.get(i)) == Some(&b'='));
                        if assigns
                            && !doubled
                            && let Some(line) = lines.current.as_mut()
                        {
                            line.assign = Some(at);
                        }
                    }
                }
            }
            match b {
                b'#' => {
                    let start = self.pos;
                    let end = line_end(self.src, start);
                    self.quiet.push(start..end);
                    self.pos = end;
                }
                b'\'' | b'"' => {
                    let delimiter = self.delimiter()?;
                    self.string(delimiter, 0, true)?;
                    let last = self.pos.saturating_sub(1);
                    if let Some(line) = self.lines.as_mut().and_then(|l| l.current.as_mut()) {
                        line.last = last;
                    }
                }
                b'(' | b'[' | b'{' => {
                    if brackets.len() >= MAX_DEPTH {
                        return Err(Anomaly);
                    }
                    brackets.push(b);
                    self.pos += 1;
                }
                b')' | b']' | b'}' => {
                    if brackets.pop() != Some(opener(b)) {
                        return Err(Anomaly);
                    }
                    self.pos += 1;
                }
                b'\\' => self.line_continuation()?,
                _ => self.plain_byte(b)?,
            }
        }
        // A bracket left open runs the last statement into the end of the source, which
        // tree-sitter recovers from in ways the logical lines cannot follow.
        if self.lines.is_some() && !brackets.is_empty() {
            return Err(Anomaly);
        }
        Ok(())
    }

    /// A byte of code with no structure of its own; rejects those tree-sitter could lex apart.
    fn plain_byte(&mut self, b: u8) -> Result<(), Anomaly> {
        match b {
            0 | b'`' => return Err(Anomaly),
            b'\r' if self.peek(1) != Some(b'\n') => return Err(Anomaly),
            _ => {}
        }
        self.pos += 1;
        Ok(())
    }

    /// `\` outside a string: only a line continuation lexes the same everywhere.
    fn line_continuation(&mut self) -> Result<(), Anomaly> {
        match (self.peek(1), self.peek(2)) {
            (Some(b'\n'), _) => self.pos += 2,
            (Some(b'\r'), Some(b'\n')) => self.pos += 3,
            _ => return Err(Anomaly),
        }
        Ok(())
    }

    /// The delimiter of the string whose first quote is at `pos`; moves past the quotes.
    /// tree-sitter takes every letter of `rRbBuUfFtT` right before the quote as a prefix, when
    /// they start a token (an identifier lexed greedily would take them otherwise).
    fn delimiter(&mut self) -> Result<Delimiter, Anomaly> {
        let quote = self.src.get(self.pos).copied().ok_or(Anomaly)?;
        let run_start = self.src[..self.pos]
            .iter()
            .rposition(|&b| !is_ident_byte(b))
            .map_or(0, |i| i + 1);
        let run = &self.src[run_start..self.pos];
        let before = run_start.checked_sub(1).and_then(|i| self.src.get(i));
        let mut d = Delimiter {
            quote,
            triple: false,
            raw: false,
            format: false,
            bytes: false,
        };
        if !run.is_empty() {
            // `1f"…"` (a number, then maybe a prefix) and `éf"…"` (an identifier with
            // non-ASCII letters, or not) are lexed in ways not worth mirroring; `x.f"…"` is
            // where the parser may not accept a string start and lexes `f` as an identifier.
            if run[0].is_ascii_digit() || before.is_some_and(|&b| b >= 0x80 || b == b'.') {
                return Err(Anomaly);
            }
            if run.iter().all(|b| b"rRbBuUfFtT".contains(b)) {
                d.raw = run.iter().any(|b| b"rR".contains(b));
                d.format = run.iter().any(|b| b"fFtT".contains(b));
                d.bytes = run.iter().any(|b| b"bB".contains(b));
            }
        }
        if self.peek(1) == Some(quote) && self.peek(2) == Some(quote) {
            d.triple = true;
            self.pos += 3;
        } else {
            self.pos += 1;
        }
        Ok(d)
    }

    /// The body of a string after its opening quotes, up to and including its closing quotes.
    /// `quiet` is set for a plain string at the top level: its inside is recorded.
    fn string(&mut self, d: Delimiter, depth: usize, quiet: bool) -> Result<(), Anomaly> {
        if depth >= MAX_DEPTH || (d.format && d.bytes) {
            return Err(Anomaly);
        }
        let start = self.pos;
        loop {
            let b = self.peek(0).ok_or(Anomaly)?;
            if !STRING_SPECIAL[usize::from(b)] {
                let run = &self.src[self.pos..];
                self.pos += run
                    .iter()
                    .position(|&c| STRING_SPECIAL[usize::from(c)])
                    .unwrap_or(run.len());
                continue;
            }
            match b {
                0 => return Err(Anomaly),
                b'\r' if self.peek(1) != Some(b'\n') => return Err(Anomaly),
                b'\n' if !d.triple => return Err(Anomaly),
                b'\\' => self.escape(d)?,
                b'{' | b'}' if d.format => {
                    if self.peek(1) == Some(b) {
                        // `{{` and `}}` stand for one brace.
                        self.pos += 2;
                    } else if b == b'{' {
                        self.pos += 1;
                        self.replacement_field(d, depth + 1)?;
                    } else {
                        return Err(Anomaly);
                    }
                }
                _ if b == d.quote => {
                    let closes = !d.triple || (self.peek(1) == Some(b) && self.peek(2) == Some(b));
                    let width = if d.triple { 3 } else { 1 };
                    if closes {
                        self.pos += width;
                        if quiet && !d.format {
                            self.quiet.push(start..self.pos);
                        }
                        return Ok(());
                    }
                    self.pos += 1;
                }
                _ => self.pos += 1,
            }
        }
    }

    /// A backslash inside a string: what it makes part of the string's content.
    fn escape(&mut self, d: Delimiter) -> Result<(), Anomaly> {
        self.pos += 1;
        let next = self.peek(0);
        if d.raw {
            // tree-sitter steps over an escaped closing quote or backslash, then a newline.
            if next == Some(d.quote) || next == Some(b'\\') {
                self.pos += 1;
            }
        } else {
            match next {
                Some(b'\'' | b'"' | b'\\') => self.pos += 1,
                // `\N{DASH}` is one escape; its braces open no replacement field.
                Some(b'N') if d.format && self.peek(1) == Some(b'{') => {
                    let close = self.src[self.pos..]
                        .iter()
                        .position(|&b| b == b'}' || b == b'\n')
                        .ok_or(Anomaly)?;
                    if self.peek(close) != Some(b'}') || close < 3 {
                        return Err(Anomaly);
                    }
                    self.pos += close + 1;
                    return Ok(());
                }
                _ => {}
            }
        }
        match (self.peek(0), self.peek(1)) {
            (Some(b'\n'), _) => self.pos += 1,
            (Some(b'\r'), Some(b'\n')) => self.pos += 2,
            _ => {}
        }
        Ok(())
    }

    /// An f-string's replacement field after its `{`, up to and including its `}`: code with
    /// nested brackets and strings, then maybe a format spec.
    fn replacement_field(&mut self, outer: Delimiter, depth: usize) -> Result<(), Anomaly> {
        if depth >= MAX_DEPTH {
            return Err(Anomaly);
        }
        let mut brackets: Vec<u8> = Vec::new();
        loop {
            let b = self.peek(0).ok_or(Anomaly)?;
            match b {
                b'\'' | b'"' => {
                    let d = self.delimiter()?;
                    self.string(d, depth + 1, false)?;
                }
                b'(' | b'[' | b'{' => {
                    if brackets.len() >= MAX_DEPTH {
                        return Err(Anomaly);
                    }
                    brackets.push(b);
                    self.pos += 1;
                }
                b'}' if brackets.is_empty() => {
                    self.pos += 1;
                    return Ok(());
                }
                b')' | b']' | b'}' => {
                    if brackets.pop() != Some(opener(b)) {
                        return Err(Anomaly);
                    }
                    self.pos += 1;
                }
                b':' if brackets.is_empty() => {
                    self.pos += 1;
                    return self.format_spec(outer, depth);
                }
                // A comment or a backslash inside a replacement field: Python versions and
                // tree-sitter disagree on them, and a missed closing quote would put the rest
                // of the source out of step.
                b'#' | b'\\' => return Err(Anomaly),
                _ => self.plain_byte(b)?,
            }
        }
    }

    /// A format spec after `:`, up to and including the `}` that closes its field; `{` opens a
    /// nested field. tree-sitter lexes the spec's text as `[^{}\n]+`, quotes included, where
    /// CPython ends the string at its quote: a quote or newline here is an anomaly.
    fn format_spec(&mut self, outer: Delimiter, depth: usize) -> Result<(), Anomaly> {
        loop {
            let b = self.peek(0).ok_or(Anomaly)?;
            match b {
                b'{' => {
                    self.pos += 1;
                    self.replacement_field(outer, depth + 1)?;
                }
                b'}' => {
                    self.pos += 1;
                    return Ok(());
                }
                b'\'' | b'"' | b'\n' | b'\r' | b'\\' | 0 => return Err(Anomaly),
                _ => self.pos += 1,
            }
        }
    }
}

/// A table of the bytes in `set`.
const fn table(set: &[u8]) -> [bool; 256] {
    let mut t = [false; 256];
    let mut i = 0;
    while i < set.len() {
        t[set[i] as usize] = true;
        i += 1;
    }
    t
}

/// Bytes [`Lexer::code`] looks at one by one: the rest are skipped in runs.
const CODE_SPECIAL: [bool; 256] = table(b"#'\"([{)]}\\\r\0`");

/// [`CODE_SPECIAL`], and what the logical lines of an [`outline`] are made of.
const OUTLINE_SPECIAL: [bool; 256] = table(b"#'\"([{)]}\\\r\0`\n=:");

/// Bytes a string's body looks at one by one.
const STRING_SPECIAL: [bool; 256] = table(b"'\"\\\r\n\0{}");

/// Whitespace between tokens on a line.
fn is_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\x0c')
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn opener(closer: u8) -> u8 {
    match closer {
        b')' => b'(',
        b']' => b'[',
        _ => b'{',
    }
}

/// Where the line holding `from` ends (the index of its `\n`, or the end of the source).
fn line_end(src: &[u8], from: usize) -> usize {
    src.get(from..)
        .and_then(|rest| rest.iter().position(|&b| b == b'\n'))
        .map_or(src.len(), |i| from + i)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::code::python::{Limits, parse, walk};

    /// The property the pre-filter relies on: no identifier of tree-sitter's tree (errors and
    /// all) starts inside a quiet range, outside the `ERROR` nodes where tree-sitter's error
    /// recovery lexes string bodies as code (the scan ignores what starts in a quiet range of a
    /// tree with errors, as the pre-filter does). Returns how many quiet ranges `src` has.
    pub(in crate::code::python) fn assert_identifiers_are_not_quiet(src: &str) -> usize {
        let mut ranges = Vec::new();
        if quiet_ranges(src.as_bytes(), &mut ranges).is_err() {
            return 0;
        }
        let Ok(tree) = parse(src, &Limits::default()) else {
            return ranges.len();
        };
        let mut errors: Vec<std::ops::Range<usize>> = Vec::new();
        walk(tree.root_node(), |node| {
            if node.is_error() {
                errors.push(node.byte_range());
            }
            let recovered = errors.iter().any(|e| e.contains(&node.start_byte()));
            if node.kind() == "identifier" && !recovered {
                let at = node.start_byte();
                let inside = ranges.iter().find(|r| r.contains(&at));
                assert!(
                    inside.is_none(),
                    "identifier {:?} at {at} inside quiet {inside:?} of:\n{src}",
                    src.get(node.byte_range())
                );
            }
            true
        });
        ranges.len()
    }

    /// Lexing corner cases, each with a call that must stay visible (or stay hidden).
    pub(in crate::code::python) const TRICKY: &[&str] = &[
        "'''doc torch.load(p)\n''' ; torch.load(p)",
        "x = '''a''''torch.load(p)'",
        r#"x = """a""""torch.load(p)""#,
        "x = 'it''s' ; torch.load(p) # it's",
        r#"x = "a\"" ; torch.load(p)"#,
        r"x = 'a\\' ; torch.load(p)",
        r"x = r'a\' ; torch.load(p) #'",
        r"x = rb'\'' ; torch.load(p) '",
        r"x = Rb'\\' ; torch.load(p)",
        r#"x = br"\"" ; torch.load(p)"#,
        "x = u'a' ; torch.load(p)",
        r"x = b'\N{' ; torch.load(p)",
        "x = f'{a}' ; torch.load(p)",
        "x = f'{torch.load(p)}'",
        r#"x = F"{torch.load(p)!r:>10}""#,
        r"x = rf'\{torch.load(p)}'",
        r"x = f'\N{DASH}' ; torch.load(p)",
        "x = f'{{torch.load(p)}}'",
        r#"x = f'{a["b"]}' ; torch.load(p)"#,
        r#"x = f"{a["b"]} torch.load(p)""#,
        r#"x = f'{f"{torch.load(p)}"}'"#,
        "x = f'{f'{torch.load(p)}'}'",
        "x = f'{x:{w}.{p}}' ; torch.load(p)",
        "x = f'{x:%H:%M}' ; torch.load(p)",
        "x = f'''{\n  torch.load(p)\n}'''",
        "x = f'{\n  torch.load(p)}'",
        "x = f'{(lambda: 1)()}' ; torch.load(p)",
        "x = f'{a!=b}' ; torch.load(p)",
        "x = f'{x=}' ; torch.load(p)",
        "x = t'{torch.load(p)}'",
        "x = 'a' \\\n  'b' ; torch.load(p)",
        "x = 'a\\\nb' ; torch.load(p)",
        "x = 'a\\\r\nb' ; torch.load(p)",
        "# it's a \"comment\nx = 'torch.load(p)'",
        "x = 1 # '''\ntorch.load(p) # '''",
        "x = 'abc\ntorch.load(p)\n",
        "x = \"\ntorch.load(p)\"\n",
        "x = 'a\\t\ntorch.load(p)'\n",
        "x = '''abc\ntorch.load(p)\n",
        "x = f'{a' ; torch.load(p)",
        "x = f'}' ; torch.load(p) '",
        "x = ) ; 'torch.load(p)'",
        "print 'x'\n'torch.load(p)'",
        "print \"%s\" % x\ntorch.load(p)",
        "def f(:\n    '''torch.load(p)'''\n    torch.load(p)",
        "x = `torch.load(p)`",
        "x = 1f'{' ; torch.load(p) '",
        "x = é'a' ; torch.load(p)",
        "x = éf'{' ; torch.load(p) '",
        "x = y.f'{' ; torch.load(p) '",
        "x = 'a' if 'b' else 'c' ; torch.load(p)",
        "x = {'a': 'b'} ; torch.load(p)",
        "x = 'a\0b' ; torch.load(p)",
        "x = 'a'\rtorch.load(p)",
        r"x = '''\\''' ; torch.load(p) # '''",
        r"x = '\\'' ; torch.load(p)",
        "class A:\n    '''Doc.\n\n    >>> torch.load(p)\n    '''\n    def f(self):\n        return torch.load(p)",
    ];

    #[test]
    fn tree_sitter_finds_no_identifier_in_quiet_text() {
        for src in TRICKY {
            assert_identifiers_are_not_quiet(src);
        }
    }

    /// The quiet text of `src`, or `None` on an anomaly.
    fn quiet(src: &str) -> Option<Vec<&str>> {
        let mut ranges = Vec::new();
        quiet_ranges(src.as_bytes(), &mut ranges).ok()?;
        Some(ranges.into_iter().map(|r| &src[r]).collect())
    }

    #[test]
    fn comments_and_plain_strings_are_quiet() {
        assert_eq!(
            quiet("x = 'a' + \"b\"  # c\ny"),
            Some(vec!["a'", "b\"", "# c"])
        );
        assert_eq!(
            quiet("'''doc ' \" '' torch.load'''\nx"),
            Some(vec!["doc ' \" '' torch.load'''"])
        );
        assert_eq!(quiet("\"\"\"a\"\"\"\"b\""), Some(vec!["a\"\"\"", "b\""]));
        assert_eq!(quiet("''"), Some(vec!["'"]));
    }

    #[test]
    fn prefixes_decide_raw_and_format() {
        assert_eq!(quiet(r"b'\'' + x"), Some(vec![r"\''"]));
        assert_eq!(quiet(r"rb'\'' + x"), Some(vec![r"\''"]));
        assert_eq!(quiet(r"Rb'\\' + x"), Some(vec![r"\\'"]));
        assert_eq!(quiet(r"u'\\' + x"), Some(vec![r"\\'"]));
        // A prefix only when the letters start the token.
        assert_eq!(quiet("xf'{a' + b"), Some(vec!["{a'"]));
        assert_eq!(quiet("f'{a}' + F'{b}' + rf'{c}' + t'{d}'"), Some(vec![]));
        assert_eq!(quiet("f'{{a}}' 'b'"), Some(vec!["b'"]));
    }

    #[test]
    fn f_strings_nest_strings_in_replacement_fields() {
        assert_eq!(quiet("f\"{a[\"b\"]} c\" 'd'"), Some(vec!["d'"]));
        assert_eq!(quiet("f'{f\"{x!r:>{w}}\"}' # c"), Some(vec!["# c"]));
        assert_eq!(quiet("f'''{\n  x}''' 'y'"), Some(vec!["y'"]));
        assert_eq!(quiet("f'{x:%Y-%m}' 'z'"), Some(vec!["z'"]));
        assert_eq!(quiet(r"f'\N{DASH} {x}' 'z'"), Some(vec!["z'"]));
        assert_eq!(quiet(r"rf'\{x}' 'z'"), Some(vec!["z'"]));
        assert_eq!(quiet("f'{(lambda: 1)()}' 'z'"), Some(vec!["z'"]));
    }

    #[test]
    fn escapes_and_continuations_stay_inside_strings() {
        assert_eq!(quiet(r#""a\"b" x"#), Some(vec![r#"a\"b""#]));
        assert_eq!(quiet("'a\\\nb' x"), Some(vec!["a\\\nb'"]));
        assert_eq!(quiet("'a\\\r\nb' x"), Some(vec!["a\\\r\nb'"]));
        assert_eq!(quiet("x = 1 + \\\n  2"), Some(vec![]));
        assert_eq!(
            quiet("# it's \"quoted\n'a'"),
            Some(vec!["# it's \"quoted", "a'"])
        );
    }

    #[test]
    fn anomalies_leave_no_quiet_ranges() {
        for src in [
            "x = 'abc\ntorch.load(p)\n",
            "x = \"\ntorch.load(p)\"\n",
            "x = '''abc\ntorch.load(p)\n",
            "'a' 'b",
            "x = )",
            "x = (]",
            "x = \\ y",
            "a\rb",
            "a\0b",
            "`x`",
            "1f'{'",
            "éf'{'",
            "x.f'{'",
            "f'{x#}'",
            "f'{x\\n}'",
            "f'{x:'>3}'",
            "f'{x' + 'y'",
            "f'}'",
            "bf'{x}'",
            "f'{x:\n}'",
        ] {
            assert_eq!(quiet(src), None, "{src:?}");
        }
        let deep = format!(
            "x = {}1{}",
            "(".repeat(MAX_DEPTH + 1),
            ")".repeat(MAX_DEPTH + 1)
        );
        assert_eq!(quiet(&deep), None);
        let nested = format!("{}x{}", "f'{".repeat(MAX_DEPTH), "}'".repeat(MAX_DEPTH));
        assert_eq!(quiet(&nested), None);
    }

    #[test]
    fn an_anomaly_keeps_earlier_ranges_of_the_caller() {
        let mut ranges = vec![0..1, 2..3];
        assert_eq!(quiet_ranges(b"'a' + 'b", &mut ranges), Err(Anomaly));
        assert_eq!(ranges, vec![0..1, 2..3]);
    }
}
