//! `config.json` / `tokenizer_config.json`: `auto_map` and custom pipeline entries.
#![no_main]

use libfuzzer_sys::fuzz_target;
use modelgate::provenance::automap::{Limits, config_facts, parse_auto_map};

fuzz_target!(|data: &[u8]| {
    let limits = Limits::default();
    let _ = parse_auto_map(data, &limits);
    let _ = config_facts(data, &limits);
});
