#!/usr/bin/env bash
# Configures and builds ptcall in ./build (or $PTCALL_BUILD_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${PTCALL_BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPTCALL_WERROR=ON >/dev/null
ninja -C "$build" -j"$(nproc)"
