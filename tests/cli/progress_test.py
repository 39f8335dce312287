#!/usr/bin/env python3
"""Progress on a terminal (issue 31, check 3; src/core/progress.hpp): under a pseudo-terminal
(script(1)) collective, train, net and ops draw a progress line on stderr and clear it (also what
the forked children that SimGrid and ops simulate in report); with --quiet, or where stderr is not a
terminal, nothing. FFSIM_PROGRESS_DELAY_MS=0 makes the meter draw
at once (by default it waits half a second, so quick commands show nothing), and a meter draws its
last state as it closes: the fluid engine's line ends at "100% of N operations", whatever the
machine's speed. Usage: progress_test.py FFSIM ROOT (exit 77 without script(1))."""
import os
import re
import shlex
import shutil
import subprocess
import sys

FFSIM, ROOT = os.path.abspath(sys.argv[1]), sys.argv[2]
os.chdir(ROOT)
script = shutil.which("script")
if not script:
    print("script not found: skipped")
    sys.exit(77)
env = dict(os.environ, FFSIM_PROGRESS_DELAY_MS="0")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def on_tty(args):
    """The command's stdout and stderr as a terminal shows them (stdout to /dev/null)."""
    cmd = " ".join(shlex.quote(a) for a in [FFSIM, "--models", "models", *args]) + " > /dev/null"
    # Bytes, decoded without newline translation: text mode would read every "\r" as a new line.
    p = subprocess.run([script, "-qec", cmd, "/dev/null"], capture_output=True, timeout=300, env=env)
    out = p.stdout.decode("utf-8", "replace")
    check(p.returncode == 0, "%s: exit %d: %r" % (args, p.returncode, out[-300:]))
    return out


def piped(args):
    p = subprocess.run([FFSIM, "--models", "models", *args], capture_output=True, timeout=300, env=env)
    err = p.stderr.decode("utf-8", "replace")
    check(p.returncode == 0, "%s: exit %d: %s" % (args, p.returncode, err[-300:]))
    return err


def cleared(out, what):
    # The last thing on the line: blanks over it, then a carriage return (nothing left on screen).
    check(re.search(r"\r +\r\s*$", out) is not None, what + ": the line cleared at the end: %r" % out[-200:])


# 1. A simulated collective (fluid engine): its operations; 2 algorithms x 2 counts, 4 runs.
coll = ["collective", "scenarios/fire-flyer-2.json", "--algo", "hfreduce,nccl_tree", "--gpus", "16,32", "--engine", "fluid"]
out = on_tty(coll)
m = re.findall(r"\r  simulating \[[#.]{24}\] (\d+)% of ([0-9.]+[kMG]?) operations", out)
check(m, "collective: a bar of operations: %r" % out[-300:])
if m:
    check(m[-1][0] == "100", "collective: the last state is all done: %r" % (m[-1],))
cleared(out, "collective")
check("simulating" not in on_tty(coll + ["--quiet"]), "collective --quiet: nothing")
err = piped(coll)
check("\r" not in err and "simulating" not in err, "collective, stderr not a terminal: nothing: %r" % err[-200:])
# The closed form simulates nothing: the meter shows the elapsed time, no operations.
out = on_tty(["collective", "scenarios/fire-flyer-2.json", "--gpus", "16"])
check("\r  simulating... " in out and "operations" not in out, "closed form: elapsed time only: %r" % out[-200:])
# SimGrid simulates in a forked child, whose reports reach the parent's meter (shared counters).
out = on_tty(["collective", "scenarios/fire-flyer-2.json", "--algo", "hfreduce", "--gpus", "16", "--engine", "simgrid"])
check(re.search(r"\r  simulating \[#{24}\] 100% of [0-9.]+[kMG]? operations", out) is not None,
      "simgrid: the child's operations, all done: %r" % out[-300:])

# 2. A training step with simulated collectives: the count it simulates, then its operations.
train = ["train", "scenarios/train-vgg16-ddp.json", "--gpus", "32,64"]
out = on_tty(train)
# Every line drawn says what it simulates: the collectives first (their elapsed time), then each
# count in turn with its operations (which of them a redraw catches depends on the machine's speed;
# the last count's is drawn as it closes), or, before train names anything, the elapsed time alone.
lines = [l for l in out.split("\r") if l.strip()]
named = r"  simulating (the collectives of 2 GPU counts\.\.\. [0-9.]+ s|(32 GPUs \(1/2\)|64 GPUs \(2/2\)) \[[#.]{24}\] .*)"
odd = [l for l in lines if not re.fullmatch(named + r"|  simulating\.\.\. [0-9.]+ s", l.rstrip())]
check(not odd and any(re.match(named, l) for l in lines), "train: what it simulates: %r" % (odd or out[-300:]))
check(re.search(r"\r  simulating 64 GPUs \(2/2\) \[#{24}\] 100% of", out) is not None,
      "train: the last count, all done: %r" % out[-300:])
cleared(out, "train")
check("simulating" not in on_tty(train + ["--quiet"]), "train --quiet: nothing")
check("\r" not in piped(train), "train, stderr not a terminal: nothing")

# 3. ops (in a forked child too): the share of the horizon simulated, to all of it.
out = on_tty(["ops", "scenarios/ops-fire-flyer-2.json", "--horizon", "1d"])
check(re.search(r"\r  simulating operations \[#{24}\] 100% of the simulated time", out) is not None,
      "ops: the simulated time, all of it: %r" % out[-300:])

# 4. net and ops: a line while they run, none with --quiet.
for args in (["net", "scenarios/fire-flyer-2.json", "bandwidth"], ["ops", "scenarios/ops-fire-flyer-2.json", "--horizon", "1d"]):
    out = on_tty(args)
    check("\r  simulating" in out, "%s: a line: %r" % (args[0], out[-200:]))
    cleared(out, args[0])
    check("simulating" not in on_tty(args + ["--quiet"]), args[0] + " --quiet: nothing")
    check("\r" not in piped(args), args[0] + ", stderr not a terminal: nothing")

print("FAILED: %d" % len(failures) if failures else "ok")
sys.exit(1 if failures else 0)
