//! What `torch.load(weights_only=True)` accepts (issue 32), mirrored from PyTorch's weights-only
//! unpickler, so a finding can say whether a pickle would load under it.

#[cfg(doc)]
use super::names;
use super::verdict::{ExtraLists, covers_entry};

// ---- issue 32: what `torch.load(weights_only=True)` accepts ----
// Mirrors `torch/_weights_only_unpickler.py` of PyTorch main at commit 00f730b66e58 (the
// weights-only unpickler of torch 2.6 and later, where `weights_only=True` is the default):
// `_get_allowed_globals`, `_tensor_rebuild_functions`, `_blocklisted_modules` and the opcodes
// `Unpickler.load` implements (any other raises "Unsupported operand"). The policy's
// `[pickle] safe_globals` count as `torch.serialization.add_safe_globals` would.

/// The PyTorch source the weights-only verdict mirrors, for facts and messages.
pub const WEIGHTS_ONLY_MIRRORS: &str =
    "torch/_weights_only_unpickler.py (pytorch main 00f730b66e58; torch >= 2.6)";

/// Modules `_blocklisted_modules` refuses even when a safe-globals list names them.
const WEIGHTS_ONLY_BLOCKED: &[&str] = &["sys", "os", "posix", "nt"];

/// The opcodes the weights-only unpickler implements (pickletools names). `torch.save` writes
/// protocol 2 with these only; FRAME, SHORT_BINUNICODE, MEMOIZE, STACK_GLOBAL (protocol 4),
/// INST/OBJ/STRING/UNICODE (protocol 0), BINBYTES and the rest are refused.
pub const WEIGHTS_ONLY_OPCODES: &[&str] = &[
    "GLOBAL",
    "NEWOBJ",
    "REDUCE",
    "BUILD",
    "APPEND",
    "APPENDS",
    "SETITEM",
    "SETITEMS",
    "MARK",
    "TUPLE",
    "TUPLE1",
    "TUPLE2",
    "TUPLE3",
    "NONE",
    "NEWFALSE",
    "NEWTRUE",
    "EMPTY_TUPLE",
    "EMPTY_LIST",
    "EMPTY_DICT",
    "EMPTY_SET",
    "BININT",
    "BININT1",
    "BININT2",
    "BINFLOAT",
    "BINUNICODE",
    "SHORT_BINSTRING",
    "BINPERSID",
    "BINGET",
    "LONG_BINGET",
    "BINPUT",
    "LONG_BINPUT",
    "LONG1",
    "PROTO",
    "STOP",
];

/// The storage and legacy tensor type names `torch._storage_classes` and
/// `torch._tensor_classes` hold (module `torch`, `torch.cuda` and, for tensors,
/// `torch.sparse`), without their `Storage`/`Tensor` suffix.
const WEIGHTS_ONLY_STORAGE_TYPES: &[&str] = &[
    "Double",
    "Float",
    "Half",
    "BFloat16",
    "Long",
    "Int",
    "Short",
    "Char",
    "Byte",
    "Bool",
    "ComplexFloat",
    "ComplexDouble",
    "QInt8",
    "QUInt8",
    "QInt32",
    "QUInt4x2",
    "QUInt2x4",
];

/// `_get_allowed_globals` beyond the storage and tensor classes: exact `module.name` paths.
const WEIGHTS_ONLY_GLOBALS: &[(&str, &[&str])] = &[
    ("collections", &["OrderedDict", "Counter"]),
    ("torch.nn.parameter", &["Parameter"]),
    ("torch.serialization", &["_get_layout"]),
    ("torch", &["Size", "Tensor", "device"]),
    ("_codecs", &["encode"]),
    ("builtins", &["bytearray", "set", "complex"]),
    ("torch.storage", &["UntypedStorage", "TypedStorage"]),
    (
        "torch._utils",
        &[
            "_rebuild_parameter",
            "_rebuild_parameter_with_state",
            "_rebuild_qtensor",
            "_rebuild_tensor",
            "_rebuild_tensor_v2",
            "_rebuild_tensor_v3",
            "_rebuild_sparse_tensor",
            "_rebuild_meta_tensor_no_storage",
            "_rebuild_wrapper_subclass",
            "_rebuild_device_tensor_from_numpy",
            "_rebuild_device_tensor_from_cpu_tensor",
        ],
    ),
    ("torch._tensor", &["_rebuild_from_type_v2"]),
    (
        "torch",
        &[
            // `str(dtype)` of `torch.storage._dtype_to_storage_type_map()` and `_new_dtypes()`
            // (canonical names only: `torch.float` is no key), and `uint1..7`, `int1..7`.
            "float64",
            "float32",
            "float16",
            "bfloat16",
            "int64",
            "int32",
            "int16",
            "int8",
            "uint8",
            "bool",
            "complex128",
            "complex64",
            "complex32",
            "qint8",
            "qint32",
            "quint8",
            "quint4x2",
            "quint2x4",
            "float8_e5m2",
            "float8_e4m3fn",
            "float8_e5m2fnuz",
            "float8_e4m3fnuz",
            "float8_e8m0fnu",
            "float4_e2m1fn_x2",
            "bits8",
            "bits16",
            "bits1x8",
            "bits2x4",
            "bits4x2",
            "uint16",
            "uint32",
            "uint64",
            "uint1",
            "uint2",
            "uint3",
            "uint4",
            "uint5",
            "uint6",
            "uint7",
            "int1",
            "int2",
            "int3",
            "int4",
            "int5",
            "int6",
            "int7",
            // Quantization schemes.
            "per_tensor_affine",
            "per_tensor_symmetric",
            "per_channel_affine",
            "per_channel_symmetric",
            "per_channel_affine_float_qparams",
        ],
    ),
];

/// The module renames torch applies before its allowlist (`torch._utils.IMPORT_MAPPING`): a
/// mirror of what torch does, narrower than [`names::MODULE_ALIASES`] on purpose (torch refuses
/// `posix.system` by name, not as `os.system`). Each row is also a row of the one alias table;
/// a test keeps it so.
pub(super) const WEIGHTS_ONLY_RENAMES: &[(&str, &str)] =
    &[("__builtin__", "builtins"), ("copy_reg", "copyreg")];

/// Would `torch.load(weights_only=True)` resolve the GLOBAL `module.name`? `module` and `name`
/// as the pickle spells them; torch renames Python 2 modules (`torch._utils.IMPORT_MAPPING`,
/// `__builtin__` -> `builtins`, `copy_reg` -> `copyreg`) and nothing else. `extra.safe` entries
/// count as `add_safe_globals` (`module.name`; `module.*` for a module and its submodules, as
/// the policy's safe list means it), except for the blocked modules.
pub fn weights_only_allows(module: &str, name: &str, extra: &ExtraLists) -> bool {
    let module = WEIGHTS_ONLY_RENAMES
        .iter()
        .find(|(from, _)| *from == module)
        .map_or(module, |(_, to)| *to);
    if WEIGHTS_ONLY_BLOCKED.contains(&module) {
        return false;
    }
    let builtin = WEIGHTS_ONLY_GLOBALS
        .iter()
        .any(|(m, names)| *m == module && names.contains(&name))
        || (matches!(module, "torch" | "torch.cuda")
            && name
                .strip_suffix("Storage")
                .is_some_and(|t| WEIGHTS_ONLY_STORAGE_TYPES.contains(&t)))
        || (matches!(module, "torch" | "torch.cuda" | "torch.sparse")
            && name
                .strip_suffix("Tensor")
                .is_some_and(|t| WEIGHTS_ONLY_STORAGE_TYPES.contains(&t)));
    let qualified = format!("{module}.{name}");
    builtin
        || extra
            .safe
            .iter()
            .any(|(m, n)| covers_entry(m, n.as_deref(), &qualified))
}
