//! TensorFlow SavedModel / frozen GraphDef protobuf walk. The first byte picks the file kind.
#![no_main]

use libfuzzer_sys::fuzz_target;
use modelgate::inspect::tf::{GraphFile, Limits, inspect, is_saved_model};

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let kind = if selector & 1 == 0 {
        GraphFile::SavedModel
    } else {
        GraphFile::FrozenGraph
    };
    let _ = is_saved_model(rest);
    let mut r: &[u8] = rest;
    let _ = inspect(&mut r, rest.len() as u64, kind, &Limits::default());
});
