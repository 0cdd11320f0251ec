//! Issue 40: legacy GGML, llamafile, ExecuTorch, TensorRT and tree-model files, through the real
//! binary on fixtures written byte by byte (`support::legacy`).

use crate::support::legacy::*;
use crate::support::*;

#[test]
fn legacy_ggml_is_recognised_by_content_under_any_name_and_passes() {
    let repo = Repo::new();
    let model = ggjt_model();
    repo.file("ggml-model-q4_0.bin", &model)
        .file("weights/llama.ggml", &model)
        .file("odd-name.dat", &model);
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 0, "{r:#}");
    for path in ["ggml-model-q4_0.bin", "weights/llama.ggml", "odd-name.dat"] {
        let f = file(&r, path);
        assert_eq!(f["format"], "ggml", "{path}");
        assert_eq!(f["kind"], "weights", "{path}");
        assert_eq!(f["facts"]["ggml"]["magic"], "ggjt");
        assert_eq!(f["facts"]["ggml"]["version"], 3);
        assert_eq!(f["facts"]["ggml"]["layout"], "llama");
        assert_eq!(f["facts"]["tensor_count"], 2);
        assert!(
            rules_on(&r, path).is_empty(),
            "{path}: {:?}",
            rules_on(&r, path)
        );
    }
    assert!(findings(&r, "FMT002").is_empty());
}

#[test]
fn hostile_and_broken_ggml_are_denied() {
    let repo = Repo::new();
    // A vocabulary count no file of this size holds: FMT009.
    let mut count = ggjt_model();
    count[8..12].copy_from_slice(&0x7fff_fff0i32.to_le_bytes());
    // A tensor whose data runs past the end: FMT009.
    let mut past = ggjt_header(3);
    ggml_tensor(
        &mut past,
        &[4096, 4096],
        "tok_embeddings.weight",
        0,
        64,
        true,
    );
    // Truncated inside the hyperparameters: FMT007.
    let cut = ggjt_model()[..20].to_vec();
    repo.file("count.bin", &count)
        .file("past.ggml", &past)
        .file("cut.bin", &cut);
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(rules_on(&r, "count.bin"), vec!["FMT009"]);
    assert_eq!(rules_on(&r, "past.ggml"), vec!["FMT009"]);
    assert_eq!(rules_on(&r, "cut.bin"), vec!["FMT007"]);
    let ev = &findings(&r, "FMT009")
        .into_iter()
        .find(|f| f["path"] == "past.ggml")
        .unwrap()["evidence"];
    assert_eq!(ev["problem"], "data-past-end");
}

const BENIGN_TEMPLATE: &str =
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}{% endfor %}";
const EVIL_TEMPLATE: &str = "{{ cycler.__init__.__globals__.os.popen('id').read() }}";

#[test]
fn llamafile_is_native_code_and_its_gguf_is_judged() {
    let exe = crate::support::native::elf_plain();
    let benign = llamafile(
        &exe,
        &[
            (".args", b"-m\nmodel.gguf\n"),
            (
                "model.gguf",
                &gguf_with("tokenizer.chat_template", BENIGN_TEMPLATE),
            ),
        ],
        4096,
    );
    let evil = llamafile(
        &exe,
        &[(
            "model.gguf",
            &gguf_with("tokenizer.chat_template", EVIL_TEMPLATE),
        )],
        4096,
    );
    let good = Repo::new();
    good.file("tiny.llamafile", &benign);
    let (code, r) = scan_json(good.path(), &[]);
    let f = file(&r, "tiny.llamafile");
    assert_eq!(f["format"], "llamafile", "{r:#}");
    assert_eq!(f["facts"]["native"]["format"], "elf");
    // The image ends where the zip's first member (here after zipalign's padding) starts.
    let image = f["facts"]["llamafile"]["executable_bytes"]
        .as_u64()
        .unwrap();
    assert_eq!(&benign[image as usize..][..4], b"PK\x03\x04");
    assert!(image >= exe.len() as u64);
    assert_eq!(f["facts"]["llamafile"]["ggufs"][0]["member"], "model.gguf");
    assert_eq!(
        f["facts"]["llamafile"]["ggufs"][0]["gguf"]["chat_templates"][0],
        "default"
    );
    // Native code in a model directory: SRC007; nothing denied.
    assert_eq!(rules_on(&r, "tiny.llamafile"), vec!["SRC007"], "{r:#}");
    assert_eq!(code, 0, "{r:#}");

    let bad = Repo::new();
    bad.file("evil.llamafile", &evil);
    let (code, r) = scan_json(bad.path(), &[]);
    assert_eq!(code, 1, "{r:#}");
    let rules = rules_on(&r, "evil.llamafile");
    assert!(
        rules.contains(&"FMT005".to_string()) && rules.contains(&"SRC007".to_string()),
        "{rules:?}"
    );
    let t = &findings(&r, "FMT005")[0];
    assert_eq!(t["action"], "deny");
    assert_eq!(t["location"]["member"], "model.gguf");
}

#[test]
fn hostile_llamafile_zip_is_denied() {
    let exe = crate::support::native::elf_plain();
    let mut f = llamafile(
        &exe,
        &[(
            "model.gguf",
            &gguf_with("tokenizer.chat_template", BENIGN_TEMPLATE),
        )],
        64,
    );
    let cd = f.windows(4).rposition(|w| w == b"PK\x01\x02").unwrap();
    f[cd + 20..cd + 24].copy_from_slice(&0x7fff_0000u32.to_le_bytes());
    let repo = Repo::new();
    repo.file("hostile.llamafile", &f);
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1, "{r:#}");
    let rules = rules_on(&r, "hostile.llamafile");
    assert!(rules.contains(&"FMT009".to_string()), "{rules:?}");
}

#[test]
fn executorch_programs_are_read_and_custom_kernels_flagged() {
    let repo = Repo::new();
    let benign = pte(
        &[
            ("aten::add", "out"),
            ("dim_order_ops::_to_dim_order_copy", "out"),
        ],
        &[("XnnpackBackend", b"xnnpack-blob")],
        &[],
    );
    let custom = pte(
        &[("aten::add", "out"), ("evil_ops::spawn", "default")],
        &[],
        &[],
    );
    // A data segment that runs past the end of the file.
    let hostile = pte(&[("aten::add", "out")], &[], &[(0, 1 << 40)]);
    repo.file("good/model.pte", &benign)
        .file("custom/model.pte", &custom)
        .file("hostile/program.data", &hostile);
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1, "{r:#}");
    let g = file(&r, "good/model.pte");
    assert_eq!(g["format"], "executorch");
    assert_eq!(g["kind"], "weights");
    assert_eq!(g["facts"]["executorch"]["identifier"], "ET12");
    assert_eq!(
        g["facts"]["executorch"]["delegates"][0]["id"],
        "XnnpackBackend"
    );
    assert_eq!(g["facts"]["executorch"]["delegates"][0]["size"], 12);
    assert_eq!(
        g["facts"]["executorch"]["operators"],
        serde_json::json!(["aten::add.out", "dim_order_ops::_to_dim_order_copy.out"])
    );
    assert!(rules_on(&r, "good/model.pte").is_empty());
    assert_eq!(rules_on(&r, "custom/model.pte"), vec!["FMT008"]);
    let c = &findings(&r, "FMT008")[0];
    assert_eq!(c["evidence"]["op"], "evil_ops::spawn.default");
    // Recognised by content under any name.
    assert_eq!(file(&r, "hostile/program.data")["format"], "executorch");
    assert_eq!(rules_on(&r, "hostile/program.data"), vec!["FMT009"]);
    assert!(findings(&r, "FMT002").is_empty());
}

#[test]
fn tensorrt_engines_are_recognised_and_embedded_plugins_are_native_code() {
    let repo = Repo::new();
    let plugin = crate::support::native::elf_plain();
    repo.file("trt/model.engine", trt_engine(&[]))
        .file("trt/renamed.data", trt_engine(&[]))
        .file(
            "old/model.plan",
            b"\x01\x02\x03\x00opaque plan of an older release\x00",
        )
        .file("plugins/model.engine", trt_engine(&plugin));
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 0, "{r:#}");
    let e = file(&r, "trt/model.engine");
    assert_eq!(e["format"], "tensorrt");
    assert_eq!(e["kind"], "weights");
    assert_eq!(e["facts"]["tensorrt"]["magic"], true);
    assert_eq!(e["facts"]["tensorrt"]["serialization_version"], 232);
    assert!(rules_on(&r, "trt/model.engine").is_empty());
    // By content under another name .
    assert_eq!(file(&r, "trt/renamed.data")["format"], "tensorrt");
    // By name when there is no tag.
    let old = file(&r, "old/model.plan");
    assert_eq!(old["format"], "tensorrt");
    assert_eq!(old["facts"]["tensorrt"]["magic"], false);
    assert!(rules_on(&r, "old/model.plan").is_empty());
    // A plugin library inside the plan: native code.
    assert_eq!(rules_on(&r, "plugins/model.engine"), vec!["SRC007"]);
    let f = findings(&r, "SRC007")
        .into_iter()
        .find(|f| f["path"] == "plugins/model.engine")
        .unwrap();
    assert_eq!(f["evidence"]["embedded_format"], "elf");
    assert_eq!(
        file(&r, "plugins/model.engine")["facts"]["tensorrt"]["embedded_native"][0]["offset"],
        3012
    );
    assert!(findings(&r, "FMT002").is_empty());
}

#[test]
fn tree_model_files_are_recognised_data_formats() {
    let repo = Repo::new();
    let core = [0x0c, 0, 0, 0, 0x43, 0x42, 0x4d, 0x31, 0, 0, 0, 0];
    repo.file("xgb/model.json", xgboost_json(3))
        .file("xgb/model.ubj", xgboost_ubj("2"))
        .file("xgb/renamed.bin", xgboost_ubj("2"))
        .file("lgbm/model.txt", LIGHTGBM_MODEL)
        .file("cat/model.cbm", catboost_cbm(core.len() as u32, &core))
        .file("cat/hostile.cbm", catboost_cbm(u32::MAX, &core));
    let (code, r) = scan_json(repo.path(), &[]);
    let j = file(&r, "xgb/model.json");
    assert_eq!(j["format"], "xgboost", "{r:#}");
    assert_eq!(j["kind"], "weights");
    assert_eq!(j["facts"]["xgboost"]["encoding"], "json");
    assert_eq!(j["facts"]["xgboost"]["num_trees"], 3);
    assert_eq!(j["facts"]["xgboost"]["version"], "2.1.0");
    let u = file(&r, "xgb/model.ubj");
    assert_eq!(u["format"], "xgboost");
    assert_eq!(u["facts"]["xgboost"]["encoding"], "ubjson");
    assert_eq!(u["facts"]["xgboost"]["num_trees"], 2);
    assert_eq!(file(&r, "xgb/renamed.bin")["format"], "xgboost");
    let l = file(&r, "lgbm/model.txt");
    assert_eq!(l["format"], "lightgbm");
    assert_eq!(l["facts"]["lightgbm"]["tree_count"], 3);
    assert_eq!(l["facts"]["lightgbm"]["version"], "v4");
    let c = file(&r, "cat/model.cbm");
    assert_eq!(c["format"], "catboost");
    assert_eq!(c["facts"]["catboost"]["core_size"], 12);
    for path in [
        "xgb/model.json",
        "xgb/model.ubj",
        "xgb/renamed.bin",
        "lgbm/model.txt",
        "cat/model.cbm",
    ] {
        assert!(
            rules_on(&r, path).is_empty(),
            "{path}: {:?}",
            rules_on(&r, path)
        );
    }
    // A core size past the end is a crafted header.
    assert_eq!(rules_on(&r, "cat/hostile.cbm"), vec!["FMT009"]);
    assert_eq!(code, 1);
    assert!(findings(&r, "FMT002").is_empty());
}
