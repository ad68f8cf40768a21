#!/usr/bin/python3
"""The exported SVG flame graph's zoom and search (issue 27 item 2; outputs/svg_script.js),
opened on its own from file:// in headless Chromium.

  svg_test.py --build BUILD --src SRC --work DIR --artefacts DIR

Builds test/web/flame_threads.c (threads main and "crunch") and test/web/hostile.c (function
names that are markup) with ptcall-cc, records them and exports `--format svg --weight
self` and `--svg-static`. Then:

  - the SVG holds one script, exactly outputs/svg_script.js, and is well-formed XML;
    --svg-static holds none and no control;
  - a click on crunch_outer's frame makes its rect the root's width, a frame beside it (main)
    hidden, its callers kept; "Reset zoom" restores every frame's geometry and label;
  - "Search" (through the page's prompt) for crunch_leaf highlights its frames and says
    "Matched: X %", X = crunch_leaf's total time / the sum of every function's self time
    from `ptcall report --format json`; Ctrl-F searches for main the same way; a click on
    "Clear search" restores the colours;
  - hovering a frame writes its name, weight and share under the graph;
  - the hostile program's SVG: no alert opens when it is loaded, zoomed to a hostile frame
    and searched for one; its names stay text (data-name, label) and no element appears that
    the SVG did not hold.

Screenshots go to --artefacts. Prints 'ok' / 'FAIL' per check, then a summary line.
"""

import argparse
import importlib.util
import json
import os
import sys
import time
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))


def load_module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


W = load_module("web_test", os.path.join(HERE, "web_test.py"))
C = W.C
sh = W.sh
SVG_NS = "{http://www.w3.org/2000/svg}"

FRAMES = """
return Array.from(document.querySelectorAll('g.frame')).map(function (g) {
  var r = g.querySelector('rect'), t = g.querySelector('text');
  return {name: g.getAttribute('data-name'), depth: +g.getAttribute('data-depth'),
          weight: +g.getAttribute('data-weight'), x: +r.getAttribute('x'),
          w: +r.getAttribute('width'), fill: r.getAttribute('fill'),
          shown: g.getAttribute('display') !== 'none', opacity: g.getAttribute('opacity'),
          label: t ? t.textContent : null};
});"""

CLICK = """
var n = arguments[0], id = arguments[1];
var el = id ? document.getElementById(id) : Array.from(document.querySelectorAll('g.frame'))
  .find(function (g) { return g.getAttribute('data-name') === n; });
if (!el) return false;
(id ? el : el.querySelector('rect')).dispatchEvent(new MouseEvent('click', {bubbles: true}));
return true;"""

STATE = """
var m = document.getElementById('ptc-matched'), r = document.getElementById('ptc-reset'),
    s = document.getElementById('ptc-search'), d = document.getElementById('ptc-details');
return {matched: m ? m.textContent : null, weight: m ? m.getAttribute('data-weight') : null,
        reset: r ? r.getAttribute('display') !== 'none' : null, search: s ? s.textContent : null,
        details: d ? d.textContent : null,
        scripts: document.getElementsByTagNameNS('http://www.w3.org/2000/svg', 'script').length,
        kinds: Array.from(new Set(Array.from(document.getElementsByTagName('*'))
                                     .map(function (e) { return e.localName; }))).sort()};"""


def by_name(frames, name):
    return [f for f in frames if f["name"] == name]


def prompt_answer(d, text, what):
    """Answers the page's prompt with text; False when none opened."""
    end = time.time() + 5
    while time.time() < end:
        try:
            a = d.switch_to.alert
            a.send_keys(text)
            a.accept()
            return True
        except Exception:
            time.sleep(0.1)
    C.fail("%s: no prompt opened" % what)
    return False


def expected_share(rep, name):
    """name's total time (all its rows) over the sum of every function's self time: the width
    its frames take in a flame graph weighed by self time (report's figures)."""
    fs = [f for f in rep["functions"] if f["name"] == name]
    tot = sum(f["total"] for f in fs)
    allself = sum(f["self"] for f in rep["functions"])
    calls = sum(f["calls"] for f in rep["functions"])
    return tot, allself, calls


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--artefacts", required=True)
    a = ap.parse_args()
    build, src, work, art = (os.path.abspath(p) for p in (a.build, a.src, a.work, a.artefacts))
    os.makedirs(work, exist_ok=True)
    os.makedirs(art, exist_ok=True)
    ptcall = os.path.join(build, "tools", "ptcall")
    cc = os.path.join(build, "bin", "ptcall-cc")
    script = open(os.path.join(src, "outputs", "svg_script.js"), encoding="utf-8").read()
    exe = os.path.join(work, "flame_threads")
    sh([cc, "-O2", "-g", "-pthread", os.path.join(HERE, "flame_threads.c"), "-o", exe])
    trace = os.path.join(work, "ft.ptc")
    sh([ptcall, "record", "-q", "--backend", "soft", "-o", trace, "--", exe, "200"], cwd=work)
    rep = json.loads(sh([ptcall, "report", "--format", "json", "--top", "0", trace]))
    svg = os.path.join(work, "ft.svg")
    static = os.path.join(work, "ft-static.svg")
    sh([ptcall, "export", "--format", "svg", "--weight", "self", "-o", svg, trace])
    sh([ptcall, "export", "--format", "svg", "--weight", "self", "--svg-static", "-o", static,
        trace])

    # ---- the files as XML ------------------------------------------------------------------
    root = ET.parse(svg).getroot()
    scripts = list(root.iter(SVG_NS + "script"))
    C.check(len(scripts) == 1 and scripts[0].text == "\n" + script,
            "the SVG holds one script, outputs/svg_script.js exactly (xml.etree)")
    sroot = ET.parse(static).getroot()
    C.check(not list(sroot.iter(SVG_NS + "script")) and
            not [e for e in sroot.iter() if (e.get("id") or "").startswith("ptc-")],
            "--svg-static: no script and no control")

    d = W.browser()
    try:
        # ---- zoom ------------------------------------------------------------------------
        d.get("file://" + svg)
        time.sleep(0.3)
        f0 = d.execute_script(FRAMES)
        st = d.execute_script(STATE)
        C.check(st["scripts"] == 1 and st["reset"] is False and st["search"] == "Search",
                "loaded: one script, Search shown, Reset zoom hidden", str(st))
        rootf = [f for f in f0 if f["depth"] == 0][0]
        outer = by_name(f0, "crunch_outer")
        if not C.check(len(outer) == 1 and by_name(f0, "main"), "frames crunch_outer and main"):
            return 1
        W.shot(d, art, "svg-loaded")
        d.execute_script(CLICK, "crunch_outer", None)
        f1 = d.execute_script(FRAMES)
        z = by_name(f1, "crunch_outer")[0]
        C.check(abs(z["w"] - rootf["w"]) < 0.01 and abs(z["x"] - rootf["x"]) < 0.01 and
                z["shown"], "zoom: crunch_outer's rect takes the root's width (%.3f px)" %
                rootf["w"], str(z))
        C.check(not by_name(f1, "main")[0]["shown"] and
                not any(f["shown"] for f in by_name(f1, "main_outer")),
                "zoom: main and main_outer (beside it) are hidden")
        anc = [f for f in f1 if f["depth"] < z["depth"] and f["shown"]]
        C.check(sorted(f["name"] for f in anc) == ["all", "worker"] and all(f["shown"] and f["opacity"] == "0.5" and abs(f["w"] - rootf["w"]) < 0.01
                            for f in anc),
                "zoom: its callers (%s) stay, full width, faded" % [f["name"] for f in anc])
        leaf = by_name(f1, "crunch_leaf")
        C.check(leaf and leaf[0]["label"] == "crunch_leaf" and leaf[0]["shown"],
                "zoom: crunch_leaf, under it, is shown and labelled", str(leaf))
        C.check(d.execute_script(STATE)["reset"] is True, "zoom: Reset zoom is shown")
        W.shot(d, art, "svg-zoomed")
        d.execute_script(CLICK, None, "ptc-reset")
        f2 = d.execute_script(FRAMES)
        C.check(f2 == f0, "Reset zoom: every frame's geometry, label and visibility as loaded",
                str([(x, y) for x, y in zip(f0, f2) if x != y][:2]))
        C.check(d.execute_script(STATE)["reset"] is False, "Reset zoom: hidden again")

        # ---- search ----------------------------------------------------------------------
        d.execute_script(CLICK, None, "ptc-search")
        if prompt_answer(d, "crunch_leaf", "Search"):
            st = d.execute_script(STATE)
            tot, allself, calls = expected_share(rep, "crunch_leaf")
            share = 100.0 * tot / allself
            got = int(st["weight"] or -1)
            C.check(abs(got - tot) <= calls and
                    st["matched"].startswith("Matched: %.2f %%" % (100.0 * got / rootf["weight"])),
                    "search crunch_leaf: matched weight = report's total of crunch_leaf (%d ns)"
                    % tot, str(st))
            shown = float(st["matched"].split()[1])
            C.check(abs(shown - share) <= 0.01, "search crunch_leaf: 'Matched: %.2f %%' = its "
                    "share from ptcall report" % share, st["matched"])
            f3 = d.execute_script(FRAMES)
            C.check(all(f["fill"] == "rgb(230,0,230)" for f in by_name(f3, "crunch_leaf")) and
                    all(f["fill"] != "rgb(230,0,230)" for f in f3 if f["name"] != "crunch_leaf"),
                    "search crunch_leaf: its frames, and only they, are highlighted")
            C.check(st["search"] == "Clear search", "search: the control offers Clear search")
            W.shot(d, art, "svg-search")
            d.execute_script(CLICK, None, "ptc-search")
            f4 = d.execute_script(FRAMES)
            C.check(f4 == f0 and d.execute_script(STATE)["matched"] == "",
                    "Clear search: colours as loaded, no Matched line")
        from selenium.webdriver.common.action_chains import ActionChains
        from selenium.webdriver.common.keys import Keys
        ActionChains(d).key_down(Keys.CONTROL).send_keys("f").key_up(Keys.CONTROL).perform()
        if prompt_answer(d, "^main$", "Ctrl-F"):
            st = d.execute_script(STATE)
            tot, allself, calls = expected_share(rep, "main")
            shown = float((st["matched"] or "x 0").split()[1])
            C.check(abs(shown - 100.0 * tot / allself) <= 0.01 and
                    abs(int(st["weight"]) - tot) <= calls,
                    "Ctrl-F ^main$: 'Matched: %.2f %%' = main's share from ptcall report" %
                    (100.0 * tot / allself), str(st))
        # ---- details on hover ------------------------------------------------------------
        d.execute_script("var g = Array.from(document.querySelectorAll('g.frame')).find("
                         "function (g) { return g.getAttribute('data-name') === 'crunch_leaf'; });"
                         "g.querySelector('rect').dispatchEvent(new MouseEvent('mouseover', "
                         "{bubbles: true}));")
        st = d.execute_script(STATE)
        title = [t.text for g in root.iter(SVG_NS + "g") if g.get("data-name") == "crunch_leaf"
                 for t in g.iter(SVG_NS + "title")][0]
        C.check(st["details"] == title and title.startswith("crunch_leaf (") and "%" in title,
                "hover: the details line shows the frame's name, weight and share", str(st))
        errs = W.console_errors(d)
        C.check(not errs, "no console errors", str(errs))

        # ---- --svg-static ----------------------------------------------------------------
        d.get("file://" + static)
        time.sleep(0.3)
        s0 = d.execute_script(FRAMES)
        d.execute_script(CLICK, "crunch_outer", None)
        C.check(d.execute_script(STATE)["scripts"] == 0 and
                d.execute_script(FRAMES) == s0, "--svg-static: no script, a click changes nothing")

        # ---- hostile names ---------------------------------------------------------------
        hexe = os.path.join(work, "hostile")
        sh([cc, "-O2", "-g", os.path.join(HERE, "hostile.c"), "-o", hexe])
        ht = os.path.join(work, "hostile.ptc")
        sh([ptcall, "record", "-q", "--backend", "soft", "-o", ht, "--", hexe, "60"], cwd=work)
        hsvg = os.path.join(work, "hostile.svg")
        sh([ptcall, "export", "--format", "svg", "--weight", "calls", "-o", hsvg, ht])
        d.get("file://" + hsvg)
        time.sleep(0.3)
        W.no_alert(d, "hostile svg loaded")
        kinds0 = d.execute_script(STATE)["kinds"]
        for name in W.HOSTILE:
            if not d.execute_script(CLICK, name, None):
                C.fail("hostile svg: no frame named %r" % name)
                continue
            W.no_alert(d, "hostile svg zoomed to %r" % name)
            f = by_name(d.execute_script(FRAMES), name)
            C.check(f and f[0]["label"] == name, "hostile svg: zoomed, %r is its label, as text"
                    % name, str(f))
            d.execute_script(CLICK, None, "ptc-reset")
        d.execute_script("window.ptcallSvg.search(arguments[0])", "alert(1")
        W.no_alert(d, "hostile svg searched")
        st = d.execute_script(STATE)
        C.check(st["matched"].startswith("Matched: ") and st["kinds"] == kinds0 and
                st["scripts"] == 1, "hostile svg: a substring search that is no regular "
                "expression matches, and no element appears (%s)" % kinds0, str(st))
        W.shot(d, art, "svg-hostile")
        C.check(not W.console_errors(d), "hostile svg: no console errors")
    finally:
        d.quit()
    print("svg: %d passed, %d failed" % (C.passed, C.failed))
    return 1 if C.failed else 0


if __name__ == "__main__":
    sys.exit(main())
