#!/usr/bin/env python3
"""The runs database (`ptcall db`, docs/db.md) on real traces of real programs, against SQLite
or against a real PostgreSQL server this script starts itself (initdb and pg_ctl of Debian's
postgresql package in a temporary directory, on a Unix socket there; as root the server runs
as the postgres user, since initdb refuses root). The same checks run on both back ends:

- what `db show` and `db query` give equals `ptcall report --format json` of the same traces
  (calls, total, self per function; sums, means, medians and maxima over several runs
  computed here from the reports), and `db show`'s edges equal `ptcall graph`'s;
- run metadata: command line, exit status or signal, duration, host, trace quality;
- filters (tags, program, time, ids), rm, the JSON outputs against docs/schema/db.schema.json;
- bad input: a trace stored twice, traces that cannot be read (nothing stored), unknown run
  ids, a database of a newer schema version, a foreign database, an unreachable server;
- migrations: every frozen earlier schema (test/db/schema/vN.BACKEND.sql, with a run in it)
  opened by this ptcall: the run is kept and the tables equal a new database's;
- a trace recorded within a budget whose governor demoted a function (governor_prog.c, schema
  version 7): the run's demoted functions and demotions and each function's flag as report
  gives them, and the same run in a database taken back to version 6, migrated;
- 8 processes adding runs at once lose and corrupt nothing; a `db add` killed (SIGKILL) inside
  its transaction leaves the database as it was.

usage: db_test.py sqlite|postgres BUILD_DIR SRC_DIR WORK_DIR [--load N]
  --load N: only the load: 8 writers adding N runs at once, timed
"""
import csv
import glob
import hashlib
import io
import json
import os
import pwd
import re
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

SKIP = 77
# Debian's postgresql (15 on Debian 12): the newest installed server's programs
PG_BIN = max(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda d: int(re.sub(r"\D", "", d) or 0),
             default="/usr/lib/postgresql/15/bin")


class Checks:
    def __init__(self):
        self.fails = 0

    def __call__(self, ok, what):
        print(("ok   " if ok else "FAIL ") + what, flush=True)
        if not ok:
            self.fails += 1
        return ok


check = Checks()


def run(cmd, env=None, **kw):
    e = dict(os.environ)
    e.pop("PTCALL_DB", None)
    if env:
        e.update(env)
    return subprocess.run([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, env=e, **kw)


def as_int(v):
    return int(v) if isinstance(v, str) and re.fullmatch(r"-?\d+", v) else v


# ---- back ends -------------------------------------------------------------------------------

class SQLite:
    name = "sqlite"

    def __init__(self, work):
        self.work = work

    def fresh(self, name):
        path = os.path.join(self.work, name + ".db")
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(path + suffix):
                os.remove(path + suffix)
        return path

    def sql(self, url, query):
        con = sqlite3.connect(url, timeout=60)
        try:
            rows = con.execute(query).fetchall()
            con.commit()
            return rows
        finally:
            con.close()

    def load(self, url, path):
        con = sqlite3.connect(url)
        con.executescript(open(path).read())
        con.close()

    def columns(self, url):
        out = {}
        for (t,) in self.sql(url, "SELECT name FROM sqlite_master WHERE type = 'table' AND name "
                                  "NOT LIKE 'sqlite_%' ORDER BY name"):
            out[t] = [(c[1], c[2].upper(), c[3], c[5]) for c in self.sql(url, "PRAGMA table_info(%s)" % t)]
        return out

    def indexes(self, url):
        return sorted(self.sql(url, "SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' AND "
                                    "name NOT LIKE 'sqlite_%'"))

    def integrity(self, url):
        return (self.sql(url, "PRAGMA integrity_check") == [("ok",)] and
                self.sql(url, "PRAGMA foreign_key_check") == [])

    def unreachable(self):
        return "/nonexistent-dir/runs.db", "cannot open", "check the path"

    def stop(self):
        pass


class Postgres:
    name = "postgres"

    def __init__(self, work):
        self.work = work
        self.tmp = None
        self.runas = []

    def start(self, durable=False):
        """durable: fsync on, as a real server runs (bench/db.py); the tests turn it off."""
        for tool in ("initdb", "pg_ctl"):
            if not os.access(os.path.join(PG_BIN, tool), os.X_OK):
                print("SKIP: %s/%s is missing: run scripts/setup.sh (Debian's postgresql)" % (PG_BIN, tool))
                return False
        # the socket's path must stay short (107 bytes): a directory in /tmp
        self.tmp = tempfile.mkdtemp(prefix="ptcall-pg-")
        if os.geteuid() == 0:
            # initdb refuses root: the server runs as postgres (or nobody) in its own directory
            try:
                user = pwd.getpwnam("postgres")
                self.runas = ["runuser", "-u", "postgres", "--"]
            except KeyError:
                user = pwd.getpwnam("nobody")
                self.runas = ["setpriv", "--reuid=%d" % user.pw_uid, "--regid=%d" % user.pw_gid,
                              "--clear-groups"]
            os.chown(self.tmp, user.pw_uid, user.pw_gid)
        data = os.path.join(self.tmp, "data")
        p = run(self.runas + [os.path.join(PG_BIN, "initdb"), "-D", data, "-A", "trust", "-U",
                              "ptcall", "--no-sync", "-E", "UTF8", "--locale", "C"])
        if not check(p.returncode == 0, "initdb in %s" % self.tmp):
            print(p.stdout[-2000:], p.stderr[-2000:])
            return False
        p = run(self.runas + [os.path.join(PG_BIN, "pg_ctl"), "-D", data, "-l",
                              os.path.join(self.tmp, "server.log"), "-w", "-t", "60", "-o",
                              "-k %s -c listen_addresses='' %s-c max_connections=40"
                              % (self.tmp, "" if durable else "-c fsync=off "), "start"])
        if not check(p.returncode == 0, "pg_ctl start (Unix socket in %s)" % self.tmp):
            print(p.stdout[-2000:], p.stderr[-2000:])
            log = os.path.join(self.tmp, "server.log")
            if os.path.exists(log):
                print(open(log).read()[-3000:])
            return False
        return True

    def url(self, db):
        return "postgresql://ptcall@/%s?host=%s" % (db, self.tmp)

    def psql(self, url, *args):
        return run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-At", "-F", "\t", url] + list(args))

    def fresh(self, name):
        p = self.psql(self.url("postgres"), "-c", "DROP DATABASE IF EXISTS \"%s\"" % name, "-c",
                      "CREATE DATABASE \"%s\"" % name)
        if p.returncode:
            raise RuntimeError("cannot create database %s: %s" % (name, p.stderr))
        return self.url(name)

    def sql(self, url, query):
        p = self.psql(url, "-c", query)
        if p.returncode:
            raise RuntimeError("psql: %s: %s" % (query, p.stderr))
        return [tuple(as_int(x) for x in line.split("\t")) for line in p.stdout.splitlines() if line]

    def load(self, url, path):
        p = self.psql(url, "-f", path)
        if p.returncode:
            raise RuntimeError("psql -f %s: %s" % (path, p.stderr))

    def columns(self, url):
        out = {}
        for t, c, typ, nullable, pos in self.sql(
                url, "SELECT table_name, column_name, data_type, is_nullable, ordinal_position "
                     "FROM information_schema.columns WHERE table_schema = current_schema() "
                     "ORDER BY table_name, ordinal_position"):
            out.setdefault(t, []).append((c, typ, nullable))
        return out

    def indexes(self, url):
        return sorted(self.sql(url, "SELECT indexname, tablename FROM pg_indexes WHERE schemaname = "
                                    "current_schema()"))

    def integrity(self, url):
        # what a foreign key would refuse, counted: rows whose run or function is not there
        q = ("SELECT (SELECT count(*) FROM run_functions rf WHERE NOT EXISTS (SELECT 1 FROM runs r "
             "WHERE r.id = rf.run_id)) + (SELECT count(*) FROM run_edges e WHERE NOT EXISTS "
             "(SELECT 1 FROM functions f WHERE f.id = e.caller_id))")
        return self.sql(url, q) == [(0,)]

    def unreachable(self):
        return ("postgresql://ptcall@/runs?host=/nonexistent-socket-dir", "No such file or directory",
                "check that the PostgreSQL server runs")

    def stop(self):
        if not self.tmp:
            return
        run(self.runas + [os.path.join(PG_BIN, "pg_ctl"), "-D", os.path.join(self.tmp, "data"),
                          "-m", "immediate", "-w", "stop"])
        shutil.rmtree(self.tmp, ignore_errors=True)


# ---- traces ------------------------------------------------------------------------------------

class Env:
    def __init__(self, build, src, work):
        self.ptcall = os.path.join(build, "tools", "ptcall")
        self.cc = os.path.join(build, "bin", "ptcall-cc")
        self.src = src
        self.work = work

    def p(self, *args, env=None):
        return run([self.ptcall] + list(args), env=env)

    def build(self, src, out):
        path = os.path.join(self.work, out)
        p = run([self.cc, "-O1", "-pthread", "-o", path, os.path.join(self.src, src)])
        return path if p.returncode == 0 else None

    def record(self, name, *cmd, opts=(), ok=(0,)):
        out = os.path.join(self.work, name + ".ptc")
        p = self.p("record", "-q", *opts, "-o", out, "--", *cmd)
        if not check(p.returncode in ok and os.path.isfile(out), "recorded %s: %s" % (name, " ".join(map(os.path.basename, map(str, cmd))))):
            print(p.stderr)
            return None
        return out

    def report(self, *traces, extra=()):
        p = self.p("report", *traces, "--format", "json", "--top", "0", *extra)
        return json.loads(p.stdout) if p.returncode == 0 else None

    def db(self, url, sub, *args, env=None):
        return self.p("db", sub, "--db", url, *args, env=env)

    def db_json(self, url, sub, *args):
        p = self.db(url, sub, *args, "--format", "json")
        if p.returncode:
            print("ptcall db %s %s: exit %d: %s" % (sub, " ".join(args), p.returncode, p.stderr))
            return None
        return json.loads(p.stdout)


def key(f):
    return (os.path.basename(f["module"]), f["linkage_name"], f["file"])


def graph_edges(env, trace):
    """{(caller, callee): calls} of `ptcall graph`."""
    return dot_edges(env.p("graph", trace).stdout)


def dot_edges(dot):
    """{(caller, callee): calls} of the dot text `ptcall graph` writes (test/web uses it too)."""
    names, edges = {}, {}
    for line in dot.splitlines():
        m = re.match(r'\s*(f\d+) \[label="([^\\"]*)\\n', line)
        if m:
            names[m.group(1)] = m.group(2)
        m = re.match(r'\s*(f\d+) -> (f\d+) \[label="(\d+)"', line)
        if m:
            edges[(names[m.group(1)], names[m.group(2)])] = int(m.group(3))
    return edges


SCHEMA = None
XXHSUM = shutil.which("xxhsum")


def xxh128(path):
    """XXH3-128 of a file by xxhsum (Debian's xxhash), or None without it."""
    if not XXHSUM:
        return None
    p = run([XXHSUM, "-H2", path])
    return p.stdout.split()[0] if p.returncode == 0 else None


def validate(doc, pointer, what):
    if SCHEMA is None:
        return
    import jsonschema
    schema = dict(SCHEMA)
    if pointer:
        schema = {"$schema": SCHEMA["$schema"], "$defs": SCHEMA["$defs"],
                  "$ref": "#/$defs/" + pointer}
    try:
        jsonschema.Draft202012Validator(schema).validate(doc)
        check(True, "%s matches docs/schema/db.schema.json#/$defs/%s" % (what, pointer))
    except jsonschema.ValidationError as e:
        check(False, "%s matches docs/schema/db.schema.json#/$defs/%s: %s" % (what, pointer, e.message))


def header_copies(trace, outdir, n):
    """n copies of trace that differ only in the file header's created_ns (offset 16): valid
    traces with other content hashes, for loads of many runs."""
    import struct
    os.makedirs(outdir, exist_ok=True)
    data = bytearray(open(trace, "rb").read())
    created = struct.unpack_from("<Q", data, 16)[0]
    out = []
    for i in range(n):
        struct.pack_into("<Q", data, 16, created + 1 + i)
        path = os.path.join(outdir, "copy%05d.ptc" % i)
        open(path, "wb").write(data)
        out.append(path)
    return out


def writers(env, url, lists):
    """One `ptcall db add` per list of traces, all at once: [(stdout, stderr)] and seconds."""
    start = time.time()
    procs = [subprocess.Popen([env.ptcall, "db", "add", "--db", url, "--tag", "writer=%d" % w] + files,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for w, files in enumerate(lists)]
    outs = [p.communicate(timeout=600) for p in procs]
    return outs, time.time() - start


def load(env, B, runs):
    """--load N: 8 writers add N runs (copies of one real trace) at once; prints the time and
    whether every run was stored exactly once (docs/benchmarks.md, Runs database)."""
    demo = env.build("examples/demo.c", "demo")
    trace = env.record("load", demo, 16)
    if not (demo and trace):
        return 1
    copies = header_copies(trace, os.path.join(env.work, "load"), runs)
    url = B.fresh("load")
    outs, took = writers(env, url, [copies[w::8] for w in range(8)])
    got = sorted(r[0] for r in B.sql(url, "SELECT trace FROM runs"))
    check(got == sorted(copies), "%s: 8 writers added %d runs in %.2f s (%.0f runs/s), every run stored "
          "exactly once" % (B.name, len(got), took, len(got) / took))
    check(B.integrity(url), "the database is sound")
    return 1 if check.fails else 0


# ---- the checks ------------------------------------------------------------------------------------

STATS_COLS = ("function_id, time_unit, runs, calls_sum, total_sum, self_sum, calls_max, total_max, self_max, "
              "calls_min, total_min, self_min, calls_sq, total_sq, self_sq")
RECOMPUTED = ("SELECT rf.function_id, r.time_unit, COUNT(*), SUM(rf.calls), COALESCE(SUM(rf.total), 0), "
              "COALESCE(SUM(rf.self), 0), MAX(rf.calls), COALESCE(MAX(rf.total), 0), COALESCE(MAX(rf.self), 0), "
              "MIN(rf.calls), COALESCE(MIN(rf.total), 0), COALESCE(MIN(rf.self), 0), "
              "SUM(CAST(rf.calls AS DOUBLE PRECISION) * rf.calls), "
              "COALESCE(SUM(CAST(rf.total AS DOUBLE PRECISION) * rf.total), 0), "
              "COALESCE(SUM(CAST(rf.self AS DOUBLE PRECISION) * rf.self), 0) "
              "FROM run_functions rf JOIN runs r ON r.id = rf.run_id GROUP BY rf.function_id, r.time_unit "
              "ORDER BY 1, 2")


def rows_alike(a, b):
    """Rows of function_stats alike: whole numbers equal, sums of squares (doubles, added up in
    another order) to 1e-12 of their size."""
    def real(v):  # psql gives DOUBLE PRECISION as text
        return isinstance(v, float) or (isinstance(v, str) and re.fullmatch(r"-?[\d.]+(e[+-]?\d+)?", v)
                                        and not v.lstrip("-").isdigit())

    def same(x, y):
        if real(x) or real(y):
            return abs(float(x) - float(y)) <= 1e-12 * max(abs(float(x)), abs(float(y)), 1.0)
        return x == y
    return len(a) == len(b) and all(len(r) == len(q) and all(same(x, y) for x, y in zip(r, q))
                                    for r, q in zip(a, b))


def stats_sound(B, url, what):
    """function_stats (schema 2: every function's sums and maxima over all runs; schema 3: its
    minima and sums of squares, all kept by db add and db rm) equals what run_functions gives
    when summed here."""
    kept = B.sql(url, "SELECT %s FROM function_stats ORDER BY 1, 2" % STATS_COLS)
    want = B.sql(url, RECOMPUTED)
    ok = check(rows_alike(kept, want), "%s: function_stats equals the sums, maxima, minima and sums of "
               "squares of run_functions (%d rows)" % (what, len(want)))
    ekept = B.sql(url, "SELECT caller_id, callee_id, runs, calls_sum FROM edge_stats ORDER BY 1, 2")
    ewant = B.sql(url, "SELECT caller_id, callee_id, COUNT(*), SUM(calls) FROM run_edges GROUP BY 1, 2 ORDER BY 1, 2")
    ok = check(ekept == ewant, "%s: edge_stats equals the runs and calls of run_edges per edge (%d rows)"
               % (what, len(ewant))) and ok
    if not ok:
        for a, b in zip(kept, want):
            if a != b:
                print("    kept", a, "want", b)
                break
        print("    %d rows kept, %d wanted" % (len(kept), len(want)))
    return ok


def medians_right(env, url, reports, what):
    """db query --stat median,mean,min,stddev over all runs equals the medians, means, minima and
    (sample, as report --stat stddev) standard deviations computed here from the runs' reports, a run without a
    function counting as 0 (an even or odd number of runs)."""
    q = env.db_json(url, "query", "--stat", "median,mean,min,stddev", "--top", "0")
    if not check(q is not None, "%s: db query --stat median,mean,min,stddev" % what):
        return
    keys = set(key(f) for r in reports for f in r["functions"])
    meas = ("calls", "total", "self") if q["timed"] else ("calls",)
    bad = []
    for k in keys:
        g = by_key(q).get(k)
        for m in meas:
            xs = [next((f[m] for f in r["functions"] if key(f) == k), 0) for r in reports]
            for st, want in (("median", statistics.median(xs)), ("mean", sum(xs) / len(xs)),
                             ("min", min(xs)), ("stddev", statistics.stdev(xs) if len(xs) > 1 else 0.0)):
                if not g or abs(g["%s_%s" % (m, st)] - want) > 0.006 + 1e-9 * abs(want):
                    bad.append((k, m, st, g and g["%s_%s" % (m, st)], want))
    check(not bad and len(q["runs"]) == len(reports) and len(keys) == len(q["functions"]),
          "%s: medians, means, minima and standard deviations of %s over %d runs (%d functions) equal "
          "those computed from the reports"
          % (what, "/".join(meas), len(reports), len(keys)))
    for b in bad[:5]:
        print("   ", b)


def by_key(doc):
    return {key(f): f for f in doc["functions"]} if doc else {}


def ranked_alike(env, url, what):
    """db query over all runs answered from function_stats (sum, mean, max) and from every
    run's rows (asking for the median too makes it read them) agree to the last digit."""
    fast = env.db_json(url, "query", "--stat", "sum,mean,max,min", "--top", "0")
    scan = env.db_json(url, "query", "--stat", "median,sum,mean,max,min", "--top", "0")
    if not check(fast is not None and scan is not None, "%s: db query with and without median" % what):
        return
    a, b = by_key(fast), by_key(scan)
    cols = [c for c in fast["functions"][0] if c.split("_")[-1] in ("sum", "mean", "max", "min")] if a else []
    same = set(a) == set(b) and all(a[k][c] == b[k][c] for k in a for c in cols + ["runs"])
    check(same and fast["runs"] == scan["runs"],
          "%s: db query over all runs from function_stats equals the scan of every run (%d functions, %s)"
          % (what, len(a), ", ".join(cols)))
    # the standard deviation from sums of squares (function_stats) and from every run's values
    fs = by_key(env.db_json(url, "query", "--stat", "stddev", "--top", "0"))
    ss = by_key(env.db_json(url, "query", "--stat", "median,stddev", "--top", "0"))
    sd = [c for c in (fast["functions"][0] if a else {}) if c.split("_")[0] in ("calls", "total", "self")]
    sd = ["%s_stddev" % m for m in ("calls", "total", "self") if "%s_sum" % m in sd]
    def near(x, y):
        return x is None and y is None or (x is not None and y is not None and abs(x - y) <= 0.006 + 1e-9 * abs(y))
    check(set(fs) == set(ss) and all(near(fs[k][c], ss[k][c]) for k in fs for c in sd),
          "%s: standard deviations from function_stats equal those of the scan (%d functions)" % (what, len(fs)))
    # medians of the top functions only (read by the function index) equal the scan's
    top = env.db_json(url, "query", "--stat", "sum,median", "--top", "3")
    meds = [c for c in (top["functions"][0] if top and top["functions"] else {}) if c.endswith("_median")]
    check(top is not None and len(top["functions"]) == min(3, len(b)) and meds and
          all(f[c] == b[key(f)][c] for f in top["functions"] for c in meds),
          "%s: db query --top 3 --stat sum,median: the medians of the 3 shown (%s) equal the full scan's"
          % (what, ", ".join(meds)))


def elf_build_id(path):
    """The hex of path's NT_GNU_BUILD_ID as binutils' readelf prints it, None without one."""
    p = subprocess.run(["readelf", "-n", path], capture_output=True, text=True)
    m = re.search(r"Build ID: ([0-9a-f]+)", p.stdout)
    return m.group(1) if m else None


def modules_build_ids(env, url, run_id):
    """db show's modules carry the build id readelf finds in each object's file (the files are
    the ones traced, unchanged); a module whose file has changed since is stored without one."""
    if not shutil.which("readelf"):
        print("SKIP: readelf (binutils) is missing: build ids not compared")
        return
    doc = env.db_json(url, "show", str(run_id))
    mods = (doc or {}).get("run", {}).get("modules", [])
    want = [(m["path"], elf_build_id(m["path"])) for m in mods]
    check(mods and all(m["build_id"] == w for m, (_, w) in zip(mods, want)) and any(w for _, w in want),
          "run %d: each module's build id is its file's (%s)" % (run_id, ", ".join(
              "%s %s" % (os.path.basename(p), w) for p, w in want)))


def same_figures(env, url, run_id, trace, rep, what):
    """db show RUN --top 0 against report's JSON of the same trace, edges against graph."""
    doc = env.db_json(url, "show", str(run_id), "--top", "0")
    if not check(doc is not None and rep is not None, "db show %d and report of %s" % (run_id, what)):
        return None
    validate(doc, "show", "db show %d" % run_id)
    mine = {key(f): (f["calls"], f["total"], f["self"]) for f in doc["functions"]}
    theirs = {key(f): (f["calls"], f["total"], f["self"]) for f in rep["functions"]}
    check(mine == theirs, "%s: db show's calls, total, self per function equal report's (%d functions)"
          % (what, len(theirs)))
    if mine != theirs:
        for k in sorted(set(mine) | set(theirs)):
            if mine.get(k) != theirs.get(k):
                print("   ", k, "db", mine.get(k), "report", theirs.get(k))
    r = doc["run"]
    tot = {k: v for k, v in rep["totals"].items() if k in r["totals"]}
    check(all(r["totals"][k] == v for k, v in tot.items()) and len(tot) >= 18,
          "%s: the run's totals (%d counters, complete, total_time) equal report's" % (what, len(tot)))
    check(r["command"] == rep["command"], "%s: how the command ended equals report's (%s)" % (what, r["command"]))
    check(r["backend"] == rep["backend"] and r["time_unit"] == rep["time_unit"],
          "%s: backend and time unit equal report's" % what)
    dedges = {(e["caller"], e["callee"]): e["calls"] for e in doc["edges"]}
    gedges = graph_edges(env, trace)
    check(dedges == gedges and (len(gedges) > 0 or not rep["totals"]["calls"]),
          "%s: db show's caller->callee edges equal ptcall graph's (%d)" % (what, len(gedges)))
    return doc


def main():
    args = sys.argv[1:]
    nload = 0
    if len(args) == 6 and args[4] == "--load":
        nload = int(args.pop())
        args.pop()
    if len(args) != 4 or args[0] not in ("sqlite", "postgres"):
        sys.exit(__doc__)
    backend, build, src, work = args
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    env = Env(build, src, work)
    global SCHEMA
    try:
        import jsonschema  # noqa: F401
        SCHEMA = json.load(open(os.path.join(src, "docs", "schema", "db.schema.json")))
    except ImportError:
        print("note: python3-jsonschema is missing: the JSON outputs are not validated")
    if not os.access(env.cc, os.X_OK):
        print("SKIP: %s is not built" % env.cc)
        return SKIP
    B = SQLite(work) if backend == "sqlite" else Postgres(work)
    if backend == "postgres" and not B.start():
        B.stop()
        return SKIP if B.tmp is None else 1
    try:
        return load(env, B, nload) if nload else checks(env, B)
    finally:
        B.stop()


def drop_v7(B, url):
    """Takes version 7's columns out of a database (a budget's governor, issue 28)."""
    for c in ("demoted_functions", "budget_demotions"):
        B.sql(url, "ALTER TABLE runs DROP COLUMN %s" % c)
    B.sql(url, "ALTER TABLE run_functions DROP COLUMN demoted")


def serve_api(env, url, paths):
    """{path: JSON} of `ptcall serve --db url` (127.0.0.1, a port of its choosing)."""
    import urllib.request
    sv = subprocess.Popen([env.ptcall, "serve", "--db", url, "--listen", "127.0.0.1:0"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out = {}
    try:
        m = re.search(r"http://[0-9.:]+", sv.stdout.readline() or "")
        for path in paths if m else ():
            with urllib.request.urlopen(m.group(0) + path, timeout=30) as r:
                out[path] = json.load(r)
    finally:
        sv.terminate()
        sv.wait(30)
    return out


def governed(env, B, current):
    """A trace recorded within a budget whose governor demoted a function (issue 28; schema
    version 7): test/e2e/programs/governor_prog.c, whose burst() the pilot traces and the
    governor then demotes. db add stores the functions it demoted and its demotions as report
    says them, each function's demoted flag (state traced, times equal report's), the API gives
    them; the same database taken back to version 6 is migrated (0: no ptcall before knew)."""
    exe = os.path.join(env.work, "governor_prog")
    p = run([env.cc, "-O2", "-pthread", os.path.join(env.src, "test", "e2e", "programs",
                                                      "governor_prog.c"), "-o", exe])
    if not check(p.returncode == 0, "built governor_prog.c with ptcall-cc -O2"):
        print(p.stderr)
        return
    tr = env.record("governed", exe, 400, 1500, 1, opts=("--overhead", "10", "--pilot", "100ms"))
    rep = env.report(tr) if tr else None
    st = (rep or {}).get("function_states") or {}
    ngov = sum(1 for b in (rep or {}).get("budgets", []) if b["source"] == "governor")
    demoted = {f["linkage_name"] for f in (rep or {}).get("functions", []) if f.get("demoted")}
    if not check(st.get("demoted", 0) >= 1 and ngov >= 1 and "burst" in demoted,
                 "governed trace: report says the governor demoted burst (function_states %s, %d "
                 "governor budget(s))" % (st, ngov)):
        return
    url = B.fresh("governed")
    p = env.db(url, "add", tr)
    m = re.match(r"run (\d+): ", p.stdout)
    if not check(p.returncode == 0 and m, "db add of the governed trace: %s" % (p.stdout + p.stderr).strip()):
        return
    rid = int(m.group(1))
    row = B.sql(url, "SELECT demoted_functions, budget_demotions, counted_functions, budget_source FROM "
                     "runs WHERE id = %d" % rid)
    check(row == [(st["demoted"], ngov, st["counted"], rep["budget"]["source"])],
          "governed run: runs.demoted_functions %d and budget_demotions %d as report's (function_states."
          "demoted, budgets of source governor); the first budget stays the pilot's: %s"
          % (st["demoted"], ngov, row))
    rows = B.sql(url, "SELECT f.linkage_name, rf.state, rf.demoted, rf.calls, rf.total, rf.self FROM "
                      "run_functions rf JOIN functions f ON f.id = rf.function_id WHERE rf.run_id = %d "
                      "ORDER BY 1" % rid)
    want = sorted((f["linkage_name"], f["state"], 1 if f.get("demoted") else 0, f["calls"], f["total"],
                   f["self"]) for f in rep["functions"])
    check(rows == want, "governed run: run_functions' state (traced), demoted (1 for %s only), calls and "
          "times equal report's" % ", ".join(sorted(demoted)))
    if rows != want:
        print("    db", rows, "\n    report", want)
    # db show as report (same_figures but for edges: after a pilot every thread's events
    # begin mid-stack, so its calls have no caller in the trace, and graph has no edges)
    doc = env.db_json(url, "show", str(rid), "--top", "0")
    validate(doc, "show", "db show of the governed run")
    check(doc and {key(f): (f["calls"], f["total"], f["self"]) for f in doc["functions"]} ==
          {key(f): (f["calls"], f["total"], f["self"]) for f in rep["functions"]} and
          {(e["caller"], e["callee"]): e["calls"] for e in doc["edges"]} == graph_edges(env, tr),
          "governed run: db show's calls, total and self equal report's, its edges graph's")
    # what the web views read (db_runs_get, db_run_functions, db_wfunction_runs): the API
    bid = B.sql(url, "SELECT id FROM functions WHERE linkage_name = 'burst'")[0][0]
    api = serve_api(env, url, ["/api/v1/runs/%d" % rid, "/api/v1/functions/%d" % bid,
                               "/api/v1/runs/%d/callgraph" % rid])
    run_doc = api.get("/api/v1/runs/%d" % rid, {})
    r = run_doc.get("run", {})
    fns = {f["linkage_name"]: f for f in run_doc.get("functions", [])}
    check(r.get("demoted_functions") == st["demoted"] and r.get("budget_demotions") == ngov and
          all(f.get("demoted") is (n in demoted) and f.get("state") == "traced" for n, f in fns.items())
          and fns, "governed run: /api/v1/runs/%d gives demoted_functions, budget_demotions and "
          "functions[].demoted (burst true, the others false; state traced)" % rid)
    pts = api.get("/api/v1/functions/%d" % bid, {}).get("runs", [])
    check([(x["run"], x["demoted"]) for x in pts] == [(rid, True)],
          "governed run: /api/v1/functions/%d (burst) says it was demoted in that run: %s" % (bid, pts))
    nodes = {n["linkage_name"]: n for n in api.get("/api/v1/runs/%d/callgraph" % rid, {}).get("nodes", [])}
    check(nodes.get("burst", {}).get("demoted") is True and nodes.get("calm", {}).get("demoted") is False,
          "governed run: the call graph's node of burst says demoted, calm's does not")
    # the same database taken back to version 6: migrated, the run kept, no demotion known
    back = B.fresh("governed6")
    env.db(back, "add", tr)
    drop_v7(B, back)
    B.sql(back, "UPDATE schema_version SET version = 6")
    lst = env.db_json(back, "list")
    check(lst and lst["schema_version"] == current_version_of(B, url) and len(lst["runs"]) == 1,
          "a version 6 database holding the governed run is migrated")
    check(B.sql(back, "SELECT demoted_functions, budget_demotions FROM runs") == [(0, 0)] and
          B.sql(back, "SELECT count(*) FROM run_functions WHERE demoted <> 0") == [(0,)],
          "... its run says no function demoted (0: version 6 did not know)")
    check(B.columns(back) == current and B.indexes(back) == B.indexes(url),
          "... its tables and indexes equal a new database's")


def current_version_of(B, url):
    return B.sql(url, "SELECT max(version) FROM schema_version")[0][0]


def checks(env, B):
    demo = env.build("examples/demo.c", "demo")
    faulty = env.build("test/faults/faulty.c", "faulty")
    if not check(demo and faulty, "built examples/demo.c and test/faults/faulty.c with ptcall-cc"):
        return 1
    before = time.time_ns()
    t = {n: env.record("demo%d" % n, demo, n) for n in (16, 18, 20)}
    after = time.time_ns()
    untimed = env.record("untimed", demo, 16, opts=("--no-timestamps",))
    t16b = env.record("demo16b", demo, 16)
    failed = env.record("fail", faulty, "fail", 50, ok=(3,))
    killed = env.record("killed", faulty, "kill", 50, ok=(137, 125))
    if not all(list(t.values()) + [untimed, t16b, failed, killed]):
        return 1
    rep = {n: env.report(p) for n, p in t.items()}

    url = B.fresh("main")
    # ---- add, duplicates, metadata
    ids = {}
    for n in (16, 18, 20):
        p = env.db(url, "add", "--tag", "input=%d" % n, "--tag", "build=O1", t[n])
        m = re.match(r"run (\d+): ", p.stdout)
        check(p.returncode == 0 and m, "db add demo%d: %s" % (n, (p.stdout + p.stderr).strip()))
        ids[n] = int(m.group(1)) if m else 0
    p = env.db(url, "add", t[16])
    check(p.returncode == 1 and ("stored already as run %d" % ids[16]) in p.stderr,
          "the same trace again is refused naming its run: %s" % p.stderr.strip())
    # with --threads 2 the hash is made on a thread of its own (not of the decoder's bytes):
    # the same digits
    p = env.db(url, "add", "--threads", "2", t[18])
    check(p.returncode == 1 and ("stored already as run %d" % ids[18]) in p.stderr,
          "the same trace added with --threads 2 (the file hashed on a second thread) is refused too")
    lst = env.db_json(url, "list")
    validate(lst, "list", "db list")
    check(lst and [r["id"] for r in lst["runs"]] == [ids[16], ids[18], ids[20]], "db list: the 3 runs")
    for n in (16, 18, 20):
        r = next(r for r in lst["runs"] if r["id"] == ids[n])
        check(r["program"] == "demo" and r["command_line"] == "%s %d" % (demo, n) and
              r["tags"] == {"input": str(n), "build": "O1"},
              "run %d: program demo, command line '%s', tags %s" % (r["id"], r["command_line"], r["tags"]))
        check(r["host"] == socket.gethostname() and r["content_hash"] == (xxh128(t[n]) or r["content_hash"]),
              "run %d: host %s, the file's XXH3-128%s" % (r["id"], r["host"], "" if XXHSUM else " (xxhsum missing: not compared)"))
        check(r["start_ns"] and before - 10**9 <= r["start_ns"] <= after and r["duration_ns"] > 0,
              "run %d: recorded at a time the recording ran, lasted %.3f ms" % (r["id"], (r["duration_ns"] or 0) / 1e6))
        check(r["totals"]["complete"] and not r["totals"]["lossy"] and r["command"]["exit_status"] == 0,
              "run %d: complete, exited 0" % r["id"])

    # ---- db show against report and graph
    for n in (16, 18, 20):
        same_figures(env, url, ids[n], t[n], rep[n], "demo%d" % n)
    modules_build_ids(env, url, ids[16])
    p = env.db(url, "show", str(ids[18]), "--format", "csv", "--top", "0")
    rows = list(csv.DictReader(io.StringIO(p.stdout)))
    check(p.returncode == 0 and len(rows) == len(rep[18]["functions"]) and
          {(r["linkage_name"], int(r["calls"]), int(r["self"])) for r in rows} ==
          {(f["linkage_name"], f["calls"], f["self"]) for f in rep[18]["functions"]},
          "db show --format csv: report's columns and figures (%d rows)" % len(rows))
    p = env.db(url, "show", str(ids[18]))
    check(p.returncode == 0 and "exited 0" in p.stdout and "fib [demo]" in p.stdout,
          "db show (table) names the end of the command and the functions")

    # ---- db query against statistics computed here from the reports
    q = env.db_json(url, "query", "--runs", "%d-%d" % (ids[16], ids[20]), "--stat", "sum,mean,median,max",
                    "--top", "0")
    validate(q, "query", "db query")
    if check(q is not None, "db query --stat sum,mean,median,max over the 3 runs"):
        vals = {}
        for i, n in enumerate((16, 18, 20)):
            for f in rep[n]["functions"]:
                v = vals.setdefault(key(f), {m: [0, 0, 0] for m in ("calls", "total", "self")})
                for m in v:
                    v[m][i] += f[m]
        got = {key(f): f for f in q["functions"]}
        bad = []
        for k, v in vals.items():
            g = got.get(k)
            if not g:
                bad.append((k, "missing"))
                continue
            for m, xs in v.items():
                want = {"sum": sum(xs), "mean": sum(xs) / 3, "median": statistics.median(xs), "max": max(xs)}
                for st, w in want.items():
                    if abs(g["%s_%s" % (m, st)] - w) > 0.006:
                        bad.append((k, m, st, g["%s_%s" % (m, st)], w))
            if g["runs"] != sum(1 for c in v["calls"] if c):
                bad.append((k, "runs", g["runs"]))
        check(not bad and len(got) == len(vals),
              "db query: sum, mean, median, max of calls, total and self and the runs of each of %d functions "
              "equal those computed from report's JSON" % len(vals))
        for b in bad[:10]:
            print("   ", b)
        ranked = [f["self_sum"] for f in q["functions"]]
        check(ranked == sorted(ranked, reverse=True), "db query ranks by the first --stat of self time")
        multi = env.report(t[16], t[18], t[20], extra=("--stat", "mean"))
        if check(multi is not None, "ptcall report of the 3 traces --stat mean"):
            m = {key(f): f for f in multi["functions"]}
            agree = all(abs(got[k]["calls_sum"] - f["calls"]) < 0.5 and abs(got[k]["self_sum"] - f["self"]) < 0.5 and
                        abs(got[k]["total_mean"] - f["total_mean"]) < 0.006 and got[k]["runs"] == f["runs"]
                        for k, f in m.items() if k in got) and set(m) == set(got)
            check(agree, "db query's sums, means and runs equal ptcall report's over the same 3 traces")
    p = env.db(url, "query", "--format", "csv", "--stat", "median")
    rows = list(csv.DictReader(io.StringIO(p.stdout)))
    check(p.returncode == 0 and rows and "calls_median" in rows[0] and "self_median" in rows[0],
          "db query --format csv: one row per function, calls/total/self_median columns")
    p = env.db(url, "query", "--top", "2")
    check(p.returncode == 0 and "more functions called" in p.stdout, "db query (table) --top 2")

    # ---- filters
    def listed(*args):
        d = env.db_json(url, "list", *args)
        return [r["id"] for r in d["runs"]] if d else None
    check(listed("--tag", "input=18") == [ids[18]], "--tag input=18 keeps one run")
    check(listed("--tag", "build") == [ids[16], ids[18], ids[20]], "--tag build (any value) keeps all")
    check(listed("--tag", "build=O2") == [], "--tag build=O2 keeps none")
    check(listed("--program", "de*") == [ids[16], ids[18], ids[20]] and listed("--program", "*/faulty") == [],
          "--program matches the program's name and path")
    check(listed("--since", "1h") == [ids[16], ids[18], ids[20]] and listed("--until", "@1") == [] and
          listed("--since", "2000-01-01", "--until", "2200-01-01T00:00Z") == [ids[16], ids[18], ids[20]],
          "--since and --until (ages, @SECONDS, dates)")
    check(listed("--runs", "last:2") == [ids[18], ids[20]] and listed("--runs", str(ids[18])) == [ids[18]] and
          listed("--runs", "all", "--tag", "input=20") == [ids[20]], "--runs last:N, ids, all with a tag")
    q = env.db_json(url, "query", "--tag", "input=16")
    check(q and q["runs"] == [ids[16]] and {key(f): f["calls_sum"] for f in q["functions"]} ==
          {key(f): f["calls"] for f in rep[16]["functions"]}, "db query --tag: one run's figures")
    p = env.db(url, "list", "--runs", "3-1")
    check(p.returncode == 2 and "--runs" in p.stderr, "a bad --runs is a usage error")
    p = env.db(url, "list", "--since", "yesterday")
    check(p.returncode == 2 and "--since" in p.stderr, "a bad --since is a usage error")

    # ---- exit status, signals, incomplete traces, untimed runs
    p = env.db(url, "add", failed, killed)
    check(p.returncode == 0, "db add of a failed and a killed command: %s" % p.stderr.strip())
    runs = {os.path.basename(r["trace"]): r for r in env.db_json(url, "list")["runs"]}
    fr, kr = runs.get("fail.ptc"), runs.get("killed.ptc")
    check(fr and fr["command"] == {"exit_status": 3, "signal": None, "core_dumped": False},
          "the failed command's run: exited 3")
    check(kr and kr["command"] and kr["command"]["signal"] == 9 and not kr["totals"]["complete"] and
          kr["totals"]["lossy"] and kr["totals"]["unfinished_processes"] == 1,
          "the killed command's run: signal 9, INCOMPLETE (a process did not close its trace)")
    frep, krep = env.report(failed), env.report(killed)
    same_figures(env, url, fr["id"], failed, frep, "faulty fail")
    same_figures(env, url, kr["id"], killed, krep, "faulty kill")
    p = env.db(url, "list")
    check("INCOMPLETE" in p.stdout and "SIGKILL" in p.stdout, "db list (table) shows INCOMPLETE and SIGKILL")
    p = env.db(url, "add", untimed)
    un = int(re.match(r"run (\d+)", p.stdout).group(1)) if p.returncode == 0 else 0
    check(un > 0, "db add of an untimed trace")
    same_figures(env, url, un, untimed, env.report(untimed), "untimed")
    q = env.db_json(url, "query", "--runs", "%d,%d" % (ids[16], un))
    check(q and q["mixed_time_units"] and not q["timed"] and q["sort"] == "calls" and
          all(f["self_sum"] is None for f in q["functions"]),
          "db query of a timed and an untimed run: calls only, times null")
    validate(q, "query", "db query of mixed runs")
    p = env.db(url, "query", "--runs", "%d,%d" % (ids[16], un), "--sort", "self")
    check(p.returncode == 1 and "mix time units" in p.stderr, "--sort self over mixed runs is refused")

    # ---- rm, unknown runs
    p = env.db(url, "rm", str(fr["id"]), "99999")
    check(p.returncode == 1 and "no run 99999" in p.stderr and "no run was removed" in p.stderr,
          "db rm of a run and an unknown one: exit 1, nothing removed: %s" % p.stderr.strip())
    check(fr["id"] in listed(), "... the known run is still there")
    p = env.db(url, "rm", str(fr["id"]))
    check(p.returncode == 0 and fr["id"] not in listed(), "db rm removes the run")
    check(B.sql(url, "SELECT count(*) FROM run_functions WHERE run_id = %d" % fr["id"]) == [(0,)] and
          B.sql(url, "SELECT count(*) FROM run_edges WHERE run_id = %d" % fr["id"]) == [(0,)] and
          B.sql(url, "SELECT count(*) FROM run_modules WHERE run_id = %d" % fr["id"]) == [(0,)],
          "... with its functions, edges and modules")
    p = env.db(url, "show", str(fr["id"]))
    check(p.returncode == 1 and ("no run %d" % fr["id"]) in p.stderr, "db show of an unknown run: exit 1: %s"
          % p.stderr.strip())
    p = env.db(url, "show", "abc")
    check(p.returncode == 2, "db show abc: usage error")

    # ---- function_stats through adds and removals: the run holding a maximum removed, an
    # untimed run (its own time unit) removed, every run removed
    st = B.fresh("stats")
    sid = {}
    for name, path in (("16", t[16]), ("18", t[18]), ("20", t[20]), ("16b", t16b), ("untimed", untimed)):
        p = env.db(st, "add", path)
        sid[name] = int(re.match(r"run (\d+)", p.stdout).group(1)) if p.returncode == 0 else 0
    check(all(sid.values()), "5 runs for function_stats: demo 16, 18, 20, 16 again, and untimed")
    stats_sound(B, st, "5 runs")
    ranked_alike(env, st, "5 runs")
    rep16b, repu = env.report(t16b), env.report(untimed)
    medians_right(env, st, [rep[16], rep[18], rep[20], rep16b, repu], "5 runs (mixed units)")
    p = env.db(st, "add", failed)
    sid["failed"] = int(re.match(r"run (\d+)", p.stdout).group(1)) if p.returncode == 0 else 0
    medians_right(env, st, [rep[16], rep[18], rep[20], rep16b, repu, env.report(failed)],
                  "6 runs of two programs")
    p = env.db(st, "rm", str(sid["failed"]), str(sid["untimed"]))
    medians_right(env, st, [rep[16], rep[18], rep[20], rep16b], "4 timed runs")
    for name, path in (("untimed", untimed), ("failed", failed)):
        p = env.db(st, "add", path)
        sid[name] = int(re.match(r"run (\d+)", p.stdout).group(1)) if p.returncode == 0 else 0
    medians_right(env, st, [rep[16], rep[18], rep[20], rep16b, repu, env.report(failed)],
                  "6 runs again (removed and added again)")
    p = env.db(st, "rm", str(sid["failed"]))
    check(p.returncode == 0 and all(sid.values()), "the runs of the function_stats checks")
    stats_sound(B, st, "runs removed and added again")
    # which answers come from function_stats: a figure changed there shows in the ranking
    # over all runs without medians, and nowhere else
    before = {k: f["calls_sum"] for k, f in by_key(env.db_json(st, "query", "--top", "0")).items()}
    sub = env.db_json(st, "query", "--top", "0", "--runs", "%d,%d" % (sid["16"], sid["18"]))
    B.sql(st, "UPDATE function_stats SET calls_sum = calls_sum + 1000000 WHERE time_unit = 'ns'")
    after = {k: f["calls_sum"] for k, f in by_key(env.db_json(st, "query", "--top", "0")).items()}
    med = {k: f["calls_sum"] for k, f in by_key(env.db_json(st, "query", "--top", "0", "--stat", "sum,median")).items()}
    sub2 = env.db_json(st, "query", "--top", "0", "--runs", "%d,%d" % (sid["16"], sid["18"]))
    check(before and all(after[k] == v + 1000000 for k, v in before.items()) and med == before and sub == sub2,
          "db query over all runs reads function_stats; with --stat median, or over some runs, it reads "
          "every run's rows")
    B.sql(st, "UPDATE function_stats SET calls_sum = calls_sum - 1000000 WHERE time_unit = 'ns'")
    for gone in ("20", "16", "untimed"):
        p = env.db(st, "rm", str(sid[gone]))
        check(p.returncode == 0, "db rm of the run of demo %s" % gone)
        stats_sound(B, st, "demo %s's run removed" % gone)
        ranked_alike(env, st, "demo %s's run removed" % gone)
    q = env.db_json(st, "query", "--stat", "max", "--top", "0")
    fib = [f for f in (q or {}).get("functions", []) if f["linkage_name"] == "fib"]
    want = max(f["calls"] for f in rep[18]["functions"] if f["linkage_name"] == "fib")
    check(fib and fib[0]["calls_max"] == want and q["timed"],
          "the maximum of fib's calls is demo 18's (%s) once demo 20's run is gone, and the runs left "
          "are timed again" % want)
    p = env.db(st, "rm", str(sid["18"]), str(sid["16b"]))
    check(p.returncode == 0 and B.sql(st, "SELECT count(*) FROM function_stats") == [(0,)],
          "every run removed: function_stats is empty")

    # ---- medians on many figures: runs written straight into the tables (copies of a real
    # run's row, synthetic functions with random figures: ties, zeros, absent functions,
    # odd and even counts), db query --stat median against statistics.median
    import random
    rnd = random.Random(17)
    syn = B.fresh("median")
    env.db(syn, "add", t[16])
    cols = [c[0] for c in B.columns(syn)["runs"] if c[0] not in ("id", "content_hash")]
    nfun = 40
    for i in range(nfun):
        B.sql(syn, "INSERT INTO functions (module, linkage_name, file, name, line) VALUES "
                   "('syn', 'f%d', 'syn.c', 'f%d', %d)" % (i, i, i))
    fids = [r[0] for r in B.sql(syn, "SELECT id FROM functions WHERE module = 'syn' ORDER BY line")]
    want = {}
    for group, nruns in (("odd", 31), ("even", 24)):
        values = {f: [] for f in fids}
        first = None
        for r in range(nruns):
            B.sql(syn, "INSERT INTO runs (content_hash, %s) SELECT '%s%03d', %s FROM runs WHERE id = 1"
                  % (", ".join(cols), group, r, ", ".join(cols)))
            rid = B.sql(syn, "SELECT max(id) FROM runs")[0][0]
            first = first or rid
            rows = []
            for k, f in enumerate(fids):
                shape = k % 4  # 0: small values with ties, 1: sorted by run, 2: often absent, 3: wide
                if shape == 2 and rnd.random() < 0.6:
                    values[f].append(0)
                    continue
                v = (rnd.randint(1, 5) if shape == 0 else r * 3 + 1 if shape == 1 else
                     rnd.randint(1, 10**12))
                values[f].append(v)
                rows.append("(%d, %d, 0, %d, %d, %d)" % (rid, f, v, 2 * v, v))
            if rows:
                B.sql(syn, "INSERT INTO run_functions (run_id, function_id, module_idx, calls, total, self) "
                           "VALUES " + ", ".join(rows))
        want[group] = ("%d-%d" % (first, first + nruns - 1), values)
    for group, (spec, values) in want.items():
        q = env.db_json(syn, "query", "--runs", spec, "--stat", "median,mean", "--top", "0")
        got = {f["linkage_name"]: f for f in (q or {}).get("functions", [])}
        bad = []
        for k, f in enumerate(fids):
            xs = values[f]
            g = got.get("f%d" % k)
            for m, mul in (("calls", 1), ("total", 2), ("self", 1)):
                for st, w in (("median", statistics.median([x * mul for x in xs])),
                              ("mean", sum(x * mul for x in xs) / len(xs))):
                    if not g or abs(g["%s_%s" % (m, st)] - w) > max(0.006, abs(w) * 1e-12):
                        bad.append(("f%d" % k, m, st, g and g["%s_%s" % (m, st)], w))
        check(q is not None and len(q["runs"]) == len(next(iter(values.values()))) and not bad,
              "medians and means of %d functions over %d runs (%s: ties, zeros, absent functions, large "
              "values) equal statistics.median's" % (nfun, len(next(iter(values.values()))), group))
        for b in bad[:5]:
            print("   ", b)

    # ---- traces that cannot be read store nothing
    count = B.sql(url, "SELECT count(*) FROM runs")
    cut = os.path.join(env.work, "cut.ptc")
    data = open(t[18], "rb").read()
    open(cut, "wb").write(data[:len(data) // 2])
    junk = os.path.join(env.work, "notes.ptc")
    open(junk, "w").write("not a trace\n")
    for path, want in ((cut, "truncated"), (junk, "not a ptcall trace"), (os.path.join(env.work, "missing.ptc"), "missing.ptc")):
        p = env.db(url, "add", path)
        check(p.returncode == 1 and want in p.stderr, "db add %s: exit 1, '%s': %s"
              % (os.path.basename(path), want, p.stderr.strip()[:160]))
    p = env.db(url, "add", cut, t[20], junk)
    check(p.returncode == 1 and "3 of 3 traces were not stored" in p.stderr,
          "db add of a bad, a stored and a bad trace: each refused, exit 1")
    check(B.sql(url, "SELECT count(*) FROM runs") == count, "... nothing stored")

    # ---- schema versions: newer refused, every earlier one migrated
    newer = B.fresh("newer")
    env.db(newer, "add", t[16])
    current_version = env.db_json(newer, "list")["schema_version"]
    B.sql(newer, "UPDATE schema_version SET version = 999")
    for sub, args in (("list", ()), ("add", (t[18],))):
        p = env.db(newer, sub, *args)
        check(p.returncode == 1 and "schema version 999" in p.stderr and
              ("up to %d" % current_version) in p.stderr,
              "db %s of a database of schema version 999 is refused naming both versions: %s" % (sub, p.stderr.strip()))
    check(B.sql(newer, "SELECT count(*) FROM runs") == [(1,)], "... and nothing is added to it")
    current = B.columns(url)
    frozen = sorted(glob.glob(os.path.join(env.src, "test", "db", "schema", "v*.%s.sql" % B.name)))
    check(len(frozen) >= 1, "frozen earlier schemas: %s" % ", ".join(map(os.path.basename, frozen)))
    for path in frozen:
        v = re.match(r"v(\d+)", os.path.basename(path)).group(1)
        old = B.fresh("v%s" % v)
        B.load(old, path)
        lst = env.db_json(old, "list")
        check(lst and lst["schema_version"] == current_version and [r["id"] for r in lst["runs"]] == [1] and
              lst["runs"][0]["tags"] == {"made": "v%s fixture" % v},
              "schema v%s: this ptcall opens it (schema version %s now) and keeps its run"
              % (v, lst and lst["schema_version"]))
        doc = env.db_json(old, "show", "1", "--top", "0")
        check(doc and {f["linkage_name"]: (f["calls"], f["total"], f["self"]) for f in doc["functions"]} ==
              {"main": (1, 9000, 1000), "work": (11, 8000, 8000)} and doc["edges"][0]["calls"] == 11,
              "schema v%s: the run's figures and edge" % v)
        q = env.db_json(old, "query", "--stat", "sum,max")
        check(q and {f["linkage_name"]: (f["runs"], f["calls_sum"], f["self_sum"], f["total_max"])
                     for f in q["functions"]} == {"main": (1, 1, 1000, 9000), "work": (1, 11, 8000, 8000)},
              "schema v%s: db query over its run (from function_stats) gives the run's figures" % v)
        stats_sound(B, old, "schema v%s after opening" % v)
        p = env.db(old, "add", t[16])
        check(p.returncode == 0, "schema v%s: db add after migrating" % v)
        stats_sound(B, old, "schema v%s and a run added" % v)
        check(B.columns(old) == current and B.indexes(old) == B.indexes(url),
              "schema v%s: migrated, its tables and indexes equal a new database's" % v)
        check(B.sql(old, "SELECT max(version) FROM schema_version") == B.sql(url, "SELECT max(version) FROM schema_version"),
              "schema v%s: schema_version is the current one" % v)
    check(any(os.path.basename(f).startswith("v%d." % current_version) for f in frozen) and
          all(any(os.path.basename(f).startswith("v%d." % k) for f in frozen) for k in range(1, current_version)),
          "every schema version 1..%d is frozen under test/db/schema/" % current_version)
    # version 2 added function_stats and version 3 its minima and sums of squares, both made
    # from the runs the database holds: a real database of many runs taken back to version 1
    # (as version 1 left it: without the tables, the index with figures and the build ids) or to
    # version 2 (function_stats without the new columns) is migrated, and the table it gets
    # equals the one db add kept
    for to in (1, 2):
        back = B.fresh("back%d" % to)
        for n in (16, 18, 20):
            env.db(back, "add", t[n])
        env.db(back, "add", untimed)
        kept = B.sql(back, "SELECT %s FROM function_stats ORDER BY 1, 2" % STATS_COLS)
        B.sql(back, "DROP TABLE edge_stats")
        if to == 1:
            B.sql(back, "DROP TABLE function_stats")
        else:
            for c in ("calls_min", "total_min", "self_min", "calls_sq", "total_sq", "self_sq"):
                B.sql(back, "ALTER TABLE function_stats DROP COLUMN %s" % c)
            B.sql(back, "UPDATE function_stats SET calls_sum = 0")  # version 3 makes it again
        B.sql(back, "DROP INDEX run_functions_figures")
        B.sql(back, "CREATE INDEX run_functions_function ON run_functions (function_id)")
        B.sql(back, "ALTER TABLE run_modules DROP COLUMN build_id")
        for table in ("campaign_frontier_callers", "campaign_frontier", "campaign_reach",
                      "campaign_union", "campaign_block_firsts", "campaign_firsts",
                      "campaign_points", "campaign_instances", "campaign_parts", "campaign_tags",
                      "campaigns"):  # version 4's
            B.sql(back, "DROP TABLE %s" % table)
        for c in ("entered_before", "still_open", "window_threads"):  # version 5's
            B.sql(back, "ALTER TABLE runs DROP COLUMN %s" % c)
        for c in ("counted_functions", "counted_calls", "budget_kind", "budget_source",
                  "budget_limit", "budget_predicted", "budget_pilot_ns", "budget_candidates",
                  "budget_traced", "budget_outcome", "budget_note"):  # version 6's
            B.sql(back, "ALTER TABLE runs DROP COLUMN %s" % c)
        B.sql(back, "ALTER TABLE run_functions DROP COLUMN state")
        drop_v7(B, back)
        B.sql(back, "UPDATE schema_version SET version = %d" % to)
        lst = env.db_json(back, "list")
        check(lst and lst["schema_version"] == current_version and len(lst["runs"]) == 4,
              "a version %d database of 4 runs (3 timed, 1 untimed) is migrated to version %d"
              % (to, current_version))
        check(rows_alike(B.sql(back, "SELECT %s FROM function_stats ORDER BY 1, 2" % STATS_COLS), kept) and
              len(kept) > 6,
              "... its function_stats, made by the migration, equals what db add kept (%d rows)" % len(kept))
        check(B.columns(back) == current and B.indexes(back) == B.indexes(url),
              "... its tables and indexes equal a new database's")

    governed(env, B, current)

    # ---- foreign databases, unreachable ones
    foreign = B.fresh("foreign")
    B.sql(foreign, "CREATE TABLE notes (x INTEGER)")
    for sub, args in (("list", ()), ("add", (t[16],))):
        p = env.db(foreign, sub, *args)
        check(p.returncode == 1 and "not a ptcall runs database" in p.stderr,
              "db %s of a database with other tables is refused: %s" % (sub, p.stderr.strip()[:200]))
    check(len(B.columns(foreign)) == 1, "... and left as it was")
    bad, want, advice = B.unreachable()
    p = env.db(bad, "add", t[16])
    check(p.returncode == 1 and want in p.stderr and advice in p.stderr,
          "an unreachable database: the library's error and what to check: %s" % p.stderr.strip()[:300])
    if B.name == "postgres":
        # a TCP port where nothing listens: libpq's words, then what to check
        p = env.db("postgresql://ptcall@127.0.0.1:1/runs", "add", t[16])
        check(p.returncode == 1 and "Connection refused" in p.stderr and "127.0.0.1" in p.stderr and
              "check that the PostgreSQL server runs" in p.stderr and "the host and port" in p.stderr,
              "a PostgreSQL URL where nothing listens: libpq's error and what to check: %s" % p.stderr.strip()[:300])
        p = env.db("postgresql://ptcall:secret@127.0.0.1:1/runs", "list")
        check(p.returncode == 1 and "secret" not in p.stderr and "***" in p.stderr,
              "a password in the URL is not printed: %s" % p.stderr.strip()[:120])
        p = env.db(B.url("nosuchdb"), "list")
        check(p.returncode == 1 and 'database "nosuchdb" does not exist' in p.stderr and "createdb" in p.stderr,
              "a database that does not exist: libpq's error and createdb")
    else:
        p = env.db(os.path.join(env.work, "none.db"), "list")
        check(p.returncode == 1 and "there is no database" in p.stderr and "db add' creates it" in p.stderr,
              "db list of a missing file: what creates it")

    # ---- 8 writers at once
    conc = B.fresh("conc")
    traces = [env.record("w%d-%d" % (w, k), demo, 8 + (w + k) % 6) for w in range(8) for k in range(3)]
    shared = t[18]
    if check(all(traces), "24 traces for 8 writers, and one that all of them add"):
        # and 30 more runs per writer: copies of a trace that differ in their start time
        copies = header_copies(traces[0], os.path.join(env.work, "copies"), 240)
        lists = [traces[3 * w:3 * w + 3] + copies[30 * w:30 * w + 30] + [shared] for w in range(8)]
        outs, took = writers(env, conc, lists)
        stored_shared = sum(1 for o, _ in outs if re.search(r"run \d+: %s" % re.escape(shared), o))
        refused = sum(1 for _, e in outs if "stored already as run" in e)
        check(stored_shared == 1 and refused == 7,
              "the trace all 8 writers add is stored once, refused 7 times (stored %d, refused %d)" % (stored_shared, refused))
        check(all(len(re.findall(r"^run \d+: ", o, re.M)) == 33 + (shared in o) for o, _ in outs),
              "every writer stored its 33 traces (%.1f s for 265 runs)" % took)
        for o, e in outs:
            if "database is locked" in e or "deadlock" in e or "was not stored" in e:
                check(False, "a writer failed: %s" % e.strip()[:300])
        files = traces + copies + [shared]
        got = sorted(r[0] for r in B.sql(conc, "SELECT trace FROM runs"))
        check(got == sorted(files), "265 runs, each trace stored exactly once (%d rows)" % len(got))
        if XXHSUM:
            hashes = dict(B.sql(conc, "SELECT trace, content_hash FROM runs"))
            check(all(hashes[f] == xxh128(f) for f in files[::16]), "their content hashes are xxhsum -H2's")
        check(B.sql(conc, "SELECT count(*) FROM runs r WHERE r.functions <> (SELECT count(*) FROM run_functions f "
                          "WHERE f.run_id = r.id) OR r.edges <> (SELECT count(*) FROM run_edges e WHERE e.run_id = r.id)")
              == [(0,)], "every run has all its function and edge rows")
        check(B.integrity(conc), "the database is sound (integrity and foreign keys)")
        stats_sound(B, conc, "8 writers at once")
        ranked_alike(env, conc, "8 writers at once")
        one = env.db_json(conc, "list", "--tag", "writer=5")
        check(one and len(one["runs"]) in (33, 34), "the tags of each writer's runs")
        r = next(x for x in env.db_json(conc, "list")["runs"] if x["trace"] == traces[13])
        same_figures(env, conc, r["id"], traces[13], env.report(traces[13]), "a concurrent writer's run")
        r = next(x for x in env.db_json(conc, "list")["runs"] if x["trace"] == copies[77])
        same_figures(env, conc, r["id"], copies[77], env.report(copies[77]), "a copy's run")

    # ---- a db add killed inside its transaction leaves the database as it was
    kill = B.fresh("kill")
    env.db(kill, "add", t[16])
    tables = ("runs", "run_tags", "run_modules", "functions", "run_functions", "run_edges", "function_stats")
    snapshot = lambda: [B.sql(kill, "SELECT count(*) FROM %s" % x)[0][0] for x in tables]
    rows_before = snapshot()
    stats_before = B.sql(kill, "SELECT %s FROM function_stats ORDER BY 1, 2" % STATS_COLS)
    flag = os.path.join(env.work, "paused")
    if os.path.exists(flag):
        os.remove(flag)
    e = dict(os.environ, PTCALL_DB_PAUSE=flag)
    proc = subprocess.Popen([env.ptcall, "db", "add", "--db", kill, "--tag", "killed=yes", t[20]],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=e)
    deadline = time.time() + 60
    while not os.path.exists(flag) and time.time() < deadline and proc.poll() is None:
        time.sleep(0.02)
    inside = os.path.exists(flag)
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    check(inside and proc.returncode == -signal.SIGKILL,
          "db add killed (SIGKILL) with its run written and not committed")
    check(snapshot() == rows_before, "... the database is as before: %s rows in %s"
          % (rows_before, ", ".join(tables)))
    check(B.integrity(kill), "... and sound")
    check(B.sql(kill, "SELECT %s FROM function_stats ORDER BY 1, 2" % STATS_COLS) == stats_before,
          "... function_stats too, to the last figure")
    stats_sound(B, kill, "after the killed db add")
    p = env.db(kill, "add", t[20])
    check(p.returncode == 0 and snapshot() != rows_before,
          "... and the same trace can be added afterwards")

    # ---- a broken output is refused by the schema (the schema checks something)
    if SCHEMA is not None:
        import jsonschema
        broken = env.db_json(url, "list")
        broken["runs"][0]["totals"].pop("complete")
        try:
            jsonschema.Draft202012Validator({"$ref": "#/$defs/list", "$defs": SCHEMA["$defs"]}).validate(broken)
            check(False, "the schema refuses a run without totals.complete")
        except jsonschema.ValidationError:
            check(True, "the schema refuses a run without totals.complete")

    print("%d failed" % check.fails if check.fails else "all passed")
    return 1 if check.fails else 0


if __name__ == "__main__":
    sys.exit(main())
