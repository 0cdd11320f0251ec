//! The behaviour analysis of model code (SRC006): any source, any blob in it, never panics or
//! hangs, gives the same sites twice, and `scan_and_analyze` (one parse for both the call scan
//! and the behaviour) finds what the two separate entry points find.
#![no_main]

use libfuzzer_sys::fuzz_target;
use modelgate::provenance::code::{Limits, behaviour, may_report, scan_and_analyze, scan_python_unfiltered};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let limits = Limits::default();
    let alone = behaviour::analyze(&text, &limits);
    assert_eq!(alone, behaviour::analyze(&text, &limits));
    let (report, together) = scan_and_analyze(&text, &limits);
    assert_eq!(together.sites, alone.sites);
    if may_report(text.as_bytes()) {
        assert_eq!(report.calls, scan_python_unfiltered(&text, &limits).calls);
    } else {
        assert!(report.calls.is_empty());
    }
    for site in &alone.sites {
        assert!(site.line >= 1 && site.column >= 1, "{site:?}");
    }
});
