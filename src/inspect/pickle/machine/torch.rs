//! PyTorch structures the machine records as facts: storages named by persistent ids, tensor
//! views built by `torch._utils._rebuild_tensor*`, and writes into values that are not
//! containers. The 2026 weights-only heap-corruption advisories (issue 16) ship a view that
//! reaches past its storage, or SETITEM/APPEND/BUILD aimed at a global instead of a dict or
//! list; a benign `torch.save` writes neither. The machine only records what the stream says;
//! [`crate::inspect::pickle::torch`] checks the numbers.

use super::state::{Machine, Val};
use crate::inspect::pickle::analysis::{Analysis, Shape, Storage, TensorView};
use crate::inspect::pickle::ops::Op;
use crate::inspect::pickle::torch::view_shape;
use crate::knowledge::normalize_module;

/// Longest storage key kept (torch writes short decimal keys).
const MAX_KEY_LEN: usize = 64;

/// Tensor views kept as facts per stream (every view is checked; only these are kept).
const MAX_VIEWS_KEPT: usize = 1024;

/// The rebuild functions whose first four arguments are `(storage, storage_offset, size,
/// stride)` (`torch/_utils.py`; `_rebuild_qtensor` for quantized tensors).
const REBUILDERS: &[&str] = &[
    "_rebuild_tensor",
    "_rebuild_tensor_v2",
    "_rebuild_tensor_v3",
    "_rebuild_qtensor",
];

impl Machine<'_> {
    /// BINPERSID on `('storage', type, key, location, numel, ...)`: a [`Storage`] fact, and a
    /// value that stands for it. Anything else is an opaque persistent id.
    pub(super) fn persistent_storage(&self, pid: &Val, at: u64, out: &mut Analysis) -> Val {
        let opaque = Val::Other("persistent-id");
        let Some(items) = self.seq_items(pid) else {
            return opaque;
        };
        let (Some(Val::Str(tag)), Some(ty), Some(Val::Str(key))) =
            (items.first(), items.get(1), items.get(2))
        else {
            return opaque;
        };
        if tag.value != "storage" || out.storages.len() >= self.limits.max_imports {
            return opaque;
        }
        let type_name = global_name(ty, out);
        let numel = match items.get(4) {
            Some(Val::Int(n)) => Some(*n),
            _ => None,
        };
        // torch writes decimal keys; a longer one is kept cut (and then names no member).
        let mut key_text = key.value.clone();
        if key_text.len() > MAX_KEY_LEN || !key.complete {
            let cut = (0..=MAX_KEY_LEN)
                .rev()
                .find(|i| key_text.is_char_boundary(*i))
                .unwrap_or(0);
            key_text.truncate(cut);
            key_text.push('…');
        }
        out.storages.push(Storage {
            offset: at,
            key: key_text,
            type_name,
            numel,
        });
        Val::Storage(out.storages.len() - 1)
    }

    /// REDUCE of a rebuild function: record the view it builds.
    pub(super) fn record_view(&self, callable: &Val, args: &Val, at: u64, out: &mut Analysis) {
        let Val::Global(i) = callable else {
            return;
        };
        let Some(function) = out.imports.get(*i).and_then(|imp| {
            let module = normalize_module(imp.module.as_deref()?);
            let name = imp.name.as_deref()?;
            (module == "torch._utils")
                .then(|| REBUILDERS.iter().copied().find(|r| *r == name))
                .flatten()
        }) else {
            return;
        };
        let items = self.seq_items(args).unwrap_or(&[]);
        let storage = match items.first() {
            Some(Val::Storage(s)) => Some(*s),
            _ => None,
        };
        let storage_offset = match items.get(1) {
            Some(Val::Int(n)) => Some(*n),
            _ => None,
        };
        let view = TensorView {
            offset: at,
            function,
            storage,
            storage_offset,
            size: items.get(2).and_then(|v| self.ints(v)),
            stride: items.get(3).and_then(|v| self.ints(v)),
            // `_rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad,
            // backward_hooks, dtype, metadata=None)`.
            dtype: (function == "_rebuild_tensor_v3")
                .then(|| items.get(6).and_then(|v| global_name(v, out)))
                .flatten(),
        };
        // Checked here, against the storages declared so far, so that only the views that do
        // not fit (bounded like imports) and the first few that do are kept in memory.
        if let Some(shape) = view_shape(&view, &out.storages)
            && out.shapes.len() < self.limits.max_imports
        {
            out.shapes.push(shape);
        }
        if out.views.len() < MAX_VIEWS_KEPT {
            out.views.push(view);
        }
    }

    /// APPEND(S), SETITEM(S), ADDITEMS and BUILD write into the value below their arguments.
    /// CPython's `do_append`/`do_setitems` call `extend`/`append`/`__setitem__` on whatever is
    /// there, and BUILD calls `__setstate__` or `setattr`. Aimed at a global (a function, class
    /// or module itself) or a storage, that rewrites loader state; aimed at a string, number or
    /// None it is no container at all. Objects built by a call (an `OrderedDict()`, a
    /// `defaultdict`) and tracked containers are what real pickles fill.
    pub(super) fn check_target(&self, target: &Val, op: Op, at: u64, out: &mut Analysis) {
        let what = match target {
            Val::Global(i) => match out.imports.get(*i) {
                Some(imp) => format!(
                    "the global `{}.{}` itself (a function, class or module), not an instance",
                    imp.module.as_deref().unwrap_or("?"),
                    imp.name.as_deref().unwrap_or("?")
                ),
                None => "a global".to_string(),
            },
            Val::Storage(s) => match out.storages.get(*s) {
                Some(st) => format!("the tensor storage `{}`", st.key),
                None => "a tensor storage".to_string(),
            },
            Val::Str(_) | Val::Int(_) | Val::PyNone if op != Op::Build => {
                format!("a {} value", target.describe())
            }
            _ => return,
        };
        if out.shapes.len() >= self.limits.max_imports {
            return;
        }
        let verb = if op == Op::Build {
            "sets state on"
        } else {
            "writes items into"
        };
        out.shapes.push(Shape {
            offset: at,
            code: "non-container-target",
            message: format!(
                "{op} at offset {at} {verb} {what}; benign pickles only fill dicts, lists and objects they built"
            ),
        });
    }

    /// A tracked tuple of integers (cut at the container cap, so a longer one is `None`).
    fn ints(&self, v: &Val) -> Option<Vec<i64>> {
        let items = self.seq_items(v)?;
        if items.len() >= self.limits.max_container_items {
            return None;
        }
        items
            .iter()
            .map(|i| match i {
                Val::Int(n) => Some(*n),
                _ => None,
            })
            .collect()
    }
}

/// `module.name` of a resolved global (module normalised), e.g. `torch.FloatStorage`.
fn global_name(v: &Val, out: &Analysis) -> Option<String> {
    let Val::Global(i) = v else {
        return None;
    };
    let imp = out.imports.get(*i)?;
    let (m, n) = (imp.module.as_deref()?, imp.name.as_deref()?);
    Some(format!("{}.{n}", normalize_module(m)))
}
