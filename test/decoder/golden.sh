#!/bin/sh
# Golden outputs: report (table, csv, json), calls and graph on synthetic traces must match
# test/decoder/golden/*. PTCALL_UPDATE_GOLDEN=1 rewrites the expected files.
# usage: golden.sh PTCALL PTC_TESTGEN GOLDEN_DIR WORK_DIR
set -u
ptcall=$1 gen=$2 golden=$3 work=$4
rm -rf "$work" && mkdir -p "$work" || exit 1
cd "$work" || exit 1
"$gen" golden golden.ptc || exit 1
"$gen" untimed untimed.ptc || exit 1
fail=0
check() { # name, command...
    name=$1; shift
    "$@" > "$name.out" 2> "$name.err"
    echo "exit $?" >> "$name.out"
    if [ "${PTCALL_UPDATE_GOLDEN:-}" = 1 ]; then
        cp "$name.out" "$golden/$name.out"
    elif ! diff -u "$golden/$name.out" "$name.out"; then
        echo "FAIL: $name differs from $golden/$name.out"; fail=1
    fi
}
check report-table "$ptcall" report golden.ptc
check report-table-top3-self "$ptcall" report golden.ptc --top 3 --sort self
check report-csv "$ptcall" report golden.ptc --format csv
check report-json "$ptcall" report golden.ptc --format=json --sort calls
check report-untimed "$ptcall" report untimed.ptc
check report-untimed-json "$ptcall" report untimed.ptc --format json --top 2
check calls "$ptcall" calls golden.ptc
check calls-tid-depth "$ptcall" calls golden.ptc --tid 1000 --max-depth 2
check calls-untimed "$ptcall" calls untimed.ptc --pid 1002
check graph "$ptcall" graph golden.ptc
check graph-min3 "$ptcall" graph golden.ptc --min-calls 3
# the json output parses and has the documented fields
if command -v python3 >/dev/null; then
    python3 - report-json.out <<'PY' || fail=1
import json, sys
text = open(sys.argv[1]).read().rsplit("exit", 1)[0]
j = json.loads(text)
assert j["format_version"] == 1
assert j["totals"]["processes"] == 2 and j["totals"]["threads"] == 3
calls = {f["name"]: f["calls"] for f in j["functions"]}
assert calls["fib"] == 27 and calls["lex"] == 13 and calls["main"] == 1, calls
assert j["uncalled"] == []
PY
fi
[ $fail = 0 ] && echo "PASS: golden outputs"
exit $fail
