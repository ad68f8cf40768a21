#!/usr/bin/env python3
"""Tracing within a budget, measured (issue 28, item 5): `ptcall record --overhead P` beside the
plain run of the same binary, on Lua, SQLite, bzip2 (bench/run.py's workloads and builds) and
redis-server under redis-benchmark (test/real/redis_e2e.py's build and server helpers).

For each workload, timing mode (timed, untimed = --no-timestamps) and budget P (2, 5, 10, 25 %):
  slowdown   paired rounds, plain (the ptcall-cc binary run without ptcall: its sites are nops)
             and `record --overhead P`, alternating which goes first; the median of the
             per-round ratios and their spread. Lua, SQLite, bzip2: wall time; Redis: throughput
             (requests/s of redis-benchmark -n N), slowdown = plain rps / budget rps - 1.
  verdict    within P, or the miss with what the trace shows of its reason: the BUDGET chunk's
             outcome (BELOW_COUNTING), the model's own prediction, the pilot's share of the run,
             a pilot that saw too few calls, a spread that straddles P.
  kept       the traced set (from the trace's MODULE, MODULE_ARMED and MODULE_COUNTED chunks)
             against counting mode's calls (`record --counts`) and a full timed trace's
             inclusive times of the same workload: calls of the traced functions / all calls,
             inclusive time of the traced functions / inclusive time of all functions.
  counts     every function's calls in the budget's trace (`report --format json`) against
             counting mode's: exactly, for Lua, SQLite and bzip2 (functions whose calls differ
             between three counting runs, one with a longer environment, are left out of the comparison,
             and said); for Redis,
             with the request count fixed, the request-driven functions (REDIS_FUNCS).
  pt         `ptcall bandwidth FULL --budget RATE,AUX --format json` of the full trace for a few
             rates: the simulated mean rate of each timing within RATE, no bytes lost in the
             buffer model.
Writes a table per workload between <!-- bench/budget.py:begin/end --> in docs/benchmarks.md
and the figures to docs/benchmarks-budget.json (--no-write: build/bench/budget/ only).

The options it needs (record --overhead, --pilot, bandwidth --budget) are checked first: a
build without them stops with one line saying which is missing. --parts plain,counts,full runs
what needs none of them.

usage: bench/budget.py [--build DIR] [--rounds N] [--quick] [--budgets 2,5,10,25]
         [--workloads lua,sqlite,bzip2,redis] [--modes timed,untimed] [--pilot DURATION]
         [--sources pilot,counts] [--pt-rates 100M,1G] [--aux 4M] [--redis-server EXE]
         [--parts LIST] [--no-write] [--check]
  --sources: what a budget chooses from: the run's own pilot (record --pilot) with its governor
  (docs/runtime.md, The governor), the pilot alone (nogov: record --governor 0), counting mode's
  trace of the same load (record --from-counts); default pilot; Redis always adds counts (its
  pilot runs while the server waits for redis-benchmark). `--sources pilot,nogov` measures the
  governor against the pilot's choice alone, side by side in the same rounds.
  --quick: small inputs, 2 rounds, budget 5 %, timed only, --pilot 20ms, one PT rate; Redis only when its
  server is already built (or --redis-server): about a minute.
"""
import argparse
import csv
import io
import json
import os
import re
import shutil
import statistics
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "test", "real"))
import run as R  # noqa: E402  bench/run.py: workloads, builds, timed runs, replace_block
import redis_e2e as E  # noqa: E402  build_redis, the server's arguments, readiness, shutdown
import ptc_chunks as C  # noqa: E402  the chunk layer of a trace file

PARTS = ("plain", "counts", "full", "budget", "pt")
WORKLOADS = ("lua", "sqlite", "bzip2", "redis")
MODE_FLAGS = {"timed": [], "untimed": ["--no-timestamps"]}
# Redis functions that run a fixed number of times per request: with redis-benchmark -n fixed,
# their calls must be the same in every run (the server's cron and event loop are not)
REDIS_FUNCS = ("processCommand", "call", "lookupCommand", "setCommand", "getCommand")
OUTCOMES = {0: "OK", 1: "ALL", 2: "BELOW_COUNTING"}
# Functions whose calls follow the process's memory layout, which ASLR changes from run to run:
# Lua's luaS_new keeps a cache of strings keyed by the C string's address (lstring.c), and
# calls luaS_newlstr on a miss. 845,258 calls instead of 845,257 in 1 of 24 runs of counting
# mode alone (bench.lua 12): rarer than three counting runs can show, so named here.
LAYOUT_DEPENDENT = {"lua": ("luaS_newlstr",)}
CHUNK_MODULE, CHUNK_ARMED, CHUNK_BUDGET, CHUNK_COUNTED = 4, 11, 19, 20
SRC_GOVERNOR = 3
SOURCES = ("pilot", "nogov", "counts")
SOURCE_NAMES = {"pilot": "the pilot + governor", "nogov": "the pilot alone", "counts": "counting mode's trace"}


def die(msg):
    sys.exit("bench/budget.py: " + msg)


def helps(ptcall):
    def h(*cmd):
        return subprocess.run([ptcall] + list(cmd) + ["--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True).stdout
    return h("record"), h("bandwidth")


def check_options(ptcall, a):
    """One line naming every option the chosen parts need and this build lacks."""
    rec, bw = helps(ptcall)
    missing = []
    if "budget" in a.parts:
        if not re.search(r"--overhead\b", rec):
            missing.append("record --overhead is not in this build (`ptcall record --help` has no --overhead)")
        if a.pilot and not re.search(r"--pilot\b", rec):
            missing.append("record --pilot is not in this build")
        if (a.sources is None and "redis" in a.workloads or "counts" in (a.sources or [])) \
                and not re.search(r"--from-counts\b", rec):
            missing.append("record --from-counts is not in this build")
    if "pt" in a.parts and not re.search(r"--budget\b", bw):
        missing.append("bandwidth --budget is not in this build (`ptcall bandwidth --help` has no --budget)")
    if missing:
        die("; ".join(missing) + ": build ptcall with issue 28's branches merged, or run what exists today "
            "with --parts plain,counts,full")


# ---------------------------------------------------------------- what a trace says

def trace_sets(path):
    """From the chunks themselves, not an output format: {(module basename, linkage name):
    "traced"|"demoted"|"counted"|"neither"} and the BUDGET chunks (dicts), per process merged.
    The last MODULE_ARMED and MODULE_COUNTED of a module say its state at the end; a function
    an earlier MODULE_ARMED armed and the last one does not was demoted by a governor."""
    mods, armed, counted, budgets, ever = {}, {}, {}, [], {}
    for typ, _flags, pid, _tid, _seq, p in C.chunks(path):
        if typ == CHUNK_MODULE and len(p) >= 56:
            module_id, _first, nstubs, nfuncs, _bias, _s0, _s1, _ident, path_off, ssize = \
                struct.unpack_from("<IIIIQQQQII", p, 0)
            fo = 56 + 16 * nstubs
            strings = p[fo + 16 * nfuncs:fo + 16 * nfuncs + ssize]

            def s(o):
                end = strings.find(b"\0", o)
                return strings[o:end if end >= 0 else len(strings)].decode(errors="replace")
            names = []
            for i in range(nfuncs):
                name, link, _file, _line = struct.unpack_from("<IIII", p, fo + 16 * i)
                names.append(s(link) or s(name))
            mods[(pid, module_id)] = (os.path.basename(s(path_off)), names)
        elif typ in (CHUNK_ARMED, CHUNK_COUNTED) and len(p) >= 16:
            module_id, nfuncs = struct.unpack_from("<II", p, 0)
            bits = p[16:16 + (nfuncs + 7) // 8]
            (armed if typ == CHUNK_ARMED else counted)[(pid, module_id)] = bits
            if typ == CHUNK_ARMED:
                old = ever.get((pid, module_id), bytes(len(bits)))
                ever[(pid, module_id)] = bytes(x | y for x, y in zip(old, bits))
        elif typ == CHUNK_BUDGET and len(p) >= 104:
            f = struct.unpack_from("<IIdddddQQQQQQII", p, 0)
            budgets.append({"pid": pid, "kind": f[0], "source": f[1], "limit": f[2], "aux_bytes": f[3],
                            "per_event": f[4], "per_count": f[5], "predicted": f[6], "pilot_ns": f[8],
                            "candidates": f[9], "traced": f[10], "calls_total": f[11], "calls_traced": f[12],
                            "outcome": OUTCOMES.get(f[13], str(f[13])),
                            "note": p[104:104 + f[14]].split(b"\0", 1)[0].decode(errors="replace")})
    state = {}
    for key, (mod, names) in mods.items():
        for i, fn in enumerate(names):
            bit = lambda bits: bits is not None and i // 8 < len(bits) and bits[i // 8] >> (i % 8) & 1
            a_bits = armed.get(key)
            st = "counted" if bit(counted.get(key)) else ("traced" if a_bits is None or bit(a_bits) else "neither")
            if st == "counted" and bit(ever.get(key)):
                st = "demoted"
            # a function in two processes: traced anywhere wins, then demoted, then counted
            prev = state.get((mod, fn))
            rank = {"neither": 0, "counted": 1, "demoted": 2, "traced": 3}
            if prev is None or rank[st] > rank[prev]:
                state[(mod, fn)] = st
    return state, budgets


def calls_by_func(rep):
    """{(module basename, linkage name): {"calls", "total"}} of a report's JSON. The runtime's
    [blocking] pseudo-functions (C library calls that wait, recorded in a timed trace but not
    counted: docs/runtime.md) are not the program's functions and are left out."""
    out = {}
    for f in rep["functions"]:
        if f.get("blocking") or f.get("module") == "[blocking]":
            continue
        k = (os.path.basename(f.get("module") or ""), f.get("linkage_name") or f["name"])
        row = out.setdefault(k, {"calls": 0, "total": 0, "name": f["name"]})
        row["calls"] += int(f["calls"])
        row["total"] += int(f["total"] or 0)
    return out


def report(ptcall, trace):
    return E.report(ptcall, trace)


# ---------------------------------------------------------------- runs of a workload

class Program:
    """A workload run to completion: wall time, lower is better."""
    throughput = False

    def __init__(self, wl, exe, d):
        self.wl, self.exe, self.d, self.name = wl, exe, d, wl.name

    def run(self, prefix):
        dt, _rss, cpu = R.timed_run(prefix + [self.exe] + self.wl.args, cwd=self.d, cpu=True)
        return {"s": dt, "cpu_s": cpu}

    def value(self, r):
        return r["s"]

    def describe(self):
        return self.wl.cmd_desc


class Redis:
    """redis-server under redis-benchmark: requests per second, higher is better."""
    throughput = True

    def __init__(self, exe, d, requests):
        self.exe, self.d, self.requests, self.name = exe, d, requests, "redis"
        self.args = ["-n", str(requests), "-c", "50", "-P", "16", "-t", "set,get", "--csv"]

    def run(self, prefix):
        port = E.free_port()
        err = open(os.path.join(self.d, "server.err"), "w")
        srv = subprocess.Popen(prefix + E.server_args(self.exe, port, self.d), stdout=subprocess.DEVNULL,
                               stderr=err)
        what = "redis-server" + (" under " + " ".join(prefix[:2]) if prefix else "")
        E.wait_ready(port, srv, what, timeout=60)
        r = subprocess.run(["redis-benchmark", "-p", str(port)] + self.args, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        status = E.shutdown(port, srv, what)
        err.close()
        if r.returncode != 0 or status != 0:
            die("%s: redis-benchmark exited %d, the server %s\n%s%s" % (what, r.returncode, status, r.stdout[-2000:],
                                                                       open(err.name).read()[-2000:]))
        rows = [row for row in csv.reader(io.StringIO(r.stdout)) if row and row[0] in ("SET", "GET")]
        if len(rows) != 2:
            die("redis-benchmark printed no SET and GET rows:\n" + r.stdout[-2000:])
        rps = {row[0]: float(row[1]) for row in rows}
        # both tests' requests over both tests' time
        return {"rps": 2 * self.requests / sum(self.requests / v for v in rps.values()), "by_test": rps}

    def value(self, r):
        return r["rps"]

    def describe(self):
        return "redis-server (ptcall-cc, Debian source) under redis-benchmark %s" % " ".join(self.args[:-1])


# ---------------------------------------------------------------- the measurements

def record_prefix(ptcall, trace, flags):
    return [ptcall, "record", "-q", "-o", trace] + flags + ["--"]


def spread(xs):
    q1, med, q3 = R.quartiles(xs)
    return {"median": med, "q1": q1, "q3": q3, "min": min(xs), "max": max(xs), "n": len(xs)}


def slowdown(prog, plain, budget):
    a, b = prog.value(plain), prog.value(budget)
    return a / b - 1 if prog.throughput else b / a - 1


def counts_part(prog, ptcall, d):
    """Three counting runs: the first is the reference, the others say which functions' calls
    are not the same from run to run (left out of the exact comparison). The third runs with a
    longer environment: a program's calls may follow its memory layout (Lua's string cache is
    keyed by a C string's address: 697 more lua_pushvalue calls with one 60-byte variable more,
    and luaS_newlstr one more in 1 of 6 `--overhead 2` runs), which `record --overhead`'s own
    variables change too."""
    reps = []
    for i in (1, 2, 3):
        t = os.path.join(d, "counts-%d.ptc" % i)
        pad = ["env", "BENCH_LAYOUT_PAD=" + "x" * (97 * i)] if i == 3 else []
        prog.run(pad + record_prefix(ptcall, t, ["--counts"]))
        reps.append(calls_by_func(report(ptcall, t)))
    a = reps[0]
    keys = set().union(*reps)
    unstable = sorted(k for k in keys if len({r.get(k, {}).get("calls", 0) for r in reps}) > 1)
    return {"calls": a, "unstable": unstable, "total_calls": sum(v["calls"] for v in a.values()),
            "trace": os.path.join(d, "counts-1.ptc")}


def full_part(prog, ptcall, d):
    t = os.path.join(d, "full.ptc")
    r = prog.run(record_prefix(ptcall, t, []))
    rep = report(ptcall, t)
    return {"trace": t, "funcs": calls_by_func(rep), "run": r, "events": int(rep["totals"]["events"])}


def compare_counts(prog, budget_calls, counts):
    ref = counts["calls"]
    if prog.name == "redis":
        keys = [k for k in ref if k[1] in REDIS_FUNCS]
        what = "request-driven functions %s" % ", ".join(sorted({k[1] for k in keys}))
    else:
        layout = LAYOUT_DEPENDENT.get(prog.name, ())
        keys = [k for k in set(ref) | set(budget_calls) if k not in counts["unstable"] and k[1] not in layout]
        what = "every function" + (" but %d whose calls differ between three counting runs" % len(counts["unstable"])
                                   if counts["unstable"] else "") + \
            (" and %s (its calls follow the memory layout)" % ", ".join(layout) if layout else "")
    diff = [(k[1], ref.get(k, {}).get("calls", 0), budget_calls.get(k, {}).get("calls", 0)) for k in sorted(keys)
            if ref.get(k, {}).get("calls", 0) != budget_calls.get(k, {}).get("calls", 0)]
    return {"compared": what, "functions": len(keys), "differ": len(diff), "examples": diff[:5]}


def kept(state, counts, full, rep=None):
    """The traced functions' (to the end: a demoted one counts as not kept) share of counting
    mode's calls and of a full trace's inclusive time; with the budget trace's report, the share
    of its calls that are in its events (a demoted function's traced part included)."""
    traced = {k for k, v in state.items() if v == "traced"}
    c_all = sum(v["calls"] for v in counts["calls"].values())
    c_tr = sum(v["calls"] for k, v in counts["calls"].items() if k in traced)
    t_all = sum(v["total"] for v in full["funcs"].values()) if full else 0
    t_tr = sum(v["total"] for k, v in full["funcs"].items() if k in traced) if full else 0
    ran = {k for k, v in counts["calls"].items() if v["calls"]}  # the functions that ran, not the whole map
    n = {s: sum(1 for k, v in state.items() if v == s and k in ran)
         for s in ("traced", "demoted", "counted", "neither")}
    fs = (rep or {}).get("function_states") or {}
    ev, cn = fs.get("calls_traced"), fs.get("calls_counted")
    return {"functions": n, "calls_share": c_tr / c_all if c_all else None,
            "time_share": t_tr / t_all if t_all else None,
            "events_share": ev / (ev + cn) if ev is not None and cn is not None and ev + cn else None}


def explain(res, pct, plain_value, prog):
    """Why a measured slowdown exceeds the budget, from what the trace and the rounds show."""
    why = []
    b = res.get("budget_chunk")
    sd = res["slowdown"]
    if b is None:
        why.append("no BUDGET chunk in the trace: the choice never took effect%s" % (
            "" if prog.throughput else " (a run shorter than the pilot?)"))
    else:
        if b["outcome"] == "BELOW_COUNTING":
            why.append("BELOW_COUNTING: %s" % (b["note"] or "counting alone exceeds the budget"))
        if b["predicted"] > b["limit"] * 1.0001:
            why.append("the model itself predicted %.1f %%" % (100 * b["predicted"]))
        if b["pilot_ns"] and not prog.throughput:
            share = b["pilot_ns"] / 1e9 / plain_value
            if share > 0.05:
                why.append("the pilot (every candidate counted) is %.0f %% of the run" % (100 * share))
        if b["pilot_ns"] and b["calls_total"] < 1000:
            why.append("the pilot saw only %d calls (%s)" % (b["calls_total"], "the server idle before the load"
                                                            if prog.throughput else "too few to choose from"))
        if b["outcome"] in ("OK", "ALL") and b["predicted"] <= b["limit"] * 1.0001:
            why.append("measured %.1f %% against the model's %.1f %% (per event %.1f ns, per count %.1f ns)"
                       % (100 * sd["median"], 100 * b["predicted"], b["per_event"], b["per_count"]))
        # the choice holds for the calls it was made from: the pilot's (or the previous
        # run's); a program whose later phases call the chosen functions more costs more
        seen = b["calls_traced"] / b["calls_total"] if b["calls_total"] else None
        run = (res.get("kept") or {}).get("calls_share")
        if b["outcome"] == "OK" and seen is not None and run and run > 1.5 * seen and not res.get("governed"):
            why.append("the traced functions made %.1f %% of the calls over the whole run against "
                       "%.1f %% of those the choice was made from: the run's mix changed after it"
                       % (100 * run, 100 * seen))
    gov = res.get("governed") or []
    if gov:
        why.append("the governor demoted %d time%s, last: %s" % (len(gov), "" if len(gov) == 1 else "s",
                                                               gov[-1]["note"]))
    elif res["source"] == "pilot" and b is not None and b["outcome"] == "OK" and b["traced"]:
        why.append("the governor never demoted: by the model's per-event figure the traced calls fit")
    if sd["q1"] <= pct / 100.0:
        why.append("the spread straddles it (quartiles %.1f..%.1f %%)" % (100 * sd["q1"], 100 * sd["q3"]))
    return why


def sources_of(prog, a):
    """pilot: the run's own pilot; counts: --from-counts of counting mode's trace of the same
    load. Redis gets both by default: its pilot runs while the server waits for its clients."""
    s = a.sources or ["pilot"]
    return s + ["counts"] if prog.name == "redis" and "counts" not in s else s


def budget_part(prog, ptcall, d, a, counts, full, log):
    configs = [(m, p, src) for m in a.modes for src in sources_of(prog, a) for p in a.budgets]
    rounds = {c: [] for c in configs}
    pilot = ["--pilot", a.pilot] if a.pilot else []
    source_flags = {"pilot": pilot, "nogov": pilot + ["--governor", "0"],
                    "counts": ["--from-counts", counts["trace"]]}
    trace = lambda mode, pct, src: os.path.join(d, "budget-%s-%s-%g.ptc" % (mode, src, pct))
    for r in range(a.rounds):
        for mode, pct, src in configs:
            pre = record_prefix(ptcall, trace(mode, pct, src),
                                ["--overhead", "%g" % pct] + source_flags[src] + MODE_FLAGS[mode])
            order = ("plain", "budget") if r % 2 == 0 else ("budget", "plain")
            got = {k: prog.run([] if k == "plain" else pre) for k in order}
            rounds[(mode, pct, src)].append(got)
            log("%s %s %s %g %%: round %d: slowdown %.1f %%" % (
                prog.name, mode, src, pct, r + 1, 100 * slowdown(prog, got["plain"], got["budget"])))
    out = []
    for mode, pct, src in configs:
        rs = rounds[(mode, pct, src)]
        state, chunks = trace_sets(trace(mode, pct, src))  # the last round's trace
        res = {"mode": mode, "budget_pct": pct, "source": src, "rounds": rs,
               "slowdown": spread([slowdown(prog, x["plain"], x["budget"]) for x in rs]),
               "plain_median": statistics.median(prog.value(x["plain"]) for x in rs),
               "budget_chunk": chunks[0] if chunks else None, "budget_chunks": len(chunks),
               "governed": [c for c in chunks if c["source"] == SRC_GOVERNOR]}
        rep = report(ptcall, trace(mode, pct, src))
        res["kept"] = kept(state, counts, full, rep)
        res["counts"] = compare_counts(prog, calls_by_func(rep), counts)
        res["within"] = res["slowdown"]["median"] <= pct / 100.0
        res["why"] = [] if res["within"] else explain(res, pct, res["plain_median"], prog)
        out.append(res)
    return out


def parse_size(s):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([KMG]?)", s.strip().upper())
    if not m:
        die("bad size %r: a number with K, M or G" % s)
    return float(m.group(1)) * {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[m.group(2)]


def pt_part(ptcall, full, a, log):
    """bandwidth --budget's choice (its JSON `budget_choice`, docs/bandwidth.md): the chosen
    functions' modelled stream against the rate, and what tracing everything would send"""
    out = []
    for rate in a.pt_rates:
        cmd = [ptcall, "bandwidth", full["trace"], "--budget", "%s,%s" % (rate, a.aux), "--format", "json"]
        j = json.loads(E.run_json(cmd))
        c = j.get("budget_choice")
        if not c:
            die("%s: no budget_choice in its JSON (docs/bandwidth.md)" % " ".join(cmd))
        chosen, everything = c.get("chosen") or {}, c.get("all") or {}
        limit = c.get("rate_bytes_per_s") or parse_size(rate)
        mean, lost = chosen.get("bytes_per_s"), chosen.get("lost")
        res = {"rate": rate, "aux": a.aux, "limit": limit, "timing": c.get("timing"),
               "outcome": c.get("outcome"), "traced": c.get("traced"), "candidates": c.get("candidates"),
               "calls_kept": c.get("calls_kept"), "mean": mean, "lost_bytes": lost,
               "all_bytes_per_s": everything.get("bytes_per_s"), "all_lost": everything.get("lost"),
               "within": mean is not None and lost == 0 and mean <= limit,
               "cmd": " ".join(cmd[:1] + ["bandwidth", "FULL"] + cmd[3:])}
        log("pt %s: %s, %s of %s functions traced, %s B/s (all: %s B/s), %s bytes lost" % (
            rate, "ok" if res["within"] else "MISS", res["traced"], res["candidates"], mean,
            res["all_bytes_per_s"], lost))
        out.append(res)
    return out


# ---------------------------------------------------------------- the workloads

def programs(a, build_dir, work, log):
    tools_cc = os.path.join(build_dir, "bin", "ptcall-cc")
    wdir = os.path.join(ROOT, "bench", "workloads")
    want = [w for w in a.workloads if w != "redis"]
    progs = []
    for wl in R.workloads_for(argparse.Namespace(quick=a.quick), work, wdir, set(want)):
        d = os.path.join(work, wl.name)
        exe = R.build(tools_cc, wl, [], [], os.path.join(d, "ptcall"), deps=R.ptcall_deps(build_dir))
        bd = os.path.join(work, "budget", wl.name)
        os.makedirs(bd, exist_ok=True)
        p = Program(wl, exe, d)
        p.out = bd
        progs.append(p)
    if "redis" in a.workloads:
        if not shutil.which("redis-benchmark"):
            die("redis-benchmark not found: it is in Debian's redis-tools package (scripts/setup.sh installs it)")
        rd = os.path.join(build_dir, "test", "real", "redis")  # the real-redis tests' build, shared
        exe = a.redis_server
        if not exe and a.quick:
            cand = os.path.join(rd, "redis-src", "src", "redis-server")
            exe = cand if os.path.exists(cand + ".ptcall-stamp") else None
            if not exe:
                log("redis: left out of --quick: no redis-server built in %s yet (the real-redis tests or a run "
                    "without --quick build it; or pass --redis-server)" % rd)
        elif not exe:
            os.makedirs(rd, exist_ok=True)
            exe, _ = E.build_redis(build_dir, rd)
        if exe:
            bd = os.path.join(work, "budget", "redis")
            os.makedirs(bd, exist_ok=True)
            p = Redis(os.path.abspath(exe), bd, a.redis_requests)
            p.out = bd
            progs.append(p)
    return progs


def bench_one(prog, ptcall, a, log):
    d = prog.out
    res = {"workload": prog.name, "command": prog.describe(), "throughput": prog.throughput}
    if "plain" in a.parts and "budget" not in a.parts:
        rs = [prog.run([]) for _ in range(a.rounds)]
        res["plain"] = {"runs": rs, "median": statistics.median(prog.value(r) for r in rs)}
        log("%s: plain median %.3g %s" % (prog.name, res["plain"]["median"], "rps" if prog.throughput else "s"))
    counts = counts_part(prog, ptcall, d) if "counts" in a.parts or "budget" in a.parts else None
    if counts:
        res["counts"] = {"total_calls": counts["total_calls"], "functions": len(counts["calls"]),
                         "unstable": [k[1] for k in counts["unstable"]]}
        if prog.name == "redis":
            res["counts"]["request_driven"] = {k[1]: v["calls"] for k, v in counts["calls"].items()
                                               if k[1] in REDIS_FUNCS}
        log("%s: counting mode: %d calls of %d functions; %d differ between three counting runs"
            % (prog.name, counts["total_calls"], len(counts["calls"]), len(counts["unstable"])))
    full = full_part(prog, ptcall, d) if any(p in a.parts for p in ("full", "budget", "pt")) else None
    if full:
        res["full"] = {"events": full["events"], "run": full["run"]}
        if counts:  # the reference itself: a full trace's calls are counting mode's
            res["full"]["counts"] = compare_counts(prog, full["funcs"], counts)
        log("%s: full timed trace: %d events" % (prog.name, full["events"]))
    if "budget" in a.parts:
        res["budgets"] = budget_part(prog, ptcall, d, a, counts, full, log)
    if "pt" in a.parts:
        res["pt"] = pt_part(ptcall, full, a, log)
    return res


# ---------------------------------------------------------------- the tables

def pct(x, digits=1):
    return "–" if x is None else "%.*f %%" % (digits, 100 * x)


def mbps(x):
    return "–" if x is None else "%.1f MB/s" % (x / 1e6)


def tables(results, a):
    lines = []
    for res in results:
        lines += ["", "### %s" % res["workload"], "", res["command"] + ".", ""]
        if "plain" in res:
            unit = "requests/s" if res["throughput"] else "s"
            lines.append("Plain run (median of %d): %.4g %s." % (len(res["plain"]["runs"]), res["plain"]["median"], unit))
        if "counts" in res:
            c = res["counts"]
            lines.append("Counting mode: %d calls of %d functions%s." % (
                c["total_calls"], c["functions"], "; %d functions' calls differ between three counting runs (%s)" % (
                    len(c["unstable"]), ", ".join(c["unstable"][:5])) if c["unstable"] else ", the same in three runs"))
        if "counts" in res and "request_driven" in res["counts"]:
            lines.append("Request-driven calls in counting mode (redis-benchmark sends %d requests; a few more come "
                         "from its own setup and this script's PING and SHUTDOWN): %s." % (
                             2 * a.redis_requests, ", ".join("%s %d" % kv for kv in sorted(res["counts"]["request_driven"].items()))))
        if "full" in res:
            fc = res["full"].get("counts")
            lines.append("Full timed trace (for the inclusive times): %d events%s." % (res["full"]["events"], (
                "; its calls equal counting mode's (%s)" % fc["compared"] if not fc["differ"] else
                "; **its calls differ from counting mode's in %d functions**" % fc["differ"]) if fc else ""))
        if res.get("budgets"):
            pm = statistics.median(b["plain_median"] for b in res["budgets"])
            lines.append("Plain run: %s (the median of its pairs' medians)." % (
                "%.0f requests/s" % pm if res["throughput"] else "%.3f s" % pm))
        if "budgets" in res:
            lines += ["", "| mode | chosen from | budget | slowdown (median; quartiles) | within | outcome | functions traced / demoted / counted (of those that ran) | "
                          "calls in events | calls kept (traced to the end) | incl. time kept (traced to the end) | calls = counting mode | why missed |",
                      "|---|---|---:|---|---|---|---|---:|---:|---:|---|---|"]
            for b in res["budgets"]:
                sd, ch, k, c = b["slowdown"], b["budget_chunk"], b["kept"], b["counts"]
                eq = ("yes (%d functions)" % c["functions"] if not c["differ"] else "**no: %d of %d** (%s)" % (
                    c["differ"], c["functions"], "; ".join("%s %d≠%d" % e for e in c["examples"][:3]))) if c else "–"
                lines.append("| %s | %s | %g %% | %s (%s..%s) | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                    b["mode"], SOURCE_NAMES.get(b["source"], b["source"]), b["budget_pct"], pct(sd["median"]), pct(sd["q1"]), pct(sd["q3"]),
                    "yes" if b["within"] else "**no**", ch["outcome"] if ch else "no BUDGET chunk",
                    "%d / %d / %d" % (k["functions"]["traced"], k["functions"].get("demoted", 0),
                                      k["functions"]["counted"]) if k else "–",
                    pct(k.get("events_share")) if k else "–",
                    pct(k["calls_share"]) if k else "–", pct(k["time_share"]) if k else "–", eq,
                    "; ".join(b["why"]) or ""))
            if res["budgets"] and res["budgets"][0]["counts"]:
                lines.append("")
                lines.append("Counts compared: %s." % res["budgets"][0]["counts"]["compared"])
        if "pt" in res:
            lines += ["", "| PT budget (rate,aux) | timing | outcome | traced / candidates | calls kept | chosen: mean | chosen: lost bytes | everything: mean | everything: lost bytes | within |",
                      "|---|---|---|---:|---:|---:|---:|---:|---:|---|"]
            for p in res["pt"]:
                lines.append("| %s,%s | %s | %s | %s / %s | %s | %s | %s | %s | %s | %s |" % (
                    p["rate"], p["aux"], p["timing"], p["outcome"], p["traced"], p["candidates"],
                    pct(p["calls_kept"]) if p["calls_kept"] is not None else "–", mbps(p["mean"]),
                    "–" if p["lost_bytes"] is None else p["lost_bytes"], mbps(p["all_bytes_per_s"]),
                    "–" if p["all_lost"] is None else p["all_lost"], "yes" if p["within"] else "**no**"))
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--rounds", type=int, default=None, help="paired rounds (default 11; --quick 2)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--budgets", default=None, help="percentages (default 2,5,10,25; --quick 5)")
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--modes", default=None, help="timed,untimed (default both; --quick timed)")
    ap.add_argument("--pilot", default=None, help="record --pilot DURATION (default: record's own; --quick 20ms)")
    ap.add_argument("--pt-rates", default=None, help="bytes/s (default 100M,500M,2G; --quick 500M)")
    ap.add_argument("--aux", default="4M")
    ap.add_argument("--sources", default=None,
                    help="what the budget chooses from: pilot (record --pilot, with its governor), nogov (the pilot "
                         "alone: --governor 0), counts (record --from-counts of counting mode's trace); default pilot, "
                         "and counts too for Redis")
    ap.add_argument("--redis-server", default=None, help="an existing ptcall-cc build of redis-server")
    ap.add_argument("--parts", default=",".join(PARTS), help=",".join(PARTS))
    ap.add_argument("--no-write", action="store_true", help="leave docs/ alone")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 when a count differs from counting mode's, a budget's trace has no BUDGET chunk, "
                         "or a PT budget is exceeded or loses bytes (slowdowns are too noisy to fail on)")
    a = ap.parse_args()
    a.rounds = a.rounds or (2 if a.quick else 11)
    # --quick's runs last 0.2-1 s: record's default pilot (200 ms) would be most of them
    a.pilot = a.pilot or ("20ms" if a.quick else None)
    a.budgets = [float(x) for x in (a.budgets or ("5" if a.quick else "2,5,10,25")).split(",")]
    a.modes = (a.modes or ("timed" if a.quick else "timed,untimed")).split(",")
    a.pt_rates = (a.pt_rates or ("500M" if a.quick else "100M,500M,2G")).split(",")
    a.workloads = a.workloads.split(",")
    a.sources = a.sources.split(",") if a.sources else None
    a.redis_requests = 20000 if a.quick else 400000  # per test (SET, GET)
    a.parts = set(a.parts.split(","))
    for what, got, known in (("workload", a.workloads, WORKLOADS), ("mode", a.modes, MODE_FLAGS), ("part", a.parts, PARTS),
                             ("source", a.sources or [], SOURCES)):
        bad = [x for x in got if x not in known]
        if bad:
            die("unknown %s %s: choose from %s" % (what, ",".join(bad), ",".join(known)))
    if a.rounds < 1 or any(not 0 < p < 100 for p in a.budgets):
        die("--rounds must be at least 1 and each budget between 0 and 100 (percent)")
    build_dir = os.path.abspath(a.build)
    ptcall = os.path.join(build_dir, "tools", "ptcall")
    for tool in (ptcall, os.path.join(build_dir, "bin", "ptcall-cc")):
        if not os.access(tool, os.X_OK):
            die("%s not found: build ptcall first (scripts/build.sh)" % tool)
    check_options(ptcall, a)
    work = os.path.join(build_dir, "bench")
    os.makedirs(os.path.join(work, "budget"), exist_ok=True)
    log = lambda msg: print("bench/budget.py: " + msg, file=sys.stderr, flush=True)
    t0, load0 = time.time(), os.getloadavg()[0]
    results = [bench_one(p, ptcall, a, log) for p in programs(a, build_dir, work, log)]
    argv = " ".join(["python3 bench/budget.py"] + sys.argv[1:])
    info = {"command": argv, "date": time.strftime("%Y-%m-%d"), "machine": R.machine(),
            "load": [load0, os.getloadavg()[0]], "elapsed_s": time.time() - t0, "rounds": a.rounds,
            "budgets": a.budgets, "modes": a.modes, "pilot": a.pilot, "parts": sorted(a.parts)}
    doc = {"format_version": 1, "tool": "bench/budget.py", "info": info, "workloads": results}
    js = json.dumps(doc, indent=1, default=list)
    with open(os.path.join(work, "budget", "results.json"), "w") as f:
        f.write(js)
    head = ("Command: `%s` (%s, %s, load average %.2f → %.2f, %s). Plain = the ptcall-cc binary run without "
            "ptcall (its sites are nops); each round runs it and `ptcall record --overhead P` one after the "
            "other, alternating which goes first; slowdown = the median of the rounds' ratios (Redis: plain "
            "requests/s ÷ budget requests/s − 1). Kept: the traced functions' share of counting mode's calls and "
            "of a full timed trace's inclusive time. Figures: docs/benchmarks-budget.json."
            % (argv, info["date"], info["machine"], load0, info["load"][1], R.duration(info["elapsed_s"])))
    text = "\n".join([head] + tables(results, a)) + "\n"
    print(text)
    if not a.no_write:
        R.replace_block(os.path.join(ROOT, "docs", "benchmarks.md"), "bench/budget.py", text)
        with open(os.path.join(ROOT, "docs", "benchmarks-budget.json"), "w") as f:
            f.write(js + "\n")
    misses = [(r["workload"], b["mode"] + " " + b["source"], b["budget_pct"]) for r in results for b in r.get("budgets", [])
              if not b["within"]]
    if misses:
        log("missed: %s (the table says why)" % ", ".join("%s %s %g %%" % m for m in misses))
    if a.check:
        bad = check_failures(results)
        if bad:
            die("check failed: " + "; ".join(bad))
        done = ["calls equal counting mode's"] + (["every budget's trace has its BUDGET chunk"] if "budget" in a.parts
                                                   else []) + (["PT within its budgets"] if "pt" in a.parts else [])
        log("check passed: " + ", ".join(done))


def check_failures(results):
    bad = []
    for r in results:
        fc = r.get("full", {}).get("counts")
        if fc and fc["differ"]:
            bad.append("%s: the full trace's calls differ from counting mode's in %d functions (%s)" % (
                r["workload"], fc["differ"], "; ".join("%s %d != %d" % e for e in fc["examples"][:3])))
        if r["workload"] == "redis" and "counts" in r:
            rd = r["counts"]["request_driven"]
            if set(rd) & set(r["counts"]["unstable"]):
                bad.append("redis: request-driven calls differ between three counting runs: %s"
                           % ", ".join(sorted(set(rd) & set(r["counts"]["unstable"]))))
        for b in r.get("budgets", []):
            where = "%s %s %s %g %%" % (r["workload"], b["mode"], b["source"], b["budget_pct"])
            if b["budget_chunk"] is None:
                bad.append(where + ": no BUDGET chunk in the trace")
            if b["counts"] and b["counts"]["differ"]:
                bad.append(where + ": %d functions' calls differ from counting mode's (%s)" % (
                    b["counts"]["differ"], "; ".join("%s %d != %d" % e for e in b["counts"]["examples"][:3])))
        for p in r.get("pt", []):
            if not p["within"]:
                where = "%s PT %s,%s %s" % (r["workload"], p["rate"], p["aux"], p["timing"])
                bad.append(where + ": the chosen set's mean %s B/s against %.0f, %s bytes lost" % (
                    p["mean"], p["limit"], p["lost_bytes"]))
    return bad


if __name__ == "__main__":
    main()
