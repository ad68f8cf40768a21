#!/usr/bin/env python3
"""The timeline's costs on a big trace (docs/benchmarks.md, Timeline): the index build (the
first request), the whole-run view, zoom steps down to single calls, clicks on the longest
calls, and the server's peak RSS; with --browser, the same views in headless Chromium timed
in the page (web/app/timeline.js: from the request to the drawn canvas), the first view since
navigation. Each figure is printed with the 1-minute load average beside it (a shared
machine: figures under load are upper bounds).
  bench/timeline.py --build BUILD --trace T [--work DIR] [--browser]
Make T with test/decoder/timeline/mt.c (ptcall-cc it; `ptcall record -o T -- ./mt N`: about
72 N events)."""
import argparse, json, os, shutil, subprocess, time, urllib.request

ap = argparse.ArgumentParser()
ap.add_argument("--build", required=True)
ap.add_argument("--trace", required=True)
ap.add_argument("--work", default="/tmp/ptcall-bench-timeline")
ap.add_argument("--browser", action="store_true")
a = ap.parse_args()
os.makedirs(a.work, exist_ok=True)
ptcall = os.path.join(a.build, "tools", "ptcall")
db = os.path.join(a.work, "db.sqlite")
if os.path.exists(db):
    os.unlink(db)
subprocess.run([ptcall, "db", "add", "--db", db, a.trace], check=True, stdout=subprocess.DEVNULL)
cache = os.path.join(a.work, "cache")
subprocess.run(["rm", "-rf", cache])
srv = subprocess.Popen([ptcall, "serve", "--db", db, "--listen", "127.0.0.1:0"],
                       stdout=subprocess.PIPE, text=True, env=dict(os.environ, XDG_CACHE_HOME=cache))
url = srv.stdout.readline().split()[2].rstrip("/")


def load():
    return "load %s" % open("/proc/loadavg").read().split()[0]


def get(path):
    t = time.time()
    with urllib.request.urlopen(url + path, timeout=600) as r:
        body = r.read()
    return (time.time() - t) * 1000, json.loads(body), len(body)


def rss():
    with open("/proc/%d/status" % srv.pid) as f:
        for l in f:
            if l.startswith("VmHWM"):
                return int(l.split()[1]) // 1024


def browser(span):
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    o = Options()
    o.binary_location = shutil.which("chromium")
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        o.add_argument(arg)
    d = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=o)
    d.set_window_size(1400, 1000)

    def wait(js):
        end = time.time() + 600
        while time.time() < end and not d.execute_script("return " + js):
            time.sleep(0.005)

    try:
        d.get(url + "/runs/1/timeline")
        wait("document.body.dataset.ready === '1' && !!window.ptcallTimelineData()")
        print("browser first view (navigation to drawn canvas): %s ms  [%s]"
              % (d.execute_script("return document.body.dataset.firstMs"), load()))
        api_ms = """return performance.getEntriesByType('resource').filter(function (e) {
            return e.name.indexOf('/timeline?') >= 0; }).map(function (e) {
            return Math.round(e.duration); })"""
        print("  of which the API request: %s ms" % d.execute_script(api_ms))
        for k in range(2):  # the page again: the browser's start-up and script cache warm
            d.get(url + "/runs/1/timeline?again=%d" % k)
            wait("document.body.dataset.ready === '1' && !!window.ptcallTimelineData()")
            print("browser first view, page loaded again: %s ms (API request %s ms)  [%s]"
                  % (d.execute_script("return document.body.dataset.firstMs"),
                     d.execute_script(api_ms), load()))
        t0, t1 = span
        c, w = (t0 + t1) // 2, t1 - t0
        worst = 0

        def step(what, a0, a1):
            nonlocal worst
            d.execute_script("document.body.dataset.views = '0'; "
                             "window.ptcallTimelineView(arguments[0], arguments[1])", a0, a1)
            wait("document.body.dataset.views === '1'")
            ms = int(d.execute_script("return document.body.dataset.lastMs"))
            data = d.execute_script("return {s: window.ptcallTimelineData().summarised}")
            worst = max(worst, ms)
            print("browser %-24s %5d ms (request to drawn canvas), summarised %-5s [%s]"
                  % (what, ms, data["s"], load()))

        while w > 2000:
            w //= 4
            step("zoom to %d ns:" % w, c - w // 2, c + w // 2)
        for k in range(3):
            step("pan %d:" % (k + 1), c + (k + 1) * w // 2 - w // 2, c + (k + 1) * w // 2 + w // 2)
        w = (t1 - t0) // 8
        while w < t1 - t0:
            step("zoom out to %d ns:" % w, max(t0, c - w // 2), min(t1, c + w // 2))
            w *= 4
        print("browser worst step: %d ms" % worst)
    finally:
        d.quit()


try:
    print("trace: %d bytes  [%s]" % (os.path.getsize(a.trace), load()))
    ms, d, n = get("/api/v1/runs/1/timeline?px=1200")
    print("first request (index build + whole view): %.0f ms, %d bytes  [%s]" % (ms, n, load()))
    ms, d, n = get("/api/v1/runs/1/timeline?px=1200")
    print("whole view, index open: %.0f ms, %d bytes, summarised %s  [%s]"
          % (ms, n, d["summarised"], load()))
    span = d["span"]
    t0, t1 = span
    c = (t0 + t1) // 2
    w = t1 - t0
    while w > 2000:
        w //= 4
        ms, d, n = get("/api/v1/runs/1/timeline?t0=%d&t1=%d&px=1200" % (c - w // 2, c + w // 2))
        print("zoom %12d ns: %6.0f ms, %8d bytes, summarised %-5s  [%s]"
              % (w, ms, n, d["summarised"], load()))
    ms, d, n = get("/api/v1/runs/1/timeline?t0=%d&t1=%d&px=1200" % (c, c + w))
    print("pan: %.0f ms  [%s]" % (ms, load()))
    for dep in (0, 1):
        ms, d, n = get("/api/v1/runs/1/timeline/call?thread=0&t=%d&depth=%d" % (c, dep))
        print("click depth %d (%s, %d calls made, %d broken down): %.0f ms  [%s]"
              % (dep, d["function"]["name"], d["calls"], d["children_calls"], ms, load()))
    if a.browser:
        browser(span)
    print("index: %d bytes; trace: %d bytes" % (sum(os.path.getsize(os.path.join(r, f))
          for r, _, fs in os.walk(cache) for f in fs), os.path.getsize(a.trace)))
    print("server peak RSS: %d MiB" % rss())
finally:
    srv.terminate()
    srv.wait(20)
