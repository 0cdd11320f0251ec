//! The report: everything one scan learned, in the shape of the JSON schema (schema_version 1).
//! Built by the engine, read by every renderer and by the exit-code decision.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value};

use super::finding::{Action, Finding};
use super::format::{Format, Kind};

/// What makes `scan` exit with 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FailOn {
    /// A denied finding (the default).
    Deny,
    /// A denied or warned finding.
    Warn,
    /// Never: always exit 0 unless the tool itself fails.
    Never,
}

/// The tool that produced the report.
#[derive(Debug, Clone, Serialize)]
pub struct ToolInfo {
    /// `modelgate`.
    pub name: &'static str,
    /// Crate version.
    pub version: &'static str,
}

impl Default for ToolInfo {
    fn default() -> Self {
        ToolInfo {
            name: env!("CARGO_PKG_NAME"),
            version: env!("CARGO_PKG_VERSION"),
        }
    }
}

/// Which policy judged the scan.
#[derive(Debug, Clone, Serialize)]
pub struct PolicyInfo {
    /// `built-in:default`, or the policy file's path as given.
    pub source: String,
    /// SHA-256 of the policy text, so a report names exactly the policy that produced it.
    pub sha256: String,
}

/// Settings that influenced the result (not `--jobs`: output is identical for any thread count).
#[derive(Debug, Clone, Serialize)]
pub struct Settings {
    /// What makes the exit code 1.
    pub fail_on: FailOn,
    /// Whether float tensors were scanned for NaN/Inf.
    pub check_values: bool,
    /// Exclude globs in effect (defaults, policy and command line).
    pub excludes: Vec<String>,
    /// Directories skipped by an exclude glob.
    pub excluded: Vec<String>,
    /// Git provenance skipped (`--no-git`).
    pub no_git: bool,
}

/// Git facts about the scanned tree.
#[derive(Debug, Clone, Serialize, Default)]
pub struct GitFacts {
    /// HEAD commit (40 hex), `None` for an unborn branch.
    pub commit: Option<String>,
    /// Branch name, `None` when detached.
    pub branch: Option<String>,
    /// Whether HEAD is detached.
    pub detached: bool,
    /// Tags pointing at HEAD.
    pub tags: Vec<String>,
    /// `origin` URL with credentials stripped.
    pub remote: Option<String>,
    /// Uncommitted changes under the scan root.
    pub dirty: bool,
    /// Shallow clone.
    pub shallow: bool,
    /// The scan root relative to the repository's work tree (`""` at the top, `models/x`
    /// below it); SARIF locations are made relative to the work tree with it.
    pub path_in_repo: Option<String>,
}

/// One scanned file.
#[derive(Debug, Clone, Serialize)]
pub struct FileRecord {
    /// Path relative to the scan root ('/'-separated; invalid UTF-8 bytes as `\xNN`).
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// SHA-256 of the content; `null` when it could not be read.
    pub sha256: Option<String>,
    /// SHA-512 when `--hash sha512` was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha512: Option<String>,
    /// Role.
    pub kind: Kind,
    /// Detected format (`symlink`/`special` entries use `unknown`).
    pub format: Format,
    /// Format facts (keys documented in the README).
    pub facts: Map<String, Value>,
}

/// Counts for the summary line.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Summary {
    /// Files in the report.
    pub files: u64,
    /// Bytes scanned.
    pub bytes: u64,
    /// Findings denied.
    pub denied: u64,
    /// Findings warned.
    pub warned: u64,
    /// Findings allowed (recorded only).
    pub allowed: u64,
    /// Files per format.
    pub formats: BTreeMap<String, u64>,
}

/// A whole scan.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Always 1 for this layout.
    pub schema_version: u32,
    /// The producing tool.
    pub tool: ToolInfo,
    /// The scan root as given on the command line.
    pub root: String,
    /// The policy.
    pub policy: PolicyInfo,
    /// Settings that influenced the result.
    pub settings: Settings,
    /// Git facts, `null` when not in a repository or `--no-git`.
    pub git: Option<GitFacts>,
    /// Repository-level facts (Hugging Face cache identity, model directories).
    pub repository: Map<String, Value>,
    /// Files, sorted by path.
    pub files: Vec<FileRecord>,
    /// Findings, sorted by path, rule and location.
    pub findings: Vec<Finding>,
    /// Counts.
    pub summary: Summary,
}

impl Report {
    /// Fills `summary` from files and findings.
    pub fn summarize(&mut self) {
        let mut s = Summary {
            files: self.files.len() as u64,
            bytes: self.files.iter().map(|f| f.size).sum(),
            ..Summary::default()
        };
        for f in &self.files {
            *s.formats.entry(f.format.as_str().to_string()).or_default() += 1;
        }
        for f in &self.findings {
            match f.action {
                Action::Deny => s.denied += 1,
                Action::Warn => s.warned += 1,
                Action::Allow => s.allowed += 1,
            }
        }
        self.summary = s;
    }

    /// The exit code the scan ends with: 1 when a finding reaches `fail_on`, else 0.
    pub fn exit_code(&self) -> u8 {
        let threshold = match self.settings.fail_on {
            FailOn::Never => return 0,
            FailOn::Deny => Action::Deny,
            FailOn::Warn => Action::Warn,
        };
        u8::from(self.findings.iter().any(|f| f.action >= threshold))
    }
}
