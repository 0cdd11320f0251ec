//! joblib's arrays: `NumpyUnpickler.load_build` reads a numpy array's raw bytes (or, for object
//! arrays, a whole nested pickle) straight from the stream after the BUILD of a
//! `NumpyArrayWrapper`. The machine must skip exactly those bytes, sized from the wrapper's
//! state (dtype, shape, alignment), or it would read array data as opcodes.

use std::io::BufRead;

use super::state::{Machine, Node, Saved, Val, err};
use crate::inspect::pickle::analysis::{Analysis, Malformed, RawRegion};
use crate::inspect::pickle::ops::Source;
use crate::knowledge::normalize_module;

/// Modules whose `NumpyArrayWrapper` is joblib's: the package and scikit-learn's vendored copy.
const JOBLIB_PICKLE_MODULES: &[&str] = &[
    "joblib.numpy_pickle",
    "sklearn.externals.joblib.numpy_pickle",
];

impl Machine<'_> {
    /// joblib's `NumpyUnpickler.load_build`: after BUILD on a `NumpyArrayWrapper`, the array's
    /// raw bytes (or, for object arrays, a whole nested pickle) follow in the stream.
    pub(super) fn after_build<R: BufRead>(
        &mut self,
        src: &mut Source<'_, R>,
        inst: &Val,
        state: &Val,
        at: u64,
        out: &mut Analysis,
    ) -> Result<(), Malformed> {
        if self.nested.is_some() {
            return Ok(());
        }
        let Val::Obj { class: Some(c), .. } = inst else {
            return Ok(());
        };
        // scikit-learn < 0.23 vendored joblib as `sklearn.externals.joblib`; its dumps (issue 15,
        // cause 6) carry the same wrapper and the same array bytes after it.
        if !JOBLIB_PICKLE_MODULES
            .iter()
            .any(|m| self.import_is(out, *c, m, "NumpyArrayWrapper"))
        {
            return Ok(());
        }
        let layout = self.joblib_layout(state, out).map_err(|why| {
            err(
                at,
                "joblib-array-unsized",
                format!("NumpyArrayWrapper built at offset {at}: {why}"),
            )
        })?;
        match layout {
            JoblibLayout::Object => {
                let saved = Saved {
                    stack: std::mem::take(&mut self.stack),
                    marks: std::mem::take(&mut self.marks),
                    memo: std::mem::take(&mut self.memo),
                };
                self.nested = Some(Box::new(saved));
            }
            JoblibLayout::Raw { padded, len } => {
                let start = src.pos;
                let mut total = len;
                if padded {
                    let Some(pad) = src.next_byte()? else {
                        return Err(err(
                            src.pos,
                            "truncated",
                            format!("stream ends at offset {} before joblib padding", src.pos),
                        ));
                    };
                    let skipped = src.skip(u64::from(pad))?;
                    if skipped < u64::from(pad) {
                        return Err(err(
                            src.pos,
                            "truncated",
                            format!("stream ends at offset {} inside joblib padding", src.pos),
                        ));
                    }
                    total = total.saturating_add(1 + u64::from(pad));
                }
                let skipped = src.skip(len)?;
                if skipped < len {
                    return Err(err(
                        src.pos,
                        "truncated",
                        format!(
                            "stream ends at offset {} inside a {len}-byte joblib array",
                            src.pos
                        ),
                    ));
                }
                out.raw_regions.push(RawRegion {
                    offset: start,
                    len: total,
                    kind: "joblib-array",
                });
                self.replace_top(Val::Other("joblib-array"));
            }
        }
        Ok(())
    }

    fn import_is(&self, out: &Analysis, idx: usize, module: &str, name: &str) -> bool {
        out.imports.get(idx).is_some_and(|imp| {
            imp.module.as_deref().map(normalize_module).as_deref() == Some(module)
                && imp.name.as_deref() == Some(name)
        })
    }

    fn dict_get(&self, dict: &Val, key: &str) -> Option<Val> {
        let Val::Node(id) = dict else {
            return None;
        };
        let Some(Node::Dict(pairs)) = self.nodes.get(*id) else {
            return None;
        };
        pairs.iter().find_map(|(k, v)| match k {
            Val::Str(t) if t.value == key => Some(v.clone()),
            _ => None,
        })
    }

    /// The items of a tracked tuple or list.
    pub(super) fn seq_items(&self, v: &Val) -> Option<&[Val]> {
        match v {
            Val::Node(id) => match self.nodes.get(*id) {
                Some(Node::Seq(items)) => Some(items),
                _ => None,
            },
            _ => None,
        }
    }

    fn joblib_layout(&self, state: &Val, out: &Analysis) -> Result<JoblibLayout, String> {
        let dtype = self.dict_get(state, "dtype").ok_or("state has no dtype")?;
        let Val::Obj {
            class: Some(c),
            node: Some(n),
        } = dtype
        else {
            return Err("dtype is not a numpy.dtype object".into());
        };
        if !self.import_is(out, c, "numpy", "dtype") {
            return Err("dtype is not built by numpy.dtype".into());
        }
        let Some(Node::Obj {
            args,
            state: dstate,
        }) = self.nodes.get(n)
        else {
            return Err("dtype is not tracked".into());
        };
        let descr = args
            .as_ref()
            .and_then(|a| self.seq_items(a))
            .and_then(|items| items.first())
            .and_then(|v| match v {
                Val::Str(t) => Some(t.value.clone()),
                _ => None,
            })
            .ok_or("dtype has no type string")?;
        let dstate = dstate
            .as_ref()
            .and_then(|s| self.seq_items(s))
            .unwrap_or_default();
        let int_at = |i: usize| match dstate.get(i) {
            Some(Val::Int(v)) => Some(*v),
            _ => None,
        };
        let has_object = int_at(7).is_some_and(|flags| flags & 1 == 1) || descr.starts_with('O');
        if has_object {
            return Ok(JoblibLayout::Object);
        }
        let itemsize = match int_at(5) {
            Some(elsize) if elsize >= 0 => u64::try_from(elsize).map_err(|_| "bad elsize")?,
            _ => itemsize_of(&descr).ok_or_else(|| format!("unknown dtype {descr:?}"))?,
        };
        let shape = self.dict_get(state, "shape").ok_or("state has no shape")?;
        let dims = self.seq_items(&shape).ok_or("shape is not a tuple")?;
        let mut count: u64 = 1;
        for d in dims {
            let Val::Int(d) = d else {
                return Err("shape holds a non-integer".into());
            };
            let d = u64::try_from(*d).map_err(|_| "shape holds a negative dimension")?;
            count = count.checked_mul(d).ok_or("element count overflows")?;
        }
        let len = count.checked_mul(itemsize).ok_or("byte size overflows")?;
        let padded = matches!(
            self.dict_get(state, "numpy_array_alignment_bytes"),
            Some(v) if !matches!(v, Val::PyNone)
        );
        Ok(JoblibLayout::Raw { padded, len })
    }
}

enum JoblibLayout {
    Object,
    Raw { padded: bool, len: u64 },
}

/// numpy type string (`<f4`, `i8`, `b1`, `c16`, `M8`, `S10`, `U5`, `V16`) -> bytes per item.
pub(super) fn itemsize_of(descr: &str) -> Option<u64> {
    let d = descr.trim_start_matches(['<', '>', '|', '=']);
    let kind = d.chars().next()?;
    let digits: String = d.chars().skip(1).take_while(char::is_ascii_digit).collect();
    let n: u64 = digits.parse().ok()?;
    match kind {
        'U' => n.checked_mul(4),
        'b' | 'i' | 'u' | 'f' | 'c' | 'M' | 'm' | 'S' | 'V' | 'a' => Some(n),
        _ => None,
    }
}
