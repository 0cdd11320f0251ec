//! NumPy `.npy` header literal parser and the size check.
#![no_main]

use libfuzzer_sys::fuzz_target;
use modelgate::inspect::numpy::{Limits, check_size, is_npy, read_header};

fuzz_target!(|data: &[u8]| {
    let _ = is_npy(data);
    let mut r: &[u8] = data;
    if let Ok(h) = read_header(&mut r, &Limits::default()) {
        let _ = check_size(&h, data.len() as u64);
    }
});
