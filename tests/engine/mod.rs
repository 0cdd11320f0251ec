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
