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

# 7. What is at an output path decides how it is written (docs/outputs.md, "Writing files"); an
# audit of 2026-12-01 found --trace replaced whatever was there by rename: a device node or a
# symbolic link became a regular file (as root, `--trace /dev/null` destroyed /dev/null).
trace=(collective "$tmp/sc/fire-flyer-2.json" --algo hfreduce --gpus 16 --engine fluid --trace)
is_trace() { python3 -c "import json, sys; json.load(open(sys.argv[1]))['traceEvents']" "$1" 2> /dev/null; }
# 7a. A symbolic link to a regular file: the link stays a link, the file it names gets the trace.
printf 'old\n' > "$tmp/real.json"
ln -s real.json "$tmp/link.json"
run 0 "" "${trace[@]}" "$tmp/link.json"
[ -L "$tmp/link.json" ] || fail "--trace replaced the symbolic link $tmp/link.json"
is_trace "$tmp/real.json" || fail "--trace did not write through the link to $tmp/real.json"
# 7b. A dangling link is refused (where would the file go?), and nothing is created.
ln -s nowhere.json "$tmp/dangling.json"
run 2 "is a symbolic link to $tmp/nowhere.json, which does not exist" "${trace[@]}" "$tmp/dangling.json"
[ -e "$tmp/nowhere.json" ] && fail "a dangling link's target was created"
# 7c. The replaced file keeps its permissions (rename would give the temporary file's).
chmod 640 "$tmp/t.json"
run 0 "" "${trace[@]}" "$tmp/t.json"
[ "$(stat -c %a "$tmp/t.json")" = 640 ] || fail "--trace changed the mode of $tmp/t.json to $(stat -c %a "$tmp/t.json")"
# 7d. A named pipe no process reads is refused (opening it would block until one does); one with
# a reader gets the trace in place.
mkfifo "$tmp/fifo"
timeout 60 "$ffsim" --models models "${trace[@]}" "$tmp/fifo" > /dev/null 2> "$tmp/err.txt"
got=$?
[ "$got" = 2 ] || fail "--trace FIFO without a reader: exit $got, want 2"
grep -qF "is a named pipe (FIFO) that no process reads" "$tmp/err.txt" || fail "--trace FIFO: $(head -2 "$tmp/err.txt")"
cat "$tmp/fifo" > "$tmp/from-fifo.json" &
reader=$!
# The reader counts as one from the moment cat (after the fork's exec) waits in its open: wait for that.
for _ in $(seq 200); do
  [ "$(cat /proc/$reader/comm 2> /dev/null)" = cat ] && grep -q '^State:.*S' /proc/$reader/status 2> /dev/null && break
  sleep 0.05
done
run 0 "" "${trace[@]}" "$tmp/fifo"
wait "$reader"
[ -p "$tmp/fifo" ] || fail "--trace replaced the FIFO $tmp/fifo"
is_trace "$tmp/from-fifo.json" || fail "the FIFO's reader got no trace"
# 7e. A descriptor the shell opened (/dev/fd/N, /dev/stderr) is written in place.
"$ffsim" --models models "${trace[@]}" /dev/fd/3 > /dev/null 2> "$tmp/err.txt" 3> "$tmp/fd3.json" ||
  fail "--trace /dev/fd/3: $(head -2 "$tmp/err.txt")"
is_trace "$tmp/fd3.json" || fail "--trace /dev/fd/3 wrote no trace"
# 7f. A character device is written in place and stays a device: one made here (root: mknod; the
# same numbers as /dev/null), then /dev/null itself, guarded: only after the made one survived,
# and checked to be a character device before and after.
if [ "$(id -u)" = 0 ] && mknod "$tmp/null" c 1 3 2> /dev/null; then
  run 0 "" "${trace[@]}" "$tmp/null"
  if [ -c "$tmp/null" ]; then
    if [ -c /dev/null ]; then
      run 0 "" "${trace[@]}" /dev/null
      [ -c /dev/null ] || fail "--trace /dev/null replaced /dev/null"
    fi
  else
    fail "--trace replaced the character device $tmp/null"
  fi
  ln -s null "$tmp/null-link"
  run 0 "" "${trace[@]}" "$tmp/null-link"
  [ -c "$tmp/null" ] && [ -L "$tmp/null-link" ] || fail "--trace through a link to a device replaced one of them"
  # A block device is refused: ffsim never writes over a disk.
  if mknod "$tmp/blk" b 7 250 2> /dev/null; then
    run 2 "$tmp/blk is a block device, not a file" "${trace[@]}" "$tmp/blk"
    [ -b "$tmp/blk" ] || fail "--trace replaced the block device $tmp/blk"
  fi
else
  echo "skipped: mknod (not root): character and block devices at an output path"
fi

# 8. Write errors are exit 2 with the reason, never 0, and never leave a cut file.
# 8a. A device that is full (/dev/full: every write fails with ENOSPC), as a file output.
if [ -c /dev/full ]; then
  run 2 "--trace: cannot write /dev/full: No space left on device" "${trace[@]}" /dev/full
  run 2 "-o: cannot write /dev/full: No space left on device" calibrate "$tmp/m.json" --node xeon_2c_vm -o /dev/full
  # 8b. stdout on a full device: every command, --help and --version included (checked in main).
  for args in "plan scenarios/fire-flyer-2.json --json" "plan scenarios/fire-flyer-2.json --csv" \
    "models" "check scenarios/fire-flyer-2.json" "--version" "--help" "summary scenarios/fire-flyer-2.json"; do
    # shellcheck disable=SC2086
    "$ffsim" --models models $args > /dev/full 2> "$tmp/err.txt"
    got=$?
    [ "$got" = 2 ] || fail "($args > /dev/full): exit $got, want 2"
    grep -qF "cannot write the output to stdout: No space left on device" "$tmp/err.txt" ||
      fail "($args > /dev/full): stderr: $(head -2 "$tmp/err.txt")"
  done
else
  echo "skipped: no /dev/full"
fi
# 8c. A file cut short (a full disk, here a file size limit: with SIGXFSZ ignored a write past
# the limit fails with EFBIG): the old file stays whole, no temporary file is left, exit 2.
cp "$tmp/t.json" "$tmp/t.orig"
(
  trap '' XFSZ
  ulimit -f 64  # 64 blocks of 512 B = 32 KiB, far less than a 16-GPU trace
  exec "$ffsim" --models models "${trace[@]}" "$tmp/t.json"
) > /dev/null 2> "$tmp/err.txt"
got=$?
[ "$got" = 2 ] || fail "a trace cut by the file size limit: exit $got, want 2"
grep -qF "File too large" "$tmp/err.txt" || fail "a cut trace: stderr: $(head -2 "$tmp/err.txt")"
same "$tmp/t.json" "$tmp/t.orig"
ls -a "$tmp" | grep -q "ffsim-tmp" && fail "a temporary file was left behind after a cut write: $(ls -a "$tmp")"
# The same for stdout redirected to a file: exit 2, not 0.
(
  trap '' XFSZ
  ulimit -f 1
  exec "$ffsim" --models models plan scenarios/fire-flyer-2.json --json
) > "$tmp/cut.json" 2> "$tmp/err.txt"
got=$?
[ "$got" = 2 ] || fail "plan --json cut by the file size limit: exit $got, want 2"
grep -qF "cannot write the output to stdout: File too large" "$tmp/err.txt" || fail "a cut stdout: $(head -2 "$tmp/err.txt")"

# 9. Inputs that are not regular files are refused at once (an audit of 2026-12-01: `check FIFO`
# blocked forever): a FIFO, a device, as a scenario, a measurement or a calibration.
timeout 60 "$ffsim" --models models check "$tmp/fifo" > /dev/null 2> "$tmp/err.txt"
got=$?
[ "$got" = 2 ] || fail "check FIFO: exit $got, want 2 (124: it blocked)"
grep -qF "$tmp/fifo is a named pipe (FIFO), not a regular file" "$tmp/err.txt" || fail "check FIFO: $(head -2 "$tmp/err.txt")"
run 2 "/dev/zero is a character device, not a regular file" check /dev/zero
run 2 "is a named pipe (FIFO), not a regular file" summary "$tmp/fifo"
run 2 "is a named pipe (FIFO), not a regular file" --calibration "$tmp/fifo" plan scenarios/fire-flyer-2.json
run 2 "is a named pipe (FIFO), not a regular file" calibrate "$tmp/fifo" --node xeon_2c_vm -o "$tmp/c2.json"
# A FIFO among the catalog's files is refused by the reader (exit 3), not read.
cp -r models "$tmp/models"
mkfifo "$tmp/models/zz-fifo.json"
timeout 60 "$ffsim" --models "$tmp/models" models > /dev/null 2> "$tmp/err.txt"
got=$?
[ "$got" = 3 ] || fail "a FIFO in the catalog: exit $got, want 3 (124: it blocked)"
grep -qF "zz-fifo.json: not a regular file (a named pipe)" "$tmp/err.txt" || fail "a FIFO in the catalog: $(head -2 "$tmp/err.txt")"

if [ "$fails" -gt 0 ]; then
  echo "$fails failure(s)"
  exit 1
fi
echo "outputs: all cases pass"
