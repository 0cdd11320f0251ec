//! Python call extraction (tree-sitter, bounded): downloads, trust_remote_code, unsafe loads.
//! Also differential: parsing only the selected statements must find the same items as parsing
//! the whole file, whenever the whole file parses without errors.
#![no_main]

use libfuzzer_sys::fuzz_target;
use modelgate::code::python::{
    Limits, may_report, scan_python, scan_python_statements, scan_python_unfiltered,
};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let limits = Limits::default();
    let _ = scan_python(&text, &limits);
    if may_report(text.as_bytes()) {
        let whole = scan_python_unfiltered(&text, &limits);
        if !whole.syntax_errors {
            let statements = scan_python_statements(&text, &limits);
            assert_eq!(statements.calls, whole.calls);
            assert_eq!(statements.truncated_by, whole.truncated_by);
            assert!(!statements.syntax_errors);
        }
    }
});
