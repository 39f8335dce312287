#!/usr/bin/env bash
# The GPU half of hfreduce's measurements, in one run on a GPU machine (Ubuntu 24.04, nvcc, CMake,
# ninja, Open MPI; no SimGrid needed): build hfreduce alone, run its tests (the CUDA test with
# FFSIM_REQUIRE_GPU=1, so that a missing GPU fails instead of skipping), then hfreduce-bench with
# the real GPU: CPU copy and reduce, CUDA D2H / H2D / bidirectional copies, the pipeline with 1
# and 8 virtual devices on GPU 0, and under mpirun the inter-node tree beside MPI_Allreduce (as
# shipped and fair) and the transport's bound, and the whole allreduce (pipeline + tree, 8
# virtual devices per rank) at 2, 4 and 8 ranks.
#
# Writes under $OUT (default build-device/out; at most 8 files, for the device tool):
#   log.txt                                   every step, its time and the benches' text output
#   ctest.txt                                 the test run
#   models/measured/<machine>-<date>.json     single node: copy, reduce, d2h, h2d, bidir, pipeline
#   models/measured/<machine>-<date>-np{2,4,8}.json   internode, mpi_allreduce, mpi_p2p, allreduce
# Calibration and validation need ffsim, which this script does not build (it needs SimGrid and
# the rest of the project): where build/ffsim exists it runs `ffsim calibrate` and `ffsim
# validate` on the new files; otherwise the lead runs them on the fetched files (docs/hfreduce.md,
# "The GPU half").
#
# Budget: <= 8 minutes on 16 cores. Build <= 4 min (only the hfreduce targets), tests <= 1.5 min,
# each bench a --quick-like sweep with a hard `timeout`: single node 90 s (few sizes, --budget
# 0.05, 3 reps, rounds 2), each MPI run 45 s (8 and 64 MiB, --budget 0.05, 3 reps, 2 rounds).
# The timeouts add up to 7.9 minutes; a step that overruns is cut and the script goes on.
#
# Without a GPU (nvidia-smi missing or no device the CUDA runtime can use) the script builds and
# tests what it can, then stops before the CUDA benches with a message and exit 77 (skipped).
# Environment: OUT, MACHINE (default: the GPU model and the core count, e.g. h100-16c), BUILD_DIR
# (default build-device), NODE (the node model for ffsim calibrate/validate, where build/ffsim
# exists; then calibration.json is an 8th file).
# SPDX-License-Identifier: Apache-2.0
set -uo pipefail

cd "$(dirname "$0")/.."
out=${OUT:-$PWD/build-device/out}
build=${BUILD_DIR:-build-device}
# The machine's name in the files: MACHINE, else the GPU's model and the core count (the device tool
# lends H100 and H200 machines; "NVIDIA H100 80GB HBM3" on 16 cores gives h100-16c).
gpu_model=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr '[:upper:]' '[:lower:]' |
  sed 's/^nvidia //' | awk '{print $1}' | tr -c 'a-z0-9-\n' '-')
machine=${MACHINE:-${gpu_model:-nogpu}-$(nproc)c}
date=$(date -u +%Y-%m-%d)
jobs=$(nproc)
measured=$out/models/measured
mkdir -p "$measured"
log=$out/log.txt
: >"$log"
start=$(date +%s)
step() { echo "== $* (t+$(($(date +%s) - start)) s)" | tee -a "$log"; }
mpirun_=(mpirun --oversubscribe --allow-run-as-root)

step machine
{ nvidia-smi --query-gpu=name,pcie.link.gen.current,pcie.link.width.current,driver_version --format=csv 2>&1 || true
  lscpu | head -20; cmake --version | head -1; g++ --version | head -1; nvcc --version 2>&1 | tail -2
  mpirun --version 2>&1 | head -1; uptime; } >>"$log" 2>&1

step configure and build
arch=()
command -v nvcc >/dev/null 2>&1 && arch=(-DCMAKE_CUDA_ARCHITECTURES=90)
if ! cmake -S . -B "$build" -G Ninja -DFFSIM_HFREDUCE_ONLY=ON -DFFSIM_WERROR=ON -DCMAKE_BUILD_TYPE=Release "${arch[@]}" \
     >>"$log" 2>&1 || ! timeout 240 cmake --build "$build" -j"$jobs" >>"$log" 2>&1; then
  step build FAILED
  tail -40 "$log"
  exit 1
fi

gpu_ok=1
why=""
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  gpu_ok=0
  why="nvidia-smi finds no GPU"
elif ! "$build/hfreduce_gpu_test" >>"$log" 2>&1; then
  gpu_ok=0
  why="the CUDA test (hfreduce_gpu_test) failed or found no usable device; see log.txt"
fi

step tests
if [ "$gpu_ok" = 1 ]; then
  FFSIM_REQUIRE_GPU=1 timeout 90 ctest --test-dir "$build" --output-on-failure -j4 >"$out/ctest.txt" 2>&1
else
  timeout 90 ctest --test-dir "$build" --output-on-failure -j4 >"$out/ctest.txt" 2>&1
fi
tail -8 "$out/ctest.txt" | tee -a "$log"

if [ "$gpu_ok" = 0 ]; then
  step "no GPU: $why; stopping before the CUDA benches (exit 77, skipped)"
  echo "device-hfreduce: no GPU here ($why): built and tested hfreduce, skipped the GPU measurements" >&2
  exit 77
fi

bench=$build/hfreduce-bench
stem=$measured/$machine-$date
step "single node: cpu copy/reduce, cuda d2h/h2d/bidir, pipeline 1 and 8 virtual devices (90 s at most)"
timeout 90 "$bench" --backend cuda --stages copy,reduce,d2h,h2d,pipeline --min-bytes 1MiB --max-bytes 1GiB --step 16 \
  --k 8 --threads 1,"$jobs" --dtypes fp32,bf16 --devices 1,8 --chunks 4MiB,16MiB --budget 0.05 --reps 3 --rounds 2 \
  --machine "$machine" --out "$stem.json" >>"$log" 2>&1
echo "exit $?" | tee -a "$log"

for np in 2 4 8; do
  step "mpirun -np $np: tree vs MPI_Allreduce (shipped, fair), transport bound, allreduce with 8 virtual devices (45 s at most)"
  timeout 45 "${mpirun_[@]}" -np "$np" "$bench" --backend cuda --stages internode,allreduce --min-bytes 8MiB \
    --max-bytes 64MiB --step 8 --devices 8 --chunks 4MiB --budget 0.05 --reps 3 --rounds 2 --timeout 30 \
    --machine "$machine" --out "$stem-np$np.json" >>"$log" 2>&1
  echo "exit $?" | tee -a "$log"
done
# the reduce kernel against the plain loop, the copy bound and the read bound (single node), then the
# tree against its baselines (each MPI run)
sed -n '/^reduce (default stores/,/^$/p' "$log" | tee -a "$out/summary.txt" >/dev/null
grep -A8 "^tree vs baselines" "$log" | tee -a "$out/summary.txt" >/dev/null

if [ -x build/ffsim ] && [ -n "${NODE:-}" ]; then
  step "calibrate and validate (build/ffsim, node model $NODE)"
  files=("$stem.json" "$stem"-np*.json)
  build/ffsim calibrate --node "$NODE" -o "$out/calibration.json" "${files[@]}" >>"$log" 2>&1
  build/ffsim validate --calibration "$out/calibration.json" "${files[@]}" >>"$log" 2>&1
  echo "exit $?" | tee -a "$log"
else
  step "no build/ffsim or NODE here: calibrate and validate the fetched files where ffsim is built (docs/hfreduce.md)"
fi
step done
