//! Issue 31: native code and Python bytecode shipped with a model, from the binary: recognised
//! by content, their facts in the JSON report, SRC007 warned or denied by the default policy,
//! and bytecode judged like its source (SRC006) unless it matches the source beside it.

use crate::support::native as build;
use crate::support::*;
use serde_json::Value;

const OS_SYSTEM_PYC: &[u8] = include_bytes!("../fixtures/bytecode/os_system.cpython-311.pyc");
const OS_SYSTEM_PY: &[u8] = include_bytes!("../fixtures/bytecode/os_system.py");
const CLEAN_PY: &[u8] = include_bytes!("../fixtures/bytecode/clean.py");
const CLEAN_PYC: &[u8] = include_bytes!("../fixtures/bytecode/clean.cpython-311.pyc");

/// A model directory `m/` (config, weights, a card with a license) to put code into.
fn model_repo() -> Repo {
    let repo = Repo::new();
    repo.file("m/config.json", r#"{"model_type": "tiny"}"#)
        .file(
            "m/model.safetensors",
            safetensors(&[("w", "F32", &[2], &[0u8; 8])], None),
        )
        .file("m/README.md", "---\nlicense: mit\n---\n# tiny\n");
    repo
}

fn only<'a>(r: &'a Value, rule: &str, path: &str) -> &'a Value {
    let f: Vec<&Value> = findings(r, rule)
        .into_iter()
        .filter(|f| f["path"] == path)
        .collect();
    assert_eq!(f.len(), 1, "{rule} on {path}: {:#}", r["findings"]);
    f[0]
}

#[test]
fn a_library_whose_constructor_calls_system_is_denied_and_one_without_warns() {
    let (evil, plain) = (build::elf_constructor_system(), build::elf_plain_system());
    let repo = model_repo();
    repo.file("m/libkernels.so", &evil);
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1, "{:#}", r["findings"]);
    let f = only(&r, "SRC007", "m/libkernels.so");
    assert_eq!(
        (f["action"].as_str(), f["severity"].as_str()),
        (Some("deny"), Some("critical"))
    );
    assert_eq!(
        f["evidence"]["process_imports"],
        serde_json::json!(["system"])
    );
    let rec = file(&r, "m/libkernels.so");
    assert_eq!(
        (rec["format"].as_str(), rec["kind"].as_str()),
        (Some("elf"), Some("code"))
    );
    assert_eq!(rec["facts"]["native"]["kind"], "library");
    assert!(
        !rec["facts"]["native"]["initialisers"]
            .as_array()
            .unwrap()
            .is_empty()
    );

    let repo = model_repo();
    repo.file("m/libkernels.so", &plain);
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 0, "{:#}", r["findings"]);
    let f = only(&r, "SRC007", "m/libkernels.so");
    assert_eq!(
        (f["action"].as_str(), f["severity"].as_str()),
        (Some("warn"), Some("medium"))
    );
    // strict denies any native code in a model directory.
    let strict = concat!(env!("CARGO_MANIFEST_DIR"), "/policies/strict.toml");
    let (_, r) = scan_json(repo.path(), &["--policy", strict]);
    assert_eq!(only(&r, "SRC007", "m/libkernels.so")["action"], "deny");
}

#[test]
fn a_shipped_library_the_model_code_loads_that_imports_system_is_denied() {
    let plain = build::elf_plain_system();
    let repo = model_repo();
    repo.file("m/ops/libops.so", &plain).file(
        "m/modeling_tiny.py",
        "import ctypes, os\n_lib = ctypes.CDLL(os.path.join(os.path.dirname(__file__), 'ops', 'libops.so'))\n",
    );
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1, "{:#}", r["findings"]);
    let f = only(&r, "SRC007", "m/ops/libops.so");
    assert_eq!(f["action"], "deny");
    assert_eq!(f["evidence"]["loaded_by"][0]["path"], "m/modeling_tiny.py");
}

#[test]
fn mach_o_thin_and_fat_and_pe_are_recognised_under_any_name() {
    let repo = model_repo();
    repo.file("m/op_kernels", build::macho_dylib(0, &["_printf"], false))
        .file(
            "m/universal_ops",
            build::macho_fat(&[
                build::macho_dylib(0, &["_printf"], false),
                build::macho_dylib(1, &["_system"], false),
            ]),
        )
        .file(
            "m/helper.dll",
            build::pe_image(true, &["CreateProcessA", "GetTickCount"], true),
        )
        .file(
            "m/tool.exe",
            build::pe_image(false, &["GetTickCount"], false),
        );
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1, "{:#}", r["findings"]);
    let thin = file(&r, "m/op_kernels");
    assert_eq!(thin["format"], "mach-o");
    assert_eq!(thin["facts"]["native"]["architecture"], "x86_64");
    assert_eq!(only(&r, "SRC007", "m/op_kernels")["action"], "warn");
    let fat = file(&r, "m/universal_ops");
    assert_eq!(fat["facts"]["native"]["format"], "mach-o-fat");
    assert_eq!(
        fat["facts"]["native"]["slices"].as_array().unwrap().len(),
        2
    );
    assert_eq!(only(&r, "SRC007", "m/universal_ops")["action"], "deny");
    let dll = only(&r, "SRC007", "m/helper.dll");
    assert_eq!(
        (dll["action"].as_str(), dll["severity"].as_str()),
        (Some("deny"), Some("critical"))
    );
    assert_eq!(
        file(&r, "m/helper.dll")["facts"]["native"]["kind"],
        "library"
    );
    let exe = only(&r, "SRC007", "m/tool.exe");
    assert_eq!(exe["action"], "warn");
    assert_eq!(exe["evidence"]["kind"], "executable");
}

#[test]
fn hostile_object_files_are_findings_not_failures() {
    let repo = model_repo();
    let mut pe = build::pe_image(true, &["WinExec"], true);
    pe.truncate(0x180);
    let mut macho = build::macho_dylib(2, &["_system"], false);
    macho[16..20].copy_from_slice(&u32::MAX.to_le_bytes());
    let mut fat = build::macho_fat(&[build::macho_dylib(0, &[], false)]);
    fat[16..20].copy_from_slice(&0x7fff_0000u32.to_be_bytes());
    repo.file("m/cut.dll", &pe)
        .file("m/cmds.dylib", &macho)
        .file("m/fat.dylib", &fat);
    let (code, r) = scan_json(repo.path(), &[]);
    assert_ne!(code, 2, "a malformed scanned file is a finding");
    for p in ["m/cut.dll", "m/cmds.dylib", "m/fat.dylib"] {
        let rules = rules_on(&r, p);
        assert!(rules.contains(&"SRC007".to_string()), "{p}: {rules:?}");
        assert!(rules.contains(&"FMT007".to_string()), "{p}: {rules:?}");
    }
}

#[test]
fn native_code_outside_model_directories_is_not_src007() {
    let repo = Repo::new();
    repo.file("pkg/_native.so", build::macho_dylib(1, &["_system"], false))
        .file(
            "pkg/bin/tool.exe",
            build::pe_image(false, &["WinExec"], false),
        );
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 0, "{:#}", r["findings"]);
    assert!(findings(&r, "SRC007").is_empty());
    assert_eq!(file(&r, "pkg/_native.so")["format"], "mach-o");
}

#[test]
fn sourceless_bytecode_is_judged_like_its_source_would_be() {
    let repo = model_repo();
    repo.file("m/__pycache__/modeling_tiny.cpython-311.pyc", OS_SYSTEM_PYC);
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1, "{:#}", r["findings"]);
    let path = "m/__pycache__/modeling_tiny.cpython-311.pyc";
    let rec = file(&r, path);
    assert_eq!(rec["format"], "python-bytecode");
    assert_eq!(rec["facts"]["bytecode"]["python"], "3.11");
    assert_eq!(rec["facts"]["bytecode"]["code_objects"], 2);
    let b = only(&r, "SRC006", path);
    assert_eq!(b["action"], "deny");
    assert_eq!(b["evidence"]["capability"], "process-execution");
    assert_eq!(b["evidence"]["call"], "os.system");
    assert_eq!(b["evidence"]["when"], "at import");
    assert_eq!(b["location"]["line"], 4);
    assert_eq!(only(&r, "SRC007", path)["evidence"]["source"], "none");

    // The source beside it says the same (SRC006 on the `.py`, same call and line).
    let repo = model_repo();
    repo.file("m/modeling_tiny.py", OS_SYSTEM_PY);
    let (_, src) = scan_json(repo.path(), &[]);
    let s = only(&src, "SRC006", "m/modeling_tiny.py");
    assert_eq!(s["evidence"]["call"], b["evidence"]["call"]);
    assert_eq!(s["location"]["line"], b["location"]["line"]);
    assert_eq!(s["evidence"]["when"], b["evidence"]["when"]);
}

#[test]
fn code_beside_weights_found_by_content_is_judged_as_model_code() {
    // A pickle under a name no loader table knows is still weights (read by content), so its
    // directory is a model directory: the code there is model code, source and bytecode.
    // Before, SRC001 named `helper.py` as code a loader runs, but nothing judged what it does.
    let repo = Repo::new();
    repo.file("m/weights.data", pickle_ordered_dict())
        .file("m/helper.py", OS_SYSTEM_PY)
        .file("m/__pycache__/planted.cpython-311.pyc", OS_SYSTEM_PYC)
        .file("lib/helper.py", OS_SYSTEM_PY);
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1, "{:#}", r["findings"]);
    assert_eq!(file(&r, "m/weights.data")["kind"], "weights");
    let s = only(&r, "SRC006", "m/helper.py");
    assert_eq!(s["action"], "deny");
    assert_eq!(s["evidence"]["call"], "os.system");
    let b = only(&r, "SRC006", "m/__pycache__/planted.cpython-311.pyc");
    assert_eq!(b["evidence"]["call"], "os.system");
    // Library code beside no weights is still not model code.
    assert!(
        !rules_on(&r, "lib/helper.py").contains(&"SRC006".to_string()),
        "{:#}",
        r["findings"]
    );
}

#[test]
fn bytecode_matching_its_source_is_reported_once_on_the_source() {
    let repo = model_repo();
    repo.file("m/modeling_tiny.py", OS_SYSTEM_PY)
        .file("m/__pycache__/modeling_tiny.cpython-311.pyc", OS_SYSTEM_PYC)
        .file("m/clean.py", CLEAN_PY)
        .file("m/clean.pyc", CLEAN_PYC);
    let (_, r) = scan_json(repo.path(), &[]);
    for p in ["m/__pycache__/modeling_tiny.cpython-311.pyc", "m/clean.pyc"] {
        assert!(rules_on(&r, p).is_empty(), "{p}: {:#}", r["findings"]);
        assert_eq!(file(&r, p)["facts"]["bytecode"]["source"]["matches"], true);
    }
    assert_eq!(findings(&r, "SRC006").len(), 1, "{:#}", r["findings"]);
}

#[test]
fn constants_the_compiler_made_still_match_their_source() {
    // Folded `+`/`*`, escapes, `%` formatting, `{x=}`, mangled and qualified names,
    // annotations stored as text and 3.13's dedented docstrings, compiled by 3.8, 3.11 and
    // 3.13: each matches its source, so nothing is reported on the bytecode.
    let repo = model_repo();
    repo.file(
        "m/modeling_strings.py",
        include_bytes!("../fixtures/bytecode/compiled_strings.py"),
    );
    for v in ["38", "311", "313"] {
        let bytes = match v {
            "38" => &include_bytes!("../fixtures/bytecode/compiled_strings.cpython-38.pyc")[..],
            "311" => &include_bytes!("../fixtures/bytecode/compiled_strings.cpython-311.pyc")[..],
            _ => &include_bytes!("../fixtures/bytecode/compiled_strings.cpython-313.pyc")[..],
        };
        repo.file(
            &format!("m/__pycache__/modeling_strings.cpython-{v}.pyc"),
            bytes,
        );
    }
    let (_, r) = scan_json(repo.path(), &[]);
    for v in ["38", "311", "313"] {
        let p = format!("m/__pycache__/modeling_strings.cpython-{v}.pyc");
        assert!(rules_on(&r, &p).is_empty(), "{p}: {:#}", r["findings"]);
        assert_eq!(
            file(&r, &p)["facts"]["bytecode"]["source"]["matches"],
            true,
            "{p}"
        );
    }
    assert!(findings(&r, "SRC007").is_empty(), "{:#}", r["findings"]);
}

#[test]
fn a_planted_pyc_next_to_clean_source_is_judged_on_its_own() {
    let repo = model_repo();
    let mut padded = CLEAN_PY.to_vec();
    padded.resize(OS_SYSTEM_PY.len(), b'\n');
    repo.file("m/helpers.py", &padded)
        .file("m/__pycache__/helpers.cpython-311.pyc", OS_SYSTEM_PYC);
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1, "{:#}", r["findings"]);
    let path = "m/__pycache__/helpers.cpython-311.pyc";
    let s = only(&r, "SRC007", path);
    assert_eq!(s["evidence"]["source"], "differs");
    assert!(
        s["message"].as_str().unwrap().contains("m/helpers.py"),
        "{s:#}"
    );
    assert_eq!(only(&r, "SRC006", path)["evidence"]["call"], "os.system");
    assert!(findings(&r, "SRC006").iter().all(|f| f["path"] == path));
}

#[test]
fn bytecode_compiled_by_python3_when_present() {
    // The committed fixtures carry the assertions when python3 is absent; with python3, a
    // module compiled now (whatever its version) must resolve the same call.
    let repo = model_repo();
    repo.file("m/loader.py", OS_SYSTEM_PY);
    let compiled = std::process::Command::new("python3")
        .args(["-c", "import py_compile,sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)"])
        .arg(repo.abs("m/loader.py"))
        .arg(repo.abs("m/loader.pyc"))
        .status()
        .is_ok_and(|s| s.success());
    if compiled {
        std::fs::remove_file(repo.abs("m/loader.py")).unwrap();
    } else {
        std::fs::remove_file(repo.abs("m/loader.py")).unwrap();
        repo.file("m/loader.pyc", OS_SYSTEM_PYC);
    }
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1, "{:#}", r["findings"]);
    let b = only(&r, "SRC006", "m/loader.pyc");
    assert_eq!(b["evidence"]["call"], "os.system");
    assert_eq!(b["location"]["line"], 4);
}

#[test]
fn sbom_components_carry_native_and_bytecode_facts() {
    let repo = model_repo();
    repo.file(
        "m/helper.dll",
        build::pe_image(true, &["CreateProcessA"], false),
    )
    .file("m/clean.py", CLEAN_PY)
    .file("m/clean.pyc", CLEAN_PYC);
    let out_dir = tempfile::tempdir().unwrap();
    let sbom = out_dir.path().join("model.cdx.json");
    modelgate()
        .args(["scan", "--no-git", "--sbom"])
        .arg(&sbom)
        .arg(repo.path())
        .output()
        .unwrap();
    let sbom: Value = serde_json::from_slice(&std::fs::read(&sbom).unwrap()).unwrap();
    // Files are components nested in their model directory's component.
    fn all(c: &Value, out: &mut Vec<Value>) {
        for x in c["components"].as_array().into_iter().flatten() {
            out.push(x.clone());
            all(x, out);
        }
    }
    let mut components = Vec::new();
    all(&sbom, &mut components);
    let props = |name: &str| -> Vec<(String, String)> {
        let c = components
            .iter()
            .find(|c| c["name"].as_str().is_some_and(|n| n.ends_with(name)))
            .unwrap_or_else(|| panic!("no component {name}"));
        c["properties"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p["name"].as_str().unwrap().to_string(),
                    p["value"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let dll = props("helper.dll");
    for want in [
        ("modelgate:native:format", "pe"),
        ("modelgate:native:architecture", "x86_64"),
        ("modelgate:native:kind", "library"),
        ("modelgate:native:notable-import", "CreateProcessA"),
        (
            "modelgate:native:initialiser",
            "DllMain entry point at RVA 0x1000",
        ),
    ] {
        assert!(
            dll.contains(&(want.0.to_string(), want.1.to_string())),
            "{want:?} in {dll:?}"
        );
    }
    let pyc = props("clean.pyc");
    for want in [
        ("modelgate:bytecode:python", "3.11"),
        ("modelgate:bytecode:code-objects", "4"),
        ("modelgate:bytecode:matches-source", "true"),
    ] {
        assert!(
            pyc.contains(&(want.0.to_string(), want.1.to_string())),
            "{want:?} in {pyc:?}"
        );
    }
}

#[test]
fn a_java_archive_in_a_model_directory_is_src007() {
    let repo = model_repo();
    repo.file(
        "m/tokenizer-plugin.zip",
        zip_stored(&[
            ("META-INF/MANIFEST.MF", b"Manifest-Version: 1.0\n"),
            ("org/x/Main.class", b"\xca\xfe\xba\xbe\x00\x00\x00\x34"),
        ]),
    );
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 0, "{:#}", r["findings"]);
    let f = only(&r, "SRC007", "m/tokenizer-plugin.zip");
    assert_eq!(
        (f["action"].as_str(), f["evidence"]["format"].as_str()),
        (Some("warn"), Some("jar"))
    );
}

#[test]
fn bytecode_naming_a_callable_as_data_is_still_judged() {
    // `getattr(o, "sys" + "tem")` after `import os as o`: the name `os` and the folded
    // constant "system" in one code object.
    let repo = model_repo();
    repo.file(
        "m/loader.pyc",
        include_bytes!("../fixtures/bytecode/getattr_os.cpython-311.pyc"),
    );
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1, "{:#}", r["findings"]);
    let b = only(&r, "SRC006", "m/loader.pyc");
    assert_eq!(b["evidence"]["call"], "os.system");
    assert_eq!(b["severity"], "high");
}
