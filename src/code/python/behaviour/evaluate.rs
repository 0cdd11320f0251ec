//! The literal evaluator of the behaviour judge: the bytes an expression built from literals
//! evaluates to (`blob`), through string methods, `%` and `format`, joins, slicing, `chr`,
//! decoders and the names and attributes that hold them, within the file's one budget. Every
//! operation that can grow its output computes the size first and gives up past the budget.

use crate::code::python::field::{Field, Fields};
use std::collections::BTreeMap;

use tree_sitter::Node;

use super::analyzer::{Analyzer, Blob};
use crate::code::python::budget::{MAX_VALUE_BYTES, Mode, Spent};
use crate::code::python::calls::StrVal;
use crate::code::python::decode::{self, Codec};
use crate::knowledge::capabilities as caps;

impl<'s> Analyzer<'s, '_, '_> {
    // ---- blobs ------------------------------------------------------------------------------

    /// The bytes an expression built from literals evaluates to, with the decoding steps that
    /// produced them. `Ok(None)`: not a literal expression, or given up within the file's
    /// budget (a cycle, a limit); `Err`: a step failed
    /// (named).
    pub fn blob(&self, node: Node<'s>) -> Result<Option<Blob>, decode::DecodeError> {
        let Some(node) = self.unparenthesized(node) else {
            return Ok(None);
        };
        let Ok(_guard) = self.budget.enter(node.id(), Mode::Value) else {
            return Ok(None);
        };
        self.blob_entered(node)
    }

    /// A plain value, charged to the budget before it is allocated.
    pub(super) fn plain(&self, bytes: &[u8]) -> Option<Blob> {
        self.budget
            .alloc(bytes.len())
            .then(|| Blob::plain(bytes.to_vec()))
    }

    /// [`Analyzer::blob`] of the value a name is assigned once, remembered per value (see
    /// [`Analyzer::resolve_value`]); a value is the same whatever path reaches it, unless a
    /// limit stopped part of it.
    pub(super) fn blob_value(&self, value: Node<'s>) -> Result<Option<Blob>, decode::DecodeError> {
        let known = self
            .values
            .borrow()
            .get(&value.id())
            .filter(|(_, memo)| memo.holds_at(self.budget.depth()))
            .map(|(out, _)| out.clone());
        if let Some(known) = known {
            return match known {
                Ok(Some(b)) if !self.budget.alloc(b.bytes.len()) => Ok(None),
                other => other,
            };
        }
        let mark = self.budget.mark();
        let out = self.blob(value);
        if let Some(memo) = self.budget.memo_since(mark, true) {
            self.values
                .borrow_mut()
                .insert(value.id(), (out.clone(), memo));
        }
        out
    }

    pub(super) fn blob_entered(&self, node: Node<'s>) -> Result<Option<Blob>, decode::DecodeError> {
        let limits = self.sc.limits.blob;
        match node.kind() {
            "string" | "concatenated_string" => Ok(self.literal(node).map(Blob::plain)),
            "identifier" => {
                let name = self.sc.text(node);
                match self.sc.string_value(node) {
                    StrVal::Constant { value, .. } => Ok(self.plain(value.as_bytes())),
                    _ => match self.value_of(name) {
                        Some(v) if v.id() != node.id() => self.blob_value(v),
                        _ => Ok(None),
                    },
                }
            }
            "binary_operator" => {
                let (Some(l), Some(op), Some(r)) = (
                    node.field(Field::Left),
                    node.field(Field::Operator),
                    node.field(Field::Right),
                ) else {
                    return Ok(None);
                };
                match self.sc.text(op) {
                    "+" => self.concatenation(node),
                    "%" => {
                        let Some(fmt) = self.blob(l)? else {
                            return Ok(None);
                        };
                        let items: Vec<Node<'s>> = if r.kind() == "tuple" {
                            let mut c = r.walk();
                            r.named_children(&mut c).collect()
                        } else {
                            vec![r]
                        };
                        let mut values = Vec::new();
                        for item in items {
                            match self.string(item) {
                                Some(v) => values.push(v),
                                None => return Ok(None),
                            }
                        }
                        let Ok(fmt) = String::from_utf8(fmt.bytes) else {
                            return Ok(None);
                        };
                        let size = percent_format(&fmt, &values, None);
                        if !self.formatted_fits(size) {
                            return Ok(None);
                        }
                        let mut out = String::new();
                        let _ = percent_format(&fmt, &values, Some(&mut out));
                        Ok(Some(Blob::plain(out.into_bytes())))
                    }
                    _ => Ok(None),
                }
            }
            "subscript" => {
                // `s[::-1]`
                let (Some(value), Some(index)) =
                    (node.field(Field::Value), node.field(Field::Subscript))
                else {
                    return Ok(None);
                };
                if index.kind() == "slice" && self.sc.text(index).replace(' ', "") == "::-1" {
                    let Some(inner) = self.blob(value)? else {
                        return Ok(None);
                    };
                    return self.step(inner, Codec::Reverse, &limits).map(Some);
                }
                Ok(None)
            }
            "call" => self.blob_call(node, &limits),
            // `bytes([105, 109, …])`: a list of byte values (only ever read through `bytes`).
            "list" | "tuple" => {
                let mut c = node.walk();
                let items: Vec<Node<'s>> = node.named_children(&mut c).collect();
                if !self.budget.alloc(items.len()) {
                    return Ok(None);
                }
                let bytes: Option<Vec<u8>> = items
                    .into_iter()
                    .map(|i| self.int(i).and_then(|v| u8::try_from(v).ok()))
                    .collect();
                Ok(bytes.map(Blob::plain))
            }
            _ => Ok(None),
        }
    }

    /// `a + b + c + …`: tree-sitter nests a chain to the left, one level per term; its terms
    /// are gathered in a loop and joined into one buffer, so a chain of ten thousand terms is
    /// neither ten thousand levels deep nor copied ten thousand times (issue 37). Every term is
    /// evaluated, as Python would, so a term that fails to decode is reported even when an
    /// earlier one is unknown.
    pub(super) fn concatenation(
        &self,
        node: Node<'s>,
    ) -> Result<Option<Blob>, decode::DecodeError> {
        let mut rights = Vec::new();
        let mut first = node;
        while first.kind() == "binary_operator"
            && let (Some(l), Some(op), Some(r)) = (
                first.field(Field::Left),
                first.field(Field::Operator),
                first.field(Field::Right),
            )
            && self.sc.text(op) == "+"
        {
            if !self.budget.step() {
                return Ok(None);
            }
            rights.push(r);
            first = l;
        }
        let mut acc = self.blob(first)?;
        for term in rights.into_iter().rev() {
            let next = self.blob(term)?;
            acc = match (acc, next) {
                (Some(mut a), Some(b)) => {
                    // The whole value may not pass one value's cap; the file pays for what
                    // is added.
                    let total = a.bytes.len().checked_add(b.bytes.len());
                    if total.is_none_or(|t| t > MAX_VALUE_BYTES) {
                        self.budget.refuse(Spent::Bytes);
                        None
                    } else if !self.budget.charge(b.bytes.len()) {
                        None
                    } else {
                        a.bytes.extend_from_slice(&b.bytes);
                        a.chain.extend(b.chain);
                        Some(a)
                    }
                }
                _ => None,
            };
        }
        Ok(acc)
    }

    pub(super) fn blob_call(
        &self,
        node: Node<'s>,
        limits: &decode::Limits,
    ) -> Result<Option<Blob>, decode::DecodeError> {
        let Some(func) = node.field(Field::Function) else {
            return Ok(None);
        };
        let args = self.sc.args(node);
        let encoding = args
            .arg(1, &["encoding"])
            .and_then(|e| self.literal(e))
            .and_then(|b| String::from_utf8(b).ok());
        // Method calls on a value: `"…".join([...])`, `"{}".format(...)`, `x.decode()`.
        if func.kind() == "attribute"
            && let (Some(object), Some(attr)) =
                (func.field(Field::Object), func.field(Field::Attribute))
        {
            let method = self.sc.text(attr);
            match method {
                "join" => {
                    let (Some(sep), Some(items)) = (self.string(object), args.positional.first())
                    else {
                        return Ok(None);
                    };
                    let Some(parts) = self.string_items(*items) else {
                        return Ok(None);
                    };
                    // The size first: a megabyte separator between ten thousand parts is ten
                    // gigabytes.
                    let size = parts
                        .iter()
                        .try_fold(0usize, |n, p| n.checked_add(p.len()))
                        .and_then(|n| {
                            sep.len()
                                .checked_mul(parts.len().saturating_sub(1))
                                .and_then(|s| n.checked_add(s))
                        });
                    if !self.budget.alloc_size(size) {
                        return Ok(None);
                    }
                    return Ok(Some(Blob::plain(parts.join(&sep).into_bytes())));
                }
                "lower" | "upper" | "strip" | "lstrip" | "rstrip" | "title" | "capitalize"
                | "swapcase"
                    if args.positional.is_empty() =>
                {
                    let Some(s) = self.string(object) else {
                        return Ok(None);
                    };
                    return Ok(self.case_method(method, &s).map(Blob::plain));
                }
                "replace" => {
                    let (Some(s), Some(from), Some(to)) = (
                        self.string(object),
                        args.positional.first().and_then(|a| self.string(*a)),
                        args.positional.get(1).and_then(|a| self.string(*a)),
                    ) else {
                        return Ok(None);
                    };
                    if from.is_empty() {
                        return Ok(None);
                    }
                    // The size first: `s.replace("a", s)` squares the length.
                    let count = s.matches(from.as_str()).count();
                    let kept = s.len().saturating_sub(count.saturating_mul(from.len()));
                    let size = count
                        .checked_mul(to.len())
                        .and_then(|grown| kept.checked_add(grown));
                    if !self.budget.alloc_size(size) {
                        return Ok(None);
                    }
                    return Ok(Some(Blob::plain(s.replace(&from, &to).into_bytes())));
                }
                "format" => {
                    let Some(fmt) = self.string(object) else {
                        return Ok(None);
                    };
                    let mut values = Vec::new();
                    for a in &args.positional {
                        match self.string(*a) {
                            Some(v) => values.push(v),
                            None => return Ok(None),
                        }
                    }
                    let mut named = BTreeMap::new();
                    for (k, v) in &args.keywords {
                        match self.string(*v) {
                            Some(v) => {
                                named.insert(*k, v);
                            }
                            None => return Ok(None),
                        }
                    }
                    let size = brace_format(&fmt, &values, &named, None);
                    if !self.formatted_fits(size) {
                        return Ok(None);
                    }
                    let mut out = String::new();
                    let _ = brace_format(&fmt, &values, &named, Some(&mut out));
                    return Ok(Some(Blob::plain(out.into_bytes())));
                }
                "decode" | "encode"
                    if !self.resolve(func).iter().any(|n| n.starts_with("codecs.")) =>
                {
                    let enc = args
                        .arg(0, &["encoding"])
                        .and_then(|e| self.literal(e))
                        .and_then(|b| String::from_utf8(b).ok());
                    if let Some(codec) = Codec::of_method(method, enc.as_deref())
                        && let Some(inner) = self.blob(object)?
                    {
                        return self.step(inner, codec, limits).map(Some);
                    }
                    return Ok(None);
                }
                _ => {}
            }
        }
        let names = self.resolve(func);
        for name in &names {
            let name = caps::normalize(name);
            if name == "chr" {
                let Some(n) = args.positional.first().and_then(|a| self.int(*a)) else {
                    return Ok(None);
                };
                return Ok(char::from_u32(n).and_then(|c| self.plain(c.to_string().as_bytes())));
            }
            if let Some(codec) = Codec::of_call(&name, encoding.as_deref()) {
                let Some(arg) = args.positional.first() else {
                    return Ok(None);
                };
                let Some(inner) = self.blob(*arg)? else {
                    return Ok(None);
                };
                return self.step(inner, codec, limits).map(Some);
            }
        }
        Ok(None)
    }

    /// Whether a formatted string measured first may be built: its size charged, or the
    /// reason it may not recorded.
    pub(super) fn formatted_fits(&self, size: Formatted) -> bool {
        match size {
            Formatted::Len(n) => self.budget.alloc(n),
            Formatted::TooLarge => {
                self.budget.refuse(Spent::Bytes);
                false
            }
            Formatted::Invalid => false,
        }
    }

    /// `s.lower()`, `s.strip()`, …: the size of the result first (a case mapping may grow a
    /// character to three), then the result.
    pub(super) fn case_method(&self, method: &str, s: &str) -> Option<Vec<u8>> {
        let mapped = |f: fn(char) -> usize| s.chars().map(f).fold(0usize, usize::saturating_add);
        let size = match method {
            "lower" => mapped(|c| c.to_lowercase().map(char::len_utf8).sum()),
            "strip" | "lstrip" | "rstrip" => s.len(),
            _ => mapped(|c| {
                let up: usize = c.to_uppercase().map(char::len_utf8).sum();
                let down: usize = c.to_lowercase().map(char::len_utf8).sum();
                up.max(down)
            }),
        };
        if !self.budget.alloc(size) {
            return None;
        }
        let out = match method {
            "lower" => s.to_lowercase(),
            "upper" => s.to_uppercase(),
            "strip" => s.trim().to_owned(),
            "lstrip" => s.trim_start().to_owned(),
            "rstrip" => s.trim_end().to_owned(),
            "swapcase" => s
                .chars()
                .map(|c| {
                    if c.is_uppercase() {
                        c.to_lowercase().collect::<String>()
                    } else {
                        c.to_uppercase().collect()
                    }
                })
                .collect(),
            _ => {
                let mut cs = s.chars();
                match cs.next() {
                    Some(f) => f
                        .to_uppercase()
                        .chain(cs.flat_map(char::to_lowercase))
                        .collect(),
                    None => String::new(),
                }
            }
        };
        Some(out.into_bytes())
    }

    /// The strings of a sequence (`join`'s argument), within the budget: a name assigned once
    /// is followed like any value (and is unknown when already being followed).
    pub(super) fn string_items(&self, node: Node<'s>) -> Option<Vec<String>> {
        let node = self.unparenthesized(node)?;
        let _guard = self.budget.enter(node.id(), Mode::Items).ok()?;
        match node.kind() {
            "list" | "tuple" | "set" => {
                let mut c = node.walk();
                let items: Vec<Node<'s>> = node.named_children(&mut c).collect();
                let mut out = Vec::new();
                let mut total = 0usize;
                for i in items {
                    let s = self.string(i)?;
                    total = total.saturating_add(s.len());
                    if total > MAX_VALUE_BYTES {
                        self.budget.refuse(Spent::Bytes);
                        return None;
                    }
                    out.push(s);
                }
                Some(out)
            }
            "string" | "concatenated_string" => {
                let s = self.string(node)?;
                // One `String` per character: charge what they hold, not only their bytes.
                let held = s.chars().count().saturating_mul(size_of::<String>());
                if !self.budget.charge(held) {
                    return None;
                }
                Some(s.chars().map(String::from).collect())
            }
            "identifier" => {
                let v = self.value_of(self.sc.text(node))?;
                (v.id() != node.id()).then(|| self.string_items(v))?
            }
            // `"".join(chr(c) for c in [111, 115])` / `map(chr, [...])`
            "generator_expression" | "list_comprehension" => {
                let body = node.field(Field::Body)?;
                let mut c = node.walk();
                let clause = node
                    .named_children(&mut c)
                    .find(|n| n.kind() == "for_in_clause")?;
                let var = clause.field(Field::Left)?;
                let iter = clause.field(Field::Right)?;
                let is_chr = body.kind() == "call"
                    && body
                        .field(Field::Function)
                        .is_some_and(|f| self.sc.text(f) == "chr")
                    && self
                        .sc
                        .args(body)
                        .positional
                        .first()
                        .is_some_and(|a| self.sc.text(*a) == self.sc.text(var));
                if !is_chr {
                    return None;
                }
                self.ints_as_chars(iter)
            }
            "call" => {
                let func = node.field(Field::Function)?;
                let args = self.sc.args(node);
                if self.sc.text(func) == "map"
                    && args
                        .positional
                        .first()
                        .is_some_and(|f| self.sc.text(*f) == "chr")
                {
                    return self.ints_as_chars(*args.positional.get(1)?);
                }
                None
            }
            _ => None,
        }
    }

    pub(super) fn ints_as_chars(&self, node: Node<'s>) -> Option<Vec<String>> {
        if !matches!(node.kind(), "list" | "tuple") {
            return None;
        }
        let mut c = node.walk();
        let items: Vec<Node<'s>> = node.named_children(&mut c).collect();
        let held = items.len().saturating_mul(size_of::<String>() + 4);
        if items.len() > MAX_VALUE_BYTES || !self.budget.charge(held) {
            return None;
        }
        items
            .into_iter()
            .map(|i| self.int(i).and_then(char::from_u32).map(String::from))
            .collect()
    }

    pub(super) fn int(&self, node: Node<'s>) -> Option<u32> {
        if node.kind() != "integer" {
            return None;
        }
        let t = self.sc.text(node).replace('_', "");
        if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
            return u32::from_str_radix(h, 16).ok();
        }
        if let Some(o) = t.strip_prefix("0o").or_else(|| t.strip_prefix("0O")) {
            return u32::from_str_radix(o, 8).ok();
        }
        t.parse().ok()
    }

    /// The bytes of a string literal (escapes decoded; f-string interpolations that are
    /// themselves literal expressions filled in), charged to the budget part by part before
    /// each is added.
    pub(super) fn literal(&self, node: Node<'s>) -> Option<Vec<u8>> {
        let parts: Vec<Node<'s>> = if node.kind() == "concatenated_string" {
            let mut c = node.walk();
            node.named_children(&mut c).collect()
        } else if node.kind() == "string" {
            vec![node]
        } else {
            return None;
        };
        let mut out = Vec::new();
        let room = |out: &Vec<u8>, more: usize| {
            let fits = out
                .len()
                .checked_add(more)
                .is_some_and(|n| n <= MAX_VALUE_BYTES);
            if !fits {
                self.budget.refuse(Spent::Bytes);
            }
            fits && self.budget.charge(more)
        };
        for part in parts {
            if part.kind() != "string" {
                return None;
            }
            let mut raw = false;
            let mut cursor = part.walk();
            let children: Vec<Node<'s>> = part.children(&mut cursor).collect();
            for child in children {
                match child.kind() {
                    "string_start" => raw = self.sc.text(child).to_ascii_lowercase().contains('r'),
                    "string_content" => {
                        let text = self.sc.text(child);
                        // Unescaping never makes text longer.
                        if !room(&out, text.len()) {
                            return None;
                        }
                        if raw {
                            out.extend_from_slice(text.as_bytes());
                        } else {
                            unescape(text, &mut out);
                        }
                    }
                    "interpolation" => {
                        let expr = child.named_child(0)?;
                        let v = self.blob(expr).ok()??;
                        if !room(&out, v.bytes.len()) {
                            return None;
                        }
                        out.extend_from_slice(&v.bytes);
                    }
                    _ => {}
                }
            }
        }
        Some(out)
    }
}

/// Python's escape sequences in a non-raw literal, as bytes (`\x`, octal, `\n`..., `\u`).
pub(super) fn unescape(text: &str, out: &mut Vec<u8>) {
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            continue;
        }
        let Some(e) = chars.next() else {
            out.push(b'\\');
            break;
        };
        let simple = match e {
            'n' => Some(b'\n'),
            't' => Some(b'\t'),
            'r' => Some(b'\r'),
            '0'..='7' => {
                let mut v = e.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match chars.peek().and_then(|c| c.to_digit(8)) {
                        Some(d) => {
                            v = v * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                Some((v & 0xff) as u8)
            }
            'x' => {
                let h: String = chars.by_ref().take(2).collect();
                u8::from_str_radix(&h, 16).ok()
            }
            'u' | 'U' => {
                let n = if e == 'u' { 4 } else { 8 };
                let h: String = chars.by_ref().take(n).collect();
                if let Some(ch) = u32::from_str_radix(&h, 16).ok().and_then(char::from_u32) {
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                }
                None
            }
            '\\' => Some(b'\\'),
            '\'' => Some(b'\''),
            '"' => Some(b'"'),
            'a' => Some(7),
            'b' => Some(8),
            'f' => Some(12),
            'v' => Some(11),
            '\n' => None,
            other => {
                out.push(b'\\');
                let mut buf = [0u8; 4];
                out.extend_from_slice(other.encode_utf8(&mut buf).as_bytes());
                None
            }
        };
        if let Some(b) = simple {
            out.push(b);
        }
    }
}

/// Where a formatter writes: nowhere, to measure the output first, or its output.
pub(super) struct Sink<'o> {
    len: usize,
    /// Set when the output would pass one value's cap.
    too_large: bool,
    out: Option<&'o mut String>,
}

impl<'o> Sink<'o> {
    fn new(out: Option<&'o mut String>) -> Self {
        Sink {
            len: 0,
            too_large: false,
            out,
        }
    }

    /// Adds `s`; `None` when the length overflows or passes one value's cap.
    fn push(&mut self, s: &str) -> Option<()> {
        let Some(len) = self
            .len
            .checked_add(s.len())
            .filter(|n| *n <= MAX_VALUE_BYTES)
        else {
            self.too_large = true;
            return None;
        };
        self.len = len;
        if let Some(out) = self.out.as_deref_mut() {
            out.push_str(s);
        }
        Some(())
    }

    /// What a formatter measured: its length, or why there is none.
    fn size(self, formatted: Option<()>) -> Formatted {
        match formatted {
            Some(()) => Formatted::Len(self.len),
            None if self.too_large => Formatted::TooLarge,
            None => Formatted::Invalid,
        }
    }
}

/// The outcome of measuring (or writing) a formatted string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Formatted {
    /// Its length in bytes.
    Len(usize),
    /// Longer than one value may be.
    TooLarge,
    /// A format the evaluator does not compute, or a missing value.
    Invalid,
}

/// `fmt % values` for `%s`/`%r`/`%d` with string values and `%%`: the length of the result
/// (measured without allocating when `out` is `None`, written to `out` otherwise).
pub(super) fn percent_format(fmt: &str, values: &[String], out: Option<&mut String>) -> Formatted {
    let mut sink = Sink::new(out);
    let mut run = || {
        let mut it = values.iter();
        let mut chars = fmt.char_indices();
        let mut plain = 0usize;
        while let Some((at, c)) = chars.next() {
            if c != '%' {
                continue;
            }
            sink.push(fmt.get(plain..at)?)?;
            match chars.next()? {
                (_, '%') => sink.push("%")?,
                (_, 's' | 'r' | 'd' | 'i') => sink.push(it.next()?)?,
                _ => return None,
            }
            plain = chars.offset();
        }
        sink.push(fmt.get(plain..)?)
    };
    let formatted = run();
    sink.size(formatted)
}

/// `fmt.format(*values, **named)` for `{}`, `{0}`, `{name}` (no format specs) and `{{`/`}}`:
/// the length of the result (measured without allocating when `out` is `None`).
pub(super) fn brace_format(
    fmt: &str,
    values: &[String],
    named: &BTreeMap<&str, String>,
    out: Option<&mut String>,
) -> Formatted {
    let mut sink = Sink::new(out);
    let formatted = brace_format_into(fmt, values, named, &mut sink);
    sink.size(formatted)
}

pub(super) fn brace_format_into(
    fmt: &str,
    values: &[String],
    named: &BTreeMap<&str, String>,
    sink: &mut Sink<'_>,
) -> Option<()> {
    let mut auto = 0usize;
    let mut chars = fmt.chars().peekable();
    let mut buf = [0u8; 4];
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                sink.push("{")?;
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                sink.push("}")?;
            }
            '{' => {
                let mut field = String::new();
                for d in chars.by_ref() {
                    if d == '}' {
                        break;
                    }
                    field.push(d);
                }
                let value = if field.is_empty() {
                    auto += 1;
                    values.get(auto - 1)?
                } else if let Ok(i) = field.parse::<usize>() {
                    values.get(i)?
                } else {
                    named.get(field.as_str())?
                };
                sink.push(value)?;
            }
            _ => sink.push(c.encode_utf8(&mut buf))?,
        }
    }
    Some(())
}
