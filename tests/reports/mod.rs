//! Report renderers (SARIF, Markdown, CycloneDX) and `verify`, tested as library calls on tiny
//! byte-exact trees built in temp dirs. SBOM and SARIF are validated against the official
//! schemas vendored in `tests/schemas/` with an independent validator (`jsonschema`).

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use cyclonedx_bom::models::bom::{Bom, SpecVersion};
use cyclonedx_bom::validation::Validate;
use modelgate::inspect::{self, ScanConfig};
use modelgate::model::finding::{Action, Detection, Finding, Location};
use modelgate::model::report::{
    FailOn, FileRecord, GitFacts, PolicyInfo, Report, Settings, ToolInfo,
};
use modelgate::model::rules::RuleId;
use modelgate::report::cyclonedx::SbomFormat;
use modelgate::report::cyclonedx::{self, SbomOptions};
use modelgate::report::{markdown, sarif};
use modelgate::verify;
use modelgate::walk::{self, EntryKind, WalkOptions};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const LFS_OID: &str = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

fn schema(name: &str) -> Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/schemas")
        .join(name);
    serde_json::from_slice(&fs::read(p).unwrap()).unwrap()
}

fn assert_valid(validator: &jsonschema::Validator, doc: &Value, what: &str) {
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(
        errors.is_empty(),
        "{what} is schema-invalid:\n{}",
        errors.join("\n")
    );
}

fn cyclonedx_validator() -> jsonschema::Validator {
    cyclonedx_validator_of("bom-1.5.SNAPSHOT.schema.json")
}

fn cyclonedx_1_6_validator() -> jsonschema::Validator {
    cyclonedx_validator_of("bom-1.6.SNAPSHOT.schema.json")
}

/// The official 1.7 schema, unmodified: it names its siblings without `.SNAPSHOT` and adds the
/// cryptography definitions (tests/schemas/README.md).
fn cyclonedx_1_7_validator() -> jsonschema::Validator {
    jsonschema::options()
        .with_resource(
            "http://cyclonedx.org/schema/spdx.schema.json",
            jsonschema::Resource::from_contents(schema("spdx.SNAPSHOT.schema.json")).unwrap(),
        )
        .with_resource(
            "http://cyclonedx.org/schema/jsf-0.82.schema.json",
            jsonschema::Resource::from_contents(schema("jsf-0.82.SNAPSHOT.schema.json")).unwrap(),
        )
        .with_resource(
            "http://cyclonedx.org/schema/cryptography-defs.schema.json",
            jsonschema::Resource::from_contents(schema("cryptography-defs.schema.json")).unwrap(),
        )
        .should_validate_formats(true)
        .build(&schema("bom-1.7.schema.json"))
        .unwrap()
}

fn cyclonedx_validator_of(bom_schema: &str) -> jsonschema::Validator {
    // The BOM schema $refs its siblings by relative name; register them under the URIs those
    // names resolve to instead of fetching anything.
    jsonschema::options()
        .with_resource(
            "http://cyclonedx.org/schema/spdx.SNAPSHOT.schema.json",
            jsonschema::Resource::from_contents(schema("spdx.SNAPSHOT.schema.json")).unwrap(),
        )
        .with_resource(
            "http://cyclonedx.org/schema/jsf-0.82.SNAPSHOT.schema.json",
            jsonschema::Resource::from_contents(schema("jsf-0.82.SNAPSHOT.schema.json")).unwrap(),
        )
        .should_validate_formats(true)
        .build(&schema(bom_schema))
        .unwrap()
}

fn sarif_validator() -> jsonschema::Validator {
    jsonschema::options()
        .should_validate_formats(true)
        .build(&schema("sarif-2.1.0.schema.json"))
        .unwrap()
}

fn write(root: &Path, rel: &[u8], bytes: &[u8]) -> PathBuf {
    let p = root.join(OsStr::from_bytes(rel));
    if let Some(d) = p.parent() {
        fs::create_dir_all(d).unwrap();
    }
    fs::write(&p, bytes).unwrap();
    p
}

/// A protocol-2 pickle calling `os.system("echo")`: GLOBAL, MARK, string, TUPLE, REDUCE, STOP.
const EVIL_PICKLE: &[u8] = b"\x80\x02cos\nsystem\nq\x00X\x04\x00\x00\x00echoq\x01\x85q\x02Rq\x03.";

fn lfs_pointer() -> Vec<u8> {
    format!("version https://git-lfs.github.com/spec/v1\noid sha256:{LFS_OID}\nsize 3\n")
        .into_bytes()
}

/// The odd tree: spaces, `#`, `%`, `?`, unicode, a newline and an invalid UTF-8 byte in names,
/// a model directory with card and config, an LFS pointer, a pickle, symlinks in and out.
fn odd_tree(root: &Path) {
    write(
        root,
        b"README.md",
        b"---\nlicense: apache-2.0\n---\n# demo\n",
    );
    write(root, b"config.json", b"{\"model_type\": \"bert\"}\n");
    write(
        root,
        b"model.safetensors",
        b"\x02\x00\x00\x00\x00\x00\x00\x00{}",
    );
    write(root, b"weights/pytorch_model.bin", EVIL_PICKLE);
    write(root, b"big.bin", &lfs_pointer());
    write(root, b"dir with space/a#b%c?.txt", b"odd\n");
    write(root, "模型/权重.txt".as_bytes(), b"unicode\n");
    write(root, b"new\nline.txt", b"newline\n");
    write(root, b"bad\xffname.txt", b"invalid utf-8\n");
    write(root, b"ctl\x01char.txt", b"control\n");
    std::os::unix::fs::symlink("config.json", root.join("link-in.json")).unwrap();
    std::os::unix::fs::symlink("../../etc/passwd", root.join("link-out")).unwrap();
}

fn settings() -> Settings {
    Settings {
        fail_on: FailOn::Deny,
        check_values: false,
        excludes: walk::DEFAULT_EXCLUDES
            .iter()
            .map(|s| s.to_string())
            .collect(),
        excluded: Vec::new(),
        no_git: false,
    }
}

/// Builds a report the way `scan` does (crawl + one-pass inspection), without the policy.
fn scan(root: &Path, sha512: bool) -> Report {
    let opts = WalkOptions {
        excludes: walk::DEFAULT_EXCLUDES
            .iter()
            .map(|s| s.to_string())
            .collect(),
        max_files: 10_000,
        max_depth: 64,
        containment: None,
        hidden_dirs: Vec::new(),
    };
    let walked = walk::walk(root, &opts).unwrap();
    let cfg = ScanConfig {
        sha512,
        ..ScanConfig::default()
    };
    let mut files = Vec::new();
    for e in &walked.entries {
        match &e.kind {
            EntryKind::File {
                open,
                size,
                link_target,
            } => {
                let s = inspect::scan_file(open, &e.rel, *size, &cfg);
                let mut facts = s.facts.clone();
                if let Some(t) = link_target {
                    facts.insert("symlink_target".into(), json!(t));
                }
                files.push(FileRecord {
                    path: e.rel.clone(),
                    size: s.size,
                    sha256: s.sha256.clone(),
                    sha512: s.sha512.clone(),
                    kind: s.kind.unwrap(),
                    format: s.format.unwrap(),
                    facts,
                });
            }
            EntryKind::Link { target, reason } => files.push(FileRecord {
                path: e.rel.clone(),
                size: 0,
                sha256: None,
                sha512: None,
                kind: modelgate::classify::Kind::Other,
                format: modelgate::classify::Format::Symlink,
                facts: serde_json::from_value(
                    json!({"symlink_target": target, "not_followed": reason}),
                )
                .unwrap(),
            }),
            EntryKind::Special { .. } => unreachable!("no special files in fixtures"),
        }
    }
    let mut r = Report {
        schema_version: 1,
        tool: ToolInfo::default(),
        root: root.display().to_string(),
        policy: PolicyInfo {
            source: "built-in:default".into(),
            sha256: "ab".repeat(32),
        },
        settings: settings(),
        git: None,
        repository: serde_json::Map::new(),
        files,
        findings: Vec::new(),
        summary: Default::default(),
    };
    r.summarize();
    r
}

fn finding(r: &Report, rule: RuleId, path: &str, action: Action, loc: Location) -> Finding {
    let digest = r
        .files
        .iter()
        .find(|f| f.path == path)
        .and_then(|f| f.sha256.clone());
    Finding::from_detection(
        Detection::new(
            rule,
            path,
            "k",
            format!("{} on `{path}` | <b>x</b>", rule.name()),
        )
        .at(loc),
        action,
        digest.as_deref(),
    )
}

/// The odd tree's report, enriched with the facts and findings the later stages will add.
fn odd_report(root: &Path) -> Report {
    let mut r = scan(root, true);
    for f in &mut r.files {
        if f.path == "big.bin" {
            // The LFS inspector is not in this tree yet; set the facts it will record.
            f.facts
                .insert("lfs_oid".into(), json!(format!("sha256:{LFS_OID}")));
            f.facts.insert("lfs_size".into(), json!(3));
        }
        if f.path == "weights/pytorch_model.bin" {
            f.facts
                .insert("pickle_globals".into(), json!(["os.system"]));
        }
        if f.path == "model.safetensors" {
            f.facts.insert("tensor_count".into(), json!(0));
            f.facts.insert("dtypes".into(), json!(["F32", "BF16"]));
        }
    }
    r.repository.insert(
        "huggingface".into(),
        json!({"repo_id": "demo-org/demo-model", "commit": "0123456789abcdef0123456789abcdef01234567"}),
    );
    r.repository.insert(
        "model_dirs".into(),
        json!([{
            "path": "",
            "card": {"license": "apache-2.0", "license_spdx": "Apache-2.0", "pipeline_tag": "text-classification",
                     "datasets": ["imdb", "evil\ndataset"], "base_model": "google-bert/bert-base-uncased"},
            "config": {"architectures": ["BertForSequenceClassification"], "model_type": "bert",
                       "hyperparameters": {"hidden_size": 768, "num_layers": 12}}
        }, {
            "path": "weights",
            "card": {"license": "my weird license"},
        }]),
    );
    r.git = Some(GitFacts {
        commit: Some("89abcdef0123456789abcdef0123456789abcdef".into()),
        branch: Some("main".into()),
        remote: Some("git@github.com:Demo-Org/Demo-Model.git".into()),
        ..GitFacts::default()
    });
    let mut findings = vec![
        finding(
            &r,
            RuleId::PickleUnsafeGlobal,
            "weights/pytorch_model.bin",
            Action::Deny,
            Location {
                offset: Some(2),
                member: Some("archive/data.pkl".into()),
                ..Location::default()
            },
        ),
        finding(
            &r,
            RuleId::LfsPointer,
            "big.bin",
            Action::Warn,
            Location::default(),
        ),
        finding(
            &r,
            RuleId::TrustRemoteCode,
            "dir with space/a#b%c?.txt",
            Action::Warn,
            Location::line_col(3, 7),
        ),
        finding(
            &r,
            RuleId::DirtyWorktree,
            "",
            Action::Allow,
            Location::default(),
        ),
        finding(
            &r,
            RuleId::SymlinkEscape,
            "link-out",
            Action::Deny,
            Location::default(),
        ),
        finding(
            &r,
            RuleId::FormatMismatch,
            "new\nline.txt",
            Action::Warn,
            Location::default(),
        ),
        finding(
            &r,
            RuleId::FormatMismatch,
            "bad\\xFFname.txt",
            Action::Warn,
            Location::offset(0),
        ),
    ];
    findings.sort_by(|a, b| (&a.path, a.rule).cmp(&(&b.path, b.rule)));
    r.findings = findings;
    r.summarize();
    r
}

fn fixed_opts() -> SbomOptions {
    SbomOptions {
        timestamp: Some(time::macros::datetime!(2024-01-02 03:04:05 UTC)),
        reproducible: Some(true),
        ..SbomOptions::default()
    }
}

fn render_sbom(bom: &Bom, format: SbomFormat) -> Vec<u8> {
    let mut out = Vec::new();
    cyclonedx::render(bom, format, &mut out).unwrap();
    out
}

fn sbom_files(doc: &Value, out: &mut BTreeMap<String, Value>) {
    for c in doc["components"].as_array().into_iter().flatten() {
        if c["type"] == "file" {
            let path = c["properties"]
                .as_array()
                .unwrap()
                .iter()
                .find(|p| p["name"] == "modelgate:path")
                .unwrap()["value"]
                .as_str()
                .unwrap()
                .to_string();
            out.insert(path, c.clone());
        }
        sbom_files(c, out);
    }
}

#[test]
fn sbom_json_validates_against_the_official_schema() {
    let dir = tempfile::tempdir().unwrap();
    odd_tree(dir.path());
    let report = odd_report(dir.path());
    let bom = cyclonedx::build(&report, &fixed_opts());
    let result = bom.validate_version(SpecVersion::V1_5);
    assert!(result.passed(), "crate validation failed: {result:?}");
    let doc: Value = serde_json::from_slice(&render_sbom(&bom, SbomFormat::Json)).unwrap();
    assert_valid(&cyclonedx_validator(), &doc, "sbom");

    // Every file appears once, with odd names escaped losslessly enough to verify.
    let mut files = BTreeMap::new();
    sbom_files(&doc, &mut files);
    let paths: Vec<&str> = files.keys().map(String::as_str).collect();
    assert_eq!(paths.len(), report.files.len());
    assert!(paths.contains(&"new\\x0Aline.txt"));
    assert!(paths.contains(&"bad\\xFFname.txt"));
    assert!(paths.contains(&"ctl\\x01char.txt"));
    assert!(paths.contains(&"模型/权重.txt"));
    assert!(paths.contains(&"dir with space/a#b%c?.txt"));

    // The LFS pointer carries the content oid and says so.
    let lfs = &files["big.bin"];
    assert_eq!(lfs["hashes"][0]["content"], LFS_OID);
    let props = lfs["properties"].to_string();
    assert!(props.contains("modelgate:lfs-pointer") && props.contains("modelgate:content-present"));

    // The pickle lists its globals and its finding.
    let pkl = files["weights/pytorch_model.bin"]["properties"].to_string();
    assert!(pkl.contains("os.system") && pkl.contains("PKL001"));

    // The repository: HF purl, commit pedigree, vcs reference; models nest their files.
    let meta = &doc["metadata"]["component"];
    assert_eq!(
        meta["purl"],
        "pkg:huggingface/demo-org/demo-model@0123456789abcdef0123456789abcdef01234567"
    );
    assert_eq!(meta["type"], "machine-learning-model");
    assert_eq!(meta["externalReferences"][0]["type"], "vcs");
    assert_eq!(
        meta["externalReferences"][0]["url"],
        "ssh://git@github.com/Demo-Org/Demo-Model.git"
    );
    assert_eq!(
        meta["pedigree"]["commits"][0]["uid"],
        "89abcdef0123456789abcdef0123456789abcdef"
    );
    let models: Vec<&Value> = doc["components"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["type"] == "machine-learning-model")
        .collect();
    assert_eq!(models.len(), 2);
    let root_model = models[0];
    assert_eq!(root_model["licenses"][0]["license"]["id"], "Apache-2.0");
    assert_eq!(
        root_model["modelCard"]["modelParameters"]["task"],
        "text-classification"
    );
    assert_eq!(
        root_model["modelCard"]["modelParameters"]["datasets"][1]["name"],
        "evil\\x0Adataset"
    );
    assert_eq!(
        root_model["pedigree"]["ancestors"][0]["purl"],
        "pkg:huggingface/google-bert/bert-base-uncased"
    );
    assert_eq!(
        models[1]["licenses"][0]["license"]["name"],
        "my weird license"
    );
    assert_eq!(models[1]["components"].as_array().unwrap().len(), 1);
}

#[test]
fn sbom_digests_equal_sha256_of_the_bytes() {
    let dir = tempfile::tempdir().unwrap();
    odd_tree(dir.path());
    let report = scan(dir.path(), true);
    let bom = cyclonedx::build(&report, &fixed_opts());
    let doc: Value = serde_json::from_slice(&render_sbom(&bom, SbomFormat::Json)).unwrap();
    let mut files = BTreeMap::new();
    sbom_files(&doc, &mut files);
    let p = "weights/pytorch_model.bin";
    let want = format!("{:x}", Sha256::digest(EVIL_PICKLE));
    assert_eq!(files[p]["hashes"][0]["alg"], "SHA-256");
    assert_eq!(files[p]["hashes"][0]["content"], want.as_str());
    assert_eq!(files[p]["hashes"][1]["alg"], "SHA-512");
    // An LFS pointer's oid stands for the absent content.
    assert_eq!(files["big.bin"]["hashes"][0]["content"], LFS_OID);
    // An escaping symlink is listed without a digest.
    assert!(files["link-out"].get("hashes").is_none());
    assert_valid(&cyclonedx_validator(), &doc, "plain sbom");
}

#[test]
fn sbom_xml_parses_and_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    odd_tree(dir.path());
    let report = odd_report(dir.path());
    let bom = cyclonedx::build(&report, &fixed_opts());
    let xml = render_sbom(&bom, SbomFormat::Xml);
    let back = Bom::parse_from_xml_v1_5(&xml[..]).unwrap();
    assert_eq!(
        render_sbom(&back, SbomFormat::Json),
        render_sbom(&bom, SbomFormat::Json)
    );
    let json = render_sbom(&bom, SbomFormat::Json);
    let back = Bom::parse_from_json_v1_5(&json[..]).unwrap();
    assert_eq!(render_sbom(&back, SbomFormat::Xml), xml);
}

#[test]
fn sbom_is_byte_identical_across_runs_when_reproducible() {
    let dir = tempfile::tempdir().unwrap();
    odd_tree(dir.path());
    let a = render_sbom(
        &cyclonedx::build(&odd_report(dir.path()), &fixed_opts()),
        SbomFormat::Json,
    );
    let b = render_sbom(
        &cyclonedx::build(&odd_report(dir.path()), &fixed_opts()),
        SbomFormat::Json,
    );
    assert_eq!(a, b);
    let doc: Value = serde_json::from_slice(&a).unwrap();
    assert_eq!(doc["metadata"]["timestamp"], "2024-01-02T03:04:05Z");
    let serial = doc["serialNumber"].as_str().unwrap();
    assert_eq!(&serial[23..24], "5", "name-based uuid: {serial}");

    // Without reproducibility the serial is random.
    let opts = SbomOptions {
        reproducible: Some(false),
        ..fixed_opts()
    };
    let c = render_sbom(
        &cyclonedx::build(&odd_report(dir.path()), &opts),
        SbomFormat::Json,
    );
    assert_ne!(a, c);
}

#[test]
fn sarif_validates_against_the_official_schema() {
    let dir = tempfile::tempdir().unwrap();
    odd_tree(dir.path());
    let report = odd_report(dir.path());
    let mut out = Vec::new();
    sarif::render(&report, &mut out).unwrap();
    let doc: Value = serde_json::from_slice(&out).unwrap();
    assert_valid(&sarif_validator(), &doc, "sarif");

    let run = &doc["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    assert_eq!(rules.len(), RuleId::ALL.len());
    assert!(rules.iter().all(|r| r["help"]["text"].is_string()
        && r["help"]["markdown"].is_string()
        && r["properties"]["security-severity"].is_string()));
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), report.findings.len());
    // Worst first.
    assert_eq!(results[0]["level"], "error");
    let uris: Vec<&str> = results
        .iter()
        .map(|r| {
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert!(uris.contains(&"dir%20with%20space/a%23b%25c%3F.txt"));
    assert!(uris.contains(&"new%0Aline.txt"));
    assert!(uris.contains(&"."));
    let pkl = results.iter().find(|r| r["ruleId"] == "PKL001").unwrap();
    assert_eq!(
        pkl["locations"][0]["physicalLocation"]["region"]["byteOffset"],
        2
    );
    assert_eq!(pkl["properties"]["member"], "archive/data.pkl");
    assert!(
        pkl["message"]["text"]
            .as_str()
            .unwrap()
            .contains("archive/data.pkl")
    );
    assert_eq!(
        pkl["ruleIndex"].as_u64().unwrap() as usize,
        RuleId::ALL
            .iter()
            .position(|r| *r == RuleId::PickleUnsafeGlobal)
            .unwrap()
    );
    assert!(pkl["partialFingerprints"]["modelgateFingerprint/v1"].is_string());
    let src = results.iter().find(|r| r["ruleId"] == "SRC002").unwrap();
    assert_eq!(
        src["locations"][0]["physicalLocation"]["region"]["startLine"],
        3
    );
    assert_eq!(
        src["locations"][0]["physicalLocation"]["region"]["startColumn"],
        7
    );
    assert_eq!(run["properties"]["truncated"], false);
}

#[test]
fn issue_16_sarif_rules_link_help_and_carry_cwe_tags() {
    let dir = tempfile::tempdir().unwrap();
    odd_tree(dir.path());
    let report = odd_report(dir.path());
    let mut out = Vec::new();
    sarif::render(&report, &mut out).unwrap();
    let doc: Value = serde_json::from_slice(&out).unwrap();
    let rules = doc["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap();
    assert!(rules.iter().all(|r| {
        r["helpUri"]
            .as_str()
            .is_some_and(|u| u.starts_with("https://") && u.ends_with("README.md#rules"))
    }));
    let tags = |code: &str| -> Vec<String> {
        let r = rules.iter().find(|r| r["id"] == code).unwrap();
        r["properties"]["tags"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap().to_string())
            .collect()
    };
    let pkl = tags("PKL001");
    for want in [
        "security",
        "pickle",
        "CWE-502",
        "external/cwe/cwe-502",
        "CWE-94",
    ] {
        assert!(pkl.contains(&want.to_string()), "{pkl:?}");
    }
    assert!(tags("FMT009").contains(&"CWE-787".to_string()));
    assert!(tags("PRV001").iter().all(|t| !t.starts_with("CWE")));
}

fn many_findings(n: usize) -> Report {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), b"a.pkl", EVIL_PICKLE);
    let mut r = scan(dir.path(), false);
    let base = finding(
        &r,
        RuleId::PickleFormat,
        "a.pkl",
        Action::Allow,
        Location::default(),
    );
    r.findings = (0..n)
        .map(|i| Finding {
            message: format!(
                "finding number {i} | with a long enough message to take some room in a table row"
            ),
            ..base.clone()
        })
        .collect();
    r.findings.push(finding(
        &r,
        RuleId::PickleUnsafeGlobal,
        "a.pkl",
        Action::Deny,
        Location::offset(2),
    ));
    r.summarize();
    r
}

#[test]
fn sarif_keeps_the_most_severe_25000_results() {
    let report = many_findings(sarif::MAX_RESULTS);
    let doc = serde_json::to_value(sarif::SarifLog::from(&report)).unwrap();
    let run = &doc["runs"][0];
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), sarif::MAX_RESULTS);
    assert_eq!(results[0]["ruleId"], "PKL001");
    assert_eq!(run["properties"]["truncated"], true);
    assert_eq!(run["properties"]["totalResults"], sarif::MAX_RESULTS + 1);
}

#[test]
fn markdown_stays_under_one_mebibyte_with_a_note() {
    let report = many_findings(20_000);
    let md = markdown::to_string(&report);
    assert!(md.len() < markdown::MAX_BYTES, "{} bytes", md.len());
    assert!(md.starts_with("## modelgate: FAIL"));
    assert!(md.contains("more findings not shown"));
    // The deny row survives truncation.
    assert!(md.contains("| deny | `PKL001`"));
}

#[test]
fn markdown_summary_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    odd_tree(dir.path());
    let mut report = odd_report(dir.path());
    // The root is a temp dir; nothing else in the summary varies between runs.
    report.root = "[root]".into();
    let md = markdown::to_string(&report);
    insta::assert_snapshot!("markdown_summary", md);
}

fn sbom_file_for(root: &Path, out: &Path, report: &Report, format: SbomFormat) {
    let bom = cyclonedx::build(report, &fixed_opts());
    fs::write(out, render_sbom(&bom, format)).unwrap();
    let _ = root;
}

#[test]
fn verify_accepts_an_unchanged_tree_and_the_lfs_pointer() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    odd_tree(&root);
    let sbom = dir.path().join("model.cdx.json");
    sbom_file_for(&root, &sbom, &odd_report(&root), SbomFormat::Json);
    let v = verify::verify(&sbom, &root, 2).unwrap();
    assert!(v.is_clean(), "{v:?}");
    assert_eq!(v.ok, v.checked);

    // XML works the same, and the pulled LFS content matches the recorded oid.
    let xml = dir.path().join("model.cdx.xml");
    sbom_file_for(&root, &xml, &odd_report(&root), SbomFormat::Xml);
    write(&root, b"big.bin", b"abc");
    assert_eq!(format!("{:x}", Sha256::digest(b"abc")), LFS_OID);
    let v = verify::verify(&xml, &root, 1).unwrap();
    assert!(v.is_clean(), "{v:?}");
}

#[test]
fn verify_catches_a_single_flipped_byte() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    odd_tree(&root);
    let sbom = dir.path().join("model.cdx.json");
    sbom_file_for(&root, &sbom, &odd_report(&root), SbomFormat::Json);
    let mut bytes = EVIL_PICKLE.to_vec();
    bytes[5] ^= 0x01;
    write(&root, b"weights/pytorch_model.bin", &bytes);
    let v = verify::verify(&sbom, &root, 2).unwrap();
    assert!(!v.is_clean());
    assert_eq!(v.modified.len(), 1, "{v:?}");
    let m = &v.modified[0];
    assert_eq!(m.path, "weights/pytorch_model.bin");
    assert_eq!(m.reason, "digest-mismatch");
    assert_eq!(
        m.actual.as_deref(),
        Some(format!("{:x}", Sha256::digest(&bytes)).as_str())
    );
    assert!(v.missing.is_empty() && v.added.is_empty());
    let mut text = Vec::new();
    v.render_text(&mut text).unwrap();
    assert!(
        String::from_utf8(text)
            .unwrap()
            .contains("result: MISMATCH")
    );
}

#[test]
fn verify_reports_removed_and_added_files() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    odd_tree(&root);
    let sbom = dir.path().join("model.cdx.json");
    sbom_file_for(&root, &sbom, &odd_report(&root), SbomFormat::Json);
    fs::remove_file(root.join(OsStr::from_bytes(b"new\nline.txt"))).unwrap();
    write(&root, b"modeling_evil.py", b"import os\n");
    let v = verify::verify(&sbom, &root, 2).unwrap();
    assert_eq!(v.missing, vec!["new\\x0Aline.txt".to_string()]);
    assert_eq!(v.added, vec!["modeling_evil.py".to_string()]);
    assert!(v.modified.is_empty(), "{v:?}");
    let mut json_out = Vec::new();
    v.render_json(&mut json_out).unwrap();
    let doc: Value = serde_json::from_slice(&json_out).unwrap();
    assert_eq!(doc["added"][0], "modeling_evil.py");
}

#[test]
fn verify_reports_a_symlink_swapped_for_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    odd_tree(&root);
    let sbom = dir.path().join("model.cdx.json");
    sbom_file_for(&root, &sbom, &odd_report(&root), SbomFormat::Json);
    fs::remove_file(root.join("link-out")).unwrap();
    std::os::unix::fs::symlink("../../etc/shadow", root.join("link-out")).unwrap();
    let v = verify::verify(&sbom, &root, 1).unwrap();
    assert_eq!(v.modified.len(), 1, "{v:?}");
    assert_eq!(v.modified[0].reason, "symlink-changed");
}

#[test]
fn verify_rejects_an_oversized_sbom() {
    let dir = tempfile::tempdir().unwrap();
    let sbom = dir.path().join("big.json");
    fs::write(&sbom, vec![b' '; 100]).unwrap();
    let limits = verify::VerifyLimits {
        max_sbom_bytes: 10,
        ..verify::VerifyLimits::default()
    };
    let err = verify::verify_with(&sbom, dir.path(), 1, &limits).unwrap_err();
    assert!(err.to_string().contains("max_sbom_bytes"), "{err}");
}

#[test]
fn schema_validators_catch_the_known_traps() {
    // Proof the validators are not vacuous: the crate's `bomRef` spelling, a bare-string
    // dataset, an unknown SPDX id (through the registered $ref) and a bad SARIF uri all fail.
    let dir = tempfile::tempdir().unwrap();
    odd_tree(dir.path());
    let report = odd_report(dir.path());
    let bom = cyclonedx::build(&report, &fixed_opts());
    let good: Value = serde_json::from_slice(&render_sbom(&bom, SbomFormat::Json)).unwrap();
    let v = cyclonedx_validator();
    let mut bad = good.clone();
    bad["components"][0]["modelCard"]["bomRef"] = json!("x");
    assert!(!v.is_valid(&bad));
    let mut bad = good.clone();
    bad["components"][0]["modelCard"]["modelParameters"]["datasets"][0] = json!("ref");
    assert!(!v.is_valid(&bad));
    let mut bad = good.clone();
    bad["components"][0]["licenses"][0]["license"] = json!({"id": "Not-A-License"});
    assert!(!v.is_valid(&bad));

    let mut out = Vec::new();
    sarif::render(&report, &mut out).unwrap();
    let mut doc: Value = serde_json::from_slice(&out).unwrap();
    doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] =
        json!("a b");
    assert!(!sarif_validator().is_valid(&doc));
}

#[test]
fn sbom_has_a_dependency_graph_compositions_and_model_identity() {
    let dir = tempfile::tempdir().unwrap();
    odd_tree(dir.path());
    let report = odd_report(dir.path());
    let bom = cyclonedx::build(&report, &fixed_opts());
    let doc: Value = serde_json::from_slice(&render_sbom(&bom, SbomFormat::Json)).unwrap();
    assert_valid(&cyclonedx_validator(), &doc, "sbom");
    let edges = |r: &str| depends_on(&doc, r);
    let top = edges("repository");
    assert!(top.contains(&"model:".to_string()), "{top:?}");
    let root_model = edges("model:");
    assert!(root_model.contains(&"file:model.safetensors".to_string()));
    assert!(root_model.contains(&"dataset:imdb".to_string()));
    // The base model is the model's pedigree ancestor, not a graph edge (the graph may only
    // name components of this BOM; see `sbom_json_validates_against_the_official_schema`).
    assert!(!root_model.iter().any(|r| r.starts_with("base-model:")));
    assert!(edges("model:weights").contains(&"file:weights/pytorch_model.bin".to_string()));
    let comps = doc["compositions"].as_array().unwrap();
    assert_eq!(comps[0]["aggregate"], "complete");
    assert_eq!(comps[1]["aggregate"], "unknown");
    assert!(comps[1]["assemblies"].to_string().contains("dataset:imdb"));

    // The root model: named after the hub repository, versioned, with a digest and a supplier.
    let models: Vec<&Value> = doc["components"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["type"] == "machine-learning-model")
        .collect();
    let m = models[0];
    assert_eq!(m["name"], "demo-model");
    assert_eq!(m["group"], "demo-org");
    assert_eq!(m["version"], "0123456789abcdef0123456789abcdef01234567");
    assert_eq!(
        m["purl"],
        "pkg:huggingface/demo-org/demo-model@0123456789abcdef0123456789abcdef01234567"
    );
    assert_eq!(m["supplier"]["name"], "demo-org");
    assert_eq!(m["hashes"][0]["alg"], "SHA-256");
    assert_eq!(
        m["externalReferences"][0]["url"],
        "https://huggingface.co/demo-org/demo-model/blob/0123456789abcdef0123456789abcdef01234567/README.md"
    );
    assert_eq!(models[1]["name"], "demo-model/weights");
    assert_eq!(
        models[1]["purl"],
        "pkg:huggingface/demo-org/demo-model@0123456789abcdef0123456789abcdef01234567#weights"
    );
    assert_eq!(
        m["modelCard"]["modelParameters"]["datasets"][0]["classification"],
        "unknown"
    );
    let data: Vec<&Value> = doc["components"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["type"] == "data")
        .collect();
    assert_eq!(data.len(), 2);
    assert_eq!(doc["metadata"]["component"]["name"], "demo-model");
    assert_eq!(doc["metadata"]["supplier"]["name"], "demo-org");
    assert_eq!(doc["metadata"]["lifecycles"][0]["phase"], "build");
}

#[test]
fn sbom_gives_a_git_clone_of_a_hub_repository_a_huggingface_purl() {
    let dir = tempfile::tempdir().unwrap();
    odd_tree(dir.path());
    let mut report = odd_report(dir.path());
    report.repository.remove("huggingface");
    if let Some(g) = report.git.as_mut() {
        g.remote = Some("https://huggingface.co/acme/tiny-bert".into());
    }
    let bom = cyclonedx::build(&report, &fixed_opts());
    let doc: Value = serde_json::from_slice(&render_sbom(&bom, SbomFormat::Json)).unwrap();
    let purl = "pkg:huggingface/acme/tiny-bert@89abcdef0123456789abcdef0123456789abcdef";
    assert_eq!(doc["metadata"]["component"]["purl"], purl);
    assert_eq!(doc["components"][0]["purl"], purl);
}

#[test]
fn verify_checks_sha512_and_refuses_an_sbom_without_digests() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    odd_tree(&root);
    let sbom = dir.path().join("model.cdx.json");
    sbom_file_for(&root, &sbom, &odd_report(&root), SbomFormat::Json);
    assert!(verify::verify(&sbom, &root, 1).unwrap().is_clean());

    // Same SHA-256 recorded, a different SHA-512: the file does not verify. Only the
    // `config.json` entry is edited (`link-in.json`, a link to it, records the same digest).
    let text = fs::read_to_string(&sbom).unwrap();
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    let target = format!(
        "{:x}",
        sha2::Sha512::digest(fs::read(root.join("config.json")).unwrap())
    );
    let mut edited = doc.clone();
    let mut n = 0;
    edit_file_hash(
        &mut edited,
        "config.json",
        &target,
        &"0".repeat(128),
        &mut n,
    );
    assert_eq!(n, 1);
    let edited = edited.to_string();
    fs::write(&sbom, &edited).unwrap();
    let v = verify::verify(&sbom, &root, 1).unwrap();
    assert_eq!(v.modified.len(), 1, "{v:?}");
    assert_eq!(v.modified[0].reason, "sha512-mismatch");

    // A 1.6 document is read too.
    doc["specVersion"] = json!("1.6");
    fs::write(&sbom, doc.to_string()).unwrap();
    assert!(verify::verify(&sbom, &root, 1).unwrap().is_clean());

    // No digest for a file: refused.
    let stripped = doc.to_string().replace("\"hashes\"", "\"_hashes\"");
    fs::write(&sbom, stripped).unwrap();
    let err = verify::verify(&sbom, &root, 1).unwrap_err();
    assert!(err.to_string().contains("no digest"), "{err}");
}

/// Replaces the hash `from` with `to` in the file component whose `modelgate:path` is `path`.
fn edit_file_hash(v: &mut Value, path: &str, from: &str, to: &str, n: &mut usize) {
    if let Some(cs) = v.get_mut("components").and_then(Value::as_array_mut) {
        for c in cs {
            let is_it = c["properties"].as_array().is_some_and(|ps| {
                ps.iter()
                    .any(|p| p["name"] == "modelgate:path" && p["value"] == path)
            });
            if is_it && c["type"] == "file" {
                for h in c["hashes"].as_array_mut().into_iter().flatten() {
                    if h["content"] == from {
                        h["content"] = json!(to);
                        *n += 1;
                    }
                }
            }
            edit_file_hash(c, path, from, to, n);
        }
    }
}

/// `scan --sbom` then `verify` on the same tree, both through the binary.
fn scan_then_verify(root: &Path, extra: &[&str]) -> (Value, std::process::Output) {
    let out_dir = tempfile::tempdir().unwrap();
    let sbom = out_dir.path().join("m.cdx.json");
    let scan = crate::support::modelgate()
        .arg("scan")
        .arg(root)
        .args(["--fail-on", "never", "--sbom"])
        .arg(&sbom)
        .args(extra)
        .output()
        .unwrap();
    assert!(
        scan.status.success(),
        "{}",
        String::from_utf8_lossy(&scan.stderr)
    );
    let doc: Value = serde_json::from_slice(&fs::read(&sbom).unwrap()).unwrap();
    let verify = crate::support::modelgate()
        .args(["verify", "--sbom"])
        .arg(&sbom)
        .arg(root)
        .output()
        .unwrap();
    (doc, verify)
}

#[test]
fn verify_round_trips_on_an_hf_cache_repo_and_snapshot() {
    let repo = crate::support::Repo::new();
    let content = b"{\"model_type\": \"bert\"}";
    let blob = crate::support::sha256_hex(content);
    let commit = "0123456789abcdef0123456789abcdef01234567";
    let base = "models--org--name";
    repo.file(&format!("{base}/blobs/{blob}"), content)
        .file(&format!("{base}/refs/main"), commit)
        .symlink(
            &format!("{base}/snapshots/{commit}/config.json"),
            &format!("../../blobs/{blob}"),
        );
    for root in [
        repo.abs(base),
        repo.abs(&format!("{base}/snapshots/{commit}")),
    ] {
        let (doc, v) = scan_then_verify(&root, &["--hash", "sha512"]);
        assert!(
            v.status.success(),
            "{}\n{}",
            String::from_utf8_lossy(&v.stdout),
            String::from_utf8_lossy(&v.stderr)
        );
        let text = doc.to_string();
        assert!(
            !text.contains(&format!("/snapshots/{commit}/snapshots/")),
            "{text}"
        );
    }
}

#[test]
fn verify_round_trips_on_a_tree_with_an_lfs_pointer() {
    let repo = crate::support::Repo::new();
    repo.file("README.md", "---\nlicense: mit\n---\n")
        .file("big.bin", lfs_pointer());
    let (_, v) = scan_then_verify(repo.path(), &["--no-git"]);
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stdout));
}

#[test]
fn verify_round_trips_on_a_git_repository_of_a_hub_model() {
    let repo = crate::support::Repo::new();
    repo.file("README.md", "---\nlicense: mit\n---\n# m\n")
        .file("config.json", "{\"model_type\": \"bert\"}")
        .file(
            "model.safetensors",
            crate::support::safetensors(&[("w", "F32", &[1], &[0; 4])], None),
        );
    let commit = crate::git_commit_all(repo.path());
    git2::Repository::open(repo.path())
        .unwrap()
        .remote("origin", "https://huggingface.co/acme/tiny")
        .unwrap();
    let (doc, v) = scan_then_verify(repo.path(), &[]);
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stdout));
    assert_eq!(
        doc["metadata"]["component"]["purl"],
        format!("pkg:huggingface/acme/tiny@{commit}")
    );
}

#[test]
fn sarif_suppresses_allowed_findings_and_gives_binary_files_no_line() {
    let dir = tempfile::tempdir().unwrap();
    odd_tree(dir.path());
    let mut report = odd_report(dir.path());
    for f in report.findings.iter_mut() {
        if f.path == "big.bin" {
            f.action = Action::Allow;
            f.exception = Some("pulled in CI".into());
        }
    }
    let mut out = Vec::new();
    sarif::render(&report, &mut out).unwrap();
    let doc: Value = serde_json::from_slice(&out).unwrap();
    assert_valid(&sarif_validator(), &doc, "sarif");
    let run = &doc["runs"][0];
    assert!(run.get("automationDetails").is_none());
    let results = run["results"].as_array().unwrap();
    let lfs = results.iter().find(|r| r["ruleId"] == "LFS001").unwrap();
    assert_eq!(lfs["suppressions"][0]["kind"], "external");
    assert_eq!(lfs["suppressions"][0]["status"], "accepted");
    assert_eq!(lfs["suppressions"][0]["justification"], "pulled in CI");
    let dirty = results.iter().find(|r| r["ruleId"] == "PRV002").unwrap();
    assert!(dirty["suppressions"].is_array());
    let pkl = results.iter().find(|r| r["ruleId"] == "PKL001").unwrap();
    assert!(pkl.get("suppressions").is_none());
    let region = &pkl["locations"][0]["physicalLocation"]["region"];
    assert_eq!(region["byteOffset"], 2);
    assert!(region.get("startLine").is_none());

    let mut out = Vec::new();
    sarif::render_with_category(&report, Some("models"), &mut out).unwrap();
    let doc: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(
        doc["runs"][0]["automationDetails"]["id"],
        "modelgate/models/"
    );
}

fn scan_sbom(root: &Path, extra: &[&str]) -> Value {
    let out_dir = tempfile::tempdir().unwrap();
    let sbom = out_dir.path().join("m.cdx.json");
    let out = crate::support::modelgate()
        .arg("scan")
        .arg(root)
        .args(["--fail-on", "never", "--no-git", "--sbom"])
        .arg(&sbom)
        .args(extra)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&fs::read(&sbom).unwrap()).unwrap();
    assert_valid(&cyclonedx_validator(), &doc, "sbom");
    doc
}

/// The refs the SBOM's `dependencies` entry for `r` depends on (the entry must exist).
fn depends_on(doc: &Value, r: &str) -> Vec<String> {
    doc["dependencies"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["ref"] == r)
        .unwrap_or_else(|| panic!("no dependency entry for {r}"))["dependsOn"]
        .as_array()
        .map(|a| a.iter().map(|v| v.as_str().unwrap().to_string()).collect())
        .unwrap_or_default()
}

fn models(doc: &Value) -> Vec<&Value> {
    doc["components"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["type"] == "machine-learning-model")
        .collect()
}

/// A `.npz` holding one `<f4` array of one element (a zip of one `.npy`).
fn npz_one_float() -> Vec<u8> {
    let mut header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }".to_string();
    while !(10 + header.len() + 1).is_multiple_of(64) {
        header.push(' ');
    }
    header.push('\n');
    let mut npy = b"\x93NUMPY\x01\x00".to_vec();
    npy.extend((header.len() as u16).to_le_bytes());
    npy.extend(header.as_bytes());
    npy.extend([0u8; 4]);
    crate::support::zip_stored(&[("mel_80.npy", &npy)])
}

#[test]
fn sbom_keeps_module_folders_and_assets_inside_their_model() {
    // A sentence-transformers layout: `1_Pooling` (a config only) and `2_Dense` (its own
    // weights and config) are modules of the root model; `assets/` holds mel filters (npz);
    // a Core ML spec is recorded as Core ML.
    let st = crate::support::safetensors(&[("w", "F32", &[1], &[0; 4])], None);
    let repo = crate::support::Repo::new();
    repo.file("README.md", "---\nlicense: mit\n---\n# m\n")
        .file("config.json", "{\"model_type\": \"bert\"}")
        .file("model.safetensors", &st)
        .file(
            "1_Pooling/config.json",
            "{\"pooling_mode_mean_tokens\": true}",
        )
        .file("2_Dense/config.json", "{\"in_features\": 4}")
        .file("2_Dense/model.safetensors", &st)
        .file("assets/mel_filters.npz", npz_one_float())
        .file("coreml/model.mlmodel", b"\x08\x04\x12\x04\x0a\x02\x0a\x00");
    let doc = scan_sbom(repo.path(), &[]);
    let ms = models(&doc);
    let names: Vec<String> = ms
        .iter()
        .map(|m| m["properties"][0]["value"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, ["", "coreml"], "model directories: {ms:?}");
    let mut files = BTreeMap::new();
    sbom_files(ms[0], &mut files);
    for p in [
        "1_Pooling/config.json",
        "2_Dense/model.safetensors",
        "assets/mel_filters.npz",
    ] {
        assert!(
            files.contains_key(p),
            "{p} not in the root model: {:?}",
            files.keys()
        );
    }
    let mut files = BTreeMap::new();
    sbom_files(ms[1], &mut files);
    let coreml = files["coreml/model.mlmodel"]["properties"].to_string();
    assert!(coreml.contains("\"coreml\""), "{coreml}");
}

#[test]
fn sbom_records_base_models_metrics_limitations_and_the_supplier() {
    let card = "---\nlicense: mit\nbase_model: google-bert/bert-base-uncased\ndatasets:\n- acme/reviews\npipeline_tag: text-classification\nmodel-index:\n- name: m\n  results:\n  - task: {type: text-classification}\n    dataset: {name: Reviews, type: acme/reviews, split: test}\n    metrics:\n    - {type: accuracy, value: 0.91}\n---\n# m\n\n## Limitations\n\nEnglish reviews only.\n";
    let repo = crate::support::Repo::new();
    repo.file("README.md", card)
        .file("config.json", "{\"model_type\": \"bert\"}")
        .file(
            "model.safetensors",
            crate::support::safetensors(&[("w", "F32", &[1], &[0; 4])], None),
        )
        .file("notes/extra.txt", "x\n");
    let doc = scan_sbom(
        repo.path(),
        &[
            "--sbom-supplier",
            "Acme Corp",
            "--sbom-supplier-url",
            "https://acme.example/security",
            "--sbom-author",
            "Jane Doe",
        ],
    );
    let m = models(&doc)[0].clone();
    let card = &m["modelCard"];
    let metric = &card["quantitativeAnalysis"]["performanceMetrics"][0];
    assert_eq!(metric["type"], "accuracy");
    assert_eq!(metric["value"], "0.91");
    assert_eq!(metric["slice"], "Reviews / test / text-classification");
    assert_eq!(card["modelParameters"]["inputs"][0]["format"], "text");
    assert_eq!(card["modelParameters"]["outputs"][0]["format"], "label");
    assert_eq!(card["properties"][0]["value"], "English reviews only.");
    assert_eq!(m["supplier"]["name"], "Acme Corp");

    // The base model is the model's pedigree ancestor, with its Hub identity.
    let base = &m["pedigree"]["ancestors"][0];
    assert_eq!(base["name"], "bert-base-uncased");
    assert_eq!(base["group"], "google-bert");
    assert_eq!(
        base["purl"],
        "pkg:huggingface/google-bert/bert-base-uncased"
    );
    assert_eq!(base["supplier"]["name"], "google-bert");
    assert!(base.get("bom-ref").is_none());

    // Every ref in the graph names a component, and every top-level component has a supplier.
    let mut refs = std::collections::BTreeSet::new();
    fn collect(v: &Value, refs: &mut std::collections::BTreeSet<String>) {
        for c in v["components"].as_array().into_iter().flatten() {
            if let Some(r) = c["bom-ref"].as_str() {
                refs.insert(r.to_string());
            }
            collect(c, refs);
        }
    }
    collect(&doc, &mut refs);
    refs.insert("repository".into());
    for d in doc["dependencies"].as_array().unwrap() {
        assert!(refs.contains(d["ref"].as_str().unwrap()), "{d}");
        for r in d["dependsOn"].as_array().into_iter().flatten() {
            assert!(refs.contains(r.as_str().unwrap()), "{r}");
        }
    }
    for c in doc["components"].as_array().unwrap() {
        assert!(c["supplier"]["name"].is_string(), "no supplier: {c}");
    }
    assert_eq!(doc["metadata"]["supplier"]["name"], "Acme Corp");
    assert_eq!(
        doc["metadata"]["supplier"]["url"][0],
        "https://acme.example/security"
    );
    assert_eq!(doc["metadata"]["authors"][0]["name"], "Jane Doe");
}

#[test]
fn an_adapters_base_model_is_a_dependency_of_the_adapter() {
    // Two LoRA adapters of the same base, and a full fine-tune of another base. Only adapters
    // load their base at run time; the base appears once however many adapters name it.
    let card = |base: &str| {
        format!("---\nlicense: mit\nbase_model: {base}\nlibrary_name: peft\n---\n# a\n")
    };
    let st = crate::support::safetensors(&[("w", "F32", &[1], &[0; 4])], None);
    let repo = crate::support::Repo::new();
    repo.file("a/README.md", card("meta-llama/Llama-3.1-8B"))
        .file("a/adapter_config.json", "{\"peft_type\": \"LORA\"}")
        .file("a/adapter_model.safetensors", st.clone())
        .file("b/adapter_config.json", "{\"peft_type\": \"LORA\"}")
        .file(
            "b/README.md",
            "---\nbase_model: meta-llama/Llama-3.1-8B\n---\n# b\n",
        )
        .file("b/adapter_model.safetensors", st.clone())
        .file(
            "ft/README.md",
            "---\nbase_model: google-bert/bert-base-uncased\n---\n# ft\n",
        )
        .file("ft/config.json", "{\"model_type\": \"bert\"}")
        .file("ft/model.safetensors", st);
    let doc = scan_sbom(repo.path(), &[]);
    let base_ref = "base-model:meta-llama/Llama-3.1-8B";
    let tops: Vec<&Value> = doc["components"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["bom-ref"] == base_ref)
        .collect();
    assert_eq!(tops.len(), 1, "one component per base model");
    assert_eq!(tops[0]["type"], "machine-learning-model");
    assert_eq!(tops[0]["name"], "Llama-3.1-8B");
    assert_eq!(tops[0]["group"], "meta-llama");
    assert_eq!(tops[0]["purl"], "pkg:huggingface/meta-llama/Llama-3.1-8B");
    assert_eq!(tops[0]["supplier"]["name"], "meta-llama");

    let deps = doc["dependencies"].as_array().unwrap();
    let edges = |r: &str| depends_on(&doc, r);
    // Both adapters depend on it, by the card's `library_name` or by their adapter config.
    assert!(edges("model:a").contains(&base_ref.to_string()));
    assert!(edges("model:b").contains(&base_ref.to_string()));
    // The fine-tune's base stays its pedigree ancestor only.
    assert!(
        !edges("model:ft")
            .iter()
            .any(|r| r.starts_with("base-model:"))
    );
    assert!(
        !doc["components"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["bom-ref"] == "base-model:google-bert/bert-base-uncased")
    );
    let ft = models(&doc)
        .into_iter()
        .find(|m| m["bom-ref"] == "model:ft")
        .unwrap();
    assert_eq!(
        ft["pedigree"]["ancestors"][0]["purl"],
        "pkg:huggingface/google-bert/bert-base-uncased"
    );
    // Only named: its content is not in this BOM.
    let unknown = doc["compositions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["aggregate"] == "unknown")
        .unwrap();
    assert!(unknown["assemblies"].to_string().contains(base_ref));
    // The graph names it as a node like every other component.
    assert!(deps.iter().any(|d| d["ref"] == base_ref));
}

#[test]
fn sarif_category_sets_the_automation_id_from_the_command_line() {
    let repo = crate::support::Repo::new();
    repo.file("README.md", "# x\n");
    let out_dir = tempfile::tempdir().unwrap();
    let sarif = out_dir.path().join("r.sarif");
    let out = crate::support::modelgate()
        .arg("scan")
        .arg(repo.path())
        .args(["--fail-on", "never", "--no-git", "--sarif"])
        .arg(&sarif)
        .args(["--sarif-category", "models"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&fs::read(&sarif).unwrap()).unwrap();
    assert_valid(&sarif_validator(), &doc, "sarif");
    assert_eq!(
        doc["runs"][0]["automationDetails"]["id"],
        "modelgate/models/"
    );
}

/// `--sbom-spec 1.6` writes a document the official 1.6 schema accepts, with the same
/// components as the 1.5 one; `verify` reads it back; XML 1.6 is refused, not faked.
#[test]
fn sbom_spec_1_6_is_schema_valid_and_verifies() {
    let repo = crate::support::Repo::new();
    repo.file("README.md", "---\nlicense: mit\n---\n# m\n");
    repo.file("config.json", "{}");
    repo.file(
        "model.safetensors",
        crate::support::safetensors(&[("w", "F32", &[1], &[0, 0, 128, 63])], None),
    );
    let out_dir = tempfile::tempdir().unwrap();
    let [(_, doc15), (v16, doc16)] = sbom_docs(repo.path(), out_dir.path(), ["1.5", "1.6"], &[]);
    assert_eq!(doc16["specVersion"], "1.6");
    assert_eq!(
        doc16["$schema"],
        "http://cyclonedx.org/schema/bom-1.6.schema.json"
    );
    assert_eq!(doc16["metadata"]["manufacturer"]["name"], "Acme");
    assert_valid(&cyclonedx_1_6_validator(), &doc16, "the 1.6 SBOM");
    assert_eq!(doc15["components"], doc16["components"]);
    assert_eq!(doc15["dependencies"], doc16["dependencies"]);
    assert_verify_exits(&v16, repo.path(), 0);

    assert_xml_sbom_refused(repo.path(), out_dir.path(), "1.6");
}

/// `--sbom-spec 1.7` writes a document the official 1.7 schema accepts, with the same
/// components and graph as the 1.5 one; `verify` reads it back; XML 1.7 is refused.
#[test]
fn sbom_spec_1_7_is_schema_valid_and_verifies() {
    let repo = crate::support::Repo::new();
    repo.file(
        "README.md",
        "---\nlicense: mit\ndatasets:\n- org/corpus\n---\n# m\n",
    );
    repo.file("config.json", "{\"model_type\": \"bert\"}");
    repo.file(
        "model.safetensors",
        crate::support::safetensors(&[("w", "F32", &[1], &[0, 0, 128, 63])], None),
    );
    repo.file("extra/notes.txt", "x");
    let out_dir = tempfile::tempdir().unwrap();
    let [(_, doc15), (v17, doc17)] = sbom_docs(
        repo.path(),
        out_dir.path(),
        ["1.5", "1.7"],
        &["--sbom-version", "2.1.0"],
    );
    assert_eq!(doc17["specVersion"], "1.7");
    assert_eq!(
        doc17["$schema"],
        "http://cyclonedx.org/schema/bom-1.7.schema.json"
    );
    assert_eq!(doc17["metadata"]["component"]["version"], "2.1.0");
    assert_eq!(doc17["metadata"]["manufacturer"]["name"], "Acme");
    assert_valid(&cyclonedx_1_7_validator(), &doc17, "the 1.7 SBOM");
    // The 1.7 schema is not a rubber stamp: a 1.7 document with a field of the wrong type fails.
    let mut broken = doc17.clone();
    broken["metadata"]["component"]["version"] = json!(2);
    assert!(!cyclonedx_1_7_validator().is_valid(&broken));
    assert_eq!(doc15["components"], doc17["components"]);
    assert_eq!(doc15["dependencies"], doc17["dependencies"]);
    assert_verify_exits(&v17, repo.path(), 0);
    // verify reads the 1.7 document, not just its header: a changed file fails it.
    repo.file("config.json", "{\"model_type\": \"gpt2\"}");
    assert_verify_exits(&v17, repo.path(), 1);

    assert_xml_sbom_refused(repo.path(), out_dir.path(), "1.7");
}

/// The SBOM version of the released model: `--sbom-version` on a plain folder; on a git tree
/// the tag on HEAD (when the tree is clean), else the commit; the flag wins over a tag. The
/// pedigree keeps the commit either way.
#[test]
fn sbom_version_comes_from_the_flag_then_the_tag_then_the_commit() {
    let sbom_of = |root: &std::path::Path, extra: &[&str]| -> Value {
        let out = tempfile::tempdir().unwrap();
        let path = out.path().join("bom.json");
        let o = crate::support::modelgate()
            .arg("scan")
            .arg(root)
            .args(["--fail-on", "never", "-o", "/dev/null", "--sbom"])
            .arg(&path)
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let doc: Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
        assert_valid(&cyclonedx_validator(), &doc, "the SBOM");
        doc
    };
    let repo = crate::support::Repo::new();
    repo.file("README.md", "# m\n");
    repo.file(
        "model.safetensors",
        crate::support::safetensors(&[("w", "F32", &[1], &[0, 0, 128, 63])], None),
    );

    // A plain folder: no version unless the release says it.
    let doc = sbom_of(repo.path(), &["--no-git"]);
    assert_eq!(doc["metadata"]["component"].get("version"), None);
    let doc = sbom_of(repo.path(), &["--no-git", "--sbom-version", " 1.4.0 "]);
    assert_eq!(doc["metadata"]["component"]["version"], "1.4.0");

    // Committed, no tag: the commit.
    let commit = crate::git_commit_all(repo.path());
    let doc = sbom_of(repo.path(), &[]);
    assert_eq!(doc["metadata"]["component"]["version"], commit.as_str());

    // Tagged: the tag (the highest version among several), the commit stays in the pedigree.
    let git = git2::Repository::open(repo.path()).unwrap();
    let head = git.head().unwrap().peel_to_commit().unwrap();
    git.tag_lightweight("v1.9.0", head.as_object(), false)
        .unwrap();
    let sig =
        git2::Signature::new("t", "t@example.com", &git2::Time::new(1_700_000_000, 0)).unwrap();
    git.tag("v1.10.0", head.as_object(), &sig, "release", false)
        .unwrap();
    let doc = sbom_of(repo.path(), &[]);
    let meta = &doc["metadata"]["component"];
    assert_eq!(meta["version"], "v1.10.0");
    assert_eq!(meta["pedigree"]["commits"][0]["uid"], commit.as_str());

    // The flag wins over the tag.
    let doc = sbom_of(repo.path(), &["--sbom-version", "1.10.0-rc1"]);
    assert_eq!(doc["metadata"]["component"]["version"], "1.10.0-rc1");

    // A dirty tree is not the tagged release: back to the commit.
    repo.file("README.md", "# changed\n");
    let doc = sbom_of(repo.path(), &[]);
    assert_eq!(doc["metadata"]["component"]["version"], commit.as_str());
}

/// `--sbom-author-from-git` names the HEAD commit's author, with the email, in `metadata.authors`.
#[test]
fn sbom_author_from_git_names_the_head_commit_author() {
    let repo = crate::support::Repo::new();
    repo.file("README.md", "# m\n");
    repo.file(
        "model.safetensors",
        crate::support::safetensors(&[("w", "F32", &[1], &[0, 0, 128, 63])], None),
    );
    crate::git_commit_all(repo.path());
    let sbom = repo.path().join("../x.cdx.json");
    let o = crate::support::modelgate()
        .arg("scan")
        .arg(repo.path())
        .args([
            "--sbom-author",
            "Release Bot",
            "--sbom-author-from-git",
            "--sbom",
        ])
        .arg(&sbom)
        .output()
        .unwrap();
    assert!(o.status.code() == Some(0) || o.status.code() == Some(1));
    let doc: Value = serde_json::from_slice(&fs::read(&sbom).unwrap()).unwrap();
    let authors = &doc["metadata"]["authors"];
    assert_eq!(authors[0]["name"], "Release Bot");
    assert_eq!(authors[1]["name"], "t");
    assert_eq!(authors[1]["email"], "t@example.com");
    assert_valid(&cyclonedx_validator(), &doc, "the SBOM");
    let _ = fs::remove_file(&sbom);

    let plain = tempfile::tempdir().unwrap();
    let o = crate::support::modelgate()
        .arg("scan")
        .arg(plain.path())
        .args(["--sbom-author-from-git", "--sbom"])
        .arg(plain.path().join("x.json"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no HEAD commit author"));
}

/// `--sbom-spec SPEC --sbom-format xml` is a usage error (exit 2): specs after 1.5 are JSON only.
/// JSON SBOMs of `root` in each of `specs` (with supplier `Acme`, `extra` flags and a fixed
/// `SOURCE_DATE_EPOCH`), written under `out`: each one's path and document.
fn sbom_docs<const N: usize>(
    root: &std::path::Path,
    out: &std::path::Path,
    specs: [&str; N],
    extra: &[&str],
) -> [(std::path::PathBuf, Value); N] {
    specs.map(|spec| {
        let path = out.join(format!("{spec}.cdx.json"));
        let o = crate::support::modelgate()
            .arg("scan")
            .arg(root)
            .args(["--no-git", "--sbom-supplier", "Acme"])
            .args(extra)
            .args(["--sbom-spec", spec, "--sbom"])
            .arg(&path)
            .env("SOURCE_DATE_EPOCH", "1700000000")
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let doc = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
        (path, doc)
    })
}

/// `modelgate verify --sbom SBOM ROOT` exits with `code`.
fn assert_verify_exits(sbom: &std::path::Path, root: &std::path::Path, code: i32) {
    let o = crate::support::modelgate()
        .args(["verify", "--sbom"])
        .arg(sbom)
        .arg(root)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(code),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

fn assert_xml_sbom_refused(root: &std::path::Path, out: &std::path::Path, spec: &str) {
    let o = crate::support::modelgate()
        .arg("scan")
        .arg(root)
        .args([
            "--no-git",
            "--sbom-spec",
            spec,
            "--sbom-format",
            "xml",
            "--sbom",
        ])
        .arg(out.join("c.cdx.xml"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains(&format!("{spec} is written as JSON only")),
        "{stderr}"
    );
}
