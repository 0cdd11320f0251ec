//! OpenVINO IR (issue 40), end to end through the binary: the XML read without entity expansion
//! (an XXE attempt is denied), layers listed, extension layers FMT008, the `.bin` recognised and
//! sized against the XML's weight ranges; included from integration.rs.

use crate::support::formats40::*;
use crate::support::*;

fn on<'a>(report: &'a serde_json::Value, path: &str, rule: &str) -> Vec<&'a serde_json::Value> {
    findings(report, rule)
        .into_iter()
        .filter(|f| f["path"] == path)
        .collect()
}

#[test]
fn a_benign_ir_and_its_weights_are_recognised_and_pass() {
    let repo = Repo::new();
    repo.file("ov/openvino_model.xml", openvino_xml("", 0, ""));
    repo.file("ov/openvino_model.bin", openvino_bin());
    let (code, report) = scan_json(repo.path(), &[]);
    assert_eq!(code, 0, "{report:#}");
    let xml = file(&report, "ov/openvino_model.xml");
    assert_eq!(xml["format"], "openvino");
    assert_eq!(xml["kind"], "weights");
    let ir = &xml["facts"]["openvino"];
    assert_eq!(ir["version"], "11");
    assert_eq!(ir["layers"], 4);
    assert_eq!(ir["op_types"]["MatMul"], 1);
    assert_eq!(ir["opsets"]["opset1"], 4);
    assert_eq!(ir["weights"]["end"], 36);
    let bin = file(&report, "ov/openvino_model.bin");
    assert_eq!(bin["format"], "openvino-weights");
    assert_eq!(bin["kind"], "weights");
    assert_eq!(bin["facts"]["openvino"]["ir"], "ov/openvino_model.xml");
    for path in ["ov/openvino_model.xml", "ov/openvino_model.bin"] {
        let rules = rules_on(&report, path);
        assert!(rules.is_empty(), "{path}: {rules:?}");
    }
}

#[test]
fn the_bin_alone_stays_unrecognised_weights() {
    // Without its IR the `.bin` is what it was before issue 40: FMT002, could not be checked.
    let repo = Repo::new();
    repo.file("openvino_model.bin", openvino_bin());
    let (_, report) = scan_json(repo.path(), &[]);
    assert_eq!(file(&report, "openvino_model.bin")["format"], "unknown");
    assert!(rules_on(&report, "openvino_model.bin").contains(&"FMT002".to_string()));
}

#[test]
fn an_xxe_attempt_is_denied_and_nothing_is_expanded() {
    let repo = Repo::new();
    let xml = openvino_xml(OPENVINO_XXE_PROLOG, 0, "").replace("name=\"tiny\"", "name=\"&xxe;\"");
    repo.file("model.xml", xml);
    repo.file("model.bin", openvino_bin());
    let (code, report) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1, "{report:#}");
    let problems: Vec<_> = on(&report, "model.xml", "FMT009")
        .iter()
        .map(|d| d["evidence"]["problem"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(problems, ["xml-doctype-entities", "xml-entity-reference"]);
    assert!(
        on(&report, "model.xml", "FMT009")
            .iter()
            .all(|d| d["action"] == "deny")
    );
    // The entity stays as written: no file was read into the report.
    let f = file(&report, "model.xml");
    assert_eq!(f["format"], "openvino");
    assert_eq!(f["facts"]["openvino"]["name"], "&xxe;");
    assert!(
        !serde_json::to_string(&report)
            .unwrap()
            .contains("root:x:0:0")
    );
}

#[test]
fn an_extension_layer_is_fmt008() {
    let repo = Repo::new();
    repo.file("model.xml", openvino_xml("", 0, OPENVINO_CUSTOM_LAYER));
    repo.file("model.bin", openvino_bin());
    let (code, report) = scan_json(repo.path(), &[]);
    assert_eq!(code, 0);
    let custom = on(&report, "model.xml", "FMT008");
    assert_eq!(custom.len(), 1, "{report:#}");
    assert_eq!(custom[0]["action"], "warn");
    assert_eq!(custom[0]["evidence"]["layer"], "tok");
    assert_eq!(custom[0]["evidence"]["version"], "extension");
    assert_eq!(
        file(&report, "model.xml")["facts"]["openvino"]["custom_layers"][0],
        "RegexNormalization@extension"
    );
}

#[test]
fn a_weight_range_past_the_bin_is_denied() {
    let repo = Repo::new();
    repo.file("model.xml", openvino_xml("", 16, ""));
    repo.file("model.bin", openvino_bin());
    let (code, report) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1);
    let d = on(&report, "model.xml", "FMT009");
    assert_eq!(d.len(), 1, "{report:#}");
    assert_eq!(d[0]["evidence"]["problem"], "const-out-of-range");
    assert_eq!(d[0]["evidence"]["layer"], "w");
    assert_eq!(d[0]["evidence"]["end"], 52);
    assert_eq!(d[0]["evidence"]["size"], 36);
    // An absurd offset in the XML itself is caught without the `.bin`.
    let repo = Repo::new();
    repo.file("model.xml", openvino_xml("", u64::MAX, ""));
    let (code, report) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1);
    let d = on(&report, "model.xml", "FMT009");
    assert_eq!(d[0]["evidence"]["problem"], "const-range-overflow");
}

#[test]
fn an_ir_under_another_name_and_a_broken_one() {
    let repo = Repo::new();
    repo.file("net.txt", openvino_xml("", 0, ""));
    repo.file("cut.xml", &openvino_xml("", 0, "")[..400]);
    let (_, report) = scan_json(repo.path(), &[]);
    assert_eq!(file(&report, "net.txt")["format"], "openvino");
    assert_eq!(file(&report, "cut.xml")["format"], "openvino");
    assert!(rules_on(&report, "cut.xml").contains(&"FMT007".to_string()));
}

#[test]
fn an_xxe_padded_past_the_probe_window_is_still_denied() {
    let repo = Repo::new();
    let prolog = format!(
        "<!DOCTYPE net [\n  <!ENTITY xxe SYSTEM \"file:///etc/passwd\">\n<!-- {} -->\n]>\n",
        "x".repeat(100_000)
    );
    repo.file("model.xml", openvino_xml(&prolog, 0, ""));
    repo.file("model.bin", openvino_bin());
    let (code, report) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(file(&report, "model.xml")["format"], "openvino");
    assert_eq!(file(&report, "model.bin")["format"], "openvino-weights");
    let d = on(&report, "model.xml", "FMT009");
    assert_eq!(d[0]["evidence"]["problem"], "xml-doctype-entities");
}
