//! Issue 39: the whole standard library, classified. Gadgets are generated from the
//! classification table itself (`knowledge::stdlib::ROWS`): for every capability row, a pickle
//! that calls one of its callables, chosen as the *last* public callable the inventory lists for
//! the module (an obscure one no other test or list names: `subprocess.list2cmdline`,
//! `faulthandler.unregister`, `resource.setrlimit`), or the row's own callable. Each is scanned
//! as a plain pickle and inside a PyTorch zip archive, and each must be denied (PKL001) with the
//! row's class. Benign twins (values a model file pickles) must pass.

use crate::support::*;
use modelgate::knowledge::stdlib::{Class, ROWS, callables_of};
use serde_json::Value;

/// (module, callable, class) for every capability row of the table.
fn gadgets() -> Vec<(String, String, Class)> {
    let mut out = Vec::new();
    for row in ROWS.iter().filter(|r| r.class != Class::Value) {
        let (module, name) = if row.module {
            let own = callables_of(row.name);
            let name = own.last().copied().unwrap_or("gadget");
            (row.name.to_owned(), name.to_owned())
        } else {
            let (m, n) = row.name.rsplit_once('.').expect("a qualified callable");
            (m.to_owned(), n.to_owned())
        };
        out.push((module, name, row.class));
    }
    out
}

/// A PyTorch zip checkpoint whose `data.pkl` is `pickle`.
fn torch_archive(pickle: &[u8]) -> Vec<u8> {
    zip_stored(&[("archive/data.pkl", pickle), ("archive/version", b"3\n")])
}

fn denied_global<'a>(r: &'a Value, path: &str) -> Option<&'a Value> {
    r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == path && f["rule"] == "PKL001" && f["action"] == "deny")
}

#[test]
fn every_capability_row_of_the_stdlib_table_is_denied_issue_39() {
    let gadgets = gadgets();
    assert!(gadgets.len() > 150, "{}", gadgets.len());
    let repo = Repo::new();
    for (i, (module, name, _)) in gadgets.iter().enumerate() {
        let p = pickle_call(module, name, "x");
        repo.file(&format!("g{i:03}.pkl"), &p);
        repo.file(&format!("g{i:03}.pt"), torch_archive(&p));
    }
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1);
    let mut missed = Vec::new();
    for (i, (module, name, class)) in gadgets.iter().enumerate() {
        for path in [format!("g{i:03}.pkl"), format!("g{i:03}.pt")] {
            match denied_global(&r, &path) {
                Some(f) => {
                    let message = f["message"].as_str().unwrap_or_default();
                    assert!(message.contains("calls"), "{path}: {message}");
                }
                None => missed.push(format!("{path}: {module}.{name} ({})", class.code())),
            }
        }
    }
    assert!(missed.is_empty(), "not denied: {missed:#?}");
}

#[test]
fn the_interpreter_state_and_denial_of_service_classes_name_themselves_issue_39() {
    // Callables no earlier list knew: each was a PKL002 warning before the table.
    let repo = Repo::new();
    for (file, module, name) in [
        ("limits.pkl", "resource", "setrlimit"),
        ("faults.pkl", "faulthandler", "dump_traceback_later"),
        ("sleep.pkl", "time", "sleep"),
        ("bomb.pkl", "zlib", "decompress"),
        ("codec.pkl", "codecs", "register"),
    ] {
        repo.file(file, pickle_call(module, name, "x"));
    }
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1);
    for (file, category) in [
        ("limits.pkl", "interpreter-state"),
        ("faults.pkl", "interpreter-state"),
        ("sleep.pkl", "denial-of-service"),
        ("bomb.pkl", "denial-of-service"),
        ("codec.pkl", "interpreter-state"),
    ] {
        let f = denied_global(&r, file).unwrap_or_else(|| panic!("{file}: {:#}", r["findings"]));
        assert_eq!(f["evidence"]["category"], category, "{file}: {f:#}");
    }
}

#[test]
fn stdlib_values_a_model_file_pickles_pass_issue_39() {
    let repo = Repo::new();
    let twins = [
        ("dataclasses", "field"),
        ("enum", "Enum"),
        ("pathlib", "PurePosixPath"),
        ("pathlib", "PosixPath"),
        ("argparse", "Namespace"),
        ("argparse", "ArgumentParser"),
        ("datetime", "date"),
        ("datetime", "timedelta"),
        ("uuid", "UUID"),
        ("fractions", "Fraction"),
        ("decimal", "Decimal"),
        ("collections", "OrderedDict"),
        ("collections", "namedtuple"),
        ("types", "SimpleNamespace"),
        ("re", "_compile"),
        ("array", "_array_reconstructor"),
        ("ipaddress", "IPv4Address"),
        ("zoneinfo", "ZoneInfo"),
        ("http", "HTTPStatus"),
        ("json", "loads"),
        ("copy", "deepcopy"),
        ("logging", "getLogger"),
    ];
    for (i, (module, name)) in twins.iter().enumerate() {
        let p = pickle_call(module, name, "x");
        repo.file(&format!("t{i:02}.pkl"), &p);
        repo.file(&format!("t{i:02}.pt"), torch_archive(&p));
    }
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 0, "{:#}", r["findings"]);
    let warned: Vec<&Value> = findings(&r, "PKL002");
    assert!(warned.is_empty(), "{warned:#?}");
    assert!(findings(&r, "PKL001").is_empty(), "{:#}", r["findings"]);
}

/// Callables of packages whose purpose is to act on the world, none named by a verb: each is
/// denied with the package's capability (issue 39, "judged by purpose").
const PURPOSE_GADGETS: &[(&str, &str, &str)] = &[
    ("pygit2", "Repository", "process-execution"),
    ("hglib", "open", "process-execution"),
    ("git", "Repo.clone_from", "process-execution"),
    ("dulwich.porcelain", "clone", "process-execution"),
    ("docker", "from_env", "process-execution"),
    ("nomad", "Nomad", "process-execution"),
    ("kubernetes.stream", "stream", "process-execution"),
    ("asyncssh", "connect", "process-execution"),
    ("fabric", "Connection", "process-execution"),
    ("invoke", "Context", "process-execution"),
    ("boto3", "client", "network"),
    ("google.cloud.storage", "Client", "network"),
    ("s3fs", "S3FileSystem", "network"),
    ("grpc", "insecure_channel", "network"),
    ("pika", "BlockingConnection", "network"),
    ("zmq", "Context", "network"),
    ("selenium.webdriver", "Chrome", "process-execution"),
    (
        "playwright.sync_api",
        "sync_playwright",
        "process-execution",
    ),
    ("celery", "Celery", "network"),
    (
        "apscheduler.schedulers.background",
        "BackgroundScheduler",
        "persistence",
    ),
    ("yt_dlp", "YoutubeDL", "network"),
    ("conda.cli.main", "main_subshell", "package-install"),
    (
        "poetry.console.application",
        "Application",
        "package-install",
    ),
];

#[test]
fn packages_whose_purpose_is_to_act_are_denied_whatever_the_name_issue_39() {
    let repo = Repo::new();
    for (i, (module, name, _)) in PURPOSE_GADGETS.iter().enumerate() {
        let p = pickle_call(module, name, "x");
        repo.file(&format!("p{i:02}.pkl"), &p);
        repo.file(&format!("p{i:02}.pt"), torch_archive(&p));
    }
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1);
    for (i, (module, name, capability)) in PURPOSE_GADGETS.iter().enumerate() {
        for path in [format!("p{i:02}.pkl"), format!("p{i:02}.pt")] {
            let f = denied_global(&r, &path)
                .unwrap_or_else(|| panic!("{path} ({module}.{name}): {:#}", r["findings"]));
            assert_eq!(f["evidence"]["category"], *capability, "{f:#}");
            assert!(
                f["message"]
                    .as_str()
                    .unwrap_or_default()
                    .contains("package docs"),
                "{f:#}"
            );
        }
    }
}

#[test]
fn a_config_target_in_a_purpose_package_is_denied_issue_39() {
    let repo = Repo::new();
    repo.file("README.md", "---\nlicense: mit\n---\n")
        .file("model.safetensors", safetensors(&[], None))
        .file(
            "model_config.yaml",
            "runner:\n  _target_: docker.DockerClient\n  base_url: tcp://10.0.0.1:2375\n",
        );
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1, "{:#}", r["findings"]);
    let f = findings(&r, "CFG001");
    assert_eq!(f.len(), 1, "{:#}", r["findings"]);
    assert_eq!(f[0]["action"], "deny");
    assert_eq!(
        f[0]["evidence"]["category"], "process-execution",
        "{:#}",
        f[0]
    );
}

#[test]
fn shipped_code_calling_a_purpose_package_is_a_behaviour_site_issue_39() {
    let repo = Repo::new();
    repo.file("m/config.json", r#"{"model_type": "tiny"}"#)
        .file(
            "m/model.safetensors",
            safetensors(&[("w", "F32", &[2], &[0u8; 8])], None),
        )
        .file("m/README.md", "---\nlicense: mit\n---\n# tiny\n")
        .file(
            "m/modeling_tiny.py",
            "import docker\n\ndef setup():\n    docker.from_env().containers.run('alpine', 'id')\n",
        );
    let (_, r) = scan_json(repo.path(), &[]);
    let sites: Vec<&Value> = findings(&r, "SRC006")
        .into_iter()
        .filter(|f| f["path"] == "m/modeling_tiny.py")
        .collect();
    assert!(
        sites
            .iter()
            .any(|f| f["evidence"]["capability"] == "process-execution"),
        "{:#}",
        r["findings"]
    );
}

#[test]
fn an_unknown_global_says_what_the_pickle_does_with_it_issue_39() {
    // Called by REDUCE, and only stored (a protocol-2 dict value): two messages.
    let called = b"\x80\x02cacme.widgets\nGizmo\nq\x00)Rq\x01.";
    let stored = b"\x80\x02}q\x00U\x01aq\x01cacme.widgets\nKind\nq\x02s.";
    let repo = Repo::new();
    repo.file("called.pkl", called).file("stored.pkl", stored);
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 0, "{:#}", r["findings"]);
    let message = |path: &str| {
        findings(&r, "PKL002")
            .into_iter()
            .find(|f| f["path"] == path)
            .and_then(|f| f["message"].as_str())
            .unwrap_or_default()
            .to_owned()
    };
    let m = message("called.pkl");
    assert!(m.contains("not on the safe list"), "{m}");
    assert!(
        m.contains("calls it with arguments it supplies (REDUCE)"),
        "{m}"
    );
    let m = message("stored.pkl");
    assert!(m.contains("only stores a reference"), "{m}");
}
