//! Core ML (issue 40): the model spec walk, the MIL weight blob walk and the `.mlpackage`
//! manifest parse and path check, on the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use modelgate::inspect::coreml::{
    Limits, check_manifest, inspect_spec, inspect_weights, is_spec, is_weight_blob, parse_manifest,
};

fuzz_target!(|data: &[u8]| {
    let mut r: &[u8] = data;
    let _ = inspect_spec(&mut r, data.len() as u64, &Limits::default());
    let _ = is_weight_blob(data);
    // The content probe (issue 40: a spec under any name) on the same bytes.
    let _ = is_spec(data);
    let mut r: &[u8] = data;
    let _ = inspect_weights(&mut r, data.len() as u64);
    if let Ok(m) = parse_manifest(data) {
        let _ = check_manifest(&m, "M.mlpackage/Data", &|p: &str| p.len() % 2 == 0);
    }
});
