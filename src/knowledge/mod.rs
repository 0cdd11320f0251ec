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
//! Every verdict's category is a [`Capability`] code (`process-execution`, `dynamic-code`,
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
pub mod loaders;
pub mod names;
pub mod places;
mod safe;
mod shapes;
pub mod stdlib;
mod torch_types;
#[cfg(test)]
mod vocabulary;

pub use by_name::{JUDGED_BY_NAME, judge_by_name};
use capabilities::Capability;
pub use names::normalize_module;
use safe::{SAFE, SAFE_STANDARD, is_value_type};
use shapes::{DANGEROUS_DUNDERS, DANGEROUS_METHODS, tampers};
pub use torch_types::{torch_dtype_itemsize, torch_storage_itemsize};

/// The knowledge base's opinion of one imported global.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Importing (and usually calling) this global can run code, touch files or the network.
    Dangerous {
        /// The capability's [`Capability::code`] (`process-execution`), or [`POLICY_CATEGORY`]
        /// for a name only the policy denies: one vocabulary with the code judges (issue 38).
        category: &'static str,
        /// Why it is dangerous, lowercase, for the finding's message.
        reason: &'static str,
    },
    /// A plain rebuilder or container type that ordinary model pickles import.
    Safe,
    /// Neither list knows it.
    Unknown,
}

/// Entries a policy adds to the built-in lists. `(module, None)` covers the module, its
/// submodules and every name in them; `(module, Some(name))` covers that name and its attributes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExtraLists {
    /// Globals the policy denies; these beat the built-in safe list.
    pub dangerous: Vec<(String, Option<String>)>,
    /// Globals the policy allows; these never override a built-in dangerous entry.
    pub safe: Vec<(String, Option<String>)>,
}

impl ExtraLists {
    /// Parses the policy's `module.name` / `module.*` entries.
    pub fn from_policy(safe: &[String], dangerous: &[String]) -> Self {
        let split = |g: &String| -> (String, Option<String>) {
            match g.strip_suffix(".*") {
                Some(module) => (module.to_string(), None),
                None => match g.rsplit_once('.') {
                    Some((m, n)) => (m.to_string(), Some(n.to_string())),
                    None => (g.clone(), None),
                },
            }
        };
        ExtraLists {
            dangerous: dangerous.iter().map(split).collect(),
            safe: safe.iter().map(split).collect(),
        }
    }
}

/// Category used for globals denied by the policy's extra list.
pub const POLICY_CATEGORY: &str = "policy";

/// One dangerous path prefix with its capability and reason.
struct Danger {
    path: &'static str,
    capability: Capability,
    reason: &'static str,
}

const fn d(path: &'static str, capability: Capability, reason: &'static str) -> Danger {
    Danger {
        path,
        capability,
        reason,
    }
}

// Issue 38: the categories this table used to have its own words for are capabilities of the
// one vocabulary. Running code, importing named code, loading a nested pickle, reaching any
// attribute (`getattr`, `inspect`, `operator.attrgetter`) and debuggers or profilers that run
// source are all `dynamic-code`, as the code judges and the standard-library table call them.
const DYN: Capability = Capability::DynamicCode;
const PROC: Capability = Capability::ProcessExecution;
const FILES: Capability = Capability::FileSystem;
const NET: Capability = Capability::Network;
const NATIVE: Capability = Capability::NativeLoad;
const INTERP: Capability = Capability::InterpreterState;
const INSTALL: Capability = Capability::PackageInstall;
const PERSIST: Capability = Capability::Persistence;
const TAMPER: Capability = Capability::Tampering;
const DOS: Capability = Capability::DenialOfService;
/// A dotted name that steps through a module object or a dunder reaches an object nobody
/// named: the unpickler's getattr chain is `getattr` itself, which is `dynamic-code`. Not a
/// capability of its own: the traversal is how the object is reached, not what it can do, and
/// when the name reaches a listed callable the verdict takes that callable's capability.
const TRAVERSAL: Capability = Capability::DynamicCode;

/// Dangerous globals. Each group names the scanners or write-ups that list it.
const DANGEROUS: &[Danger] = &[
    // builtins: picklescan `_unsafe_globals["builtins"]`, ModelAudit `DANGEROUS_BUILTINS`,
    // fickling (every builtin outside `SAFE_BUILTINS`), modelscan critical list.
    d("builtins.eval", DYN, "evaluates a python expression"),
    d("builtins.exec", DYN, "executes python source"),
    d("builtins.execfile", DYN, "executes a python file"),
    d(
        "builtins.compile",
        DYN,
        "compiles python source to a code object",
    ),
    d(
        "builtins.__build_class__",
        DYN,
        "builds a class by running a function body",
    ),
    d("builtins.__import__", DYN, "imports an arbitrary module"),
    d("builtins.reload", DYN, "re-imports a module"),
    d("builtins.open", FILES, "opens an arbitrary file"),
    d("builtins.file", FILES, "opens an arbitrary file"),
    d(
        "builtins.getattr",
        DYN,
        "reaches any attribute, e.g. os.system",
    ),
    d("builtins.setattr", PERSIST, "overwrites any attribute"),
    d("builtins.delattr", TAMPER, "deletes any attribute"),
    d("builtins.globals", DYN, "exposes the module namespace"),
    d("builtins.locals", DYN, "exposes a local namespace"),
    d("builtins.vars", DYN, "exposes an object namespace"),
    d("builtins.dir", DYN, "enumerates attributes"),
    d("builtins.apply", DYN, "calls any callable with arguments"),
    d("builtins.breakpoint", DYN, "starts a debugger"),
    d("builtins.input", DOS, "reads the terminal"),
    d("builtins.raw_input", DOS, "reads the terminal"),
    d("builtins.help", PROC, "starts the interactive help pager"),
    d("builtins.exit", INTERP, "exits the interpreter"),
    d("builtins.quit", INTERP, "exits the interpreter"),
    // Process execution: picklescan (`os`, `posix`, `nt`, `subprocess`, `pty`, `commands`),
    // fickling (`multiprocessing`, `_posixsubprocess`, `pexpect`, `pipes`, `uuid`,
    // `_osx_support`, `_aix_support`, `signal`, `threading`, `atexit`), ModelAudit (`platform`,
    // `concurrent.futures`, `asyncio.subprocess`), picklescan GHSA-q77w-mwjj-7mqx (asyncio).
    d(
        "os",
        PROC,
        "the os module runs commands and touches files (os.system, os.popen, ...)",
    ),
    d("subprocess", PROC, "spawns processes"),
    d("pty", PROC, "spawns a process on a pseudo-terminal"),
    d("commands", PROC, "python 2 shell command runner"),
    d("popen2", PROC, "python 2 process spawner"),
    d(
        "multiprocessing",
        PROC,
        "spawns processes and runs callables in them",
    ),
    d("concurrent.futures", PROC, "runs callables in worker pools"),
    d(
        "asyncio",
        PROC,
        "event loop with subprocess and network transports",
    ),
    d("pexpect", PROC, "spawns and drives processes"),
    d("pipes", PROC, "pipes.Template runs shell commands"),
    d(
        "platform",
        PROC,
        "runs helper commands (platform.popen, uname helpers)",
    ),
    d("uuid._get_command_stdout", PROC, "runs a command"),
    d("uuid._popen", PROC, "runs a command"),
    d("_osx_support", PROC, "runs compiler helper commands"),
    d("_aix_support", PROC, "runs helper commands"),
    d("signal", INTERP, "installs signal handlers"),
    d("threading", INTERP, "starts threads running callables"),
    d("atexit", INTERP, "registers callables to run at exit"),
    d("sched", INTERP, "runs scheduled callables"),
    d(
        "joblib.Parallel",
        PROC,
        "runs callables in worker processes",
    ),
    d(
        "joblib.parallel",
        PROC,
        "runs callables in worker processes",
    ),
    // Code execution and compilation: picklescan (`runpy`, `code`, `numpy.testing._private.utils`,
    // `numpy.f2py`), fickling (`code`, `codeop`, `marshal`, `types`, `compileall`, `py_compile`),
    // ModelAudit (`types.CodeType`, `types.FunctionType`, `sympy.lambdify` in GuardModel notes).
    d("runpy", DYN, "runs a module or a file as __main__"),
    d(
        "code",
        DYN,
        "interactive interpreter runs source (InteractiveInterpreter.runcode)",
    ),
    d("codeop", DYN, "compiles python source"),
    d("marshal", DYN, "loads code objects"),
    d("types.CodeType", DYN, "builds a code object"),
    d(
        "types.FunctionType",
        DYN,
        "builds a function from a code object",
    ),
    d(
        "types.LambdaType",
        DYN,
        "builds a function from a code object",
    ),
    d("types.MethodType", DYN, "binds any callable as a method"),
    d("compileall", DYN, "compiles and writes bytecode"),
    d("py_compile", DYN, "compiles and writes bytecode"),
    d(
        "numpy.testing",
        DYN,
        "numpy.testing._private.utils.runstring is exec",
    ),
    d(
        "numpy.f2py",
        DYN,
        "f2py helpers call eval on strings (getlincoef, _eval_length)",
    ),
    d("numpy.distutils", DYN, "build helpers run commands"),
    d("sympy.sympify", DYN, "sympify evaluates strings"),
    d(
        "sympy.lambdify",
        DYN,
        "lambdify generates and executes code",
    ),
    d("sympy.parsing", DYN, "parsers evaluate strings"),
    // Template engines that run Python when a template is built, not only when it renders: Mako's
    // documentation (module-level `<%! %>` blocks run once when the template's module loads,
    // which `Template(text)` and `TemplateLookup.get_template` do).
    d(
        "mako.template",
        DYN,
        "Template() compiles the text to a python module and runs its module-level blocks",
    ),
    d(
        "mako.lookup",
        DYN,
        "templates it loads compile to python modules that run on load",
    ),
    d("pandas.eval", DYN, "evaluates an expression"),
    d(
        "pandas.core.computation.eval",
        DYN,
        "evaluates an expression",
    ),
    // Dynamic import: fickling (`importlib`, `imp`, `pkgutil`, `zipimport`, `site`, `inspect`),
    // picklescan GHSA-84r2-jw7c-4r5q (`pydoc.locate`), ModelAudit (`importlib.*`, `pkgutil`).
    d("importlib", DYN, "imports arbitrary modules"),
    d("imp", DYN, "imp.load_source executes a file"),
    d("pkgutil", DYN, "resolves and imports arbitrary names"),
    d("zipimport", DYN, "imports code from an archive"),
    d("site", DYN, "processes .pth files and paths"),
    d("inspect", DYN, "getattr-like access to any object"),
    d("pkg_resources", DYN, "loads entry points (imports code)"),
    // Attribute and call gadgets: picklescan (`operator.attrgetter/itemgetter/methodcaller`,
    // `functools.partial`), ModelAudit (`functools.reduce`, `_operator`), fickling (`operator`,
    // `functools` as whole modules; we list the callables that call or fetch attributes).
    d(
        "operator.attrgetter",
        DYN,
        "attrgetter('system')(os) reaches any attribute",
    ),
    d("operator.methodcaller", DYN, "calls any method by name"),
    d(
        "operator.itemgetter",
        DYN,
        "item access gadget used in attribute chains",
    ),
    d("operator.call", DYN, "calls any callable"),
    d(
        "functools.partial",
        DYN,
        "partial(os.system, cmd) defers a dangerous call",
    ),
    d("functools.partialmethod", DYN, "defers a call"),
    d("functools.reduce", DYN, "calls a callable repeatedly"),
    d(
        "copyreg.add_extension",
        INTERP,
        "rewrites the extension registry used by EXT opcodes",
    ),
    d("copyreg.pickle", INTERP, "rewrites the reduction registry"),
    // Interpreter state: picklescan/modelscan (`sys`), fickling (`gc`, subinterpreters).
    d(
        "sys",
        INTERP,
        "interpreter internals (sys.modules, sys.exit, ...)",
    ),
    d("gc", INTERP, "gc.get_objects reaches every live object"),
    d("_interpreters", DYN, "runs code in a subinterpreter"),
    d("_xxsubinterpreters", DYN, "runs code in a subinterpreter"),
    d("interpreters", DYN, "runs code in a subinterpreter"),
    d(
        "concurrent.interpreters",
        DYN,
        "runs code in a subinterpreter",
    ),
    // Debuggers, profilers and tooling that run source: picklescan (`bdb`, `pdb`, `timeit`,
    // `cProfile.run/runctx`, `profile.Profile.run/runctx`, `trace.Trace.run/runctx`,
    // `doctest.debug_script`, idlelib and lib2to3 GHSAs, `pydoc` incl. `pipepager`/`locate`),
    // fickling and ModelAudit (whole modules). Whole modules are listed: none belongs in a model.
    d("pdb", DYN, "debugger runs source"),
    d("bdb", DYN, "Bdb.run executes source"),
    d("trace", DYN, "Trace.run executes source"),
    d("cProfile", DYN, "cProfile.run executes source"),
    d("profile", DYN, "Profile.run executes source"),
    d("timeit", DYN, "timeit executes source"),
    d("doctest", DYN, "debug_script executes source"),
    d("unittest", DYN, "test runners import and run code"),
    d(
        "test.support",
        DYN,
        "CPython test helpers spawn interpreters",
    ),
    d(
        "idlelib",
        DYN,
        "IDLE helpers evaluate source (runcode, get_entity, fetch_tip)",
    ),
    d(
        "lib2to3",
        DYN,
        "grammar loaders unpickle and eval (Grammar.loads, make_label)",
    ),
    d(
        "pydoc",
        DYN,
        "pydoc.locate imports anything; pipepager runs a shell command",
    ),
    // Package installation: picklescan (`pip`, `venv`, `ensurepip._run_pip`,
    // `distutils.file_util`), fickling (`distutils`, `ensurepip`, `venv`).
    d("pip", INSTALL, "installs packages (pip.main)"),
    d("ensurepip", INSTALL, "runs pip"),
    d("venv", INSTALL, "creates environments and runs commands"),
    d(
        "distutils",
        INSTALL,
        "build tooling writes files and runs commands",
    ),
    d("setuptools", INSTALL, "build tooling runs setup scripts"),
    // Files: picklescan (`shutil`, `io.FileIO` test), fickling (`tempfile`, `filecmp`,
    // `fileinput`, `glob`, `linecache`, `tarfile`, `zipfile`, `shelve`, `sqlite3`, `mmap`,
    // `logging`), ModelAudit (`logging.config`, `tempfile.mktemp`).
    d("shutil", FILES, "copies, moves and deletes files"),
    d("tempfile", FILES, "creates files"),
    d("filecmp", FILES, "reads files"),
    d("fileinput", FILES, "reads files"),
    d("glob", FILES, "enumerates files"),
    d("linecache", FILES, "reads files"),
    d("tarfile", FILES, "extracts archives"),
    d("zipfile", FILES, "extracts archives"),
    d("sqlite3", FILES, "opens database files"),
    d("mmap", FILES, "maps files into memory"),
    d("io.FileIO", FILES, "opens an arbitrary file"),
    d("io.open", FILES, "opens an arbitrary file"),
    d("io.open_code", FILES, "opens an arbitrary file"),
    d("codecs.open", FILES, "opens an arbitrary file"),
    d(
        "logging.config",
        FILES,
        "logging.config.listen evaluates configs from a socket",
    ),
    d(
        "logging.handlers",
        FILES,
        "handlers write files and sockets",
    ),
    d("logging.FileHandler", FILES, "writes a file"),
    d("logging.basicConfig", FILES, "can open a log file"),
    d("numpy.fromfile", FILES, "reads an arbitrary file"),
    d(
        "numpy.ctypeslib",
        NATIVE,
        "load_library loads a shared library",
    ),
    // Nested deserialisation: picklescan (`pickle`, `_pickle`, `torch.serialization.load`,
    // `torch.utils._config_module.ConfigModule.load_config`, datapipes `basichandlers`),
    // fickling (`dill`, `cloudpickle`, `joblib`, `shelve`), ModelAudit (`dill._dill`,
    // `cloudpickle`, `joblib`), CVE-2024-34997 (joblib), picklescan TODO list (numpy.load,
    // pandas.read_pickle, torch.load, joblib.load).
    d("pickle", DYN, "loads another pickle"),
    d("pickletools", DYN, "pickle tooling"),
    d("shelve", DYN, "opens a pickle database"),
    d(
        "dill",
        DYN,
        "dill loads pickles and builds functions from code",
    ),
    d("cloudpickle", DYN, "cloudpickle builds functions from code"),
    d("joblib.load", DYN, "loads another pickle"),
    d("joblib.numpy_pickle.load", DYN, "loads another pickle"),
    d(
        "joblib.numpy_pickle_compat.load",
        DYN,
        "loads another pickle",
    ),
    d("joblib.memory", FILES, "caches results on disk"),
    d("joblib.Memory", FILES, "caches results on disk"),
    d("numpy.load", DYN, "np.load can unpickle object arrays"),
    d(
        "numpy.lib.npyio.load",
        DYN,
        "np.load can unpickle object arrays",
    ),
    d(
        "numpy.lib._npyio_impl.load",
        DYN,
        "np.load can unpickle object arrays",
    ),
    d("pandas.read_pickle", DYN, "loads another pickle"),
    d("pandas.io.pickle", DYN, "loads another pickle"),
    d(
        "yaml.load",
        DYN,
        "unsafe yaml loader can construct python objects",
    ),
    d(
        "yaml.load_all",
        DYN,
        "unsafe yaml loader can construct python objects",
    ),
    d("yaml.unsafe_load", DYN, "constructs python objects"),
    d("yaml.unsafe_load_all", DYN, "constructs python objects"),
    d("torch.load", DYN, "loads another pickle"),
    d("torch.serialization.load", DYN, "loads another pickle"),
    d(
        "torch.storage._load_from_bytes",
        DYN,
        "calls torch.load on embedded bytes",
    ),
    d("torch.hub", DYN, "downloads and runs repository code"),
    d(
        "torch.package",
        DYN,
        "PackageImporter imports packaged code",
    ),
    d(
        "torch.utils._config_module",
        DYN,
        "ConfigModule.load_config unpickles bytes",
    ),
    d(
        "torch.utils.data.datapipes.utils.decoder",
        DYN,
        "basichandlers unpickles bytes",
    ),
    // PyTorch gadgets from picklescan advisories: GHSA-4r9r-ch6f-vxmx / GHSA-4whj-rm5r-c2v8
    // (bottleneck), GHSA-86cj-95qr-2p4f (dynamo guards), GHSA-f4x7-rfwp-v3xw (symbolic_shapes),
    // GHSA-f745-w6jp-hpxx / GHSA-jhph-76pp-mggw (collect_env), GHSA-vr7h-p6mm-wpmh
    // (unsupported_tensor_ops), picklescan Malicious17 (inductor compile_file), CVE-2022-45907
    // (jit annotations eval).
    d(
        "torch.utils.bottleneck",
        DYN,
        "run_cprofile executes source",
    ),
    d(
        "torch.utils.collect_env",
        PROC,
        "run executes a shell command",
    ),
    d(
        "torch.utils.cpp_extension",
        NATIVE,
        "compiles and loads native code",
    ),
    d("torch._dynamo", DYN, "guard helpers evaluate source"),
    d(
        "torch._inductor",
        PROC,
        "codecache.compile_file runs a compiler command",
    ),
    d(
        "torch.fx.experimental.symbolic_shapes.ShapeEnv.evaluate_guards_expression",
        DYN,
        "evaluates source",
    ),
    d(
        "torch.jit.unsupported_tensor_ops.execWrapper",
        DYN,
        "exec wrapper",
    ),
    d(
        "torch.jit.annotations.parse_type_line",
        DYN,
        "evaluates a type comment (cve-2022-45907)",
    ),
    d(
        "torch.testing._internal",
        PROC,
        "test helpers spawn processes",
    ),
    d(
        "torch.distributed",
        NET,
        "rpc and process groups open network connections",
    ),
    // Network: picklescan (`socket`, `ssl`, `httplib`, `requests.api`, `aiohttp`, `webbrowser`,
    // `urllib.request.urlopen` test), modelscan high list, fickling (`http`, `urllib`,
    // `smtplib`, `ftplib`, `telnetlib`, `xmlrpc`, `socketserver`, `select`, ...).
    d("socket", NET, "opens network connections"),
    d(
        "ssl",
        NET,
        "opens network connections (dns exfiltration via get_server_certificate)",
    ),
    // `http` itself holds value types (`http.HTTPStatus`, `http.HTTPMethod` enums) that benign
    // pickles carry; only its client/server submodules reach the network (issue 16 precision).
    d("http.client", NET, "http client connections"),
    d(
        "http.server",
        NET,
        "http servers (CGIHTTPRequestHandler runs scripts)",
    ),
    d("http.cookiejar", NET, "loads and saves cookie files"),
    d("urllib", NET, "fetches urls"),
    d("urllib3", NET, "fetches urls"),
    d("requests", NET, "fetches urls"),
    d("httpx", NET, "fetches urls"),
    d("aiohttp", NET, "fetches urls"),
    d("webbrowser", PROC, "opens a url in a browser"),
    d("smtplib", NET, "sends mail"),
    d("imaplib", NET, "opens mail connections"),
    d("poplib", NET, "opens mail connections"),
    d("nntplib", NET, "opens news connections"),
    d("ftplib", NET, "opens ftp connections"),
    d("telnetlib", NET, "opens telnet connections"),
    d("socketserver", NET, "binds and serves sockets"),
    d("xmlrpc", NET, "remote procedure calls"),
    d("select", NET, "socket multiplexing"),
    d("selectors", NET, "socket multiplexing"),
    d("syslog", NET, "writes to the system log"),
    // Native code: picklescan GHSA-4675-36f9-wf6r (`ctypes.CDLL`), fickling (`_ctypes`).
    d(
        "ctypes",
        NATIVE,
        "loads shared libraries and writes raw memory",
    ),
    d("cffi", NATIVE, "loads shared libraries"),
    // ---- issue 16: published gaps (dangerous side) ----
    // `mailcap.findmatch` builds a shell command line from data (CVE-2015-20107; module removed
    // in 3.13): picklescan `_unsafe_globals` lists it.
    d("mailcap", PROC, "findmatch builds a shell command line"),
    // `torch.fx.graph_module` reduce hooks (`reduce_graph_module`, `_deserialize_graph_module`,
    // `reduce_package_graph_module`) exec generated python source; picklescan lists
    // `torch.fx.graph_module` (GHSA-m5vv-6r4h-3vj9 family). The weights-only unpickler refuses them.
    d(
        "torch.fx.graph_module",
        DYN,
        "graph module reduce hooks exec generated source",
    ),
    // Native-library loaders: `torch.ops.load_library` / `torch.classes.load_library` dlopen a
    // path (PyTorch docs, torch/_ops.py and torch/_classes.py); ModelAudit SUSPICIOUS_GLOBALS.
    d("torch.ops.load_library", NATIVE, "loads a shared library"),
    d(
        "torch.classes.load_library",
        NATIVE,
        "loads a shared library",
    ),
    d(
        "torch._ops.ops.load_library",
        NATIVE,
        "loads a shared library",
    ),
    d(
        "torch._ops._Ops.load_library",
        NATIVE,
        "loads a shared library",
    ),
    d(
        "torch._classes.classes.load_library",
        NATIVE,
        "loads a shared library",
    ),
    d(
        "torch._classes._Classes.load_library",
        NATIVE,
        "loads a shared library",
    ),
    // TorchScript loaders run the archive's code (torch.jit.load docs; CVE-2025-32434 showed
    // `weights_only=True` loads TorchScript on torch < 2.6).
    d(
        "torch.jit.load",
        DYN,
        "loads and runs a TorchScript archive",
    ),
    d(
        "torch.jit._serialization",
        DYN,
        "loads and runs a TorchScript archive",
    ),
    d(
        "torch.jit._script",
        DYN,
        "compiles python source to TorchScript",
    ),
    d("torch.jit.frontend", DYN, "parses python source"),
    d(
        "torch._C.import_ir_module",
        DYN,
        "loads a TorchScript archive",
    ),
    d(
        "torch._C._load_for_lite_interpreter",
        DYN,
        "loads a TorchScript archive",
    ),
    d(
        "torch.package",
        DYN,
        "package importer runs archived modules",
    ),
    // transformers remote-code loaders download and import repository python
    // (`trust_remote_code`; transformers/dynamic_module_utils.py), ModelAudit lists them.
    d(
        "transformers.dynamic_module_utils",
        DYN,
        "imports python modules from a repository (remote code)",
    ),
    d("huggingface_hub.hf_hub_download", NET, "downloads files"),
    d(
        "huggingface_hub.snapshot_download",
        NET,
        "downloads a repository",
    ),
    // setuptools / distutils process helpers (`spawn`, `_spawn`) named in picklescan issues.
    d("setuptools._distutils", PROC, "spawn runs a command"),
    d("distutils.spawn", PROC, "spawn runs a command"),
    d("_distutils_hack", DYN, "rewrites the import system"),
    // ---- issue 32: third-party loaders and executors (the 99-gadget round) ----
    // Each loads a model, dataset or pickle, instantiates a configured callable, runs a
    // command or writes a file. Sources: Keras `keras/src/saving/saving_api.py` (`load_model`
    // runs Lambda bytecode with safe_mode off; CVE-2024-3660), Hugging Face `datasets`
    // (`load_dataset` runs a repository's loading script on old versions), Hydra
    // `hydra/utils.py` (`instantiate`/`call` import and call `_target_`; ModelAudit lists them),
    // IPython `IPython/utils/process.py` (`system`, `getoutput`), Ray's and joblib's vendored
    // cloudpickle (`loads`), Lightning `core/saving.py` and `fabric/utilities/cloud_io.py`
    // (checkpoint loaders call torch.load with weights_only=False), TensorFlow
    // `tf.io.write_file` / `gfile` (ModelAudit `tf-unsafe-op` list), picklescan TODO list.
    d(
        "keras.models.load_model",
        DYN,
        "loads a model (Lambda layers run code)",
    ),
    d(
        "keras.saving.load_model",
        DYN,
        "loads a model (Lambda layers run code)",
    ),
    d(
        "keras.src.saving",
        DYN,
        "loads a model (Lambda layers run code)",
    ),
    d("keras.src.models.model.saving_lib", DYN, "loads a model"),
    d(
        "tensorflow.keras.models.load_model",
        DYN,
        "loads a model (Lambda layers run code)",
    ),
    d(
        "tf_keras.models.load_model",
        DYN,
        "loads a model (Lambda layers run code)",
    ),
    d(
        "datasets.load_dataset",
        DYN,
        "loads a dataset (old versions run its script)",
    ),
    d(
        "datasets.load.load_dataset",
        DYN,
        "loads a dataset (old versions run its script)",
    ),
    d("datasets.load_from_disk", DYN, "loads a dataset from files"),
    d(
        "hydra.utils.instantiate",
        DYN,
        "imports and calls a configured `_target_`",
    ),
    d(
        "hydra.utils.call",
        DYN,
        "imports and calls a configured `_target_`",
    ),
    d(
        "hydra._internal.instantiate",
        DYN,
        "imports and calls a configured `_target_`",
    ),
    d(
        "hydra.utils.get_method",
        DYN,
        "imports a callable named by a string",
    ),
    d(
        "hydra.utils.get_class",
        DYN,
        "imports a class named by a string",
    ),
    d(
        "hydra.utils.get_object",
        DYN,
        "imports an object named by a string",
    ),
    d(
        "keras.config.enable_unsafe_deserialization",
        DYN,
        "turns off Keras safe mode (Lambda bytecode runs)",
    ),
    // Model factories the code scanner watches as hub downloads (`code/python/hub.rs`):
    // building one fetches weights, and for pipelines the repository's code.
    // OpenMMLab configs are python files `Config.fromfile` executes (mmcv/mmengine
    // `config.py`, `_file2dict`); Ray's job and client APIs submit work to a cluster.
    d("mmcv.Config.fromfile", DYN, "executes a python config file"),
    d("mmcv.utils.config", DYN, "executes a python config file"),
    d(
        "mmengine.Config.fromfile",
        DYN,
        "executes a python config file",
    ),
    d("mmengine.config", DYN, "executes a python config file"),
    d("ray.job_submission", PROC, "submits jobs to a cluster"),
    d("ray.util.client", NET, "connects to a cluster"),
    d("ray.init", PROC, "starts or joins a cluster"),
    d(
        "transformers.pipeline",
        NET,
        "downloads a model (and its remote code when allowed)",
    ),
    d("timm.create_model", NET, "downloads pretrained weights"),
    d(
        "open_clip.create_model",
        NET,
        "downloads pretrained weights",
    ),
    d(
        "open_clip.create_model_and_transforms",
        NET,
        "downloads pretrained weights",
    ),
    d(
        "open_clip.create_model_from_pretrained",
        NET,
        "downloads pretrained weights",
    ),
    d(
        "sentence_transformers.SentenceTransformer",
        NET,
        "downloads a model and its modules",
    ),
    d(
        "sentence_transformers.CrossEncoder",
        NET,
        "downloads a model",
    ),
    d(
        "IPython.utils.process",
        PROC,
        "runs shell commands (system, getoutput)",
    ),
    d("IPython.utils._process_posix", PROC, "runs shell commands"),
    d("IPython.utils._process_common", PROC, "runs shell commands"),
    d(
        "IPython.core.interactiveshell",
        DYN,
        "runs source and shell commands",
    ),
    d(
        "ray.cloudpickle",
        DYN,
        "vendored cloudpickle loads pickles and builds code",
    ),
    d(
        "joblib.externals.cloudpickle",
        DYN,
        "vendored cloudpickle builds code",
    ),
    d("joblib.externals.loky", PROC, "spawns worker processes"),
    d("srsly.cloudpickle", DYN, "vendored cloudpickle builds code"),
    d(
        "lightning.pytorch.core.saving",
        DYN,
        "loads a checkpoint with torch.load",
    ),
    d(
        "pytorch_lightning.core.saving",
        DYN,
        "loads a checkpoint with torch.load",
    ),
    d(
        "lightning_fabric.utilities.cloud_io",
        DYN,
        "loads a checkpoint with torch.load",
    ),
    d(
        "lightning.fabric.utilities.cloud_io",
        DYN,
        "loads a checkpoint with torch.load",
    ),
    d("tensorflow.io.write_file", FILES, "writes a file"),
    d("tensorflow.io.gfile", FILES, "reads and writes files"),
    d(
        "tensorflow.python.ops.gen_io_ops",
        FILES,
        "reads and writes files",
    ),
    d(
        "tensorflow.python.lib.io.file_io",
        FILES,
        "reads and writes files",
    ),
    // Setters of container state reached by name (round one's tampering shape).
    d(
        "operator.setitem",
        TAMPER,
        "writes into any container, e.g. sys.modules",
    ),
    d(
        "operator.delitem",
        TAMPER,
        "deletes from any container, e.g. a safe list",
    ),
    d("operator.iadd", TAMPER, "extends any container in place"),
    d("operator.iconcat", TAMPER, "extends any container in place"),
];

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
const MODULE_STEPS: &[&str] = &[
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
const MODULE_STEPS_INNER: &[&str] = &[
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
struct Traversal {
    capability: Capability,
    reason: &'static str,
    path: String,
}

/// Is this name component a module object (see [`MODULE_STEPS`])?
fn module_step(part: &str, last: bool) -> bool {
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
fn traverse(module: &str, name: &str) -> Option<Traversal> {
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

/// Published advisories per dangerous path (prefix on component boundaries, like
/// [`DANGEROUS`]), for a finding's `evidence.references`. Sources: the picklescan advisories
/// (github.com/mmaitre314/picklescan/security), fickling PR #210 (which maps the 2025 picklescan
/// bypasses to their ids), ModelAudit PR #598 (CVE-2025-1716), and the PyTorch advisories.
const REFERENCES: &[(&str, &[&str])] = &[
    ("pip", &["CVE-2025-1716", "GHSA-vqmv-47xg-9wpr"]),
    ("venv", &["GHSA-vqmv-47xg-9wpr"]),
    ("ensurepip", &["GHSA-vqmv-47xg-9wpr", "GHSA-xp4f-hrf8-rxw7"]),
    (
        "operator.attrgetter",
        &["GHSA-m273-6v24-x4m4", "GHSA-955r-x9j8-7rhh"],
    ),
    (
        "operator.itemgetter",
        &["GHSA-m273-6v24-x4m4", "GHSA-955r-x9j8-7rhh"],
    ),
    (
        "operator.methodcaller",
        &["GHSA-m273-6v24-x4m4", "GHSA-955r-x9j8-7rhh"],
    ),
    ("profile", &["GHSA-46h3-79wf-xr6c", "GHSA-4675-36f9-wf6r"]),
    ("cProfile", &["GHSA-46h3-79wf-xr6c", "GHSA-4675-36f9-wf6r"]),
    ("trace", &["GHSA-46h3-79wf-xr6c", "GHSA-4675-36f9-wf6r"]),
    ("pdb", &["GHSA-46h3-79wf-xr6c", "GHSA-4675-36f9-wf6r"]),
    ("bdb", &["GHSA-46h3-79wf-xr6c", "GHSA-4675-36f9-wf6r"]),
    ("doctest", &["GHSA-46h3-79wf-xr6c", "GHSA-4675-36f9-wf6r"]),
    (
        "timeit",
        &[
            "GHSA-46h3-79wf-xr6c",
            "GHSA-4675-36f9-wf6r",
            "GHSA-v7x6-rv5q-mhwc",
        ],
    ),
    ("pickle", &["GHSA-84r2-jw7c-4r5q"]),
    ("idlelib", &["GHSA-r8g5-cgf2-4m4m"]),
    ("lib2to3", &["GHSA-r8g5-cgf2-4m4m"]),
    (
        "asyncio.unix_events._UnixSubprocessTransport",
        &["CVE-2025-10157"],
    ),
    ("pkgutil.resolve_name", &["GHSA-vvpj-8cmc-gx39"]),
    ("torch.jit.annotations.parse_type_line", &["CVE-2022-45907"]),
    ("torch.jit.load", &["CVE-2025-32434", "GHSA-53q9-r3pm-6pq6"]),
];

/// Advisory ids for a dotted-name traversal (protocol 4 getattr chains): fickling's
/// GHSA-5j3x-jp52-966f.
pub const TRAVERSAL_REFERENCES: &[&str] = &["GHSA-5j3x-jp52-966f"];

/// Advisory ids for code that TorchScript archives run on load: torch.load(weights_only=True)
/// runs TorchScript on torch < 2.6.
pub const TORCHSCRIPT_REFERENCES: &[&str] = &["CVE-2025-32434", "GHSA-53q9-r3pm-6pq6"];

/// The published advisories (CVE/GHSA ids) behind a dangerous global, in table order, without
/// duplicates; empty when none is on file.
pub fn references(module: &str, name: &str) -> Vec<&'static str> {
    let qualified = format!("{}.{name}", normalize_module(module));
    let mut out: Vec<&'static str> = Vec::new();
    for (path, ids) in REFERENCES {
        if covers(path, &qualified) {
            for id in *ids {
                if !out.contains(id) {
                    out.push(id);
                }
            }
        }
    }
    if explain_traversal(module, name).is_some() {
        for id in TRAVERSAL_REFERENCES {
            if !out.contains(id) {
                out.push(id);
            }
        }
    }
    out
}

/// Calls in TorchScript source (`code/**/*.py` of a `torch.jit.save` archive) that reach files,
/// native libraries or processes. TorchScript compiles and runs this code under `torch.jit.load`
/// always, and under `torch.load(weights_only=True)` on torch < 2.6 (CVE-2025-32434,
/// GHSA-53q9-r3pm-6pq6); `torch.from_file` and the library loaders are how the published
/// TorchScript payloads reach the file system and native code. Bare builtins are listed by
/// name because TorchScript code has no imports; serialized TorchScript calls `getattr` on
/// its own submodules, so only the builtins below count.
const TORCHSCRIPT_CALLS: &[Danger] = &[
    d("torch.from_file", FILES, "maps a file into a tensor"),
    d("torch.load", DYN, "loads another pickle"),
    d("torch.save", FILES, "writes a file"),
    d(
        "torch.jit.load",
        DYN,
        "loads and runs another TorchScript archive",
    ),
    d("torch.jit.save", FILES, "writes a file"),
    d("torch.ops.load_library", NATIVE, "loads a shared library"),
    d(
        "torch.classes.load_library",
        NATIVE,
        "loads a shared library",
    ),
    d("ops.load_library", NATIVE, "loads a shared library"),
    d("classes.load_library", NATIVE, "loads a shared library"),
    d("open", FILES, "opens a file"),
    d("eval", DYN, "evaluates source"),
    d("exec", DYN, "executes source"),
    d("compile", DYN, "compiles source"),
    d("__import__", DYN, "imports a module"),
    d("breakpoint", DYN, "starts a debugger"),
];

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

// ---- issue 32: what `torch.load(weights_only=True)` accepts ----
// Mirrors `torch/_weights_only_unpickler.py` of PyTorch main at commit 00f730b66e58 (the
// weights-only unpickler of torch 2.6 and later, where `weights_only=True` is the default):
// `_get_allowed_globals`, `_tensor_rebuild_functions`, `_blocklisted_modules` and the opcodes
// `Unpickler.load` implements (any other raises "Unsupported operand"). The policy's
// `[pickle] safe_globals` count as `torch.serialization.add_safe_globals` would.

/// The PyTorch source the weights-only verdict mirrors, for facts and messages.
pub const WEIGHTS_ONLY_MIRRORS: &str =
    "torch/_weights_only_unpickler.py (pytorch main 00f730b66e58; torch >= 2.6)";

/// Modules `_blocklisted_modules` refuses even when a safe-globals list names them.
const WEIGHTS_ONLY_BLOCKED: &[&str] = &["sys", "os", "posix", "nt"];

/// The opcodes the weights-only unpickler implements (pickletools names). `torch.save` writes
/// protocol 2 with these only; FRAME, SHORT_BINUNICODE, MEMOIZE, STACK_GLOBAL (protocol 4),
/// INST/OBJ/STRING/UNICODE (protocol 0), BINBYTES and the rest are refused.
pub const WEIGHTS_ONLY_OPCODES: &[&str] = &[
    "GLOBAL",
    "NEWOBJ",
    "REDUCE",
    "BUILD",
    "APPEND",
    "APPENDS",
    "SETITEM",
    "SETITEMS",
    "MARK",
    "TUPLE",
    "TUPLE1",
    "TUPLE2",
    "TUPLE3",
    "NONE",
    "NEWFALSE",
    "NEWTRUE",
    "EMPTY_TUPLE",
    "EMPTY_LIST",
    "EMPTY_DICT",
    "EMPTY_SET",
    "BININT",
    "BININT1",
    "BININT2",
    "BINFLOAT",
    "BINUNICODE",
    "SHORT_BINSTRING",
    "BINPERSID",
    "BINGET",
    "LONG_BINGET",
    "BINPUT",
    "LONG_BINPUT",
    "LONG1",
    "PROTO",
    "STOP",
];

/// The storage and legacy tensor type names `torch._storage_classes` and
/// `torch._tensor_classes` hold (module `torch`, `torch.cuda` and, for tensors,
/// `torch.sparse`), without their `Storage`/`Tensor` suffix.
const WEIGHTS_ONLY_STORAGE_TYPES: &[&str] = &[
    "Double",
    "Float",
    "Half",
    "BFloat16",
    "Long",
    "Int",
    "Short",
    "Char",
    "Byte",
    "Bool",
    "ComplexFloat",
    "ComplexDouble",
    "QInt8",
    "QUInt8",
    "QInt32",
    "QUInt4x2",
    "QUInt2x4",
];

/// `_get_allowed_globals` beyond the storage and tensor classes: exact `module.name` paths.
const WEIGHTS_ONLY_GLOBALS: &[(&str, &[&str])] = &[
    ("collections", &["OrderedDict", "Counter"]),
    ("torch.nn.parameter", &["Parameter"]),
    ("torch.serialization", &["_get_layout"]),
    ("torch", &["Size", "Tensor", "device"]),
    ("_codecs", &["encode"]),
    ("builtins", &["bytearray", "set", "complex"]),
    ("torch.storage", &["UntypedStorage", "TypedStorage"]),
    (
        "torch._utils",
        &[
            "_rebuild_parameter",
            "_rebuild_parameter_with_state",
            "_rebuild_qtensor",
            "_rebuild_tensor",
            "_rebuild_tensor_v2",
            "_rebuild_tensor_v3",
            "_rebuild_sparse_tensor",
            "_rebuild_meta_tensor_no_storage",
            "_rebuild_wrapper_subclass",
            "_rebuild_device_tensor_from_numpy",
            "_rebuild_device_tensor_from_cpu_tensor",
        ],
    ),
    ("torch._tensor", &["_rebuild_from_type_v2"]),
    (
        "torch",
        &[
            // `str(dtype)` of `torch.storage._dtype_to_storage_type_map()` and `_new_dtypes()`
            // (canonical names only: `torch.float` is no key), and `uint1..7`, `int1..7`.
            "float64",
            "float32",
            "float16",
            "bfloat16",
            "int64",
            "int32",
            "int16",
            "int8",
            "uint8",
            "bool",
            "complex128",
            "complex64",
            "complex32",
            "qint8",
            "qint32",
            "quint8",
            "quint4x2",
            "quint2x4",
            "float8_e5m2",
            "float8_e4m3fn",
            "float8_e5m2fnuz",
            "float8_e4m3fnuz",
            "float8_e8m0fnu",
            "float4_e2m1fn_x2",
            "bits8",
            "bits16",
            "bits1x8",
            "bits2x4",
            "bits4x2",
            "uint16",
            "uint32",
            "uint64",
            "uint1",
            "uint2",
            "uint3",
            "uint4",
            "uint5",
            "uint6",
            "uint7",
            "int1",
            "int2",
            "int3",
            "int4",
            "int5",
            "int6",
            "int7",
            // Quantization schemes.
            "per_tensor_affine",
            "per_tensor_symmetric",
            "per_channel_affine",
            "per_channel_symmetric",
            "per_channel_affine_float_qparams",
        ],
    ),
];

/// The module renames torch applies before its allowlist (`torch._utils.IMPORT_MAPPING`): a
/// mirror of what torch does, narrower than [`names::MODULE_ALIASES`] on purpose (torch refuses
/// `posix.system` by name, not as `os.system`). Each row is also a row of the one alias table;
/// a test keeps it so.
const WEIGHTS_ONLY_RENAMES: &[(&str, &str)] =
    &[("__builtin__", "builtins"), ("copy_reg", "copyreg")];

/// Would `torch.load(weights_only=True)` resolve the GLOBAL `module.name`? `module` and `name`
/// as the pickle spells them; torch renames Python 2 modules (`torch._utils.IMPORT_MAPPING`,
/// `__builtin__` -> `builtins`, `copy_reg` -> `copyreg`) and nothing else. `extra.safe` entries
/// count as `add_safe_globals` (`module.name`; `module.*` for a module and its submodules, as
/// the policy's safe list means it), except for the blocked modules.
pub fn weights_only_allows(module: &str, name: &str, extra: &ExtraLists) -> bool {
    let module = WEIGHTS_ONLY_RENAMES
        .iter()
        .find(|(from, _)| *from == module)
        .map_or(module, |(_, to)| *to);
    if WEIGHTS_ONLY_BLOCKED.contains(&module) {
        return false;
    }
    let builtin = WEIGHTS_ONLY_GLOBALS
        .iter()
        .any(|(m, names)| *m == module && names.contains(&name))
        || (matches!(module, "torch" | "torch.cuda")
            && name
                .strip_suffix("Storage")
                .is_some_and(|t| WEIGHTS_ONLY_STORAGE_TYPES.contains(&t)))
        || (matches!(module, "torch" | "torch.cuda" | "torch.sparse")
            && name
                .strip_suffix("Tensor")
                .is_some_and(|t| WEIGHTS_ONLY_STORAGE_TYPES.contains(&t)));
    let qualified = format!("{module}.{name}");
    builtin
        || extra
            .safe
            .iter()
            .any(|(m, n)| covers_entry(m, n.as_deref(), &qualified))
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

/// The capability a [`DANGEROUS`] entry gives `qualified` (a name it covers): the code judges'
/// capability when [`capabilities::lookup`] decides the name by itself, so that a finding names
/// the same capability for the same callable whichever judge found it (issue 38: `os.getenv`
/// under the `os` prefix is `credential-access`, `sys.settrace` under `sys` is `persistence`);
/// the entry's own capability otherwise. Method entries need a receiver, and the roles whose
/// capability depends on the argument (a path, a variable name) say what the code judge looks
/// for, not what the call does: `open` is `file-system` here and `credential-access` in
/// `SRC006` only when it reads a credential file (reading a variable, `os.getenv`, is
/// `credential-access` in both: the variable only decides how bad).
fn capability_of(danger: &Danger, qualified: &str) -> Capability {
    judged_capability(qualified).unwrap_or(danger.capability)
}

/// The capability the code judges give `qualified` whatever its arguments, if any (see
/// [`capability_of`]).
fn judged_capability(qualified: &str) -> Option<Capability> {
    use capabilities::{Match, Role};
    capabilities::lookup(qualified)
        .filter(|e| e.matching != Match::Method)
        .filter(|e| !matches!(e.role, Role::ReadPath | Role::WritePath))
        .map(|e| e.capability)
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

/// Does the dangerous prefix `path` cover the qualified name (same path, or a dotted child)?
fn covers(path: &str, qualified: &str) -> bool {
    match qualified.strip_prefix(path) {
        Some(rest) => rest.is_empty() || rest.starts_with('.'),
        None => false,
    }
}

/// Does a policy entry `(module, name)` cover the qualified name? The entry's module is
/// normalised like the pickle's, so `posix` in a policy means `os`.
fn covers_entry(module: &str, name: Option<&str>, qualified: &str) -> bool {
    let module = normalize_module(module);
    match name {
        Some(name) => covers(&format!("{module}.{name}"), qualified),
        None => covers(&module, qualified),
    }
}

#[cfg(test)]
mod tests {
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
