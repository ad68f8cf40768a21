#!/usr/bin/env python3
"""Trace bandwidth of the workloads of bench/: stub-filtered Intel PT (simulated) against full
tracing (estimated), the soft backend, uftrace and XRay FDR; and the speed of `ptcall bandwidth`.

usage: bench/bandwidth.py [--build DIR] [--quick] [--runs N] [--only table,speed] [--no-write]

  table  for the calls workload, bzip2, Lua and SQLite (bench/run.py's builds and inputs): the
         instrumented binary's untraced run time (median of 3), a soft recording, then
         `ptcall bandwidth --format json -- BINARY ARGS` (which runs it under callgrind for the
         full-PT estimate). Rates are bytes over the untraced run time. uftrace's and XRay FDR's
         bytes per event are read from docs/benchmarks.md (bench/run.py's last run).
         Writes the block between <!-- bandwidth-table:begin/end --> in docs/bandwidth.md.
         About 10 minutes (callgrind runs each workload 20-100 times slower); --quick: 2 minutes.
  speed  `ptcall bandwidth` (all four timing configurations) beside `ptcall report` on the calls
         workload's 108 M-event trace (bench/run.py --only decode records it; recorded here if
         missing), interleaved, the median of per-round ratios. Writes the block between
         <!-- bandwidth-speed:begin/end --> in docs/benchmarks.md.
"""
import argparse
import importlib.util
import json
import os
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_spec = importlib.util.spec_from_file_location("benchrun", os.path.join(ROOT, "bench", "run.py"))
R = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(R)

TIMINGS = ("none", "tsc", "mtc", "cyc")


def peer_bytes_per_event():
    """uftrace's and XRay FDR's bytes/event per workload, from docs/benchmarks.md's tables."""
    out, wl = {}, None
    try:
        text = open(os.path.join(ROOT, "docs", "benchmarks.md")).read()
    except OSError:
        return out
    for line in text.splitlines():
        m = re.match(r"### (\w+):", line)
        if m:
            wl = m.group(1)
            continue
        m = re.match(r"\| (uftrace record|XRay FDR mode) \|([^|]*\|){3}\s*([0-9.]+)", line)
        if m and wl:
            out.setdefault(wl, {})["uftrace" if m.group(1).startswith("uftrace") else "xray"] = float(m.group(3))
    return out


def table(a, tools, work, wdir):
    ptcall, ptcc = tools["ptcall"], tools["ptcc"]
    peers = peer_bytes_per_event()
    rows = []
    for wl in R.workloads_for(a, work, wdir, {"calls", "bzip2", "lua", "sqlite"}):
        d = os.path.join(work, "bandwidth", wl.name)
        os.makedirs(d, exist_ok=True)
        # valgrind 3.19 (Debian 12) cannot read clang 14's default DWARF 5: DWARF 4 for callgrind
        wl.cflags.append("-gdwarf-4")
        exe = R.build(ptcc, wl, [], [], os.path.join(d, "ptcall"), deps=R.ptcall_deps(tools["build_dir"]))
        untraced = statistics.median(R.timed_run([exe] + wl.args)[0] for _ in range(3))
        trace = os.path.join(d, "run.ptc")
        if os.path.exists(trace):
            os.unlink(trace)
        traced_s = R.timed_run([ptcall, "record", "-q", "-o", trace, "--", exe] + wl.args)[0]
        t0 = time.perf_counter()
        p = subprocess.run([ptcall, "bandwidth", trace, "--format", "json", "--", exe] + wl.args,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        full_s = time.perf_counter() - t0
        if p.returncode:
            sys.exit("bench: ptcall bandwidth failed on %s:\n%s" % (wl.name, p.stderr[-2000:]))
        doc = json.loads(p.stdout)
        stub = {m["timing"]: m["bytes"] for m in doc["modes"]}
        # issue 28: under Intel PT without timing leaves' exits stay unarmed; an untimed
        # recording knows the leaves (whole calls), `--timing none` simulates one hit per call
        utrace = os.path.join(d, "run-untimed.ptc")
        if os.path.exists(utrace):
            os.unlink(utrace)
        R.timed_run([ptcall, "record", "-q", "--no-timestamps", "-o", utrace, "--", exe] + wl.args)
        pu = subprocess.run([ptcall, "bandwidth", utrace, "--timing", "none", "--format", "json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if pu.returncode:
            sys.exit("bench: ptcall bandwidth failed on %s (untimed):\n%s" % (wl.name, pu.stderr[-2000:]))
        stub_leaf = json.loads(pu.stdout)["modes"][0]["bytes"]
        full = {m["timing"]: m["bytes"] for m in doc.get("full_pt", {}).get("modes", [])}
        fp = doc.get("full_pt", {})
        rows.append({"name": wl.name, "cmd": wl.cmd_desc, "hits": doc["hits"], "untraced_s": untraced,
                     "traced_s": traced_s, "soft_bytes": os.path.getsize(trace), "stub": stub, "full": full,
                     "stub_leaf": stub_leaf,
                     "branches": fp.get("conditional_branches", 0), "full_s": full_s,
                     "peers": peers.get(wl.name, {})})
        print("bench: bandwidth: %s: %d hits, %.2f s untraced, full-PT estimate took %.0f s"
              % (wl.name, doc["hits"], untraced, full_s), file=sys.stderr)
    mb = lambda b, s: b / s / 1e6
    lines = ["Command: `python3 bench/bandwidth.py --only table%s` (%s, %s). Rates are bytes over the "
             "untraced run time of the instrumented binary (its sleds disarmed), so every column "
             "describes the same work; *stub* is the simulated stub-filtered PT of the soft recording's "
             "hits, *full* the estimate from the same binary and input under callgrind."
             % (" --quick" if a.quick else "", time.strftime("%Y-%m-%d"), R.machine()), ""]
    lines.append("| workload | events/s (M) | cond. branches per event | stub none | stub tsc | stub mtc | stub cyc "
                 "| full none | full mtc | full cyc | full ÷ stub (none / mtc / cyc) | soft backend | "
                 "soft B/event | uftrace B/event | XRay FDR B/event | stub none B/event: leaf exits armed → unarmed |")
    lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        s, f, u = r["stub"], r["full"], r["untraced_s"]
        ratio = " / ".join("%.2g" % (f[t] / s[t]) if s.get(t) and f.get(t) else "—" for t in ("none", "mtc", "cyc"))
        peer = lambda k: "%.2f" % r["peers"][k] if k in r["peers"] else "—"
        lines.append("| %s (`%s`) | %.1f | %.2f | %s | %s | %s | %s | %s | %s | %s | %s | %.1f MB/s | %.2f | %s | %s | %s |" % (
            r["name"], r["cmd"], r["hits"] / u / 1e6, r["branches"] / max(r["hits"], 1),
            *("%.1f" % mb(s[t], u) for t in TIMINGS),
            *("%.1f" % mb(f[t], u) if t in f else "—" for t in ("none", "mtc", "cyc")),
            ratio, r["soft_bytes"] / r["traced_s"] / 1e6, r["soft_bytes"] / max(r["hits"], 1),
            peer("uftrace"), peer("xray"),
            "%.2f → %.2f" % (s["none"] / max(r["hits"], 1), r["stub_leaf"] / max(r["hits"], 1))
            if s.get("none") else "—"))
    lines.append("")
    lines.append("MB/s are 10⁶ bytes per second. *events* are stub hits (an entry or an exit). The soft "
                 "backend's rate is its trace over the traced run's time (what its disk sees). uftrace and "
                 "XRay FDR: bytes per event of their traces of the same workloads (docs/benchmarks.md, "
                 "bench/run.py's full-size inputs). The last column: the simulated bytes of `none` over "
                 "the same events, with every exit armed (the timed recording's hits) and with leaves' "
                 "exits unarmed as `record --backend pt --timing none` leaves them (an untimed recording "
                 "of the same run, `ptcall bandwidth --timing none`).")
    return rows, "\n".join(lines)


def speed(a, tools, work, runs):
    ptcall, ptcc = tools["ptcall"], tools["ptcc"]
    d = os.path.join(work, "decode")
    trace = os.path.join(d, "calls.ptc")
    fib_n, loop_n = ("25", "1000000") if a.quick else ("34", "45000000")
    if not os.path.exists(trace) or a.quick:
        os.makedirs(d, exist_ok=True)
        wl = R.Workload("decode", [os.path.join(ROOT, "bench", "workloads", "calls.c")], [fib_n, loop_n])
        exe = R.build(ptcc, wl, [], [], os.path.join(d, "ptcall"), deps=R.ptcall_deps(tools["build_dir"]))
        R.timed_run([ptcall, "record", "-q", "-o", trace, "--", exe] + wl.args)
    events = R.ptcall_events(ptcall, trace)
    cmds = {"report": [ptcall, "report", trace], "bandwidth": [ptcall, "bandwidth", trace]}
    t = {k: [] for k in cmds}
    cpu = {k: [] for k in cmds}
    ratios = []
    for i in range(runs):
        for k, c in cmds.items():
            dt, _, cp = R.timed_run(c, cpu=True, warm=[trace])
            t[k].append(dt)
            cpu[k].append(cp)
        ratios.append(t["bandwidth"][-1] / t["report"][-1])
        print("bench: bandwidth speed round %d/%d: report %.2f s, bandwidth %.2f s"
              % (i + 1, runs, t["report"][-1], t["bandwidth"][-1]), file=sys.stderr)
    med = {k: statistics.median(v) for k, v in t.items()}
    cmed = {k: statistics.median(v) for k, v in cpu.items()}
    r = statistics.median(ratios)
    text = "\n".join([
        "`python3 bench/bandwidth.py --only speed --runs %d` (%s, %s): the calls workload's trace "
        "(`calls %s %s`, %d events), each command %d times, interleaved; ratio = median of the "
        "per-round ratios." % (runs, time.strftime("%Y-%m-%d"), R.machine(), fib_n, loop_n, events, runs),
        "",
        "| command | median s | CPU s | M events/s |",
        "|---|---:|---:|---:|",
        "| `ptcall report calls.ptc` | %.2f | %.2f | %.0f |" % (med["report"], cmed["report"], events / med["report"] / 1e6),
        "| `ptcall bandwidth calls.ptc` (none, tsc, mtc, cyc) | %.2f | %.2f | %.0f |"
        % (med["bandwidth"], cmed["bandwidth"], events / med["bandwidth"] / 1e6),
        "",
        "bandwidth ÷ report: **%.2f×** (target ≤ 3×). The simulation runs on two threads (the decoder and "
        "record maker, the packet counter; docs/bandwidth.md); `report` on one." % r])
    return {"report": med["report"], "bandwidth": med["bandwidth"], "ratio": r}, text


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--only", default="table,speed")
    ap.add_argument("--no-write", action="store_true", help="print, leave the docs alone")
    a = ap.parse_args()
    build_dir = os.path.abspath(a.build)
    tools = {"ptcall": os.path.join(build_dir, "tools", "ptcall"), "ptcc": os.path.join(build_dir, "bin", "ptcall-cc"),
             "build_dir": build_dir}
    work = os.path.join(build_dir, "bench")
    wdir = os.path.join(ROOT, "bench", "workloads")
    want = set(a.only.split(","))
    out = {}
    if "table" in want:
        rows, text = table(a, tools, work, wdir)
        out["table"] = rows
        print(text)
        if not a.no_write:
            R.replace_block(os.path.join(ROOT, "docs", "bandwidth.md"), "bandwidth-table", text)
    if "speed" in want:
        res, text = speed(a, tools, work, 3 if a.quick else a.runs)
        out["speed"] = res
        print(text)
        if not a.no_write:
            R.replace_block(os.path.join(ROOT, "docs", "benchmarks.md"), "bandwidth-speed", text)
    with open(os.path.join(work, "bandwidth.json"), "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
