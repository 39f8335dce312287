#!/usr/bin/env bash
# One run on a GPU machine (e.g. the one-H200, 16-core machine of shared/reference/h200-probe.md):
# configure hfreduce alone, build, run its tests (the CUDA test runs there), then the benchmark:
# CPU reduce vs copy bound, CUDA D2H/H2D/bidirectional bounds and the pipeline with 1 and 8
# virtual devices on GPU 0, and the inter-node tree vs MPI_Allreduce at 2, 4 and 8 ranks.
# Everything lands in $OUT (at most 8 files). Budget: well under 8 minutes on 16 cores.
# SPDX-License-Identifier: Apache-2.0
set -uo pipefail

out=${OUT:-$PWD/build-device/out}
build=build-device
mkdir -p "$out"
machine=${MACHINE:-h200-16c}
date=$(date -u +%Y-%m-%d)
jobs=$(nproc)
log=$out/device-log.txt
step() { echo "== $* ($(date -u +%T))" | tee -a "$log"; }

step machine
{ nvidia-smi --query-gpu=name,pcie.link.gen.current,pcie.link.width.current,driver_version --format=csv;
  lscpu | head -20; cmake --version | head -1; g++ --version | head -1; nvcc --version | tail -2;
  mpirun --version | head -1; } >>"$log" 2>&1

step configure and build
cmake -S . -B "$build" -G Ninja -DFFSIM_HFREDUCE_ONLY=ON -DFFSIM_WERROR=ON -DCMAKE_CUDA_ARCHITECTURES=90 >>"$log" 2>&1 &&
  timeout 240 cmake --build "$build" -j"$jobs" >>"$log" 2>&1 || { step build FAILED; tail -50 "$log"; exit 1; }

step tests
FFSIM_REQUIRE_GPU=1 timeout 180 ctest --test-dir "$build" --output-on-failure -j4 >"$out/ctest.txt" 2>&1
tail -15 "$out/ctest.txt" | tee -a "$log"

bench=$build/hfreduce-bench
step cpu reduce vs copy bound
timeout 150 "$bench" --stages copy,reduce --min-bytes 1MiB --max-bytes 256MiB --threads 1,"$jobs" \
  --budget 0.1 --machine "$machine" --out "$out/$machine-$date-cpu.json" >"$out/bench-cpu.txt" 2>&1
tail -3 "$out/bench-cpu.txt" | tee -a "$log"

step cuda copies and pipeline, 1 and 8 virtual devices on GPU 0, two rounds
# Two rounds: each point's two sweeps are recorded, so that ffsim validate shows this machine's
# run-to-run spread beside the 3% / 5% goals (issue 8).
timeout 180 "$bench" --backend cuda --stages d2h,h2d,pipeline --min-bytes 16MiB --max-bytes 1GiB \
  --devices 1,8 --chunks 1MiB,4MiB,16MiB --budget 0.1 --rounds 2 \
  --machine "$machine" --out "$out/$machine-$date-cuda.json" >"$out/bench-cuda.txt" 2>&1
tail -3 "$out/bench-cuda.txt" | tee -a "$log"

step inter-node tree vs MPI_Allreduce
for np in 2 4 8; do
  timeout 60 mpirun --oversubscribe --allow-run-as-root -np "$np" "$bench" --stages internode \
    --min-bytes 8MiB --max-bytes 256MiB --budget 0.1 --machine "$machine" \
    --out "$out/$machine-$date-np$np.json" >>"$out/bench-mpi.txt" 2>&1
done
grep -E "^internode" "$out/bench-mpi.txt" | tee -a "$log"
step done
