//! Literal-blob decoder: what `exec(zlib.decompress(base64.b64decode("eJw…")))` runs.
//!
//! Malicious model code hides its payload in a literal and decodes it at run time: base64,
//! base32, base85, hex, rot13, zlib, gzip, bz2, lzma, string reversal, in any order and nested.
//! The behaviour judge resolves the call chain around a literal to a list of [`Codec`]s (the
//! innermost call first) and asks [`decode`] for the bytes Python would produce, then
//! [`sniff`]s them (Python source to analyse again, a marshal stream, a pickle, a compressed or
//! encoded blob to decode further). Nothing is executed: each step is a small, bounded
//! function of bytes.
//!
//! Each codec accepts what CPython's function accepts with its default arguments, and rejects
//! what it rejects, so a decoded payload is the payload the loader would run, and a blob Python
//! cannot decode is reported as such (the reference values in the tests were computed with
//! CPython 3.11). The one deliberate leniency: bytes after the end of a compressed stream are
//! ignored for every compressor (Python's gzip alone refuses them), since a scanner loses nothing
//! by decoding a little more.
//!
//! Bounds (the limits table, `blob_*`): every step's output is capped at
//! [`Limits::max_decoded_bytes`] before it is allocated past the cap (decompression bombs), a
//! chain holds at most [`Limits::max_steps`] steps, and [`Limits::max_nesting`] is the depth the
//! caller may recurse to when a decoded payload holds another blob. The decoders themselves are
//! the crate's codec ([`crate::codec::text`], [`crate::codec::memory`]), which also serves
//! `inspect::compress`; this module maps Python's calls onto them and chains them.

use crate::codec::header::{self, Compression};
use crate::codec::{memory, text};
use crate::model::limits::{self as table, usize_of};
use crate::model::problem::Problem;

/// One decoding step, named for what Python calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Codec {
    /// `base64.b64decode`, `decodebytes`, `standard_b64decode`, `binascii.a2b_base64`,
    /// `codecs.decode(x, "base64")`: characters outside the alphabet are skipped, `=` padding
    /// is required to complete the last group, data after the padding is ignored.
    Base64,
    /// `base64.urlsafe_b64decode`: `-` and `_` read as `+` and `/`, otherwise [`Codec::Base64`].
    UrlsafeBase64,
    /// `base64.b32decode`: upper-case RFC 4648 alphabet, length a multiple of 8, no whitespace.
    Base32,
    /// `base64.b32hexdecode`: the same with the extended-hex alphabet.
    Base32Hex,
    /// `base64.b85decode` (the git/Mercurial alphabet).
    Base85,
    /// `base64.a85decode` (Ascii85, `z` for four zero bytes, whitespace skipped, no `<~ ~>`).
    Ascii85,
    /// `binascii.unhexlify`/`a2b_hex`, `codecs.decode(x, "hex")`: pairs of hex digits only.
    Hex,
    /// `bytes.fromhex`/`bytearray.fromhex`: pairs of hex digits, whitespace between pairs.
    FromHex,
    /// `codecs.decode(x, "rot13")` (and `encode`, the same map): ASCII letters rotated by 13.
    Rot13,
    /// `zlib.decompress`, `codecs.decode(x, "zlib")`: one zlib stream.
    Zlib,
    /// `gzip.decompress`: gzip members in a row (zero padding between them skipped).
    Gzip,
    /// `bz2.decompress`, `codecs.decode(x, "bz2")`: bzip2 streams in a row.
    Bz2,
    /// `lzma.decompress`: xz or legacy `.lzma` streams in a row.
    Lzma,
    /// `x[::-1]`: characters reversed (bytes reversed when they are not UTF-8).
    Reverse,
    /// `bytes(x, …)`, `str(x, …)`, `x.encode()`, `x.decode()` in a text encoding: the same bytes.
    Text,
}

impl Codec {
    /// Every codec, in declaration order.
    pub const ALL: [Codec; 15] = [
        Codec::Base64,
        Codec::UrlsafeBase64,
        Codec::Base32,
        Codec::Base32Hex,
        Codec::Base85,
        Codec::Ascii85,
        Codec::Hex,
        Codec::FromHex,
        Codec::Rot13,
        Codec::Zlib,
        Codec::Gzip,
        Codec::Bz2,
        Codec::Lzma,
        Codec::Reverse,
        Codec::Text,
    ];

    /// Stable lowercase name, for evidence (`base64 -> zlib`).
    pub fn name(self) -> &'static str {
        match self {
            Codec::Base64 => "base64",
            Codec::UrlsafeBase64 => "urlsafe-base64",
            Codec::Base32 => "base32",
            Codec::Base32Hex => "base32hex",
            Codec::Base85 => "base85",
            Codec::Ascii85 => "ascii85",
            Codec::Hex => "hex",
            Codec::FromHex => "fromhex",
            Codec::Rot13 => "rot13",
            Codec::Zlib => "zlib",
            Codec::Gzip => "gzip",
            Codec::Bz2 => "bz2",
            Codec::Lzma => "lzma",
            Codec::Reverse => "reverse",
            Codec::Text => "text",
        }
    }

    /// The codec a call to the resolved dotted name `callee` applies to its first argument, if
    /// it is one (`base64.b64decode`, `zlib.decompress`, `bytes.fromhex`, `bytes`, …).
    /// `encoding` is the literal encoding argument of `codecs.decode`/`codecs.encode`/`bytes`/
    /// `str`, when there is one (`codecs.decode(x, "rot_13")`); a call whose encoding is not a
    /// literal should pass `None` only when the argument is absent. Method calls on a value
    /// (`x.decode("utf-8")`) go through [`Codec::of_method`].
    pub fn of_call(callee: &str, encoding: Option<&str>) -> Option<Codec> {
        let codec = match callee {
            "base64.b64decode"
            | "base64.decodebytes"
            | "base64.decodestring"
            | "base64.standard_b64decode"
            | "binascii.a2b_base64" => Codec::Base64,
            "base64.urlsafe_b64decode" => Codec::UrlsafeBase64,
            "base64.b32decode" => Codec::Base32,
            "base64.b32hexdecode" => Codec::Base32Hex,
            "base64.b85decode" => Codec::Base85,
            "base64.a85decode" => Codec::Ascii85,
            "binascii.unhexlify" | "binascii.a2b_hex" => Codec::Hex,
            "bytes.fromhex" | "bytearray.fromhex" => Codec::FromHex,
            "zlib.decompress" => Codec::Zlib,
            "gzip.decompress" => Codec::Gzip,
            "bz2.decompress" => Codec::Bz2,
            "lzma.decompress" => Codec::Lzma,
            "codecs.decode" => return Codec::of_encoding(encoding.unwrap_or("utf-8")),
            // Only rot13 is its own inverse; `codecs.encode(x, "base64")` encodes.
            "codecs.encode" => {
                return match Codec::of_encoding(encoding.unwrap_or("utf-8"))? {
                    c @ (Codec::Rot13 | Codec::Text) => Some(c),
                    _ => None,
                };
            }
            "bytes" | "bytearray" | "str" | "builtins.bytes" | "builtins.bytearray"
            | "builtins.str" => {
                return match encoding.map(Codec::of_encoding) {
                    None | Some(Some(Codec::Text)) => Some(Codec::Text),
                    _ => None,
                };
            }
            _ => return None,
        };
        Some(codec)
    }

    /// The codec of a method call `x.<method>(encoding)` on a value: `encode`/`decode` in a text
    /// encoding keep the bytes ([`Codec::Text`]); anything else is not a decoding step.
    pub fn of_method(method: &str, encoding: Option<&str>) -> Option<Codec> {
        match method {
            "encode" | "decode" => match Codec::of_encoding(encoding.unwrap_or("utf-8"))? {
                Codec::Text => Some(Codec::Text),
                _ => None,
            },
            _ => None,
        }
    }

    /// The codec `codecs` finds under an encoding name, normalised the way `codecs.lookup`
    /// does (case, and runs of punctuation or spaces read as one `_`): `base64`, `hex`, `zlib`
    /// (`zip`), `bz2`, `rot13`, and the common text encodings as [`Codec::Text`].
    pub fn of_encoding(name: &str) -> Option<Codec> {
        let mut norm = String::with_capacity(name.len().min(32));
        for c in name.trim().chars().take(32) {
            if c.is_ascii_alphanumeric() || c == '.' {
                norm.push(c.to_ascii_lowercase());
            } else if !norm.ends_with('_') {
                norm.push('_');
            }
        }
        let norm = norm.trim_matches('_');
        let codec = match norm {
            "base64" | "base_64" | "base64_codec" => Codec::Base64,
            "hex" | "hex_codec" => Codec::Hex,
            "zlib" | "zip" | "zlib_codec" => Codec::Zlib,
            "bz2" | "bz2_codec" => Codec::Bz2,
            "rot13" | "rot_13" => Codec::Rot13,
            "utf_8" | "utf8" | "u8" | "utf" | "ascii" | "us_ascii" | "646" | "latin_1"
            | "latin1" | "latin" | "l1" | "iso_8859_1" | "iso8859_1" | "8859" | "cp819"
            | "utf_8_sig" | "raw_unicode_escape" | "unicode_escape" => Codec::Text,
            _ => return None,
        };
        Some(codec)
    }
}

impl std::fmt::Display for Codec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Caps on decoding one literal blob; built from the limits table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most bytes any step of a chain may produce (`blob_decoded_bytes`).
    pub max_decoded_bytes: usize,
    /// Most steps in one chain (`blob_decode_steps`).
    pub max_steps: usize,
    /// How deep the caller may go when a decoded payload holds another blob
    /// (`blob_nesting_depth`): decoded source analysed again counts one level, and so does a
    /// [`Payload::Encoded`] or [`Payload::Compressed`] result decoded further. Not checked by
    /// [`decode`], which sees one chain; the caller counts.
    pub max_nesting: usize,
}

impl From<&table::Limits> for Limits {
    fn from(l: &table::Limits) -> Self {
        Limits {
            max_decoded_bytes: usize_of(l.blob_decoded_bytes),
            max_steps: usize_of(l.blob_decode_steps),
            max_nesting: usize_of(l.blob_nesting_depth),
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self::from(&table::Limits::default())
    }
}

/// Why a step could not decode its input (the codec's error, named here for the blob decoder).
pub use crate::codec::ErrorKind;

/// A chain that could not be decoded: which step, with which codec, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{codec} (step {step} of the decode chain): {kind}")]
pub struct DecodeError {
    /// 1-based position of the failing step in the chain.
    pub step: usize,
    /// That step's codec.
    pub codec: Codec,
    /// What went wrong.
    pub kind: ErrorKind,
}

impl DecodeError {
    /// Whether a limit stopped decoding (the blob may be fine, just too big or too deep).
    pub fn is_limit(&self) -> bool {
        matches!(
            self.kind,
            ErrorKind::TooLarge { .. } | ErrorKind::TooManySteps { .. } | ErrorKind::BudgetSpent
        )
    }

    /// The limit that stopped decoding, by its name in the limits table.
    pub fn limit_name(&self) -> Option<&'static str> {
        match self.kind {
            ErrorKind::TooLarge { .. } => Some("blob_decoded_bytes"),
            ErrorKind::TooManySteps { .. } => Some("blob_decode_steps"),
            ErrorKind::BudgetSpent => Some("code_eval_bytes"),
            _ => None,
        }
    }

    /// Stable kebab-case sub-code.
    pub fn code(&self) -> &'static str {
        match self.kind {
            ErrorKind::BadPadding => "blob-bad-padding",
            ErrorKind::BadCharacter { .. } => "blob-bad-character",
            ErrorKind::OddLength => "blob-odd-length",
            ErrorKind::Overflow { .. } => "blob-overflow",
            ErrorKind::Truncated => "blob-truncated",
            ErrorKind::Corrupt(_) => "blob-corrupt",
            ErrorKind::TooLarge { .. } => "blob-too-large",
            ErrorKind::TooManySteps { .. } => "blob-too-many-steps",
            ErrorKind::BudgetSpent => "blob-budget",
        }
    }

    /// The error as the crate's problem record: `LimitExceeded` for a limit (evidence `limit`
    /// names it), `Malformed` otherwise; evidence `codec` and `step`.
    pub fn problem(&self) -> Problem {
        let mut p = if self.is_limit() {
            Problem::limit(self.code(), self.to_string())
        } else {
            Problem::malformed(self.code(), self.to_string())
        };
        p.evidence
            .insert("codec".to_owned(), self.codec.name().to_owned());
        p.evidence.insert("step".to_owned(), self.step.to_string());
        if let Some(limit) = self.limit_name() {
            p.evidence.insert("limit".to_owned(), limit.to_owned());
        }
        p
    }
}

/// Applies `chain` to `input`, first step first, as Python would: the decoded bytes, or the
/// first step that fails. An empty chain returns the input. Bounded: at most
/// [`Limits::max_steps`] steps, each producing at most [`Limits::max_decoded_bytes`].
pub fn decode(input: &[u8], chain: &[Codec], limits: &Limits) -> Result<Vec<u8>, DecodeError> {
    if let Some(&codec) = chain.get(limits.max_steps) {
        return Err(DecodeError {
            step: limits.max_steps.saturating_add(1),
            codec,
            kind: ErrorKind::TooManySteps {
                limit: limits.max_steps,
            },
        });
    }
    let mut data = input.to_vec();
    for (i, &codec) in chain.iter().enumerate() {
        data = decode_step(&data, codec, limits).map_err(|kind| DecodeError {
            step: i + 1,
            codec,
            kind,
        })?;
    }
    Ok(data)
}

/// One step of [`decode`]: `codec` applied to `input`, within [`Limits::max_decoded_bytes`].
pub fn decode_step(input: &[u8], codec: Codec, limits: &Limits) -> Result<Vec<u8>, ErrorKind> {
    let cap = limits.max_decoded_bytes;
    // Text codecs never produce more bytes than they read: a cheap check up front.
    let too_large = ErrorKind::TooLarge { limit: cap };
    let out = match codec {
        Codec::Base64 => text::base64(input, false),
        Codec::UrlsafeBase64 => text::base64(input, true),
        Codec::Base32 => text::base32(input, text::BASE32),
        Codec::Base32Hex => text::base32(input, text::BASE32HEX),
        Codec::Base85 => text::base85(input),
        Codec::Ascii85 => {
            // Four bytes per `z`: the only text codec that expands.
            let zs = input.iter().filter(|&&b| b == b'z').count();
            if zs.saturating_mul(4) > cap {
                return Err(too_large);
            }
            text::ascii85(input)
        }
        Codec::Hex => text::hex(input),
        Codec::FromHex => text::fromhex(input),
        Codec::Rot13 => Ok(input.iter().map(|&b| text::rot13(b)).collect()),
        Codec::Reverse => Ok(text::reverse(input)),
        Codec::Text => Ok(input.to_vec()),
        Codec::Zlib => return memory::zlib(input, cap),
        Codec::Gzip => return memory::gzip(input, cap),
        Codec::Bz2 => return memory::bz2(input, cap),
        Codec::Lzma => return memory::lzma(input, cap),
    }?;
    if out.len() > cap {
        return Err(too_large);
    }
    Ok(out)
}

/// What decoded bytes look like, so the caller knows what to do with them next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Payload {
    /// A compressed stream Python's standard library decompresses: decode it further with the
    /// codec ([`Codec::Zlib`], [`Codec::Gzip`], [`Codec::Bz2`] or [`Codec::Lzma`]).
    Compressed(Codec),
    /// A `marshal` stream holding a code object (`exec(marshal.loads(…))`): hand it to the
    /// marshal walker.
    Marshal,
    /// A pickle stream (protocol 2 and up by its `PROTO` opcode; protocols 0 and 1 by their
    /// first opcode and final `STOP`): hand it to the pickle analysis.
    Pickle,
    /// Text that is wholly a further encoding (base64, base32, base85, hex) of something, at
    /// least [`MIN_ENCODED_LEN`] characters long: decode it again with the codec.
    Encoded(Codec),
    /// Text that may be Python: UTF-8 without control bytes other than whitespace, and holding
    /// a bracket, `=`, `:` or `import`. Parse and analyse it as Python.
    PythonSource,
    /// Other text.
    Text,
    /// Other bytes.
    Binary,
}

/// Shortest text taken for a further encoded blob; shorter runs of letters and digits are as
/// likely to be a word or a name.
pub const MIN_ENCODED_LEN: usize = 16;

/// Says what `bytes` (the output of [`decode`]) look like. Checked in this order: compressed
/// stream, marshal code object, pickle, further encoding, Python source, text, binary.
pub fn sniff(bytes: &[u8]) -> Payload {
    // The codec's one header check per format; zstd and LZ4 have no decoder in Python's
    // standard library, so their frames are judged as the bytes they are.
    match header::sniff(bytes) {
        Some(Compression::Gzip) => return Payload::Compressed(Codec::Gzip),
        Some(Compression::Xz | Compression::Lzma) => return Payload::Compressed(Codec::Lzma),
        Some(Compression::Bzip2) => return Payload::Compressed(Codec::Bz2),
        Some(Compression::Zlib) => return Payload::Compressed(Codec::Zlib),
        Some(Compression::Zstd | Compression::Lz4) | None => {}
    }
    if looks_like_marshal_code(bytes) {
        return Payload::Marshal;
    }
    if looks_like_pickle(bytes) {
        return Payload::Pickle;
    }
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Payload::Binary;
    };
    if text
        .chars()
        .any(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r' | '\x0c'))
    {
        return Payload::Binary;
    }
    if let Some(codec) = encoding_of(bytes) {
        return Payload::Encoded(codec);
    }
    if bytes.iter().any(|b| b"()[]{}=:".contains(b)) || text.contains("import") {
        return Payload::PythonSource;
    }
    Payload::Text
}

/// A marshalled code object: type byte `c` (with or without the reference flag) and a first
/// field (the argument count) that a real function has.
fn looks_like_marshal_code(bytes: &[u8]) -> bool {
    let Some((&[kind, a0, a1, a2, a3], rest)) = bytes.split_first_chunk::<5>() else {
        return false;
    };
    (kind & 0x7f) == b'c' && u32::from_le_bytes([a0, a1, a2, a3]) <= 255 && rest.len() >= 12
}

/// A pickle: `PROTO` 2..=5 first, or a protocol 0/1 stream that opens with a mark, an empty
/// list/dict/tuple or a `GLOBAL`/`STACK_GLOBAL` and ends with `STOP`.
fn looks_like_pickle(bytes: &[u8]) -> bool {
    match bytes {
        [0x80, proto, ..] => (2..=5).contains(proto),
        [first, .., b'.'] => {
            b"(]})".contains(first)
                || (*first == b'c'
                    && bytes
                        .iter()
                        .skip(1)
                        .take(64)
                        .position(|&b| b == b'\n')
                        .is_some_and(|n| n > 0))
        }
        _ => false,
    }
}

/// The further encoding that explains all of `bytes` (whitespace aside), if one does and the
/// text is long enough: hex, then base32, then base64 (standard or URL-safe), then base85.
fn encoding_of(bytes: &[u8]) -> Option<Codec> {
    let is_space = |b: &u8| b.is_ascii_whitespace() || *b == b'\x0b';
    let body: Vec<u8> = bytes.iter().copied().filter(|b| !is_space(b)).collect();
    if body.len() < MIN_ENCODED_LEN {
        return None;
    }
    let all = |f: &dyn Fn(u8) -> bool| body.iter().all(|&b| f(b));
    let trimmed = body.iter().rev().skip_while(|&&b| b == b'=').count();
    let data = body.get(..trimmed).unwrap_or_default();
    if body.len().is_multiple_of(2) && all(&|b| b.is_ascii_hexdigit()) {
        return Some(Codec::FromHex);
    }
    if body.len().is_multiple_of(8) && data.iter().all(|b| text::BASE32.contains(b)) {
        return Some(Codec::Base32);
    }
    let std = |b: &u8| text::base64_value(*b) < 64;
    if data.iter().all(std) {
        return Some(Codec::Base64);
    }
    if data.iter().all(|b| std(b) || *b == b'-' || *b == b'_') {
        return Some(Codec::UrlsafeBase64);
    }
    if bytes.len() == body.len() && all(&|b| text::BASE85.contains(&b)) {
        return Some(Codec::Base85);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// The payload every reference value below encodes (computed with CPython 3.11).
    const PAYLOAD: &[u8] = b"import os\nos.system(\"id\")\n";

    fn unhex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    fn one(input: &[u8], codec: Codec) -> Result<Vec<u8>, ErrorKind> {
        decode_step(input, codec, &Limits::default())
    }

    fn err(input: &[u8], codec: Codec) -> ErrorKind {
        match one(input, codec) {
            Err(e) => e,
            Ok(v) => panic!("{codec} decoded {input:?} to {v:?}"),
        }
    }

    const ZLIB: &str = "78dacbcc2dc82f2a51c82fe6ca2fd62bae2c2e49cdd550ca4c51d2e40200831408c9";
    const GZIP: &str = "1f8b0800000000000203cbcc2dc82f2a51c82fe6ca2fd62bae2c2e49cdd550ca4c51d2e4020054b312f11a000000";
    const BZ2: &str = "425a6839314159265359c86602f4000005d180001050610622dc2020002283d43d47a9e88530004d0383b472b5828340bacc4fa9f177245385090c86602f40";
    const XZ: &str = "fd377a585a000004e6d6b4460200210116000000742fe5a3010019696d706f7274206f730a6f732e73797374656d2822696422290a00000003848b65ada09ad80001321a201894301fb6f37d010000000004595a";
    const LZMA_ALONE: &str = "5d00008000ffffffffffffffff00349b4a67b8523c73ed3457b85d820518d5901a8a925349351a3f4d071e4c9fff21c00000";

    #[test]
    fn decodes_base64_as_b64decode_does() {
        let ok = |s: &str| one(s.as_bytes(), Codec::Base64);
        assert_eq!(
            ok("aW1wb3J0IG9zCm9zLnN5c3RlbSgiaWQiKQo="),
            Ok(PAYLOAD.to_vec())
        );
        // Whitespace and other non-alphabet bytes are skipped; data after padding is ignored.
        assert_eq!(ok("YW Jj\n"), Ok(b"abc".to_vec()));
        assert_eq!(ok("YWI=YWJj"), Ok(b"ab".to_vec()));
        assert_eq!(ok("YWI==x"), Ok(b"ab".to_vec()));
        assert_eq!(ok("YQ==="), Ok(b"a".to_vec()));
        assert_eq!(ok("YQ=a="), Ok(b"a\x06".to_vec()));
        // The URL-safe characters are not in the standard alphabet: skipped.
        assert_eq!(ok("-_-_"), Ok(Vec::new()));
        assert_eq!(ok(""), Ok(Vec::new()));
    }

    #[test]
    fn rejects_base64_with_incorrect_padding() {
        for s in ["YWI", "YQ", "YQ=", "YW=I", "Y=Q=", "Y"] {
            assert_eq!(
                err(s.as_bytes(), Codec::Base64),
                ErrorKind::BadPadding,
                "{s}"
            );
        }
    }

    #[test]
    fn decodes_urlsafe_base64() {
        assert_eq!(
            one(b"-_--AD8-", Codec::UrlsafeBase64),
            Ok(b"\xfb\xff\xbe\x00?>".to_vec())
        );
        // The standard alphabet is still read.
        assert_eq!(one(b"YWJj", Codec::UrlsafeBase64), Ok(b"abc".to_vec()));
    }

    #[test]
    fn decodes_base32_as_b32decode_does() {
        let b32 = b"NFWXA33SOQQG64YKN5ZS443ZON2GK3JIEJUWIIRJBI======";
        assert_eq!(one(b32, Codec::Base32), Ok(PAYLOAD.to_vec()));
        assert_eq!(one(b"MFRGGZA=", Codec::Base32), Ok(b"abcd".to_vec()));
        assert_eq!(one(b"ME======", Codec::Base32), Ok(b"a".to_vec()));
        assert_eq!(one(b"MFRG====", Codec::Base32), Ok(b"ab".to_vec()));
        assert_eq!(one(b"D1KI2===", Codec::Base32Hex), Ok(b"hi!".to_vec()));
    }

    #[test]
    fn rejects_base32_with_bad_padding_or_lower_case() {
        assert_eq!(err(b"MFRGG==", Codec::Base32), ErrorKind::BadPadding);
        assert_eq!(err(b"MFRGGZ==", Codec::Base32), ErrorKind::BadPadding);
        assert_eq!(err(b"========", Codec::Base32), ErrorKind::BadPadding);
        assert_eq!(
            err(b"mfrgg===", Codec::Base32),
            ErrorKind::BadCharacter { at: 0, byte: b'm' }
        );
    }

    #[test]
    fn decodes_base85_as_b85decode_does() {
        let b85 = b"X>D+Ca&#bXa|&;BE^~QvbY*QQB57nIDGC";
        assert_eq!(one(b85, Codec::Base85), Ok(PAYLOAD.to_vec()));
        assert_eq!(one(b"VPa!sWo7", Codec::Base85), Ok(b"abcdef".to_vec()));
        assert_eq!(one(b"VPa", Codec::Base85), Ok(b"ab".to_vec()));
        assert_eq!(one(b"VPaz", Codec::Base85), Ok(b"abc".to_vec()));
        assert_eq!(one(b"|NsC0", Codec::Base85), Ok(vec![0xff; 4]));
    }

    #[test]
    fn rejects_base85_overflow_and_bad_characters() {
        assert_eq!(err(b"~~~~~", Codec::Base85), ErrorKind::Overflow { at: 0 });
        assert_eq!(
            err(b"ab\"cd", Codec::Base85),
            ErrorKind::BadCharacter { at: 2, byte: b'"' }
        );
    }

    #[test]
    fn decodes_ascii85_as_a85decode_does() {
        let a85 = b"Bl.g-Ec`FBEsci,/ou;ZFCf;;,&(R3.1-";
        assert_eq!(one(a85, Codec::Ascii85), Ok(PAYLOAD.to_vec()));
        assert_eq!(one(b"z@:B", Codec::Ascii85), Ok(b"\0\0\0\0ab".to_vec()));
        assert_eq!(one(b"@:E_W", Codec::Ascii85), Ok(b"abcd".to_vec()));
        assert_eq!(one(b"@:E", Codec::Ascii85), Ok(b"ab".to_vec()));
        assert_eq!(one(b"@", Codec::Ascii85), Ok(Vec::new()));
        assert_eq!(one(b"@:\n E_W", Codec::Ascii85), Ok(b"abcd".to_vec()));
    }

    #[test]
    fn rejects_ascii85_overflow_z_inside_a_group_and_framing() {
        assert_eq!(
            err(b"s8W-\"", Codec::Ascii85),
            ErrorKind::Overflow { at: 0 }
        );
        assert_eq!(
            err(b"ab z", Codec::Ascii85),
            ErrorKind::BadCharacter { at: 3, byte: b'z' }
        );
        // Adobe framing is only accepted with `adobe=True`.
        assert_eq!(
            err(b"<~ab~>", Codec::Ascii85),
            ErrorKind::BadCharacter { at: 1, byte: b'~' }
        );
    }

    #[test]
    fn decodes_hex_as_unhexlify_and_fromhex_do() {
        let hex = b"696d706f7274206f730a6f732e73797374656d2822696422290a";
        assert_eq!(one(hex, Codec::Hex), Ok(PAYLOAD.to_vec()));
        assert_eq!(one(hex, Codec::FromHex), Ok(PAYLOAD.to_vec()));
        assert_eq!(one(b"61 62\n63", Codec::FromHex), Ok(b"abc".to_vec()));
        assert_eq!(one(b"4A4b", Codec::Hex), Ok(b"JK".to_vec()));
    }

    #[test]
    fn rejects_odd_or_non_hex_digits() {
        assert_eq!(err(b"abc", Codec::Hex), ErrorKind::OddLength);
        assert_eq!(
            err(b"abzz", Codec::Hex),
            ErrorKind::BadCharacter { at: 2, byte: b'z' }
        );
        // fromhex: whitespace only between pairs, and no digit left over.
        assert_eq!(
            err(b"6 162", Codec::FromHex),
            ErrorKind::BadCharacter { at: 1, byte: b' ' }
        );
        assert_eq!(
            err(b"616", Codec::FromHex),
            ErrorKind::BadCharacter { at: 3, byte: 0 }
        );
        // unhexlify takes no whitespace at all.
        assert_eq!(
            err(b"61 62 ", Codec::Hex),
            ErrorKind::BadCharacter { at: 2, byte: b' ' }
        );
    }

    #[test]
    fn decodes_rot13_and_reverses_characters() {
        assert_eq!(
            one(b"vzcbeg bf\nbf.flfgrz(\"vq\")\n", Codec::Rot13),
            Ok(PAYLOAD.to_vec())
        );
        assert_eq!(
            one("abc\u{e9}".as_bytes(), Codec::Reverse),
            Ok("\u{e9}cba".as_bytes().to_vec())
        );
        // Bytes that are not UTF-8 reverse as a bytes object does.
        assert_eq!(one(b"\xff\x01", Codec::Reverse), Ok(b"\x01\xff".to_vec()));
        assert_eq!(one(b"same", Codec::Text), Ok(b"same".to_vec()));
    }

    #[test]
    fn decompresses_zlib_gzip_bz2_xz_and_lzma() {
        for (codec, hex) in [
            (Codec::Zlib, ZLIB),
            (Codec::Gzip, GZIP),
            (Codec::Bz2, BZ2),
            (Codec::Lzma, XZ),
            (Codec::Lzma, LZMA_ALONE),
        ] {
            let bytes = unhex(hex);
            assert_eq!(one(&bytes, codec), Ok(PAYLOAD.to_vec()), "{codec} {hex}");
            // Streams in a row decode as one (zlib reads one and ignores the rest, as Python).
            let twice = [bytes.clone(), bytes.clone()].concat();
            let expected = if codec == Codec::Zlib {
                PAYLOAD.to_vec()
            } else {
                PAYLOAD.repeat(2)
            };
            assert_eq!(one(&twice, codec), Ok(expected), "{codec} twice");
            // Trailing bytes that are not a stream are ignored.
            let trailing = [bytes, b"xyz".to_vec()].concat();
            assert_eq!(
                one(&trailing, codec),
                Ok(PAYLOAD.to_vec()),
                "{codec} trailing"
            );
        }
        // gzip skips zero padding after a member.
        let padded = [unhex(GZIP), vec![0; 7]].concat();
        assert_eq!(one(&padded, Codec::Gzip), Ok(PAYLOAD.to_vec()));
    }

    #[test]
    fn rejects_truncated_compressed_streams() {
        for (codec, hex) in [
            (Codec::Zlib, ZLIB),
            (Codec::Gzip, GZIP),
            (Codec::Bz2, BZ2),
            (Codec::Lzma, XZ),
            (Codec::Lzma, LZMA_ALONE),
        ] {
            let bytes = unhex(hex);
            for cut in [3, bytes.len() / 2, bytes.len() - 3] {
                let e = err(&bytes[..cut], codec);
                assert!(
                    matches!(e, ErrorKind::Truncated | ErrorKind::Corrupt(_)),
                    "{codec} cut at {cut}: {e:?}"
                );
            }
            // Cut inside the data (past the header), the stream reads as ended early.
            let e = err(&bytes[..bytes.len() - 3], codec);
            assert!(
                matches!(e, ErrorKind::Truncated) || codec == Codec::Lzma,
                "{codec}: {e:?}"
            );
        }
    }

    /// Found by the `blob_decode` fuzz target: a valid xz stream whose footer's backward size
    /// is all ones made lzma-rs add with overflow (a panic where overflow checks are on).
    #[test]
    fn rejects_an_xz_footer_with_an_all_ones_backward_size() {
        let mut xz = unhex(XZ);
        let n = xz.len();
        xz[n - 8..n - 4].copy_from_slice(&[0xff; 4]);
        assert!(matches!(err(&xz, Codec::Lzma), ErrorKind::Corrupt(_)));
        // The fuzzer's input: the stream cut inside its footer, then all ones.
        let mut cut = unhex(XZ)[..n - 10].to_vec();
        cut.extend_from_slice(&[0xff; 64]);
        assert!(matches!(err(&cut, Codec::Lzma), ErrorKind::Corrupt(_)));
    }

    #[test]
    fn rejects_corrupt_compressed_streams() {
        for codec in [Codec::Zlib, Codec::Gzip, Codec::Bz2, Codec::Lzma] {
            let e = err(b"not compressed at all", codec);
            assert!(matches!(e, ErrorKind::Corrupt(_)), "{codec}: {e:?}");
        }
    }

    #[test]
    fn stops_decompression_bombs_at_the_limit() {
        let zeros = vec![0u8; 1 << 20];
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        z.write_all(&zeros).unwrap();
        let zlib_bomb = z.finish().unwrap();
        let mut g = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        g.write_all(&zeros).unwrap();
        let gzip_bomb = g.finish().unwrap();
        let mut b = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::best());
        b.write_all(&zeros).unwrap();
        let bz2_bomb = b.finish().unwrap();
        // lzma.compress(bytes(1 << 20)) and the same with format=lzma.FORMAT_ALONE (CPython).
        let xz_bomb = unhex(
            "fd377a585a000004e6d6b4460200210116000000742fe5a3efffff00d95d00006ffdffffa3b7ff47\
3e481572396151b89228e6a38607f9eee41e82d32fc53a3c014bb17ec98a8a4d2fa30dd97fa6e38c\
231153e05918c5758ae277f8b6947f0c6ac0de744964e2e95c53b204d8f7440cab5f0d6d46e9e5c3\
7688b79657acb64de1691d6ffb4b88106c42cb883f5c008fd04eaf262894711f3d8f24e1709ea723\
5fec28cb85d195988a7e2a91f22775f719c006984d98fdd8afd5900fc42553f8f591363105a5b0ee\
6fc1704d470cd19111aaad601dbaceb127185c5986e9665258bee976ac59e4e55b0508f9c7daadfc\
fb522af7e495250000000000c2f6ba3ea2706b600001f5018080400079977f47b1c467fb02000000\
0004595a",
        );
        let alone_bomb = unhex(
            "5d00008000ffffffffffffffff00006ffdffffa3b7ff473e481572396151b89228e6a38607f9eee4\
1e82d32fc53a3c014bb17ec98a8a4d2fa30dd97fa6e38c231153e05918c5758ae277f8b6947f0c6a\
c0de744964e2e95c53b204d8f7440cab5f0d6d46e9e5c37688b79657acb64de1691d6ffb4b88106c\
42cb883f5c008fd04eaf262894711f3d8f24e1709ea7235fec28cb85d195988a7e2a91f22775f719\
c006984d98fdd8afd5900fc42553f8f591363105a5b0ee6fc1704d470cd19111aaad601dbaceb127\
185c5986e9665258bee976ac59e4e55b0508f9c7daadfcfb522af7e51cdccfffff82160000",
        );
        let limits = Limits {
            max_decoded_bytes: 4096,
            ..Limits::default()
        };
        for (codec, bomb) in [
            (Codec::Zlib, &zlib_bomb),
            (Codec::Gzip, &gzip_bomb),
            (Codec::Bz2, &bz2_bomb),
            (Codec::Lzma, &xz_bomb),
            (Codec::Lzma, &alone_bomb),
        ] {
            assert_eq!(
                decode_step(bomb, codec, &limits),
                Err(ErrorKind::TooLarge { limit: 4096 }),
                "{codec}"
            );
            assert_eq!(
                decode_step(bomb, codec, &Limits::default()),
                Ok(zeros.clone())
            );
        }
        // Text codecs are held to the same cap, `z` (four zero bytes each) included.
        let zs = vec![b'z'; 2000];
        assert_eq!(
            decode_step(&zs, Codec::Ascii85, &limits),
            Err(ErrorKind::TooLarge { limit: 4096 })
        );
        let long = vec![b'a'; 5000];
        assert_eq!(
            decode_step(&long, Codec::Rot13, &limits),
            Err(ErrorKind::TooLarge { limit: 4096 })
        );
    }

    #[test]
    fn decodes_a_nested_chain_and_names_the_failing_step() {
        // exec(zlib.decompress(base64.b64decode("eJxL…")))
        let chain = [Codec::Base64, Codec::Zlib];
        assert_eq!(
            decode(
                b"eJxLrUhN1lAqKMrMK9Ew1FTSBAAvIwTq",
                &chain,
                &Limits::default()
            ),
            Ok(b"exec(\"print(1)\")".to_vec())
        );
        let e = decode(b"YWJj", &chain, &Limits::default()).unwrap_err();
        assert_eq!((e.step, e.codec), (2, Codec::Zlib));
        assert!(matches!(e.kind, ErrorKind::Corrupt(_)));
        assert_eq!(e.problem().code, "blob-corrupt");
        assert_eq!(
            decode(b"same", &[], &Limits::default()),
            Ok(b"same".to_vec())
        );
    }

    #[test]
    fn refuses_a_chain_longer_than_the_step_limit() {
        let limits = Limits {
            max_steps: 3,
            ..Limits::default()
        };
        let chain = [Codec::Reverse; 4];
        let e = decode(b"abc", &chain, &limits).unwrap_err();
        assert_eq!(
            (e.step, e.kind.clone()),
            (4, ErrorKind::TooManySteps { limit: 3 })
        );
        assert!(e.is_limit());
        let p = e.problem();
        assert_eq!(p.kind, crate::model::problem::ProblemKind::LimitExceeded);
        assert_eq!(
            p.evidence.get("limit").map(String::as_str),
            Some("blob_decode_steps")
        );
        assert_eq!(decode(b"abc", &chain[..3], &limits), Ok(b"cba".to_vec()));
    }

    #[test]
    fn limits_come_from_the_table() {
        let t = table::Limits {
            blob_decoded_bytes: 10,
            blob_decode_steps: 2,
            blob_nesting_depth: 1,
            ..table::Limits::default()
        };
        assert_eq!(
            Limits::from(&t),
            Limits {
                max_decoded_bytes: 10,
                max_steps: 2,
                max_nesting: 1
            }
        );
    }

    #[test]
    fn maps_python_calls_and_encoding_names_to_codecs() {
        assert_eq!(
            Codec::of_call("base64.b64decode", None),
            Some(Codec::Base64)
        );
        assert_eq!(Codec::of_call("binascii.a2b_hex", None), Some(Codec::Hex));
        assert_eq!(Codec::of_call("bytes.fromhex", None), Some(Codec::FromHex));
        assert_eq!(Codec::of_call("lzma.decompress", None), Some(Codec::Lzma));
        for (name, codec) in [
            ("rot13", Codec::Rot13),
            ("ROT-13", Codec::Rot13),
            ("rot_13", Codec::Rot13),
            ("hex", Codec::Hex),
            ("hex_codec", Codec::Hex),
            ("zip", Codec::Zlib),
            ("bz2", Codec::Bz2),
            ("base64", Codec::Base64),
            ("UTF-8", Codec::Text),
        ] {
            assert_eq!(
                Codec::of_call("codecs.decode", Some(name)),
                Some(codec),
                "{name}"
            );
        }
        assert_eq!(Codec::of_call("codecs.decode", Some("punycode")), None);
        assert_eq!(
            Codec::of_call("codecs.encode", Some("rot13")),
            Some(Codec::Rot13)
        );
        assert_eq!(Codec::of_call("codecs.encode", Some("base64")), None);
        assert_eq!(Codec::of_call("bytes", Some("utf-8")), Some(Codec::Text));
        assert_eq!(Codec::of_call("bytes", None), Some(Codec::Text));
        assert_eq!(Codec::of_call("os.system", None), None);
        assert_eq!(Codec::of_method("decode", None), Some(Codec::Text));
        assert_eq!(Codec::of_method("encode", Some("ascii")), Some(Codec::Text));
        assert_eq!(Codec::of_method("decode", Some("rot13")), None);
        assert_eq!(Codec::of_method("strip", None), None);
        let names: std::collections::BTreeSet<_> = Codec::ALL.iter().map(|c| c.name()).collect();
        assert_eq!(names.len(), Codec::ALL.len());
    }

    #[test]
    fn sniffs_what_decoded_bytes_are() {
        for hex in [ZLIB, GZIP, BZ2, XZ, LZMA_ALONE] {
            assert!(
                matches!(sniff(&unhex(hex)), Payload::Compressed(_)),
                "{hex}"
            );
        }
        assert_eq!(sniff(&unhex(ZLIB)), Payload::Compressed(Codec::Zlib));
        // marshal.dumps(compile('import os\nos.system("id")\n', 'x', 'exec'))[:24], CPython 3.11.
        let marshal = unhex("e30000000000000000000000000300000000000000f32e00");
        assert_eq!(sniff(&marshal), Payload::Marshal);
        // pickle.dumps({'a': 1}) starts so; pickle.dumps([1], protocol=0) is all of this.
        assert_eq!(sniff(b"\x80\x04\x95\n\x00\x00\x00\x00"), Payload::Pickle);
        assert_eq!(sniff(b"(lp0\nI1\na."), Payload::Pickle);
        assert_eq!(sniff(b"cos\nsystem\n(S'id'\ntR."), Payload::Pickle);
        assert_eq!(sniff(PAYLOAD), Payload::PythonSource);
        assert_eq!(
            sniff(b"aW1wb3J0IG9zCm9zLnN5c3RlbSgiaWQiKQo="),
            Payload::Encoded(Codec::Base64)
        );
        assert_eq!(
            sniff(b"696d706f7274206f730a6f732e7379"),
            Payload::Encoded(Codec::FromHex)
        );
        assert_eq!(
            sniff(b"NFWXA33SOQQG64YKN5ZS443ZON2GK3JIEJUWIIRJBI======"),
            Payload::Encoded(Codec::Base32)
        );
        assert_eq!(
            sniff(b"X>D+Ca&#bXa|&;BE^~QvbY*QQB57nIDGC"),
            Payload::Encoded(Codec::Base85)
        );
        assert_eq!(
            sniff(b"-_--AD8-aaaaaaaabbbb"),
            Payload::Encoded(Codec::UrlsafeBase64)
        );
        assert_eq!(sniff(b"hello world"), Payload::Text);
        assert_eq!(sniff(b"short"), Payload::Text);
        assert_eq!(sniff(b"\x00\x01\x02"), Payload::Binary);
        assert_eq!(sniff(b"\xff\xfe"), Payload::Binary);
    }
}
