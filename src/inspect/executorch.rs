//! ExecuTorch program (`.pte`) inspector. A `.pte` file is a FlatBuffer with file identifier
//! `ETxx` (`ET12` today) at bytes 4..8, usually followed at byte 8 by an extended header (`eh00`,
//! its length, the program's size and the base offset of the data segments appended after the
//! program; docs/source/pte-file-format.md). Field ids follow pytorch/executorch `schema/program.fbs`:
//! Program { version:0, execution_plan:1, constant_buffer:2, backend_delegate_data:3,
//! segments:4, constant_segment:5, mutable_data_segments:6 };
//! ExecutionPlan { name:0, container_meta_type:1, values:2, inputs:3, outputs:4, chains:5,
//! operators:6, delegates:7, non_const_buffer_sizes:8 }; Operator { name:0, overload:1 };
//! BackendDelegate { id:0, processed:1, compile_specs:2 };
//! BackendDelegateDataReference { location:0 (INLINE 0, SEGMENT 1), index:1 };
//! BackendDelegateInlineData { data:0 }; DataSegment { offset:0, size:1 }.
//!
//! What matters for security: every kernel an ExecuTorch runtime calls is looked up by operator
//! name in the registry the application was built with. `aten::` operators and ExecuTorch's own
//! (`quantized_decomposed::`, `dim_order_ops::`, `executorch_prim::`) are the standard library;
//! any other namespace is a custom kernel the application must trust (FMT008). Delegate blobs are
//! opaque programs for a backend (XNNPACK, Core ML, QNN, ...) and are noted with their backend id.
//! Random access, bounded like TFLite's: every offset checked against the file size, every
//! vector length against a limit, weight data never read.

use std::collections::BTreeSet;
use std::io::{Read, Seek};

use serde::Serialize;

use super::flatbuf::{Bad, Flat, bad};
use super::problem::{Problem, ProblemKind, excerpt};

/// Bounds for the walk.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Most operators read over all execution plans (the policy's `tflite_operator_codes`).
    pub max_operators: u32,
    /// Most execution plans read.
    pub max_plans: u32,
    /// Most delegates read over all plans.
    pub max_delegates: u32,
    /// Longest string kept.
    pub max_string_len: u32,
    /// Largest vtable accepted, in bytes.
    pub max_vtable_len: u16,
}

impl From<&crate::model::limits::Limits> for Limits {
    /// `tflite_operator_codes` bounds the operator table as it does TFLite's; the other sizes are
    /// fixed internal caps.
    fn from(l: &crate::model::limits::Limits) -> Self {
        Self {
            max_operators: crate::model::limits::u32_of(l.tflite_operator_codes),
            max_plans: 256,
            max_delegates: 4096,
            max_string_len: 1024,
            max_vtable_len: 1024,
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self::from(&crate::model::limits::Limits::default())
    }
}

/// Most inline delegate blobs indexed (each is one table reference).
const MAX_INLINE_BLOBS: u32 = 1 << 16;

/// Operator namespaces of the standard ExecuTorch kernel libraries.
pub const STANDARD_NAMESPACES: &[&str] = &[
    "aten",
    "quantized_decomposed",
    "dim_order_ops",
    "executorch_prim",
    "prims",
];

/// One backend delegate of an execution plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Delegate {
    /// The plan (method) it belongs to.
    pub plan: String,
    /// The backend id, e.g. `XnnpackBackend`.
    pub id: String,
    /// Where its processed blob lives: `inline` or `segment`.
    pub location: String,
    /// The blob's index in that list.
    pub index: u32,
    /// The blob's size in bytes, when known.
    pub size: Option<u64>,
}

/// What an ExecuTorch program says.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Facts {
    /// The file identifier, e.g. `ET12`.
    pub identifier: String,
    /// `Program.version`.
    pub version: u32,
    /// The extended header's program size and segment base offset, when present.
    pub program_size: Option<u64>,
    /// Where the data segments start.
    pub segment_base_offset: Option<u64>,
    /// Execution plans (methods) by name.
    pub plans: Vec<String>,
    /// Operators (`name.overload`), sorted, each once.
    pub operators: Vec<String>,
    /// Operators outside the standard namespaces.
    pub custom_ops: Vec<String>,
    /// Backend delegates.
    pub delegates: Vec<Delegate>,
    /// Data segments.
    pub segment_count: u32,
}

/// Sniffs an ExecuTorch program: identifier `ET` and two digits at bytes 4..8, and a root
/// offset past the identifier.
pub fn is_executorch(head: &[u8]) -> bool {
    crate::classify::is_executorch(head)
}

type File<'a, R> = Flat<'a, R>;

/// The string referenced at `at`, as an excerpt (operator and backend names are short).
fn string<R: Read + Seek + ?Sized>(f: &mut File<'_, R>, at: u64) -> Result<String, Bad> {
    f.string(at).map(|s| excerpt(&s, 256))
}

fn string_field<R: Read + Seek + ?Sized>(
    f: &mut File<'_, R>,
    table: u64,
    id: u16,
) -> Result<Option<String>, Bad> {
    match f.field(table, id)? {
        Some(at) => string(f, at).map(Some),
        None => Ok(None),
    }
}

/// The tables of the table vector in field `id` of `table`, at most `cap` (more is a limit).
fn tables<R: Read + Seek + ?Sized>(
    f: &mut File<'_, R>,
    table: u64,
    id: u16,
    cap: u32,
    what: &'static str,
) -> Result<Vec<u64>, Bad> {
    let Some(at) = f.field(table, id)? else {
        return Ok(Vec::new());
    };
    let (start, len) = f.vector(at, 4)?;
    if len > cap {
        return Err(Bad {
            kind: ProblemKind::LimitExceeded,
            code: "too-many-entries",
            message: format!("{len} {what} exceed the limit of {cap}"),
            offset: start,
        });
    }
    (0..u64::from(len))
        .map(|i| f.follow(start + 4 * i))
        .collect()
}

/// Reads the root `Program` table of an ExecuTorch file of `size` bytes.
pub fn inspect<R: Read + Seek + ?Sized>(
    reader: &mut R,
    size: u64,
    limits: &Limits,
) -> (Facts, Vec<Problem>) {
    let mut facts = Facts::default();
    let mut problems = Vec::new();
    let mut file =
        Flat::new(reader, size, limits.max_vtable_len, limits.max_string_len).hostile_counts();
    if let Err(err) = parse(&mut file, limits, &mut facts) {
        problems.push(Problem::new(
            err.kind,
            err.code,
            format!("executorch: {}", err.message),
            Some(err.offset),
        ));
    }
    for op in &facts.custom_ops {
        problems.push(
            Problem::new(
                ProblemKind::CustomOp,
                "custom-operator",
                format!(
                    "executorch: operator `{op}` is outside the standard kernel libraries; the runtime needs a custom kernel registered for it"
                ),
                None,
            )
            .with("op", op.clone()),
        );
    }
    (facts, problems)
}

fn parse<R: Read + Seek + ?Sized>(
    f: &mut File<'_, R>,
    limits: &Limits,
    facts: &mut Facts,
) -> Result<(), Bad> {
    let mut ident = [0u8; 4];
    f.read_at(4, &mut ident)?;
    if !is_executorch_identifier(&ident) {
        return Err(bad(
            "bad-identifier",
            format!("file identifier {ident:02x?} is not ETxx"),
            4,
        ));
    }
    facts.identifier = String::from_utf8_lossy(&ident).into_owned();
    extended_header(f, facts)?;
    let root = f.follow(0)?;
    if let Some(at) = f.field(root, 0)? {
        facts.version = f.u32_at(at)?;
    }
    let segment_sizes = segment_sizes(f, root, facts)?;
    let inline_tables = tables(f, root, 3, MAX_INLINE_BLOBS, "inline delegate blobs")?;
    let plans = tables(f, root, 1, limits.max_plans, "execution plans")?;
    let mut operators = BTreeSet::new();
    let mut custom = BTreeSet::new();
    let mut op_total: u32 = 0;
    for plan in plans {
        let name = string_field(f, plan, 0)?.unwrap_or_default();
        let remaining = limits.max_operators.saturating_sub(op_total);
        for op in tables(f, plan, 6, remaining, "operators")? {
            op_total += 1;
            let op_name = string_field(f, op, 0)?.unwrap_or_default();
            let overload = string_field(f, op, 1)?.unwrap_or_default();
            let full = if overload.is_empty() {
                op_name.clone()
            } else {
                format!("{op_name}.{overload}")
            };
            let namespace = op_name.split_once("::").map_or("", |(ns, _)| ns);
            if !STANDARD_NAMESPACES.contains(&namespace) {
                custom.insert(full.clone());
            }
            operators.insert(full);
        }
        let remaining = limits
            .max_delegates
            .saturating_sub(facts.delegates.len() as u32);
        for d in tables(f, plan, 7, remaining, "delegates")? {
            let delegate = delegate(f, d, &name, &segment_sizes, &inline_tables)?;
            facts.delegates.push(delegate);
        }
        facts.plans.push(name);
    }
    facts.operators = operators.into_iter().collect();
    facts.custom_ops = custom.into_iter().collect();
    Ok(())
}

/// The optional `ehNN` extended header names the program size and the segment base; both
/// must be sane before any segment offset is trusted.
fn extended_header<R: Read + Seek + ?Sized>(
    f: &mut File<'_, R>,
    facts: &mut Facts,
) -> Result<(), Bad> {
    let mut eh = [0u8; 4];
    // `eh` and two digits (`eh00` today; docs/source/pte-file-format.md).
    if f.read_at(8, &mut eh).is_ok()
        && matches!(eh, [b'e', b'h', a, b] if a.is_ascii_digit() && b.is_ascii_digit())
    {
        let len = f.u32_at(12)?;
        if len < 24 {
            return Err(bad(
                "bad-extended-header",
                format!("extended header of {len} bytes is shorter than its 24-byte minimum"),
                8,
            ));
        }
        let program = f.u64_at(16)?;
        let base = f.u64_at(24)?;
        facts.program_size = Some(program);
        facts.segment_base_offset = Some(base);
        // A size no file has is a crafted header; one a little past the end, a cut file.
        const ABSURD: u64 = 1 << 48;
        if program > ABSURD || base > ABSURD {
            return Err(Bad {
                kind: ProblemKind::Exploit,
                code: "offset-past-end",
                message: format!(
                    "extended header declares a {program}-byte program and segments at {base}"
                ),
                offset: 8,
            });
        }
        if program > f.size || base > f.size {
            return Err(Bad {
                kind: ProblemKind::Malformed,
                code: "truncated",
                message: format!(
                    "extended header declares a {program}-byte program and segments at {base}, past the end of the {}-byte file",
                    f.size
                ),
                offset: 8,
            });
        }
    }
    Ok(())
}

/// Segments: each must lie inside the file, from the segment base. Returns their sizes,
/// which delegates stored in a segment are measured by.
fn segment_sizes<R: Read + Seek + ?Sized>(
    f: &mut File<'_, R>,
    root: u64,
    facts: &mut Facts,
) -> Result<Vec<u64>, Bad> {
    let segments = tables(f, root, 4, 1 << 16, "data segments")?;
    facts.segment_count = segments.len() as u32;
    let mut segment_sizes = Vec::with_capacity(segments.len());
    for s in segments {
        let offset = match f.field(s, 0)? {
            Some(at) => f.u64_at(at)?,
            None => 0,
        };
        let len = match f.field(s, 1)? {
            Some(at) => f.u64_at(at)?,
            None => 0,
        };
        let base = facts.segment_base_offset.unwrap_or(0);
        let end = base.checked_add(offset).and_then(|o| o.checked_add(len));
        if end.is_none_or(|e| e > f.size) {
            return Err(Bad {
                kind: ProblemKind::Exploit,
                code: "segment-past-end",
                message: format!(
                    "data segment of {len} bytes at offset {offset} (base {base}) runs past the end of the {}-byte file",
                    f.size
                ),
                offset: s,
            });
        }
        segment_sizes.push(len);
    }
    Ok(segment_sizes)
}

/// One backend delegate of a plan: where its blob lives (inline or a segment) and that the
/// blob it points at exists.
fn delegate<R: Read + Seek + ?Sized>(
    f: &mut File<'_, R>,
    d: u64,
    plan: &str,
    segment_sizes: &[u64],
    inline_tables: &[u64],
) -> Result<Delegate, Bad> {
    let id = string_field(f, d, 0)?.unwrap_or_default();
    let (mut location, mut index) = ("inline", 0u32);
    if let Some(at) = f.field(d, 1)? {
        let r = f.follow(at)?;
        if let Some(l) = f.field(r, 0)? {
            location = match f.u8_at(l)? {
                0 => "inline",
                1 => "segment",
                other => {
                    return Err(bad(
                        "bad-delegate-location",
                        format!("delegate `{id}` names data location {other}"),
                        l,
                    ));
                }
            };
        }
        if let Some(i) = f.field(r, 1)? {
            index = f.u32_at(i)?;
        }
    }
    let size = if location == "segment" {
        segment_sizes.get(index as usize).copied()
    } else {
        match inline_tables.get(index as usize) {
            Some(&t) => match f.field(t, 0)? {
                Some(at) => Some(u64::from(f.vector(at, 1)?.1)),
                None => Some(0),
            },
            None => None,
        }
    };
    if size.is_none() {
        return Err(bad(
            "bad-delegate-index",
            format!("delegate `{id}` points at {location} blob {index}, which does not exist"),
            d,
        ));
    }
    Ok(Delegate {
        plan: plan.to_string(),
        id,
        location: location.to_string(),
        index,
        size,
    })
}

fn is_executorch_identifier(ident: &[u8]) -> bool {
    matches!(ident, [b'E', b'T', a, b] if a.is_ascii_digit() && b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    use crate::inspect::executorch_fixtures::pte as pte_with;

    /// A `.pte` with no segments.
    pub(crate) fn pte(ops: &[(&str, &str)], delegates: &[(&str, &[u8])]) -> Vec<u8> {
        pte_with(ops, delegates, &[])
    }

    fn run(b: &[u8]) -> (Facts, Vec<Problem>) {
        inspect(&mut Cursor::new(b), b.len() as u64, &Limits::default())
    }

    #[test]
    fn reads_operators_and_delegates() {
        let b = pte(
            &[
                ("aten::add", "out"),
                ("quantized_decomposed::quantize_per_tensor", "out"),
            ],
            &[("XnnpackBackend", b"blob")],
        );
        assert!(is_executorch(&b));
        let (f, p) = run(&b);
        assert!(p.is_empty(), "{p:?}");
        assert_eq!(f.identifier, "ET12");
        assert_eq!(f.plans, vec!["forward"]);
        assert_eq!(
            f.operators,
            vec![
                "aten::add.out",
                "quantized_decomposed::quantize_per_tensor.out"
            ]
        );
        assert_eq!(f.delegates.len(), 1);
        assert_eq!(f.delegates[0].id, "XnnpackBackend");
        assert_eq!(f.delegates[0].size, Some(4));
    }

    #[test]
    fn custom_namespace_is_a_custom_op() {
        let b = pte(&[("aten::mul", "out"), ("my_ops::run_shell", "")], &[]);
        let (f, p) = run(&b);
        assert_eq!(f.custom_ops, vec!["my_ops::run_shell"]);
        assert!(
            matches!(p.as_slice(), [q] if q.kind == ProblemKind::CustomOp && q.detail("op") == Some("my_ops::run_shell"))
        );
    }

    #[test]
    fn hostile_header_and_vectors_are_exploit_shapes() {
        let mut b = pte(&[("aten::add", "out")], &[]);
        b[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
        let (_, p) = run(&b);
        assert!(
            matches!(p.as_slice(), [q] if q.kind == ProblemKind::Exploit),
            "{p:?}"
        );
        // The operator vector's length: found by walking to it.
        let mut b = pte(&[("aten::add", "out")], &[]);
        let len_at = {
            let mut c = Cursor::new(&b);
            let size = b.len() as u64;
            let mut f = File::new(&mut c, size, 1024, 1024);
            let root = f.follow(0).unwrap();
            let plans = f.field(root, 1).unwrap().unwrap();
            let (first, _) = f.vector(plans, 4).unwrap();
            let plan = f.follow(first).unwrap();
            let ops = f.field(plan, 6).unwrap().unwrap();
            f.follow(ops).unwrap() as usize
        };
        b[len_at..len_at + 4].copy_from_slice(&0x00ff_ffffu32.to_le_bytes());
        let (_, p) = run(&b);
        assert!(
            matches!(p.as_slice(), [q] if q.code == "hostile-count" && q.kind == ProblemKind::Exploit),
            "{p:?}"
        );
    }

    #[test]
    fn operator_limit_is_a_limit() {
        let b = pte(&[("aten::add", "out"), ("aten::mul", "out")], &[]);
        let limits = Limits {
            max_operators: 1,
            ..Limits::default()
        };
        let (_, p) = inspect(&mut Cursor::new(&b), b.len() as u64, &limits);
        assert!(
            matches!(p.as_slice(), [q] if q.kind == ProblemKind::LimitExceeded),
            "{p:?}"
        );
    }

    #[test]
    fn broken_structure_is_malformed() {
        let b = pte(&[("aten::add", "out")], &[]);
        let (_, p) = run(&b[..b.len() / 2]);
        assert!(
            matches!(p.as_slice(), [q] if q.kind == ProblemKind::Malformed),
            "{p:?}"
        );
        let mut b2 = b.clone();
        b2[0..4].copy_from_slice(&u32::MAX.to_le_bytes());
        let (_, p) = run(&b2);
        assert!(matches!(p.as_slice(), [q] if q.code == "offset-out-of-bounds"));
    }
}
