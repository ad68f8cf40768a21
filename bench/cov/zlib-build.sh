#!/bin/sh
# Builds the zlib harness (bench/cov/zlib_harness.c) over Debian's zlib sources, one way:
#   bench/cov/zlib-build.sh WORKDIR KIND [PTCALL_BUILD_DIR]
#   KIND afl      afl-clang-fast -O1 -g                  -> WORKDIR/afl/zlib_fuzz
#        ptcall   ptcall-cc -fptcall-cov -O1 -g          -> WORKDIR/ptcall/zlib_fuzz
#        ptcall-fn  ptcall-cc, PTCALL_PLACEMENT=early -O1 -g (functions only) -> WORKDIR/ptcall-fn/
#        llvmcov  clang (PTCALL_LLVM_BIN, else LLVM 14) -fprofile-instr-generate -fcoverage-mapping -O1 -> WORKDIR/llvmcov/zlib_fuzz
# The sources come from WORKDIR/src (unpacked from `apt-get source --download-only zlib`,
# Debian's deb-src archive) when absent. Exit 77 when they cannot be had (the tests skip).
set -eu
work=$1
kind=$2
ptb=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work"
work=$(cd "$work" && pwd)
if [ ! -f "$work/src/zlib.h" ]; then
    rm -rf "$work/dl" && mkdir -p "$work/dl"
    (cd "$work/dl" && apt-get source --download-only zlib >/dev/null 2>&1) || {
        echo "zlib-build: cannot fetch Debian's zlib sources (apt-get source zlib; needs deb-src)" >&2
        exit 77
    }
    tarball=$(ls "$work"/dl/zlib_*.orig.tar.* | head -1)
    mkdir -p "$work/src.tmp"
    tar xf "$tarball" -C "$work/src.tmp" --strip-components=1
    rm -rf "$work/src" && mv "$work/src.tmp" "$work/src"
fi
srcs="adler32.c compress.c crc32.c deflate.c gzclose.c gzlib.c gzread.c gzwrite.c infback.c
      inffast.c inflate.c inftrees.c trees.c uncompr.c zutil.c"
case $kind in
    afl) cc="afl-clang-fast"; flags="-O1 -g" ;;
    ptcall) cc="$ptb/bin/ptcall-cc"; flags="-O1 -g -fptcall-cov" ;;
    # the same build without -fptcall-cov (early placement, no block counters): for the cost
    ptcall-fn) cc="$ptb/bin/ptcall-cc"; flags="-O1 -g"; export PTCALL_PLACEMENT=early ;;
    llvmcov) cc="${PTCALL_LLVM_BIN:-/usr/lib/llvm-14/bin}/clang"; flags="-O1 -g -fprofile-instr-generate -fcoverage-mapping" ;;
    *) echo "zlib-build: KIND is afl, ptcall, ptcall-fn or llvmcov" >&2; exit 2 ;;
esac
out="$work/$kind"
mkdir -p "$out/obj"
objs=""
for s in $srcs; do
    o="$out/obj/${s%.c}.o"
    # -DHAVE_HIDDEN etc. as zlib's configure would; Z_SOLO not set: the gz* API is built
    AFL_QUIET=1 $cc $flags -D_LARGEFILE64_SOURCE=1 -DHAVE_HIDDEN -I"$work/src" -c "$work/src/$s" -o "$o"
    objs="$objs $o"
done
AFL_QUIET=1 $cc $flags -I"$work/src" -c "$here/zlib_harness.c" -o "$out/obj/zlib_harness.o"
AFL_QUIET=1 $cc $flags -o "$out/zlib_fuzz" "$out/obj/zlib_harness.o" $objs
echo "$out/zlib_fuzz"
