#!/usr/bin/env bash
# scripts/plot.py: bad input (always; it is checked before matplotlib is imported), and the
# figures themselves when a python3 with matplotlib is there (else exit 77: skipped).
# Usage: plot_test.sh bad|figures FFSIM   (run from the source tree)
# SPDX-License-Identifier: Apache-2.0
set -uo pipefail
what=$1
FF=$2
PY=
for p in python3 /usr/bin/python3; do
  if command -v "$p" > /dev/null; then
    if [ "$what" = bad ] || "$p" -c "import matplotlib" 2> /dev/null; then PY=$p; break; fi
  fi
done
if [ -z "$PY" ]; then
  if [ "$what" = bad ]; then echo "no python3: skipped"; else echo "no python3 with matplotlib: skipped"; fi
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
# expect RC NEEDLE -- command...: the exit code and a piece of stderr
expect() {
  local rc=$1 needle=$2
  shift 3
  "$@" > "$tmp/out" 2> "$tmp/err"
  local got=$?
  if [ "$got" != "$rc" ] || ! grep -qF -- "$needle" "$tmp/err"; then
    echo "FAIL: $* -> rc $got (want $rc), stderr: $(cat "$tmp/err") (want: $needle)"
    fail=1
  fi
}
if [ "$what" = bad ]; then
  # bad KIND FILE NEEDLE [ARGS...]: plot.py KIND on $tmp/FILE exits 3 with NEEDLE on stderr
  bad() {
    local kind=$1 file=$2 needle=$3
    shift 3
    expect 3 "$needle" -- "$PY" scripts/plot.py "$kind" "$tmp/$file" "$@" -o "$tmp/x.png"
  }
  echo 'not json' > "$tmp/bad.json"
  echo '[]' > "$tmp/empty.json"
  echo '[{"algo": "hfreduce", "gpus": 16}]' > "$tmp/nobw.json"
  echo '[{"algo": "hfreduce", "gpus": "16", "algbw_GBps": 8}]' > "$tmp/strgpus.json"
  echo '[{"algo": "hfreduce", "gpus": 0, "algbw_GBps": 8}]' > "$tmp/zero.json"
  echo '{"rows": [{"gpus": 16, "step_s": 0.3, "efficiency": 1}]}' > "$tmp/train.json"
  echo '[{"scenario": "x", "value": 512}]' > "$tmp/noknob.json"
  echo '[{"scenario": "x", "knob": "gpus", "value": 512, "fits": true}]' > "$tmp/noplan.json"
  echo '[{"scenario": "x", "knob": "gpus", "value": 512, "fits": false}]' > "$tmp/nofit.json"
  bad collective bad.json "bad.json: line 1: not JSON"
  bad collective empty.json "empty.json: no rows to plot"
  bad collective nobw.json "nobw.json/0: missing \"algbw_GBps\""
  bad collective strgpus.json "strgpus.json/0/gpus: expected a number, found \"16\""
  bad collective zero.json "zero.json/0/gpus: expected a positive GPU count, found 0"
  bad collective train.json "expected a JSON array of rows"
  echo '[{"algo": "hfreduce", "gpus": 16, "algbw_GBps": 8, "bytes": "1MiB"}]' > "$tmp/strbytes.json"
  bad collective strbytes.json "strbytes.json/0/bytes: expected a non-negative size in bytes, found \"1MiB\""
  bad train empty.json "expected an object with \"rows\""
  bad train train.json "--claim: expected GPUS:PERCENT (e.g. 128:95), found \"95\"" --claim 95
  bad train missing.json "missing.json: cannot read"
  bad plan noknob.json "noknob.json/0: missing \"knob\" or \"value\""
  bad plan noplan.json "noplan.json/0/plan: expected the plan of a design that fits"
  bad plan nofit.json "no design fits at any swept value"
  bad plan train.json "expected a JSON array of sweep rows"
  # Schema versions: another command's document, or a newer version, is refused by name.
  echo '{"schema_version": "ffsim.train/1", "rows": []}' > "$tmp/other.json"
  echo '{"schema_version": "ffsim.collective/2", "rows": []}' > "$tmp/newer.json"
  bad collective other.json "other.json/schema_version: expected \"ffsim.collective/1\""
  bad collective newer.json "newer.json/schema_version: ffsim.collective/2 is newer than this script reads"
  printf 'gpus,x\n1,2\n' > "$tmp/gpus.csv"
  bad plan gpus.csv "plan figures read the JSON"
  printf 'algo,gpus,bytes,algbw_Bps\nhfreduce,0,1,8e9\n' > "$tmp/zero.csv"
  bad collective zero.csv "zero.csv/0/gpus: expected a positive GPU count, found 0"
  expect 2 "required" -- "$PY" scripts/plot.py train "$tmp/train.json"
  [ -e "$tmp/x.png" ] && { echo "FAIL: a figure was written from bad input"; fail=1; }
else
  "$FF" collective scenarios/fire-flyer-2.json --algo hfreduce,nccl --gpus 16,32 --json > "$tmp/c.json" || fail=1
  "$FF" train scenarios/train-gpt2-fsdp.json --gpus 16,32 --collectives estimate --json > "$tmp/t.json" || fail=1
  "$PY" scripts/plot.py collective "$tmp/c.json" --envelope -o "$tmp/c.png" || fail=1
  # several sizes: busbw against the size (nccl-tests' curve)
  "$FF" collective scenarios/fire-flyer-2.json --algo hfreduce,nccl --gpus 16 --size 64KiB:4MiB --json > "$tmp/s.json" || fail=1
  "$PY" scripts/plot.py collective "$tmp/s.json" -o "$tmp/s.png" || fail=1
  "$PY" scripts/plot.py train "$tmp/t.json" --claim 32:95 -o "$tmp/t.png" || fail=1
  "$FF" plan scenarios/fire-flyer-2.json scenarios/dgx-a100-cluster.json --sweep gpus=1024,2048 --json > "$tmp/p.json" || fail=1
  "$PY" scripts/plot.py plan "$tmp/p.json" -o "$tmp/p.png" || fail=1
  # The same figures from --csv (SI units, as the JSON).
  "$FF" collective scenarios/fire-flyer-2.json --algo hfreduce,nccl --gpus 16,32 --csv > "$tmp/c.csv" || fail=1
  "$FF" train scenarios/train-gpt2-fsdp.json --gpus 16,32 --collectives estimate --csv > "$tmp/t.csv" || fail=1
  "$PY" scripts/plot.py collective "$tmp/c.csv" -o "$tmp/cc.png" || fail=1
  "$PY" scripts/plot.py train "$tmp/t.csv" -o "$tmp/tc.png" || fail=1
  for f in c s t p cc tc; do
    # a PNG: its 8-byte signature, and more than a few hundred bytes of picture
    if [ "$(head -c 8 "$tmp/$f.png" 2> /dev/null | od -An -tx1 | tr -d ' \n')" != 89504e470d0a1a0a ] ||
       [ "$(stat -c %s "$tmp/$f.png")" -lt 5000 ]; then
      echo "FAIL: $f.png is not a PNG figure"; fail=1
    fi
  done
fi
[ $fail = 0 ] && echo "ok"
exit $fail
