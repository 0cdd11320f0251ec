//! Policy TOML: parse and validate (spans, suggestions, limits, exceptions).
#![no_main]

use libfuzzer_sys::fuzz_target;
use modelgate::policy::PolicySource;
use modelgate::policy::config::parse;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(e) = parse(text, PolicySource::Builtin("fuzz")) {
        // Rendering the problems must not panic either (spans into the text).
        let _ = e.to_string();
        let _ = e.problems().len();
    }
});
