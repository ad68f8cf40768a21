#!/usr/bin/env python3
"""Per-event cost of the software backend's timing modes side by side (issue 28 item 4):
untimed (--no-timestamps), ticker (--clock ticker[:PERIOD]) and tsc (rdtsc per event), on
the calls workload (bench/workloads/calls.c), in paired rounds: each round runs every mode
once, in turn, and the untraced program (ptcall-cc build, no recording) as the base.
per-event ns = (median traced time - median base time) / events. A few seconds in all.

usage: bench/clock_cost.py --build BUILD [--rounds 5] [--fib 27] [--loop 3000000]
       [--period 10us]
"""
import argparse
import os
import re
import statistics
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--fib", default="27")
    ap.add_argument("--loop", default="3000000")
    ap.add_argument("--period", default="10us")
    a = ap.parse_args()
    b = os.path.abspath(a.build)
    ptcall = os.path.join(b, "tools", "ptcall")
    d = tempfile.mkdtemp(prefix="ptcall-clock-", dir="/dev/shm" if os.path.isdir("/dev/shm")
                         else None)
    exe = os.path.join(d, "calls")
    subprocess.run([os.path.join(b, "bin", "ptcall-cc"), "-O2",
                    os.path.join(HERE, "workloads", "calls.c"), "-o", exe], check=True)
    out = os.path.join(d, "t.ptc")
    modes = {"untraced": None, "untimed": ["--no-timestamps"],
             "ticker:" + a.period: ["--clock", "ticker:" + a.period], "tsc": ["--clock", "tsc"]}
    times = {m: [] for m in modes}
    events = {}
    env = dict(os.environ, PTCALL_ATTACH="0")
    for _ in range(a.rounds):
        for m, args in modes.items():
            cmd = [exe, a.fib, a.loop] if args is None else \
                [ptcall, "record", "--backend", "soft", "-o", out] + args + ["--", exe, a.fib,
                                                                              a.loop]
            t0 = time.perf_counter()
            r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               env=env)
            times[m].append(time.perf_counter() - t0)
            if r.returncode:
                raise SystemExit("%s: %s" % (" ".join(cmd), r.stderr))
            if args is not None:
                ev = re.search(r"(\d+) event(?:s| records) in", r.stderr)
                events[m] = int(ev.group(1))
    base = statistics.median(times["untraced"])
    print("calls workload (fib %s, loop %s), %d paired rounds, median wall time:" %
          (a.fib, a.loop, a.rounds))
    print("%-16s %10s %12s %14s" % ("mode", "seconds", "events", "ns per event"))
    for m in modes:
        t = statistics.median(times[m])
        if m == "untraced":
            print("%-16s %10.3f %12s %14s" % (m, t, "-", "-"))
        else:
            print("%-16s %10.3f %12d %14.2f" % (m, t, events[m], (t - base) * 1e9 / events[m]))
    for f in os.listdir(d):
        os.unlink(os.path.join(d, f))
    os.rmdir(d)


if __name__ == "__main__":
    main()
