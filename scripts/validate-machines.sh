#!/usr/bin/env bash
# Issue 27's check 1 on every committed CPU machine, as it stands now: `ffsim validate` of each
# committed measurement set with its machine's calibration, held out in 5 folds (every point
# predicted by a fit to the others) and with the 30% interior holdout, on the analytic engine.
# Prints one markdown table per way, each cell the stage's held-out MAPE / its bar (max(10%, the
# stage's run-to-run spread)), bold where met, and writes them to docs/validate-machines.md with
# the date, the commit and the commands.
# Usage: scripts/validate-machines.sh   (about 5 minutes on 2 cores; the sets are listed below)
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail
[ $# -eq 0 ] || { echo "usage: scripts/validate-machines.sh (no arguments; the sets are listed in the script)" >&2; exit 2; }
source "$(dirname "$0")/ffsim-env.sh" "$@"
out=docs/validate-machines.md
m=models/measured
log=$(mktemp)  # validate's stderr, shown where a set fails
new=$(mktemp)  # the tables, moved onto $out once every set has its rows (a failure leaves $out as it was)
trap 'rm -f "$log" "$new"' EXIT
# label | calibration (models/calibrated/<name>.json) | measurement files
sets=(
  "Zen 3 VM (\`epyc-zen3-2c-vm-2026-12-06-all\`)|epyc_zen3_2c_vm|$m/epyc-zen3-2c-vm-2026-12-06-all{,-np2,-np4}.json"
  "Xeon VM, 105 MiB L3 (\`xeon-2c-vm-2026-12-01\`)|xeon_2c_vm|$m/xeon-2c-vm-2026-12-01{,-np2,-np4}.json"
  "Xeon VM, 105 MiB L3, both runs (\`-2026-12-01{,-repeat-a}\`)|xeon_2c_vm|$m/xeon-2c-vm-2026-12-01{,-repeat-a}{,-np2,-np4}.json"
  "Zen 5 VM (\`epyc-zen5-2c-vm-2026-12-02\`)|epyc_zen5_2c_vm|$m/epyc-zen5-2c-vm-2026-12-02{,-np2,-np4}.json"
  "Zen 5 VM (\`-2026-12-03\`)|epyc_zen5_2c_vm|$m/epyc-zen5-2c-vm-2026-12-03{,-np2,-np4}.json"
  "Zen 5 VM (\`-2026-12-06\`)|epyc_zen5_2c_vm|$m/epyc-zen5-2c-vm-2026-12-06{,-np2,-np4}.json"
  "Zen 5 VM (\`-2026-12-07\`)|epyc_zen5_2c_vm|$m/epyc-zen5-2c-vm-2026-12-07{,-np2,-np4}.json"
  "Zen 5 VM, the caller polling (\`-2026-12-07-callerpoll\`)|epyc_zen5_2c_vm|$m/epyc-zen5-2c-vm-2026-12-07-callerpoll{,-np2,-np4}.json"
  "Zen 5 VM, four runs (\`-2026-12-0{2,3,6,7}\`)|epyc_zen5_2c_vm|$m/epyc-zen5-2c-vm-2026-12-0{2,3,6,7}{,-np2,-np4}.json"
  "Xeon VM, 480 MiB L3 (\`xeon-l3-480m-2c-vm-2026-12-07\`)|xeon_l3_480m_2c_vm|$m/xeon-l3-480m-2c-vm-2026-12-07{,-np2,-np4}.json"
  "the same, synchronize polling (\`-streampoll\`)|xeon_l3_480m_2c_vm|$m/xeon-l3-480m-2c-vm-2026-12-07-streampoll{,-np2,-np4}.json"
  "the same, the bench's barrier polling (\`-barrier\`)|xeon_l3_480m_2c_vm|$m/xeon-l3-480m-2c-vm-2026-12-07-barrier{,-np2,-np4}.json"
  "the same, receives one slice at a time (\`-receives\`)|xeon_l3_480m_2c_vm|$m/xeon-l3-480m-2c-vm-2026-12-07-receives{,-np2,-np4}.json"
  "the same run again (\`-receives-repeat-a\`)|xeon_l3_480m_2c_vm|$m/xeon-l3-480m-2c-vm-2026-12-07-receives-repeat-a{,-np2,-np4}.json"
  "both (\`-receives{,-repeat-a}\`)|xeon_l3_480m_2c_vm|$m/xeon-l3-480m-2c-vm-2026-12-07-receives{,-repeat-a}{,-np2,-np4}.json"
  "both, with two runs at nine MPI sizes a series (\`-12-08-dense{,-repeat-a}-np{2,4}\`)|xeon_l3_480m_2c_vm|$m/xeon-l3-480m-2c-vm-2026-12-07-receives{,-repeat-a}{,-np2,-np4}.json $m/xeon-l3-480m-2c-vm-2026-12-08-dense{,-repeat-a}-np{2,4}.json"
)
# One row: the five stages of the check, then all stages (MAPE only).
row() {  # label calibration way files...
  local label=$1 cal=$2 way=$3
  shift 3
  local json
  # shellcheck disable=SC2086  # $way is empty or two words
  json=$($FF validate "$@" --calibration "models/calibrated/$cal.json" --engine analytic $way --json 2>"$log") ||
    { echo "validate-machines: ffsim validate failed on $label:" >&2; cat "$log" >&2; exit 1; }
  LABEL="$label" python3 -c '
import json, os, sys
mape = json.load(sys.stdin)["mape"]
cells = []
for s in ("copy", "reduce", "pipeline", "internode", "allreduce"):
    v = mape.get(s) or {}
    if v.get("analytic") is None:
        cells.append("-")
        continue
    got, bar = 100 * v["analytic"], 100 * v["target"]
    c = f"{got:.1f} / {bar:.0f}" if abs(bar - round(bar)) < 0.05 else f"{got:.1f} / {bar:.1f}"
    cells.append(f"**{c}**" if v.get("target_met") else c)
a = (mape.get("all") or {}).get("analytic")
cells.append("-" if a is None else f"{100 * a:.1f}")
print("| " + os.environ["LABEL"] + " | " + " | ".join(cells) + " |")' <<<"$json"
}
table() {  # way title
  local way=$1
  echo
  echo "$2"
  echo
  echo "| machine (set) | copy | reduce | pipeline | internode | allreduce | all stages |"
  echo "|---|---|---|---|---|---|---|"
  for s in "${sets[@]}"; do
    IFS='|' read -r label cal pattern <<<"$s"
    # the pattern's braces expanded into the files
    eval "files=($pattern)"
    row "$label" "$cal" "$way" "${files[@]}"
  done
}
{
  echo "# Issue 27's check 1: held-out MAPE per stage on every committed CPU machine"
  echo
  echo "$(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- src models 2>/dev/null || echo ' with uncommitted changes under src/ or models/'), written by \`scripts/validate-machines.sh\`:"
  echo "for each set, \`build/ffsim validate FILES --calibration models/calibrated/<machine>.json --engine analytic\`"
  echo "with \`--folds 5\` (first table) or the default 30% interior holdout (second). Each cell: the stage's"
  echo "held-out MAPE / its bar, max(10%, the stage's run-to-run spread), bold where met; validate refits the"
  echo "machine's model on each fold's training points, so the cells do not depend on which run the committed"
  echo "calibration was fitted on. What each set is: docs/calibration.md."
  table "--folds 5" "Held out in 5 folds (every point predicted once):"
  table "" "Held out, the 30% interior holdout (one fit; internode and allreduce rest on 4 points each, 12 in the set with nine MPI sizes):"
} | tee "$new"
chmod 644 "$new"
mv "$new" "$out"
