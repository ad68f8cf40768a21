#!/usr/bin/env python3
"""Decoding is streaming: the peak RSS of `ptcall report`, `graph` and `calls` must not grow
with the length of the trace (docs/usage.md). Records bench/workloads/calls.c with the
software backend at two lengths, 4x apart, decodes both, and compares peak RSS (GNU time's
%M). A decoder that kept anything per event would need at least a
byte per event more on the long trace: 60 MB for report/graph, 6 MB for calls.

usage: bounded_rss.py --build BUILD_DIR --work WORK_DIR --src SOURCE_DIR
"""
import argparse
import os
import re
import subprocess
import sys

SLACK_KIB = 2048          # allowed growth from the short to the long trace
CEILING_KIB = 64 * 1024   # and the absolute bound the issue sets


def run_rss(cmd, work):
    """Runs cmd with stdout discarded; returns (exit status, peak RSS KiB, stderr). GNU time
    measures the RSS: the rusage of a child forked from Python starts at Python's own size."""
    out = os.path.join(work, "rss.txt")
    r = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", out] + cmd, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    with open(out) as f:
        kib = int(f.read().split()[-1])
    return r.returncode, kib, r.stderr


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--src", required=True)
    a = ap.parse_args()
    ptcall = os.path.join(a.build, "tools", "ptcall")
    cc = os.path.join(a.build, "bin", "ptcall-cc")
    os.makedirs(a.work, exist_ok=True)
    exe = os.path.join(a.work, "calls")
    subprocess.run([cc, "-O2", os.path.join(a.src, "bench", "workloads", "calls.c"), "-o", exe],
                   check=True)
    fails = 0
    # (command, loop counts of the short and long trace): fib(20) adds ~44 k events;
    # `calls` prints a line per call, so its traces are 10x shorter.
    plans = [("report", ["report"], 10_000_000, 40_000_000),
             ("graph", ["graph"], 10_000_000, 40_000_000),
             ("calls", ["calls"], 1_000_000, 4_000_000)]
    traces = {}
    for _, _, short, long_ in plans:
        for n in (short, long_):
            if n in traces:
                continue
            t = os.path.join(a.work, "calls-%d.ptc" % n)
            subprocess.run([ptcall, "record", "-q", "--backend", "soft", "-o", t, "--", exe,
                            "20", str(n)], check=True, stdout=subprocess.DEVNULL)
            st = subprocess.run([ptcall, "stat", t], check=True, capture_output=True, text=True)
            m = re.search(r"total: (\d+) records", st.stdout)
            ev = int(m.group(1)) if m else 0
            fails += check(ev >= 2 * n, "%s holds %d records (>= %d)" % (t, ev, 2 * n))
            traces[n] = t
    for name, args, short, long_ in plans:
        rss = []
        for n in (short, long_):
            rc, kib, err = run_rss([ptcall] + args + [traces[n]], a.work)
            fails += check(rc == 0, "ptcall %s %s exits 0 %s" % (name, traces[n], err.strip()))
            rss.append(kib)
        print("     ptcall %s: peak RSS %d KiB (%d M events) -> %d KiB (%d M events)"
              % (name, rss[0], 2 * short // 1_000_000, rss[1], 2 * long_ // 1_000_000))
        fails += check(rss[1] - rss[0] <= SLACK_KIB,
                       "ptcall %s: RSS grows by %d KiB (<= %d)" % (name, rss[1] - rss[0], SLACK_KIB))
        fails += check(rss[1] <= CEILING_KIB, "ptcall %s: RSS %d KiB (<= %d)" % (name, rss[1], CEILING_KIB))
    for t in traces.values():
        os.unlink(t)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
