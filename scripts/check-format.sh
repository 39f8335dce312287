#!/usr/bin/env bash
# Checks C++ sources against .clang-format with clang-format-14.
# Usage: scripts/check-format.sh          the lines changed since the merge base with main, committed
#                                         or not (FFSIM_FORMAT_BASE=<rev> sets another base)
#        scripts/check-format.sh --fix    reformats those lines in place
#        scripts/check-format.sh --all    every C++ file under src/ and tests/, whole (the tree predates
#                                         .clang-format: this lists the files that differ and counts lines)
#        scripts/check-format.sh FILE...  the given files, whole
# Exit: 0 formatted, 1 not (the differences are printed), 2 usage or no clang-format-14.
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail
cd "$(dirname "$0")/.."
cf=${CLANG_FORMAT:-clang-format-14}
cfd=${CLANG_FORMAT_DIFF:-clang-format-diff-14}
command -v "$cf" > /dev/null || { echo "check-format: $cf not found" >&2; exit 2; }
exts=('*.cpp' '*.hpp' '*.h' '*.cu')

whole_files() {
  local bad=0 lines=0 n
  for f in "$@"; do
    n=$("$cf" --style=file "$f" | diff "$f" - | grep -c '^>' || true)
    if [ "$n" -gt 0 ]; then
      echo "$f: $n line(s) differ"
      bad=$((bad + 1))
      lines=$((lines + n))
    fi
  done
  if [ "$bad" -gt 0 ]; then
    echo "check-format: $bad of $# file(s) differ from .clang-format ($lines line(s)); see $cf --style=file FILE" >&2
    return 1
  fi
  echo "check-format: $# file(s) formatted"
}

case "${1:-}" in
  --all)
    mapfile -t files < <(git ls-files -- "${exts[@]/#/src/}" "${exts[@]/#/tests/}")
    whole_files "${files[@]}"
    exit $?
    ;;
  --fix | "") ;;
  -*) sed -n '2,9p' "$0" >&2; exit 2 ;;
  *) whole_files "$@"; exit $? ;;
esac

command -v "$cfd" > /dev/null || { echo "check-format: $cfd not found" >&2; exit 2; }
base=${FFSIM_FORMAT_BASE:-$(git merge-base HEAD main 2> /dev/null || git rev-parse HEAD)}
# Changed lines only (-U0) of tracked files, from the base to the working tree; new files count whole
# once added to git.
changes=$(git diff -U0 --no-color "$base" -- "${exts[@]}")
if [ "${1:-}" = "--fix" ]; then
  [ -z "$changes" ] || printf '%s\n' "$changes" | "$cfd" -p1 -i -binary "$(command -v "$cf")"
  exit 0
fi
out=$([ -z "$changes" ] || printf '%s\n' "$changes" | "$cfd" -p1 -binary "$(command -v "$cf")")
if [ -n "$out" ]; then
  printf '%s\n' "$out"
  echo "check-format: lines changed since $(git rev-parse --short "$base") differ from .clang-format (scripts/check-format.sh --fix)" >&2
  exit 1
fi
echo "check-format: the lines changed since $(git rev-parse --short "$base") are formatted"
