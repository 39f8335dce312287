#!/usr/bin/env python3
# A trace file ffsim wrote (--trace) is Chrome trace JSON with content: {"traceEvents": [...]},
# at least MIN complete ("X") events, each with a name, a process and a track that a metadata
# ("M") event names, ts >= 0 and dur >= 0 (nothing ends before it starts).
# Usage: trace_check.py <trace.json> <MIN>
# SPDX-License-Identifier: Apache-2.0
import json
import sys

path, least = sys.argv[1], int(sys.argv[2])
doc = json.load(open(path, encoding="utf-8"))
events = doc["traceEvents"]
named = {(e["pid"], e.get("tid")) for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"}
processes = {e["pid"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
complete = [e for e in events if e.get("ph") == "X"]
bad = [e for e in complete
       if not e.get("name") or e["pid"] not in processes or (e["pid"], e["tid"]) not in named
       or e["ts"] < 0 or e["dur"] < 0]
print(f"{path}: {len(events)} events, {len(complete)} complete, {len(bad)} malformed")
for e in bad[:5]:
    print("  malformed:", e)
sys.exit(0 if len(complete) >= least and not bad else 1)
