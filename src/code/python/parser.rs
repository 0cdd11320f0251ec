//! Parsing one Python source under caps: the caps themselves ([`Limits`]) and the one
//! reused tree-sitter parser per thread ([`parse`]). This is a leaf of `code/python`: besides
//! the leaf modules `budget` and `decode`, whose limits it embeds, it imports nothing from
//! `mod.rs` or its siblings.

use std::cell::RefCell;
use std::time::{Duration, Instant};

use tree_sitter::{ParseOptions, ParseState, Parser};

use super::{budget, decode};

/// Caps on the work done for one Python source; every field is checked before the work it bounds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Largest source accepted, in bytes; a larger source is not parsed at all.
    pub max_source_bytes: usize,
    /// Parser budget: tree-sitter calls back every 100 parse operations; after this many callbacks
    /// the parse is abandoned. Deterministic, unlike a wall-clock timeout (error recovery on
    /// hostile input is where parse time explodes).
    pub max_parse_checks: u64,
    /// Wall-clock cap on parsing, in milliseconds. tree-sitter's error recovery is superlinear on
    /// hostile input (256 KiB of unbalanced brackets and quotes takes about a minute while
    /// reporting only a few thousand progress callbacks), so the deterministic budget above is
    /// not enough on its own. A scan stopped by this cap depends on machine speed; it is reported
    /// as `parse-timeout` so the policy can treat it as a limit finding.
    pub max_parse_millis: u64,
    /// Syntax-tree nodes visited, summed over every pass.
    pub max_nodes: usize,
    /// Items reported; the scan stops at this many.
    pub max_items: usize,
    /// Import aliases and assigned names remembered.
    pub max_bindings: usize,
    /// Length of `callee` and `excerpt` in chars.
    pub max_excerpt_chars: usize,
    /// Syntax-tree nodes the round-trip judge (`pickle.loads(pickle.dumps(x))` is not an
    /// unsafe load) may visit in one source, summed over its calls; past it, loads are reported.
    pub max_round_trip_nodes: usize,
    /// Caps on decoding literal blobs (the behaviour analysis).
    pub blob: decode::Limits,
    /// The evaluation budget of one file (the behaviour analysis): steps, bytes, depth and
    /// a wall-clock cap, shared by everything that evaluates the file's expressions.
    pub eval: budget::Limits,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_source_bytes: 8 * 1024 * 1024,
            max_parse_checks: 2_000_000,
            max_parse_millis: 10_000,
            max_nodes: 5_000_000,
            max_items: 10_000,
            max_bindings: 20_000,
            max_excerpt_chars: 200,
            max_round_trip_nodes: 4_000_000,
            blob: decode::Limits::default(),
            eval: budget::Limits::default(),
        }
    }
}

/// Parses `source` within the size, budget and time caps; `Err` names the cap that stopped it.
pub(super) fn parse(source: &str, limits: &Limits) -> Result<tree_sitter::Tree, &'static str> {
    if source.len() > limits.max_source_bytes {
        return Err("source-too-large");
    }
    PARSER.with_borrow_mut(|slot| {
        let parser = match slot {
            Some(parser) => parser,
            None => slot.insert(new_parser()?),
        };
        // A parse stopped by a cap leaves state for resuming it; this one starts afresh.
        parser.reset();
        parse_with(parser, source, limits)
    })
}

thread_local! {
    /// One parser per thread, reused: a new one allocates its stacks and lexer, a cost paid
    /// per file and per notebook cell otherwise (issue 22).
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

fn new_parser() -> Result<Parser, &'static str> {
    let mut parser = Parser::new();
    if parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .is_err()
    {
        // Only an ABI mismatch between the two crates gets here; treat it as a parse failure.
        return Err("parse-budget");
    }
    Ok(parser)
}

fn parse_with(
    parser: &mut Parser,
    source: &str,
    limits: &Limits,
) -> Result<tree_sitter::Tree, &'static str> {
    let bytes = source.as_bytes();
    let mut checks: u64 = 0;
    let mut timed_out = false;
    let budget = limits.max_parse_checks;
    let started = Instant::now();
    let deadline = Duration::from_millis(limits.max_parse_millis);
    let mut on_progress = |_: &ParseState| {
        checks = checks.saturating_add(1);
        timed_out = started.elapsed() > deadline;
        checks > budget || timed_out
    };
    let options = ParseOptions::new().progress_callback(&mut on_progress);
    let mut read = |offset: usize, _| bytes.get(offset..).unwrap_or_default();
    let parsed = parser.parse_with_options(&mut read, None, Some(options));
    parsed.ok_or(if timed_out {
        "parse-timeout"
    } else {
        "parse-budget"
    })
}
