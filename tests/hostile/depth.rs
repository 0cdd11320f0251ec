//! Issue 37, "no recursion can reach the stack": files nested as deep as their size allows,
//! through the real binary. Each gives a report (a finding naming the limit where one stopped a
//! walk), never a crash. The safetensors header at the largest settable `json_depth` needs about
//! the 2 MiB a thread gets by default in a debug build (measured), read by `scan` and by
//! `inspect` on threads with `WORKER_STACK_BYTES`.

use super::{limit_hits, problems_on, scan_with_limits};
use crate::support::*;

/// A safetensors file whose header holds an unknown field nested `depth` deep.
fn deep_safetensors(depth: usize) -> Vec<u8> {
    let header = format!(
        r#"{{"__metadata__":{{"a":"b"}},"x":{}{}}}"#,
        "[".repeat(depth - 1),
        "]".repeat(depth - 1)
    );
    let mut out = (header.len() as u64).to_le_bytes().to_vec();
    out.extend(header.as_bytes());
    out
}

#[test]
fn configs_and_cards_100000_deep_give_scan004_not_a_crash() {
    let n = 100_000;
    let json = format!(
        "{}{{\"_target_\": \"os.system\"}}{}",
        "{\"a\": ".repeat(n),
        "}".repeat(n)
    );
    let yaml = format!(
        "model: {}{{_target_: os.system}}{}\n",
        "[".repeat(n),
        "]".repeat(n)
    );
    let card = format!(
        "---\nlicense: {}{}\n---\n# m\n",
        "[".repeat(n),
        "]".repeat(n)
    );
    let repo = Repo::new();
    repo.file("m/config.json", &json)
        .file("m/model_config.yaml", &yaml)
        .file("m/README.md", &card)
        .file("m/model.safetensors", deep_safetensors(n))
        .file("m/after.txt", "z");
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1, "{:#}", r["findings"]);
    let on = |limit: &str| -> Vec<String> {
        limit_hits(&r, limit)
            .iter()
            .map(|f| f["path"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(on("json_depth"), ["m/config.json", "m/model.safetensors"]);
    assert_eq!(on("yaml_depth"), ["m/model_config.yaml"]);
    assert_eq!(
        file(&r, "m/README.md")["facts"]["card"]["front_matter"]["state"],
        "invalid",
        "{:#}",
        file(&r, "m/README.md")
    );
    assert_eq!(file(&r, "m/after.txt")["sha256"], sha256_hex(b"z").as_str());
}

#[test]
fn headers_as_deep_as_the_largest_json_depth_fit_the_worker_stack() {
    let max = modelgate::model::limits::MAX_JSON_DEPTH as usize;
    let repo = Repo::new();
    repo.file("fits.safetensors", deep_safetensors(max))
        .file("over.safetensors", deep_safetensors(max + 1));
    let limits = format!("json_depth = {max}");
    let (code, r) = scan_with_limits(repo.path(), &limits);
    assert!(code == 0 || code == 1, "{code}");
    let hits: Vec<_> = limit_hits(&r, "json_depth")
        .iter()
        .map(|f| f["path"].clone())
        .collect();
    assert_eq!(hits, ["over.safetensors"], "{:#}", r["findings"]);
    // `inspect` reads the file on a thread with the same stack, not on the main thread.
    let (_guard, policy) = super::policy_file(&format!("version = 1\n[limits]\n{limits}\n"));
    let out = modelgate()
        .args(["inspect", "--format", "json", "--policy"])
        .arg(&policy)
        .arg(repo.abs("fits.safetensors"))
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn archives_nested_past_the_largest_archive_depth_stop_with_arc001() {
    let max = modelgate::model::limits::MAX_ARCHIVE_DEPTH as usize;
    let mut data = pickle_call("os", "system", "deep");
    for _ in 0..=max + 1 {
        data = zip_stored(&[("inner.zip", &data)]);
    }
    let repo = Repo::new();
    repo.file("nested.zip", &data).file("after.txt", "z");
    let (code, r) = scan_with_limits(repo.path(), &format!("archive_depth = {max}"));
    assert_eq!(code, 1);
    assert!(
        problems_on(&r, "ARC001", "nested.zip").contains(&"depth-exceeded".to_string()),
        "{:#}",
        r["findings"]
    );
    assert_eq!(file(&r, "after.txt")["sha256"], sha256_hex(b"z").as_str());
}

#[test]
fn a_fat_macho_that_contains_itself_is_read_once() {
    let mut fat = native::macho_fat(&[native::macho_dylib(0, &["_system"], false)]);
    let len = u32::try_from(fat.len()).unwrap();
    fat[16..20].copy_from_slice(&0u32.to_be_bytes());
    fat[20..24].copy_from_slice(&len.to_be_bytes());
    let repo = Repo::new();
    repo.file("m/config.json", "{}").file("m/libop.dylib", &fat);
    let (code, r) = scan_json(repo.path(), &[]);
    assert!(code == 0 || code == 1, "{code}");
    assert_eq!(
        file(&r, "m/libop.dylib")["facts"]["native"]["format"],
        "mach-o-fat"
    );
}

/// A list of `items` anchored once and referenced `refs` times, under `key`.
fn alias_bomb(items: usize, refs: usize) -> String {
    let mut s = String::from("base: &a\n");
    for i in 0..items {
        s.push_str(&format!("  - item{i}\n"));
    }
    s.push_str("refs:\n");
    s.push_str(&"  - *a\n".repeat(refs));
    s
}

#[test]
fn yaml_alias_bombs_in_configs_and_cards_give_scan004_yaml_nodes_not_memory() {
    // Five million nodes from 46 KB: built, this took 856 MB and 38 s (debug build). Refused
    // before it is built, it is a finding naming the limit, and the scan goes on.
    let bomb = alias_bomb(1000, 5000);
    let repo = Repo::new();
    repo.file("m/model_config.yaml", &bomb)
        .file("m/MLmodel", format!("flavors: {{}}\n{bomb}"))
        .file(
            "m/README.md",
            format!("---\nlicense: mit\n{bomb}---\n# m\n"),
        )
        .file("m/after.txt", "z");
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1, "{:#}", r["findings"]);
    let mut on: Vec<String> = limit_hits(&r, "yaml_nodes")
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect();
    on.sort();
    assert_eq!(
        on,
        ["m/MLmodel", "m/README.md", "m/model_config.yaml"],
        "{:#}",
        r["findings"]
    );
    assert_eq!(
        file(&r, "m/README.md")["facts"]["card"]["front_matter"]["state"],
        "too-many-nodes"
    );
    assert_eq!(file(&r, "m/after.txt")["sha256"], sha256_hex(b"z").as_str());
    // Anchors as real configs and cards use them parse and are read.
    let repo = Repo::new();
    repo.file(
        "m/model_config.yaml",
        "base: &b\n  _target_: os.system\nmodel: *b\n",
    )
    .file(
        "m/README.md",
        "---\nlicense: mit\ndatasets: &d [a]\ntags: *d\n---\n# m\n",
    );
    let (_, r) = scan_json(repo.path(), &[]);
    assert!(
        limit_hits(&r, "yaml_nodes").is_empty(),
        "{:#}",
        r["findings"]
    );
    assert_eq!(findings(&r, "CFG001").len(), 1, "{:#}", r["findings"]);
    assert_eq!(file(&r, "m/README.md")["facts"]["card"]["tags"][0], "a");
}
