//! What shipped Python *does*: the capability sites of a source (`SRC006`).
//!
//! A model loader that trusts remote code (`trust_remote_code=True`, `torch.hub.load`,
//! TorchServe, `mlflow.pyfunc.load_model`) imports the repository's Python. This module finds,
//! in the same tree-sitter parse the call scanner uses, every call and assignment through which
//! that code can run a process, evaluate dynamic or decoded code, reach a host that is not the
//! Hub, read credentials, persist or tamper, install packages or load native code. Each site is
//! decided from the syntax tree with the names resolved (import aliases, `from x import y as z`,
//! `getattr(module, "name")`, `__import__`/`importlib.import_module` of names built from
//! literals), located (line, column), and timed: at import (module level, class bodies,
//! decorators, default arguments) or when a function runs, with the loader entry points
//! (`__init__`, `forward`, `from_pretrained`, a TorchServe `initialize`/`handle`, MLflow
//! `_load_pyfunc`, ...) that reach that function within the file.
//!
//! Which callables are dangerous is data (`crate::knowledge::capabilities`); how dangerous one
//! site is depends on its arguments and is decided by the capability's judge, one small module
//! each (`process`, `dynamic`, `network`, `credentials`, `persistence`, `install`, `native`),
//! whose doc comment is its user documentation. Literal blobs (`exec(zlib.decompress(
//! base64.b64decode("…")))`) are decoded with `super::decode` and the decoded text is analysed
//! again, bounded by the limits table; its sites carry the outer location and the decode chain.
//!
//! Nothing is evaluated: strings are read from literals and joined, formatted or decoded the way
//! Python would, never run. A name in a comment, string or docstring is never a site.

use crate::code::python::field::{Field, Fields};
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet};

use tree_sitter::Node;

use super::budget::{Budget, Mode, Spent};
use super::decode::{self, Codec};
use super::parser::Limits;
use super::scanner::{Bindings, Scanner};
use super::tree::{Kind, walk, walk_with_parents};
use crate::knowledge::capabilities::{self as caps, Capability, Entry, Role};
use crate::model::finding::Severity;

mod analyzer;
mod credentials;
mod dynamic;
mod evaluate;
mod install;
mod native;
mod network;
mod persistence;
mod process;
mod resolve;

use analyzer::{Analyzer, CallSite, Deferral, IdMap, MAPPED_DEPTH};
pub use analyzer::{Blob, Confidence, Decoded, Site, When};

/// The capability sites of one source.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Behaviour {
    /// Sites in source order (decoded sites at their outer call's position).
    pub sites: Vec<Site>,
    /// tree-sitter had to recover from syntax errors.
    pub syntax_errors: bool,
    /// The limit that stopped the analysis early, if any.
    pub truncated_by: Option<&'static str>,
    /// A limit of the limits table that stopped decoding a blob (`blob_decoded_bytes`,
    /// `blob_decode_steps`, `blob_nesting_depth`): what it hid was not analysed.
    pub limit_hit: Option<&'static str>,
}

impl Behaviour {
    /// The capabilities found, each once, in [`Capability::ALL`] order.
    pub fn capabilities(&self) -> Vec<Capability> {
        let set: BTreeSet<Capability> = self.sites.iter().map(|s| s.capability).collect();
        set.into_iter().collect()
    }
}

/// Loader entry points: functions a model loader calls by name (transformers, torch.hub,
/// TorchServe handlers, MLflow pyfunc, pickle protocol methods).
pub const ENTRY_POINTS: &[&str] = &[
    "__init__",
    "forward",
    "from_pretrained",
    "from_config",
    "load",
    "initialize",
    "handle",
    "preprocess",
    "inference",
    "postprocess",
    "_load_pyfunc",
    "load_context",
    "predict",
    "__call__",
    "generate",
    "__setstate__",
    "__reduce__",
    "post_init",
    "_init_weights",
];

/// Most functions whose calls are remembered for the reachability of entry points.
const MAX_FUNCTIONS: usize = 20_000;

/// Analyses one Python source: parses it whole and finds its capability sites.
pub fn analyze(source: &str, limits: &Limits) -> Behaviour {
    let budget = Budget::new(limits.eval);
    analyze_nested(source, limits, 0, &budget)
}

fn analyze_nested(source: &str, limits: &Limits, depth: usize, budget: &Budget) -> Behaviour {
    let (clamped, blanked) = super::fstrings::clamp(source);
    let source = &*clamped;
    let tree = match super::parser::parse(source, limits) {
        Ok(tree) => tree,
        Err(by) => {
            return Behaviour {
                truncated_by: Some(by),
                ..Behaviour::default()
            };
        }
    };
    let mut bindings = Bindings::default();
    let mut scanner = Scanner::new(source, limits, &mut bindings);
    scanner.collect_bindings(tree.root_node());
    let mut behaviour = analyze_tree_with(&mut scanner, tree.root_node(), depth, budget);
    behaviour.syntax_errors = blanked || tree.root_node().has_error();
    behaviour
}

/// Analyses a parsed source whose bindings `scanner` has collected (the call scanner's pass
/// 1, so one parse and one binding pass serve both).
pub(super) fn analyze_tree<'s>(
    scanner: &mut Scanner<'s, '_>,
    root: Node<'s>,
    depth: usize,
) -> Behaviour {
    let budget = Budget::new(scanner.limits.eval);
    analyze_tree_with(scanner, root, depth, &budget)
}

fn analyze_tree_with<'s>(
    scanner: &mut Scanner<'s, '_>,
    root: Node<'s>,
    depth: usize,
    budget: &Budget,
) -> Behaviour {
    let mut a = Analyzer {
        sc: scanner,
        depth,
        calls: Vec::new(),
        assignments: Vec::new(),
        environ: Vec::new(),
        functions: BTreeMap::new(),
        callees: BTreeMap::new(),
        module_calls: BTreeSet::new(),
        once: BTreeMap::new(),
        loops: BTreeMap::new(),
        counts: BTreeMap::new(),
        secrets: BTreeMap::new(),
        sites: Vec::new(),
        deferrals: Vec::new(),
        truncated_by: None,
        limit_hit: None,
        reach: std::cell::OnceCell::new(),
        parents: IdMap::default(),
        budget,
        budget_spent: Cell::new(false),
        values: RefCell::new(IdMap::default()),
        resolved: RefCell::new(IdMap::default()),
        def_scopes: RefCell::new(IdMap::default()),
        run_scopes: RefCell::new(IdMap::default()),
    };
    a.syntax_errors_from(root);
    a.collect(root);
    a.judge_all();
    a.finish()
}

impl<'s> Analyzer<'s, '_, '_> {
    fn syntax_errors_from(&mut self, root: Node<'s>) {
        if self.sc.report.truncated_by.is_some() {
            self.truncated_by = self.sc.report.truncated_by;
        }
        let _ = root;
    }

    pub fn text(&self, node: Node<'_>) -> &'s str {
        self.sc.text(node)
    }

    pub fn excerpt(&self, text: &str) -> String {
        self.sc.excerpt(text)
    }

    /// One walk: calls, assignments, `os.environ` references, functions and their callees.
    fn collect(&mut self, root: Node<'s>) {
        let mut nodes = 0usize;
        let max = self.sc.limits.max_nodes;
        let mut stopped = false;
        let mut calls = Vec::new();
        let mut assignments = Vec::new();
        let mut attrs = Vec::new();
        let mut defs = Vec::new();
        let mut parents = IdMap::default();
        walk_with_parents(root, |node, ancestors| {
            nodes = nodes.saturating_add(1);
            if nodes > max {
                stopped = true;
                return false;
            }
            if ancestors.len() >= MAPPED_DEPTH
                && node.is_named()
                && let Some(parent) = ancestors.last()
            {
                parents.insert(node.id(), *parent);
            }
            match Kind::of(node) {
                Kind::Call => calls.push(node),
                Kind::Assignment | Kind::AugmentedAssignment => assignments.push(node),
                _ => match node.kind() {
                    "attribute" | "identifier" => attrs.push(node),
                    "function_definition" => defs.push(node),
                    "for_statement" | "for_in_clause" | "dictionary_splat" => attrs.push(node),
                    _ => {}
                },
            }
            true
        });
        self.parents = parents;
        if stopped {
            self.truncated_by = Some("node-budget");
        }
        for node in &assignments {
            self.note_assignment(*node);
        }
        for node in &attrs {
            if node.kind() == "for_statement"
                && let (Some(left), Some(right)) =
                    (node.field(Field::Left), node.field(Field::Right))
                && left.kind() == "identifier"
                && matches!(right.kind(), "tuple" | "list")
            {
                self.loops.insert(self.sc.text(left), right);
            }
        }
        for def in defs.iter().take(MAX_FUNCTIONS) {
            if let Some(name) = def.field(Field::Name) {
                self.functions
                    .entry(self.sc.text(name))
                    .or_default()
                    .push(*def);
            }
        }
        for call in &calls {
            let Some(func) = call.field(Field::Function) else {
                continue;
            };
            let last = self.last_segment(func);
            let Some(last) = last else { continue };
            match self.enclosing_def(*call) {
                Some(def) => {
                    if let Some(name) = def.field(Field::Name) {
                        let name = self.sc.text(name);
                        if self.callees.len() < MAX_FUNCTIONS || self.callees.contains_key(name) {
                            self.callees.entry(name).or_default().insert(last);
                        }
                    }
                }
                None => {
                    self.module_calls.insert(last);
                }
            }
        }
        self.environ = attrs
            .into_iter()
            .filter(|n| match n.kind() {
                "attribute" | "identifier" => {
                    // The outermost node of a dotted chain only (`os.environ`, not `os`); the
                    // text test keeps the resolution off every other name of a large file.
                    self.sc.text(*n).ends_with("environ") && self.resolves_to(*n, "os.environ")
                }
                _ => false,
            })
            .collect();
        let max_items = self.sc.limits.max_items;
        if calls.len() > max_items {
            self.truncated_by = Some("item-budget");
            calls.truncate(max_items);
        }
        self.calls = calls;
        self.assignments = assignments;
    }

    /// Remembers names assigned once, and names that hold secrets.
    fn note_assignment(&mut self, node: Node<'s>) {
        let (Some(left), Some(right)) = (node.field(Field::Left), node.field(Field::Right)) else {
            return;
        };
        if matches!(left.kind(), "pattern_list" | "tuple_pattern")
            && matches!(right.kind(), "expression_list" | "tuple")
        {
            // `a, b = "o", "s"`: each name gets its own value.
            let mut lc = left.walk();
            let mut rc = right.walk();
            let names: Vec<Node<'s>> = left.named_children(&mut lc).collect();
            let values: Vec<Node<'s>> = right.named_children(&mut rc).collect();
            if names.len() == values.len() {
                for (n, v) in names.into_iter().zip(values) {
                    if n.kind() == "identifier" {
                        self.note_value(self.sc.text(n), v, node.kind() == "assignment");
                    }
                }
            }
            return;
        }
        if left.kind() != "identifier" {
            return;
        }
        let name = self.sc.text(left);
        self.note_value(name, right, node.kind() == "assignment");
    }

    fn note_value(&mut self, name: &'s str, right: Node<'s>, plain: bool) {
        let n = self.counts.entry(name).or_insert(0);
        *n = n.saturating_add(1);
        if *n == 1 && plain {
            self.once.insert(name, right);
        } else {
            self.once.remove(name);
        }
    }

    /// The value of a name assigned exactly once in the file (and never imported).
    pub fn value_of(&self, name: &str) -> Option<Node<'s>> {
        if self.sc.bindings.alias(name).is_some() {
            return None;
        }
        self.once.get(name).copied()
    }

    fn last_segment(&self, func: Node<'s>) -> Option<&'s str> {
        match func.kind() {
            "identifier" => Some(self.sc.text(func)),
            "attribute" => func.field(Field::Attribute).map(|a| self.sc.text(a)),
            _ => None,
        }
    }

    /// The parent of `node`, from the walk's map (tree-sitter's own `parent` descends from the
    /// root: its cost grows with the depth of the node).
    pub fn parent(&self, node: Node<'s>) -> Option<Node<'s>> {
        match self.parents.get(&node.id()) {
            Some(parent) => Some(*parent),
            // Past the node budget, or the root.
            None => node.parent(),
        }
    }

    /// The innermost `def` whose body holds `node`.
    fn enclosing_def(&self, node: Node<'s>) -> Option<Node<'s>> {
        self.innermost_scope(node, &self.def_scopes, &["function_definition"])
    }

    /// The innermost `def` or `lambda` whose body holds `node`, remembered for every node
    /// walked up through: the calls of a ten-thousand-term chain share their ancestors, and
    /// walking up from each of them was quadratic (issue 37).
    fn innermost_scope(
        &self,
        node: Node<'s>,
        memo: &RefCell<IdMap<Option<Node<'s>>>>,
        kinds: &[&str],
    ) -> Option<Node<'s>> {
        let mut path = Vec::new();
        let mut child = node;
        let found = loop {
            if let Some(known) = memo.borrow().get(&child.id()) {
                break *known;
            }
            path.push(child);
            let Some(n) = self.parent(child) else {
                break None;
            };
            if kinds.contains(&n.kind()) && n.field(Field::Body).map(|b| b.id()) == Some(child.id())
            {
                break Some(n);
            }
            child = n;
        };
        let mut memo = memo.borrow_mut();
        for n in path {
            memo.insert(n.id(), found);
        }
        found
    }

    /// When the code at `node` runs.
    pub fn when(&self, node: Node<'s>) -> When {
        match self.innermost_scope(node, &self.run_scopes, &["function_definition", "lambda"]) {
            Some(n) if n.kind() == "lambda" => When::Call {
                function: "<lambda>".to_owned(),
                reached_from: Vec::new(),
            },
            Some(n) => {
                let name = n.field(Field::Name).map_or("", |x| self.sc.text(x));
                let class = self.enclosing_class(n);
                let function = match class {
                    Some(c) => format!("{c}.{name}"),
                    None => name.to_owned(),
                };
                When::Call {
                    function: self.excerpt(&function),
                    reached_from: self.reached_from(name),
                }
            }
            None => When::Import,
        }
    }

    fn enclosing_class(&self, def: Node<'s>) -> Option<&'s str> {
        let mut up = self.parent(def);
        for _ in 0..8 {
            let n = up?;
            match n.kind() {
                "class_definition" => {
                    return n.field(Field::Name).map(|x| self.sc.text(x));
                }
                "function_definition" => return None,
                _ => up = self.parent(n),
            }
        }
        None
    }

    /// The entry points (and `import`) from which calls within the file reach `function`.
    fn reached_from(&self, function: &str) -> Vec<String> {
        let reach = self.reach.get_or_init(|| self.reachability());
        reach
            .iter()
            // The function itself is not "reached from" its own name.
            .filter(|(label, set)| *label != function && set.contains(function))
            .map(|(label, _)| (*label).to_owned())
            .collect()
    }

    /// For each entry point of the file (and `import`, the module-level calls), the functions
    /// its calls reach within the file: one bounded walk each, computed once per file.
    fn reachability(&self) -> Vec<(&'s str, BTreeSet<&'s str>)> {
        let roots = ENTRY_POINTS
            .iter()
            .filter_map(|e| {
                self.functions
                    .get_key_value(*e)
                    .map(|(k, _)| (*k, vec![*k]))
            })
            .chain(std::iter::once((
                "import",
                self.module_calls.iter().copied().collect::<Vec<_>>(),
            )));
        let mut out = Vec::new();
        for (label, starts) in roots {
            let mut seen: BTreeSet<&'s str> = BTreeSet::new();
            let mut stack: Vec<&'s str> = starts;
            let mut steps = 0usize;
            while let Some(f) = stack.pop() {
                steps += 1;
                if steps > 200_000 {
                    break;
                }
                if !seen.insert(f) {
                    continue;
                }
                if let Some(next) = self.callees.get(f) {
                    stack.extend(next.iter().copied());
                }
            }
            out.push((label, seen));
        }
        out.sort();
        out
    }

    // ---- resolution -------------------------------------------------------------------------

    /// How sure a resolved `name` is: imported (or a builtin nobody shadows) is high.
    fn confidence_of(&self, func: Node<'s>, name: &str, entry: &Entry) -> Option<Confidence> {
        let first = leftmost(self, func);
        let imported = first.is_some_and(|f| self.sc.bindings.alias(f).is_some());
        let dynamic = func.kind() == "call"
            || func.kind() == "subscript"
            || first
                .is_some_and(|f| self.value_of(f).is_some() && self.sc.bindings.alias(f).is_none());
        let bare = !name.contains('.') || name.starts_with("builtins.");
        match entry.matching {
            caps::Match::Method => Some(Confidence::Low),
            _ if dynamic => Some(Confidence::Medium),
            _ if imported => Some(Confidence::High),
            _ if bare => {
                // A builtin shadowed by a def or an assignment in the file is not the builtin.
                let f = first.unwrap_or_default();
                if self.functions.contains_key(f) || self.sc.bindings.assignments(f) > 0 {
                    None
                } else {
                    Some(Confidence::High)
                }
            }
            // `subprocess.run` without an import in this source (a notebook cell imported it,
            // or a local object happens to share the module's name).
            caps::Match::Module => None,
            caps::Match::Exact => Some(Confidence::Medium),
        }
    }

    // ---- strings ----------------------------------------------------------------------------

    /// The value of a string expression built from literals: concatenation, `join`, f-strings,
    /// `%` and `.format`, `chr`, slicing `[::-1]`, names assigned once. `None` when any part is
    /// not known.
    pub fn string(&self, node: Node<'s>) -> Option<String> {
        let bytes = self.blob(node).ok()??;
        String::from_utf8(bytes.bytes).ok()
    }

    /// All string literal fragments under `node` joined with `/` (bounded): the shape of a path
    /// built with `os.path.join`, `/` on `Path`, f-strings or concatenation.
    pub fn path_fragments(&self, node: Node<'s>) -> String {
        let mut out = String::new();
        let mut seen = 0usize;
        let mut stack = vec![(node, 0usize)];
        while let Some((n, depth)) = stack.pop() {
            seen += 1;
            if seen > 4096 || out.len() > 4096 {
                break;
            }
            match n.kind() {
                "string" | "concatenated_string" => {
                    let s = self.string(n).unwrap_or_else(|| self.literal_parts(n));
                    if !s.is_empty() {
                        if !out.is_empty() {
                            out.push('/');
                        }
                        out.push_str(&s);
                    }
                    // Interpolations of an f-string still count.
                    let mut c = n.walk();
                    for ch in n.named_children(&mut c) {
                        if ch.kind() == "interpolation" {
                            stack.push((ch, depth + 1));
                        }
                    }
                }
                "identifier" if depth < 6 => {
                    let name = self.sc.text(n);
                    if let Some(v) = self
                        .value_of(name)
                        .or_else(|| self.loops.get(name).copied())
                        && v.id() != node.id()
                    {
                        stack.push((v, depth + 1));
                    }
                }
                _ => {
                    let mut c = n.walk();
                    let children: Vec<Node<'s>> = n.named_children(&mut c).collect();
                    for ch in children.into_iter().rev() {
                        stack.push((ch, depth));
                    }
                }
            }
        }
        out
    }

    /// The literal text of a string whose interpolations are not known (`f"https://host/{x}"`
    /// gives `https://host/`), escapes left as written.
    fn literal_parts(&self, node: Node<'s>) -> String {
        let mut out = String::new();
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            if out.len() > 4096 {
                break;
            }
            match n.kind() {
                "string_content" => out.push_str(self.sc.text(n)),
                "string" | "concatenated_string" => {
                    let mut c = n.walk();
                    let children: Vec<Node<'s>> = n.children(&mut c).collect();
                    stack.extend(children.into_iter().rev());
                }
                _ => {}
            }
        }
        out
    }

    /// Whether the expression (following names assigned once, a few levels) uses `__file__`
    /// of this file (`os.path.dirname(__file__)`): a path inside the repository.
    pub fn uses_own_file(&self, node: Node<'s>) -> bool {
        self.any_node(node, |a, n| {
            n.kind() == "identifier" && a.sc.text(n) == "__file__"
        })
    }

    /// Whether any node of the expression (names assigned once followed) satisfies `test`.
    pub fn any_node(&self, node: Node<'s>, test: impl Fn(&Self, Node<'s>) -> bool) -> bool {
        let mut stack = vec![(node, 0usize)];
        let mut seen = 0usize;
        while let Some((n, depth)) = stack.pop() {
            seen += 1;
            if seen > 4096 {
                return false;
            }
            if test(self, n) {
                return true;
            }
            if n.kind() == "identifier"
                && depth < 6
                && let Some(v) = self.value_of(self.sc.text(n))
                && v.id() != n.id()
            {
                stack.push((v, depth + 1));
            }
            let mut c = n.walk();
            stack.extend(n.named_children(&mut c).map(|ch| (ch, depth)));
        }
        false
    }

    /// The content of an in-memory file object (`io.BytesIO(x)`, `io.StringIO(x)`): `x`.
    pub fn file_object_content(&self, node: Node<'s>) -> Option<Node<'s>> {
        let node = match node.kind() {
            "identifier" => self.value_of(self.sc.text(node)).unwrap_or(node),
            _ => node,
        };
        if node.kind() != "call" {
            return None;
        }
        let func = node.field(Field::Function)?;
        let wraps = self.resolve(func).iter().any(|n| {
            matches!(
                n.as_str(),
                "io.BytesIO" | "io.StringIO" | "BytesIO" | "StringIO"
            )
        });
        if !wraps {
            return None;
        }
        self.sc.args(node).positional.first().copied()
    }

    // ---- the judges -------------------------------------------------------------------------

    fn judge_all(&mut self) {
        let calls = std::mem::take(&mut self.calls);
        for call in calls {
            self.judge_call(call);
        }
        let assignments = std::mem::take(&mut self.assignments);
        for node in assignments {
            persistence::judge_assignment(self, node);
        }
        let environ = std::mem::take(&mut self.environ);
        for node in environ {
            credentials::judge_environ(self, node);
        }
        self.judge_reduce_returns();
        // Network sends are judged after the secrets are known.
        let deferrals = std::mem::take(&mut self.deferrals);
        // Each deferral walks the file's calls once; a few hundred are plenty for a model file.
        for d in deferrals.into_iter().take(1_000) {
            persistence::judge_deferral(self, d.node, &d.name, &d.targets);
        }
    }

    /// Judges one call; a site whose arguments the budget gave up on says so.
    fn judge_call(&mut self, node: Node<'s>) {
        let mark = self.budget.mark();
        let before = self.sites.len();
        self.judge_call_within(node);
        if let Some(why) = self.budget.spent_since(mark) {
            for site in self.sites.iter_mut().skip(before) {
                site.detail = format!("{} (evaluation stopped: {})", site.detail, why.phrase());
            }
        }
    }

    fn judge_call_within(&mut self, node: Node<'s>) {
        let Some(func) = node.field(Field::Function) else {
            return;
        };
        let mut names = self.resolve(func);
        // `operator.methodcaller("system", cmd)(os)`, `operator.attrgetter("system")(os)(cmd)`:
        // the method named by a literal, on the module the outer call passes.
        if func.kind() == "call"
            && let Some(inner) = func.field(Field::Function)
            && self
                .resolve(inner)
                .iter()
                .any(|n| matches!(n.as_str(), "operator.methodcaller" | "operator.attrgetter"))
            && let Some(method) = self
                .sc
                .args(func)
                .positional
                .first()
                .and_then(|m| self.string(*m))
            && let Some(target) = self.sc.args(node).positional.first().copied()
        {
            names = self
                .resolve(target)
                .into_iter()
                .map(|m| format!("{m}.{method}"))
                .collect();
        }
        for name in names {
            let Some(entry) = caps::lookup(&name) else {
                continue;
            };
            let Some(confidence) = self.confidence_of(func, &name, entry) else {
                continue;
            };
            let site = CallSite {
                node,
                entry,
                name: caps::normalize(&name),
                args: self.sc.args(node),
                confidence,
            };
            match entry.role {
                Role::Command => {
                    process::judge(self, &site);
                    install::judge_command(self, &site);
                }
                Role::Call => match entry.capability {
                    Capability::ProcessExecution => process::judge(self, &site),
                    Capability::CredentialAccess => credentials::judge_call(self, &site),
                    Capability::Persistence => persistence::judge_call(self, &site),
                    Capability::PackageInstall => install::judge_call(self, &site),
                    Capability::NativeLoad => native::judge(self, &site),
                    // The pickle categories (issue 38) have no `Role::Call` entry in the
                    // table; a call of one would be judged by its capability's own role.
                    Capability::DynamicCode
                    | Capability::Network
                    | Capability::FileSystem
                    | Capability::InterpreterState
                    | Capability::DenialOfService
                    | Capability::Tampering => {}
                },
                Role::Evaluate => dynamic::judge_evaluate(self, &site),
                Role::Deserialize => dynamic::judge_deserialize(self, &site),
                Role::Connect => network::judge(self, &site),
                Role::ReadEnv => credentials::judge_env_read(self, &site),
                Role::ReadPath => {
                    credentials::judge_path(self, &site);
                    persistence::judge_write(self, &site);
                }
                Role::WritePath => persistence::judge_write(self, &site),
                Role::SetAttr => persistence::judge_setattr(self, &site),
                Role::Defer => {
                    let targets = persistence::deferred_targets(&site);
                    self.deferrals.push(Deferral {
                        node,
                        name: site.name.clone(),
                        targets,
                    });
                }
                Role::Import => {}
            }
            // One table entry decides a call.
            if !matches!(entry.role, Role::Defer) {
                self.judge_passed_callables(node);
            }
            return;
        }
        self.judge_passed_callables(node);
        // Calls the table does not name but whose method reads a path, connects or hooks imports.
        credentials::judge_unlisted(self, node, func);
        network::judge_unlisted(self, node, func);
        persistence::judge_unlisted(self, node, func);
    }

    /// Whether the file defines a function called `name`.
    pub fn has_function(&self, name: &str) -> bool {
        self.functions.contains_key(name)
    }

    /// The worst site a deferred callable runs, with a phrase for it: a lambda's body, a
    /// function of this file (and what it calls within the file), or a table entry itself
    /// (`atexit.register(os.system, "…")`).
    fn deferred_sites(&self, target: Node<'s>) -> Option<(Severity, String)> {
        let worst = |sites: Vec<&Site>| -> Option<(Severity, String)> {
            let s = sites.into_iter().max_by_key(|s| s.severity)?;
            Some((s.severity, format!("`{}` ({})", s.call, s.detail)))
        };
        match target.kind() {
            "lambda" => {
                let (start, _) = self.sc.position(target);
                let end = target.end_position().row.saturating_add(1);
                worst(
                    self.sites
                        .iter()
                        .filter(|s| s.line >= start && s.line <= end)
                        .collect(),
                )
            }
            "identifier" | "attribute" => {
                for name in self.resolve(target) {
                    if let Some(e) = caps::lookup(&name)
                        && matches!(e.role, Role::Command | Role::Evaluate)
                    {
                        return Some((Severity::Critical, format!("`{}`", caps::normalize(&name))));
                    }
                }
                let fname = self.last_segment(target)?;
                if !self.functions.contains_key(fname) {
                    return None;
                }
                let mut reach: BTreeSet<&str> = BTreeSet::new();
                let mut stack = vec![fname];
                while let Some(f) = stack.pop() {
                    if reach.len() > 10_000 || !reach.insert(f) {
                        continue;
                    }
                    if let Some(next) = self.callees.get(f) {
                        stack.extend(next.iter().copied());
                    }
                }
                let found = worst(
                    self.sites
                        .iter()
                        .filter(|s| match &s.when {
                            When::Call { function, .. } => {
                                reach.contains(function.rsplit('.').next().unwrap_or_default())
                            }
                            When::Import => false,
                        })
                        .collect(),
                )?;
                Some((found.0, format!("`{fname}`, which runs {}", found.1)))
            }
            _ => None,
        }
    }

    /// A process or evaluation entry handed to another call as a value (`map(os.system, cmds)`,
    /// `functools.partial(subprocess.run, cmd)`, `pool.submit(os.system, "…")`): it runs when
    /// that call calls it.
    fn judge_passed_callables(&mut self, call: Node<'s>) {
        let args = self.sc.args(call);
        let values: Vec<Node<'s>> = args
            .positional
            .iter()
            .copied()
            .chain(args.keywords.iter().map(|(_, v)| *v))
            .filter(|v| matches!(v.kind(), "identifier" | "attribute"))
            .collect();
        for value in values {
            for name in self.resolve(value) {
                let Some(entry) = caps::lookup(&name) else {
                    continue;
                };
                if !matches!(entry.role, Role::Command | Role::Evaluate) {
                    continue;
                }
                let Some(confidence) = self.confidence_of(value, &name, entry) else {
                    continue;
                };
                let callee = call
                    .field(Field::Function)
                    .map(|f| self.excerpt(self.text(f)))
                    .unwrap_or_default();
                let norm = caps::normalize(&name);
                self.push(
                    value,
                    entry.capability,
                    Severity::Critical,
                    confidence,
                    &norm,
                    format!("is passed to `{callee}`, which calls it"),
                    entry.cwe,
                );
                break;
            }
        }
    }

    /// A pickle gadget written in source: `__reduce__`/`__reduce_ex__` returning a process or
    /// evaluation entry as the callable of its tuple (`return (os.system, ("id",))`). Pickling
    /// the object records that call and unpickling it makes it, wherever the bytes go: a round
    /// trip (`pickle.loads(pickle.dumps(obj))`), a file, a socket.
    fn judge_reduce_returns(&mut self) {
        let defs: Vec<Node<'s>> = ["__reduce__", "__reduce_ex__"]
            .iter()
            .filter_map(|n| self.functions.get(n))
            .flatten()
            .copied()
            .collect();
        for def in defs {
            let Some(body) = def.field(Field::Body) else {
                continue;
            };
            let mut returns = Vec::new();
            walk(body, |node| {
                if node.kind() == "return_statement" {
                    returns.push(node);
                }
                true
            });
            for ret in returns {
                // A nested function's returns are its own.
                if self.enclosing_def(ret).map(|d| d.id()) != Some(def.id()) {
                    continue;
                }
                let Some(callable) = reduce_callable(ret) else {
                    continue;
                };
                for name in self.resolve(callable) {
                    let Some(entry) = caps::lookup(&name) else {
                        continue;
                    };
                    if !matches!(entry.role, Role::Command | Role::Evaluate) {
                        continue;
                    }
                    let Some(confidence) = self.confidence_of(callable, &name, entry) else {
                        continue;
                    };
                    let norm = caps::normalize(&name);
                    self.push(
                        callable,
                        entry.capability,
                        Severity::Critical,
                        confidence,
                        &norm,
                        "is the callable `__reduce__` returns: unpickling the object calls it"
                            .to_owned(),
                        entry.cwe,
                    );
                    break;
                }
            }
        }
    }

    /// Records a site at `node`.
    #[allow(clippy::too_many_arguments)]
    pub fn push(
        &mut self,
        node: Node<'s>,
        capability: Capability,
        severity: Severity,
        confidence: Confidence,
        call: &str,
        detail: String,
        cwe: u32,
    ) -> usize {
        let (line, column) = self.sc.position(node);
        let when = self.when(node);
        self.sites.push(Site {
            capability,
            severity,
            confidence,
            line,
            column,
            call: self.excerpt(call),
            detail,
            when,
            cwe,
            decoded: None,
            library: None,
        });
        self.sites.len() - 1
    }

    /// Analyses decoded (or literal) Python source found at `node` again, one level deeper;
    /// its sites move to `node`'s position and carry the chain. Returns how many were added.
    /// The payload's analysis spends the file's budget, one level of depth deeper.
    pub fn analyze_payload(&mut self, node: Node<'s>, text: &str, chain: &[Codec]) -> usize {
        let limits = self.sc.limits.blob;
        if self.depth >= limits.max_nesting {
            self.limit_hit.get_or_insert("blob_nesting_depth");
            return 0;
        }
        if !self.budget.charge(text.len()) {
            self.budget_spent.set(true);
            return 0;
        }
        let inner = {
            let Ok(_guard) = self.budget.enter(node.id(), Mode::Payload) else {
                return 0;
            };
            analyze_nested(text, self.sc.limits, self.depth + 1, self.budget)
        };
        let (line, column) = self.sc.position(node);
        let when = self.when(node);
        let outer: Vec<String> = chain.iter().map(|c| c.name().to_owned()).collect();
        let mut added = 0;
        for mut site in inner.sites {
            let mut full = outer.clone();
            if let Some(d) = &site.decoded {
                full.extend(d.chain.iter().cloned());
            }
            let excerpt = match site.decoded.take() {
                Some(d) => d.excerpt,
                None => self.payload_excerpt(text.as_bytes()),
            };
            site.decoded = Some(Decoded {
                chain: full,
                excerpt,
            });
            site.detail = format!("{} (in a decoded payload, line {})", site.detail, site.line);
            site.line = line;
            site.column = column;
            site.when = when.clone();
            // Code hidden in a blob is never a setting.
            if !chain.is_empty() && site.severity < Severity::High {
                site.severity = Severity::High;
            }
            self.sites.push(site);
            added += 1;
        }
        if let Some(by) = inner.truncated_by {
            self.truncated_by.get_or_insert(by);
        }
        if let Some(hit) = inner.limit_hit {
            self.limit_hit.get_or_insert(hit);
        }
        added
    }

    /// One decoding step of a blob, within the file's byte budget: its output may not exceed
    /// what the file has left (a bomb is refused before it is decompressed past it), and is
    /// charged to the file.
    fn step(
        &self,
        blob: Blob,
        codec: Codec,
        limits: &decode::Limits,
    ) -> Result<Blob, decode::DecodeError> {
        let left = self.budget.bytes_left();
        let by_budget = left < limits.max_decoded_bytes;
        let capped = decode::Limits {
            max_decoded_bytes: limits.max_decoded_bytes.min(left),
            ..*limits
        };
        let step = blob.chain.len().saturating_add(1);
        let spent = || {
            self.budget_spent.set(true);
            decode::DecodeError {
                step,
                codec,
                kind: decode::ErrorKind::BudgetSpent,
            }
        };
        match blob.step(codec, &capped) {
            Ok(out) if self.budget.charge(out.bytes.len()) => Ok(out),
            Ok(_) => Err(spent()),
            Err(e) if by_budget && matches!(e.kind, decode::ErrorKind::TooLarge { .. }) => {
                self.budget.refuse(Spent::Bytes);
                Err(spent())
            }
            Err(e) => Err(e),
        }
    }

    /// A bounded excerpt of a payload: its text when it is UTF-8, `\xNN` escapes otherwise.
    pub fn payload_excerpt(&self, bytes: &[u8]) -> String {
        match std::str::from_utf8(bytes) {
            Ok(text) => self.excerpt(text),
            Err(_) => {
                let shown: String = bytes
                    .iter()
                    .take(self.sc.limits.max_excerpt_chars / 4)
                    .map(|b| {
                        if b.is_ascii_graphic() {
                            (*b as char).to_string()
                        } else {
                            format!("\\x{b:02x}")
                        }
                    })
                    .collect();
                self.excerpt(&shown)
            }
        }
    }

    fn finish(mut self) -> Behaviour {
        if self.budget_spent.get() {
            self.truncated_by.get_or_insert("blob-budget");
        }
        // A value the budget gave up on hid whatever it computes: SCAN004 names the limit
        // (the wall clock is not a policy limit; it is reported like the parse timeout).
        match self.budget.first_limit() {
            Some(Spent::Time) => {
                self.truncated_by.get_or_insert("eval-timeout");
            }
            Some(why) => {
                if let Some(limit) = why.limit() {
                    self.limit_hit.get_or_insert(limit);
                }
            }
            None => {}
        }
        self.sites.sort_by(|a, b| {
            (a.line, a.column, a.capability, &a.call).cmp(&(
                b.line,
                b.column,
                b.capability,
                &b.call,
            ))
        });
        self.sites.dedup();
        Behaviour {
            sites: self.sites,
            syntax_errors: false,
            truncated_by: self.truncated_by,
            limit_hit: self.limit_hit,
        }
    }
}

/// The first identifier of a dotted callee (`os` of `os.path.join`).
/// The callable of the tuple a `return` statement returns (`os.system` in
/// `return (os.system, ("id",))` or `return os.system, ("id",)`), when it is a name.
fn reduce_callable(ret: Node<'_>) -> Option<Node<'_>> {
    fn first_named(node: Node<'_>) -> Option<Node<'_>> {
        let mut cursor = node.walk();
        node.named_children(&mut cursor)
            .find(|c| c.kind() != "comment")
    }
    let mut value = first_named(ret)?;
    // Parentheses, at most a few levels (`return ((os.system, args))`).
    for _ in 0..8 {
        if value.kind() != "parenthesized_expression" {
            break;
        }
        value = first_named(value)?;
    }
    if !matches!(value.kind(), "tuple" | "expression_list") {
        return None;
    }
    let callable = first_named(value)?;
    matches!(callable.kind(), "identifier" | "attribute").then_some(callable)
}

fn leftmost<'s>(a: &Analyzer<'s, '_, '_>, mut node: Node<'s>) -> Option<&'s str> {
    for _ in 0..64 {
        match node.kind() {
            "identifier" => return Some(a.sc.text(node)),
            "attribute" => node = node.field(Field::Object)?,
            _ => return None,
        }
    }
    None
}

#[cfg(test)]
mod tests;
