#!/usr/bin/env python3
"""The timeline page (/runs/ID/timeline, web/app/timeline.js) in headless Chromium on a real
multi-threaded trace: the first view shown (timed), thread names, zoom in to single calls
whose durations equal `ptcall export --format jsonl`'s, pan by dragging, search, click a call
for its duration, self time and source line. Screenshots in --artefacts."""
import argparse, json, os, shutil, subprocess, sys, time, urllib.request

ap = argparse.ArgumentParser()
ap.add_argument("--build", required=True)
ap.add_argument("--src", required=True)
ap.add_argument("--work", required=True)
ap.add_argument("--artefacts", required=True)
a = ap.parse_args()
for dname in (a.work, a.artefacts):
    os.makedirs(dname, exist_ok=True)
ptcall = os.path.join(a.build, "tools", "ptcall")
fails = 0


def check(cond, what):
    global fails
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    fails += 0 if cond else 1


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True, **kw).stdout


exe, trace, db = (os.path.join(a.work, n) for n in ("mt", "mt.ptrace", "db.sqlite"))
sh([os.path.join(a.build, "bin", "ptcall-cc"), "-O1", "-g",
    os.path.join(a.src, "test/decoder/timeline/mt.c"), "-o", exe, "-lpthread"])
for f in (trace, db):
    if os.path.exists(f):
        os.unlink(f)
sh([ptcall, "record", "-q", "--backend", "soft", "-o", trace, "--", exe, "3000"],
   env=dict(os.environ, PTCALL_BUFFER_SIZE="16384"))
sh([ptcall, "db", "add", "--db", db, trace])
full = [json.loads(l) for l in sh([ptcall, "export", trace, "--format", "jsonl"]).splitlines()]

from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.options import Options  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402

srv = subprocess.Popen([ptcall, "serve", "--db", db, "--listen", "127.0.0.1:0"],
                       stdout=subprocess.PIPE, text=True,
                       env=dict(os.environ, XDG_CACHE_HOME=os.path.join(a.work, "cache")))
url = srv.stdout.readline().split()[2].rstrip("/")
o = Options()
o.binary_location = shutil.which("chromium")
for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
    o.add_argument(arg)
d = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=o)
d.set_window_size(1400, 1000)


def wait(cond_js, what, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        if d.execute_script("return " + cond_js):
            return True
        time.sleep(0.02)
    check(False, what + ": not within %d s" % timeout)
    return False


def shot(name):
    d.save_screenshot(os.path.join(a.artefacts, "timeline-%s.png" % name))


try:
    t = time.time()
    d.get(url + "/runs/1/timeline")
    wait("document.body.dataset.ready === '1' && !!window.ptcallTimelineData()", "first view")
    first = time.time() - t
    print("     first view: %.0f ms (page: %s ms since navigation)"
          % (first * 1000, d.execute_script("return document.body.dataset.firstMs")))
    shot("first")
    data = d.execute_script("return window.ptcallTimelineData()")
    names = [t["name"] for p in data["processes"] for t in p["threads"]]
    check(names.count("tl-worker") == 3 and len(names) == 4,
          "the tracks are the 4 threads, named as the trace names them: %s" % names)
    check(d.find_element("id", "timeline-canvas").size["height"] > 100, "the canvas is drawn")
    # zoom in to a single leaf call of a worker
    wk = [c for c in full if c["depth"] == 0 and c["function"] == "worker"][0]
    leaf = [c for c in full if c["tid"] == wk["tid"] and c["function"] == "leaf"][500]
    # absolute times: the worker's outermost call as the whole-run view shows it
    idx = [t["index"] for p in data["processes"] for t in p["threads"] if t["tid"] == wk["tid"]][0]
    it0 = [i for p in data["processes"] for t in p["threads"] if t["index"] == idx
           for i in t["items"] if i[2] == 0 and not i[6] & 4]
    off = it0[0][0] - wk["start"]
    c0 = leaf["start"] + off
    steps = []
    for w in (10**7, 10**6, 10**5, 10**4, 2000):
        d.execute_script("document.body.dataset.views = '0'; "
                         "window.ptcallTimelineView(arguments[0], arguments[1])",
                         c0 - w // 2, c0 + w // 2)
        t = time.time()
        wait("document.body.dataset.views === '1'", "zoom to %d ns" % w)
        steps.append((time.time() - t) * 1000 - 120)  # less the debounce
    print("     zoom steps (ms, less the 120 ms debounce): %s" % ["%.0f" % s for s in steps])
    shot("zoomed")
    data = d.execute_script("return window.ptcallTimelineData()")
    items = [i for p in data["processes"] for t in p["threads"] if t["index"] == idx
             for i in t["items"] if i[2] == 3 and i[0] == c0]
    check(len(items) == 1 and items[0][1] - items[0][0] == leaf["duration"],
          "zoomed in, the leaf call is itself: %s ns (jsonl: %d ns)"
          % ([i[1] - i[0] for i in items], leaf["duration"]))
    # click the worker's mid call (depth 2) that holds the leaf
    mid = [c for c in full if c["tid"] == wk["tid"] and c["depth"] == 2 and
           c["start"] <= leaf["start"] < c["start"] + c["duration"]][0]
    canvas = d.find_element("id", "timeline-canvas")
    lay = d.execute_script("""
        var c = document.getElementById('timeline-canvas'), r = c.getBoundingClientRect();
        return [r.width, r.height];""")
    tracks = [t for p in data["processes"] for t in p["threads"]]
    y = 0
    for t in tracks:
        depth = max([i[2] for i in t["items"]] + [0]) + 1
        if t["index"] == idx:
            y += 18 + 2 * 14 + 7
            break
        y += 18 + depth * 14 + 6
    x = (c0 - data["t0"]) * lay[0] / (data["t1"] - data["t0"])
    ActionChains(d).move_to_element_with_offset(canvas, int(x - lay[0] / 2),
                                                int(y - lay[1] / 2)).click().perform()
    wait("document.body.dataset.callReady === '1'", "the clicked call's details")
    dd = {e.get_attribute("data-key"): e.text for e in d.find_elements("css selector",
                                                                        "#timeline-call dd")}
    check(dd.get("function") == "mid" and dd.get("duration_ns") == str(mid["duration"]),
          "the clicked call: %s, %s ns (jsonl: mid, %d ns)" % (dd.get("function"),
                                                               dd.get("duration_ns"),
                                                               mid["duration"]))
    check(dd.get("source", "").endswith("mt.c:7"), "its source line: %s" % dd.get("source"))
    shot("call")
    # search
    box = d.find_element("id", "timeline-search")
    box.send_keys("leaf")
    wait("+document.body.dataset.hits > 0", "search highlights leaf calls")
    check(int(d.execute_script("return document.body.dataset.hits")) > 0, "search finds leaf calls")
    shot("search")
    # pan: drag by 300 px
    before = d.execute_script("return window.ptcallTimelineData().t0")
    d.execute_script("document.body.dataset.views = '0'")
    t = time.time()
    ActionChains(d).move_to_element(canvas).click_and_hold().move_by_offset(300, 0) \
        .release().perform()
    wait("document.body.dataset.views === '1'", "pan")
    print("     pan step: %.0f ms (less the debounce)" % ((time.time() - t) * 1000 - 120))
    after = d.execute_script("return window.ptcallTimelineData().t0")
    check(after < before, "dragging right shows earlier times (%d -> %d)" % (before, after))
    shot("pan")
finally:
    d.quit()
    srv.terminate()
    srv.wait(20)
print("web-timeline: %s" % ("FAILED (%d)" % fails if fails else "ok"))
sys.exit(1 if fails else 0)
