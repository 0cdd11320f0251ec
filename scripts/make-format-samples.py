"""Writes tiny real model files with each format's own Python package (issue 40).

Run by scripts/format-samples.sh inside its temporary venv, never imported by modelgate: each
library trains or builds a model on a few rows of seeded numpy data and saves it the way users
ship it, so the bytes are the library's own, not a hand-made imitation. Usage:

    python make-format-samples.py OUT [FORMAT...]

Writes OUT/named/<format>/ (the files under the names the libraries use, with a config.json
and a README.md model card, like a model repository) and OUT/neutral/ (each model file once
more under a neutral name, `blobN`, so recognition by content is checked), plus
OUT/expected.json: `{"named/<path>": "<format>", "neutral/<path>": "<format>"}` with the
`files[].format` modelgate should report for each, and OUT/versions.json (package versions).
FORMAT names the generators to run (default: all of them); a missing package is an error.
"""

import json
import os
import shutil
import sys

import numpy as np

RNG = np.random.default_rng(40)
X = RNG.normal(size=(32, 4)).astype(np.float32)
Y = (X[:, 0] + X[:, 1] > 0).astype(np.int64)

CARD = """---
license: apache-2.0
library_name: {library}
tags:
- modelgate-format-sample
---
# {title}

A tiny {title} model written by `scripts/make-format-samples.py` (modelgate, issue 40) with
{library} {version}, trained on 32 rows of seeded random data. It predicts nothing useful.
"""


class Samples:
    """Collects what the generators wrote and what modelgate should call each file."""

    def __init__(self, out):
        self.out = out
        self.expected = {}
        self.versions = {}
        self.neutral_n = 0

    def folder(self, name, library, version, title):
        d = os.path.join(self.out, "named", name)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "README.md"), "w") as f:
            f.write(CARD.format(library=library, version=version, title=title))
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump({"library_name": library, "library_version": version}, f, indent=2)
        self.versions[library] = version
        return d

    def expect(self, folder, rel, fmt, neutral=True, neutral_fmt=None, sibling=None):
        """`rel` (under named/<folder>/) should be `fmt`; a copy under a neutral name too.

        `neutral=False` for files a format only recognises by name or by a sibling (said where
        it is passed); `neutral_fmt` when content alone rightly says something else;
        `sibling=(ext, fmt)`: the file's companion (`rel` with its extension replaced by `ext`)
        goes beside the neutral copy as `blobN<ext>` and should be `fmt` there.
        """
        path = f"named/{folder}/{rel}"
        self.expected[path] = fmt
        if not neutral:
            return
        self.neutral_n += 1
        # No extension: a name that claims nothing (a `.bin` claims PyTorch-like content, so a
        # CatBoost model named `blob.bin` is rightly FMT001, format-mismatch).
        name = f"blob{self.neutral_n}"
        dest = os.path.join(self.out, "neutral", name)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(os.path.join(self.out, path), dest)
        self.expected[f"neutral/{name}"] = neutral_fmt or fmt
        if sibling:
            ext, sibling_fmt = sibling
            src = os.path.join(self.out, os.path.splitext(path)[0] + ext)
            shutil.copyfile(src, dest + ext)
            self.expected[f"neutral/{name}{ext}"] = sibling_fmt


def make_xgboost(s):
    import xgboost as xgb

    d = s.folder("xgboost", "xgboost", xgb.__version__, "XGBoost")
    model = xgb.XGBClassifier(n_estimators=3, max_depth=2, n_jobs=1)
    model.fit(X, Y)
    model.save_model(os.path.join(d, "model.json"))
    model.save_model(os.path.join(d, "model.ubj"))
    s.expect("xgboost", "model.json", "xgboost")
    s.expect("xgboost", "model.ubj", "xgboost")


def make_catboost(s):
    import catboost as cb

    d = s.folder("catboost", "catboost", cb.__version__, "CatBoost")
    model = cb.CatBoostClassifier(
        iterations=3, depth=2, verbose=False, allow_writing_files=False, thread_count=1
    )
    model.fit(X, Y)
    model.save_model(os.path.join(d, "model.cbm"))
    # CatBoost's JSON export is a plain JSON document (no `learner` key): json, not xgboost.
    model.save_model(os.path.join(d, "model.json"), format="json")
    s.expect("catboost", "model.cbm", "catboost")
    s.expect("catboost", "model.json", "json", neutral_fmt="text")


def make_lightgbm(s):
    import lightgbm as lgb

    d = s.folder("lightgbm", "lightgbm", lgb.__version__, "LightGBM")
    params = {"objective": "binary", "num_leaves": 3, "min_data_in_leaf": 2, "verbose": -1}
    booster = lgb.train(params, lgb.Dataset(X, label=Y), num_boost_round=3)
    booster.save_model(os.path.join(d, "model.txt"))
    s.expect("lightgbm", "model.txt", "lightgbm")


def make_skops(s):
    import sklearn
    import skops
    import skops.io as sio
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    d = s.folder("skops", "skops", skops.__version__, "skops (scikit-learn)")
    s.versions["scikit-learn"] = sklearn.__version__
    pipe = make_pipeline(StandardScaler(), LogisticRegression(max_iter=50))
    pipe.fit(X, Y)
    sio.dump(pipe, os.path.join(d, "model.skops"))
    s.expect("skops", "model.skops", "skops")


def make_openvino(s):
    import openvino as ov
    import openvino.runtime.opset13 as ops

    d = s.folder("openvino", "openvino", ov.__version__.split("-")[0], "OpenVINO IR")
    x = ops.parameter([1, 4], np.float32, name="input")
    w = ops.constant(RNG.normal(size=(4, 8)).astype(np.float32))
    b = ops.constant(RNG.normal(size=(1, 8)).astype(np.float32))
    h = ops.relu(ops.add(ops.matmul(x, w, False, False), b))
    w2 = ops.constant(RNG.normal(size=(8, 2)).astype(np.float32))
    y = ops.softmax(ops.matmul(h, w2, False, False), 1)
    model = ov.Model([y], [x], "tiny")
    ov.save_model(model, os.path.join(d, "openvino_model.xml"), compress_to_fp16=False)
    # The fp16 form `ov.save_model` writes by default (compressed constants, Convert ops).
    ov.save_model(model, os.path.join(d, "openvino_model_fp16.xml"))
    for stem in ("openvino_model", "openvino_model_fp16"):
        # The XML is recognised by content; the .bin (raw constants) only as the XML's stem
        # plus `.bin`, so its neutral copy goes beside the XML's (`blobN` -> `blobN.bin`).
        s.expect("openvino", f"{stem}.bin", "openvino-weights", neutral=False)
        s.expect("openvino", f"{stem}.xml", "openvino", sibling=(".bin", "openvino-weights"))


def make_coreml(s):
    import coremltools as ct
    from coremltools.converters.mil import Builder as mb
    from coremltools.models import datatypes
    from coremltools.models.neural_network import NeuralNetworkBuilder

    d = s.folder("coreml", "coremltools", ct.__version__, "Core ML")
    builder = NeuralNetworkBuilder(
        [("input", datatypes.Array(4))], [("output", datatypes.Array(3))]
    )
    builder.add_inner_product(
        name="dense",
        W=RNG.normal(size=(3, 4)),
        b=RNG.normal(size=3),
        input_channels=4,
        output_channels=3,
        has_bias=True,
        input_name="input",
        output_name="dense_out",
    )
    builder.add_activation("relu", "RELU", "dense_out", "output")
    ct.utils.save_spec(builder.spec, os.path.join(d, "model.mlmodel"))
    s.expect("coreml", "model.mlmodel", "coreml")

    weight = RNG.normal(size=(16, 4)).astype(np.float32)
    bias = RNG.normal(size=16).astype(np.float32)

    @mb.program(input_specs=[mb.TensorSpec(shape=(1, 4))])
    def prog(x):
        return mb.relu(x=mb.linear(x=x, weight=weight, bias=bias))

    # skip_model_load: compiling needs macOS; saving the package does not.
    model = ct.convert(
        prog,
        convert_to="mlprogram",
        skip_model_load=True,
        compute_precision=ct.precision.FLOAT32,
    )
    model.save(os.path.join(d, "model.mlpackage"))
    pkg = "model.mlpackage/Data/com.apple.CoreML"
    s.expect("coreml", f"{pkg}/model.mlmodel", "coreml")
    s.expect("coreml", f"{pkg}/weights/weight.bin", "coreml-weights")
    # The package's Manifest.json is plain JSON.
    s.expect("coreml", "model.mlpackage/Manifest.json", "json", neutral=False)


def make_flax(s):
    import flax
    import flax.linen as nn
    import jax
    import jax.numpy as jnp
    from flax.serialization import to_bytes

    d = s.folder("flax", "flax", flax.__version__, "Flax")
    s.versions["jax"] = jax.__version__

    class Tiny(nn.Module):
        @nn.compact
        def __call__(self, x):
            x = nn.relu(nn.Dense(8)(x))
            x = nn.LayerNorm()(x)
            return nn.Dense(2, dtype=jnp.bfloat16, param_dtype=jnp.bfloat16)(x)

    variables = Tiny().init(jax.random.PRNGKey(0), jnp.ones((1, 4)))
    # What transformers' FlaxPreTrainedModel.save_pretrained writes: the params tree.
    with open(os.path.join(d, "flax_model.msgpack"), "wb") as f:
        f.write(to_bytes(variables["params"]))
    # A training-state-like tree: a step counter, an int array and a scalar beside the params.
    state = {
        "step": 3,
        "params": variables["params"],
        "counts": jnp.arange(6, dtype=jnp.int32).reshape(2, 3),
        "scale": jnp.float32(0.5),
    }
    with open(os.path.join(d, "checkpoint_3"), "wb") as f:
        f.write(to_bytes(state))
    s.expect("flax", "flax_model.msgpack", "msgpack")
    s.expect("flax", "checkpoint_3", "msgpack")


def make_paddle(s):
    import paddle
    from paddle.static import InputSpec

    d = s.folder("paddle", "paddlepaddle", paddle.__version__, "PaddlePaddle")
    paddle.seed(40)

    class Tiny(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc1 = paddle.nn.Linear(4, 8)
            self.fc2 = paddle.nn.Linear(8, 2)

        def forward(self, x):
            return paddle.nn.functional.softmax(self.fc2(paddle.nn.functional.relu(self.fc1(x))))

    layer = Tiny()
    layer.eval()
    # Writes inference.pdmodel (the ProgramDesc) and inference.pdiparams (the parameters).
    paddle.jit.save(layer, os.path.join(d, "inference"), input_spec=[InputSpec([None, 4], "float32")])
    # paddle.save writes a pickle: `.pdparams` stays a pickle (judged as one).
    paddle.save(layer.state_dict(), os.path.join(d, "model.pdparams"))
    s.expect("paddle", "inference.pdmodel", "paddle")
    # `.pdiparams` is recognised by its name and its first record's version 0 (raw tensors
    # have no magic of their own).
    s.expect("paddle", "inference.pdiparams", "paddle-params", neutral=False)
    s.expect("paddle", "model.pdparams", "pickle")
    for extra in sorted(os.listdir(d)):
        if extra.endswith(".info"):
            # paddle.jit.save's `inference.pdiparams.info`: a pickle of parameter names.
            s.expect("paddle", extra, "pickle", neutral=False)


# The generators are `make_<format>`: a module-level function named `paddle` would shadow the
# package in paddle.jit's source-to-static translation, which resolves names in these globals.
GENERATORS = {
    "xgboost": make_xgboost,
    "catboost": make_catboost,
    "lightgbm": make_lightgbm,
    "skops": make_skops,
    "openvino": make_openvino,
    "coreml": make_coreml,
    "flax": make_flax,
    "paddle": make_paddle,
}


def main():
    out = sys.argv[1]
    wanted = sys.argv[2:] or list(GENERATORS)
    unknown = [w for w in wanted if w not in GENERATORS]
    if unknown:
        sys.exit(f"unknown formats {unknown}; known: {', '.join(GENERATORS)}")
    s = Samples(out)
    for name in wanted:
        GENERATORS[name](s)
        print(f"wrote {name}", flush=True)
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(s.expected, f, indent=1, sort_keys=True)
    with open(os.path.join(out, "versions.json"), "w") as f:
        json.dump(s.versions, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
