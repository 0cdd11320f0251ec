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
