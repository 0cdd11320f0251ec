//! The pickle opcode table (every opcode of CPython's `pickletools.opcodes`, protocols 0-5) and a
//! bounded reader that decodes one opcode and its argument from a `BufRead`. Length fields are
//! checked against [`Limits`] before anything is read, payloads keep only a bounded prefix and
//! the rest is skipped with `consume`, so a length field claiming gigabytes costs no memory.

use std::fmt;
use std::io::{self, BufRead};

use super::analysis::{Limits, Malformed, malformed};

/// How an opcode's argument is encoded (pickletools' `ArgumentDescriptor` names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgKind {
    /// No argument.
    None,
    /// `uint1`: one unsigned byte.
    U1,
    /// `uint2`: two bytes, little-endian, unsigned.
    U2,
    /// `int4`: four bytes, little-endian, signed.
    I4,
    /// `uint4`: four bytes, little-endian, unsigned.
    U4,
    /// `uint8`: eight bytes, little-endian, unsigned.
    U8,
    /// `float8`: big-endian IEEE double.
    F8,
    /// `decimalnl_short`, `decimalnl_long`, `floatnl`, `stringnl`, `unicodestringnl`,
    /// `stringnl_noescape`: one newline-terminated line.
    Line,
    /// `stringnl_noescape_pair`: two newline-terminated lines (GLOBAL, INST).
    LinePair,
    /// `long1` / `string1` / `bytes1` / `unicodestring1`: one-byte length, then data.
    Len1,
    /// `long4` / `string4`: signed four-byte length, then data.
    LenI4,
    /// `bytes4` / `unicodestring4`: unsigned four-byte length, then data.
    LenU4,
    /// `bytes8` / `bytearray8` / `unicodestring8`: unsigned eight-byte length, then data.
    LenU8,
}

/// Declares the opcode table once: each row becomes a variant of [`Op`], its arms in
/// [`Op::code`], [`Op::name`], [`Op::arg`] and [`Op::proto`], and an entry of [`OPCODES`] (from
/// which [`lookup`]'s byte table is built), so the enum, the names and the byte map cannot drift.
macro_rules! opcodes {
    ($($variant:ident = $code:literal, $name:literal, $arg:ident, $proto:literal;)*) => {
        /// A pickle opcode (one variant per row of `pickletools.opcodes`; the doc is its name).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Op {
            $(
                #[doc = $name]
                $variant,
            )*
        }

        impl Op {
            /// The opcode byte.
            pub const fn code(self) -> u8 {
                match self {
                    $(Op::$variant => $code,)*
                }
            }

            /// pickletools' name for it.
            pub const fn name(self) -> &'static str {
                match self {
                    $(Op::$variant => $name,)*
                }
            }

            /// How its argument is encoded.
            pub const fn arg(self) -> ArgKind {
                match self {
                    $(Op::$variant => ArgKind::$arg,)*
                }
            }

            /// The protocol that introduced it.
            pub const fn proto(self) -> u8 {
                match self {
                    $(Op::$variant => $proto,)*
                }
            }
        }

        /// Every opcode of `pickletools.opcodes` (CPython 3.8-3.13 share this table), in its order.
        pub const OPCODES: [Op; [$($name),*].len()] = [$(Op::$variant),*];
    };
}

opcodes! {
    Int = b'I', "INT", Line, 0;
    BinInt = b'J', "BININT", I4, 1;
    BinInt1 = b'K', "BININT1", U1, 1;
    BinInt2 = b'M', "BININT2", U2, 1;
    Long = b'L', "LONG", Line, 0;
    Long1 = 0x8a, "LONG1", Len1, 2;
    Long4 = 0x8b, "LONG4", LenI4, 2;
    String = b'S', "STRING", Line, 0;
    BinString = b'T', "BINSTRING", LenI4, 1;
    ShortBinString = b'U', "SHORT_BINSTRING", Len1, 1;
    BinBytes = b'B', "BINBYTES", LenU4, 3;
    ShortBinBytes = b'C', "SHORT_BINBYTES", Len1, 3;
    BinBytes8 = 0x8e, "BINBYTES8", LenU8, 4;
    ByteArray8 = 0x96, "BYTEARRAY8", LenU8, 5;
    NextBuffer = 0x97, "NEXT_BUFFER", None, 5;
    ReadonlyBuffer = 0x98, "READONLY_BUFFER", None, 5;
    None = b'N', "NONE", None, 0;
    NewTrue = 0x88, "NEWTRUE", None, 2;
    NewFalse = 0x89, "NEWFALSE", None, 2;
    Unicode = b'V', "UNICODE", Line, 0;
    ShortBinUnicode = 0x8c, "SHORT_BINUNICODE", Len1, 4;
    BinUnicode = b'X', "BINUNICODE", LenU4, 1;
    BinUnicode8 = 0x8d, "BINUNICODE8", LenU8, 4;
    Float = b'F', "FLOAT", Line, 0;
    BinFloat = b'G', "BINFLOAT", F8, 1;
    EmptyList = b']', "EMPTY_LIST", None, 1;
    Append = b'a', "APPEND", None, 0;
    Appends = b'e', "APPENDS", None, 1;
    List = b'l', "LIST", None, 0;
    EmptyTuple = b')', "EMPTY_TUPLE", None, 1;
    Tuple = b't', "TUPLE", None, 0;
    Tuple1 = 0x85, "TUPLE1", None, 2;
    Tuple2 = 0x86, "TUPLE2", None, 2;
    Tuple3 = 0x87, "TUPLE3", None, 2;
    EmptyDict = b'}', "EMPTY_DICT", None, 1;
    Dict = b'd', "DICT", None, 0;
    SetItem = b's', "SETITEM", None, 0;
    SetItems = b'u', "SETITEMS", None, 1;
    EmptySet = 0x8f, "EMPTY_SET", None, 4;
    AddItems = 0x90, "ADDITEMS", None, 4;
    FrozenSet = 0x91, "FROZENSET", None, 4;
    Pop = b'0', "POP", None, 0;
    Dup = b'2', "DUP", None, 0;
    Mark = b'(', "MARK", None, 0;
    PopMark = b'1', "POP_MARK", None, 1;
    Get = b'g', "GET", Line, 0;
    BinGet = b'h', "BINGET", U1, 1;
    LongBinGet = b'j', "LONG_BINGET", U4, 1;
    Put = b'p', "PUT", Line, 0;
    BinPut = b'q', "BINPUT", U1, 1;
    LongBinPut = b'r', "LONG_BINPUT", U4, 1;
    Memoize = 0x94, "MEMOIZE", None, 4;
    Ext1 = 0x82, "EXT1", U1, 2;
    Ext2 = 0x83, "EXT2", U2, 2;
    Ext4 = 0x84, "EXT4", I4, 2;
    Global = b'c', "GLOBAL", LinePair, 0;
    StackGlobal = 0x93, "STACK_GLOBAL", None, 4;
    Reduce = b'R', "REDUCE", None, 0;
    Build = b'b', "BUILD", None, 0;
    Inst = b'i', "INST", LinePair, 0;
    Obj = b'o', "OBJ", None, 1;
    NewObj = 0x81, "NEWOBJ", None, 2;
    NewObjEx = 0x92, "NEWOBJ_EX", None, 4;
    Proto = 0x80, "PROTO", U1, 2;
    Stop = b'.', "STOP", None, 0;
    Frame = 0x95, "FRAME", U8, 4;
    PersId = b'P', "PERSID", Line, 0;
    BinPersId = b'Q', "BINPERSID", None, 1;
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Opcode by byte: 256 entries, built at compile time from [`OPCODES`]. Two rows with the same
/// byte stop the build, so the table cannot hide an opcode behind another.
const BY_BYTE: [Option<Op>; 256] = {
    let mut table = [None; 256];
    let mut i = 0;
    while i < OPCODES.len() {
        let op = OPCODES[i];
        assert!(
            table[op.code() as usize].is_none(),
            "two opcodes share a byte"
        );
        table[op.code() as usize] = Some(op);
        i += 1;
    }
    table
};

/// The opcode for a byte, or `None` for a byte that is no opcode.
#[inline]
pub fn lookup(code: u8) -> Option<Op> {
    BY_BYTE.get(usize::from(code)).copied().flatten()
}

/// A length-prefixed or newline-terminated argument: a bounded prefix and the true length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Payload {
    /// The first bytes of the argument (at most the keep limit).
    pub head: Vec<u8>,
    /// The argument's full length in bytes (without the newline for lines).
    pub len: u64,
}

impl Payload {
    /// True when `head` holds the whole argument.
    pub fn complete(&self) -> bool {
        u64::try_from(self.head.len()).is_ok_and(|n| n == self.len)
    }
}

/// A decoded argument.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    /// No argument.
    None,
    /// A fixed-width integer argument.
    Int(i64),
    /// A BINFLOAT value.
    Float(f64),
    /// A newline-terminated line or a length-prefixed payload.
    Data(Payload),
    /// GLOBAL/INST module and name lines.
    Pair(Payload, Payload),
}

/// A byte source that tracks the absolute offset. A small lookahead buffer lets the analyzer
/// sniff what follows a STOP without losing those bytes if they start another pickle.
pub struct Source<'a, R: BufRead> {
    inner: &'a mut R,
    pending: Vec<u8>,
    pending_at: usize,
    /// Offset of the next byte to read, from the start of the stream.
    pub pos: u64,
    /// Bytes taken from the underlying reader so far (`pos` plus unread lookahead).
    pub taken: u64,
}

impl<'a, R: BufRead> Source<'a, R> {
    /// Wrap a reader whose first byte sits at absolute offset `pos`.
    pub fn new(inner: &'a mut R, pos: u64) -> Self {
        Source {
            inner,
            pending: Vec::new(),
            pending_at: 0,
            pos,
            taken: pos,
        }
    }

    fn io_error(pos: u64, e: &io::Error) -> Malformed {
        malformed(pos, "io", format!("read failed at offset {pos}: {e}"))
    }

    fn truncated(&self, what: &str) -> Malformed {
        malformed(
            self.pos,
            "truncated",
            format!("stream ends at offset {} inside {what}", self.pos),
        )
    }

    fn fill_inner(&mut self) -> Result<(), Malformed> {
        loop {
            match self.inner.fill_buf() {
                Ok(_) => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(Self::io_error(self.pos, &e)),
            }
        }
    }

    /// The bytes ahead, without consuming them (empty at end of stream).
    pub fn peek(&mut self) -> Result<&[u8], Malformed> {
        if self.pending_at < self.pending.len() {
            return Ok(self.pending.get(self.pending_at..).unwrap_or_default());
        }
        self.fill_inner()?;
        let pos = self.pos;
        self.inner.fill_buf().map_err(|e| Self::io_error(pos, &e))
    }

    /// Make at least `n` bytes visible to [`Source::peek`] (fewer at end of stream) by moving
    /// them from the reader into the lookahead buffer.
    pub fn lookahead(&mut self, n: usize) -> Result<&[u8], Malformed> {
        if self.pending_at >= self.pending.len() {
            self.pending.clear();
            self.pending_at = 0;
        }
        while self.pending.len() - self.pending_at < n {
            self.fill_inner()?;
            let pos = self.pos;
            let buf = self.inner.fill_buf().map_err(|e| Self::io_error(pos, &e))?;
            if buf.is_empty() {
                break;
            }
            let want = n - (self.pending.len() - self.pending_at);
            let take = want.min(buf.len());
            if let Some(part) = buf.get(..take) {
                self.pending.extend_from_slice(part);
            }
            self.inner.consume(take);
            self.taken = self.taken.saturating_add(take as u64);
        }
        Ok(self.pending.get(self.pending_at..).unwrap_or_default())
    }

    /// Consume `n` bytes that a preceding [`Source::peek`] returned.
    fn consume(&mut self, n: usize) {
        if self.pending_at < self.pending.len() {
            self.pending_at = self.pending_at.saturating_add(n).min(self.pending.len());
        } else {
            self.inner.consume(n);
            self.taken = self.taken.saturating_add(n as u64);
        }
        self.pos = self.pos.saturating_add(n as u64);
    }

    /// Read one byte; `Ok(None)` at end of stream.
    pub fn next_byte(&mut self) -> Result<Option<u8>, Malformed> {
        let Some(&b) = self.peek()?.first() else {
            return Ok(None);
        };
        self.consume(1);
        Ok(Some(b))
    }

    fn exact<const N: usize>(&mut self, what: &str) -> Result<[u8; N], Malformed> {
        let mut out = [0u8; N];
        let mut filled = 0;
        while filled < N {
            let buf = self.peek()?;
            if buf.is_empty() {
                return Err(self.truncated(what));
            }
            let take = buf.len().min(N - filled);
            let (Some(dst), Some(src)) = (out.get_mut(filled..filled + take), buf.get(..take))
            else {
                return Err(self.truncated(what));
            };
            dst.copy_from_slice(src);
            self.consume(take);
            filled += take;
        }
        Ok(out)
    }

    /// Read `len` bytes keeping at most `keep` of them; the rest is skipped without allocation.
    pub fn payload(&mut self, len: u64, keep: usize, what: &str) -> Result<Payload, Malformed> {
        let keep_n = usize::try_from(len).map_or(keep, |l| l.min(keep));
        let mut head = Vec::with_capacity(keep_n);
        let mut left = len;
        while left > 0 {
            let buf = self.peek()?;
            if buf.is_empty() {
                return Err(self.truncated(what));
            }
            let take = usize::try_from(left).map_or(buf.len(), |l| l.min(buf.len()));
            let room = keep_n.saturating_sub(head.len()).min(take);
            if let Some(part) = buf.get(..room) {
                head.extend_from_slice(part);
            }
            self.consume(take);
            left = left.saturating_sub(take as u64);
        }
        Ok(Payload { head, len })
    }

    /// Skip `len` bytes (raw array data); returns how many were skipped before end of stream.
    pub fn skip(&mut self, len: u64) -> Result<u64, Malformed> {
        let mut left = len;
        while left > 0 {
            let n = self.peek()?.len();
            if n == 0 {
                break;
            }
            let take = usize::try_from(left).map_or(n, |l| l.min(n));
            self.consume(take);
            left = left.saturating_sub(take as u64);
        }
        Ok(len - left)
    }

    /// Read a newline-terminated line of at most `max` bytes, keeping `keep` bytes of it.
    pub fn line(&mut self, max: u64, keep: usize, what: &str) -> Result<Payload, Malformed> {
        let start = self.pos;
        let mut head = Vec::new();
        let mut len: u64 = 0;
        loop {
            let buf = self.peek()?;
            if buf.is_empty() {
                return Err(self.truncated(what));
            }
            let nl = buf.iter().position(|&b| b == b'\n');
            let body = nl.unwrap_or(buf.len());
            let room = keep.saturating_sub(head.len()).min(body);
            if let Some(part) = buf.get(..room) {
                head.extend_from_slice(part);
            }
            len = len.saturating_add(body as u64);
            let used = nl.map_or(body, |i| i + 1);
            self.consume(used);
            if len > max {
                return Err(malformed(
                    start,
                    "limit-line",
                    format!("{what} at offset {start} is longer than the {max}-byte line limit"),
                ));
            }
            if nl.is_some() {
                return Ok(Payload { head, len });
            }
        }
    }
}

/// Read the argument of `op` from `src`, checking every length against `limits`.
pub fn read_arg<R: BufRead>(
    src: &mut Source<'_, R>,
    op: Op,
    limits: &Limits,
) -> Result<Arg, Malformed> {
    use ArgKind as A;
    let at = src.pos;
    let what = op.name();
    let keep = limits.keep_string;
    let arg = match op.arg() {
        A::None => Arg::None,
        A::U1 => Arg::Int(i64::from(src.exact::<1>(what)?[0])),
        A::U2 => Arg::Int(i64::from(u16::from_le_bytes(src.exact::<2>(what)?))),
        A::I4 => Arg::Int(i64::from(i32::from_le_bytes(src.exact::<4>(what)?))),
        A::U4 => Arg::Int(i64::from(u32::from_le_bytes(src.exact::<4>(what)?))),
        A::U8 => {
            let v = u64::from_le_bytes(src.exact::<8>(what)?);
            let v = i64::try_from(v).map_err(|_| {
                malformed(
                    at,
                    "bad-argument",
                    format!("{what} argument {v} at offset {at} overflows"),
                )
            })?;
            Arg::Int(v)
        }
        A::F8 => Arg::Float(f64::from_be_bytes(src.exact::<8>(what)?)),
        A::Line => Arg::Data(src.line(limits.max_line_len, keep, what)?),
        A::LinePair => {
            let module = src.line(limits.max_line_len, keep, what)?;
            let name = src.line(limits.max_line_len, keep, what)?;
            Arg::Pair(module, name)
        }
        A::Len1 => {
            let n = u64::from(src.exact::<1>(what)?[0]);
            Arg::Data(src.payload(n, keep, what)?)
        }
        A::LenI4 => {
            let n = i32::from_le_bytes(src.exact::<4>(what)?);
            let n = u64::try_from(n).map_err(|_| {
                malformed(
                    at,
                    "bad-argument",
                    format!("{what} at offset {at} has negative length {n}"),
                )
            })?;
            Arg::Data(src.payload(check_len(n, limits, what, at)?, keep, what)?)
        }
        A::LenU4 => {
            let n = u64::from(u32::from_le_bytes(src.exact::<4>(what)?));
            Arg::Data(src.payload(check_len(n, limits, what, at)?, keep, what)?)
        }
        A::LenU8 => {
            let n = u64::from_le_bytes(src.exact::<8>(what)?);
            Arg::Data(src.payload(check_len(n, limits, what, at)?, keep, what)?)
        }
    };
    Ok(arg)
}

fn check_len(n: u64, limits: &Limits, what: &str, at: u64) -> Result<u64, Malformed> {
    if n > limits.max_arg_len {
        return Err(malformed(
            at,
            "limit-string",
            format!(
                "{what} at offset {at} claims {n} bytes, over the {}-byte argument limit",
                limits.max_arg_len
            ),
        ));
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_has_every_pickletools_opcode_once() {
        assert_eq!(OPCODES.len(), 68);
        for (i, a) in OPCODES.iter().enumerate() {
            for b in OPCODES.iter().skip(i + 1) {
                assert_ne!(a.code(), b.code(), "{a} and {b} share a code");
                assert_ne!(a.name(), b.name());
            }
        }
        assert_eq!(lookup(0x93).map(Op::name), Some("STACK_GLOBAL"));
        assert!(lookup(0x00).is_none());
        assert!(lookup(0x99).is_none());
    }

    #[test]
    fn payload_keeps_a_prefix_and_skips_the_rest() {
        let data = vec![7u8; 10_000];
        let mut r = &data[..];
        let mut src = Source::new(&mut r, 0);
        let p = src.payload(10_000, 16, "BINBYTES").unwrap_or(Payload {
            head: vec![],
            len: 0,
        });
        assert_eq!(p.head.len(), 16);
        assert_eq!(p.len, 10_000);
        assert_eq!(src.pos, 10_000);
    }

    #[test]
    fn rejects_line_over_limit() {
        let data = [b'a'; 100];
        let mut r = &data[..];
        let mut src = Source::new(&mut r, 0);
        let e = src.line(10, 4, "GLOBAL");
        assert!(matches!(
            e,
            Err(Malformed {
                code: "limit-line",
                ..
            })
        ));
    }
}
