//! Keras JSON: model config (Lambda layers), training config and metadata.
#![no_main]

use libfuzzer_sys::fuzz_target;
use modelgate::inspect::keras::{Limits, check_config, check_training_config, parse_metadata};

fuzz_target!(|data: &[u8]| {
    let limits = Limits::default();
    let _ = check_config(data, &limits);
    let _ = check_training_config(data, &limits);
    let _ = parse_metadata(data, &limits);
});
