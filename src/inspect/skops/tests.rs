use super::*;
use crate::inspect::ScanConfig;
use serde_json::json;

fn limits() -> Limits {
    Limits::from(&crate::model::limits::Limits::default())
}

fn leaf(loader: &str, module: &str, class: &str) -> Value {
    json!({"__class__": class, "__module__": module, "__loader__": loader})
}

/// A fitted `LogisticRegression` as skops 0.13 writes it (abridged).
fn benign() -> Value {
    json!({
        "__class__": "LogisticRegression",
        "__module__": "sklearn.linear_model._logistic",
        "__loader__": "ObjectNode",
        "content": {
            "__class__": "dict", "__module__": "builtins", "__loader__": "DictNode",
            "content": {
                "C": {"__class__": "float", "__module__": "builtins", "__loader__": "JsonNode", "content": "1.0", "is_json": true},
                "coef_": {"__class__": "ndarray", "__module__": "numpy", "__loader__": "NdArrayNode", "type": "numpy", "file": "0.npy"},
                "dtype": {"__class__": "dtype", "__module__": "numpy", "__loader__": "DTypeNode", "content": "<f8"},
                "score": {"__class__": "sqrt", "__module__": "numpy", "__loader__": "FunctionNode"},
                "opts": {"__class__": "OrderedDict", "__module__": "collections", "__loader__": "DictNode", "content": {},
                         "key_types": {"__class__": "list", "__module__": "builtins", "__loader__": "ListNode", "content": []}}
            },
            "key_types": {"__class__": "list", "__module__": "builtins", "__loader__": "ListNode",
                          "content": [leaf("TypeNode", "builtins", "str")]}
        },
        "protocol": 2,
        "_skops_version": "0.13.0"
    })
}

fn judge(schema: &Value) -> Vec<crate::model::finding::Detection> {
    let cfg = ScanConfig::default();
    let mut ctx = Ctx::new(&cfg, "model.skops", std::path::Path::new(""));
    let bytes = serde_json::to_vec(schema).unwrap();
    assert!(inspect_schema(&mut ctx, &bytes, false, SCHEMA, true));
    ctx.detections
}

fn rules(d: &[crate::model::finding::Detection]) -> Vec<&'static str> {
    let mut r: Vec<_> = d.iter().map(|d| d.rule.code()).collect();
    r.sort_unstable();
    r
}

#[test]
fn a_benign_sklearn_schema_names_its_types_and_passes() {
    let v = benign();
    assert!(is_schema(&v));
    let s = walk(&v, &limits());
    assert_eq!(s.facts.protocol, Some(2));
    assert_eq!(s.facts.skops_version.as_deref(), Some("0.13.0"));
    assert_eq!(
        s.facts.root.as_deref(),
        Some("sklearn.linear_model._logistic.LogisticRegression")
    );
    assert_eq!(s.facts.nodes, 10);
    assert_eq!(s.facts.files, 1);
    assert!(s.facts.types.contains("numpy.ndarray"));
    assert!(s.facts.types.contains("builtins.str"));
    assert!(s.problems.is_empty(), "{:?}", s.problems);
    assert!(judge(&v).is_empty(), "{:?}", judge(&v));
}

#[test]
fn a_dangerous_function_node_is_pkl001_and_an_unknown_type_pkl002() {
    let mut v = benign();
    v["content"]["content"]["score"] = leaf("FunctionNode", "os", "system");
    v["content"]["content"]["helper"] = leaf("ObjectNode", "mylib.models", "Custom");
    let d = judge(&v);
    assert_eq!(rules(&d), ["PKL001", "PKL002"], "{d:?}");
    let unsafe_ = d.iter().find(|d| d.rule.code() == "PKL001").unwrap();
    assert_eq!(unsafe_.evidence["global"], "os.system");
    assert_eq!(unsafe_.evidence["loader"], "FunctionNode");
    assert_eq!(unsafe_.evidence["called"], false);
    assert_eq!(unsafe_.evidence["format"], "skops");
    assert_eq!(unsafe_.severity, Severity::High);
    let unknown = d.iter().find(|d| d.rule.code() == "PKL002").unwrap();
    assert_eq!(unknown.evidence["global"], "mylib.models.Custom");
    assert_eq!(unknown.evidence["called"], true);
    assert_eq!(unknown.location.member.as_deref(), Some(SCHEMA));
}

#[test]
fn a_constructor_from_reduce_of_exec_is_critical() {
    let mut v = benign();
    v["content"]["content"]["x"] = json!({
        "__class__": "exec", "__module__": "builtins", "__loader__": "ConstructorFromReduceNode",
        "content": {"__class__": "tuple", "__module__": "builtins", "__loader__": "TupleNode", "content": []}
    });
    let d = judge(&v);
    let hit = d
        .iter()
        .find(|d| d.evidence["global"] == "builtins.exec")
        .unwrap();
    assert_eq!(hit.rule.code(), "PKL001");
    assert_eq!(hit.severity, Severity::Critical);
}

#[test]
fn cve_2025_54412_operator_node_with_a_foreign_module_is_fmt009_and_judged_as_operator() {
    let v = json!({
        "__class__": "call",
        "__module__": "sklearn.linear_model._stochastic_gradient.SGDRegressor",
        "__loader__": "OperatorFuncNode",
        "attrs": {"__class__": "tuple", "__module__": "builtins", "__loader__": "TupleNode",
                  "content": [leaf("TypeNode", "skops.io", "loads")]},
        "protocol": 2
    });
    let s = walk(&v, &limits());
    assert_eq!(s.problems.len(), 1);
    assert_eq!(s.problems[0].code, "operator-module-mismatch");
    assert_eq!(s.problems[0].kind, ProblemKind::Exploit);
    let d = judge(&v);
    let exploit = d.iter().find(|d| d.rule.code() == "FMT009").unwrap();
    assert_eq!(exploit.evidence["references"][0], "CVE-2025-54412");
    assert!(
        d.iter()
            .any(|d| d.rule.code() == "PKL001" && d.evidence["global"] == "operator.call")
    );
}

#[test]
fn cve_2025_54413_method_chain_to_builtins_is_denied() {
    let qda = json!({"__class__": "QuadraticDiscriminantAnalysis",
                     "__module__": "sklearn.discriminant_analysis", "__loader__": "ObjectNode", "__id__": 1});
    let inner = json!({"__class__": "int", "__module__": "builtins", "__loader__": "MethodNode",
                       "content": {"obj": qda, "func": "decision_function"}});
    let v = json!({"__class__": "int", "__module__": "builtins", "__loader__": "MethodNode",
                   "content": {"obj": inner, "func": "__builtins__"}, "protocol": 2});
    let s = walk(&v, &limits());
    let codes: Vec<_> = s.problems.iter().map(|p| p.code).collect();
    assert_eq!(codes, ["method-chain", "method-type-mismatch"]);
    let d = judge(&v);
    assert!(
        d.iter().any(|d| d.rule.code() == "PKL001"
            && d.evidence["global"] == "builtins.int.__builtins__"
            && d.evidence["category"] == "dynamic-code"),
        "{d:?}"
    );
    // A method of a trusted estimator, consistent with its object: judged, not an exploit shape.
    let plain = json!({"__class__": "LogisticRegression", "__module__": "sklearn.linear_model",
                       "__loader__": "MethodNode", "protocol": 2,
                       "content": {"func": "predict", "obj": leaf("ObjectNode", "sklearn.linear_model", "LogisticRegression")}});
    assert!(walk(&plain, &limits()).problems.is_empty());
    let d = judge(&plain);
    assert_eq!(rules(&d), ["PKL002"], "{d:?}");
    assert_eq!(d[0].severity, Severity::Low);
}

#[test]
fn a_dict_with_a_callable_key_type_and_a_foreign_loss_node_are_exploit_shapes() {
    let mut v = benign();
    v["content"]["key_types"]["content"] = json!([leaf("MethodNode", "builtins", "int")]);
    let s = walk(&v, &limits());
    assert!(s.problems.iter().any(|p| p.code == "dict-key-callable"));
    let loss = json!({"__class__": "Payload", "__module__": "malicious_mod", "__loader__": "LossNode",
                      "__reduce__": {"args": leaf("TupleNode", "builtins", "tuple")},
                      "content": leaf("DictNode", "builtins", "dict"), "protocol": 2});
    let s = walk(&loss, &limits());
    assert_eq!(s.problems[0].code, "loss-node-type");
    let ok = json!({"__class__": "CyHalfSquaredError", "__module__": "sklearn._loss._loss",
                    "__loader__": "LossNode", "protocol": 2});
    assert!(walk(&ok, &limits()).problems.is_empty());
}

#[test]
fn unknown_loaders_and_untyped_nodes_are_malformed() {
    let v = json!({"__loader__": "EvalNode", "__module__": "x", "__class__": "y", "protocol": 2,
                   "content": {"__loader__": "ObjectNode"}});
    let s = walk(&v, &limits());
    let codes: Vec<_> = s.problems.iter().map(|p| p.code).collect();
    assert_eq!(codes, ["unknown-loader", "node-type"]);
    assert!(s.problems.iter().all(|p| p.kind == ProblemKind::Malformed));
}

#[test]
fn depth_past_json_depth_is_a_limit_and_never_recursion() {
    let mut v = leaf("ListNode", "builtins", "list");
    for _ in 0..100 {
        v = json!({"__class__": "list", "__module__": "builtins", "__loader__": "ListNode", "content": [v]});
    }
    v["protocol"] = json!(2);
    let small = Limits {
        max_bytes: 1 << 20,
        max_depth: 10,
    };
    let s = walk(&v, &small);
    assert!(s.problems.iter().any(|p| p.code == "too-deep"));
    assert!(s.facts.nodes < 10);
}

#[test]
fn a_schema_that_is_not_json_is_malformed_only_under_a_skops_name() {
    let cfg = ScanConfig::default();
    let mut ctx = Ctx::new(&cfg, "model.skops", std::path::Path::new(""));
    assert!(inspect_schema(&mut ctx, b"{not json", false, SCHEMA, true));
    assert_eq!(ctx.detections[0].rule.code(), "FMT007");
    let mut ctx = Ctx::new(&cfg, "bundle.zip", std::path::Path::new(""));
    assert!(!inspect_schema(&mut ctx, b"{not json", false, SCHEMA, true));
    assert!(!inspect_schema(
        &mut ctx,
        br#"{"a": 1}"#,
        false,
        SCHEMA,
        true
    ));
    assert!(ctx.detections.is_empty());
    assert!(ctx.facts.is_empty());
}

#[test]
fn distinct_types_and_problems_are_capped() {
    let items: Vec<Value> = (0..(MAX_SITES + 50))
        .map(|i| leaf("ObjectNode", "m", &format!("C{i}")))
        .collect();
    let v = json!({"__class__": "list", "__module__": "builtins", "__loader__": "ListNode",
                   "content": items, "protocol": 2});
    let s = walk(&v, &limits());
    assert_eq!(s.sites.len(), MAX_SITES);
    assert_eq!(codes_of(&s.problems), ["too-many-types"]);
    let mismatched: Vec<Value> = (0..1000)
        .map(|_| {
            json!({"__class__": "x", "__module__": "y", "__loader__": "OperatorFuncNode",
                        "attrs": leaf("TupleNode", "builtins", "tuple")})
        })
        .collect();
    let v = json!({"__class__": "list", "__module__": "builtins", "__loader__": "ListNode",
                   "content": mismatched, "protocol": 2});
    let s = walk(&v, &limits());
    assert_eq!(s.problems.len(), MAX_PROBLEMS + 1);
    assert_eq!(s.problems[MAX_PROBLEMS].code, "problems-capped");
    // Every occurrence of one callable is one site.
    let op = s.sites.iter().find(|s| s.module == "operator").unwrap();
    assert_eq!(op.occurrences, 1000);
}

fn codes_of(p: &[Problem]) -> Vec<&'static str> {
    p.iter().map(|p| p.code).collect()
}
