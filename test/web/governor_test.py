#!/usr/bin/python3
"""Functions a budget's governor demoted, on the web pages (issue 28; docs/web.md, /runs/ID).

  governor_test.py --build BUILD --work DIR --artefacts DIR

Builds test/e2e/programs/governor_prog.c with ptcall-cc and records it within a budget
(`--overhead 10 --pilot 100ms`): the pilot traces its burst(), then the governor demotes it
(traced until then, counted after). `ptcall report --format json` says which functions were
demoted and how many demotions there were; the run is stored and served. Then, in headless
Chromium:

  - the run page: the `governor` line among the run's facts gives report's numbers; the state
    column says `demoted` for exactly report's demoted functions (its title says what that
    means) and `traced` for the others; the call graph's node of burst says `demoted`;
  - the run's timeline: its note says the budget and how many functions were demoted;
  - burst's function page: the run's self and total say `(until demoted)`;
  - `ptcall html` of the trace from file:// shows the same run page.

Screenshots go to --artefacts. Prints 'ok' / 'FAIL' per check, then a summary line.
"""

import argparse
import importlib.util
import json
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def load_module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


W = load_module("web_test", os.path.join(HERE, "web_test.py"))
C = W.C
sh = W.sh


def wait_for(d, script, what, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        v = d.execute_script(script)
        if v:
            return v
        time.sleep(0.1)
    C.fail("%s: not within %d s" % (what, timeout))
    return None


# the run page's facts and its functions' state cells, as the page shows them
PAGE = """
  var info = {}, dts = document.querySelectorAll('#run-info dt');
  dts.forEach(function (dt) { info[dt.textContent] = dt.nextElementSibling.textContent; });
  var t = document.getElementById('run-functions'), states = {};
  if (t) Array.from(t.tBodies[0].rows).forEach(function (r) {
    var c = r.querySelector('td.state');
    states[r.cells[0].textContent] = [c ? c.textContent : null, c ? c.title : null];
  });
  return [info, states];"""


def check_run_page(d, demoted, ngov, rep_names, what):
    """The governor line and the state column of the run page d shows."""
    got = d.execute_script(PAGE)
    info, states = got if got else ({}, {})
    line = info.get("governor", "")
    C.check(line.startswith("%d function(s) demoted in %d demotion(s)" % (len(demoted), ngov)),
            "%s: the facts' governor line gives report's %d demoted function(s) and %d "
            "demotion(s)" % (what, len(demoted), ngov), repr(line))
    wrong = {n: s for n, s in states.items()
             if s[0] != ("demoted" if n in demoted else "traced")}
    C.check(set(states) == rep_names and not wrong,
            "%s: the state column says demoted for %s, traced for the %d others" %
            (what, ", ".join(sorted(demoted)), len(states) - len(demoted)),
            "%s (functions %s)" % (wrong, sorted(states)))
    C.check(all("governor" in (states.get(n) or ["", ""])[1] for n in demoted),
            "%s: a demoted cell's title says what demoted means" % what,
            str({n: states.get(n) for n in demoted}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--artefacts", required=True)
    a = ap.parse_args()
    build, work, art = (os.path.abspath(p) for p in (a.build, a.work, a.artefacts))
    os.makedirs(work, exist_ok=True)
    os.makedirs(art, exist_ok=True)
    ptcall = os.path.join(build, "tools", "ptcall")
    exe = os.path.join(work, "governor_prog")
    sh([os.path.join(build, "bin", "ptcall-cc"), "-O2", "-pthread",
        os.path.join(ROOT, "test", "e2e", "programs", "governor_prog.c"), "-o", exe])
    trace = os.path.join(work, "governed.ptc")
    sh([ptcall, "record", "-q", "-o", trace, "--overhead", "10", "--pilot", "100ms", "--", exe,
        "400", "1500", "1"])
    rep = json.loads(sh([ptcall, "report", "--format", "json", "--top", "0", trace]))
    demoted = {f["name"] for f in rep["functions"] if f.get("demoted")}
    ngov = sum(1 for b in rep["budgets"] if b["source"] == "governor")
    names = {f["name"] for f in rep["functions"]}
    if not C.check("burst" in demoted and ngov >= 1,
                   "report: the governor demoted burst (%d demotion(s))" % ngov, str(demoted)):
        return 1

    db = os.path.join(work, "governed.db")
    for f in (db, db + "-wal", db + "-shm"):
        if os.path.exists(f):
            os.unlink(f)
    sh([ptcall, "db", "add", "--db", db, trace])
    srv = W.Server(ptcall, db)
    d = W.browser()
    try:
        _, doc = srv.api("/api/v1/runs/1")
        burst = [f["id"] for f in doc["functions"] if f["name"] == "burst"]
        d.get(srv.url + "/runs/1")
        W.wait_ready(d, "run page")
        check_run_page(d, demoted, ngov, names, "run page")
        # the call graph is laid out by Graphviz after the page is filled (callgraph.js)
        label = wait_for(d, "var g = Array.from(document.querySelectorAll('#callgraph g.node'))"
                         ".find(function (n) { return /^burst/.test(n.textContent.trim()); });"
                         " return g ? g.textContent : null", "the call graph's node of burst")
        C.check(label is not None and "demoted: times until then" in label,
                "run page: the call graph's node of burst says demoted", repr(label))
        others = d.execute_script("return Array.from(document.querySelectorAll('#callgraph "
                                  "g.node')).filter(function (n) { return /demoted/.test("
                                  "n.textContent); }).length")
        C.check(others == len(demoted), "run page: no other node says demoted (%d)" % others)
        W.shot(d, art, "governor-run")
        errs = W.console_errors(d)
        C.check(not errs, "run page: no console errors", str(errs))

        # the timeline says what is not on it, or only in part
        d.get(srv.url + "/runs/1/timeline")
        note = wait_for(d, "var p = document.getElementById('timeline-budget'); "
                        "return p && !p.hidden ? p.textContent : null", "the timeline's budget note")
        C.check(note is not None and "overhead 10 % of CPU time" in note and
                "%d function(s) demoted by the budget's governor" % len(demoted) in note,
                "timeline: its note says the budget and the %d demoted function(s)" % len(demoted),
                repr(note))
        W.wait_ready(d, "the timeline's tracks")
        W.shot(d, art, "governor-timeline")

        d.get(srv.url + "/functions/%d" % (burst[0] if burst else 0))
        W.wait_ready(d, "burst's function page")
        rows = d.execute_script("var t = document.getElementById('function-runs'); return t ? "
                                "Array.from(t.tBodies[0].rows).map(function (r) { return "
                                "[r.dataset.run, r.cells[4].textContent, r.cells[5].textContent,"
                                " r.className]; }) : null") or []
        C.check(len(rows) == 1 and rows[0][0] == "1" and
                all(re.search(r"\d.* \(until demoted\)$", c) for c in rows[0][1:3]) and
                "demoted" in rows[0][3],
                "function page: burst's self and total in the run say (until demoted)", str(rows))
        W.shot(d, art, "governor-function")

        html = os.path.join(work, "governed.html")
        sh([ptcall, "html", "-o", html, trace])
        d.get("file://" + html + "#/runs/1")
        W.wait_ready(d, "html file run page")
        check_run_page(d, demoted, ngov, names, "ptcall html (file://)")
        W.shot(d, art, "governor-html")
    finally:
        srv.stop()
        d.quit()
    print("web-governor: %d passed, %d failed" % (C.passed, C.failed))
    return 1 if C.failed else 0


if __name__ == "__main__":
    sys.exit(main())
