//! The member dispatcher that archives use: content sniffing, then pickle, zip, tar, npy,
//! compressed streams and Keras JSON, recursively, with detections recorded in a `Ctx`.
//! This is the closest in-memory stand-in for `inspect::scan_file` (which needs a file on disk).
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use modelgate::inspect::archive::inspect_member;
use modelgate::inspect::{Ctx, ScanConfig};

fuzz_target!(|data: &[u8]| {
    let cfg = ScanConfig::default();
    let mut ctx = Ctx::new(&cfg, "fuzz.bin", Path::new("/nonexistent/fuzz.bin"));
    let name = if data.first() == Some(&b'{') {
        "config.json"
    } else {
        "data.pkl"
    };
    let mut r: &[u8] = data;
    let _ = inspect_member(&mut ctx, &mut r, name, Some(data.len() as u64), 0);
});
