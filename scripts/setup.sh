#!/usr/bin/env bash
# Installs everything ptcall needs to build, test and benchmark, from Debian 12's packages.
# Idempotent; run as root (or with sudo available).
set -euo pipefail
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
pkgs=(
  build-essential cmake ninja-build pkg-config
  clang-14 llvm-14-dev llvm-14-tools lld-14 libclang-rt-14-dev
  libipt-dev libelf-dev zlib1g-dev
  python3 valgrind uftrace binutils dpkg-dev
)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
