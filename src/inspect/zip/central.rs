//! Central-directory records: the one decoder of their fields, used by the sequential walker
//! (records as they stream past) and by header mode (`inspect::ranged`, a central directory
//! fetched from the end of a remote file and planned into range reads).

use super::format::{
    CENTRAL_HEADER_LEN, SIG_CENTRAL, SIG_EOCD, SIG_ZIP64_EOCD, SIG_ZIP64_LOCATOR, U32_MAX,
    display_name,
};
use super::source::{Le, zip64_field};

/// The fields of one central-directory record, sizes and offset widened by its zip64 extra
/// field where the 32-bit fields say so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::inspect) struct CentralFields {
    /// General-purpose flags (bit 3: a data descriptor follows the data).
    pub flags: u16,
    /// Compression method.
    pub method: u16,
    /// CRC-32 of the content.
    pub crc: u32,
    /// Compressed size.
    pub csize: u64,
    /// Uncompressed size.
    pub usize: u64,
    /// Name length.
    pub name_len: usize,
    /// Extra field length.
    pub extra_len: usize,
    /// Comment length.
    pub comment_len: usize,
    /// Disk number the member starts on.
    pub disk: u16,
    /// Offset of the member's local header (relative to the archive's start).
    pub local_offset: u64,
}

impl CentralFields {
    /// Decodes the fixed part of a record (signature included).
    pub fn parse(h: &[u8; CENTRAL_HEADER_LEN]) -> CentralFields {
        let u16at = |k: usize| u16::from_le_bytes([h[k], h[k + 1]]);
        let u32at = |k: usize| u32::from_le_bytes([h[k], h[k + 1], h[k + 2], h[k + 3]]);
        CentralFields {
            flags: u16at(8),
            method: u16at(10),
            crc: u32at(16),
            csize: u64::from(u32at(20)),
            usize: u64::from(u32at(24)),
            name_len: usize::from(u16at(28)),
            extra_len: usize::from(u16at(30)),
            comment_len: usize::from(u16at(32)),
            disk: u16at(34),
            local_offset: u64::from(u32at(42)),
        }
    }

    /// The whole record's length: fixed part, name, extra field, comment.
    pub fn record_len(&self) -> u64 {
        (CENTRAL_HEADER_LEN + self.name_len + self.extra_len + self.comment_len) as u64
    }

    /// Widens the fields saturated at `0xFFFFFFFF` from the zip64 extra field, in the order
    /// APPNOTE 4.5.3 gives (uncompressed size, compressed size, local header offset), each
    /// present only when its 32-bit field is saturated.
    pub fn apply_zip64(&mut self, extra: &[u8]) {
        let Some(body) = zip64_field(extra) else {
            return;
        };
        let mut le = Le(body);
        let max = u64::from(U32_MAX);
        if self.usize == max {
            self.usize = le.u64().unwrap_or(self.usize);
        }
        if self.csize == max {
            self.csize = le.u64().unwrap_or(self.csize);
        }
        if self.local_offset == max {
            self.local_offset = le.u64().unwrap_or(self.local_offset);
        }
    }
}

/// One record of a central directory held in memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::inspect) struct CentralEntry {
    /// The member's name, for display and matching.
    pub name: String,
    /// Its fields (zip64 applied).
    pub fields: CentralFields,
}

/// The records at the start of `cd`, at most `max`: stops at the first that is not a complete
/// record (its name cut off) or does not start with the record signature. A truncated extra
/// field reads as empty.
pub(in crate::inspect) fn parse_central_directory(cd: &[u8], max: usize) -> Vec<CentralEntry> {
    let mut out = Vec::new();
    let mut rest = cd;
    while out.len() < max {
        let Some((h, tail)) = rest.split_first_chunk::<CENTRAL_HEADER_LEN>() else {
            break;
        };
        if h[..4] != SIG_CENTRAL {
            break;
        }
        let mut fields = CentralFields::parse(h);
        let Some(name) = tail.get(..fields.name_len) else {
            break;
        };
        let extra = tail
            .get(fields.name_len..fields.name_len + fields.extra_len)
            .unwrap_or_default();
        fields.apply_zip64(extra);
        let len = fields.name_len + fields.extra_len + fields.comment_len;
        out.push(CentralEntry {
            name: display_name(name),
            fields,
        });
        rest = tail.get(len..).unwrap_or_default();
    }
    out
}

/// Bytes of a file's tail to read to find its end of central directory record: the record, the
/// longest comment it may carry, and a zip64 locator in front of it.
pub(in crate::inspect) const TAIL_LEN: u64 = 22 + 65_535 + 20;

/// The end of central directory record found in a file's `tail` (its last bytes, starting at
/// file offset `tail_at`), as the random-access readers (range plans, llamafile) need it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::inspect) struct EndRecord {
    /// File offset of the record.
    pub at: u64,
    /// Size and offset of the central directory as the record states them (32-bit fields;
    /// [`zip64_end`] gives the 64-bit ones when `zip64_at` is set).
    pub cd_size: u64,
    pub cd_offset: u64,
    /// File offset of the zip64 end record a zip64 locator in front of it points at.
    pub zip64_at: Option<u64>,
}

/// Finds the end record in `tail`: the last signature whose comment ends the file exactly, else
/// the last signature at all (a comment length that lies). `None` when there is none.
pub(in crate::inspect) fn end_record(tail: &[u8], tail_at: u64) -> Option<EndRecord> {
    let candidates = || {
        (0..tail.len().saturating_sub(21))
            .rev()
            .filter(|&i| tail.get(i..i + 4) == Some(&SIG_EOCD[..]))
    };
    let eocd = candidates()
        .find(|&i| (i + 22) as u64 + field(tail, i + 20, |l| l.u16()) == tail.len() as u64)
        .or_else(|| candidates().next())?;
    let locator = eocd.checked_sub(20).and_then(|i| tail.get(i..i + 20));
    Some(EndRecord {
        at: tail_at + eocd as u64,
        cd_size: field(tail, eocd + 12, |l| l.u32()),
        cd_offset: field(tail, eocd + 16, |l| l.u32()),
        zip64_at: locator
            .filter(|l| l.starts_with(&SIG_ZIP64_LOCATOR))
            .map(|l| field(l, 8, |l| l.u64())),
    })
}

/// The little-endian field at `i` of `b` (0 past the end: the callers bound-check what they use).
fn field<T: Into<u64>>(b: &[u8], i: usize, read: impl FnOnce(&mut Le<'_>) -> Option<T>) -> u64 {
    read(&mut Le(b.get(i..).unwrap_or_default())).map_or(0, Into::into)
}

/// (central directory size, its offset) from a zip64 end record's first 56 bytes; `None` when
/// they are not one.
pub(in crate::inspect) fn zip64_end(z: &[u8]) -> Option<(u64, u64)> {
    (z.len() >= 56 && z.starts_with(&SIG_ZIP64_EOCD))
        .then(|| (field(z, 40, |l| l.u64()), field(z, 48, |l| l.u64())))
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{Zip, e};
    use super::*;

    /// The central directory of a built archive: from its first record to the end.
    fn cd_of(bytes: &[u8]) -> &[u8] {
        let at = bytes
            .windows(4)
            .position(|w| w == SIG_CENTRAL)
            .expect("a central directory");
        &bytes[at..]
    }

    #[test]
    fn parses_records_with_names_sizes_and_offsets() {
        let bytes = Zip::new()
            .add(e("archive/data.pkl", b"hello"))
            .add(e("archive/data/0", b"world!").deflated())
            .finish();
        let entries = parse_central_directory(cd_of(&bytes), 100);
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].name, "archive/data.pkl");
        assert_eq!(entries[0].fields.local_offset, 0);
        assert_eq!(entries[0].fields.csize, 5);
        assert_eq!(entries[1].fields.usize, 6);
        assert!(entries[1].fields.local_offset > 0);
        assert_eq!(
            &bytes[entries[1].fields.local_offset as usize..][..4],
            b"PK\x03\x04"
        );
    }

    #[test]
    fn widens_zip64_fields() {
        let bytes = Zip::new().add(e("a", b"hello").zip64()).finish();
        let entries = parse_central_directory(cd_of(&bytes), 100);
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].fields.csize, 5);
        assert_eq!(entries[0].fields.usize, 5);
        assert_eq!(entries[0].fields.local_offset, 0);
    }

    #[test]
    fn stops_at_the_cap_a_cut_name_or_another_signature() {
        let bytes = Zip::new().add(e("a", b"1")).add(e("b", b"2")).finish();
        let cd = cd_of(&bytes);
        assert_eq!(parse_central_directory(cd, 1).len(), 1);
        // Cut inside the first record's name: nothing.
        assert!(parse_central_directory(&cd[..CENTRAL_HEADER_LEN], 10).is_empty());
        assert!(parse_central_directory(b"PK\x03\x04 not a central record", 10).is_empty());
        assert!(parse_central_directory(&[], 10).is_empty());
    }
}
