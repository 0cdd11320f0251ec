//! The marshal walker on `.pyc` files CPython 3.11 wrote (`tests/fixtures/bytecode`, made by
//! its `make_fixtures.py`) and on hand-built hostile streams.

use super::*;
use crate::model::problem::ProblemKind;

const OS_SYSTEM: &[u8] =
    include_bytes!("../../../../tests/fixtures/bytecode/os_system.cpython-311.pyc");
const OS_SYSTEM_HASH: &[u8] =
    include_bytes!("../../../../tests/fixtures/bytecode/os_system.hash.pyc");
const OS_SYSTEM_SRC: &[u8] = include_bytes!("../../../../tests/fixtures/bytecode/os_system.py");
const OS_SYSTEM_MARSHAL: &[u8] =
    include_bytes!("../../../../tests/fixtures/bytecode/os_system.marshal");
const NESTED: &[u8] = include_bytes!("../../../../tests/fixtures/bytecode/nested.cpython-311.pyc");

fn limits() -> Limits {
    Limits {
        max_depth: 100,
        max_objects: 100_000,
    }
}

#[test]
fn reads_a_timestamp_pyc_with_names_consts_and_lines() {
    let pyc = parse_pyc(OS_SYSTEM, &limits()).unwrap();
    assert_eq!(pyc.header.minor, 11);
    assert_eq!(pyc.header.magic, 3495);
    assert_eq!(
        pyc.header.kind,
        PycKind::Timestamp {
            mtime: 0,
            source_size: OS_SYSTEM_SRC.len() as u32
        }
    );
    let m = &pyc.module.code[0];
    assert_eq!(
        (m.name.as_str(), m.qualname.as_str()),
        ("<module>", "<module>")
    );
    assert_eq!(m.first_line, 1);
    assert_eq!(m.names, ["__doc__", "os", "system", "helper"]);
    assert!(m.const_strings.iter().any(|s| s == "id > /tmp/pwned"));
    // `LOAD_ATTR system` is at offset 18, on line 4 (CPython's `dis` says so).
    assert_eq!(m.line_of(18), Some(4));
    assert_eq!(m.line_of(10), Some(2));
    let helper = &pyc.module.code[1];
    assert_eq!(helper.name, "helper");
    assert_eq!(helper.parent, Some(0));
    assert_eq!(helper.first_line, 7);
}

#[test]
fn reads_a_checked_hash_pyc_and_its_source_hash_matches_importlib() {
    let pyc = parse_pyc(OS_SYSTEM_HASH, &limits()).unwrap();
    let PycKind::Hash { checked, hash } = pyc.header.kind else {
        panic!("not a hash pyc: {:?}", pyc.header.kind);
    };
    assert!(checked);
    // importlib.util.source_hash(os_system.py) printed by make_fixtures.py.
    assert_eq!(hash, [0x67, 0x9e, 0x21, 0xa4, 0x27, 0xde, 0xfd, 0x75]);
    assert_eq!(source_hash(3495, 11, OS_SYSTEM_SRC), hash);
    assert_ne!(source_hash(3495, 11, b"import os\n"), hash);
}

#[test]
fn nested_code_objects_have_parents_and_qualnames() {
    let pyc = parse_pyc(NESTED, &limits()).unwrap();
    let q: Vec<&str> = pyc
        .module
        .code
        .iter()
        .map(|c| c.qualname.as_str())
        .collect();
    assert_eq!(
        q,
        [
            "<module>",
            "Loader",
            "Loader.load",
            "Loader.load.<locals>.inner"
        ]
    );
    let parents: Vec<Option<usize>> = pyc.module.code.iter().map(|c| c.parent).collect();
    assert_eq!(parents, [None, Some(0), Some(1), Some(2)]);
    assert!(pyc.module.code[3].names.iter().any(|n| n == "popen"));
}

#[test]
fn loads_any_finds_the_layout_of_a_bare_blob() {
    let (minor, m) = loads_any(OS_SYSTEM_MARSHAL, &limits()).unwrap();
    assert_eq!(minor, 11);
    assert_eq!(m.code[0].names, ["__doc__", "os", "system", "helper"]);
    // Plain data reads under any layout.
    let (_, m) = loads_any(b"\xe9\x05\x00\x00\x00", &limits()).unwrap();
    assert!(m.code.is_empty());
}

#[test]
fn magic_numbers_of_each_version_are_known() {
    for (minor, magic) in [
        (6, 3379),
        (7, 3394),
        (8, 3413),
        (9, 3425),
        (10, 3439),
        (11, 3495),
        (12, 3531),
        (13, 3571),
        (14, 3627),
    ] {
        assert_eq!(version_of_magic(magic), Some(minor), "{magic}");
        let mut head = magic.to_le_bytes().to_vec();
        head.extend_from_slice(b"\r\n");
        assert!(is_pyc(&head));
    }
    assert_eq!(version_of_magic(62211), None, "Python 2.7 is not read");
    assert!(!is_pyc(b"\x0d\x0d\x0d\x0a"), "3341 is 3.5");
}

#[test]
fn rejects_an_unknown_magic() {
    let mut b = OS_SYSTEM.to_vec();
    b[0] = 0x01;
    b[1] = 0x01;
    assert_eq!(parse_pyc(&b, &limits()).unwrap_err().code, "unknown-magic");
    b[2] = b'x';
    assert_eq!(parse_pyc(&b, &limits()).unwrap_err().code, "bad-magic");
}

#[test]
fn rejects_bad_flags() {
    let mut b = OS_SYSTEM.to_vec();
    b[4] = 2;
    assert_eq!(parse_pyc(&b, &limits()).unwrap_err().code, "bad-flags");
}

#[test]
fn rejects_a_truncated_pyc_at_every_length() {
    for n in 0..OS_SYSTEM.len() {
        let e = parse_pyc(&OS_SYSTEM[..n], &limits()).unwrap_err();
        assert!(
            matches!(e.code, "truncated" | "bad-length"),
            "cut at {n}: {e}"
        );
    }
}

#[test]
fn rejects_trailing_data() {
    let mut b = OS_SYSTEM.to_vec();
    b.push(b'N');
    assert_eq!(parse_pyc(&b, &limits()).unwrap_err().code, "trailing-data");
}

#[test]
fn rejects_a_reference_to_an_object_not_yet_read() {
    // A tuple of one element that refers to reference 5: only the tuple itself is numbered.
    let blob = b"\xa9\x01r\x05\x00\x00\x00";
    let e = loads(blob, 11, &limits()).unwrap_err();
    assert_eq!(e.code, "bad-reference");
    // A reference to the tuple itself (reserved before its elements, as CPython does) is fine.
    assert!(loads(b"\xa9\x01r\x00\x00\x00\x00", 11, &limits()).is_ok());
    assert_eq!(
        loads(b"r\xff\xff\xff\xff", 11, &limits()).unwrap_err().code,
        "bad-reference"
    );
}

#[test]
fn references_are_not_copied() {
    // A list holding 4000 references to one 1000-element tuple: 4000 + 1000 + 2 objects, never
    // 4 million.
    let mut blob = b"[\xa0\x0f\x00\x00".to_vec();
    blob.extend_from_slice(b"\xa8\xe8\x03\x00\x00");
    blob.extend(std::iter::repeat_n(b'N', 1000));
    blob.extend(std::iter::repeat_n(*b"r\x00\x00\x00\x00", 3999).flatten());
    let m = loads(&blob, 11, &limits()).unwrap();
    assert_eq!(m.objects, 1002);
}

#[test]
fn rejects_a_count_past_the_end_without_allocating_it() {
    let e = loads(b"(\xff\xff\xff\x7f", 11, &limits()).unwrap_err();
    assert_eq!(e.code, "bad-length");
    let e = loads(b"u\xff\xff\xff\xff", 11, &limits()).unwrap_err();
    assert_eq!(e.code, "bad-length");
    let e = loads(b"s\x10\x00\x00\x00abc", 11, &limits()).unwrap_err();
    assert_eq!(e.code, "bad-length");
}

#[test]
fn stops_at_the_depth_limit() {
    let mut blob = Vec::new();
    for _ in 0..200 {
        blob.extend_from_slice(b")\x01");
    }
    blob.push(b'N');
    let e = loads(&blob, 11, &limits()).unwrap_err();
    assert_eq!(
        (e.kind, e.code),
        (ProblemKind::LimitExceeded, "marshal_depth")
    );
}

#[test]
fn stops_at_the_object_limit() {
    let mut blob = b"(\x10\x00\x00\x00".to_vec();
    blob.extend(std::iter::repeat_n(b'N', 16));
    let small = Limits {
        max_depth: 10,
        max_objects: 8,
    };
    let e = loads(&blob, 11, &small).unwrap_err();
    assert_eq!(
        (e.kind, e.code),
        (ProblemKind::LimitExceeded, "marshal_objects")
    );
}

#[test]
fn rejects_unknown_type_codes_and_null_values() {
    assert_eq!(loads(b"Q", 11, &limits()).unwrap_err().code, "unknown-type");
    assert_eq!(loads(b"0", 11, &limits()).unwrap_err().code, "null-object");
}

#[test]
fn a_311_body_under_a_39_magic_is_malformed_not_a_panic() {
    let mut b = OS_SYSTEM.to_vec();
    b[..2].copy_from_slice(&3425u16.to_le_bytes());
    assert!(parse_pyc(&b, &limits()).is_err());
}

#[test]
fn line_tables_of_older_versions() {
    // co_lnotab (3.6-3.9): +6 bytes -> +1 line, +4 bytes -> +2 lines.
    let c = CodeObject {
        first_line: 10,
        line_table: vec![6, 1, 4, 2],
        line_format: Some(LineTable::Lnotab),
        ..CodeObject::default()
    };
    assert_eq!(
        [c.line_of(0), c.line_of(6), c.line_of(9), c.line_of(10)],
        [Some(10), Some(11), Some(11), Some(13)]
    );
    // 3.10 co_linetable: [0,4) line +0, [4,8) no line, [8,12) line +3.
    let c = CodeObject {
        first_line: 1,
        line_table: vec![4, 0, 4, 0x80, 4, 3],
        line_format: Some(LineTable::Linetable310),
        ..CodeObject::default()
    };
    assert_eq!(
        [c.line_of(2), c.line_of(4), c.line_of(8), c.line_of(12)],
        [Some(1), None, Some(4), None]
    );
}

#[test]
fn opcode_tables_cover_every_version_and_fold_extended_args() {
    for minor in 6..=14 {
        let t = opcodes::table(minor).unwrap();
        assert!(!t.calls.is_empty());
    }
    assert!(opcodes::table(5).is_none());
    let t = opcodes::table(11).unwrap();
    // EXTENDED_ARG 1; LOAD_NAME 2 -> arg 0x102; CACHE skipped.
    let ins = opcodes::instructions(&[144, 1, 101, 2, 0, 0, 106, 3], t);
    assert_eq!(ins.len(), 2);
    assert_eq!((ins[0].offset, ins[0].op, ins[0].arg), (0, 101, 0x102));
    assert_eq!((ins[1].offset, ins[1].arg), (6, 3));
}

#[test]
fn the_311_code_layout_is_read_under_the_312_to_314_magics() {
    // 3.12-3.14 marshal code objects exactly as 3.11 does (same fields, same order): a 3.11
    // body under their magics walks the same, which is what the committed fixtures can show
    // without those interpreters (the opcodes differ; the resolver is not asked here).
    for magic in [3531u16, 3571, 3627] {
        let mut b = OS_SYSTEM.to_vec();
        b[..2].copy_from_slice(&magic.to_le_bytes());
        let pyc = parse_pyc(&b, &limits()).unwrap();
        assert_eq!(
            pyc.module.code[0].names,
            ["__doc__", "os", "system", "helper"]
        );
    }
}

#[test]
fn a_36_header_is_twelve_bytes() {
    let mut b = 3379u16.to_le_bytes().to_vec();
    b.extend_from_slice(b"\r\n");
    b.extend_from_slice(&7u32.to_le_bytes());
    b.extend_from_slice(&42u32.to_le_bytes());
    let h = parse_header(&b).unwrap();
    assert_eq!((h.minor, h.len, h.flags), (6, 12, 0));
    assert_eq!(
        h.kind,
        PycKind::Timestamp {
            mtime: 7,
            source_size: 42
        }
    );
    b.push(b'N');
    assert_eq!(parse_pyc(&b, &limits()).unwrap_err().code, "pyc-not-code");
}

/// A 3.11 code object named `f` whose only constant is `inner` (empty when `None`), as bytes
/// before and after the constant, so deep nests can be built without recursion.
fn code_311_around() -> (Vec<u8>, Vec<u8>) {
    let mut head = vec![b'c'];
    head.extend(std::iter::repeat_n(0u8, 5 * 4));
    head.extend_from_slice(b"s\x00\x00\x00\x00"); // co_code
    head.extend_from_slice(b")\x01"); // co_consts: one element follows
    let mut tail = Vec::new();
    tail.extend_from_slice(b")\x00"); // co_names
    tail.extend_from_slice(b")\x00"); // co_localsplusnames
    tail.extend_from_slice(b"s\x00\x00\x00\x00"); // co_localspluskinds
    tail.extend_from_slice(b"z\x01m"); // co_filename
    tail.extend_from_slice(b"z\x01f"); // co_name
    tail.extend_from_slice(b"z\x01f"); // co_qualname
    tail.extend_from_slice(&1i32.to_le_bytes()); // co_firstlineno
    tail.extend_from_slice(b"s\x00\x00\x00\x00"); // co_linetable
    tail.extend_from_slice(b"s\x00\x00\x00\x00"); // co_exceptiontable
    (head, tail)
}

#[test]
fn a_hundred_thousand_nested_tuples_never_reach_the_stack() {
    let mut blob = Vec::new();
    for _ in 0..100_000 {
        blob.extend_from_slice(b")\x01");
    }
    blob.push(b'N');
    // The default limit stops it with the limit's name (SCAN004 marshal_depth).
    let e = loads(&blob, 11, &Limits::default()).unwrap_err();
    assert_eq!(
        (e.kind, e.code),
        (ProblemKind::LimitExceeded, "marshal_depth")
    );
    // A policy that allows the depth gets it walked on the heap, not the stack (the test
    // thread's 2 MiB would not hold 100,000 frames of a recursive reader).
    let deep = Limits {
        max_depth: 200_000,
        max_objects: 1_000_000,
    };
    let m = loads(&blob, 11, &deep).unwrap();
    assert_eq!(m.objects, 100_001);
}

#[test]
fn a_hundred_thousand_nested_code_objects_never_reach_the_stack() {
    let (head, tail) = code_311_around();
    let n = 100_000;
    let mut blob = Vec::with_capacity(n * (head.len() + tail.len()) + 1);
    for _ in 0..n {
        blob.extend_from_slice(&head);
    }
    blob.push(b'N');
    for _ in 0..n {
        blob.extend_from_slice(&tail);
    }
    let e = loads(&blob, 11, &Limits::default()).unwrap_err();
    assert_eq!(
        (e.kind, e.code),
        (ProblemKind::LimitExceeded, "marshal_depth")
    );
    let deep = Limits {
        max_depth: 1_000_000,
        max_objects: 10_000_000,
    };
    let m = loads(&blob, 11, &deep).unwrap();
    assert_eq!(m.code.len(), n);
    assert_eq!(m.code[0].parent, None);
    assert!(
        m.code
            .iter()
            .enumerate()
            .skip(1)
            .all(|(i, c)| c.parent == Some(i - 1) && c.name == "f")
    );
}

/// The 100,000-deep nest of code objects `loads` reads under `limits` (the bytecode tests
/// resolve it too: everything that reads the nest afterwards must be a loop as well).
pub(crate) fn nested_code_objects(n: usize) -> Vec<u8> {
    let (head, tail) = code_311_around();
    let mut blob = Vec::with_capacity(n * (head.len() + tail.len()) + 1);
    for _ in 0..n {
        blob.extend_from_slice(&head);
    }
    blob.push(b'N');
    for _ in 0..n {
        blob.extend_from_slice(&tail);
    }
    blob
}

#[test]
fn code_objects_sharing_their_fields_cannot_multiply_the_work() {
    // 1,000 code objects in a list, all referring to the first one's 100,000-byte co_code:
    // 100 MB of instructions for a 100 kB file, if each were copied and read.
    let (head, tail) = code_311_around();
    let mut first = head[..21].to_vec();
    first.push(b's' | FLAG_REF);
    first.extend_from_slice(&100_000u32.to_le_bytes());
    first.extend(std::iter::repeat_n(9u8, 100_000)); // NOP
    first.extend_from_slice(b")\x00");
    first.extend_from_slice(&tail);
    let mut other = head[..21].to_vec();
    other.extend_from_slice(b"r\x00\x00\x00\x00");
    other.extend_from_slice(b")\x00");
    other.extend_from_slice(&tail);
    let mut blob = b"[".to_vec();
    blob.extend_from_slice(&1000u32.to_le_bytes());
    blob.extend_from_slice(&first);
    for _ in 1..1000 {
        blob.extend_from_slice(&other);
    }
    let e = loads(&blob, 11, &limits()).unwrap_err();
    assert_eq!(e.code, "shared-code-fields", "{e}");
    // Three sharing ones are within what a file may copy (four times its length).
    let mut blob = b"[".to_vec();
    blob.extend_from_slice(&3u32.to_le_bytes());
    blob.extend_from_slice(&first);
    for _ in 1..3 {
        blob.extend_from_slice(&other);
    }
    let m = loads(&blob, 11, &limits()).unwrap();
    assert_eq!(m.code.len(), 3);
    assert!(m.code.iter().all(|c| c.code.len() == 100_000));
}

#[test]
fn a_string_referred_to_everywhere_is_one_string() {
    // A tuple of 10,000 references to one interned 10,000-character string: one allocation,
    // shared, not 100 MB of copies.
    let mut blob = b"(".to_vec();
    blob.extend_from_slice(&10_000u32.to_le_bytes());
    blob.push(b'a' | FLAG_REF);
    blob.extend_from_slice(&10_000u32.to_le_bytes());
    blob.extend(std::iter::repeat_n(b'x', 10_000));
    blob.extend(std::iter::repeat_n(*b"r\x00\x00\x00\x00", 9_999).flatten());
    let mut w = Walker {
        data: &blob,
        pos: 0,
        minor: 11,
        limits: limits(),
        base: 0,
        objects: Vec::new(),
        refs: Vec::new(),
        open_code: Vec::new(),
        copied: 0,
        module: Module::default(),
    };
    let id = w.run().unwrap();
    let texts = w.texts_in(id).unwrap();
    assert_eq!(texts.len(), 10_000);
    assert!(texts.iter().all(|t| t.same_object(&texts[0])));
    assert_eq!(w.copied, 10_000);
}

#[test]
fn the_line_cursor_reads_each_table_entry_once_and_agrees_with_line_of() {
    // A 3.11 location table of 20,000 one-unit entries: short forms (code 0..9, one byte of
    // columns), one-line forms (codes 10..12, two bytes) and "no location" (15).
    let mut table = Vec::new();
    for i in 0..20_000u32 {
        match i % 4 {
            0 => table.extend_from_slice(&[0x80 | (11 << 3), 0, 0]),
            1 => table.extend_from_slice(&[0x80 | (15 << 3)]),
            2 => table.extend_from_slice(&[0x80, 0]),
            _ => table.extend_from_slice(&[0x80 | (10 << 3), 0, 0]),
        }
    }
    let c = CodeObject {
        first_line: 1,
        line_table: table.clone(),
        line_format: Some(LineTable::Locations),
        ..CodeObject::default()
    };
    let mut lines = c.lines();
    let all: Vec<Option<u32>> = (0..40_000).step_by(2).map(|o| lines.line_of(o)).collect();
    // One pass: the cursor stands at the end of the table, having decoded 20,000 ranges.
    assert_eq!(lines.ranges.at, table.len());
    assert_eq!(all[0], Some(2));
    assert_eq!(all[1], None);
    assert_eq!(all[4], Some(3));
    for o in [0usize, 2, 6, 4000, 39_998] {
        assert_eq!(c.line_of(o), all[o / 2], "offset {o}");
    }
    assert_eq!(lines.line_of(40_000), None);
    // Going back reads the table again from its start.
    assert_eq!(lines.line_of(8), c.line_of(8));
}
