#!/usr/bin/env bash
# The commit of `ffsim --version` comes from cmake/git_version.cmake: `git describe --always
# --dirty` of the source tree, "unknown" where the tree is not a git checkout (a tarball, or a tree
# unpacked inside another repository). Checks the script on both, and that the built binary names
# a commit of this repository (not a stale one: the build reruns the script every time).
# Usage: git_version_test.sh SOURCE_DIR FFSIM
# SPDX-License-Identifier: Apache-2.0
set -uo pipefail
src=$1 ffsim=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
printf '@PROJECT_VERSION@ @FFSIM_GIT_COMMIT@\n' > "$tmp/in"
gv() { cmake -DSRC="$1" -DIN="$tmp/in" -DOUT="$tmp/out" -DVERSION=9.8.7 -P "$src/cmake/git_version.cmake" && cat "$tmp/out"; }
# Not a checkout: "unknown".
mkdir "$tmp/tarball"
[ "$(gv "$tmp/tarball")" = "9.8.7 unknown" ] || fail "outside git: $(gv "$tmp/tarball")"
command -v git > /dev/null && git -C "$src" rev-parse --show-toplevel > /dev/null 2>&1 || { echo "not a git checkout: skipped"; exit 77; }
# Inside another repository's tree, but not its top: still "unknown".
git init -q "$tmp/repo" && mkdir "$tmp/repo/sub" &&
  [ "$(gv "$tmp/repo/sub")" = "9.8.7 unknown" ] || fail "a folder inside another repository: $(gv "$tmp/repo/sub")"
# The source tree: what git describe says now.
want=$(git -C "$src" describe --always --dirty)
[ "$(gv "$src")" = "9.8.7 $want" ] || fail "the source tree: $(gv "$src"), want $want"
# The binary's commit is one of this repository's (dirty or not, as when it was built).
got=$("$ffsim" --version | sed -n 's/^ffsim [0-9.]* (commit \(.*\))$/\1/p')
[ -n "$got" ] || fail "--version: $("$ffsim" --version)"
git -C "$src" rev-parse -q --verify "${got%-dirty}^{commit}" > /dev/null || fail "--version names $got, not a commit of $src"
if [ "$fails" -gt 0 ]; then
  echo "$fails failure(s)"
  exit 1
fi
echo "git version: all cases pass"
