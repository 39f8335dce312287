#!/usr/bin/env python3
"""The caches' transitions from a one-thread working-set sweep (hfreduce-bench --stages copy --k 1
--threads 1 --sizes <fine steps>, e.g. models/measured/epyc-zen5-2c-vm-2026-12-07-wss.json).

For each copy kind and each cache level C (the CPU model's L1d, L2 and last-level cache), the share
of a working set of x bytes (2 x the bytes copied) served by the cache rather than by the next level is
    f(x) = (1 / r(x) - 1 / r_next) / (1 / r_cache - 1 / r_next)
with r the measured traffic rate and r_cache, r_next the plateaus on either side (the median rate of the
points between 0.25 C and 0.6 C, and between 2.5 C and 0.6 of the next level's size, or beyond 8 C for
the LLC, whose next level is DRAM). The model's share h(x) = 1 / (1 + (x / C)^s) is a line in log-odds,
log(1 / f - 1) = s log x - s log C, so a least-squares line through the points with 0.05 < f < 0.95
(at least 4 of them) gives the exponent s and the effective size C (where h = 1/2); with C held at the
CPU model's size, s alone. Plateaus that are not flat (the Zen 5 VM's L1 and L2) make the shares, and
so the line, say little: read the rates themselves there. Usage: scripts/cache-sweep.py SWEEP.json --l1 48KiB --l2 1MiB --llc 32MiB
SPDX-License-Identifier: Apache-2.0
"""
import argparse
import json
import math
import statistics
import sys


def size(text):
    units = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "B": 1}
    for u, m in units.items():
        if text.endswith(u):
            return float(text[: -len(u)]) * m
    return float(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("sweep")
    ap.add_argument("--l1", type=size, required=True)
    ap.add_argument("--l2", type=size, required=True)
    ap.add_argument("--llc", type=size, required=True)
    a = ap.parse_args()
    d = json.load(open(a.sweep))
    kinds = {}
    for p in d["points"]:
        if p["stage"] == "copy" and p["threads"] == 1:
            kinds.setdefault(p["variant"], []).append((2 * p["bytes"], p["traffic_Bps"]))
    if not kinds:
        sys.exit(f"{a.sweep}: no one-thread copy points")
    levels = [("L1", a.l1, a.l2), ("L2", a.l2, a.llc), ("LLC", a.llc, None)]
    print(f"{a.sweep}: one-thread copies, working set x = 2 x bytes copied")
    print(f"{'kind':15s} {'level':5s} {'r_cache':>8s} {'r_next':>8s} {'points':>6s} {'s':>6s} {'C_eff':>10s} {'C_eff/C':>7s} {'s at C':>7s}")
    for kind in sorted(kinds):
        pts = sorted(kinds[kind])

        def plateau(lo, hi):
            v = [r for x, r in pts if lo <= x <= hi]
            return statistics.median(v) if v else float("nan")

        for name, C, nxt in levels:
            r_c = plateau(0.25 * C, 0.6 * C)
            r_n = plateau(2.5 * C, 0.6 * nxt) if nxt else plateau(8 * C, float("inf"))
            xs, ys = [], []
            for x, r in pts:
                if x < 0.25 * C or (nxt and x > 0.6 * nxt):
                    continue
                f = (1 / r - 1 / r_n) / (1 / r_c - 1 / r_n)
                if 0.05 < f < 0.95:
                    xs.append(math.log(x))
                    ys.append(math.log(1 / f - 1))
            # Fewer than 4 points inside the transition: at 2^(1/4) steps that is an exponent of
            # about 8 or more (a step), or plateaus too uneven to place it: no line is fitted.
            if len(xs) < 4 or not r_c > r_n:
                print(f"{kind:15s} {name:5s} {r_c / 1e9:8.1f} {r_n / 1e9:8.1f} {len(xs):6d}  (no line: a step, or no faster cache rate)")
                continue
            mx, my = statistics.fmean(xs), statistics.fmean(ys)
            sxx = sum((x - mx) ** 2 for x in xs)
            s = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
            # A cache's share falls as the working set grows (s > 0); a flat or rising line is noise
            # (a quick sweep on a busy machine gave s near 0, and C_eff = e^(mx - my / s) overflowed).
            if not s > 0 or abs(mx - my / s) > 700:
                print(f"{kind:15s} {name:5s} {r_c / 1e9:8.1f} {r_n / 1e9:8.1f} {len(xs):6d} {s:6.2f}  (no line: the shares do not fall with the working set)")
                continue
            c_eff = math.exp(mx - my / s)
            # C held at the CPU model's: the least-squares s of y = s (x - log C)
            lc = math.log(C)
            s_at = sum((x - lc) * y for x, y in zip(xs, ys)) / sum((x - lc) ** 2 for x in xs)
            print(f"{kind:15s} {name:5s} {r_c / 1e9:8.1f} {r_n / 1e9:8.1f} {len(xs):6d} {s:6.2f} {c_eff / (1 << 20):8.3f} MiB {c_eff / C:7.2f} {s_at:7.2f}")


if __name__ == "__main__":
    main()
