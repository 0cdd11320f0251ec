//! Issue 40 fixtures, byte-exact: skops files (a stored zip of `schema.json` and `.npy` members)
//! and OpenVINO IRs (the network XML and its `.bin`), benign and hostile.

use super::zip_stored;
use serde_json::{Value, json};

/// A NumPy `.npy` v1.0 of `n` little-endian float64 zeros.
pub fn npy_f64(n: usize) -> Vec<u8> {
    let mut header = format!("{{'descr': '<f8', 'fortran_order': False, 'shape': ({n},), }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(&vec![0u8; n * 8]);
    out
}

fn node(loader: &str, module: &str, class: &str) -> Value {
    json!({"__class__": class, "__module__": module, "__loader__": loader})
}

/// The schema of a fitted `LogisticRegression` as skops 0.13 writes it (abridged): an
/// `ObjectNode` over a `DictNode` of attributes, a NumPy member, `JsonNode` scalars.
pub fn skops_benign_schema() -> Value {
    json!({
        "__class__": "LogisticRegression",
        "__module__": "sklearn.linear_model._logistic",
        "__loader__": "ObjectNode",
        "content": {
            "__class__": "dict", "__module__": "builtins", "__loader__": "DictNode",
            "content": {
                "C": {"__class__": "float", "__module__": "builtins", "__loader__": "JsonNode", "content": "1.0", "is_json": true},
                "coef_": {"__class__": "ndarray", "__module__": "numpy", "__loader__": "NdArrayNode", "type": "numpy", "file": "0.npy"},
                "classes_": {"__class__": "list", "__module__": "builtins", "__loader__": "ListNode", "content": [
                    {"__class__": "int", "__module__": "builtins", "__loader__": "JsonNode", "content": "0", "is_json": true}
                ]}
            },
            "key_types": {"__class__": "list", "__module__": "builtins", "__loader__": "ListNode",
                          "content": [node("TypeNode", "builtins", "str"), node("TypeNode", "builtins", "str"), node("TypeNode", "builtins", "str")]}
        },
        "protocol": 2,
        "_skops_version": "0.13.0"
    })
}

/// The benign schema with `attr` set to `value` in the estimator's attribute dict.
pub fn skops_schema_with(attr: &str, value: Value) -> Value {
    let mut v = skops_benign_schema();
    v["content"]["content"][attr] = value;
    v
}

/// A `.skops` file: the schema and a `0.npy` member, plus any extra members.
pub fn skops_file(schema: &Value, extra: &[(&str, &[u8])]) -> Vec<u8> {
    let npy = npy_f64(2);
    let json = serde_json::to_vec_pretty(schema).unwrap();
    let mut members: Vec<(&str, &[u8])> = vec![("0.npy", &npy)];
    members.extend_from_slice(extra);
    members.push(("schema.json", &json));
    zip_stored(&members)
}

/// A `FunctionNode` naming `module.name` (what `skops.io.dump` writes for a function attribute).
pub fn skops_function(module: &str, name: &str) -> Value {
    node("FunctionNode", module, name)
}

/// CVE-2025-54412's shape: an `OperatorFuncNode` that declares a scikit-learn type but makes
/// skops run `operator.call` on a `FunctionNode`'s target.
pub fn skops_operator_call(declared_module: &str, target: (&str, &str)) -> Value {
    json!({
        "__class__": "call",
        "__module__": declared_module,
        "__loader__": "OperatorFuncNode",
        "attrs": {"__class__": "tuple", "__module__": "builtins", "__loader__": "TupleNode",
                  "content": [node("FunctionNode", target.0, target.1),
                              {"__class__": "str", "__module__": "builtins", "__loader__": "JsonNode", "content": "\"id\"", "is_json": true}]},
        "protocol": 2,
        "_skops_version": "0.11.0"
    })
}

/// CVE-2025-54413's shape: `MethodNode`s that declare `builtins.int` and walk from a trusted
/// estimator's method to `__builtins__`.
pub fn skops_method_chain() -> Value {
    let qda = json!({"__class__": "QuadraticDiscriminantAnalysis", "__module__": "sklearn.discriminant_analysis",
                     "__loader__": "ObjectNode", "__id__": 1});
    let inner = json!({"__class__": "int", "__module__": "builtins", "__loader__": "MethodNode",
                       "content": {"obj": qda, "func": "decision_function"}});
    json!({"__class__": "int", "__module__": "builtins", "__loader__": "MethodNode",
           "content": {"obj": inner, "func": "__builtins__"}, "protocol": 2, "_skops_version": "0.11.0"})
}

/// An OpenVINO IR v11 XML: a parameter, one `Const` of 3x3 f32 at `offset` (36 bytes), a MatMul,
/// a result, then `extra_layers`; `prolog` goes between the XML declaration and `<net>`.
pub fn openvino_xml(prolog: &str, offset: u64, extra_layers: &str) -> String {
    format!(
        r#"<?xml version="1.0"?>
{prolog}<net name="tiny" version="11">
	<layers>
		<layer id="0" name="x" type="Parameter" version="opset1">
			<data shape="1,3" element_type="f32" />
			<output>
				<port id="0" precision="FP32" names="x">
					<dim>1</dim>
					<dim>3</dim>
				</port>
			</output>
		</layer>
		<layer id="1" name="w" type="Const" version="opset1">
			<data element_type="f32" shape="3,3" offset="{offset}" size="36" />
			<output>
				<port id="0" precision="FP32">
					<dim>3</dim>
					<dim>3</dim>
				</port>
			</output>
		</layer>
		<layer id="2" name="mm" type="MatMul" version="opset1">
			<data transpose_a="false" transpose_b="false" />
		</layer>{extra_layers}
		<layer id="3" name="out" type="Result" version="opset1" />
	</layers>
	<edges>
		<edge from-layer="0" from-port="0" to-layer="2" to-port="0" />
		<edge from-layer="1" from-port="0" to-layer="2" to-port="1" />
		<edge from-layer="2" from-port="2" to-layer="3" to-port="0" />
	</edges>
	<rt_info>
		<MO_version value="2024.6.0" />
	</rt_info>
</net>
"#
    )
}

/// 36 bytes of float32 constants (the 3x3 identity).
pub fn openvino_bin() -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..9 {
        let v: f32 = if i % 4 == 0 { 1.0 } else { 0.0 };
        out.extend_from_slice(&v.to_le_bytes());
    }
    out
}

/// An XXE attempt in the prolog: an external entity, used in the network's name.
pub const OPENVINO_XXE_PROLOG: &str =
    "<!DOCTYPE net [\n  <!ENTITY xxe SYSTEM \"file:///etc/passwd\">\n]>\n";

/// A custom layer from an extension library.
pub const OPENVINO_CUSTOM_LAYER: &str =
    "\n\t\t<layer id=\"4\" name=\"tok\" type=\"RegexNormalization\" version=\"extension\" />";
