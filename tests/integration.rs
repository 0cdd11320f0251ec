//! CLI tests: the real binary on fixture repositories built by the tests.

mod support;

use support::*;

#[test]
fn digests_match_known_sha256() {
    let repo = Repo::new();
    repo.file("abc.txt", "abc").file("empty.txt", "");
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 0);
    assert_eq!(
        file(&r, "abc.txt")["sha256"],
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    assert_eq!(
        file(&r, "empty.txt")["sha256"],
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
}

#[test]
fn digest_of_a_multi_block_file_matches() {
    let repo = Repo::new();
    let data: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
    repo.file("big.dat", &data);
    let (_, r) = scan_json(repo.path(), &[]);
    assert_eq!(file(&r, "big.dat")["sha256"], sha256_hex(&data).as_str());
    assert_eq!(file(&r, "big.dat")["size"], 3_000_000);
}

#[test]
fn symlink_inside_root_is_followed_once_and_recorded() {
    let repo = Repo::new();
    repo.file("real.txt", "abc").symlink("link.txt", "real.txt");
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 0);
    let link = file(&r, "link.txt");
    assert_eq!(link["facts"]["symlink_target"], "real.txt");
    assert_eq!(link["sha256"], file(&r, "real.txt")["sha256"]);
    assert!(rules_on(&r, "link.txt").is_empty());
}

#[test]
fn symlink_leaving_root_is_not_followed() {
    let repo = Repo::new();
    repo.symlink("up.txt", "../../../../etc/passwd")
        .symlink("abs.txt", "/etc/passwd")
        .symlink("dangling.txt", "nowhere.txt")
        .symlink("loop-a", "loop-b")
        .symlink("loop-b", "loop-a")
        .symlink("dirlink", ".");
    let (_, r) = scan_json(repo.path(), &[]);
    assert!(rules_on(&r, "up.txt").contains(&"SCAN002".to_string()));
    assert!(rules_on(&r, "abs.txt").contains(&"SCAN002".to_string()));
    assert_eq!(file(&r, "up.txt")["sha256"], serde_json::Value::Null);
    assert_eq!(
        file(&r, "dangling.txt")["facts"]["not_followed"],
        "dangling"
    );
    assert_eq!(file(&r, "loop-a")["facts"]["not_followed"], "loop");
    assert_eq!(file(&r, "dirlink")["facts"]["not_followed"], "directory");
}

#[test]
fn fifo_does_not_hang_the_scan() {
    let repo = Repo::new();
    repo.file("a.txt", "x").fifo("pipe");
    let (_, r) = scan_json(repo.path(), &[]);
    assert!(rules_on(&r, "pipe").contains(&"SCAN003".to_string()));
    assert_eq!(file(&r, "a.txt")["size"], 1);
}

#[test]
fn non_utf8_names_are_escaped_and_json_stays_valid() {
    use std::os::unix::ffi::OsStrExt;
    let repo = Repo::new();
    let name = std::ffi::OsStr::from_bytes(b"bad\xffname.bin");
    std::fs::write(repo.path().join(name), b"\x80\x04N.").unwrap();
    let (_, r) = scan_json(repo.path(), &[]);
    assert_eq!(file(&r, "bad\\xFFname.bin")["format"], "pickle");
}

#[test]
fn empty_directory_passes() {
    let repo = Repo::new();
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 0);
    assert_eq!(r["summary"]["files"], 0);
}

#[test]
fn missing_path_and_bad_flags_exit_2() {
    let out = run(&["scan", "/definitely/not/here"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("does not exist"), "{err}");
    assert_eq!(run(&["scan", "--no-such-flag"]).status.code(), Some(2));
    assert_eq!(
        run(&["scan", ".", "--format", "yaml"]).status.code(),
        Some(2)
    );
}

#[test]
fn denied_pickle_exits_1_and_fail_on_never_exits_0() {
    let repo = Repo::new();
    repo.file("model.pkl", pickle_call("os", "system", "echo pwned"));
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1, "{r:#}");
    assert!(rules_on(&r, "model.pkl").contains(&"PKL001".to_string()));
    let (code, _) = scan_json(repo.path(), &["--fail-on", "never"]);
    assert_eq!(code, 0);
}

#[test]
fn output_is_identical_for_any_thread_count() {
    let repo = Repo::new();
    for i in 0..40 {
        repo.file(&format!("d{}/f{i}.txt", i % 5), format!("file {i}"));
    }
    repo.file("model.pkl", pickle_call("os", "system", "x"))
        .file(
            "w.safetensors",
            safetensors(&[("a", "F32", &[1], &[0, 0, 0, 0])], None),
        );
    let a = modelgate()
        .args(["scan", "--format", "json", "--no-git", "--jobs", "1"])
        .arg(repo.path())
        .output()
        .unwrap();
    let b = modelgate()
        .args(["scan", "--format", "json", "--no-git", "--jobs", "8"])
        .arg(repo.path())
        .output()
        .unwrap();
    assert!(!a.stdout.is_empty());
    assert_eq!(a.stdout, b.stdout);
}

#[test]
fn formats_are_sniffed_from_content() {
    let repo = Repo::new();
    let mut tar = vec![0u8; 1024];
    tar[257..262].copy_from_slice(b"ustar");
    repo.file("a.safetensors", safetensors(&[("a", "F32", &[1], &[0, 0, 0, 0])], None))
        .file("b.pkl", pickle_ordered_dict())
        .file("c.npy", b"\x93NUMPY\x01\x00\x76\x00{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }                                                          \n\x00\x00\x00\x00")
        .file("d.gguf", b"GGUF\x03\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00")
        .file("e.h5", b"\x89HDF\r\n\x1a\n\x00\x00\x00\x00")
        .file("f.tflite", b"\x1c\x00\x00\x00TFL3\x00\x00\x00\x00")
        .file("g.gz", b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\x03\x00\x00\x00\x00\x00\x00\x00\x00\x00")
        .file("h.zip", zip_stored(&[("x.txt", b"hi")]))
        .file("i.tar", &tar)
        .file("j.bin", "version https://git-lfs.github.com/spec/v1\noid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345\n")
        .file("k.py", "print('hi')\n")
        .file("l.ipynb", "{\"cells\": []}")
        .file("m.json", "{}")
        .file("n.yaml", "a: 1\n")
        .file("o.md", "# hi\n");
    let (_, r) = scan_json(repo.path(), &[]);
    for (path, format) in [
        ("a.safetensors", "safetensors"),
        ("b.pkl", "pickle"),
        ("c.npy", "numpy"),
        ("d.gguf", "gguf"),
        ("e.h5", "hdf5"),
        ("f.tflite", "tflite"),
        ("g.gz", "gzip"),
        ("h.zip", "zip"),
        ("i.tar", "tar"),
        ("j.bin", "lfs-pointer"),
        ("k.py", "python"),
        ("l.ipynb", "notebook"),
        ("m.json", "json"),
        ("n.yaml", "yaml"),
        ("o.md", "markdown"),
    ] {
        assert_eq!(file(&r, path)["format"], format, "{path}");
    }
}

#[test]
fn pickle_named_safetensors_is_a_format_mismatch() {
    let repo = Repo::new();
    repo.file(
        "model.safetensors",
        pickle_call("builtins", "exec", "print(1)"),
    );
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1);
    let rules = rules_on(&r, "model.safetensors");
    assert!(rules.contains(&"FMT001".to_string()), "{rules:?}");
    assert!(rules.contains(&"PKL001".to_string()), "{rules:?}");
}

#[test]
fn examples_scan_as_documented() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let (code, _) = scan_json(&root.join("clean-model"), &[]);
    assert_eq!(code, 0);
    let (code, r) = scan_json(&root.join("risky-model"), &[]);
    assert_eq!(code, 1);
    assert!(rules_on(&r, "pytorch_model.bin").contains(&"PKL001".to_string()));
    assert!(rules_on(&r, "secrets.txt").contains(&"SCAN002".to_string()));
}
