//! Text files that carry provenance: Python sources and notebooks (hub downloads, pinned
//! revisions, `trust_remote_code`, unsafe loads), model cards (license, datasets, training-data
//! notes) and `config.json` / `tokenizer_config.json` (`auto_map` custom code).
//!
//! Parsing lives in `crate::provenance`; this module turns its items into facts and detections.

use crate::code::python::hub;
use crate::model::facts::Fact;
use crate::model::problem::ProblemKind;
use std::io::{self, BufRead};

use serde_json::{Value, json};

use super::context::Ctx;
use super::read;
use crate::code::python::{CodeItem, ItemKind, RepoRef, RevisionState, TrustValue, behaviour};
use crate::code::{notebook, python as code};
use crate::model::finding::{Location, Severity};
use crate::model::rules::RuleId;
use crate::provenance::{automap, card};

/// Reads the file as text within `limit`; a larger file gets SCAN004 and `None`.
fn read_text(
    ctx: &mut Ctx<'_>,
    r: &mut dyn BufRead,
    limit: u64,
    limit_name: &str,
) -> io::Result<Option<String>> {
    let (bytes, more) = read::read_bounded(r, limit)?;
    if more {
        over_limit(ctx, limit, limit_name);
        return Ok(None);
    }
    Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
}

/// SCAN004 for a text file over `limit_name`.
fn over_limit(ctx: &mut Ctx<'_>, limit: u64, limit_name: &str) {
    let cfg = ctx.cfg;
    let d = ctx.detect(
        RuleId::LimitExceeded,
        limit_name,
        format!("file is larger than the {limit_name} limit ({limit} bytes); its contents were not checked"),
        Location::default(),
    );
    super::context::name_limit(d, cfg, limit_name);
}

fn repo_text(repo: &RepoRef) -> String {
    match repo {
        RepoRef::Literal { value } => value.clone(),
        RepoRef::Constant { name, value } => format!("{value} (from {name})"),
        RepoRef::FString { text } => text.clone(),
        RepoRef::Unverifiable { expr } => expr.clone(),
    }
}

/// Whether a revision counts as pinned under the policy's `pinned_revisions` forms.
fn is_pinned(rev: &RevisionState, forms: &[String]) -> bool {
    match rev {
        RevisionState::Pinned { .. } => true,
        RevisionState::BranchOrTag { .. } => forms.iter().any(|f| f == "tag"),
        RevisionState::ShortSha { .. } => forms.iter().any(|f| f == "short-sha"),
        RevisionState::Missing | RevisionState::Unverifiable { .. } => false,
    }
}

/// Records one code item. `cell` is the 1-based notebook cell it came from.
fn record_item(ctx: &mut Ctx<'_>, item: &CodeItem, cell: Option<usize>) {
    let loc = Location::line_col(item.line as u64, item.column as u64);
    let where_ = cell.map(|c| format!(" (cell {c})")).unwrap_or_default();
    let cell_key = cell.map(|c| format!("cell{c}:")).unwrap_or_default();
    let d = match &item.kind {
        ItemKind::HubDownload {
            repo,
            revision,
            api,
        } => {
            if is_pinned(revision, &ctx.cfg.pinned_revisions) {
                return;
            }
            let repo_s = repo_text(repo);
            let why = match revision {
                RevisionState::Missing => {
                    "has no `revision=`; it follows the default branch".to_string()
                }
                RevisionState::BranchOrTag { value, .. } => {
                    format!("pins `revision=\"{value}\"`, a branch or tag that can move")
                }
                RevisionState::ShortSha { value, .. } => {
                    format!("pins the abbreviated commit `{value}`; use the full 40-hex commit id")
                }
                RevisionState::Unverifiable { expr } => {
                    format!("takes its revision from `{expr}`, which cannot be verified statically")
                }
                RevisionState::Pinned { .. } => return,
            };
            let state = match revision {
                RevisionState::Missing => "missing",
                RevisionState::BranchOrTag { .. } => "branch-or-tag",
                RevisionState::ShortSha { .. } => "short-sha",
                RevisionState::Unverifiable { .. } => "unverifiable",
                RevisionState::Pinned { .. } => "pinned",
            };
            // A repository held in a variable or f-string may as well be a local directory:
            // still worth a look, but not with the confidence of a literal hub id.
            let known = matches!(repo, RepoRef::Literal { .. } | RepoRef::Constant { .. });
            let message = if known {
                format!("`{}` downloads `{repo_s}`{where_} and {why}", item.callee)
            } else {
                format!(
                    "`{}` loads `{repo_s}`{where_}, which cannot be resolved statically (a hub id or a local path), and {why}",
                    item.callee
                )
            };
            let hub_id = match repo {
                RepoRef::Literal { value } | RepoRef::Constant { value, .. } => {
                    Some(value.as_str()).filter(|v| hub::is_hub_id_shaped(v))
                }
                _ => None,
            };
            let (rule, message) = match hub_id.filter(|v| hub::is_local_folder_name(v)) {
                Some(id) => (
                    RuleId::ModelConfusion,
                    hub::model_confusion_message(&item.callee, id, &where_),
                ),
                None => (RuleId::UnpinnedRevision, message),
            };
            let d = ctx.detect(
                rule,
                format!("{cell_key}{api}:{repo_s}:{}", item.excerpt),
                message,
                loc,
            );
            if !known {
                d.severity = Severity::Low;
            }
            d.evidence.insert("api".into(), json!(api));
            d.evidence.insert("repo".into(), json!(repo_s));
            d.evidence.insert("revision".into(), json!(state));
            if let Some(id) = hub_id {
                d.evidence.insert("hub_id".into(), json!(id));
            }
            if rule == RuleId::ModelConfusion {
                d.evidence.insert("why".into(), json!("local-folder-name"));
            }
            d
        }
        ItemKind::TrustRemoteCode { value } => {
            let (how, sev) = match value {
                TrustValue::Literal => (
                    "passes `trust_remote_code=True`".to_string(),
                    Severity::High,
                ),
                TrustValue::Constant { name } => (
                    format!("passes `trust_remote_code` from the constant `{name}` (True)"),
                    Severity::High,
                ),
                TrustValue::Unverifiable { expr } => (
                    format!(
                        "passes `trust_remote_code={expr}`, which cannot be verified statically"
                    ),
                    Severity::Medium,
                ),
            };
            let d = ctx.detect(
                RuleId::TrustRemoteCode,
                format!("{cell_key}trust:{}", item.excerpt),
                format!(
                    "`{}`{where_} {how}: it runs code downloaded with the model",
                    item.callee
                ),
                loc,
            );
            d.severity = sev;
            d
        }
        ItemKind::UnsafeLoad { code, reason } => {
            let d = ctx.detect(
                RuleId::UnsafeLoadCall,
                format!("{cell_key}{code}:{}", item.excerpt),
                format!("`{}`{where_}: {reason}", item.callee),
                loc,
            );
            d.evidence.insert("call".into(), json!(code));
            d
        }
    };
    d.evidence.insert("excerpt".into(), json!(item.excerpt));
    if let Some(c) = cell {
        d.evidence.insert("cell".into(), json!(c));
    }
}

fn code_limits(ctx: &Ctx<'_>) -> code::Limits {
    code::Limits {
        max_source_bytes: usize::try_from(ctx.cfg.limits.code_file_bytes).unwrap_or(usize::MAX),
        blob: code::decode::Limits::from(&ctx.cfg.limits),
        eval: code::budget::Limits::from(&ctx.cfg.limits),
        ..code::Limits::default()
    }
}

/// Most sites listed in one SRC006 finding's evidence (the count says how many there were).
const MAX_LISTED_SITES: usize = 100;

/// SRC006: one detection per capability of a model code file (or archive member), listing every
/// site; severity is the worst site's. Also records the `python_capabilities` fact.
pub(super) fn record_behaviour(
    ctx: &mut Ctx<'_>,
    behaviour: &behaviour::Behaviour,
    member: Option<&str>,
) {
    let mut facts = serde_json::Map::new();
    for cap in behaviour.capabilities() {
        let sites: Vec<&behaviour::Site> = behaviour
            .sites
            .iter()
            .filter(|s| s.capability == cap)
            .collect();
        let Some(worst) = sites
            .iter()
            .copied()
            .max_by(|a, b| a.severity.cmp(&b.severity).then(b.line.cmp(&a.line)))
        else {
            continue;
        };
        facts.insert(
            cap.code().into(),
            json!({"sites": sites.len(), "severity": worst.severity.as_str()}),
        );
        let more = match sites.len() {
            1 => String::new(),
            n => format!(
                " (and {} more site{})",
                n - 1,
                if n == 2 { "" } else { "s" }
            ),
        };
        let payload = worst
            .decoded
            .as_ref()
            .map(|d| format!("; decoded ({}): `{}`", d.chain.join(" -> "), d.excerpt))
            .unwrap_or_default();
        let inside = member.map(|m| format!(" in `{m}`")).unwrap_or_default();
        let message = format!(
            "model code{inside} {}: `{}` {} at line {}, {}{payload}{more}",
            cap.phrase(),
            worst.call,
            worst.detail,
            worst.line,
            worst.when.describe(),
        );
        let mut cwes: Vec<String> = sites.iter().map(|s| format!("CWE-{}", s.cwe)).collect();
        cwes.sort();
        cwes.dedup();
        let listed: Vec<Value> = sites
            .iter()
            .take(MAX_LISTED_SITES)
            .map(|s| site_json(s))
            .collect();
        let libraries: Vec<&str> = sites.iter().filter_map(|s| s.library.as_deref()).collect();
        let key = match member {
            Some(m) => format!("{m}:{}", cap.code()),
            None => cap.code().to_owned(),
        };
        let loc = Location {
            line: Some(worst.line as u64),
            column: Some(worst.column as u64),
            member: member.map(str::to_owned),
            ..Location::default()
        };
        let d = ctx.detect(RuleId::CustomCodeBehaviour, key, message, loc);
        d.severity = worst.severity;
        d.evidence.insert("capability".into(), json!(cap.code()));
        d.evidence.insert("call".into(), json!(worst.call));
        d.evidence
            .insert("confidence".into(), json!(worst.confidence.as_str()));
        d.evidence
            .insert("when".into(), json!(worst.when.describe()));
        d.evidence.insert("cwe".into(), json!(cwes));
        d.evidence.insert("site_count".into(), json!(sites.len()));
        d.evidence.insert("sites".into(), Value::Array(listed));
        if let Some(dec) = &worst.decoded {
            d.evidence.insert("decode_chain".into(), json!(dec.chain));
            d.evidence
                .insert("payload_excerpt".into(), json!(dec.excerpt));
        }
        if !libraries.is_empty() {
            d.evidence.insert("libraries".into(), json!(libraries));
        }
    }
    if let Some(limit) = behaviour.limit_hit {
        // A blob the limits stopped is code nobody looked at: say so (SCAN004).
        let cfg = ctx.cfg;
        let inside = member.map(|m| format!(" in `{m}`")).unwrap_or_default();
        let what = if limit.starts_with("code_eval_") {
            // Issue 37: the file's evaluation budget gave a value up; the call it was passed
            // to is still reported (SRC006) as computed at run time.
            format!("an expression{inside} was not evaluated to the end")
        } else {
            format!("a literal blob{inside} was not decoded to the end")
        };
        let d = ctx.detect(
            RuleId::LimitExceeded,
            format!(
                "{limit}{}",
                member.map(|m| format!(":{m}")).unwrap_or_default()
            ),
            format!(
                "{what}: [limits] {limit} stopped it; {}",
                super::context::raise_hint(limit)
            ),
            Location {
                member: member.map(str::to_owned),
                ..Location::default()
            },
        );
        super::context::name_limit(d, cfg, limit);
    }
    if !facts.is_empty() && member.is_none() {
        ctx.fact(Fact::PythonCapabilities, Value::Object(facts));
    }
}

fn site_json(s: &behaviour::Site) -> Value {
    let mut v = json!({
        "line": s.line,
        "column": s.column,
        "call": s.call,
        "detail": s.detail,
        "when": s.when.describe(),
        "severity": s.severity.as_str(),
        "confidence": s.confidence.as_str(),
        "cwe": format!("CWE-{}", s.cwe),
    });
    if let Value::Object(m) = &mut v {
        if let behaviour::When::Call {
            function,
            reached_from,
        } = &s.when
        {
            m.insert("function".into(), json!(function));
            if !reached_from.is_empty() {
                m.insert("reached_from".into(), json!(reached_from));
            }
        }
        if let Some(d) = &s.decoded {
            m.insert("decode_chain".into(), json!(d.chain));
            m.insert("payload_excerpt".into(), json!(d.excerpt));
        }
        if let Some(l) = &s.library {
            m.insert("library".into(), json!(l));
        }
    }
    v
}

/// Python source: downloads, trust_remote_code, unsafe loads; for model code (a file a model
/// loader imports), what it does (SRC006) from the same parse.
pub fn inspect_python(ctx: &mut Ctx<'_>, r: &mut dyn BufRead) -> io::Result<()> {
    let limit = ctx.cfg.limits.code_file_bytes;
    let (bytes, more) = read::read_bounded(r, limit)?;
    if more {
        over_limit(ctx, limit, "code_file_bytes");
        return Ok(());
    }
    // A stub (`.pyi`) is read by type checkers and never run by Python (the import system
    // does not load it): its calls download and load nothing, so they are not findings.
    let stub = crate::classify::extension(ctx.rel) == "pyi";
    if ctx.cfg.model_code.contains(ctx.rel) {
        let text = String::from_utf8_lossy(&bytes);
        let (report, behaviour) = code::scan_and_analyze(&text, &code_limits(ctx));
        for item in report.calls.iter().filter(|_| !stub) {
            record_item(ctx, item, None);
        }
        record_behaviour(ctx, &behaviour, None);
        ctx.fact(Fact::PythonSyntaxErrors, report.syntax_errors);
        if let Some(by) = report.truncated_by.or(behaviour.truncated_by) {
            ctx.fact(Fact::PythonTruncatedBy, by);
        }
        return Ok(());
    }
    // The pre-filter runs on the bytes as read, before any decoding: most Python files cannot
    // yield an item and are neither decoded nor parsed (issue 22).
    let report = if !stub && code::may_report(&bytes) {
        let text = String::from_utf8_lossy(&bytes);
        code::scan_python_statements(&text, &code_limits(ctx))
    } else {
        code::CodeReport::default()
    };
    for item in &report.calls {
        record_item(ctx, item, None);
    }
    ctx.fact(Fact::PythonSyntaxErrors, report.syntax_errors);
    if let Some(by) = report.truncated_by {
        ctx.fact(Fact::PythonTruncatedBy, by);
    }
    Ok(())
}

/// A `.py` member of a model archive: its behaviour (SRC006), located by member.
pub(super) fn inspect_python_member(
    ctx: &mut Ctx<'_>,
    r: &mut dyn BufRead,
    member: &str,
) -> io::Result<()> {
    let limit = ctx.cfg.limits.code_file_bytes;
    let (bytes, more) = read::read_bounded(r, limit)?;
    if more {
        let cfg = ctx.cfg;
        let d = ctx.detect(
            RuleId::LimitExceeded,
            format!("code_file_bytes:{member}"),
            format!("archive member `{member}` is larger than the code_file_bytes limit ({limit} bytes); its code was not checked"),
            Location {
                member: Some(member.to_owned()),
                ..Location::default()
            },
        );
        super::context::name_limit(d, cfg, "code_file_bytes");
        return Ok(());
    }
    let text = String::from_utf8_lossy(&bytes);
    let behaviour = behaviour::analyze(&text, &code_limits(ctx));
    record_behaviour(ctx, &behaviour, Some(member));
    Ok(())
}

/// A notebook shipped in a model directory: its code cells' behaviour (SRC006), analysed as one
/// source (bindings flow from cell to cell), each site named with its cell.
fn notebook_behaviour(ctx: &mut Ctx<'_>, bytes: &[u8]) {
    let Some(cells) = notebook::python_cells(bytes, &notebook::Limits::default()) else {
        return;
    };
    let mut source = String::new();
    let mut starts: Vec<(usize, usize)> = Vec::new();
    let mut line = 1usize;
    for (number, text) in &cells {
        starts.push((line, *number));
        source.push_str(text);
        if !text.ends_with('\n') {
            source.push('\n');
        }
        line = line.saturating_add(text.lines().count().max(1));
    }
    let mut behaviour = behaviour::analyze(&source, &code_limits(ctx));
    for site in &mut behaviour.sites {
        if let Some((first, number)) = starts.iter().rev().find(|(first, _)| *first <= site.line) {
            site.line = site.line - first + 1;
            site.detail = format!("{} (cell {number})", site.detail);
        }
    }
    record_behaviour(ctx, &behaviour, None);
}

/// Jupyter notebook: each code cell scanned like a Python file.
pub fn inspect_notebook(ctx: &mut Ctx<'_>, r: &mut dyn BufRead) -> io::Result<()> {
    let limit = ctx.cfg.limits.json_bytes;
    let (bytes, more) = read::read_bounded(r, limit)?;
    if more {
        let d = ctx.detect(
            RuleId::LimitExceeded,
            "json_bytes",
            format!("notebook is larger than the json_bytes limit ({limit} bytes); not checked"),
            Location::default(),
        );
        d.evidence.insert("limit".into(), json!("json_bytes"));
        return Ok(());
    }
    if ctx.cfg.model_code.contains(ctx.rel) {
        notebook_behaviour(ctx, &bytes);
    }
    match notebook::scan_notebook(&bytes, &notebook::Limits::default()) {
        Ok(report) => {
            for item in &report.items {
                record_item(ctx, &item.item, Some(item.cell_number));
            }
            ctx.fact(Fact::NotebookCellsScanned, report.cells_scanned as u64);
            if let Some(l) = &report.language {
                ctx.fact(Fact::NotebookLanguage, l.as_str());
            }
        }
        Err(e) => ctx.fact(Fact::NotebookError, e.message),
    }
    Ok(())
}

/// A model card: front matter facts (checked against the policy at the repository level).
pub fn inspect_card(ctx: &mut Ctx<'_>, r: &mut dyn BufRead) -> io::Result<Option<card::CardFacts>> {
    let limit = ctx.cfg.limits.code_file_bytes;
    let Some(text) = read_text(ctx, r, limit, "code_file_bytes")? else {
        return Ok(None);
    };
    let limits = card::Limits {
        max_front_matter_bytes: usize::try_from(ctx.cfg.limits.yaml_bytes).unwrap_or(usize::MAX),
        max_yaml_nodes: ctx.cfg.limits.yaml_nodes,
        ..card::Limits::default()
    };
    let facts = card::parse_card(&text, &limits);
    if let card::FrontMatterState::TooLarge { bytes, limit } = &facts.front_matter {
        // Padding the front matter must not turn its fields into a mere "missing field" warning.
        let cfg = ctx.cfg;
        let d = ctx.detect(
            RuleId::LimitExceeded,
            "yaml_bytes",
            format!(
                "model card front matter is {bytes} bytes, over the yaml_bytes limit ({limit}); it was not read"
            ),
            Location::default(),
        );
        super::context::name_limit(d, cfg, "yaml_bytes");
    }
    if let card::FrontMatterState::TooManyNodes { limit } = &facts.front_matter {
        let cfg = ctx.cfg;
        let d = ctx.detect(
            RuleId::LimitExceeded,
            "yaml_nodes",
            format!(
                "model card front matter expands (through YAML aliases) past the yaml_nodes limit ({limit} nodes); it was not read"
            ),
            Location::default(),
        );
        super::context::name_limit(d, cfg, "yaml_nodes");
    }
    let mut v = serde_json::to_value(&facts).unwrap_or(Value::Null);
    // The SPDX form of each license, for the SBOM.
    let spdx: Vec<&str> = facts
        .license
        .iter()
        .filter_map(|l| card::hub_to_spdx(l))
        .collect();
    if let Value::Object(m) = &mut v
        && !spdx.is_empty()
    {
        m.insert("license_spdx".into(), json!(spdx));
    }
    ctx.fact(Fact::Card, v);
    Ok(Some(facts))
}

/// `config.json` / `tokenizer_config.json`: architecture facts and `auto_map` entries.
pub fn inspect_config(ctx: &mut Ctx<'_>, r: &mut dyn BufRead) -> io::Result<()> {
    let limit = ctx.cfg.limits.json_bytes;
    let (bytes, more) = read::read_bounded(r, limit)?;
    // A config padded past the limit must not hide its `auto_map` (custom code, SRC001) by
    // being skipped silently: say that it was not checked.
    if more {
        config_over_limit(ctx, limit);
        return Ok(());
    }
    super::config::check_json(ctx, &bytes, None);
    super::config::check_loader_code(ctx, &bytes);
    super::formats::check_json_templates(ctx, &bytes);
    let limits = automap::Limits {
        max_json_bytes: usize::try_from(limit).unwrap_or(usize::MAX),
        ..automap::Limits::default()
    };
    match automap::config_facts(&bytes, &limits) {
        Ok(facts) => ctx.fact(
            Fact::Config,
            serde_json::to_value(&facts).unwrap_or(Value::Null),
        ),
        Err(p) if p.kind == ProblemKind::LimitExceeded => config_over_limit(ctx, limit),
        Err(e) => ctx.fact(Fact::ConfigError, e.message),
    }
    Ok(())
}

fn config_over_limit(ctx: &mut Ctx<'_>, limit: u64) {
    let d = ctx.detect(
        RuleId::LimitExceeded,
        "json_bytes",
        format!("config is larger than the json_bytes limit ({limit} bytes); its auto_map was not checked"),
        Location::default(),
    );
    d.evidence.insert("limit".into(), json!("json_bytes"));
}
