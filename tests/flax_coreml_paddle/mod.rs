//! Issue 40: Flax/JAX msgpack checkpoints, Core ML models and packages, PaddlePaddle programs and
//! parameters, from the binary: recognised by name and content, their tensors or operators in the
//! JSON report and the SBOM, hostile sizes and broken structure reported (FMT009, FMT007,
//! SCAN004), code-carrying surfaces judged (FMT008 custom Core ML layers and models, FMT006
//! Paddle `py_func`), and benign twins that pass.

use crate::support::flax_coreml_paddle as build;
use crate::support::*;

fn denied(r: &serde_json::Value, path: &str) -> Vec<String> {
    r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["path"] == path && f["action"] == "deny")
        .map(|f| f["rule"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn flax_checkpoint_is_read_and_its_arrays_listed() {
    let repo = Repo::new();
    repo.file("m/flax_model.msgpack", build::flax_params())
        .file("m/checkpoint_1000", build::flax_chunked());
    let (code, r) = scan_json(repo.path(), &[]);
    let f = file(&r, "m/flax_model.msgpack");
    assert_eq!(f["format"], "msgpack");
    assert_eq!(f["kind"], "weights");
    assert_eq!(f["facts"]["tensor_count"], 3);
    assert_eq!(f["facts"]["parameters"], 13);
    assert_eq!(f["facts"]["msgpack"]["scalar_count"], 1);
    let names: Vec<&str> = f["facts"]["msgpack"]["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "params/Dense_0/kernel",
            "params/Dense_0/bias",
            "params/embed/0"
        ]
    );
    assert!(rules_on(&r, "m/flax_model.msgpack").is_empty(), "{r:#}");
    // flax.training.checkpoints' name, no extension; a chunked array.
    let c = file(&r, "m/checkpoint_1000");
    assert_eq!(c["format"], "msgpack");
    assert_eq!(c["facts"]["msgpack"]["chunked_arrays"], 1);
    assert!(rules_on(&r, "m/checkpoint_1000").is_empty(), "{r:#}");
    assert!(denied(&r, "m/flax_model.msgpack").is_empty());
    assert_eq!(code, 0, "{r:#}");
}

#[test]
fn flax_array_claiming_40_gb_in_24_bytes_is_denied() {
    let repo = Repo::new();
    repo.file(
        "flax_model.msgpack",
        build::flax_file(&[(
            "w",
            build::ndarray_raw(&[100_000, 100_000], "float32", &[0u8; 24]),
        )]),
    );
    let (code, r) = scan_json(repo.path(), &[]);
    let d = findings(&r, "FMT009");
    assert_eq!(d.len(), 1, "{r:#}");
    assert_eq!(d[0]["evidence"]["problem"], "array-past-eof");
    assert_eq!(d[0]["evidence"]["tensor"], "w");
    assert_eq!(d[0]["action"], "deny");
    assert_eq!(code, 1);
}

#[test]
fn flax_hostile_variants_are_findings_never_a_crash() {
    let repo = Repo::new();
    let good = build::flax_params();
    let mut deep = Vec::new();
    for _ in 0..50_000 {
        deep.extend_from_slice(&[0x81, 0xa1, b'k']);
    }
    deep.push(0xc0);
    let mut trailing = good.clone();
    trailing.extend_from_slice(b"\x80\x04\x95\x05\x00\x00\x00\x00\x00\x00\x00N.");
    repo.file(
        "mismatch.msgpack",
        build::flax_file(&[("w", build::ndarray_raw(&[3], "float32", &[0u8; 8]))]),
    )
    .file("truncated.msgpack", &good[..good.len() - 20])
    .file("deep.msgpack", &deep)
    .file(
        "count.msgpack",
        [0xdf, 0xff, 0xff, 0xff, 0xff, 0xa1, b'a', 0xc0],
    )
    .file("trailing.msgpack", &trailing);
    let (_, r) = scan_json(repo.path(), &[]);
    let problem = |path: &str, rule: &str| -> Vec<String> {
        findings(&r, rule)
            .iter()
            .filter(|f| f["path"] == path)
            .map(|f| f["evidence"]["problem"].as_str().unwrap_or("").to_string())
            .collect()
    };
    assert_eq!(
        problem("mismatch.msgpack", "FMT007"),
        ["array-size-mismatch"]
    );
    assert!(!problem("truncated.msgpack", "FMT007").is_empty(), "{r:#}");
    assert_eq!(problem("deep.msgpack", "SCAN004"), ["too-deep"]);
    assert_eq!(problem("count.msgpack", "FMT009"), ["count-past-eof"]);
    assert_eq!(problem("trailing.msgpack", "FMT007"), ["trailing-bytes"]);
    // The pickle after the msgpack value is named as one (a polyglot).
    assert!(
        rules_on(&r, "trailing.msgpack").contains(&"FMT001".to_string()),
        "{r:#}"
    );
}

#[test]
fn coreml_model_and_package_are_read() {
    let repo = Repo::new();
    let nn = build::coreml_neural_network(&[
        build::coreml_layer("conv", 100),
        build::coreml_layer("relu", 130),
    ]);
    repo.file("m/model.mlmodel", &nn)
        .file(
            "p/M.mlpackage/Manifest.json",
            build::coreml_manifest(&[
                ("A1", "com.apple.CoreML/model.mlmodel"),
                ("B2", "com.apple.CoreML/weights"),
            ]),
        )
        .file("p/M.mlpackage/Data/com.apple.CoreML/model.mlmodel", &nn)
        .file(
            "p/M.mlpackage/Data/com.apple.CoreML/weights/weight.bin",
            build::coreml_weight_bin(&[&[1u8; 100], &[2u8; 30]]),
        );
    let (code, r) = scan_json(repo.path(), &[]);
    let m = file(&r, "m/model.mlmodel");
    assert_eq!(m["format"], "coreml");
    assert_eq!(m["facts"]["coreml"]["model_type"], "neuralNetwork");
    assert_eq!(m["facts"]["coreml"]["layer_count"], 2);
    assert_eq!(m["facts"]["coreml"]["layer_types"]["convolution"], 1);
    let w = file(&r, "p/M.mlpackage/Data/com.apple.CoreML/weights/weight.bin");
    assert_eq!(w["format"], "coreml-weights");
    assert_eq!(w["kind"], "weights");
    assert_eq!(w["facts"]["coreml"]["weights"]["blob_count"], 2);
    assert_eq!(w["facts"]["data_bytes"], 130);
    let manifest = file(&r, "p/M.mlpackage/Manifest.json");
    assert_eq!(manifest["facts"]["coreml"]["manifest"]["root"], "A1");
    assert_eq!(
        file(&r, "p/M.mlpackage/Data/com.apple.CoreML/model.mlmodel")["format"],
        "coreml"
    );
    for f in ["FMT002", "FMT007", "FMT008", "FMT009"] {
        assert!(findings(&r, f).is_empty(), "{f}: {r:#}");
    }
    // The package is one model of the folder holding it, not one per inner folder.
    let dirs: Vec<&str> = r["repository"]["model_dirs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["path"].as_str().unwrap())
        .collect();
    assert_eq!(dirs, ["m", "p"], "{r:#}");
    assert_eq!(code, 0, "{r:#}");
}

#[test]
fn coreml_custom_layers_and_models_are_flagged() {
    let repo = Repo::new();
    repo.file(
        "layer/model.mlmodel",
        build::coreml_neural_network(&[
            build::coreml_layer("conv", 100),
            build::coreml_custom_layer("evil", "EvilLayer"),
        ]),
    )
    .file(
        "custom/model.mlmodel",
        build::coreml_custom_model("MyModel"),
    );
    let (_, r) = scan_json(repo.path(), &[]);
    let d = findings(&r, "FMT008");
    assert_eq!(d.len(), 2, "{r:#}");
    let layer = d
        .iter()
        .find(|f| f["path"] == "layer/model.mlmodel")
        .unwrap();
    assert_eq!(layer["evidence"]["problem"], "custom-layer");
    assert_eq!(layer["evidence"]["class"], "EvilLayer");
    assert_eq!(layer["evidence"]["layer"], "evil");
    let model = d
        .iter()
        .find(|f| f["path"] == "custom/model.mlmodel")
        .unwrap();
    assert_eq!(model["evidence"]["problem"], "custom-model");
    assert_eq!(model["evidence"]["class"], "MyModel");
    assert_eq!(
        file(&r, "layer/model.mlmodel")["facts"]["coreml"]["custom_layers"][0]["class"],
        "EvilLayer"
    );
}

#[test]
fn coreml_hostile_variants_are_findings() {
    let repo = Repo::new();
    let nn = build::coreml_neural_network(&[build::coreml_layer("conv", 100)]);
    let mut blob = build::coreml_weight_bin(&[&[1u8; 10]]);
    blob[64 + 8..64 + 16].copy_from_slice(&(40u64 << 30).to_le_bytes());
    let mut deep = build::coreml_custom_model("X");
    for _ in 0..70 {
        deep = build::coreml_pipeline(&[deep]);
    }
    repo.file("t/model.mlmodel", &nn[..nn.len() - 4])
        .file("d/model.mlmodel", &deep)
        .file("w/weight.bin", &blob)
        .file(
            "bad/B.mlpackage/Manifest.json",
            build::coreml_manifest(&[
                ("A", "com.apple.CoreML/model.mlmodel"),
                ("E", "../../../etc/passwd"),
                ("M", "com.apple.CoreML/weights"),
            ]),
        )
        .file("bad/B.mlpackage/Data/com.apple.CoreML/model.mlmodel", &nn);
    let (code, r) = scan_json(repo.path(), &[]);
    let problems = |rule: &str, path: &str| -> Vec<String> {
        findings(&r, rule)
            .iter()
            .filter(|f| f["path"] == path)
            .map(|f| f["evidence"]["problem"].as_str().unwrap_or("").to_string())
            .collect()
    };
    // Cut short, the spec's lengths run past the file.
    assert_eq!(
        problems("FMT007", "t/model.mlmodel"),
        ["length-exceeds-parent"]
    );
    assert_eq!(problems("SCAN004", "d/model.mlmodel"), ["too-deep"]);
    assert_eq!(problems("FMT009", "w/weight.bin"), ["blob-past-eof"]);
    assert_eq!(file(&r, "w/weight.bin")["format"], "coreml-weights");
    assert_eq!(
        problems("FMT009", "bad/B.mlpackage/Manifest.json"),
        ["path-escape"]
    );
    assert_eq!(
        problems("FMT007", "bad/B.mlpackage/Manifest.json"),
        ["item-missing"]
    );
    assert_eq!(code, 1);
}

#[test]
fn paddle_inference_model_is_read_and_pdparams_stay_pickles() {
    let repo = Repo::new();
    repo.file("m/inference.pdmodel", build::paddle_benign_program())
        .file(
            "m/inference.pdiparams",
            build::paddle_params(&[(build::PADDLE_FP32, &[4, 3]), (3, &[2])]),
        )
        .file("m/model.pdparams", pickle_ordered_dict())
        .file("evil/model.pdparams", pickle_call("os", "system", "id"));
    let (_, r) = scan_json(repo.path(), &[]);
    let m = file(&r, "m/inference.pdmodel");
    assert_eq!(m["format"], "paddle");
    assert_eq!(m["kind"], "weights");
    assert_eq!(m["facts"]["paddle"]["op_count"], 4);
    assert_eq!(m["facts"]["paddle"]["op_types"]["matmul_v2"], 1);
    let p = file(&r, "m/inference.pdiparams");
    assert_eq!(p["format"], "paddle-params");
    assert_eq!(p["facts"]["tensor_count"], 2);
    assert_eq!(p["facts"]["data_bytes"], 48 + 16);
    for f in ["m/inference.pdmodel", "m/inference.pdiparams"] {
        let rules = rules_on(&r, f);
        assert!(
            rules.iter().all(|r| !r.starts_with("FMT")),
            "{f}: {rules:?}"
        );
    }
    // `.pdparams` is `paddle.save`'s pickle, judged as one.
    assert_eq!(file(&r, "m/model.pdparams")["format"], "pickle");
    assert!(denied(&r, "m/model.pdparams").is_empty(), "{r:#}");
    assert_eq!(file(&r, "evil/model.pdparams")["format"], "pickle");
    assert!(denied(&r, "evil/model.pdparams").contains(&"PKL001".to_string()));
}

#[test]
fn paddle_py_func_is_denied_and_its_benign_twin_passes() {
    let repo = Repo::new();
    let evil = build::paddle_program(&[vec![
        build::paddle_op("feed", ("col", 0)),
        build::paddle_op("py_func", ("forward_callable_id", 0)),
        build::paddle_op("fetch", ("col", 0)),
    ]]);
    let twin = build::paddle_program(&[vec![
        build::paddle_op("feed", ("col", 0)),
        build::paddle_op("tanh", ("use_cudnn", 0)),
        build::paddle_op("fetch", ("col", 0)),
    ]]);
    repo.file("evil/inference.pdmodel", &evil)
        .file("good/inference.pdmodel", &twin);
    let (code, r) = scan_json(repo.path(), &[]);
    let d = findings(&r, "FMT006");
    assert_eq!(d.len(), 1, "{r:#}");
    assert_eq!(d[0]["path"], "evil/inference.pdmodel");
    assert_eq!(d[0]["evidence"]["op"], "py_func");
    assert_eq!(d[0]["action"], "deny");
    assert!(rules_on(&r, "good/inference.pdmodel").is_empty(), "{r:#}");
    assert_eq!(code, 1);
}

#[test]
fn paddle_hostile_variants_are_findings() {
    let repo = Repo::new();
    let prog = build::paddle_benign_program();
    let mut big = build::paddle_param_header(build::PADDLE_FP32, &[1 << 20, 1 << 20]);
    big.extend_from_slice(&[0u8; 24]);
    // A program's schema nests four messages deep (program, block, op, attribute), so the
    // `paddle_depth` limit is exercised by the unit tests with a lower limit.
    repo.file("t/inference.pdmodel", &prog[..prog.len() - 7])
        .file("b/inference.pdiparams", &big);
    let (_, r) = scan_json(repo.path(), &[]);
    let problems = |rule: &str, path: &str| -> Vec<String> {
        findings(&r, rule)
            .iter()
            .filter(|f| f["path"] == path)
            .map(|f| f["evidence"]["problem"].as_str().unwrap_or("").to_string())
            .collect()
    };
    assert!(
        !problems("FMT007", "t/inference.pdmodel").is_empty(),
        "{r:#}"
    );
    assert_eq!(
        problems("FMT009", "b/inference.pdiparams"),
        ["tensor-past-eof"]
    );
}

#[test]
fn coreml_paddle_and_flax_are_recognised_by_content_under_any_name() {
    // Issue 40: no name says what these are (Paddle's legacy program name is `__model__`).
    let repo = Repo::new();
    let nn = build::coreml_neural_network(&[build::coreml_layer("conv", 100)]);
    let custom = build::coreml_neural_network(&[build::coreml_custom_layer("evil", "EvilLayer")]);
    repo.file("a/model_spec", &nn)
        .file("b/__model__", build::paddle_benign_program())
        .file("c/state", build::flax_params())
        .file("d/spec", &custom);
    let (_, r) = scan_json(repo.path(), &[]);
    let a = file(&r, "a/model_spec");
    assert_eq!(a["format"], "coreml", "{r:#}");
    assert_eq!(a["facts"]["coreml"]["model_type"], "neuralNetwork");
    let b = file(&r, "b/__model__");
    assert_eq!(b["format"], "paddle");
    assert_eq!(b["facts"]["paddle"]["op_count"], 4);
    let c = file(&r, "c/state");
    assert_eq!(c["format"], "msgpack");
    assert_eq!(c["facts"]["tensor_count"], 3);
    for f in ["a/model_spec", "b/__model__", "c/state"] {
        assert!(rules_on(&r, f).is_empty(), "{f}: {r:#}");
    }
    // The code-carrying surface is judged whatever the name.
    assert_eq!(file(&r, "d/spec")["format"], "coreml");
    assert!(
        rules_on(&r, "d/spec").contains(&"FMT008".to_string()),
        "{r:#}"
    );
    assert!(findings(&r, "FMT002").is_empty(), "{r:#}");
}
