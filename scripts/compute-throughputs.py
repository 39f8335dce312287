#!/usr/bin/env python3
"""Writes models/measured/a100-public-throughputs.csv: the single-GPU (and one-node FSDP) training throughputs of
shared/reference/compute/ in the form `ffsim calibrate --throughput` reads (one row per measurement,
each naming its source file and line, the catalog's network and GPU, precision, batch, sequence,
optimizer and attention kind), with the reason for every row it leaves out of the fit.

  python3 scripts/compute-throughputs.py [--shared ../shared] [-o models/measured/a100-public-throughputs.csv]

The mapping is this file's; where it is a judgement it says [I] in the row's note.
"""
import argparse, csv, io, os, re, sys

COLS = ["dataset", "source", "model", "gpu", "precision", "batch", "seq", "optimizer", "attention",
        "throughput", "unit", "micro_batch", "shards", "excluded", "note"]

LAMBDA_GPU = {"LambdaCloud A100 40GB PCIe": "a100_pcie_40gb", "A100 80GB PCIe": "a100_pcie_80gb",
              "A100 80GB SXM4": "a100_sxm4_80gb"}
TF32_NGC = ("[I] 'fp32' in an NGC container on an A100 runs TF32 tensor cores (shared/reference/compute/README.md)")


def lambda_pytorch(d, out):
    f = "lambda_pytorch_a100.csv"
    zoo = {"resnet50": ("resnet50", "", "sgd", "DLE ResNet-50 v1.5 (SGD with momentum)"),
           "bert_base_squad": ("bert_base", "384", "adam",
                               "[I] DLE BERT SQuAD: max_seq_length 384 (run_squad.sh default), BertAdam"),
           "bert_large_squad": ("bert_large", "384", "adam",
                                "[I] DLE BERT SQuAD: max_seq_length 384 (run_squad.sh default), BertAdam")}
    for r in csv.DictReader(open(os.path.join(d, f))):
        if r["num_gpu"] != "1.0":
            continue
        m = zoo.get(r["model"])
        prec = "fp16" if r["precision_label"] == "fp16" else "tf32"
        row = {"dataset": "lambda_pytorch", "source": "lambda_pytorch_a100.csv %s line %s" % (r["file"], r["line"]),
               "gpu": LAMBDA_GPU[r["system"]], "precision": prec, "batch": r["batch_size_total"],
               "throughput": r["throughput"], "unit": "samples/s", "attention": "materialised"}
        if m is None:
            row.update(model=r["model"], excluded="not in the model zoo (models/nn)", note="")
        else:
            row.update(model=m[0], seq=m[1], optimizer=m[2], excluded="",
                       note=m[3] + ("; " + TF32_NGC if prec == "tf32" else ""))
        out.append(row)


def lambda_tf(d, out):
    f = "lambda_tf_cnn_a100_logs.csv"
    zoo = {"alexnet": "alexnet", "resnet50": "resnet50_v1", "resnet152": "resnet152_v1", "vgg16": "vgg16"}
    for r in csv.DictReader(open(os.path.join(d, f))):
        if not r["config"].endswith("-1gpus"):
            continue
        prec = "fp16" if "-fp16-" in r["config"] else "tf32"
        row = {"dataset": "lambda_tf", "source": "%s %s" % (f, r["path"]), "gpu":
               "a100_pcie_40gb" if r["device"] == "A100-PCIE-40GB" else "a100_sxm4_40gb", "precision": prec,
               "batch": r["batch_per_gpu"], "throughput": r["total_images_per_sec"], "unit": "samples/s",
               "optimizer": "sgd", "attention": "", "seq": ""}
        m = zoo.get(r["model"])
        row["model"] = m or r["model"]
        if m is None:
            row["excluded"] = "not in the model zoo (models/nn)"
        elif r["tf_version"] != "1.15":
            row["excluded"] = ("TF %s was built for CUDA 10.1, before the A100 (sm_80, CUDA 11): no TF32, no Ampere "
                               "kernels; the compute README flags its VGG16 fp16 runs as broken" % r["tf_version"])
        else:
            row["excluded"] = ""
        note = "[I] tf_cnn_benchmarks' default optimizer is plain SGD (its bytes are taken as SGD with momentum's)"
        if prec == "tf32" and r["tf_version"] == "1.15":
            note += ("; TF32: the logs' VGG16 fp32 rate (503.6 img/s x 92.8 GFLOP) is 2.4x the FP32 peak, so "
                     "the convolutions ran on TF32 tensor cores")
        row["note"] = note
        out.append(row)


def dle(d, out):
    f = "dle_a100.csv"
    gpu = {"DGX A100 8x A100 80GB": "a100_sxm4_80gb", "DGX A100 8x A100 40GB": "a100_sxm4_40gb"}
    for r in csv.DictReader(open(os.path.join(d, f))):
        if r["gpus"] != "1":
            continue
        name = r["model"]
        if name.startswith("ResNet-50"):
            model, seq, opt = "resnet50", "", "sgd"
        elif name.startswith("BERT-large pretraining seq"):
            model, seq, opt = "bert_large", name.split("seq")[1], "adam"
        else:
            model, seq, opt = name, "", ""
        # "256 (configs.yml L152-161)", "128 TF32 / 256 FP16", "16/32": the TF32 and the FP16 batch.
        nums = re.findall(r"\d+", re.sub(r"TF32|FP16", "", r["batch_per_gpu"].split("(")[0]))
        b32, b16 = (nums[0], nums[1]) if len(nums) > 1 else (nums[0], nums[0])
        for prec, col, batch in (("tf32", "tf32", b32), ("fp16", "mixed_precision", b16)):
            row = {"dataset": "dle", "source": "%s %s line %s" % (f, r["source"], r["line"]), "model": model,
                   "gpu": gpu[r["hardware"]], "precision": prec, "batch": batch, "seq": seq, "optimizer": opt,
                   "attention": "materialised" if seq else "", "throughput": r[col], "unit": "samples/s"}
            row["excluded"] = "" if opt else "not in the model zoo (models/nn)"
            row["note"] = ("[I] LAMB's HBM traffic taken as Adam's" if opt == "adam" else "") + (
                "; throughput includes data loading" if "incl. data" in r["metric"] else "")
            out.append(row)


def flagperf(d, out):
    f = "flagperf_a100.csv"
    for r in csv.DictReader(open(os.path.join(d, f))):
        cells = r["row"].split("|")
        if "1x1" not in cells[0]:
            continue
        case = r["file"].split("/")[2]
        hdr = r["header"].split("|")
        p_train = cells[hdr.index("p_train")] if "p_train" in hdr and len(cells) > hdr.index("p_train") else ""
        fix = cells[2] if len(cells) > 2 else ""
        prec = cells[1]
        row = {"dataset": "flagperf", "source": "%s %s line %s" % (f, r["file"], r["line"]), "model": case,
               "gpu": "a100_sxm4_40gb", "precision": "tf32" if prec in ("fp32", "tf32") else "fp16",
               "batch": "", "seq": "", "optimizer": "", "attention": "", "throughput": p_train, "unit": "samples/s",
               "excluded": "not in the model zoo (models/nn), or its batch or sequence not in the row", "note": ""}
        if case == "gpt2-pytorch":
            row.update(model="gpt2_medium", batch="4", seq="1024", optimizer="adam", attention="materialised",
                       excluded="", note="shared/reference/compute/README.md: Megatron 345M, seq 1024, micro-batch 4; "
                       "p_train; " + TF32_NGC)
        elif case == "resnet50-pytorch" and fix.startswith("bs="):
            row.update(model="resnet50", batch=fix.split(",")[0][3:], optimizer="sgd", excluded="",
                       note="p_train; " + TF32_NGC)
        out.append(row)


def llmfoundry(d, out):
    """llm-foundry's MPT rows: FSDP (FULL_SHARD) runs whose throughput is per GPU. One node (8 GPUs) is
    a measurement of one node, which a fit may take (issue 29); more nodes are for looking at."""
    f = "llmfoundry_mpt_a100_80gb.csv"
    zoo = {n[4:-5] for n in os.listdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models", "nn"))
           if n.startswith("mpt_")}
    for r in csv.DictReader(open(os.path.join(d, f))):
        gpus, seq = int(r["# GPUs"]), r["SeqLen (T)"]
        mb, acc = int(r["MicroBatchSize"]), int(r["GradAccum"])
        row = {"dataset": "llmfoundry", "source": "%s readme line %s" % (f, r["readme_line"]),
               "model": "mpt_" + r["Model"], "gpu": "a100_sxm4_80gb", "precision": "bf16", "batch": str(mb * acc),
               "seq": seq, "optimizer": "adam", "attention": "flash", "throughput": r["Throughput (T/s/GPU)"],
               "unit": "tokens/s", "micro_batch": str(mb), "shards": str(gpus),
               "note": ("tokens/s per GPU of an FSDP (%s) run on %d GPUs, a GPU's step: %d accumulated micro-batches of %d; "
                        "[I] A100 80GB taken as SXM4 (the rows' 1600 Gbps nodes: DGX-A100 80 GB class); "
                        "[S] llm-foundry's decoupled AdamW and triton FlashAttention; "
                        "[I] the FSDP collectives inside the node not in the step (NVLink, overlapped: "
                        "ffsim train gives 0.3%% of MPT-13B's step exposed)" % (r["Sharding Strategy"], gpus, acc, mb))}
        if gpus > 8:
            row["excluded"] = "several nodes: for looking at, not for fitting (issue 29: fit on one GPU or one node)"
        elif r["Activation Checkpointing"] == "True":
            row["excluded"] = "activation checkpointing: the throughput rows model no recomputation"
        elif r["Model"] not in zoo:
            row["excluded"] = "not in the model zoo (models/nn)"
        elif seq != "2048":
            row["excluded"] = "the zoo's mpt_* carry learned positions of 2048 (the count differs by (seq - 2048) h)"
        else:
            row["excluded"] = ""
        out.append(row)


def main():
    ap = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--shared", default=os.path.join(here, "..", "..", "shared"))
    ap.add_argument("-o", "--out", default=os.path.join(here, "..", "models", "measured", "a100-public-throughputs.csv"))
    a = ap.parse_args()
    d = os.path.join(a.shared, "reference", "compute")
    rows = []
    for f in (lambda_pytorch, lambda_tf, dle, flagperf, llmfoundry):
        f(d, rows)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=COLS, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({c: r.get(c, "") for c in COLS})
    open(a.out, "w").write(buf.getvalue())
    print("%s: %d rows, %d used" % (a.out, len(rows), sum(1 for r in rows if not r["excluded"])), file=sys.stderr)


if __name__ == "__main__":
    main()
