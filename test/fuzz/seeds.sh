#!/bin/sh
# Seed corpora of the fuzz targets (run_fuzz.sh, scripts/fuzz-long.sh); the last argument
# is the directory to fill.
#   seeds.sh decode PTC_TESTGEN DIR          trace files of the test writer (decoder-fuzz)
#   seeds.sh raw|diff FUZZ_SEEDS DIR         raw PT streams from ptgen (fuzz-pt-raw, -pt-diff)
#   seeds.sh ptc FUZZ_SEEDS DIR              whole PT trace files from ptgen (fuzz-pt-trace)
#   seeds.sh perf FUZZ_SEEDS REAL_DIR DIR    perf.data: the test writer's, and the files the
#                                            real perf wrote for pt-perf-data-real (REAL_DIR;
#                                            recorded here with perf when that test has not
#                                            run), hostile edits included
#   seeds.sh db PYTHON SRC DIR               runs databases (db_seeds.py): every frozen
#                                            schema version, hostile variants
#   seeds.sh http DIR                        request paths and queries of the web API and
#                                            pages
#   seeds.sh map PYTHON PTCALL_CC SRC OBJ... DIR
#                                            images of built objects' maps (map_seeds.py):
#                                            OBJ..., and programs compiled with ptcall-cc
#   seeds.sh ptcov PTCALL PTCALL_CC SRC COV_DIR DIR
#                                            .ptcov files the cov tests wrote under COV_DIR
#                                            (cov-e2e, cov-hostile); made here with
#                                            ptcall cov run when they have not run
# Every kind also gets the checked-in inputs of test/fuzz/regress/KIND/: inputs that once
# crashed a target (or made it disagree, leak or time out), so that every run - the ctest's
# seconds included - replays them first.
set -eu
kind=$1
shift
eval "dir=\${$#}" # the last argument
here=$(cd "$(dirname "$0")" && pwd)
case $kind in
decode)
    "$1" seeds "$dir" ;;
raw | diff | ptc)
    "$1" "$kind" "$dir" ;;
perf)
    "$1" perf "$dir"
    real=$2
    if ls "$real"/*.data >/dev/null 2>&1; then
        cp "$real"/*.data "$dir"/
    elif command -v perf >/dev/null 2>&1; then
        # as pt-perf-data-real records them: software events (no Intel PT on this machine)
        perf record -q -e cpu-clock -o "$dir/real-1.data" -- true >/dev/null 2>&1 || true
        perf record -q -e cpu-clock -e task-clock -e page-faults -o "$dir/real-3.data" \
            -- true >/dev/null 2>&1 || true
        perf record -q -e cpu-clock -o - -- true >"$dir/pipe.data" 2>/dev/null || true
    fi
    echo "seeds.sh: $(ls "$dir" | wc -l) perf.data seed(s)" ;;
map)
    py=$1 cc=$2 src=$3
    shift 3
    objs=""
    while [ $# -gt 1 ]; do objs="$objs $1"; shift; done
    # programs the pass instruments (map v5: sleds, call sites, ret sleds), when it works
    tmp=$(mktemp -d)
    if [ -x "$cc" ]; then
        "$cc" -O2 "$src/examples/demo.c" -o "$tmp/demo" 2>/dev/null && objs="$objs $tmp/demo"
        "$cc" -O1 -fPIC -shared "$src/bench/workloads/calls.c" -o "$tmp/libcalls.so" \
            2>/dev/null && objs="$objs $tmp/libcalls.so"
    fi
    # shellcheck disable=SC2086
    "$py" "$here/map_seeds.py" "$dir" $objs
    rm -rf "$tmp" ;;
ptcov)
    ptcall=$1 cc=$2 src=$3 covdir=$4
    find "$covdir" -name '*.ptcov' -size -64k 2>/dev/null | head -n 40 | while read -r f; do
        cp "$f" "$dir/$(echo "$f" | tr / _)"
    done
    # always one with blocks and lines (-fptcall-cov: BLOCKS and INPUT_BLOCKS records)
    if [ -x "$cc" ]; then
        tmp=$(mktemp -d)
        mkdir "$tmp/c"
        printf a1 >"$tmp/c/in-a"
        printf b22 >"$tmp/c/in-b"
        printf x >"$tmp/c/in-x"
        printf c >"$tmp/c/in-c"
        "$cc" -O1 -g -fptcall-cov "$src/test/cov/cov_target.c" -o "$tmp/t" &&
            "$ptcall" cov run --timeout 300 -o "$dir/made.ptcov" --corpus "$tmp/c" -- \
                "$tmp/t" >/dev/null 2>&1 || true
        rm -rf "$tmp"
    fi
    echo "seeds.sh: $(ls "$dir" | wc -l) .ptcov seed(s)" ;;
db)
    "$1" "$here/db_seeds.py" "$2" "$dir" ;;
http)
    i=0
    for r in "/api/v1/runs" "/api/v1/runs/?tag=input=1&program=demo*" "/api/v1/runs/1" \
             "/api/v1/runs/2?top=1" "/api/v1/runs/1/flame.svg" "/api/v1/hot" \
             "/api/v1/hot?sort=self&stat=median&top=3&runs=1-2" \
             "/api/v1/hot?tag=build&since=0&until=99999&program=other" \
             "/api/v1/hot?stat=stddev&sort=calls" "/api/v1/functions/1" \
             "/api/v1/functions/2?runs=1,2&tag=input" "/api/v1/diff?base=1&new=2" \
             "/api/v1/diff?base=1&new=2&allow_different=1&sort=self&top=0" \
             "/api/v1/diff?base=2&new=1&sort=calls" "/api/v2/runs" "/" "/runs?tag=input=2" \
             "/hot?runs=2" "/runs/1" "/functions/2" "/diff?base=1&new=2" \
             "/api/v1/hot?runs=%31-%32&tag=in%70ut"; do
        i=$((i + 1))
        printf '%s' "$r" >"$dir/req-$i"
    done
    echo "seeds.sh: $i request seed(s)" ;;
*)
    echo "seeds.sh: no seeds of kind '$kind'" >&2
    exit 2 ;;
esac
if [ -d "$here/regress/$kind" ]; then
    for f in "$here/regress/$kind"/*; do
        if [ -f "$f" ]; then cp "$f" "$dir/regress-$(basename "$f")"; fi
    done
    echo "seeds.sh: $(ls "$here/regress/$kind" | wc -l) regression input(s) of $kind"
fi
