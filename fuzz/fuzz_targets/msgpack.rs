//! Flax/JAX msgpack checkpoints: the bounded walker and the ndarray, scalar and complex
//! extension payloads (issue 40).
#![no_main]

use libfuzzer_sys::fuzz_target;
use modelgate::inspect::msgpack::{Limits, inspect, is_flax};

fuzz_target!(|data: &[u8]| {
    // The content probe (issue 40: a checkpoint under any name) on the same bytes.
    let _ = is_flax(data);
    let mut r: &[u8] = data;
    let _ = inspect(&mut r, data.len() as u64, &Limits::default());
    // A stated size larger than the stream: the walker must report truncation, not loop.
    let mut r: &[u8] = data;
    let _ = inspect(&mut r, data.len() as u64 + 1000, &Limits::default());
});
