#!/usr/bin/env bash
# Benchmark modelgate against plain hashing tools on the same files.
#
# Needs only cargo, coreutils, findutils and openssl; /usr/bin/time (Debian/Ubuntu package `time`)
# for peak RSS, which is reported as n/a without it. Python is not used.
#
#   scripts/bench.sh
#
# Environment (defaults in brackets):
#   BENCH_DIR     where the synthetic repositories go                     [/tmp/modelgate-bench]
#   BENCH_GB      size of the multi-file repository, GiB                  [4]
#   BENCH_BIG_GB  size of the single-file case, GiB                       [2]
#   BENCH_SMALL   files in the small-files tree                           [100000]
#   BENCH_RUNS    runs per measurement; medians are reported              [3]
#   BENCH_BLOCKS  1 to also sweep --block-size 256 KiB..8 MiB             [1]
#   BENCH_KEEP    1 to keep BENCH_DIR afterwards (it is deleted otherwise) [0]
#   BENCH_BIN     a modelgate binary to measure instead of target/release's   []
#                 (an older build, to say "no slower" on the same machine)
#
# Every input is read once (cat > /dev/null) before the timed runs, so all tools are measured
# on a warm page cache: the numbers compare hashing and parsing, not the disk.
set -euo pipefail

DIR=${BENCH_DIR:-/tmp/modelgate-bench}
GB=${BENCH_GB:-4}
BIG_GB=${BENCH_BIG_GB:-2}
SMALL=${BENCH_SMALL:-100000}
RUNS=${BENCH_RUNS:-3}
BLOCKS=${BENCH_BLOCKS:-1}
CORES=$(nproc)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}

echo "== building (release)" >&2
(cd "$ROOT" && cargo build --release --quiet --bin modelgate --example gen_bench_repo)
MG=${BENCH_BIN:-$TARGET/release/modelgate}
GEN=$TARGET/release/examples/gen_bench_repo

REPO=$DIR/repo
BIG=$DIR/big
SMALLDIR=$DIR/small
mkdir -p "$DIR"
if [ "${BENCH_KEEP:-0}" != 1 ]; then
  trap 'rm -rf "$DIR"' EXIT
fi
[ -d "$REPO" ] || { echo "== writing $GB GiB repository" >&2; "$GEN" repo "$REPO" $((GB * 1024)); }
[ -d "$BIG" ] || { echo "== writing $BIG_GB GiB single file" >&2; mkdir -p "$BIG"; "$GEN" big "$BIG/model.safetensors" $((BIG_GB * 1024)); }
[ -d "$SMALLDIR" ] || { echo "== writing $SMALL small files" >&2; "$GEN" small "$SMALLDIR" "$SMALL"; }

echo "== warming the page cache" >&2
find "$DIR" -type f -print0 | xargs -0 cat > /dev/null

if [ -x /usr/bin/time ]; then
  RSS_HOW="peak RSS from /usr/bin/time -f %M (max over the process tree's largest process)"
else
  RSS_HOW="peak RSS not measured (/usr/bin/time missing: apt-get install time)"
fi

# measure LABEL CMD...: runs CMD $RUNS times (stdout discarded; exit 1 = policy denial is fine)
# and sets MED (median wall seconds) and RSS (median peak RSS, MiB).
measure() {
  local label=$1; shift
  local walls=() rsss=() i t0 t1 rc
  for ((i = 0; i < RUNS; i++)); do
    t0=$(date +%s.%N)
    if [ -x /usr/bin/time ]; then
      rc=0; /usr/bin/time -f %M -o "$DIR/.rss" "$@" > /dev/null 2> "$DIR/.err" || rc=$?
    else
      rc=0; "$@" > /dev/null 2> "$DIR/.err" || rc=$?
    fi
    t1=$(date +%s.%N)
    if [ "$rc" -gt 1 ]; then
      echo "$label failed (exit $rc):" >&2; cat "$DIR/.err" >&2; exit 1
    fi
    walls+=("$(calc "$t1 - $t0")")
    if [ -x /usr/bin/time ]; then rsss+=("$(tail -n1 "$DIR/.rss")"); else rsss+=(0); fi
  done
  MED=$(printf '%s\n' "${walls[@]}" | sort -g | sed -n "$(((RUNS + 1) / 2))p")
  RSS=$(printf '%s\n' "${rsss[@]}" | sort -g | sed -n "$(((RUNS + 1) / 2))p")
  RSS=$(calc "int($RSS / 1024)")
  ALL=$(printf '%.2f ' "${walls[@]}")
}

calc() { awk "BEGIN { print $* }"; }
gib() { calc "$1 / 1073741824" | xargs printf '%.1f'; }
bytes_of() { find "$1" -type f -printf '%s\n' | awk '{s += $1} END {print s}'; }
files_of() { find "$1" -type f | wc -l; }

# row CASE TOOL BYTES BASE: prints one table row; BASE is the reference wall time for the ratio.
row() {
  local mbs ratio
  mbs=$(calc "$3 / $MED / 1000000")
  ratio=$(calc "$MED / $4")
  printf '| %-18s | %-44s | %8.2f | %8.0f | %5.2fx | %6s | %s|\n' "$1" "$2" "$MED" "$mbs" "$ratio" \
    "$([ "$RSS" = 0 ] && echo n/a || echo "$RSS")" "$ALL"
}

# Files >= 1 MiB one per process, largest first; small files in batches (one process per file
# would measure fork+exec, not hashing).
parallel_hash() {
  local tool=$1 dir=$2
  find "$dir" -type f -size +1M -printf '%s\t%p\0' | sort -z -rn | cut -z -f2- |
    xargs -0 -r -n1 -P"$CORES" $tool
  find "$dir" -type f -size -1025k -print0 | xargs -0 -r -n1000 -P"$CORES" $tool
}
export -f parallel_hash
export CORES

scan() { "$MG" scan --no-git -q --format json -o /dev/null "$@"; }
export -f scan
export MG

echo
echo "machine: $(lscpu | sed -n 's/^Model name: *//p' | head -n1), $CORES cores; $(uname -sr)"
echo "sha-256 backend: $("$MG" scan --verbose --no-git -q --format json -o /dev/null "$ROOT/examples/clean-model" 2>&1 >/dev/null | sed -n 's/^sha-256 backend: //p')"
echo "$RSS_HOW; wall = median of $RUNS runs (warm cache); ratio = wall / first row of the case"
echo
echo '| case               | command                                      | wall (s) |   MB/s   | ratio  | RSS MiB | runs (s) |'
echo '|--------------------|----------------------------------------------|----------|----------|--------|---------|----------|'

B=$(bytes_of "$REPO")
C="repo $(gib "$B")GiB/$(files_of "$REPO")f"
measure o bash -c "parallel_hash 'openssl dgst -sha256' '$REPO'"; BASE=$MED; row "$C" "openssl dgst -sha256, xargs -P$CORES" "$B" "$BASE"
measure m bash -c "scan --sbom $DIR/sbom.json '$REPO'"; row "$C" "modelgate scan --sbom" "$B" "$BASE"
T_MULTI=$(calc "$MED / $BASE"); PEAK=$RSS
measure s bash -c "parallel_hash sha256sum '$REPO'"; row "$C" "sha256sum, xargs -P$CORES" "$B" "$BASE"
measure s1 bash -c "find '$REPO' -type f -print0 | xargs -0 sha256sum"; row "$C" "sha256sum, one process" "$B" "$BASE"
measure pl bash -c "scan '$REPO'"; PLAIN=$MED; row "$C" "modelgate scan (plain)" "$B" "$BASE"
measure cv bash -c "scan --check-values '$REPO'"; row "$C" "modelgate scan --check-values" "$B" "$BASE"
T_CV=$(calc "$MED / $PLAIN")

B=$(bytes_of "$BIG")
C="one $(gib "$B")GiB file"
measure o openssl dgst -sha256 "$BIG/model.safetensors"; BASE=$MED; row "$C" "openssl dgst -sha256" "$B" "$BASE"
measure m bash -c "scan '$BIG'"; row "$C" "modelgate scan" "$B" "$BASE"
T_SINGLE=$(calc "$MED / $BASE")
measure m bash -c "scan --check-values '$BIG'"; row "$C" "modelgate scan --check-values" "$B" "$BASE"
measure s sha256sum "$BIG/model.safetensors"; row "$C" "sha256sum" "$B" "$BASE"

B=$(bytes_of "$SMALLDIR")
C="$(files_of "$SMALLDIR") small files"
measure s1 bash -c "find '$SMALLDIR' -type f -print0 | xargs -0 sha256sum"; BASE=$MED; row "$C" "find \\| xargs -0 sha256sum" "$B" "$BASE"
measure m bash -c "scan '$SMALLDIR'"; row "$C" "modelgate scan" "$B" "$BASE"
T_SMALL=$(calc "$MED / $BASE")
measure m bash -c "scan --exclude '**/*.py' '$SMALLDIR'"; row "$C" "modelgate scan --exclude '**/*.py'" "$B" "$BASE"
measure s bash -c "find '$SMALLDIR' -type f -print0 | xargs -0 -n1000 -P$CORES sha256sum"; row "$C" "find \\| xargs -0 -P$CORES sha256sum" "$B" "$BASE"

echo
echo "targets: repo scan --sbom / parallel openssl = $(printf '%.2f' "$T_MULTI") (goal <= 1.15);" \
  "one file / openssl = $(printf '%.2f' "$T_SINGLE") (<= 1.15);" \
  "small files / find|xargs sha256sum = $(printf '%.2f' "$T_SMALL") (<= 1.0);" \
  "--check-values / plain = $(printf '%.2f' "$T_CV") (<= 1.3);" \
  "repo scan peak RSS = ${PEAK} MiB (< 64)"

if [ "$BLOCKS" = 1 ]; then
  echo
  echo "read block size (modelgate scan of the repository; --block-size is a hidden flag):"
  echo
  echo '| block     | wall (s) |   MB/s   | RSS MiB | runs (s) |'
  echo '|-----------|----------|----------|---------|----------|'
  B=$(bytes_of "$REPO")
  for kib in 256 512 1024 2048 4096 8192; do
    measure b bash -c "scan --block-size $((kib * 1024)) '$REPO'"
    printf '| %5d KiB | %8.2f | %8.0f | %7s | %s|\n' "$kib" "$MED" "$(calc "$B / $MED / 1000000")" "$RSS" "$ALL"
  done
fi
