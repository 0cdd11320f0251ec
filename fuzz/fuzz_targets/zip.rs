//! Zip walk (local headers, central directory, decompression of every member, nested zips).
#![no_main]

use std::io::{self, BufRead};

use libfuzzer_sys::fuzz_target;
use modelgate::inspect::zip::{Limits, Member, classify_pytorch, walk};

fn walk_nested(r: &mut dyn BufRead, size: u64, depth: u32, limits: &Limits) {
    let report = walk(
        r,
        size,
        depth,
        limits,
        &mut |_m: &Member, content: &mut dyn BufRead| {
            let nested = matches!(content.fill_buf(), Ok(head) if head.starts_with(b"PK"));
            if nested {
                walk_nested(content, u64::MAX, depth + 1, limits);
            } else {
                let _ = io::copy(content, &mut io::sink());
            }
        },
    );
    let _ = classify_pytorch(&report.members);
}

fuzz_target!(|data: &[u8]| {
    let limits = Limits::default();
    let mut r: &[u8] = data;
    walk_nested(&mut r, data.len() as u64, 0, &limits);
});
