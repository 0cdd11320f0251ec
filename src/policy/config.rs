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

use toml::Spanned;
use toml::de::{DeTable, DeValue};

pub use super::diag::Problem;
use super::diag::{Diag, Key, list, render_problems, suggest, type_name};
use super::{
    CardOptions, Exception, LIMITS, Limits, POLICY_VERSION, PickleOptions, Policy, PolicySource,
    SafetensorsOptions, ScanOptions, SigningIdentity, SigningOptions, SourceOptions,
    default_gradings, default_levels, limit_spec,
};
use crate::model::finding::Action;
use crate::model::grading::{self, Grading};
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
/// The file is read once, at most [`super::MAX_POLICY_BYTES`]; the policy's digest is taken
/// from those same bytes, so `--policy /dev/stdin` reports the digest of what it parsed.
pub fn load_file(path: &Path) -> Result<Policy, PolicyError> {
    use std::io::Read;
    let read_err = |cause| PolicyError::Read {
        path: path.to_path_buf(),
        cause,
    };
    let file = std::fs::File::open(path).map_err(read_err)?;
    let mut bytes = Vec::new();
    file.take(super::MAX_POLICY_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(read_err)?;
    if bytes.len() as u64 > super::MAX_POLICY_BYTES {
        return Err(read_err(std::io::Error::other(format!(
            "larger than any policy needs ({} bytes at most)",
            super::MAX_POLICY_BYTES
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
    policy.sha256 = super::text_digest(text);
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
        if let Some(fp) = super::key_fingerprint(k.get_ref()) {
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
mod tests {
    use super::*;

    fn problems(text: &str) -> Vec<Problem> {
        match parse(text, PolicySource::File("modelgate.toml".into())) {
            Ok(_) => Vec::new(),
            Err(e) => e.problems().to_vec(),
        }
    }

    fn codes(text: &str) -> Vec<&'static str> {
        problems(text).iter().map(|p| p.code).collect()
    }

    fn rendered(text: &str) -> String {
        match parse(text, PolicySource::File("modelgate.toml".into())) {
            Ok(_) => "(no error)".to_string(),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn accepts_the_documented_example() {
        let text = r#"version = 1
[rules]
PKL001 = "deny"
pickle-format = "warn"
[pickle]
safe_globals = ["mypkg.layers.Custom", "mypkg.safe.*"]
dangerous_globals = ["mypkg.evil"]
[safetensors]
max_header_bytes = 100000000
check_values = false
[card]
required_fields = ["license"]
allowed_licenses = ["apache-2.0", "MIT"]
[source]
pinned_revisions = ["commit", "tag"]
[scan]
exclude = ["vendor/**"]
[limits]
max_file_bytes = 1099511627776
[[exceptions]]
rule = "PKL003"
path = "legacy/*.bin"
sha256 = "ABCDEF0123456789abcdef0123456789ABCDEF0123456789abcdef0123456789"
reason = "audited by X on 2026-05-01, ticket SEC-12"
expires = 2027-01-01
[[exceptions]]
rule = "pickle-unknown-global"
path = "legacy/**"
reason = "string date"
expires = "2027-02-03"
"#;
        let p = parse(text, PolicySource::File("modelgate.toml".into()));
        assert!(
            p.is_ok(),
            "{}",
            p.err().map(|e| e.to_string()).unwrap_or_default()
        );
        let Ok(p) = p else { return };
        assert_eq!(
            p.pickle.safe_globals,
            ["mypkg.layers.Custom", "mypkg.safe.*"]
        );
        assert_eq!(
            p.card.allowed_licenses.as_deref(),
            Some(&["apache-2.0".to_string(), "MIT".to_string()][..])
        );
        assert!(p.source_code.pinned_revisions.contains("tag"));
        assert!(p.source_code.pinned_revisions.contains("commit"));
        assert_eq!(p.exceptions.len(), 2);
        assert_eq!(
            p.exceptions[0].sha256.as_deref(),
            Some("abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789")
        );
        assert_eq!(p.exceptions[0].line, 20);
        assert_eq!(
            p.exceptions[0].expires,
            Some(time::macros::date!(2027 - 01 - 01))
        );
        assert_eq!(
            p.exceptions[1].expires,
            Some(time::macros::date!(2027 - 02 - 03))
        );
        assert!(p.exceptions[1].matches_path("legacy/a/b.bin"));
    }

    #[test]
    fn rejects_unknown_rule_with_suggestion() {
        insta::assert_snapshot!(rendered("version = 1\n[rules]\nPKL01 = \"deny\"\n"));
    }

    #[test]
    fn rejects_invalid_level_with_suggestion() {
        insta::assert_snapshot!(rendered("version = 1\n[rules]\nPKL001 = \"dney\"\n"));
    }

    #[test]
    fn rejects_unknown_keys_in_every_table() {
        let text = "version = 1\n[pikle]\n[pickle]\nsafe_global = []\n[safetensors]\nmax_header = 1\n\
                    [card]\nlicenses = []\n[source]\npinned = []\n[scan]\nexclud = []\n\
                    [[exceptions]]\nrule = \"PKL003\"\npath = \"a\"\nreason = \"r\"\nexpire = 2027-01-01\n";
        assert_eq!(codes(text), ["unknown-key"; 7]);
        insta::assert_snapshot!(rendered(text));
    }

    #[test]
    fn rejects_wrong_types() {
        let text = "version = \"1\"\n[rules]\nPKL001 = true\n[safetensors]\ncheck_values = \"yes\"\n\
                    [pickle]\nsafe_globals = \"a.b\"\n[card]\nrequired_fields = [\"license\", 3]\n\
                    [limits]\nmax_files = 1.5\n[scan]\nexclude = \"vendor\"\n";
        assert_eq!(codes(text), ["wrong-type"; 7]);
        insta::assert_snapshot!(rendered(text));
    }

    #[test]
    fn rejects_toml_syntax_error_with_its_position() {
        let p = problems("version = 1\n[rules]\nPKL001 = deny\n");
        assert_eq!(p.len(), 1);
        assert!(matches!(
            &p[0],
            Problem {
                code: "syntax",
                line: 3,
                ..
            }
        ));
        insta::assert_snapshot!(rendered("version = 1\n[rules]\nPKL001 = deny\n"));
    }

    #[test]
    fn rejects_missing_version() {
        insta::assert_snapshot!(rendered("[rules]\nPKL001 = \"deny\"\n"));
    }

    #[test]
    fn rejects_unsupported_version() {
        assert_eq!(codes("version = 2\n"), ["unsupported-version"]);
    }

    #[test]
    fn rejects_duplicate_rule_by_code_and_name() {
        let text = "version = 1\n[rules]\nPKL003 = \"deny\"\npickle-format = \"warn\"\n";
        assert_eq!(codes(text), ["duplicate-rule"]);
        insta::assert_snapshot!(rendered(text));
    }

    fn graded(text: &str) -> Policy {
        match parse(text, PolicySource::File("modelgate.toml".into())) {
            Ok(p) => p,
            Err(e) => panic!("policy should parse:\n{e}"),
        }
    }

    #[test]
    fn a_grading_table_says_deny_from_and_allow_below() {
        // "deny SRC006 from medium up", written inline and as a sub-table.
        for text in [
            "version = 1\n[rules]\nSRC006 = { deny_from = \"medium\" }\n",
            "version = 1\n[rules.custom-code-behaviour]\ndeny_from = \"medium\"\n",
        ] {
            let p = graded(text);
            let g = p.grading(RuleId::CustomCodeBehaviour);
            assert_eq!(g.to_string(), "info..low warn, medium..critical deny");
            assert_eq!(p.level(RuleId::CustomCodeBehaviour), Action::Deny);
        }
        // "allow info findings" of a rule that is otherwise denied.
        let p = graded(
            "version = 1\n[rules]\nPKL003 = { deny_from = \"low\", allow_below = \"low\" }\n",
        );
        let g = p.grading(RuleId::PickleFormat);
        assert_eq!(g.action(Severity::Info), Action::Allow);
        assert_eq!(g.action(Severity::Low), Action::Deny);
        assert_eq!(p.level(RuleId::PickleFormat), Action::Deny);
        // Only `allow_below`: warned from there up, never denied.
        let p = graded("version = 1\n[rules]\nSRC007 = { allow_below = \"high\" }\n");
        assert_eq!(
            p.grading(RuleId::NativeCode).to_string(),
            "info..medium allow, high..critical warn"
        );
        // The level a table stands for is its action at the rule's own severity (medium).
        assert_eq!(p.level(RuleId::NativeCode), Action::Allow);
    }

    #[test]
    fn a_level_means_the_grading_the_registry_declares_for_it() {
        let p = graded(
            "version = 1\n[rules]\nSRC006 = \"deny\"\nSRC007 = \"warn\"\nPKL003 = \"warn\"\n",
        );
        for rule in [
            RuleId::CustomCodeBehaviour,
            RuleId::NativeCode,
            RuleId::PickleFormat,
        ] {
            let level = p.level(rule);
            assert_eq!(p.grading(rule), grading::declared(rule, level), "{rule}");
        }
    }

    #[test]
    fn the_readme_rules_example_parses_as_documented() {
        let readme = include_str!("../../policies/README.md");
        let section = readme.split("### `[rules]`").nth(1).unwrap_or_default();
        let block = section
            .split("```toml\n")
            .nth(1)
            .and_then(|b| b.split("```").next())
            .unwrap_or_default();
        let p = graded(&format!("version = 1\n{block}"));
        assert_eq!(
            p.grading(RuleId::PickleNeedsUnsafeLoad).to_string(),
            "info allow, low..medium warn, high..critical deny"
        );
        assert_eq!(
            p.grading(RuleId::NativeCode).to_string(),
            "info..medium warn, high..critical deny"
        );
        assert_eq!(
            p.grading(RuleId::CustomCodeBehaviour).to_string(),
            "info..low warn, medium..critical deny"
        );
    }

    #[test]
    fn rejects_bad_grading_tables() {
        let text = "version = 1\n[rules]\n\
                    SRC006 = { deny_from = \"meduim\" }\n\
                    SRC007 = { deny_form = \"high\" }\n\
                    PKL003 = {}\n\
                    PKL002 = { deny_from = \"medium\", allow_below = \"high\" }\n\
                    PKL005 = { allow_below = \"info\" }\n\
                    FMT002 = 3\n\
                    FMT007 = { deny_from = 1, allow_below = \"lo\" }\n";
        assert_eq!(
            codes(text),
            [
                "invalid-severity",
                "unknown-key",
                "empty-grading",
                "conflicting-grading",
                "invalid-grading",
                "wrong-type",
                "wrong-type",
                "invalid-severity",
            ]
        );
        insta::assert_snapshot!(rendered(text));
    }

    #[test]
    fn rejects_a_rule_set_by_level_and_by_grading_table() {
        let text = "version = 1\n[rules]\nSRC006 = \"deny\"\n\
                    custom-code-behaviour = { deny_from = \"medium\" }\n";
        assert_eq!(codes(text), ["duplicate-rule"]);
    }

    #[test]
    fn rejects_bad_globs() {
        let text = "version = 1\n[scan]\nexclude = [\"vendor/[\"]\n[[exceptions]]\nrule = \"PKL003\"\n\
                    path = \"a/{b\"\nreason = \"r\"\n";
        assert_eq!(codes(text), ["bad-glob", "bad-glob"]);
        insta::assert_snapshot!(rendered(text));
    }

    #[test]
    fn rejects_bad_pickle_globals() {
        let text = "version = 1\n[pickle]\nsafe_globals = [\"mypkg\", \"a.*.b\", \"a.b c\", \"ok.name\"]\n";
        assert_eq!(codes(text), ["bad-global"; 3]);
    }

    #[test]
    fn rejects_malformed_sha256_and_dates() {
        let text = "version = 1\n[[exceptions]]\nrule = \"PKL003\"\npath = \"a.bin\"\nsha256 = \"abc\"\n\
                    reason = \"r\"\nexpires = \"2027-13-01\"\n[[exceptions]]\nrule = \"PKL003\"\n\
                    path = \"b.bin\"\nsha256 = \"zz\"\nreason = \"r\"\nexpires = 2027-01-01T10:00:00Z\n\
                    [[exceptions]]\nrule = \"PKL003\"\npath = \"c.bin\"\nreason = \"r\"\nexpires = 10:00:00\n";
        assert_eq!(
            codes(text),
            [
                "bad-sha256",
                "bad-date",
                "bad-sha256",
                "bad-date",
                "bad-date"
            ]
        );
        insta::assert_snapshot!(rendered(text));
    }

    #[test]
    fn rejects_missing_and_empty_reason() {
        let text = "version = 1\n[[exceptions]]\nrule = \"PKL003\"\npath = \"a.bin\"\n\n\
                    [[exceptions]]\nrule = \"PKL003\"\npath = \"b.bin\"\nreason = \"  \"\n";
        assert_eq!(codes(text), ["missing-reason", "missing-reason"]);
        insta::assert_snapshot!(rendered(text));
    }

    #[test]
    fn rejects_exception_missing_rule_and_path() {
        assert_eq!(
            codes("version = 1\n[[exceptions]]\nreason = \"r\"\n"),
            ["missing-key", "missing-key"]
        );
    }

    #[test]
    fn rejects_exception_for_unknown_or_policy_rule() {
        let text = "version = 1\n[[exceptions]]\nrule = \"pickle-formt\"\npath = \"a\"\nreason = \"r\"\n\
                    [[exceptions]]\nrule = \"POL002\"\npath = \"a\"\nreason = \"r\"\n";
        assert_eq!(codes(text), ["unknown-rule", "policy-rule-exception"]);
        let p = problems(text);
        assert_eq!(p[0].help.as_deref(), Some("did you mean `pickle-format`?"));
    }

    #[test]
    fn rejects_unknown_limits_and_out_of_range_values() {
        let text = "version = 1\n[safetensors]\nmax_header_bytes = 100000001\n[limits]\n\
                    max_fils = 10\narchive_depth = -1\n";
        assert_eq!(
            codes(text),
            ["out-of-range", "unknown-limit", "out-of-range"]
        );
        insta::assert_snapshot!(rendered(text));
        assert_eq!(
            codes("version = 1\n[safetensors]\nmax_header_bytes = 0\n"),
            ["out-of-range"]
        );
    }

    #[test]
    fn rejects_header_limit_set_twice() {
        let text = "version = 1\n[safetensors]\nmax_header_bytes = 10\n[limits]\n\
                    safetensors_header_bytes = 10\n";
        assert_eq!(codes(text), ["conflicting-setting"]);
    }

    #[test]
    fn header_limit_and_option_agree() {
        let p = parse(
            "version = 1\n[limits]\nsafetensors_header_bytes = 1000\n",
            PolicySource::Builtin("test"),
        );
        assert!(matches!(&p, Ok(p) if p.safetensors.max_header_bytes == 1000
            && p.limit("safetensors_header_bytes") == 1000));
        let p = parse(
            "version = 1\n[safetensors]\nmax_header_bytes = 2000\n",
            PolicySource::Builtin("test"),
        );
        assert!(matches!(&p, Ok(p) if p.safetensors.max_header_bytes == 2000
            && p.limit("safetensors_header_bytes") == 2000));
    }

    #[test]
    fn rejects_unknown_revision_forms() {
        let text = "version = 1\n[source]\npinned_revisions = [\"tags\", \"branch\"]\n";
        assert_eq!(
            codes(text),
            ["unknown-revision-form", "unknown-revision-form"]
        );
        let p = problems(text);
        assert_eq!(p[0].help.as_deref(), Some("did you mean `tag`?"));
    }

    #[test]
    fn rejects_empty_card_entries() {
        assert_eq!(
            codes("version = 1\n[card]\nrequired_fields = [\"\"]\n"),
            ["empty-value"]
        );
    }

    #[test]
    fn reports_several_problems_together_in_source_order() {
        let text = r#"version = 1

[rules]
PKL01 = "deny"
ST002 = "dney"

[limits]
max_fils = 10

[[exceptions]]
rule = "PKL003"
path = "legacy/*.bin"
sha256 = "1234"
"#;
        let p = problems(text);
        let at: Vec<_> = p.iter().map(|p| (p.line, p.column, p.code)).collect();
        assert_eq!(
            at,
            [
                (4, 1, "unknown-rule"),
                (5, 9, "invalid-level"),
                (8, 1, "unknown-limit"),
                (10, 1, "missing-reason"),
                (13, 10, "bad-sha256"),
            ]
        );
        insta::assert_snapshot!(rendered(text));
    }

    #[test]
    fn columns_count_characters_not_bytes() {
        let p = problems("version = 1\n[rules]\n\"héllo\" = \"deny\"\n");
        assert_eq!(p.len(), 1);
        assert_eq!((p[0].line, p[0].column, p[0].width), (3, 1, 7));
    }

    #[test]
    fn odd_inputs_give_problems_not_panics() {
        for text in [
            "",
            "\u{feff}",
            "version = 1\r\n[rules]\r\nPKL01 = \"deny\"\r\n",
            "version = 1\n[[exceptions]]\n",
            "version = 1\nexceptions = [{ rule = \"PKL003\" }]\n",
            "version = 1\nexceptions = 3\n[rules.PKL001]\n",
            "version = 9999999999999999999\n",
            "v\u{e9}rsion = \"\u{1f600}\"\nrules = \"x\"",
            "version = 1\n[rules]\nPKL001 = \"deny\"\nPKL001 = \"warn\"\n",
            "[",
        ] {
            let p = problems(text);
            assert!(!p.is_empty(), "{text:?} should be rejected");
            assert!(
                p.iter()
                    .all(|p| p.line >= 1 && p.column >= 1 && p.width >= 1)
            );
            let _ = rendered(text);
        }
        let crlf = problems("version = 1\r\n[rules]\r\nPKL01 = \"deny\"\r\n");
        assert_eq!((crlf[0].line, crlf[0].column, crlf[0].width), (3, 1, 5));
        assert!(!crlf[0].snippet.contains('\r'));
    }

    #[test]
    fn signing_table_resolves_trust_paths_against_the_policy_file() {
        let text = "version = 1\n[signing]\nrequire = true\nsignature = \"release.sig\"\n\
                    keys = [\"k/a.pem\"]\ncertificate_chain = [\"ca.pem\"]\n\
                    identities = [{ subject = \"a@b.c\", issuer = \"https://issuer\" }]\n\
                    trust_root = \"tr.json\"\n";
        let p = parse(text, PolicySource::File("cfg/modelgate.toml".into()));
        assert!(p.is_ok(), "{:?}", p.err().map(|e| e.to_string()));
        let Ok(p) = p else { return };
        let s = &p.signing;
        assert!(s.require);
        assert_eq!(s.signature, Path::new("release.sig"));
        assert_eq!(s.keys, [PathBuf::from("cfg/k/a.pem")]);
        assert_eq!(s.certificate_chain, [PathBuf::from("cfg/ca.pem")]);
        assert_eq!(s.trust_root.as_deref(), Some(Path::new("cfg/tr.json")));
        assert_eq!(
            s.identities,
            [SigningIdentity {
                subject: "a@b.c".into(),
                subject_regex: false,
                issuer: "https://issuer".into()
            }]
        );
        let d = parse("version = 1\n", PolicySource::Builtin("x"));
        assert!(matches!(d, Ok(p) if p.signing == SigningOptions::default()));
    }

    #[test]
    fn signing_identities_take_an_exact_subject_or_a_regex() {
        let text = "version = 1\n[signing]\ntrust_root = \"tr.json\"\n\
                    identities = [{ subject_regex = 'https://github\\.com/org/.*', issuer = \"https://i\" }]\n";
        let p = parse(text, PolicySource::Builtin("x"));
        assert!(p.is_ok(), "{:?}", p.err().map(|e| e.to_string()));
        let Ok(p) = p else { return };
        assert_eq!(
            p.signing.identities,
            [SigningIdentity {
                subject: r"https://github\.com/org/.*".into(),
                subject_regex: true,
                issuer: "https://i".into()
            }]
        );
        let both = "version = 1\n[signing]\ntrust_root = \"tr.json\"\n\
                    identities = [{ subject = \"a\", subject_regex = \"b\", issuer = \"https://i\" }]\n";
        assert_eq!(codes(both), ["conflicting-setting"]);
        let bad = "version = 1\n[signing]\ntrust_root = \"tr.json\"\n\
                   identities = [{ subject_regex = \"(x\", issuer = \"https://i\" }]\n";
        assert_eq!(codes(bad), ["bad-regex"]);
        let p = problems(bad);
        assert_eq!((p[0].line, p[0].column), (4, 33));
    }

    #[test]
    fn rejects_bad_signing_tables() {
        let text = "version = 1\n[signing]\nrequire = 1\nsignature = \"\"\nkeys = [\"\", 3]\n\
                    identities = [{ subject = \"a@b.c\" }, { issuer = \"\", subject = \"x\", sub = 1 }]\n\
                    trusted = \"x\"\n";
        assert_eq!(
            codes(text),
            [
                "wrong-type",
                "empty-value",
                "empty-value",
                "wrong-type",
                "missing-key",
                "missing-key",
                "empty-value",
                "unknown-key",
                "unknown-key",
            ]
        );
        let p = problems(text);
        assert_eq!(
            p.last().and_then(|p| p.help.as_deref()),
            Some("did you mean `trust_root`?")
        );
    }

    #[test]
    fn read_error_names_the_path() {
        let e = load_file(Path::new("/nonexistent/modelgate.toml"));
        assert!(matches!(&e, Err(PolicyError::Read { .. })));
        if let Err(e) = e {
            assert!(e.problems().is_empty());
            assert!(
                e.to_string()
                    .starts_with("error: cannot read policy `/nonexistent/modelgate.toml`")
            );
        }
    }
}
