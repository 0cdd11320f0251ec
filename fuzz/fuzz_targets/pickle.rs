//! Pickle: content sniffing, the symbolic opcode walk, the legacy PyTorch storage-block walk
//! and the disassembler.
#![no_main]

use libfuzzer_sys::fuzz_target;
use modelgate::inspect::pickle::{Limits, analyze, disassemble, looks_like_pickle};

fuzz_target!(|data: &[u8]| {
    let limits = Limits::default();
    let _ = looks_like_pickle(data);
    let mut r: &[u8] = data;
    let analysis = analyze(&mut r, &limits);
    assert!(analysis.bytes_read <= data.len() as u64);
    let mut rest = data.get(analysis.bytes_read as usize..).unwrap_or_default();
    let _ = modelgate::inspect::pickle::torch::check_legacy_block(&analysis, &mut rest, 1000);
    let mut r: &[u8] = data;
    let _ = disassemble(&mut r, &mut std::io::sink(), &limits);
});
