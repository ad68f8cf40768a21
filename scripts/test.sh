#!/usr/bin/env bash
# The test command: installs dependencies, builds, and runs every test (ctest: unit, lit,
# end-to-end, real program, Intel PT). Tests that need Intel PT hardware print a SKIP line.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
build=${PTCALL_BUILD_DIR:-build}
ctest --test-dir "$build" --output-on-failure -j"$(nproc)" --timeout 900
# ctest hides a skipped test's own words: show why hardware tests were skipped
grep -h '^SKIP' "$build/Testing/Temporary/LastTest.log" || true
