#!/usr/bin/env bash
# Builds the (git-ignored) working corpora fuzz/corpus/<target>/ from the committed tiny seeds
# (fuzz/seeds/<target>/), the test fixtures, the examples, the shipped policies, and a few small
# files generated here with standard tools (zip, tar, gzip, bzip2, xz, python3 for lzma-alone).
# Usage: fuzz/seed.sh   (idempotent; existing corpus entries are kept)
set -euo pipefail
cd "$(dirname "$0")"
root=$(cd .. && pwd)
corpus=$(pwd)/corpus
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

targets="safetensors pickle zip tar compress numpy gguf onnx tf hdf5 keras tflite lfs policy archive_member card notebook code automap sign_bundle hub_api ranged blob_decode marshal native behaviour skops openvino msgpack coreml paddle ggml llamafile executorch tensorrt trees sevenz"
for t in $targets; do
  mkdir -p "$corpus/$t"
  if [ -d "seeds/$t" ]; then cp -f seeds/"$t"/* "$corpus/$t/" 2>/dev/null || true; fi
done

# Fixtures and examples.
cp -f "$root"/examples/*/model.safetensors "$tmp/" 2>/dev/null || true
i=0
for f in "$root"/examples/*/model.safetensors; do i=$((i+1)); cp -f "$f" "$corpus/safetensors/example$i.safetensors"; done
cp -f "$root"/examples/risky-model/pytorch_model.bin "$corpus/zip/pytorch_model.bin"
cp -f "$root"/examples/risky-model/pytorch_model.bin "$corpus/archive_member/pytorch_model.bin"
cp -f "$root"/tests/fixtures/gguf/tiny.gguf "$corpus/gguf/"
cp -f "$root"/tests/fixtures/chat_templates/malicious.txt "$corpus/gguf/malicious-templates.txt"
cp -f "$root"/tests/fixtures/onnx/external.onnx "$corpus/onnx/"
cp -f "$root"/tests/fixtures/hdf5/*.h5 "$corpus/hdf5/"
cp -f "$root"/examples/*/config.json "$corpus/keras/" 2>/dev/null || true
for p in "$root"/policies/*.toml "$root"/examples/policies/*.toml; do
  [ -f "$p" ] && cp -f "$p" "$corpus/policy/$(basename "$(dirname "$p")")-$(basename "$p")"
done

# Ranged: a byte that picks the name, a byte that picks an honest server, then the file.
printf '\x03\x00' | cat - "$root"/tests/fixtures/hdf5/keras2_lambda.h5 > "$corpus/ranged/keras2_lambda.h5"
printf '\x04\x00' | cat - "$root"/tests/fixtures/tflite/flex_readfile.tflite > "$corpus/ranged/flex_readfile.tflite"
printf '\x00\x00' | cat - "$root"/examples/risky-model/pytorch_model.bin > "$corpus/ranged/pytorch_model.bin"

# Bytecode and native objects (issue 31): the committed .pyc fixtures, a marshal blob, a
# compiled library when a C compiler is present, and the Mach-O/PE images the tests build.
cp -f "$root"/tests/fixtures/bytecode/*.pyc "$root"/tests/fixtures/bytecode/*.marshal "$corpus/marshal/"
if command -v cc >/dev/null; then
  printf '#include <stdlib.h>\n__attribute__((constructor)) static void s(void){system("id");}\n' > "$tmp/lib.c"
  cc -shared -fPIC -o "$corpus/native/constructor.so" "$tmp/lib.c" || true
fi

# Model signatures made by the reference tool (key, certificate, shards, keyless).
cp -f "$root"/tests/fixtures/signing/*.sig "$corpus/sign_bundle/"
cp -f "$root"/tests/fixtures/signing/keyless/model.sig "$corpus/sign_bundle/keyless.sig"

# 7z archives (issue 40): the committed py7zr seeds are containers archive members can be too.
cp -f seeds/sevenz/*.7z "$corpus/archive_member/"

# Pickle streams: the member of the example's zip, plus protocol 0 and 2 by hand.
unzip -p "$root"/examples/risky-model/pytorch_model.bin '*.pkl' > "$corpus/pickle/example-data.pkl" 2>/dev/null || true
printf 'cos\nsystem\n(Vecho hi\ntR.' > "$corpus/pickle/proto0-call.pkl"
printf '\x80\x02ccollections\nOrderedDict\nq\x00)Rq\x01.' > "$corpus/pickle/proto2-ordereddict.pkl"
printf '\x80\x04\x95\x15\x00\x00\x00\x00\x00\x00\x00\x8c\x08builtins\x94\x8c\x04eval\x94\x93\x94.' > "$corpus/pickle/proto4-stack-global.pkl"
cp -f "$corpus"/pickle/*.pkl "$corpus/archive_member/"

# Containers built with the standard tools.
(cd "$tmp" && mkdir -p archive && cp "$corpus/pickle/proto0-call.pkl" archive/data.pkl \
  && printf 'v1' > archive/version && zip -q -r z.zip archive && zip -q -0 -r z0.zip archive \
  && tar -cf t.tar archive && gzip -kn t.tar && bzip2 -k t.tar && xz -k t.tar \
  && python3 -c 'import lzma,sys; open("t.lzma","wb").write(lzma.compress(open("archive/data.pkl","rb").read(), format=lzma.FORMAT_ALONE))' \
  && python3 -c 'import zlib; open("t.zlib","wb").write(zlib.compress(open("archive/data.pkl","rb").read()))')
cp -f "$tmp"/z.zip "$tmp"/z0.zip "$corpus/zip/"
cp -f "$tmp"/z.zip "$tmp"/t.tar "$tmp"/t.tar.gz "$tmp"/t.lzma "$corpus/archive_member/"
cp -f "$tmp"/t.tar "$corpus/tar/"
# compress: first byte selects the codec (0 gzip, 1 zlib, 2 bzip2, 3 xz, 4 lzma).
n=0
for f in t.tar.gz t.zlib t.tar.bz2 t.tar.xz t.lzma; do
  { printf "\\x0$n"; cat "$tmp/$f"; } > "$corpus/compress/$f"; n=$((n+1))
done

# NumPy: a 2x2 float32 array, header written by hand (format 1.0).
hdr="{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }"
pad=$(( 64 - (10 + ${#hdr} + 1) % 64 ))
{ printf '\x93NUMPY\x01\x00'; printf "\\x$(printf %02x $(( (${#hdr} + pad + 1) % 256 )))\\x00"
  printf '%s' "$hdr"; printf '%*s' "$pad" ''; printf '\n'; printf '\0%.0s' $(seq 16); } > "$corpus/numpy/f4-2x2.npy"
cp -f "$corpus/numpy/f4-2x2.npy" "$corpus/archive_member/"

# Git LFS pointer and .gitattributes.
printf 'version https://git-lfs.github.com/spec/v1\noid sha256:%064d\nsize 12345\n' 0 > "$corpus/lfs/pointer"
printf '*.safetensors filter=lfs diff=lfs merge=lfs -text\n*.bin filter=lfs diff=lfs merge=lfs -text\n[attr]binary -diff -merge -text\n"a b/**" filter=lfs\n' > "$corpus/lfs/gitattributes"

# Model cards, Python, notebooks, configs.
cp -f "$root"/examples/clean-model/README.md "$corpus/card/clean-README.md"
printf -- '---\nlicense: apache-2.0\nbase_model: org/base\ntags: [a, b]\ndatasets:\n  - x\n---\n# Model\n\n## Uses\n' > "$corpus/card/front-matter.md"
for f in "$root"/examples/risky-model/*.py "$root"/examples/risky-model/scripts/*.py "$root"/tests/fixtures/*/make_fixtures.py; do
  cp -f "$f" "$corpus/code/$(basename "$(dirname "$f")")-$(basename "$f")"
done
python3 - "$root/examples/risky-model/scripts/load.py" "$corpus/notebook/load.ipynb" <<'PY'
import json, sys
src = open(sys.argv[1]).read()
nb = {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": 1,
                 "source": src.splitlines(True)},
                {"cell_type": "markdown", "metadata": {}, "source": ["# notes"]}],
      "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
      "nbformat": 4, "nbformat_minor": 5}
open(sys.argv[2], "w").write(json.dumps(nb))
PY
cp -f "$root"/examples/*/config.json "$corpus/automap/" 2>/dev/null || true
printf '{"auto_map": {"AutoConfig": "configuration_x.XConfig", "AutoModel": "org/repo--modeling_x.XModel"}, "custom_pipelines": {"p": {"impl": "pipe.P"}}}' > "$corpus/automap/auto_map.json"

# behaviour: Python (the SRC006 fixture folders' code files); its first byte also picks how
# the input is hidden in a blob.
for f in "$root"/tests/fixtures/behaviour/*/*/*.py; do
  [ -f "$f" ] || continue
  name=$(echo "${f#"$root"/tests/fixtures/behaviour/}" | tr / _)
  cp -f "$f" "$corpus/behaviour/$name"
done

# code: the few-line Python shapes of the behaviour seeds (cycles, bombs, hidden payloads).
cp -f seeds/behaviour/tiny-*.py "$corpus/code/"

for t in $targets; do echo "$t: $(ls "$corpus/$t" | wc -l) files"; done
