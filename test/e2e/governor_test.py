#!/usr/bin/env python3
"""A budget's governor (issue 28; docs/runtime.md, *The governor*), on a real program.

governor_prog's start is unlike the rest of its run: during the pilot it calls burst() rarely,
so the pilot traces it; then it calls burst() millions of times, whose events cost far more
than the budget. Checked, timed and untimed: the governor demotes burst() (a BUDGET chunk of
source GOVERNOR, `report` marks it), leaves the functions that cost little traced, every
function's calls equal the program's own count, nothing is unmatched or repaired, and the
burst phase runs faster than with `--governor 0`, which keeps the pilot's choice (checked to
write no such chunk). A choice from previous counts (`--from-counts` of a run without the
burst phase) is governed the same way. A program forking children during the burst phase
(some in a demotion's grace) keeps every call exact and none unmatched. Then the usage
errors.
"""
import argparse
import json
import os
import re
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "real"))
import ptc_chunks  # noqa: E402

CHUNK_BUDGET = 19
SRC_PILOT, SRC_GOVERNOR = 1, 3
failures = []


def fail(msg):
    print("FAIL: " + msg)
    failures.append(msg)


def run(cmd, env=None, expect=0):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if r.returncode != expect:
        sys.exit("FAIL: %s exited %d (expected %d)\n%s%s" % (" ".join(cmd), r.returncode, expect,
                                                            r.stdout[-3000:], r.stderr[-3000:]))
    return r


def budget_sources(trace):
    out = []
    for typ, _f, _pid, _tid, _seq, p in ptc_chunks.chunks(trace):
        if typ == CHUNK_BUDGET:
            note_size = struct.unpack_from("<I", p, 100)[0]
            out.append((struct.unpack_from("<I", p, 4)[0], p[104:104 + note_size - 1].decode()))
    return out


def program_counts(stdout):
    m = re.search(r"calls calm (\d+) burst (\d+) side_leaf (\d+)", stdout)
    r = re.search(r"last third (\d+) calls/ms of CPU", stdout)
    if not m or not r:
        sys.exit("FAIL: governor_prog printed no counts: %r" % stdout)
    return {"calm": int(m.group(1)), "burst": int(m.group(2)),
            "side_leaf": int(m.group(3))}, int(r.group(1))


def record(ptcall, exe, trace, args):
    r = run([ptcall, "record", "-o", trace, "--pilot", "100ms"] + args + ["--", exe, "400",
                                                                            "1500", "1"])
    return program_counts(r.stdout) + (r.stderr,)


def check_governed(ptcall, trace, counts, label, stderr, first=SRC_PILOT):
    srcs = budget_sources(trace)
    gov = [n for s, n in srcs if s == SRC_GOVERNOR]
    if not srcs or srcs[0][0] != first or not gov:
        fail("%s: a BUDGET chunk of source %d, then the governor's, expected: %s"
             % (label, first, srcs))
    if gov and "governor:" not in stderr:
        fail("%s: no line on stderr said what the governor did:\n%s" % (label, stderr))
    rep = json.loads(run([ptcall, "report", trace, "--format", "json", "--top", "0"]).stdout)
    funcs = {f["name"]: f for f in rep["functions"]}
    for name, n in counts.items():
        got = funcs.get(name, {}).get("calls")
        if got != n:
            fail("%s: %s: %s calls in the report, the program counted %d" % (label, name, got, n))
    b = funcs.get("burst", {})
    if not b.get("demoted") or b.get("state") != "traced":
        fail("%s: burst should be demoted (traced, then counted): %s" % (label, b))
    for name in ("calm", "main"):
        if funcs.get(name, {}).get("demoted"):
            fail("%s: %s costs little and was demoted" % (label, name))
    t = rep["totals"]
    if t["unmatched"] or t["repairs"] or t["lost_events"] or not t["complete"]:
        fail("%s: the trace is not whole: %s" % (label, t))
    st = rep["function_states"]
    if not st or st.get("demoted", 0) < 1 or st["calls_counted"] < counts["burst"] / 2:
        fail("%s: most of burst's calls should be counted: %s" % (label, st))
    if [s for s in rep["budgets"] if s["source"] == "governor"] == []:
        fail("%s: the report's budgets have no governor: %s" % (label, rep["budgets"]))
    text = run([ptcall, "report", trace]).stdout
    if not re.search(r"demoted\s+burst", text) or "demoted by the governor" not in text:
        fail("%s: the text report does not mark burst demoted:\n%s" % (label, text[:3000]))
    print("%s: %s; %d governed calls" % (label, gov[0] if gov else "-", t.get("governed", 0)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    b = os.path.abspath(a.build)
    ptcall = os.path.join(b, "tools", "ptcall")
    d = os.path.join(os.path.abspath(a.work), "governor")
    os.makedirs(d, exist_ok=True)
    exe = os.path.join(d, "governor_prog")
    run([os.path.join(b, "bin", "ptcall-cc"), "-O2", "-pthread",
         os.path.join(HERE, "programs", "governor_prog.c"), "-o", exe])

    # timed: the governor demotes burst()
    tr = os.path.join(d, "timed.ptc")
    counts, _rate, err = record(ptcall, exe, tr, ["--overhead", "10"])
    check_governed(ptcall, tr, counts, "timed", err)

    # the pilot's choice alone: burst() traced to the end. The two speeds are of one thread
    # (the second thread's CPU time would dilute them), per ms of the process's CPU time in
    # the burst phase's last third: the phase's wall-time rate, under ctest -j2, came to
    # 1.20x once
    def one_thread(trace, args):
        r = run([ptcall, "record", "-o", trace, "--pilot", "100ms"] + args +
                ["--", exe, "400", "1500", "0"])
        return program_counts(r.stdout) + (r.stderr,)
    _c, rate_gov, _e = one_thread(os.path.join(d, "speed.ptc"), ["--overhead", "10"])
    tr0 = os.path.join(d, "off.ptc")
    counts0, rate_off, err0 = one_thread(tr0, ["--overhead", "10", "--governor", "0"])
    if any(s == SRC_GOVERNOR for s, _n in budget_sources(tr0)) or "governor off" not in err0:
        fail("--governor 0 still governed: %s\n%s" % (budget_sources(tr0), err0))
    rep0 = json.loads(run([ptcall, "report", tr0, "--format", "json", "--top", "0"]).stdout)
    f0 = {f["name"]: f for f in rep0["functions"]}
    if f0.get("burst", {}).get("calls") != counts0["burst"] or f0["burst"].get("demoted"):
        fail("--governor 0: burst %s, the program counted %d" % (f0.get("burst"),
                                                                counts0["burst"]))
    print("burst phase, its last third: %d calls per ms of CPU with the governor, %d with "
          "--governor 0 (%.2fx)" % (rate_gov, rate_off, rate_gov / rate_off if rate_off else 0))
    # tracing burst() costs about twice its own work (two timed events and the drain's
    # encoding against some 15 ns); counted, it runs at nearly the plain build's speed
    if not rate_off or rate_gov < 1.3 * rate_off:
        fail("the governor did not speed up the burst phase: %d against %d calls/ms"
             % (rate_gov, rate_off))

    # untimed: an untimed event costs less, so a lower budget
    tr = os.path.join(d, "untimed.ptc")
    counts, _r, err = record(ptcall, exe, tr, ["--overhead", "2", "--no-timestamps"])
    check_governed(ptcall, tr, counts, "untimed", err)

    # a choice from previous counts: a counting run without the burst phase makes burst()
    # look cheap, and the governor watches the trace set's choice as it watches a pilot's
    cnt = os.path.join(d, "calm.counts.ptc")
    run([ptcall, "record", "-q", "--counts", "-o", cnt, "--", exe, "300", "0", "1"])
    tr = os.path.join(d, "from-counts.ptc")
    for f in (tr, tr + ".trace-set"):
        if os.path.exists(f):
            os.unlink(f)
    r = run([ptcall, "record", "-o", tr, "--overhead", "10", "--from-counts", cnt, "--", exe,
             "400", "1500", "1"])
    counts, _r = program_counts(r.stdout)
    srcs = budget_sources(tr)
    if not srcs or srcs[0][0] != 2:
        fail("from counts: a BUDGET chunk of source PREVIOUS first expected: %s" % srcs)
    check_governed(ptcall, tr, counts, "from counts", r.stderr, first=2)

    # a fork child of a process in a demotion's grace: the child settles at once (exits
    # disarmed) and readers give it its parent's governor. Without both, 4000 exits of the
    # children's counted calls read as unmatched (checked on the code before them).
    tr = os.path.join(d, "fork.ptc")
    r = run([ptcall, "record", "-q", "-o", tr, "--overhead", "10", "--pilot", "100ms", "--",
             exe, "400", "1500", "1", "5"])
    counts, _r = program_counts(r.stdout)
    m = re.search(r"children (\d+) calling burst (\d+) times each", r.stdout)
    kids = int(m.group(1)) * int(m.group(2)) if m else None
    rep = json.loads(run([ptcall, "report", tr, "--format", "json", "--top", "0"]).stdout)
    t = rep["totals"]
    got = {f["name"]: f["calls"] for f in rep["functions"]}
    if kids is None or got.get("burst") != counts["burst"] + kids or \
            got.get("calm") != counts["calm"]:
        fail("forks: burst %s calls, the program and its children made %s + %s"
             % (got.get("burst"), counts["burst"], kids))
    if t["unmatched"] or t["repairs"] or t["processes"] < 50 or not t["complete"]:
        fail("forks: %s" % t)
    print("forks: %d processes, burst %d calls, %d governed, 0 unmatched"
          % (t["processes"], got.get("burst", 0), t.get("governed", 0)))

    # usage
    r = run([ptcall, "record", "-o", os.path.join(d, "u.ptc"), "--governor", "100ms", "--",
             exe, "10", "10"], expect=2)
    if "--governor goes with --overhead" not in r.stderr:
        fail("--governor without --overhead: %s" % r.stderr)
    if failures:
        sys.exit("%d checks failed" % len(failures))
    print("PASS")


if __name__ == "__main__":
    main()
