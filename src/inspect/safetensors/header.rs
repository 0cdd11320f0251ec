//! The header's types: [`Header`], [`TensorInfo`] and [`Dtype`], the [`Limits`] applied while
//! reading it, and the [`Violation`] sub-codes with their constructor. The folder's leaf: it
//! imports nothing from `safetensors`, so the syntax, schema, values and index checks use it
//! without an arrow back up to `mod.rs`.

use crate::model::problem::{Problem, ProblemKind};
use std::collections::BTreeMap;

use serde::Serialize;

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
pub(super) const PREFIX_LEN: u64 = 8;

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

impl From<&crate::model::limits::Limits> for Limits {
    fn from(l: &crate::model::limits::Limits) -> Self {
        use crate::model::limits::usize_of;
        Self {
            max_header_bytes: l.safetensors_header_bytes,
            max_tensors: usize_of(l.safetensors_tensor_count),
            max_json_depth: usize_of(l.json_depth),
            max_rank: usize_of(l.tensor_rank),
            max_index_bytes: l.json_bytes,
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self::from(&crate::model::limits::Limits::default())
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

/// One broken rule: the crate's one [`Problem`] type, under the name this module's docs use.
/// `code` is one of [`code`]; evidence `tensor` names the tensor concerned and `shard` the
/// shard file (index checks); `offset` is the byte position in the file (JSON errors: `8 +` the
/// position in the header). The kind is [`ProblemKind::Malformed`], [`ProblemKind::LimitExceeded`]
/// for a configured limit that is not a format rule (tensor count, rank, JSON depth), and
/// [`ProblemKind::Note`] for `total-size-mismatch`, which is suspicious rather than broken.
pub type Violation = Problem;

/// A violation of `code`, its kind decided by the code.
pub(crate) fn violation(code: &'static str, message: impl Into<String>) -> Problem {
    let kind = match code {
        code::TOO_MANY_TENSORS | code::RANK_TOO_LARGE | code::JSON_TOO_DEEP => {
            ProblemKind::LimitExceeded
        }
        _ => ProblemKind::Malformed,
    };
    Problem::new(kind, code, message, None)
}
