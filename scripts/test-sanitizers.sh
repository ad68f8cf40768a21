#!/usr/bin/env bash
# The whole test suite once more on a build made with clang-14 and AddressSanitizer +
# UndefinedBehaviorSanitizer (leaks detected, every report fatal), in ./build-asan (or
# $PTCALL_ASAN_DIR). About 4 minutes of build and 3 of tests on two cores; CI runs it after
# the README's test command (.ci/run). Tests that cannot run under it say SKIP (valgrind cannot read clang 14's
# DWARF 5 in the runtime; the process RSS bound of pt-stream-mem).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
build=${PTCALL_ASAN_DIR:-build-asan}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang-14 \
  -DPTCALL_SANITIZE=ON >/dev/null
ninja -C "$build" -j"$(nproc)"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir "$build" --output-on-failure -j"$(nproc)" --timeout 900
