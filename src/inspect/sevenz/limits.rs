//! [`Limits`], the caps applied while reading a 7z archive. The folder's leaf: it imports nothing
//! from `sevenz`, so the header parser and the decoders take it without an arrow back up to
//! `mod.rs`.

/// Caps applied while reading a 7z archive.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Most files an archive may declare.
    pub max_members: usize,
    /// Most bytes of one member handed to the callback.
    pub max_member_bytes: u64,
    /// Most member bytes handed to the callback for the whole archive.
    pub max_total_bytes: u64,
    /// Deepest nesting of archives in archives; the caller passes the current depth.
    pub max_depth: u32,
    /// Highest unpacked/packed ratio of a folder (past `ratio_min_bytes`).
    pub max_ratio: u64,
    /// Folder output below which the ratio is not judged.
    pub ratio_min_bytes: u64,
    /// Largest next header, and largest encoded header once decoded.
    pub max_header_bytes: u64,
    /// Largest LZMA/LZMA2 folder decoded in memory (and largest nested 7z held in memory).
    pub max_buffer: u64,
    /// Largest LZMA dictionary allocated.
    pub max_lzma_dict: usize,
    /// Most problems recorded.
    pub max_problems: usize,
}

impl From<&crate::model::limits::Limits> for Limits {
    /// The policy's `archive_*` limits, as zip and tar use them; header and buffer sizes are
    /// fixed internal caps (the buffer is the one compressed xz/lzma streams get).
    fn from(l: &crate::model::limits::Limits) -> Self {
        use crate::model::limits::{u32_of, usize_of};
        let compress = crate::inspect::compress::Limits::from(l);
        Limits {
            max_members: usize_of(l.archive_members),
            max_member_bytes: l.archive_member_bytes,
            max_total_bytes: l.archive_total_bytes,
            max_depth: u32_of(l.archive_depth),
            max_ratio: l.archive_ratio,
            ratio_min_bytes: compress.ratio_min_bytes,
            max_header_bytes: 16 << 20,
            max_buffer: compress.max_lzma_buffer as u64,
            max_lzma_dict: compress.max_lzma_dict,
            max_problems: 1000,
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self::from(&crate::model::limits::Limits::default())
    }
}
