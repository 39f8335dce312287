#!/usr/bin/env bash
# Runs hfreduce-bench on this machine: the single-node stages, then the inter-node and whole
# allreduce stages under mpirun at 2 and 4 ranks. Writes models/measured/<machine>-<date>.json
# (single node) and <machine>-<date>-np<N>.json (MPI runs).
# Usage: scripts/bench-hfreduce.sh [extra hfreduce-bench flags for the single-node run]
# Environment: MACHINE (default: short hostname), BUILD_DIR (default: build-hf), JOBS (default 2),
# ROUNDS (default 3: sweeps per run; on a shared machine 3 gives each point the median of three
# sweeps and ffsim validate the machine's run-to-run spread, at 3x the time), SUFFIX (default empty:
# appended to the date, e.g. SUFFIX=-repeat-a for a second run of the day; an existing file is never
# overwritten), SINGLE (default 1; 0 skips the single-node run and writes only the -np files),
# MPI_SIZES (default 1MiB,8MiB,64MiB,256MiB: the MPI stages' sizes, ascending; e.g.
# 1MiB,2MiB,4MiB,8MiB,16MiB,32MiB,64MiB,128MiB,256MiB for nine points a series, about 3x the time).
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail

# Paths relative to the repository root, so that the commands recorded in the JSON are too.
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build-hf}
machine=${MACHINE:-$(hostname -s)}
date=$(date -u +%Y-%m-%d)
out_dir=models/measured
mkdir -p "$out_dir"

stem=$out_dir/$machine-$date${SUFFIX:-}
single=${SINGLE:-1}
files=("$stem-np2.json" "$stem-np4.json")
[ "$single" = 1 ] && files+=("$stem.json")
for f in "${files[@]}"; do
  if [ -e "$f" ]; then
    echo "bench-hfreduce: $f exists; set SUFFIX (e.g. SUFFIX=-repeat-a) to keep it and write a second run" >&2
    exit 2
  fi
done

cmake -S . -B "$build" -G Ninja -DFFSIM_HFREDUCE_ONLY=ON -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"${JOBS:-2}" --target hfreduce-bench

bench=$build/hfreduce-bench
rounds=${ROUNDS:-3}
[ "$single" = 1 ] && "$bench" --rounds "$rounds" --machine "$machine" --out "$stem.json" "$@"

if command -v mpirun >/dev/null 2>&1; then
  for np in 2 4; do
    # 1, 8, 64 and 256 MiB by default (the acceptance sizes of issue 27 and one below); 3 reps per
    # point and round, each after an untimed one: MPI_Allreduce as shipped takes seconds a call from
    # 32 MiB up
    mpirun --oversubscribe --allow-run-as-root -np "$np" "$bench" --rounds "$rounds" --stages internode,allreduce \
      --sizes "${MPI_SIZES:-1MiB,8MiB,64MiB,256MiB}" --devices 2 --chunks 4MiB --budget 0.1 --reps 3 \
      --machine "$machine" --out "$stem-np$np.json"
  done
else
  echo "bench-hfreduce: no mpirun; inter-node stages skipped" >&2
fi
