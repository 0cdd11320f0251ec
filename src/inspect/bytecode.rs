//! Python bytecode (`.pyc`): recognised by its magic, walked with [`super::marshal`], and read
//! for what it imports and calls (issue 31).
//!
//! Python imports a `.pyc` with no `.py` beside it (a sourceless module), and with a `.py`
//! beside it in `__pycache__` when the header's timestamp or hash says it is current; either way
//! the bytecode, not the source, is what runs. So a `.pyc` shipped with a model is judged on its
//! own unless it demonstrably matches its source.
//!
//! # What is resolved
//!
//! [`resolve`] follows each code object's instructions with the opcode table of its version
//! ([`super::marshal::opcodes`]): `IMPORT_NAME`/`IMPORT_FROM` followed by a store bind a name
//! to a module or a module attribute (`import os as o`, `from subprocess import Popen as P`,
//! also `s = os.system`), and `LOAD_NAME`/`LOAD_GLOBAL`/`LOAD_FAST` followed by
//! `LOAD_ATTR`/`LOAD_METHOD` build a dotted name through those bindings (`o.system` is
//! `os.system`). Each dotted name so built is a [`Site`] with the code object's qualified name
//! and the line the line table gives its instruction. A name bound at module level is seen by
//! nested code objects (`LOAD_GLOBAL`). What is not followed: values passed through the stack
//! across calls, containers, `getattr` with computed names; those still show in the names
//! (`co_names`, listed in the `bytecode` fact) and string constants, and a `.pyc` whose names
//! or strings its source lacks never passes as that source's ([`first_unexplained`]).
//!
//! # Matching a `.pyc` with its source
//!
//! modelgate cannot compile Python, so "this `.pyc` is the compilation of that `.py`" is decided
//! from what can be checked without a compiler ([`matches_source`]): the header's record of the
//! source (the size, modulo 2**32, for a timestamp pyc; SipHash of the source bytes for a
//! hash-based one, [`super::marshal::source_hash`]) must agree, and every name a code object
//! uses and every string constant must appear in the source text. A planted `.pyc` beside clean
//! source (same size, padded) still fails the second test when it names anything the source does
//! not; one that passes both holds nothing the source does not say, and is reported once, on the
//! source.

use std::collections::{BTreeMap, BTreeSet};

use super::marshal::{CodeObject, Module, PycHeader, PycKind, opcodes};

/// When a code object runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum When {
    /// At import: the module's code object and class bodies defined at module level.
    Import,
    /// When the function it belongs to is called.
    Call,
}

impl When {
    /// How reports say it (`import time`, `call time`).
    pub fn as_str(self) -> &'static str {
        match self {
            When::Import => "import time",
            When::Call => "call time",
        }
    }
}

/// A dotted name the bytecode loads, resolved through its imports.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Site {
    /// The resolved name (`os.system`, `subprocess.Popen`, `eval`).
    pub name: String,
    /// The code object's qualified name (`<module>`, `Loader.load`).
    pub code: String,
    /// Index of the code object in [`Module::code`].
    pub code_index: usize,
    /// The source line of the instruction, from the line table.
    pub line: Option<u32>,
    /// Byte offset of the instruction in the code object's instructions.
    pub offset: usize,
    /// When it runs.
    pub when: When,
}

/// Whether a code object is a class body (the compiler stores `__module__` and `__qualname__`
/// first thing in every class body).
fn is_class_body(c: &CodeObject) -> bool {
    c.names.iter().any(|n| n == "__module__") && c.names.iter().any(|n| n == "__qualname__")
}

/// When each code object runs: the module and the class bodies nested only in the module or
/// in other class bodies run at import; everything else when called.
pub fn when_of(module: &Module, index: usize) -> When {
    let mut i = index;
    for _ in 0..module.code.len() {
        let Some(c) = module.code.get(i) else {
            return When::Call;
        };
        match c.parent {
            None => return When::Import,
            Some(p) if is_class_body(c) => i = p,
            Some(_) => return When::Call,
        }
    }
    When::Call
}

/// Every dotted name the module's code objects load, resolved through their imports (see the
/// module documentation). Sorted by code object, then offset.
pub fn resolve(module: &Module, minor: u8) -> Vec<Site> {
    let Some(table) = opcodes::table(minor) else {
        return Vec::new();
    };
    // Bindings made at module level are visible to every code object as globals.
    let mut globals: BTreeMap<String, String> = BTreeMap::new();
    let mut sites = Vec::new();
    for (index, code) in module.code.iter().enumerate() {
        let is_module = code.parent.is_none();
        let mut locals: BTreeMap<String, String> = BTreeMap::new();
        let when = when_of(module, index);
        let name_at = |i: u32| code.names.get(i as usize).cloned();
        // The dotted name on top of the stack, when it is one we follow.
        let mut cur: Option<String> = None;
        // The module of the last IMPORT_NAME, and how far IMPORT_FROM has walked it.
        let mut imported: Option<(String, String)> = None;
        let mut from_import = false;
        let mut pending: Option<(String, usize)> = None;
        let flush = |pending: &mut Option<(String, usize)>, sites: &mut Vec<Site>| {
            if let Some((name, offset)) = pending.take() {
                sites.push(Site {
                    name,
                    code: code.qualname.clone(),
                    code_index: index,
                    line: code.line_of(offset),
                    offset,
                    when,
                });
            }
        };
        for ins in opcodes::instructions(&code.code, table) {
            let op = ins.op;
            if op == table.load_attr || Some(op) == table.load_method {
                let arg = if op == table.load_attr && table.attr_shifted {
                    ins.arg >> 1
                } else {
                    ins.arg
                };
                match (cur.take(), name_at(arg)) {
                    (Some(base), Some(attr)) => {
                        let dotted = format!("{base}.{attr}");
                        cur = Some(dotted.clone());
                        pending = Some((dotted, ins.offset));
                    }
                    _ => flush(&mut pending, &mut sites),
                }
                continue;
            }
            flush(&mut pending, &mut sites);
            if op == table.import_name {
                let m = name_at(ins.arg).unwrap_or_default();
                let top = m.split('.').next().unwrap_or_default().to_string();
                imported = Some((m.clone(), top));
                from_import = false;
                cur = Some(m);
            } else if op == table.import_from {
                let attr = name_at(ins.arg).unwrap_or_default();
                cur = imported.as_mut().map(|(m, walked)| {
                    let cand = format!("{walked}.{attr}");
                    // `import a.b.c as d` walks a.b.c with IMPORT_FROM b, IMPORT_FROM c.
                    if *m == cand || m.starts_with(&format!("{cand}.")) {
                        *walked = cand.clone();
                        cand
                    } else {
                        format!("{m}.{attr}")
                    }
                });
                from_import = true;
            } else if op == table.load_name || op == table.load_global {
                let arg = if op == table.load_global && table.global_shifted {
                    ins.arg >> 1
                } else {
                    ins.arg
                };
                cur = name_at(arg).map(|n| {
                    locals
                        .get(&n)
                        .or_else(|| globals.get(&n))
                        .cloned()
                        .unwrap_or(n)
                });
                if let Some(n) = &cur {
                    pending = Some((n.clone(), ins.offset));
                    // A bare builtin or unbound name is a site only if it is called; names
                    // that resolve through an import are sites already.
                }
            } else if op == table.load_fast {
                cur = code
                    .varnames
                    .get(ins.arg as usize)
                    .and_then(|n| locals.get(n))
                    .cloned();
            } else if op == table.store_name || op == table.store_global || op == table.store_fast {
                let target = if op == table.store_fast {
                    code.varnames.get(ins.arg as usize).cloned()
                } else {
                    name_at(ins.arg)
                };
                if let (Some(value), Some(target)) = (cur.take(), target) {
                    // `import a.b` binds `a` to the package, `import a.b as c` binds `c` to a.b.
                    let bound = match &imported {
                        Some((m, _)) if !from_import && *m == value => {
                            let top = m.split('.').next().unwrap_or_default();
                            if target == top {
                                top.to_string()
                            } else {
                                value
                            }
                        }
                        _ => value,
                    };
                    if is_module && op != table.store_fast || op == table.store_global {
                        globals.insert(target, bound);
                    } else {
                        locals.insert(target, bound);
                    }
                }
            } else {
                cur = None;
            }
        }
        flush(&mut pending, &mut sites);
    }
    sites.sort_by_key(|s| (s.code_index, s.offset));
    sites.dedup();
    sites
}

/// The limits whose names the walker's problems carry.
const LIMIT_CODES: &[(&str, &str)] = &[
    ("marshal_depth", "marshal_depth"),
    ("marshal_objects", "marshal_objects"),
];

/// Names and strings kept in the facts (the full lists are in the bytecode; the facts are a
/// summary for the report and the SBOM).
const MAX_FACT_NAMES: usize = 200;

/// What the `.pyc` inspector learned, for the facts and the judgement.
#[derive(Debug, Clone)]
pub struct Inspected {
    /// The parsed file.
    pub pyc: super::marshal::Pyc,
    /// Resolved sites.
    pub sites: Vec<Site>,
    /// The source beside it: its relative path and whether the pyc matches it (`Err`: why
    /// not); `None` when there is no source to compare with.
    pub source: Option<(String, Result<(), String>)>,
}

/// Reads a `.pyc` from the one sequential read (bounded by `bytecode_bytes`), walks it and
/// compares it with its source when that sits where Python would look for it. Records the
/// `bytecode` fact and the problems (FMT007 malformed, SCAN004 limits); returns what was read
/// for the judgement.
pub fn inspect_pyc(
    ctx: &mut super::context::Ctx<'_>,
    r: &mut dyn std::io::BufRead,
) -> std::io::Result<Option<Inspected>> {
    use crate::model::facts::Fact;
    use serde_json::json;
    let cap = ctx.cfg.limits.bytecode_bytes;
    let (bytes, more) = super::read::read_bounded(r, cap)?;
    if more {
        let cfg = ctx.cfg;
        let d = ctx.detect(
            crate::model::rules::RuleId::LimitExceeded,
            "bytecode_bytes",
            format!(
                "compiled Python over {cap} bytes was not walked; {}",
                super::context::raise_hint("bytecode_bytes")
            ),
            crate::model::finding::Location::default(),
        );
        super::context::name_limit(d, cfg, "bytecode_bytes");
        return Ok(None);
    }
    let limits = super::marshal::Limits::from(&ctx.cfg.limits);
    let mut summary = serde_json::Map::new();
    if let Ok(h) = super::marshal::parse_header(&bytes) {
        summary.insert("python".into(), json!(format!("3.{}", h.minor)));
        summary.insert("magic".into(), json!(h.magic));
        match h.kind {
            PycKind::Timestamp { source_size, .. } => {
                summary.insert("header".into(), json!("timestamp"));
                summary.insert("source_size".into(), json!(source_size));
            }
            PycKind::Hash { checked, hash } => {
                summary.insert(
                    "header".into(),
                    json!(if checked {
                        "checked-hash"
                    } else {
                        "unchecked-hash"
                    }),
                );
                summary.insert(
                    "source_hash".into(),
                    json!(crate::model::finding::hex(&hash)),
                );
            }
        }
    }
    let pyc = match super::marshal::parse_pyc(&bytes, &limits) {
        Ok(p) => p,
        Err(p) => {
            ctx.fact(Fact::Bytecode, serde_json::Value::Object(summary));
            super::formats::record_problems(
                ctx,
                &[p],
                crate::model::rules::RuleId::FormatMalformed,
                None,
                LIMIT_CODES,
            );
            return Ok(None);
        }
    };
    let sites = resolve(&pyc.module, pyc.header.minor);
    let mut names: Vec<&str> = pyc
        .module
        .code
        .iter()
        .flat_map(|c| c.names.iter().map(String::as_str))
        .collect();
    names.sort_unstable();
    names.dedup();
    let mut resolved: Vec<&str> = sites
        .iter()
        .filter(|s| s.name.contains('.'))
        .map(|s| s.name.as_str())
        .collect();
    resolved.sort_unstable();
    resolved.dedup();
    summary.insert("code_objects".into(), json!(pyc.module.code.len()));
    let qualnames: Vec<&str> = pyc
        .module
        .code
        .iter()
        .map(|c| c.qualname.as_str())
        .take(MAX_FACT_NAMES)
        .collect();
    summary.insert("code_names".into(), json!(qualnames));
    summary.insert(
        "names".into(),
        json!(names.iter().take(MAX_FACT_NAMES).collect::<Vec<_>>()),
    );
    summary.insert(
        "resolved".into(),
        json!(resolved.iter().take(MAX_FACT_NAMES).collect::<Vec<_>>()),
    );
    if let Some(first) = pyc.module.code.first() {
        summary.insert("filename".into(), json!(first.filename));
    }
    let source = source_path_of(ctx.rel).and_then(|rel| {
        let text = read_source(ctx, &rel)?;
        Some((rel, matches_source(&pyc.header, &pyc.module, &text)))
    });
    if let Some((rel, result)) = &source {
        let mut s = serde_json::Map::new();
        s.insert("path".into(), json!(rel));
        s.insert("matches".into(), json!(result.is_ok()));
        if let Err(why) = result {
            s.insert("reason".into(), json!(why));
        }
        summary.insert("source".into(), serde_json::Value::Object(s));
    }
    ctx.fact(Fact::Bytecode, serde_json::Value::Object(summary));
    Ok(Some(Inspected { pyc, sites, source }))
}

/// SRC006 for a `.pyc` judged on its own (model code whose source is absent or differs): each
/// resolved site that the capability table (`knowledge::capabilities`) lists becomes a
/// behaviour site, with the code object's qualified name, the line its line table gives and
/// when it runs (import time for the module and module-level class bodies), recorded through
/// the same `record_behaviour` as Python source, so the finding reads as the source's would.
///
/// Bytecode shows which callable is loaded, not the arguments the source judge weighs, so the
/// severity is the capability's own: critical for running processes, installing packages,
/// persisting and reading credentials; high for dynamic code and native loads (denied either
/// way); medium for network access, deferral and dynamic imports, whose danger is in the
/// arguments. Entries judged only by their path or value arguments (`open`, `os.environ`,
/// `setattr`) are not sites here: their names still appear in the `bytecode` fact.
pub fn judge(ctx: &mut super::context::Ctx<'_>, pyc: &Inspected) {
    use crate::knowledge::capabilities::{self, Capability, Role};
    use crate::model::finding::Severity;
    use crate::provenance::code::behaviour;
    if !ctx.cfg.model_code.contains(ctx.rel) {
        return;
    }
    if matches!(&pyc.source, Some((_, Ok(())))) {
        // Reported once, on the source it matches.
        return;
    }
    let mut sites = Vec::new();
    for s in &pyc.sites {
        let Some(entry) = capabilities::lookup(&s.name) else {
            continue;
        };
        let severity = match (entry.capability, entry.role) {
            (_, Role::WritePath | Role::ReadPath | Role::ReadEnv | Role::SetAttr) => continue,
            (
                Capability::ProcessExecution
                | Capability::PackageInstall
                | Capability::Persistence
                | Capability::CredentialAccess,
                Role::Call | Role::Command,
            ) => Severity::Critical,
            (Capability::DynamicCode | Capability::NativeLoad, _) => Severity::High,
            (Capability::ProcessExecution | Capability::PackageInstall, _) => Severity::Critical,
            _ => Severity::Medium,
        };
        let when = match s.when {
            When::Import => behaviour::When::Import,
            When::Call => behaviour::When::Call {
                function: s.code.clone(),
                reached_from: Vec::new(),
            },
        };
        sites.push(behaviour::Site {
            capability: entry.capability,
            severity,
            confidence: behaviour::Confidence::High,
            line: s.line.map_or(0, |l| l as usize),
            column: 1,
            call: capabilities::normalize(&s.name),
            detail: format!("in compiled code object `{}`", s.code),
            when,
            cwe: entry.cwe,
            decoded: None,
            library: None,
        });
    }
    // Names the bytecode only holds as data: `getattr(os, "sys" + "tem")` compiles to the name
    // `os` and the folded constant `"system"`. A code object whose names include a module and
    // whose string constants include one of that module's dangerous callables is a site too
    // (high: the pairing is evidence, not a resolved call).
    let resolved: BTreeSet<&str> = sites.iter().map(|s| s.call.as_str()).collect();
    let mut paired = Vec::new();
    for (index, code) in pyc.pyc.module.code.iter().enumerate() {
        for module in &code.names {
            for attr in code.const_strings.iter().filter(|c| is_identifier(c)) {
                let name = format!("{module}.{attr}");
                let Some(entry) = capabilities::lookup(&name) else {
                    continue;
                };
                if entry.matching != capabilities::Match::Exact
                    || !matches!(entry.role, Role::Call | Role::Command | Role::Evaluate)
                    || resolved.contains(name.as_str())
                {
                    continue;
                }
                paired.push(behaviour::Site {
                    capability: entry.capability,
                    severity: Severity::High,
                    confidence: behaviour::Confidence::Medium,
                    line: code.first_line as usize,
                    column: 1,
                    call: name,
                    detail: format!(
                        "in compiled code object `{}`, named as data (`{module}` and the string `\"{attr}\"`)",
                        code.qualname
                    ),
                    when: match when_of(&pyc.pyc.module, index) {
                        When::Import => behaviour::When::Import,
                        When::Call => behaviour::When::Call {
                            function: code.qualname.clone(),
                            reached_from: Vec::new(),
                        },
                    },
                    cwe: entry.cwe,
                    decoded: None,
                    library: None,
                });
            }
        }
    }
    paired.dedup_by(|a, b| a.call == b.call && a.line == b.line);
    sites.extend(paired);
    if sites.is_empty() {
        return;
    }
    let found = behaviour::Behaviour {
        sites,
        ..behaviour::Behaviour::default()
    };
    super::source::record_behaviour(ctx, &found, None);
}

/// A Python identifier (ASCII subset): what an attribute name in a string constant looks like.
fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && s.len() <= 64
}

/// The bytes of the source file at `rel` (relative to the scan root), found beside the `.pyc`
/// being scanned on disk: a documented second read of another file, bounded by
/// `code_file_bytes`, opened without following a final symlink. `None` when the `.pyc` is not
/// a local file (remote scans), or the source is absent, unreadable or too large: then the
/// `.pyc` is judged on its own.
fn read_source(ctx: &super::context::Ctx<'_>, rel: &str) -> Option<Vec<u8>> {
    use std::io::Read;
    let super::read::Positioned::File(pyc_path) = ctx.positioned else {
        return None;
    };
    // Walk up from the pyc's path as many components as its relative path has, then down.
    let depth = ctx.rel.split('/').count();
    let mut root = pyc_path;
    for _ in 0..depth {
        root = root.parent()?;
    }
    let path = rel.split('/').fold(root.to_path_buf(), |p, c| p.join(c));
    let file = super::context::open_regular(&path).ok()?;
    let cap = ctx.cfg.limits.code_file_bytes;
    let mut out = Vec::new();
    file.take(cap.saturating_add(1))
        .read_to_end(&mut out)
        .ok()?;
    (out.len() as u64 <= cap).then_some(out)
}

/// Names the compiler puts into code objects without the source spelling them.
const COMPILER_NAMES: &[&str] = &[
    "__doc__",
    "__name__",
    "__module__",
    "__qualname__",
    "__annotations__",
    "__class__",
    "__classcell__",
    "__firstlineno__",
    "__static_attributes__",
    "__type_params__",
    "__annotate__",
    "__conditional_annotations__",
    "__classdictcell__",
    ".0",
];

/// The first name or string constant of `module` that `source` does not contain, if any
/// (string constants also count when they appear with Python's escapes for `\n`, `\t`, `\\`
/// and quotes, as a literal spells them). Code object names in angle brackets (`<module>`,
/// `<lambda>`, `<listcomp>`) are the compiler's.
pub fn first_unexplained(module: &Module, source: &str) -> Option<String> {
    let escaped = |s: &str| -> String {
        let mut out = String::with_capacity(s.len());
        for c in s.chars() {
            match c {
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\r' => out.push_str("\\r"),
                '\\' => out.push_str("\\\\"),
                '\'' => out.push_str("\\'"),
                '"' => out.push_str("\\\""),
                c => out.push(c),
            }
        }
        out
    };
    let explained = |s: &str| {
        s.is_empty()
            || COMPILER_NAMES.contains(&s)
            || (s.starts_with('<') && s.ends_with('>'))
            || source.contains(s)
            || source.contains(&escaped(s))
            || s.lines().all(|l| source.contains(l.trim()))
    };
    for c in &module.code {
        for n in std::iter::once(&c.name)
            .chain(&c.names)
            .chain(&c.const_strings)
        {
            if !explained(n) {
                return Some(n.clone());
            }
        }
    }
    None
}

/// Whether a `.pyc` matches `source` (see the module documentation): the header's size or hash
/// agrees and [`first_unexplained`] finds nothing. `Err` says why not.
pub fn matches_source(header: &PycHeader, module: &Module, source: &[u8]) -> Result<(), String> {
    match header.kind {
        PycKind::Timestamp { source_size, .. } => {
            let size = source.len() as u64 & 0xffff_ffff;
            if u64::from(source_size) != size {
                return Err(format!(
                    "the header records a {source_size}-byte source; the source is {} bytes",
                    source.len()
                ));
            }
        }
        PycKind::Hash { hash, .. } => {
            if super::marshal::source_hash(header.magic, header.minor, source) != hash {
                return Err("the header's source hash is not the source's".into());
            }
        }
    }
    let text = String::from_utf8_lossy(source);
    match first_unexplained(module, &text) {
        Some(name) => Err(format!(
            "the bytecode uses `{}`, which the source does not contain",
            crate::model::problem::excerpt(&name, 60)
        )),
        None => Ok(()),
    }
}

/// Where the source of the `.pyc` at `rel` would be: `a/__pycache__/m.cpython-311.pyc` and
/// `a/__pycache__/m.cpython-311.opt-1.pyc` -> `a/m.py`; `a/m.pyc` -> `a/m.py`.
pub fn source_path_of(rel: &str) -> Option<String> {
    let (dir, file) = rel.rsplit_once('/').unwrap_or(("", rel));
    let stem = file
        .strip_suffix(".pyc")
        .or_else(|| file.strip_suffix(".pyo"))?;
    let (dir, module) = match dir.rsplit_once('/') {
        Some((parent, "__pycache__")) => (parent.to_string(), stem.split('.').next()?),
        None if dir == "__pycache__" => (String::new(), stem.split('.').next()?),
        _ => (dir.to_string(), stem),
    };
    if module.is_empty() {
        return None;
    }
    Some(if dir.is_empty() {
        format!("{module}.py")
    } else {
        format!("{dir}/{module}.py")
    })
}

#[cfg(test)]
mod tests {
    use super::super::marshal::{Limits, parse_pyc};
    use super::*;

    const OS_SYSTEM: &[u8] =
        include_bytes!("../../tests/fixtures/bytecode/os_system.cpython-311.pyc");
    const OS_SYSTEM_HASH: &[u8] =
        include_bytes!("../../tests/fixtures/bytecode/os_system.hash.pyc");
    const OS_SYSTEM_SRC: &[u8] = include_bytes!("../../tests/fixtures/bytecode/os_system.py");
    const FROM_IMPORT: &[u8] =
        include_bytes!("../../tests/fixtures/bytecode/from_import.cpython-311.pyc");
    const NESTED: &[u8] = include_bytes!("../../tests/fixtures/bytecode/nested.cpython-311.pyc");
    const CLEAN: &[u8] = include_bytes!("../../tests/fixtures/bytecode/clean.cpython-311.pyc");
    const CLEAN_SRC: &[u8] = include_bytes!("../../tests/fixtures/bytecode/clean.py");

    fn sites(pyc: &[u8]) -> Vec<(String, String, Option<u32>, When)> {
        let p = parse_pyc(pyc, &Limits::default()).unwrap();
        resolve(&p.module, p.header.minor)
            .into_iter()
            .map(|s| (s.name, s.code, s.line, s.when))
            .collect()
    }

    #[test]
    fn resolves_os_system_at_import_time_with_its_line() {
        let s = sites(OS_SYSTEM);
        assert!(
            s.contains(&("os.system".into(), "<module>".into(), Some(4), When::Import)),
            "{s:?}"
        );
    }

    #[test]
    fn resolves_from_imports_with_aliases() {
        let s = sites(FROM_IMPORT);
        assert!(
            s.contains(&("subprocess.Popen".into(), "run".into(), Some(6), When::Call)),
            "{s:?}"
        );
    }

    #[test]
    fn resolves_module_aliases_in_nested_functions() {
        let s = sites(NESTED);
        assert!(
            s.contains(&(
                "os.popen".into(),
                "Loader.load.<locals>.inner".into(),
                Some(7),
                When::Call
            )),
            "{s:?}"
        );
    }

    #[test]
    fn a_pyc_matches_its_own_source_and_not_another() {
        let p = parse_pyc(OS_SYSTEM, &Limits::default()).unwrap();
        assert_eq!(matches_source(&p.header, &p.module, OS_SYSTEM_SRC), Ok(()));
        let h = parse_pyc(OS_SYSTEM_HASH, &Limits::default()).unwrap();
        assert_eq!(matches_source(&h.header, &h.module, OS_SYSTEM_SRC), Ok(()));
        // Clean source of the same size: the header agrees, the names do not.
        let mut padded = CLEAN_SRC.to_vec();
        padded.resize(OS_SYSTEM_SRC.len(), b' ');
        let e = matches_source(&p.header, &p.module, &padded).unwrap_err();
        assert!(e.contains("`os`") || e.contains("`system`"), "{e}");
        let c = parse_pyc(CLEAN, &Limits::default()).unwrap();
        assert_eq!(matches_source(&c.header, &c.module, CLEAN_SRC), Ok(()));
        assert!(matches_source(&c.header, &c.module, OS_SYSTEM_SRC).is_err());
        assert!(matches_source(&h.header, &h.module, CLEAN_SRC).is_err());
    }

    #[test]
    fn source_paths_of_pycs() {
        assert_eq!(
            source_path_of("m/__pycache__/modeling.cpython-311.pyc").as_deref(),
            Some("m/modeling.py")
        );
        assert_eq!(
            source_path_of("__pycache__/a.cpython-39.opt-1.pyc").as_deref(),
            Some("a.py")
        );
        assert_eq!(source_path_of("m/x.pyc").as_deref(), Some("m/x.py"));
        assert_eq!(source_path_of("m/x.bin"), None);
    }
}
