//! The text decoders of Python's `base64`, `binascii` and `codecs` modules, byte for byte.
//!
//! Each accepts what CPython's function accepts with its default arguments and rejects what it
//! rejects, naming the offending byte (the reference values in `code::python::decode`'s tests
//! were computed with CPython 3.11). None of them produces more bytes than it reads except
//! [`ascii85`] (`z` is four zero bytes): the caller caps that one before calling it.

use super::error::ErrorKind;

/// The standard alphabet's value of each byte (64: not in it).
pub fn base64_value(b: u8) -> u8 {
    match b {
        b'A'..=b'Z' => b - b'A',
        b'a'..=b'z' => b - b'a' + 26,
        b'0'..=b'9' => b - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => 64,
    }
}

/// CPython's `binascii.a2b_base64` in its default (non-strict) mode, step for step.
pub fn base64(input: &[u8], urlsafe: bool) -> Result<Vec<u8>, ErrorKind> {
    let mut out = Vec::with_capacity(input.len() / 4 * 3 + 3);
    let (mut quad, mut left, mut pads) = (0u8, 0u8, 0usize);
    for &raw in input {
        let b = match raw {
            b'-' if urlsafe => b'+',
            b'_' if urlsafe => b'/',
            b => b,
        };
        if b == b'=' {
            // Padding completes a group that has at least two data characters; then the rest
            // of the input is ignored.
            pads += 1;
            if quad >= 2 && usize::from(quad) + pads >= 4 {
                return Ok(out);
            }
            continue;
        }
        let v = base64_value(b);
        if v >= 64 {
            continue;
        }
        pads = 0;
        match quad {
            0 => {
                quad = 1;
                left = v;
            }
            1 => {
                quad = 2;
                out.push((left << 2) | (v >> 4));
                left = v & 0x0f;
            }
            2 => {
                quad = 3;
                out.push((left << 4) | (v >> 2));
                left = v & 0x03;
            }
            _ => {
                quad = 0;
                out.push((left << 6) | v);
                left = 0;
            }
        }
    }
    if quad != 0 {
        return Err(ErrorKind::BadPadding);
    }
    Ok(out)
}

/// The RFC 4648 base32 alphabet (`base64.b32decode`).
pub const BASE32: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
/// The RFC 4648 extended-hex base32 alphabet (`base64.b32hexdecode`).
pub const BASE32HEX: &[u8; 32] = b"0123456789ABCDEFGHIJKLMNOPQRSTUV";

/// CPython's `base64._b32decode` (casefold off, no `map01`).
pub fn base32(input: &[u8], alphabet: &[u8; 32]) -> Result<Vec<u8>, ErrorKind> {
    if !input.len().is_multiple_of(8) {
        return Err(ErrorKind::BadPadding);
    }
    let data_len = input.len() - input.iter().rev().take_while(|&&b| b == b'=').count();
    let pads = input.len() - data_len;
    let data = input.get(..data_len).unwrap_or_default();
    let mut out = Vec::with_capacity(data_len / 8 * 5 + 5);
    let mut acc = 0u64;
    for (q, quantum) in data.chunks(8).enumerate() {
        acc = 0;
        for (j, &b) in quantum.iter().enumerate() {
            let Some(v) = alphabet.iter().position(|&a| a == b) else {
                return Err(ErrorKind::BadCharacter {
                    at: q * 8 + j,
                    byte: b,
                });
            };
            acc = (acc << 5) | v as u64;
        }
        out.extend_from_slice(acc.to_be_bytes().get(3..).unwrap_or_default());
    }
    if ![0, 1, 3, 4, 6].contains(&pads) {
        return Err(ErrorKind::BadPadding);
    }
    if pads > 0 && !out.is_empty() {
        // The last quantum was short: shift it into place and keep its whole bytes.
        let last = (acc << (5 * pads)).to_be_bytes();
        let keep = (43 - 5 * pads) / 8;
        out.truncate(out.len().saturating_sub(5));
        out.extend_from_slice(last.get(3..3 + keep).unwrap_or_default());
    }
    Ok(out)
}

/// The base85 alphabet of git and Mercurial (`base64.b85decode`).
pub const BASE85: &[u8; 85] =
    b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";

/// CPython's `base64.b85decode`: groups of five, the last padded with `~`.
pub fn base85(input: &[u8]) -> Result<Vec<u8>, ErrorKind> {
    let padding = (5 - input.len() % 5) % 5;
    let mut out = Vec::with_capacity(input.len() / 5 * 4 + 4);
    for (g, group) in input.chunks(5).enumerate() {
        let mut acc = 0u64;
        for k in 0..5 {
            let b = group.get(k).copied().unwrap_or(b'~');
            let Some(v) = BASE85.iter().position(|&a| a == b) else {
                return Err(ErrorKind::BadCharacter {
                    at: g * 5 + k,
                    byte: b,
                });
            };
            acc = acc * 85 + v as u64;
        }
        let Ok(word) = u32::try_from(acc) else {
            return Err(ErrorKind::Overflow { at: g * 5 });
        };
        out.extend_from_slice(&word.to_be_bytes());
    }
    out.truncate(out.len() - padding);
    Ok(out)
}

/// CPython's `base64.a85decode` with its defaults (no Adobe framing, no `y`, whitespace
/// `" \t\n\r\v"` skipped).
pub fn ascii85(input: &[u8]) -> Result<Vec<u8>, ErrorKind> {
    let mut out = Vec::with_capacity(input.len() / 5 * 4 + 4);
    let mut group = [0u8; 5];
    let mut n = 0usize;
    let mut start = 0usize;
    // Python appends four `u` and drops the bytes they produce.
    let padded = input.iter().copied().chain(*b"uuuu");
    for (at, b) in padded.enumerate() {
        match b {
            b'!'..=b'u' => {
                if n == 0 {
                    start = at;
                }
                group[n] = b;
                n += 1;
                if n == 5 {
                    let acc = group
                        .iter()
                        .fold(0u64, |a, &d| a * 85 + u64::from(d - b'!'));
                    let Ok(word) = u32::try_from(acc) else {
                        return Err(ErrorKind::Overflow { at: start });
                    };
                    out.extend_from_slice(&word.to_be_bytes());
                    n = 0;
                }
            }
            b'z' if n == 0 => out.extend_from_slice(&[0; 4]),
            b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' => {}
            byte => return Err(ErrorKind::BadCharacter { at, byte }),
        }
    }
    out.truncate(out.len().saturating_sub(4 - n));
    Ok(out)
}

/// The value of one hex digit, either case.
pub fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// `binascii.unhexlify`: even length, hex digits only.
pub fn hex(input: &[u8]) -> Result<Vec<u8>, ErrorKind> {
    if !input.len().is_multiple_of(2) {
        return Err(ErrorKind::OddLength);
    }
    input
        .chunks(2)
        .enumerate()
        .map(|(i, pair)| {
            let digit = |k: usize| {
                let b = pair.get(k).copied().unwrap_or_default();
                hex_value(b).ok_or(ErrorKind::BadCharacter {
                    at: 2 * i + k,
                    byte: b,
                })
            };
            Ok((digit(0)? << 4) | digit(1)?)
        })
        .collect()
}

/// `bytes.fromhex`: whitespace (`Py_ISSPACE`) may come before each pair, never inside one.
pub fn fromhex(input: &[u8]) -> Result<Vec<u8>, ErrorKind> {
    let mut out = Vec::with_capacity(input.len() / 2);
    let mut i = 0;
    loop {
        while input
            .get(i)
            .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c'))
        {
            i += 1;
        }
        let Some(&top) = input.get(i) else {
            return Ok(out);
        };
        let bad = |at: usize| ErrorKind::BadCharacter {
            at,
            byte: input.get(at).copied().unwrap_or_default(),
        };
        let hi = hex_value(top).ok_or_else(|| bad(i))?;
        let lo = input
            .get(i + 1)
            .and_then(|&b| hex_value(b))
            .ok_or_else(|| bad(i + 1))?;
        out.push((hi << 4) | lo);
        i += 2;
    }
}

/// `codecs.encode(x, "rot13")` on one byte: ASCII letters rotated by 13, the rest kept.
pub fn rot13(b: u8) -> u8 {
    match b {
        b'a'..=b'z' => (b - b'a' + 13) % 26 + b'a',
        b'A'..=b'Z' => (b - b'A' + 13) % 26 + b'A',
        _ => b,
    }
}

/// `s[::-1]`: a `str` reverses characters, a `bytes` object bytes. Text that is UTF-8 is taken
/// for a `str` (a literal blob is almost always one).
pub fn reverse(input: &[u8]) -> Vec<u8> {
    match std::str::from_utf8(input) {
        Ok(s) => s.chars().rev().collect::<String>().into_bytes(),
        Err(_) => input.iter().rev().copied().collect(),
    }
}
