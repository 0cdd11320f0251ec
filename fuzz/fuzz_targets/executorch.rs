//! ExecuTorch `.pte` flatbuffer walk (extended header, segments, plans, operators, delegates).
#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;
use modelgate::inspect::executorch::{Limits, inspect, is_executorch};

fuzz_target!(|data: &[u8]| {
    let _ = is_executorch(data);
    let mut c = Cursor::new(data);
    let _ = inspect(&mut c, data.len() as u64, &Limits::default());
});
