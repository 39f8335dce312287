#!/usr/bin/env bash
# Installs the Debian 12 packages ffsim needs, and only those that are missing (idempotent:
# apt-get is not called when everything is present). Sourced by run.sh and test.sh.
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail

FFSIM_PACKAGES=(
  cmake g++ ninja-build pkg-config
  libsimgrid-dev nlohmann-json3-dev libcli11-dev libeigen3-dev doctest-dev
  openmpi-bin libopenmpi-dev libnuma-dev
  zlib1g-dev
)

ffsim_install_deps() {
  local missing=()
  for p in "${FFSIM_PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$p")
    fi
  done
  if [ ${#missing[@]} -eq 0 ]; then
    return 0
  fi
  echo "ffsim: installing missing packages: ${missing[*]}"
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
      echo "ffsim: not root and no sudo: install these packages first: ${missing[*]}" >&2
      return 1
    fi
  fi
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# Configures and builds into $1 with extra CMake arguments $2...
ffsim_build() {
  local dir="$1"; shift
  local gen=()
  command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
  if [ ! -f "$dir/CMakeCache.txt" ]; then
    cmake -S . -B "$dir" "${gen[@]}" "$@"
  else
    cmake -S . -B "$dir" "$@" >/dev/null
  fi
  cmake --build "$dir" -j "$(nproc)"
}
