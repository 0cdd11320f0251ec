//! Tests for the pickle analyzer: every protocol, every import opcode, desync attempts,
//! published bypass shapes, ordinary PyTorch/NumPy/joblib pickles, limits and robustness.
//! Streams are built byte-exact by the small builder below (checked against CPython's output
//! in `builder_matches_cpython_for_every_protocol`); no Python is needed.

use super::*;
use crate::knowledge::{ExtraLists, Verdict, classify_global};

/// Byte-exact pickle builder.
#[derive(Default, Clone)]
struct P(Vec<u8>);

impl P {
    fn new() -> Self {
        P(Vec::new())
    }
    fn raw(mut self, b: &[u8]) -> Self {
        self.0.extend_from_slice(b);
        self
    }
    fn op(self, b: u8) -> Self {
        self.raw(&[b])
    }
    fn proto(self, v: u8) -> Self {
        self.raw(&[0x80, v])
    }
    fn frame(self, n: u64) -> Self {
        self.op(0x95).raw(&n.to_le_bytes())
    }
    fn global(self, m: &str, n: &str) -> Self {
        self.op(b'c').raw(format!("{m}\n{n}\n").as_bytes())
    }
    fn inst(self, m: &str, n: &str) -> Self {
        self.op(b'i').raw(format!("{m}\n{n}\n").as_bytes())
    }
    /// SHORT_BINUNICODE
    fn sbu(self, s: &str) -> Self {
        let n = u8::try_from(s.len()).unwrap_or(u8::MAX);
        self.op(0x8c).op(n).raw(s.as_bytes())
    }
    /// BINUNICODE
    fn bu(self, s: &str) -> Self {
        let n = u32::try_from(s.len()).unwrap_or(u32::MAX);
        self.op(b'X').raw(&n.to_le_bytes()).raw(s.as_bytes())
    }
    fn bu8(self, s: &str) -> Self {
        self.op(0x8d)
            .raw(&(s.len() as u64).to_le_bytes())
            .raw(s.as_bytes())
    }
    /// UNICODE (protocol 0), raw text given.
    fn unicode(self, s: &str) -> Self {
        self.op(b'V').raw(s.as_bytes()).op(b'\n')
    }
    /// STRING (protocol 0), quoted text given.
    fn string(self, quoted: &str) -> Self {
        self.op(b'S').raw(quoted.as_bytes()).op(b'\n')
    }
    fn binstring(self, s: &str) -> Self {
        let n = i32::try_from(s.len()).unwrap_or(i32::MAX);
        self.op(b'T').raw(&n.to_le_bytes()).raw(s.as_bytes())
    }
    fn short_binstring(self, s: &str) -> Self {
        let n = u8::try_from(s.len()).unwrap_or(u8::MAX);
        self.op(b'U').op(n).raw(s.as_bytes())
    }
    fn binbytes(self, s: &str) -> Self {
        let n = u32::try_from(s.len()).unwrap_or(u32::MAX);
        self.op(b'B').raw(&n.to_le_bytes()).raw(s.as_bytes())
    }
    fn short_binbytes(self, s: &str) -> Self {
        let n = u8::try_from(s.len()).unwrap_or(u8::MAX);
        self.op(b'C').op(n).raw(s.as_bytes())
    }
    fn binbytes8(self, s: &str) -> Self {
        self.op(0x8e)
            .raw(&(s.len() as u64).to_le_bytes())
            .raw(s.as_bytes())
    }
    fn memoize(self) -> Self {
        self.op(0x94)
    }
    fn binput(self, i: u8) -> Self {
        self.op(b'q').op(i)
    }
    fn binget(self, i: u8) -> Self {
        self.op(b'h').op(i)
    }
    fn long_binput(self, i: u32) -> Self {
        self.op(b'r').raw(&i.to_le_bytes())
    }
    fn long_binget(self, i: u32) -> Self {
        self.op(b'j').raw(&i.to_le_bytes())
    }
    fn put(self, i: u32) -> Self {
        self.op(b'p').raw(format!("{i}\n").as_bytes())
    }
    fn get(self, i: u32) -> Self {
        self.op(b'g').raw(format!("{i}\n").as_bytes())
    }
    fn binint1(self, v: u8) -> Self {
        self.op(b'K').op(v)
    }
    fn mark(self) -> Self {
        self.op(b'(')
    }
    fn tuple(self) -> Self {
        self.op(b't')
    }
    fn tuple1(self) -> Self {
        self.op(0x85)
    }
    fn tuple2(self) -> Self {
        self.op(0x86)
    }
    fn empty_tuple(self) -> Self {
        self.op(b')')
    }
    fn stack_global(self) -> Self {
        self.op(0x93)
    }
    fn reduce(self) -> Self {
        self.op(b'R')
    }
    fn build(self) -> Self {
        self.op(b'b')
    }
    fn pop(self) -> Self {
        self.op(b'0')
    }
    fn stop(self) -> Self {
        self.op(b'.')
    }
    fn bytes(&self) -> &[u8] {
        &self.0
    }
}

fn run(data: &[u8]) -> Analysis {
    let mut r = data;
    analyze(&mut r, &Limits::default())
}

fn run_with(data: &[u8], limits: &Limits) -> Analysis {
    let mut r = data;
    analyze(&mut r, limits)
}

fn has(a: &Analysis, module: &str, name: &str) -> bool {
    a.imports
        .iter()
        .any(|i| i.module.as_deref() == Some(module) && i.name.as_deref() == Some(name))
}

fn called(a: &Analysis, module: &str, name: &str) -> bool {
    a.imports
        .iter()
        .any(|i| i.module.as_deref() == Some(module) && i.name.as_deref() == Some(name) && i.called)
}

fn any_dangerous(a: &Analysis) -> bool {
    a.imports.iter().any(|i| match (&i.module, &i.name) {
        (Some(m), Some(n)) => {
            matches!(
                classify_global(m, n, &ExtraLists::default()),
                Verdict::Dangerous { .. }
            )
        }
        _ => true,
    })
}

fn all_safe(a: &Analysis) -> bool {
    !a.imports.is_empty()
        && a.imports.iter().all(|i| match (&i.module, &i.name) {
            (Some(m), Some(n)) => classify_global(m, n, &ExtraLists::default()) == Verdict::Safe,
            _ => false,
        })
}

fn code(a: &Analysis) -> Option<&'static str> {
    a.error.as_ref().map(|e| e.code)
}

/// `os.system("ls")` as CPython writes it for protocol `p` (posix spelling, as on Linux).
fn os_system(p: u8) -> P {
    match p {
        0 => P::new()
            .global("posix", "system")
            .put(0)
            .mark()
            .unicode("ls")
            .put(1)
            .tuple()
            .put(2)
            .reduce()
            .put(3)
            .stop(),
        1 => P::new()
            .global("posix", "system")
            .binput(0)
            .mark()
            .bu("ls")
            .binput(1)
            .tuple()
            .binput(2)
            .reduce()
            .binput(3)
            .stop(),
        2 | 3 => P::new()
            .proto(p)
            .global("posix", "system")
            .binput(0)
            .bu("ls")
            .binput(1)
            .tuple1()
            .binput(2)
            .reduce()
            .binput(3)
            .stop(),
        _ => P::new()
            .proto(p)
            .frame(0x1d)
            .sbu("posix")
            .memoize()
            .sbu("system")
            .memoize()
            .stack_global()
            .memoize()
            .sbu("ls")
            .memoize()
            .tuple1()
            .memoize()
            .reduce()
            .memoize()
            .stop(),
    }
}

#[test]
fn builder_matches_cpython_for_every_protocol() {
    // pickle.dumps(M(), protocol=p) with M.__reduce__ = (os.system, ("ls",)), CPython 3.11.
    let cpython: [&[u8]; 6] = [
        b"cposix\nsystem\np0\n(Vls\np1\ntp2\nRp3\n.",
        b"cposix\nsystem\nq\x00(X\x02\x00\x00\x00lsq\x01tq\x02Rq\x03.",
        b"\x80\x02cposix\nsystem\nq\x00X\x02\x00\x00\x00lsq\x01\x85q\x02Rq\x03.",
        b"\x80\x03cposix\nsystem\nq\x00X\x02\x00\x00\x00lsq\x01\x85q\x02Rq\x03.",
        b"\x80\x04\x95\x1d\x00\x00\x00\x00\x00\x00\x00\x8c\x05posix\x94\x8c\x06system\x94\x93\x94\x8c\x02ls\x94\x85\x94R\x94.",
        b"\x80\x05\x95\x1d\x00\x00\x00\x00\x00\x00\x00\x8c\x05posix\x94\x8c\x06system\x94\x93\x94\x8c\x02ls\x94\x85\x94R\x94.",
    ];
    for (p, expected) in cpython.iter().enumerate() {
        let p = u8::try_from(p).unwrap_or(0);
        assert_eq!(os_system(p).bytes(), *expected, "protocol {p}");
    }
}

#[test]
fn finds_called_os_system_in_every_protocol() {
    for p in 0..=5u8 {
        let a = run(os_system(p).bytes());
        assert_eq!(a.error, None, "protocol {p}");
        assert!(called(&a, "posix", "system"), "protocol {p}: {a:?}");
        assert_eq!(
            a.imports.first().map(|i| i.call_opcode),
            Some(Some("REDUCE"))
        );
        assert_eq!(a.pickles.len(), 1);
        assert_eq!(
            a.pickles.first().map(|x| x.protocol),
            Some(if p >= 2 { p } else { 0 })
        );
        assert!(a.pickles.first().is_some_and(|x| x.complete));
        assert!(any_dangerous(&a));
    }
}

#[test]
fn protocol5_buffers_and_bytearrays_are_read() {
    let data = P::new()
        .proto(5)
        .op(0x96)
        .raw(&3u64.to_le_bytes())
        .raw(b"abc")
        .op(0x98)
        .pop()
        .op(0x97)
        .pop()
        .global("builtins", "set")
        .empty_tuple()
        .reduce()
        .stop();
    let a = run(data.bytes());
    assert_eq!(a.error, None);
    assert!(all_safe(&a));
}

#[test]
fn inst_imports_and_calls_immediately() {
    // picklescan malicious10: (S'...'\ni__builtin__\nexec\n.
    let data = P::new()
        .mark()
        .string("'raise RuntimeError(\"Injection running\")'")
        .inst("__builtin__", "exec")
        .stop();
    let a = run(data.bytes());
    assert_eq!(a.error, None);
    assert!(called(&a, "__builtin__", "exec"));
    assert_eq!(a.imports.first().map(|i| i.opcode), Some("INST"));
    assert!(any_dangerous(&a));
}

#[test]
fn stack_global_resolves_every_string_opcode() {
    type Push = fn(P, &str) -> P;
    let pushes: [(&str, Push); 10] = [
        ("STRING", |p, s| p.string(&format!("'{s}'"))),
        ("BINSTRING", |p, s| p.binstring(s)),
        ("SHORT_BINSTRING", |p, s| p.short_binstring(s)),
        ("UNICODE", |p, s| p.unicode(s)),
        ("SHORT_BINUNICODE", |p, s| p.sbu(s)),
        ("BINUNICODE", |p, s| p.bu(s)),
        ("BINUNICODE8", |p, s| p.bu8(s)),
        ("BINBYTES", |p, s| p.binbytes(s)),
        ("SHORT_BINBYTES", |p, s| p.short_binbytes(s)),
        ("BINBYTES8", |p, s| p.binbytes8(s)),
    ];
    for (name, push) in pushes {
        let data = push(push(P::new().proto(4), "os"), "system")
            .stack_global()
            .sbu("id")
            .tuple1()
            .reduce()
            .stop();
        let a = run(data.bytes());
        assert!(called(&a, "os", "system"), "{name}: {a:?}");
        let note = a.imports.first().and_then(|i| i.note.clone());
        if name.contains("BYTES") {
            assert!(note.is_some_and(|n| n.contains("bytes")), "{name}");
        } else {
            assert_eq!(note, None, "{name}");
        }
    }
}

#[test]
fn decodes_escaped_module_names() {
    // STRING escapes and UNICODE raw-unicode-escapes spell "os" without the letters.
    let data = P::new()
        .proto(4)
        .string(r"'\x6fs'")
        .unicode(r"sy\u0073tem")
        .stack_global()
        .stop();
    let a = run(data.bytes());
    assert!(has(&a, "os", "system"), "{a:?}");
}

#[test]
fn follows_the_memo_with_non_adjacent_put_and_get() {
    // picklescan malicious11 (imaginaryctf "Safe Pickle"): strings parked in the memo, popped,
    // decoy torch.LongStorage strings in between, then fetched for STACK_GLOBAL.
    let data = P::new()
        .unicode("os")
        .put(2)
        .pop()
        .unicode("system")
        .put(3)
        .pop()
        .unicode("torch")
        .put(0)
        .pop()
        .unicode("LongStorage")
        .put(1)
        .pop()
        .get(2)
        .get(3)
        .stack_global()
        .mark()
        .unicode("cat flag.txt")
        .tuple()
        .reduce()
        .stop();
    let a = run(data.bytes());
    assert_eq!(a.error, None);
    assert!(called(&a, "os", "system"));
    assert_eq!(a.imports.len(), 1);
}

#[test]
fn follows_memoize_binput_and_long_binput() {
    let data = P::new()
        .proto(4)
        .sbu("os")
        .memoize()
        .pop()
        .sbu("system")
        .long_binput(70000)
        .pop()
        .binint1(1)
        .binput(9)
        .pop()
        .binget(0)
        .long_binget(70000)
        .stack_global()
        .stop();
    let a = run(data.bytes());
    assert_eq!(a.error, None);
    assert!(has(&a, "os", "system"));
}

#[test]
fn follows_dup() {
    let data = P::new()
        .proto(4)
        .sbu("os")
        .op(b'2')
        .pop()
        .sbu("system")
        .stack_global()
        .stop();
    assert!(has(&run(data.bytes()), "os", "system"));
    // DUP of an imported global, then REDUCE on the copy: the original import is called.
    let data = P::new()
        .proto(2)
        .global("os", "system")
        .op(b'2')
        .pop()
        .bu("id")
        .tuple1()
        .reduce()
        .stop();
    assert!(called(&run(data.bytes()), "os", "system"));
}

#[test]
fn pop_removes_a_mark_at_the_top_like_cpython() {
    // "os" "system" MARK POP STACK_GLOBAL: _pickle.c's load_pop drops the MARK, not "system".
    let data = P::new()
        .proto(4)
        .sbu("os")
        .sbu("system")
        .mark()
        .pop()
        .stack_global()
        .stop();
    let a = run(data.bytes());
    assert_eq!(a.error, None);
    assert!(has(&a, "os", "system"), "{a:?}");
}

#[test]
fn pop_mark_discards_decoys() {
    let data = P::new()
        .proto(4)
        .sbu("os")
        .sbu("system")
        .mark()
        .sbu("torch")
        .sbu("FloatStorage")
        .op(b'1')
        .stack_global()
        .stop();
    let a = run(data.bytes());
    assert_eq!(a.error, None);
    assert!(has(&a, "os", "system"));
    assert_eq!(a.imports.len(), 1);
}

#[test]
fn memo_overwrite_uses_the_last_value() {
    let data = P::new()
        .proto(4)
        .sbu("torch")
        .binput(0)
        .pop()
        .sbu("os")
        .binput(0)
        .pop()
        .binget(0)
        .sbu("system")
        .stack_global()
        .stop();
    let a = run(data.bytes());
    assert!(has(&a, "os", "system"), "{a:?}");
    assert!(!has(&a, "torch", "system"));
}

#[test]
fn reports_stack_global_fed_by_non_strings_as_unresolved() {
    // picklescan type-confusion-exploit.pkl: memo[0] = 42, memo[1] = "os", STACK_GLOBAL(42, "os").
    let data = P::new()
        .proto(4)
        .global("os", "system")
        .unicode("echo type-confusion")
        .tuple1()
        .reduce()
        .pop()
        .op(b'J')
        .raw(&42i32.to_le_bytes())
        .memoize()
        .sbu("os")
        .memoize()
        .binget(0)
        .binget(1)
        .stack_global()
        .binint1(0x42)
        .stop();
    let a = run(data.bytes());
    assert!(called(&a, "os", "system"));
    let second = a.imports.get(1);
    assert!(second.is_some_and(|i| i.module.is_none() && i.name.as_deref() == Some("os")));
    assert!(
        second
            .and_then(|i| i.note.as_ref())
            .is_some_and(|n| n.contains("integer"))
    );
}

#[test]
fn reports_module_built_by_reduce_as_unresolved() {
    // builtins.getattr(builtins.__import__("os"), "system"): the dangerous pieces are imported
    // directly; a STACK_GLOBAL fed from a REDUCE result is also reported as unresolvable.
    let data = P::new()
        .proto(4)
        .global("builtins", "str")
        .sbu("os")
        .tuple1()
        .reduce()
        .sbu("system")
        .stack_global()
        .stop();
    let a = run(data.bytes());
    let sg = a.imports.iter().find(|i| i.opcode == "STACK_GLOBAL");
    assert!(sg.is_some_and(|i| !i.resolved() && i.name.as_deref() == Some("system")));
    assert!(any_dangerous(&a));
}

#[test]
fn reports_ext_opcodes_as_unresolvable() {
    for (op, arg) in [
        (0x82u8, vec![1u8]),
        (0x83, vec![1, 2]),
        (0x84, vec![1, 0, 0, 0]),
    ] {
        let data = P::new()
            .proto(2)
            .op(op)
            .raw(&arg)
            .empty_tuple()
            .reduce()
            .stop();
        let a = run(data.bytes());
        assert_eq!(a.error, None);
        let imp = a.imports.first();
        assert!(imp.is_some_and(|i| !i.resolved() && i.called), "{a:?}");
        assert!(
            imp.and_then(|i| i.note.as_ref())
                .is_some_and(|n| n.contains("extension code"))
        );
    }
}

#[test]
fn reads_every_pickle_in_a_row() {
    // picklescan malicious6: a benign list pickle, then a malicious one.
    let benign = P::new().proto(4).op(b']').stop();
    let data = P::new().raw(benign.bytes()).raw(os_system(4).bytes());
    let a = run(data.bytes());
    assert_eq!(a.error, None);
    assert_eq!(a.pickles.len(), 2);
    assert!(a.imports.first().is_some_and(|i| i.pickle == 1));
    assert!(called(&a, "posix", "system"));
    assert_eq!(a.trailing, None);
}

#[test]
fn reports_trailing_non_pickle_data_as_a_fact() {
    // Legacy torch: pickles, then raw storage bytes starting with an 8-byte element count.
    let mut data = P::new().proto(2).op(b']').stop().0;
    let end = data.len() as u64;
    data.extend_from_slice(&640u64.to_le_bytes());
    data.extend_from_slice(&[0u8; 64]);
    let a = run(&data);
    assert_eq!(a.error, None);
    assert_eq!(a.trailing, Some(Trailing { offset: end }));
    assert!(a.bytes_read >= end);
}

#[test]
fn truncation_after_the_dangerous_opcode_keeps_the_import() {
    let data = P::new().proto(4).sbu("os").sbu("system").stack_global();
    let a = run(data.bytes());
    assert!(has(&a, "os", "system"));
    assert_eq!(code(&a), Some("truncated"));
    assert!(a.pickles.first().is_some_and(|p| !p.complete));
    // picklescan broken_model.pkl: exec imported, the argument's length runs off the end.
    let a = run(
        b"cbuiltins\nexec\n(X>\nf = open('my_file.txt', 'a'); f.write('Malicious'); f.close()tRX.",
    );
    assert!(has(&a, "builtins", "exec"));
    assert_eq!(code(&a), Some("truncated"));
}

#[test]
fn missing_memo_slot_stops_after_reporting_earlier_imports() {
    // picklescan keyerror-exploit.pkl.
    let data = P::new()
        .proto(4)
        .global("os", "system")
        .unicode("echo pwned")
        .tuple1()
        .reduce()
        .pop()
        .sbu("os")
        .memoize()
        .binget(3)
        .binget(0)
        .stack_global()
        .binint1(0x42)
        .stop();
    let a = run(data.bytes());
    assert!(called(&a, "os", "system"));
    assert_eq!(code(&a), Some("memo-missing"));
}

#[test]
fn sour_pickles_payload_is_fully_reported() {
    // Slaviero, "Sour Pickles" (BlackHat US 2011), as stored in picklescan malicious0.pkl.
    let data = b"c__builtin__\nglobals\n(tRp100\n0c__builtin__\ncompile\n(S'fl=open(\"/etc/passwd\");picklesmashed=fl.read();'\nS''\nS'exec'\ntRp101\n0c__builtin__\neval\n(g101\ng100\ntRp102\n0c__builtin__\ngetattr\n(c__builtin__\ndict\nS'get'\ntRp103\n0c__builtin__\napply\n(g103\n(g100\nS'picklesmashed'\nltRp104\n0g104\n.";
    let a = run(data);
    assert_eq!(a.error, None);
    for name in ["globals", "compile", "eval", "getattr", "apply"] {
        assert!(called(&a, "__builtin__", name), "{name}");
    }
    assert!(has(&a, "__builtin__", "dict"));
}

#[test]
fn attrgetter_chain_is_reported() {
    // picklescan malicious12.pkl (built with pickleassem): operator.attrgetter("system")(
    // builtins.__import__("os"))("echo pwned"), every value memoized.
    let data = P::new()
        .proto(4)
        .sbu("operator")
        .memoize()
        .sbu("attrgetter")
        .memoize()
        .stack_global()
        .memoize()
        .sbu("system")
        .memoize()
        .tuple1()
        .memoize()
        .reduce()
        .memoize()
        .sbu("builtins")
        .memoize()
        .sbu("__import__")
        .memoize()
        .stack_global()
        .memoize()
        .sbu("os")
        .memoize()
        .tuple1()
        .memoize()
        .reduce()
        .memoize()
        .tuple1()
        .memoize()
        .reduce()
        .memoize()
        .sbu("echo pwned")
        .memoize()
        .tuple1()
        .memoize()
        .reduce()
        .memoize()
        .stop();
    let a = run(data.bytes());
    assert_eq!(a.error, None);
    assert!(called(&a, "operator", "attrgetter"));
    assert!(called(&a, "builtins", "__import__"));
    assert!(any_dangerous(&a));
}

#[test]
fn published_gadgets_are_imported_and_called() {
    // picklescan advisories (tests/init_data_files.py), pickled by CPython with protocol 4.
    let gadgets = [
        ("torch.utils.bottleneck.__main__", "run_cprofile"), // GHSA-4r9r-ch6f-vxmx
        ("torch._dynamo.guards", "GuardBuilder.get"),        // GHSA-86cj-95qr-2p4f
        ("torch.utils.collect_env", "run"),                  // GHSA-f745-w6jp-hpxx
        ("torch.utils._config_module", "ConfigModule.load_config"), // GHSA-vv6j-3g6g-2pvj
        ("torch._inductor.codecache", "compile_file"),       // Malicious17
        ("pydoc", "pipepager"),                              // Malicious18
        ("numpy.testing._private.utils", "runstring"),       // Malicious22
        ("timeit", "timeit"),                                // Malicious21
        ("asyncio.unix_events", "_UnixSubprocessTransport._start"), // GHSA-q77w-mwjj-7mqx
        ("_io", "FileIO"),                                   // io_FileIO
        ("idlelib.pyshell", "ModifiedInterpreter.runcode"),  // GHSA-3gf5-cxq9-w223
        ("ensurepip", "_run_pip"),                           // GHSA-xp4f-hrf8-rxw7
        ("numpy", "testing._private.utils.runstring"),       // dotted getattr chain
    ];
    for (m, n) in gadgets {
        let data = P::new()
            .proto(4)
            .sbu(m)
            .memoize()
            .sbu(n)
            .memoize()
            .stack_global()
            .memoize()
            .sbu("payload")
            .tuple1()
            .reduce()
            .stop();
        let a = run(data.bytes());
        assert!(called(&a, m, n), "{m}.{n}");
        assert!(any_dangerous(&a), "{m}.{n} must classify as dangerous");
    }
}

#[test]
fn methodcaller_on_pydoc_locate_is_reported() {
    // GHSA-84r2-jw7c-4r5q: methodcaller("system", "echo pwned")(pydoc.locate("os")).
    let data = P::new()
        .proto(4)
        .sbu("_operator")
        .sbu("methodcaller")
        .stack_global()
        .sbu("system")
        .sbu("echo pwned")
        .tuple2()
        .reduce()
        .sbu("pydoc")
        .sbu("locate")
        .stack_global()
        .sbu("os")
        .tuple1()
        .reduce()
        .tuple1()
        .reduce()
        .stop();
    let a = run(data.bytes());
    assert_eq!(a.error, None);
    assert!(called(&a, "_operator", "methodcaller"));
    assert!(called(&a, "pydoc", "locate"));
}

#[test]
fn build_on_an_imported_object_counts_as_a_call() {
    // BUILD with a (None, slotstate) tuple on a module-level object sets attributes.
    let data = P::new()
        .proto(2)
        .global("torch._utils", "_rebuild_tensor_v2")
        .op(b'N')
        .op(b'}')
        .tuple2()
        .build()
        .stop();
    let a = run(data.bytes());
    assert!(
        a.imports
            .first()
            .is_some_and(|i| i.called && i.call_opcode == Some("BUILD"))
    );
}

/// `torch.save({"weight": tensor})` data.pkl shape (protocol 2, persistent ids).
fn torch_state_dict() -> P {
    P::new()
        .proto(2)
        .global("collections", "OrderedDict")
        .binput(0)
        .empty_tuple()
        .reduce()
        .binput(1)
        .bu("weight")
        .binput(2)
        .global("torch._utils", "_rebuild_tensor_v2")
        .binput(3)
        .mark()
        .mark()
        .bu("storage")
        .binput(4)
        .global("torch", "FloatStorage")
        .binput(5)
        .bu("0")
        .binput(6)
        .bu("cpu")
        .binput(7)
        .binint1(4)
        .tuple()
        .binput(8)
        .op(b'Q')
        .binint1(0)
        .binint1(2)
        .binint1(2)
        .tuple2()
        .binput(9)
        .binint1(2)
        .binint1(1)
        .tuple2()
        .binput(10)
        .op(0x89)
        .global("collections", "OrderedDict")
        .binput(11)
        .empty_tuple()
        .reduce()
        .binput(12)
        .tuple()
        .binput(13)
        .reduce()
        .binput(14)
        .op(b's')
        .op(b'}')
        .bu("_metadata")
        .op(b'}')
        .op(b's')
        .build()
        .stop()
}

#[test]
fn torch_state_dict_has_only_safe_imports() {
    let a = run(torch_state_dict().bytes());
    assert_eq!(a.error, None, "{a:?}");
    assert!(all_safe(&a), "{a:?}");
    assert!(called(&a, "torch._utils", "_rebuild_tensor_v2"));
    assert!(!called(&a, "torch", "FloatStorage"));
}

/// The first two pickles of a legacy PyTorch file: torch's magic number and protocol version
/// 1001 (`torch/serialization.py` `MAGIC_NUMBER`, `PROTOCOL_VERSION`).
fn legacy_magic_and_version() -> (P, P) {
    let magic = P::new()
        .proto(2)
        .op(0x8a)
        .op(10)
        .raw(&[0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19])
        .stop();
    let version = P::new()
        .proto(2)
        .op(b'M')
        .raw(&1001u16.to_le_bytes())
        .stop();
    (magic, version)
}

/// A legacy PyTorch file's five pickles (magic number, protocol version, sys info, a state
/// dict, storage keys) followed by the storage block `block`; the block's offset.
fn legacy_torch_file(block: &[u8]) -> (Vec<u8>, u64) {
    let (magic, version) = legacy_magic_and_version();
    let sys_info = P::new()
        .proto(2)
        .op(b'}')
        .binput(0)
        .bu("little_endian")
        .op(0x88)
        .op(b's')
        .stop();
    let keys = P::new()
        .proto(2)
        .op(b']')
        .binput(0)
        .bu("0")
        .binput(1)
        .op(b'a')
        .stop();
    let mut data = P::new()
        .raw(magic.bytes())
        .raw(version.bytes())
        .raw(sys_info.bytes())
        .raw(torch_state_dict().bytes())
        .raw(keys.bytes())
        .0;
    let end = data.len() as u64;
    data.extend_from_slice(block);
    (data, end)
}

#[test]
fn legacy_torch_file_reads_all_pickles_then_stops_at_storage() {
    let mut block = 4u64.to_le_bytes().to_vec();
    block.extend_from_slice(&[0u8; 16]);
    let (data, end) = legacy_torch_file(&block);
    for a in [
        run(&data),
        analyze_torch_legacy(&mut &data[..], &Limits::default()),
    ] {
        assert_eq!(a.error, None, "{a:?}");
        assert_eq!(a.pickles.len(), 5);
        assert_eq!(a.trailing, Some(Trailing { offset: end }));
        assert!(all_safe(&a));
    }
}

#[test]
fn legacy_storage_block_is_never_parsed_as_a_pickle_whatever_its_first_bytes() {
    // Issue 32: an element count of 37757 is `} 0x93 0 ..` (EMPTY_DICT, STACK_GLOBAL), one of
    // 640 is `0x80 0x02 0 ..`; a generic read takes the first for a pickle and fails on it.
    for count in [37757u64, 640, 99] {
        let mut block = count.to_le_bytes().to_vec();
        block.extend_from_slice(b"\x80\x02cos\nsystem\n");
        let (data, end) = legacy_torch_file(&block);
        let a = analyze_torch_legacy(&mut &data[..], &Limits::default());
        assert_eq!(a.error, None, "{count}: {a:?}");
        assert_eq!(a.pickles.len(), 5);
        assert_eq!(a.trailing, Some(Trailing { offset: end }));
        assert_eq!(a.trailing_head.first(), block.first());
        assert!(all_safe(&a));
    }
    let (data, _) = legacy_torch_file(&37757u64.to_le_bytes());
    assert!(run(&data).error.is_some(), "the generic read misparses it");
}

#[test]
fn a_hidden_pickle_counts_only_from_a_valid_proto_to_its_stop() {
    let hidden = |b: &[u8]| analyze_hidden(&mut &b[..], &Limits::default());
    let payload = os_system(2);
    let mut padded = payload.bytes().to_vec();
    padded.extend_from_slice(&[0xff; 8]);
    let a = hidden(&padded).expect("a complete pickle");
    assert!(called(&a, "posix", "system"));
    assert_eq!(a.pickles.len(), 1);
    // Raw tensor bytes that begin like opcodes are no pickle at all.
    for raw in [
        &b"\x80\x02\x00\x00\x80\x3f"[..],
        b"}\x93\x00\x00\x80\x3f",
        b"cos\nsystem\n(S'ls'\ntR.",
        b"\x80\x09N.",
        b"\x80\x02cos\nsystem\n",
        b"",
    ] {
        assert!(hidden(raw).is_none(), "{raw:?}");
    }
}

#[test]
fn numpy_array_pickle_has_only_safe_imports() {
    // pickle.dumps(np.arange(6, dtype="<f4").reshape(2, 3), protocol=2), numpy 2.4.
    let data = b"\x80\x02cnumpy._core.multiarray\n_reconstruct\nq\x00cnumpy\nndarray\nq\x01K\x00\x85q\x02c_codecs\nencode\nq\x03X\x01\x00\x00\x00bq\x04X\x06\x00\x00\x00latin1q\x05\x86q\x06Rq\x07\x87q\x08Rq\t(K\x01K\x02K\x03\x86q\ncnumpy\ndtype\nq\x0bX\x02\x00\x00\x00f4q\x0c\x89\x88\x87q\rRq\x0e(K\x03X\x01\x00\x00\x00<q\x0fNNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00tq\x10b\x89h\x03X\x1b\x00\x00\x00\x00\x00\x00\x00\x00\x00\xc2\x80?\x00\x00\x00@\x00\x00@@\x00\x00\xc2\x80@\x00\x00\xc2\xa0@q\x11h\x05\x86q\x12Rq\x13tq\x14b.";
    let a = run(data);
    assert_eq!(a.error, None);
    assert!(all_safe(&a), "{a:?}");
    // Protocol 5 with an in-band buffer.
    let data = b"\x80\x05\x95\x8e\x00\x00\x00\x00\x00\x00\x00\x8c\x13numpy._core.numeric\x94\x8c\x0b_frombuffer\x94\x93\x94(\x96\x18\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80?\x00\x00\x00@\x00\x00@@\x00\x00\x80@\x00\x00\xa0@\x94\x8c\x05numpy\x94\x8c\x05dtype\x94\x93\x94\x8c\x02f4\x94\x89\x88\x87\x94R\x94(K\x03\x8c\x01<\x94NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00t\x94bK\x02K\x03\x86\x94\x8c\x01C\x94t\x94R\x94.";
    let a = run(data);
    assert_eq!(a.error, None);
    assert!(all_safe(&a), "{a:?}");
}

/// joblib.dump({"w": np.arange(6, dtype="<f4").reshape(2, 3), "n": 3}), joblib 1.6 / numpy 2.4.
const JOBLIB_ARRAY: &[u8] = b"\x80\x04\x95\xda\x00\x00\x00\x00\x00\x00\x00}\x94(\x8c\x01w\x94\x8c\x13joblib.numpy_pickle\x94\x8c\x11NumpyArrayWrapper\x94\x93\x94)\x81\x94}\x94(\x8c\x08subclass\x94\x8c\x05numpy\x94\x8c\x07ndarray\x94\x93\x94\x8c\x05shape\x94K\x02K\x03\x86\x94\x8c\x05order\x94\x8c\x01C\x94\x8c\x05dtype\x94h\x08\x8c\x05dtype\x94\x93\x94\x8c\x02f4\x94\x89\x88\x87\x94R\x94(K\x03\x8c\x01<\x94NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00t\x94b\x8c\nallow_mmap\x94\x88\x8c\x1bnumpy_array_alignment_bytes\x94K\x10ub\n\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x00\x00\x00\x00\x00\x00\x80?\x00\x00\x00@\x00\x00@@\x00\x00\x80@\x00\x00\xa0@\x95\x08\x00\x00\x00\x00\x00\x00\x00\x8c\x01n\x94K\x03u.";

#[test]
fn joblib_array_pickle_skips_raw_data_and_is_safe() {
    let a = run(JOBLIB_ARRAY);
    assert_eq!(a.error, None, "{a:?}");
    assert!(all_safe(&a), "{a:?}");
    assert_eq!(a.raw_regions.len(), 1);
    assert_eq!(a.raw_regions.first().map(|r| r.len), Some(1 + 10 + 24));
    assert_eq!(a.pickles.len(), 1);
    assert_eq!(a.trailing, None);
}

#[test]
fn joblib_object_array_reads_the_nested_pickle() {
    // joblib.dump([np.array([1, "x"], dtype=object)]): the array is a nested pickle.
    let data = b"\x80\x04\x95\xd3\x00\x00\x00\x00\x00\x00\x00]\x94\x8c\x13joblib.numpy_pickle\x94\x8c\x11NumpyArrayWrapper\x94\x93\x94)\x81\x94}\x94(\x8c\x08subclass\x94\x8c\x05numpy\x94\x8c\x07ndarray\x94\x93\x94\x8c\x05shape\x94K\x02\x85\x94\x8c\x05order\x94\x8c\x01C\x94\x8c\x05dtype\x94h\x07\x8c\x05dtype\x94\x93\x94\x8c\x02O8\x94\x89\x88\x87\x94R\x94(K\x03\x8c\x01|\x94NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK?t\x94b\x8c\nallow_mmap\x94\x89\x8c\x1bnumpy_array_alignment_bytes\x94K\x10ub\x80\x05\x95\x90\x00\x00\x00\x00\x00\x00\x00\x8c\x16numpy._core.multiarray\x94\x8c\x0c_reconstruct\x94\x93\x94\x8c\x05numpy\x94\x8c\x07ndarray\x94\x93\x94K\x00\x85\x94C\x01b\x94\x87\x94R\x94(K\x01K\x02\x85\x94h\x03\x8c\x05dtype\x94\x93\x94\x8c\x02O8\x94\x89\x88\x87\x94R\x94(K\x03\x8c\x01|\x94NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK?t\x94b\x89]\x94(K\x01\x8c\x01x\x94et\x94b.a.";
    let a = run(data);
    assert_eq!(a.error, None, "{a:?}");
    assert!(all_safe(&a), "{a:?}");
    assert_eq!(a.pickles.len(), 1);
}

#[test]
fn rejects_joblib_wrapper_without_a_dtype() {
    let data = P::new()
        .proto(4)
        .global("joblib.numpy_pickle", "NumpyArrayWrapper")
        .empty_tuple()
        .op(0x81)
        .op(b'}')
        .build()
        .stop();
    assert_eq!(code(&run(data.bytes())), Some("joblib-array-unsized"));
}

#[test]
fn rejects_unknown_opcode() {
    let a = run(b"\x80\x04\xff.");
    assert_eq!(code(&a), Some("unknown-opcode"));
    assert_eq!(a.error.and_then(|e| e.offset), Some(2));
}

#[test]
fn rejects_stack_underflow() {
    assert_eq!(code(&run(b"\x80\x04R.")), Some("stack-underflow"));
    // Values below a MARK cannot be popped: STACK_GLOBAL after MARK underflows.
    let data = P::new()
        .proto(4)
        .sbu("os")
        .sbu("system")
        .mark()
        .stack_global()
        .stop();
    assert_eq!(code(&run(data.bytes())), Some("stack-underflow"));
    assert_eq!(code(&run(b".")), Some("stack-underflow"));
}

#[test]
fn rejects_missing_mark() {
    assert_eq!(code(&run(b"K\x01t.")), Some("mark-missing"));
}

#[test]
fn rejects_missing_memo_entry() {
    assert_eq!(code(&run(b"\x80\x02h\x05.")), Some("memo-missing"));
}

#[test]
fn rejects_odd_dict_items() {
    assert_eq!(code(&run(b"(K\x01d.")), Some("odd-items"));
    assert_eq!(code(&run(b"}(K\x01u.")), Some("odd-items"));
}

#[test]
fn rejects_bad_arguments() {
    assert_eq!(code(&run(b"Sunquoted\n.")), Some("bad-argument"));
    assert_eq!(code(&run(b"\x80\x02\x82\x00.")), Some("bad-argument"));
    assert_eq!(code(&run(b"T\xff\xff\xff\xff.")), Some("bad-argument"));
    assert_eq!(code(&run(b"gx\n.")), Some("bad-argument"));
}

#[test]
fn rejects_unsupported_protocol() {
    assert_eq!(code(&run(b"\x80\x06N.")), Some("unsupported-protocol"));
}

#[test]
fn rejects_io_errors() {
    struct Broken;
    impl std::io::Read for Broken {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("disk on fire"))
        }
    }
    let mut r = std::io::BufReader::new(Broken);
    let a = analyze(&mut r, &Limits::default());
    assert_eq!(code(&a), Some("io"));
}

#[test]
fn rejects_oversized_length_fields_without_allocating() {
    // BINUNICODE8 claiming 2^62 bytes: checked against the limit before any read.
    let mut data = vec![0x80, 4, 0x8d];
    data.extend_from_slice(&(1u64 << 62).to_le_bytes());
    let a = run(&data);
    assert_eq!(code(&a), Some("limit-string"));
    // Under the limit but past the end of the stream: skipped, then truncated.
    let mut data = vec![0x80, 4, b'B'];
    data.extend_from_slice(&u32::MAX.to_le_bytes());
    assert_eq!(code(&run(&data)), Some("truncated"));
}

#[test]
fn rejects_line_over_limit() {
    let limits = Limits {
        max_line_len: 64,
        ..Limits::default()
    };
    let mut data = b"V".to_vec();
    data.extend_from_slice(&[b'a'; 100]);
    data.extend_from_slice(b"\n.");
    assert_eq!(code(&run_with(&data, &limits)), Some("limit-line"));
}

#[test]
fn long_names_are_reported_unresolved() {
    let long = "m".repeat(300);
    let data = P::new().global(&long, "system").op(b'N').stop();
    let a = run(data.bytes());
    let imp = a.imports.first();
    assert!(imp.is_some_and(|i| i.module.is_none() && i.name.as_deref() == Some("system")));
}

#[test]
fn huge_memo_index_costs_nothing() {
    let data = P::new()
        .proto(4)
        .sbu("os")
        .long_binput(u32::MAX)
        .pop()
        .long_binget(u32::MAX)
        .sbu("system")
        .stack_global()
        .stop();
    let a = run(data.bytes());
    assert_eq!(a.error, None);
    assert!(has(&a, "os", "system"));
}

#[test]
fn rejects_memo_over_limit() {
    let limits = Limits {
        max_memo: 2,
        ..Limits::default()
    };
    let data = P::new()
        .op(b'N')
        .binput(0)
        .binput(1)
        .binput(1)
        .binput(2)
        .stop();
    assert_eq!(code(&run_with(data.bytes(), &limits)), Some("limit-memo"));
}

#[test]
fn rejects_marks_over_limit() {
    let limits = Limits {
        max_marks: 10,
        ..Limits::default()
    };
    let data = vec![b'('; 11];
    assert_eq!(code(&run_with(&data, &limits)), Some("limit-marks"));
    // Deep but within the default limit: no recursion, just a truncated stream.
    assert_eq!(code(&run(&vec![b'('; 50_000])), Some("truncated"));
}

#[test]
fn rejects_stack_over_limit() {
    let limits = Limits {
        max_stack: 4,
        ..Limits::default()
    };
    assert_eq!(code(&run_with(b"NNNNN.", &limits)), Some("limit-stack"));
}

#[test]
fn rejects_opcodes_over_limit() {
    let limits = Limits {
        max_opcodes: 3,
        ..Limits::default()
    };
    assert_eq!(code(&run_with(b"NN0N.", &limits)), Some("limit-opcodes"));
}

#[test]
fn rejects_pickles_over_limit() {
    let limits = Limits {
        max_pickles: 2,
        ..Limits::default()
    };
    let a = run_with(b"\x80\x02N.\x80\x02N.\x80\x02N.", &limits);
    assert_eq!(code(&a), Some("limit-pickles"));
    assert_eq!(a.pickles.len(), 2);
}

#[test]
fn rejects_imports_over_limit() {
    let limits = Limits {
        max_imports: 1,
        ..Limits::default()
    };
    let data = P::new().global("a", "b").global("c", "d").stop();
    assert_eq!(
        code(&run_with(data.bytes(), &limits)),
        Some("limit-imports")
    );
}

#[test]
fn sniffs_pickles_of_every_protocol() {
    for p in 0..=5u8 {
        assert!(looks_like_pickle(os_system(p).bytes()), "protocol {p}");
    }
    assert!(looks_like_pickle(b"cos\nsystem\n(S'ls'\ntR."));
    assert!(looks_like_pickle(b"(lp0\nI1\naI2\na."));
    assert!(looks_like_pickle(b"}q\x00(X\x01\x00\x00\x00aq\x01K\x01u."));
    assert!(looks_like_pickle(torch_state_dict().bytes()));
    assert!(looks_like_pickle(JOBLIB_ARRAY));
    // Head cut in the middle of an argument still counts.
    let head = os_system(0).0;
    assert!(looks_like_pickle(head.get(..20).unwrap_or_default()));
    // STACK_GLOBAL from protocol 0 strings (picklescan malicious11 starts with V).
    assert!(looks_like_pickle(
        b"Vos\np2\n0Vsystem\np3\n0g2\ng3\n\x93(Vls\ntR."
    ));
}

#[test]
fn does_not_sniff_text_files_as_pickles() {
    let texts: [&[u8]; 14] = [
        b"class Foo:\n    pass\n",
        b"import os\nos.system('ls')\n",
        b"{\"architectures\": [\"BertModel\"]}\n",
        b"# Model card\n\nThis model...\n",
        b"a,b,c\n1,2,3\n",
        b"cat\ndog\n",
        b"cat\ndog\nbird\n",
        b"Very good.\n",
        b"(see below)\n",
        b"---\nlicense: mit\n---\n",
        b"def main():\n    pass\n",
        b"config = {\n}\n",
        b"",
        b"Name,Value\nN,1\n",
    ];
    for t in texts {
        assert!(!looks_like_pickle(t), "{:?}", String::from_utf8_lossy(t));
    }
}

#[test]
fn does_not_sniff_binary_formats_as_pickles() {
    let bins: [&[u8]; 6] = [
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
        b"\x7fELF\x02\x01\x01\x00",
        b"PK\x03\x04\x14\x00\x00\x00",
        b"\x80\x06N.",
        b"\x80\x02\x00\x00\x00\x00\x00\x00",
        b"\x93NUMPY\x01\x00v\x00{'descr': '<f4'",
    ];
    for b in bins {
        assert!(!looks_like_pickle(b), "{b:?}");
    }
    // Raw storage element counts after a legacy torch pickle.
    for n in [16u64, 40, 99, 128, 640, 2_622_080] {
        let mut head = n.to_le_bytes().to_vec();
        head.extend_from_slice(&[0u8; 32]);
        assert!(!looks_like_pickle(&head), "{n}");
    }
}

mod robustness {
    use super::*;
    use proptest::prelude::*;

    fn check(data: &[u8]) {
        let a = run(data);
        assert!(a.bytes_read <= data.len() as u64);
        let _ = looks_like_pickle(data);
        let mut r = data;
        let mut out = Vec::new();
        assert!(disassemble(&mut r, &mut out, &Limits::default()).is_ok());
    }

    fn seeds() -> Vec<Vec<u8>> {
        let mut s: Vec<Vec<u8>> = (0..=5u8).map(|p| os_system(p).0).collect();
        s.push(torch_state_dict().0);
        s.push(JOBLIB_ARRAY.to_vec());
        s
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, .. ProptestConfig::default() })]

        #[test]
        fn random_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..512)) {
            check(&data);
        }

        #[test]
        fn mutated_pickles_never_panic(
            seed in 0usize..8,
            edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8),
        ) {
            let seeds = seeds();
            let mut data = seeds.get(seed % seeds.len()).cloned().unwrap_or_default();
            for (at, byte) in edits {
                if data.is_empty() { break; }
                let i = at % data.len();
                if let Some(slot) = data.get_mut(i) { *slot = byte; }
            }
            check(&data);
        }

        #[test]
        fn protocol_headed_noise_never_panics(
            proto in 0u8..8,
            body in proptest::collection::vec(any::<u8>(), 0..256),
        ) {
            let mut data = vec![0x80, proto];
            data.extend_from_slice(&body);
            check(&data);
        }
    }
}

#[test]
fn mark_fence_matches_cpython() {
    // CPython 3.11 raises "unexpected MARK found" for each of these (checked by hand).
    assert_eq!(code(&run(b"](K\x01a.")), Some("stack-underflow"));
    assert_eq!(code(&run(b"N(.")), Some("stack-underflow"));
    assert_eq!(
        code(&run(b"\x80\x04\x8c\x02os\x8c\x06system(\x93.")),
        Some("stack-underflow")
    );
}

// ---- issue 16: broken streams that hide a payload ----

/// Each broken form after `os.system('id')`: the stream is still sniffed as a pickle and the
/// import is still found, next to the parse error.
#[test]
fn broken_streams_keep_the_dangerous_import() {
    let forms: [(&[u8], &str); 6] = [
        (b"cos\nsystem\nS'id'\n\x85R\xff.", "unknown-opcode"),
        (
            b"\x80\x09cos\nsystem\nS'id'\n\x85R.",
            "unsupported-protocol",
        ),
        (b"\x80\x02cos\nsystem\nS'id'\n\x85Rhc.", "memo-missing"),
        (
            b"\x80\x02cos\nsystem\nS'id'\n\x85R00000.",
            "stack-underflow",
        ),
        (b"\x80\x02cos\nsystem\nS'id'\n\x85R", "truncated"),
        (b"cos\nsystem\nS'id", "truncated"),
    ];
    for (data, want) in forms {
        assert!(looks_like_pickle(data), "{data:?} must sniff as a pickle");
        let a = run(data);
        assert!(has(&a, "os", "system"), "{data:?}: {:?}", a.imports);
        assert_eq!(code(&a), Some(want), "{data:?}");
    }
}

#[test]
fn unsupported_protocol_without_an_import_is_not_sniffed() {
    assert!(!looks_like_pickle(b"\x80\x09N."));
    assert!(!looks_like_pickle(b"\x80\x09cat\ndog\n"));
}

/// The `data.pkl` `torch.save` writes for `{'w': tensor}` (protocol 2): a FloatStorage of
/// `numel` elements and a view `(offset, (size,), (stride,))` over it.
fn torch_view_dict(numel: i32, offset: i32, size: i32, stride: i32) -> Vec<u8> {
    let int = |i: i32| [&b"J"[..], &i.to_le_bytes()].concat();
    [
        &b"\x80\x02}q\x00X\x01\x00\x00\x00wq\x01ctorch._utils\n_rebuild_tensor_v2\nq\x02(("[..],
        b"X\x07\x00\x00\x00storageq\x03ctorch\nFloatStorage\nq\x04X\x01\x00\x00\x000q\x05",
        b"X\x03\x00\x00\x00cpuq\x06",
        &int(numel),
        b"tq\x07Q",
        &int(offset),
        &int(size),
        b"\x85q\x08",
        &int(stride),
        b"\x85q\x09\x89ccollections\nOrderedDict\nq\x0a)Rq\x0btq\x0cRq\x0ds.",
    ]
    .concat()
}

#[test]
fn records_torch_storages_and_views() {
    let a = run(&torch_view_dict(4, 0, 4, 1));
    assert!(a.error.is_none(), "{:?}", a.error);
    assert_eq!(a.storages.len(), 1);
    let s = &a.storages[0];
    assert_eq!(
        (s.key.as_str(), s.type_name.as_deref(), s.numel),
        ("0", Some("torch.FloatStorage"), Some(4))
    );
    assert_eq!(a.views.len(), 1);
    let v = &a.views[0];
    assert_eq!(v.function, "_rebuild_tensor_v2");
    assert_eq!(v.storage, Some(0));
    assert_eq!(v.storage_offset, Some(0));
    assert_eq!(v.size.as_deref(), Some(&[4][..]));
    assert_eq!(v.stride.as_deref(), Some(&[1][..]));
    assert!(a.shapes.is_empty(), "{:?}", a.shapes);
    assert!(a.shapes.is_empty());
}

#[test]
fn issue_16_flags_tensor_views_past_their_storage() {
    for (offset, size, stride, want) in [
        (0, 64, 1, "needs 64 element(s), 60 past the end"),
        (1000, 4, 1, "needs 1004 element(s)"),
        (0, 4, 1 << 20, "past the end"),
        (0, 4, -1, "negative stride -1"),
        (-8, 1, 1, "negative storage_offset -8"),
    ] {
        let a = run(&torch_view_dict(4, offset, size, stride));
        let shapes = &a.shapes;
        assert_eq!(shapes.len(), 1, "{offset} {size} {stride}");
        assert_eq!(shapes[0].code, "tensor-view-out-of-bounds");
        assert!(shapes[0].message.contains(want), "{}", shapes[0].message);
        assert!(
            shapes[0].message.contains("declared with 4 element(s)"),
            "{}",
            shapes[0].message
        );
    }
}

#[test]
fn issue_16_flags_container_opcodes_aimed_at_globals() {
    let forms: [&[u8]; 5] = [
        b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\nX\x01\x00\x00\x00xX\x01\x00\x00\x00ys.",
        b"\x80\x02ccollections\nOrderedDict\n(X\x01\x00\x00\x00kX\x01\x00\x00\x00vu.",
        b"\x80\x02ccollections\nOrderedDict\nX\x01\x00\x00\x00xa.",
        b"\x80\x02ctorch._utils\n_rebuild_tensor\n}X\x01\x00\x00\x00aX\x01\x00\x00\x00bsb.",
        b"\x80\x02X\x01\x00\x00\x00s(X\x01\x00\x00\x00xe.",
    ];
    for data in forms {
        let a = run(data);
        assert!(a.error.is_none(), "{data:?}: {:?}", a.error);
        assert_eq!(a.shapes.len(), 1, "{data:?}: {:?}", a.shapes);
        assert_eq!(a.shapes[0].code, "non-container-target");
    }
    let a = run(forms[0]);
    assert!(
        a.shapes[0]
            .message
            .contains("`torch._utils._rebuild_tensor_v2` itself"),
        "{}",
        a.shapes[0].message
    );
}

#[test]
fn containers_built_by_calls_are_ordinary_targets() {
    // OrderedDict() then SETITEMS, a list then APPENDS, an object then BUILD: real pickles.
    let forms: [&[u8]; 3] = [
        b"\x80\x02ccollections\nOrderedDict\n)R(X\x01\x00\x00\x00kX\x01\x00\x00\x00vu.",
        b"\x80\x02](K\x01K\x02e.",
        b"\x80\x02cargparse\nNamespace\n)R}X\x01\x00\x00\x00aK\x01sb.",
    ];
    for data in forms {
        let a = run(data);
        assert!(a.error.is_none(), "{data:?}: {:?}", a.error);
        assert!(a.shapes.is_empty(), "{data:?}: {:?}", a.shapes);
    }
}

/// `{'w': tensor}` as torch 2.x writes a tensor of a newer dtype: `_rebuild_tensor_v3` over a
/// storage of `storage_type` declared with `numel` (bytes for `UntypedStorage`), the dtype last.
fn torch_v3_dict(
    storage_type: &str,
    numel: i32,
    (offset, size, stride): (i32, i32, i32),
    dtype: &str,
) -> Vec<u8> {
    let int = |i: i32| [&b"J"[..], &i.to_le_bytes()].concat();
    [
        &b"\x80\x02}q\x00X\x01\x00\x00\x00wq\x01ctorch._utils\n_rebuild_tensor_v3\nq\x02(("[..],
        b"X\x07\x00\x00\x00storageq\x03ctorch\n",
        storage_type.as_bytes(),
        b"\nq\x04X\x01\x00\x00\x000q\x05X\x03\x00\x00\x00cpuq\x06",
        &int(numel),
        b"tq\x07Q",
        &int(offset),
        &int(size),
        b"\x85q\x08",
        &int(stride),
        b"\x85q\x09\x89ccollections\nOrderedDict\nq\x0a)Rq\x0bctorch\n",
        dtype.as_bytes(),
        b"\nq\x0etq\x0cRq\x0ds.",
    ]
    .concat()
}

#[test]
fn issue_16_sizes_v3_views_by_their_dtype() {
    // 16 bytes hold 16 float8, 8 uint16 or 4 float32 elements.
    for (dtype, size) in [
        ("float8_e4m3fn", 16),
        ("uint16", 8),
        ("float32", 4),
        ("bfloat16", 8),
    ] {
        let a = run(&torch_v3_dict("UntypedStorage", 16, (0, size, 1), dtype));
        assert!(a.error.is_none(), "{dtype}: {:?}", a.error);
        assert_eq!(a.views.len(), 1);
        assert_eq!(
            a.views[0].dtype.as_deref(),
            Some(format!("torch.{dtype}").as_str())
        );
        assert!(a.shapes.is_empty(), "{dtype}: {:?}", a.shapes);
    }
    // As torch 2.x spells the untyped storage class.
    let a = run(&replace(
        &torch_v3_dict("UntypedStorage", 4, (0, 5, 1), "uint8"),
        b"ctorch\nUntypedStorage",
        b"ctorch.storage\nUntypedStorage",
    ));
    assert_eq!(a.shapes.len(), 1, "{:?}", a.shapes);
    // v3 over a typed storage reinterprets its bytes: 4 floats are 8 bfloat16 values.
    let a = run(&torch_v3_dict("FloatStorage", 4, (0, 8, 1), "bfloat16"));
    assert!(a.shapes.is_empty(), "{:?}", a.shapes);
}

#[test]
fn issue_16_flags_v3_and_untyped_views_past_their_storage() {
    for (storage, numel, view, dtype, want) in [
        (
            "UntypedStorage",
            16,
            (0, 5, 1),
            "float32",
            "needs 5 element(s), 1 past the end",
        ),
        ("UntypedStorage", 16, (8, 5, 1), "uint16", "needs 13"),
        ("UntypedStorage", 15, (0, 4, 1), "float32", "needs 4"),
        ("FloatStorage", 4, (0, 3, 1), "float64", "needs 3"),
    ] {
        let a = run(&torch_v3_dict(storage, numel, view, dtype));
        assert_eq!(a.shapes.len(), 1, "{storage} {dtype}: {:?}", a.shapes);
        let m = &a.shapes[0].message;
        assert_eq!(a.shapes[0].code, "tensor-view-out-of-bounds");
        assert!(m.contains(want), "{m}");
        assert!(m.contains(&format!("torch.{dtype}")), "{m}");
    }
    // `_rebuild_tensor_v2` over an untyped storage: torch.load types it as uint8 (bytes).
    let v2 = replace(
        &torch_view_dict(16, 0, 17, 1),
        b"FloatStorage",
        b"UntypedStorage",
    );
    let a = run(&v2);
    assert_eq!(a.shapes.len(), 1, "{:?}", a.shapes);
    assert!(a.shapes[0].message.contains("needs 17 element(s), 1 past"));
}

#[test]
fn v3_views_with_an_unknown_dtype_are_not_judged() {
    let a = run(&torch_v3_dict(
        "UntypedStorage",
        1,
        (0, 64, 1),
        "not_a_dtype",
    ));
    assert!(a.shapes.is_empty(), "{:?}", a.shapes);
}

/// A legacy (non-zip) torch file: the five pickles (the data being [`torch_state_dict`], one
/// FloatStorage `0` of 4 elements) and then `block` as its storage block. `keys` is the
/// storage key list.
fn legacy_file(keys: &[&str], block: &[u8]) -> Vec<u8> {
    let (magic, version) = legacy_magic_and_version();
    let sys_info = P::new().proto(2).op(b'}').stop();
    let mut list = P::new().proto(2).op(b']').mark();
    for k in keys {
        list = list.bu(k);
    }
    let list = list.op(b'e').stop();
    let mut data = P::new()
        .raw(magic.bytes())
        .raw(version.bytes())
        .raw(sys_info.bytes())
        .raw(torch_state_dict().bytes())
        .raw(list.bytes())
        .0;
    data.extend_from_slice(block);
    data
}

fn legacy_shapes(data: &[u8]) -> Vec<Shape> {
    let a = run(data);
    let mut rest = data.get(a.bytes_read as usize..).unwrap_or_default();
    crate::inspect::pickle::torch::check_legacy_block(&a, &mut rest, 100_000)
}

fn record(count: u64, bytes: usize) -> Vec<u8> {
    [&count.to_le_bytes()[..], &vec![7u8; bytes]].concat()
}

#[test]
fn issue_16_accepts_a_legacy_storage_block_that_matches() {
    let data = legacy_file(&["0"], &record(4, 16));
    let a = run(&data);
    assert_eq!(
        a.string_list.as_ref().map(|l| (l.pickle, l.items.clone())),
        Some((4, vec!["0".to_string()]))
    );
    let end = a.trailing.map(|t| t.offset).unwrap_or_default();
    assert_eq!(a.trailing_head.len() as u64, a.bytes_read - end);
    assert!(legacy_shapes(&data).is_empty());
    // A block longer than the lookahead is read on from the reader.
    let data = legacy_file(&["0"], &record(4, 16));
    // BININT1 4 before TUPLE is the declared count in the persistent id; make it 1024.
    let mut big = replace(&data, b"K\x04t", b"M\x00\x04t");
    let cut = big.len() - 24;
    big.truncate(cut);
    big.extend(record(1024, 4096));
    assert!(legacy_shapes(&big).is_empty(), "{:?}", legacy_shapes(&big));
}

#[test]
fn issue_16_flags_legacy_storage_blocks_that_do_not_match() {
    for (block, want) in [
        (record(5, 20), "storage-size-mismatch"),
        (record(4, 15), "storage-block-truncated"),
        (record(4, 16)[..5].to_vec(), "storage-block-truncated"),
        (Vec::new(), "storage-block-truncated"),
        (
            [record(4, 16), vec![0; 3]].concat(),
            "storage-block-trailing",
        ),
    ] {
        let shapes = legacy_shapes(&legacy_file(&["0"], &block));
        assert_eq!(
            shapes.first().map(|s| s.code),
            Some(want),
            "{want}: {shapes:?}"
        );
    }
    let shapes = legacy_shapes(&legacy_file(&["9"], &record(4, 16)));
    assert_eq!(shapes[0].code, "storage-missing");
    // A hostile count is skipped, never allocated: the file simply ends.
    let shapes = legacy_shapes(&legacy_file(&["0"], &record(1 << 60, 16)));
    assert_eq!(shapes[0].code, "storage-size-mismatch");
    assert_eq!(shapes[1].code, "storage-block-truncated");
    // Mismatches are reported up to a bound, whatever the number of records.
    let keys = vec!["0"; 1000];
    let block: Vec<u8> = (0..1000).flat_map(|_| record(1, 4)).collect();
    let shapes = legacy_shapes(&legacy_file(&keys, &block));
    assert_eq!(shapes.len(), 16);
    // Four pickles only: not the legacy layout torch.load reads.
    let data = legacy_file(&["0"], &record(4, 16));
    let a = run(&data);
    let four = &data[..a.pickles[3].end as usize];
    assert_eq!(legacy_shapes(four)[0].code, "legacy-layout");
}

/// `data` with the first `from` replaced by `to`.
fn replace(data: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let at = data
        .windows(from.len())
        .position(|w| w == from)
        .expect("pattern present");
    [&data[..at], to, &data[at + from.len()..]].concat()
}

#[test]
fn keeps_the_strings_of_a_pickle_that_is_a_list_of_strings() {
    // Protocol 0 (`(lp0` then APPEND) and protocol 2 (EMPTY_LIST then APPENDS).
    let p0 = b"(lp0\nVa\np1\naVb\np2\na.";
    let a = run(p0);
    assert_eq!(
        a.string_list.map(|l| l.items),
        Some(vec!["a".to_string(), "b".to_string()])
    );
    let a = run(b"\x80\x02](X\x01\x00\x00\x00aK\x01e.");
    assert_eq!(a.string_list, None, "an integer item spoils the list");
    let a = run(b"\x80\x02}.");
    assert_eq!(a.string_list, None);
    // One long memoized string appended over and over: the copies stop at the byte bound.
    let long = "k".repeat(1000);
    let mut data = P::new().proto(2).op(b']').bu(&long).binput(0).op(b'a');
    for _ in 0..5000 {
        data = data.op(b'h').op(0).op(b'a');
    }
    let a = run(data.stop().bytes());
    assert!(a.error.is_none(), "{:?}", a.error);
    assert_eq!(a.string_list, None);
}

#[test]
fn weights_only_accepts_a_torch_state_dict_and_names_what_it_refuses() {
    use crate::inspect::pickle::torch::weights_only;
    let none = ExtraLists::default();
    let w = weights_only(&run(torch_state_dict().bytes()), &none);
    assert!(w.accepted(), "{w:?}");
    // A global off the allowlist, and one torch blocks whatever the policy says.
    let a = run(os_system(2).bytes());
    let w = weights_only(&a, &ExtraLists::from_policy(&["posix.*".into()], &[]));
    assert!(w.globals.contains_key("posix.system"), "{w:?}");
    // Protocol 4 opcodes (FRAME, SHORT_BINUNICODE, MEMOIZE, STACK_GLOBAL) are refused.
    let w = weights_only(&run(os_system(4).bytes()), &none);
    assert!(w.opcodes.contains_key("STACK_GLOBAL"), "{w:?}");
    // safe_globals count as add_safe_globals.
    let ns = P::new()
        .proto(2)
        .global("argparse", "Namespace")
        .op(b')')
        .reduce()
        .stop();
    assert!(!weights_only(&run(ns.bytes()), &none).accepted());
    let extra = ExtraLists::from_policy(&["argparse.Namespace".into()], &[]);
    assert!(weights_only(&run(ns.bytes()), &extra).accepted());
}

#[test]
fn tar_legacy_records_are_skipped_by_their_lengths_not_parsed() {
    // Issue 32: `storages` of the pre-0.4 tar format: count, then (pickle, raw record) pairs
    // whose raw bytes begin like opcodes.
    let count = P::new().proto(2).op(b'K').op(2).stop();
    let record = |key: &str| {
        P::new()
            .proto(2)
            .mark()
            .bu(key)
            .bu("cpu")
            .global("torch", "FloatStorage")
            .tuple()
            .stop()
    };
    let mut data = count.bytes().to_vec();
    data.extend_from_slice(record("0").bytes());
    data.extend_from_slice(&2u64.to_le_bytes());
    data.extend_from_slice(b"}\x93\x00\x00\x80\x02\x00\x00");
    data.extend_from_slice(record("1").bytes());
    data.extend_from_slice(&1u64.to_le_bytes());
    data.extend_from_slice(b"c\x00\x80?");
    let a = analyze_torch_tar_records(&mut &data[..], TarRecords::Storages, &Limits::default());
    assert_eq!(a.error, None, "{a:?}");
    assert_eq!(a.pickles.len(), 3);
    assert!(has(&a, "torch", "FloatStorage"));
    // A record cut short is truncated; the generic read stops at the first raw record and
    // never sees the pickles after it.
    let cut = &data[..data.len() - 2];
    let a = analyze_torch_tar_records(&mut &cut[..], TarRecords::Storages, &Limits::default());
    assert_eq!(code(&a), Some("truncated"));
    assert!(run(&data).pickles.len() < 3);

    // `tensors`: ndim (4 bytes, read as 8), sizes, strides, offset.
    let tensor = P::new()
        .proto(2)
        .mark()
        .bu("0")
        .bu("0")
        .global("torch", "FloatTensor")
        .tuple()
        .stop();
    let mut data = P::new().proto(2).op(b'K').op(1).stop().bytes().to_vec();
    data.extend_from_slice(tensor.bytes());
    data.extend_from_slice(&2u64.to_le_bytes());
    data.extend_from_slice(&[0x80; 40]);
    let a = analyze_torch_tar_records(&mut &data[..], TarRecords::Tensors, &Limits::default());
    assert_eq!(a.error, None, "{a:?}");
    assert_eq!(a.pickles.len(), 2);
    let mut bad = P::new().proto(2).op(b'K').op(1).stop().bytes().to_vec();
    bad.extend_from_slice(tensor.bytes());
    bad.extend_from_slice(&1000u64.to_le_bytes());
    let a = analyze_torch_tar_records(&mut &bad[..], TarRecords::Tensors, &Limits::default());
    assert_eq!(code(&a), Some("bad-argument"));
}

// ---- issue 32: tensors pickled without torch.save (`torch.storage._load_from_bytes`)

/// BINBYTES of arbitrary bytes.
fn binbytes_raw(p: P, b: &[u8]) -> P {
    p.op(b'B').raw(&(b.len() as u32).to_le_bytes()).raw(b)
}

/// What `pickle.dumps(tensor)` writes for each storage: `_load_from_bytes(<legacy torch.save>)`,
/// here twice through the memo (the second tensor's call fetches the global and the bytes
/// again), inside a list.
fn pickled_tensors(embedded: &[u8]) -> Vec<u8> {
    let p = P::new()
        .proto(4)
        .op(b']')
        .mark()
        .global("torch.storage", "_load_from_bytes")
        .binput(0);
    let p = binbytes_raw(p, embedded)
        .binput(1)
        .tuple1()
        .reduce()
        .binget(0)
        .binget(1)
        .tuple1()
        .reduce()
        .op(b'e')
        .stop();
    p.0
}

fn byte_load_index(a: &Analysis) -> usize {
    a.imports
        .iter()
        .position(|i| i.name.as_deref() == Some("_load_from_bytes"))
        .expect("the import")
}

#[test]
fn a_tensor_pickled_without_torch_save_is_judged_by_the_save_its_bytes_hold() {
    let mut block = 4u64.to_le_bytes().to_vec();
    block.extend_from_slice(&[0u8; 16]);
    let (save, _) = legacy_torch_file(&block);
    let a = run(&pickled_tensors(&save));
    assert_eq!(a.error, None, "{a:?}");
    assert!(a.vouched_byte_loads.contains(&byte_load_index(&a)), "{a:?}");
    // The embedded save's globals are on record once each, noted, at the call's offset.
    for (m, n) in [
        ("collections", "OrderedDict"),
        ("torch._utils", "_rebuild_tensor_v2"),
        ("torch", "FloatStorage"),
    ] {
        let found: Vec<&Import> = a
            .imports
            .iter()
            .filter(|i| i.module.as_deref() == Some(m) && i.name.as_deref() == Some(n))
            .collect();
        assert!(!found.is_empty(), "{m}.{n}: {a:?}");
        assert!(
            found[0]
                .note
                .as_deref()
                .is_some_and(|x| x.contains("legacy torch.save bytes")),
            "{found:?}"
        );
    }
    let before = a.imports.len();
    // The same blob fetched again is not read again, nor its globals recorded twice.
    assert_eq!(before, 1 + 3, "{:?}", a.imports);
}

#[test]
fn the_globals_of_embedded_bytes_are_judged_so_a_payload_there_is_seen() {
    let evil = P::new()
        .proto(2)
        .global("os", "system")
        .bu("id")
        .tuple1()
        .reduce()
        .stop();
    let (magic, version) = legacy_magic_and_version();
    let sys_info = P::new().proto(2).op(b'}').stop();
    let keys = P::new().proto(2).op(b']').stop();
    let save = [magic.0, version.0, sys_info.0, evil.0, keys.0].concat();
    let a = run(&pickled_tensors(&save));
    assert!(called(&a, "os", "system"), "{a:?}");
    assert!(any_dangerous(&a));
}

#[test]
fn bytes_torch_load_would_not_read_as_a_legacy_save_are_not_vouched_for() {
    let (save, _) = legacy_torch_file(&[]);
    // A zip (torch.load reads it as the zip format), text, a cut-off save, nothing like a save.
    let mut zip = b"PK\x03\x04".to_vec();
    zip.extend_from_slice(&save);
    let cut = save.get(..save.len() / 2).unwrap_or_default().to_vec();
    for blob in [zip, cut, vec![0x80, 0x02, b'.'], vec![0xff; 40]] {
        let a = run(&pickled_tensors(&blob));
        assert!(a.vouched_byte_loads.is_empty(), "{blob:?}: {a:?}");
    }
    // A save whose first block is also a valid tar header (its checksum field falls inside
    // the sys_info string): torch's legacy loader opens the tar, so it is not vouched for,
    // while the same save with a checksum that does not add up is.
    let with_field = |field: &[u8]| -> Vec<u8> {
        let (magic, version) = legacy_magic_and_version();
        let filler = "a".repeat(300);
        let sys_info = P::new().proto(2).bu(&filler).stop();
        let keys = P::new().proto(2).op(b']').stop();
        let mut save = [magic.0, version.0, sys_info.0, torch_state_dict().0, keys.0].concat();
        save.resize(600, 0);
        save.splice(148..156, field.iter().copied());
        save
    };
    let mut sum: u32 = 256;
    for (i, b) in with_field(b"        ").iter().take(512).enumerate() {
        if !(148..156).contains(&i) {
            sum += u32::from(*b);
        }
    }
    let tar = with_field(format!("{sum:06o}\0 ").as_bytes());
    assert!(crate::inspect::tar::python_tarfile_could_read(&tar, 600));
    assert!(run(&pickled_tensors(&tar)).vouched_byte_loads.is_empty());
    let not_tar = with_field(b"0000000\0");
    assert!(!crate::inspect::tar::python_tarfile_could_read(
        &not_tar, 600
    ));
    assert!(
        !run(&pickled_tensors(&not_tar))
            .vouched_byte_loads
            .is_empty()
    );
}

#[test]
fn a_byte_load_used_any_other_way_is_not_vouched_for() {
    let (save, _) = legacy_torch_file(&[]);
    // The vetted call, then the same global wrapped in functools.partial with other bytes.
    let p = P::new()
        .proto(4)
        .op(b']')
        .mark()
        .global("torch.storage", "_load_from_bytes")
        .binput(0);
    let p = binbytes_raw(p, &save).tuple1().reduce();
    let p = p
        .global("functools", "partial")
        .binget(0)
        .binbytes("x")
        .tuple2()
        .reduce()
        .op(b'e')
        .stop();
    let a = run(&p.0);
    assert!(a.vouched_byte_loads.is_empty(), "{a:?}");
    // Called on a str, and with no embedded reading allowed (the depth limit).
    let p = P::new()
        .proto(4)
        .global("torch.storage", "_load_from_bytes")
        .bu("abc")
        .tuple1()
        .reduce()
        .stop();
    assert!(run(&p.0).vouched_byte_loads.is_empty());
    let limits = Limits {
        embedded_depth: 0,
        ..Limits::default()
    };
    let a = run_with(&pickled_tensors(&save), &limits);
    assert!(a.vouched_byte_loads.is_empty());
}

#[test]
fn bytes_values_never_use_up_the_budget_import_names_resolve_from() {
    // 17 MiB of bytes values that begin like a save (kept up to their own cap), then an import
    // whose names come from strings on the stack: it still resolves.
    let mut chunk = vec![0x80u8, 0xff];
    chunk.resize(1024, 0xfe);
    let mut p = P::new().proto(4);
    for _ in 0..17 * 1024 {
        p = binbytes_raw(p, &chunk).pop();
    }
    let p = p
        .bu("collections")
        .bu("OrderedDict")
        .stack_global()
        .empty_tuple()
        .reduce()
        .stop();
    let a = run(&p.0);
    assert_eq!(a.error, None);
    assert!(called(&a, "collections", "OrderedDict"), "{:?}", a.imports);
}

#[test]
fn values_nested_half_a_million_deep_are_built_and_dropped_without_recursion_issue_37() {
    // Issue 37: values live in an arena of nodes, so neither building deeply nested tuples
    // and lists nor dropping them recurses. Tuples: n MARKs, each TUPLE closing one
    // around the previous tuple. Lists: n EMPTY_LISTs appended each into the one below.
    let n = 500_000;
    let limits = Limits {
        max_marks: n,
        ..Limits::default()
    };
    let mut tuples = vec![0x80, 2];
    tuples.extend(std::iter::repeat_n(b'(', n));
    tuples.extend(std::iter::repeat_n(b't', n));
    tuples.push(b'.');
    let mut lists = vec![0x80, 2];
    lists.extend(std::iter::repeat_n(b']', n));
    lists.extend(std::iter::repeat_n(b'a', n - 1));
    lists.push(b'.');
    for data in [tuples, lists] {
        let a = run_with(&data, &limits);
        assert!(a.error.is_none(), "{:?}", a.error);
        assert!(a.pickles.first().is_some_and(|p| p.complete));
    }
}
