//! Precision on real models (issue 15): ordinary files of real packages are not denied. Each test
//! builds the byte-exact shape of one false alarm seen on real PyPI packages.

use crate::support::*;

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
