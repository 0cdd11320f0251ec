//! Native object files (ELF, Mach-O thin and fat, PE): what they are and what they run when
//! loaded (issue 31).
//!
//! A model repository can ship a shared library its modeling code loads (`ctypes.CDLL`,
//! `torch.ops.load_library`) or an executable. Loading a library runs its initialisers before
//! any function is called, so the facts that matter are: the format and architecture, whether
//! it is an executable or a library, its initialisers, and the imported symbols that start
//! processes or load more code.
//!
//! The format parsing is the `object` crate's (gimli-rs/object: the reader behind `backtrace`,
//! `addr2line` and the Rust standard library's symbolizer, fuzzed upstream), chosen over `goblin`
//! because it reads lazily from a byte slice, returns errors instead of panicking on bad offsets,
//! and exposes the typed ELF dynamic table, Mach-O load commands and PE data directories this
//! module needs. What this module bounds itself: the bytes handed to it (`native_bytes`, read
//! from the one sequential read, never more), the imported symbols walked (`native_symbols`),
//! the slices of a fat Mach-O ([`MAX_FAT_SLICES`]) and the initialiser entries counted
//! ([`MAX_INIT_ENTRIES`]); every offset and count the crate reads is checked by it against the
//! slice.
//!
//! Pure: bytes in, [`NativeFacts`] and [`Problem`]s out; no `crate::` imports beyond the
//! problem type, so the fuzz target runs it alone.

use std::collections::BTreeSet;

use object::read::elf::{Dyn, ElfFile, FileHeader, ProgramHeader, SectionHeader};
use object::read::macho::{FatArch, MachHeader, MachOFile};
use object::read::pe::{ImageNtHeaders, PeFile};
use object::{Endian, Object, ObjectSection, ObjectSymbol, elf, macho, pe};
use serde::Serialize;

use crate::model::problem::{Problem, ProblemKind};

/// Slices of a fat Mach-O read (real universal binaries have two or three).
pub const MAX_FAT_SLICES: usize = 16;

/// Initialiser table entries looked at per table.
pub const MAX_INIT_ENTRIES: usize = 4096;

/// Bounds for one file, from the policy's limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Imported symbols read (`native_symbols`).
    pub max_symbols: usize,
}

impl From<&crate::model::limits::Limits> for Limits {
    fn from(l: &crate::model::limits::Limits) -> Self {
        Limits {
            max_symbols: crate::model::limits::usize_of(l.native_symbols),
        }
    }
}

// The symbol table is the capability table's (one table for every code judge, issue 30/31).
pub use crate::knowledge::capabilities::{ImportClass, NOTABLE_IMPORTS, classify_import};

/// An imported symbol of note.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct NotableImport {
    /// The symbol as the file names it.
    pub name: String,
    /// What it does.
    pub class: ImportClass,
}

/// The facts of one object file (or one slice of a fat Mach-O).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct NativeFacts {
    /// `elf`, `mach-o`, `mach-o-fat` or `pe`.
    pub format: &'static str,
    /// The CPU architecture (`x86_64`, `aarch64`, ...).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub architecture: String,
    /// 32 or 64.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bits: Option<u8>,
    /// `executable`, `library`, `object`, `core` or `unknown`.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// The initialisers the loader runs before anything is called, beyond the toolchain's own.
    pub initialisers: Vec<String>,
    /// Imported symbols read.
    pub imports_read: usize,
    /// Imports that run processes or load code.
    pub notable_imports: Vec<NotableImport>,
    /// Libraries it links against (ELF `DT_NEEDED`, Mach-O dylibs, PE DLLs), first 64.
    pub needed: Vec<String>,
    /// The slices of a fat Mach-O.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub slices: Vec<NativeFacts>,
}

impl NativeFacts {
    /// Whether this file (or any slice) has an initialiser.
    pub fn has_initialiser(&self) -> bool {
        !self.initialisers.is_empty() || self.slices.iter().any(NativeFacts::has_initialiser)
    }

    /// Every notable import of this file and its slices.
    pub fn all_notable(&self) -> BTreeSet<&NotableImport> {
        let mut out: BTreeSet<&NotableImport> = self.notable_imports.iter().collect();
        for s in &self.slices {
            out.extend(s.all_notable());
        }
        out
    }
}

fn malformed(code: &'static str, message: impl Into<String>) -> Problem {
    Problem::new(ProblemKind::Malformed, code, message, None)
}

fn object_error(what: &str, e: object::read::Error) -> Problem {
    malformed(
        "unreadable-object",
        format!("{what}: {e} (the object file's headers are inconsistent)"),
    )
}

/// Reads the object file in `data`. A file the crate cannot parse is one `Malformed` problem
/// (what the loader would also refuse); what was read before the error stays in the facts.
pub fn inspect(data: &[u8], limits: &Limits) -> (NativeFacts, Vec<Problem>) {
    let mut problems = Vec::new();
    let facts = match object::FileKind::parse(data) {
        Ok(object::FileKind::Elf32) => {
            elf_facts::<elf::FileHeader32<object::Endianness>>(data, limits, &mut problems)
        }
        Ok(object::FileKind::Elf64) => {
            elf_facts::<elf::FileHeader64<object::Endianness>>(data, limits, &mut problems)
        }
        Ok(object::FileKind::MachO32) => {
            macho_facts::<macho::MachHeader32<object::Endianness>>(data, limits, &mut problems)
        }
        Ok(object::FileKind::MachO64) => {
            macho_facts::<macho::MachHeader64<object::Endianness>>(data, limits, &mut problems)
        }
        Ok(object::FileKind::MachOFat32) => {
            fat_facts::<macho::FatArch32>(data, limits, &mut problems)
        }
        Ok(object::FileKind::MachOFat64) => {
            fat_facts::<macho::FatArch64>(data, limits, &mut problems)
        }
        Ok(object::FileKind::Pe32) => pe_facts::<pe::ImageNtHeaders32>(data, limits, &mut problems),
        Ok(object::FileKind::Pe64) => pe_facts::<pe::ImageNtHeaders64>(data, limits, &mut problems),
        Ok(other) => {
            problems.push(malformed(
                "unsupported-object",
                format!("object file kind {other:?} is not read"),
            ));
            NativeFacts::default()
        }
        Err(e) => {
            problems.push(object_error("not a readable object file", e));
            NativeFacts::default()
        }
    };
    (facts, problems)
}

fn arch_name(a: object::Architecture) -> String {
    format!("{a:?}").to_ascii_lowercase()
}

fn kind_name(k: object::ObjectKind) -> &'static str {
    match k {
        object::ObjectKind::Executable => "executable",
        object::ObjectKind::Dynamic => "library",
        object::ObjectKind::Relocatable => "object",
        object::ObjectKind::Core => "core",
        _ => "unknown",
    }
}

/// Records `name` as imported: counts it and keeps it when notable. `false` once the limit is
/// reached (with the problem recorded).
fn note_import(
    facts: &mut NativeFacts,
    name: &[u8],
    limits: &Limits,
    problems: &mut Vec<Problem>,
) -> bool {
    if facts.imports_read >= limits.max_symbols {
        problems.push(Problem::new(
            ProblemKind::LimitExceeded,
            "native_symbols",
            format!(
                "more than {} imported symbols (native_symbols limit); the rest were not checked",
                limits.max_symbols
            ),
            None,
        ));
        return false;
    }
    facts.imports_read += 1;
    let name = String::from_utf8_lossy(name);
    if let Some(class) = classify_import(&name) {
        let n = NotableImport {
            name: name.into_owned(),
            class,
        };
        if !facts.notable_imports.contains(&n) {
            facts.notable_imports.push(n);
        }
    }
    true
}

fn push_needed(facts: &mut NativeFacts, name: &[u8]) {
    let name = String::from_utf8_lossy(name).into_owned();
    if facts.needed.len() < 64 && !facts.needed.contains(&name) {
        facts.needed.push(name);
    }
}

fn elf_facts<Elf: FileHeader<Endian = object::Endianness>>(
    data: &[u8],
    limits: &Limits,
    problems: &mut Vec<Problem>,
) -> NativeFacts {
    let mut facts = NativeFacts {
        format: "elf",
        ..NativeFacts::default()
    };
    let file = match ElfFile::<Elf>::parse(data) {
        Ok(f) => f,
        Err(e) => {
            problems.push(object_error("ELF headers", e));
            return facts;
        }
    };
    let endian = file.endian();
    facts.architecture = arch_name(file.architecture());
    facts.bits = Some(if file.is_64() { 64 } else { 32 });
    let interp = file
        .elf_program_headers()
        .iter()
        .any(|p| p.p_type(endian) == elf::PT_INTERP);
    facts.kind = match file.kind() {
        // A position-independent executable is ET_DYN with an interpreter.
        object::ObjectKind::Dynamic if interp => "executable",
        k => kind_name(k),
    }
    .to_string();

    // Initialisers: the tables the dynamic loader walks, minus the toolchain's own entry
    // (crtbegin's `frame_dummy` is the first `.init_array` entry of every gcc/clang-linked
    // object that also has crtbegin's `.fini_array` entry, `__do_global_dtors_aux`).
    let ptr = if file.is_64() { 8 } else { 4 };
    let symbol_at = |addr: u64| -> Option<String> {
        file.symbols()
            .take(MAX_INIT_ENTRIES * 16)
            .find(|s| s.address() == addr && s.is_definition())
            .and_then(|s| s.name().ok().map(str::to_string))
    };
    let has_fini = file.section_by_name(".fini_array").is_some();
    let mut init_addr = None;
    for section in file.sections() {
        let name = section.name().unwrap_or_default();
        let sh_type = section.elf_section_header().sh_type(endian);
        if name == ".init" {
            init_addr = Some(section.address());
        }
        let table = match (name, sh_type) {
            (_, elf::SHT_INIT_ARRAY) | (".init_array", _) => ".init_array",
            (_, elf::SHT_PREINIT_ARRAY) | (".preinit_array", _) => ".preinit_array",
            (".ctors", _) => ".ctors",
            _ => continue,
        };
        let Ok(bytes) = section.data() else {
            // SHT_NOBITS or out of bounds: the loader would read nothing either.
            continue;
        };
        let entries: Vec<u64> = bytes
            .chunks_exact(ptr)
            .take(MAX_INIT_ENTRIES)
            .map(|c| {
                let mut b = [0u8; 8];
                if endian.is_little_endian() {
                    b[..ptr].copy_from_slice(c);
                    u64::from_le_bytes(b)
                } else {
                    b[8 - ptr..].copy_from_slice(c);
                    u64::from_be_bytes(b)
                }
            })
            .collect();
        let all_ones = if ptr == 8 {
            u64::MAX
        } else {
            u64::from(u32::MAX)
        };
        let mut user: Vec<u64> = entries
            .iter()
            .copied()
            // `.ctors` is framed by -1 and 0 sentinels.
            .filter(|&v| !(table == ".ctors" && (v == 0 || v == all_ones)))
            .collect();
        if table == ".init_array" && !user.is_empty() {
            match symbol_at(user[0]).as_deref() {
                Some("frame_dummy") => {
                    user.remove(0);
                }
                Some(_) => {}
                None if has_fini => {
                    user.remove(0);
                }
                None => {}
            }
        }
        if !user.is_empty() {
            let named: Vec<String> = user.iter().take(8).filter_map(|&a| symbol_at(a)).collect();
            let mut what = format!(
                "{table} ({} entr{})",
                user.len(),
                if user.len() == 1 { "y" } else { "ies" }
            );
            if !named.is_empty() {
                what = format!("{what}: {}", named.join(", "));
            }
            facts.initialisers.push(what);
        }
    }
    match file.elf_section_table().dynamic(endian, data) {
        Ok(Some((dynamic, link))) => {
            let strings = file.elf_section_table().strings(endian, data, link).ok();
            for d in dynamic.iter().take(MAX_INIT_ENTRIES) {
                let tag = d.d_tag(endian).into();
                let val: u64 = d.d_val(endian).into();
                if tag == u64::from(elf::DT_NULL) {
                    break;
                }
                if tag == u64::from(elf::DT_INIT) && Some(val) != init_addr {
                    // `-Wl,-init,f` points DT_INIT at `f` instead of the `.init` section.
                    let mut what = format!("DT_INIT at {val:#x}");
                    if let Some(n) = symbol_at(val) {
                        what = format!("{what} ({n})");
                    }
                    facts.initialisers.push(what);
                }
                if tag == u64::from(elf::DT_NEEDED)
                    && let Some(s) = strings
                    && let Ok(name) = s.get(u32::try_from(val).unwrap_or(u32::MAX))
                {
                    push_needed(&mut facts, name);
                }
            }
        }
        Ok(None) => {}
        Err(e) => problems.push(object_error("ELF dynamic section", e)),
    }
    for sym in file.dynamic_symbols() {
        if !sym.is_undefined() {
            continue;
        }
        let Ok(name) = sym.name_bytes() else { continue };
        if name.is_empty() {
            continue;
        }
        if !note_import(&mut facts, name, limits, problems) {
            break;
        }
    }
    facts
}

fn macho_facts<Mach: MachHeader<Endian = object::Endianness>>(
    data: &[u8],
    limits: &Limits,
    problems: &mut Vec<Problem>,
) -> NativeFacts {
    let mut facts = NativeFacts {
        format: "mach-o",
        ..NativeFacts::default()
    };
    let file = match MachOFile::<Mach>::parse(data) {
        Ok(f) => f,
        Err(e) => {
            problems.push(object_error("Mach-O headers", e));
            return facts;
        }
    };
    let endian = file.endian();
    facts.architecture = arch_name(file.architecture());
    facts.bits = Some(if file.is_64() { 64 } else { 32 });
    facts.kind = kind_name(file.kind()).to_string();
    for section in file.sections() {
        let object::SectionFlags::MachO { flags } = section.flags() else {
            continue;
        };
        let ty = flags & macho::SECTION_TYPE;
        let (what, each) = match ty {
            macho::S_MOD_INIT_FUNC_POINTERS => {
                ("__mod_init_func", if file.is_64() { 8 } else { 4 })
            }
            macho::S_INIT_FUNC_OFFSETS => ("__init_offsets", 4),
            _ => continue,
        };
        let n = section.size() / each;
        if n > 0 {
            facts.initialisers.push(format!("{what} ({n} entries)"));
        }
    }
    match file.macho_load_commands() {
        Ok(mut commands) => {
            let mut seen = 0usize;
            loop {
                match commands.next() {
                    Ok(Some(cmd)) => {
                        seen += 1;
                        if seen > MAX_INIT_ENTRIES {
                            break;
                        }
                        let c = cmd.cmd();
                        if c == macho::LC_ROUTINES || c == macho::LC_ROUTINES_64 {
                            facts.initialisers.push("LC_ROUTINES".into());
                        }
                        if let Ok(Some(dylib)) = cmd.dylib()
                            && matches!(
                                c,
                                macho::LC_LOAD_DYLIB
                                    | macho::LC_LOAD_WEAK_DYLIB
                                    | macho::LC_REEXPORT_DYLIB
                            )
                            && let Ok(name) = cmd.string(endian, dylib.dylib.name)
                        {
                            push_needed(&mut facts, name);
                        }
                    }
                    Ok(None) => break,
                    Err(e) => {
                        problems.push(object_error("Mach-O load commands", e));
                        break;
                    }
                }
            }
        }
        Err(e) => problems.push(object_error("Mach-O load commands", e)),
    }
    for sym in file.symbols() {
        if !sym.is_undefined() {
            continue;
        }
        let Ok(name) = sym.name_bytes() else { continue };
        if !note_import(&mut facts, name, limits, problems) {
            break;
        }
    }
    facts
}

fn fat_facts<Fat: FatArch>(
    data: &[u8],
    limits: &Limits,
    problems: &mut Vec<Problem>,
) -> NativeFacts {
    let mut facts = NativeFacts {
        format: "mach-o-fat",
        ..NativeFacts::default()
    };
    let fat = match object::read::macho::MachOFatFile::<Fat>::parse(data) {
        Ok(f) => f,
        Err(e) => {
            problems.push(object_error("fat Mach-O header", e));
            return facts;
        }
    };
    if fat.arches().len() > MAX_FAT_SLICES {
        problems.push(malformed(
            "too-many-slices",
            format!(
                "fat Mach-O declares {} architectures; at most {MAX_FAT_SLICES} are read",
                fat.arches().len()
            ),
        ));
    }
    let mut kinds = BTreeSet::new();
    for arch in fat.arches().iter().take(MAX_FAT_SLICES) {
        let slice = match arch.data(data) {
            Ok(s) => s,
            Err(e) => {
                problems.push(object_error("fat Mach-O slice", e));
                continue;
            }
        };
        // A fat file inside a fat file is no image the loader reads. Decided before the slice is
        // read (issue 37): a slice at offset 0 spanning the file is this fat file again, and
        // reading it first would recurse once per level until the stack ran out.
        if matches!(
            object::FileKind::parse(slice),
            Ok(object::FileKind::MachOFat32 | object::FileKind::MachOFat64)
        ) {
            problems.push(malformed("nested-fat", "a fat Mach-O slice is itself fat"));
            continue;
        }
        let (sub, more) = inspect(slice, limits);
        problems.extend(more);
        facts.imports_read += sub.imports_read;
        kinds.insert(sub.kind.clone());
        facts.slices.push(sub);
    }
    facts.architecture = facts
        .slices
        .iter()
        .map(|s| s.architecture.as_str())
        .collect::<Vec<_>>()
        .join(",");
    facts.kind = if kinds.len() == 1 {
        kinds.into_iter().next().unwrap_or_default()
    } else {
        "unknown".into()
    };
    facts
}

fn pe_facts<Pe: ImageNtHeaders>(
    data: &[u8],
    limits: &Limits,
    problems: &mut Vec<Problem>,
) -> NativeFacts {
    use object::LittleEndian as LE;
    use object::read::pe::ImageOptionalHeader;
    let mut facts = NativeFacts {
        format: "pe",
        ..NativeFacts::default()
    };
    let file = match PeFile::<Pe>::parse(data) {
        Ok(f) => f,
        Err(e) => {
            problems.push(object_error("PE headers", e));
            return facts;
        }
    };
    facts.architecture = arch_name(file.architecture());
    facts.bits = Some(if file.is_64() { 64 } else { 32 });
    let characteristics = file.nt_headers().file_header().characteristics.get(LE);
    let dll = characteristics & pe::IMAGE_FILE_DLL != 0;
    facts.kind = if dll {
        "library"
    } else if characteristics & pe::IMAGE_FILE_EXECUTABLE_IMAGE != 0 {
        "executable"
    } else {
        "object"
    }
    .to_string();
    let entry = file.nt_headers().optional_header().address_of_entry_point();
    if dll && entry != 0 {
        facts
            .initialisers
            .push(format!("DllMain entry point at RVA {entry:#x}"));
    }
    // TLS callbacks run before the entry point, in executables and DLLs alike.
    if let Some(dir) = file.data_directory(pe::IMAGE_DIRECTORY_ENTRY_TLS)
        && dir.virtual_address.get(LE) != 0
    {
        let sections = file.section_table();
        match dir.data(data, &sections) {
            Ok(tls) => {
                let (at, len) = if file.is_64() { (24, 8) } else { (12, 4) };
                let callbacks = tls.get(at..at + len).map(|b| {
                    let mut w = [0u8; 8];
                    w[..len].copy_from_slice(b);
                    u64::from_le_bytes(w)
                });
                if callbacks.is_some_and(|c| c != 0) {
                    facts.initialisers.push("TLS callbacks".into());
                }
            }
            Err(e) => problems.push(object_error("PE TLS directory", e)),
        }
    }
    match file.import_table() {
        Ok(Some(table)) => {
            let mut descriptors = match table.descriptors() {
                Ok(d) => d,
                Err(e) => {
                    problems.push(object_error("PE import descriptors", e));
                    return facts;
                }
            };
            'outer: loop {
                let desc = match descriptors.next() {
                    Ok(Some(d)) => d,
                    Ok(None) => break,
                    Err(e) => {
                        problems.push(object_error("PE import descriptor", e));
                        break;
                    }
                };
                if let Ok(name) = table.name(desc.name.get(LE)) {
                    push_needed(&mut facts, name);
                }
                let first = match desc.original_first_thunk.get(LE) {
                    0 => desc.first_thunk.get(LE),
                    t => t,
                };
                let mut thunks = match table.thunks(first) {
                    Ok(t) => t,
                    Err(e) => {
                        problems.push(object_error("PE import thunks", e));
                        continue;
                    }
                };
                loop {
                    let thunk = match thunks.next::<Pe>() {
                        Ok(Some(t)) => t,
                        Ok(None) => break,
                        Err(e) => {
                            problems.push(object_error("PE import thunk", e));
                            break;
                        }
                    };
                    match table.import::<Pe>(thunk) {
                        Ok(object::read::pe::Import::Name(_, name)) => {
                            if !note_import(&mut facts, name, limits, problems) {
                                break 'outer;
                            }
                        }
                        Ok(object::read::pe::Import::Ordinal(_)) => {
                            if !note_import(&mut facts, b"", limits, problems) {
                                break 'outer;
                            }
                        }
                        Err(e) => {
                            problems.push(object_error("PE import name", e));
                            break;
                        }
                    }
                }
            }
        }
        Ok(None) => {}
        Err(e) => problems.push(object_error("PE import table", e)),
    }
    facts
}

/// The inspector: reads the file from the one sequential read (up to `native_bytes`), records
/// the `native` fact and maps problems (FMT007 for a file the loader would refuse, SCAN004 for
/// limits). Returns the facts for the judgement.
pub fn inspect_native(
    ctx: &mut super::context::Ctx<'_>,
    r: &mut dyn std::io::BufRead,
) -> std::io::Result<Option<NativeFacts>> {
    inspect_native_image(ctx, r, None)
}

/// [`inspect_native`] of the first `image` bytes only, when the executable image ends before
/// the file does (a llamafile's appended zip): the rest is the caller's.
pub fn inspect_native_image(
    ctx: &mut super::context::Ctx<'_>,
    r: &mut dyn std::io::BufRead,
    image: Option<u64>,
) -> std::io::Result<Option<NativeFacts>> {
    use crate::model::facts::Fact;
    let cap = ctx.cfg.limits.native_bytes;
    let (bytes, more) = match image {
        Some(n) if n <= cap => (super::read::read_bounded(r, n)?.0, false),
        _ => super::read::read_bounded(r, cap)?,
    };
    if more {
        let cfg = ctx.cfg;
        let d = ctx.detect(
            crate::model::rules::RuleId::LimitExceeded,
            "native_bytes",
            format!(
                "native object file over {cap} bytes: its initialisers and imports were not read; {}",
                super::context::raise_hint("native_bytes")
            ),
            crate::model::finding::Location::default(),
        );
        super::context::name_limit(d, cfg, "native_bytes");
        return Ok(None);
    }
    let (facts, problems) = inspect(&bytes, &Limits::from(&ctx.cfg.limits));
    ctx.fact(
        Fact::Native,
        serde_json::to_value(&facts).unwrap_or(serde_json::Value::Null),
    );
    super::formats::record_problems(
        ctx,
        &problems,
        crate::model::rules::RuleId::FormatMalformed,
        None,
        &[("native_symbols", "native_symbols")],
    );
    Ok(Some(facts))
}

#[cfg(test)]
pub(crate) mod tests;
