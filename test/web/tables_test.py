#!/usr/bin/python3
"""The tables and charts of the web views in a real browser (docs/web.md, Tables and charts).

  tables_test.py --build BUILD --work DIR --artefacts DIR

Records real runs: bench/'s Lua and SQLite workloads (built as web_test.py builds them) and
test/web/threads.c (three threads named with pthread_setname_np), stores them with tags in a
runs database and serves it; then in headless Chromium:

  - every table sorts on a click of a head by the exact figure (checked against the API's
    numbers), both ways, and its filter box hides the rows whose name does not match;
  - figures of 1,000 and more have thousands separators, times a unit per figure;
  - the hot page is about the most recent run's program by default, its picker lists the
    programs stored (and "all programs"), its bar chart has a bar per function with the whole
    name and a value on every bar, the top one included; over all programs, the functions
    some runs did not call say so ("median over N runs, M of which did not call it");
  - the diff page has a % change per measure equal to the API's change / base, rows coloured
    better or worse with the sign beside, a legend, and the ranking choice reorders the rows;
  - `ptcall html --tag name=... --tag K=V` shows those names and tags from file://;
  - the run page's threads table equals `ptcall report --format json --by thread`'s threads
    (tid, name, calls).

Screenshots go to --artefacts. Prints 'ok'/'FAIL' per check, then 'tables: N passed, N failed'.
"""

import argparse
import json
import os
import sys
import time
import types
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import importlib.util  # noqa: E402

_spec = importlib.util.spec_from_file_location("web_test", os.path.join(HERE, "web_test.py"))
W = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(W)
C = W.C


def js_rows(d, table_id):
    """Visible rows: key, each cell's data-v (or None) and text, the row's class."""
    return d.execute_script("""
      var t = document.getElementById(arguments[0]); if (!t) return null;
      return Array.from(t.tBodies[0].rows).filter(function (r) { return !r.hidden; })
        .map(function (r) {
          return {key: r.dataset.function || r.dataset.run || r.dataset.tid || "",
                  cls: r.className,
                  v: Array.from(r.cells).map(function (c) {
                    return c.hasAttribute('data-v') ? c.getAttribute('data-v') : null; }),
                  t: Array.from(r.cells).map(function (c) { return c.textContent; })};
        });""", table_id)


def heads(d, table_id):
    return d.execute_script("return Array.from(document.getElementById(arguments[0]).tHead"
                            ".rows[0].cells).map(function (c) { return c.textContent; })",
                            table_id)


def click_head(d, table_id, col):
    d.execute_script("document.getElementById(arguments[0]).tHead.rows[0].cells[arguments[1]]"
                     ".click()", table_id, col)


def check_sort(d, table_id, col, what):
    """A click sorts ascending by data-v, a second descending; aria-sort says which."""
    click_head(d, table_id, col)
    vals = [float(r["v"][col]) for r in js_rows(d, table_id) if r["v"][col] not in (None, "")]
    aria = d.execute_script("return document.getElementById(arguments[0]).tHead.rows[0]"
                            ".cells[arguments[1]].getAttribute('aria-sort')", table_id, col)
    C.check(len(vals) > 1 and vals == sorted(vals) and aria == "ascending",
            "%s: a click on '%s' sorts by the figure, ascending" %
            (what, heads(d, table_id)[col]), str(vals[:8]))
    click_head(d, table_id, col)
    vals2 = [float(r["v"][col]) for r in js_rows(d, table_id) if r["v"][col] not in (None, "")]
    C.check(vals2 == sorted(vals2, reverse=True), "%s: a second click sorts descending" % what)
    return vals2


def type_filter(d, table_id, text):
    d.execute_script("var i = document.getElementById(arguments[0] + '-filter'); i.value = "
                     "arguments[1]; i.dispatchEvent(new Event('input'));", table_id, text)


def sep(n):
    return "{:,}".format(n)


def build_threads(build, work):
    out = os.path.join(work, "bin", "threads")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    W.sh([os.path.join(build, "bin", "ptcall-cc"), "-O2", "-g", "-pthread",
          os.path.join(HERE, "threads.c"), "-o", out])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--artefacts", required=True)
    ap.add_argument("--workloads", default="lua,sqlite")
    a = ap.parse_args()
    W.ARGS = types.SimpleNamespace(workloads=[w for w in a.workloads.split(",") if w])
    build, work, art = (os.path.abspath(p) for p in (a.build, a.work, a.artefacts))
    os.makedirs(work, exist_ok=True)
    os.makedirs(art, exist_ok=True)
    ptcall = os.path.join(build, "tools", "ptcall")
    d = W.browser()

    progs = W.build_programs(build, work)
    progs.pop("hostile", None)  # web_test.py and web_hostile.py check hostile names
    progs["threads"] = (build_threads(build, work), [[]])
    traces = W.record_all(ptcall, progs, work)
    db = os.path.join(work, "tables.db")
    for f in (db, db + "-wal", db + "-shm"):
        if os.path.exists(f):
            os.unlink(f)
    order = [p for p in ("lua", "sqlite") if p in traces] + ["threads"]  # threads: most recent
    for name in order:
        for i, t in enumerate(traces[name]):
            W.sh([ptcall, "db", "add", "--db", db, "--tag", "suite=" + name,
                  "--tag", "name=%s-%d" % (name, i + 1), t])
    runs = json.loads(W.sh([ptcall, "db", "list", "--db", db, "--format", "json"]))["runs"]
    srv = W.Server(ptcall, db)
    srv.db = db
    try:
        runs_checks(d, srv, art, runs)
        hot_checks(d, srv, art, runs)
        diff_checks(d, srv, art, runs)
        thread_checks(d, srv, art, runs, traces, ptcall)
    finally:
        srv.stop()
    html_checks(d, ptcall, work, art, traces)
    d.quit()
    print("tables: %d passed, %d failed" % (C.passed, C.failed))
    sys.exit(1 if C.failed else 0)


def runs_checks(d, srv, art, runs):
    d.get(srv.url + "/runs")
    W.wait_ready(d, "/runs")
    W.shot(d, art, "tables-runs")
    rows = js_rows(d, "runs")
    texts = {r["key"]: r["t"] for r in rows}
    big = [r for r in runs if r["totals"]["events"] >= 1000]
    C.check(big and all(texts[str(r["id"])][6] == sep(r["totals"]["events"]) for r in big),
            "runs: events have thousands separators (%s)" % (sep(big[0]["totals"]["events"])
                                                             if big else "-"))
    C.check(all(r["tags"]["name"] in texts[str(r["id"])][0] for r in runs),
            "runs: each run is shown with its name (tag name=)")
    ev = check_sort(d, "runs", 6, "runs")
    C.check(ev == sorted((float(r["totals"]["events"]) for r in runs), reverse=True),
            "runs: sorted events equal the API's")
    type_filter(d, "runs", "sqlite")
    vis = js_rows(d, "runs")
    want = [r for r in runs if "sqlite" in r["program"] or "sqlite" in r["tags"]["name"]]
    C.check(len(vis) == len(want) and len(vis) < len(runs),
            "runs: the filter box keeps %d of %d rows" % (len(want), len(runs)),
            "shown %d" % len(vis))


def hot_checks(d, srv, art, runs):
    last = max(runs, key=lambda r: (r["start_ns"] or 0, r["id"]))
    d.get(srv.url + "/hot")
    W.wait_ready(d, "/hot")
    W.shot(d, art, "tables-hot")
    opts = d.execute_script("return Array.from(document.querySelectorAll('#program-picker "
                            "option')).map(function (o) { return [o.value, o.textContent, "
                            "o.selected]; })")
    programs = sorted(set(r["program"] for r in runs))
    C.check([o[0] for o in opts] == ["*"] + programs,
            "hot: the picker lists all programs and the %d stored" % len(programs), str(opts))
    sel = [o[0] for o in opts if o[2]]
    C.check(sel == [last["program"]], "hot: the most recent run's program (%s) is chosen by "
            "default" % last["program"], str(sel))
    st, doc = srv.api("/api/v1/hot?program=" + urllib.parse.quote(last["program"]))
    rows = js_rows(d, "hot")
    C.check(rows is not None and [r["key"] for r in rows] == [str(f["id"]) for f in
                                                               doc["functions"]],
            "hot: the default page shows the API's ranking of program %s" % last["program"])

    # over every program, with the sentence where runs lack the function
    d.get(srv.url + "/hot?program=*&top=0")
    W.wait_ready(d, "/hot all")
    W.shot(d, art, "tables-hot-all")
    st, doc = srv.api("/api/v1/hot?top=0")
    rows = {r["key"]: r for r in js_rows(d, "hot")}
    n = doc["nruns"]
    bad = []
    lacking = 0
    for f in doc["functions"]:
        note = rows[str(f["id"])]["t"][-1]
        want = ("median over %d runs, %d of which did not call it" % (n, n - f["runs"])
                if f["runs"] < n else "")
        lacking += f["runs"] < n
        if (want and not note.startswith(want)) or (not want and note):
            bad.append((f["name"], note, want))
    C.check(lacking and not bad, "hot over all programs: the %d functions some runs did not "
            "call say so, the others do not" % lacking, str(bad[:3]))
    C.check(d.execute_script("return !!document.getElementById('median-note')"),
            "hot over all programs: a sentence says the medians count those runs as 0")
    vals = check_sort(d, "hot", 8, "hot")
    C.check(vals == sorted((float(f["self"]["sum"]) for f in doc["functions"]), reverse=True),
            "hot: sorted self sums equal the API's")
    # the chart: every bar named in full and labelled with its value, the top one included
    bars = d.execute_script("""return Array.from(document.querySelectorAll('#hot-chart g.hbar'))
      .map(function (g) { return [g.querySelector('text.name').textContent,
                                  g.querySelector('text.val').textContent]; });""")
    top = doc["functions"][:20]
    C.check(len(bars) == len(top) and [b[0] for b in bars] == [f["name"] for f in top],
            "hot chart: %d horizontal bars, each with the function's whole name" % len(top))
    C.check(bars and all(b[1] and any(u in b[1] for u in (" ns", " \u00b5s", " ms", " s"))
                         for b in bars),
            "hot chart: every bar has its value with a unit (the top one: %s)" %
            (bars[0][1] if bars else "-"))
    longest = max((f["name"] for f in doc["functions"]), key=len)
    shown = [r["t"][1] for r in rows.values()]
    C.check(longest in shown, "hot: the longest name (%d characters) is shown whole" %
            len(longest))
    times = [r["t"][8] for r in rows.values()]
    C.check(any("," in t or "\u00b5s" in t or " ms" in t for t in times),
            "hot: times have units and separators", str(times[:4]))
    type_filter(d, "hot", "lua")
    vis = js_rows(d, "hot")
    C.check(0 < len(vis) < len(rows) and all("lua" in r["t"][1].lower() for r in vis),
            "hot: the filter box keeps the %d functions whose name holds 'lua'" % len(vis))


def diff_checks(d, srv, art, runs):
    sq = [r for r in runs if r["tags"]["suite"] == "sqlite"] or \
         [r for r in runs if r["tags"]["suite"] == "lua"]
    a, b = sq[0]["id"], sq[1]["id"]
    d.get(srv.url + "/diff?base=%d&new=%d" % (a, b))
    W.wait_ready(d, "/diff")
    W.shot(d, art, "tables-diff")
    st, doc = srv.api("/api/v1/diff?base=%d&new=%d" % (a, b))
    api = {str(f["id"]): f for f in doc["functions"]}
    rows = js_rows(d, "diff")
    h = heads(d, "diff")
    C.check("total % change" in h and "calls % change" in h, "diff: % change columns", str(h))
    col = h.index("total % change")
    bad = []
    for r in rows:
        f = api[r["key"]]
        t = f["total"]
        want = 100.0 * t["change"] / t["base"] if t and t["base"] else None
        got = None if r["v"][col] in (None, "") else float(r["v"][col])
        if (want is None) != (got is None) or (want is not None and abs(want - got) > 1e-6):
            bad.append((f["name"], got, want))
        cls = "better" if t and t["change"] < 0 else "worse" if t and t["change"] > 0 else ""
        if cls != r["cls"]:
            bad.append((f["name"], r["cls"], cls))
        if t and t["base"] and t["change"]:
            sign = "+" if t["change"] > 0 else "-"
            if not r["t"][col].startswith(sign) or "%" not in r["t"][col]:
                bad.append((f["name"], r["t"][col]))
    C.check(rows and not bad, "diff: %d rows' total %% change equals the API's change / base, "
            "coloured better/worse with the sign and %%" % len(rows), str(bad[:3]))
    C.check(d.execute_script("var l = document.getElementById('diff-legend'); return !!l && "
                             "!!l.querySelector('.better') && !!l.querySelector('.worse')"),
            "diff: a legend says what the colours mean")
    order_abs = [r["key"] for r in rows]
    want_abs = sorted(api, key=lambda k: -abs((api[k]["total"] or {}).get("change") or 0))
    C.check([abs((api[k]["total"] or {}).get("change") or 0) for k in order_abs] ==
            [abs((api[k]["total"] or {}).get("change") or 0) for k in want_abs],
            "diff: ranked by the largest change of total by default")
    d.execute_script("var s = document.getElementById('diff-rank'); s.value = 'calls.pct'; "
                     "s.dispatchEvent(new Event('change'));")
    end = time.time() + 30
    while time.time() < end and "rank=calls.pct" not in d.current_url:
        time.sleep(0.1)
    time.sleep(0.5)
    W.wait_ready(d, "/diff rank")
    W.shot(d, art, "tables-diff-pct")
    st, doc2 = srv.api("/api/v1/diff?base=%d&new=%d&sort=calls" % (a, b))
    rows2 = js_rows(d, "diff")
    ccol = heads(d, "diff").index("calls % change")

    def key(r):
        v = r["v"][ccol]
        if v in (None, ""):
            return float("inf") if r["t"][ccol] == "new" else 0.0
        return abs(float(v))
    ks = [key(r) for r in rows2]
    C.check("rank=calls.pct" in d.current_url and ks == sorted(ks, reverse=True) and
            [r["key"] for r in rows2] != order_abs,
            "diff: ranking by %% change of calls reorders the rows (largest first)", str(ks[:6]))
    check_sort(d, "diff", ccol, "diff")


def thread_checks(d, srv, art, runs, traces, ptcall):
    r = [x for x in runs if x["tags"]["suite"] == "threads"][0]
    rep = json.loads(W.sh([ptcall, "report", "--format", "json", "--by", "thread",
                           traces["threads"][0]]))
    want = sorted((g["tid"], g["name"], g["calls"]) for g in rep["groups"])
    d.get(srv.url + "/runs/%d" % r["id"])
    W.wait_ready(d, "run page")
    end = time.time() + 20
    while time.time() < end and not d.execute_script(
            "return !!document.getElementById('run-threads') || "
            "!!document.getElementById('threads-error')"):
        time.sleep(0.1)
    W.shot(d, art, "tables-run-threads")
    rows = js_rows(d, "run-threads") or []
    h = heads(d, "run-threads") if rows else []
    got = sorted((int(x["v"][h.index("tid")]), x["t"][h.index("name")],
                  int(x["v"][h.index("calls")])) for x in rows) if rows else []
    C.check(got == want and len(want) == 4, "run page: the threads table equals report's "
            "threads (tid, name, calls): %s" % [w[1] for w in want], "%s != %s" % (got, want))
    st, tdoc = srv.api("/api/v1/runs/%d/threads" % r["id"])
    W.schema_validator()(tdoc, "threads", "/api/v1/runs/ID/threads")
    C.check(rows and all(("worker-%d" % k) in [g[1] for g in got] for k in range(3)),
            "run page: the threads' names set by pthread_setname_np are shown")
    # a run whose trace file is gone: the flame graph's 410, said on the page
    gone = os.path.join(os.path.dirname(traces["threads"][0]), "gone.ptc")
    exe = os.path.join(os.path.dirname(os.path.dirname(gone)), "bin", "threads")
    if os.path.exists(gone):
        os.unlink(gone)
    W.sh([ptcall, "record", "-q", "--backend", "soft", "-o", gone, "--", exe])
    W.sh([ptcall, "db", "add", "--db", srv.db, "--tag", "name=gone", gone])
    gid = max(x["id"] for x in json.loads(W.sh([ptcall, "db", "list", "--db", srv.db, "--format",
                                                "json"]))["runs"])
    os.unlink(gone)
    st, gdoc = srv.api("/api/v1/runs/%d/threads" % gid)
    C.check(st == 410 and "is gone" in gdoc.get("error", ""), "threads of a run whose trace "
            "file is gone: 410, the flame graph's message", "%s %s" % (st, gdoc))
    d.get(srv.url + "/runs/%d" % gid)
    W.wait_ready(d, "run page of a gone trace")
    end = time.time() + 20
    while time.time() < end and not d.execute_script(
            "return !!document.getElementById('threads-error')"):
        time.sleep(0.1)
    C.check(d.execute_script("var e = document.getElementById('threads-error'); return !!e && "
                             "e.dataset.status === '410'"),
            "run page of a gone trace: the threads panel says why (410)")
    d.get(srv.url + "/runs/%d" % r["id"])
    W.wait_ready(d, "run page again")
    rf = js_rows(d, "run-functions")
    C.check(rf and any(x["t"][2] == sep(int(x["v"][2])) and int(x["v"][2]) >= 1000 for x in rf),
            "run page: calls have thousands separators")


def html_checks(d, ptcall, work, art, traces):
    files = traces["lua" if "lua" in traces else "sqlite"] + traces["threads"]
    W.console_errors(d)  # the server pages' log (the gone trace's 410s) is read and dropped
    out = os.path.join(work, "tables.html")
    W.sh([ptcall, "html", "--tag", "name=my-run", "--tag", "build=release-7"] + files +
         ["-o", out])
    bad = W.subprocess.run([ptcall, "html", "--tag", "name=a", "--tag", "name=b", files[0], "-o",
                            os.path.join(work, "twice.html")], capture_output=True, text=True)
    C.check(bad.returncode == 2 and "given twice" in bad.stderr and
            not os.path.exists(os.path.join(work, "twice.html")),
            "ptcall html --tag name= twice: refused with one line, no file",
            "%d %s" % (bad.returncode, bad.stderr))
    bad = W.subprocess.run([ptcall, "html", "--tag", "novalue", files[0], "-o",
                            os.path.join(work, "novalue.html")], capture_output=True, text=True)
    C.check(bad.returncode == 2 and "--tag" in bad.stderr, "ptcall html --tag without =VALUE: "
            "refused as db add refuses it", bad.stderr.strip())
    d.get("file://" + out + "#/runs")
    d.refresh()
    W.wait_ready(d, "html runs")
    W.shot(d, art, "tables-html-runs")
    rows = js_rows(d, "runs") or []
    C.check(len(rows) == len(files) and all("my-run" in r["t"][0] and "build=release-7" in
                                            r["t"][9] for r in rows),
            "ptcall html --tag: the runs are named my-run and tagged build=release-7",
            str([r["t"][0] for r in rows]))
    d.get("file://" + out + "#/hot")
    d.refresh()
    W.wait_ready(d, "html hot")
    W.shot(d, art, "tables-html-hot")
    sel = d.execute_script("var s = document.getElementById('program-picker'); return s ? "
                           "s.value : null")
    C.check(sel == "threads", "ptcall html: the hot page shows the last run's program (%s)" %
            sel)
    hot = js_rows(d, "hot") or []
    C.check(hot and all(r["t"][1] in ("main", "work", "leaf", "thread_main", "pthread_join")
                    for r in hot),  # pthread_join: the runtime's [blocking] pseudo-function
            "ptcall html: its hot table holds that program's functions only",
            str([r["t"][1] for r in hot][:6]))
    bad = W.console_errors(d)
    C.check(not bad, "ptcall html: no console errors", str(bad[:2]))


if __name__ == "__main__":
    main()
