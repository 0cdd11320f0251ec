//! Constants: integers, floats, strings, bytes, None/True/False and out-of-band buffers
//! (`load_int`, `load_binint*`, `load_long`, `load_string`, `load_counted_*`, `load_unicode`
//! in `_pickle.c`). Strings keep a bounded prefix, because module and name operands of
//! STACK_GLOBAL arrive as string constants; other values are kept only as far as joblib array
//! sizes need them (small integers), or are opaque.

use super::state::{Machine, Val, err};
use crate::inspect::pickle::analysis::Malformed;
use crate::inspect::pickle::ops::{Arg, Op};

impl Machine<'_> {
    /// INT: a decimal line; `00`/`01` are protocol 0's False/True.
    pub(super) fn int(&mut self, arg: &Arg, at: u64) -> Result<(), Malformed> {
        let v = match arg {
            Arg::Data(p) if p.head == b"00" || p.head == b"01" => Val::Other("bool"),
            Arg::Data(p) => parse_decimal(&p.head).map_or(Val::Other("int"), Val::Int),
            _ => Val::Other("int"),
        };
        self.push(v, at)
    }

    /// BININT, BININT1, BININT2: a fixed-width integer.
    pub(super) fn binint(&mut self, arg: &Arg, at: u64) -> Result<(), Malformed> {
        let v = match arg {
            Arg::Int(i) => Val::Int(*i),
            _ => Val::Other("int"),
        };
        self.push(v, at)
    }

    /// LONG: a decimal line with an optional `L` suffix.
    pub(super) fn long(&mut self, arg: &Arg, at: u64) -> Result<(), Malformed> {
        let v = match arg {
            Arg::Data(p) => {
                let digits = p.head.strip_suffix(b"L").unwrap_or(&p.head);
                parse_decimal(digits).map_or(Val::Other("int"), Val::Int)
            }
            _ => Val::Other("int"),
        };
        self.push(v, at)
    }

    /// LONG1, LONG4: little-endian two's complement bytes; more than 8 is opaque.
    pub(super) fn long_bytes(&mut self, arg: &Arg, at: u64) -> Result<(), Malformed> {
        let v = match arg {
            Arg::Data(p) if p.complete() && p.head.len() <= 8 => Val::Int(le_signed(&p.head)),
            _ => Val::Other("int"),
        };
        self.push(v, at)
    }

    /// STRING: a quoted, escaped line (`load_string` rejects an unquoted one).
    pub(super) fn string(&mut self, op: Op, arg: &Arg, at: u64) -> Result<(), Malformed> {
        let Arg::Data(p) = arg else {
            return Err(err(
                at,
                "bad-argument",
                format!("{op} at offset {at} has no argument"),
            ));
        };
        let opens = matches!(p.head.first(), Some(b'\'' | b'"'));
        let closes = p.head.len() >= 2 && p.head.first() == p.head.last();
        let quoted = opens && (closes || !p.complete());
        if !quoted {
            return Err(err(
                at,
                "bad-argument",
                format!("STRING argument at offset {at} is not quoted"),
            ));
        }
        let inner = if p.complete() {
            p.head
                .get(1..p.head.len().saturating_sub(1))
                .unwrap_or_default()
        } else {
            p.head.get(1..).unwrap_or_default()
        };
        let (bytes, exact) = unescape_bytes(inner);
        let value: String = bytes.iter().map(|&b| char::from(b)).collect();
        let v = self.text(value, p.complete() && exact, true, op);
        self.push(v, at)
    }

    /// BINSTRING, SHORT_BINSTRING: protocol 1-2 `str` as Latin-1 bytes.
    pub(super) fn binstring(&mut self, op: Op, arg: &Arg, at: u64) -> Result<(), Malformed> {
        let v = match arg {
            Arg::Data(p) => {
                let value: String = p.head.iter().map(|&b| char::from(b)).collect();
                self.text(value, p.complete(), true, op)
            }
            _ => Val::Other(op.name()),
        };
        self.push(v, at)
    }

    /// BINBYTES, SHORT_BINBYTES, BINBYTES8: `bytes`, kept when they are UTF-8.
    pub(super) fn binbytes(&mut self, op: Op, arg: &Arg, at: u64) -> Result<(), Malformed> {
        let v = match arg {
            Arg::Data(p) => match String::from_utf8(p.head.clone()) {
                Ok(value) => self.text(value, p.complete(), false, op),
                Err(e) => self.blob(e.into_bytes(), p.len, op),
            },
            _ => Val::Other(op.name()),
        };
        self.push(v, at)
    }

    /// UNICODE: a raw-unicode-escaped line.
    pub(super) fn unicode(&mut self, op: Op, arg: &Arg, at: u64) -> Result<(), Malformed> {
        let v = match arg {
            Arg::Data(p) => {
                let (value, exact) = raw_unicode_escape(&p.head);
                self.text(value, p.complete() && exact, true, op)
            }
            _ => Val::Other(op.name()),
        };
        self.push(v, at)
    }

    /// SHORT_BINUNICODE, BINUNICODE, BINUNICODE8: UTF-8 `str`.
    pub(super) fn binunicode(&mut self, op: Op, arg: &Arg, at: u64) -> Result<(), Malformed> {
        let v = match arg {
            Arg::Data(p) => match std::str::from_utf8(&p.head) {
                Ok(s) => self.text(s.to_owned(), p.complete(), true, op),
                // A prefix may end inside a character; only the whole string counts.
                Err(_) => {
                    let s = String::from_utf8_lossy(&p.head).into_owned();
                    self.text(s, false, true, op)
                }
            },
            _ => Val::Other(op.name()),
        };
        self.push(v, at)
    }

    /// BYTEARRAY8, NEXT_BUFFER, FLOAT, BINFLOAT, NEWTRUE, NEWFALSE: a value nothing depends on.
    pub(super) fn opaque(&mut self, op: Op, at: u64) -> Result<(), Malformed> {
        self.push(Val::Other(op.name()), at)
    }

    /// READONLY_BUFFER: wraps the top value, which must exist.
    pub(super) fn readonly_buffer(&mut self, op: Op, at: u64) -> Result<(), Malformed> {
        self.top(at, op)?;
        Ok(())
    }
}

/// `PyLong_FromString(s, 10)` for what picklers write: optional sign, digits, whitespace.
pub(super) fn parse_decimal(s: &[u8]) -> Option<i64> {
    std::str::from_utf8(s)
        .ok()?
        .trim()
        .replace('_', "")
        .parse()
        .ok()
}

pub(super) fn le_signed(bytes: &[u8]) -> i64 {
    let mut v: i64 = 0;
    for (i, &b) in bytes.iter().enumerate() {
        v |= i64::from(b) << (8 * i);
    }
    let bits = 8 * bytes.len();
    if bits > 0 && bits < 64 && bytes.last().is_some_and(|&b| b & 0x80 != 0) {
        v -= 1i64 << bits;
    }
    v
}

/// Python's `codecs.escape_decode` (used by the STRING opcode). Returns the bytes and whether
/// the decoding was exact (false for an escape cut off at the end).
pub(super) fn unescape_bytes(s: &[u8]) -> (Vec<u8>, bool) {
    let mut out = Vec::with_capacity(s.len());
    let mut exact = true;
    let mut i = 0;
    while let Some(&b) = s.get(i) {
        i += 1;
        if b != b'\\' {
            out.push(b);
            continue;
        }
        let Some(&e) = s.get(i) else {
            exact = false;
            break;
        };
        i += 1;
        match e {
            b'\n' => {}
            b'\\' => out.push(b'\\'),
            b'\'' => out.push(b'\''),
            b'"' => out.push(b'"'),
            b'a' => out.push(7),
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'v' => out.push(11),
            b'0'..=b'7' => {
                let mut v = u32::from(e - b'0');
                for _ in 0..2 {
                    match s.get(i) {
                        Some(&d @ b'0'..=b'7') => {
                            v = v * 8 + u32::from(d - b'0');
                            i += 1;
                        }
                        _ => break,
                    }
                }
                out.push((v & 0xff) as u8);
            }
            b'x' => {
                let hex = s.get(i..i + 2).and_then(|h| std::str::from_utf8(h).ok());
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(v) => {
                        out.push(v);
                        i += 2;
                    }
                    None => {
                        exact = false;
                        break;
                    }
                }
            }
            other => {
                out.push(b'\\');
                out.push(other);
            }
        }
    }
    (out, exact)
}

/// Python's `raw_unicode_escape` decoding (the UNICODE opcode): `\uXXXX` and `\UXXXXXXXX` after
/// an odd run of backslashes are code points; every other byte is Latin-1.
pub(super) fn raw_unicode_escape(s: &[u8]) -> (String, bool) {
    let mut out = String::with_capacity(s.len());
    let mut exact = true;
    let mut i = 0;
    let mut run = 0usize;
    while let Some(&b) = s.get(i) {
        if b == b'\\' {
            run += 1;
            out.push('\\');
            i += 1;
            continue;
        }
        let escape = run % 2 == 1 && (b == b'u' || b == b'U');
        run = 0;
        if escape {
            let n = if b == b'u' { 4 } else { 8 };
            let hex = s
                .get(i + 1..i + 1 + n)
                .and_then(|h| std::str::from_utf8(h).ok());
            let ch = hex
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .and_then(char::from_u32);
            match ch {
                Some(c) => {
                    out.pop();
                    out.push(c);
                    i += 1 + n;
                    continue;
                }
                None => {
                    exact = false;
                }
            }
        }
        out.push(char::from(b));
        i += 1;
    }
    (out, exact)
}
