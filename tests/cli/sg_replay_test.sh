#!/usr/bin/env bash
# sg-replay, the plain SimGrid yardstick of the SimGrid engine (scripts/bench-sim.sh, issue 31):
# what a run of the engine exports (FFSIM_SIMGRID_EXPORT) replays to the engine's own simulated end
# (sg-replay exits 1 when it differs by more than 1e-9), for schedules with both-ways caps, rate caps
# and arbitration penalties (HFReduce: its GDRCopy writes are capped, its root ports both-ways), a
# flat ring of every step, and a training step's GPU compute (flows of GPU-seconds); a changed end
# is caught (exit 1) and a bad file refused (exit 2).
# Usage: sg_replay_test.sh FFSIM SG_REPLAY   (from the repository root)
# SPDX-License-Identifier: Apache-2.0
set -uo pipefail
ff=$1
replay=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
same() {  # same NAME ffsim-args...: the export of that run replays to its end
  local name=$1
  shift
  if ! FFSIM_SIMGRID_EXPORT="$tmp/$name.txt" "$ff" "$@" > /dev/null; then
    echo "FAIL ($name): ffsim $* failed"
    fails=$((fails + 1))
    return
  fi
  if ! "$replay" "$tmp/$name.txt" > "$tmp/$name.out" 2>&1; then
    echo "FAIL ($name): sg-replay did not reach the engine's end:"
    cat "$tmp/$name.out"
    fails=$((fails + 1))
  fi
}
same hfreduce collective scenarios/fire-flyer-2.json --algo hfreduce --gpus 16 --size 8MiB --engine simgrid
same ring collective scenarios/fire-flyer-2.json --algo nccl_ring --gpus 24 --size 1MiB --engine simgrid --full
same train train tests/data/train/vgg16-ddp-ring.json --gpus 16 --engine simgrid

# The replay checks itself: another end in the file is exit 1.
if [ -s "$tmp/hfreduce.txt" ]; then
  sed 's/^end .*/end 1.5/' "$tmp/hfreduce.txt" > "$tmp/changed.txt"
  "$replay" "$tmp/changed.txt" > /dev/null 2> "$tmp/err.txt"
  rc=$?
  [ "$rc" = 1 ] || { echo "FAIL (changed end): exit $rc, want 1"; fails=$((fails + 1)); }
  grep -q "not the same flows" "$tmp/err.txt" || { echo "FAIL (changed end): no message"; fails=$((fails + 1)); }
  # A file cut short, or not an export: exit 2 with the file's name.
  head -c 2000 "$tmp/hfreduce.txt" > "$tmp/cut.txt"
  for f in "$tmp/cut.txt" scenarios/fire-flyer-2.json "$tmp/missing.txt"; do
    "$replay" "$f" > /dev/null 2> "$tmp/err.txt"
    rc=$?
    [ "$rc" = 2 ] || { echo "FAIL ($f): exit $rc, want 2"; fails=$((fails + 1)); }
    grep -qF "$f" "$tmp/err.txt" || { echo "FAIL ($f): the message does not name the file"; fails=$((fails + 1)); }
  done
fi
[ "$fails" = 0 ] && echo "sg-replay: 3 exports replayed to their ends, 4 bad inputs refused"
exit $((fails > 0))
