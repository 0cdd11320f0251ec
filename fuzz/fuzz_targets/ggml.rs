//! Legacy GGML walk (ggml/ggmf/ggjt/ggla magics, every layout tried on the unversioned magic).
#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;
use modelgate::inspect::ggml::{Limits, inspect, is_ggml};

fuzz_target!(|data: &[u8]| {
    let _ = is_ggml(data);
    let mut c = Cursor::new(data);
    let _ = inspect(&mut c, data.len() as u64, &Limits::default());
});
