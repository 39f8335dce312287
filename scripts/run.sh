#!/usr/bin/env bash
# The main job: install what is missing, build Release, and show what ffsim says about a
# scenario (default scenarios/fire-flyer-2.json).
# Usage: scripts/run.sh [scenario.json]
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
ffsim_install_deps
mkdir -p build
ffsim_build build -DCMAKE_BUILD_TYPE=Release > build/build.log 2>&1 || { cat build/build.log; exit 1; }
scenario="${1:-scenarios/fire-flyer-2.json}"
build/ffsim summary "$scenario"
# With no scenario given: a year of the same cluster's operations too (jobs, failures, checkpoints;
# docs/commands/ops.md), about 3 s.
if [ $# -eq 0 ]; then
  echo
  build/ffsim ops scenarios/ops-fire-flyer-2.json
fi
