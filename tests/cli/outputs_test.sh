#!/usr/bin/env bash
# Output files are written whole or not at all, and never over an input (an audit of 2026-12-01
# found `collective --trace F` emptied F before checking anything, so a bad --gpus left F at 0 bytes
# and `--trace <the scenario>` wiped the scenario; `calibrate M -o M` wrote the calibration over
# the measurement M, and `calibrate M M` counted one run twice; `summary` printed before it read the
# workload beside its scenario). Usage: outputs_test.sh FFSIM
# (run from the source tree).
# SPDX-License-Identifier: Apache-2.0
set -uo pipefail
ffsim=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# run RC "stderr text" args...: exit code RC and (when given) the text on stderr.
run() {
  local rc=$1 want=$2
  shift 2
  "$ffsim" --models models "$@" > "$tmp/out.txt" 2> "$tmp/err.txt"
  local got=$?
  [ "$got" = "$rc" ] || fail "($*): exit $got, want $rc: $(head -2 "$tmp/err.txt")"
  if [ -n "$want" ] && ! grep -qF -- "$want" "$tmp/err.txt"; then fail "($*): stderr lacks '$want': $(head -2 "$tmp/err.txt")"; fi
}
same() {  # same FILE COPY: FILE is byte for byte what it was
  cmp -s "$1" "$2" || fail "$1 changed"
}

cp -r scenarios "$tmp/sc"
cp models/measured/xeon-2c-vm-2026-12-01-np2.json "$tmp/m.json"
cp "$tmp/m.json" "$tmp/m.orig"
cp "$tmp/sc/fire-flyer-2.json" "$tmp/ff2.orig"
printf 'an earlier trace\n' > "$tmp/t.json"
cp "$tmp/t.json" "$tmp/t.orig"

# 1. A run that fails after --trace was named leaves the old file as it was.
run 2 "hfreduce needs the same number of GPUs on every node" \
  collective "$tmp/sc/fire-flyer-2.json" --algo hfreduce --gpus 12 --engine fluid --trace "$tmp/t.json"
same "$tmp/t.json" "$tmp/t.orig"
run 2 "exceeds the cluster" collective "$tmp/sc/fire-flyer-2.json" --algo hfreduce --gpus 99999 --engine fluid --trace "$tmp/t.json"
same "$tmp/t.json" "$tmp/t.orig"
# 2. An output over an input is refused, and the input is left as it was.
run 2 "--trace: $tmp/sc/fire-flyer-2.json is also an input of this command" \
  collective "$tmp/sc/fire-flyer-2.json" --algo hfreduce --gpus 16 --engine fluid --trace "$tmp/sc/fire-flyer-2.json"
same "$tmp/sc/fire-flyer-2.json" "$tmp/ff2.orig"
run 2 "(the same file as $tmp/sc/fire-flyer-2.json)" \
  collective "$tmp/sc/fire-flyer-2.json" --algo hfreduce --gpus 16 --engine fluid --trace "$tmp/sc/../sc/fire-flyer-2.json"
same "$tmp/sc/fire-flyer-2.json" "$tmp/ff2.orig"
run 2 "--trace: $tmp/sc/train-vgg16-ddp.json is also an input" \
  train "$tmp/sc/fire-flyer-2.json" --workload "$tmp/sc/train-vgg16-ddp.json" --gpus 16 --trace "$tmp/sc/train-vgg16-ddp.json"
cmp -s "$tmp/sc/train-vgg16-ddp.json" scenarios/train-vgg16-ddp.json || fail "train --trace changed its workload file"
run 2 "-o: $tmp/m.json is also an input" calibrate "$tmp/m.json" --node xeon_2c_vm -o "$tmp/m.json"
same "$tmp/m.json" "$tmp/m.orig"
# 3. One run given twice is one run.
run 2 "is given twice" calibrate "$tmp/m.json" "$tmp/./m.json" --node xeon_2c_vm -o "$tmp/c.json"
[ -e "$tmp/c.json" ] && fail "calibrate wrote $tmp/c.json after a usage error"
# 4. A folder that does not exist, or a folder as the file: exit 2 at once, with the reason.
run 2 "the folder $tmp/nowhere does not exist" \
  collective "$tmp/sc/fire-flyer-2.json" --algo hfreduce --gpus 16 --engine fluid --trace "$tmp/nowhere/t.json"
run 2 "is a folder" collective "$tmp/sc/fire-flyer-2.json" --algo hfreduce --gpus 16 --engine fluid --trace "$tmp"
# 5. A run that succeeds replaces the old file with the whole trace, and leaves no temporary file.
run 0 "" collective "$tmp/sc/fire-flyer-2.json" --algo hfreduce --gpus 16 --engine fluid --trace "$tmp/t.json"
python3 -c "import json, sys; json.load(open(sys.argv[1]))['traceEvents']" "$tmp/t.json" || fail "the new trace is not a trace"
ls "$tmp" | grep -q "ffsim-tmp" && fail "a temporary file was left behind: $(ls "$tmp")"
run 0 "" calibrate "$tmp/m.json" --node xeon_2c_vm -o "$tmp/c.json"
[ -s "$tmp/c.json" ] || fail "calibrate did not write $tmp/c.json"

# 6. summary reads every input before it prints (an audit of 2026-12-01: with a bad
# train-vgg16-ddp.json beside the scenario it printed 3.9 KB, then exited 3).
sed 's/"batch": {"value": 50/"batch": {"value": 0/' scenarios/train-vgg16-ddp.json > "$tmp/sc/train-vgg16-ddp.json"
run 3 "train-vgg16-ddp.json:/workload/batch/value" summary "$tmp/sc/fire-flyer-2.json"
[ -s "$tmp/out.txt" ] && fail "summary printed $(wc -c < "$tmp/out.txt") bytes before failing on the workload beside it"

if [ "$fails" -gt 0 ]; then
  echo "$fails failure(s)"
  exit 1
fi
echo "outputs: all cases pass"
