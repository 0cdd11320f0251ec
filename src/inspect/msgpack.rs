//! Flax / JAX msgpack checkpoints (`flax_model.msgpack`, `flax.serialization.to_bytes`, Orbax
//! and `flax.training.checkpoints` msgpack files), walked once, front to back, without
//! decoding anything into memory but names and small headers.
//!
//! Flax writes a pytree as nested msgpack maps (and arrays) whose leaves are numbers, strings and
//! msgpack extension values (`flax/serialization.py`): type 1 is an ndarray, its payload the
//! msgpack encoding of the tuple `(shape, dtype name, raw C-order bytes)`; type 3 a NumPy scalar
//! (the same payload, shape `()`); type 2 a Python complex (`(real, imag)`). Loading is
//! `msgpack.unpackb` then `np.frombuffer(...).reshape(shape)`: nothing runs, but a crafted file
//! can still lie to any loader that allocates from a declared length or shape before reading
//! (the array that claims 40 GB in 24 bytes), so, as for safetensors, every array's dtype, shape
//! and byte length must agree, and every count and length is checked against the bytes left
//! before it is trusted.
//!
//! The walker keeps its own stack of open arrays and maps (bounded by `msgpack_depth`), never
//! recurses, skips raw payloads without allocating, and keeps at most a bounded prefix of each
//! key. Arrays are listed as tensors under their key path (`params/Dense_0/kernel`). Chunked
//! arrays (`__msgpack_chunked_array__`, arrays over 1 GiB) are listed chunk by chunk.

use std::collections::BTreeMap;
use std::io::BufRead;

use serde::Serialize;

use super::problem::{Problem, ProblemKind, excerpt};

/// Bounds for the msgpack walk.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Deepest nesting of arrays and maps accepted (`msgpack_depth`).
    pub max_depth: usize,
    /// Most arrays listed by name (a fixed cap on memory); the counts stay exact past it.
    pub max_tensors: usize,
    /// Most dimensions of one array (`tensor_rank`).
    pub max_rank: u64,
    /// Longest key kept (the rest is skipped, not read into memory).
    pub max_key_len: usize,
    /// Most bytes of tensor names kept in all (a fixed internal cap on memory).
    pub max_name_bytes: usize,
}

impl From<&crate::model::limits::Limits> for Limits {
    fn from(l: &crate::model::limits::Limits) -> Self {
        Self {
            max_depth: crate::model::limits::usize_of(l.msgpack_depth),
            max_tensors: 1_000_000,
            max_rank: l.tensor_rank,
            max_key_len: 256,
            max_name_bytes: 64 << 20,
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self::from(&crate::model::limits::Limits::default())
    }
}

/// One array of the checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Tensor {
    /// Key path, `/`-separated (list items by index).
    pub name: String,
    /// NumPy dtype name as written.
    pub dtype: String,
    /// Declared shape.
    pub shape: Vec<u64>,
    /// Bytes of data stored.
    pub bytes: u64,
}

/// What a Flax msgpack file holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Facts {
    /// Arrays (ext type 1), chunks included.
    pub tensor_count: u64,
    /// NumPy scalars (ext type 3).
    pub scalar_count: u64,
    /// Python complex numbers (ext type 2).
    pub complex_count: u64,
    /// Bytes of array and scalar data.
    pub data_bytes: u64,
    /// Elements of all arrays (`None` when it overflows).
    pub parameters: Option<u64>,
    /// Arrays per dtype.
    pub dtypes: BTreeMap<String, u64>,
    /// Maps marked `__msgpack_chunked_array__` (arrays split in chunks).
    pub chunked_arrays: u64,
    /// Extension values of types Flax does not write, by type.
    pub other_extensions: BTreeMap<String, u64>,
    /// The first arrays, in file order (at most 1000).
    pub tensors: Vec<Tensor>,
    /// Whether more arrays exist than are named in `tensors` and in the SBOM list.
    pub tensors_truncated: bool,
}

/// What the walk hands back: facts, every array's name and byte length (bounded by
/// `Limits::max_tensors`), problems, and where the msgpack value ended when bytes follow it.
#[derive(Debug, Default)]
pub struct Walk {
    /// Facts.
    pub facts: Facts,
    /// Array name -> bytes, for the SBOM (bounded).
    pub tensors: BTreeMap<String, u64>,
    /// Problems found.
    pub problems: Vec<Problem>,
    /// Offset where the top-level value ended, when bytes follow it.
    pub trailing_at: Option<u64>,
}

/// Flax's extension type codes (`_MsgpackExtType`).
const EXT_NDARRAY: i8 = 1;
const EXT_COMPLEX: i8 = 2;
const EXT_SCALAR: i8 = 3;
/// The key Flax sets to `true` in a map that holds one array split in chunks.
const CHUNKED_MARK: &str = "__msgpack_chunked_array__";

/// The NumPy dtype names Flax writes (`arr.dtype.name`), with their item sizes. JAX's
/// `bfloat16` and the ml_dtypes float8/int4 names are included; anything else is a name
/// `np.dtype` would refuse or an object/structured dtype, which Flax refuses to write.
const DTYPES: &[(&str, u64)] = &[
    ("bool", 1),
    ("int8", 1),
    ("uint8", 1),
    ("int16", 2),
    ("uint16", 2),
    ("int32", 4),
    ("uint32", 4),
    ("int64", 8),
    ("uint64", 8),
    ("float16", 2),
    ("bfloat16", 2),
    ("float32", 4),
    ("float64", 8),
    ("complex64", 8),
    ("complex128", 16),
    ("float8_e4m3fn", 1),
    ("float8_e4m3b11fnuz", 1),
    ("float8_e4m3fnuz", 1),
    ("float8_e5m2", 1),
    ("float8_e5m2fnuz", 1),
    ("int4", 1),
    ("uint4", 1),
];

/// The item size of a dtype name Flax writes.
pub fn itemsize(dtype: &str) -> Option<u64> {
    DTYPES.iter().find(|(n, _)| *n == dtype).map(|(_, s)| *s)
}

/// Why the walk stopped early.
#[derive(Debug)]
struct Stop(Problem);

/// Front-to-back reader over the caller's stream, with nested end bounds (extension payloads).
struct Stream<'a> {
    inner: &'a mut dyn BufRead,
    pos: u64,
    size: u64,
    ends: Vec<u64>,
}

impl Stream<'_> {
    fn end(&self) -> u64 {
        self.ends.last().copied().unwrap_or(self.size)
    }

    fn left(&self) -> u64 {
        self.end().saturating_sub(self.pos)
    }

    fn truncated(&self) -> Stop {
        let inside = if self.ends.is_empty() {
            "the file"
        } else {
            "an extension value"
        };
        Stop(
            Problem::new(
                ProblemKind::Malformed,
                "truncated",
                format!(
                    "msgpack: value runs past the end of {inside} (offset {})",
                    self.pos
                ),
                Some(self.pos),
            )
            .with("parser", "msgpack"),
        )
    }

    fn byte(&mut self) -> Result<u8, Stop> {
        if self.left() == 0 {
            return Err(self.truncated());
        }
        let buf = match self.inner.fill_buf() {
            Ok(b) => b,
            Err(e) => return Err(io_stop(self.pos, &e)),
        };
        let Some(&b) = buf.first() else {
            return Err(self.truncated());
        };
        self.inner.consume(1);
        self.pos += 1;
        Ok(b)
    }

    fn be(&mut self, n: usize) -> Result<u64, Stop> {
        let mut v = 0u64;
        for _ in 0..n {
            v = (v << 8) | u64::from(self.byte()?);
        }
        Ok(v)
    }

    /// Skips `n` bytes (checked against the bytes left first), never allocating.
    fn skip(&mut self, mut n: u64) -> Result<(), Stop> {
        if n > self.left() {
            return Err(self.truncated());
        }
        while n > 0 {
            let available = match self.inner.fill_buf() {
                Ok(b) => b.len(),
                Err(e) => return Err(io_stop(self.pos, &e)),
            };
            if available == 0 {
                return Err(self.truncated());
            }
            let step = usize::try_from(n).map_or(available, |n| n.min(available));
            self.inner.consume(step);
            self.pos += step as u64;
            n -= step as u64;
        }
        Ok(())
    }

    /// Reads `n` bytes keeping at most `keep` of them (lossy UTF-8).
    fn text(&mut self, n: u64, keep: usize) -> Result<String, Stop> {
        if n > self.left() {
            return Err(self.truncated());
        }
        let keep = usize::try_from(n).map_or(keep, |n| n.min(keep));
        let mut out = Vec::with_capacity(keep);
        while out.len() < keep {
            out.push(self.byte()?);
        }
        self.skip(n - keep as u64)?;
        Ok(String::from_utf8_lossy(&out).into_owned())
    }
}

fn io_stop(pos: u64, e: &std::io::Error) -> Stop {
    Stop(Problem::new(
        ProblemKind::Malformed,
        "io-error",
        format!("msgpack: read error at offset {pos}: {e}"),
        Some(pos),
    ))
}

/// One msgpack item, its header read (and a string or binary consumed).
#[derive(Debug, Clone, PartialEq)]
enum Item {
    Nil,
    Bool,
    Int(i128),
    Float,
    /// A string or binary value of this length, kept as text when asked for.
    Bytes {
        len: u64,
        text: Option<String>,
        bin: bool,
    },
    Array(u64),
    Map(u64),
    /// An extension value: its type and payload length (the payload not read yet).
    Ext {
        ty: i8,
        len: u64,
    },
}

/// Items [`is_flax`] reads before giving up: a Flax checkpoint reaches its first array within a
/// few names.
const PROBE_ITEMS: usize = 4096;
/// Nesting [`is_flax`] follows (Flax parameter trees are a few levels deep).
const PROBE_DEPTH: usize = 64;

/// Whether `head` (the first bytes of a file) reads as a Flax/JAX msgpack checkpoint whatever
/// its name (issue 40): a map at the top, every map key a string, and a Flax extension value
/// (an ndarray, complex or numpy scalar: types `EXT_NDARRAY` to `EXT_SCALAR`) reached
/// before `head` ends, every item before it well formed. A key of another type, another
/// extension type, a top-level value that ends first, or running out of `head` decides
/// against.
pub fn is_flax(head: &[u8]) -> bool {
    if !head
        .first()
        .is_some_and(|b| (0x80..=0x8f).contains(b) || *b == 0xde || *b == 0xdf)
    {
        return false;
    }
    let mut reader = head;
    let mut s = Stream {
        inner: &mut reader,
        pos: 0,
        size: head.len() as u64,
        ends: Vec::new(),
    };
    // Open containers: items left (a map counts its keys and values), and whether a map.
    let mut open: Vec<(u64, bool)> = Vec::new();
    for _ in 0..PROBE_ITEMS {
        let is_key = open.last_mut().is_some_and(|(left, map)| {
            let key = *map && *left % 2 == 0;
            *left -= 1;
            key
        });
        let Ok(item) = item(&mut s, 0) else {
            return false;
        };
        if is_key && !matches!(item, Item::Bytes { bin: false, .. }) {
            return false;
        }
        match item {
            Item::Ext { ty, .. } => return (EXT_NDARRAY..=EXT_SCALAR).contains(&ty),
            Item::Map(n) | Item::Array(n) if n > 0 && open.len() >= PROBE_DEPTH => return false,
            Item::Map(n) if n > 0 => open.push((n * 2, true)),
            Item::Array(n) if n > 0 => open.push((n, false)),
            _ => {}
        }
        while open.last().is_some_and(|(left, _)| *left == 0) {
            open.pop();
        }
        if open.is_empty() {
            return false;
        }
    }
    false
}

/// Reads one item's header. With `keep > 0`, a string or binary keeps its first `keep` bytes.
fn item(s: &mut Stream<'_>, keep: usize) -> Result<Item, Stop> {
    let at = s.pos;
    let m = s.byte()?;
    let bytes = |s: &mut Stream<'_>, len: u64, bin: bool| -> Result<Item, Stop> {
        let text = if keep > 0 {
            Some(s.text(len, keep)?)
        } else {
            s.skip(len)?;
            None
        };
        Ok(Item::Bytes { len, text, bin })
    };
    Ok(match m {
        0x00..=0x7f => Item::Int(i128::from(m)),
        0x80..=0x8f => Item::Map(u64::from(m & 0x0f)),
        0x90..=0x9f => Item::Array(u64::from(m & 0x0f)),
        0xa0..=0xbf => return bytes(s, u64::from(m & 0x1f), false),
        0xc0 => Item::Nil,
        0xc2 | 0xc3 => Item::Bool,
        0xc4..=0xc6 => {
            let len = s.be(1 << (m - 0xc4))?;
            return bytes(s, len, true);
        }
        0xc7..=0xc9 => {
            let len = s.be(1 << (m - 0xc7))?;
            let ty = s.byte()? as i8;
            Item::Ext { ty, len }
        }
        0xca => {
            s.skip(4)?;
            Item::Float
        }
        0xcb => {
            s.skip(8)?;
            Item::Float
        }
        0xcc..=0xcf => Item::Int(i128::from(s.be(1 << (m - 0xcc))?)),
        0xd0..=0xd3 => {
            let n = 1usize << (m - 0xd0);
            let raw = s.be(n)?;
            let shift = 64 - 8 * n as u32;
            Item::Int(i128::from(((raw << shift) as i64) >> shift))
        }
        0xd4..=0xd8 => {
            let ty = s.byte()? as i8;
            Item::Ext {
                ty,
                len: 1 << (m - 0xd4),
            }
        }
        0xd9..=0xdb => {
            let len = s.be(1 << (m - 0xd9))?;
            return bytes(s, len, false);
        }
        0xdc | 0xdd => Item::Array(s.be(if m == 0xdc { 2 } else { 4 })?),
        0xde | 0xdf => Item::Map(s.be(if m == 0xde { 2 } else { 4 })?),
        0xe0..=0xff => Item::Int(i128::from(m as i8)),
        0xc1 => {
            return Err(Stop(
                Problem::new(
                    ProblemKind::Malformed,
                    "bad-marker",
                    format!("msgpack: byte 0xc1 (never used by msgpack) at offset {at}"),
                    Some(at),
                )
                .with("parser", "msgpack"),
            ));
        }
    })
}

/// An open array or map.
struct Frame {
    /// The key path component this container sits under (empty for the root).
    at: String,
    kind: FrameKind,
    /// What a map that may be a chunked array has shown of its `shape` and `chunks` so far.
    chunk: Option<Box<Chunk>>,
}

/// A chunked array (`_chunk` in `flax/serialization.py`): the whole array's shape (a map of
/// dimensions) and its chunks (flat arrays), checked against each other when the map closes.
#[derive(Default)]
struct Chunk {
    marked: bool,
    offset: u64,
    dims: Vec<u64>,
    elements: Option<u64>,
    itemsize: Option<u64>,
}

impl Frame {
    fn chunk(&mut self, offset: u64) -> &mut Chunk {
        self.chunk.get_or_insert_with(|| {
            Box::new(Chunk {
                offset,
                elements: Some(0),
                ..Chunk::default()
            })
        })
    }
}

/// The parent of the innermost open container, when the innermost sits under `key`.
fn parent_under<'a>(stack: &'a mut [Frame], key: &str) -> Option<&'a mut Frame> {
    let n = stack.len();
    if n >= 2 && stack[n - 1].at == key {
        stack.get_mut(n - 2)
    } else {
        None
    }
}

/// Checks a closed chunked-array map: its chunks hold exactly the elements its shape declares.
fn finish_chunk(frame: Frame, stack: &[Frame], size: u64, w: &mut Walk) {
    let Some(c) = frame.chunk.filter(|c| c.marked) else {
        return;
    };
    let name = path(stack, &frame.at);
    let declared = c.dims.iter().try_fold(1u64, |a, d| a.checked_mul(*d));
    let bytes = declared.and_then(|e| e.checked_mul(c.itemsize.unwrap_or(1)));
    let Some(bytes) = bytes else {
        w.problems.push(exploit(
            "size-overflow",
            format!(
                "msgpack: the chunked array at offset {} declares shape {:?}, whose byte size overflows",
                c.offset, c.dims
            ),
            c.offset,
            &name,
        ));
        return;
    };
    if bytes > size {
        w.problems.push(exploit(
            "array-past-eof",
            format!(
                "msgpack: the chunked array at offset {} declares shape {:?} ({bytes} bytes) in a {size}-byte file",
                c.offset, c.dims
            ),
            c.offset,
            &name,
        ));
    } else if declared != c.elements {
        w.problems.push(malformed(
            "chunked-size-mismatch",
            format!(
                "msgpack: the chunked array at offset {} declares shape {:?} but its chunks hold {} elements",
                c.offset,
                c.dims,
                c.elements.map_or_else(|| "too many".to_string(), |e| e.to_string())
            ),
            c.offset,
            &name,
        ));
    }
}

enum FrameKind {
    Array {
        len: u64,
        next: u64,
    },
    Map {
        pairs: u64,
        next: u64,
        in_value: bool,
        key: String,
    },
}

/// Walks a msgpack file from offset 0 of `reader` (`size` bytes) to its end.
pub fn inspect(reader: &mut dyn BufRead, size: u64, limits: &Limits) -> Walk {
    let mut s = Stream {
        inner: reader,
        pos: 0,
        size,
        ends: Vec::new(),
    };
    let mut w = Walk::default();
    w.facts.parameters = Some(0);
    let mut names = 0usize;
    if let Err(Stop(p)) = walk(&mut s, limits, &mut w, &mut names) {
        w.problems.push(p);
        return w;
    }
    if s.pos < size {
        w.trailing_at = Some(s.pos);
        w.problems.push(
            Problem::new(
                ProblemKind::Malformed,
                "trailing-bytes",
                format!(
                    "msgpack: {} bytes follow the top-level value (ends at offset {}); msgpack.unpackb refuses extra data",
                    size - s.pos,
                    s.pos
                ),
                Some(s.pos),
            )
            .with("parser", "msgpack"),
        );
    }
    w
}

fn walk(s: &mut Stream<'_>, limits: &Limits, w: &mut Walk, names: &mut usize) -> Result<(), Stop> {
    let mut stack: Vec<Frame> = Vec::new();
    let mut root_done = false;
    loop {
        // What comes next: a map key, or a value under this key path component.
        let component = match stack.last_mut() {
            None if root_done => return Ok(()),
            None => {
                root_done = true;
                Some(String::new())
            }
            Some(Frame {
                kind: FrameKind::Array { len, next },
                ..
            }) => {
                if next == len {
                    stack.pop();
                    continue;
                }
                *next += 1;
                Some((*next - 1).to_string())
            }
            Some(Frame {
                kind:
                    FrameKind::Map {
                        pairs,
                        next,
                        in_value,
                        key,
                    },
                ..
            }) => {
                if *in_value {
                    *in_value = false;
                    *next += 1;
                    Some(std::mem::take(key))
                } else if next == pairs {
                    if let Some(done) = stack.pop() {
                        finish_chunk(done, &stack, s.size, w);
                    }
                    continue;
                } else {
                    *in_value = true;
                    None
                }
            }
        };
        if let Some(component) = component {
            let v = item(s, 0)?;
            open(s, limits, w, names, &mut stack, v, component)?;
            continue;
        }
        // A key: flax writes strings; numbers and other scalars name the entry too, and a
        // container or extension used as a key is walked like a value, named `?`.
        let k = item(s, limits.max_key_len)?;
        let name = match &k {
            Item::Bytes { text, .. } => text.clone().unwrap_or_default(),
            Item::Int(i) => i.to_string(),
            _ => "?".to_string(),
        };
        if let Some(Frame {
            kind: FrameKind::Map { key, .. },
            ..
        }) = stack.last_mut()
        {
            *key = name;
        }
        if matches!(k, Item::Array(_) | Item::Map(_) | Item::Ext { .. }) {
            open(s, limits, w, names, &mut stack, k, "?".into())?;
        }
    }
}

/// Handles a value whose header was just read: opens a container frame, or reads an extension
/// value whole.
fn open(
    s: &mut Stream<'_>,
    limits: &Limits,
    w: &mut Walk,
    names: &mut usize,
    stack: &mut Vec<Frame>,
    v: Item,
    component: String,
) -> Result<(), Stop> {
    let at = s.pos;
    let (kind, n, per, what) = match v {
        Item::Array(n) => (FrameKind::Array { len: n, next: 0 }, n, 1u64, "array"),
        Item::Map(n) => (
            FrameKind::Map {
                pairs: n,
                next: 0,
                in_value: false,
                key: String::new(),
            },
            n,
            2,
            "map",
        ),
        Item::Ext { ty, len } => {
            let name = path(stack, &component);
            let array = ext(s, limits, w, names, ty, len, &name)?;
            // A chunk of a chunked array: its elements count toward the whole.
            if let (Some((elements, item)), Some(parent)) = (array, parent_under(stack, "chunks")) {
                let c = parent.chunk(at);
                c.elements = c.elements.and_then(|e| e.checked_add(elements));
                c.itemsize = Some(item);
            }
            return Ok(());
        }
        Item::Bool if component == CHUNKED_MARK => {
            w.facts.chunked_arrays += 1;
            if let Some(top) = stack.last_mut() {
                top.chunk(at).marked = true;
            }
            return Ok(());
        }
        Item::Int(d) => {
            // A dimension of a chunked array's `shape` map.
            if let Some(parent) = parent_under(stack, "shape") {
                let c = parent.chunk(at);
                if (c.dims.len() as u64) < limits.max_rank {
                    c.dims.push(u64::try_from(d).unwrap_or(u64::MAX));
                }
            }
            return Ok(());
        }
        _ => return Ok(()),
    };
    // Every element takes at least one byte. A count the whole file could not hold is a crafted
    // allocation size (readers reserve by count before reading); one that only runs past the
    // bytes left is a truncated file.
    let needed = n.checked_mul(per);
    if needed.is_some_and(|b| b <= s.size) && needed.is_some_and(|b| b > s.left()) {
        return Err(s.truncated());
    }
    if needed.is_none_or(|b| b > s.size) {
        return Err(Stop(
            Problem::new(
                ProblemKind::Exploit,
                "count-past-eof",
                format!(
                    "msgpack: a {what} at offset {at} declares {n} entries, more than the {}-byte file could hold",
                    s.size
                ),
                Some(at),
            )
            .with("parser", "msgpack")
            .with("tensor", excerpt(&path(stack, &component), 200)),
        ));
    }
    if stack.len() >= limits.max_depth {
        return Err(Stop(
            Problem::new(
                ProblemKind::LimitExceeded,
                "too-deep",
                format!(
                    "msgpack: arrays and maps nested deeper than {} at offset {at}",
                    limits.max_depth
                ),
                Some(at),
            )
            .with("parser", "msgpack"),
        ));
    }
    stack.push(Frame {
        at: component,
        kind,
        chunk: None,
    });
    Ok(())
}

/// The key path of a value under `component` inside the open frames.
fn path(stack: &[Frame], component: &str) -> String {
    let mut out = String::new();
    for part in stack
        .iter()
        .map(|f| f.at.as_str())
        .chain(std::iter::once(component))
    {
        if part.is_empty() && out.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push('/');
        }
        out.push_str(part);
        if out.len() > 1024 {
            return excerpt(&out, 1024);
        }
    }
    out
}

fn malformed(code: &'static str, message: String, offset: u64, name: &str) -> Problem {
    Problem::new(ProblemKind::Malformed, code, message, Some(offset))
        .with("parser", "msgpack")
        .with("tensor", excerpt(name, 200))
}

fn exploit(code: &'static str, message: String, offset: u64, name: &str) -> Problem {
    Problem::new(ProblemKind::Exploit, code, message, Some(offset))
        .with("parser", "msgpack")
        .with("tensor", excerpt(name, 200))
}

/// An extension value: Flax's arrays, scalars and complex numbers are checked; other types are
/// counted and skipped.
#[allow(clippy::too_many_arguments)]
fn ext(
    s: &mut Stream<'_>,
    limits: &Limits,
    w: &mut Walk,
    names: &mut usize,
    ty: i8,
    len: u64,
    name: &str,
) -> Result<Option<(u64, u64)>, Stop> {
    let at = s.pos;
    if len > s.left() {
        return Err(s.truncated());
    }
    let end = at + len;
    let mut array = None;
    match ty {
        EXT_NDARRAY | EXT_SCALAR => {
            s.ends.push(end);
            let result = ndarray(s, limits, name, at, end);
            s.ends.pop();
            match result {
                Ok(Ok(t)) => {
                    if ty == EXT_NDARRAY {
                        let elements = t.shape.iter().try_fold(1u64, |a, d| a.checked_mul(*d));
                        array = elements.zip(itemsize(&t.dtype));
                    }
                    record(w, limits, names, t, ty == EXT_SCALAR);
                }
                Ok(Err(p)) => w.problems.push(p),
                // A stop inside the payload is the payload's fault; the walk resumes after it.
                Err(Stop(p)) => w.problems.push(malformed(
                    "bad-ndarray",
                    format!(
                        "msgpack: the array at offset {at} is not a (shape, dtype, bytes) tuple: {}",
                        p.message
                    ),
                    at,
                    name,
                )),
            }
        }
        EXT_COMPLEX => {
            s.ends.push(end);
            let ok = complex(s);
            s.ends.pop();
            w.facts.complex_count += 1;
            if !matches!(ok, Ok(true)) || s.pos != end {
                w.problems.push(malformed(
                    "bad-complex",
                    format!("msgpack: the complex number at offset {at} is not a (real, imag) pair filling its {len} bytes"),
                    at,
                    name,
                ));
            }
        }
        other => {
            *w.facts
                .other_extensions
                .entry(other.to_string())
                .or_insert(0) += 1;
        }
    }
    // Whatever the payload held, the walk goes on after it.
    if s.pos < end {
        s.skip(end - s.pos)?;
    }
    Ok(array)
}

fn complex(s: &mut Stream<'_>) -> Result<bool, Stop> {
    if item(s, 0)? != Item::Array(2) {
        return Ok(false);
    }
    for _ in 0..2 {
        if !matches!(item(s, 0)?, Item::Float | Item::Int(_)) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Reads an ndarray payload `(shape, dtype, bytes)` between `at` and `end`, checks that the
/// three agree and that they fill the payload exactly.
fn ndarray(
    s: &mut Stream<'_>,
    limits: &Limits,
    name: &str,
    at: u64,
    end: u64,
) -> Result<Result<Tensor, Problem>, Stop> {
    let bad = |what: String| {
        Ok(Err(malformed(
            "bad-ndarray",
            format!("msgpack: the array at offset {at} {what}"),
            at,
            name,
        )))
    };
    if item(s, 0)? != Item::Array(3) {
        return bad("is not a 3-item (shape, dtype, bytes) tuple".into());
    }
    let Item::Array(rank) = item(s, 0)? else {
        return bad("has no shape list".into());
    };
    if rank > limits.max_rank {
        return Ok(Err(Problem::new(
            ProblemKind::LimitExceeded,
            "rank-too-large",
            format!(
                "msgpack: the array at offset {at} has {rank} dimensions, over the tensor_rank limit ({})",
                limits.max_rank
            ),
            Some(at),
        )
        .with("tensor", excerpt(name, 200))));
    }
    if rank > s.left() {
        return Err(s.truncated());
    }
    let mut shape = Vec::new();
    let mut elements: Option<u64> = Some(1);
    for _ in 0..rank {
        let Item::Int(d) = item(s, 0)? else {
            return bad("has a dimension that is not an integer".into());
        };
        if d < 0 {
            return Ok(Err(exploit(
                "negative-dimension",
                format!("msgpack: the array at offset {at} declares a negative dimension ({d})"),
                at,
                name,
            )));
        }
        let d = u64::try_from(d).unwrap_or(u64::MAX);
        elements = elements.and_then(|e| e.checked_mul(d));
        shape.push(d);
    }
    let Item::Bytes {
        text: Some(dtype), ..
    } = item(s, 64)?
    else {
        return bad("has no dtype name".into());
    };
    let data = item(s, 0)?;
    let Item::Bytes { len: data_len, .. } = data else {
        return bad("has no data bytes".into());
    };
    if s.pos != end {
        return Ok(Err(malformed(
            "ext-length-mismatch",
            format!(
                "msgpack: the array at offset {at} ends at {} but its extension header says {end}",
                s.pos
            ),
            at,
            name,
        )));
    }
    let Some(item_size) = itemsize(&dtype) else {
        return Ok(Err(malformed(
            "unknown-dtype",
            format!(
                "msgpack: the array at offset {at} has dtype '{}', not one Flax writes",
                excerpt(&dtype, 64)
            ),
            at,
            name,
        )
        .with("dtype", excerpt(&dtype, 64))));
    };
    let declared = elements.and_then(|e| e.checked_mul(item_size));
    let Some(declared) = declared else {
        return Ok(Err(exploit(
            "size-overflow",
            format!(
                "msgpack: the array at offset {at} declares shape {shape:?} of {dtype}, whose byte size overflows"
            ),
            at,
            name,
        )));
    };
    if declared > s.size {
        return Ok(Err(exploit(
            "array-past-eof",
            format!(
                "msgpack: the array at offset {at} declares shape {shape:?} of {dtype} ({declared} bytes) in a {}-byte file, with {data_len} bytes of data",
                s.size
            ),
            at,
            name,
        )
        .with("declared_bytes", declared.to_string())
        .with("data_bytes", data_len.to_string())));
    }
    if declared != data_len {
        return Ok(Err(malformed(
            "array-size-mismatch",
            format!(
                "msgpack: the array at offset {at} declares shape {shape:?} of {dtype} ({declared} bytes) but holds {data_len} bytes"
            ),
            at,
            name,
        )
        .with("declared_bytes", declared.to_string())
        .with("data_bytes", data_len.to_string())));
    }
    Ok(Ok(Tensor {
        name: name.to_string(),
        dtype,
        shape,
        bytes: data_len,
    }))
}

fn record(w: &mut Walk, limits: &Limits, names: &mut usize, t: Tensor, scalar: bool) {
    let f = &mut w.facts;
    f.data_bytes = f.data_bytes.saturating_add(t.bytes);
    if scalar {
        f.scalar_count += 1;
        return;
    }
    f.tensor_count += 1;
    *f.dtypes.entry(t.dtype.clone()).or_insert(0) += 1;
    let elements = t.shape.iter().try_fold(1u64, |a, d| a.checked_mul(*d));
    f.parameters = f
        .parameters
        .and_then(|p| elements.and_then(|e| p.checked_add(e)));
    if w.tensors.len() < limits.max_tensors && *names + t.name.len() <= limits.max_name_bytes {
        *names += t.name.len();
        w.tensors.insert(t.name.clone(), t.bytes);
    } else {
        f.tensors_truncated = true;
    }
    if f.tensors.len() < 1000 {
        f.tensors.push(t);
    } else {
        f.tensors_truncated = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::inspect::proto_fixtures as build;

    fn run(bytes: &[u8]) -> Walk {
        let mut r: &[u8] = bytes;
        inspect(&mut r, bytes.len() as u64, &Limits::default())
    }

    fn codes(w: &Walk) -> Vec<&'static str> {
        w.problems.iter().map(|p| p.code).collect()
    }

    #[test]
    fn a_flax_checkpoint_is_recognised_by_content() {
        let params = build::flax_params();
        assert!(is_flax(&params));
        assert!(!is_flax(&params[..3]));
        let one = build::ndarray_raw(&[2], "float32", &[0u8; 8]);
        assert!(is_flax(&build::flax_file(&[("w", one)])));
        assert!(is_flax(&[0x81, 0xa1, b'a', 0xd4, 0x01, 0x00]));
        // {"a": 1}: the map ends with no array; {1: array}: a key that is not a string.
        assert!(!is_flax(&[0x81, 0xa1, b'a', 0x01]));
        assert!(!is_flax(&[0x81, 0x01, 0xd4, 0x01, 0x00]));
        // Another extension type; not a map at the top.
        assert!(!is_flax(&[0x81, 0xa1, b'a', 0xd4, 0x05, 0x00]));
        assert!(!is_flax(&[0x91, 0xd4, 0x01, 0x00]));
        // An array nested past the probe's depth.
        let mut deep = vec![0x81, 0xa1, b'a'];
        deep.extend([0x91; 100]);
        deep.extend([0xd4, 0x01, 0x00]);
        assert!(!is_flax(&deep));
    }

    #[test]
    fn reads_a_flax_checkpoint_with_arrays_scalars_and_complex() {
        let bytes = build::flax_params();
        let w = run(&bytes);
        assert!(w.problems.is_empty(), "{:?}", w.problems);
        assert_eq!(w.facts.tensor_count, 3);
        assert_eq!(w.facts.scalar_count, 1);
        assert_eq!(w.facts.complex_count, 1);
        assert_eq!(w.tensors["params/Dense_0/kernel"], 4 * 2 * 4);
        assert_eq!(w.tensors["params/Dense_0/bias"], 2 * 4);
        assert_eq!(w.tensors["params/embed/0"], 3 * 2);
        assert_eq!(w.facts.dtypes["float32"], 2);
        assert_eq!(w.facts.dtypes["bfloat16"], 1);
        assert_eq!(w.facts.parameters, Some(8 + 2 + 3));
        assert_eq!(w.facts.tensors[0].shape, vec![4, 2]);
    }

    #[test]
    fn rejects_an_array_that_claims_more_than_the_file() {
        // Issue 40: 40 GB declared in 24 bytes of data.
        let bytes = build::flax_file(&[(
            "w",
            build::ndarray_raw(&[100_000, 100_000], "float32", &[0u8; 24]),
        )]);
        let w = run(&bytes);
        assert_eq!(codes(&w), ["array-past-eof"]);
        assert_eq!(w.problems[0].kind, ProblemKind::Exploit);
        assert_eq!(w.problems[0].detail("tensor"), Some("w"));
    }

    #[test]
    fn rejects_shape_and_length_that_disagree() {
        let bytes = build::flax_file(&[("w", build::ndarray_raw(&[3], "float32", &[0u8; 8]))]);
        assert_eq!(codes(&run(&bytes)), ["array-size-mismatch"]);
    }

    #[test]
    fn rejects_unknown_dtype_and_overflow_and_negative_dims() {
        let bytes = build::flax_file(&[("w", build::ndarray_raw(&[1], "object", &[0u8; 8]))]);
        assert_eq!(codes(&run(&bytes)), ["unknown-dtype"]);
        let bytes = build::flax_file(&[("w", build::ndarray_raw(&[u64::MAX, 4], "float32", &[]))]);
        assert_eq!(codes(&run(&bytes)), ["size-overflow"]);
        let bytes = build::flax_file(&[("w", build::ndarray_neg_dim())]);
        assert_eq!(codes(&run(&bytes)), ["negative-dimension"]);
    }

    #[test]
    fn rejects_ext_payload_that_does_not_fill_its_length() {
        let mut payload = build::ndarray_payload(&[1], "float32", &[0u8; 4]);
        payload.push(0xc0);
        let bytes = build::flax_file(&[("w", build::ext(1, &payload))]);
        assert_eq!(codes(&run(&bytes)), ["ext-length-mismatch"]);
        // A payload that is not a tuple at all.
        let bytes = build::flax_file(&[("w", build::ext(1, &[0xc0]))]);
        assert_eq!(codes(&run(&bytes)), ["bad-ndarray"]);
    }

    #[test]
    fn rejects_counts_past_the_end_and_truncation_and_trailing_bytes() {
        // A map32 declaring 2^32-1 pairs in a few bytes.
        let w = run(&[0xdf, 0xff, 0xff, 0xff, 0xff, 0xa1, b'a', 0xc0]);
        assert_eq!(codes(&w), ["count-past-eof"]);
        assert_eq!(w.problems[0].kind, ProblemKind::Exploit);
        let full = build::flax_params();
        // Cut anywhere, the file is reported (a count that no longer fits even the cut file is a
        // declared size past the file, FMT009; anything else is truncation, FMT007).
        for cut in 1..full.len() {
            let w = run(&full[..cut]);
            assert!(
                w.problems
                    .iter()
                    .any(|p| matches!(p.kind, ProblemKind::Malformed | ProblemKind::Exploit)),
                "{cut}: {:?}",
                w.problems
            );
        }
        // Cut inside an array's data, it is truncation.
        let w = run(&full[..full.len() - 40]);
        assert!(
            codes(&w).contains(&"truncated") || codes(&w).contains(&"bad-ndarray"),
            "{:?}",
            w.problems
        );
        let mut extra = full.clone();
        extra.extend_from_slice(b"\x80\x04N.");
        let w = run(&extra);
        assert_eq!(codes(&w), ["trailing-bytes"]);
        assert_eq!(w.trailing_at, Some(full.len() as u64));
        assert_eq!(codes(&run(&[0x81, 0xa1, b'a', 0xc1])), ["bad-marker"]);
    }

    #[test]
    fn depth_limit_is_a_limit_not_a_crash() {
        // 100,000 nested single-entry maps: the walker's own stack stops at the limit.
        let mut bytes = Vec::new();
        for _ in 0..100_000 {
            bytes.extend_from_slice(&[0x81, 0xa1, b'k']);
        }
        bytes.push(0xc0);
        let w = run(&bytes);
        assert_eq!(codes(&w), ["too-deep"]);
        assert_eq!(w.problems[0].kind, ProblemKind::LimitExceeded);
    }

    #[test]
    fn chunked_arrays_are_counted_and_their_chunks_listed() {
        let bytes = build::flax_chunked();
        let w = run(&bytes);
        assert!(w.problems.is_empty(), "{:?}", w.problems);
        assert_eq!(w.facts.chunked_arrays, 1);
        assert!(w.tensors.contains_key("big/chunks/0"));
        assert!(w.tensors.contains_key("big/chunks/1"));
        // A chunked array whose shape claims more than its chunks hold, or than the file.
        let lie = build::flax_file(&[(
            "big",
            build::chunked(
                &[5],
                &[
                    build::ndarray(&[2], "float32", 4),
                    build::ndarray(&[2], "float32", 4),
                ],
            ),
        )]);
        assert_eq!(codes(&run(&lie)), ["chunked-size-mismatch"]);
        let huge = build::flax_file(&[(
            "big",
            build::chunked(&[1 << 20, 1 << 20], &[build::ndarray(&[2], "float32", 4)]),
        )]);
        let w = run(&huge);
        assert_eq!(codes(&w), ["array-past-eof"]);
        assert_eq!(w.problems[0].detail("tensor"), Some("big"));
    }

    proptest::proptest! {
        #[test]
        fn never_panics_on_random_bytes(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..512)) {
            let _ = run(&bytes);
        }

        #[test]
        fn never_panics_on_mutated_checkpoints(pos in 0usize..400, byte in proptest::prelude::any::<u8>()) {
            let mut bytes = build::flax_params();
            let len = bytes.len();
            bytes[pos % len] = byte;
            let _ = run(&bytes);
        }
    }
}
