//! The object-file reader on byte-exact ELF, Mach-O and PE images from
//! `tests/support/native.rs` (the ELF ones checked against the C compiler's output where one
//! works), then on truncated and hostile variants of each.

use super::*;

#[path = "../../../tests/support/native.rs"]
pub(crate) mod build;

fn limits() -> Limits {
    Limits {
        max_symbols: 10_000,
    }
}

fn notable(f: &NativeFacts) -> Vec<(String, ImportClass)> {
    f.all_notable()
        .into_iter()
        .map(|n| (n.name.clone(), n.class))
        .collect()
}

#[test]
fn an_elf_library_with_a_constructor_calling_system() {
    let evil = build::elf_constructor_system();
    let (f, problems) = inspect(&evil, &limits());
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(f.format, "elf");
    assert_eq!(f.kind, "library");
    assert!(!f.architecture.is_empty());
    assert!(f.has_initialiser(), "{f:?}");
    assert!(
        f.initialisers[0].starts_with(".init_array (1 entry)"),
        "{f:?}"
    );
    assert_eq!(notable(&f), [("system".to_string(), ImportClass::Process)]);
    assert!(f.needed.iter().any(|n| n.starts_with("libc")), "{f:?}");

    let plain = build::elf_plain_system();
    let (f, _) = inspect(&plain, &limits());
    assert!(!f.has_initialiser(), "toolchain entries only: {f:?}");
    assert_eq!(notable(&f), [("system".to_string(), ImportClass::Process)]);

    let clean = build::elf_plain();
    let (f, _) = inspect(&clean, &limits());
    assert!(!f.has_initialiser() && notable(&f).is_empty(), "{f:?}");
}

/// The byte-built libraries above stand for what `cc -shared` makes of the three C sources:
/// where a compiler works, its output must read the same (a missing compiler fails under `CI`).
#[test]
fn compiled_libraries_read_like_their_byte_built_twins() {
    for (source, built) in [
        (build::CONSTRUCTOR_SYSTEM_C, build::elf_constructor_system()),
        (build::PLAIN_SYSTEM_C, build::elf_plain_system()),
        (build::PLAIN_C, build::elf_plain()),
    ] {
        let Some(compiled) = build::cc_or_fail_under_ci(source) else {
            return;
        };
        let (c, problems) = inspect(&compiled, &limits());
        assert!(problems.is_empty(), "{problems:?}");
        let (b, problems) = inspect(&built, &limits());
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(
            (c.format, &c.kind, &c.architecture, c.bits),
            (b.format, &b.kind, &b.architecture, b.bits)
        );
        assert_eq!(c.initialisers, b.initialisers, "{source}");
        assert_eq!(notable(&c), notable(&b), "{source}");
        assert_eq!(c.needed, b.needed, "{source}");
    }
}

#[test]
fn truncated_and_hostile_elf_is_a_problem_not_a_panic() {
    let evil = build::elf_constructor_system();
    for n in [0, 4, 16, 63, 64, 200, evil.len() / 2, evil.len() - 1] {
        let (_, problems) = inspect(&evil[..n], &limits());
        assert!(!problems.is_empty(), "cut at {n}");
    }
    // e_shoff (64-bit little-endian, offset 0x28) past the end of the file.
    let mut far = evil.clone();
    far[0x28..0x30].copy_from_slice(&u64::MAX.to_le_bytes());
    let (_, problems) = inspect(&far, &limits());
    assert!(
        problems.iter().any(|p| p.code == "unreadable-object"),
        "{problems:?}"
    );
    // A section count (e_shnum at 0x3c) larger than the table.
    let mut many = evil.clone();
    many[0x3c..0x3e].copy_from_slice(&u16::MAX.to_le_bytes());
    let (_, problems) = inspect(&many, &limits());
    assert!(!problems.is_empty());
}

#[test]
fn symbols_past_the_limit_are_a_limit_problem() {
    let evil = build::elf_constructor_system();
    let (f, problems) = inspect(&evil, &Limits { max_symbols: 1 });
    assert_eq!(f.imports_read, 1);
    assert!(
        problems
            .iter()
            .any(|p| p.kind == ProblemKind::LimitExceeded && p.code == "native_symbols")
    );
}

#[test]
fn a_thin_macho_dylib_with_init_funcs_and_system() {
    let bytes = build::macho_dylib(2, &["_system", "_printf"], true);
    let (f, problems) = inspect(&bytes, &limits());
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(
        (f.format, f.kind.as_str(), f.architecture.as_str(), f.bits),
        ("mach-o", "library", "x86_64", Some(64))
    );
    assert_eq!(
        f.initialisers,
        ["__mod_init_func (2 entries)", "LC_ROUTINES"]
    );
    assert_eq!(f.imports_read, 2);
    assert_eq!(notable(&f), [("_system".to_string(), ImportClass::Process)]);
    let (f, _) = inspect(&build::macho_dylib(0, &["_dlopen"], false), &limits());
    assert!(!f.has_initialiser());
    assert_eq!(notable(&f), [("_dlopen".to_string(), ImportClass::Load)]);
}

#[test]
fn a_fat_macho_reports_each_slice() {
    let fat = build::macho_fat(&[
        build::macho_dylib(0, &["_printf"], false),
        build::macho_dylib(1, &["_execve"], false),
    ]);
    assert_eq!(
        crate::classify::native_format(&fat),
        Some(crate::classify::Format::Macho)
    );
    let (f, problems) = inspect(&fat, &limits());
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!((f.format, f.kind.as_str()), ("mach-o-fat", "library"));
    assert_eq!(f.slices.len(), 2);
    assert!(f.has_initialiser());
    assert_eq!(notable(&f), [("_execve".to_string(), ImportClass::Process)]);
}

#[test]
fn hostile_macho_counts_and_offsets_are_problems() {
    let thin = build::macho_dylib(2, &["_system"], false);
    // The symbol table starts after the headers and the two init pointers.
    let sym_off = 32 + 72 + 80 + 24 + 16;
    for n in [8, 31, 32, 100, 200, sym_off + 4] {
        let (_, problems) = inspect(&thin[..n], &limits());
        assert!(!problems.is_empty(), "thin cut at {n}");
    }
    // ncmds (offset 16) far beyond the commands.
    let mut cmds = thin.clone();
    cmds[16..20].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(!inspect(&cmds, &limits()).1.is_empty());
    // The symbol table's offset (LC_SYMTAB symoff) past the end.
    let symtab = 32 + 72 + 80;
    let mut syms = thin.clone();
    syms[symtab + 8..symtab + 12].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(!inspect(&syms, &limits()).1.is_empty());
    // A fat header whose slice lies past the end, and one with too many slices.
    let mut fat = build::macho_fat(std::slice::from_ref(&thin));
    fat[16..20].copy_from_slice(&0x7fff_0000u32.to_be_bytes());
    assert!(!inspect(&fat, &limits()).1.is_empty());
    let mut many = build::macho_fat(std::slice::from_ref(&thin));
    many[4..8].copy_from_slice(&40u32.to_be_bytes());
    assert!(!inspect(&many, &limits()).1.is_empty());
    // A fat file whose slice is itself fat.
    let nested = build::macho_fat(&[build::macho_fat(&[thin])]);
    assert!(
        inspect(&nested, &limits())
            .1
            .iter()
            .any(|p| p.code == "nested-fat")
    );
}

#[test]
fn a_pe_dll_with_tls_callbacks_importing_create_process() {
    let dll = build::pe_image(
        true,
        &["CreateProcessA", "GetTickCount", "LoadLibraryW"],
        true,
    );
    assert_eq!(
        crate::classify::native_format(&dll),
        Some(crate::classify::Format::Pe)
    );
    let (f, problems) = inspect(&dll, &limits());
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(
        (f.format, f.kind.as_str(), f.architecture.as_str()),
        ("pe", "library", "x86_64")
    );
    assert_eq!(
        f.initialisers,
        ["DllMain entry point at RVA 0x1000", "TLS callbacks"]
    );
    assert_eq!(f.needed, ["KERNEL32.dll"]);
    assert_eq!(
        notable(&f),
        [
            ("CreateProcessA".to_string(), ImportClass::Process),
            ("LoadLibraryW".to_string(), ImportClass::Load)
        ]
    );
    let (exe, _) = inspect(&build::pe_image(false, &["GetTickCount"], false), &limits());
    assert_eq!(exe.kind, "executable");
    assert!(
        !exe.has_initialiser() && notable(&exe).is_empty(),
        "{exe:?}"
    );
}

#[test]
fn hostile_pe_counts_and_offsets_are_problems() {
    let dll = build::pe_image(true, &["WinExec"], true);
    for n in [0x40, 0x80, 0x170, 0x200, 0x300] {
        let (_, problems) = inspect(&dll[..n], &limits());
        assert!(!problems.is_empty(), "cut at {n}");
    }
    // The import directory's RVA outside every section.
    let import_dir = 0x40 + 4 + 20 + 112 + 8;
    let mut far = dll.clone();
    far[import_dir..import_dir + 4].copy_from_slice(&0x7fff_0000u32.to_le_bytes());
    assert!(!inspect(&far, &limits()).1.is_empty());
    // e_lfanew past the end.
    let mut lfanew = dll.clone();
    lfanew[0x3c..0x40].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(!inspect(&lfanew, &limits()).1.is_empty());
    // A section table count beyond the headers.
    let mut sections = dll;
    sections[0x46..0x48].copy_from_slice(&u16::MAX.to_le_bytes());
    assert!(!inspect(&sections, &limits()).1.is_empty());
}

#[test]
fn import_names_are_classified_with_platform_decorations() {
    assert_eq!(classify_import("system"), Some(ImportClass::Process));
    assert_eq!(classify_import("_system"), Some(ImportClass::Process));
    assert_eq!(
        classify_import("system@GLIBC_2.2.5"),
        Some(ImportClass::Process)
    );
    assert_eq!(
        classify_import("ShellExecuteExW"),
        Some(ImportClass::Process)
    );
    assert_eq!(classify_import("dlopen"), Some(ImportClass::Load));
    assert_eq!(classify_import("systemd_notify"), None);
    assert_eq!(classify_import("printf"), None);
}

#[test]
fn a_fat_macho_whose_slice_is_the_whole_file_is_a_problem_not_a_recursion() {
    // Issue 37: a fat header whose one slice starts at offset 0 and spans the file is that fat
    // file again; reading the slice as an object must not recurse into it (once per slice, as
    // many levels as the stack allows).
    let mut fat = build::macho_fat(&[build::macho_dylib(0, &["_system"], false)]);
    let len = u32::try_from(fat.len()).unwrap();
    fat[16..20].copy_from_slice(&0u32.to_be_bytes());
    fat[20..24].copy_from_slice(&len.to_be_bytes());
    let (f, problems) = inspect(&fat, &limits());
    assert_eq!(f.format, "mach-o-fat");
    assert!(f.slices.is_empty(), "{f:?}");
    assert!(
        problems.iter().any(|p| p.code == "nested-fat"),
        "{problems:?}"
    );
}
