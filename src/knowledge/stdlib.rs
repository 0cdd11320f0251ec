//! The whole Python standard library, classified (issue 39). Every module that CPython 3.6 to
//! 3.13 ships (the lists in `knowledge/stdlib/modules-3.X.txt`, made by
//! `scripts/stdlib-inventory.py`) has a row here, and so does every public callable whose class
//! differs from its module's. A class is either [`Class::Value`] (a data constructor or a pure
//! computation a pickle may call: `collections.OrderedDict`, `datetime.date`, `decimal.Decimal`,
//! `pathlib.PurePath`) or one [`Capability`] of the one vocabulary (issue 38), including the
//! ones only a pickle reaches: `file-system` (opens, writes or deletes a path the pickle names),
//! `interpreter-state` (recursion limits, signal handlers, alarms, exit hooks, garbage-collector
//! and fault-handler settings, resource limits, threads and schedulers started, process-wide
//! settings such as the locale) and `denial-of-service` (unbounded sleeps, allocations, blocking
//! reads, decompression bombs). A callable the capability table also lists has its capability
//! here (`weakref.finalize` and `setattr` are `persistence`).
//!
//! # How a row applies
//!
//! - A module row covers the module and its submodules unless a longer row names one, like the
//!   dangerous table's prefixes. A row for `X.__main__` is implied: importing a package's
//!   `__main__` runs its command-line program (`main_module`).
//! - A capability class covers every name under the module, public or private, dotted or not:
//!   nothing in `subprocess` is safe to call.
//! - [`Class::Value`] covers only the module's *public callables as the inventory lists them*
//!   (`knowledge/stdlib/callables.txt`: what the module defines or exports in `__all__`),
//!   undotted, and the private rebuilders named in a callable row (`re._compile`). A dotted
//!   name reaches a method the pickle could call on an instance it built (`ElementTree.write`,
//!   `ConfigParser.read`), `main` is a command-line program, and a name the inventory does not
//!   list (a private helper, a re-exported function of another module, a user's own
//!   `calendar.py` class) is not vouched for: each stays with the judges after this table.
//! - A callable row (`time.sleep`) beats its module's row and covers the callable's attributes.
//!
//! Precedence in [`classify_global`](crate::knowledge::classify_global): the dangerous table and
//! the capability table come first (their categories and reasons are older and more specific),
//! then this table, then the safe lists. A policy's `dangerous` entries beat a [`Class::Value`] row.
//!
//! Sources: the CPython library reference of each module (its "Availability", "Warning" and
//! "Note" boxes, 3.6-3.13), CPython's sources where the reference is silent (named per row),
//! and the scanners named in `knowledge/mod.rs` for the rows the dangerous table already has.

use std::collections::HashSet;
use std::sync::OnceLock;

use super::capabilities::Capability;

/// What calling (or importing) a standard-library callable does: a value, or one capability
/// of the one vocabulary ([`Capability`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    /// Builds a value or computes one; a pickle may call it.
    Value,
    /// Does something a model never needs to: the capability says what.
    Capability(Capability),
}

impl Class {
    /// Stable kebab-case code: `value`, or the capability's [`Capability::code`].
    pub fn code(self) -> &'static str {
        match self {
            Class::Value => "value",
            Class::Capability(c) => c.code(),
        }
    }

    /// The capability, unless the class is [`Class::Value`].
    pub fn capability(self) -> Option<Capability> {
        match self {
            Class::Value => None,
            Class::Capability(c) => Some(c),
        }
    }
}

/// One row: a module (and its submodules) or one callable, with its class and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    /// Dotted module name (`http.client`) or qualified callable (`time.sleep`).
    pub name: &'static str,
    /// True for a module row.
    pub module: bool,
    /// The class.
    pub class: Class,
    /// Why, lowercase, for a finding's message.
    pub reason: &'static str,
}

const fn module(name: &'static str, class: Class, reason: &'static str) -> Row {
    Row {
        name,
        module: true,
        class,
        reason,
    }
}

const fn callable(name: &'static str, class: Class, reason: &'static str) -> Row {
    Row {
        name,
        module: false,
        class,
        reason,
    }
}

use Class::Value;

// Short names for the rows below (and their tests), one per capability a row uses.
#[allow(non_upper_case_globals)]
mod short {
    use crate::knowledge::capabilities::Capability;
    use crate::knowledge::stdlib::Class;
    pub const Proc: Class = Class::Capability(Capability::ProcessExecution);
    pub const Dyn: Class = Class::Capability(Capability::DynamicCode);
    pub const Fs: Class = Class::Capability(Capability::FileSystem);
    pub const Net: Class = Class::Capability(Capability::Network);
    pub const Cred: Class = Class::Capability(Capability::CredentialAccess);
    pub const Persist: Class = Class::Capability(Capability::Persistence);
    pub const Interp: Class = Class::Capability(Capability::InterpreterState);
    pub const Dos: Class = Class::Capability(Capability::DenialOfService);
    pub const Native: Class = Class::Capability(Capability::NativeLoad);
    pub const Install: Class = Class::Capability(Capability::PackageInstall);
    pub const Tamper: Class = Class::Capability(Capability::Tampering);
}
use short::*;

const PURE: &str = "builds or computes a value";
const CODEC: &str = "a codec: converts bytes and text";
const HASH: &str = "hashes bytes";
const TESTS: &str = "cpython test helper: crashes, hooks or spawns by design";
const IMPORTS: &str = "imports the modules named by its argument";

/// The table. Module rows first, by name; then callable rows.
pub const ROWS: &[Row] = &[
    // ---- modules -------------------------------------------------------------------------
    module("__future__", Value, "compiler feature flags"),
    module("_abc", Value, "abstract base class machinery"),
    module(
        "_aix_support",
        Proc,
        "runs helper commands (picklescan, fickling)",
    ),
    module(
        "_android_support",
        Interp,
        "replaces sys.stdout/stderr with the android log (3.13)",
    ),
    module("_ast", Value, "syntax tree node types"),
    module(
        "_asyncio",
        Proc,
        "asyncio's accelerator: event loops run callbacks and subprocesses",
    ),
    module("_bisect", Value, PURE),
    module("_blake2", Value, HASH),
    module("_bootlocale", Value, "reads the locale's encoding"),
    module(
        "_bootsubprocess",
        Proc,
        "runs commands while the interpreter builds (3.9+)",
    ),
    module("_bz2", Value, "bz2 compressor objects"),
    module("_codecs", Value, CODEC),
    module("_codecs_cn", Value, CODEC),
    module("_codecs_hk", Value, CODEC),
    module("_codecs_iso2022", Value, CODEC),
    module("_codecs_jp", Value, CODEC),
    module("_codecs_kr", Value, CODEC),
    module("_codecs_tw", Value, CODEC),
    module("_collections", Value, "container types"),
    module("_collections_abc", Value, "abstract container types"),
    module("_colorize", Value, "terminal colour codes (3.13)"),
    module("_compat_pickle", Value, "python 2 name mappings"),
    module("_compression", Value, "stream reader base classes"),
    module("_contextvars", Value, "context variables"),
    module("_crypt", Value, "password hashing"),
    module("_csv", Value, "csv readers and writers over objects"),
    module(
        "_ctypes",
        Native,
        "loads shared libraries and writes raw memory",
    ),
    module("_ctypes_test", Native, "a native test library"),
    module(
        "_curses",
        Interp,
        "takes over the terminal (initscr, setupterm)",
    ),
    module("_curses_panel", Interp, "takes over the terminal"),
    module("_datetime", Value, "date and time values"),
    module("_dbm", Fs, "opens and creates database files"),
    module("_decimal", Value, "decimal numbers"),
    module(
        "_dummy_thread",
        Dyn,
        "start_new_thread calls its callable at once",
    ),
    module("_elementtree", Value, "xml element values"),
    module("_frozen_importlib", Dyn, "the import system: imports code"),
    module(
        "_frozen_importlib_external",
        Dyn,
        "the import system: imports code from paths",
    ),
    module("_functools", Value, "functools' accelerator"),
    module("_gdbm", Fs, "opens and creates database files"),
    module("_hashlib", Value, HASH),
    module("_heapq", Value, PURE),
    module("_imp", Dyn, "the import system's primitives"),
    module(
        "_interpchannels",
        Dyn,
        "channels between subinterpreters that run code",
    ),
    module(
        "_interpqueues",
        Dyn,
        "queues between subinterpreters that run code",
    ),
    module("_interpreters", Dyn, "runs code in a subinterpreter"),
    module("_io", Value, "io's accelerator (open and FileIO are rows)"),
    module(
        "_ios_support",
        Native,
        "loads system frameworks through ctypes (3.13)",
    ),
    module("_json", Value, "json scanner"),
    module(
        "_locale",
        Interp,
        "setlocale changes the whole process's locale",
    ),
    module(
        "_lsprof",
        Interp,
        "installs a profiler hook on the interpreter",
    ),
    module("_lzma", Value, "lzma compressor objects"),
    module("_markupbase", Value, "markup parser base"),
    module("_md5", Value, HASH),
    module("_msi", Fs, "creates and writes windows installer databases"),
    module("_multibytecodec", Value, CODEC),
    module(
        "_multiprocessing",
        Proc,
        "multiprocessing's primitives (semaphores, sem_unlink)",
    ),
    module("_opcode", Value, "bytecode tables"),
    module("_opcode_metadata", Value, "bytecode tables"),
    module("_operator", Value, "operator's accelerator"),
    module(
        "_osx_support",
        Proc,
        "runs compiler helper commands (picklescan, fickling)",
    ),
    module("_overlapped", Net, "windows overlapped sockets and pipes"),
    module("_peg_parser", Value, "parses source to a tree (3.9)"),
    module("_pickle", Dyn, "loads another pickle"),
    module(
        "_posixshmem",
        Fs,
        "creates and unlinks shared memory objects",
    ),
    module("_posixsubprocess", Proc, "fork_exec spawns processes"),
    module("_pyio", Value, "io in python (open and FileIO are rows)"),
    module("_py_abc", Value, "abstract base class machinery"),
    module("_pydatetime", Value, "date and time values"),
    module("_pydecimal", Value, "decimal numbers"),
    module("_pylong", Value, "big integer conversions"),
    module(
        "_pyrepl",
        Dyn,
        "the interactive interpreter: runs what it reads (3.13)",
    ),
    module("_queue", Value, "queue types"),
    module("_random", Value, "random number generator types"),
    module(
        "_scproxy",
        Net,
        "reads macOS proxy settings for url openers",
    ),
    module("_sha1", Value, HASH),
    module("_sha2", Value, HASH),
    module("_sha256", Value, HASH),
    module("_sha3", Value, HASH),
    module("_sha512", Value, HASH),
    module("_signal", Interp, "installs signal handlers"),
    module(
        "_sitebuiltins",
        Interp,
        "quit/exit end the interpreter; help starts the pager",
    ),
    module("_socket", Net, "opens network connections"),
    module("_sqlite3", Fs, "opens and creates database files"),
    module("_sre", Value, "regular expression engine"),
    module("_ssl", Net, "tls connections"),
    module("_stat", Value, "stat constants and tests"),
    module("_statistics", Value, PURE),
    module("_string", Value, "format string parsing"),
    module("_strptime", Value, "time string parsing"),
    module("_struct", Value, "packs and unpacks bytes"),
    module("_suggestions", Value, "name suggestions (3.13)"),
    module("_symtable", Value, "symbol tables of source"),
    module("_sysconfig", Value, "build configuration values"),
    module("_testbuffer", Interp, TESTS),
    module("_testcapi", Interp, TESTS),
    module("_testimportmultiple", Interp, TESTS),
    module("_testinternalcapi", Interp, TESTS),
    module("_testmultiphase", Interp, TESTS),
    module("_thread", Interp, "starts threads running callables"),
    module("_threading_local", Value, "thread-local storage type"),
    module(
        "_tkinter",
        Dyn,
        "the Tcl interpreter runs Tcl commands, and Tk() runs the user's profile scripts",
    ),
    module("_tokenize", Value, "tokenizer"),
    module(
        "_tracemalloc",
        Interp,
        "starts and stops allocation tracing",
    ),
    module("_typing", Value, "typing primitives"),
    module("_uuid", Value, "uuid generation"),
    module("_warnings", Value, "warnings' accelerator (warn)"),
    module("_weakref", Value, "weak references"),
    module("_weakrefset", Value, "weak sets"),
    module("_winapi", Proc, "CreateProcess and the win32 process api"),
    module(
        "_wmi",
        Cred,
        "queries the windows management service (3.12)",
    ),
    module("_xxsubinterpreters", Dyn, "runs code in a subinterpreter"),
    module("_xxtestfuzz", Interp, TESTS),
    module("_zoneinfo", Value, "time zone values"),
    module("abc", Value, "abstract base classes"),
    module("aifc", Fs, "open() reads or writes an audio file by path"),
    module(
        "antigravity",
        Proc,
        "importing it opens a web browser (webbrowser.open)",
    ),
    module("argparse", Value, "argument parser types"),
    module("array", Value, "typed arrays"),
    module("ast", Value, "syntax trees; literal_eval builds literals"),
    module("asynchat", Net, "socket channels"),
    module(
        "asyncio",
        Proc,
        "event loop with subprocess and network transports",
    ),
    module("asyncore", Net, "socket dispatchers"),
    module("atexit", Interp, "registers callables to run at exit"),
    module("audioop", Value, "audio sample arithmetic"),
    module("base64", Value, CODEC),
    module("bdb", Dyn, "Bdb.run executes source"),
    module("binascii", Value, CODEC),
    module("binhex", Fs, "binhex/hexbin write the file they name"),
    module("bisect", Value, PURE),
    module(
        "builtins",
        Value,
        "built-in types and functions (the dangerous ones are rows)",
    ),
    module("bz2", Value, "compression (open and BZ2File are rows)"),
    module("cProfile", Dyn, "cProfile.run executes source"),
    module("calendar", Value, "calendar values and text"),
    module(
        "cgi",
        Cred,
        "FieldStorage and parse read the process environment and stdin",
    ),
    module(
        "cgitb",
        Interp,
        "enable() replaces sys.excepthook and writes reports to a directory",
    ),
    module("chunk", Value, "reads chunks of a file object"),
    module("cmath", Value, PURE),
    module("cmd", Value, "a line-oriented command interpreter type"),
    module(
        "code",
        Dyn,
        "interactive interpreter runs source (InteractiveInterpreter.runcode)",
    ),
    module("codecs", Value, "codec registry (open is a row)"),
    module("codeop", Dyn, "compiles python source"),
    module("collections", Value, "container types"),
    module("colorsys", Value, PURE),
    module("compileall", Dyn, "compiles and writes bytecode"),
    module("concurrent", Proc, "runs callables in worker pools"),
    module(
        "configparser",
        Value,
        "ini parser types (files are read by methods)",
    ),
    module("contextlib", Value, "context manager helpers"),
    module("contextvars", Value, "context variables"),
    module("copy", Value, "copies values"),
    module(
        "copyreg",
        Value,
        "pickle reduction helpers (the registry writers are rows)",
    ),
    module("crypt", Value, "password hashing"),
    module("csv", Value, "csv readers and writers over file objects"),
    module(
        "ctypes",
        Native,
        "loads shared libraries and writes raw memory",
    ),
    module("curses", Interp, "takes over the terminal"),
    module(
        "dataclasses",
        Value,
        "dataclass machinery; make_dataclass validates its field names",
    ),
    module("datetime", Value, "date and time values"),
    module("dbm", Fs, "opens and creates database files"),
    module("decimal", Value, "decimal numbers"),
    module("difflib", Value, "sequence differences"),
    module("dis", Value, "disassembles code objects it is given"),
    module(
        "distutils",
        Install,
        "build tooling writes files and runs commands",
    ),
    module("doctest", Dyn, "runs the examples of docstrings"),
    module(
        "dummy_threading",
        Dyn,
        "threads that run their callable at once",
    ),
    module("email", Value, "message parsing and building"),
    module("encodings", Value, CODEC),
    module("ensurepip", Install, "runs pip"),
    module("enum", Value, "enumeration types"),
    module("errno", Value, "error codes"),
    module(
        "faulthandler",
        Interp,
        "installs fault and signal handlers, and timers that dump and exit",
    ),
    module(
        "fcntl",
        Proc,
        "ioctl(TIOCSTI) types commands into the terminal; locks and fd flags",
    ),
    module("filecmp", Fs, "reads files"),
    module("fileinput", Fs, "reads files and rewrites them in place"),
    module("fnmatch", Value, "file name patterns (strings only)"),
    module("formatter", Value, "text formatters over writer objects"),
    module("fractions", Value, "rational numbers"),
    module("ftplib", Net, "ftp connections"),
    module(
        "functools",
        Value,
        "function helpers (the call wrappers are rows)",
    ),
    module(
        "gc",
        Interp,
        "collector settings; get_objects reaches every object",
    ),
    module("genericpath", Fs, "os.path's probes of the file system"),
    module("getopt", Value, "argument lists it is given"),
    module(
        "getpass",
        Cred,
        "getpass reads a password from the terminal; getuser reads the environment",
    ),
    module("gettext", Value, "message catalogs (install is a row)"),
    module("glob", Fs, "enumerates files"),
    module("graphlib", Value, PURE),
    module("grp", Cred, "reads the group database"),
    module("gzip", Value, "compression (open and GzipFile are rows)"),
    module("hashlib", Value, HASH),
    module("heapq", Value, PURE),
    module("hmac", Value, HASH),
    module("html", Value, "html escaping and parsing"),
    module(
        "http",
        Value,
        "status and method enums (client, server and cookiejar are rows)",
    ),
    module(
        "idlelib",
        Dyn,
        "IDLE helpers evaluate source (runcode, get_entity, fetch_tip)",
    ),
    module("imaplib", Net, "mail connections"),
    module("imghdr", Fs, "what() opens the file it names"),
    module("imp", Dyn, "imp.load_source executes a file"),
    module("importlib", Dyn, "imports arbitrary modules"),
    module("inspect", Dyn, "getattr-like access to any object"),
    module("io", Value, "in-memory streams (open and FileIO are rows)"),
    module("ipaddress", Value, "address values"),
    module(
        "itertools",
        Value,
        "iterator building blocks (the endless ones are rows)",
    ),
    module("json", Value, "json text to values and back"),
    module("keyword", Value, "keyword list"),
    module(
        "lib2to3",
        Dyn,
        "grammar loaders unpickle and eval (Grammar.loads, make_label)",
    ),
    module("linecache", Fs, "reads files"),
    module("locale", Value, "locale formatting (setlocale is a row)"),
    module(
        "logging",
        Value,
        "loggers and records (the process-wide settings are rows)",
    ),
    module("lzma", Value, "compression (open and LZMAFile are rows)"),
    module("macpath", Value, "mac path strings (3.6-3.7)"),
    module("macurl2path", Value, "url strings (3.6)"),
    module("mailbox", Fs, "opens, creates and rewrites mailboxes"),
    module("mailcap", Proc, "findmatch builds a shell command line"),
    module("marshal", Dyn, "loads code objects"),
    module("math", Value, PURE),
    module(
        "mimetypes",
        Value,
        "type guesses from names (init and read_mime_types are rows)",
    ),
    module("mmap", Fs, "maps files into memory"),
    module(
        "modulefinder",
        Fs,
        "reads and compiles the scripts and modules it is pointed at",
    ),
    module(
        "msilib",
        Fs,
        "creates and writes windows installer databases",
    ),
    module(
        "msvcrt",
        Interp,
        "console and file-descriptor primitives (locking, setmode, getch)",
    ),
    module(
        "multiprocessing",
        Proc,
        "spawns processes and runs callables in them",
    ),
    module("netrc", Cred, "reads the .netrc credentials file"),
    module("nis", Cred, "reads the NIS account maps"),
    module("nntplib", Net, "news connections"),
    module("nt", Proc, "the os module's windows primitives"),
    module("ntpath", Fs, "os.path on windows: probes the file system"),
    module("nturl2path", Value, "url strings"),
    module("numbers", Value, "numeric abstract types"),
    module("opcode", Value, "bytecode tables"),
    module(
        "operator",
        Value,
        "operators as functions (getters, callers and mutators are rows)",
    ),
    module("optparse", Value, "option parser types"),
    module(
        "os",
        Proc,
        "the os module runs commands and touches files (os.system, os.popen, ...)",
    ),
    module(
        "ossaudiodev",
        Value,
        "opens the sound device (/dev/dsp or $AUDIODEV), never a path the pickle names",
    ),
    module(
        "parser",
        Value,
        "parse trees of source (compiles, never runs; 3.6-3.9)",
    ),
    module(
        "pathlib",
        Value,
        "path values (their file methods are judged by name)",
    ),
    module("pdb", Dyn, "debugger runs source"),
    module("pickle", Dyn, "loads another pickle"),
    module("pickletools", Dyn, "pickle tooling"),
    module("pipes", Proc, "pipes.Template runs shell commands"),
    module("pkgutil", Dyn, "resolves and imports arbitrary names"),
    module(
        "platform",
        Proc,
        "runs helper commands (platform.popen, uname helpers)",
    ),
    module(
        "plistlib",
        Value,
        "property lists over file objects (the path helpers are rows)",
    ),
    module("poplib", Net, "mail connections"),
    module("posix", Proc, "the os module's posix primitives"),
    module("posixpath", Fs, "os.path: probes the file system"),
    module("pprint", Value, "pretty printing"),
    module("profile", Dyn, "Profile.run executes source"),
    module("pstats", Dyn, "Stats(path) loads marshal data from a file"),
    module("pty", Proc, "spawns a process on a pseudo-terminal"),
    module("pwd", Cred, "reads the account database"),
    module("py_compile", Dyn, "compiles and writes bytecode"),
    module("pyclbr", Fs, "finds and reads module sources"),
    module(
        "pydoc",
        Dyn,
        "pydoc.locate imports anything; pipepager runs a shell command",
    ),
    module("pydoc_data", Value, "help topics text"),
    module("pyexpat", Value, "xml parser"),
    module("queue", Value, "queue types"),
    module("quopri", Value, CODEC),
    module(
        "random",
        Value,
        "random values (seeding the shared generator is a row)",
    ),
    module("re", Value, "regular expressions"),
    module(
        "readline",
        Interp,
        "replaces the terminal's line editor hooks and history files",
    ),
    module("reprlib", Value, "bounded repr"),
    module(
        "resource",
        Interp,
        "setrlimit and prlimit change the process's limits",
    ),
    module(
        "rlcompleter",
        Dyn,
        "Completer evaluates the expression it completes",
    ),
    module("runpy", Dyn, "runs a module or a file as __main__"),
    module("sched", Interp, "runs scheduled callables"),
    module(
        "secrets",
        Value,
        "random tokens (the unbounded sizes are rows)",
    ),
    module("select", Net, "socket multiplexing"),
    module("selectors", Net, "socket multiplexing"),
    module("shelve", Dyn, "opens a pickle database"),
    module("shlex", Value, "shell-like tokenizing (never runs)"),
    module("shutil", Fs, "copies, moves and deletes files"),
    module("signal", Interp, "installs signal handlers and alarms"),
    module("site", Dyn, "processes .pth files and paths"),
    module("smtpd", Net, "an smtp server"),
    module("smtplib", Net, "sends mail"),
    module("sndhdr", Fs, "what() opens the file it names"),
    module("socket", Net, "opens network connections"),
    module("socketserver", Net, "binds and serves sockets"),
    module("spwd", Cred, "reads the shadow password database"),
    module("sqlite3", Fs, "opens and creates database files"),
    module("sre_compile", Value, "regular expression compiler"),
    module("sre_constants", Value, "regular expression constants"),
    module("sre_parse", Value, "regular expression parser"),
    module("ssl", Net, "tls connections"),
    module("stat", Value, "stat constants and tests"),
    module("statistics", Value, PURE),
    module("string", Value, "string constants and templates"),
    module("stringprep", Value, "string preparation tables"),
    module("struct", Value, "packs and unpacks bytes"),
    module("subprocess", Proc, "spawns processes"),
    module("sunau", Fs, "open() reads or writes an audio file by path"),
    module("symbol", Value, "grammar symbol numbers"),
    module("symtable", Value, "symbol tables of source"),
    module(
        "sys",
        Interp,
        "interpreter internals (recursion limit, hooks, sys.modules, exit)",
    ),
    module("sysconfig", Value, "build configuration values"),
    module("syslog", Net, "writes to the system log"),
    module("tabnanny", Fs, "reads the files it checks"),
    module("tarfile", Fs, "extracts archives"),
    module("telnetlib", Net, "telnet connections"),
    module("tempfile", Fs, "creates files"),
    module(
        "termios",
        Interp,
        "changes the terminal's modes and flushes its queues",
    ),
    module(
        "test",
        Proc,
        "CPython's test suite: its modules spawn interpreters and run tests on import",
    ),
    module("textwrap", Value, "text wrapping"),
    module("this", Value, "prints the Zen of Python on import"),
    module("threading", Interp, "starts threads running callables"),
    module("time", Value, "clocks and time values (sleep is a row)"),
    module("timeit", Dyn, "timeit executes source"),
    module(
        "tkinter",
        Dyn,
        "Tk() runs the user's profile scripts and its Tcl interpreter runs commands",
    ),
    module("token", Value, "token numbers"),
    module("tokenize", Value, "tokenizer (open is a row)"),
    module("tomllib", Value, "toml text to values"),
    module("trace", Dyn, "Trace.run executes source"),
    module("traceback", Value, "formats exceptions"),
    module("tracemalloc", Interp, "starts and stops allocation tracing"),
    module("tty", Interp, "puts the terminal in raw mode"),
    module("turtle", Dyn, "opens a Tk window (tkinter)"),
    module("turtledemo", Dyn, "runs demo scripts in a Tk window"),
    module(
        "types",
        Value,
        "type objects and namespaces (code and function builders are rows)",
    ),
    module(
        "typing",
        Value,
        "type hints (the evaluators of string annotations are rows)",
    ),
    module("unicodedata", Value, "unicode tables"),
    module("unittest", Dyn, "test runners import and run code"),
    module("urllib", Net, "fetches urls"),
    module("uu", Fs, "decode() writes the file the data names"),
    module(
        "uuid",
        Value,
        "uuid values (the node lookups that run commands are rows)",
    ),
    module("venv", Install, "creates environments and runs commands"),
    module(
        "warnings",
        Value,
        "warnings (the process-wide filters are rows)",
    ),
    module("wave", Fs, "open() reads or writes an audio file by path"),
    module("weakref", Value, "weak references (finalize is a row)"),
    module("webbrowser", Proc, "starts a web browser"),
    module("winreg", Persist, "reads and writes the windows registry"),
    module("winsound", Fs, "plays sound files by name and beeps"),
    module("wsgiref", Net, "a wsgi server"),
    module("xdrlib", Value, CODEC),
    module(
        "xml",
        Value,
        "xml parsing and building (the readers of a path are rows)",
    ),
    module("xmlrpc", Net, "remote procedure calls"),
    module("xxlimited", Value, "an example extension type"),
    module("xxsubtype", Value, "an example extension type"),
    module("zipapp", Fs, "writes an archive"),
    module("zipfile", Fs, "extracts archives"),
    module("zipimport", Dyn, "imports code from an archive"),
    module("zlib", Value, "compression (decompress is a row)"),
    module(
        "zoneinfo",
        Value,
        "time zone values (reset_tzpath is a row)",
    ),
    // ---- submodules whose class differs from their package's -----------------------------
    module("collections.abc", Value, "abstract container types"),
    module("concurrent.futures", Proc, "runs callables in worker pools"),
    module("http.client", Net, "http client connections"),
    module("http.cookiejar", Net, "loads and saves cookie files"),
    module("http.cookies", Value, "cookie values"),
    module(
        "http.server",
        Net,
        "http servers (CGIHTTPRequestHandler runs scripts)",
    ),
    module(
        "logging.config",
        Fs,
        "logging.config.listen evaluates configs from a socket",
    ),
    module("logging.handlers", Fs, "handlers write files and sockets"),
    module("wsgiref.headers", Value, "header values"),
    module("wsgiref.util", Value, "environ helpers"),
    module(
        "xml.etree.ElementInclude",
        Fs,
        "includes the files an element names",
    ),
    module("encodings.mbcs", Value, CODEC),
    // ---- callables that differ from their module ------------------------------------------
    callable(
        "argparse.FileType",
        Fs,
        "its instances open the path they are called with",
    ),
    callable(
        "builtins.pow",
        Dos,
        "pow(10, 10**10) allocates without bound",
    ),
    callable("bz2.open", Fs, "opens (and truncates) the path it is given"),
    callable(
        "bz2.BZ2File",
        Fs,
        "opens (and truncates) the path it is given",
    ),
    callable("codecs.open", Fs, "opens an arbitrary file"),
    callable(
        "codecs.register",
        Interp,
        "registers a search function every later encode and decode calls",
    ),
    callable(
        "codecs.register_error",
        Interp,
        "registers a handler every later codec error calls",
    ),
    callable(
        "codecs.unregister",
        Interp,
        "removes a codec search function",
    ),
    callable(
        "_codecs.register",
        Interp,
        "registers a search function every later encode and decode calls",
    ),
    callable(
        "_codecs.register_error",
        Interp,
        "registers a handler every later codec error calls",
    ),
    callable(
        "_codecs.unregister",
        Interp,
        "removes a codec search function",
    ),
    callable(
        "_decimal.setcontext",
        Interp,
        "replaces the thread's decimal context",
    ),
    callable(
        "_pydecimal.setcontext",
        Interp,
        "replaces the thread's decimal context",
    ),
    callable(
        "calendar.setfirstweekday",
        Interp,
        "changes the first weekday for everyone",
    ),
    callable(
        "gettext.bindtextdomain",
        Interp,
        "changes the process's message catalogs",
    ),
    callable(
        "gettext.textdomain",
        Interp,
        "changes the process's message catalogs",
    ),
    callable(
        "gettext.bind_textdomain_codeset",
        Interp,
        "changes the process's message catalogs",
    ),
    callable(
        "gzip.main",
        Fs,
        "compresses or decompresses the files sys.argv names",
    ),
    callable(
        "typing.clear_overloads",
        Interp,
        "clears the process's overload registry",
    ),
    callable(
        "xml.dom.domreg.registerDOMImplementation",
        Interp,
        "registers a factory every later getDOMImplementation calls",
    ),
    callable(
        "xml.dom.expatbuilder.parse",
        Fs,
        "reads the path it is given",
    ),
    callable("xml.sax.make_parser", Dyn, IMPORTS),
    callable(
        "xml.sax.saxutils.prepare_input_source",
        Net,
        "opens the url or path it is given (urllib.request.urlopen)",
    ),
    callable("codecs.EncodedFile", Fs, "wraps a file for writing"),
    callable(
        "copyreg.add_extension",
        Interp,
        "rewrites the extension registry",
    ),
    callable(
        "copyreg.remove_extension",
        Interp,
        "rewrites the extension registry",
    ),
    callable(
        "copyreg.clear_extension_cache",
        Interp,
        "rewrites the extension registry",
    ),
    callable("copyreg.pickle", Interp, "rewrites the reduction registry"),
    callable(
        "decimal.setcontext",
        Interp,
        "replaces the thread's decimal context",
    ),
    callable("functools.partial", Dyn, "calls the callable it wraps"),
    callable(
        "functools.partialmethod",
        Dyn,
        "calls the callable it wraps",
    ),
    callable("functools.reduce", Dyn, "calls a callable repeatedly"),
    callable(
        "functools.update_wrapper",
        Tamper,
        "copies attributes onto another object",
    ),
    callable(
        "functools.wraps",
        Tamper,
        "copies attributes onto another object",
    ),
    callable("gettext.install", Interp, "installs `_` into builtins"),
    callable(
        "gzip.open",
        Fs,
        "opens (and truncates) the path it is given",
    ),
    callable(
        "gzip.GzipFile",
        Fs,
        "opens (and truncates) the path it is given",
    ),
    callable(
        "gzip.decompress",
        Dos,
        "inflates without a bound (a decompression bomb)",
    ),
    callable("io.open", Fs, "opens an arbitrary file"),
    callable("io.open_code", Fs, "opens an arbitrary file"),
    callable("io.FileIO", Fs, "opens an arbitrary file"),
    callable("io.OpenWrapper", Fs, "opens an arbitrary file"),
    callable("_pyio.open", Fs, "opens an arbitrary file"),
    callable("_pyio.open_code", Fs, "opens an arbitrary file"),
    callable("_pyio.FileIO", Fs, "opens an arbitrary file"),
    callable("_pyio.OpenWrapper", Fs, "opens an arbitrary file"),
    callable(
        "itertools.count",
        Dos,
        "an endless iterator; list(count()) never ends",
    ),
    callable("itertools.cycle", Dos, "an endless iterator"),
    callable("itertools.repeat", Dos, "an endless or huge iterator"),
    callable(
        "locale.setlocale",
        Interp,
        "changes the whole process's locale",
    ),
    callable(
        "locale.resetlocale",
        Interp,
        "changes the whole process's locale",
    ),
    callable("logging.basicConfig", Fs, "can open a log file"),
    callable(
        "logging.FileHandler",
        Fs,
        "opens (and truncates) a log file",
    ),
    callable(
        "logging.disable",
        Interp,
        "silences logging for the whole process",
    ),
    callable(
        "logging.shutdown",
        Interp,
        "closes every handler of the process",
    ),
    callable(
        "logging.setLoggerClass",
        Interp,
        "replaces the logger class for everyone",
    ),
    callable(
        "logging.setLogRecordFactory",
        Interp,
        "replaces the record factory for everyone",
    ),
    callable("logging.captureWarnings", Interp, "reroutes every warning"),
    callable(
        "logging.addLevelName",
        Interp,
        "renames log levels for everyone",
    ),
    callable(
        "lzma.open",
        Fs,
        "opens (and truncates) the path it is given",
    ),
    callable(
        "lzma.LZMAFile",
        Fs,
        "opens (and truncates) the path it is given",
    ),
    callable(
        "lzma.decompress",
        Dos,
        "inflates without a bound (a decompression bomb)",
    ),
    callable(
        "bz2.decompress",
        Dos,
        "inflates without a bound (a decompression bomb)",
    ),
    callable("math.factorial", Dos, "factorial(10**8) runs for minutes"),
    callable("math.comb", Dos, "huge arguments run for minutes"),
    callable("math.perm", Dos, "huge arguments run for minutes"),
    callable("mimetypes.init", Fs, "reads the files it is given"),
    callable(
        "mimetypes.read_mime_types",
        Fs,
        "reads the file it is given",
    ),
    callable("operator.attrgetter", Dyn, "reaches any attribute"),
    callable("operator.methodcaller", Dyn, "calls any method by name"),
    callable(
        "operator.itemgetter",
        Dyn,
        "item access gadget used in attribute chains",
    ),
    callable("operator.call", Dyn, "calls any callable"),
    callable("operator.pow", Dos, "allocates without bound"),
    callable("operator.mul", Dos, "'x' * 10**12 allocates without bound"),
    callable(
        "operator.lshift",
        Dos,
        "1 << 10**12 allocates without bound",
    ),
    callable("operator.repeat", Dos, "allocates without bound"),
    callable("operator.setitem", Tamper, "writes into any container"),
    callable("operator.delitem", Tamper, "deletes from any container"),
    callable("operator.iadd", Tamper, "extends any container in place"),
    callable("operator.iconcat", Tamper, "extends any container in place"),
    callable("operator.iand", Tamper, "changes a container in place"),
    callable("operator.ior", Tamper, "changes a container in place"),
    callable("operator.ixor", Tamper, "changes a container in place"),
    callable("operator.isub", Tamper, "changes a container in place"),
    callable("operator.imul", Tamper, "repeats a container in place"),
    callable("operator.ipow", Dos, "allocates without bound"),
    callable("operator.ilshift", Dos, "allocates without bound"),
    callable("operator.irepeat", Dos, "allocates without bound"),
    callable(
        "plistlib.readPlist",
        Fs,
        "reads the path it is given (3.6-3.8)",
    ),
    callable(
        "plistlib.writePlist",
        Fs,
        "writes the path it is given (3.6-3.8)",
    ),
    callable(
        "random.seed",
        Interp,
        "reseeds the generator every module shares",
    ),
    callable(
        "random.setstate",
        Interp,
        "resets the generator every module shares",
    ),
    callable("random.randbytes", Dos, "allocates as many bytes as asked"),
    callable(
        "secrets.token_bytes",
        Dos,
        "allocates as many bytes as asked",
    ),
    callable("secrets.token_hex", Dos, "allocates as many bytes as asked"),
    callable(
        "secrets.token_urlsafe",
        Dos,
        "allocates as many bytes as asked",
    ),
    callable("time.sleep", Dos, "sleeps as long as asked"),
    callable("time.tzset", Interp, "reloads the process's time zone"),
    callable("time.clock_settime", Interp, "sets a system clock"),
    callable("time.clock_settime_ns", Interp, "sets a system clock"),
    callable("tokenize.open", Fs, "opens the file it is given"),
    callable(
        "types.new_class",
        Dyn,
        "calls the exec_body callable it is given",
    ),
    callable("typing.get_type_hints", Dyn, "evaluates string annotations"),
    callable("typing._eval_type", Dyn, "evaluates string annotations"),
    callable(
        "typing.evaluate_forward_ref",
        Dyn,
        "evaluates a string annotation",
    ),
    callable(
        "uuid.getnode",
        Proc,
        "runs ifconfig/ip/arp helpers on some versions",
    ),
    callable(
        "uuid.uuid1",
        Proc,
        "calls getnode, which runs helper commands",
    ),
    callable(
        "warnings.filterwarnings",
        Interp,
        "changes the process's warning filters",
    ),
    callable(
        "warnings.simplefilter",
        Interp,
        "changes the process's warning filters",
    ),
    callable(
        "warnings.resetwarnings",
        Interp,
        "changes the process's warning filters",
    ),
    callable("xml.dom.minidom.parse", Fs, "reads the path it is given"),
    callable("xml.dom.pulldom.parse", Fs, "reads the path it is given"),
    callable(
        "xml.etree.ElementTree.parse",
        Fs,
        "reads the path it is given",
    ),
    callable(
        "xml.etree.ElementTree.iterparse",
        Fs,
        "reads the path it is given",
    ),
    callable(
        "xml.etree.cElementTree.parse",
        Fs,
        "reads the path it is given",
    ),
    callable(
        "xml.etree.cElementTree.iterparse",
        Fs,
        "reads the path it is given",
    ),
    callable(
        "xml.sax.parse",
        Net,
        "reads the url or path it is given (urllib.request.urlopen)",
    ),
    callable(
        "zlib.decompress",
        Dos,
        "inflates without a bound (a decompression bomb)",
    ),
    callable(
        "zoneinfo.reset_tzpath",
        Interp,
        "changes where every time zone is read from",
    ),
    // Builtins and `types` callables the dangerous table lists (its category decides the
    // finding; the class here is what the table of record says).
    callable("builtins.eval", Dyn, "evaluates a python expression"),
    callable("builtins.exec", Dyn, "executes python source"),
    callable(
        "builtins.compile",
        Dyn,
        "compiles python source to a code object",
    ),
    callable(
        "builtins.getattr",
        Dyn,
        "reaches any attribute, e.g. os.system",
    ),
    // The code judges' table calls `setattr` persistence (it replaces what other code relies
    // on); one vocabulary, one capability (issue 38).
    callable("builtins.setattr", Persist, "overwrites any attribute"),
    callable("builtins.delattr", Tamper, "deletes any attribute"),
    callable("builtins.vars", Dyn, "exposes an object namespace"),
    callable("builtins.globals", Dyn, "exposes the module namespace"),
    callable("builtins.locals", Dyn, "exposes a local namespace"),
    callable("builtins.dir", Dyn, "enumerates attributes"),
    callable("builtins.breakpoint", Dyn, "starts a debugger"),
    callable("builtins.input", Dos, "blocks reading the terminal"),
    callable("builtins.open", Fs, "opens an arbitrary file"),
    callable(
        "builtins.help",
        Proc,
        "starts the help pager (a shell command)",
    ),
    callable("builtins.exit", Interp, "exits the interpreter"),
    callable("builtins.quit", Interp, "exits the interpreter"),
    callable("types.CodeType", Dyn, "builds a code object"),
    callable(
        "types.FunctionType",
        Dyn,
        "builds a function from a code object",
    ),
    callable(
        "types.LambdaType",
        Dyn,
        "builds a function from a code object",
    ),
    callable("types.MethodType", Dyn, "binds any callable as a method"),
    callable(
        "weakref.finalize",
        Persist,
        "calls its callable when the object dies or at exit",
    ),
    // Private rebuilders that CPython's own `__reduce__` methods name: values.
    callable(
        "re._compile",
        Value,
        "Pattern.__reduce__ (Lib/re/__init__.py)",
    ),
    callable(
        "array._array_reconstructor",
        Value,
        "array.__reduce_ex__ (Modules/arraymodule.c)",
    ),
    callable(
        "copyreg._reconstructor",
        Value,
        "object.__reduce_ex__ for protocols 0-1",
    ),
    callable(
        "copyreg.__newobj__",
        Value,
        "object.__reduce_ex__ for protocol 2",
    ),
    callable(
        "copyreg.__newobj_ex__",
        Value,
        "object.__reduce_ex__ for keyword arguments",
    ),
    callable(
        "codecs.encode",
        Value,
        "protocol 0-2 bytes (Lib/pickle.py save_bytes)",
    ),
    callable(
        "_codecs.encode",
        Value,
        "protocol 0-2 bytes (Lib/pickle.py save_bytes)",
    ),
    callable(
        "zoneinfo.ZoneInfo._unpickle",
        Value,
        "ZoneInfo.__reduce__ (Lib/zoneinfo/_zoneinfo.py)",
    ),
    callable(
        "_zoneinfo.ZoneInfo._unpickle",
        Value,
        "ZoneInfo.__reduce__ (Modules/_zoneinfo.c)",
    ),
    callable("collections.OrderedDict", Value, "an ordered mapping"),
];

/// The committed inventory of public callables (`module.name versions...` per line).
const CALLABLES: &str = include_str!("stdlib/callables.txt");

/// The inventory's qualified names, parsed once.
fn inventory() -> &'static HashSet<&'static str> {
    static SET: OnceLock<HashSet<&'static str>> = OnceLock::new();
    SET.get_or_init(|| {
        CALLABLES
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| l.split(' ').next())
            .collect()
    })
}

/// Every qualified name of the inventory, in no particular order.
pub fn inventory_names() -> impl Iterator<Item = &'static str> {
    inventory().iter().copied()
}

/// Is `qualified` a public callable the inventory lists for some Python 3.6-3.13?
pub fn inventoried(qualified: &str) -> bool {
    inventory().contains(qualified)
}

/// The inventoried public callables of exactly `module` (not its submodules), sorted: what the
/// gadget tests build their pickles from.
pub fn callables_of(module: &str) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = inventory()
        .iter()
        .filter_map(|q| q.strip_prefix(module)?.strip_prefix('.'))
        .filter(|n| !n.contains('.'))
        .collect();
    out.sort_unstable();
    out
}

/// Is `m` the `__main__` module of a standard-library package (`venv.__main__`)? Importing it
/// runs the package's command-line program.
fn main_module(m: &str) -> bool {
    m.rsplit_once('.')
        .is_some_and(|(_, last)| last == "__main__")
}

/// An enum type of a module, or one of its members (`knowledge::VALUE_TYPES`).
const VALUE_TYPE: Row = callable(
    "enum",
    Value,
    "an enum of the module: calling it looks a member up",
);

/// `main` of a value module (`base64.main`, `json.tool.main`): a command-line program.
const MAIN_FUNCTION: Row = callable(
    "main",
    Dos,
    "a command-line entry point: reads sys.argv and blocks reading stdin",
);

const MAIN: Row = module(
    "__main__",
    Proc,
    "importing a package's __main__ runs its command-line program",
);

/// The module row that covers `module` (the longest dotted prefix with a row).
pub fn module_row(module: &str) -> Option<&'static Row> {
    if main_module(module) {
        return Some(&MAIN);
    }
    ROWS.iter()
        .filter(|r| r.module && covers(r.name, module))
        .max_by_key(|r| r.name.len())
}

/// The class of `module.name` (`name` may be dotted), or `None` when the module is not in the
/// standard library or a [`Class::Value`] module does not vouch for the name (see "How a row
/// applies"; a value module vouches for undotted, inventoried names only).
pub fn classify(module: &str, name: &str) -> Option<&'static Row> {
    let qualified = format!("{module}.{name}");
    let first = name.split('.').next().unwrap_or(name);
    let head = format!("{module}.{first}");
    // A callable row covers its attributes (`time.sleep`, `io.FileIO.__init__`).
    if let Some(row) = ROWS
        .iter()
        .filter(|r| !r.module && covers(r.name, &qualified))
        .max_by_key(|r| r.name.len())
    {
        return Some(row);
    }
    let row = module_row(module)?;
    // An enum of a capability module (`signal.Signals`, `socket.AF_INET`) is a value.
    if super::safe::is_value_type(module, name) {
        return Some(&VALUE_TYPE);
    }
    if row.class != Class::Value {
        return Some(row);
    }
    if name == "main" {
        return Some(&MAIN_FUNCTION);
    }
    // Only a module-level callable is vouched for: a dotted name reaches a method that the
    // pickle may call on an instance it built (`ElementTree.write`, `ConfigParser.read`).
    (name == first && inventoried(&head)).then_some(row)
}

/// Does `prefix` cover `name` on a dotted-component boundary?
fn covers(prefix: &str, name: &str) -> bool {
    name.strip_prefix(prefix)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODULE_LISTS: &[(&str, &str)] = &[
        ("3.6", include_str!("stdlib/modules-3.6.txt")),
        ("3.7", include_str!("stdlib/modules-3.7.txt")),
        ("3.8", include_str!("stdlib/modules-3.8.txt")),
        ("3.9", include_str!("stdlib/modules-3.9.txt")),
        ("3.10", include_str!("stdlib/modules-3.10.txt")),
        ("3.11", include_str!("stdlib/modules-3.11.txt")),
        ("3.12", include_str!("stdlib/modules-3.12.txt")),
        ("3.13", include_str!("stdlib/modules-3.13.txt")),
    ];

    fn listed(text: &str) -> impl Iterator<Item = &str> {
        text.lines()
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
    }

    #[test]
    fn every_stdlib_module_has_a_class() {
        // A top-level module needs its own row; a submodule is covered by its package's row
        // unless it has one of its own.
        let mut missing = Vec::new();
        for (version, text) in MODULE_LISTS {
            for m in listed(text) {
                let own = ROWS.iter().any(|r| r.module && r.name == m);
                if (!m.contains('.') && !own) || module_row(m).is_none() {
                    missing.push(format!("{m} ({version})"));
                }
            }
        }
        assert!(missing.is_empty(), "not in the table: {missing:?}");
    }

    #[test]
    fn rows_are_unique_and_reasons_are_phrases() {
        let mut seen = HashSet::new();
        for r in ROWS {
            assert!(seen.insert((r.name, r.module)), "duplicate row {}", r.name);
            assert!(
                !r.reason.is_empty() && !r.reason.ends_with('.'),
                "{}: {}",
                r.name,
                r.reason
            );
        }
    }

    #[test]
    fn every_inventoried_callable_has_a_class() {
        let unclassified: Vec<&str> = inventory()
            .iter()
            .copied()
            .filter(|q| {
                let (m, n) = split_module(q);
                classify(m, n).is_none()
            })
            .collect();
        assert!(unclassified.is_empty(), "{unclassified:?}");
    }

    /// `a.b.c` -> (`a.b`, `c`): the inventory's callables are undotted names of a module.
    fn split_module(q: &str) -> (&str, &str) {
        q.rsplit_once('.').unwrap_or((q, ""))
    }

    #[test]
    fn values_are_vouched_only_for_inventoried_names() {
        assert_eq!(classify("collections", "OrderedDict").unwrap().class, Value);
        assert_eq!(classify("datetime", "date").unwrap().class, Value);
        assert_eq!(classify("time", "sleep").unwrap().class, Dos);
        assert_eq!(classify("resource", "setrlimit").unwrap().class, Interp);
        // A name the inventory does not list is not vouched for.
        assert!(classify("calendar", "MyModel").is_none());
        assert!(classify("json", "_private_helper").is_none());
        // Capability modules cover everything.
        assert_eq!(classify("subprocess", "_anything").unwrap().class, Proc);
        assert_eq!(classify("venv.__main__", "x").unwrap().class, Proc);
        assert!(classify("acme", "thing").is_none());
    }
}
