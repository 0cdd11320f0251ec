//! The whole-tree walks over a parsed source: the node kinds they look for ([`Kind`]) and
//! the iterative pre-order walks ([`walk`], [`walk_with_parents`]). This is a leaf of
//! `code/python`: it imports nothing from `mod.rs` or its siblings.

use std::sync::LazyLock;

use tree_sitter::Node;

/// The node kinds the whole-tree walks look for. The walks visit every node of every parsed
/// file; looking the kind up by id in [`KINDS`] spares a C-string name per node (issue 22).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Call,
    Pair,
    ImportStatement,
    ImportFromStatement,
    Assignment,
    AugmentedAssignment,
    Other,
}

impl Kind {
    pub(super) fn of_name(name: &str) -> Kind {
        match name {
            "call" => Kind::Call,
            "pair" => Kind::Pair,
            "import_statement" => Kind::ImportStatement,
            "import_from_statement" => Kind::ImportFromStatement,
            "assignment" => Kind::Assignment,
            "augmented_assignment" => Kind::AugmentedAssignment,
            _ => Kind::Other,
        }
    }

    /// The kind of `node`: by the same name as [`Node::kind`], looked up by id.
    pub(super) fn of(node: Node<'_>) -> Kind {
        KINDS
            .get(usize::from(node.kind_id()))
            .copied()
            .unwrap_or_else(|| Kind::of_name(node.kind()))
    }
}

/// [`Kind`] by node kind id, for every id of the grammar (aliases included).
static KINDS: LazyLock<Vec<Kind>> = LazyLock::new(|| {
    let language: tree_sitter::Language = tree_sitter_python::LANGUAGE.into();
    (0..language.node_kind_count())
        .map(|id| {
            u16::try_from(id)
                .ok()
                .and_then(|id| language.node_kind_for_id(id))
                .map_or(Kind::Other, Kind::of_name)
        })
        .collect()
});

/// Calls the iterative pre-order walk over `root`; `visit` returns false to stop.
pub(super) fn walk<'t>(root: Node<'t>, mut visit: impl FnMut(Node<'t>) -> bool) {
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

/// [`walk`] that also hands each node its parent (`None` for `root`), from a stack the walk
/// keeps: tree-sitter's `Node::parent` searches down from the root, a cost that grows with the
/// depth of the node (issue 37).
/// `visit` gets the node's ancestors, root first (its depth is their count).
pub(super) fn walk_with_parents<'t>(
    root: Node<'t>,
    mut visit: impl FnMut(Node<'t>, &[Node<'t>]) -> bool,
) {
    let mut cursor = root.walk();
    let mut ancestors: Vec<Node<'t>> = Vec::new();
    loop {
        let node = cursor.node();
        if !visit(node, &ancestors) {
            return;
        }
        if cursor.goto_first_child() {
            ancestors.push(node);
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return;
            }
            ancestors.pop();
        }
    }
}
