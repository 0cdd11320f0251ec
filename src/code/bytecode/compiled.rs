//! The strings a compiler makes from a source that its text does not spell as they are, for the
//! `.pyc`-to-source match ([`super::matches_source`]).
//!
//! A string constant in a `.pyc` is a literal's value, not its spelling, and some constants and
//! names are the compiler's own work. Looking for each one verbatim in the source called 4,898
//! of the 15,152 real `.pyc` files in a Python 3.11 library folder different from their source
//! (SRC007 on 955 of them when judged as model code). These are the cases explained here, each
//! still demanding that the source says it:
//!
//! - **Escapes**: `'\x00'`, octal, `\u`/`\U`, line continuations inside a literal, lone
//!   surrogates (as the marshal reader replaces them); bytes literals decode `\x` to a byte.
//! - **Adjacent literals and `+`** are one constant: `("a " "b")`, `'a' + 'b'`, across lines,
//!   comments and backslash continuations; f-strings join in up to their first replacement
//!   field, and `{x=}` writes its own text.
//! - **Folding of `*`**: `'-' * 40` and `b"\0" * 8` are stored folded, up to the 4,096 bytes
//!   CPython's AST optimiser allows (`MAX_STR_SIZE`); the repeated unit must be in the source.
//! - **`%` formatting**: 3.11 and later compile `'%s: %5r' % (a, b)` like an f-string: the text
//!   between conversions with `%%` halved, and `>5` as a format spec.
//! - **Annotations stored as text** (`from __future__ import annotations`): `ast.unparse`'s
//!   spelling, compared without blanks, parentheses and trailing commas, quotes made one kind.
//! - **Name mangling**: `self.__x` in class `Foo` is the name `_Foo__x`; both `Foo` and `__x`
//!   must be in the source.
//! - **Qualified names** of classes and functions (`A.f.<locals>.B`): every identifier segment
//!   must be a class or function the source defines.
//! - **`return`**: the key of a function's return annotation (`->` in the source).
//!
//! Not explained, so still "differs" (measured on the same folder: 98 files, 51 SRC007):
//! `\N{...}` escapes (no Unicode name table here), sources in a PEP 263 encoding other than
//! UTF-8, and folding through parentheses (`'a' + ('b' * 3)`).
//!
//! Everything here is linear in the source: [`literal_values`] reads it once (folding may add
//! at most the source's length again), and the other checks are batched searches for the few
//! strings the verbatim passes left unexplained.

/// Separates runs of adjacent literals in [`literal_values`]'s output: never part of UTF-8, so a
/// constant (always valid UTF-8 by the time it is compared) cannot match across two runs.
pub(super) const RUN_END: u8 = 0xff;

/// Longest string CPython's constant folding produces (`MAX_STR_SIZE` in `Python/ast_opt.c`).
const MAX_FOLDED: usize = 4096;

/// Longest name tried as a mangled or qualified name.
const MAX_NAME: usize = 1024;

/// The values of `source`'s string literals, each run of adjacent literals (implicit
/// concatenation) joined, runs separated by [`RUN_END`]. Bytes literals are decoded to bytes
/// and then read as UTF-8 with replacement, as the marshal reader reads a bytes constant. A
/// replacement field ends an f-string's run. The output is never longer than `source`.
pub(super) fn literal_values(source: &str) -> Vec<u8> {
    let src = source.as_bytes();
    let mut out = Vec::with_capacity(src.len() / 4);
    // Where the current run of adjacent literals starts in `out`.
    let mut run: Option<usize> = None;
    // Bytes written by folding `*`, at most the source's length.
    let mut folded = 0usize;
    let fold_budget = src.len();
    let mut i = 0;
    while i < src.len() {
        let c = src[i];
        match c {
            b'#' => {
                i = memchr::memchr(b'\n', &src[i..]).map_or(src.len(), |n| i + n);
            }
            b' ' | b'\t' | b'\r' | b'\n' | b'\x0c' => i += 1,
            b'\\' if matches!(src.get(i + 1), Some(b'\n' | b'\r')) => i += 2,
            _ => {
                if let Some((prefix, quote_at)) = literal_start(src, i) {
                    if run.is_none() {
                        out.push(RUN_END);
                        run = Some(out.len());
                    }
                    let value_at = out.len();
                    i = literal(src, prefix, quote_at, &mut out);
                    // `'-' * 40` is folded too: repeat the value, within CPython's limit and
                    // a budget for the whole source (folding must not outgrow it).
                    let next = skip_blank(src, i);
                    if src.get(next) == Some(&b'*') && src.get(next + 1) != Some(&b'*') {
                        let digits_at = skip_blank(src, next + 1);
                        let digits = src[digits_at..]
                            .iter()
                            .take_while(|b| b.is_ascii_digit())
                            .count();
                        let n: usize = std::str::from_utf8(&src[digits_at..digits_at + digits])
                            .ok()
                            .and_then(|d| d.parse().ok())
                            .unwrap_or(0);
                        let unit = out.len() - value_at;
                        let total = unit.saturating_mul(n);
                        if n > 1 && unit > 0 && total <= MAX_FOLDED && folded + total <= fold_budget
                        {
                            folded += total;
                            for _ in 1..n {
                                out.extend_from_within(value_at..value_at + unit);
                            }
                            i = digits_at + digits;
                        }
                    }
                    continue;
                }
                if c == b'+' && run.is_some() {
                    // `'a' + 'b'` is folded into one constant: the run goes on when a literal
                    // follows.
                    let next = skip_blank(src, i + 1);
                    if literal_start(src, next).is_some() {
                        i = next;
                        continue;
                    }
                }
                if let Some(start) = run.take() {
                    percent_variant(&mut out, start);
                }
                // Skip a whole identifier or number: a prefix letter inside one starts nothing.
                if is_word(c) {
                    while i < src.len() && is_word(src[i]) {
                        i += 1;
                    }
                } else {
                    i += 1;
                }
            }
        }
    }
    if let Some(start) = run {
        percent_variant(&mut out, start);
    }
    out.push(RUN_END);
    out
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// The index of the next byte of `src` from `i` that is not blank (spaces, line ends, comments,
/// backslash continuations).
fn skip_blank(src: &[u8], mut i: usize) -> usize {
    while let Some(&b) = src.get(i) {
        match b {
            b' ' | b'\t' | b'\r' | b'\n' | b'\x0c' => i += 1,
            b'\\' if matches!(src.get(i + 1), Some(b'\n' | b'\r')) => i += 2,
            b'#' => i = memchr::memchr(b'\n', &src[i..]).map_or(src.len(), |n| i + n),
            _ => break,
        }
    }
    i
}

/// Python 3.11 and later compile `'...%s...' % (a, b)` as an f-string: the constants are the
/// format's text between its conversions, with `%%` halved. When the run from `start` holds a
/// `%`, that rendering is appended as more runs (never longer than the run itself).
fn percent_variant(out: &mut Vec<u8>, start: usize) {
    let Some(first) = memchr::memchr(b'%', &out[start..]) else {
        return;
    };
    let mut variant = Vec::with_capacity(out.len() - start + 1);
    variant.push(RUN_END);
    variant.extend_from_slice(&out[start..start + first]);
    let mut i = start + first;
    while i < out.len() {
        let b = out[i];
        if b != b'%' {
            variant.push(b);
            i += 1;
            continue;
        }
        if out.get(i + 1) == Some(&b'%') {
            variant.push(b'%');
            i += 2;
            continue;
        }
        // A conversion: flags, width, precision, then its letter; the run ends there. A
        // width or precision becomes a format spec constant (`%-8.3s` -> `<8.3`).
        i += 1;
        let flags = i;
        while i < out.len()
            && matches!(
                out[i],
                b'#' | b'0' | b'-' | b' ' | b'+' | b'.' | b'1'..=b'9'
            )
        {
            i += 1;
        }
        let spec = &out[flags..i.min(out.len())];
        i += 1;
        variant.push(RUN_END);
        if spec.iter().any(|&b| b == b'.' || b.is_ascii_digit()) {
            variant.push(if spec.contains(&b'-') { b'<' } else { b'>' });
            variant.extend(spec.iter().filter(|&&b| b == b'.' || b.is_ascii_digit()));
            variant.push(RUN_END);
        }
    }
    out.extend_from_slice(&variant);
}

/// The string prefix flags of a literal.
#[derive(Debug, Clone, Copy, Default)]
struct Prefix {
    raw: bool,
    bytes: bool,
    format: bool,
}

/// Whether a string literal starts at `i` (a token start): its prefix and where its quote is.
fn literal_start(src: &[u8], i: usize) -> Option<(Prefix, usize)> {
    let mut p = Prefix::default();
    let mut j = i;
    while j < src.len() && j - i < 3 {
        match src[j] {
            b'r' | b'R' => p.raw = true,
            b'b' | b'B' => p.bytes = true,
            b'f' | b'F' | b't' | b'T' => p.format = true,
            b'u' | b'U' => {}
            b'\'' | b'"' => return Some((p, j)),
            _ => return None,
        }
        j += 1;
    }
    None
}

/// Reads the literal whose quote is at `q`, appends its value to `out`, and returns the index
/// after it. An unterminated literal ends at its line's end (single quotes) or the source's end.
fn literal(src: &[u8], p: Prefix, q: usize, out: &mut Vec<u8>) -> usize {
    let quote = src[q];
    let triple = src.get(q + 1) == Some(&quote) && src.get(q + 2) == Some(&quote);
    let open = if triple { 3 } else { 1 };
    let start = q + open;
    // Find the closing quote; inside an f-string's replacement fields quotes may nest (3.12).
    let mut depth = 0usize;
    let mut j = start;
    let end = loop {
        let Some(&b) = src.get(j) else {
            break src.len();
        };
        match b {
            // A backslash keeps the next quote, backslash or line end in the literal; before
            // anything else (a brace of a raw f-string's `\{{`) it is just itself.
            b'\\' if matches!(src.get(j + 1), Some(b'\'' | b'"' | b'\\' | b'\n' | b'\r')) => {
                j += 2;
                continue;
            }
            b'\n' if !triple && depth == 0 => break j,
            b'{' if p.format => {
                if depth == 0 && src.get(j + 1) == Some(&b'{') {
                    j += 2;
                    continue;
                }
                depth += 1;
            }
            b'}' if p.format && depth > 0 => depth -= 1,
            _ if b == quote
                && depth == 0
                && (!triple
                    || (src.get(j + 1) == Some(&quote) && src.get(j + 2) == Some(&quote))) =>
            {
                break j;
            }
            _ => {}
        }
        j += 1;
    };
    let body = &src[start..end.min(src.len())];
    if p.format {
        format_parts(body, p.raw, out);
    } else {
        value(body, p, out);
    }
    let close = if end < src.len() && src[end] == quote {
        open
    } else {
        0
    };
    (end + close).min(src.len())
}

/// The literal parts of an f-string body (`{{`/`}}` halved), each replacement field ending the
/// run.
fn format_parts(body: &[u8], raw: bool, out: &mut Vec<u8>) {
    let p = Prefix {
        raw,
        ..Prefix::default()
    };
    let mut part = Vec::new();
    let mut i = 0;
    while i < body.len() {
        match body[i] {
            b'{' if body.get(i + 1) == Some(&b'{') => {
                part.push(b'{');
                i += 2;
            }
            b'}' if body.get(i + 1) == Some(&b'}') => {
                part.push(b'}');
                i += 2;
            }
            b'{' => {
                let open = i;
                let mut depth = 0usize;
                while i < body.len() {
                    match body[i] {
                        b'{' => depth += 1,
                        b'}' => {
                            depth = depth.saturating_sub(1);
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
                // `{expr=}` writes its own text, `=` and spaces included, before the value.
                part.extend_from_slice(debug_text(&body[open + 1..i.min(body.len())]));
                value(&part, p, out);
                part.clear();
                out.push(RUN_END);
                i += 1;
            }
            b => {
                part.push(b);
                i += 1;
            }
        }
    }
    value(&part, p, out);
}

/// The text a self-documenting replacement field (`{expr=}`, `{expr = !r}`, `{x=:>8}`) puts
/// before its value: the field up to its `=` and the spaces after it. Empty for other fields.
fn debug_text(field: &[u8]) -> &[u8] {
    // The spec or conversion starts at the last top-level `:` or `!`; approximate "top level"
    // by the last one, which is where CPython's own f-string debug form ends too.
    let end = field
        .iter()
        .rposition(|&b| b == b'!' || b == b':')
        .filter(|&k| field.get(k + 1) != Some(&b'='))
        .unwrap_or(field.len());
    let head = &field[..end];
    let trimmed = head.len()
        - head
            .iter()
            .rev()
            .take_while(|b| b.is_ascii_whitespace())
            .count();
    if trimmed == 0 || head[trimmed - 1] != b'=' {
        return b"";
    }
    let before = head[..trimmed - 1].last().copied();
    if matches!(before, Some(b'=' | b'!' | b'<' | b'>')) || trimmed == 1 {
        return b"";
    }
    head
}

/// Appends the value of a literal body: raw as it is, otherwise with Python's escapes decoded.
fn value(body: &[u8], p: Prefix, out: &mut Vec<u8>) {
    if p.raw {
        push_text(body, p.bytes, out);
        return;
    }
    let mut v = Vec::with_capacity(body.len());
    let mut i = 0;
    while i < body.len() {
        let b = body[i];
        if b != b'\\' || i + 1 >= body.len() {
            v.push(b);
            i += 1;
            continue;
        }
        let e = body[i + 1];
        i += 2;
        let simple = match e {
            b'\n' => None,
            b'\r' => {
                if body.get(i) == Some(&b'\n') {
                    i += 1;
                }
                None
            }
            b'\\' | b'\'' | b'"' => Some(e),
            b'a' => Some(7),
            b'b' => Some(8),
            b'f' => Some(12),
            b'n' => Some(b'\n'),
            b'r' => Some(b'\r'),
            b't' => Some(b'\t'),
            b'v' => Some(11),
            b'0'..=b'7' => {
                let mut n = u32::from(e - b'0');
                let mut k = 0;
                while k < 2 && i < body.len() && matches!(body[i], b'0'..=b'7') {
                    n = n * 8 + u32::from(body[i] - b'0');
                    i += 1;
                    k += 1;
                }
                push_code(n, p.bytes, &mut v);
                None
            }
            b'x' => match hex(body.get(i..i + 2)) {
                Some(n) => {
                    i += 2;
                    push_code(n, p.bytes, &mut v);
                    None
                }
                None => {
                    v.extend_from_slice(b"\\x");
                    None
                }
            },
            b'u' | b'U' if !p.bytes => {
                let n = if e == b'u' { 4 } else { 8 };
                match hex(body.get(i..i + n)) {
                    Some(c) => {
                        i += n;
                        push_code(c, false, &mut v);
                    }
                    None => v.extend_from_slice(&[b'\\', e]),
                }
                None
            }
            b'N' if !p.bytes => {
                // A character by its Unicode name: there is no name table here, so the run
                // ends (what surrounds it is still matched on either side).
                if let Some(close) = body[i..].iter().position(|&c| c == b'}') {
                    i += close + 1;
                }
                push_text(&v, p.bytes, out);
                v.clear();
                out.push(RUN_END);
                None
            }
            _ => {
                v.push(b'\\');
                v.push(e);
                None
            }
        };
        if let Some(s) = simple {
            v.push(s);
        }
    }
    push_text(&v, p.bytes, out);
}

/// Appends a decoded value: text as UTF-8 (a source is valid UTF-8 by now, and escapes add only
/// whole characters), bytes as UTF-8 with replacement, as the marshal reader reads them.
fn push_text(v: &[u8], bytes: bool, out: &mut Vec<u8>) {
    if bytes {
        out.extend_from_slice(String::from_utf8_lossy(v).as_bytes());
    } else {
        out.extend_from_slice(v);
    }
}

/// Appends code `n`: a byte in a bytes literal, a character (UTF-8) in a text one.
fn push_code(n: u32, bytes: bool, v: &mut Vec<u8>) {
    if bytes {
        v.push((n & 0xff) as u8);
    } else {
        let Some(c) = char::from_u32(n) else {
            // A lone surrogate: marshal writes its three UTF-8-like bytes, which the marshal
            // reader replaces one by one.
            for _ in 0..3 {
                v.extend_from_slice("\u{fffd}".as_bytes());
            }
            return;
        };
        let mut buf = [0u8; 4];
        v.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
    }
}

fn hex(digits: Option<&[u8]>) -> Option<u32> {
    let d = digits?;
    let s = std::str::from_utf8(d).ok()?;
    if !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(s, 16).ok()
}

/// How the match looks for many patterns in a text in one pass (`occurring` in the parent):
/// passed down, so this leaf needs nothing from the module above it.
pub(super) type Find = fn(&[&str], &[u8]) -> Vec<bool>;

/// Which of `strings` (each unexplained by its plain occurrence in `source`) the compiler could
/// have made from `source`, in one of the ways the module documentation lists. Linear: the
/// source is read once for its literals' values, then every pattern the checks need is looked
/// for in two batched searches (`find`), one over the values and one over the source.
pub(super) fn made_by_compiler(strings: &[&str], source: &str, find: Find) -> Vec<bool> {
    let values = literal_values(source);
    let mut made = find(strings, &values);
    let mut batches: [Batch; 3] = Default::default();
    let needs: Vec<Option<Vec<Need>>> = strings
        .iter()
        .zip(&made)
        .map(|(&s, &done)| (!done).then(|| needs(s, &mut batches)))
        .collect();
    let [in_values, in_source, in_squeezed] = &batches;
    let squeezed = if in_squeezed.index.is_empty() {
        Vec::new()
    } else {
        squeeze(source)
    };
    let found = [
        find(&in_values.patterns(), &values),
        find(&in_source.patterns(), source.as_bytes()),
        find(&in_squeezed.patterns(), &squeezed),
    ];
    for (m, n) in made.iter_mut().zip(&needs) {
        if let Some(alternatives) = n {
            *m = alternatives.iter().any(|need| need.met(&found));
        }
    }
    made
}

/// Where a pattern is looked for: [`VALUES`] the literals' values, [`SOURCE`] the source text,
/// [`SQUEEZED`] the source without blanks and with one kind of quote ([`squeeze`]).
const VALUES: usize = 0;
const SOURCE: usize = 1;
const SQUEEZED: usize = 2;

/// `text` without whitespace and parentheses, without a comma before `]`, its double quotes
/// made single: how an annotation the compiler stored as text (`from __future__ import
/// annotations`: `ast.unparse`'s spacing, quotes and parentheses) compares with the source that
/// spelled it.
fn squeeze(text: &str) -> Vec<u8> {
    let mut out: Vec<u8> = Vec::with_capacity(text.len());
    for b in text.bytes() {
        match b {
            b if b.is_ascii_whitespace() => {}
            // A trailing comma the compiler's spelling drops.
            b']' if out.last() == Some(&b',') => {
                out.pop();
                out.push(b);
            }
            b'"' => out.push(b'\''),
            // Parentheses the compiler's spelling drops or adds around a part.
            b'(' | b')' => {}
            b => out.push(b),
        }
    }
    out
}

/// One line with a blank, a quote or a parenthesis: an annotation stored as text that
/// [`squeeze`] can tell from its source spelling (without one, squeezing changes nothing the
/// plain search has not tried, so the source is not squeezed for it).
fn expression_like(s: &str) -> bool {
    !s.contains('\n')
        && s.bytes()
            .any(|b| matches!(b, b' ' | b'\t' | b'\'' | b'"' | b'(' | b')'))
}

/// Distinct patterns for one batched search.
#[derive(Default)]
struct Batch {
    index: std::collections::HashMap<String, usize>,
}

impl Batch {
    fn add(&mut self, p: impl Into<String>) -> usize {
        let next = self.index.len();
        *self.index.entry(p.into()).or_insert(next)
    }

    fn patterns(&self) -> Vec<&str> {
        let mut order = vec![""; self.index.len()];
        for (p, &i) in &self.index {
            order[i] = p.as_str();
        }
        order
    }
}

/// One way a string is explained: every group has one of its patterns found (a pattern is a
/// batch, [`VALUES`] or [`SOURCE`], and its index there).
struct Need(Vec<Vec<(usize, usize)>>);

impl Need {
    fn met(&self, found: &[Vec<bool>; 3]) -> bool {
        self.0.iter().all(|group| {
            group
                .iter()
                .any(|&(b, i)| found[b].get(i).copied().unwrap_or(false))
        })
    }
}

/// The ways `s` could be the compiler's, as patterns added to the two batches.
fn needs(s: &str, batches: &mut [Batch; 3]) -> Vec<Need> {
    let mut add = |b: usize, p: String| (b, batches[b].add(p));
    let mut ways = Vec::new();
    if s.contains('\n') {
        // A docstring Python 3.13 dedented, or one spanning escaped line ends: each line is
        // in some literal's value.
        let lines: Vec<Vec<(usize, usize)>> = s
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(|l| vec![add(VALUES, l.to_string())])
            .collect();
        ways.push(Need(lines));
    }
    if s == "return" {
        // The key of a return annotation.
        ways.push(Need(vec![vec![add(SOURCE, "->".into())]]));
    }
    if let Some(unit) = repeated_unit(s) {
        // Folded `*`: the unit as a literal's value, or spelled in the source.
        ways.push(Need(vec![vec![
            add(VALUES, unit.into()),
            add(SOURCE, unit.into()),
        ]]));
    }
    if s.len() <= MAX_NAME && expression_like(s) {
        // An annotation stored as text.
        let squeezed = squeeze(s);
        if let Ok(p) = String::from_utf8(squeezed)
            && !p.is_empty()
        {
            ways.push(Need(vec![vec![add(SQUEEZED, p)]]));
        }
    }
    if s.len() <= MAX_NAME {
        for (class, private) in mangled(s) {
            ways.push(Need(vec![
                vec![add(SOURCE, class.into())],
                vec![add(SOURCE, private.into())],
            ]));
        }
        if let Some(segments) = qualified(s) {
            // Each identifier segment a class or function the source defines.
            ways.push(Need(
                segments
                    .map(|seg| {
                        vec![
                            add(SOURCE, format!("class {seg}")),
                            add(SOURCE, format!("def {seg}")),
                        ]
                    })
                    .collect(),
            ));
        }
    }
    ways
}

/// The shortest unit `s` repeats (at least twice), for strings constant folding can make.
fn repeated_unit(s: &str) -> Option<&str> {
    let b = s.as_bytes();
    if b.len() < 2 || b.len() > MAX_FOLDED {
        return None;
    }
    // Prefix function: the longest proper border of `b` gives its shortest period.
    let mut border = vec![0usize; b.len()];
    for i in 1..b.len() {
        let mut k = border[i - 1];
        while k > 0 && b[i] != b[k] {
            k = border[k - 1];
        }
        if b[i] == b[k] {
            k += 1;
        }
        border[i] = k;
    }
    let period = b.len() - border[b.len() - 1];
    (period < b.len() && b.len().is_multiple_of(period))
        .then(|| s.get(..period))
        .flatten()
}

/// `_Class__name`: a private name `__name` used in class `Class` (leading underscores of the
/// class name stripped, as CPython's `_Py_Mangle` does). Every split the string allows, as
/// (class name, private name).
fn mangled(s: &str) -> impl Iterator<Item = (&str, &str)> {
    let rest = s
        .strip_prefix('_')
        .filter(|r| !r.starts_with('_') && !s.ends_with("__"))
        .unwrap_or("");
    rest.match_indices("__")
        .filter(|&(k, _)| k > 0)
        .map(move |(k, _)| (&rest[..k], &rest[k..]))
}

/// `A.f.<locals>.B`: a qualified name's identifier segments (those in angle brackets are the
/// compiler's), or `None` when `s` is not one.
fn qualified(s: &str) -> Option<impl Iterator<Item = &str>> {
    let ok = s.contains('.')
        && s.split('.').all(|seg| {
            (seg.starts_with('<') && seg.ends_with('>'))
                || (!seg.is_empty() && seg.chars().all(|c| c.is_alphanumeric() || c == '_'))
        });
    ok.then(|| s.split('.').filter(|seg| !seg.starts_with('<')))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(src: &str) -> Vec<String> {
        literal_values(src)
            .split(|&b| b == RUN_END)
            .filter(|r| !r.is_empty())
            .map(|r| String::from_utf8(r.to_vec()).unwrap())
            .collect()
    }

    #[test]
    fn adjacent_literals_are_one_run_and_escapes_are_decoded() {
        let src = "x = (\"a \"  # note\n  'b'\n  \"\"\"c\\\nd\"\"\")\ny = 'e\\x41\\101\\u00b6\\n' + r'\\x41'\n";
        // `+` between literals folds them into one constant.
        assert_eq!(runs(src), ["a bcd", "eAA¶\n\\x41"]);
        assert_eq!(runs("'a' + x + 'b' +\n  # c\n  'c'"), ["a", "bc"]);
        // `* N` folds within CPython's limit; a name or a product past it does not.
        assert_eq!(runs("'\\n' + '-' * 4 + 'x'"), ["\n----x"]);
        assert_eq!(runs("'ab' * n"), ["ab"]);
        assert_eq!(runs("'ab' * 2049").concat().len(), 2);
        // Bytes decode to bytes, read with replacement; an unknown escape keeps its backslash.
        assert_eq!(runs("b'\\xff\\x41' '\\q'"), ["\u{fffd}A\\q"]);
        // A prefix letter inside an identifier starts nothing; a prefix before a quote does.
        assert_eq!(runs("bar'x' ; rb'\\x' Rb\"y\""), ["x", "\\xy"]);
    }

    #[test]
    fn f_strings_join_up_to_their_fields() {
        assert_eq!(
            runs("\"a\" f\"b{{c}}{x:>{w}}d{y[\"k\"]}e\" 'f'"),
            ["ab{c}", "d", "ef"]
        );
    }

    #[test]
    fn percent_formats_and_self_documenting_fields_give_the_constants_311_compiles() {
        // `'...' % (a,)` becomes an f-string in 3.11: `%%` halved, the run split at each
        // conversion; the run as written stays too.
        assert_eq!(
            runs("'100%% of %s, %-4r!' % (a, b)"),
            ["100%% of %s, %-4r!", "100% of ", ", ", "<4", "!"]
        );
        assert_eq!(
            runs("f'k: {k=} {x = !r} {y=:>4} {a != b} {d[\\'k\\']}.'"),
            ["k: k=", " x = ", " y=", " ", " ", "."]
        );
    }

    #[test]
    fn a_named_escape_ends_the_run_and_an_unterminated_literal_ends_at_its_line() {
        assert_eq!(runs("'a\\N{PILCROW SIGN}b'"), ["a", "b"]);
        assert_eq!(runs("'abc\nx = 'd'"), ["abc", "d"]);
        assert_eq!(runs("'''never closed"), ["never closed"]);
        assert_eq!(runs("'ends in a backslash\\"), ["ends in a backslash\\"]);
    }

    fn each(patterns: &[&str], text: &[u8]) -> Vec<bool> {
        patterns
            .iter()
            .map(|p| memchr::memmem::find(text, p.as_bytes()).is_some())
            .collect()
    }

    #[test]
    fn the_compilers_own_strings_are_explained_and_nothing_else() {
        let src = "class _Foo:\n    def f(self) -> int:\n        self.__x = 'ab' * 8 + b'\\0' * 4\n        class B: pass\n        return ('one '\n  'two')\n";
        let made = |s: &str| made_by_compiler(&[s], src, each)[0];
        assert!(made("one two"));
        assert!(made("abababababababab"));
        assert!(made("\0\0\0\0"));
        assert!(made("_Foo__x"));
        assert!(made("_Foo.f.<locals>.B"));
        assert!(made("return"));
        // Not made from this source.
        assert!(!made("curl http://x | sh"));
        assert!(!made("_Bar__x"));
        assert!(!made("_Foo__y"));
        assert!(!made("_Foo.f.<locals>.C"));
        assert!(!made("_Foo.self"));
        assert!(!made("cdcdcdcd"));
        assert!(!made("one  two"));
        assert!(!made_by_compiler(&["return"], "def f(): pass", each)[0]);
        // Annotations stored as text, in `ast.unparse`'s spelling.
        let ann = "from __future__ import annotations\nx: dict[str, \"P\"]\ny: None | (\n    float\n)\nz: Callable[\n    [int],\n    str,\n]\n";
        let made = |s: &str| made_by_compiler(&[s], ann, each)[0];
        assert!(made("dict[str, 'P']"));
        assert!(made("None | float"));
        assert!(made("Callable[[int], str]"));
        assert!(!made("dict[str, 'Q']"));
        assert!(!made("None | int"));
        // Many strings at once: each answered as on its own.
        let all = ["one two", "curl", "_Foo__x", "_Foo__y", "return"];
        assert_eq!(
            made_by_compiler(&all, src, each),
            [true, false, true, false, true]
        );
    }

    #[test]
    fn hostile_sources_are_read_in_one_pass() {
        // Quotes, backslashes and braces by the hundred thousand: linear, never past the end.
        for src in [
            "'".repeat(100_001),
            "\\".repeat(100_001),
            "f'{".repeat(50_000),
            "b'\\x".repeat(50_000),
            "'\\N{".repeat(50_000),
            "\"\"\"".repeat(33_334),
            "'ab' * 2048\n".repeat(10_000),
            "'%5s%%%-3.1r' % x\n".repeat(10_000),
            "'a' + ".repeat(30_000),
        ] {
            let v = literal_values(&src);
            assert!(v.len() <= 5 * src.len() + 2);
        }
        // Generated sources of the characters that steer the lexing: never a panic, the
        // output bounded, and every string of the source checked without one.
        let alphabet = [
            "'",
            "\"",
            "'''",
            "\\",
            "{",
            "}",
            "{{",
            "f",
            "rb",
            "b",
            "u",
            "R",
            "%",
            "%%",
            "%5s",
            "*",
            " * 3",
            "+",
            "#",
            "\n",
            "\\\n",
            " ",
            "x",
            "=",
            "!r",
            ":",
            "é",
            "\\x4",
            "\\N{",
            "\\u12",
            "\\U0001F600",
            "\\777",
            "(",
            ")",
            "[",
            ",",
            "_A__b",
            "class ",
            "def ",
            "->",
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut lengths = 0;
        for _ in 0..20_000 {
            let mut src = String::new();
            for _ in 0..next() % 24 {
                src.push_str(alphabet[(next() % alphabet.len() as u64) as usize]);
            }
            lengths += src.len();
            let v = literal_values(&src);
            assert!(v.len() <= 5 * src.len() + 2, "{src:?}");
            let strings: Vec<&str> = src
                .split(['\'', '"', '\n'])
                .filter(|s| !s.is_empty())
                .collect();
            assert_eq!(made_by_compiler(&strings, &src, each).len(), strings.len());
        }
        assert!(
            lengths > 200_000,
            "the generator made sources: {lengths} bytes"
        );
        // A repeated unit is found in linear time and only within the folding limit.
        assert_eq!(repeated_unit(&"ab".repeat(2048)), Some("ab"));
        assert_eq!(repeated_unit(&"ab".repeat(2049)), None);
        assert_eq!(repeated_unit("aba"), None);
    }
}
