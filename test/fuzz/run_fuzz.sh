#!/bin/sh
# Runs one libFuzzer target for a bounded time on a seed corpus made first (seeds.sh).
# usage: run_fuzz.sh FUZZER WORK_DIR SECONDS MAX_LEN SEED_KIND [SEED_ARGS...]
# The corpus the fuzzer grows stays in WORK_DIR/corpus for the next run; a crash leaves its
# input in WORK_DIR (crash-*, leak-*, timeout-*, oom-*) and fails the test.
set -eu
fuzzer=$1 work=$2 secs=$3 maxlen=$4
shift 4
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work/seeds"
mkdir -p "$work/seeds" "$work/corpus"
sh "$here/seeds.sh" "$@" "$work/seeds"
cd "$work"
exec "$fuzzer" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len="$maxlen" \
     -print_final_stats=1 corpus seeds
