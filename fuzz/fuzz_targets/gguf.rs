//! GGUF header walk (metadata key/values, tensor infos) and the chat-template scanner.
#![no_main]

use libfuzzer_sys::fuzz_target;
use modelgate::inspect::gguf::{Limits, inspect, is_gguf, scan_template};

fuzz_target!(|data: &[u8]| {
    let limits = Limits::default();
    let _ = is_gguf(data);
    let mut r: &[u8] = data;
    let _ = inspect(&mut r, data.len() as u64, &limits);
    // The same bytes as a Jinja chat template.
    let _ = scan_template(&String::from_utf8_lossy(data), limits.max_template_hits);
});
