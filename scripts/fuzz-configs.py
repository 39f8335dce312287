#!/usr/bin/env python3
"""Robustness campaign on ffsim's JSON inputs: one mutation per case, then ffsim on the mutant.

  scripts/fuzz-configs.py [--seed S] [--cases N] [--timeout SECONDS] [--jobs J] [--ffsim PATH]
                          [--only I,J,...] [--keep DIR] [-v]

Each case copies scenarios/ and models/ (less models/measured) into a fresh folder, mutates one
file of scenarios/*.json or models/*/*.json (not models/measured, models/calibrated) once -- a key
deleted, renamed, duplicated or added; a value replaced by another JSON type; a number made
negative, zero, fractional, huge or out of int64; an array or object emptied; a unit string
mangled ("4MiBx", "-4MiB", "1e999GB/s", ""); arrays nested 100,000 deep; the text truncated -- and
runs, in that folder with `--models models`:
  ffsim check <mutant>                                 (a model: also check a scenario using it)
  ffsim plan <scenario>
  ffsim collective <scenario> --algo hfreduce,nccl --gpus 16 --engine analytic
  ffsim net <scenario> d2h
  ffsim train <scenario> --gpus <smallest> --collectives estimate   (scenarios with a workload)
where <scenario> is the mutant, or for a mutated model a scenario that uses it. A case may also
mutate a measurement of the calibration loop (models/measured/*-np2.json, *-np4.json: the small
ones) or a calibration (models/calibrated/*.json), and then runs, with the machine's node model,
scenario and calibration:
  ffsim calibrate <measurement> --node <node> -o out.json         (a mutated measurement)
  ffsim validate <measurement> --calibration <calibration> --engine analytic
  ffsim --calibration <mutant> net <the machine's scenario> d2h   (a mutated calibration)

A run FAILS on: exit 1 (internal error), a signal, a sanitizer report or "terminate called", a
timeout, exit 3 whose message does not start with a file name (and JSON pointer), exit 0 with nan,
inf or -0 (a NaN printed as an integer) in the output. Exit 2 (usage) and 4 (simulation failure)
on a mutant are reported as suspicious. Mutations that leave the input valid are fine: exit 0 of
`check` is not a failure.

Cases are numbered; case i depends only on (seed, i), so `--only i` reruns one case, and the
folders of failing cases are kept under --keep (default: a temporary folder) with a command line
that reproduces each failure. Deterministic for a seed. Exit code: 0 no failure, 1 failures, 2 usage.
With the sanitizer build: ASAN_OPTIONS=detect_leaks=1 scripts/fuzz-configs.py --ffsim build-sanitize/ffsim
--timeout 60. The default 300 cases take about 1.5-4 minutes on 2 cores.
SPDX-License-Identifier: Apache-2.0
"""
import argparse
import concurrent.futures
import json
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

UNIT_RE = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-z/%][A-Za-z0-9/%]*)\s*$")
# nan, inf, and "-0", which is how a NaN cast to an integer for printing tends to come out.
NAN_INF_RE = re.compile(r"(?<![A-Za-z_])[-+]?(?:nan|inf|infinity)(?![A-Za-z_])|(?<![\w.-])-0(?:\.0*)?(?![\w.])",
                        re.IGNORECASE)
CRASH_MARKERS = ("terminate called", "AddressSanitizer", "LeakSanitizer", "UndefinedBehaviorSanitizer",
                 "runtime error:", "Segmentation fault", "Aborted", "core dumped", "stack overflow")
BORING_KEYS = ("source", "description", "note")


class Raw:
    """A value written to the mutant as raw JSON text (for what json.dumps cannot write)."""

    def __init__(self, text):
        self.text = text


# ------------------------------------------------------------------ documents

def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def dump(doc):
    """JSON text of `doc`; Raw values and ("__dup__", key) members are spliced in as text."""
    raws = {}

    def prep(v):
        if isinstance(v, Raw):
            tag = f"__raw_{len(raws)}__"
            raws[json.dumps(tag)] = v.text
            return tag
        if isinstance(v, dict):
            out = {}
            for k, x in v.items():
                if isinstance(k, tuple):  # a duplicate of key k[1]
                    tag = f"__rawkey_{len(raws)}__"
                    raws[json.dumps(tag)] = json.dumps(k[1])
                    out[tag] = prep(x)
                else:
                    out[k] = prep(x)
            return out
        if isinstance(v, list):
            return [prep(x) for x in v]
        return v

    text = json.dumps(prep(doc), indent=2, ensure_ascii=False)
    for tag, raw in raws.items():
        text = text.replace(tag, raw, 1)
    return text + "\n"


def walk(v, path=()):
    """Every (path, value) of a document, the root included; path is a tuple of keys/indices."""
    yield path, v
    if isinstance(v, dict):
        for k, x in v.items():
            yield from walk(x, path + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from walk(x, path + (i,))


def get(doc, path):
    for p in path:
        doc = doc[p]
    return doc


def set_at(doc, path, value):
    if not path:
        return value
    get(doc, path[:-1])[path[-1]] = value
    return doc


def pointer(path):
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def short(v, n=40):
    s = v.text if isinstance(v, Raw) else json.dumps(v, ensure_ascii=False)
    return s if len(s) <= n else s[: n - 3] + "..."


def strings_in(v):
    for _, x in walk(v):
        if isinstance(x, str):
            yield x


# ------------------------------------------------------------------ mutations

def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def number_mutants(v):
    out = [-1, 0, Raw("1e308"), Raw("-0"), Raw("1e999"), Raw("5e-324"), -abs(v) if v else -7]
    if is_int(v):
        out += [v + 0.5, 0.5, 2**31, 2**62, 2**63, 2**64, Raw("-9223372036854775809"), Raw("1e10"), 10**12,
                v * 1000 + 1]
    else:
        out += [v * 1e6, 1e-12, 1.5, 2, 1e300, 1e-300]
    return out


def unit_mutants(s):
    m = UNIT_RE.match(s)
    num, unit = m.group(1), m.group(2)
    return [s + "x", "-" + s.strip(), "1e999" + unit, "", "1e308" + unit, "1e-300" + unit, num + " " + unit,
            unit, num, "0" + unit, "nan" + unit, "inf" + unit, num + unit.upper(), num + unit.lower(),
            num + unit + num, "0x10" + unit, num + "." + unit, "1e18" + unit]


def string_mutants(s):
    return ["", "no_such_name", s + "_", s[:-1] if s else "x", s.upper(), "x" * 5000, "../" + s, "/dev/null",
            "\u00e9\u00e8", " " + s, "null", "0"]


TYPE_MUTANTS = ["x", 7, 0, True, False, None, [], {}, [1, 2], {"value": "x"}, 1.5]


def mutate(doc, rng):
    """Applies one mutation to `doc` (a parsed JSON value); returns (new doc or text, description)."""
    # A few whole-text mutations.
    r = rng.random()
    if r < 0.03:
        text = dump(doc)
        cut = rng.randrange(1, max(2, len(text) - 1))
        return text[:cut], f"text truncated after {cut} characters"
    if r < 0.04:
        return rng.choice(["", "[]", "null", "\"x\"", "{} {}", "{\"a\": 1,}", "\ufeff{}"]), "whole file replaced"
    if r < 0.05:
        depth = rng.choice([1000, 100000])
        path = rng.choice([p for p, v in walk(doc) if isinstance(v, dict)])
        get(doc, path)["deep"] = Raw("[" * depth + "]" * depth)
        return doc, f"{pointer(path)}: a member nested {depth} arrays deep added"

    nodes = list(walk(doc))
    weights = [0.15 if any(k in BORING_KEYS for k in p if isinstance(k, str)) else 1.0 for p, _ in nodes]
    path, v = rng.choices(nodes, weights)[0]
    where = pointer(path) or "(root)"
    parent = get(doc, path[:-1]) if path else None
    ops = ["type"]
    if path and isinstance(parent, dict):
        ops += ["delete", "delete", "rename"]
    if path and isinstance(parent, list):
        ops += ["delete_elem", "dup_elem"]
    if isinstance(v, dict):
        ops += ["empty", "unknown", "duplicate"] if v else ["unknown"]
    if isinstance(v, list):
        ops += ["empty", "append"]
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        ops += ["number"] * 4
    if isinstance(v, str):
        ops += ["unit"] * 5 if UNIT_RE.match(v) else ["string"] * 2
    op = rng.choice(ops)

    def replace(new):
        return set_at(doc, path, new), f"{where}: {short(v)} -> {short(new)}"

    if op == "type":
        return replace(rng.choice([t for t in TYPE_MUTANTS if type(t) is not type(v) or t != v]))
    if op == "number":
        return replace(rng.choice(number_mutants(v)))
    if op == "unit":
        return replace(rng.choice(unit_mutants(v)))
    if op == "string":
        return replace(rng.choice(string_mutants(v)))
    if op == "empty":
        return replace(type(v)())
    if op == "delete":
        del parent[path[-1]]
        return doc, f"{where}: key deleted"
    if op == "rename":
        k = path[-1]
        new_k = rng.choice([k[:-1] or "x", k + "s", k.upper(), k.replace("_", ""), "", "~/"])
        items = [(new_k if kk == k else kk, x) for kk, x in parent.items()]
        if new_k in parent:
            return doc, f"{where}: unchanged (rename collided)"
        parent.clear()
        parent.update(items)
        return doc, f"{where}: key renamed to {json.dumps(new_k)}"
    if op == "unknown":
        k = rng.choice(["frobnicate", "extends", "kind", "name", "value", "source", "Name"])
        if k in v:
            k = "frobnicate"
        v[k] = rng.choice(["x", 1, None, {"value": "1GB", "source": "x"}])
        return doc, f"{where}: key {json.dumps(k)} = {short(v[k])} added"
    if op == "duplicate":
        k = rng.choice(list(v))
        v[("__dup__", k)] = rng.choice([v[k], "x", 0])
        return doc, f"{where}: key {json.dumps(k)} repeated"
    if op == "append":
        new = rng.choice([None, "x", -1, 0, 2**40, [], {}] + ([v[0]] if v else []))
        v.append(new)
        return doc, f"{where}: element {short(new)} appended"
    if op == "delete_elem":
        del parent[path[-1]]
        return doc, f"{where}: element deleted"
    if op == "dup_elem":
        parent.insert(path[-1], json.loads(json.dumps(v)))
        return doc, f"{where}: element repeated"
    raise AssertionError(op)


# ------------------------------------------------------------------ the repository's inputs

def inventory():
    """(targets, scenarios, users): mutable files (relative paths), scenario info, model -> scenarios."""
    scen_files = sorted(f"scenarios/{f}" for f in os.listdir(os.path.join(ROOT, "scenarios")) if f.endswith(".json"))
    model_files = []
    for d in sorted(os.listdir(os.path.join(ROOT, "models"))):
        if d in ("measured", "calibrated") or not os.path.isdir(os.path.join(ROOT, "models", d)):
            continue
        model_files += sorted(f"models/{d}/{f}" for f in os.listdir(os.path.join(ROOT, "models", d)) if f.endswith(".json"))
    names = {}  # catalog name -> [(kind, file, doc)] (a cpu and a node may share a name)
    for f in model_files:
        doc = load_json(os.path.join(ROOT, f))
        if isinstance(doc, dict) and "name" in doc and "kind" in doc:
            names.setdefault(doc["name"], []).append((doc["kind"], f, doc))

    def closure(strings):
        seen, todo = set(), [s for s in strings if s in names]
        while todo:
            n = todo.pop()
            if n in seen:
                continue
            seen.add(n)
            todo += [s for _, _, d in names[n] for s in strings_in(d) if s in names and s not in seen]
        return seen

    scenarios = {}
    for f in scen_files:
        chain, cur = [], f
        while cur and cur not in chain and os.path.exists(os.path.join(ROOT, cur)):
            chain.append(cur)
            ext = load_json(os.path.join(ROOT, cur)).get("extends")
            cur = f"scenarios/{ext}.json" if isinstance(ext, str) else None
        docs = [load_json(os.path.join(ROOT, c)) for c in chain]
        workload = next((d["workload"] for d in docs if isinstance(d.get("workload"), dict)), None)
        gpus = workload.get("gpus") if workload else None
        smallest = min(gpus) if isinstance(gpus, list) and gpus and all(is_int(g) for g in gpus) else None
        used = closure([s for d in docs for s in strings_in(d)])
        used |= {n for n, e in names.items() if any(k == "collective_library" for k, _, _ in e)}
        if workload:
            used |= {n for n, e in names.items() if any(k == "compute_model" for k, _, _ in e)}
        scenarios[f] = {"workload": workload is not None, "smallest": smallest, "used": used}
    users = {}
    for f in model_files:
        n = next((n for n, e in names.items() if any(ff == f for _, ff, _ in e)), None)
        users[f] = [s for s, info in scenarios.items() if n in info["used"]] or ["scenarios/fire-flyer-2.json"]
    loop = sorted(f"models/measured/{f}" for f in os.listdir(os.path.join(ROOT, "models", "measured"))
                  if re.search(r"-np[0-9]+\.json$", f) and machine_of(f))
    loop += sorted(f"models/calibrated/{f}" for f in os.listdir(os.path.join(ROOT, "models", "calibrated"))
                   if f.endswith(".json") and machine_of(f))
    return scen_files + model_files + loop, scenarios, users


# The calibration loop's machines: file name prefix -> (node model, scenario, calibration).
LOOP_MACHINES = {
    "epyc": ("epyc_zen5_2c_vm", "scenarios/epyc-zen5-2c-vm.json", "models/calibrated/epyc_zen5_2c_vm.json"),
    "xeon": ("xeon_2c_vm", "scenarios/xeon-2c-vm.json", "models/calibrated/xeon_2c_vm.json"),
}


def machine_of(name):
    base = os.path.basename(name)
    return next((m for k, m in LOOP_MACHINES.items() if base.startswith(k)), None)


def loop_runs(target):
    """The commands run on a mutated measurement or calibration (the mutant in place of the original)."""
    node, scenario, calibration = machine_of(target)
    if target.startswith("models/measured/"):
        return [["calibrate", target, "--node", node, "-o", "out-calibration.json"],
                ["validate", target, "--calibration", calibration, "--engine", "analytic"]]
    measured = sorted(f"models/measured/{f}" for f in os.listdir(os.path.join(ROOT, "models", "measured"))
                      if machine_of(f) == machine_of(target) and f.endswith("-np2.json") and "pinned" not in f)[0]
    return [["--calibration", target, "net", scenario, "d2h"],
            ["validate", measured, "--calibration", target, "--engine", "analytic"]]


# ------------------------------------------------------------------ one case

def commands(scenario, info, mutant_path, doc):
    """The commands run on a scenario (mutated or not)."""
    cmds = [["plan", scenario],
            ["collective", scenario, "--algo", "hfreduce,nccl", "--gpus", "16", "--engine", "analytic"],
            ["net", scenario, "d2h"]]
    has_workload = info["workload"]
    smallest = info["smallest"]
    if scenario == mutant_path and isinstance(doc, dict):
        w = doc.get("workload")
        if isinstance(w, dict):
            has_workload = True
            g = w.get("gpus")
            if isinstance(g, list) and g and all(is_int(x) and x > 0 for x in g):
                smallest = min(g)
    if has_workload:
        train = ["train", scenario, "--collectives", "estimate"]
        if smallest and smallest <= 4096:
            train += ["--gpus", str(smallest)]
        cmds.append(train)
    return cmds


def judge(cmd, rc, out, err, timed_out, workdir):
    """None if the run is fine, else (severity, reason)."""
    if timed_out:
        return "FAIL", "timeout"
    for m in CRASH_MARKERS:
        if m in err:
            return "FAIL", f"crash: {m}"
    if rc < 0 or rc >= 128:
        return "FAIL", f"killed by signal {-rc if rc < 0 else rc - 128}"
    if rc == 1:
        return "FAIL", "exit 1 (internal error)"
    if rc == 3:
        first = err.strip().splitlines()[0] if err.strip() else ""
        m = re.match(r"^(\S+?\.json)(:/\S*)?: \S", first)
        if not m:
            return "FAIL", "exit 3 without a file name and JSON pointer"
        if not os.path.exists(os.path.join(workdir, m.group(1))):
            return "FAIL", f"exit 3 naming a file that does not exist ({m.group(1)})"
        return None
    if rc == 0:
        if NAN_INF_RE.search(out):
            return "FAIL", "nan or inf in the output"
        return None
    if rc == 2:
        # The fixed command lines ask for GPU counts of the unmutated clusters: a mutation that
        # shrinks a cluster (a GPU deleted from a node model) makes --gpus N a usage error.
        if re.search(r"--gpus: \d+ exceeds the cluster's \d+ GPUs", err):
            return None
        # plan rates a design at --precision (tf32 unless given): a GPU model without that rate
        # (the emulated devices of the CI VMs, or a mutation that deleted it) is a usage error
        # naming --precision and the file.
        if re.search(r"--precision \w+( \(the default\))?: GPU model \w+ of \S+ has no \w+ rate", err):
            return None
        return "SUSPICIOUS", "exit 2 (usage) on a configuration"
    if rc == 4:
        return "SUSPICIOUS", "exit 4 (simulation failure)"
    return "FAIL", f"unexpected exit code {rc}"


def run_case(i, args, targets, scenarios, users, base):
    rng = random.Random(f"{args.seed}:{i}")
    target = rng.choice(targets)
    doc = load_json(os.path.join(ROOT, target))
    mutant, what = mutate(doc, rng)
    text = mutant if isinstance(mutant, str) else dump(mutant)
    work = tempfile.mkdtemp(prefix=f"case{i}-", dir=base)
    shutil.copytree(os.path.join(base, "pristine", "scenarios"), os.path.join(work, "scenarios"))
    shutil.copytree(os.path.join(base, "pristine", "models"), os.path.join(work, "models"))
    with open(os.path.join(work, target), "w", encoding="utf-8") as f:
        f.write(text)
    parsed = mutant if not isinstance(mutant, str) else None
    if target.startswith(("models/measured/", "models/calibrated/")):
        runs = loop_runs(target)
    elif target.startswith("scenarios/"):
        runs = [["check", target]] + commands(target, scenarios[target], target, parsed)
    else:
        scen = rng.choice(users[target])
        runs = [["check", target], ["check", scen]] + commands(scen, scenarios[scen], target, None)
    results = []
    for c in runs:
        argv = [args.binary, "--models", "models"] + c
        t0 = time.monotonic()
        try:
            p = subprocess.run(argv, cwd=work, capture_output=True, text=True, errors="replace", timeout=args.timeout)
            rc, out, err, timed_out = p.returncode, p.stdout, p.stderr, False
        except subprocess.TimeoutExpired as e:
            rc, timed_out = None, True
            out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
            err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        verdict = judge(c, rc, out, err, timed_out, work)
        results.append({"cmd": c, "rc": rc, "secs": time.monotonic() - t0, "verdict": verdict,
                        "err": err.strip().splitlines()[:3], "out_hit": NAN_INF_RE.search(out).group(0)
                        if rc == 0 and NAN_INF_RE.search(out) else None})
    keep = any(r["verdict"] for r in results)
    if keep:
        dest = os.path.join(args.keep, f"seed{args.seed}-case{i}")
        shutil.rmtree(dest, ignore_errors=True)
        shutil.move(work, dest)
        work = dest
    else:
        shutil.rmtree(work, ignore_errors=True)
    return {"case": i, "target": target, "what": what, "results": results, "dir": work}


# ------------------------------------------------------------------ main

def signature(target, r):
    sev, reason = r["verdict"]
    first = r["err"][0] if r["err"] else ""
    first = re.sub(r"\d+(\.\d+)?(e[-+]?\d+)?", "N", first)
    first = re.sub(r"\"[^\"]*\"", "\"S\"", first)
    return (sev, reason, r["cmd"][0], target.split("/")[1] if target.startswith("models/") else "scenario", first[:160])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    ap.add_argument("--cases", type=int, default=300, help="number of cases (default 300)")
    ap.add_argument("--timeout", type=float, default=20, help="seconds per ffsim run (default 20)")
    ap.add_argument("--jobs", type=int, default=2, help="cases run at once (default 2)")
    ap.add_argument("--ffsim", default=os.path.join(ROOT, "build", "ffsim"), help="the binary (default build/ffsim)")
    ap.add_argument("--only", help="comma-separated case numbers to run (reproduce a case)")
    ap.add_argument("--keep", help="folder for the failing cases (default: a new temporary folder)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every case")
    args = ap.parse_args()
    if not os.access(args.ffsim, os.X_OK):
        ap.error(f"{args.ffsim}: not an executable (build it: ninja -C build ffsim)")
    args.ffsim = os.path.abspath(args.ffsim)
    if args.cases < 1 or args.jobs < 1 or args.timeout <= 0:
        ap.error("--cases, --jobs and --timeout must be positive")
    try:
        cases = [int(x) for x in args.only.split(",")] if args.only else list(range(args.cases))
    except ValueError:
        ap.error("--only: expected comma-separated case numbers")
    own_keep = not args.keep
    args.keep = os.path.abspath(args.keep or tempfile.mkdtemp(prefix="ffsim-fuzz-"))
    os.makedirs(args.keep, exist_ok=True)

    targets, scenarios, users = inventory()
    base = tempfile.mkdtemp(prefix="ffsim-fuzz-work-")
    t0 = time.monotonic()
    try:
        # A copy of the binary: a rebuild during the campaign does not pull it away.
        args.binary = shutil.copy2(args.ffsim, os.path.join(base, "ffsim"))
        shutil.copytree(os.path.join(ROOT, "scenarios"), os.path.join(base, "pristine", "scenarios"))
        # The measurements: only the small (MPI) files, which the loop's cases mutate and read.
        shutil.copytree(os.path.join(ROOT, "models"), os.path.join(base, "pristine", "models"),
                        ignore=lambda d, names: [n for n in names if not re.search(r"-np[0-9]+\.json$", n)]
                        if os.path.basename(d) == "measured" else [])
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            done = list(pool.map(lambda i: run_case(i, args, targets, scenarios, users, base), cases))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    elapsed = time.monotonic() - t0

    runs = sum(len(c["results"]) for c in done)
    rcs = {}
    for c in done:
        for r in c["results"]:
            key = "timeout" if r["rc"] is None else r["rc"]
            rcs[key] = rcs.get(key, 0) + 1
        if args.verbose:
            print(f"case {c['case']:4d}  {c['target']}  {c['what']}")
            for r in c["results"]:
                print(f"        rc={r['rc']} {r['secs']:.2f}s {' '.join(r['cmd'])}"
                      + (f"  <- {r['verdict'][0]}: {r['verdict'][1]}" if r["verdict"] else "")
                      + (f"\n          {r['err'][0]}" if r["err"] else ""))
    groups = {}
    for c in done:
        for r in c["results"]:
            if r["verdict"]:
                groups.setdefault(signature(c["target"], r), []).append((c, r))
    fails = sum(len(v) for k, v in groups.items() if k[0] == "FAIL")
    susp = sum(len(v) for k, v in groups.items() if k[0] == "SUSPICIOUS")
    print(f"ffsim fuzz: seed {args.seed}, {len(done)} cases, {runs} runs in {elapsed:.0f} s; exit codes: "
          + ", ".join(f"{k}: {v}" for k, v in sorted(rcs.items(), key=lambda kv: str(kv[0]))))
    print(f"{fails} failing runs, {susp} suspicious, in {len(groups)} distinct groups"
          + (f"; cases kept in {args.keep}" if groups else ""))
    for k, items in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        sev, reason, cmd, where, _ = k
        c, r = items[0]
        print(f"\n{sev}: {reason}: `{cmd}` on a mutated {where} ({len(items)} runs; cases "
              + ", ".join(str(x[0]["case"]) for x in items[:10]) + (" ..." if len(items) > 10 else "") + ")")
        print(f"  mutation: {c['target']} {c['what']}")
        for line in r["err"]:
            print(f"  stderr:   {line[:300]}")
        if r["out_hit"]:
            print(f"  stdout has: {r['out_hit']}")
        print(f"  reproduce: cd {c['dir']} && {shlex.join([args.ffsim, '--models', 'models'] + r['cmd'])}")
        print(f"  rerun:     {sys.argv[0]} --seed {args.seed} --only {c['case']} -v")
    if not groups and own_keep:
        shutil.rmtree(args.keep, ignore_errors=True)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
