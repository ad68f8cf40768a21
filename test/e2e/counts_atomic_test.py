#!/usr/bin/env python3
"""Locked counters (docs/runtime.md, *Counting mode*): `record --atomic-counts` makes counted
calls increment with a locked instruction, so threads that call one function at the same
moment lose no call. Checked on a real program (programs/count_race.c: threads released
together by a barrier, each calling shared() and own() N times), through both ways a counted
call reaches its counter (the trampolines, and the stubs' handler with PTCALL_TRAMPOLINES=0),
in counting mode and beside a trace of events (--count-rest): every count exact, every run.
Without the option the same runs may lose calls: how many is printed, not judged (it depends
on how often the threads really ran at once)."""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
THREADS, CALLS = 4, 3000000
failures = []


def fail(msg):
    print("FAIL: " + msg)
    failures.append(msg)


def run(cmd, env=None, ok=(0,)):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if r.returncode not in ok:
        sys.exit("FAIL: %s exited %d\n%s%s" % (" ".join(cmd), r.returncode, r.stdout[-3000:],
                                                r.stderr[-3000:]))
    return r


def counts(ptcall, trace):
    rep = json.loads(run([ptcall, "report", trace, "--format", "json", "--top", "0"]).stdout)
    return {f["name"]: int(f["calls"]) for f in rep["functions"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    b = os.path.abspath(a.build)
    ptcall = os.path.join(b, "tools", "ptcall")
    d = os.path.join(os.path.abspath(a.work), "counts-atomic")
    os.makedirs(d, exist_ok=True)
    exe = os.path.join(d, "count_race")
    run([os.path.join(b, "bin", "ptcall-cc"), "-O2", "-pthread",
         os.path.join(HERE, "programs", "count_race.c"), "-o", exe])
    want = THREADS * CALLS
    tr = os.path.join(d, "t.ptc")
    for mode, extra in (("counts", ["--counts"]), ("count-rest", ["--count-rest", "--only", "main"])):
        for tramps in ("1", "0"):
            env = dict(os.environ, PTCALL_TRAMPOLINES=tramps)
            for atomic in (True, False):
                lost = []
                for _ in range(3 if atomic else 1):
                    run([ptcall, "record", "-q", "-o", tr] + extra +
                        (["--atomic-counts"] if atomic else []) +
                        ["--", exe, str(THREADS), str(CALLS)], env=env)
                    c = counts(ptcall, tr)
                    lost.append(sum(want - c.get(f, 0) for f in ("shared", "own")))
                    if atomic and (c.get("shared") != want or c.get("own") != want):
                        fail("%s, trampolines %s, --atomic-counts: shared %s, own %s calls, "
                             "want %d each" % (mode, tramps, c.get("shared"), c.get("own"), want))
                print("%s, trampolines %s, %s: calls lost per run %s of %d" % (
                    mode, tramps, "locked" if atomic else "unlocked", lost, 2 * want))
    r = run([ptcall, "record", "-o", tr, "--atomic-counts", "--", exe, "1", "10"], ok=(2,))
    if "--atomic-counts locks the increments of counted calls" not in r.stderr:
        fail("--atomic-counts without counting: %s" % r.stderr)
    if failures:
        sys.exit("%d checks failed" % len(failures))
    print("PASS")


if __name__ == "__main__":
    main()
