//! TFLite flatbuffer walk (root table, vtables, operator codes).
#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;
use modelgate::inspect::tflite::{Limits, inspect, is_tflite};

fuzz_target!(|data: &[u8]| {
    let _ = is_tflite(data);
    let mut c = Cursor::new(data);
    let _ = inspect(&mut c, data.len() as u64, &Limits::default());
});
