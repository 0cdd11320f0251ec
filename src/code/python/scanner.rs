//! The call scanner's state: the [`Scanner`] whose `impl` blocks live in `mod.rs`,
//! `bindings`, `hub` and `loaders`, and the state it holds: what earlier code bound
//! ([`Bindings`]), the selected statements it parses ([`Selection`]) and the round-trip
//! judge's state ([`RoundTrips`]). This is a leaf of `code/python`: besides the leaf modules
//! `parser` and `report`, whose [`Limits`] and [`CodeReport`] it holds, it imports nothing
//! from `mod.rs` or its siblings.

use std::cell::{Cell, OnceCell};
use std::collections::BTreeMap;

use tree_sitter::Node;

use super::parser::Limits;
use super::report::CodeReport;

pub(super) struct Scanner<'s, 'b> {
    /// The text parsed: the source, or its [`Selection`].
    pub(super) source: &'s str,
    /// Set when `source` is a selection: maps its line numbers back.
    pub(super) selection: Option<&'b Selection>,
    pub(super) limits: &'b Limits,
    pub(super) bindings: &'b mut Bindings,
    pub(super) nodes: usize,
    pub(super) report: CodeReport,
    /// The round-trip judge's state (see [`RoundTrips`]).
    pub(super) round_trips: RoundTrips<'s>,
}

impl<'s, 'b> Scanner<'s, 'b> {
    /// A scanner over `source` (not a selection) with an empty report and the round-trip judge
    /// in its default state; the one place a scanner is built (callers override fields with
    /// struct update syntax).
    pub(super) fn new(source: &'s str, limits: &'b Limits, bindings: &'b mut Bindings) -> Self {
        Scanner {
            source,
            selection: None,
            limits,
            bindings,
            nodes: 0,
            report: CodeReport::default(),
            round_trips: RoundTrips::default(),
        }
    }
}

/// What earlier code bound: import aliases and module-level assignments. A notebook threads one
/// value through its cells so that `import torch as t` in cell 1 resolves `t.load` in cell 5.
#[derive(Debug, Clone, Default)]
pub(in crate::code) struct Bindings {
    /// Local name -> fully qualified names it may stand for.
    pub(super) aliases: BTreeMap<String, Vec<String>>,
    /// Modules imported with `from m import *`.
    pub(super) wildcards: Vec<String>,
    /// Name -> (assignments seen anywhere, literal value of a module-level assignment).
    pub(super) assigned: BTreeMap<String, (u32, Option<Const>)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Const {
    Str(String),
    Bool(bool),
}

/// What the whole file does to the names a round trip relies on.
#[derive(Debug, Default)]
pub(super) struct FileFacts<'s> {
    /// Identifiers bound anywhere other than by an import (`pickle = Fake()`, `def dumps`).
    pub(super) rebound: std::collections::BTreeSet<&'s str>,
    /// Some code replaces a `dumps` attribute (`pickle.dumps = f`, `del pickle.dumps`) or
    /// spells `"dumps"` as a string (`setattr(pickle, "dumps", f)`, `mock.patch.object`).
    pub(super) dumps_patched: bool,
}

/// The round-trip judge's state for one scan: the tree's root, a shared node budget, and the
/// file-wide facts, computed at most once.
#[derive(Default)]
pub(super) struct RoundTrips<'s> {
    /// Model code (a file a loader imports, judged by SRC006 too) keeps every round trip: what
    /// `pickle.loads(pickle.dumps(obj))` runs is whatever `obj`'s `__reduce__` returns. The
    /// behaviour judge sees a `__reduce__` of the same file that returns a table entry
    /// (`(os.system, ('id',))`), not one imported from elsewhere, built, or registered with
    /// `copyreg`, so the round trip itself stays reported where a loader runs it.
    pub(super) disabled: bool,
    /// The root of the parsed tree, set before calls are analysed.
    pub root: Cell<Option<Node<'s>>>,
    /// A selection asked about a round trip: only the whole file can answer, so the scan
    /// is redone on it.
    pub whole_needed: Cell<bool>,
    /// Nodes visited by the judge so far (bounded by `max_round_trip_nodes`).
    pub(super) spent: Cell<usize>,
    pub(super) file: OnceCell<Option<FileFacts<'s>>>,
}

/// The source handed to tree-sitter, and where its pieces come from.
#[derive(Debug, Default, PartialEq, Eq)]
pub(in crate::code) struct Selection {
    /// Selected logical lines verbatim, in order, inside `if 1:` stand-ins for their blocks.
    pub text: String,
    /// The copied pieces, in order.
    pub pieces: Vec<Piece>,
}

/// One logical line copied into [`Selection::text`], from the start of its first physical line.
/// Copied verbatim, its lines keep their bytes, so only line numbers need mapping back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::code) struct Piece {
    /// Where it starts in the text.
    pub text: usize,
    /// Its first line's 0-based row in the text.
    pub text_row: usize,
    /// The same line's 0-based row in the source.
    pub source_row: usize,
}
