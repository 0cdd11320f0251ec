//! The behaviour judge of shipped Python (SRC006): `behaviour::analyze` on the input as
//! source, and again with the input hidden in a literal blob the way malicious model code hides
//! a payload (`exec(zlib.decompress(base64.b64decode("…")))`, the first byte picks the
//! wrapping and stays part of the source), so the decoder and the nested analysis run on every
//! input. Checks, besides no panic and staying within libFuzzer's time and memory caps: the
//! analysis is deterministic, `scan_and_analyze` (one parse shared with the call scan) finds
//! the same sites as `analyze` and the same calls as the call scan, every site lies within the
//! source, and tight limits still end cleanly.
//!
//! Cost: every input is analysed once as source and once wrapped (three parses, the nested
//! analysis included). The cross-checks, which parse it six more times, run on inputs of at
//! most [`CROSS_CHECK_BYTES`] only, where the evaluator's cycles and bombs live anyway; run the
//! target with `-max_len=512` and `-dict=dict/python.dict` (fuzz/README.md) to stay above a
//! thousand executions a second.
#![no_main]

use std::io::Write;

use libfuzzer_sys::fuzz_target;
use modelgate::provenance::code::{
    Limits, behaviour, may_report, scan_and_analyze, scan_python_unfiltered,
};

fn base64(data: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
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
        0 => format!("import base64\nexec(base64.b64decode('{}'))\n", base64(bytes)),
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

/// Largest input that also gets the cross-checks (determinism, `scan_and_analyze` against the
/// separate entry points, tight limits): they multiply the cost of an iteration by four.
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

/// The analysis is deterministic and the one-parse entry point agrees with the separate ones.
fn cross_check(text: &str, limits: &Limits, first: &behaviour::Behaviour) {
    assert_eq!(*first, behaviour::analyze(text, limits), "not deterministic");
    let (report, shared) = scan_and_analyze(text, limits);
    assert_eq!(shared.sites, first.sites, "scan_and_analyze differs from analyze");
    if may_report(text.as_bytes()) {
        assert_eq!(report.calls, scan_python_unfiltered(text, limits).calls);
    } else {
        assert!(report.calls.is_empty());
    }
}

fuzz_target!(|data: &[u8]| {
    let Some(&selector) = data.first() else {
        return;
    };
    let text = String::from_utf8_lossy(data);
    let hidden = wrapped(selector, &text);
    let limits = Limits::default();
    let plain = behaviour::analyze(&text, &limits);
    check_sites(&text, &plain);
    let of_hidden = behaviour::analyze(&hidden, &limits);
    check_sites(&hidden, &of_hidden);
    if data.len() > CROSS_CHECK_BYTES {
        return;
    }
    cross_check(&text, &limits, &plain);
    cross_check(&hidden, &limits, &of_hidden);
    // Tight budgets: the analysis stops early, cleanly, and says so or finishes.
    let tight = Limits {
        max_nodes: 200,
        max_items: 4,
        max_bindings: 8,
        ..Limits::default()
    };
    let _ = behaviour::analyze(&text, &tight);
});
