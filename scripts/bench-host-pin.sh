#!/usr/bin/env bash
# The host backend's copy threads pinned (HFREDUCE_HOST_PIN=1: one CPU each, in turn) against left
# to the scheduler (HFREDUCE_HOST_PIN=0, the default), side by side in one run: the D2H, H2D and
# both-at-once copies, the single-node pipeline (1 and 8 devices) and, under mpirun, the allreduce
# of 2 and 4 ranks with 2 devices each. The two settings' runs alternate (ROUNDS pairs, default 3, the order swapped each pair), so drift of the
# machine hits both; each point's figure is the median over its runs of hfreduce-bench's median.
# Prints per point both times and unpinned / pinned (> 1: pinning is faster), and for the copies
# both-at-once / (D2H + H2D): 1 when the two directions take turns, 0.5 when they fully overlap.
# Usage: scripts/bench-host-pin.sh > docs/bench-host-pin.txt   (about 4 minutes on 2 cores)
# Environment: BUILD_DIR (default build-hf), ROUNDS (default 3).
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build-hf}
rounds=${ROUNDS:-3}
cmake -S . -B "$build" -G Ninja -DFFSIM_HFREDUCE_ONLY=ON -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j2 --target hfreduce-bench >/dev/null
bench=$build/hfreduce-bench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run() {  # run <pin 0|1> <round>
  local pin=$1 r=$2
  HFREDUCE_HOST_PIN=$pin "$bench" --stages d2h,h2d,pipeline --min-bytes 16KiB --max-bytes 64MiB --devices 1,8 \
    --chunks 1MiB --machine pin-ab --out "$tmp/single-$pin-$r.json" >/dev/null
  if command -v mpirun >/dev/null 2>&1; then
    for np in 2 4; do
      HFREDUCE_HOST_PIN=$pin mpirun -x HFREDUCE_HOST_PIN --oversubscribe --allow-run-as-root -np "$np" "$bench" \
        --stages allreduce --min-bytes 256KiB --max-bytes 16MiB --devices 2 --chunks 4MiB --machine pin-ab \
        --out "$tmp/mpi-$pin-$r-np$np.json" >/dev/null
    done
  fi
}
for r in $(seq 1 "$rounds"); do
  if [ $((r % 2)) -eq 1 ]; then run 1 "$r"; run 0 "$r"; else run 0 "$r"; run 1 "$r"; fi
done

echo "# hfreduce host backend: copy threads pinned vs left to the scheduler, $(date -u +%Y-%m-%dT%H:%MZ)"
echo "# machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) CPUs; ROUNDS=$rounds"
echo "# command: scripts/bench-host-pin.sh"
python3 - "$tmp" "$rounds" <<'EOF'
import glob, json, os, statistics, sys
tmp, rounds = sys.argv[1], int(sys.argv[2])
def load(kind, pin):
    t = {}
    for f in sorted(glob.glob(os.path.join(tmp, f"{kind}-{pin}-*.json"))):
        for p in json.load(open(f))["points"]:
            key = (p["stage"], p["devices"], p["ranks"], p["chunk_bytes"], p["bytes"])
            t.setdefault(key, []).append(p["time_s"]["median"])
    return {k: statistics.median(v) for k, v in t.items()}
def size(b):
    for unit, f in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= f:
            return f"{b / f:g} {unit}"
    return f"{b:g} B"
for kind in ("single", "mpi"):
    pinned, free = load(kind, 1), load(kind, 0)
    if not pinned:
        continue
    print()
    print(f"{'stage':10} {'devices':>7} {'ranks':>5} {'size':>9} {'pinned':>11} {'unpinned':>11} {'unpinned/pinned':>16}")
    for k in sorted(pinned, key=lambda k: (k[0], k[1], k[2], k[3], k[4])):
        if k not in free:
            continue
        print(f"{k[0]:10} {k[1]:7d} {k[2]:5d} {size(k[4]):>9} {pinned[k]*1e6:9.1f}us {free[k]*1e6:9.1f}us {free[k]/pinned[k]:16.2f}")
    if kind == "single":
        print()
        print("both directions at once / (D2H + H2D): 1 = they take turns, 0.5 = they overlap fully")
        print(f"{'size':>9} {'pinned':>8} {'unpinned':>9}")
        for (st, d, r, c, b) in sorted(k for k in pinned if k[0] == "bidir"):
            def ratio(t):
                return t[(st, d, r, c, b)] / (t[("d2h", d, r, c, b)] + t[("h2d", d, r, c, b)])
            print(f"{size(b):>9} {ratio(pinned):8.2f} {ratio(free):9.2f}")
EOF
