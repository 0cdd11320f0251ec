//! The marshal walker and `.pyc` reader (issue 31): header, marshal objects under every code
//! layout, references, line tables of every code object, the bytecode resolver and the source
//! match. Never panics, never allocates past the input, and `loads_any` agrees with `loads`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use modelgate::code::bytecode::{self, marshal};

fuzz_target!(|data: &[u8]| {
    let limits = marshal::Limits {
        max_depth: 200,
        max_objects: 100_000,
    };
    if let Ok(pyc) = marshal::parse_pyc(data, &limits) {
        for c in &pyc.module.code {
            for offset in (0..c.code.len().min(4096)).step_by(2) {
                let _ = c.line_of(offset);
            }
        }
        let _ = bytecode::resolve(&pyc.module, pyc.header.minor);
        let _ = bytecode::matches_source(&pyc.header, &pyc.module, data);
    }
    for minor in [7, 10, 11, 14] {
        if let Ok(m) = marshal::loads(data, minor, &limits) {
            let _ = bytecode::resolve(&m, minor);
        }
    }
    if let Ok((minor, m)) = marshal::loads_any(data, &limits) {
        assert_eq!(marshal::loads(data, minor, &limits).ok(), Some(m));
    }
});
