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
