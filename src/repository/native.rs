//! SRC007 native-code: native executables and libraries, JARs and Python bytecode in a model
//! directory (issue 31), decided from the facts the read stage recorded (`native`, `bytecode`,
//! archive member names) and the native loads SRC006 found in the repository's own code.
//!
//! Severity carries the verdict (the policy grades SRC007 by it, `model::grading`): critical
//! when a library can start a process as soon as it is loaded (initialisers plus a
//! process-starting import) or when the repository's code loads a shipped library that imports
//! one; medium otherwise. A `.pyc` that matches its source (see `code::bytecode`) is not
//! reported: the source is, once.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use super::paths::{join, parent};
use crate::classify::{self, Format};
use crate::inspect::FileScan;
use crate::model::facts::{Fact, FactMap};
use crate::model::finding::{Detection, Severity};
use crate::model::report::FileRecord;
use crate::model::rules::RuleId;

/// Where the repository's code loads a library: the code file, its line and the call.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct LoadSite {
    code: String,
    line: u64,
    call: String,
}

/// Every initialiser of a `native` fact, its fat slices' included.
fn initialisers(v: &Value) -> Vec<String> {
    let mut out: Vec<String> = v
        .get("initialisers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect();
    for s in v
        .get("slices")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        out.extend(initialisers(s));
    }
    out
}

/// The notable imports of a `native` fact of class `class` (`process`, `load`), slices included.
fn imports_of(v: &Value, class: &str) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = v
        .get("notable_imports")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|i| i.get("class").and_then(Value::as_str) == Some(class))
        .filter_map(|i| i.get("name").and_then(Value::as_str))
        .map(str::to_string)
        .collect();
    for s in v
        .get("slices")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        out.extend(imports_of(s, class));
    }
    out
}

/// `a/./b/../c` -> `a/c`; `None` when it climbs out of the root.
fn normalize(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for c in path.split(['/', '\\']) {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            c => parts.push(c),
        }
    }
    Some(parts.join("/"))
}

/// The shipped native files the repository's code loads: SRC006 native-load sites (their
/// `library`, a literal path or the literal fragments of one) matched with native files, by
/// path relative to the code's directory, or by file name within that directory's tree.
fn loaded_libraries(
    files: &[FileRecord],
    side: &BTreeMap<&str, &FileScan>,
) -> BTreeMap<String, BTreeSet<LoadSite>> {
    let natives: Vec<&str> = files
        .iter()
        .filter(|f| f.format.is_native())
        .map(|f| f.path.as_str())
        .collect();
    let mut out: BTreeMap<String, BTreeSet<LoadSite>> = BTreeMap::new();
    if natives.is_empty() {
        return out;
    }
    for (path, scan) in side {
        let dir = parent(path);
        for d in scan.detections.iter().filter(|d| {
            d.rule == RuleId::CustomCodeBehaviour
                && d.evidence.get("capability").and_then(Value::as_str) == Some("native-load")
        }) {
            let sites = d.evidence.get("sites").and_then(Value::as_array);
            for site in sites.into_iter().flatten() {
                let Some(library) = site.get("library").and_then(Value::as_str) else {
                    continue;
                };
                let name = library.rsplit(['/', '\\']).next().unwrap_or(library);
                let exact = normalize(&join(dir, library));
                let hit = natives.iter().find(|n| {
                    Some(n.to_string()) == exact
                        || (classify::basename(n) == name
                            && (dir.is_empty() || n.starts_with(&format!("{dir}/"))))
                });
                if let Some(n) = hit {
                    out.entry(n.to_string()).or_default().insert(LoadSite {
                        code: path.to_string(),
                        line: site.get("line").and_then(Value::as_u64).unwrap_or(0),
                        call: site
                            .get("call")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_string(),
                    });
                }
            }
        }
    }
    out
}

/// A zip that is a Java archive: `.jar`, or a manifest or class files among its members.
fn is_jar(f: &FileRecord) -> bool {
    if !matches!(f.format, Format::Zip) {
        return false;
    }
    classify::extension(&f.path) == "jar"
        || f.facts
            .fact_strings(Fact::ArchiveMemberNames)
            .iter()
            .any(|m| m == "META-INF/MANIFEST.MF" || m.ends_with(".class"))
}

/// SRC007 for the files of the model directories `dirs` (each directory's own files and its
/// `__pycache__`), and for shipped libraries the repository's code loads wherever they are.
pub(super) fn check_native_code(
    files: &[FileRecord],
    side: &BTreeMap<&str, &FileScan>,
    dirs: &BTreeSet<String>,
) -> Vec<Detection> {
    let loaded = loaded_libraries(files, side);
    let mut out = Vec::new();
    for f in files {
        let dir = parent(&f.path);
        let in_model_dir = dirs.contains(dir)
            || (classify::basename(dir) == "__pycache__" && dirs.contains(parent(dir)));
        let loads = loaded.get(&f.path);
        if !in_model_dir && loads.is_none() {
            continue;
        }
        if let Some(d) = native_detection(f, loads) {
            out.push(d);
        } else if f.format == Format::PythonBytecode && in_model_dir {
            out.extend(bytecode_detection(f));
        } else if let Some(d) = embedded_detection(f) {
            out.push(d);
        } else if in_model_dir && is_jar(f) {
            out.push(
                Detection::new(
                    RuleId::NativeCode,
                    f.path.clone(),
                    "jar",
                    "Java archive in a model directory: compiled code a JVM-based loader runs",
                )
                .with("format", "jar"),
            );
        }
    }
    out
}

/// Native images embedded in a TensorRT plan (serialized plugin libraries, a version-compatible
/// engine's lean runtime): the runtime loads them with the engine (issue 40).
fn embedded_detection(f: &FileRecord) -> Option<Detection> {
    if f.format != Format::Tensorrt {
        return None;
    }
    let info = f.facts.fact(Fact::Tensorrt)?;
    let embedded = info.get("embedded_native")?.as_array()?;
    let first = embedded.first()?;
    let list: Vec<String> = embedded
        .iter()
        .map(|e| {
            format!(
                "{} ({}) at offset {}",
                e.get("format").and_then(Value::as_str).unwrap_or("?"),
                e.get("machine").and_then(Value::as_str).unwrap_or("?"),
                e.get("offset").and_then(Value::as_u64).unwrap_or(0)
            )
        })
        .collect();
    let mut d = Detection::new(
        RuleId::NativeCode,
        f.path.clone(),
        "tensorrt-embedded",
        format!(
            "TensorRT plan embeds native code the runtime loads with the engine (plugin libraries or a lean runtime): {}",
            list.join(", ")
        ),
    )
    .with("format", "tensorrt")
    .with(
        "embedded_format",
        first.get("format").and_then(Value::as_str).unwrap_or("?"),
    );
    d.evidence.insert("embedded".into(), json!(list));
    Some(d)
}

fn native_detection(f: &FileRecord, loads: Option<&BTreeSet<LoadSite>>) -> Option<Detection> {
    if !f.format.is_native() {
        return None;
    }
    let info = f.facts.fact(Fact::Native).cloned().unwrap_or(Value::Null);
    let kind = info
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or("unknown");
    let arch = info
        .get("architecture")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let inits = initialisers(&info);
    let process = imports_of(&info, "process");
    let load = imports_of(&info, "load");
    let listed = |s: &BTreeSet<String>| {
        s.iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let what = format!(
        "native {kind} ({}{}{arch})",
        f.format.as_str(),
        if arch.is_empty() { "" } else { ", " }
    );
    let (severity, message) = if !inits.is_empty() && !process.is_empty() {
        (
            Severity::Critical,
            format!(
                "{what} whose initialisers run when it is loaded ({}) and which imports {}: loading it can start a process",
                inits.join("; "),
                listed(&process)
            ),
        )
    } else if let Some(l) = loads.filter(|_| !process.is_empty()) {
        let first = l.iter().next();
        (
            Severity::Critical,
            format!(
                "{what} loaded by the repository's code ({}) imports {}",
                first
                    .map(|s| format!("`{}` at `{}` line {}", s.call, s.code, s.line))
                    .unwrap_or_default(),
                listed(&process)
            ),
        )
    } else {
        let mut m =
            format!("{what} in a model directory: code a loader can run, not reviewable as source");
        if !process.is_empty() {
            m.push_str(&format!("; imports {}", listed(&process)));
        }
        if !inits.is_empty() {
            m.push_str(&format!("; initialisers: {}", inits.join("; ")));
        }
        (Severity::Medium, m)
    };
    let mut d = Detection::new(RuleId::NativeCode, f.path.clone(), "native", message)
        .with("format", f.format.as_str())
        .with("kind", kind);
    d.severity = severity;
    if !arch.is_empty() {
        d.evidence.insert("architecture".into(), json!(arch));
    }
    if !inits.is_empty() {
        d.evidence.insert("initialisers".into(), json!(inits));
    }
    if !process.is_empty() {
        d.evidence.insert("process_imports".into(), json!(process));
    }
    if !load.is_empty() {
        d.evidence.insert("load_imports".into(), json!(load));
    }
    if let Some(l) = loads {
        let sites: Vec<Value> = l
            .iter()
            .map(|s| json!({"path": s.code, "line": s.line, "call": s.call}))
            .collect();
        d.evidence.insert("loaded_by".into(), Value::Array(sites));
    }
    Some(d)
}

/// Whether the `.pyc` `f` matches the source beside it (its `bytecode` fact says so).
pub(super) fn matches_its_source(f: &FileRecord) -> bool {
    f.facts
        .fact(Fact::Bytecode)
        .and_then(|b| b.get("source"))
        .and_then(|s| s.get("matches"))
        .and_then(Value::as_bool)
        == Some(true)
}

fn bytecode_detection(f: &FileRecord) -> Option<Detection> {
    let info = f.facts.fact(Fact::Bytecode).cloned().unwrap_or(Value::Null);
    let source = info.get("source");
    if matches_its_source(f) {
        // Reported once, on the source it matches.
        return None;
    }
    let version = info
        .get("python")
        .and_then(Value::as_str)
        .map(|v| format!("Python {v}"))
        .unwrap_or_else(|| "Python".into());
    let why = match source {
        Some(s) => format!(
            "differs from its source `{}` ({})",
            s.get("path").and_then(Value::as_str).unwrap_or_default(),
            s.get("reason").and_then(Value::as_str).unwrap_or_default()
        ),
        None => "has no source beside it".to_string(),
    };
    let mut d = Detection::new(
        RuleId::NativeCode,
        f.path.clone(),
        "bytecode",
        format!(
            "compiled {version} in a model directory {why}: Python imports it as it is, and it cannot be reviewed as source"
        ),
    )
    .with("format", "python-bytecode")
    .with("source", if source.is_some() { "differs" } else { "none" });
    if let Some(n) = info.get("code_objects") {
        d.evidence.insert("code_objects".into(), n.clone());
    }
    if let Some(v) = info.get("python") {
        d.evidence.insert("python".into(), v.clone());
    }
    Some(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn library_paths_normalise_within_the_root() {
        assert_eq!(
            normalize("m/./kernels/../libx.so").as_deref(),
            Some("m/libx.so")
        );
        assert_eq!(normalize("../x.so"), None);
    }
}
