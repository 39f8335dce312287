#!/usr/bin/env python3
# Every ffsim command the README shows runs as shown: each line of a fenced code block that starts
# with `build/ffsim` (or `$ build/ffsim`, a sample's first line) is run from the repository root
# under bash, with build/ffsim replaced by the binary under test, and must exit 0, or the code its
# trailing comment documents (`# ... exit 3`). A line ending in `\` continues on the next. The
# scripts (scripts/run.sh, scripts/test.sh) are not run: they build and test the project.
# Expectation: README shows at least 5 such commands (the tour, the what-if); fewer means the
# pattern no longer matches how README writes them, and the test would pass having run nothing.
# Usage: readme_commands_test.py <repository root> <ffsim binary> [FILE.md ...]  (default: README.md)
# SPDX-License-Identifier: Apache-2.0
import os
import re
import subprocess
import sys

root, ffsim = sys.argv[1], os.path.abspath(sys.argv[2])
files = sys.argv[3:] or ["README.md"]
COMMAND = re.compile(r"^(?:\$ )?build/ffsim(?=\s|$)")
DOCUMENTED_EXIT = re.compile(r"#.*\bexit (\d+)\b")


def commands(path):
    """Yields (line number, command line) for every ffsim command in a fenced block of path."""
    lines = open(os.path.join(root, path), encoding="utf-8").read().split("\n")
    in_block = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            in_block = not in_block
        elif in_block and COMMAND.match(line):
            start = i
            while line.endswith("\\") and i + 1 < len(lines):
                i += 1
                line = line[:-1] + " " + lines[i].strip()
            yield start + 1, line[2:] if line.startswith("$ ") else line
        i += 1


ran = 0
failures = []
for path in files:
    for number, cmd in commands(path):
        m = DOCUMENTED_EXIT.search(cmd)
        want = int(m.group(1)) if m else 0
        run = ffsim + cmd[len("build/ffsim"):]
        try:
            r = subprocess.run(["bash", "-c", run], cwd=root, capture_output=True, text=True, timeout=300)
        except subprocess.TimeoutExpired:
            failures.append(f"{path}:{number}: did not finish in 300 s: {cmd}")
            continue
        ran += 1
        if r.returncode != want:
            failures.append(f"{path}:{number}: exit {r.returncode}, documented {want}: {cmd}\n{r.stderr[-2000:]}")
for f in failures:
    print("FAIL:", f)
print(f"{ran} commands of {', '.join(files)} run, {len(failures)} failed")
if ran < 5:
    sys.exit(f"only {ran} ffsim commands found in {', '.join(files)}: does the pattern still match?")
sys.exit(1 if failures else 0)
