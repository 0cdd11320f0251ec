//! Policy files: TOML text -> `RawPolicy` (shape, with spans) -> validated [`Policy`].
//!
//! Like cargo-deny's `deny.toml`, parsing is strict and reports every problem at once, each with
//! `file:line:col`, a caret excerpt and a "did you mean" hint where a close name exists. A policy
//! is a security control: a typo that silently turned a rule off (`PKL01 = "deny"`), a level that
//! quietly fell back to a default, or an exception without a reason would weaken the gate without
//! anyone noticing, so all of them are hard errors.
//!
//! The document is read with `toml::de::DeTable`, which keeps a span on every key and value, and
//! walked by hand. serde's `deny_unknown_fields` would stop at the first unknown key; the walk
//! applies the same rule (only known keys, exact types) but collects every problem.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

pub use super::diag::Problem;
use super::diag::{Diag, Key, list, render_problems, suggest, type_name};
use super::types::{
    CardOptions, Exception, MAX_POLICY_BYTES, POLICY_VERSION, PRESETS, PickleOptions, Policy,
    PolicySource, SafetensorsOptions, ScanOptions, SigningIdentity, SigningOptions, SourceOptions,
    key_fingerprint, text_digest,
};
use crate::model::finding::Action;
use crate::model::grading::{self, Grading};
use crate::model::limits::{LIMITS, Limits, limit_spec};
use crate::model::rules::{RuleId, Severity};

/// Why a policy could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// The file could not be read (missing, permissions, not UTF-8).
    #[error("error: cannot read policy `{}`: {cause}", path.display())]
    Read {
        /// The policy path.
        path: PathBuf,
        /// The I/O error.
        cause: std::io::Error,
    },
    /// The text has problems; all of them are listed.
    #[error("{}", render_problems(origin, problems))]
    Invalid {
        /// The file name (or `built-in:NAME`) used in the rendered positions.
        origin: String,
        /// Every problem, sorted by position.
        problems: Vec<Problem>,
    },
}

impl PolicyError {
    /// Every problem found (empty when the file could not be read at all).
    pub fn problems(&self) -> &[Problem] {
        match self {
            PolicyError::Read { .. } => &[],
            PolicyError::Invalid { problems, .. } => problems,
        }
    }
}

/// Reads and validates the policy file at `path`.
/// The file is read once, at most [`MAX_POLICY_BYTES`]; the policy's digest is taken
/// from those same bytes, so `--policy /dev/stdin` reports the digest of what it parsed.
pub fn load_file(path: &Path) -> Result<Policy, PolicyError> {
    use std::io::Read;
    let read_err = |cause| PolicyError::Read {
        path: path.to_path_buf(),
        cause,
    };
    let file = std::fs::File::open(path).map_err(read_err)?;
    let mut bytes = Vec::new();
    file.take(MAX_POLICY_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(read_err)?;
    if bytes.len() as u64 > MAX_POLICY_BYTES {
        return Err(read_err(std::io::Error::other(format!(
            "larger than any policy needs ({} bytes at most)",
            MAX_POLICY_BYTES
        ))));
    }
    let text =
        String::from_utf8(bytes).map_err(|_| read_err(std::io::Error::other("not UTF-8 text")))?;
    parse(&text, PolicySource::File(path.to_path_buf()))
}

/// Parses and validates policy text. Rules the text does not list keep the built-in default
/// level and grading (the `[rules]` table of `policies/default.toml`).
pub fn parse(text: &str, source: PolicySource) -> Result<Policy, PolicyError> {
    parse_with(text, source, default_levels(), default_gradings())
}

/// [`parse`] with explicit levels for unlisted rules, each graded as the registry declares for
/// it (used to read `default.toml` itself).
pub(super) fn parse_with_base(
    text: &str,
    source: PolicySource,
    base_levels: &BTreeMap<RuleId, Action>,
) -> Result<Policy, PolicyError> {
    let base_gradings: BTreeMap<RuleId, Grading> = base_levels
        .iter()
        .map(|(r, l)| (*r, grading::declared(*r, *l)))
        .collect();
    parse_with(text, source, base_levels, &base_gradings)
}

/// The level and grading of every rule when a policy does not set it: the `[rules]` table of
/// `policies/default.toml`, so the shipped file and the fallback cannot drift apart. A rule
/// missing from it (a test forbids that) falls back to deny, failing closed.
static DEFAULTS: LazyLock<(BTreeMap<RuleId, Action>, BTreeMap<RuleId, Grading>)> =
    LazyLock::new(|| {
        let deny_all: BTreeMap<RuleId, Action> =
            RuleId::ALL.iter().map(|r| (*r, Action::Deny)).collect();
        let parsed = PRESETS.first().and_then(|(name, text)| {
            parse_with_base(text, PolicySource::Builtin(name), &deny_all).ok()
        });
        match parsed {
            Some(p) => (p.levels, p.gradings),
            None => {
                let deny = Grading::uniform(Action::Deny);
                let gradings = RuleId::ALL.iter().map(|r| (*r, deny)).collect();
                (deny_all, gradings)
            }
        }
    });

/// The level of every rule when a policy does not set it (see `DEFAULTS`).
pub fn default_levels() -> &'static BTreeMap<RuleId, Action> {
    &DEFAULTS.0
}

/// The grading of every rule when a policy does not set it (see `DEFAULTS`).
pub fn default_gradings() -> &'static BTreeMap<RuleId, Grading> {
    &DEFAULTS.1
}

/// An embedded preset (`default`, `strict`, `audit`).
pub fn builtin(preset: &str) -> Option<Policy> {
    let (name, text) = PRESETS.iter().find(|(n, _)| *n == preset)?;
    parse(text, PolicySource::Builtin(name)).ok()
}

/// [`parse`] with explicit levels and gradings for unlisted rules.
fn parse_with(
    text: &str,
    source: PolicySource,
    base_levels: &BTreeMap<RuleId, Action>,
    base_gradings: &BTreeMap<RuleId, Grading>,
) -> Result<Policy, PolicyError> {
    let origin = source.to_string();
    let mut d = Diag {
        text,
        problems: Vec::new(),
    };
    let root = match DeTable::parse(text) {
        Ok(root) => root,
        Err(e) => {
            let message = e.message().trim().replace('\n', "; ");
            d.error(
                e.span().unwrap_or(0..0),
                "syntax",
                format!("invalid toml: {message}"),
                None,
            );
            return Err(PolicyError::Invalid {
                origin,
                problems: d.problems,
            });
        }
    };
    let raw = RawPolicy::walk(&mut d, root.get_ref());
    let mut policy = validate(&mut d, raw, source, (base_levels, base_gradings));
    policy.sha256 = text_digest(text);
    if d.problems.is_empty() {
        return Ok(policy);
    }
    d.problems.sort_by_key(|p| (p.line, p.column));
    Err(PolicyError::Invalid {
        origin,
        problems: d.problems,
    })
}

const TOP_KEYS: &[&str] = &[
    "version",
    "rules",
    "pickle",
    "safetensors",
    "card",
    "source",
    "scan",
    "limits",
    "exceptions",
    "signing",
];
const PICKLE_KEYS: &[&str] = &["safe_globals", "dangerous_globals"];
const SAFETENSORS_KEYS: &[&str] = &["max_header_bytes", "check_values"];
const CARD_KEYS: &[&str] = &["required_fields", "allowed_licenses"];
const SOURCE_KEYS: &[&str] = &["pinned_revisions"];
const SCAN_KEYS: &[&str] = &["exclude"];
const SIGNING_KEYS: &[&str] = &[
    "require",
    "signature",
    "keys",
    "certificate_chain",
    "identities",
    "trust_root",
];
const IDENTITY_KEYS: &[&str] = &["subject", "subject_regex", "issuer"];
const EXCEPTION_KEYS: &[&str] = &["rule", "path", "sha256", "reason", "expires"];
const LEVELS: &[&str] = &["deny", "warn", "allow"];
/// Keys of a rule's grading table (`SRC006 = { deny_from = "medium" }`).
const GRADING_KEYS: &[&str] = &["deny_from", "allow_below"];
const SEVERITIES: &[&str] = &["info", "low", "medium", "high", "critical"];
/// Revision forms `[source] pinned_revisions` accepts.
pub const REVISION_FORMS: &[&str] = &["commit", "tag", "short-sha"];

type Value<'i> = Spanned<DeValue<'i>>;

/// The policy file's shape: known keys with the right types, every value with its span, nothing
/// validated yet.
#[derive(Debug, Default)]
struct RawPolicy {
    /// `None` with `version_seen` means present but of the wrong type (already reported).
    version: Option<Spanned<i64>>,
    version_seen: bool,
    rules: Vec<(Spanned<String>, RawSetting)>,
    pickle: RawPickle,
    safetensors: RawSafetensors,
    card: RawCard,
    source: RawSource,
    scan: RawScan,
    limits: Vec<(Spanned<String>, Spanned<i64>)>,
    exceptions: Vec<RawException>,
    signing: RawSigning,
}

/// Whether a `subject_regex` compiles (with the size cap the verifier applies); reports it if not.
fn valid_regex(d: &mut Diag<'_>, at: &Spanned<String>, pattern: &str) -> bool {
    match regex::RegexBuilder::new(pattern)
        .size_limit(1 << 20)
        .build()
    {
        Ok(_) => true,
        Err(e) => {
            let first = e.to_string();
            let first = first.lines().last().unwrap_or_default().trim().to_string();
            d.error(
                at.span(),
                "bad-regex",
                format!("`subject_regex` is not a valid regular expression: {first}"),
                Some(
                    "it must match the whole SAN, e.g. subject_regex = 'https://github\\.com/org/repo/\\.github/workflows/release\\.yml@refs/tags/v.*'"
                        .into(),
                ),
            );
            false
        }
    }
}

/// One `[rules]` value: a level, or a grading table.
#[derive(Debug)]
enum RawSetting {
    /// `PKL001 = "deny"`.
    Level(Spanned<String>),
    /// `SRC006 = { deny_from = "medium", allow_below = "low" }` (or a `[rules.SRC006]` table).
    Graded(RawGrading),
}

/// A rule's grading table, its severities not yet checked.
#[derive(Debug)]
struct RawGrading {
    /// The value's span, for problems about the table as a whole.
    span: Range<usize>,
    /// Whether the table has no keys at all (a wrong key is reported as such, not as empty).
    empty: bool,
    deny_from: Option<Spanned<String>>,
    allow_below: Option<Spanned<String>>,
}

/// One `identities` entry, with its span for "missing key" problems.
#[derive(Debug)]
struct RawIdentity {
    span: Range<usize>,
    subject: Option<Spanned<String>>,
    subject_regex: Option<Spanned<String>>,
    issuer: Option<Spanned<String>>,
}

#[derive(Debug, Default)]
struct RawSigning {
    require: Option<bool>,
    signature: Option<Spanned<String>>,
    keys: Vec<Spanned<String>>,
    certificate_chain: Vec<Spanned<String>>,
    identities: Vec<RawIdentity>,
    identities_span: Option<Range<usize>>,
    trust_root: Option<Spanned<String>>,
}

#[derive(Debug, Default)]
struct RawPickle {
    safe_globals: Vec<Spanned<String>>,
    dangerous_globals: Vec<Spanned<String>>,
}

#[derive(Debug, Default)]
struct RawSafetensors {
    max_header_bytes: Option<Spanned<i64>>,
    check_values: Option<bool>,
}

#[derive(Debug, Default)]
struct RawCard {
    required_fields: Option<Vec<Spanned<String>>>,
    allowed_licenses: Option<Vec<Spanned<String>>>,
}

#[derive(Debug, Default)]
struct RawSource {
    pinned_revisions: Vec<Spanned<String>>,
}

#[derive(Debug, Default)]
struct RawScan {
    exclude: Vec<Spanned<String>>,
}

#[derive(Debug)]
struct RawException {
    /// The `[[exceptions]]` header (or inline table), for "missing key" problems.
    header: Range<usize>,
    rule: Option<Spanned<String>>,
    path: Option<Spanned<String>>,
    sha256: Option<Spanned<String>>,
    reason: Option<Spanned<String>>,
    expires: Option<Spanned<RawDate>>,
}

#[derive(Debug)]
enum RawDate {
    Toml(toml::value::Datetime),
    Text(String),
}

fn owned_key(key: &Key<'_>) -> Spanned<String> {
    Spanned::new(key.span(), key.get_ref().to_string())
}

fn table<'a, 'i>(d: &mut Diag<'_>, name: &str, value: &'a Value<'i>) -> Option<&'a DeTable<'i>> {
    match value.get_ref() {
        DeValue::Table(t) => Some(t),
        _ => {
            d.wrong_type(name, value, "a table");
            None
        }
    }
}

fn string(d: &mut Diag<'_>, name: &str, value: &Value<'_>) -> Option<Spanned<String>> {
    match value.get_ref() {
        DeValue::String(s) => Some(Spanned::new(value.span(), s.to_string())),
        _ => {
            d.wrong_type(name, value, "a string");
            None
        }
    }
}

fn integer(d: &mut Diag<'_>, name: &str, value: &Value<'_>) -> Option<Spanned<i64>> {
    let DeValue::Integer(int) = value.get_ref() else {
        d.wrong_type(name, value, "an integer");
        return None;
    };
    match i64::from_str_radix(int.as_str(), int.radix()) {
        Ok(n) => Some(Spanned::new(value.span(), n)),
        Err(_) => {
            d.error(
                value.span(),
                "out-of-range",
                format!("`{name}` is too large for an integer"),
                None,
            );
            None
        }
    }
}

fn boolean(d: &mut Diag<'_>, name: &str, value: &Value<'_>) -> Option<bool> {
    match value.get_ref() {
        DeValue::Boolean(b) => Some(*b),
        _ => {
            d.wrong_type(name, value, "a boolean (`true` or `false`)");
            None
        }
    }
}

/// An array of strings; wrong elements are reported and skipped.
fn strings(d: &mut Diag<'_>, name: &str, value: &Value<'_>) -> Option<Vec<Spanned<String>>> {
    let DeValue::Array(items) = value.get_ref() else {
        d.wrong_type(name, value, "an array of strings");
        return None;
    };
    let mut out = Vec::new();
    for item in items.iter() {
        match item.get_ref() {
            DeValue::String(s) => out.push(Spanned::new(item.span(), s.to_string())),
            other => d.error(
                item.span(),
                "wrong-type",
                format!(
                    "entries of `{name}` must be strings, found {}",
                    type_name(other)
                ),
                None,
            ),
        }
    }
    Some(out)
}

/// A rule's grading table: `deny_from` and `allow_below`, each a severity name (checked later).
fn walk_grading(
    d: &mut Diag<'_>,
    rule: &str,
    span: Range<usize>,
    table: &DeTable<'_>,
) -> RawSetting {
    let (mut deny_from, mut allow_below) = (None, None);
    for (key, value) in table.iter() {
        let name: &str = key.get_ref();
        match name {
            "deny_from" | "allow_below" => {
                let DeValue::String(s) = value.get_ref() else {
                    d.wrong_type(name, value, "a severity (`\"medium\"`)");
                    continue;
                };
                let s = Spanned::new(value.span(), s.to_string());
                if name == "deny_from" {
                    deny_from = Some(s);
                } else {
                    allow_below = Some(s);
                }
            }
            _ => d.unknown_key(
                key,
                &format!("in the grading of `{rule}`"),
                "a grading table",
                GRADING_KEYS,
            ),
        }
    }
    RawSetting::Graded(RawGrading {
        span,
        empty: table.is_empty(),
        deny_from,
        allow_below,
    })
}

impl RawPolicy {
    fn walk(d: &mut Diag<'_>, root: &DeTable<'_>) -> RawPolicy {
        let mut raw = RawPolicy::default();
        for (key, value) in root.iter() {
            let name: &str = key.get_ref();
            match name {
                "version" => {
                    raw.version_seen = true;
                    raw.version = integer(d, name, value);
                }
                "rules" => raw.walk_rules(d, value),
                "pickle" => raw.walk_pickle(d, value),
                "safetensors" => raw.walk_safetensors(d, value),
                "card" => raw.walk_card(d, value),
                "source" => raw.walk_source(d, value),
                "scan" => raw.walk_scan(d, value),
                "limits" => raw.walk_limits(d, value),
                "exceptions" => raw.walk_exceptions(d, value),
                "signing" => raw.walk_signing(d, value),
                _ => d.unknown_key(key, "at the top level", "the top level", TOP_KEYS),
            }
        }
        raw
    }

    fn walk_rules(&mut self, d: &mut Diag<'_>, value: &Value<'_>) {
        let Some(t) = table(d, "rules", value) else {
            return;
        };
        for (key, value) in t.iter() {
            let name: &str = key.get_ref();
            let setting = match value.get_ref() {
                DeValue::String(s) => {
                    Some(RawSetting::Level(Spanned::new(value.span(), s.to_string())))
                }
                DeValue::Table(t) => Some(walk_grading(d, name, value.span(), t)),
                _ => {
                    d.wrong_type(
                        name,
                        value,
                        "a level (`\"deny\"`, `\"warn\"`, `\"allow\"`) or a grading table \
                         (`{ deny_from = \"medium\" }`)",
                    );
                    None
                }
            };
            if let Some(setting) = setting {
                self.rules.push((owned_key(key), setting));
            }
        }
        // Source order, so "set twice" points at the second occurrence.
        self.rules.sort_by_key(|(k, _)| k.span().start);
    }

    fn walk_pickle(&mut self, d: &mut Diag<'_>, value: &Value<'_>) {
        let Some(t) = table(d, "pickle", value) else {
            return;
        };
        for (key, value) in t.iter() {
            let name: &str = key.get_ref();
            match name {
                "safe_globals" => {
                    self.pickle.safe_globals = strings(d, name, value).unwrap_or_default()
                }
                "dangerous_globals" => {
                    self.pickle.dangerous_globals = strings(d, name, value).unwrap_or_default();
                }
                _ => d.unknown_key(key, "in [pickle]", "[pickle]", PICKLE_KEYS),
            }
        }
    }

    fn walk_safetensors(&mut self, d: &mut Diag<'_>, value: &Value<'_>) {
        let Some(t) = table(d, "safetensors", value) else {
            return;
        };
        for (key, value) in t.iter() {
            let name: &str = key.get_ref();
            match name {
                "max_header_bytes" => self.safetensors.max_header_bytes = integer(d, name, value),
                "check_values" => self.safetensors.check_values = boolean(d, name, value),
                _ => d.unknown_key(key, "in [safetensors]", "[safetensors]", SAFETENSORS_KEYS),
            }
        }
    }

    fn walk_card(&mut self, d: &mut Diag<'_>, value: &Value<'_>) {
        let Some(t) = table(d, "card", value) else {
            return;
        };
        for (key, value) in t.iter() {
            let name: &str = key.get_ref();
            match name {
                "required_fields" => self.card.required_fields = strings(d, name, value),
                "allowed_licenses" => self.card.allowed_licenses = strings(d, name, value),
                _ => d.unknown_key(key, "in [card]", "[card]", CARD_KEYS),
            }
        }
    }

    fn walk_source(&mut self, d: &mut Diag<'_>, value: &Value<'_>) {
        let Some(t) = table(d, "source", value) else {
            return;
        };
        for (key, value) in t.iter() {
            let name: &str = key.get_ref();
            match name {
                "pinned_revisions" => {
                    self.source.pinned_revisions = strings(d, name, value).unwrap_or_default();
                }
                _ => d.unknown_key(key, "in [source]", "[source]", SOURCE_KEYS),
            }
        }
    }

    fn walk_scan(&mut self, d: &mut Diag<'_>, value: &Value<'_>) {
        let Some(t) = table(d, "scan", value) else {
            return;
        };
        for (key, value) in t.iter() {
            let name: &str = key.get_ref();
            match name {
                "exclude" => self.scan.exclude = strings(d, name, value).unwrap_or_default(),
                _ => d.unknown_key(key, "in [scan]", "[scan]", SCAN_KEYS),
            }
        }
    }

    fn walk_signing(&mut self, d: &mut Diag<'_>, value: &Value<'_>) {
        let Some(t) = table(d, "signing", value) else {
            return;
        };
        for (key, value) in t.iter() {
            let name: &str = key.get_ref();
            match name {
                "require" => self.signing.require = boolean(d, name, value),
                "signature" => self.signing.signature = string(d, name, value),
                "keys" => self.signing.keys = strings(d, name, value).unwrap_or_default(),
                "certificate_chain" => {
                    self.signing.certificate_chain = strings(d, name, value).unwrap_or_default();
                }
                "trust_root" => self.signing.trust_root = string(d, name, value),
                "identities" => self.walk_identities(d, value),
                _ => d.unknown_key(key, "in [signing]", "[signing]", SIGNING_KEYS),
            }
        }
    }

    fn walk_identities(&mut self, d: &mut Diag<'_>, value: &Value<'_>) {
        let DeValue::Array(items) = value.get_ref() else {
            d.wrong_type(
                "identities",
                value,
                "an array of tables (`[{ subject = \"…\", issuer = \"…\" }]`)",
            );
            return;
        };
        self.signing.identities_span = Some(value.span());
        for item in items.iter() {
            let Some(t) = table(d, "identities", item) else {
                continue;
            };
            let mut id = RawIdentity {
                span: item.span(),
                subject: None,
                subject_regex: None,
                issuer: None,
            };
            for (key, value) in t.iter() {
                let name: &str = key.get_ref();
                match name {
                    "subject" => id.subject = string(d, name, value),
                    "subject_regex" => id.subject_regex = string(d, name, value),
                    "issuer" => id.issuer = string(d, name, value),
                    _ => {
                        d.unknown_key(key, "in [signing] identities", "an identity", IDENTITY_KEYS)
                    }
                }
            }
            self.signing.identities.push(id);
        }
    }

    fn walk_limits(&mut self, d: &mut Diag<'_>, value: &Value<'_>) {
        let Some(t) = table(d, "limits", value) else {
            return;
        };
        for (key, value) in t.iter() {
            let name: &str = key.get_ref();
            if let Some(n) = integer(d, name, value) {
                self.limits.push((owned_key(key), n));
            }
        }
    }

    fn walk_exceptions(&mut self, d: &mut Diag<'_>, value: &Value<'_>) {
        let DeValue::Array(items) = value.get_ref() else {
            d.wrong_type("exceptions", value, "an array of tables (`[[exceptions]]`)");
            return;
        };
        for item in items.iter() {
            let DeValue::Table(t) = item.get_ref() else {
                d.wrong_type("exceptions", item, "a table");
                continue;
            };
            let mut e = RawException {
                header: item.span(),
                rule: None,
                path: None,
                sha256: None,
                reason: None,
                expires: None,
            };
            for (key, value) in t.iter() {
                let name: &str = key.get_ref();
                match name {
                    "rule" => e.rule = string(d, name, value),
                    "path" => e.path = string(d, name, value),
                    "sha256" => e.sha256 = string(d, name, value),
                    "reason" => e.reason = string(d, name, value),
                    "expires" => {
                        e.expires = match value.get_ref() {
                            DeValue::Datetime(dt) => {
                                Some(Spanned::new(value.span(), RawDate::Toml(*dt)))
                            }
                            DeValue::String(s) => {
                                Some(Spanned::new(value.span(), RawDate::Text(s.to_string())))
                            }
                            _ => {
                                d.wrong_type(name, value, "a date (`2027-01-01`)");
                                None
                            }
                        }
                    }
                    _ => d.unknown_key(key, "in [[exceptions]]", "[[exceptions]]", EXCEPTION_KEYS),
                }
            }
            self.exceptions.push(e);
        }
    }
}

/// Levels and gradings of the rules a policy does not list.
type Base<'a> = (&'a BTreeMap<RuleId, Action>, &'a BTreeMap<RuleId, Grading>);

fn validate(d: &mut Diag<'_>, raw: RawPolicy, source: PolicySource, base: Base<'_>) -> Policy {
    check_version(d, &raw);
    let (base_levels, base_gradings) = base;
    // A rule missing from the base (a test forbids that) is denied, failing closed.
    let mut policy = Policy {
        source,
        levels: RuleId::ALL
            .iter()
            .map(|r| (*r, base_levels.get(r).copied().unwrap_or(Action::Deny)))
            .collect(),
        gradings: RuleId::ALL
            .iter()
            .map(|r| {
                let g = base_gradings.get(r).copied();
                (*r, g.unwrap_or(Grading::uniform(Action::Deny)))
            })
            .collect(),
        pickle: PickleOptions::default(),
        safetensors: SafetensorsOptions::default(),
        card: CardOptions::default(),
        source_code: SourceOptions::default(),
        scan: ScanOptions::default(),
        signing: SigningOptions::default(),
        limits: Limits::default(),
        exceptions: Vec::new(),
        sha256: String::new(),
    };
    validate_rules(d, &raw.rules, &mut policy);
    policy.pickle.safe_globals = validate_globals(d, "safe_globals", raw.pickle.safe_globals);
    policy.pickle.dangerous_globals =
        validate_globals(d, "dangerous_globals", raw.pickle.dangerous_globals);
    validate_safetensors(d, &raw.safetensors, &raw.limits, &mut policy);
    if let Some(fields) = raw.card.required_fields {
        policy.card.required_fields = non_empty(d, "required_fields", fields);
    }
    if let Some(licenses) = raw.card.allowed_licenses {
        policy.card.allowed_licenses = Some(non_empty(d, "allowed_licenses", licenses));
    }
    for form in raw.source.pinned_revisions {
        if REVISION_FORMS.contains(&form.get_ref().as_str()) {
            policy
                .source_code
                .pinned_revisions
                .insert(form.into_inner());
        } else {
            let help = match suggest(form.get_ref(), REVISION_FORMS.iter().copied()) {
                Some(s) => format!("did you mean `{s}`?"),
                None => format!("forms are {}", list(REVISION_FORMS)),
            };
            d.error(
                form.span(),
                "unknown-revision-form",
                format!("unknown revision form `{}`", form.get_ref()),
                Some(help),
            );
        }
    }
    for pattern in raw.scan.exclude {
        if glob(d, &pattern).is_some() {
            policy.scan.exclude.push(pattern.into_inner());
        }
    }
    validate_limits(d, &raw.limits, &mut policy.limits);
    policy.signing = validate_signing(d, raw.signing, &policy.source);
    policy.safetensors.max_header_bytes = policy.limit("safetensors_header_bytes");
    for e in raw.exceptions {
        if let Some(e) = validate_exception(d, e) {
            policy.exceptions.push(e);
        }
    }
    policy
}

/// `[signing]`: trust material paths are resolved against the policy file's directory (a
/// built-in preset's against the working directory), so a policy means the same keys wherever
/// `scan` runs from.
fn validate_signing(d: &mut Diag<'_>, raw: RawSigning, source: &PolicySource) -> SigningOptions {
    let base = match source {
        PolicySource::File(p) => p.parent().map(Path::to_path_buf).unwrap_or_default(),
        PolicySource::Builtin(_) => PathBuf::new(),
    };
    let path = |d: &mut Diag<'_>, name: &str, v: Spanned<String>| -> Option<PathBuf> {
        if v.get_ref().trim().is_empty() {
            d.error(
                v.span(),
                "empty-value",
                format!("`{name}` must not be empty"),
                None,
            );
            return None;
        }
        Some(base.join(v.get_ref()))
    };
    let mut out = SigningOptions {
        require: raw.require.unwrap_or(false),
        ..SigningOptions::default()
    };
    if let Some(sig) = raw.signature {
        if sig.get_ref().trim().is_empty() {
            d.error(
                sig.span(),
                "empty-value",
                "`signature` must not be empty",
                Some("the reference tool's default is `model.sig`".to_string()),
            );
        } else {
            out.signature = PathBuf::from(sig.into_inner());
        }
    }
    for k in raw.keys {
        if let Some(fp) = key_fingerprint(k.get_ref()) {
            out.key_fingerprints.push(fp);
        } else if k.get_ref().starts_with("sha256:") {
            d.error(
                k.span(),
                "bad-fingerprint",
                "a key fingerprint is `sha256:` and 64 hex digits",
                Some(
                    "the SHA-256 of the key's DER SubjectPublicKeyInfo, as `modelgate verify` prints it"
                        .to_string(),
                ),
            );
        } else if let Some(p) = path(d, "keys", k) {
            out.keys.push(p);
        }
    }
    out.certificate_chain = raw
        .certificate_chain
        .into_iter()
        .filter_map(|c| path(d, "certificate_chain", c))
        .collect();
    let any_identity = !raw.identities.is_empty();
    for RawIdentity {
        span,
        subject,
        subject_regex,
        issuer,
    } in raw.identities
    {
        let field = |d: &mut Diag<'_>, name: &str, v: Option<Spanned<String>>| match v {
            Some(v) if !v.get_ref().trim().is_empty() => Some(v.into_inner()),
            Some(v) => {
                d.error(
                    v.span(),
                    "empty-value",
                    format!("identity `{name}` must not be empty"),
                    None,
                );
                None
            }
            None => {
                d.error(
                    span.clone(),
                    "missing-key",
                    format!("identity is missing `{name}`"),
                    Some(
                        "an identity is `{ subject = \"SAN\", issuer = \"OIDC issuer URL\" }`"
                            .to_string(),
                    ),
                );
                None
            }
        };
        let (subject, is_regex) = match (subject, subject_regex) {
            (Some(_), Some(r)) => {
                d.error(
                    r.span(),
                    "conflicting-setting",
                    "identity has both `subject` and `subject_regex`",
                    Some("keep one: an exact SAN, or a pattern the whole SAN must match".into()),
                );
                (None, false)
            }
            (None, Some(r)) => (
                field(d, "subject_regex", Some(r.clone())).filter(|p| valid_regex(d, &r, p)),
                true,
            ),
            (s, None) => (field(d, "subject", s), false),
        };
        let issuer = field(d, "issuer", issuer);
        if let (Some(subject), Some(issuer)) = (subject, issuer) {
            out.identities.push(SigningIdentity {
                subject,
                subject_regex: is_regex,
                issuer,
            });
        }
    }
    out.trust_root = raw.trust_root.and_then(|t| path(d, "trust_root", t));
    // Keyless verification is offline: without a trusted root the identities could never match,
    // so the table would quietly trust nobody.
    if let Some(span) = raw.identities_span
        && out.trust_root.is_none()
        && any_identity
    {
        d.error(
            span,
            "missing-key",
            "`identities` needs `trust_root`",
            Some(
                "set `trust_root` to a Sigstore trusted root JSON (e.g. from `sigstore` or TUF)"
                    .to_string(),
            ),
        );
    }
    out
}

fn check_version(d: &mut Diag<'_>, raw: &RawPolicy) {
    match &raw.version {
        Some(v) if *v.get_ref() == POLICY_VERSION => {}
        Some(v) => d.error(
            v.span(),
            "unsupported-version",
            format!("unsupported policy version {}", v.get_ref()),
            Some(format!("this modelgate reads `version = {POLICY_VERSION}`")),
        ),
        None if !raw.version_seen => d.error(
            0..0,
            "missing-version",
            "missing `version`",
            Some(format!(
                "add `version = {POLICY_VERSION}` at the top of the file"
            )),
        ),
        None => {}
    }
}

fn validate_rules(d: &mut Diag<'_>, rules: &[(Spanned<String>, RawSetting)], policy: &mut Policy) {
    let mut seen: BTreeMap<RuleId, &Spanned<String>> = BTreeMap::new();
    for (key, setting) in rules {
        let Some(rule) = unknown_rule_check(d, key) else {
            continue;
        };
        if let Some(first) = seen.get(&rule) {
            let first_line = d.line_of(first.span().start);
            d.error(
                key.span(),
                "duplicate-rule",
                format!(
                    "rule `{}` is set twice (as `{}` and `{}`)",
                    rule.code(),
                    first.get_ref(),
                    key.get_ref()
                ),
                Some(format!("it is first set on line {first_line}; keep one")),
            );
            continue;
        }
        seen.insert(rule, key);
        let level = match setting {
            RawSetting::Level(level) => level,
            RawSetting::Graded(raw) => {
                if let Some(g) = validate_grading(d, key, raw) {
                    // The level a table stands for is what a finding of the rule's own
                    // severity gets, so `policy check`, `explain` and the preset tables keep
                    // one word per rule.
                    policy
                        .levels
                        .insert(rule, g.action(rule.default_severity()));
                    policy.gradings.insert(rule, g);
                }
                continue;
            }
        };
        match Action::parse(level.get_ref()) {
            Some(action) => {
                policy.levels.insert(rule, action);
                policy
                    .gradings
                    .insert(rule, grading::declared(rule, action));
            }
            None => {
                let help = match suggest(level.get_ref(), LEVELS.iter().copied()) {
                    Some(s) => format!("did you mean `{s}`? levels are {}", list(LEVELS)),
                    None => format!("levels are {}", list(LEVELS)),
                };
                d.error(
                    level.span(),
                    "invalid-level",
                    format!(
                        "invalid level `{}` for rule `{}`",
                        level.get_ref(),
                        key.get_ref()
                    ),
                    Some(help),
                );
            }
        }
    }
}

/// A grading table's severities, checked: each a severity name, `allow_below` not above
/// `deny_from`, and not a table that says nothing.
fn validate_grading(d: &mut Diag<'_>, key: &Spanned<String>, raw: &RawGrading) -> Option<Grading> {
    let rule = key.get_ref();
    let (deny_from, allow_below) = (raw.deny_from.as_ref(), raw.allow_below.as_ref());
    if deny_from.is_none() && allow_below.is_none() {
        if !raw.empty {
            // Its keys were unknown or of the wrong type, and are reported as such.
            return None;
        }
        d.error(
            raw.span.clone(),
            "empty-grading",
            format!("the grading of `{rule}` sets neither `deny_from` nor `allow_below`"),
            Some(format!(
                "write a level to act the same at every severity, e.g. `{rule} = \"warn\"`"
            )),
        );
        return None;
    }
    // Both are checked before giving up, so every problem is reported at once.
    let deny = deny_from.map(|v| severity(d, "deny_from", v));
    let allow = allow_below.map(|v| severity(d, "allow_below", v));
    if deny == Some(None) || allow == Some(None) {
        return None;
    }
    let (deny, allow) = (deny.flatten(), allow.flatten());
    // Nothing is below `info`: a user who writes this almost certainly meant to allow info
    // findings, and silently warning about them instead would contradict the file.
    if let (Some(v), Some(Severity::Info)) = (allow_below, allow) {
        d.error(
            v.span(),
            "invalid-grading",
            "`allow_below = \"info\"` allows nothing: no severity is below `info`",
            Some("to allow info findings write `allow_below = \"low\"`".to_string()),
        );
        return None;
    }
    if let (Some(a), Some(dn), Some(v)) = (allow, deny, allow_below)
        && a > dn
    {
        d.error(
            v.span(),
            "conflicting-grading",
            format!(
                "`allow_below = \"{}\"` is above `deny_from = \"{}\"` in the grading of `{rule}`",
                a.as_str(),
                dn.as_str()
            ),
            Some(
                "severities from `deny_from` up are denied; `allow_below` must not be above it"
                    .to_string(),
            ),
        );
        return None;
    }
    Some(Grading {
        warn_from: Some(allow.unwrap_or(Severity::Info)),
        deny_from: deny,
    })
}

/// A severity name in a grading table, reporting it when unknown.
fn severity(d: &mut Diag<'_>, name: &str, value: &Spanned<String>) -> Option<Severity> {
    if let Some(s) = Severity::parse(value.get_ref()) {
        return Some(s);
    }
    let help = match suggest(value.get_ref(), SEVERITIES.iter().copied()) {
        Some(s) => format!("did you mean `{s}`? severities are {}", list(SEVERITIES)),
        None => format!("severities are {}", list(SEVERITIES)),
    };
    d.error(
        value.span(),
        "invalid-severity",
        format!("invalid severity `{}` for `{name}`", value.get_ref()),
        Some(help),
    );
    None
}

/// Looks a rule code or name up, reporting it when unknown.
fn unknown_rule_check(d: &mut Diag<'_>, key: &Spanned<String>) -> Option<RuleId> {
    if let Some(rule) = RuleId::lookup(key.get_ref()) {
        return Some(rule);
    }
    let help = match RuleId::suggest(key.get_ref()) {
        Some(s) => format!("did you mean `{s}`?"),
        None => "`modelgate rules` lists every code and name".to_string(),
    };
    d.error(
        key.span(),
        "unknown-rule",
        format!("unknown rule `{}`", key.get_ref()),
        Some(help),
    );
    None
}

/// `module.name` or `module.*`, with Python identifiers as segments. Anything else could never
/// match a pickle GLOBAL, so it is a typo that would leave a list silently ineffective.
fn validate_globals(d: &mut Diag<'_>, name: &str, globals: Vec<Spanned<String>>) -> Vec<String> {
    let mut out = Vec::new();
    for g in globals {
        let segments: Vec<&str> = g.get_ref().split('.').collect();
        let last = segments.len().saturating_sub(1);
        let valid = segments.len() >= 2
            && segments
                .iter()
                .enumerate()
                .all(|(i, s)| is_identifier(s) || (i == last && *s == "*"));
        if valid {
            out.push(g.into_inner());
        } else {
            d.error(
                g.span(),
                "bad-global",
                format!("invalid entry `{}` in `{name}`", g.get_ref()),
                Some(
                    "expected `module.name` or `module.*`, e.g. `mypkg.layers.Custom`".to_string(),
                ),
            );
        }
    }
    out
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c == '_' || c.is_alphabetic())
        && chars.all(|c| c == '_' || c.is_alphanumeric())
}

fn non_empty(d: &mut Diag<'_>, name: &str, values: Vec<Spanned<String>>) -> Vec<String> {
    let mut out = Vec::new();
    for v in values {
        if v.get_ref().trim().is_empty() {
            d.error(
                v.span(),
                "empty-value",
                format!("`{name}` entries must not be empty"),
                None,
            );
        } else {
            out.push(v.into_inner());
        }
    }
    out
}

fn validate_safetensors(
    d: &mut Diag<'_>,
    raw: &RawSafetensors,
    limits: &[(Spanned<String>, Spanned<i64>)],
    policy: &mut Policy,
) {
    if let Some(check) = raw.check_values {
        policy.safetensors.check_values = check;
    }
    let Some(max) = &raw.max_header_bytes else {
        return;
    };
    // Both names set the same limit; two values would leave the reader guessing which one wins.
    if let Some((key, _)) = limits
        .iter()
        .find(|(k, _)| k.get_ref() == "safetensors_header_bytes")
    {
        let line = d.line_of(max.span().start);
        d.error(
            key.span(),
            "conflicting-setting",
            "`safetensors_header_bytes` is also set by `[safetensors] max_header_bytes`",
            Some(format!(
                "`max_header_bytes` is set on line {line}; keep one"
            )),
        );
        return;
    }
    if let Some(spec) = limit_spec("safetensors_header_bytes")
        && let Some(n) = in_range(d, "max_header_bytes", max, spec.min, spec.max)
    {
        policy.limits.safetensors_header_bytes = n;
    }
}

fn in_range(d: &mut Diag<'_>, name: &str, value: &Spanned<i64>, min: u64, max: u64) -> Option<u64> {
    let n = *value.get_ref();
    if let Ok(u) = u64::try_from(n)
        && (min..=max).contains(&u)
    {
        return Some(u);
    }
    let expected = if max >= i64::MAX as u64 {
        format!("at least {min}")
    } else {
        format!("between {min} and {max}")
    };
    d.error(
        value.span(),
        "out-of-range",
        format!("`{name}` must be {expected}, found {n}"),
        None,
    );
    None
}

fn validate_limits(d: &mut Diag<'_>, raw: &[(Spanned<String>, Spanned<i64>)], limits: &mut Limits) {
    for (key, value) in raw {
        let Some(spec) = limit_spec(key.get_ref()) else {
            let help = match suggest(key.get_ref(), LIMITS.iter().map(|l| l.name)) {
                Some(s) => format!("did you mean `{s}`?"),
                None => "policies/README.md lists every limit".to_string(),
            };
            d.error(
                key.span(),
                "unknown-limit",
                format!("unknown limit `{}`", key.get_ref()),
                Some(help),
            );
            continue;
        };
        if let Some(n) = in_range(d, spec.name, value, spec.min, spec.max) {
            limits.set(spec.name, n);
        }
    }
}

/// Globs match paths relative to the scan root; `*` stays within one directory so that
/// `legacy/*.bin` cannot silently cover `legacy/new/evil.bin`.
fn glob(d: &mut Diag<'_>, pattern: &Spanned<String>) -> Option<globset::GlobMatcher> {
    if pattern.get_ref().is_empty() {
        d.error(
            pattern.span(),
            "bad-glob",
            "empty glob",
            Some("use `**` to match every path".to_string()),
        );
        return None;
    }
    match globset::GlobBuilder::new(pattern.get_ref())
        .literal_separator(true)
        .build()
    {
        Ok(g) => Some(g.compile_matcher()),
        Err(e) => {
            d.error(
                pattern.span(),
                "bad-glob",
                format!("invalid glob `{}`: {}", pattern.get_ref(), e.kind()),
                None,
            );
            None
        }
    }
}

fn validate_exception(d: &mut Diag<'_>, e: RawException) -> Option<Exception> {
    let line = d.line_of(e.header.start);
    let missing = |d: &mut Diag<'_>, key: &str| {
        d.error(
            e.header.clone(),
            "missing-key",
            format!("exception is missing `{key}`"),
            None,
        );
    };
    let rule = match &e.rule {
        None => {
            missing(d, "rule");
            None
        }
        Some(key) => unknown_rule_check(d, key).filter(|rule| {
            let is_policy_rule = matches!(rule, RuleId::ExceptionExpired | RuleId::ExceptionUnused);
            if is_policy_rule {
                d.error(
                    key.span(),
                    "policy-rule-exception",
                    format!("an exception cannot cover `{}`", rule.code()),
                    Some("set its level in `[rules]` instead".to_string()),
                );
            }
            !is_policy_rule
        }),
    };
    let matcher = match &e.path {
        None => {
            missing(d, "path");
            None
        }
        Some(p) => glob(d, p),
    };
    let sha256 = match &e.sha256 {
        None => Some(None),
        Some(s) => sha256(d, s).map(Some),
    };
    let reason = match &e.reason {
        None => {
            d.error(
                e.header.clone(),
                "missing-reason",
                "exception has no `reason`",
                Some(REASON_HELP.to_string()),
            );
            None
        }
        Some(r) if r.get_ref().trim().is_empty() => {
            d.error(
                r.span(),
                "missing-reason",
                "exception `reason` is empty",
                Some(REASON_HELP.to_string()),
            );
            None
        }
        Some(r) => Some(r.get_ref().trim().to_string()),
    };
    let expires = match &e.expires {
        None => Some(None),
        Some(date) => expiry(d, date).map(Some),
    };
    Some(Exception {
        rule: rule?,
        path: e.path.map(Spanned::into_inner)?,
        matcher: matcher?,
        sha256: sha256?,
        reason: reason?,
        expires: expires?,
        line,
    })
}

const REASON_HELP: &str =
    "say who audited what and when, e.g. `reason = \"audited by X on 2026-05-01, ticket SEC-12\"`";

fn sha256(d: &mut Diag<'_>, s: &Spanned<String>) -> Option<String> {
    let v = s.get_ref();
    let problem = if let Some(c) = v.chars().find(|c| !c.is_ascii_hexdigit()) {
        format!("`sha256` has a non-hex character `{c}`")
    } else if v.len() != 64 {
        format!("`sha256` must be 64 hex digits, found {} digits", v.len())
    } else {
        return Some(v.to_ascii_lowercase());
    };
    d.error(
        s.span(),
        "bad-sha256",
        problem,
        Some("use the file's full SHA-256, e.g. from `sha256sum FILE`".to_string()),
    );
    None
}

fn expiry(d: &mut Diag<'_>, date: &Spanned<RawDate>) -> Option<time::Date> {
    let (parsed, shown) = match date.get_ref() {
        RawDate::Toml(dt) => {
            let parsed = match (dt.date, dt.time, dt.offset) {
                (Some(day), None, None) => time::Month::try_from(day.month).ok().and_then(|m| {
                    time::Date::from_calendar_date(i32::from(day.year), m, day.day).ok()
                }),
                _ => None,
            };
            (parsed, dt.to_string())
        }
        RawDate::Text(s) => {
            let format = time::macros::format_description!("[year]-[month]-[day]");
            (time::Date::parse(s, format).ok(), s.clone())
        }
    };
    if parsed.is_none() {
        d.error(
            date.span(),
            "bad-date",
            format!("`expires` must be a date like 2027-01-01, found `{shown}`"),
            None,
        );
    }
    parsed
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
