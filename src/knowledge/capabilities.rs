//! The capability table: which Python callables, paths and environment variables let code shipped
//! with a model do something a model never needs to do (run a process, evaluate code, reach a
//! host, read credentials, persist or tamper, install packages, load native code). Every code
//! judge consults this one table: the behaviour analysis of shipped Python (`SRC006`), the
//! bytecode and native-code judges (`SRC007`) and the pickle and config judges. It is data, with
//! its sources named per entry; how bad a site is (severity, confidence) is decided by the judge
//! that sees the call's arguments and context, not here.
//!
//! [`Capability`] is the one vocabulary of what a callable can do (issue 38): the dangerous
//! table of `knowledge` and the standard-library table (`knowledge::stdlib`) name their entries
//! with it too, so a finding's evidence names the same capability for the same callable
//! whichever judge found it. The first seven are what shipped code is judged for (`SRC006`);
//! `file-system`, `interpreter-state`, `denial-of-service` and `tampering` are what only a
//! pickle or a config can reach by name. A callable listed here and in another table has the
//! same capability in both (`knowledge/vocabulary.rs` tests it), except for the roles judged by
//! their path argument ([`Role::ReadPath`], [`Role::WritePath`]), whose capability here is
//! what the argument must show (`open` reads a credential file), not what the call does.
//!
//! Sources (the `source` field of each entry names the one it comes from):
//! - CPython library reference: `os` "Process Management", `subprocess`, `pty`, `asyncio`
//!   "Subprocesses", `builtins` (`exec`, `eval`, `compile`), `types`, `marshal`, `pickle`,
//!   `ctypes`, `atexit`, `threading`, `signal`, `sys.settrace`, `site` (`.pth`,
//!   `sitecustomize`), `runpy`, `importlib`.
//! - Bandit plugin ids: B102 exec_used, B307 eval, B301 pickle, B302 marshal, B310
//!   urllib_urlopen, B321 ftplib, B401-B413 blacklist imports, B602-B607 subprocess/shell
//!   (`start_process_with_*`), B609 wildcard injection.
//! - GuardDog source-code rules (DataDog/guarddog `guarddog/analyzer/sourcecode/*.yml`):
//!   `code-execution`, `exec-base64`, `download-executable`, `exfiltrate-sensitive-data`,
//!   `cmd-overwrite`, `obfuscation`, `silent-process-execution`, `steganography`, `shady-links`.
//! - PyTorch docs: `torch.ops.load_library`, `torch.classes.load_library`,
//!   `torch.utils.cpp_extension.load`/`load_inline`; cffi docs: `ffi.dlopen`; TensorFlow docs:
//!   `tf.load_op_library`, `tf.load_library`.
//! - Hugging Face Hub docs: the token file (`~/.cache/huggingface/token`, `HF_HOME/token`) and the
//!   `HF_TOKEN`/`HUGGING_FACE_HUB_TOKEN` variables; MITRE ATT&CK T1552.001 (credentials in files)
//!   for the other credential paths and T1546.004/T1053.003/T1543.002 for shell profiles, cron
//!   and systemd.
//!
//! # Matching
//!
//! [`lookup`] takes a qualified name as a code judge resolves it (import aliases applied:
//! `sp.run` after `import subprocess as sp` is `subprocess.run`). It normalises the spellings
//! that reach the same object (`builtins.`/`__builtin__.` prefixes, `posix`/`nt` for `os`,
//! `cPickle`/`_pickle` for `pickle`), then finds an exact entry, then a [`Match::Module`] entry
//! whose module is a dotted prefix of the name, then a [`Match::Method`] entry whose method is
//! the name's last segment (for calls on objects the judge cannot resolve, like `ffi.dlopen`).
//! Exceptions and constants of a module (`subprocess.CalledProcessError`, `subprocess.PIPE`)
//! are deliberately not covered: only the callables are listed one by one.

use std::collections::HashMap;
use std::sync::LazyLock;

use super::names;

/// What a piece of code can do that a model never needs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Capability {
    /// Starts another program: a shell command, an interpreter, any executable.
    ProcessExecution,
    /// Turns data into code and runs it: `exec`, `eval`, code objects, deserializers that call.
    DynamicCode,
    /// Opens a connection to another host.
    Network,
    /// Reads secrets: tokens, keys, credential files, the whole environment.
    CredentialAccess,
    /// Changes something outside the model's own folder that outlives the load, or replaces
    /// functions other code relies on; or defers work to run later (exit, a timer, a signal).
    Persistence,
    /// Installs Python packages.
    PackageInstall,
    /// Loads native code into the process.
    NativeLoad,
    /// Opens, writes, moves or deletes a path the caller names (a pickle's `shutil.rmtree`).
    FileSystem,
    /// Changes the interpreter or the process for everyone after it: limits, hooks, handlers,
    /// threads started, global settings (`sys.setrecursionlimit`, `gc.disable`).
    InterpreterState,
    /// Sleeps, blocks, allocates or loops without a bound the caller cannot set (`time.sleep`,
    /// `zlib.decompress`).
    DenialOfService,
    /// Mutates an object it is handed: a container, a registry, a function's attributes
    /// (`operator.setitem`, `SAFE.update`).
    Tampering,
}

impl Capability {
    /// Every capability, in report order. The last four joined when the pickle categories
    /// became this vocabulary (issue 38); they come after the first seven so that reports
    /// listing those keep their order.
    pub const ALL: [Capability; 11] = [
        Capability::ProcessExecution,
        Capability::DynamicCode,
        Capability::Network,
        Capability::CredentialAccess,
        Capability::Persistence,
        Capability::PackageInstall,
        Capability::NativeLoad,
        Capability::FileSystem,
        Capability::InterpreterState,
        Capability::DenialOfService,
        Capability::Tampering,
    ];

    /// Stable kebab-case code, used in findings, facts and SBOM properties.
    pub fn code(self) -> &'static str {
        match self {
            Capability::ProcessExecution => "process-execution",
            Capability::DynamicCode => "dynamic-code",
            Capability::Network => "network",
            Capability::CredentialAccess => "credential-access",
            Capability::Persistence => "persistence",
            Capability::PackageInstall => "package-install",
            Capability::NativeLoad => "native-load",
            Capability::FileSystem => "file-system",
            Capability::InterpreterState => "interpreter-state",
            Capability::DenialOfService => "denial-of-service",
            Capability::Tampering => "tampering",
        }
    }

    /// The capability named by [`Capability::code`].
    pub fn from_code(code: &str) -> Option<Capability> {
        Capability::ALL.into_iter().find(|c| c.code() == code)
    }

    /// Lowercase phrase for messages ("runs a process").
    pub fn phrase(self) -> &'static str {
        match self {
            Capability::ProcessExecution => "runs another program",
            Capability::DynamicCode => "evaluates dynamic code",
            Capability::Network => "reaches the network",
            Capability::CredentialAccess => "reads credentials",
            Capability::Persistence => "persists or tampers outside the model",
            Capability::PackageInstall => "installs packages",
            Capability::NativeLoad => "loads native code",
            Capability::FileSystem => "opens, writes or deletes files",
            Capability::InterpreterState => "changes interpreter-wide state",
            Capability::DenialOfService => "blocks or allocates without bound",
            Capability::Tampering => "mutates objects other code relies on",
        }
    }

    /// The CWE a site of this capability is tagged with when its entry names none more precise.
    pub fn cwe(self) -> u32 {
        cwe_of(self)
    }
}

/// How an entry's name is matched against a resolved call name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Match {
    /// The whole qualified name.
    Exact,
    /// The module and anything under it (`pexpect` covers `pexpect.spawn`, `pexpect.pxssh.pxssh`).
    Module,
    /// The last dotted segment, on any receiver (`ffi.dlopen` for any `ffi`): used only for
    /// methods distinctive enough that the receiver does not matter.
    Method,
}

/// What calling the callable means; the judge looks at the call's arguments for the roles that
/// are not dangerous by themselves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Calling it is the capability (`os.system`).
    Call,
    /// Runs its argument as a program: the capability is the call, and the argument vector says
    /// what runs (`pip install` is [`Capability::PackageInstall`], `sys.executable` is Python).
    Command,
    /// Evaluates its argument as code (`exec`, `eval`): the argument says whether it is a
    /// literal, a decoded blob or something computed.
    Evaluate,
    /// Deserialises with a format that calls code (`pickle.loads`, `marshal.loads`): dangerous
    /// when the bytes are a literal, decoded or fetched, not when they are a file the caller names.
    Deserialize,
    /// Registers its callable argument to run later (`atexit.register`, `threading.Timer`): the
    /// capability is what that callable does; by itself it is deferral.
    Defer,
    /// Writes to the path in its argument (`open(p, "w")`, `shutil.copy(src, p)`): judged by
    /// [`path_class`](super::places::path_class).
    WritePath,
    /// Reads the path in its argument: judged by [`path_class`](super::places::path_class) (credential files).
    ReadPath,
    /// Reads one environment variable: judged by [`credential_variable`](super::places::credential_variable).
    ReadEnv,
    /// `setattr(target, name, value)`: tampering when the target is an imported module.
    SetAttr,
    /// Opens a connection or makes a request; the URL or host argument says where to.
    Connect,
    /// Imports a module named by its argument (`__import__`, `importlib.import_module`).
    Import,
}

/// One dangerous callable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// Qualified name (`os.system`), module (`pexpect`) or method (`dlopen`), per `matching`.
    pub name: &'static str,
    /// How `name` is matched.
    pub matching: Match,
    /// What calling it can do.
    pub capability: Capability,
    /// What the judge looks at to decide.
    pub role: Role,
    /// CWE id for SARIF tags.
    pub cwe: u32,
    /// Where the entry comes from.
    pub source: &'static str,
}

const fn e(name: &'static str, capability: Capability, role: Role, source: &'static str) -> Entry {
    Entry {
        name,
        matching: Match::Exact,
        capability,
        role,
        cwe: cwe_of(capability),
        source,
    }
}

const fn m(name: &'static str, capability: Capability, role: Role, source: &'static str) -> Entry {
    Entry {
        matching: Match::Module,
        ..e(name, capability, role, source)
    }
}

const fn method(
    name: &'static str,
    capability: Capability,
    role: Role,
    source: &'static str,
) -> Entry {
    Entry {
        matching: Match::Method,
        ..e(name, capability, role, source)
    }
}

const fn cwe_of(capability: Capability) -> u32 {
    match capability {
        Capability::ProcessExecution => 78,
        Capability::DynamicCode => 95,
        Capability::Network => 494,
        Capability::CredentialAccess => 522,
        Capability::Persistence => 912,
        Capability::PackageInstall => 829,
        Capability::NativeLoad => 114,
        // CWE-73 external control of a file name or path; CWE-15 external control of a
        // system setting; CWE-400 uncontrolled resource consumption; CWE-915 improperly
        // controlled modification of object attributes.
        Capability::FileSystem => 73,
        Capability::InterpreterState => 15,
        Capability::DenialOfService => 400,
        Capability::Tampering => 915,
    }
}

use Capability::{
    CredentialAccess as Cred, DynamicCode as Dyn, NativeLoad as Native, Network as Net,
    PackageInstall as Install, Persistence as Persist, ProcessExecution as Proc,
};

const OS_PROC: &str = "CPython os: Process Management; Bandit B605/B606";
const SUBPROCESS: &str = "CPython subprocess; Bandit B602-B604/B607; GuardDog code-execution";
const DYN: &str = "CPython builtins/types; Bandit B102/B307; GuardDog exec-base64";
const DESER: &str = "CPython pickle/marshal warnings; Bandit B301/B302";
const NET: &str = "CPython urllib/http.client/socket/ftplib/smtplib; Bandit B310/B321; GuardDog exfiltrate-sensitive-data";
const NET3: &str = "library docs (requests, httpx, aiohttp, urllib3, websocket-client, websockets, paramiko); GuardDog download-executable";
const DEFER: &str = "CPython atexit/threading/signal/sys.settrace";
const FILES: &str = "CPython open/shutil/os/pathlib; GuardDog cmd-overwrite";
const IPYTHON: &str = "IPython IPython/utils/process.py (system, getoutput run shell commands)";

/// The dangerous callables. Order within the table does not matter: [`lookup`] prefers exact
/// entries, then the longest module, then methods.
pub const ENTRIES: &[Entry] = &[
    // ---- process execution -----------------------------------------------------------------
    e("os.system", Proc, Role::Command, OS_PROC),
    e("os.popen", Proc, Role::Command, OS_PROC),
    e("os.popen2", Proc, Role::Command, OS_PROC),
    e("os.popen3", Proc, Role::Command, OS_PROC),
    e("os.popen4", Proc, Role::Command, OS_PROC),
    e("os.execl", Proc, Role::Command, OS_PROC),
    e("os.execle", Proc, Role::Command, OS_PROC),
    e("os.execlp", Proc, Role::Command, OS_PROC),
    e("os.execlpe", Proc, Role::Command, OS_PROC),
    e("os.execv", Proc, Role::Command, OS_PROC),
    e("os.execve", Proc, Role::Command, OS_PROC),
    e("os.execvp", Proc, Role::Command, OS_PROC),
    e("os.execvpe", Proc, Role::Command, OS_PROC),
    e("os.spawnl", Proc, Role::Command, OS_PROC),
    e("os.spawnle", Proc, Role::Command, OS_PROC),
    e("os.spawnlp", Proc, Role::Command, OS_PROC),
    e("os.spawnlpe", Proc, Role::Command, OS_PROC),
    e("os.spawnv", Proc, Role::Command, OS_PROC),
    e("os.spawnve", Proc, Role::Command, OS_PROC),
    e("os.spawnvp", Proc, Role::Command, OS_PROC),
    e("os.spawnvpe", Proc, Role::Command, OS_PROC),
    e("os.posix_spawn", Proc, Role::Command, OS_PROC),
    e("os.posix_spawnp", Proc, Role::Command, OS_PROC),
    e("os.fork", Proc, Role::Call, OS_PROC),
    e("os.forkpty", Proc, Role::Call, OS_PROC),
    e("os.startfile", Proc, Role::Command, OS_PROC),
    e("subprocess.call", Proc, Role::Command, SUBPROCESS),
    e("subprocess.run", Proc, Role::Command, SUBPROCESS),
    e("subprocess.Popen", Proc, Role::Command, SUBPROCESS),
    e("subprocess.check_call", Proc, Role::Command, SUBPROCESS),
    e("subprocess.check_output", Proc, Role::Command, SUBPROCESS),
    e("subprocess.getoutput", Proc, Role::Command, SUBPROCESS),
    // Added by the pickle judge (issue 32): IPython's shell helpers run a command line through
    // the shell (`IPython/utils/process.py`, `_process_posix.py`).
    e("IPython.utils.process.system", Proc, Role::Command, IPYTHON),
    e(
        "IPython.utils.process.getoutput",
        Proc,
        Role::Command,
        IPYTHON,
    ),
    e(
        "IPython.utils._process_posix.system",
        Proc,
        Role::Command,
        IPYTHON,
    ),
    e(
        "IPython.utils._process_posix.getoutput",
        Proc,
        Role::Command,
        IPYTHON,
    ),
    e(
        "subprocess.getstatusoutput",
        Proc,
        Role::Command,
        SUBPROCESS,
    ),
    e("subprocess.fork_exec", Proc, Role::Command, SUBPROCESS),
    e(
        "commands.getoutput",
        Proc,
        Role::Command,
        "Python 2 commands; Bandit B605",
    ),
    e(
        "commands.getstatusoutput",
        Proc,
        Role::Command,
        "Python 2 commands; Bandit B605",
    ),
    m(
        "popen2",
        Proc,
        Role::Command,
        "Python 2 popen2; Bandit B605",
    ),
    e(
        "platform.popen",
        Proc,
        Role::Command,
        "CPython platform (removed 3.8)",
    ),
    e(
        "pty.spawn",
        Proc,
        Role::Command,
        "CPython pty; GuardDog code-execution",
    ),
    e("pty.fork", Proc, Role::Call, "CPython pty"),
    e(
        "asyncio.create_subprocess_exec",
        Proc,
        Role::Command,
        "CPython asyncio Subprocesses",
    ),
    e(
        "asyncio.create_subprocess_shell",
        Proc,
        Role::Command,
        "CPython asyncio Subprocesses",
    ),
    e(
        "asyncio.subprocess.create_subprocess_exec",
        Proc,
        Role::Command,
        "CPython asyncio Subprocesses",
    ),
    e(
        "asyncio.subprocess.create_subprocess_shell",
        Proc,
        Role::Command,
        "CPython asyncio Subprocesses",
    ),
    e(
        "loop.subprocess_exec",
        Proc,
        Role::Command,
        "CPython asyncio event loop",
    ),
    e(
        "loop.subprocess_shell",
        Proc,
        Role::Command,
        "CPython asyncio event loop",
    ),
    method(
        "subprocess_shell",
        Proc,
        Role::Command,
        "CPython asyncio event loop",
    ),
    method(
        "subprocess_exec",
        Proc,
        Role::Command,
        "CPython asyncio event loop",
    ),
    m("pexpect", Proc, Role::Command, "pexpect docs (spawn, run)"),
    m("sh", Proc, Role::Command, "sh library docs"),
    e(
        "webbrowser.open",
        Proc,
        Role::Command,
        "CPython webbrowser (runs a browser)",
    ),
    // ---- dynamic code ----------------------------------------------------------------------
    e("exec", Dyn, Role::Evaluate, DYN),
    e("eval", Dyn, Role::Evaluate, DYN),
    e("compile", Dyn, Role::Evaluate, DYN),
    e(
        "execfile",
        Dyn,
        Role::Evaluate,
        "Python 2 builtins; Bandit B102",
    ),
    e("types.FunctionType", Dyn, Role::Evaluate, DYN),
    e("types.CodeType", Dyn, Role::Evaluate, DYN),
    e("types.LambdaType", Dyn, Role::Evaluate, DYN),
    e("code.interact", Dyn, Role::Evaluate, "CPython code"),
    e(
        "code.InteractiveInterpreter",
        Dyn,
        Role::Evaluate,
        "CPython code",
    ),
    e(
        "code.InteractiveConsole",
        Dyn,
        Role::Evaluate,
        "CPython code",
    ),
    e("runpy.run_path", Dyn, Role::Evaluate, "CPython runpy"),
    e("runpy.run_module", Dyn, Role::Evaluate, "CPython runpy"),
    e(
        "imp.load_source",
        Dyn,
        Role::Evaluate,
        "CPython imp (removed 3.12)",
    ),
    e(
        "imp.load_compiled",
        Dyn,
        Role::Evaluate,
        "CPython imp (removed 3.12)",
    ),
    e("marshal.loads", Dyn, Role::Deserialize, DESER),
    e("marshal.load", Dyn, Role::Deserialize, DESER),
    e("pickle.loads", Dyn, Role::Deserialize, DESER),
    e("pickle.load", Dyn, Role::Deserialize, DESER),
    e("pickle.Unpickler", Dyn, Role::Deserialize, DESER),
    e(
        "dill.loads",
        Dyn,
        Role::Deserialize,
        "dill docs; Bandit B301",
    ),
    e(
        "dill.load",
        Dyn,
        Role::Deserialize,
        "dill docs; Bandit B301",
    ),
    e(
        "cloudpickle.loads",
        Dyn,
        Role::Deserialize,
        "cloudpickle docs; Bandit B301",
    ),
    e(
        "cloudpickle.load",
        Dyn,
        Role::Deserialize,
        "cloudpickle docs; Bandit B301",
    ),
    e(
        "shelve.open",
        Dyn,
        Role::Deserialize,
        "CPython shelve; Bandit B301",
    ),
    e(
        "torch.load",
        Dyn,
        Role::Deserialize,
        "PyTorch torch.load docs (pickle unless weights_only)",
    ),
    e(
        "joblib.load",
        Dyn,
        Role::Deserialize,
        "joblib docs (pickle-based)",
    ),
    e(
        "numpy.load",
        Dyn,
        Role::Deserialize,
        "NumPy docs (allow_pickle)",
    ),
    e(
        "pandas.read_pickle",
        Dyn,
        Role::Deserialize,
        "pandas docs; Bandit B301",
    ),
    e(
        "jsonpickle.decode",
        Dyn,
        Role::Deserialize,
        "jsonpickle docs",
    ),
    e(
        "yaml.unsafe_load",
        Dyn,
        Role::Deserialize,
        "PyYAML docs; Bandit B506",
    ),
    e("__import__", Dyn, Role::Import, "CPython builtins"),
    e(
        "importlib.import_module",
        Dyn,
        Role::Import,
        "CPython importlib",
    ),
    e(
        "importlib.__import__",
        Dyn,
        Role::Import,
        "CPython importlib",
    ),
    // ---- network ---------------------------------------------------------------------------
    e("socket.socket", Net, Role::Connect, NET),
    e("socket.create_connection", Net, Role::Connect, NET),
    e("socket.fromfd", Net, Role::Connect, NET),
    e("socket.gethostbyname", Net, Role::Connect, NET),
    e("socket.gethostbyname_ex", Net, Role::Connect, NET),
    e("socket.getaddrinfo", Net, Role::Connect, NET),
    e("dns.resolver.resolve", Net, Role::Connect, "dnspython docs"),
    e("dns.resolver.query", Net, Role::Connect, "dnspython docs"),
    e("asyncio.open_connection", Net, Role::Connect, NET),
    e("urllib.request.urlopen", Net, Role::Connect, NET),
    e("urllib.request.urlretrieve", Net, Role::Connect, NET),
    e("urllib.request.Request", Net, Role::Connect, NET),
    e("urllib.request.build_opener", Net, Role::Connect, NET),
    e("urllib.urlopen", Net, Role::Connect, NET),
    e("urllib.urlretrieve", Net, Role::Connect, NET),
    e("urllib.Request", Net, Role::Connect, NET),
    e("http.client.HTTPConnection", Net, Role::Connect, NET),
    e("http.client.HTTPSConnection", Net, Role::Connect, NET),
    e("ftplib.FTP", Net, Role::Connect, NET),
    e("ftplib.FTP_TLS", Net, Role::Connect, NET),
    e("smtplib.SMTP", Net, Role::Connect, NET),
    e("smtplib.SMTP_SSL", Net, Role::Connect, NET),
    e("telnetlib.Telnet", Net, Role::Connect, NET),
    e("xmlrpc.client.ServerProxy", Net, Role::Connect, NET),
    e("requests.get", Net, Role::Connect, NET3),
    e("requests.post", Net, Role::Connect, NET3),
    e("requests.put", Net, Role::Connect, NET3),
    e("requests.patch", Net, Role::Connect, NET3),
    e("requests.delete", Net, Role::Connect, NET3),
    e("requests.head", Net, Role::Connect, NET3),
    e("requests.options", Net, Role::Connect, NET3),
    e("requests.request", Net, Role::Connect, NET3),
    m("requests.api", Net, Role::Connect, NET3),
    e("requests.Session", Net, Role::Connect, NET3),
    e("requests.session", Net, Role::Connect, NET3),
    e("httpx.get", Net, Role::Connect, NET3),
    e("httpx.post", Net, Role::Connect, NET3),
    e("httpx.put", Net, Role::Connect, NET3),
    e("httpx.patch", Net, Role::Connect, NET3),
    e("httpx.delete", Net, Role::Connect, NET3),
    e("httpx.head", Net, Role::Connect, NET3),
    e("httpx.request", Net, Role::Connect, NET3),
    e("httpx.stream", Net, Role::Connect, NET3),
    e("httpx.Client", Net, Role::Connect, NET3),
    e("httpx.AsyncClient", Net, Role::Connect, NET3),
    e("aiohttp.ClientSession", Net, Role::Connect, NET3),
    e("aiohttp.request", Net, Role::Connect, NET3),
    e("urllib3.PoolManager", Net, Role::Connect, NET3),
    e("urllib3.request", Net, Role::Connect, NET3),
    e("urllib3.connection_from_url", Net, Role::Connect, NET3),
    e("websocket.create_connection", Net, Role::Connect, NET3),
    e("websocket.WebSocket", Net, Role::Connect, NET3),
    e("websocket.WebSocketApp", Net, Role::Connect, NET3),
    m("websockets", Net, Role::Connect, NET3),
    e("paramiko.SSHClient", Net, Role::Connect, NET3),
    e("pycurl.Curl", Net, Role::Connect, NET3),
    e("wget.download", Net, Role::Connect, NET3),
    // ---- credential access -----------------------------------------------------------------
    m(
        "keyring",
        Cred,
        Role::Call,
        "keyring docs; MITRE ATT&CK T1555",
    ),
    e(
        "huggingface_hub.get_token",
        Cred,
        Role::Call,
        "Hugging Face Hub docs (token)",
    ),
    e(
        "huggingface_hub.HfFolder.get_token",
        Cred,
        Role::Call,
        "Hugging Face Hub docs (token)",
    ),
    e(
        "huggingface_hub.utils.get_token",
        Cred,
        Role::Call,
        "Hugging Face Hub docs (token)",
    ),
    m("browser_cookie3", Cred, Role::Call, "MITRE ATT&CK T1539"),
    e(
        "win32crypt.CryptUnprotectData",
        Cred,
        Role::Call,
        "MITRE ATT&CK T1555.003",
    ),
    e("os.getenv", Cred, Role::ReadEnv, "CPython os"),
    e("os.environ.get", Cred, Role::ReadEnv, "CPython os"),
    e("os.environ.__getitem__", Cred, Role::ReadEnv, "CPython os"),
    e("os.getenvb", Cred, Role::ReadEnv, "CPython os"),
    e("open", Cred, Role::ReadPath, FILES),
    e("io.open", Cred, Role::ReadPath, FILES),
    e("codecs.open", Cred, Role::ReadPath, FILES),
    // ---- persistence, tampering and deferral -----------------------------------------------
    e("atexit.register", Persist, Role::Defer, DEFER),
    e("threading.Timer", Persist, Role::Defer, DEFER),
    e("threading.Thread", Persist, Role::Defer, DEFER),
    e("threading.start_new_thread", Persist, Role::Defer, DEFER),
    e("multiprocessing.Process", Persist, Role::Defer, DEFER),
    e("signal.signal", Persist, Role::Defer, DEFER),
    e("sys.settrace", Persist, Role::Defer, DEFER),
    e("sys.setprofile", Persist, Role::Defer, DEFER),
    e("threading.settrace", Persist, Role::Defer, DEFER),
    e("threading.setprofile", Persist, Role::Defer, DEFER),
    e("sys.addaudithook", Persist, Role::Defer, DEFER),
    e("os.register_at_fork", Persist, Role::Defer, DEFER),
    e("weakref.finalize", Persist, Role::Defer, DEFER),
    e(
        "setattr",
        Persist,
        Role::SetAttr,
        "CPython builtins; GuardDog cmd-overwrite",
    ),
    e(
        "site.addsitedir",
        Persist,
        Role::Call,
        "CPython site (.pth processing)",
    ),
    e(
        "crontab.CronTab",
        Persist,
        Role::Call,
        "python-crontab docs; MITRE ATT&CK T1053.003",
    ),
    m(
        "winreg",
        Persist,
        Role::Call,
        "CPython winreg; MITRE ATT&CK T1547.001",
    ),
    m(
        "_winreg",
        Persist,
        Role::Call,
        "CPython winreg; MITRE ATT&CK T1547.001",
    ),
    e("shutil.copy", Persist, Role::WritePath, FILES),
    e("shutil.copy2", Persist, Role::WritePath, FILES),
    e("shutil.copyfile", Persist, Role::WritePath, FILES),
    e("shutil.move", Persist, Role::WritePath, FILES),
    e("shutil.copytree", Persist, Role::WritePath, FILES),
    e("os.rename", Persist, Role::WritePath, FILES),
    e("os.replace", Persist, Role::WritePath, FILES),
    e("os.open", Persist, Role::WritePath, FILES),
    e("os.symlink", Persist, Role::WritePath, FILES),
    e("os.link", Persist, Role::WritePath, FILES),
    method("write_text", Persist, Role::WritePath, FILES),
    method("write_bytes", Persist, Role::WritePath, FILES),
    // ---- package installs ------------------------------------------------------------------
    e(
        "pip.main",
        Install,
        Role::Call,
        "pip docs (programmatic use is unsupported)",
    ),
    m(
        "pip._internal",
        Install,
        Role::Call,
        "pip docs (programmatic use is unsupported)",
    ),
    e("pip._internal.main", Install, Role::Call, "pip docs"),
    // ---- native loads: generated from `names::NATIVE_LOADERS` (see `LOADER_ENTRIES`) ---------
];

// ---- issue 39: third-party packages judged by purpose ------------------------------------
//
// A package whose purpose is to act on the world is known at package level: any callable of it
// that a pickle calls or a config's `_target_` names is dangerous with the package's capability,
// whatever its name (a class is a client, a connection or a runner: judged by that purpose), and
// a call into it in shipped code is a site of that capability. Exact and module entries of
// [`ENTRIES`] are more specific and win (`paramiko.SSHClient` connects; `pip.main` installs).

const VCS: &str =
    "a version-control client: clone and fetch run hooks and transport helpers (package docs)";
const CLUSTER: &str =
    "a cluster or container client: runs commands in containers or jobs (package docs)";
const REMOTE: &str = "a remote shell or task runner: runs commands (package docs)";
const CLOUD: &str = "a cloud SDK or storage client: reaches its service (package docs)";
const CLIENTS: &str = "an HTTP, RPC, database or messaging client (package docs)";
const BROWSER: &str = "browser automation: starts and drives a web browser (package docs)";
const SCHEDULE: &str =
    "a scheduler or task queue: runs callables later or elsewhere (package docs)";
const DOWNLOAD: &str = "a downloader: fetches files or media (package docs)";
const PACKAGING: &str =
    "a package manager or build tool: installs packages or runs builds (package docs)";

/// Packages judged by purpose (see above). Matched like [`Match::Module`] entries, after
/// [`ENTRIES`]' exact and module entries.
pub const PACKAGES: &[Entry] = &[
    // Version-control clients.
    m("pygit2", Proc, Role::Call, VCS),
    m("hglib", Proc, Role::Call, VCS),
    m("git", Proc, Role::Call, VCS),
    m("dulwich", Proc, Role::Call, VCS),
    m("mercurial", Proc, Role::Call, VCS),
    m("svn", Proc, Role::Call, VCS),
    m("pysvn", Proc, Role::Call, VCS),
    // Cluster and container clients.
    m("docker", Proc, Role::Call, CLUSTER),
    m("nomad", Proc, Role::Call, CLUSTER),
    m("kubernetes", Proc, Role::Call, CLUSTER),
    m("podman", Proc, Role::Call, CLUSTER),
    m("ray.job_submission", Proc, Role::Call, CLUSTER),
    // Remote shells and task runners.
    m("asyncssh", Proc, Role::Call, REMOTE),
    m("fabric", Proc, Role::Call, REMOTE),
    m("paramiko", Proc, Role::Call, REMOTE),
    m("invoke", Proc, Role::Call, REMOTE),
    m("plumbum", Proc, Role::Call, REMOTE),
    m("spur", Proc, Role::Call, REMOTE),
    m("pssh", Proc, Role::Call, REMOTE),
    m("netmiko", Proc, Role::Call, REMOTE),
    // Cloud SDKs and storage clients.
    m("boto3", Net, Role::Connect, CLOUD),
    m("botocore", Net, Role::Connect, CLOUD),
    m("boto", Net, Role::Connect, CLOUD),
    m("aioboto3", Net, Role::Connect, CLOUD),
    m("google.cloud", Net, Role::Connect, CLOUD),
    m("googleapiclient", Net, Role::Connect, CLOUD),
    m("azure", Net, Role::Connect, CLOUD),
    m("s3fs", Net, Role::Connect, CLOUD),
    m("gcsfs", Net, Role::Connect, CLOUD),
    m("adlfs", Net, Role::Connect, CLOUD),
    m("minio", Net, Role::Connect, CLOUD),
    m("oss2", Net, Role::Connect, CLOUD),
    m("smart_open", Net, Role::Connect, CLOUD),
    m("dropbox", Net, Role::Connect, CLOUD),
    // HTTP, RPC and messaging clients.
    m("requests", Net, Role::Connect, CLIENTS),
    m("httpx", Net, Role::Connect, CLIENTS),
    m("urllib3", Net, Role::Connect, CLIENTS),
    m("aiohttp", Net, Role::Connect, CLIENTS),
    m("httplib2", Net, Role::Connect, CLIENTS),
    m("pycurl", Net, Role::Connect, CLIENTS),
    m("websocket", Net, Role::Connect, CLIENTS),
    m("grpc", Net, Role::Connect, CLIENTS),
    m("pika", Net, Role::Connect, CLIENTS),
    m("kafka", Net, Role::Connect, CLIENTS),
    m("confluent_kafka", Net, Role::Connect, CLIENTS),
    m("zmq", Net, Role::Connect, CLIENTS),
    m("paho", Net, Role::Connect, CLIENTS),
    m("nats", Net, Role::Connect, CLIENTS),
    m("redis", Net, Role::Connect, CLIENTS),
    m("pymongo", Net, Role::Connect, CLIENTS),
    m("psycopg2", Net, Role::Connect, CLIENTS),
    m("pymysql", Net, Role::Connect, CLIENTS),
    m("ftputil", Net, Role::Connect, CLIENTS),
    m("pysftp", Net, Role::Connect, CLIENTS),
    m("smbclient", Net, Role::Connect, CLIENTS),
    m("dns", Net, Role::Connect, CLIENTS),
    m("scapy", Net, Role::Connect, CLIENTS),
    // Browser automation.
    m("selenium", Proc, Role::Call, BROWSER),
    m("playwright", Proc, Role::Call, BROWSER),
    m("pyppeteer", Proc, Role::Call, BROWSER),
    m("splinter", Proc, Role::Call, BROWSER),
    // Schedulers.
    m("celery", Net, Role::Connect, SCHEDULE),
    m("apscheduler", Persist, Role::Defer, SCHEDULE),
    // `schedule` is also what training code names its own learning-rate module: only the
    // package's API is listed.
    e("schedule.every", Persist, Role::Defer, SCHEDULE),
    e("schedule.repeat", Persist, Role::Defer, SCHEDULE),
    e("schedule.run_pending", Persist, Role::Defer, SCHEDULE),
    e("schedule.run_all", Persist, Role::Defer, SCHEDULE),
    e("schedule.Scheduler", Persist, Role::Defer, SCHEDULE),
    e("schedule.Job", Persist, Role::Defer, SCHEDULE),
    m("rq", Net, Role::Connect, SCHEDULE),
    m("dramatiq", Net, Role::Connect, SCHEDULE),
    m("huey", Net, Role::Connect, SCHEDULE),
    // Downloaders.
    m("wget", Net, Role::Connect, DOWNLOAD),
    m("gdown", Net, Role::Connect, DOWNLOAD),
    m("yt_dlp", Net, Role::Connect, DOWNLOAD),
    m("youtube_dl", Net, Role::Connect, DOWNLOAD),
    m("pytube", Net, Role::Connect, DOWNLOAD),
];

/// Whether `entry` is one of [`PACKAGES`] (its `source` then says the package's purpose).
pub fn is_package(entry: &Entry) -> bool {
    // By value: a `const` table's entries have no one address to compare.
    PACKAGES.contains(entry) || INSTALLER_ENTRIES.contains(entry)
}

/// [`names::NATIVE_LOADERS`] as entries of [`ENTRIES`]' kind: the one loader list, read here
/// instead of a copy.
static LOADER_ENTRIES: LazyLock<Vec<Entry>> = LazyLock::new(|| {
    names::NATIVE_LOADERS
        .iter()
        .map(|l| {
            if l.method {
                method(l.name, Native, Role::Call, l.source)
            } else {
                e(l.name, Native, Role::Call, l.source)
            }
        })
        .collect()
});

/// [`names::INSTALLERS`] as purpose entries of [`PACKAGES`]' kind: the whole module, or the
/// installer's API (each name and what is under it) when the module name is a common one.
static INSTALLER_ENTRIES: LazyLock<Vec<Entry>> = LazyLock::new(|| {
    names::INSTALLERS
        .iter()
        .flat_map(|i| match i.api {
            None => vec![m(i.name, Install, Role::Call, PACKAGING)],
            Some(api) => api
                .iter()
                .map(|name| m(name, Install, Role::Call, PACKAGING))
                .collect(),
        })
        .collect()
});

/// Every callable entry: [`ENTRIES`] and the loaders of [`names::NATIVE_LOADERS`].
pub fn all_entries() -> impl Iterator<Item = &'static Entry> {
    ENTRIES.iter().chain(LOADER_ENTRIES.iter())
}

/// Every purpose entry: [`PACKAGES`] and the installers of [`names::INSTALLERS`].
pub fn all_packages() -> impl Iterator<Item = &'static Entry> {
    PACKAGES.iter().chain(INSTALLER_ENTRIES.iter())
}

/// The purpose entry of [`PACKAGES`] whose package is a dotted prefix of `name` (the longest;
/// of several entries for one package, the last).
fn lookup_package(name: &str) -> Option<&'static Entry> {
    prefixes(name).find_map(|(prefix, whole)| {
        INDEX
            .packages
            .get(prefix)?
            .iter()
            .rev()
            .find(|e| whole || e.matching != Match::Exact)
            .copied()
    })
}

/// `name` and its dotted prefixes, longest first, each with whether it is the whole name.
fn prefixes(name: &str) -> impl Iterator<Item = (&str, bool)> {
    let cuts = name.match_indices('.').map(|(i, _)| i).rev();
    std::iter::once((name, true)).chain(cuts.map(move |i| (&name[..i], false)))
}

/// The tables by name, so that a lookup costs a few hash probes whatever their size: the code
/// judge looks names up once per call, and a chain of 5,000 calls is 5,000 lookups (issue 37).
/// Each map keeps what the linear search it replaces found: the first exact or method entry of
/// a name, the last module entry (the longest prefix wins; among equals, the last).
struct Index {
    exact: HashMap<&'static str, &'static Entry>,
    module: HashMap<&'static str, &'static Entry>,
    method: HashMap<&'static str, &'static Entry>,
    packages: HashMap<&'static str, Vec<&'static Entry>>,
}

static INDEX: LazyLock<Index> = LazyLock::new(|| {
    let mut index = Index {
        exact: HashMap::new(),
        module: HashMap::new(),
        method: HashMap::new(),
        packages: HashMap::new(),
    };
    for e in all_entries() {
        match e.matching {
            Match::Exact => {
                index.exact.entry(e.name).or_insert(e);
            }
            Match::Module => {
                index.module.insert(e.name, e);
            }
            Match::Method => {
                index.method.entry(e.name).or_insert(e);
            }
        }
    }
    for e in all_packages() {
        index.packages.entry(e.name).or_default().push(e);
    }
    index
});

/// The canonical spelling of a resolved name (`posix.system` -> `os.system`,
/// `builtins.exec` -> `exec`): the first component through [`names::MODULE_ALIASES`] (the one
/// alias table, which the pickle judge reads too), then `builtins.` dropped, because this table
/// keys builtins by the bare names code calls them by.
pub fn normalize(name: &str) -> String {
    let (first, rest) = name.split_once('.').unwrap_or((name, ""));
    let canonical = names::canonical_module(first).unwrap_or(first);
    if canonical == "builtins" && !rest.is_empty() {
        return rest.to_owned();
    }
    let name = match (names::canonical_module(first), rest.is_empty()) {
        (None, _) => name.to_owned(),
        (Some(to), true) => to.to_owned(),
        (Some(to), false) => format!("{to}.{rest}"),
    };
    normalize_library_attribute(name)
}

/// The entry for a resolved call name, if the callable is in the table (see "Matching").
pub fn lookup(name: &str) -> Option<&'static Entry> {
    let name = normalize(name);
    if let Some(entry) = lookup_handle(&name) {
        return Some(entry);
    }
    if let Some(entry) = INDEX.exact.get(name.as_str()) {
        return Some(entry);
    }
    let module = prefixes(&name).find_map(|(prefix, _)| INDEX.module.get(prefix).copied());
    if module.is_some() {
        return module;
    }
    if let Some(entry) = lookup_package(&name) {
        return Some(entry);
    }
    let last = name.rsplit('.').next().unwrap_or_default();
    // A bare name is a local function, not a method on some object.
    if last.len() == name.len() {
        return None;
    }
    INDEX.method.get(last).copied()
}

/// What an imported symbol does, when it is one of [`NOTABLE_IMPORTS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ImportClass {
    /// Starts a process or replaces the current one.
    Process,
    /// Loads a library or other code at run time.
    Load,
}

/// Imported functions that run processes or load code, as data (the C library and Win32 API
/// names; Mach-O's leading `_` and ELF version suffixes are stripped before the lookup).
/// Sources: POSIX `exec`, `posix_spawn`, `system`, `popen`, `fork`, `dlopen` (IEEE Std
/// 1003.1-2024); glibc `execvpe`, `execveat`, `dlmopen`; Microsoft Win32 API
/// (`processthreadsapi.h`, `shellapi.h`, `libloaderapi.h`, `winbase.h`) and the CRT
/// (`_wsystem`, `_popen`, `_wpopen`, `_exec*`, `_spawn*`).
pub const NOTABLE_IMPORTS: &[(&str, ImportClass)] = &[
    ("system", ImportClass::Process),
    ("popen", ImportClass::Process),
    ("execve", ImportClass::Process),
    ("execv", ImportClass::Process),
    ("execvp", ImportClass::Process),
    ("execvpe", ImportClass::Process),
    ("execl", ImportClass::Process),
    ("execlp", ImportClass::Process),
    ("execle", ImportClass::Process),
    ("execveat", ImportClass::Process),
    ("fexecve", ImportClass::Process),
    ("fork", ImportClass::Process),
    ("vfork", ImportClass::Process),
    ("posix_spawn", ImportClass::Process),
    ("posix_spawnp", ImportClass::Process),
    ("_wsystem", ImportClass::Process),
    ("_popen", ImportClass::Process),
    ("_wpopen", ImportClass::Process),
    ("_execv", ImportClass::Process),
    ("_execvp", ImportClass::Process),
    ("_wexecv", ImportClass::Process),
    ("_spawnv", ImportClass::Process),
    ("_spawnvp", ImportClass::Process),
    ("_wspawnv", ImportClass::Process),
    ("CreateProcessA", ImportClass::Process),
    ("CreateProcessW", ImportClass::Process),
    ("CreateProcessAsUserA", ImportClass::Process),
    ("CreateProcessAsUserW", ImportClass::Process),
    ("CreateProcessWithLogonW", ImportClass::Process),
    ("CreateProcessWithTokenW", ImportClass::Process),
    ("WinExec", ImportClass::Process),
    ("ShellExecuteA", ImportClass::Process),
    ("ShellExecuteW", ImportClass::Process),
    ("ShellExecuteExA", ImportClass::Process),
    ("ShellExecuteExW", ImportClass::Process),
    ("dlopen", ImportClass::Load),
    ("dlmopen", ImportClass::Load),
    ("LoadLibraryA", ImportClass::Load),
    ("LoadLibraryW", ImportClass::Load),
    ("LoadLibraryExA", ImportClass::Load),
    ("LoadLibraryExW", ImportClass::Load),
    ("LdrLoadDll", ImportClass::Load),
];

/// The class of an imported symbol name, after stripping Mach-O's `_` prefix and an ELF
/// `@VERSION` suffix.
pub fn classify_import(name: &str) -> Option<ImportClass> {
    let base = name.split('@').next().unwrap_or(name);
    let lookup = |n: &str| {
        NOTABLE_IMPORTS
            .iter()
            .find(|(k, _)| *k == n)
            .map(|(_, c)| *c)
    };
    lookup(base).or_else(|| base.strip_prefix('_').and_then(lookup))
}

// ---- native library handles ----------------------------------------------------------------
//
// `ctypes.CDLL("libc.so.6").system(b"curl … | sh")` runs a shell command without naming `os` or
// `subprocess`: the loader returns a handle whose attributes are the library's C functions. A
// code judge names that value [`LIBRARY_HANDLE`], so the call resolves to
// `ctypes.<library>.system` and [`lookup`] judges the C function by [`NOTABLE_IMPORTS`] (the
// same symbol table the native-code judge reads in object files). The CPython API through
// `ctypes.pythonapi` is judged the same way: `PyRun_SimpleString` evaluates its argument.

/// The name a code judge gives to the value a native library loader returns (`ctypes.CDLL(…)`,
/// `cdll.LoadLibrary(…)`, cffi's `ffi.dlopen(…)`, `ctypes.cdll.<name>`).
pub const LIBRARY_HANDLE: &str = "ctypes.<library>";

/// Whether a subscript of the value named `name` is an attribute of it: ctypes' loaders and
/// library handles (`ctypes.cdll["libc.so.6"]`, `handle["system"]`, `pythonapi["PyRun_…"]`)
/// define `__getitem__` as `getattr` (CPython `Lib/ctypes/__init__.py`, `CDLL.__getitem__`,
/// `LibraryLoader.__getitem__`).
pub fn subscript_is_attribute(name: &str) -> bool {
    let name = normalize(name);
    let under = |prefix: &str| {
        name.strip_prefix(prefix)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
    };
    // A library named with dots (`ctypes.cdll.libc.so.6`) is still a library of the loader.
    under(LIBRARY_HANDLE)
        || under("ctypes.pythonapi")
        || names::NATIVE_LOADERS
            .iter()
            .filter_map(|l| loader_object(l.name))
            .any(|loader| under(&format!("ctypes.{loader}")))
}

/// Whether calling `entry` returns a library handle ([`LIBRARY_HANDLE`]).
pub fn returns_library(entry: &Entry) -> bool {
    names::NATIVE_LOADERS
        .iter()
        .any(|l| l.handle && l.name == entry.name)
}

/// `cdll` of `ctypes.cdll.LoadLibrary`: ctypes' library loader objects, whose attributes load a
/// library by name too (`ctypes.cdll.msvcrt`), read off the one loader list.
fn loader_object(loader: &str) -> Option<&str> {
    loader
        .strip_prefix("ctypes.")?
        .strip_suffix(".LoadLibrary")
        .filter(|object| !object.contains('.'))
}

const LIBC: &str =
    "C library and Win32 API through a ctypes/cffi handle (POSIX, Win32; see NOTABLE_IMPORTS)";
const PYTHONAPI: &str = "CPython C API (Python/pythonrun.c, ceval.c) through ctypes.pythonapi";

/// A C function that starts a process, called through a library handle.
static HANDLE_PROCESS: Entry = e("ctypes.<library>.system", Proc, Role::Command, LIBC);
/// A C function that loads another library, called through a library handle.
static HANDLE_LOAD: Entry = e("ctypes.<library>.dlopen", Native, Role::Call, LIBC);

/// CPython C API functions that compile or run code given as a string.
const PYTHONAPI_EVALUATE: &[&str] = &[
    "PyRun_SimpleString",
    "PyRun_SimpleStringFlags",
    "PyRun_String",
    "PyRun_StringFlags",
    "Py_CompileString",
    "Py_CompileStringFlags",
    "Py_CompileStringExFlags",
    "Py_CompileStringObject",
    "PyEval_EvalCode",
    "PyImport_ExecCodeModule",
    "PyMarshal_ReadObjectFromString",
];

static PYTHONAPI_EVAL: Entry = e(
    "ctypes.pythonapi.PyRun_SimpleString",
    Dyn,
    Role::Evaluate,
    PYTHONAPI,
);

/// Whether a dotted name ending in `.attr` can look up to an [`Match::Exact`] entry: `attr` is
/// the last segment of one, a `ctypes.pythonapi` evaluator or a C function a library handle
/// judges. A necessary condition only, cheap enough to ask of every string constant (the
/// bytecode judge pairs a code object's names with its constants only through it).
pub fn may_end_exact(attr: &str) -> bool {
    static LAST: std::sync::OnceLock<std::collections::HashSet<&'static str>> =
        std::sync::OnceLock::new();
    let last = LAST.get_or_init(|| {
        all_entries()
            .filter(|e| e.matching == Match::Exact)
            .map(|e| e.name.rsplit('.').next().unwrap_or(e.name))
            .chain(PYTHONAPI_EVALUATE.iter().copied())
            .collect()
    });
    last.contains(attr) || classify_import(attr).is_some()
}

/// A call through a library handle or `ctypes.pythonapi`, after [`normalize`].
///
/// Issue 39: every way to reach a C function ends here. The function is the *last* dotted
/// segment, because a library named by subscript or `getattr` on a loader keeps its dots
/// (`ctypes.cdll["libc.so.6"].system` resolves to `ctypes.cdll.libc.so.6.system`). Any handle
/// may be the interpreter itself (`CDLL(None)`, `PyDLL(None)`, `pydll.python3`), so the C API
/// functions that run a string are judged through every handle, not only `pythonapi`.
fn lookup_handle(name: &str) -> Option<&'static Entry> {
    let rest = name
        .strip_prefix("ctypes.pythonapi.")
        .or_else(|| name.strip_prefix(LIBRARY_HANDLE)?.strip_prefix('.'))?;
    let function = rest.rsplit('.').next().unwrap_or(rest);
    if PYTHONAPI_EVALUATE.contains(&function) {
        return Some(&PYTHONAPI_EVAL);
    }
    if name.starts_with("ctypes.pythonapi.") {
        return None;
    }
    match classify_import(function)? {
        ImportClass::Process => Some(&HANDLE_PROCESS),
        ImportClass::Load => Some(&HANDLE_LOAD),
    }
}

/// `ctypes.cdll.<library>.<rest>` -> `ctypes.<library>.<rest>` (a loader attribute loads the
/// library of that name); other names unchanged.
fn normalize_library_attribute(name: String) -> String {
    let Some(rest) = name.strip_prefix("ctypes.") else {
        return name;
    };
    let mut parts = rest.splitn(3, '.');
    let (Some(loader), Some(library), Some(function)) = (parts.next(), parts.next(), parts.next())
    else {
        return name;
    };
    let is_loader_object = names::NATIVE_LOADERS
        .iter()
        .any(|l| loader_object(l.name) == Some(loader));
    if is_loader_object && library != "LoadLibrary" {
        format!("{LIBRARY_HANDLE}.{function}")
    } else {
        name
    }
}

/// One decoding step a literal blob goes through (`base64.b64decode`, `zlib.decompress`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decoder {
    /// Qualified callable name.
    pub name: &'static str,
    /// The codec step, as the blob decoder names it: `base64`, `urlsafe-base64`, `base32`,
    /// `base85`, `ascii85`, `hex`, `rot13`, `zlib`, `gzip`, `bz2`, `lzma`, `marshal`.
    pub codec: &'static str,
}

/// Calls that decode or decompress their argument, for following a literal blob to what runs.
/// `codecs.decode(s, "rot13")` and `bytes.fromhex` are named here too; the codec of a
/// `codecs.decode` comes from its second argument ([`codec_by_name`]).
pub const DECODERS: &[Decoder] = &[
    Decoder {
        name: "base64.b64decode",
        codec: "base64",
    },
    Decoder {
        name: "base64.standard_b64decode",
        codec: "base64",
    },
    Decoder {
        name: "base64.decodebytes",
        codec: "base64",
    },
    Decoder {
        name: "base64.decodestring",
        codec: "base64",
    },
    Decoder {
        name: "base64.urlsafe_b64decode",
        codec: "urlsafe-base64",
    },
    Decoder {
        name: "base64.b32decode",
        codec: "base32",
    },
    Decoder {
        name: "base64.b85decode",
        codec: "base85",
    },
    Decoder {
        name: "base64.a85decode",
        codec: "ascii85",
    },
    Decoder {
        name: "base64.b16decode",
        codec: "hex",
    },
    Decoder {
        name: "binascii.a2b_base64",
        codec: "base64",
    },
    Decoder {
        name: "binascii.unhexlify",
        codec: "hex",
    },
    Decoder {
        name: "binascii.a2b_hex",
        codec: "hex",
    },
    Decoder {
        name: "bytes.fromhex",
        codec: "hex",
    },
    Decoder {
        name: "bytearray.fromhex",
        codec: "hex",
    },
    Decoder {
        name: "zlib.decompress",
        codec: "zlib",
    },
    Decoder {
        name: "gzip.decompress",
        codec: "gzip",
    },
    Decoder {
        name: "bz2.decompress",
        codec: "bz2",
    },
    Decoder {
        name: "lzma.decompress",
        codec: "lzma",
    },
    Decoder {
        name: "marshal.loads",
        codec: "marshal",
    },
];

/// The decoder for a resolved call name.
pub fn decoder(name: &str) -> Option<&'static Decoder> {
    let name = normalize(name);
    DECODERS.iter().find(|d| d.name == name)
}

/// The codec step for a `codecs.decode`/`str.encode`-style codec name (`"rot13"`, `"rot_13"`,
/// `"base64"`, `"hex"`, `"zlib"`, `"bz2"`), as Python's codec registry spells its aliases.
pub fn codec_by_name(codec: &str) -> Option<&'static str> {
    let c = codec.to_ascii_lowercase().replace(['-', ' '], "_");
    Some(match c.as_str() {
        "rot13" | "rot_13" => "rot13",
        "base64" | "base_64" | "base64_codec" => "base64",
        "hex" | "hex_codec" => "hex",
        "zlib" | "zip" | "zlib_codec" => "zlib",
        "bz2" | "bz2_codec" => "bz2",
        _ => return None,
    })
}

/// Words of a command line that install packages: a program of [`names::INSTALLERS`] (`pip`,
/// `pip3`, `python -m pip`, `conda`, `uv`) followed by an install verb, or `easy_install`.
pub fn is_install_command(words: &[&str]) -> bool {
    let verbs = ["install", "add"];
    let mut seen_program = false;
    for w in words {
        let base = w.rsplit('/').next().unwrap_or(w);
        let base = base.split('.').next().unwrap_or(base);
        if base == "easy_install" {
            return true;
        }
        if names::INSTALLERS.iter().any(|i| {
            base.strip_prefix(i.name)
                .is_some_and(|r| r.is_empty() || r.starts_with("3."))
        }) {
            seen_program = true;
        } else if seen_program && verbs.contains(w) {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knowledge::places::*;

    /// The lookup before the index (issue 37): linear searches over the tables.
    fn linear(name: &str) -> Option<&'static Entry> {
        let name = normalize(name);
        if let Some(entry) = lookup_handle(&name) {
            return Some(entry);
        }
        let under = |e: &Entry| {
            name.strip_prefix(e.name)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
        };
        if let Some(entry) = all_entries().find(|e| e.matching == Match::Exact && e.name == name) {
            return Some(entry);
        }
        let module = all_entries()
            .filter(|e| e.matching == Match::Module && under(e))
            .max_by_key(|e| e.name.len());
        if module.is_some() {
            return module;
        }
        let package = all_packages()
            .filter(|e| match e.matching {
                Match::Exact => e.name == name,
                _ => under(e),
            })
            .max_by_key(|e| e.name.len());
        if package.is_some() {
            return package;
        }
        let last = name.rsplit('.').next().unwrap_or_default();
        if last.len() == name.len() {
            return None;
        }
        all_entries().find(|e| e.matching == Match::Method && e.name == last)
    }

    #[test]
    fn the_index_finds_what_the_linear_search_found() {
        let mut names: Vec<String> = Vec::new();
        for e in all_entries().chain(all_packages()) {
            for n in [
                e.name.to_owned(),
                format!("{}.x", e.name),
                format!("{}.x.y", e.name),
                format!("a.{}", e.name),
                format!("{}x", e.name),
            ] {
                names.push(n);
            }
            if let Some((head, _)) = e.name.rsplit_once('.') {
                names.push(head.to_owned());
            }
        }
        names.extend(
            ["", ".", "a..b", "builtins.eval", "posix.system", "x.dlopen"].map(String::from),
        );
        for n in &names {
            let (got, want) = (lookup(n), linear(n));
            assert_eq!(got, want, "{n}");
        }
    }

    #[test]
    fn looks_up_exact_names_after_normalising_spellings() {
        assert_eq!(lookup("os.system").map(|e| e.capability), Some(Proc));
        assert_eq!(lookup("posix.system").map(|e| e.name), Some("os.system"));
        assert_eq!(
            lookup("builtins.exec").map(|e| e.role),
            Some(Role::Evaluate)
        );
        assert_eq!(
            lookup("cPickle.loads").map(|e| e.name),
            Some("pickle.loads")
        );
        assert_eq!(lookup("subprocess.CalledProcessError"), None);
        assert_eq!(lookup("os.path.join"), None);
        assert_eq!(lookup("system"), None);
    }

    #[test]
    fn module_entries_cover_submodules_on_component_boundaries() {
        assert_eq!(lookup("pexpect.spawn").map(|e| e.name), Some("pexpect"));
        assert_eq!(lookup("pexpectations.run"), None);
        assert_eq!(
            lookup("pip._internal.cli.main.main").map(|e| e.capability),
            Some(Install)
        );
        assert_eq!(
            lookup("pip._internal.main").map(|e| e.matching),
            Some(Match::Exact)
        );
    }

    #[test]
    fn method_entries_match_any_receiver_but_not_bare_names() {
        assert_eq!(lookup("ffi.dlopen").map(|e| e.capability), Some(Native));
        assert_eq!(lookup("dlopen"), None);
    }

    #[test]
    fn every_entry_has_a_source_and_a_cwe_and_names_are_unique() {
        let mut seen = std::collections::BTreeSet::new();
        for entry in all_entries() {
            assert!(!entry.source.is_empty(), "{}", entry.name);
            assert_eq!(entry.cwe, entry.capability.cwe(), "{}", entry.name);
            assert!(
                seen.insert((entry.name, entry.matching as u8)),
                "{}",
                entry.name
            );
        }
        for c in Capability::ALL {
            assert_eq!(Capability::from_code(c.code()), Some(c));
        }
    }

    #[test]
    fn decoders_and_codec_names() {
        assert_eq!(decoder("base64.b64decode").map(|d| d.codec), Some("base64"));
        assert_eq!(decoder("bytes.fromhex").map(|d| d.codec), Some("hex"));
        assert_eq!(codec_by_name("ROT-13"), Some("rot13"));
        assert_eq!(codec_by_name("utf-8"), None);
    }

    #[test]
    fn classifies_credential_and_persistence_paths() {
        let class = |p: &str| path_class(p).map(|c| c.capability);
        assert_eq!(class("~/.ssh/id_rsa"), Some(Cred));
        assert_eq!(class("/root/.cache/huggingface/token"), Some(Cred));
        assert_eq!(class("~/.bashrc"), Some(Persist));
        assert_eq!(class("/usr/lib/python3/site-packages/x.pth"), Some(Persist));
        assert_eq!(class("sitecustomize.py"), Some(Persist));
        assert_eq!(class("~/.ssh/authorized_keys"), Some(Persist));
        assert_eq!(class("weights/.sshconfig"), None);
        assert_eq!(class("model.pth"), None);
        assert_eq!(class("pytorch_model.bin"), None);
    }

    #[test]
    fn credential_variables_hosts_and_installs() {
        assert!(credential_variable("HF_TOKEN"));
        assert!(credential_variable("my_service_api_key"));
        assert!(!credential_variable("CUDA_VISIBLE_DEVICES"));
        assert!(is_hub_host("huggingface.co"));
        assert!(is_hub_host("cdn-lfs.huggingface.co"));
        assert!(!is_hub_host("huggingface.co.evil.example"));
        assert!(is_install_command(&["python", "-m", "pip", "install", "x"]));
        assert!(is_install_command(&["/usr/bin/pip3", "install", "x"]));
        assert!(!is_install_command(&["pip", "list"]));
        assert!(is_tamper_target("torch"));
        assert!(is_tamper_target("builtins"));
    }
}
