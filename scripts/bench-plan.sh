#!/usr/bin/env bash
# Times `ffsim plan` on the 10,000-GPU DGX design (and the 32,768-GPU multi-plane design) and
# reports the plan phase (fabric build, counts, prices) as a ratio against what the same run
# measured for merely parsing the scenario, and per endpoint. Not a timed test: it prints and
# writes its latest result to docs/bench-plan.txt.
# Usage: scripts/bench-plan.sh [runs]   (default 21; the median of the runs is reported)
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-21}
ffsim=${FFSIM:-build/ffsim}
if [ ! -x "$ffsim" ]; then
  echo "bench-plan: $ffsim not found; build first (scripts/test.sh or cmake --build build)" >&2
  exit 2
fi

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# bench SCENARIO -> one result line
bench() {
  local scenario=$1 tmp
  tmp=$(mktemp)
  for _ in $(seq "$runs"); do
    local t0 t1
    t0=$(date +%s%N)
    "$ffsim" --models models plan "$scenario" --timing 2>>"$tmp" >/dev/null
    t1=$(date +%s%N)
    echo "wall_us $(( (t1 - t0) / 1000 ))" >>"$tmp"
  done
  local catalog parse plan endpoints wall
  catalog=$(awk '/^timing_us:/ { print $3 }' "$tmp" | median)
  parse=$(awk '/^timing_us:/ { print $5 }' "$tmp" | median)
  plan=$(awk '/^timing_us:/ { print $7 }' "$tmp" | median)
  endpoints=$(awk '/^timing_us:/ { print $9; exit }' "$tmp")
  wall=$(awk '/^wall_us/ { print $2 }' "$tmp" | median)
  rm -f "$tmp"
  awk -v s="$scenario" -v c="$catalog" -v p="$parse" -v q="$plan" -v e="$endpoints" -v w="$wall" 'BEGIN {
    printf "%-36s endpoints %6d  catalog %8.1f us  parse %7.1f us  plan %8.1f us  plan/parse %5.1f  plan per endpoint %6.3f us  process %7.1f ms\n",
           s, e, c, p, q, q / p, q / e, w / 1000 }'
}

out=docs/bench-plan.txt
{
  echo "# scripts/bench-plan.sh: ffsim plan timings (median of $runs runs each)"
  echo "# date: $(date -u +%Y-%m-%dT%H:%M:%SZ)  commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)  host: $(nproc) CPUs, $(uname -m)"
  echo "# catalog: loading models/; parse: the scenario file into specs (no fabric); plan: building the fabric"
  echo "# graph with its routing tables, counting, pricing, power and performance; process: the whole command"
  bench scenarios/dgx-a100-cluster.json
  bench scenarios/table3-fire-flyer-2.json
  bench scenarios/fire-flyer-next.json
} | tee "$out.tmp"
mv "$out.tmp" "$out"
