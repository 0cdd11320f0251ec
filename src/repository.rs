//! Repository-level checks: facts that need more than one file.
//!
//! Per-file inspection sees one file at a time. Here the scanned files are looked at together:
//! sharded checkpoints against their index (ST003), model directories and their cards (CARD*),
//! `auto_map` references against the code that ships (SRC001), `.gitattributes` LFS coverage,
//! Hugging Face cache blobs against their names (PRV004), and git state (PRV*).

use crate::model::facts::{Fact, FactMap};
use crate::model::problem::ProblemKind;
use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

use crate::classify::{self, Format, Kind};
use crate::inspect::FileScan;
use crate::inspect::safetensors;
use crate::knowledge::loaders;
use crate::model::finding::Detection;
use crate::model::report::{FileRecord, GitFacts};
use crate::model::rules::RuleId;
use crate::provenance::{card, git, hfcache, lfs};

mod loader_code;
mod native;
mod paths;

use paths::join;
pub use paths::parent;

/// Options the repository checks take from the policy.
#[derive(Debug, Clone, Default)]
pub struct RepoOptions {
    /// Card fields the policy requires (CARD002).
    pub required_fields: Vec<String>,
    /// Allowed licenses (CARD003); `None` allows any.
    pub allowed_licenses: Option<Vec<String>>,
    /// Largest shard index read.
    pub json_bytes: u64,
}

/// Shard indexes (`*.safetensors.index.json`) against the shards next to them.
pub fn check_shards(
    files: &[FileRecord],
    side: &BTreeMap<&str, &FileScan>,
    opts: &RepoOptions,
) -> Vec<Detection> {
    let mut out = Vec::new();
    let by_dir = files_by_dir(files);
    for f in files {
        let name = classify::basename(&f.path);
        let Some(prefix) = name.strip_suffix(".safetensors.index.json") else {
            continue;
        };
        let Some(text) = side.get(f.path.as_str()).and_then(|s| s.text.as_deref()) else {
            continue;
        };
        let dir = parent(&f.path);
        // The shards the index references, plus any `<prefix>-NNNNN-of-MMMMM.safetensors` beside it.
        let referenced: BTreeSet<String> = serde_json::from_slice::<Value>(text)
            .ok()
            .and_then(|v| v.get("weight_map").and_then(Value::as_object).cloned())
            .map(|m| {
                m.values()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        let mut shards: BTreeMap<String, Option<safetensors::ShardSummary>> = BTreeMap::new();
        for g in by_dir.get(dir).map(Vec::as_slice).unwrap_or_default() {
            let gname = classify::basename(&g.path);
            if !(referenced.contains(gname) || is_shard_name(gname, prefix)) {
                continue;
            }
            let summary = side
                .get(g.path.as_str())
                .and_then(|s| s.tensors.clone())
                .map(|tensors| safetensors::ShardSummary { tensors });
            shards.insert(gname.to_string(), summary);
        }
        let limits = safetensors::Limits {
            max_index_bytes: opts.json_bytes,
            ..safetensors::Limits::default()
        };
        for v in safetensors::check_shard_index(text, &shards, &limits) {
            let mut d = Detection::new(
                RuleId::ShardIndexMismatch,
                f.path.clone(),
                format!(
                    "{}:{}:{}",
                    v.code,
                    v.detail("shard").unwrap_or(""),
                    v.detail("tensor").unwrap_or("")
                ),
                v.message.clone(),
            )
            .with("violation", v.code);
            if let Some(s) = v.detail("shard") {
                d = d.with("shard", s);
            }
            if let Some(t) = v.detail("tensor") {
                d = d.with("tensor", t);
            }
            if v.kind == ProblemKind::Note {
                d = d
                    .severity(crate::model::finding::Severity::Low)
                    .with("warning", true);
            }
            out.push(d);
        }
    }
    out
}

/// SRC005 for a hub download whose id names a directory of the scanned tree (relative to the
/// root or to the code file's folder): the code means the local folder, and wherever that
/// folder is missing at run time (a fresh clone, another working directory) the loader silently
/// downloads the hub repository of that name. Turns the SRC003 the code scan recorded into
/// SRC005, so one call gives one finding.
pub fn check_model_confusion(files: &[FileRecord], detections: &mut [Detection]) {
    let mut dirs: BTreeSet<&str> = BTreeSet::new();
    for f in files {
        let mut p = f.path.as_str();
        while let Some((d, _)) = p.rsplit_once('/') {
            if !dirs.insert(d) {
                break;
            }
            p = d;
        }
    }
    for d in detections.iter_mut() {
        if d.rule != RuleId::UnpinnedRevision {
            continue;
        }
        let Some(id) = d
            .evidence
            .get("hub_id")
            .and_then(Value::as_str)
            .map(str::to_owned)
        else {
            continue;
        };
        let here = join(parent(&d.path), &id);
        if !dirs.contains(id.as_str()) && !dirs.contains(here.as_str()) {
            continue;
        }
        let api = d
            .evidence
            .get("api")
            .and_then(Value::as_str)
            .unwrap_or("the loader");
        d.message = crate::code::python::hub::model_confusion_message(api, &id, "");
        d.rule = RuleId::ModelConfusion;
        d.severity = RuleId::ModelConfusion.default_severity();
        d.evidence
            .insert("why".into(), json!("directory-in-repository"));
    }
}

/// SRC004 `native-library-load` counts only for code inside a model directory (issue 22:
/// "`ctypes.CDLL`/`cdll.LoadLibrary` in model directories"): a model's own code that loads a
/// native library runs that library's code when the model is loaded, while the same call in a
/// build tool, a test or a vendored package is ordinary Python. Drops the detection elsewhere.
/// Model directories are those of [`model_dirs`]; a file in a sub-folder of one is inside it.
pub fn scope_native_library_loads(files: &[FileRecord], detections: &mut Vec<Detection>) {
    let dirs = model_dirs(files);
    detections.retain(|d| {
        let native = d.rule == RuleId::UnsafeLoadCall
            && d.evidence.get("call").and_then(Value::as_str) == Some("native-library-load");
        !native || in_model_dir(&d.path, &dirs)
    });
}

/// Whether the file at `rel` is in one of `dirs` or below one.
fn in_model_dir(rel: &str, dirs: &BTreeSet<String>) -> bool {
    let mut dir = parent(rel);
    loop {
        if dirs.contains(dir) {
            return true;
        }
        if dir.is_empty() {
            return false;
        }
        dir = parent(dir);
    }
}

/// ONNX external data: every `location` must be a relative path that stays inside the
/// repository and names a file that is there (FMT004).
pub fn check_onnx_external_data(files: &[FileRecord]) -> Vec<Detection> {
    let present: BTreeSet<&str> = files.iter().map(|f| f.path.as_str()).collect();
    let mut out = Vec::new();
    for f in files {
        let Some(locations) = f
            .facts
            .fact(Fact::ExternalDataLocations)
            .and_then(Value::as_array)
        else {
            continue;
        };
        let locations: Vec<String> = locations
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect();
        let exists = |p: &str| present.contains(p);
        for p in crate::inspect::onnx::check_external_data(&locations, parent(&f.path), &exists) {
            use crate::inspect::problem::ProblemKind;
            let rule = match p.kind {
                ProblemKind::Unsafe => RuleId::OnnxExternalData,
                ProblemKind::Malformed => RuleId::FormatMalformed,
                _ => continue,
            };
            let mut d = Detection::new(
                rule,
                f.path.clone(),
                format!(
                    "{}:{}",
                    p.code,
                    p.evidence.get("location").map(String::as_str).unwrap_or("")
                ),
                p.message.clone(),
            )
            .with("problem", p.code);
            for (k, v) in &p.evidence {
                d = d.with(k, v.as_str());
            }
            out.push(d);
        }
    }
    out
}

/// Issue 40: an OpenVINO IR's weights. The `.bin` with the XML's stem (`model.xml` ->
/// `model.bin`) holds the constants its `Const` layers read, raw: recognised here (it has no
/// header), it is recorded as `openvino-weights` (kind weights, `openvino.ir` names the XML)
/// instead of FMT002's "unrecognised content", and it must hold every range the XML declares:
/// a range past its end is FMT009 on the XML (`const-out-of-range`, the layer named). An IR
/// with weight ranges and no `.bin` is FMT007 (`weights-missing`). Content that is something
/// else (a pickle, a zip) keeps its own format and findings.
pub fn check_openvino_weights(files: &mut [FileRecord], detections: &mut Vec<Detection>) {
    let index: BTreeMap<String, usize> = files
        .iter()
        .enumerate()
        .map(|(i, f)| (f.path.clone(), i))
        .collect();
    let mut claimed: Vec<(usize, String)> = Vec::new();
    for f in files.iter() {
        if f.format != Format::Openvino {
            continue;
        }
        let Some(ir) = f.facts.fact(Fact::Openvino) else {
            continue;
        };
        let weights = &ir["weights"];
        let ranges = weights["ranges"].as_u64().unwrap_or(0);
        let end = weights["end"].as_u64().unwrap_or(0);
        let layer = weights["end_layer"].as_str().unwrap_or("");
        let name = classify::basename(&f.path);
        let stem = name
            .rsplit_once('.')
            .map(|(s, _)| s)
            .filter(|s| !s.is_empty())
            .unwrap_or(name);
        let bin = join(parent(&f.path), &format!("{stem}.bin"));
        let Some(&b) = index.get(&bin) else {
            if ranges > 0 {
                detections.push(
                    Detection::new(
                        RuleId::FormatMalformed,
                        f.path.clone(),
                        format!("weights-missing:{bin}"),
                        format!(
                            "OpenVINO IR declares {ranges} weight range(s) in `{bin}`, which is not in the repository"
                        ),
                    )
                    .with("problem", "weights-missing")
                    .with("weights", bin.as_str()),
                );
            }
            continue;
        };
        let found = &files[b];
        if !matches!(
            found.format,
            Format::Unknown | Format::Empty | Format::OpenvinoWeights
        ) {
            continue;
        }
        claimed.push((b, f.path.clone()));
        if end > found.size {
            detections.push(
                Detection::new(
                    RuleId::FormatExploitShape,
                    f.path.clone(),
                    format!("const-out-of-range:{layer}"),
                    format!(
                        "OpenVINO IR layer `{layer}` reads weights up to byte {end} of `{bin}`, which holds {} bytes: the reader runs past the file",
                        found.size
                    ),
                )
                .with("problem", "const-out-of-range")
                .with("layer", layer)
                .with("weights", bin.as_str())
                .with("end", end)
                .with("size", found.size),
            );
        }
    }
    for (b, ir) in claimed {
        let f = &mut files[b];
        f.format = Format::OpenvinoWeights;
        f.kind = Kind::Weights;
        f.facts.set_fact(Fact::Openvino, json!({ "ir": ir }));
        let path = f.path.clone();
        detections.retain(|d| !(d.path == path && d.rule == RuleId::UnknownWeights));
    }
}

/// Core ML packages (issue 40): every item an `.mlpackage` `Manifest.json` lists must be a
/// relative path that stays inside the package's `Data/` (else FMT009 `path-escape`) and names
/// a file or a folder holding files (else FMT007 `item-missing`); the root model must be an item.
pub fn check_coreml_packages(files: &[FileRecord]) -> Vec<Detection> {
    use crate::inspect::coreml;
    use crate::inspect::problem::ProblemKind;
    let present: BTreeSet<&str> = files.iter().map(|f| f.path.as_str()).collect();
    let exists = |p: &str| {
        let dir = format!("{p}/");
        present.contains(p)
            || present
                .range(dir.as_str()..)
                .next()
                .is_some_and(|f| f.starts_with(&dir))
    };
    let mut out = Vec::new();
    for f in files {
        let Some(manifest) = f
            .facts
            .fact(Fact::Coreml)
            .and_then(|c| c.get("manifest"))
            .and_then(|m| serde_json::from_value::<coreml::Manifest>(m.clone()).ok())
        else {
            continue;
        };
        let data_dir = join(parent(&f.path), "Data");
        for p in coreml::check_manifest(&manifest, &data_dir, &exists) {
            let rule = match p.kind {
                ProblemKind::Exploit => RuleId::FormatExploitShape,
                _ => RuleId::FormatMalformed,
            };
            let mut d = Detection::new(
                rule,
                f.path.clone(),
                format!("{}:{}", p.code, p.detail("item").unwrap_or("")),
                p.message.clone(),
            )
            .with("problem", p.code);
            for (k, v) in &p.evidence {
                d = d.with(k, v.as_str());
            }
            out.push(d);
        }
    }
    out
}

/// Files by directory, so per-directory checks cost one pass over the tree, not one pass per
/// directory (a tree of many small model directories would otherwise be quadratic).
fn files_by_dir(files: &[FileRecord]) -> BTreeMap<&str, Vec<&FileRecord>> {
    let mut by_dir: BTreeMap<&str, Vec<&FileRecord>> = BTreeMap::new();
    for f in files {
        by_dir.entry(parent(&f.path)).or_default().push(f);
    }
    by_dir
}

/// `<prefix>-00001-of-00003.safetensors`.
fn is_shard_name(name: &str, prefix: &str) -> bool {
    let Some(rest) = name
        .strip_prefix(prefix)
        .and_then(|r| r.strip_prefix('-'))
        .and_then(|r| r.strip_suffix(".safetensors"))
    else {
        return false;
    };
    let Some((a, b)) = rest.split_once("-of-") else {
        return false;
    };
    !a.is_empty()
        && !b.is_empty()
        && a.bytes().all(|c| c.is_ascii_digit())
        && b.bytes().all(|c| c.is_ascii_digit())
}

/// Marks each weight file with whether a `.gitattributes` rule stores it in Git LFS
/// (`lfs_covered`), a fact the policy and the SBOM can use.
pub fn mark_lfs_coverage(files: &mut [FileRecord], side: &BTreeMap<String, Vec<u8>>) {
    let mut stack = lfs::AttrStack::new();
    for (path, text) in side {
        if classify::basename(path) == ".gitattributes" {
            let text = String::from_utf8_lossy(text);
            stack.add(parent(path), lfs::parse_gitattributes(&text));
        }
    }
    for f in files.iter_mut() {
        if f.kind == Kind::Weights || f.format == Format::LfsPointer {
            f.facts
                .set_fact(Fact::LfsCovered, json!(stack.covers(&f.path)));
        }
    }
}

/// Directories that hold a model: weights or a `config.json` directly inside. A Core ML
/// `.mlpackage` is one model, whatever folders it keeps its spec and weights in: its files count
/// for the folder that holds the package (issue 40).
pub fn model_dirs(files: &[FileRecord]) -> BTreeSet<String> {
    files
        .iter()
        .filter(|f| f.kind == Kind::Weights || classify::basename(&f.path) == "config.json")
        .map(|f| model_dir_of(&f.path).to_string())
        .collect()
}

/// The directory a model file belongs to: its own, or for a file inside an `.mlpackage`
/// folder, the folder holding the package.
fn model_dir_of(path: &str) -> &str {
    let mut start = 0;
    for part in path.split('/') {
        let end = start + part.len();
        if end < path.len() && part.to_ascii_lowercase().ends_with(".mlpackage") {
            return path[..start].trim_end_matches('/');
        }
        start = end + 1;
    }
    parent(path)
}

/// The Python files of a crawl that a model loader can run, from the paths alone (decided before
/// any file is read, so the read stage knows which files get the behaviour analysis, SRC006):
/// `.py` and `.ipynb` files in a directory that holds `config.json`, another config a loader
/// reads by name (`knowledge::loaders::LOADER_CONFIG_NAMES`: its fields name modules there) or a
/// file with a weights extension (the by-name form of [`model_dirs`]), a diffusers pipeline's
/// component folders, `custom_generate/` beside a model, every `hubconf.py` (`torch.hub.load`), and
/// everything under a TorchServe folder (`MAR-INF/MANIFEST.json`) or an MLflow model (`MLmodel`),
/// whose `code/` directories are on the loader's import path. Library code elsewhere in the tree
/// is not model code: a package that ships code next to no weights is judged by SRC004 alone.
/// Compiled `.pyc` files count by the same rule, those in `__pycache__` by the directory above
/// it (issue 31: bytecode judged on its own gets SRC006 like its source).
pub fn model_code_paths<'a>(paths: impl IntoIterator<Item = &'a str> + Clone) -> BTreeSet<String> {
    model_code_with_weights(paths, std::iter::empty())
}

/// [`model_code_paths`] once the read stage has found weights by their content: `weights` are
/// files read as weights whatever their names (a pickle named `weights.data`). Their
/// directories are model directories ([`model_dirs`] counts them, and SRC001 reports the code
/// there), so the code in them is model code too, or a renamed weights file would keep its
/// neighbours' code from the behaviour judge (SRC006).
pub fn model_code_with_weights<'a>(
    paths: impl IntoIterator<Item = &'a str> + Clone,
    weights: impl IntoIterator<Item = &'a str>,
) -> BTreeSet<String> {
    let mut dirs: BTreeSet<&str> = weights.into_iter().map(model_dir_of).collect();
    let mut trees: BTreeSet<String> = BTreeSet::new();
    for p in paths.clone() {
        let name = classify::basename(p);
        let ext = classify::extension(p);
        if name == "config.json" || classify::WEIGHT_EXTENSIONS.contains(&ext.as_str()) {
            dirs.insert(parent(p));
        }
        // Issue 39: a config a loader reads by name makes its directory's modules loadable
        // (`auto_map`, a `modules.json` type, ModelScope `allow_remote`), and a diffusers model
        // index makes each component folder's (`<component>/<library>.py`).
        if loaders::LOADER_CONFIG_NAMES.contains(&name) {
            dirs.insert(parent(p));
        }
        if name == "model_index.json" || name == "modular_model_index.json" {
            trees.insert(parent(p).to_string());
        }
        if name == "MLmodel" {
            trees.insert(parent(p).to_string());
        }
        if name == "MANIFEST.json" && classify::basename(parent(p)) == "MAR-INF" {
            trees.insert(parent(parent(p)).to_string());
        }
    }
    let mut out = BTreeSet::new();
    // `pip install` of a model repository runs its root `setup.py` and in-tree PEP 517 hooks.
    let has_models = !dirs.is_empty() || !trees.is_empty();
    for p in paths {
        let ext = classify::extension(p);
        if has_models && parent(p).is_empty() && ext == "py" {
            out.insert(p.to_string());
            continue;
        }
        if ext != "py" && ext != "ipynb" && ext != "pyc" {
            continue;
        }
        let mut dir = parent(p);
        // Bytecode in `__pycache__` belongs to the directory above it (issue 31).
        if ext == "pyc" && classify::basename(dir) == "__pycache__" {
            dir = parent(dir);
        }
        let in_tree = trees.iter().any(|t| t == dir || is_within(dir, t));
        // transformers >= 4.54 replaces `generate` with `custom_generate/generate.py` of the
        // repository under trust_remote_code (`GenerationMixin.load_custom_generate`).
        let custom_generate =
            classify::basename(dir) == "custom_generate" && dirs.contains(parent(dir));
        if dirs.contains(dir) || in_tree || custom_generate || classify::basename(p) == "hubconf.py"
        {
            out.insert(p.to_string());
        }
    }
    out
}

/// Directory names that hold test data, not models anyone publishes (issue 15, cause 10).
const TEST_DATA_DIRS: &[&str] = &[
    "test",
    "tests",
    "testing",
    "test_data",
    "testdata",
    "test-data",
];

/// True when a component of `dir` is a test-data directory.
fn is_test_data(dir: &str) -> bool {
    dir.split('/').any(|c| TEST_DATA_DIRS.contains(&c))
}

/// True when `dir` is strictly inside `ancestor` (`""` is the scan root).
fn is_within(dir: &str, ancestor: &str) -> bool {
    if ancestor.is_empty() {
        return !dir.is_empty();
    }
    dir.strip_prefix(ancestor)
        .is_some_and(|rest| rest.starts_with('/'))
}

/// CARD001 for model directories without a card, CARD002/CARD003 for the card's fields and
/// license, SRC001 for the code a loader would run (`auto_map` modules, Python files in a
/// model directory); facts for each model directory (card and config, for the SBOM).
pub fn check_model_dirs(
    files: &[FileRecord],
    side: &BTreeMap<&str, &FileScan>,
    opts: &RepoOptions,
) -> (Vec<Detection>, Vec<Value>) {
    let by_path: BTreeMap<&str, &FileRecord> = files.iter().map(|f| (f.path.as_str(), f)).collect();
    let by_dir = files_by_dir(files);
    let mut detections = Vec::new();
    let mut dirs = Vec::new();
    // Card-less model directories reported so far, with their detection's index.
    let mut missing: Vec<(String, usize)> = Vec::new();
    // Cards already checked: one README at the top covers every model directory below it, and
    // its CARD002/CARD003 findings are the card's, reported once (they were once per directory,
    // the same finding repeated).
    let mut checked: BTreeSet<&str> = BTreeSet::new();
    for dir in model_dirs(files) {
        let here: &[&FileRecord] = by_dir
            .get(dir.as_str())
            .map(Vec::as_slice)
            .unwrap_or_default();
        // A card in the directory or the nearest ancestor covers it: diffusers-style
        // repositories keep one README at the top for `unet/`, `text_encoder/`, ...
        let mut card = None;
        let mut cur = Some(dir.as_str());
        while let Some(d) = cur {
            card = classify::CARD_NAMES
                .iter()
                .find_map(|n| by_path.get(join(d, n).as_str()).copied());
            if card.is_some() || d.is_empty() {
                break;
            }
            cur = Some(parent(d));
        }
        let config = by_path.get(join(&dir, "config.json").as_str()).copied();
        let mut entry = Map::new();
        entry.insert("path".into(), json!(dir));
        match card {
            Some(c) => {
                entry.insert("card_path".into(), json!(c.path));
                let facts = side.get(c.path.as_str()).and_then(|s| s.card.as_ref());
                if let Some(facts) = facts.filter(|_| checked.insert(c.path.as_str())) {
                    detections.extend(check_card(&c.path, facts, opts));
                }
                if let Some(facts) = c.facts.fact(Fact::Card) {
                    entry.insert("card".into(), facts.clone());
                }
            }
            // Issue 15, cause 10: test data (onnx ships ~1,400 `test_*/model.onnx` folders)
            // is not a published model, and a folder inside a card-less model directory is
            // that directory's to fix: one CARD001, counting the folders it covers.
            None if is_test_data(&dir) => {}
            None if let Some(&(_, at)) = missing.iter().rev().find(|(d, _)| is_within(&dir, d)) => {
                if let Some(d) = detections.get_mut(at) {
                    let n = d
                        .evidence
                        .get("nested_directories")
                        .and_then(Value::as_u64)
                        .unwrap_or(0);
                    d.evidence.insert("nested_directories".into(), json!(n + 1));
                }
            }
            None => {
                let shown = if dir.is_empty() { "." } else { dir.as_str() };
                missing.push((dir.clone(), detections.len()));
                detections.push(
                    Detection::new(
                        RuleId::ModelCardMissing,
                        dir.clone(),
                        "card",
                        format!(
                            "model directory `{shown}` has no model card (README.md or MODEL_CARD.md)"
                        ),
                    )
                    .with("directory", shown),
                );
            }
        }
        if let Some(c) = config.and_then(|c| c.facts.fact(Fact::Config)) {
            entry.insert("config".into(), c.clone());
        }
        for name in ["config.json", "tokenizer_config.json"] {
            if let Some(cfg) = by_path.get(join(&dir, name).as_str()) {
                detections.extend(check_auto_map(cfg, &dir, &by_path));
            }
        }
        for f in here.iter().filter(|f| f.format == Format::Python) {
            detections.push(
                Detection::new(
                    RuleId::CustomCode,
                    f.path.clone(),
                    "model-dir-code",
                    "python file in a model directory: loaders that import the repository's code run it",
                )
                .with("kind", "model-directory-python"),
            );
        }
        // Compiled Python runs the same way when a loader imports the directory (issue 15,
        // cause 8): `.pyc` next to the weights is code, not an unrecognised file.
        // A `.pyc` that matches the source beside it is reported once, on the source (issue 31).
        for f in here.iter().filter(|f| {
            matches!(classify::extension(&f.path).as_str(), "pyc" | "pyo")
                && !native::matches_its_source(f)
        }) {
            detections.push(
                Detection::new(
                    RuleId::CustomCode,
                    f.path.clone(),
                    "model-dir-compiled-code",
                    "compiled python file in a model directory: loaders that import the repository's code run it",
                )
                .with("kind", "model-directory-compiled-python"),
            );
        }
        let members: Vec<&str> = here.iter().map(|f| f.path.as_str()).collect();
        entry.insert("files".into(), json!(members));
        dirs.push(Value::Object(entry));
    }
    detections.extend(native::check_native_code(files, side, &model_dirs(files)));
    detections.extend(loader_code::check(files, &by_path));
    (detections, dirs)
}

/// CARD002 / CARD003 from a card's front matter against the policy.
fn check_card(path: &str, facts: &card::CardFacts, opts: &RepoOptions) -> Vec<Detection> {
    let allowed = opts.allowed_licenses.clone().unwrap_or_default();
    let mut out = Vec::new();
    for p in card::check_card(facts, &opts.required_fields, &allowed) {
        let rule = match p.code {
            "license-not-allowed" => {
                if opts.allowed_licenses.is_none() {
                    continue;
                }
                RuleId::LicenseNotAllowed
            }
            _ => RuleId::ModelCardFieldMissing,
        };
        out.push(
            Detection::new(rule, path, format!("{}:{}", p.code, p.field), p.message)
                .with("field", p.field.as_str()),
        );
    }
    out
}

/// SRC001 for each `auto_map` entry of this repository: the module it names runs under
/// `trust_remote_code=True` (an entry of another repository is CFG001, `loader_code`).
fn check_auto_map(
    cfg: &FileRecord,
    dir: &str,
    by_path: &BTreeMap<&str, &FileRecord>,
) -> Vec<Detection> {
    let Some(entries) = cfg
        .facts
        .fact(Fact::Config)
        .and_then(|c| c.get("auto_map"))
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in entries {
        // Issue 39: an entry from another repository is CFG001 (`loader_code`), denied by
        // default: that code was not scanned.
        if e.get("remote_repo").is_some_and(|r| !r.is_null()) {
            continue;
        }
        let get = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or_default();
        let (auto_class, reference, module_file) =
            (get("auto_class"), get("reference"), get("module_file"));
        let (message, state) = if by_path.contains_key(join(dir, module_file).as_str()) {
            (
                format!(
                    "`auto_map.{auto_class}` runs `{module_file}` from this repository under trust_remote_code"
                ),
                "present",
            )
        } else {
            (
                format!(
                    "`auto_map.{auto_class}` names `{module_file}`, which is not in the repository (the loader would fetch it)"
                ),
                "missing",
            )
        };
        let d = Detection::new(
            RuleId::CustomCode,
            cfg.path.clone(),
            format!("auto_map:{auto_class}:{reference}"),
            message,
        )
        .with("auto_class", auto_class)
        .with("reference", reference)
        .with("module_file", module_file)
        .with("state", state);
        out.push(d);
    }
    out
}

/// Hugging Face cache: repository identity facts, layout problems and blob digests (PRV004).
pub fn check_hf_cache(
    cache: &hfcache::HfCache,
    root: &std::path::Path,
    files: &mut [FileRecord],
    link_targets: &BTreeMap<String, String>,
) -> (Vec<Detection>, Value) {
    let mut detections = Vec::new();
    for repo in &cache.repos {
        for p in &repo.problems {
            detections.push(
                Detection::new(
                    RuleId::CacheIntegrity,
                    p.path.clone(),
                    p.code,
                    p.message.clone(),
                )
                .with("problem", p.code),
            );
        }
    }
    for f in files.iter_mut() {
        if let Some(snap) = cache.snapshot_of(&f.path) {
            f.facts.set_fact(Fact::HfRepo, json!(snap.repo_id));
            f.facts.set_fact(Fact::HfCommit, json!(snap.commit));
            f.facts.set_fact(Fact::HfPath, json!(snap.path_in_repo));
        }
        let Some(target) = link_targets.get(&f.path) else {
            continue;
        };
        let blob = match cache.blob_for_symlink(&f.path, std::path::Path::new(target)) {
            Ok(b) => b,
            Err(p) => {
                detections.push(
                    Detection::new(RuleId::CacheIntegrity, f.path.clone(), p.code, p.message)
                        .with("problem", p.code),
                );
                continue;
            }
        };
        f.facts.set_fact(Fact::HfBlob, json!(blob));
        let Some(actual) = f.sha256.as_deref() else {
            continue;
        };
        let Some(expected) = hfcache::expected_blob_digest(&blob) else {
            // 40-hex blobs are git blob ids of small non-LFS files (configs, tokenizers, remote
            // code): the juiciest files to tamper with, so check them too.
            if let Some(d) = check_git_blob(root, f, target, &blob) {
                detections.push(d);
            }
            continue;
        };
        if expected != actual {
            detections.push(
                Detection::new(
                    RuleId::CacheIntegrity,
                    f.path.clone(),
                    "blob-digest-mismatch",
                    format!(
                        "cached blob `{blob}` has sha256 {actual}, not the digest its name records: the cache was modified after download"
                    ),
                )
                .with("expected", expected)
                .with("actual", actual),
            );
        }
    }
    let mut facts = serde_json::to_value(cache).unwrap_or(Value::Null);
    // The identity the SBOM's purl uses: one repository, and the snapshot scanned (or the
    // commit `refs/main` names when the whole repository folder was scanned).
    if let (Value::Object(m), [repo]) = (&mut facts, cache.repos.as_slice()) {
        m.insert("repo_id".into(), json!(repo.repo_id));
        m.insert("repo_type".into(), json!(repo.repo_type));
        let commit = match &cache.root {
            hfcache::CacheRoot::Snapshot { commit, .. } => Some(commit.clone()),
            _ => repo.refs.get("main").cloned(),
        };
        if let Some(c) = commit {
            m.insert("commit".into(), json!(c));
        }
    }
    (detections, facts)
}

/// Largest non-LFS cache blob re-read to compute its git blob id (these are configs and code).
const MAX_GIT_BLOB_BYTES: u64 = 16 << 20;

/// Verifies a 40-hex cache blob against the git blob id of its content (one bounded re-read:
/// the main read computes SHA-256 only).
fn check_git_blob(
    root: &std::path::Path,
    f: &mut FileRecord,
    target: &str,
    blob: &str,
) -> Option<Detection> {
    if f.size > MAX_GIT_BLOB_BYTES
        || !matches!(
            hfcache::classify_blob_name(blob),
            Some(hfcache::BlobName::GitSha1(_))
        )
    {
        return None;
    }
    let path = root.join(parent(&f.path)).join(target);
    let mut file = crate::inspect::open_regular(&path).ok()?;
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(
        &mut std::io::Read::take(&mut file, MAX_GIT_BLOB_BYTES + 1),
        &mut bytes,
    )
    .ok()?;
    let actual = hfcache::git_blob_sha1(&bytes);
    f.facts.set_fact(Fact::HfGitBlob, json!(actual));
    (actual != blob).then(|| {
        Detection::new(
            RuleId::CacheIntegrity,
            f.path.clone(),
            "git-blob-mismatch",
            format!(
                "cached blob `{blob}` has git blob id {actual}, not the one its name records: the cache was modified after download"
            ),
        )
        .with("expected", blob)
        .with("actual", actual)
    })
}

/// Git provenance: facts for the report, PRV001/PRV002/PRV003 detections.
pub fn check_git(
    root: &std::path::Path,
    files: &[FileRecord],
) -> (Option<GitFacts>, Vec<Detection>) {
    match git::discover(root) {
        git::GitState::NotARepository => (
            None,
            vec![Detection::new(
                RuleId::NoGitRepository,
                "",
                "none",
                "the scan root is not inside a git repository; no revision identifies what was scanned",
            )],
        ),
        git::GitState::Error(msg) => (
            None,
            vec![
                Detection::new(
                    RuleId::NoGitRepository,
                    "",
                    "error",
                    format!("cannot read the git repository: {msg}"),
                )
                .with("error", msg),
            ],
        ),
        git::GitState::Repository(info) => {
            let mut detections = Vec::new();
            if info.is_dirty() {
                let entries: Vec<Value> = info
                    .dirty
                    .iter()
                    .map(|e| json!({"path": e.path, "state": e.state}))
                    .collect();
                let mut shown: Vec<String> =
                    info.dirty.iter().take(10).map(|e| e.path.clone()).collect();
                if info.dirty.len() > 10 || info.dirty_truncated {
                    shown.push("…".into());
                }
                detections.push(
                    Detection::new(
                        RuleId::DirtyWorktree,
                        "",
                        "dirty",
                        format!(
                            "{} uncommitted or untracked change(s) under the scan root: {}",
                            info.dirty.len(),
                            shown.join(", ")
                        ),
                    )
                    .with("entries", entries)
                    .with("truncated", info.dirty_truncated),
                );
            }
            if info.commit.is_some() {
                for f in files {
                    if f.kind == Kind::Weights && !info.is_tracked(&f.path) {
                        detections.push(Detection::new(
                            RuleId::UntrackedWeights,
                            f.path.clone(),
                            "untracked",
                            "weight file is not tracked by git; no commit identifies it",
                        ));
                    }
                }
            }
            let facts = GitFacts {
                commit: info.commit.clone(),
                branch: info.branch.clone(),
                detached: info.detached,
                tags: info.tags.clone(),
                remote: info.remote.clone(),
                dirty: info.is_dirty(),
                shallow: info.shallow,
                path_in_repo: info.workdir_prefix.clone(),
            };
            (Some(facts), detections)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_mlpackage_is_one_model_of_the_folder_holding_it() {
        // Issue 40.
        assert_eq!(
            model_dir_of("m/M.mlpackage/Data/com.apple.CoreML/weights/weight.bin"),
            "m"
        );
        assert_eq!(
            model_dir_of("M.mlpackage/Data/com.apple.CoreML/model.mlmodel"),
            ""
        );
        assert_eq!(model_dir_of("m/x.mlpackage"), "m");
        assert_eq!(model_dir_of("m/w/model.safetensors"), "m/w");
    }

    #[test]
    fn model_code_is_python_next_to_weights_or_config_and_hub_torchserve_mlflow_code() {
        let paths = [
            "setup.py",
            "lib/util.py",
            "models/a/config.json",
            "models/a/modeling_a.py",
            "models/a/notes.ipynb",
            "models/b/model.safetensors",
            "models/b/handler.py",
            "hub/hubconf.py",
            "serve/MAR-INF/MANIFEST.json",
            "serve/code/handler.py",
            "mlflow/MLmodel",
            "mlflow/code/pkg/loader.py",
            "pkg/module.py",
        ];
        let got = model_code_paths(paths.iter().copied());
        let want: BTreeSet<String> = [
            "setup.py",
            "models/a/modeling_a.py",
            "models/a/notes.ipynb",
            "models/b/handler.py",
            "hub/hubconf.py",
            "serve/code/handler.py",
            "mlflow/code/pkg/loader.py",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(got, want);
        // A library tree without weights or configs is not model code, its setup.py neither.
        assert!(model_code_paths(["setup.py", "pkg/a.py"].iter().copied()).is_empty());
    }

    #[test]
    fn weights_found_by_content_make_their_directory_s_code_model_code() {
        let paths = [
            "setup.py",
            "m/weights.data",
            "m/helper.py",
            "m/__pycache__/helper.cpython-311.pyc",
            "m/sub/deeper.py",
            "lib/util.py",
            "pkg.mlpackage/Data/x/blob",
            "loose.py",
        ];
        // By name alone nothing here is a model.
        assert!(model_code_paths(paths.iter().copied()).is_empty());
        let got = model_code_with_weights(paths.iter().copied(), ["m/weights.data"]);
        let want: BTreeSet<String> = [
            "setup.py",
            "loose.py",
            "m/helper.py",
            "m/__pycache__/helper.cpython-311.pyc",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(got, want);
        // Weights inside a Core ML package count for the folder holding the package, as in
        // `model_dirs`.
        let got = model_code_with_weights(paths.iter().copied(), ["pkg.mlpackage/Data/x/blob"]);
        assert!(
            got.contains("loose.py") && !got.contains("m/helper.py"),
            "{got:?}"
        );
    }

    #[test]
    fn modules_loader_configs_name_are_model_code_issue_39() {
        let paths = [
            "st/modules.json",
            "st/custom_st.py",
            "pipe/model_index.json",
            "pipe/prior/my_prior.py",
            "ms/configuration.json",
            "ms/my_model.py",
            "lm/config.json",
            "lm/custom_generate/generate.py",
            "lib/custom_generate/generate.py",
            "lib/util.py",
        ];
        let got = model_code_paths(paths.iter().copied());
        let want: BTreeSet<String> = [
            "st/custom_st.py",
            "pipe/prior/my_prior.py",
            "ms/my_model.py",
            "lm/custom_generate/generate.py",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn shard_names_are_recognised() {
        assert!(is_shard_name("model-00001-of-00002.safetensors", "model"));
        assert!(!is_shard_name("model.safetensors", "model"));
        assert!(!is_shard_name("other-00001-of-00002.safetensors", "model"));
        assert!(!is_shard_name("model-0000a-of-00002.safetensors", "model"));
    }

    #[test]
    fn a_file_below_a_model_directory_is_inside_it() {
        let dirs: BTreeSet<String> = ["m".to_string()].into();
        assert!(in_model_dir("m/ops.py", &dirs));
        assert!(in_model_dir("m/custom/ops.py", &dirs));
        assert!(!in_model_dir("tools/build.py", &dirs));
        assert!(!in_model_dir("mm/ops.py", &dirs));
        assert!(!in_model_dir("ops.py", &dirs));
        let root: BTreeSet<String> = [String::new()].into();
        assert!(in_model_dir("tools/build.py", &root));
    }

    #[test]
    fn parent_of_top_level_is_empty() {
        assert_eq!(parent("a.txt"), "");
        assert_eq!(parent("d/e/a.txt"), "d/e");
    }
}
