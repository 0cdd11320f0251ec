#!/usr/bin/env python3
"""Generate the real-library pickle fixtures of issue 16 under tests/fixtures/pickle/.

Benign files (`benign/real_*`) are written by the real libraries: torch state dicts (fp32,
bf16, a quantized tensor, shared-storage views, float8/uint16 tensors that torch writes with
`_rebuild_tensor_v3` over an `UntypedStorage`, a bare `UntypedStorage`, a legacy non-zip save),
numpy 2 object arrays, a transformers `TrainingArguments` saved as `training_args.bin`, a
Lightning checkpoint with `argparse.Namespace` hparams and `pathlib` paths, and scikit-learn,
xgboost and lightgbm models through pickle and joblib.

Malicious files (`malicious/real_exploit_*`) are those real saves with one number edited in
their bytes (a view size, a dtype global, a declared storage size, a legacy storage record):
the tensor-view and storage shapes of the 2026 weights-only heap-corruption advisories. They
are edited as bytes and never loaded; the only files this script loads are benign ones it has
just written itself (a round trip that proves they are real, loadable saves).

The libraries come from PyPI into a temporary venv (torch from PyPI is the CUDA build, several
GB; only the CPU is used). Run from the repository root:

    python3 scripts/make-real-pickle-fixtures.py            # creates /tmp/modelgate-fixtures-venv
    MODELGATE_FIXTURE_VENV=/path/to/venv python3 scripts/...  # reuse a venv

Saves are not byte-reproducible (torch writes a random serialization id and, in the legacy
format, storage keys taken from memory addresses); tests/fixtures/pickle/README.md lists each
file with the versions that wrote it.
"""
import os
import subprocess
import sys

# What the committed fixtures were written with.
PINS = [
    "torch==2.15.0",
    "numpy==2.4.6",
    "transformers==5.24.0",
    "accelerate==1.15.0",
    "lightning==2.6.6",
    "scikit-learn==1.9.1",
    "xgboost==3.2.0",
    "lightgbm==4.7.0",
    "joblib==1.6.0",
]

ROOT = os.path.join("tests", "fixtures", "pickle")


def ensure_venv():
    """Re-run this script inside a venv that has the pinned libraries."""
    if os.environ.get("MODELGATE_FIXTURE_INSIDE") == "1":
        return
    venv = os.environ.get("MODELGATE_FIXTURE_VENV", "/tmp/modelgate-fixtures-venv")
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    subprocess.run([python, "-m", "pip", "install", "-q", *PINS], check=True)
    env = dict(os.environ, MODELGATE_FIXTURE_INSIDE="1", CUDA_VISIBLE_DEVICES="")
    sys.exit(subprocess.run([python, os.path.abspath(__file__)], env=env).returncode)


ensure_venv()

import argparse  # noqa: E402
import io  # noqa: E402
import pathlib  # noqa: E402
import pickle  # noqa: E402
import pickletools  # noqa: E402
import struct  # noqa: E402
import tempfile  # noqa: E402
import warnings  # noqa: E402
import zipfile  # noqa: E402

import joblib  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

warnings.filterwarnings("ignore")
torch.manual_seed(0)
np.random.seed(0)

WRITTEN = []  # (kind, name, how) for the README


def write(kind, name, data, how):
    path = os.path.join(ROOT, kind, name)
    with open(path, "wb") as f:
        f.write(data)
    WRITTEN.append((kind, name, len(data), how))


def torch_bytes(obj, **kw):
    buf = io.BytesIO()
    torch.save(obj, buf, **kw)
    return buf.getvalue()


def check_loads(data, weights_only=True):
    """Round trip of a benign save this script just wrote (never of an edited file)."""
    torch.load(io.BytesIO(data), weights_only=weights_only)


# --- editing real saves (bytes only, nothing loaded) -------------------------------------


def zip_members(data):
    z = zipfile.ZipFile(io.BytesIO(data))
    return [(i.filename, z.read(i.filename)) for i in z.infolist()]


def rezip(members):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        for name, body in members:
            z.writestr(zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0)), body)
    return buf.getvalue()


def encode_int(n):
    if 0 <= n < 256:
        return b"K" + bytes([n])
    if 0 <= n < 65536:
        return b"M" + struct.pack("<H", n)
    return b"J" + struct.pack("<i", n)


def ops_of(pkl):
    """(opcode name, arg, start, end) of every opcode."""
    ops = list(pickletools.genops(pkl))
    out = []
    for i, (op, arg, pos) in enumerate(ops):
        end = ops[i + 1][2] if i + 1 < len(ops) else len(pkl)
        out.append((op.name, arg, pos, end))
    return out


def patch_op(pkl, index, new):
    """Replace the `index`-th opcode (with its argument) by the bytes `new`."""
    _, _, start, end = ops_of(pkl)[index]
    return pkl[:start] + new + pkl[end:]


def edit_data_pkl(data, edit):
    """A torch zip save with its data.pkl passed through `edit` (bytes -> bytes)."""
    members = zip_members(data)
    return rezip([(n, edit(b) if n.endswith("/data.pkl") else b) for n, b in members])


def find(pkl, pred, nth=0):
    hits = [i for i, op in enumerate(ops_of(pkl)) if pred(*op)]
    return hits[nth]


def after_persid(pkl, k, nth=0):
    """Index of the k-th opcode after the nth BINPERSID (0: storage_offset, 1: size int)."""
    return find(pkl, lambda name, *_: name == "BINPERSID", nth) + k


# --- benign ---------------------------------------------------------------------------------


def benign_torch():
    lin = torch.nn.Linear(3, 2)
    sd = lin.state_dict()
    f32 = torch_bytes(sd)
    check_loads(f32)
    write("benign", "real_torch_state_dict_f32.pt", f32, "torch.save(nn.Linear(3, 2).state_dict())")

    bf16 = torch_bytes({k: v.to(torch.bfloat16) for k, v in sd.items()})
    check_loads(bf16)
    write("benign", "real_torch_state_dict_bf16.pt", bf16, "torch.save of the same state dict in bfloat16")

    x = torch.arange(12, dtype=torch.float32)
    views = {"whole": x, "tail": x[4:10], "grid_t": x.view(3, 4).t(), "every_other": x[1::2], "empty": x[12:]}
    shared = torch_bytes(views)
    check_loads(shared)
    write("benign", "real_torch_shared_views.pt", shared, "torch.save of views sharing one storage (offsets, transposed and strided)")

    q = torch.quantize_per_tensor(torch.tensor([0.5, -1.0, 2.0, 0.0]), 0.1, 3, torch.qint8)
    qc = torch.quantize_per_channel(torch.ones(2, 3), torch.tensor([0.1, 0.2]), torch.tensor([0, 1]), 0, torch.quint8)
    quant = torch_bytes({"per_tensor": q, "per_channel": qc})
    check_loads(quant)
    write("benign", "real_torch_quantized.pt", quant, "torch.save of quantize_per_tensor (qint8) and quantize_per_channel (quint8) tensors")

    new_dtypes = {
        "f8": torch.tensor([0.5, 1.0, -2.0, 0.0]).to(torch.float8_e4m3fn),
        "u16": torch.tensor([1, 2, 3], dtype=torch.int32).to(torch.uint16),
        "u16_view": torch.tensor([1, 2, 3, 4], dtype=torch.int32).to(torch.uint16)[1:3],
    }
    v3 = torch_bytes(new_dtypes)
    check_loads(v3)
    write("benign", "real_torch_untyped_v3.pt", v3, "torch.save of float8_e4m3fn and uint16 tensors (_rebuild_tensor_v3 over UntypedStorage)")

    untyped = torch_bytes({"raw": torch.arange(6, dtype=torch.int16).untyped_storage()})
    check_loads(untyped)
    write("benign", "real_torch_untyped_storage.pt", untyped, "torch.save of a bare UntypedStorage")

    legacy = torch_bytes(
        {"w": torch.ones(2, 3), "b": torch.zeros(2, dtype=torch.bfloat16), "n": torch.tensor([7]), "view": x[2:5]},
        _use_new_zipfile_serialization=False,
    )
    check_loads(legacy)
    write("benign", "real_torch_legacy.pt", legacy, "torch.save(..., _use_new_zipfile_serialization=False): f32, bf16, int64 and a view")
    return {"v3": v3, "legacy": legacy, "untyped": untyped}


def benign_numpy():
    obj = np.array([1, "two", None, 3.5, {"k": [1, 2]}], dtype=object)
    for p in (2, 4, 5):
        write("benign", f"real_numpy{np.__version__.split('.')[0]}_object_array_p{p}.pkl", pickle.dumps(obj, protocol=p), f"pickle.dumps(object ndarray, protocol={p})")
    buf = io.BytesIO()
    np.save(buf, obj, allow_pickle=True)
    write("benign", "real_numpy2_object_array.npy", buf.getvalue(), "np.save(object ndarray, allow_pickle=True)")


def benign_transformers():
    from transformers import TrainingArguments

    with tempfile.TemporaryDirectory() as d:
        args = TrainingArguments(output_dir=os.path.join(d, "out"), per_device_train_batch_size=2, num_train_epochs=1, report_to=[], use_cpu=True)
        data = torch_bytes(args)
    check_loads(data, weights_only=False)
    write("benign", "real_training_args.bin", data, "torch.save(transformers.TrainingArguments(...)), as Trainer writes training_args.bin")


def benign_lightning():
    import lightning.pytorch as pl

    class Tiny(pl.LightningModule):
        def __init__(self, hparams_ns):
            super().__init__()
            self.save_hyperparameters(hparams_ns)
            self.layer = torch.nn.Linear(2, 1)

        def training_step(self, batch, _):
            x, y = batch
            return torch.nn.functional.mse_loss(self.layer(x), y)

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    ns = argparse.Namespace(lr=0.1, data_dir=pathlib.PosixPath("/data/train"), out=pathlib.PurePosixPath("runs/1"))
    ds = torch.utils.data.TensorDataset(torch.ones(4, 2), torch.zeros(4, 1))
    with tempfile.TemporaryDirectory() as d:
        trainer = pl.Trainer(
            max_steps=1,
            accelerator="cpu",
            logger=False,
            enable_checkpointing=False,
            enable_progress_bar=False,
            enable_model_summary=False,
            default_root_dir=d,
        )
        trainer.fit(Tiny(ns), torch.utils.data.DataLoader(ds, batch_size=2))
        path = os.path.join(d, "last.ckpt")
        trainer.save_checkpoint(path)
        data = open(path, "rb").read()
    write("benign", "real_lightning.ckpt", data, "lightning Trainer.save_checkpoint after one step; hparams an argparse.Namespace with pathlib paths")


def joblib_bytes(obj):
    buf = io.BytesIO()
    joblib.dump(obj, buf)
    return buf.getvalue()


def benign_estimators():
    from lightgbm import LGBMClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from xgboost import XGBClassifier

    x = np.array([[0.0, 1.0], [1.0, 0.0], [0.5, 0.5], [1.0, 1.0], [0.0, 0.0], [0.2, 0.9]] * 2)
    y = np.array([0, 1, 0, 1, 0, 1] * 2)
    models = {
        "sklearn_pipeline": make_pipeline(StandardScaler(), LogisticRegression()).fit(x, y),
        "xgboost": XGBClassifier(n_estimators=2, max_depth=1, n_jobs=1).fit(x, y),
        "lightgbm": LGBMClassifier(n_estimators=2, num_leaves=2, min_child_samples=1, verbose=-1).fit(x, y),
    }
    for name, model in models.items():
        write("benign", f"real_{name}.pkl", pickle.dumps(model, protocol=pickle.HIGHEST_PROTOCOL), f"pickle.dumps(fitted {type(model).__name__})")
        write("benign", f"real_{name}.joblib", joblib_bytes(model), f"joblib.dump(fitted {type(model).__name__})")


# --- malicious: real saves with one number edited --------------------------------------


def malicious(saves):
    v3 = saves["v3"]

    # The float8 tensor's size (4) past its 4-byte UntypedStorage.
    def view_past_end(pkl):
        i = after_persid(pkl, 2)  # BINPERSID, offset, size int
        assert ops_of(pkl)[i][:2] == ("BININT1", 4), ops_of(pkl)[i]
        return patch_op(pkl, i, encode_int(64))

    write("malicious", "real_exploit_untyped_view_past_end.pt", edit_data_pkl(v3, view_past_end), "real_torch_untyped_v3.pt with the float8 view's size 4 -> 64 over its 4-byte UntypedStorage")

    # Same view, its dtype global widened: 4 float64 elements over 4 bytes.
    def dtype_widened(pkl):
        i = find(pkl, lambda name, arg, *_: name == "GLOBAL" and arg == "torch float8_e4m3fn")
        return patch_op(pkl, i, b"ctorch\nfloat64\n")

    write("malicious", "real_exploit_v3_dtype_past_end.pt", edit_data_pkl(v3, dtype_widened), "real_torch_untyped_v3.pt with _rebuild_tensor_v3's dtype float8_e4m3fn -> float64 (32 bytes read from 4)")

    # The uint16 view's storage_offset past the end of its 8-byte storage.
    def offset_past_end(pkl):
        i = after_persid(pkl, 1, nth=2)
        return patch_op(pkl, i, encode_int(1000))

    write("malicious", "real_exploit_v3_offset_past_end.pt", edit_data_pkl(v3, offset_past_end), "real_torch_untyped_v3.pt with the uint16 view's storage_offset -> 1000")

    # The UntypedStorage's declared byte count raised above its data/<key> record.
    def declared_bigger(pkl):
        # The persistent id tuple ends (..., location, numel) TUPLE BINPUT; walk back to numel.
        i = find(pkl, lambda name, *_: name == "BINPERSID") - 1
        ops = ops_of(pkl)
        while ops[i][0] not in ("BININT1", "BININT2", "BININT"):
            i -= 1
        return patch_op(pkl, i, encode_int(4096))

    write("malicious", "real_exploit_untyped_storage_size_mismatch.pt", edit_data_pkl(v3, declared_bigger), "real_torch_untyped_v3.pt with the UntypedStorage's declared size 4 -> 4096 (data/0 holds 4 bytes)")

    legacy = saves["legacy"]
    # The storage block starts after the five pickles; each record is an 8-byte count.
    f = io.BytesIO(legacy)
    for _ in range(5):
        pickle_end(f)
    start = f.tell()
    count = struct.unpack("<q", legacy[start : start + 8])[0]
    bigger = legacy[:start] + struct.pack("<q", count + 1000) + legacy[start + 8 :]
    write("malicious", "real_exploit_legacy_size_mismatch.pt", bigger, f"real_torch_legacy.pt with the first storage record's count {count} -> {count + 1000}")
    write("malicious", "real_exploit_legacy_truncated.pt", legacy[: start + 8 + 4], "real_torch_legacy.pt cut 4 bytes into its first storage record")
    write("malicious", "real_exploit_legacy_trailing.pt", legacy + b"\0" * 64, "real_torch_legacy.pt with 64 bytes after its last storage record")


def pickle_end(f):
    """Advance `f` past one pickle by walking its opcodes (pickletools reads, never loads)."""
    for op, _, _ in pickletools.genops(f):
        if op.name == "STOP":
            return


def readme():
    lines = [
        "# Pickle fixtures (issue 16)",
        "",
        "Files not named `real_*` come from `scripts/make-pickle-fixtures.py` (see",
        "`tests/fixtures/README.md`). The `real_*` files below come from",
        "`scripts/make-real-pickle-fixtures.py`, run with Python "
        + ".".join(map(str, sys.version_info[:3]))
        + " and "
        + ", ".join(PINS)
        + " from PyPI (CPU only). Malicious ones are real saves with one number edited as bytes; none was loaded.",
        "",
        "| file | bytes | written by |",
        "|---|---|---|",
    ]
    for kind, name, size, how in sorted(WRITTEN):
        lines.append(f"| `{kind}/{name}` | {size} | {how} |")
    with open(os.path.join(ROOT, "README.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    for kind in ("malicious", "benign"):
        os.makedirs(os.path.join(ROOT, kind), exist_ok=True)
    saves = benign_torch()
    benign_numpy()
    benign_transformers()
    benign_lightning()
    benign_estimators()
    malicious(saves)
    readme()
    total = sum(size for _, _, size, _ in WRITTEN)
    print(f"{len(WRITTEN)} files, {total} bytes")


if __name__ == "__main__":
    main()
