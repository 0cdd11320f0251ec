//! Byte-exact native object files for tests (issue 31): a thin 64-bit Mach-O dylib, a fat
//! Mach-O wrapping slices, a PE32+ image, and a shared library compiled with the C compiler.
//! Self-contained (no crate imports): the unit tests in `src/inspect/native` include this file
//! with `#[path]`, the CLI tests through `tests/support`.
#![allow(dead_code)]

fn u16le(v: &mut Vec<u8>, x: u16) {
    v.extend_from_slice(&x.to_le_bytes());
}
fn u32le(v: &mut Vec<u8>, x: u32) {
    v.extend_from_slice(&x.to_le_bytes());
}
fn u64le(v: &mut Vec<u8>, x: u64) {
    v.extend_from_slice(&x.to_le_bytes());
}
fn name16(v: &mut Vec<u8>, s: &str) {
    let mut b = [0u8; 16];
    b[..s.len()].copy_from_slice(s.as_bytes());
    v.extend_from_slice(&b);
}

/// A little-endian x86_64 `MH_DYLIB`: one `__DATA` segment holding a `__mod_init_func` section
/// of `init_entries` pointers (none: an empty regular `__data` section), an `LC_SYMTAB` whose symbols are `imports`
/// (undefined, external; give them Mach-O's leading `_`), and `LC_ROUTINES_64` when `routines`.
pub fn macho_dylib(init_entries: usize, imports: &[&str], routines: bool) -> Vec<u8> {
    let nsects = 1usize;
    let seg_size = 72 + 80 * nsects;
    let routines_size = if routines { 72 } else { 0 };
    let sizeofcmds = seg_size + 24 + routines_size;
    let ncmds = 2 + u32::from(routines);
    let data_off = 32 + sizeofcmds;
    let init_size = init_entries * 8;
    let sym_off = data_off + init_size;
    let mut strtab = vec![0u8];
    let mut strx = Vec::new();
    for name in imports {
        strx.push(strtab.len() as u32);
        strtab.extend_from_slice(name.as_bytes());
        strtab.push(0);
    }
    let str_off = sym_off + 16 * imports.len();
    let end = str_off + strtab.len();

    let mut v = Vec::new();
    u32le(&mut v, 0xfeed_facf);
    u32le(&mut v, 0x0100_0007); // CPU_TYPE_X86_64
    u32le(&mut v, 3);
    u32le(&mut v, 6); // MH_DYLIB
    u32le(&mut v, ncmds);
    u32le(&mut v, sizeofcmds as u32);
    u32le(&mut v, 0);
    u32le(&mut v, 0);
    // LC_SEGMENT_64
    u32le(&mut v, 0x19);
    u32le(&mut v, seg_size as u32);
    name16(&mut v, "__DATA");
    u64le(&mut v, 0);
    u64le(&mut v, 0x1000);
    u64le(&mut v, 0);
    u64le(&mut v, end as u64);
    u32le(&mut v, 3);
    u32le(&mut v, 3);
    u32le(&mut v, nsects as u32);
    u32le(&mut v, 0);
    {
        name16(
            &mut v,
            if init_entries > 0 {
                "__mod_init_func"
            } else {
                "__data"
            },
        );
        name16(&mut v, "__DATA");
        u64le(&mut v, data_off as u64);
        u64le(&mut v, init_size as u64);
        u32le(&mut v, data_off as u32);
        u32le(&mut v, 3);
        u32le(&mut v, 0);
        u32le(&mut v, 0);
        // S_MOD_INIT_FUNC_POINTERS, or S_REGULAR
        u32le(&mut v, if init_entries > 0 { 0x9 } else { 0 });
        u32le(&mut v, 0);
        u32le(&mut v, 0);
        u32le(&mut v, 0);
    }
    // LC_SYMTAB
    u32le(&mut v, 0x2);
    u32le(&mut v, 24);
    u32le(&mut v, sym_off as u32);
    u32le(&mut v, imports.len() as u32);
    u32le(&mut v, str_off as u32);
    u32le(&mut v, strtab.len() as u32);
    if routines {
        u32le(&mut v, 0x1a); // LC_ROUTINES_64
        u32le(&mut v, 72);
        v.extend_from_slice(&[0u8; 64]);
    }
    assert_eq!(v.len(), data_off);
    for i in 0..init_entries {
        u64le(&mut v, 0x100 + i as u64);
    }
    for x in strx {
        u32le(&mut v, x);
        v.push(0x01); // N_UNDF | N_EXT
        v.push(0);
        u16le(&mut v, 0);
        u64le(&mut v, 0);
    }
    v.extend_from_slice(&strtab);
    v
}

/// A fat (universal) Mach-O holding `slices`, each at a 16-byte aligned offset.
pub fn macho_fat(slices: &[Vec<u8>]) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&0xcafe_babeu32.to_be_bytes());
    v.extend_from_slice(&(slices.len() as u32).to_be_bytes());
    let mut offset = (8 + 20 * slices.len()).next_multiple_of(16);
    let mut offsets = Vec::new();
    for s in slices {
        v.extend_from_slice(&0x0100_0007u32.to_be_bytes());
        v.extend_from_slice(&3u32.to_be_bytes());
        v.extend_from_slice(&(offset as u32).to_be_bytes());
        v.extend_from_slice(&(s.len() as u32).to_be_bytes());
        v.extend_from_slice(&4u32.to_be_bytes());
        offsets.push(offset);
        offset = (offset + s.len()).next_multiple_of(16);
    }
    for (s, at) in slices.iter().zip(offsets) {
        v.resize(at, 0);
        v.extend_from_slice(s);
    }
    v
}

/// A PE32+ x86_64 image with one `.idata` section: an import descriptor for `KERNEL32.dll`
/// naming `imports`, a TLS directory with a callback array when `tls`, and the DLL flag and an
/// entry point (`DllMain`) when `dll`.
pub fn pe_image(dll: bool, imports: &[&str], tls: bool) -> Vec<u8> {
    const SECT_RVA: u32 = 0x1000;
    const SECT_RAW: usize = 0x200;
    const IMAGE_BASE: u64 = 0x1_8000_0000;
    // Section layout (offsets relative to the section).
    let ilt = 0x40usize;
    let iat = ilt + 8 * (imports.len() + 1);
    let mut names = iat + 8 * (imports.len() + 1);
    let mut sect = vec![0u8; 0x400];
    let mut name_rvas = Vec::new();
    for imp in imports {
        name_rvas.push(SECT_RVA + names as u32);
        // hint (2 bytes, zero) then the name
        sect[names + 2..names + 2 + imp.len()].copy_from_slice(imp.as_bytes());
        names += (2 + imp.len() + 1).next_multiple_of(2);
    }
    let dll_name = names;
    sect[dll_name..dll_name + 12].copy_from_slice(b"KERNEL32.dll");
    let tls_at = (dll_name + 16).next_multiple_of(8);
    let callbacks_at = tls_at + 40;
    for (i, rva) in name_rvas.iter().enumerate() {
        sect[ilt + 8 * i..ilt + 8 * i + 8].copy_from_slice(&u64::from(*rva).to_le_bytes());
        sect[iat + 8 * i..iat + 8 * i + 8].copy_from_slice(&u64::from(*rva).to_le_bytes());
    }
    // Import descriptor: OriginalFirstThunk, TimeDateStamp, ForwarderChain, Name, FirstThunk.
    let d = [
        SECT_RVA + ilt as u32,
        0,
        0,
        SECT_RVA + dll_name as u32,
        SECT_RVA + iat as u32,
    ];
    for (i, w) in d.iter().enumerate() {
        sect[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
    }
    if tls {
        let cb = IMAGE_BASE + u64::from(SECT_RVA) + callbacks_at as u64;
        sect[tls_at + 24..tls_at + 32].copy_from_slice(&cb.to_le_bytes());
        sect[callbacks_at..callbacks_at + 8]
            .copy_from_slice(&(IMAGE_BASE + u64::from(SECT_RVA)).to_le_bytes());
    }

    let mut v = vec![0u8; 0x40];
    v[..2].copy_from_slice(b"MZ");
    v[0x3c..0x40].copy_from_slice(&0x40u32.to_le_bytes());
    v.extend_from_slice(b"PE\0\0");
    u16le(&mut v, 0x8664);
    u16le(&mut v, 1);
    u32le(&mut v, 0);
    u32le(&mut v, 0);
    u32le(&mut v, 0);
    u16le(&mut v, 240);
    u16le(&mut v, if dll { 0x2022 } else { 0x0022 });
    // Optional header (PE32+).
    u16le(&mut v, 0x20b);
    v.extend_from_slice(&[14, 0]);
    u32le(&mut v, 0);
    u32le(&mut v, 0x400);
    u32le(&mut v, 0);
    u32le(&mut v, if dll { SECT_RVA } else { SECT_RVA + 0x10 });
    u32le(&mut v, SECT_RVA);
    u64le(&mut v, IMAGE_BASE);
    u32le(&mut v, 0x1000);
    u32le(&mut v, 0x200);
    for x in [6u16, 0, 0, 0, 6, 0] {
        u16le(&mut v, x);
    }
    u32le(&mut v, 0);
    u32le(&mut v, 0x2000);
    u32le(&mut v, SECT_RAW as u32);
    u32le(&mut v, 0);
    u16le(&mut v, 2);
    u16le(&mut v, 0x160);
    for x in [0x10_0000u64, 0x1000, 0x10_0000, 0x1000] {
        u64le(&mut v, x);
    }
    u32le(&mut v, 0);
    u32le(&mut v, 16);
    for i in 0..16 {
        let (va, size) = match i {
            1 => (SECT_RVA, 40),
            9 if tls => (SECT_RVA + tls_at as u32, 40),
            _ => (0, 0),
        };
        u32le(&mut v, va);
        u32le(&mut v, size);
    }
    // Section header.
    v.extend_from_slice(b".idata\0\0");
    u32le(&mut v, sect.len() as u32);
    u32le(&mut v, SECT_RVA);
    u32le(&mut v, sect.len() as u32);
    u32le(&mut v, SECT_RAW as u32);
    u32le(&mut v, 0);
    u32le(&mut v, 0);
    u16le(&mut v, 0);
    u16le(&mut v, 0);
    u32le(&mut v, 0xc000_0040);
    v.resize(SECT_RAW, 0);
    v.extend_from_slice(&sect);
    v
}

/// Compiles `source` into a shared library with the C compiler (`cc`, or `$CC`); `None` when
/// no compiler is installed (the callers say so and stop, as issue 31 allows for this test).
pub fn cc_shared(source: &str) -> Option<Vec<u8>> {
    let dir = tempfile::tempdir().ok()?;
    let c = dir.path().join("lib.c");
    let so = dir.path().join("lib.so");
    std::fs::write(&c, source).ok()?;
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let status = std::process::Command::new(cc)
        .args(["-shared", "-fPIC", "-O0", "-o"])
        .arg(&so)
        .arg(&c)
        .status()
        .ok()?;
    if !status.success() {
        return None;
    }
    std::fs::read(&so).ok()
}

/// A library whose constructor runs `system` when it is loaded.
pub const CONSTRUCTOR_SYSTEM_C: &str = "#include <stdlib.h>\n\
__attribute__((constructor)) static void setup(void) { system(\"id > /tmp/modelgate-test\"); }\n\
int add(int a, int b) { return a + b; }\n";

/// The same library without the constructor (it still imports `system`, called from `run`).
pub const PLAIN_SYSTEM_C: &str = "#include <stdlib.h>\n\
int run(const char *c) { return system(c); }\n\
int add(int a, int b) { return a + b; }\n";

/// A library that neither has a constructor nor imports anything of note.
pub const PLAIN_C: &str = "int add(int a, int b) { return a + b; }\n";
