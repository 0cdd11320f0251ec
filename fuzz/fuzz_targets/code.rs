//! Python call extraction (tree-sitter, bounded): downloads, trust_remote_code, unsafe loads.
#![no_main]

use libfuzzer_sys::fuzz_target;
use modelgate::provenance::code::{Limits, scan_python};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = scan_python(&text, &Limits::default());
});
