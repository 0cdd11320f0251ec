//! SARIF 2.1.0 for code scanning (GitHub and other SARIF consumers).
//!
//! The wire structs here are SARIF's, not ours: [`Report`] and [`Finding`] do not grow fields to
//! suit this format; a `From<&Report>` maps one onto the other. `rules[]` is the whole registry so
//! `ruleIndex` is stable across runs, `level` follows the policy's action (what the gate did) and
//! `security-severity` follows the severity (how bad it is), which is how GitHub ranks alerts.
//!
//! Paths come from the scanned tree, so an attacker chooses them: the artifact URI is a
//! percent-encoded relative reference ([`percent_encode_path`]), so a name like `c:x`, `a#b` or
//! `%2e%2e` cannot turn into a scheme, a fragment or a parent directory in the consumer.

use std::collections::BTreeMap;
use std::io::{self, Write};

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::model::finding::{Action, Finding, Severity};
use crate::model::report::Report;
use crate::model::rules::RuleId;

/// The JSON schema URI written into `$schema`.
pub const SCHEMA_URI: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// GitHub code scanning accepts at most this many results per run; the most severe are kept.
pub const MAX_RESULTS: usize = 25_000;

/// The `partialFingerprints` key under which the finding's fingerprint is published.
pub const FINGERPRINT_KEY: &str = "modelgateFingerprint/v1";

/// The base id that artifact URIs are relative to.
pub const SRCROOT: &str = "%SRCROOT%";

/// A SARIF log with one run.
#[derive(Debug, Serialize)]
pub struct SarifLog {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: Vec<Run>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Run {
    tool: Tool,
    #[serde(skip_serializing_if = "Option::is_none")]
    automation_details: Option<AutomationDetails>,
    original_uri_base_ids: BTreeMap<&'static str, BaseLocation>,
    invocations: Vec<Invocation>,
    column_kind: &'static str,
    results: Vec<SarifResult>,
    properties: RunProperties,
}

#[derive(Debug, Serialize)]
struct Tool {
    driver: Driver,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver {
    name: &'static str,
    version: &'static str,
    semantic_version: &'static str,
    information_uri: &'static str,
    rules: Vec<Rule>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Rule {
    id: &'static str,
    name: &'static str,
    short_description: Text,
    full_description: Text,
    help: Help,
    help_uri: String,
    default_configuration: Configuration,
    properties: RuleProperties,
}

#[derive(Debug, Serialize)]
struct Text {
    text: String,
}

#[derive(Debug, Serialize)]
struct Help {
    text: String,
    markdown: String,
}

#[derive(Debug, Serialize)]
struct Configuration {
    level: &'static str,
}

#[derive(Debug, Serialize)]
struct RuleProperties {
    tags: Vec<&'static str>,
    #[serde(rename = "security-severity")]
    security_severity: &'static str,
    precision: &'static str,
}

#[derive(Debug, Serialize)]
struct AutomationDetails {
    id: String,
}

#[derive(Debug, Serialize)]
struct BaseLocation {
    description: Text,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Invocation {
    execution_successful: bool,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct RunProperties {
    truncated: bool,
    total_results: usize,
    policy: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    commit: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult {
    rule_id: &'static str,
    rule_index: usize,
    level: &'static str,
    message: Text,
    locations: Vec<ResultLocation>,
    /// Every site of a finding that lists several (SRC006: one finding per file and capability).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    related_locations: Vec<RelatedLocation>,
    partial_fingerprints: BTreeMap<&'static str, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    suppressions: Option<Vec<Value>>,
    properties: Map<String, Value>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ResultLocation {
    physical_location: PhysicalLocation,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct RelatedLocation {
    id: usize,
    physical_location: PhysicalLocation,
    message: Text,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation {
    artifact_location: ArtifactLocation,
    #[serde(skip_serializing_if = "Option::is_none")]
    region: Option<Region>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ArtifactLocation {
    uri: String,
    uri_base_id: &'static str,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    #[serde(skip_serializing_if = "Option::is_none")]
    start_line: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    start_column: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    byte_offset: Option<u64>,
}

/// SARIF `level` for a policy action: what the gate did decides how loud the alert is.
pub fn level(action: Action) -> &'static str {
    match action {
        Action::Deny => "error",
        Action::Warn => "warning",
        Action::Allow => "note",
    }
}

/// SARIF `level` for a rule's default severity (`defaultConfiguration.level`).
pub fn default_level(severity: Severity) -> &'static str {
    match severity {
        Severity::Critical | Severity::High => "error",
        Severity::Medium => "warning",
        Severity::Low | Severity::Info => "note",
    }
}

/// GitHub's `security-severity` score (a decimal string, 0.0-10.0) for a severity.
pub fn security_severity(severity: Severity) -> &'static str {
    match severity {
        Severity::Critical => "9.5",
        Severity::High => "8.0",
        Severity::Medium => "5.5",
        Severity::Low => "2.0",
        Severity::Info => "0.0",
    }
}

/// Percent-encodes a relative path (RFC 3986) for use as a URI reference: every byte outside the
/// unreserved set (`A-Z a-z 0-9 - . _ ~`) is encoded, `/` is kept as the segment separator.
/// Encoding `:` keeps a first segment like `c:x` from reading as a scheme; encoding `%`, `#` and
/// `?` keeps names from smuggling escapes, fragments or queries.
pub fn percent_encode_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The artifact URI of a finding's path: the encoded relative path, or `.` (the scan root) for
/// findings about the repository as a whole. GitHub rejects results without a location.
/// `prefix` is the scan root's place in the git work tree, so that code scanning (which resolves
/// `%SRCROOT%` to the repository root) finds the file when a subdirectory was scanned.
fn artifact_uri(prefix: &str, path: &str) -> String {
    let full = match (prefix.trim_matches('/'), path) {
        ("", "") => return ".".to_string(),
        ("", p) => p.to_string(),
        (d, "") => d.to_string(),
        (d, p) => format!("{d}/{p}"),
    };
    percent_encode_path(&full)
}

fn rule_index(rule: RuleId) -> usize {
    RuleId::ALL.iter().position(|r| *r == rule).unwrap_or(0)
}

fn rule(r: RuleId) -> Rule {
    let sev = r.default_severity();
    Rule {
        id: r.code(),
        name: r.name(),
        short_description: Text {
            text: r.summary().to_string(),
        },
        full_description: Text {
            text: r.help().to_string(),
        },
        help: Help {
            text: r.help().to_string(),
            markdown: format!(
                "**{} `{}`**: {}\n\n{}",
                r.code(),
                r.name(),
                r.summary(),
                r.help()
            ),
        },
        // The README's rule table documents every code; code scanning links it as "Learn more".
        help_uri: format!("{}#rules", readme_uri()),
        default_configuration: Configuration {
            level: default_level(sev),
        },
        properties: RuleProperties {
            tags: ["security", r.area()]
                .into_iter()
                .chain(cwe_tags(r).iter().copied())
                .collect(),
            security_severity: security_severity(sev),
            precision: "high",
        },
    }
}

/// The README on the default branch of the repository named in Cargo.toml.
fn readme_uri() -> String {
    format!("{}/blob/main/README.md", env!("CARGO_PKG_REPOSITORY"))
}

/// CWE tags of a rule, each in the plain form (`CWE-502`) and in the form GitHub code scanning
/// recognises (`external/cwe/cwe-502`). CWE-502 deserialization of untrusted data, CWE-94 code
/// injection, CWE-125/787 out-of-bounds read/write, CWE-409 highly compressed data, CWE-1336
/// template injection, CWE-494 code download without integrity check, CWE-22 path traversal,
/// CWE-59 link following, CWE-20 improper input validation.
fn cwe_tags(r: RuleId) -> &'static [&'static str] {
    const DESER: &[&str] = &["CWE-502", "external/cwe/cwe-502"];
    const DESER_CODE: &[&str] = &[
        "CWE-502",
        "external/cwe/cwe-502",
        "CWE-94",
        "external/cwe/cwe-94",
    ];
    match r.code() {
        "PKL001" | "CFG001" | "CFG002" | "FMT003" => DESER_CODE,
        "PKL002" | "PKL003" | "PKL004" | "SRC004" => DESER,
        "FMT009" => &[
            "CWE-125",
            "external/cwe/cwe-125",
            "CWE-787",
            "external/cwe/cwe-787",
        ],
        "ARC001" => &["CWE-409", "external/cwe/cwe-409"],
        "FMT005" => &["CWE-1336", "external/cwe/cwe-1336"],
        "SRC002" | "SRC003" => &["CWE-494", "external/cwe/cwe-494"],
        "FMT004" => &["CWE-22", "external/cwe/cwe-22"],
        "SCAN002" => &["CWE-59", "external/cwe/cwe-59"],
        "ST001" => &["CWE-20", "external/cwe/cwe-20"],
        // Process execution, eval injection, download of code, credentials, hidden
        // functionality, untrusted inclusion, process control (native loads): per finding,
        // `properties.tags` names the ones its sites have.
        "SRC006" => &[
            "CWE-78",
            "external/cwe/cwe-78",
            "CWE-95",
            "external/cwe/cwe-95",
            "CWE-494",
            "external/cwe/cwe-494",
            "CWE-522",
            "external/cwe/cwe-522",
            "CWE-912",
            "external/cwe/cwe-912",
            "CWE-829",
            "external/cwe/cwe-829",
            "CWE-114",
            "external/cwe/cwe-114",
        ],
        _ => &[],
    }
}

fn message(f: &Finding) -> String {
    match &f.location.member {
        // Messages about a member usually name it already; say it once.
        Some(m) if !f.message.contains(m.as_str()) => {
            format!("{} (in archive member `{m}`)", f.message)
        }
        Some(_) => f.message.clone(),
        None => f.message.clone(),
    }
}

fn region(f: &Finding) -> Option<Region> {
    let l = &f.location;
    match (l.line, l.offset) {
        (Some(line), offset) => Some(Region {
            start_line: Some(line.max(1)),
            start_column: l.column.map(|c| c.max(1)),
            byte_offset: offset,
        }),
        // Binary files have no lines: a byte offset only. A `startLine` would make uploaders
        // read and line-hash the whole weight file (minutes per multi-GB shard).
        (None, Some(offset)) => Some(Region {
            start_line: None,
            start_column: None,
            byte_offset: Some(offset),
        }),
        (None, None) => None,
    }
}

/// A finding the policy allowed (by level or by an audited exception) is reported but
/// suppressed, so code scanning does not open an alert for it.
fn suppressions(f: &Finding, policy: &str) -> Option<Vec<Value>> {
    if f.action != Action::Allow {
        return None;
    }
    let justification = match &f.exception {
        Some(reason) => reason.clone(),
        None => format!("allowed by policy {policy}"),
    };
    Some(vec![json!({
        "kind": "external",
        "status": "accepted",
        "justification": justification,
    })])
}

fn result(prefix: &str, policy: &str, f: &Finding) -> SarifResult {
    let mut properties = Map::new();
    properties.insert("severity".into(), json!(f.severity.as_str()));
    properties.insert("action".into(), json!(f.action.as_str()));
    properties.insert("path".into(), json!(f.path));
    if let Some(m) = &f.location.member {
        properties.insert("member".into(), json!(m));
    }
    if let Some(reason) = &f.exception {
        properties.insert("exception".into(), json!(reason));
    }
    if !f.evidence.is_empty() {
        properties.insert("evidence".into(), json!(f.evidence));
    }
    // A finding's own CWE ids (SRC006 sites carry them), in both tag forms.
    if let Some(cwes) = f.evidence.get("cwe").and_then(Value::as_array) {
        let tags: Vec<String> = cwes
            .iter()
            .filter_map(Value::as_str)
            .flat_map(|c| {
                [
                    c.to_owned(),
                    format!("external/cwe/{}", c.to_ascii_lowercase()),
                ]
            })
            .collect();
        properties.insert("tags".into(), json!(tags));
    }
    let related_locations = f
        .evidence
        .get("sites")
        .and_then(Value::as_array)
        .map(|sites| {
            sites
                .iter()
                .filter_map(|s| {
                    let line = s.get("line").and_then(Value::as_u64)?;
                    let text = format!(
                        "`{}` {} ({})",
                        s.get("call").and_then(Value::as_str).unwrap_or_default(),
                        s.get("detail").and_then(Value::as_str).unwrap_or_default(),
                        s.get("when").and_then(Value::as_str).unwrap_or_default()
                    );
                    Some((line, s.get("column").and_then(Value::as_u64), text))
                })
                .enumerate()
                .map(|(id, (line, column, text))| RelatedLocation {
                    id,
                    physical_location: PhysicalLocation {
                        artifact_location: ArtifactLocation {
                            uri: artifact_uri(prefix, &f.path),
                            uri_base_id: SRCROOT,
                        },
                        region: Some(Region {
                            start_line: Some(line.max(1)),
                            start_column: column.map(|c| c.max(1)),
                            byte_offset: None,
                        }),
                    },
                    message: Text { text },
                })
                .collect()
        })
        .unwrap_or_default();
    SarifResult {
        rule_id: f.rule.code(),
        rule_index: rule_index(f.rule),
        level: level(f.action),
        message: Text { text: message(f) },
        locations: vec![ResultLocation {
            physical_location: PhysicalLocation {
                artifact_location: ArtifactLocation {
                    uri: artifact_uri(prefix, &f.path),
                    uri_base_id: SRCROOT,
                },
                region: region(f),
            },
        }],
        related_locations,
        partial_fingerprints: BTreeMap::from([(FINGERPRINT_KEY, f.fingerprint.clone())]),
        suppressions: suppressions(f, policy),
        properties,
    }
}

/// A stable automation id: the category is the scan root's last component, so two scans of
/// different roots in one workflow do not overwrite each other's alerts.
fn automation_id(root: &str) -> String {
    let base = root
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .filter(|b| !b.is_empty() && *b != "." && *b != "..")
        .unwrap_or("root");
    let safe: String = base
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("modelgate/{safe}/")
}

impl From<&Report> for SarifLog {
    fn from(report: &Report) -> Self {
        // Worst first (stable, so equal findings keep the report's order), then cut to GitHub's
        // per-run limit: truncation drops the least severe results, never a deny.
        let mut ordered: Vec<&Finding> = report.findings.iter().collect();
        ordered.sort_by_key(|f| std::cmp::Reverse((f.action, f.severity)));
        let total = ordered.len();
        ordered.truncate(MAX_RESULTS);
        let prefix = report
            .git
            .as_ref()
            .and_then(|g| g.path_in_repo.as_deref())
            .unwrap_or("");
        let results = ordered
            .into_iter()
            .map(|f| result(prefix, &report.policy.source, f))
            .collect();
        SarifLog {
            schema: SCHEMA_URI,
            version: "2.1.0",
            runs: vec![Run {
                tool: Tool {
                    driver: Driver {
                        name: report.tool.name,
                        version: report.tool.version,
                        semantic_version: report.tool.version,
                        information_uri: env!("CARGO_PKG_REPOSITORY"),
                        rules: RuleId::ALL.iter().map(|r| rule(*r)).collect(),
                    },
                },
                // Set only when asked (`--sarif-category`): an id here overrides the category a
                // workflow gives `upload-sarif`.
                automation_details: None,
                original_uri_base_ids: BTreeMap::from([(
                    SRCROOT,
                    BaseLocation {
                        description: Text {
                            text: "the scan root".into(),
                        },
                    },
                )]),
                invocations: vec![Invocation {
                    execution_successful: true,
                }],
                column_kind: "unicodeCodePoints",
                results,
                properties: RunProperties {
                    truncated: total > MAX_RESULTS,
                    total_results: total,
                    policy: report.policy.source.clone(),
                    commit: report.git.as_ref().and_then(|g| g.commit.clone()),
                },
            }],
        }
    }
}

/// Writes the report as SARIF 2.1.0 (pretty-printed, trailing newline).
pub fn render(report: &Report, w: &mut dyn Write) -> io::Result<()> {
    render_with_category(report, None, w)
}

/// [`render`] with `automationDetails.id` set from `category` (made a safe id, ending in `/`).
pub fn render_with_category(
    report: &Report,
    category: Option<&str>,
    w: &mut dyn Write,
) -> io::Result<()> {
    let mut log = SarifLog::from(report);
    if let (Some(c), Some(run)) = (category, log.runs.first_mut()) {
        run.automation_details = Some(AutomationDetails {
            id: automation_id(c),
        });
    }
    serde_json::to_writer_pretty(&mut *w, &log)?;
    w.write_all(b"\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_everything_but_unreserved_and_slash() {
        assert_eq!(percent_encode_path("a/b c.bin"), "a/b%20c.bin");
        assert_eq!(percent_encode_path("x#y?z%"), "x%23y%3Fz%25");
        assert_eq!(percent_encode_path("c:evil"), "c%3Aevil");
        assert_eq!(percent_encode_path("é\n"), "%C3%A9%0A");
        assert_eq!(percent_encode_path("a\\xFF"), "a%5CxFF");
    }

    #[test]
    fn levels_follow_action_and_severity() {
        assert_eq!(level(Action::Deny), "error");
        assert_eq!(level(Action::Allow), "note");
        assert_eq!(default_level(Severity::High), "error");
        assert_eq!(default_level(Severity::Info), "note");
        assert_eq!(security_severity(Severity::Medium), "5.5");
    }

    #[test]
    fn automation_id_is_a_safe_category() {
        assert_eq!(automation_id("."), "modelgate/root/");
        assert_eq!(automation_id("/x/my model/"), "modelgate/my_model/");
    }
}
