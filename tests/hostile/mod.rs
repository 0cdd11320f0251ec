//! Hostile file systems and contents (issue 11); included from integration.rs.
//!
//! The tree being scanned is written by an attacker: links that loop or leave the root, special
//! files that block when opened, names that carry newlines and terminal escapes, directories
//! nested past any sane depth, sparse files that claim terabytes, and archives that expand
//! forever. Each test builds such a tree in a temp dir, runs the real binary, and checks that the
//! scan ends, reports what it could not check (SCAN00x, ARC001, PKL004), never opens what it
//! must not, and still reports every ordinary file correctly.

use std::ffi::OsStr;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use modelgate::inspect::{self, ScanConfig};
use serde_json::Value;

#[allow(unused_imports)]
use crate::support::*;

mod depth;

// ---------------------------------------------------------------------------------------------
// Helpers

/// Writes `text` as a policy file outside any scan root and returns its path (kept alive by the
/// returned guard).
fn policy_file(text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("policy.toml");
    std::fs::write(&p, text).unwrap();
    (dir, p)
}

/// A JSON scan under a policy with the given `[limits]` lines.
fn scan_with_limits(root: &Path, limits: &str) -> (i32, Value) {
    let (_guard, p) = policy_file(&format!("version = 1\n\n[limits]\n{limits}\n"));
    scan_json(root, &["--policy", p.to_str().unwrap()])
}

/// SCAN004 findings naming `limit`.
fn limit_hits<'a>(r: &'a Value, limit: &str) -> Vec<&'a Value> {
    findings(r, "SCAN004")
        .into_iter()
        .filter(|f| f["evidence"]["limit"] == limit)
        .collect()
}

/// The `problem` evidence of every finding of `rule` on `path`.
fn problems_on(r: &Value, rule: &str, path: &str) -> Vec<String> {
    findings(r, rule)
        .into_iter()
        .filter(|f| f["path"] == path)
        .filter_map(|f| f["evidence"]["problem"].as_str().map(str::to_string))
        .collect()
}

fn has_file(r: &Value, path: &str) -> bool {
    r["files"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["path"] == path)
}

fn write_bytes_name(root: &Path, name: &[u8], bytes: &[u8]) -> PathBuf {
    let p = root.join(OsStr::from_bytes(name));
    std::fs::write(&p, bytes).unwrap();
    p
}

/// A zip of `(name, bytes)` members, each deflated.
fn zip_deflated(members: &[(&str, &[u8])]) -> Vec<u8> {
    use zip::write::SimpleFileOptions;
    let mut buf = Vec::new();
    {
        let mut z = zip::ZipWriter::new(std::io::Cursor::new(&mut buf));
        for (name, data) in members {
            z.start_file(
                *name,
                SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated),
            )
            .unwrap();
            z.write_all(data).unwrap();
        }
        z.finish().unwrap();
    }
    buf
}

fn sarif_validator() -> jsonschema::Validator {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/schemas/sarif-2.1.0.schema.json");
    let schema: Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
    jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .unwrap()
}

fn cyclonedx_validator() -> jsonschema::Validator {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/schemas");
    let load = |n: &str| -> Value {
        serde_json::from_slice(&std::fs::read(dir.join(n)).unwrap()).unwrap()
    };
    jsonschema::options()
        .with_resource(
            "http://cyclonedx.org/schema/spdx.SNAPSHOT.schema.json",
            jsonschema::Resource::from_contents(load("spdx.SNAPSHOT.schema.json")).unwrap(),
        )
        .with_resource(
            "http://cyclonedx.org/schema/jsf-0.82.SNAPSHOT.schema.json",
            jsonschema::Resource::from_contents(load("jsf-0.82.SNAPSHOT.schema.json")).unwrap(),
        )
        .should_validate_formats(true)
        .build(&load("bom-1.5.SNAPSHOT.schema.json"))
        .unwrap()
}

fn assert_schema_valid(v: &jsonschema::Validator, doc: &Value, what: &str) {
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{what} invalid:\n{}", errors.join("\n"));
}

// ---------------------------------------------------------------------------------------------
// Links

#[test]
fn symlink_loops_chains_root_links_and_dotdot_escapes_end_and_are_contained() {
    let outer = tempfile::tempdir().unwrap();
    let root = outer.path().join("repo");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(outer.path().join("secret.txt"), "TOP-SECRET-OUTSIDE").unwrap();
    let link = |rel: &str, target: &str| {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(target, p).unwrap();
    };
    std::fs::write(root.join("real.txt"), "abc").unwrap();
    link("self", "self");
    link("loop-a", "loop-b");
    link("loop-b", "loop-c");
    link("loop-c", "loop-a");
    link("chain-1", "chain-2");
    link("chain-2", "sub/chain-3");
    link("sub/chain-3", "../real.txt");
    link("root-dir", "/");
    link("etc", "/etc/passwd");
    link("up-dir", "..");
    link("sub/up-secret", "../../secret.txt");
    link("sub/dotdot-back", "../sub/../../repo/real.txt");
    link("sub/back-to-root", "..");
    link("sub/deep/cycle", "../../sub");

    let (_, r) = scan_json(&root, &[]);
    // Chains inside the root are resolved once; the content is the target's.
    assert_eq!(
        file(&r, "chain-1")["sha256"],
        file(&r, "real.txt")["sha256"]
    );
    assert_eq!(file(&r, "chain-1")["facts"]["symlink_target"], "chain-2");
    // `..` that leaves and re-enters the root by name is still inside: followed.
    assert_eq!(
        file(&r, "sub/dotdot-back")["sha256"],
        file(&r, "real.txt")["sha256"]
    );
    for l in ["self", "loop-a", "loop-b", "loop-c"] {
        assert_eq!(file(&r, l)["facts"]["not_followed"], "loop", "{l}");
        assert_eq!(file(&r, l)["sha256"], Value::Null);
    }
    for l in ["root-dir", "etc", "sub/up-secret"] {
        assert!(rules_on(&r, l).contains(&"SCAN002".to_string()), "{l}");
        assert_eq!(file(&r, l)["sha256"], Value::Null, "{l}");
    }
    for l in ["up-dir", "sub/back-to-root", "sub/deep/cycle"] {
        assert!(
            file(&r, l)["sha256"].is_null(),
            "directory link {l} must not be read"
        );
    }
    // Nothing outside the root was read or named by content, and no path escapes the root.
    let text = r.to_string();
    assert!(!text.contains("TOP-SECRET-OUTSIDE"));
    assert!(!text.contains("root:x:0:0"));
    for f in r["files"].as_array().unwrap() {
        let p = f["path"].as_str().unwrap();
        assert!(
            !p.starts_with('/') && !p.split('/').any(|c| c == ".."),
            "{p}"
        );
    }
}

#[test]
fn hard_link_is_scanned_as_the_regular_file_it_is() {
    // A hard link to a file outside the root is indistinguishable from a file inside it: its
    // bytes are in the tree, so they are scanned (and a dangerous payload is still found).
    let outer = tempfile::tempdir().unwrap();
    let root = outer.path().join("repo");
    std::fs::create_dir(&root).unwrap();
    let payload = pickle_call("os", "system", "id");
    std::fs::write(outer.path().join("outside.pkl"), &payload).unwrap();
    std::fs::hard_link(outer.path().join("outside.pkl"), root.join("model.pkl")).unwrap();
    std::fs::hard_link(root.join("model.pkl"), root.join("again.pkl")).unwrap();
    let (code, r) = scan_json(&root, &[]);
    assert_eq!(code, 1);
    for p in ["model.pkl", "again.pkl"] {
        assert_eq!(file(&r, p)["sha256"], sha256_hex(&payload).as_str());
        assert!(rules_on(&r, p).contains(&"PKL001".to_string()));
    }
}

// ---------------------------------------------------------------------------------------------
// Special files and files that change under the scan

#[test]
fn fifos_and_sockets_are_recorded_never_opened() {
    let repo = Repo::new();
    repo.file("a.txt", "x")
        .fifo("pipe")
        .fifo("model.safetensors");
    let _listener = std::os::unix::net::UnixListener::bind(repo.abs("sock")).unwrap();
    // A socket behind a link inside the root is not followed into either.
    repo.symlink("sock-link", "sock");
    let start = std::time::Instant::now();
    let (_, r) = scan_json(repo.path(), &[]);
    assert!(start.elapsed() < std::time::Duration::from_secs(30));
    for (p, what) in [
        ("pipe", "fifo"),
        ("model.safetensors", "fifo"),
        ("sock", "socket"),
    ] {
        let f = findings(&r, "SCAN003")
            .into_iter()
            .find(|f| f["path"] == p)
            .unwrap_or_else(|| panic!("no SCAN003 on {p}: {r:#}"));
        assert_eq!(f["evidence"]["type"], what);
    }
    assert!(file(&r, "sock-link")["sha256"].is_null());
    assert_eq!(file(&r, "a.txt")["sha256"], sha256_hex(b"x").as_str());
}

#[test]
fn file_replaced_by_fifo_or_symlink_after_the_crawl_is_not_opened() {
    // The crawl saw a regular file; by the time it is opened it is a FIFO or a link. Opening
    // uses O_NONBLOCK | O_NOFOLLOW and re-checks the type, so neither blocks nor escapes.
    let repo = Repo::new();
    repo.fifo("now-a-fifo").symlink("now-a-link", "/etc/passwd");
    let cfg = ScanConfig::default();
    let start = std::time::Instant::now();
    for rel in ["now-a-fifo", "now-a-link"] {
        let s = inspect::scan_file(&repo.abs(rel), rel, 10, &cfg);
        assert!(s.sha256.is_none(), "{rel}");
        assert!(
            s.detections
                .iter()
                .any(|d| d.rule == modelgate::model::rules::RuleId::UnreadableFile),
            "{rel}: {:?}",
            s.detections
        );
    }
    assert!(start.elapsed() < std::time::Duration::from_secs(10));
}

#[test]
fn file_whose_size_changes_while_read_is_reported_as_changed() {
    // A file growing or shrinking between fstat and EOF cannot be timed deterministically on a
    // normal file system, but procfs files are regular files whose stat size (0) never matches
    // what a read returns: exactly the condition `scan_file` checks (bytes read vs size at open).
    let cfg = ScanConfig::default();
    let s = inspect::scan_file(Path::new("/proc/self/status"), "status", 0, &cfg);
    assert!(s.size > 0);
    let changed: Vec<_> = s
        .detections
        .iter()
        .filter(|d| d.rule == modelgate::model::rules::RuleId::UnreadableFile)
        .collect();
    assert_eq!(changed.len(), 1, "{:?}", s.detections);
    assert!(
        changed[0].message.contains("changed while being scanned"),
        "{}",
        changed[0].message
    );
    // The crawl's size (`expected_size`) is only a hint: a stale value on a stable file is not
    // a change.
    let repo = Repo::new();
    repo.file("stable.txt", [b'7'; 100]);
    let s = inspect::scan_file(&repo.abs("stable.txt"), "stable.txt", 5, &cfg);
    assert_eq!(s.size, 100);
    assert!(s.detections.is_empty(), "{:?}", s.detections);
    assert_eq!(s.sha256.as_deref(), Some(sha256_hex(&[b'7'; 100]).as_str()));
}

// ---------------------------------------------------------------------------------------------
// Shape of the tree: depth, width, names, sizes

#[test]
fn directory_1000_levels_deep_stops_at_max_depth_with_scan004() {
    let repo = Repo::new();
    let mut deep = PathBuf::new();
    for _ in 0..1000 {
        deep.push("d");
    }
    std::fs::create_dir_all(repo.path().join(&deep)).unwrap();
    std::fs::write(
        repo.path().join(&deep).join("bottom.pkl"),
        pickle_call("os", "system", "x"),
    )
    .unwrap();
    let shallow = "d/d/d/top.txt";
    repo.file(shallow, "top");
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1, "SCAN004 is deny under the default policy");
    let hits = limit_hits(&r, "max_depth");
    assert_eq!(hits.len(), 1, "{:#}", r["findings"]);
    assert_eq!(hits[0]["evidence"]["value"], 256);
    assert_eq!(file(&r, shallow)["sha256"], sha256_hex(b"top").as_str());
    assert_eq!(r["summary"]["files"], 1);

    // The same tree under a policy that allows 1001 levels reaches the bottom.
    let (_, r) = scan_with_limits(repo.path(), "max_depth = 1001");
    assert!(limit_hits(&r, "max_depth").is_empty());
    let bottom = format!("{}/bottom.pkl", "d/".repeat(1000).trim_end_matches('/'));
    assert!(rules_on(&r, &bottom).contains(&"PKL001".to_string()));
}

fn wide_tree(n: usize) -> Repo {
    let repo = Repo::new();
    let dir = repo.path().join("wide");
    std::fs::create_dir(&dir).unwrap();
    for i in 0..n {
        std::fs::write(dir.join(format!("f{i:06}")), []).unwrap();
    }
    repo.file("marker.txt", "m");
    repo
}

fn assert_wide_scan(repo: &Repo, n: usize) {
    let (code, r) = scan_json(repo.path(), &["--jobs", "2"]);
    assert_eq!(code, 0);
    assert_eq!(r["summary"]["files"], n as u64 + 1);
    assert_eq!(r["files"].as_array().unwrap().len(), n + 1);
    assert_eq!(
        file(&r, &format!("wide/f{:06}", n - 1))["sha256"],
        sha256_hex(b"").as_str()
    );
    assert_eq!(file(&r, "marker.txt")["sha256"], sha256_hex(b"m").as_str());
}

#[test]
fn ten_thousand_entries_in_one_directory_are_all_counted() {
    let repo = wide_tree(10_000);
    assert_wide_scan(&repo, 10_000);
}

#[test]
#[ignore = "slow: run with --ignored"]
fn hundred_thousand_entries_in_one_directory_are_all_counted() {
    let repo = wide_tree(100_000);
    assert_wide_scan(&repo, 100_000);
}

/// Names an attacker picks to forge report lines or drive the terminal.
const EVIL_NAMES: &[&[u8]] = &[
    b"evil\nresult: PASS: 0 denied, 0 warned, 0 allowed\n",
    b"\nresult: PASS",
    b"\x1b[2J\x1b[1;1Hclear-screen.bin",
    b"\x1b]0;owned\x07title.pkl",
    b"\x1b[32mPASS\x1b[0m.txt",
    b"cr\rresult: PASS.txt",
    b"bell\x07tab\tnul-ish\x01\x7f.txt",
    b"bad\xff\xfeutf8.bin",
    b"\xc2\x9bcsi-c1.txt",
    b"rtl\xe2\x80\xaetxt.exe",
    b"line\xe2\x80\xa8sep.txt",
    b"pipe|<img src=x>|[x](javascript:e)`.md",
    b"quote\"back\\slash'.json",
];

/// A tree of hostile names; one of them is a denied pickle whose name fakes a passing verdict.
fn evil_tree() -> Repo {
    let repo = Repo::new();
    for (i, name) in EVIL_NAMES.iter().enumerate() {
        let content = format!("benign {i}");
        write_bytes_name(repo.path(), name, content.as_bytes());
    }
    write_bytes_name(
        repo.path(),
        b"model\nresult: PASS: 0 denied, 0 warned, 0 allowed\n.pkl",
        &pickle_call("os", "system", "echo \x1b[2J pwned; result: PASS"),
    );
    let mut long = vec![b'a'; 251];
    long.extend_from_slice(b".pkl");
    write_bytes_name(repo.path(), &long, &pickle_call("os", "system", "x"));
    repo
}

#[test]
fn text_report_cannot_be_forged_or_drive_the_terminal_by_file_names() {
    let repo = evil_tree();
    let out = modelgate()
        .args(["scan", "--no-git"])
        .arg(repo.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stdout = &out.stdout;
    for (what, b) in [("ESC", 0x1bu8), ("BEL", 0x07), ("CR", b'\r'), ("NUL", 0)] {
        assert!(!stdout.contains(&b), "{what} byte reached stdout");
    }
    let text = String::from_utf8(stdout.clone()).expect("text report is UTF-8");
    assert!(!text.contains('\u{9b}') && !text.contains('\u{202e}') && !text.contains('\u{2028}'));
    let verdicts: Vec<&str> = text.lines().filter(|l| l.starts_with("result:")).collect();
    assert_eq!(verdicts.len(), 1, "{text}");
    assert!(verdicts[0].starts_with("result: FAIL"), "{text}");
    assert!(!text.lines().any(|l| l.starts_with("result: PASS")));
    // The forged name is shown, escaped, on one line.
    assert!(text.contains("model\\nresult: PASS"), "{text}");
}

#[test]
fn json_sarif_sbom_and_markdown_stay_valid_whatever_the_names() {
    let repo = evil_tree();
    let out_dir = tempfile::tempdir().unwrap();
    let sbom = out_dir.path().join("bom.json");
    let sbom_xml = out_dir.path().join("bom.xml");
    let sarif = out_dir.path().join("out.sarif");

    let (code, r) = scan_json(
        repo.path(),
        &[
            "--sbom",
            sbom.to_str().unwrap(),
            "--sarif",
            sarif.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 1);
    // Every name survives into the JSON report, lossless for UTF-8, `\xNN` for the rest.
    assert_eq!(
        r["files"].as_array().unwrap().len(),
        EVIL_NAMES.len() + 2,
        "{:#}",
        r["files"]
    );
    assert!(has_file(&r, "bad\\xFF\\xFEutf8.bin"));
    assert!(has_file(
        &r,
        "evil\nresult: PASS: 0 denied, 0 warned, 0 allowed\n"
    ));
    let pkl = "model\nresult: PASS: 0 denied, 0 warned, 0 allowed\n.pkl";
    assert!(rules_on(&r, pkl).contains(&"PKL001".to_string()));

    let sarif_doc: Value = serde_json::from_slice(&std::fs::read(&sarif).unwrap()).unwrap();
    assert_schema_valid(&sarif_validator(), &sarif_doc, "sarif");
    let bom: Value = serde_json::from_slice(&std::fs::read(&sbom).unwrap()).unwrap();
    assert_schema_valid(&cyclonedx_validator(), &bom, "cyclonedx");
    let bom_text = bom.to_string();
    assert!(bom_text.contains(&sha256_hex(b"benign 0")));

    // XML SBOM: well-formed enough for the CycloneDX reader to load it back.
    let st = modelgate()
        .args([
            "scan",
            "--no-git",
            "--quiet",
            "--sbom-format",
            "xml",
            "--sbom",
        ])
        .arg(&sbom_xml)
        .arg(repo.path())
        .output()
        .unwrap();
    assert_eq!(st.status.code(), Some(1));
    let xml = std::fs::read(&sbom_xml).unwrap();
    assert!(!xml.contains(&0x1b), "raw ESC in XML");
    let parsed = cyclonedx_bom::models::bom::Bom::parse_from_xml_v1_5(&xml[..]);
    assert!(parsed.is_ok(), "xml sbom does not parse: {parsed:?}");

    // Markdown: no control bytes, and no name can add a table row or raw HTML.
    let md = modelgate()
        .args(["scan", "--no-git", "--format", "markdown"])
        .arg(repo.path())
        .output()
        .unwrap();
    let md = String::from_utf8(md.stdout).expect("markdown is UTF-8");
    assert!(
        !md.chars()
            .any(|c| c.is_control() && c != '\n' || c == '\u{202e}'),
        "control character in markdown"
    );
    assert!(!md.contains("<img"), "{md}");
    for line in md.lines().filter(|l| l.starts_with('|')) {
        assert!(line.ends_with('|'), "broken table row: {line:?}");
    }
    assert!(!md.lines().any(|l| l.starts_with("result: PASS")));
}

#[test]
fn names_of_255_bytes_and_long_paths_are_scanned() {
    let repo = Repo::new();
    let name = "n".repeat(255);
    let mut rel = String::new();
    for _ in 0..8 {
        rel.push_str(&"d".repeat(255));
        rel.push('/');
    }
    rel.push_str(&name);
    repo.file(&name, "short").file(&rel, "deep");
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 0);
    assert_eq!(file(&r, &name)["sha256"], sha256_hex(b"short").as_str());
    assert_eq!(file(&r, &rel)["sha256"], sha256_hex(b"deep").as_str());
}

#[test]
fn sparse_file_over_max_file_bytes_is_scan004_without_reading_it() {
    let repo = Repo::new();
    let f = std::fs::File::create(repo.abs("huge.safetensors")).unwrap();
    f.set_len(2 << 30).unwrap();
    drop(f);
    repo.file("small.txt", "ok");
    let start = std::time::Instant::now();
    let (code, r) = scan_with_limits(repo.path(), "max_file_bytes = 1073741824");
    assert!(
        start.elapsed() < std::time::Duration::from_secs(20),
        "the 2 GiB file was read"
    );
    assert_eq!(code, 1);
    let hits = limit_hits(&r, "max_file_bytes");
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0]["path"], "huge.safetensors");
    assert_eq!(file(&r, "huge.safetensors")["sha256"], Value::Null);
    assert_eq!(file(&r, "small.txt")["sha256"], sha256_hex(b"ok").as_str());
}

#[test]
fn moderate_sparse_file_is_streamed_and_hashed() {
    // 48 MiB of holes: read in blocks, hashed, and a safetensors header of zeros is invalid.
    const LEN: u64 = 48 << 20;
    let repo = Repo::new();
    let f = std::fs::File::create(repo.abs("sparse.bin")).unwrap();
    f.set_len(LEN).unwrap();
    drop(f);
    let (_, r) = scan_json(repo.path(), &[]);
    let rec = file(&r, "sparse.bin");
    assert_eq!(rec["size"], LEN);
    let zeros = vec![0u8; LEN as usize];
    assert_eq!(rec["sha256"], sha256_hex(&zeros).as_str());
}

#[test]
fn thousands_of_hostile_files_do_not_hide_any_normal_file() {
    let outer = tempfile::tempdir().unwrap();
    let root = outer.path().join("repo");
    std::fs::create_dir(&root).unwrap();
    let mut normal: Vec<(String, Vec<u8>)> = Vec::new();
    for i in 0..300usize {
        // Text (no sniffable magic), of sizes from 0 to ~20 KB.
        let rel = format!("normal/{}/file-{i}.txt", i % 7);
        let data = format!("normal file {i}\n")
            .repeat(i * 37 % 1200)
            .into_bytes();
        normal.push((rel, data));
    }
    normal.push(("normal/model.safetensors".into(), {
        safetensors(&[("w", "F32", &[2], &[0, 0, 128, 63, 0, 0, 0, 64])], None)
    }));
    for (rel, data) in &normal {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, data).unwrap();
    }
    let hostile = root.join("hostile");
    std::fs::create_dir(&hostile).unwrap();
    for i in 0..2000usize {
        let name = format!("h{i:05}");
        let p = hostile.join(&name);
        match i % 10 {
            0 => std::os::unix::fs::symlink("../../outside", &p).unwrap(),
            1 => std::os::unix::fs::symlink(&name, &p).unwrap(),
            2 => std::os::unix::fs::symlink("/", &p).unwrap(),
            3 => std::fs::write(&p, b"\x80\x04\x95\xff\xff\xff\xff").unwrap(),
            4 => std::fs::write(&p, b"PK\x03\x04\x14\x00\x00\x00\x08\x00garbage").unwrap(),
            5 => std::fs::write(&p, b"\xff\xff\xff\xff\xff\xff\xff\x7f{").unwrap(),
            6 => {
                let mut n = format!("n\n\x1b[31m{i}").into_bytes();
                n.push(0xff);
                write_bytes_name(&hostile, &n, b"x");
            }
            7 => std::fs::write(&p, b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03broken").unwrap(),
            8 => {
                std::fs::write(&p, b"GGUF\x03\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff\xff").unwrap()
            }
            _ => std::fs::create_dir_all(p.join("a/b/c")).unwrap(),
        }
    }
    std::fs::write(outer.path().join("outside"), "OUTSIDE").unwrap();
    let (code, r) = scan_json(&root, &["--jobs", "2"]);
    assert_eq!(code, 1);
    for (rel, data) in &normal {
        let rec = file(&r, rel);
        assert_eq!(rec["sha256"], sha256_hex(data).as_str(), "{rel}");
        assert_eq!(rec["size"], data.len() as u64, "{rel}");
        assert!(
            rules_on(&r, rel).is_empty(),
            "{rel}: {:?}",
            rules_on(&r, rel)
        );
    }
    assert_eq!(
        file(&r, "normal/model.safetensors")["format"],
        "safetensors"
    );
    assert!(!r.to_string().contains("OUTSIDE"));
}

// ---------------------------------------------------------------------------------------------
// Resource limits: each named limit is reachable from `[limits]`, hitting it is reported, and
// the scan goes on to the next file.

#[test]
fn limit_max_files_stops_the_walk_with_scan004() {
    let repo = Repo::new();
    for i in 0..10 {
        repo.file(&format!("f{i}.txt"), "x");
    }
    let (code, r) = scan_with_limits(repo.path(), "max_files = 5");
    assert_eq!(code, 1);
    assert_eq!(limit_hits(&r, "max_files").len(), 1);
    assert_eq!(r["summary"]["files"], 5);
}

#[test]
fn limit_max_depth_is_settable() {
    let repo = Repo::new();
    repo.file("a/b/c/d/e/deep.txt", "x").file("a/top.txt", "y");
    let (code, r) = scan_with_limits(repo.path(), "max_depth = 3");
    assert_eq!(code, 1);
    assert_eq!(limit_hits(&r, "max_depth").len(), 1);
    assert!(has_file(&r, "a/top.txt") && !has_file(&r, "a/b/c/d/e/deep.txt"));
}

#[test]
fn limit_max_file_bytes_skips_only_the_big_file() {
    let repo = Repo::new();
    repo.file("big.bin", [1u8; 1000])
        .file("small.bin", [2u8; 10]);
    let (code, r) = scan_with_limits(repo.path(), "max_file_bytes = 100");
    assert_eq!(code, 1);
    let hits = limit_hits(&r, "max_file_bytes");
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0]["path"], "big.bin");
    assert_eq!(
        file(&r, "small.bin")["sha256"],
        sha256_hex(&[2u8; 10]).as_str()
    );
}

#[test]
fn limit_archive_depth_stops_nested_zips() {
    let mut inner = zip_stored(&[("data.pkl", &pickle_call("os", "system", "deep"))]);
    for i in 0..4 {
        inner = zip_stored(&[(format!("level{i}.zip").as_str(), &inner)]);
    }
    let repo = Repo::new();
    repo.file("nested.zip", &inner).file("after.txt", "z");
    let (code, r) = scan_with_limits(repo.path(), "archive_depth = 2");
    assert_eq!(code, 1);
    assert!(
        problems_on(&r, "ARC001", "nested.zip").contains(&"depth-exceeded".to_string()),
        "{:#}",
        r["findings"]
    );
    assert_eq!(file(&r, "after.txt")["sha256"], sha256_hex(b"z").as_str());
    // With the default depth (4) the pickle at depth 4 is reached.
    let (_, r) = scan_json(repo.path(), &[]);
    assert!(
        rules_on(&r, "nested.zip").contains(&"PKL001".to_string()),
        "{:#}",
        r["findings"]
    );
}

#[test]
fn limit_archive_members_is_settable() {
    let members: Vec<(String, Vec<u8>)> =
        (0..10).map(|i| (format!("m{i}"), vec![b'x'; 3])).collect();
    let refs: Vec<(&str, &[u8])> = members
        .iter()
        .map(|(n, d)| (n.as_str(), d.as_slice()))
        .collect();
    let repo = Repo::new();
    repo.file("many.zip", zip_stored(&refs))
        .file("after.txt", "z");
    let (code, r) = scan_with_limits(repo.path(), "archive_members = 3");
    assert_eq!(code, 1);
    assert!(
        problems_on(&r, "ARC001", "many.zip").contains(&"too-many-members".to_string()),
        "{:#}",
        r["findings"]
    );
    assert!(has_file(&r, "after.txt"));
}

#[test]
fn zip_bomb_is_stopped_by_archive_ratio_and_archive_member_bytes() {
    let zeros = vec![0u8; 4 << 20];
    let bomb = zip_deflated(&[("zeros.bin", &zeros)]);
    assert!(
        bomb.len() < 16 << 10,
        "deflate did not compress: {}",
        bomb.len()
    );
    let repo = Repo::new();
    repo.file("bomb.zip", &bomb).file("after.txt", "z");

    let (code, r) = scan_with_limits(repo.path(), "archive_ratio = 10");
    assert_eq!(code, 1);
    assert!(
        problems_on(&r, "ARC001", "bomb.zip").contains(&"bomb".to_string()),
        "{:#}",
        r["findings"]
    );
    assert!(has_file(&r, "after.txt"));

    let (code, r) = scan_with_limits(repo.path(), "archive_member_bytes = 1000");
    assert_eq!(code, 1);
    assert!(
        problems_on(&r, "ARC001", "bomb.zip").contains(&"member-too-large".to_string()),
        "{:#}",
        r["findings"]
    );
}

#[test]
fn limit_pickle_opcodes_is_pkl004_and_keeps_earlier_imports() {
    // 200 opcodes of list building, then an import: the limit stops the walk before it.
    let mut p = b"\x80\x02]q\x00(".to_vec();
    for _ in 0..100 {
        p.extend_from_slice(b"K\x01");
    }
    p.extend_from_slice(b"e");
    p.extend_from_slice(&pickle_call("os", "system", "late"));
    let repo = Repo::new();
    repo.file("model.pkl", &p).file("after.txt", "z");
    let (code, r) = scan_with_limits(repo.path(), "pickle_opcodes = 50");
    assert_eq!(code, 1);
    let problems = problems_on(&r, "PKL004", "model.pkl");
    assert!(
        problems.iter().any(|c| c.starts_with("limit-")),
        "{:#}",
        r["findings"]
    );
    assert!(has_file(&r, "after.txt"));
}

#[test]
fn limit_json_bytes_skips_a_big_shard_index_with_scan004() {
    let mut index = String::from("{\"metadata\": {}, \"weight_map\": {");
    for i in 0..200 {
        if i > 0 {
            index.push(',');
        }
        index.push_str(&format!("\"t{i}\": \"model-00001-of-00001.safetensors\""));
    }
    index.push_str("}}");
    let repo = Repo::new();
    repo.file("model.safetensors.index.json", &index)
        .file("after.txt", "z");
    let (code, r) = scan_with_limits(repo.path(), "json_bytes = 1000");
    assert_eq!(code, 1);
    let hits = limit_hits(&r, "json_bytes");
    assert_eq!(hits.len(), 1, "{:#}", r["findings"]);
    assert_eq!(hits[0]["path"], "model.safetensors.index.json");
    assert!(has_file(&r, "after.txt"));
}

#[test]
fn every_named_limit_is_accepted_in_a_policy_limits_table() {
    // Reachability: each name in `policy::LIMITS` parses in `[limits]` at its default value and
    // the scan runs under it.
    let mut lines = String::new();
    for l in modelgate::policy::LIMITS {
        lines.push_str(&format!("{} = {}\n", l.name, l.default));
    }
    let repo = Repo::new();
    repo.file("a.txt", "a");
    let (code, r) = scan_with_limits(repo.path(), &lines);
    assert_eq!(code, 0, "{r:#}");
}

#[test]
fn limit_json_bytes_on_a_padded_config_is_scan004_not_a_silent_skip() {
    // Caught by this suite: a config.json over json_bytes used to be skipped without a finding,
    // so padding hid an `auto_map` entry (custom code) from SRC001.
    let config = format!(
        "{{\"auto_map\": {{\"AutoModel\": \"modeling_x.XModel\"}}, \"pad\": \"{}\"}}",
        "y".repeat(3000)
    );
    let repo = Repo::new();
    repo.file("config.json", &config).file("after.txt", "z");
    let (code, r) = scan_with_limits(repo.path(), "json_bytes = 1000");
    assert_eq!(code, 1);
    let hits = limit_hits(&r, "json_bytes");
    assert_eq!(hits.len(), 1, "{:#}", r["findings"]);
    assert_eq!(hits[0]["path"], "config.json");
    assert!(has_file(&r, "after.txt"));
    // Under the default limit the same config is read and its auto_map reported.
    let (_, r) = scan_json(repo.path(), &[]);
    assert!(rules_on(&r, "config.json").contains(&"SRC001".to_string()));
}

#[test]
fn limit_code_file_bytes_skips_a_big_python_file_with_scan004() {
    let mut py = String::from("from transformers import AutoModel\n");
    py.push_str(&"# padding\n".repeat(500));
    py.push_str("m = AutoModel.from_pretrained('org/x', trust_remote_code=True)\n");
    let repo = Repo::new();
    repo.file("load.py", &py).file("after.txt", "z");
    let (code, r) = scan_with_limits(repo.path(), "code_file_bytes = 1000");
    assert_eq!(code, 1);
    let hits = limit_hits(&r, "code_file_bytes");
    assert_eq!(hits.len(), 1, "{:#}", r["findings"]);
    assert_eq!(hits[0]["path"], "load.py");
    assert!(has_file(&r, "after.txt"));
    let (_, r) = scan_json(repo.path(), &[]);
    assert!(
        rules_on(&r, "load.py").contains(&"SRC002".to_string()),
        "{:#}",
        r["findings"]
    );
}

#[test]
fn limit_yaml_bytes_on_model_card_front_matter_is_reported_not_parsed() {
    // An oversized front matter is not parsed: SCAN004 says so (deny by default, so padding the
    // card cannot hide its license), and the card check says why its fields are missing.
    let card = format!(
        "---\nlicense: mit\npad: {}\n---\n# Model\n",
        "x".repeat(2000)
    );
    let repo = Repo::new();
    repo.file("README.md", &card).file(
        "model.safetensors",
        safetensors(&[("w", "F32", &[1], &[0, 0, 0, 0])], None),
    );
    let (_, r) = scan_with_limits(repo.path(), "yaml_bytes = 1000");
    let card2: Vec<&Value> = findings(&r, "CARD002")
        .into_iter()
        .filter(|f| f["path"] == "README.md")
        .collect();
    assert_eq!(card2.len(), 1, "{:#}", r["findings"]);
    assert!(card2[0]["message"].as_str().unwrap().contains("size limit"));
    assert!(
        findings(&r, "SCAN004")
            .iter()
            .any(|f| f["path"] == "README.md" && f["evidence"]["limit"] == "yaml_bytes"),
        "{:#}",
        r["findings"]
    );
    let (_, r) = scan_json(repo.path(), &[]);
    assert!(findings(&r, "CARD002").is_empty(), "{:#}", r["findings"]);
}

/// Every committed fixture (pickles, PyTorch zip/legacy/TorchScript, GGUF, HDF5, Keras, ONNX,
/// TFLite, NeMo, compressed streams, signing bundles…) mutated six ways — bit flips, truncation,
/// 4- and 8-byte fields set to extreme lengths, a duplicated run, a zeroed run — about a
/// thousand hostile files in one tree. The scan ends with a verdict (exit 0 or 1), reads every
/// file, and no inspector panics (a panic would be caught and reported as an internal error).
#[test]
fn mutated_fixtures_by_the_thousand_end_in_findings_never_a_panic() {
    fn fixtures(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            // The hostile-Python corpus (issue 37) is built to exhaust the code judge and has a
            // test of its own (tests/hostile_python); six mutations of each of its 10,000-term
            // chains would only multiply this test's time.
            if p.ends_with("hostile-python") {
                continue;
            }
            if p.is_dir() {
                fixtures(&p, out);
            } else if p.extension() != Some(OsStr::new("md")) {
                out.push(p);
            }
        }
    }
    // xorshift64: deterministic, so a failure names a reproducible file.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move |n: usize| -> usize {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n.max(1) as u64) as usize
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut sources = Vec::new();
    fixtures(&root, &mut sources);
    assert!(sources.len() > 100, "fixtures moved? {}", sources.len());
    let repo = Repo::new();
    let mut written = 0usize;
    for (i, src) in sources.iter().enumerate() {
        let data = std::fs::read(src).unwrap();
        if data.len() < 8 {
            continue;
        }
        let ext = src.extension().and_then(OsStr::to_str).unwrap_or("bin");
        for k in 0..6 {
            let mut b = data.clone();
            match k {
                0 => {
                    for _ in 0..1 + next(32) {
                        let at = next(b.len());
                        b[at] ^= 1 << next(8);
                    }
                }
                1 => b.truncate(next(b.len())),
                2 => {
                    let at = next(b.len() - 7);
                    let v = [u64::MAX, i64::MAX as u64, u32::MAX as u64, 1 << 40, 0][next(5)];
                    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
                }
                3 => {
                    let at = next(b.len() - 3);
                    let v = [u32::MAX, 1 << 31, i32::MAX as u32, 0][next(4)];
                    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
                }
                4 => {
                    let at = next(b.len());
                    let end = (at + 1 + next(256)).min(b.len());
                    let run = b[at..end].to_vec();
                    for _ in 0..1 + next(3) {
                        b.splice(end..end, run.iter().copied());
                    }
                }
                _ => {
                    let at = next(b.len());
                    let end = (at + 1 + next(64)).min(b.len());
                    b[at..end].fill(0);
                }
            }
            repo.file(&format!("m/{i:03}-{k}.{ext}"), &b);
            written += 1;
        }
    }
    let (code, r) = scan_json(repo.path(), &["--fail-on", "deny"]);
    assert!(code == 0 || code == 1, "exit {code}: {:#}", r["summary"]);
    assert_eq!(r["files"].as_array().unwrap().len(), written);
    let internal: Vec<&Value> = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| {
            f["message"]
                .as_str()
                .unwrap_or("")
                .contains("internal error")
        })
        .collect();
    assert!(internal.is_empty(), "{internal:#?}");
}
