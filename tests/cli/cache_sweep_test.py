#!/usr/bin/env python3
"""scripts/cache-sweep.py: (1) on a planted sweep it recovers the transition it was given; (2) on the
committed Zen 5 sweep its effective LLC sizes give the CPU model's last_level_cache.
Usage: cache_sweep_test.py REPO_ROOT
SPDX-License-Identifier: Apache-2.0
"""
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

root = sys.argv[1]
script = os.path.join(root, "scripts", "cache-sweep.py")
MiB = 1 << 20


def run(path, *args):
    out = subprocess.run([sys.executable, script, path, *args], capture_output=True, text=True, check=True).stdout
    rows = {}
    for line in out.splitlines():
        m = re.match(r"(\S+)\s+(L1|L2|LLC)\s+\S+\s+\S+\s+(\d+)\s+([\d.]+)\s+([\d.]+) MiB\s+([\d.]+)\s+([\d.]+)$", line)
        if m:
            rows[(m[1], m[2])] = (int(m[3]), float(m[4]), float(m[5]), float(m[6]))
    return rows, out


# (1) A planted LLC transition: r = 1 / (h / 120 + (1 - h) / 40) GB/s with h = 1 / (1 + (x / 40 MiB)^2.5)
# between 0.6 C and 8 C of the 32 MiB the CPU model is said to have (19.2-256 MiB of working set), flat
# at 120 GB/s below and 40 GB/s above (so both plateaus are exact), sizes in steps of 2^(1/4) from 1 MiB
# of working set to 1 GiB. In log-odds the transition is the line s log x - s log C: the script's
# least-squares line recovers s = 2.5 and C = 40 MiB (the printed digits: 2.50, 40.000 MiB, 1.25 of 32).
C, s, lo, hi = 40 * MiB, 2.5, 0.6 * 32 * MiB, 8 * 32 * MiB
points = []
k = 0
while True:
    x = MiB * 2 ** (k / 4)
    if x > 1024 * MiB:
        break
    h = 1.0 if x <= lo else 0.0 if x >= hi else 1 / (1 + (x / C) ** s)
    r = 1 / (h / 120e9 + (1 - h) / 40e9)
    points.append({"stage": "copy", "variant": "kernel_regular", "threads": 1, "bytes": x / 2, "traffic_Bps": r})
    k += 1
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "planted.json")
    json.dump({"points": points}, open(path, "w"))
    rows, out = run(path, "--l1", "4KiB", "--l2", "8KiB", "--llc", "32MiB")
    got = rows.get(("kernel_regular", "LLC"))
    if not got or got[1] != 2.5 or abs(got[2] - 40.0) > 5e-4 or abs(got[3] - 1.25) > 5e-3:
        sys.exit(f"planted sweep: expected s 2.50 and C_eff 40.000 MiB (1.25 x 32), got {got}\n{out}")

# (1b) Noise, not a transition: rates that rise across the "transition" (the shares' log-odds fall with
# the working set, so the line's s is negative; a quick sweep on a busy CI machine gave s near 0 and
# C_eff = e^(mx - my / s) overflowed) say "no line" instead of failing. Between the plateaus (120 GB/s
# up to 0.6 C, 40 GB/s from 8 C) the rate climbs from 41 to 119 GB/s.
noisy = []
for p in points:
    x = 2 * p["bytes"]
    r = p["traffic_Bps"] if x <= lo or x >= hi else 41e9 + 78e9 * (x - lo) / (hi - lo)
    noisy.append(dict(p, traffic_Bps=r))
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "noisy.json")
    json.dump({"points": noisy}, open(path, "w"))
    rows, out = run(path, "--l1", "4KiB", "--l2", "8KiB", "--llc", "32MiB")
    if ("kernel_regular", "LLC") in rows or not re.search(r"kernel_regular\s+LLC .*no line: the shares do not fall", out):
        sys.exit(f"rising shares: expected no line for the LLC, got\n{out}")

# (2) The committed sweeps: on each machine the median of the three copies' effective LLC sizes is
# the CPU model's last_level_cache, to the MiB written there (the analysis starts from a cache size
# near the transition: the one the VM's CPUID reports is no plateau's edge on either machine).
checked = []
for sweep_file, cpu_file, l2, llc in (
    ("epyc-zen5-2c-vm-2026-12-07-wss.json", "epyc_zen5_2c_vm.json", "1MiB", "32MiB"),
    ("xeon-l3-480m-2c-vm-2026-12-07-wss.json", "xeon_l3_480m_2c_vm.json", "2MiB", "128MiB"),
):
    rows, out = run(os.path.join(root, "models", "measured", sweep_file), "--l1", "48KiB", "--l2", l2, "--llc", llc)
    effective = [rows[(k, "LLC")][2] for k in ("memcpy", "kernel_regular", "kernel_nt") if (k, "LLC") in rows]
    cpu = json.load(open(os.path.join(root, "models", "cpus", cpu_file)))
    written = cpu["last_level_cache"]["value"]
    if len(effective) != 3 or written != f"{round(statistics.median(effective))}MiB":
        sys.exit(f"models/cpus/{cpu_file}: last_level_cache {written}, the sweep's effective sizes {effective}\n{out}")
    checked.append(f"{sweep_file}: {effective} MiB, median {written}")
print("ok: planted s 2.50, C 40 MiB recovered; " + "; ".join(checked))
