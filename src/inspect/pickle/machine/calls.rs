//! Globals and calls: the opcodes that import (GLOBAL, INST, STACK_GLOBAL, EXT1/2/4) and the
//! ones that call what was imported (REDUCE, INST, OBJ, NEWOBJ, NEWOBJ_EX, BUILD); `load_global`,
//! `load_stack_global`, `load_extension`, `load_reduce`, `load_newobj`, `load_build` in
//! `_pickle.c`. These are the facts the scan is for: every import becomes an [`Import`], and a
//! call marks it `called` with the opcode that called it.

use std::io::BufRead;

use super::state::{Machine, Node, Val, err};
use crate::inspect::pickle::analysis::{Analysis, Import, Limits, Malformed};
use crate::inspect::pickle::ops::{Arg, Op, Payload, Source};

impl Machine<'_> {
    /// EXT1, EXT2, EXT4: an import through copyreg's extension registry; the name is unknown.
    pub(super) fn ext(
        &mut self,
        op: Op,
        arg: &Arg,
        at: u64,
        out: &mut Analysis,
    ) -> Result<(), Malformed> {
        let code = match arg {
            Arg::Int(i) => *i,
            _ => 0,
        };
        if code <= 0 {
            return Err(err(
                at,
                "bad-argument",
                format!("{op} at offset {at} has code {code} <= 0"),
            ));
        }
        let note = format!("extension code {code} is looked up in copyreg's registry at load time");
        let imp = self.new_import(None, None, op, at, Some(note));
        let idx = self.add_import(out, imp, at)?;
        self.push(Val::Global(idx), at)
    }

    /// GLOBAL: `find_class(module, name)` from two lines.
    pub(super) fn global(
        &mut self,
        op: Op,
        arg: &Arg,
        at: u64,
        out: &mut Analysis,
    ) -> Result<(), Malformed> {
        let idx = self.import_lines(op, arg, at, out)?;
        self.push(Val::Global(idx), at)
    }

    /// INST: `find_class`, then instantiate with the values above the MARK.
    pub(super) fn inst(
        &mut self,
        op: Op,
        arg: &Arg,
        at: u64,
        out: &mut Analysis,
    ) -> Result<(), Malformed> {
        let idx = self.import_lines(op, arg, at, out)?;
        let mark = self.marker(at, op)?;
        let args = self.pop_from(mark, at, op)?;
        self.mark_called(out, &Val::Global(idx), op, "");
        let args = self.seq(args, op);
        self.record_wrap(&Val::Global(idx), &args, op, out);
        let v = self.obj(Some(idx), Some(args));
        self.push(v, at)
    }

    /// The module and name lines of GLOBAL and INST -> a recorded import.
    fn import_lines(
        &mut self,
        op: Op,
        arg: &Arg,
        at: u64,
        out: &mut Analysis,
    ) -> Result<usize, Malformed> {
        let Arg::Pair(m, n) = arg else {
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
        self.add_import(out, imp, at)
    }

    /// STACK_GLOBAL: module and name are the two values on top of the stack.
    pub(super) fn stack_global(
        &mut self,
        op: Op,
        at: u64,
        out: &mut Analysis,
    ) -> Result<(), Malformed> {
        let name_v = self.pop(at, op)?;
        let module_v = self.pop(at, op)?;
        let mut notes = Vec::new();
        let module = self.operand_name(&module_v, "module", &mut notes);
        let name = self.operand_name(&name_v, "name", &mut notes);
        let note = (!notes.is_empty()).then(|| notes.join("; "));
        let imp = self.new_import(module, name, op, at, note);
        let idx = self.add_import(out, imp, at)?;
        self.push(Val::Global(idx), at)
    }

    /// REDUCE: `callable(*args)`.
    pub(super) fn reduce(&mut self, op: Op, at: u64, out: &mut Analysis) -> Result<(), Malformed> {
        let args = self.pop(at, op)?;
        let callable = self.pop(at, op)?;
        if let Val::Global(idx) = &callable
            && self.byte_loads.contains_key(idx)
        {
            let vetted = self.vet_embedded_save(&args, at, out);
            if let Some((_, n)) = self.byte_loads.get_mut(idx)
                && vetted
            {
                *n += 1;
            }
        }
        self.mark_called(out, &callable, op, "the object it returned is called");
        self.record_wrap(&callable, &args, op, out);
        self.record_view(&callable, &args, at, out);
        let v = self.obj(class_of(&callable), Some(args));
        self.push(v, at)
    }

    /// NEWOBJ: `cls.__new__(cls, *args)`.
    pub(super) fn newobj(&mut self, op: Op, at: u64, out: &mut Analysis) -> Result<(), Malformed> {
        let args = self.pop(at, op)?;
        self.instantiate(args, op, at, out)
    }

    /// NEWOBJ_EX: `cls.__new__(cls, *args, **kwargs)`.
    pub(super) fn newobj_ex(
        &mut self,
        op: Op,
        at: u64,
        out: &mut Analysis,
    ) -> Result<(), Malformed> {
        let _kwargs = self.pop(at, op)?;
        let args = self.pop(at, op)?;
        self.instantiate(args, op, at, out)
    }

    /// OBJ: the class is the first value above the MARK, its arguments the rest.
    pub(super) fn obj_from_mark(
        &mut self,
        op: Op,
        at: u64,
        out: &mut Analysis,
    ) -> Result<(), Malformed> {
        let mark = self.marker(at, op)?;
        if self.stack.len() <= mark {
            return Err(self.underflow(at, op));
        }
        let args = self.pop_from(mark + 1, at, op)?;
        let args = self.seq(args, op);
        self.instantiate(args, op, at, out)
    }

    /// Pop the class under `args`, mark it called and push the new object.
    fn instantiate(
        &mut self,
        args: Val,
        op: Op,
        at: u64,
        out: &mut Analysis,
    ) -> Result<(), Malformed> {
        let cls = self.pop(at, op)?;
        self.mark_called(out, &cls, op, "the object it returned is instantiated");
        self.record_wrap(&cls, &args, op, out);
        let v = self.obj(class_of(&cls), Some(args));
        self.push(v, at)
    }

    /// BUILD: `__setstate__(state)` or attribute updates on the object below the state.
    pub(super) fn build<R: BufRead>(
        &mut self,
        src: &mut Source<'_, R>,
        op: Op,
        at: u64,
        out: &mut Analysis,
    ) -> Result<(), Malformed> {
        let state = self.pop(at, op)?;
        let inst = self.top(at, op)?;
        self.check_target(&inst, op, at, out);
        self.mark_called(
            out,
            &inst,
            op,
            "build calls __setstate__ or sets attributes",
        );
        // `partial.__setstate__((func, args, kwds, dict))` replaces the wrapped callable.
        if let Val::Obj { class: Some(c), .. } = &inst
            && self.is_wrapper(out, *c)
        {
            self.record_wrap(&Val::Global(*c), &state, op, out);
        }
        if let Val::Obj { node: Some(n), .. } = &inst
            && let Some(Node::Obj { state: slot, .. }) = self.nodes.get_mut(*n)
        {
            *slot = Some(state.clone());
        }
        self.after_build(src, &inst, &state, at, out)
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
        let is_byte_load = imp.module.as_deref() == Some("torch.storage")
            && imp.name.as_deref() == Some("_load_from_bytes");
        out.imports.push(imp);
        let idx = out.imports.len() - 1;
        if is_byte_load {
            self.byte_loads.insert(idx, (0, 0));
        }
        Ok(idx)
    }

    fn new_import(
        &self,
        module: Option<String>,
        name: Option<String>,
        op: Op,
        at: u64,
        note: Option<String>,
    ) -> Import {
        Import {
            module,
            name,
            opcode: op.name(),
            offset: at,
            pickle: self.pickle,
            called: false,
            call_opcode: None,
            note,
            wraps: None,
        }
    }

    /// Record that `v` (or the global it was built from) is called or has a method invoked.
    pub(super) fn mark_called(&self, out: &mut Analysis, v: &Val, op: Op, why: &str) {
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
        imp.call_opcode = Some(op.name());
        if let (Some(note), None) = (note, &imp.note) {
            imp.note = Some(format!("{note} ({op})"));
        }
    }

    /// Issue 32: `torch.storage._load_from_bytes(b)` is `torch.load(io.BytesIO(b),
    /// weights_only=False)`, and `TypedStorage.__reduce__` writes it for every tensor pickled
    /// without `torch.save`: `b` is a legacy `torch.save` of the storage. True when `args` is one
    /// `bytes` value that `torch.load` would read as a legacy file and whose five pickles were
    /// read here in full from its kept head; their globals are then added to `out.imports`
    /// (once each, at this call's offset) to be judged with the file's own. Anything else
    /// (other arguments, a zip or tar `torch.load` would read instead, pickles past the kept
    /// head, the depth limit) is false, and the call keeps its table verdict.
    fn vet_embedded_save(&mut self, args: &Val, at: u64, out: &mut Analysis) -> bool {
        let Val::Node(id) = args else { return false };
        let Some(Node::Seq(items)) = self.nodes.get(*id) else {
            return false;
        };
        let [Val::Bytes(blob)] = items.as_slice() else {
            return false;
        };
        let blob = std::rc::Rc::clone(blob);
        if let Some(known) = blob.vetted.get() {
            return known;
        }
        let nested = self.read_embedded_save(&blob);
        let ok = nested.is_some();
        blob.vetted.set(Some(ok));
        let Some(nested) = nested else { return false };
        for imp in nested.imports {
            let key = (imp.module.clone(), imp.name.clone(), imp.called);
            if self.embedded_seen.contains(&key) {
                continue;
            }
            if out.imports.len() >= self.limits.max_imports {
                // Not every global of the bytes is on record: not vouched for.
                blob.vetted.set(Some(false));
                return false;
            }
            self.embedded_seen.insert(key);
            let note = format!(
                "in the legacy torch.save bytes that torch.storage._load_from_bytes loads at offset {at}{}",
                imp.note.map(|n| format!("; {n}")).unwrap_or_default()
            );
            out.imports.push(Import {
                offset: at,
                pickle: self.pickle,
                note: Some(note),
                wraps: None,
                ..imp
            });
        }
        true
    }

    /// The analysis of a blob's head as a legacy `torch.save`, when `torch.load` would read it
    /// as one and its five pickles end inside the head without error.
    fn read_embedded_save(&self, blob: &super::state::Blob) -> Option<Analysis> {
        let depth = self.limits.embedded_depth.checked_sub(1)?;
        // torch.load tries a zip first (its local header magic), then `_legacy_load` a tar
        // (`tarfile.open(mode="r:")`); only what neither takes is read as pickles. torch.save
        // writes protocol 2, so a legacy file begins with PROTO.
        if blob.head.first() != Some(&0x80)
            || crate::inspect::tar::python_tarfile_could_read(&blob.head, blob.len)
        {
            return None;
        }
        let limits = Limits {
            embedded_depth: depth,
            ..self.limits.clone()
        };
        (self.read_embedded)(&blob.head, &limits)
    }

    fn is_wrapper(&self, out: &Analysis, idx: usize) -> bool {
        out.imports
            .get(idx)
            .is_some_and(|imp| match (&imp.module, &imp.name) {
                (Some(m), Some(n)) => crate::knowledge::is_call_wrapper(m, n),
                _ => false,
            })
    }

    /// Issue 15, cause 4: a call wrapper (`functools.partial`) built with `args` records what it
    /// wraps, the first argument. A named global (or another wrapper) is a target, and calling
    /// the wrapper calls it, so the target counts as called; anything else makes it opaque.
    fn record_wrap(&self, callable: &Val, args: &Val, op: Op, out: &mut Analysis) {
        let Val::Global(w) = callable else {
            return;
        };
        if !self.is_wrapper(out, *w) {
            return;
        }
        let first = self.seq_items(args).and_then(|items| items.first());
        let target = match first {
            Some(Val::Global(t)) => Some(*t),
            Some(Val::Obj { class: Some(t), .. }) if self.is_wrapper(out, *t) => Some(*t),
            _ => None,
        };
        if let Some(t) = target
            && t != *w
            && let Some(imp) = out.imports.get_mut(t)
            && !imp.called
        {
            imp.called = true;
            imp.call_opcode = Some(op.name());
            if imp.note.is_none() {
                imp.note = Some(format!("wrapped in a call wrapper ({op}), which calls it"));
            }
        }
        let Some(imp) = out.imports.get_mut(*w) else {
            return;
        };
        let wraps = imp.wraps.get_or_insert_with(Default::default);
        match target {
            Some(t) if !wraps.targets.contains(&t) => wraps.targets.push(t),
            Some(_) => {}
            None => wraps.opaque = true,
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
}

/// The import a called value stands for, when it is an imported global itself.
fn class_of(v: &Val) -> Option<usize> {
    match v {
        Val::Global(i) => Some(*i),
        _ => None,
    }
}
