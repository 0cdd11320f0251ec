//! Calls that deserialize with a code-executing loader: `torch.load` without `weights_only`,
//! `pickle`/`dill`/`joblib` loads, `np.load(allow_pickle=True)`, `yaml.load` with an unsafe loader.

use super::field::{Field, Fields};

use tree_sitter::Node;

use super::calls::Callee::{self, EndsWith, Name, Product};
use super::calls::{Args, Watched, dispatch};
use super::scanner::{FileFacts, RoundTrips, Scanner};

/// Loader classes that PyYAML documents as safe.
const YAML_SAFE_LOADERS: &[&str] = &["SafeLoader", "CSafeLoader", "BaseLoader", "CBaseLoader"];

/// Hydra's entry points that import (and mostly call) a dotted name taken from a config.
const HYDRA_INSTANTIATORS: &[Callee] = &[
    Name("hydra.utils.instantiate"),
    Name("hydra.utils.call"),
    Name("hydra.utils.get_method"),
    Name("hydra.utils.get_class"),
    Name("hydra.utils.get_object"),
];

/// Modules whose `load`/`loads`/`Unpickler` unpickle, which runs arbitrary callables.
const PICKLE_MODULES: &[&str] = &["pickle", "cPickle", "_pickle", "dill", "cloudpickle"];

/// The code-executing loaders, each handled by its own arm of [`Scanner::unsafe_load`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Loader {
    Torch,
    Pickle,
    Joblib,
    Numpy,
    Pandas,
    KerasLoadModel,
    KerasUnsafeDeserialization,
    TorchJit,
    NativeLibrary,
    YamlFullLoad,
    Hydra,
    YamlUnsafeLoad,
    YamlLoad,
    Marshal,
    Shelve,
    TorchHub,
}

/// The loader calls, in dispatch order (the first row whose callee matches decides). The
/// pre-filter is built from this table: a callee or keyword added here is let through
/// automatically.
pub(super) const LOADS: &[Watched<Loader>] = &[
    row(&[Name("torch.load")], &[], Loader::Torch),
    row(
        &[Product(PICKLE_MODULES, &["load", "loads", "Unpickler"])],
        &[],
        Loader::Pickle,
    ),
    row(
        &[Name("joblib.load"), EndsWith(".joblib.load")],
        &[],
        Loader::Joblib,
    ),
    // Only `allow_pickle=` (true or unknown) makes numpy unpickle.
    row(&[Name("numpy.load")], &["allow_pickle"], Loader::Numpy),
    row(&[Name("pandas.read_pickle")], &[], Loader::Pandas),
    row(
        &[
            EndsWith("keras.models.load_model"),
            EndsWith("keras.saving.load_model"),
        ],
        &["safe_mode", "custom_objects"],
        Loader::KerasLoadModel,
    ),
    row(
        &[EndsWith("keras.config.enable_unsafe_deserialization")],
        &[],
        Loader::KerasUnsafeDeserialization,
    ),
    row(&[Name("torch.jit.load")], &[], Loader::TorchJit),
    // Calls that load a native library by path (its initialisers run on load): the one loader
    // list, `knowledge::names::NATIVE_LOADERS`.
    row(&[Callee::NativeLoader], &[], Loader::NativeLibrary),
    row(
        &[Name("yaml.full_load"), Name("yaml.full_load_all")],
        &[],
        Loader::YamlFullLoad,
    ),
    row(HYDRA_INSTANTIATORS, &[], Loader::Hydra),
    row(
        &[Name("yaml.unsafe_load"), Name("yaml.unsafe_load_all")],
        &[],
        Loader::YamlUnsafeLoad,
    ),
    row(
        &[Name("yaml.load"), Name("yaml.load_all")],
        &[],
        Loader::YamlLoad,
    ),
    row(
        &[Name("marshal.load"), Name("marshal.loads")],
        &[],
        Loader::Marshal,
    ),
    row(&[Name("shelve.open")], &[], Loader::Shelve),
    row(&[Name("torch.hub.load")], &[], Loader::TorchHub),
];

const fn row(
    callees: &'static [Callee],
    keywords: &'static [&'static str],
    kind: Loader,
) -> Watched<Loader> {
    Watched {
        callees,
        keywords,
        kind,
    }
}

impl<'s> Scanner<'s, '_> {
    pub(super) fn unsafe_load(
        &self,
        call: Node<'s>,
        names: &[String],
        args: &Args<'s>,
        callee: &str,
    ) -> Option<(&'static str, String)> {
        let kind = dispatch(LOADS, names, args)?;
        let callee = self.excerpt(callee);
        match kind {
            Loader::Torch => self.torch_load(args, &callee),
            Loader::Pickle => (!self.round_trip(call, names, args)).then(|| {
                (
                    "pickle-load",
                    format!("{callee} unpickles data, which can run arbitrary code"),
                )
            }),
            Loader::Joblib => Some((
                "joblib-load",
                format!("{callee} unpickles data, which can run arbitrary code"),
            )),
            Loader::Numpy => self.numpy_load(args, &callee),
            Loader::Pandas => Some((
                "pandas-read-pickle",
                format!("{callee} unpickles data, which can run arbitrary code"),
            )),
            Loader::KerasLoadModel => self.keras_load_model(args, &callee),
            Loader::KerasUnsafeDeserialization => Some((
                "keras-unsafe-deserialization",
                format!(
                    "{callee} turns off Keras safe mode for every later load in the process: \
                     lambda layers in any loaded file run arbitrary code"
                ),
            )),
            Loader::TorchJit => Some((
                "torch-jit-load",
                format!(
                    "{callee} deserializes a TorchScript archive whose code/ runs when the model \
                     is called; load only archives whose code was reviewed"
                ),
            )),
            Loader::NativeLibrary => Some((
                "native-library-load",
                format!("{callee} loads a native library, which runs its code on load"),
            )),
            Loader::YamlFullLoad => Some((
                "yaml-full-load",
                format!(
                    "{callee} uses FullLoader, which constructs python objects on pyyaml < 5.4 \
                     (CVE-2020-1747, CVE-2020-14343); use yaml.safe_load"
                ),
            )),
            Loader::Hydra => Some((
                "hydra-instantiate",
                format!(
                    "{callee} imports and calls the dotted name in a config's `_target_`; a \
                     config shipped with a model chooses what runs (CVE-2025-23304)"
                ),
            )),
            Loader::YamlUnsafeLoad => Some((
                "yaml-unsafe-loader",
                format!("{callee} constructs arbitrary python objects"),
            )),
            Loader::YamlLoad => self.yaml_load(args, &callee),
            Loader::Marshal => Some((
                "marshal-load",
                format!("{callee} reads code objects from data"),
            )),
            Loader::Shelve => Some((
                "shelve-open",
                format!("{callee} unpickles every value it reads"),
            )),
            // torch.hub.load imports hubconf.py from the fetched repository: remote code by
            // design.
            Loader::TorchHub => (!self.is_local_source(args)).then(|| {
                (
                    "torch-hub-load",
                    format!("{callee} imports and runs hubconf.py from the downloaded repository"),
                )
            }),
        }
    }

    /// `torch.load`: safe only with `weights_only=True` spelled out (a literal the scanner can read).
    fn torch_load(&self, args: &Args<'s>, callee: &str) -> Option<(&'static str, String)> {
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
        match self.bool_value(value) {
            Some(true) => None,
            Some(false) => Some((
                "torch-load-weights-only-false",
                format!(
                    "{callee} with weights_only=False unpickles arbitrary objects on \
                     every torch version"
                ),
            )),
            None => Some((
                "torch-load-weights-only-unverifiable",
                format!(
                    "{callee} with weights_only={} cannot be verified",
                    self.excerpt(self.text(value))
                ),
            )),
        }
    }

    /// `numpy.load`: unsafe when `allow_pickle` is true or not a readable literal.
    fn numpy_load(&self, args: &Args<'s>, callee: &str) -> Option<(&'static str, String)> {
        let value = args.keyword("allow_pickle")?;
        match self.bool_value(value) {
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
        }
    }

    /// `keras.models.load_model`: unsafe with `safe_mode` off or unreadable, or with `custom_objects=`.
    fn keras_load_model(&self, args: &Args<'s>, callee: &str) -> Option<(&'static str, String)> {
        if let Some(value) = args.keyword("safe_mode")
            && self.bool_value(value) != Some(true)
        {
            return Some((
                "keras-unsafe-mode",
                format!(
                    "{callee} with safe_mode={} deserializes lambda layers (arbitrary \
                     code)",
                    self.excerpt(self.text(value))
                ),
            ));
        }
        if args.keyword("custom_objects").is_some() {
            return Some((
                "keras-custom-objects",
                format!(
                    "{callee} with custom_objects= lets the file's config pick which of \
                     these classes to build and with what arguments; review them as \
                     code the model runs"
                ),
            ));
        }
        None
    }

    /// `yaml.load`: unsafe without `Loader=` or with a loader that is not one of the safe ones.
    fn yaml_load(&self, args: &Args<'s>, callee: &str) -> Option<(&'static str, String)> {
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
        Some((
            "yaml-unsafe-loader",
            format!(
                "{callee} with Loader={} may construct arbitrary python objects",
                self.excerpt(text)
            ),
        ))
    }
}

// ---- round trips: `pickle.loads(pickle.dumps(x))` --------------------------------------------

/// Identifiers that let code rebind a variable out of sight of the syntax (`globals()['s'] = …`,
/// a frame's `f_locals`, `exec`, a module's `__dict__`): a round trip through a name is not
/// trusted in a scope that mentions one.
const DYNAMIC_SCOPE_NAMES: &[&str] = &[
    "globals",
    "locals",
    "vars",
    "exec",
    "eval",
    "setattr",
    "delattr",
    "__dict__",
    "f_locals",
    "f_globals",
    "_getframe",
    "currentframe",
    "modules",
    "__builtins__",
];

/// Node kinds that open a scope of their own (a name bound in one is not the enclosing
/// scope's name).
const SCOPE_KINDS: &[&str] = &[
    "function_definition",
    "class_definition",
    "lambda",
    "list_comprehension",
    "set_comprehension",
    "dictionary_comprehension",
    "generator_expression",
];

/// Parents that hold an identifier child only as a value read, whatever field it fills.
const READ_PARENTS: &[&str] = &[
    "argument_list",
    "expression_statement",
    "binary_operator",
    "boolean_operator",
    "comparison_operator",
    "not_operator",
    "unary_operator",
    "conditional_expression",
    "return_statement",
    "assert_statement",
    "subscript",
    "slice",
    "call",
    "pair",
    "interpolation",
    "await",
    "yield",
    "if_statement",
    "elif_clause",
    "while_statement",
    "list_splat",
    "dictionary_splat",
];

/// Parents that are read or bound as their own parent is (`del (a, b)`, `with x as (a, b)`).
const TRANSPARENT_PARENTS: &[&str] = &[
    "parenthesized_expression",
    "expression_list",
    "tuple",
    "list",
    "set",
];

/// How an identifier (or attribute) occurrence uses the name it spells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Use {
    /// Not a reference to a variable: an attribute name after `.`, a keyword name.
    NotAName,
    /// Only reads the value.
    Read,
    /// Anything else: an assignment or `for`/`with`/`except`/walrus target, `del`, `global`,
    /// a parameter, an import, or a context not known to be a read.
    Bind,
}

/// A node on a walk with the field it fills in its parent.
type Step<'t> = (Node<'t>, Option<&'static str>);

/// How the last node of `path` (its ancestors, outermost first) uses its name. Unknown
/// contexts are binds: a read is only claimed where the grammar allows nothing else. Each
/// step up through brackets costs one unit of `charge`; when it refuses, the answer is a bind.
fn use_of(path: &[Step<'_>], charge: impl Fn(usize) -> bool) -> Use {
    let mut i = path.len().saturating_sub(1);
    loop {
        if !charge(1) {
            return Use::Bind;
        }
        let Some((_, field)) = path.get(i) else {
            return Use::Bind;
        };
        let Some((parent, _)) = i.checked_sub(1).and_then(|p| path.get(p)) else {
            return Use::Bind;
        };
        let kind = parent.kind();
        match (kind, *field) {
            (k, _) if TRANSPARENT_PARENTS.contains(&k) => i = i.saturating_sub(1),
            ("attribute", Some("attribute")) | ("keyword_argument", Some("name")) => {
                return Use::NotAName;
            }
            ("attribute", Some("object"))
            | ("assignment" | "augmented_assignment", Some("right"))
            | ("named_expression" | "keyword_argument", Some("value"))
            | ("for_statement" | "for_in_clause", Some("right")) => return Use::Read,
            (k, _) if READ_PARENTS.contains(&k) => return Use::Read,
            _ => return Use::Bind,
        }
    }
}

impl RoundTrips<'_> {
    /// The state for model code, where every round trip stays reported.
    pub fn kept() -> Self {
        Self {
            disabled: true,
            ..Self::default()
        }
    }
}

impl<'s> Scanner<'s, '_> {
    /// Whether this pickle-family call is `loads` of bytes that a pickle-family `dumps` in the
    /// same code produced: nothing outside the process chooses what it unpickles. The data
    /// argument (first positional or `data=`) must be the `dumps` call itself, or a name that
    /// its scope binds exactly once, by a plain `name = <dumps call>` before this call. Every
    /// doubt (a budget, a dynamic scope, a name bound twice) answers no: the finding stays.
    fn round_trip(&self, call: Node<'s>, names: &[String], args: &Args<'s>) -> bool {
        let loads = Product(PICKLE_MODULES, &["loads"]);
        if self.round_trips.disabled || !names.iter().any(|n| loads.matches(n)) {
            return false;
        }
        let Some(data) = args.arg(0, &["data"]).and_then(|d| self.unparenthesized(d)) else {
            return false;
        };
        if !matches!(data.kind(), "call" | "identifier") {
            return false;
        }
        if self.selection.is_some() {
            // A selection holds neither every binding of a name nor its function: the scan
            // is redone on the whole file, which decides.
            self.round_trips.whole_needed.set(true);
            return false;
        }
        if data.kind() == "call" {
            self.is_pickle_dumps(data)
        } else {
            self.bound_once_to_dumps(call, data)
        }
    }

    /// Charges `n` nodes to the judge's budget; false once it is spent.
    fn charge(&self, n: usize) -> bool {
        let spent = self.round_trips.spent.get().saturating_add(n);
        self.round_trips.spent.set(spent);
        spent <= self.limits.max_round_trip_nodes
    }

    /// `node` without the parentheses around it.
    fn unparenthesized(&self, mut node: Node<'s>) -> Option<Node<'s>> {
        while node.kind() == "parenthesized_expression" {
            if !self.charge(1) {
                return None;
            }
            let mut cursor = node.walk();
            let inner: Vec<Node<'s>> = node
                .named_children(&mut cursor)
                .filter(|c| c.kind() != "comment")
                .take(2)
                .collect();
            let [only] = inner.as_slice() else {
                return None;
            };
            node = *only;
        }
        Some(node)
    }

    /// Whether `call` is `dumps` of a pickle-family module, named through an import that
    /// nothing in the file rebinds, with no `dumps` replaced anywhere in the file.
    fn is_pickle_dumps(&self, call: Node<'s>) -> bool {
        let Some(func) = call.field(Field::Function) else {
            return false;
        };
        let names = self.resolve(func);
        let dumps = Product(PICKLE_MODULES, &["dumps"]);
        if names.is_empty() || !names.iter().all(|n| dumps.matches(n)) {
            return false;
        }
        // The name the callee starts with (`pickle` in `pickle.dumps`, `dumps` after
        // `from pickle import dumps`) must be the import's binding and nothing else's.
        let mut first = func;
        while first.kind() == "attribute" {
            let Some(object) = first.field(Field::Object) else {
                return false;
            };
            first = object;
        }
        if first.kind() != "identifier" {
            return false;
        }
        let first = self.text(first);
        if self.bindings.alias(first).is_none() || self.bindings.assignments(first) > 0 {
            return false;
        }
        self.file_facts()
            .is_some_and(|f| !f.dumps_patched && !f.rebound.contains(first))
    }

    /// Whether `name`, the data argument of `call`, is bound exactly once in the scope of
    /// `call` (its function, or the module), by `name = <pickle dumps call>` before `call`.
    fn bound_once_to_dumps(&self, call: Node<'s>, name: Node<'s>) -> bool {
        let Some(root) = self.round_trips.root.get() else {
            return false;
        };
        let Some(scope) = self.scope_of(root, call) else {
            return false;
        };
        // A lambda, comprehension or class body reads names through rules of its own.
        if scope.id() != root.id() && scope.kind() != "function_definition" {
            return false;
        }
        let name = self.text(name);
        let mut binds = 0usize;
        let mut assignment = None;
        let mut dynamic = false;
        let walked = self.walk_with_ancestors(scope, |path| {
            let Some((node, field)) = path.last() else {
                return;
            };
            if node.kind() != "identifier" {
                return;
            }
            let text = self.text(*node);
            if DYNAMIC_SCOPE_NAMES.contains(&text) {
                dynamic = true;
            }
            if text != name || use_of(path, |n| self.charge(n)) != Use::Bind {
                return;
            }
            binds = binds.saturating_add(1);
            // Only the scope's own `name = …` (not a nested scope's) is the binding sought.
            let inner = path.len().saturating_sub(1);
            let nested = path
                .get(1..inner)
                .unwrap_or_default()
                .iter()
                .any(|(n, _)| SCOPE_KINDS.contains(&n.kind()));
            let parent = inner.checked_sub(1).and_then(|p| path.get(p));
            if let Some((parent, _)) = parent
                && parent.kind() == "assignment"
                && *field == Some("left")
                && !nested
            {
                assignment = Some(*parent);
            }
        });
        if !walked || dynamic || binds != 1 {
            return false;
        }
        let Some(assignment) = assignment else {
            return false;
        };
        if assignment.end_byte() > call.start_byte() {
            return false;
        }
        assignment
            .field(Field::Right)
            .and_then(|r| self.unparenthesized(r))
            .is_some_and(|r| r.kind() == "call" && self.is_pickle_dumps(r))
    }

    /// The innermost scope node around `call` (a [`SCOPE_KINDS`] node, or `root`), found by
    /// descending from `root`; `None` when the budget runs out or `call` is not under `root`.
    fn scope_of(&self, root: Node<'s>, call: Node<'s>) -> Option<Node<'s>> {
        let mut cursor = root.walk();
        let mut scope = root;
        let at = call.start_byte();
        loop {
            if !self.charge(1) {
                return None;
            }
            let node = cursor.node();
            if node.id() == call.id() {
                return Some(scope);
            }
            if node.id() != root.id() && SCOPE_KINDS.contains(&node.kind()) {
                scope = node;
            }
            if node.start_byte() > at || node.end_byte() <= at {
                return None;
            }
            cursor.goto_first_child_for_byte(at)?;
        }
    }

    /// Visits every node under `top` in pre-order with its ancestors (outermost first, each
    /// with the field it fills), charging the judge's budget; false when the budget ran out.
    fn walk_with_ancestors(&self, top: Node<'s>, mut visit: impl FnMut(&[Step<'s>])) -> bool {
        let mut cursor = top.walk();
        let mut path: Vec<Step<'s>> = vec![(top, None)];
        loop {
            if !self.charge(1) {
                return false;
            }
            visit(&path);
            if cursor.goto_first_child() {
                path.push((cursor.node(), cursor.field_name()));
                continue;
            }
            loop {
                path.pop();
                if path.is_empty() {
                    return true;
                }
                if cursor.goto_next_sibling() {
                    path.push((cursor.node(), cursor.field_name()));
                    break;
                }
                if !cursor.goto_parent() {
                    return true;
                }
            }
        }
    }

    /// The file-wide facts, from one walk of the whole tree (`None` when the budget ran out).
    fn file_facts(&self) -> Option<&FileFacts<'s>> {
        self.round_trips
            .file
            .get_or_init(|| {
                let root = self.round_trips.root.get()?;
                let mut facts = FileFacts::default();
                let walked = self.walk_with_ancestors(root, |path| {
                    let Some((node, _)) = path.last() else {
                        return;
                    };
                    match node.kind() {
                        "identifier" => {
                            // Imports bind names on purpose; `Bindings` resolves them. (A
                            // `dotted_name` elsewhere, a `case` capture, is a binding.)
                            let up = |n: usize| {
                                path.len()
                                    .checked_sub(n)
                                    .and_then(|p| path.get(p))
                                    .map(|(p, _)| p.kind())
                            };
                            let import = |k: Option<&str>| {
                                matches!(
                                    k,
                                    Some(
                                        "import_statement"
                                            | "import_from_statement"
                                            | "future_import_statement"
                                            | "aliased_import"
                                    )
                                )
                            };
                            if up(2) == Some("aliased_import")
                                || (up(2) == Some("dotted_name") && import(up(3)))
                            {
                                return;
                            }
                            if use_of(path, |n| self.charge(n)) == Use::Bind {
                                facts.rebound.insert(self.text(*node));
                            }
                        }
                        "attribute" => {
                            let replaced = node
                                .field(Field::Attribute)
                                .is_some_and(|a| self.text(a) == "dumps")
                                && use_of(path, |n| self.charge(n)) == Use::Bind;
                            facts.dumps_patched |= replaced;
                        }
                        "string_content" => {
                            facts.dumps_patched |= self.text(*node) == "dumps";
                        }
                        _ => {}
                    }
                });
                walked.then_some(facts)
            })
            .as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::*;
    use super::super::{ItemKind, Limits, scan_and_analyze, scan_python};

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

    /// Issue 32: `pickle.loads` of bytes the same code just made with `pickle.dumps` unpickles
    /// nothing from outside the process; each spelling of the round trip is not reported.
    #[test]
    fn a_pickle_round_trip_is_not_an_unsafe_load() {
        for src in [
            // Nested, in any parentheses, inside asserts and calls.
            "import pickle\npickle.loads(pickle.dumps(error))",
            "import pickle\nres = pickle.loads(pickle.dumps(x))",
            "import pickle\nassert pickle.loads((pickle.dumps(a, protocol=proto))) == a",
            "import pickle\nf(pickle.loads(pickle.dumps(self.scoring)))",
            "import pickle\npickle.loads(data=pickle.dumps(x))",
            // Aliases and the other pickle-family modules.
            "import pickle as pkl\npkl.loads(pkl.dumps(x))",
            "from pickle import dumps, loads\nloads(dumps(x))",
            "import _pickle as cPickle\ncPickle.loads(cPickle.dumps(x))",
            "import pickle, dill\ndill.loads(pickle.dumps(x))",
            "import cloudpickle\ncloudpickle.loads(cloudpickle.dumps(f))",
            // Through one local name assigned once, before the call.
            "import pickle\ndef test(obj):\n    s = pickle.dumps(obj)\n    assert pickle.loads(s) == obj\n",
            "import pickle\ndef t(a):\n    for proto in range(2, 5):\n        pk_dmp = pickle.dumps(a, protocol=proto)\n        b = pickle.loads(pk_dmp)\n",
            "import pickle\nclass T:\n    def test(self, arr):\n        full_pickled = pickle.dumps(arr)\n        assert len(full_pickled)\n        x = pickle.loads(full_pickled)\n",
            "import pickle as p\nbitgen_pkl = p.dumps(bg)\nrestored = p.loads(bitgen_pkl)\n",
            "from pickle import dumps, loads\ndef f(x):\n    s = (dumps(x))\n    return loads(s)\n",
        ] {
            assert!(unsafe_codes(src).is_empty(), "{src}");
        }
    }

    /// Each near miss of the round trip keeps its finding: the bytes may come from outside.
    #[test]
    fn near_misses_of_a_round_trip_stay_unsafe_loads() {
        for src in [
            // A parameter, an attribute, a file.
            "import pickle\ndef f(s):\n    return pickle.loads(s)\n",
            "import pickle\npickle.loads(self.blob)",
            "import pickle\npickle.loads(f.read())",
            // Assigned twice, augmented, or by other binding forms.
            "import pickle\ndef f(x, p):\n    s = pickle.dumps(x)\n    s = open(p, 'rb').read()\n    return pickle.loads(s)\n",
            "import pickle\ndef f(x):\n    s = pickle.dumps(x)\n    s += b'tail'\n    return pickle.loads(s)\n",
            "import pickle\ndef f(x, ps):\n    s = pickle.dumps(x)\n    for s in ps:\n        pickle.loads(s)\n",
            "import pickle\ndef f(x, p):\n    s = pickle.dumps(x)\n    with open(p) as s:\n        pass\n    pickle.loads(s)\n",
            "import pickle\ndef f(x):\n    s = pickle.dumps(x)\n    try:\n        g()\n    except E as s:\n        pickle.loads(s)\n",
            "import pickle\ndef f(x, p):\n    s = pickle.dumps(x)\n    if (s := open(p).read()):\n        pickle.loads(s)\n",
            "import pickle\ndef f(x):\n    s = pickle.dumps(x)\n    del s\n    pickle.loads(s)\n",
            "import pickle\ndef f(x):\n    global s\n    s = pickle.dumps(x)\n    pickle.loads(s)\n",
            "import pickle\ndef f(x):\n    s = pickle.dumps(x)\n    def g():\n        nonlocal s\n        s = evil()\n    g()\n    pickle.loads(s)\n",
            "import pickle\ndef f(x, s=None):\n    s = pickle.dumps(x)\n    pickle.loads(s)\n",
            "import pickle\ndef f(x):\n    s = pickle.dumps(x)\n    import s\n    pickle.loads(s)\n",
            "import pickle\ndef f(x, p):\n    s, t = pickle.dumps(x), p\n    pickle.loads(s)\n",
            "import pickle\ndef f(x, p):\n    s = pickle.dumps(x)\n    (s, t) = p\n    pickle.loads(s)\n",
            // Assigned in another function, or after the call.
            "import pickle\ndef f(x):\n    s = pickle.dumps(x)\ndef g(s):\n    pickle.loads(s)\n",
            "import pickle\ndef f(x):\n    s = pickle.dumps(x)\ndef g():\n    pickle.loads(s)\n",
            "import pickle\ndef f(x):\n    pickle.loads(s)\n    s = pickle.dumps(x)\n",
            // The scope may be rebound out of sight of the syntax.
            "import pickle\ns = pickle.dumps(x)\nglobals()['s'] = open('p', 'rb').read()\npickle.loads(s)\n",
            "import pickle, sys\ndef f(x):\n    s = pickle.dumps(x)\n    sys._getframe().f_locals['s'] = b''\n    pickle.loads(s)\n",
            // Not a pickle-family `dumps`.
            "import pickle\npickle.loads(obj.dumps())",
            "import pickle, json\npickle.loads(json.dumps(x))",
            "import pickle\ndef f(x):\n    s = json.dumps(x)\n    pickle.loads(s)\n",
            "import pickle\npickle.loads(dumps(x))",
            "pickle.loads(pickle.dumps(x))",
            "import pickle\npickle.loads(getattr(pickle, 'dumps')(x))",
            "import pickle\npickle.loads(pickle.dumps(x).replace(b'a', b'b'))",
            "import pickle\npickle.loads(pickle.dumps(x) + tail)",
            // The `dumps` or its module replaced.
            "import pickle\npickle.dumps = lambda x: open('p', 'rb').read()\npickle.loads(pickle.dumps(x))",
            "import pickle\nsetattr(pickle, 'dumps', f)\npickle.loads(pickle.dumps(x))",
            "import pickle\npickle = Fake()\npickle.loads(pickle.dumps(x))",
            "from pickle import dumps, loads\ndef dumps(x):\n    return b''\nloads(dumps(x))",
            "import pickle\nmatch v:\n    case pickle:\n        pass\npickle.loads(pickle.dumps(x))",
            // `load` and `Unpickler` read a file, not the bytes.
            "import pickle\npickle.load(pickle.dumps(x))",
            // A lambda or comprehension scope reads the name by rules of its own.
            "import pickle\ndef f(x):\n    s = pickle.dumps(x)\n    g(lambda: pickle.loads(s))\n",
        ] {
            assert_eq!(unsafe_codes(src), vec!["pickle-load"], "{src}");
        }
    }

    /// Model code is scanned with its behaviour: a round trip there stays reported, since
    /// what it runs is the pickled object's `__reduce__`, which SRC006 follows only in part.
    #[test]
    fn model_code_keeps_its_round_trips() {
        let src = "import os, pickle\nclass P:\n    def __reduce__(self):\n        return (os.system, ('id',))\npickle.loads(pickle.dumps(P()))\n";
        assert!(unsafe_codes(src).is_empty());
        let (report, _) = scan_and_analyze(src, &Limits::default());
        let codes: Vec<&str> = report
            .calls
            .iter()
            .filter_map(|c| match c.kind {
                ItemKind::UnsafeLoad { code, .. } => Some(code),
                _ => None,
            })
            .collect();
        assert_eq!(codes, vec!["pickle-load"]);
    }

    /// Hostile shapes stay bounded: deep brackets, and many loads of a module-level name (each
    /// walks the whole module, charged to one budget per source).
    #[test]
    fn round_trip_judging_is_bounded_on_hostile_shapes() {
        let deep = format!(
            "import pickle\npickle.loads({}pickle.dumps(x){})\n",
            "(".repeat(3000),
            ")".repeat(3000)
        );
        assert!(unsafe_codes(&deep).is_empty());
        let tuples = format!(
            "import pickle\ns = pickle.dumps(x)\ny = {}s{}\npickle.loads(s)\n",
            "(s, ".repeat(300),
            ")".repeat(300)
        );
        assert!(unsafe_codes(&tuples).is_empty());
        let many = format!(
            "import pickle\ns = pickle.dumps(x)\n{}",
            "pickle.loads(s)\n".repeat(5000)
        );
        let limits = Limits {
            max_round_trip_nodes: 200_000,
            ..Limits::default()
        };
        let started = std::time::Instant::now();
        let report = scan_python(&many, &limits);
        assert!(started.elapsed() < std::time::Duration::from_secs(20));
        // The first calls are judged round trips; once the budget is spent the rest are kept.
        let kept = report.calls.len();
        assert!(kept > 0 && kept < 5000, "{kept}");
    }

    #[test]
    fn a_spent_round_trip_budget_keeps_the_finding() {
        let src = "import pickle\ndef f(x):\n    s = pickle.dumps(x)\n    return pickle.loads(s)\n";
        let limits = Limits {
            max_round_trip_nodes: 10,
            ..Limits::default()
        };
        let codes = |limits: &Limits| -> Vec<&'static str> {
            scan_python(src, limits)
                .calls
                .into_iter()
                .filter_map(|c| match c.kind {
                    ItemKind::UnsafeLoad { code, .. } => Some(code),
                    _ => None,
                })
                .collect()
        };
        assert_eq!(codes(&limits), vec!["pickle-load"]);
        assert!(codes(&Limits::default()).is_empty());
    }

    #[test]
    fn flags_the_2025_loader_patterns_and_not_their_safe_spellings_or_mentions() {
        let cases: &[(&str, &str)] = &[
            (
                "import keras\nkeras.config.enable_unsafe_deserialization()",
                "keras-unsafe-deserialization",
            ),
            (
                "import tensorflow as tf\ntf.keras.config.enable_unsafe_deserialization()",
                "keras-unsafe-deserialization",
            ),
            (
                "import keras\nkeras.models.load_model('m.keras', custom_objects={'L': L})",
                "keras-custom-objects",
            ),
            ("import torch\ntorch.jit.load('m.pt')", "torch-jit-load"),
            (
                "import torch\ntorch.ops.load_library('ops.so')",
                "native-library-load",
            ),
            (
                "import torch\ntorch.classes.load_library('c.so')",
                "native-library-load",
            ),
            (
                "import tensorflow as tf\ntf.load_op_library('op.so')",
                "native-library-load",
            ),
            (
                "import ctypes\nctypes.CDLL('./libx.so')",
                "native-library-load",
            ),
            (
                "from ctypes import cdll\ncdll.LoadLibrary('libx.so')",
                "native-library-load",
            ),
            ("import yaml\nyaml.full_load(s)", "yaml-full-load"),
            (
                "from hydra.utils import instantiate\ninstantiate(cfg.model)",
                "hydra-instantiate",
            ),
            (
                "import hydra\nhydra.utils.call(cfg.fn)",
                "hydra-instantiate",
            ),
            (
                "from hydra.utils import get_method\nget_method(cfg.f)",
                "hydra-instantiate",
            ),
        ];
        for (src, code) in cases {
            assert_eq!(unsafe_codes(src), vec![*code], "{src}");
        }
        for safe in [
            "import keras\nkeras.models.load_model('m.keras')",
            "import keras\nkeras.models.load_model('m.keras', safe_mode=True)",
            "import yaml\nyaml.safe_load(s)",
            "import torch\ntorch.load(p, weights_only=True)",
            // Mentions in comments and strings are not calls.
            "# torch.jit.load(p) and ctypes.CDLL('x') are dangerous\nx = 1",
            "doc = 'call hydra.utils.instantiate(cfg) or yaml.full_load(s)'",
            "\"\"\"keras.config.enable_unsafe_deserialization()\"\"\"",
        ] {
            assert!(unsafe_codes(safe).is_empty(), "{safe}");
        }
    }
}

/// Issue 32: one table of dangerous callables. Every loader and download the code scanner
/// watches is known to the pickle and config judges too (a table entry, or a called name that
/// says it loads or downloads), so a loader added to [`LOADS`] or [`super::hub::DOWNLOADS`] without
/// its `knowledge` entry fails here.
#[cfg(test)]
mod one_table {
    use super::super::calls::Callee;
    use crate::knowledge::{ExtraLists, Verdict, classify_global, judge_by_name};

    fn known_to_the_pickle_judge(qualified: &str) -> bool {
        let (module, name) = qualified
            .rsplit_once('.')
            .unwrap_or(("builtins", qualified));
        matches!(
            classify_global(module, name, &ExtraLists::default()),
            Verdict::Dangerous { .. }
        ) || judge_by_name(module, name).is_some()
    }

    fn names(callee: &Callee) -> Vec<String> {
        match callee {
            Callee::Name(n) | Callee::EndsWith(n) => vec![n.to_string()],
            // Class names are judged by their module (a constructor's name says nothing).
            Callee::Last(l) if l.starts_with(|c: char| c.is_ascii_uppercase()) => {
                vec![format!("sentence_transformers.{l}")]
            }
            Callee::Last(l) => vec![format!("any.module.{l}")],
            Callee::Product(modules, functions) => modules
                .iter()
                .flat_map(|m| functions.iter().map(move |f| format!("{m}.{f}")))
                .collect(),
            Callee::NativeLoader => crate::knowledge::names::NATIVE_LOADERS
                .iter()
                .filter(|l| l.direct && !l.method)
                .map(|l| l.name.to_string())
                .collect(),
        }
    }

    #[test]
    fn every_watched_loader_and_download_is_known_to_the_pickle_judge() {
        let loads = super::LOADS.iter().flat_map(|w| w.callees.iter());
        let downloads = super::super::hub::DOWNLOADS
            .iter()
            .flat_map(|w| w.callees.iter());
        let mut missing = Vec::new();
        for callee in loads.chain(downloads) {
            for name in names(callee) {
                // `pipeline` is the bare name after `from transformers import pipeline`.
                let name = if name == "pipeline" {
                    "transformers.pipeline".to_string()
                } else {
                    name
                };
                if !known_to_the_pickle_judge(&name) {
                    missing.push(name);
                }
            }
        }
        assert!(missing.is_empty(), "unknown to knowledge: {missing:?}");
    }
}
