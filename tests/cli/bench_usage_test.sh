#!/usr/bin/env bash
# hfreduce-bench rejects bad options at start-up: exit 2, a message naming the option and what it
# expected, and no output file (until 2026-12-01 an unknown stage was ignored, `--stages foo` exited
# 0 with no points, and --k 17, --threads 0, --devices 0 and --chunks 0 failed deep in the library,
# exit 1, after measuring the other stages; --step 1 and --reps 0 were raised silently; "4x" read as
# 4; a negative size was cast to a huge one). Usage: bench_usage_test.sh BENCH
# SPDX-License-Identifier: Apache-2.0
set -uo pipefail
bench=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
expect() {  # expect "stderr text" args...
  local want=$1
  shift
  "$bench" "$@" --out "$tmp/out.json" > /dev/null 2> "$tmp/err.txt"
  local rc=$?
  if [ "$rc" != 2 ]; then echo "FAIL ($*): exit $rc, want 2"; fails=$((fails + 1)); fi
  if ! grep -qF -- "$want" "$tmp/err.txt"; then echo "FAIL ($*): stderr lacks '$want':"; head -2 "$tmp/err.txt"; fails=$((fails + 1)); fi
  if [ -e "$tmp/out.json" ]; then echo "FAIL ($*): wrote an output file"; rm -f "$tmp/out.json"; fails=$((fails + 1)); fi
}
expect 'unknown stage "foo"; valid: copy, reduce, d2h, h2d, pipeline, internode, allreduce' --stages foo
expect 'unknown stage "redcue"' --stages copy,redcue
expect '--stages: expected a comma-separated list' --stages ,
expect '--k: expected 1 to 16, got 17' --k 17
expect '--k: expected 1 to 16, got 0' --k 8,0
expect '--k: expected a whole number, got "4x"' --k 4x
expect '--threads: expected 1 to 4096, got 0' --threads 0
expect '--devices: expected 1 to 16, got 0' --devices 0
expect '--devices: expected 1 to 16, got 17' --devices 1,17
expect '--chunks: a chunk must hold an element (4 bytes), got 2B' --chunks 1MiB,2B
expect 'bad size "0"' --chunks 0
expect 'bad size "-4KiB"' --min-bytes -4KiB
expect 'bad size "1.5B"' --max-bytes 1.5B
expect '--slice: the tree'"'"'s slices are at least 64 bytes, got 32B' --slice 32B
expect '--step: expected 2 to 1024, got 1' --step 1
expect '--reps: expected 1 to 1000000, got 0' --reps 0
expect '--budget: expected seconds above 0 and at most 3600, got "0"' --budget 0
expect '--budget: expected seconds above 0 and at most 3600, got "nan"' --budget nan
expect '--rounds: expected 1 to 100, got 0' --rounds 0
expect '--rounds: expected a whole number, got "two"' --rounds two
expect '--stages is given twice; give it once' --stages d2h --stages h2d
expect '--timeout: expected seconds from 0.1 to 86400, got "0"' --timeout 0
expect '--tree-threads: expected 0 to 2, got 3' --tree-threads 3
expect '--tree-receives: expected 0 (auto) or 1 to the window (4), got 5' --tree-receives 5
expect '--tree-receives: expected 0 to 64, got -1' --tree-receives -1
expect '--quick is given twice' --quick --quick
# --out is checked before anything is measured (until 2026-12-01: exit 1 after the whole sweep):
# a missing folder, a folder, a read-only folder (root writes anywhere, so that case only as a user).
out_case() {  # out_case "stderr text" OUT
  "$bench" --stages copy --min-bytes 4KiB --max-bytes 4KiB --out "$2" > /dev/null 2> "$tmp/err.txt"
  local rc=$?
  if [ "$rc" != 2 ]; then echo "FAIL (--out $2): exit $rc, want 2"; fails=$((fails + 1)); fi
  if ! grep -qF -- "$1" "$tmp/err.txt"; then echo "FAIL (--out $2): stderr lacks '$1':"; head -2 "$tmp/err.txt"; fails=$((fails + 1)); fi
}
out_case 'folder /nonexistent-ffsim does not exist' /nonexistent-ffsim/x.json
out_case 'is a folder; give a file name' "$tmp"
mkdir "$tmp/ro" && chmod 555 "$tmp/ro"
if [ "$(id -u)" != 0 ]; then out_case 'cannot write' "$tmp/ro/x.json"; fi
[ -z "$(ls "$tmp/ro")" ] || { echo "FAIL: a probe file was left in $tmp/ro"; fails=$((fails + 1)); }
[ "$fails" = 0 ] || exit 1
echo ok
