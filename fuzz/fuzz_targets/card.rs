//! Model card: YAML front matter (bounded), headings, licence ids, and the policy checks on them.
#![no_main]

use libfuzzer_sys::fuzz_target;
use modelgate::provenance::card::{Limits, check_card, parse_card};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let facts = parse_card(&text, &Limits::default());
    let required = ["license".to_string(), "base_model".to_string()];
    let allowed = ["apache-2.0".to_string(), "MIT".to_string()];
    let _ = check_card(&facts, &required, &allowed);
    let _ = check_card(&facts, &[], &[]);
});
