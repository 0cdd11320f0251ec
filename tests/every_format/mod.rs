//! Issue 40, "done means": a folder holding one file of every format the issue names is read
//! whole. No file is FMT002 or `unknown`, each has its format in the JSON report and in the
//! SBOM (`modelgate:format`), and the benign files pass.

use serde_json::Value;

use crate::support::flax_coreml_paddle as build;
use crate::support::formats40::*;
use crate::support::legacy::*;
use crate::support::*;

const TEMPLATE: &str = "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}{% endfor %}";

#[test]
fn one_file_of_every_issue_40_format_is_listed_with_its_format() {
    let repo = Repo::new();
    let nn = build::coreml_neural_network(&[build::coreml_layer("conv", 100)]);
    let core = [0x0c, 0, 0, 0, 0x43, 0x42, 0x4d, 0x31, 0, 0, 0, 0];
    let gguf = gguf_with("tokenizer.chat_template", TEMPLATE);
    let exe = crate::support::native::elf_plain();
    // (path, bytes, expected format)
    let files: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "m/tokenizer_config.json",
            serde_json::to_vec(&serde_json::json!({ "chat_template": TEMPLATE })).unwrap(),
            "json",
        ),
        (
            "m/chat_template.jinja",
            TEMPLATE.as_bytes().to_vec(),
            "jinja",
        ),
        (
            "m/model.skops",
            skops_file(&skops_benign_schema(), &[]),
            "skops",
        ),
        ("m/flax_model.msgpack", build::flax_params(), "msgpack"),
        (
            "m/openvino_model.xml",
            openvino_xml("", 0, "").into_bytes(),
            "openvino",
        ),
        ("m/openvino_model.bin", openvino_bin(), "openvino-weights"),
        ("m/model.mlmodel", nn.clone(), "coreml"),
        (
            "m/M.mlpackage/Manifest.json",
            build::coreml_manifest(&[
                ("A1", "com.apple.CoreML/model.mlmodel"),
                ("B2", "com.apple.CoreML/weights"),
            ])
            .into_bytes(),
            "json",
        ),
        (
            "m/M.mlpackage/Data/com.apple.CoreML/model.mlmodel",
            nn,
            "coreml",
        ),
        (
            "m/M.mlpackage/Data/com.apple.CoreML/weights/weight.bin",
            build::coreml_weight_bin(&[&[1u8; 16]]),
            "coreml-weights",
        ),
        (
            "m/model.pte",
            pte(&[("aten::add", "out")], &[], &[]),
            "executorch",
        ),
        ("m/ggml-model.bin", ggjt_model(), "ggml"),
        ("m/model.gguf", gguf.clone(), "gguf"),
        (
            "m/model.llamafile",
            llamafile(&exe, &[("model.gguf", &gguf)], 4096),
            "llamafile",
        ),
        ("m/model.engine", trt_engine(b"plan"), "tensorrt"),
        (
            "m/inference.pdmodel",
            build::paddle_benign_program(),
            "paddle",
        ),
        (
            "m/inference.pdiparams",
            build::paddle_params(&[(build::PADDLE_FP32, &[4, 3])]),
            "paddle-params",
        ),
        ("m/xgb.json", xgboost_json(2).into_bytes(), "xgboost"),
        ("m/xgb.ubj", xgboost_ubj("2"), "xgboost"),
        ("m/lgbm.txt", LIGHTGBM_MODEL.as_bytes().to_vec(), "lightgbm"),
        (
            "m/model.cbm",
            catboost_cbm(core.len() as u32, &core),
            "catboost",
        ),
        (
            "m/weights.7z",
            crate::support::sevenz::sevenz(
                &[("config.json", b"{}")],
                crate::support::sevenz::Coder::Lzma2,
                true,
            ),
            "7z",
        ),
    ];
    for (path, bytes, _) in &files {
        repo.file(path, bytes);
    }
    let sbom = repo.abs("out.cdx.json");
    let out = modelgate()
        .current_dir(repo.path())
        .args(["scan", "--no-git", "-q", "--format", "json", "--sbom"])
        .arg(&sbom)
        .arg(".")
        .output()
        .unwrap();
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        findings(&r, "FMT002").is_empty(),
        "{:#}",
        findings(&r, "FMT002").len()
    );
    let bom: Value = serde_json::from_slice(&std::fs::read(&sbom).unwrap()).unwrap();
    let mut sbom_formats = std::collections::BTreeMap::new();
    collect_formats(&bom["components"], &mut sbom_formats);
    for (path, _, format) in &files {
        let f = file(&r, path);
        assert_eq!(f["format"], *format, "{path}: {f:#}");
        assert_ne!(f["format"], "unknown", "{path}");
        // The llamafile is native code (SRC007, a warning by default); every other file passes.
        let rules = rules_on(&r, path);
        let expected: Vec<&str> = if *format == "llamafile" {
            vec!["SRC007"]
        } else {
            vec![]
        };
        assert_eq!(rules, expected, "{path}");
        assert_eq!(
            sbom_formats.get(*path).map(String::as_str),
            Some(*format),
            "{path} in the SBOM: {sbom_formats:?}"
        );
    }
    assert_eq!(out.status.code(), Some(0), "{r:#}");
}

/// `modelgate:format` of every file component, by the component's name, at any depth.
fn collect_formats(components: &Value, out: &mut std::collections::BTreeMap<String, String>) {
    for c in components.as_array().into_iter().flatten() {
        let format = c["properties"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|p| p["name"] == "modelgate:format")
            .and_then(|p| p["value"].as_str());
        if let (Some(name), Some(format)) = (c["name"].as_str(), format) {
            out.insert(name.to_owned(), format.to_owned());
        }
        collect_formats(&c["components"], out);
    }
}
