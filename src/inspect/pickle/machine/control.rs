//! Control: the stack and mark-stack opcodes (MARK, POP, POP_MARK, DUP), the stream framing
//! ones (PROTO, FRAME, STOP) and persistent ids (PERSID, BINPERSID), as `load_mark`, `load_pop`,
//! `load_pop_mark`, `load_dup`, `load_proto` and `load_persid` do them in `_pickle.c`. Their
//! fence and MARK rules are what stream-desync tricks probe, so they follow the C code exactly.

use super::state::{Flow, Machine, Val, err};
use crate::inspect::pickle::analysis::{Analysis, Malformed};
use crate::inspect::pickle::ops::{Arg, Op};

impl Machine<'_> {
    /// MARK: remember the stack height (bounded: a stream of MARKs is cheap to write).
    pub(super) fn mark(&mut self, at: u64) -> Result<(), Malformed> {
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
        Ok(())
    }

    /// POP: `load_pop` discards a MARK instead when the top of the stack is the mark position.
    pub(super) fn pop_value(&mut self, op: Op, at: u64) -> Result<(), Malformed> {
        let len = self.stack.len();
        if self.marks.last() == Some(&len) {
            self.marks.pop();
        } else {
            self.pop(at, op)?;
        }
        Ok(())
    }

    /// POP_MARK: drop everything above the innermost MARK, and the MARK.
    pub(super) fn pop_mark(&mut self, op: Op, at: u64) -> Result<(), Malformed> {
        let mark = self.marker(at, op)?;
        self.stack.truncate(mark);
        Ok(())
    }

    /// DUP: push the top value again.
    pub(super) fn dup(&mut self, op: Op, at: u64) -> Result<(), Malformed> {
        let v = self.top(at, op)?;
        self.push(v, at)
    }

    /// PROTO: protocols 0-5 only (CPython rejects a higher one); the highest seen is reported.
    pub(super) fn proto(&mut self, arg: &Arg, at: u64) -> Result<(), Malformed> {
        let v = match arg {
            Arg::Int(i) => *i,
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
            // Keep reading: a payload after a bogus PROTO must still be seen (issue 16).
            self.deferred.get_or_insert(err(
                at,
                "unsupported-protocol",
                format!("PROTO at offset {at} names protocol {v}; the highest is 5"),
            ));
            return Ok(());
        }
        self.proto = self.proto.max(v);
        Ok(())
    }

    /// PERSID: a persistent id line, resolved by the loader's `persistent_load`.
    pub(super) fn persid(&mut self, at: u64) -> Result<(), Malformed> {
        self.push(Val::Other("persistent-id"), at)
    }

    /// BINPERSID: the persistent id is the top value (a PyTorch storage tuple is recorded).
    pub(super) fn binpersid(
        &mut self,
        op: Op,
        at: u64,
        out: &mut Analysis,
    ) -> Result<(), Malformed> {
        let pid = self.pop(at, op)?;
        let v = self.persistent_storage(&pid, at, out);
        self.push(v, at)
    }

    /// STOP: the result is the top value. Inside a joblib object array it ends the nested
    /// pickle instead, and the outer one goes on.
    pub(super) fn stop(&mut self, op: Op, at: u64) -> Result<Flow, Malformed> {
        let result = self.pop(at, op)?;
        if let Some(saved) = self.nested.take() {
            // End of a joblib object array: back to the outer pickle, where the array
            // replaces its wrapper on the stack.
            self.stack = saved.stack;
            self.marks = saved.marks;
            self.memo = saved.memo;
            self.replace_top(Val::Other("joblib-array"));
            return Ok(Flow::Continue);
        }
        self.result = Some(result);
        Ok(Flow::Stop)
    }
}
