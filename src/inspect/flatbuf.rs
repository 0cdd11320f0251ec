//! Bounded FlatBuffers reading in a file, shared by the TFLite and ExecuTorch readers: every
//! offset is followed by positioned reads checked against the file's size (`read::read_at`),
//! every vtable and vector checked before use, and strings cut to a cap before they are
//! allocated. Nothing is read that the walk does not ask for (never the weight buffers).

use std::io::{Read, Seek};

use super::problem::ProblemKind;

/// Why a walk stopped; the reader that called it turns this into its `Problem`.
#[derive(Debug)]
pub(super) struct Bad {
    pub kind: ProblemKind,
    pub code: &'static str,
    pub message: String,
    pub offset: u64,
}

/// A malformed-structure stop.
pub(super) fn bad(code: &'static str, message: String, offset: u64) -> Bad {
    Bad {
        kind: ProblemKind::Malformed,
        code,
        message,
        offset,
    }
}

/// A FlatBuffer in a file of `size` bytes.
pub(super) struct Flat<'a, R: ?Sized> {
    inner: &'a mut R,
    /// Size of the whole file.
    pub size: u64,
    max_vtable_len: u16,
    max_string_len: u32,
    /// What a vector running past the end of the file is: TFLite calls it malformed, the
    /// ExecuTorch reader a hostile count ([`Flat::hostile_counts`]).
    vector_past_end: (ProblemKind, &'static str),
}

impl<'a, R: Read + Seek + ?Sized> Flat<'a, R> {
    /// A reader with the given caps; vectors past the end are malformed.
    pub fn new(inner: &'a mut R, size: u64, max_vtable_len: u16, max_string_len: u32) -> Self {
        Flat {
            inner,
            size,
            max_vtable_len,
            max_string_len,
            vector_past_end: (ProblemKind::Malformed, "offset-out-of-bounds"),
        }
    }

    /// The same reader, calling a vector past the end a hostile count (FMT009).
    pub fn hostile_counts(mut self) -> Self {
        self.vector_past_end = (ProblemKind::Exploit, "hostile-count");
        self
    }

    /// Fills `out` from `offset`, which must lie inside the file.
    pub fn read_at(&mut self, offset: u64, out: &mut [u8]) -> Result<(), Bad> {
        super::read::read_at(self.inner, self.size, offset, out)
            .map_err(|e| bad(e.code, e.message, e.offset))
    }

    fn array<const N: usize>(&mut self, offset: u64) -> Result<[u8; N], Bad> {
        let mut b = [0u8; N];
        self.read_at(offset, &mut b)?;
        Ok(b)
    }

    pub fn u8_at(&mut self, offset: u64) -> Result<u8, Bad> {
        let [b] = self.array::<1>(offset)?;
        Ok(b)
    }

    pub fn u16_at(&mut self, offset: u64) -> Result<u16, Bad> {
        self.array(offset).map(u16::from_le_bytes)
    }

    pub fn u32_at(&mut self, offset: u64) -> Result<u32, Bad> {
        self.array(offset).map(u32::from_le_bytes)
    }

    pub fn u64_at(&mut self, offset: u64) -> Result<u64, Bad> {
        self.array(offset).map(u64::from_le_bytes)
    }

    /// Follows a uoffset stored at `at`.
    pub fn follow(&mut self, at: u64) -> Result<u64, Bad> {
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
    pub fn field(&mut self, table: u64, id: u16) -> Result<Option<u64>, Bad> {
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
        if vt_len < 4 || !vt_len.is_multiple_of(2) || vt_len > self.max_vtable_len {
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

    /// The string referenced at `at`, cut to the string cap (the whole string must lie inside
    /// the file; only the kept part is allocated).
    pub fn string(&mut self, at: u64) -> Result<String, Bad> {
        let start = self.follow(at)?;
        let len = self.u32_at(start)?;
        if start.saturating_add(4).saturating_add(u64::from(len)) > self.size {
            return Err(bad(
                "offset-out-of-bounds",
                format!("string at {start} of length {len} runs past the end of the file"),
                start,
            ));
        }
        let keep = len.min(self.max_string_len);
        let mut bytes = vec![0u8; keep as usize];
        self.read_at(start.saturating_add(4), &mut bytes)?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// (start of elements, length) of the vector referenced at `at`, whose `elem`-byte
    /// elements must all lie inside the file.
    pub fn vector(&mut self, at: u64, elem: u64) -> Result<(u64, u32), Bad> {
        let start = self.follow(at)?;
        let len = self.u32_at(start)?;
        let end = u64::from(len)
            .checked_mul(elem)
            .and_then(|bytes| bytes.checked_add(start.saturating_add(4)));
        if end.is_none_or(|end| end > self.size) {
            let (kind, code) = self.vector_past_end;
            return Err(Bad {
                kind,
                code,
                message: format!(
                    "vector at {start} with {len} elements runs past the end of the file"
                ),
                offset: start,
            });
        }
        Ok((start + 4, len))
    }
}
