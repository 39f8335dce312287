#!/usr/bin/env bash
# hfreduce-bench --quick (CI-sized) finishes in under 60 s on the 2-core machine, single node and
# under mpirun with 2 ranks, prints no inf or nan anywhere (4-byte tensors printed inf before
# 2026-12-01: their copy bound was 0 bytes), prints nccl-tests' table for the allreduce stages
# and writes files ffsim check accepts (the new stage mpi_p2p and fields busbw_Bps, placement,
# wrong_elements, time_s.spread) with a read bound on every reduce point. Usage: bench_quick_test.sh BENCH FFSIM [MPIEXEC]
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail
bench=$1
ffsim=$2
mpiexec=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
no_inf() {  # no_inf FILE...: no inf / nan as a number in text or JSON
  if grep -inE '(^|[^a-z])(-?inf|nan)([^a-z]|$)' "$@"; then echo "FAIL: inf or nan in $*"; exit 1; fi
}
timed() {  # timed LIMIT command...: fails when the command takes longer than LIMIT seconds
  local limit=$1
  shift
  local begin=$SECONDS
  "$@"
  local took=$((SECONDS - begin))
  echo "took ${took} s (limit ${limit} s): $*" | cut -c1-160
  [ "$took" -le "$limit" ] || { echo "FAIL: over ${limit} s"; exit 1; }
}
timed 60 "$bench" --quick --machine test --out "$tmp/q.json" > "$tmp/q.txt"
no_inf "$tmp/q.txt" "$tmp/q.json"
"$ffsim" --models models check "$tmp/q.json"
# every reduce point carries the read bound beside the copy bound and the plain loop, and the
# summary prints its ratio (reduce points: as many "read_bound" entries as "plain_loop" ones, > 0)
reads=$(grep -c '"name": "read_bound"' "$tmp/q.json" || true)
plains=$(grep -c '"name": "plain_loop"' "$tmp/q.json" || true)
[ "$reads" -gt 0 ] && [ "$reads" = "$plains" ] || { echo "FAIL: $reads read bounds for $plains plain-loop bounds"; exit 1; }
grep -q '/ read bound$' "$tmp/q.txt" || { echo "FAIL: no read-bound column in the reduce summary"; exit 1; }
# 4-byte tensors (one fp32, k = 8): every ratio finite
"$bench" --stages copy,reduce --min-bytes 4B --max-bytes 16B --k 8 --threads 1 --isa scalar --dtypes fp32 \
  --rounds 1 --budget 0.001 --reps 2 --machine test --out "$tmp/tiny.json" > "$tmp/tiny.txt"
no_inf "$tmp/tiny.txt" "$tmp/tiny.json"
grep -q '"bytes": 4,' "$tmp/tiny.json" || { echo "FAIL: no 4-byte point"; exit 1; }
if [ -n "$mpiexec" ]; then
  timed 60 "$mpiexec" --oversubscribe --allow-run-as-root -np 2 "$bench" --quick --stages internode,allreduce \
    --machine test --out "$tmp/m.json" > "$tmp/m.txt"
  no_inf "$tmp/m.txt" "$tmp/m.json"
  "$ffsim" --models models check "$tmp/m.json"
  # nccl-tests' header and a row per size, out of place and in place, 0 wrong
  grep -q '^#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong$' "$tmp/m.txt" \
    || { echo "FAIL: no nccl-tests header"; exit 1; }
  grep -qE '^ +65536 +16384 +float +sum +-1 +[0-9.]+ +[0-9.]+ +[0-9.]+ +0 +[0-9.]+ +[0-9.]+ +[0-9.]+ +0$' "$tmp/m.txt" \
    || { echo "FAIL: no 64 KiB nccl-tests row with 0 wrong"; exit 1; }
  # The fair baseline (glibc's mmap threshold raised) needs glibc's allocator: a build with
  # AddressSanitizer (FFSIM_SANITIZED=1, set by CMake) leaves it out and says so on stderr.
  fair='"variant": "MPI_Allreduce_heap"'
  if [ "${FFSIM_SANITIZED:-0}" = 1 ]; then
    if grep -q "$fair" "$tmp/m.json"; then echo "FAIL: a fair baseline measured under AddressSanitizer"; exit 1; fi
    fair='"variant": "MPI_Allreduce"'
  fi
  for f in busbw_Bps '"stage": "mpi_p2p"' "$fair" '"name": "allreduce_bound_sendrecv"'; do
    grep -q "$f" "$tmp/m.json" || { echo "FAIL: $f missing from the JSON"; exit 1; }
  done
  # Every point of the MPI stages records its core-seconds per call over both ranks (time_s.cpu_s,
  # since 2026-12-07): positive, and at most the 2 ranks' whole time (each rank's process: its
  # threads on at most the machine's cores) plus a margin for the clock's granularity.
  if command -v python3 > /dev/null; then
    python3 - "$tmp/m.json" <<'PY' || exit 1
import json, os, sys
d = json.load(open(sys.argv[1]))
cores = os.cpu_count() or 1
for p in d["points"]:
    t = p["time_s"]
    if "cpu_s" not in t:
        sys.exit("FAIL: no time_s.cpu_s in a %s point" % p["stage"])
    if not (0 < t["cpu_s"] <= 2 * cores * t["max"] + 0.01):
        sys.exit("FAIL: %s cpu_s %g for a max time of %g" % (p["stage"], t["cpu_s"], t["max"]))
PY
  fi
fi
echo ok
