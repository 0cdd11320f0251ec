//! The pickle opcode table (every opcode of CPython's `pickletools.opcodes`, protocols 0-5) and a
//! bounded reader that decodes one opcode and its argument from a `BufRead`. Length fields are
//! checked against [`Limits`] before anything is read, payloads keep only a bounded prefix and
//! the rest is skipped with `consume`, so a length field claiming gigabytes costs no memory.

use std::io::{self, BufRead};

use super::{Limits, Malformed};

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

/// One row of the opcode table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpInfo {
    /// The opcode byte.
    pub code: u8,
    /// pickletools' name for it.
    pub name: &'static str,
    /// How its argument is encoded.
    pub arg: ArgKind,
    /// The protocol that introduced it.
    pub proto: u8,
}

const fn op(code: u8, name: &'static str, arg: ArgKind, proto: u8) -> OpInfo {
    OpInfo {
        code,
        name,
        arg,
        proto,
    }
}

use ArgKind as A;

/// Every opcode of `pickletools.opcodes` (CPython 3.8-3.13 share this table), in its order.
pub const OPCODES: [OpInfo; 68] = [
    op(b'I', "INT", A::Line, 0),
    op(b'J', "BININT", A::I4, 1),
    op(b'K', "BININT1", A::U1, 1),
    op(b'M', "BININT2", A::U2, 1),
    op(b'L', "LONG", A::Line, 0),
    op(0x8a, "LONG1", A::Len1, 2),
    op(0x8b, "LONG4", A::LenI4, 2),
    op(b'S', "STRING", A::Line, 0),
    op(b'T', "BINSTRING", A::LenI4, 1),
    op(b'U', "SHORT_BINSTRING", A::Len1, 1),
    op(b'B', "BINBYTES", A::LenU4, 3),
    op(b'C', "SHORT_BINBYTES", A::Len1, 3),
    op(0x8e, "BINBYTES8", A::LenU8, 4),
    op(0x96, "BYTEARRAY8", A::LenU8, 5),
    op(0x97, "NEXT_BUFFER", A::None, 5),
    op(0x98, "READONLY_BUFFER", A::None, 5),
    op(b'N', "NONE", A::None, 0),
    op(0x88, "NEWTRUE", A::None, 2),
    op(0x89, "NEWFALSE", A::None, 2),
    op(b'V', "UNICODE", A::Line, 0),
    op(0x8c, "SHORT_BINUNICODE", A::Len1, 4),
    op(b'X', "BINUNICODE", A::LenU4, 1),
    op(0x8d, "BINUNICODE8", A::LenU8, 4),
    op(b'F', "FLOAT", A::Line, 0),
    op(b'G', "BINFLOAT", A::F8, 1),
    op(b']', "EMPTY_LIST", A::None, 1),
    op(b'a', "APPEND", A::None, 0),
    op(b'e', "APPENDS", A::None, 1),
    op(b'l', "LIST", A::None, 0),
    op(b')', "EMPTY_TUPLE", A::None, 1),
    op(b't', "TUPLE", A::None, 0),
    op(0x85, "TUPLE1", A::None, 2),
    op(0x86, "TUPLE2", A::None, 2),
    op(0x87, "TUPLE3", A::None, 2),
    op(b'}', "EMPTY_DICT", A::None, 1),
    op(b'd', "DICT", A::None, 0),
    op(b's', "SETITEM", A::None, 0),
    op(b'u', "SETITEMS", A::None, 1),
    op(0x8f, "EMPTY_SET", A::None, 4),
    op(0x90, "ADDITEMS", A::None, 4),
    op(0x91, "FROZENSET", A::None, 4),
    op(b'0', "POP", A::None, 0),
    op(b'2', "DUP", A::None, 0),
    op(b'(', "MARK", A::None, 0),
    op(b'1', "POP_MARK", A::None, 1),
    op(b'g', "GET", A::Line, 0),
    op(b'h', "BINGET", A::U1, 1),
    op(b'j', "LONG_BINGET", A::U4, 1),
    op(b'p', "PUT", A::Line, 0),
    op(b'q', "BINPUT", A::U1, 1),
    op(b'r', "LONG_BINPUT", A::U4, 1),
    op(0x94, "MEMOIZE", A::None, 4),
    op(0x82, "EXT1", A::U1, 2),
    op(0x83, "EXT2", A::U2, 2),
    op(0x84, "EXT4", A::I4, 2),
    op(b'c', "GLOBAL", A::LinePair, 0),
    op(0x93, "STACK_GLOBAL", A::None, 4),
    op(b'R', "REDUCE", A::None, 0),
    op(b'b', "BUILD", A::None, 0),
    op(b'i', "INST", A::LinePair, 0),
    op(b'o', "OBJ", A::None, 1),
    op(0x81, "NEWOBJ", A::None, 2),
    op(0x92, "NEWOBJ_EX", A::None, 4),
    op(0x80, "PROTO", A::U1, 2),
    op(b'.', "STOP", A::None, 0),
    op(0x95, "FRAME", A::U8, 4),
    op(b'P', "PERSID", A::Line, 0),
    op(b'Q', "BINPERSID", A::None, 1),
];

/// The table row for an opcode byte, or `None` for a byte that is no opcode.
pub fn lookup(code: u8) -> Option<&'static OpInfo> {
    OPCODES.iter().find(|o| o.code == code)
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
        Malformed::new(pos, "io", format!("read failed at offset {pos}: {e}"))
    }

    fn truncated(&self, what: &str) -> Malformed {
        Malformed::new(
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
                return Err(Malformed::new(
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

/// Read the argument of `info` from `src`, checking every length against `limits`.
pub fn read_arg<R: BufRead>(
    src: &mut Source<'_, R>,
    info: &OpInfo,
    limits: &Limits,
) -> Result<Arg, Malformed> {
    let at = src.pos;
    let what = info.name;
    let keep = limits.keep_string;
    let arg = match info.arg {
        A::None => Arg::None,
        A::U1 => Arg::Int(i64::from(src.exact::<1>(what)?[0])),
        A::U2 => Arg::Int(i64::from(u16::from_le_bytes(src.exact::<2>(what)?))),
        A::I4 => Arg::Int(i64::from(i32::from_le_bytes(src.exact::<4>(what)?))),
        A::U4 => Arg::Int(i64::from(u32::from_le_bytes(src.exact::<4>(what)?))),
        A::U8 => {
            let v = u64::from_le_bytes(src.exact::<8>(what)?);
            let v = i64::try_from(v).map_err(|_| {
                Malformed::new(
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
                Malformed::new(
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
        return Err(Malformed::new(
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
                assert_ne!(a.code, b.code, "{} and {} share a code", a.name, b.name);
                assert_ne!(a.name, b.name);
            }
        }
        assert_eq!(lookup(0x93).map(|o| o.name), Some("STACK_GLOBAL"));
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
