#!/usr/bin/env bash
# The test command: installs dependencies, builds, and runs every test (ctest: unit, lit,
# end-to-end, real program, Intel PT). Tests that need Intel PT hardware print a SKIP line.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/llvm-choice.sh # PTCALL_LLVM=N: the suite on LLVM N, in ./build-llvmN
scripts/setup.sh
scripts/build.sh
# ctest hides a skipped test's own words: say first whether the hardware tests can run here
ctest --test-dir "$build" -R '^pt-hw$' -V 2>&1 | sed -n 's/^[0-9]*: \(SKIP.*\)/\1/p'
ctest --test-dir "$build" --output-on-failure -j"$(nproc)" --timeout 900
