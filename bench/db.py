#!/usr/bin/env python3
"""The runs database's speed (`ptcall db`, docs/db.md) against the issue's targets, on real
traces recorded here and real servers started here:

  add       `ptcall db add` of a >= 10^8-event trace of a real program (the Lua 5.4 interpreter
            of bench/run.py, Debian's source built with ptcall-cc, running
            bench/workloads/bench.lua; soft backend, timed) beside `ptcall report` on it, into
            SQLite and into PostgreSQL, in interleaved rounds; each round's add is removed again
            (off the clock) so that every add stores the same run into the same database; ratio
            = the median of the per-round ratios. Target: db add <= report + 10 %.
  campaign  a program of 5,000 functions (generated, every function called in every run, counts
            and call edges that depend on the run's seed), recorded 1,000 times (seeds 1..1000),
            added by 8 `ptcall db add` processes at once (125 traces each) into each back end:
            the time, and that every run is stored exactly once and whole. Target (PostgreSQL):
            8 writers, 1,000 runs, each stored once. This is the database of 1,000 runs x 5,000
            functions of the next section, built through the real add path.
  query     bench/db_query_bench.c (build/test/db/db_query_bench) on those databases: the query
            layer (db/db_query.h) timed where a server calls it: the ranking over all runs (sum,
            mean, max), with medians, over half of the runs, one run's functions; and `ptcall db
            query --top 20` as a whole process. Target: the ranking over all runs < 100 ms
            (SQLite, this machine).

Writes the block between <!-- db-speed:begin/end --> in docs/benchmarks.md.

usage: bench/db.py [--build DIR] [--rounds N] [--scale S] [--runs N] [--funcs N] [--no-write]
"""
import argparse
import concurrent.futures
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


R = load_module("benchrun", os.path.join(ROOT, "bench", "run.py"))
T = load_module("db_test", os.path.join(ROOT, "test", "db", "db_test.py"))


def log(*a):
    print("bench/db:", *a, file=sys.stderr, flush=True)


# ---- the add section: a real program's trace ------------------------------------------------

def lua_trace(build, work, scale):
    """The Lua workload of bench/run.py built with ptcall-cc, recorded once at this scale."""
    wl = R.lua_workload(work, os.path.join(ROOT, "bench", "workloads"), False)
    wl.args[-1] = str(scale)
    d = os.path.join(work, "lua")
    exe = R.build(os.path.join(build, "bin", "ptcall-cc"), wl, [], [], os.path.join(d, "ptcall"),
                  deps=R.ptcall_deps(build))
    trace = os.path.join(work, "db", "lua-%s.ptc" % scale)
    if not os.path.exists(trace):
        log("recording lua bench.lua %s" % scale)
        p = subprocess.run([os.path.join(build, "tools", "ptcall"), "record", "-q", "-o", trace, "--",
                            exe] + wl.args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=d)
        if p.returncode:
            sys.exit("bench/db: recording Lua failed: %s" % p.stderr.decode()[-2000:])
    return trace, wl.desc.replace("scale 12", "scale %s" % scale)


def bench_add(ptcall, trace, urls, backends, rounds):
    cmds = {"report": [ptcall, "report", trace]}
    for k, u in urls.items():
        cmds[k] = [ptcall, "db", "add", "--db", u, trace]
    wall = {k: [] for k in cmds}
    cpu = {k: [] for k in cmds}
    ratios = {k: [] for k in urls}
    order = list(cmds)
    for i in range(rounds):
        got = {}
        for k in order[i % len(order):] + order[:i % len(order)]:
            dt, _, cp = R.timed_run(cmds[k], cpu=True, warm=[trace])
            got[k] = (dt, cp)
            if k in urls:  # the run goes again, off the clock: every round adds the same run
                rid = backends[k].sql(urls[k], "SELECT max(id) FROM runs")[0][0]
                subprocess.run([ptcall, "db", "rm", "--db", urls[k], str(rid)], stdout=subprocess.DEVNULL,
                               check=True)
        for k in cmds:
            wall[k].append(got[k][0])
            cpu[k].append(got[k][1])
        for k in urls:
            ratios[k].append(got[k][0] / got["report"][0])
        log("add round %d/%d: %s" % (i + 1, rounds, ", ".join("%s %.3f s" % (k, got[k][0]) for k in order)))
    return {k: {"wall": statistics.median(wall[k]), "cpu": statistics.median(cpu[k]),
                "ratio": statistics.median(ratios[k]) if k in ratios else 1.0,
                "ratio_q": (sorted(ratios[k])[len(ratios[k]) // 4], sorted(ratios[k])[(3 * len(ratios[k])) // 4])
                if k in ratios else None}
            for k in cmds}


# ---- the campaign: 1,000 runs of a program of 5,000 functions -------------------------------

MANY_C = r'''/* bench/db.py's campaign program: %(n)d functions, every one called in every run; how often,
 * and which calls which, depends on the seed (argv[1]). Generated. */
#include <stdint.h>
#include <stdlib.h>

static volatile uint64_t sink;

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

%(decls)s

static uint64_t (*const table[%(n)d])(uint64_t) = {%(names)s};

%(bodies)s

int main(int argc, char **argv)
{
    uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 10) : 1;
    for (uint64_t i = 0; i < %(n)d; i++) {
        uint64_t h = mix(seed * 0x9e3779b97f4a7c15ull + i);
        uint64_t calls = 1 + h %% 8;
        for (uint64_t k = 0; k < calls; k++)
            sink += table[i](mix(h + k) & 0xff);
    }
    return 0;
}
'''


def many_source(n):
    decls = "\n".join("static uint64_t f%d(uint64_t x);" % i for i in range(n))
    names = ", ".join("f%d" % i for i in range(n))
    bodies = []
    for i in range(n):
        child = (i * 7 + 1) % n
        # a call to a child when the low bits of x say so: edges and depth vary with the seed
        bodies.append("__attribute__((noinline)) static uint64_t f%d(uint64_t x)\n{\n"
                      "    uint64_t r = x * %du + %du;\n"
                      "    if (x > 3 && (x & 3) == 0)\n        r += f%d(x >> 2);\n"
                      "    return r;\n}\n" % (i, 2 * i + 3, i, child))
    return MANY_C % {"n": n, "decls": decls, "names": names, "bodies": "\n".join(bodies)}


def campaign_traces(build, work, nfuncs, nruns):
    d = os.path.join(work, "db", "campaign-%d" % nfuncs)
    os.makedirs(d, exist_ok=True)
    src = os.path.join(d, "many.c")
    text = many_source(nfuncs)
    if not os.path.exists(src) or open(src).read() != text:
        with open(src, "w") as f:
            f.write(text)
    exe = os.path.join(d, "many")
    if not os.path.exists(exe) or os.path.getmtime(exe) < os.path.getmtime(src):
        log("building the campaign program (%d functions)" % nfuncs)
        R.sh([os.path.join(build, "bin", "ptcall-cc"), "-O1", "-o", exe, src])
    ptcall = os.path.join(build, "tools", "ptcall")
    traces = [os.path.join(d, "seed%04d.ptc" % s) for s in range(1, nruns + 1)]

    def rec(i):
        if not os.path.exists(traces[i]):
            p = subprocess.run([ptcall, "record", "-q", "-o", traces[i] + ".tmp", "--", exe, str(i + 1)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            if p.returncode:
                raise RuntimeError("recording seed %d: %s" % (i + 1, p.stderr.decode()[-500:]))
            os.rename(traces[i] + ".tmp", traces[i])

    missing = sum(1 for t in traces if not os.path.exists(t))
    if missing:
        log("recording %d runs of the campaign program" % missing)
        with concurrent.futures.ThreadPoolExecutor(2) as ex:
            list(ex.map(rec, range(nruns)))
    return exe, traces


def bench_campaign(env, B, url, traces):
    """8 writers add the traces at once; then what the database holds is checked. For SQLite,
    the largest the WAL grew meanwhile (sampled twice a second)."""
    wal = {"max": 0, "stop": False}

    def sample():
        while not wal["stop"]:
            try:
                wal["max"] = max(wal["max"], os.path.getsize(url + "-wal"))
            except OSError:
                pass
            time.sleep(0.5)

    sampler = threading.Thread(target=sample) if B.name == "sqlite" else None
    if sampler:
        sampler.start()
    try:
        outs, took = T.writers(env, url, [traces[w::8] for w in range(8)])
    finally:
        wal["stop"] = True
        if sampler:
            sampler.join()
    stored = sum(len([l for l in o.splitlines() if l.startswith("run ")]) for o, _ in outs)
    errors = [e.strip() for _, e in outs if e.strip()]
    got = sorted(r[0] for r in B.sql(url, "SELECT trace FROM runs"))
    once = got == sorted(traces)
    whole = B.sql(url, "SELECT count(*) FROM runs r WHERE r.functions <> (SELECT count(*) FROM run_functions f "
                       "WHERE f.run_id = r.id) OR r.edges <> (SELECT count(*) FROM run_edges e WHERE e.run_id = r.id)"
                  ) == [(0,)]
    rows = B.sql(url, "SELECT count(*) FROM run_functions")[0][0]
    edges = B.sql(url, "SELECT count(*) FROM run_edges")[0][0]
    kept = B.sql(url, "SELECT %s FROM function_stats ORDER BY 1, 2" % T.STATS_COLS)
    stats_ok = kept == B.sql(url, T.RECOMPUTED)
    return {"s": took, "wal_max": wal["max"], "stored": stored, "errors": errors[:3], "once": once, "whole": whole, "rows": rows,
            "edges": edges, "stats_ok": stats_ok, "nruns": len(got)}


def bench_query(build, ptcall, url, rounds):
    p = subprocess.run([os.path.join(build, "test", "db", "db_query_bench"), url, str(rounds)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode:
        sys.exit("bench/db: db_query_bench %s: %s" % (url, p.stderr))
    res = json.loads(p.stdout)
    cli = []
    for _ in range(rounds):
        dt, _ = R.timed_run([ptcall, "db", "query", "--db", url, "--top", "20"])
        cli.append(dt)
    res["cli_ms"] = statistics.median(cli) * 1e3
    return res


def db_size(B, url):
    if B.name == "sqlite":
        return sum(os.path.getsize(url + s) for s in ("", "-wal") if os.path.exists(url + s))
    return int(B.sql(url, "SELECT pg_database_size(current_database())")[0][0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--rounds", type=int, default=9, help="rounds of each timed command")
    ap.add_argument("--scale", default="5", help="bench.lua's scale (5: about 1.1e8 events)")
    ap.add_argument("--runs", type=int, default=1000, help="runs of the campaign")
    ap.add_argument("--funcs", type=int, default=5000, help="functions of the campaign program")
    ap.add_argument("--only", default="add,campaign", help="add, campaign (campaign includes query)")
    ap.add_argument("--no-write", action="store_true", help="print, leave the docs alone")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    ptcall = os.path.join(build, "tools", "ptcall")
    work = os.path.join(build, "bench")
    os.makedirs(os.path.join(work, "db"), exist_ok=True)
    want = set(a.only.split(","))
    env = T.Env(build, ROOT, os.path.join(work, "db"))
    sq = T.SQLite(os.path.join(work, "db"))
    pg = T.Postgres(os.path.join(work, "db"))
    load_before = os.getloadavg()[0]
    t_start = time.time()
    res = {}
    if not pg.start(durable=True):
        sys.exit("bench/db: cannot start PostgreSQL (scripts/setup.sh installs it)")
    try:
        backends = {"sqlite": sq, "postgresql": pg}
        if "add" in want:
            trace, desc = lua_trace(build, work, a.scale)
            events = R.ptcall_events(ptcall, trace)
            if events < 10**8:
                log("WARNING: the trace has %d events, fewer than 10^8: raise --scale" % events)
            urls = {"sqlite": sq.fresh("add"), "postgresql": pg.fresh("add")}
            for k, u in urls.items():  # the schema exists before the first timed add
                subprocess.run([ptcall, "db", "add", "--db", u, os.path.join(work, "none.ptc")],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                if backends[k].sql(u, "SELECT count(*) FROM schema_version") != [(1,)]:
                    sys.exit("bench/db: no schema made in %s" % u)
            res["add"] = {"trace": trace, "desc": desc, "events": events, "bytes": os.path.getsize(trace),
                          "scale": a.scale, "t": bench_add(ptcall, trace, urls, backends, a.rounds)}
        if "campaign" in want:
            exe, traces = campaign_traces(build, work, a.funcs, a.runs)
            res["campaign"] = {"funcs": a.funcs, "runs": a.runs,
                               "trace_bytes": sum(os.path.getsize(t) for t in traces)}
            one = env.report(traces[0])
            res["campaign"]["events_per_run"] = one["totals"]["events"] if one else 0
            res["campaign"]["functions_per_run"] = len(one["functions"]) if one else 0
            for name, B in backends.items():
                url = B.fresh("campaign")
                log("campaign: 8 writers into %s" % name)
                c = bench_campaign(env, B, url, traces)
                c["bytes"] = db_size(B, url)
                log("campaign %s: %.1f s, once %s, whole %s, stats %s" % (name, c["s"], c["once"], c["whole"],
                                                                          c["stats_ok"]))
                c["query"] = bench_query(build, ptcall, url, a.rounds)
                res["campaign"][name] = c
    finally:
        pg.stop()
    res["machine"] = R.machine()
    res["load"] = (load_before, os.getloadavg()[0])
    res["elapsed_s"] = time.time() - t_start
    with open(os.path.join(work, "db", "results.json"), "w") as f:
        json.dump(res, f, indent=1)
    text = write_up(a, res)
    print(text)
    if not a.no_write:
        R.replace_block(os.path.join(ROOT, "docs", "benchmarks.md"), "db-speed", text)


def ms(v):
    return statistics.median(v)


def write_up(a, res):
    L = []
    L.append("`python3 bench/db.py --rounds %d --scale %s --runs %d --funcs %d` (%s; %s; load average %.1f "
             "before, %.1f after; %.0f minutes). PostgreSQL 15 (Debian's) runs on this machine, started by the "
             "script with `initdb` + `pg_ctl` (Unix socket, fsync on); SQLite 3.40 (Debian's) in WAL mode."
             % (a.rounds, a.scale, a.runs, a.funcs, time.strftime("%Y-%m-%d"), res["machine"], res["load"][0],
                res["load"][1], res["elapsed_s"] / 60))
    if "add" in res:
        ad = res["add"]
        t = ad["t"]
        L += ["", "**db add beside report.** The trace: %s, recorded by `ptcall record` (soft backend, "
              "timestamps): %d events, %.0f MB. Each command %d times, interleaved (the order rotates); each "
              "round's run is removed again, off the clock. ÷ report: median of the per-round ratios (first and "
              "third quartile)." % (ad["desc"], ad["events"], ad["bytes"] / 1e6, a.rounds),
              "", "| command | median s (wall) | CPU s | ÷ report |", "|---|---:|---:|---:|",
              "| `ptcall report lua.ptc` | %.3f | %.3f | 1 |" % (t["report"]["wall"], t["report"]["cpu"])]
        for k, label in (("sqlite", "`ptcall db add --db runs.db lua.ptc` (SQLite)"),
                         ("postgresql", "`ptcall db add --db postgresql://... lua.ptc`")):
            q = t[k]["ratio_q"]
            L.append("| %s | %.3f | %.3f | **%.3f** (%.3f–%.3f) |" % (label, t[k]["wall"], t[k]["cpu"], t[k]["ratio"],
                                                                      q[0], q[1]))
        L += ["", "Target: db add ≤ report + 10 %% (÷ report ≤ 1.10): SQLite %s, PostgreSQL %s."
              % ("met" if t["sqlite"]["ratio"] <= 1.10 else "**not met**",
                 "met" if t["postgresql"]["ratio"] <= 1.10 else "**not met**")]
    if "campaign" in res:
        c = res["campaign"]
        L += ["", "**A campaign: 8 writers, then queries.** A generated C program of %d functions (every one "
              "called in every run, 1–8 times and with call edges chosen by the run's seed; `bench/db.py`, "
              "`many_source`), built with `ptcall-cc -O1` and recorded %d times (seeds 1–%d): %d events and %d "
              "functions per run, %.0f MB of traces. 8 `ptcall db add` processes at once add them, %d traces "
              "each, into an empty database of each back end: this builds the database of %d runs × %d functions "
              "through the real add path."
              % (c["funcs"], c["runs"], c["runs"], c["events_per_run"], c["functions_per_run"],
                 c["trace_bytes"] / 1e6, c["runs"] // 8, c["runs"], c["funcs"]),
              "", "| back end | 8 writers, s | runs/s | runs stored | each exactly once, whole | function rows | "
              "edge rows | function_stats = sums of the rows | database MB | largest WAL MB |",
              "|---|---:|---:|---:|---|---:|---:|---|---:|---:|"]
        for k in ("sqlite", "postgresql"):
            x = c[k]
            L.append("| %s | %.1f | %.1f | %d | %s | %d | %d | %s | %.0f | %s |"
                     % (k, x["s"], x["nruns"] / x["s"], x["nruns"], "yes" if x["once"] and x["whole"] else "**NO**",
                        x["rows"], x["edges"], "yes" if x["stats_ok"] else "**NO**", x["bytes"] / 1e6,
                        "%.0f" % (x["wal_max"] / 1e6) if k == "sqlite" else "–"))
            if x["errors"]:
                L.append("| | errors: %s |||||||| " % "; ".join(x["errors"])[:300])
        L += ["", "Target: PostgreSQL, 8 writers adding 1,000 runs in total, every run stored exactly once: %s "
              "(%d runs here)." % ("met" if c["postgresql"]["once"] and c["postgresql"]["whole"] and c["postgresql"]["nruns"] == a.runs
                 else "**not met**", c["runs"]),
              "", "The query layer (`db/db_query.h`) on those databases, timed by `build/test/db/db_query_bench URL %d` "
              "(one connection; each query %d times, median ms) and `ptcall db query --db URL --top 20` as a "
              "whole process (median of %d):" % (a.rounds, a.rounds, a.rounds),
              "", "| back end | ranking over all %d runs (sum, mean, max, min, stddev) | the same with the "
              "medians of the top 50 (the hot-function page) | ranked by median | over %d runs (half) | one "
              "run's functions | `ptcall db query --top 20` |" % (c["runs"], c["runs"] // 2),
              "|---|---:|---:|---:|---:|---:|---:|"]
        for k in ("sqlite", "postgresql"):
            q = c[k]["query"]
            L.append("| %s | **%.1f** | **%.1f** | %.0f | %.0f | %.1f | %.0f |"
                     % (k, ms(q["all"]["ms"]), ms(q["page"]["ms"]), ms(q["median"]["ms"]), ms(q["half"]["ms"]),
                        ms(q["show"]["ms"]), q["cli_ms"]))
        sq = c["sqlite"]["query"]
        L += ["", "Target: the ranking over all runs answered in < 100 ms (SQLite, this machine): %s (%.1f ms). "
              "Over all runs the sums, maxima, minima and sums of squares come from `function_stats` (schema "
              "versions 2 and 3: one row per function, kept by `db add` and `db rm`) and the medians of the "
              "functions shown from the index of run_functions by function (schema version 3); a ranking by "
              "median, and subsets of the runs, read every chosen run's rows (%d million for all runs here), "
              "which is what their columns cost. Answers checked: %d runs, %d "
              "functions ranked, the top one `%s` with %.0f calls over the runs."
              % ("met" if ms(sq["all"]["ms"]) < 100 else "**not met**", ms(sq["all"]["ms"]),
                 c["sqlite"]["rows"] // 10**6, sq["all"]["runs"], sq["all"]["functions"], sq["all"]["top"],
                 sq["all"]["top_calls_sum"])]
    return "\n".join(L)


if __name__ == "__main__":
    main()
