//! skops files (issue 40), end to end through the binary: `schema.json`'s types judged like
//! pickle globals, the advisory node shapes denied, members read as before; included from
//! integration.rs.

use crate::support::formats40::*;
use crate::support::*;
use serde_json::json;

fn on<'a>(report: &'a serde_json::Value, path: &str, rule: &str) -> Vec<&'a serde_json::Value> {
    findings(report, rule)
        .into_iter()
        .filter(|f| f["path"] == path)
        .collect()
}

#[test]
fn a_benign_skops_model_is_recognised_listed_and_passes() {
    let repo = Repo::new();
    repo.file("model.skops", skops_file(&skops_benign_schema(), &[]));
    let (code, report) = scan_json(repo.path(), &[]);
    assert_eq!(code, 0, "{report:#}");
    let f = file(&report, "model.skops");
    assert_eq!(f["format"], "skops");
    assert_eq!(f["kind"], "weights");
    assert_eq!(f["facts"]["archive_layout"], "skops");
    let skops = &f["facts"]["skops"];
    assert_eq!(skops["protocol"], 2);
    assert_eq!(skops["skops_version"], "0.13.0");
    assert_eq!(
        skops["root"],
        "sklearn.linear_model._logistic.LogisticRegression"
    );
    assert_eq!(skops["files"], 1);
    assert!(
        skops["types"]
            .as_array()
            .unwrap()
            .contains(&json!("numpy.ndarray"))
    );
    let rules = rules_on(&report, "model.skops");
    assert!(rules.is_empty(), "{rules:?}");
}

#[test]
fn a_dangerous_callable_in_the_schema_is_pkl001_and_denied() {
    let repo = Repo::new();
    let schema = skops_schema_with("loss_fn", skops_function("os", "system"));
    repo.file("model.skops", skops_file(&schema, &[]));
    let (code, report) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1, "{report:#}");
    let hits = on(&report, "model.skops", "PKL001");
    assert_eq!(hits.len(), 1, "{report:#}");
    let d = hits[0];
    assert_eq!(d["action"], "deny");
    assert_eq!(d["evidence"]["global"], "os.system");
    assert_eq!(d["evidence"]["loader"], "FunctionNode");
    assert_eq!(d["evidence"]["node"], "/content/content/loss_fn");
    assert_eq!(d["evidence"]["format"], "skops");
    assert_eq!(d["location"]["member"], "schema.json");
    // An unknown class that skops does not trust by default is one PKL002 (warn), folded.
    let repo = Repo::new();
    let schema = skops_schema_with(
        "helper",
        json!({"__class__": "Helper", "__module__": "ourlab.models", "__loader__": "ObjectNode"}),
    );
    repo.file("model.skops", skops_file(&schema, &[]));
    let (code, report) = scan_json(repo.path(), &[]);
    assert_eq!(code, 0, "{report:#}");
    let warned = on(&report, "model.skops", "PKL002");
    assert_eq!(warned.len(), 1);
    assert_eq!(warned[0]["action"], "warn");
    assert_eq!(warned[0]["evidence"]["global"], "ourlab.models.Helper");
}

#[test]
fn cve_2025_54412_operator_node_is_denied_as_exploit_shape_and_operator_call() {
    let repo = Repo::new();
    let schema = skops_operator_call(
        "sklearn.linear_model._stochastic_gradient.SGDRegressor",
        ("skops.io", "loads"),
    );
    repo.file("model.skops", skops_file(&schema, &[]));
    let (code, report) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1);
    let shape = on(&report, "model.skops", "FMT009");
    assert_eq!(shape.len(), 1, "{report:#}");
    assert_eq!(shape[0]["evidence"]["problem"], "operator-module-mismatch");
    assert_eq!(
        shape[0]["evidence"]["references"],
        json!(["CVE-2025-54412", "GHSA-m7f4-hrc6-fwg3"])
    );
    assert!(
        on(&report, "model.skops", "PKL001")
            .iter()
            .any(|d| d["evidence"]["global"] == "operator.call")
    );
}

#[test]
fn cve_2025_54413_method_chain_is_denied() {
    let repo = Repo::new();
    repo.file("model.skops", skops_file(&skops_method_chain(), &[]));
    let (code, report) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1);
    let problems: Vec<_> = on(&report, "model.skops", "FMT009")
        .iter()
        .map(|d| d["evidence"]["problem"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        problems,
        ["method-chain", "method-type-mismatch"],
        "{report:#}"
    );
    assert!(
        on(&report, "model.skops", "PKL001")
            .iter()
            .any(|d| d["evidence"]["global"] == "builtins.int.__builtins__")
    );
}

#[test]
fn numpy_and_pickle_members_are_still_read() {
    let repo = Repo::new();
    let pickle = pickle_call("posix", "system", "id");
    repo.file(
        "model.skops",
        skops_file(&skops_benign_schema(), &[("extra.pkl", &pickle)]),
    );
    let (code, report) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1);
    let hits = on(&report, "model.skops", "PKL001");
    assert_eq!(hits.len(), 1, "{report:#}");
    assert_eq!(hits[0]["location"]["member"], "extra.pkl");
    let f = file(&report, "model.skops");
    assert_eq!(f["format"], "skops");
    assert_eq!(f["facts"]["archive_members"], 3);
}

#[test]
fn a_skops_name_over_another_zip_or_a_broken_schema_is_reported() {
    let repo = Repo::new();
    repo.file("plain.skops", zip_stored(&[("a.txt", b"hello")]));
    repo.file(
        "broken.skops",
        zip_stored(&[("schema.json", b"{\"__loader__\": \"ObjectNode\", ")]),
    );
    let (_, report) = scan_json(repo.path(), &[]);
    assert_eq!(file(&report, "plain.skops")["format"], "zip");
    assert!(rules_on(&report, "plain.skops").contains(&"FMT001".to_string()));
    let broken = on(&report, "broken.skops", "FMT007");
    assert_eq!(broken.len(), 1, "{report:#}");
    assert_eq!(broken[0]["evidence"]["problem"], "invalid-json");
}

#[test]
fn the_sbom_lists_the_skops_file_with_its_format() {
    let repo = Repo::new();
    repo.file("model.skops", skops_file(&skops_benign_schema(), &[]));
    let out = tempfile::tempdir().unwrap();
    let sbom = out.path().join("sbom.json");
    let (code, _) = scan_json(repo.path(), &["--sbom", sbom.to_str().unwrap()]);
    assert_eq!(code, 0);
    let text = std::fs::read_to_string(&sbom).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    // Files are nested under their model directory's component.
    let mut stack = vec![&v];
    let mut comp = None;
    while let Some(c) = stack.pop() {
        if c["name"] == "model.skops" {
            comp = Some(c);
        }
        stack.extend(c["components"].as_array().into_iter().flatten());
    }
    let comp = comp.expect("component");
    assert!(
        comp["properties"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["name"] == "modelgate:format" && p["value"] == "skops"),
        "{comp:#}"
    );
}

#[test]
fn the_policy_safe_globals_vouch_for_skops_types_too() {
    let repo = Repo::new();
    let schema = skops_schema_with(
        "helper",
        json!({"__class__": "Helper", "__module__": "ourlab.models", "__loader__": "ObjectNode"}),
    );
    repo.file("model.skops", skops_file(&schema, &[]));
    repo.file(
        "modelgate.toml",
        "version = 1\n[pickle]\nsafe_globals = [\"ourlab.models.*\"]\n",
    );
    let (code, report) = scan_json(repo.path(), &[]);
    assert_eq!(code, 0, "{report:#}");
    assert!(
        on(&report, "model.skops", "PKL002").is_empty(),
        "{report:#}"
    );
}
