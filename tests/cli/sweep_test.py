#!/usr/bin/env python3
"""Tests of `ffsim sweep` (docs/commands/sweep.md). Usage: sweep_test.py MODE FFSIM ROOT

MODE: same (serial vs --threads 2, and what the rows say), mpi (mpirun -np 1, 2, 4 against the
serial run; 77 when mpirun is absent), resume (a killed run's prefix, resumed), clobber (another
grid's output is left alone), progress (the bar under a pseudo-terminal, none without one).
Every run is a small grid on fire-flyer-2 with the closed form or the fluid engine (well under a
second a run)."""
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile

MODE, FFSIM, ROOT = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
os.chdir(ROOT)
SCEN = "scenarios/fire-flyer-2.json"
# Three knobs, 3 x 2 x 2 = 12 points. Invalid points, and why (derived from the scenario):
#  - /fabric/zones=1: fire-flyer-2's storage nodes are dual-homed, one NIC per zone, so one zone
#    is refused at /fabric (6 points);
#  - /fabric/switch=nosuch: no such switch in the catalog (6 points; 3 of them also zones=1);
#  - /cluster/nodes=1 with --gpus 16,8: 16 GPUs do not fit 1 node of 8 GPUs: the point fails as a
#    whole (the collective refuses the GPU count), with the command's reason.
# That leaves nodes 2 and 3 x zones 2 x qm8700 = 2 ok points, each with 2 rows (--gpus 16,8).
KNOBS = ["--set", "/cluster/nodes=1,2,3", "--set", "/fabric/zones=2,1", "--set", "/fabric/switch=qm8700,nosuch"]
CMD = ["--", "--algo", "hfreduce", "--gpus", "16,8", "--engine", "fluid"]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def sweep(out_dir, name, extra=(), launcher=(), cmd=CMD, knobs=KNOBS, env=None):
    csv_path = os.path.join(out_dir, name + ".csv")
    json_path = os.path.join(out_dir, name + ".json")
    args = list(launcher) + [FFSIM, "--models", "models", "sweep", SCEN, "--command", "collective", *knobs,
                             "--csv", csv_path, "--json", json_path, *extra, *cmd]
    p = subprocess.run(args, capture_output=True, text=True, timeout=120, env=env)
    return p, csv_path, json_path


def read(path):
    with open(path, "rb") as f:
        return f.read()


def points_in_prefix(text):
    """Whole points in a CSV prefix: complete lines grouped by their knob cells, a point counting
    when all its point_rows lines are there (what the sweep must skip)."""
    lines = text.split("\n")[1:-1]  # the header; the last element is a cut line or ""
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    done, i = 0, 0
    while i < len(rows):
        n = int(rows[i][5])
        if i + n > len(rows):
            break
        i += n
        done += 1
    return done


tmp = tempfile.mkdtemp(prefix="ffsim-sweep-")
try:
    serial, s_csv, s_json = sweep(tmp, "serial")
    check(serial.returncode == 0, "serial run exits 0: " + serial.stderr)
    rows = list(csv.DictReader(io.StringIO(read(s_csv).decode())))
    points = {(r["/cluster/nodes"], r["/fabric/zones"], r["/fabric/switch"]) for r in rows}
    check(len(points) == 12, "12 points, got %d" % len(points))
    # Grid order: the first knob slowest, values in the order given.
    order = []
    for r in rows:
        k = (r["/cluster/nodes"], r["/fabric/zones"], r["/fabric/switch"])
        if k not in order:
            order.append(k)
    check(order == [(n, z, s) for n in "123" for z in "21" for s in ("qm8700", "nosuch")], "grid order")
    ok = [r for r in rows if r["status"] == "ok"]
    check(sorted({(r["/cluster/nodes"], r["gpus"]) for r in ok}) == [("2", "16"), ("2", "8"), ("3", "16"), ("3", "8")],
          "ok rows: nodes 2 and 3 at 16 and 8 GPUs, got %s" % [(r["/cluster/nodes"], r["gpus"]) for r in ok])
    check(all(r["point_rows"] == "2" for r in ok), "an ok point of --gpus 16,8 has 2 rows")
    inv = [r for r in rows if r["status"] == "invalid"]
    check(len(inv) == 10 and all(r["point_rows"] == "1" and r["time_s"] == "" for r in inv), "10 invalid points, one row each")
    check(all("unknown switch model \"nosuch\"" in r["reason"] for r in inv if r["/fabric/switch"] == "nosuch"),
          "the reason of a bad switch")
    check(all("dual-homed" in r["reason"] for r in inv if r["/fabric/zones"] == "1" and r["/fabric/switch"] == "qm8700"),
          "the reason of one zone")
    one_node = [r for r in inv if r["/cluster/nodes"] == "1" and r["/fabric/zones"] == "2" and r["/fabric/switch"] == "qm8700"]
    check(len(one_node) == 1 and "16" in one_node[0]["reason"], "the reason of 16 GPUs on one node: %s" % one_node)
    check("12 computed (2 ok, 10 invalid)" in serial.stderr, "summary on stderr: " + serial.stderr)
    doc = json.loads(read(s_json))
    check(doc["schema_version"] == "ffsim.sweep/1" and len(doc["rows"]) == len(rows), "JSON: the same rows")
    check([(d["status"], d["point_rows"]) for d in doc["rows"]] == [(r["status"], int(r["point_rows"])) for r in rows],
          "JSON and CSV rows agree")

    if MODE == "same":
        again, a_csv, a_json = sweep(tmp, "again")
        check(read(a_csv) == read(s_csv) and read(a_json) == read(s_json), "the same bytes twice")
        for t in ("2", "3"):
            th, t_csv, t_json = sweep(tmp, "threads" + t, ["--threads", t])
            check(th.returncode == 0, "--threads %s exits 0: %s" % (t, th.stderr))
            check(read(t_csv) == read(s_csv), "--threads %s: CSV byte-identical to the serial run" % t)
            check(read(t_json) == read(s_json), "--threads %s: JSON byte-identical to the serial run" % t)
        # plan on 2 threads: the same bytes as serially (12 points, a few invalid).
        pk = ["--set", "/cluster/nodes=16,600,1300", "--set", "/fabric/switch=qm8700,qm9700", "--range", "/fabric/zones=1:2:1"]
        outs = []
        for t in ("1", "2"):
            p = subprocess.run([FFSIM, "--models", "models", "sweep", SCEN, "--command", "plan", *pk, "--threads", t, "--quiet"],
                               capture_output=True, text=True, timeout=120)
            check(p.returncode == 0, "plan sweep exits 0: " + p.stderr)
            outs.append(p.stdout)
        check(outs[0] == outs[1] and outs[0].count("\n") == 13, "plan sweep: --threads 2 gives the serial bytes")
        # --zip: the i-th values together (3 points).
        z, z_csv, _ = sweep(tmp, "zip", ["--zip"], knobs=["--set", "/cluster/nodes=1,2,3", "--range", "/fabric/zones=1:3:1"])
        zr = list(csv.DictReader(io.StringIO(read(z_csv).decode())))
        check([(r["/cluster/nodes"], r["/fabric/zones"]) for r in zr if r["point_rows"] == "1" or r["gpus"] != "8"]
              == [("1", "1"), ("2", "2"), ("3", "3")], "--zip pairs the values: %s" % zr)
    elif MODE == "mpi":
        mpirun = shutil.which("mpirun")
        if not mpirun:
            print("mpirun not found: skipped")
            sys.exit(77)
        launcher = [mpirun, "--oversubscribe"] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])
        for n in ("1", "2", "4"):
            m, m_csv, m_json = sweep(tmp, "np" + n, launcher=launcher + ["-np", n])
            check(m.returncode == 0, "-np %s exits 0: %s" % (n, m.stderr[-2000:]))
            check(os.path.exists(m_csv) and read(m_csv) == read(s_csv), "-np %s: CSV byte-identical to the serial run" % n)
            check(os.path.exists(m_json) and read(m_json) == read(s_json), "-np %s: JSON byte-identical to the serial run" % n)
            # Ranks and threads together.
        m, m_csv, m_json = sweep(tmp, "np2t2", ["--threads", "2"], launcher=launcher + ["-np", "2"])
        check(m.returncode == 0 and read(m_csv) == read(s_csv) and read(m_json) == read(s_json), "-np 2 --threads 2")
        # Resumed under mpirun: rank 0 reads the prefix, the ranks split the rest.
        full = read(s_csv)
        cut = full[: full.index(b"\n", len(full) // 2) + 1 + 7]
        r_csv = os.path.join(tmp, "npresume.csv")
        with open(r_csv, "wb") as f:
            f.write(cut)
        os.remove(os.path.join(tmp, "npresume.json")) if os.path.exists(os.path.join(tmp, "npresume.json")) else None
        m, _, _ = sweep(tmp, "npresume", extra=[], launcher=launcher + ["-np", "3"])
        skipped = points_in_prefix(cut.decode())
        check(m.returncode == 0 and read(r_csv) == full, "-np 3 resumed: the serial run's bytes")
        # With --json too, the points done are those in both files: the JSON file is new here.
        check("0 already in the output" in m.stderr, "-np 3 with a new --json: nothing skipped: " + m.stderr)
    elif MODE == "resume":
        full = read(s_csv)
        header_end = full.index(b"\n") + 1
        # Cuts: nothing, the header alone, mid-header, inside the first point, inside a 2-row point
        # (after its first row), at a line end, mid-line, one byte short, the whole file.
        line_ends = [i + 1 for i, c in enumerate(full) if c == ord("\n")]
        cuts = sorted({0, 5, header_end, header_end + 3, line_ends[3], line_ends[3] + 10, line_ends[6], len(full) - 1,
                       len(full)})
        for cut in cuts:
            prefix = full[:cut]
            c_csv = os.path.join(tmp, "cut.csv")
            with open(c_csv, "wb") as f:
                f.write(prefix)
            p = subprocess.run([FFSIM, "--models", "models", "sweep", SCEN, "--command", "collective", *KNOBS, "--csv", c_csv,
                                *CMD], capture_output=True, text=True, timeout=120)
            expect = points_in_prefix(prefix.decode()) if cut >= header_end else 0
            check(p.returncode == 0, "resume at byte %d exits 0: %s" % (cut, p.stderr))
            check(read(c_csv) == full, "resume at byte %d: the serial run's bytes" % cut)
            # The count of points skipped is the whole points of the prefix; the rest computed.
            check("%d already in the output (skipped), %d computed" % (expect, 12 - expect) in p.stderr,
                  "resume at byte %d skips %d points: %s" % (cut, expect, p.stderr))
        # JSON: a file cut after some rows (a kill between two rewrites leaves a whole file; a cut
        # one is read as far as its whole lines go).
        fj = read(s_json)
        lines = fj.split(b"\n")
        for keep in (1, 4, 8, len(lines) - 2):
            j_json = os.path.join(tmp, "cut.json")
            with open(j_json, "wb") as f:
                f.write(b"\n".join(lines[:keep]) + b"\n")
            p = subprocess.run([FFSIM, "--models", "models", "sweep", SCEN, "--command", "collective", *KNOBS, "--json",
                                j_json, *CMD], capture_output=True, text=True, timeout=120)
            check(p.returncode == 0 and read(j_json) == fj, "JSON resumed from %d lines: the serial run's bytes" % keep)
        # A finished sweep run again computes nothing.
        p, _, _ = sweep(tmp, "serial")
        check("12 already in the output (skipped), 0 computed" in p.stderr, "a finished sweep again: " + p.stderr)
        check(read(s_csv) == full, "a finished sweep again leaves its bytes")
    elif MODE == "clobber":
        before_csv, before_json = read(s_csv), read(s_json)
        for knobs, why in ((["--set", "/cluster/nodes=1,2,4", *KNOBS[2:]], "this grid's point"),
                           (["--set", "/cluster/nodes=1,2", *KNOBS[2:]], "rows past this grid"),
                           (["--set", "/fabric/zones=2,1", *KNOBS[:2], *KNOBS[4:]], "header")):
            p, _, _ = sweep(tmp, "serial", knobs=knobs)
            check(p.returncode == 2, "another grid exits 2: %d %s" % (p.returncode, p.stderr))
            check("holds the output of a different sweep" in p.stderr and why in p.stderr,
                  "another grid is named (%s): %s" % (why, p.stderr))
            check(read(s_csv) == before_csv and read(s_json) == before_json, "another grid leaves the files as they were")
        # The JSON file's first line names the command's arguments: another --engine is another sweep.
        p, _, _ = sweep(tmp, "serial", cmd=["--", "--algo", "hfreduce", "--gpus", "16,8"])
        check(p.returncode == 2 and "--json" in p.stderr and read(s_json) == before_json, "other command arguments: " + p.stderr)
    elif MODE == "progress":
        script = shutil.which("script")
        if not script:
            print("script not found: skipped")
            sys.exit(77)
        # A pseudo-terminal: the bar (points, rate) is drawn on stderr, then cleared.
        cmd = " ".join([FFSIM, "--models", "models", "sweep", SCEN, "--command", "collective", *KNOBS, "--csv",
                        os.path.join(tmp, "tty.csv"), *CMD])
        p = subprocess.run([script, "-qec", cmd, "/dev/null"], capture_output=True, text=True, timeout=120)
        check(p.returncode == 0, "under script: " + p.stdout)
        check("sweep [" in p.stdout and "/12 points" in p.stdout and "points/s" in p.stdout,
              "a progress bar on a terminal: %r" % p.stdout[-500:])
        qp = subprocess.run([script, "-qec", cmd.replace(" --csv", " --quiet --csv"), "/dev/null"], capture_output=True,
                            text=True, timeout=120)
        check(qp.returncode == 0 and "sweep [" not in qp.stdout and "computed" not in qp.stdout,
              "--quiet: nothing on the terminal: %r" % qp.stdout[-500:])
        # Not a terminal (the serial run above): no bar, only the summary line.
        check("sweep [" not in serial.stderr and "\r" not in serial.stderr, "no bar when stderr is not a terminal")
    else:
        print("unknown mode", MODE)
        sys.exit(2)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
print("FAILED: %d" % len(failures) if failures else "ok")
sys.exit(1 if failures else 0)
