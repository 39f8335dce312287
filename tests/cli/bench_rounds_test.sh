#!/usr/bin/env bash
# hfreduce-bench --rounds 2 writes each point's two round medians, whose median is the point's (and
# ffsim check accepts the file, which checks exactly that). Usage: bench_rounds_test.sh BENCH FFSIM
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail
bench=$1
ffsim=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bench" --stages d2h,h2d --min-bytes 16KiB --max-bytes 64KiB --rounds 2 --budget 0.001 --reps 2 \
  --machine test --out "$tmp/r.json" > "$tmp/out.txt"
grep -q "^round 2 of 2$" "$tmp/out.txt" || { echo "FAIL: no second round"; cat "$tmp/out.txt"; exit 1; }
"$ffsim" --models models check "$tmp/r.json"
# 2 sizes x (d2h, h2d, bidir) = 6 points, each with 2 rounds
n=$(grep -c '"rounds": \[' "$tmp/r.json" || true)
[ "$n" = 6 ] || { echo "FAIL: $n points with rounds, want 6"; exit 1; }
# The copy points too (they are the reduces' bounds, measured once a sweep): every one with 2 rounds.
"$bench" --stages copy --min-bytes 16KiB --max-bytes 64KiB --threads 1 --k 2 --rounds 2 --budget 0.001 --reps 2 \
  --machine test --out "$tmp/c.json" > "$tmp/out.txt"
"$ffsim" --models models check "$tmp/c.json"
copies=$(grep -c '"stage": "copy"' "$tmp/c.json" || true)
n=$(grep -c '"rounds": \[' "$tmp/c.json" || true)
[ "$copies" -gt 0 ] && [ "$n" = "$copies" ] || { echo "FAIL: $n of $copies copy points with rounds"; exit 1; }
echo ok
