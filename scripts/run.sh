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
exec build/ffsim summary "$scenario"
