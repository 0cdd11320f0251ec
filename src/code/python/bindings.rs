//! Pass 1 of the scan and name resolution: import aliases and module-level constants, so that
//! `import torch as t` makes `t.load` a `torch.load` and `REV = "…"` pins a later download.

use super::field::{Field, Fields};

use tree_sitter::Node;

use super::calls::StrVal;
use super::scanner::{Bindings, Const, Scanner};
use super::tree::{Kind, walk};

impl Bindings {
    fn len(&self) -> usize {
        self.aliases
            .len()
            .saturating_add(self.assigned.len())
            .saturating_add(self.wildcards.len())
    }

    /// The names an import bound `name` to, if it is an import alias (`sp` after
    /// `import subprocess as sp`).
    pub(super) fn alias(&self, name: &str) -> Option<&[String]> {
        self.aliases.get(name).map(Vec::as_slice)
    }

    /// Whether any import binds a name to `module` or something under it.
    pub(super) fn imports_module(&self, module: &str) -> bool {
        self.aliases.values().flatten().any(|t| {
            t.strip_prefix(module)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
        }) || self.wildcards.iter().any(|w| w == module)
    }

    /// Whether some import binds a name to a target whose last segment is `segment`
    /// (`l` after `from pickle import loads as l`).
    pub(super) fn imports_segment(&self, segment: &str) -> bool {
        self.aliases
            .values()
            .flatten()
            .any(|t| t.rsplit('.').next() == Some(segment))
    }

    /// How many assignments to `name` the file makes (any scope).
    pub(super) fn assignments(&self, name: &str) -> u32 {
        self.assigned.get(name).map_or(0, |(n, _)| *n)
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

/// Conventional aliases used when a notebook cell or snippet never imports them (the one
/// table, in the knowledge base).
pub(super) use crate::knowledge::names::CONVENTIONAL_IMPORTS as CONVENTIONAL_ALIASES;

impl<'s> Scanner<'s, '_> {
    // ---- pass 1: imports and assignments ------------------------------------------------

    /// Returns false when a limit stopped the pass.
    pub(super) fn collect_bindings(&mut self, root: Node<'s>) -> bool {
        let mut ok = true;
        let mut found: Vec<Node<'s>> = Vec::new();
        let strings = self.recovered_strings(root);
        walk(root, |node| {
            if !self.count_node() {
                ok = false;
                return false;
            }
            if super::prefilter::is_quiet(&strings, node.start_byte()) {
                return true;
            }
            if matches!(
                Kind::of(node),
                Kind::ImportStatement
                    | Kind::ImportFromStatement
                    | Kind::Assignment
                    | Kind::AugmentedAssignment
            ) {
                found.push(node);
            }
            true
        });
        self.bind_nodes(found);
        ok
    }

    /// Binds the imports and assignments found by a walk, in source order, up to the
    /// binding budget.
    pub(super) fn bind_nodes(&mut self, found: Vec<Node<'s>>) {
        for node in found {
            if self.bindings.len() >= self.limits.max_bindings {
                self.stop("binding-budget");
                return;
            }
            match node.kind() {
                "import_statement" => self.bind_import(node),
                "import_from_statement" => self.bind_from_import(node),
                "assignment" => self.bind_assignment(node),
                _ => {
                    if let Some(left) = node.field(Field::Left) {
                        self.note_targets(left, None);
                    }
                }
            }
        }
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
        let names: Vec<Node<'s>> = node.fields(Field::Name, &mut cursor);
        for name in names {
            match name.kind() {
                // `import torch.hub` binds `torch`.
                "dotted_name" => {
                    let first = self.dotted(name);
                    let first = first.split('.').next().unwrap_or_default();
                    self.add_alias(first, first.to_owned());
                }
                "aliased_import" => {
                    let (Some(target), Some(alias)) =
                        (name.field(Field::Name), name.field(Field::Alias))
                    else {
                        continue;
                    };
                    let target = self.dotted(target);
                    self.add_alias(self.text(alias), target);
                }
                _ => {}
            }
        }
    }

    fn bind_from_import(&mut self, node: Node<'s>) {
        let Some(module) = node.field(Field::ModuleName) else {
            return;
        };
        // Relative imports name the repository's own modules, never a library we track.
        if module.kind() != "dotted_name" {
            return;
        }
        let module = self.dotted(module);
        let mut cursor = node.walk();
        let wildcard = node
            .named_children(&mut cursor)
            .any(|c| c.kind() == "wildcard_import");
        if wildcard && !self.bindings.wildcards.contains(&module) {
            self.bindings.wildcards.push(module.clone());
        }
        let names: Vec<Node<'s>> = node.fields(Field::Name, &mut cursor);
        for name in names {
            let (target, local) = match name.kind() {
                "dotted_name" => (name, name),
                "aliased_import" => {
                    let (Some(target), Some(alias)) =
                        (name.field(Field::Name), name.field(Field::Alias))
                    else {
                        continue;
                    };
                    (target, alias)
                }
                _ => continue,
            };
            let target = self.dotted(target);
            let local = self.dotted(local);
            self.add_alias(&local, format!("{module}.{target}"));
        }
    }

    /// A dotted name as its identifiers joined with `.`. tree-sitter allows whitespace, line
    /// continuations and (inside parentheses) comments between the parts; none of them is part
    /// of the name. Every segment of a name is thus an identifier of the source, which the
    /// pre-filter relies on.
    fn dotted(&self, node: Node<'s>) -> String {
        if node.kind() != "dotted_name" {
            return self.text(node).to_owned();
        }
        let mut cursor = node.walk();
        let parts: Vec<&str> = node
            .named_children(&mut cursor)
            .filter(|c| c.kind() == "identifier")
            .map(|c| self.text(c))
            .collect();
        parts.join(".")
    }

    fn bind_assignment(&mut self, node: Node<'s>) {
        let Some(left) = node.field(Field::Left) else {
            return;
        };
        let module_level = node
            .parent()
            .filter(|p| p.kind() == "expression_statement")
            .and_then(|p| p.parent())
            .is_some_and(|g| g.kind() == "module");
        let value = if module_level && left.kind() == "identifier" {
            node.field(Field::Right)
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
    pub(super) fn string_value(&self, node: Node<'s>) -> StrVal {
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
    pub(super) fn bool_value(&self, node: Node<'s>) -> Option<bool> {
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

    /// The names a callee may stand for, after import aliases.
    pub(super) fn resolve(&self, func: Node<'s>) -> Vec<String> {
        let mut segments: Vec<&'s str> = Vec::new();
        let mut node = func;
        loop {
            match node.kind() {
                "identifier" => {
                    segments.push(self.text(node));
                    break;
                }
                "attribute" => {
                    let (Some(object), Some(attr)) =
                        (node.field(Field::Object), node.field(Field::Attribute))
                    else {
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
}

#[cfg(test)]
mod tests {
    use super::super::tests::*;
    use super::super::*;

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
}
