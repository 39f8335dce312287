#!/usr/bin/env python3
"""ffsim ops --csv is the --json document's numbers, row for row (docs/commands/ops.md, "Outputs"):
for each result (with checkpoints, without), a cluster row, a row per job and one per failure
process; the checkpoint sweep's points and its three intervals. The rows expected are built here
from the JSON document, independently of the C++ that writes the CSV. And --trace FILE: the same
bytes for the same seed, other bytes for another, the stdout unchanged by it, each failure an
instant on its process's track. Usage: ops_outputs_test.py SOURCE_DIR FFSIM
SPDX-License-Identifier: Apache-2.0
"""
import csv
import io
import json
import os
import subprocess
import sys
import tempfile

root, ffsim = sys.argv[1], sys.argv[2]
failures = []
BASE = ["ops", "scenarios/ops-fire-flyer-2.json", "--jobs", "tests/data/cli/ops-jobs.json", "--horizon", "4d",
        "--without-checkpoints", "--checkpoint-sweep", "big", "--sweep-seeds", "1"]


def run(args):
    p = subprocess.run([ffsim, "--models", "models"] + args, cwd=root, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"ffsim {' '.join(args)}: exit {p.returncode}: {p.stderr.strip()[:400]}")
    return p.stdout


doc = json.loads(run(BASE + ["--json"]))
got = list(csv.DictReader(io.StringIO(run(BASE + ["--csv"]))))
procs = [f["name"] for f in doc["result"]["failures"]]


def gpu_s(g):
    row = {"useful_gpu_s": g["useful"], "checkpoint_gpu_s": g["checkpoint"], "restart_gpu_s": g["restart"],
           "lost_gpu_s": g["lost_total"]}
    row.update({f"lost_{p}_gpu_s": g["lost"][p] for p in procs})
    return row


want = []
for which in ("result", "without_checkpoints"):
    res = doc[which]
    label = "with_checkpoints" if which == "result" else which
    c = {"result": label, "kind": "cluster", "name": "all", "gpus": doc["nodes"] * doc["gpus_per_node"],
         "goodput": res["goodput"], "utilisation": res["utilisation"],
         "checkpoint_overhead": res["checkpoint_overhead"], "idle_gpu_s": res["gpu_s"]["idle"],
         "down_gpu_s": res["gpu_s"]["down"], "total_gpu_s": res["gpu_s"]["total"],
         "queued_at_end": res["queued_at_end"], "running_at_end": res["running_at_end"]}
    c.update(gpu_s(res["gpu_s"]))
    want.append(c)
    for j in res["jobs"]:
        g = j["gpu_s"]
        busy = g["useful"] + g["checkpoint"] + g["restart"] + g["lost_total"]
        r = {"result": label, "kind": "job", "name": j["name"], "gpus": j["gpus"],
             "efficiency": g["useful"] / busy if busy > 0 else None}
        for k in ("submitted", "started", "completed", "interrupted", "checkpoints", "starts", "mean_wait_s",
                  "max_wait_s"):
            r[k] = j[k]
        r.update(gpu_s(g))
        want.append(r)
    for f in res["failures"]:
        r = {"result": label, "kind": "failure", "name": f["name"], "lost_gpu_s": res["gpu_s"]["lost"][f["name"]]}
        for k in ("events", "on_down_nodes", "job_runs_ended", "repairs"):
            r[k] = f[k]
        want.append(r)
s = doc["checkpoint_sweep"]
for pt in s["points"]:
    want.append({"result": "checkpoint_sweep", "kind": "sweep_point", "name": s["job"], "seeds": s["seeds"],
                 "interval_s": pt["interval_s"], "efficiency": pt["efficiency"]})
for kind, key in (("best", "best_s"), ("fit_best", "fit_best_s"), ("young_daly", "young_daly_s")):
    want.append({"result": "checkpoint_sweep", "kind": kind, "name": s["job"], "seeds": s["seeds"],
                 "interval_s": s[key], "checkpoint_cost_s": s["checkpoint_cost_s"], "mtbf_s": s["mtbf_s"]})

# 2 results x (1 + 2 jobs + 10 processes) + 13 points + 3 intervals = 42 rows.
if len(want) != 42:
    failures.append(f"expected rows: {len(want)}, the derivation says 42")
if len(got) != len(want):
    failures.append(f"{len(got)} CSV rows, {len(want)} from the JSON")
columns = list(got[0]) if got else []
for i, (w, c) in enumerate(zip(want, got)):
    for k in columns:
        v = w.get(k)
        if v is None:
            if c[k] != "":
                failures.append(f"row {i} ({w['kind']} {w['name']}) {k}: CSV {c[k]!r}, expected empty")
        elif isinstance(v, str):
            if c[k] != v:
                failures.append(f"row {i} {k}: CSV {c[k]!r}, JSON {v!r}")
        elif c[k] == "" or float(c[k]) != float(v):
            failures.append(f"row {i} ({w['kind']} {w['name']}) {k}: CSV {c[k]!r}, JSON {v!r}")
    extra = set(w) - set(columns)
    if extra:
        failures.append(f"row {i}: JSON values without a CSV column: {sorted(extra)}")

# --trace: deterministic bytes, the seed matters, stdout as without it.
tmp = tempfile.mkdtemp()
T = ["ops", "scenarios/ops-fire-flyer-2.json", "--jobs", "tests/data/cli/ops-jobs.json", "--horizon", "6d"]
a, b, c = (os.path.join(tmp, n) for n in ("a.json", "b.json", "c.json"))
out_a = run(T + ["--json", "--trace", a])
run(T + ["--json", "--trace", b])
run(T + ["--json", "--trace", c, "--seed", "2"])
if out_a != run(T + ["--json"]):
    failures.append("--trace changed the --json output")
ta, tb, tc = (open(x, "rb").read() for x in (a, b, c))
if ta != tb:
    failures.append("--trace: the same seed wrote different bytes")
if ta == tc:
    failures.append("--trace: seeds 1 and 2 wrote the same bytes")
tr = json.loads(ta)
names = {e["args"]["name"] for e in tr["traceEvents"] if e.get("name") == "process_name"}
if names != {"jobs", "failures", "repairs"} and names != {"jobs", "failures"}:
    failures.append(f"--trace: processes {sorted(names)}")
instants = [e for e in tr["traceEvents"] if e.get("ph") == "i"]
events = sum(f["events"] for f in json.loads(out_a)["result"]["failures"])
if len(instants) != events:
    failures.append(f"--trace: {len(instants)} failure instants, the run drew {events} failures")
if events < 10:
    failures.append(f"--trace: only {events} failures in 6 days (the test needs some)")

# The output policy (docs/outputs.md, "Writing files"): a run that fails leaves the file as it was,
# and a folder that does not exist is refused before the simulation.
old = os.path.join(tmp, "old.json")
open(old, "w").write("an earlier trace\n")
p = subprocess.run([ffsim, "--models", "models", "ops", "scenarios/ops-fire-flyer-2.json", "--jobs",
                    "tests/data/cli/ops-workload-bad-gpus.json", "--trace", old], cwd=root, capture_output=True, text=True)
if p.returncode != 3 or open(old).read() != "an earlier trace\n":
    failures.append(f"--trace over a failing run: exit {p.returncode}, the old file {'kept' if open(old).read() == 'an earlier trace' + chr(10) else 'changed'}")
p = subprocess.run([ffsim, "--models", "models", "ops", "scenarios/ops-fire-flyer-2.json", "--horizon", "1d", "--trace",
                    os.path.join(tmp, "nowhere", "t.json")], cwd=root, capture_output=True, text=True)
if p.returncode != 2 or "--trace" not in p.stderr:
    failures.append(f"--trace into a missing folder: exit {p.returncode}: {p.stderr.strip()[:200]}")

# Link failures (docs/commands/ops.md, "Links down"): the link_down state and the links_down counts
# are in the text, the JSON and the CSV only with a link process (the outputs above have none), the
# CSV's values are the JSON's, the states still sum to GPUs x horizon, and the trace has a "links"
# process with one slice per link down.
if "link_down" in doc["result"]["gpu_s"] or "link_down_gpu_s" in columns or "links_down" in columns:
    failures.append("a scenario without a link process has link-down outputs")
if "link down" in run(T):
    failures.append("a scenario without a link process has a link-down row in its text report")
L = ["ops", "tests/data/cli/ops-link-flash.json", "--horizon", "60d"]
ldoc = json.loads(run(L + ["--json"]))
lrows = {(r["kind"], r["name"]): r for r in csv.DictReader(io.StringIO(run(L + ["--csv"])))}
lg = ldoc["result"]["gpu_s"]
lf = ldoc["result"]["failures"][0]
if not lg.get("link_down", 0) > 0 or not lf.get("links_down", 0) > 0:
    failures.append(f"the link scenario: link_down {lg.get('link_down')}, links_down {lf.get('links_down')}")
elif float(lrows[("cluster", "all")]["link_down_gpu_s"]) != lg["link_down"] or \
        int(lrows[("failure", lf["name"])]["links_down"]) != lf["links_down"]:
    failures.append("the link scenario: the CSV's link_down_gpu_s or links_down is not the JSON's")
states = lg["useful"] + lg["checkpoint"] + lg["restart"] + lg["lost_total"] + lg["idle"] + lg["down"] + lg["link_down"]
whole = ldoc["nodes"] * ldoc["gpus_per_node"] * ldoc["horizon_s"]
if abs(states - whole) > 1e-9 * whole or abs(lg["total"] - whole) > 1e-9 * whole:
    failures.append(f"the link scenario: states sum to {states}, total {lg['total']}, GPUs x horizon {whole}")
if "link down" not in run(L):
    failures.append("the link scenario's text report has no link-down row")
lt = os.path.join(tmp, "links.json")
run(L + ["--trace", lt])
ltr = json.loads(open(lt, "rb").read())
lnames = {e["args"]["name"] for e in ltr["traceEvents"] if e.get("name") == "process_name"}
lslices = [e for e in ltr["traceEvents"] if e.get("cat") == "link_down"]
if "links" not in lnames or len(lslices) != lf["links_down"]:
    failures.append(f"the link scenario's trace: processes {sorted(lnames)}, {len(lslices)} link-down slices, "
                    f"{lf['links_down']} links down")

# Step times from workloads: the step of `ffsim train` on the same cluster, GPU count and
# collective estimates, bit for bit; the same shape twice (vgg16-ddp, vgg16-ddp-b) the same step.
W = ["ops", "scenarios/ops-fire-flyer-2.json", "--jobs", "tests/data/cli/ops-workloads.json", "--horizon", "1d", "--json"]
steps = {s["job"]: s for s in json.loads(run(W))["step_times"]}
for job, wl in (("llama13b-pp", "train-llama13b-pp"), ("vgg16-ddp", "train-vgg16-ddp")):
    tr = json.loads(run(["train", "scenarios/fire-flyer-2.json", "--workload", f"scenarios/{wl}.json", "--gpus", "512",
                         "--collectives", "estimate", "--json"]))
    if tr["rows"][0]["step_s"] != steps[job]["step_s"]:
        failures.append(f"{job}: ops step {steps[job]['step_s']!r} s, train {tr['rows'][0]['step_s']!r} s")
if steps["vgg16-ddp"]["step_s"] != steps["vgg16-ddp-b"]["step_s"]:
    failures.append("the same workload and GPU count gave two step times")
if steps["vgg16-ddp-b"]["checkpoint_bytes"] is not None:
    failures.append("vgg16-ddp-b gives its checkpoint cost: no checkpoint_bytes expected")

for f in failures:
    print("FAIL:", f)
print(f"ops outputs: {len(got)} CSV rows checked against the JSON, {len(instants)} failure instants; "
      f"{len(failures)} failures")
sys.exit(1 if failures else 0)
