//! GGUF inspector (ggml/docs/gguf.md). A GGUF file is a little-endian header (magic `GGUF`,
//! version, tensor count, metadata count), typed key/value metadata, a tensor-info table and an
//! aligned data region. We read the header and tables once from the front of the stream,
//! skipping large arrays (token lists) without allocating, and stop at the end of the
//! tensor-info table: the caller drains the data region for hashing. Every count, length,
//! array nesting level and the total header size is checked against [`Limits`] first.
//!
//! Security-relevant facts: a chat template (`tokenizer.chat_template` and
//! `tokenizer.chat_template.<name>`) is Jinja that llama-cpp-python, transformers-style
//! servers and others render; before sandboxing was added (CVE-2024-34359) a template could
//! reach Python internals and run commands. [`scan_template`] statically looks for the
//! constructs such payloads need. Tensor offsets that are misaligned, overlap, or point past
//! the end of the file are how malformed GGUF files have triggered out-of-bounds reads in
//! loaders, so those are problems too.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, BufRead};

use serde::Serialize;
use thiserror::Error;

use super::problem::{Problem, ProblemKind, excerpt};

pub use super::template::{Indicator, TemplateHit, scan_template};

/// Bounds for the GGUF header walk.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Most tensors accepted.
    pub max_tensors: u64,
    /// Most metadata key/value pairs accepted.
    pub max_kv: u64,
    /// Longest metadata key (the spec allows 65535; real keys are short).
    pub max_key_len: u64,
    /// Longest string value kept in memory (other strings are skipped unread).
    pub max_string_len: u64,
    /// Longest chat template scanned; longer ones are scanned up to this size and noted.
    pub max_template_len: u64,
    /// Most elements in one metadata array.
    pub max_array_len: u64,
    /// Deepest nesting of arrays in arrays.
    pub max_array_depth: usize,
    /// Longest tensor name.
    pub max_tensor_name_len: u64,
    /// Most dimensions per tensor (ggml supports 4).
    pub max_dims: u32,
    /// Most bytes the header (metadata and tensor infos) may span.
    pub max_header_bytes: u64,
    /// Most template findings reported per template.
    pub max_template_hits: usize,
    /// Most tensor problems reported (the rest are summarised).
    pub max_tensor_problems: usize,
}

impl From<&crate::model::limits::Limits> for Limits {
    /// The policy's `gguf_*` limits; key, name and string lengths, array sizes, the template
    /// scan size and the problems kept are fixed internal caps.
    fn from(l: &crate::model::limits::Limits) -> Self {
        Self {
            max_tensors: l.gguf_tensor_count,
            max_kv: l.gguf_kv_count,
            max_key_len: 256,
            max_string_len: 64 * 1024,
            max_template_len: super::template::MAX_TEMPLATE_BYTES as u64,
            max_array_len: 1 << 24,
            max_array_depth: 4,
            max_tensor_name_len: 256,
            // A format rule (ggml tensors have at most 4 dimensions), not a resource limit.
            max_dims: 4,
            max_header_bytes: l.gguf_metadata_bytes,
            max_template_hits: super::template::MAX_TEMPLATE_HITS,
            max_tensor_problems: 64,
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self::from(&crate::model::limits::Limits::default())
    }
}

/// What a GGUF header says.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Facts {
    /// Format version (2 or 3 are read).
    pub version: u32,
    /// `general.architecture`, e.g. "llama".
    pub architecture: Option<String>,
    /// `general.name`.
    pub name: Option<String>,
    /// `general.file_type` (the quantisation of most tensors).
    pub file_type: Option<u64>,
    /// Name of `file_type` from the spec's list, when known (e.g. "MOSTLY_Q4_K_M").
    pub file_type_name: Option<String>,
    /// `general.quantization_version`.
    pub quantization_version: Option<u64>,
    /// `<architecture>.context_length`.
    pub context_length: Option<u64>,
    /// Alignment of tensor data (`general.alignment`, default 32).
    pub alignment: u64,
    /// Header tensor count.
    pub tensor_count: u64,
    /// Header metadata count.
    pub kv_count: u64,
    /// Sum of element counts over all tensors, when it fits in 64 bits.
    pub parameter_count: Option<u64>,
    /// Tensors per ggml type name.
    pub tensor_types: BTreeMap<String, u64>,
    /// Chat templates present: "default" for `tokenizer.chat_template`, else the suffix.
    pub chat_templates: Vec<String>,
    /// File offset where the tensor data region starts.
    pub data_offset: Option<u64>,
}

/// Sniffs the GGUF magic.
pub fn is_gguf(head: &[u8]) -> bool {
    head.starts_with(b"GGUF")
}

#[derive(Debug, Error)]
enum GgufError {
    #[error("file ends at offset {offset} inside the header")]
    Truncated { offset: u64 },
    #[error("{what} {value} at offset {offset} exceeds the limit of {limit}")]
    Limit {
        code: &'static str,
        what: &'static str,
        value: u64,
        limit: u64,
        offset: u64,
    },
    #[error("{message}")]
    Invalid {
        code: &'static str,
        message: String,
        offset: u64,
    },
    #[error("read error at offset {offset}: {message}")]
    Io { offset: u64, message: String },
}

/// Sub-codes of header shapes that only crafted files have: the llama.cpp / GGML out-of-bounds
/// advisories abuse exactly these (an overflowing `ne` product or array size that wraps the
/// allocation, a tensor type indexing past the type table, alignment 0 dividing by zero, tensor
/// data beyond the mapping). Reported under `format-exploit-shape` (deny) instead of
/// `format-malformed` (warn).
pub const EXPLOIT_CODES: &[&str] = &[
    "bad-alignment",
    "dimension-overflow",
    "size-overflow",
    "count-overflow",
    "unknown-tensor-type",
    "negative-dimension",
    "data-past-eof",
    "tensor-past-eof",
];

impl GgufError {
    fn into_problem(self) -> Problem {
        let (kind, code, offset) = match &self {
            Self::Truncated { offset } => (ProblemKind::Malformed, "truncated", *offset),
            Self::Limit { code, offset, .. } => (ProblemKind::LimitExceeded, *code, *offset),
            Self::Invalid { code, offset, .. } if EXPLOIT_CODES.contains(code) => {
                (ProblemKind::Exploit, *code, *offset)
            }
            Self::Invalid { code, offset, .. } => (ProblemKind::Malformed, *code, *offset),
            Self::Io { offset, .. } => (ProblemKind::Malformed, "io-error", *offset),
        };
        Problem::new(kind, code, format!("gguf: {self}"), Some(offset))
    }
}

/// Front-to-back reader over the caller's stream.
struct Stream<'a> {
    inner: &'a mut dyn BufRead,
    pos: u64,
    size: u64,
    max_header: u64,
}

impl Stream<'_> {
    /// Refuses to go past the stated file size or the header limit before reading.
    fn check_room(&self, n: u64) -> Result<(), GgufError> {
        let end = self
            .pos
            .checked_add(n)
            .ok_or(GgufError::Truncated { offset: self.size })?;
        if end > self.size {
            return Err(GgufError::Truncated { offset: self.size });
        }
        if end > self.max_header {
            return Err(GgufError::Limit {
                code: "header-too-large",
                what: "header size",
                value: end,
                limit: self.max_header,
                offset: self.pos,
            });
        }
        Ok(())
    }

    fn io(offset: u64, err: &io::Error) -> GgufError {
        GgufError::Io {
            offset,
            message: err.to_string(),
        }
    }

    fn read_into(&mut self, out: &mut [u8]) -> Result<(), GgufError> {
        self.check_room(out.len() as u64)?;
        let mut filled = 0;
        while filled < out.len() {
            let pos = self.pos;
            let buf = self.inner.fill_buf().map_err(|e| Self::io(pos, &e))?;
            if buf.is_empty() {
                return Err(GgufError::Truncated { offset: self.pos });
            }
            let n = buf.len().min(out.len() - filled);
            if let (Some(dst), Some(src)) = (out.get_mut(filled..filled + n), buf.get(..n)) {
                dst.copy_from_slice(src);
            }
            self.inner.consume(n);
            filled += n;
            self.pos += n as u64;
        }
        Ok(())
    }

    fn u8(&mut self) -> Result<u8, GgufError> {
        let mut b = [0u8; 1];
        self.read_into(&mut b)?;
        let [byte] = b;
        Ok(byte)
    }

    fn u32(&mut self) -> Result<u32, GgufError> {
        let mut b = [0u8; 4];
        self.read_into(&mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    fn u64(&mut self) -> Result<u64, GgufError> {
        let mut b = [0u8; 8];
        self.read_into(&mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    fn skip(&mut self, n: u64) -> Result<(), GgufError> {
        self.check_room(n)?;
        let mut left = n;
        while left > 0 {
            let pos = self.pos;
            let available = self.inner.fill_buf().map_err(|e| Self::io(pos, &e))?.len();
            if available == 0 {
                return Err(GgufError::Truncated { offset: self.pos });
            }
            let step = usize::try_from(left).map_or(available, |l| l.min(available));
            self.inner.consume(step);
            self.pos += step as u64;
            left -= step as u64;
        }
        Ok(())
    }

    /// Reads `len` bytes that the caller has already bounded.
    fn bytes(&mut self, len: u64) -> Result<Vec<u8>, GgufError> {
        self.check_room(len)?;
        let n = usize::try_from(len).map_err(|_| GgufError::Truncated { offset: self.pos })?;
        let mut out = vec![0u8; n];
        self.read_into(&mut out)?;
        Ok(out)
    }
}

const TYPE_UINT8: u32 = 0;
const TYPE_INT8: u32 = 1;
const TYPE_UINT16: u32 = 2;
const TYPE_INT16: u32 = 3;
const TYPE_UINT32: u32 = 4;
const TYPE_INT32: u32 = 5;
const TYPE_FLOAT32: u32 = 6;
const TYPE_BOOL: u32 = 7;
const TYPE_STRING: u32 = 8;
const TYPE_ARRAY: u32 = 9;
const TYPE_UINT64: u32 = 10;
const TYPE_INT64: u32 = 11;
const TYPE_FLOAT64: u32 = 12;

fn scalar_size(value_type: u32) -> Option<u64> {
    match value_type {
        TYPE_UINT8 | TYPE_INT8 | TYPE_BOOL => Some(1),
        TYPE_UINT16 | TYPE_INT16 => Some(2),
        TYPE_UINT32 | TYPE_INT32 | TYPE_FLOAT32 => Some(4),
        TYPE_UINT64 | TYPE_INT64 | TYPE_FLOAT64 => Some(8),
        _ => None,
    }
}

/// ggml tensor types: (id, name, elements per block, bytes per block), from ggml.h /
/// ggml-common.h. Removed types (4, 5, 31..=33, 36..=38) are unknown here.
const GGML_TYPES: &[(u32, &str, u64, u64)] = &[
    (0, "F32", 1, 4),
    (1, "F16", 1, 2),
    (2, "Q4_0", 32, 18),
    (3, "Q4_1", 32, 20),
    (6, "Q5_0", 32, 22),
    (7, "Q5_1", 32, 24),
    (8, "Q8_0", 32, 34),
    (9, "Q8_1", 32, 36),
    (10, "Q2_K", 256, 84),
    (11, "Q3_K", 256, 110),
    (12, "Q4_K", 256, 144),
    (13, "Q5_K", 256, 176),
    (14, "Q6_K", 256, 210),
    (15, "Q8_K", 256, 292),
    (16, "IQ2_XXS", 256, 66),
    (17, "IQ2_XS", 256, 74),
    (18, "IQ3_XXS", 256, 98),
    (19, "IQ1_S", 256, 50),
    (20, "IQ4_NL", 32, 18),
    (21, "IQ3_S", 256, 110),
    (22, "IQ2_S", 256, 82),
    (23, "IQ4_XS", 256, 136),
    (24, "I8", 1, 1),
    (25, "I16", 1, 2),
    (26, "I32", 1, 4),
    (27, "I64", 1, 8),
    (28, "F64", 1, 8),
    (29, "IQ1_M", 256, 56),
    (30, "BF16", 1, 2),
    (34, "TQ1_0", 256, 54),
    (35, "TQ2_0", 256, 66),
    (39, "MXFP4", 32, 17),
];

/// `general.file_type` names from the spec.
const FILE_TYPES: &[&str] = &[
    "ALL_F32",
    "MOSTLY_F16",
    "MOSTLY_Q4_0",
    "MOSTLY_Q4_1",
    "MOSTLY_Q4_1_SOME_F16",
    "MOSTLY_Q4_2",
    "MOSTLY_Q4_3",
    "MOSTLY_Q8_0",
    "MOSTLY_Q5_0",
    "MOSTLY_Q5_1",
    "MOSTLY_Q2_K",
    "MOSTLY_Q3_K_S",
    "MOSTLY_Q3_K_M",
    "MOSTLY_Q3_K_L",
    "MOSTLY_Q4_K_S",
    "MOSTLY_Q4_K_M",
    "MOSTLY_Q5_K_S",
    "MOSTLY_Q5_K_M",
    "MOSTLY_Q6_K",
];

struct TensorInfo {
    name: String,
    offset: u64,
    size: Option<u64>,
}

/// Reads a GGUF header from offset 0 of `reader` (the file holds `size` bytes) and stops at
/// the end of the tensor-info table; the caller drains the rest of the stream.
pub fn inspect(reader: &mut dyn BufRead, size: u64, limits: &Limits) -> (Facts, Vec<Problem>) {
    let mut facts = Facts {
        alignment: 32,
        ..Facts::default()
    };
    let mut problems = Vec::new();
    let mut s = Stream {
        inner: reader,
        pos: 0,
        size,
        max_header: limits.max_header_bytes,
    };
    if let Err(err) = parse(&mut s, limits, &mut facts, &mut problems) {
        problems.push(err.into_problem());
    }
    (facts, problems)
}

fn parse(
    s: &mut Stream<'_>,
    limits: &Limits,
    facts: &mut Facts,
    problems: &mut Vec<Problem>,
) -> Result<(), GgufError> {
    let (tensor_count, kv_count) = read_header(s, limits, facts)?;
    let mut meta = Metadata::default();
    for _ in 0..kv_count {
        read_kv(s, limits, &mut meta, facts, problems)?;
    }
    facts.file_type_name = facts
        .file_type
        .and_then(|t| usize::try_from(t).ok())
        .and_then(|t| FILE_TYPES.get(t))
        .map(|n| (*n).to_owned());
    if let Some(arch) = &facts.architecture {
        facts.context_length = meta
            .context_lengths
            .get(&format!("{arch}.context_length"))
            .copied();
    }
    if let Some(align) = meta.alignment {
        // llama.cpp requires a power of two; the spec adds "multiple of 8".
        if align == 0 || !align.is_power_of_two() || align > 1 << 30 {
            return Err(GgufError::Invalid {
                code: "bad-alignment",
                message: format!("general.alignment {align} is not a power of two"),
                offset: 0,
            });
        }
        facts.alignment = align;
    }
    let tensors = read_tensor_infos(s, tensor_count, limits, facts, problems)?;
    check_tensors(s.pos, s.size, &tensors, limits, facts, problems);
    Ok(())
}

/// The metadata seen so far that later pairs or the tensor section depend on.
#[derive(Default)]
struct Metadata {
    /// Keys already read, to flag duplicates.
    keys: BTreeSet<String>,
    /// `<arch>.context_length` values, until the architecture is known.
    context_lengths: BTreeMap<String, u64>,
    /// `general.alignment`, checked once every pair is read.
    alignment: Option<u64>,
}

/// Magic, version and the two counts, each count checked against its limit before any
/// pair or tensor is read. Returns (tensor count, metadata count).
fn read_header(
    s: &mut Stream<'_>,
    limits: &Limits,
    facts: &mut Facts,
) -> Result<(u64, u64), GgufError> {
    let mut magic = [0u8; 4];
    s.read_into(&mut magic)?;
    if &magic != b"GGUF" {
        return Err(GgufError::Invalid {
            code: "bad-magic",
            message: format!("magic {magic:02x?} is not GGUF"),
            offset: 0,
        });
    }
    let version = s.u32()?;
    facts.version = version;
    if version != 2 && version != 3 {
        // A byte-swapped 2 or 3 means a big-endian file, which we do not read.
        let swapped = version.swap_bytes();
        let code = if swapped == 2 || swapped == 3 {
            "big-endian"
        } else {
            "unsupported-version"
        };
        return Err(GgufError::Invalid {
            code,
            message: format!("version {version} is not supported (only little-endian 2 and 3)"),
            offset: 4,
        });
    }
    let tensor_count = s.u64()?;
    let kv_count = s.u64()?;
    facts.tensor_count = tensor_count;
    facts.kv_count = kv_count;
    if tensor_count > limits.max_tensors {
        return Err(GgufError::Limit {
            code: "too-many-tensors",
            what: "tensor count",
            value: tensor_count,
            limit: limits.max_tensors,
            offset: 8,
        });
    }
    if kv_count > limits.max_kv {
        return Err(GgufError::Limit {
            code: "too-many-kv",
            what: "metadata count",
            value: kv_count,
            limit: limits.max_kv,
            offset: 16,
        });
    }
    Ok((tensor_count, kv_count))
}

/// Reads one metadata key/value pair, keeping the values the facts report (architecture,
/// name, file type, chat templates) and skipping the rest within the limits.
fn read_kv(
    s: &mut Stream<'_>,
    limits: &Limits,
    meta: &mut Metadata,
    facts: &mut Facts,
    problems: &mut Vec<Problem>,
) -> Result<(), GgufError> {
    let key_offset = s.pos;
    let key = read_key(s, limits)?;
    if !meta.keys.insert(key.clone()) {
        problems.push(
            Problem::new(
                ProblemKind::Malformed,
                "duplicate-key",
                format!("metadata key '{}' appears twice", excerpt(&key, 200)),
                Some(key_offset),
            )
            .with("key", excerpt(&key, 200)),
        );
    }
    let value_type = s.u32()?;
    let is_template =
        key == "tokenizer.chat_template" || key.starts_with("tokenizer.chat_template.");
    match value_type {
        TYPE_STRING if is_template => {
            let name = key
                .strip_prefix("tokenizer.chat_template.")
                .unwrap_or("default")
                .to_owned();
            read_template(s, limits, &name, problems)?;
            facts.chat_templates.push(name);
        }
        TYPE_STRING => {
            let len = s.u64()?;
            let wanted = matches!(key.as_str(), "general.architecture" | "general.name");
            if wanted && len <= limits.max_string_len {
                let text = String::from_utf8_lossy(&s.bytes(len)?).into_owned();
                if key == "general.architecture" {
                    facts.architecture = Some(text);
                } else {
                    facts.name = Some(text);
                }
            } else {
                s.skip(len)?;
            }
        }
        TYPE_ARRAY => skip_array(s, limits)?,
        TYPE_BOOL => {
            let b = s.u8()?;
            if b > 1 {
                problems.push(Problem::new(
                    ProblemKind::Malformed,
                    "bad-bool",
                    format!("metadata key '{}' holds bool byte {b}", excerpt(&key, 200)),
                    Some(s.pos - 1),
                ));
            }
        }
        other => {
            let Some(width) = scalar_size(other) else {
                return Err(GgufError::Invalid {
                    code: "bad-value-type",
                    message: format!(
                        "metadata key '{}' has unknown value type {other}",
                        excerpt(&key, 200)
                    ),
                    offset: s.pos - 4,
                });
            };
            let value = read_unsigned(s, other, width)?;
            match key.as_str() {
                "general.alignment" => meta.alignment = value,
                "general.file_type" => facts.file_type = value,
                "general.quantization_version" => facts.quantization_version = value,
                _ if key.ends_with(".context_length") && meta.context_lengths.len() < 64 => {
                    if let Some(v) = value {
                        meta.context_lengths.insert(key.clone(), v);
                    }
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// Reads an unsigned integer metadata value (signed and float values return `None`).
fn read_unsigned(
    s: &mut Stream<'_>,
    value_type: u32,
    width: u64,
) -> Result<Option<u64>, GgufError> {
    Ok(match value_type {
        TYPE_UINT8 => Some(u64::from(s.u8()?)),
        TYPE_UINT16 => {
            let mut b = [0u8; 2];
            s.read_into(&mut b)?;
            Some(u64::from(u16::from_le_bytes(b)))
        }
        TYPE_UINT32 => Some(u64::from(s.u32()?)),
        TYPE_UINT64 => Some(s.u64()?),
        TYPE_INT32 => u64::try_from(s.u32()? as i32).ok(),
        TYPE_INT64 => u64::try_from(s.u64()? as i64).ok(),
        _ => {
            s.skip(width)?;
            None
        }
    })
}

fn read_key(s: &mut Stream<'_>, limits: &Limits) -> Result<String, GgufError> {
    let offset = s.pos;
    let len = s.u64()?;
    if len > limits.max_key_len {
        return Err(GgufError::Limit {
            code: "key-too-long",
            what: "metadata key length",
            value: len,
            limit: limits.max_key_len,
            offset,
        });
    }
    let bytes = s.bytes(len)?;
    if !bytes.is_ascii() {
        return Err(GgufError::Invalid {
            code: "bad-key",
            message: format!("metadata key at offset {offset} is not ascii"),
            offset,
        });
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn read_template(
    s: &mut Stream<'_>,
    limits: &Limits,
    name: &str,
    problems: &mut Vec<Problem>,
) -> Result<(), GgufError> {
    let len = s.u64()?;
    let start = s.pos;
    let kept = len.min(limits.max_template_len);
    let text = String::from_utf8_lossy(&s.bytes(kept)?).into_owned();
    s.skip(len - kept)?;
    if kept < len {
        problems.push(
            Problem::new(
                ProblemKind::LimitExceeded,
                "template-too-large",
                format!(
                    "chat template '{}' is {len} bytes; only the first {kept} were scanned",
                    excerpt(name, 100)
                ),
                Some(start),
            )
            .with("template", excerpt(name, 100)),
        );
    }
    let origin = super::template::Origin {
        carrier: None,
        offset: Some(start),
    };
    problems.extend(
        super::template::judge(&text, name, origin)
            .into_iter()
            .take(limits.max_template_hits),
    );
    Ok(())
}

/// Skips an array value (type and count already past the value type), iteratively.
fn skip_array(s: &mut Stream<'_>, limits: &Limits) -> Result<(), GgufError> {
    // Each entry: element type and elements still to skip.
    let mut stack: Vec<(u32, u64)> = Vec::new();
    let mut header = true;
    loop {
        if header {
            let offset = s.pos;
            let elem_type = s.u32()?;
            let count = s.u64()?;
            if count > limits.max_array_len {
                return Err(GgufError::Limit {
                    code: "array-too-long",
                    what: "array length",
                    value: count,
                    limit: limits.max_array_len,
                    offset,
                });
            }
            if stack.len() >= limits.max_array_depth {
                return Err(GgufError::Limit {
                    code: "array-too-deep",
                    what: "array nesting",
                    value: stack.len() as u64 + 1,
                    limit: limits.max_array_depth as u64,
                    offset,
                });
            }
            stack.push((elem_type, count));
            header = false;
        }
        let Some((elem_type, remaining)) = stack.last_mut() else {
            return Ok(());
        };
        if *remaining == 0 {
            stack.pop();
            if stack.is_empty() {
                return Ok(());
            }
            continue;
        }
        match *elem_type {
            TYPE_STRING => {
                *remaining -= 1;
                let len = s.u64()?;
                s.skip(len)?;
            }
            TYPE_ARRAY => {
                *remaining -= 1;
                header = true;
            }
            other => {
                let Some(width) = scalar_size(other) else {
                    return Err(GgufError::Invalid {
                        code: "bad-value-type",
                        message: format!("array element type {other} is unknown"),
                        offset: s.pos,
                    });
                };
                let total = remaining
                    .checked_mul(width)
                    .ok_or_else(|| GgufError::Invalid {
                        code: "count-overflow",
                        message: format!(
                            "array of {remaining} elements of {width} bytes overflows a 64-bit size"
                        ),
                        offset: s.pos,
                    })?;
                *remaining = 0;
                s.skip(total)?;
            }
        }
    }
}

fn read_tensor_infos(
    s: &mut Stream<'_>,
    count: u64,
    limits: &Limits,
    facts: &mut Facts,
    problems: &mut Vec<Problem>,
) -> Result<Vec<TensorInfo>, GgufError> {
    let mut tensors = Vec::new();
    let mut names = BTreeSet::new();
    let mut params: Option<u64> = Some(0);
    for _ in 0..count {
        let offset = s.pos;
        let name_len = s.u64()?;
        if name_len > limits.max_tensor_name_len {
            return Err(GgufError::Limit {
                code: "tensor-name-too-long",
                what: "tensor name length",
                value: name_len,
                limit: limits.max_tensor_name_len,
                offset,
            });
        }
        let name = String::from_utf8_lossy(&s.bytes(name_len)?).into_owned();
        let n_dims = s.u32()?;
        if n_dims > limits.max_dims {
            return Err(GgufError::Limit {
                code: "too-many-dims",
                what: "tensor dimensions",
                value: u64::from(n_dims),
                limit: u64::from(limits.max_dims),
                offset,
            });
        }
        let mut elements: Option<u64> = Some(1);
        let mut first_dim = 1;
        let mut dims = Vec::new();
        for i in 0..n_dims {
            let dim = s.u64()?;
            if i == 0 {
                first_dim = dim;
            }
            dims.push(dim);
            elements = elements.and_then(|e| e.checked_mul(dim));
        }
        // ggml keeps dimensions in int64_t: a "dimension" with the top bit set is negative there.
        if dims.iter().any(|&d| d > i64::MAX as u64) {
            problems.push(exploit_problem(
                "negative-dimension",
                format!(
                    "tensor '{}' has dimensions {dims:?}, negative as ggml's int64 sizes",
                    excerpt(&name, 200)
                ),
                offset,
                &name,
            ));
        } else if elements.is_none() {
            problems.push(exploit_problem(
                "dimension-overflow",
                format!(
                    "tensor '{}' has dimensions {dims:?} whose product overflows 64 bits",
                    excerpt(&name, 200)
                ),
                offset,
                &name,
            ));
        }
        let ggml_type = s.u32()?;
        let data_offset = s.u64()?;
        let known = GGML_TYPES.iter().find(|(id, ..)| *id == ggml_type);
        let size = match (known, elements) {
            (Some((_, type_name, block, bytes)), Some(elements)) => {
                if first_dim % block != 0 {
                    problems.push(tensor_problem(
                        "bad-tensor-shape",
                        format!(
                            "tensor '{}' of type {type_name} has first dimension {first_dim}, not a multiple of the block size {block}",
                            excerpt(&name, 200)
                        ),
                        offset,
                        &name,
                    ));
                }
                let size = (elements / block).checked_mul(*bytes);
                if size.is_none_or(|b| b > i64::MAX as u64) {
                    problems.push(exploit_problem(
                        "size-overflow",
                        format!(
                            "tensor '{}' of type {type_name} with {elements} elements has a byte size that overflows",
                            excerpt(&name, 200)
                        ),
                        offset,
                        &name,
                    ));
                }
                size
            }
            _ => None,
        };
        let type_name = known.map_or_else(|| format!("unknown-{ggml_type}"), |t| t.1.to_owned());
        if known.is_none() {
            // Loaders index their type-traits table with this number (a negative int32 or a
            // number past the table reads out of bounds).
            problems.push(
                Problem::new(
                    ProblemKind::Exploit,
                    "unknown-tensor-type",
                    format!(
                        "tensor '{}' has ggml type {} (not a known type); loaders index their type table with it, and its bounds were not checked",
                        excerpt(&name, 200),
                        ggml_type as i32
                    ),
                    Some(offset),
                )
                .with("tensor", excerpt(&name, 200)),
            );
        }
        *facts.tensor_types.entry(type_name).or_insert(0) += 1;
        params = params.and_then(|p| elements.and_then(|e| p.checked_add(e)));
        if !names.insert(name.clone()) {
            problems.push(tensor_problem(
                "duplicate-tensor",
                format!("tensor name '{}' appears twice", excerpt(&name, 200)),
                offset,
                &name,
            ));
        }
        tensors.push(TensorInfo {
            name,
            offset: data_offset,
            size,
        });
    }
    facts.parameter_count = params;
    Ok(tensors)
}

fn exploit_problem(code: &'static str, message: String, offset: u64, name: &str) -> Problem {
    Problem::new(ProblemKind::Exploit, code, message, Some(offset))
        .with("tensor", excerpt(name, 200))
}

fn tensor_problem(code: &'static str, message: String, offset: u64, name: &str) -> Problem {
    Problem::new(ProblemKind::Malformed, code, message, Some(offset))
        .with("tensor", excerpt(name, 200))
}

fn check_tensors(
    header_end: u64,
    file_size: u64,
    tensors: &[TensorInfo],
    limits: &Limits,
    facts: &mut Facts,
    problems: &mut Vec<Problem>,
) {
    let align = facts.alignment;
    let Some(data_start) = header_end.checked_add(align - 1).map(|v| v / align * align) else {
        return;
    };
    facts.data_offset = Some(data_start);
    let mut found = Vec::new();
    if !tensors.is_empty() && data_start > file_size {
        found.push(Problem::new(
            ProblemKind::Exploit,
            "data-past-eof",
            format!(
                "tensor data would start at {data_start}, past the end of the {file_size}-byte file"
            ),
            Some(header_end),
        ));
    }
    for t in tensors {
        if t.offset % align != 0 {
            found.push(tensor_problem(
                "misaligned-tensor",
                format!(
                    "tensor '{}' data offset {} is not a multiple of the alignment {align}",
                    excerpt(&t.name, 200),
                    t.offset
                ),
                data_start.saturating_add(t.offset),
                &t.name,
            ));
        }
        if let Some(size) = t.size {
            let end = data_start
                .checked_add(t.offset)
                .and_then(|v| v.checked_add(size));
            if end.is_none_or(|end| end > file_size) {
                found.push(exploit_problem(
                    "tensor-past-eof",
                    format!(
                        "tensor '{}' ({size} bytes at data offset {}) ends past the end of the {file_size}-byte file",
                        excerpt(&t.name, 200),
                        t.offset
                    ),
                    data_start.saturating_add(t.offset),
                    &t.name,
                ));
            }
        }
    }
    let mut spans: Vec<(u64, u64, &str)> = tensors
        .iter()
        .filter_map(|t| Some((t.offset, t.offset.checked_add(t.size?)?, t.name.as_str())))
        .collect();
    spans.sort_unstable();
    for pair in spans.windows(2) {
        if let [(_, end_a, name_a), (start_b, _, name_b)] = pair
            && start_b < end_a
        {
            found.push(tensor_problem(
                "overlapping-tensors",
                format!(
                    "tensor '{}' overlaps tensor '{}' at data offset {start_b}",
                    excerpt(name_b, 200),
                    excerpt(name_a, 200)
                ),
                data_start.saturating_add(*start_b),
                name_b,
            ));
        }
    }
    let total = found.len();
    found.truncate(limits.max_tensor_problems);
    problems.extend(found);
    if total > limits.max_tensor_problems {
        problems.push(Problem::new(
            ProblemKind::LimitExceeded,
            "too-many-tensor-problems",
            format!(
                "{total} tensor problems found; only the first {} are listed",
                limits.max_tensor_problems
            ),
            None,
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds GGUF bytes.
    struct Builder {
        kv: Vec<u8>,
        kv_count: u64,
        tensors: Vec<u8>,
        tensor_count: u64,
        version: u32,
    }

    impl Builder {
        fn new() -> Self {
            Self {
                kv: Vec::new(),
                kv_count: 0,
                tensors: Vec::new(),
                tensor_count: 0,
                version: 3,
            }
        }

        fn string(out: &mut Vec<u8>, s: &str) {
            out.extend((s.len() as u64).to_le_bytes());
            out.extend(s.as_bytes());
        }

        fn kv_str(mut self, key: &str, value: &str) -> Self {
            Self::string(&mut self.kv, key);
            self.kv.extend(TYPE_STRING.to_le_bytes());
            Self::string(&mut self.kv, value);
            self.kv_count += 1;
            self
        }

        fn kv_u32(mut self, key: &str, value: u32) -> Self {
            Self::string(&mut self.kv, key);
            self.kv.extend(TYPE_UINT32.to_le_bytes());
            self.kv.extend(value.to_le_bytes());
            self.kv_count += 1;
            self
        }

        fn kv_raw(mut self, key: &str, value_type: u32, raw: &[u8]) -> Self {
            Self::string(&mut self.kv, key);
            self.kv.extend(value_type.to_le_bytes());
            self.kv.extend(raw);
            self.kv_count += 1;
            self
        }

        fn tensor(mut self, name: &str, dims: &[u64], ggml_type: u32, offset: u64) -> Self {
            Self::string(&mut self.tensors, name);
            self.tensors.extend((dims.len() as u32).to_le_bytes());
            for d in dims {
                self.tensors.extend(d.to_le_bytes());
            }
            self.tensors.extend(ggml_type.to_le_bytes());
            self.tensors.extend(offset.to_le_bytes());
            self.tensor_count += 1;
            self
        }

        /// Header, padding to 32, then `data` bytes of tensor data.
        fn build(&self, data: usize) -> Vec<u8> {
            let mut out = b"GGUF".to_vec();
            out.extend(self.version.to_le_bytes());
            out.extend(self.tensor_count.to_le_bytes());
            out.extend(self.kv_count.to_le_bytes());
            out.extend(&self.kv);
            out.extend(&self.tensors);
            while !out.len().is_multiple_of(32) {
                out.push(0);
            }
            out.extend(std::iter::repeat_n(0u8, data));
            out
        }
    }

    fn run(bytes: &[u8]) -> (Facts, Vec<Problem>) {
        let mut cur = std::io::Cursor::new(bytes.to_vec());
        inspect(&mut cur, bytes.len() as u64, &Limits::default())
    }

    fn codes(problems: &[Problem]) -> Vec<&'static str> {
        problems.iter().map(|p| p.code).collect()
    }

    const LLAMA3: &str = "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}";

    #[test]
    fn reads_header_facts() {
        let bytes = Builder::new()
            .kv_str("general.architecture", "llama")
            .kv_str("general.name", "tiny")
            .kv_u32("general.file_type", 15)
            .kv_u32("llama.context_length", 8192)
            .kv_str("tokenizer.chat_template", LLAMA3)
            .tensor("tok_embd.weight", &[64, 4], 0, 0)
            .tensor("output.weight", &[256, 2], 12, 1024)
            .build(1024 + 288);
        assert!(is_gguf(&bytes));
        let (facts, problems) = run(&bytes);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(facts.version, 3);
        assert_eq!(facts.architecture.as_deref(), Some("llama"));
        assert_eq!(facts.name.as_deref(), Some("tiny"));
        assert_eq!(facts.file_type_name.as_deref(), Some("MOSTLY_Q4_K_M"));
        assert_eq!(facts.context_length, Some(8192));
        assert_eq!(facts.tensor_count, 2);
        assert_eq!(facts.parameter_count, Some(64 * 4 + 512));
        assert_eq!(facts.chat_templates, ["default"]);
        assert_eq!(facts.tensor_types.get("Q4_K"), Some(&1));
    }

    #[test]
    fn flags_malicious_template() {
        let payload = "{% for x in ().__class__.__base__.__subclasses__() %}{% if \"warning\" in x.__name__ %}{{x()._module.__builtins__['__import__']('os').popen(\"touch /tmp/retr0reg\")}}{%endif%}{% endfor %}";
        let bytes = Builder::new()
            .kv_str("general.architecture", "llama")
            .kv_str("tokenizer.chat_template.tool_use", payload)
            .build(0);
        let (facts, problems) = run(&bytes);
        assert_eq!(facts.chat_templates, ["tool_use"]);
        assert!(!problems.is_empty());
        assert!(
            problems
                .iter()
                .all(|p| p.code == "template-suspicious" && p.kind == ProblemKind::Unsafe)
        );
        let first = &problems[0];
        let start = bytes.windows(4).position(|w| w == b"{% f").unwrap() as u64;
        assert_eq!(first.offset, Some(start + 15));
        assert_eq!(
            first.evidence.get("template").map(String::as_str),
            Some("tool_use")
        );
    }

    #[test]
    fn accepts_normal_template() {
        let bytes = Builder::new()
            .kv_str("tokenizer.chat_template", LLAMA3)
            .build(0);
        let (_, problems) = run(&bytes);
        assert!(problems.is_empty(), "{problems:?}");
    }

    #[test]
    fn rejects_misaligned_tensor() {
        let bytes = Builder::new().tensor("w", &[8], 0, 4).build(64);
        let (_, problems) = run(&bytes);
        assert_eq!(codes(&problems), ["misaligned-tensor"]);
    }

    #[test]
    fn rejects_tensor_past_eof() {
        let bytes = Builder::new().tensor("w", &[1024], 0, 0).build(64);
        let (_, problems) = run(&bytes);
        assert_eq!(codes(&problems), ["tensor-past-eof"]);
    }

    #[test]
    fn rejects_data_region_past_eof() {
        let mut bytes = Builder::new().tensor("w", &[1], 0, 0).build(0);
        // Cut at the end of the tensor infos: the header is whole, the padded data is not.
        bytes.truncate(24 + 8 + 1 + 4 + 8 + 4 + 8);
        let (_, problems) = run(&bytes);
        assert!(codes(&problems).contains(&"data-past-eof"), "{problems:?}");
    }

    #[test]
    fn rejects_overlapping_tensors() {
        let bytes = Builder::new()
            .tensor("a", &[16], 0, 0)
            .tensor("b", &[16], 0, 32)
            .build(128);
        let (_, problems) = run(&bytes);
        assert_eq!(codes(&problems), ["overlapping-tensors"]);
    }

    fn kinds(problems: &[Problem]) -> Vec<(ProblemKind, &'static str)> {
        problems.iter().map(|p| (p.kind, p.code)).collect()
    }

    #[test]
    fn exploit_shapes_are_their_own_kind() {
        use ProblemKind::Exploit;
        let overflow = Builder::new()
            .tensor("w", &[1 << 32, 1 << 32], 0, 0)
            .build(64);
        assert_eq!(kinds(&run(&overflow).1), [(Exploit, "dimension-overflow")]);
        let negative = Builder::new().tensor("w", &[u64::MAX], 0, 0).build(64);
        // A negative dimension also makes the byte size overflow: both are exploit shapes.
        let negative_kinds = kinds(&run(&negative).1);
        assert!(negative_kinds.contains(&(Exploit, "negative-dimension")));
        assert!(negative_kinds.iter().all(|(k, _)| *k == Exploit));
        let bytes = Builder::new().tensor("w", &[1 << 62], 0, 0).build(64);
        assert_eq!(kinds(&run(&bytes).1), [(Exploit, "size-overflow")]);
        let negative_type = Builder::new().tensor("w", &[8], u32::MAX, 0).build(64);
        let (_, problems) = run(&negative_type);
        assert_eq!(kinds(&problems), [(Exploit, "unknown-tensor-type")]);
        assert!(problems[0].message.contains("type -1"), "{problems:?}");
        let past = Builder::new().tensor("w", &[1024], 0, 0).build(64);
        assert_eq!(kinds(&run(&past).1), [(Exploit, "tensor-past-eof")]);
        let zero = Builder::new().kv_u32("general.alignment", 0).build(0);
        assert_eq!(kinds(&run(&zero).1), [(Exploit, "bad-alignment")]);
        // An array whose byte size wraps: count * width overflows u64 (a loader's size_t).
        let mut raw = 4u32.to_le_bytes().to_vec();
        raw.extend((u64::MAX / 2).to_le_bytes());
        let wrap = Builder::new().kv_raw("a.arr", 9, &raw).build(0);
        let limits = Limits {
            max_array_len: u64::MAX,
            ..Limits::default()
        };
        let mut cur = std::io::Cursor::new(wrap.clone());
        let (_, problems) = inspect(&mut cur, wrap.len() as u64, &limits);
        assert_eq!(kinds(&problems), [(Exploit, "count-overflow")]);
    }

    #[test]
    fn harmless_oddities_stay_malformed() {
        let bytes = Builder::new().tensor("q", &[33], 2, 0).build(64);
        assert_eq!(
            kinds(&run(&bytes).1),
            [(ProblemKind::Malformed, "bad-tensor-shape")]
        );
    }

    #[test]
    fn rejects_bad_tensor_shape() {
        let bytes = Builder::new().tensor("q", &[33], 2, 0).build(64);
        let (_, problems) = run(&bytes);
        assert_eq!(codes(&problems), ["bad-tensor-shape"]);
    }

    #[test]
    fn notes_unknown_tensor_type() {
        let bytes = Builder::new().tensor("q", &[32], 99, 0).build(64);
        let (facts, problems) = run(&bytes);
        assert_eq!(codes(&problems), ["unknown-tensor-type"]);
        assert_eq!(facts.tensor_types.get("unknown-99"), Some(&1));
    }

    #[test]
    fn rejects_duplicate_key_and_tensor() {
        let bytes = Builder::new()
            .kv_u32("a.b", 1)
            .kv_u32("a.b", 2)
            .tensor("w", &[8], 0, 0)
            .tensor("w", &[8], 0, 32)
            .build(64);
        let (_, problems) = run(&bytes);
        assert_eq!(codes(&problems), ["duplicate-key", "duplicate-tensor"]);
    }

    #[test]
    fn rejects_bad_magic_and_versions() {
        assert_eq!(codes(&run(b"GGML\x03\0\0\0").1), ["bad-magic"]);
        let mut b = Builder::new();
        b.version = 1;
        assert_eq!(codes(&run(&b.build(0)).1), ["unsupported-version"]);
        b.version = 3u32.swap_bytes();
        assert_eq!(codes(&run(&b.build(0)).1), ["big-endian"]);
    }

    #[test]
    fn rejects_bad_alignment() {
        let bytes = Builder::new().kv_u32("general.alignment", 24).build(0);
        assert_eq!(codes(&run(&bytes).1), ["bad-alignment"]);
    }

    #[test]
    fn honours_custom_alignment() {
        let bytes = Builder::new()
            .kv_u32("general.alignment", 64)
            .tensor("w", &[8], 0, 32)
            .build(128);
        assert_eq!(codes(&run(&bytes).1), ["misaligned-tensor"]);
    }

    #[test]
    fn rejects_oversized_counts() {
        let mut bytes = b"GGUF\x03\0\0\0".to_vec();
        bytes.extend(u64::MAX.to_le_bytes());
        bytes.extend(0u64.to_le_bytes());
        assert_eq!(codes(&run(&bytes).1), ["too-many-tensors"]);
        let mut bytes = b"GGUF\x03\0\0\0".to_vec();
        bytes.extend(0u64.to_le_bytes());
        bytes.extend(u64::MAX.to_le_bytes());
        assert_eq!(codes(&run(&bytes).1), ["too-many-kv"]);
    }

    #[test]
    fn rejects_oversized_string_and_array() {
        let mut raw = Vec::new();
        raw.extend(u64::MAX.to_le_bytes());
        let bytes = Builder::new().kv_raw("k", TYPE_STRING, &raw).build(0);
        assert_eq!(codes(&run(&bytes).1), ["truncated"]);
        let mut raw = TYPE_UINT8.to_le_bytes().to_vec();
        raw.extend(u64::MAX.to_le_bytes());
        let bytes = Builder::new().kv_raw("k", TYPE_ARRAY, &raw).build(0);
        assert_eq!(codes(&run(&bytes).1), ["array-too-long"]);
    }

    #[test]
    fn skips_nested_arrays_within_depth() {
        // array of 2 arrays of 3 u16, then array of strings.
        let mut raw = TYPE_ARRAY.to_le_bytes().to_vec();
        raw.extend(2u64.to_le_bytes());
        for _ in 0..2 {
            raw.extend(TYPE_UINT16.to_le_bytes());
            raw.extend(3u64.to_le_bytes());
            raw.extend([0u8; 6]);
        }
        let mut strings = TYPE_STRING.to_le_bytes().to_vec();
        strings.extend(2u64.to_le_bytes());
        for s in ["a", "bc"] {
            strings.extend((s.len() as u64).to_le_bytes());
            strings.extend(s.as_bytes());
        }
        let bytes = Builder::new()
            .kv_raw("nested", TYPE_ARRAY, &raw)
            .kv_raw("tokenizer.ggml.tokens", TYPE_ARRAY, &strings)
            .kv_str("general.architecture", "gpt2")
            .build(0);
        let (facts, problems) = run(&bytes);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(facts.architecture.as_deref(), Some("gpt2"));
    }

    #[test]
    fn rejects_deeply_nested_arrays() {
        let mut raw = Vec::new();
        for _ in 0..6 {
            raw.extend(TYPE_ARRAY.to_le_bytes());
            raw.extend(1u64.to_le_bytes());
        }
        let bytes = Builder::new().kv_raw("deep", TYPE_ARRAY, &raw).build(0);
        assert_eq!(codes(&run(&bytes).1), ["array-too-deep"]);
    }

    #[test]
    fn rejects_bad_value_type_and_bool() {
        let bytes = Builder::new().kv_raw("k", 13, &[0; 8]).build(0);
        assert_eq!(codes(&run(&bytes).1), ["bad-value-type"]);
        let bytes = Builder::new().kv_raw("k", TYPE_BOOL, &[2]).build(0);
        assert_eq!(codes(&run(&bytes).1), ["bad-bool"]);
    }

    #[test]
    fn rejects_too_many_dims_and_long_names() {
        let bytes = Builder::new().tensor("w", &[1, 1, 1, 1, 1], 0, 0).build(64);
        assert_eq!(codes(&run(&bytes).1), ["too-many-dims"]);
        let long = "x".repeat(300);
        let bytes = Builder::new().tensor(&long, &[1], 0, 0).build(64);
        assert_eq!(codes(&run(&bytes).1), ["tensor-name-too-long"]);
        let bytes = Builder::new().kv_u32(&long, 1).build(0);
        assert_eq!(codes(&run(&bytes).1), ["key-too-long"]);
    }

    #[test]
    fn rejects_truncated_header() {
        let bytes = Builder::new()
            .kv_str("general.architecture", "llama")
            .tensor("w", &[8], 0, 0)
            .build(64);
        for cut in [3, 10, 30, 60] {
            let (_, problems) = run(&bytes[..cut]);
            assert_eq!(codes(&problems).last(), Some(&"truncated"), "cut at {cut}");
        }
    }

    #[test]
    fn notes_oversized_template() {
        let big = format!("{}{{{{ x.__class__ }}}}", " ".repeat(100));
        let bytes = Builder::new()
            .kv_str("tokenizer.chat_template", &big)
            .build(0);
        let mut cur = std::io::Cursor::new(bytes.clone());
        let limits = Limits {
            max_template_len: 50,
            ..Limits::default()
        };
        let (_, problems) = inspect(&mut cur, bytes.len() as u64, &limits);
        assert_eq!(codes(&problems), ["template-too-large"]);
    }

    /// Written by llama.cpp's gguf-py writer (tests/fixtures/gguf/make_fixtures.py).
    #[test]
    fn reads_gguf_py_file() {
        let bytes = include_bytes!("../../../tests/fixtures/gguf/tiny.gguf");
        let (facts, problems) = run(bytes);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(facts.version, 3);
        assert_eq!(facts.architecture.as_deref(), Some("llama"));
        assert_eq!(facts.name.as_deref(), Some("tiny"));
        assert_eq!(facts.context_length, Some(2048));
        assert_eq!(facts.file_type_name.as_deref(), Some("MOSTLY_F16"));
        assert_eq!(facts.tensor_count, 2);
        assert_eq!(facts.parameter_count, Some(64));
        assert_eq!(facts.chat_templates, ["default"]);
        assert_eq!(facts.tensor_types.get("F16"), Some(&1));
    }

    proptest::proptest! {
        #[test]
        fn never_panics_on_random_bytes(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..512)) {
            let _ = run(&bytes);
            let mut with_magic = b"GGUF\x03\0\0\0".to_vec();
            with_magic.extend(&bytes);
            let _ = run(&with_magic);
        }

        #[test]
        fn never_panics_on_mutated_file(pos in 0usize..400, byte in proptest::prelude::any::<u8>()) {
            let mut bytes = Builder::new()
                .kv_str("general.architecture", "llama")
                .kv_str("tokenizer.chat_template", "{{ x }}")
                .tensor("w", &[32], 2, 0)
                .build(64);
            let len = bytes.len();
            bytes[pos % len] = byte;
            let _ = run(&bytes);
        }
    }
}
