//! The table of dangerous globals, in the capability vocabulary, with the scanners and write-ups
//! that list each group; and the calls TorchScript source may make that reach files, native code
//! or other pickles. Matching is by path prefix ([`covers`]); which capability a name gets when the
//! code judges' table decides it by itself is [`capability_of`].

use super::capabilities::{self, Capability};
#[cfg(doc)]
use super::verdict::covers;

/// One dangerous path prefix with its capability and reason.
pub(super) struct Danger {
    pub(super) path: &'static str,
    pub(super) capability: Capability,
    pub(super) reason: &'static str,
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
pub(super) const FILES: Capability = Capability::FileSystem;
const NET: Capability = Capability::Network;
const NATIVE: Capability = Capability::NativeLoad;
const INTERP: Capability = Capability::InterpreterState;
const INSTALL: Capability = Capability::PackageInstall;
const PERSIST: Capability = Capability::Persistence;
pub(super) const TAMPER: Capability = Capability::Tampering;
const DOS: Capability = Capability::DenialOfService;
/// A dotted name that steps through a module object or a dunder reaches an object nobody
/// named: the unpickler's getattr chain is `getattr` itself, which is `dynamic-code`. Not a
/// capability of its own: the traversal is how the object is reached, not what it can do, and
/// when the name reaches a listed callable the verdict takes that callable's capability.
pub(super) const TRAVERSAL: Capability = Capability::DynamicCode;

/// Dangerous globals. Each group names the scanners or write-ups that list it.
pub(super) const DANGEROUS: &[Danger] = &[
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

/// Calls in TorchScript source (`code/**/*.py` of a `torch.jit.save` archive) that reach files,
/// native libraries or processes. TorchScript compiles and runs this code under `torch.jit.load`
/// always, and under `torch.load(weights_only=True)` on torch < 2.6 (CVE-2025-32434,
/// GHSA-53q9-r3pm-6pq6); `torch.from_file` and the library loaders are how the published
/// TorchScript payloads reach the file system and native code. Bare builtins are listed by
/// name because TorchScript code has no imports; serialized TorchScript calls `getattr` on
/// its own submodules, so only the builtins below count.
pub(super) const TORCHSCRIPT_CALLS: &[Danger] = &[
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

/// The capability a [`DANGEROUS`] entry gives `qualified` (a name it covers): the code judges'
/// capability when [`capabilities::lookup`] decides the name by itself, so that a finding names
/// the same capability for the same callable whichever judge found it (issue 38: `os.getenv`
/// under the `os` prefix is `credential-access`, `sys.settrace` under `sys` is `persistence`);
/// the entry's own capability otherwise. Method entries need a receiver, and the roles whose
/// capability depends on the argument (a path, a variable name) say what the code judge looks
/// for, not what the call does: `open` is `file-system` here and `credential-access` in
/// `SRC006` only when it reads a credential file (reading a variable, `os.getenv`, is
/// `credential-access` in both: the variable only decides how bad).
pub(super) fn capability_of(danger: &Danger, qualified: &str) -> Capability {
    judged_capability(qualified).unwrap_or(danger.capability)
}

/// The capability the code judges give `qualified` whatever its arguments, if any (see
/// [`capability_of`]).
pub(super) fn judged_capability(qualified: &str) -> Option<Capability> {
    use capabilities::{Match, Role};
    capabilities::lookup(qualified)
        .filter(|e| e.matching != Match::Method)
        .filter(|e| !matches!(e.role, Role::ReadPath | Role::WritePath))
        .map(|e| e.capability)
}
