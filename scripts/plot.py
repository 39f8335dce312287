#!/usr/bin/env python3
"""Plots of ffsim's JSON (or CSV) output, shaped like the paper's figures (arXiv 2408.14158).

  scripts/plot.py collective FILE.json... -o allreduce.png   algbw against GPUs, one line per
      algorithm (and engine, cross-zone) of `ffsim collective ... --json`; with --envelope, the
      published ranges of Sec. IV as shaded bands (validation targets, drawn for comparison).
      Rows of several sizes (`--size 64KiB:1GiB`) give busbw against the size instead, one line
      per algorithm and GPU count, as nccl-tests' curves
  scripts/plot.py train FILE.json... -o scaling.png         step time and scaling efficiency
      against GPUs, one line per file of `ffsim train ... --json` (e.g. one per backend)
  scripts/plot.py plan FILE.json... -o plan.png              switches, cost and power per GPU
      against the swept knob, one line per design, of `ffsim plan A.json B.json --sweep K=... --json`

Collective and train figures also read `--csv` files (a .csv name, or text that is not JSON).
Input files are read and checked before matplotlib is imported, so bad input is reported the same
way whether or not it is installed. Exit codes as ffsim's: 0 ok, 2 usage (or matplotlib missing),
3 bad input.
SPDX-License-Identifier: Apache-2.0
"""
import argparse
import json
import sys

# Published ranges (arXiv 2408.14158 Sec. IV, Fig. 7; ../shared/reference/fire-flyer-facts.md
# section 8), drawn as bands with --envelope: 186 MiB allreduce algbw over 16..1440 GPUs.
ENVELOPES = [
    ("HFReduce, published 6.3-8.1 GB/s", 6.3, 8.1, "tab:blue"),
    ("NCCL, published 1.6-4.8 GB/s", 1.6, 4.8, "tab:orange"),
]


class BadInput(Exception):
    pass


def read_csv(path, text):
    """Rows of an ffsim --csv file as dicts: numbers as numbers, true/false as flags, empty as None."""
    import csv
    import io

    def cell(v):
        if v == "":
            return None
        if v in ("true", "false"):
            return v == "true"
        try:
            return int(v)
        except ValueError:
            pass
        try:
            return float(v)
        except ValueError:
            return v

    reader = csv.DictReader(io.StringIO(text))
    if not reader.fieldnames:
        raise BadInput(f"{path}: an empty CSV file: no rows to plot")
    return [{k: cell(v) for k, v in r.items()} for r in reader]


def si_rows(rows):
    """Rows of schema version 1 (SI units: algbw_Bps) also get the GB/s keys this script plots."""
    for r in rows:
        if isinstance(r, dict):
            for key in ("algbw", "busbw"):
                v = r.get(f"{key}_Bps")
                if isinstance(v, (int, float)) and not isinstance(v, bool) and f"{key}_GBps" not in r:
                    r[f"{key}_GBps"] = v / 1e9
    return rows


def load(path, kind):
    """Reads one ffsim --json or --csv file; returns (document, list of row dicts), checked.

    JSON: a document of schema "ffsim.<kind>/1" (an object with "rows"), or the arrays ffsim wrote
    before schema versions (collective rows, plan sweep rows; algbw in GB/s). CSV (a .csv file, or
    text that is not JSON): `ffsim collective|train ... --csv`, one row per line.
    """
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise BadInput(f"{path}: cannot read: {e.strerror}")
    first_line = text.lstrip().split("\n", 1)[0]
    is_csv = path.endswith(".csv") or (text.lstrip()[:1] not in ("{", "[") and "," in first_line and "gpus" in first_line)
    if is_csv:
        if kind == "plan":
            raise BadInput(f"{path}: plan figures read the JSON of `ffsim plan ... --sweep ... --json`, not CSV")
        doc = read_csv(path, text)
    else:
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as e:
            raise BadInput(f"{path}: line {e.lineno}: not JSON ({e.msg}); expected the output of "
                           f"`ffsim {kind} ... --json` (or --csv)")
    if isinstance(doc, dict) and "schema_version" in doc:
        schema = doc["schema_version"]
        if not isinstance(schema, str) or not schema.startswith(f"ffsim.{kind}/"):
            raise BadInput(f"{path}/schema_version: expected \"ffsim.{kind}/1\" (`ffsim {kind} ... --json`), "
                           f"found {json.dumps(schema)}")
        if schema != f"ffsim.{kind}/1":
            raise BadInput(f"{path}/schema_version: {schema} is newer than this script reads (ffsim.{kind}/1)")
        if not isinstance(doc.get("rows"), list):
            raise BadInput(f"{path}: expected \"rows\" in the {schema} document")
        rows = si_rows(doc["rows"])
        if kind != "train":
            doc = rows  # collective and plan: the rows are the document
    if kind == "plan":
        if not isinstance(doc, list) or not doc:
            raise BadInput(f"{path}: expected a JSON array of sweep rows (`ffsim plan ... --sweep ... --json`), "
                           f"found {type(doc).__name__ if doc else 'nothing'}")
        for i, r in enumerate(doc):
            if not isinstance(r, dict) or "knob" not in r or "value" not in r:
                raise BadInput(f"{path}/{i}: missing \"knob\" or \"value\": a sweep row of `ffsim plan --sweep`")
            if r.get("fits") and not isinstance(r.get("plan"), dict):
                raise BadInput(f"{path}/{i}/plan: expected the plan of a design that fits")
        return doc, doc
    if kind == "collective":
        rows, where = doc, ""
        if not isinstance(rows, list):
            raise BadInput(f"{path}: expected a JSON array of rows (`ffsim collective ... --json`), "
                           f"found {type(doc).__name__}")
        si_rows(rows)
        need = {"algo": str, "gpus": int, "algbw_GBps": (int, float)}
    else:
        if is_csv:  # CSV rows: the run's fields are on every row
            first = doc[0] if doc and isinstance(doc[0], dict) else {}
            doc = {"scenario": first.get("scenario"), "backend": first.get("backend"), "rows": doc}
        if not isinstance(doc, dict) or not isinstance(doc.get("rows"), list):
            raise BadInput(f"{path}: expected an object with \"rows\" (`ffsim train ... --json`)")
        rows, where = doc["rows"], "/rows"
        need = {"gpus": int, "step_s": (int, float), "efficiency": (int, float)}
    if not rows:
        raise BadInput(f"{path}{where}: no rows to plot")
    for i, r in enumerate(rows):
        for key, t in need.items():
            if not isinstance(r, dict) or key not in r:
                raise BadInput(f"{path}{where}/{i}: missing \"{key}\"")
            if not isinstance(r[key], t) or isinstance(r[key], bool):
                raise BadInput(f"{path}{where}/{i}/{key}: expected a number, found {json.dumps(r[key])}")
        if r["gpus"] <= 0:
            raise BadInput(f"{path}{where}/{i}/gpus: expected a positive GPU count, found {r['gpus']}")
    return doc, rows


def pyplot():
    try:
        import matplotlib
    except ImportError:
        sys.stderr.write("plot.py: matplotlib is not installed (Debian: apt-get install python3-matplotlib)\n")
        sys.exit(2)
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def gpu_axis(ax, counts):
    ax.set_xscale("log", base=2)
    ax.set_xticks(counts)
    ax.set_xticklabels([f"{c:,}" for c in counts], rotation=45 if len(counts) > 6 else 0)
    ax.minorticks_off()
    ax.set_xlabel("GPUs")
    ax.grid(True, alpha=0.3)


def family_color(algo):
    """One color per family (HFReduce blue, NCCL orange, as the envelope bands)."""
    if algo.startswith("hf"):
        return "tab:blue"
    if algo.startswith("nccl"):
        return "tab:orange"
    return None


def plot_collective(files, out, title, envelope):
    series = {}
    size = None
    rows_all = []
    for path in files:
        _, rows = load(path, "collective")
        for i, r in enumerate(rows):
            b = r.get("bytes")
            if not isinstance(b, (int, float)) or isinstance(b, bool) or b < 0:
                raise BadInput(f"{path}/{i}/bytes: expected a non-negative size in bytes, found {json.dumps(b)}")
            rows_all.append(r)
    if len({r["bytes"] for r in rows_all}) > 1:
        return plot_collective_sizes(rows_all, out, title)
    for path in files:
        _, rows = load(path, "collective")
        for r in rows:
            engine = r.get("engine", "analytic")
            key = (r["algo"], engine, bool(r.get("cross_zone")))
            series.setdefault(key, []).append((r["gpus"], r["algbw_GBps"]))
            size = size or r.get("bytes")
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9, 4.2))
    counts = sorted({g for pts in series.values() for g, _ in pts})
    if envelope:
        for name, lo, hi, color in ENVELOPES:
            ax.axhspan(lo, hi, color=color, alpha=0.08, label=name)
    markers = "osD^v<>"
    for i, ((algo, engine, cross), pts) in enumerate(sorted(series.items())):
        pts.sort()
        how = "closed form" if engine == "analytic" else f"{engine} simulation"
        label = f"{algo}, {how}" + (", cross-zone" if cross else "")
        ax.plot([g for g, _ in pts], [b for _, b in pts], marker=markers[i % len(markers)],
                linestyle="-" if engine == "analytic" else "--", color=family_color(algo), label=label)
    gpu_axis(ax, counts)
    ax.set_ylim(bottom=0)
    ax.set_ylabel("algbw (GB/s) = size / time")
    what = f"allreduce of {size / 2**20:.0f} MiB per GPU" if size else "collective"
    ax.set_title(title or f"{what} (ffsim)")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(out, dpi=120, metadata={"Software": None})


def plot_collective_sizes(rows, out, title):
    """busbw against the size (nccl-tests' curve), one line per (algorithm, engine, GPUs, cross-zone)."""
    for r in rows:
        if not isinstance(r.get("busbw_GBps"), (int, float)) or isinstance(r.get("busbw_GBps"), bool):
            raise BadInput(f"a row of {r.get('algo')} at {r.get('gpus')} GPUs: missing \"busbw_GBps\"")
    series = {}
    for r in rows:
        key = (r["algo"], r.get("engine", "analytic"), r["gpus"], bool(r.get("cross_zone")))
        series.setdefault(key, []).append((r["bytes"], r["busbw_GBps"]))
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9, 4.2))
    markers = "osD^v<>"
    styles = ["-", "--", ":", "-."]
    counts = sorted({k[2] for k in series})
    sizes = sorted({b for pts in series.values() for b, _ in pts if b > 0})
    for i, ((algo, engine, gpus, cross), pts) in enumerate(sorted(series.items())):
        pts = sorted(p for p in pts if p[0] > 0)
        how = "closed form" if engine == "analytic" else f"{engine} simulation"
        label = f"{algo}, {gpus:,} GPUs, {how}" + (", cross-zone" if cross else "")
        ax.plot([b for b, _ in pts], [v for _, v in pts], marker=markers[i % len(markers)], markersize=3,
                linestyle=styles[counts.index(gpus) % len(styles)], color=family_color(algo), label=label)
    ax.set_xscale("log", base=2)
    def fmt(b):
        for unit, f in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
            if b >= f:
                return f"{b / f:g} {unit}"
        return f"{b:g} B"
    ticks = sizes if len(sizes) <= 12 else sizes[:: (len(sizes) + 11) // 12]
    ax.set_xticks(ticks)
    ax.set_xticklabels([fmt(b) for b in ticks], rotation=45)
    ax.minorticks_off()
    ax.set_xlabel("size per GPU (nccl-tests' size)")
    ax.set_ylim(bottom=0)
    ax.set_ylabel("busbw (GB/s), as nccl-tests")
    ax.grid(True, alpha=0.3)
    ax.set_title(title or "collective against size (ffsim)")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(out, dpi=120, metadata={"Software": None})


def parse_claims(items):
    """--claim GPUS:PERCENT (a published efficiency, drawn as a marker for comparison)."""
    claims = []
    for c in items or []:
        try:
            g, e = c.split(":")
            claims.append((int(g), float(e)))
        except ValueError:
            raise BadInput(f"--claim: expected GPUS:PERCENT (e.g. 128:95), found \"{c}\"")
    return claims


def plot_train(files, out, title, claims):
    runs = []
    for path in files:
        doc, rows = load(path, "train")
        label = f"{doc.get('scenario', path)}, {doc.get('backend', '?')}"
        if doc.get("collectives"):
            label += f" (collectives: {doc['collectives']})"
        runs.append((label, sorted(rows, key=lambda r: r["gpus"])))
    plt = pyplot()
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4))
    counts = sorted({r["gpus"] for _, rows in runs for r in rows})
    longest = max(r["step_s"] for _, rows in runs for r in rows)
    unit, scale = ("s", 1.0) if longest >= 10 else ("ms", 1e3)
    for label, rows in runs:
        g = [r["gpus"] for r in rows]
        color = "tab:blue" if "hfreduce" in label else ("tab:orange" if "nccl" in label else None)
        a1.plot(g, [r["step_s"] * scale for r in rows], marker="o", color=color, label=label)
        a2.plot(g, [r["efficiency"] * 100 for r in rows], marker="o", color=color, label=label)
    for ax in (a1, a2):
        gpu_axis(ax, counts)
        ax.set_ylim(bottom=0)
    a1.set_ylabel(f"step time ({unit})")
    a2.set_ylabel("scaling efficiency (%)")
    a2.axhline(100, color="grey", lw=0.8)
    if claims:
        a2.plot([g for g, _ in claims], [e for _, e in claims], linestyle="none", marker="x", markersize=10,
                color="black", label="published claim")
        a2.legend(fontsize=8, loc="lower left")
    a1.legend(fontsize=8)
    fig.suptitle(title or f"{runs[0][0].split(',')[0]}: step time and scaling efficiency against the fewest GPUs (ffsim train)")
    fig.tight_layout()
    fig.savefig(out, dpi=120, metadata={"Software": None})


def plot_plan(files, out, title):
    series = {}
    knob = None
    unit = None
    skipped = []
    for path in files:
        _, rows = load(path, "plan")
        for r in rows:
            knob = knob or r["knob"]
            if not r.get("fits"):
                skipped.append(f"{r.get('scenario', '?')} at {r['value']}")
                continue
            p = r["plan"]
            gpus = p.get("gpus") or 0
            cost = p.get("cost") or {}
            unit = unit or cost.get("unit")
            series.setdefault(r.get("scenario", path), []).append((
                r["value"], (p.get("switches") or {}).get("total"),
                cost.get("network") / gpus if cost.get("network") is not None and gpus else None,
                cost.get("total") / gpus if cost.get("total") is not None and gpus else None,
                p.get("power_per_gpu_w")))
    if not series:
        raise BadInput("no design fits at any swept value: nothing to plot")
    plt = pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(10, 7))
    panels = [("switches", 1), (f"network cost per GPU ({unit or 'cost units'})", 2),
              (f"total cost per GPU ({unit or 'cost units'})", 3), ("power per GPU (W)", 4)]
    xs = sorted({x for pts in series.values() for x, *_ in pts})
    for ax, (label, col) in zip(axes.flat, panels):
        for name, pts in sorted(series.items()):
            pts.sort()
            got = [(pt[0], pt[col]) for pt in pts if pt[col] is not None]
            ax.plot([x for x, _ in got], [y for _, y in got], marker="o", label=name)
        if knob == "gpus":
            gpu_axis(ax, xs)
        else:
            ax.set_xlabel(knob)
            ax.grid(True, alpha=0.3)
        ax.set_ylim(bottom=0)
        ax.set_ylabel(label)
    axes.flat[0].legend(fontsize=8)
    note = f"; does not fit: {', '.join(skipped)}" if skipped else ""
    fig.suptitle(title or f"capacity plan against {knob} (ffsim plan --sweep){note}", fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=120, metadata={"Software": None})


def main(argv):
    ap = argparse.ArgumentParser(prog="plot.py", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    c = sub.add_parser("collective", help="algbw against GPUs (ffsim collective --json)")
    c.add_argument("--envelope", action="store_true", help="shade the published allreduce ranges")
    t = sub.add_parser("train", help="step time and efficiency against GPUs (ffsim train --json)")
    t.add_argument("--claim", action="append", metavar="GPUS:PERCENT",
                   help="a published efficiency, drawn as a marker (repeatable)")
    pl = sub.add_parser("plan", help="switches, cost and power per GPU against a sweep (ffsim plan --sweep --json)")
    for p in (c, t, pl):
        p.add_argument("files", nargs="+", metavar="FILE.json|FILE.csv")
        p.add_argument("-o", "--output", required=True, metavar="OUT.png")
        p.add_argument("--title")
    a = ap.parse_args(argv)
    try:
        if a.what == "collective":
            plot_collective(a.files, a.output, a.title, a.envelope)
        elif a.what == "plan":
            plot_plan(a.files, a.output, a.title)
        else:
            plot_train(a.files, a.output, a.title, parse_claims(a.claim))
    except BadInput as e:
        sys.stderr.write(f"plot.py: {e}\n")
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
