#!/usr/bin/env python3
"""Several runs: `ptcall report A B ...` (sums, per-run statistics, directories, matching
across builds, lossy runs), `ptcall diff`, the RFC 4180 csv with --meta, bad input and
write errors.

Every expected figure is computed here from the single-run `ptcall report --format json` of
the same traces, never written down: the multi-run code must agree with the single-run one.

usage: multirun.py --ptcall PTCALL --gen PTC_TESTGEN --work DIR --src SRC [--cc PTCALL_CC]
With --cc (the ptcall-cc wrapper), runs of a real program (examples/demo.c, two builds) are
recorded and checked as well.
"""
import argparse
import csv
import io
import json
import math
import os
import shutil
import subprocess
import sys

FAILS = []


def fail(msg):
    FAILS.append(msg)
    print("FAIL: " + msg)


def check(cond, msg):
    if not cond:
        fail(msg)
    return cond


def run(args, want=0, **kw):
    r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    if want is not None and r.returncode != want:
        fail("%s exited %d, expected %d\nstdout: %s\nstderr: %s"
             % (" ".join(args), r.returncode, want, r.stdout[-2000:], r.stderr[-2000:]))
    return r


def report_json(ptcall, *args):
    r = run([ptcall, "report", *args, "--format", "json"])
    return json.loads(r.stdout) if r.returncode == 0 else None


def key(f):
    """What matches a function across runs: (module basename, linkage name, file)."""
    return (os.path.basename(f["module"]), f["linkage_name"], f["file"])


def expected_runs(ptcall, paths):
    """The multi-run figures, from each run's single-run report."""
    singles = [report_json(ptcall, p) for p in paths]
    if any(s is None for s in singles):
        return None, None
    per_run = []
    for s in singles:
        d = {}
        for f in s["functions"]:
            v = d.setdefault(key(f), {"calls": 0, "total": 0, "self": 0})
            for m in ("calls", "total", "self"):
                v[m] += f[m] or 0
        per_run.append(d)
    keys = set().union(*per_run)
    exp = {}
    n = len(paths)
    for k in keys:
        e = {"runs": sum(1 for d in per_run if k in d)}
        for m in ("calls", "total", "self"):
            vals = [d[k][m] if k in d else 0 for d in per_run]  # absent: 0 in that run
            e[m] = sum(vals)
            mean = sum(vals) / n
            e[m + "_mean"] = mean
            e[m + "_min"] = min(vals)
            e[m + "_max"] = max(vals)
            e[m + "_stddev"] = (math.sqrt(sum((x - mean) ** 2 for x in vals) / (n - 1))
                                if n > 1 else 0.0)
        exp[k] = e
    return exp, singles


def close(a, b):
    return abs(a - b) <= 0.006 + 1e-9 * abs(b)


def check_multi(ptcall, paths, label, extra=(), timed=True):
    """report of paths (given as they are, or as extra args such as a directory) against the
    single-run reports."""
    exp, singles = expected_runs(ptcall, paths)
    if exp is None:
        return fail(label + ": single-run reports failed")
    args = list(extra) if extra else list(paths)
    r = run([ptcall, "report", *args, "--format", "json", "--stat", "mean,min",
             "--stat", "max", "--stat=stddev,mean"])
    if r.returncode:
        return None
    j = json.loads(r.stdout)
    check(j["format_version"] == 2, label + ": multi-run json is not format_version 2")
    check([x["trace"] for x in j["runs"]] == list(paths),
          label + ": runs %s, expected %s" % ([x["trace"] for x in j["runs"]], paths))
    check(j["stats"] == ["mean", "min", "max", "stddev"], label + ": stats %s" % j["stats"])
    check(j["timed"] == timed, label + ": timed %s" % j["timed"])
    for x, s in zip(j["runs"], singles):
        check(x["events"] == s["totals"]["events"], label + ": events of run " + x["trace"])
        check(x["complete"] == s["totals"]["complete"], label + ": complete of " + x["trace"])
        lossy = bool(s["totals"]["lost_events"] or s["totals"]["gaps"]
                     or s["totals"]["lossy_threads"] or not s["totals"]["complete"])
        check(x["lossy"] == lossy, label + ": lossy of " + x["trace"])
    check(j["totals"]["events"] == sum(s["totals"]["events"] for s in singles),
          label + ": summed events")
    check(j["totals"]["runs"] == len(paths), label + ": totals.runs")
    got = {key(f): f for f in j["functions"]}
    check(set(got) == set(exp), label + ": functions differ: only multi %s, only single %s"
          % (set(got) - set(exp), set(exp) - set(got)))
    for k, e in exp.items():
        f = got.get(k)
        if not f:
            continue
        check(f["runs"] == e["runs"], "%s: %s runs %s, expected %s" % (label, k, f["runs"], e["runs"]))
        for m in ("calls", "total", "self"):
            if m != "calls" and not timed:
                check(f[m] is None and f[m + "_mean"] is None, "%s: %s %s not null" % (label, k, m))
                continue
            check(f[m] == e[m], "%s: %s %s %s, expected %s" % (label, k, m, f[m], e[m]))
            for st in ("mean", "min", "max", "stddev"):
                check(close(f[m + "_" + st], e[m + "_" + st]), "%s: %s %s_%s %s, expected %s"
                      % (label, k, m, st, f[m + "_" + st], e[m + "_" + st]))
    # the same rows in csv, read as csv readers read it
    r = run([ptcall, "report", *args, "--format", "csv", "--stat", "mean"])
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    check(len(rows) == len(exp), label + ": csv has %d rows, expected %d" % (len(rows), len(exp)))
    for row in rows:
        k = (os.path.basename(row["module"]), row["linkage_name"], row["file"])
        if check(k in exp, label + ": csv row for unknown function %s" % (k,)):
            check(int(row["calls"]) == exp[k]["calls"], label + ": csv calls of %s" % (k,))
            check(int(row["runs"]) == exp[k]["runs"], label + ": csv runs of %s" % (k,))
            check(close(float(row["calls_mean"]), exp[k]["calls_mean"]),
                  label + ": csv calls_mean of %s" % (k,))
    # the table names every run and the statistics
    r = run([ptcall, "report", *args, "--stat", "mean", "--top", "0"])
    check("report of %d runs" % len(paths) in r.stdout, label + ": table header:\n" + r.stdout)
    check("calls_mean" in r.stdout, label + ": table lacks calls_mean")
    return j


def one_error_line(r, label):
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    check(len(lines) == 1, label + ": not one error line: %r" % r.stderr)
    check(r.stdout == "", label + ": output on error: %r" % r.stdout[:200])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ptcall", required=True)
    ap.add_argument("--gen", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--cc")
    o = ap.parse_args()
    P = os.path.abspath(o.ptcall)
    gen = os.path.abspath(o.gen)
    o.cc = o.cc and os.path.abspath(o.cc)
    o.src = os.path.abspath(o.src)
    shutil.rmtree(o.work, ignore_errors=True)
    os.makedirs(o.work)
    os.chdir(o.work)

    def g(*a):
        subprocess.run([gen, *a], check=True)

    g("golden", "golden.ptc")
    g("untimed", "untimed.ptc")
    g("bench-program", "p1.ptc", "20000", "timed", "24")
    g("bench-program", "p2.ptc", "50000", "timed", "24")
    g("bench-program", "p3.ptc", "30000", "timed", "30")  # 6 more functions
    g("bench", "bench.ptc", "3000", "timed")              # same module, other functions

    # 1. csv: RFC 4180 with the header first; the metadata in --meta FILE
    r = run([P, "report", "golden.ptc", "--format", "csv", "--meta", "meta.json"])
    first = r.stdout.splitlines()[0] if r.stdout else ""
    check(first.startswith("rank,function,"), "csv does not start with its header: %r" % first)
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    check(rows and rows[0]["function"] == "main",
          "csv.DictReader reads the first row's function as %r" % (rows[0].get("function") if rows else None))
    single = report_json(P, "golden.ptc")
    check(len(rows) == len(single["functions"]), "csv rows %d" % len(rows))
    names = {row["function"] for row in rows}
    check("std::vector<int, std::allocator<int> >::push_back" in names,
          "a quoted C++ name is not read back: %s" % names)
    check("lower bounds" in r.stderr, "a lossy trace's csv does not warn on stderr: %r" % r.stderr)
    meta = json.load(open("meta.json"))
    check(meta["format_version"] == 1 and meta["trace"] == "golden.ptc"
          and meta["time_unit"] == "ns" and meta["totals"] == single["totals"],
          "--meta object: %s" % meta)
    check("functions" not in meta, "--meta holds the rows")

    # 2. several runs against the single-run reports
    check_multi(P, ["p1.ptc", "p2.ptc", "p3.ptc"], "bench-program x3")
    j = check_multi(P, ["golden.ptc", "golden.ptc"], "golden twice")
    if j:
        check(j["totals"]["lossy_runs"] == 2 and all(x["lossy"] for x in j["runs"]),
              "golden is lossy, the runs are not marked so")
        check(all(f["lossy_runs"] == f["runs"] for f in j["functions"]), "lossy_runs per function")
    r = run([P, "report", "golden.ptc", "golden.ptc"])
    check("runs are lossy or incomplete" in r.stdout and "golden.ptc: 3 events lost" in r.stdout,
          "the table does not name the lossy runs:\n" + r.stdout)
    check_multi(P, ["untimed.ptc", "untimed.ptc"], "untimed twice", timed=False)
    # a timed and an untimed run: calls only, never added-up times of different kinds
    r = run([P, "report", "golden.ptc", "untimed.ptc", "--format", "json"])
    if r.returncode == 0:
        j = json.loads(r.stdout)
        check(j["timed"] is False and j["mixed_time_units"] is True
              and all(f["total"] is None for f in j["functions"]), "mixed timing not calls-only")
    run([P, "report", "golden.ptc", "untimed.ptc", "--sort", "total"], want=1)

    # a directory: every *.ptc, sorted; other files ignored
    os.makedirs("dir")
    for name in ("p3.ptc", "p1.ptc", "p2.ptc"):
        shutil.copy(name, "dir/" + name)
    open("dir/notes.txt", "w").write("not a trace")
    check_multi(P, ["dir/p1.ptc", "dir/p2.ptc", "dir/p3.ptc"], "directory", extra=["dir"])
    os.makedirs("empty")
    r = run([P, "report", "empty"], want=1)
    check("holds no .ptc files" in r.stderr, "empty directory: %r" % r.stderr)
    one_error_line(r, "empty directory")

    # 3. diff: a run against itself, and two different runs
    r = run([P, "diff", "p1.ptc", "p1.ptc", "--format", "json"])
    if r.returncode == 0:
        j = json.loads(r.stdout)
        check(j["summary"]["changed"] == 0 and j["summary"]["new"] == 0
              and j["summary"]["gone"] == 0 and j["functions"], "self diff summary %s" % j["summary"])
        for f in j["functions"]:
            for m in ("calls", "total", "self"):
                check(f[m]["change"] == 0 and f[m]["change_pct"] == 0.0 and f["status"] == "both",
                      "self diff: %s %s %s" % (f["name"], m, f[m]))
    for base, new in (("p1.ptc", "p3.ptc"), ("p3.ptc", "p1.ptc"), ("p1.ptc", "bench.ptc")):
        b = {key(f): f for f in report_json(P, base)["functions"]}
        n = {key(f): f for f in report_json(P, new)["functions"]}
        r = run([P, "diff", base, new, "--format", "json", "--sort", "self"])
        if r.returncode:
            continue
        j = json.loads(r.stdout)
        got = {key(f): f for f in j["functions"]}
        label = "diff %s %s" % (base, new)
        check(set(got) == set(b) | set(n), label + ": functions")
        check(any(f["status"] == "new" for f in got.values()) == bool(set(n) - set(b)),
              label + ": new functions not marked")
        check(any(f["status"] == "gone" for f in got.values()) == bool(set(b) - set(n)),
              label + ": gone functions not marked")
        for k, f in got.items():
            want = "both" if k in b and k in n else "new" if k in n else "gone"
            check(f["status"] == want, "%s: %s status %s, expected %s" % (label, k, f["status"], want))
            for m in ("calls", "total", "self"):
                bv = b[k][m] if k in b else 0
                nv = n[k][m] if k in n else 0
                check(f[m]["base"] == bv and f[m]["new"] == nv and f[m]["change"] == nv - bv,
                      "%s: %s %s %s, expected %d -> %d" % (label, k, m, f[m], bv, nv))
                if bv:
                    check(close(f[m]["change_pct"], 100.0 * (nv - bv) / bv), label + ": change_pct")
                else:
                    check(f[m]["change_pct"] is None, label + ": change_pct of a new function")
        ch = [abs(f["self"]["change"]) for f in j["functions"]]
        check(ch == sorted(ch, reverse=True), label + ": not sorted by the largest change of self")
        rc = run([P, "diff", base, new, "--format", "csv", "--sort", "self"])
        rows = list(csv.DictReader(io.StringIO(rc.stdout)))
        check([(row["function"], row["status"]) for row in rows]
              == [(f["name"], f["status"]) for f in j["functions"]], label + ": csv rows")
    r = run([P, "diff", "p1.ptc", "p3.ptc", "--top", "3"])
    check("(new)" in r.stdout or "more functions" in r.stdout, "diff table:\n" + r.stdout)
    r = run([P, "diff", "golden.ptc", "untimed.ptc"])
    check("calls only" in r.stdout and "total base" not in r.stdout,
          "diff of a timed and an untimed trace:\n" + r.stdout)
    r = run([P, "diff", "untimed.ptc", "untimed.ptc", "--format", "json"])
    if r.returncode == 0:
        j = json.loads(r.stdout)
        check(j["timed"] is False and all(f["total"] is None for f in j["functions"]),
              "untimed diff has times")

    # 4. unrelated programs are refused, unless --allow-different
    for cmd in (["report", "golden.ptc", "p1.ptc"], ["diff", "golden.ptc", "p1.ptc"]):
        r = run([P, *cmd], want=1)
        check("no instrumented module in common" in r.stderr and "--allow-different" in r.stderr,
              "unrelated %s: %r" % (cmd, r.stderr))
        one_error_line(r, "unrelated " + cmd[0])
        run([P, *cmd, "--allow-different"], want=0)

    # 5. bad input among several
    size = os.path.getsize("p2.ptc")
    open("trunc.ptc", "wb").write(open("p2.ptc", "rb").read()[: size - 100])
    open("notatrace.ptc", "w").write("hello world, not a trace at all" * 4)
    for bad, pat in (("missing.ptc", "cannot open missing.ptc"),
                     ("notatrace.ptc", "not a ptcall trace file (notatrace.ptc)"),
                     ("trunc.ptc", "trunc.ptc is truncated")):
        for cmd in (["report", "p1.ptc", bad, "p3.ptc"], ["diff", "p1.ptc", bad]):
            r = run([P, *cmd], want=1)
            check(pat in r.stderr, "%s: %r" % (cmd, r.stderr))
            one_error_line(r, " ".join(cmd))
    r = run([P, "report", "p1.ptc", "trunc.ptc", "--salvage", "--format", "json"])
    if r.returncode == 0:
        j = json.loads(r.stdout)
        t = [x for x in j["runs"] if x["trace"] == "trunc.ptc"][0]
        check(t["complete"] is False and t["damage"] and t["lossy"], "salvaged run: %s" % t)
        check(j["totals"]["complete"] is False, "salvaged multi-run complete")
        check("salvaged" in r.stderr, "salvage not said on stderr")
    r = run([P, "report", "p1.ptc", "missing.ptc", "notatrace.ptc", "--salvage", "--format", "json"])
    if r.returncode == 0:
        j = json.loads(r.stdout)
        check([x["trace"] for x in j["skipped"]] == ["missing.ptc", "notatrace.ptc"]
              and [x["trace"] for x in j["runs"]] == ["p1.ptc"], "skipped runs: %s" % j["skipped"])
        check("skipped missing.ptc" in r.stderr, "skipping not said: %r" % r.stderr)
    r = run([P, "report", "missing.ptc", "notatrace.ptc", "--salvage"], want=1)
    check("none of the traces could be read" in r.stderr, "nothing readable: %r" % r.stderr)
    run([P, "diff", "p1.ptc", "trunc.ptc", "--salvage"], want=0)
    run([P, "diff", "p1.ptc"], want=2)
    run([P, "diff", "p1.ptc", "p2.ptc", "p3.ptc"], want=2)
    run([P, "diff", "p1.ptc", "dir"], want=1)
    run([P, "report", "p1.ptc", "p2.ptc", "--stat", "median"], want=2)
    run([P, "report", "p1.ptc", "p2.ptc", "--stat", "mean,"], want=2)
    # single-run outputs keep format_version 1
    check(report_json(P, "p1.ptc")["format_version"] == 1, "single run is not format_version 1")
    r = run([P, "report", "p1.ptc", "p2.ptc", "--format", "csv", "--meta", "m2.json"])
    m2 = json.load(open("m2.json"))
    check(m2["format_version"] == 2 and len(m2["runs"]) == 2 and "functions" not in m2,
          "multi-run --meta: %s" % m2)

    # 6. write errors: a message and a non-zero exit
    if os.path.exists("/dev/full"):
        for cmd in (["report", "golden.ptc"], ["report", "golden.ptc", "--format", "csv"],
                    ["report", "p1.ptc", "p2.ptc", "--format", "json"],
                    ["report", "p1.ptc", "p2.ptc", "--stat", "mean"],
                    ["diff", "p1.ptc", "p3.ptc"], ["diff", "p1.ptc", "p3.ptc", "--format", "csv"]):
            with open("/dev/full", "w") as full:
                r = subprocess.run([P, *cmd], stdout=full, stderr=subprocess.PIPE, text=True)
            check(r.returncode != 0 and "cannot write" in r.stderr,
                  "%s > /dev/full exited %d: %r" % (cmd, r.returncode, r.stderr))
        r = run([P, "report", "golden.ptc", "--format", "csv", "--meta", "/dev/full"], want=None)
        check(r.returncode != 0 and "cannot write the metadata file /dev/full" in r.stderr,
              "--meta /dev/full exited %d: %r" % (r.returncode, r.stderr))

    # 7. a real program: two builds, matched by (module basename, linkage name, file)
    if o.cc and os.path.exists(o.cc):
        demo = os.path.join(o.src, "examples", "demo.c")
        rec = os.path.join(o.src, "test", "e2e", "programs", "recursion.c")
        ok = True
        for opt in ("-O1", "-O2"):
            os.makedirs("b" + opt, exist_ok=True)
            ok = ok and run([o.cc, opt, demo, "-o", "b%s/demo" % opt, "-lpthread"]).returncode == 0
        ok = ok and run([o.cc, "-O1", "-I" + os.path.dirname(rec), rec, "-o", "recursion"]).returncode == 0
        real = []
        for i, (opt, arg) in enumerate((("-O1", "12"), ("-O2", "15"), ("-O1", "17"))):
            path = "demo%d.ptc" % i
            ok = ok and run([P, "record", "-q", "-o", path, "--", "./b%s/demo" % opt, arg]).returncode == 0
            real.append(path)
        ok = ok and run([P, "record", "-q", "-o", "rec.ptc", "--", "./recursion"]).returncode == 0
        if ok:
            j = check_multi(P, real, "demo, two builds")
            if j:
                fib = [f for f in j["functions"] if f["linkage_name"] == "fib"]
                check(len(fib) == 1 and fib[0]["runs"] == 3, "fib of two builds is not one row: %s" % fib)
            r = run([P, "report", "demo0.ptc", "rec.ptc"], want=1)
            check("no instrumented module in common" in r.stderr, "real unrelated: %r" % r.stderr)
            r = run([P, "diff", "demo0.ptc", "demo2.ptc", "--format", "json", "--sort", "calls"])
            if r.returncode == 0:
                j = json.loads(r.stdout)
                check(j["functions"][0]["name"] == "fib" and j["functions"][0]["calls"]["change"] > 0,
                      "demo diff: fib is not the largest change: %s" % j["functions"][0])
    else:
        print("note: no ptcall-cc given: the real-program part is skipped")

    if FAILS:
        print("%d failure(s)" % len(FAILS))
        return 1
    print("PASS: several runs, diff, csv, bad input")
    return 0


if __name__ == "__main__":
    sys.exit(main())
