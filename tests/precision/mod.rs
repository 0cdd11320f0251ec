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

#[test]
fn an_empty_weight_file_is_invalid() {
    // Cause 9: a 0-byte `.safetensors` passed silently.
    let repo = Repo::new();
    repo.file("model.safetensors", "")
        .file("model.onnx", "")
        .file("empty.txt", "");
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1);
    assert_eq!(rules_on(&r, "model.safetensors"), ["ST001"]);
    assert_eq!(rules_on(&r, "model.onnx"), ["FMT002"]);
    assert!(rules_on(&r, "empty.txt").is_empty());
}

#[test]
fn long_protocol0_string_lines_are_data_not_malformed() {
    // Cause 9: a CRF model pickled with protocol 0 holds its weights as one multi-megabyte
    // STRING line (and UNICODE the same way).
    let mut p = b"(dp0\nS'model'\np1\nS'".to_vec();
    p.extend(std::iter::repeat_n(b'x', 3 << 20));
    p.extend_from_slice(b"'\np2\nsVtext\np3\nV");
    p.extend(std::iter::repeat_n(b'y', 2 << 20));
    p.extend_from_slice(b"\np4\ns.");
    let repo = Repo::new();
    repo.file("crf.pkl", &p);
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 0, "{:#}", r["findings"]);
    assert!(findings(&r, "PKL004").is_empty(), "{:#}", r["findings"]);
}

#[test]
fn a_data_pickle_with_many_memo_entries_is_not_malformed() {
    // Cause 5: 1.3 million memo entries (a 20 MB data-only pickle had 1.26 million).
    let mut p = b"\x80\x02]q\x00".to_vec();
    for i in 1u32..1_300_000 {
        p.push(b'K');
        p.push((i % 200) as u8);
        p.push(b'r');
        p.extend_from_slice(&i.to_le_bytes());
        p.push(b'a');
    }
    p.push(b'.');
    let repo = Repo::new();
    repo.file("big.pkl", &p);
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 0, "{:#}", r["findings"]);
    assert!(findings(&r, "PKL004").is_empty(), "{:#}", r["findings"]);
}

#[test]
fn compiled_python_in_a_model_directory_is_code() {
    // Cause 8: `.pyc` beside the weights runs when the directory's code is imported.
    let repo = Repo::new();
    repo.file(
        "m/model.safetensors",
        safetensors(&[("w", "F32", &[2], &[0u8; 8])], None),
    )
    .file("m/README.md", "# m\n")
    .file(
        "m/__pycache__/modeling.cpython-311.pyc",
        b"\xa7\r\r\n\0\0\0\0\0\0\0\0\0\0\0\0\xe3\0\0\0",
    )
    .file(
        "m/modeling.cpython-311.pyc",
        b"\xa7\r\r\n\0\0\0\0\0\0\0\0\0\0\0\0\xe3\0\0\0",
    );
    let (_, r) = scan_json(repo.path(), &[]);
    let src: Vec<_> = findings(&r, "SRC001")
        .into_iter()
        .filter(|f| f["path"] == "m/modeling.cpython-311.pyc")
        .collect();
    assert_eq!(src.len(), 1, "{:#}", r["findings"]);
}

/// A joblib < 0.10 compressed dump: `ZF`, the length in hex padded to 19 bytes, then zlib (one
/// stored block, as `zlib.compress(data, 0)` writes it).
fn joblib_zfile(data: &[u8]) -> Vec<u8> {
    let mut out = b"ZF".to_vec();
    out.extend_from_slice(format!("{:<19}", format!("0x{:x}", data.len())).as_bytes());
    out.extend_from_slice(&[0x78, 0x01, 0x01]);
    let n = data.len() as u16;
    out.extend_from_slice(&n.to_le_bytes());
    out.extend_from_slice(&(!n).to_le_bytes());
    out.extend_from_slice(data);
    let (mut a, mut b) = (1u32, 0u32);
    for &x in data {
        a = (a + u32::from(x)) % 65521;
        b = (b + a) % 65521;
    }
    out.extend_from_slice(&((b << 16) | a).to_be_bytes());
    out
}

#[test]
fn old_joblib_zfile_containers_are_analysed() {
    // Cause 6: `ZF` + zlib was `unknown`, so the pickle inside escaped analysis.
    let repo = Repo::new();
    repo.file("old/model.pkl", joblib_zfile(&pickle_ordered_dict()));
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 0, "{:#}", r["findings"]);
    assert_eq!(file(&r, "old/model.pkl")["format"], "joblib");
    let evil = Repo::new();
    evil.file(
        "old/model.pkl",
        joblib_zfile(&pickle_call("os", "system", "id")),
    );
    let (code, r) = scan_json(evil.path(), &[]);
    assert_eq!(code, 1);
    assert!(rules_on(&r, "old/model.pkl").contains(&"PKL001".to_string()));
}

#[test]
fn an_executable_named_like_weights_is_high() {
    // Cause 8: an ELF renamed `weights.pt` is not a low "unrecognised weights".
    let mut elf = b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x02\0\x3e\0".to_vec();
    elf.resize(256, 0);
    let mut pe = vec![0u8; 256];
    pe[..2].copy_from_slice(b"MZ");
    pe[0x3c] = 0x80;
    pe[0x80..0x84].copy_from_slice(b"PE\0\0");
    let repo = Repo::new();
    repo.file("weights.pt", &elf)
        .file("pytorch_model.bin", &pe)
        .file("junk.pt", [0x01u8, 0x02, 0x03, 0x00]);
    let (_, r) = scan_json(repo.path(), &[]);
    let fmt = findings(&r, "FMT002");
    let sev = |p: &str| {
        fmt.iter()
            .find(|f| f["path"] == p)
            .unwrap_or_else(|| panic!("no FMT002 on {p}: {:#}", r["findings"]))["severity"]
            .clone()
    };
    assert_eq!(sev("weights.pt"), "high");
    assert_eq!(sev("pytorch_model.bin"), "high");
    assert_eq!(sev("junk.pt"), "low");
}
