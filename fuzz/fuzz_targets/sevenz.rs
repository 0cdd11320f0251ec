//! 7z reader (issue 40): signature header, plain and encoded header property trees, folders
//! decoded (Copy, LZMA, LZMA2, Deflate, BZip2, BCJ x86 and Delta filters), members drained. The
//! decode buffer is kept small so a fuzzed folder cannot spend the run allocating.
#![no_main]

use std::io::{self, BufRead, Cursor};

use libfuzzer_sys::fuzz_target;
use modelgate::inspect::sevenz::{Limits, Member, is_7z, walk};

fuzz_target!(|data: &[u8]| {
    let limits = Limits {
        max_buffer: 1 << 20,
        max_header_bytes: 1 << 20,
        max_member_bytes: 1 << 20,
        max_total_bytes: 4 << 20,
        ..Limits::default()
    };
    let _ = is_7z(data);
    let report = walk(
        &mut Cursor::new(data),
        data.len() as u64,
        0,
        &limits,
        &mut |m: &Member, content: &mut dyn BufRead| {
            let n = io::copy(content, &mut io::sink()).unwrap_or(0);
            assert!(n <= m.size.min(limits.max_member_bytes));
        },
    );
    // Every member the walk lists came from the header, and names are bounded.
    assert!(report.members.len() <= limits.max_members);
});
