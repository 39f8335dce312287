#!/usr/bin/env python3
# Every fact in models/ whose source is a point of a committed measurement
# ("models/measured/<file>.json:/points/<i>: ...") has the value that point gives by the rule its
# kind of fact names, rounded to the digits written (within half a unit of the last one). A value
# typed by hand from the wrong point, the wrong statistic or the wrong formula, or rounded the wrong
# way, fails here.
# Usage: measured_facts_test.py <repository root>
# SPDX-License-Identifier: Apache-2.0
import json
import os
import re
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else "."
UNITS = {"GB/s": 1e9, "MB/s": 1e6, "us": 1e-6, "ms": 1e-3, "s": 1.0, "ns": 1e-9}
# A measured point anywhere in the source: "models/measured/x.json:/points/434: ..." or "... the rate
# of models/measured/x.json:/points/434" (until 2026-12-01 only a source that began with the point
# was checked, and four facts that cite one mid-sentence went unchecked; two were misrounded).
SOURCE = re.compile(r"(models/measured/[A-Za-z0-9_.-]+\.json):/points/(\d+)(?![0-9])")


def read_value(text):
    """A value as written, in SI, and the SI size of one unit in its last written digit:
    "37.4GB/s" -> (37.4e9, 0.1e9), "16us" -> (16e-6, 1e-6)."""
    m = re.fullmatch(r"([0-9]*)(?:\.([0-9]+))?(?:e([-+]?\d+))?\s*([A-Za-z/]+)", text)
    if not m or not (m.group(1) or m.group(2)) or m.group(4) not in UNITS:
        raise ValueError("cannot read the value " + repr(text))
    unit = UNITS[m.group(4)]
    number = text[: m.end(3) if m.group(3) else (m.end(2) if m.group(2) else m.end(1))]
    return float(number) * unit, 10.0 ** (int(m.group(3) or 0) - len(m.group(2) or "")) * unit


def t(p):
    return p["time_s"]["median"]


# What each kind of fact is, from its point (the rule its source states).
RULES = {
    "dram_bandwidth": ("copy", lambda p: 2 * p["bytes"] / t(p)),          # bytes read plus written
    "memory_bandwidth": ("copy", lambda p: 2 * p["bytes"] / t(p)),
    "pcie_bandwidth": ("d2h", lambda p: p["bytes"] / t(p)),               # one copy thread
    "duplex_bandwidth": ("bidir", lambda p: 2 * p["bytes"] / t(p)),       # both directions at once
    "bidirectional_bandwidth": ("bidir", lambda p: 2 * p["bytes"] / t(p)),  # the same, a cap only then
    "reduce_bandwidth_per_core": ("reduce", lambda p: p["k"] * p["bytes"] / t(p) / p["threads"]),
    "pcie_latency": ("d2h", t),                                          # a small copy: its time
    "effective_bandwidth": ("internode", lambda p: p["bytes"] / t(p)),    # 2 x S/2 per rank
    "latency": ("internode", lambda p: t(p) / 2),                        # one message up, one down
    "gpu_gpu_p2p_bandwidth": ("d2h", lambda p: p["bytes"] / t(p)),       # a memcpy by one copy thread
    "ports/bandwidth": ("d2h", lambda p: 2 * p["bytes"] / t(p)),          # the 2 cores' copy threads
}


def rule_key(pointer):
    """The kind of fact at a JSON pointer: its last key, or "ports/bandwidth" for a port's bandwidth."""
    if re.search(r"/ports/\d+/bandwidth$", pointer):
        return "ports/bandwidth"
    return pointer.rsplit("/", 1)[-1]

failures = []
checked = 0
cache = {}


def check(rel, pointer, node, m):
    """One fact whose source is measured point m: its value against the point's, by its kind's rule."""
    global checked
    key = rule_key(pointer)
    if key not in RULES:
        failures.append(f"{rel}:{pointer}: no rule for a measured '{key}' (add one to this test)")
        return
    stage, rule = RULES[key]
    if m.group(1) not in cache:
        with open(os.path.join(ROOT, m.group(1))) as f:
            cache[m.group(1)] = json.load(f)
    points = cache[m.group(1)]["points"]
    index = int(m.group(2))
    if index >= len(points):
        failures.append(f"{rel}:{pointer}: {m.group(1)} has {len(points)} points, no /points/{index}")
        return
    point = points[index]
    if point["stage"] != stage:
        failures.append(f"{rel}:{pointer}: {m.group(1)}:/points/{index} is a {point['stage']} point, "
                        f"a {key} comes from a {stage} point")
        return
    want = rule(point)
    got, last_digit = read_value(str(node["value"]))
    checked += 1
    # The value as written is the point's, rounded to the digits written: within half a unit of
    # its last digit ("37.4GB/s" holds 37.35-37.45 GB/s; 37.46 is written 37.5).
    half = 0.5 * last_digit
    if abs(got - want) > half * (1 + 1e-9):
        failures.append(f"{rel}:{pointer}: value {node['value']}, but {m.group(1)}:/points/{index} gives "
                        f"{want:.4g} (SI): not that rounded to the digits written")


def visit(rel, node, pointer):
    if isinstance(node, dict):
        src = node.get("source")
        if isinstance(src, str) and "value" in node:
            m = SOURCE.search(src)
            if m:
                check(rel, pointer, node, m)
                return
        for k, v in node.items():
            visit(rel, v, pointer + "/" + k)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            visit(rel, v, pointer + "/" + str(i))


for dirpath, _, names in sorted(os.walk(os.path.join(ROOT, "models"))):
    if os.path.basename(dirpath) in ("measured", "calibrated"):  # the measurements and fits themselves
        continue
    for name in sorted(names):
        if name.endswith(".json"):
            path = os.path.join(dirpath, name)
            with open(path) as f:
                visit(os.path.relpath(path, ROOT), json.load(f), "")

for line in failures:
    print("FAIL:", line)
print(f"{checked} facts taken from measured points checked, {len(failures)} failures")
sys.exit(1 if failures or checked == 0 else 0)
