#!/usr/bin/env bash
# The main job: build ptcall, compile examples/demo.c with ptcall-cc, record it with the best
# backend this machine has (Intel PT if present, else the software backend), show the report,
# keep the run in the runs database and write its HTML report (ptcall db add, ptcall html).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/llvm-choice.sh
scripts/setup.sh
scripts/build.sh
mkdir -p out
"$build/bin/ptcall-cc" -O2 -g -pthread examples/demo.c -o out/demo
"$build/tools/ptcall" record --backend auto -o out/demo.ptc -- ./out/demo 24
echo
"$build/tools/ptcall" report out/demo.ptc --top 15
echo
echo "call sequence, all threads in time order (depth <= 3, first 25 lines):"
set +o pipefail # head closes the pipe early on purpose
"$build/tools/ptcall" calls out/demo.ptc --max-depth 3 | head -n 25
set -o pipefail
echo
"$build/tools/ptcall" export out/demo.ptc --format chrome -o out/demo.trace.json
"$build/tools/ptcall" export out/demo.ptc --format svg --weight self -o out/demo.svg
# keep the run in the runs database (SQLite; $PTCALL_DB, here out/ptcall.db unless set) and
# write the web page's views of it as one self-contained HTML file
export PTCALL_DB=${PTCALL_DB:-out/ptcall.db}
"$build/tools/ptcall" db add --tag example=demo --tag input=24 out/demo.ptc
"$build/tools/ptcall" html out/demo.ptc -o out/demo.html >/dev/null
echo
echo "timeline: out/demo.trace.json (open in Perfetto UI or speedscope)"
echo "flame graph: out/demo.svg (open in a browser)"
echo "report: $PWD/out/demo.html (open it in a browser: runs, hot functions, call graph, flame graph; no server)"
echo "runs database: $PTCALL_DB; its web page: $build/tools/ptcall serve --db $PTCALL_DB, then open http://127.0.0.1:8080/"
