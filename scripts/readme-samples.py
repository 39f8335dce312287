#!/usr/bin/env python3
"""Keeps the sample outputs in the documentation equal to what the build prints.

A fenced block that shows a command's output is marked by an HTML comment on the line before it:

    <!-- sample: CMD -->            the whole block is CMD's output
    <!-- sample: skip=N: CMD -->    the block's first N lines (the command as typed) are not compared

CMD runs under bash -o pipefail from the repository root with FFSIM set to the ffsim binary and TMP
to a scratch directory; filters (sed, grep) in CMD select the excerpt the block shows. Lines are
compared without trailing spaces. --check (the default) prints a diff per stale block and exits 1;
--update rewrites the blocks in place. Without FILEs it reads README.md and every docs/**/*.md.

After a change to any output, regenerate every sample with one command (docs/layout.md):

    scripts/readme-samples.py --ffsim build/ffsim --update

Usage: scripts/readme-samples.py --ffsim build/ffsim [--update] [-j N] [FILE...]
SPDX-License-Identifier: Apache-2.0
"""
import argparse
import concurrent.futures
import difflib
import glob
import os
import re
import subprocess
import sys
import tempfile

MARK = re.compile(r"^<!-- sample: (?:skip=(\d+): )?(.*) -->$")


def blocks(lines):
    """Yields (mark line index, skip, cmd, first content line, end fence line) per marked block."""
    i = 0
    while i < len(lines):
        m = MARK.match(lines[i])
        if m:
            if i + 1 >= len(lines) or not lines[i + 1].startswith("```"):
                raise SystemExit(f"line {i + 1}: a sample mark must be followed by a ``` fence")
            j = i + 2
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            if j == len(lines):
                raise SystemExit(f"line {i + 2}: the sample's fence is not closed")
            yield i, int(m.group(1) or 0), m.group(2), i + 2, j
            i = j
        i += 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ffsim", required=True)
    ap.add_argument("--update", action="store_true")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1, help="samples run side by side")
    ap.add_argument("files", nargs="*", help="default: README.md and docs/**/*.md")
    a = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    files = a.files or ["README.md"] + sorted(os.path.relpath(p, root) for p in
                                              glob.glob(os.path.join(root, "docs", "**", "*.md"), recursive=True))
    stale = checked = failed = 0
    with tempfile.TemporaryDirectory() as tmp, concurrent.futures.ThreadPoolExecutor(max(1, a.jobs)) as pool:
        def run(index, cmd):
            # Each sample has a scratch directory of its own, so that samples run side by side.
            scratch = os.path.join(tmp, str(index))
            os.mkdir(scratch)
            env = dict(os.environ, FFSIM=os.path.abspath(a.ffsim), TMP=scratch, LC_ALL="C")
            return subprocess.run(["bash", "-o", "pipefail", "-c", cmd], cwd=root, env=env, capture_output=True, text=True)
        found = []
        for path in files:
            with open(os.path.join(root, path)) as f:
                lines = f.read().split("\n")
            found.append((path, lines, list(blocks(lines))))
        results = {}
        for path, _, bl in found:
            for b in bl:
                results[(path, b[0])] = pool.submit(run, len(results), b[2])
        for path, lines, bl in found:
            full = os.path.join(root, path)
            out_lines = list(lines)
            shift = 0
            for mark, skip, cmd, first, end in bl:
                r = results[(path, mark)].result()
                if r.returncode != 0:
                    print(f"{path}:{mark + 1}: the sample's command failed (exit {r.returncode}): {cmd}\n{r.stderr}")
                    failed += 1
                    continue
                want = [l.rstrip() for l in r.stdout.rstrip("\n").split("\n")]
                have = [l.rstrip() for l in lines[first + skip:end]]
                checked += 1
                if want == have:
                    continue
                stale += 1
                if a.update:
                    new = lines[first:first + skip] + want
                    out_lines[first + shift:end + shift] = new
                    shift += len(new) - (end - first)
                    print(f"{path}:{mark + 1}: updated")
                else:
                    print(f"{path}:{mark + 1}: the sample differs from what the build prints ({cmd})")
                    sys.stdout.writelines(l + "\n" for l in difflib.unified_diff(have, want, "documented", "printed", lineterm="", n=1))
            if a.update and out_lines != lines:
                with open(full, "w") as f:
                    f.write("\n".join(out_lines))
    print(f"readme-samples: {checked} samples, {stale} {'updated' if a.update else 'stale'}, {failed} commands failed")
    return 1 if failed or (stale and not a.update) else 0


if __name__ == "__main__":
    sys.exit(main())
