//! Model packages read as packages: a TorchServe `.mar` names its handler and serialized model
//! in `MAR-INF/MANIFEST.json`; an MLflow model directory describes its flavors in `MLmodel`.
//! Both decide what code runs when the model is loaded: TorchServe imports the handler (a stock
//! `ts.torch_handler` module, or a `.py` shipped in the archive) and every `.py` member is on
//! its path; `mlflow.pyfunc.load_model` imports `python_function.loader_module`, puts the
//! `code` paths on `sys.path`, and unpickles a custom `python_model` with cloudpickle. These
//! parsers only read the descriptors; the archive and file inspectors read what they name.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::problem::excerpt;

/// Longest string kept from a descriptor.
const MAX_TEXT: usize = 200;
/// Most flavors and model files kept from an `MLmodel`.
const MAX_ENTRIES: usize = 64;

/// The handlers TorchServe ships (`ts/torch_handler/*.py`): naming one runs no code from the
/// archive.
pub const STOCK_HANDLERS: &[&str] = &[
    "image_classifier",
    "image_segmenter",
    "object_detector",
    "text_classifier",
    "base_handler",
    "vision_handler",
    "text_handler",
    "dali_image_classifier",
];

/// What a TorchServe `MAR-INF/MANIFEST.json` says.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct MarManifest {
    /// `model.modelName`.
    pub model_name: Option<String>,
    /// `model.handler`: a stock handler name, a module path, or a `.py` in the archive
    /// (optionally `file.py:function`).
    pub handler: Option<String>,
    /// `model.serializedFile`: the weights (a TorchScript or eager `.pt`, an ONNX file, ...).
    pub serialized_file: Option<String>,
    /// `model.modelFile`: the `.py` defining an eager-mode model class.
    pub model_file: Option<String>,
    /// `model.requirementsFile`, installed by TorchServe when allowed.
    pub requirements_file: Option<String>,
    /// `runtime`.
    pub runtime: Option<String>,
    /// `archiverVersion`.
    pub archiver_version: Option<String>,
}

impl MarManifest {
    /// Whether the handler is one TorchServe ships (bare name or `ts.torch_handler.<name>`).
    pub fn stock_handler(&self) -> bool {
        let Some(h) = self.handler.as_deref() else {
            // No handler: TorchServe falls back to its base handler.
            return true;
        };
        let h = h.strip_prefix("ts.torch_handler.").unwrap_or(h);
        STOCK_HANDLERS.contains(&h)
    }
}

fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key)
        .and_then(Value::as_str)
        .map(|s| excerpt(s, MAX_TEXT))
}

/// Parses a TorchServe manifest (already bounded by the caller); `None` if it is not JSON.
pub fn parse_mar_manifest(bytes: &[u8]) -> Option<MarManifest> {
    let v: Value = serde_json::from_slice(bytes).ok()?;
    let model = v.get("model").unwrap_or(&Value::Null);
    Some(MarManifest {
        model_name: text(model, "modelName"),
        handler: text(model, "handler"),
        serialized_file: text(model, "serializedFile"),
        model_file: text(model, "modelFile"),
        requirements_file: text(model, "requirementsFile"),
        runtime: text(&v, "runtime"),
        archiver_version: text(&v, "archiverVersion"),
    })
}

/// What an MLflow `MLmodel` says.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct MlModel {
    /// Flavor names (`python_function`, `sklearn`, `pytorch`, ...).
    pub flavors: Vec<String>,
    /// Files each flavor loads (`pickled_model`, `python_model`, `data`, `model_data`, ...).
    pub model_files: BTreeMap<String, Vec<String>>,
    /// `python_function.loader_module`: imported by `mlflow.pyfunc.load_model`.
    pub loader_module: Option<String>,
    /// `python_function.code` (and any flavor's `code`): put on `sys.path` at load.
    pub code: Vec<String>,
    /// `python_function.python_model`: a cloudpickled `PythonModel`, unpickled at load.
    pub python_model: Option<String>,
    /// `serialization_format` values (`cloudpickle`, `pickle`, `skops`).
    pub serialization_formats: Vec<String>,
    /// `mlflow_version`.
    pub mlflow_version: Option<String>,
}

/// Keys of a flavor's config that name a file or directory of the model.
const MODEL_FILE_KEYS: &[&str] = &[
    "pickled_model",
    "python_model",
    "data",
    "model_data",
    "model_path",
    "model_file",
    "saved_model_dir",
    "pytorch_model",
];

impl MlModel {
    /// Whether the loader module is one of MLflow's own flavors.
    pub fn builtin_loader(&self) -> bool {
        self.loader_module
            .as_deref()
            .is_none_or(|m| m == "mlflow" || m.starts_with("mlflow."))
    }
}

/// Parses an `MLmodel` YAML document (bounded by the caller; the YAML parser bounds nesting).
pub fn parse_mlmodel(value: &Value) -> Option<MlModel> {
    let flavors = value.get("flavors")?.as_object()?;
    let mut m = MlModel {
        mlflow_version: text(value, "mlflow_version"),
        ..MlModel::default()
    };
    for (name, cfg) in flavors.iter().take(MAX_ENTRIES) {
        m.flavors.push(excerpt(name, MAX_TEXT));
        let mut files = Vec::new();
        for key in MODEL_FILE_KEYS {
            if let Some(f) = cfg.get(*key).and_then(Value::as_str) {
                files.push(excerpt(f, MAX_TEXT));
            }
        }
        if !files.is_empty() {
            m.model_files.insert(excerpt(name, MAX_TEXT), files);
        }
        if let Some(f) = text(cfg, "serialization_format")
            && !m.serialization_formats.contains(&f)
        {
            m.serialization_formats.push(f);
        }
        match cfg.get("code") {
            Some(Value::String(c)) => m.code.push(excerpt(c, MAX_TEXT)),
            Some(Value::Array(items)) => m.code.extend(
                items
                    .iter()
                    .filter_map(Value::as_str)
                    .take(MAX_ENTRIES)
                    .map(|c| excerpt(c, MAX_TEXT)),
            ),
            _ => {}
        }
        if name == "python_function" {
            m.loader_module = text(cfg, "loader_module");
            m.python_model = text(cfg, "python_model");
        }
    }
    m.code.sort();
    m.code.dedup();
    Some(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_torchserve_manifest() {
        let m = parse_mar_manifest(
            br#"{"createdOn": "01/12/2026 10:00:00", "runtime": "python", "model": {"modelName": "resnet",
            "serializedFile": "resnet.pt", "handler": "image_classifier", "modelVersion": "1.0"}, "archiverVersion": "0.12.0"}"#,
        )
        .unwrap();
        assert_eq!(m.handler.as_deref(), Some("image_classifier"));
        assert_eq!(m.serialized_file.as_deref(), Some("resnet.pt"));
        assert!(m.stock_handler());
        let custom =
            parse_mar_manifest(br#"{"model": {"handler": "my_handler.py:handle"}}"#).unwrap();
        assert!(!custom.stock_handler());
        let stock_path =
            parse_mar_manifest(br#"{"model": {"handler": "ts.torch_handler.text_classifier"}}"#)
                .unwrap();
        assert!(stock_path.stock_handler());
        assert!(parse_mar_manifest(b"not json").is_none());
    }

    #[test]
    fn parses_mlmodel_flavors() {
        let v: Value = serde_json::json!({
            "artifact_path": "model",
            "flavors": {
                "python_function": {"env": {"conda": "conda.yaml"}, "loader_module": "mlflow.sklearn",
                    "model_path": "model.pkl", "predict_fn": "predict", "python_version": "3.11.4"},
                "sklearn": {"code": null, "pickled_model": "model.pkl", "serialization_format": "cloudpickle",
                    "sklearn_version": "1.3.0"}
            },
            "mlflow_version": "2.9.2"
        });
        let m = parse_mlmodel(&v).unwrap();
        assert_eq!(m.flavors, ["python_function", "sklearn"]);
        assert!(m.builtin_loader());
        assert!(m.code.is_empty());
        assert_eq!(m.model_files["sklearn"], ["model.pkl"]);
        assert_eq!(m.serialization_formats, ["cloudpickle"]);
        let custom: Value = serde_json::json!({"flavors": {"python_function": {
            "loader_module": "my_loader", "code": "code", "python_model": "python_model.pkl",
            "cloudpickle_version": "3.0.0"}}});
        let m = parse_mlmodel(&custom).unwrap();
        assert!(!m.builtin_loader());
        assert_eq!(m.code, ["code"]);
        assert_eq!(m.python_model.as_deref(), Some("python_model.pkl"));
        assert!(parse_mlmodel(&serde_json::json!({"a": 1})).is_none());
    }
}
