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

mod error;
mod ratio;

pub use error::ErrorKind;
pub use header::{Compression, sniff};
pub use ratio::Ratio;
