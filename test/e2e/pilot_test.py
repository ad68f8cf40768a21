#!/usr/bin/env python3
"""A budget's pilot (issue 28; docs/runtime.md, *Tracing within a budget*), on a real program.

`record --overhead PCT --pilot D`: every function is counted until the pilot ends, then the
functions that fit the budget are traced and the others stay counted. Checked: the trace's
PILOT COUNTS segment and its BUDGET chunk (source PILOT); every function's calls equal a
`record --counts` run's exactly; the traced set is the cheapest (fewest calls) first; the calls
the pilot saw enter and the trace saw return are marked, never unmatched. Then a program that
ends before its pilot, a budget below what counting costs, and PTCALL_COSTS missing: each
one line, every function counted, nothing traced.
"""
import argparse
import json
import os
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "real"))
import ptc_chunks  # noqa: E402

CHUNK_COUNTS, CHUNK_BUDGET = 12, 19
COUNTS_F_PILOT = 0x8
FUNCS = ["hot", "warm", "cold", "rare", "t_leaf", "t_step", "side", "main"]
failures = []


def fail(msg):
    print("FAIL: " + msg)
    failures.append(msg)


def run(cmd, env=None):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if r.returncode:
        sys.exit("FAIL: %s exited %d\n%s%s" % (" ".join(cmd), r.returncode, r.stdout[-3000:],
                                                r.stderr[-3000:]))
    return r


def report(ptcall, trace):
    return json.loads(run([ptcall, "report", trace, "--format", "json", "--top", "0"]).stdout)


def budgets(trace):
    out = []
    for typ, _f, _pid, _tid, _seq, p in ptc_chunks.chunks(trace):
        if typ == CHUNK_BUDGET:
            kind, source = struct.unpack_from("<II", p, 0)
            outcome, note_size = struct.unpack_from("<II", p, 96)
            out.append({"kind": kind, "source": source, "outcome": outcome,
                        "note": p[104:104 + note_size - 1].decode()})
    return out


def pilot_segments(trace):
    return sum(1 for typ, _f, _pid, _tid, _seq, p in ptc_chunks.chunks(trace)
               if typ == CHUNK_COUNTS and struct.unpack_from("<I", p, 4)[0] & COUNTS_F_PILOT)


def pilot_wakeups(pid):
    """the ptcall-pilot thread's voluntary context switches, or None without that thread"""
    tdir = "/proc/%d/task" % pid
    for tid in os.listdir(tdir):
        try:
            with open(os.path.join(tdir, tid, "comm")) as f:
                if f.read().strip() != "ptcall-pilot":
                    continue
            with open(os.path.join(tdir, tid, "status")) as f:
                for line in f:
                    if line.startswith("voluntary_ctxt_switches:"):
                        return int(line.split()[1])
        except OSError:
            continue
    return None


def calls_of(rep):
    return {f["name"]: int(f["calls"]) for f in rep["functions"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    b = os.path.abspath(a.build)
    ptcall = os.path.join(b, "tools", "ptcall")
    d = os.path.join(os.path.abspath(a.work), "pilot")
    os.makedirs(d, exist_ok=True)
    exe = os.path.join(d, "pilot_prog")
    run([os.path.join(b, "bin", "ptcall-cc"), "-O2", "-pthread",
         os.path.join(HERE, "programs", "pilot_prog.c"), "-o", exe])
    rounds = "30000"
    ref_trace = os.path.join(d, "counts.ptc")
    run([ptcall, "record", "-q", "--counts", "-o", ref_trace, "--", exe, rounds])
    ref = calls_of(report(ptcall, ref_trace))
    for f in FUNCS:
        if not ref.get(f):
            sys.exit("FAIL: counting mode saw no call of %s: %s" % (f, ref))

    # the pilot ends, a part is traced, the rest counted
    tr = os.path.join(d, "pilot.ptc")
    r = run([ptcall, "record", "-o", tr, "--overhead", "25", "--pilot", "50ms", "--", exe,
             rounds])
    bs = budgets(tr)
    if len(bs) != 1 or bs[0]["source"] != 1 or bs[0]["kind"] != 1 or bs[0]["outcome"] not in (0, 1):
        fail("one BUDGET chunk of a pilot with outcome OK or ALL expected, got %s" % bs)
    if pilot_segments(tr) != 1:
        fail("one COUNTS segment of flag PILOT expected, got %d" % pilot_segments(tr))
    rep = report(ptcall, tr)
    got = calls_of(rep)
    for f in FUNCS:
        if got.get(f) != ref[f]:
            fail("%s: %s calls with the budget, %d in counting mode" % (f, got.get(f), ref[f]))
    state = {f["name"]: f.get("state") for f in rep["functions"]}
    traced = [f for f in FUNCS if state.get(f) == "traced"]
    counted = [f for f in FUNCS if state.get(f) == "counted"]
    if not traced or not counted or len(traced) + len(counted) != len(FUNCS):
        fail("expected some functions traced and the others counted: %s" % state)
    elif max(ref[f] for f in traced) > min(ref[f] for f in counted):
        # the program's rates are steady: fewer calls in the run means fewer in the pilot
        fail("the traced set is not the cheapest first: traced %s, counted %s (calls %s)"
             % (traced, counted, ref))
    t = rep["totals"]
    if t["unmatched"] or not t["complete"] or t["lost_events"]:
        fail("the trace after the pilot is not whole: %s" % t)
    print("pilot: %s traced, %s counted; %s; calls equal counting mode's"
          % (",".join(traced), ",".join(counted), bs[0]["note"] if bs else "-"))

    # a program shorter than its pilot
    tr = os.path.join(d, "short.ptc")
    r = run([ptcall, "record", "-o", tr, "--overhead", "25", "--pilot", "30s", "--", exe, "2000"])
    bs = budgets(tr)
    if len(bs) != 1 or "into its pilot" not in bs[0]["note"]:
        fail("a program shorter than its pilot: BUDGET %s" % bs)
    if r.stderr.count("into its pilot") < 1:
        fail("a program shorter than its pilot: no line said so:\n%s" % r.stderr)
    rep = report(ptcall, tr)
    if any(f.get("state") == "traced" for f in rep["functions"]) or rep["totals"]["events"]:
        fail("a program shorter than its pilot traced something")
    print("short: %s" % (bs[0]["note"] if bs else "-"))

    # a budget below what counting costs
    tr = os.path.join(d, "below.ptc")
    r = run([ptcall, "record", "-o", tr, "--overhead", "0.001", "--pilot", "50ms", "--", exe,
             rounds])
    bs = budgets(tr)
    if len(bs) != 1 or bs[0]["outcome"] != 2 or "counting alone costs" not in r.stderr:
        fail("a budget below counting: BUDGET %s, stderr:\n%s" % (bs, r.stderr))
    got = calls_of(report(ptcall, tr))
    if any(got.get(f) != ref[f] for f in FUNCS):
        fail("a budget below counting: calls %s, counting mode %s" % (got, ref))
    print("below counting: %s" % (bs[0]["note"] if bs else "-"))

    # the runtime without a cost model (a program started by its service manager)
    tr = os.path.join(d, "nocosts.ptc")
    env = dict(os.environ, PTCALL_BACKEND="soft", PTCALL_OUTPUT=tr, PTCALL_OVERHEAD="5",
               PTCALL_PILOT_MS="20")
    env.pop("PTCALL_COSTS", None)
    if os.path.exists(tr):
        os.unlink(tr)
    libdir = os.path.join(b, "runtime")
    env["LD_LIBRARY_PATH"] = libdir + ":" + env.get("LD_LIBRARY_PATH", "")
    r = run([exe, rounds], env=env)
    bs = budgets(tr)
    if len(bs) != 1 or "PTCALL_COSTS is not set" not in bs[0]["note"] or \
            "PTCALL_COSTS is not set" not in r.stderr:
        fail("no PTCALL_COSTS: BUDGET %s, stderr:\n%s" % (bs, r.stderr))
    print("no costs: %s" % (bs[0]["note"] if bs else "-"))

    # a process with the runtime but nothing instrumented: its pilot ends, finds nothing
    # registered and looks again less and less often (it used to wake every 10 ms for good)
    env = dict(os.environ, PTCALL_BACKEND="soft", PTCALL_OUTPUT=os.path.join(d, "none.ptc"),
               PTCALL_OVERHEAD="5", PTCALL_PILOT_MS="20", PTCALL_COSTS="event=20,count=1",
               LD_PRELOAD=os.path.join(libdir, "libptcall.so"))
    p = subprocess.Popen(["sh", "-c", "while :; do :; done"], env=env)
    try:
        time.sleep(2)
        first = pilot_wakeups(p.pid)
        time.sleep(3)
        later = pilot_wakeups(p.pid)
    finally:
        p.kill()
        p.wait()
    if first is None or later is None or later - first > 12:
        fail("a pilot with nothing registered woke %s times in 3 s (at most 12 expected)"
             % (None if first is None or later is None else later - first))
    else:
        print("nothing registered: the pilot woke %d times in 3 s" % (later - first))
    if failures:
        sys.exit("%d checks failed" % len(failures))
    print("PASS")


if __name__ == "__main__":
    main()
