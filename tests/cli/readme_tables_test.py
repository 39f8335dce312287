#!/usr/bin/env python3
# The main results table (docs/results.md: the 184 MiB allreduce on Fire-Flyer 2) against what ffsim
# prints now: each cell must be the current prediction at the digits printed. A model change that
# moves a figure fails here until the table is updated with it (an audit on 2026-12-01 found 13
# documented figures left behind by model changes).
# Usage: readme_tables_test.py <repository root> <ffsim binary> [--fluid]
#   without --fluid: the closed-form columns (instant); with it: the fluid engine's columns (whole
#   schedules up to 1,440 GPUs, about 13 s on 2 cores).
# SPDX-License-Identifier: Apache-2.0
import json
import re
import subprocess
import sys

root, ffsim = sys.argv[1], sys.argv[2]
fluid = "--fluid" in sys.argv[3:]
DOC = "docs/results.md"
readme = open(f"{root}/{DOC}", encoding="utf-8").read()
start = readme.index("Predictions for the 184 MiB allreduce")
header = "| GPUs | hfreduce closed form | hfreduce fluid | nccl closed form | nccl fluid | paper |"
table = readme.index(header, start)
rows = []
for line in readme[table:].splitlines()[2:]:
    if not line.startswith("|"):
        break
    cells = [c.strip() for c in line.strip("|").split("|")]
    rows.append((int(cells[0].replace(",", "")), cells[2], cells[4]) if fluid else
                (int(cells[0].replace(",", "")), cells[1], cells[3]))
if len(rows) < 2:
    sys.exit(f"{DOC}: the table after '{header}' has {len(rows)} rows")

gpus = ",".join(str(g) for g, _, _ in rows)
engine = ["--engine", "fluid"] if fluid else []
out = subprocess.run([ffsim, "collective", "scenarios/fire-flyer-2.json", "--algo", "hfreduce,nccl", "--gpus", gpus,
                      "--json"] + engine, cwd=root, capture_output=True, text=True, check=True).stdout
# schema ffsim.collective/1: {"rows": [...]}, algbw in B/s (SI)
now = {(r["algo"], r["gpus"]): r["algbw_Bps"] / 1e9 for r in json.loads(out)["rows"]}

failures = []
for g, hf, nccl in rows:
    for algo, cell in (("hfreduce", hf), ("nccl", nccl)):
        m = re.match(r"([0-9]+\.([0-9]+))", cell)
        if not m:
            failures.append(f"{g} GPUs, {algo}: cannot read {cell!r}")
            continue
        printed = f"{now[(algo, g)]:.{len(m.group(2))}f}"
        if printed != m.group(1):
            failures.append(f"{g} GPUs, {algo} {'fluid' if fluid else 'closed form'}: {DOC} says {m.group(1)} GB/s, "
                            f"ffsim prints {printed}")
for f in failures:
    print("FAIL:", f)
print(f"{2 * len(rows)} {'fluid' if fluid else 'closed-form'} cells of {DOC}'s 184 MiB allreduce table checked, "
      f"{len(failures)} differ")
sys.exit(1 if failures else 0)
