#!/usr/bin/python3
"""The campaign pages of `ptcall serve` in a real browser (docs/web.md, Pages).

  campaign_test.py --build BUILD --work DIR --artefacts DIR [--scale] [--timeout S]

Real campaigns: the zlib harness of bench/cov (Debian's zlib sources, ptcall-cc -fptcall-cov,
bench/cov/zlib-build.sh; exit 77 when the sources cannot be had) measured with `ptcall cov
run --afl` over subsets of the real AFL++ queue in test/cov/data/afl-zlib (200 entries
afl-fuzz wrote for that harness), each subset laid out as two AFL++ instances (-M main,
-S sec). Two "fuzzers", three trials each:

  - fuzzer=full: trial k holds every queue entry but those whose index is k mod 5 (160
    entries over the whole 420 s campaign);
  - fuzzer=early: trial k holds the first 60 entries but those whose index is k mod 3
    (40 entries, the campaign's first minutes): less coverage, as a weaker fuzzer's.

Each .ptcov is `ptcall cov add`ed as a campaign with its tags; one campaign gets a second
part from another machine (host). A program, campaign, tags, an instance and functions with
hostile names (<script>, quotes, a byte that is not UTF-8) are added beside them
(test/web/hostile.c built with -fptcall-cov, run by `cov run --corpus`).

Then, in headless Chromium: /campaigns (every figure of every row against the API document
and against `ptcall cov report --format json` of the same .ptcov; thousands separators;
sorting by a column), /campaigns/ID (the curves drawn with union, machine and instance series,
toggled; the plateau; the instances against the API; the reached functions and their first
reach against cov report; the frontier panel), /campaigns/compare?a=tag:fuzzer=full&b=
tag:fuzzer=early (each group's trials and quartiles against cov report, U and A12 computed
here from cov report's figures, the sentence), the hostile names shown as text and run
nowhere. Screenshots go to --artefacts.

--scale (by hand: minutes): a database of 100 campaigns x 10,000 inputs made as
bench/cov/campaign_bench.py makes its own (its Base and part_inputs: the real per-input
coverage of the whole queue subset, measured once by cov run, each campaign a random 80-100 %
of it repeated to 10,000 inputs with later times), and the time each campaign page takes in
Chromium from the navigation's start to drawn (body[data-drawn-ms]: tables filled and the
chart's next frame), median of 5 loads, against the 300 ms target; its API documents over HTTP.
Prints 'ok   ...' / 'FAIL ...' per check, then 'campaign web: N passed, N failed'.
"""

import argparse
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def load_module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


W = load_module("web_test", os.path.join(HERE, "web_test.py"))
C = W.C


def sh(cmd, **kw):
    """web_test's sh, reading the output as UTF-8 with U+FFFD for other bytes (cov add says
    the program's name as it is)"""
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)
    out, err = (x.decode("utf-8", "replace") for x in (r.stdout, r.stderr))
    if r.returncode:
        raise SystemExit("FAIL command %s exited %d: %s" % (" ".join(map(str, cmd)),
                                                            r.returncode, (err or out)[-2000:]))
    return out

# the names a program, a campaign, tags and an instance get: markup, quotes, a byte that
# is not UTF-8 (shown as U+FFFD)
EVIL_PROG = b"<img src=y onerror=alert(5)>'\"\xff"
EVIL_NAME = "<script>alert(6)</script>\"'"
EVIL_TAG = ("<b>k", "<script>alert(7)</script>")
EVIL_INST = b"<svg onload=alert(8)>\"'\xfe"
HOSTILE_FNS = W.HOSTILE


def u8(b):
    return b.decode("utf-8", "replace")


# ---- campaigns ------------------------------------------------------------------------------

def queue_entries():
    q = os.path.join(ROOT, "test", "cov", "data", "afl-zlib", "default", "queue")
    return q, sorted(e for e in os.listdir(q) if not e.startswith("."))


def afl_dir(path, entries, qdir):
    """An AFL++ output directory of two instances (main, sec) holding entries (alternately),
    with the campaign's fuzzer_stats (its run_time: the campaign's end)."""
    shutil.rmtree(path, ignore_errors=True)
    stats = os.path.join(os.path.dirname(qdir), "fuzzer_stats")
    for k, inst in enumerate(("main", "sec")):
        os.makedirs(os.path.join(path, inst, "queue"))
        for e in entries[k::2]:
            shutil.copy(os.path.join(qdir, e), os.path.join(path, inst, "queue", e))
        shutil.copy(stats, os.path.join(path, inst, "fuzzer_stats"))


def cov_run(ptcall, target, afl, out, host=None):
    """cov run of an AFL++ directory; host: as if on another machine (cov run records the
    host name it runs on: here a UTS namespace of that name, unshare -ur -u)."""
    if os.path.exists(out):
        os.unlink(out)
    cmd = [ptcall, "cov", "run", "-o", out, "--afl", afl, "--", target, "@@"]
    if host:
        cmd = ["unshare", "--user", "--map-root-user", "--uts", "sh", "-c",
               'hostname "$0" && exec "$@"', host] + cmd
    sh(cmd)
    return out


def cov_report(ptcall, ptcov):
    return json.loads(sh([ptcall, "cov", "report", "--format", "json", ptcov]))


def cov_add(ptcall, db, ptcov, name, tags):
    cmd = [ptcall, "cov", "add", "--db", db, "--campaign", name]
    for k, v in tags:
        cmd += ["--tag", "%s=%s" % (k, v)]
    sh(cmd + [ptcov])


# ---- the pages ---------------------------------------------------------------------------------

def rows(d, table_id, key):
    return d.execute_script("""
      var t = document.getElementById(arguments[0]); if (!t) return null;
      return Array.from(t.tBodies[0].rows).map(function (r) {
        return {key: r.dataset[arguments[1]] || "",
                vals: Array.from(r.cells).map(function (c) {
                  return c.hasAttribute('data-v') ? c.getAttribute('data-v') : c.textContent; }),
                texts: Array.from(r.cells).map(function (c) { return c.textContent; })};
      });""".replace("arguments[1]", json.dumps(key)), table_id)


def heads(d, table_id):
    return d.execute_script("return Array.from(document.querySelectorAll('#' + arguments[0] + "
                            "' thead th')).map(function (t) { return t.textContent; })", table_id)


def num(s):
    return None if s in ("", None) else float(s)


def thousands(v):
    return "{:,}".format(v)


def load(d, url, what):
    d.get(url)
    return W.wait_ready(d, what)


def quartiles(xs):
    """q1, median, q3 as the API computes them (linear interpolation, numpy's default)."""
    xs = sorted(xs)
    def q(p):
        h = (len(xs) - 1) * p
        lo = int(h)
        return xs[lo] + (h - lo) * (xs[min(lo + 1, len(xs) - 1)] - xs[lo])
    return q(0.25), q(0.5), q(0.75)


def u_a12(a, b):
    u = sum((x > y) + 0.5 * (x == y) for x in a for y in b)
    return u, u / (len(a) * len(b))


def list_checks(d, srv, art, camps, reps):
    st, doc = srv.api("/api/v1/campaigns")
    C.check(st == 200, "/api/v1/campaigns answers", str(st))
    api = {c["id"]: c for c in doc["campaigns"]}
    load(d, srv.url + "/campaigns", "/campaigns")
    W.no_alert(d, "/campaigns")
    rs = rows(d, "campaigns", "campaign")
    C.check(rs is not None and len(rs) == len(api), "/campaigns: one row per campaign",
            "%s rows, %d campaigns" % (len(rs or []), len(api)))
    cols = ["id", "program", "name", "tags", "hosts", "instances", "inputs", "crashes", "hangs",
            "functions_reached", "functions_total", "blocks_reached", "blocks_total",
            "campaign_time_ms", "last_new_ms"]
    bad, badrep, seps = [], [], 0
    for r in rs or []:
        c = api.get(int(r["key"]))
        if not c:
            bad.append("row %s not in the API" % r["key"])
            continue
        for j, k in enumerate(cols):
            if k in ("program", "name"):
                if r["texts"][j] != c[k]:
                    bad.append("%s %s: %r != %r" % (c["id"], k, r["texts"][j], c[k]))
            elif k in ("tags", "hosts"):
                continue
            elif num(r["vals"][j]) != (None if c[k] is None else float(c[k])):
                bad.append("%s %s: %s != %s" % (c["id"], k, r["vals"][j], c[k]))
        for j, k in enumerate(cols[5:13], 5):
            if isinstance(c[k], int) and c[k] >= 1000:
                seps += 1
                if r["texts"][j] != thousands(c[k]):
                    bad.append("%s %s shown %r, want %r" % (c["id"], k, r["texts"][j],
                                                            thousands(c[k])))
        # against cov report of the campaign's .ptcov (single-part campaigns)
        ptcovs = camps.get(c["id"], [])
        if len(ptcovs) == 1:
            rep = reps[ptcovs[0]]
            want = {"inputs": len(rep["inputs"]),
                    "crashes": sum(i["kind"] == "crash" for i in rep["inputs"]),
                    "hangs": sum(i["kind"] == "hang" for i in rep["inputs"]),
                    "functions_reached": rep["union"]["reached"],
                    "functions_total": rep["union"]["functions"],
                    "blocks_reached": rep["blocks"]["reached"] if "blocks" in rep else None,
                    "blocks_total": rep["blocks"]["total"] if "blocks" in rep else None,
                    "campaign_time_ms": rep.get("campaign_end_ms")}
            for k, v in want.items():
                j = cols.index(k)
                if num(r["vals"][j]) != (None if v is None else float(v)):
                    badrep.append("%s %s: page %s, cov report %s" % (c["id"], k, r["vals"][j], v))
    C.check(not bad, "/campaigns: every figure equals the API document's", "; ".join(bad[:5]))
    C.check(not badrep and any(len(v) == 1 for v in camps.values()),
            "/campaigns: inputs, crashes, hangs, functions, blocks and time equal cov report's",
            "; ".join(badrep[:5]))
    C.check(seps > 0, "/campaigns: figures of 1,000 and more have thousands separators")
    # sorting: by functions reached, then the other way
    d.execute_script("document.querySelectorAll('#campaigns th')[9].click()")
    got = [num(r["vals"][9]) for r in rows(d, "campaigns", "campaign")]
    C.check(got == sorted(got), "/campaigns: a click on 'functions reached' sorts by it", str(got))
    d.execute_script("document.querySelectorAll('#campaigns th')[9].click()")
    got = [num(r["vals"][9]) for r in rows(d, "campaigns", "campaign")]
    C.check(got == sorted(got, reverse=True), "/campaigns: a second click sorts the other way")
    W.shot(d, art, "campaigns")
    # filters as on the other pages
    load(d, srv.url + "/campaigns?tag=fuzzer%3Dearly", "/campaigns?tag=fuzzer=early")
    n = len(rows(d, "campaigns", "campaign") or [])
    C.check(n == 3, "/campaigns?tag=fuzzer=early: the 3 trials", str(n))
    load(d, srv.url + "/campaigns?tag=nosuch%3D1", "/campaigns?tag=nosuch")
    err = d.execute_script("var e = document.getElementById('error'); return e ? "
                           "[e.dataset.status, e.textContent] : "
                           "[null, document.getElementById('count').textContent]")
    C.check(err and (err[0] == "404" or "none matches the filters (tag=nosuch=1)" in err[1]),
            "/campaigns?tag=nosuch: said (the API's 404, or no campaign matches)", str(err))
    return api


def one_checks(d, srv, art, cid, ptcovs, reps, shotname):
    st, doc = srv.api("/api/v1/campaigns/%d" % cid)
    C.check(st == 200, "/api/v1/campaigns/%d answers" % cid, str(st))
    c = doc.get("campaign", doc)
    cv = c["curves"]
    load(d, srv.url + "/campaigns/%d" % cid, "/campaigns/%d" % cid)
    W.no_alert(d, "/campaigns/%d" % cid)
    box = d.execute_script("""var b = document.getElementById('campaign-chart');
      return b && {series: b.dataset.series, canvas: !!b.querySelector('canvas'),
                   plateau: b.dataset.plateauS, xmax: b.dataset.xMax,
                   shown: b.uplot ? b.uplot.series.map(function (s) { return s.show; }) : null};""")
    nser = 1 + len(cv.get("hosts", [])) + len(cv.get("instances", []))
    C.check(box and box["canvas"] and int(box["series"]) == nser,
            "/campaigns/%d: the curves are drawn: union, %d machines, %d instances" %
            (cid, len(cv.get("hosts", [])), len(cv.get("instances", []))), str(box))
    if c.get("last_new_ms") is not None:
        C.check(box and num(box["plateau"]) == c["last_new_ms"] / 1000,
                "/campaigns/%d: the plateau is marked at the last new coverage (%s ms)" %
                (cid, c["last_new_ms"]), str(box))
        txt = d.find_element("id", "plateau").text
        C.check("last new coverage at" in txt, "/campaigns/%d: the plateau is said: %s" %
                (cid, txt))
    if c.get("campaign_time_ms"):
        C.check(box and num(box["xmax"]) >= c["campaign_time_ms"] / 1000,
                "/campaigns/%d: the x axis reaches the campaign's end" % cid, str(box))
    # toggling: per instance off takes the instance curves away, on brings them back
    ninst, nhost = len(cv.get("instances", [])), len(cv.get("hosts", []))
    series = "return document.getElementById('campaign-chart').dataset.series"
    d.find_element("id", "show-instances").click()
    off = d.execute_script(series)
    d.find_element("id", "show-instances").click()
    on = d.execute_script(series)
    C.check(int(off) == 1 + nhost and int(on) == 1 + nhost + ninst,
            "/campaigns/%d: 'per instance' off takes the %d instance curves away, on brings "
            "them back" % (cid, ninst), "%s then %s" % (off, on))
    # the instances table against the API's curves
    ir = rows(d, "campaign-instances", "instance") or []
    fcol = heads(d, "campaign-instances").index("functions")
    # an instance is its name on its machine (two machines may each run a 'main')
    want = {(i["name"], i["host"]): i for i in cv.get("instances", [])}
    bad = []
    for r in ir:
        i = want.get((r["texts"][0], r["texts"][1]))
        if not i:
            bad.append("row %r on %r" % (r["texts"][0], r["texts"][1]))
            continue
        lastp = i["points"][-1] if i["points"] else None
        f = i.get("functions", lastp[1] if lastp else None)
        if num(r["vals"][fcol]) != (None if f is None else float(f)):
            bad.append("%s functions %s != %s" % (r["texts"][0], r["vals"][fcol], f))
    C.check(len(ir) == len(want) and not bad, "/campaigns/%d: %d instances, each with its "
            "machine and functions as in the API" % (cid, len(want)), "; ".join(bad[:4]))
    # the reached functions: names and first reach against cov report
    fr = rows(d, "campaign-functions", "fn") or []
    names = [r["texts"][0] for r in fr]
    C.check(len(fr) == len(c.get("functions", [])) and
            names == [f["name"] for f in c.get("functions", [])],
            "/campaigns/%d: the reached functions as the API lists them" % cid)
    if len(ptcovs) == 1:
        rep = reps[ptcovs[0]]
        inputs = {i["id"]: i for i in rep["inputs"]}
        first = {}
        for f in rep["functions"]:
            if f["first_input"] is not None:
                first[f["name"]] = inputs[f["first_input"]]["time_ms"]
        got = {r["texts"][0]: num(r["vals"][2]) for r in fr}
        bad = [(n, got.get(n), t) for n, t in first.items()
               if n not in got or got[n] != float(t)] if not c.get("more_functions") else \
              [(n, v, first.get(n)) for n, v in got.items() if first.get(n) != v]
        C.check(fr and not bad, "/campaigns/%d: the %d reached functions and their first reach "
                "times equal cov report's" % (cid, len(first)), str(bad[:4]))
    fa = d.execute_script("return !!document.getElementById('frontier-absent')")
    ft = rows(d, "frontier-table", "fn")
    fr = c.get("frontier")
    # every part here is a -fptcall-cov build with the call graph (record 8): the document has
    # the frontier of its latest part, and the panel shows it row by row
    graph = any(reps[p].get("reachability", {}).get("indirect_calls") for p in ptcovs)
    if graph:
        C.check(isinstance(fr, dict), "/campaigns/%d: its parts have the call graph: the "
                "document has a frontier" % cid, str(fr))
    if not isinstance(fr, dict):
        C.check(fa and ft is None, "/campaigns/%d: no frontier in the document: the panel says "
                "it is absent" % cid)
    else:
        want = [[x["name"], x["file"] + (":%d" % x["line"] if x["line"] else "") if x["file"] else "-",
                 ("(by pointer) " if x["by_pointer_only"] else "") + ", ".join(x["callers"]),
                 str(x["functions_behind"]), str(x["insns_behind"]), str(x["blocks_behind"]),
                 "" if x["lines_behind"] is None else str(x["lines_behind"])]
                for x in fr["rows"]]
        got = [[r["texts"][0], r["texts"][1], r["texts"][2]] + r["vals"][3:7] for r in ft or []]
        C.check(not fa and ft is not None and got == want and len(want) > 0,
                "/campaigns/%d: the frontier panel's %d rows (callee, source, callers, functions, "
                "insns, blocks, lines behind) equal the API's" % (cid, len(want)),
                "%s != %s" % (got[:2], want[:2]))
        summ = d.execute_script("var e = document.getElementById('frontier-summary'); "
                                "return e ? e.textContent : ''")
        C.check(("part %d " % fr["part"]) in summ and fr["host"] in summ and
                ("%s unreachable" % thousands(fr["unreachable"])) in summ and
                bool(d.execute_script("return !!document.getElementById('frontier-note')")),
                "/campaigns/%d: the panel names the part, its machine and the counts, and says "
                "a union's frontier needs cov merge" % cid, summ)
        if len(ptcovs) == 1:
            rep = reps[ptcovs[0]]
            fs = rep["functions"]
            names = [fs[x["function"]]["name"] for x in rep["reachability"]["frontier"][:100]]
            C.check([r[0] for r in got] == names, "/campaigns/%d: the panel's callees are cov "
                    "report's frontier, in its order" % cid, "%s != %s" % (got[:3], names[:3]))
    errs = W.console_errors(d)
    C.check(not errs, "/campaigns/%d: no script errors" % cid, str(errs[:3]))
    W.shot(d, art, shotname)
    return doc


def compare_checks(d, srv, art, groups, reps):
    q = "a=tag%3Afuzzer%3Dfull&b=tag%3Afuzzer%3Dearly"
    st, doc = srv.api("/api/v1/campaigns/compare?" + q)
    C.check(st == 200, "/api/v1/campaigns/compare answers", str(st))
    load(d, srv.url + "/campaigns/compare?" + q, "/campaigns/compare")
    W.no_alert(d, "/campaigns/compare")
    # each group's figures from cov report of its trials' .ptcov
    own = {}
    for label, ptcovs in groups.items():
        own[label] = [reps[p]["union"]["reached"] for p in ptcovs]
    fa, fb = own["full"], own["early"]
    gs = doc["groups"]
    api_f = [sorted(t["functions"] for t in g["trials"]) for g in gs]
    C.check(api_f == [sorted(fa), sorted(fb)], "compare API: the trials' functions equal cov "
            "report's", "%s / %s %s" % (api_f, fa, fb))
    fr = rows(d, "compare-functions", "group") or []
    bad = []
    for r, g, xs in zip(fr, gs, (fa, fb)):
        q1, med, q3 = quartiles(xs)
        want = [len(xs), med, q1, q3, min(xs), max(xs), statistics.mean(xs), statistics.stdev(xs)]
        got = [num(v) for v in r["vals"][1:]]
        apiv = [len(g["trials"])] + [g["functions"][k] for k in ("median", "q1", "q3", "min",
                                                                 "max", "mean", "stddev")]
        if any(abs(a - b) > 0.006 for a, b in zip(got, apiv)):
            bad.append("%s page %s api %s" % (g["label"], got, apiv))
        if any(abs(a - b) > 0.006 for a, b in zip(got[:6], want[:6])) or \
           abs(got[6] - want[6]) > 0.006 or abs(got[7] - want[7]) > 0.006:
            bad.append("%s page %s, from cov report %s" % (g["label"], got, want))
    C.check(len(fr) == 2 and not bad, "compare page: each group's median, quartiles, min, max, "
            "mean and stddev equal the API's and those of cov report's figures",
            "; ".join(bad[:3]))
    br = rows(d, "compare-blocks", "group") or []
    big = [(v, t) for r in br for v, t in zip(r["vals"][2:], r["texts"][2:])
           if num(v) is not None and abs(num(v)) >= 1000]
    C.check(big and all("," in t for v, t in big), "compare page: block figures of 1,000 and "
            "more (fractions too) have thousands separators", str(big[:4]))
    boxes = d.execute_script("return document.querySelectorAll('#box-functions g.group').length")
    dots = d.execute_script("return document.querySelectorAll('#box-functions circle.trial').length")
    C.check(boxes == 2 and dots == len(fa) + len(fb), "compare page: a box per group and a dot "
            "per trial", "%s boxes, %s dots" % (boxes, dots))
    u, a12 = u_a12(fa, fb)
    t = doc["test"]
    C.check(abs(t["u"] - u) < 1e-9 or abs(t["u"] - (len(fa) * len(fb) - u)) < 1e-9,
            "compare API: Mann-Whitney U %s equals ours from cov report (%s)" % (t["u"], u))
    C.check(abs(t["a12"] - a12) < 0.001, "compare API: A12 %s equals ours (%s)" % (t["a12"], a12))
    v = d.execute_script("var e = document.getElementById('verdict'); return e && "
                         "[e.textContent, e.dataset.more, e.dataset.pairs, e.dataset.significant]")
    more = sum(x > y for x in fa for y in fb)
    C.check(v and int(v[1]) == more and int(v[2]) == len(fa) * len(fb),
            "compare page: 'full reached more functions than early in %d of %d pairs'" %
            (more, len(fa) * len(fb)), str(v))
    sig = "significant at 0.05" if t["significant_at_0_05"] else "no significant difference"
    ptxt = "p = "
    C.check(v and sig in v[0] and ptxt in v[0] and ("%d of %d" % (more, len(fa) * len(fb))) in
            v[0], "compare page: the sentence says the pairs, p and '%s': %s" % (sig, v and v[0]))
    curve = d.execute_script("var b = document.getElementById('compare-chart'); return b && "
                             "[b.dataset.series, !!b.querySelector('canvas')]")
    C.check(curve and curve[0] == "2" and curve[1], "compare page: the median curves are drawn")
    errs = W.console_errors(d)
    C.check(not errs, "compare page: no script errors", str(errs[:3]))
    W.shot(d, art, "campaign-compare")
    # a selection that holds no campaign: the API's message on the page, the form kept
    load(d, srv.url + "/campaigns/compare?a=tag%3Anosuch%3D1&b=1", "compare nosuch")
    e = d.execute_script("var e = document.getElementById('error'); return e && "
                         "[e.dataset.status, e.textContent, !!document.getElementById('compare-form')]")
    C.check(e and e[0] in ("400", "404") and e[1] and e[2],
            "compare page: a selection of no campaign is said, the form kept", str(e))


def hostile_checks(d, srv, art, cid):
    d.execute_script("window.__ptcall_probe = 1")
    want = [u8(EVIL_PROG), EVIL_NAME, EVIL_TAG[0] + "=" + EVIL_TAG[1], u8(EVIL_INST)] + HOSTILE_FNS
    for path in ("/campaigns", "/campaigns/%d" % cid,
                 "/campaigns/compare?a=%d&b=%d" % (cid, cid)):
        load(d, srv.url + path, path)
        time.sleep(0.3)
        W.no_alert(d, "hostile names on " + path)
        texts = d.execute_script(
            "return Array.from(document.querySelectorAll('main a, main td, main h1, main dd, "
            "main p, main option, svg text')).map(function (e) { return e.textContent || e.value "
            "|| e.label; })")
        blob = "\n".join(t for t in texts if t)
        if path == "/campaigns":
            exp = want[:3]
        elif path.startswith("/campaigns/compare"):
            exp = [EVIL_NAME]
        else:
            exp = want
        for h in exp:
            C.check(h in blob, "%s: %r is shown as text" % (path, h))
        injected = d.execute_script(
            "return document.querySelectorAll('main script, main img, main svg script, main b, "
            "[onerror], [onload]').length")
        C.check(injected == 0, "%s: no element was made from a name" % path, str(injected))
        C.check(d.execute_script("return window.__ptcall_probe") in (1, None),
                "%s: no script ran" % path)
        W.shot(d, art, "campaign-hostile-" + path.strip("/").split("?")[0].replace("/", "-"))


# ---- at scale ------------------------------------------------------------------------------------

def scale_checks(d, ptcall, work, art, target):
    """100 campaigns x 10,000 inputs, made as bench/cov/campaign_bench.py makes its database
    (its Base and part_inputs): the real per-input coverage of the whole AFL++ queue subset,
    measured once by cov run, each campaign a random 80-100 % of it repeated to 10,000 inputs
    with later campaign times; then the pages' load times in Chromium."""
    B = load_module("campaign_bench", os.path.join(ROOT, "bench", "cov", "campaign_bench.py"))
    import random
    sdir = os.path.join(work, "scale")
    shutil.rmtree(sdir, ignore_errors=True)
    os.makedirs(sdir)
    afl = os.path.join(ROOT, "test", "cov", "data", "afl-zlib")
    base_p = cov_run(ptcall, target, afl, os.path.join(sdir, "base.ptcov"))
    base = B.Base(base_p)
    db = os.path.join(sdir, "scale.db")
    rng = random.Random(30)
    t0 = time.time()
    for c in range(100):
        chosen = sorted(rng.sample(range(len(base.inputs)),
                                   int(len(base.inputs) * rng.uniform(0.8, 1.0))))
        p = os.path.join(sdir, "c%d.ptcov" % c)
        base.write(p, "host-%d" % (c % 10), B.part_inputs(base, 1000 + c, 10000, chosen,
                                                          shared_first=False))
        cov_add(ptcall, db, p, "trial-%03d" % c, [("fuzzer", "ab"[c % 2])])
        os.remove(p)
    print("note the scale database (%d measured inputs, 100 campaigns x 10,000) took %.0f s to "
          "make, %.0f MB" % (len(base.inputs), time.time() - t0, os.path.getsize(db) / 1e6),
          flush=True)
    srv = W.Server(ptcall, db)
    try:
        st, doc = srv.api("/api/v1/campaigns")
        n = len(doc.get("campaigns", []))
        inputs = [c["inputs"] for c in doc.get("campaigns", [])]
        C.check(st == 200 and n == 100 and min(inputs) == 10000,
                "scale: 100 campaigns of 10,000 inputs", "%s %s %s" % (st, n, inputs[:3]))
        cid = doc["campaigns"][n // 2]["id"]
        res = {}
        for path in ("/campaigns", "/campaigns/%d" % cid,
                     "/campaigns/compare?a=tag%3Afuzzer%3Da&b=tag%3Afuzzer%3Db"):
            api = "/api/v1" + path
            times, atimes = [], []
            for _ in range(5):
                t = time.perf_counter()
                srv.get(api)
                atimes.append((time.perf_counter() - t) * 1000)
            for _ in range(5):
                load(d, srv.url + path, path)
                end = time.time() + 10
                while time.time() < end and not d.execute_script(
                        "return document.body.dataset.drawnMs"):
                    time.sleep(0.01)
                times.append(float(d.execute_script("return document.body.dataset.drawnMs")))
            res[path] = (statistics.median(times), max(times), statistics.median(atimes),
                         max(atimes))
            print("note scale %s: page drawn (tables and chart) %.0f ms after navigation start, median of 5 "
                  "(max %.0f); its API document %.1f ms median (max %.1f)" %
                  ((path,) + res[path]), flush=True)
            W.shot(d, art, "scale-" + path.strip("/").split("?")[0].replace("/", "-"))
        for path, (med, mx, am, amx) in res.items():
            C.check(med < 300, "scale: %s filled in under 300 ms at 100 campaigns x 10,000 "
                    "inputs (median %.0f ms)" % (path, med))
    finally:
        srv.stop()


# ---- main -------------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--artefacts", required=True)
    ap.add_argument("--scale", action="store_true")
    a = ap.parse_args()
    build, work, art = (os.path.abspath(p) for p in (a.build, a.work, a.artefacts))
    os.makedirs(work, exist_ok=True)
    os.makedirs(art, exist_ok=True)
    ptcall = os.path.join(build, "tools", "ptcall")
    cc = os.path.join(build, "bin", "ptcall-cc")
    d = W.browser()

    r = subprocess.run([os.path.join(ROOT, "bench", "cov", "zlib-build.sh"), work, "ptcall",
                        build], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode == 77:
        print("skip: %s" % r.stderr.strip())
        d.quit()
        return 77
    if r.returncode:
        raise SystemExit("FAIL zlib-build.sh: %s" % r.stderr[-2000:])
    target = r.stdout.strip().splitlines()[-1]

    qdir, entries = queue_entries()
    C.check(len(entries) == 200, "the AFL++ queue subset holds 200 entries", str(len(entries)))
    ptcovs = {}
    groups = {"full": [], "early": []}
    for k in range(3):
        full = [e for i, e in enumerate(entries) if i % 5 != k]
        early = [e for i, e in enumerate(entries[:60]) if i % 3 != k]
        for label, sub in (("full", full), ("early", early)):
            dirp = os.path.join(work, "afl-%s-%d" % (label, k + 1))
            afl_dir(dirp, sub, qdir)
            p = cov_run(ptcall, target, dirp, os.path.join(work, "%s-%d.ptcov" % (label, k + 1)))
            ptcovs[(label, k + 1)] = p
            groups[label].append(p)
    # a second machine's part of trial full-1: the entries that trial left out
    rest = [e for i, e in enumerate(entries) if i % 5 == 0]
    afl_dir(os.path.join(work, "afl-full-1-b"), rest, qdir)
    part2 = cov_run(ptcall, target, os.path.join(work, "afl-full-1-b"),
                    os.path.join(work, "full-1-b.ptcov"), host="machine-b")

    # the hostile campaign: a program, instance and functions named as markup
    hb = os.path.join(work, "hostile-bin")
    shutil.rmtree(hb, ignore_errors=True)
    os.makedirs(hb)
    evil_exe = os.path.join(os.fsencode(hb), EVIL_PROG)
    sh([cc, "-O1", "-g", "-fptcall-cov", os.path.join(HERE, "hostile.c"), "-o",
        os.fsdecode(evil_exe)])
    ha = os.path.join(work, "afl-hostile")
    shutil.rmtree(ha, ignore_errors=True)
    iq = os.path.join(os.fsencode(ha), EVIL_INST, b"queue")
    os.makedirs(iq)
    for n in range(2):
        with open(os.path.join(iq, b"id:%06d,time:%d,orig:x" % (n, 1000 * n)), "wb") as f:
            f.write(b"%d" % (n + 3))
    hp = os.path.join(work, "hostile.ptcov")
    if os.path.exists(hp):
        os.unlink(hp)
    # hostile.c reads no input: without an argument its main calls both hostile functions
    sh([ptcall, "cov", "run", "-o", hp, "--afl", ha, "--", os.fsdecode(evil_exe)])

    db = os.path.join(work, "campaigns.db")
    for f in (db, db + "-wal", db + "-shm"):
        if os.path.exists(f):
            os.unlink(f)
    camps = {}
    for (label, k), p in sorted(ptcovs.items()):
        cov_add(ptcall, db, p, "zlib-%s-%d" % (label, k), [("fuzzer", label), ("trial", str(k))])
    cov_add(ptcall, db, part2, "zlib-full-1", [("fuzzer", "full"), ("trial", "1")])
    cov_add(ptcall, db, hp, EVIL_NAME, [EVIL_TAG])
    reps = {p: cov_report(ptcall, p) for p in list(ptcovs.values()) + [part2, hp]}

    srv = W.Server(ptcall, db)
    try:
        st, doc = srv.api("/api/v1/campaigns")
        by_name = {c["name"]: c["id"] for c in doc["campaigns"]}
        for (label, k), p in ptcovs.items():
            camps.setdefault(by_name["zlib-%s-%d" % (label, k)], []).append(p)
        camps[by_name["zlib-full-1"]].append(part2)
        camps.setdefault(by_name[EVIL_NAME], []).append(hp)
        # a page without the elements checked fails its checks, and the others still run
        for what, f in (
                ("/campaigns", lambda: list_checks(d, srv, art, camps, reps)),
                ("a campaign of two machines", lambda: one_checks(
                    d, srv, art, by_name["zlib-full-1"], camps[by_name["zlib-full-1"]], reps,
                    "campaign-two-machines")),
                ("a campaign of one part", lambda: one_checks(
                    d, srv, art, by_name["zlib-early-2"], camps[by_name["zlib-early-2"]], reps,
                    "campaign-one")),
                ("the compare page", lambda: compare_checks(d, srv, art, groups, reps)),
                ("hostile names", lambda: hostile_checks(d, srv, art, by_name[EVIL_NAME]))):
            try:
                f()
            except Exception as e:  # selenium's, or a missing element
                C.fail("%s: the checks stopped: %s" % (what, str(e).splitlines()[0][:200]))
        # unknown campaigns and pages
        for path in ("/api/v1/campaigns/999999",):
            st, body = srv.api(path)
            C.check(st == 404 and body.get("error"), "%s: 404 with a message" % path, str(st))
        load(d, srv.url + "/campaigns/999999", "/campaigns/999999")
        e = d.execute_script("var e = document.getElementById('error'); return e && "
                             "[e.dataset.status, e.textContent]")
        C.check(e and e[0] == "404" and "999999" in e[1], "/campaigns/999999: the API's 404 "
                "message on the page", str(e))
        for path, code in (("/campaigns/abc", 400), ("/campaigns/1/x", 404)):
            st, _, body = srv.get(path)
            C.check(st == code and b'id="error"' in body, "page %s: %d with a message" %
                    (path, code), str(st))
    finally:
        srv.stop()
    if a.scale:
        scale_checks(d, ptcall, work, art, target)
    d.quit()
    print("campaign web: %d passed, %d failed" % (C.passed, C.failed))
    return 1 if C.failed else 0


if __name__ == "__main__":
    sys.exit(main())
