//! [`classify_global`]: the verdict on one imported global, from the dangerous table, the name's
//! traversal and shape, the code judges' capability table, the standard-library inventory, the
//! safe lists and the policy's extra lists, in the precedence the folder's documentation gives.

use super::capabilities;
use super::dangerous::{DANGEROUS, FILES, TAMPER, TORCHSCRIPT_CALLS, TRAVERSAL, capability_of};
use super::names::normalize_module;
use super::safe::{SAFE, SAFE_STANDARD, is_value_type};
use super::shapes::{DANGEROUS_DUNDERS, DANGEROUS_METHODS, tampers};
use super::stdlib;
use super::traversal::traverse;
use super::verdict::{ExtraLists, POLICY_CATEGORY, Verdict, covers, covers_entry};

/// TorchScript's own class names (issue 15): a scripted module's `data.pkl` and `.debug_pkl`
/// members name `__torch__.<qualified class>`, which `torch.jit.load` resolves against the
/// archive's compiled `code/` (inspected as TorchScript, see [`torchscript_call`]), never by a
/// Python import; a plain unpickler cannot import a module of that name at all. PyTorch
/// `torch/csrc/jit/serialization/import.cpp` (`__torch__` prefix of `QualifiedName`s).
fn is_torchscript_class(module: &str) -> bool {
    module == "__torch__" || module.starts_with("__torch__.")
}

/// Call wrappers whose first argument is the callable they will call (issue 15, cause 4):
/// `functools.partial(f, *args)` and `functools.partialmethod(f, *args)` run nothing themselves,
/// and calling the result calls `f`. A pickle that builds one over a statically named global is
/// judged by that global (gensim models pickle partials of their own functions); built over
/// anything the scanner cannot name, the wrapper keeps its own `DANGEROUS` entry. Source:
/// CPython `Lib/functools.py` (`partial.__new__`, `partial.__setstate__`, `partialmethod`).
const CALL_WRAPPERS: &[(&str, &str)] = &[("functools", "partial"), ("functools", "partialmethod")];

/// True for a call wrapper judged by its target (`functools.partial`, `partialmethod`); aliases
/// are normalised.
pub fn is_call_wrapper(module: &str, name: &str) -> bool {
    let module = normalize_module(module);
    CALL_WRAPPERS
        .iter()
        .any(|(m, n)| *m == module && *n == name)
}

/// Whether a call in TorchScript source is dangerous: one of `names` (the dotted names the
/// callee may stand for) is a `TORCHSCRIPT_CALLS` entry or a dangerous global (`os.system`,
/// `subprocess.Popen`, ...). Returns the matching name with its category and reason.
pub fn torchscript_call(names: &[String]) -> Option<(String, &'static str, &'static str)> {
    for name in names {
        if let Some(e) = TORCHSCRIPT_CALLS.iter().find(|e| covers(e.path, name)) {
            return Some((name.clone(), e.capability.code(), e.reason));
        }
        let Some((module, attr)) = name.rsplit_once('.') else {
            continue;
        };
        if let Verdict::Dangerous { category, reason } =
            classify_global(module, attr, &ExtraLists::default())
        {
            return Some((name.clone(), category, reason));
        }
    }
    None
}

/// Classify one imported global. `module` and `name` are as the pickle spelled them; aliases are
/// normalised here. See the module documentation for the matching and precedence rules.
pub fn classify_global(module: &str, name: &str, extra: &ExtraLists) -> Verdict {
    let module = normalize_module(module);
    let qualified = format!("{module}.{name}");
    let user_dangerous = extra
        .dangerous
        .iter()
        .any(|(m, n)| covers_entry(m, n.as_deref(), &qualified));

    // Issue 32: a standard-library enum (or member) is a value, whatever its module holds.
    if is_value_type(&module, name) && !user_dangerous {
        return Verdict::Safe;
    }
    if let Some(danger) = DANGEROUS.iter().find(|e| covers(e.path, &qualified)) {
        return Verdict::Dangerous {
            category: capability_of(danger, &qualified).code(),
            reason: danger.reason,
        };
    }
    if let Some(t) = traverse(&module, name) {
        return Verdict::Dangerous {
            category: t.capability.code(),
            reason: t.reason,
        };
    }
    if tampers(name) {
        return Verdict::Dangerous {
            category: TAMPER.code(),
            reason: "calls a mutating method of module state (disarms safety lists, registries)",
        };
    }
    // Issue 32: one table of dangerous callables. What the code judges know (process
    // execution, dynamic code, network, credentials, persistence, installs, native loads;
    // `capabilities::ENTRIES`, each with its source) is dangerous in a pickle or a config too.
    // Method entries (`dlopen` on any receiver) are for code, where the receiver is unknown.
    if let Some(entry) =
        capabilities::lookup(&qualified).filter(|e| e.matching != capabilities::Match::Method)
    {
        return Verdict::Dangerous {
            category: entry.capability.code(),
            // Issue 39: a package judged by purpose says which purpose.
            reason: if capabilities::is_package(entry) {
                entry.source
            } else {
                entry.capability.phrase()
            },
        };
    }
    if let Some(verdict) = classify_name_shape(&module, name) {
        return verdict;
    }
    // Issue 39: the standard library, classified whole. A capability row denies whatever its
    // module holds; a value row vouches only for the callables the inventory lists.
    let standard = stdlib::classify(&module, name);
    if let Some(row) = standard.filter(|r| r.class != stdlib::Class::Value) {
        return Verdict::Dangerous {
            category: row.class.code(),
            reason: row.reason,
        };
    }
    if user_dangerous {
        return Verdict::Dangerous {
            category: POLICY_CATEGORY,
            reason: "denied by the policy",
        };
    }
    let builtin_safe = SAFE
        .iter()
        .chain(SAFE_STANDARD)
        .any(|(m, names)| *m == module && names.contains(&name))
        || is_torchscript_class(&module);
    if builtin_safe || standard.is_some() {
        return Verdict::Safe;
    }
    let user_safe = extra
        .safe
        .iter()
        .any(|(m, n)| covers_entry(m, n.as_deref(), &qualified));
    if user_safe {
        return Verdict::Safe;
    }
    Verdict::Unknown
}

/// Dangerous shapes of the name itself: dunder traversal and file methods of path classes.
fn classify_name_shape(module: &str, name: &str) -> Option<Verdict> {
    let parts: Vec<&str> = name.split('.').collect();
    let dotted = parts.len() > 1;
    let traversal = parts.iter().any(|p| {
        DANGEROUS_DUNDERS.contains(p) || (dotted && p.starts_with("__") && p.ends_with("__"))
    });
    if traversal {
        return Some(Verdict::Dangerous {
            category: TRAVERSAL.code(),
            reason: "dunder attribute walks from this object to arbitrary ones",
        });
    }
    let top = module.split('.').next().unwrap_or(module);
    let last = parts.last().copied().unwrap_or(name);
    let method_hit = DANGEROUS_METHODS
        .iter()
        .any(|(m, methods)| *m == top && dotted && methods.contains(&last));
    method_hit.then_some(Verdict::Dangerous {
        category: FILES.code(),
        reason: "path method reads or writes files",
    })
}
