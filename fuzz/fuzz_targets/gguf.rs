//! GGUF header walk (metadata key/values, tensor infos) and the chat-template judge, on the
//! bytes as a raw template (`.jinja`) and as a JSON carrier (`tokenizer_config.json`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use modelgate::inspect::gguf::{Limits, inspect, is_gguf, scan_template};
use modelgate::inspect::template::{Origin, json_templates, judge};

fuzz_target!(|data: &[u8]| {
    let limits = Limits::default();
    let _ = is_gguf(data);
    let mut r: &[u8] = data;
    let _ = inspect(&mut r, data.len() as u64, &limits);
    // The same bytes as a Jinja chat template.
    let text = String::from_utf8_lossy(data);
    let _ = scan_template(&text, limits.max_template_hits);
    let _ = judge(&text, "default", Origin::default());
    // And as a JSON document carrying named templates.
    if let Ok(doc) = serde_json::from_slice::<serde_json::Value>(data) {
        let (templates, _) = json_templates(&doc);
        for t in &templates {
            let _ = judge(t.template, &t.name, Origin::default());
        }
    }
});
