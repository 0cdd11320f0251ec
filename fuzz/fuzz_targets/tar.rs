//! Tar walk (ustar, GNU long names, PAX headers), members drained.
#![no_main]

use std::io::{self, BufRead};

use libfuzzer_sys::fuzz_target;
use modelgate::inspect::tar::{Limits, TarMember, is_legacy_pytorch, is_tar, walk};

fuzz_target!(|data: &[u8]| {
    let limits = Limits::default();
    let _ = is_tar(data);
    let mut r: &[u8] = data;
    let report = walk(
        &mut r,
        0,
        &limits,
        &mut |_m: &TarMember, content: &mut dyn BufRead| {
            let _ = io::copy(content, &mut io::sink());
        },
    );
    let _ = is_legacy_pytorch(&report.members);
});
