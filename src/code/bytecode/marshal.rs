//! Python's `marshal` format and `.pyc` files, walked without executing anything.
//!
//! A `.pyc` is a 16-byte header (PEP 552: magic, flags, then a source timestamp and size or a
//! source hash) followed by one marshalled code object. Python imports a `.pyc` with no `.py`
//! beside it, so bytecode shipped with a model is code a loader runs; `marshal.loads` of a blob
//! in source code is the same format. This module reads both into plain data: every code object
//! with its names (`co_name`, `co_qualname`), the names it uses (`co_names`), its string
//! constants, its first line and its line table, and its raw instructions, so the caller can
//! resolve what the bytecode calls (see [`opcodes`]).
//!
//! # API
//!
//! - [`parse_pyc`]: header + module code object of a `.pyc` (the version comes from the magic).
//! - [`loads`]: one marshalled object for a known [`Layout`] (the code object layout changed in
//!   3.8 and 3.11); [`loads_any`]: for a blob of unknown origin (`marshal.loads(b"...")` in
//!   source code), the newest layout that reads the whole blob cleanly.
//! - [`CodeObject::line_of`]: the source line of an instruction offset from the line table
//!   (`co_lnotab` before 3.10, the 3.10 `co_linetable`, the 3.11+ location table).
//!
//! # Bounds
//!
//! Every count and length is checked against the bytes left before anything is allocated (an
//! element takes at least one byte), nesting depth and the number of objects are capped by
//! [`Limits`] (`marshal_depth`, `marshal_objects`), and back-references (`TYPE_REF`, objects
//! flagged `FLAG_REF`) are indices into a table of objects already read: a reference never copies
//! an object, so a blob of references cannot expand into exponential memory, and a reference to
//! an index not yet assigned is malformed, as CPython says ("bad marshal data (invalid
//! reference)"). The walk keeps the containers it is inside on a heap stack, not the thread's,
//! so no nesting reaches the stack whatever `marshal_depth` allows. Strings are [`Text`]s shared
//! by every reference, and the fields copied into code objects are bounded by a multiple of the
//! data's length (`shared-code-fields`), so reading, and everything that reads the code objects
//! afterwards, costs time proportional to the file's size.

use std::sync::Arc;

use crate::model::problem::Problem;

/// Bounds for one walk, from the policy's limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Nesting depth of containers and code objects (CPython's own cap is 2000).
    pub max_depth: usize,
    /// Objects read in one walk (every tuple element, string and code object counts).
    pub max_objects: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self::from(&crate::model::limits::Limits::default())
    }
}

impl From<&crate::model::limits::Limits> for Limits {
    fn from(l: &crate::model::limits::Limits) -> Self {
        Limits {
            max_depth: crate::model::limits::usize_of(l.marshal_depth),
            max_objects: crate::model::limits::usize_of(l.marshal_objects),
        }
    }
}

pub use opcodes::Minor;

pub use crate::model::format::{
    PYC_MAGIC_RANGES as MAGIC_RANGES, is_pyc, pyc_version as version_of_magic,
};

/// How the code object of a version is laid out in marshal data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Layout {
    /// 3.6 and 3.7: no `co_posonlyargcount`; `co_lnotab`.
    Py36,
    /// 3.8 to 3.10: `co_posonlyargcount`; `co_lnotab` (3.10: `co_linetable`).
    Py38,
    /// 3.11 and later: `co_qualname`, locals-plus names and kinds, location and exception tables.
    Py311,
}

impl Layout {
    /// The layout of minor version `minor`.
    pub fn of(minor: Minor) -> Layout {
        match minor {
            0..=7 => Layout::Py36,
            8..=10 => Layout::Py38,
            _ => Layout::Py311,
        }
    }
}

/// Which line table format a code object carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineTable {
    /// `co_lnotab` (before 3.10): (byte delta, line delta) pairs.
    Lnotab,
    /// 3.10 `co_linetable`: (byte delta, signed line delta or -128 for none) pairs.
    Linetable310,
    /// 3.11+ location table (PEP 657).
    Locations,
}

/// How a `.pyc` ties itself to its source (PEP 552).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PycKind {
    /// A timestamp pyc: the source's modification time and size (modulo 2**32).
    Timestamp {
        /// Source mtime, seconds.
        mtime: u32,
        /// Source size in bytes, modulo 2**32.
        source_size: u32,
    },
    /// A hash-based pyc: SipHash-1-3 of the source (see [`source_hash`]).
    Hash {
        /// Whether the importer checks the hash against the source (`check_source`).
        checked: bool,
        /// The source hash, as stored.
        hash: [u8; 8],
    },
}

/// The 16-byte header of a 3.7+ `.pyc` (12 bytes for 3.6: magic, mtime, size).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PycHeader {
    /// The magic number.
    pub magic: u16,
    /// The minor version the magic belongs to.
    pub minor: Minor,
    /// The raw flags word (0 before 3.7).
    pub flags: u32,
    /// Timestamp or hash.
    pub kind: PycKind,
    /// Header length in bytes (where the marshal data starts).
    pub len: usize,
}

/// A `.pyc`: its header and the module's code objects.
#[derive(Debug, Clone, PartialEq)]
pub struct Pyc {
    /// The header.
    pub header: PycHeader,
    /// The marshalled module.
    pub module: Module,
}

/// Every code object of one marshalled object, in the order they were read (the outermost
/// first: for a module, index 0 is `<module>`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Module {
    /// The code objects.
    pub code: Vec<CodeObject>,
    /// Objects read.
    pub objects: usize,
}

/// One code object.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CodeObject {
    /// The code object this one is a constant of (`None` for the outermost).
    pub parent: Option<usize>,
    /// `co_name` (`<module>`, a function or class name, `<lambda>`, ...).
    pub name: Text,
    /// `co_qualname` (3.11+; before that, `co_name`).
    pub qualname: Text,
    /// `co_filename` as compiled.
    pub filename: Text,
    /// `co_firstlineno`.
    pub first_line: u32,
    /// `co_names`: globals, attributes and imported names the instructions refer to by index.
    pub names: Vec<Text>,
    /// Local variable names (`co_varnames`, or the 3.11+ locals-plus names).
    pub varnames: Vec<Text>,
    /// The string and bytes constants among `co_consts` (bytes decoded lossily), in order.
    pub const_strings: Vec<Text>,
    /// `co_code`: the instructions (two bytes each since 3.6).
    pub code: Vec<u8>,
    /// The line table's raw bytes.
    pub line_table: Vec<u8>,
    /// Which format [`CodeObject::line_table`] is in.
    pub line_format: Option<LineTable>,
}

/// A string read from marshal data. Clones share one allocation: an interned name that a
/// thousand code objects refer to (`self`, a module name, a merged constant) is one string, so
/// what the walker hands out grows with the data, never with the number of references to it.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Text(Arc<str>);

impl Text {
    /// The string.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `self` and `other` are the same object of the data (one read, many references):
    /// work done once per string can be keyed by this, not by the (possibly long) content.
    pub fn same_object(&self, other: &Text) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// An identity for [`Text::same_object`] usable as a map key while the text is alive.
    pub fn object_id(&self) -> usize {
        Arc::as_ptr(&self.0).cast::<u8>() as usize
    }
}

impl std::ops::Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&*self.0, f)
    }
}

impl std::fmt::Display for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Self {
        Text(Arc::from(s))
    }
}

impl From<String> for Text {
    fn from(s: String) -> Self {
        Text(Arc::from(s))
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        *self.0 == *other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<String> for Text {
    fn eq(&self, other: &String) -> bool {
        *self.0 == **other
    }
}

/// A decoded marshal object. Containers hold indices into the walk's object table, so shared
/// objects (references) are never copied.
#[derive(Debug, Clone, PartialEq)]
enum Obj {
    /// `None`, booleans, ellipsis, numbers and other values this module does not need.
    Other,
    /// A `str` (ASCII, interned or UTF-8).
    Str(Text),
    /// A `bytes` object, and its lossy text once something asked for it (decoded once, however
    /// many code objects refer to it).
    Bytes(Arc<[u8]>, std::cell::OnceCell<Text>),
    /// A tuple, list, set or frozenset: its elements.
    Seq(Vec<usize>),
    /// A code object: its index in [`Module::code`].
    Code(usize),
    /// A reference slot reserved but not yet filled (a container being read).
    Pending,
}

const FLAG_REF: u8 = 0x80;

/// What a walk may copy out of the data into its code objects, as a multiple of the data's
/// length (plus [`EXPANSION_SLACK`]): elements of `co_names`, `co_varnames` and `co_consts`,
/// and bytes of `co_code` and line tables. CPython writes each code object's fields as objects
/// of their own, so a compiled file copies each at most once (at most its own length); only a
/// hand-made stream makes code objects share their fields through back-references, and a
/// million code objects sharing one megabyte of instructions would otherwise be a terabyte of
/// work for everything that reads code objects.
const EXPANSION: usize = 4;
const EXPANSION_SLACK: usize = 64 * 1024;

/// Reads a `.pyc`: its header, then the module code object with the layout of the header's
/// version. Trailing bytes after the code object are malformed (the importer ignores them, so
/// they can only hide something).
pub fn parse_pyc(data: &[u8], limits: &Limits) -> Result<Pyc, Problem> {
    let header = parse_header(data)?;
    let body = data.get(header.len..).unwrap_or_default();
    let module = walk(body, header.minor, limits, header.len as u64)?;
    if module.code.is_empty() {
        return Err(Problem::malformed(
            "pyc-not-code",
            "the .pyc does not hold a code object",
        ));
    }
    Ok(Pyc { header, module })
}

/// Reads the header of a `.pyc`.
pub fn parse_header(data: &[u8]) -> Result<PycHeader, Problem> {
    let word = |at: usize| -> Result<u32, Problem> {
        data.get(at..at + 4)
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .map(u32::from_le_bytes)
            .ok_or_else(|| {
                Problem::new(
                    crate::model::problem::ProblemKind::Malformed,
                    "truncated",
                    format!(
                        "the .pyc header ends at byte {} (needs {})",
                        data.len(),
                        at + 4
                    ),
                    Some(data.len() as u64),
                )
            })
    };
    let first = word(0)?;
    let magic = (first & 0xffff) as u16;
    if first >> 16 != 0x0a0d {
        return Err(Problem::malformed(
            "bad-magic",
            "not a .pyc: the magic number is not followed by \\r\\n",
        ));
    }
    let minor = version_of_magic(magic).ok_or_else(|| {
        Problem::malformed(
            "unknown-magic",
            format!("magic number {magic} is not a known CPython 3.6-3.14 .pyc magic"),
        )
        .with("magic", magic.to_string())
    })?;
    if minor < 7 {
        return Ok(PycHeader {
            magic,
            minor,
            flags: 0,
            kind: PycKind::Timestamp {
                mtime: word(4)?,
                source_size: word(8)?,
            },
            len: 12,
        });
    }
    let flags = word(4)?;
    let kind = match flags {
        0 => PycKind::Timestamp {
            mtime: word(8)?,
            source_size: word(12)?,
        },
        1 | 3 => {
            let mut hash = [0u8; 8];
            hash[..4].copy_from_slice(&word(8)?.to_le_bytes());
            hash[4..].copy_from_slice(&word(12)?.to_le_bytes());
            PycKind::Hash {
                checked: flags == 3,
                hash,
            }
        }
        // importlib refuses other flag values ("invalid flags"): the file cannot be imported as
        // it is, and a scanner that guessed would be reading something else than Python does.
        other => {
            return Err(Problem::malformed(
                "bad-flags",
                format!("pyc flags {other:#x} are not 0 (timestamp), 1 or 3 (hash)"),
            )
            .with("flags", other.to_string()));
        }
    };
    Ok(PycHeader {
        magic,
        minor,
        flags,
        kind,
        len: 16,
    })
}

/// The hash a hash-based `.pyc` records for `source` when compiled by CPython 3.`minor`:
/// `importlib.util.source_hash`, i.e. `_imp.source_hash(_RAW_MAGIC_NUMBER, source)`, a keyed
/// SipHash of the source bytes with the magic word (magic | `\r\n` << 16) as the first key
/// half and 0 as the second, stored little-endian. CPython's `_Py_KeyedHash` is SipHash-1-3
/// since 3.11 and SipHash-2-4 before (`Python/pyhash.c`).
pub fn source_hash(magic: u16, minor: Minor, source: &[u8]) -> [u8; 8] {
    use std::hash::Hasher;
    let key = u64::from(magic) | (0x0a0d_u64 << 16);
    let h = if minor >= 11 {
        let mut s = siphasher::sip::SipHasher13::new_with_keys(key, 0);
        s.write(source);
        s.finish()
    } else {
        let mut s = siphasher::sip::SipHasher24::new_with_keys(key, 0);
        s.write(source);
        s.finish()
    };
    h.to_le_bytes()
}

/// Reads one marshalled object written by CPython 3.`minor`, which must take all of `data`.
/// `base` is added to offsets in problems (the header length of a `.pyc`).
pub fn loads(data: &[u8], minor: Minor, limits: &Limits) -> Result<Module, Problem> {
    walk(data, minor, limits, 0)
}

/// Reads a marshalled blob whose Python version is unknown (`marshal.loads(b"...")` in source
/// code): tries the 3.11+, 3.8–3.10 and 3.6–3.7 code layouts, newest first, and returns the
/// first that reads the whole blob, with the minor version it assumed (11, 10 or 7). A blob
/// without code objects reads the same under every layout. The error is the newest layout's.
pub fn loads_any(data: &[u8], limits: &Limits) -> Result<(Minor, Module), Problem> {
    let mut first_err = None;
    for minor in [11, 10, 7] {
        match walk(data, minor, limits, 0) {
            Ok(m) => return Ok((minor, m)),
            Err(e) if e.kind == crate::model::problem::ProblemKind::LimitExceeded => return Err(e),
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    Err(first_err.unwrap_or_else(|| Problem::malformed("malformed", "unreadable marshal data")))
}

fn walk(data: &[u8], minor: Minor, limits: &Limits, base: u64) -> Result<Module, Problem> {
    let mut w = Walker {
        data,
        pos: 0,
        minor,
        limits: *limits,
        base,
        objects: Vec::new(),
        refs: Vec::new(),
        open_code: Vec::new(),
        copied: 0,
        module: Module::default(),
    };
    w.run()?;
    if w.pos != data.len() {
        return Err(w.malformed(
            "trailing-data",
            format!(
                "{} bytes follow the marshalled object",
                data.len().saturating_sub(w.pos)
            ),
        ));
    }
    w.module.objects = w.objects.len();
    Ok(w.module)
}

struct Walker<'a> {
    data: &'a [u8],
    pos: usize,
    minor: Minor,
    limits: Limits,
    base: u64,
    objects: Vec<Obj>,
    /// Reference table: index -> object index.
    refs: Vec<usize>,
    /// Code objects whose fields are being read, innermost last (the parent of the next one).
    open_code: Vec<usize>,
    /// Elements and bytes copied into code objects so far (see [`EXPANSION`]).
    copied: usize,
    module: Module,
}

/// A container whose elements are being read: the walk keeps these on a stack of its own, so
/// nesting costs heap (bounded by `marshal_depth`), never the thread's stack.
struct Open {
    /// Its slot in the object table.
    id: usize,
    kind: OpenKind,
    /// The elements read so far (object ids).
    items: Vec<usize>,
}

enum OpenKind {
    /// A tuple, list or set of this many elements.
    Seq(usize),
    /// A dict: key and value pairs until a `0` byte.
    Dict,
    /// A 3.14 slice: start, stop, step.
    Slice,
    /// A code object: its index in [`Module::code`] and `co_firstlineno`, read between its
    /// eighth and ninth object fields.
    Code {
        index: usize,
        first_line: Option<i32>,
    },
}

/// What reading the head of one object gave.
enum Begun {
    /// A complete object (a scalar, or a reference to one read before).
    Done(usize),
    /// A container whose elements follow.
    Open(Open),
}

impl Walker<'_> {
    fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    fn malformed(&self, code: &'static str, message: impl Into<String>) -> Problem {
        Problem::new(
            crate::model::problem::ProblemKind::Malformed,
            code,
            message,
            Some(self.offset()),
        )
    }

    fn truncated(&self, need: usize) -> Problem {
        self.malformed(
            "truncated",
            format!(
                "marshal data ends after {} bytes; {need} more needed at offset {}",
                self.data.len(),
                self.offset()
            ),
        )
    }

    fn take(&mut self, n: usize) -> Result<&[u8], Problem> {
        let end = self.pos.checked_add(n).ok_or_else(|| self.truncated(n))?;
        let Some(bytes) = self.data.get(self.pos..end) else {
            return Err(self.truncated(n));
        };
        self.pos = end;
        Ok(bytes)
    }

    fn byte(&mut self) -> Result<u8, Problem> {
        Ok(*self.take(1)?.first().unwrap_or(&0))
    }

    fn i32(&mut self) -> Result<i32, Problem> {
        let b = self.take(4)?;
        let a = <[u8; 4]>::try_from(b).unwrap_or_default();
        Ok(i32::from_le_bytes(a))
    }

    /// A length or count: non-negative, and at most the bytes left divided by the smallest size
    /// of one element (so nothing is allocated that the data cannot fill).
    fn count(&mut self, what: &str, min_each: usize) -> Result<usize, Problem> {
        let n = self.i32()?;
        let left = self.data.len().saturating_sub(self.pos);
        match usize::try_from(n) {
            Ok(n) if n.saturating_mul(min_each) <= left => Ok(n),
            _ => Err(self.malformed(
                "bad-length",
                format!("{what} of {n} does not fit the {left} bytes left"),
            )),
        }
    }

    fn push(&mut self, obj: Obj) -> Result<usize, Problem> {
        if self.objects.len() >= self.limits.max_objects {
            return Err(Problem::new(
                crate::model::problem::ProblemKind::LimitExceeded,
                "marshal_objects",
                format!(
                    "more than {} marshal objects (marshal_objects limit)",
                    self.limits.max_objects
                ),
                Some(self.offset()),
            ));
        }
        self.objects.push(obj);
        Ok(self.objects.len() - 1)
    }

    /// Reserves a reference slot for an object flagged `FLAG_REF` (CPython reserves it before
    /// reading a container's elements, so an element may refer to its container).
    fn reserve(&mut self, flagged: bool, id: usize) {
        if flagged {
            self.refs.push(id);
        }
    }

    /// How many object fields a code object of this walk's layout has (`co_firstlineno` is
    /// read after the eighth).
    fn code_fields(&self) -> usize {
        if Layout::of(self.minor) == Layout::Py311 {
            10
        } else {
            9
        }
    }

    /// Reads one object: the root, then every element of every container, depth first, with
    /// the containers being read on a heap stack (CPython's reader recurses; this walk's depth
    /// is bounded by `marshal_depth` whatever the thread's stack).
    fn run(&mut self) -> Result<usize, Problem> {
        let mut stack: Vec<Open> = Vec::new();
        loop {
            let complete = match stack.last_mut() {
                None => false,
                Some(top) => match &mut top.kind {
                    OpenKind::Seq(n) => top.items.len() == *n,
                    OpenKind::Slice => top.items.len() == 3,
                    OpenKind::Dict => {
                        // The terminator comes where a key would.
                        let end =
                            top.items.len() % 2 == 0 && self.data.get(self.pos) == Some(&b'0');
                        if end {
                            self.pos += 1;
                        }
                        end
                    }
                    OpenKind::Code { first_line, .. } => {
                        if top.items.len() == 8 && first_line.is_none() {
                            *first_line = Some(self.i32()?);
                        }
                        top.items.len() == self.code_fields()
                    }
                },
            };
            let done = match stack.pop_if(|_| complete) {
                Some(open) => self.finish(open)?,
                None => match self.begin(stack.len())? {
                    Begun::Done(id) => id,
                    Begun::Open(open) => {
                        stack.push(open);
                        continue;
                    }
                },
            };
            match stack.last_mut() {
                Some(top) => top.items.push(done),
                None => return Ok(done),
            }
        }
    }

    /// Reads the head of one object at nesting `depth`: a whole scalar or reference, or the
    /// header of a container (whose elements [`Walker::run`] reads next).
    fn begin(&mut self, depth: usize) -> Result<Begun, Problem> {
        if depth > self.limits.max_depth {
            return Err(Problem::new(
                crate::model::problem::ProblemKind::LimitExceeded,
                "marshal_depth",
                format!(
                    "marshal objects nested deeper than {} (marshal_depth limit)",
                    self.limits.max_depth
                ),
                Some(self.offset()),
            ));
        }
        let at = self.pos;
        let code = self.byte()?;
        let flagged = code & FLAG_REF != 0;
        let ty = code & !FLAG_REF;
        // Scalars: read, then take their reference slot.
        let scalar = match ty {
            b'0' => {
                return Err(self.malformed("null-object", "NULL object where a value is expected"));
            }
            b'N' | b'F' | b'T' | b'S' | b'.' => Some(Obj::Other),
            b'i' => {
                self.take(4)?;
                Some(Obj::Other)
            }
            b'I' | b'g' => {
                self.take(8)?;
                Some(Obj::Other)
            }
            b'y' => {
                self.take(16)?;
                Some(Obj::Other)
            }
            b'f' => {
                let n = usize::from(self.byte()?);
                self.take(n)?;
                Some(Obj::Other)
            }
            b'x' => {
                for _ in 0..2 {
                    let n = usize::from(self.byte()?);
                    self.take(n)?;
                }
                Some(Obj::Other)
            }
            b'l' => {
                // A long: a signed digit count, then 15-bit digits of two bytes each.
                let n = self.i32()?;
                let digits = usize::try_from(n.unsigned_abs()).unwrap_or(usize::MAX);
                self.take(digits.saturating_mul(2))?;
                Some(Obj::Other)
            }
            b's' => {
                let n = self.count("bytes length", 1)?;
                Some(Obj::Bytes(
                    Arc::from(self.take(n)?),
                    std::cell::OnceCell::new(),
                ))
            }
            b'u' | b't' | b'a' | b'A' => {
                let n = self.count("string length", 1)?;
                let b = self.take(n)?;
                Some(Obj::Str(Text::from(String::from_utf8_lossy(b).as_ref())))
            }
            b'z' | b'Z' => {
                let n = usize::from(self.byte()?);
                let b = self.take(n)?;
                Some(Obj::Str(Text::from(String::from_utf8_lossy(b).as_ref())))
            }
            b'r' => {
                let n = self.i32()?;
                let target = usize::try_from(n)
                    .ok()
                    .and_then(|i| self.refs.get(i))
                    .copied();
                return match target {
                    Some(id) => Ok(Begun::Done(id)),
                    None => Err(self.malformed(
                        "bad-reference",
                        format!(
                            "reference {n} at offset {} names no object read before it ({} so far)",
                            self.base + at as u64,
                            self.refs.len()
                        ),
                    )),
                };
            }
            _ => None,
        };
        if let Some(obj) = scalar {
            let id = self.push(obj)?;
            self.reserve(flagged, id);
            return Ok(Begun::Done(id));
        }
        let kind = match ty {
            b'(' | b'[' | b'<' | b'>' => OpenKind::Seq(self.count("container size", 1)?),
            b')' => OpenKind::Seq(usize::from(self.byte()?)),
            b'{' => OpenKind::Dict,
            b':' => OpenKind::Slice,
            b'c' => return self.begin_code(flagged),
            other => {
                return Err(self.malformed(
                    "unknown-type",
                    format!(
                        "unknown marshal type code {other:#04x} at offset {}",
                        self.base + at as u64
                    ),
                ));
            }
        };
        let id = self.push(Obj::Pending)?;
        self.reserve(flagged, id);
        let items = match kind {
            OpenKind::Seq(n) => Vec::with_capacity(n),
            _ => Vec::new(),
        };
        Ok(Begun::Open(Open { id, kind, items }))
    }

    /// The head of a code object: its slot, its place among the code objects (the parent is
    /// the innermost code object being read) and its fixed integer fields.
    fn begin_code(&mut self, flagged: bool) -> Result<Begun, Problem> {
        let index = self.module.code.len();
        self.module.code.push(CodeObject {
            parent: self.open_code.last().copied(),
            ..CodeObject::default()
        });
        let id = self.push(Obj::Code(index))?;
        self.reserve(flagged, id);
        // Fixed integer fields: argcount, [posonlyargcount], kwonlyargcount, [nlocals],
        // stacksize, flags.
        let ints = match Layout::of(self.minor) {
            Layout::Py36 | Layout::Py311 => 5,
            Layout::Py38 => 6,
        };
        for _ in 0..ints {
            self.i32()?;
        }
        self.open_code.push(index);
        Ok(Begun::Open(Open {
            id,
            kind: OpenKind::Code {
                index,
                first_line: None,
            },
            items: Vec::with_capacity(10),
        }))
    }

    /// Stores a container whose elements are all read; returns its object id.
    fn finish(&mut self, open: Open) -> Result<usize, Problem> {
        match open.kind {
            OpenKind::Code { index, first_line } => {
                self.open_code.pop();
                self.finish_code(index, first_line.unwrap_or(0), &open.items)?;
            }
            _ => self.objects[open.id] = Obj::Seq(open.items),
        }
        Ok(open.id)
    }

    fn text_of(&self, id: usize) -> Option<Text> {
        match self.objects.get(id)? {
            Obj::Str(s) => Some(s.clone()),
            Obj::Bytes(b, text) => Some(
                text.get_or_init(|| Text::from(String::from_utf8_lossy(b).as_ref()))
                    .clone(),
            ),
            _ => None,
        }
    }

    /// The bytes of a `bytes` (or `str`) object, counted against [`EXPANSION`].
    fn bytes_of(&mut self, id: usize) -> Result<Vec<u8>, Problem> {
        let bytes = match self.objects.get(id) {
            Some(Obj::Bytes(b, _)) => b.to_vec(),
            Some(Obj::Str(s)) => s.as_bytes().to_vec(),
            _ => Vec::new(),
        };
        self.copy(bytes.len())?;
        Ok(bytes)
    }

    /// The string elements of a tuple (3.11+ locals-plus names are one; anything else holds no
    /// names), every element counted against [`EXPANSION`].
    fn texts_in(&mut self, id: usize) -> Result<Vec<Text>, Problem> {
        let Some(Obj::Seq(items)) = self.objects.get(id) else {
            return Ok(Vec::new());
        };
        let n = items.len();
        let texts = items.iter().filter_map(|&i| self.text_of(i)).collect();
        self.copy(n)?;
        Ok(texts)
    }

    fn copy(&mut self, n: usize) -> Result<(), Problem> {
        self.copied = self.copied.saturating_add(n);
        let cap = self
            .data
            .len()
            .saturating_mul(EXPANSION)
            .saturating_add(EXPANSION_SLACK);
        if self.copied > cap {
            return Err(self.malformed(
                "shared-code-fields",
                format!(
                    "code objects share their fields through back-references: more than {cap} \
                     elements and bytes for {} bytes of data (CPython writes each code \
                     object's fields once)",
                    self.data.len()
                ),
            ));
        }
        Ok(())
    }

    /// Fills in code object `index` from its object fields (see [`Walker::code_fields`]).
    fn finish_code(&mut self, index: usize, first_line: i32, f: &[usize]) -> Result<(), Problem> {
        let field = |i: usize| f.get(i).copied().unwrap_or(usize::MAX);
        // 3.11+: code, consts, names, localsplusnames, localspluskinds, filename, name,
        // qualname, linetable, exceptiontable. Before: code, consts, names, varnames,
        // freevars, cellvars, filename, name, lnotab.
        let (filename, name, qualname, line_table) = if Layout::of(self.minor) == Layout::Py311 {
            (field(5), field(6), Some(field(7)), field(8))
        } else {
            (field(6), field(7), None, field(8))
        };
        let name = self.text_of(name).unwrap_or_default();
        let obj = CodeObject {
            parent: self.module.code.get(index).and_then(|c| c.parent),
            qualname: qualname
                .and_then(|q| self.text_of(q))
                .unwrap_or_else(|| name.clone()),
            name,
            filename: self.text_of(filename).unwrap_or_default(),
            first_line: u32::try_from(first_line).unwrap_or(0),
            names: self.texts_in(field(2))?,
            varnames: self.texts_in(field(3))?,
            const_strings: self.texts_in(field(1))?,
            code: self.bytes_of(field(0))?,
            line_table: self.bytes_of(line_table)?,
            line_format: Some(match self.minor {
                0..=9 => LineTable::Lnotab,
                10 => LineTable::Linetable310,
                _ => LineTable::Locations,
            }),
        };
        if let Some(slot) = self.module.code.get_mut(index) {
            *slot = obj;
        }
        Ok(())
    }
}

impl CodeObject {
    /// The source line of the instruction at byte offset `offset` in [`CodeObject::code`], from
    /// the line table; `None` when the table gives the instruction no line or is malformed.
    /// Reads the table from its start: for many offsets use [`CodeObject::lines`].
    pub fn line_of(&self, offset: usize) -> Option<u32> {
        self.lines().line_of(offset)
    }

    /// A reader of the line table for offsets in increasing order: asking for every
    /// instruction's line reads the table once, not once per instruction.
    pub fn lines(&self) -> Lines<'_> {
        Lines {
            code: self,
            ranges: LineRanges::new(self),
            current: None,
            last: 0,
        }
    }
}

/// The lines of a code object's instructions, asked for in increasing offsets (see
/// [`CodeObject::lines`]); a smaller offset than the last one reads the table again.
pub struct Lines<'a> {
    code: &'a CodeObject,
    ranges: LineRanges<'a>,
    current: Option<LineRange>,
    last: usize,
}

impl Lines<'_> {
    /// The line of the instruction at byte offset `offset` (see [`CodeObject::line_of`]).
    pub fn line_of(&mut self, offset: usize) -> Option<u32> {
        if offset < self.last {
            self.ranges = LineRanges::new(self.code);
            self.current = None;
        }
        self.last = offset;
        loop {
            match self.current {
                Some(r) if offset < r.end => {
                    return if offset >= r.start {
                        r.line.and_then(|l| u32::try_from(l).ok())
                    } else {
                        None
                    };
                }
                _ => self.current = Some(self.ranges.next()?),
            }
        }
    }
}

/// Instructions at byte offsets `start..end` have line `line` (`None`: no line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct LineRange {
    start: usize,
    end: usize,
    line: Option<i64>,
}

/// The ranges of a line table in order, each entry decoded once.
struct LineRanges<'a> {
    table: &'a [u8],
    format: Option<LineTable>,
    /// Next byte of the table.
    at: usize,
    /// Where the next range starts (a byte offset of the code).
    start: usize,
    line: i64,
    /// `co_lnotab`: the first range (before the first pair) is yet to come; after the table,
    /// the last line runs to the end of the code.
    lnotab_head: bool,
    done: bool,
}

impl<'a> LineRanges<'a> {
    fn new(code: &'a CodeObject) -> Self {
        LineRanges {
            table: &code.line_table,
            format: code.line_format,
            at: 0,
            start: 0,
            line: i64::from(code.first_line),
            lnotab_head: true,
            done: code.line_format.is_none(),
        }
    }

    /// `co_lnotab` (before 3.10): (address increment, signed line increment) pairs; the line
    /// applies from the address reached.
    fn next_lnotab(&mut self) -> Option<LineRange> {
        if self.lnotab_head {
            self.lnotab_head = false;
            let pair = self.table.get(..2).filter(|_| self.table.len() >= 2);
            let end = pair.map_or(usize::MAX, |p| usize::from(p[0]));
            return Some(LineRange {
                start: 0,
                end,
                line: Some(self.line),
            });
        }
        let pair = self.table.get(self.at..self.at + 2)?;
        self.at += 2;
        self.start += usize::from(pair[0]);
        self.line += i64::from(pair[1] as i8);
        let end = match self.table.get(self.at..self.at + 2) {
            Some(next) => self.start + usize::from(next[0]),
            None => usize::MAX,
        };
        Some(LineRange {
            start: self.start,
            end,
            line: Some(self.line),
        })
    }

    /// The 3.10 `co_linetable`: (start delta, line delta) pairs; a line delta of -128 means
    /// "no line".
    fn next_310(&mut self) -> Option<LineRange> {
        let pair = self.table.get(self.at..self.at + 2)?;
        self.at += 2;
        let start = self.start;
        self.start += usize::from(pair[0]);
        let delta = pair[1] as i8;
        if delta != -128 {
            self.line += i64::from(delta);
        }
        Some(LineRange {
            start,
            end: self.start,
            line: (delta != -128).then_some(self.line),
        })
    }

    /// A 3.11+ location table (`Objects/locations.md`): entries of a first byte `1 cccc lll`
    /// (code `c`, length `l + 1` code units of two bytes) and code-specific data. A malformed
    /// entry ends the table.
    fn next_locations(&mut self) -> Option<LineRange> {
        let t = self.table;
        let varint = |i: &mut usize| -> Option<u64> {
            let mut v = 0u64;
            let mut shift = 0u32;
            loop {
                let b = *t.get(*i)?;
                *i += 1;
                v |= u64::from(b & 0x3f) << shift;
                if b & 0x40 == 0 {
                    return Some(v);
                }
                shift += 6;
                if shift > 60 {
                    return None;
                }
            }
        };
        let svarint = |i: &mut usize| -> Option<i64> {
            let v = varint(i)?;
            let m = i64::try_from(v >> 1).ok()?;
            Some(if v & 1 == 1 { -m } else { m })
        };
        let b = *t.get(self.at)?;
        if b & 0x80 == 0 {
            return None;
        }
        let mut i = self.at + 1;
        let code = (b >> 3) & 0x0f;
        let len = usize::from(b & 0x07) + 1;
        let mut has_line = true;
        match code {
            15 => has_line = false,
            14 => {
                self.line += svarint(&mut i)?;
                varint(&mut i)?;
                varint(&mut i)?;
                varint(&mut i)?;
            }
            13 => self.line += svarint(&mut i)?,
            10..=12 => {
                self.line += i64::from(code - 10);
                i += 2;
            }
            _ => i += 1,
        }
        self.at = i;
        let start = self.start;
        self.start += len * 2;
        Some(LineRange {
            start,
            end: self.start,
            line: has_line.then_some(self.line),
        })
    }
}

impl Iterator for LineRanges<'_> {
    type Item = LineRange;

    fn next(&mut self) -> Option<LineRange> {
        if self.done {
            return None;
        }
        let r = match self.format? {
            LineTable::Lnotab => self.next_lnotab(),
            LineTable::Linetable310 => self.next_310(),
            LineTable::Locations => self.next_locations(),
        };
        self.done = r.is_none();
        r
    }
}

/// Opcode numbers per CPython version, as data: just the instructions needed to follow what
/// bytecode imports, loads and calls. Sources: CPython's `Lib/opcode.py` (3.6–3.12) and
/// `Lib/_opcode_metadata.py` (3.13, 3.14), cross-checked with the `xdis` tables.
pub mod opcodes {
    /// A CPython minor version (3.x).
    pub type Minor = u8;

    /// The opcodes one version uses for the instructions the resolver follows.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Table {
        /// `IMPORT_NAME namei`.
        pub import_name: u8,
        /// `IMPORT_FROM namei`.
        pub import_from: u8,
        /// `LOAD_ATTR namei` (3.12+: `namei >> 1`).
        pub load_attr: u8,
        /// `LOAD_METHOD namei` (3.7–3.11; merged into `LOAD_ATTR` in 3.12).
        pub load_method: Option<u8>,
        /// `LOAD_GLOBAL namei` (3.11+: `namei >> 1`).
        pub load_global: u8,
        /// `LOAD_NAME namei`.
        pub load_name: u8,
        /// `STORE_NAME namei`.
        pub store_name: u8,
        /// `STORE_GLOBAL namei`.
        pub store_global: u8,
        /// `STORE_FAST var_num`.
        pub store_fast: u8,
        /// `LOAD_FAST var_num`.
        pub load_fast: u8,
        /// Call instructions (`CALL_FUNCTION*`, `CALL_METHOD`, `CALL`, `CALL_KW`, ...).
        pub calls: &'static [u8],
        /// `EXTENDED_ARG`.
        pub extended_arg: u8,
        /// Whether `LOAD_GLOBAL`'s argument is shifted (3.11+).
        pub global_shifted: bool,
        /// Whether `LOAD_ATTR`'s argument is shifted (3.12+).
        pub attr_shifted: bool,
    }

    const PY36: Table = Table {
        import_name: 108,
        import_from: 109,
        load_attr: 106,
        load_method: None,
        load_global: 116,
        load_name: 101,
        store_name: 90,
        store_global: 97,
        store_fast: 125,
        load_fast: 124,
        // CALL_FUNCTION, CALL_FUNCTION_KW, CALL_FUNCTION_EX
        calls: &[131, 141, 142],
        extended_arg: 144,
        global_shifted: false,
        attr_shifted: false,
    };

    const PY37: Table = Table {
        load_method: Some(160),
        // + CALL_METHOD
        calls: &[131, 141, 142, 161],
        ..PY36
    };

    const PY311: Table = Table {
        // CALL, CALL_FUNCTION_EX (PRECALL precedes CALL and is not needed)
        calls: &[171, 142],
        global_shifted: true,
        ..PY37
    };

    const PY312: Table = Table {
        load_method: None,
        attr_shifted: true,
        ..PY311
    };

    const PY313: Table = Table {
        import_name: 75,
        import_from: 74,
        load_attr: 82,
        load_method: None,
        load_global: 91,
        load_name: 92,
        store_name: 114,
        store_global: 113,
        store_fast: 110,
        load_fast: 85,
        // CALL, CALL_FUNCTION_EX, CALL_KW
        calls: &[53, 54, 57],
        extended_arg: 71,
        global_shifted: true,
        attr_shifted: true,
    };

    const PY314: Table = Table {
        import_name: 73,
        import_from: 72,
        load_attr: 80,
        load_method: None,
        load_global: 92,
        load_name: 93,
        store_name: 116,
        store_global: 115,
        store_fast: 112,
        load_fast: 84,
        // CALL, CALL_FUNCTION_EX, CALL_KW
        calls: &[52, 4, 55],
        extended_arg: 69,
        global_shifted: true,
        attr_shifted: true,
    };

    /// The table of minor version `minor` (3.6–3.14).
    pub fn table(minor: Minor) -> Option<&'static Table> {
        Some(match minor {
            6 => &PY36,
            7..=10 => &PY37,
            11 => &PY311,
            12 => &PY312,
            13 => &PY313,
            14 => &PY314,
            _ => return None,
        })
    }

    /// One decoded instruction.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Instr {
        /// Byte offset of the instruction (of its first `EXTENDED_ARG` prefix, if any).
        pub offset: usize,
        /// The opcode.
        pub op: u8,
        /// The argument, with `EXTENDED_ARG` prefixes applied.
        pub arg: u32,
    }

    /// The instructions of `code` (2-byte units since 3.6), skipping 3.11+ inline `CACHE`
    /// entries (opcode 0, zeroed in marshalled code) and folding `EXTENDED_ARG` prefixes.
    pub fn instructions(code: &[u8], t: &Table) -> Vec<Instr> {
        let mut out = Vec::with_capacity(code.len() / 2);
        let mut ext: u32 = 0;
        let mut start = None;
        for (i, unit) in code.chunks_exact(2).enumerate() {
            let (op, arg) = (unit[0], u32::from(unit[1]));
            let offset = i * 2;
            if op == t.extended_arg {
                ext = (ext << 8 | arg) & 0x00ff_ffff;
                start.get_or_insert(offset);
                continue;
            }
            if op == 0 && ext == 0 && t.global_shifted {
                continue;
            }
            out.push(Instr {
                offset: start.take().unwrap_or(offset),
                op,
                arg: ext << 8 | arg,
            });
            ext = 0;
        }
        out
    }
}

#[cfg(test)]
pub(crate) mod tests;
