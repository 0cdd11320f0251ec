//! Strict, streaming validator for safetensors files and sharded safetensors checkpoints.
//!
//! A safetensors file is `N` (u64, little endian), then `N` bytes of JSON header, then a byte
//! buffer that the header's tensors must tile exactly. Loaders differ in what they forgive
//! (duplicate keys, padding, unknown fields, trailing bytes), and every forgiven byte is room for
//! a parser differential or a polyglot (a pickle or zip appended after the tensors). So this module
//! accepts only what every loader must agree on: it is deliberately stricter than the official
//! `safetensors` crate, which the tests use as an oracle (anything it rejects, we reject).
//!
//! The header is read with one bounded allocation, checked against [`Limits`] before it is made,
//! and parsed by a small hand-written RFC 8259 parser (serde_json would hide duplicate keys and
//! number spellings). Tensor values are never loaded: [`scan_values`] streams the data region once
//! in blocks to count NaN and infinities (ST002). [`check_shard_index`] compares a
//! `*.safetensors.index.json` with the shards' headers (ST003).
//!
//! # Sub-codes
//!
//! ST001 (`safetensors-invalid`), returned by [`read_header`] / [`parse_header_bytes`]:
//!
//! | sub-code | broken rule | official crate |
//! |---|---|---|
//! | `file-too-small` | the file holds fewer than 8 bytes | rejects |
//! | `header-too-large` | `N` exceeds [`Limits::max_header_bytes`] | rejects (100 MB) |
//! | `header-exceeds-file` | `8 + N` exceeds the file size | rejects |
//! | `truncated` | the file is shorter than its header promises (reader ran dry, or tensors end past the file) | rejects |
//! | `header-not-utf8` | the header is not strict UTF-8 | rejects |
//! | `header-leading-byte` | the header does not start with `{` (whitespace, BOM, garbage) | accepts leading JSON whitespace |
//! | `not-an-object` | the header is a JSON value other than an object | rejects |
//! | `header-invalid-json` | RFC 8259 syntax error (comments, trailing commas, `NaN`, `+1`, `01`, lone surrogates, control characters) | rejects |
//! | `json-too-deep` | nesting deeper than [`Limits::max_json_depth`] | accepts deep unknown fields |
//! | `header-trailing-bytes` | after the closing `}`, a byte other than 0x20 before `8 + N` | accepts tab, LF, CR |
//! | `duplicate-key` | a key repeated in any object, compared after unescaping | accepts (last wins) |
//! | `too-many-tensors` | more tensors than [`Limits::max_tensors`] | accepts |
//! | `metadata-not-string-map` | `__metadata__` is not an object of strings (`null` included) | accepts `null` |
//! | `tensor-not-object` | a tensor entry is not a JSON object | accepts the array form `[dtype, shape, offsets]` |
//! | `tensor-missing-field` | a tensor lacks `dtype`, `shape` or `data_offsets` | rejects |
//! | `tensor-extra-field` | a tensor has any other field | accepts (ignored) |
//! | `invalid-dtype` | dtype is not a string naming a known dtype (case-sensitive) | rejects (accepts `{"F32":null}`) |
//! | `invalid-shape` | shape is not an array of integers in `0..2^64` written plainly | rejects |
//! | `rank-too-large` | more dimensions than [`Limits::max_rank`] | accepts |
//! | `invalid-offsets` | data_offsets is not an array of exactly two such integers | rejects |
//! | `size-overflow` | product of the non-zero dims times the dtype's bits overflows u64 | rejects only when the overflow comes before a zero dim |
//! | `sub-byte-misaligned` | a 4/6-bit tensor does not fill whole bytes | rejects |
//! | `reversed-range` | `begin > end` | rejects |
//! | `size-mismatch` | `end - begin` differs from the size shape and dtype give | rejects |
//! | `does-not-start-at-zero` | the first tensor's data does not begin at 0 | rejects |
//! | `hole` | bytes between two tensors that no tensor covers | rejects |
//! | `overlap` | two tensors share bytes (aliasing included) | rejects |
//! | `trailing-bytes` | bytes after the last tensor (an appended pickle or zip: a polyglot) | rejects |
//!
//! ST003 (`shard-index-mismatch`), returned by [`check_shard_index`]: `index-too-large`,
//! `index-invalid-json`, `duplicate-key`, `shard-name-invalid`, `missing-shard`,
//! `tensor-not-in-shard`, `tensor-not-in-index`, `tensor-in-wrong-shard`, `unreferenced-shard`,
//! `shard-count-mismatch`, `total-size-mismatch` (the only one with `warning` set). See
//! [`code`] for each.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::io::{self, BufRead, Read};

use serde::{Deserialize, Serialize};

/// Stable sub-codes carried by [`Violation::code`].
pub mod code {
    /// The file holds fewer than the 8 bytes of the length prefix.
    pub const FILE_TOO_SMALL: &str = "file-too-small";
    /// The header length exceeds `Limits::max_header_bytes`.
    pub const HEADER_TOO_LARGE: &str = "header-too-large";
    /// `8 + N` is larger than the file.
    pub const HEADER_EXCEEDS_FILE: &str = "header-exceeds-file";
    /// The file (or reader) ends before what the header promises.
    pub const TRUNCATED: &str = "truncated";
    /// The header bytes are not valid UTF-8.
    pub const HEADER_NOT_UTF8: &str = "header-not-utf8";
    /// The header's first byte is not `{`.
    pub const HEADER_LEADING_BYTE: &str = "header-leading-byte";
    /// The header is JSON but not an object.
    pub const NOT_AN_OBJECT: &str = "not-an-object";
    /// The header is not strict RFC 8259 JSON.
    pub const HEADER_INVALID_JSON: &str = "header-invalid-json";
    /// The header nests deeper than `Limits::max_json_depth`.
    pub const JSON_TOO_DEEP: &str = "json-too-deep";
    /// Something other than 0x20 padding follows the header's closing brace.
    pub const HEADER_TRAILING_BYTES: &str = "header-trailing-bytes";
    /// A key appears twice in one object (after unescaping), or twice in a shard index.
    pub const DUPLICATE_KEY: &str = "duplicate-key";
    /// More tensors than `Limits::max_tensors`.
    pub const TOO_MANY_TENSORS: &str = "too-many-tensors";
    /// `__metadata__` is not an object mapping strings to strings.
    pub const METADATA_NOT_STRING_MAP: &str = "metadata-not-string-map";
    /// A tensor entry is not a JSON object.
    pub const TENSOR_NOT_OBJECT: &str = "tensor-not-object";
    /// A tensor entry lacks `dtype`, `shape` or `data_offsets`.
    pub const TENSOR_MISSING_FIELD: &str = "tensor-missing-field";
    /// A tensor entry has a field other than `dtype`, `shape`, `data_offsets`.
    pub const TENSOR_EXTRA_FIELD: &str = "tensor-extra-field";
    /// The dtype is not a string naming a known dtype.
    pub const INVALID_DTYPE: &str = "invalid-dtype";
    /// The shape is not an array of plain non-negative integers below 2^64.
    pub const INVALID_SHAPE: &str = "invalid-shape";
    /// The shape has more dimensions than `Limits::max_rank`.
    pub const RANK_TOO_LARGE: &str = "rank-too-large";
    /// data_offsets is not an array of exactly two plain non-negative integers.
    pub const INVALID_OFFSETS: &str = "invalid-offsets";
    /// Non-zero dims times dtype bits overflow u64, whatever the order of dims.
    pub const SIZE_OVERFLOW: &str = "size-overflow";
    /// A sub-byte tensor does not fill a whole number of bytes.
    pub const SUB_BYTE_MISALIGNED: &str = "sub-byte-misaligned";
    /// `begin > end`.
    pub const REVERSED_RANGE: &str = "reversed-range";
    /// `end - begin` differs from the size given by shape and dtype.
    pub const SIZE_MISMATCH: &str = "size-mismatch";
    /// The first tensor's data does not start at byte 0 of the buffer.
    pub const DOES_NOT_START_AT_ZERO: &str = "does-not-start-at-zero";
    /// Bytes between two tensors belong to none.
    pub const HOLE: &str = "hole";
    /// Two tensors share bytes.
    pub const OVERLAP: &str = "overlap";
    /// Bytes follow the last tensor.
    pub const TRAILING_BYTES: &str = "trailing-bytes";
    /// The shard index exceeds `Limits::max_index_bytes`.
    pub const INDEX_TOO_LARGE: &str = "index-too-large";
    /// The shard index is not JSON of the expected shape.
    pub const INDEX_INVALID_JSON: &str = "index-invalid-json";
    /// A shard name in the index is absolute, has `..`, a backslash or is empty.
    pub const SHARD_NAME_INVALID: &str = "shard-name-invalid";
    /// The index names a shard that is not present.
    pub const MISSING_SHARD: &str = "missing-shard";
    /// The index maps a tensor to a shard whose header lacks it.
    pub const TENSOR_NOT_IN_SHARD: &str = "tensor-not-in-shard";
    /// A shard holds a tensor the index does not list.
    pub const TENSOR_NOT_IN_INDEX: &str = "tensor-not-in-index";
    /// A shard holds a tensor that the index maps to another shard.
    pub const TENSOR_IN_WRONG_SHARD: &str = "tensor-in-wrong-shard";
    /// A shard-named file next to the index that the index does not reference.
    pub const UNREFERENCED_SHARD: &str = "unreferenced-shard";
    /// `-of-MMMMM` disagrees with the shards the index references.
    pub const SHARD_COUNT_MISMATCH: &str = "shard-count-mismatch";
    /// `metadata.total_size` differs from the summed tensor bytes (warning).
    pub const TOTAL_SIZE_MISMATCH: &str = "total-size-mismatch";
}

/// Length of the little-endian u64 that starts every safetensors file.
const PREFIX_LEN: u64 = 8;

/// Caps applied before anything read from a file is allocated or looped over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Largest accepted header length `N`, in bytes (default 100,000,000, the official limit).
    pub max_header_bytes: u64,
    /// Most tensors one file may declare.
    pub max_tensors: usize,
    /// Deepest JSON nesting accepted in a header (a valid header needs 3).
    pub max_json_depth: usize,
    /// Most dimensions one tensor may have.
    pub max_rank: usize,
    /// Largest accepted shard index file, in bytes.
    pub max_index_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_header_bytes: 100_000_000,
            max_tensors: 1_000_000,
            max_json_depth: 64,
            max_rank: 64,
            max_index_bytes: 64 * 1024 * 1024,
        }
    }
}

/// Element types of the safetensors format.
#[allow(non_camel_case_types)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Dtype {
    /// Boolean, one byte.
    BOOL,
    /// Unsigned 8-bit integer.
    U8,
    /// Signed 8-bit integer.
    I8,
    /// Signed 16-bit integer.
    I16,
    /// Unsigned 16-bit integer.
    U16,
    /// IEEE half precision.
    F16,
    /// bfloat16.
    BF16,
    /// Signed 32-bit integer.
    I32,
    /// Unsigned 32-bit integer.
    U32,
    /// IEEE single precision.
    F32,
    /// Complex of two IEEE single precision floats.
    C64,
    /// IEEE double precision.
    F64,
    /// Signed 64-bit integer.
    I64,
    /// Unsigned 64-bit integer.
    U64,
    /// FP8 with 5 exponent bits (IEEE-like: has infinities).
    F8_E5M2,
    /// FP8 with 4 exponent bits, no infinities, NaN is S.1111.111.
    F8_E4M3,
    /// MX scale: 8 exponent bits, NaN is 0xFF.
    F8_E8M0,
    /// FP8 E4M3 "finite, unsigned zero": NaN is 0x80 only.
    F8_E4M3FNUZ,
    /// FP8 E5M2 "finite, unsigned zero": NaN is 0x80 only.
    F8_E5M2FNUZ,
    /// MXFP4, 4 bits.
    F4,
    /// MXFP6 E2M3, 6 bits.
    F6_E2M3,
    /// MXFP6 E3M2, 6 bits.
    F6_E3M2,
}

impl Dtype {
    /// Every dtype, in declaration order.
    pub const ALL: [Dtype; 22] = [
        Dtype::BOOL,
        Dtype::U8,
        Dtype::I8,
        Dtype::I16,
        Dtype::U16,
        Dtype::F16,
        Dtype::BF16,
        Dtype::I32,
        Dtype::U32,
        Dtype::F32,
        Dtype::C64,
        Dtype::F64,
        Dtype::I64,
        Dtype::U64,
        Dtype::F8_E5M2,
        Dtype::F8_E4M3,
        Dtype::F8_E8M0,
        Dtype::F8_E4M3FNUZ,
        Dtype::F8_E5M2FNUZ,
        Dtype::F4,
        Dtype::F6_E2M3,
        Dtype::F6_E3M2,
    ];

    /// Size of one element in bits.
    pub fn bits(self) -> u32 {
        match self {
            Dtype::F4 => 4,
            Dtype::F6_E2M3 | Dtype::F6_E3M2 => 6,
            Dtype::BOOL
            | Dtype::U8
            | Dtype::I8
            | Dtype::F8_E5M2
            | Dtype::F8_E4M3
            | Dtype::F8_E8M0
            | Dtype::F8_E4M3FNUZ
            | Dtype::F8_E5M2FNUZ => 8,
            Dtype::I16 | Dtype::U16 | Dtype::F16 | Dtype::BF16 => 16,
            Dtype::I32 | Dtype::U32 | Dtype::F32 => 32,
            Dtype::C64 | Dtype::F64 | Dtype::I64 | Dtype::U64 => 64,
        }
    }

    /// The exact spelling in a header.
    pub fn name(self) -> &'static str {
        match self {
            Dtype::BOOL => "BOOL",
            Dtype::U8 => "U8",
            Dtype::I8 => "I8",
            Dtype::I16 => "I16",
            Dtype::U16 => "U16",
            Dtype::F16 => "F16",
            Dtype::BF16 => "BF16",
            Dtype::I32 => "I32",
            Dtype::U32 => "U32",
            Dtype::F32 => "F32",
            Dtype::C64 => "C64",
            Dtype::F64 => "F64",
            Dtype::I64 => "I64",
            Dtype::U64 => "U64",
            Dtype::F8_E5M2 => "F8_E5M2",
            Dtype::F8_E4M3 => "F8_E4M3",
            Dtype::F8_E8M0 => "F8_E8M0",
            Dtype::F8_E4M3FNUZ => "F8_E4M3FNUZ",
            Dtype::F8_E5M2FNUZ => "F8_E5M2FNUZ",
            Dtype::F4 => "F4",
            Dtype::F6_E2M3 => "F6_E2M3",
            Dtype::F6_E3M2 => "F6_E3M2",
        }
    }

    /// Whether the dtype is a floating-point (or complex) type.
    pub fn is_float(self) -> bool {
        !matches!(
            self,
            Dtype::BOOL
                | Dtype::U8
                | Dtype::I8
                | Dtype::I16
                | Dtype::U16
                | Dtype::I32
                | Dtype::U32
                | Dtype::I64
                | Dtype::U64
        )
    }

    /// Looks a header spelling up, case-sensitively.
    pub fn from_name(name: &str) -> Option<Dtype> {
        Dtype::ALL.into_iter().find(|d| d.name() == name)
    }
}

impl Serialize for Dtype {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// One tensor as the header declares it, after validation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TensorInfo {
    /// Tensor name (JSON-unescaped).
    pub name: String,
    /// Element type.
    pub dtype: Dtype,
    /// Dimensions.
    pub shape: Vec<u64>,
    /// First byte in the data buffer (relative to `8 + N`).
    pub begin: u64,
    /// One past the last byte in the data buffer.
    pub end: u64,
}

impl TensorInfo {
    /// Number of elements (0 when any dimension is 0).
    pub fn elements(&self) -> u64 {
        self.shape
            .iter()
            .try_fold(1u64, |acc, &d| acc.checked_mul(d))
            .unwrap_or(0)
    }

    /// Size of the tensor's data in bytes.
    pub fn byte_len(&self) -> u64 {
        self.end.saturating_sub(self.begin)
    }
}

/// A validated safetensors header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// `N`, the JSON header length (padding included).
    pub header_len: u64,
    /// Tensors sorted by `(begin, end, name)`: the order of their bytes in the file.
    pub tensors: Vec<TensorInfo>,
    /// The `__metadata__` map, when present.
    pub metadata: Option<BTreeMap<String, String>>,
}

impl Header {
    /// File offset of the first data byte (`8 + N`).
    pub fn data_start(&self) -> u64 {
        PREFIX_LEN.saturating_add(self.header_len)
    }

    /// Length of the data buffer the tensors tile.
    pub fn data_len(&self) -> u64 {
        self.tensors.iter().map(|t| t.end).max().unwrap_or(0)
    }
}

/// One broken rule: a stable sub-code plus the data needed to report it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("{code}: {message}")]
pub struct Violation {
    /// Stable kebab-case sub-code, one of [`code`].
    pub code: &'static str,
    /// Lowercase message with the offending data.
    pub message: String,
    /// The tensor concerned, where one is.
    pub tensor: Option<String>,
    /// Byte position in the file (JSON errors: `8 +` position in the header).
    pub offset: Option<u64>,
    /// For shard index checks: the shard file concerned, where one is.
    pub shard: Option<String>,
    /// True for findings that are suspicious rather than broken (`total-size-mismatch`).
    pub warning: bool,
}

impl Violation {
    fn new(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            tensor: None,
            offset: None,
            shard: None,
            warning: false,
        }
    }

    fn at(mut self, offset: u64) -> Self {
        self.offset = Some(offset);
        self
    }

    fn tensor(mut self, name: &str) -> Self {
        self.tensor = Some(name.to_owned());
        self
    }

    fn shard(mut self, name: &str) -> Self {
        self.shard = Some(name.to_owned());
        self
    }
}

/// Why [`read_header`] could not produce a header.
#[derive(Debug, thiserror::Error)]
pub enum HeaderError {
    /// The reader failed (not a property of the file's format).
    #[error("reading safetensors header: {0}")]
    Io(#[from] io::Error),
    /// The file breaks a format rule.
    #[error(transparent)]
    Invalid(Violation),
}

/// Reads exactly `8 + N` bytes from `r` (positioned at the file start) and validates rules 1-8.
///
/// `file_size` is the size of the whole file; the reader is left positioned at the data buffer,
/// ready for [`scan_values`]. `N` is checked against the limit and the file size before the one
/// allocation of `N` bytes.
pub fn read_header<R: Read>(
    r: &mut R,
    file_size: u64,
    limits: &Limits,
) -> Result<Header, HeaderError> {
    if file_size < PREFIX_LEN {
        return Err(HeaderError::Invalid(file_too_small(file_size)));
    }
    let mut prefix = [0u8; 8];
    if let Err(e) = r.read_exact(&mut prefix) {
        return Err(match e.kind() {
            io::ErrorKind::UnexpectedEof => HeaderError::Invalid(
                Violation::new(
                    code::TRUNCATED,
                    "file ended inside the 8-byte length prefix",
                )
                .at(0),
            ),
            _ => HeaderError::Io(e),
        });
    }
    let (n, n_usize) = check_header_len(u64::from_le_bytes(prefix), file_size, limits)
        .map_err(HeaderError::Invalid)?;
    let mut json = Vec::with_capacity(n_usize);
    r.by_ref().take(n).read_to_end(&mut json)?;
    if json.len() != n_usize {
        return Err(HeaderError::Invalid(
            Violation::new(
                code::TRUNCATED,
                format!("file ended after {} of {n} header bytes", json.len()),
            )
            .at(PREFIX_LEN.saturating_add(json.len() as u64)),
        ));
    }
    parse_json_header(&json, n, file_size, limits).map_err(HeaderError::Invalid)
}

/// Validates rules 1-8 on in-memory bytes: `bytes` is a prefix of the file holding at least
/// `8 + N` bytes (the whole file is fine); `file_size` is authoritative for the tiling checks.
pub fn parse_header_bytes(
    bytes: &[u8],
    file_size: u64,
    limits: &Limits,
) -> Result<Header, Violation> {
    if file_size < PREFIX_LEN {
        return Err(file_too_small(file_size));
    }
    let Some(prefix) = bytes.first_chunk::<8>() else {
        return Err(Violation::new(
            code::TRUNCATED,
            format!(
                "only {} bytes given, the length prefix needs 8",
                bytes.len()
            ),
        )
        .at(0));
    };
    let (n, n_usize) = check_header_len(u64::from_le_bytes(*prefix), file_size, limits)?;
    let Some(json) = bytes.get(8..).and_then(|rest| rest.get(..n_usize)) else {
        return Err(Violation::new(
            code::TRUNCATED,
            format!(
                "only {} bytes given, the header needs {}",
                bytes.len(),
                n_usize.saturating_add(8)
            ),
        )
        .at(bytes.len() as u64));
    };
    parse_json_header(json, n, file_size, limits)
}

fn file_too_small(file_size: u64) -> Violation {
    Violation::new(
        code::FILE_TOO_SMALL,
        format!("file holds {file_size} bytes, fewer than the 8-byte length prefix"),
    )
    .at(0)
}

/// Rule 1: checks `N` against the limit and the file before anything of size `N` is allocated.
fn check_header_len(n: u64, file_size: u64, limits: &Limits) -> Result<(u64, usize), Violation> {
    if n > limits.max_header_bytes {
        return Err(Violation::new(
            code::HEADER_TOO_LARGE,
            format!(
                "header length {n} exceeds the limit of {} bytes",
                limits.max_header_bytes
            ),
        )
        .at(0));
    }
    if n > file_size.saturating_sub(PREFIX_LEN) {
        return Err(Violation::new(
            code::HEADER_EXCEEDS_FILE,
            format!("header length {n} plus 8 exceeds the file size {file_size}"),
        )
        .at(0));
    }
    let Ok(n_usize) = usize::try_from(n) else {
        return Err(Violation::new(
            code::HEADER_TOO_LARGE,
            format!("header length {n} does not fit in memory addresses"),
        )
        .at(0));
    };
    Ok((n, n_usize))
}

/// Rules 2-8 on the `N` header bytes.
fn parse_json_header(
    json: &[u8],
    n: u64,
    file_size: u64,
    limits: &Limits,
) -> Result<Header, Violation> {
    let text = match std::str::from_utf8(json) {
        Ok(t) => t,
        Err(e) => {
            return Err(Violation::new(
                code::HEADER_NOT_UTF8,
                format!("header is not utf-8 after {} valid bytes", e.valid_up_to()),
            )
            .at(PREFIX_LEN.saturating_add(e.valid_up_to() as u64)));
        }
    };
    check_syntax(text, limits)?;
    let (tensors, metadata) = Schema::new(text, limits).parse()?;
    let data_start = PREFIX_LEN.saturating_add(n);
    let data_len = file_size.saturating_sub(data_start);
    let mut tensors = tensors;
    tensors.sort_by(|a, b| (a.begin, a.end, &a.name).cmp(&(b.begin, b.end, &b.name)));
    check_tiling(&tensors, data_start, data_len, file_size)?;
    Ok(Header {
        header_len: n,
        tensors,
        metadata,
    })
}

/// Phase 1 of the header: byte 0 is `{`, the whole text is one strict JSON value within the
/// depth limit, and only 0x20 padding follows it. Tab/newline padding is refused because a
/// different JSON reader could stop elsewhere (parser differential).
fn check_syntax(text: &str, limits: &Limits) -> Result<(), Violation> {
    let mut p = Json::new(text);
    match p.peek() {
        Some(b'{') => {}
        Some(c @ (b'[' | b'"' | b't' | b'f' | b'n' | b'-' | b'0'..=b'9')) => {
            return Err(p.fail(
                code::NOT_AN_OBJECT,
                format!(
                    "header starts with {:?}: top level must be a json object",
                    char::from(c)
                ),
            ));
        }
        Some(c) => {
            return Err(p.fail(
                code::HEADER_LEADING_BYTE,
                format!("header starts with byte 0x{c:02x}, not '{{'"),
            ));
        }
        None => return Err(p.fail(code::HEADER_INVALID_JSON, "header is empty")),
    }
    p.value(0, limits.max_json_depth)?;
    let rest = text.as_bytes().get(p.pos..).unwrap_or_default();
    if let Some(i) = rest.iter().position(|&c| c != b' ') {
        let bad = rest.get(i).copied().unwrap_or_default();
        p.pos = p.pos.saturating_add(i);
        return Err(p.fail(
            code::HEADER_TRAILING_BYTES,
            format!(
                "byte 0x{bad:02x} after the header's closing brace; only spaces (0x20) may pad it"
            ),
        ));
    }
    Ok(())
}

/// A cursor over the header text with strict RFC 8259 lexing. Positions are header-relative;
/// violations report `8 + pos`.
struct Json<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Json<'a> {
    fn new(text: &'a str) -> Self {
        Self { text, pos: 0 }
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    fn bump(&mut self) {
        self.pos = self.pos.saturating_add(1);
    }

    fn file_offset(&self, pos: usize) -> u64 {
        PREFIX_LEN.saturating_add(pos as u64)
    }

    fn fail(&self, code: &'static str, message: impl Into<String>) -> Violation {
        Violation::new(code, message).at(self.file_offset(self.pos))
    }

    fn found(&self) -> String {
        match self.peek() {
            Some(c) if c.is_ascii_graphic() => format!("{:?}", char::from(c)),
            Some(c) => format!("byte 0x{c:02x}"),
            None => "end of header".to_owned(),
        }
    }

    fn invalid(&self, expected: &str) -> Violation {
        self.fail(
            code::HEADER_INVALID_JSON,
            format!("expected {expected}, found {}", self.found()),
        )
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.bump();
        }
    }

    fn expect_byte(&mut self, c: u8) -> Result<(), Violation> {
        if self.peek() == Some(c) {
            self.bump();
            Ok(())
        } else {
            Err(self.invalid(&format!("{:?}", char::from(c))))
        }
    }

    /// Recursive descent over any value; recursion is bounded by `max_depth`.
    fn value(&mut self, depth: usize, max_depth: usize) -> Result<(), Violation> {
        match self.peek() {
            Some(b'{') | Some(b'[') => {
                if depth >= max_depth {
                    return Err(self.fail(
                        code::JSON_TOO_DEEP,
                        format!("json nesting exceeds the limit of {max_depth}"),
                    ));
                }
                let object = self.peek() == Some(b'{');
                let close = if object { b'}' } else { b']' };
                self.bump();
                self.skip_ws();
                if self.peek() == Some(close) {
                    self.bump();
                    return Ok(());
                }
                loop {
                    self.skip_ws();
                    if object {
                        self.string(None)?;
                        self.skip_ws();
                        self.expect_byte(b':')?;
                        self.skip_ws();
                    }
                    self.value(depth.saturating_add(1), max_depth)?;
                    self.skip_ws();
                    match self.peek() {
                        Some(b',') => self.bump(),
                        Some(c) if c == close => {
                            self.bump();
                            return Ok(());
                        }
                        _ => {
                            return Err(self.invalid(if object {
                                "',' or '}'"
                            } else {
                                "',' or ']'"
                            }));
                        }
                    }
                }
            }
            Some(b'"') => self.string(None),
            Some(b't') => self.literal("true"),
            Some(b'f') => self.literal("false"),
            Some(b'n') => self.literal("null"),
            Some(b'-' | b'0'..=b'9') => self.number().map(|_| ()),
            _ => Err(self.invalid("a json value")),
        }
    }

    fn literal(&mut self, word: &str) -> Result<(), Violation> {
        let end = self.pos.saturating_add(word.len());
        if self.text.as_bytes().get(self.pos..end) == Some(word.as_bytes()) {
            self.pos = end;
            Ok(())
        } else {
            Err(self.invalid(word))
        }
    }

    /// Lexes a number with the RFC 8259 grammar (no `+`, no leading zeros, no bare `.`) and
    /// returns its exact spelling.
    fn number(&mut self) -> Result<&'a str, Violation> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.bump();
        }
        match self.peek() {
            Some(b'0') => {
                self.bump();
                if matches!(self.peek(), Some(b'0'..=b'9')) {
                    return Err(self.fail(code::HEADER_INVALID_JSON, "number with a leading zero"));
                }
            }
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.invalid("a digit")),
        }
        if self.peek() == Some(b'.') {
            self.bump();
            self.required_digits()?;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.bump();
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.bump();
            }
            self.required_digits()?;
        }
        Ok(self.text.get(start..self.pos).unwrap_or_default())
    }

    fn digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.bump();
        }
    }

    fn required_digits(&mut self) -> Result<(), Violation> {
        if !matches!(self.peek(), Some(b'0'..=b'9')) {
            return Err(self.invalid("a digit"));
        }
        self.digits();
        Ok(())
    }

    /// Lexes a string, unescaping into `out` when given. Lone surrogates are refused: they have
    /// no UTF-8 form, and loaders that replace them with U+FFFD would merge distinct names.
    fn string(&mut self, mut out: Option<&mut String>) -> Result<(), Violation> {
        self.expect_byte(b'"')?;
        loop {
            let start = self.pos;
            while let Some(c) = self.peek() {
                if c == b'"' || c == b'\\' || c < 0x20 {
                    break;
                }
                self.bump();
            }
            if let Some(o) = out.as_deref_mut() {
                o.push_str(self.text.get(start..self.pos).unwrap_or_default());
            }
            match self.peek() {
                None => return Err(self.fail(code::HEADER_INVALID_JSON, "unterminated string")),
                Some(b'"') => {
                    self.bump();
                    return Ok(());
                }
                Some(b'\\') => {
                    self.bump();
                    let ch = self.escape()?;
                    if let Some(o) = out.as_deref_mut() {
                        o.push(ch);
                    }
                }
                Some(c) => {
                    return Err(self.fail(
                        code::HEADER_INVALID_JSON,
                        format!("unescaped control character 0x{c:02x} in string"),
                    ));
                }
            }
        }
    }

    fn escape(&mut self) -> Result<char, Violation> {
        let simple = match self.peek() {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                self.bump();
                return self.unicode_escape();
            }
            _ => return Err(self.invalid("an escape character")),
        };
        self.bump();
        Ok(simple)
    }

    fn unicode_escape(&mut self) -> Result<char, Violation> {
        let at = self.pos;
        let first = self.hex4()?;
        let scalar = match first {
            0xD800..=0xDBFF => {
                if self.peek() != Some(b'\\')
                    || self.text.as_bytes().get(self.pos.saturating_add(1)) != Some(&b'u')
                {
                    return Err(Violation::new(
                        code::HEADER_INVALID_JSON,
                        format!("lone high surrogate \\u{first:04x} in string"),
                    )
                    .at(self.file_offset(at)));
                }
                self.pos = self.pos.saturating_add(2);
                let second = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&second) {
                    return Err(Violation::new(
                        code::HEADER_INVALID_JSON,
                        format!("high surrogate \\u{first:04x} followed by \\u{second:04x}, not a low surrogate"),
                    )
                    .at(self.file_offset(at)));
                }
                0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
            }
            0xDC00..=0xDFFF => {
                return Err(Violation::new(
                    code::HEADER_INVALID_JSON,
                    format!("lone low surrogate \\u{first:04x} in string"),
                )
                .at(self.file_offset(at)));
            }
            other => other,
        };
        char::from_u32(scalar).ok_or_else(|| {
            Violation::new(
                code::HEADER_INVALID_JSON,
                format!("invalid code point {scalar:#x}"),
            )
            .at(self.file_offset(at))
        })
    }

    fn hex4(&mut self) -> Result<u32, Violation> {
        let mut v = 0u32;
        for _ in 0..4 {
            let d = match self.peek() {
                Some(c @ b'0'..=b'9') => c - b'0',
                Some(c @ b'a'..=b'f') => c - b'a' + 10,
                Some(c @ b'A'..=b'F') => c - b'A' + 10,
                _ => return Err(self.invalid("four hex digits")),
            };
            v = (v << 4) | u32::from(d);
            self.bump();
        }
        Ok(v)
    }
}

/// Parses a number token as a plain non-negative integer: digits only (the lexer already refused
/// leading zeros), no `-0`, no fraction, no exponent, below 2^64.
fn plain_u64(token: &str) -> Option<u64> {
    if token.is_empty() || !token.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    token.parse::<u64>().ok()
}

/// Phase 2 of the header: the safetensors schema on text already known to be strict JSON.
struct Schema<'a> {
    p: Json<'a>,
    limits: &'a Limits,
}

type Parsed = (Vec<TensorInfo>, Option<BTreeMap<String, String>>);

impl<'a> Schema<'a> {
    fn new(text: &'a str, limits: &'a Limits) -> Self {
        Self {
            p: Json::new(text),
            limits,
        }
    }

    fn parse(mut self) -> Result<Parsed, Violation> {
        let mut tensors = Vec::new();
        let mut names: HashSet<String> = HashSet::new();
        let mut metadata = None;
        self.p.expect_byte(b'{')?;
        self.p.skip_ws();
        if self.p.peek() == Some(b'}') {
            return Ok((tensors, metadata));
        }
        loop {
            self.p.skip_ws();
            let key_pos = self.p.pos;
            let mut key = String::new();
            self.p.string(Some(&mut key))?;
            self.p.skip_ws();
            self.p.expect_byte(b':')?;
            self.p.skip_ws();
            if key == "__metadata__" {
                if metadata.is_some() {
                    return Err(
                        Violation::new(code::DUPLICATE_KEY, "__metadata__ appears twice")
                            .at(self.p.file_offset(key_pos)),
                    );
                }
                metadata = Some(self.metadata()?);
            } else {
                // Two entries for one name: loaders keep the first or the last, so a reviewer
                // and a loader can see different weights.
                if names.contains(&key) {
                    return Err(Violation::new(
                        code::DUPLICATE_KEY,
                        format!("tensor {key:?} appears twice"),
                    )
                    .tensor(&key)
                    .at(self.p.file_offset(key_pos)));
                }
                if tensors.len() >= self.limits.max_tensors {
                    return Err(Violation::new(
                        code::TOO_MANY_TENSORS,
                        format!("more than {} tensors", self.limits.max_tensors),
                    )
                    .tensor(&key)
                    .at(self.p.file_offset(key_pos)));
                }
                let t = self.tensor(key.clone(), key_pos)?;
                names.insert(key);
                tensors.push(t);
            }
            self.p.skip_ws();
            match self.p.peek() {
                Some(b',') => self.p.bump(),
                Some(b'}') => return Ok((tensors, metadata)),
                _ => return Err(self.p.invalid("',' or '}'")),
            }
        }
    }

    fn metadata(&mut self) -> Result<BTreeMap<String, String>, Violation> {
        let mut map = BTreeMap::new();
        if self.p.peek() != Some(b'{') {
            return Err(self.p.fail(
                code::METADATA_NOT_STRING_MAP,
                format!(
                    "__metadata__ must be an object of strings, found {}",
                    self.p.found()
                ),
            ));
        }
        self.p.bump();
        self.p.skip_ws();
        if self.p.peek() == Some(b'}') {
            self.p.bump();
            return Ok(map);
        }
        loop {
            self.p.skip_ws();
            let key_pos = self.p.pos;
            let mut key = String::new();
            self.p.string(Some(&mut key))?;
            if map.contains_key(&key) {
                return Err(Violation::new(
                    code::DUPLICATE_KEY,
                    format!("__metadata__ key {key:?} appears twice"),
                )
                .at(self.p.file_offset(key_pos)));
            }
            self.p.skip_ws();
            self.p.expect_byte(b':')?;
            self.p.skip_ws();
            if self.p.peek() != Some(b'"') {
                return Err(self.p.fail(
                    code::METADATA_NOT_STRING_MAP,
                    format!(
                        "__metadata__ value for {key:?} must be a string, found {}",
                        self.p.found()
                    ),
                ));
            }
            let mut value = String::new();
            self.p.string(Some(&mut value))?;
            map.insert(key, value);
            self.p.skip_ws();
            match self.p.peek() {
                Some(b',') => self.p.bump(),
                Some(b'}') => {
                    self.p.bump();
                    return Ok(map);
                }
                _ => return Err(self.p.invalid("',' or '}'")),
            }
        }
    }

    fn tensor(&mut self, name: String, key_pos: usize) -> Result<TensorInfo, Violation> {
        let entry_pos = self.p.pos;
        if self.p.peek() != Some(b'{') {
            return Err(self
                .p
                .fail(
                    code::TENSOR_NOT_OBJECT,
                    format!(
                        "tensor {name:?} must be an object, found {}",
                        self.p.found()
                    ),
                )
                .tensor(&name));
        }
        self.p.bump();
        let mut dtype = None;
        let mut shape = None;
        let mut offsets = None;
        self.p.skip_ws();
        if self.p.peek() == Some(b'}') {
            self.p.bump();
        } else {
            loop {
                self.p.skip_ws();
                let field_pos = self.p.pos;
                let mut field = String::new();
                self.p.string(Some(&mut field))?;
                self.p.skip_ws();
                self.p.expect_byte(b':')?;
                self.p.skip_ws();
                let already = match field.as_str() {
                    "dtype" => dtype.is_some(),
                    "shape" => shape.is_some(),
                    "data_offsets" => offsets.is_some(),
                    // Unknown fields are ignored by loaders and could smuggle data past review.
                    _ => {
                        return Err(Violation::new(
                            code::TENSOR_EXTRA_FIELD,
                            format!("tensor {name:?} has unexpected field {field:?}"),
                        )
                        .tensor(&name)
                        .at(self.p.file_offset(field_pos)));
                    }
                };
                if already {
                    return Err(Violation::new(
                        code::DUPLICATE_KEY,
                        format!("tensor {name:?} has field {field:?} twice"),
                    )
                    .tensor(&name)
                    .at(self.p.file_offset(field_pos)));
                }
                match field.as_str() {
                    "dtype" => dtype = Some(self.dtype(&name)?),
                    "shape" => shape = Some(self.shape(&name)?),
                    _ => offsets = Some(self.offsets(&name)?),
                }
                self.p.skip_ws();
                match self.p.peek() {
                    Some(b',') => self.p.bump(),
                    Some(b'}') => {
                        self.p.bump();
                        break;
                    }
                    _ => return Err(self.p.invalid("',' or '}'")),
                }
            }
        }
        let missing: Vec<&str> = [
            ("dtype", dtype.is_none()),
            ("shape", shape.is_none()),
            ("data_offsets", offsets.is_none()),
        ]
        .into_iter()
        .filter_map(|(f, gone)| gone.then_some(f))
        .collect();
        let (Some(dtype), Some(shape), Some((begin, end))) = (dtype, shape, offsets) else {
            return Err(Violation::new(
                code::TENSOR_MISSING_FIELD,
                format!("tensor {name:?} lacks {}", missing.join(", ")),
            )
            .tensor(&name)
            .at(self.p.file_offset(entry_pos)));
        };
        let t = TensorInfo {
            name,
            dtype,
            shape,
            begin,
            end,
        };
        check_tensor_size(&t).map_err(|v| v.tensor(&t.name).at(self.p.file_offset(key_pos)))?;
        Ok(t)
    }

    fn dtype(&mut self, name: &str) -> Result<Dtype, Violation> {
        let at = self.p.pos;
        if self.p.peek() != Some(b'"') {
            return Err(self
                .p
                .fail(
                    code::INVALID_DTYPE,
                    format!(
                        "dtype of {name:?} must be a string, found {}",
                        self.p.found()
                    ),
                )
                .tensor(name));
        }
        let mut s = String::new();
        self.p.string(Some(&mut s))?;
        Dtype::from_name(&s).ok_or_else(|| {
            Violation::new(
                code::INVALID_DTYPE,
                format!("unknown dtype {s:?} for tensor {name:?}"),
            )
            .tensor(name)
            .at(self.p.file_offset(at))
        })
    }

    /// Lexes `[u64, ...]`; `max_len` bounds the vector before each push.
    fn u64_array(
        &mut self,
        name: &str,
        what: &'static str,
        sub_code: &'static str,
        max_len: usize,
    ) -> Result<Vec<u64>, Violation> {
        let mut out = Vec::new();
        if self.p.peek() != Some(b'[') {
            return Err(self
                .p
                .fail(
                    sub_code,
                    format!(
                        "{what} of {name:?} must be an array, found {}",
                        self.p.found()
                    ),
                )
                .tensor(name));
        }
        self.p.bump();
        self.p.skip_ws();
        if self.p.peek() == Some(b']') {
            self.p.bump();
            return Ok(out);
        }
        loop {
            self.p.skip_ws();
            let at = self.p.pos;
            if !matches!(self.p.peek(), Some(b'-' | b'0'..=b'9')) {
                return Err(self
                    .p
                    .fail(
                        sub_code,
                        format!(
                            "{what} of {name:?} must hold integers, found {}",
                            self.p.found()
                        ),
                    )
                    .tensor(name));
            }
            let token = self.p.number()?;
            let Some(v) = plain_u64(token) else {
                return Err(Violation::new(
                    sub_code,
                    format!("{what} of {name:?} holds {token}, not an integer in 0..2^64"),
                )
                .tensor(name)
                .at(self.p.file_offset(at)));
            };
            if out.len() >= max_len {
                let (c, m) = if sub_code == code::INVALID_SHAPE {
                    (
                        code::RANK_TOO_LARGE,
                        format!("tensor {name:?} has more than {max_len} dimensions"),
                    )
                } else {
                    (
                        sub_code,
                        format!("{what} of {name:?} must hold exactly {max_len} integers"),
                    )
                };
                return Err(Violation::new(c, m).tensor(name).at(self.p.file_offset(at)));
            }
            out.push(v);
            self.p.skip_ws();
            match self.p.peek() {
                Some(b',') => self.p.bump(),
                Some(b']') => {
                    self.p.bump();
                    return Ok(out);
                }
                _ => return Err(self.p.invalid("',' or ']'")),
            }
        }
    }

    fn shape(&mut self, name: &str) -> Result<Vec<u64>, Violation> {
        self.u64_array(name, "shape", code::INVALID_SHAPE, self.limits.max_rank)
    }

    fn offsets(&mut self, name: &str) -> Result<(u64, u64), Violation> {
        let at = self.p.pos;
        let v = self.u64_array(name, "data_offsets", code::INVALID_OFFSETS, 2)?;
        match v.as_slice() {
            [b, e] => Ok((*b, *e)),
            _ => Err(Violation::new(
                code::INVALID_OFFSETS,
                format!(
                    "data_offsets of {name:?} must hold exactly 2 integers, found {}",
                    v.len()
                ),
            )
            .tensor(name)
            .at(self.p.file_offset(at))),
        }
    }
}

/// Rule 6 for one tensor. The product runs over the non-zero dims only, so the verdict does not
/// depend on dimension order: `[0, 2^63, 2]` and `[2^63, 2, 0]` are both refused (the official
/// crate accepts the first), because a consumer multiplying in another order overflows.
fn check_tensor_size(t: &TensorInfo) -> Result<(), Violation> {
    if t.begin > t.end {
        return Err(Violation::new(
            code::REVERSED_RANGE,
            format!(
                "tensor {:?} has data_offsets [{}, {}] with begin after end",
                t.name, t.begin, t.end
            ),
        ));
    }
    let bits = t
        .shape
        .iter()
        .filter(|&&d| d != 0)
        .try_fold(u64::from(t.dtype.bits()), |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| {
            Violation::new(
                code::SIZE_OVERFLOW,
                format!(
                    "tensor {:?} with shape {:?} and dtype {} overflows 64 bits of size",
                    t.name,
                    t.shape,
                    t.dtype.name()
                ),
            )
        })?;
    let bits = if t.shape.contains(&0) { 0 } else { bits };
    if bits % 8 != 0 {
        return Err(Violation::new(
            code::SUB_BYTE_MISALIGNED,
            format!(
                "tensor {:?} with shape {:?} and dtype {} fills {bits} bits, not whole bytes",
                t.name,
                t.shape,
                t.dtype.name()
            ),
        ));
    }
    let size = bits / 8;
    let span = t.end - t.begin;
    if span != size {
        return Err(Violation::new(
            code::SIZE_MISMATCH,
            format!(
                "tensor {:?} spans {span} bytes but shape {:?} of {} needs {size}",
                t.name,
                t.shape,
                t.dtype.name()
            ),
        ));
    }
    Ok(())
}

/// Rule 7: sorted tensors cover `0..data_len` exactly once. Holes and trailing bytes can hide a
/// second payload (a polyglot pickle or zip); overlaps and aliasing make one byte two weights.
fn check_tiling(
    tensors: &[TensorInfo],
    data_start: u64,
    data_len: u64,
    file_size: u64,
) -> Result<(), Violation> {
    let mut expected = 0u64;
    let mut previous: Option<&TensorInfo> = None;
    for t in tensors {
        if t.begin > expected {
            let v = match previous.filter(|_| expected > 0) {
                None => Violation::new(
                    code::DOES_NOT_START_AT_ZERO,
                    format!("first tensor data begins at {}, not 0", t.begin),
                ),
                Some(p) => Violation::new(
                    code::HOLE,
                    format!(
                        "bytes {expected}..{} between {:?} and {:?} belong to no tensor",
                        t.begin, p.name, t.name
                    ),
                ),
            };
            return Err(v.tensor(&t.name).at(data_start.saturating_add(expected)));
        }
        if t.begin < expected {
            let other = previous.map(|p| p.name.as_str()).unwrap_or_default();
            let how = match previous {
                Some(p) if p.begin == t.begin && p.end == t.end => "aliases",
                _ => "overlaps",
            };
            return Err(Violation::new(
                code::OVERLAP,
                format!(
                    "tensor {:?} at {}..{} {how} {other:?} which ends at {expected}",
                    t.name, t.begin, t.end
                ),
            )
            .tensor(&t.name)
            .at(data_start.saturating_add(t.begin)));
        }
        expected = t.end;
        previous = Some(t);
    }
    if expected < data_len {
        return Err(Violation::new(
            code::TRAILING_BYTES,
            format!(
                "{} bytes follow the last tensor's data",
                data_len - expected
            ),
        )
        .at(data_start.saturating_add(expected)));
    }
    if expected > data_len {
        let v = Violation::new(
            code::TRUNCATED,
            format!("tensors need {expected} data bytes but the file holds {data_len}"),
        )
        .at(file_size);
        return Err(match previous {
            Some(p) => v.tensor(&p.name),
            None => v,
        });
    }
    Ok(())
}

/// Facts about a valid file, for `inspect` output and the SBOM.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SafetensorsFacts {
    /// Number of tensors.
    pub tensor_count: u64,
    /// Sum of element counts over all tensors.
    pub parameters: u128,
    /// Tensor count per dtype name.
    pub dtypes: BTreeMap<String, u64>,
    /// Size of the data buffer in bytes.
    pub data_bytes: u64,
    /// `N`, the header length.
    pub header_len: u64,
    /// The `__metadata__` map, when present.
    pub metadata: Option<BTreeMap<String, String>>,
    /// Name of the tensor whose data comes first.
    pub first_tensor: Option<String>,
    /// Name of the tensor whose data comes last.
    pub last_tensor: Option<String>,
}

/// Summarises a validated header.
pub fn facts(h: &Header) -> SafetensorsFacts {
    let mut dtypes: BTreeMap<String, u64> = BTreeMap::new();
    let mut parameters: u128 = 0;
    for t in &h.tensors {
        let n = dtypes.entry(t.dtype.name().to_owned()).or_default();
        *n = n.saturating_add(1);
        parameters = parameters.saturating_add(u128::from(t.elements()));
    }
    SafetensorsFacts {
        tensor_count: h.tensors.len() as u64,
        parameters,
        dtypes,
        data_bytes: h.data_len(),
        header_len: h.header_len,
        metadata: h.metadata.clone(),
        first_tensor: h.tensors.first().map(|t| t.name.clone()),
        last_tensor: h.tensors.last().map(|t| t.name.clone()),
    }
}

/// Non-finite values found in one float tensor by [`scan_values`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NonFinite {
    /// Tensor name.
    pub tensor: String,
    /// Its dtype.
    pub dtype: Dtype,
    /// NaN count (for C64, each part counts).
    pub nan: u64,
    /// +Inf count.
    pub pos_inf: u64,
    /// -Inf count.
    pub neg_inf: u64,
    /// File offset of the first non-finite element (or complex part).
    pub first_offset: u64,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Finite,
    Nan,
    PosInf,
    NegInf,
}

#[derive(Default)]
struct Counts {
    nan: u64,
    pos_inf: u64,
    neg_inf: u64,
    first: Option<u64>,
}

impl Counts {
    fn any(&self) -> bool {
        self.first.is_some()
    }
}

/// The bit layout a float dtype is scanned with; `None` for types without NaN/Inf.
#[derive(Clone, Copy)]
enum Kernel {
    F16,
    BF16,
    F32,
    F64,
    E5M2,
    E4M3,
    Fnuz,
    E8M0,
}

impl Kernel {
    fn for_dtype(d: Dtype) -> Option<Kernel> {
        Some(match d {
            Dtype::F16 => Kernel::F16,
            Dtype::BF16 => Kernel::BF16,
            // A complex64 is two f32 parts; each part is checked on its own.
            Dtype::F32 | Dtype::C64 => Kernel::F32,
            Dtype::F64 => Kernel::F64,
            Dtype::F8_E5M2 => Kernel::E5M2,
            Dtype::F8_E4M3 => Kernel::E4M3,
            Dtype::F8_E4M3FNUZ | Dtype::F8_E5M2FNUZ => Kernel::Fnuz,
            Dtype::F8_E8M0 => Kernel::E8M0,
            _ => return None,
        })
    }

    fn width(self) -> usize {
        match self {
            Kernel::F16 | Kernel::BF16 => 2,
            Kernel::F32 => 4,
            Kernel::F64 => 8,
            Kernel::E5M2 | Kernel::E4M3 | Kernel::Fnuz | Kernel::E8M0 => 1,
        }
    }

    /// Counts over `bytes` (a whole number of units) whose first byte sits at file offset `base`.
    fn count(self, bytes: &[u8], base: u64, c: &mut Counts) {
        match self {
            Kernel::F16 => words::<2>(bytes, base, c, |w| {
                ieee(u64::from(u16::from_le_bytes(w)), 15, 0x7c00)
            }),
            Kernel::BF16 => words::<2>(bytes, base, c, |w| {
                ieee(u64::from(u16::from_le_bytes(w)), 15, 0x7f80)
            }),
            Kernel::F32 => words::<4>(bytes, base, c, |w| {
                ieee(u64::from(u32::from_le_bytes(w)), 31, 0x7f80_0000)
            }),
            Kernel::F64 => words::<8>(bytes, base, c, |w| {
                ieee(u64::from_le_bytes(w), 63, 0x7ff0_0000_0000_0000)
            }),
            Kernel::E5M2 => words::<1>(bytes, base, c, |[b]| ieee(u64::from(b), 7, 0x7c)),
            Kernel::E4M3 => words::<1>(bytes, base, c, |[b]| nan_if(b & 0x7f == 0x7f)),
            Kernel::Fnuz => words::<1>(bytes, base, c, |[b]| nan_if(b == 0x80)),
            Kernel::E8M0 => words::<1>(bytes, base, c, |[b]| nan_if(b == 0xff)),
        }
    }
}

fn nan_if(cond: bool) -> Class {
    if cond { Class::Nan } else { Class::Finite }
}

/// IEEE-style classification: exponent all ones means Inf (zero mantissa) or NaN.
#[inline(always)]
fn ieee(v: u64, sign_bit: u32, exp_mask: u64) -> Class {
    let magnitude = v & !(1u64 << sign_bit);
    if magnitude & exp_mask != exp_mask {
        Class::Finite
    } else if magnitude > exp_mask {
        Class::Nan
    } else if v >> sign_bit == 0 {
        Class::PosInf
    } else {
        Class::NegInf
    }
}

/// Counts special values in fixed-size sub-blocks: a branch-free pass counts "anything not
/// finite" (which the compiler vectorises); only blocks that hold some are classified again.
#[inline(always)]
fn words<const W: usize>(
    bytes: &[u8],
    base: u64,
    c: &mut Counts,
    classify: impl Fn([u8; W]) -> Class,
) {
    const BLOCK: usize = 4096;
    let (units, _) = bytes.as_chunks::<W>();
    let mut block_base = base;
    for block in units.chunks(BLOCK) {
        let special: u64 = block
            .iter()
            .map(|w| u64::from(classify(*w) != Class::Finite))
            .sum();
        if special != 0 {
            let mut at = block_base;
            for w in block {
                match classify(*w) {
                    Class::Finite => {}
                    Class::Nan => c.nan = c.nan.saturating_add(1),
                    Class::PosInf => c.pos_inf = c.pos_inf.saturating_add(1),
                    Class::NegInf => c.neg_inf = c.neg_inf.saturating_add(1),
                }
                if c.first.is_none() && classify(*w) != Class::Finite {
                    c.first = Some(at);
                }
                at = at.saturating_add(W as u64);
            }
        }
        block_base = block_base.saturating_add((block.len() * W) as u64);
    }
}

/// Reads the data region sequentially from `r` (positioned right after the header) and counts
/// NaN, +Inf and -Inf per float tensor. Returns only tensors that hold any. Non-float, F4 and F6
/// tensors are skipped without inspection (F4/F6 have no NaN/Inf encodings).
///
/// Fails with `UnexpectedEof` if the reader ends before the data does and `InvalidInput` if `h`
/// is not a tiling (it always is when it came from [`read_header`]).
pub fn scan_values<R: BufRead>(r: &mut R, h: &Header) -> io::Result<Vec<NonFinite>> {
    let data_start = h.data_start();
    let mut found = Vec::new();
    let mut pos = 0u64;
    for t in &h.tensors {
        if t.begin != pos {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "tensor {:?} begins at {} but the previous data ends at {pos}",
                    t.name, t.begin
                ),
            ));
        }
        let kernel = Kernel::for_dtype(t.dtype);
        let mut counts = Counts::default();
        let mut carry = [0u8; 8];
        let mut carry_len = 0usize;
        let mut remaining = t.byte_len();
        while remaining > 0 {
            let buf = r.fill_buf()?;
            if buf.is_empty() {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("data ended inside tensor {:?}", t.name),
                ));
            }
            let take = usize::try_from(remaining).map_or(buf.len(), |rem| rem.min(buf.len()));
            let chunk = buf.get(..take).unwrap_or_default();
            let chunk_at = data_start.saturating_add(pos);
            if let Some(k) = kernel {
                let width = k.width();
                let mut rest = chunk;
                // An element split across two reads is assembled in `carry` first.
                if carry_len > 0 {
                    let before = carry_len;
                    let need = (width - carry_len).min(rest.len());
                    let (head, tail) = rest.split_at(need);
                    if let Some(dst) = carry.get_mut(carry_len..carry_len + need) {
                        dst.copy_from_slice(head);
                    }
                    carry_len += need;
                    rest = tail;
                    if carry_len == width {
                        let unit_at = chunk_at.saturating_sub(before as u64);
                        k.count(carry.get(..width).unwrap_or_default(), unit_at, &mut counts);
                        carry_len = 0;
                    }
                }
                let whole = rest.len() - rest.len() % width;
                let (body, tail) = rest.split_at(whole);
                let body_at = chunk_at.saturating_add((chunk.len() - rest.len()) as u64);
                k.count(body, body_at, &mut counts);
                if !tail.is_empty() {
                    if let Some(dst) = carry.get_mut(..tail.len()) {
                        dst.copy_from_slice(tail);
                    }
                    carry_len = tail.len();
                }
            }
            r.consume(take);
            remaining -= take as u64;
            pos = pos.saturating_add(take as u64);
        }
        if counts.any() {
            found.push(NonFinite {
                tensor: t.name.clone(),
                dtype: t.dtype,
                nan: counts.nan,
                pos_inf: counts.pos_inf,
                neg_inf: counts.neg_inf,
                first_offset: counts.first.unwrap_or(data_start),
            });
        }
    }
    Ok(found)
}

/// What [`check_shard_index`] needs to know about one shard: its tensors and their byte sizes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShardSummary {
    /// Tensor name to data size in bytes.
    pub tensors: BTreeMap<String, u64>,
}

impl From<&Header> for ShardSummary {
    fn from(h: &Header) -> Self {
        Self {
            tensors: h
                .tensors
                .iter()
                .map(|t| (t.name.clone(), t.byte_len()))
                .collect(),
        }
    }
}

#[derive(Deserialize)]
struct RawIndex {
    #[serde(default)]
    metadata: Option<serde_json::Value>,
    weight_map: PairList,
}

/// A JSON object read as its entries in order, so that duplicate tensor names stay visible.
struct PairList(Vec<(String, String)>);

impl<'de> Deserialize<'de> for PairList {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = PairList;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object mapping tensor names to shard file names")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<PairList, A::Error> {
                let mut out = Vec::new();
                while let Some(pair) = m.next_entry::<String, String>()? {
                    out.push(pair);
                }
                Ok(PairList(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// Splits `prefix-NNNNN-of-MMMMM.safetensors` into `(NNNNN, MMMMM)`.
fn shard_numbers(name: &str) -> Option<(u64, u64)> {
    let stem = name.strip_suffix(".safetensors")?;
    let (head, total) = stem.rsplit_once("-of-")?;
    let (prefix, index) = head.rsplit_once('-')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
    if prefix.is_empty() || !digits(index) || !digits(total) {
        return None;
    }
    Some((index.parse().ok()?, total.parse().ok()?))
}

/// Shard names must stay inside the index's directory: an index pointing at `../x` or an
/// absolute path would make a loader read a file the scan never attributed to this model.
fn shard_name_ok(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('/')
        && !name.contains('\\')
        && !name.contains(':')
        && name
            .split('/')
            .all(|part| !part.is_empty() && part != ".." && part != ".")
}

/// Checks a `*.safetensors.index.json` against the shards present next to it.
///
/// `shards` holds every shard-like file present (name relative to the index's directory), with
/// `None` for a file that is present but not valid safetensors (its ST001 finding stands on its
/// own; its tensors are not compared). Present files that the index does not reference are
/// reported only when named like `prefix-NNNNN-of-MMMMM.safetensors`.
pub fn check_shard_index(
    index_json: &[u8],
    shards: &BTreeMap<String, Option<ShardSummary>>,
    limits: &Limits,
) -> Vec<Violation> {
    let mut out = Vec::new();
    if index_json.len() as u64 > limits.max_index_bytes {
        out.push(Violation::new(
            code::INDEX_TOO_LARGE,
            format!(
                "index holds {} bytes, over the limit of {}",
                index_json.len(),
                limits.max_index_bytes
            ),
        ));
        return out;
    }
    let raw: RawIndex = match serde_json::from_slice(index_json) {
        Ok(r) => r,
        Err(e) => {
            out.push(Violation::new(
                code::INDEX_INVALID_JSON,
                format!("index is not valid: {e}"),
            ));
            return out;
        }
    };

    let mut weight_map: BTreeMap<&str, &str> = BTreeMap::new();
    for (tensor, shard) in &raw.weight_map.0 {
        if weight_map.insert(tensor, shard).is_some() {
            out.push(
                Violation::new(
                    code::DUPLICATE_KEY,
                    format!("weight_map lists tensor {tensor:?} twice"),
                )
                .tensor(tensor),
            );
        }
    }
    let referenced: BTreeSet<&str> = weight_map.values().copied().collect();

    for &shard in &referenced {
        if !shard_name_ok(shard) {
            out.push(
                Violation::new(
                    code::SHARD_NAME_INVALID,
                    format!("weight_map names shard {shard:?} outside the index's directory"),
                )
                .shard(shard),
            );
        } else if !shards.contains_key(shard) {
            let n = weight_map.values().filter(|&&s| s == shard).count();
            out.push(
                Violation::new(
                    code::MISSING_SHARD,
                    format!("shard {shard:?} holding {n} indexed tensors is not present"),
                )
                .shard(shard),
            );
        }
    }

    // Where each tensor really is, among the valid shards present.
    let mut located: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (shard, summary) in shards {
        for tensor in summary.iter().flat_map(|s| s.tensors.keys()) {
            located.entry(tensor).or_default().push(shard);
        }
    }

    for (&tensor, &shard) in &weight_map {
        let Some(Some(summary)) = shards.get(shard) else {
            continue;
        };
        if !summary.tensors.contains_key(tensor) && !located.contains_key(tensor) {
            out.push(
                Violation::new(
                    code::TENSOR_NOT_IN_SHARD,
                    format!("index maps {tensor:?} to {shard:?}, whose header lacks it"),
                )
                .tensor(tensor)
                .shard(shard),
            );
        }
    }
    for (&tensor, holders) in &located {
        for &holder in holders {
            match weight_map.get(tensor) {
                None => out.push(
                    Violation::new(
                        code::TENSOR_NOT_IN_INDEX,
                        format!("shard {holder:?} holds {tensor:?}, which the index does not list"),
                    )
                    .tensor(tensor)
                    .shard(holder),
                ),
                Some(&mapped) if mapped != holder => out.push(
                    Violation::new(
                        code::TENSOR_IN_WRONG_SHARD,
                        format!(
                            "shard {holder:?} holds {tensor:?}, which the index maps to {mapped:?}"
                        ),
                    )
                    .tensor(tensor)
                    .shard(holder),
                ),
                Some(_) => {}
            }
        }
    }

    for shard in shards.keys() {
        if !referenced.contains(shard.as_str()) && shard_numbers(shard).is_some() {
            out.push(
                Violation::new(
                    code::UNREFERENCED_SHARD,
                    format!("shard-named file {shard:?} is not referenced by the index"),
                )
                .shard(shard),
            );
        }
    }

    check_shard_numbering(&referenced, &mut out);
    check_total_size(&raw, &weight_map, &referenced, shards, &mut out);
    out
}

fn check_shard_numbering(referenced: &BTreeSet<&str>, out: &mut Vec<Violation>) {
    let numbered: Vec<(&str, u64, u64)> = referenced
        .iter()
        .filter_map(|s| shard_numbers(s).map(|(i, n)| (*s, i, n)))
        .collect();
    let totals: BTreeSet<u64> = numbered.iter().map(|&(_, _, n)| n).collect();
    if totals.len() > 1 {
        out.push(Violation::new(
            code::SHARD_COUNT_MISMATCH,
            format!("referenced shards disagree on the shard count: {totals:?}"),
        ));
        return;
    }
    let Some(&total) = totals.first() else {
        return;
    };
    for &(shard, i, n) in &numbered {
        if i == 0 || i > n {
            out.push(
                Violation::new(
                    code::SHARD_COUNT_MISMATCH,
                    format!("shard {shard:?} is numbered {i} of {n}"),
                )
                .shard(shard),
            );
        }
    }
    if numbered.len() as u64 != total {
        out.push(Violation::new(
            code::SHARD_COUNT_MISMATCH,
            format!(
                "shard names say {total} shards but the index references {}",
                numbered.len()
            ),
        ));
    }
}

/// `metadata.total_size` is advisory in the wild (tied weights, rounding), hence a warning;
/// it is only compared when every referenced shard was read.
fn check_total_size(
    raw: &RawIndex,
    weight_map: &BTreeMap<&str, &str>,
    referenced: &BTreeSet<&str>,
    shards: &BTreeMap<String, Option<ShardSummary>>,
    out: &mut Vec<Violation>,
) {
    let Some(declared) = raw.metadata.as_ref().and_then(|m| m.get("total_size")) else {
        return;
    };
    let mut warn = |message: String| {
        let mut v = Violation::new(code::TOTAL_SIZE_MISMATCH, message);
        v.warning = true;
        out.push(v);
    };
    let declared = match declared.as_u64() {
        Some(v) => v,
        None => match declared.as_f64() {
            Some(f) if f >= 0.0 && f.fract() == 0.0 && f < 1.8e19 => f as u64,
            _ => {
                warn(format!(
                    "metadata.total_size is {declared}, not a byte count"
                ));
                return;
            }
        },
    };
    if !referenced
        .iter()
        .all(|s| matches!(shards.get(*s), Some(Some(_))))
    {
        return;
    }
    let mut actual: u64 = 0;
    for (&tensor, &shard) in weight_map {
        let size = shards
            .get(shard)
            .and_then(|s| s.as_ref())
            .and_then(|s| s.tensors.get(tensor))
            .copied()
            .unwrap_or(0);
        actual = actual.saturating_add(size);
    }
    if actual != declared {
        warn(format!(
            "metadata.total_size is {declared} but the indexed tensors hold {actual} bytes"
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufReader, Cursor};

    /// A file from a header text and `data` zero bytes; `N` is the header's exact length.
    fn file(header: &str, data: usize) -> Vec<u8> {
        let mut out = (header.len() as u64).to_le_bytes().to_vec();
        out.extend_from_slice(header.as_bytes());
        out.resize(out.len() + data, 0);
        out
    }

    fn check(bytes: &[u8]) -> Result<Header, Violation> {
        parse_header_bytes(bytes, bytes.len() as u64, &Limits::default())
    }

    fn code_of(header: &str, data: usize) -> &'static str {
        match check(&file(header, data)) {
            Ok(_) => "ok",
            Err(v) => v.code,
        }
    }

    const T_A: &str = r#""a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}"#;

    #[test]
    fn accepts_minimal_file() {
        let h = check(&file(&format!("{{{T_A}}}"), 8)).unwrap();
        assert_eq!(h.tensors.len(), 1);
        assert_eq!(h.tensors[0].shape, vec![2]);
        assert_eq!(h.data_start(), 8 + h.header_len);
    }

    #[test]
    fn accepts_empty_tensor_map_with_metadata() {
        assert_eq!(code_of("{}", 0), "ok");
        let h = check(&file(r#"{"__metadata__":{"k":"v"}}"#, 0)).unwrap();
        assert_eq!(h.metadata.unwrap().get("k").map(String::as_str), Some("v"));
    }

    #[test]
    fn accepts_zero_size_tensors_at_boundaries() {
        let h = r#"{"z1":{"dtype":"F32","shape":[0],"data_offsets":[0,0]},"z2":{"dtype":"I8","shape":[3,0],"data_offsets":[0,0]},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"z3":{"dtype":"U8","shape":[0],"data_offsets":[8,8]}}"#;
        let parsed = check(&file(h, 8)).unwrap();
        let names: Vec<&str> = parsed.tensors.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["z1", "z2", "a", "z3"]);
    }

    #[test]
    fn accepts_space_padding_and_inner_whitespace() {
        assert_eq!(code_of(&format!("{{\n\t{T_A}\r\n}}      "), 8), "ok");
    }

    #[test]
    fn rejects_file_too_small() {
        assert!(matches!(
            check(b"\x02\0\0"),
            Err(Violation {
                code: "file-too-small",
                ..
            })
        ));
    }

    #[test]
    fn rejects_header_too_large() {
        let mut b = 100_000_001u64.to_le_bytes().to_vec();
        b.extend_from_slice(b"{}");
        let v = parse_header_bytes(&b, u64::MAX, &Limits::default()).unwrap_err();
        assert_eq!(v.code, code::HEADER_TOO_LARGE);
        let low = Limits {
            max_header_bytes: 4,
            ..Limits::default()
        };
        let b = file(&format!("{{{T_A}}}"), 8);
        assert!(matches!(
            parse_header_bytes(&b, b.len() as u64, &low),
            Err(Violation {
                code: "header-too-large",
                ..
            })
        ));
    }

    #[test]
    fn rejects_header_exceeding_file() {
        let mut b = 3u64.to_le_bytes().to_vec();
        b.extend_from_slice(b"{}");
        assert!(matches!(
            check(&b),
            Err(Violation {
                code: "header-exceeds-file",
                offset: Some(0),
                ..
            })
        ));
    }

    #[test]
    fn rejects_truncated_reader_before_allocating_too_much() {
        // The file size claims more than the reader delivers.
        let b = file(&format!("{{{T_A}}}"), 8);
        let short = b.get(..20).unwrap().to_vec();
        let err =
            read_header(&mut Cursor::new(short), b.len() as u64, &Limits::default()).unwrap_err();
        assert!(matches!(
            err,
            HeaderError::Invalid(Violation {
                code: "truncated",
                offset: Some(20),
                ..
            })
        ));
        let err = parse_header_bytes(b.get(..20).unwrap(), b.len() as u64, &Limits::default())
            .unwrap_err();
        assert_eq!(err.code, code::TRUNCATED);
    }

    #[test]
    fn rejects_truncated_data() {
        let v = check(&file(&format!("{{{T_A}}}"), 4)).unwrap_err();
        assert_eq!(v.code, code::TRUNCATED);
        assert_eq!(v.tensor.as_deref(), Some("a"));
    }

    #[test]
    fn read_header_leaves_reader_at_data() {
        let b = file(&format!("{{{T_A}}}"), 8);
        let mut r = Cursor::new(b.clone());
        let h = read_header(&mut r, b.len() as u64, &Limits::default()).unwrap();
        assert_eq!(r.position(), h.data_start());
    }

    #[test]
    fn rejects_non_utf8_header() {
        let mut b = file("{\"\u{e9}\":1}", 0);
        b[11] = 0xff;
        assert!(matches!(
            check(&b),
            Err(Violation {
                code: "header-not-utf8",
                offset: Some(10),
                ..
            })
        ));
    }

    #[test]
    fn rejects_leading_whitespace_and_bom() {
        assert_eq!(code_of(" {}", 0), code::HEADER_LEADING_BYTE);
        assert_eq!(code_of("\u{feff}{}", 0), code::HEADER_LEADING_BYTE);
    }

    #[test]
    fn rejects_non_object_header() {
        for h in ["[]", "\"x\"", "12", "null", "true"] {
            assert_eq!(code_of(h, 0), code::NOT_AN_OBJECT, "{h}");
        }
    }

    #[test]
    fn rejects_invalid_json() {
        for h in [
            "",
            "{",
            "{/*c*/}",
            r#"{"__metadata__":{"k":"v",}}"#,
            r#"{"__metadata__":{"k":"v"},}"#,
            r#"{"a":{"dtype":"F32","shape":[NaN],"data_offsets":[0,0]}}"#,
            r#"{"a":{"dtype":"F32","shape":[+1],"data_offsets":[0,4]}}"#,
            r#"{"a":{"dtype":"F32","shape":[01],"data_offsets":[0,4]}}"#,
            r#"{"a":{"dtype":"F32","shape":[1.],"data_offsets":[0,4]}}"#,
            r#"{"\ud800":{"dtype":"F32","shape":[0],"data_offsets":[0,0]}}"#,
            r#"{"\udc00":{"dtype":"F32","shape":[0],"data_offsets":[0,0]}}"#,
            r#"{"\ud800\u0041":{"dtype":"F32","shape":[0],"data_offsets":[0,0]}}"#,
            "{\"a\tb\":1}",
            r#"{"\x":1}"#,
            "{'a':1}",
            "{\"a\":tru}",
        ] {
            assert_eq!(code_of(h, 0), code::HEADER_INVALID_JSON, "{h}");
        }
    }

    #[test]
    fn rejects_too_deep_json() {
        let deep = format!(
            "{{\"__metadata__\":{}{}}}",
            "[".repeat(100),
            "]".repeat(100)
        );
        assert_eq!(code_of(&deep, 0), code::JSON_TOO_DEEP);
    }

    #[test]
    fn rejects_bad_padding_after_header() {
        for pad in ["\t", "\n", "\r", "\0", " x", "{}"] {
            let v = check(&file(&format!("{{{T_A}}}{pad}"), 8)).unwrap_err();
            assert_eq!(v.code, code::HEADER_TRAILING_BYTES, "{pad:?}");
        }
    }

    #[test]
    fn rejects_duplicate_keys() {
        let dup_tensor = format!("{{{T_A},{}}}", T_A.replacen("[0,8]", "[8,16]", 1));
        assert_eq!(code_of(&dup_tensor, 16), code::DUPLICATE_KEY);
        // Equal only after unescaping.
        let escaped = format!(
            "{{{T_A},{}}}",
            T_A.replacen("\"a\"", r#""\u0061""#, 1)
                .replacen("[0,8]", "[8,16]", 1)
        );
        let v = check(&file(&escaped, 16)).unwrap_err();
        assert_eq!(
            (v.code, v.tensor.as_deref()),
            (code::DUPLICATE_KEY, Some("a"))
        );
        let pair = r#"{"😀":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},"\ud83d\ude00":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}}"#;
        assert_eq!(code_of(pair, 0), code::DUPLICATE_KEY);
        assert_eq!(
            code_of(r#"{"__metadata__":{},"__metadata__":{}}"#, 0),
            code::DUPLICATE_KEY
        );
        assert_eq!(
            code_of(r#"{"__metadata__":{"k":"1","k":"2"}}"#, 0),
            code::DUPLICATE_KEY
        );
        let field = r#"{"a":{"dtype":"F32","dtype":"F32","shape":[0],"data_offsets":[0,0]}}"#;
        assert_eq!(code_of(field, 0), code::DUPLICATE_KEY);
    }

    #[test]
    fn rejects_too_many_tensors() {
        let limits = Limits {
            max_tensors: 1,
            ..Limits::default()
        };
        let h = r#"{"a":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},"b":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}}"#;
        let b = file(h, 0);
        let v = parse_header_bytes(&b, b.len() as u64, &limits).unwrap_err();
        assert_eq!(
            (v.code, v.tensor.as_deref()),
            (code::TOO_MANY_TENSORS, Some("b"))
        );
    }

    #[test]
    fn rejects_rank_above_limit() {
        let h = format!(
            r#"{{"a":{{"dtype":"U8","shape":[{}],"data_offsets":[0,1]}}}}"#,
            vec!["1"; 65].join(",")
        );
        assert_eq!(code_of(&h, 1), code::RANK_TOO_LARGE);
    }

    #[test]
    fn rejects_metadata_not_string_map() {
        for m in [
            "null",
            "[]",
            "1",
            "\"s\"",
            r#"{"k":1}"#,
            r#"{"k":null}"#,
            r#"{"k":{}}"#,
            r#"{"k":["v"]}"#,
            r#"{"k":true}"#,
        ] {
            assert_eq!(
                code_of(&format!(r#"{{"__metadata__":{m}}}"#), 0),
                code::METADATA_NOT_STRING_MAP,
                "{m}"
            );
        }
    }

    #[test]
    fn rejects_tensor_that_is_not_an_object() {
        assert_eq!(
            code_of(r#"{"a":["F32",[2],[0,8]]}"#, 8),
            code::TENSOR_NOT_OBJECT
        );
        assert_eq!(code_of(r#"{"a":null}"#, 0), code::TENSOR_NOT_OBJECT);
    }

    #[test]
    fn rejects_tensor_missing_field() {
        let v = check(&file(r#"{"a":{"dtype":"F32","shape":[0]}}"#, 0)).unwrap_err();
        assert_eq!(v.code, code::TENSOR_MISSING_FIELD);
        assert!(v.message.contains("data_offsets"), "{}", v.message);
        assert_eq!(code_of(r#"{"a":{}}"#, 0), code::TENSOR_MISSING_FIELD);
    }

    #[test]
    fn rejects_tensor_extra_field() {
        let h = r#"{"a":{"dtype":"F32","shape":[0],"data_offsets":[0,0],"payload":"x"}}"#;
        let v = check(&file(h, 0)).unwrap_err();
        assert_eq!(
            (v.code, v.tensor.as_deref()),
            (code::TENSOR_EXTRA_FIELD, Some("a"))
        );
        assert_eq!(v.offset, Some(8 + h.find("\"payload").unwrap() as u64));
    }

    #[test]
    fn rejects_invalid_dtype() {
        for d in [
            r#""f32""#,
            r#""F128""#,
            "32",
            r#"{"F32":null}"#,
            r#""F32 ""#,
        ] {
            let h = format!(r#"{{"a":{{"dtype":{d},"shape":[0],"data_offsets":[0,0]}}}}"#);
            assert_eq!(code_of(&h, 0), code::INVALID_DTYPE, "{d}");
        }
    }

    #[test]
    fn rejects_invalid_shape() {
        for s in [
            "[1.0]",
            "[-0]",
            "[-1]",
            "[1e0]",
            "[18446744073709551616]",
            "[\"1\"]",
            "[[1]]",
            "2",
            "null",
        ] {
            let h = format!(r#"{{"a":{{"dtype":"U8","shape":{s},"data_offsets":[0,1]}}}}"#);
            assert_eq!(code_of(&h, 1), code::INVALID_SHAPE, "{s}");
        }
    }

    #[test]
    fn rejects_invalid_offsets() {
        for o in [
            "[0]",
            "[0,1,1]",
            "[]",
            "[0,1.0]",
            "[-0,1]",
            "{}",
            "[0,18446744073709551616]",
        ] {
            let h = format!(r#"{{"a":{{"dtype":"U8","shape":[1],"data_offsets":{o}}}}}"#);
            assert_eq!(code_of(&h, 1), code::INVALID_OFFSETS, "{o}");
        }
    }

    #[test]
    fn rejects_size_overflow_in_any_dim_order() {
        for s in [
            "[0,9223372036854775808,2]",
            "[9223372036854775808,2,0]",
            "[4611686018427387904]",
        ] {
            let h = format!(r#"{{"a":{{"dtype":"U8","shape":{s},"data_offsets":[0,0]}}}}"#);
            assert_eq!(code_of(&h, 0), code::SIZE_OVERFLOW, "{s}");
        }
        // The largest size that fits is not an overflow.
        let h = r#"{"a":{"dtype":"U8","shape":[0,2305843009213693951],"data_offsets":[0,0]}}"#;
        assert_eq!(code_of(h, 0), "ok");
    }

    #[test]
    fn rejects_sub_byte_misaligned() {
        assert_eq!(
            code_of(
                r#"{"a":{"dtype":"F4","shape":[3],"data_offsets":[0,1]}}"#,
                1
            ),
            code::SUB_BYTE_MISALIGNED
        );
        assert_eq!(
            code_of(
                r#"{"a":{"dtype":"F6_E2M3","shape":[2],"data_offsets":[0,1]}}"#,
                1
            ),
            code::SUB_BYTE_MISALIGNED
        );
        assert_eq!(
            code_of(
                r#"{"a":{"dtype":"F6_E3M2","shape":[4],"data_offsets":[0,3]}}"#,
                3
            ),
            "ok"
        );
    }

    #[test]
    fn rejects_reversed_range() {
        assert_eq!(
            code_of(
                r#"{"a":{"dtype":"U8","shape":[1],"data_offsets":[1,0]}}"#,
                1
            ),
            code::REVERSED_RANGE
        );
    }

    #[test]
    fn rejects_size_mismatch() {
        assert_eq!(
            code_of(
                r#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,7]}}"#,
                7
            ),
            code::SIZE_MISMATCH
        );
    }

    #[test]
    fn rejects_data_not_starting_at_zero() {
        let v = check(&file(r#"{"z":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}"#, 2)).unwrap_err();
        assert_eq!(v.code, code::DOES_NOT_START_AT_ZERO);
    }

    #[test]
    fn rejects_hole_between_tensors() {
        let h = r#"{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"b":{"dtype":"U8","shape":[1],"data_offsets":[2,3]}}"#;
        let v = check(&file(h, 3)).unwrap_err();
        assert_eq!((v.code, v.tensor.as_deref()), (code::HOLE, Some("b")));
        assert_eq!(v.offset, Some(8 + h.len() as u64 + 1));
    }

    #[test]
    fn rejects_overlapping_offsets() {
        let h = r#"{"a":{"dtype":"U16","shape":[1],"data_offsets":[0,2]},"b":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}"#;
        assert_eq!(code_of(h, 2), code::OVERLAP);
        let alias = r#"{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"b":{"dtype":"I8","shape":[1],"data_offsets":[0,1]}}"#;
        let v = check(&file(alias, 1)).unwrap_err();
        assert_eq!(v.code, code::OVERLAP);
        assert!(v.message.contains("aliases"), "{}", v.message);
        // A zero-size tensor inside another tensor's bytes.
        let inside = r#"{"a":{"dtype":"U16","shape":[1],"data_offsets":[0,2]},"z":{"dtype":"U8","shape":[0],"data_offsets":[1,1]}}"#;
        assert_eq!(code_of(inside, 2), code::OVERLAP);
    }

    #[test]
    fn rejects_trailing_bytes_after_tensors() {
        let mut b = file(&format!("{{{T_A}}}"), 8);
        b.extend_from_slice(b"PK\x03\x04");
        assert!(matches!(
            check(&b),
            Err(Violation {
                code: "trailing-bytes",
                ..
            })
        ));
        assert_eq!(code_of("{}", 1), code::TRAILING_BYTES);
    }

    #[test]
    fn violation_offsets_point_into_the_file() {
        let h = r#"{"a":{"dtype":"BAD","shape":[0],"data_offsets":[0,0]}}"#;
        let v = check(&file(h, 0)).unwrap_err();
        assert_eq!(v.offset, Some(8 + h.find("\"BAD").unwrap() as u64));
    }

    #[test]
    fn facts_summarise_header() {
        let h = r#"{"__metadata__":{"format":"pt"},"b":{"dtype":"F16","shape":[3],"data_offsets":[8,14]},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"c":{"dtype":"F4","shape":[2,2],"data_offsets":[14,16]}}"#;
        let f = facts(&check(&file(h, 16)).unwrap());
        assert_eq!(f.tensor_count, 3);
        assert_eq!(f.parameters, 9);
        assert_eq!(f.data_bytes, 16);
        assert_eq!(f.dtypes.get("F32"), Some(&1));
        assert_eq!(
            (f.first_tensor.as_deref(), f.last_tensor.as_deref()),
            (Some("a"), Some("c"))
        );
        let json = serde_json::to_value(&f).unwrap();
        assert_eq!(json["metadata"]["format"], "pt");
    }

    #[test]
    fn dtype_table_is_consistent() {
        for d in Dtype::ALL {
            assert_eq!(Dtype::from_name(d.name()), Some(d));
        }
        assert_eq!(Dtype::F6_E2M3.bits(), 6);
        assert_eq!(Dtype::C64.bits(), 64);
        assert!(Dtype::F8_E8M0.is_float() && !Dtype::BOOL.is_float());
    }

    // ---- value scan ----

    /// A header and data for one tensor per (name, dtype, raw bytes); returns (header, data).
    fn layout(parts: &[(&str, Dtype, Vec<u8>)]) -> (Header, Vec<u8>) {
        let mut tensors = Vec::new();
        let mut data = Vec::new();
        for (name, dtype, bytes) in parts {
            let elements = bytes.len() as u64 * 8 / u64::from(dtype.bits());
            let begin = data.len() as u64;
            data.extend_from_slice(bytes);
            tensors.push(TensorInfo {
                name: (*name).to_owned(),
                dtype: *dtype,
                shape: vec![elements],
                begin,
                end: data.len() as u64,
            });
        }
        (
            Header {
                header_len: 0,
                tensors,
                metadata: None,
            },
            data,
        )
    }

    fn scan_in_blocks(h: &Header, data: &[u8], block: usize) -> Vec<NonFinite> {
        scan_values(
            &mut BufReader::with_capacity(block, Cursor::new(data.to_vec())),
            h,
        )
        .unwrap()
    }

    fn le<const W: usize, T>(vals: &[T], f: impl Fn(&T) -> [u8; W]) -> Vec<u8> {
        vals.iter().flat_map(f).collect()
    }

    #[test]
    fn scan_counts_each_float_dtype_across_block_splits() {
        let f32s = le(
            &[
                1.0f32,
                f32::NAN,
                f32::INFINITY,
                -f32::INFINITY,
                -0.0,
                f32::from_bits(0xffc0_0001),
                f32::MAX,
            ],
            |v| v.to_le_bytes(),
        );
        let c64 = le(&[1.0f32, f32::NAN, f32::NEG_INFINITY, 2.0], |v| {
            v.to_le_bytes()
        });
        let f64s = le(
            &[
                f64::NAN,
                0.5,
                f64::INFINITY,
                f64::NEG_INFINITY,
                f64::MIN_POSITIVE,
            ],
            |v| v.to_le_bytes(),
        );
        let f16s = le(&[0x3c00u16, 0x7c00, 0xfc00, 0x7e00, 0xfc01, 0x7bff], |v| {
            v.to_le_bytes()
        });
        let bf16s = le(&[0x3f80u16, 0x7f80, 0xff80, 0x7fc0, 0xff81, 0x7f7f], |v| {
            v.to_le_bytes()
        });
        let parts = vec![
            (
                "i",
                Dtype::I32,
                le(&[-1i32, 0x7f80_0000], |v| v.to_le_bytes()),
            ),
            ("f32", Dtype::F32, f32s),
            ("odd", Dtype::U8, vec![0xff; 3]),
            ("c64", Dtype::C64, c64),
            ("f64", Dtype::F64, f64s),
            ("f16", Dtype::F16, f16s),
            ("bf16", Dtype::BF16, bf16s),
            (
                "e5m2",
                Dtype::F8_E5M2,
                vec![0x7c, 0xfc, 0x7d, 0xff, 0x7b, 0x00],
            ),
            ("e4m3", Dtype::F8_E4M3, vec![0x7f, 0xff, 0x7e, 0x78, 0xf8]),
            ("e4m3fnuz", Dtype::F8_E4M3FNUZ, vec![0x80, 0xff, 0x7f, 0x00]),
            ("e5m2fnuz", Dtype::F8_E5M2FNUZ, vec![0x80, 0x80, 0xfc]),
            ("e8m0", Dtype::F8_E8M0, vec![0xff, 0xfe, 0x00]),
            ("f4", Dtype::F4, vec![0xff]),
            ("clean", Dtype::F32, le(&[1.0f32, 2.0], |v| v.to_le_bytes())),
        ];
        let (mut h, data) = layout(&parts);
        h.header_len = 100;
        let expect: Vec<(&str, u64, u64, u64)> = vec![
            ("f32", 2, 1, 1),
            ("c64", 1, 0, 1),
            ("f64", 1, 1, 1),
            ("f16", 2, 1, 1),
            ("bf16", 2, 1, 1),
            ("e5m2", 2, 1, 1),
            ("e4m3", 2, 0, 0),
            ("e4m3fnuz", 1, 0, 0),
            ("e5m2fnuz", 2, 0, 0),
            ("e8m0", 1, 0, 0),
        ];
        for block in [1, 2, 3, 5, 7, 8, 9, 13, 64, 1 << 16] {
            let got = scan_in_blocks(&h, &data, block);
            let summary: Vec<(&str, u64, u64, u64)> = got
                .iter()
                .map(|n| (n.tensor.as_str(), n.nan, n.pos_inf, n.neg_inf))
                .collect();
            assert_eq!(summary, expect, "block {block}");
            let f32_first = got.iter().find(|n| n.tensor == "f32").unwrap().first_offset;
            assert_eq!(f32_first, 108 + 8 + 4, "block {block}");
            let f64_first = got.iter().find(|n| n.tensor == "f64").unwrap().first_offset;
            let f64_begin = h.tensors.iter().find(|t| t.name == "f64").unwrap().begin;
            assert_eq!(f64_first, 108 + f64_begin, "block {block}");
        }
    }

    #[test]
    fn scan_handles_many_blocks_of_specials() {
        let mut vals = vec![0.5f32; 10_000];
        vals[4095] = f32::NAN;
        vals[4096] = f32::INFINITY;
        vals[9999] = f32::NEG_INFINITY;
        let (h, data) = layout(&[("w", Dtype::F32, le(&vals, |v| v.to_le_bytes()))]);
        let got = scan_in_blocks(&h, &data, 4093);
        assert_eq!(
            (
                got[0].nan,
                got[0].pos_inf,
                got[0].neg_inf,
                got[0].first_offset
            ),
            (1, 1, 1, 8 + 4095 * 4)
        );
    }

    #[test]
    fn scan_reports_truncated_data() {
        let (h, data) = layout(&[("w", Dtype::F32, vec![0; 8])]);
        let err = scan_values(&mut Cursor::new(data.get(..5).unwrap().to_vec()), &h).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
    }

    #[test]
    #[ignore = "throughput measurement; run with --release -- --ignored --nocapture"]
    fn scan_throughput_f32_256_mib() {
        let n = 64 * 1024 * 1024;
        let mut data = Vec::with_capacity(n * 4);
        for i in 0..n {
            data.extend_from_slice(&((i as f32) * 0.5).to_le_bytes());
        }
        let (h, _) = layout(&[("w", Dtype::F32, Vec::new())]);
        let h = Header {
            tensors: vec![TensorInfo {
                end: data.len() as u64,
                shape: vec![n as u64],
                ..h.tensors[0].clone()
            }],
            ..h
        };
        let run = |data: &[u8], cap: usize, what: &str| {
            let start = std::time::Instant::now();
            let got = if cap == 0 {
                // A slice is a BufRead whose one block is the whole buffer.
                scan_values(&mut &data[..], &h).unwrap()
            } else {
                scan_values(&mut BufReader::with_capacity(cap, data), &h).unwrap()
            };
            let secs = start.elapsed().as_secs_f64();
            let line = format!(
                "scan_values f32 {what}: {:.0} MB/s (block {cap}, {} tensors with non-finite)\n",
                data.len() as f64 / 1e6 / secs,
                got.len()
            );
            std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes()).unwrap();
        };
        for cap in [1 << 16, 1 << 20, 0] {
            run(&data, cap, "clean");
        }
        // Worst case: a NaN in every 4096-element sub-block forces the classifying pass.
        for i in (0..n).step_by(4096) {
            data[i * 4..i * 4 + 4].copy_from_slice(&f32::NAN.to_le_bytes());
        }
        run(&data, 1 << 20, "nan every 4096");
    }

    // ---- shard index ----

    fn summary(tensors: &[(&str, u64)]) -> Option<ShardSummary> {
        Some(ShardSummary {
            tensors: tensors.iter().map(|(n, s)| ((*n).to_owned(), *s)).collect(),
        })
    }

    const S1: &str = "model-00001-of-00002.safetensors";
    const S2: &str = "model-00002-of-00002.safetensors";

    fn index(map: &[(&str, &str)], total: Option<u64>) -> Vec<u8> {
        let wm: serde_json::Map<String, serde_json::Value> = map
            .iter()
            .map(|(t, s)| ((*t).to_owned(), (*s).into()))
            .collect();
        let mut v = serde_json::json!({ "weight_map": wm });
        if let Some(t) = total {
            v["metadata"] = serde_json::json!({ "total_size": t });
        }
        serde_json::to_vec(&v).unwrap()
    }

    fn good_shards() -> BTreeMap<String, Option<ShardSummary>> {
        BTreeMap::from([
            (S1.to_owned(), summary(&[("a", 8), ("b", 4)])),
            (S2.to_owned(), summary(&[("c", 2)])),
        ])
    }

    fn codes(v: &[Violation]) -> Vec<&'static str> {
        v.iter().map(|v| v.code).collect()
    }

    #[test]
    fn accepts_consistent_shard_index() {
        let idx = index(&[("a", S1), ("b", S1), ("c", S2)], Some(14));
        assert!(check_shard_index(&idx, &good_shards(), &Limits::default()).is_empty());
    }

    #[test]
    fn rejects_invalid_index_json() {
        for bad in [
            &b"{"[..],
            b"[]",
            br#"{"weight_map":{"a":1}}"#,
            br#"{"metadata":{}}"#,
            br#"{"weight_map":{},"weight_map":{}}"#,
        ] {
            assert_eq!(
                codes(&check_shard_index(bad, &good_shards(), &Limits::default())),
                [code::INDEX_INVALID_JSON]
            );
        }
        let limits = Limits {
            max_index_bytes: 4,
            ..Limits::default()
        };
        assert_eq!(
            codes(&check_shard_index(
                b"{\"weight_map\":{}}",
                &good_shards(),
                &limits
            )),
            [code::INDEX_TOO_LARGE]
        );
    }

    #[test]
    fn rejects_duplicate_tensor_in_index() {
        let idx = br#"{"weight_map":{"a":"model-00001-of-00002.safetensors","b":"model-00001-of-00002.safetensors","c":"model-00002-of-00002.safetensors","a":"model-00002-of-00002.safetensors"}}"#;
        assert!(
            codes(&check_shard_index(idx, &good_shards(), &Limits::default()))
                .contains(&code::DUPLICATE_KEY)
        );
    }

    #[test]
    fn rejects_missing_shard() {
        let mut shards = good_shards();
        shards.remove(S2);
        let idx = index(&[("a", S1), ("b", S1), ("c", S2)], None);
        let v = check_shard_index(&idx, &shards, &Limits::default());
        assert_eq!(codes(&v), [code::MISSING_SHARD]);
        assert_eq!(v[0].shard.as_deref(), Some(S2));
    }

    #[test]
    fn rejects_shard_name_outside_directory() {
        let idx = index(&[("a", "../evil.safetensors")], None);
        assert!(
            codes(&check_shard_index(
                &idx,
                &BTreeMap::new(),
                &Limits::default()
            ))
            .contains(&code::SHARD_NAME_INVALID)
        );
    }

    #[test]
    fn rejects_tensor_not_in_shard() {
        let idx = index(&[("a", S1), ("b", S1), ("c", S2), ("d", S2)], None);
        let v = check_shard_index(&idx, &good_shards(), &Limits::default());
        assert_eq!(codes(&v), [code::TENSOR_NOT_IN_SHARD]);
        assert_eq!(v[0].tensor.as_deref(), Some("d"));
    }

    #[test]
    fn rejects_tensor_not_in_index() {
        let idx = index(&[("a", S1), ("c", S2)], None);
        let v = check_shard_index(&idx, &good_shards(), &Limits::default());
        assert_eq!(codes(&v), [code::TENSOR_NOT_IN_INDEX]);
        assert_eq!(
            (v[0].tensor.as_deref(), v[0].shard.as_deref()),
            (Some("b"), Some(S1))
        );
    }

    #[test]
    fn rejects_tensor_in_wrong_shard() {
        let idx = index(&[("a", S1), ("b", S2), ("c", S2)], None);
        let v = check_shard_index(&idx, &good_shards(), &Limits::default());
        assert_eq!(codes(&v), [code::TENSOR_IN_WRONG_SHARD]);
    }

    #[test]
    fn rejects_unreferenced_shard() {
        let mut shards = good_shards();
        shards.insert("model-00003-of-00003.safetensors".to_owned(), None);
        shards.insert("notes.safetensors".to_owned(), summary(&[]));
        let idx = index(&[("a", S1), ("b", S1), ("c", S2)], None);
        assert_eq!(
            codes(&check_shard_index(&idx, &shards, &Limits::default())),
            [code::UNREFERENCED_SHARD]
        );
    }

    #[test]
    fn rejects_shard_count_mismatch() {
        let s1 = "model-00001-of-00003.safetensors";
        let s2 = "model-00002-of-00003.safetensors";
        let shards = BTreeMap::from([
            (s1.to_owned(), summary(&[("a", 1)])),
            (s2.to_owned(), summary(&[("b", 1)])),
        ]);
        let idx = index(&[("a", s1), ("b", s2)], None);
        assert_eq!(
            codes(&check_shard_index(&idx, &shards, &Limits::default())),
            [code::SHARD_COUNT_MISMATCH]
        );
    }

    #[test]
    fn warns_on_total_size_mismatch() {
        let idx = index(&[("a", S1), ("b", S1), ("c", S2)], Some(15));
        let v = check_shard_index(&idx, &good_shards(), &Limits::default());
        assert_eq!(codes(&v), [code::TOTAL_SIZE_MISMATCH]);
        assert!(v[0].warning);
    }

    #[test]
    fn skips_tensor_checks_for_invalid_shards() {
        let mut shards = good_shards();
        shards.insert(S2.to_owned(), None);
        let idx = index(&[("a", S1), ("b", S1), ("c", S2)], Some(99));
        assert!(check_shard_index(&idx, &shards, &Limits::default()).is_empty());
    }
}

/// Differential tests against the official `safetensors` crate (0.6) used as an oracle, and a
/// property test over generated valid files.
///
/// What the oracle really does (checked by these tests): it accepts leading JSON whitespace,
/// trailing tab/LF/CR padding, duplicate keys (last wins), unknown tensor fields, the array form
/// of a tensor entry, `"__metadata__": null`, `{"F32": null}` as a dtype, and an overflowing shape whose
/// overflow comes after a zero dim. It rejects holes, overlaps, trailing bytes and truncation
/// like we do. It does not know C64, F8_E4M3FNUZ or F8_E5M2FNUZ (0.8 does), so files using them
/// are excluded from "the oracle rejects, so must we".
#[cfg(test)]
mod differential {
    use super::*;
    use proptest::prelude::*;
    use safetensors::SafeTensors;

    /// Sub-codes by which we may refuse a file the oracle accepts, each a deliberate strictness.
    const EXTRA_STRICT: &[&str] = &[
        code::HEADER_LEADING_BYTE,
        code::HEADER_TRAILING_BYTES,
        code::DUPLICATE_KEY,
        code::TENSOR_EXTRA_FIELD,
        code::TENSOR_NOT_OBJECT,
        code::METADATA_NOT_STRING_MAP,
        code::INVALID_DTYPE,
        code::SIZE_OVERFLOW,
        code::JSON_TOO_DEEP,
        code::TOO_MANY_TENSORS,
        code::RANK_TOO_LARGE,
    ];

    const UNKNOWN_TO_ORACLE: [Dtype; 3] = [Dtype::C64, Dtype::F8_E4M3FNUZ, Dtype::F8_E5M2FNUZ];

    struct Spec {
        name: String,
        dtype: Dtype,
        shape: Vec<u64>,
    }

    fn byte_size(s: &Spec) -> u64 {
        s.shape.iter().product::<u64>() * u64::from(s.dtype.bits()) / 8
    }

    /// Data laid out in `specs` order; JSON entries written in `order`; `pad` extra spaces.
    fn build(
        specs: &[Spec],
        order: &[usize],
        metadata: Option<&[(String, String)]>,
        pad: usize,
        pretty: bool,
    ) -> Vec<u8> {
        let mut offsets = Vec::new();
        let mut at = 0u64;
        for s in specs {
            let n = byte_size(s);
            offsets.push((at, at + n));
            at += n;
        }
        let ws = if pretty { "\n  " } else { "" };
        let mut entries = Vec::new();
        if let Some(m) = metadata {
            let kv: Vec<String> = m
                .iter()
                .map(|(k, v)| {
                    format!(
                        "{}:{}",
                        serde_json::to_string(k).unwrap(),
                        serde_json::to_string(v).unwrap()
                    )
                })
                .collect();
            entries.push(format!("{ws}\"__metadata__\":{{{}}}", kv.join(",")));
        }
        for &i in order {
            let s = &specs[i];
            let shape: Vec<String> = s.shape.iter().map(u64::to_string).collect();
            entries.push(format!(
                "{ws}{}: {{\"dtype\":\"{}\",\"shape\":[{}],\"data_offsets\":[{},{}]}}",
                serde_json::to_string(&s.name).unwrap(),
                s.dtype.name(),
                shape.join(","),
                offsets[i].0,
                offsets[i].1
            ));
        }
        let mut header = format!("{{{}}}", entries.join(","));
        header.push_str(&" ".repeat(pad));
        let mut out = (header.len() as u64).to_le_bytes().to_vec();
        out.extend_from_slice(header.as_bytes());
        out.extend((0..at).map(|i| (i % 251) as u8));
        out
    }

    fn with_header(header: &str, data: &[u8]) -> Vec<u8> {
        let mut out = (header.len() as u64).to_le_bytes().to_vec();
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(data);
        out
    }

    /// Asserts the oracle relation on one input; returns our verdict for extra checks.
    fn compare(bytes: &[u8], label: &str) -> Result<Header, Violation> {
        let ours = parse_header_bytes(bytes, bytes.len() as u64, &Limits::default());
        let theirs = SafeTensors::read_metadata(bytes);
        match (&ours, &theirs) {
            (Ok(h), Ok((n, meta))) => {
                assert_eq!(h.header_len, *n as u64, "{label}");
                let infos = meta.tensors();
                assert_eq!(infos.len(), h.tensors.len(), "{label}");
                for t in &h.tensors {
                    let r = infos
                        .get(&t.name)
                        .unwrap_or_else(|| panic!("{label}: oracle lacks {:?}", t.name));
                    assert_eq!(r.dtype.to_string(), t.dtype.name(), "{label}");
                    let shape: Vec<u64> = r.shape.iter().map(|&d| d as u64).collect();
                    assert_eq!(shape, t.shape, "{label}");
                    assert_eq!(
                        (r.data_offsets.0 as u64, r.data_offsets.1 as u64),
                        (t.begin, t.end),
                        "{label}"
                    );
                }
                let their_meta: Option<BTreeMap<String, String>> = meta
                    .metadata()
                    .as_ref()
                    .map(|m| m.clone().into_iter().collect());
                assert_eq!(their_meta, h.metadata, "{label}");
            }
            (Ok(h), Err(e)) => {
                let exotic = h
                    .tensors
                    .iter()
                    .any(|t| UNKNOWN_TO_ORACLE.contains(&t.dtype));
                assert!(exotic, "{label}: oracle rejects ({e:?}) what we accept");
            }
            (Err(v), Ok(_)) => {
                assert!(
                    EXTRA_STRICT.contains(&v.code),
                    "{label}: we reject with {v:?}, oracle accepts"
                );
            }
            (Err(_), Err(_)) => {}
        }
        ours
    }

    fn spec(name: &str, dtype: Dtype, shape: &[u64]) -> Spec {
        Spec {
            name: name.to_owned(),
            dtype,
            shape: shape.to_vec(),
        }
    }

    fn bases() -> Vec<Vec<u8>> {
        let meta = vec![("format".to_owned(), "pt".to_owned())];
        let a = vec![
            spec("a", Dtype::F32, &[2, 3]),
            spec("b.weight", Dtype::F16, &[4]),
            spec("c", Dtype::F4, &[2]),
            spec("d", Dtype::I64, &[0]),
        ];
        let b = vec![
            spec("z", Dtype::U8, &[0]),
            spec("x", Dtype::F6_E3M2, &[4]),
            spec("y", Dtype::BF16, &[1, 1]),
        ];
        vec![
            build(&a, &[2, 0, 3, 1], Some(&meta), 3, false),
            build(&b, &[0, 1, 2], None, 0, true),
            build(&[], &[], Some(&meta), 0, false),
            build(&[], &[], None, 6, false),
        ]
    }

    #[test]
    fn bases_are_valid_for_both() {
        for (i, b) in bases().iter().enumerate() {
            assert!(compare(b, &format!("base {i}")).is_ok());
        }
    }

    #[test]
    fn byte_flips_agree_with_oracle() {
        for (i, b) in bases().iter().enumerate() {
            for pos in 0..b.len() {
                for mask in [0x01u8, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0xff] {
                    let mut m = b.clone();
                    m[pos] ^= mask;
                    let _ = compare(&m, &format!("base {i} flip {pos} ^ {mask:#x}"));
                }
            }
        }
    }

    #[test]
    fn truncations_and_appends_are_rejected() {
        for (i, b) in bases().iter().enumerate() {
            for len in 0..b.len() {
                assert!(compare(&b[..len], &format!("base {i} cut {len}")).is_err());
            }
            for tail in [
                &b"\0"[..],
                b" ",
                b"PK\x03\x04",
                b"\x80\x02}q\x00.",
                &[0u8; 16],
            ] {
                let mut m = b.clone();
                m.extend_from_slice(tail);
                let v = compare(&m, &format!("base {i} append")).unwrap_err();
                assert_eq!(v.code, code::TRAILING_BYTES);
            }
        }
    }

    /// Header-level edits on base 0, each re-encoded with a correct `N`.
    #[test]
    fn header_edits_agree_with_oracle() {
        let base = &bases()[0];
        let n = u64::from_le_bytes(base[..8].try_into().unwrap()) as usize;
        let header = std::str::from_utf8(&base[8..8 + n])
            .unwrap()
            .trim_end()
            .to_owned();
        let data = base[8 + n..].to_vec();
        let edits: &[(&str, &str, Option<&str>)] = &[
            ("{", " {", Some(code::HEADER_LEADING_BYTE)),
            ("{", "\n{", Some(code::HEADER_LEADING_BYTE)),
            ("{", "\u{feff}{", Some(code::HEADER_LEADING_BYTE)),
            (
                "\"format\"",
                "\"format\":\"x\",\"format\"",
                Some(code::DUPLICATE_KEY),
            ),
            (
                "{\"__metadata__\"",
                "{\"__metadata__\":{},\"__metadata__\"",
                Some(code::DUPLICATE_KEY),
            ),
            (
                "\"__metadata__\":{\"format\":\"pt\"}",
                "\"__metadata__\":null",
                Some(code::METADATA_NOT_STRING_MAP),
            ),
            (
                "\"__metadata__\":{\"format\":\"pt\"}",
                "\"__metadata__\":{\"format\":1}",
                Some(code::METADATA_NOT_STRING_MAP),
            ),
            (
                "\"__metadata__\":{\"format\":\"pt\"}",
                "\"__metadata__\":[]",
                Some(code::METADATA_NOT_STRING_MAP),
            ),
            (
                "\"format\":\"pt\"",
                "\"format\":\"\\ud800\"",
                Some(code::HEADER_INVALID_JSON),
            ),
            ("\"format\":\"pt\"", "\"format\":\"\\ud83d\\ude00\"", None),
            ("\"format\":\"pt\"", "\"format\":\"p\\u0000t\"", None),
            ("\"a\"", "\"\\u0061\"", None),
            (
                "\"dtype\":\"F32\"",
                "\"dtype\":\"F32\",\"extra\":[[[1]]]",
                Some(code::TENSOR_EXTRA_FIELD),
            ),
            (
                "\"dtype\":\"F32\"",
                "\"dtype\":\"F32\",\"extra\":\"\\ud800\"",
                Some(code::HEADER_INVALID_JSON),
            ),
            (
                "\"dtype\":\"F32\"",
                "\"dtype\":\"F32\",\"dtype\":\"F32\"",
                Some(code::DUPLICATE_KEY),
            ),
            (
                "\"dtype\":\"F32\"",
                "\"dtype\":\"f32\"",
                Some(code::INVALID_DTYPE),
            ),
            (
                "\"dtype\":\"F32\"",
                "\"dtype\":{\"F32\":null}",
                Some(code::INVALID_DTYPE),
            ),
            (
                "\"dtype\":\"F32\"",
                "\"dtype\":\"C64\"",
                Some(code::SIZE_MISMATCH),
            ),
            ("\"dtype\":\"F32\",", "", Some(code::TENSOR_MISSING_FIELD)),
            ("[2,3]", "[3,2]", None),
            ("[2,3]", "[6]", None),
            ("[2,3]", "[2,3,1,1]", None),
            ("[2,3]", "[2,-0,3]", Some(code::INVALID_SHAPE)),
            ("[2,3]", "[2,3.0]", Some(code::INVALID_SHAPE)),
            ("[2,3]", "[2,3e0]", Some(code::INVALID_SHAPE)),
            ("[2,3]", "[2,03]", Some(code::HEADER_INVALID_JSON)),
            ("[2,3]", "[2,+3]", Some(code::HEADER_INVALID_JSON)),
            ("[2,3]", "[2,3,]", Some(code::HEADER_INVALID_JSON)),
            (
                "[2,3]",
                "[0,9223372036854775808,2]",
                Some(code::SIZE_OVERFLOW),
            ),
            (
                "[2,3]",
                "[9223372036854775808,2,0]",
                Some(code::SIZE_OVERFLOW),
            ),
            (
                "[2,3]",
                "[2,18446744073709551616]",
                Some(code::INVALID_SHAPE),
            ),
            ("[2,3]", "[2,3] ", None),
            ("\"shape\"", " \"shape\" ", None),
            ("}}", "}}\t", Some(code::HEADER_TRAILING_BYTES)),
            ("}}", "}}\n", Some(code::HEADER_TRAILING_BYTES)),
            ("}}", "}}\r\n  ", Some(code::HEADER_TRAILING_BYTES)),
            ("}}", "}}\0", Some(code::HEADER_TRAILING_BYTES)),
            ("}}", "},}", Some(code::HEADER_INVALID_JSON)),
            ("}}", "}}//", Some(code::HEADER_TRAILING_BYTES)),
        ];
        for (from, to, want) in edits {
            assert!(header.contains(from), "{from}");
            let edited = header.replacen(from, to, 1);
            let label = format!("edit {from:?} -> {to:?}");
            let got = compare(&with_header(&edited, &data), &label);
            match want {
                None => assert!(got.is_ok(), "{label}: {got:?}"),
                Some(c) => assert_eq!(got.err().map(|v| v.code), Some(*c), "{label}"),
            }
        }
        // The array form of a tensor entry, which the oracle takes for a struct.
        let arr = r#"{"a":["F32",[2],[0,8]]}"#;
        assert_eq!(
            compare(&with_header(arr, &[0; 8]), "array form")
                .unwrap_err()
                .code,
            code::TENSOR_NOT_OBJECT
        );
    }

    /// Every number token of base 0's header replaced, one at a time, with awkward spellings.
    #[test]
    fn number_substitutions_agree_with_oracle() {
        let base = &bases()[0];
        let n = u64::from_le_bytes(base[..8].try_into().unwrap()) as usize;
        let header = std::str::from_utf8(&base[8..8 + n]).unwrap().to_owned();
        let data = base[8 + n..].to_vec();
        let spans: Vec<(usize, usize)> = {
            let b = header.as_bytes();
            let mut v = Vec::new();
            let mut i = 0;
            while i < b.len() {
                if b[i].is_ascii_digit() && i > 0 && matches!(b[i - 1], b'[' | b',') {
                    let s = i;
                    while i < b.len() && b[i].is_ascii_digit() {
                        i += 1;
                    }
                    v.push((s, i));
                } else {
                    i += 1;
                }
            }
            v
        };
        assert!(spans.len() >= 12);
        let values = [
            "0",
            "1",
            "2",
            "7",
            "24",
            "32",
            "-1",
            "-0",
            "1.0",
            "1e1",
            "01",
            "18446744073709551615",
            "18446744073709551616",
            "9223372036854775808",
            "4611686018427387904",
        ];
        for &(s, e) in &spans {
            for v in values {
                let edited = format!("{}{v}{}", &header[..s], &header[e..]);
                let _ = compare(
                    &with_header(&edited, &data),
                    &format!("number {s}..{e} -> {v}"),
                );
                // Same edit with the data buffer resized to what the file claims would make the
                // tiling line up in more cases, so deeper checks get exercised.
                for extra in [1usize, 4, 8] {
                    let mut d = data.clone();
                    d.resize(data.len() + extra, 0);
                    let _ = compare(
                        &with_header(&edited, &d),
                        &format!("number {s}..{e} -> {v} +{extra}"),
                    );
                }
            }
        }
    }

    /// Offsets shuffled between tensors: tiling errors of every kind.
    #[test]
    fn offset_layouts_agree_with_oracle() {
        let ranges = [
            (0u64, 4u64),
            (4, 8),
            (0, 0),
            (4, 4),
            (8, 8),
            (2, 6),
            (8, 4),
            (6, 10),
            (0, 8),
            (12, 16),
        ];
        for &ra in &ranges {
            for &rb in &ranges {
                for data_len in [0usize, 4, 8, 10, 16] {
                    let dt = |r: (u64, u64)| {
                        if r.1 >= r.0 && r.1 - r.0 == 4 {
                            ("F32", "[1]")
                        } else if r.1 >= r.0 && r.1 - r.0 == 8 {
                            ("F32", "[2]")
                        } else {
                            ("U8", "[0]")
                        }
                    };
                    let (da, sa) = dt(ra);
                    let (db, sb) = dt(rb);
                    let h = format!(
                        r#"{{"a":{{"dtype":"{da}","shape":{sa},"data_offsets":[{},{}]}},"b":{{"dtype":"{db}","shape":{sb},"data_offsets":[{},{}]}}}}"#,
                        ra.0, ra.1, rb.0, rb.1
                    );
                    let _ = compare(
                        &with_header(&h, &vec![0; data_len]),
                        &format!("{ra:?} {rb:?} len {data_len}"),
                    );
                }
            }
        }
    }

    /// Pins down the oracle behaviour the module docs and `EXTRA_STRICT` rely on.
    #[test]
    fn oracle_quirks_are_as_documented() {
        let t = |fields: &str| format!(r#"{{"a":{{{fields}}}}}"#);
        let ok = r#""dtype":"F32","shape":[2],"data_offsets":[0,8]"#;
        let accepted = [
            (format!(" {}", t(ok)), code::HEADER_LEADING_BYTE),
            (format!("{}\t\n\r", t(ok)), code::HEADER_TRAILING_BYTES),
            (
                format!(r#"{{"a":{{{ok}}},"a":{{{ok}}}}}"#),
                code::DUPLICATE_KEY,
            ),
            (t(&format!(r#"{ok},"x":[[1]]"#)), code::TENSOR_EXTRA_FIELD),
            (
                r#"{"a":["F32",[2],[0,8]]}"#.to_owned(),
                code::TENSOR_NOT_OBJECT,
            ),
            (
                format!(r#"{{"__metadata__":null,"a":{{{ok}}}}}"#),
                code::METADATA_NOT_STRING_MAP,
            ),
            (
                t(r#""dtype":{"F32":null},"shape":[2],"data_offsets":[0,8]"#),
                code::INVALID_DTYPE,
            ),
            (
                t(r#""dtype":"U8","shape":[0,9223372036854775808,2],"data_offsets":[0,0]"#),
                code::SIZE_OVERFLOW,
            ),
        ];
        for (header, ours) in accepted {
            let data = if header.contains("[0,8]") {
                vec![0u8; 8]
            } else {
                Vec::new()
            };
            let bytes = with_header(&header, &data);
            assert!(
                SafeTensors::read_metadata(&bytes).is_ok(),
                "oracle should accept {header}"
            );
            let got = parse_header_bytes(&bytes, bytes.len() as u64, &Limits::default());
            assert_eq!(got.err().map(|v| v.code), Some(ours), "{header}");
        }
        let rejected = [
            t(r#""dtype":"U8","shape":[9223372036854775808,2,0],"data_offsets":[0,0]"#),
            t(&format!(r#"{ok},"x":"\ud800""#)),
            t(r#""dtype":"F32","shape":[-0,2],"data_offsets":[0,0]"#),
            t(r#""dtype":"C64","shape":[1],"data_offsets":[0,8]"#),
            t(r#""dtype":"F8_E4M3FNUZ","shape":[8],"data_offsets":[0,8]"#),
            t(r#""dtype":"F32","shape":[2],"data_offsets":[0,8]"#) + "\0",
        ];
        for header in rejected {
            assert!(
                SafeTensors::read_metadata(&with_header(&header, &[0; 8])).is_err(),
                "oracle should reject {header}"
            );
        }
    }

    fn dtype_strategy() -> impl Strategy<Value = Dtype> {
        prop::sample::select(Dtype::ALL.to_vec())
    }

    prop_compose! {
        fn tensor_strategy()(dtype in dtype_strategy(), mut shape in prop::collection::vec(0u64..5, 0..4), tag in "[a-z._\"\\\\é😀]{0,5}") -> (Dtype, Vec<u64>, String) {
            let bits = shape.iter().product::<u64>() * u64::from(dtype.bits());
            if bits % 8 != 0 {
                shape.push(4);
            }
            (dtype, shape, tag)
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]
        #[test]
        fn generated_valid_files_pass_with_right_facts(
            raw in prop::collection::vec(tensor_strategy(), 0..8),
            order_seed in prop::collection::vec(any::<u32>(), 8),
            metadata in prop::option::of(prop::collection::btree_map("[a-z\\n\"é]{0,4}", "[ -~é\\t]{0,8}", 0..4)),
            pad in 0usize..16,
            pretty in any::<bool>(),
        ) {
            let specs: Vec<Spec> = raw.iter().enumerate().map(|(i, (d, s, tag))| spec(&format!("{tag}#{i}"), *d, s)).collect();
            let mut order: Vec<usize> = (0..specs.len()).collect();
            order.sort_by_key(|&i| order_seed[i]);
            let meta: Option<Vec<(String, String)>> = metadata.clone().map(|m| m.into_iter().collect());
            let bytes = build(&specs, &order, meta.as_deref(), pad, pretty);
            let h = compare(&bytes, "generated").unwrap();
            let f = facts(&h);
            prop_assert_eq!(f.tensor_count, specs.len() as u64);
            prop_assert_eq!(f.parameters, specs.iter().map(|s| u128::from(s.shape.iter().product::<u64>())).sum::<u128>());
            prop_assert_eq!(f.data_bytes, specs.iter().map(byte_size).sum::<u64>());
            prop_assert_eq!(f.metadata, metadata);
            prop_assert_eq!(f.dtypes.values().sum::<u64>(), specs.len() as u64);
            for s in &specs {
                let t = h.tensors.iter().find(|t| t.name == s.name).unwrap();
                prop_assert_eq!((t.dtype, &t.shape), (s.dtype, &s.shape));
            }
            // The streamed scan reads exactly the data region.
            let start = h.data_start() as usize;
            let mut r = std::io::BufReader::with_capacity(3, &bytes[start..]);
            prop_assert!(scan_values(&mut r, &h).is_ok());
        }
    }
}
