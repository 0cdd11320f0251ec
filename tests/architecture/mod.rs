//! The house reads top-down (issue 14): CLI -> engine -> stages -> model, with no cycles between
//! the crate's top-level modules, a model that imports nothing else of the crate, and no stage
//! that knows the command line. Checked on the source text, so a new `use` that breaks the
//! layering fails here with the edge named.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Top-level module -> the top-level modules its code names through `crate::` or `modelgate::`.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in files {
        let rel = f
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let top = rel
            .split('/')
            .next()
            .unwrap()
            .trim_end_matches(".rs")
            .to_string();
        if top == "lib" {
            continue;
        }
        let text = fs::read_to_string(&f).unwrap();
        let edges = g.entry(top.clone()).or_default();
        for line in text.lines() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            for prefix in ["crate::", "modelgate::"] {
                let mut rest = code;
                while let Some(i) = rest.find(prefix) {
                    rest = &rest[i + prefix.len()..];
                    let name: String = rest
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    if !name.is_empty() && name != top && name.chars().all(|c| !c.is_uppercase()) {
                        edges.insert(name);
                    }
                }
            }
        }
    }
    g
}

#[test]
fn the_model_imports_nothing_else_of_the_crate() {
    let g = graph();
    assert_eq!(
        g.get("model"),
        Some(&BTreeSet::new()),
        "{:?}",
        g.get("model")
    );
}

/// Issue 38: the codec (every decompressor and text decoder, one header check each) sits below
/// every stage that decodes, `inspect` and `code` alike, so it may import nothing of the crate:
/// an arrow from it back up would let the two callers drift apart again.
#[test]
fn the_codec_imports_nothing_else_of_the_crate() {
    let g = graph();
    let imports = g.get("codec").expect("src/codec exists");
    assert!(imports.is_empty(), "the codec imports {imports:?}");
    for caller in ["inspect", "code"] {
        assert!(
            g.get(caller).is_some_and(|e| e.contains("codec")),
            "{caller} decodes through the codec"
        );
    }
}

#[test]
fn no_library_module_knows_the_command_line() {
    for (module, edges) in graph() {
        if matches!(module.as_str(), "main" | "cli" | "commands") {
            continue;
        }
        for binary_only in ["cli", "commands", "main"] {
            assert!(
                !edges.contains(binary_only),
                "{module} imports {binary_only}, which belongs to the binary"
            );
        }
    }
}

#[test]
fn top_level_modules_import_each_other_without_cycles() {
    let g = graph();
    // Depth-first search for a back edge; report the cycle.
    fn visit(
        n: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) {
        if done.contains(n) {
            return;
        }
        if let Some(i) = stack.iter().position(|s| s == n) {
            panic!("import cycle: {} -> {n}", stack[i..].join(" -> "));
        }
        stack.push(n.to_string());
        for m in g.get(n).into_iter().flatten() {
            visit(m, g, stack, done);
        }
        stack.pop();
        done.insert(n.to_string());
    }
    let mut done = BTreeSet::new();
    for n in g.keys() {
        visit(n, &g, &mut Vec::new(), &mut done);
    }
}

#[test]
fn stages_do_not_call_the_engine() {
    for (module, edges) in graph() {
        if matches!(module.as_str(), "main" | "cli" | "commands" | "engine") {
            continue;
        }
        assert!(!edges.contains("engine"), "{module} imports the engine");
    }
}

/// Facts are named by `model::facts::Fact`, never by a string literal, so a writer and a reader
/// cannot drift apart on a spelling.
#[test]
fn facts_are_named_by_the_table_not_by_strings() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut bad = Vec::new();
    for f in files {
        let text = fs::read_to_string(&f).unwrap();
        // Collapse whitespace so a call split over lines is seen whole.
        let flat: String = text.split_whitespace().collect::<Vec<_>>().join("");
        for pat in [
            ".fact(\"",
            "facts.get(\"",
            "facts.insert(\"",
            "facts.remove(\"",
            "facts.entry(\"",
            "facts.contains_key(\"",
            "repository.insert(\"",
            "repository.get(\"",
        ] {
            if flat.contains(pat) {
                bad.push(format!("{}: `{pat}`", f.display()));
            }
        }
    }
    assert!(bad.is_empty(), "string fact keys: {bad:#?}");
}

/// The README's `facts` table names every key of the table and no other.
#[test]
fn readme_facts_table_matches_the_fact_table() {
    use modelgate::model::facts::Fact;
    let readme =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let start = readme
        .find("### `facts` keys")
        .expect("README has a facts section");
    let section = &readme[start..];
    let end = section[3..].find("\n### ").map_or(section.len(), |i| i + 3);
    let mut documented = BTreeSet::new();
    for row in section[..end].lines().filter(|l| l.starts_with("| ")) {
        let keys = row.rsplit('|').nth(1).unwrap_or("");
        // Values in parentheses (`escapes-root`, `pytorch`) are not keys.
        let mut depth = 0;
        let mut outside = String::new();
        for c in keys.chars() {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                _ if depth == 0 => outside.push(c),
                _ => {}
            }
        }
        for (i, part) in outside.split('`').enumerate() {
            if i % 2 == 1 {
                documented.insert(part.to_string());
            }
        }
    }
    let table: BTreeSet<String> = Fact::ALL.iter().map(|f| f.name().to_string()).collect();
    let missing: Vec<_> = table.difference(&documented).collect();
    let unknown: Vec<_> = documented.difference(&table).collect();
    assert!(
        missing.is_empty(),
        "facts missing from the README table: {missing:?}"
    );
    assert!(
        unknown.is_empty(),
        "README documents keys no code writes: {unknown:?}"
    );
}

/// Inside each stage directory, the submodules do not import each other in a cycle either
/// (a submodule may use its parent's shared types: those edges are not counted).
#[test]
fn submodules_of_a_stage_import_each_other_without_cycles() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for stage in [
        "inspect",
        "code",
        "provenance",
        "report",
        "engine",
        "model",
        "policy",
        "sign",
        "codec",
        "knowledge",
        "hub",
        "commands",
        "repository",
    ] {
        let dir = src.join(stage);
        let mut files = Vec::new();
        rust_files(&dir, &mut files);
        let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for f in files {
            let rel = f
                .strip_prefix(&dir)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let parts: Vec<&str> = rel.split('/').collect();
            let child = parts[0].trim_end_matches(".rs").to_string();
            if child == "mod" {
                continue;
            }
            // `super::` from `x.rs` or `x/mod.rs` names a sibling; from `x/y.rs`, `super::super::`.
            let top_level = parts.len() == 1 || parts.get(1) == Some(&"mod.rs");
            let sibling = if top_level {
                "super::"
            } else {
                "super::super::"
            };
            let text = fs::read_to_string(&f).unwrap();
            // Test modules may reach across (fixtures); the layering is about the code.
            let code = code_without_test_blocks(&text);
            let edges = g.entry(child.clone()).or_default();
            let crate_prefix = format!("crate::{stage}::");
            for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
                for prefix in [crate_prefix.as_str(), sibling] {
                    let mut rest = line;
                    while let Some(i) = rest.find(prefix) {
                        let before = &rest[..i];
                        rest = &rest[i + prefix.len()..];
                        if prefix == "super::" && before.ends_with("super::") {
                            continue;
                        }
                        let name: String = rest
                            .chars()
                            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                            .collect();
                        let is_module = name.chars().all(|c| !c.is_uppercase());
                        if !name.is_empty() && name != child && is_module && name != "super" {
                            edges.insert(name);
                        }
                    }
                }
            }
        }
        let names: BTreeSet<String> = g.keys().cloned().collect();
        for edges in g.values_mut() {
            edges.retain(|e| names.contains(e));
        }
        fn visit(
            n: &str,
            g: &BTreeMap<String, BTreeSet<String>>,
            stack: &mut Vec<String>,
            done: &mut BTreeSet<String>,
            stage: &str,
        ) {
            if done.contains(n) {
                return;
            }
            if let Some(i) = stack.iter().position(|s| s == n) {
                panic!(
                    "import cycle in {stage}: {} -> {n}",
                    stack[i..].join(" -> ")
                );
            }
            stack.push(n.to_string());
            for m in g.get(n).into_iter().flatten() {
                visit(m, g, stack, done, stage);
            }
            stack.pop();
            done.insert(n.to_string());
        }
        let mut done = BTreeSet::new();
        for n in g.keys() {
            visit(n, &g, &mut Vec::new(), &mut done, stage);
        }
    }
}

/// Issue 32: inside `inspect/`, the shared types sit below the inspectors (`inspect/context.rs`,
/// and `inspect/pickle_stream.rs` for pickle streams in any container) and the dispatcher
/// (`inspect/scan.rs`, re-exported by `inspect/mod.rs`) above them. An inspector that reached
/// these through `super::` would import from the folder's `mod.rs`, an arrow running back up.
#[test]
fn inspectors_take_shared_types_from_below_not_from_the_dispatcher() {
    const SHARED: &[&str] = &[
        "Ctx",
        "ScanConfig",
        "FileScan",
        "raise_hint",
        "name_limit",
        "open_regular",
        "unreadable",
        "pickle_limits",
        "inspect_pickle_stream",
        "inspect_torch_legacy",
        "inspect_storage_record",
        "inspect_torch_tar_records",
        "fold_per_file",
        "record_weights_only",
    ];
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/inspect");
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    let mut bad = Vec::new();
    for f in files {
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        // The dispatcher itself, and test modules (which exercise the whole of `inspect`).
        if f.parent() == Some(dir.as_path()) && name == "mod.rs" || name.contains("test") {
            continue;
        }
        let text = fs::read_to_string(&f).unwrap();
        let code = code_without_test_blocks(&text);
        for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
            for item in SHARED {
                let direct = line.contains(&format!("super::{item}"))
                    && !line.contains(&format!("super::super::{item}"));
                let listed = line.contains("use super::{")
                    && line.split(['{', '}', ',', ' ']).any(|w| w.trim() == *item);
                if (direct || listed) && f.parent() == Some(dir.as_path()) {
                    bad.push(format!("{}: {}", f.display(), line.trim()));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "import these from `super::context` or `super::pickle_stream`:\n{}",
        bad.join("\n")
    );
}

/// The first path segment of each item a `super::` path names: `super::x` gives `x`,
/// `super::{a, b::c, D as E}` gives `a`, `b` and `D`. `super::super::…` names nothing here.
fn super_items(code: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.trim()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("super::") {
        let preceded = rest[..i].ends_with("super::")
            || rest[..i]
                .chars()
                .last()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        rest = &rest[i + "super::".len()..];
        if rest.starts_with("super::") {
            // `super::super::…` reaches above the folder: skip the whole chain.
            while let Some(r) = rest.strip_prefix("super::") {
                rest = r;
            }
            continue;
        }
        if preceded {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            out.extend(group[..end].split(',').map(ident).filter(|n| !n.is_empty()));
        } else {
            let name = ident(rest);
            if !name.is_empty() {
                out.push(name);
            }
        }
    }
    out
}

/// The modules a `mod.rs` declares (`mod x;`, `pub mod x;`, `pub(crate) mod x;`, ...), each with
/// whether a `#[path]` attribute puts its file somewhere else.
fn declared_modules(mod_rs: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut path_attr = false;
    for line in mod_rs.lines().map(str::trim) {
        if line.starts_with("#[path") {
            path_attr = true;
            continue;
        }
        if line.starts_with("#[") || line.starts_with("///") {
            continue;
        }
        let decl = ["pub(crate) ", "pub(super) ", "pub "]
            .iter()
            .find_map(|v| line.strip_prefix(v))
            .unwrap_or(line);
        if let Some(name) = decl.strip_prefix("mod ").and_then(|r| r.strip_suffix(';')) {
            out.push((name.trim().to_string(), path_attr));
        }
        path_attr = false;
    }
    out
}

/// A file's code without comment lines and without its in-file test blocks
/// (`#[cfg(test)] mod tests { .. }` and everything after it): a test block's `super::` names the
/// file it sits in, and tests may reach across (fixtures); the layering is about the code.
fn code_without_test_blocks(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if line.trim() == "#[cfg(test)]" {
            let item = lines[i + 1..]
                .iter()
                .map(|l| l.trim())
                .find(|l| !l.starts_with("#[") && !l.starts_with("//"));
            if item.is_some_and(|l| l.contains("mod ") && l.ends_with('{')) {
                break;
            }
        }
        if !line.trim_start().starts_with("//") {
            out.push(*line);
        }
    }
    out.join("\n")
}

/// The first segment of each item `prefix` names in `code` (`prefix::x`, `prefix::{a, b::c}`),
/// where `prefix` is not the tail of a longer path.
fn items_after(code: &str, prefix: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.trim()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find(prefix) {
        let preceded = rest[..i]
            .chars()
            .last()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':');
        rest = &rest[i + prefix.len()..];
        if preceded {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            out.extend(group[..end].split(',').map(ident).filter(|n| !n.is_empty()));
        } else {
            let name = ident(rest);
            if !name.is_empty() {
                out.push(name);
            }
        }
    }
    out
}

/// Issue 38: inside every folder, `mod.rs` dispatches to its children and the parts they share
/// live in a leaf module beside them; a module that names an item of its own folder's `mod.rs`
/// (`super::Item`, `super::{A, B}`, not a sibling module), or of any enclosing folder's `mod.rs`
/// through a path (`crate::inspect::pickle::analyze` from `inspect/pickle/machine/`), is an
/// import running back up, and with the dispatcher calling down, a circle.
///
/// Checked: every module a `mod.rs` declares, production and test-only alike (`limit_tests.rs`,
/// `vocabulary.rs`, `fixtures.rs` take what they test from the leaf that defines it), and every
/// file below a folder for the `crate::` form. Not checked: in-file test blocks, and `tests.rs`,
/// which is its `mod.rs`'s own `#[cfg(test)] mod tests` block moved to a file: its
/// `use super::*` is the unit-test idiom for the file under test, as in any in-file block, and
/// splitting a `mod.rs`'s items into leaves for its own tests' sake would help no reader.
#[test]
fn no_child_module_imports_its_folders_mod_rs() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    // Folder module path (`inspect::pickle`) -> the modules its `mod.rs` declares.
    let mut folders: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut dirs = vec![src.clone()];
    let mut bad = Vec::new();
    while let Some(dir) = dirs.pop() {
        let entries: Vec<PathBuf> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        dirs.extend(entries.iter().filter(|p| p.is_dir()).cloned());
        if !dir.join("mod.rs").is_file() {
            continue;
        }
        let declared = declared_modules(&fs::read_to_string(dir.join("mod.rs")).unwrap());
        let siblings: BTreeSet<String> = declared.iter().map(|(n, _)| n.clone()).collect();
        let module = dir
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace(['\\', '/'], "::");
        folders.insert(module, siblings.clone());
        for (name, path_attr) in &declared {
            if *path_attr || name == "tests" {
                continue;
            }
            let file = [
                dir.join(format!("{name}.rs")),
                dir.join(name).join("mod.rs"),
            ]
            .into_iter()
            .find(|f| f.is_file())
            .unwrap_or_else(|| panic!("{}: `mod {name};` has no file", dir.display()));
            let code = code_without_test_blocks(&fs::read_to_string(&file).unwrap());
            for item in super_items(&code) {
                if !siblings.contains(&item) && !["self", "super", "crate"].contains(&item.as_str())
                {
                    bad.push(format!(
                        "{}: `super::{item}`",
                        file.strip_prefix(&src).unwrap().display()
                    ));
                }
            }
        }
    }
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    for file in files {
        let rel = file
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if rel.ends_with("/tests.rs") {
            continue;
        }
        let module = rel
            .trim_end_matches(".rs")
            .trim_end_matches("/mod")
            .replace('/', "::");
        let code = code_without_test_blocks(&fs::read_to_string(&file).unwrap());
        for (folder, children) in &folders {
            if folder.is_empty() || !module.starts_with(&format!("{folder}::")) {
                continue;
            }
            for item in items_after(&code, &format!("crate::{folder}::")) {
                if !children.contains(&item) && !["self", "super"].contains(&item.as_str()) {
                    bad.push(format!("{rel}: `crate::{folder}::{item}`"));
                }
            }
        }
    }
    bad.sort();
    assert!(
        bad.is_empty(),
        "modules import an item of an enclosing folder's mod.rs; move it to a leaf module below:\n{}",
        bad.join("\n")
    );
}

#[test]
fn super_items_reads_paths_and_groups() {
    assert_eq!(super_items("use super::x;"), ["x"]);
    assert_eq!(
        super_items("use super::{a, b::c, D as E};"),
        ["a", "b", "D"]
    );
    assert!(super_items("use super::super::x;").is_empty());
    assert_eq!(
        super_items("let v = super::f(1) + super::g(2);"),
        ["f", "g"]
    );
}

/// Issue 38: ARCHITECTURE.md's folder-by-folder map names every source file (by its path below
/// `src/`; unit-test files, `tests.rs` and `*_tests.rs`, are not on it), and every `src/` path
/// that ARCHITECTURE.md or CONTRIBUTING.md names exists, so neither page points at a file a
/// move left behind.
#[test]
fn every_source_file_is_on_the_map() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = root.join("src");
    let map = fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut missing: Vec<String> = files
        .iter()
        .map(|f| {
            f.strip_prefix(&src)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/")
        })
        .filter(|rel| {
            let name = rel.rsplit('/').next().unwrap_or(rel);
            name != "tests.rs" && !name.ends_with("_tests.rs")
        })
        .filter(|rel| !map.contains(rel.as_str()))
        .collect();
    missing.sort();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md's folder-by-folder map does not name these files:\n{}",
        missing.join("\n")
    );
    let mut stale = Vec::new();
    for page in ["ARCHITECTURE.md", "CONTRIBUTING.md"] {
        let text = fs::read_to_string(root.join(page)).unwrap();
        let mut rest = text.as_str();
        while let Some(i) = rest.find("src/") {
            let preceded = rest[..i]
                .chars()
                .last()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '/' || c == '_');
            let path: String = rest[i..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || "/_.-".contains(*c))
                .collect();
            rest = &rest[i + "src/".len()..];
            let path = path.trim_end_matches(['.', '-']);
            if !preceded && !root.join(path).exists() {
                stale.push(format!("{page}: {path}"));
            }
        }
    }
    assert!(
        stale.is_empty(),
        "these paths do not exist:\n{}",
        stale.join("\n")
    );
}
