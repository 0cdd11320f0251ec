//! The zip format as the walk sees it: record signatures, methods, flags and fixed lengths, the
//! caps ([`Limits`]), the printable form of a member name, and what a walk builds (`LocalRec`,
//! [`Member`], [`ZipReport`]). The folder's leaf: it imports nothing from `zip`, so the source,
//! walker, member and central directory readers use it without an arrow back up to `mod.rs` (or
//! a circle between them).

use crate::inspect::problem::Problem;

pub(super) const SIG_LOCAL: [u8; 4] = *b"PK\x03\x04";
pub(super) const SIG_CENTRAL: [u8; 4] = *b"PK\x01\x02";
pub(super) const SIG_EOCD: [u8; 4] = *b"PK\x05\x06";
pub(super) const SIG_ZIP64_EOCD: [u8; 4] = *b"PK\x06\x06";
pub(super) const SIG_ZIP64_LOCATOR: [u8; 4] = *b"PK\x06\x07";
pub(super) const SIG_DESCRIPTOR: [u8; 4] = *b"PK\x07\x08";
pub(super) const SIG_DIGITAL_SIGNATURE: [u8; 4] = *b"PK\x05\x05";
pub(super) const SIG_ARCHIVE_EXTRA: [u8; 4] = *b"PK\x06\x08";

pub(super) const KNOWN_SIGNATURES: [[u8; 4]; 8] = [
    SIG_LOCAL,
    SIG_CENTRAL,
    SIG_EOCD,
    SIG_ZIP64_EOCD,
    SIG_ZIP64_LOCATOR,
    SIG_DESCRIPTOR,
    SIG_DIGITAL_SIGNATURE,
    SIG_ARCHIVE_EXTRA,
];

/// Compression method: stored (no compression).
pub const METHOD_STORED: u16 = 0;
/// Compression method: deflate.
pub const METHOD_DEFLATE: u16 = 8;
/// Compression method: bzip2.
pub const METHOD_BZIP2: u16 = 12;
/// Compression method: WinZip AES (always encrypted).
pub(super) const METHOD_AES: u16 = 99;

pub(super) const FLAG_ENCRYPTED: u16 = 1;
pub(super) const FLAG_DESCRIPTOR: u16 = 1 << 3;
pub(super) const FLAG_STRONG_ENCRYPTION: u16 = 1 << 6;

pub(super) const U32_MAX: u32 = u32::MAX;
pub(super) const U16_MAX: u16 = u16::MAX;
pub(super) const ZIP64_EXTRA_ID: u16 = 0x0001;
pub(super) const LOCAL_HEADER_LEN: usize = 30;
pub(super) const CENTRAL_HEADER_LEN: usize = 46;
pub(super) const EOCD_LEN: usize = 22;
pub(super) const ZIP64_EOCD_FIXED_LEN: u64 = 44;
pub(super) const STREAM_BUF_LEN: usize = 64 * 1024;

/// Caps applied while walking an archive. Every value read from the file is compared with one
/// of these before it is used to allocate, loop or decompress.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Most members (local headers, and separately central-directory records) walked.
    pub max_members: usize,
    /// Longest member name kept; longer names are cut and reported.
    pub max_name_len: usize,
    /// Most decompressed bytes produced for one member.
    pub max_member_bytes: u64,
    /// Most decompressed bytes produced for the whole archive.
    pub max_total_bytes: u64,
    /// Highest decompressed/compressed ratio tolerated once `ratio_min_bytes` were produced.
    pub max_ratio: u64,
    /// Output size below which the ratio is not judged (tiny members compress absurdly well).
    pub ratio_min_bytes: u64,
    /// Deepest nesting of archives in archives; the caller passes the current depth.
    pub max_depth: u32,
    /// Most bytes of central directory records read.
    pub max_cd_bytes: u64,
    /// Longest archive comment tolerated.
    pub max_comment_len: usize,
    /// Most problems recorded; one `too-many-problems` marks the cut.
    pub max_problems: usize,
}

impl From<&crate::model::limits::Limits> for Limits {
    /// The policy's `archive_*` limits; the rest are fixed internal caps (name and comment
    /// lengths, problems kept, the ratio grace size), not resource limits a user tunes.
    fn from(l: &crate::model::limits::Limits) -> Self {
        use crate::model::limits::{u32_of, usize_of};
        Limits {
            max_members: usize_of(l.archive_members),
            max_name_len: 4096,
            max_member_bytes: l.archive_member_bytes,
            max_total_bytes: l.archive_total_bytes,
            max_ratio: l.archive_ratio,
            ratio_min_bytes: 1 << 20,
            max_depth: u32_of(l.archive_depth),
            // The central directory is a list of names and sizes, held like a member list.
            max_cd_bytes: 64 << 20,
            max_comment_len: 65_535,
            max_problems: 1000,
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self::from(&crate::model::limits::Limits::default())
    }
}

/// One archive member, as seen through its local header, the central directory, or both.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// Name; bytes that are not UTF-8 are written as `\xNN`.
    pub name: String,
    /// Absolute file offset of the local header (for a central-directory-only member: where
    /// the central directory says it is).
    pub local_offset: u64,
    /// General-purpose flags.
    pub flags: u16,
    /// Compression method.
    pub method: u16,
    /// Compressed size (from the data descriptor if one was used, else the header).
    pub compressed_size: u64,
    /// Uncompressed size (same sources as `compressed_size`).
    pub uncompressed_size: u64,
    /// Expected CRC-32.
    pub crc32: u32,
    /// Whether the computed CRC-32 matched; `None` when the content was not fully decompressed.
    pub crc_ok: Option<bool>,
    /// Encrypted member: cannot be scanned.
    pub encrypted: bool,
    /// Listed in the central directory (always `false` in the callback: not known yet).
    pub in_central_directory: bool,
    /// A local header for it was found in the stream.
    pub has_local_header: bool,
    /// Another member has the same name.
    pub duplicate: bool,
}

/// Everything the walk learned about an archive.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ZipReport {
    /// Members: local headers in stream order, then central-directory-only entries.
    pub members: Vec<Member>,
    /// Problems in the order found (cross-checks last).
    pub problems: Vec<Problem>,
    /// Length of the (last) archive comment.
    pub comment_len: usize,
    /// Bytes before the first zip record (self-extractors, polyglots).
    pub prefix_bytes: u64,
    /// An end-of-central-directory record was read.
    pub has_eocd: bool,
}

impl ZipReport {
    /// Whether a problem with this code was recorded.
    pub fn has(&self, code: &str) -> bool {
        self.problems.iter().any(|p| p.code == code)
    }
}

/// A member found through its local header.
pub(super) struct LocalRec {
    pub(super) offset: u64,
    pub(super) raw_name: Vec<u8>,
    pub(super) name: String,
    pub(super) flags: u16,
    pub(super) method: u16,
    pub(super) crc: Option<u32>,
    pub(super) csize: Option<u64>,
    pub(super) usize: Option<u64>,
    pub(super) crc_ok: Option<bool>,
    pub(super) encrypted: bool,
    pub(super) in_cd: bool,
}

/// The [`Member`] a local record reports before the central directory is known.
pub(super) fn member_from_local(l: &LocalRec) -> Member {
    Member {
        name: l.name.clone(),
        local_offset: l.offset,
        flags: l.flags,
        method: l.method,
        compressed_size: l.csize.unwrap_or(0),
        uncompressed_size: l.usize.unwrap_or(0),
        crc32: l.crc.unwrap_or(0),
        crc_ok: l.crc_ok,
        encrypted: l.encrypted,
        in_central_directory: false,
        has_local_header: true,
        duplicate: false,
    }
}

/// Escapes bytes that are not UTF-8 as `\xNN` so names stay printable and distinct.
pub(in crate::inspect) fn display_name(raw: &[u8]) -> String {
    let mut out = String::with_capacity(raw.len());
    for chunk in raw.utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}
