//! The `.pyc` inspector: the thin adapter between the bytecode reader ([`crate::code::bytecode`],
//! which walks, resolves and matches bytecode without knowing about scans) and a scan's
//! [`Ctx`](super::context::Ctx): it reads the file within `bytecode_bytes`, finds the source
//! beside it, records the `bytecode` fact and the problems, and judges the resolved sites.

use std::collections::{BTreeSet, HashMap};

use crate::code::bytecode::marshal::{self, PycKind};
use crate::code::bytecode::{
    LIMIT_CODES, Load, MAX_FACT_NAMES, clip, distinct, matches_source, named_as_data, resolve,
    source_path_of,
};
use crate::code::python::behaviour;

/// What the `.pyc` inspector learned, for the facts and the judgement.
#[derive(Debug, Clone)]
pub struct Inspected {
    /// The parsed file.
    pub pyc: marshal::Pyc,
    /// Resolved sites.
    pub sites: Vec<Load>,
    /// The source beside it: its relative path and whether the pyc matches it (`Err`: why
    /// not); `None` when there is no source to compare with.
    pub source: Option<(String, Result<(), String>)>,
}

/// Reads a `.pyc` from the one sequential read (bounded by `bytecode_bytes`), walks it and
/// compares it with its source when that sits where Python would look for it. Records the
/// `bytecode` fact and the problems (FMT007 malformed, SCAN004 limits); returns what was read
/// for the judgement.
pub fn inspect_pyc(
    ctx: &mut super::context::Ctx<'_>,
    r: &mut dyn std::io::BufRead,
) -> std::io::Result<Option<Inspected>> {
    use crate::model::facts::Fact;
    use serde_json::json;
    let cap = ctx.cfg.limits.bytecode_bytes;
    let (bytes, more) = super::read::read_bounded(r, cap)?;
    if more {
        let cfg = ctx.cfg;
        let d = ctx.detect(
            crate::model::rules::RuleId::LimitExceeded,
            "bytecode_bytes",
            format!(
                "compiled Python over {cap} bytes was not walked; {}",
                super::context::raise_hint("bytecode_bytes")
            ),
            crate::model::finding::Location::default(),
        );
        super::context::name_limit(d, cfg, "bytecode_bytes");
        return Ok(None);
    }
    let limits = marshal::Limits::from(&ctx.cfg.limits);
    let mut summary = serde_json::Map::new();
    if let Ok(h) = marshal::parse_header(&bytes) {
        summary.insert("python".into(), json!(format!("3.{}", h.minor)));
        summary.insert("magic".into(), json!(h.magic));
        match h.kind {
            PycKind::Timestamp { source_size, .. } => {
                summary.insert("header".into(), json!("timestamp"));
                summary.insert("source_size".into(), json!(source_size));
            }
            PycKind::Hash { checked, hash } => {
                summary.insert(
                    "header".into(),
                    json!(if checked {
                        "checked-hash"
                    } else {
                        "unchecked-hash"
                    }),
                );
                summary.insert(
                    "source_hash".into(),
                    json!(crate::model::finding::hex(&hash)),
                );
            }
        }
    }
    let pyc = match marshal::parse_pyc(&bytes, &limits) {
        Ok(p) => p,
        Err(p) => {
            ctx.fact(Fact::Bytecode, serde_json::Value::Object(summary));
            super::formats::record_problems(
                ctx,
                &[p],
                crate::model::rules::RuleId::FormatMalformed,
                None,
                LIMIT_CODES,
            );
            return Ok(None);
        }
    };
    let sites = resolve(&pyc.module, pyc.header.minor);
    let names = distinct(pyc.module.code.iter().flat_map(|c| c.names.iter()));
    let mut resolved: Vec<&str> = sites
        .iter()
        .filter(|s| s.name.contains('.'))
        .map(|s| s.name.as_str())
        .collect();
    resolved.sort_unstable();
    resolved.dedup();
    summary.insert("code_objects".into(), json!(pyc.module.code.len()));
    let qualnames: Vec<String> = pyc
        .module
        .code
        .iter()
        .map(|c| clip(&c.qualname))
        .take(MAX_FACT_NAMES)
        .collect();
    summary.insert("code_names".into(), json!(qualnames));
    summary.insert(
        "names".into(),
        json!(names.iter().take(MAX_FACT_NAMES).collect::<Vec<_>>()),
    );
    summary.insert(
        "resolved".into(),
        json!(resolved.iter().take(MAX_FACT_NAMES).collect::<Vec<_>>()),
    );
    if let Some(first) = pyc.module.code.first() {
        summary.insert("filename".into(), json!(first.filename.as_str()));
    }
    let source = source_path_of(ctx.rel).and_then(|rel| {
        let text = read_source(ctx, &rel)?;
        Some((rel, matches_source(&pyc.header, &pyc.module, &text)))
    });
    if let Some((rel, result)) = &source {
        let mut s = serde_json::Map::new();
        s.insert("path".into(), json!(rel));
        s.insert("matches".into(), json!(result.is_ok()));
        if let Err(why) = result {
            s.insert("reason".into(), json!(why));
        }
        summary.insert("source".into(), serde_json::Value::Object(s));
    }
    ctx.fact(Fact::Bytecode, serde_json::Value::Object(summary));
    Ok(Some(Inspected { pyc, sites, source }))
}

/// SRC006 for a `.pyc` judged on its own (model code whose source is absent or differs): each
/// resolved site that the capability table (`knowledge::capabilities`) lists becomes a
/// behaviour site, with the code object's qualified name, the line its line table gives and
/// when it runs (import time for the module and module-level class bodies), recorded through
/// the same `record_behaviour` as Python source, so the finding reads as the source's would.
///
/// Bytecode shows which callable is loaded, not the arguments the source judge weighs, so the
/// severity is the capability's own: critical for running processes, installing packages,
/// persisting and reading credentials; high for dynamic code and native loads (denied either
/// way); medium for network access, deferral and dynamic imports, whose danger is in the
/// arguments. Entries judged only by their path or value arguments (`open`, `os.environ`,
/// `setattr`) are not sites here: their names still appear in the `bytecode` fact.
pub fn judge(ctx: &mut super::context::Ctx<'_>, pyc: &Inspected) {
    use crate::knowledge::capabilities::{self, Capability, Role};
    use crate::model::finding::Severity;
    if !ctx.cfg.model_code.contains(ctx.rel) {
        return;
    }
    if matches!(&pyc.source, Some((_, Ok(())))) {
        // Reported once, on the source it matches.
        return;
    }
    // Sites repeat the same few names: each distinct name is looked up once.
    let mut entries: HashMap<&str, Option<&'static capabilities::Entry>> = HashMap::new();
    let mut sites = Vec::new();
    for s in &pyc.sites {
        let entry = *entries
            .entry(s.name.as_str())
            .or_insert_with(|| capabilities::lookup(&s.name));
        let Some(entry) = entry else {
            continue;
        };
        let severity = match (entry.capability, entry.role) {
            (_, Role::WritePath | Role::ReadPath | Role::ReadEnv | Role::SetAttr) => continue,
            (
                Capability::ProcessExecution
                | Capability::PackageInstall
                | Capability::Persistence
                | Capability::CredentialAccess,
                Role::Call | Role::Command,
            ) => Severity::Critical,
            (Capability::DynamicCode | Capability::NativeLoad, _) => Severity::High,
            (Capability::ProcessExecution | Capability::PackageInstall, _) => Severity::Critical,
            _ => Severity::Medium,
        };
        sites.push(behaviour::Site {
            capability: entry.capability,
            severity,
            confidence: behaviour::Confidence::High,
            line: s.line.map_or(0, |l| l as usize),
            column: 1,
            call: capabilities::normalize(&s.name),
            detail: format!("in compiled code object `{}`", s.code),
            when: s.when(),
            cwe: entry.cwe,
            decoded: None,
            library: None,
        });
    }
    let resolved: BTreeSet<&str> = sites.iter().map(|s| s.call.as_str()).collect();
    let mut paired = named_as_data(&pyc.pyc.module, &resolved);
    paired.dedup_by(|a, b| a.call == b.call && a.line == b.line);
    sites.extend(paired);
    if sites.is_empty() {
        return;
    }
    let found = behaviour::Behaviour {
        sites,
        ..behaviour::Behaviour::default()
    };
    super::source::record_behaviour(ctx, &found, None);
}

/// The bytes of the source file at `rel` (relative to the scan root), found beside the `.pyc`
/// being scanned on disk: a documented second read of another file, bounded by
/// `code_file_bytes`, opened without following a final symlink. `None` when the `.pyc` is not
/// a local file (remote scans), or the source is absent, unreadable or too large: then the
/// `.pyc` is judged on its own.
fn read_source(ctx: &super::context::Ctx<'_>, rel: &str) -> Option<Vec<u8>> {
    use std::io::Read;
    let super::read::Positioned::File(pyc_path) = ctx.positioned else {
        return None;
    };
    // Walk up from the pyc's path as many components as its relative path has, then down.
    let depth = ctx.rel.split('/').count();
    let mut root = pyc_path;
    for _ in 0..depth {
        root = root.parent()?;
    }
    let path = rel.split('/').fold(root.to_path_buf(), |p, c| p.join(c));
    let file = super::read::open_regular(&path).ok()?;
    let cap = ctx.cfg.limits.code_file_bytes;
    let mut out = Vec::new();
    file.take(cap.saturating_add(1))
        .read_to_end(&mut out)
        .ok()?;
    (out.len() as u64 <= cap).then_some(out)
}
