//! The memo: PUT, BINPUT, LONG_BINPUT, MEMOIZE store the top value under a key; GET, BINGET,
//! LONG_BINGET push it again (`load_put`, `load_memoize`, `load_get` in `_pickle.c`). Strings
//! routed through the memo are still the same strings, so a module name stored early and
//! fetched for a STACK_GLOBAL later is still seen.

use super::constants::parse_decimal;
use super::state::{Machine, Val, err};
use crate::inspect::pickle::analysis::Malformed;
use crate::inspect::pickle::ops::{Arg, Op};

impl Machine<'_> {
    /// GET: a decimal key line; a negative one is never set.
    pub(super) fn get(&mut self, op: Op, arg: &Arg, at: u64) -> Result<(), Malformed> {
        match memo_key_text(arg, at, op)? {
            Some(k) => self.memo_get(k, at, op),
            None => Err(err(
                at,
                "memo-missing",
                format!("GET at offset {at} reads a negative memo slot"),
            )),
        }
    }

    /// BINGET, LONG_BINGET: a binary key.
    pub(super) fn binget(&mut self, op: Op, arg: &Arg, at: u64) -> Result<(), Malformed> {
        self.memo_get(binary_key(arg), at, op)
    }

    /// PUT: a decimal key line; `load_put` rejects a negative one.
    pub(super) fn put(&mut self, op: Op, arg: &Arg, at: u64) -> Result<(), Malformed> {
        let key = memo_key_text(arg, at, op)?.ok_or_else(|| {
            err(
                at,
                "bad-argument",
                format!("PUT at offset {at} has a negative index"),
            )
        })?;
        self.store_top(key, op, at)
    }

    /// BINPUT, LONG_BINPUT: a binary key.
    pub(super) fn binput(&mut self, op: Op, arg: &Arg, at: u64) -> Result<(), Malformed> {
        self.store_top(binary_key(arg), op, at)
    }

    /// MEMOIZE: the key is the number of memo entries, as `load_memoize` computes it.
    pub(super) fn memoize(&mut self, op: Op, at: u64) -> Result<(), Malformed> {
        self.store_top(self.memo.len() as u64, op, at)
    }

    fn store_top(&mut self, key: u64, op: Op, at: u64) -> Result<(), Malformed> {
        let v = self.top(at, op)?;
        self.memo_put(key, v, at)
    }

    fn memo_put(&mut self, key: u64, v: Val, at: u64) -> Result<(), Malformed> {
        if !self.memo.contains_key(&key) && self.memo.len() >= self.limits.max_memo {
            return Err(err(
                at,
                "limit-memo",
                format!(
                    "memo at offset {at} exceeds {} entries (the `pickle_memo` limit; raise it in the policy's [limits] table)",
                    self.limits.max_memo
                ),
            ));
        }
        self.memo.insert(key, v);
        Ok(())
    }

    fn memo_get(&mut self, key: u64, at: u64, op: Op) -> Result<(), Malformed> {
        let Some(v) = self.memo.get(&key).cloned() else {
            return Err(err(
                at,
                "memo-missing",
                format!("{op} at offset {at} reads memo slot {key}, which was never set"),
            ));
        };
        self.push(v, at)
    }
}

/// BINGET/BINPUT argument -> memo key (`u64::MAX`, never set, when there is none).
fn binary_key(arg: &Arg) -> u64 {
    match arg {
        Arg::Int(i) => u64::try_from(*i).unwrap_or(u64::MAX),
        _ => u64::MAX,
    }
}

/// GET/PUT text argument -> memo key; `Ok(None)` for a negative index.
fn memo_key_text(arg: &Arg, at: u64, op: Op) -> Result<Option<u64>, Malformed> {
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
