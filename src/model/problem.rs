//! The one problem record every parser returns (safetensors, pickle, zip, tar, compression,
//! numpy, ONNX, GGUF, HDF5, Keras, TFLite, TF, LFS pointers, configs): a stable kebab-case
//! sub-code, a precise message, where in the file it was seen and small key/value evidence.
//! Parsers describe; the inspector that called them maps a problem's `kind` and `code` to a rule
//! (ST001, PKL004, FMT003..FMT009, LFS001, SCAN004, ...) and the policy decides the action.

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;

/// What sort of fact a [`Problem`] reports, so the caller can map it to a rule without
/// matching on every sub-code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProblemKind {
    /// The content can run code or reach outside the repository when loaded (the format's
    /// FMT rule: keras-unsafe-layer, onnx-external-data, gguf-template-suspicious, tf-unsafe-op).
    Unsafe,
    /// The model needs an operator or domain implemented outside the standard runtime:
    /// not code by itself, but a plugin must be trusted to run it (warning level).
    CustomOp,
    /// The file breaks a rule of its format.
    Malformed,
    /// The header declares sizes, types or offsets that only a crafted file has and that
    /// out-of-bounds exploits against loaders rely on (overflowing products, unknown tensor
    /// types, bad alignment, data past the end): `format-exploit-shape`, deny by default.
    Exploit,
    /// A configured limit stopped the parser before it saw everything.
    LimitExceeded,
    /// Worth recording, not a judgement (e.g. a check that could not be completed).
    Note,
}

/// One thing an inspector wants the policy to know about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// Which family of rule this feeds.
    pub kind: ProblemKind,
    /// Short stable kebab-case sub-code, e.g. `path-escape`.
    pub code: &'static str,
    /// Lowercase, specific message carrying the data (names, offsets, values).
    pub message: String,
    /// Byte offset in the file where the problem was seen, when one applies.
    pub offset: Option<u64>,
    /// Container member the problem concerns (zip and tar parsers), when one applies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub member: Option<String>,
    /// Small named facts backing the message (sorted for stable output).
    pub evidence: BTreeMap<String, String>,
}

impl Problem {
    /// A problem without evidence.
    pub fn new(
        kind: ProblemKind,
        code: &'static str,
        message: impl Into<String>,
        offset: Option<u64>,
    ) -> Self {
        Self {
            kind,
            code,
            message: message.into(),
            offset,
            member: None,
            evidence: BTreeMap::new(),
        }
    }

    /// A [`ProblemKind::Malformed`] problem without location or evidence.
    pub fn malformed(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(ProblemKind::Malformed, code, message, None)
    }

    /// A [`ProblemKind::LimitExceeded`] problem without location or evidence.
    pub fn limit(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(ProblemKind::LimitExceeded, code, message, None)
    }

    /// A [`ProblemKind::Note`] problem without location or evidence.
    pub fn note(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(ProblemKind::Note, code, message, None)
    }

    /// Sets the container member concerned (builder style).
    #[must_use]
    pub fn member(mut self, name: &str) -> Self {
        self.member = Some(name.to_owned());
        self
    }

    /// Sets the byte offset concerned (builder style).
    #[must_use]
    pub fn at(mut self, offset: u64) -> Self {
        self.offset = Some(offset);
        self
    }

    /// Adds one evidence entry (builder style).
    #[must_use]
    pub fn with(mut self, key: &str, value: impl Into<String>) -> Self {
        self.evidence.insert(key.to_owned(), value.into());
        self
    }
}

/// Pushes `p` while `problems` holds fewer than `max`; the first problem past `max` becomes one
/// `too-many-problems` limit problem and the rest are dropped, so a hostile archive cannot grow
/// the list without bound. The container walkers (zip, tar, 7z) share it.
pub fn push_capped(problems: &mut Vec<Problem>, p: Problem, max: usize) {
    let len = problems.len();
    if len < max {
        problems.push(p);
    } else if len == max {
        problems.push(Problem::limit(
            "too-many-problems",
            format!("more than {max} problems; the rest are not listed"),
        ));
    }
}

impl Problem {
    /// An evidence value, if the problem carries one under `key`.
    pub fn detail(&self, key: &str) -> Option<&str> {
        self.evidence.get(key).map(String::as_str)
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for Problem {}

/// Escapes text for a message or evidence value and bounds it to `max_chars` characters, so
/// attacker-controlled strings cannot forge report lines or blow up output.
pub fn excerpt(text: &str, max_chars: usize) -> String {
    let mut out = String::new();
    for (n, c) in text.chars().enumerate() {
        if n >= max_chars {
            out.push_str("...");
            break;
        }
        out.extend(c.escape_debug());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpt_escapes_and_bounds() {
        assert_eq!(excerpt("a\nb\u{1b}", 10), "a\\nb\\u{1b}");
        assert_eq!(excerpt("abcdef", 3), "abc...");
    }
}
