#!/usr/bin/env bash
# Installs what is missing, builds (warnings are errors) and runs every test through ctest.
# Usage: scripts/test.sh [--sanitize]   (--sanitize: a separate ASan+UBSan build in build-sanitize/)
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
ffsim_install_deps
dir=build
args=(-DCMAKE_BUILD_TYPE=Release -DFFSIM_WERROR=ON)
if [ "${1:-}" = "--sanitize" ]; then
  dir=build-sanitize
  args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DFFSIM_WERROR=ON -DFFSIM_SANITIZE=ON)
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fi
ffsim_build "$dir" "${args[@]}"
ctest --test-dir "$dir" --output-on-failure -j "$(nproc)"
