//! The Hub API responses a remote scan parses (revision info, tree pages, `Link` headers): a
//! hostile mirror controls every byte of them.
#![no_main]

use libfuzzer_sys::fuzz_target;
use modelgate::hub::api;

fuzz_target!(|data: &[u8]| {
    let _ = api::parse_revision(data);
    if let Ok((files, _)) = api::parse_tree_page(data) {
        for f in &files {
            // Every accepted path passed the path check: relative, no `..`.
            assert!(api::check_path(&f.path).is_ok());
        }
    }
    if let Ok(s) = std::str::from_utf8(data) {
        let _ = api::next_link(s);
    }
});
