//! Bounds of PyTorch tensor views, checked from the facts the machine recorded. A view
//! `(storage_offset, size, stride)` reads elements `storage_offset + sum((size[i]-1)*stride[i])`
//! of its storage; `torch.load` trusts the storage's declared element count and, on the
//! versions the 2026 weights-only advisories name, the view as well (issue 16). A view that
//! reaches past its storage, or negative sizes, strides or offsets, is the shape of those
//! heap-corruption exploits; `torch.save` never writes one. All arithmetic is checked: an
//! overflow is out of bounds by definition.

use super::{Shape, Storage, TensorView};
use crate::knowledge::torch_storage_itemsize;

/// The shape of `v` when it does not fit the storage its persistent id declares (`storages`
/// are the stream's storages so far; the storage argument always comes before the call).
pub fn view_shape(v: &TensorView, storages: &[Storage]) -> Option<Shape> {
    let storage = v.storage.and_then(|s| storages.get(s))?;
    // An untyped storage counts bytes and the view counts elements of a dtype that
    // `_rebuild_tensor_v3` passes separately: not comparable without it.
    if storage.type_name.as_deref() == Some("torch.UntypedStorage") {
        return None;
    }
    let (Some(numel), Some(offset), Some(size), Some(stride)) =
        (storage.numel, v.storage_offset, &v.size, &v.stride)
    else {
        return None;
    };
    let why = out_of_bounds(numel, offset, size, stride)?;
    Some(Shape {
        offset: v.offset,
        code: "tensor-view-out-of-bounds",
        message: format!(
            "{} at offset {} builds a view (storage_offset {offset}, size {size:?}, stride {stride:?}) of storage `{}` declared with {numel} element(s): {why}",
            v.function, v.offset, storage.key
        ),
    })
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
