//! skops (`.skops`, issue 40): a zip whose `schema.json` is a tree of typed nodes and whose other
//! members are the NumPy arrays and byte strings the nodes point at.
//!
//! `skops.io.load` builds every node: it imports the `__module__` + `__class__` a node names and
//! calls or instantiates it (`ObjectNode`: `cls.__new__` then `__setstate__`;
//! `ConstructorFromReduceNode` and `LossNode`: `cls(*args)`; `DictNode`/`ListNode`/...: the
//! container type; `FunctionNode`/`TypeNode`: the function or type itself; `MethodNode`: an
//! attribute of a loaded object; `OperatorFuncNode`: `operator.<class>(*attrs)`;
//! `PartialNode`: `functools.partial` over its `func` node). Its own audit
//! (`get_untrusted_types`) only asks whether each name is on a list the user then confirms, so
//! the names are what this reader judges, with the same knowledge base as pickle globals
//! (`knowledge::classify_global`): a dangerous callable is `PKL001`, an unknown one that skops
//! itself would not trust by default is `PKL002` (folded per file), the rest passes.
//!
//! The node shapes skops's published advisories used to run code are `FMT009`
//! (`format-exploit-shape`, denied: a benign writer never produces them):
//! - an `OperatorFuncNode` whose `__module__` is not `operator` (CVE-2025-54412,
//!   GHSA-m7f4-hrc6-fwg3): the audit shows the declared type, the loader runs
//!   `operator.<__class__>`, so this reader judges `operator.<__class__>`;
//! - a `MethodNode` whose declared type is not its object's, or whose object is itself a
//!   `MethodNode` (CVE-2025-54413, GHSA-4v6w-xpmh-gfgp): the audit shows the declared type, the
//!   loader walks `getattr(obj, func)` from anything; the method is judged as
//!   `<obj module>.<obj class>.<func>`, so a dunder (`__builtins__`, `__getitem__`) is attribute
//!   traversal (`PKL001`);
//! - a `DictNode` whose `key_types` holds anything but `TypeNode`s: the loader calls each key
//!   type on its key, the trigger of the CVE-2025-54413 proof of concept;
//! - a `LossNode` whose type is not a scikit-learn loss: skops before 0.14 imported that module
//!   before its audit (skops-dev/skops#506).
//!
//! Bounded: the schema is read up to `json_bytes` (larger is SCAN004), parsed by serde_json
//! (which stops at 128 levels) and walked with an explicit stack to `json_depth`; the facts keep
//! at most [`MAX_TYPES`] names and [`MAX_LOADERS`] loader kinds.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::{Value, json};

use super::context::{Ctx, name_limit, raise_hint};
use super::problem::{Problem, ProblemKind};
use crate::knowledge::{self, Verdict};
use crate::model::facts::Fact;
use crate::model::finding::{Location, Severity};
use crate::model::rules::RuleId;

/// The member that holds the node tree.
pub const SCHEMA: &str = "schema.json";

/// Most distinct `module.class` names kept in the facts.
pub const MAX_TYPES: usize = 1000;

/// Most distinct loader kinds counted in the facts (the rest are counted under `other`).
pub const MAX_LOADERS: usize = 64;

/// Most distinct types and callables judged per schema; past it the rest are SCAN004.
pub const MAX_SITES: usize = 10_000;

/// Most problems kept per schema (one note says how many more there were).
pub const MAX_PROBLEMS: usize = 256;

/// Keeps at most [`MAX_PROBLEMS`] problems; the first one past it becomes a note.
fn push(problems: &mut Vec<Problem>, p: Problem) {
    match problems.len() {
        n if n < MAX_PROBLEMS => problems.push(p),
        n if n == MAX_PROBLEMS => problems.push(Problem::note(
            "problems-capped",
            format!(
                "more than {MAX_PROBLEMS} problems in the skops schema; the rest are not listed"
            ),
        )),
        _ => {}
    }
}

/// Longest JSON path kept in evidence (keys are attacker-chosen).
const MAX_PATH_LEN: usize = 256;

/// The loaders skops 0.x registers (`NODE_TYPE_MAPPING` of `_general`, `_numpy`, `_scipy`,
/// `_sklearn`, `_quantile_forest`, `_audit`); any other `__loader__` makes skops refuse the file.
pub const LOADERS: &[&str] = &[
    "DictNode",
    "DefaultDictNode",
    "ListNode",
    "SetNode",
    "TupleNode",
    "BytesNode",
    "BytearrayNode",
    "SliceNode",
    "FunctionNode",
    "MethodNode",
    "PartialNode",
    "TypeNode",
    "ConstructorFromReduceNode",
    "ObjectNode",
    "JsonNode",
    "OperatorFuncNode",
    "CachedNode",
    "NdArrayNode",
    "MaskedArrayNode",
    "RandomStateNode",
    "RandomGeneratorNode",
    "DTypeNode",
    "SparseMatrixNode",
    "LossNode",
    "TreeNode",
    "ReduceNode",
    "QuantileForestNode",
    "SGDNode",
    "_DictWithDeprecatedKeysNode",
];

/// Loaders that call or instantiate the type they name while loading (the rest only return the
/// function or type, or build a value of a fixed type).
const CALLING_LOADERS: &[&str] = &[
    "DictNode",
    "DefaultDictNode",
    "ListNode",
    "SetNode",
    "TupleNode",
    "ConstructorFromReduceNode",
    "ObjectNode",
    "OperatorFuncNode",
    "LossNode",
    "TreeNode",
    "ReduceNode",
    "QuantileForestNode",
    "SGDNode",
    "RandomStateNode",
    "RandomGeneratorNode",
    "NdArrayNode",
    "MaskedArrayNode",
    "SparseMatrixNode",
    "_DictWithDeprecatedKeysNode",
];

/// What a skops schema says about the model.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Facts {
    /// The skops persistence protocol (`protocol`).
    pub protocol: Option<u64>,
    /// The skops version that wrote the file (`_skops_version`).
    pub skops_version: Option<String>,
    /// `module.class` of the root node (the model's type).
    pub root: Option<String>,
    /// Nodes in the tree.
    pub nodes: u64,
    /// Nodes per loader kind.
    pub loaders: BTreeMap<String, u64>,
    /// Every `module.class` (and method) the tree names, sorted (at most [`MAX_TYPES`]).
    pub types: BTreeSet<String>,
    /// Member files the nodes load (`file` of NumPy, bytes and sparse nodes).
    pub files: u64,
}

/// One type or callable the loader imports, where it first appears.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Imported {
    /// The node's `__loader__`.
    pub loader: String,
    /// Module of what runs.
    pub module: String,
    /// Name of what runs (dotted for a method: `Class.method`).
    pub name: String,
    /// Whether loading calls or instantiates it (not only returns it).
    pub called: bool,
    /// JSON path of the node in `schema.json` (its first occurrence).
    pub path: String,
    /// Nodes that name it.
    pub occurrences: u64,
}

/// The walk of one schema.
#[derive(Debug, Clone, Default)]
pub struct Schema {
    /// Facts for the report.
    pub facts: Facts,
    /// Every named type or callable, in tree order.
    pub sites: Vec<Imported>,
    /// Structural problems, exploit shapes and limits.
    pub problems: Vec<Problem>,
    /// `module.name` -> index in `sites`.
    index: BTreeMap<String, usize>,
}

/// Bounds of one schema read.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Largest `schema.json` read (`json_bytes`).
    pub max_bytes: u64,
    /// Deepest JSON nesting walked (`json_depth`).
    pub max_depth: usize,
}

impl From<&crate::model::limits::Limits> for Limits {
    fn from(l: &crate::model::limits::Limits) -> Self {
        Limits {
            max_bytes: l.json_bytes,
            max_depth: crate::model::limits::usize_of(l.json_depth),
        }
    }
}

/// Whether a parsed `schema.json` is a skops node tree: an object with a string `__loader__` and
/// a `protocol`.
pub fn is_schema(value: &Value) -> bool {
    value.get("__loader__").is_some_and(Value::is_string) && value.get("protocol").is_some()
}

fn child_path(path: &str, segment: &str) -> String {
    if path.len() >= MAX_PATH_LEN {
        return path.to_string();
    }
    let mut p = format!("{path}/{segment}");
    if p.len() > MAX_PATH_LEN {
        let mut cut = MAX_PATH_LEN;
        while !p.is_char_boundary(cut) {
            cut -= 1;
        }
        p.truncate(cut);
    }
    p
}

fn text<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    v.get(key).and_then(Value::as_str)
}

fn exploit(code: &'static str, message: String, path: &str, reference: &str) -> Problem {
    Problem::new(ProblemKind::Exploit, code, message, None)
        .with("node", path)
        .with("references", reference)
}

/// Walks a parsed schema: every node's type and callable, the advisory shapes, the facts.
pub fn walk(root: &Value, limits: &Limits) -> Schema {
    let mut out = Schema::default();
    out.facts.protocol = root.get("protocol").and_then(Value::as_u64);
    out.facts.skops_version = text(root, "_skops_version").map(str::to_string);
    if let (Some(m), Some(c)) = (text(root, "__module__"), text(root, "__class__")) {
        out.facts.root = Some(format!("{m}.{c}"));
    }
    // One frame per open container (at most `max_depth` of them), each iterating its children
    // in place: the stack never holds more than the current path, however wide the document.
    enum Frame<'v> {
        Object(serde_json::map::Iter<'v>),
        Array(std::iter::Enumerate<std::slice::Iter<'v, Value>>),
    }
    let mut deep = false;
    let mut stack: Vec<(Frame<'_>, String)> = Vec::new();
    let mut pending: Option<(&Value, String)> = Some((root, String::new()));
    loop {
        if let Some((value, path)) = pending.take() {
            if stack.len() > limits.max_depth {
                if !deep {
                    deep = true;
                    push(
                        &mut out.problems,
                        Problem::limit(
                            "too-deep",
                            format!(
                                "skops schema nests deeper than the json_depth limit ({}) at `{path}`; the nodes below were not judged",
                                limits.max_depth
                            ),
                        ),
                    );
                }
            } else {
                match value {
                    Value::Object(map) => {
                        if map.contains_key("__loader__") {
                            node(value, &path, &mut out);
                        }
                        stack.push((Frame::Object(map.iter()), path));
                    }
                    Value::Array(items) => {
                        stack.push((Frame::Array(items.iter().enumerate()), path));
                    }
                    _ => {}
                }
            }
        }
        let Some((frame, path)) = stack.last_mut() else {
            break;
        };
        let next = match frame {
            Frame::Object(it) => it
                .find(|(_, v)| v.is_object() || v.is_array())
                .map(|(k, v)| (v, child_path(path, k))),
            Frame::Array(it) => it
                .find(|(_, v)| v.is_object() || v.is_array())
                .map(|(i, v)| (v, child_path(path, &i.to_string()))),
        };
        match next {
            Some(child) => pending = Some(child),
            None => {
                stack.pop();
            }
        }
    }
    out
}

/// One node: its facts, sites and shapes.
fn node(v: &Value, path: &str, out: &mut Schema) {
    let shown = if path.is_empty() { "/" } else { path };
    let Some(loader) = text(v, "__loader__") else {
        push(
            &mut out.problems,
            Problem::malformed(
                "node-loader",
                format!("skops node at `{shown}` has a `__loader__` that is not a string"),
            )
            .with("node", shown),
        );
        return;
    };
    out.facts.nodes += 1;
    let kinds = out.facts.loaders.len();
    let key = if kinds < MAX_LOADERS || out.facts.loaders.contains_key(loader) {
        loader
    } else {
        "other"
    };
    *out.facts.loaders.entry(key.to_string()).or_insert(0) += 1;
    if v.get("file").is_some_and(Value::is_string) {
        out.facts.files += 1;
    }
    if !LOADERS.contains(&loader) {
        push(&mut out.problems,
            Problem::malformed(
                "unknown-loader",
                format!("skops node at `{shown}` names the loader `{loader}`, which no skops release registers"),
            )
            .with("node", shown)
            .with("loader", loader),
        );
    }
    let (Some(module), Some(class)) = (text(v, "__module__"), text(v, "__class__")) else {
        push(
            &mut out.problems,
            Problem::malformed(
                "node-type",
                format!(
                    "skops `{loader}` node at `{shown}` lacks a string `__module__` or `__class__`"
                ),
            )
            .with("node", shown)
            .with("loader", loader),
        );
        return;
    };

    match loader {
        // A JSON value or a reference to a node read before: nothing is imported here.
        "JsonNode" | "CachedNode" => {}
        "OperatorFuncNode" => {
            if module != "operator" {
                push(&mut out.problems, exploit(
                    "operator-module-mismatch",
                    format!(
                        "skops `OperatorFuncNode` at `{shown}` declares `{module}.{class}` but skops runs `operator.{class}` (CVE-2025-54412: the audit shows one type, the loader calls another)"
                    ),
                    shown,
                    "CVE-2025-54412,GHSA-m7f4-hrc6-fwg3",
                ).with("declared", format!("{module}.{class}")));
            }
            add_site(out, loader, "operator", class, true, shown);
        }
        "MethodNode" => {
            method_node(v, loader, module, class, shown, out);
        }
        // `functools.partial` whatever the node says; what it wraps is its `func` node.
        "PartialNode" => {}
        "LossNode" => {
            if !(module == "sklearn" || module.starts_with("sklearn.")) {
                push(&mut out.problems, exploit(
                    "loss-node-type",
                    format!(
                        "skops `LossNode` at `{shown}` names `{module}.{class}`, not a scikit-learn loss: skops before 0.14 imported it before its audit (skops-dev/skops#506)"
                    ),
                    shown,
                    "skops-dev/skops#506",
                ).with("declared", format!("{module}.{class}")));
            }
            add_site(out, loader, module, class, true, shown);
        }
        "DictNode" => {
            dict_key_types(v, shown, out);
            add_site(out, loader, module, class, true, shown);
        }
        other => {
            let called = CALLING_LOADERS.contains(&other);
            add_site(out, loader, module, class, called, shown);
        }
    }
}

/// A `MethodNode` takes a method of the object it holds: the declared type must be the
/// object's type, and the object must not be another method (CVE-2025-54413).
fn method_node(v: &Value, loader: &str, module: &str, class: &str, shown: &str, out: &mut Schema) {
    let obj = v.get("content").and_then(|c| c.get("obj"));
    let func = v.get("content").and_then(|c| text(c, "func"));
    let obj_type = obj.and_then(|o| Some((text(o, "__module__")?, text(o, "__class__")?)));
    match (obj_type, func) {
        (Some((om, oc)), Some(func)) => {
            if (om, oc) != (module, class) {
                push(&mut out.problems, exploit(
                    "method-type-mismatch",
                    format!(
                        "skops `MethodNode` at `{shown}` declares `{module}.{class}` but takes `{func}` of a `{om}.{oc}` (CVE-2025-54413: the audit shows one type, the loader walks another)"
                    ),
                    shown,
                    "CVE-2025-54413,GHSA-4v6w-xpmh-gfgp",
                ).with("declared", format!("{module}.{class}")).with("object", format!("{om}.{oc}")));
            }
            if obj.and_then(|o| text(o, "__loader__")) == Some("MethodNode") {
                push(
                    &mut out.problems,
                    exploit(
                        "method-chain",
                        format!(
                            "skops `MethodNode` at `{shown}` takes `{func}` of another method: a chain of attribute lookups that walks the object graph (CVE-2025-54413)"
                        ),
                        shown,
                        "CVE-2025-54413,GHSA-4v6w-xpmh-gfgp",
                    ),
                );
            }
            add_site(out, loader, om, &format!("{oc}.{func}"), false, shown);
        }
        _ => {
            push(&mut out.problems,
                Problem::malformed(
                    "method-node",
                    format!("skops `MethodNode` at `{shown}` lacks its `content.obj` type or `content.func`"),
                )
                .with("node", shown),
            );
            add_site(out, loader, module, class, false, shown);
        }
    }
}

/// A `DictNode` calls each of its key types on its key, so any key type but a plain
/// `TypeNode` is a call the audit does not show.
fn dict_key_types(v: &Value, shown: &str, out: &mut Schema) {
    if let Some(keys) = v.get("key_types") {
        let listed = keys.get("content").and_then(Value::as_array);
        for (i, k) in listed.into_iter().flatten().enumerate() {
            let kl = text(k, "__loader__").unwrap_or("?");
            if kl != "TypeNode" {
                let at = child_path(shown, &format!("key_types/content/{i}"));
                push(
                    &mut out.problems,
                    exploit(
                        "dict-key-callable",
                        format!(
                            "skops `DictNode` at `{shown}` has a `{kl}` among its key types: loading calls each key type on its key (the trigger of CVE-2025-54413's proof of concept)"
                        ),
                        &at,
                        "CVE-2025-54413,GHSA-4v6w-xpmh-gfgp",
                    ),
                );
            }
        }
    }
}

/// Records one named type or callable: once per distinct name, with its occurrences.
fn add_site(out: &mut Schema, loader: &str, module: &str, name: &str, called: bool, path: &str) {
    let qualified = format!("{module}.{name}");
    if let Some(&i) = out.index.get(&qualified) {
        if let Some(s) = out.sites.get_mut(i) {
            s.occurrences += 1;
            s.called |= called;
        }
        return;
    }
    if out.sites.len() >= MAX_SITES {
        if !out.problems.iter().any(|p| p.code == "too-many-types") {
            push(
                &mut out.problems,
                Problem::limit(
                    "too-many-types",
                    format!(
                        "the skops schema names more than {MAX_SITES} distinct types; the rest were not judged"
                    ),
                ),
            );
        }
        return;
    }
    if out.facts.types.len() < MAX_TYPES {
        out.facts.types.insert(qualified.clone());
    }
    out.index.insert(qualified, out.sites.len());
    out.sites.push(Imported {
        loader: loader.to_string(),
        module: module.to_string(),
        name: name.to_string(),
        called,
        path: path.to_string(),
        occurrences: 1,
    });
}

/// Whether skops itself trusts a name its knowledge-base verdict left unknown (skops's default
/// trusted lists: scikit-learn estimators and internals, NumPy and SciPy types and ufuncs,
/// builtin primitives and containers). Methods and operator functions are never trusted by
/// default, so they stay unknown.
pub fn trusted_by_default(site: &Imported) -> bool {
    if matches!(site.loader.as_str(), "MethodNode" | "OperatorFuncNode") || site.name.contains('.')
    {
        return false;
    }
    let top = site.module.split('.').next().unwrap_or(&site.module);
    match top {
        "sklearn" => site.loader != "FunctionNode",
        "numpy" | "scipy" => true,
        "builtins" => matches!(
            site.name.as_str(),
            "int"
                | "float"
                | "str"
                | "bool"
                | "complex"
                | "list"
                | "set"
                | "frozenset"
                | "tuple"
                | "dict"
                | "map"
                | "slice"
                | "bytes"
                | "bytearray"
                | "NoneType"
        ),
        "collections" => matches!(site.name.as_str(), "OrderedDict" | "defaultdict"),
        _ => false,
    }
}

/// Reads `schema.json` (its bytes, already bounded by `json_bytes` by the caller) of the archive
/// at `ctx.rel` and records what it finds. `member` is the member's name as reported; `top` says
/// whether it is the archive's own schema (its facts are the file's). Returns whether the bytes
/// were a skops schema.
pub fn inspect_schema(
    ctx: &mut Ctx<'_>,
    bytes: &[u8],
    more: bool,
    member: &str,
    top: bool,
) -> bool {
    let limits = Limits::from(&ctx.cfg.limits);
    let claims = crate::classify::extension(ctx.rel) == "skops";
    let at = Location {
        member: Some(member.to_string()),
        ..Location::default()
    };
    if more {
        if claims {
            let cfg = ctx.cfg;
            let d = ctx.detect(
                RuleId::LimitExceeded,
                format!("json_bytes:{member}"),
                format!(
                    "skops schema `{member}` is larger than the json_bytes limit ({}); its types were not judged; {}",
                    limits.max_bytes,
                    raise_hint("json_bytes")
                ),
                at,
            );
            name_limit(d, cfg, "json_bytes");
        }
        return claims;
    }
    let value: Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(e) if e.to_string().starts_with("recursion limit exceeded") => {
            let cfg = ctx.cfg;
            let d = ctx.detect(
                RuleId::LimitExceeded,
                format!("json_depth:{member}"),
                format!(
                    "skops schema `{member}` nests deeper than the JSON parser's own 128 levels; its types were not judged"
                ),
                at,
            );
            name_limit(d, cfg, "json_depth");
            return true;
        }
        Err(e) => {
            if claims {
                ctx.detect(
                    RuleId::FormatMalformed,
                    format!("{member}:invalid-json"),
                    format!("skops schema `{member}` is not valid JSON: {e}"),
                    at,
                )
                .evidence
                .insert("problem".into(), json!("invalid-json"));
            }
            return claims;
        }
    };
    if !is_schema(&value) {
        if claims {
            ctx.detect(
                RuleId::FormatMalformed,
                format!("{member}:not-a-schema"),
                format!(
                    "`{member}` of a `.skops` file is not a skops node tree (no `__loader__` and `protocol` at its root)"
                ),
                at,
            )
            .evidence
            .insert("problem".into(), json!("not-a-schema"));
        }
        return claims;
    }
    let schema = walk(&value, &limits);
    drop(value);
    if top {
        ctx.fact(
            Fact::Skops,
            serde_json::to_value(&schema.facts).unwrap_or(Value::Null),
        );
    }
    judge_sites(ctx, &schema.sites, member);
    super::formats::record_problems(
        ctx,
        &schema.problems,
        RuleId::FormatExploitShape,
        Some(member),
        &[("too-deep", "json_depth")],
    );
    true
}

/// Each distinct callable once, judged like a pickle global: PKL001 dangerous, PKL002 unknown
/// and not trusted by skops's defaults; the evidence uses the pickle vocabulary (`global`,
/// `module`, `name`, `called`, `category`, `occurrences`, `references`) plus the node's
/// `loader` and JSON `node` path.
fn judge_sites(ctx: &mut Ctx<'_>, sites: &[Imported], member: &str) {
    for s in sites {
        let (global, occurrences, called) =
            (format!("{}.{}", s.module, s.name), s.occurrences, s.called);
        let verdict = knowledge::classify_global(&s.module, &s.name, &ctx.cfg.pickle_extra);
        let how = if called {
            "imports and calls"
        } else {
            "imports"
        };
        let (rule, severity, message, category) = match verdict {
            Verdict::Safe => continue,
            Verdict::Unknown if trusted_by_default(s) => continue,
            Verdict::Dangerous { category, reason } => (
                RuleId::PickleUnsafeGlobal,
                if called {
                    Severity::Critical
                } else {
                    Severity::High
                },
                match knowledge::explain_traversal(&s.module, &s.name) {
                    Some(path) => format!(
                        "skops schema `{member}`: loading {how} `{global}` ({} node): {reason}; traversal {path}",
                        s.loader
                    ),
                    None => format!(
                        "skops schema `{member}`: loading {how} `{global}` ({} node): {reason}",
                        s.loader
                    ),
                },
                category,
            ),
            Verdict::Unknown => (
                RuleId::PickleUnknownGlobal,
                if called {
                    RuleId::PickleUnknownGlobal.default_severity()
                } else {
                    Severity::Low
                },
                format!(
                    "skops schema `{member}`: loading {how} `{global}` ({} node), which is neither on the safe list nor trusted by skops by default",
                    s.loader
                ),
                "unknown",
            ),
        };
        let loc = Location {
            member: Some(member.to_string()),
            ..Location::default()
        };
        let d = ctx.detect(rule, format!("{member}:{global}"), message, loc);
        d.severity = severity;
        d.evidence.extend([
            ("global".to_string(), json!(global)),
            ("module".to_string(), json!(s.module)),
            ("name".to_string(), json!(s.name)),
            ("called".to_string(), json!(called)),
            ("loader".to_string(), json!(s.loader)),
            ("node".to_string(), json!(s.path)),
            ("category".to_string(), json!(category)),
            ("occurrences".to_string(), json!(occurrences)),
            ("format".to_string(), json!("skops")),
        ]);
        if rule == RuleId::PickleUnsafeGlobal {
            let refs = knowledge::references(&s.module, &s.name);
            if !refs.is_empty() {
                d.evidence.insert("references".into(), json!(refs));
            }
        }
    }
}

#[cfg(test)]
mod tests;
