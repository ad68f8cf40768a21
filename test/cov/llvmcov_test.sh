#!/bin/sh
# ctest cov-llvm: builds the zlib harness with ptcall-cc and with llvm-cov instrumentation
# (bench/cov/zlib-build.sh; exit 77 when the sources cannot be fetched), then compares the
# function sets and the line coverage input by input (llvmcov_compare.py; the ptcall build
# is ptcall-cc -fptcall-cov).
#   llvmcov_test.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -eu
build=$1
src=$2
work=$3
mkdir -p "$work"
llvm_bin=${PTCALL_LLVM_BIN:-/usr/lib/llvm-14/bin}
for tool in clang llvm-profdata llvm-cov; do
    [ -x "$llvm_bin/$tool" ] || { echo "cov-llvm: $tool not found"; exit 77; }
done
rc=0
"$src/bench/cov/zlib-build.sh" "$work" ptcall "$build" >/dev/null || rc=$?
[ $rc -eq 0 ] || exit $rc
"$src/bench/cov/zlib-build.sh" "$work" llvmcov >/dev/null
exec python3 "$src/test/cov/llvmcov_compare.py" --ptcall "$build/tools/ptcall" \
    --ptcall-target "$work/ptcall/zlib_fuzz" --llvm-target "$work/llvmcov/zlib_fuzz" \
    --afl "$src/test/cov/data/afl-zlib" --work "$work/cmp" --lines
