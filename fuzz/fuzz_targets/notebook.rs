//! Jupyter notebook JSON: cells, language, and the Python scan of every code cell.
//! Also differential: the one-pass cell reader must agree with reading a whole
//! `serde_json::Value` wherever the latter succeeds.
#![no_main]

use libfuzzer_sys::fuzz_target;
use modelgate::code::notebook::cells::{read, read_via_value};
use modelgate::code::notebook::{Limits, scan_notebook};

fuzz_target!(|data: &[u8]| {
    let _ = scan_notebook(data, &Limits::default());
    for (max_cells, max_source_bytes) in [(10_000, 1 << 20), (2, 16)] {
        let fast = read(data, max_cells, max_source_bytes);
        match read_via_value(data, max_cells, max_source_bytes) {
            Ok(reference) => assert_eq!(fast.ok(), Some(reference)),
            // Only what a typed parse of the skipped parts checks (a lone surrogate escape, a
            // number out of range) or the nesting of skipped parts may tell them apart.
            Err(e) => assert!(
                fast.is_err() || serde_json::from_slice::<serde::de::IgnoredAny>(data).is_ok(),
                "{e:?}"
            ),
        }
    }
});
