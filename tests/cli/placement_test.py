#!/usr/bin/env python3
"""--placement: the exact shortcuts stay exact (the same times as --full, to rounding) under every
placement, on both GPU-node kinds and in training steps; the JSON names the placement; packed is the default and
leaves the output as it was.  Usage: placement_test.py FFSIM SOURCE_DIR"""
# SPDX-License-Identifier: Apache-2.0
import csv
import io
import json
import subprocess
import sys

ffsim, src = sys.argv[1], sys.argv[2]
algos = "allgather,alltoall,broadcast,hf_allgather,hf_reduce_scatter,hfreduce,nccl,nccl_ring,nccl_tree,reduce_scatter"


def run(*args):
    r = subprocess.run([ffsim, *args], cwd=src, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        sys.exit(f"ffsim {' '.join(args)}: exit {r.returncode}\n{r.stderr}")
    return r.stdout


def rows(*args):
    return list(csv.DictReader(io.StringIO(run(*args, "--csv"))))


failures = []
# 16 (2 whole nodes), 24 (3), 40 (5 nodes: an odd count): small cases where --full is cheap.
for scen, placements in [("scenarios/fire-flyer-2.json", ["spread", "random:5", "cross-zone:0.25", "cross-zone"]),
                         ("scenarios/dgx-a100-cluster.json", ["spread", "random:5"])]:
    for pl in placements:
        base = ["collective", scen, "--algo", algos, "--gpus", "16,24,40", "--engine", "fluid", "--placement", pl]
        fast, full = rows(*base), rows(*base, "--full")
        if len(fast) != 30 or len(full) != 30:
            failures.append(f"{scen} {pl}: expected 30 rows (10 algorithms x 3 sizes), got {len(fast)} and {len(full)}")
            continue
        for a, b in zip(fast, full):
            ta, tb = float(a["time_s"]), float(b["time_s"])
            # Exact up to the order of floating-point sums: 1e-9 relative.
            if abs(ta / tb - 1) > 1e-9:
                failures.append(f"{scen} {pl} {a['algo']} {a['gpus']} GPUs: shortcut {ta} s, --full {tb} s")
            want = "cross-zone:0.5" if pl == "cross-zone" else pl
            if a.get("placement") != want:
                failures.append(f"{scen} {pl}: placement column {a.get('placement')!r}")

# Training steps: the representative GPUs stand for all under every placement (3 nodes of
# fire-flyer-2, and 4 for the pipeline's 4 stages), the step time as --full's to 1e-9.
for scen, gpus in [("scenarios/train-vgg16-ddp.json", "24"), ("scenarios/train-gpt2-fsdp.json", "24"),
                   ("scenarios/train-llama13b-pp.json", "32"), ("scenarios/train-moe16b.json", "40")]:
    for pl in ["spread", "random:5", "cross-zone"]:
        base = ["train", scen, "--gpus", gpus, "--placement", pl]
        a, b = rows(*base), rows(*base, "--full")
        ta, tb = float(a[0]["step_s"]), float(b[0]["step_s"])
        if abs(ta / tb - 1) > 1e-9:
            failures.append(f"{scen} {pl} {gpus} GPUs: step {ta} s, --full {tb} s")

# The JSON carries the placement; without --placement there is no placement key (the columns of
# before), and --cross-zone is cross-zone:0.5.
j = json.loads(run("collective", "scenarios/fire-flyer-2.json", "--algo", "nccl", "--gpus", "16", "--engine", "fluid",
                   "--placement", "random:3", "--json"))
r = j["rows"][0]
if r.get("placement") != "random:3" or r.get("cross_zone") is not False:
    failures.append(f"JSON row: placement {r.get('placement')!r}, cross_zone {r.get('cross_zone')!r}")
j = json.loads(run("collective", "scenarios/fire-flyer-2.json", "--algo", "nccl", "--gpus", "16", "--engine", "fluid",
                   "--json"))
if "placement" in j["rows"][0]:
    failures.append("a packed (default) row has a placement key")
j = json.loads(run("collective", "scenarios/fire-flyer-2.json", "--algo", "nccl", "--gpus", "16", "--engine", "fluid",
                   "--cross-zone", "--json"))
r = j["rows"][0]
if r.get("placement") != "cross-zone:0.5" or r.get("cross_zone") is not True:
    failures.append(f"--cross-zone JSON row: placement {r.get('placement')!r}, cross_zone {r.get('cross_zone')!r}")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("placement: shortcuts exact under spread, random, cross-zone on fire-flyer-2 and dgx-a100-cluster")
