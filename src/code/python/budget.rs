//! The evaluation budget of one file: what the code judge may spend following names and
//! building strings, blobs and decoded payloads from attacker-written Python (issue 37).
//!
//! The judge reads values out of the source the way Python would compute them (`"o" + "s"`,
//! `"%s" % x`, `base64.b64decode(...)`, names assigned once), and attacker-written source can
//! make that computation infinite (`x = "%s" % x`), exponential (`b = a + a; c = b + b; ...`),
//! very deep (100,000 parentheses) or very large (`s.replace("a", s)` seven times). Every
//! evaluating function of the judge therefore enters this one budget, shared by the whole file
//! and by the payloads decoded from it and analysed again:
//!
//! - **depth**: one level per evaluation step that recurses, never reset when the evaluation
//!   re-enters itself (`string` -> `blob` -> `blob_call` -> `string`) or analyses a decoded
//!   payload; past [`Limits::max_depth`] the value is unknown;
//! - **cycles**: a node already being evaluated in the same mode is unknown when it is reached
//!   again, whatever the path back to it (`a = b.strip(); b = a.lower()`);
//! - **steps**: every entry costs one; past [`Limits::max_steps`] nothing more is evaluated in
//!   the file, and a wall-clock deadline is checked every few thousand steps as a second line
//!   of defence;
//! - **bytes**: every byte a string, blob or decoded payload holds is charged before it is
//!   allocated, and one value never exceeds [`MAX_VALUE_BYTES`].
//!
//! A value given up on is unknown, which the judges already treat as "computed at run time":
//! the call it is passed to is still reported, and [`Budget::spent_since`] says why.

use std::cell::{Cell, RefCell};
use std::time::{Duration, Instant};

use crate::model::limits::{self as table, usize_of};

/// Most bytes one string or blob built by the evaluator may hold (a literal expression in
/// model code is a command, a path or a payload of kilobytes).
pub const MAX_VALUE_BYTES: usize = 1 << 20;

/// How often (in steps) the wall clock is read.
const CLOCK_EVERY: u64 = 4096;

/// Caps on evaluating one file; built from the limits table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Evaluation steps for the whole file (`code_eval_steps`).
    pub max_steps: u64,
    /// Bytes of strings, blobs and decoded payloads built for the whole file
    /// (`code_eval_bytes`).
    pub max_bytes: usize,
    /// Evaluation depth (`code_eval_depth`).
    pub max_depth: usize,
    /// Wall-clock cap on the evaluation of one file, in milliseconds (the code scan's
    /// `max_parse_millis`).
    pub max_millis: u64,
}

impl From<&table::Limits> for Limits {
    fn from(l: &table::Limits) -> Self {
        Limits {
            max_steps: l.code_eval_steps,
            max_bytes: usize_of(l.code_eval_bytes),
            max_depth: usize_of(l.code_eval_depth),
            max_millis: 10_000,
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self::from(&table::Limits::default())
    }
}

/// What made the evaluator give a value up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spent {
    /// The file's steps are spent.
    Steps,
    /// The file's bytes are spent, or one value would exceed [`MAX_VALUE_BYTES`].
    Bytes,
    /// The expression nests deeper than the depth limit.
    Depth,
    /// The wall-clock deadline passed.
    Time,
}

impl Spent {
    /// The limit of the limits table that stopped the evaluation (`None` for the deadline,
    /// which is not a policy limit).
    pub fn limit(self) -> Option<&'static str> {
        match self {
            Spent::Steps => Some("code_eval_steps"),
            Spent::Bytes => Some("code_eval_bytes"),
            Spent::Depth => Some("code_eval_depth"),
            Spent::Time => None,
        }
    }

    /// Lowercase phrase for a site's detail.
    pub fn phrase(self) -> &'static str {
        match self {
            Spent::Steps => "the file's evaluation steps (code_eval_steps) ran out",
            Spent::Bytes => "it would exceed the evaluation byte budget (code_eval_bytes)",
            Spent::Depth => "it nests deeper than the evaluation depth limit (code_eval_depth)",
            Spent::Time => "the evaluation time limit ran out",
        }
    }
}

/// What an evaluation step is doing with its node: a node may be followed in each mode once
/// on the current path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Resolving the names an expression stands for.
    Resolve,
    /// Computing the bytes of an expression.
    Value,
    /// Computing the items of a sequence.
    Items,
    /// Analysing a decoded payload again.
    Payload,
}

/// The budget of one file; shared by reference, mutated through cells.
#[derive(Debug)]
pub struct Budget {
    limits: Limits,
    steps: Cell<u64>,
    bytes: Cell<usize>,
    depth: Cell<usize>,
    deadline: Instant,
    /// Nodes being evaluated, with their mode: the current evaluation path.
    active: RefCell<Vec<(usize, Mode)>>,
    /// Sticky: steps or time ran out, nothing more is evaluated.
    exhausted: Cell<Option<Spent>>,
    /// Counts of limits reached, of depth cuts among them and of cycles cut, and the last
    /// limit reached.
    limits_hit: Cell<u64>,
    depth_cuts: Cell<u64>,
    cycles: Cell<u64>,
    last: Cell<Option<Spent>>,
    /// The first limit that stopped a value, for SCAN004.
    first_limit: Cell<Option<Spent>>,
}

impl Budget {
    /// A fresh budget; the deadline starts now.
    pub fn new(limits: Limits) -> Budget {
        let now = Instant::now();
        Budget {
            limits,
            steps: Cell::new(0),
            bytes: Cell::new(0),
            depth: Cell::new(0),
            deadline: now
                .checked_add(Duration::from_millis(limits.max_millis))
                .unwrap_or(now),
            active: RefCell::new(Vec::new()),
            exhausted: Cell::new(None),
            limits_hit: Cell::new(0),
            depth_cuts: Cell::new(0),
            cycles: Cell::new(0),
            last: Cell::new(None),
            first_limit: Cell::new(None),
        }
    }

    /// Records that a value was given up for `why` (a size found too large by the caller).
    pub fn refuse(&self, why: Spent) {
        self.limits_hit.set(self.limits_hit.get().saturating_add(1));
        if why == Spent::Depth {
            self.depth_cuts.set(self.depth_cuts.get().saturating_add(1));
        }
        self.last.set(Some(why));
        if self.first_limit.get().is_none() {
            self.first_limit.set(Some(why));
        }
    }

    /// One step: false (and the budget exhausted for good) once the steps or the time are
    /// spent.
    pub fn step(&self) -> bool {
        if let Some(why) = self.exhausted.get() {
            self.refuse(why);
            return false;
        }
        let n = self.steps.get().saturating_add(1);
        self.steps.set(n);
        let why = if n > self.limits.max_steps {
            Some(Spent::Steps)
        } else if n.is_multiple_of(CLOCK_EVERY) && Instant::now() > self.deadline {
            Some(Spent::Time)
        } else {
            None
        };
        if let Some(why) = why {
            self.exhausted.set(Some(why));
            self.refuse(why);
            return false;
        }
        true
    }

    /// Enters the evaluation of `node` in `mode`, or says why the value must be given up (a
    /// limit, or `node` is already being evaluated in `mode` on the current path). The guard
    /// leaves the node when dropped.
    pub fn enter(&self, node: usize, mode: Mode) -> Result<Guard<'_>, Refused> {
        if !self.step() {
            return Err(Refused::Limit);
        }
        if self.depth.get() >= self.limits.max_depth {
            self.refuse(Spent::Depth);
            return Err(Refused::Limit);
        }
        {
            let mut active = self.active.borrow_mut();
            if active.contains(&(node, mode)) {
                // A cycle is not a limit: the value is unknown in Python's terms too.
                self.cycles.set(self.cycles.get().saturating_add(1));
                return Err(Refused::Cycle);
            }
            active.push((node, mode));
        }
        self.depth.set(self.depth.get().saturating_add(1));
        Ok(Guard { budget: self })
    }

    /// The current evaluation depth.
    pub fn depth(&self) -> usize {
        self.depth.get()
    }

    /// Charges `n` bytes about to be allocated for one value: false (allocate nothing) when
    /// the value would exceed [`MAX_VALUE_BYTES`] or the file's bytes are spent.
    pub fn alloc(&self, n: usize) -> bool {
        if n > MAX_VALUE_BYTES {
            self.refuse(Spent::Bytes);
            return false;
        }
        self.charge(n)
    }

    /// [`Budget::alloc`] of a size computed with checked arithmetic (`None`: it overflowed).
    pub fn alloc_size(&self, n: Option<usize>) -> bool {
        match n {
            Some(n) => self.alloc(n),
            None => {
                self.refuse(Spent::Bytes);
                false
            }
        }
    }

    /// Charges `n` bytes (a decoded step or a payload, which may exceed one value's cap up to
    /// the blob limits): false when the file's bytes are spent.
    pub fn charge(&self, n: usize) -> bool {
        match self.bytes.get().checked_add(n) {
            Some(total) if total <= self.limits.max_bytes => {
                self.bytes.set(total);
                true
            }
            _ => {
                self.refuse(Spent::Bytes);
                false
            }
        }
    }

    /// Bytes the file may still spend.
    pub fn bytes_left(&self) -> usize {
        self.limits.max_bytes.saturating_sub(self.bytes.get())
    }

    /// A mark for [`Budget::spent_since`] and [`Budget::memo_since`].
    pub fn mark(&self) -> Mark {
        Mark {
            limits_hit: self.limits_hit.get(),
            depth_cuts: self.depth_cuts.get(),
            cycles: self.cycles.get(),
        }
    }

    /// The limit that made the evaluator give a value up since `mark`, if one did.
    pub fn spent_since(&self, mark: Mark) -> Option<Spent> {
        if self.limits_hit.get() == mark.limits_hit {
            return None;
        }
        self.last.get()
    }

    /// How a value computed since `mark` may be remembered for its node; `None` when it may
    /// not. A strict value (bytes: any unknown part makes the whole unknown) cut by a cycle is
    /// unknown wherever it is reached from, since its node is on that cycle; a union of
    /// names is not. Steps, time and bytes only ever run out further, and one value's size
    /// cap is the same everywhere; only a depth cut depends on where the node was reached
    /// from, and holds wherever it is reached at least as deep.
    pub fn memo_since(&self, mark: Mark, strict: bool) -> Option<Memo> {
        if !strict && self.cycles.get() != mark.cycles {
            return None;
        }
        Some(if self.depth_cuts.get() == mark.depth_cuts {
            Memo::Always
        } else {
            Memo::FromDepth(self.depth.get())
        })
    }

    /// The first limit that stopped a value in this file, if any.
    pub fn first_limit(&self) -> Option<Spent> {
        self.first_limit.get()
    }

    /// Steps spent so far.
    pub fn steps(&self) -> u64 {
        self.steps.get()
    }

    /// Bytes spent so far.
    pub fn bytes(&self) -> usize {
        self.bytes.get()
    }
}

/// Why [`Budget::enter`] refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// A limit (steps, time, depth).
    Limit,
    /// The node is already being evaluated on the current path.
    Cycle,
}

/// A point in the budget's history, for [`Budget::spent_since`] and [`Budget::memo_since`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark {
    limits_hit: u64,
    depth_cuts: u64,
    cycles: u64,
}

/// Where a remembered value holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Memo {
    /// Wherever its node is reached.
    Always,
    /// Where its node is reached at this depth or deeper (a depth limit cut it).
    FromDepth(usize),
}

impl Memo {
    /// Whether the value holds at `depth`.
    pub fn holds_at(self, depth: usize) -> bool {
        match self {
            Memo::Always => true,
            Memo::FromDepth(d) => depth >= d,
        }
    }
}

/// An evaluation in progress; leaves its node when dropped.
#[derive(Debug)]
pub struct Guard<'b> {
    budget: &'b Budget,
}

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        self.budget.active.borrow_mut().pop();
        self.budget
            .depth
            .set(self.budget.depth.get().saturating_sub(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small(max_steps: u64, max_bytes: usize, max_depth: usize) -> Budget {
        Budget::new(Limits {
            max_steps,
            max_bytes,
            max_depth,
            max_millis: 60_000,
        })
    }

    #[test]
    fn a_node_on_the_path_is_a_cycle_in_its_mode_only() {
        let b = small(100, 100, 10);
        let mark = b.mark();
        let g = b.enter(1, Mode::Value).expect("enter");
        assert_eq!(b.enter(1, Mode::Value).err(), Some(Refused::Cycle));
        let r = b.enter(1, Mode::Resolve);
        assert!(r.is_ok());
        drop(r);
        drop(g);
        assert!(b.enter(1, Mode::Value).is_ok());
        // A cycle is not a limit; a value it cut is remembered only when strict.
        assert_eq!(b.spent_since(mark), None);
        assert_eq!(b.first_limit(), None);
        assert_eq!(b.memo_since(mark, true), Some(Memo::Always));
        assert_eq!(b.memo_since(mark, false), None);
    }

    #[test]
    fn depth_is_shared_and_given_back() {
        let b = small(100, 100, 3);
        let g1 = b.enter(1, Mode::Value);
        let g2 = b.enter(2, Mode::Resolve);
        let g3 = b.enter(3, Mode::Items);
        assert!(g1.is_ok() && g2.is_ok() && g3.is_ok());
        let mark = b.mark();
        assert_eq!(b.enter(4, Mode::Value).err(), Some(Refused::Limit));
        assert_eq!(b.spent_since(mark), Some(Spent::Depth));
        // Cut by depth three deep: holds three or more deep, not shallower.
        let memo = b.memo_since(mark, true).expect("memo");
        assert!(memo.holds_at(3) && !memo.holds_at(2));
        drop(g3);
        assert!(b.enter(4, Mode::Value).is_ok());
    }

    #[test]
    fn steps_run_out_for_good() {
        let b = small(3, 100, 10);
        assert!(b.step() && b.step() && b.step());
        assert!(!b.step());
        assert_eq!(b.enter(9, Mode::Value).err(), Some(Refused::Limit));
        assert_eq!(b.first_limit(), Some(Spent::Steps));
        assert_eq!(Spent::Steps.limit(), Some("code_eval_steps"));
    }

    #[test]
    fn bytes_are_charged_before_allocation() {
        let b = small(100, 10, 10);
        assert!(b.alloc(6));
        assert!(!b.alloc(6));
        assert!(b.alloc(4));
        assert_eq!(b.bytes_left(), 0);
        let big = small(100, usize::MAX, 10);
        assert!(!big.alloc(MAX_VALUE_BYTES + 1));
        assert!(big.charge(usize::MAX) && !big.charge(1));
        assert!(!big.alloc_size(None));
        assert_eq!(big.first_limit(), Some(Spent::Bytes));
    }

    #[test]
    fn the_deadline_stops_evaluation() {
        let b = Budget::new(Limits {
            max_steps: u64::MAX,
            max_bytes: 10,
            max_depth: 10,
            max_millis: 0,
        });
        std::thread::sleep(Duration::from_millis(2));
        let mut n = 0u64;
        while b.step() {
            n += 1;
            assert!(
                n <= CLOCK_EVERY,
                "the clock is read every {CLOCK_EVERY} steps"
            );
        }
        assert_eq!(b.first_limit(), Some(Spent::Time));
        assert_eq!(Spent::Time.limit(), None);
    }
}
