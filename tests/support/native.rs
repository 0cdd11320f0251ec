//! Byte-exact native object files for tests (issues 31 and 37): an x86_64 ELF shared object, a
//! thin 64-bit Mach-O dylib, a fat Mach-O wrapping slices, a PE32+ image, and (to check the ELF
//! builder against real toolchain output) a shared library compiled with the C compiler.
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

/// A little-endian x86_64 ELF shared object (`ET_DYN`, no `PT_INTERP`) laid out as gcc and GNU
/// ld lay out `cc -shared -fPIC` output, built byte by byte so that ELF parsing is tested on
/// every machine (issue 37: the tests used to stop when no C compiler worked).
///
/// - `.dynamic`: one `DT_NEEDED` per `needed` (names in `.dynstr`), `DT_INIT` at the `.init`
///   section (the toolchain's own, which the reader must not report), `DT_INIT_ARRAY`/`SZ`,
///   `DT_FINI_ARRAY`/`SZ`, `DT_STRTAB`, `DT_SYMTAB`, `DT_STRSZ`, `DT_SYMENT`, `DT_NULL`.
/// - `.dynsym`: crtbegin's weak undefined symbols and `__cxa_finalize`, then `imports`
///   (undefined global functions, such as `system` or `dlopen`), then `exports` (defined in
///   `.text`).
/// - `.init_array`: crtbegin's `frame_dummy` first, then one entry per `constructors` name
///   (what `__attribute__((constructor))` adds); `.fini_array`: `__do_global_dtors_aux`.
/// - `.symtab`/`.strtab`: the local functions (`frame_dummy`, `__do_global_dtors_aux`, the
///   constructors) and the exports, so entries can be named.
///
/// Section headers come last, as the linker writes them, so any cut of the file breaks them.
/// Addresses equal file offsets (one `PT_LOAD` maps the file as it is).
pub fn elf_shared(
    needed: &[&str],
    imports: &[&str],
    exports: &[&str],
    constructors: &[&str],
) -> Vec<u8> {
    const SHT_PROGBITS: u32 = 1;
    const SHT_SYMTAB: u32 = 2;
    const SHT_STRTAB: u32 = 3;
    const SHT_DYNAMIC: u32 = 6;
    const SHT_DYNSYM: u32 = 11;
    const SHT_INIT_ARRAY: u32 = 14;
    const SHT_FINI_ARRAY: u32 = 15;
    const A: u64 = 0x2; // SHF_ALLOC
    const WA: u64 = 0x3; // SHF_WRITE | SHF_ALLOC
    const AX: u64 = 0x6; // SHF_ALLOC | SHF_EXECINSTR
    const TOOLCHAIN_WEAK: [&str; 3] = [
        "_ITM_deregisterTMCloneTable",
        "__gmon_start__",
        "_ITM_registerTMCloneTable",
    ];

    /// A string table: offset of each added name.
    fn add(table: &mut Vec<u8>, name: &str) -> u32 {
        if table.is_empty() {
            table.push(0);
        }
        let at = table.len() as u32;
        table.extend_from_slice(name.as_bytes());
        table.push(0);
        at
    }
    fn sym(v: &mut Vec<u8>, name: u32, info: u8, shndx: u16, value: u64, size: u64) {
        u32le(v, name);
        v.push(info);
        v.push(0);
        u16le(v, shndx);
        u64le(v, value);
        u64le(v, size);
    }
    fn align(v: &mut Vec<u8>, to: usize) -> usize {
        v.resize(v.len().next_multiple_of(to), 0);
        v.len()
    }
    // Section indices (0 is the null section; the order of `sections` below): .dynsym 1,
    // .dynstr 2, .init 3, .text 4, .init_array 5, .fini_array 6, .dynamic 7, .symtab 8,
    // .strtab 9, .shstrtab 10.
    const DYNSTR: u16 = 2;
    const TEXT: u16 = 4;
    const STRTAB: u16 = 9;
    const SHSTRTAB: u16 = 10;
    const GLOBAL_FUNC: u8 = 0x12; // STB_GLOBAL, STT_FUNC
    const LOCAL_FUNC: u8 = 0x02; // STB_LOCAL, STT_FUNC
    const WEAK_NOTYPE: u8 = 0x20; // STB_WEAK, STT_NOTYPE
    const WEAK_FUNC: u8 = 0x22; // STB_WEAK, STT_FUNC

    // Header and program headers come first; their contents are filled in at the end.
    let mut v = vec![0u8; 64 + 2 * 56];

    // .text layout: 16 bytes per function (a `ret` then padding), in this order.
    let mut funcs: Vec<&str> = vec!["__do_global_dtors_aux", "frame_dummy"];
    funcs.extend_from_slice(constructors);
    funcs.extend_from_slice(exports);

    // .dynstr and .dynsym.
    let mut dynstr = Vec::new();
    let needed_at: Vec<u32> = needed.iter().map(|n| add(&mut dynstr, n)).collect();
    let mut dyn_entries = Vec::new();
    for name in TOOLCHAIN_WEAK {
        dyn_entries.push((add(&mut dynstr, name), WEAK_NOTYPE, 0u16, None));
    }
    dyn_entries.push((add(&mut dynstr, "__cxa_finalize"), WEAK_FUNC, 0, None));
    for name in imports {
        dyn_entries.push((add(&mut dynstr, name), GLOBAL_FUNC, 0, None));
    }
    for name in exports {
        dyn_entries.push((add(&mut dynstr, name), GLOBAL_FUNC, TEXT, Some(*name)));
    }

    let dynsym_off = align(&mut v, 8);
    // Written below once .text's address is known; reserve the space now.
    v.resize(dynsym_off + 24 * (dyn_entries.len() + 1), 0);
    let dynstr_off = v.len();
    v.extend_from_slice(&dynstr);
    let init_off = align(&mut v, 16);
    v.extend_from_slice(&[0xf3, 0x0f, 0x1e, 0xfa, 0xc3]); // endbr64; ret
    let text_off = align(&mut v, 16);
    for _ in &funcs {
        let at = v.len();
        v.push(0xc3); // ret
        v.resize(at + 16, 0xcc);
    }
    let func_addr = |name: &str| -> u64 {
        let i = funcs.iter().position(|f| *f == name).unwrap();
        (text_off + 16 * i) as u64
    };
    for (i, (name, info, shndx, def)) in dyn_entries.iter().enumerate() {
        let mut s = Vec::new();
        let value = def.map_or(0, func_addr);
        sym(
            &mut s,
            *name,
            *info,
            *shndx,
            value,
            if def.is_some() { 16 } else { 0 },
        );
        let at = dynsym_off + 24 * (i + 1);
        v[at..at + 24].copy_from_slice(&s);
    }

    let init_array_off = align(&mut v, 8);
    u64le(&mut v, func_addr("frame_dummy"));
    for c in constructors {
        u64le(&mut v, func_addr(c));
    }
    let init_array_size = v.len() - init_array_off;
    let fini_array_off = v.len();
    u64le(&mut v, func_addr("__do_global_dtors_aux"));

    let dynamic_off = v.len();
    let mut tags: Vec<(u64, u64)> = needed_at.iter().map(|&n| (1, u64::from(n))).collect();
    tags.extend([
        (12, init_off as u64),        // DT_INIT
        (25, init_array_off as u64),  // DT_INIT_ARRAY
        (27, init_array_size as u64), // DT_INIT_ARRAYSZ
        (26, fini_array_off as u64),  // DT_FINI_ARRAY
        (28, 8),                      // DT_FINI_ARRAYSZ
        (5, dynstr_off as u64),       // DT_STRTAB
        (6, dynsym_off as u64),       // DT_SYMTAB
        (10, dynstr.len() as u64),    // DT_STRSZ
        (11, 24),                     // DT_SYMENT
        (0, 0),                       // DT_NULL
    ]);
    for (tag, val) in &tags {
        u64le(&mut v, *tag);
        u64le(&mut v, *val);
    }
    let dynamic_size = v.len() - dynamic_off;
    let load_end = v.len();

    // .symtab: locals first (the toolchain's and the constructors), then the exports.
    let mut strtab = Vec::new();
    let mut symtab = vec![0u8; 24];
    let locals = 1 + 2 + constructors.len();
    for name in ["__do_global_dtors_aux", "frame_dummy"]
        .into_iter()
        .chain(constructors.iter().copied())
    {
        let n = add(&mut strtab, name);
        sym(&mut symtab, n, LOCAL_FUNC, TEXT, func_addr(name), 16);
    }
    for name in exports {
        let n = add(&mut strtab, name);
        sym(&mut symtab, n, GLOBAL_FUNC, TEXT, func_addr(name), 16);
    }
    for name in imports {
        let n = add(&mut strtab, name);
        sym(&mut symtab, n, GLOBAL_FUNC, 0, 0, 0);
    }
    if strtab.is_empty() {
        strtab.push(0);
    }
    let symtab_off = align(&mut v, 8);
    v.extend_from_slice(&symtab);
    let strtab_off = v.len();
    v.extend_from_slice(&strtab);

    let mut shstrtab = Vec::new();
    let names: Vec<u32> = [
        ".dynsym",
        ".dynstr",
        ".init",
        ".text",
        ".init_array",
        ".fini_array",
        ".dynamic",
        ".symtab",
        ".strtab",
        ".shstrtab",
    ]
    .iter()
    .map(|n| add(&mut shstrtab, n))
    .collect();
    let shstrtab_off = v.len();
    v.extend_from_slice(&shstrtab);

    /// One section header: name, type, flags, offset, size, link, info, align, entsize.
    type Shdr = (u32, u32, u64, usize, usize, u16, u32, u64, u64);
    let sections: [Shdr; 10] = [
        (
            names[0],
            SHT_DYNSYM,
            A,
            dynsym_off,
            24 * (dyn_entries.len() + 1),
            DYNSTR,
            1,
            8,
            24,
        ),
        (
            names[1],
            SHT_STRTAB,
            A,
            dynstr_off,
            dynstr.len(),
            0,
            0,
            1,
            0,
        ),
        (names[2], SHT_PROGBITS, AX, init_off, 5, 0, 0, 4, 0),
        (
            names[3],
            SHT_PROGBITS,
            AX,
            text_off,
            16 * funcs.len(),
            0,
            0,
            16,
            0,
        ),
        (
            names[4],
            SHT_INIT_ARRAY,
            WA,
            init_array_off,
            init_array_size,
            0,
            0,
            8,
            8,
        ),
        (names[5], SHT_FINI_ARRAY, WA, fini_array_off, 8, 0, 0, 8, 8),
        (
            names[6],
            SHT_DYNAMIC,
            WA,
            dynamic_off,
            dynamic_size,
            DYNSTR,
            0,
            8,
            16,
        ),
        (
            names[7],
            SHT_SYMTAB,
            0,
            symtab_off,
            symtab.len(),
            STRTAB,
            locals as u32,
            8,
            24,
        ),
        (
            names[8],
            SHT_STRTAB,
            0,
            strtab_off,
            strtab.len(),
            0,
            0,
            1,
            0,
        ),
        (
            names[9],
            SHT_STRTAB,
            0,
            shstrtab_off,
            shstrtab.len(),
            0,
            0,
            1,
            0,
        ),
    ];
    let shoff = align(&mut v, 8);
    v.extend_from_slice(&[0u8; 64]);
    for (name, ty, flags, off, size, link, info, al, entsize) in &sections {
        let addr = if *flags & A != 0 { *off as u64 } else { 0 };
        u32le(&mut v, *name);
        u32le(&mut v, *ty);
        u64le(&mut v, *flags);
        u64le(&mut v, addr);
        u64le(&mut v, *off as u64);
        u64le(&mut v, *size as u64);
        u32le(&mut v, u32::from(*link));
        u32le(&mut v, *info);
        u64le(&mut v, *al);
        u64le(&mut v, *entsize);
    }

    // ELF header.
    let mut h = Vec::new();
    h.extend_from_slice(b"\x7fELF");
    h.extend_from_slice(&[2, 1, 1, 0]); // ELFCLASS64, ELFDATA2LSB, EV_CURRENT, ELFOSABI_NONE
    h.extend_from_slice(&[0; 8]);
    u16le(&mut h, 3); // ET_DYN
    u16le(&mut h, 62); // EM_X86_64
    u32le(&mut h, 1);
    u64le(&mut h, 0); // e_entry
    u64le(&mut h, 64); // e_phoff
    u64le(&mut h, shoff as u64);
    u32le(&mut h, 0);
    u16le(&mut h, 64);
    u16le(&mut h, 56);
    u16le(&mut h, 2);
    u16le(&mut h, 64);
    u16le(&mut h, sections.len() as u16 + 1);
    u16le(&mut h, SHSTRTAB);
    // PT_LOAD (the whole image, RWX for brevity), then PT_DYNAMIC.
    for (ty, flags, off, size, al) in [
        (1u32, 7u32, 0usize, load_end, 0x1000u64),
        (2, 6, dynamic_off, dynamic_size, 8),
    ] {
        u32le(&mut h, ty);
        u32le(&mut h, flags);
        u64le(&mut h, off as u64);
        u64le(&mut h, off as u64);
        u64le(&mut h, off as u64);
        u64le(&mut h, size as u64);
        u64le(&mut h, size as u64);
        u64le(&mut h, al);
    }
    v[..h.len()].copy_from_slice(&h);
    v
}

/// What `cc -shared` makes of [`CONSTRUCTOR_SYSTEM_C`]: a constructor `setup` calling `system`.
pub fn elf_constructor_system() -> Vec<u8> {
    elf_shared(&["libc.so.6"], &["system"], &["add"], &["setup"])
}

/// What `cc -shared` makes of [`PLAIN_SYSTEM_C`]: imports `system`, toolchain initialisers only.
pub fn elf_plain_system() -> Vec<u8> {
    elf_shared(&["libc.so.6"], &["system"], &["run", "add"], &[])
}

/// What `cc -shared` makes of [`PLAIN_C`]: nothing of note.
pub fn elf_plain() -> Vec<u8> {
    elf_shared(&[], &[], &["add"], &[])
}

/// Compiles `source` into a shared library with the C compiler (`cc`, or `$CC`); `None` when
/// no compiler is installed (a test that needs it fails when `CI` is set, see
/// [`cc_or_fail_under_ci`]).
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

/// [`cc_shared`] for a test that checks the reader on real compiler output; `None` where no C
/// compiler works, which fails the test when the `CI` environment variable is set (a CI machine
/// must run it; a developer machine without a compiler still runs the byte-built twins).
pub fn cc_or_fail_under_ci(source: &str) -> Option<Vec<u8>> {
    let lib = cc_shared(source);
    assert!(
        lib.is_some() || std::env::var_os("CI").is_none(),
        "no working C compiler (cc, or $CC) and CI is set: the compiled-library check must run"
    );
    lib
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
