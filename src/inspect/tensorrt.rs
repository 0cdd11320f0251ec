//! TensorRT engines (plans: `.engine`, `.plan`, `.trt`). A serialized engine is NVIDIA's
//! undocumented binary: recent releases (8.x, 10.x) start it with the tag `ftrt` (the
//! `kMAGIC_TAG` the runtime checks: "Magic tag does not match"), and the byte at offset 8 is the
//! serialization version, which changes with each release. An engine without the tag is
//! recognised by its name only.
//!
//! What runs: the engine's kernels are NVIDIA's, but a plan can carry native code too. Plugin
//! libraries serialized into the plan (`IBuilderConfig::setPluginsToSerialize`) and the lean
//! runtime a version-compatible engine embeds are whole shared libraries (ELF or PE) that the
//! runtime loads. So the engine's bytes are scanned, in the one sequential read, for embedded
//! ELF and PE images, recognised by their full headers (not by a bare `\x7fELF`, which weights
//! produce by chance): each is a fact, and SRC007 reports them (`repository::native`).

use std::io::{self, BufRead};

use serde::Serialize;

/// The tag at the start of a serialized engine (TensorRT 8 and later).
pub const MAGIC: &[u8; 4] = b"ftrt";

/// Most embedded objects recorded.
const MAX_EMBEDDED: usize = 16;

/// Bytes a header check may look ahead of a candidate (a PE's `e_lfanew` up to 4 KiB, then the
/// COFF header).
const LOOKAHEAD: usize = 4096 + 32;

/// A native image inside the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Embedded {
    /// `elf` or `pe`.
    pub format: &'static str,
    /// File offset of its header.
    pub offset: u64,
    /// The machine it is built for (`x86_64`, `aarch64`, ...).
    pub machine: String,
}

/// What the engine says.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Facts {
    /// Whether the file starts with the `ftrt` tag (else it was recognised by name).
    pub magic: bool,
    /// The serialization version byte (offset 8), when tagged.
    pub serialization_version: Option<u8>,
    /// Native images embedded in the plan (the first 16).
    pub embedded_native: Vec<Embedded>,
    /// Whether more were found than recorded.
    pub embedded_truncated: bool,
}

/// Sniffs the `ftrt` tag.
pub fn is_tensorrt(head: &[u8]) -> bool {
    head.starts_with(MAGIC) && head.len() >= 16
}

fn machine_name(m: u16) -> Option<&'static str> {
    Some(match m {
        3 => "x86",
        62 => "x86_64",
        40 => "arm",
        183 => "aarch64",
        243 => "riscv",
        21 => "ppc64",
        _ => return None,
    })
}

/// An ELF header at the start of `b`: ident (class, data, version 1, SysV/Linux ABI, zero
/// padding), type (relocatable, executable, shared) and a known machine.
fn elf_at(b: &[u8]) -> Option<Embedded> {
    let h = b.get(..24)?;
    if &h[..4] != b"\x7fELF"
        || !matches!(h[4], 1 | 2)
        || !matches!(h[5], 1 | 2)
        || h[6] != 1
        || !matches!(h[7], 0 | 3)
        || h[8..16].iter().any(|&x| x != 0)
    {
        return None;
    }
    let u16at = |i: usize| {
        if h[5] == 1 {
            u16::from_le_bytes([h[i], h[i + 1]])
        } else {
            u16::from_be_bytes([h[i], h[i + 1]])
        }
    };
    let version = if h[5] == 1 {
        u32::from_le_bytes([h[20], h[21], h[22], h[23]])
    } else {
        u32::from_be_bytes([h[20], h[21], h[22], h[23]])
    };
    if !matches!(u16at(16), 1..=3) || version != 1 {
        return None;
    }
    Some(Embedded {
        format: "elf",
        offset: 0,
        machine: machine_name(u16at(18))?.to_string(),
    })
}

/// A PE image at the start of `b`: `MZ`, `e_lfanew` within 4 KiB pointing at `PE\0\0` and a
/// known machine.
fn pe_at(b: &[u8]) -> Option<Embedded> {
    if b.get(..2)? != b"MZ" {
        return None;
    }
    let off = u32::from_le_bytes(b.get(0x3c..0x40)?.try_into().ok()?) as usize;
    if !(0x40..=4096).contains(&off) || b.get(off..off + 4)? != b"PE\0\0" {
        return None;
    }
    let machine = u16::from_le_bytes(b.get(off + 4..off + 6)?.try_into().ok()?);
    let name = match machine {
        0x14c => "x86",
        0x8664 => "x86_64",
        0xaa64 => "aarch64",
        _ => return None,
    };
    Some(Embedded {
        format: "pe",
        offset: 0,
        machine: name.to_string(),
    })
}

/// Reads the engine from the stream to its end (the one read), recording the header facts and
/// every embedded native image. `head` is the file's first bytes.
pub fn inspect(r: &mut dyn BufRead, head: &[u8]) -> io::Result<Facts> {
    let mut facts = Facts {
        magic: is_tensorrt(head),
        ..Facts::default()
    };
    if facts.magic {
        facts.serialization_version = head.get(8).copied();
    }
    // A window: bytes carried over from the previous block (so a header across a block boundary
    // is seen), then the new block. Positions before `window.len() - LOOKAHEAD` are decided.
    let mut window: Vec<u8> = Vec::new();
    let mut window_at: u64 = 0;
    loop {
        let block = r.fill_buf()?;
        let eof = block.is_empty();
        window.extend_from_slice(block);
        let n = block.len();
        r.consume(n);
        let decided = if eof {
            window.len()
        } else {
            window.len().saturating_sub(LOOKAHEAD)
        };
        let mut i = 0;
        while i < decided {
            let Some(rel) = window[i..decided]
                .iter()
                .position(|&b| b == 0x7f || b == b'M')
            else {
                break;
            };
            let at = i + rel;
            let hit = elf_at(&window[at..]).or_else(|| pe_at(&window[at..]));
            if let Some(mut e) = hit {
                e.offset = window_at + at as u64;
                if facts.embedded_native.len() < MAX_EMBEDDED {
                    facts.embedded_native.push(e);
                } else {
                    facts.embedded_truncated = true;
                }
            }
            i = at + 1;
        }
        if eof {
            return Ok(facts);
        }
        window.drain(..decided);
        window_at += decided as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn elf_header() -> Vec<u8> {
        let mut h = b"\x7fELF\x02\x01\x01\x00".to_vec();
        h.extend_from_slice(&[0; 8]);
        h.extend_from_slice(&3u16.to_le_bytes());
        h.extend_from_slice(&62u16.to_le_bytes());
        h.extend_from_slice(&1u32.to_le_bytes());
        h.extend_from_slice(&[0; 40]);
        h
    }

    fn engine(payload: &[u8]) -> Vec<u8> {
        let mut e = b"ftrt\x00\x00\x00\x00\xe8\x00\x00\x00".to_vec();
        e.extend_from_slice(&[0x3c; 100]);
        e.extend_from_slice(payload);
        e.extend_from_slice(&[0x11; 50]);
        e
    }

    fn run(bytes: &[u8]) -> Facts {
        let mut r = io::BufReader::with_capacity(64, bytes);
        inspect(&mut r, bytes).unwrap()
    }

    #[test]
    fn reads_the_tag_and_version() {
        let f = run(&engine(b""));
        assert!(f.magic);
        assert_eq!(f.serialization_version, Some(0xe8));
        assert!(f.embedded_native.is_empty());
        assert!(!is_tensorrt(b"ftrt"));
    }

    #[test]
    fn finds_an_embedded_elf_across_block_boundaries() {
        let e = engine(&elf_header());
        let f = run(&e);
        assert_eq!(f.embedded_native.len(), 1, "{f:?}");
        assert_eq!(f.embedded_native[0].offset, 112);
        assert_eq!(f.embedded_native[0].machine, "x86_64");
    }

    #[test]
    fn finds_an_embedded_pe() {
        let mut pe = b"MZ".to_vec();
        pe.resize(0x3c, 0);
        pe.extend_from_slice(&0x80u32.to_le_bytes());
        pe.resize(0x80, 0);
        pe.extend_from_slice(b"PE\0\0");
        pe.extend_from_slice(&0x8664u16.to_le_bytes());
        pe.extend_from_slice(&[0; 20]);
        let f = run(&engine(&pe));
        assert_eq!(f.embedded_native.len(), 1, "{f:?}");
        assert_eq!(f.embedded_native[0].format, "pe");
    }

    #[test]
    fn a_bare_elf_magic_in_weights_is_not_an_object() {
        let f = run(&engine(b"\x7fELF\x01\x02\x03\x04 weights"));
        assert!(f.embedded_native.is_empty());
        let f = run(&engine(b"MZ\x00\x00 not a pe"));
        assert!(f.embedded_native.is_empty());
    }

    #[test]
    fn records_at_most_sixteen() {
        let many: Vec<u8> = std::iter::repeat_n(elf_header(), 20).flatten().collect();
        let f = run(&engine(&many));
        assert_eq!(f.embedded_native.len(), MAX_EMBEDDED);
        assert!(f.embedded_truncated);
    }
}
