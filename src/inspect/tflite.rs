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
//! custom_code:1 (string), version:2, builtin_code:3 (int) }; BuiltinOperator CUSTOM = 32.

use std::io::{Read, Seek};

use serde::Serialize;

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
}

/// BuiltinOperator.CUSTOM.
const BUILTIN_CUSTOM: i32 = 32;

/// Sniffs the TFLite file identifier.
pub fn is_tflite(head: &[u8]) -> bool {
    head.get(4..8) == Some(b"TFL3")
}

#[derive(Debug)]
struct Bad {
    code: &'static str,
    message: String,
    offset: u64,
}

fn bad(code: &'static str, message: String, offset: u64) -> Bad {
    Bad {
        code,
        message,
        offset,
    }
}

struct File<'a, R> {
    inner: &'a mut R,
    size: u64,
}

impl<R: Read + Seek> File<'_, R> {
    fn read_at(&mut self, offset: u64, out: &mut [u8]) -> Result<(), Bad> {
        super::read::read_at(self.inner, self.size, offset, out)
            .map_err(|e| bad(e.code, e.message, e.offset))
    }

    fn u8_at(&mut self, offset: u64) -> Result<u8, Bad> {
        let mut b = [0u8; 1];
        self.read_at(offset, &mut b)?;
        let [byte] = b;
        Ok(byte)
    }

    fn u16_at(&mut self, offset: u64) -> Result<u16, Bad> {
        let mut b = [0u8; 2];
        self.read_at(offset, &mut b)?;
        Ok(u16::from_le_bytes(b))
    }

    fn u32_at(&mut self, offset: u64) -> Result<u32, Bad> {
        let mut b = [0u8; 4];
        self.read_at(offset, &mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    /// Follows a uoffset stored at `at`.
    fn follow(&mut self, at: u64) -> Result<u64, Bad> {
        let rel = self.u32_at(at)?;
        let target = at.saturating_add(u64::from(rel));
        if target >= self.size {
            return Err(bad(
                "offset-out-of-bounds",
                format!("offset at {at} points to {target}, past the end of the file"),
                at,
            ));
        }
        Ok(target)
    }

    /// Position of field `id` of the table at `table`, if present.
    fn field(&mut self, table: u64, id: u16, limits: &Limits) -> Result<Option<u64>, Bad> {
        let soffset = self.u32_at(table)? as i32;
        let vtable = i64::try_from(table)
            .ok()
            .and_then(|t| t.checked_sub(i64::from(soffset)))
            .and_then(|v| u64::try_from(v).ok())
            .ok_or_else(|| {
                bad(
                    "bad-vtable",
                    format!("table at {table} has vtable offset {soffset} outside the file"),
                    table,
                )
            })?;
        let vt_len = self.u16_at(vtable)?;
        if vt_len < 4 || !vt_len.is_multiple_of(2) || vt_len > limits.max_vtable_len {
            return Err(bad(
                "bad-vtable",
                format!("vtable at {vtable} has invalid length {vt_len}"),
                vtable,
            ));
        }
        let slot = 4 + 2 * u64::from(id);
        if slot + 2 > u64::from(vt_len) {
            return Ok(None);
        }
        let field_off = self.u16_at(vtable + slot)?;
        if field_off == 0 {
            return Ok(None);
        }
        let table_len = self.u16_at(vtable + 2)?;
        if field_off >= table_len {
            return Err(bad(
                "bad-vtable",
                format!(
                    "field {id} of table at {table} lies outside the table's {table_len} bytes"
                ),
                vtable,
            ));
        }
        Ok(Some(table + u64::from(field_off)))
    }

    fn string(&mut self, at: u64, limits: &Limits) -> Result<String, Bad> {
        let start = self.follow(at)?;
        let len = self.u32_at(start)?;
        let keep = len.min(limits.max_string_len);
        let mut bytes = vec![0u8; keep as usize];
        self.read_at(start.saturating_add(4), &mut bytes)?;
        // The whole string (not just the kept part) must lie inside the file.
        if start.saturating_add(4).saturating_add(u64::from(len)) > self.size {
            return Err(bad(
                "offset-out-of-bounds",
                format!("string at {start} of length {len} runs past the end of the file"),
                start,
            ));
        }
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// Returns (start of elements, length) of the vector referenced at `at`.
    fn vector(&mut self, at: u64, elem: u64) -> Result<(u64, u32), Bad> {
        let start = self.follow(at)?;
        let len = self.u32_at(start)?;
        let end = u64::from(len)
            .checked_mul(elem)
            .and_then(|bytes| bytes.checked_add(start.saturating_add(4)));
        if end.is_none_or(|end| end > self.size) {
            return Err(bad(
                "offset-out-of-bounds",
                format!("vector at {start} with {len} elements runs past the end of the file"),
                start,
            ));
        }
        Ok((start + 4, len))
    }
}

/// Reads the root `Model` table of a TFLite file of `size` bytes.
pub fn inspect<R: Read + Seek>(
    reader: &mut R,
    size: u64,
    limits: &Limits,
) -> (Facts, Vec<Problem>) {
    let mut facts = Facts::default();
    let mut problems = Vec::new();
    let mut file = File {
        inner: reader,
        size,
    };
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
    if let Some(at) = f.field(root, 0, limits)? {
        facts.version = f.u32_at(at)?;
    }
    if let Some(at) = f.field(root, 3, limits)? {
        facts.description = Some(f.string(at, limits)?);
    }
    if let Some(at) = f.field(root, 2, limits)? {
        facts.subgraph_count = f.vector(at, 4)?.1;
    }
    if let Some(at) = f.field(root, 4, limits)? {
        facts.buffer_count = f.vector(at, 4)?.1;
    }
    let Some(at) = f.field(root, 1, limits)? else {
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
        let deprecated = match f.field(table, 0, limits)? {
            Some(at) => i32::from(f.u8_at(at)? as i8),
            None => 0,
        };
        let custom_code = match f.field(table, 1, limits)? {
            Some(at) => Some(f.string(at, limits)?),
            None => None,
        };
        let version = match f.field(table, 2, limits)? {
            Some(at) => f.u32_at(at)? as i32,
            None => 1,
        };
        let builtin = match f.field(table, 3, limits)? {
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
            custom_code,
            version,
        });
    }
    Ok(())
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
        fb.u32(0);
        fb.patch(slots[2], subgraphs);
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
