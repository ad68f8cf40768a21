#!/usr/bin/env python3
"""The ticker clock (issue 28 item 4; docs/runtime.md "The ticker clock"), on programs built
with ptcall-cc (programs/ticker.c, attach_prog.c):

  plain    record --clock ticker:50us: the TIMEBASE chunk (read here, not by the decoder)
           says TICKER with 50000 ns; the calls and their order equal a --clock tsc run's;
           every time is one of the clock's values (few distinct times, at least ~a period
           apart; most 1000-call leaf bursts share one), times monotonic per thread; a 2 ms
           call lasts 2 ms; report states the resolution and shows no sub-period time as
           exact; the JSON report's time_resolution_ns is 50000 (null for tsc)
  threads  the same with 3 threads
  fork     the fork child's clock goes on (its own ticker thread): its 2 ms calls last 2 ms
  ring     record --ring with the ticker: the snapshot's TIMEBASE is TICKER, times advance
  attach   a program started with PTCALL_CLOCK=ticker:50 and attached to (record --pid)
  bad      --clock values and combinations that cannot be honoured: one line each, exit 2;
           PTCALL_CLOCK=bogus: the runtime says so and does not trace

usage: ticker_test.py --build BUILD --work DIR
"""
import argparse
import collections
import json
import os
import re
import struct
import subprocess
import sys
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
TIMEBASE, TICKER = 3, 3
PERIOD = 50000
failures = []


def run(cmd, ok=(0,), **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    if r.returncode not in ok:
        sys.exit("FAIL: %s exited %d\n%s%s" % (" ".join(cmd), r.returncode, r.stdout[-3000:],
                                                r.stderr[-3000:]))
    return r


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)
    return cond


def timebases(path):
    """(pid, source, period_ns) of every TIMEBASE chunk, CRCs checked."""
    d = open(path, "rb").read()
    assert d[:8] == b"PTCALLTR", path
    hsize = struct.unpack_from("<I", d, 12)[0]
    off, out = hsize, []
    while off < len(d):
        t, fl, sz, pid, tid, seq, crc = struct.unpack_from("<HHIIIII", d, off)
        p = d[off + 24:off + 24 + sz]
        assert zlib.crc32(d[off:off + 20], zlib.crc32(p)) == crc, "CRC at %d" % off
        if t == TIMEBASE:
            source, shift, _, mult, reserved1 = struct.unpack_from("<IHHII", p, 0)
            out.append((pid, source, reserved1))
        off += 24 + sz + (8 - sz % 8) % 8
    return out


def calls(ptcall, path):
    rows = []
    for line in run([ptcall, "export", path, "--format", "jsonl", "-o", "-"]).stdout.splitlines():
        if line.strip():
            rows.append(json.loads(line))
    return rows


def per_thread(rows):
    th = collections.OrderedDict()
    for r in rows:
        th.setdefault((r["pid"], r["tid"]), []).append(r)
    return th


def shape(rows):
    """Each thread's calls in order (function, depth), thread ids left out: comparable across
    runs."""
    return sorted(tuple((r["function"], r["depth"]) for r in t) for t in per_thread(rows).values())


def check_ticks(label, rows, period, min_slow_ns=1500000):
    """Times on the ticker's clock: monotonic per thread, few distinct values about a period
    apart, leaf bursts sharing a tick, the 2 ms calls lasting about 2 ms."""
    ok = True
    for (pid, tid), t in per_thread(rows).items():
        ends = [r["start"] + r["duration"] for r in t]
        ok &= check(all(a <= b for a, b in zip(ends, ends[1:])),
                    "%s: thread %d: call ends go back in time" % (label, tid))
    by_pid = collections.defaultdict(set)
    for r in rows:
        by_pid[r["pid"]].update((r["start"], r["start"] + r["duration"]))
    for pid, times in by_pid.items():
        ts = sorted(times)
        gaps = [b - a for a, b in zip(ts, ts[1:])]
        near = sum(1 for g in gaps if g >= period // 2)
        ok &= check(bool(gaps) and near >= 0.9 * len(gaps),
                    "%s: process %d: %d of %d gaps between distinct times are under half a "
                    "period (%d ns): not the ticker's clock" % (label, pid, len(gaps) - near,
                                                                len(gaps), period))
    leaves = [r for r in rows if r["function"] == "leaf"]
    zero = sum(1 for r in leaves if r["duration"] == 0)
    ok &= check(leaves and zero >= 0.5 * len(leaves),
                "%s: %d of %d leaf calls last 0 (they share a tick)" % (label, zero, len(leaves)))
    # A ticker descheduled on a busy machine stalls the clock (the documented trade): one
    # 2 ms call may read shorter, even 0. The clock must still advance over each process:
    # its calls of slow() (2 ms each) add up to at least half their sleep.
    for pid in by_pid:
        slow = [r["duration"] for r in rows if r["function"] == "slow" and r["pid"] == pid]
        ok &= check(slow and sum(slow) >= len(slow) * min_slow_ns // 3,
                    "%s: process %d: its 2 ms calls last %s ns" % (label, pid, slow))
    return ok


def record(ptcall, exe, out, clock, args=(), extra=()):
    if os.path.exists(out):
        os.unlink(out)
    return run([ptcall, "record", "--backend", "soft", "--clock", clock, "-o", out] +
               list(extra) + ["--", exe] + list(args))


def case_run(ptcall, exe, d, mode, nthreads):
    tk, ts = os.path.join(d, mode + "-ticker.ptc"), os.path.join(d, mode + "-tsc.ptc")
    record(ptcall, exe, tk, "ticker:50us", [mode])
    record(ptcall, exe, ts, "tsc", [mode])
    tb = timebases(tk)
    check(tb and all(s == TICKER and p == PERIOD for _, s, p in tb),
          "%s: TIMEBASE chunks %s, want source TICKER (3) with 50000 ns" % (mode, tb))
    check(all(s != TICKER and p == 0 for _, s, p in timebases(ts)),
          "%s: --clock tsc wrote a TICKER time base" % mode)
    a, b = calls(ptcall, tk), calls(ptcall, ts)
    check(shape(a) == shape(b), "%s: the calls differ from the tsc run's" % mode)
    check(len(per_thread(a)) == nthreads, "%s: %d threads, want %d" % (mode, len(per_thread(a)),
                                                                       nthreads))
    check_ticks(mode, a, PERIOD)
    # the tsc run is not on a ticker: most of its leaves do not share a time. Not none: AMD
    # CPUs advance the TSC in steps of the 100 MHz reference (26 ticks, 10 ns, on a 2.6 GHz
    # EPYC host), so a leaf of about 10 ns often starts and ends in one step (17 % in a CI
    # run); the ticker's share is at least half
    leaves_b = [r for r in b if r["function"] == "leaf"]
    zero = sum(1 for r in leaves_b if r["duration"] == 0)
    check(leaves_b and zero < 0.4 * len(leaves_b),
          "%s: %d of %d tsc leaf calls last 0" % (mode, zero, len(leaves_b)))
    rep = run([ptcall, "report", tk]).stdout
    check("# times to 50 us: ticker clock" in rep, "%s: report does not state the resolution:\n%s"
          % (mode, rep))
    rows = [l for l in rep.splitlines() if l.rstrip().endswith("]")]
    check(rows and not any(re.search(r"(^|\s)\d+ ns\s", l) for l in rows),
          "%s: report shows a sub-period time as exact:\n%s" % (mode, rep))
    j = json.loads(run([ptcall, "report", tk, "--format", "json"]).stdout)
    # every time under a tick is shown as such (which ones are depends on the machine's load:
    # a late tick makes a short call read long)
    short = [f["name"] for f in j["functions"]
             if f.get("self") is not None and 0 <= f["self"] < PERIOD]
    for name in short:
        check(any(re.search(r"<\s*50 us.*\s%s \[" % re.escape(name), l) for l in rows),
              "%s: %s's self time is under a tick but not shown as '< 50 us':\n%s"
              % (mode, name, rep))
    check(j.get("time_resolution_ns") == PERIOD, "%s: JSON time_resolution_ns %r" %
          (mode, j.get("time_resolution_ns")))
    sv = os.path.join(d, mode + "-flame.svg")
    run([ptcall, "export", tk, "--format", "svg", "--weight", "self", "-o", sv])
    titles = re.findall(r"<title>([^<]*)</title>", open(sv).read())
    def exact_below_period(t):
        """A time under the period written as a number (not '< 50 us'): 86.316 us is not
        one (a sum of ticks may be any value above the period; a CI run's leaf self sum)."""
        m = re.search(r"\((\d+(?:\.\d+)?) (ns|us|ms|s)\b", t)
        scale = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
        return bool(m) and float(m.group(1)) * scale[m.group(2)] < PERIOD
    check(titles and not any(exact_below_period(t) for t in titles),
          "%s: svg titles show sub-period times as exact: %s" % (mode, titles[:20]))
    ch = os.path.join(d, mode + "-chrome.json")
    run([ptcall, "export", tk, "--format", "chrome", "-o", ch])
    od = json.load(open(ch))["otherData"]
    check(od.get("time_resolution_ns") == str(PERIOD), "%s: chrome otherData %r" % (mode, od))
    # the raw-figure exports say the period on stderr; calls' durations under it read "< 50 us"
    for fmt in ("jsonl", "events", "folded"):
        r = run([ptcall, "export", tk, "--format", fmt, "-o", os.path.join(d, mode + "." + fmt)])
        check("note: times to 50 us: ticker clock" in r.stderr,
              "%s: export --format %s does not state the resolution:\n%s" % (mode, fmt, r.stderr))
        r = run([ptcall, "export", ts, "--format", fmt, "-o", os.path.join(d, mode + "-tsc." + fmt)])
        check("ticker" not in r.stderr, "%s: a tsc export of %s speaks of a ticker" % (mode, fmt))
    lines = run([ptcall, "calls", tk]).stdout.splitlines()
    check(any("< 50 us" in l for l in lines) and
          not any(re.search(r"\s\d+ ns(\s|$)", l) for l in lines if not l.startswith("#")),
          "%s: ptcall calls shows a sub-period duration as exact: %s" % (mode, lines[:15]))
    check(any(l.startswith("# note: times to 50 us: ticker clock") for l in lines),
          "%s: ptcall calls does not state the resolution" % mode)
    j = json.loads(run([ptcall, "report", ts, "--format", "json"]).stdout)
    check("time_resolution_ns" in j and j["time_resolution_ns"] is None,
          "%s: tsc JSON time_resolution_ns %r" % (mode, j.get("time_resolution_ns")))
    return a


def case_fork(ptcall, exe, d):
    rows = case_run(ptcall, exe, d, "fork", 2)
    pids = sorted({r["pid"] for r in rows})
    check(len(pids) == 2, "fork: %d processes" % len(pids))
    child = [r for r in rows if r["pid"] == pids[-1] and r["function"] == "slow"]
    check(len(child) == 2 and sum(r["duration"] for r in child) > 0,
          "fork: the child's 2 ms calls last %s ns (its clock stopped?)" %
          [r["duration"] for r in child])


def case_ring(ptcall, exe, d):
    sd = os.path.join(d, "ring")
    os.makedirs(sd, exist_ok=True)
    for f in os.listdir(sd):
        os.unlink(os.path.join(sd, f))
    run([ptcall, "record", "--ring", "1M", "--trigger", "slow", "--clock", "ticker:50us",
         "-o", os.path.join(sd, "x.ptc"), "--", exe, "plain"])
    snaps = sorted(os.path.join(sd, f) for f in os.listdir(sd) if f.endswith(".trace"))
    if not check(snaps, "ring: no snapshot in %s" % os.listdir(sd)):
        return
    tb = timebases(snaps[0])
    check(tb and all(s == TICKER and p == PERIOD for _, s, p in tb),
          "ring: snapshot TIMEBASE %s" % tb)
    rows = calls(ptcall, snaps[0])
    slow = [r["duration"] for r in rows if r["function"] == "slow"]
    ends = sorted({r["start"] + r["duration"] for r in rows} | {r["start"] for r in rows})
    check(len(ends) > 1 and ends[-1] - ends[0] >= 1000000,
          "ring: the snapshot's times span %s ns (the clock did not advance)" %
          (ends[-1] - ends[0] if ends else None))
    rep = run([ptcall, "report", snaps[0]]).stdout
    check("times to 50 us: ticker clock" in rep, "ring: report: " + rep)


def case_attach(ptcall, build, d):
    exe = os.path.join(d, "attach_prog")
    run([os.path.join(build, "bin", "ptcall-cc"), "-O2", "-pthread",
         os.path.join(HERE, "programs", "attach_prog.c"), "-o", exe])
    env = dict(os.environ, PTCALL_CLOCK="ticker:50")
    p = subprocess.Popen([exe], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = p.stdout.readline()
        if not check(line.startswith("ready"), "attach: the program did not start: %r" % line):
            return
        out = os.path.join(d, "attach.ptc")
        r = subprocess.run([ptcall, "record", "--pid", str(p.pid), "--duration", "200ms", "-o",
                            out], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        check(r.returncode == 0, "attach: status %d %s" % (r.returncode, r.stderr))
        tb = timebases(out)
        check(tb and all(s == TICKER and p_ == PERIOD for _, s, p_ in tb),
              "attach: TIMEBASE %s" % tb)
        rows = calls(ptcall, out)
        check(len(rows) > 100, "attach: %d calls" % len(rows))
        for (pid, tid), t in per_thread(rows).items():
            ends = [x["start"] + x["duration"] for x in t]
            check(all(a <= b for a, b in zip(ends, ends[1:])), "attach: thread %d goes back" % tid)
        starts = sorted({x["start"] for x in rows})
        check(len(starts) < 0.25e9 / PERIOD * 1.5 + 10,
              "attach: %d distinct start times in 200 ms: not a 50 us clock" % len(starts))
        r = subprocess.run([ptcall, "record", "--pid", str(p.pid), "--clock", "ticker", "-o",
                            out], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        check(r.returncode == 2 and "PTCALL_CLOCK" in r.stderr.splitlines()[0],
              "attach: --pid --clock: %d %r" % (r.returncode, r.stderr))
    finally:
        p.stdin.close()
        p.wait(timeout=60)


def case_bad(ptcall, exe, d):
    out = os.path.join(d, "bad.ptc")
    for args, pat in [
            (["--clock", "ticker:0"], r"ticker period '0' is not"),
            (["--clock", "ticker:5x"], r"ticker period '5x' is not"),
            (["--clock", "ticker:2s"], r"ticker period '2s' is not"),
            (["--clock", "rdtsc"], r"clock 'rdtsc' is not tsc or ticker"),
            (["--clock", "tickers"], r"clock 'tickers' is not tsc or ticker"),
            (["--clock", "ticker", "--no-timestamps"], r"--no-timestamps records none"),
            (["--clock", "ticker:20us", "--counts"], r"--counts records counts only"),
            (["--clock", "ticker", "--backend", "pt"], r"leave out --backend pt")]:
        if os.path.exists(out):
            os.unlink(out)
        r = subprocess.run([ptcall, "record", "-o", out] + args + ["--", exe],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        first = r.stderr.splitlines()[0] if r.stderr else ""
        check(r.returncode == 2 and re.search(pat, first),
              "bad %s: status %d, %r" % (args, r.returncode, r.stderr))
        check(not os.path.exists(out), "bad %s: a trace was written" % args)
    if os.path.exists(out):
        os.unlink(out)
    env = dict(os.environ, PTCALL_BACKEND="soft", PTCALL_OUTPUT=out, PTCALL_CLOCK="bogus")
    r = subprocess.run([exe], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    check(r.returncode == 0 and "PTCALL_CLOCK" in r.stderr and "not tracing" in r.stderr and
          len(r.stderr.splitlines()) == 1 and not os.path.exists(out),
          "PTCALL_CLOCK=bogus: %d %r" % (r.returncode, r.stderr))
    env = dict(env, PTCALL_CLOCK="ticker", PTCALL_TIMESTAMPS="0")
    r = subprocess.run([exe], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    check(r.returncode == 0 and "PTCALL_TIMESTAMPS=0" in r.stderr and not os.path.exists(out),
          "PTCALL_CLOCK=ticker PTCALL_TIMESTAMPS=0: %d %r" % (r.returncode, r.stderr))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--case", default="all")
    a = ap.parse_args()
    b = os.path.abspath(a.build)
    ptcall = os.path.join(b, "tools", "ptcall")
    d = os.path.join(os.path.abspath(a.work), "ticker")
    os.makedirs(d, exist_ok=True)
    exe = os.path.join(d, "ticker")
    run([os.path.join(b, "bin", "ptcall-cc"), "-O2", "-pthread",
         os.path.join(HERE, "programs", "ticker.c"), "-o", exe])
    cases = {"plain": lambda: case_run(ptcall, exe, d, "plain", 1),
             "threads": lambda: case_run(ptcall, exe, d, "threads", 4),
             "fork": lambda: case_fork(ptcall, exe, d),
             "ring": lambda: case_ring(ptcall, exe, d),
             "attach": lambda: case_attach(ptcall, b, d),
             "bad": lambda: case_bad(ptcall, exe, d)}
    for name, fn in cases.items():
        if a.case in ("all", name):
            before = len(failures)
            fn()
            if len(failures) > before and name != "bad":
                # the clock's readings depend on when the ticker thread runs: a machine busy
                # with other tests can stall it past what a check allows (the documented
                # trade). A case fails when a second recording fails too; the first
                # failure stays printed above.
                print("%s: %d check(s) failed; recording the case once more"
                      % (name, len(failures) - before))
                del failures[before:]
                fn()
    if failures:
        sys.exit("FAIL ticker: %d check(s) failed" % len(failures))
    print("PASS ticker")


if __name__ == "__main__":
    main()
