//! Jupyter notebook JSON: cells, language, and the Python scan of every code cell.
#![no_main]

use libfuzzer_sys::fuzz_target;
use modelgate::provenance::notebook::{Limits, scan_notebook};

fuzz_target!(|data: &[u8]| {
    let _ = scan_notebook(data, &Limits::default());
});
