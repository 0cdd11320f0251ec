#!/usr/bin/env bash
# Hostile-Python benchmark (issue 37): scans each folder of tests/fixtures/hostile-python (written
# by scripts/make-hostile-python.py) on its own with the given binary and prints one line per
# folder: exit code, wall time, peak resident memory, and whether SRC006 named the folder's sink.
# The CLI test (tests/hostile_python) asserts the verdicts; timing and memory are only printed
# here, never asserted. Builds nothing: pass the binary (a release build measures what users get).
#
# Usage: scripts/bench-hostile.sh path/to/modelgate [CASE]...   (default: every folder)
# Environment: BENCH_HOSTILE_TIMEOUT (CPU seconds per folder before it is killed and reported
# as such, default 120), BENCH_HOSTILE_MEMORY (a virtual-memory cap in KiB set with `ulimit -v` so
# one bomb cannot take the machine down, default 4194304 = 4 GiB; 0 for none).
# Exit 0 when every folder gave a report with exit 0 or 1; 1 when any crashed, exited 2, timed
# out or wrote no report; 2 on bad usage.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${1:-}"
[ -n "$bin" ] && [ -x "$bin" ] || { echo "usage: $0 path/to/modelgate [CASE]..." >&2; exit 2; }
shift
[ -x /usr/bin/time ] || { echo "needs GNU time at /usr/bin/time (apt-get install time)" >&2; exit 2; }
corpus=tests/fixtures/hostile-python
limit="${BENCH_HOSTILE_TIMEOUT:-120}"
memory="${BENCH_HOSTILE_MEMORY:-4194304}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cases=("$@")
if [ ${#cases[@]} -eq 0 ]; then
  while IFS= read -r d; do cases+=("$(basename "$d")"); done < <(find "$corpus" -mindepth 1 -maxdepth 1 -type d | sort)
fi

# The sink each folder must keep (the README table's second column).
sink_of() { sed -n "s/^| \`$1\` | \([^ ]*\) |.*/\1/p" "$corpus/README.md"; }

printf '%-36s %5s %9s %10s  %s\n' case exit 'wall (s)' 'peak (MB)' 'SRC006 sink'
failed=0
for c in "${cases[@]}"; do
  dir="$corpus/$c"
  [ -d "$dir" ] || { echo "no folder $dir" >&2; exit 2; }
  report="$work/$c.json"
  rc=0
  (
    if [ "$memory" != 0 ]; then ulimit -v "$memory"; fi
    # CPU seconds (SIGXCPU, then SIGKILL): time still sees the scan's own peak memory. The wall
    # clock timeout outside is only for a scan that waits without using the CPU.
    ulimit -t "$limit"
    exec timeout -s KILL "$((limit * 10))" /usr/bin/time -f '%e %M' -o "$work/time" \
      "$bin" scan --no-git --format json -o "$report" "$dir"
  ) >/dev/null 2>"$work/stderr" || rc=$?
  # GNU time prints "Command terminated by signal N" / "Command exited with non-zero status N"
  # first when the command failed; the numbers are on the last line.
  wall=? peak_kb=0
  [ -s "$work/time" ] && read -r wall peak_kb < <(tail -n 1 "$work/time")
  sink="$(sink_of "$c")"
  verdict=-
  if [ -s "$report" ] && [ -n "$sink" ] && [ "$sink" != - ]; then
    verdict="$(python3 - "$report" "$sink" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
sink = sys.argv[2]
ok = any(f["rule"] == "SRC006" and f["path"] == "modeling_x.py" and (
    f["evidence"].get("call") == sink or any(s.get("call") == sink for s in f["evidence"].get("sites", [])))
    for f in r["findings"])
print(f"{sink}: {'reported' if ok else 'MISSING'}")
PY
)"
  fi
  note=
  case "$rc" in
    0 | 1) [ -s "$report" ] || note=" NO REPORT" ;;
    137 | 152) note=" KILLED (over ${limit} CPU seconds, or ${limit}x10 s wall)" ;;
    *) note=" FAILED ($(tail -n 1 "$work/stderr" | cut -c1-80))" ;;
  esac
  [ -z "$note" ] || failed=$((failed + 1))
  printf '%-36s %5s %9s %10s  %s%s\n' "$c" "$rc" "$wall" "$((peak_kb / 1024))" "$verdict" "$note"
  rm -f "$report"
done
echo "${#cases[@]} folders, $failed without a report"
[ "$failed" = 0 ]
