//! **native-load**: the code loads native code into the process.
//!
//! Reported for `ctypes.CDLL` and the other `ctypes` loaders, `cdll.LoadLibrary`, cffi's
//! `ffi.dlopen`, `torch.ops.load_library`, `torch.classes.load_library`,
//! `torch.utils.cpp_extension.load`/`load_inline`, TensorFlow's `load_op_library`, and
//! `imp.load_dynamic`. The library path is recorded when it is built from literals, so the
//! native-code judge (`SRC007`) can match it with a library the repository ships.
//!
//! Severity: **high** for a library shipped with the model (a path relative to the file, built
//! from `__file__`, or naming a `.so`/`.dll`/`.dylib`/`.pyd` that is not a system path) and for
//! C++ compiled from a string in the file (`load_inline`); **medium** for system libraries
//! (`libc.so.6`, `ctypes.util.find_library(...)`), paths computed at run time, and extensions
//! compiled from source files at run time (kernels that transformers' RWKV, MRA and YOSO build
//! on first use: a warning to review the sources, not a deny).

use super::analyzer::{Analyzer, CallSite};
use crate::code::python::field::{Field, Fields};
use crate::knowledge::capabilities::Capability;
use crate::model::finding::Severity;

/// A native load.
pub(super) fn judge<'s>(a: &mut Analyzer<'s, '_, '_>, site: &CallSite<'s>) {
    // `load_inline` compiles C++ written into the file itself: shipped native code.
    let inline = site.name.ends_with("load_inline");
    let compiles = compiles_sources(&site.name);
    // A loader class takes the module name first and the path second.
    let path = if site.name.ends_with("ExtensionFileLoader")
        || site.name.ends_with("spec_from_file_location")
    {
        site.args.arg(1, &["path", "location"])
    } else if compiles_sources(&site.name) {
        site.args.arg(1, &["sources"])
    } else {
        site.args.arg(0, &["name", "path", "library", "lib_path"])
    };
    if site.name.ends_with("spec_from_file_location")
        && !path.is_some_and(|p| is_library_name(&a.path_fragments(p)))
    {
        // A `.py` module loaded by path is the repository's own code, judged on its own.
        return;
    }
    let literal = path.and_then(|p| a.string(p));
    let fragments = path.map(|p| a.path_fragments(p)).unwrap_or_default();
    let from_file = path.is_some_and(|p| a.uses_own_file(p));
    // `find_library("c") or "libc.so.6"`: the system's library, whatever literal follows.
    let found_on_system = path.is_some_and(|p| {
        a.any_node(p, |a, n| {
            n.kind() == "call"
                && n.field(Field::Function)
                    .is_some_and(|f| a.resolve(f).iter().any(|r| r == "ctypes.util.find_library"))
        })
    });
    let shipped = !compiles
        && !inline
        && !found_on_system
        && (from_file
            || literal
                .as_deref()
                .is_some_and(|l| is_library_name(l) && !is_system_path(l) && l.contains('/'))
            || (literal.is_none() && is_library_name(&fragments) && !is_system_path(&fragments)));
    let shown = path.map(|p| a.excerpt(a.text(p))).unwrap_or_default();
    let (severity, detail) = if inline {
        (
            Severity::High,
            "compiles and loads C++ source written in the file (`load_inline`)".to_owned(),
        )
    } else if compiles && from_file {
        // Medium, not high: transformers' own RWKV, MRA and YOSO modeling files build their
        // shipped kernels this way (measured with scripts/transformers-precision.sh, all
        // families); the sources are in the repository for review, and `load_inline`, whose
        // C++ sits in the Python file itself, stays high.
        (
            Severity::Medium,
            format!("compiles and loads C++/CUDA sources shipped with the model (`{shown}`)"),
        )
    } else if compiles {
        (
            Severity::Medium,
            format!("compiles and loads a C++/CUDA extension (`{shown}`)"),
        )
    } else if shipped {
        (
            Severity::High,
            format!("loads a library shipped with the model (`{shown}`)"),
        )
    } else {
        (
            Severity::Medium,
            format!("loads a native library (`{shown}`)"),
        )
    };
    let at = a.push(
        site.node,
        Capability::NativeLoad,
        severity,
        site.confidence,
        &site.name,
        detail,
        site.entry.cwe,
    );
    if let Some(s) = a.sites.get_mut(at) {
        s.library = literal.or_else(|| (!fragments.is_empty()).then_some(fragments));
    }
}

/// `torch.utils.cpp_extension.load` (sources named by path; `load_inline` carries its source).
fn compiles_sources(name: &str) -> bool {
    name == "torch.utils.cpp_extension.load"
}

fn is_library_name(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    [".so", ".dll", ".dylib", ".pyd"]
        .iter()
        .any(|e| lower.ends_with(e) || lower.contains(&format!("{e}.")))
}

fn is_system_path(path: &str) -> bool {
    [
        "/usr/",
        "/lib/",
        "/lib64/",
        "/system/",
        "c:/windows",
        "c:\\windows",
    ]
    .iter()
    .any(|p| path.to_ascii_lowercase().starts_with(p))
        || !path.contains('/')
}
