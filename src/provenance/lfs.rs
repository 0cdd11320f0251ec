//! Git LFS pointers and the `.gitattributes` rules that route files through LFS.
//!
//! A repository cloned without `git lfs` holds, in place of each large file, a short text pointer
//! (spec v1: <https://github.com/git-lfs/git-lfs/blob/main/docs/spec.md>). The scanner must say
//! "only a pointer is here, the weights were not scanned" (LFS001) instead of passing a repository
//! whose real content it never saw. A text file that *starts* like a pointer but breaks the spec is
//! reported as a malformed pointer, not as unknown text: tools disagree on sloppy pointers, and an
//! attacker can use that disagreement to make a loader fetch something the scanner never resolved.
//!
//! The attribute half answers "should this path be in LFS?", so that a weight file which is
//! covered by a `filter=lfs` rule but committed as a full blob (or the reverse) can be reported.
//! Only the `filter` attribute is interpreted; everything is parsed from bytes, nothing is run.

use crate::model::problem::Problem;
use globset::{GlobBuilder, GlobMatcher};
use serde::Serialize;

/// The version URL written by every released Git LFS client.
pub const SPEC_V1: &str = "https://git-lfs.github.com/spec/v1";
/// The version URL of pre-release ("hawser") clients; Git LFS still reads it.
pub const SPEC_V1_HAWSER: &str = "https://hawser.github.com/spec/v1";

/// The prefix every pointer starts with; used to tell "malformed pointer" from "not a pointer".
const POINTER_MAGIC: &[u8] = b"version https://git-lfs";
/// The legacy prefix, also recognised as a pointer attempt.
const POINTER_MAGIC_HAWSER: &[u8] = b"version https://hawser";

/// Bounds for the parsers of this module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Largest pointer file. Git LFS itself never treats a blob of 1024 bytes or more as a pointer.
    pub max_pointer_bytes: usize,
    /// Most `ext-N-name` extension lines accepted in one pointer (N is a single digit).
    pub max_pointer_extensions: usize,
    /// Largest `.gitattributes` text interpreted.
    pub max_gitattributes_bytes: usize,
    /// Most `filter` rules kept from one `.gitattributes`.
    pub max_attr_rules: usize,
    /// Longest pattern compiled to a glob.
    pub max_pattern_len: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_pointer_bytes: 1023,
            max_pointer_extensions: 10,
            max_gitattributes_bytes: 1024 * 1024,
            max_attr_rules: 10_000,
            max_pattern_len: 4096,
        }
    }
}

/// A parsed, spec-conformant Git LFS pointer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Pointer {
    /// The version URL, exactly as written.
    pub version: String,
    /// The object id including its method, `sha256:<64 lowercase hex>`.
    pub oid: String,
    /// Size in bytes of the real content.
    pub size: u64,
    /// Extension lines (`ext-N-name` → `sha256:<hex>`), in file order.
    pub extensions: Vec<PointerExtension>,
}

impl Pointer {
    /// The 64-hex SHA-256 of the real content (the `oid` without its `sha256:` prefix).
    pub fn sha256(&self) -> &str {
        self.oid.strip_prefix("sha256:").unwrap_or(&self.oid)
    }
}

/// One `ext-N-name sha256:<hex>` line of a pointer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PointerExtension {
    /// The key, e.g. `ext-0-foo`.
    pub key: String,
    /// The value, `sha256:<64 lowercase hex>`.
    pub oid: String,
}

/// A broken pointer is a [`Malformed`](crate::model::problem::ProblemKind::Malformed) problem whose `code` says which rule broke,
/// kebab-case: `too-large`, `not-utf8`, `carriage-return`, `missing-final-newline`, `empty-line`,
/// `bad-line`, `bad-key`, `unknown-version`, `missing-version`, `missing-oid`, `missing-size`,
/// `duplicate-key`, `keys-not-sorted`, `unknown-key`, `bad-oid-method`, `bad-oid-length`,
/// `bad-oid-hex`, `bad-size`, `too-many-extensions`. Bytes that do not start like a pointer at
/// all are a [`Note`](crate::model::problem::ProblemKind::Note) with code [`NOT_A_POINTER`].
fn malformed(code: &'static str, message: String) -> Problem {
    Problem::malformed(code, message)
}

/// The code of the problem for bytes that do not start like a pointer.
pub const NOT_A_POINTER: &str = "not-a-pointer";

/// Does this head of a file look like an attempt at an LFS pointer?
///
/// True for both the current and the legacy version URL, so a broken pointer is reported as
/// such (LFS001 / `lfs-malformed`) rather than slipping through as ordinary text.
pub fn looks_like_pointer(head: &[u8]) -> bool {
    head.starts_with(POINTER_MAGIC) || head.starts_with(POINTER_MAGIC_HAWSER)
}

/// Parse a whole file as a v1 pointer with the default [`Limits`].
pub fn parse_pointer(bytes: &[u8]) -> Result<Pointer, Problem> {
    parse_pointer_with(bytes, &Limits::default())
}

/// Parse a whole file as a v1 pointer, strictly: anything the spec forbids is an error.
pub fn parse_pointer_with(bytes: &[u8], limits: &Limits) -> Result<Pointer, Problem> {
    if !looks_like_pointer(bytes) {
        return Err(Problem::note(
            NOT_A_POINTER,
            "file does not start with `version https://git-lfs`",
        ));
    }
    if bytes.len() > limits.max_pointer_bytes {
        return Err(malformed(
            "too-large",
            format!(
                "pointer is {} bytes, over the limit of {}",
                bytes.len(),
                limits.max_pointer_bytes
            ),
        ));
    }
    let text = std::str::from_utf8(bytes).map_err(|e| {
        malformed(
            "not-utf8",
            format!("invalid utf-8 at byte offset {}", e.valid_up_to()),
        )
    })?;
    // A CR makes `git lfs` and a naive line splitter disagree on the values (the oid would end in
    // `\r`), which is exactly the kind of parser differential worth refusing.
    if let Some(offset) = text.find('\r') {
        return Err(malformed(
            "carriage-return",
            format!("carriage return at byte offset {offset}; lines must end with a bare lf"),
        ));
    }
    let Some(body) = text.strip_suffix('\n') else {
        return Err(malformed(
            "missing-final-newline",
            "last line does not end with lf".to_owned(),
        ));
    };

    let mut version: Option<&str> = None;
    let mut oid: Option<&str> = None;
    let mut size: Option<u64> = None;
    let mut extensions = Vec::new();
    let mut previous_key: Option<&str> = None;

    for (index, line) in body.split('\n').enumerate() {
        let line_no = index.saturating_add(1);
        if line.is_empty() {
            return Err(malformed("empty-line", format!("line {line_no} is empty")));
        }
        let Some((key, value)) = line.split_once(' ') else {
            return Err(malformed(
                "bad-line",
                format!("line {line_no} has no space between key and value"),
            ));
        };
        if key.is_empty()
            || !key
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'-')
        {
            return Err(malformed(
                "bad-key",
                format!("line {line_no} key {key:?} uses characters outside [a-z0-9.-]"),
            ));
        }
        if line_no == 1 {
            if key != "version" {
                return Err(malformed(
                    "missing-version",
                    format!("first key is {key:?}, expected \"version\""),
                ));
            }
            if value != SPEC_V1 && value != SPEC_V1_HAWSER {
                return Err(malformed(
                    "unknown-version",
                    format!("version {value:?} is not a known v1 url"),
                ));
            }
            version = Some(value);
            continue;
        }
        if key == "version" {
            return Err(malformed(
                "duplicate-key",
                format!("line {line_no} repeats key \"version\""),
            ));
        }
        if let Some(prev) = previous_key {
            if key == prev {
                return Err(malformed(
                    "duplicate-key",
                    format!("line {line_no} repeats key {key:?}"),
                ));
            }
            if key < prev {
                return Err(malformed(
                    "keys-not-sorted",
                    format!("line {line_no} key {key:?} sorts before previous key {prev:?}"),
                ));
            }
        }
        previous_key = Some(key);
        match key {
            "oid" => {
                check_oid(value, line_no)?;
                oid = Some(value);
            }
            "size" => size = Some(parse_size(value, line_no)?),
            _ if is_extension_key(key) => {
                if extensions.len() >= limits.max_pointer_extensions {
                    return Err(malformed(
                        "too-many-extensions",
                        format!(
                            "more than {} extension lines",
                            limits.max_pointer_extensions
                        ),
                    ));
                }
                check_oid(value, line_no)?;
                extensions.push(PointerExtension {
                    key: key.to_owned(),
                    oid: value.to_owned(),
                });
            }
            _ => {
                return Err(malformed(
                    "unknown-key",
                    format!("line {line_no} has unknown key {key:?}"),
                ));
            }
        }
    }

    let Some(version) = version else {
        return Err(malformed("missing-version", "no version line".to_owned()));
    };
    let Some(oid) = oid else {
        return Err(malformed("missing-oid", "no oid line".to_owned()));
    };
    let Some(size) = size else {
        return Err(malformed("missing-size", "no size line".to_owned()));
    };
    Ok(Pointer {
        version: version.to_owned(),
        oid: oid.to_owned(),
        size,
        extensions,
    })
}

/// `ext-<digit>-<name>` with a non-empty name (key characters were checked by the caller).
fn is_extension_key(key: &str) -> bool {
    let Some(rest) = key.strip_prefix("ext-") else {
        return false;
    };
    let mut chars = rest.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_digit())
        && chars.next() == Some('-')
        && chars.next().is_some()
}

fn check_oid(value: &str, line_no: usize) -> Result<(), Problem> {
    let Some(hex) = value.strip_prefix("sha256:") else {
        return Err(malformed(
            "bad-oid-method",
            format!("line {line_no} oid {value:?} does not start with \"sha256:\""),
        ));
    };
    if hex.len() != 64 {
        return Err(malformed(
            "bad-oid-length",
            format!(
                "line {line_no} oid has {} hex digits, expected 64",
                hex.len()
            ),
        ));
    }
    // Uppercase hex is refused: the oid names a file under `.git/lfs/objects`, and two spellings
    // of one digest are two names.
    if let Some(pos) = hex
        .bytes()
        .position(|b| !(b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
    {
        return Err(malformed(
            "bad-oid-hex",
            format!("line {line_no} oid has a non-lowercase-hex character at digit {pos}"),
        ));
    }
    Ok(())
}

fn parse_size(value: &str, line_no: usize) -> Result<u64, Problem> {
    let bad = || {
        malformed(
            "bad-size",
            format!("line {line_no} size {value:?} is not a decimal u64 without leading zeros"),
        )
    };
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    if value.len() > 1 && value.starts_with('0') {
        return Err(bad());
    }
    value.parse::<u64>().map_err(|_| bad())
}

/// One `.gitattributes` line that says something about the `filter` attribute.
#[derive(Debug, Clone, Serialize)]
pub struct AttrRule {
    /// The pattern as written (unquoted), relative to the `.gitattributes` directory.
    pub pattern: String,
    /// `true` for `filter=lfs`; `false` for `-filter`, `!filter` or `filter=<other>`.
    pub lfs: bool,
    /// 1-based line number in the file.
    pub line: usize,
    #[serde(skip)]
    matcher: Option<GlobMatcher>,
}

impl PartialEq for AttrRule {
    fn eq(&self, other: &Self) -> bool {
        self.pattern == other.pattern && self.lfs == other.lfs && self.line == other.line
    }
}

impl Eq for AttrRule {}

impl AttrRule {
    /// Does this rule's pattern match `rel_path` (relative to the attributes file's directory)?
    pub fn matches(&self, rel_path: &str) -> bool {
        self.matcher.as_ref().is_some_and(|m| m.is_match(rel_path))
    }
}

/// Parse `.gitattributes` text into the rules that set or unset `filter`, with default limits.
pub fn parse_gitattributes(text: &str) -> Vec<AttrRule> {
    parse_gitattributes_with(text, &Limits::default())
}

/// Parse `.gitattributes` text into the rules that set or unset `filter`.
///
/// Follows gitattributes(5): `#` comments, blank lines, `[attr]` macro definitions (ignored: a
/// macro that sets `filter=lfs` is not expanded, which under-reports coverage), negative
/// patterns (`!pat`, which git refuses, ignored), C-style quoted patterns. Text past
/// `max_gitattributes_bytes` and rules past `max_attr_rules` are not read.
pub fn parse_gitattributes_with(text: &str, limits: &Limits) -> Vec<AttrRule> {
    let mut cut = text.len().min(limits.max_gitattributes_bytes);
    while !text.is_char_boundary(cut) {
        cut = cut.saturating_sub(1);
    }
    let text = text.get(..cut).unwrap_or("");
    let mut rules = Vec::new();
    for (index, raw_line) in text.lines().enumerate() {
        if rules.len() >= limits.max_attr_rules {
            break;
        }
        let line = raw_line.trim_start_matches([' ', '\t']);
        if line.is_empty() || line.starts_with('#') || line.starts_with("[attr]") {
            continue;
        }
        let Some((pattern, rest)) = split_pattern(line) else {
            continue;
        };
        if pattern.is_empty() || pattern.starts_with('!') || pattern.len() > limits.max_pattern_len
        {
            continue;
        }
        let mut lfs: Option<bool> = None;
        for attr in rest.split([' ', '\t', '\r']).filter(|a| !a.is_empty()) {
            match attr {
                "filter=lfs" => lfs = Some(true),
                "-filter" | "!filter" | "filter" => lfs = Some(false),
                _ if attr.starts_with("filter=") => lfs = Some(false),
                _ => {}
            }
        }
        let Some(lfs) = lfs else { continue };
        rules.push(AttrRule {
            matcher: compile_pattern(&pattern),
            pattern,
            lfs,
            line: index.saturating_add(1),
        });
    }
    rules
}

/// Split a line into its (unquoted) pattern and the attribute text after it.
fn split_pattern(line: &str) -> Option<(String, &str)> {
    if let Some(quoted) = line.strip_prefix('"') {
        let mut out = String::new();
        let mut chars = quoted.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => return Some((out, quoted.get(i.saturating_add(1)..).unwrap_or(""))),
                '\\' => match chars.next()?.1 {
                    'n' => out.push('\n'),
                    't' => out.push('\t'),
                    // Octal escapes (`\303\251`) are how git quotes non-ASCII names; decoding
                    // them byte-wise needs a buffer, so such a pattern is kept as a literal.
                    other => out.push(other),
                },
                _ => out.push(c),
            }
        }
        // Unterminated quote: git treats the line as invalid.
        return None;
    }
    let end = line.find([' ', '\t', '\r']).unwrap_or(line.len());
    Some((line.get(..end)?.to_owned(), line.get(end..).unwrap_or("")))
}

/// Turn a gitattributes pattern into a glob over paths relative to the attributes directory.
///
/// Returns `None` for patterns that can never match a file: `dir/` (trailing slash matches only
/// directories, and attributes do not apply recursively to a directory's contents).
fn compile_pattern(pattern: &str) -> Option<GlobMatcher> {
    if pattern.ends_with('/') {
        return None;
    }
    let anchored = pattern.trim_start_matches('/');
    let glob_text = if pattern.contains('/') {
        escape_for_globset(anchored)
    } else {
        // No slash: git matches the pattern against the basename at any depth.
        format!("**/{}", escape_for_globset(anchored))
    };
    GlobBuilder::new(&glob_text)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .ok()
        .map(|g| g.compile_matcher())
}

/// Git's wildmatch has no `{a,b}` alternation, and treats `**` that is not a whole path
/// component as a plain `*`; globset differs on both, so rewrite those spots.
fn escape_for_globset(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len().saturating_add(8));
    let chars: Vec<char> = pattern.chars().collect();
    let mut i = 0usize;
    while let Some(&c) = chars.get(i) {
        match c {
            '{' | '}' => {
                out.push('\\');
                out.push(c);
            }
            '\\' => {
                out.push('\\');
                if let Some(&next) = chars.get(i.saturating_add(1)) {
                    out.push(next);
                    i = i.saturating_add(1);
                }
            }
            '*' => {
                let mut run = 1usize;
                while chars.get(i.saturating_add(run)) == Some(&'*') {
                    run = run.saturating_add(1);
                }
                let before_ok = i == 0 || chars.get(i.wrapping_sub(1)) == Some(&'/');
                let after = chars.get(i.saturating_add(run));
                let after_ok = after.is_none() || after == Some(&'/');
                if run >= 2 && before_ok && after_ok {
                    out.push_str("**");
                } else {
                    out.push('*');
                }
                i = i.saturating_add(run);
                continue;
            }
            _ => out.push(c),
        }
        i = i.saturating_add(1);
    }
    out
}

/// Is `rel_path` (relative to the `.gitattributes` directory, `/`-separated) routed through LFS?
///
/// The last rule whose pattern matches decides, as in git.
pub fn lfs_covers(rules: &[AttrRule], rel_path: &str) -> bool {
    rules
        .iter()
        .rev()
        .find(|rule| rule.matches(rel_path))
        .is_some_and(|rule| rule.lfs)
}

/// The `.gitattributes` files of a tree, combined the way git does: a file deeper in the tree
/// overrides a shallower one, and within a file the last matching line wins.
#[derive(Debug, Clone, Default)]
pub struct AttrStack {
    files: Vec<(String, Vec<AttrRule>)>,
}

impl AttrStack {
    /// An empty stack (no path is covered).
    pub fn new() -> Self {
        Self::default()
    }

    /// Add the rules of the `.gitattributes` in directory `dir` (relative to the scan root,
    /// `""` for the root itself, no trailing slash).
    pub fn add(&mut self, dir: &str, rules: Vec<AttrRule>) {
        self.files.push((dir.trim_matches('/').to_owned(), rules));
        self.files
            .sort_by(|a, b| depth(&a.0).cmp(&depth(&b.0)).then_with(|| a.0.cmp(&b.0)));
    }

    /// Is `rel_path` (relative to the scan root) covered by `filter=lfs`?
    pub fn covers(&self, rel_path: &str) -> bool {
        let mut decision: Option<bool> = None;
        for (dir, rules) in &self.files {
            let inner = if dir.is_empty() {
                Some(rel_path)
            } else {
                rel_path
                    .strip_prefix(dir.as_str())
                    .and_then(|rest| rest.strip_prefix('/'))
            };
            let Some(inner) = inner else { continue };
            if let Some(rule) = rules.iter().rev().find(|r| r.matches(inner)) {
                decision = Some(rule.lfs);
            }
        }
        decision.unwrap_or(false)
    }
}

fn depth(dir: &str) -> usize {
    if dir.is_empty() {
        0
    } else {
        dir.matches('/').count().saturating_add(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::problem::ProblemKind;

    const OID: &str = "4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393";

    fn pointer_text(oid: &str, size: &str) -> String {
        format!("version {SPEC_V1}\noid sha256:{oid}\nsize {size}\n")
    }

    fn problem(bytes: &[u8]) -> &'static str {
        match parse_pointer(bytes) {
            Err(e) => {
                assert_eq!(e.kind, ProblemKind::Malformed, "{e}");
                e.code
            }
            Ok(p) => panic!("parsed {p:?}"),
        }
    }

    #[test]
    fn parses_valid_pointer() {
        let p = parse_pointer(pointer_text(OID, "12345").as_bytes()).unwrap();
        assert_eq!(p.version, SPEC_V1);
        assert_eq!(p.oid, format!("sha256:{OID}"));
        assert_eq!(p.sha256(), OID);
        assert_eq!(p.size, 12345);
        assert!(p.extensions.is_empty());
    }

    #[test]
    fn parses_legacy_hawser_pointer() {
        let text = format!("version {SPEC_V1_HAWSER}\noid sha256:{OID}\nsize 0\n");
        assert!(looks_like_pointer(text.as_bytes()));
        let p = parse_pointer(text.as_bytes()).unwrap();
        assert_eq!(p.version, SPEC_V1_HAWSER);
        assert_eq!(p.size, 0);
    }

    #[test]
    fn parses_extension_lines() {
        let text = format!(
            "version {SPEC_V1}\next-0-foo sha256:{OID}\next-1-bar sha256:{OID}\noid sha256:{OID}\nsize 7\n"
        );
        let p = parse_pointer(text.as_bytes()).unwrap();
        assert_eq!(p.extensions.len(), 2);
        assert_eq!(p.extensions[0].key, "ext-0-foo");
    }

    #[test]
    fn looks_like_pointer_only_for_version_prefix() {
        assert!(looks_like_pointer(
            b"version https://git-lfs.github.com/spec/v2\n"
        ));
        assert!(!looks_like_pointer(b"\x80\x02ctorch"));
        assert!(!looks_like_pointer(b"oid sha256:"));
        assert!(!looks_like_pointer(b""));
    }

    #[test]
    fn rejects_non_pointer_with_not_pointer_code() {
        let e = parse_pointer(b"hello world\n").unwrap_err();
        assert_eq!(e.kind, ProblemKind::Note);
        assert_eq!(e.code, NOT_A_POINTER);
    }

    #[test]
    fn rejects_bad_oid_length() {
        assert_eq!(
            problem(pointer_text(&OID[..63], "1").as_bytes()),
            "bad-oid-length"
        );
        let long = format!("{OID}0");
        assert_eq!(
            problem(pointer_text(&long, "1").as_bytes()),
            "bad-oid-length"
        );
    }

    #[test]
    fn rejects_uppercase_oid_hex() {
        let upper = OID.to_ascii_uppercase();
        assert_eq!(problem(pointer_text(&upper, "1").as_bytes()), "bad-oid-hex");
    }

    #[test]
    fn rejects_bad_oid_method() {
        let text = format!("version {SPEC_V1}\noid sha1:{OID}\nsize 1\n");
        assert_eq!(problem(text.as_bytes()), "bad-oid-method");
    }

    #[test]
    fn rejects_missing_size() {
        let text = format!("version {SPEC_V1}\noid sha256:{OID}\n");
        assert_eq!(problem(text.as_bytes()), "missing-size");
    }

    #[test]
    fn rejects_missing_oid() {
        let text = format!("version {SPEC_V1}\nsize 1\n");
        assert_eq!(problem(text.as_bytes()), "missing-oid");
    }

    #[test]
    fn rejects_crlf_line_endings() {
        let text = pointer_text(OID, "1").replace('\n', "\r\n");
        assert_eq!(problem(text.as_bytes()), "carriage-return");
    }

    #[test]
    fn rejects_keys_in_wrong_order() {
        let text = format!("version {SPEC_V1}\nsize 1\noid sha256:{OID}\n");
        assert_eq!(problem(text.as_bytes()), "keys-not-sorted");
    }

    #[test]
    fn rejects_version_not_first() {
        let text = format!("version {SPEC_V1}\nversion {SPEC_V1}\noid sha256:{OID}\nsize 1\n");
        assert_eq!(problem(text.as_bytes()), "duplicate-key");
    }

    #[test]
    fn rejects_duplicate_key() {
        let text = format!("version {SPEC_V1}\noid sha256:{OID}\nsize 1\nsize 2\n");
        assert_eq!(problem(text.as_bytes()), "duplicate-key");
    }

    #[test]
    fn rejects_oversized_pointer() {
        let mut text = pointer_text(OID, "1");
        text.push_str(&"x".repeat(1100));
        assert_eq!(problem(text.as_bytes()), "too-large");
    }

    #[test]
    fn rejects_unknown_version() {
        let text =
            format!("version https://git-lfs.github.com/spec/v2\noid sha256:{OID}\nsize 1\n");
        assert_eq!(problem(text.as_bytes()), "unknown-version");
    }

    #[test]
    fn rejects_non_utf8() {
        let mut bytes = pointer_text(OID, "1").into_bytes();
        bytes.insert(bytes.len() - 1, 0xff);
        assert_eq!(problem(&bytes), "not-utf8");
    }

    #[test]
    fn rejects_missing_final_newline() {
        let text = pointer_text(OID, "1");
        assert_eq!(problem(text.trim_end().as_bytes()), "missing-final-newline");
    }

    #[test]
    fn rejects_empty_line() {
        let text = format!("version {SPEC_V1}\n\noid sha256:{OID}\nsize 1\n");
        assert_eq!(problem(text.as_bytes()), "empty-line");
    }

    #[test]
    fn rejects_line_without_space() {
        let text = format!("version {SPEC_V1}\noid\nsize 1\n");
        assert_eq!(problem(text.as_bytes()), "bad-line");
    }

    #[test]
    fn rejects_bad_key_characters() {
        let text = format!("version {SPEC_V1}\nOid sha256:{OID}\nsize 1\n");
        assert_eq!(problem(text.as_bytes()), "bad-key");
    }

    #[test]
    fn rejects_unknown_key() {
        let text = format!("version {SPEC_V1}\noid sha256:{OID}\nsize 1\nzzz 1\n");
        assert_eq!(problem(text.as_bytes()), "unknown-key");
    }

    #[test]
    fn rejects_bad_size() {
        for size in ["-1", "1.5", "", "012", "99999999999999999999999", " 1"] {
            assert_eq!(
                problem(pointer_text(OID, size).as_bytes()),
                "bad-size",
                "{size:?}"
            );
        }
    }

    #[test]
    fn rejects_too_many_extensions() {
        let mut text = format!("version {SPEC_V1}\n");
        for n in 0..=9 {
            text.push_str(&format!("ext-{n}-e sha256:{OID}\n"));
        }
        text.push_str(&format!("oid sha256:{OID}\nsize 1\n"));
        let limits = Limits {
            max_pointer_extensions: 3,
            ..Limits::default()
        };
        let e = parse_pointer_with(text.as_bytes(), &limits).unwrap_err();
        assert_eq!(e.code, "too-many-extensions");
    }

    proptest::proptest! {
        #[test]
        fn parse_pointer_never_panics(tail in proptest::collection::vec(proptest::num::u8::ANY, 0..1200)) {
            let mut bytes = b"version https://git-lfs.github.com/spec/v1\n".to_vec();
            bytes.extend_from_slice(&tail);
            let _ = parse_pointer(&bytes);
        }

        #[test]
        fn parse_gitattributes_never_panics(text in "\\PC{0,300}") {
            let rules = parse_gitattributes(&text);
            let _ = lfs_covers(&rules, "a/b/c.bin");
        }
    }

    fn covers(text: &str, path: &str) -> bool {
        lfs_covers(&parse_gitattributes(text), path)
    }

    #[test]
    fn extension_pattern_matches_at_any_depth() {
        let text = "*.safetensors filter=lfs diff=lfs merge=lfs -text\n";
        assert!(covers(text, "model.safetensors"));
        assert!(covers(text, "a/b/model.safetensors"));
        assert!(!covers(text, "model.safetensors.json"));
    }

    #[test]
    fn typical_hf_line_sets_lfs() {
        let rules = parse_gitattributes("*.bin filter=lfs diff=lfs merge=lfs -text\n");
        assert_eq!(rules.len(), 1);
        assert!(rules[0].lfs);
        assert_eq!(rules[0].pattern, "*.bin");
        assert!(lfs_covers(&rules, "pytorch_model.bin"));
    }

    #[test]
    fn slash_pattern_is_anchored() {
        let text = "model/*.pt filter=lfs\n";
        assert!(covers(text, "model/a.pt"));
        assert!(!covers(text, "x/model/a.pt"));
        assert!(!covers(text, "model/sub/a.pt"));
        assert!(covers("/top.bin filter=lfs\n", "top.bin"));
        assert!(!covers("/top.bin filter=lfs\n", "a/top.bin"));
    }

    #[test]
    fn double_star_prefix_matches_any_depth() {
        let text = "**/*.gguf filter=lfs\n";
        assert!(covers(text, "q.gguf"));
        assert!(covers(text, "a/b/q.gguf"));
    }

    #[test]
    fn double_star_suffix_matches_everything_inside() {
        let text = "weights/** filter=lfs\n";
        assert!(covers(text, "weights/a"));
        assert!(covers(text, "weights/a/b.bin"));
        assert!(!covers(text, "other/weights/a"));
        assert!(!covers(text, "weights"));
    }

    #[test]
    fn last_matching_line_wins() {
        let text = "*.bin filter=lfs\nsmall.bin -filter\n";
        assert!(covers(text, "big.bin"));
        assert!(!covers(text, "small.bin"));
        assert!(!covers("*.bin filter=lfs\n*.bin !filter\n", "x.bin"));
        assert!(!covers("*.bin filter=lfs\n*.bin filter=other\n", "x.bin"));
        assert!(covers("*.bin -filter\n*.bin filter=lfs\n", "x.bin"));
    }

    #[test]
    fn ignores_comments_macros_and_negative_patterns() {
        let text = "# *.bin filter=lfs\n[attr]big filter=lfs\n!*.pt filter=lfs\n  \n*.txt text\n";
        assert!(parse_gitattributes(text).is_empty());
    }

    #[test]
    fn quoted_pattern_with_space() {
        let text = "\"my model.bin\" filter=lfs\n";
        let rules = parse_gitattributes(text);
        assert_eq!(rules[0].pattern, "my model.bin");
        assert!(lfs_covers(&rules, "dir/my model.bin"));
        assert!(parse_gitattributes("\"open.bin filter=lfs\n").is_empty());
    }

    #[test]
    fn trailing_slash_pattern_matches_no_file() {
        assert!(!covers("weights/ filter=lfs\n", "weights/a.bin"));
    }

    #[test]
    fn braces_are_literal_as_in_git() {
        assert!(!covers("*.{bin,pt} filter=lfs\n", "a.bin"));
        assert!(covers("*.{bin,pt} filter=lfs\n", "a.{bin,pt}"));
    }

    #[test]
    fn inner_double_star_acts_as_single_star() {
        assert!(covers("a**b filter=lfs\n", "axxb"));
        assert!(!covers("x/a**b filter=lfs\n", "x/a/b"));
    }

    #[test]
    fn question_mark_and_classes() {
        assert!(covers("model-?.bin filter=lfs\n", "model-1.bin"));
        assert!(covers("model-[0-9].bin filter=lfs\n", "model-7.bin"));
        assert!(!covers("model-[!0-9].bin filter=lfs\n", "model-7.bin"));
    }

    #[test]
    fn crlf_gitattributes_is_read() {
        assert!(covers("*.bin filter=lfs\r\n", "a.bin"));
    }

    #[test]
    fn stack_deeper_file_overrides() {
        let mut stack = AttrStack::new();
        stack.add("", parse_gitattributes("*.bin filter=lfs\n"));
        stack.add(
            "sub",
            parse_gitattributes("*.bin -filter\n/x/*.pt filter=lfs\n"),
        );
        assert!(stack.covers("a.bin"));
        assert!(stack.covers("other/a.bin"));
        assert!(!stack.covers("sub/a.bin"));
        assert!(stack.covers("sub/x/m.pt"));
        assert!(!stack.covers("x/m.pt"));
    }
}
