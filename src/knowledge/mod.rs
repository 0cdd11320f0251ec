//! What modelgate knows about Python globals that pickles import: which callables are dangerous
//! (and which capability each gives), which are the plain rebuilders that PyTorch, NumPy and
//! joblib write, and how module aliases map to their canonical names. This is data, kept in one place with its sources named;
//! what a team decides on top of it (extra deny or allow entries) comes in through [`ExtraLists`].
//!
//! Sources, cited per entry group below:
//! - picklescan (mmaitre314/picklescan), `src/picklescan/scanner.py`: `_unsafe_globals`,
//!   `_safe_globals`, and the GHSA advisories exercised in `tests/init_data_files.py`.
//! - fickling (trailofbits/fickling), `fickling/fickle.py`: `UNSAFE_IMPORTS`, `SAFE_BUILTINS`,
//!   `PRIVATE_STDLIB_IMPORT_ALLOWLIST`, and GHSA-5j3x-jp52-966f (dotted names reach any attribute).
//! - ModelAudit (promptfoo/modelaudit), `modelaudit/detectors/suspicious_symbols.py`:
//!   `SUSPICIOUS_GLOBALS`, `ADVANCED_PICKLE_PATTERNS`, `OS_MODULE_ALIASES`, `DANGEROUS_BUILTINS`.
//! - modelscan (protectai/modelscan), severity levels doc: exec, eval, runpy, sys, open,
//!   breakpoint, os, subprocess, socket, nt, posix (critical); webbrowser, httplib, requests.api.
//! - PyTorch `torch/_weights_only_unpickler.py` (allowed globals of `weights_only=True`) and
//!   CPython `Lib/_compat_pickle.py` (the Python 2 module renames `fix_imports` applies).
//!
//! # Matching rules
//!
//! A global is classified by its qualified path `normalize_module(module) + "." + name`. Since
//! protocol 4 an unpickler resolves a dotted `name` with a getattr chain, so `numpy` +
//! `testing._private.utils.runstring` reaches the same function as the undotted spelling; matching
//! on the whole path closes that bypass.
//!
//! - A dangerous entry is a path prefix on component boundaries: `os` covers `os.system`,
//!   `os.path.join` and `os.anything.deeper`, but not `ossaudiodev`. A whole module is listed
//!   when every scanner above lists it (`os`, `subprocess`, `socket`, ...); `os.path` is therefore
//!   dangerous too: no legitimate model pickle imports it, and picklescan/fickling/ModelAudit all
//!   flag the whole of `os`, `posixpath` and `ntpath`.
//! - A dotted name with any dunder component (`__globals__`, `__builtins__`, ...) is dangerous
//!   (`dynamic-code`, like `getattr`): it walks from a harmless object to an arbitrary one.
//! - A safe entry matches the exact `(module, name)` pair only; dotted names are never safe.
//! - Precedence: built-in dangerous, then policy dangerous, then built-in safe, then policy safe,
//!   then unknown. A policy can deny anything, and can allow what is unknown, but it cannot
//!   silence a built-in dangerous entry: an allow entry such as `os` would otherwise turn the
//!   scanner off for the most common payload.
//!
//! # One vocabulary
//!
//! Every verdict's category is a [`Capability`](capabilities::Capability) code (`process-execution`, `dynamic-code`,
//! `file-system`, ...), the words the code judges use (issue 38), or [`POLICY_CATEGORY`] /
//! [`JUDGED_BY_NAME`] for names only the policy or a name's verb condemns. Where the
//! capability table decides a name by itself, the verdict takes its capability even under a
//! broader entry here (`os.getenv` under `os` is `credential-access`), so `PKL001` and
//! `SRC006` name the same capability for the same callable; `vocabulary.rs` tests that the
//! tables agree.
//!
//! scikit-learn, pandas and user classes are deliberately *unknown*, not safe: their `__setstate__`
//! methods run arbitrary library code, the class list changes with every release, and a team that
//! trusts them can say so in its policy.

mod by_name;
pub mod capabilities;
mod classify;
mod dangerous;
pub mod loaders;
pub mod names;
pub mod places;
mod references;
mod safe;
mod shapes;
pub mod stdlib;
mod torch_types;
mod traversal;
mod verdict;
#[cfg(test)]
mod vocabulary;
mod weights_only;

pub use by_name::{JUDGED_BY_NAME, judge_by_name};
pub use classify::{classify_global, is_call_wrapper, torchscript_call};
pub use names::normalize_module;
pub use references::{TORCHSCRIPT_REFERENCES, TRAVERSAL_REFERENCES, references};
pub use torch_types::{torch_dtype_itemsize, torch_storage_itemsize};
pub use traversal::explain_traversal;
pub use verdict::{ExtraLists, POLICY_CATEGORY, Verdict};
pub use weights_only::{WEIGHTS_ONLY_MIRRORS, WEIGHTS_ONLY_OPCODES, weights_only_allows};

#[cfg(test)]
mod tests {
    use super::dangerous::{DANGEROUS, TORCHSCRIPT_CALLS};
    use super::traversal::{MODULE_STEPS, MODULE_STEPS_INNER, module_step};
    use super::weights_only::WEIGHTS_ONLY_RENAMES;
    use super::*;
    // The codes the assertions below compare verdict categories with (issue 38: the pickle
    // categories are capability codes).
    const PROC: &str = "process-execution";
    const FILES: &str = "file-system";
    const NATIVE: &str = "native-load";

    #[test]
    fn torch_renames_are_rows_of_the_one_alias_table() {
        for (from, to) in WEIGHTS_ONLY_RENAMES {
            assert_eq!(names::canonical_module(from), Some(*to), "{from}");
        }
    }

    #[test]
    fn no_dangerous_row_is_keyed_by_an_alias_spelling() {
        // The pickle judge normalises before matching, so a row keyed `posix.x` is never hit.
        for danger in DANGEROUS.iter().chain(TORCHSCRIPT_CALLS) {
            let first = danger.path.split('.').next().unwrap_or(danger.path);
            assert_eq!(names::canonical_module(first), None, "{}", danger.path);
        }
        for step in MODULE_STEPS.iter().chain(MODULE_STEPS_INNER) {
            assert_eq!(names::canonical_module(step), None, "{step}");
        }
        // ... and every spelling of a module object is still a step.
        for (alias, canonical) in names::MODULE_ALIASES {
            let first = canonical.split('.').next().unwrap_or(canonical);
            if MODULE_STEPS.contains(&first) {
                assert!(module_step(alias, true), "{alias}");
            }
        }
    }

    #[test]
    fn policy_entries_split_into_module_and_name() {
        let extra = ExtraLists::from_policy(
            &["ourlab.models.*".into(), "sklearn.tree.Tree".into()],
            &["ourlab.unsafe".into()],
        );
        assert_eq!(extra.safe[0], ("ourlab.models".to_string(), None));
        assert_eq!(
            extra.safe[1],
            ("sklearn.tree".to_string(), Some("Tree".to_string()))
        );
        assert_eq!(
            extra.dangerous[0],
            ("ourlab".to_string(), Some("unsafe".to_string()))
        );
        assert_eq!(
            classify_global("sklearn.tree", "Tree", &extra),
            Verdict::Safe
        );
    }

    fn classify(m: &str, n: &str) -> Verdict {
        classify_global(m, n, &ExtraLists::default())
    }

    fn dangerous(m: &str, n: &str) -> bool {
        matches!(classify(m, n), Verdict::Dangerous { .. })
    }

    #[test]
    fn standard_library_enums_are_values_while_their_modules_functions_are_not() {
        // Issue 32: by value (class + REDUCE) and by global name (3.11+ converted enums).
        for (m, n) in [
            ("signal", "Signals"),
            ("_signal", "Signals"),
            ("signal", "SIGINT"),
            ("signal", "SIG_DFL"),
            ("signal", "Handlers"),
            ("http", "HTTPStatus"),
            ("re", "RegexFlag"),
            ("re", "IGNORECASE"),
            ("socket", "AddressFamily"),
            ("socket", "SocketKind"),
            ("socket", "AF_INET"),
            ("ssl", "TLSVersion"),
            ("ssl", "PROTOCOL_TLS_CLIENT"),
            ("ssl", "OP_NO_SSLv2"),
            ("ssl", "Purpose"),
            ("inspect", "_ParameterKind"),
            ("uuid", "SafeUUID"),
            ("numpy.core._internal", "_reconstruct"),
        ] {
            assert_eq!(classify(m, n), Verdict::Safe, "{m}.{n}");
        }
        for (m, n) in [
            ("signal", "signal"),
            ("signal", "siginterrupt"),
            ("signal", "Signals.__init__.__globals__"),
            ("signal", "SIGINT.__class__"),
            ("socket", "socket"),
            ("socket", "create_connection"),
            ("ssl", "get_server_certificate"),
            ("inspect", "getsource"),
            ("uuid", "_popen"),
            ("numpy.core._internal", "sys.modules"),
        ] {
            assert!(dangerous(m, n), "{m}.{n}");
        }
        // A policy can still deny a value type.
        let extra = ExtraLists::from_policy(&[], &["signal.Signals".into()]);
        assert!(matches!(
            classify_global("signal", "Signals", &extra),
            Verdict::Dangerous { .. }
        ));
    }

    #[test]
    fn called_names_are_judged_by_their_verbs_and_classes_are_not() {
        for (m, n) in [
            ("acme", "loads"),
            ("acme", "load_model"),
            ("acme", "_load"),
            ("acme", "Net.load_from_checkpoint"),
            ("acme", "loadtxt"),
            ("acme", "safe_load"),
            ("acme", "hf_hub_download"),
            ("acme", "snapshot_download"),
            ("acme", "read_pickle"),
            ("acme", "AutoModel.from_pretrained"),
            ("acme", "instantiate"),
            ("acme", "system"),
            ("acme", "getoutput"),
            ("acme", "popen"),
            ("acme", "run"),
            ("acme", "run_path"),
            ("acme", "exec_module"),
            ("acme", "evaluate"),
            ("acme", "spawnv"),
            ("acme", "urlopen"),
            ("acme", "write_file"),
            ("acme", "unlink"),
            ("acme", "rmtree"),
            ("acme", "install_package"),
            ("pip._internal.cli.main", "main"),
            ("conda.cli", "main"),
        ] {
            assert!(judge_by_name(m, n).is_some(), "{m}.{n}");
        }
        for (m, n) in [
            ("acme", "Loader"),
            ("acme", "Runner"),
            ("acme", "runtime_stats"),
            ("acme", "main"),
            ("gensim.utils", "call_on_class_only"),
            ("gensim.models.tfidfmodel", "smartirs_normalize"),
            ("pandas._libs.internals", "_unpickle_block"),
            ("pandas.core.indexes.base", "_new_Index"),
            ("numpy.core.multiarray", "_reconstruct"),
            ("torch._utils", "_rebuild_tensor_v2"),
            ("acme", "payload"),
            ("acme", "reload_count"),
        ] {
            assert_eq!(judge_by_name(m, n), None, "{m}.{n}");
        }
    }

    #[test]
    fn the_capability_table_is_known_to_the_pickle_judge() {
        // Entries only the code judges' table lists: one table, known everywhere.
        for (m, n, cap) in [
            ("paramiko", "SSHClient", "network"),
            ("wget", "download", "network"),
            ("websocket", "create_connection", "network"),
            ("weakref", "finalize", "persistence"),
            ("sh", "rm", "process-execution"),
        ] {
            assert!(
                matches!(classify(m, n), Verdict::Dangerous { category, .. } if category == cap),
                "{m}.{n}: {:?}",
                classify(m, n)
            );
        }
        // Method entries need a receiver the code judge cannot see; a pickle names the module.
        assert_eq!(classify("acme", "dlopen"), Verdict::Unknown);
    }

    #[test]
    fn mutating_methods_reached_through_module_state_are_tampering() {
        for n in [
            "_registry.clear",
            "SAFE.update",
            "_safe_globals.pop",
            "ALLOWED.__setitem__",
            "cache.__delitem__",
            "handlers.append",
            "seen.add",
            "blocked.discard",
        ] {
            assert!(dangerous("acme.scanner", n), "{n}");
        }
        assert!(dangerous("operator", "setitem"));
        assert_eq!(classify("acme.scanner", "clear"), Verdict::Unknown);
        assert_eq!(classify("acme.scanner", "Registry"), Verdict::Unknown);
    }

    #[test]
    fn standard_names_real_pickles_write_are_safe() {
        // Issue 15, cause 7: the spellings seen in real packages' pickles.
        for (m, n) in [
            ("__builtin__", "long"),
            ("__builtin__", "unicode"),
            ("copy_reg", "_reconstructor"),
            ("UserString", "defaultdict"),
            ("numpy", "float64"),
            ("numpy", "int64"),
            ("numpy", "bool_"),
            ("numpy", "matrix"),
            ("numpy.matrixlib.defmatrix", "matrix"),
            ("numpy.core._multiarray_umath", "_reconstruct"),
            ("typing", "Any"),
            ("argparse", "Namespace"),
            ("sklearn.externals.joblib.numpy_pickle", "NumpyArrayWrapper"),
            ("sklearn.externals.joblib.numpy_pickle", "NDArrayWrapper"),
            (
                "sklearn.externals.joblib.numpy_pickle_compat",
                "ZNDArrayWrapper",
            ),
            ("joblib.numpy_pickle", "NDArrayWrapper"),
        ] {
            assert_eq!(classify(m, n), Verdict::Safe, "{m}.{n}");
        }
        // The aliases do not open a door: the dangerous spellings stay dangerous.
        assert!(dangerous("__builtin__", "eval"));
        // Issue 39: the whole standard library is classified. A parser type is a value; a
        // function that evaluates string annotations is dynamic code. Neither is unknown.
        assert_eq!(classify("argparse", "ArgumentParser"), Verdict::Safe);
        assert!(dangerous("typing", "get_type_hints"));
    }

    #[test]
    fn normalizes_python2_and_accelerator_aliases() {
        assert_eq!(normalize_module("posix"), "os");
        assert_eq!(normalize_module("nt"), "os");
        assert_eq!(normalize_module("__builtin__"), "builtins");
        assert_eq!(normalize_module("copy_reg"), "copyreg");
        assert_eq!(normalize_module("_operator"), "operator");
        assert_eq!(normalize_module("_pickle"), "pickle");
        assert_eq!(normalize_module("_io"), "io");
        assert_eq!(normalize_module("posixpath"), "os.path");
        assert_eq!(normalize_module("torch._utils"), "torch._utils");
        assert_eq!(normalize_module("nt.sub"), "os.sub");
    }

    #[test]
    fn flags_classic_payloads() {
        for (m, n) in [
            ("os", "system"),
            ("posix", "system"),
            ("nt", "system"),
            ("subprocess", "Popen"),
            ("builtins", "eval"),
            ("__builtin__", "exec"),
            ("builtins", "getattr"),
            ("_operator", "attrgetter"),
            ("functools", "partial"),
            ("pty", "spawn"),
            ("runpy", "_run_code"),
            ("webbrowser", "open"),
            ("_pickle", "loads"),
            ("cPickle", "loads"),
            ("torch.serialization", "load"),
            ("torch", "load"),
            ("torch._inductor.codecache", "compile_file"),
            ("numpy.testing._private.utils", "runstring"),
            ("mako.template", "Template"),
            ("mako.lookup", "TemplateLookup"),
            ("pydoc", "locate"),
            ("_io", "FileIO"),
            ("timeit", "timeit"),
            ("cProfile", "run"),
            ("pip", "main"),
            ("asyncio.unix_events", "_UnixSubprocessTransport._start"),
            ("idlelib.pyshell", "ModifiedInterpreter.runcode"),
            ("lib2to3.pgen2.pgen", "ParserGenerator.make_label"),
            ("torch.utils._config_module", "ConfigModule.load_config"),
            ("torch.utils.bottleneck.__main__", "run_cprofile"),
            ("ctypes", "CDLL"),
            ("urllib.request", "urlopen"),
            ("ssl", "get_server_certificate"),
            ("torch.storage", "_load_from_bytes"),
            ("joblib", "load"),
        ] {
            assert!(dangerous(m, n), "{m}.{n} must be dangerous");
        }
    }

    #[test]
    fn dotted_names_resolve_through_the_whole_path() {
        // Protocol 4 getattr chains: module "numpy" + dotted name reaches runstring.
        assert!(dangerous("numpy", "testing._private.utils.runstring"));
        assert!(dangerous("torch", "serialization.load"));
        assert!(dangerous("collections", "OrderedDict.__init__.__globals__"));
        assert!(dangerous("pathlib", "Path.write_text"));
        assert!(dangerous("builtins", "__import__"));
    }

    /// Issue 39: every public callable of every Python 3.6-3.13 standard library, as the
    /// inventory lists it, is safe or dangerous, never unknown.
    #[test]
    fn no_stdlib_callable_is_unknown() {
        let unknown: Vec<&str> = stdlib_verdicts()
            .filter(|(_, v)| *v == Verdict::Unknown)
            .map(|(q, _)| q)
            .collect();
        assert!(unknown.is_empty(), "{unknown:?}");
    }

    /// Issue 39: the table is the class of record: a callable it calls a value is safe, one it
    /// gives a capability is dangerous (whichever table decides first).
    #[test]
    fn the_stdlib_table_agrees_with_the_verdicts() {
        let disagree: Vec<String> = stdlib_verdicts()
            .filter_map(|(q, v)| {
                let (m, n) = q.rsplit_once('.').unwrap_or((q, ""));
                let row = stdlib::classify(&normalize_module(m), n)?;
                let safe = v == Verdict::Safe;
                (safe != (row.class == stdlib::Class::Value))
                    .then(|| format!("{q}: table {} vs {v:?}", row.class.code()))
            })
            .collect();
        assert!(disagree.is_empty(), "{disagree:#?}");
    }

    fn stdlib_verdicts() -> impl Iterator<Item = (&'static str, Verdict)> {
        stdlib::inventory_names().map(|q| {
            let (m, n) = q.rsplit_once('.').unwrap_or((q, ""));
            (q, classify(m, n))
        })
    }

    /// The per-class counts the issue-39 note reports (`cargo test --lib stdlib_class_counts
    /// -- --ignored`).
    #[test]
    #[ignore = "prints the number of standard-library callables per class"]
    fn stdlib_class_counts() {
        use std::io::Write;
        let mut counts: std::collections::BTreeMap<&str, usize> = Default::default();
        for (_, v) in stdlib_verdicts() {
            let class = match v {
                Verdict::Dangerous { category, .. } => category,
                Verdict::Safe => "value",
                Verdict::Unknown => "unknown",
            };
            *counts.entry(class).or_default() += 1;
        }
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "verdict category (classify_global):");
        for (class, n) in counts {
            let _ = writeln!(err, "  {class:28} {n}");
        }
        // The same callables by the class the standard-library table gives them.
        let mut by_table: std::collections::BTreeMap<&str, usize> = Default::default();
        for q in stdlib::inventory_names() {
            let (m, n) = q.rsplit_once('.').unwrap_or((q, ""));
            let class =
                stdlib::classify(&normalize_module(m), n).map_or("none", |r| r.class.code());
            *by_table.entry(class).or_default() += 1;
        }
        let _ = writeln!(err, "class (knowledge::stdlib):");
        for (class, n) in by_table {
            let _ = writeln!(err, "  {class:28} {n}");
        }
    }

    #[test]
    fn os_path_is_dangerous_by_the_whole_module_rule() {
        assert!(dangerous("os.path", "join"));
        assert!(dangerous("posixpath", "join"));
        assert!(!dangerous("ossaudiodev", "open"));
    }

    #[test]
    fn accepts_ordinary_model_globals() {
        for (m, n) in [
            ("collections", "OrderedDict"),
            ("torch._utils", "_rebuild_tensor_v2"),
            ("torch._utils", "_rebuild_parameter"),
            ("torch", "FloatStorage"),
            ("torch", "BFloat16Storage"),
            ("torch", "float32"),
            ("torch", "Size"),
            ("numpy.core.multiarray", "_reconstruct"),
            ("numpy._core.multiarray", "_reconstruct"),
            ("numpy", "ndarray"),
            ("numpy", "dtype"),
            ("_codecs", "encode"),
            ("copy_reg", "_reconstructor"),
            ("__builtin__", "set"),
            ("joblib.numpy_pickle", "NumpyArrayWrapper"),
            ("numpy.random._pickle", "__generator_ctor"),
        ] {
            assert_eq!(classify(m, n), Verdict::Safe, "{m}.{n} must be safe");
        }
        assert_eq!(
            classify("sklearn.linear_model._base", "LinearRegression"),
            Verdict::Unknown
        );
        assert_eq!(classify("numpy", "ndarray.tofile"), Verdict::Unknown);
    }

    #[test]
    fn policy_deny_beats_builtin_safe() {
        let extra = ExtraLists {
            dangerous: vec![("collections".into(), Some("OrderedDict".into()))],
            safe: vec![],
        };
        assert!(matches!(
            classify_global("collections", "OrderedDict", &extra),
            Verdict::Dangerous {
                category: POLICY_CATEGORY,
                ..
            }
        ));
    }

    #[test]
    fn policy_allow_cannot_silence_builtin_dangerous() {
        let extra = ExtraLists {
            dangerous: vec![],
            safe: vec![("os".into(), None), ("sklearn".into(), None)],
        };
        assert!(matches!(
            classify_global("posix", "system", &extra),
            Verdict::Dangerous { .. }
        ));
        assert_eq!(
            classify_global("sklearn.tree._classes", "DecisionTreeClassifier", &extra),
            Verdict::Safe
        );
    }

    // ---- issue 16 tests ----

    #[test]
    fn attribute_traversal_through_module_objects_is_dangerous() {
        for (m, n) in [
            ("torch.serialization", "os.system"),
            ("torch.serialization", "os"),
            ("numpy.core._internal", "sys.modules"),
            ("collections", "_sys.modules"),
            ("torch", "serialization.pickle.loads"),
            ("typing", "_os.popen"),
            ("torch.nn.modules.module", "torch.load"),
            ("functools", "partial.__call__"),
            ("collections", "OrderedDict.__init__"),
            ("torch._utils", "_rebuild_tensor.__globals__"),
            ("builtins", "object.__subclasses__"),
            ("argparse", "Namespace.__dict__"),
            ("enum", "Enum.__class__"),
            ("torch", "nn.Module.__init__.__builtins__"),
            ("numpy", "lib.npyio.pickle.load"),
            ("json", "decoder.re.sys.modules"),
            ("mylib", "builtins.exec"),
            ("mylib", "_io.FileIO"),
        ] {
            assert!(dangerous(m, n), "{m}.{n} must be dangerous");
        }
        let why = explain_traversal("torch.serialization", "os.system").unwrap();
        assert!(why.contains("`.os` is a module object"), "{why}");
        assert!(why.contains("os.system"), "{why}");
        assert!(matches!(
            classify("torch.serialization", "os.system"),
            Verdict::Dangerous { category: PROC, .. }
        ));
        let why = explain_traversal("collections", "OrderedDict.__init__.__globals__").unwrap();
        assert!(why.contains("dunder"), "{why}");
    }

    #[test]
    fn legitimate_nested_qualnames_keep_their_classification() {
        assert_eq!(classify("mylib.models", "Outer.Inner"), Verdict::Unknown);
        assert_eq!(classify("mylib", "Config.Defaults"), Verdict::Unknown);
        assert_eq!(classify("mylib", "Model.code"), Verdict::Unknown);
        assert_eq!(classify("collections", "OrderedDict"), Verdict::Safe);
        assert_eq!(explain_traversal("mylib.models", "Outer.Inner"), None);
        assert_eq!(
            explain_traversal("torch._utils", "_rebuild_tensor_v2"),
            None
        );
    }

    #[test]
    fn methods_of_dangerous_classes_are_dangerous() {
        for (m, n) in [
            ("code", "InteractiveInterpreter.runsource"),
            ("code", "InteractiveConsole.push"),
            ("bdb", "Bdb.run"),
            ("cProfile", "Profile.runctx"),
            ("profile", "Profile.runctx"),
            ("timeit", "Timer.timeit"),
            ("trace", "Trace.runctx"),
            ("mailcap", "findmatch"),
            ("imp", "load_source"),
            ("pydoc", "pipepager"),
            ("pydoc", "tempfilepager"),
            ("doctest", "debug_script"),
            ("_xxsubinterpreters", "run_string"),
            ("_interpreters", "exec"),
            ("idlelib.run", "Executive.runcode"),
            ("ensurepip", "_run_pip"),
            ("torch.utils.bottleneck.__main__", "run_autograd_prof"),
            ("torch.fx.graph_module", "reduce_graph_module"),
            ("torch.fx.graph_module", "_deserialize_graph_module"),
            ("torch.ops", "load_library"),
            ("torch.classes", "load_library"),
            ("torch._ops", "ops.load_library"),
            ("torch._classes", "_Classes.load_library"),
            ("torch.jit", "load"),
            ("torch.jit._serialization", "load"),
            (
                "transformers.dynamic_module_utils",
                "get_class_from_dynamic_module",
            ),
            ("pip._internal.cli.main", "main"),
            ("setuptools._distutils.spawn", "spawn"),
            ("distutils.spawn", "spawn"),
            ("pkgutil", "resolve_name"),
            ("importlib", "import_module"),
            ("importlib.util", "spec_from_file_location"),
            ("_operator", "attrgetter"),
            ("operator", "methodcaller"),
            ("functools", "partial"),
            ("sys", "modules.__setitem__"),
            ("http.client", "HTTPConnection"),
            ("http.server", "CGIHTTPRequestHandler"),
        ] {
            assert!(dangerous(m, n), "{m}.{n} must be dangerous");
        }
    }

    #[test]
    fn benign_stdlib_value_types_are_not_dangerous() {
        for (m, n) in [
            ("http", "HTTPStatus"),
            ("uuid", "UUID"),
            ("decimal", "Decimal"),
            ("fractions", "Fraction"),
            ("datetime", "datetime"),
            ("datetime", "timedelta"),
            ("pathlib", "PosixPath"),
            ("pathlib", "WindowsPath"),
            ("pathlib", "PurePosixPath"),
            ("argparse", "Namespace"),
            ("re", "_compile"),
            ("collections", "OrderedDict"),
            ("collections", "defaultdict"),
            ("collections", "deque"),
            ("collections", "Counter"),
            ("enum", "Enum"),
            ("torch", "bfloat16"),
        ] {
            assert!(!dangerous(m, n), "{m}.{n} must not be dangerous");
        }
    }

    #[test]
    fn issue_16_torchscript_calls_that_reach_files_libraries_or_processes() {
        let call = |n: &str| torchscript_call(&[n.to_string()]).map(|(_, c, _)| c);
        assert_eq!(call("torch.from_file"), Some(FILES));
        assert_eq!(call("torch.ops.load_library"), Some(NATIVE));
        assert_eq!(call("torch.classes.load_library"), Some(NATIVE));
        assert_eq!(call("open"), Some(FILES));
        assert_eq!(call("os.system"), Some(PROC));
        assert!(call("subprocess.Popen").is_some());
        // What serialized TorchScript calls all the time.
        for benign in [
            "torch.add",
            "getattr",
            "ops.prim.RaiseException",
            "torch.ops.aten.linear",
            "len",
            "self.layers.forward",
        ] {
            assert_eq!(call(benign), None, "{benign}");
        }
    }

    #[test]
    fn issue_16_references_name_published_advisories() {
        assert!(references("pip", "main").contains(&"CVE-2025-1716"));
        assert!(references("_operator", "attrgetter").contains(&"GHSA-m273-6v24-x4m4"));
        assert!(references("pkgutil", "resolve_name").contains(&"GHSA-vvpj-8cmc-gx39"));
        assert!(references("torch.serialization", "os.system").contains(&"GHSA-5j3x-jp52-966f"));
        assert!(references("os", "system").is_empty());
        assert!(references("pickletools", "dis").is_empty());
        let timeit = references("timeit", "timeit");
        let mut unique = timeit.clone();
        unique.dedup();
        assert_eq!(timeit, unique);
    }

    #[test]
    fn issue_16_sizes_torch_storage_types() {
        assert_eq!(torch_storage_itemsize("torch.FloatStorage"), Some(4));
        assert_eq!(torch_storage_itemsize("torch.BFloat16Storage"), Some(2));
        assert_eq!(torch_storage_itemsize("torch.QInt32Storage"), Some(4));
        assert_eq!(torch_storage_itemsize("FloatStorage"), None);
        assert_eq!(torch_storage_itemsize("torch.Tensor"), None);
        assert_eq!(
            torch_storage_itemsize("torch.storage.UntypedStorage"),
            Some(1)
        );
        assert_eq!(torch_storage_itemsize("torch.storage.FloatStorage"), None);
    }

    #[test]
    fn issue_16_sizes_torch_dtypes() {
        assert_eq!(torch_dtype_itemsize("torch.float32"), Some(4));
        assert_eq!(torch_dtype_itemsize("torch.bfloat16"), Some(2));
        assert_eq!(torch_dtype_itemsize("torch.float8_e4m3fn"), Some(1));
        assert_eq!(torch_dtype_itemsize("torch.complex128"), Some(16));
        assert_eq!(torch_dtype_itemsize("float32"), None);
        assert_eq!(torch_dtype_itemsize("torch.FloatStorage"), None);
    }
}
