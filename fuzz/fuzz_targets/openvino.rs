//! OpenVINO IR XML (issue 40): the content probe and the bounded, non-expanding parse.
#![no_main]

use libfuzzer_sys::fuzz_target;
use modelgate::inspect::openvino::{MAX_LISTED, MAX_OP_TYPES, is_ir, parse};

fuzz_target!(|data: &[u8]| {
    let _ = is_ir(data);
    let (facts, problems) = parse(data);
    assert!(facts.op_types.len() <= MAX_OP_TYPES);
    assert!(facts.custom_layers.len() <= MAX_LISTED + 1);
    assert!(facts.weights.end >= facts.weights.bytes.min(facts.weights.end));
    for p in &problems {
        assert!(!p.code.is_empty());
    }
});
