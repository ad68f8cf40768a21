#!/usr/bin/env bash
# Long fuzzing runs of every libFuzzer target (test/fuzz, docs/pt.md "Fuzzing"),
# one after the other, each for SECONDS, on the corpus its earlier runs grew (kept in
# BUILD/fuzz-long/TARGET/corpus) plus fresh seeds (test/fuzz/seeds.sh). Prints the
# executions, the rate, the coverage (libFuzzer's edges "cov" and features "ft"), the crashes
# and the corpus size of each target and the total; exits 1 when a target crashed (its input
# is left in BUILD/fuzz-long/TARGET/, crash-* etc.: fix the bug, then add the input to
# test/fuzz/regress/KIND/ so that every run replays it).
#
#   scripts/fuzz-long.sh [SECONDS_PER_TARGET] [BUILD_DIR] [TARGET...]
#
# SECONDS_PER_TARGET defaults to 3600; BUILD_DIR to ./build (configured and built here:
# the targets need clang-14 with libFuzzer). TARGETs: decode perf-data pt-raw map pt-diff ptcov
# pt-trace db http (default: all). FUZZ_JOBS=N runs N targets at a time; each target runs as a series of fresh
# processes of FUZZ_SLICE seconds (300) on its corpus (see run_one). docs/pt.md ("Fuzzing") has
# the rates measured here and the last runs' figures.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
secs=${1:-3600}
build=${2:-build}
shift $(($# > 2 ? 2 : $#))
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(decode perf-data pt-raw map pt-diff ptcov pt-trace db http)
jobs=${FUZZ_JOBS:-1}
slice_secs=${FUZZ_SLICE:-300}

if [ ! -f "$build/build.ninja" ]; then
    cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
# as many jobs as cores, not ninja's default of more (the machines are shared)
ninja -C "$build" -j"$(nproc)" >/dev/null
b=$(cd "$build" && pwd)
f="$b/test/fuzz"
if [ ! -x "$f/fuzz_decode" ]; then
    echo "fuzz-long: no fuzz targets in $build (clang-14 with -fsanitize=fuzzer is needed:" \
         "Debian clang-14 and libclang-rt-14-dev)" >&2
    exit 2
fi
seeds="$root/test/fuzz/seeds.sh"

# target -> fuzzer, max input length, seed command (test/fuzz/CMakeLists.txt's)
spec() {
    case $1 in
    decode) echo "fuzz_decode 65536 decode $b/test/decoder/ptc_testgen" ;;
    perf-data) echo "fuzz_perf_data 65536 perf $b/test/fuzz/fuzz_seeds $b/test/pt/perf-data-real" ;;
    pt-raw) echo "fuzz_pt_raw 16384 raw $b/test/fuzz/fuzz_seeds" ;;
    pt-diff) echo "fuzz_pt_diff 16384 diff $b/test/fuzz/fuzz_seeds" ;;
    pt-trace) echo "fuzz_pt_trace 65536 ptc $b/test/fuzz/fuzz_seeds" ;;
    map)
        local objs="$b/test/pt/pt_stubprog $b/test/pt/libpt_stublib.so"
        [ -f "$b/test/runtime/rt_prog" ] && objs="$objs $b/test/runtime/rt_prog"
        [ -f "$b/test/runtime/librt_lib.so" ] && objs="$objs $b/test/runtime/librt_lib.so"
        echo "fuzz_map 65536 map python3 $b/bin/ptcall-cc $root $objs" ;;
    ptcov) echo "fuzz_ptcov 65536 ptcov $b/tools/ptcall $b/bin/ptcall-cc $root $b/test/cov" ;;
    db) echo "fuzz_db 65536 db python3 $root" ;;
    http) echo "fuzz_http 4096 http" ;;
    *) echo "fuzz-long: no target '$1' (decode perf-data pt-raw map pt-diff ptcov pt-trace db http)" >&2; return 1 ;;
    esac
}

run_one() {
    local t=$1 w="$b/fuzz-long/$1"
    read -r -a s <<<"$(spec "$t")"
    local fuzzer=${s[0]} maxlen=${s[1]}
    mkdir -p "$w/corpus"
    rm -rf "$w/seeds" && mkdir -p "$w/seeds"
    sh "$seeds" "${s[@]:2}" "$w/seeds" >"$w/seeds.log" 2>&1
    local before
    before=$(ls "$w" | grep -cE '^(crash|leak|timeout|oom)-' || true)
    # In slices of FUZZ_SLICE seconds, each a fresh process on the corpus the ones before
    # grew: AddressSanitizer keeps about 0.2 KB for every thread a process ever started, and
    # the PT targets start several per input (the parallel decode, side-by-side streams), so
    # one process for an hour would pass -rss_limit_mb (about 1.3 KB per execution of
    # fuzz_pt_diff: 2 GB after some 1.4 million) and stop with an out-of-memory "crash".
    local start=$SECONDS rc=0 execs=0 first=1 left n
    : >"$w/fuzz.log"
    while [ "$rc" -eq 0 ]; do
        left=$((secs - (SECONDS - start)))
        [ "$left" -ge 10 ] || [ "$first" -eq 1 ] || break
        [ "$left" -ge 1 ] || left=1
        local slice=$((left < slice_secs ? left : slice_secs)) dirs=(corpus)
        # the seeds (regression inputs among them) go in once; what they reach stays in corpus
        [ "$first" -eq 1 ] && dirs=(corpus seeds)
        first=0
        (cd "$w" && "$f/$fuzzer" -max_total_time="$slice" -timeout=10 -rss_limit_mb=2048 \
            -max_len="$maxlen" -print_final_stats=1 -artifact_prefix="$w/" "${dirs[@]}" \
            >"$w/slice.log" 2>&1) || rc=$?
        cat "$w/slice.log" >>"$w/fuzz.log"
        n=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$w/slice.log" | grep -o '[0-9]*$' || true)
        execs=$((execs + ${n:-0}))
    done
    rm -f "$w/slice.log"
    local took=$((SECONDS - start))
    local after
    after=$(ls "$w" | grep -cE '^(crash|leak|timeout|oom)-' || true)
    local corpus
    corpus=$(ls "$w/corpus" | wc -l)
    # the coverage libFuzzer reached: edges (cov) and features (ft) of its last status line
    local cov ft
    cov=$(grep -o ' cov: [0-9]*' "$w/fuzz.log" | tail -n 1 | grep -o '[0-9]*$' || true)
    ft=$(grep -o ' ft: [0-9]*' "$w/fuzz.log" | tail -n 1 | grep -o '[0-9]*$' || true)
    echo "$t $took ${execs:-0} $((after - before)) $corpus ${cov:-0} ${ft:-0} $rc" >"$w/result"
}

echo "fuzz-long: ${#targets[@]} target(s), $secs s each, $jobs at a time, in $b/fuzz-long"
running=0
for t in "${targets[@]}"; do
    spec "$t" >/dev/null
    run_one "$t" &
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then
        wait -n || true
        running=$((running - 1))
    fi
done
wait || true

total=0
crashed=0
printf '%-10s %8s %14s %8s %8s %8s %8s %8s\n' target seconds executions exec/s cov ft \
    crashes corpus
for t in "${targets[@]}"; do
    read -r name took execs crashes corpus cov ft rc <"$b/fuzz-long/$t/result"
    rate=$((took > 0 ? execs / took : 0))
    printf '%-10s %8d %14d %8d %8d %8d %8d %8d\n' "$name" "$took" "$execs" "$rate" "$cov" "$ft" \
        "$crashes" "$corpus"
    total=$((total + execs))
    if [ "$crashes" -gt 0 ] || [ "$rc" -ne 0 ]; then
        crashed=1
        echo "  $name: exit $rc; see $b/fuzz-long/$t/fuzz.log and its crash-* files"
    fi
done
printf '%-10s %8s %14d\n' total "" "$total"
exit $crashed
