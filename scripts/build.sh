#!/usr/bin/env bash
# Configures and builds ptcall in ./build (or $PTCALL_BUILD_DIR). PTCALL_LLVM=N builds the pass
# for LLVM N (in ./build-llvmN unless PTCALL_BUILD_DIR is set); unset, CMake chooses by the rule
# in docs/pass.md and prints its choice. PTCALL_CMAKE_ARGS: more -D options for CMake.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/llvm-choice.sh
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPTCALL_WERROR=ON \
  ${PTCALL_LLVM:+-DPTCALL_LLVM="$PTCALL_LLVM"} -DPTCALL_SANITIZER_TESTS=ON ${PTCALL_CMAKE_ARGS:-} >/dev/null
ninja -C "$build" -j"$(nproc)"
