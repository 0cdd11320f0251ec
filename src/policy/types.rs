//! The policy's types: the validated [`Policy`], its option tables, exceptions and where it came
//! from, with the embedded preset texts and the small helpers the parser and the evaluator share.
//! The folder's leaf: it imports nothing from `policy`, so `config`, `render`, `baseline` and
//! `mod.rs` all build on it without an arrow back up.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::PathBuf;

use crate::model::finding::Action;
use crate::model::grading::Grading;
use crate::model::limits::{Limits, MAX_SAFETENSORS_HEADER};
use crate::model::rules::RuleId;

/// The embedded presets, by name: `(name, TOML text)`. `default` comes first.
pub const PRESETS: &[(&str, &str)] = &[
    ("default", include_str!("../../policies/default.toml")),
    ("strict", include_str!("../../policies/strict.toml")),
    ("audit", include_str!("../../policies/audit.toml")),
];

/// The policy format version this build understands.
pub const POLICY_VERSION: i64 = 1;

/// Where a policy came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PolicySource {
    /// An embedded preset, by name.
    Builtin(&'static str),
    /// A file on disk.
    File(PathBuf),
}

impl fmt::Display for PolicySource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PolicySource::Builtin(name) => write!(f, "built-in:{name}"),
            PolicySource::File(path) => write!(f, "{}", path.display()),
        }
    }
}

/// `[pickle]`: additions to the built-in global lists.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PickleOptions {
    /// `module.name` or `module.*` entries treated as safe, on top of the built-in list.
    pub safe_globals: Vec<String>,
    /// `module.name` or `module.*` entries treated as dangerous, on top of the built-in list.
    pub dangerous_globals: Vec<String>,
}

/// `[safetensors]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SafetensorsOptions {
    /// Largest accepted JSON header (1..=100_000_000).
    pub max_header_bytes: u64,
    /// Scan float tensors for NaN/Inf (ST002).
    pub check_values: bool,
}

impl Default for SafetensorsOptions {
    fn default() -> Self {
        SafetensorsOptions {
            max_header_bytes: MAX_SAFETENSORS_HEADER,
            check_values: false,
        }
    }
}

/// `[card]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardOptions {
    /// Front-matter fields the model card must have (CARD002).
    pub required_fields: Vec<String>,
    /// Accepted licenses (CARD003); `None` accepts any.
    pub allowed_licenses: Option<Vec<String>>,
}

impl Default for CardOptions {
    fn default() -> Self {
        CardOptions {
            required_fields: vec!["license".to_string()],
            allowed_licenses: None,
        }
    }
}

/// `[source]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceOptions {
    /// Revision forms that count as pinned: always `commit`; optionally `tag`, `short-sha`.
    pub pinned_revisions: BTreeSet<String>,
}

impl Default for SourceOptions {
    fn default() -> Self {
        SourceOptions {
            pinned_revisions: BTreeSet::from(["commit".to_string()]),
        }
    }
}

/// `[scan]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScanOptions {
    /// Globs excluded from the walk, on top of `--exclude`.
    pub exclude: Vec<String>,
}

/// `[signing]`: whether a model signature is required and whom it must come from. Paths are
/// already resolved: `keys`, `certificate_chain` and `trust_root` against the policy file's
/// directory; `signature` stays as written (relative to each scan root unless absolute).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SigningOptions {
    /// A scan root without a signature is SIG001.
    pub require: bool,
    /// The signature file, relative to the scan root (default `model.sig`).
    pub signature: PathBuf,
    /// Trusted public keys (PEM).
    pub keys: Vec<PathBuf>,
    /// Trusted signing keys named by fingerprint (`sha256:<hex of the DER SubjectPublicKeyInfo>`,
    /// written in `keys` next to the PEM paths). Only a signature that carries its key (the
    /// certificate methods) can be checked against a fingerprint.
    pub key_fingerprints: Vec<String>,
    /// Trusted root certificates for the certificate method (PEM).
    pub certificate_chain: Vec<PathBuf>,
    /// Trusted keyless signers.
    pub identities: Vec<SigningIdentity>,
    /// Sigstore trusted root JSON (required with `identities`).
    pub trust_root: Option<PathBuf>,
}

impl Default for SigningOptions {
    fn default() -> Self {
        SigningOptions {
            require: false,
            signature: PathBuf::from("model.sig"),
            keys: Vec::new(),
            key_fingerprints: Vec::new(),
            certificate_chain: Vec::new(),
            identities: Vec::new(),
            trust_root: None,
        }
    }
}

/// `Some(normalized)` when `s` is written as a key fingerprint (`sha256:` and 64 hex digits,
/// any case), `None` when it is not one (a PEM path).
pub fn key_fingerprint(s: &str) -> Option<String> {
    let hex = s.strip_prefix("sha256:")?;
    (hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| format!("sha256:{}", hex.to_ascii_lowercase()))
}

/// One trusted keyless signer in `[signing] identities`: certificate SAN (exact, or a regular
/// expression the whole SAN must match) and exact OIDC issuer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SigningIdentity {
    /// Certificate SAN (email or URI): exact match, or the pattern when `subject_regex` is set.
    pub subject: String,
    /// `subject` is a regular expression (`subject_regex = "…"`) that must match the whole SAN.
    pub subject_regex: bool,
    /// OIDC issuer, exact match.
    pub issuer: String,
}

/// One audited exception from `[[exceptions]]`.
#[derive(Debug, Clone)]
pub struct Exception {
    /// The rule it silences.
    pub rule: RuleId,
    /// Glob, relative to the scan root (`*` does not cross `/`; use `**`).
    pub path: String,
    pub(super) matcher: globset::GlobMatcher,
    /// When set (lowercase hex), the exception applies only while the file has this digest.
    pub sha256: Option<String>,
    /// Why it is acceptable: who reviewed what, when.
    pub reason: String,
    /// The last day the exception applies.
    pub expires: Option<time::Date>,
    /// The line of the policy file where it was declared.
    pub line: usize,
}

impl Exception {
    /// Whether the exception's path glob matches `path`.
    pub fn matches_path(&self, path: &str) -> bool {
        self.matcher.is_match(path)
    }

    /// Whether `today` is past the expiry date (the expiry day itself still counts).
    pub fn is_expired(&self, today: time::Date) -> bool {
        self.expires.is_some_and(|e| e < today)
    }

    /// Whether the exception covers a detection of `rule` at `path` whose file has `digest`.
    /// A pinned exception never covers a file whose digest is unknown.
    pub(super) fn covers(
        &self,
        rule: RuleId,
        path: &str,
        digest: Option<&str>,
        today: time::Date,
    ) -> bool {
        if self.rule != rule || self.is_expired(today) || !self.matches_path(path) {
            return false;
        }
        match &self.sha256 {
            None => true,
            Some(want) => digest.is_some_and(|d| d.eq_ignore_ascii_case(want)),
        }
    }
}

/// A validated policy. Every rule has a level and every limit a value.
#[derive(Debug, Clone)]
pub struct Policy {
    /// Where it came from.
    pub source: PolicySource,
    /// The level of every rule (for a grading table: the action at the rule's own severity).
    pub levels: BTreeMap<RuleId, Action>,
    /// The action of every rule for each severity: what the registry declares for its level
    /// (`model::grading::declared`), or the policy's own grading table.
    pub gradings: BTreeMap<RuleId, Grading>,
    /// `[pickle]`.
    pub pickle: PickleOptions,
    /// `[safetensors]`.
    pub safetensors: SafetensorsOptions,
    /// `[card]`.
    pub card: CardOptions,
    /// `[source]`.
    pub source_code: SourceOptions,
    /// `[scan]`.
    pub scan: ScanOptions,
    /// `[signing]`.
    pub signing: SigningOptions,
    /// Every limit in [`LIMITS`](crate::model::limits::LIMITS), with the policy's value or the
    /// default.
    pub limits: Limits,
    /// `[[exceptions]]`, in declaration order.
    pub exceptions: Vec<Exception>,
    /// SHA-256 of the text this policy was parsed from (the bytes read once, stdin included).
    pub sha256: String,
}

/// SHA-256 (lowercase hex) of policy text: the report names exactly the bytes that were parsed.
pub fn text_digest(text: &str) -> String {
    use sha2::Digest;
    crate::model::finding::hex(&sha2::Sha256::digest(text.as_bytes()))
}

/// Largest policy file read (in the scanned tree or given with `--policy`): far more than any
/// policy needs, small enough that a FIFO or `/dev/zero` given by mistake cannot exhaust memory.
pub const MAX_POLICY_BYTES: u64 = 1 << 20;
