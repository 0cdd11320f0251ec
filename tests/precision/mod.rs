//! Precision on real models (issue 15): ordinary files of real packages are not denied. Each test
//! builds the byte-exact shape of one false alarm seen on real PyPI packages.

use crate::support::*;

/// A protocol-2 torch-style zip: `archive/data.pkl` holding an OrderedDict, plus `version`.
fn torch_zip() -> Vec<u8> {
    zip_stored(&[
        ("archive/data.pkl", &pickle_ordered_dict()),
        ("archive/version", b"3\n"),
    ])
}

#[test]
fn text_whose_ninth_byte_is_a_brace_is_not_safetensors() {
    // Cause 1: a one-line Python module and notes; both were denied as ST001.
    let repo = Repo::new();
    repo.file("pkg/params.py", "P={'lr': 0.1, 'depth': 3}\n")
        .file("pkg/notes.txt", "Notes:\n\n{todo} retrain\n")
        .file("pkg/data.json", "[1234567{}]");
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 0, "{:#}", r["findings"]);
    assert!(findings(&r, "ST001").is_empty(), "{:#}", r["findings"]);
    assert_eq!(file(&r, "pkg/params.py")["format"], "python");
    assert_eq!(file(&r, "pkg/notes.txt")["format"], "text");
}

#[test]
fn a_near_miss_named_safetensors_is_still_validated() {
    // The weak signature cannot decide, but the name sends the file to the validator.
    let repo = Repo::new();
    repo.file("model.safetensors", "P={'lr': 0.1, 'depth': 3}\n");
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1);
    assert_eq!(rules_on(&r, "model.safetensors"), ["ST001"]);
}

#[test]
fn null_metadata_as_mlx_writes_it_is_valid() {
    // Cause 2: `"__metadata__": null`.
    let repo = Repo::new();
    repo.file(
        "mlx/model.safetensors",
        safetensors(&[("w", "F32", &[2], &[0u8; 8])], Some("null")),
    );
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 0, "{:#}", r["findings"]);
    assert_eq!(file(&r, "mlx/model.safetensors")["facts"]["valid"], true);
}

#[test]
fn torch_checkpoints_under_compound_names_are_not_mismatches() {
    // Cause 3: `model_best.pth.tar`, `checkpoint.pt.tar`, `last.ckpt`.
    let repo = Repo::new();
    repo.file("ckpt/model_best.pth.tar", torch_zip())
        .file("ckpt/checkpoint.pt.tar", pickle_ordered_dict())
        .file("ckpt/last.ckpt", torch_zip());
    let (_, r) = scan_json(repo.path(), &[]);
    assert!(findings(&r, "FMT001").is_empty(), "{:#}", r["findings"]);
}
