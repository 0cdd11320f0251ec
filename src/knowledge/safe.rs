//! What ordinary pickles import and is safe: the safe-globals lists (`SAFE`, the standard
//! library's `SAFE_STANDARD`) and the standard library's value types, which the pickle judge
//! and `classify_global` read.

/// Globals that ordinary PyTorch, NumPy, joblib and plain-Python pickles import.
/// Sources: picklescan `_safe_globals`; fickling `SAFE_BUILTINS` (type constructors only) and
/// `PRIVATE_STDLIB_IMPORT_ALLOWLIST` (`_codecs.encode`); PyTorch
/// `torch/_weights_only_unpickler.py` (rebuild functions, storages, dtypes, layouts, memory
/// formats); what NumPy 1.x/2.x and joblib 1.x write (checked by pickling with them).
pub(super) const SAFE: &[(&str, &[&str])] = &[
    (
        "builtins",
        &[
            "bool",
            "int",
            "float",
            "complex",
            "str",
            "bytes",
            "bytearray",
            "list",
            "tuple",
            "set",
            "frozenset",
            "dict",
            "slice",
            "range",
            // Python 3 writes `range` as `__builtin__ xrange` for protocols 0-2 (fix_imports).
            "xrange",
            "object",
            "Ellipsis",
            "NotImplemented",
        ],
    ),
    (
        "collections",
        &["OrderedDict", "defaultdict", "Counter", "deque"],
    ),
    (
        "copyreg",
        &["_reconstructor", "__newobj__", "__newobj_ex__"],
    ),
    ("_codecs", &["encode"]),
    (
        "datetime",
        &["datetime", "date", "time", "timedelta", "timezone"],
    ),
    ("decimal", &["Decimal"]),
    ("fractions", &["Fraction"]),
    ("uuid", &["UUID"]),
    (
        "torch._utils",
        &[
            "_rebuild_tensor",
            "_rebuild_tensor_v2",
            "_rebuild_tensor_v3",
            "_rebuild_parameter",
            "_rebuild_parameter_with_state",
            "_rebuild_qtensor",
            "_rebuild_sparse_tensor",
            "_rebuild_nested_tensor",
            "_rebuild_meta_tensor_no_storage",
            "_rebuild_wrapper_subclass",
            "_rebuild_device_tensor_from_numpy",
            "_rebuild_device_tensor_from_cpu_tensor",
        ],
    ),
    (
        "torch._tensor",
        &["_rebuild_from_type", "_rebuild_from_type_v2"],
    ),
    ("torch.serialization", &["_get_layout"]),
    ("torch.nn.parameter", &["Parameter", "Buffer"]),
    ("torch.storage", &["TypedStorage", "UntypedStorage"]),
    (
        "torch",
        &[
            // Storage classes named in persistent ids (picklescan `_safe_globals["torch"]`).
            "DoubleStorage",
            "FloatStorage",
            "HalfStorage",
            "BFloat16Storage",
            "LongStorage",
            "IntStorage",
            "ShortStorage",
            "CharStorage",
            "ByteStorage",
            "BoolStorage",
            "ComplexFloatStorage",
            "ComplexDoubleStorage",
            "QInt8Storage",
            "QUInt8Storage",
            "QInt32Storage",
            "QUInt4x2Storage",
            "QUInt2x4Storage",
            "UntypedStorage",
            "TypedStorage",
            // Plain types.
            "Size",
            "device",
            "dtype",
            "layout",
            "memory_format",
            "Tensor",
            // dtypes pickle as globals of the torch module.
            "float32",
            "float",
            "float64",
            "double",
            "float16",
            "half",
            "bfloat16",
            "complex32",
            "chalf",
            "complex64",
            "cfloat",
            "complex128",
            "cdouble",
            "uint8",
            "uint16",
            "uint32",
            "uint64",
            "int8",
            "int16",
            "short",
            "int32",
            "int",
            "int64",
            "long",
            "bool",
            "qint8",
            "quint8",
            "qint32",
            "quint4x2",
            "quint2x4",
            "float8_e4m3fn",
            "float8_e5m2",
            "float8_e4m3fnuz",
            "float8_e5m2fnuz",
            // Layouts and memory formats.
            "strided",
            "sparse_coo",
            "sparse_csr",
            "sparse_csc",
            "sparse_bsr",
            "sparse_bsc",
            "_mkldnn",
            "contiguous_format",
            "channels_last",
            "channels_last_3d",
            "preserve_format",
            // Quantization schemes `_rebuild_qtensor` takes (allowed by
            // `torch/_weights_only_unpickler.py`), and the newer dtypes torch 2.x writes as
            // `_rebuild_tensor_v3` arguments (`torch.storage._new_dtypes()`).
            "per_tensor_affine",
            "per_tensor_symmetric",
            "per_channel_affine",
            "per_channel_symmetric",
            "per_channel_affine_float_qparams",
            "float8_e8m0fnu",
            "float4_e2m1fn_x2",
            "bits8",
            "bits16",
            "bits1x8",
            "bits2x4",
            "bits4x2",
        ],
    ),
    ("numpy", &["ndarray", "dtype", "matrix"]),
    ("numpy.core.multiarray", &["_reconstruct", "scalar"]),
    ("numpy._core.multiarray", &["_reconstruct", "scalar"]),
    ("numpy.core.numeric", &["_frombuffer"]),
    ("numpy._core.numeric", &["_frombuffer"]),
    ("numpy.ma.core", &["_mareconstruct", "MaskedArray"]),
    (
        "numpy.random._pickle",
        &[
            "__randomstate_ctor",
            "__generator_ctor",
            "__bit_generator_ctor",
        ],
    ),
    ("numpy.random", &["__RandomState_ctor"]),
    ("numpy.random._pcg64", &["PCG64", "PCG64DXSM"]),
    ("numpy.random._mt19937", &["MT19937"]),
    ("numpy.random._philox", &["Philox"]),
    ("numpy.random._sfc64", &["SFC64"]),
    ("numpy.random._generator", &["Generator"]),
    ("numpy.random.mtrand", &["RandomState"]),
    ("joblib.numpy_pickle", &["NumpyArrayWrapper"]),
    (
        "joblib.numpy_pickle_compat",
        &["NDArrayWrapper", "ZNDArrayWrapper"],
    ),
];

/// Standard names that real, harmless pickles write (issue 15, cause 7): a separate group so the
/// reason for each is visible. Sources: CPython `Lib/_compat_pickle.py` `NAME_MAPPING` (Python 2
/// `long`/`unicode`/`unichr` are `int`/`str`/`chr`, which protocol 0-2 pickles still spell with
/// `__builtin__`); NumPy `numpy/__init__.py` scalar types (estimators store `dtype=np.float64`)
/// and `numpy/matrixlib/defmatrix.py` (`matrix.__module__`); NumPy 1.16+ pickles naming
/// `numpy.core._multiarray_umath` (and 2.x `numpy._core._multiarray_umath`) for `_reconstruct` and
/// `scalar`; CPython `typing.Any` and `argparse.Namespace` (a plain attribute bag, pickled with
/// training arguments); joblib 0.9-0.14 and the copy vendored as `sklearn.externals.joblib`
/// (scikit-learn < 0.23), whose `numpy_pickle` module held `NDArrayWrapper`/`ZNDArrayWrapper`
/// before `numpy_pickle_compat` existed; CPython `pathlib` path classes (`PurePath.__reduce__` is
/// `(cls, parts)`: building a path from strings touches no file; Lightning checkpoints store them
/// in hyperparameters; their file methods stay dangerous through `DANGEROUS_METHODS`). Every entry
/// is a type or a rebuilder that only builds data; none runs code named by the pickle.
pub(super) const SAFE_STANDARD: &[(&str, &[&str])] = &[
    ("builtins", &["long", "unicode", "unichr", "chr"]),
    (
        "numpy",
        &[
            "bool_",
            "bool",
            "int8",
            "int16",
            "int32",
            "int64",
            "uint8",
            "uint16",
            "uint32",
            "uint64",
            "intc",
            "uintc",
            "intp",
            "uintp",
            "int_",
            "uint",
            "longlong",
            "ulonglong",
            "float16",
            "float32",
            "float64",
            "float128",
            "half",
            "single",
            "double",
            "longdouble",
            "float_",
            "complex64",
            "complex128",
            "complex256",
            "complex_",
            "csingle",
            "cdouble",
            "clongdouble",
            "str_",
            "bytes_",
            "unicode_",
            "string_",
            "object_",
            "void",
            "datetime64",
            "timedelta64",
            "number",
            "integer",
            "floating",
            "generic",
        ],
    ),
    ("numpy.matrixlib.defmatrix", &["matrix"]),
    // Issue 32: numpy's pre-1.0 array reconstructor, still written by old pickles; it builds
    // an empty array of a given type like `multiarray._reconstruct` (NumPy
    // `numpy/core/_internal.py`).
    ("numpy.core._internal", &["_reconstruct"]),
    ("numpy.core._multiarray_umath", &["_reconstruct", "scalar"]),
    ("numpy._core._multiarray_umath", &["_reconstruct", "scalar"]),
    ("typing", &["Any"]),
    ("argparse", &["Namespace"]),
    (
        "pathlib",
        &[
            "Path",
            "PosixPath",
            "WindowsPath",
            "PurePath",
            "PurePosixPath",
            "PureWindowsPath",
        ],
    ),
    (
        "joblib.numpy_pickle",
        &["NDArrayWrapper", "ZNDArrayWrapper"],
    ),
    (
        "sklearn.externals.joblib.numpy_pickle",
        &["NumpyArrayWrapper", "NDArrayWrapper", "ZNDArrayWrapper"],
    ),
    (
        "sklearn.externals.joblib.numpy_pickle_compat",
        &["NDArrayWrapper", "ZNDArrayWrapper"],
    ),
    // `hash` stored as gensim's `hashfxn` attribute (Python 2 spells it `__builtin__.hash`):
    // it only hashes a value. CPython `Python/bltinmodule.c` `builtin_hash`.
    ("builtins", &["hash"]),
    // TorchScript's unpickler helpers, which every `.debug_pkl` and `constants.pkl` of a
    // scripted module names: each returns its argument as a list or tensor, or tags a type.
    // PyTorch `torch/jit/_pickle.py`.
    (
        "torch.jit._pickle",
        &[
            "build_intlist",
            "build_tensorlist",
            "build_doublelist",
            "build_boollist",
            "build_tensor_from_id",
            "restore_type_tag",
        ],
    ),
];

/// Issue 32: value types of standard-library modules whose functions are dangerous (or
/// unknown). An `enum` member pickles by value as a call of its class
/// (`signal.Signals(2)`: `Enum.__reduce_ex__` returns `(cls, (value,))`), or, for the enums
/// CPython converts from module constants (`_convert_(..., as_global=True)`, `global_enum`),
/// as the module-level constant itself (`signal.SIGINT`, `socket.AF_INET`, `re.IGNORECASE`:
/// `_reduce_ex_by_global_name`). Calling an enum class with a value looks a member up; it runs
/// nothing. Each row: module, the `enum` subclasses it defines, and the prefixes (or names) of
/// the module constants that are members of them. Only the exact, undotted name matches, so
/// the same modules' functions (`signal.signal`, `socket.socket`, `ssl.get_server_certificate`,
/// `inspect.getsource`) keep their verdicts, and `signal.Signals.__init__...` is still a
/// traversal. Sources: CPython 3.8-3.14 `Lib/signal.py` (`Signals`, `Handlers`, `Sigmasks`),
/// `Lib/socket.py` (`AddressFamily`, `SocketKind`, `MsgFlag`, `AddressInfo`), `Lib/ssl.py`
/// (`_SSLMethod`, `Options`, `AlertDescription`, `SSLErrorNumber`, `VerifyFlags`, `VerifyMode`,
/// `TLSVersion`, `Purpose`, `_TLSContentType`, `_TLSAlertType`, `_TLSMessageType`, and
/// `_ASN1Object`, the namedtuple `Purpose` members hold),
/// `Lib/re/__init__.py` (`RegexFlag`, a `global_enum`), `Lib/http/__init__.py` (`HTTPStatus`,
/// `HTTPMethod`), `Lib/inspect.py` (`_ParameterKind`, `BufferFlags`), `Lib/uuid.py`
/// (`SafeUUID`), `Lib/pstats.py` (`SortKey`), `Lib/plistlib.py` (`PlistFormat`),
/// `Lib/calendar.py` (`Month`, `Day`, global enums since 3.12), `Lib/py_compile.py`
/// (`PycInvalidationMode`), `Lib/tkinter/__init__.py` (`EventType`), `Lib/enum.py` (the
/// `Enum`, `IntEnum`, `Flag`, `IntFlag`, `StrEnum` bases, looked up by value the same way).
pub(super) struct ValueTypes {
    pub(super) module: &'static str,
    pub(super) classes: &'static [&'static str],
    /// Prefixes of the module constants that are enum members (`SIG`, `AF_`, ...).
    pub(super) member_prefixes: &'static [&'static str],
    /// Member constants named in full.
    pub(super) members: &'static [&'static str],
}

pub(super) const VALUE_TYPES: &[ValueTypes] = &[
    ValueTypes {
        module: "signal",
        classes: &["Signals", "Handlers", "Sigmasks"],
        member_prefixes: &["SIG", "CTRL_"],
        members: &[],
    },
    ValueTypes {
        module: "socket",
        classes: &["AddressFamily", "SocketKind", "MsgFlag", "AddressInfo"],
        member_prefixes: &["AF_", "SOCK_", "MSG_", "AI_"],
        members: &[],
    },
    ValueTypes {
        module: "ssl",
        classes: &[
            "_SSLMethod",
            "Options",
            "AlertDescription",
            "SSLErrorNumber",
            "VerifyFlags",
            "VerifyMode",
            "TLSVersion",
            "Purpose",
            "_TLSContentType",
            "_TLSAlertType",
            "_TLSMessageType",
            // `Purpose` members' values: a namedtuple looked up by OID (`_txt2obj`).
            "_ASN1Object",
        ],
        member_prefixes: &[
            "PROTOCOL_",
            "OP_",
            "ALERT_DESCRIPTION_",
            "SSL_ERROR_",
            "VERIFY_",
            "CERT_",
        ],
        members: &[],
    },
    ValueTypes {
        module: "re",
        classes: &["RegexFlag"],
        member_prefixes: &[],
        members: &[
            "A",
            "I",
            "L",
            "M",
            "S",
            "X",
            "U",
            "T",
            "ASCII",
            "IGNORECASE",
            "LOCALE",
            "MULTILINE",
            "DOTALL",
            "VERBOSE",
            "UNICODE",
            "TEMPLATE",
            "DEBUG",
            "NOFLAG",
        ],
    },
    ValueTypes {
        module: "http",
        classes: &["HTTPStatus", "HTTPMethod"],
        member_prefixes: &[],
        members: &[],
    },
    ValueTypes {
        module: "inspect",
        classes: &["_ParameterKind", "BufferFlags"],
        member_prefixes: &[],
        members: &[],
    },
    ValueTypes {
        module: "uuid",
        classes: &["SafeUUID"],
        member_prefixes: &[],
        members: &[],
    },
    ValueTypes {
        module: "pstats",
        classes: &["SortKey"],
        member_prefixes: &[],
        members: &[],
    },
    ValueTypes {
        module: "plistlib",
        classes: &["PlistFormat"],
        member_prefixes: &["FMT_"],
        members: &[],
    },
    ValueTypes {
        module: "calendar",
        classes: &["Month", "Day"],
        member_prefixes: &[],
        members: &[
            "JANUARY",
            "FEBRUARY",
            "MARCH",
            "APRIL",
            "MAY",
            "JUNE",
            "JULY",
            "AUGUST",
            "SEPTEMBER",
            "OCTOBER",
            "NOVEMBER",
            "DECEMBER",
            "MONDAY",
            "TUESDAY",
            "WEDNESDAY",
            "THURSDAY",
            "FRIDAY",
            "SATURDAY",
            "SUNDAY",
        ],
    },
    ValueTypes {
        module: "py_compile",
        classes: &["PycInvalidationMode"],
        member_prefixes: &[],
        members: &[],
    },
    ValueTypes {
        module: "tkinter",
        classes: &["EventType"],
        member_prefixes: &[],
        members: &[],
    },
    ValueTypes {
        module: "enum",
        classes: &["Enum", "IntEnum", "Flag", "IntFlag", "StrEnum", "ReprEnum"],
        member_prefixes: &[],
        members: &[],
    },
];

/// Is `module.name` a standard-library value type or one of its members (see
/// [`VALUE_TYPES`])? `module` is already normalised (`_signal` is `signal`).
pub(super) fn is_value_type(module: &str, name: &str) -> bool {
    let Some(row) = VALUE_TYPES.iter().find(|r| r.module == module) else {
        return false;
    };
    let constant = |p: &&str| {
        name.strip_prefix(*p).is_some_and(|rest| {
            !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        })
    };
    row.classes.contains(&name)
        || row.members.contains(&name)
        || row.member_prefixes.iter().any(constant)
}
