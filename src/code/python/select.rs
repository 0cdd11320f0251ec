//! Statement selection: parses only the logical lines of a source that can matter to its
//! report, instead of the whole file (issue 22). In library and training code the files that
//! pass the pre-filter really do call `from_pretrained` or `torch.load`, a few times in
//! thousands of lines; tree-sitter's parse of the rest was most of a code-heavy scan.
//!
//! A *logical line* is what tree-sitter ends with a `_newline` token: one or more simple
//! statements, or a compound statement's header (with its body, when that is on the same line).
//! [`literals::outline`] finds them with the same lexing the pre-filter trusts. The selected
//! lines are copied verbatim into a smaller source in which each enclosing block they sit in is
//! replaced by an `if 1:` at the block header's indentation, so every selected line keeps its
//! own indentation and its statements parse as they do in the whole file. Positions are mapped
//! back through the copied pieces. Which lines are selected, and why that is enough:
//!
//! - **Calls and dictionary entries.** An item comes from a `call` or `pair` node, analysed from
//!   its own subtree, at most four ancestors (all within the statement), and the bindings. Both
//!   nodes lie within one logical line (a call's arguments and a dictionary are bracketed). A
//!   call the dispatch reports resolves to a name that ends with the last segment of a watched
//!   callee, so its line holds that identifier ([`Role::Callee`]), unless the callee is a bare
//!   name imported `as` something (`from torch import load as l` + `l(p)`), whose lines are
//!   selected too. `trust_remote_code` is reported as a keyword (an identifier on the line) or
//!   as a dictionary key: a literal on the line ([`Role::Trust`] pieces), or a module-level
//!   constant whose value is that literal, for which the whole file is parsed instead.
//! - **Import aliases.** Names resolve through the alias table only by their first segment (and
//!   bare names through wildcard imports), and constants never through imports. So a logical
//!   line that holds the `import` keyword is selected when one of its words is a word of another
//!   selected line (every name it binds is one of its words) or it holds a `*`, once all other
//!   lines are chosen; the aliases of every name the selected lines use are then the whole
//!   file's. Callees imported `as` another name are found on every import line.
//! - **Constants.** A name's constant value is only looked up when the name is a whole argument
//!   or dictionary key or value of a selected line, and it depends on every assignment to that
//!   name anywhere in the file (two make it unverifiable). Every assignment or annotation target
//!   lies before its line's last `=` or `:` outside brackets, so the lines that hold such a name
//!   there are selected too, block headers excepted (they hold no assignment: `for` and `with`
//!   targets, defaults and `as` names are other nodes). Python's keywords are never names.
//! - **Decorators** are selected with the definition they decorate; a selected block header
//!   gets a `pass` body at its own body's indentation.
//!
//! The whole file is parsed instead (exactly as before) whenever any of this could be wrong: a
//! lexing anomaly, indentation that is not spaces or not consistent, a selected line that
//! continues a statement (`else`, `elif`, `except`, `finally`, `try` with an inline body) or is
//! a `match`/`case`, a file large enough for a budget of [`Limits`] to matter, an unchosen line
//! that does not end its statement right before a chosen one, a selected source that does
//! not parse without errors, and a pickle-family `loads` whose data is a call or a name (only
//! the whole file shows whether it is a round trip of a `dumps`: every binding of the name and
//! the function it sits in; the scan of the selection asks for the whole one). `syntax_errors` then describes the statements parsed, not the
//! whole file.
//!
//! **Both paths agree on where statements end** (issue 30). tree-sitter-python skips a line
//! break where its grammar expects more of the statement (`from x` then `import torch` is one
//! `from x import torch` to it, with no error node), where CPython ends the statement and
//! rejects the file, and where the outline cuts two logical lines. [`boundaries_agree`] finds
//! such a join in any tree (a logical line that does not begin a statement) and the scans
//! report it as a syntax error; the selection's own parse gets the same check, and the lines
//! just before chosen ones are parsed on their own ([`Plan::lines_before_chosen`]), so a join
//! that reaches a chosen line sends the source to the whole parse.

use std::collections::HashSet;
use std::ops::Range;
use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use tree_sitter::Node;

use super::literals::{self, LogicalLine};
use super::parser::{Limits, parse};
use super::prefilter::{self, Bound, Role, is_ident_byte};
pub(in crate::code) use super::scanner::{Piece, Selection};

impl Selection {
    /// The 0-based source row of text row `row` at text offset `at` (inside a piece; every node
    /// an item is reported at is).
    pub fn source_row(&self, at: usize, row: usize) -> usize {
        let i = self.pieces.partition_point(|p| p.text <= at);
        match i.checked_sub(1).and_then(|i| self.pieces.get(i)) {
            Some(p) => row.saturating_sub(p.text_row).saturating_add(p.source_row),
            None => row,
        }
    }
}

/// A source is parsed whole when it is at least this many bytes per node of the node budget
/// away from it: a tree has far fewer nodes than ten per byte, so the whole-file scan could
/// not have stopped at the budget either.
const BYTES_PER_NODE: usize = 10;

/// Likewise for the parse budget: tree-sitter reports progress every 100 operations, far
/// fewer than 400 per byte of well-lexed code.
const CHECKS_PER_BYTE: u64 = 4;

/// Below this wall-clock cap the whole file is parsed, so that a scan stopped by it stays the
/// same scan (a well-lexed file within the size caps above parses in well under a second).
pub(in crate::code) const MIN_PARSE_MILLIS: u64 = 1_000;

/// Why a pattern occurrence selects its line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hit {
    Callee,
    Trust,
    Import,
}

/// The matcher over the selecting patterns and `import`.
struct Selector {
    matcher: Option<AhoCorasick>,
    bounds: Vec<Bound>,
    hits: Vec<Hit>,
    /// Callee segments (with their bounds), for `import … as` aliases.
    callees: Vec<(&'static str, Bound)>,
}

static SELECTOR: LazyLock<Selector> = LazyLock::new(|| {
    let mut texts = Vec::new();
    let mut bounds = Vec::new();
    let mut hits = Vec::new();
    let mut callees = Vec::new();
    for (text, bound, role) in prefilter::selecting_patterns() {
        texts.push(text);
        bounds.push(bound);
        hits.push(match role {
            Role::Trust => Hit::Trust,
            _ => Hit::Callee,
        });
        if role == Role::Callee {
            callees.push((text, bound));
        }
    }
    texts.push("import");
    bounds.push(Bound::Identifier);
    hits.push(Hit::Import);
    let matcher = AhoCorasick::builder()
        .match_kind(MatchKind::Standard)
        .kind(Some(AhoCorasickKind::DFA))
        .build(&texts)
        .ok();
    Selector {
        matcher,
        bounds,
        hits,
        callees,
    }
});

/// The selections for sources scanned in turn with shared bindings (a notebook's code cells),
/// or why they must all be parsed whole: the same steps as [`select`], with the names pooled
/// over every source and the binding bound summed.
pub(in crate::code) fn select_parts(
    parts: &[&str],
    limits: &Limits,
) -> Result<Vec<Selection>, &'static str> {
    let mut plans = parts
        .iter()
        .map(|p| Plan::new(p, limits))
        .collect::<Result<Vec<_>, _>>()?;
    let mut names = Names::default();
    for plan in &mut plans {
        plan.aliases(&mut names.aliases);
    }
    for plan in &mut plans {
        plan.widen(&names.aliases, &mut names.wanted);
    }
    let mut bound = 0usize;
    for plan in &mut plans {
        bound = bound.saturating_add(plan.assignments(&names.wanted));
    }
    if bound >= limits.max_bindings {
        return Err("budgets");
    }
    for plan in &plans {
        plan.uses(&mut names.used);
    }
    for plan in &mut plans {
        plan.imports(&names.used);
    }
    // Issue 30: an unchosen line that tree-sitter would join with the chosen line after it
    // (`from x` + `import torch`) makes the file a syntax error; the whole parse says so.
    let mut before = String::new();
    for plan in &plans {
        plan.lines_before_chosen(&mut before);
    }
    if !before.is_empty() {
        match parse(&before, limits) {
            Ok(tree) if !syntax_errors(&before, tree.root_node()) => {}
            _ => return Err("line before a chosen one does not end its statement"),
        }
    }
    plans.into_iter().map(Plan::finish).collect()
}

/// The selection for `source`, or why the whole source must be parsed.
pub(super) fn select(source: &str, limits: &Limits) -> Result<Selection, &'static str> {
    select_parts(&[source], limits)?.pop().ok_or("no source")
}

/// Names that sources sharing their bindings (a notebook's cells) pool: callees imported
/// under another name, and names whose constant value may be looked up.
#[derive(Debug, Default)]
pub(super) struct Names {
    /// Local names of `import … as` aliases of a callee.
    pub aliases: HashSet<Vec<u8>>,
    /// Names a selected line may look up.
    pub wanted: HashSet<Vec<u8>>,
    /// Every word of the chosen lines, for the imports that may bind one.
    pub used: HashSet<Vec<u8>>,
}

/// A selection in the making, in steps so that sources sharing their bindings can pool
/// [`Names`] between them: [`Plan::new`] (pattern lines; import lines found), [`Plan::aliases`]
/// then [`Plan::widen`] (alias lines, decorators, names looked up), [`Plan::assignments`],
/// [`Plan::uses`] then [`Plan::imports`] (the imports that may bind a word used), then
/// [`Plan::finish`].
pub(super) struct Plan<'s> {
    source: &'s str,
    lines: Vec<LogicalLine>,
    quiet: Vec<Range<usize>>,
    parents: Vec<Option<usize>>,
    chosen: Vec<bool>,
    imports: Vec<usize>,
    /// Bindings the whole-source scan could hold at most (import words and assignment targets).
    bound: usize,
}

impl<'s> Plan<'s> {
    /// Lexes `source` and chooses the lines holding a callee, `trust_remote_code` or `import`.
    pub fn new(source: &'s str, limits: &Limits) -> Result<Self, &'static str> {
        let bytes = source.as_bytes();
        let len = bytes.len();
        if len > limits.max_source_bytes
            || len.saturating_mul(BYTES_PER_NODE) > limits.max_nodes
            || u64::try_from(len)
                .unwrap_or(u64::MAX)
                .saturating_mul(CHECKS_PER_BYTE)
                > limits.max_parse_checks
            || limits.max_parse_millis < MIN_PARSE_MILLIS
        {
            return Err("budgets");
        }
        // tree-sitter reads a byte-order mark as an error token; not worth mirroring.
        if bytes.starts_with(b"\xEF\xBB\xBF") {
            return Err("byte-order mark");
        }
        let outline = literals::outline(bytes).map_err(|_| "lexing")?;
        let lines = outline.lines;
        let quiet = outline.quiet;
        let parents = structure(bytes, &lines).ok_or("indentation")?;
        let mut chosen = vec![false; lines.len()];
        let mut imports = Vec::new();
        let selector = &*SELECTOR;
        let matcher = selector.matcher.as_ref().ok_or("matcher")?;
        for m in matcher.find_overlapping_iter(bytes) {
            let id = m.pattern().as_usize();
            let bound = selector.bounds.get(id).copied().unwrap_or(Bound::Anywhere);
            if !prefilter::bounded(bytes, m.start(), m.end(), bound)
                || (bound != Bound::Anywhere && prefilter::is_quiet(&quiet, m.start()))
            {
                continue;
            }
            let Some(i) = line_at(&lines, m.start()) else {
                continue;
            };
            match selector.hits.get(id).copied().unwrap_or(Hit::Callee) {
                // Chosen at the end, if it binds a name the chosen lines use.
                Hit::Import => {
                    imports.push(i);
                    continue;
                }
                // A module-level assignment may make a name stand for the key, and a
                // dictionary anywhere may use the name: too far to follow.
                Hit::Trust
                    if bound == Bound::Anywhere
                        && parents[i].is_none()
                        && assigns_a_string(bytes, &lines[i]) =>
                {
                    return Err("trust_remote_code key constant");
                }
                _ => {}
            }
            chosen[i] = true;
        }
        imports.dedup();
        Ok(Plan {
            source,
            lines,
            quiet,
            parents,
            chosen,
            imports,
            bound: 0,
        })
    }

    /// Adds the local names this source imports `as` aliases of a callee.
    pub fn aliases(&mut self, out: &mut HashSet<Vec<u8>>) {
        let bytes = self.source.as_bytes();
        for &i in &self.imports {
            let line = &self.lines[i];
            let words: Vec<Range<usize>> =
                identifiers(bytes, line.code..line.end, &self.quiet).collect();
            self.bound = self.bound.saturating_add(words.len());
            for w in words.windows(3) {
                if &bytes[w[1].clone()] == b"as" && is_callee_segment(bytes, &w[0]) {
                    out.insert(bytes[w[2].clone()].to_vec());
                }
            }
        }
    }

    /// Chooses the lines using `aliases` and the definitions under chosen decorators, then
    /// adds the names the chosen lines may look up to `wanted`.
    pub fn widen(&mut self, aliases: &HashSet<Vec<u8>>, wanted: &mut HashSet<Vec<u8>>) {
        let bytes = self.source.as_bytes();
        let (lines, quiet, chosen) = (&self.lines, &self.quiet, &mut self.chosen);
        if !aliases.is_empty() {
            for (i, line) in lines.iter().enumerate() {
                if !chosen[i]
                    && identifiers(bytes, line.code..line.end, quiet)
                        .any(|w| aliases.contains(&bytes[w]))
                {
                    chosen[i] = true;
                }
            }
        }
        // Decorators come with what they decorate (each line is looked at once).
        let mut i = 0;
        while i < lines.len() {
            if chosen[i] && bytes.get(lines[i].code) == Some(&b'@') {
                while i + 1 < lines.len() {
                    i += 1;
                    chosen[i] = true;
                    if bytes.get(lines[i].code) != Some(&b'@') {
                        break;
                    }
                }
            }
            i += 1;
        }
        for (i, line) in lines.iter().enumerate() {
            if chosen[i] {
                for w in identifiers(bytes, line.code..line.end + 1, quiet) {
                    let word = &bytes[w.clone()];
                    if may_be_looked_up(bytes, &w)
                        && !KEYWORDS.contains(&word)
                        && !wanted.contains(word)
                    {
                        wanted.insert(word.to_vec());
                    }
                }
            }
        }
    }

    /// Chooses every line that may assign a `wanted` name; returns the bound on the bindings
    /// the whole-source scan could hold.
    pub fn assignments(&mut self, wanted: &HashSet<Vec<u8>>) -> usize {
        let bytes = self.source.as_bytes();
        for (i, line) in self.lines.iter().enumerate() {
            // A block header holds no assignment (its `:` ends it; `for` and `with` targets,
            // defaults and `as` names are not assignments), so only other lines can.
            let Some(assign) = line.assign.filter(|_| !opens_block(bytes, line)) else {
                continue;
            };
            let mut targets = 0usize;
            let mut hit = false;
            for w in identifiers(bytes, line.code..assign, &self.quiet) {
                targets += 1;
                hit |= wanted.contains(&bytes[w]);
            }
            self.bound = self.bound.saturating_add(targets);
            self.chosen[i] |= hit;
        }
        self.bound
    }

    /// Adds every word of the chosen lines to `used`, keywords (`import`, `from`, `as`)
    /// excepted: they bind nothing.
    pub fn uses(&self, used: &mut HashSet<Vec<u8>>) {
        let bytes = self.source.as_bytes();
        for (i, line) in self.lines.iter().enumerate() {
            if self.chosen[i] {
                for w in identifiers(bytes, line.code..line.end + 1, &self.quiet) {
                    let word = &bytes[w];
                    if !KEYWORDS.contains(&word) && !used.contains(word) {
                        used.insert(word.to_vec());
                    }
                }
            }
        }
    }

    /// Chooses the import lines that may bind a `used` word, and wildcard imports (any `*`).
    pub fn imports(&mut self, used: &HashSet<Vec<u8>>) {
        let bytes = self.source.as_bytes();
        for &i in &self.imports {
            let line = &self.lines[i];
            let text = bytes
                .get(line.code..=line.end)
                .or_else(|| bytes.get(line.code..))
                .unwrap_or_default();
            self.chosen[i] |= text.contains(&b'*')
                || identifiers(bytes, line.code..line.end + 1, &self.quiet)
                    .any(|w| used.contains(&bytes[w]));
        }
    }

    /// Appends to `out`, each on its own line and without its indentation, every unchosen
    /// logical line that a chosen one follows, block headers and decorators excepted. Parsed
    /// together, they show whether each ends its statement where its line ends: tree-sitter
    /// skips a line break where its grammar expects more of the statement, and a line it would
    /// join with the chosen line after it (`from x` + `import torch`, `x =` + `torch.load(p)`)
    /// joins the next one here too, or leaves an error. (A chosen line that does not end its
    /// statement joins what follows it in the selection, which [`boundaries_agree`] sees.)
    pub fn lines_before_chosen(&self, out: &mut String) {
        let bytes = self.source.as_bytes();
        for (i, prev) in self
            .lines
            .iter()
            .enumerate()
            .skip(1)
            .map(|(i, _)| (i, &self.lines[i - 1]))
        {
            if !self.chosen[i]
                || self.chosen[i - 1]
                || opens_block(bytes, prev)
                || bytes.get(prev.code) == Some(&b'@')
            {
                continue;
            }
            out.push_str(self.source.get(prev.code..=prev.last).unwrap_or_default());
            out.push('\n');
        }
    }

    /// The selection, unless a chosen line cannot stand alone.
    pub fn finish(self) -> Result<Selection, &'static str> {
        let bytes = self.source.as_bytes();
        for (i, line) in self.lines.iter().enumerate() {
            if self.chosen[i] && continues_a_statement(bytes, line) {
                return Err("continued statement");
            }
        }
        Ok(assemble(
            self.source,
            &self.lines,
            &self.parents,
            &self.chosen,
        ))
    }
}

/// Whether tree-sitter's statements in the error-free tree `root` of `source` begin where its
/// logical lines do (issue 30). tree-sitter-python only emits its `_newline` token where the
/// grammar expects one, and otherwise skips a line break as whitespace: `from x` then
/// `import torch` on the next line parse as one `from x import torch`, without an error node,
/// where CPython stops at the first line (a syntax error) and the statement selection cuts two
/// logical lines. Any such join leaves a logical line that begins inside a statement; a source
/// with one is a syntax error to CPython, so the scans report it as one, whichever statement
/// tree-sitter joined and whatever the spelling. `true` when the lexing is uncertain (no
/// logical lines to compare with: the selection is not used for such a source either).
pub(super) fn boundaries_agree(source: &str, root: tree_sitter::Node<'_>) -> bool {
    let Ok(outline) = literals::outline(source.as_bytes()) else {
        return true;
    };
    let mut starts = Vec::with_capacity(outline.lines.len());
    statement_starts(root, &mut starts);
    starts.sort_unstable();
    outline
        .lines
        .iter()
        .all(|line| starts.binary_search(&line.code).is_ok())
}

/// The start of every statement, clause and decorator under `root` (a module), in any order:
/// where a logical line may begin. Expressions are not entered, so the walk visits statements
/// only (and the children of compound ones).
fn statement_starts(root: tree_sitter::Node<'_>, out: &mut Vec<usize>) {
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            let statement_level = node.kind() == "module"
                || node.kind() == "block"
                || node.kind() == "decorated_definition"
                || matches!(
                    child.kind(),
                    "block"
                        | "elif_clause"
                        | "else_clause"
                        | "except_clause"
                        | "except_group_clause"
                        | "finally_clause"
                        | "case_clause"
                );
            if statement_level {
                if child.kind() != "block" {
                    out.push(child.start_byte());
                }
                stack.push(child);
            }
        }
    }
}

/// Whether the value assigned on `line` may be a string literal (what a constant is made of):
/// its last `=` or `:` is followed by a quote, a string prefix and a quote, or a backslash.
fn assigns_a_string(bytes: &[u8], line: &LogicalLine) -> bool {
    let Some(assign) = line.assign else {
        return false;
    };
    let rest = bytes.get(assign + 1..=line.end.min(bytes.len().saturating_sub(1)));
    let mut rest = rest
        .unwrap_or_default()
        .iter()
        .skip_while(|&&b| b == b' ' || b == b'\t');
    for _ in 0..3 {
        match rest.next() {
            Some(b'\'' | b'"' | b'\\') => return true,
            Some(&b) if b.is_ascii_alphabetic() => {}
            _ => return false,
        }
    }
    false
}

/// The innermost block header of each logical line (`None` at module level); `None` overall
/// when the indentation is not plain spaces that nest as tree-sitter would accept.
fn structure(bytes: &[u8], lines: &[LogicalLine]) -> Option<Vec<Option<usize>>> {
    let mut parents = Vec::with_capacity(lines.len());
    // (indentation width, the header whose block it is)
    let mut stack: Vec<(usize, Option<usize>)> = vec![(0, None)];
    let mut after_header = false;
    for (i, line) in lines.iter().enumerate() {
        let indent = bytes.get(line.start..line.code)?;
        if indent.iter().any(|&b| b != b' ') {
            return None;
        }
        let width = indent.len();
        let top = stack.last()?.0;
        if after_header {
            if width <= top {
                return None;
            }
            stack.push((width, i.checked_sub(1)));
        } else {
            if width > top {
                return None;
            }
            while stack.last()?.0 > width {
                stack.pop();
            }
            if stack.last()?.0 != width {
                return None;
            }
        }
        parents.push(stack.last()?.1);
        after_header = opens_block(bytes, line);
    }
    (!after_header).then_some(parents)
}

/// A header whose block follows on the next lines: its last code byte is the `:`.
fn opens_block(bytes: &[u8], line: &LogicalLine) -> bool {
    bytes.get(line.last) == Some(&b':')
}

/// The index of the logical line holding byte `at`.
fn line_at(lines: &[LogicalLine], at: usize) -> Option<usize> {
    let i = lines.partition_point(|l| l.end < at);
    lines
        .get(i)
        .is_some_and(|l| l.code <= at && at <= l.end)
        .then_some(i)
}

/// The identifiers (ASCII words not starting with a digit) in `range`, outside comments and
/// plain strings. Non-ASCII letters end a word, which can only split a name in two: the
/// callers use words to select more, never less.
fn identifiers<'a>(
    bytes: &'a [u8],
    range: Range<usize>,
    quiet: &'a [Range<usize>],
) -> impl Iterator<Item = Range<usize>> + 'a {
    let end = range.end.min(bytes.len());
    let mut i = range.start.min(end);
    std::iter::from_fn(move || {
        while i < end {
            let b = bytes[i];
            if !is_ident_byte(b) {
                i += 1;
                continue;
            }
            let start = i;
            while i < end && is_ident_byte(bytes[i]) {
                i += 1;
            }
            if bytes[start].is_ascii_digit() || prefilter::is_quiet(quiet, start) {
                continue;
            }
            return Some(start..i);
        }
        None
    })
}

/// Python's hard keywords: never a name, so never a constant (`else` of `a if c else b` would
/// otherwise select every `else:`).
const KEYWORDS: &[&[u8]] = &[
    b"False",
    b"None",
    b"True",
    b"and",
    b"as",
    b"assert",
    b"async",
    b"await",
    b"break",
    b"class",
    b"continue",
    b"def",
    b"del",
    b"elif",
    b"else",
    b"except",
    b"finally",
    b"for",
    b"from",
    b"global",
    b"if",
    b"import",
    b"in",
    b"is",
    b"lambda",
    b"nonlocal",
    b"not",
    b"or",
    b"pass",
    b"raise",
    b"return",
    b"try",
    b"while",
    b"with",
    b"yield",
];

/// Whether the import word `w` is a callee's last segment (so an alias of it is a callee).
fn is_callee_segment(bytes: &[u8], w: &Range<usize>) -> bool {
    let word = &bytes[w.clone()];
    SELECTOR.callees.iter().any(|(text, bound)| match bound {
        Bound::End => word.ends_with(text.as_bytes()),
        _ => word == text.as_bytes(),
    })
}

/// Whether the word at `w` can be a whole expression (an argument, a key or a value), whose
/// constant value the analysis may look up: not an attribute, a callee, a subscripted value or
/// a keyword argument's name.
fn may_be_looked_up(bytes: &[u8], w: &Range<usize>) -> bool {
    let before = bytes[..w.start]
        .iter()
        .rev()
        .find(|&&b| b != b' ' && b != b'\t');
    let mut after = bytes[w.end..].iter().filter(|&&b| b != b' ' && b != b'\t');
    let next = after.next();
    let keyword_name = next == Some(&b'=') && after.next() != Some(&b'=');
    before != Some(&b'.') && !matches!(next, Some(b'(' | b'.' | b'[')) && !keyword_name
}

/// A line that cannot stand alone: it continues a statement begun on an earlier line, or is a
/// `match`/`case` statement (soft keywords: `match = …` and `case.x` are plain names).
fn continues_a_statement(bytes: &[u8], line: &LogicalLine) -> bool {
    let first = bytes[line.code..]
        .iter()
        .position(|&b| !is_ident_byte(b))
        .map_or(&bytes[line.code..], |n| &bytes[line.code..line.code + n]);
    match first {
        b"else" | b"elif" | b"except" | b"finally" | b"try" => true,
        b"match" | b"case" => {
            let next = bytes[line.code + first.len()..]
                .iter()
                .find(|&&b| b != b' ' && b != b'\t');
            !matches!(next, Some(b'=' | b'.'))
        }
        _ => false,
    }
}

/// Writes the chosen lines, each inside stand-ins for the blocks it sits in.
fn assemble(
    source: &str,
    lines: &[LogicalLine],
    parents: &[Option<usize>],
    chosen: &[bool],
) -> Selection {
    let bytes = source.as_bytes();
    let newlines = |range: Range<usize>| bytes[range].iter().filter(|&&b| b == b'\n').count();
    let mut out = Selection::default();
    let mut text_row = 0usize;
    // Rows of the source before `counted`.
    let (mut source_row, mut counted) = (0usize, 0usize);
    // The headers whose blocks are open in `out.text`, outermost first.
    let mut open: Vec<usize> = Vec::new();
    let mut chain: Vec<usize> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if !chosen[i] {
            continue;
        }
        chain.clear();
        let mut up = parents[i];
        while let Some(h) = up {
            chain.push(h);
            up = parents[h];
        }
        chain.reverse();
        let shared = open.iter().zip(&chain).take_while(|(a, b)| a == b).count();
        open.truncate(shared);
        for &h in &chain[shared..] {
            out.text.push_str(indentation(source, &lines[h]));
            out.text.push_str("if 1:\n");
            text_row += 1;
            open.push(h);
        }
        source_row += newlines(counted..line.start);
        let end = (line.end + 1).min(source.len());
        out.pieces.push(Piece {
            text: out.text.len(),
            text_row,
            source_row,
        });
        out.text.push_str(&source[line.start..end]);
        let rows = newlines(line.start..end);
        source_row += rows;
        text_row += rows;
        counted = end;
        if !out.text.ends_with('\n') {
            out.text.push('\n');
            text_row += 1;
        }
        if opens_block(bytes, line)
            && let Some(body) = lines.get(i + 1)
        {
            out.text.push_str(indentation(source, body));
            out.text.push_str("pass\n");
            text_row += 1;
            open.push(i);
        }
    }
    out
}

fn indentation<'s>(source: &'s str, line: &LogicalLine) -> &'s str {
    source.get(line.start..line.code).unwrap_or_default()
}

/// Whether the parse of `source` has syntax errors: error nodes, or lines tree-sitter joined
/// into one statement where CPython ends a statement (see [`boundaries_agree`]).
pub(super) fn syntax_errors(source: &str, root: Node<'_>) -> bool {
    root.has_error() || !boundaries_agree(source, root)
}

#[cfg(test)]
mod tests {
    use super::super::{CodeReport, scan_python_statements, scan_python_unfiltered};
    use super::*;

    const SHA: &str = "0123456789abcdef0123456789abcdef01234567";

    /// The statement scan of `src` against the whole-file scan; returns the selection.
    fn same(src: &str) -> Option<Selection> {
        let limits = Limits::default();
        let whole = scan_python_unfiltered(src, &limits);
        let statements = scan_python_statements(src, &limits);
        assert_eq!(statements.calls, whole.calls, "{src}");
        assert_eq!(statements.truncated_by, whole.truncated_by, "{src}");
        if !whole.syntax_errors {
            assert!(!statements.syntax_errors, "{src}");
        }
        select(src, &limits).ok()
    }

    fn selected(src: &str) -> Selection {
        match same(src) {
            Some(s) => s,
            None => panic!("parsed whole:\n{src}"),
        }
    }

    fn padding(n: usize) -> String {
        (0..n)
            .map(|i| format!("    def m{i}(self, x):\n        y = x * {i}\n        return y\n\n"))
            .collect()
    }

    #[test]
    fn parses_only_the_lines_that_matter() {
        let src = format!(
            "import torch\nfrom transformers import AutoModel\n\n\nclass Big:\n    \"\"\"Docs: AutoModel.from_pretrained('a/b').\"\"\"\n{}    def fetch(self, path):\n        for k in range(3):\n            m = AutoModel.from_pretrained(\n                'org/model',\n                revision=REV,\n            )  # pinned\n        return torch.load(path)\n{}\nREV = '{SHA}'\n",
            padding(200),
            padding(200)
        );
        let s = selected(&src);
        assert!(s.text.len() * 20 < src.len(), "{}", s.text);
        assert!(
            s.text
                .contains("if 1:\n    if 1:\n        if 1:\n            m = AutoModel")
        );
        let report = scan_python_statements(&src, &Limits::default());
        let lines: Vec<usize> = report.calls.iter().map(|c| c.line).collect();
        let first = src
            .lines()
            .position(|l| l.contains("m = AutoModel"))
            .unwrap()
            + 1;
        assert_eq!(lines, vec![first, first + 4]);
        assert_eq!(report.calls[0].column, 17);
    }

    #[test]
    fn keeps_the_imports_that_may_bind_a_name_used() {
        // Kept: the module of the call, a wildcard (a bare `load` may come from it), an alias
        // of a callee, an import inside a block, and a later import rebinding the name. Not
        // kept: imports of names no selected line uses.
        let src = format!(
            "import os, sys\nfrom typing import (\n    Any,\n    Optional,\n)\nimport torch\nfrom pickle import *\nfrom joblib import load as jl\ntry:\n    import yaml\nexcept ImportError:\n    yaml = None\n{}def f(p):\n    a = torch.load(p)\n    b = load(p)\n    c = jl(p)\n    return yaml.load(p)\nfrom numpy import torch\n",
            padding(20)
        );
        let s = selected(&src);
        for kept in [
            "import torch\n",
            "from pickle import *\n",
            "from joblib import load as jl\n",
            "    import yaml\n",
            "from numpy import torch\n",
        ] {
            assert!(s.text.contains(kept), "{kept}: {}", s.text);
        }
        for dropped in ["import os", "typing", "Optional"] {
            assert!(!s.text.contains(dropped), "{dropped}: {}", s.text);
        }
        // Over notebook cells the names pool: an import in cell 1 is kept for a use in cell 2.
        let cells = [
            "import torch\nimport os\n",
            "x = 1\n",
            "m = torch.load(p)\n",
        ];
        let sel = select_parts(&cells, &Limits::default()).unwrap_or_default();
        let texts: Vec<&str> = sel.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(texts, vec!["import torch\n", "", "m = torch.load(p)\n"]);
    }

    #[test]
    fn follows_constants_assigned_anywhere() {
        // A second assignment deep inside a function makes the constant unverifiable; an
        // annotation counts as one too, and so does an attribute target's name.
        for extra in [
            "class C:\n    def f(self):\n        if x:\n            global REV\n            REV = 'main'\n",
            "REV: str\n",
            "def f(o):\n    o.REV = 1\n",
            "def f():\n    a, REV = g()\n",
            "if x: REV = 'v2'\n",
            "def f():\n    REV += 'x'\n",
            "",
        ] {
            let src = format!(
                "import transformers\nREV = '{SHA}'\n{extra}\nclass D:\n    def g(self):\n        return transformers.AutoModel.from_pretrained('o/m', revision=REV, trust_remote_code=TRC)\nTRC = False\n"
            );
            selected(&src);
        }
    }

    #[test]
    fn follows_aliases_of_callees_imported_under_another_name() {
        let src = format!(
            "class A:\n{}    def f(self, p):\n        try:\n            from torch import load as L\n        except ImportError:\n            L = None\n        return L(p)\n",
            padding(20)
        );
        let s = selected(&src);
        assert!(s.text.contains("return L(p)"), "{}", s.text);
        assert_eq!(
            scan_python_statements(&src, &Limits::default()).calls.len(),
            1
        );
    }

    #[test]
    fn headers_decorators_and_inline_bodies() {
        for body in [
            "with torch.load(p) as m:\n    x = 1\n    y = pickle.load(f)\n",
            "@register(torch.load(p))\n@other\ndef f(a=pickle.loads(b)):\n    return 1\n",
            "class A(Base, metaclass=M):\n    @staticmethod\n    def f(): return torch.load(p)\n",
            "if ok: m = torch.load(p); n = AutoModel.from_pretrained('o/m')\n",
            "for x in [torch.load(p) for p in ps]:\n    pass\n",
            "while torch.load(p):\n    break\nelse:\n    pass\n",
            "async def f():\n    async with torch.load(p) as m:\n        await g(m)\n",
            "x = {\n    'trust_remote_code': True,  # in a dict\n}\nf(**x)\n",
            "def f():\n    return lambda: torch.load(p)\n",
            "x = f'{torch.load(p)}'\n",
            "x = 1 \\\n    + torch.load(p)\n",
        ] {
            let src = format!("import torch, pickle\ndef pad():\n    pass\n{body}");
            selected(&src);
            // The same, nested two blocks deep.
            let nested: String = body.lines().map(|l| format!("        {l}\n")).collect();
            let src = format!("import torch, pickle\nclass K:\n    def m(self):\n{nested}");
            selected(&src);
        }
    }

    #[test]
    fn parses_the_whole_file_when_a_line_cannot_stand_alone() {
        let limits = Limits::default();
        for src in [
            "try: m = torch.load(p)\nexcept E: pass\n",
            "if a:\n    pass\nelse: m = torch.load(p)\n",
            "if a:\n    pass\nelif torch.load(p):\n    pass\n",
            "match torch.load(p):\n    case 1:\n        pass\n",
            "match x:\n    case 1: torch.load(p)\n",
            "if a:\n\ttorch.load(p)\n",
            "\u{feff}torch.load(p)\n",
            "KEY = 'trust_remote_code'\nf(**{KEY: True})\n",
            "x = (torch.load(p)\n",
            "if a:\n        torch.load(p)\n    x = 1\n",
        ] {
            same(src);
            assert!(select(src, &limits).is_err(), "{src}");
        }
        // Budgets small enough to matter: the whole file decides how they end.
        let tight = Limits {
            max_nodes: 100,
            ..Limits::default()
        };
        assert_eq!(select("torch.load(p)\n", &tight), Err("budgets"));
    }

    #[test]
    fn selected_lines_keep_their_positions() {
        let src = "import torch\n\n\nclass A:\n    # é comment\n    def f(self):\n        s = 'é'; torch.load(\n            p)\n";
        let s = selected(src);
        let report: CodeReport = scan_python_statements(src, &Limits::default());
        assert_eq!((report.calls[0].line, report.calls[0].column), (7, 18));
        assert!(!s.text.contains("comment"));
    }

    /// Issue 30: tree-sitter skips a line break where its grammar expects no statement end, so
    /// it reads an unfinished line and the next as one statement, without an error node, where
    /// CPython rejects the file (each source below fails `compile` in CPython 3.11) and the
    /// selection cuts two logical lines. The whole-file scan reports such a file as a syntax
    /// error, so the paths are never held to agree on it; the last sources are valid twins.
    #[test]
    fn issue_30_lines_tree_sitter_joins_are_syntax_errors() {
        let limits = Limits::default();
        for src in [
            "from x\nimport torch\ntorch.load(p)\n",
            "import torch\nx =\ntorch.load(p)\n",
            "import torch\ndef f\n(p): return torch.load(p)\n",
            "import torch\nif torch.load(p)\n: pass\n",
            "import torch\nm = torch.load(p) +\n1\n",
            "import torch\nclass A:\n    x = \\\n    1\n    y =\n    torch.load(p)\n",
            "import torch\nwith\ntorch.load(p) as m: pass\n",
            "import torch\nfor x in\ntorch.load(p): pass\n",
            "import torch\nv = not\ntorch.load(p)\n",
            "import torch\nfrom os import\npath\ntorch.load(p)\n",
            "import\ntorch\ntorch.load(p)\n",
            "import torch\ndel\nx\ntorch.load(p)\n",
            "import torch\nassert\ntorch.load(p)\n",
        ] {
            let whole = scan_python_unfiltered(src, &limits);
            assert!(whole.syntax_errors, "{src}");
            // The statement path finds the same items: a join next to a chosen line sends it to
            // the whole parse, and a join elsewhere is outside the statements it parses.
            let statements = scan_python_statements(src, &limits);
            assert_eq!(statements.calls, whole.calls, "{src}");
        }
        // The fuzz case: the unfinished line comes right before a chosen one.
        let fuzz = "from x\nimport torch\ntorch.load(p)\n";
        assert_eq!(
            select(fuzz, &limits),
            Err("line before a chosen one does not end its statement")
        );
        same("import torch\nx = [1,\n2]\ntorch.load(p)\n");
        for valid in [
            "from x import (\n  y)\n",
            "@d\n@e(1)\nasync def f(): pass\n",
            "if a: pass\nelif b: pass\nelse:\n  pass\n",
            "try:\n  pass\nexcept* E:\n  pass\nfinally: pass\n",
            "match x:\n    case 1:\n        pass\n    case _: pass\n",
            "for a in b:\n  pass\nelse: pass\nwhile c: pass\nelse:\n  pass\n",
            "class A:\n  '''doc\n  string'''\n  x: int = 1; y = 2\n",
        ] {
            let whole = scan_python_unfiltered(valid, &limits);
            assert!(!whole.syntax_errors, "{valid}");
        }
    }

    /// The class, not the examples: every statement of the generator's pool and every block
    /// header, broken in two at each space, is either a syntax error to the whole-file scan or
    /// scanned alike on both paths.
    #[test]
    fn issue_30_statements_broken_at_any_space_never_split_the_paths() {
        let limits = Limits::default();
        let (mut broken, mut checked) = (0, 0);
        let headers = HEADERS.iter().map(|h| h.lines().last().unwrap_or(h));
        for stmt in POOL.iter().copied().chain(headers) {
            let body = if stmt.ends_with(':') {
                "\n    x = t.load(p)"
            } else {
                ""
            };
            for (k, _) in stmt.match_indices(' ') {
                let cut = format!("{}\n{}", &stmt[..k], &stmt[k + 1..]);
                let src = format!(
                    "import torch as t, pickle\nfrom pickle import loads as L\nREV = 'main'\n{cut}{body}\nt.load(q)\n"
                );
                if scan_python_unfiltered(&src, &limits).syntax_errors {
                    broken += 1;
                } else {
                    checked += 1;
                    same(&src);
                }
            }
        }
        assert!(
            broken > 40 && checked > 5,
            "{broken} broken, {checked} checked"
        );
    }

    /// Statements of the generator below.
    const POOL: &[&str] = &[
        "m = AutoModel.from_pretrained(MODEL, revision=REV)",
        "m = AutoModel.from_pretrained('o/m', trust_remote_code=TRC)",
        "REV = 'main'",
        "MODEL = 'org/model'",
        "TRC = True",
        "import torch as t",
        "from pickle import loads as L",
        "from torch import *",
        "x = t.load(p)",
        "y = L(b)",
        "z = load(p, weights_only=False)",
        "hf_hub_download(repo_id=MODEL, filename='a')",
        "'''torch.load(p) in a docstring'''",
        "# torch.load(p) in a comment",
        "d = {'trust_remote_code': TRC}",
        "self.REV = REV",
        "a, MODEL = 1, 2",
        "REV: str",
        "pass",
        "x = [\n    torch.load(q),\n    1,\n]",
        "np.load(p, allow_pickle=True)",
        "yaml.load(s)",
        "s = f'{t.load(p)}'",
        "return snapshot_download(MODEL)",
    ];

    /// Block headers of the generator below.
    const HEADERS: &[&str] = &[
        "class C(B):",
        "def f(self, x=REV):",
        "if x:",
        "for i in range(3):",
        "while x:",
        "with open(p) as f:",
        "try:",
        "@decorate(torch.load(p))\ndef g():",
        "async def h():",
    ];

    /// A small deterministic generator of nested Python: blocks of every kind around a pool of
    /// statements that report, bind, shadow or merely mention.
    struct Gen(u64);

    impl Gen {
        fn next(&mut self, n: usize) -> usize {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((self.0 >> 33) as usize) % n
        }

        fn block(&mut self, indent: usize, depth: usize, out: &mut String) {
            let pad = " ".repeat(indent);
            let count = 1 + self.next(4);
            for _ in 0..count {
                if depth < 4 && self.next(3) == 0 {
                    let header = HEADERS[self.next(HEADERS.len())];
                    for (k, line) in header.lines().enumerate() {
                        let _ = k;
                        out.push_str(&format!("{pad}{line}\n"));
                    }
                    self.block(indent + 4, depth + 1, out);
                    if header == "try:" {
                        out.push_str(&format!("{pad}except ImportError:\n"));
                        self.block(indent + 4, depth + 1, out);
                        out.push_str(&format!("{pad}finally:\n"));
                        self.block(indent + 4, depth + 1, out);
                    } else if header == "if x:" && self.next(2) == 0 {
                        out.push_str(&format!("{pad}else:\n"));
                        self.block(indent + 4, depth + 1, out);
                    }
                    continue;
                }
                let stmt = POOL[self.next(POOL.len())];
                for line in stmt.lines() {
                    out.push_str(&format!("{pad}{line}\n"));
                }
            }
        }
    }

    #[test]
    fn generated_nested_sources_give_the_same_items_on_both_paths() {
        let (mut statements, mut broken, mut differ) = (0, 0, 0);
        for seed in 0..1000u64 {
            let mut g = Gen(seed);
            let mut src = String::new();
            if g.next(2) == 0 {
                src.push_str(&format!("REV = '{SHA}'\nimport numpy as np, yaml\n"));
            }
            g.block(0, 0, &mut src);
            if super::super::may_report(src.as_bytes()) && same(&src).is_some() {
                statements += 1;
            }
            // And a mutant: one line dropped, doubled or re-indented (syntax errors included).
            let mut lines: Vec<String> = src.lines().map(str::to_owned).collect();
            let k = g.next(lines.len().max(1));
            match g.next(3) {
                0 => {
                    lines.remove(k);
                }
                1 => lines.insert(k, lines[k].clone()),
                _ => lines[k] = format!("  {}", lines[k]),
            }
            let mutant = lines.join("\n");
            let limits = Limits::default();
            let whole = scan_python_unfiltered(&mutant, &limits);
            let statements = scan_python_statements(&mutant, &limits);
            if whole.syntax_errors {
                // Python cannot run such a file; tree-sitter's recovery and the statements
                // parsed on their own may read it differently.
                broken += 1;
                differ += usize::from(statements.calls != whole.calls);
            } else if super::super::may_report(mutant.as_bytes()) {
                same(&mutant);
            }
        }
        assert!(broken > 30, "{broken}");
        assert!(differ * 5 < broken, "{differ} of {broken}");
        // Most of them take the statement path, not the whole-file fallback.
        assert!(statements > 450, "{statements}");
    }
}
