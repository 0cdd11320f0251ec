//! Safetensors header validation (in memory and streamed) and the NaN/Inf value scan.
//!
//! Also a differential check: the in-memory and the streaming validators must agree on whether
//! a file is valid and on the tensors it declares.
#![no_main]

use libfuzzer_sys::fuzz_target;
use modelgate::inspect::safetensors::{
    Limits, check_shard_index, facts, parse_header_bytes, read_header, scan_values,
};

fuzz_target!(|data: &[u8]| {
    let limits = Limits::default();
    let size = data.len() as u64;
    let in_memory = parse_header_bytes(data, size, &limits);
    let mut r: &[u8] = data;
    let streamed = read_header(&mut r, size, &limits);
    match (&in_memory, &streamed) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a.tensors, b.tensors, "validators disagree on the tensors");
            let _ = facts(b);
            let _ = scan_values(&mut r, b);
        }
        (Err(_), Err(_)) => {}
        _ => panic!(
            "validators disagree: in memory {:?}, streamed {:?}",
            in_memory.as_ref().map(|_| ()),
            streamed.as_ref().map(|_| ())
        ),
    }
    // The same bytes as a shard index (`model.safetensors.index.json`).
    let _ = check_shard_index(data, &Default::default(), &limits);
});
