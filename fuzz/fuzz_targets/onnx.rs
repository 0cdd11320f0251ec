//! ONNX protobuf walk, then the external-data path checks on whatever locations it found.
#![no_main]

use libfuzzer_sys::fuzz_target;
use modelgate::inspect::onnx::{Limits, check_external_data, inspect, is_onnx};

fuzz_target!(|data: &[u8]| {
    let _ = is_onnx(data);
    let mut r: &[u8] = data;
    let (facts, _) = inspect(&mut r, data.len() as u64, &Limits::default());
    let locations: Vec<String> = facts
        .external_data
        .iter()
        .map(|e| e.location.clone())
        .collect();
    let _ = check_external_data(&locations, "models/m", &|p: &str| p.len() % 2 == 0);
});
