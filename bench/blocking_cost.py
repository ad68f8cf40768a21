#!/usr/bin/env python3
"""Cost of an interposed blocking call (issue 27 item 6; docs/runtime.md "Blocking calls"):
bench/workloads/blocking_cost.c timed in-process (best of 5 loops), in paired rounds of
  cc           built with plain cc: the C library's own call, no wrapper
  not armed    built with ptcall-cc, run without ptcall: the wrapper's flag test
  no-blocking  ptcall record --no-blocking: traced, the wrapper not armed
  recorded     ptcall record (timed): an entry and an exit record per poll and sem_wait call
Each mode's figure is the median over the rounds. A traced process has the runtime's threads,
so glibc leaves its single-threaded fast paths (locks become atomic): compare "recorded" with
"no-blocking" for what the records cost, "not armed" with "cc" for what the wrapper costs.
A few seconds in all.

usage: bench/blocking_cost.py --build BUILD [--rounds 5] [--calls 200000]
"""
import argparse
import os
import statistics
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def parse(out):
    v = {}
    for line in out.splitlines():
        k, _, x = line.partition(" ")
        v[k] = float(x)
    return v


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", default="200000")
    a = ap.parse_args()
    b = os.path.abspath(a.build)
    ptcall = os.path.join(b, "tools", "ptcall")
    d = tempfile.mkdtemp(prefix="ptcall-blocking-", dir="/dev/shm" if os.path.isdir("/dev/shm")
                         else None)
    src = os.path.join(HERE, "workloads", "blocking_cost.c")
    plain, inst = os.path.join(d, "plain"), os.path.join(d, "inst")
    subprocess.run(["cc", "-O2", "-pthread", src, "-o", plain], check=True)
    subprocess.run([os.path.join(b, "bin", "ptcall-cc"), "-O2", "-pthread", src, "-o", inst],
                   check=True)
    out = os.path.join(d, "t.ptc")
    modes = {"cc": [plain, a.calls], "not armed": [inst, a.calls],
             "no-blocking": [ptcall, "record", "-q", "--no-blocking", "-o", out, "--", inst,
                             a.calls],
             "recorded": [ptcall, "record", "-q", "-o", out, "--", inst, a.calls]}
    got = {m: {"poll0": [], "mutex": [], "sem": []} for m in modes}
    env = dict(os.environ, PTCALL_ATTACH="0")
    for _ in range(a.rounds):
        for m, cmd in modes.items():
            r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=env)
            if r.returncode:
                raise SystemExit("%s: %s" % (" ".join(cmd), r.stderr))
            for k, x in parse(r.stdout).items():
                got[m][k].append(x)
    med = {m: {k: statistics.median(v) for k, v in got[m].items()} for m in modes}
    print("ns per call, median of %d paired rounds (each the best of 5 loops of %s calls; "
          "mutex: 10x as many lock+unlock pairs)" % (a.rounds, a.calls))
    print("%-12s %10s %14s %14s" % ("mode", "poll(0)", "mutex pair", "sem pair"))
    for m in modes:
        print("%-12s %10.1f %14.2f %14.2f" % (m, med[m]["poll0"], med[m]["mutex"], med[m]["sem"]))
    for what, x, y in (("wrapper, not armed", "not armed", "cc"),
                       ("records, per recorded call", "recorded", "no-blocking")):
        print("%-28s poll %+8.1f   mutex %+7.2f   sem %+7.2f" % (
            what + ":", med[x]["poll0"] - med[y]["poll0"], med[x]["mutex"] - med[y]["mutex"],
            med[x]["sem"] - med[y]["sem"]))


if __name__ == "__main__":
    main()
