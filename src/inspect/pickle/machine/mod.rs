//! The symbolic unpickler: CPython's `_pickle.c` load loop with values replaced by what a
//! scanner needs to know about them (strings, small integers, imported globals, objects built
//! from a global, containers). The stack, the mark stack with its fence, and the memo follow the
//! C implementation rule for rule (POP pops a MARK when the top of the stack is the mark
//! position, APPEND/SETITEMS targets must sit above the fence, MEMOIZE keys on the number of
//! memo entries, ...), because a reader that disagrees with CPython about the stack can be fed
//! a stream where it sees harmless strings where CPython sees `os` and `system`.

use std::collections::HashMap;
use std::io::BufRead;
use std::rc::Rc;

use super::ops::{self, Arg, OpInfo, Payload, Source};
use super::{Analysis, Import, Limits, Malformed, PickleInfo, RawRegion};
use crate::knowledge::normalize_module;

/// A kept string value.
#[derive(Debug)]
struct Text {
    value: String,
    /// False when only a prefix was kept (or decoding was lossy).
    complete: bool,
    /// True for `str` (unicode and protocol 0-2 strings), false for `bytes`.
    is_str: bool,
    opcode: &'static str,
}

/// A symbolic value.
#[derive(Debug, Clone)]
enum Val {
    Str(Rc<Text>),
    Int(i64),
    PyNone,
    /// An imported global (index into `Analysis::imports`).
    Global(usize),
    /// The result of calling something; `class` is the import that was called, if known.
    Obj {
        class: Option<usize>,
        node: Option<usize>,
    },
    /// A tracked container (index into the node arena).
    Node(usize),
    /// Anything else; the name says where it came from.
    Other(&'static str),
}

impl Val {
    fn describe(&self) -> &'static str {
        match self {
            Val::Str(t) => t.opcode,
            Val::Int(_) => "integer",
            Val::PyNone => "None",
            Val::Global(_) => "global",
            Val::Obj { .. } => "object",
            Val::Node(_) => "container",
            Val::Other(what) => what,
        }
    }
}

#[derive(Debug)]
enum Node {
    Seq(Vec<Val>),
    Dict(Vec<(Val, Val)>),
    Obj {
        args: Option<Val>,
        state: Option<Val>,
    },
}

/// Saved outer machine while a joblib object array's nested pickle is read.
struct Saved {
    stack: Vec<Val>,
    marks: Vec<usize>,
    memo: HashMap<u64, Val>,
}

enum Flow {
    Continue,
    Stop,
}

struct Machine<'l> {
    limits: &'l Limits,
    pickle: usize,
    stack: Vec<Val>,
    marks: Vec<usize>,
    memo: HashMap<u64, Val>,
    nodes: Vec<Node>,
    tracked_bytes: usize,
    proto: u8,
    nested: Option<Box<Saved>>,
}

/// Read one pickle (up to and including its STOP) and record its imports in `out`.
pub(super) fn run_pickle<R: BufRead>(
    src: &mut Source<'_, R>,
    limits: &Limits,
    pickle: usize,
    budget: &mut u64,
    out: &mut Analysis,
) -> Result<(), Malformed> {
    let mut m = Machine {
        limits,
        pickle,
        stack: Vec::new(),
        marks: Vec::new(),
        memo: HashMap::new(),
        nodes: Vec::new(),
        tracked_bytes: 0,
        proto: 0,
        nested: None,
    };
    let start = src.pos;
    let mut count: u64 = 0;
    let result = loop {
        let at = src.pos;
        let byte = match src.next_byte() {
            Ok(Some(b)) => b,
            Ok(None) => {
                break Err(Malformed::new(
                    at,
                    "truncated",
                    format!("stream ends at offset {at} before STOP"),
                ));
            }
            Err(e) => break Err(e),
        };
        if *budget == 0 {
            break Err(Malformed::new(
                at,
                "limit-opcodes",
                format!(
                    "opcode at offset {at} is over the {}-opcode limit",
                    limits.max_opcodes
                ),
            ));
        }
        *budget -= 1;
        count += 1;
        let Some(info) = ops::lookup(byte) else {
            break Err(Malformed::new(
                at,
                "unknown-opcode",
                format!("byte 0x{byte:02x} at offset {at} is not a pickle opcode"),
            ));
        };
        let arg = match ops::read_arg(src, info, limits) {
            Ok(arg) => arg,
            Err(e) => break Err(e),
        };
        match m.step(src, info, arg, at, out) {
            Ok(Flow::Continue) => {}
            Ok(Flow::Stop) => break Ok(()),
            Err(e) => break Err(e),
        }
    };
    out.pickles.push(PickleInfo {
        offset: start,
        protocol: m.proto,
        opcodes: count,
        end: src.pos,
        complete: result.is_ok(),
    });
    result
}

fn err(at: u64, code: &'static str, message: String) -> Malformed {
    Malformed::new(at, code, message)
}

impl Machine<'_> {
    fn fence(&self) -> usize {
        self.marks.last().copied().unwrap_or(0)
    }

    fn underflow(&self, at: u64, op: &str) -> Malformed {
        let why = if self.marks.is_empty() {
            "the stack is empty"
        } else {
            "only a MARK is left"
        };
        err(
            at,
            "stack-underflow",
            format!("{op} at offset {at} needs a value but {why}"),
        )
    }

    fn push(&mut self, v: Val, at: u64) -> Result<(), Malformed> {
        if self.stack.len() >= self.limits.max_stack {
            return Err(err(
                at,
                "limit-stack",
                format!(
                    "stack at offset {at} exceeds {} values",
                    self.limits.max_stack
                ),
            ));
        }
        self.stack.push(v);
        Ok(())
    }

    fn pop(&mut self, at: u64, op: &str) -> Result<Val, Malformed> {
        if self.stack.len() <= self.fence() {
            return Err(self.underflow(at, op));
        }
        self.stack.pop().ok_or_else(|| self.underflow(at, op))
    }

    fn top(&self, at: u64, op: &str) -> Result<Val, Malformed> {
        if self.stack.len() <= self.fence() {
            return Err(self.underflow(at, op));
        }
        self.stack
            .last()
            .cloned()
            .ok_or_else(|| self.underflow(at, op))
    }

    /// `marker()` in `_pickle.c`: pop the innermost MARK and return its stack position.
    fn marker(&mut self, at: u64, op: &str) -> Result<usize, Malformed> {
        self.marks.pop().ok_or_else(|| {
            err(
                at,
                "mark-missing",
                format!("{op} at offset {at} finds no MARK"),
            )
        })
    }

    /// Pop the values from `start` (which must not be below the fence) to the top.
    fn pop_from(&mut self, start: usize, at: u64, op: &str) -> Result<Vec<Val>, Malformed> {
        if start < self.fence() || start > self.stack.len() {
            return Err(self.underflow(at, op));
        }
        Ok(self.stack.split_off(start))
    }

    fn new_node(&mut self, node: Node) -> Option<usize> {
        if self.nodes.len() >= self.limits.max_nodes {
            return None;
        }
        self.nodes.push(node);
        Some(self.nodes.len() - 1)
    }

    fn seq(&mut self, mut items: Vec<Val>, what: &'static str) -> Val {
        items.truncate(self.limits.max_container_items);
        match self.new_node(Node::Seq(items)) {
            Some(id) => Val::Node(id),
            None => Val::Other(what),
        }
    }

    fn text(&mut self, value: String, complete: bool, is_str: bool, opcode: &'static str) -> Val {
        let Some(total) = self.tracked_bytes.checked_add(value.len()) else {
            return Val::Other(opcode);
        };
        if total > self.limits.max_tracked_bytes {
            return Val::Other(opcode);
        }
        self.tracked_bytes = total;
        Val::Str(Rc::new(Text {
            value,
            complete,
            is_str,
            opcode,
        }))
    }

    fn memo_put(&mut self, key: u64, v: Val, at: u64) -> Result<(), Malformed> {
        if !self.memo.contains_key(&key) && self.memo.len() >= self.limits.max_memo {
            return Err(err(
                at,
                "limit-memo",
                format!(
                    "memo at offset {at} exceeds {} entries",
                    self.limits.max_memo
                ),
            ));
        }
        self.memo.insert(key, v);
        Ok(())
    }

    fn memo_get(&mut self, key: u64, at: u64, op: &str) -> Result<(), Malformed> {
        let Some(v) = self.memo.get(&key).cloned() else {
            return Err(err(
                at,
                "memo-missing",
                format!("{op} at offset {at} reads memo slot {key}, which was never set"),
            ));
        };
        self.push(v, at)
    }

    fn add_import(&mut self, out: &mut Analysis, imp: Import, at: u64) -> Result<usize, Malformed> {
        if out.imports.len() >= self.limits.max_imports {
            return Err(err(
                at,
                "limit-imports",
                format!(
                    "import at offset {at} exceeds {} imports",
                    self.limits.max_imports
                ),
            ));
        }
        out.imports.push(imp);
        Ok(out.imports.len() - 1)
    }

    fn new_import(
        &self,
        module: Option<String>,
        name: Option<String>,
        opcode: &'static str,
        at: u64,
        note: Option<String>,
    ) -> Import {
        Import {
            module,
            name,
            opcode,
            offset: at,
            pickle: self.pickle,
            called: false,
            call_opcode: None,
            note,
        }
    }

    /// Record that `v` (or the global it was built from) is called or has a method invoked.
    fn mark_called(&self, out: &mut Analysis, v: &Val, op: &'static str, why: &str) {
        let (idx, note) = match v {
            Val::Global(i) => (*i, None),
            Val::Obj { class: Some(i), .. } => (*i, Some(why)),
            _ => return,
        };
        let Some(imp) = out.imports.get_mut(idx) else {
            return;
        };
        if imp.called {
            return;
        }
        imp.called = true;
        imp.call_opcode = Some(op);
        if let (Some(note), None) = (note, &imp.note) {
            imp.note = Some(format!("{note} ({op})"));
        }
    }

    /// GLOBAL/INST line -> module or name, when it can be resolved.
    fn line_name(&self, p: &Payload, what: &str, notes: &mut Vec<String>) -> Option<String> {
        if !p.complete() || p.head.len() > self.limits.max_name_len {
            notes.push(format!("{what} is {} bytes, over the name limit", p.len));
            return None;
        }
        match String::from_utf8(p.head.clone()) {
            Ok(s) => Some(s),
            Err(_) => {
                notes.push(format!("{what} is not valid utf-8"));
                None
            }
        }
    }

    /// A STACK_GLOBAL operand -> module or name, when it is a string.
    fn operand_name(&self, v: &Val, what: &str, notes: &mut Vec<String>) -> Option<String> {
        match v {
            Val::Str(t) if !t.complete || t.value.len() > self.limits.max_name_len => {
                notes.push(format!(
                    "{what} from {} is truncated or over the name limit",
                    t.opcode
                ));
                None
            }
            Val::Str(t) => {
                if !t.is_str {
                    notes.push(format!(
                        "{what} is bytes from {} (cpython requires str and raises)",
                        t.opcode
                    ));
                }
                Some(t.value.clone())
            }
            other => {
                notes.push(format!(
                    "{what} is a {} value, not a string constant",
                    other.describe()
                ));
                None
            }
        }
    }

    fn step<R: BufRead>(
        &mut self,
        src: &mut Source<'_, R>,
        info: &OpInfo,
        arg: Arg,
        at: u64,
        out: &mut Analysis,
    ) -> Result<Flow, Malformed> {
        let op = info.name;
        match op {
            "INT" => {
                let v = match &arg {
                    Arg::Data(p) if p.head == b"00" || p.head == b"01" => Val::Other("bool"),
                    Arg::Data(p) => parse_decimal(&p.head).map_or(Val::Other("int"), Val::Int),
                    _ => Val::Other("int"),
                };
                self.push(v, at)?;
            }
            "BININT" | "BININT1" | "BININT2" => {
                let v = match arg {
                    Arg::Int(i) => Val::Int(i),
                    _ => Val::Other("int"),
                };
                self.push(v, at)?;
            }
            "LONG" => {
                let v = match &arg {
                    Arg::Data(p) => {
                        let digits = p.head.strip_suffix(b"L").unwrap_or(&p.head);
                        parse_decimal(digits).map_or(Val::Other("int"), Val::Int)
                    }
                    _ => Val::Other("int"),
                };
                self.push(v, at)?;
            }
            "LONG1" | "LONG4" => {
                let v = match &arg {
                    Arg::Data(p) if p.complete() && p.head.len() <= 8 => {
                        Val::Int(le_signed(&p.head))
                    }
                    _ => Val::Other("int"),
                };
                self.push(v, at)?;
            }
            "STRING" => {
                let Arg::Data(p) = &arg else {
                    return Err(err(
                        at,
                        "bad-argument",
                        format!("{op} at offset {at} has no argument"),
                    ));
                };
                let opens = matches!(p.head.first(), Some(b'\'' | b'"'));
                let closes = p.head.len() >= 2 && p.head.first() == p.head.last();
                let quoted = opens && (closes || !p.complete());
                if !quoted {
                    return Err(err(
                        at,
                        "bad-argument",
                        format!("STRING argument at offset {at} is not quoted"),
                    ));
                }
                let inner = p
                    .head
                    .get(1..p.head.len().saturating_sub(1))
                    .unwrap_or_default();
                let inner = if p.complete() {
                    inner
                } else {
                    p.head.get(1..).unwrap_or_default()
                };
                let (bytes, exact) = unescape_bytes(inner);
                let value: String = bytes.iter().map(|&b| char::from(b)).collect();
                let v = self.text(value, p.complete() && exact, true, op);
                self.push(v, at)?;
            }
            "BINSTRING" | "SHORT_BINSTRING" => {
                let v = match &arg {
                    Arg::Data(p) => {
                        let value: String = p.head.iter().map(|&b| char::from(b)).collect();
                        self.text(value, p.complete(), true, op)
                    }
                    _ => Val::Other(op),
                };
                self.push(v, at)?;
            }
            "BINBYTES" | "SHORT_BINBYTES" | "BINBYTES8" => {
                let v = match &arg {
                    Arg::Data(p) => match String::from_utf8(p.head.clone()) {
                        Ok(value) => self.text(value, p.complete(), false, op),
                        Err(_) => Val::Other(op),
                    },
                    _ => Val::Other(op),
                };
                self.push(v, at)?;
            }
            "UNICODE" => {
                let v = match &arg {
                    Arg::Data(p) => {
                        let (value, exact) = raw_unicode_escape(&p.head);
                        self.text(value, p.complete() && exact, true, op)
                    }
                    _ => Val::Other(op),
                };
                self.push(v, at)?;
            }
            "SHORT_BINUNICODE" | "BINUNICODE" | "BINUNICODE8" => {
                let v = match &arg {
                    Arg::Data(p) => match std::str::from_utf8(&p.head) {
                        Ok(s) => self.text(s.to_owned(), p.complete(), true, op),
                        // A prefix may end inside a character; only the whole string counts.
                        Err(_) => {
                            let s = String::from_utf8_lossy(&p.head).into_owned();
                            self.text(s, false, true, op)
                        }
                    },
                    _ => Val::Other(op),
                };
                self.push(v, at)?;
            }
            "BYTEARRAY8" | "NEXT_BUFFER" | "FLOAT" | "BINFLOAT" | "NEWTRUE" | "NEWFALSE" => {
                self.push(Val::Other(op), at)?;
            }
            "NONE" => self.push(Val::PyNone, at)?,
            "READONLY_BUFFER" => {
                self.top(at, op)?;
            }
            "EMPTY_LIST" | "EMPTY_TUPLE" | "EMPTY_SET" => {
                let v = self.seq(Vec::new(), op);
                self.push(v, at)?;
            }
            "EMPTY_DICT" => {
                let v = match self.new_node(Node::Dict(Vec::new())) {
                    Some(id) => Val::Node(id),
                    None => Val::Other(op),
                };
                self.push(v, at)?;
            }
            "APPEND" => {
                if self.stack.len().saturating_sub(1) <= self.fence() || self.stack.is_empty() {
                    return Err(self.underflow(at, op));
                }
                self.extend_container(self.stack.len() - 1, at, op, out)?;
            }
            "APPENDS" | "SETITEMS" | "ADDITEMS" => {
                let mark = self.marker(at, op)?;
                self.extend_container(mark, at, op, out)?;
            }
            "SETITEM" => {
                let Some(x) = self.stack.len().checked_sub(2) else {
                    return Err(self.underflow(at, op));
                };
                self.extend_container(x, at, op, out)?;
            }
            "LIST" | "TUPLE" | "FROZENSET" => {
                let mark = self.marker(at, op)?;
                let items = self.pop_from(mark, at, op)?;
                let v = self.seq(items, op);
                self.push(v, at)?;
            }
            "TUPLE1" | "TUPLE2" | "TUPLE3" => {
                let n = match op {
                    "TUPLE1" => 1,
                    "TUPLE2" => 2,
                    _ => 3,
                };
                let Some(start) = self.stack.len().checked_sub(n) else {
                    return Err(self.underflow(at, op));
                };
                let items = self.pop_from(start, at, op)?;
                let v = self.seq(items, op);
                self.push(v, at)?;
            }
            "DICT" => {
                let mark = self.marker(at, op)?;
                let items = self.pop_from(mark, at, op)?;
                if !items.len().is_multiple_of(2) {
                    return Err(err(
                        at,
                        "odd-items",
                        format!(
                            "DICT at offset {at} has an odd number ({}) of items",
                            items.len()
                        ),
                    ));
                }
                let pairs = pairs(items, self.limits.max_container_items);
                let v = match self.new_node(Node::Dict(pairs)) {
                    Some(id) => Val::Node(id),
                    None => Val::Other(op),
                };
                self.push(v, at)?;
            }
            "POP" => {
                let len = self.stack.len();
                if self.marks.last() == Some(&len) {
                    self.marks.pop();
                } else {
                    self.pop(at, op)?;
                }
            }
            "POP_MARK" => {
                let mark = self.marker(at, op)?;
                self.stack.truncate(mark);
            }
            "DUP" => {
                let v = self.top(at, op)?;
                self.push(v, at)?;
            }
            "MARK" => {
                if self.marks.len() >= self.limits.max_marks {
                    return Err(err(
                        at,
                        "limit-marks",
                        format!(
                            "MARK at offset {at} exceeds {} open marks",
                            self.limits.max_marks
                        ),
                    ));
                }
                self.marks.push(self.stack.len());
            }
            "GET" => {
                let key = memo_key_text(&arg, at, op)?;
                match key {
                    Some(k) => self.memo_get(k, at, op)?,
                    None => {
                        return Err(err(
                            at,
                            "memo-missing",
                            format!("GET at offset {at} reads a negative memo slot"),
                        ));
                    }
                }
            }
            "BINGET" | "LONG_BINGET" => {
                let key = match arg {
                    Arg::Int(i) => u64::try_from(i).unwrap_or(u64::MAX),
                    _ => u64::MAX,
                };
                self.memo_get(key, at, op)?;
            }
            "PUT" | "BINPUT" | "LONG_BINPUT" | "MEMOIZE" => {
                let key = match (op, &arg) {
                    ("MEMOIZE", _) => self.memo.len() as u64,
                    ("PUT", _) => memo_key_text(&arg, at, op)?.ok_or_else(|| {
                        err(
                            at,
                            "bad-argument",
                            format!("PUT at offset {at} has a negative index"),
                        )
                    })?,
                    (_, Arg::Int(i)) => u64::try_from(*i).unwrap_or(u64::MAX),
                    _ => u64::MAX,
                };
                let v = self.top(at, op)?;
                self.memo_put(key, v, at)?;
            }
            "EXT1" | "EXT2" | "EXT4" => {
                let code = match arg {
                    Arg::Int(i) => i,
                    _ => 0,
                };
                if code <= 0 {
                    return Err(err(
                        at,
                        "bad-argument",
                        format!("{op} at offset {at} has code {code} <= 0"),
                    ));
                }
                let note = format!(
                    "extension code {code} is looked up in copyreg's registry at load time"
                );
                let imp = self.new_import(None, None, op, at, Some(note));
                let idx = self.add_import(out, imp, at)?;
                self.push(Val::Global(idx), at)?;
            }
            "GLOBAL" | "INST" => {
                let Arg::Pair(m, n) = &arg else {
                    return Err(err(
                        at,
                        "bad-argument",
                        format!("{op} at offset {at} has no argument"),
                    ));
                };
                if m.len == 0 || n.len == 0 {
                    return Err(err(
                        at,
                        "bad-argument",
                        format!("{op} at offset {at} has an empty line"),
                    ));
                }
                let mut notes = Vec::new();
                let module = self.line_name(m, "module", &mut notes);
                let name = self.line_name(n, "name", &mut notes);
                let note = (!notes.is_empty()).then(|| notes.join("; "));
                let imp = self.new_import(module, name, op, at, note);
                let idx = self.add_import(out, imp, at)?;
                if op == "GLOBAL" {
                    self.push(Val::Global(idx), at)?;
                } else {
                    // INST: find_class, then instantiate with the values above the MARK.
                    let mark = self.marker(at, op)?;
                    let args = self.pop_from(mark, at, op)?;
                    self.mark_called(out, &Val::Global(idx), op, "");
                    let args = self.seq(args, op);
                    let v = self.obj(Some(idx), Some(args));
                    self.push(v, at)?;
                }
            }
            "STACK_GLOBAL" => {
                let name_v = self.pop(at, op)?;
                let module_v = self.pop(at, op)?;
                let mut notes = Vec::new();
                let module = self.operand_name(&module_v, "module", &mut notes);
                let name = self.operand_name(&name_v, "name", &mut notes);
                let note = (!notes.is_empty()).then(|| notes.join("; "));
                let imp = self.new_import(module, name, op, at, note);
                let idx = self.add_import(out, imp, at)?;
                self.push(Val::Global(idx), at)?;
            }
            "REDUCE" => {
                let args = self.pop(at, op)?;
                let callable = self.pop(at, op)?;
                self.mark_called(out, &callable, op, "the object it returned is called");
                let v = self.obj(class_of(&callable), Some(args));
                self.push(v, at)?;
            }
            "NEWOBJ" => {
                let args = self.pop(at, op)?;
                let cls = self.pop(at, op)?;
                self.mark_called(out, &cls, op, "the object it returned is instantiated");
                let v = self.obj(class_of(&cls), Some(args));
                self.push(v, at)?;
            }
            "NEWOBJ_EX" => {
                let _kwargs = self.pop(at, op)?;
                let args = self.pop(at, op)?;
                let cls = self.pop(at, op)?;
                self.mark_called(out, &cls, op, "the object it returned is instantiated");
                let v = self.obj(class_of(&cls), Some(args));
                self.push(v, at)?;
            }
            "OBJ" => {
                let mark = self.marker(at, op)?;
                if self.stack.len() <= mark {
                    return Err(self.underflow(at, op));
                }
                let args = self.pop_from(mark + 1, at, op)?;
                let cls = self.pop(at, op)?;
                self.mark_called(out, &cls, op, "the object it returned is instantiated");
                let args = self.seq(args, op);
                let v = self.obj(class_of(&cls), Some(args));
                self.push(v, at)?;
            }
            "BUILD" => {
                let state = self.pop(at, op)?;
                let inst = self.top(at, op)?;
                self.mark_called(
                    out,
                    &inst,
                    op,
                    "build calls __setstate__ or sets attributes",
                );
                if let Val::Obj { node: Some(n), .. } = &inst
                    && let Some(Node::Obj { state: slot, .. }) = self.nodes.get_mut(*n)
                {
                    *slot = Some(state.clone());
                }
                self.after_build(src, &inst, &state, at, out)?;
            }
            "PROTO" => {
                let v = match arg {
                    Arg::Int(i) => i,
                    _ => -1,
                };
                let Ok(v) = u8::try_from(v) else {
                    return Err(err(
                        at,
                        "bad-argument",
                        format!("PROTO at offset {at} has no version"),
                    ));
                };
                if v > 5 {
                    return Err(err(
                        at,
                        "unsupported-protocol",
                        format!("PROTO at offset {at} names protocol {v}; the highest is 5"),
                    ));
                }
                self.proto = self.proto.max(v);
            }
            "FRAME" => {}
            "PERSID" => self.push(Val::Other("persistent-id"), at)?,
            "BINPERSID" => {
                self.pop(at, op)?;
                self.push(Val::Other("persistent-id"), at)?;
            }
            "STOP" => {
                self.pop(at, op)?;
                if let Some(saved) = self.nested.take() {
                    // End of a joblib object array: back to the outer pickle, where the array
                    // replaces its wrapper on the stack.
                    self.stack = saved.stack;
                    self.marks = saved.marks;
                    self.memo = saved.memo;
                    self.replace_top(Val::Other("joblib-array"));
                    return Ok(Flow::Continue);
                }
                return Ok(Flow::Stop);
            }
            _ => {
                return Err(err(
                    at,
                    "unknown-opcode",
                    format!("opcode {op} at offset {at} is not modelled"),
                ));
            }
        }
        Ok(Flow::Continue)
    }

    fn obj(&mut self, class: Option<usize>, args: Option<Val>) -> Val {
        let node = self.new_node(Node::Obj { args, state: None });
        Val::Obj { class, node }
    }

    fn replace_top(&mut self, v: Val) {
        if let Some(top) = self.stack.last_mut() {
            *top = v;
        }
    }

    /// `do_append` / `do_setitems` / `load_additems`: the container sits just below `x`, which
    /// must be above the fence. A non-container target gets its `extend`/`append`,
    /// `__setitem__` or `add` method called, which is a call on an imported object.
    fn extend_container(
        &mut self,
        x: usize,
        at: u64,
        op: &'static str,
        out: &mut Analysis,
    ) -> Result<(), Malformed> {
        let len = self.stack.len();
        if x > len || x <= self.fence() {
            return Err(self.underflow(at, op));
        }
        if x == len {
            return Ok(());
        }
        let is_pairs = matches!(op, "SETITEM" | "SETITEMS");
        if is_pairs && !(len - x).is_multiple_of(2) {
            return Err(err(
                at,
                "odd-items",
                format!(
                    "{op} at offset {at} has an odd number ({}) of items",
                    len - x
                ),
            ));
        }
        let items = self.stack.split_off(x);
        let Some(target) = self.stack.last().cloned() else {
            return Err(self.underflow(at, op));
        };
        let cap = self.limits.max_container_items;
        match &target {
            Val::Node(id) => match self.nodes.get_mut(*id) {
                Some(Node::Dict(d)) if is_pairs => {
                    let room = cap.saturating_sub(d.len());
                    d.extend(pairs(items, room));
                }
                Some(Node::Seq(s)) if !is_pairs => {
                    let room = cap.saturating_sub(s.len());
                    s.extend(items.into_iter().take(room));
                }
                _ => {}
            },
            other => {
                let why = "a container method of the object is called";
                self.mark_called(out, other, op, why);
            }
        }
        Ok(())
    }

    /// joblib's `NumpyUnpickler.load_build`: after BUILD on a `NumpyArrayWrapper`, the array's
    /// raw bytes (or, for object arrays, a whole nested pickle) follow in the stream.
    fn after_build<R: BufRead>(
        &mut self,
        src: &mut Source<'_, R>,
        inst: &Val,
        state: &Val,
        at: u64,
        out: &mut Analysis,
    ) -> Result<(), Malformed> {
        if self.nested.is_some() {
            return Ok(());
        }
        let Val::Obj { class: Some(c), .. } = inst else {
            return Ok(());
        };
        if !self.import_is(out, *c, "joblib.numpy_pickle", "NumpyArrayWrapper") {
            return Ok(());
        }
        let layout = self.joblib_layout(state, out).map_err(|why| {
            err(
                at,
                "joblib-array-unsized",
                format!("NumpyArrayWrapper built at offset {at}: {why}"),
            )
        })?;
        match layout {
            JoblibLayout::Object => {
                let saved = Saved {
                    stack: std::mem::take(&mut self.stack),
                    marks: std::mem::take(&mut self.marks),
                    memo: std::mem::take(&mut self.memo),
                };
                self.nested = Some(Box::new(saved));
            }
            JoblibLayout::Raw { padded, len } => {
                let start = src.pos;
                let mut total = len;
                if padded {
                    let Some(pad) = src.next_byte()? else {
                        return Err(err(
                            src.pos,
                            "truncated",
                            format!("stream ends at offset {} before joblib padding", src.pos),
                        ));
                    };
                    let skipped = src.skip(u64::from(pad))?;
                    if skipped < u64::from(pad) {
                        return Err(err(
                            src.pos,
                            "truncated",
                            format!("stream ends at offset {} inside joblib padding", src.pos),
                        ));
                    }
                    total = total.saturating_add(1 + u64::from(pad));
                }
                let skipped = src.skip(len)?;
                if skipped < len {
                    return Err(err(
                        src.pos,
                        "truncated",
                        format!(
                            "stream ends at offset {} inside a {len}-byte joblib array",
                            src.pos
                        ),
                    ));
                }
                out.raw_regions.push(RawRegion {
                    offset: start,
                    len: total,
                    kind: "joblib-array",
                });
                self.replace_top(Val::Other("joblib-array"));
            }
        }
        Ok(())
    }

    fn import_is(&self, out: &Analysis, idx: usize, module: &str, name: &str) -> bool {
        out.imports.get(idx).is_some_and(|imp| {
            imp.module.as_deref().map(normalize_module).as_deref() == Some(module)
                && imp.name.as_deref() == Some(name)
        })
    }

    fn dict_get(&self, dict: &Val, key: &str) -> Option<Val> {
        let Val::Node(id) = dict else {
            return None;
        };
        let Some(Node::Dict(pairs)) = self.nodes.get(*id) else {
            return None;
        };
        pairs.iter().find_map(|(k, v)| match k {
            Val::Str(t) if t.value == key => Some(v.clone()),
            _ => None,
        })
    }

    fn seq_items(&self, v: &Val) -> Option<&[Val]> {
        match v {
            Val::Node(id) => match self.nodes.get(*id) {
                Some(Node::Seq(items)) => Some(items),
                _ => None,
            },
            _ => None,
        }
    }

    fn joblib_layout(&self, state: &Val, out: &Analysis) -> Result<JoblibLayout, String> {
        let dtype = self.dict_get(state, "dtype").ok_or("state has no dtype")?;
        let Val::Obj {
            class: Some(c),
            node: Some(n),
        } = dtype
        else {
            return Err("dtype is not a numpy.dtype object".into());
        };
        if !self.import_is(out, c, "numpy", "dtype") {
            return Err("dtype is not built by numpy.dtype".into());
        }
        let Some(Node::Obj {
            args,
            state: dstate,
        }) = self.nodes.get(n)
        else {
            return Err("dtype is not tracked".into());
        };
        let descr = args
            .as_ref()
            .and_then(|a| self.seq_items(a))
            .and_then(|items| items.first())
            .and_then(|v| match v {
                Val::Str(t) => Some(t.value.clone()),
                _ => None,
            })
            .ok_or("dtype has no type string")?;
        let dstate = dstate
            .as_ref()
            .and_then(|s| self.seq_items(s))
            .unwrap_or_default();
        let int_at = |i: usize| match dstate.get(i) {
            Some(Val::Int(v)) => Some(*v),
            _ => None,
        };
        let has_object = int_at(7).is_some_and(|flags| flags & 1 == 1) || descr.starts_with('O');
        if has_object {
            return Ok(JoblibLayout::Object);
        }
        let itemsize = match int_at(5) {
            Some(elsize) if elsize >= 0 => u64::try_from(elsize).map_err(|_| "bad elsize")?,
            _ => itemsize_of(&descr).ok_or_else(|| format!("unknown dtype {descr:?}"))?,
        };
        let shape = self.dict_get(state, "shape").ok_or("state has no shape")?;
        let dims = self.seq_items(&shape).ok_or("shape is not a tuple")?;
        let mut count: u64 = 1;
        for d in dims {
            let Val::Int(d) = d else {
                return Err("shape holds a non-integer".into());
            };
            let d = u64::try_from(*d).map_err(|_| "shape holds a negative dimension")?;
            count = count.checked_mul(d).ok_or("element count overflows")?;
        }
        let len = count.checked_mul(itemsize).ok_or("byte size overflows")?;
        let padded = matches!(
            self.dict_get(state, "numpy_array_alignment_bytes"),
            Some(v) if !matches!(v, Val::PyNone)
        );
        Ok(JoblibLayout::Raw { padded, len })
    }
}

enum JoblibLayout {
    Object,
    Raw { padded: bool, len: u64 },
}

fn class_of(v: &Val) -> Option<usize> {
    match v {
        Val::Global(i) => Some(*i),
        _ => None,
    }
}

fn pairs(items: Vec<Val>, cap: usize) -> Vec<(Val, Val)> {
    let mut out = Vec::new();
    let mut it = items.into_iter();
    while let (Some(k), Some(v)) = (it.next(), it.next()) {
        if out.len() >= cap {
            break;
        }
        out.push((k, v));
    }
    out
}

/// numpy type string (`<f4`, `i8`, `b1`, `c16`, `M8`, `S10`, `U5`, `V16`) -> bytes per item.
fn itemsize_of(descr: &str) -> Option<u64> {
    let d = descr.trim_start_matches(['<', '>', '|', '=']);
    let kind = d.chars().next()?;
    let digits: String = d.chars().skip(1).take_while(char::is_ascii_digit).collect();
    let n: u64 = digits.parse().ok()?;
    match kind {
        'U' => n.checked_mul(4),
        'b' | 'i' | 'u' | 'f' | 'c' | 'M' | 'm' | 'S' | 'V' | 'a' => Some(n),
        _ => None,
    }
}

/// `PyLong_FromString(s, 10)` for what picklers write: optional sign, digits, whitespace.
fn parse_decimal(s: &[u8]) -> Option<i64> {
    std::str::from_utf8(s)
        .ok()?
        .trim()
        .replace('_', "")
        .parse()
        .ok()
}

/// GET/PUT text argument -> memo key; `Ok(None)` for a negative index.
fn memo_key_text(arg: &Arg, at: u64, op: &str) -> Result<Option<u64>, Malformed> {
    let Arg::Data(p) = arg else {
        return Err(err(
            at,
            "bad-argument",
            format!("{op} at offset {at} has no index"),
        ));
    };
    match parse_decimal(&p.head) {
        Some(v) if v < 0 => Ok(None),
        Some(v) => Ok(u64::try_from(v).ok()),
        None => Err(err(
            at,
            "bad-argument",
            format!("{op} at offset {at} has a non-numeric index"),
        )),
    }
}

fn le_signed(bytes: &[u8]) -> i64 {
    let mut v: i64 = 0;
    for (i, &b) in bytes.iter().enumerate() {
        v |= i64::from(b) << (8 * i);
    }
    let bits = 8 * bytes.len();
    if bits > 0 && bits < 64 && bytes.last().is_some_and(|&b| b & 0x80 != 0) {
        v -= 1i64 << bits;
    }
    v
}

/// Python's `codecs.escape_decode` (used by the STRING opcode). Returns the bytes and whether
/// the decoding was exact (false for an escape cut off at the end).
fn unescape_bytes(s: &[u8]) -> (Vec<u8>, bool) {
    let mut out = Vec::with_capacity(s.len());
    let mut exact = true;
    let mut i = 0;
    while let Some(&b) = s.get(i) {
        i += 1;
        if b != b'\\' {
            out.push(b);
            continue;
        }
        let Some(&e) = s.get(i) else {
            exact = false;
            break;
        };
        i += 1;
        match e {
            b'\n' => {}
            b'\\' => out.push(b'\\'),
            b'\'' => out.push(b'\''),
            b'"' => out.push(b'"'),
            b'a' => out.push(7),
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'v' => out.push(11),
            b'0'..=b'7' => {
                let mut v = u32::from(e - b'0');
                for _ in 0..2 {
                    match s.get(i) {
                        Some(&d @ b'0'..=b'7') => {
                            v = v * 8 + u32::from(d - b'0');
                            i += 1;
                        }
                        _ => break,
                    }
                }
                out.push((v & 0xff) as u8);
            }
            b'x' => {
                let hex = s.get(i..i + 2).and_then(|h| std::str::from_utf8(h).ok());
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(v) => {
                        out.push(v);
                        i += 2;
                    }
                    None => {
                        exact = false;
                        break;
                    }
                }
            }
            other => {
                out.push(b'\\');
                out.push(other);
            }
        }
    }
    (out, exact)
}

/// Python's `raw_unicode_escape` decoding (the UNICODE opcode): `\uXXXX` and `\UXXXXXXXX` after
/// an odd run of backslashes are code points; every other byte is Latin-1.
fn raw_unicode_escape(s: &[u8]) -> (String, bool) {
    let mut out = String::with_capacity(s.len());
    let mut exact = true;
    let mut i = 0;
    let mut run = 0usize;
    while let Some(&b) = s.get(i) {
        if b == b'\\' {
            run += 1;
            out.push('\\');
            i += 1;
            continue;
        }
        let escape = run % 2 == 1 && (b == b'u' || b == b'U');
        run = 0;
        if escape {
            let n = if b == b'u' { 4 } else { 8 };
            let hex = s
                .get(i + 1..i + 1 + n)
                .and_then(|h| std::str::from_utf8(h).ok());
            let ch = hex
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .and_then(char::from_u32);
            match ch {
                Some(c) => {
                    out.pop();
                    out.push(c);
                    i += 1 + n;
                    continue;
                }
                None => {
                    exact = false;
                }
            }
        }
        out.push(char::from(b));
        i += 1;
    }
    (out, exact)
}

#[cfg(test)]
mod unit {
    use super::*;

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
}
