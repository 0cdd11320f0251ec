//! Content sniffing: [`looks_like_pickle`] decides from a file's first bytes whether it starts a
//! pickle, on the opcode reader alone (used by the analysis and the disassembler).

use super::analysis::Limits;
use super::ops::{self, Arg, Op, Source};

/// Content sniffing: does `head` (the first bytes of a file, ideally 1 KiB or more) start a
/// pickle? Protocol 2+ streams start with PROTO 2..=5. Protocol 0/1 streams have no magic, so
/// the head must parse as opcodes cleanly (arguments well-formed, no stack underflow) up to a
/// STOP, to the end of the head or for 16 opcodes, and either start with a structure opcode (MARK, EMPTY_LIST,
/// EMPTY_DICT, EMPTY_TUPLE) or hold a GLOBAL/INST/STACK_GLOBAL with identifier-shaped module
/// and name followed by at least one more opcode. Text files fail on their first bytes: `#`,
/// `{`, `[`, `"`, letters that are no opcode, or a GLOBAL line with spaces or punctuation.
///
/// Known blind spot: a protocol 0 stream that pads its start with a string argument longer
/// than the head (e.g. `V` + 64 KiB) and imports only after it is not recognised.
pub fn looks_like_pickle(head: &[u8]) -> bool {
    let Some(&first) = head.first() else {
        return false;
    };
    if first == 0x80 && !matches!(head.get(1), Some(2..=5)) {
        // An unsupported PROTO in front of an import is a payload hiding from sniffers
        // (issue 16): accept it only when an import and another opcode follow.
        return head.get(2..).is_some_and(|rest| sniff(rest).1);
    }
    sniff(head).0
}

/// [`looks_like_pickle`] without the PROTO check: (looks like a pickle, an identifier-shaped
/// import was followed by at least one more opcode). Once an import and one well-formed opcode
/// have been seen, a later unknown opcode or malformed argument does not undo it, nor does the
/// head ending inside an opcode after an import: a broken tail after an import is how payloads
/// hide from scanners (issue 16). A stack underflow still rejects (text fails that way).
fn sniff(head: &[u8]) -> (bool, bool) {
    let Some(&first) = head.first() else {
        return (false, false);
    };
    let structural = matches!(first, 0x80 | b'(' | b']' | b'}' | b')');
    let mut sim = Sniff::default();
    let limits = Limits {
        keep_string: 256,
        ..Limits::default()
    };
    let mut r = head;
    let mut src = Source::new(&mut r, 0);
    for _ in 0..SNIFF_OPCODES {
        let Ok(Some(byte)) = src.next_byte() else {
            break;
        };
        let Some(op) = ops::lookup(byte) else {
            return (sim.after_import, sim.after_import);
        };
        let arg = match ops::read_arg(&mut src, op, &limits) {
            Ok(arg) => arg,
            // The file ends inside an opcode right after an import: a cut-off payload.
            Err(e) if e.code == "truncated" => {
                return (structural || sim.imported, sim.imported);
            }
            Err(_) => return (sim.after_import, sim.after_import),
        };
        if !plausible_arg(op, &arg) {
            return (sim.after_import, sim.after_import);
        }
        if sim.imported {
            sim.after_import = true;
        }
        match sim.apply(op) {
            Some(true) => return (structural || sim.imported, sim.after_import),
            Some(false) => {}
            // Underflow rejects text lines that happen to parse, but not a stream that starts
            // with PROTO/MARK and has already imported (no text gets that far).
            None => return (structural && sim.imported, false),
        }
    }
    (structural || sim.after_import, sim.after_import)
}

/// Opcodes [`looks_like_pickle`] checks. Enough to reject text and raw numeric data (which fail
/// within a few bytes), few enough that raw array bytes joblib embeds mid-stream are not reached.
const SNIFF_OPCODES: usize = 16;

/// Count-only stack model for [`looks_like_pickle`].
#[derive(Default)]
struct Sniff {
    depth: usize,
    marks: Vec<usize>,
    imported: bool,
    after_import: bool,
}

impl Sniff {
    /// Apply one opcode; `None` on underflow, `Some(true)` at STOP.
    fn apply(&mut self, op: Op) -> Option<bool> {
        let (need, push) = match op {
            Op::Stop => {
                self.depth.checked_sub(1)?;
                return Some(true);
            }
            Op::Proto | Op::Frame => (0, 0),
            Op::Mark => {
                self.marks.push(self.depth);
                self.depth = 0;
                return Some(false);
            }
            Op::Pop => {
                if self.depth == 0 {
                    self.depth = self.marks.pop()?;
                } else {
                    self.depth -= 1;
                }
                return Some(false);
            }
            Op::Tuple
            | Op::List
            | Op::Dict
            | Op::FrozenSet
            | Op::Inst
            | Op::PopMark
            | Op::Obj
            | Op::Appends
            | Op::SetItems
            | Op::AddItems => {
                let items = self.depth;
                self.depth = self.marks.pop()?;
                match op {
                    Op::PopMark => {}
                    Op::Appends | Op::SetItems | Op::AddItems => {
                        self.depth.checked_sub(1)?;
                    }
                    Op::Obj => {
                        items.checked_sub(1)?;
                        self.depth += 1;
                    }
                    _ => self.depth += 1,
                }
                if op == Op::Inst {
                    self.imported = true;
                }
                return Some(false);
            }
            Op::ReadonlyBuffer | Op::Put | Op::BinPut | Op::LongBinPut | Op::Memoize => (1, 1),
            Op::Tuple1 | Op::BinPersId => (1, 1),
            Op::Dup => (1, 2),
            Op::Tuple2 | Op::Append | Op::StackGlobal | Op::Reduce | Op::Build | Op::NewObj => {
                (2, 1)
            }
            Op::Tuple3 | Op::SetItem | Op::NewObjEx => (3, 1),
            // Everything that pushes one value and pops none.
            Op::Int
            | Op::BinInt
            | Op::BinInt1
            | Op::BinInt2
            | Op::Long
            | Op::Long1
            | Op::Long4
            | Op::String
            | Op::BinString
            | Op::ShortBinString
            | Op::BinBytes
            | Op::ShortBinBytes
            | Op::BinBytes8
            | Op::ByteArray8
            | Op::NextBuffer
            | Op::None
            | Op::NewTrue
            | Op::NewFalse
            | Op::Unicode
            | Op::ShortBinUnicode
            | Op::BinUnicode
            | Op::BinUnicode8
            | Op::Float
            | Op::BinFloat
            | Op::EmptyList
            | Op::EmptyTuple
            | Op::EmptyDict
            | Op::EmptySet
            | Op::Get
            | Op::BinGet
            | Op::LongBinGet
            | Op::Ext1
            | Op::Ext2
            | Op::Ext4
            | Op::Global
            | Op::PersId => (0, 1),
        };
        if matches!(op, Op::Global | Op::StackGlobal) {
            self.imported = true;
        }
        self.depth = self.depth.checked_sub(need)? + push;
        Some(false)
    }
}

/// Are the textual arguments shaped as a pickler writes them?
fn plausible_arg(op: Op, arg: &Arg) -> bool {
    let line = |a: &Arg| match a {
        Arg::Data(p) => Some(p.head.clone()),
        _ => None,
    };
    match op {
        Op::Global | Op::Inst => match arg {
            Arg::Pair(m, n) => dotted_identifier(&m.head) && dotted_identifier(&n.head),
            _ => false,
        },
        Op::Int | Op::Get | Op::Put => line(arg).is_some_and(|l| {
            let l = l.strip_prefix(b"-").unwrap_or(&l);
            !l.is_empty() && l.iter().all(u8::is_ascii_digit)
        }),
        Op::Long => line(arg).is_some_and(|l| {
            let l = l.strip_suffix(b"L").unwrap_or(&l);
            let l = l.strip_prefix(b"-").unwrap_or(l);
            !l.is_empty() && l.iter().all(u8::is_ascii_digit)
        }),
        Op::Float => line(arg).is_some_and(|l| {
            std::str::from_utf8(&l).is_ok_and(|s| s.trim().parse::<f64>().is_ok())
        }),
        Op::String => line(arg).is_some_and(|l| {
            l.len() >= 2 && matches!(l.first(), Some(b'\'' | b'"')) && l.first() == l.last()
        }),
        Op::Proto => matches!(arg, Arg::Int(0..=5)),
        _ => true,
    }
}

/// `a.b_c.D`: ASCII identifiers joined by dots.
fn dotted_identifier(s: &[u8]) -> bool {
    !s.is_empty()
        && s.split(|&b| b == b'.').all(|part| {
            part.first()
                .is_some_and(|&c| c.is_ascii_alphabetic() || c == b'_')
                && part.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'_')
        })
}
