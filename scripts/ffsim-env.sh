# Sourced by the scripts that run the built ffsim (bench-sim.sh, sensitivity.sh, plots.sh):
# works from the repository root and sets FF (the binary), SC (the default scenario) and quick
# (1 when the script's first argument is --quick). Usage: source scripts/ffsim-env.sh "$@"
# SPDX-License-Identifier: Apache-2.0
cd "$(dirname "${BASH_SOURCE[0]}")/.."
FF=build/ffsim
SC=scenarios/fire-flyer-2.json
[ -x "$FF" ] || { echo "build first (scripts/run.sh or scripts/test.sh)"; exit 1; }
quick=0
if [ "${1:-}" = "--quick" ]; then quick=1; fi
