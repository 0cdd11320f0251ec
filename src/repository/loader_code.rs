//! Code a config makes a loader fetch or import (issue 39), judged against the tree: the
//! `loader_code` fact of every config file (`provenance::loader_code` found the fields at any
//! depth) becomes a finding here, where every scanned path is known.
//!
//! - Code from outside the tree (a Hub repository, a kernel, a community pipeline, a package
//!   index) was not scanned, so it is not known to be safe: CFG001, which the default policy
//!   denies. The message says what the loader would fetch and how to vouch for it.
//! - A module the tree ships is the repository's own code: SRC001 names it, and the file is
//!   model code, so SRC006 judges what it does (`repository::model_code_paths`).
//! - An installed module imported by name is judged by the knowledge tables: dangerous is
//!   CFG001, unknown is CFG003 (review), a class of a known ML library is nothing.

use std::collections::BTreeMap;

use serde_json::json;

use super::paths::{join, parent};
use crate::classify;
use crate::model::facts::{Fact, FactMap};
use crate::model::finding::{Detection, Severity};
use crate::model::report::FileRecord;
use crate::model::rules::RuleId;
use crate::provenance::loader_code::{CodeRef, Import, Otherwise, Target};

/// Findings for the `loader_code` facts of `files`.
pub fn check(files: &[FileRecord], by_path: &BTreeMap<&str, &FileRecord>) -> Vec<Detection> {
    let mut out = Vec::new();
    for f in files {
        let Some(fact) = f.facts.fact(Fact::LoaderCode) else {
            continue;
        };
        let Ok(refs) = serde_json::from_value::<Vec<CodeRef>>(fact.clone()) else {
            continue;
        };
        let dir = parent(&f.path);
        for r in &refs {
            out.extend(judge(f, dir, r, by_path));
        }
    }
    out
}

/// `auto_map` and `custom_pipelines` at the top of `config.json` / `tokenizer_config.json` in
/// this tree are SRC001 from `check_auto_map` already (the same message since round one).
fn reported_by_check_auto_map(file: &str, r: &CodeRef) -> bool {
    let name = classify::basename(file);
    (name == "config.json" || name == "tokenizer_config.json")
        && (r.path.starts_with("auto_map.") || r.path.starts_with("custom_pipelines."))
}

fn judge(
    f: &FileRecord,
    dir: &str,
    r: &CodeRef,
    by_path: &BTreeMap<&str, &FileRecord>,
) -> Option<Detection> {
    match &r.target {
        Target::Remote {
            source,
            fetched,
            references,
        } => Some(remote(
            f,
            r,
            source,
            fetched,
            &fetch_action(source, fetched),
            references,
        )),
        Target::Package { package } => Some(remote(
            f,
            r,
            package,
            &format!("the package `{package}`"),
            &format!("installs `{package}` from the package index with pip and imports it"),
            &[],
        )),
        Target::Local {
            module_file,
            class,
            otherwise,
        } => {
            let local = join(dir, module_file);
            if by_path.contains_key(local.as_str()) {
                if reported_by_check_auto_map(&f.path, r) {
                    return None;
                }
                return Some(local_code(f, r, &local, class));
            }
            match otherwise.as_ref() {
                Otherwise::Missing if reported_by_check_auto_map(&f.path, r) => None,
                Otherwise::Missing => Some(missing(f, r, module_file)),
                Otherwise::Import(i) => import(f, r, i),
                Otherwise::Remote { source, fetched } => Some(remote(
                    f,
                    r,
                    source,
                    fetched,
                    &fetch_action(source, fetched),
                    &[],
                )),
            }
        }
        Target::Import(i) => import(f, r, i),
        Target::Directory => {
            let modules: Vec<&str> = by_path
                .keys()
                .copied()
                .filter(|p| parent(p) == dir && classify::extension(p) == "py")
                .collect();
            (!modules.is_empty()).then(|| {
                base(
                    RuleId::CustomCode,
                    f,
                    r,
                    format!(
                        "`{}` field `{}` makes {} import every Python module of this directory ({}): they run on load and are judged as model code",
                        classify::basename(&f.path),
                        r.path,
                        r.loader,
                        modules.join(", ")
                    ),
                )
                .with("modules", json!(modules))
                .with("state", "present")
            })
        }
    }
}

/// The evidence every finding of this check carries: the field, its JSON path and the value.
fn base(rule: RuleId, f: &FileRecord, r: &CodeRef, message: String) -> Detection {
    let mut d = Detection::new(
        rule,
        f.path.clone(),
        format!("loader:{}:{}", r.path, r.value),
        message,
    )
    .with("loader", r.loader.as_str())
    .with("field", r.field.as_str())
    .with("json_path", r.path.as_str())
    .with("value", r.value.as_str());
    if let Some(t) = &r.trust {
        d = d.with("trust_remote_code", t.as_str());
    }
    d
}

/// CFG001: the loader fetches code from outside the tree. `action` says what it does;
/// `source` is where the code comes from.
fn remote(
    f: &FileRecord,
    r: &CodeRef,
    source: &str,
    fetched: &str,
    action: &str,
    references: &[String],
) -> Detection {
    let trust = r
        .trust
        .as_ref()
        .map(|t| format!(" (`{t}` in the same config turns remote code on for it)"))
        .unwrap_or_default();
    let vouch = if crate::code::python::hub::is_hub_id_shaped(source) {
        format!(
            "scan `{source}` at a pinned revision (`modelgate scan hf://{source}@<commit>`), then accept this config by its digest (`modelgate policy baseline`)"
        )
    } else {
        "review that code at a pinned version, then accept this config by its digest (`modelgate policy baseline`)".to_string()
    };
    let mut d = base(
        RuleId::ConfigInstantiatesCode,
        f,
        r,
        format!(
            "`{}` field `{}` = `{}`: {} {action}{trust}. That code is not in this repository, so it was not scanned and is not known to be safe; to vouch for it, {vouch}",
            classify::basename(&f.path),
            r.path,
            r.value,
            r.loader,
        ),
    )
    .with("source", source)
    .with("fetches", fetched)
    .severity(Severity::High);
    if !references.is_empty() {
        d = d
            .with("references", json!(references))
            .severity(Severity::Critical);
    }
    d
}

/// What the loader does with code from `source`.
fn fetch_action(source: &str, fetched: &str) -> String {
    format!("fetches {fetched} from `{source}` and runs it")
}

/// SRC001: the loader runs a module this tree ships.
fn local_code(f: &FileRecord, r: &CodeRef, local: &str, class: &str) -> Detection {
    base(
        RuleId::CustomCode,
        f,
        r,
        format!(
            "`{}` field `{}` makes {} run `{local}` (class `{class}`) from this repository; it is judged as model code",
            classify::basename(&f.path),
            r.path,
            r.loader
        ),
    )
    .with("module_file", local)
    .with("state", "present")
}

/// SRC001: the module is named but not shipped; the loader looks for it in the repository it
/// loads, which the scan did not see.
fn missing(f: &FileRecord, r: &CodeRef, module_file: &str) -> Detection {
    base(
        RuleId::CustomCode,
        f,
        r,
        format!(
            "`{}` field `{}` names `{module_file}`, which is not in the repository (the loader would fetch it)",
            classify::basename(&f.path),
            r.path
        ),
    )
    .with("module_file", module_file)
    .with("state", "missing")
}

/// An import by name: CFG001 when dangerous, CFG003 when unknown, nothing for a library class.
fn import(f: &FileRecord, r: &CodeRef, i: &Import) -> Option<Detection> {
    let target = format!("{}.{}", i.module, i.name);
    let (rule, severity, why) = match i.verdict.as_str() {
        "dangerous" => (
            RuleId::ConfigInstantiatesCode,
            Severity::Critical,
            format!(": {}", i.reason),
        ),
        "unknown" => (
            RuleId::ConfigUnknownTarget,
            RuleId::ConfigUnknownTarget.default_severity(),
            "; it is not on the safe list".to_string(),
        ),
        _ => return None,
    };
    let mut d = base(
        rule,
        f,
        r,
        format!(
            "`{}` field `{}` makes {} import `{}` and take `{}` from it{why}",
            classify::basename(&f.path),
            r.path,
            r.loader,
            i.module,
            i.name
        ),
    )
    .with("target", target)
    .severity(severity);
    if !i.category.is_empty() {
        d = d.with("category", i.category.as_str());
    }
    Some(d)
}
