//! Python call extraction: finds the calls in a repository's own code that fetch models or data
//! from a hub, pass `trust_remote_code`, or deserialize with a code-executing loader.
//!
//! A model repository's scripts and examples are what users copy and run. A hub download that is
//! not pinned to a commit fetches whatever the upstream repository holds on the day it runs (a
//! repository takeover or a force-pushed branch turns it into a supply-chain attack);
//! `trust_remote_code=True` imports Python shipped by that repository; `torch.load`, `pickle`,
//! `joblib` and friends run code embedded in the file they read. This module reports those calls
//! as facts; the policy decides what they are worth.
//!
//! The source is parsed with tree-sitter, never evaluated and never matched with regular
//! expressions, so comments and strings that merely mention `from_pretrained` produce nothing.
//! Import aliases (`import torch as t`, `from pickle import loads as l`) and module-level string
//! constants assigned exactly once (`REV = "…"`) are followed; anything else is reported as
//! "cannot verify". Positions are 1-based lines and 1-based columns counted in Unicode scalar
//! values (chars), not UTF-8 bytes.
//!
//! This file holds the entry points, the result types and the call dispatch; `bindings` is
//! pass 1 (aliases, constants, name resolution), `hub` the hub download calls, `loaders` the
//! code-executing loaders and `prefilter` the byte-level test that skips files which cannot
//! report anything (built from the `hub` and `loaders` dispatch tables), with `literals`
//! finding the comments and strings whose words it ignores, and the logical lines from which
//! `select` picks the statements that a passing file's scan parses.

use tree_sitter::Node;

use field::{Field, Fields};

pub mod behaviour;
mod bindings;
pub mod budget;
mod calls;
pub mod decode;
mod field;
mod fstrings;
pub mod hub;
mod literals;
mod loaders;
mod parser;
mod prefilter;
mod report;
mod scanner;
pub(super) mod select;
mod tree;

use calls::{Args, StrVal, TRUST_REMOTE_CODE};
pub use parser::Limits;
use parser::parse;
pub use report::{CodeItem, CodeReport, ItemKind, RepoRef, RevisionState, TrustValue};
pub(super) use scanner::Bindings;
use scanner::{RoundTrips, Scanner};
use select::syntax_errors;
use tree::{Kind, walk, walk_with_parents};

/// Scans one Python source. Never panics; limits turn into `truncated`.
///
/// A source that [`may_report`] rejects is not parsed: it yields an empty report (no items, and
/// `syntax_errors` false because nothing was parsed). One that passes is scanned with
/// [`scan_python_statements`].
pub fn scan_python(source: &str, limits: &Limits) -> CodeReport {
    if !may_report(source.as_bytes()) {
        return CodeReport::default();
    }
    scan_python_statements(source, limits)
}

/// Scans a source that passed [`may_report`] by parsing only the statements that can matter to
/// its report (the `select` module says which and why): the same items as
/// [`scan_python_unfiltered`]. `syntax_errors` describes the statements parsed; whenever they
/// do not parse cleanly, or the selection could be wrong, the whole source is parsed instead.
pub fn scan_python_statements(source: &str, limits: &Limits) -> CodeReport {
    let mut bindings = Bindings::default();
    if fstrings::needs_clamp(source) {
        // Statement selection reads the source as written; this one is parsed blanked, whole.
        return scan_python_with(source, limits, &mut bindings);
    }
    match select::select(source, limits) {
        Ok(selection) => scan_selection_with(source, &selection, limits, &mut bindings),
        Err(_) => scan_python_with(source, limits, &mut bindings),
    }
}

/// Scans `source` through its `selection` with bindings from earlier code (a notebook's
/// earlier cells), leaving this source's bindings in `bindings`; parses the whole source
/// instead when the selection does not parse cleanly (its bindings hold the same names that
/// matter: every import, and every assignment to a name the selection looks up).
pub(super) fn scan_selection_with(
    source: &str,
    selection: &select::Selection,
    limits: &Limits,
    bindings: &mut Bindings,
) -> CodeReport {
    let tree = match parse(&selection.text, limits) {
        Ok(tree) if !syntax_errors(&selection.text, tree.root_node()) => tree,
        _ => return scan_python_with(source, limits, bindings),
    };
    // A selection's scan may hand a pickle `loads` to the whole parse (the round-trip judge
    // needs the whole file), which starts again from these bindings. Only a source that names
    // `loads`, or follows an earlier import of it, can.
    let before = (selection.text.contains("loads") || bindings.imports_segment("loads"))
        .then(|| bindings.clone());
    let mut scanner = Scanner {
        selection: Some(selection),
        ..Scanner::new(&selection.text, limits, bindings)
    };
    scanner.collect_bindings_and_items(tree.root_node());
    if scanner.round_trips.whole_needed.get()
        && let Some(before) = before
    {
        // A `pickle.loads` whose data may come from `pickle.dumps`: only the whole file
        // shows every binding of the name and the function it sits in. (Without the
        // bindings to start from, which cannot happen, the selection's report stands: its
        // round trips are all reported.)
        *bindings = before;
        return scan_python_with(source, limits, bindings);
    }
    scanner.report
}

/// Scans a model code file and analyses its behaviour from one parse of the whole source: the
/// call scan ([`scan_python`]'s items, empty when [`may_report`] rejects the bytes, as there) and
/// the capability sites ([`behaviour::analyze`]) share the tree and the import bindings.
pub fn scan_and_analyze(source: &str, limits: &Limits) -> (CodeReport, behaviour::Behaviour) {
    let (clamped, blanked) = fstrings::clamp(source);
    let source = &*clamped;
    let tree = match parse(source, limits) {
        Ok(tree) => tree,
        Err(by) => {
            let report = CodeReport {
                truncated: true,
                truncated_by: Some(by),
                ..CodeReport::default()
            };
            let behaviour = behaviour::Behaviour {
                truncated_by: Some(by),
                ..behaviour::Behaviour::default()
            };
            return (report, behaviour);
        }
    };
    let root = tree.root_node();
    let errors = blanked || syntax_errors(source, root);
    let mut bindings = Bindings::default();
    let mut scanner = Scanner {
        report: CodeReport {
            syntax_errors: errors,
            ..CodeReport::default()
        },
        // Model code: a round trip stays reported (see `RoundTrips::disabled`).
        round_trips: RoundTrips::kept(),
        ..Scanner::new(source, limits, &mut bindings)
    };
    let wanted = may_report(source.as_bytes());
    if wanted {
        scanner.collect_bindings_and_items(root);
    } else {
        scanner.collect_bindings(root);
    }
    let report = if wanted {
        std::mem::take(&mut scanner.report)
    } else {
        CodeReport::default()
    };
    let mut behaviour = behaviour::analyze_tree(&mut scanner, root, 0);
    behaviour.syntax_errors = errors;
    (report, behaviour)
}

/// Scans one Python source without the pre-filter: always parses. For callers that ran
/// [`may_report`] on the bytes themselves, and for the tests that prove the pre-filter safe.
pub fn scan_python_unfiltered(source: &str, limits: &Limits) -> CodeReport {
    scan_python_with(source, limits, &mut Bindings::default())
}

/// Whether `source` could yield any item; `false` only when parsing it is certain to report
/// nothing. One pass over the bytes, which may be invalid UTF-8 (the `prefilter` module says
/// why a `false` is safe).
pub fn may_report(source: &[u8]) -> bool {
    prefilter::may_report(source)
}

/// [`may_report`] for sources scanned in turn with shared bindings (a notebook's code cells):
/// `false` only when parsing every one of them is certain to report nothing.
pub fn may_report_parts<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> bool {
    prefilter::may_report_parts(parts)
}

/// Scans `source` with bindings from earlier code, and leaves this source's bindings in `bindings`.
pub(super) fn scan_python_with(
    source: &str,
    limits: &Limits,
    bindings: &mut Bindings,
) -> CodeReport {
    let (clamped, blanked) = fstrings::clamp(source);
    let source = &*clamped;
    let mut report = CodeReport::default();
    let tree = match parse(source, limits) {
        Ok(tree) => tree,
        Err(by) => {
            report.truncated = true;
            report.truncated_by = Some(by);
            return report;
        }
    };
    let root = tree.root_node();
    report.syntax_errors = blanked || syntax_errors(source, root);

    let mut scanner = Scanner {
        report,
        ..Scanner::new(source, limits, bindings)
    };
    scanner.collect_bindings_and_items(root);
    scanner.report
}

/// One call in a source, for callers that judge calls themselves (TorchScript code in model
/// archives): the names its callee may stand for after import aliases, where it is, and the
/// function it sits in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// Dotted names the callee may stand for (`torch.from_file`, `os.system`, `open`).
    pub names: Vec<String>,
    /// The callee as written (whitespace collapsed, bounded).
    pub callee: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in chars.
    pub column: usize,
    /// The innermost enclosing `def`, e.g. `__setstate__`.
    pub function: Option<String>,
}

/// Every call of a source, in source order, with the same caps as [`scan_python`] (`truncated`
/// names the cap that stopped the listing; the calls found before it are kept).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallList {
    /// The calls.
    pub calls: Vec<Call>,
    /// tree-sitter had to recover from syntax errors.
    pub syntax_errors: bool,
    /// Sub-code of the limit that stopped the listing, as in [`CodeReport::truncated_by`].
    pub truncated_by: Option<&'static str>,
}

/// Lists every call in `source`. Never panics; nothing is evaluated.
pub fn list_calls(source: &str, limits: &Limits) -> CallList {
    let (clamped, blanked) = fstrings::clamp(source);
    let source = &*clamped;
    let mut out = CallList::default();
    let tree = match parse(source, limits) {
        Ok(tree) => tree,
        Err(by) => {
            out.truncated_by = Some(by);
            return out;
        }
    };
    let root = tree.root_node();
    out.syntax_errors = blanked || syntax_errors(source, root);
    let mut bindings = Bindings::default();
    let mut scanner = Scanner::new(source, limits, &mut bindings);
    if !scanner.collect_bindings(root) {
        out.truncated_by = scanner.report.truncated_by;
        return out;
    }
    let mut calls = Vec::new();
    // The `def`s around the node being visited, with their depths: walking up from each call
    // was quadratic in a deep chain of calls (issue 37).
    let mut defs: Vec<(usize, Node<'_>)> = Vec::new();
    walk_with_parents(root, |node, ancestors| {
        if !scanner.count_node() {
            return false;
        }
        let depth = ancestors.len();
        while defs.last().is_some_and(|(d, _)| *d >= depth) {
            defs.pop();
        }
        match node.kind() {
            "function_definition" => defs.push((depth, node)),
            _ if Kind::of(node) == Kind::Call => {
                if calls.len() >= limits.max_items {
                    scanner.stop("item-budget");
                    return false;
                }
                // The innermost `def` at most 256 levels up.
                let def = defs
                    .last()
                    .filter(|(d, _)| depth - d <= 256)
                    .map(|(_, def)| *def);
                calls.push((node, def));
            }
            _ => {}
        }
        true
    });
    for (node, def) in calls {
        let Some(func) = node.field(Field::Function) else {
            continue;
        };
        let names = scanner.resolve(func);
        if names.is_empty() {
            continue;
        }
        let callee = scanner.excerpt(scanner.text(func));
        let (line, column) = scanner.position(node);
        out.calls.push(Call {
            names,
            callee,
            line,
            column,
            function: def.and_then(|d| scanner.function_name(d)),
        });
    }
    out.truncated_by = scanner.report.truncated_by;
    out
}

impl<'s> Scanner<'s, '_> {
    fn count_node(&mut self) -> bool {
        self.nodes = self.nodes.saturating_add(1);
        if self.nodes > self.limits.max_nodes {
            self.stop("node-budget");
            return false;
        }
        true
    }

    fn stop(&mut self, code: &'static str) {
        self.report.truncated = true;
        if self.report.truncated_by.is_none() {
            self.report.truncated_by = Some(code);
        }
    }

    fn text(&self, node: Node<'_>) -> &'s str {
        self.source.get(node.byte_range()).unwrap_or_default()
    }

    /// Collapses whitespace and bounds the length, so excerpts stay one short line.
    fn excerpt(&self, text: &str) -> String {
        let max = self.limits.max_excerpt_chars;
        let mut out = String::new();
        let mut count = 0usize;
        let mut pending_space = false;
        for ch in text.chars() {
            if ch.is_whitespace() {
                pending_space = count > 0;
                continue;
            }
            let need = if pending_space { 2 } else { 1 };
            if count.saturating_add(need) > max {
                out.push('…');
                return out;
            }
            if pending_space {
                out.push(' ');
                pending_space = false;
            }
            out.push(ch);
            count = count.saturating_add(need);
        }
        out
    }

    // ---- pass 2: calls --------------------------------------------------------------------

    /// Pass 1 ([`Scanner::collect_bindings`]) and pass 2 (calls) in one walk of the tree: a
    /// parsed file's walks cost about as much as its parse, and one walk costs half of two
    /// (issue 22). The node budget counts as if the tree were walked twice: pass 2 would stop
    /// after visiting `max_nodes - n` nodes of an `n`-node tree, so only the calls and pairs
    /// among those are analysed.
    /// The comments and plain string bodies of a source whose parse has errors (empty
    /// otherwise). tree-sitter's error recovery lexes a string's body as code (`'o/m'` after a
    /// broken line holds the identifiers `o` and `m`); Python never does, so nothing starting
    /// there is an import, an assignment or a call. The pre-filter ignores the same ranges.
    fn recovered_strings(&self, root: Node<'s>) -> Vec<std::ops::Range<usize>> {
        let mut quiet = Vec::new();
        if root.has_error() {
            let _ = literals::quiet_ranges(self.source.as_bytes(), &mut quiet);
        }
        quiet
    }

    fn collect_bindings_and_items(&mut self, root: Node<'s>) {
        self.round_trips.root.set(Some(root));
        let mut found: Vec<Node<'s>> = Vec::new();
        let mut items: Vec<(usize, Node<'s>)> = Vec::new();
        let mut visited = 0usize;
        let mut ok = true;
        let strings = self.recovered_strings(root);
        walk(root, |node| {
            if !self.count_node() {
                ok = false;
                return false;
            }
            visited = visited.saturating_add(1);
            if prefilter::is_quiet(&strings, node.start_byte()) {
                return true;
            }
            match Kind::of(node) {
                Kind::ImportStatement
                | Kind::ImportFromStatement
                | Kind::Assignment
                | Kind::AugmentedAssignment => found.push(node),
                Kind::Call | Kind::Pair => items.push((visited, node)),
                Kind::Other => {}
            }
            true
        });
        self.bind_nodes(found);
        if !ok {
            return;
        }
        // Pass 2 of a two-walk scan visits node `k` with `visited + k` nodes counted.
        let pass2 = self.limits.max_nodes.saturating_sub(visited);
        if visited > pass2 {
            self.stop("node-budget");
        }
        self.nodes = self.nodes.saturating_add(visited.min(pass2));
        let nodes = items
            .into_iter()
            .take_while(|(k, _)| *k <= pass2)
            .map(|(_, node)| node);
        self.analyze_items(nodes);
    }

    /// Analyses `call` and `pair` nodes in order, up to the item budget.
    fn analyze_items(&mut self, nodes: impl IntoIterator<Item = Node<'s>>) {
        for node in nodes {
            if self.report.calls.len() >= self.limits.max_items {
                self.stop("item-budget");
                return;
            }
            if Kind::of(node) == Kind::Call {
                self.analyze_call(node);
            } else {
                self.analyze_pair(node);
            }
        }
        self.report.calls.truncate(self.limits.max_items);
    }

    /// 1-based line and 1-based column in chars of a node's start.
    fn position(&self, at: Node<'s>) -> (usize, usize) {
        let point = at.start_position();
        let row = self
            .selection
            .map_or(point.row, |s| s.source_row(at.start_byte(), point.row));
        let line = row.saturating_add(1);
        let column = at
            .start_byte()
            .checked_sub(point.column)
            .and_then(|line_start| self.source.get(line_start..at.start_byte()))
            .map_or(point.column, |prefix| prefix.chars().count())
            .saturating_add(1);
        (line, column)
    }

    /// The name of a `def`, bounded.
    fn function_name(&self, def: Node<'s>) -> Option<String> {
        let name = def.field(Field::Name)?;
        Some(self.excerpt(self.text(name)))
    }

    fn push(&mut self, at: Node<'s>, kind: ItemKind, callee: &str, excerpt: &str) {
        let (line, column) = self.position(at);
        let item = CodeItem {
            kind,
            line,
            column,
            callee: self.excerpt(callee),
            excerpt: self.excerpt(excerpt),
        };
        self.report.calls.push(item);
    }

    fn args(&self, call: Node<'s>) -> Args<'s> {
        let mut args = Args {
            node: None,
            positional: Vec::new(),
            keywords: Vec::new(),
            splat: None,
        };
        let Some(list) = call.field(Field::Arguments) else {
            return args;
        };
        args.node = Some(list);
        if list.kind() != "argument_list" {
            return args;
        }
        let mut cursor = list.walk();
        for child in list.named_children(&mut cursor) {
            match child.kind() {
                "keyword_argument" => {
                    if let (Some(name), Some(value)) =
                        (child.field(Field::Name), child.field(Field::Value))
                    {
                        args.keywords.push((self.text(name), value));
                    }
                }
                "list_splat" | "dictionary_splat" => {
                    args.splat.get_or_insert(child);
                }
                "comment" => {}
                _ => args.positional.push(child),
            }
        }
        args
    }

    fn analyze_call(&mut self, call: Node<'s>) {
        let Some(func) = call.field(Field::Function) else {
            return;
        };
        let names = self.resolve(func);
        if names.is_empty() {
            return;
        }
        let args = self.args(call);
        let callee = self.text(func);
        let excerpt = args.node.map_or("", |n| self.text(n));

        if let Some(value) = args.keyword(TRUST_REMOTE_CODE)
            && let Some(trust) = self.trust_value(value)
        {
            let kw = value.parent().map_or(excerpt, |p| self.text(p));
            self.push(call, ItemKind::TrustRemoteCode { value: trust }, callee, kw);
        }
        if let Some(kind) = self.hub_download(&names, &args) {
            self.push(call, kind, callee, excerpt);
        }
        if let Some((code, reason)) = self.unsafe_load(call, &names, &args, callee) {
            self.push(call, ItemKind::UnsafeLoad { code, reason }, callee, excerpt);
        }
    }

    /// `{"trust_remote_code": True}` passed as `model_kwargs=` or `**{…}`.
    fn analyze_pair(&mut self, pair: Node<'s>) {
        let (Some(key), Some(value)) = (pair.field(Field::Key), pair.field(Field::Value)) else {
            return;
        };
        if !matches!(self.string_value(key), StrVal::Plain(k) if k == TRUST_REMOTE_CODE) {
            return;
        }
        let Some(trust) = self.trust_value(value) else {
            return;
        };
        // Name the call the dictionary is passed to, when it is close by.
        let mut callee = "";
        let mut up = pair.parent();
        for _ in 0..4 {
            let Some(node) = up else { break };
            if node.kind() == "call" {
                callee = node.field(Field::Function).map_or("", |f| self.text(f));
                break;
            }
            up = node.parent();
        }
        let text = self.text(pair);
        self.push(
            pair,
            ItemKind::TrustRemoteCode { value: trust },
            callee,
            text,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) const SHA: &str = "0123456789abcdef0123456789abcdef01234567";

    /// Scans with the pre-filter, and checks that the unfiltered scan finds the same items:
    /// every inline source of these tests is also a pre-filter equivalence case.
    pub(super) fn scan(src: &str) -> CodeReport {
        let report = scan_python(src, &Limits::default());
        let unfiltered = scan_python_unfiltered(src, &Limits::default());
        assert_eq!(report.calls, unfiltered.calls, "pre-filter changed:\n{src}");
        report
    }

    pub(super) fn downloads(src: &str) -> Vec<(RepoRef, RevisionState, &'static str)> {
        scan(src)
            .calls
            .into_iter()
            .filter_map(|c| match c.kind {
                ItemKind::HubDownload {
                    repo,
                    revision,
                    api,
                } => Some((repo, revision, api)),
                _ => None,
            })
            .collect()
    }

    pub(super) fn one_download(src: &str) -> (RepoRef, RevisionState, &'static str) {
        let mut all = downloads(src);
        assert_eq!(all.len(), 1, "{src}: {all:?}");
        all.remove(0)
    }

    pub(super) fn unsafe_codes(src: &str) -> Vec<&'static str> {
        scan(src)
            .calls
            .into_iter()
            .filter_map(|c| match c.kind {
                ItemKind::UnsafeLoad { code, .. } => Some(code),
                _ => None,
            })
            .collect()
    }

    pub(super) fn lit(v: &str) -> RepoRef {
        RepoRef::Literal {
            value: v.to_owned(),
        }
    }

    #[test]
    fn lists_every_call_with_its_enclosing_function() {
        let src = "import os as o\nclass M(Module):\n  def __setstate__(self, state):\n    _1 = torch.from_file(\"/etc/passwd\", False, 4)\n    return None\n  def forward(self, x):\n    o.system(\"id\")\n    return torch.add(x, 1)\nprint(1)\n";
        let l = list_calls(src, &Limits::default());
        assert!(!l.syntax_errors);
        assert_eq!(l.truncated_by, None);
        let got: Vec<(Vec<String>, usize, Option<&str>)> = l
            .calls
            .iter()
            .map(|c| (c.names.clone(), c.line, c.function.as_deref()))
            .collect();
        assert_eq!(
            got,
            vec![
                (vec!["torch.from_file".to_string()], 4, Some("__setstate__")),
                (vec!["os.system".to_string()], 7, Some("forward")),
                (vec!["torch.add".to_string()], 8, Some("forward")),
                (vec!["print".to_string()], 9, None),
            ]
        );
        let tiny = Limits {
            max_source_bytes: 4,
            ..Limits::default()
        };
        assert_eq!(
            list_calls(src, &tiny).truncated_by,
            Some("source-too-large")
        );
        let few = Limits {
            max_items: 2,
            ..Limits::default()
        };
        let l = list_calls(src, &few);
        assert_eq!((l.calls.len(), l.truncated_by), (2, Some("item-budget")));
    }

    /// The scan as two walks of the tree (bindings, then calls), which the one-walk scan must
    /// equal under every budget.
    fn scan_two_walks(src: &str, limits: &Limits) -> CodeReport {
        let Ok(tree) = parse(src, limits) else {
            panic!("parse")
        };
        let root = tree.root_node();
        let mut bindings = Bindings::default();
        let mut scanner = Scanner {
            report: CodeReport {
                syntax_errors: root.has_error(),
                ..CodeReport::default()
            },
            ..Scanner::new(src, limits, &mut bindings)
        };
        scanner.round_trips.root.set(Some(root));
        if scanner.collect_bindings(root) {
            let mut nodes = Vec::new();
            walk(root, |node| {
                if !scanner.count_node() {
                    return false;
                }
                if matches!(node.kind(), "call" | "pair") {
                    nodes.push(node);
                }
                true
            });
            scanner.analyze_items(nodes);
        }
        scanner.report
    }

    #[test]
    fn one_walk_counts_the_node_budget_as_two_walks() {
        let src = "import torch as t\nREV = 'main'\nt.load(a)\nx = 1\nf(**{'trust_remote_code': True})\nAutoModel.from_pretrained('o/m', revision=REV)\nt.load(b)\n";
        let total = {
            let Ok(tree) = parse(src, &Limits::default()) else {
                panic!("parse")
            };
            let mut n = 0usize;
            walk(tree.root_node(), |_| {
                n += 1;
                true
            });
            n
        };
        for max_nodes in 0..=2 * total + 1 {
            for (max_items, max_bindings) in [(10, 10), (2, 10), (10, 1), (1, 0)] {
                let limits = Limits {
                    max_nodes,
                    max_items,
                    max_bindings,
                    ..Limits::default()
                };
                let one = scan_python_with(src, &limits, &mut Bindings::default());
                assert_eq!(one, scan_two_walks(src, &limits), "{limits:?}");
            }
        }
        let full = scan_python_unfiltered(src, &Limits::default());
        assert_eq!(full.calls.len(), 4, "{full:?}");
    }

    #[test]
    fn kinds_by_id_agree_with_kinds_by_name() {
        let src = "import a\nfrom b import c\nx = 1\nx += f({'k': v})\n";
        let Ok(tree) = parse(src, &Limits::default()) else {
            panic!("parse")
        };
        let mut seen = Vec::new();
        walk(tree.root_node(), |node| {
            assert_eq!(
                Kind::of(node),
                Kind::of_name(node.kind()),
                "{}",
                node.kind()
            );
            seen.push(Kind::of(node));
            true
        });
        assert_eq!(seen.iter().filter(|k| **k != Kind::Other).count(), 6);
    }

    #[test]
    fn mentions_in_comments_and_strings_are_not_calls() {
        let src = r#"
# model = AutoModel.from_pretrained("org/model")
"""
Call AutoModel.from_pretrained("org/model") and torch.load(path).
"""
doc = "pickle.loads(data) and trust_remote_code=True"
def from_pretrained(name):
    pass
"#;
        let report = scan(src);
        assert!(report.calls.is_empty(), "{:?}", report.calls);
        assert!(!report.syntax_errors);
    }

    #[test]
    fn reports_multi_line_calls_at_their_start() {
        let src = "import transformers\n\nmodel = (\n  transformers.AutoModelForCausalLM\n    .from_pretrained(\n        'o/m',\n        revision='main',\n    )\n)\n";
        let report = scan(src);
        let [item] = report.calls.as_slice() else {
            panic!("{:?}", report.calls)
        };
        assert_eq!((item.line, item.column), (4, 3));
        assert_eq!(
            item.callee,
            "transformers.AutoModelForCausalLM .from_pretrained"
        );
        assert_eq!(item.excerpt, "( 'o/m', revision='main', )");
    }

    #[test]
    fn counts_columns_in_chars() {
        let report = scan("x = 'é'; torch.load(f)");
        let [item] = report.calls.as_slice() else {
            panic!()
        };
        assert_eq!((item.line, item.column), (1, 10));
    }

    #[test]
    fn scans_files_with_syntax_errors() {
        let report = scan("def broken(:\n    pass\nimport torch\ntorch.load(p)\n");
        assert!(report.syntax_errors);
        assert_eq!(report.calls.len(), 1);
    }

    #[test]
    fn rejects_source_over_size_limit() {
        let limits = Limits {
            max_source_bytes: 4,
            ..Limits::default()
        };
        let report = scan_python("torch.load(p)", &limits);
        assert!(report.truncated);
        assert_eq!(report.truncated_by, Some("source-too-large"));
    }

    #[test]
    fn stops_at_parse_budget() {
        let limits = Limits {
            max_parse_checks: 1,
            ..Limits::default()
        };
        let src = "torch.load(p)\n".repeat(2000);
        let report = scan_python(&src, &limits);
        assert_eq!(report.truncated_by, Some("parse-budget"));
        assert!(report.calls.is_empty());
    }

    #[test]
    fn stops_at_parse_timeout() {
        let limits = Limits {
            max_parse_millis: 0,
            ..Limits::default()
        };
        let src = "torch.load(p)\n".repeat(2000);
        let report = scan_python(&src, &limits);
        assert_eq!(report.truncated_by, Some("parse-timeout"));
    }

    #[test]
    fn stops_at_node_budget() {
        let limits = Limits {
            max_nodes: 50,
            ..Limits::default()
        };
        let report = scan_python(&"torch.load(p)\n".repeat(100), &limits);
        assert_eq!(report.truncated_by, Some("node-budget"));
    }

    #[test]
    fn stops_at_item_budget() {
        let limits = Limits {
            max_items: 3,
            ..Limits::default()
        };
        let report = scan_python(&"torch.load(p)\n".repeat(10), &limits);
        assert_eq!(report.calls.len(), 3);
        assert_eq!(report.truncated_by, Some("item-budget"));
    }

    #[test]
    fn stops_at_binding_budget() {
        let limits = Limits {
            max_bindings: 2,
            ..Limits::default()
        };
        let report = scan_python("a = 1\nb = 2\nc = 3\nd = 4\ntorch.load(p)\n", &limits);
        assert_eq!(report.truncated_by, Some("binding-budget"));
    }

    #[test]
    fn files_without_a_watched_name_are_not_parsed_but_aliases_are_still_found() {
        // Not parsed at all: nothing it could report.
        let report = scan_python("def f(x):\n    return x + 1\n", &Limits::default());
        assert!(report.calls.is_empty() && !report.syntax_errors);
        // The import that renames a watched callee keeps the file in.
        let report = scan_python(
            "from pickle import loads as l\nl(b'')\n",
            &Limits::default(),
        );
        assert_eq!(report.calls.len(), 1);
    }

    #[test]
    fn survives_deep_nesting() {
        let depth = 20_000;
        let src = format!(
            "x = {}1{}\ntorch.load(p)\n",
            "(".repeat(depth),
            ")".repeat(depth)
        );
        let report = scan(&src);
        assert!(!report.truncated, "{:?}", report.truncated_by);
        assert_eq!(report.calls.len(), 1);
    }

    #[test]
    fn bounds_excerpts() {
        let long = "a".repeat(1000);
        let report = scan(&format!("torch.load('{long}')"));
        let [item] = report.calls.as_slice() else {
            panic!()
        };
        assert!(item.excerpt.chars().count() <= 201);
        assert!(item.excerpt.ends_with('…'));
    }

    #[test]
    fn serializes_kinds_with_tags() {
        let report = scan("AutoModel.from_pretrained('o/m', revision='main')");
        let json = serde_json::to_value(&report).unwrap_or_default();
        let kind = &json["calls"][0]["kind"];
        assert_eq!(kind["type"], "hub-download");
        assert_eq!(kind["repo"]["source"], "literal");
        assert_eq!(kind["revision"]["state"], "branch-or-tag");
    }

    proptest::proptest! {
        #[test]
        fn never_panics_on_arbitrary_text(s in "\\PC{0,400}") {
            let _ = scan_python(&s, &Limits::default());
        }

        #[test]
        fn never_panics_on_python_like_text(
            s in "(import |from |torch|\\.load|\\(|\\)|'o/m'|revision=|REV = |trust_remote_code=|True|,|\n| |f'|\\{|\\}|#|\"\"\"|é)*"
        ) {
            let _ = scan_python(&s, &Limits::default());
        }
    }
}
