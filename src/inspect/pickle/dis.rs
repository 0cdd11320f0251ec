//! A `pickletools.dis`-like disassembler for `modelgate inspect`: one line per opcode with its
//! offset, name and argument (escaped and truncated), indented by MARK depth, for every pickle
//! in the stream. It reads with the same bounded reader as the analyzer, so a hostile stream
//! costs no more to print than to analyse; problems end the listing with an `error` line.

use std::io::{self, BufRead, Write};

use super::analysis::{Limits, Malformed};
use super::ops::{self, Arg, Op, Payload, Source};
use super::sniff::looks_like_pickle;

/// Characters of an argument shown before it is cut.
const SHOWN_ARG: usize = 80;
/// Deepest indentation printed.
const MAX_INDENT: usize = 32;

/// Write a listing of every pickle in `r` to `w`. Errors in the stream are printed, not
/// returned; the `io::Result` reports failures to write.
pub fn disassemble<R: BufRead, W: Write>(r: &mut R, w: &mut W, limits: &Limits) -> io::Result<()> {
    let mut src = Source::new(r, 0);
    let mut budget = limits.max_opcodes;
    let mut pickles = 0usize;
    loop {
        if pickles >= limits.max_pickles {
            writeln!(
                w,
                "error at offset {}: limit-pickles: more than {} pickles",
                src.pos, limits.max_pickles
            )?;
            return Ok(());
        }
        writeln!(w, "# pickle {pickles} at offset {}", src.pos)?;
        let mut depth = 0usize;
        loop {
            let at = src.pos;
            let byte = match src.next_byte() {
                Ok(Some(b)) => b,
                Ok(None) => {
                    writeln!(
                        w,
                        "error at offset {at}: truncated: stream ends before STOP"
                    )?;
                    return Ok(());
                }
                Err(e) => return error_line(w, at, &e),
            };
            if budget == 0 {
                writeln!(
                    w,
                    "error at offset {at}: limit-opcodes: over {} opcodes",
                    limits.max_opcodes
                )?;
                return Ok(());
            }
            budget -= 1;
            let Some(op) = ops::lookup(byte) else {
                writeln!(w, "error at offset {at}: unknown-opcode: byte 0x{byte:02x}")?;
                return Ok(());
            };
            let arg = match ops::read_arg(&mut src, op, limits) {
                Ok(arg) => arg,
                Err(e) => return error_line(w, at, &e),
            };
            if closes_mark(op) {
                depth = depth.saturating_sub(1);
            }
            let indent = "  ".repeat(depth.min(MAX_INDENT));
            writeln!(w, "{at:>10}: {indent}{:<16} {}", op.name(), show(&arg))?;
            if op == Op::Mark {
                depth += 1;
            }
            if op == Op::Stop {
                break;
            }
        }
        pickles += 1;
        match src.lookahead(limits.sniff_len) {
            Ok([]) => return Ok(()),
            Ok(head) if looks_like_pickle(head) => {}
            Ok(_) => {
                writeln!(
                    w,
                    "# offset {}: data that is not a pickle follows; stopping",
                    src.pos
                )?;
                return Ok(());
            }
            Err(e) => return error_line(w, src.pos, &e),
        }
    }
}

fn error_line<W: Write>(w: &mut W, at: u64, e: &Malformed) -> io::Result<()> {
    writeln!(w, "error at offset {at}: {}: {}", e.code, e.message)
}

/// Opcodes that consume the innermost MARK (the listing outdents at them).
fn closes_mark(op: Op) -> bool {
    matches!(
        op,
        Op::Tuple
            | Op::List
            | Op::Dict
            | Op::FrozenSet
            | Op::Inst
            | Op::PopMark
            | Op::Obj
            | Op::Appends
            | Op::SetItems
            | Op::AddItems
    )
}

fn show(arg: &Arg) -> String {
    match arg {
        Arg::None => String::new(),
        Arg::Int(i) => i.to_string(),
        Arg::Float(f) => f.to_string(),
        Arg::Data(p) => quote(p),
        Arg::Pair(m, n) => format!("{} {}", quote(m), quote(n)),
    }
}

/// Escaped, quoted, cut to [`SHOWN_ARG`] characters, with the full length when cut.
fn quote(p: &Payload) -> String {
    let mut s = String::from("'");
    let mut cut = !p.complete();
    for &b in &p.head {
        if s.len() >= SHOWN_ARG {
            cut = true;
            break;
        }
        match b {
            b'\'' => s.push_str("\\'"),
            b'\\' => s.push_str("\\\\"),
            0x20..=0x7e => s.push(char::from(b)),
            _ => s.push_str(&format!("\\x{b:02x}")),
        }
    }
    s.push('\'');
    if cut {
        s.push_str(&format!("...({} bytes)", p.len));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dis(data: &[u8]) -> String {
        let mut r = data;
        let mut out = Vec::new();
        let res = disassemble(&mut r, &mut out, &Limits::default());
        assert!(res.is_ok());
        String::from_utf8_lossy(&out).into_owned()
    }

    #[test]
    fn lists_protocol0_payload() {
        let text = dis(b"cos\nsystem\n(S'ls'\ntR.");
        assert!(text.contains("GLOBAL           'os' 'system'"), "{text}");
        assert!(text.contains("STRING"), "{text}");
        assert!(text.contains("REDUCE"), "{text}");
        assert!(text.contains("STOP"), "{text}");
    }

    #[test]
    fn truncates_long_arguments_and_reports_damage() {
        let mut data = vec![0x80, 4, b'B'];
        data.extend_from_slice(&200u32.to_le_bytes());
        data.extend_from_slice(&[0xffu8; 200]);
        data.push(b'.');
        let text = dis(&data);
        assert!(text.contains("...(200 bytes)"), "{text}");
        let text = dis(b"\x80\x04\x99");
        assert!(text.contains("unknown-opcode"), "{text}");
    }

    #[test]
    fn lists_every_pickle_and_stops_at_raw_data() {
        let text = dis(b"\x80\x02K\x01.\x80\x02K\x02.\x00\x01\x02");
        assert!(text.contains("# pickle 1 at offset 5"), "{text}");
        assert!(text.contains("not a pickle follows"), "{text}");
    }
}
