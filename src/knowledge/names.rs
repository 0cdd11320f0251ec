//! Names every judge must spell the same way (issue 38: "one alias table, one installer list,
//! one loader list"). Before this module the pickle judge, the code judge and the bytecode judge
//! each kept their own copy, and the copies disagreed (`builtins` -> `builtins` in one,
//! `builtins` -> `""` in another; 18 installers in one list, 7 in the other). Each table below is
//! the only one of its kind; the doc comment of each says which judges read it, and the tests at
//! the end fail when a name is known to one judge and not to another.

/// Module renames applied to the first dotted component of a name before any table is
/// consulted. `_compat_pickle.IMPORT_MAPPING` (Python 2 names that `fix_imports` rewrites) plus
/// the C accelerator and OS-specific modules that re-export or implement a public module
/// (ModelAudit `OS_MODULE_ALIASES`; picklescan lists `posix` and `nt` for the same reason), and
/// the drop-in backports that code imports under another name (`pickle5`, `subprocess32`).
///
/// `__builtin__` (Python 2) and `__builtins__` (the module's name inside a frame) both reach
/// `builtins`. Read by the pickle judge (`knowledge::normalize_module`, so `classify_global`,
/// `judge_by_name` and the joblib reader), by the code judge and the bytecode judge
/// (`capabilities::normalize`, so `capabilities::lookup`), and by the code judge's persistence
/// check (a write to a builtin). The code judge then drops `builtins.`: its table keys builtins
/// by their bare names (`exec`), as Python code calls them.
pub const MODULE_ALIASES: &[(&str, &str)] = &[
    ("__builtin__", "builtins"),
    ("__builtins__", "builtins"),
    ("copy_reg", "copyreg"),
    ("posix", "os"),
    ("nt", "os"),
    ("posixpath", "os.path"),
    ("ntpath", "os.path"),
    ("_operator", "operator"),
    ("_pickle", "pickle"),
    ("cPickle", "pickle"),
    ("pickle5", "pickle"),
    ("_io", "io"),
    ("_functools", "functools"),
    ("_socket", "socket"),
    ("_ssl", "ssl"),
    ("_posixsubprocess", "subprocess"),
    ("_subprocess", "subprocess"),
    ("_winapi", "subprocess"),
    ("subprocess32", "subprocess"),
    ("_signal", "signal"),
    ("_thread", "threading"),
    ("thread", "threading"),
    ("_ctypes", "ctypes"),
    ("_sqlite3", "sqlite3"),
    ("_frozen_importlib", "importlib"),
    ("_frozen_importlib_external", "importlib"),
    ("_imp", "importlib"),
    ("_bootlocale", "locale"),
    ("urllib2", "urllib"),
    ("httplib", "http.client"),
    ("Tkinter", "tkinter"),
    ("Queue", "queue"),
    ("SocketServer", "socketserver"),
    ("xmlrpclib", "xmlrpc.client"),
    ("UserDict", "collections"),
    ("UserList", "collections"),
    // `_compat_pickle.IMPORT_MAPPING` too: Python 3.4 wrote `collections.defaultdict` as
    // `UserString.defaultdict` for protocols 0-2 (issue 15, cause 7).
    ("UserString", "collections"),
    ("_collections", "collections"),
];

/// Local names that conventionally stand for a module (`import numpy as np`), used when a
/// notebook cell or snippet calls one it never imported. Not module spellings: Python has no
/// module `tf`, so a pickle naming one fails to import, and the pickle judge does not read this
/// table. Read by the code judge's name resolution (`code::python::bindings`, an unbound `tf.x`
/// is also `tensorflow.x`) and its prefilter.
pub const CONVENTIONAL_IMPORTS: &[(&str, &str)] =
    &[("np", "numpy"), ("pd", "pandas"), ("tf", "tensorflow")];

/// The module a first dotted component stands for, when it is one of [`MODULE_ALIASES`].
pub fn canonical_module(first: &str) -> Option<&'static str> {
    MODULE_ALIASES
        .iter()
        .find(|(alias, _)| *alias == first)
        .map(|(_, canonical)| *canonical)
}

/// Whether a first dotted component is the builtins module under any spelling.
pub fn is_builtins(first: &str) -> bool {
    canonical_module(first).unwrap_or(first) == "builtins"
}

/// Package installers and build front ends: a program on a command line (`pip install`), a
/// module run as `__main__` (`python -m pip`), or a module whose API installs (`pip.main`,
/// CVE-2025-1716's gadget). Read by the pickle judge (`judge_by_name`: `main` of one of these),
/// the code judge's command check (`capabilities::is_install_command`, which also accepts
/// `<name>3.x`) and its `python -m` check, and the code judge's package table
/// (`capabilities::PACKAGES` gets one purpose entry per installer from its `api`).
pub const INSTALLERS: &[Installer] = &[
    Installer::module("pip"),
    Installer::command("pip3"),
    Installer::module("pipx"),
    Installer::api("setuptools", &["setuptools.command.easy_install"]),
    Installer::api("distutils", &["distutils.core.run_setup"]),
    Installer::api("ensurepip", &["ensurepip.bootstrap"]),
    Installer::module("easy_install"),
    Installer::api("wheel", &["wheel.cli.main"]),
    // `uv` and `build` are also names of a model's own modules (texture coordinates, a model
    // builder): only the packages' API.
    Installer::api(
        "build",
        &["build.ProjectBuilder", "build.env.DefaultIsolatedEnv"],
    ),
    Installer::module("twine"),
    Installer::module("virtualenv"),
    Installer::api("venv", &["venv.create", "venv.EnvBuilder"]),
    Installer::module("conda"),
    Installer::module("conda_env"),
    Installer::module("mamba"),
    Installer::module("poetry"),
    Installer::module("pdm"),
    Installer::module("hatch"),
    Installer::module("flit"),
    Installer::api("uv", &["uv.find_uv_bin"]),
    // `pkg_resources.require` resolves requirements and, with setuptools' installer, fetches them.
    Installer::api("pkg_resources", &["pkg_resources.require"]),
];

/// One package installer of [`INSTALLERS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Installer {
    /// The program and the top-level module (`pip`).
    pub name: &'static str,
    /// What the code judge keys on: `None` for every attribute of the module (`pip.*`),
    /// `Some(names)` for those callables only, when the module name is common enough to be a
    /// model's own module or has harmless parts (`uv`, `build`, `setuptools`).
    pub api: Option<&'static [&'static str]>,
}

impl Installer {
    const fn module(name: &'static str) -> Installer {
        Installer { name, api: None }
    }

    const fn api(name: &'static str, api: &'static [&'static str]) -> Installer {
        Installer {
            name,
            api: Some(api),
        }
    }

    /// A program only, with no importable module (`pip3`).
    const fn command(name: &'static str) -> Installer {
        Installer {
            name,
            api: Some(&[]),
        }
    }
}

/// Whether `name` (a program's base name or a top-level module) is one of [`INSTALLERS`].
pub fn is_installer(name: &str) -> bool {
    INSTALLERS.iter().any(|i| i.name == name)
}

/// Callables that load a native library into the process, whose initialisers run on load.
/// Canonical spellings (after [`MODULE_ALIASES`]); `handle` is whether the call returns a
/// library handle whose attributes are the library's C functions.
///
/// Read by the code judge (`capabilities::ENTRIES` gets a native-load entry for each, and
/// `capabilities::returns_library` answers from `handle`), the bytecode judge (through the same
/// lookup), the code judge's unsafe-load check (`code::python::loaders`, SRC004
/// `native-library-load`, for the `direct` ones) and the pickle judge
/// (`classify_global`: each is dangerous as `native-code`).
pub const NATIVE_LOADERS: &[NativeLoader] = &[
    NativeLoader::handle("ctypes.CDLL"),
    NativeLoader::handle("ctypes.PyDLL"),
    NativeLoader::handle("ctypes.WinDLL"),
    NativeLoader::handle("ctypes.OleDLL"),
    NativeLoader::handle("ctypes.cdll.LoadLibrary"),
    NativeLoader::handle("ctypes.pydll.LoadLibrary"),
    NativeLoader::handle("ctypes.windll.LoadLibrary"),
    NativeLoader::handle("ctypes.oledll.LoadLibrary"),
    NativeLoader::other("ctypes.LibraryLoader", NATIVE),
    // `_ctypes.dlopen` and `_ctypes.LoadLibrary`, spelled through the alias table.
    NativeLoader::other("ctypes.dlopen", NATIVE),
    NativeLoader::other("ctypes.LoadLibrary", NATIVE),
    // cffi's `ffi.dlopen` on whatever `ffi` is: a method name, matched on any receiver.
    NativeLoader {
        method: true,
        direct: false,
        ..NativeLoader::handle("dlopen")
    },
    NativeLoader::direct("torch.ops.load_library"),
    NativeLoader::direct("torch.classes.load_library"),
    NativeLoader::other("torch.utils.cpp_extension.load", NATIVE),
    NativeLoader::other("torch.utils.cpp_extension.load_inline", NATIVE),
    NativeLoader::direct("tensorflow.load_op_library"),
    NativeLoader::direct("tensorflow.load_library"),
    NativeLoader::other("tensorflow.experimental.register_filesystem_plugin", NATIVE),
    NativeLoader::other("imp.load_dynamic", "CPython imp (removed 3.12)"),
    NativeLoader::other(
        "importlib.machinery.ExtensionFileLoader",
        "CPython importlib",
    ),
    NativeLoader::other(
        "importlib.util.spec_from_file_location",
        "CPython importlib (an extension module by path)",
    ),
];

const NATIVE: &str = "CPython ctypes; cffi dlopen; PyTorch torch.ops.load_library, cpp_extension; TF load_op_library";

/// One loader of [`NATIVE_LOADERS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NativeLoader {
    /// The canonical dotted name, or a method name when `method` is set.
    pub name: &'static str,
    /// Whether `name` is a method name matched on any receiver (`ffi.dlopen`).
    pub method: bool,
    /// Whether the call returns a library handle (`ctypes.CDLL(...)`).
    pub handle: bool,
    /// Whether SRC004 reports the call as `native-library-load` (a library loaded by path,
    /// as opposed to one compiled, registered or created without a path).
    pub direct: bool,
    /// Where the entry comes from.
    pub source: &'static str,
}

impl NativeLoader {
    const fn handle(name: &'static str) -> NativeLoader {
        NativeLoader {
            name,
            method: false,
            handle: true,
            direct: true,
            source: NATIVE,
        }
    }

    const fn direct(name: &'static str) -> NativeLoader {
        NativeLoader {
            handle: false,
            ..NativeLoader::handle(name)
        }
    }

    const fn other(name: &'static str, source: &'static str) -> NativeLoader {
        NativeLoader {
            handle: false,
            direct: false,
            source,
            ..NativeLoader::handle(name)
        }
    }
}

/// The loader of [`NATIVE_LOADERS`] named `name` (canonical spelling), if any.
pub fn native_loader(name: &str) -> Option<&'static NativeLoader> {
    NATIVE_LOADERS.iter().find(|l| l.name == name)
}

/// Canonical spelling of a module name: the first dotted component is renamed through the one
/// alias table, [`MODULE_ALIASES`] (`posix` and `nt` -> `os`, `__builtin__` -> `builtins`, `copy_reg` -> `copyreg`,
/// `_operator` -> `operator`, `_pickle` -> `pickle`, `_io` -> `io`, ...).
pub fn normalize_module(m: &str) -> std::borrow::Cow<'_, str> {
    let (head, rest) = match m.split_once('.') {
        Some((head, rest)) => (head, Some(rest)),
        None => (m, None),
    };
    let Some(canonical) = canonical_module(head) else {
        return std::borrow::Cow::Borrowed(m);
    };
    match rest {
        Some(rest) => std::borrow::Cow::Owned(format!("{canonical}.{rest}")),
        None => std::borrow::Cow::Borrowed(canonical),
    }
}

#[cfg(test)]
mod tests {
    //! Issue 38: "a test fails when a name is in one judge's view and not another's, in both
    //! directions". The pickle judge is `classify_global`/`normalize_module`/`judge_by_name`,
    //! the code judge and the bytecode judge share `capabilities::normalize`/`lookup` (the
    //! bytecode judge pairs names through `may_end_exact` first).

    use super::*;
    use crate::knowledge::capabilities::{self, Capability, Match};
    use crate::knowledge::{ExtraLists, Verdict, classify_global, judge_by_name, normalize_module};

    fn pickle_dangerous(module: &str, name: &str) -> bool {
        matches!(
            classify_global(module, name, &ExtraLists::default()),
            Verdict::Dangerous { .. }
        )
    }

    #[test]
    fn every_alias_reaches_the_same_module_in_every_judge() {
        for (alias, canonical) in MODULE_ALIASES {
            assert_eq!(normalize_module(alias), *canonical, "pickle: {alias}");
            assert_eq!(
                normalize_module(&format!("{alias}.x")),
                format!("{canonical}.x"),
                "pickle: {alias}.x"
            );
            let code = capabilities::normalize(&format!("{alias}.x"));
            let want = if *canonical == "builtins" {
                "x".to_owned()
            } else {
                format!("{canonical}.x")
            };
            assert_eq!(code, want, "code: {alias}.x");
            assert_eq!(is_builtins(alias), *canonical == "builtins", "{alias}");
            // No chains: a canonical module is never itself an alias.
            let first = canonical.split('.').next().unwrap_or(canonical);
            assert_eq!(canonical_module(first), None, "{alias} -> {canonical}");
        }
        for builtins in ["builtins", "__builtin__", "__builtins__"] {
            assert!(is_builtins(builtins));
            assert!(
                pickle_dangerous(builtins, "exec"),
                "pickle: {builtins}.exec"
            );
            assert!(
                capabilities::lookup(&format!("{builtins}.exec")).is_some(),
                "code: {builtins}.exec"
            );
        }
        for module in [
            "os",
            "posix",
            "nt",
            "subprocess",
            "_subprocess",
            "subprocess32",
        ] {
            let function = if module.contains("subprocess") {
                "Popen"
            } else {
                "system"
            };
            assert!(pickle_dangerous(module, function), "pickle: {module}");
            assert!(
                capabilities::lookup(&format!("{module}.{function}")).is_some(),
                "code: {module}.{function}"
            );
        }
    }

    #[test]
    fn no_judge_keys_a_name_the_alias_table_renames() {
        // The other direction: a table keyed by `_thread.x` or `__builtin__.x` would hold a
        // name no judge ever looks up, because every judge normalises first.
        for entry in capabilities::all_entries().chain(capabilities::all_packages()) {
            if entry.matching == Match::Method {
                continue;
            }
            let first = entry.name.split('.').next().unwrap_or(entry.name);
            assert_eq!(canonical_module(first), None, "code table: {}", entry.name);
        }
        for loader in NATIVE_LOADERS {
            let first = loader.name.split('.').next().unwrap_or(loader.name);
            assert_eq!(canonical_module(first), None, "loader: {}", loader.name);
        }
        for installer in INSTALLERS {
            assert_eq!(canonical_module(installer.name), None, "{}", installer.name);
        }
        // A conventional local name is not a module spelling, and the other way round.
        for (local, module) in CONVENTIONAL_IMPORTS {
            assert_eq!(canonical_module(local), None, "{local}");
            assert_eq!(canonical_module(module), None, "{module}");
        }
    }

    #[test]
    fn every_installer_is_an_installer_to_every_judge() {
        for i in INSTALLERS {
            assert!(
                capabilities::is_install_command(&[i.name, "install"]),
                "command: {}",
                i.name
            );
            // A called `main` of an installer: the pickle judge's verdict by name.
            assert!(
                judge_by_name(i.name, "main").is_some(),
                "pickle: {}.main",
                i.name
            );
            let calls: Vec<String> = match i.api {
                None => vec![format!("{}.main", i.name)],
                Some(api) => api.iter().map(|a| (*a).to_owned()).collect(),
            };
            for call in calls {
                let entry = capabilities::lookup(&call);
                assert_eq!(
                    entry.map(|e| e.capability),
                    Some(Capability::PackageInstall),
                    "code: {call}"
                );
                let (module, name) = call.rsplit_once('.').unwrap_or(("", &call));
                assert!(pickle_dangerous(module, name), "pickle: {call}");
            }
        }
        assert!(!capabilities::is_install_command(&["npm2", "install"]));
    }

    #[test]
    fn every_name_a_judge_installs_with_is_in_the_installer_list() {
        for entry in capabilities::all_entries().chain(capabilities::all_packages()) {
            if entry.capability != Capability::PackageInstall {
                continue;
            }
            let top = entry.name.split('.').next().unwrap_or(entry.name);
            assert!(is_installer(top), "code table installs with {}", entry.name);
        }
    }

    #[test]
    fn every_loader_is_a_loader_to_every_judge() {
        for l in NATIVE_LOADERS {
            let call = if l.method {
                format!("ffi.{}", l.name)
            } else {
                l.name.to_owned()
            };
            let entry = capabilities::lookup(&call);
            assert_eq!(
                entry.map(|e| e.capability),
                Some(Capability::NativeLoad),
                "code: {call}"
            );
            assert_eq!(
                entry.is_some_and(capabilities::returns_library),
                l.handle,
                "handle: {call}"
            );
            if !l.method {
                let (module, name) = l.name.rsplit_once('.').unwrap_or(("", l.name));
                assert!(pickle_dangerous(module, name), "pickle: {}", l.name);
                // The bytecode judge pairs a name with a constant only through this.
                let last = l.name.rsplit('.').next().unwrap_or(l.name);
                assert!(capabilities::may_end_exact(last), "bytecode: {last}");
            }
        }
    }

    #[test]
    fn every_name_a_judge_loads_native_code_with_is_in_the_loader_list() {
        for entry in capabilities::all_entries() {
            if entry.capability != Capability::NativeLoad {
                continue;
            }
            assert!(
                NATIVE_LOADERS.iter().any(|l| l.name == entry.name),
                "code table loads native code with {}",
                entry.name
            );
        }
        assert!(
            capabilities::ENTRIES
                .iter()
                .all(|e| e.capability != Capability::NativeLoad)
        );
    }
}
