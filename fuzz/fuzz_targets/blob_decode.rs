//! The literal-blob decoder of the code scan: a chain of codecs (base64 … lzma, reverse)
//! applied to bytes, then `sniff` on the result. The first byte is the chain length (0..=4),
//! the next bytes pick each codec, the rest is the blob. Checks, besides no panic: every step's
//! output stays within the cap, the same input decodes the same way twice, an error names a
//! step of the chain, and the two involutions (rot13, reverse) undo themselves on text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use modelgate::code::python::decode::{Codec, ErrorKind, Limits, decode, sniff};

fuzz_target!(|data: &[u8]| {
    let Some((&len, rest)) = data.split_first() else {
        return;
    };
    let n = usize::from(len % 5).min(rest.len());
    let (picks, blob) = rest.split_at(n);
    let chain: Vec<Codec> = picks
        .iter()
        .map(|&p| Codec::ALL[usize::from(p) % Codec::ALL.len()])
        .collect();
    // A small cap, so that bombs are reached quickly, and a tight step limit sometimes.
    let limits = Limits {
        max_decoded_bytes: 1 << 20,
        max_steps: if len >= 0xf0 { 2 } else { 8 },
        max_nesting: 4,
    };
    let first = decode(blob, &chain, &limits);
    assert_eq!(first, decode(blob, &chain, &limits), "not deterministic");
    match &first {
        Ok(out) => {
            assert!(out.len() <= limits.max_decoded_bytes || chain.is_empty());
            let _ = sniff(out);
        }
        Err(e) => {
            assert!(e.step >= 1 && e.step <= chain.len(), "{e}");
            assert_eq!(Some(&e.codec), chain.get(e.step - 1));
            if let ErrorKind::TooLarge { limit } = e.kind {
                assert_eq!(limit, limits.max_decoded_bytes);
            }
            let _ = e.problem();
        }
    }
    let _ = sniff(blob);
    // Reversal of bytes that are not UTF-8 may give UTF-8 (then read as characters): only a
    // `str` literal, always UTF-8, must come back as it was.
    if blob.len() <= limits.max_decoded_bytes && std::str::from_utf8(blob).is_ok() {
        for codec in [Codec::Rot13, Codec::Reverse] {
            assert_eq!(
                decode(blob, &[codec, codec], &limits).as_deref(),
                Ok(blob),
                "{codec} twice"
            );
        }
    }
});
