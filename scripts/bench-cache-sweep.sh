#!/usr/bin/env bash
# A one-thread working-set sweep of the copies in steps of 2^(1/4), and the caches' transitions it
# shows (scripts/cache-sweep.py): what a CPU model's last_level_cache should be on this machine (the
# size at which one thread's copies take half their bytes from the cache; docs/calibration.md, "The
# last-level cache, measured"). Writes models/measured/<machine>-<date>-wss.json.
# Usage: scripts/bench-cache-sweep.sh [extra hfreduce-bench flags, e.g. --budget 0.2; not --threads:
# the sweep is one thread's, which is what the analysis reads]
# Environment: MACHINE (default: short hostname), BUILD_DIR (default build-hf), BENCH (a built
# hfreduce-bench to use instead of building one), ROUNDS (default 3), MAX_WS (largest working set,
# default 512MiB; from 16 KiB), OUT_DIR (default models/measured), SUFFIX (appended to the date; an
# existing file is never overwritten), L1, L2, LLC (the cache sizes the analysis starts from; default
# what getconf reports, e.g. L1=48KiB L2=1MiB LLC=32MiB).
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail
cd "$(dirname "$0")/.."
machine=${MACHINE:-$(hostname -s)}
out_dir=${OUT_DIR:-models/measured}
out=$out_dir/$machine-$(date -u +%Y-%m-%d)${SUFFIX:-}-wss.json
if [ -e "$out" ]; then
  echo "bench-cache-sweep: $out exists; set SUFFIX (e.g. SUFFIX=-repeat-a) to keep it and write a second run" >&2
  exit 2
fi
bytes() {  # "48KiB" -> 49152
  python3 -c 'import sys
t = sys.argv[1]
for u, m in (("KiB", 1 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30), ("B", 1)):
    if t.endswith(u):
        print(int(float(t[: -len(u)]) * m)); break
else:
    print(int(t))' "$1"
}
cache() {  # a getconf cache size in KiB units for the analysis, or the fallback given
  local v
  v=$(getconf "$1" 2>/dev/null || true)
  if [ -n "$v" ] && [ "$v" -gt 0 ] 2>/dev/null; then echo "$((v / 1024))KiB"; else echo "$2"; fi
}
l1=${L1:-$(cache LEVEL1_DCACHE_SIZE 32KiB)}
l2=${L2:-$(cache LEVEL2_CACHE_SIZE 1MiB)}
llc=${LLC:-$(cache LEVEL3_CACHE_SIZE 32MiB)}
max_ws=$(bytes "${MAX_WS:-512MiB}")
# Bytes copied (half the working set) from 8 KiB in steps of 2^(1/4), whole 4 KiB pages, ascending.
sizes=$(python3 -c "import sys
top = int(sys.argv[1]) // 2
out = []
k = 0
while True:
    b = int(round(8192 * 2 ** (k / 4) / 4096)) * 4096
    if b > top:
        break
    if not out or b > out[-1]:
        out.append(b)
    k += 1
print(','.join(f'{b}B' for b in out))" "$max_ws")
if [ -n "${BENCH:-}" ]; then
  bench=$BENCH
else
  build=${BUILD_DIR:-build-hf}
  cmake -S . -B "$build" -G Ninja -DFFSIM_HFREDUCE_ONLY=ON -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" -j"${JOBS:-2}" --target hfreduce-bench
  bench=$build/hfreduce-bench
fi
mkdir -p "$out_dir"
"$bench" --stages copy --k 1 --threads 1 --sizes "$sizes" --rounds "${ROUNDS:-3}" --machine "$machine" --out "$out" "$@"
python3 scripts/cache-sweep.py "$out" --l1 "$l1" --l2 "$l2" --llc "$llc"
