//! `modelgate policy baseline`: adopt the gate on a repository that already has findings.

use std::fs;

use super::support::*;

/// A repository with a denied pickle, a warned one and a clean file.
fn repo_with_findings() -> Repo {
    let repo = Repo::new();
    repo.file("evil.pkl", pickle_call("os", "system", "id"))
        .file(
            "models/legacy.bin",
            pickle_call("mypkg.layers", "Custom", "x"),
        )
        .file("README.md", "---\nlicense: mit\n---\n# model\n");
    repo
}

fn baseline(repo: &Repo, extra: &[&str]) -> std::process::Output {
    modelgate()
        .args(["policy", "baseline"])
        .arg(repo.path())
        .args(extra)
        .output()
        .unwrap()
}

fn exceptions(policy: &str) -> Vec<toml::Table> {
    let table: toml::Table = policy.parse().expect("baseline is TOML");
    table["exceptions"]
        .as_array()
        .expect("exceptions")
        .iter()
        .map(|e| e.as_table().expect("table").clone())
        .collect()
}

#[test]
fn baseline_lets_the_scan_pass_until_a_baselined_file_changes() {
    let repo = repo_with_findings();
    let (code, before) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1);
    assert!(!findings(&before, "PKL001").is_empty());

    let out = baseline(&repo, &[]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let written = fs::read_to_string(repo.abs("modelgate.toml")).expect("modelgate.toml");
    let entries = exceptions(&written);
    // Every denied or warned finding on a file is pinned to that file's digest.
    for f in before["findings"].as_array().expect("findings") {
        if f["action"] == "allow" || f["path"] == "" {
            continue;
        }
        let path = f["path"].as_str().expect("path");
        let digest = file(&before, path)["sha256"].as_str().expect("sha256");
        assert!(
            entries
                .iter()
                .any(|e| e["rule"].as_str() == f["rule"].as_str()
                    && e["path"].as_str() == Some(path)
                    && e["sha256"].as_str() == Some(digest)
                    && e["reason"].as_str().is_some_and(|r| r.starts_with("TODO"))),
            "{f} not baselined in\n{written}"
        );
    }

    // modelgate.toml at the root is picked up by scan: nothing is denied or warned now.
    let (code, after) = scan_json(repo.path(), &[]);
    assert_eq!(code, 0, "{after}");
    assert_eq!(after["summary"]["denied"], 0);
    assert_eq!(after["summary"]["warned"], 0);
    assert!(
        findings(&after, "POL002").is_empty(),
        "every exception is used"
    );

    // One baselined file changes: it fails again; so does a new file.
    repo.file("evil.pkl", pickle_call("os", "system", "rm -rf /"));
    let (code, changed) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1);
    let denied: Vec<&str> = changed["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["action"] == "deny")
        .map(|f| f["path"].as_str().unwrap_or(""))
        .collect();
    assert!(denied.contains(&"evil.pkl"), "{changed}");
    assert!(!denied.contains(&"models/legacy.bin"), "{changed}");
}

#[test]
fn baseline_expires_in_90_days_by_default_with_iso_dates() {
    // SOURCE_DATE_EPOCH (set by the test helper) is 2026-01-01.
    let repo = repo_with_findings();
    let out = baseline(&repo, &["-o", "-"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8(out.stdout).expect("utf-8");
    assert!(
        !repo.abs("modelgate.toml").exists(),
        "-o - writes only to stdout"
    );
    let entries = exceptions(&text);
    assert!(!entries.is_empty());
    for e in &entries {
        let expires = e["expires"].as_datetime().expect("a TOML date").to_string();
        assert_eq!(expires, "2026-04-01");
    }
    assert!(text.contains("\nexpires = 2026-04-01\n"), "{text}");
    assert!(text.contains("on 2026-01-01"), "{text}");

    let week = baseline(&repo, &["-o", "-", "--expires-in", "7"]);
    let text = String::from_utf8(week.stdout).expect("utf-8");
    assert!(text.contains("\nexpires = 2026-01-08\n"), "{text}");
    assert!(!text.contains("2026-04-01"));
}

#[test]
fn baseline_rerun_does_not_duplicate_and_never_overwrites_silently() {
    let repo = repo_with_findings();
    assert_eq!(baseline(&repo, &[]).status.code(), Some(0));
    let first = fs::read_to_string(repo.abs("modelgate.toml")).expect("first");

    // Without --append an existing file is left alone.
    let refused = baseline(&repo, &[]);
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--append"));

    let again = baseline(&repo, &["--append"]);
    assert_eq!(again.status.code(), Some(0), "{again:?}");
    assert!(String::from_utf8_lossy(&again.stderr).contains("0 exception(s) added"));
    assert_eq!(
        fs::read_to_string(repo.abs("modelgate.toml")).expect("second"),
        first
    );

    // A new finding is appended after the existing text, which is kept as written.
    repo.file("new.pkl", pickle_call("subprocess", "call", "x"));
    let more = baseline(&repo, &["--append"]);
    assert_eq!(more.status.code(), Some(0), "{more:?}");
    let third = fs::read_to_string(repo.abs("modelgate.toml")).expect("third");
    assert!(third.starts_with(&first), "existing text kept verbatim");
    let added: Vec<toml::Table> = exceptions(&third)
        .into_iter()
        .filter(|e| e["path"].as_str() == Some("new.pkl"))
        .collect();
    assert!(!added.is_empty());
    assert_eq!(
        exceptions(&third).len(),
        exceptions(&first).len() + added.len()
    );
    let (code, _) = scan_json(repo.path(), &[]);
    assert_eq!(code, 0);
}

#[test]
fn baseline_keeps_the_settings_of_the_policy_in_use() {
    let repo = repo_with_findings();
    let policy = repo.abs("team.toml");
    fs::write(&policy, "version = 1\n[rules]\nCARD001 = \"deny\"\n").expect("policy");
    let out = baseline(
        &repo,
        &["--policy", policy.to_str().expect("utf-8"), "-o", "-"],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8(out.stdout).expect("utf-8");
    assert!(
        text.starts_with("version = 1\n[rules]\nCARD001 = \"deny\"\n"),
        "{text}"
    );
}
