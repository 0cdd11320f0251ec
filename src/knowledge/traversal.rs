//! Dotted names that walk out of their module (issue 16): a name that reaches a dangerous
//! `module.name` through a module object, or steps through a module object at all.

use super::capabilities::Capability;
use super::dangerous::{DANGEROUS, TRAVERSAL, capability_of};
use super::names::{self, normalize_module};
use super::shapes::DANGEROUS_DUNDERS;
use super::verdict::covers;

// ---- issue 16: attribute traversal through module objects (dangerous side) ----
// Since protocol 4, `find_class` resolves a dotted name with a getattr chain from the imported
// module, so any module a library imported is one step away: `STACK_GLOBAL('torch.serialization',
// 'os.system')`, `numpy.core._internal` + `sys.modules`, `collections` + `_sys.modules`.
// Sources: fickling GHSA-5j3x-jp52-966f (dotted names reach any attribute); picklescan
// GHSA-655q-fx9r-782v and the JFrog 2025 picklescan bypass write-up (module re-exports).

/// Attribute names that are module objects wherever they appear in a dotted name: reaching one
/// hands the pickle everything that module holds. A single leading underscore is ignored
/// (`collections._sys`, `typing._os`-style private re-imports). Other spellings of these modules
/// (`posix`, `__builtin__`, `cPickle`) count through [`names::MODULE_ALIASES`].
pub(super) const MODULE_STEPS: &[&str] = &[
    "os",
    "sys",
    "subprocess",
    "builtins",
    "importlib",
    "imp",
    "runpy",
    "shutil",
    "socket",
    "ctypes",
    "marshal",
    "pickle",
    "pty",
    "posixsubprocess",
];

/// Module names that are only counted when they are a *step* (not the last component): as a
/// final name they are ordinary method or attribute names (`Foo.code`, `Model.inspect`).
pub(super) const MODULE_STEPS_INNER: &[&str] = &[
    "types",
    "code",
    "io",
    "inspect",
    "gc",
    "signal",
    "threading",
    "operator",
    "functools",
    "pdb",
    "codecs",
    "pathlib",
    "tempfile",
];

/// What a dotted name reaches beyond its module, if anything: the category and reason of the
/// verdict, and the traversal spelled out for the finding's message.
pub(super) struct Traversal {
    pub(super) capability: Capability,
    pub(super) reason: &'static str,
    pub(super) path: String,
}

/// Is this name component a module object (see [`MODULE_STEPS`])?
pub(super) fn module_step(part: &str, last: bool) -> bool {
    let bare = part.strip_prefix('_').filter(|b| !b.starts_with('_'));
    let canonical = |p: &str| names::canonical_module(p).map(|c| c.split('.').next().unwrap_or(c));
    [Some(part), bare]
        .into_iter()
        .flatten()
        .flat_map(|p| [Some(p), canonical(p)])
        .flatten()
        .any(|p| MODULE_STEPS.contains(&p) || (!last && MODULE_STEPS_INNER.contains(&p)))
}

/// Walk `name` from `module` one getattr at a time; report a dangerous `module.name` suffix or a
/// step through a module object.
pub(super) fn traverse(module: &str, name: &str) -> Option<Traversal> {
    let parts: Vec<&str> = name.split('.').collect();
    let spelled = |upto: usize, note: &str| {
        let mut s = format!("`{module}`");
        for p in &parts[..=upto] {
            s.push_str(&format!(" -> `.{p}`"));
        }
        format!("{s} ({note})")
    };
    // A suffix of the name that is itself a dangerous `module.name` (two components or more).
    for i in 0..parts.len().saturating_sub(1) {
        let head = parts[i];
        let bare = head.strip_prefix('_').filter(|b| !b.starts_with('_'));
        for h in [Some(head), bare].into_iter().flatten() {
            let rest = parts[i + 1..].join(".");
            let candidate = format!("{}.{rest}", normalize_module(h));
            if let Some(danger) = DANGEROUS.iter().find(|e| covers(e.path, &candidate)) {
                return Some(Traversal {
                    capability: capability_of(danger, &candidate),
                    reason: danger.reason,
                    path: spelled(
                        parts.len() - 1,
                        &format!("`.{head}` is a module object: reaches `{candidate}`"),
                    ),
                });
            }
        }
    }
    let last = parts.len() - 1;
    let step = parts
        .iter()
        .enumerate()
        .find(|(i, p)| module_step(p, *i == last))?;
    Some(Traversal {
        capability: TRAVERSAL,
        reason: "steps through a module object; getattr reaches everything that module holds",
        path: spelled(step.0, &format!("`.{}` is a module object", step.1)),
    })
}

/// The traversal a dotted (or module-valued) name performs, spelled out for a message, e.g.
/// ``"`torch.serialization` -> `.os` -> `.system` (`.os` is a module object: reaches `os.system`)"``.
/// `None` when the name stays inside its module.
pub fn explain_traversal(module: &str, name: &str) -> Option<String> {
    let module = normalize_module(module);
    if let Some(t) = traverse(&module, name) {
        return Some(t.path);
    }
    let parts: Vec<&str> = name.split('.').collect();
    let dunder = parts.iter().position(|p| {
        DANGEROUS_DUNDERS.contains(p)
            || (parts.len() > 1 && p.starts_with("__") && p.ends_with("__"))
    })?;
    let mut s = format!("`{module}`");
    for p in &parts[..=dunder] {
        s.push_str(&format!(" -> `.{p}`"));
    }
    Some(format!("{s} (`{}` is a dunder step)", parts[dunder]))
}
