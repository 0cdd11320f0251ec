//! skops `schema.json` (issue 40): the node walk under a depth the first byte picks, the trust
//! test on every site, and the whole member inspection (knowledge-base judgement, detections).
#![no_main]

use libfuzzer_sys::fuzz_target;
use modelgate::inspect::skops::{
    Limits, SCHEMA, inspect_schema, is_schema, trusted_by_default, walk,
};
use modelgate::inspect::{Ctx, ScanConfig};

fuzz_target!(|data: &[u8]| {
    let Some((&depth, json)) = data.split_first() else {
        return;
    };
    if let Ok(value) = serde_json::from_slice::<serde_json::Value>(json) {
        let _ = is_schema(&value);
        let limits = Limits {
            max_bytes: 1 << 20,
            max_depth: usize::from(depth),
        };
        let schema = walk(&value, &limits);
        assert!(schema.facts.types.len() <= modelgate::inspect::skops::MAX_TYPES);
        for site in &schema.sites {
            let _ = trusted_by_default(site);
        }
    }
    let cfg = ScanConfig::default();
    let mut ctx = Ctx::new(&cfg, "model.skops", std::path::Path::new(""));
    let _ = inspect_schema(&mut ctx, json, false, SCHEMA, true);
});
