#!/usr/bin/python3
"""The run page's call graph (docs/web.md, /api/v1/runs/ID/callgraph) in a real browser.

  callgraph_test.py --build BUILD --work DIR --artefacts DIR [--workloads lua]

Builds test/web/callgraph_prog.c (a known call structure: two roots, main and a thread's
start routine, a chain main -> work -> helper -> leaf_a, a cold function, a recursive one),
test/web/hostile.c and the Lua workload (bench/, as web_test.py builds it) with ptcall-cc,
records them with the soft backend, `ptcall db add`s them and starts `ptcall serve`. Then:

  - the API: every answer validates against docs/schema/web-callgraph.schema.json; nodes are
    chosen by inclusive share with the roots kept (main and the thread's start routine, which
    the old self-time ranking left out); each node's calls, self and total equal `ptcall
    report --format json`'s and each edge's calls `ptcall graph`'s; the cold function is left
    out at the default share and shown at min_share=0; max_nodes cuts and says so; focus=ID
    is exactly the function, its callers up to the roots and its callees down; bad arguments
    are 400s with a message, a function not in the run a 404;
  - `ptcall graph` chooses the same nodes as the API at the same share (one routine);
  - headless Chromium: the graph laid out by Graphviz shows those nodes with those figures,
    every edge has an arrowhead, no two node boxes overlap, the wheel zooms; clicking a node
    focuses on it (exactly its callers and callees), "whole graph" goes back; the hostile
    names stay text (no alert, no element made of them); `ptcall html`'s file from file://
    draws the same graph with its inlined Graphviz.

Screenshots go to --artefacts. Prints 'ok   ...' / 'FAIL ...' per check, then
'callgraph: N passed, N failed'.
"""

import argparse
import json
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import web_test as W  # noqa: E402  (the browser, server, build and record helpers)

ROOT = W.ROOT


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
            self.fail(what + (": " + str(detail) if detail else ""))
        return cond


C = W.C = Checks()


def validator():
    import jsonschema
    schema = json.load(open(os.path.join(ROOT, "docs", "schema", "web-callgraph.schema.json")))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    v = cls(schema)

    def validate(doc, what):
        errs = sorted(v.iter_errors(doc), key=lambda e: list(e.path))
        C.check(not errs, "%s: valid against web-callgraph.schema.json" % what,
                "; ".join("%s: %s" % (list(e.path), e.message) for e in errs[:3]))
    return validate


def graph_dot(ptcall, trace, min_share=None):
    """`ptcall graph`'s nodes (names) and edges ((caller, callee) -> calls)."""
    cmd = [ptcall, "graph", trace] + (["--min-share", str(min_share)] if min_share else [])
    out = W.sh(cmd)
    names = {}
    for m in re.finditer(r'^  f(\d+) \[label="((?:[^"\\]|\\.)*?)\\n', out, re.M):
        names[m.group(1)] = re.sub(r"\\(.)", r"\1", m.group(2))
    edges = {}
    for m in re.finditer(r'^  f(\d+) -> f(\d+) \[label="(\d+)"', out, re.M):
        edges[(names[m.group(1)], names[m.group(2)])] = int(m.group(3))
    return set(names.values()), edges


def check_figures(doc, rep, what):
    byname = {f["name"]: f for f in rep["functions"]}
    bad = []
    for n in doc["nodes"]:
        r = byname.get(n["name"])
        if not r or r["calls"] != n["calls"] or r.get("self") != n["self"] or \
                r.get("total") != n["total"]:
            bad.append((n["name"], n["calls"], n["self"], n["total"], r and (r["calls"],
                        r.get("self"), r.get("total"))))
    C.check(doc["nodes"] and not bad, "%s: each node's calls, self and total equal ptcall "
            "report's" % what, bad[:3])


def expected_focus(edges, fid):
    up, down = {fid}, {fid}
    for flag, a, b in ((up, "callee_id", "caller_id"), (down, "caller_id", "callee_id")):
        todo = [fid]
        while todo:
            v = todo.pop()
            for e in edges:
                if e[a] == v and e[b] not in flag:
                    flag.add(e[b])
                    todo.append(e[b])
    return up | down


def api_checks(srv, ptcall, validate, run, trace, rep, name):
    st, doc = srv.api("/api/v1/runs/%d/callgraph" % run)
    if not C.check(st == 200, "%s: GET /api/v1/runs/%d/callgraph answers 200" % (name, run),
                   st):
        raise SystemExit("callgraph: %d passed, %d failed (no call graph API)" %
                         (C.passed, C.failed))
    validate(doc, name + " callgraph")
    names = {n["name"] for n in doc["nodes"]}
    roots = {n["name"] for n in doc["nodes"] if n["root"]}
    C.check("main" in names and "main" in roots, "%s: main is a node and a root" % name,
            sorted(names)[:10])
    check_figures(doc, rep, name)
    total = sum(f["self"] for f in rep["functions"] if f.get("self") is not None)
    byname = {f["name"]: f for f in rep["functions"]}
    # every function over the default share (0.005 of the time) is shown
    want = {f for f, r in byname.items() if r.get("total") is not None and
            r["total"] >= 0.005 * total}
    C.check(want <= names or doc["cut"], "%s: every function over 0.5%% inclusive share is a "
            "node (or the cap says it cut)" % name, sorted(want - names)[:5])
    _, gedges = graph_dot(ptcall, trace)
    ids = {n["id"]: n["name"] for n in doc["nodes"]}
    bad = [(ids[e["caller_id"]], ids[e["callee_id"]], e["calls"]) for e in doc["edges"]
           if gedges.get((ids[e["caller_id"]], ids[e["callee_id"]])) != e["calls"]]
    C.check(doc["edges"] and not bad, "%s: each edge's calls equal ptcall graph's" % name, bad[:3])
    return doc


def prog_checks(srv, ptcall, validate, run, trace, rep):
    doc = api_checks(srv, ptcall, validate, run, trace, rep, "callgraph_prog")
    names = {n["name"] for n in doc["nodes"]}
    roots = {n["name"] for n in doc["nodes"] if n["root"]}
    C.check({"main", "worker"} <= roots, "callgraph_prog: both roots (main, the thread's "
            "worker) are nodes", sorted(roots))
    C.check("cold_fn" not in names, "callgraph_prog: the cold function is left out at the "
            "default share")
    st, all0 = srv.api("/api/v1/runs/%d/callgraph?min_share=0&max_nodes=0" % run)
    C.check(st == 200 and {n["name"] for n in all0["nodes"]} == {f["name"] for f in
                                                                rep["functions"]},
            "callgraph_prog: min_share=0 shows every function called")
    # ptcall graph makes the same choice at the same share (the one routine): at the default
    # share, and just over the thread's root's share, where the root stays (as its path)
    total = sum(f["self"] for f in rep["functions"])
    wshare = 100.0 * [f for f in rep["functions"] if f["name"] == "worker"][0]["total"] / total
    for pct in (0.5, round(wshare + 0.01, 4)):
        st, api = srv.api("/api/v1/runs/%d/callgraph?min_share=%s&max_nodes=0" % (run, pct / 100))
        anames = {n["name"] for n in api["nodes"]}
        gnames, _ = graph_dot(ptcall, trace, pct)
        C.check(gnames == anames and "worker" in gnames,
                "ptcall graph --min-share %s chooses the API's nodes, the roots with them" % pct,
                "%s vs %s" % (sorted(gnames), sorted(anames)))
    st, cut = srv.api("/api/v1/runs/%d/callgraph?max_nodes=3" % run)
    C.check(st == 200 and cut["cut"] > 0 and len(cut["nodes"]) <= 3 and
            {"main", "worker"} <= {n["name"] for n in cut["nodes"]},
            "callgraph_prog: max_nodes=3 keeps the roots and says how many it cut",
            st == 200 and (len(cut["nodes"]), cut["cut"]))
    fid = {n["name"]: n["id"] for n in all0["nodes"]}
    st, foc = srv.api("/api/v1/runs/%d/callgraph?focus=%d&min_share=0" % (run, fid["leaf_a"]))
    validate(foc, "callgraph_prog focus")
    got = {n["name"] for n in foc["nodes"]}
    C.check(got == {"leaf_a", "helper", "work", "main", "spin"}, "callgraph_prog: focus on "
            "leaf_a is exactly its callers up to main and its callee spin", sorted(got))
    C.check({(e["caller_id"], e["callee_id"]) for e in foc["edges"]} ==
            {(fid["main"], fid["work"]), (fid["work"], fid["helper"]),
             (fid["work"], fid["leaf_a"]), (fid["helper"], fid["leaf_a"]),
             (fid["leaf_a"], fid["spin"])},
            "callgraph_prog: focus's edges are the paths through leaf_a", foc["edges"])
    for q, code in (("min_share=2", 400), ("min_share=x", 400), ("max_nodes=-1", 400),
                    ("focus=abc", 400), ("focus=999999", 404)):
        st, e = srv.api("/api/v1/runs/%d/callgraph?%s" % (run, q))
        C.check(st == code and e.get("error"), "callgraph?%s: %d with a message" % (q, code),
                "%s %s" % (st, e.get("error")))
    st, e = srv.api("/api/v1/runs/999999/callgraph")
    C.check(st == 404, "callgraph of an unknown run: 404", st)
    return doc, all0


# ---- the browser ----------------------------------------------------------------------------

GRAPH_JS = """
var svg = document.querySelector('#callgraph');
if (!svg) { var n = document.getElementById('callgraph-note');
            return {error: n ? n.textContent : null}; }
function box(e) { var r = e.getBoundingClientRect();
                  return [r.left, r.top, r.right, r.bottom]; }
return {focus: svg.getAttribute('data-focus'), viewBox: svg.getAttribute('viewBox'),
  nodes: Array.from(svg.querySelectorAll('g.node')).map(function (g) {
    var shape = g.querySelector('polygon, path, ellipse');
    return {id: Number(g.dataset.function), calls: g.dataset.calls, self: g.dataset.self,
            total: g.dataset.total, title: g.querySelector('title').textContent,
            texts: Array.from(g.querySelectorAll('text')).map(function (t) {
              return t.textContent; }),
            box: shape ? box(shape) : null}; }),
  edges: Array.from(svg.querySelectorAll('g.edge')).map(function (g) {
    return {caller: Number(g.dataset.caller), callee: Number(g.dataset.callee),
            calls: g.dataset.calls, arrow: g.querySelectorAll('polygon').length,
            label: Array.from(g.querySelectorAll('text')).map(function (t) {
              return t.textContent.trim(); }).join('')}; }),
  foreign: svg.querySelectorAll('script, img, foreignObject, iframe').length};
"""


def wait_graph(d, what, focus="", timeout=60):
    end = time.time() + timeout
    g = None
    while time.time() < end:
        g = d.execute_script(GRAPH_JS)
        if g and "nodes" in g and g["focus"] == focus and g["nodes"]:
            return g
        time.sleep(0.1)
    C.fail("%s: no call graph drawn within %d s (%s)" % (what, timeout, g))
    return None


def overlaps(nodes):
    bad = []
    for i, a in enumerate(nodes):
        for b in nodes[i + 1:]:
            if a["box"] and b["box"] and a["box"][0] < b["box"][2] - 0.5 and \
                    b["box"][0] < a["box"][2] - 0.5 and a["box"][1] < b["box"][3] - 0.5 and \
                    b["box"][1] < a["box"][3] - 0.5:
                bad.append((a["title"], b["title"]))
    return bad


def page_checks(g, doc, rep, what):
    want = {n["id"]: n for n in doc["nodes"]}
    C.check({n["id"] for n in g["nodes"]} == set(want), "%s: the page draws the API's nodes"
            % what, (len(g["nodes"]), len(want)))
    byname = {f["name"]: f for f in rep["functions"]}
    bad = []
    for n in g["nodes"]:
        r = byname.get(n["title"], {})
        if str(r.get("calls")) != n["calls"] or str(r.get("self")) != n["self"] or \
                str(r.get("total")) != n["total"] or n["texts"][0][:59] != n["title"][:59] or \
                not any(t.startswith("%d call" % r.get("calls", -1)) for t in n["texts"]):
            bad.append((n["title"], n["calls"], n["self"], n["total"], n["texts"]))
    C.check(not bad, "%s: each node shows its name, calls, flat and cum as ptcall report has "
            "them" % what, bad[:2])
    C.check(g["edges"] and all(e["arrow"] >= 1 for e in g["edges"]),
            "%s: every edge has an arrowhead (%d edges)" % (what, len(g["edges"])))
    ecalls = {(e["caller_id"], e["callee_id"]): e["calls"] for e in doc["edges"]}
    bad = [e for e in g["edges"] if ecalls.get((e["caller"], e["callee"])) != int(e["calls"]) or
           e["label"] != str(e["calls"])]
    C.check(len(g["edges"]) == len(ecalls) and not bad, "%s: the edges are the API's, labelled "
            "with their calls" % what, bad[:2])
    ov = overlaps(g["nodes"])
    C.check(not ov, "%s: no two node boxes overlap" % what, ov[:3])


def click_node(d, fid):
    d.execute_script("document.querySelector('#callgraph g.node[data-function=\"%d\"]')"
                     ".dispatchEvent(new MouseEvent('click', {bubbles: true}))" % fid)


def browser_checks(d, srv, art, runs, docs, reps):
    run, doc = runs["prog"], docs["prog"]
    d.get(srv.url + "/runs/%d" % run)
    W.wait_ready(d, "run page")
    t0 = time.time()
    g = wait_graph(d, "callgraph_prog's run page")
    if not g:
        return
    C.ok("callgraph_prog: laid out by Graphviz in %.2f s" % (time.time() - t0))
    page_checks(g, doc, reps["prog"], "callgraph_prog's page")
    W.shot(d, art, "callgraph-prog")
    vb = g["viewBox"]
    d.execute_script("document.querySelector('#callgraph').dispatchEvent(new WheelEvent("
                     "'wheel', {deltaY: -300, clientX: 300, clientY: 300, bubbles: true, "
                     "cancelable: true}))")
    C.check(d.execute_script("return document.querySelector('#callgraph')"
                             ".getAttribute('viewBox')") != vb, "the wheel zooms (viewBox)")
    d.execute_script("document.getElementById('callgraph-fit').click()")
    C.check(d.execute_script("return document.querySelector('#callgraph')"
                             ".getAttribute('viewBox')") == vb, "fit restores the whole view")
    ids = {n["name"]: n["id"] for n in doc["nodes"]}
    click_node(d, ids["leaf_a"])
    g = wait_graph(d, "focus on leaf_a", focus=str(ids["leaf_a"]))
    if g:
        got = {n["title"] for n in g["nodes"]}
        C.check(got == {"leaf_a", "helper", "work", "main", "spin"}, "clicking leaf_a focuses "
                "on exactly its callers and callees", sorted(got))
        ov = overlaps(g["nodes"])
        C.check(not ov, "focus: no two node boxes overlap", ov[:3])
        W.shot(d, art, "callgraph-focus")
        d.execute_script("document.getElementById('callgraph-whole').click()")
        g = wait_graph(d, "back to the whole graph")
        C.check(g and {n["id"] for n in g["nodes"]} == set(ids.values()),
                "'whole graph' shows every node again")
    # the function page: its focused graph in the latest run that called it
    d.get(srv.url + "/functions/%d" % ids["leaf_a"])
    W.wait_ready(d, "leaf_a's function page")
    g = wait_graph(d, "leaf_a's function page", focus=str(ids["leaf_a"]))
    C.check(g and {n["title"] for n in g["nodes"]} == {"leaf_a", "helper", "work", "main",
                                                       "spin"},
            "leaf_a's function page: a graph of exactly its callers and callees")
    if g:
        W.shot(d, art, "callgraph-function")
    if "lua" in runs:
        d.get(srv.url + "/runs/%d" % runs["lua"])
        W.wait_ready(d, "lua run page")
        g = wait_graph(d, "lua's run page")
        if g:
            page_checks(g, docs["lua"], reps["lua"], "lua's page")
            C.check(any(n["title"] == "main" for n in g["nodes"]), "lua's page: main is drawn")
            W.shot(d, art, "callgraph-lua")
    # the hostile functions are cold: the page's min_share=0 (passed to the API) shows them
    d.get(srv.url + "/runs/%d?min_share=0" % runs["hostile"])
    W.wait_ready(d, "hostile run page")
    g = wait_graph(d, "hostile's run page")
    if g:
        titles = [n["title"] for n in g["nodes"]]
        firsts = [n["texts"][0] for n in g["nodes"]]
        C.check(all(h in titles and h in firsts for h in W.HOSTILE),
                "hostile names are the nodes' text, exactly", titles)
        C.check(g["foreign"] == 0, "hostile names made no element in the graph")
        W.no_alert(d, "hostile call graph")
        W.shot(d, art, "callgraph-hostile")
    errs = W.console_errors(d)
    C.check(not errs, "no console errors (the CSP lets Graphviz's WebAssembly run)", errs[:2])


def html_checks(d, ptcall, work, art, traces, docs, reps, runs_in_file):
    out = os.path.join(work, "callgraph.html")
    if os.path.exists(out):
        os.unlink(out)
    W.sh([ptcall, "html"] + traces + ["-o", out])
    d.get("file://" + out + "#/runs/1")
    d.refresh()
    W.wait_ready(d, "callgraph.html run 1")
    g = wait_graph(d, "ptcall html's run 1")
    if not g:
        return
    page_checks(g, docs["prog"], reps["prog"], "ptcall html from file://")
    W.shot(d, art, "callgraph-html")
    ids = {n["title"]: n["id"] for n in g["nodes"]}
    click_node(d, ids["leaf_a"])
    g = wait_graph(d, "ptcall html: focus on leaf_a", focus=str(ids["leaf_a"]))
    C.check(g and {n["title"] for n in g["nodes"]} == {"leaf_a", "helper", "work", "main",
                                                       "spin"},
            "ptcall html: focus on leaf_a shows exactly its callers and callees")
    errs = W.console_errors(d)
    C.check(not errs, "ptcall html: no console errors (the inlined Graphviz runs)", errs[:2])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--artefacts", required=True)
    ap.add_argument("--workloads", default="lua")
    args = ap.parse_args()
    args.workloads = [w for w in args.workloads.split(",") if w]
    W.ARGS = args
    build, work, art = (os.path.abspath(p) for p in (args.build, args.work, args.artefacts))
    os.makedirs(os.path.join(work, "bin"), exist_ok=True)
    os.makedirs(art, exist_ok=True)
    ptcall = os.path.join(build, "tools", "ptcall")
    d = W.browser()
    try:
        progs = W.build_programs(build, work)  # lua (bench/), hostile.c
        for k in list(progs):
            if k == "lua":  # one small run is enough here
                progs[k] = (progs[k][0], progs[k][1][:1])
        exe = os.path.join(work, "bin", "callgraph_prog")
        W.sh([os.path.join(build, "bin", "ptcall-cc"), "-O1", "-fno-optimize-sibling-calls",
              "-fno-inline", "-g", "-pthread", os.path.join(HERE, "callgraph_prog.c"), "-o", exe])
        progs = dict([("prog", (exe, [["40"]]))] + list(progs.items()))
        traces = W.record_all(ptcall, progs, os.path.join(work, "callgraph"))
        db = os.path.join(work, "callgraph.db")
        for f in (db, db + "-wal", db + "-shm"):
            if os.path.exists(f):
                os.unlink(f)
        order = []
        for name, ts in traces.items():
            W.sh([ptcall, "db", "add", "--db", db, ts[0]])
            order.append(name)
        runs = {name: i + 1 for i, name in enumerate(order)}
        reps = {name: W.report(ptcall, [traces[name][0]]) for name in order}
        validate = validator()
        srv = W.Server(ptcall, db)
        docs = {}
        try:
            docs["prog"], _ = prog_checks(srv, ptcall, validate, runs["prog"], traces["prog"][0],
                                          reps["prog"])
            if "lua" in runs:
                docs["lua"] = api_checks(srv, ptcall, validate, runs["lua"], traces["lua"][0],
                                         reps["lua"], "lua")
            browser_checks(d, srv, art, runs, docs, reps)
        finally:
            srv.stop()
        html_checks(d, ptcall, work, art, [traces[n][0] for n in order], docs, reps, runs)
    finally:
        d.quit()
    print("callgraph: %d passed, %d failed" % (C.passed, C.failed))
    sys.exit(1 if C.failed else 0)


if __name__ == "__main__":
    main()
