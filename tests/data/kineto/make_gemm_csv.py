#!/usr/bin/env python3
"""Writes gemm_planted.csv: GEMM rates computed (independently of ffsim) from planted values of the
shape model, for `ffsim calibrate --gemm` to give back: tile 128x128, 108 SMs, peaks fp16 312 and
tf32 156 TFLOPS (models/gpus/a100_sxm4_40gb.json), ceilings fp16 0.81, tf32 0.73 on the "A100" rows
(no form factor stated: the --gpu model's, sxm) and fp16 0.70, tf32 0.64 on the "A100 PCIe" rows,
3.5 us a wave, 6 us a GEMM."""
import math

SMS, TILE = 108, 128
PEAK = {"fp16": 312e12, "tf32": 156e12}
CEIL = {"A100": {"fp16": 0.81, "tf32": 0.73}, "A100 PCIe": {"fp16": 0.70, "tf32": 0.64}}
WAVE, LAUNCH = 3.5e-6, 6e-6
shapes = [(256, 256, 256), (1000, 1000, 1000), (1536, 1536, 1536), (2048, 2048, 512), (4096, 4096, 4096),
          (8192, 1024, 16384), (3000, 5000, 700), (128, 13952, 2048)]
rows = ["source,gpu,dtype,M,N,K,tflops,pct_peak,stat,software,kind"]
for src, gpu, kmul in (("planted/a", "A100", 1), ("planted/b", "A100", 2), ("planted/c", "A100 PCIe", 1)):
    for prec in ("fp16", "tf32"):
        for m, n, k in shapes:
            k *= kmul
            waves = math.ceil(math.ceil(m / TILE) * math.ceil(n / TILE) / SMS)
            t = waves * (2 * TILE * TILE * k * SMS / (CEIL[gpu][prec] * PEAK[prec]) + WAVE) + LAUNCH
            tf = 2 * m * n * k / t / 1e12
            rows.append(f"{src} make_gemm_csv.py,{gpu},{prec},{m},{n},{k},{tf:.12g},{100 * tf * 1e12 / PEAK[prec]:.3f},planted,none,planted")
open("gemm_planted.csv", "w").write("\n".join(rows) + "\n")
