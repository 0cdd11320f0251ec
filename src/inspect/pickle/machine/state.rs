//! The symbolic machine's state: the [`Machine`] with its stack, marks, memo and nodes, the
//! values on them ([`Val`], [`Node`], kept [`Text`] and [`Blob`]s), and the short error
//! constructor. The folder's leaf: it imports nothing from `machine`, so the opcode handlers in
//! the sibling files (each an `impl Machine` block) use it without an arrow back up to `mod.rs`.

use std::collections::HashMap;
use std::rc::Rc;

use crate::inspect::pickle::analysis::{Analysis, Limits, Malformed, malformed};

/// A kept string value.
#[derive(Debug)]
pub(super) struct Text {
    pub(super) value: String,
    /// False when only a prefix was kept (or decoding was lossy).
    pub(super) complete: bool,
    /// True for `str` (unicode and protocol 0-2 strings), false for `bytes`.
    pub(super) is_str: bool,
    pub(super) opcode: &'static str,
}

/// A kept `bytes` value that is not UTF-8 (UTF-8 ones are [`Val::Str`]): its first bytes, for
/// the one call that reads bytes as a file, `torch.storage._load_from_bytes` (issue 32).
#[derive(Debug)]
pub(super) struct Blob {
    pub(super) head: Vec<u8>,
    /// The value's whole length (the head may be a prefix).
    pub(super) len: u64,
    pub(super) opcode: &'static str,
    /// Whether the bytes were read as a complete legacy `torch.save`, decided once per value
    /// (a memoized blob fetched again is not read again).
    pub(super) vetted: std::cell::Cell<Option<bool>>,
}

/// Bytes of `bytes` heads one pickle keeps ([`Blob`]): a legacy save's pickles take a few hundred
/// bytes, so this is room for thousands of tensors; past it a blob is opaque and the call on it
/// keeps its verdict.
pub(super) const MAX_BLOB_BYTES: usize = 8 << 20;

/// A symbolic value.
#[derive(Debug, Clone)]
pub(super) enum Val {
    Str(Rc<Text>),
    Bytes(Rc<Blob>),
    Int(i64),
    PyNone,
    /// An imported global (index into `Analysis::imports`).
    Global(usize),
    /// The result of calling something; `class` is the import that was called, if known.
    Obj {
        class: Option<usize>,
        node: Option<usize>,
    },
    /// A tracked container (index into the node arena).
    Node(usize),
    /// A PyTorch storage from a persistent id (index into `Analysis::storages`).
    Storage(usize),
    /// Anything else; the name says where it came from.
    Other(&'static str),
}

impl Val {
    pub(super) fn describe(&self) -> &'static str {
        match self {
            Val::Str(t) => t.opcode,
            Val::Bytes(b) => b.opcode,
            Val::Int(_) => "integer",
            Val::PyNone => "None",
            Val::Global(_) => "global",
            Val::Obj { .. } => "object",
            Val::Node(_) => "container",
            Val::Storage(_) => "storage",
            Val::Other(what) => what,
        }
    }
}

#[derive(Debug)]
pub(super) enum Node {
    Seq(Vec<Val>),
    Dict(Vec<(Val, Val)>),
    Obj {
        args: Option<Val>,
        state: Option<Val>,
    },
}

/// The first list a pickle builds and, while every item is a complete `str`, its strings.
pub(super) struct RootList {
    pub(super) id: usize,
    pub(super) strings: Option<Vec<String>>,
    pub(super) bytes: usize,
}

/// Bytes of strings a [`RootList`] keeps: storage keys are short decimal numbers, so this is
/// room for far more keys than the storage cap, and a list that repeats one long memoized
/// string cannot make the copies grow past it.
pub(super) const MAX_ROOT_LIST_BYTES: usize = 4 << 20;

impl RootList {
    /// Append `items`; the strings are dropped (`None`) once one is not a complete `str` or
    /// past `max_items` items or [`MAX_ROOT_LIST_BYTES`].
    pub(super) fn extend(&mut self, items: &[Val], max_items: usize) {
        let Some(strings) = &mut self.strings else {
            return;
        };
        for v in items {
            let Val::Str(t) = v else {
                self.strings = None;
                return;
            };
            self.bytes = self.bytes.saturating_add(t.value.len());
            if !t.complete
                || !t.is_str
                || strings.len() >= max_items
                || self.bytes > MAX_ROOT_LIST_BYTES
            {
                self.strings = None;
                return;
            }
            strings.push(t.value.clone());
        }
    }
}

/// Saved outer machine while a joblib object array's nested pickle is read.
pub(super) struct Saved {
    pub(super) stack: Vec<Val>,
    pub(super) marks: Vec<usize>,
    pub(super) memo: HashMap<u64, Val>,
}

pub(super) enum Flow {
    Continue,
    Stop,
}

/// Reads bytes a pickle hands to `torch.load` (`torch.storage._load_from_bytes`) as a whole
/// legacy `torch.save` stream: `Some(analysis)` when its five pickles end without error inside
/// the bytes, `None` otherwise. That takes the stream driver (`inspect/pickle/mod.rs`), which
/// itself runs this machine; the driver passes the function down to
/// `run_pickle` (in `machine/mod.rs`) instead of the machine naming what sits above it (issue 38).
/// The machine lowers `embedded_depth` by one before each call, which bounds the nesting.
pub(crate) type ReadEmbedded = fn(&[u8], &Limits) -> Option<Analysis>;

pub(super) struct Machine<'l> {
    pub(super) limits: &'l Limits,
    /// How bytes handed to `torch.load` are read as a whole legacy `torch.save` (see
    /// [`ReadEmbedded`]).
    pub(super) read_embedded: ReadEmbedded,
    pub(super) pickle: usize,
    pub(super) stack: Vec<Val>,
    pub(super) marks: Vec<usize>,
    pub(super) memo: HashMap<u64, Val>,
    pub(super) nodes: Vec<Node>,
    pub(super) tracked_bytes: usize,
    pub(super) proto: u8,
    pub(super) nested: Option<Box<Saved>>,
    /// A problem CPython would stop at but a scanner must read past (an unsupported PROTO):
    /// what follows can still be an import, and other loaders may not stop. Reported at the end.
    pub(super) deferred: Option<Malformed>,
    /// The first list this pickle builds, with its items while they are all complete strings:
    /// a legacy PyTorch key list is one.
    pub(super) root_list: Option<RootList>,
    /// The value STOP popped.
    pub(super) result: Option<Val>,
    /// `torch.storage._load_from_bytes` imports of this pickle: (times its value was pushed,
    /// times it was called on bytes read as a complete legacy `torch.save`). Vouched for only
    /// when the two agree, so a copy used any other way (wrapped in `functools.partial`, called
    /// on other bytes, stored) leaves the import to its table verdict.
    pub(super) byte_loads: HashMap<usize, (u64, u64)>,
    /// Bytes of kept [`Blob`] heads, at most [`MAX_BLOB_BYTES`].
    pub(super) blob_bytes: usize,
    /// Globals of embedded `torch.save` bytes already added to the imports, so one storage
    /// class named by every tensor is recorded once.
    pub(super) embedded_seen: std::collections::HashSet<(Option<String>, Option<String>, bool)>,
}

/// A [`Malformed`] problem at `at` (the machine's short name for `malformed`).
pub(super) fn err(at: u64, code: &'static str, message: String) -> Malformed {
    malformed(at, code, message)
}
