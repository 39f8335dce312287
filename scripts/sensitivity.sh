#!/usr/bin/env bash
# How many digits of a simulated time mean something. Three measurements, fluid engine:
#  1. one byte more (a relative change of 5e-9) away from a chunk boundary: a time linear in the
#     size moves by 5e-9; at scale HFReduce's and the tree's chunk pipelines amplify it (their
#     stages feed back through staging slots and shared host memory and NICs);
#  2. the same schedule solved two mathematically equal ways (the default solve, with lazy
#     constraints and partial solves, against the plain eager one; tests/unit/eval_fluid_lazy_test.cpp
#     and eval_fluid_partial_test.cpp hold them to 1e-9 on 1 to 4 nodes): rounding differences,
#     amplified the same way;
#  3. one byte more across a chunk boundary (184 MiB is 46 HFReduce chunks of 4 MiB and 23 per NCCL
#     tree; one byte more makes 47 and 24 equal chunks): a real step of the algorithms' chunking,
#     not noise, shown for scale.
# Same inputs still give the same output bit for bit.
# Usage: scripts/sensitivity.sh [--quick]   Writes docs/sensitivity.txt.
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail
source "$(dirname "$0")/ffsim-env.sh" "$@"
out=docs/sensitivity.txt
S=192937984  # 184 MiB
gpus="16 32 64 128 256 $([ $quick = 1 ] || echo 512)"
# time_s of every row, in order, one per line
times() { $FF collective $SC "$@" --json | awk -F': ' '/"time_s"/{gsub(",", "", $2); print $2}'; }
# relative difference of two lists of times, as "%.1e" per pair
reldiff() { paste -d' ' <(echo "$1") <(echo "$2") | awk '{d = $2 - $1; if (d < 0) d = -d; printf " %9.1e", d / $1}'; }
{
  echo "# ffsim: sensitivity of simulated times, $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "# command: scripts/sensitivity.sh $*"
  echo
  echo "## 1. One byte more, away from a chunk boundary: |t(S + 1 B) - t(S)| / t(S), S = 184 MiB - 1,000,000 B"
  echo "##    (the size moves by 5.2e-9)"
  printf "%6s %9s %9s %9s\n" GPUs hfreduce nccl_ring nccl_tree
  for n in $gpus; do
    a=$(times --algo hfreduce,nccl_ring,nccl_tree --gpus "$n" --size $((S - 1000000))B --engine fluid)
    b=$(times --algo hfreduce,nccl_ring,nccl_tree --gpus "$n" --size $((S - 999999))B --engine fluid)
    printf "%6d%s\n" "$n" "$(reldiff "$a" "$b")"
  done
  echo
  echo "## 2. The same schedule, the default solve (lazy constraints, partial solves) against the plain eager one: |fluid - eager| / eager, HFReduce"
  printf "%6s %9s %9s\n" GPUs 184MiB 392MiB
  for n in 32 64 128 $([ $quick = 1 ] || echo 256); do
    row=""
    for size in 184MiB 392MiB; do
      a=$(times --algo hfreduce --gpus "$n" --size $size --engine fluid)
      b=$(times --algo hfreduce --gpus "$n" --size $size --engine fluid-eager)
      row="$row$(reldiff "$b" "$a")"
    done
    printf "%6d%s\n" "$n" "$row"
  done
  echo
  echo "## 3. One byte more across a chunk boundary (HFReduce 46 -> 47 chunks, each NCCL tree 23 -> 24):"
  echo "##    (t(S + 1 B) - t(S)) / t(S), S = 184 MiB, fluid and closed form"
  printf "%6s %9s %9s %9s %9s\n" GPUs "hfreduce" "(closed)" nccl_tree "(closed)"
  for n in $gpus; do
    row=""
    for algo in hfreduce nccl_tree; do
      for engine in fluid analytic; do
        a=$(times --algo $algo --gpus "$n" --size ${S}B --engine $engine)
        b=$(times --algo $algo --gpus "$n" --size $((S + 1))B --engine $engine)
        row="$row$(paste -d' ' <(echo "$a") <(echo "$b") | awk '{printf " %+9.1e", ($2 - $1) / $1}')"
      done
    done
    printf "%6d%s\n" "$n" "$row"
  done
} | tee "$out"
