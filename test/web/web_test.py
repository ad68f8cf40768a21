#!/usr/bin/python3
"""The web views in a real browser (docs/web.md): `ptcall serve` and `ptcall html`.

  web_test.py --build BUILD --work DIR --artefacts DIR [--workloads lua,sqlite] [--timeout S]

Builds the Lua and SQLite workloads of bench/ (Debian's sources, as bench/run.py builds them)
and test/web/hostile.c (functions named <script>alert(1)</script> and <img ... onerror=...>)
with ptcall-cc, records a few small runs of each with the soft backend, stores them with
tags in a runs database (`ptcall db add`) and starts `ptcall serve` on it. Then:

  - every API document is validated against docs/schema/web.schema.json;
  - unknown runs, functions, tags and pages answer 404 with a message (API and pages);
  - headless Chromium (Debian's chromium, chromedriver, selenium) loads every page; the
    figures in the DOM (each cell's data-v) are compared with `ptcall report --format json`
    of the same traces: the hot-function ranking's sums, means, medians and standard
    deviations per program, a function's figures run by run, a run's functions, the diff;
  - it clicks from the ranking to a function, from there to a run, and checks the run's
    call graph and flame graph are drawn;
  - the hostile names are shown as text (the exact string in the DOM) and no script runs:
    no alert opens, no <script> or <img> element comes from the data, and a global the
    attack would set stays unset;
  - 16 clients at once fetch every page, API document and static file: every answer 200;
  - 16 clients asking at once for one run's flame graph, flame tree or threads get the same
    bytes from one decoding of its trace (PTCALL_TEST_SERVE_DECODES counts them), later
    askers the cached copy, and a moved or replaced trace its 410, never the cached graph;
  - `ptcall html` of the runs opens from file:// and shows the same figures and names.

Screenshots of every page go to --artefacts. A missing Chromium, chromedriver or selenium is
a failure (exit 1: scripts/setup.sh installs them), never a skip.
Prints 'ok   ...' / 'FAIL ...' per check, then 'web: N passed, N failed'.
"""

import argparse
import concurrent.futures
import importlib.util
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
HOSTILE = ["<script>alert(1)</script>", "<img src=x onerror=alert(2)>&amp;\"'"]


class Checks:
    def __init__(self):
        self.passed = self.failed = 0

    def ok(self, what):
        self.passed += 1
        print("ok   " + what, flush=True)

    def fail(self, what):
        self.failed += 1
        print("FAIL " + what, flush=True)

    def check(self, cond, what, detail=""):
        if cond:
            self.ok(what)
        else:
            self.fail(what + (": " + detail if detail else ""))
        return cond


C = Checks()


def sh(cmd, **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    if r.returncode:
        raise SystemExit("FAIL command %s exited %d: %s" % (" ".join(cmd), r.returncode,
                                                            (r.stderr or r.stdout)[-2000:]))
    return r.stdout


def load_module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


# ---- the browser ------------------------------------------------------------------------

def browser():
    """Headless Chromium through chromedriver. Missing pieces fail the test."""
    missing = [p for p in ("chromium", "chromedriver") if not shutil.which(p)]
    try:
        from selenium import webdriver  # noqa: F401
    except ImportError:
        missing.append("python3-selenium")
    if missing:
        print("FAIL the browser tests need %s: run scripts/setup.sh (apt-get install chromium "
              "chromium-driver python3-selenium)" % ", ".join(missing), flush=True)
        sys.exit(1)
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    o = Options()
    o.binary_location = shutil.which("chromium")
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--no-first-run", "--allow-file-access-from-files"):
        o.add_argument(a)
    o.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    d = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=o)
    d.set_window_size(1400, 1100)
    d.set_page_load_timeout(60)
    return d


def wait_ready(d, what, timeout=30):
    """Waits for app.js to fill the page (body[data-ready]) or an error page."""
    end = time.time() + timeout
    while time.time() < end:
        try:
            if d.execute_script("return document.body && (document.body.dataset.ready === '1' "
                                "|| !!document.getElementById('error'))"):
                return True
        except Exception as e:  # an alert would surface here
            C.fail("%s: the page raised %s" % (what, type(e).__name__))
            return False
        time.sleep(0.05)
    C.fail("%s: the page was not filled within %d s" % (what, timeout))
    return False


def no_alert(d, what):
    from selenium.common.exceptions import NoAlertPresentException
    try:
        a = d.switch_to.alert
        text = a.text
        a.dismiss()
        C.fail("%s: a script ran (alert %r)" % (what, text))
    except NoAlertPresentException:
        C.ok("%s: no alert opened" % what)


def console_errors(d):
    """Browser console errors other than the favicon the pages do not have."""
    return [l["message"] for l in d.get_log("browser")
            if l["level"] == "SEVERE" and "favicon" not in l["message"]]


def shot(d, artefacts, name):
    """The whole page (the window made as tall as the page, up to 6000 px, for the shot)."""
    h = d.execute_script("return document.documentElement.scrollHeight") or 1100
    d.set_window_size(1400, min(max(h + 20, 1100), 6000))
    d.save_screenshot(os.path.join(artefacts, name + ".png"))
    d.set_window_size(1400, 1100)


def cells(d, table_id):
    """Rows of a table as lists of data-v (numbers) or text, keyed by the row's data-function
    or data-run attribute (JavaScript reads the DOM as the page shows it)."""
    return d.execute_script("""
      var t = document.getElementById(arguments[0]); if (!t) return null;
      return Array.from(t.tBodies[0].rows).map(function (r) {
        return {key: r.dataset.function || r.dataset.run || "",
                cells: Array.from(r.cells).map(function (c) {
                  return c.hasAttribute('data-v') ? c.getAttribute('data-v') : c.textContent; })};
      });""", table_id)


def num(s):
    return None if s in ("", None) else float(s)


def close(a, b):
    """Page figures with two decimals against exact ones."""
    if a is None or b is None:
        return a is b
    return abs(a - b) <= 0.006 + 1e-9 * abs(b)


# ---- workloads and runs ---------------------------------------------------------------------

def build_programs(build, work):
    cc = os.path.join(build, "bin", "ptcall-cc")
    R = load_module("benchrun", os.path.join(ROOT, "bench", "run.py"))
    wdir = os.path.join(ROOT, "bench", "workloads")
    progs = {}
    for name in ARGS.workloads:
        if name == "lua":
            wl = R.lua_workload(work, wdir, True)
            runs = [[os.path.join(wdir, "bench.lua"), "1"]] * 2
        elif name == "sqlite":
            wl = R.sqlite_workload(work, wdir, True)
            runs = [[":memory:", ".read " + R.sqlite_script(work, wdir, n)] for n in (200, 400)]
        else:
            raise SystemExit("FAIL unknown workload %s" % name)
        out = os.path.join(work, "bin", name)
        R.build(cc, wl, [], [], out)
        progs[name] = (out, runs)
    out = os.path.join(work, "bin", "hostile")
    sh([cc, "-O2", "-g", os.path.join(HERE, "hostile.c"), "-o", out])
    progs["hostile"] = (out, [["60"]])
    return progs


def record_all(ptcall, progs, work):
    traces = {}  # program -> [trace paths]
    for name, (exe, runs) in progs.items():
        for i, args in enumerate(runs):
            t = os.path.join(work, "traces", "%s-%d.ptc" % (name, i + 1))
            os.makedirs(os.path.dirname(t), exist_ok=True)
            sh([ptcall, "record", "-q", "--backend", "soft", "-o", t, "--", exe] + args,
               cwd=work)
            traces.setdefault(name, []).append(t)
    return traces


def report(ptcall, paths):
    return json.loads(sh([ptcall, "report", "--format", "json"] + list(paths)))


# ---- the server -------------------------------------------------------------------------------

class Server:
    def __init__(self, ptcall, db, env=None):
        self.p = subprocess.Popen([ptcall, "serve", "--db", db, "--listen", "127.0.0.1:0"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  env=dict(os.environ, **(env or {})))
        line = self.p.stdout.readline()
        if "http://" not in line:
            raise SystemExit("FAIL ptcall serve did not start: %s %s" % (line, self.p.stderr.read()))
        self.url = line.split()[2].rstrip("/")

    def get(self, path):
        # 60 s: 16 clients asking at once for a run's flame graph are answered from one
        # decoding (single_flight_checks), not 16 side by side (over 60 s under ASan on 2 cores)
        try:
            with urllib.request.urlopen(self.url + path, timeout=60) as r:
                return r.status, r.headers, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.headers, e.read()

    def api(self, path):
        st, _, body = self.get(path)
        return st, json.loads(body)

    def stop(self):
        self.p.send_signal(signal.SIGTERM)
        try:
            rc = self.p.wait(20)
        except subprocess.TimeoutExpired:
            self.p.kill()
            rc = "killed"
        err = self.p.stderr.read()
        C.check(rc == 0, "ptcall serve stops cleanly on SIGTERM", "exit %s %s" % (rc, err[-500:]))
        return err


def schema_validator():
    import jsonschema
    schema = json.load(open(os.path.join(ROOT, "docs", "schema", "web.schema.json")))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)

    def validate(doc, ref, what):
        sub = {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": "#/$defs/" + ref}
        errs = sorted(cls(sub).iter_errors(doc), key=lambda e: list(e.path))
        C.check(not errs, "%s matches web.schema.json#/$defs/%s" % (what, ref),
                "; ".join("%s: %s" % (list(e.path), e.message[:200]) for e in errs[:3]))
    return validate


# ---- checks -----------------------------------------------------------------------------------

def expected_hot(per_run):
    """Per function (name, module base): calls/total/self sum, mean, median, stddev over the
    runs (a run without the function counting as 0), from single-run reports."""
    n = len(per_run)
    vals = {}
    for i, rep in enumerate(per_run):
        for f in rep["functions"]:
            if not f["calls"] and not f.get("total"):
                continue
            k = (f["name"], os.path.basename(f["module"]))
            v = vals.setdefault(k, {m: [0] * n for m in ("calls", "total", "self")})
            for m in ("calls", "total", "self"):
                v[m][i] += f[m] or 0
    out = {}
    for k, v in vals.items():
        out[k] = {m: {"sum": sum(x), "mean": sum(x) / n, "median": statistics.median(x),
                      "stddev": statistics.stdev(x) if n > 1 else 0.0} for m, x in v.items()}
    return out


HOT_COLS = [("calls", "sum"), ("calls", "mean"), ("calls", "median"), ("calls", "stddev"),
            ("self", "sum"), ("self", "mean"), ("self", "median"), ("self", "stddev"),
            ("total", "sum"), ("total", "mean")]


def check_hot_table(rows, exp, what):
    """rows: the hot table (rank, function, module, runs, then HOT_COLS)."""
    bad = []
    for r in rows:
        c = r["cells"]
        k = (c[1], c[2])
        if k not in exp:
            bad.append("%s is not in report's output" % (k,))
            continue
        for j, (m, s) in enumerate(HOT_COLS):
            if not close(num(c[4 + j]), exp[k][m][s]):
                bad.append("%s %s %s: page %s, report %s" % (k[0], m, s, c[4 + j], exp[k][m][s]))
    C.check(rows and not bad, "%s: %d functions' sums, means, medians, stddevs equal ptcall "
            "report's" % (what, len(rows or [])), "; ".join(bad[:4]))


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--artefacts", required=True)
    ap.add_argument("--workloads", default="lua,sqlite")
    ap.add_argument("--postgres", action="store_true",
                    help="also serve the same runs from a PostgreSQL server the test starts")
    ARGS = ap.parse_args()
    ARGS.workloads = [w for w in ARGS.workloads.split(",") if w]
    build, work, art = (os.path.abspath(p) for p in (ARGS.build, ARGS.work, ARGS.artefacts))
    os.makedirs(work, exist_ok=True)
    os.makedirs(art, exist_ok=True)
    ptcall = os.path.join(build, "tools", "ptcall")
    d = browser()  # first: a missing browser fails before minutes of building

    progs = build_programs(build, work)
    traces = record_all(ptcall, progs, work)
    db = os.path.join(work, "web.db")
    for f in (db, db + "-wal", db + "-shm"):
        if os.path.exists(f):
            os.unlink(f)
    for name, ts in traces.items():
        for i, t in enumerate(ts):
            sh([ptcall, "db", "add", "--db", db, "--tag", "program=" + name,
                "--tag", "round=%d" % (i + 1), t])
    runs_by_prog = {}
    for r in json.loads(sh([ptcall, "db", "list", "--db", db, "--format", "json"]))["runs"]:
        runs_by_prog.setdefault(r["tags"]["program"], []).append(r)
    reports = {t: report(ptcall, [t]) for ts in traces.values() for t in ts}

    srv = Server(ptcall, db)
    validate = schema_validator()
    try:
        api_checks(srv, validate, runs_by_prog, traces, reports)
        browser_checks(d, srv, art, runs_by_prog, traces, reports)
        concurrent_checks(srv, runs_by_prog)
        single_flight_checks(ptcall, db, runs_by_prog)
        live_add_checks(srv, ptcall, db, progs, work)
    finally:
        srv.stop()
    cli_checks(ptcall, work)
    html_checks(d, ptcall, work, art, traces, reports)
    if ARGS.postgres:
        pg_checks(d, ptcall, work, art, traces, reports, validate)
    d.quit()
    print("web: %d passed, %d failed" % (C.passed, C.failed))
    sys.exit(1 if C.failed else 0)


def api_checks(srv, validate, runs_by_prog, traces, reports):
    all_runs = [r for rs in runs_by_prog.values() for r in rs]
    st, doc = srv.api("/api/v1/runs")
    C.check(st == 200 and len(doc["runs"]) == len(all_runs), "/api/v1/runs lists every run")
    validate(doc, "runs", "/api/v1/runs")
    st, doc = srv.api("/api/v1/hot?top=0")
    validate(doc, "hot", "/api/v1/hot")
    r0 = all_runs[0]["id"]
    st, doc = srv.api("/api/v1/runs/%d" % r0)
    validate(doc, "run", "/api/v1/runs/ID")
    fid = doc["functions"][0]["id"]
    st, doc = srv.api("/api/v1/functions/%d" % fid)
    validate(doc, "function", "/api/v1/functions/ID")
    st, doc = srv.api("/api/v1/diff?base=%d&new=%d" % (all_runs[0]["id"], all_runs[1]["id"]))
    validate(doc, "diff", "/api/v1/diff")
    for path in ("/api/v1/runs/999999", "/api/v1/functions/999999", "/api/v1/hot?tag=nosuch=1",
                 "/api/v1/runs?tag=program=nosuch", "/api/v1/diff?base=1&new=999999",
                 "/api/v1/nothing", "/api/v2/runs", "/api/v1/runs/999999/flame.svg"):
        st, doc = srv.api(path)
        C.check(st == 404 and doc.get("error"), "%s: 404 with a message" % path,
                "%s %s" % (st, doc))
        validate(doc, "error", path)
    for path in ("/runs/999999", "/functions/999999", "/nothing", "/hot?tag=nosuch"):
        st, hdr, body = srv.get(path)
        C.check(st == 404 and b"id=\"error\"" in body, "page %s: 404 with a message" % path,
                "%s" % st)
    for path in ("/api/v1/runs/abc", "/api/v1/hot?sort=bogus", "/api/v1/hot?top=-1",
                 "/api/v1/runs?runs=x-y"):
        st, doc = srv.api(path)
        C.check(st == 400 and doc.get("error"), "%s: 400 with a message" % path, "%s" % st)
    st, hdr, _ = srv.get("/hot")
    csp = hdr.get("Content-Security-Policy", "")
    # 'wasm-unsafe-eval' lets the call graph's Graphviz (WebAssembly) compile; no eval, no
    # inline script
    C.check("script-src 'self'" in csp and "default-src 'none'" in csp and
            "unsafe" not in csp.replace("'wasm-unsafe-eval'", ""),
            "pages carry a strict Content-Security-Policy", csp)
    req = urllib.request.Request(srv.url + "/api/v1/runs", method="POST", data=b"x")
    try:
        urllib.request.urlopen(req, timeout=10)
        C.fail("POST is refused")
    except urllib.error.HTTPError as e:
        C.check(e.code == 405, "POST is refused (read-only)", str(e.code))
    edge_checks(srv, runs_by_prog, traces)
    # a run whose trace is gone: the flame graph says so (410), the figures stay
    t = traces["hostile"][0]
    os.rename(t, t + ".away")
    try:
        hid = runs_by_prog["hostile"][0]["id"]
        st, doc = srv.api("/api/v1/runs/%d/flame.svg" % hid)
        C.check(st == 410 and "gone" in doc.get("error", ""), "flame graph of a run whose trace "
                "is gone: 410 saying so", "%s %s" % (st, doc))
        st, doc = srv.api("/api/v1/runs/%d" % hid)
        C.check(st == 200, "that run's figures are still served")
    finally:
        os.rename(t + ".away", t)


def graph_edges(trace):
    """{(caller, callee): calls} of `ptcall graph` of one trace (db_test.py reads the dot)."""
    T = load_module("db_test", os.path.join(ROOT, "test", "db", "db_test.py"))
    return T.dot_edges(sh([os.path.join(ARGS.build, "tools", "ptcall"), "graph", trace]))


def edge_checks(srv, runs_by_prog, traces):
    """A function's callers and callees over all runs (the database's edge sums, edge_stats)
    and over one program's runs (every chosen run's edges read) equal each other for a
    function only that program has, and equal the calls `ptcall graph` counts in its traces,
    summed, with the number of traces that have each edge."""
    prog = "lua" if "lua" in runs_by_prog else sorted(runs_by_prog)[0]
    want = {}
    for t in traces[prog]:
        for k, n in graph_edges(t).items():
            c, r = want.get(k, (0, 0))
            want[k] = (c + n, r + 1)
    st, hot = srv.api("/api/v1/hot?tag=program=%s&sort=calls&top=5" % prog)
    fns = [f for f in (hot or {}).get("functions", []) if f["module"] == prog][:3]
    C.check(st == 200 and fns, "%s's most called functions" % prog)
    for f in fns:
        st1, all_runs = srv.api("/api/v1/functions/%d" % f["id"])
        st2, some = srv.api("/api/v1/functions/%d?tag=program=%s" % (f["id"], prog))
        if not C.check(st1 == 200 and st2 == 200, "function %s over all runs and over %s's" % (f["name"], prog)):
            continue
        got = {}
        for side in ("callers", "callees"):
            for e in all_runs[side]:
                k = (e["name"], f["name"]) if side == "callers" else (f["name"], e["name"])
                got[k] = (e["calls"], e["runs"])
        mine = {k: v for k, v in want.items() if f["name"] in k}
        C.check(all_runs["callers"] == some["callers"] and all_runs["callees"] == some["callees"],
                "%s: callers and callees over all runs (edge_stats) equal those over %s's runs (run_edges)"
                % (f["name"], prog))
        C.check(got == mine and mine, "%s: %d callers and callees, calls and runs, equal ptcall graph's "
                "over the %d traces" % (f["name"], len(mine), len(traces[prog])),
                "%s != %s" % (sorted(got.items())[:4], sorted(mine.items())[:4]))


def browser_checks(d, srv, art, runs_by_prog, traces, reports):
    # runs page
    d.get(srv.url + "/runs")
    wait_ready(d, "/runs")
    shot(d, art, "runs")
    rows = cells(d, "runs")
    all_runs = {r["id"]: r for rs in runs_by_prog.values() for r in rs}
    C.check(rows is not None and len(rows) == len(all_runs), "runs page: one row per run")
    bad = []
    for r in rows or []:
        run = all_runs[int(r["key"])]
        q = "INCOMPLETE" if not run["totals"]["complete"] else ("lossy" if run["totals"]["lossy"]
                                                                 else "complete")
        tags = " ".join("%s=%s" % kv for kv in run["tags"].items())
        if r["cells"][5] != q or r["cells"][9] != tags or int(num(r["cells"][6])) != run["totals"]["events"]:
            bad.append(r)
    C.check(not bad, "runs page: quality, events and tags equal ptcall db list's", str(bad[:2]))
    d.get(srv.url + "/runs?tag=program%3Dlua" if "lua" in runs_by_prog else srv.url + "/runs")
    wait_ready(d, "/runs filtered")
    rows = cells(d, "runs")
    want = len(runs_by_prog.get("lua", all_runs))
    C.check(rows is not None and len(rows) == want, "runs page: the tag filter keeps %d runs" % want)

    # hot functions per program against report
    for prog, runs in runs_by_prog.items():
        per_run = [reports[t] for t in traces[prog]]
        exp = expected_hot(per_run)
        d.get(srv.url + "/hot?tag=program%%3D%s&top=0" % prog)
        wait_ready(d, "/hot " + prog)
        shot(d, art, "hot-" + prog)
        rows = cells(d, "hot")
        check_hot_table(rows, exp, "hot functions of %s over %d runs" % (prog, len(runs)))
        C.check(rows is not None and len(rows) == len(exp), "hot functions of %s: every function "
                "report lists (%d)" % (prog, len(exp)), "page %d" % len(rows or []))
        bars = d.execute_script("return document.querySelectorAll('#hot-chart g.hbar').length")
        C.check(bars >= 1, "hot functions of %s: the bar chart is drawn" % prog)
        errs = console_errors(d)
        C.check(not errs, "hot functions of %s: no console errors (CSP violations included)" %
                prog, str(errs[:2]))

    # click through: ranking -> function -> run (lua, else the first program)
    prog = "lua" if "lua" in runs_by_prog else next(iter(runs_by_prog))
    d.get(srv.url + "/hot?tag=program%%3D%s" % prog)
    wait_ready(d, "/hot click")
    link = d.find_elements("css selector", "#hot a.fn-link")[0]
    name = link.text
    link.click()
    wait_ready(d, "function page of " + name)
    shot(d, art, "function")
    C.check(d.find_element("id", "function-name").text == name and "/functions/" in d.current_url,
            "clicking %s in the ranking opens its page" % name)
    rows = cells(d, "function-runs")
    bad = []
    for r in rows or []:
        rid = int(r["key"])
        tr = [t for t, rr in zip(traces[prog], runs_by_prog[prog]) if rr["id"] == rid]
        f = [x for x in reports[tr[0]]["functions"] if x["name"] == name] if tr else []
        want = (f[0]["calls"], f[0]["self"], f[0]["total"]) if f else (0, 0, 0)
        got = tuple(int(num(r["cells"][k])) for k in (3, 4, 5))
        if got != want:
            bad.append((rid, got, want))
    C.check(rows and not bad, "function page: calls, self, total per run equal report's",
            str(bad[:3]))
    C.check(d.execute_script("return document.querySelectorAll('#function-chart canvas').length")
            >= 1, "function page: the line chart is drawn")
    callees = cells(d, "callees") or []
    callers = cells(d, "callers") or []
    C.check(len(callees) + len(callers) > 0, "function page: callers and callees listed")
    d.find_elements("css selector", "#function-runs a.run-link")[0].click()
    wait_ready(d, "run page")
    time.sleep(0.5)
    shot(d, art, "run")
    rid = int(d.current_url.rstrip("/").split("/")[-1])
    tr = [t for t, rr in zip(traces[prog], runs_by_prog[prog]) if rr["id"] == rid][0]
    rep = {f["name"]: f for f in reports[tr]["functions"]}
    rows = cells(d, "run-functions") or []
    bad = [r["cells"][0] for r in rows if r["cells"][0] not in rep or
           int(num(r["cells"][2])) != rep[r["cells"][0]]["calls"] or
           int(num(r["cells"][3])) != rep[r["cells"][0]]["self"]]
    C.check(rows and not bad, "run page (reached by clicking): %d functions' calls and self "
            "equal report's" % len(rows), str(bad[:3]))
    # the call graph is laid out by Graphviz after the page is filled (callgraph.js)
    end = time.time() + 30
    while time.time() < end and not d.execute_script(
            "return document.querySelectorAll('#callgraph g.node').length"):
        time.sleep(0.1)
    nodes = d.execute_script("return document.querySelectorAll('#callgraph g.node').length")
    edges = d.execute_script("return document.querySelectorAll('#callgraph g.edge').length")
    C.check(nodes > 1 and edges > 0, "run page: the call graph is drawn (%d nodes, %d edges)" %
            (nodes, edges))
    end = time.time() + 30
    # the interactive flame graph (web/app/flame.js; test/web/flame_test.py checks it)
    flame = ("var b = document.getElementById('flame-chart'); return !!b && "
             "b.querySelectorAll('g.frame').length > 0")
    while time.time() < end and not d.execute_script(flame):
        time.sleep(0.2)
    C.check(d.execute_script(flame), "run page: the flame graph is shown")

    # diff of the program's two runs
    a, b = runs_by_prog[prog][0]["id"], runs_by_prog[prog][1]["id"]
    d.get(srv.url + "/diff?base=%d&new=%d&top=0" % (a, b))
    wait_ready(d, "/diff")
    shot(d, art, "diff")
    ra = {f["name"]: f for f in reports[traces[prog][0]]["functions"]}
    rb = {f["name"]: f for f in reports[traces[prog][1]]["functions"]}
    rows = cells(d, "diff") or []
    bad = []
    for r in rows:
        n = r["cells"][0]
        ca, cb = ra.get(n, {}).get("calls", 0), rb.get(n, {}).get("calls", 0)
        if (int(num(r["cells"][2])), int(num(r["cells"][3])), int(num(r["cells"][4]))) != (ca, cb, cb - ca):
            bad.append((n, r["cells"][2:5], ca, cb))
    C.check(rows and not bad, "diff page: calls before, after and change equal the two reports'",
            str(bad[:3]))

    # hostile names
    if "hostile" in runs_by_prog:
        d.execute_script("window.__ptcall_probe = 1")
        for path in ("/hot?tag=program%3Dhostile", "/runs/%d" % runs_by_prog["hostile"][0]["id"]):
            d.get(srv.url + path)
            wait_ready(d, path)
            time.sleep(0.3)
            no_alert(d, "hostile names on " + path)
            texts = d.execute_script(
                "return Array.from(document.querySelectorAll('main a, main td, #callgraph text'))"
                ".map(function (e) { return e.textContent; })")
            for h in HOSTILE:
                C.check(h in texts, "%s: %r is shown as text" % (path, h))
            injected = d.execute_script(
                "return document.querySelectorAll('main script, main img:not(#flame), "
                "#callgraph script, [onerror]').length")
            C.check(injected == 0, "%s: no element was made from a name" % path, str(injected))
            shot(d, art, "hostile-" + path.strip("/").split("?")[0].replace("/", "-"))
        hf = [f for f in json.loads(srv.get("/api/v1/hot?tag=program%3Dhostile&top=0")[2])
              ["functions"] if f["name"] == HOSTILE[0]]
        d.get(srv.url + "/functions/%d" % hf[0]["id"])
        wait_ready(d, "hostile function page")
        no_alert(d, "hostile function page")
        C.check(d.find_element("id", "function-name").text == HOSTILE[0],
                "hostile function page: the name is the heading's text")


def live_add_checks(srv, ptcall, db, progs, work):
    """A run added while the server runs shows at once: answers (cached ones too) follow the
    database, never an old copy."""
    st, before = srv.api("/api/v1/hot?tag=program%3Dhostile")
    n0 = len(srv.api("/api/v1/runs")[1]["runs"])
    t = os.path.join(work, "traces", "hostile-late.ptc")
    if os.path.exists(t):
        os.unlink(t)
    sh([ptcall, "record", "-q", "--backend", "soft", "-o", t, "--", progs["hostile"][0], "7"],
       cwd=work)
    sh([ptcall, "db", "add", "--db", db, "--tag", "program=hostile", "--tag", "round=late", t])
    st, after = srv.api("/api/v1/hot?tag=program%3Dhostile")
    C.check(st == 200 and after["nruns"] == before["nruns"] + 1,
            "a run added while serving: the (cached) hot functions count it",
            "%s -> %s" % (before.get("nruns"), after.get("nruns")))
    f0 = {f["name"]: f["calls"]["sum"] for f in before["functions"]}
    f1 = {f["name"]: f["calls"]["sum"] for f in after["functions"]}
    C.check(f1.get(HOSTILE[0]) == f0.get(HOSTILE[0], 0) + 14,
            "a run added while serving: its calls are in the sums",
            "%s -> %s" % (f0.get(HOSTILE[0]), f1.get(HOSTILE[0])))
    C.check(len(srv.api("/api/v1/runs")[1]["runs"]) == n0 + 1, "a run added while serving: listed")
    sh([ptcall, "db", "rm", "--db", db, str(max(r["id"] for r in srv.api("/api/v1/runs")[1]["runs"]))])
    st, again = srv.api("/api/v1/hot?tag=program%3Dhostile")
    C.check(st == 200 and again["nruns"] == before["nruns"], "a run removed while serving: "
            "the hot functions no longer count it")


def cli_checks(ptcall, work):
    """ptcall serve's refusals: one line each, the usual exit statuses."""
    for args, rc, words in ((["--db", os.path.join(work, "none.db")], 1, "no database"),
                            (["--listen", "nowhere"], 2, "not ADDR:PORT"),
                            (["--listen", "1.2.3:80"], 1, "not an IPv4 address"),
                            (["extra"], 2, "takes no file")):
        p = subprocess.run([ptcall, "serve"] + args, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=30)
        C.check(p.returncode == rc and words in p.stderr, "ptcall serve %s: exit %d, '%s'" %
                (" ".join(args), rc, words), "%d %s" % (p.returncode, p.stderr.strip()[:200]))
    p = subprocess.run([ptcall, "html", os.path.join(work, "none.ptc"), "-o",
                        os.path.join(work, "none.html")], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=60)
    C.check(p.returncode == 1 and not os.path.exists(os.path.join(work, "none.html")),
            "ptcall html of a missing trace: exit 1, no file", p.stderr.strip()[:200])


def concurrent_checks(srv, runs_by_prog):
    ids = [r["id"] for rs in runs_by_prog.values() for r in rs]
    st, hot = srv.api("/api/v1/hot")
    fid = hot["functions"][0]["id"]
    paths = ["/runs", "/hot", "/functions/%d" % fid, "/runs/%d" % ids[0],
             "/diff?base=%d&new=%d" % (ids[0], ids[1]), "/api/v1/runs", "/api/v1/hot",
             "/api/v1/hot?stat=median&sort=calls", "/api/v1/functions/%d" % fid,
             "/api/v1/runs/%d" % ids[0], "/api/v1/runs/%d/flame.svg" % ids[0],
             "/api/v1/diff?base=%d&new=%d" % (ids[0], ids[1]), "/static/app.js",
             "/static/uPlot.iife.min.js", "/static/app.css", "/static/uPlot.min.css"]

    def client(k):
        bad = []
        for p in paths[k % len(paths):] + paths[:k % len(paths)]:
            st, _, body = srv.get(p)
            if st != 200 or not body:
                bad.append((p, st))
        return bad

    with concurrent.futures.ThreadPoolExecutor(16) as ex:
        res = list(ex.map(client, range(16)))
    bad = [b for r in res for b in r]
    C.check(not bad, "16 clients at once get every page, API document and static file (%d "
            "answers)" % (16 * len(paths)), str(bad[:4]))


def at_once(srv, path, n=16):
    """n clients asking for path at the same instant: their [(status, body)]."""
    start = threading.Barrier(n)

    def client(_):
        start.wait()
        st, _, body = srv.get(path)
        return st, body

    with concurrent.futures.ThreadPoolExecutor(n) as ex:
        return list(ex.map(client, range(n)))


def single_flight_checks(ptcall, db, runs_by_prog):
    """A run's flame graph, flame tree and threads are decoded from its trace once, however
    many clients ask at once (web_cache.h): a fresh server, so that nothing is cached yet,
    saying each decoding on stderr (PTCALL_TEST_SERVE_DECODES)."""
    run = (runs_by_prog.get("lua") or next(iter(runs_by_prog.values())))[0]
    other = next(r for rs in runs_by_prog.values() for r in rs if r["trace"] != run["trace"])
    rid, trace = run["id"], run["trace"]
    # what the page shows: (the name the decoding line gives it, the API path)
    views = {"flame graph": ("svg", "/api/v1/runs/%d/flame.svg" % rid),
             "flame tree": ("flame-json", "/api/v1/runs/%d/flame.json" % rid),
             "threads": ("threads", "/api/v1/runs/%d/threads" % rid)}
    srv = Server(ptcall, db, {"PTCALL_TEST_SERVE_DECODES": "1"})
    first = {}
    try:
        for what, (_, path) in views.items():
            t0 = time.monotonic()
            res = at_once(srv, path)
            took = time.monotonic() - t0
            first[what] = res[0][1]
            C.check(all(st == 200 and body and body == res[0][1] for st, body in res),
                    "16 clients asking at once for run %d's %s: 200 and the same bytes each "
                    "(%.1f s)" % (rid, what, took), str([(st, len(b)) for st, b in res][:4]))
            st, _, body = srv.get(path)
            C.check(st == 200 and body == first[what],
                    "run %d's %s asked again: the same bytes" % (rid, what))
        # the cache never answers for a file that is not the run's any more: 410, then the
        # cached graph again once the very file is back
        away = trace + ".away"
        os.rename(trace, away)
        try:
            st, _, _ = srv.get(views["flame graph"][1])
            C.check(st == 410, "flame graph cached, then its trace moved away: 410", str(st))
            shutil.copyfile(other["trace"], trace)
            st, _, _ = srv.get(views["threads"][1])
            C.check(st == 410, "threads cached, then the trace replaced by another: 410", str(st))
        finally:
            os.replace(away, trace)
        st, _, body = srv.get(views["flame graph"][1])
        C.check(st == 200 and body == first["flame graph"],
                "the trace file back: the same flame graph", str(st))
    finally:
        err = srv.stop()
    decodes = [ln for ln in err.splitlines() if ln.startswith("ptcall serve: decoding ")]
    for what, (said, _) in views.items():
        n = sum(1 for ln in decodes if ln.endswith(" for " + said))
        C.check(n == 1, "run %d's %s: decoded once for 16 clients at once and the askers "
                "after them" % (rid, what), "%d decodings" % n)


def html_checks(d, ptcall, work, art, traces, reports):
    prog = "lua" if "lua" in traces else next(iter(traces))
    files = list(traces[prog]) + list(traces.get("hostile", []))
    out = os.path.join(work, "report.html")
    sh([ptcall, "html"] + files + ["-o", out])
    data = open(out, encoding="utf-8").read()
    C.check("http://" not in data.split("<script nonce")[0] and "src=\"http" not in data,
            "ptcall html: nothing is loaded from elsewhere")
    # over every program: the page's default is the last run's program (tables_test.py)
    d.get("file://" + out + "#/hot?program=*")
    wait_ready(d, "report.html hot")
    shot(d, art, "html-hot")
    exp = expected_hot([reports[t] for t in files])
    rows = cells(d, "hot")
    check_hot_table(rows, exp, "ptcall html from file://: hot functions over %d runs" % len(files))
    C.check(d.execute_script("return document.querySelectorAll('#hot-chart g.hbar').length") >= 1,
            "ptcall html: the bar chart is drawn (the inlined scripts run)")
    errs = console_errors(d)
    C.check(not errs, "ptcall html: no console errors (its CSP allows only its own blocks)",
            str(errs[:2]))
    if "hostile" in traces:
        no_alert(d, "ptcall html with hostile names")
        texts = d.execute_script("return Array.from(document.querySelectorAll('main a'))"
                                 ".map(function (e) { return e.textContent; })")
        C.check(all(h in texts for h in HOSTILE), "ptcall html: the hostile names are text")
    d.get("file://" + out + "#/runs/1")
    d.refresh()
    wait_ready(d, "report.html run 1")
    time.sleep(0.5)
    shot(d, art, "html-run")
    C.check(d.execute_script("var b = document.getElementById('flame-chart'); return !!b && "
                             "b.querySelectorAll('g.frame').length > 0"),
            "ptcall html: run 1's flame graph is shown")
    rows = cells(d, "run-functions") or []
    rep = {f["name"]: f for f in reports[files[0]]["functions"]}
    bad = [r["cells"][0] for r in rows if int(num(r["cells"][2])) != rep.get(r["cells"][0], {}).get("calls")]
    C.check(rows and not bad, "ptcall html: run 1's functions equal report's", str(bad[:3]))


def pg_checks(d, ptcall, work, art, traces, reports, validate):
    """The same runs in PostgreSQL (a server started here, as test/db does): the same API
    answers as from SQLite, and the hot-function page's figures equal report's."""
    T = load_module("db_test", os.path.join(ROOT, "test", "db", "db_test.py"))
    pg = T.Postgres(work)
    if not C.check(pg.start(), "a PostgreSQL server starts (Debian's postgresql, scripts/setup.sh)"):
        return
    try:
        url = pg.fresh("web")
        for name, ts in traces.items():
            for i, t in enumerate(ts):
                sh([ptcall, "db", "add", "--db", url, "--tag", "program=" + name,
                    "--tag", "round=%d" % (i + 1), t])
        runs_by_prog = {}
        for r in json.loads(sh([ptcall, "db", "list", "--db", url, "--format", "json"]))["runs"]:
            runs_by_prog.setdefault(r["tags"]["program"], []).append(r)
        srv = Server(ptcall, url)
        try:
            for path, ref in (("/api/v1/runs", "runs"), ("/api/v1/hot?top=0", "hot"),
                              ("/api/v1/runs/1", "run"), ("/api/v1/functions/1", "function"),
                              ("/api/v1/diff?base=1&new=2", "diff")):
                st, doc = srv.api(path)
                C.check(st == 200, "PostgreSQL: %s answers" % path, str(st))
                validate(doc, ref, "PostgreSQL: " + path)
            st, doc = srv.api("/api/v1/runs/999999")
            C.check(st == 404, "PostgreSQL: an unknown run is a 404")
            for prog in runs_by_prog:
                exp = expected_hot([reports[t] for t in traces[prog]])
                d.get(srv.url + "/hot?tag=program%%3D%s&top=0" % prog)
                wait_ready(d, "PostgreSQL /hot " + prog)
                check_hot_table(cells(d, "hot"), exp, "PostgreSQL: hot functions of %s" % prog)
            shot(d, art, "postgres-hot")
            fid = srv.api("/api/v1/hot")[1]["functions"][0]["id"]
            d.get(srv.url + "/functions/%d" % fid)
            wait_ready(d, "PostgreSQL function page")
            C.check(len(cells(d, "callers") or []) + len(cells(d, "callees") or []) > 0,
                    "PostgreSQL: a function's callers and callees")
        finally:
            srv.stop()
    finally:
        pg.stop()


if __name__ == "__main__":
    main()
