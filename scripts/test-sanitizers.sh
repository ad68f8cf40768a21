#!/usr/bin/env bash
# The whole test suite once more on a build made with clang-14 and AddressSanitizer +
# UndefinedBehaviorSanitizer (leaks detected, every report fatal), in ./build-asan (or
# $PTCALL_ASAN_DIR; with PTCALL_LLVM=N, clang N in ./build-asan-llvmN). About 4 minutes of build and 3 of tests on two cores; CI runs it after
# the README's test command (.ci/run). Tests that cannot run under it say SKIP (valgrind cannot read clang 14's
# DWARF 5 in the runtime; the process RSS bound of pt-stream-mem).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/llvm-choice.sh # PTCALL_LLVM=N: clang N, in ./build-asan-llvmN
scripts/setup.sh
llvm=${PTCALL_LLVM:-14}
if [ "$build" = build ]; then build=${PTCALL_ASAN_DIR:-build-asan}; else build=${PTCALL_ASAN_DIR:-build-asan-llvm$llvm}; fi
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER="clang-$llvm" \
  -DPTCALL_LLVM="$llvm" -DPTCALL_SANITIZE=ON >/dev/null
ninja -C "$build" -j"$(nproc)"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir "$build" --output-on-failure -j"$(nproc)" --timeout 900
