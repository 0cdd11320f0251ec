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
        .file("o.md", "# hi\n")
        .file("p.7z", b"7z\xbc\xaf\x27\x1c\x00\x04");
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
        ("p.7z", "7z"),
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

// ---- policy (issue 5) ----

fn strict_policy_with_exception(digest: &str) -> String {
    let strict = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("policies/strict.toml"),
    )
    .unwrap();
    // Issue 19: strict also requires a model signature; this test is about exceptions.
    let strict = strict.replace("require = true", "require = false");
    format!(
        "{strict}\n[[exceptions]]\nrule = \"pickle-format\"\npath = \"legacy/model.pkl\"\nsha256 = \"{digest}\"\nreason = \"audited by the ML platform team, ticket SEC-12\"\nexpires = 2099-01-01\n"
    )
}

#[test]
fn strict_policy_with_digest_bound_exception_passes_until_one_byte_changes() {
    let repo = Repo::new();
    let pickle = pickle_ordered_dict();
    repo.file("legacy/model.pkl", &pickle);
    repo.file("README.md", "---\nlicense: apache-2.0\n---\n# m\n");
    let policy = repo.abs("policy.toml");
    std::fs::write(&policy, strict_policy_with_exception(&sha256_hex(&pickle))).unwrap();
    let strict = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("policies/strict.toml");
    let (code, _) = scan_json(repo.path(), &["--policy", strict.to_str().unwrap()]);
    assert_eq!(code, 1, "strict denies any pickle without the exception");
    let (code, r) = scan_json(repo.path(), &["--policy", policy.to_str().unwrap()]);
    assert_eq!(code, 0, "{:#}", r["findings"]);
    let excepted: Vec<_> = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["exception"].is_string())
        .collect();
    assert_eq!(excepted.len(), 1);
    assert_eq!(excepted[0]["rule"], "PKL003");

    // One byte more: the digest no longer matches, the gate fails again.
    let mut changed = pickle.clone();
    changed.insert(changed.len() - 1, b'N');
    changed.insert(changed.len() - 1, b'0');
    repo.file("legacy/model.pkl", &changed);
    let (code, r) = scan_json(repo.path(), &["--policy", policy.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(rules_on(&r, "legacy/model.pkl").contains(&"PKL003".to_string()));
    assert!(rules_on(&r, "").contains(&"POL002".to_string()));
}

#[test]
fn invalid_policy_exits_2_with_positions() {
    let repo = Repo::new();
    repo.file(
        "modelgate.toml",
        "version = 1\n[rules]\nPKL01 = \"deny\"\nPKL003 = \"dney\"\n",
    );
    let out = modelgate().arg("scan").arg(repo.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("modelgate.toml:3:1"), "{err}");
    assert!(err.contains("did you mean `PKL001`"), "{err}");
    assert!(err.contains("modelgate.toml:4:10"), "{err}");
}

#[test]
fn policy_at_scan_root_is_used_and_named_in_the_report() {
    let repo = Repo::new();
    repo.file(
        "modelgate.toml",
        "version = 1\n[rules]\npickle-unsafe-global = \"warn\"\n",
    )
    .file("m.pkl", pickle_call("os", "system", "x"));
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 0);
    assert!(
        r["policy"]["source"]
            .as_str()
            .unwrap()
            .ends_with("modelgate.toml")
    );
    assert_eq!(r["policy"]["sha256"].as_str().unwrap().len(), 64);
    let (code, _) = scan_json(repo.path(), &["--fail-on", "warn"]);
    assert_eq!(code, 1);
}

#[test]
fn policy_init_writes_a_starter_that_policy_check_accepts() {
    let repo = Repo::new();
    let path = repo.abs("modelgate.toml");
    for preset in ["default", "strict", "audit"] {
        let out = modelgate()
            .args(["policy", "init", "--force", "--preset", preset, "-o"])
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let out = modelgate()
            .args(["policy", "check"])
            .arg(&path)
            .output()
            .unwrap();
        assert!(out.status.success());
        assert!(String::from_utf8_lossy(&out.stdout).contains("PKL001"));
    }
    let out = modelgate()
        .args(["policy", "init", "-o"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "refuses to overwrite");
}

#[test]
fn explain_and_rules_list_every_rule() {
    let out = run(&["rules", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v.as_array().unwrap().len() >= 31);
    // The gradings rules declare (issue 38) are listed with the rule; other rules list none.
    let rule = |code: &str| {
        v.as_array()
            .unwrap()
            .iter()
            .find(|r| r["code"] == code)
            .cloned()
            .unwrap()
    };
    let src006 = rule("SRC006");
    assert_eq!(src006["gradings"][0]["level"], "deny");
    assert_eq!(src006["gradings"][0]["deny_from"], "high");
    assert_eq!(
        src006["gradings"][0]["text"],
        "info..medium warn, high..critical deny"
    );
    assert_eq!(rule("SRC007")["gradings"][0]["deny_from"], "critical");
    assert!(rule("PKL001").get("gradings").is_none());
    let text = String::from_utf8(run(&["rules"]).stdout).unwrap();
    assert!(
        text.contains("at deny: info..medium warn, high..critical deny"),
        "{text}"
    );
    let out = run(&["explain", "pickle-unsafe-global"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("PKL001"));
    assert_eq!(run(&["explain", "PKL01"]).status.code(), Some(2));
}

// ---- safetensors (issue 3) ----

#[test]
fn safetensors_with_appended_pickle_is_invalid_with_sub_code() {
    let repo = Repo::new();
    let mut bytes = safetensors(&[("w", "F32", &[1], &[0, 0, 128, 63])], None);
    bytes.extend_from_slice(&pickle_call("os", "system", "x"));
    repo.file("model.safetensors", &bytes);
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1);
    let f = findings(&r, "ST001")[0];
    assert_eq!(f["evidence"]["violation"], "trailing-bytes");
}

#[test]
fn check_values_reports_nan_tensors() {
    let repo = Repo::new();
    let nan = f32::NAN.to_le_bytes();
    let one = 1f32.to_le_bytes();
    repo.file(
        "model.safetensors",
        safetensors(
            &[("bad", "F32", &[1], &nan), ("good", "F32", &[1], &one)],
            None,
        ),
    );
    let (_, r) = scan_json(repo.path(), &[]);
    assert!(!rules_on(&r, "model.safetensors").contains(&"ST002".to_string()));
    let (_, r) = scan_json(repo.path(), &["--check-values"]);
    let st002 = findings(&r, "ST002");
    assert_eq!(st002.len(), 1);
    assert_eq!(st002[0]["evidence"]["tensor"], "bad");
    assert_eq!(st002[0]["evidence"]["nan"], 1);
}

#[test]
fn shard_index_mismatch_is_reported() {
    let repo = Repo::new();
    let z = [0u8; 4];
    repo.file("model-00001-of-00002.safetensors", safetensors(&[("a", "F32", &[1], &z)], None))
        .file("model-00002-of-00002.safetensors", safetensors(&[("b", "F32", &[1], &z)], None))
        .file(
            "model.safetensors.index.json",
            r#"{"metadata":{"total_size":8},"weight_map":{"a":"model-00001-of-00002.safetensors","b":"model-00001-of-00002.safetensors"}}"#,
        );
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1);
    let violations: Vec<_> = findings(&r, "ST003")
        .into_iter()
        .map(|f| f["evidence"]["violation"].as_str().unwrap().to_string())
        .collect();
    assert!(
        violations.contains(&"tensor-in-wrong-shard".to_string())
            || violations.contains(&"tensor-not-in-shard".to_string()),
        "{violations:?}"
    );
}

#[test]
fn inspect_shows_tensors_and_failing_rule() {
    let repo = Repo::new();
    repo.file(
        "ok.safetensors",
        safetensors(&[("w", "F32", &[2], &[0; 8])], Some(r#"{"format":"pt"}"#)),
    );
    let out = modelgate()
        .args(["inspect", "--format", "json"])
        .arg(repo.abs("ok.safetensors"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["file"]["facts"]["tensor_count"], 1);
    assert_eq!(v["file"]["facts"]["metadata"]["format"], "pt");
}

// ---- pickle (issue 4) ----

#[test]
fn pickle_hidden_under_text_name_is_found() {
    let repo = Repo::new();
    repo.file("notes.txt", pickle_call("subprocess", "Popen", "id"))
        .file("noext", pickle_call("os", "system", "id"));
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1);
    assert!(rules_on(&r, "notes.txt").contains(&"PKL001".to_string()));
    assert!(rules_on(&r, "noext").contains(&"PKL001".to_string()));
}

#[test]
fn benign_state_dict_pickle_has_no_unsafe_global() {
    let repo = Repo::new();
    repo.file("model.pkl", pickle_ordered_dict());
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 0);
    let rules = rules_on(&r, "model.pkl");
    assert!(!rules.contains(&"PKL001".to_string()) && !rules.contains(&"PKL002".to_string()));
    assert!(rules.contains(&"PKL003".to_string()));
}

#[test]
fn truncated_pickle_reports_imports_before_damage() {
    let repo = Repo::new();
    repo.file("cut.pkl", b"\x80\x02cos\nsystem\nq\x00(X\x02\x00\x00\x00i");
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1);
    let rules = rules_on(&r, "cut.pkl");
    assert!(rules.contains(&"PKL001".to_string()), "{rules:?}");
    assert!(rules.contains(&"PKL004".to_string()), "{rules:?}");
}

/// The hidden `selftest` command: a panic raised inside `scan_guarded` on a worker thread is
/// caught and becomes one SCAN001 finding (`.ci/run` runs it on the release binary, whose panic
/// setting no test harness sees).
#[test]
fn selftest_shows_panic_isolation() {
    let o = modelgate().arg("selftest").output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("panic isolation: ok (panic = \"unwind\""),
        "{err}"
    );
    assert!(!err.contains("panicked at"), "{err}");
    let help = modelgate().arg("--help").output().unwrap();
    assert!(!String::from_utf8_lossy(&help.stdout).contains("selftest"));
}

mod action;
mod architecture;
mod baseline;
mod behaviour;
mod chat_templates;
mod configs;
mod engine;
mod every_format;
mod flax_coreml_paddle;
mod hostile;
mod hostile_python;
mod legacy_formats;
mod loader_configs;
mod loaders;
mod native;
mod openvino;
mod packages;
mod pickle_fixtures;
mod precision;
mod remote;
mod reports;
mod sevenz;
mod signing;
mod skops;
mod stdlib;

// ---- provenance (issue 6) ----

fn git_commit_all(dir: &std::path::Path) -> String {
    let repo = git2::Repository::open(dir).unwrap_or_else(|_| git2::Repository::init(dir).unwrap());
    let mut index = repo.index().unwrap();
    index
        .add_all(["*"].iter(), git2::IndexAddOption::DEFAULT, None)
        .unwrap();
    index.write().unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let sig =
        git2::Signature::new("t", "t@example.com", &git2::Time::new(1_700_000_000, 0)).unwrap();
    let parents: Vec<git2::Commit> = repo
        .head()
        .ok()
        .and_then(|h| h.peel_to_commit().ok())
        .into_iter()
        .collect();
    let parent_refs: Vec<&git2::Commit> = parents.iter().collect();
    let oid = repo
        .commit(Some("HEAD"), &sig, &sig, "c", &tree, &parent_refs)
        .unwrap();
    oid.to_string()
}

fn scan_json_git(root: &std::path::Path, extra: &[&str]) -> (i32, serde_json::Value) {
    let out = modelgate()
        .arg("scan")
        .arg(root)
        .args(["--format", "json"])
        .args(extra)
        .output()
        .unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap();
    (out.status.code().unwrap_or(-1), v)
}

#[test]
fn git_commit_dirty_and_untracked_weights_are_reported() {
    let repo = Repo::new();
    repo.file("README.md", "---\nlicense: mit\n---\n# m\n")
        .file(
            "model.safetensors",
            safetensors(&[("w", "F32", &[1], &[0; 4])], None),
        );
    let commit = git_commit_all(repo.path());
    let (_, r) = scan_json_git(repo.path(), &[]);
    assert_eq!(r["git"]["commit"], commit.as_str());
    assert_eq!(r["git"]["dirty"], false);
    assert!(rules_on(&r, "").is_empty(), "{:#}", r["findings"]);

    repo.file(
        "extra.safetensors",
        safetensors(&[("w", "F32", &[1], &[0; 4])], None),
    )
    .file("README.md", "---\nlicense: mit\n---\n# changed\n");
    let (_, r) = scan_json_git(repo.path(), &[]);
    assert_eq!(r["git"]["dirty"], true);
    assert!(rules_on(&r, "").contains(&"PRV002".to_string()));
    assert!(rules_on(&r, "extra.safetensors").contains(&"PRV003".to_string()));
    assert!(!rules_on(&r, "model.safetensors").contains(&"PRV003".to_string()));
}

#[test]
fn no_git_repository_is_a_fact_and_no_git_flag_skips_it() {
    let repo = Repo::new();
    repo.file("a.txt", "x");
    let (_, r) = scan_json_git(repo.path(), &[]);
    // Temp dirs are not inside a repository (unless the machine's /tmp is).
    if r["git"].is_null() {
        assert!(rules_on(&r, "").contains(&"PRV001".to_string()));
    }
    let (_, r) = scan_json_git(repo.path(), &["--no-git"]);
    assert!(r["git"].is_null());
    assert!(!rules_on(&r, "").contains(&"PRV001".to_string()));
}

#[test]
fn unpinned_downloads_in_python_and_notebooks_have_positions() {
    let repo = Repo::new();
    repo.file(
        "train.py",
        "from transformers import AutoModel\n# AutoModel.from_pretrained(\"x/y\") in a comment\nm = AutoModel.from_pretrained(\n    \"org/model\",\n)\np = AutoModel.from_pretrained(\"org/model\", revision=\"0123456789abcdef0123456789abcdef01234567\")\nq = AutoModel.from_pretrained(\"org/model\", revision=\"main\")\nl = AutoModel.from_pretrained(\"./local\")\n",
    )
    .file(
        "nb.ipynb",
        r#"{"cells":[{"cell_type":"code","source":["%pip install x\n","from huggingface_hub import hf_hub_download\n","hf_hub_download(\"org/m\", \"f.bin\")\n"],"metadata":{},"outputs":[]}],"metadata":{},"nbformat":4,"nbformat_minor":5}"#,
    );
    let (_, r) = scan_json(repo.path(), &[]);
    let src003 = findings(&r, "SRC003");
    let train: Vec<_> = src003.iter().filter(|f| f["path"] == "train.py").collect();
    assert_eq!(train.len(), 2, "{src003:#?}");
    assert_eq!(train[0]["location"]["line"], 3);
    assert_eq!(train[0]["location"]["column"], 5);
    let nb: Vec<_> = src003.iter().filter(|f| f["path"] == "nb.ipynb").collect();
    assert_eq!(nb.len(), 1);
    assert_eq!(nb[0]["evidence"]["cell"], 1);
}

#[test]
fn model_card_license_policy_is_enforced() {
    let repo = Repo::new();
    repo.file("config.json", "{}")
        .file("README.md", "---\nlicense: other\nlicense_name: my-license\n---\n# m\n")
        .file(
            "modelgate.toml",
            "version = 1\n[rules]\nCARD003 = \"deny\"\n[card]\nallowed_licenses = [\"apache-2.0\"]\n",
        );
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1);
    assert!(rules_on(&r, "README.md").contains(&"CARD003".to_string()));
    let repo2 = Repo::new();
    repo2
        .file("config.json", "{}")
        .file("README.md", "no front matter\n");
    let (_, r) = scan_json(repo2.path(), &[]);
    assert!(rules_on(&r, "README.md").contains(&"CARD002".to_string()));
}

#[test]
fn hf_cache_snapshot_is_followed_and_tampered_blob_is_caught() {
    let repo = Repo::new();
    let content = b"{\"a\": 1}";
    let good = sha256_hex(content);
    let commit = "0123456789abcdef0123456789abcdef01234567";
    let base = "models--org--name";
    repo.file(&format!("{base}/blobs/{good}"), content)
        .file(&format!("{base}/refs/main"), commit)
        .symlink(
            &format!("{base}/snapshots/{commit}/config.json"),
            &format!("../../blobs/{good}"),
        );
    // A blob whose content no longer matches its name.
    let fake = "f".repeat(64);
    repo.file(&format!("{base}/blobs/{fake}"), b"tampered")
        .symlink(
            &format!("{base}/snapshots/{commit}/model.safetensors"),
            &format!("../../blobs/{fake}"),
        );
    // A non-LFS file: its blob is named by the git blob id of the content.
    let code = b"print('hello')\n";
    let git_id = {
        use sha1::Digest;
        let mut h = sha1::Sha1::new();
        h.update(format!("blob {}\0", code.len()).as_bytes());
        h.update(code);
        h.finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    repo.file(&format!("{base}/blobs/{git_id}"), b"print('pwned')\n")
        .symlink(
            &format!("{base}/snapshots/{commit}/modeling.py"),
            &format!("../../blobs/{git_id}"),
        );
    let snapshot = repo.abs(&format!("{base}/snapshots/{commit}"));
    let (_, r) = scan_json(&snapshot, &[]);
    assert!(
        rules_on(&r, "modeling.py").contains(&"PRV004".to_string()),
        "{:#}",
        r["findings"]
    );
    assert_eq!(file(&r, "config.json")["sha256"], good.as_str());
    assert!(rules_on(&r, "model.safetensors").contains(&"PRV004".to_string()));
    assert!(!rules_on(&r, "config.json").contains(&"SCAN002".to_string()));
    assert_eq!(
        r["repository"]["huggingface"]["repos"][0]["repo_id"],
        "org/name"
    );
}

// ---- outputs (issue 7) ----

#[test]
fn sbom_and_sarif_are_byte_identical_across_runs_and_jobs() {
    let repo = Repo::new();
    repo.file(
        "model.safetensors",
        safetensors(&[("w", "F32", &[1], &[0; 4])], None),
    )
    .file("m.pkl", pickle_call("os", "system", "x"))
    .file("README.md", "---\nlicense: mit\n---\n");
    let run_once = |jobs: &str, tag: &str| {
        let sbom = repo.abs(&format!("{tag}.cdx.json"));
        let sarif = repo.abs(&format!("{tag}.sarif"));
        let out = modelgate()
            .args([
                "scan",
                "--no-git",
                "--jobs",
                jobs,
                "--exclude",
                "*.cdx.json",
                "--exclude",
                "*.sarif",
                "--sbom",
            ])
            .arg(&sbom)
            .arg("--sarif")
            .arg(&sarif)
            .arg(repo.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        (std::fs::read(sbom).unwrap(), std::fs::read(sarif).unwrap())
    };
    let a = run_once("1", "a");
    let b = run_once("8", "b");
    assert_eq!(a.0, b.0, "SBOM differs between runs");
    assert_eq!(a.1, b.1, "SARIF differs between runs");
    let sbom: serde_json::Value = serde_json::from_slice(&a.0).unwrap();
    assert_eq!(sbom["specVersion"], "1.5");
    assert_eq!(sbom["metadata"]["timestamp"], "2026-01-01T00:00:00Z");
}

#[test]
fn sbom_xml_and_verify_round_trip_through_the_cli() {
    let repo = Repo::new();
    repo.file("a.bin", b"\x00\x01\x02").file("b.txt", "hello");
    let sbom = tempfile::NamedTempFile::new().unwrap();
    let out = modelgate()
        .args([
            "scan",
            "--no-git",
            "--sbom-format",
            "xml",
            "--hash",
            "sha512",
            "--sbom",
        ])
        .arg(sbom.path())
        .arg(repo.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let xml = std::fs::read_to_string(sbom.path()).unwrap();
    assert!(xml.contains("<bom") && xml.contains("SHA-512"));
    let verify = |expect: i32| {
        let out = modelgate()
            .args(["verify", "--sbom"])
            .arg(sbom.path())
            .arg(repo.path())
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(expect),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    verify(0);
    repo.file("b.txt", "hellp");
    assert!(verify(1).contains("b.txt"));
    repo.file("b.txt", "hello");
    std::fs::remove_file(repo.abs("a.bin")).unwrap();
    repo.file("c.txt", "new");
    let text = verify(1);
    assert!(text.contains("a.bin") && text.contains("c.txt"), "{text}");
}

#[test]
fn text_report_snapshot() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/risky-model");
    let out = modelgate()
        .args(["scan", "--no-git"])
        .arg(&root)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).replace(root.to_str().unwrap(), "[ROOT]");
    let text = text.replace(env!("CARGO_PKG_VERSION"), "[VERSION]");
    insta::assert_snapshot!("risky_model_text", text);
}

#[test]
fn markdown_report_snapshot() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/risky-model");
    let out = modelgate()
        .args(["scan", "--no-git", "--format", "markdown"])
        .arg(&root)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    insta::assert_snapshot!("risky_model_markdown", text);
}

// ---- other formats (issue 9) ----

fn fixture(rel: &str) -> Vec<u8> {
    std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(rel),
    )
    .unwrap()
}

/// A GGUF v3 file with no tensors and one string metadata entry.
fn gguf_with(key: &str, value: &str) -> Vec<u8> {
    let mut out = b"GGUF".to_vec();
    out.extend_from_slice(&3u32.to_le_bytes());
    out.extend_from_slice(&0u64.to_le_bytes());
    out.extend_from_slice(&1u64.to_le_bytes());
    out.extend_from_slice(&(key.len() as u64).to_le_bytes());
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(&8u32.to_le_bytes());
    out.extend_from_slice(&(value.len() as u64).to_le_bytes());
    out.extend_from_slice(value.as_bytes());
    while !out.len().is_multiple_of(32) {
        out.push(0);
    }
    out
}

/// A minimal ONNX ModelProto whose graph has one node per custom operator domain in `domains`.
fn onnx_with_domains(domains: &[&str]) -> Vec<u8> {
    fn ld(field: u8, body: &[u8]) -> Vec<u8> {
        let mut out = vec![(field << 3) | 2, u8::try_from(body.len()).unwrap()];
        out.extend_from_slice(body);
        out
    }
    let mut graph = Vec::new();
    for (i, d) in domains.iter().enumerate() {
        let node = [
            ld(1, b"x"),
            ld(2, b"y"),
            ld(4, format!("Op{i}").as_bytes()),
            ld(7, d.as_bytes()),
        ]
        .concat();
        graph.extend(ld(1, &node));
    }
    graph.extend(ld(2, b"g"));
    let mut model = vec![0x08, 0x08];
    model.extend(ld(2, b"pytorch"));
    model.extend(ld(7, &graph));
    model.extend(ld(8, &[ld(1, b""), vec![0x10, 17]].concat()));
    for d in domains {
        model.extend(ld(8, &[ld(1, d.as_bytes()), vec![0x10, 1]].concat()));
    }
    model
}

/// Issue 32's "one warning per file", for custom operators: the domains (ONNX) or custom ops
/// (TFLite) a model needs are one thing to act on, one FMT008 listing each; a model needing one
/// keeps its message (and its key, so its fingerprint).
#[test]
fn custom_operators_fold_into_one_finding_per_model() {
    let repo = Repo::new();
    repo.file("README.md", "---\nlicense: mit\n---\n")
        .file(
            "many/model.onnx",
            onnx_with_domains(&["com.a", "com.b", "org.c"]),
        )
        .file("one/model.onnx", onnx_with_domains(&["com.a"]));
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 0, "{:#}", r["findings"]);
    let on = |path: &str| -> Vec<&serde_json::Value> {
        findings(&r, "FMT008")
            .into_iter()
            .filter(|f| f["path"] == path)
            .collect()
    };
    let many = on("many/model.onnx");
    assert_eq!(many.len(), 1, "{many:?}");
    assert_eq!(many[0]["action"], "warn");
    assert_eq!(many[0]["evidence"]["count"], 3);
    let domains: Vec<&str> = many[0]["evidence"]["sites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["domain"].as_str().unwrap())
        .collect();
    assert_eq!(domains, ["com.a", "com.b", "org.c"]);
    let message = many[0]["message"].as_str().unwrap();
    assert!(
        message.starts_with("model uses 3 custom operators or operator domains")
            && message.contains("`com.a`, `com.b`, `org.c`"),
        "{message}"
    );
    let one = on("one/model.onnx");
    assert_eq!(one.len(), 1);
    assert_eq!(
        one[0]["message"],
        "model uses operator domain 'com.a', which needs a custom operator library"
    );
    assert_eq!(one[0]["evidence"]["domain"], "com.a");
}

#[test]
fn other_formats_are_recognised_and_their_code_paths_flagged() {
    let repo = Repo::new();
    repo.file("README.md", "---\nlicense: mit\n---\n")
        .file("onnx/model.onnx", fixture("onnx/external.onnx"))
        .file("keras2/model.h5", fixture("hdf5/keras2_lambda.h5"))
        .file("keras3/model.weights.h5", fixture("hdf5/weights_only.weights.h5"))
        .file("gguf/ok.gguf", fixture("gguf/tiny.gguf"))
        .file(
            "gguf/evil.gguf",
            gguf_with(
                "tokenizer.chat_template",
                "{{ cycler.__init__.__globals__.os.popen('id').read() }}",
            ),
        )
        .file(
            "keras3/model.keras",
            zip_stored(&[
                ("metadata.json", br#"{"keras_version": "3.6.0"}"#),
                (
                    "config.json",
                    br#"{"class_name": "Sequential", "config": {"layers": [{"class_name": "Lambda", "config": {"name": "evil", "function": {"class_name": "__lambda__", "config": {"code": "YWJj"}}}}]}}"#,
                ),
                ("model.weights.h5", b"\x89HDF\r\n\x1a\n"),
            ]),
        );
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1);
    assert_eq!(file(&r, "onnx/model.onnx")["format"], "onnx");
    assert!(rules_on(&r, "onnx/model.onnx").contains(&"FMT004".to_string()));
    assert!(rules_on(&r, "onnx/model.onnx").contains(&"FMT008".to_string()));
    assert_eq!(file(&r, "keras2/model.h5")["format"], "keras");
    assert!(rules_on(&r, "keras2/model.h5").contains(&"FMT003".to_string()));
    assert_eq!(file(&r, "keras3/model.weights.h5")["format"], "hdf5");
    assert!(rules_on(&r, "keras3/model.weights.h5").is_empty());
    assert_eq!(file(&r, "gguf/ok.gguf")["format"], "gguf");
    assert!(
        rules_on(&r, "gguf/ok.gguf").is_empty(),
        "{:?}",
        rules_on(&r, "gguf/ok.gguf")
    );
    assert!(rules_on(&r, "gguf/evil.gguf").contains(&"FMT005".to_string()));
    assert_eq!(file(&r, "keras3/model.keras")["format"], "keras");
    assert!(rules_on(&r, "keras3/model.keras").contains(&"FMT003".to_string()));
}

#[test]
fn every_shipped_and_example_policy_loads() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut checked = 0;
    for dir in ["policies", "examples/policies"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().and_then(|e| e.to_str()) != Some("toml") {
                continue;
            }
            let out = modelgate()
                .args(["policy", "check"])
                .arg(&path)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}: {}",
                path.display(),
                String::from_utf8_lossy(&out.stderr)
            );
            checked += 1;
        }
    }
    assert!(checked >= 5);
}

#[test]
fn verify_honours_the_scans_excludes() {
    let repo = Repo::new();
    repo.file("a.txt", "a").file("scratch/b.txt", "b");
    let sbom = tempfile::NamedTempFile::new().unwrap();
    let out = modelgate()
        .args(["scan", "--no-git", "--exclude", "scratch", "--sbom"])
        .arg(sbom.path())
        .arg(repo.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    let out = modelgate()
        .args(["verify", "--sbom"])
        .arg(sbom.path())
        .arg(repo.path())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn sarif_uris_are_relative_to_the_git_work_tree() {
    let repo = Repo::new();
    repo.file("models/m/model.pkl", pickle_call("os", "system", "x"));
    git_commit_all(repo.path());
    let out = modelgate()
        .args(["scan", "--format", "sarif"])
        .arg(repo.abs("models/m"))
        .output()
        .unwrap();
    let sarif: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let uris: Vec<&str> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert!(uris.contains(&"models/m/model.pkl"), "{uris:?}");
}
