//! **persistence**: the code changes something outside the model's own folder that outlives
//! the load, replaces functions other code relies on, or defers work to run later.
//!
//! Reported for
//! - writes to shell profiles, `sitecustomize`/`usercustomize`, `site-packages` (also through
//!   `site.getsitepackages()`), crontabs, systemd units, autostart entries, `authorized_keys`
//!   and the other persistence paths of the capability table, through `open(p, "w")`,
//!   `Path.write_text`, `shutil.copy`, `os.rename`, ...; writes inside the model folder are not
//!   sites;
//! - tampering: assigning to an attribute of an imported module (`torch.load = evil`,
//!   `pickle.Unpickler = …`, `builtins.open = …`, `setattr(torch, "load", …)`), writing to
//!   `sys.modules`, and installing import hooks (`sys.meta_path`, `sys.path_hooks`);
//! - deferral: `atexit.register`, `threading.Timer`/`Thread`, `signal.signal`,
//!   `sys.settrace`/`setprofile`, `os.register_at_fork`, `weakref.finalize` of a function that
//!   itself has sites (a thread that loads data is not one).
//!
//! Severity: **critical** for persistence paths, replacing loaders and security-relevant
//! functions (anything in the capability table, `builtins`, `sys`, `os`, `pickle`, `load`-like
//! names), `sys.modules` and import hooks; a deferral is as severe as what it defers;
//! **medium** for replacing a model library's function with one of the file's own (a
//! monkeypatch such as a faster attention kernel).

use crate::code::python::field::{Field, Fields};
use tree_sitter::Node;

use super::analyzer::{Analyzer, CallSite, Confidence};
use crate::knowledge::capabilities::{self as caps, Capability};
use crate::knowledge::places;
use crate::model::finding::Severity;

/// Modules whose functions, replaced, change what every later load does.
const CRITICAL_MODULES: &[&str] = &[
    "builtins",
    "pickle",
    "os",
    "sys",
    "subprocess",
    "importlib",
    "socket",
    "ssl",
    "io",
    "shutil",
    "marshal",
    "json",
    "requests",
    "urllib",
    "http",
    "huggingface_hub",
    "safetensors",
];

/// `sys` attributes that hold this process's own state (its arguments, standard streams, prompts
/// and output settings), not a loader or a hook. Code saves and restores them
/// (`sys.argv = [sys.argv[0]]` before argparse, `sys.stdout = buffer` to capture output) without
/// changing what a later load runs, so replacing one is judged like any model library's attribute
/// (medium, and only when the new value is code); the hooks (`excepthook`, `meta_path`,
/// `path_hooks`, `modules`) stay critical.
const SYS_PROCESS_STATE: &[&str] = &[
    "argv",
    "orig_argv",
    "stdin",
    "stdout",
    "stderr",
    "ps1",
    "ps2",
    "tracebacklimit",
    "dont_write_bytecode",
];

/// Function names whose replacement hijacks loading or evaluation, on any module.
const CRITICAL_NAMES: &[&str] = &[
    "load",
    "loads",
    "save",
    "Unpickler",
    "load_file",
    "safe_open",
    "hf_hub_download",
    "snapshot_download",
    "from_pretrained",
    "open",
    "urlopen",
    "import_module",
    "__import__",
    "exec",
    "eval",
    "compile",
];

/// Whether `open(…)`'s mode writes.
pub(super) fn is_write_mode<'s>(a: &Analyzer<'s, '_, '_>, site: &CallSite<'s>) -> bool {
    site.args
        .arg(1, &["mode"])
        .and_then(|m| a.string(m))
        .is_some_and(|m| m.contains(['w', 'a', 'x', '+']))
}

/// `open(p, "w")`, `shutil.copy(src, p)`, `Path(p).write_text(…)`.
pub(super) fn judge_write<'s>(a: &mut Analyzer<'s, '_, '_>, site: &CallSite<'s>) {
    let last = site.name.rsplit('.').next().unwrap_or_default();
    let target = match last {
        // `os.open(p, os.O_WRONLY | os.O_APPEND | …)`: the flags say it writes.
        "open" if site.name == "os.open" => {
            let writes = site.args.arg(1, &["flags"]).is_some_and(|f| {
                ["O_WRONLY", "O_RDWR", "O_APPEND", "O_CREAT", "O_TRUNC"]
                    .iter()
                    .any(|w| a.text(f).contains(w))
            });
            if !writes {
                return;
            }
            site.args.arg(0, &["path"])
        }
        "open" => {
            if !is_write_mode(a, site) {
                return;
            }
            site.args.arg(0, &["file"])
        }
        "write_text" | "write_bytes" => site
            .node
            .field(Field::Function)
            .and_then(|f| f.field(Field::Object)),
        _ => site.args.arg(1, &["dst"]),
    };
    let Some(target) = target else { return };
    let fragments = a.path_fragments(target);
    let into_site = mentions_site_directory(a, target);
    let class = places::path_class(&fragments);
    let what = match class {
        Some(c) => c.what,
        None if into_site => "installed packages (site-packages or a package's own files)",
        None => return,
    };
    let detail = format!("writes to {what} (`{}`)", a.excerpt(a.text(target)));
    a.push(
        site.node,
        Capability::Persistence,
        Severity::Critical,
        site.confidence,
        &site.name,
        detail,
        912,
    );
}

/// Whether a path expression is built from `site.getsitepackages()` and friends, or from the
/// location of an installed package (`os.path.dirname(transformers.__file__)`).
fn mentions_site_directory<'s>(a: &Analyzer<'s, '_, '_>, node: Node<'s>) -> bool {
    a.any_node(node, |a, n| match n.kind() {
        "attribute" => {
            let attr = n.field(Field::Attribute).map(|x| a.text(x));
            let object = n.field(Field::Object);
            let installed = matches!(attr, Some("__file__" | "__path__"))
                && object.is_some_and(|o| {
                    o.kind() == "identifier" && a.sc.bindings.alias(a.text(o)).is_some()
                });
            installed
                || a.resolve(n)
                    .iter()
                    .any(|name| places::is_site_directory(name))
        }
        "identifier" => a
            .resolve(n)
            .iter()
            .any(|name| places::is_site_directory(name)),
        _ => false,
    })
}

/// Severity of replacing `target` (a resolved dotted name).
fn tamper_severity(target: &str) -> Severity {
    if target
        .strip_prefix("sys.")
        .is_some_and(|attr| SYS_PROCESS_STATE.contains(&attr))
    {
        return Severity::Medium;
    }
    let norm = caps::normalize(target);
    let first = target.split('.').next().unwrap_or_default();
    let last = target.rsplit('.').next().unwrap_or_default();
    let critical = caps::lookup(target).is_some()
        || crate::knowledge::names::is_builtins(first)
        || CRITICAL_MODULES.contains(&norm.split('.').next().unwrap_or_default())
        || CRITICAL_NAMES.contains(&last);
    if critical {
        Severity::Critical
    } else {
        Severity::Medium
    }
}

/// `setattr(module, "name", value)`.
pub(super) fn judge_setattr<'s>(a: &mut Analyzer<'s, '_, '_>, site: &CallSite<'s>) {
    let (Some(obj), Some(name)) = (site.args.positional.first(), site.args.positional.get(1))
    else {
        return;
    };
    let Some(attr) = a.string(*name) else { return };
    let Some(module) = imported_module(a, *obj) else {
        return;
    };
    let target = format!("{module}.{attr}");
    let severity = tamper_severity(&target);
    if severity < Severity::Critical && !replaces_with_code(a, site.args.positional.get(2).copied())
    {
        return;
    }
    a.push(
        site.node,
        Capability::Persistence,
        severity,
        site.confidence,
        &site.name,
        format!("replaces `{}`", a.excerpt(&target)),
        471,
    );
}

/// The module an expression names, when its first identifier is an import of this file.
fn imported_module<'s>(a: &Analyzer<'s, '_, '_>, node: Node<'s>) -> Option<String> {
    let mut first = node;
    for _ in 0..64 {
        match first.kind() {
            "attribute" => first = first.field(Field::Object)?,
            _ => break,
        }
    }
    let names = a.resolve(node);
    let imported = match first.kind() {
        "identifier" => {
            let t = a.text(first);
            a.sc.bindings.alias(t).is_some() || matches!(t, "__builtins__")
        }
        // `__import__("os")`, `importlib.import_module("torch")`.
        "call" => !names.is_empty(),
        _ => false,
    };
    if !imported {
        return None;
    }
    names.into_iter().next()
}

/// Whether a replacement value is code: a lambda, a function or class of this file, or a
/// reference to another callable.
fn replaces_with_code<'s>(a: &Analyzer<'s, '_, '_>, value: Option<Node<'s>>) -> bool {
    let Some(value) = value else { return false };
    match value.kind() {
        "lambda" => true,
        "identifier" => {
            let t = a.text(value);
            a.has_function(t) || a.sc.bindings.alias(t).is_some()
        }
        // `sys.__stdout__` and its kin are the interpreter's saved originals: putting one back
        // restores, it replaces nothing.
        "attribute" => {
            let t = a.text(value);
            !(t.starts_with("sys.__") && t.ends_with("__"))
        }
        _ => false,
    }
}

/// `torch.load = evil`, `sys.modules["x"] = m`, `__builtins__["open"] = f`.
pub(super) fn judge_assignment<'s>(a: &mut Analyzer<'s, '_, '_>, node: Node<'s>) {
    let (Some(left), Some(right)) = (node.field(Field::Left), node.field(Field::Right)) else {
        return;
    };
    match left.kind() {
        "attribute" => {
            let Some(object) = left.field(Field::Object) else {
                return;
            };
            let Some(attr) = left.field(Field::Attribute).map(|x| a.text(x)) else {
                return;
            };
            let Some(module) = imported_module(a, object) else {
                return;
            };
            let target = format!("{module}.{attr}");
            let severity = tamper_severity(&target);
            if is_literal(right) {
                return;
            }
            if severity < Severity::Critical && !replaces_with_code(a, Some(right)) {
                return;
            }
            let detail = format!(
                "replaces `{}` with `{}`",
                a.excerpt(&target),
                a.excerpt(a.text(right))
            );
            a.push(
                node,
                Capability::Persistence,
                severity,
                Confidence::High,
                &format!("{target} ="),
                detail,
                471,
            );
        }
        "subscript" => {
            let Some(value) = left.field(Field::Value) else {
                return;
            };
            let names = a.resolve(value);
            // `sys.modules[__name__] = _LazyModule(…)`: a package replacing its own entry (the
            // lazy-import pattern of transformers' `__init__.py`) tampers with nothing else.
            let own = left
                .field(Field::Subscript)
                .is_some_and(|k| a.text(k) == "__name__");
            let what = if own {
                return;
            } else if names.iter().any(|n| n == "sys.modules") {
                "sys.modules"
            } else if names.iter().any(|n| {
                matches!(
                    n.as_str(),
                    "__builtins__" | "builtins.__dict__" | "__builtins__.__dict__"
                )
            }) || a.text(value) == "__builtins__"
            {
                "builtins"
            } else {
                return;
            };
            let detail = format!("writes `{}` (`{}`)", what, a.excerpt(a.text(left)));
            a.push(
                node,
                Capability::Persistence,
                Severity::Critical,
                Confidence::High,
                &format!("{what}[] ="),
                detail,
                471,
            );
        }
        _ => {}
    }
}

/// Whether `node` is a literal (a display of literals; a dictionary's pairs are not looked
/// into). With an explicit stack: fifty thousand nested lists are a loop (issue 37).
fn is_literal(node: Node<'_>) -> bool {
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "string" | "concatenated_string" | "integer" | "float" | "true" | "false" | "none" => {}
            "unary_operator" => match n.named_child(0) {
                Some(operand) => stack.push(operand),
                None => return false,
            },
            "list" | "tuple" | "set" | "dictionary" => {
                let mut c = n.walk();
                stack.extend(n.named_children(&mut c).filter(|i| i.kind() != "pair"));
            }
            _ => return false,
        }
    }
    true
}

/// `sys.meta_path.insert(0, Finder())`, `sys.path_hooks.append(h)`, `sys.modules.update(…)`;
/// and `Path("~/.bashrc").expanduser().open("a")`, a path object opened for writing.
pub(super) fn judge_unlisted<'s>(a: &mut Analyzer<'s, '_, '_>, node: Node<'s>, func: Node<'s>) {
    if func.kind() == "attribute"
        && func
            .field(Field::Attribute)
            .is_some_and(|m| a.text(m) == "open")
        && let Some(receiver) = func.field(Field::Object)
    {
        let args = a.sc.args(node);
        let writes = args
            .arg(0, &["mode"])
            .and_then(|m| a.string(m))
            .is_some_and(|m| m.contains(['w', 'a', 'x', '+']));
        if writes {
            let fragments = a.path_fragments(receiver);
            let what = match places::path_class(&fragments) {
                Some(c) if c.capability == Capability::Persistence => Some(c.what),
                _ if mentions_site_directory(a, receiver) => Some("installed packages"),
                _ => None,
            };
            if let Some(what) = what {
                let detail = format!("writes to {what} (`{}`)", a.excerpt(a.text(receiver)));
                a.push(
                    node,
                    Capability::Persistence,
                    Severity::Critical,
                    Confidence::Medium,
                    "pathlib.Path.open",
                    detail,
                    912,
                );
                return;
            }
        }
    }
    let names = a.resolve(func);
    let Some(name) = names.iter().find(|n| {
        [
            "sys.meta_path.",
            "sys.path_hooks.",
            "sys.modules.",
            "builtins.__dict__.",
            "vars.builtins.",
        ]
        .iter()
        .any(|p| n.starts_with(p))
    }) else {
        return;
    };
    let method = name.rsplit('.').next().unwrap_or_default();
    if !matches!(
        method,
        "append" | "insert" | "extend" | "update" | "setdefault" | "__setitem__"
    ) {
        return;
    }
    let detail = format!(
        "installs an import hook or module (`{}`)",
        a.excerpt(a.text(node))
    );
    let name = name.clone();
    a.push(
        node,
        Capability::Persistence,
        Severity::Critical,
        Confidence::High,
        &name,
        detail,
        471,
    );
}

/// `site.addsitedir`, `crontab.CronTab`, `winreg`: persistence by calling.
pub(super) fn judge_call<'s>(a: &mut Analyzer<'s, '_, '_>, site: &CallSite<'s>) {
    let args = site
        .args
        .node
        .map(|n| a.excerpt(a.text(n)))
        .unwrap_or_default();
    a.push(
        site.node,
        Capability::Persistence,
        Severity::Critical,
        site.confidence,
        &site.name,
        format!(
            "changes the system outside the model (`{}{args}`)",
            site.name
        ),
        site.entry.cwe,
    );
}

/// The callables a deferral registers (every argument that can be one).
pub(super) fn deferred_targets<'s>(site: &CallSite<'s>) -> Vec<Node<'s>> {
    let mut out: Vec<Node<'s>> = site.args.positional.clone();
    for (k, v) in &site.args.keywords {
        if matches!(
            *k,
            "target"
                | "function"
                | "func"
                | "callback"
                | "handler"
                | "before"
                | "after_in_child"
                | "after_in_parent"
        ) {
            out.push(*v);
        }
    }
    out
}

/// A deferral is a site when what it defers has sites: as severe as the worst of them.
pub(super) fn judge_deferral<'s>(
    a: &mut Analyzer<'s, '_, '_>,
    node: Node<'s>,
    name: &str,
    targets: &[Node<'s>],
) {
    let mut worst: Option<(Severity, String)> = None;
    for t in targets {
        let found = a.deferred_sites(*t);
        if let Some(found) = found
            && worst.as_ref().is_none_or(|(s, _)| found.0 > *s)
        {
            worst = Some(found);
        }
    }
    let Some((severity, what)) = worst else {
        return;
    };
    let detail = format!("defers {what} to `{name}`");
    a.push(
        node,
        Capability::Persistence,
        severity,
        Confidence::High,
        name,
        detail,
        912,
    );
}
