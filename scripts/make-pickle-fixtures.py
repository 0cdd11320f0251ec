#!/usr/bin/env python3
"""Generate tests/fixtures/pickle/{malicious,benign}/ (issue 16).

Malicious pickles are assembled opcode by opcode: nothing here imports, calls or unpickles a
payload, and the target modules need not be installed. Benign pickles are written by Python's own
pickle module from standard-library value types, plus PyTorch-shaped archives assembled by hand
(the exact opcodes torch.save writes for a state dict) so that torch need not be installed.

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


def torch_state_dict(storage, dtype_elems, elem_size):
    """The data.pkl torch.save writes for {'w': tensor} (protocol 2), assembled by hand."""
    n = dtype_elems
    pkl = (
        proto(2)
        + b"}q\x00X\x01\x00\x00\x00wq\x01"
        + glob("torch._utils", "_rebuild_tensor_v2")
        + b"q\x02((X\x07\x00\x00\x00storageq\x03"
        + glob("torch", storage)
        + b"q\x04X\x01\x00\x00\x000q\x05X\x03\x00\x00\x00cpuq\x06"
        + b"K" + bytes([n]) + b"tq\x07QK\x00K" + bytes([n]) + b"\x85q\x08K\x01\x85q\x09\x89"
        + glob("collections", "OrderedDict")
        + b"q\x0a)Rq\x0btq\x0cRq\x0ds."
    )
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", pkl)
        z.writestr("archive/byteorder", "little")
        z.writestr("archive/data/0", b"\0" * (n * elem_size))
        z.writestr("archive/version", "3\n")
    return buf.getvalue()


def main():
    for kind in ("malicious", "benign"):
        os.makedirs(os.path.join(ROOT, kind), exist_ok=True)
    for name, data in MALICIOUS.items():
        with open(os.path.join(ROOT, "malicious", name), "wb") as f:
            f.write(data)
    files = benign()
    files["torch_state_dict_f32.pt"] = torch_state_dict("FloatStorage", 4, 4)
    files["torch_state_dict_bf16.pt"] = torch_state_dict("BFloat16Storage", 4, 2)
    for name, data in files.items():
        with open(os.path.join(ROOT, "benign", name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
