//! The object-file reader (issue 31): ELF, Mach-O thin and fat, PE through the `object` crate
//! with our own bounds on symbols, slices and init entries. Never panics; the notable imports
//! it reports are always imports it counted.
#![no_main]

use libfuzzer_sys::fuzz_target;
use modelgate::inspect::native::{Limits, inspect};

fuzz_target!(|data: &[u8]| {
    let _ = modelgate::classify::native_format(data);
    let limits = Limits {
        max_symbols: 10_000,
    };
    let (facts, _) = inspect(data, &limits);
    assert!(facts.notable_imports.len() <= facts.imports_read);
    // Each slice of a fat file has its own symbol budget; there are at most 16 slices.
    assert!(facts.imports_read <= limits.max_symbols * 16);
});
