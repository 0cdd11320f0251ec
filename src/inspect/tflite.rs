//! TensorFlow Lite inspector. A `.tflite` file is a FlatBuffer (identifier `TFL3` at bytes
//! 4..8) whose root `Model` table points, by relative offsets, at vectors and tables anywhere
//! in the file. FlatBuffers need random access, so this module takes `Read + Seek` and reads
//! only small bounded structures at the offsets the file names (never the weight buffers,
//! which the converter usually places at the end). Every offset is checked against the file
//! size and every vector length against [`Limits`] before it is followed.
//!
//! What matters for security: operators with a custom code need a kernel registered by the
//! application (and `Flex*` ops run full TensorFlow kernels), so each custom op is reported.
//!
//! Field ids follow tensorflow/lite/schema/schema.fbs: Model { version:0, operator_codes:1,
//! subgraphs:2, description:3, buffers:4 }; OperatorCode { deprecated_builtin_code:0 (byte),
//! custom_code:1 (string), version:2, builtin_code:3 (int) }; BuiltinOperator CUSTOM = 32;
//! SubGraph { operators:3 }; Operator { opcode_index:0, builtin_options (union):3-4,
//! custom_options:5 (`[ubyte]`) }.
//!
//! A `Flex*` (Select TF ops) operator's `custom_options` is a FlexBuffer vector
//! `[op name, serialized NodeDef]`; the flex delegate builds and runs that TensorFlow node, so
//! the op that runs is the NodeDef's `op`, whatever the custom code says. We decode it (bounded)
//! and apply the TensorFlow inspector's unsafe-op lists (PyFunc, file read/write).

use std::io::{Read, Seek};

use serde::Serialize;

use super::flatbuf::{Bad, Flat, bad};
use super::problem::{Problem, ProblemKind, excerpt};

/// Bounds for the TFLite walk.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Most operator codes read.
    pub max_operator_codes: u32,
    /// Longest string (custom code, description) kept.
    pub max_string_len: u32,
    /// Largest vtable accepted, in bytes.
    pub max_vtable_len: u16,
}

impl From<&crate::model::limits::Limits> for Limits {
    /// `tflite_operator_codes` from the policy; string and vtable sizes are fixed internal caps.
    fn from(l: &crate::model::limits::Limits) -> Self {
        Self {
            max_operator_codes: crate::model::limits::u32_of(l.tflite_operator_codes),
            max_string_len: 4096,
            max_vtable_len: 1024,
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self::from(&crate::model::limits::Limits::default())
    }
}

/// One operator code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OperatorCode {
    /// Effective builtin code (the larger of the deprecated byte and the int field).
    pub builtin_code: i32,
    /// The schema's `BuiltinOperator` name for the code (`CONV_2D`, `CUSTOM`, ...), or the
    /// number when the schema this reader knows has no such code.
    pub name: String,
    /// The custom code, for custom operators.
    pub custom_code: Option<String>,
    /// Operator version.
    pub version: i32,
}

/// What a TFLite model header says.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Facts {
    /// Schema version (`Model.version`).
    pub version: u32,
    /// `Model.description`, e.g. "MLIR Converted.".
    pub description: Option<String>,
    /// Number of subgraphs.
    pub subgraph_count: u32,
    /// Number of buffers.
    pub buffer_count: u32,
    /// Operator codes in table order.
    pub operator_codes: Vec<OperatorCode>,
    /// Custom operator codes.
    pub custom_ops: Vec<String>,
    /// TensorFlow ops (`NodeDef.op`) the `Flex*` operators run, sorted, each once.
    pub flex_ops: Vec<String>,
}

/// Most operators walked (over all subgraphs) to find `Flex*` nodes.
const MAX_OPERATORS: u64 = 1 << 16;
/// Most subgraphs walked.
const MAX_SUBGRAPHS: u64 = 1024;
/// Largest `custom_options` decoded, in bytes (a NodeDef is small; attributes hold tensors
/// only for constants).
const MAX_CUSTOM_OPTIONS: u32 = 1 << 20;

/// `BuiltinOperator` names by code, from tensorflow/compiler/mlir/lite/schema/schema.fbs.
const BUILTIN_NAMES: &[&str] = &[
    "ADD",
    "AVERAGE_POOL_2D",
    "CONCATENATION",
    "CONV_2D",
    "DEPTHWISE_CONV_2D",
    "DEPTH_TO_SPACE",
    "DEQUANTIZE",
    "EMBEDDING_LOOKUP",
    "FLOOR",
    "FULLY_CONNECTED",
    "HASHTABLE_LOOKUP",
    "L2_NORMALIZATION",
    "L2_POOL_2D",
    "LOCAL_RESPONSE_NORMALIZATION",
    "LOGISTIC",
    "LSH_PROJECTION",
    "LSTM",
    "MAX_POOL_2D",
    "MUL",
    "RELU",
    "RELU_N1_TO_1",
    "RELU6",
    "RESHAPE",
    "RESIZE_BILINEAR",
    "RNN",
    "SOFTMAX",
    "SPACE_TO_DEPTH",
    "SVDF",
    "TANH",
    "CONCAT_EMBEDDINGS",
    "SKIP_GRAM",
    "CALL",
    "CUSTOM",
    "EMBEDDING_LOOKUP_SPARSE",
    "PAD",
    "UNIDIRECTIONAL_SEQUENCE_RNN",
    "GATHER",
    "BATCH_TO_SPACE_ND",
    "SPACE_TO_BATCH_ND",
    "TRANSPOSE",
    "MEAN",
    "SUB",
    "DIV",
    "SQUEEZE",
    "UNIDIRECTIONAL_SEQUENCE_LSTM",
    "STRIDED_SLICE",
    "BIDIRECTIONAL_SEQUENCE_RNN",
    "EXP",
    "TOPK_V2",
    "SPLIT",
    "LOG_SOFTMAX",
    "DELEGATE",
    "BIDIRECTIONAL_SEQUENCE_LSTM",
    "CAST",
    "PRELU",
    "MAXIMUM",
    "ARG_MAX",
    "MINIMUM",
    "LESS",
    "NEG",
    "PADV2",
    "GREATER",
    "GREATER_EQUAL",
    "LESS_EQUAL",
    "SELECT",
    "SLICE",
    "SIN",
    "TRANSPOSE_CONV",
    "SPARSE_TO_DENSE",
    "TILE",
    "EXPAND_DIMS",
    "EQUAL",
    "NOT_EQUAL",
    "LOG",
    "SUM",
    "SQRT",
    "RSQRT",
    "SHAPE",
    "POW",
    "ARG_MIN",
    "FAKE_QUANT",
    "REDUCE_PROD",
    "REDUCE_MAX",
    "PACK",
    "LOGICAL_OR",
    "ONE_HOT",
    "LOGICAL_AND",
    "LOGICAL_NOT",
    "UNPACK",
    "REDUCE_MIN",
    "FLOOR_DIV",
    "REDUCE_ANY",
    "SQUARE",
    "ZEROS_LIKE",
    "FILL",
    "FLOOR_MOD",
    "RANGE",
    "RESIZE_NEAREST_NEIGHBOR",
    "LEAKY_RELU",
    "SQUARED_DIFFERENCE",
    "MIRROR_PAD",
    "ABS",
    "SPLIT_V",
    "UNIQUE",
    "CEIL",
    "REVERSE_V2",
    "ADD_N",
    "GATHER_ND",
    "COS",
    "WHERE",
    "RANK",
    "ELU",
    "REVERSE_SEQUENCE",
    "MATRIX_DIAG",
    "QUANTIZE",
    "MATRIX_SET_DIAG",
    "ROUND",
    "HARD_SWISH",
    "IF",
    "WHILE",
    "NON_MAX_SUPPRESSION_V4",
    "NON_MAX_SUPPRESSION_V5",
    "SCATTER_ND",
    "SELECT_V2",
    "DENSIFY",
    "SEGMENT_SUM",
    "BATCH_MATMUL",
    "PLACEHOLDER_FOR_GREATER_OP_CODES",
    "CUMSUM",
    "CALL_ONCE",
    "BROADCAST_TO",
    "RFFT2D",
    "CONV_3D",
    "IMAG",
    "REAL",
    "COMPLEX_ABS",
    "HASHTABLE",
    "HASHTABLE_FIND",
    "HASHTABLE_IMPORT",
    "HASHTABLE_SIZE",
    "REDUCE_ALL",
    "CONV_3D_TRANSPOSE",
    "VAR_HANDLE",
    "READ_VARIABLE",
    "ASSIGN_VARIABLE",
    "BROADCAST_ARGS",
    "RANDOM_STANDARD_NORMAL",
    "BUCKETIZE",
    "RANDOM_UNIFORM",
    "MULTINOMIAL",
    "GELU",
    "DYNAMIC_UPDATE_SLICE",
    "RELU_0_TO_1",
    "UNSORTED_SEGMENT_PROD",
    "UNSORTED_SEGMENT_MAX",
    "UNSORTED_SEGMENT_SUM",
    "ATAN2",
    "UNSORTED_SEGMENT_MIN",
    "SIGN",
    "BITCAST",
    "BITWISE_XOR",
    "RIGHT_SHIFT",
    "STABLEHLO_LOGISTIC",
    "STABLEHLO_ADD",
    "STABLEHLO_DIVIDE",
    "STABLEHLO_MULTIPLY",
    "STABLEHLO_MAXIMUM",
    "STABLEHLO_RESHAPE",
    "STABLEHLO_CLAMP",
    "STABLEHLO_CONCATENATE",
    "STABLEHLO_BROADCAST_IN_DIM",
    "STABLEHLO_CONVOLUTION",
    "STABLEHLO_SLICE",
    "STABLEHLO_CUSTOM_CALL",
    "STABLEHLO_REDUCE",
    "STABLEHLO_ABS",
    "STABLEHLO_AND",
    "STABLEHLO_COSINE",
    "STABLEHLO_EXPONENTIAL",
    "STABLEHLO_FLOOR",
    "STABLEHLO_LOG",
    "STABLEHLO_MINIMUM",
    "STABLEHLO_NEGATE",
    "STABLEHLO_OR",
    "STABLEHLO_POWER",
    "STABLEHLO_REMAINDER",
    "STABLEHLO_RSQRT",
    "STABLEHLO_SELECT",
    "STABLEHLO_SUBTRACT",
    "STABLEHLO_TANH",
    "STABLEHLO_SCATTER",
    "STABLEHLO_COMPARE",
    "STABLEHLO_CONVERT",
    "STABLEHLO_DYNAMIC_SLICE",
    "STABLEHLO_DYNAMIC_UPDATE_SLICE",
    "STABLEHLO_PAD",
    "STABLEHLO_IOTA",
    "STABLEHLO_DOT_GENERAL",
    "STABLEHLO_REDUCE_WINDOW",
    "STABLEHLO_SORT",
    "STABLEHLO_WHILE",
    "STABLEHLO_GATHER",
    "STABLEHLO_TRANSPOSE",
    "DILATE",
    "STABLEHLO_RNG_BIT_GENERATOR",
    "REDUCE_WINDOW",
    "STABLEHLO_COMPOSITE",
    "COMPLEX",
];

/// The schema name of builtin operator `code`, or the number as text.
pub fn builtin_name(code: i32) -> String {
    usize::try_from(code)
        .ok()
        .and_then(|i| BUILTIN_NAMES.get(i))
        .map_or_else(|| code.to_string(), |n| (*n).to_owned())
}

/// BuiltinOperator.CUSTOM.
const BUILTIN_CUSTOM: i32 = 32;

/// Sniffs the TFLite file identifier.
pub fn is_tflite(head: &[u8]) -> bool {
    head.get(4..8) == Some(b"TFL3")
}

type File<'a, R> = Flat<'a, R>;

/// Reads the root `Model` table of a TFLite file of `size` bytes.
pub fn inspect<R: Read + Seek>(
    reader: &mut R,
    size: u64,
    limits: &Limits,
) -> (Facts, Vec<Problem>) {
    let mut facts = Facts::default();
    let mut problems = Vec::new();
    let mut file = Flat::new(reader, size, limits.max_vtable_len, limits.max_string_len);
    if let Err(err) = parse(&mut file, limits, &mut facts, &mut problems) {
        let kind = if err.code == "too-many-operator-codes" {
            ProblemKind::LimitExceeded
        } else {
            ProblemKind::Malformed
        };
        problems.push(Problem::new(
            kind,
            err.code,
            format!("tflite: {}", err.message),
            Some(err.offset),
        ));
    }
    (facts, problems)
}

fn parse<R: Read + Seek>(
    f: &mut File<'_, R>,
    limits: &Limits,
    facts: &mut Facts,
    problems: &mut Vec<Problem>,
) -> Result<(), Bad> {
    let mut ident = [0u8; 4];
    f.read_at(4, &mut ident)?;
    if &ident != b"TFL3" {
        return Err(bad(
            "bad-identifier",
            format!("file identifier {ident:02x?} is not TFL3"),
            4,
        ));
    }
    let root = f.follow(0)?;
    if let Some(at) = f.field(root, 0)? {
        facts.version = f.u32_at(at)?;
    }
    if let Some(at) = f.field(root, 3)? {
        facts.description = Some(f.string(at)?);
    }
    if let Some(at) = f.field(root, 2)? {
        facts.subgraph_count = f.vector(at, 4)?.1;
    }
    if let Some(at) = f.field(root, 4)? {
        facts.buffer_count = f.vector(at, 4)?.1;
    }
    let Some(at) = f.field(root, 1)? else {
        return Ok(());
    };
    let (start, count) = f.vector(at, 4)?;
    if count > limits.max_operator_codes {
        return Err(bad(
            "too-many-operator-codes",
            format!(
                "{count} operator codes exceed the limit of {}",
                limits.max_operator_codes
            ),
            start,
        ));
    }
    for i in 0..u64::from(count) {
        let table = f.follow(start.saturating_add(4 * i))?;
        let deprecated = match f.field(table, 0)? {
            Some(at) => i32::from(f.u8_at(at)? as i8),
            None => 0,
        };
        let custom_code = match f.field(table, 1)? {
            Some(at) => Some(f.string(at)?),
            None => None,
        };
        let version = match f.field(table, 2)? {
            Some(at) => f.u32_at(at)? as i32,
            None => 1,
        };
        let builtin = match f.field(table, 3)? {
            Some(at) => f.u32_at(at)? as i32,
            None => 0,
        };
        // schema.fbs: readers take the larger of the two code fields.
        let builtin_code = deprecated.max(builtin);
        if builtin_code == BUILTIN_CUSTOM {
            let name = custom_code.clone().unwrap_or_default();
            let flex = name.starts_with("Flex");
            let mut problem = Problem::new(
                ProblemKind::CustomOp,
                "custom-op",
                format!(
                    "operator code {i} is custom op '{}'{}",
                    excerpt(&name, 200),
                    if flex {
                        ", a tensorflow kernel run through the flex delegate"
                    } else {
                        ", which needs an application-registered kernel"
                    }
                ),
                Some(table),
            )
            .with("custom_code", excerpt(&name, 200));
            if let Some(tf_op) = name.strip_prefix("Flex") {
                problem = problem.with("tf_op", excerpt(tf_op, 200));
            }
            problems.push(problem);
            facts.custom_ops.push(name);
        }
        facts.operator_codes.push(OperatorCode {
            builtin_code,
            name: builtin_name(builtin_code),
            custom_code,
            version,
        });
    }
    let flex: Vec<u32> = facts
        .operator_codes
        .iter()
        .enumerate()
        .filter(|(_, c)| {
            c.builtin_code == BUILTIN_CUSTOM
                && c.custom_code
                    .as_deref()
                    .is_some_and(|n| n.starts_with("Flex"))
        })
        .filter_map(|(i, _)| u32::try_from(i).ok())
        .collect();
    if !flex.is_empty() {
        check_flex_nodes(f, root, &flex, limits, facts, problems)?;
    }
    Ok(())
}

/// Walks every operator of every subgraph; for those whose code is a `Flex*` op, decodes the
/// NodeDef in its custom options and reports unsafe TensorFlow ops (FMT006).
fn check_flex_nodes<R: Read + Seek>(
    f: &mut File<'_, R>,
    root: u64,
    flex: &[u32],
    limits: &Limits,
    facts: &mut Facts,
    problems: &mut Vec<Problem>,
) -> Result<(), Bad> {
    let Some(at) = f.field(root, 2)? else {
        return Ok(());
    };
    let (subgraphs, count) = f.vector(at, 4)?;
    let mut walked = 0u64;
    let mut ops = std::collections::BTreeSet::new();
    for s in 0..u64::from(count).min(MAX_SUBGRAPHS) {
        let subgraph = f.follow(subgraphs.saturating_add(4 * s))?;
        let Some(at) = f.field(subgraph, 3)? else {
            continue;
        };
        let (operators, n) = f.vector(at, 4)?;
        for i in 0..u64::from(n) {
            walked += 1;
            if walked > MAX_OPERATORS {
                problems.push(Problem::new(
                    ProblemKind::LimitExceeded,
                    "too-many-operators",
                    format!(
                        "more than {MAX_OPERATORS} operators; later flex nodes were not decoded"
                    ),
                    Some(operators),
                ));
                facts.flex_ops = ops.into_iter().collect();
                return Ok(());
            }
            let op = f.follow(operators.saturating_add(4 * i))?;
            let index = match f.field(op, 0)? {
                Some(at) => f.u32_at(at)?,
                None => 0,
            };
            if !flex.contains(&index) {
                continue;
            }
            let custom = facts
                .operator_codes
                .get(index as usize)
                .and_then(|c| c.custom_code.clone())
                .unwrap_or_default();
            let node = match f.field(op, 5)? {
                Some(at) => {
                    let (start, len) = f.vector(at, 1)?;
                    if len > MAX_CUSTOM_OPTIONS {
                        problems.push(Problem::new(
                            ProblemKind::LimitExceeded,
                            "flex-options-too-large",
                            format!(
                                "custom options of flex op '{}' are {len} bytes, over {MAX_CUSTOM_OPTIONS}; not decoded",
                                excerpt(&custom, 100)
                            ),
                            Some(start),
                        ));
                        continue;
                    }
                    let mut bytes = vec![0u8; len as usize];
                    f.read_at(start, &mut bytes)?;
                    flex_node_def(&bytes).map(|(_, def)| node_def_fields(&def))
                }
                None => None,
            };
            // The delegate runs the NodeDef's op; without one, the custom code is all we have.
            let (tf_op, node_name) = match &node {
                Some((Some(op), name)) => (op.clone(), name.clone()),
                _ => (
                    custom.strip_prefix("Flex").unwrap_or(&custom).to_owned(),
                    None,
                ),
            };
            if ops.len() < limits.max_operator_codes as usize {
                ops.insert(excerpt(&tf_op, 200));
            }
            let reason = if super::tf::PYTHON_OPS.contains(&tf_op.as_str()) {
                "calls python code registered in the loading process"
            } else if super::tf::FILE_OPS.contains(&tf_op.as_str()) {
                "reads or writes files by a path taken from the model"
            } else {
                continue;
            };
            let mut problem = Problem::new(
                ProblemKind::Unsafe,
                "flex-unsafe-op",
                format!(
                    "flex operator '{}' runs tensorflow op '{}'{}, which {reason}",
                    excerpt(&custom, 100),
                    excerpt(&tf_op, 100),
                    node_name
                        .as_deref()
                        .map(|n| format!(" (node '{}')", excerpt(n, 100)))
                        .unwrap_or_default()
                ),
                Some(op),
            )
            .with("op", excerpt(&tf_op, 200))
            .with("custom_code", excerpt(&custom, 200))
            .with("decoded", node.is_some().to_string());
            if let Some(n) = node_name {
                problem = problem.with("node", excerpt(&n, 200));
            }
            problems.push(problem);
        }
    }
    facts.flex_ops = ops.into_iter().collect();
    Ok(())
}

/// An unsigned little-endian integer of `width` bytes at `at`.
fn flex_uint(buf: &[u8], at: usize, width: usize) -> Option<u64> {
    let bytes = buf.get(at..at.checked_add(width)?)?;
    let mut out = [0u8; 8];
    out.get_mut(..width)?.copy_from_slice(bytes);
    Some(u64::from_le_bytes(out))
}

/// FlexBuffer type codes (flexbuffers.h): untyped vector, string, blob.
const FBT_VECTOR: u8 = 10;
const FBT_STRING: u8 = 5;
const FBT_BLOB: u8 = 25;

/// Decodes the `[op name, NodeDef bytes]` FlexBuffer vector TensorFlow Lite writes for a flex
/// op. The root sits at the end: its byte width, its packed type, and before them its value;
/// offsets point backwards. `None` when the buffer is not that shape.
pub fn flex_node_def(buf: &[u8]) -> Option<(String, Vec<u8>)> {
    let n = buf.len();
    let root_width = usize::from(*buf.get(n.checked_sub(1)?)?);
    if !matches!(root_width, 1 | 2 | 4 | 8) {
        return None;
    }
    let packed = *buf.get(n.checked_sub(2)?)?;
    let root_at = n.checked_sub(2 + root_width)?;
    if packed >> 2 != FBT_VECTOR {
        return None;
    }
    let width = 1usize << (packed & 3);
    let back = usize::try_from(flex_uint(buf, root_at, root_width)?).ok()?;
    let vector = root_at.checked_sub(back)?;
    let len = usize::try_from(flex_uint(buf, vector.checked_sub(width)?, width)?).ok()?;
    if !(2..=64).contains(&len) {
        return None;
    }
    let types = vector.checked_add(len.checked_mul(width)?)?;
    let mut parts: Vec<Vec<u8>> = Vec::new();
    for i in 0..2 {
        let elem = vector + i * width;
        let t = *buf.get(types + i)?;
        if !matches!(t >> 2, FBT_STRING | FBT_BLOB) {
            return None;
        }
        let size_width = 1usize << (t & 3);
        let back = usize::try_from(flex_uint(buf, elem, width)?).ok()?;
        let target = elem.checked_sub(back)?;
        let size = flex_uint(buf, target.checked_sub(size_width)?, size_width)?;
        let size = usize::try_from(size).ok()?;
        parts.push(buf.get(target..target.checked_add(size)?)?.to_vec());
    }
    let def = parts.pop()?;
    let name = String::from_utf8_lossy(&parts.pop()?).into_owned();
    Some((name, def))
}

/// `NodeDef.op` (field 2) and `NodeDef.name` (field 1) from serialized protobuf bytes; other
/// fields are skipped. Stops at the first malformed field.
pub fn node_def_fields(bytes: &[u8]) -> (Option<String>, Option<String>) {
    use super::protobuf::varint_at as varint;
    let (mut op, mut name) = (None, None);
    let mut at = 0usize;
    while at < bytes.len() {
        let Some(key) = varint(bytes, &mut at) else {
            break;
        };
        let (field, wire) = (key >> 3, key & 7);
        let next = match wire {
            0 => varint(bytes, &mut at).map(|_| at),
            1 => at.checked_add(8),
            2 => varint(bytes, &mut at)
                .and_then(|l| usize::try_from(l).ok())
                .and_then(|l| at.checked_add(l)),
            5 => at.checked_add(4),
            _ => None,
        };
        let Some(next) = next.filter(|&e| e <= bytes.len()) else {
            break;
        };
        if wire == 2 && (field == 1 || field == 2) {
            let text = String::from_utf8_lossy(bytes.get(at..next).unwrap_or_default());
            let text = excerpt(&text, 200);
            if field == 2 {
                op = Some(text);
            } else {
                name = Some(text);
            }
        }
        at = next;
    }
    (op, name)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::io::Cursor;

    /// A tiny FlatBuffer writer, front to back, with explicit vtables.
    struct Fb {
        buf: Vec<u8>,
    }

    impl Fb {
        fn pos(&self) -> u32 {
            self.buf.len() as u32
        }
        fn align4(&mut self) {
            while !self.buf.len().is_multiple_of(4) {
                self.buf.push(0);
            }
        }
        fn u32(&mut self, v: u32) {
            self.buf.extend(v.to_le_bytes());
        }
        /// Patches a uoffset at `at` to point at `target`.
        fn patch(&mut self, at: u32, target: u32) {
            let rel = target - at;
            self.buf[at as usize..at as usize + 4].copy_from_slice(&rel.to_le_bytes());
        }
        fn string(&mut self, s: &str) -> u32 {
            self.align4();
            let at = self.pos();
            self.u32(s.len() as u32);
            self.buf.extend(s.as_bytes());
            self.buf.push(0);
            at
        }
        /// Writes a vtable followed by a table with `fields` of 4 bytes each (u32 values or
        /// offset slots); returns (table position, field positions).
        fn table(&mut self, fields: &[Option<u32>]) -> (u32, Vec<u32>) {
            self.align4();
            let vt = self.pos();
            let n = fields.len() as u16;
            self.buf.extend((4 + 2 * n).to_le_bytes());
            self.buf.extend((4 + 4 * n).to_le_bytes());
            let mut slot = 4u16;
            for f in fields {
                let off = if f.is_some() { slot } else { 0 };
                self.buf.extend(off.to_le_bytes());
                slot += 4;
            }
            self.align4();
            let table = self.pos();
            self.u32(table - vt); // soffset: vtable = table - soffset
            let mut positions = Vec::new();
            for f in fields {
                positions.push(self.pos());
                self.u32(f.unwrap_or(0));
            }
            (table, positions)
        }
    }

    /// Builds a model whose operator codes are (builtin, custom code).
    pub(crate) fn model(ops: &[(i32, Option<&str>)]) -> Vec<u8> {
        model_with_operators(ops, &[])
    }

    /// Builds a model with operator codes and one subgraph of operators (opcode index,
    /// custom options).
    pub(crate) fn model_with_operators(
        ops: &[(i32, Option<&str>)],
        operators: &[(u32, Option<&[u8]>)],
    ) -> Vec<u8> {
        let mut fb = Fb { buf: vec![0; 8] };
        fb.buf[4..8].copy_from_slice(b"TFL3");
        // Model: version, operator_codes, subgraphs, description, buffers.
        let (root, slots) = fb.table(&[Some(3), Some(0), Some(0), Some(0), Some(0)]);
        fb.patch(0, root);
        let desc = fb.string("MLIR Converted.");
        fb.patch(slots[3], desc);
        fb.align4();
        let subgraphs = fb.pos();
        fb.u32(1);
        let subgraph_elem = fb.pos();
        fb.u32(0);
        fb.patch(slots[2], subgraphs);
        // SubGraph { operators: 3 } with Operator { opcode_index: 0, custom_options: 5 }.
        let graph_fields: &[Option<u32>] = if operators.is_empty() {
            &[]
        } else {
            &[None, None, None, Some(0)]
        };
        let (graph, gslots) = fb.table(graph_fields);
        fb.patch(subgraph_elem, graph);
        if !operators.is_empty() {
            fb.align4();
            let vec = fb.pos();
            fb.u32(operators.len() as u32);
            let elems: Vec<u32> = operators
                .iter()
                .map(|_| {
                    let p = fb.pos();
                    fb.u32(0);
                    p
                })
                .collect();
            fb.patch(gslots[3], vec);
            for ((index, custom), elem) in operators.iter().zip(elems) {
                let (table, fields) =
                    fb.table(&[Some(*index), None, None, None, None, custom.map(|_| 0)]);
                fb.patch(elem, table);
                if let Some(bytes) = custom {
                    fb.align4();
                    let at = fb.pos();
                    fb.u32(bytes.len() as u32);
                    fb.buf.extend(*bytes);
                    fb.patch(fields[5], at);
                }
            }
        }
        fb.align4();
        let buffers = fb.pos();
        fb.u32(0);
        fb.patch(slots[4], buffers);
        let opvec = fb.pos();
        fb.u32(ops.len() as u32);
        let elems: Vec<u32> = (0..ops.len())
            .map(|_| {
                let p = fb.pos();
                fb.u32(0);
                p
            })
            .collect();
        fb.patch(slots[1], opvec);
        for ((builtin, custom), elem) in ops.iter().zip(elems) {
            let deprecated = (*builtin).min(127) as u32;
            let (table, fields) = fb.table(&[
                Some(deprecated),
                custom.map(|_| 0),
                Some(1),
                Some(*builtin as u32),
            ]);
            fb.patch(elem, table);
            if let Some(code) = custom {
                let s = fb.string(code);
                fb.patch(fields[1], s);
            }
        }
        fb.buf
    }

    /// The FlexBuffer TensorFlow Lite writes for a flex op: `[op, NodeDef bytes]`, 1-byte
    /// widths (inputs under 256 bytes).
    pub(crate) fn flex_options(op: &str, node_def: &[u8]) -> Vec<u8> {
        fn string(b: &mut Vec<u8>, s: &[u8]) -> usize {
            b.push(s.len() as u8);
            let at = b.len();
            b.extend(s);
            b.push(0);
            at
        }
        let mut b = Vec::new();
        let s0 = string(&mut b, op.as_bytes());
        let s1 = string(&mut b, node_def);
        b.push(2); // vector length
        let vector = b.len();
        b.push((vector - s0) as u8);
        b.push((vector + 1 - s1) as u8);
        b.extend([FBT_STRING << 2, FBT_STRING << 2]);
        let root = b.len();
        b.push((root - vector) as u8);
        b.push(FBT_VECTOR << 2);
        b.push(1);
        b
    }

    /// A NodeDef { name: 1, op: 2, input: 3 }.
    pub(crate) fn node_def(name: &str, op: &str) -> Vec<u8> {
        let mut out = vec![0x0a, name.len() as u8];
        out.extend(name.as_bytes());
        out.extend([0x12, op.len() as u8]);
        out.extend(op.as_bytes());
        out.extend([0x1a, 8]);
        out.extend(b"filename");
        out
    }

    #[test]
    fn names_builtin_ops_from_the_schema() {
        assert_eq!(builtin_name(0), "ADD");
        assert_eq!(builtin_name(3), "CONV_2D");
        assert_eq!(builtin_name(32), "CUSTOM");
        assert_eq!(builtin_name(127), "PLACEHOLDER_FOR_GREATER_OP_CODES");
        assert_eq!(builtin_name(150), "GELU");
        assert_eq!(builtin_name(195), "STABLEHLO_PAD");
        assert_eq!(builtin_name(207), "COMPLEX");
        assert_eq!(builtin_name(9999), "9999");
        let (facts, _) = run(&model(&[(3, None), (9, None)]));
        assert_eq!(facts.operator_codes[0].name, "CONV_2D");
        assert_eq!(facts.operator_codes[1].name, "FULLY_CONNECTED");
    }

    #[test]
    fn decodes_flex_node_def() {
        let def = node_def("read", "ReadFile");
        let (name, bytes) = flex_node_def(&flex_options("ReadFile", &def)).unwrap();
        assert_eq!(name, "ReadFile");
        assert_eq!(bytes, def);
        assert_eq!(
            node_def_fields(&def),
            (Some("ReadFile".to_owned()), Some("read".to_owned()))
        );
        assert!(flex_node_def(b"").is_none());
        assert!(flex_node_def(b"\x01\x02\x03").is_none());
    }

    /// Issue 17: a Flex op's NodeDef decides what runs; an innocent custom code does not hide it.
    #[test]
    fn issue_17_flex_node_def_with_file_op_is_unsafe() {
        let opts = flex_options("ReadFile", &node_def("steal", "ReadFile"));
        let disguised = flex_options("Identity", &node_def("id", "WriteFile"));
        let benign = flex_options("Erf", &node_def("erf", "Erf"));
        let bytes = model_with_operators(
            &[
                (3, None),
                (32, Some("FlexReadFile")),
                (32, Some("FlexIdentity")),
                (32, Some("FlexErf")),
            ],
            &[
                (0, None),
                (1, Some(&opts)),
                (2, Some(&disguised)),
                (3, Some(&benign)),
            ],
        );
        let (facts, problems) = run(&bytes);
        let unsafe_ops: Vec<&Problem> = problems
            .iter()
            .filter(|p| p.kind == ProblemKind::Unsafe)
            .collect();
        assert_eq!(unsafe_ops.len(), 2, "{problems:?}");
        assert_eq!(unsafe_ops[0].code, "flex-unsafe-op");
        assert_eq!(unsafe_ops[0].detail("op"), Some("ReadFile"));
        assert_eq!(unsafe_ops[0].detail("node"), Some("steal"));
        assert_eq!(unsafe_ops[1].detail("op"), Some("WriteFile"));
        assert_eq!(unsafe_ops[1].detail("custom_code"), Some("FlexIdentity"));
        assert_eq!(facts.flex_ops, ["Erf", "ReadFile", "WriteFile"]);
    }

    #[test]
    fn flex_op_without_options_falls_back_to_its_custom_code() {
        let bytes = model_with_operators(&[(32, Some("FlexPyFunc"))], &[(0, None)]);
        let (facts, problems) = run(&bytes);
        let p = problems
            .iter()
            .find(|p| p.kind == ProblemKind::Unsafe)
            .unwrap();
        assert_eq!(p.detail("op"), Some("PyFunc"));
        assert_eq!(p.detail("decoded"), Some("false"));
        assert_eq!(facts.flex_ops, ["PyFunc"]);
    }

    #[test]
    fn builtin_only_model_has_no_flex_findings() {
        let bytes = model_with_operators(&[(3, None), (9, None)], &[(0, None), (1, None)]);
        let (facts, problems) = run(&bytes);
        assert!(problems.is_empty(), "{problems:?}");
        assert!(facts.flex_ops.is_empty());
    }

    fn run(bytes: &[u8]) -> (Facts, Vec<Problem>) {
        inspect(
            &mut Cursor::new(bytes.to_vec()),
            bytes.len() as u64,
            &Limits::default(),
        )
    }

    #[test]
    fn reads_model_facts() {
        let bytes = model(&[(3, None), (9, None)]);
        assert!(is_tflite(&bytes));
        let (facts, problems) = run(&bytes);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(facts.version, 3);
        assert_eq!(facts.description.as_deref(), Some("MLIR Converted."));
        assert_eq!(facts.subgraph_count, 1);
        assert_eq!(facts.operator_codes.len(), 2);
        assert_eq!(facts.operator_codes[1].builtin_code, 9);
    }

    #[test]
    fn reports_custom_op() {
        let bytes = model(&[(3, None), (32, Some("MyEvilOp")), (32, Some("FlexPyFunc"))]);
        let (facts, problems) = run(&bytes);
        assert_eq!(facts.custom_ops, ["MyEvilOp", "FlexPyFunc"]);
        assert!(matches!(
            problems.as_slice(),
            [
                Problem {
                    code: "custom-op",
                    kind: ProblemKind::CustomOp,
                    ..
                },
                Problem {
                    code: "custom-op",
                    ..
                }
            ]
        ));
        assert_eq!(
            problems[1].evidence.get("tf_op").map(String::as_str),
            Some("PyFunc")
        );
    }

    #[test]
    fn uses_extended_builtin_code() {
        // deprecated byte saturates at 127; the int field carries the real code.
        let bytes = model(&[(150, None)]);
        let (facts, _) = run(&bytes);
        assert_eq!(facts.operator_codes[0].builtin_code, 150);
    }

    #[test]
    fn rejects_bad_identifier() {
        let mut bytes = model(&[]);
        bytes[4..8].copy_from_slice(b"XXXX");
        assert!(matches!(
            run(&bytes).1.as_slice(),
            [Problem {
                code: "bad-identifier",
                ..
            }]
        ));
    }

    #[test]
    fn rejects_truncated_file() {
        let bytes = model(&[(32, Some("Op"))]);
        let cut = &bytes[..bytes.len() - 6];
        let (_, problems) = run(cut);
        assert!(matches!(
            problems.as_slice(),
            [Problem {
                code: "offset-out-of-bounds",
                ..
            }]
        ));
    }

    #[test]
    fn rejects_oversized_operator_count() {
        let bytes = model(&[(3, None)]);
        let limits = Limits {
            max_operator_codes: 0,
            ..Limits::default()
        };
        let (_, problems) = inspect(&mut Cursor::new(bytes.clone()), bytes.len() as u64, &limits);
        assert!(matches!(
            problems.as_slice(),
            [Problem {
                code: "too-many-operator-codes",
                ..
            }]
        ));
        // A vector claiming 2^32-1 elements runs past the end of the file.
        let mut bytes = model(&[(3, None)]);
        let root = u32::from_le_bytes(bytes[0..4].try_into().unwrap()) as usize;
        let vt = root - u32::from_le_bytes(bytes[root..root + 4].try_into().unwrap()) as usize;
        let field = root + u16::from_le_bytes(bytes[vt + 6..vt + 8].try_into().unwrap()) as usize;
        let vec = field + u32::from_le_bytes(bytes[field..field + 4].try_into().unwrap()) as usize;
        bytes[vec..vec + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(
            run(&bytes).1.as_slice(),
            [Problem {
                code: "offset-out-of-bounds",
                ..
            }]
        ));
    }

    #[test]
    fn rejects_bad_vtable() {
        let mut bytes = model(&[]);
        let root = u32::from_le_bytes(bytes[0..4].try_into().unwrap()) as usize;
        bytes[root..root + 4].copy_from_slice(&(-4000i32).to_le_bytes());
        assert!(matches!(run(&bytes).1.as_slice(), [Problem { .. }]));
        let mut bytes = model(&[]);
        let vt = root - u32::from_le_bytes(bytes[root..root + 4].try_into().unwrap()) as usize;
        bytes[vt..vt + 2].copy_from_slice(&3u16.to_le_bytes());
        assert!(matches!(
            run(&bytes).1.as_slice(),
            [Problem {
                code: "bad-vtable",
                ..
            }]
        ));
    }

    proptest::proptest! {
        #[test]
        fn never_panics_on_random_bytes(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..512)) {
            let _ = run(&bytes);
            let mut tagged = bytes.clone();
            if tagged.len() >= 8 {
                tagged[4..8].copy_from_slice(b"TFL3");
            }
            let _ = run(&tagged);
        }

        #[test]
        fn never_panics_on_mutated_model(pos in 0usize..300, byte in proptest::prelude::any::<u8>()) {
            let mut bytes = model(&[(3, None), (32, Some("Op"))]);
            let len = bytes.len();
            bytes[pos % len] = byte;
            let _ = run(&bytes);
        }
    }
}
