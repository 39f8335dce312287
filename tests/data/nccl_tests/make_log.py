#!/usr/bin/env python3
"""Writes a synthetic nccl-tests all_reduce_perf log, in nccl-tests' own format, whose times come
from a stated model: NCCL's ring on n ranks, time = 2(n-1) x LAT + 2(n-1)/n x bytes / BUS.
`ffsim calibrate` on it must recover LAT and BUS (to the digits the log prints).

Usage: make_log.py HOSTS GPUS_PER_HOST BUS_GBPS LAT_US > log
SPDX-License-Identifier: Apache-2.0
"""
import sys

hosts = sys.argv[1].split(",")
per = int(sys.argv[2])
bus = float(sys.argv[3]) * 1e9
lat = float(sys.argv[4]) * 1e-6
n = len(hosts) * per
print("# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 4(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0")
print("#")
print(f"# (synthetic: time = 2(n-1) x {sys.argv[4]} us + 2(n-1)/n x bytes / {sys.argv[3]} GB/s, n = {n}; "
      f"tests/data/nccl_tests/make_log.py {' '.join(sys.argv[1:])})")
print("# Using devices")
r = 0
for h in hosts:
    for d in range(per):
        print(f"#  Rank {r:2d} Group  0 Pid {41000 + r:6d} on {h:>10s} device {d:2d} [0x{0x07 + 4 * d:02x}] NVIDIA A100-SXM4-80GB")
        r += 1
print("#")
print("#                                                              out-of-place                       in-place          ")
print("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong")
print("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       ")


def tstr(us):
    return f"{us:7.0f}" if us >= 10000 else f"{us:7.1f}" if us >= 100 else f"{us:7.2f}"


busbws = []
size = 8
while size <= 8 << 30:
    t = 2 * (n - 1) * lat + 2 * (n - 1) / n * size / bus
    us = t * 1e6
    alg = size / t / 1e9
    b = alg * 2 * (n - 1) / n
    busbws.append(b)
    cols = f"  {tstr(us)}  {alg:6.2f}  {b:6.2f}  {0:5d}"
    print(f"{size:12d}  {size // 4:12d}  {'float':>8s}  {'sum':>6s}  {-1:6d}{cols}{cols}")
    size *= 4
print("# Out of bounds values : 0 OK")
print(f"# Avg bus bandwidth    : {sum(busbws) / len(busbws):.4f} ")
print("#")
