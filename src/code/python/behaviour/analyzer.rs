//! The shared state of the behaviour analysis: the site types it reports ([`Site`],
//! [`Confidence`], [`When`], [`Decoded`]), the [`Analyzer`] whose `impl` blocks live in the
//! capability judges, [`CallSite`], [`Blob`] and the limits the judges share. This is the
//! folder's leaf: it imports nothing from `behaviour/mod.rs` or its siblings.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

use tree_sitter::Node;

use crate::code::python::budget::{Budget, Memo};
use crate::code::python::calls::Args;
use crate::code::python::decode::{self, Codec};
use crate::code::python::scanner::Scanner;
use crate::knowledge::capabilities::{Capability, Entry};
use crate::model::finding::Severity;

/// How sure the analysis is that a site does what it says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Confidence {
    /// A guess from a method name on an object the analysis could not resolve.
    Low,
    /// Resolved, but through something computed (a name not imported, a dynamic lookup).
    Medium,
    /// Resolved through the file's imports (or a builtin) with the arguments visible.
    High,
}

impl Confidence {
    /// Lowercase name, for evidence.
    pub fn as_str(self) -> &'static str {
        match self {
            Confidence::Low => "low",
            Confidence::Medium => "medium",
            Confidence::High => "high",
        }
    }
}

/// When the code at a site runs (the one `When` of the code judges: source and bytecode).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum When {
    /// At import: module level, a class body, a decorator or a default argument.
    Import,
    /// When a function runs.
    Call {
        /// The function, qualified by its class (`Model.forward`).
        function: String,
        /// Loader entry points of the file (and `import` for module-level calls) from which a
        /// chain of calls within the file reaches the function, sorted.
        reached_from: Vec<String>,
    },
}

impl When {
    /// Short phrase for messages: "at import", "in `Model.forward` (reached from `__init__`)".
    pub fn describe(&self) -> String {
        match self {
            When::Import => "at import".to_owned(),
            When::Call {
                function,
                reached_from,
            } if reached_from.is_empty() => format!("when `{function}` is called"),
            When::Call {
                function,
                reached_from,
            } => {
                let from: Vec<String> = reached_from.iter().map(|f| format!("`{f}`")).collect();
                format!("in `{function}`, reached from {}", from.join(", "))
            }
        }
    }
}

/// A decoded literal blob at a site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// Codec names, first applied first (`base64`, `zlib`).
    pub chain: Vec<String>,
    /// The start of the decoded payload (text, or `\xNN` escapes), bounded.
    pub excerpt: String,
}

/// One place where the code exercises a capability.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    /// What it can do.
    pub capability: Capability,
    /// How bad this site is.
    pub severity: Severity,
    /// How sure the analysis is.
    pub confidence: Confidence,
    /// 1-based line (of the outermost call, for sites inside decoded blobs).
    pub line: usize,
    /// 1-based column in chars.
    pub column: usize,
    /// The call as resolved (`os.system`, `subprocess.run`, `torch.load =`).
    pub call: String,
    /// What the site does, lowercase (`runs "curl … | sh"`).
    pub detail: String,
    /// When it runs.
    pub when: When,
    /// CWE id.
    pub cwe: u32,
    /// Set when the site was found in a decoded literal blob.
    pub decoded: Option<Decoded>,
    /// The library path of a native load, when it is a literal (for matching shipped files).
    pub library: Option<String>,
}

/// Nodes this deep or deeper have their parent kept in [`Analyzer::parents`].
pub(super) const MAPPED_DEPTH: usize = 32;
/// Most names one expression may resolve to (`a if c else b` chains double them).
pub(super) const MAX_NAMES: usize = 32;

/// A call whose callee is in the capability table.
pub(super) struct CallSite<'t> {
    /// The `call` node.
    pub node: Node<'t>,
    /// The matching entry.
    pub entry: &'static Entry,
    /// The resolved name that matched.
    pub name: String,
    /// Its arguments.
    pub args: Args<'t>,
    /// How sure the resolution is.
    pub confidence: Confidence,
}

/// A deferral (`atexit.register(f)`) waiting for the sites of what it defers.
pub(super) struct Deferral<'t> {
    pub(super) node: Node<'t>,
    pub(super) name: String,
    pub(super) targets: Vec<Node<'t>>,
}

pub(super) struct Analyzer<'s, 'b, 'c> {
    pub sc: &'c mut Scanner<'s, 'b>,
    pub(super) depth: usize,
    pub(super) calls: Vec<Node<'s>>,
    pub(super) assignments: Vec<Node<'s>>,
    /// `os.environ` references (identifiers or attributes resolving to it).
    pub(super) environ: Vec<Node<'s>>,
    /// Function name -> its `function_definition` nodes.
    pub(super) functions: BTreeMap<&'s str, Vec<Node<'s>>>,
    /// Function name -> last segments of the names it calls.
    pub(super) callees: BTreeMap<&'s str, BTreeSet<&'s str>>,
    /// Last segments of names called at import time.
    pub(super) module_calls: BTreeSet<&'s str>,
    /// Names assigned exactly once (any scope), with the value.
    pub(super) once: BTreeMap<&'s str, Node<'s>>,
    /// Loop variables over a literal list or tuple (`for p in ("~/.bashrc", "~/.zshrc")`),
    /// with the iterable: a path built from one of them is any of them.
    pub(super) loops: BTreeMap<&'s str, Node<'s>>,
    pub(super) counts: BTreeMap<&'s str, u32>,
    /// Names holding a secret (a credential read or the environment), with what it is.
    pub secrets: BTreeMap<&'s str, String>,
    pub sites: Vec<Site>,
    pub(super) deferrals: Vec<Deferral<'s>>,
    pub(super) truncated_by: Option<&'static str>,
    pub limit_hit: Option<&'static str>,
    /// Entry point reachability, computed on first use.
    pub(super) reach: std::cell::OnceCell<Vec<(&'s str, BTreeSet<&'s str>)>>,
    /// The parent of each named node at least [`MAPPED_DEPTH`] levels deep, from the one walk
    /// of the tree: tree-sitter finds a parent by descending from the root, so walking up from
    /// a node ten thousand levels deep was quadratic (issue 37). Shallower nodes, nearly all
    /// of real code, ask tree-sitter, which is cheaper than filling a map with them.
    pub(super) parents: IdMap<Node<'s>>,
    /// The file's evaluation budget (steps, bytes, depth), shared with every payload decoded
    /// from it and analysed again: a file of ten thousand `exec(blob)` calls must not decode
    /// each blob ten thousand times over, and `x = "%s" % x` must not recurse forever.
    pub(super) budget: &'c Budget,
    /// Set when the budget stopped a decode.
    pub(super) budget_spent: Cell<bool>,
    /// Values of names assigned once, by value node ([`Analyzer::blob_value`]).
    pub(super) values: RefCell<IdMap<(BlobValue, Memo)>>,
    /// Names of values assigned once, by value node ([`Analyzer::resolve_value`]).
    pub(super) resolved: RefCell<IdMap<(Vec<String>, Memo)>>,
    /// [`Analyzer::enclosing_def`] and the scope [`Analyzer::when`] looks for, by node.
    pub(super) def_scopes: RefCell<IdMap<Option<Node<'s>>>>,
    pub(super) run_scopes: RefCell<IdMap<Option<Node<'s>>>>,
}

/// What [`Analyzer::blob`] returns.
pub(super) type BlobValue = Result<Option<Blob>, decode::DecodeError>;

/// A map keyed by tree-sitter node id (an address: no attacker picks it, so a multiplicative
/// hash is enough).
pub(super) type IdMap<V> = HashMap<usize, V, BuildHasherDefault<IdHasher>>;

/// The hasher of [`IdMap`].
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(*b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_usize(&mut self, n: usize) {
        let h = (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = h ^ (h >> 29);
    }
}

/// Whether a resolved name looks like a module or callable path (not a local value).
pub(super) fn is_module_or_callable(name: &str) -> bool {
    !name.contains("<expr>")
}

/// A literal expression's bytes and the decoding steps that produced them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blob {
    /// The value.
    pub bytes: Vec<u8>,
    /// Decoding steps applied, first first (text re-encodings left out).
    pub chain: Vec<Codec>,
}

impl Blob {
    pub(super) fn plain(bytes: Vec<u8>) -> Blob {
        Blob {
            bytes,
            chain: Vec::new(),
        }
    }

    pub(super) fn step(
        mut self,
        codec: Codec,
        limits: &decode::Limits,
    ) -> Result<Blob, decode::DecodeError> {
        if self.chain.len() >= limits.max_steps {
            return Err(decode::DecodeError {
                step: self.chain.len().saturating_add(1),
                codec,
                kind: decode::ErrorKind::TooManySteps {
                    limit: limits.max_steps,
                },
            });
        }
        let bytes = decode::decode_step(&self.bytes, codec, limits).map_err(|kind| {
            decode::DecodeError {
                step: self.chain.len().saturating_add(1),
                codec,
                kind,
            }
        })?;
        self.bytes = bytes;
        if codec != Codec::Text {
            self.chain.push(codec);
        }
        Ok(self)
    }

    /// Whether any real decoding happened (not only re-encoding text).
    pub fn is_decoded(&self) -> bool {
        !self.chain.is_empty()
    }
}
