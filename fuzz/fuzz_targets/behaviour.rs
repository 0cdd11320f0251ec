//! The behaviour judge of shipped Python (SRC006). The first byte picks the mode:
//!
//! - odd: the rest of the input is a *program description*: each byte picks a statement of the
//!   evaluator's own vocabulary (string methods, `%`, `format`, `join`, `replace`, f-strings
//!   with specs, `chr`, slicing, decoders, `getattr`/`__import__`, class and self attributes,
//!   subscripts, conditionals, functions, padding, augmented assignment, sinks) over eight
//!   names, so self-reference, cycles, chains and bombs are the common case and every program
//!   parses without error recovery (cheap: this is where the evaluator's bugs live);
//! - even: the input is the source itself (the parser's error recovery, any text).
//!
//! Bit 1 of the selector also hides the source in a literal blob the way malicious model code
//! hides a payload (`exec(zlib.decompress(base64.b64decode("…")))`), so the decoder and the
//! nested analysis run. Checks, besides no panic and staying within libFuzzer's time and memory
//! caps: every site lies within the source; on sources of at most [`CROSS_CHECK_BYTES`], the
//! analysis is deterministic, `scan_and_analyze` (one parse shared with the call scan) finds
//! the same sites as `analyze` and the same calls as the call scan, and tight limits still end
//! cleanly. Run it with `-max_len=512 -dict=dict/python.dict` (fuzz/README.md).
#![no_main]

use std::io::Write;

use libfuzzer_sys::fuzz_target;
use modelgate::code::python::{
    Limits, behaviour, may_report, scan_and_analyze, scan_python_unfiltered,
};

fn base64(data: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * k)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn zlib(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    let _ = e.write_all(data);
    e.finish().unwrap_or_default()
}

/// The input hidden in a literal blob, one of a few ways.
fn wrapped(selector: u8, text: &str) -> String {
    let bytes = text.as_bytes();
    match selector % 4 {
        0 => format!(
            "import base64\nexec(base64.b64decode('{}'))\n",
            base64(bytes)
        ),
        1 => format!(
            "import base64, zlib\nexec(zlib.decompress(base64.b64decode(\"{}\")).decode())\n",
            base64(&zlib(bytes))
        ),
        2 => {
            let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            format!("class M:\n    def forward(self):\n        eval(bytes.fromhex('{hex}'))\n")
        }
        _ => {
            let reversed: String = base64(bytes).chars().rev().collect();
            format!("import base64 as b\nexec(b.b64decode('{reversed}'[::-1]))\n")
        }
    }
}

/// Largest input that also gets the cross-checks (`scan_and_analyze` against the separate
/// entry points, which is also a second run, tight limits): they triple the cost of an
/// iteration.
const CROSS_CHECK_BYTES: usize = 128;

/// Every site lies within the source.
fn check_sites(text: &str, found: &behaviour::Behaviour) {
    let lines = text.split('\n').count();
    for site in &found.sites {
        assert!(site.line >= 1 && site.line <= lines, "{site:?}");
        assert!(site.column >= 1, "{site:?}");
    }
    let _ = found.capabilities();
}

/// The one-parse entry point agrees with the separate ones. It is a second, separate run of
/// the analysis, so this is also the determinism check (a third run cost a tenth of the
/// target's time for nothing more).
fn cross_check(text: &str, limits: &Limits, first: &behaviour::Behaviour) {
    let (report, shared) = scan_and_analyze(text, limits);
    assert_eq!(
        shared.sites, first.sites,
        "scan_and_analyze differs from analyze (or is not deterministic)"
    );
    if may_report(text.as_bytes()) {
        assert_eq!(report.calls, scan_python_unfiltered(text, limits).calls);
    } else {
        assert!(report.calls.is_empty());
    }
}

/// Statements per generated program. Self-reference, cycles of two and three names, chains and
/// bombs take a handful each; a longer program mostly costs parse time (issue 37 asks for
/// 1,000 executions a second: at 64 statements the parser was half of an iteration).
const STATEMENTS: usize = 32;
/// A generated program stops early past this many bytes (at an `op` of 0).
const MAX_PROGRAM_BYTES: usize = 2048;

/// Names the generated programs assign and read: few, so cycles are likely.
const NAMES: [&str; 8] = ["a", "b", "c", "d", "s", "t", "x", "self.x"];
/// Literals the generated programs start from.
const LITERALS: [&str; 12] = [
    "\"a\"",
    "\"os\"",
    "\"system\"",
    "\"ZXhlYw==\"",
    "\"id\"",
    "\"%s\"",
    "\"{}\"",
    "\"__import__\"",
    "\"6964\"",
    "b\"x\\x9c\"",
    "\"\\t\"",
    "999999999",
];
/// Sinks the generated programs may end a value in.
const SINKS: [&str; 8] = [
    "exec({})",
    "eval({})",
    "os.system({})",
    "subprocess.run({}, shell=True)",
    "getattr(os, {})(\"id\")",
    "__import__({}).system(\"id\")",
    "compile({}, \"m\", \"exec\")",
    "importlib.import_module({})",
];

/// The Python program the bytes describe (see the module comment). Every program parses.
fn generate(data: &[u8]) -> String {
    let mut out = String::from(
        "import os, base64, zlib, codecs, subprocess, importlib\n\
         class C:\n    x = \"a\"\n    def m(self):\n        return self.x\n\
         self = C()\ncfg = {\"k\": \"a\"}\n\
         def f(v):\n    return v + \"a\"\n",
    );
    let mut bytes = data.iter().copied();
    let mut take = || usize::from(bytes.next().unwrap_or(0));
    for _ in 0..STATEMENTS {
        let op = take();
        if op == 0 && out.len() > MAX_PROGRAM_BYTES {
            break;
        }
        let (x, y, z) = (take(), take(), take());
        let a = NAMES[x % NAMES.len()];
        let b = NAMES[y % NAMES.len()];
        let c = NAMES[z % NAMES.len()];
        let lit = LITERALS[(x ^ z) % LITERALS.len()];
        let n = [0, 1, 2, 7, 10, 97, 255, 1000, 10_000, 99_999_999][z % 10];
        let line = match op % 32 {
            0 => format!("{a} = {lit}"),
            1 => format!("{a} = {b}"),
            2 => format!("{a} = {b} + {c}"),
            3 => format!("{a} = \"%s%s\" % ({b}, {c})"),
            4 => format!("{a} = \"{{}}{{:>{n}}}\".format({b}, {c})"),
            5 => format!("{a} = \"\".join([{b}, {c}])"),
            6 => format!("{a} = {b}.join([{c}, {lit}])"),
            7 => format!("{a} = {b}.replace({c}, {b})"),
            8 => format!("{a} = ({b} + {lit}).strip().upper().lower()"),
            9 => format!("{a} = f\"{{{b}}}{{{c}!r:>{{{b}}}}}\""),
            10 => format!("{a} = f\"{{f'{{{b}}}'}}\" + chr({n})"),
            11 => format!("{a} = {b} + chr({}) + chr({})", 97 + y % 26, 97 + z % 26),
            12 => format!("{a} = {b}[::-1]"),
            13 => format!("{a} = {b}[{}:]", y % 4),
            14 => format!("{a} = base64.b64decode({b})"),
            15 => format!("{a} = zlib.decompress({b})"),
            16 => format!("{a} = bytes.fromhex({b}).decode()"),
            17 => format!("{a} = codecs.decode({b}, \"rot13\")"),
            18 => format!("{a} = getattr({b}, {c})"),
            19 => format!("{a} = __import__({b})"),
            20 => format!("C.x = {b}"),
            21 => format!("{a} = C.x"),
            22 => format!("cfg[\"k\"] = {b}"),
            23 => format!("{a} = cfg[\"k\"]"),
            24 => format!("{a} = {b} if {c} else {lit}"),
            25 => format!("{a} = f({b})"),
            26 => format!("{a} = {b} * {n}"),
            27 => format!("{a} = {b}.ljust({n}).center({n}).zfill({n})"),
            28 => format!("{a} += {b}"),
            29 => format!("{a} = format({b}, \">{n}\")"),
            30 => format!("{a} = self.m()"),
            _ => SINKS[y % SINKS.len()].replace("{}", a),
        };
        out.push_str(&line);
        out.push('\n');
    }
    // Every program ends in a sink, so the judge always has a value to chase.
    out.push_str("exec(a)\n");
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let text = if selector & 1 == 1 {
        generate(rest)
    } else {
        String::from_utf8_lossy(data).into_owned()
    };
    let limits = Limits::default();
    let plain = behaviour::analyze(&text, &limits);
    check_sites(&text, &plain);
    let hidden = (selector & 2 == 2).then(|| wrapped(selector >> 2, &text));
    let of_hidden = hidden.as_ref().map(|hidden| {
        let found = behaviour::analyze(hidden, &limits);
        check_sites(hidden, &found);
        found
    });
    if text.len() > CROSS_CHECK_BYTES && selector & 1 == 0 {
        return;
    }
    // Cross-checks on small sources and on one generated program in eight.
    if selector & 1 == 1 && (selector >> 5) != 0 {
        return;
    }
    cross_check(&text, &limits, &plain);
    if let (Some(hidden), Some(found)) = (&hidden, &of_hidden) {
        cross_check(hidden, &limits, found);
    }
    // Tight budgets: the analysis stops early, cleanly, and says so or finishes.
    let tight = Limits {
        max_nodes: 200,
        max_items: 4,
        max_bindings: 8,
        ..Limits::default()
    };
    let _ = behaviour::analyze(&text, &tight);
});
