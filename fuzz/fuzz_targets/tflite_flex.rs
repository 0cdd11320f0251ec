//! TFLite flex custom options: the FlexBuffer `[op, NodeDef]` vector and the NodeDef fields.
#![no_main]

use libfuzzer_sys::fuzz_target;
use modelgate::inspect::tflite::{flex_node_def, node_def_fields};

fuzz_target!(|data: &[u8]| {
    if let Some((_, def)) = flex_node_def(data) {
        let _ = node_def_fields(&def);
    }
    let _ = node_def_fields(data);
});
