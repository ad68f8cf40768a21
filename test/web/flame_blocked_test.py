#!/usr/bin/python3
"""Blocked frames in the interactive flame graph (issue 27 item 6; docs/web.md, "Flame tree").

  flame_blocked_test.py --build BUILD --work DIR --artefacts DIR

Builds test/e2e/programs/blocking.c (a pool thread waiting on a condition variable, a pipe
read that blocks, nanosleep, waitpid) with ptcall-cc, records it, stores it and starts `ptcall
serve`. Then:

  - /api/v1/runs/1/flame.json (all threads, self) and `export --format flame-json`: the nodes
    flagged "blocked": true are exactly the calls of the functions `ptcall report --format
    json` lists with "blocking": true, and per function their self time sums to report's;
    no other node has the flag;
  - the run page in headless Chromium: every drawn frame of a blocking function has the
    blocked colour and no other frame has it; the legend counts the blocked frames and their
    width, equal to the API's (and report's) figures; hovering a blocked frame's tooltip says
    "blocked", a program frame's does not; a search still highlights a blocked frame;
  - the served flame.svg (an <img>) carries no script; `ptcall html` of the trace from file://
    colours the same frames with the same legend.

Screenshots go to --artefacts. Prints 'ok' / 'FAIL' per check, then a summary line.
"""

import argparse
import importlib.util
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BLOCKED = "#7f93b8"  # web/app/flame.js BLOCKED_COLOUR


def load_module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


W = load_module("web_test", os.path.join(HERE, "web_test.py"))
C = W.C
sh = W.sh


def nodes(root):
    """Every node under root (the root, a thread, excluded)."""
    out = []

    def walk(n, top):
        if not top:
            out.append(n)
        for c in n.get("children", []):
            walk(c, False)
    walk(root, True)
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


def check_tree(tree, blocking, rep_self, calls_of, what):
    """The blocked flags of one tree against report's blocking functions."""
    ns = nodes(tree["root"])
    flagged = [n for n in ns if n.get("blocked")]
    C.check(all(n["blocked"] is True for n in flagged), "%s: blocked is true where present" % what)
    wrong = sorted({n["name"] for n in ns if bool(n.get("blocked")) != (n["name"] in blocking)})
    C.check(flagged and not wrong, "%s: the nodes flagged blocked are exactly the calls of "
            "report's blocking functions (%d nodes)" % (what, len(flagged)), str(wrong))
    got = {}
    for n in flagged:
        v = got.setdefault(n["name"], [0, 0])
        v[0] += n["calls"]
        v[1] += n["self"]
    bad = [(k, got.get(k), rep_self[k], calls_of[k]) for k in blocking
           if not got.get(k) or got[k][0] != calls_of[k] or
           abs(got[k][1] - rep_self[k]) > max(1, calls_of[k])]
    C.check(not bad, "%s: each blocking function's calls and self summed over its blocked "
            "nodes = report's" % what, str(bad[:4]))
    return flagged


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
    cc = os.path.join(build, "bin", "ptcall-cc")
    exe = os.path.join(work, "blocking")
    sh([cc, "-O2", "-pthread", os.path.join(ROOT, "test", "e2e", "programs", "blocking.c"),
        "-o", exe])
    trace = os.path.join(work, "blocking.ptc")
    out = sh([ptcall, "record", "-q", "-o", trace, "--", exe], cwd=work)
    if not C.check("ok" in out, "the blocking program runs under ptcall", out[-300:]):
        return 1
    rep = json.loads(sh([ptcall, "report", "--format", "json", "--top", "0", trace]))
    blocking = {f["name"] for f in rep["functions"] if f.get("blocking") and f["calls"]}
    rep_self, calls_of = {}, {}
    for f in rep["functions"]:
        if f.get("blocking") and f["calls"]:
            rep_self[f["name"]] = rep_self.get(f["name"], 0) + f["self"]
            calls_of[f["name"]] = calls_of.get(f["name"], 0) + f["calls"]
    C.check({"pthread_cond_wait", "nanosleep"} <= blocking,
            "report lists the blocking calls (%s)" % sorted(blocking))

    exp = json.loads(sh([ptcall, "export", "--format", "flame-json", "--weight", "self", trace]))
    all_t = [t for t in exp["trees"] if t["thread"] == "all"][0]
    check_tree(all_t, blocking, rep_self, calls_of, "export --format flame-json (all threads)")

    db = os.path.join(work, "blocked.db")
    for f in (db, db + "-wal", db + "-shm"):
        if os.path.exists(f):
            os.unlink(f)
    sh([ptcall, "db", "add", "--db", db, trace])
    srv = W.Server(ptcall, db)
    d = W.browser()
    try:
        st, doc = srv.api("/api/v1/runs/1/flame.json?thread=all&weight=self")
        if not C.check(st == 200, "flame.json answers", str(doc)[:300]):
            return 1
        tree = doc["flame"]["trees"][0]
        flagged = check_tree(tree, blocking, rep_self, calls_of, "flame.json (all threads)")
        exp_frames = len(flagged)
        exp_value = sum(n["value"] for n in flagged)

        # the served SVG (an <img> on the pages, under a CSP without inline script): static
        st, _, body = srv.get("/api/v1/runs/1/flame.svg")
        C.check(st == 200 and b"<script" not in body and b"ptc-search" not in body and
                b"data-blocked=\"1\"" in body,
                "flame.svg is written without script or controls (--svg-static's rule), blocked "
                "frames marked", str(st))
        d.get(srv.url + "/runs/1")
        W.wait_ready(d, "run page")
        fills = wait_for(d, "var b = document.getElementById('flame-chart'); if (!b || "
                         "!b.querySelectorAll('g.frame').length) return null; return Array.from("
                         "b.querySelectorAll('g.frame')).map(function (g) { return "
                         "[g.getAttribute('name'), g.querySelector('rect').getAttribute('fill')]; })",
                         "the run page's flame graph")
        fills = fills or []
        blk = [f for n, f in fills if n in blocking]
        other = [(n, f) for n, f in fills if n not in blocking]
        C.check(blk and all(f.lower() == BLOCKED for f in blk),
                "run page: every drawn frame of a blocking function is blue-grey (%d frames)" %
                len(blk), str(blk[:6]))
        C.check(other and not [n for n, f in other if f.lower() == BLOCKED],
                "run page: no program frame has the blocked colour (%d frames)" % len(other))
        C.check({"pthread_cond_wait", "nanosleep"} <= {n for n, f in fills if n in blocking},
                "run page: pthread_cond_wait and nanosleep are drawn")
        lg = d.execute_script("var l = document.getElementById('flame-legend'); return l ? "
                              "[l.hidden, +l.dataset.frames, +l.dataset.value, l.textContent, "
                              "getComputedStyle(l.querySelector('.flame-blocked'))"
                              ".backgroundColor] : null")
        C.check(lg and not lg[0] and lg[1] == exp_frames and lg[2] == exp_value and
                "blocked" in lg[3] and lg[4] == "rgb(127, 147, 184)",
                "run page: the legend shows the blocked colour, %d blocked frame(s) and their "
                "width %d ns (the API's)" % (exp_frames, exp_value), str(lg))
        rep_blocked = sum(rep_self.values())
        C.check(abs(exp_value - rep_blocked) <= max(1, sum(calls_of.values())),
                "the legend's blocked width = report's self time of the blocking functions "
                "(%d ns)" % rep_blocked, "%d != %d" % (exp_value, rep_blocked))
        W.shot(d, art, "flame-blocked")
        tips = {}
        for name in ("pthread_cond_wait", "pool_thread"):
            d.execute_script("var n = arguments[0]; var g = Array.from(document.querySelectorAll("
                             "'#flame-chart g.frame')).find(function (g) { return "
                             "g.getAttribute('name') === n;"
                             " }); if (g) g.dispatchEvent(new MouseEvent('mouseover', {bubbles: true}));",
                             name)
            tips[name] = d.execute_script("var t = document.getElementById('flame-tip'); return "
                                          "t.hidden ? null : t.firstChild.textContent")
        C.check((tips["pthread_cond_wait"] or "").startswith("pthread_cond_wait (blocked"),
                "run page: a blocked frame's tooltip says blocked", str(tips))
        C.check(tips["pool_thread"] == "pool_thread",
                "run page: a program frame's tooltip does not", str(tips))
        d.execute_script("var s = document.getElementById('flame-search'); "
                         "s.value = '^nanosleep$'; s.dispatchEvent(new Event('input'));")
        hl = wait_for(d, "var f = Array.from(document.querySelectorAll('#flame-chart g.frame'))"
                      ".filter(function (g) { return g.getAttribute('name') === 'nanosleep'; })"
                      ".map(function (g) { return g.querySelector('rect').getAttribute('fill'); });"
                      " return f.length && f.every(function (c) { return c.toLowerCase() === "
                      "'#e600e6'; }) ? f : null", "search highlight", 10)
        C.check(bool(hl), "run page: a search highlights a blocked frame as any other")
        W.shot(d, art, "flame-blocked-search")
        errs = W.console_errors(d)
        C.check(not errs, "run page: no console errors", str(errs))
        # ---- ptcall html from file:// (the embedded answers, flame.js without a server) ----
        html = os.path.join(work, "blocked.html")
        sh([ptcall, "html", "-o", html, trace])
        d.get("file://" + html + "#/runs/1")
        W.wait_ready(d, "html file run page")
        fills = wait_for(d, "var b = document.getElementById('flame-chart'); if (!b || "
                         "!b.querySelectorAll('g.frame').length) return null; return Array.from("
                         "b.querySelectorAll('g.frame')).map(function (g) { return "
                         "[g.getAttribute('name'), g.querySelector('rect').getAttribute('fill')]; })",
                         "the html file's flame graph") or []
        blk = [f for n, f in fills if n in blocking]
        lg = d.execute_script("var l = document.getElementById('flame-legend'); return l ? "
                              "[l.hidden, +l.dataset.frames, +l.dataset.value] : null")
        C.check(blk and all(f.lower() == BLOCKED for f in blk) and
                not [n for n, f in fills if n not in blocking and f.lower() == BLOCKED] and
                lg == [False, exp_frames, exp_value],
                "ptcall html (file://): the blocked frames coloured, the same legend (%d frames)"
                % exp_frames, "%s %s" % (blk[:4], lg))
        W.shot(d, art, "flame-blocked-html")
    finally:
        srv.stop()
        d.quit()
    print("flame-blocked: %d passed, %d failed" % (C.passed, C.failed))
    return 1 if C.failed else 0


if __name__ == "__main__":
    sys.exit(main())
