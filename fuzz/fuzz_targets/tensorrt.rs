//! TensorRT engine scan: the tag, then embedded ELF/PE headers found across block boundaries
//! (the first byte picks the block size), checked to lie inside the input.
#![no_main]

use libfuzzer_sys::fuzz_target;
use modelgate::inspect::tensorrt::{inspect, is_tensorrt};

fuzz_target!(|data: &[u8]| {
    let Some((&cap, rest)) = data.split_first() else {
        return;
    };
    let _ = is_tensorrt(rest);
    let mut r = std::io::BufReader::with_capacity(usize::from(cap).max(1), rest);
    let facts = inspect(&mut r, rest).expect("in-memory reads do not fail");
    for e in &facts.embedded_native {
        assert!(e.offset < rest.len() as u64);
    }
});
