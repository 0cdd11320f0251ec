#!/usr/bin/env python3
"""Generate the issue-32 pickle fixtures under tests/fixtures/pickle/.

Storage records (from committed real saves):

A PyTorch storage record (`archive/data/<key>`) holds raw tensor bytes; `torch.load` never
unpickles it. Benign files are `benign/real_torch_state_dict_f32.pt` with the first bytes of its
`data/0` record (24 bytes: six float32 weights) replaced by bytes that begin like pickle opcodes
(`0x80 0x02` PROTO, `}` + `0x93` EMPTY_DICT + STACK_GLOBAL, `c` GLOBAL); the record keeps its
length, so the storage checks still pass and the file is still a valid save. The malicious file
hides a complete protocol-2 pickle that calls `os.system` in that record (padded to 24 bytes).
Bytes only: the standard library's zipfile, nothing imported from torch, nothing loaded.

Standard-library value types: `pickle.dumps` (this interpreter's own pickler, protocols 2 and
4) of enum members of modules whose functions are dangerous (`signal.Signals.SIGINT`,
`socket.AddressFamily.AF_INET`, `ssl.TLSVersion`, `inspect._ParameterKind`, ...), plus the
by-global-name spelling CPython 3.12+ writes for converted enums (`signal.SIGINT`) and numpy's
pre-1.0 `numpy.core._internal._reconstruct`, assembled as opcodes.

    python3 scripts/make-issue32-fixtures.py
"""
import http
import inspect
import io
import os
import pickle
import re
import signal
import socket
import ssl
import uuid
import zipfile

ROOT = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "pickle")


def members(path):
    z = zipfile.ZipFile(path)
    return [(i.filename, z.read(i.filename)) for i in z.infolist()]


def rezip(ms):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        for name, body in ms:
            z.writestr(zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0)), body)
    return buf.getvalue()


def with_record(head, pad=True):
    src = os.path.join(ROOT, "benign", "real_torch_state_dict_f32.pt")
    out = []
    for name, body in members(src):
        if name == "archive/data/0":
            assert len(head) <= len(body)
            body = head + body[len(head):] if pad else head
        out.append((name, body))
    return rezip(out)


def write(kind, name, data):
    with open(os.path.join(ROOT, kind, name), "wb") as f:
        f.write(data)
    print(f"| `{kind}/{name}` | {len(data)} |")


write("benign", "real_storage_head_proto.pt", with_record(b"\x80\x02"))
write("benign", "real_storage_head_dict_stack_global.pt", with_record(b"}\x93"))
write("benign", "real_storage_head_global.pt", with_record(b"c"))
hidden = b"\x80\x02cos\nsystem\nX\x02\x00\x00\x00ls\x85R."
write("malicious", "storage_hidden_pickle.pt", with_record(hidden))

for name, value in [
    ("signal_signals", signal.Signals.SIGINT),
    ("socket_address_family", socket.AddressFamily.AF_INET),
    ("socket_kind", socket.SocketKind.SOCK_STREAM),
    ("re_regex_flag", re.IGNORECASE | re.MULTILINE),
    ("ssl_tls_version", ssl.TLSVersion.TLSv1_2),
    ("ssl_verify_mode", ssl.VerifyMode.CERT_REQUIRED),
    ("ssl_purpose", ssl.Purpose.SERVER_AUTH),
    ("http_status", http.HTTPStatus.NOT_FOUND),
    ("inspect_parameter_kind", inspect.Parameter.KEYWORD_ONLY),
    ("uuid_safe_uuid", uuid.SafeUUID.safe),
]:
    for proto in (2, 4):
        write("benign", f"stdlib_enum_{name}_p{proto}.pkl", pickle.dumps({"value": value}, protocol=proto))
# By global name (3.12+ `_reduce_ex_by_global_name`): a list of module constants.
write(
    "benign",
    "stdlib_enum_by_global_name.pkl",
    b"\x80\x02]q\x00(csignal\nSIGINT\nq\x01csocket\nAF_INET\nq\x02cre\nIGNORECASE\nq\x03"
    b"cssl\nPROTOCOL_TLS_CLIENT\nq\x04e.",
)
# numpy < 1.0 arrays: `numpy.core._internal._reconstruct(ndarray, (0,), b'b')`.
write(
    "benign",
    "numpy_internal_reconstruct.pkl",
    b"\x80\x02cnumpy.core._internal\n_reconstruct\nq\x00cnumpy\nndarray\nq\x01K\x00\x85q\x02"
    b"C\x01bq\x03\x87q\x04Rq\x05.",
)


# torch.load(weights_only=True) verdicts: the real f32 state dict with its data.pkl edited as
# bytes (nothing loaded). Accepted as saved; refused with a global off the allowlist
# (`collections.OrderedDict` -> `argparse.Namespace`, harmless and on modelgate's safe list, so
# only the weights-only verdict changes); refused with an opcode the weights-only unpickler
# does not implement (the first BINUNICODE `weight` as protocol 4's SHORT_BINUNICODE).
def with_data_pkl(edit):
    src = os.path.join(ROOT, "benign", "real_torch_state_dict_f32.pt")
    return rezip([(n, edit(b) if n.endswith("/data.pkl") else b) for n, b in members(src)])


def swap(old, new):
    def edit(b):
        assert b.count(old) >= 1
        return b.replace(old, new, 1)
    return edit


write(
    "benign",
    "real_weights_only_namespace.pt",
    with_data_pkl(swap(b"ccollections\nOrderedDict\n", b"cargparse\nNamespace\n")),
)
write(
    "benign",
    "real_weights_only_short_binunicode.pt",
    with_data_pkl(swap(b"X\x06\x00\x00\x00weight", b"\x8c\x06weight")),
)


# Third-party loaders and executors, judged by the table or by what their names say, and
# tampering through traversal: opcode-assembled protocol 2 and 4 pickles, never loaded.
def su(s):
    b = s.encode()
    return b"X" + len(b).to_bytes(4, "little") + b


def call2(module, name, *args):
    """GLOBAL module name; REDUCE with string args (protocol 2)."""
    body = b"".join(su(a) for a in args)
    return b"\x80\x02c" + module.encode() + b"\n" + name.encode() + b"\n(" + body + b"tR."


def call4(module, name, *args):
    """STACK_GLOBAL (dotted names reach attributes), REDUCE (protocol 4)."""
    def sbu(s):
        b = s.encode()
        return b"\x8c" + bytes([len(b)]) + b
    body = b"".join(sbu(a) for a in args)
    return b"\x80\x04" + sbu(module) + sbu(name) + b"\x93(" + body + b"tR."


def partial_call(module, name, *args):
    body = b"".join(su(a) for a in args)
    return (
        b"\x80\x02cfunctools\npartial\n(c" + module.encode() + b"\n" + name.encode() + b"\n"
        + body + b"tR."
    )


for fname, data in [
    # In the table now.
    ("loader_hydra_instantiate.pkl", call2("hydra.utils", "instantiate", "cfg")),
    ("loader_keras_load_model.pkl", call2("keras.models", "load_model", "m.keras")),
    ("loader_datasets_load_dataset.pkl", call2("datasets", "load_dataset", "evil/ds")),
    ("loader_ipython_getoutput.pkl", call2("IPython.utils.process", "getoutput", "id")),
    ("loader_ray_cloudpickle_loads.pkl", call2("ray.cloudpickle", "loads", "x")),
    ("loader_tensorflow_write_file.pkl", call4("tensorflow", "io.write_file", "/tmp/x", "y")),
    ("loader_lightning_load.pkl", call2("lightning.fabric.utilities.cloud_io", "_load", "c.ckpt")),
    # Unknown to every table: judged by the name.
    ("name_vendored_cloudpickle_loads.pkl", call2("mylib.vendor.cloudpickle.cloudpickle", "loads", "x")),
    ("name_utils_system.pkl", call2("acme.shell_utils", "system", "id")),
    ("name_instantiate_from_config.pkl", call2("ldm.util", "instantiate_from_config", "cfg")),
    ("name_load_model_checkpoint.pkl", call4("acme.models", "Net.load_from_checkpoint", "c.ckpt")),
    ("name_run_command.pkl", call2("acme.tasks", "run_command", "id")),
    ("name_download_weights.pkl", call2("acme.hub", "download_weights", "http://x")),
    ("name_write_text_file.pkl", call2("acme.io", "write_text_file", "/etc/x", "y")),
    ("name_rmtree.pkl", call2("acme.fs", "rmtree", "/")),
    ("name_packaging_main.pkl", call2("conda.cli.main", "main", "install")),
    (
        "name_partial_from_pretrained.pkl",
        partial_call("transformers.models.auto.modeling_auto", "AutoModel.from_pretrained", "evil/m"),
    ),
    # Tampering through traversal.
    ("tamper_registry_clear.pkl", call4("torch.serialization", "_package_registry.clear")),
    ("tamper_safe_list_update.pkl", call4("acme.scanner", "SAFE_GLOBALS.update", "os")),
    ("tamper_setitem_dunder.pkl", call4("acme.scanner", "ALLOWED.__setitem__", "os", "system")),
    ("tamper_operator_setitem.pkl", call2("operator", "setitem", "a", "b")),
]:
    write("malicious", fname, data)

# Benign twins: constructors and rebuilders with verb-like words that are no verbs.
for fname, data in [
    ("name_benign_loader_class.pkl", call2("acme.data", "Loader", "x")),
    ("name_benign_runtime_stats.pkl", call2("acme.metrics", "runtime_stats", "x")),
    ("name_benign_reference_only.pkl", b"\x80\x02]cacme.io\nload_weights\na."),
    ("name_benign_call_on_class_only.pkl", partial_call("gensim.utils", "call_on_class_only", "x")),
    ("name_benign_main_not_packaging.pkl", call2("acme.app", "main", "x")),
]:
    write("benign", fname, data)

