//! PaddlePaddle (issue 40): the inference program (`.pdmodel`, a `ProgramDesc` protobuf) and its
//! combined parameters (`.pdiparams`). Paddle's `.pdparams` (`paddle.save` of a state dict) is a
//! pickle and is judged as one by the pickle inspector, whatever this module says.
//!
//! A `ProgramDesc` (`paddle/fluid/framework/framework.proto`) holds blocks (field 1), each with
//! variables (3) and operators (4); an `OpDesc` names its type (3) and carries attributes (4).
//! Paddle runs the operators by type with its own kernels, with exceptions that reach outside
//! the model: `py_func` calls a Python callable registered by id in the loading process (the
//! equivalent of TensorFlow's `PyFunc`), and the `save`/`load` family reads or writes the file
//! its `file_path` attribute names. These are reported like TensorFlow's PyFunc and file-system
//! ops (FMT006). Every operator type is counted (facts). The walk keeps its own frame stack over
//! the bounded wire reader (depth `paddle_depth`), never recursing.
//!
//! A `.pdiparams` file (`save_combine`) is a sequence of tensors, each `SerializeToStream`'s
//! layout: a `uint32` version (0), the LoD (a `uint64` level count, then per level a `uint64`
//! byte size and the offsets), then `TensorToStream`: a `uint32` version (0), an `int32` size
//! and that many bytes of `TensorDesc` protobuf (data type 1, dims 2), then the raw data of the
//! declared shape. The walk checks each record against the bytes left: a declared size past the
//! end is FMT009, a broken record FMT007.

use std::collections::BTreeMap;
use std::io::BufRead;

use serde::Serialize;

use super::problem::{Problem, ProblemKind, excerpt};
use super::protobuf::{WireError, WireReader, WireType, varint_at};

/// Bounds for the Paddle walks.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Deepest message nesting accepted (`paddle_depth`).
    pub max_depth: usize,
    /// Longest operator type, attribute or variable name kept.
    pub max_string_len: usize,
    /// Most distinct operator types recorded.
    pub max_op_types: usize,
    /// Most unsafe-op problems reported (the count in the facts stays exact).
    pub max_problems: usize,
    /// Most dimensions of one parameter tensor (`tensor_rank`).
    pub max_rank: u64,
}

impl From<&crate::model::limits::Limits> for Limits {
    fn from(l: &crate::model::limits::Limits) -> Self {
        Self {
            max_depth: crate::model::limits::usize_of(l.paddle_depth),
            max_string_len: 1024,
            max_op_types: 2048,
            max_problems: 256,
            max_rank: l.tensor_rank,
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self::from(&crate::model::limits::Limits::default())
    }
}

/// Operators that call Python code registered in the loading process.
pub const PYTHON_OPS: &[&str] = &["py_func"];
/// Operators that read or write the file their `file_path` attribute names.
pub const FILE_OPS: &[&str] = &["save", "save_combine", "load", "load_combine"];

/// What a Paddle program holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ProgramFacts {
    /// `ProgramDesc.version.version` (Paddle's version as an integer, e.g. 2006000).
    pub version: Option<u64>,
    /// Blocks (control flow adds sub-blocks).
    pub block_count: u64,
    /// Operators in all blocks.
    pub op_count: u64,
    /// Operator types with counts (at most `Limits::max_op_types` keys).
    pub op_types: BTreeMap<String, u64>,
    /// Whether more operator types existed than were recorded.
    pub op_types_truncated: bool,
    /// Variables declared in all blocks.
    pub var_count: u64,
    /// Persistable variables (the parameters `.pdiparams` holds).
    pub persistable_count: u64,
    /// Operators reported as unsafe (exact, even past `Limits::max_problems`).
    pub unsafe_op_count: u64,
}

/// Sniffs a `ProgramDesc`: field 1 (a block) first, length-delimited.
pub fn is_program(head: &[u8]) -> bool {
    matches!(head, [0x0a, ..])
}

/// Whether `head` reads as a Paddle `ProgramDesc` whatever its name (issue 40). Block 0 comes
/// first, and `framework.proto` makes a block's `idx` and `parent_idx` required, so every
/// program starts the same way: field 1 (the block, length-delimited), then `idx` 0 and
/// `parent_idx` -1 (a ten-byte varint), then the block's variables (3), operators (4) or
/// forward block (5). No ONNX, TensorFlow or Core ML protobuf starts like that.
pub fn starts_like_program(head: &[u8]) -> bool {
    use super::protobuf::varint_at as varint;
    let mut at = 0;
    let mut next = || varint(head, &mut at);
    next() == Some(0x0a)
        && next().is_some()
        && next() == Some(0x08)
        && next() == Some(0)
        && next() == Some(0x10)
        && next() == Some(u64::MAX)
        && matches!(next(), Some(0x1a | 0x22 | 0x28))
}

enum Frame {
    Program,
    Version,
    Block {
        index: u64,
    },
    Var {
        persistable: bool,
    },
    Op {
        op: String,
        file: String,
        offset: u64,
        block: u64,
    },
    Attr {
        name: String,
        text: String,
    },
}

/// Walks a Paddle program from offset 0 of `reader` (`size` bytes), to its end.
pub fn inspect_program(
    reader: &mut dyn BufRead,
    size: u64,
    limits: &Limits,
) -> (ProgramFacts, Vec<Problem>) {
    let mut r = WireReader::new(reader, size, limits.max_depth);
    let mut facts = ProgramFacts::default();
    let mut problems = Vec::new();
    if let Err(err) = walk(&mut r, limits, &mut facts, &mut problems) {
        problems.push(err.problem("paddle program", "paddle"));
    }
    if facts.unsafe_op_count > limits.max_problems as u64 {
        problems.push(Problem::limit(
            "too-many-unsafe-ops",
            format!(
                "{} unsafe operators found; only the first {} are listed",
                facts.unsafe_op_count, limits.max_problems
            ),
        ));
    }
    (facts, problems)
}

fn walk(
    r: &mut WireReader<'_>,
    limits: &Limits,
    facts: &mut ProgramFacts,
    problems: &mut Vec<Problem>,
) -> Result<(), WireError> {
    let max = limits.max_string_len;
    let mut frames = vec![Frame::Program];
    loop {
        let Some((field, wire)) = r.next_field()? else {
            let Some(done) = frames.pop() else {
                return Ok(());
            };
            match done {
                Frame::Op {
                    op,
                    file,
                    offset,
                    block,
                } => note_op(op, &file, offset, block, limits, facts, problems),
                Frame::Var { persistable } => {
                    facts.var_count += 1;
                    facts.persistable_count += u64::from(persistable);
                }
                Frame::Attr { name, text } if name == "file_path" => {
                    if let Some(Frame::Op { file, .. }) = frames.last_mut() {
                        *file = text;
                    }
                }
                _ => {}
            }
            if frames.is_empty() {
                return Ok(());
            }
            r.leave()?;
            continue;
        };
        let Some(top) = frames.last_mut() else {
            return Ok(());
        };
        let child = match (top, field, wire) {
            (Frame::Program, 1, WireType::Len) => {
                facts.block_count += 1;
                Some(Frame::Block {
                    index: facts.block_count - 1,
                })
            }
            (Frame::Program, 4, WireType::Len) => Some(Frame::Version),
            (Frame::Version, 1, WireType::Varint) => {
                facts.version = Some(r.read_varint()?);
                None
            }
            (Frame::Block { .. }, 3, WireType::Len) => Some(Frame::Var { persistable: false }),
            (Frame::Block { index }, 4, WireType::Len) => {
                facts.op_count += 1;
                Some(Frame::Op {
                    op: String::new(),
                    file: String::new(),
                    offset: r.position(),
                    block: *index,
                })
            }
            (Frame::Var { persistable }, 3, WireType::Varint) => {
                *persistable = r.read_varint()? != 0;
                None
            }
            (Frame::Op { op, .. }, 3, WireType::Len) => {
                *op = r.read_string(max)?.0;
                None
            }
            (Frame::Op { .. }, 4, WireType::Len) => Some(Frame::Attr {
                name: String::new(),
                text: String::new(),
            }),
            (Frame::Attr { name, .. }, 1, WireType::Len) => {
                *name = r.read_string(max)?.0;
                None
            }
            (Frame::Attr { text, .. }, 5, WireType::Len) => {
                *text = r.read_string(max)?.0;
                None
            }
            _ => {
                r.skip(wire)?;
                None
            }
        };
        if let Some(child) = child {
            r.enter_message()?;
            frames.push(child);
        }
    }
}

fn note_op(
    op: String,
    file: &str,
    offset: u64,
    block: u64,
    limits: &Limits,
    facts: &mut ProgramFacts,
    problems: &mut Vec<Problem>,
) {
    let reason = if PYTHON_OPS.contains(&op.as_str()) {
        Some("calls a python function registered by id in the loading process")
    } else if FILE_OPS.contains(&op.as_str()) {
        Some("reads or writes the file its file_path attribute names")
    } else {
        None
    };
    if let Some(reason) = reason {
        facts.unsafe_op_count += 1;
        if problems.len() < limits.max_problems {
            let mut p = Problem::new(
                ProblemKind::Unsafe,
                "unsafe-op",
                format!("operator '{}' in block {block} {reason}", excerpt(&op, 100)),
                Some(offset),
            )
            .with("op", op.clone())
            .with("block", block.to_string());
            if !file.is_empty() {
                p = p.with("file", excerpt(file, 200));
            }
            problems.push(p);
        }
    }
    if let Some(n) = facts.op_types.get_mut(&op) {
        *n += 1;
    } else if facts.op_types.len() < limits.max_op_types {
        facts.op_types.insert(op, 1);
    } else {
        facts.op_types_truncated = true;
    }
}

/// Paddle's `VarType.Type` data types a parameter tensor can hold, with their sizes.
const DTYPES: &[(u64, &str, u64)] = &[
    (0, "bool", 1),
    (1, "int16", 2),
    (2, "int32", 4),
    (3, "int64", 8),
    (4, "float16", 2),
    (5, "float32", 4),
    (6, "float64", 8),
    (19, "size_t", 8),
    (20, "uint8", 1),
    (21, "int8", 1),
    (22, "bfloat16", 2),
    (23, "complex64", 8),
    (24, "complex128", 16),
    (32, "float8_e4m3fn", 1),
    (33, "float8_e5m2", 1),
];

/// What a `.pdiparams` file holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ParamsFacts {
    /// Tensors read.
    pub tensor_count: u64,
    /// Bytes of tensor data.
    pub data_bytes: u64,
    /// Elements of all tensors (`None` when it overflows).
    pub parameters: Option<u64>,
    /// Tensors per dtype.
    pub dtypes: BTreeMap<String, u64>,
}

/// Why the parameter walk stopped.
struct Stop(Problem);

struct Stream<'a> {
    inner: &'a mut dyn BufRead,
    pos: u64,
    size: u64,
}

impl Stream<'_> {
    fn left(&self) -> u64 {
        self.size.saturating_sub(self.pos)
    }

    fn truncated(&self) -> Stop {
        Stop(
            Problem::new(
                ProblemKind::Malformed,
                "truncated",
                format!(
                    "paddle params: the file ends inside a record at offset {}",
                    self.pos
                ),
                Some(self.pos),
            )
            .with("parser", "paddle-params"),
        )
    }

    fn bytes<const N: usize>(&mut self) -> Result<[u8; N], Stop> {
        if (N as u64) > self.left() {
            return Err(self.truncated());
        }
        let mut b = [0u8; N];
        self.inner
            .read_exact(&mut b)
            .map_err(|_| self.truncated())?;
        self.pos += N as u64;
        Ok(b)
    }

    fn skip(&mut self, mut n: u64) -> Result<(), Stop> {
        if n > self.left() {
            return Err(self.truncated());
        }
        while n > 0 {
            let available = self.inner.fill_buf().map(<[u8]>::len).unwrap_or(0);
            if available == 0 {
                return Err(self.truncated());
            }
            let step = usize::try_from(n).map_or(available, |n| n.min(available));
            self.inner.consume(step);
            self.pos += step as u64;
            n -= step as u64;
        }
        Ok(())
    }
}

/// Walks a `.pdiparams` file from offset 0 of `reader` (`size` bytes), tensor by tensor.
pub fn inspect_params(
    reader: &mut dyn BufRead,
    size: u64,
    limits: &Limits,
) -> (ParamsFacts, Vec<Problem>) {
    let mut s = Stream {
        inner: reader,
        pos: 0,
        size,
    };
    let mut facts = ParamsFacts {
        parameters: Some(0),
        ..ParamsFacts::default()
    };
    let mut problems = Vec::new();
    while s.pos < size {
        if let Err(Stop(p)) = tensor(&mut s, limits, &mut facts) {
            problems.push(p.with("parser", "paddle-params"));
            break;
        }
    }
    (facts, problems)
}

fn exploit(code: &'static str, message: String, at: u64) -> Stop {
    Stop(Problem::new(ProblemKind::Exploit, code, message, Some(at)))
}

fn malformed(code: &'static str, message: String, at: u64) -> Stop {
    Stop(Problem::new(
        ProblemKind::Malformed,
        code,
        message,
        Some(at),
    ))
}

fn tensor(s: &mut Stream<'_>, limits: &Limits, facts: &mut ParamsFacts) -> Result<(), Stop> {
    let at = s.pos;
    let index = facts.tensor_count;
    let version = u32::from_le_bytes(s.bytes::<4>()?);
    if version != 0 {
        return Err(malformed(
            "unknown-version",
            format!("paddle params: tensor {index} at offset {at} has version {version}, not 0"),
            at,
        ));
    }
    let levels = u64::from_le_bytes(s.bytes::<8>()?);
    // Each level takes an 8-byte size at least.
    if levels.saturating_mul(8) > s.left() {
        return Err(exploit(
            "count-past-eof",
            format!(
                "paddle params: tensor {index} declares {levels} LoD levels, more than the {} bytes left hold",
                s.left()
            ),
            at,
        ));
    }
    for _ in 0..levels {
        let len = u64::from_le_bytes(s.bytes::<8>()?);
        if len > s.left() {
            return Err(exploit(
                "lod-past-eof",
                format!(
                    "paddle params: tensor {index} declares a {len}-byte LoD level, past the end of the file"
                ),
                at,
            ));
        }
        s.skip(len)?;
    }
    let tensor_version = u32::from_le_bytes(s.bytes::<4>()?);
    if tensor_version != 0 {
        return Err(malformed(
            "unknown-version",
            format!("paddle params: tensor {index} has tensor version {tensor_version}, not 0"),
            at,
        ));
    }
    let desc_at = s.pos;
    let desc_len = i32::from_le_bytes(s.bytes::<4>()?);
    // A TensorDesc is a data type and at most `tensor_rank` dims: ten bytes each at most.
    let desc_max = limits.max_rank.saturating_mul(11).saturating_add(16);
    let Ok(desc_len) = u64::try_from(desc_len) else {
        return Err(exploit(
            "negative-size",
            format!(
                "paddle params: tensor {index} declares a negative description size ({desc_len})"
            ),
            desc_at,
        ));
    };
    if desc_len > s.left() {
        return Err(exploit(
            "desc-past-eof",
            format!(
                "paddle params: tensor {index} declares a {desc_len}-byte description, past the end of the file"
            ),
            desc_at,
        ));
    }
    if desc_len > desc_max {
        return Err(Stop(Problem::new(
            ProblemKind::LimitExceeded,
            "rank-too-large",
            format!(
                "paddle params: tensor {index}'s description is {desc_len} bytes, more than a tensor within the tensor_rank limit ({}) needs",
                limits.max_rank
            ),
            Some(desc_at),
        )));
    }
    let mut desc = vec![0u8; usize::try_from(desc_len).unwrap_or(0)];
    for b in &mut desc {
        *b = s.bytes::<1>()?[0];
    }
    let (dtype, dims) = parse_desc(&desc).ok_or_else(|| {
        malformed(
            "bad-desc",
            format!("paddle params: tensor {index}'s description is not a TensorDesc"),
            desc_at,
        )
    })?;
    let Some((_, name, item)) = DTYPES.iter().find(|(d, _, _)| *d == dtype) else {
        return Err(malformed(
            "unknown-dtype",
            format!("paddle params: tensor {index} has data type {dtype}, not one Paddle stores"),
            desc_at,
        ));
    };
    if dims.len() as u64 > limits.max_rank {
        return Err(Stop(Problem::new(
            ProblemKind::LimitExceeded,
            "rank-too-large",
            format!(
                "paddle params: tensor {index} has {} dimensions, over the tensor_rank limit ({})",
                dims.len(),
                limits.max_rank
            ),
            Some(desc_at),
        )));
    }
    let mut elements: Option<u64> = Some(1);
    for d in &dims {
        let Ok(d) = u64::try_from(*d) else {
            return Err(exploit(
                "negative-dimension",
                format!("paddle params: tensor {index} declares a negative dimension ({d})"),
                desc_at,
            ));
        };
        elements = elements.and_then(|e| e.checked_mul(d));
    }
    let Some(bytes) = elements.and_then(|e| e.checked_mul(*item)) else {
        return Err(exploit(
            "size-overflow",
            format!(
                "paddle params: tensor {index} declares shape {dims:?} of {name}, whose byte size overflows"
            ),
            desc_at,
        ));
    };
    if bytes > s.left() {
        return Err(exploit(
            "tensor-past-eof",
            format!(
                "paddle params: tensor {index} declares shape {dims:?} of {name} ({bytes} bytes) but only {} bytes are left",
                s.left()
            ),
            desc_at,
        ));
    }
    s.skip(bytes)?;
    facts.tensor_count += 1;
    facts.data_bytes = facts.data_bytes.saturating_add(bytes);
    facts.parameters = facts
        .parameters
        .and_then(|p| elements.and_then(|e| p.checked_add(e)));
    *facts.dtypes.entry((*name).to_string()).or_insert(0) += 1;
    Ok(())
}

/// A `TensorDesc` from its bytes: data type (field 1) and dims (field 2, packed or not).
fn parse_desc(b: &[u8]) -> Option<(u64, Vec<i64>)> {
    let mut at = 0;
    let mut dtype = None;
    let mut dims = Vec::new();
    while at < b.len() {
        let tag = varint_at(b, &mut at)?;
        match (tag >> 3, tag & 7) {
            (1, 0) => dtype = Some(varint_at(b, &mut at)?),
            (2, 0) => dims.push(varint_at(b, &mut at)? as i64),
            (2, 2) => {
                let len = usize::try_from(varint_at(b, &mut at)?).ok()?;
                let end = at.checked_add(len).filter(|e| *e <= b.len())?;
                while at < end {
                    dims.push(varint_at(b, &mut at)? as i64);
                }
                if at != end {
                    return None;
                }
            }
            _ => return None,
        }
    }
    Some((dtype?, dims))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inspect::proto_fixtures as build;

    fn program(bytes: &[u8]) -> (ProgramFacts, Vec<Problem>) {
        let mut r: &[u8] = bytes;
        inspect_program(&mut r, bytes.len() as u64, &Limits::default())
    }

    fn params(bytes: &[u8]) -> (ParamsFacts, Vec<Problem>) {
        let mut r: &[u8] = bytes;
        inspect_params(&mut r, bytes.len() as u64, &Limits::default())
    }

    #[test]
    fn a_program_is_recognised_by_block_zero_and_a_graph_def_is_not() {
        use crate::inspect::protobuf::encode::{cat, field_bytes, field_str, field_varint};
        let p = build::paddle_benign_program();
        assert!(starts_like_program(&p));
        assert!(!starts_like_program(&p[..3]));
        // A TensorFlow GraphDef: a node (field 1) whose first field is its name.
        let graph = field_bytes(1, &cat(&[field_str(1, "x"), field_str(2, "Const")]));
        assert!(is_program(&graph) && !starts_like_program(&graph));
        // Block 0 says its parent is -1.
        let block = cat(&[field_varint(1, 0), field_varint(2, 0), field_bytes(3, b"")]);
        assert!(!starts_like_program(&field_bytes(1, &block)));
    }

    #[test]
    fn reads_a_benign_program() {
        let bytes = build::paddle_benign_program();
        assert!(is_program(&bytes));
        let (f, p) = program(&bytes);
        assert!(p.is_empty(), "{p:?}");
        assert_eq!(f.version, Some(2_006_000));
        assert_eq!(f.block_count, 1);
        assert_eq!(f.op_count, 4);
        assert_eq!(f.op_types["matmul_v2"], 1);
        assert_eq!((f.var_count, f.persistable_count), (1, 1));
    }

    #[test]
    fn py_func_and_file_ops_are_unsafe_in_any_block() {
        let bytes = build::paddle_program(&[
            vec![build::paddle_op("feed", ("col", 0))],
            vec![
                build::paddle_op("py_func", ("forward_callable_id", 3)),
                build::paddle_op_str("load_combine", ("file_path", "/etc/passwd")),
            ],
        ]);
        let (f, p) = program(&bytes);
        assert_eq!(f.unsafe_op_count, 2);
        assert_eq!(p.len(), 2, "{p:?}");
        assert!(p.iter().all(|p| p.kind == ProblemKind::Unsafe));
        assert_eq!(p[0].detail("op"), Some("py_func"));
        assert_eq!(p[0].detail("block"), Some("1"));
        assert_eq!(p[1].detail("file"), Some("/etc/passwd"));
    }

    #[test]
    fn hostile_programs_are_problems() {
        let bytes = build::paddle_benign_program();
        let mut r: &[u8] = &bytes[..bytes.len() - 5];
        let (_, p) = inspect_program(&mut r, bytes.len() as u64, &Limits::default());
        assert_eq!(p.last().map(|p| p.code), Some("truncated"));
        let (_, p) = program(&[0x0a, 0xff, 0xff, 0xff, 0x0f, 0x00]);
        assert_eq!(p.last().map(|p| p.code), Some("length-exceeds-parent"));
        let limits = Limits {
            max_depth: 2,
            ..Limits::default()
        };
        let mut r: &[u8] = &bytes;
        let (_, p) = inspect_program(&mut r, bytes.len() as u64, &limits);
        assert_eq!(
            p.last().map(|p| (p.kind, p.code)),
            Some((ProblemKind::LimitExceeded, "too-deep"))
        );
    }

    #[test]
    fn reads_combined_params() {
        let bytes = build::paddle_params(&[(5, &[4, 3]), (3, &[2]), (22, &[])]);
        let (f, p) = params(&bytes);
        assert!(p.is_empty(), "{p:?}");
        assert_eq!(f.tensor_count, 3);
        assert_eq!(f.data_bytes, 48 + 16 + 2);
        assert_eq!(f.parameters, Some(12 + 2 + 1));
        assert_eq!(f.dtypes["float32"], 1);
    }

    #[test]
    fn hostile_params_are_problems() {
        let code = |b: &[u8]| params(b).1.first().map(|p| (p.kind, p.code));
        // A shape that claims far more than the file.
        let mut big = build::paddle_param_header(5, &[1 << 20, 1 << 20]);
        big.extend_from_slice(&[0u8; 24]);
        assert_eq!(code(&big), Some((ProblemKind::Exploit, "tensor-past-eof")));
        let ovf = build::paddle_param_header(5, &[u64::MAX >> 1, 4]);
        assert_eq!(code(&ovf).map(|c| c.1), Some("size-overflow"));
        let mut lod = build::paddle_params(&[(5, &[1])]);
        lod[4..12].copy_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(code(&lod), Some((ProblemKind::Exploit, "count-past-eof")));
        let mut version = build::paddle_params(&[(5, &[1])]);
        version[0] = 1;
        assert_eq!(code(&version).map(|c| c.1), Some("unknown-version"));
        let mut dtype = build::paddle_params(&[(5, &[1])]);
        dtype[21] = 99;
        assert_eq!(code(&dtype).map(|c| c.1), Some("unknown-dtype"));
        let good = build::paddle_params(&[(5, &[4])]);
        assert_eq!(code(&good[..10]).map(|c| c.1), Some("truncated"));
        let mut neg = good.clone();
        neg[16..20].copy_from_slice(&(-5i32).to_le_bytes());
        assert_eq!(code(&neg).map(|c| c.1), Some("negative-size"));
    }

    proptest::proptest! {
        #[test]
        fn never_panics_on_random_bytes(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..512)) {
            let _ = program(&bytes);
            let _ = params(&bytes);
        }

        #[test]
        fn never_panics_on_mutated_files(pos in 0usize..300, byte in proptest::prelude::any::<u8>()) {
            let mut bytes = build::paddle_benign_program();
            let len = bytes.len();
            bytes[pos % len] = byte;
            let _ = program(&bytes);
            let mut bytes = build::paddle_params(&[(5, &[4, 3]), (3, &[2])]);
            let len = bytes.len();
            bytes[pos % len] = byte;
            let _ = params(&bytes);
        }
    }
}
