//! Containers: building lists, tuples, dicts, sets and frozensets, and filling them with
//! APPEND(S), SETITEM(S) and ADDITEMS (`load_list`, `load_tuple`, `do_append`, `do_setitems`,
//! `load_additems` in `_pickle.c`). Contents are tracked up to a bounded number of items,
//! because joblib's array headers are dicts and tuples. A target that is not a container gets
//! a method called (`extend`, `__setitem__`, `add`), which counts as a call on its class.

use super::state::{Machine, Node, Val, err};
use crate::inspect::pickle::analysis::{Analysis, Malformed};
use crate::inspect::pickle::ops::Op;

impl Machine<'_> {
    /// EMPTY_LIST, EMPTY_TUPLE, EMPTY_SET.
    pub(super) fn empty_seq(&mut self, op: Op, at: u64) -> Result<(), Malformed> {
        let v = self.seq(Vec::new(), op);
        self.push(v, at)
    }

    /// EMPTY_DICT.
    pub(super) fn empty_dict(&mut self, op: Op, at: u64) -> Result<(), Malformed> {
        let v = match self.new_node(Node::Dict(Vec::new())) {
            Some(id) => Val::Node(id),
            None => Val::Other(op.name()),
        };
        self.push(v, at)
    }

    /// LIST, TUPLE, FROZENSET: the values above the innermost MARK.
    pub(super) fn seq_from_mark(&mut self, op: Op, at: u64) -> Result<(), Malformed> {
        let mark = self.marker(at, op)?;
        let items = self.pop_from(mark, at, op)?;
        let v = self.seq(items, op);
        self.push(v, at)
    }

    /// TUPLE1, TUPLE2, TUPLE3: the top `n` values.
    pub(super) fn tuple_n(&mut self, n: usize, op: Op, at: u64) -> Result<(), Malformed> {
        let Some(start) = self.stack.len().checked_sub(n) else {
            return Err(self.underflow(at, op));
        };
        let items = self.pop_from(start, at, op)?;
        let v = self.seq(items, op);
        self.push(v, at)
    }

    /// DICT: key/value pairs above the innermost MARK.
    pub(super) fn dict(&mut self, op: Op, at: u64) -> Result<(), Malformed> {
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
            None => Val::Other(op.name()),
        };
        self.push(v, at)
    }

    /// APPEND: one value into the container below it.
    pub(super) fn append(&mut self, op: Op, at: u64, out: &mut Analysis) -> Result<(), Malformed> {
        if self.stack.len().saturating_sub(1) <= self.fence() || self.stack.is_empty() {
            return Err(self.underflow(at, op));
        }
        self.extend_container(self.stack.len() - 1, op, at, out)
    }

    /// APPENDS, SETITEMS, ADDITEMS: the values above the innermost MARK.
    pub(super) fn extend_from_mark(
        &mut self,
        op: Op,
        at: u64,
        out: &mut Analysis,
    ) -> Result<(), Malformed> {
        let mark = self.marker(at, op)?;
        self.extend_container(mark, op, at, out)
    }

    /// SETITEM: one key/value pair into the dict below them.
    pub(super) fn setitem(&mut self, op: Op, at: u64, out: &mut Analysis) -> Result<(), Malformed> {
        let Some(x) = self.stack.len().checked_sub(2) else {
            return Err(self.underflow(at, op));
        };
        self.extend_container(x, op, at, out)
    }

    /// `do_append` / `do_setitems` / `load_additems`: the container sits just below `x`, which
    /// must be above the fence. A non-container target gets its `extend`/`append`,
    /// `__setitem__` or `add` method called, which is a call on an imported object.
    fn extend_container(
        &mut self,
        x: usize,
        op: Op,
        at: u64,
        out: &mut Analysis,
    ) -> Result<(), Malformed> {
        let len = self.stack.len();
        if x > len || x <= self.fence() {
            return Err(self.underflow(at, op));
        }
        if x == len {
            return Ok(());
        }
        let is_pairs = matches!(op, Op::SetItem | Op::SetItems);
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
                Some(Node::Seq(_)) if !is_pairs => {
                    self.extend_root_list(*id, &items);
                    if let Some(Node::Seq(s)) = self.nodes.get_mut(*id) {
                        let room = cap.saturating_sub(s.len());
                        s.extend(items.into_iter().take(room));
                    }
                }
                _ => {}
            },
            other => {
                self.check_target(other, op, at, out);
                let why = "a container method of the object is called";
                self.mark_called(out, other, op, why);
            }
        }
        Ok(())
    }
}

/// Consecutive values as key/value pairs, at most `cap` of them.
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
