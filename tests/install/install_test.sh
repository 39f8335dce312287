#!/usr/bin/env bash
# `cmake --install` gives what a C++ user expects, and the installed ffsim runs from anywhere
# (issue 33: nothing was installed, and the binary read the source tree's models/ by a path
# compiled in). Installs BUILD into a temporary prefix, then, from another folder: --version,
# summary, the models lookup (installed catalog, a copied installation, FFSIM_MODELS, several
# --models folders), and a project outside the tree built with find_package(hfreduce).
# Usage: install_test.sh SOURCE_DIR BUILD_DIR GENERATOR
# SPDX-License-Identifier: Apache-2.0
set -uo pipefail
src=$1 build=$2 generator=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

cmake --install "$build" --prefix "$tmp/p" > "$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; echo "FAIL: cmake --install"; exit 1; }
for f in bin/ffsim bin/hfreduce-bench include/ffsim/hfreduce/hfreduce.hpp share/ffsim/models/gpus; do
  [ -e "$tmp/p/$f" ] || fail "the installation lacks $f"
done
ls "$tmp/p"/lib*/libhfreduce.a > /dev/null 2>&1 || fail "the installation lacks libhfreduce.a"
ls "$tmp/p"/lib*/cmake/hfreduce/hfreduceConfig.cmake > /dev/null 2>&1 || fail "the installation lacks hfreduceConfig.cmake"

mkdir "$tmp/elsewhere"
cd "$tmp/elsewhere" || exit 1
ffsim=$tmp/p/bin/ffsim
# --version: the project version and the commit ("unknown" outside a git checkout).
"$ffsim" --version | grep -Eq '^ffsim [0-9]+\.[0-9]+\.[0-9]+ \(commit [^ )]+\)$' || fail "--version: $("$ffsim" --version)"
# The main job, from another folder, with the installed catalog (no --models, no FFSIM_MODELS).
env -u FFSIM_MODELS "$ffsim" summary "$src/scenarios/fire-flyer-2.json" > out.txt 2> err.txt || fail "summary: $(head -3 err.txt)"
grep -q "^Scenario fire-flyer-2" out.txt || fail "summary printed no scenario: $(head -3 out.txt)"
env -u FFSIM_MODELS "$ffsim" models --sources > models.txt 2> err.txt || fail "models --sources: $(head -3 err.txt)"
grep -qF "Models folders (from the installation of $tmp/p/bin/ffsim" models.txt || fail "models --sources: $(grep -A1 "Models folders" models.txt)"
grep -qxF "  1. $tmp/p/share/ffsim/models" models.txt || fail "models --sources: not the installed catalog: $(grep -A1 "Models folders" models.txt)"
# A copied installation reads its own catalog, not the one it was copied from.
cp -r "$tmp/p" "$tmp/copy"
env -u FFSIM_MODELS "$tmp/copy/bin/ffsim" models --sources > models.txt 2>&1
grep -qxF "  1. $tmp/copy/share/ffsim/models" models.txt || fail "a copied installation: $(grep -A1 "Models folders" models.txt)"
# FFSIM_MODELS overrides the installed catalog; --models overrides FFSIM_MODELS.
FFSIM_MODELS=$src/models "$ffsim" models --sources > models.txt 2>&1
grep -qF "Models folders (from \$FFSIM_MODELS" models.txt && grep -qxF "  1. $src/models" models.txt || fail "FFSIM_MODELS: $(grep -A1 "Models folders" models.txt)"
# Several --models folders: a later one overrides an earlier one by name (a100_pcie_40gb with
# 80 GB of memory here), and says so.
mkdir -p extra/gpus
sed 's/"memory": {"value": "40GB"/"memory": {"value": "80GB"/' "$src/models/gpus/a100_pcie_40gb.json" > extra/gpus/a100_pcie_40gb.json
cmp -s extra/gpus/a100_pcie_40gb.json "$src/models/gpus/a100_pcie_40gb.json" && fail "the override test changed nothing (the memory fact's form changed?)"
FFSIM_MODELS=/nowhere "$ffsim" --models "$tmp/p/share/ffsim/models" --models extra models --kind gpu --sources > models.txt 2> err.txt ||
  fail "--models twice: $(head -3 err.txt)"
grep -qF "gpu a100_pcie_40gb: extra/gpus/a100_pcie_40gb.json replaces $tmp/p/share/ffsim/models/gpus/a100_pcie_40gb.json" models.txt ||
  fail "--models twice: no override line: $(grep -A3 "Models folders" models.txt)"
grep -Eq "^  a100_pcie_40gb +pcie +80" models.txt || fail "--models twice: the later folder's a100_pcie_40gb is not the one listed: $(grep a100_pcie models.txt | head -2)"
"$ffsim" --models "$tmp/p/share/ffsim/models,extra" models --kind gpu > models2.txt 2>&1
grep -Eq "^  a100_pcie_40gb +pcie +80" models2.txt || fail "--models A,B: $(grep a100_pcie models2.txt | head -2)"

# find_package(hfreduce) in a project of its own.
gen=()
[ -n "$generator" ] && gen=(-G "$generator")
if cmake -S "$src/tests/install/consumer" -B "$tmp/consumer" "${gen[@]}" -DCMAKE_PREFIX_PATH="$tmp/p" > "$tmp/consumer.log" 2>&1 &&
  cmake --build "$tmp/consumer" >> "$tmp/consumer.log" 2>&1; then
  "$tmp/consumer/consumer" || fail "the consumer of hfreduce::hfreduce failed"
else
  tail -20 "$tmp/consumer.log"
  fail "a project with find_package(hfreduce) did not build"
fi

if [ "$fails" -gt 0 ]; then
  echo "$fails failure(s)"
  exit 1
fi
echo "install: all cases pass"
