//! Git LFS pointer parser and `.gitattributes` filter rules (patterns compiled to globs).
#![no_main]

use libfuzzer_sys::fuzz_target;
use modelgate::provenance::lfs::{
    lfs_covers, looks_like_pointer, parse_gitattributes, parse_pointer,
};

fuzz_target!(|data: &[u8]| {
    let _ = looks_like_pointer(data);
    let _ = parse_pointer(data);
    let rules = parse_gitattributes(&String::from_utf8_lossy(data));
    for path in [
        "model.safetensors",
        "a/b/pytorch_model.bin",
        "README.md",
        ".gitattributes",
    ] {
        let _ = lfs_covers(&rules, path);
    }
});
