//! Findings: what the policy decided about an observation.
//!
//! Inspectors and provenance readers produce [`Detection`]s: facts of the form "this file breaks
//! rule X, here, with this evidence". They never decide whether that fails the build. The policy
//! turns each detection into a [`Finding`] with an [`Action`] (deny / warn / allow), applying its
//! levels and exceptions. Reporters only render findings; the exit code is computed from them once.

use std::collections::BTreeMap;

use serde::Serialize;
use sha2::{Digest, Sha256};

use super::rules::RuleId;
pub use super::rules::Severity;

/// What the policy decided for a finding. Ordered so that `Deny` is the greatest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// Recorded, does not fail anything.
    Allow,
    /// Reported as a warning; fails only with `--fail-on warn`.
    Warn,
    /// Fails the gate (exit code 1).
    Deny,
}

impl Action {
    /// Lowercase name as used in policies, JSON and text output.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Allow => "allow",
            Action::Warn => "warn",
            Action::Deny => "deny",
        }
    }

    /// Parses `deny`, `warn` or `allow`.
    pub fn parse(s: &str) -> Option<Action> {
        match s {
            "deny" => Some(Action::Deny),
            "warn" => Some(Action::Warn),
            "allow" => Some(Action::Allow),
            _ => None,
        }
    }
}

/// Where in a file a finding points. Text files use line/column (1-based); binary files use a byte
/// offset, plus the archive member when the finding is inside a container.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Location {
    /// 1-based line in a text file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// 1-based column (in characters) in a text file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u64>,
    /// Byte offset in the file (or in the archive member, when `member` is set).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    /// Archive member path (`outer.zip!inner/data.pkl` style for nesting).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub member: Option<String>,
}

impl Location {
    /// A location at a byte offset.
    pub fn offset(offset: u64) -> Self {
        Location {
            offset: Some(offset),
            ..Location::default()
        }
    }

    /// A location at a line and column.
    pub fn line_col(line: u64, column: u64) -> Self {
        Location {
            line: Some(line),
            column: Some(column),
            ..Location::default()
        }
    }
}

/// Structured evidence attached to a finding; keys are documented in the README.
pub type Evidence = BTreeMap<String, serde_json::Value>;

/// An observation that a rule applies, before the policy decides what to do with it.
#[derive(Debug, Clone, PartialEq)]
pub struct Detection {
    /// The rule.
    pub rule: RuleId,
    /// Severity (defaults to the rule's; some inspectors raise or lower it, e.g. a dangerous
    /// global that is called vs. only referenced).
    pub severity: Severity,
    /// Path relative to the scan root ('/'-separated; `""` for the repository as a whole).
    pub path: String,
    /// Human message, lowercase, specific.
    pub message: String,
    /// Where.
    pub location: Location,
    /// Structured evidence.
    pub evidence: Evidence,
    /// What distinguishes this detection from others of the same rule in the same file, for the
    /// fingerprint (e.g. `os.system`, a sub-code and tensor name). Never an offset.
    pub key: String,
}

impl Detection {
    /// A detection with the rule's default severity and no location or evidence.
    pub fn new(
        rule: RuleId,
        path: impl Into<String>,
        key: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Detection {
            rule,
            severity: rule.default_severity(),
            path: path.into(),
            message: message.into(),
            location: Location::default(),
            evidence: Evidence::new(),
            key: key.into(),
        }
    }

    /// Sets the location.
    pub fn at(mut self, location: Location) -> Self {
        self.location = location;
        self
    }

    /// Adds one evidence entry.
    pub fn with(mut self, key: &str, value: impl Into<serde_json::Value>) -> Self {
        self.evidence.insert(key.to_string(), value.into());
        self
    }

    /// Overrides the severity.
    pub fn severity(mut self, severity: Severity) -> Self {
        self.severity = severity;
        self
    }
}

/// A detection judged by the policy.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// Rule code.
    pub rule: RuleId,
    /// Rule name.
    pub name: &'static str,
    /// Severity.
    pub severity: Severity,
    /// The policy's decision.
    pub action: Action,
    /// Path relative to the scan root.
    pub path: String,
    /// Human message.
    pub message: String,
    /// Where in the file.
    pub location: Location,
    /// Structured evidence.
    pub evidence: Evidence,
    /// Stable fingerprint: SHA-256 of rule, path, key and the file's content digest.
    pub fingerprint: String,
    /// When a policy exception turned the action to `allow`: its reason.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exception: Option<String>,
}

impl Finding {
    /// Builds a finding from a detection with the action the policy chose.
    /// `content_digest` is the file's SHA-256 when known.
    pub fn from_detection(d: Detection, action: Action, content_digest: Option<&str>) -> Self {
        let fingerprint = fingerprint(d.rule, &d.path, &d.key, content_digest);
        Finding {
            rule: d.rule,
            name: d.rule.name(),
            severity: d.severity,
            action,
            path: d.path,
            message: d.message,
            location: d.location,
            evidence: d.evidence,
            fingerprint,
            exception: None,
        }
    }
}

/// The fingerprint of a finding: stable across runs and machines, changes when the file does.
pub fn fingerprint(rule: RuleId, path: &str, key: &str, content_digest: Option<&str>) -> String {
    let mut h = Sha256::new();
    for part in [rule.code(), path, key, content_digest.unwrap_or("")] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    hex(&h.finalize())
}

/// Lowercase hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprint_ignores_nothing_it_is_given_and_is_stable() {
        let a = fingerprint(RuleId::PickleUnsafeGlobal, "a.bin", "os.system", Some("00"));
        assert_eq!(
            a,
            fingerprint(RuleId::PickleUnsafeGlobal, "a.bin", "os.system", Some("00"))
        );
        assert_ne!(
            a,
            fingerprint(RuleId::PickleUnsafeGlobal, "a.bin", "os.system", Some("01"))
        );
        // Length-prefixing keeps ("ab","c") and ("a","bc") apart.
        assert_ne!(
            fingerprint(RuleId::PickleFormat, "ab", "c", None),
            fingerprint(RuleId::PickleFormat, "a", "bc", None)
        );
    }

    #[test]
    fn deny_is_the_strongest_action() {
        assert!(Action::Deny > Action::Warn && Action::Warn > Action::Allow);
        assert!(Severity::Critical > Severity::High);
    }
}
