//! Bounded decompression of gzip, zlib, bzip2, xz and lzma-alone streams, drained to the end.
//! The first byte picks the codec (so every codec gets inputs), the rest is the stream.
#![no_main]

use std::io;

use libfuzzer_sys::fuzz_target;
use modelgate::inspect::compress::{Compression, Limits, decompressor, sniff};

const KINDS: [Compression; 5] = [
    Compression::Gzip,
    Compression::Zlib,
    Compression::Bzip2,
    Compression::Xz,
    Compression::Lzma,
];

fuzz_target!(|data: &[u8]| {
    let Some((&selector, stream)) = data.split_first() else {
        return;
    };
    let _ = sniff(stream);
    let kind = KINDS[usize::from(selector) % KINDS.len()];
    let limits = Limits::default();
    let mut r: &[u8] = stream;
    let mut d = decompressor(kind, &mut r, &limits);
    let _ = io::copy(&mut d, &mut io::sink());
    let _ = d.problem();
    assert!(d.bytes_in() <= stream.len() as u64);
});
