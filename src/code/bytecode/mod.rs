//! Python bytecode (`.pyc`): recognised by its magic, walked with [`marshal`], and read
//! for what it imports and calls (issue 31).
//!
//! Python imports a `.pyc` with no `.py` beside it (a sourceless module), and with a `.py`
//! beside it in `__pycache__` when the header's timestamp or hash says it is current; either way
//! the bytecode, not the source, is what runs. So a `.pyc` shipped with a model is judged on its
//! own unless it demonstrably matches its source.
//!
//! # What is resolved
//!
//! [`resolve`] follows each code object's instructions with the opcode table of its version
//! ([`marshal::opcodes`]): `IMPORT_NAME`/`IMPORT_FROM` followed by a store bind a name
//! to a module or a module attribute (`import os as o`, `from subprocess import Popen as P`,
//! also `s = os.system`), and `LOAD_NAME`/`LOAD_GLOBAL`/`LOAD_FAST` followed by
//! `LOAD_ATTR`/`LOAD_METHOD` build a dotted name through those bindings (`o.system` is
//! `os.system`). Each dotted name so built is a [`Load`] with the code object's qualified name
//! and the line the line table gives its instruction. A name bound at module level is seen by
//! nested code objects (`LOAD_GLOBAL`). What is not followed: values passed through the stack
//! across calls, containers, `getattr` with computed names; those still show in the names
//! (`co_names`, listed in the `bytecode` fact) and string constants, and a `.pyc` whose names
//! or strings its source lacks never passes as that source's ([`first_unexplained`]).
//!
//! # Matching a `.pyc` with its source
//!
//! modelgate cannot compile Python, so "this `.pyc` is the compilation of that `.py`" is decided
//! from what can be checked without a compiler ([`matches_source`]): the header's record of the
//! source (the size, modulo 2**32, for a timestamp pyc; SipHash of the source bytes for a
//! hash-based one, [`marshal::source_hash`]) must agree, and every name a code object
//! uses and every string constant must appear in the source text, or be what the compiler
//! makes from it (a literal's value, folded `+`/`*`/`%`, an annotation stored as text, a
//! mangled or qualified name: see `compiled.rs`). A planted `.pyc` beside clean
//! source (same size, padded) still fails the second test when it names anything the source does
//! not; one that passes both holds nothing the source does not say, and is reported once, on the
//! source. Each distinct string is looked for once, in one pass over the source; a `.pyc` whose
//! distinct names and strings hold more than twice its source's text is not its compilation.
//!
//! # Cost
//!
//! Everything here is linear in the `.pyc`'s size: the walker bounds what code objects share
//! (see [`marshal`]), the resolver does constant work per instruction (names numbered
//! once, dotted names of at most 512 bytes, lines from one pass over each line table), and the
//! judge pairs names with constants only through attribute names that can end a dangerous
//! callable, at most a million pairs.

use std::collections::BTreeSet;

// Keyed by scanned names and strings on the hot path of every `.pyc`: a fast hash with a
// per-process random seed (never iterated, so the order cannot reach the report).
use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};

mod compiled;
pub mod marshal;

use crate::code::python::behaviour::{self, When};
use marshal::{CodeObject, Module, PycHeader, PycKind, Text, opcodes};

/// A dotted name the bytecode loads, resolved through its imports: the bytecode reader's raw
/// material, which `inspect::pyc` judges into behaviour [`Site`](behaviour::Site)s.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Load {
    /// The resolved name (`os.system`, `subprocess.Popen`, `eval`): shared with the bytecode's
    /// own string when it is one name, built once per attribute chain otherwise.
    pub name: Text,
    /// The code object's qualified name (`<module>`, `Loader.load`), clipped; one allocation
    /// per code object, shared by its loads.
    pub code: Text,
    /// Index of the code object in [`Module::code`].
    pub code_index: usize,
    /// The source line of the instruction, from the line table.
    pub line: Option<u32>,
    /// Byte offset of the instruction in the code object's instructions.
    pub offset: usize,
    /// Whether the code object runs at import ([`runs_at_import`]).
    pub at_import: bool,
}

impl Load {
    /// When it runs: [`When::Import`] for the module and its module-level class bodies,
    /// otherwise [`When::Call`] of the code object (its qualified name, `reached_from` empty:
    /// bytecode keeps no call graph).
    pub fn when(&self) -> When {
        when_from(self.at_import, &self.code)
    }
}

/// Whether a code object is a class body (the compiler stores `__module__` and `__qualname__`
/// first thing in every class body).
fn is_class_body(c: &CodeObject) -> bool {
    c.names.iter().any(|n| n == "__module__") && c.names.iter().any(|n| n == "__qualname__")
}

/// Whether a code object runs at import: the module and the class bodies nested only in the
/// module or in other class bodies do; everything else runs when called.
pub fn runs_at_import(module: &Module, index: usize) -> bool {
    let mut i = index;
    for _ in 0..module.code.len() {
        let Some(c) = module.code.get(i) else {
            return false;
        };
        match c.parent {
            None => return true,
            Some(p) if is_class_body(c) => i = p,
            Some(_) => return false,
        }
    }
    false
}

/// When the code object named `qualname` runs, given [`runs_at_import`]'s answer.
pub fn when_from(at_import: bool, qualname: &str) -> When {
    if at_import {
        When::Import
    } else {
        When::Call {
            function: qualname.to_owned(),
            reached_from: Vec::new(),
        }
    }
}

/// [`runs_at_import`] for every code object at once, in one pass: the walker numbers a parent
/// before its children, so each answer is its parent's or its own.
fn whens(module: &Module) -> Vec<bool> {
    let mut out: Vec<bool> = Vec::with_capacity(module.code.len());
    for (i, c) in module.code.iter().enumerate() {
        let at_import = match c.parent {
            None => true,
            Some(p) if p < i && is_class_body(c) => out[p],
            Some(p) if p >= i => runs_at_import(module, i),
            Some(_) => false,
        };
        out.push(at_import);
    }
    out
}

/// The longest dotted name the resolver builds or reports. Every callable the capability table
/// names is far shorter; a longer chain is not followed, so each instruction costs at most this
/// much work however long the names a file holds.
const MAX_DOTTED: usize = 512;

/// Code object names kept in sites and facts, in characters (a qualified name is the compiler's
/// nesting of definitions; a longer one is cut and marked with `...`).
const MAX_CODE_NAME: usize = 200;

/// `s` cut to `MAX_CODE_NAME` (200) characters.
pub fn clip(s: &str) -> String {
    match s.char_indices().nth(MAX_CODE_NAME) {
        Some((at, _)) => format!("{}...", &s[..at]),
        None => s.to_string(),
    }
}

/// Small numbers for names, the same for equal names: each distinct string object of the data
/// is hashed once, however many instructions or code objects refer to it.
#[derive(Default)]
struct Symbols {
    by_object: HashMap<usize, u32>,
    by_text: HashMap<Text, u32>,
}

impl Symbols {
    fn id(&mut self, t: &Text) -> u32 {
        if let Some(&id) = self.by_object.get(&t.object_id()) {
            return id;
        }
        let next = u32::try_from(self.by_text.len()).unwrap_or(u32::MAX);
        let id = *self.by_text.entry(t.clone()).or_insert(next);
        self.by_object.insert(t.object_id(), id);
        id
    }
}

/// `{base}.{attr}` when it is at most [`MAX_DOTTED`] bytes.
fn dotted(base: &str, attr: &str) -> Option<Text> {
    (base.len() + 1 + attr.len() <= MAX_DOTTED).then(|| Text::from(format!("{base}.{attr}")))
}

/// Every dotted name the module's code objects load, resolved through their imports (see the
/// module documentation). Sorted by code object, then offset. One pass over each code object's
/// instructions with constant work per instruction (names are numbered once, dotted names are
/// at most `MAX_DOTTED` bytes, lines come from one pass over the line table).
pub fn resolve(module: &Module, minor: u8) -> Vec<Load> {
    let Some(table) = opcodes::table(minor) else {
        return Vec::new();
    };
    let whens = whens(module);
    let mut syms = Symbols::default();
    // Bindings made at module level are visible to every code object as globals.
    let mut globals: HashMap<u32, Text> = HashMap::new();
    let mut sites = Vec::new();
    for (index, code) in module.code.iter().enumerate() {
        let is_module = code.parent.is_none();
        let at_import = whens.get(index).copied().unwrap_or(false);
        let qualname = Text::from(clip(&code.qualname));
        let name_ids: Vec<u32> = code.names.iter().map(|n| syms.id(n)).collect();
        let var_ids: Vec<u32> = code.varnames.iter().map(|n| syms.id(n)).collect();
        let name_at = |i: u32| {
            let i = i as usize;
            Some((code.names.get(i)?, *name_ids.get(i)?))
        };
        let var_at = |i: u32| {
            let i = i as usize;
            Some((code.varnames.get(i)?, *var_ids.get(i)?))
        };
        let mut lines = code.lines();
        let mut locals: HashMap<u32, Text> = HashMap::new();
        // The dotted name on top of the stack, when it is one we follow.
        let mut cur: Option<Text> = None;
        // The module of the last IMPORT_NAME, and how far IMPORT_FROM has walked it.
        let mut imported: Option<(Text, Text)> = None;
        let mut from_import = false;
        let mut pending: Option<(Text, usize)> = None;
        let mut flush = |pending: &mut Option<(Text, usize)>, sites: &mut Vec<Load>| {
            if let Some((name, offset)) = pending.take() {
                if name.len() > MAX_DOTTED {
                    return;
                }
                sites.push(Load {
                    name,
                    code: qualname.clone(),
                    code_index: index,
                    line: lines.line_of(offset),
                    offset,
                    at_import,
                });
            }
        };
        for ins in opcodes::instructions(&code.code, table) {
            let op = ins.op;
            if op == table.load_attr || Some(op) == table.load_method {
                let arg = if op == table.load_attr && table.attr_shifted {
                    ins.arg >> 1
                } else {
                    ins.arg
                };
                let next = match (cur.take(), name_at(arg)) {
                    (Some(base), Some((attr, _))) => dotted(&base, attr),
                    _ => None,
                };
                match next {
                    Some(d) => {
                        cur = Some(d.clone());
                        pending = Some((d, ins.offset));
                    }
                    None => flush(&mut pending, &mut sites),
                }
                continue;
            }
            flush(&mut pending, &mut sites);
            if op == table.import_name {
                // A module name past MAX_DOTTED names no module anyone can import.
                imported = name_at(ins.arg)
                    .filter(|(m, _)| m.len() <= MAX_DOTTED)
                    .map(|(m, _)| {
                        let top = m.split('.').next().unwrap_or_default();
                        (m.clone(), Text::from(top))
                    });
                from_import = false;
                cur = imported.as_ref().map(|(m, _)| m.clone());
            } else if op == table.import_from {
                let attr = name_at(ins.arg).map(|(a, _)| a.clone()).unwrap_or_default();
                cur = imported.as_mut().and_then(|(m, walked)| {
                    let cand = dotted(walked, &attr)?;
                    // `import a.b.c as d` walks a.b.c with IMPORT_FROM b, IMPORT_FROM c.
                    if *m == cand
                        || (m.starts_with(cand.as_str())
                            && m.as_bytes().get(cand.len()) == Some(&b'.'))
                    {
                        *walked = cand.clone();
                        Some(cand)
                    } else {
                        dotted(m, &attr)
                    }
                });
                from_import = true;
            } else if op == table.load_name || op == table.load_global {
                let arg = if op == table.load_global && table.global_shifted {
                    ins.arg >> 1
                } else {
                    ins.arg
                };
                cur = name_at(arg).map(|(n, id)| {
                    locals
                        .get(&id)
                        .or_else(|| globals.get(&id))
                        .cloned()
                        .unwrap_or_else(|| n.clone())
                });
                if let Some(n) = &cur {
                    pending = Some((n.clone(), ins.offset));
                    // A bare builtin or unbound name is a site only if it is called; names
                    // that resolve through an import are sites already.
                }
            } else if op == table.load_fast {
                cur = var_at(ins.arg).and_then(|(_, id)| locals.get(&id)).cloned();
            } else if op == table.store_name || op == table.store_global || op == table.store_fast {
                let target = if op == table.store_fast {
                    var_at(ins.arg)
                } else {
                    name_at(ins.arg)
                };
                if let (Some(value), Some((target, id))) = (cur.take(), target) {
                    // `import a.b` binds `a` to the package, `import a.b as c` binds `c` to a.b.
                    let bound = match &imported {
                        Some((m, top)) if !from_import && *m == value => {
                            if *target == *top {
                                top.clone()
                            } else {
                                value
                            }
                        }
                        _ => value,
                    };
                    if is_module && op != table.store_fast || op == table.store_global {
                        globals.insert(id, bound);
                    } else {
                        locals.insert(id, bound);
                    }
                }
            } else {
                cur = None;
            }
        }
        flush(&mut pending, &mut sites);
    }
    sites.sort_by_key(|s| (s.code_index, s.offset));
    sites.dedup();
    sites
}

/// The limits whose names the walker's problems carry.
pub const LIMIT_CODES: &[(&str, &str)] = &[
    ("marshal_depth", "marshal_depth"),
    ("marshal_objects", "marshal_objects"),
];

/// Names and strings kept in the facts (the full lists are in the bytecode; the facts are a
/// summary for the report and the SBOM).
pub const MAX_FACT_NAMES: usize = 200;

/// The distinct strings among `texts`, sorted: each string object is looked at once, however
/// many code objects refer to it.
pub fn distinct<'a>(texts: impl Iterator<Item = &'a Text>) -> Vec<&'a str> {
    let mut seen = HashSet::new();
    let mut out: Vec<&str> = texts
        .filter(|t| seen.insert(t.object_id()))
        .map(|t| t.as_str())
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Name and constant pairs [`named_as_data`] looks up in one file. Real code pairs a handful
/// of names with the one or two constants that name a dangerous callable; only a file made to
/// be slow reaches this, and what it holds past it is not paired (its resolved sites still
/// stand).
const MAX_PAIRS: usize = 1_000_000;

/// Names the bytecode only holds as data: `getattr(os, "sys" + "tem")` compiles to the name
/// `os` and the folded constant `"system"`. A code object whose names include a module and
/// whose string constants include one of that module's dangerous callables is a site too
/// (high: the pairing is evidence, not a resolved call). Only constants that can end an exact
/// entry's name are paired ([`crate::knowledge::capabilities::may_end_exact`]), each distinct pair is looked up
/// once, and at most `MAX_PAIRS` pairs are.
pub fn named_as_data(module: &Module, resolved: &BTreeSet<&str>) -> Vec<behaviour::Site> {
    use crate::knowledge::capabilities::{self, Role};
    use crate::model::finding::Severity;
    let whens = whens(module);
    let mut syms = Symbols::default();
    let mut looked_up: HashMap<(u32, u32), Option<&'static capabilities::Entry>> = HashMap::new();
    let mut pairs = 0usize;
    let mut out = Vec::new();
    for (index, code) in module.code.iter().enumerate() {
        let mut attrs: Vec<(&Text, u32)> = Vec::new();
        for c in &code.const_strings {
            if is_identifier(c) && capabilities::may_end_exact(c) {
                let id = syms.id(c);
                if !attrs.iter().any(|&(_, a)| a == id) {
                    attrs.push((c, id));
                }
            }
        }
        if attrs.is_empty() {
            continue;
        }
        for name in code.names.iter().filter(|n| n.len() <= MAX_DOTTED) {
            let name_id = syms.id(name);
            for &(attr, attr_id) in &attrs {
                pairs += 1;
                if pairs > MAX_PAIRS {
                    return out;
                }
                let call = format!("{name}.{attr}");
                let entry = *looked_up
                    .entry((name_id, attr_id))
                    .or_insert_with(|| capabilities::lookup(&call));
                let Some(entry) = entry else {
                    continue;
                };
                if entry.matching != capabilities::Match::Exact
                    || !matches!(entry.role, Role::Call | Role::Command | Role::Evaluate)
                    || resolved.contains(call.as_str())
                {
                    continue;
                }
                let qualname = clip(&code.qualname);
                out.push(behaviour::Site {
                    capability: entry.capability,
                    severity: Severity::High,
                    confidence: behaviour::Confidence::Medium,
                    line: code.first_line as usize,
                    column: 1,
                    detail: format!(
                        "in compiled code object `{qualname}`, named as data (`{name}` and the string `\"{attr}\"`)"
                    ),
                    call,
                    when: when_from(whens.get(index).copied().unwrap_or(false), &qualname),
                    cwe: entry.cwe,
                    decoded: None,
                    library: None,
                });
            }
        }
    }
    out
}

/// A Python identifier (ASCII subset): what an attribute name in a string constant looks like.
fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    s.len() <= 64
        && chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Names the compiler puts into code objects without the source spelling them.
const COMPILER_NAMES: &[&str] = &[
    "__doc__",
    "__name__",
    "__module__",
    "__qualname__",
    "__annotations__",
    "__class__",
    "__classcell__",
    "__firstlineno__",
    "__static_attributes__",
    "__type_params__",
    "__annotate__",
    "__conditional_annotations__",
    "__classdictcell__",
    ".0",
];

/// Python's escapes for `\n`, `\t`, `\r`, `\\` and quotes, as a literal spells them.
fn escaped(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '"' => out.push_str("\\\""),
            c => out.push(c),
        }
    }
    out
}

/// Below this many (patterns x text bytes), [`search`] looks for each pattern on its own
/// (vectorised substring search, tens of milliseconds at most): fewer patterns than an
/// automaton is worth building for. Above it, the cost of one pass.
const SEARCH_BYTES: usize = 1 << 27;

/// Longest one-line quoted body [`occurring`] compares as a piece.
const MAX_PIECE: usize = 4096;
/// Longest triple-quoted body [`occurring`] compares as a piece: longer ones are searched for.
const MAX_LONG_PIECE: usize = 1 << 16;
/// Up to this many patterns, [`occurring`] searches for each: a few vectorised searches cost
/// less than reading the text piece by piece.
const FEW_PATTERNS: usize = 16;

/// What a byte starts, for [`occurring`]'s read: 1 an identifier run (ASCII letters, digits,
/// `_`, and every byte of a non-ASCII character), 2 a quote, 0 nothing.
static BYTE_CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        if c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80 {
            t[b] = 1;
        } else if c == b'\'' || c == b'"' {
            t[b] = 2;
        }
        b += 1;
    }
    t
};

/// Which of `patterns` occur in `text`. Most names and strings of a module's compilation are
/// equal to a *piece* of its source: an identifier run, or the body of a quoted literal (one
/// line, or triple-quoted: docstrings). So the text is read once, piece by piece, each piece
/// looked up among the patterns (one hash, and the lookup proves the occurrence: a piece is a
/// slice of the text); the read stops when every pattern is found, and only the patterns no
/// piece equals are searched for ([`search`]). Each quote looks ahead only to the next quote
/// of its kind (a triple quote to the next triple quote), so the look-aheads of one kind
/// cover the text about once: linear, whatever the quotes (issue 37).
fn occurring(patterns: &[&str], text: &[u8]) -> Vec<bool> {
    if patterns.len() <= FEW_PATTERNS {
        search(patterns, text)
    } else {
        by_pieces(patterns, text)
    }
}

/// [`occurring`] for more than [`FEW_PATTERNS`]: the read piece by piece, then [`search`] for
/// the patterns no piece equals.
fn by_pieces(patterns: &[&str], text: &[u8]) -> Vec<bool> {
    let mut seen: HashMap<&[u8], bool> = patterns.iter().map(|p| (p.as_bytes(), false)).collect();
    let mut missing = seen.len();
    let mut i = 0;
    while i < text.len() && missing > 0 {
        let b = text[i];
        let piece = match BYTE_CLASS[usize::from(b)] {
            0 => {
                i += 1;
                continue;
            }
            1 => {
                let start = i;
                i += 1;
                while i < text.len() && BYTE_CLASS[usize::from(text[i])] == 1 {
                    i += 1;
                }
                Some(&text[start..i])
            }
            _ => {
                i += 1;
                let rest = &text[i..];
                if rest.len() >= 2 && rest[0] == b && rest[1] == b {
                    let body = &rest[2..];
                    let window = &body[..body.len().min(MAX_LONG_PIECE + 3)];
                    memchr::memmem::find(window, &[b, b, b]).map(|end| &body[..end])
                } else {
                    // An escape gives a piece that is still a slice of the text, just not
                    // the constant.
                    let window = &rest[..rest.len().min(MAX_PIECE)];
                    memchr::memchr2(b, b'\n', window)
                        .filter(|&e| window[e] == b)
                        .map(|end| &rest[..end])
                }
            }
        };
        if let Some(f) = piece.and_then(|p| seen.get_mut(p)).filter(|f| !**f) {
            *f = true;
            missing -= 1;
        }
    }
    let mut found: Vec<bool> = patterns.iter().map(|p| seen[p.as_bytes()]).collect();
    let rest: Vec<usize> = (0..patterns.len()).filter(|&i| !found[i]).collect();
    if rest.is_empty() {
        return found;
    }
    let left: Vec<&str> = rest.iter().map(|&i| patterns[i]).collect();
    for (i, f) in rest.into_iter().zip(search(&left, text)) {
        found[i] = f;
    }
    found
}

/// Which of `patterns` occur in `text`: a substring search per pattern while that is cheap
/// ([`SEARCH_BYTES`]), otherwise [`occurring_in_one_pass`]; time proportional to the text
/// and the patterns, not their product.
fn search(patterns: &[&str], text: &[u8]) -> Vec<bool> {
    if patterns.len().saturating_mul(text.len()) <= SEARCH_BYTES {
        return patterns
            .iter()
            .map(|p| memchr::memmem::find(text, p.as_bytes()).is_some())
            .collect();
    }
    occurring_in_one_pass(patterns, text)
}

/// [`search`] with an Aho-Corasick automaton of the patterns: one pass over the text. Each
/// automaton state's matches are collected the first time the scan reaches it.
fn occurring_in_one_pass(patterns: &[&str], text: &[u8]) -> Vec<bool> {
    use aho_corasick::automaton::Automaton;
    use aho_corasick::{Anchored, nfa::contiguous};
    let mut found = vec![false; patterns.len()];
    let nfa = contiguous::Builder::new().build(patterns.iter().map(|p| p.as_bytes()));
    let Ok(nfa) = nfa else {
        // Too many patterns for the automaton's state numbers: nothing is found, so the pyc
        // is judged on its own.
        return found;
    };
    let Ok(mut sid) = nfa.start_state(Anchored::No) else {
        return found;
    };
    // Match states whose patterns are already marked (state ids are offsets into the
    // automaton, so a bitmap of its size).
    let mut seen: Vec<bool> = Vec::new();
    let mut visit = |sid: aho_corasick::automaton::StateID| {
        if !nfa.is_match(sid) {
            return;
        }
        let at = sid.as_usize();
        if seen.get(at) == Some(&true) {
            return;
        }
        if seen.len() <= at {
            seen.resize(at + 1, false);
        }
        seen[at] = true;
        for i in 0..nfa.match_len(sid) {
            if let Some(f) = found.get_mut(nfa.match_pattern(sid, i).as_usize()) {
                *f = true;
            }
        }
    };
    visit(sid);
    for &b in text {
        sid = nfa.next_state(Anchored::No, sid, b);
        visit(sid);
    }
    found
}

/// The text of names and strings a source may explain, as a multiple of the source's length
/// (plus [`PATTERN_SLACK`]), in each of [`first_unexplained`]'s two passes. A compiled module's
/// distinct names and strings are spelled in its source, most of them once each; a `.pyc` whose
/// strings outweigh its source is not that source's compilation, and is judged on its own.
const PATTERN_RATIO: usize = 2;
const PATTERN_SLACK: usize = 64 * 1024;

/// Why a source does not explain a `.pyc`'s names and strings.
enum Unexplained {
    /// This name or string is not in the source.
    Missing(String),
    /// The distinct names and strings hold more text than [`PATTERN_RATIO`] allows.
    Outweighs(usize),
}

/// The first name or string constant of `module` that `source` does not contain, if any
/// (string constants also count when they appear with Python's escapes for `\n`, `\t`, `\\`
/// and quotes, as a literal spells them, or when each of their lines does). Code object names
/// in angle brackets (`<module>`, `<lambda>`, `<listcomp>`) are the compiler's. When the names
/// and strings outweigh the source (`PATTERN_RATIO`), says how many bytes they hold.
pub fn first_unexplained(module: &Module, source: &str) -> Option<String> {
    match unexplained(module, source)? {
        Unexplained::Missing(s) => Some(s),
        Unexplained::Outweighs(n) => Some(format!("{n} bytes of names and strings")),
    }
}

/// [`first_unexplained`]: each distinct string is looked for once, all of them in one pass over
/// the source per spelling (see [`occurring`]).
fn unexplained(module: &Module, source: &str) -> Option<Unexplained> {
    let all = || {
        module.code.iter().flat_map(|c| {
            std::iter::once(&c.name)
                .chain(&c.names)
                .chain(&c.const_strings)
        })
    };
    let budget = source
        .len()
        .saturating_mul(PATTERN_RATIO)
        .saturating_add(PATTERN_SLACK);
    // Pass 1: every distinct string as it is. `of_object`: a string object's index in `texts`
    // (`None`: explained without looking, as the compiler's).
    let mut of_object: HashMap<usize, Option<usize>> = HashMap::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut texts: Vec<&str> = Vec::new();
    for t in all() {
        if of_object.contains_key(&t.object_id()) {
            continue;
        }
        let s = t.as_str();
        let slot = if s.is_empty()
            || COMPILER_NAMES.contains(&s)
            || (s.starts_with('<') && s.ends_with('>'))
        {
            None
        } else {
            Some(*index.entry(s).or_insert_with(|| {
                texts.push(s);
                texts.len() - 1
            }))
        };
        of_object.insert(t.object_id(), slot);
    }
    let total: usize = texts.iter().map(|s| s.len()).sum();
    if total > budget {
        return Some(Unexplained::Outweighs(total));
    }
    let found = occurring(&texts, source.as_bytes());
    // Pass 2: the escaped spelling and the lines of those not found as they are.
    let forms: Vec<(usize, String, Vec<&str>)> = texts
        .iter()
        .enumerate()
        .filter(|&(i, _)| !found[i])
        .map(|(i, s)| (i, escaped(s), s.lines().map(str::trim).collect()))
        .collect();
    let mut second: Vec<&str> = Vec::new();
    let mut second_index: HashMap<&str, usize> = HashMap::new();
    for (_, esc, lines) in &forms {
        for p in std::iter::once(esc.as_str()).chain(lines.iter().copied()) {
            if !p.is_empty() && !second_index.contains_key(p) {
                second_index.insert(p, second.len());
                second.push(p);
            }
        }
    }
    let total: usize = second.iter().map(|s| s.len()).sum();
    if total > budget {
        return Some(Unexplained::Outweighs(total));
    }
    let found2 = occurring(&second, source.as_bytes());
    let has = |p: &str| p.is_empty() || second_index.get(p).is_some_and(|&i| found2[i]);
    let mut explained = found;
    for (i, esc, lines) in &forms {
        explained[*i] = has(esc) || lines.iter().all(|l| has(l));
    }
    // Pass 3: what the compiler makes that the text does not spell (literal values, folding,
    // mangled and qualified names); only for the few strings still unexplained.
    let rest: Vec<usize> = (0..texts.len()).filter(|&i| !explained[i]).collect();
    if !rest.is_empty() {
        let strings: Vec<&str> = rest.iter().map(|&i| texts[i]).collect();
        let made = compiled::made_by_compiler(&strings, source, occurring);
        for (&i, m) in rest.iter().zip(made) {
            explained[i] = m;
        }
    }
    // The first unexplained in the order the code objects hold them.
    all().find_map(|t| {
        let i = (*of_object.get(&t.object_id())?)?;
        (!explained[i]).then(|| Unexplained::Missing(t.to_string()))
    })
}

/// Whether a `.pyc` matches `source` (see the module documentation): the header's size or hash
/// agrees and [`first_unexplained`] finds nothing. `Err` says why not.
pub fn matches_source(header: &PycHeader, module: &Module, source: &[u8]) -> Result<(), String> {
    match header.kind {
        PycKind::Timestamp { source_size, .. } => {
            let size = source.len() as u64 & 0xffff_ffff;
            if u64::from(source_size) != size {
                return Err(format!(
                    "the header records a {source_size}-byte source; the source is {} bytes",
                    source.len()
                ));
            }
        }
        PycKind::Hash { hash, .. } => {
            if marshal::source_hash(header.magic, header.minor, source) != hash {
                return Err("the header's source hash is not the source's".into());
            }
        }
    }
    let text = String::from_utf8_lossy(source);
    match unexplained(module, &text) {
        Some(Unexplained::Missing(name)) => Err(format!(
            "the bytecode uses `{}`, which the source does not contain",
            crate::model::problem::excerpt(&name, 60)
        )),
        Some(Unexplained::Outweighs(n)) => Err(format!(
            "the bytecode's distinct names and strings hold {n} bytes, more than {PATTERN_RATIO} \
             times the {}-byte source",
            source.len()
        )),
        None => Ok(()),
    }
}

/// Where the source of the `.pyc` at `rel` would be: `a/__pycache__/m.cpython-311.pyc` and
/// `a/__pycache__/m.cpython-311.opt-1.pyc` -> `a/m.py`; `a/m.pyc` -> `a/m.py`.
pub fn source_path_of(rel: &str) -> Option<String> {
    let (dir, file) = rel.rsplit_once('/').unwrap_or(("", rel));
    let stem = file
        .strip_suffix(".pyc")
        .or_else(|| file.strip_suffix(".pyo"))?;
    let (dir, module) = match dir.rsplit_once('/') {
        Some((parent, "__pycache__")) => (parent.to_string(), stem.split('.').next()?),
        None if dir == "__pycache__" => (String::new(), stem.split('.').next()?),
        _ => (dir.to_string(), stem),
    };
    if module.is_empty() {
        return None;
    }
    Some(if dir.is_empty() {
        format!("{module}.py")
    } else {
        format!("{dir}/{module}.py")
    })
}

#[cfg(test)]
mod tests {
    use super::marshal::{Limits, parse_pyc};
    use super::*;

    #[test]
    fn a_hundred_thousand_nested_code_objects_resolve_in_a_loop() {
        // Issue 37: `when` of each code object follows its parents; a recursion would
        // overflow the stack on this nest.
        let blob = super::marshal::tests::nested_code_objects(100_000);
        let deep = Limits {
            max_depth: 1_000_000,
            max_objects: 10_000_000,
        };
        let m = super::marshal::loads(&blob, 11, &deep).unwrap();
        assert!(resolve(&m, 11).is_empty());
    }

    const OS_SYSTEM: &[u8] =
        include_bytes!("../../../tests/fixtures/bytecode/os_system.cpython-311.pyc");
    const OS_SYSTEM_HASH: &[u8] =
        include_bytes!("../../../tests/fixtures/bytecode/os_system.hash.pyc");
    const OS_SYSTEM_SRC: &[u8] = include_bytes!("../../../tests/fixtures/bytecode/os_system.py");
    const FROM_IMPORT: &[u8] =
        include_bytes!("../../../tests/fixtures/bytecode/from_import.cpython-311.pyc");
    const NESTED: &[u8] = include_bytes!("../../../tests/fixtures/bytecode/nested.cpython-311.pyc");
    const CLEAN: &[u8] = include_bytes!("../../../tests/fixtures/bytecode/clean.cpython-311.pyc");
    const CLEAN_SRC: &[u8] = include_bytes!("../../../tests/fixtures/bytecode/clean.py");

    fn sites(pyc: &[u8]) -> Vec<(String, String, Option<u32>, When)> {
        let p = parse_pyc(pyc, &Limits::default()).unwrap();
        resolve(&p.module, p.header.minor)
            .into_iter()
            .map(|s| (s.name.to_string(), s.code.to_string(), s.line, s.when()))
            .collect()
    }

    #[test]
    fn resolves_os_system_at_import_time_with_its_line() {
        let s = sites(OS_SYSTEM);
        assert!(
            s.contains(&("os.system".into(), "<module>".into(), Some(4), When::Import)),
            "{s:?}"
        );
    }

    #[test]
    fn resolves_from_imports_with_aliases() {
        let s = sites(FROM_IMPORT);
        assert!(
            s.contains(&(
                "subprocess.Popen".into(),
                "run".into(),
                Some(6),
                when_from(false, "run")
            )),
            "{s:?}"
        );
    }

    #[test]
    fn resolves_module_aliases_in_nested_functions() {
        let s = sites(NESTED);
        assert!(
            s.contains(&(
                "os.popen".into(),
                "Loader.load.<locals>.inner".into(),
                Some(7),
                when_from(false, "Loader.load.<locals>.inner")
            )),
            "{s:?}"
        );
    }

    #[test]
    fn a_pyc_matches_its_own_source_and_not_another() {
        let p = parse_pyc(OS_SYSTEM, &Limits::default()).unwrap();
        assert_eq!(matches_source(&p.header, &p.module, OS_SYSTEM_SRC), Ok(()));
        let h = parse_pyc(OS_SYSTEM_HASH, &Limits::default()).unwrap();
        assert_eq!(matches_source(&h.header, &h.module, OS_SYSTEM_SRC), Ok(()));
        // Clean source of the same size: the header agrees, the names do not.
        let mut padded = CLEAN_SRC.to_vec();
        padded.resize(OS_SYSTEM_SRC.len(), b' ');
        let e = matches_source(&p.header, &p.module, &padded).unwrap_err();
        assert!(e.contains("`os`") || e.contains("`system`"), "{e}");
        let c = parse_pyc(CLEAN, &Limits::default()).unwrap();
        assert_eq!(matches_source(&c.header, &c.module, CLEAN_SRC), Ok(()));
        assert!(matches_source(&c.header, &c.module, OS_SYSTEM_SRC).is_err());
        assert!(matches_source(&h.header, &h.module, CLEAN_SRC).is_err());
    }

    #[test]
    fn the_compilers_own_constants_match_their_source_in_38_311_and_313() {
        // Adjacent literals, `+` and `*` folding, escapes, `%` formatting compiled as an
        // f-string, `{x=}`, a lone surrogate, mangled and qualified names, annotations stored
        // as text, and a docstring 3.13 dedents: each version's own compilation matches
        // (before `compiled.rs` every one of them "differed"), and a source of the same size
        // that says something else does not.
        const SRC: &[u8] = include_bytes!("../../../tests/fixtures/bytecode/compiled_strings.py");
        for pyc in [
            &include_bytes!("../../../tests/fixtures/bytecode/compiled_strings.cpython-38.pyc")[..],
            &include_bytes!("../../../tests/fixtures/bytecode/compiled_strings.cpython-311.pyc")[..],
            &include_bytes!("../../../tests/fixtures/bytecode/compiled_strings.cpython-313.pyc")[..],
        ] {
            let p = parse_pyc(pyc, &Limits::default()).unwrap();
            assert_eq!(matches_source(&p.header, &p.module, SRC), Ok(()));
            let text = std::str::from_utf8(SRC).unwrap();
            for (from, to) in [
                ("\"world\"", "\"wordl\""),
                ("\"-\" * 40", "\"=\" * 40"),
                ("__name", "__nome"),
                ("class Inner:", "class Outer:"),
                ("(100%%)", "(100%s)"),
            ] {
                let other = text.replace(from, to);
                assert_ne!(other, text);
                let Err(e) = matches_source(&p.header, &p.module, other.as_bytes()) else {
                    panic!("{from} -> {to}: still matches");
                };
                assert!(e.contains("the bytecode uses"), "{from}: {e}");
            }
        }
    }

    #[test]
    fn every_occurring_pattern_is_found_in_one_pass() {
        let pats = ["a", "aa", "aaa", "ab", "b", "ba", "zzz"];
        for search in [search, occurring_in_one_pass, occurring, by_pieces] {
            assert_eq!(
                search(&pats, b"xaaab"),
                [true, true, true, true, true, false, false]
            );
            // Patterns that are suffixes of each other, over a long run: each automaton
            // state's matches are collected once, not at every byte.
            let long: Vec<String> = (1..=200).map(|n| "a".repeat(n)).collect();
            let refs: Vec<&str> = long.iter().map(String::as_str).collect();
            let found = search(&refs, "a".repeat(100_000).as_bytes());
            assert!(found.iter().all(|&f| f));
            let found = search(&refs, "a".repeat(150).as_bytes());
            assert_eq!(found.iter().filter(|&&f| f).count(), 150);
        }
    }

    #[test]
    fn pieces_are_found_without_a_search_and_the_rest_with_one() {
        let src = b"import os\nx = os.path.join('a b', \"it's\")  # don't\ny = '''doc'''\n";
        let pats = [
            "import",
            "os",
            "path",
            "a b",
            "it's",
            "don",
            "doc",
            "os.path",
            "join('a",
            "oc",
            "''doc''",
            "it's\")  #",
            "system",
            "ab",
            "'''\n",
        ];
        let found = by_pieces(&pats, src);
        assert_eq!(&found[..12], [true; 12]);
        assert_eq!(&found[12..], [false, false, true]);
        // A quote with no partner on its line gives no piece, and the read goes on.
        assert_eq!(
            by_pieces(&["open", "x", "open\nx"], b"'open\nx\""),
            [true; 3]
        );
        // Every pattern found: the read stops early, the answer is the same.
        assert_eq!(by_pieces(&["a", "b"], b"a b c d"), [true, true]);
        assert_eq!(by_pieces(&["a", "a"], b"a"), [true, true]);
        assert_eq!(occurring(&pats, src), found);
    }

    /// A module of one code object holding `names`, `consts` and instructions `code`.
    fn module_of(names: Vec<Text>, consts: Vec<Text>, code: Vec<u8>) -> Module {
        Module {
            code: vec![CodeObject {
                name: "<module>".into(),
                qualname: "<module>".into(),
                names,
                const_strings: consts,
                code,
                line_format: Some(marshal::LineTable::Locations),
                ..CodeObject::default()
            }],
            objects: 0,
        }
    }

    #[test]
    fn a_long_name_loaded_everywhere_is_numbered_once_and_never_copied_into_sites() {
        // 50,000 LOAD_NAMEs of one 100,000-character name: the name is hashed once, and a name
        // past MAX_DOTTED is no site (no callable is called that).
        let long = Text::from("a".repeat(100_000));
        let code: Vec<u8> = [101u8, 0].repeat(50_000);
        let m = module_of(vec![long.clone()], Vec::new(), code);
        assert!(resolve(&m, 11).is_empty());
        let mut syms = Symbols::default();
        for _ in 0..50_000 {
            syms.id(&long);
        }
        assert_eq!((syms.by_object.len(), syms.by_text.len()), (1, 1));
        // A short one is a site at every load, resolved through its import.
        let names = vec![Text::from("os"), Text::from("o"), Text::from("system")];
        // IMPORT_NAME os; STORE_NAME o; then 1,000 x (LOAD_NAME o; LOAD_ATTR system).
        let mut code = vec![108u8, 0, 90, 1];
        for _ in 0..1000 {
            code.extend_from_slice(&[101, 1, 106, 2]);
        }
        let m = module_of(names, Vec::new(), code);
        let sites = resolve(&m, 11);
        assert_eq!(sites.len(), 1000);
        assert!(sites.iter().all(|s| s.name == "os.system"));
    }

    #[test]
    fn names_and_constants_are_paired_only_through_dangerous_attribute_names() {
        // 5,000 names and 5,000 identifier constants: 25 million pairs if each were looked
        // up; only `system` can end a dangerous name, so 5,000 are.
        let mut names: Vec<Text> = (0..5000).map(|i| Text::from(format!("n{i}"))).collect();
        names.push("os".into());
        let mut consts: Vec<Text> = (0..5000).map(|i| Text::from(format!("c{i}"))).collect();
        consts.push("system".into());
        let m = module_of(names, consts, Vec::new());
        let paired = named_as_data(&m, &BTreeSet::new());
        let calls: Vec<&str> = paired.iter().map(|s| s.call.as_str()).collect();
        assert_eq!(calls, ["os.system"]);
        assert!(named_as_data(&m, &BTreeSet::from(["os.system"])).is_empty());
    }

    #[test]
    fn a_string_shared_by_every_code_object_is_looked_for_once() {
        let p = parse_pyc(OS_SYSTEM, &Limits::default()).unwrap();
        // The same module, its code objects repeated 10,000 times (sharing their strings).
        let mut m = p.module.clone();
        let copies: Vec<CodeObject> = (0..10_000).flat_map(|_| p.module.code.clone()).collect();
        m.code = copies;
        assert_eq!(
            first_unexplained(&m, std::str::from_utf8(OS_SYSTEM_SRC).unwrap()),
            None
        );
        let e = first_unexplained(&m, std::str::from_utf8(CLEAN_SRC).unwrap());
        assert!(e.is_some());
        // Strings that outweigh the source: not its compilation.
        let huge = module_of(
            vec![Text::from("x".repeat(200_000))],
            Vec::new(),
            Vec::new(),
        );
        let header = PycHeader {
            kind: PycKind::Timestamp {
                mtime: 0,
                source_size: 1000,
            },
            ..p.header
        };
        let why = matches_source(&header, &huge, &[b'x'; 1000]).unwrap_err();
        assert!(why.contains("more than 2 times"), "{why}");
    }

    #[test]
    fn source_paths_of_pycs() {
        assert_eq!(
            source_path_of("m/__pycache__/modeling.cpython-311.pyc").as_deref(),
            Some("m/modeling.py")
        );
        assert_eq!(
            source_path_of("__pycache__/a.cpython-39.opt-1.pyc").as_deref(),
            Some("a.py")
        );
        assert_eq!(source_path_of("m/x.pyc").as_deref(), Some("m/x.py"));
        assert_eq!(source_path_of("m/x.bin"), None);
    }
}
