//! The codec: every decompressor and text decoder the scanner runs on untrusted bytes, with one
//! header check per format, each bounded.
//!
//! It sits below the stages that decode: `inspect::compress` (compressed files and archive
//! members, streamed: joblib's zlib/gzip/bz2/xz/lzma/zstd/lz4 wrappers) and the blob decoder of
//! `code::python::decode` (what `exec(zlib.decompress(base64.b64decode("...")))` runs, in
//! memory). Both recognise streams with [`header`] and decode xz and lzma-alone through
//! [`lzma`]; the blob decoder's text decoders are [`text`] and its one-shot decompressors
//! [`memory`]. It imports nothing else of the crate: bytes and caps in, bytes or an
//! [`ErrorKind`] out, so it is testable and fuzzable alone.
//!
//! - [`header`]: [`Compression`], the magics, [`sniff`], one check per format (gzip, zlib,
//!   bzip2, lzma-alone with its accepting and its sniffing policy), the xz size walk.
//! - [`lzma`]: lzma-rs run in memory into a capped sink, cut and run again when bytes follow.
//! - [`memory`]: `zlib`/`gzip`/`bz2`/`lzma.decompress` on bytes, capped.
//! - [`text`]: base64, base32, base85, Ascii85, hex, `bytes.fromhex`, rot13, reversal.

pub mod header;
pub mod lzma;
pub mod memory;
pub mod text;

pub use header::{Compression, sniff};

/// The decompression-bomb test every streaming decoder applies (compressed files, zip members,
/// xz and lzma in memory): output per input byte, judged once the output is past a floor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ratio {
    /// Highest output/input ratio tolerated.
    pub max_ratio: u64,
    /// Output size at and below which the ratio is not judged.
    pub min_bytes: u64,
}

impl Ratio {
    /// Whether `out` bytes decoded from `input` compressed bytes (at least one counted) break
    /// the ratio.
    pub fn exceeded(&self, out: u64, input: u64) -> bool {
        out > self.min_bytes && out > input.max(1).saturating_mul(self.max_ratio)
    }
}

/// Why a decoder could not decode its input. The blob decoder of `code::python::decode`
/// reports it for one step of a chain; its limit names (`blob_decoded_bytes`,
/// `blob_decode_steps`, `code_eval_bytes`) are those of the limits table, and the last two
/// variants are the chain's own (a step never returns them).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ErrorKind {
    /// base64 or base32 whose last group is not completed by its `=` padding (Python:
    /// `binascii.Error: Incorrect padding`, or a single data character left over).
    #[error("incorrect padding")]
    BadPadding,
    /// A byte that is not in the codec's alphabet, at an offset in the step's input
    /// (base32, base85, Ascii85, hex; also Ascii85's `z` inside a group).
    #[error("byte {byte:#04x} at offset {at} is not valid here")]
    BadCharacter {
        /// Offset in the step's input.
        at: usize,
        /// The byte.
        byte: u8,
    },
    /// An odd number of hex digits (`binascii.unhexlify`).
    #[error("odd number of hex digits")]
    OddLength,
    /// A base85/Ascii85 group whose value does not fit in 32 bits.
    #[error("group at offset {at} overflows 32 bits")]
    Overflow {
        /// Offset of the group in the step's input.
        at: usize,
    },
    /// A compressed stream that ends before its end marker.
    #[error("compressed stream ends early")]
    Truncated,
    /// A compressed stream the decompressor rejects (bad header, checksum, data).
    #[error("corrupt compressed stream: {0}")]
    Corrupt(String),
    /// The step would produce more than its cap (the blob decoder's `max_decoded_bytes`).
    #[error("decodes to more than {limit} bytes (limit blob_decoded_bytes)")]
    TooLarge {
        /// The cap.
        limit: usize,
    },
    /// The chain has more than its cap of steps (the blob decoder's `max_steps`).
    #[error("more than {limit} decoding steps (limit blob_decode_steps)")]
    TooManySteps {
        /// The cap.
        limit: usize,
    },
    /// The step would exceed what is left of the file's evaluation byte budget (the caller's
    /// budget, shared by every blob, string and payload of one file).
    #[error("the file's evaluation byte budget is spent (limit code_eval_bytes)")]
    BudgetSpent,
}
