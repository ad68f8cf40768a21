#!/usr/bin/python3
"""The interactive flame graph (docs/web.md, "Flame tree") in a real browser.

  flame_test.py --build BUILD --work DIR --artefacts DIR [--no-lua]

Builds test/web/flame_threads.c (a main thread and a thread named "crunch") and bench/'s Lua
workload with ptcall-cc, records them with the soft backend (the two-thread program twice,
with 20 and 2000 rounds of crunch_leaf), stores them (`ptcall db add`) and starts `ptcall
serve`. Then:

  - /api/v1/runs/ID/flame.json per thread and weight: each function's calls and self time
    summed over the tree's nodes equal `ptcall report --format json --by thread`'s, per
    thread; the "all threads" tree is the sum of the threads' and says so;
  - the run page in headless Chromium: the chart's root equals the API's; picking a thread
    and a weight changes it to that thread's figures; a search counts the frames that match
    and their share; clicking a frame zooms to it (its width becomes the chart's); reset;
  - the diff page: crunch_leaf (100x the rounds) is coloured as more self time (red), an
    unchanged frame grey;
  - `ptcall html` of the runs from file://: the same graph, thread picker included, with no
    server.

Screenshots go to --artefacts. Prints 'ok' / 'FAIL' per check, then 'flame: N passed, N failed'.
"""

import argparse
import importlib.util
import json
import os
import subprocess
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


def walk(node, fn, path=()):
    fn(node, path)
    for c in node.get("children", []):
        walk(c, fn, path + (node["name"],))


def per_function(root):
    """calls and self per function name over a tree (the root, a thread, excluded)."""
    out = {}

    def add(n, path):
        if not path:
            return
        v = out.setdefault(n["name"], [0, 0])
        v[0] += n["calls"]
        v[1] += n["self"] or 0
    walk(root, add)
    return out


def wait_for(d, script, what, timeout=30, *args):
    end = time.time() + timeout
    while time.time() < end:
        v = d.execute_script(script, *args)
        if v:
            return v
        time.sleep(0.1)
    C.fail("%s: not within %d s" % (what, timeout))
    return None


CHART = ("var b = document.getElementById('flame-chart'); return b && "
         "b.querySelectorAll('g.frame').length > 0 && b.dataset.rootValue ? "
         "{thread: b.dataset.thread, weight: b.dataset.weight, root: +b.dataset.rootValue, "
         "calls: +b.dataset.rootCalls, frames: b.querySelectorAll('g.frame').length} : null")


def chart_state(d, want=None, what="chart"):
    """The chart's state once drawn (and, with want, once thread/weight are those)."""
    def ok(s):
        return s and (not want or all(str(s[k]) == str(v) for k, v in want.items()))
    end = time.time() + 30
    s = None
    while time.time() < end:
        s = d.execute_script(CHART)
        if ok(s):
            return s
        time.sleep(0.1)
    C.fail("%s: the flame graph was not drawn (%s)" % (what, s))
    return None


def select(d, sel_id, value):
    d.execute_script("var s = document.getElementById(arguments[0]); s.value = arguments[1]; "
                     "s.dispatchEvent(new Event('change'));", sel_id, value)


def check_page(d, api_tree, what, art, shot_name):
    """The run page (or the html file's) against the API's trees."""
    all_t = api_tree("all", "self")
    s = chart_state(d, {"thread": "all", "weight": "self"}, what)
    if not s:
        return
    C.check(s["root"] == all_t["root"]["value"], "%s: all threads' root = the API's (%d)" %
            (what, all_t["root"]["value"]), str(s))
    opts = d.execute_script("return Array.from(document.getElementById('flame-thread').options)"
                            ".map(function (o) { return [o.value, o.textContent]; })")
    names = [o[1] for o in opts]
    C.check(any(n.startswith("crunch") for n in names) and names[0].startswith("all threads"),
            "%s: the thread picker names each thread and all threads" % what, str(names))
    W.shot(d, art, shot_name + "-all")
    crunch = [o[0] for o in opts if o[1].startswith("crunch")][0]
    t = api_tree(crunch, "self")
    select(d, "flame-thread", crunch)
    s = chart_state(d, {"thread": crunch, "weight": "self"}, what + ", thread crunch")
    C.check(s and s["root"] == t["root"]["value"] and s["root"] < all_t["root"]["value"],
            "%s: thread crunch: its root = the API's thread root (%d)" %
            (what, t["root"]["value"]), str(s))
    tc = api_tree(crunch, "calls")
    select(d, "flame-weight", "calls")
    s = chart_state(d, {"thread": crunch, "weight": "calls"}, what + ", weight calls")
    C.check(s and s["root"] == tc["root"]["value"] == sum(v[0] for v in
                                                          per_function(tc["root"]).values()),
            "%s: weight calls: the root = the thread's calls (%d)" % (what, tc["root"]["value"]),
            str(s))
    # search: matches and their share
    n_match = [0]
    leaf_v = [0]

    def count(n, path):
        if path and n["name"] == "crunch_leaf":
            n_match[0] += 1
            leaf_v[0] += n["value"]
    walk(tc["root"], count)
    d.execute_script("var s = document.getElementById('flame-search'); s.value = 'crunch_le.f';"
                     "s.dispatchEvent(new Event('input'));")
    got = wait_for(d, "var f = document.getElementById('flame-found'); return f.dataset.matches "
                   "? [+f.dataset.matches, +f.dataset.share, f.textContent] : null", what + " search")
    share = 100.0 * leaf_v[0] / tc["root"]["value"]
    C.check(got and got[0] == n_match[0] and abs(got[1] - share) < 0.01,
            "%s: search crunch_le.f: %d frame(s), %.2f %% of the width" % (what, n_match[0], share),
            str(got))
    hl = d.execute_script("return Array.from(document.querySelectorAll('#flame-chart g.frame'))"
                          ".filter(function (g) { return g.getAttribute('name') === 'crunch_leaf';"
                          " }).map(function (g) { return g.querySelector('rect')"
                          ".getAttribute('fill'); })")
    C.check(hl and all(f.lower() == "#e600e6" for f in hl), "%s: the matches are highlighted" % what,
            str(hl))
    W.shot(d, art, shot_name + "-crunch-search")
    # zoom: click crunch_outer, its frame becomes the chart's width
    d.execute_script("var g = Array.from(document.querySelectorAll('#flame-chart g.frame'))"
                     ".find(function (g) { return g.getAttribute('name') === 'crunch_outer'; });"
                     "g.dispatchEvent(new MouseEvent('click', {bubbles: true}));")
    z = wait_for(d, "var svg = document.querySelector('#flame-chart svg'); var g = Array.from("
                 "svg.querySelectorAll('g.frame')).find(function (g) { return "
                 "g.getAttribute('name') === 'crunch_outer'; }); var w = +g.querySelector('rect')"
                 ".getAttribute('width'); return w >= +svg.getAttribute('width') - 1 ? w : null",
                 what + " zoom", 10)
    C.check(bool(z), "%s: a click on crunch_outer zooms to it (full width)" % what)
    W.shot(d, art, shot_name + "-zoomed")
    d.execute_script("document.getElementById('flame-reset').click()")
    r = wait_for(d, "var svg = document.querySelector('#flame-chart svg'); var g = Array.from("
                 "svg.querySelectorAll('g.frame')).find(function (g) { return "
                 "g.getAttribute('name') === 'crunch_outer'; }); var w = +g.querySelector('rect')"
                 ".getAttribute('width'); return w < +svg.getAttribute('width') - 2 ? w : null",
                 what + " reset", 10)
    C.check(bool(r), "%s: reset zooms out" % what)
    # tooltip: hovering a frame shows its name and figures
    d.execute_script("var g = Array.from(document.querySelectorAll('#flame-chart g.frame'))"
                     ".find(function (g) { return g.getAttribute('name') === 'crunch_leaf'; });"
                     "g.dispatchEvent(new MouseEvent('mouseover', {bubbles: true}));")
    tip = d.execute_script("var t = document.getElementById('flame-tip'); return t.hidden ? null "
                           ": t.textContent")
    C.check(tip and tip.startswith("crunch_leaf") and "calls: " in tip and "self: " in tip,
            "%s: the tooltip names the frame with its calls, self, total and share" % what,
            str(tip))
    errs = W.console_errors(d)
    C.check(not errs, "%s: no console errors" % what, str(errs))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--artefacts", required=True)
    ap.add_argument("--no-lua", action="store_true")
    a = ap.parse_args()
    build, work, art = (os.path.abspath(p) for p in (a.build, a.work, a.artefacts))
    os.makedirs(work, exist_ok=True)
    os.makedirs(art, exist_ok=True)
    ptcall = os.path.join(build, "tools", "ptcall")
    cc = os.path.join(build, "bin", "ptcall-cc")
    d = W.browser()
    import jsonschema
    schema = json.load(open(os.path.join(ROOT, "docs", "schema", "flame-tree.schema.json")))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)

    def validate(doc, what):
        errs = list(cls(schema).iter_errors(doc))
        C.check(not errs, "%s matches flame-tree.schema.json" % what,
                "; ".join("%s: %s" % (list(e.path), e.message[:200]) for e in errs[:3]))

    exe = os.path.join(work, "flame_threads")
    sh([cc, "-O2", "-g", "-pthread", os.path.join(HERE, "flame_threads.c"), "-o", exe])
    traces = []
    for rounds in (20, 2000):  # a change of self time far above a loaded machine's noise
        t = os.path.join(work, "ft-%d.ptc" % rounds)
        sh([ptcall, "record", "-q", "--backend", "soft", "-o", t, "--", exe, str(rounds)], cwd=work)
        traces.append(t)
    if not a.no_lua:
        R = load_module("benchrun", os.path.join(ROOT, "bench", "run.py"))
        wdir = os.path.join(ROOT, "bench", "workloads")
        wl = R.lua_workload(work, wdir, True)
        lua = os.path.join(work, "lua")
        R.build(cc, wl, [], [], lua)
        t = os.path.join(work, "lua.ptc")
        sh([ptcall, "record", "-q", "--backend", "soft", "-o", t, "--", lua,
            os.path.join(wdir, "bench.lua"), "1"], cwd=work)
        traces.append(t)
    db = os.path.join(work, "flame.db")
    for f in (db, db + "-wal", db + "-shm"):
        if os.path.exists(f):
            os.unlink(f)
    sh([ptcall, "db", "add", "--db", db] + traces)
    srv = W.Server(ptcall, db)
    try:
        # ---- the API against report, per thread --------------------------------------------
        for rid, t in enumerate(traces, 1):
            rep = json.loads(sh([ptcall, "report", "--format", "json", "--by", "thread", t]))
            st, doc = srv.api("/api/v1/runs/%d/flame.json?thread=all&weight=self" % rid)
            if not C.check(st == 200, "run %d: flame.json answers" % rid, str(doc)[:300]):
                continue
            validate(doc["flame"], "run %d: flame.json" % rid)
            threads = doc["flame"]["threads"]
            all_root = doc["flame"]["trees"][0]
            C.check(all_root["thread"] == "all" and all_root["summed_threads"] == len(threads)
                    and "sum over" in all_root["root"]["name"],
                    "run %d: the all-threads tree says it sums %d thread(s)" % (rid, len(threads)))
            sums = [0, 0]
            bad = []
            for th in threads:
                g = [x for x in rep["groups"] if x["pid"] == th["pid"] and x["tid"] == th["tid"]]
                exp = {f["name"]: [f["calls"], f["self"] or 0] for f in g[0]["functions"]
                       if f["calls"]} if g else {}
                for w in ("calls", "self"):
                    st, td = srv.api("/api/v1/runs/%d/flame.json?thread=%d&weight=%s" %
                                     (rid, th["tid"], w))
                    tr = td["flame"]["trees"][0] if st == 200 else None
                    got = per_function(tr["root"]) if tr else {}
                    # calls exact; self within 1 ns per call: the tree sums each call's
                    # converted time, report converts a function's summed ticks once
                    # (docs/usage.md, the exports' per-call durations)
                    # by self, a node of no width is omitted (and counted in omitted_nodes):
                    # a call of 0 ns self (a TSC that steps by 10 ns, as AMD hosts' do) takes
                    # its calls along, so there calls may fall short, and a function whose
                    # calls all read 0 may be missing
                    short_ok = w == "self" and tr is not None and tr.get("omitted_nodes", 0) > 0

                    def same(a, b):
                        if a is None and b is not None and short_ok:
                            return b[1] <= b[0]
                        return a is not None and b is not None and \
                            (a[0] == b[0] or (short_ok and a[0] < b[0])) and \
                            abs(a[1] - b[1]) <= max(1, b[0])
                    if not set(got) <= set(exp) or not all(same(got.get(k), exp[k]) for k in exp):
                        diff = {k: (got.get(k), exp.get(k)) for k in set(got) | set(exp)
                                if not same(got.get(k), exp.get(k))}
                        bad.append("thread %d weight %s: %s" % (th["tid"], w, list(diff.items())[:3]))
                    if tr and w == "self":
                        sums[1] += tr["root"]["value"]
                        if abs(tr["root"]["value"] - sum(v[1] for v in exp.values())) > \
                                max(1, sum(v[0] for v in exp.values())):
                            bad.append("thread %d: root %d != report's self sum" %
                                       (th["tid"], tr["root"]["value"]))
                    if tr and w == "calls":
                        sums[0] += tr["root"]["value"]
                C.check(th["name"] == (g[0].get("name") if g else None),
                        "run %d thread %d: named as report names it (%s)" % (rid, th["tid"],
                                                                              th["name"]))
            C.check(not bad, "run %d: every thread's calls and self per function = ptcall report "
                    "--by thread's (%d threads)" % (rid, len(threads)), "; ".join(bad[:3]))
            C.check(all_root["root"]["value"] == sums[1],
                    "run %d: the all-threads root = the sum of the threads' roots" % rid,
                    "%d != %d" % (all_root["root"]["value"], sums[1]))
        st, doc = srv.api("/api/v1/runs/1/flame.json?thread=99999999&weight=self")
        C.check(st == 404 and "no thread" in doc.get("error", ""), "an unknown thread: 404")
        st, doc = srv.api("/api/v1/runs/1/flame.json?weight=wall")
        C.check(st == 400 and "weight" in doc.get("error", ""), "an unknown weight: 400")

        def api_tree_for(rid):
            def f(thread, weight):
                st, doc = srv.api("/api/v1/runs/%d/flame.json?thread=%s&weight=%s" %
                                  (rid, thread, weight))
                return doc["flame"]["trees"][0]
            return f

        # ---- the run page ----------------------------------------------------------------
        d.get(srv.url + "/runs/1")
        W.wait_ready(d, "run page")
        check_page(d, api_tree_for(1), "run page", art, "flame-run")
        if not a.no_lua:
            d.get(srv.url + "/runs/3")
            W.wait_ready(d, "Lua run page")
            s = chart_state(d, {"thread": "all"}, "Lua run page")
            tl = api_tree_for(3)("all", "self")
            C.check(s and s["root"] == tl["root"]["value"] and s["frames"] > 20,
                    "Lua run page: the flame graph's root = the API's (%d frames drawn)" %
                    (s or {}).get("frames", 0), str(s))
            d.execute_script("var s = document.getElementById('flame-search'); "
                             "s.value = '^luaV_execute$'; s.dispatchEvent(new Event('input'));")
            got = wait_for(d, "var f = document.getElementById('flame-found'); return "
                           "f.dataset.matches ? +f.dataset.matches : null", "Lua search")
            n = [0]
            walk(tl["root"], lambda x, p: n.__setitem__(0, n[0] + (bool(p) and
                                                                  x["name"] == "luaV_execute")))
            C.check(got == n[0] and n[0] > 0, "Lua run page: search ^luaV_execute$ counts %d "
                    "frame(s)" % n[0], str(got))
            W.shot(d, art, "flame-lua")
            # the icicle and the sandwich of luaV_execute
            d.execute_script("var c = document.getElementById('flame-inverted'); c.checked = true;"
                             "c.dispatchEvent(new Event('change'));")
            time.sleep(0.5)
            d.execute_script("var g = Array.from(document.querySelectorAll('#flame-chart g.frame'))"
                             ".find(function (g) { return g.getAttribute('name') === "
                             "'luaV_execute'; }); g.dispatchEvent(new MouseEvent('click', "
                             "{bubbles: true})); document.getElementById('flame-sandwich').click();")
            sw = wait_for(d, "var b = document.getElementById('flame-chart-callees'); return "
                          "b.querySelectorAll('g.frame').length", "sandwich")
            C.check(bool(sw), "Lua run page: the sandwich of luaV_execute draws its callees")
            W.shot(d, art, "flame-lua-sandwich")

        # ---- the diff page ---------------------------------------------------------------
        d.get(srv.url + "/diff?base=1&new=2")
        W.wait_ready(d, "diff page")
        fills = wait_for(d, "var b = document.getElementById('flame-diff-chart'); if (!b || "
                         "!b.querySelectorAll('g.frame').length) return null; var o = {}; "
                         "b.querySelectorAll('g.frame').forEach(function (g) { "
                         "o[g.getAttribute('name')] = g.querySelector('rect').getAttribute('fill'); "
                         "}); return o;", "diff flame graph")

        def rgb(s):
            return [int(x) for x in s.replace("rgb(", "").replace(")", "").split(",")]
        if fills and "crunch_leaf" in fills:
            r, g, b = rgb(fills["crunch_leaf"])
            C.check(r > b + 30, "diff page: crunch_leaf (100x the rounds) is red: more self time",
                    fills["crunch_leaf"])
            C.check(rgb(fills["crunch_outer"])[0] - rgb(fills["crunch_outer"])[2] <
                    r - b, "diff page: crunch_outer (the same calls) is paler than crunch_leaf",
                    str(fills))
        else:
            C.fail("diff page: no crunch_leaf frame (%s)" % fills)
        legend = d.execute_script("return document.getElementById('flame-diff-legend').textContent")
        C.check("red more" in (legend or ""), "diff page: a legend says what the colours mean")
        W.shot(d, art, "flame-diff")
    finally:
        srv.stop()

    # ---- ptcall html from file:// ------------------------------------------------------------
    out = os.path.join(work, "flame.html")
    sh([ptcall, "html", "-o", out] + traces[:2])
    d.get("file://" + out + "#/runs/1")
    W.wait_ready(d, "html file run page")
    srv2_trees = {}
    body = json.loads(sh([ptcall, "export", "--format", "flame-json", "--weight", "self",
                          traces[0]]))
    validate(body, "export --format flame-json")
    calls = json.loads(sh([ptcall, "export", "--format", "flame-json", "--weight", "calls",
                           traces[0]]))

    def file_tree(thread, weight):
        doc = body if weight == "self" else calls
        for t in doc["trees"]:
            if (t["thread"] == "all") if thread == "all" else (
                    t["thread"] != "all" and str(t["thread"]["tid"]) == str(thread)):
                return t
        return srv2_trees.get(thread)
    check_page(d, file_tree, "ptcall html (file://)", art, "flame-html")
    d.quit()
    print("flame: %d passed, %d failed" % (C.passed, C.failed))
    return 1 if C.failed else 0


if __name__ == "__main__":
    sys.exit(main())
