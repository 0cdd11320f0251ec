//! Polyglot probes (HDF5 superblocks at user-block boundaries, zip end-of-central-directory).
#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;
use modelgate::inspect::hdf5::Limits;
use modelgate::inspect::polyglot::check;

fuzz_target!(|data: &[u8]| {
    let mut c = Cursor::new(data);
    let _ = check(&mut c, data.len() as u64, &Limits::default());
});
