//! Bounds of PyTorch tensor views, checked from the facts the machine recorded. A view
//! `(storage_offset, size, stride)` reads elements `storage_offset + sum((size[i]-1)*stride[i])`
//! of its storage; `torch.load` trusts the storage's declared element count and, on the
//! versions the 2026 weights-only advisories name, the view as well (issue 16). A view that
//! reaches past its storage, or negative sizes, strides or offsets, is the shape of those
//! heap-corruption exploits; `torch.save` never writes one. All arithmetic is checked: an
//! overflow is out of bounds by definition. The storage block of a legacy (non-zip) file is
//! checked here too: [`check_legacy_block`].

use super::analysis::{Analysis, Shape, Storage, TensorView};
use crate::knowledge::{torch_dtype_itemsize, torch_storage_itemsize};
use std::collections::BTreeMap;
use std::io::BufRead;

/// The shape of `v` when it does not fit the storage its persistent id declares (`storages`
/// are the stream's storages so far; the storage argument always comes before the call).
pub fn view_shape(v: &TensorView, storages: &[Storage]) -> Option<Shape> {
    let storage = v.storage.and_then(|s| storages.get(s))?;
    let (Some(offset), Some(size), Some(stride)) = (v.storage_offset, &v.size, &v.stride) else {
        return None;
    };
    let (elements, declared) = view_elements(v, storage)?;
    let why = out_of_bounds(elements, offset, size, stride)?;
    Some(Shape {
        offset: v.offset,
        code: "tensor-view-out-of-bounds",
        message: format!(
            "{} at offset {} builds a view (storage_offset {offset}, size {size:?}, stride {stride:?}) of storage `{}` declared with {declared}: {why}",
            v.function, v.offset, storage.key
        ),
    })
}

/// How many elements of the view's dtype the storage holds, and how to say so. `torch.load`
/// wraps every storage in a typed storage of the declared type (`UntypedStorage` as `uint8`,
/// so its count is bytes); `_rebuild_tensor`, `_rebuild_tensor_v2` and `_rebuild_qtensor`
/// build a tensor of that type, while `_rebuild_tensor_v3` (what torch 2.x writes for float8,
/// uint16 and other newer dtypes, over an `UntypedStorage`) builds one of its `dtype`
/// argument over the same bytes. `None` when the count or a size it needs is unknown.
fn view_elements(v: &TensorView, storage: &Storage) -> Option<(i64, String)> {
    let numel = storage.numel?;
    let Some(dtype) = v
        .dtype
        .as_deref()
        .filter(|_| v.function == "_rebuild_tensor_v3")
    else {
        return Some((numel, format!("{numel} element(s)")));
    };
    let itemsize = torch_dtype_itemsize(dtype)?;
    if numel < 0 {
        return Some((numel, format!("{numel} element(s)")));
    }
    let type_name = storage.type_name.as_deref()?;
    let bytes = storage_bytes(storage)?;
    let elements = i64::try_from(bytes / itemsize).ok()?;
    Some((
        elements,
        format!(
            "{numel} element(s) of `{type_name}` ({bytes} bytes, {elements} element(s) of `{dtype}`)"
        ),
    ))
}

/// Why a view does not fit `numel` elements, or `None` when it does. Mirrors
/// `checkInBoundsForStorage` in ATen: a view with a zero-sized dimension reads nothing.
pub fn out_of_bounds(numel: i64, offset: i64, size: &[i64], stride: &[i64]) -> Option<String> {
    if numel < 0 {
        return Some(format!("the storage declares a negative size ({numel})"));
    }
    if offset < 0 {
        return Some(format!("negative storage_offset {offset}"));
    }
    if size.len() != stride.len() {
        return Some(format!(
            "{} size(s) but {} stride(s)",
            size.len(),
            stride.len()
        ));
    }
    if let Some(s) = size.iter().find(|s| **s < 0) {
        return Some(format!("negative size {s}"));
    }
    if let Some(s) = stride.iter().find(|s| **s < 0) {
        return Some(format!("negative stride {s}"));
    }
    if size.contains(&0) {
        return None;
    }
    // Highest element index read: offset + sum((size - 1) * stride).
    let mut last: i64 = offset;
    for (s, st) in size.iter().zip(stride) {
        let Some(next) = (s - 1).checked_mul(*st).and_then(|d| last.checked_add(d)) else {
            return Some("the extent overflows 64 bits".to_string());
        };
        last = next;
    }
    // `last` is an index; the view needs `last + 1` elements.
    if last >= numel {
        let needed = last.saturating_add(1);
        return Some(format!(
            "it needs {needed} element(s), {} past the end",
            needed.saturating_sub(numel)
        ));
    }
    None
}

/// The byte length `torch.save` writes for a storage: element count times the element size of
/// its type; `None` when the type or count is unknown, negative or overflows.
pub fn storage_bytes(s: &Storage) -> Option<u64> {
    let itemsize = torch_storage_itemsize(s.type_name.as_deref()?)?;
    u64::try_from(s.numel?).ok()?.checked_mul(itemsize)
}

/// What `torch.load(weights_only=True)` refuses in a stream (issue 32): the globals its
/// allowlist does not hold and the opcodes it does not implement, each with the offset of its
/// first use. Empty: the weights-only unpickler accepts every import and opcode.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WeightsOnly {
    /// Refused globals (`module.name`, `?` for a part that is not statically known).
    pub globals: BTreeMap<String, u64>,
    /// Refused opcodes (pickletools names).
    pub opcodes: BTreeMap<&'static str, u64>,
}

impl WeightsOnly {
    /// Whether `torch.load(weights_only=True)` would accept the stream.
    pub fn accepted(&self) -> bool {
        self.globals.is_empty() && self.opcodes.is_empty()
    }

    /// Adds another stream's refusals (first offsets kept).
    pub fn merge(&mut self, other: &WeightsOnly) {
        for (g, at) in &other.globals {
            self.globals.entry(g.clone()).or_insert(*at);
        }
        for (o, at) in &other.opcodes {
            self.opcodes.entry(o).or_insert(*at);
        }
    }

    /// Offset of the first refusal.
    pub fn first_offset(&self) -> Option<u64> {
        self.globals
            .values()
            .chain(self.opcodes.values())
            .min()
            .copied()
    }
}

/// The weights-only verdict of an analysed stream: every import checked with
/// [`crate::knowledge::weights_only_allows`] (`extra.safe` as `add_safe_globals`), every opcode
/// against [`crate::knowledge::WEIGHTS_ONLY_OPCODES`].
pub fn weights_only(a: &Analysis, extra: &crate::knowledge::ExtraLists) -> WeightsOnly {
    let mut out = WeightsOnly::default();
    for imp in &a.imports {
        let allowed = match (&imp.module, &imp.name) {
            (Some(m), Some(n)) => crate::knowledge::weights_only_allows(m, n, extra),
            _ => false,
        };
        if !allowed {
            let name = format!(
                "{}.{}",
                imp.module.as_deref().unwrap_or("?"),
                imp.name.as_deref().unwrap_or("?")
            );
            out.globals.entry(name).or_insert(imp.offset);
        }
    }
    for (op, at) in &a.first_use {
        if !crate::knowledge::WEIGHTS_ONLY_OPCODES.contains(op) {
            out.opcodes.insert(op, *at);
        }
    }
    out
}

/// Pickles `torch.save(..., _use_new_zipfile_serialization=False)` writes before the raw
/// storage block: magic number, protocol version, sys_info, the data, the storage keys.
const LEGACY_PICKLES: usize = 5;

/// Mismatched records reported per legacy file; the walk stops at the next one.
const MAX_LEGACY_SHAPES: usize = 16;

/// Issue 16, legacy (non-zip) PyTorch files: after the five pickles, `torch.load` reads one
/// record per key of the fifth pickle's list, in that order: an 8-byte little-endian element
/// count, then that many elements of the key's declared storage type. It sizes each storage
/// from the declaration in the data pickle, so a record of another size, a block that ends
/// early, bytes after the last record, or a key no persistent id declares is the shape of the
/// heap-corruption exploits (a benign save writes the block exactly). `head` is
/// [`Analysis::trailing_head`]; the rest of the block is read from `r` and skipped, never
/// kept, so a hostile count costs at most the file's own length. Nothing is checked when the
/// pickles themselves did not parse (that is already a finding) or when a storage type is
/// unknown (its records cannot be sized).
pub fn check_legacy_block(a: &Analysis, r: &mut dyn BufRead, max_storages: usize) -> Vec<Shape> {
    let mut shapes = Vec::new();
    if a.error.is_some() {
        return shapes;
    }
    let start = a.pickles.get(LEGACY_PICKLES - 1).map(|p| p.end);
    let keys = a
        .string_list
        .as_ref()
        .filter(|l| l.pickle == LEGACY_PICKLES - 1);
    let (Some(start), Some(keys), LEGACY_PICKLES) = (start, keys, a.pickles.len()) else {
        shapes.push(Shape {
            offset: a.pickles.last().map(|p| p.end).unwrap_or(0),
            code: "legacy-layout",
            message: format!(
                "legacy PyTorch file holds {} pickle(s){}; torch.load reads five (magic number, protocol, sys_info, data, a list of storage keys) and then raw storage bytes",
                a.pickles.len(),
                if a.pickles.len() >= LEGACY_PICKLES {
                    " and the fifth is no list of storage keys"
                } else {
                    ""
                }
            ),
        });
        return shapes;
    };
    if a.storages.len() >= max_storages {
        // Storages past the cap were not recorded: a key could look undeclared.
        return shapes;
    }
    // First declaration wins, as in `torch.load`'s `deserialized_objects`.
    let mut declared = std::collections::HashMap::new();
    for s in &a.storages {
        declared.entry(s.key.as_str()).or_insert(s);
    }
    let mut block = Block {
        head: &a.trailing_head,
        r,
        pos: start,
    };
    for key in &keys.items {
        let at = block.pos;
        let Some(storage) = declared.get(key.as_str()) else {
            shapes.push(Shape {
                offset: at,
                code: "storage-missing",
                message: format!(
                    "the storage key list names `{key}`, which no persistent id of the data pickle declares; its record at offset {at} cannot be sized"
                ),
            });
            return shapes;
        };
        let Some(itemsize) = storage
            .type_name
            .as_deref()
            .and_then(torch_storage_itemsize)
        else {
            return shapes;
        };
        let type_name = storage.type_name.as_deref().unwrap_or("?");
        let count = match block.read_u64() {
            Ok(Some(n)) => n,
            Ok(None) => {
                shapes.push(truncated(key, at));
                return shapes;
            }
            Err(_) => return shapes,
        };
        let numel = storage.numel.and_then(|n| u64::try_from(n).ok());
        if numel != Some(count) {
            if shapes.len() >= MAX_LEGACY_SHAPES {
                return shapes;
            }
            shapes.push(Shape {
                offset: at,
                code: "storage-size-mismatch",
                message: format!(
                    "storage `{key}` is declared as {} element(s) of `{type_name}` but its record at offset {at} holds {count}",
                    storage.numel.unwrap_or_default()
                ),
            });
        }
        let Some(bytes) = count.checked_mul(itemsize) else {
            shapes.push(truncated(key, at));
            return shapes;
        };
        match block.skip(bytes) {
            Ok(n) if n == bytes => {}
            Ok(_) => {
                shapes.push(truncated(key, at));
                return shapes;
            }
            Err(_) => return shapes,
        }
    }
    let end = block.pos;
    if let Ok(extra @ 1..) = block.skip(u64::MAX) {
        shapes.push(Shape {
            offset: end,
            code: "storage-block-trailing",
            message: format!(
                "{extra} byte(s) follow the last storage record at offset {end}; torch.save writes none, and a loader that sizes storages differently reads them"
            ),
        });
    }
    shapes
}

fn truncated(key: &str, at: u64) -> Shape {
    Shape {
        offset: at,
        code: "storage-block-truncated",
        message: format!(
            "the file ends inside the record of storage `{key}` at offset {at}: fewer bytes than its declared size"
        ),
    }
}

/// The storage block: the bytes the pickle reader already took, then the reader.
struct Block<'a> {
    head: &'a [u8],
    r: &'a mut dyn BufRead,
    pos: u64,
}

impl Block<'_> {
    /// The next buffered bytes (empty at end of stream).
    fn fill(&mut self) -> std::io::Result<&[u8]> {
        if self.head.is_empty() {
            self.r.fill_buf()
        } else {
            Ok(self.head)
        }
    }

    fn consume(&mut self, n: usize) {
        if self.head.is_empty() {
            self.r.consume(n);
        } else {
            self.head = self.head.get(n..).unwrap_or_default();
        }
        self.pos = self.pos.saturating_add(n as u64);
    }

    /// An 8-byte little-endian count; `None` when the stream ends first.
    fn read_u64(&mut self) -> std::io::Result<Option<u64>> {
        let mut buf = [0u8; 8];
        let mut have = 0;
        while have < buf.len() {
            let chunk = self.fill()?;
            if chunk.is_empty() {
                return Ok(None);
            }
            let n = chunk.len().min(buf.len() - have);
            if let (Some(dst), Some(src)) = (buf.get_mut(have..have + n), chunk.get(..n)) {
                dst.copy_from_slice(src);
            }
            self.consume(n);
            have += n;
        }
        Ok(Some(u64::from_le_bytes(buf)))
    }

    /// Skip up to `n` bytes; returns how many there were.
    fn skip(&mut self, n: u64) -> std::io::Result<u64> {
        let mut done = 0u64;
        while done < n {
            let available = self.fill()?.len();
            if available == 0 {
                break;
            }
            let take = usize::try_from(n - done).map_or(available, |left| left.min(available));
            self.consume(take);
            done += take as u64;
        }
        Ok(done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_views_that_fit() {
        assert_eq!(out_of_bounds(4, 0, &[4], &[1]), None);
        assert_eq!(out_of_bounds(12, 0, &[3, 4], &[4, 1]), None);
        assert_eq!(out_of_bounds(12, 2, &[5], &[2]), None);
        // Transposed and broadcast (stride 0) views.
        assert_eq!(out_of_bounds(12, 0, &[4, 3], &[1, 4]), None);
        assert_eq!(out_of_bounds(1, 0, &[1000, 1000], &[0, 0]), None);
        // Scalars and empty tensors.
        assert_eq!(out_of_bounds(1, 0, &[], &[]), None);
        assert_eq!(out_of_bounds(0, 0, &[0, 5], &[5, 1]), None);
        assert_eq!(out_of_bounds(0, 7, &[0], &[1]), None);
    }

    #[test]
    fn rejects_views_past_the_storage() {
        let m = out_of_bounds(4, 0, &[5], &[1]).unwrap();
        assert!(m.contains("needs 5 element(s), 1 past the end"), "{m}");
        assert!(out_of_bounds(4, 4, &[1], &[1]).is_some());
        assert!(out_of_bounds(4, 0, &[2], &[4]).is_some());
        assert!(out_of_bounds(0, 0, &[], &[]).is_some());
        assert!(
            out_of_bounds(4, 0, &[2, 2], &[i64::MAX, 1])
                .unwrap()
                .contains("overflows")
        );
        assert!(
            out_of_bounds(4, -1, &[1], &[1])
                .unwrap()
                .contains("negative")
        );
        assert!(
            out_of_bounds(4, 0, &[-1], &[1])
                .unwrap()
                .contains("negative")
        );
        assert!(
            out_of_bounds(4, 0, &[2], &[-1])
                .unwrap()
                .contains("negative")
        );
        assert!(
            out_of_bounds(4, 0, &[2], &[1, 1])
                .unwrap()
                .contains("stride")
        );
        assert!(out_of_bounds(-4, 0, &[], &[]).is_some());
    }

    #[test]
    fn sizes_storages_by_type() {
        let s = |t: &str, n: i64| Storage {
            offset: 0,
            key: "0".into(),
            type_name: Some(t.into()),
            numel: Some(n),
        };
        assert_eq!(storage_bytes(&s("torch.FloatStorage", 4)), Some(16));
        assert_eq!(storage_bytes(&s("torch.BFloat16Storage", 4)), Some(8));
        assert_eq!(storage_bytes(&s("torch.UntypedStorage", 9)), Some(9));
        assert_eq!(storage_bytes(&s("torch.NotAStorage", 4)), None);
        assert_eq!(storage_bytes(&s("torch.FloatStorage", -1)), None);
        assert_eq!(
            storage_bytes(&s("torch.ComplexDoubleStorage", i64::MAX)),
            None
        );
    }
}
