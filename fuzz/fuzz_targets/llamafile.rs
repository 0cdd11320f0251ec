//! llamafile probe: the zip appended to a native executable (end records, zip64, central
//! directory, local headers of `.gguf` members), then the GGUF reader on each member found.
#![no_main]

use std::io::{Cursor, Read, Seek, SeekFrom};

use libfuzzer_sys::fuzz_target;
use modelgate::inspect::gguf;
use modelgate::inspect::llamafile::{Limits, probe};

fuzz_target!(|data: &[u8]| {
    let mut c = Cursor::new(data);
    let (layout, _) = probe(&mut c, data.len() as u64, &Limits::default());
    for g in layout.into_iter().flat_map(|l| l.ggufs) {
        assert!(
            g.offset
                .checked_add(g.size)
                .is_some_and(|e| e <= data.len() as u64)
        );
        let mut c = Cursor::new(data);
        c.seek(SeekFrom::Start(g.offset)).unwrap();
        let mut member = std::io::BufReader::new(c.take(g.size));
        let _ = gguf::inspect(&mut member, g.size, &gguf::Limits::default());
    }
});
