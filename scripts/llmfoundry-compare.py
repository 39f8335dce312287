#!/usr/bin/env python3
"""ffsim train against llm-foundry's MPT benchmark rows on A100 80 GB (for looking at, not fitted).

Reads the CSV of shared/reference/compute/llmfoundry_mpt_a100_80gb.csv (llm-foundry's
scripts/train/benchmarking/README.md tables), and for every row at sequence 2048 (the sequence the
zoo's mpt_* models carry) writes a scenario of the row's configuration beside a temporary copy,
runs `ffsim train --json` on it and prints the measured and predicted MFU side by side, single-node
rows (up to 8 GPUs, which a user may fit on) and multi-node rows apart. Nothing is fitted.

Usage: scripts/llmfoundry-compare.py [--csv FILE] [--ffsim build/ffsim] [--compute-model NAME] [--json]
SPDX-License-Identifier: Apache-2.0
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def scenario(row, compute_model=None):
    """The row's run as an ffsim scenario (DGX-A100 80 GB nodes on a rail-optimized fabric)."""
    gpus = int(row["# GPUs"])
    pure = row["MP Mode"] == "PURE"
    checkpointing = row["Activation Checkpointing"] == "True"
    line = row["readme_line"]
    src = "llm-foundry benchmarking README line " + line
    sc = {
        "extends": os.path.join(ROOT, "scenarios", "dgx-a100-superpod.json"),
        "name": "llmfoundry-mpt-" + row["Model"] + "-" + str(gpus),
        "description": "llm-foundry's MPT-" + row["Model"] + " row (" + src + ")",
        "cluster": {"node": "dgx_a100_80gb", "gpus": max(gpus, 8)},
        "workload": {
            "kind": "transformer",
            "model": "mpt_" + row["Model"],
            "scaling": {"value": "strong", "source": src + ": the global batch"},
            "batch": {"value": int(row["GlobalBatchSize"]), "source": src},
            "seq": {"value": int(row["SeqLen (T)"]), "source": src},
            "micro_batch": {"value": int(row["MicroBatchSize"]), "source": src},
            "tp": {"value": 1, "source": "FSDP only"},
            "pp": {"value": 1, "source": "FSDP only"},
            "zero_stage": {"value": 3, "source": src + ": FULL_SHARD"},
            "recompute": {"value": "full" if checkpointing else "none", "source": src + ": activation checkpointing"},
            "precision": {"value": "bf16", "source": src + ": " + row["Precision"]},
            "grad_dtype": {"value": "bf16" if pure else "fp32",
                           "source": "[S] Composer's FSDP mixed precision " + row["MP Mode"] +
                                     ": PURE reduces in bf16, DEFAULT in fp32"},
            "optimizer": {"value": "adamw", "source": "[S] llm-foundry's decoupled AdamW"},
            "flash_attention": {"value": True, "source": "[S] llm-foundry's triton/flash attention"},
            "backend": "nccl",
            "gpus": [gpus],
        },
    }
    if compute_model:
        sc["workload"]["compute_model"] = compute_model
    return sc


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--csv", default=os.path.join(ROOT, "..", "shared", "reference", "compute",
                                                  "llmfoundry_mpt_a100_80gb.csv"))
    ap.add_argument("--ffsim", default=os.path.join(ROOT, "build", "ffsim"))
    ap.add_argument("--compute-model", help="a compute model for the workloads (e.g. a100_shaped); default: the catalog's")
    ap.add_argument("--json", action="store_true", help="the rows as JSON")
    a = ap.parse_args()
    if not os.path.isfile(a.csv):
        print("llmfoundry-compare: no file " + a.csv + " (the shared reference data)", file=sys.stderr)
        return 2
    zoo = {f[4:-5] for f in os.listdir(os.path.join(ROOT, "models", "nn")) if f.startswith("mpt_")}
    out = []
    with open(a.csv, newline="") as f, tempfile.TemporaryDirectory() as tmp:
        for row in csv.DictReader(f):
            if row["SeqLen (T)"] != "2048" or row["Model"] not in zoo:
                continue
            path = os.path.join(tmp, "row" + row["readme_line"] + ".json")
            with open(path, "w") as g:
                json.dump(scenario(row, a.compute_model), g)
            p = subprocess.run([a.ffsim, "--models", os.path.join(ROOT, "models"), "train", path, "--json"],
                               capture_output=True, text=True)
            rec = {"line": int(row["readme_line"]), "model": row["Model"], "gpus": int(row["# GPUs"]),
                   "micro_batch": int(row["MicroBatchSize"]), "checkpointing": row["Activation Checkpointing"] == "True",
                   "measured_mfu": float(row["MFU"]) / 100}
            if p.returncode != 0:
                rec["error"] = (p.stderr.strip().splitlines() or ["exit " + str(p.returncode)])[-1]
            else:
                r = json.loads(p.stdout)["rows"][0]
                rec["mfu"] = r["mfu"]
                rec["memory_gb"] = r["memory_bytes"] / 1e9
                rec["exposed_comm_s"] = r["exposed_comm_s"]
                rec["step_s"] = r["step_s"]
            out.append(rec)
    if a.json:
        json.dump(out, sys.stdout, indent=2)
        print()
        return 0
    print("ffsim train against llm-foundry's MPT rows at sequence 2048 on A100 80 GB (MFU; not fitted); compute model: " +
          (a.compute_model or "the workload's default"))
    print("  line  model  GPUs  micro-batch  checkpointing  measured  ffsim   error   memory/GPU")
    for part, keep in (("one node", lambda r: r["gpus"] <= 8), ("several nodes", lambda r: r["gpus"] > 8)):
        errs = []
        for r in out:
            if not keep(r):
                continue
            if "error" in r:
                print("  %4d  %-5s  %4d  %11d  %13s  %7.1f%%  refused: %s" % (
                    r["line"], r["model"], r["gpus"], r["micro_batch"], r["checkpointing"], 100 * r["measured_mfu"], r["error"]))
                continue
            e = r["mfu"] / r["measured_mfu"] - 1
            errs.append(abs(e))
            print("  %4d  %-5s  %4d  %11d  %13s  %7.1f%%  %5.1f%%  %+5.1f%%  %6.1f GB" % (
                r["line"], r["model"], r["gpus"], r["micro_batch"], r["checkpointing"], 100 * r["measured_mfu"],
                100 * r["mfu"], 100 * e, r["memory_gb"]))
        if errs:
            print("  %s: mean |error| %.1f%% over %d rows" % (part, 100 * sum(errs) / len(errs), len(errs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
