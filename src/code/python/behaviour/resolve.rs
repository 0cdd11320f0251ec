//! Name resolution of the behaviour judge: what a callee or value names (`os.system`,
//! `subprocess.run`), through imports, assignments, attributes, calls that return modules or
//! callables, and conditional values, within the file's one budget; a name already being
//! resolved is unknown.

use crate::code::python::field::{Field, Fields};
use tree_sitter::Node;

use super::analyzer::{Analyzer, MAX_NAMES, is_module_or_callable};
use crate::code::python::budget::{Mode, Refused};
use crate::knowledge::capabilities as caps;

impl<'s> Analyzer<'s, '_, '_> {
    /// The names an expression may stand for: import aliases, `getattr(m, "n")`,
    /// `__import__("m")`, `importlib.import_module("m")`, `m.__dict__["n"]`, and names assigned
    /// once from any of those. Within the file's evaluation budget: a name already being
    /// resolved on the current path (`f = getattr(f, "x")`) stands for nothing.
    pub fn resolve(&self, node: Node<'s>) -> Vec<String> {
        let Some(node) = self.unparenthesized(node) else {
            return Vec::new();
        };
        let _guard = match self.budget.enter(node.id(), Mode::Resolve) {
            Ok(guard) => guard,
            Err(Refused::Cycle) => return Vec::new(),
            // Past a limit the aliases still count (an import resolves without evaluating
            // anything): a sink reached after the budget ran out is still a sink.
            Err(Refused::Limit) if matches!(node.kind(), "identifier" | "attribute") => {
                return self.sc.resolve(node);
            }
            Err(Refused::Limit) => return Vec::new(),
        };
        let mut names = self.resolve_entered(node);
        if names.len() > MAX_NAMES {
            names.sort();
            names.dedup();
            names.truncate(MAX_NAMES);
        }
        names
    }

    /// `node` without the parentheses around it (each level costs a step, no depth: a
    /// hundred thousand parentheses are a loop, not a recursion).
    pub(super) fn unparenthesized(&self, mut node: Node<'s>) -> Option<Node<'s>> {
        while node.kind() == "parenthesized_expression" {
            if !self.budget.step() {
                return None;
            }
            node = node.named_child(0)?;
        }
        Some(node)
    }

    /// [`Analyzer::resolve`] of the value a name is assigned once, remembered per value: a
    /// name used a thousand times, or names built from names built from names, cost one
    /// resolution each.
    pub(super) fn resolve_value(&self, value: Node<'s>) -> Vec<String> {
        if let Some((names, memo)) = self.resolved.borrow().get(&value.id())
            && memo.holds_at(self.budget.depth())
        {
            return names.clone();
        }
        let mark = self.budget.mark();
        let names = self.resolve(value);
        if let Some(memo) = self.budget.memo_since(mark, false) {
            self.resolved
                .borrow_mut()
                .insert(value.id(), (names.clone(), memo));
        }
        names
    }

    pub(super) fn resolve_entered(&self, node: Node<'s>) -> Vec<String> {
        match node.kind() {
            "identifier" => {
                let name = self.sc.text(node);
                if self.sc.bindings.alias(name).is_none()
                    && let Some(value) = self.value_of(name)
                    && matches!(
                        value.kind(),
                        "call"
                            | "attribute"
                            | "identifier"
                            | "subscript"
                            | "conditional_expression"
                    )
                    && value.id() != node.id()
                {
                    let inner = self.resolve_value(value);
                    if !inner.is_empty() && inner.iter().all(|n| is_module_or_callable(n)) {
                        return inner;
                    }
                }
                self.sc.resolve(node)
            }
            "attribute" => {
                let (Some(object), Some(attr)) =
                    (node.field(Field::Object), node.field(Field::Attribute))
                else {
                    return Vec::new();
                };
                let attr = self.sc.text(attr);
                if matches!(
                    object.kind(),
                    "call" | "subscript" | "parenthesized_expression"
                ) || (object.kind() == "identifier"
                    && self.value_of(self.sc.text(object)).is_some())
                {
                    let base = self.resolve(object);
                    if !base.is_empty() {
                        return base.into_iter().map(|b| format!("{b}.{attr}")).collect();
                    }
                }
                self.sc.resolve(node)
            }
            // `a if cond else b`: either.
            "conditional_expression" => {
                let mut c = node.walk();
                let parts: Vec<Node<'s>> = node.named_children(&mut c).collect();
                let mut out = Vec::new();
                for part in [parts.first(), parts.last()].into_iter().flatten() {
                    out.extend(self.resolve(*part));
                }
                out
            }
            "call" => self.resolve_call_result(node),
            "subscript" => {
                // `m.__dict__["n"]`, `vars(m)["n"]`, `__builtins__["n"]`, `globals()["n"]`.
                let (Some(value), Some(index)) =
                    (node.field(Field::Value), node.field(Field::Subscript))
                else {
                    return Vec::new();
                };
                let Some(key) = self.string(index) else {
                    return Vec::new();
                };
                let base = match value.kind() {
                    "attribute"
                        if value
                            .field(Field::Attribute)
                            .is_some_and(|a| self.sc.text(a) == "__dict__") =>
                    {
                        value
                            .field(Field::Object)
                            .map(|o| self.resolve(o))
                            .unwrap_or_default()
                    }
                    _ => {
                        let names = self.resolve(value);
                        if names.iter().any(|n| {
                            matches!(
                                n.as_str(),
                                "__builtins__" | "builtins" | "globals" | "locals" | "vars"
                            )
                        }) {
                            vec!["builtins".to_owned()]
                        } else {
                            // `ctypes.cdll["libc.so.6"]`, `handle["system"]`: a subscript of
                            // a library loader or handle is an attribute (issue 39).
                            names
                                .into_iter()
                                .filter_map(|n| match n.strip_prefix("vars.") {
                                    Some(v) => Some(v.to_owned()),
                                    None => caps::subscript_is_attribute(&n).then_some(n),
                                })
                                .collect()
                        }
                    }
                };
                base.into_iter().map(|b| format!("{b}.{key}")).collect()
            }
            _ => Vec::new(),
        }
    }

    /// What a call expression evaluates to, when it is a module or attribute lookup.
    pub(super) fn resolve_call_result(&self, call: Node<'s>) -> Vec<String> {
        let Some(func) = call.field(Field::Function) else {
            return Vec::new();
        };
        let names = self.resolve(func);
        let args = self.sc.args(call);
        for name in &names {
            match caps::normalize(name).as_str() {
                "__import__" | "importlib.import_module" | "importlib.__import__" => {
                    if let Some(m) = args.positional.first().and_then(|a| self.string(*a)) {
                        return vec![m];
                    }
                }
                "getattr" => {
                    let (Some(obj), Some(attr)) = (args.positional.first(), args.positional.get(1))
                    else {
                        return Vec::new();
                    };
                    let Some(attr) = self.string(*attr) else {
                        return Vec::new();
                    };
                    return self
                        .resolve(*obj)
                        .into_iter()
                        .map(|b| format!("{b}.{attr}"))
                        .collect();
                }
                "vars" => {
                    if let Some(obj) = args.positional.first() {
                        return self
                            .resolve(*obj)
                            .into_iter()
                            .map(|b| format!("vars.{b}"))
                            .collect();
                    }
                }
                "globals" | "locals" => return vec!["globals".to_owned()],
                _ => {}
            }
        }
        // `ctypes.CDLL("libc.so.6")`, `cdll.LoadLibrary(...)`, `ffi.dlopen(None)`: a library
        // handle, whose attributes are C functions (`handle.system(cmd)` runs a process).
        if names
            .iter()
            .any(|n| caps::lookup(n).is_some_and(caps::returns_library))
        {
            return vec![caps::LIBRARY_HANDLE.to_owned()];
        }
        // `_runner()` where `def _runner(): return os.system`: what the file's function returns.
        if func.kind() == "identifier"
            && let Some(defs) = self.functions.get(self.sc.text(func))
            && let Some(body) = defs.first().and_then(|d| d.field(Field::Body))
        {
            let mut c = body.walk();
            let ret = body
                .named_children(&mut c)
                .find(|s| s.kind() == "return_statement")
                .and_then(|r| r.named_child(0));
            if let Some(value) = ret {
                return self.resolve(value);
            }
        }
        Vec::new()
    }

    /// Whether `node` resolves to `name`.
    pub fn resolves_to(&self, node: Node<'s>, name: &str) -> bool {
        // Only the outermost node of a chain: `os.environ` inside `os.environ.copy` counts, `os`
        // inside `os.environ` does not resolve to it anyway.
        if node.kind() == "identifier"
            && self.parent(node).is_some_and(|p| {
                p.kind() == "attribute"
                    && p.field(Field::Attribute).map(|a| a.id()) == Some(node.id())
            })
        {
            return false;
        }
        self.sc
            .resolve(node)
            .iter()
            .any(|n| caps::normalize(n) == name)
    }
}
