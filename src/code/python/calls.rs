//! How a call is seen by the dispatch: its argument list ([`Args`]), the value of a
//! string-ish argument ([`StrVal`]) and the callee patterns of the dispatch tables ([`Callee`],
//! [`Watched`], [`dispatch`]). This is a leaf of `code/python`: it imports nothing from
//! `mod.rs` or its siblings.

use tree_sitter::Node;

/// The keyword (and dictionary key) that makes loaders import code from the model repository.
pub(super) const TRUST_REMOTE_CODE: &str = "trust_remote_code";

/// How the call dispatch recognises a callee from the dotted names
/// [`Bindings`](super::bindings::Bindings) resolves it to (`t.load` after `import torch as t`
/// resolves to `torch.load`). The dispatch tables ([`hub::DOWNLOADS`](super::hub::DOWNLOADS),
/// [`loaders::LOADS`](super::loaders::LOADS)) are lists of these, and the
/// [`prefilter`](super::prefilter) is built from the same tables, so a callee the dispatch
/// reports is always one the pre-filter lets through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Callee {
    /// The name is exactly this (`torch.load`).
    Name(&'static str),
    /// The name's last dotted segment is this (`from_pretrained`, on any object).
    Last(&'static str),
    /// The name ends with this text (`keras.models.load_model` also matches
    /// `tf_keras.models.load_model`).
    EndsWith(&'static str),
    /// The name is `module.function` for one of the modules and one of the functions.
    Product(&'static [&'static str], &'static [&'static str]),
    /// The name is a loader of `knowledge::names::NATIVE_LOADERS` that loads a library by path
    /// (`direct`), in any spelling the one alias table knows (`tf.load_op_library`).
    NativeLoader,
}

impl Callee {
    pub(super) fn matches(&self, name: &str) -> bool {
        match self {
            Callee::Name(n) => name == *n,
            Callee::Last(l) => name.rsplit('.').next().unwrap_or_default() == *l,
            Callee::EndsWith(s) => name.ends_with(s),
            Callee::Product(modules, functions) => name
                .rsplit_once('.')
                .is_some_and(|(m, f)| modules.contains(&m) && functions.contains(&f)),
            Callee::NativeLoader => crate::knowledge::names::native_loader(
                &crate::knowledge::capabilities::normalize(name),
            )
            .is_some_and(|l| l.direct && !l.method),
        }
    }
}

/// One row of a dispatch table: the callees it recognises, the keyword arguments without which
/// it reports nothing (any one of them; empty: none needed), and what the caller does with it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Watched<K: 'static> {
    /// Any of these matching any resolved name selects the row.
    pub callees: &'static [Callee],
    /// The row reports only when one of these keyword arguments is passed.
    pub keywords: &'static [&'static str],
    /// What the row stands for.
    pub kind: K,
}

/// The first row of `table` whose callees match one of `names` decides: its kind, or `None`
/// when it needs a keyword argument the call does not pass. Later rows are not tried.
pub(super) fn dispatch<K: Copy>(
    table: &[Watched<K>],
    names: &[String],
    args: &Args<'_>,
) -> Option<K> {
    let row = table.iter().find(|row| {
        names
            .iter()
            .any(|n| row.callees.iter().any(|c| c.matches(n)))
    })?;
    let keyword_ok =
        row.keywords.is_empty() || row.keywords.iter().any(|k| args.keyword(k).is_some());
    keyword_ok.then_some(row.kind)
}

/// A positional or keyword argument list, as nodes.
pub(super) struct Args<'t> {
    pub(super) node: Option<Node<'t>>,
    pub(super) positional: Vec<Node<'t>>,
    pub(super) keywords: Vec<(&'t str, Node<'t>)>,
    pub(super) splat: Option<Node<'t>>,
}

impl<'t> Args<'t> {
    pub(super) fn keyword(&self, name: &str) -> Option<Node<'t>> {
        self.keywords
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| *v)
    }

    /// The argument at `index` or named by any of `names`.
    pub(super) fn arg(&self, index: usize, names: &[&str]) -> Option<Node<'t>> {
        names
            .iter()
            .find_map(|n| self.keyword(n))
            .or_else(|| self.positional.get(index).copied())
    }
}

/// The value of a string-ish expression.
pub(super) enum StrVal {
    Plain(String),
    Constant { name: String, value: String },
    FString { text: String, prefix: String },
    Other(String),
}
