//! The engine as a whole (issue 14): multi-root scans judged once, the policy digest of what was
//! parsed, the clock, and `--verbose` stage timings.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

use crate::support::*;

/// (rule, path, action, message) of every finding except the POL rules, whose outcome depends
/// on which roots a policy's exceptions met.
fn judged(report: &Value) -> BTreeSet<(String, String, String, String)> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| !f["rule"].as_str().unwrap().starts_with("POL"))
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_string(),
                f["path"].as_str().unwrap().to_string(),
                f["action"].as_str().unwrap().to_string(),
                f["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn with_prefix(
    set: BTreeSet<(String, String, String, String)>,
    prefix: &str,
) -> BTreeSet<(String, String, String, String)> {
    set.into_iter()
        .map(|(r, p, a, m)| {
            let p = if p.is_empty() {
                prefix.to_string()
            } else {
                format!("{prefix}/{p}")
            };
            (r, p, a, m)
        })
        .collect()
}

fn files(report: &Value) -> BTreeSet<(String, String)> {
    report["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["sha256"].as_str().unwrap_or("-").to_string(),
            )
        })
        .collect()
}

fn scan_in(dir: &Path, args: &[&str]) -> (i32, Value) {
    let out = modelgate()
        .current_dir(dir)
        .arg("scan")
        .args(["--format", "json"])
        .args(args)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "bad json ({e}); stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), v)
}

/// Three roots: a model directory holding a pickle that only the policy's digest-bound
/// exception allows, a Hugging Face hub cache folder, and a git repository.
fn three_roots() -> (Repo, String) {
    let repo = Repo::new();
    let evil = pickle_call("os", "system", "echo");
    repo.file(
        "a/model.safetensors",
        safetensors(&[("w", "F32", &[1], &[0; 4])], None),
    )
    .file("a/config.json", "{\"architectures\": [\"X\"]}")
    .file("a/evil.pkl", &evil)
    .file("a/README.md", "---\nlicense: mit\n---\n# a\n");

    let content = b"{\"a\": 1}";
    let good = sha256_hex(content);
    let commit = "0123456789abcdef0123456789abcdef01234567";
    let base = "hub/models--org--name";
    repo.file(&format!("{base}/blobs/{good}"), content)
        .file(&format!("{base}/refs/main"), commit)
        .symlink(
            &format!("{base}/snapshots/{commit}/config.json"),
            &format!("../../blobs/{good}"),
        );

    repo.file(
        "c/model.safetensors",
        safetensors(&[("v", "F32", &[2], &[0; 8])], None),
    )
    .file("c/config.json", "{}");
    crate::git_commit_all(&repo.abs("c"));

    let policy = format!(
        "version = 1\n[[exceptions]]\nrule = \"PKL001\"\npath = \"evil.pkl\"\nsha256 = \"{}\"\n\
         reason = \"reviewed: test fixture\"\n",
        sha256_hex(&evil)
    );
    repo.file("policy.toml", &policy);
    (repo, "../policy.toml".to_string())
}

#[test]
fn multi_root_scan_is_each_root_alone_modulo_prefixes() {
    let (repo, _) = three_roots();
    let policy = repo.abs("policy.toml");
    let policy = policy.to_str().unwrap();
    let (code, all) = scan_in(repo.path(), &["--policy", policy, "a", "hub", "c"]);
    assert_eq!(code, 0, "{:#}", all["findings"]);

    let mut expected_findings = BTreeSet::new();
    let mut expected_files = BTreeSet::new();
    for root in ["a", "hub", "c"] {
        let (_, alone) = scan_in(repo.path(), &["--policy", policy, root]);
        expected_findings.extend(with_prefix(judged(&alone), root));
        expected_files.extend(
            files(&alone)
                .into_iter()
                .map(|(p, d)| (format!("{root}/{p}"), d)),
        );
    }
    assert_eq!(judged(&all), expected_findings);
    assert_eq!(files(&all), expected_files);

    // The exception was used (under `a`): no POL002 anywhere, in particular not for `hub`/`c`.
    let pol: Vec<&Value> = all["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"].as_str().unwrap().starts_with("POL"))
        .collect();
    assert!(pol.is_empty(), "{pol:#?}");
    let evil = all["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "a/evil.pkl" && f["rule"] == "PKL001")
        .expect("the pickle is reported");
    assert_eq!(evil["action"], "allow");

    // One model directory entry per root's model directory, with prefixed paths, and the per-root
    // facts (git for `c`, the cache for `hub`).
    let dirs: Vec<&str> = all["repository"]["model_dirs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["path"].as_str().unwrap())
        .collect();
    assert!(dirs.contains(&"a"), "{dirs:?}");
    assert!(dirs.contains(&"c"), "{dirs:?}");
    let roots = all["repository"]["roots"].as_array().unwrap();
    assert_eq!(roots.len(), 3);
    assert_eq!(roots[0]["path"], "a");
    assert!(roots[2]["git"]["commit"].is_string());
    assert_eq!(roots[1]["huggingface"]["repos"][0]["repo_id"], "org/name");
}

#[test]
fn multi_root_sbom_has_one_model_component_per_model_directory() {
    let (repo, _) = three_roots();
    let sbom = repo.abs("out.cdx.json");
    let out = modelgate()
        .current_dir(repo.path())
        .args(["scan", "--no-git", "-q", "--sbom"])
        .arg(&sbom)
        .args(["a", "c"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "the pickle is denied without the policy"
    );
    let bom: Value = serde_json::from_slice(&std::fs::read(&sbom).unwrap()).unwrap();
    let models: Vec<(&str, usize)> = bom["components"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["type"] == "machine-learning-model")
        .map(|c| {
            (
                c["name"].as_str().unwrap(),
                c["components"].as_array().map_or(0, Vec::len),
            )
        })
        .collect();
    assert_eq!(models, vec![("a", 4), ("c", 2)]);
}

#[test]
fn two_copies_of_an_example_give_two_models_and_no_loose_files() {
    let repo = Repo::new();
    for root in ["x", "y"] {
        repo.file(
            &format!("{root}/model.safetensors"),
            safetensors(&[("w", "F32", &[1], &[0; 4])], None),
        )
        .file(&format!("{root}/config.json"), "{}")
        .file(&format!("{root}/README.md"), "---\nlicense: mit\n---\n");
    }
    let (code, r) = scan_in(repo.path(), &["--no-git", "x", "y"]);
    assert_eq!(code, 0);
    assert_eq!(r["root"], "x y");
    let dirs: Vec<&str> = r["repository"]["model_dirs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["path"].as_str().unwrap())
        .collect();
    assert_eq!(dirs, vec!["x", "y"]);
    assert_eq!(r["repository"]["model_dirs"][1]["card_path"], "y/README.md");
}

#[test]
fn policy_digest_is_of_the_bytes_parsed_even_from_stdin() {
    let repo = Repo::new();
    repo.file("a.txt", "abc");
    let text = "version = 1\n[rules]\npickle-format = \"deny\"\n";
    let out = modelgate()
        .args([
            "scan",
            "--no-git",
            "--format",
            "json",
            "--policy",
            "/dev/stdin",
        ])
        .arg(repo.path())
        .write_stdin(text)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["policy"]["sha256"], sha256_hex(text.as_bytes()).as_str());
    assert_ne!(
        r["policy"]["sha256"],
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
}

#[test]
fn invalid_source_date_epoch_is_a_tool_error() {
    let repo = Repo::new();
    repo.file("a.txt", "abc");
    let out = modelgate()
        .env("SOURCE_DATE_EPOCH", "last tuesday")
        .args(["scan", "--no-git"])
        .arg(repo.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("SOURCE_DATE_EPOCH"), "{err}");
}

#[test]
fn verbose_prints_stage_timings() {
    let repo = Repo::new();
    repo.file("a.txt", "abc");
    let out = modelgate()
        .args(["scan", "--no-git", "--verbose"])
        .arg(repo.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    for stage in [
        "walk:",
        "read stage:",
        "read+hash",
        "inspect",
        "provenance:",
        "policy:",
        "render:",
        "files/s",
    ] {
        assert!(err.contains(stage), "missing {stage}: {err}");
    }
}

// ---- result cache (issue 22) ----

/// A 2 MiB pickle stream: a large byte string, then a second pickle calling `os.system`.
fn big_malicious_pickle() -> Vec<u8> {
    let mut b = vec![0x80, 0x02, b'B'];
    let data = vec![7u8; 2 << 20];
    b.extend_from_slice(&(data.len() as u32).to_le_bytes());
    b.extend_from_slice(&data);
    b.push(b'.');
    b.extend_from_slice(&pickle_call("os", "system", "echo"));
    b
}

fn cached_scan(repo: &Repo, cache: &Path) -> (Vec<u8>, String) {
    let out = modelgate()
        .args([
            "scan",
            "--no-git",
            "--format",
            "json",
            "--verbose",
            "--cache",
        ])
        .arg(cache)
        .arg(repo.path())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        out.stdout,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn hits(stderr: &str) -> u64 {
    let line = stderr
        .lines()
        .find(|l| l.contains("from the cache"))
        .unwrap_or_else(|| panic!("no cache line: {stderr}"));
    let before = line.split(" from the cache").next().unwrap();
    before.rsplit(' ').next().unwrap().parse().unwrap()
}

#[test]
fn cache_hit_gives_the_same_report_and_any_identity_change_rereads() {
    let repo = Repo::new();
    repo.file("model.bin", big_malicious_pickle())
        .file(
            "w.safetensors",
            safetensors(&[("w", "U8", &[2 << 20], &vec![1u8; 2 << 20])], None),
        )
        .file("config.json", "{}");
    let cache = tempfile::tempdir().unwrap();
    let (first, err) = cached_scan(&repo, cache.path());
    assert_eq!(hits(&err), 0);
    let (second, err) = cached_scan(&repo, cache.path());
    assert_eq!(hits(&err), 2, "{err}");
    assert_eq!(first, second, "a cached scan reports byte-identical JSON");

    // touch: the modification time changes.
    let p = repo.abs("model.bin");
    let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
    f.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5))
        .unwrap();
    drop(f);
    let (_, err) = cached_scan(&repo, cache.path());
    assert_eq!(hits(&err), 1, "touched file re-read: {err}");

    // Same-size rewrite with the modification time restored: the change time still moves.
    let before = std::fs::metadata(&p).unwrap().modified().unwrap();
    let mut bytes = std::fs::read(&p).unwrap();
    bytes[10] ^= 1;
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(&p, &bytes).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&p)
        .unwrap()
        .set_modified(before)
        .unwrap();
    let (third, err) = cached_scan(&repo, cache.path());
    assert_eq!(hits(&err), 1, "rewritten file re-read: {err}");
    let r: Value = serde_json::from_slice(&third).unwrap();
    assert_eq!(
        file(&r, "model.bin")["sha256"],
        sha256_hex(&bytes).as_str(),
        "the digest is of the new bytes"
    );

    // Inode swap by rename: another file (same content) takes the name.
    let swap = repo.abs("swap.tmp");
    std::fs::write(&swap, &bytes).unwrap();
    std::fs::rename(&swap, &p).unwrap();
    let (_, err) = cached_scan(&repo, cache.path());
    assert_eq!(hits(&err), 1, "renamed-in file re-read: {err}");
}

#[test]
fn corrupt_or_foreign_cache_is_ignored_with_a_note() {
    let repo = Repo::new();
    repo.file("model.bin", big_malicious_pickle());
    let cache = tempfile::tempdir().unwrap();
    let (clean, _) = cached_scan(&repo, cache.path());
    let file = cache.path().join("modelgate-scan-cache.v1.json");
    assert!(file.is_file());

    std::fs::write(&file, b"{not json").unwrap();
    let (out, err) = cached_scan(&repo, cache.path());
    assert!(
        err.contains("note:") && err.contains("not a modelgate cache"),
        "{err}"
    );
    assert_eq!(hits(&err), 0);
    assert_eq!(out, clean);

    // Another version of the layout.
    let mut v: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    v["version"] = 99.into();
    std::fs::write(&file, serde_json::to_vec(&v).unwrap()).unwrap();
    let (out, err) = cached_scan(&repo, cache.path());
    assert!(err.contains("cache version 99"), "{err}");
    assert_eq!(out, clean);

    // A cache forged to say the malicious file is clean, under another salt: ignored.
    let mut v: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    v["salt"] = "0".repeat(64).into();
    for e in v["entries"].as_object_mut().unwrap().values_mut() {
        e["detections"] = Value::Array(vec![]);
    }
    std::fs::write(&file, serde_json::to_vec(&v).unwrap()).unwrap();
    let (out, err) = cached_scan(&repo, cache.path());
    assert!(err.contains("another modelgate build"), "{err}");
    assert_eq!(out, clean);
}
