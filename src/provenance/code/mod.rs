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

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde::Serialize;
use tree_sitter::{Node, ParseOptions, ParseState, Parser};

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
        }
    }
}

/// What one Python source contains, as far as provenance is concerned.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CodeReport {
    /// Reported calls in source order.
    pub calls: Vec<CodeItem>,
    /// tree-sitter had to recover from syntax errors; the items found are still reported.
    pub syntax_errors: bool,
    /// A limit stopped the scan early; `truncated_by` names it.
    pub truncated: bool,
    /// Sub-code of the limit that stopped the scan: `source-too-large`, `parse-budget`,
    /// `parse-timeout`, `node-budget`, `item-budget` or `binding-budget`.
    pub truncated_by: Option<&'static str>,
}

/// One reported call (or dictionary entry, for `{"trust_remote_code": True}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CodeItem {
    /// What was found.
    pub kind: ItemKind,
    /// 1-based line of the start of the call.
    pub line: usize,
    /// 1-based column of the start of the call, in chars.
    pub column: usize,
    /// The called expression as written (whitespace collapsed, bounded).
    pub callee: String,
    /// The relevant argument text (whitespace collapsed, bounded).
    pub excerpt: String,
}

/// The kinds of reported item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum ItemKind {
    /// A download from a model/dataset hub (Hugging Face, or GitHub for `torch.hub.load`).
    HubDownload {
        /// The repository argument.
        repo: RepoRef,
        /// Whether the download is pinned to a commit.
        revision: RevisionState,
        /// Which API downloads (`from_pretrained`, `hf_hub_download`, `torch.hub.load`, …).
        api: &'static str,
    },
    /// `trust_remote_code` set to something that is or may be true.
    TrustRemoteCode {
        /// How the value was determined.
        value: TrustValue,
    },
    /// A call that deserializes with a loader able to run code.
    UnsafeLoad {
        /// Stable sub-code, e.g. `torch-load-no-weights-only`, `pickle-load`.
        code: &'static str,
        /// Lowercase explanation naming the call.
        reason: String,
    },
}

/// The repository argument of a hub download.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "source", rename_all = "kebab-case")]
pub enum RepoRef {
    /// A string literal.
    Literal {
        /// The repository id.
        value: String,
    },
    /// A module-level constant assigned once.
    Constant {
        /// The constant's name.
        name: String,
        /// Its value.
        value: String,
    },
    /// An f-string: the repository cannot be verified.
    FString {
        /// The f-string as written.
        text: String,
    },
    /// Any other expression (or `**kwargs`): the repository cannot be verified.
    Unverifiable {
        /// The expression as written.
        expr: String,
    },
}

/// How a download's revision is pinned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum RevisionState {
    /// No revision (or `None`): the default branch at download time.
    Missing,
    /// A full 40-hex commit id: pinned.
    Pinned {
        /// The commit id.
        sha: String,
        /// The constant it came from, if any.
        via: Option<String>,
    },
    /// A branch or tag name (`main`, `v1.0`): movable.
    BranchOrTag {
        /// The name.
        value: String,
        /// The constant it came from, if any.
        via: Option<String>,
    },
    /// 7 to 39 hex digits: an abbreviated commit id the hub may not resolve, and that collides.
    ShortSha {
        /// The digits.
        value: String,
        /// The constant it came from, if any.
        via: Option<String>,
    },
    /// A name or expression that is not a module-level constant.
    Unverifiable {
        /// The expression as written.
        expr: String,
    },
}

/// How a `trust_remote_code` value was determined.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "source", rename_all = "kebab-case")]
pub enum TrustValue {
    /// The literal `True`.
    Literal,
    /// A module-level constant assigned `True` once.
    Constant {
        /// The constant's name.
        name: String,
    },
    /// An expression that may be true at run time.
    Unverifiable {
        /// The expression as written.
        expr: String,
    },
}

/// Scans one Python source. Never panics; limits turn into `truncated`.
pub fn scan_python(source: &str, limits: &Limits) -> CodeReport {
    if !mentions_a_watched_call(source) {
        return CodeReport::default();
    }
    scan_python_with(source, limits, &mut Bindings::default())
}

/// Substrings at least one of which appears in the source of every call this module reports
/// (the callee name itself, or the import that aliases it: `from torch import load as l` still
/// contains `load`). Parsing is the scan's most expensive step (about 1-4 MB/s), and most Python
/// files in a model repository contain none of these, so a file without any is not parsed.
const WATCHED_SUBSTRINGS: &[&str] = &[
    "load",
    "pretrained",
    "from_config",
    "download",
    "pipeline",
    "SentenceTransformer",
    "create_model",
    "trust_remote_code",
    "read_pickle",
    "shelve",
    "Unpickler",
    "hub",
];

fn mentions_a_watched_call(source: &str) -> bool {
    WATCHED_SUBSTRINGS.iter().any(|w| source.contains(w))
}

/// What earlier code bound: import aliases and module-level assignments. A notebook threads one
/// value through its cells so that `import torch as t` in cell 1 resolves `t.load` in cell 5.
#[derive(Debug, Clone, Default)]
pub(super) struct Bindings {
    /// Local name -> fully qualified names it may stand for.
    aliases: BTreeMap<String, Vec<String>>,
    /// Modules imported with `from m import *`.
    wildcards: Vec<String>,
    /// Name -> (assignments seen anywhere, literal value of a module-level assignment).
    assigned: BTreeMap<String, (u32, Option<Const>)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Const {
    Str(String),
    Bool(bool),
}

impl Bindings {
    fn len(&self) -> usize {
        self.aliases
            .len()
            .saturating_add(self.assigned.len())
            .saturating_add(self.wildcards.len())
    }

    /// A name counts as a constant only if it is assigned exactly once anywhere: a second
    /// assignment (in a function with `global`, a loop, a later cell) could change it.
    fn constant(&self, name: &str) -> Option<&Const> {
        match self.assigned.get(name) {
            Some((1, Some(value))) => Some(value),
            _ => None,
        }
    }
}

/// Conventional aliases used when a notebook cell or snippet never imports them.
const CONVENTIONAL_ALIASES: &[(&str, &str)] =
    &[("np", "numpy"), ("pd", "pandas"), ("tf", "tensorflow")];

/// Scans `source` with bindings from earlier code, and leaves this source's bindings in `bindings`.
pub(super) fn scan_python_with(
    source: &str,
    limits: &Limits,
    bindings: &mut Bindings,
) -> CodeReport {
    let mut report = CodeReport::default();
    if source.len() > limits.max_source_bytes {
        report.truncated = true;
        report.truncated_by = Some("source-too-large");
        return report;
    }
    let mut parser = Parser::new();
    if parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .is_err()
    {
        // Only an ABI mismatch between the two crates gets here; treat it as a parse failure.
        report.truncated = true;
        report.truncated_by = Some("parse-budget");
        return report;
    }
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
    let Some(tree) = parsed else {
        report.truncated = true;
        report.truncated_by = Some(if timed_out {
            "parse-timeout"
        } else {
            "parse-budget"
        });
        return report;
    };
    let root = tree.root_node();
    report.syntax_errors = root.has_error();

    let mut scanner = Scanner {
        source,
        limits,
        bindings,
        nodes: 0,
        report,
    };
    if scanner.collect_bindings(root) {
        scanner.collect_items(root);
    }
    scanner.report
}

struct Scanner<'s, 'b> {
    source: &'s str,
    limits: &'b Limits,
    bindings: &'b mut Bindings,
    nodes: usize,
    report: CodeReport,
}

/// Calls the iterative pre-order walk over `root`; `visit` returns false to stop.
fn walk<'t>(root: Node<'t>, mut visit: impl FnMut(Node<'t>) -> bool) {
    let mut cursor = root.walk();
    loop {
        if !visit(cursor.node()) {
            return;
        }
        if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return;
            }
        }
    }
}

/// A positional or keyword argument list, as nodes.
struct Args<'t> {
    node: Option<Node<'t>>,
    positional: Vec<Node<'t>>,
    keywords: Vec<(&'t str, Node<'t>)>,
    splat: Option<Node<'t>>,
}

impl<'t> Args<'t> {
    fn keyword(&self, name: &str) -> Option<Node<'t>> {
        self.keywords
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| *v)
    }

    /// The argument at `index` or named by any of `names`.
    fn arg(&self, index: usize, names: &[&str]) -> Option<Node<'t>> {
        names
            .iter()
            .find_map(|n| self.keyword(n))
            .or_else(|| self.positional.get(index).copied())
    }
}

/// The value of a string-ish expression.
enum StrVal {
    Plain(String),
    Constant { name: String, value: String },
    FString { text: String, prefix: String },
    Other(String),
}

/// Whether a string names a hub repository.
#[derive(Debug, PartialEq, Eq)]
enum RepoShape {
    Hub,
    NotHub,
}

/// `datasets` builders that read local or remote files rather than a hub dataset repository.
const PACKAGED_DATASET_BUILDERS: &[&str] = &[
    "arrow",
    "audiofolder",
    "cache",
    "csv",
    "generator",
    "imagefolder",
    "json",
    "pandas",
    "parquet",
    "spark",
    "sql",
    "text",
    "videofolder",
    "webdataset",
    "xml",
];

/// File extensions that make a name a local file, not a repository id.
const LOCAL_FILE_EXTENSIONS: &[&str] = &[
    ".bin",
    ".ckpt",
    ".gguf",
    ".h5",
    ".json",
    ".msgpack",
    ".npz",
    ".onnx",
    ".pkl",
    ".pt",
    ".pth",
    ".safetensors",
    ".yaml",
    ".yml",
];

/// Loader classes that PyYAML documents as safe.
const YAML_SAFE_LOADERS: &[&str] = &["SafeLoader", "CSafeLoader", "BaseLoader", "CBaseLoader"];

/// Modules whose `load`/`loads`/`Unpickler` unpickle, which runs arbitrary callables.
const PICKLE_MODULES: &[&str] = &["pickle", "cPickle", "_pickle", "dill", "cloudpickle"];

const OPEN_CLIP_FACTORIES: &[&str] = &[
    "open_clip.create_model",
    "open_clip.create_model_and_transforms",
    "open_clip.create_model_from_pretrained",
];

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

    // ---- pass 1: imports and assignments ------------------------------------------------

    /// Returns false when a limit stopped the pass.
    fn collect_bindings(&mut self, root: Node<'s>) -> bool {
        let mut ok = true;
        let mut found: Vec<Node<'s>> = Vec::new();
        walk(root, |node| {
            if !self.count_node() {
                ok = false;
                return false;
            }
            if matches!(
                node.kind(),
                "import_statement"
                    | "import_from_statement"
                    | "assignment"
                    | "augmented_assignment"
            ) {
                found.push(node);
            }
            true
        });
        for node in found {
            if self.bindings.len() >= self.limits.max_bindings {
                self.stop("binding-budget");
                return ok;
            }
            match node.kind() {
                "import_statement" => self.bind_import(node),
                "import_from_statement" => self.bind_from_import(node),
                "assignment" => self.bind_assignment(node),
                _ => {
                    if let Some(left) = node.child_by_field_name("left") {
                        self.note_targets(left, None);
                    }
                }
            }
        }
        ok
    }

    fn add_alias(&mut self, local: &str, target: String) {
        let entry = self.bindings.aliases.entry(local.to_owned()).or_default();
        // A name imported differently in two places may stand for either; keep a few.
        if !entry.contains(&target) && entry.len() < 4 {
            entry.push(target);
        }
    }

    fn bind_import(&mut self, node: Node<'s>) {
        let mut cursor = node.walk();
        let names: Vec<Node<'s>> = node.children_by_field_name("name", &mut cursor).collect();
        for name in names {
            match name.kind() {
                // `import torch.hub` binds `torch`.
                "dotted_name" => {
                    let full = self.text(name);
                    let first = full.split('.').next().unwrap_or_default().trim();
                    self.add_alias(first, first.to_owned());
                }
                "aliased_import" => {
                    let (Some(target), Some(alias)) = (
                        name.child_by_field_name("name"),
                        name.child_by_field_name("alias"),
                    ) else {
                        continue;
                    };
                    let target = compact(self.text(target));
                    self.add_alias(self.text(alias), target);
                }
                _ => {}
            }
        }
    }

    fn bind_from_import(&mut self, node: Node<'s>) {
        let Some(module) = node.child_by_field_name("module_name") else {
            return;
        };
        // Relative imports name the repository's own modules, never a library we track.
        if module.kind() != "dotted_name" {
            return;
        }
        let module = compact(self.text(module));
        let mut cursor = node.walk();
        let wildcard = node
            .named_children(&mut cursor)
            .any(|c| c.kind() == "wildcard_import");
        if wildcard && !self.bindings.wildcards.contains(&module) {
            self.bindings.wildcards.push(module.clone());
        }
        let names: Vec<Node<'s>> = node.children_by_field_name("name", &mut cursor).collect();
        for name in names {
            let (target, local) = match name.kind() {
                "dotted_name" => (name, name),
                "aliased_import" => {
                    let (Some(target), Some(alias)) = (
                        name.child_by_field_name("name"),
                        name.child_by_field_name("alias"),
                    ) else {
                        continue;
                    };
                    (target, alias)
                }
                _ => continue,
            };
            let target = compact(self.text(target));
            let local = compact(self.text(local));
            self.add_alias(&local, format!("{module}.{target}"));
        }
    }

    fn bind_assignment(&mut self, node: Node<'s>) {
        let Some(left) = node.child_by_field_name("left") else {
            return;
        };
        let module_level = node
            .parent()
            .filter(|p| p.kind() == "expression_statement")
            .and_then(|p| p.parent())
            .is_some_and(|g| g.kind() == "module");
        let value = if module_level && left.kind() == "identifier" {
            node.child_by_field_name("right")
                .and_then(|right| self.literal_const(right))
        } else {
            None
        };
        self.note_targets(left, value);
    }

    /// Counts an assignment to each name in `target`; `value` is kept for a lone identifier.
    fn note_targets(&mut self, target: Node<'s>, value: Option<Const>) {
        if target.kind() == "identifier" {
            let entry = self
                .bindings
                .assigned
                .entry(self.text(target).to_owned())
                .or_insert((0, None));
            entry.0 = entry.0.saturating_add(1);
            entry.1 = value;
            return;
        }
        // `a, b = …` and friends: each name is assigned, none to a known literal.
        let mut cursor = target.walk();
        let names: Vec<Node<'s>> = target
            .named_children(&mut cursor)
            .filter(|n| n.kind() == "identifier")
            .collect();
        for name in names {
            let entry = self
                .bindings
                .assigned
                .entry(self.text(name).to_owned())
                .or_insert((0, None));
            entry.0 = entry.0.saturating_add(1);
            entry.1 = None;
        }
    }

    fn literal_const(&self, node: Node<'s>) -> Option<Const> {
        match node.kind() {
            "true" => Some(Const::Bool(true)),
            "false" => Some(Const::Bool(false)),
            "string" | "concatenated_string" => match self.string_literal(node) {
                StrVal::Plain(s) => Some(Const::Str(s)),
                _ => None,
            },
            _ => None,
        }
    }

    /// The value of a string literal node, without following names. An f-string without
    /// interpolations is a plain string; with them, only the text before the first is known.
    fn string_literal(&self, node: Node<'s>) -> StrVal {
        let parts: Vec<Node<'s>> = if node.kind() == "concatenated_string" {
            let mut cursor = node.walk();
            node.named_children(&mut cursor).collect()
        } else {
            vec![node]
        };
        let mut value = String::new();
        let mut interpolated = false;
        for part in parts {
            if part.kind() != "string" {
                return StrVal::Other(self.text(node).to_owned());
            }
            let mut cursor = part.walk();
            for child in part.children(&mut cursor) {
                match child.kind() {
                    // Bytes are never a repository id or revision.
                    "string_start" if self.text(child).to_ascii_lowercase().contains('b') => {
                        return StrVal::Other(self.text(node).to_owned());
                    }
                    "string_content" if !interpolated => value.push_str(self.text(child)),
                    "interpolation" => interpolated = true,
                    _ => {}
                }
            }
        }
        if interpolated {
            StrVal::FString {
                text: self.text(node).to_owned(),
                prefix: value,
            }
        } else {
            StrVal::Plain(value)
        }
    }

    /// The value of an expression used as a string: literals, and names of constants.
    fn string_value(&self, node: Node<'s>) -> StrVal {
        match node.kind() {
            "string" | "concatenated_string" => self.string_literal(node),
            "identifier" => {
                let name = self.text(node);
                match self.bindings.constant(name) {
                    Some(Const::Str(value)) => StrVal::Constant {
                        name: name.to_owned(),
                        value: value.clone(),
                    },
                    _ => StrVal::Other(name.to_owned()),
                }
            }
            _ => StrVal::Other(self.text(node).to_owned()),
        }
    }

    /// `Some(true)`/`Some(false)` for literals and constants, `None` when unknown.
    fn bool_value(&self, node: Node<'s>) -> Option<bool> {
        match node.kind() {
            "true" => Some(true),
            "false" | "none" => Some(false),
            "identifier" => match self.bindings.constant(self.text(node)) {
                Some(Const::Bool(b)) => Some(*b),
                _ => None,
            },
            _ => None,
        }
    }

    // ---- pass 2: calls --------------------------------------------------------------------

    fn collect_items(&mut self, root: Node<'s>) {
        let mut nodes: Vec<Node<'s>> = Vec::new();
        let mut ok = true;
        walk(root, |node| {
            if !self.count_node() {
                ok = false;
                return false;
            }
            if matches!(node.kind(), "call" | "pair") {
                nodes.push(node);
            }
            true
        });
        for node in nodes {
            if self.report.calls.len() >= self.limits.max_items {
                self.stop("item-budget");
                return;
            }
            if node.kind() == "call" {
                self.analyze_call(node);
            } else {
                self.analyze_pair(node);
            }
        }
        self.report.calls.truncate(self.limits.max_items);
    }

    fn push(&mut self, at: Node<'s>, kind: ItemKind, callee: &str, excerpt: &str) {
        let point = at.start_position();
        let line = point.row.saturating_add(1);
        let column = at
            .start_byte()
            .checked_sub(point.column)
            .and_then(|line_start| self.source.get(line_start..at.start_byte()))
            .map_or(point.column, |prefix| prefix.chars().count())
            .saturating_add(1);
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
        let Some(list) = call.child_by_field_name("arguments") else {
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
                    if let (Some(name), Some(value)) = (
                        child.child_by_field_name("name"),
                        child.child_by_field_name("value"),
                    ) {
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

    /// The names a callee may stand for, after import aliases.
    fn resolve(&self, func: Node<'s>) -> Vec<String> {
        let mut segments: Vec<&'s str> = Vec::new();
        let mut node = func;
        loop {
            match node.kind() {
                "identifier" => {
                    segments.push(self.text(node));
                    break;
                }
                "attribute" => {
                    let (Some(object), Some(attr)) = (
                        node.child_by_field_name("object"),
                        node.child_by_field_name("attribute"),
                    ) else {
                        return Vec::new();
                    };
                    if segments.len() >= 32 {
                        return Vec::new();
                    }
                    segments.push(self.text(attr));
                    node = object;
                }
                // `Foo().from_pretrained(…)`: only the last segment is known.
                _ => {
                    segments.push("<expr>");
                    break;
                }
            }
        }
        segments.reverse();
        let Some((first, rest)) = segments.split_first() else {
            return Vec::new();
        };
        let tail: String = rest.iter().map(|s| format!(".{s}")).collect();
        let mut out = Vec::new();
        if let Some(targets) = self.bindings.aliases.get(*first) {
            out.extend(targets.iter().map(|t| format!("{t}{tail}")));
        } else {
            out.push(format!("{first}{tail}"));
            if let Some((_, module)) = CONVENTIONAL_ALIASES.iter().find(|(a, _)| a == first) {
                out.push(format!("{module}{tail}"));
            }
            if rest.is_empty() {
                out.extend(
                    self.bindings
                        .wildcards
                        .iter()
                        .map(|m| format!("{m}.{first}")),
                );
            }
        }
        out
    }

    fn analyze_call(&mut self, call: Node<'s>) {
        let Some(func) = call.child_by_field_name("function") else {
            return;
        };
        let names = self.resolve(func);
        if names.is_empty() {
            return;
        }
        let args = self.args(call);
        let callee = self.text(func);
        let excerpt = args.node.map_or("", |n| self.text(n));

        if let Some(value) = args.keyword("trust_remote_code")
            && let Some(trust) = self.trust_value(value)
        {
            let kw = value.parent().map_or(excerpt, |p| self.text(p));
            self.push(call, ItemKind::TrustRemoteCode { value: trust }, callee, kw);
        }
        if let Some(kind) = self.hub_download(&names, &args) {
            self.push(call, kind, callee, excerpt);
        }
        if let Some((code, reason)) = self.unsafe_load(&names, &args, callee) {
            self.push(call, ItemKind::UnsafeLoad { code, reason }, callee, excerpt);
        }
    }

    /// `{"trust_remote_code": True}` passed as `model_kwargs=` or `**{…}`.
    fn analyze_pair(&mut self, pair: Node<'s>) {
        let (Some(key), Some(value)) = (
            pair.child_by_field_name("key"),
            pair.child_by_field_name("value"),
        ) else {
            return;
        };
        if !matches!(self.string_value(key), StrVal::Plain(k) if k == "trust_remote_code") {
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
                callee = node
                    .child_by_field_name("function")
                    .map_or("", |f| self.text(f));
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

    fn trust_value(&self, value: Node<'s>) -> Option<TrustValue> {
        match self.bool_value(value) {
            Some(false) => None,
            Some(true) if value.kind() == "true" => Some(TrustValue::Literal),
            Some(true) => Some(TrustValue::Constant {
                name: self.text(value).to_owned(),
            }),
            None => Some(TrustValue::Unverifiable {
                expr: self.excerpt(self.text(value)),
            }),
        }
    }

    fn hub_download(&self, names: &[String], args: &Args<'s>) -> Option<ItemKind> {
        let last = |n: &String| n.rsplit('.').next().unwrap_or_default().to_owned();
        let any = |pred: &dyn Fn(&String) -> bool| names.iter().any(pred);
        if any(&|n| last(n) == "from_pretrained") {
            // PEFT adapters take the base model first and the adapter repository second.
            let peft = any(&|n| {
                n.rsplit('.')
                    .nth(1)
                    .is_some_and(|o| o.contains("PeftModel"))
            });
            let repo = if peft {
                args.arg(1, &["model_id"])
            } else {
                args.arg(0, &["pretrained_model_name_or_path", "model_id"])
            };
            return self.hub_item("from_pretrained", repo, args);
        }
        if any(&|n| last(n) == "from_config") {
            // Usually a config object; only a string names a repository.
            let repo = args.arg(0, &["pretrained_model_name_or_path", "config"])?;
            return match self.string_value(repo) {
                StrVal::Plain(_) | StrVal::Constant { .. } => {
                    self.hub_item("from_config", Some(repo), args)
                }
                _ => None,
            };
        }
        if any(&|n| last(n) == "hf_hub_download") {
            return self.hub_item("hf_hub_download", args.arg(0, &["repo_id"]), args);
        }
        if any(&|n| last(n) == "snapshot_download") {
            return self.hub_item("snapshot_download", args.arg(0, &["repo_id"]), args);
        }
        if any(&|n| last(n) == "load_dataset") {
            let repo = args.arg(0, &["path"]);
            if let Some(r) = repo
                && let StrVal::Plain(v) | StrVal::Constant { value: v, .. } = self.string_value(r)
                && PACKAGED_DATASET_BUILDERS.contains(&v.as_str())
            {
                return None;
            }
            return self.hub_item("load_dataset", repo, args);
        }
        if any(&|n| n == "pipeline" || n == "transformers.pipeline") {
            // Without `model=` the pipeline uses transformers' own default, pinned there.
            let repo = args.arg(1, &["model"])?;
            return self.hub_item("pipeline", Some(repo), args);
        }
        if any(&|n| matches!(last(n).as_str(), "SentenceTransformer" | "CrossEncoder")) {
            let repo = args.arg(0, &["model_name_or_path", "model_name"]);
            return self.hub_item("sentence_transformers", repo, args);
        }
        if any(&|n| n == "torch.hub.load") {
            return self.torch_hub(args);
        }
        if any(&|n| n == "timm.create_model") {
            return self.prefixed_hub("timm.create_model", args.arg(0, &["model_name"]), args);
        }
        if any(&|n| OPEN_CLIP_FACTORIES.contains(&n.as_str())) {
            let model = args.arg(0, &["model_name"]);
            if let Some(item) = self.prefixed_hub("open_clip", model, args) {
                return Some(item);
            }
            // A pretrained tag (`laion2b_s34b_b79k`) is fetched from the hub, unpinned.
            let tag = args.arg(1, &["pretrained"])?;
            return self.hub_item("open_clip", Some(tag), args);
        }
        None
    }

    /// A download whose repository is `repo` and whose revision is `revision=`.
    fn hub_item(
        &self,
        api: &'static str,
        repo: Option<Node<'s>>,
        args: &Args<'s>,
    ) -> Option<ItemKind> {
        let repo = match repo {
            Some(node) => self.repo_ref(node)?,
            None => {
                let splat = args.splat?;
                RepoRef::Unverifiable {
                    expr: self.excerpt(self.text(splat)),
                }
            }
        };
        let revision = self.revision(args);
        Some(ItemKind::HubDownload {
            repo,
            revision,
            api,
        })
    }

    /// The repository reference, or `None` when it is a local path.
    fn repo_ref(&self, node: Node<'s>) -> Option<RepoRef> {
        match self.string_value(node) {
            StrVal::Plain(value) => {
                (repo_shape(&value) == RepoShape::Hub).then_some(RepoRef::Literal { value })
            }
            StrVal::Constant { name, value } => {
                (repo_shape(&value) == RepoShape::Hub).then_some(RepoRef::Constant { name, value })
            }
            StrVal::FString { text, prefix } => (!looks_local(&prefix)).then(|| RepoRef::FString {
                text: self.excerpt(&text),
            }),
            StrVal::Other(expr) => Some(RepoRef::Unverifiable {
                expr: self.excerpt(&expr),
            }),
        }
    }

    fn revision(&self, args: &Args<'s>) -> RevisionState {
        let Some(value) = args.keyword("revision") else {
            return match args.splat {
                Some(splat) => RevisionState::Unverifiable {
                    expr: self.excerpt(self.text(splat)),
                },
                None => RevisionState::Missing,
            };
        };
        if value.kind() == "none" {
            return RevisionState::Missing;
        }
        match self.string_value(value) {
            StrVal::Plain(s) => classify_revision(s, None),
            StrVal::Constant { name, value } => classify_revision(value, Some(name)),
            StrVal::FString { text, .. } => RevisionState::Unverifiable {
                expr: self.excerpt(&text),
            },
            StrVal::Other(expr) => RevisionState::Unverifiable {
                expr: self.excerpt(&expr),
            },
        }
    }

    /// `torch.hub.load("owner/repo:ref", "entry")`: GitHub, with the ref after the colon.
    fn torch_hub(&self, args: &Args<'s>) -> Option<ItemKind> {
        if self.is_local_source(args) {
            return None;
        }
        let repo = args.arg(0, &["repo_or_dir"])?;
        let (repo, revision) = match self.string_value(repo) {
            StrVal::Plain(v) => split_ref(v, None, ':'),
            StrVal::Constant { name, value } => split_ref(value, Some(name), ':'),
            StrVal::FString { text, .. } => (
                RepoRef::FString {
                    text: self.excerpt(&text),
                },
                RevisionState::Unverifiable {
                    expr: self.excerpt(&text),
                },
            ),
            StrVal::Other(expr) => (
                RepoRef::Unverifiable {
                    expr: self.excerpt(&expr),
                },
                RevisionState::Unverifiable {
                    expr: self.excerpt(&expr),
                },
            ),
        };
        if let RepoRef::Literal { value } | RepoRef::Constant { value, .. } = &repo
            && repo_shape(value) == RepoShape::NotHub
        {
            return None;
        }
        Some(ItemKind::HubDownload {
            repo,
            revision,
            api: "torch.hub.load",
        })
    }

    fn is_local_source(&self, args: &Args<'s>) -> bool {
        args.keyword("source")
            .is_some_and(|s| matches!(self.string_value(s), StrVal::Plain(v) if v == "local"))
    }

    /// timm / open_clip model names `hf-hub:org/name[@revision]`.
    fn prefixed_hub(
        &self,
        api: &'static str,
        model: Option<Node<'s>>,
        args: &Args<'s>,
    ) -> Option<ItemKind> {
        let model = model?;
        let strip = |v: &str| {
            v.strip_prefix("hf-hub:")
                .or_else(|| v.strip_prefix("hf_hub:"))
                .map(str::to_owned)
        };
        let (repo, mut revision) = match self.string_value(model) {
            StrVal::Plain(v) => split_ref(strip(&v)?, None, '@'),
            StrVal::Constant { name, value } => split_ref(strip(&value)?, Some(name), '@'),
            StrVal::FString { text, prefix } => {
                strip(&prefix)?;
                (
                    RepoRef::FString {
                        text: self.excerpt(&text),
                    },
                    RevisionState::Unverifiable {
                        expr: self.excerpt(&text),
                    },
                )
            }
            StrVal::Other(_) => return None,
        };
        if matches!(revision, RevisionState::Missing) {
            revision = self.revision(args);
        }
        Some(ItemKind::HubDownload {
            repo,
            revision,
            api,
        })
    }

    fn unsafe_load(
        &self,
        names: &[String],
        args: &Args<'s>,
        callee: &str,
    ) -> Option<(&'static str, String)> {
        let is = |want: &str| names.iter().any(|n| n == want);
        let callee = self.excerpt(callee);
        if is("torch.load") {
            let Some(value) = args.keyword("weights_only") else {
                if args.splat.is_some() {
                    return Some((
                        "torch-load-weights-only-unverifiable",
                        format!("{callee} passes **kwargs; weights_only=True cannot be verified"),
                    ));
                }
                return Some((
                    "torch-load-no-weights-only",
                    format!(
                        "{callee} without weights_only=True unpickles arbitrary objects on \
                         torch < 2.6 (the default became True in 2.6)"
                    ),
                ));
            };
            return match self.bool_value(value) {
                Some(true) => None,
                Some(false) => Some((
                    "torch-load-weights-only-false",
                    format!(
                        "{callee} with weights_only=False unpickles arbitrary objects on every \
                         torch version"
                    ),
                )),
                None => Some((
                    "torch-load-weights-only-unverifiable",
                    format!(
                        "{callee} with weights_only={} cannot be verified",
                        self.excerpt(self.text(value))
                    ),
                )),
            };
        }
        if names.iter().any(|n| {
            n.rsplit_once('.').is_some_and(|(m, f)| {
                PICKLE_MODULES.contains(&m) && matches!(f, "load" | "loads" | "Unpickler")
            })
        }) {
            return Some((
                "pickle-load",
                format!("{callee} unpickles data, which can run arbitrary code"),
            ));
        }
        if names
            .iter()
            .any(|n| n == "joblib.load" || n.ends_with(".joblib.load"))
        {
            return Some((
                "joblib-load",
                format!("{callee} unpickles data, which can run arbitrary code"),
            ));
        }
        if is("numpy.load") {
            let value = args.keyword("allow_pickle")?;
            return match self.bool_value(value) {
                Some(false) => None,
                Some(true) => Some((
                    "numpy-allow-pickle",
                    format!("{callee} with allow_pickle=True unpickles object arrays"),
                )),
                None => Some((
                    "numpy-allow-pickle",
                    format!(
                        "{callee} with allow_pickle={} may unpickle object arrays",
                        self.excerpt(self.text(value))
                    ),
                )),
            };
        }
        if is("pandas.read_pickle") {
            return Some((
                "pandas-read-pickle",
                format!("{callee} unpickles data, which can run arbitrary code"),
            ));
        }
        if names.iter().any(|n| {
            n.ends_with("keras.models.load_model") || n.ends_with("keras.saving.load_model")
        }) {
            let value = args.keyword("safe_mode")?;
            return match self.bool_value(value) {
                Some(true) => None,
                _ => Some((
                    "keras-unsafe-mode",
                    format!(
                        "{callee} with safe_mode={} deserializes lambda layers (arbitrary code)",
                        self.excerpt(self.text(value))
                    ),
                )),
            };
        }
        if is("yaml.unsafe_load") || is("yaml.unsafe_load_all") {
            return Some((
                "yaml-unsafe-loader",
                format!("{callee} constructs arbitrary python objects"),
            ));
        }
        if is("yaml.load") || is("yaml.load_all") {
            let Some(loader) = args.arg(1, &["Loader"]) else {
                return Some((
                    "yaml-load-no-safe-loader",
                    format!(
                        "{callee} without Loader= used the unsafe loader before pyyaml 5.1; \
                         pass Loader=yaml.SafeLoader or use yaml.safe_load"
                    ),
                ));
            };
            let text = self.text(loader);
            let last = text.rsplit('.').next().unwrap_or_default().trim();
            if YAML_SAFE_LOADERS.contains(&last) {
                return None;
            }
            return Some((
                "yaml-unsafe-loader",
                format!(
                    "{callee} with Loader={} may construct arbitrary python objects",
                    self.excerpt(text)
                ),
            ));
        }
        if is("marshal.load") || is("marshal.loads") {
            return Some((
                "marshal-load",
                format!("{callee} reads code objects from data"),
            ));
        }
        if is("shelve.open") {
            return Some((
                "shelve-open",
                format!("{callee} unpickles every value it reads"),
            ));
        }
        // torch.hub.load imports hubconf.py from the fetched repository: remote code by design.
        if is("torch.hub.load") && !self.is_local_source(args) {
            return Some((
                "torch-hub-load",
                format!("{callee} imports and runs hubconf.py from the downloaded repository"),
            ));
        }
        None
    }
}

/// Removes the whitespace tree-sitter allows inside dotted names.
fn compact(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

/// Splits `repo<sep>ref` into a repository and a classified revision.
fn split_ref(value: String, via: Option<String>, sep: char) -> (RepoRef, RevisionState) {
    let (repo, rev) = match value.split_once(sep) {
        Some((repo, rev)) => (repo.to_owned(), Some(rev.to_owned())),
        None => (value, None),
    };
    let revision = match rev {
        Some(rev) => classify_revision(rev, via.clone()),
        None => RevisionState::Missing,
    };
    let repo = match via {
        Some(name) => RepoRef::Constant { name, value: repo },
        None => RepoRef::Literal { value: repo },
    };
    (repo, revision)
}

/// Full 40-hex commit id, 7–39 hex digits, or anything else (a branch or tag).
fn classify_revision(value: String, via: Option<String>) -> RevisionState {
    let hex = !value.is_empty() && value.chars().all(|c| c.is_ascii_hexdigit());
    match value.len() {
        40 if hex => RevisionState::Pinned { sha: value, via },
        7..=39 if hex => RevisionState::ShortSha { value, via },
        _ => RevisionState::BranchOrTag { value, via },
    }
}

/// Prefixes that make a string a filesystem path or URL rather than a repository id.
fn looks_local(value: &str) -> bool {
    let v = value.trim();
    v.starts_with("./")
        || v.starts_with("../")
        || v.starts_with('/')
        || v.starts_with('~')
        || v.starts_with('\\')
        || v.starts_with(".\\")
        || v == "."
        || v == ".."
        || v.contains("://")
        || v.starts_with("file:")
        || v.chars().nth(1) == Some(':')
            && v.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
}

/// Hub ids are `name` or `org/name` with `[A-Za-z0-9._-]`; paths, URLs and file names are not.
fn repo_shape(value: &str) -> RepoShape {
    if value.is_empty() || looks_local(value) || value.contains('\\') {
        return RepoShape::NotHub;
    }
    let segments: Vec<&str> = value.split('/').collect();
    if segments.len() > 2 {
        return RepoShape::NotHub;
    }
    let valid = segments.iter().all(|s| {
        !s.is_empty()
            && s.len() <= 96
            && !s.contains("..")
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
    });
    if !valid {
        return RepoShape::NotHub;
    }
    let lower = value.to_ascii_lowercase();
    if LOCAL_FILE_EXTENSIONS.iter().any(|ext| lower.ends_with(ext)) {
        return RepoShape::NotHub;
    }
    RepoShape::Hub
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHA: &str = "0123456789abcdef0123456789abcdef01234567";

    fn scan(src: &str) -> CodeReport {
        scan_python(src, &Limits::default())
    }

    fn downloads(src: &str) -> Vec<(RepoRef, RevisionState, &'static str)> {
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

    fn one_download(src: &str) -> (RepoRef, RevisionState, &'static str) {
        let mut all = downloads(src);
        assert_eq!(all.len(), 1, "{src}: {all:?}");
        all.remove(0)
    }

    fn unsafe_codes(src: &str) -> Vec<&'static str> {
        scan(src)
            .calls
            .into_iter()
            .filter_map(|c| match c.kind {
                ItemKind::UnsafeLoad { code, .. } => Some(code),
                _ => None,
            })
            .collect()
    }

    fn lit(v: &str) -> RepoRef {
        RepoRef::Literal {
            value: v.to_owned(),
        }
    }

    #[test]
    fn reports_every_download_api() {
        let cases: &[(&str, &str, &str)] = &[
            (
                "m = AutoModel.from_pretrained('org/model')",
                "org/model",
                "from_pretrained",
            ),
            (
                "t = AutoTokenizer.from_pretrained('bert-base-uncased')",
                "bert-base-uncased",
                "from_pretrained",
            ),
            (
                "p = DiffusionPipeline.from_pretrained(pretrained_model_name_or_path='a/b')",
                "a/b",
                "from_pretrained",
            ),
            (
                "s = Sched.from_config('org/sched')",
                "org/sched",
                "from_config",
            ),
            (
                "from huggingface_hub import hf_hub_download\nf = hf_hub_download(repo_id='o/r', filename='x.bin')",
                "o/r",
                "hf_hub_download",
            ),
            (
                "import huggingface_hub as h\nh.snapshot_download('o/r')",
                "o/r",
                "snapshot_download",
            ),
            ("d = load_dataset('squad')", "squad", "load_dataset"),
            ("d = load_dataset(path='o/ds')", "o/ds", "load_dataset"),
            (
                "from transformers import pipeline\np = pipeline(model='o/m')",
                "o/m",
                "pipeline",
            ),
            (
                "p = pipeline('text-classification', 'o/m')",
                "o/m",
                "pipeline",
            ),
            (
                "m = SentenceTransformer('sentence-transformers/all-MiniLM-L6-v2')",
                "sentence-transformers/all-MiniLM-L6-v2",
                "sentence_transformers",
            ),
            (
                "m = PeftModel.from_pretrained(base, 'o/adapter')",
                "o/adapter",
                "from_pretrained",
            ),
        ];
        for (src, repo, api) in cases {
            let (r, rev, a) = one_download(src);
            assert_eq!(r, lit(repo), "{src}");
            assert_eq!(rev, RevisionState::Missing, "{src}");
            assert_eq!(a, *api, "{src}");
        }
    }

    #[test]
    fn reports_torch_hub_with_ref_as_revision() {
        let src = format!("import torch\nm = torch.hub.load('pytorch/vision:{SHA}', 'resnet50')");
        let (repo, rev, api) = one_download(&src);
        assert_eq!(repo, lit("pytorch/vision"));
        assert!(matches!(rev, RevisionState::Pinned { .. }));
        assert_eq!(api, "torch.hub.load");
        assert_eq!(unsafe_codes(&src), vec!["torch-hub-load"]);
        let (_, rev, _) = one_download("torch.hub.load('pytorch/vision:v0.10.0', 'resnet18')");
        assert!(matches!(rev, RevisionState::BranchOrTag { value, .. } if value == "v0.10.0"));
        let (_, rev, _) = one_download("torch.hub.load('pytorch/vision', 'resnet18')");
        assert_eq!(rev, RevisionState::Missing);
        assert!(downloads("torch.hub.load('./repo', 'm', source='local')").is_empty());
        assert!(unsafe_codes("torch.hub.load('./repo', 'm', source='local')").is_empty());
    }

    #[test]
    fn reports_timm_and_open_clip_hub_names() {
        let (repo, rev, api) =
            one_download("import timm\nm = timm.create_model('hf-hub:org/vit', pretrained=True)");
        assert_eq!(
            (repo, rev, api),
            (lit("org/vit"), RevisionState::Missing, "timm.create_model")
        );
        let src = format!(
            "from timm import create_model\ncreate_model('hf_hub:org/vit@{SHA}', pretrained=True)"
        );
        assert!(matches!(one_download(&src).1, RevisionState::Pinned { .. }));
        assert!(
            downloads("import timm\ntimm.create_model('resnet50', pretrained=True)").is_empty()
        );
        let (repo, _, api) = one_download(
            "import open_clip\nm, _, p = open_clip.create_model_and_transforms('hf-hub:laion/CLIP-ViT')",
        );
        assert_eq!((repo, api), (lit("laion/CLIP-ViT"), "open_clip"));
        let (repo, _, _) = one_download(
            "import open_clip\nopen_clip.create_model('ViT-B-32', pretrained='laion2b_s34b_b79k')",
        );
        assert_eq!(repo, lit("laion2b_s34b_b79k"));
        assert!(
            downloads(
                "import open_clip\nopen_clip.create_model('ViT-B-32', pretrained='/ckpt/x.pt')"
            )
            .is_empty()
        );
    }

    #[test]
    fn classifies_revisions() {
        let rev = |arg: &str| {
            one_download(&format!("AutoModel.from_pretrained('o/m', revision={arg})")).1
        };
        assert_eq!(
            rev(&format!("'{SHA}'")),
            RevisionState::Pinned {
                sha: SHA.to_owned(),
                via: None
            }
        );
        assert!(
            matches!(rev("'main'"), RevisionState::BranchOrTag { value, .. } if value == "main")
        );
        assert!(matches!(rev("'v1.0'"), RevisionState::BranchOrTag { .. }));
        assert!(
            matches!(rev("'abc1234'"), RevisionState::ShortSha { value, .. } if value == "abc1234")
        );
        assert!(matches!(rev("'abc'"), RevisionState::BranchOrTag { .. }));
        assert_eq!(rev("None"), RevisionState::Missing);
        assert!(
            matches!(rev("args.revision"), RevisionState::Unverifiable { expr } if expr == "args.revision")
        );
        assert!(matches!(rev("f'{x}'"), RevisionState::Unverifiable { .. }));
    }

    #[test]
    fn follows_module_level_revision_constant() {
        let src = format!("REV = '{SHA}'\nm = AutoModel.from_pretrained('o/m', revision=REV)\n");
        assert!(
            matches!(one_download(&src).1, RevisionState::Pinned { via: Some(n), .. } if n == "REV")
        );
        let src = "REV = 'main'\nm = AutoModel.from_pretrained('o/m', revision=REV)\n";
        assert!(matches!(
            one_download(src).1,
            RevisionState::BranchOrTag { via: Some(_), .. }
        ));
        // Used before the assignment in the text: still a module constant at call time.
        let src = format!(
            "def f():\n    return AutoModel.from_pretrained('o/m', revision=REV)\nREV = '{SHA}'\n"
        );
        assert!(matches!(one_download(&src).1, RevisionState::Pinned { .. }));
    }

    #[test]
    fn reassigned_or_local_revision_is_unverifiable() {
        let src =
            format!("REV = '{SHA}'\nREV = 'main'\nAutoModel.from_pretrained('o/m', revision=REV)");
        assert!(matches!(
            one_download(&src).1,
            RevisionState::Unverifiable { .. }
        ));
        let src = format!(
            "def f():\n    rev = '{SHA}'\n    AutoModel.from_pretrained('o/m', revision=rev)"
        );
        assert!(matches!(
            one_download(&src).1,
            RevisionState::Unverifiable { .. }
        ));
        let src = format!(
            "REV = '{SHA}'\ndef g():\n    global REV\n    REV = 'x'\nAutoModel.from_pretrained('o/m', revision=REV)"
        );
        assert!(matches!(
            one_download(&src).1,
            RevisionState::Unverifiable { .. }
        ));
    }

    #[test]
    fn resolves_repo_arguments() {
        assert_eq!(
            one_download("MODEL = 'o/m'\nAutoModel.from_pretrained(MODEL)").0,
            RepoRef::Constant {
                name: "MODEL".into(),
                value: "o/m".into()
            }
        );
        assert!(matches!(
            one_download("AutoModel.from_pretrained(f'{org}/m')").0,
            RepoRef::FString { .. }
        ));
        assert!(matches!(
            one_download("AutoModel.from_pretrained(args.model)").0,
            RepoRef::Unverifiable { expr } if expr == "args.model"
        ));
        assert!(matches!(
            one_download("AutoModel.from_pretrained(**cfg)").0,
            RepoRef::Unverifiable { .. }
        ));
        assert_eq!(
            one_download("AutoModel.from_pretrained('o/' 'm')").0,
            lit("o/m")
        );
        // A config object is not a download.
        assert!(downloads("AutoModel.from_config(config)").is_empty());
    }

    #[test]
    fn ignores_local_paths() {
        for path in [
            "./out",
            "../models/m",
            "/abs/path",
            "~/m",
            "C:\\\\models",
            "out/checkpoints/final",
            "model.safetensors",
            "https://example.com/m",
            ".",
        ] {
            let src = format!("AutoModel.from_pretrained('{path}')");
            assert!(downloads(&src).is_empty(), "{path}");
        }
        assert!(downloads("AutoModel.from_pretrained(f'./runs/{name}')").is_empty());
        assert!(downloads("LOCAL = './x'\nAutoModel.from_pretrained(LOCAL)").is_empty());
        assert!(downloads("load_dataset('csv', data_files='a.csv')").is_empty());
        assert!(downloads("torch.hub.load('/tmp/repo', 'm')").is_empty());
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
    fn reports_trust_remote_code() {
        let trust = |src: &str| -> Vec<TrustValue> {
            scan(src)
                .calls
                .into_iter()
                .filter_map(|c| match c.kind {
                    ItemKind::TrustRemoteCode { value } => Some(value),
                    _ => None,
                })
                .collect()
        };
        assert_eq!(
            trust("AutoModel.from_pretrained(p, trust_remote_code=True)"),
            vec![TrustValue::Literal]
        );
        assert_eq!(
            trust("TRUST = True\nAutoConfig.from_pretrained(p, trust_remote_code=TRUST)"),
            vec![TrustValue::Constant {
                name: "TRUST".into()
            }]
        );
        assert!(trust("AutoModel.from_pretrained(p, trust_remote_code=False)").is_empty());
        assert!(trust("NO = False\nf(trust_remote_code=NO)").is_empty());
        assert!(matches!(
            trust("f(trust_remote_code=args.trust)").as_slice(),
            [TrustValue::Unverifiable { .. }]
        ));
        assert_eq!(
            trust("pipeline('x', model='o/m', model_kwargs={'trust_remote_code': True})"),
            vec![TrustValue::Literal]
        );
        let report = scan("f(**{'trust_remote_code': True})");
        assert_eq!(report.calls.first().map(|c| c.callee.as_str()), Some("f"));
    }

    #[test]
    fn flags_torch_load_by_weights_only() {
        assert_eq!(
            unsafe_codes("import torch\ntorch.load(p)"),
            vec!["torch-load-no-weights-only"]
        );
        assert_eq!(
            unsafe_codes("torch.load(p, weights_only=False)"),
            vec!["torch-load-weights-only-false"]
        );
        assert!(unsafe_codes("torch.load(p, map_location='cpu', weights_only=True)").is_empty());
        assert!(unsafe_codes("SAFE = True\ntorch.load(p, weights_only=SAFE)").is_empty());
        assert_eq!(
            unsafe_codes("torch.load(p, weights_only=flag)"),
            vec!["torch-load-weights-only-unverifiable"]
        );
        assert_eq!(
            unsafe_codes("torch.load(p, **kw)"),
            vec!["torch-load-weights-only-unverifiable"]
        );
    }

    #[test]
    fn flags_each_unsafe_loader() {
        let cases: &[(&str, &str)] = &[
            ("import pickle\npickle.load(f)", "pickle-load"),
            ("import pickle\npickle.loads(b)", "pickle-load"),
            ("import cPickle\ncPickle.load(f)", "pickle-load"),
            ("import _pickle\n_pickle.Unpickler(f).load()", "pickle-load"),
            ("import dill\ndill.loads(b)", "pickle-load"),
            ("import cloudpickle\ncloudpickle.load(f)", "pickle-load"),
            ("import joblib\njoblib.load('m.joblib')", "joblib-load"),
            (
                "from sklearn.externals import joblib\njoblib.load(p)",
                "joblib-load",
            ),
            (
                "import numpy as np\nnp.load(p, allow_pickle=True)",
                "numpy-allow-pickle",
            ),
            ("numpy.load(p, allow_pickle=flag)", "numpy-allow-pickle"),
            (
                "import pandas as pd\npd.read_pickle(p)",
                "pandas-read-pickle",
            ),
            (
                "from tensorflow import keras\nkeras.models.load_model(p, safe_mode=False)",
                "keras-unsafe-mode",
            ),
            (
                "import tf_keras\ntf.keras.models.load_model(p, safe_mode=False)",
                "keras-unsafe-mode",
            ),
            ("import yaml\nyaml.load(s)", "yaml-load-no-safe-loader"),
            (
                "import yaml\nyaml.load(s, Loader=yaml.Loader)",
                "yaml-unsafe-loader",
            ),
            ("import yaml\nyaml.unsafe_load(s)", "yaml-unsafe-loader"),
            ("import marshal\nmarshal.loads(b)", "marshal-load"),
            ("import shelve\nshelve.open('db')", "shelve-open"),
        ];
        for (src, code) in cases {
            assert_eq!(unsafe_codes(src), vec![*code], "{src}");
        }
        for safe in [
            "np.load(p)",
            "np.load(p, allow_pickle=False)",
            "yaml.load(s, Loader=yaml.SafeLoader)",
            "yaml.load(s, yaml.CSafeLoader)",
            "yaml.safe_load(s)",
            "keras.models.load_model(p)",
            "json.load(f)",
            "load(f)",
        ] {
            assert!(unsafe_codes(safe).is_empty(), "{safe}");
        }
    }

    #[test]
    fn resolves_import_aliases() {
        assert_eq!(
            unsafe_codes("import torch as t\nt.load(p)"),
            vec!["torch-load-no-weights-only"]
        );
        assert_eq!(
            unsafe_codes("from torch import load\nload(p)"),
            vec!["torch-load-no-weights-only"]
        );
        assert_eq!(
            unsafe_codes("from pickle import loads as l\nl(b)"),
            vec!["pickle-load"]
        );
        assert_eq!(
            unsafe_codes("import numpy as n\nn.load(p, allow_pickle=True)"),
            vec!["numpy-allow-pickle"]
        );
        assert_eq!(
            unsafe_codes("from torch import *\nload(p)"),
            vec!["torch-load-no-weights-only"]
        );
        // A user module imported under the conventional name shadows the convention.
        assert!(unsafe_codes("import mylib as np\nnp.load(p, allow_pickle=True)").is_empty());
        assert_eq!(
            one_download("from transformers import AutoModel as AM\nAM.from_pretrained('o/m')").2,
            "from_pretrained"
        );
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
