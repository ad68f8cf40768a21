#!/bin/sh
# CLI error behaviour: one line "ptcall CMD: what: what to do", non-zero exit, nothing on
# stdout for a damaged trace; usage errors exit 2; --salvage reports and states the loss.
# usage: cli_errors.sh PTCALL PTC_TESTGEN WORK_DIR
set -u
ptcall=$1 gen=$2 work=$3
rm -rf "$work" && mkdir -p "$work" || exit 1
cd "$work" || exit 1
"$gen" golden good.ptc || exit 1
size=$(wc -c < good.ptc)
head -c $((size - 100)) good.ptc > truncated.ptc
printf 'hello world, not a trace at all.......................................' > notatrace.ptc
: > empty.ptc
# a flipped payload byte in the middle (CRC)
python3 -c "
import sys
b = bytearray(open('good.ptc','rb').read())
b[len(b)*3//4] ^= 0x55
open('corrupt.ptc','wb').write(b)
b = bytearray(open('good.ptc','rb').read()); b[8] = 9
open('v9.ptc','wb').write(b)"
fail=0
expect() { # exit-code pattern cmd...
    want=$1 pat=$2; shift 2
    "$@" > out.txt 2> err.txt
    rc=$?
    if [ "$rc" != "$want" ]; then echo "FAIL: $* exited $rc, expected $want"; cat err.txt; fail=1; return; fi
    if [ -n "$pat" ] && ! grep -q -- "$pat" err.txt; then
        echo "FAIL: $*: stderr lacks '$pat':"; cat err.txt; fail=1
    fi
    if [ "$want" = 1 ]; then
        if [ "$(wc -l < err.txt)" != 1 ]; then echo "FAIL: $*: not one error line:"; cat err.txt; fail=1; fi
        if [ -s out.txt ] && ! grep -q INCOMPLETE out.txt; then echo "FAIL: $*: output on error"; fail=1; fi
    fi
}
for cmd in report calls graph; do
    expect 1 "ptcall $cmd: .*truncated.*ends at byte.*rerun with --salvage" "$ptcall" $cmd truncated.ptc
    expect 1 "ptcall $cmd: .*fails its CRC check: the file is damaged" "$ptcall" $cmd corrupt.ptc
    expect 1 "ptcall $cmd: not a ptcall trace file (notatrace.ptc)" "$ptcall" $cmd notatrace.ptc
    expect 1 "ptcall $cmd: not a ptcall trace file (empty.ptc): the file is empty" "$ptcall" $cmd empty.ptc
    expect 1 "ptcall $cmd: v9.ptc is a version 9.[0-9]* trace" "$ptcall" $cmd v9.ptc
    expect 1 "ptcall $cmd: cannot open missing.ptc: No such file or directory: check the path" "$ptcall" $cmd missing.ptc
    expect 2 "unknown option '--bogus'" "$ptcall" $cmd good.ptc --bogus
    expect 2 "no trace file given" "$ptcall" $cmd
    expect 0 "" "$ptcall" $cmd good.ptc
    expect 0 "salvaged" "$ptcall" $cmd truncated.ptc --salvage
    expect 0 "salvaged" "$ptcall" $cmd corrupt.ptc --salvage
done
expect 2 "--top needs a number" "$ptcall" report good.ptc --top x
expect 2 "--sort takes" "$ptcall" report good.ptc --sort bogus
expect 2 "--format takes" "$ptcall" report good.ptc --format xml
expect 2 "--max-depth needs" "$ptcall" calls good.ptc --max-depth 0
expect 2 "--min-calls needs" "$ptcall" graph good.ptc --min-calls
"$ptcall" report truncated.ptc --salvage > out.txt 2>/dev/null
grep -q "warning: salvaged from a damaged trace" out.txt || { echo "FAIL: salvage output does not state the loss"; fail=1; }
"$ptcall" report truncated.ptc --salvage --format json > out.json 2>/dev/null
grep -q '"complete": false' out.json || { echo "FAIL: salvaged json not marked incomplete"; fail=1; }
[ $fail = 0 ] && echo "PASS: CLI errors"
exit $fail
