//! Element sizes of PyTorch's storage types and dtypes, to check a storage's declared element
//! count against the bytes its record holds.

/// Bytes per element of the PyTorch storage types `torch.save` names in persistent ids
/// (`torch/storage.py` `_LegacyStorage` subclasses; `UntypedStorage` counts bytes). Used to
/// check a storage's declared element count against the `data/<key>` record's byte length.
pub(super) const TORCH_STORAGE_ITEMSIZE: &[(&str, u64)] = &[
    ("DoubleStorage", 8),
    ("FloatStorage", 4),
    ("HalfStorage", 2),
    ("BFloat16Storage", 2),
    ("LongStorage", 8),
    ("IntStorage", 4),
    ("ShortStorage", 2),
    ("CharStorage", 1),
    ("ByteStorage", 1),
    ("BoolStorage", 1),
    ("ComplexFloatStorage", 8),
    ("ComplexDoubleStorage", 16),
    ("QInt8Storage", 1),
    ("QUInt8Storage", 1),
    ("QInt32Storage", 4),
    ("QUInt4x2Storage", 1),
    ("QUInt2x4Storage", 1),
    ("UntypedStorage", 1),
];

/// Bytes per element of a PyTorch storage type given as `torch.<Name>` (after module
/// normalisation), e.g. 4 for `torch.FloatStorage`, or `torch.storage.UntypedStorage` as
/// torch 2.x writes it; `None` for anything else.
pub fn torch_storage_itemsize(qualified: &str) -> Option<u64> {
    // torch 2.x pickles the untyped storage class by its defining module.
    if qualified == "torch.storage.UntypedStorage" {
        return Some(1);
    }
    let name = qualified.strip_prefix("torch.")?;
    TORCH_STORAGE_ITEMSIZE
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, size)| *size)
}

/// Bytes per element of the `torch.<dtype>` globals `_rebuild_tensor_v3` takes as its
/// `dtype` argument (`torch/_utils.py`; `torch.dtype.itemsize` as torch 2.15 reports it, where the
/// packed sub-byte types count one byte per stored element). v3 rebuilds a tensor of that
/// dtype over the storage's bytes, whatever the storage's own type, so the view's element
/// count is the storage's bytes divided by this size.
pub(super) const TORCH_DTYPE_ITEMSIZE: &[(&str, u64)] = &[
    ("float64", 8),
    ("double", 8),
    ("float32", 4),
    ("float", 4),
    ("float16", 2),
    ("half", 2),
    ("bfloat16", 2),
    ("int64", 8),
    ("long", 8),
    ("int32", 4),
    ("int", 4),
    ("int16", 2),
    ("short", 2),
    ("int8", 1),
    ("uint8", 1),
    ("uint16", 2),
    ("uint32", 4),
    ("uint64", 8),
    ("bool", 1),
    ("complex32", 4),
    ("chalf", 4),
    ("complex64", 8),
    ("cfloat", 8),
    ("complex128", 16),
    ("cdouble", 16),
    ("qint8", 1),
    ("quint8", 1),
    ("qint32", 4),
    ("quint4x2", 1),
    ("quint2x4", 1),
    ("float8_e5m2", 1),
    ("float8_e4m3fn", 1),
    ("float8_e5m2fnuz", 1),
    ("float8_e4m3fnuz", 1),
    ("float8_e8m0fnu", 1),
    ("float4_e2m1fn_x2", 1),
    ("bits8", 1),
    ("bits16", 2),
    ("bits1x8", 1),
    ("bits2x4", 1),
    ("bits4x2", 1),
    ("bcomplex32", 4),
    ("bit", 1),
    ("uint1", 1),
    ("uint2", 1),
    ("uint3", 1),
    ("uint4", 1),
    ("uint5", 1),
    ("uint6", 1),
    ("uint7", 1),
    ("int1", 1),
    ("int2", 1),
    ("int3", 1),
    ("int4", 1),
    ("int5", 1),
    ("int6", 1),
    ("int7", 1),
];

/// Bytes per element of a PyTorch dtype given as `torch.<name>` (e.g. 2 for
/// `torch.bfloat16`); `None` for anything else.
pub fn torch_dtype_itemsize(qualified: &str) -> Option<u64> {
    let name = qualified.strip_prefix("torch.")?;
    TORCH_DTYPE_ITEMSIZE
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, size)| *size)
}
