#!/bin/sh
# Runs the decoder fuzzer for a bounded time on a seed corpus made by ptc_testgen.
# usage: run_fuzz.sh FUZZER PTC_TESTGEN WORK_DIR SECONDS
set -eu
fuzzer=$1 gen=$2 work=$3 secs=$4
mkdir -p "$work/seeds" "$work/corpus"
"$gen" seeds "$work/seeds"
cd "$work"
exec "$fuzzer" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
     -print_final_stats=1 corpus seeds
