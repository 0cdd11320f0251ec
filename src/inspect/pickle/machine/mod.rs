//! The symbolic unpickler: CPython's `_pickle.c` load loop with values replaced by what a
//! scanner needs to know about them (strings, small integers, imported globals, objects built
//! from a global, containers). The stack, the mark stack with its fence, and the memo follow the
//! C implementation rule for rule (POP pops a MARK when the top of the stack is the mark
//! position, APPEND/SETITEMS targets must sit above the fence, MEMOIZE keys on the number of
//! memo entries, ...), because a reader that disagrees with CPython about the stack can be fed
//! a stream where it sees harmless strings where CPython sees `os` and `system`.
//!
//! [`Machine::step`] dispatches on [`Op`] with an exhaustive `match` (a new opcode in the table
//! does not compile until it is handled); the handlers sit in one file per kind, as `_pickle.c`
//! has one `load_*` function per opcode: [`constants`], [`containers`], [`memo`], [`calls`]
//! (globals, calls and BUILD, with joblib's raw arrays in [`joblib`]) and [`control`].

mod calls;
mod constants;
mod containers;
mod control;
mod joblib;
mod memo;
mod state;
#[cfg(test)]
mod tests;
mod torch;

use std::collections::HashMap;
use std::io::BufRead;
use std::rc::Rc;

use super::analysis::{Analysis, Limits, Malformed, PickleInfo, StringList, malformed};
use super::ops::{self, Arg, Op, Source};
use state::{Blob, Flow, MAX_BLOB_BYTES, Machine, Node, ReadEmbedded, RootList, Text, Val, err};

/// Read one pickle (up to and including its STOP) and record its imports in `out`.
pub(super) fn run_pickle<R: BufRead>(
    src: &mut Source<'_, R>,
    limits: &Limits,
    pickle: usize,
    budget: &mut u64,
    out: &mut Analysis,
    read_embedded: ReadEmbedded,
) -> Result<(), Malformed> {
    let mut m = Machine {
        limits,
        read_embedded,
        pickle,
        stack: Vec::new(),
        marks: Vec::new(),
        memo: HashMap::new(),
        nodes: Vec::new(),
        tracked_bytes: 0,
        proto: 0,
        nested: None,
        deferred: None,
        root_list: None,
        result: None,
        byte_loads: HashMap::new(),
        blob_bytes: 0,
        embedded_seen: std::collections::HashSet::new(),
    };
    let start = src.pos;
    let mut count: u64 = 0;
    let result = loop {
        let at = src.pos;
        let byte = match src.next_byte() {
            Ok(Some(b)) => b,
            Ok(None) => {
                break Err(malformed(
                    at,
                    "truncated",
                    format!("stream ends at offset {at} before STOP"),
                ));
            }
            Err(e) => break Err(e),
        };
        if *budget == 0 {
            break Err(malformed(
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
        let Some(op) = ops::lookup(byte) else {
            break Err(malformed(
                at,
                "unknown-opcode",
                format!("byte 0x{byte:02x} at offset {at} is not a pickle opcode"),
            ));
        };
        out.first_use.entry(op.name()).or_insert(at);
        let arg = match ops::read_arg(src, op, limits) {
            Ok(arg) => arg,
            Err(e) => break Err(e),
        };
        match m.step(src, op, arg, at, out) {
            Ok(Flow::Continue) => {}
            Ok(Flow::Stop) => break Ok(()),
            Err(e) => break Err(e),
        }
    };
    for (idx, (pushed, vetted)) in &m.byte_loads {
        if *pushed > 0 && pushed == vetted {
            out.vouched_byte_loads.insert(*idx);
        }
    }
    // The first problem is the one reported; the imports after it were still recorded.
    let result = match m.deferred.take() {
        Some(first) => Err(first),
        None => result,
    };
    if result.is_ok()
        && let (Some(Val::Node(id)), Some(root)) = (&m.result, m.root_list.take())
        && *id == root.id
        && let Some(items) = root.strings
    {
        out.string_list = Some(StringList { pickle, items });
    }
    out.pickles.push(PickleInfo {
        offset: start,
        protocol: m.proto,
        opcodes: count,
        end: src.pos,
        complete: result.is_ok(),
    });
    result
}

impl Machine<'_> {
    fn fence(&self) -> usize {
        self.marks.last().copied().unwrap_or(0)
    }

    fn underflow(&self, at: u64, op: Op) -> Malformed {
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
        if let Val::Global(idx) = &v
            && let Some((pushed, _)) = self.byte_loads.get_mut(idx)
        {
            *pushed += 1;
        }
        self.stack.push(v);
        Ok(())
    }

    fn pop(&mut self, at: u64, op: Op) -> Result<Val, Malformed> {
        if self.stack.len() <= self.fence() {
            return Err(self.underflow(at, op));
        }
        self.stack.pop().ok_or_else(|| self.underflow(at, op))
    }

    fn top(&self, at: u64, op: Op) -> Result<Val, Malformed> {
        if self.stack.len() <= self.fence() {
            return Err(self.underflow(at, op));
        }
        self.stack
            .last()
            .cloned()
            .ok_or_else(|| self.underflow(at, op))
    }

    /// `marker()` in `_pickle.c`: pop the innermost MARK and return its stack position.
    fn marker(&mut self, at: u64, op: Op) -> Result<usize, Malformed> {
        self.marks.pop().ok_or_else(|| {
            err(
                at,
                "mark-missing",
                format!("{op} at offset {at} finds no MARK"),
            )
        })
    }

    /// Pop the values from `start` (which must not be below the fence) to the top.
    fn pop_from(&mut self, start: usize, at: u64, op: Op) -> Result<Vec<Val>, Malformed> {
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

    fn seq(&mut self, mut items: Vec<Val>, op: Op) -> Val {
        let first_list = self.root_list.is_none() && matches!(op, Op::EmptyList | Op::List);
        let mut root = first_list.then(|| RootList {
            id: 0,
            strings: Some(Vec::new()),
            bytes: 0,
        });
        if let Some(root) = &mut root {
            root.extend(&items, self.limits.max_imports);
        }
        items.truncate(self.limits.max_container_items);
        match self.new_node(Node::Seq(items)) {
            Some(id) => {
                if let Some(mut root) = root {
                    root.id = id;
                    self.root_list = Some(root);
                }
                Val::Node(id)
            }
            None => Val::Other(op.name()),
        }
    }

    /// APPEND(S) into the pickle's first list: keep its strings (see `root_list`).
    fn extend_root_list(&mut self, id: usize, items: &[Val]) {
        let cap = self.limits.max_imports;
        if let Some(root) = self.root_list.as_mut().filter(|r| r.id == id) {
            root.extend(items, cap);
        }
    }

    fn text(&mut self, value: String, complete: bool, is_str: bool, op: Op) -> Val {
        let opcode = op.name();
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

    /// A non-UTF-8 `bytes` value. Only one that could be a legacy `torch.save` (it begins with
    /// PROTO) is kept, within a budget of its own: raw array data pickled as bytes must not use
    /// up the string budget that import names resolve from.
    fn blob(&mut self, head: Vec<u8>, len: u64, op: Op) -> Val {
        let opcode = op.name();
        if head.first() != Some(&0x80) {
            return Val::Other(opcode);
        }
        match self.blob_bytes.checked_add(head.len()) {
            Some(total) if total <= MAX_BLOB_BYTES => {
                self.blob_bytes = total;
                Val::Bytes(Rc::new(Blob {
                    head,
                    len,
                    opcode,
                    vetted: std::cell::Cell::new(None),
                }))
            }
            _ => Val::Other(opcode),
        }
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

    /// One opcode. The match is exhaustive over [`Op`]: every opcode of the table has its
    /// handler, and the compiler says so, so no byte the lookup accepts can slip past the model.
    fn step<R: BufRead>(
        &mut self,
        src: &mut Source<'_, R>,
        op: Op,
        arg: Arg,
        at: u64,
        out: &mut Analysis,
    ) -> Result<Flow, Malformed> {
        match op {
            // Constants (constants.rs).
            Op::Int => self.int(&arg, at)?,
            Op::BinInt | Op::BinInt1 | Op::BinInt2 => self.binint(&arg, at)?,
            Op::Long => self.long(&arg, at)?,
            Op::Long1 | Op::Long4 => self.long_bytes(&arg, at)?,
            Op::String => self.string(op, &arg, at)?,
            Op::BinString | Op::ShortBinString => self.binstring(op, &arg, at)?,
            Op::BinBytes | Op::ShortBinBytes | Op::BinBytes8 => self.binbytes(op, &arg, at)?,
            Op::Unicode => self.unicode(op, &arg, at)?,
            Op::ShortBinUnicode | Op::BinUnicode | Op::BinUnicode8 => {
                self.binunicode(op, &arg, at)?;
            }
            Op::ByteArray8
            | Op::NextBuffer
            | Op::Float
            | Op::BinFloat
            | Op::NewTrue
            | Op::NewFalse => self.opaque(op, at)?,
            Op::None => self.push(Val::PyNone, at)?,
            Op::ReadonlyBuffer => self.readonly_buffer(op, at)?,
            // Containers (containers.rs).
            Op::EmptyList | Op::EmptyTuple | Op::EmptySet => self.empty_seq(op, at)?,
            Op::EmptyDict => self.empty_dict(op, at)?,
            Op::Append => self.append(op, at, out)?,
            Op::Appends | Op::SetItems | Op::AddItems => self.extend_from_mark(op, at, out)?,
            Op::SetItem => self.setitem(op, at, out)?,
            Op::List | Op::Tuple | Op::FrozenSet => self.seq_from_mark(op, at)?,
            Op::Tuple1 => self.tuple_n(1, op, at)?,
            Op::Tuple2 => self.tuple_n(2, op, at)?,
            Op::Tuple3 => self.tuple_n(3, op, at)?,
            Op::Dict => self.dict(op, at)?,
            // Memo (memo.rs).
            Op::Get => self.get(op, &arg, at)?,
            Op::BinGet | Op::LongBinGet => self.binget(op, &arg, at)?,
            Op::Put => self.put(op, &arg, at)?,
            Op::BinPut | Op::LongBinPut => self.binput(op, &arg, at)?,
            Op::Memoize => self.memoize(op, at)?,
            // Globals and calls (calls.rs).
            Op::Ext1 | Op::Ext2 | Op::Ext4 => self.ext(op, &arg, at, out)?,
            Op::Global => self.global(op, &arg, at, out)?,
            Op::Inst => self.inst(op, &arg, at, out)?,
            Op::StackGlobal => self.stack_global(op, at, out)?,
            Op::Reduce => self.reduce(op, at, out)?,
            Op::NewObj => self.newobj(op, at, out)?,
            Op::NewObjEx => self.newobj_ex(op, at, out)?,
            Op::Obj => self.obj_from_mark(op, at, out)?,
            Op::Build => self.build(src, op, at, out)?,
            // Control (control.rs).
            Op::Pop => self.pop_value(op, at)?,
            Op::PopMark => self.pop_mark(op, at)?,
            Op::Dup => self.dup(op, at)?,
            Op::Mark => self.mark(at)?,
            Op::Proto => self.proto(&arg, at)?,
            // A frame length only tells the loader how much to buffer; opcodes run on as usual.
            Op::Frame => {}
            Op::PersId => self.persid(at)?,
            Op::BinPersId => self.binpersid(op, at, out)?,
            Op::Stop => return self.stop(op, at),
        }
        Ok(Flow::Continue)
    }
}
