#!/usr/bin/env bash
# Real files of the issue-40 formats, written by each format's own library (issue 40: "a
# generator script may use the format's own Python package from PyPI to write samples"). No
# PyPI package ships a real CatBoost `.cbm`, XGBoost model, Flax checkpoint or Paddle program, so
# this script installs the libraries into a temporary Python 3.11 venv, lets
# scripts/make-format-samples.py train or build a tiny model with each (32 rows of seeded numpy
# data) and save it the way users ship it, and scans the result with modelgate's default policy:
#   named/<format>/  the files under the libraries' own names, with a config.json and a README.md
#                    model card, as a model repository;
#   neutral/         each model file once more as `blobN` (no extension: a name that claims
#                    nothing), so recognition is by content.
# It asserts, per file, the JSON report's `files[].format` (the expected value comes from the
# generator's expected.json), and for the whole scan: no file is "unknown", no FMT002
# (unknown-weights), no FMT007/FMT009/ST001 (a valid file called broken), nothing denied and exit
# code 0; and the facts these tiny models must yield (XGBoost: 3 trees and the writer's version;
# LightGBM: 3 trees; Core ML: layers or ML program operations listed; OpenVINO: no custom layer;
# Flax: tensors listed; Paddle: operators listed). A table prints each file's format and findings
# (rule and action). Formats and files:
#   xgboost   xgboost-cpu 2.1.4   model.json, model.ubj (save_model; JSON and UBJSON)
#   catboost  catboost 1.2.7      model.cbm, model.json (save_model, format="json": plain JSON)
#   lightgbm  lightgbm 4.5.0      model.txt
#   skops     skops 0.11.0 + scikit-learn 1.5.2   model.skops (StandardScaler + LogisticRegression)
#   openvino  openvino 2024.6.0   openvino_model.xml/.bin (fp32) and openvino_model_fp16.xml/.bin
#                                 (the default compressed form), built with the opset13 API
#   coreml    coremltools 8.1     model.mlmodel (NeuralNetworkBuilder) and model.mlpackage (an ML
#                                 program from the MIL builder, saved without compiling: no macOS)
#   flax      flax 0.8.5, jax/jaxlib 0.4.30   flax_model.msgpack (to_bytes of Dense/LayerNorm
#                                 params, one layer bfloat16) and checkpoint_3 (a state tree)
#   paddle    paddlepaddle 2.6.2  inference.pdmodel/.pdiparams (paddle.jit.save) and
#                                 model.pdparams (paddle.save: a pickle). 2.6.2 is the last release
#                                 whose jit.save writes a `.pdmodel` ProgramDesc: 3.x saves the new
#                                 IR as `.json` by default.
# Wheel sizes (cp311, manylinux x86_64): paddlepaddle 126.0 MB, catboost 98.7, jaxlib 79.6,
# openvino 44.7, scipy 38.6, numpy 18.3, scikit-learn 13.3, pandas 11.1 (catboost imports it),
# pillow 7.1 (paddle imports it), sympy 6.3 (coremltools), ml_dtypes 5.0, xgboost-cpu 4.5,
# lightgbm 3.6, coremltools 2.2, jax 2.0, the 36 others 6.4 in all: 468 MB with paddle, 334 MB
# without. So paddle is opt-in (FORMAT_SAMPLES=all), to keep the default download under 400 MB.
# Only what each library imports is installed (`pip install --no-deps`, every wheel pinned by
# file name and SHA-256 below): catboost's plotting stack (matplotlib, plotly, graphviz), flax's
# training stack (optax, orbax-checkpoint, tensorstore) and skops's huggingface_hub are left out.
# Nothing here was skipped for failing to install: all eight install and run on linux x86_64.
# What its first run found, each fixed in the reader with a unit test built from the same bytes:
# OpenVINO's serializer spells Relu/PRelu/Softmax `ReLU`/`PReLU`/`SoftMax`, which were FMT008
# (custom layer) on every real IR; an ML program's operations (the `.mlpackage` spec) were not
# listed; an XGBoost UBJSON model's version was not read.
# Measured (2026-12-03, the shared 2-core machine at load 1-5, release build, `time`): the
# default set 30-40 s with an empty cache (334 MB downloaded), 22-29 s warm; FORMAT_SAMPLES=all
# 124 s with an empty cache (468 MB; load 5), 30-43 s warm. Most of it is pip unpacking the wheels and
# the libraries' imports; the two scans take under a second.
#
# Downloads are cached in ${XDG_CACHE_HOME:-~/.cache}/modelgate-real-world (shared with
# scripts/real-world.sh; scripts/pinned_pypi.py checks each file's pinned digest on every use)
# and come only from PyPI (PYPI_URL); pip installs from those files with --no-index.
# Usage: scripts/format-samples.sh [path/to/modelgate]   (default: builds target/debug/modelgate)
# Environment: FORMAT_SAMPLES (the formats to write: space-separated names from the list above,
# or `all`; default every one but paddle), FORMAT_SAMPLES_KEEP (a directory to keep the samples
# and the JSON reports in), PYTHON (a Python 3.11 for the venv; default pyenv's newest 3.11,
# else python3.11, else python3). The venv is the script's own (the pins are cp311 wheels), not
# .ci/run's MODELGATE_VENV. Exit 0 when every check holds, 1 on a mismatch, 2 when a download,
# the Python or the tool itself fails. .ci/run calls it beside scripts/real-world.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
# bin, cache, work (scripts/pinned-setup.sh)
# shellcheck source=scripts/pinned-setup.sh
. scripts/pinned-setup.sh "$@"

# format name version file sha256 (PyPI's digest of that file). `base` is needed by all.
cat >"$work/pins.txt" <<'EOF'
base numpy 1.26.4 numpy-1.26.4-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl 666dbfb6ec68962c033a450943ded891bed2d54e6755e35e5835d63f4f6931d5
base scipy 1.13.1 scipy-1.13.1-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl a78b4b3345f1b6f68a763c6e25c0c9a23a9fd0f39f5f3d200efe8feda560a5fa
base packaging 26.4 packaging-26.4-py3-none-any.whl 81383611a09c1bc0b08b76e0fd5829d7c6824c65b27a6aee339da133f4233ea2
base typing_extensions 4.16.0 typing_extensions-4.16.0-py3-none-any.whl 481caa481374e813c1b176ada14e97f1f67a4539ce9cfeb3f350d78d6370c2e8
xgboost xgboost-cpu 2.1.4 xgboost_cpu-2.1.4-py3-none-manylinux2014_x86_64.whl ac3281127b2f77f6c62e8699216b0974a1c4a442ee6162eb94256c01df7cd1f5
lightgbm lightgbm 4.5.0 lightgbm-4.5.0-py3-none-manylinux_2_28_x86_64.whl 960a0e7c077de0ca3053f1325d3edfc92ea815acf5176adcacdea0f635aeef9b
catboost catboost 1.2.7 catboost-1.2.7-cp311-cp311-manylinux2014_x86_64.whl 45b2e6f8d52fd6bbe02d1dee57c9950ab974a5e30af841020359cf7fb198bcbc
catboost pandas 3.0.6 pandas-3.0.6-cp311-cp311-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl 47121f9571503f724c9b93e297ab6254ac99c77adf5e9ed085ea419fd585c258
catboost python-dateutil 4.0.0 python_dateutil-4.0.0-py3-none-any.whl a5e246f79eb80475e691bf93862cead98decd8a498cf53ba0516fcdc0f50dc1c
catboost six 1.17.0 six-1.17.0-py2.py3-none-any.whl 4721f391ed90541fddacab5acf947aa0d3dc7d27b2e1e8eda2be8970586c3274
catboost tzdata 2026.6 tzdata-2026.6-py2.py3-none-any.whl 0a10eec6e13ef16b627fabed9a5f2ba61a62b1c67f327305f4e7e412a70b4aec
skops scikit-learn 1.5.2 scikit_learn-1.5.2-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl f8b0ccd4a902836493e026c03256e8b206656f91fbcc4fde28c57a5b752561f1
skops joblib 1.6.0 joblib-1.6.0-py3-none-any.whl 3dbbf9f6e4b592a2357b854608e980fe6390d131d7a82f011a377ef2ebef7aba
skops threadpoolctl 3.8.0 threadpoolctl-3.8.0-py3-none-any.whl f1b49c82704d50f13ffae019c727b0fa4f6791a58f48f06a09c45face1be66da
skops cloudpickle 3.1.3 cloudpickle-3.1.3-py3-none-any.whl 1654f4f18e416447210a63c5c25a135d65a292156aa5fa519dfa4baf7726dddb
skops skops 0.11.0 skops-0.11.0-py3-none-any.whl 8c6109e27e4d762948cad7d21de008034bd14e15f111e9405c7930e74a7fe8c1
skops tabulate 0.10.0 tabulate-0.10.0-py3-none-any.whl f0b0622e567335c8fabaaa659f1b33bcb6ddfe2e496071b743aa113f8774f2d3
openvino openvino 2024.6.0 openvino-2024.6.0-17404-cp311-cp311-manylinux2014_x86_64.whl 444a6d3a746dd728654877993c30582faefcad2868c80ec261839a144b8925bc
openvino openvino-telemetry 2025.2.0 openvino_telemetry-2025.2.0-py3-none-any.whl bcb667e83a44f202ecf4cfa49281715c6d7e21499daec04ff853b7f964833599
coreml coremltools 8.1 coremltools-8.1-cp311-none-manylinux1_x86_64.whl b4624cffd71be7942e818f03a5c863f6b6910fd7ffbd631242e926500a53e337
coreml,paddle protobuf 7.36.2 protobuf-7.36.2-cp310-abi3-manylinux2014_x86_64.whl 89f23aa53c24553a2416fd4fd1ec06f74fa42b14b546d8883128813f775bbfd2
coreml sympy 1.14.0 sympy-1.14.0-py3-none-any.whl e091cc3e99d2141a0ba2847328f5479b05d94a6635cb96148ccb3f34671bd8f5
coreml mpmath 1.3.0 mpmath-1.3.0-py3-none-any.whl a0b2b9fe80bbcd81a6647ff13108738cfb482d481d826cc0e02f5b35e5c88d2c
coreml tqdm 4.70.1 tqdm-4.70.1-py3-none-any.whl c293e525e6fef9c20e8728fd4612df02a0aa31bb5fe91ecd93e123b1b7bffa73
coreml attrs 26.1.0 attrs-26.1.0-py3-none-any.whl c647aa4a12dfbad9333ca4e71fe62ddc36f4e63b2d260a37a8b83d2f043ac309
coreml cattrs 26.2.1 cattrs-26.2.1-py3-none-any.whl a12aaa3453dc8f633a815293179f08b7421ed18d2575c459c3c736f840beac24
coreml pyaml 26.7.0 pyaml-26.7.0-py3-none-any.whl cfa382780c43ae660669b87d394d550a41856ef175f5749f51f753e12d7077ac
coreml,flax PyYAML 6.0.4 pyyaml-6.0.4-cp311-cp311-manylinux2014_x86_64.manylinux_2_17_x86_64.manylinux_2_28_x86_64.whl 622aa875fa6533f25fedcffe23079357d65a690d462200afed5d8e9d0e01ebee
flax jax 0.4.30 jax-0.4.30-py3-none-any.whl 289b30ae03b52f7f4baf6ef082a9f4e3e29c1080e22d13512c5ecf02d5f1a55b
flax jaxlib 0.4.30 jaxlib-0.4.30-cp311-cp311-manylinux2014_x86_64.whl 16b2ab18ea90d2e15941bcf45de37afc2f289a029129c88c8d7aba0404dd0043
flax ml_dtypes 0.5.4 ml_dtypes-0.5.4-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl 19b9a53598f21e453ea2fbda8aa783c20faff8e1eeb0d7ab899309a0053f1483
flax,paddle opt-einsum 3.3.0 opt_einsum-3.3.0-py3-none-any.whl 2455e59e3947d3c275477df7f5205b30635e266fe6dc300e3d9f9646bfcea147
flax flax 0.8.5 flax-0.8.5-py3-none-any.whl c96e46d1c48a300d010ebf5c4846f163bdd7acc6efff5ff2bfb1cb5b08aa65d8
flax msgpack 1.2.4 msgpack-1.2.4-cp311-cp311-manylinux2014_x86_64.manylinux_2_17_x86_64.manylinux_2_28_x86_64.whl a45ceb5f199d5e388f28b550ba881096a3740d4bda10e661d77f59d9a2e8187a
flax rich 15.0.0 rich-15.0.0-py3-none-any.whl 33bd4ef74232fb73fe9279a257718407f169c09b78a87ad3d296f548e27de0bb
flax Pygments 2.21.0 pygments-2.21.0-py3-none-any.whl 2363c69b61c4a97c838da3b130dcd6468f4848992b21a82f2a63ec34377137d9
flax markdown-it-py 4.3.0 markdown_it_py-4.3.0-py3-none-any.whl 7aa1511a46c39138de78d9eba92ce47e63124d8003fc98b3a351909e04239efa
flax mdurl 0.1.2 mdurl-0.1.2-py3-none-any.whl 84008a41e51615a49fc9966191ff91509e3c40b939176e643fd50a5c2196b8f8
flax absl-py 2.5.1 absl_py-2.5.1-py3-none-any.whl 721200f2f0e9960f2ca9dc3a2a706b201f5f75d812c158f059cbbe29eeafbdb8
paddle paddlepaddle 2.6.2 paddlepaddle-2.6.2-cp311-cp311-manylinux1_x86_64.whl b090db204af19c0b1c187a72a2694faa008c22a4405942e8ea3946eae222be33
paddle pillow 13.0.0 pillow-13.0.0-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl a625df9a2a5597fa5e5266e01aefc82604bb85d291e3547981e863560d75da6c
paddle decorator 5.3.1 decorator-5.3.1-py3-none-any.whl f47fe6fdbd2edd623ecfe36875d37aba411624e2670dd395dddae1358689bb3c
paddle astor 0.8.1 astor-0.8.1-py2.py3-none-any.whl 070a54e890cefb5b3739d19f30f5a5ec840ffc9c50ffa7d23cc9fc1a38ebbfc5
paddle httpx 0.29.0 httpx-0.29.0-py3-none-any.whl 6734dcf742ced6e8018e45d3f9f7728975b6b3e1085a24f3e2c056069d858bd1
paddle httpcore 1.0.9 httpcore-1.0.9-py3-none-any.whl 2d400746a40668fc9dec9810239072b40b4484b640a8c38fd654a024c7a1bf55
paddle h11 0.16.0 h11-0.16.0-py3-none-any.whl 63cf8bbe7522de3bf65932fda1d9c2772064ffb3dae62d55932da54b31cb6c86
paddle anyio 4.16.0 anyio-4.16.0-py3-none-any.whl c66ae634e0b8228396b801741beb3294326d4b6102f7bba4041c0dfb58c29026
paddle idna 3.20 idna-3.20-py3-none-any.whl ab7ae7122974553370f0bdb919e1a960b2cd1bc1ef0276416d896db81c14582c
paddle certifi 2026.10.19.post1 certifi-2026.10.19.post1-py3-none-any.whl 1324c476b4811eff41a8bc2122cd0bbd4d9c7234c725446d99ab1612b3a7fdd2
EOF

all_formats="xgboost catboost lightgbm skops openvino coreml flax paddle"
formats="${FORMAT_SAMPLES:-xgboost catboost lightgbm skops openvino coreml flax}"
[ "$formats" = all ] && formats="$all_formats"
for f in $formats; do
  case " $all_formats " in *" $f "*) ;; *) echo "FORMAT_SAMPLES: unknown format $f (known: $all_formats)" >&2; exit 2 ;; esac
done

# A Python 3.11: the pins are cp311 wheels. pyenv's newest 3.11, else python3.11, else python3.
is311() { command -v "$1" >/dev/null 2>&1 && "$1" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; }
python="${PYTHON:-}"
if [ -z "$python" ]; then
  pyenv_root="$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")"
  newest="$(ls -d "$pyenv_root"/versions/3.11.*/bin/python3 2>/dev/null | sort -V | tail -n 1)"
  for c in $newest python3.11 python3; do
    if is311 "$c"; then python="$c"; break; fi
  done
fi
if [ -z "$python" ] || ! is311 "$python"; then
  echo "format-samples: needs a Python 3.11 (pyenv install 3.11, or PYTHON=...): the pins are cp311 wheels" >&2
  exit 2
fi

# The wheels of the chosen formats, fetched (or taken from the cache) and digest-checked.
wheels="$("$python" - "$cache" "$work/pins.txt" $formats <<'PY'
import sys
sys.path.insert(0, "scripts")
from pinned_pypi import fetch

cache, pins, formats = sys.argv[1], sys.argv[2], set(sys.argv[3:])
for line in open(pins):
    if not line.strip():
        continue
    groups, name, version, filename, digest = line.split()
    if "base" in groups.split(",") or formats & set(groups.split(",")):
        print(fetch(cache, name, version, filename, digest))
PY
)" || exit 2
"$python" -m venv "$work/venv"
# shellcheck disable=SC2086 # one wheel path per word (cache paths hold no spaces)
"$work/venv/bin/pip" install --quiet --no-index --no-deps --no-compile --disable-pip-version-check $wheels || exit 2

repo="$PWD"
out="${FORMAT_SAMPLES_KEEP:-$work/samples}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
rm -rf "$out/named" "$out/neutral"
# shellcheck disable=SC2086
(cd "$work" && "$work/venv/bin/python" "$repo/scripts/make-format-samples.py" "$out" $formats) \
  >"$work/generate.log" 2>&1 || { tail -n 40 "$work/generate.log" >&2; echo "format-samples: the generator failed" >&2; exit 2; }

"$python" - "$bin" "$out" <<'PY'
import json, subprocess, sys

binary, out = sys.argv[1:3]
expected = json.load(open(f"{out}/expected.json"))
versions = json.load(open(f"{out}/versions.json"))
print("libraries: " + ", ".join(f"{k} {v}" for k, v in sorted(versions.items())))
# A valid file called broken or custom, or a model file not recognised: each is a reader bug.
BAD_RULES = {"FMT002", "FMT007", "FMT008", "FMT009", "ST001"}


def facts_problem(fmt, facts):
    """What the reader should have read from these tiny models (3 trees, a few layers)."""
    if fmt == "xgboost":
        x = facts.get("xgboost", {})
        if x.get("num_trees") != 3 or x.get("version") != versions.get("xgboost"):
            return f"xgboost facts {x}: expected 3 trees and version {versions.get('xgboost')}"
    elif fmt == "lightgbm" and facts.get("lightgbm", {}).get("tree_count") != 3:
        return f"lightgbm facts {facts.get('lightgbm')}: expected 3 trees"
    elif fmt == "coreml" and "coreml" in facts and "manifest" not in facts["coreml"]:
        c = facts["coreml"]
        if not (c.get("layer_types") or c.get("op_types")):
            return f"coreml facts {c}: no layers or operations listed"
    elif fmt == "openvino" and facts.get("openvino", {}).get("custom_layers"):
        return f"openvino custom layers {facts['openvino']['custom_layers']}"
    elif fmt == "msgpack" and not facts.get("msgpack", {}).get("tensor_count"):
        return "msgpack: no tensors listed"
    elif fmt == "paddle" and not facts.get("paddle", {}).get("op_types"):
        return "paddle: no operators listed"
    return None

failures = []
print(f"{'file':<72} {'expected':<16} {'format':<16} findings")
for tree in ("named", "neutral"):
    report = f"{out}/{tree}.json"
    run = subprocess.run(
        [binary, "scan", "--no-git", "--format", "json", "-o", report, f"{out}/{tree}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    if run.returncode not in (0, 1):
        sys.stderr.write(run.stderr)
        sys.exit(f"modelgate exited {run.returncode} on {tree}/")
    r = json.load(open(report))
    if run.returncode != 0:
        failures.append(f"{tree}/: exit code {run.returncode}, expected 0")
    if r["summary"]["denied"]:
        failures.append(f"{tree}/: {r['summary']['denied']} denied")
    by_path = {}
    for f in r["findings"]:
        by_path.setdefault(f["path"], []).append(f)
    for f in r["files"]:
        path = f"{tree}/{f['path']}"
        want = expected.get(path)
        found = by_path.get(f["path"], [])
        shown = " ".join(f"{x['rule']}({x['action']})" for x in found) or "-"
        if want is None and f["path"].endswith(("README.md", "config.json")):
            continue
        print(f"{path:<72} {want or '?':<16} {f['format']:<16} {shown}")
        if want is None:
            failures.append(f"{path}: not written by the generator")
        elif f["format"] != want:
            failures.append(f"{path}: format {f['format']}, expected {want}")
        if f["format"] == "unknown":
            failures.append(f"{path}: unknown")
        problem = facts_problem(f["format"], f["facts"])
        if problem:
            failures.append(f"{path}: {problem}")
        for x in found:
            if x["rule"] in BAD_RULES or x["action"] == "deny":
                failures.append(f"{path}: {x['rule']} ({x['action']}): {x['message']}")
    seen = {f"{tree}/{f['path']}" for f in r["files"]}
    for path in expected:
        if path.startswith(tree + "/") and path not in seen:
            failures.append(f"{path}: not in the report")
if failures:
    print(f"\n{len(failures)} failed:")
    for f in failures:
        print("  " + f)
    sys.exit(1)
print(f"\n{len(expected)} files, every one recognised as expected, nothing denied")
PY
