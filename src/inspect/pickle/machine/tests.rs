//! The machine's unit tests: value decoding helpers, and the opcode table checked against
//! CPython's `pickletools.opcodes` end to end (byte -> [`Op`] -> a handler that runs).

use super::constants::{le_signed, raw_unicode_escape, unescape_bytes};
use super::joblib::itemsize_of;
use crate::inspect::pickle::ops::{self, OPCODES, Op};
use crate::inspect::pickle::{Limits, analyze};

#[test]
fn decodes_escapes_like_python() {
    assert_eq!(unescape_bytes(br"\x6fs").0, b"os");
    assert_eq!(unescape_bytes(br"\157s").0, b"os");
    assert_eq!(unescape_bytes(br"a\qb").0, br"a\qb");
    assert_eq!(raw_unicode_escape(br"\u006fs").0, "os");
    assert_eq!(raw_unicode_escape(br"\\u006f").0, r"\\u006f");
    assert_eq!(raw_unicode_escape(br"sy\U00000073tem").0, "system");
}

#[test]
fn sizes_numpy_dtypes() {
    assert_eq!(itemsize_of("f4"), Some(4));
    assert_eq!(itemsize_of("<c16"), Some(16));
    assert_eq!(itemsize_of("U5"), Some(20));
    assert_eq!(itemsize_of("O8"), None);
    assert_eq!(le_signed(&[0xff]), -1);
    assert_eq!(le_signed(&[0x00, 0x01]), 256);
}

/// `[(ord(o.code), o.name, o.proto) for o in pickletools.opcodes]` (CPython 3.11; 3.8-3.13 agree),
/// written out by hand so the test does not trust the table it checks.
const PICKLETOOLS: [(u8, &str, u8); 68] = [
    (b'I', "INT", 0),
    (b'J', "BININT", 1),
    (b'K', "BININT1", 1),
    (b'M', "BININT2", 1),
    (b'L', "LONG", 0),
    (0x8a, "LONG1", 2),
    (0x8b, "LONG4", 2),
    (b'S', "STRING", 0),
    (b'T', "BINSTRING", 1),
    (b'U', "SHORT_BINSTRING", 1),
    (b'B', "BINBYTES", 3),
    (b'C', "SHORT_BINBYTES", 3),
    (0x8e, "BINBYTES8", 4),
    (0x96, "BYTEARRAY8", 5),
    (0x97, "NEXT_BUFFER", 5),
    (0x98, "READONLY_BUFFER", 5),
    (b'N', "NONE", 0),
    (0x88, "NEWTRUE", 2),
    (0x89, "NEWFALSE", 2),
    (b'V', "UNICODE", 0),
    (0x8c, "SHORT_BINUNICODE", 4),
    (b'X', "BINUNICODE", 1),
    (0x8d, "BINUNICODE8", 4),
    (b'F', "FLOAT", 0),
    (b'G', "BINFLOAT", 1),
    (b']', "EMPTY_LIST", 1),
    (b'a', "APPEND", 0),
    (b'e', "APPENDS", 1),
    (b'l', "LIST", 0),
    (b')', "EMPTY_TUPLE", 1),
    (b't', "TUPLE", 0),
    (0x85, "TUPLE1", 2),
    (0x86, "TUPLE2", 2),
    (0x87, "TUPLE3", 2),
    (b'}', "EMPTY_DICT", 1),
    (b'd', "DICT", 0),
    (b's', "SETITEM", 0),
    (b'u', "SETITEMS", 1),
    (0x8f, "EMPTY_SET", 4),
    (0x90, "ADDITEMS", 4),
    (0x91, "FROZENSET", 4),
    (b'0', "POP", 0),
    (b'2', "DUP", 0),
    (b'(', "MARK", 0),
    (b'1', "POP_MARK", 1),
    (b'g', "GET", 0),
    (b'h', "BINGET", 1),
    (b'j', "LONG_BINGET", 1),
    (b'p', "PUT", 0),
    (b'q', "BINPUT", 1),
    (b'r', "LONG_BINPUT", 1),
    (0x94, "MEMOIZE", 4),
    (0x82, "EXT1", 2),
    (0x83, "EXT2", 2),
    (0x84, "EXT4", 2),
    (b'c', "GLOBAL", 0),
    (0x93, "STACK_GLOBAL", 4),
    (b'R', "REDUCE", 0),
    (b'b', "BUILD", 0),
    (b'i', "INST", 0),
    (b'o', "OBJ", 1),
    (0x81, "NEWOBJ", 2),
    (0x92, "NEWOBJ_EX", 4),
    (0x80, "PROTO", 2),
    (b'.', "STOP", 0),
    (0x95, "FRAME", 4),
    (b'P', "PERSID", 0),
    (b'Q', "BINPERSID", 1),
];

/// A complete pickle that uses `op` once with a minimal valid argument: the values it needs
/// first, then the opcode and its argument, then whatever leaves a value for STOP.
fn stream_using(op: Op) -> Vec<u8> {
    let len8 = |n: u8| [n, 0, 0, 0, 0, 0, 0, 0];
    let (before, arg, after): (&[u8], Vec<u8>, &[u8]) = match op {
        Op::Int => (b"", b"1\n".to_vec(), b"."),
        Op::BinInt => (b"", vec![1, 0, 0, 0], b"."),
        Op::BinInt1 => (b"", vec![1], b"."),
        Op::BinInt2 => (b"", vec![1, 0], b"."),
        Op::Long => (b"", b"1L\n".to_vec(), b"."),
        Op::Long1 => (b"", vec![1, 1], b"."),
        Op::Long4 => (b"", vec![1, 0, 0, 0, 1], b"."),
        Op::String => (b"", b"'a'\n".to_vec(), b"."),
        Op::BinString | Op::BinBytes | Op::BinUnicode => (b"", b"\x01\0\0\0a".to_vec(), b"."),
        Op::ShortBinString | Op::ShortBinBytes | Op::ShortBinUnicode => {
            (b"", b"\x01a".to_vec(), b".")
        }
        Op::BinBytes8 | Op::ByteArray8 | Op::BinUnicode8 => {
            (b"", [&len8(1)[..], b"a"].concat(), b".")
        }
        Op::Unicode => (b"", b"a\n".to_vec(), b"."),
        Op::Float => (b"", b"1.0\n".to_vec(), b"."),
        Op::BinFloat => (b"", 1.0f64.to_be_bytes().to_vec(), b"."),
        Op::ReadonlyBuffer => (b"\x97", vec![], b"."),
        Op::NextBuffer | Op::None | Op::NewTrue | Op::NewFalse => (b"", vec![], b"."),
        Op::EmptyList | Op::EmptyTuple | Op::EmptyDict | Op::EmptySet => (b"", vec![], b"."),
        Op::Append => (b"]N", vec![], b"."),
        Op::Appends => (b"](N", vec![], b"."),
        Op::SetItem => (b"}NN", vec![], b"."),
        Op::SetItems => (b"}(NN", vec![], b"."),
        Op::AddItems => (b"\x8f(N", vec![], b"."),
        Op::List | Op::Tuple | Op::Dict | Op::FrozenSet => (b"(", vec![], b"."),
        Op::Tuple1 => (b"N", vec![], b"."),
        Op::Tuple2 => (b"NN", vec![], b"."),
        Op::Tuple3 => (b"NNN", vec![], b"."),
        Op::Pop => (b"NN", vec![], b"."),
        Op::Dup => (b"N", vec![], b"."),
        Op::Mark => (b"N", vec![], b"0."),
        Op::PopMark => (b"N(N", vec![], b"."),
        Op::Get => (b"Np0\n0", b"0\n".to_vec(), b"."),
        Op::BinGet => (b"Nq\x000", vec![0], b"."),
        Op::LongBinGet => (b"Nq\x000", vec![0, 0, 0, 0], b"."),
        Op::Put => (b"N", b"0\n".to_vec(), b"."),
        Op::BinPut => (b"N", vec![0], b"."),
        Op::LongBinPut => (b"N", vec![0, 0, 0, 0], b"."),
        Op::Memoize => (b"N", vec![], b"."),
        Op::Ext1 => (b"", vec![1], b"."),
        Op::Ext2 => (b"", vec![1, 0], b"."),
        Op::Ext4 => (b"", vec![1, 0, 0, 0], b"."),
        Op::Global => (b"", b"m\nn\n".to_vec(), b"."),
        Op::Inst => (b"(", b"m\nn\n".to_vec(), b"."),
        Op::StackGlobal => (b"\x8c\x01m\x8c\x01n", vec![], b"."),
        Op::Reduce => (b"cm\nn\n)", vec![], b"."),
        Op::Build => (b"cm\nn\n)R}", vec![], b"."),
        Op::Obj => (b"(cm\nn\n", vec![], b"."),
        Op::NewObj => (b"cm\nn\n)", vec![], b"."),
        Op::NewObjEx => (b"cm\nn\n)}", vec![], b"."),
        Op::Proto => (b"", vec![2], b"N."),
        Op::Stop => (b"N", vec![], b""),
        Op::Frame => (b"", len8(2).to_vec(), b"N."),
        Op::PersId => (b"", b"a\n".to_vec(), b"."),
        Op::BinPersId => (b"N", vec![], b"."),
    };
    [before, &[op.code()][..], &arg, after].concat()
}

#[test]
fn opcode_table_matches_pickletools_and_every_opcode_runs() {
    assert_eq!(OPCODES.len(), PICKLETOOLS.len());
    for (code, name, proto) in PICKLETOOLS {
        let Some(op) = ops::lookup(code) else {
            panic!("{name} (0x{code:02x}) does not decode");
        };
        assert_eq!((op.code(), op.name(), op.proto()), (code, name, proto));
        let data = stream_using(op);
        let a = analyze(&mut &data[..], &Limits::default());
        assert_eq!(a.error, None, "{name}: {data:?}");
        assert!(a.pickles.first().is_some_and(|p| p.complete), "{name}");
        assert_eq!(a.pickles.len(), 1, "{name}");
    }
}

#[test]
fn bytes_outside_the_table_are_unknown_opcodes() {
    let mut unknown = 0;
    for byte in 0..=255u8 {
        let known = PICKLETOOLS.iter().any(|&(code, _, _)| code == byte);
        assert_eq!(ops::lookup(byte).is_some(), known, "byte 0x{byte:02x}");
        if known {
            continue;
        }
        unknown += 1;
        let a = analyze(&mut &[0x80, 4, byte][..], &Limits::default());
        let error = a.error.as_ref().map(|e| (e.code, e.offset));
        assert_eq!(
            error,
            Some(("unknown-opcode", Some(2))),
            "byte 0x{byte:02x}"
        );
    }
    assert_eq!(unknown, 256 - 68);
}
