#!/bin/sh
# A real AFL++ campaign on zlib (Debian's sources) with bench/cov/zlib_harness.c:
#   bench/cov/zlib-campaign.sh WORKDIR [SECONDS=300]
# Builds WORKDIR/afl/zlib_fuzz (bench/cov/zlib-build.sh), writes the seeds (one small valid
# input per mode of the harness) to WORKDIR/seeds and runs one afl-fuzz instance (Debian's
# afl++ 4.04c; one core) for SECONDS: its output is WORKDIR/out (out/default/queue,
# crashes, hangs). test/cov/data/afl-zlib holds a subset of such a queue; docs/cov.md and
# docs/benchmarks.md say how it was made.
set -eu
work=$1
secs=${2:-300}
here=$(cd "$(dirname "$0")" && pwd)
"$here/zlib-build.sh" "$work" afl >/dev/null
mkdir -p "$work/seeds"
python3 - "$work/seeds" <<'PY'
import gzip, os, sys, zlib
d = sys.argv[1]
data = b"hello hello hello zlib fuzzing harness " * 4
dic = b"the quick brown fox jumps over the lazy dog 0123456789"
c = zlib.compressobj(9, zlib.DEFLATED, -15); raw = c.compress(data) + c.flush()
k = zlib.compressobj(6, zlib.DEFLATED, 15, 8, 0, dic)
seeds = {"inflate": b"\0" + zlib.compress(data), "gzip": b"\0" + gzip.compress(data),
         "raw": b"\1" + raw, "roundtrip": b"\2\6\0\7" + data,
         "uncompress": b"\3" + zlib.compress(data, 1), "back": b"\4" + raw,
         "gzapi": b"\5" + gzip.compress(b"line one\nline two\n" + data),
         "dict": b"\6" + k.compress(data) + k.flush()}
for name, b in seeds.items():
    open(os.path.join(d, name), "wb").write(b)
PY
rm -rf "$work/out"
AFL_SKIP_CPUFREQ=1 AFL_NO_UI=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_AFFINITY=1 \
    afl-fuzz -i "$work/seeds" -o "$work/out" -V "$secs" -t 200 -- "$work/afl/zlib_fuzz" @@ \
    > "$work/afl-fuzz.log" 2>&1 || { tail -20 "$work/afl-fuzz.log" >&2; exit 1; }
n=$(ls "$work/out/default/queue" | wc -l)
echo "zlib-campaign: $n queue entries in $work/out/default/queue ($secs s)"
