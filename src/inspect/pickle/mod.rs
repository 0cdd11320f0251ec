//! Pickle analysis without execution. A pickle is a program for a stack machine; loading it runs
//! `find_class` for every GLOBAL/INST/STACK_GLOBAL and calls what REDUCE, OBJ, NEWOBJ and BUILD
//! are given. This module walks the opcodes of every pickle in a stream (protocols 0-5) through
//! a symbolic model of CPython's `_pickle.c` unpickler (same stack, mark stack and memo rules),
//! so it can tell which globals a stream imports and which of them it calls, even when the
//! module and name strings travel through the memo, DUP or MARK tricks meant to desync a naive
//! reader. Nothing is imported or evaluated; every length and count is checked against
//! [`Limits`] before it is used.
//!
//! Facts only: the imports come out as [`Import`] records and [`crate::knowledge`] judges them.

mod dis;
mod machine;
pub mod ops;
pub mod torch;

use crate::model::problem::{Problem, ProblemKind};
use std::collections::{BTreeMap, BTreeSet};
use std::io::BufRead;

pub use dis::disassemble;
use ops::{Arg, Op, Source};

/// Bounds on everything a hostile stream controls. Every field is checked before the
/// allocation or loop it guards; a stream over a limit ends the analysis with a
/// `limit-*` [`Malformed`] error and keeps what was found before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Opcodes read across all pickles of one stream.
    pub max_opcodes: u64,
    /// Memo entries per pickle.
    pub max_memo: usize,
    /// Values on the stack at once.
    pub max_stack: usize,
    /// Open MARKs at once.
    pub max_marks: usize,
    /// Length a length-prefixed argument may claim (payloads are skipped, not allocated).
    pub max_arg_len: u64,
    /// Length of a newline-terminated argument (GLOBAL lines, STRING, UNICODE, INT, ...).
    pub max_line_len: u64,
    /// Bytes kept of a string argument (the rest is skipped).
    pub keep_string: usize,
    /// Longest module or name that is resolved; longer ones are reported as unresolvable.
    pub max_name_len: usize,
    /// Pickles read one after another in a stream.
    pub max_pickles: usize,
    /// Import records per stream.
    pub max_imports: usize,
    /// Total bytes of string prefixes the symbolic machine keeps alive; past it, new strings
    /// become opaque values (an import built from them is then reported as unresolvable).
    pub max_tracked_bytes: usize,
    /// Containers and objects the symbolic machine tracks; past it they become opaque values.
    pub max_nodes: usize,
    /// Items tracked per container.
    pub max_container_items: usize,
    /// Bytes inspected after a STOP to decide whether another pickle follows.
    pub sniff_len: usize,
    /// How deep `torch.storage._load_from_bytes(b)` is followed into `b` (a legacy `torch.save`
    /// read as its own stream); at 0 the bytes are not read and the call keeps its verdict.
    pub embedded_depth: u8,
}

impl From<&crate::model::limits::Limits> for Limits {
    /// `pickle_opcodes`, `pickle_memo` and `pickle_string_bytes` from the policy; the symbolic
    /// machine's stack, mark, node and tracking caps are fixed internal bounds.
    fn from(l: &crate::model::limits::Limits) -> Self {
        Limits {
            max_opcodes: l.pickle_opcodes,
            max_memo: crate::model::limits::usize_of(l.pickle_memo),
            max_stack: 1_000_000,
            max_marks: 100_000,
            max_arg_len: 1 << 40,
            max_line_len: l.pickle_string_bytes,
            keep_string: 1024,
            max_name_len: 256,
            max_pickles: 1024,
            max_imports: 100_000,
            max_tracked_bytes: 16 << 20,
            max_nodes: 1_000_000,
            max_container_items: 256,
            sniff_len: 1024,
            embedded_depth: 1,
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self::from(&crate::model::limits::Limits::default())
    }
}

/// One global that a pickle imports (GLOBAL, INST, STACK_GLOBAL or EXT1/2/4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Import {
    /// Module as spelled in the pickle; `None` when it cannot be resolved statically.
    pub module: Option<String>,
    /// Attribute name as spelled in the pickle; `None` when it cannot be resolved statically.
    pub name: Option<String>,
    /// The opcode that imported it.
    pub opcode: &'static str,
    /// Offset of that opcode.
    pub offset: u64,
    /// Index of the pickle in the stream (0 for the first).
    pub pickle: usize,
    /// Whether the stream calls it (REDUCE, OBJ, NEWOBJ, NEWOBJ_EX, INST) or invokes a method
    /// of it or of an instance of it (BUILD, APPEND(S), SETITEM(S), ADDITEMS).
    pub called: bool,
    /// The first opcode that called it.
    pub call_opcode: Option<&'static str>,
    /// Why the import is unresolved or unusual, e.g. where a STACK_GLOBAL argument came from.
    pub note: Option<String>,
    /// For a call wrapper (`functools.partial`, see [`crate::knowledge::is_call_wrapper`]):
    /// what its constructions and `__setstate__` calls wrap. `None` when it was never built.
    pub wraps: Option<Wraps>,
}

/// What a call wrapper import wraps, over every construction of it in the stream.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Wraps {
    /// Imports (indices into [`Analysis::imports`]) named as the wrapped callable.
    pub targets: Vec<usize>,
    /// True when some construction wraps a value that is not a statically named global (a
    /// string, a computed object): the wrapper cannot be judged by its target then.
    pub opaque: bool,
}

impl Import {
    /// True when both module and name were resolved statically.
    pub fn resolved(&self) -> bool {
        self.module.is_some() && self.name.is_some()
    }
}

/// One pickle found in the stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PickleInfo {
    /// Offset of its first opcode.
    pub offset: u64,
    /// Highest protocol named by a PROTO opcode (0 when there is none).
    pub protocol: u8,
    /// Opcodes read in it.
    pub opcodes: u64,
    /// Offset just past its STOP (or where reading stopped on an error).
    pub end: u64,
    /// Whether it ended with STOP.
    pub complete: bool,
}

/// Bytes inside a pickle stream that the loader reads as raw data, not opcodes (joblib writes
/// each numpy array's bytes right after its `NumpyArrayWrapper` BUILD). They were skipped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawRegion {
    /// Offset of the first raw byte (the alignment padding byte when there is one).
    pub offset: u64,
    /// Raw bytes skipped, padding included.
    pub len: u64,
    /// What they are, e.g. `joblib-array`.
    pub kind: &'static str,
}

/// Where the stream stopped being pickle data after a complete pickle (legacy PyTorch files
/// keep raw storage bytes there). A fact, not an error; the caller knows the total size, so
/// the trailing length is `total - offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trailing {
    /// Offset of the first byte that is not a pickle.
    pub offset: u64,
}

/// A PyTorch storage named by a persistent id (`BINPERSID` on the tuple `torch.save` writes:
/// `('storage', <storage type>, key, location, numel[, view metadata])`). `torch.load` looks
/// the key up as `data/<key>` in a zip archive (or in the storage block after the pickles of a
/// legacy file) and trusts `numel`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Storage {
    /// Offset of the BINPERSID opcode.
    pub offset: u64,
    /// The storage key (`data/<key>` member name in a zip archive).
    pub key: String,
    /// The storage type's name as imported, e.g. `torch.FloatStorage`; `None` when the type
    /// is not a resolved global.
    pub type_name: Option<String>,
    /// Declared element count (bytes for `UntypedStorage`); `None` when it is not an integer.
    pub numel: Option<i64>,
}

/// A pickle whose result is a list of strings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StringList {
    /// Index of the pickle in the stream.
    pub pickle: usize,
    /// The strings, in list order.
    pub items: Vec<String>,
}

/// A `torch._utils._rebuild_tensor*` / `_rebuild_qtensor` call: a strided view over a storage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorView {
    /// Offset of the REDUCE that calls the rebuild function.
    pub offset: u64,
    /// The rebuild function's name, e.g. `_rebuild_tensor_v2`.
    pub function: &'static str,
    /// Index into [`Analysis::storages`] of the storage argument, when it is one.
    pub storage: Option<usize>,
    /// `storage_offset`, in elements.
    pub storage_offset: Option<i64>,
    /// Size per dimension; `None` when it is not a tuple of integers.
    pub size: Option<Vec<i64>>,
    /// Stride per dimension, in elements; `None` when it is not a tuple of integers.
    pub stride: Option<Vec<i64>>,
    /// `_rebuild_tensor_v3` only: its `dtype` argument as a qualified global name, e.g.
    /// `torch.float8_e4m3fn`; the view's elements have that dtype's size, not the storage's.
    pub dtype: Option<String>,
}

/// A structure no benign writer produces and that only makes sense as an exploit of the
/// loader (writing into a global instead of a container, an out-of-bounds tensor view).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    /// Offset of the opcode at fault.
    pub offset: u64,
    /// Stable kebab-case code, e.g. `non-container-target`, `tensor-view-out-of-bounds`.
    pub code: &'static str,
    /// Lowercase message with the numbers.
    pub message: String,
}

/// Why parsing stopped early: the crate's one [`Problem`] type, always with an `offset` (the
/// opcode or byte at fault). Codes: `truncated`, `unknown-opcode`, `stack-underflow`,
/// `mark-missing`, `memo-missing`, `odd-items`, `bad-argument`, `unsupported-protocol`,
/// `joblib-array-unsized` ([`ProblemKind::Malformed`]), `io` ([`ProblemKind::Note`]: the reader
/// failed, not the file), or a `limit-*` code (`limit-opcodes`, `limit-memo`, `limit-stack`,
/// `limit-marks`, `limit-string`, `limit-line`, `limit-pickles`, `limit-imports`:
/// [`ProblemKind::LimitExceeded`]).
pub type Malformed = Problem;

/// The problem `code` at `offset`, its kind decided by the code.
pub(crate) fn malformed(offset: u64, code: &'static str, message: String) -> Problem {
    let kind = if code.starts_with("limit-") {
        ProblemKind::LimitExceeded
    } else if code == "io" {
        ProblemKind::Note
    } else {
        ProblemKind::Malformed
    };
    Problem::new(kind, code, message, Some(offset))
}

/// Everything learned from one stream.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Analysis {
    /// The pickles, in stream order.
    pub pickles: Vec<PickleInfo>,
    /// Every import, in stream order.
    pub imports: Vec<Import>,
    /// Raw data regions skipped inside pickles.
    pub raw_regions: Vec<RawRegion>,
    /// PyTorch storages named by persistent ids, in stream order (bounded by
    /// [`Limits::max_imports`]).
    pub storages: Vec<Storage>,
    /// The first PyTorch tensor views built by rebuild calls, in stream order (every view is
    /// checked against its storage as it is built; one that does not fit is in `shapes`).
    pub views: Vec<TensorView>,
    /// Exploit-shaped structures seen by the machine (bounded by [`Limits::max_imports`]).
    pub shapes: Vec<Shape>,
    /// Non-pickle data after the last complete pickle.
    pub trailing: Option<Trailing>,
    /// The first bytes of that data (at most [`Limits::sniff_len`]), already taken from the
    /// reader by the lookahead that found it is no pickle: a legacy PyTorch file's storage
    /// block starts here, and the caller reads the rest from the reader.
    pub trailing_head: Vec<u8>,
    /// The last pickle whose result is a list built only of complete strings, with those
    /// strings (at most [`Limits::max_imports`]): the storage keys of a legacy PyTorch file,
    /// in the order `torch.load` reads their raw bytes.
    pub string_list: Option<StringList>,
    /// Every opcode the stream uses (pickletools name), with the offset of its first use: what
    /// the PyTorch weights-only verdict checks against the opcodes that unpickler implements.
    pub first_use: BTreeMap<&'static str, u64>,
    /// Issue 32: the `torch.storage._load_from_bytes` imports (indices into `imports`) whose
    /// every use is a call on bytes that were read here as a complete legacy `torch.save` (what
    /// `TypedStorage.__reduce__` writes when a tensor is pickled without `torch.save`). The
    /// globals of those bytes are in `imports`, judged with the file's own.
    pub vouched_byte_loads: BTreeSet<usize>,
    /// Why parsing stopped early, if it did.
    pub error: Option<Malformed>,
    /// Bytes taken from the reader. It can exceed the parse end by up to
    /// [`Limits::sniff_len`] bytes of lookahead; the caller drains the rest itself.
    pub bytes_read: u64,
}

/// Analyse every pickle in `r`, one after another, until end of stream, non-pickle data after
/// a STOP, an error or a limit. Never panics and never fails: problems land in
/// [`Analysis::error`] next to the imports found before them.
pub fn analyze<R: BufRead>(r: &mut R, limits: &Limits) -> Analysis {
    run(r, limits, &|_: &Analysis| false)
}

/// The loop of [`analyze`]; `raw_after(analysis)` says, after a complete pickle, that the rest
/// of the stream is raw data whatever it looks like.
fn run<R: BufRead>(r: &mut R, limits: &Limits, raw_after: &dyn Fn(&Analysis) -> bool) -> Analysis {
    let mut out = Analysis::default();
    let mut src = Source::new(r, 0);
    let mut budget = limits.max_opcodes;
    loop {
        if out.pickles.len() >= limits.max_pickles {
            out.error = Some(malformed(
                src.pos,
                "limit-pickles",
                format!(
                    "another pickle starts at offset {} after {} pickles, the limit",
                    src.pos, limits.max_pickles
                ),
            ));
            break;
        }
        let index = out.pickles.len();
        let result = machine::run_pickle(&mut src, limits, index, &mut budget, &mut out);
        if let Err(e) = result {
            out.error = Some(e);
            break;
        }
        match src.lookahead(limits.sniff_len) {
            Ok([]) => break,
            Ok(head) if !raw_after(&out) && looks_like_pickle(head) => continue,
            Ok(head) => {
                out.trailing_head = head.to_vec();
                out.trailing = Some(Trailing { offset: src.pos });
                break;
            }
            Err(e) => {
                out.error = Some(e);
                break;
            }
        }
    }
    out.bytes_read = src.taken;
    out
}

/// Pickles a legacy (non-zip) PyTorch file holds before its raw storage block: magic number,
/// protocol version, sys_info, the data, the list of storage keys (`torch/serialization.py`
/// `_legacy_save`).
pub const TORCH_LEGACY_PICKLES: usize = 5;

/// [`analyze`] for a legacy PyTorch file (issue 32): once the fifth pickle, the storage key
/// list, is complete, what follows is the raw storage block, which `torch.load` reads as bytes
/// and never unpickles. It is left as [`Analysis::trailing`] whatever its first bytes are (an
/// element count of 640 is `0x80 0x02 ..`, one of 37757 is `} 0x93 ..`), so it is never parsed
/// as a pickle; `check_legacy_block` checks its records.
pub fn analyze_torch_legacy<R: BufRead>(r: &mut R, limits: &Limits) -> Analysis {
    run(r, limits, &legacy_pickles_read)
}

/// Whether `out` holds a legacy PyTorch file's five pickles, the fifth a list of storage keys:
/// what `torch.load` reads before the raw storage block.
pub(crate) fn legacy_pickles_read(out: &Analysis) -> bool {
    out.pickles.len() == TORCH_LEGACY_PICKLES
        && out
            .string_list
            .as_ref()
            .is_some_and(|l| l.pickle == TORCH_LEGACY_PICKLES - 1)
}

/// The two members of the pre-0.4 tar-based `torch.save` format that interleave pickles with raw
/// records (`torch/serialization.py` `legacy_load`): after a pickle of the record count, each
/// record is a pickle followed by raw bytes that are never unpickled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TarRecords {
    /// `storages`: `(key, location, storage_type)`, then an 8-byte little-endian element count
    /// and that many elements of the storage type.
    Storages,
    /// `tensors`: `(key, storage_id, tensor_type)`, then a 4-byte `ndim` (read as 8), `ndim`
    /// sizes and strides (8 bytes each) and an 8-byte storage offset.
    Tensors,
}

/// Dimensions a legacy tensor record may claim (PyTorch tensors have at most 64).
const MAX_TAR_NDIM: u64 = 64;

/// [`analyze`] for the `storages` or `tensors` member of a tar-based PyTorch file (issue 32):
/// every pickle is read, and the raw record after each is skipped by its own length fields,
/// never parsed as opcodes whatever its first bytes are. A storage record whose type is not a
/// known storage class cannot be sized; what follows it is left as [`Analysis::trailing`].
pub fn analyze_torch_tar_records<R: BufRead>(
    r: &mut R,
    kind: TarRecords,
    limits: &Limits,
) -> Analysis {
    let mut out = Analysis::default();
    let mut src = Source::new(r, 0);
    let mut budget = limits.max_opcodes;
    if let Err(e) = tar_records(&mut src, kind, limits, &mut budget, &mut out) {
        out.error = Some(e);
    }
    out.bytes_read = src.taken;
    out
}

fn tar_records<R: BufRead>(
    src: &mut Source<'_, R>,
    kind: TarRecords,
    limits: &Limits,
    budget: &mut u64,
    out: &mut Analysis,
) -> Result<(), Malformed> {
    machine::run_pickle(src, limits, 0, budget, out)?;
    loop {
        if src.lookahead(1)?.is_empty() {
            return Ok(());
        }
        let index = out.pickles.len();
        if index >= limits.max_pickles {
            return Err(malformed(
                src.pos,
                "limit-pickles",
                format!(
                    "another record starts at offset {} after {index} pickles, the limit",
                    src.pos
                ),
            ));
        }
        let first_import = out.imports.len();
        machine::run_pickle(src, limits, index, budget, out)?;
        let at = src.pos;
        let raw = match kind {
            TarRecords::Storages => {
                let itemsize = out.imports.get(first_import..).and_then(|new| {
                    new.iter().rev().find_map(|i| {
                        let (m, n) = (i.module.as_deref()?, i.name.as_deref()?);
                        let m = m.strip_prefix("torch.cuda").map_or(m, |_| "torch");
                        crate::knowledge::torch_storage_itemsize(&format!("{m}.{n}"))
                    })
                });
                let Some(itemsize) = itemsize else {
                    // Unknown storage type: the record cannot be sized.
                    out.trailing = Some(Trailing { offset: at });
                    return Ok(());
                };
                let count = read_u64(src, "storage record count")?;
                count.checked_mul(itemsize)
            }
            TarRecords::Tensors => {
                let ndim = read_u64(src, "tensor record ndim")? & 0xffff_ffff;
                if ndim > MAX_TAR_NDIM {
                    return Err(malformed(
                        at,
                        "bad-argument",
                        format!("tensor record at offset {at} claims {ndim} dimensions"),
                    ));
                }
                Some(16 * ndim + 8)
            }
        };
        let Some(raw) = raw else {
            return Err(malformed(
                at,
                "bad-argument",
                format!("record at offset {at} claims a size that overflows"),
            ));
        };
        if src.skip(raw)? < raw {
            return Err(malformed(
                at,
                "truncated",
                format!("the raw record at offset {at} ends before its {raw} bytes"),
            ));
        }
    }
}

/// An 8-byte little-endian count of a raw record.
fn read_u64<R: BufRead>(src: &mut Source<'_, R>, what: &str) -> Result<u64, Malformed> {
    let p = src.payload(8, 8, what)?;
    let bytes: [u8; 8] = p
        .head
        .as_slice()
        .try_into()
        .map_err(|_| malformed(src.pos, "truncated", format!("{what} is cut short")))?;
    Ok(u64::from_le_bytes(bytes))
}

/// A pickle hidden in bytes that no loader unpickles (a PyTorch storage record, issue 32): the
/// analysis of the first pickle when the bytes start with a valid PROTO (2 to 5) and that
/// pickle parses completely to its STOP; `None` otherwise. Raw tensor bytes that happen to
/// begin like opcodes end in an error long before a STOP, and are then no pickle at all (never
/// a malformed one). Bytes after the STOP are not read.
pub fn analyze_hidden<R: BufRead>(r: &mut R, limits: &Limits) -> Option<Analysis> {
    let mut src = Source::new(r, 0);
    match src.lookahead(2) {
        Ok([0x80, 2..=5, ..]) => {}
        _ => return None,
    }
    let mut out = Analysis::default();
    let mut budget = limits.max_opcodes;
    machine::run_pickle(&mut src, limits, 0, &mut budget, &mut out).ok()?;
    out.bytes_read = src.taken;
    out.pickles
        .first()
        .is_some_and(|p| p.complete)
        .then_some(out)
}

/// Content sniffing: does `head` (the first bytes of a file, ideally 1 KiB or more) start a
/// pickle? Protocol 2+ streams start with PROTO 2..=5. Protocol 0/1 streams have no magic, so
/// the head must parse as opcodes cleanly (arguments well-formed, no stack underflow) up to a
/// STOP, to the end of the head or for 16 opcodes, and either start with a structure opcode (MARK, EMPTY_LIST,
/// EMPTY_DICT, EMPTY_TUPLE) or hold a GLOBAL/INST/STACK_GLOBAL with identifier-shaped module
/// and name followed by at least one more opcode. Text files fail on their first bytes: `#`,
/// `{`, `[`, `"`, letters that are no opcode, or a GLOBAL line with spaces or punctuation.
///
/// Known blind spot: a protocol 0 stream that pads its start with a string argument longer
/// than the head (e.g. `V` + 64 KiB) and imports only after it is not recognised.
pub fn looks_like_pickle(head: &[u8]) -> bool {
    let Some(&first) = head.first() else {
        return false;
    };
    if first == 0x80 && !matches!(head.get(1), Some(2..=5)) {
        // An unsupported PROTO in front of an import is a payload hiding from sniffers
        // (issue 16): accept it only when an import and another opcode follow.
        return head.get(2..).is_some_and(|rest| sniff(rest).1);
    }
    sniff(head).0
}

/// [`looks_like_pickle`] without the PROTO check: (looks like a pickle, an identifier-shaped
/// import was followed by at least one more opcode). Once an import and one well-formed opcode
/// have been seen, a later unknown opcode or malformed argument does not undo it, nor does the
/// head ending inside an opcode after an import: a broken tail after an import is how payloads
/// hide from scanners (issue 16). A stack underflow still rejects (text fails that way).
fn sniff(head: &[u8]) -> (bool, bool) {
    let Some(&first) = head.first() else {
        return (false, false);
    };
    let structural = matches!(first, 0x80 | b'(' | b']' | b'}' | b')');
    let mut sim = Sniff::default();
    let limits = Limits {
        keep_string: 256,
        ..Limits::default()
    };
    let mut r = head;
    let mut src = Source::new(&mut r, 0);
    for _ in 0..SNIFF_OPCODES {
        let Ok(Some(byte)) = src.next_byte() else {
            break;
        };
        let Some(op) = ops::lookup(byte) else {
            return (sim.after_import, sim.after_import);
        };
        let arg = match ops::read_arg(&mut src, op, &limits) {
            Ok(arg) => arg,
            // The file ends inside an opcode right after an import: a cut-off payload.
            Err(e) if e.code == "truncated" => {
                return (structural || sim.imported, sim.imported);
            }
            Err(_) => return (sim.after_import, sim.after_import),
        };
        if !plausible_arg(op, &arg) {
            return (sim.after_import, sim.after_import);
        }
        if sim.imported {
            sim.after_import = true;
        }
        match sim.apply(op) {
            Some(true) => return (structural || sim.imported, sim.after_import),
            Some(false) => {}
            // Underflow rejects text lines that happen to parse, but not a stream that starts
            // with PROTO/MARK and has already imported (no text gets that far).
            None => return (structural && sim.imported, false),
        }
    }
    (structural || sim.after_import, sim.after_import)
}

/// Opcodes [`looks_like_pickle`] checks. Enough to reject text and raw numeric data (which fail
/// within a few bytes), few enough that raw array bytes joblib embeds mid-stream are not reached.
const SNIFF_OPCODES: usize = 16;

/// Count-only stack model for [`looks_like_pickle`].
#[derive(Default)]
struct Sniff {
    depth: usize,
    marks: Vec<usize>,
    imported: bool,
    after_import: bool,
}

impl Sniff {
    /// Apply one opcode; `None` on underflow, `Some(true)` at STOP.
    fn apply(&mut self, op: Op) -> Option<bool> {
        let (need, push) = match op {
            Op::Stop => {
                self.depth.checked_sub(1)?;
                return Some(true);
            }
            Op::Proto | Op::Frame => (0, 0),
            Op::Mark => {
                self.marks.push(self.depth);
                self.depth = 0;
                return Some(false);
            }
            Op::Pop => {
                if self.depth == 0 {
                    self.depth = self.marks.pop()?;
                } else {
                    self.depth -= 1;
                }
                return Some(false);
            }
            Op::Tuple
            | Op::List
            | Op::Dict
            | Op::FrozenSet
            | Op::Inst
            | Op::PopMark
            | Op::Obj
            | Op::Appends
            | Op::SetItems
            | Op::AddItems => {
                let items = self.depth;
                self.depth = self.marks.pop()?;
                match op {
                    Op::PopMark => {}
                    Op::Appends | Op::SetItems | Op::AddItems => {
                        self.depth.checked_sub(1)?;
                    }
                    Op::Obj => {
                        items.checked_sub(1)?;
                        self.depth += 1;
                    }
                    _ => self.depth += 1,
                }
                if op == Op::Inst {
                    self.imported = true;
                }
                return Some(false);
            }
            Op::ReadonlyBuffer | Op::Put | Op::BinPut | Op::LongBinPut | Op::Memoize => (1, 1),
            Op::Tuple1 | Op::BinPersId => (1, 1),
            Op::Dup => (1, 2),
            Op::Tuple2 | Op::Append | Op::StackGlobal | Op::Reduce | Op::Build | Op::NewObj => {
                (2, 1)
            }
            Op::Tuple3 | Op::SetItem | Op::NewObjEx => (3, 1),
            // Everything that pushes one value and pops none.
            Op::Int
            | Op::BinInt
            | Op::BinInt1
            | Op::BinInt2
            | Op::Long
            | Op::Long1
            | Op::Long4
            | Op::String
            | Op::BinString
            | Op::ShortBinString
            | Op::BinBytes
            | Op::ShortBinBytes
            | Op::BinBytes8
            | Op::ByteArray8
            | Op::NextBuffer
            | Op::None
            | Op::NewTrue
            | Op::NewFalse
            | Op::Unicode
            | Op::ShortBinUnicode
            | Op::BinUnicode
            | Op::BinUnicode8
            | Op::Float
            | Op::BinFloat
            | Op::EmptyList
            | Op::EmptyTuple
            | Op::EmptyDict
            | Op::EmptySet
            | Op::Get
            | Op::BinGet
            | Op::LongBinGet
            | Op::Ext1
            | Op::Ext2
            | Op::Ext4
            | Op::Global
            | Op::PersId => (0, 1),
        };
        if matches!(op, Op::Global | Op::StackGlobal) {
            self.imported = true;
        }
        self.depth = self.depth.checked_sub(need)? + push;
        Some(false)
    }
}

/// Are the textual arguments shaped as a pickler writes them?
fn plausible_arg(op: Op, arg: &Arg) -> bool {
    let line = |a: &Arg| match a {
        Arg::Data(p) => Some(p.head.clone()),
        _ => None,
    };
    match op {
        Op::Global | Op::Inst => match arg {
            Arg::Pair(m, n) => dotted_identifier(&m.head) && dotted_identifier(&n.head),
            _ => false,
        },
        Op::Int | Op::Get | Op::Put => line(arg).is_some_and(|l| {
            let l = l.strip_prefix(b"-").unwrap_or(&l);
            !l.is_empty() && l.iter().all(u8::is_ascii_digit)
        }),
        Op::Long => line(arg).is_some_and(|l| {
            let l = l.strip_suffix(b"L").unwrap_or(&l);
            let l = l.strip_prefix(b"-").unwrap_or(l);
            !l.is_empty() && l.iter().all(u8::is_ascii_digit)
        }),
        Op::Float => line(arg).is_some_and(|l| {
            std::str::from_utf8(&l).is_ok_and(|s| s.trim().parse::<f64>().is_ok())
        }),
        Op::String => line(arg).is_some_and(|l| {
            l.len() >= 2 && matches!(l.first(), Some(b'\'' | b'"')) && l.first() == l.last()
        }),
        Op::Proto => matches!(arg, Arg::Int(0..=5)),
        _ => true,
    }
}

/// `a.b_c.D`: ASCII identifiers joined by dots.
fn dotted_identifier(s: &[u8]) -> bool {
    !s.is_empty()
        && s.split(|&b| b == b'.').all(|part| {
            part.first()
                .is_some_and(|&c| c.is_ascii_alphabetic() || c == b'_')
                && part.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'_')
        })
}

#[cfg(test)]
mod tests;
