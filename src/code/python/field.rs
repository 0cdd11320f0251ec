//! Field ids of the Python grammar, looked up once. `Node::child_by_field_name` finds the id
//! of its name by comparing it with every field name of the grammar at each call (`strncmp`
//! in a loop); the judges ask for a field at nearly every node they visit, so that search was
//! a fifth of the behaviour judge's time on small files (issue 37).

use std::num::NonZeroU16;
use std::sync::LazyLock;

use tree_sitter::{Node, TreeCursor};

/// A field of the Python grammar that the judges read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Field {
    Alias,
    Arguments,
    Attribute,
    Body,
    Function,
    Key,
    Left,
    ModuleName,
    Name,
    Object,
    Operator,
    Right,
    Subscript,
    Value,
}

impl Field {
    /// Every field, in the order of [`Field::name`]'s table.
    const ALL: [Field; 14] = [
        Field::Alias,
        Field::Arguments,
        Field::Attribute,
        Field::Body,
        Field::Function,
        Field::Key,
        Field::Left,
        Field::ModuleName,
        Field::Name,
        Field::Object,
        Field::Operator,
        Field::Right,
        Field::Subscript,
        Field::Value,
    ];

    /// The grammar's name for the field.
    fn name(self) -> &'static str {
        match self {
            Field::Alias => "alias",
            Field::Arguments => "arguments",
            Field::Attribute => "attribute",
            Field::Body => "body",
            Field::Function => "function",
            Field::Key => "key",
            Field::Left => "left",
            Field::ModuleName => "module_name",
            Field::Name => "name",
            Field::Object => "object",
            Field::Operator => "operator",
            Field::Right => "right",
            Field::Subscript => "subscript",
            Field::Value => "value",
        }
    }

    /// The grammar's id for the field (`None` only if the grammar lost the field, which a test
    /// rules out for the one we build with).
    fn id(self) -> Option<NonZeroU16> {
        IDS[self as usize]
    }
}

/// [`Field::id`] of every field, by [`Field`] discriminant.
static IDS: LazyLock<[Option<NonZeroU16>; 14]> = LazyLock::new(|| {
    let language: tree_sitter::Language = tree_sitter_python::LANGUAGE.into();
    Field::ALL.map(|f| language.field_id_for_name(f.name()))
});

/// Field access by [`Field`] on tree-sitter nodes.
pub(crate) trait Fields<'t> {
    /// The child in `field`, as [`Node::child_by_field_name`] gives it.
    fn field(&self, field: Field) -> Option<Node<'t>>;
    /// The children in `field`, as [`Node::children_by_field_name`] gives them.
    fn fields(&self, field: Field, cursor: &mut TreeCursor<'t>) -> Vec<Node<'t>>;
}

impl<'t> Fields<'t> for Node<'t> {
    fn field(&self, field: Field) -> Option<Node<'t>> {
        self.child_by_field_id(field.id()?.get())
    }

    fn fields(&self, field: Field, cursor: &mut TreeCursor<'t>) -> Vec<Node<'t>> {
        match field.id() {
            Some(id) => self.children_by_field_id(id, cursor).collect(),
            None => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_is_in_the_grammar_and_reads_like_its_name() {
        for f in Field::ALL {
            assert!(f.id().is_some(), "{f:?}");
            assert_eq!(Field::ALL[f as usize], f);
        }
        let src = "import a.b as c\nx = f(y)[k] + obj.attr\ndef g(): pass\n";
        let mut parser = tree_sitter::Parser::new();
        parser
            .set_language(&tree_sitter_python::LANGUAGE.into())
            .unwrap();
        let tree = parser.parse(src, None).unwrap();
        let mut stack = vec![tree.root_node()];
        let mut checked = 0;
        while let Some(node) = stack.pop() {
            for f in Field::ALL {
                assert_eq!(node.field(f), node.child_by_field_name(f.name()), "{f:?}");
                let mut c1 = node.walk();
                let mut c2 = node.walk();
                let by_id = node.fields(f, &mut c1);
                let by_name: Vec<_> = node.children_by_field_name(f.name(), &mut c2).collect();
                assert_eq!(by_id, by_name, "{f:?}");
                checked += 1;
            }
            let mut cursor = node.walk();
            stack.extend(node.children(&mut cursor));
        }
        assert!(checked > 100);
    }
}
