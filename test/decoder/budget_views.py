#!/usr/bin/env python3
"""Every view of a trace recorded within a budget (issue 28): which functions were traced,
counted or neither, the budget and its outcome, exact calls, and a pilot's mid-stack start.

The traces are made from real recordings of a real program compiled by ptcall-cc: a soft trace
of events (`record --only main --only run --only work`, small buffers so that the thread has
many event chunks) and a `record --counts` run of the same binary. budget_trace.py turns the
first into what a run with a 200 ms pilot writes: the thread's first event chunks are left out
(its events then begin mid-stack, inside main, run and work, as after a pilot), and the chunks
such a run adds are put in: MODULE_COUNTED (tiny counted; helper neither traced nor counted),
a COUNTS segment flagged PILOT (every candidate's calls before the events began), BUDGET
(source PILOT, its tsc the first kept event chunk's) and a COUNTS END segment (tiny's other
calls). The chunks are encoded as docs/trace-format.md 2.5 states them; the end-to-end check
on real mixed traces comes with the runtime that writes them (MIXED). Damaged forms (a
MODULE_COUNTED naming a module the process did not announce, a BUDGET shorter than its header,
a BUDGET whose note does not end with a NUL) must give a one-line error, not a crash and not a
silent skip. Last, a real recording whose budget's governor demoted a function (governor_prog,
`record --overhead 10 --pilot 100ms`) through db add (schema version 7), the web API (run,
function, call graph, against docs/schema/web*.schema.json), the pages' scripts and ptcall
html: each says which functions were demoted and how many demotions there were."""
import argparse
import csv
import io
import json
import os
import sqlite3
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import budget_trace as bt  # noqa: E402

PROG = r"""
#include <stdio.h>
#include <stdlib.h>
static volatile unsigned sink;
__attribute__((noinline)) static unsigned tiny(unsigned x) { return x * 2654435761u >> 7; }
__attribute__((noinline)) static void helper(unsigned x) { sink += x; }
__attribute__((noinline)) static void work(unsigned i)
{
    unsigned s = 0;
    for (unsigned k = 0; k < 20; k++)
        s += tiny(i + k);
    if (i % 100 == 0)
        helper(s);
    sink += s;
}
__attribute__((noinline)) static void run(unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        work(i);
}
int main(int argc, char **argv)
{
    run(argc > 1 ? (unsigned)atoi(argv[1]) : 20000);
    printf("%u\n", sink);
    return 0;
}
"""

NOTE = "pilot of 200 ms: 3 of 4 candidates traced, predicted 4 % <= 5 %"
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)


def run(args, want=0, env=None):
    r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if want is not None and r.returncode != want:
        sys.exit("%s: exit %d (want %d)\n%s%s" % (" ".join(args), r.returncode, want, r.stdout, r.stderr))
    return r


def counts_calls(path):
    """(module_id, identity, calls by function index) of a counting run's one COUNTS chunk."""
    for typ, _f, _pid, _tid, _seq, p in bt.ptc_chunks.chunks(path):
        if typ == bt.COUNTS:
            _seg, _flags, nmod, _lsize, _tsc, _res = struct.unpack_from("<IIIIQQ", p)
            assert nmod == 1, "one module expected"
            mid, nf, ident = struct.unpack_from("<IIQ", p, 32)
            return mid, ident, list(struct.unpack_from("<%dQ" % nf, p, 48))
    sys.exit("%s: no COUNTS chunk" % path)


def web_get(base, path):
    import urllib.request
    with urllib.request.urlopen(base + path, timeout=30) as resp:
        return json.load(resp) if path.startswith("api/") else resp.read().decode()


def governed(a, P, w):
    """A budget's governor (schema version 7), on a real recording: governor_prog (the e2e
    test's program) with --overhead 10 --pilot 100ms, whose burst() the pilot traces and the
    governor demotes. db add, the run page's API, the function page's and the call graph's,
    the page's scripts and ptcall html say which functions it demoted and how often."""
    import jsonschema
    import re
    exe = w("governor_prog")
    run([a.cc, "-O2", "-pthread", os.path.join(a.src, "test", "e2e", "programs", "governor_prog.c"),
         "-o", exe])
    run([P, "record", "-q", "-o", w("gov.ptc"), "--overhead", "10", "--pilot", "100ms", "--", exe, "400",
         "1500", "1"])
    rep = json.loads(run([P, "report", "--format", "json", "--top", "0", w("gov.ptc")]).stdout)
    st = rep.get("function_states") or {}
    ngov = sum(1 for b in rep.get("budgets", []) if b["source"] == "governor")
    demoted = sorted(f["name"] for f in rep["functions"] if f.get("demoted"))
    if not (st.get("demoted", 0) >= 1 and ngov >= 1 and "burst" in demoted):
        check(False, "governed: report says the governor demoted burst: %s, %d governor budget(s)" % (st, ngov))
        return
    dbp = w("gov.db")
    for f in (dbp, dbp + "-wal", dbp + "-shm"):
        if os.path.exists(f):
            os.unlink(f)
    run([P, "db", "add", "--db", dbp, w("gov.ptc")])
    con = sqlite3.connect(dbp)
    row = con.execute("SELECT demoted_functions, budget_demotions, budget_source FROM runs").fetchall()
    check(row == [(len(demoted), ngov, "pilot")],
          "db (governed): demoted_functions %d, budget_demotions %d, the first budget the pilot's: %s"
          % (len(demoted), ngov, row))
    rf = {n: (st_, d_) for n, st_, d_ in con.execute(
        "SELECT f.name, r.state, r.demoted FROM run_functions r JOIN functions f ON f.id = r.function_id")}
    check(rf and all(v == ("traced", 1 if n in demoted else 0) for n, v in rf.items()),
          "db (governed): each function traced, demoted 1 for %s only: %s" % (demoted, rf))
    con.close()
    with open(os.path.join(a.src, "docs", "schema", "web.schema.json")) as f:
        web = json.load(f)
    with open(os.path.join(a.src, "docs", "schema", "web-callgraph.schema.json")) as f:
        cg_schema = json.load(f)

    def valid(doc, ref, what):
        sub = {"$schema": web["$schema"], "$defs": web["$defs"], "$ref": "#/$defs/" + ref}
        errs = [e.message for e in jsonschema.Draft202012Validator(sub).iter_errors(doc)]
        check(not errs, "%s is valid against web.schema.json#/$defs/%s: %s" % (what, ref, errs[:3]))

    d_ = web["$defs"]
    check("demoted_functions" in d_["run_object"]["properties"] and
          "budget_demotions" in d_["run_object"]["properties"] and
          "demoted" in d_["run"]["allOf"][1]["properties"]["functions"]["items"]["properties"] and
          "demoted" in d_["function"]["allOf"][1]["properties"]["runs"]["items"]["properties"] and
          "demoted" in json.dumps(cg_schema), "the web schemas name demoted_functions, budget_demotions, demoted")
    sv = subprocess.Popen([P, "serve", "--db", dbp, "--listen", "127.0.0.1:0"], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    try:
        m = re.search(r"http://[0-9.:]+/", sv.stdout.readline() or "")
        check(m is not None, "ptcall serve (governed) says its URL")
        if not m:
            return
        base = m.group(0)
        doc = web_get(base, "api/v1/runs/1")
        valid(doc, "run", "/api/v1/runs/1 (governed)")
        r = doc["run"]
        check(r.get("demoted_functions") == len(demoted) and r.get("budget_demotions") == ngov,
              "web (governed): the run's demoted_functions and budget_demotions: %s, %s"
              % (r.get("demoted_functions"), r.get("budget_demotions")))
        fns = {f["name"]: f for f in doc["functions"]}
        check(fns and all(f.get("demoted") is (n in demoted) and f["state"] == "traced" for n, f in fns.items()),
              "web (governed): functions[].demoted true for %s only, state traced" % demoted)
        b = fns.get("burst", {})
        pts = web_get(base, "api/v1/functions/%d" % b.get("id", 0))
        valid(pts, "function", "/api/v1/functions/%d (governed burst)" % b.get("id", 0))
        check([(p["run"], p["demoted"]) for p in pts["runs"]] == [(1, True)],
              "web (governed): the function page's run of burst says demoted: %s" % pts["runs"])
        cg = web_get(base, "api/v1/runs/1/callgraph")
        errs = [e.message for e in jsonschema.Draft202012Validator(cg_schema).iter_errors(cg)]
        nodes = {n["name"]: n for n in cg["nodes"]}
        check(not errs and nodes.get("burst", {}).get("demoted") is True and
              all(n.get("demoted") is False for k, n in nodes.items() if k not in demoted),
              "web (governed): the call graph's nodes say demoted (burst only), valid: %s" % errs[:3])
        js = web_get(base, "static/app.js")
        check("r.demoted_functions" in js and "r.budget_demotions" in js and "f.demoted" in js and
              "p.demoted" in js and '"demoted"' in js,
              "web (governed): the run page shows the governor's line and 'demoted' in its state column, "
              "the function page the demoted runs")
        check("n.demoted" in web_get(base, "static/callgraph.js"), "web (governed): the call graph labels demoted")
    finally:
        sv.terminate()
        sv.wait()
    run([P, "html", "-o", w("gov.html"), w("gov.ptc")])
    page = open(w("gov.html"), encoding="utf-8").read()
    check('"demoted_functions": %d' % len(demoted) in page and '"budget_demotions": %d' % ngov in page and
          '"demoted": true' in page, "html (governed): the page's data says the demoted functions")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ptcall", required=True)
    ap.add_argument("--cc", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--src", required=True)
    a = ap.parse_args()
    P = a.ptcall
    os.makedirs(a.work, exist_ok=True)
    w = lambda n: os.path.join(a.work, n)  # noqa: E731
    with open(w("prog.c"), "w") as f:
        f.write(PROG)
    run([a.cc, "-O1", "-o", w("prog"), w("prog.c")])
    env = dict(os.environ, PTCALL_BUFFER="4K")
    run([P, "record", "-q", "-o", w("ev.ptc"), "--only", "main", "--only", "run", "--only", "work",
         w("prog")], env=env)
    run([P, "record", "-q", "--counts", "-o", w("cnt.ptc"), w("prog")])

    mods = [p for t, _f, _pid, _tid, _s, p in bt.ptc_chunks.chunks(w("ev.ptc")) if t == bt.MODULE]
    mid, ident, names = bt.module_funcs(mods[0])
    cmid, cident, cnt = counts_calls(w("cnt.ptc"))
    check(cident == ident and len(cnt) == len(names), "the two recordings are of one binary")
    idx = {n: i for i, n in enumerate(names)}
    want = {n: cnt[i] for n, i in idx.items()}
    check(want["tiny"] == 400000 and want["work"] == 20000, "the counting run's counts: %s" % want)

    # entries left in the events once the first 20 event chunks are gone
    bt.rewrite(w("ev.ptc"), w("cut.ptc"), 20, lambda c, t: [], lambda c, t: [])
    cut = json.loads(run([P, "report", "--format", "json", "--top", "0", w("cut.ptc")]).stdout)
    entries = {f["name"]: f["calls"] for f in cut["functions"]}
    check(cut["totals"]["unmatched"] >= 2, "the cut trace begins mid-stack (exits of main and run "
          "unmatched without a pilot): %d" % cut["totals"]["unmatched"])
    traced = ["main", "run", "work"]
    tiny_pilot = 1234
    pilot = [0] * len(names)
    for n in traced:
        pilot[idx[n]] = want[n] - entries.get(n, 0)
    pilot[idx["tiny"]] = tiny_pilot
    rest = [0] * len(names)
    rest[idx["tiny"]] = want["tiny"] - tiny_pilot

    def after_armed(_chunks, tsc):
        return [(bt.MODULE_COUNTED, bt.module_counted(mid, len(names), [idx["tiny"]])),
                (bt.COUNTS, bt.counts(0, bt.COUNTS_PILOT, tsc, mid, ident, pilot)),
                (bt.BUDGET, bt.budget(tsc, NOTE, calls_total=sum(pilot), calls_traced=sum(pilot) - tiny_pilot))]

    def before_end(_chunks, tsc):
        return [(bt.COUNTS, bt.counts(1, bt.COUNTS_END, tsc + 1, mid, ident, rest))]

    bt.rewrite(w("ev.ptc"), w("mixed.ptc"), 20, after_armed, before_end)

    # ---- report --format json: states, exact calls, no times for counted, the budget
    rep = json.loads(run([P, "report", "--format", "json", "--top", "0", w("mixed.ptc")]).stdout)
    fn = {f["name"]: f for f in rep["functions"]}
    for n in traced + ["tiny"]:
        check(n in fn and fn[n]["calls"] == want[n],
              "%s: exact calls %d (counting run) in the mixed trace: %s" % (n, want[n], fn.get(n, {}).get("calls")))
    for n in traced:
        check(fn.get(n, {}).get("state") == "traced", "%s is traced: %s" % (n, fn.get(n, {}).get("state")))
        check((fn.get(n, {}).get("total") or 0) > 0, "%s has a time: %s" % (n, fn.get(n, {}).get("total")))
    t = fn.get("tiny", {})
    check(t.get("state") == "counted", "tiny is counted: %s" % t.get("state"))
    check(t.get("total", 0) is None and t.get("self", 0) is None, "tiny, counted, has no times (null, never 0)")
    check("helper" not in fn and "helper" in rep.get("not_traced", []),
          "helper, neither traced nor counted, is in not_traced: %s" % rep.get("not_traced"))
    check("tiny" not in rep.get("not_traced", []), "a counted function is not in not_traced")
    tot = rep["totals"]
    check(tot.get("counted_calls") == sum(pilot) + sum(rest),
          "totals.counted_calls = the COUNTS segments' calls: %s" % tot.get("counted_calls"))
    check(tot["unmatched"] == 0 and tot["entered_before"] >= 2,
          "after the pilot, main and run were entered before the events began: entered_before %d, "
          "unmatched %d" % (tot["entered_before"], tot["unmatched"]))
    check(fn.get("main", {}).get("total", 0) >= fn.get("run", {}).get("total", 1) > 0,
          "main (entered before) holds run's time: times from the BUDGET's tsc")
    b = rep.get("budget") or {}
    check(b.get("kind") == "overhead" and b.get("source") == "pilot" and b.get("outcome") == "ok" and
          b.get("note") == NOTE and abs(b.get("limit", 0) - 0.05) < 1e-12 and b.get("pilot_ns") == 200000000,
          "the budget object: %s" % b)
    st = rep.get("function_states") or {}
    check(st.get("traced") == 3 and st.get("counted") == 1 and st.get("neither") == 1 and
          st.get("calls_counted") == tot.get("counted_calls"),
          "function_states: %s" % st)

    # the JSON against its published schema (docs/schema/report.schema.json)
    import jsonschema
    with open(os.path.join(a.src, "docs", "schema", "report.schema.json")) as f:
        schema = json.load(f)
    for what, doc in (("mixed", rep), ("cut", cut)):
        errs = [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(doc)]
        check(not errs, "report of the %s trace is valid against report.schema.json: %s" % (what, errs[:3]))
    check(all("state" in f["properties"] for f in [schema["$defs"]["function"]]), "the schema names state")

    # ---- report table: the budget lines, the state column, no time for a counted function
    table = run([P, "report", "--top", "0", w("mixed.ptc")]).stdout
    check("# budget: overhead 5 % of CPU time" in table and "ok, 3 of 4 candidates traced" in table,
          "the table's budget line:\n" + table)
    check("# budget note: " + NOTE in table, "the table's note line")
    check("# functions: 3 traced, 1 counted (exact calls, no times), 1 neither" in table,
          "the table's functions line")
    rows = {ln.split()[-2]: ln for ln in table.splitlines() if ln.endswith("[prog]")}
    check("counted" in rows.get("tiny", "") and " ns" not in rows.get("tiny", " ns") and
          "-" in rows.get("tiny", ""), "tiny's row: calls, '-' for times, 'counted': %r" % rows.get("tiny"))
    check("traced" in rows.get("work", ""), "work's row says traced: %r" % rows.get("work"))
    check("how often they ran is not known" not in table or "other 1 were" in table,
          "the selection line does not call the counted function unknown")

    check("calls entered during a budget's pilot" in table, "the table says the pilot's open calls")

    # ---- graph and calls: comment lines; a counted node has no time
    graph = run([P, "graph", w("mixed.ptc")]).stdout
    check("// budget: overhead 5 %" in graph and "// functions: 3 traced, 1 counted" in graph,
          "graph's comment lines")
    check(any("tiny" in ln and "counted" in ln and " ns" not in ln for ln in graph.splitlines()),
          "graph: tiny's node says counted, no time")
    calls = run([P, "calls", w("mixed.ptc")]).stdout
    check("# note: budget: overhead 5 %" in calls and "# note: functions: 3 traced, 1 counted" in calls,
          "calls' note lines")

    # ---- export: the SVG flame graph says it under its frames; every format on stderr
    r = run([P, "export", "--format", "svg", "-o", w("flame.svg"), w("mixed.ptc")])
    import xml.etree.ElementTree as ET
    notes = [t.text or "" for t in ET.parse(w("flame.svg")).getroot().iter("{http://www.w3.org/2000/svg}text")
             if t.get("class") == "budget-note"]
    check(notes and "1 counted, not traced: not in this graph" in notes[0] and NOTE in notes[0],
          "svg: the budget note: %s" % notes)
    check("ptcall export: note: budget: overhead 5 %" in r.stderr, "export says the budget on stderr")
    r = run([P, "export", "--format", "folded", "-o", w("flame.folded"), w("mixed.ptc")])
    check("ptcall export: note: functions: 3 traced, 1 counted" in r.stderr and
          all(not ln.startswith("#") for ln in open(w("flame.folded"))),
          "folded: the note on stderr, the file only stacks")

    # ---- several runs: a counted function's exact calls are summed, not dropped as unknown
    multi = json.loads(run([P, "report", "--format", "json", "--top", "0", w("mixed.ptc"), w("mixed.ptc")]).stdout)
    mf = {f["name"]: f for f in multi["functions"]}
    check(mf.get("tiny", {}).get("calls") == 2 * want["tiny"],
          "report of two runs: tiny's calls summed: %s" % mf.get("tiny", {}).get("calls"))

    # ---- csv: a state column
    rd = list(csv.DictReader(io.StringIO(run([P, "report", "--format", "csv", "--top", "0", w("mixed.ptc")]).stdout)))
    cs = {r["function"]: r for r in rd}
    check(cs.get("tiny", {}).get("state") == "counted" and cs.get("tiny", {}).get("total") == "",
          "csv: tiny counted, no total: %s" % cs.get("tiny"))

    # ---- db add (schema version 6): the state per function, the budget per run
    dbp = w("runs.db")
    if os.path.exists(dbp):
        os.unlink(dbp)
    run([P, "db", "add", "--db", dbp, w("mixed.ptc"), w("ev.ptc")])
    con = sqlite3.connect(dbp)
    check(con.execute("SELECT max(version) FROM schema_version").fetchone()[0] >= 6, "db schema version 6")
    runs = con.execute("SELECT counted_functions, counted_calls, budget_kind, budget_source, budget_limit, "
                       "budget_outcome, budget_note, budget_pilot_ns, budget_candidates, budget_traced "
                       "FROM runs ORDER BY id").fetchall()
    check(runs[0] == (1, tot.get("counted_calls"), "overhead", "pilot", 0.05, "ok", NOTE, 200000000, 4, 3),
          "db: the mixed run's budget and counted functions: %s" % (runs[0],))
    check(runs[1][:2] == (0, 0) and runs[1][2:] == (None,) * 8, "db: a run without a budget: %s" % (runs[1],))
    rf = {n: (c, t_, s_) for n, c, t_, s_ in con.execute(
        "SELECT f.name, r.calls, r.total, r.state FROM run_functions r JOIN functions f ON f.id = r.function_id "
        "WHERE r.run_id = 1")}
    check(rf.get("tiny") == (want["tiny"], None, "counted") and rf.get("work", (0, 0, ""))[2] == "traced" and
          (rf.get("work", (0, 0, ""))[1] or 0) > 0,
          "db: tiny counted with its exact calls and no time, work traced with its time: %s" % rf)
    con.close()

    # ---- the web run page's API (ptcall serve on that database)
    import re
    import urllib.request
    sv = subprocess.Popen([P, "serve", "--db", dbp, "--listen", "127.0.0.1:0"], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    try:
        url = re.search(r"http://[0-9.:]+/", sv.stdout.readline() or "")
        check(url is not None, "ptcall serve says its URL")
        if url:
            with urllib.request.urlopen(url.group(0) + "api/v1/runs/1", timeout=20) as resp:
                d = json.load(resp)
            wr = d["run"]
            check(wr.get("counted_functions") == 1 and (wr.get("budget") or {}).get("outcome") == "ok" and
                  (wr.get("budget") or {}).get("note") == NOTE, "web: the run's budget: %s" % wr.get("budget"))
            wf = {f["name"]: f for f in d["functions"]}
            check(wf.get("tiny", {}).get("state") == "counted" and wf["tiny"].get("total", 0) is None and
                  wf.get("work", {}).get("state") == "traced", "web: the run's functions say their state")
            with urllib.request.urlopen(url.group(0) + "api/v1/functions/%d" % wf.get("tiny", {}).get("id", 0),
                                        timeout=20) as resp:
                pts = json.load(resp)["runs"]
            check([(p["run"], p["calls"], p["total"], p["self"]) for p in pts if p["called"]] ==
                  [(1, want["tiny"], None, None)],
                  "web: the function page's run of counted tiny: its calls, null times (never 0): %s" % pts)
            with urllib.request.urlopen(url.group(0) + "static/app.js", timeout=20) as resp:
                js = resp.read().decode()
            check("r.counted_functions" in js and '"state"]' in js, "web: the run page shows the budget and state")
    finally:
        sv.terminate()
        sv.wait()

    # ---- ptcall html: the page's data carries the same run object
    run([P, "html", "-o", w("page.html"), w("mixed.ptc")])
    page = open(w("page.html"), encoding="utf-8").read()
    check('"counted_functions": 1' in page and '"state": "counted"' in page and '"outcome": "ok"' in page,
          "html: the run's budget and its functions' state are in the page")

    governed(a, P, w)

    # ---- corrupt forms: one clear line, no crash, nothing skipped silently
    def bad(name, extra, words):
        bt.rewrite(w("ev.ptc"), w(name), 0, lambda c, t: extra, lambda c, t: [])
        r = run([P, "report", w(name)], want=None)
        check(r.returncode > 0 and all(x in r.stderr for x in words) and "Traceback" not in r.stderr,
              "%s: exit %d, stderr %r (want an error naming %s)" % (name, r.returncode, r.stderr, words))

    bad("bad-module.ptc", [(bt.MODULE_COUNTED, bt.module_counted(99, len(names), [idx["tiny"]]))],
        ["MODULE_COUNTED", "module 99", "did not announce"])
    bad("bad-bits.ptc", [(bt.MODULE_COUNTED, bt.module_counted(mid, len(names), [idx["tiny"]])[:-1])],
        ["MODULE_COUNTED", "bitmap"])
    bad("short-budget.ptc", [(bt.BUDGET, bt.budget(1, NOTE)[:40])], ["BUDGET chunk", "shorter"])
    bad("budget-nonul.ptc", [(bt.BUDGET, bt.budget(1, NOTE)[:-1])], ["BUDGET chunk", "note"])

    if failures:
        sys.exit("%d check(s) failed" % len(failures))
    print("budget views: all checks passed")


if __name__ == "__main__":
    main()
