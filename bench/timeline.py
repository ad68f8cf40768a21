#!/usr/bin/env python3
"""The timeline's costs on a big trace (docs/benchmarks.md, Timeline): the index build (the
first request), the whole-run view, zoom steps down to single calls, and the server's RSS.
  bench/timeline.py --build BUILD --trace T [--work DIR]
Make T with test/decoder/timeline/mt.c (ptcall-cc it; `ptcall record -o T -- ./mt N`: about
72 N events)."""
import argparse, json, os, subprocess, time, urllib.request

ap = argparse.ArgumentParser()
ap.add_argument("--build", required=True)
ap.add_argument("--trace", required=True)
ap.add_argument("--work", default="/tmp/ptcall-bench-timeline")
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


try:
    ms, d, n = get("/api/v1/runs/1/timeline?px=1200")
    print("first request (index build + whole view): %.0f ms, %d bytes" % (ms, n))
    ms, d, n = get("/api/v1/runs/1/timeline?px=1200")
    print("whole view, index built: %.0f ms, %d bytes, summarised %s" % (ms, n, d["summarised"]))
    t0, t1 = d["span"]
    c = (t0 + t1) // 2
    w = t1 - t0
    while w > 2000:
        w //= 4
        ms, d, n = get("/api/v1/runs/1/timeline?t0=%d&t1=%d&px=1200" % (c - w // 2, c + w // 2))
        print("zoom %12d ns: %6.0f ms, %8d bytes, summarised %s" % (w, ms, n, d["summarised"]))
    ms, d, n = get("/api/v1/runs/1/timeline?t0=%d&t1=%d&px=1200" % (c, c + w))
    print("pan: %.0f ms" % ms)
    print("index: %d bytes; trace: %d bytes" % (sum(os.path.getsize(os.path.join(r, f))
          for r, _, fs in os.walk(cache) for f in fs), os.path.getsize(a.trace)))
    print("server peak RSS: %d MiB" % rss())
finally:
    srv.terminate()
    srv.wait(20)
