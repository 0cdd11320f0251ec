//! HDF5 root group walk (superblock, object headers, B-trees, heaps, Keras attributes).
#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;
use modelgate::inspect::hdf5::{Limits, inspect, is_hdf5};

fuzz_target!(|data: &[u8]| {
    let _ = is_hdf5(data);
    let mut c = Cursor::new(data);
    let _ = inspect(&mut c, data.len() as u64, &Limits::default());
});
