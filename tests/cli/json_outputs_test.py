#!/usr/bin/env python3
"""Every command's --json parses and opens with its "schema_version" ("ffsim.<command>/1"), every
command of `ffsim --help` is among them (a new command without --json fails here), and where a
command also has --csv, the CSV is the JSON's rows: the same columns, the same values, SI units
(docs/outputs.md). Usage: json_outputs_test.py SOURCE_DIR FFSIM
SPDX-License-Identifier: Apache-2.0
"""
import csv
import io
import json
import re
import subprocess
import sys
import tempfile

root, ffsim = sys.argv[1], sys.argv[2]
failures = []


def run(args):
    p = subprocess.run([ffsim, "--models", "models"] + args, cwd=root, capture_output=True, text=True)
    if p.returncode != 0:
        failures.append(f"ffsim {' '.join(args)}: exit {p.returncode}: {p.stderr.strip()[:300]}")
        return None
    return p.stdout


tmp = tempfile.mkdtemp()
ci = ["models/measured/epyc-zen5-2c-vm-2026-11-30.json", "models/measured/epyc-zen5-2c-vm-2026-11-30-np2.json"]
SC = "scenarios/fire-flyer-2.json"
cases = {
    "check": [["check", SC, "models/gpus/a100_pcie_40gb.json", "--json"]],
    "models": [["models", "--json"], ["models", "--kind", "gpu", "--sources", "--json"]],
    "summary": [["summary", SC, "--json"], ["summary", "scenarios/epyc-zen5-2c-vm.json", "--json"]],
    "net": [["net", SC, "d2h", "--json"], ["net", SC, "pingpong", "--json"]],
    "collective": [["collective", SC, "--algo", "hfreduce,nccl", "--gpus", "16,32", "--json"],
                   ["collective", SC, "--algo", "hfreduce", "--gpus", "16", "--engine", "fluid", "--background",
                    "scenarios/backgrounds/checkpoint-storm-128-nodes.json", "--json"]],
    "plan": [["plan", SC, "scenarios/dgx-a100-cluster.json", "--json"],
             ["plan", "scenarios/pcie-3layer.json", "--sweep", "gpus=2000,4000", "--json"]],
    "calibrate": [["calibrate"] + ci + ["--node", "epyc_zen5_2c_vm", "-o", f"{tmp}/c.json", "--json"],
                  ["calibrate", "--kineto", "tests/data/kineto/small_trace.json.gz", "--gemm", "tests/data/kineto/gemm_planted.csv",
                   "--gpu", "a100_sxm4_40gb", "--json"]],
    "validate": [["validate"] + ci + ["--calibration", "models/calibrated/epyc_zen5_2c_vm.json", "--holdout", "0",
                                      "--engine", "analytic", "--json"]],
    "schema": [["schema", "--out", tmp, SC, "--json"]],
    "train": [["train", "scenarios/train-vgg16-ddp.json", "--gpus", "16,32", "--collectives", "estimate", "--json"]],
    "ops": [["ops", "scenarios/ops-fire-flyer-2.json", "--horizon", "2d", "--json"]],
    # sweep writes files; /dev/stdout is written as a stream (docs/commands/sweep.md).
    "sweep": [["sweep", SC, "--command", "collective", "--set", "/cluster/nodes=1,2", "--set", "/fabric/switch=qm8700",
               "--quiet", "--json", "/dev/stdout", "--", "--algo", "hfreduce", "--gpus", "16,8"]],
}

# Every subcommand ffsim lists is covered.
help_text = run(["--help"]) or ""
listed = set(re.findall(r"^  ([a-z]+)\s", help_text.split("Subcommands:", 1)[-1], re.M))
if not listed:
    failures.append("no subcommands found in ffsim --help")
for c in sorted(listed - set(cases)):
    failures.append(f"ffsim {c}: not covered by this test (does it have --json?)")

docs = {}
for command, runs in cases.items():
    for args in runs:
        out = run(args)
        if out is None:
            continue
        try:
            doc = json.loads(out)
        except json.JSONDecodeError as e:
            failures.append(f"ffsim {' '.join(args)}: not JSON: line {e.lineno}: {e.msg}")
            continue
        if not isinstance(doc, dict):
            failures.append(f"ffsim {' '.join(args)}: the top level is a {type(doc).__name__}, not an object")
            continue
        want = f"ffsim.{command}/1"
        if doc.get("schema_version") != want:
            failures.append(f"ffsim {' '.join(args)}: schema_version {doc.get('schema_version')!r}, want {want!r}")
        if list(doc)[:1] != ["schema_version"]:
            failures.append(f"ffsim {' '.join(args)}: schema_version is not the first key ({list(doc)[:3]})")
        docs[tuple(args)] = doc

# JSON/CSV agreement: the CSV's header is the JSON rows' keys, each value the same.
def as_csv_cell(v):
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    return v


def compare(json_args, csv_args, rows_of, extra=()):
    doc = docs.get(tuple(json_args))
    out = run(csv_args)
    if doc is None or out is None:
        return
    rows = rows_of(doc)
    got = list(csv.DictReader(io.StringIO(out)))
    name = "ffsim " + " ".join(csv_args)
    if len(got) != len(rows):
        failures.append(f"{name}: {len(got)} CSV rows, {len(rows)} JSON rows")
        return
    for i, (j, c) in enumerate(zip(rows, got)):
        keys = [k for k in c if k not in extra]
        if keys != [k for k in j if k not in extra]:
            failures.append(f"{name}: row {i}: CSV columns {keys}, JSON keys {list(j)}")
            continue
        for k in keys:
            a, b = as_csv_cell(j[k]), c[k]
            same = (float(b) == float(a)) if isinstance(a, (int, float)) and not isinstance(a, bool) else str(a) == b
            if not same:
                failures.append(f"{name}: row {i} {k}: CSV {b!r}, JSON {a!r}")


# wall_s is the run's own wall time: measured anew by each run, so not compared.
compare(cases["collective"][0], cases["collective"][0][:-1] + ["--csv"], lambda d: d["rows"], extra=("wall_s",))
compare(cases["collective"][1], cases["collective"][1][:-1] + ["--csv"], lambda d: d["rows"])
compare(cases["net"][0], cases["net"][0][:-1] + ["--csv"], lambda d: d["rows"])
compare(cases["train"][0], cases["train"][0][:-1] + ["--csv"], lambda d: d["rows"], extra=("scenario", "backend"))
compare(cases["models"][0], ["models", "--csv"], lambda d: d["entries"])
sweep_csv = [("--csv" if a == "--json" else a) for a in cases["sweep"][0]]
compare(cases["sweep"][0], sweep_csv, lambda d: d["rows"])

# One unit per column: a quantity's key names its SI unit, and no value in JSON is a string with a
# unit where a number belongs (e.g. "8.04 ms").
unit_key = re.compile(r"_(GBps|MBps|TBps|ms|us|ns|GiB|MiB|KiB|GB|MB|kW|MW|tflops|TFLOPS|gflops)$")
def walk(v, where):
    if isinstance(v, dict):
        for k, x in v.items():
            if unit_key.search(k):
                failures.append(f"{where}/{k}: a key in a non-SI unit (docs/outputs.md: SI base units)")
            walk(x, f"{where}/{k}")
    elif isinstance(v, list):
        for i, x in enumerate(v):
            walk(x, f"{where}/{i}")
for args, doc in docs.items():
    walk(doc, "ffsim " + " ".join(args))

if failures:
    print("\n".join(failures))
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print(f"json outputs: {len(docs)} documents of {len(cases)} commands, all with schema_version; CSV agrees")
