#!/usr/bin/env python3
"""Generate tests/fixtures/pickle/{malicious,benign}/ (issue 16).

Malicious pickles are assembled opcode by opcode: nothing here imports, calls or unpickles a
payload, and the target modules need not be installed. Benign pickles are written by Python's own
pickle module from standard-library value types, plus PyTorch-shaped archives assembled by hand
(the exact opcodes torch.save writes for a state dict) so that torch need not be installed.

zstd and LZ4 wrappers (joblib's `.zst`/`.lz4` compressors) are written by the `zstd` and `lz4`
command-line tools (Debian packages `zstd`, `lz4`), so no Python binding is needed.

Run from the repository root: python3 scripts/make-pickle-fixtures.py
"""
import argparse
import collections
import datetime
import decimal
import enum
import fractions
import http
import io
import os
import pathlib
import pickle
import re
import struct
import subprocess
import uuid
import zipfile

ROOT = os.path.join("tests", "fixtures", "pickle")


def su(s):
    """SHORT_BINUNICODE."""
    b = s.encode()
    return b"\x8c" + bytes([len(b)]) + b


def proto(n=4):
    return b"\x80" + bytes([n])


def stack_global(module, name):
    return su(module) + su(name) + b"\x93"


def glob(module, name):
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def call1(callable_ops, arg="id"):
    """callable(arg) via TUPLE1 + REDUCE, then STOP."""
    return callable_ops + su(arg) + b"\x85R."


MALICIOUS = {
    # 1. attribute traversal (protocol 4 getattr chains)
    "traversal_torch_serialization_os_system.pkl": proto() + call1(stack_global("torch.serialization", "os.system")),
    "traversal_numpy_internal_sys_modules.pkl": proto(2) + glob("numpy.core._internal", "sys.modules") + b".",
    "traversal_collections_sys_modules.pkl": proto() + stack_global("collections", "_sys.modules") + b".",
    "traversal_dunder_globals.pkl": proto() + stack_global("collections", "OrderedDict.__init__.__globals__") + b".",
    "traversal_dunder_builtins.pkl": proto() + call1(stack_global("torch._utils", "_rebuild_tensor.__builtins__")),
    "traversal_subclasses.pkl": proto() + call1(stack_global("builtins", "object.__subclasses__"), "x"),
    "traversal_dunder_dict.pkl": proto() + stack_global("argparse", "Namespace.__dict__") + b".",
    "traversal_module_attribute.pkl": proto() + stack_global("torch.serialization", "pickle") + b".",
    "traversal_inst_dotted.pkl": b"(S'id'\ni" + b"torch.serialization\nos.system\n.",
    # 2. methods of dangerous classes and published gaps
    "method_code_runsource.pkl": proto() + call1(stack_global("code", "InteractiveInterpreter.runsource")),
    "method_bdb_run.pkl": proto() + call1(stack_global("bdb", "Bdb.run")),
    "method_cprofile_runctx.pkl": proto() + call1(stack_global("cProfile", "Profile.runctx")),
    "method_timeit_timer.pkl": proto() + call1(stack_global("timeit", "Timer.timeit")),
    "method_trace_runctx.pkl": proto() + call1(stack_global("trace", "Trace.runctx")),
    "gap_mailcap_findmatch.pkl": call1(glob("mailcap", "findmatch")),
    "gap_imp_load_source.pkl": call1(glob("imp", "load_source")),
    "gap_pydoc_pipepager.pkl": call1(glob("pydoc", "pipepager")),
    "gap_pydoc_tempfilepager.pkl": call1(glob("pydoc", "tempfilepager")),
    "gap_doctest_debug_script.pkl": call1(glob("doctest", "debug_script")),
    "gap_xxsubinterpreters.pkl": call1(glob("_xxsubinterpreters", "run_string")),
    "gap_interpreters.pkl": call1(glob("_interpreters", "exec")),
    "gap_idlelib.pkl": proto() + call1(stack_global("idlelib.pyshell", "ModifiedInterpreter.runcode")),
    "gap_ensurepip.pkl": call1(glob("ensurepip", "_run_pip")),
    "gap_torch_bottleneck.pkl": call1(glob("torch.utils.bottleneck.__main__", "run_cprofile")),
    "gap_torch_fx_graph_module.pkl": call1(glob("torch.fx.graph_module", "reduce_graph_module")),
    "gap_torch_ops_load_library.pkl": proto() + call1(stack_global("torch", "ops.load_library")),
    "gap_torch_classes_load_library.pkl": proto() + call1(stack_global("torch.classes", "load_library")),
    "gap_torch_jit_load.pkl": call1(glob("torch.jit", "load")),
    "gap_transformers_dynamic_module.pkl": call1(glob("transformers.dynamic_module_utils", "get_class_from_dynamic_module")),
    "gap_pip_main.pkl": call1(glob("pip", "main")),
    "gap_setuptools_spawn.pkl": call1(glob("setuptools._distutils.spawn", "spawn")),
    "gap_distutils_spawn.pkl": call1(glob("distutils.spawn", "spawn")),
    "gap_pkgutil_resolve_name.pkl": call1(glob("pkgutil", "resolve_name")),
    "gap_importlib_import_module.pkl": call1(glob("importlib", "import_module")),
    "gap_operator_attrgetter.pkl": call1(glob("_operator", "attrgetter"), "system"),
    "gap_operator_methodcaller.pkl": call1(glob("operator", "methodcaller"), "system"),
    # functools.partial(os.system, "id")()
    "gap_functools_partial.pkl": glob("functools", "partial") + b"(" + glob("os", "system") + b"S'id'\ntR)R.",
    # sys.modules['x'] = ... (SETITEM on an imported dict)
    "gap_sys_modules_write.pkl": glob("sys", "modules") + b"S'x'\nS'y'\ns.",
    "precision_http_client.pkl": call1(glob("http.client", "HTTPConnection"), "example.com"),
    # 4. broken streams that hide a payload
    "broken_bad_opcode.pkl": glob("os", "system") + b"S'id'\n\x85R\xff.",
    "broken_invalid_proto.pkl": b"\x80\x09" + glob("os", "system") + b"S'id'\n\x85R.",
    "broken_undefined_memo.pkl": proto(2) + glob("os", "system") + b"S'id'\n\x85Rh\x63.",
    "broken_stack_underflow.pkl": proto(2) + glob("os", "system") + b"S'id'\n\x85R00000.",
    "broken_truncated.pkl": proto(2) + glob("os", "system") + b"S'id'\n\x85R",
    "broken_unterminated_string.pkl": glob("os", "system") + b"S'id",
    "broken_stack_global_underflow.pkl": proto() + su("os") + su("system") + b"\x93\x93.",
}


class Color(enum.Enum):
    RED = 1


def benign():
    out = {}
    values = {
        "stdlib_http_status.pkl": http.HTTPStatus.OK,
        "stdlib_uuid.pkl": uuid.UUID(int=7),
        "stdlib_decimal.pkl": decimal.Decimal("1.25"),
        "stdlib_fraction.pkl": fractions.Fraction(1, 3),
        "stdlib_datetime.pkl": [
            datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc),
            datetime.date(2026, 1, 1),
            datetime.timedelta(seconds=3),
        ],
        "stdlib_pathlib.pkl": [pathlib.PurePosixPath("/data/ckpt"), pathlib.PureWindowsPath("C:/x")],
        "stdlib_namespace.pkl": argparse.Namespace(lr=0.1, out=pathlib.PurePosixPath("runs")),
        "stdlib_re_pattern.pkl": re.compile(r"\d+", re.I),
        "stdlib_collections.pkl": [
            collections.OrderedDict(a=1),
            collections.defaultdict(list),
            collections.deque([1, 2]),
            collections.Counter("ab"),
        ],
    }
    for name, value in values.items():
        for p in (2, 4):
            out[name.replace(".pkl", f"_p{p}.pkl")] = pickle.dumps(value, protocol=p)
    return out


def binint(i):
    """BININT: a signed 4-byte integer."""
    return b"J" + struct.pack("<i", i)


def torch_state_dict(storage, dtype_elems, elem_size, size=None, offset=0, stride=1, data_len=None):
    """The data.pkl torch.save writes for {'w': tensor} (protocol 2), assembled by hand.

    By default the view is the whole storage; `size`, `offset`, `stride` and `data_len` (bytes
    of data/0) change one number to build the exploit shapes of issue 16.
    """
    n = dtype_elems
    size = n if size is None else size
    pkl = (
        proto(2)
        + b"}q\x00X\x01\x00\x00\x00wq\x01"
        + glob("torch._utils", "_rebuild_tensor_v2")
        + b"q\x02((X\x07\x00\x00\x00storageq\x03"
        + glob("torch", storage)
        + b"q\x04X\x01\x00\x00\x000q\x05X\x03\x00\x00\x00cpuq\x06"
        + binint(n) + b"tq\x07Q" + binint(offset) + binint(size) + b"\x85q\x08" + binint(stride) + b"\x85q\x09\x89"
        + glob("collections", "OrderedDict")
        + b"q\x0a)Rq\x0btq\x0cRq\x0ds."
    )
    return zip_members(
        [
            ("archive/data.pkl", pkl),
            ("archive/byteorder", b"little"),
            ("archive/data/0", b"\0" * (n * elem_size if data_len is None else data_len)),
            ("archive/version", b"3\n"),
        ]
    )


def zip_members(members):
    """A stored zip with fixed timestamps, so the fixtures are byte-identical on every run."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        for name, data in members:
            z.writestr(zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0)), data)
    return buf.getvalue()


def exploit_shapes():
    """Issue 16: the shapes of the weights-only heap-corruption advisories. Tensor views past
    their storage, a storage whose record is not as long as declared, and container opcodes
    aimed at globals. Nothing here is loadable as a model; nothing is loaded."""
    f32 = ("FloatStorage", 4, 4)
    empty_dict = b"}"
    return {
        "exploit_view_past_storage.pt": torch_state_dict(*f32, size=64),
        "exploit_view_offset_past_storage.pt": torch_state_dict(*f32, size=4, offset=1000),
        "exploit_view_stride_past_storage.pt": torch_state_dict(*f32, size=4, stride=1 << 20),
        "exploit_view_negative_stride.pt": torch_state_dict(*f32, size=4, stride=-1),
        "exploit_view_negative_offset.pt": torch_state_dict(*f32, size=1, offset=-8),
        "exploit_storage_size_mismatch.pt": torch_state_dict(*f32, data_len=4),
        # SETITEM into a rebuild function, APPEND into a class, BUILD on a function: the
        # loader would rewrite loader state instead of filling a container.
        "exploit_setitem_on_global.pkl": proto(2) + glob("torch._utils", "_rebuild_tensor_v2") + su("x") + su("y") + b"s.",
        "exploit_setitems_on_global.pkl": proto(2) + glob("collections", "OrderedDict") + b"(" + su("k") + su("v") + b"u.",
        "exploit_append_on_global.pkl": proto(2) + glob("collections", "OrderedDict") + su("x") + b"a.",
        "exploit_build_on_global.pkl": proto(2) + glob("torch._utils", "_rebuild_tensor") + empty_dict + su("__doc__") + su("x") + b"sb.",
    }


TORCHSCRIPT_MODULE = """class M(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  def __setstate__(self: __torch__.M,
    state: Tuple[bool]) -> NoneType:
    {setstate}
    self.training = (state)[0]
    return None
  def forward(self: __torch__.M,
    x: Tensor) -> Tensor:
    _0 = getattr(self.layers, "0")
    {forward}
    return torch.add(x, 1)
"""


def torchscript(setstate="pass", forward="pass", constants=None):
    """A `torch.jit.save` archive layout: data.pkl, constants.pkl, code/__torch__/m.py and
    its debug pickle, version. The code is TorchScript source as torch.jit.save prints it."""
    code = TORCHSCRIPT_MODULE.format(setstate=setstate, forward=forward)
    data = proto(2) + glob("__torch__", "M") + b")\x81}" + su("training") + b"\x88sb."
    return zip_members(
        [
            ("m/data.pkl", data),
            ("m/code/__torch__/m.py", code.encode()),
            ("m/code/__torch__/m.py.debug_pkl", proto(2) + b")."),
            ("m/constants.pkl", constants or proto(2) + b")."),
            ("m/version", b"1\n"),
        ]
    )


def torchscript_archives():
    """Issue 16: TorchScript code that reaches files, libraries or processes (read, not run),
    and a payload in constants.pkl; plus a benign archive."""
    malicious = {
        "torchscript_from_file_setstate.pt": torchscript(setstate='_1 = torch.from_file("/etc/passwd", False, 4096)'),
        "torchscript_ops_load_library.pt": torchscript(forward='torch.ops.load_library("/tmp/x.so")'),
        "torchscript_classes_load_library.pt": torchscript(setstate='torch.classes.load_library("/tmp/x.so")'),
        "torchscript_open.pt": torchscript(forward='_2 = open("/etc/passwd")'),
        "torchscript_os_system.pt": torchscript(forward='_3 = os.system("id")'),
        "torchscript_constants_pkl.pt": torchscript(constants=proto(2) + call1(glob("os", "system"))),
    }
    benign = {"torchscript_module.pt": torchscript()}
    return malicious, benign


def compress(tool, data):
    """`zstd -c` / `lz4 -c` of `data` (frame format, deterministic for a given tool version)."""
    args = {"zstd": ["zstd", "-q", "-c", "-19"], "lz4": ["lz4", "-q", "-c", "-9"]}[tool]
    return subprocess.run(args, input=data, stdout=subprocess.PIPE, check=True).stdout


def compressed():
    """Issue 16: zstd and LZ4 frames around pickles, at the top level and inside a zip."""
    payload = proto(2) + call1(glob("os", "system"))
    benign_value = pickle.dumps([uuid.UUID(int=7), decimal.Decimal("1.25")], protocol=4)
    zst = compress("zstd", payload)
    malicious = {
        "compressed_zstd_os_system.pkl.zst": zst,
        "compressed_lz4_os_system.pkl.lz4": compress("lz4", payload),
        "compressed_zstd_os_system.joblib": zst,
        "compressed_zstd_member_in_zip.zip": zip_members([("model.pkl.zst", zst)]),
        # Two frames: the payload hides in the second one.
        "compressed_zstd_second_frame.pkl.zst": compress("zstd", pickle.dumps(1, protocol=2)) + zst,
    }
    benign = {
        "compressed_zstd_stdlib.pkl.zst": compress("zstd", benign_value),
        "compressed_lz4_stdlib.pkl.lz4": compress("lz4", benign_value),
    }
    return malicious, benign


def real_library_pickles():
    """Benign pickles written by real libraries when they are installed (numpy 2 arrays,
    scalars and dtypes; `pip install numpy` into a venv and run this script with it). Without
    them the committed files are left as they are."""
    out = {}
    try:
        import numpy as np
    except ImportError:
        return out
    value = {
        "w": np.arange(6, dtype=np.float32).reshape(2, 3),
        "h": np.zeros(3, dtype=np.float16),
        "b": np.float64(1.5),
        "i": np.int64(3),
        "dt": np.dtype("int16"),
    }
    major = np.__version__.split(".")[0]
    for p in (2, 4):
        out[f"numpy{major}_arrays_p{p}.pkl"] = pickle.dumps(value, protocol=p)
    return out


def main():
    for kind in ("malicious", "benign"):
        os.makedirs(os.path.join(ROOT, kind), exist_ok=True)
    bad_compressed, good_compressed = compressed()
    bad_ts, good_ts = torchscript_archives()
    for name, data in {**MALICIOUS, **exploit_shapes(), **bad_compressed, **bad_ts}.items():
        with open(os.path.join(ROOT, "malicious", name), "wb") as f:
            f.write(data)
    files = benign()
    files["torch_state_dict_f32.pt"] = torch_state_dict("FloatStorage", 4, 4)
    files["torch_state_dict_bf16.pt"] = torch_state_dict("BFloat16Storage", 4, 2)
    files.update(good_compressed)
    files.update(good_ts)
    files.update(real_library_pickles())
    for name, data in files.items():
        with open(os.path.join(ROOT, "benign", name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
