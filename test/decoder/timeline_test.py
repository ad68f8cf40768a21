#!/usr/bin/env python3
"""decoder-timeline: windows decoded from the timeline's index (decoder/tl_window.c) against a
full decode of the same real multi-threaded trace (`ptcall export --format jsonl`), through
`ptcall serve`'s API (docs/web.md): every call a full-detail window shows equals a call of
the full decode overlapping the window (and none is missing); calls open across the edges are
clipped and marked; summary blocks' counts add up to the calls overlapping a coarse window;
windows starting mid-stack show the stack the full decode has there."""
import argparse, json, os, subprocess, sys, urllib.request

ap = argparse.ArgumentParser()
ap.add_argument("--ptcall", required=True)
ap.add_argument("--cc", required=True)
ap.add_argument("--src", required=True)
ap.add_argument("--work", required=True)
a = ap.parse_args()
os.makedirs(a.work, exist_ok=True)
W = a.work
fails = 0


def check(cond, what):
    global fails
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        fails += 1


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True, **kw).stdout


exe = os.path.join(W, "mt")
sh([a.cc, "-O1", "-g", os.path.join(a.src, "test/decoder/timeline/mt.c"), "-o", exe, "-lpthread"])
trace = os.path.join(W, "mt.ptrace")
db = os.path.join(W, "db.sqlite")
for f in (trace, db):
    if os.path.exists(f):
        os.unlink(f)
# small buffers: many chunks per thread, so windows start mid-stack
env = dict(os.environ, PTCALL_BUFFER_SIZE="16384")
sh([a.ptcall, "record", "-q", "--backend", "soft", "-o", trace, "--", exe, "3000"], env=env)
sh([a.ptcall, "db", "add", "--db", db, trace])
full = [json.loads(l) for l in sh([a.ptcall, "export", trace, "--format", "jsonl"]).splitlines()]
env = dict(os.environ, XDG_CACHE_HOME=os.path.join(W, "cache"))
srv = subprocess.Popen([a.ptcall, "serve", "--db", db, "--listen", "127.0.0.1:0"],
                       stdout=subprocess.PIPE, text=True, env=env)
url = srv.stdout.readline().split()[2].rstrip("/")


def api(path):
    with urllib.request.urlopen(url + path, timeout=120) as r:
        return json.loads(r.read())


try:
    whole = api("/api/v1/runs/1/timeline?px=1000")
    T0, T1 = whole["span"]
    threads = {t["index"]: t for p in whole["processes"] for t in p["threads"]}
    check(len(threads) == 4, "4 threads in the timeline (%d)" % len(threads))
    check(sum(1 for t in threads.values() if t["name"] == "tl-worker") == 3,
          "the workers' names (pthread_setname_np) name their tracks")
    idx = {t["tid"]: i for i, t in threads.items()}
    # the full decode's times are since the recording began: the offset from a call that no
    # window edge clips (the outermost call of a worker thread)
    wk = [c for c in full if c["depth"] == 0 and c["function"] == "worker"][0]
    fine = api("/api/v1/runs/1/timeline?px=100000&threads=%d" % idx[wk["tid"]])
    it0 = [i for t in fine["processes"][0]["threads"] for i in t["items"] if i[2] == 0]
    check(len(it0) == 1, "one outermost call on a worker's track")
    off = it0[0][0] - wk["start"]
    calls = [(idx[c["tid"]], c["depth"], c["function"], c["start"] + off,
              c["start"] + off + c["duration"]) for c in full]
    span = T1 - T0
    nwin = 0
    for k in range(1, 9):  # windows across the run, a few thousand ns each: full detail
        w0 = T0 + span * k // 9
        w1 = w0 + 4000
        px = 4000  # 1 ns per pixel: every call is at least a pixel wide
        d = api("/api/v1/runs/1/timeline?t0=%d&t1=%d&px=%d" % (w0, w1, px))
        fn = d["functions"]
        got = set()
        for p in d["processes"]:
            for t in p["threads"]:
                for s, e, dep, f, cnt, busy, fl in t["items"]:
                    check(cnt == 1 and not fl & 4, "window %d: no block at 1 ns per pixel" % k) \
                        if cnt != 1 else None
                    got.add((t["index"], dep, fn[str(f)]["name"], s, e, fl & 3))
        want = set()
        for ti, dep, name, s, e in calls:
            if e <= w0 or s >= w1 or (e == s and s < w0):
                continue
            fl = (1 if s < w0 else 0) | (2 if e > w1 else 0)
            want.add((ti, dep, name, max(s, w0), min(e, w1), fl))
        missing, extra = want - got, got - want
        check(not missing and not extra,
              "window %d [%d, %d): %d calls equal the full decode's (missing %s, extra %s)"
              % (k, w0, w1, len(want), sorted(missing)[:3], sorted(extra)[:3]))
        mid = [g for g in got if g[5] & 1]
        check(bool(mid), "window %d starts mid-stack: %d calls open at its start, clipped"
              % (k, len(mid)))
        nwin += 1
    # a coarse window: blocks and calls together hold every call overlapping it, per depth
    leaves = sorted(c[3] for c in calls if c[2] == "leaf")
    w0 = leaves[len(leaves) // 2]
    w1 = w0 + 200000
    d = api("/api/v1/runs/1/timeline?t0=%d&t1=%d&px=50" % (w0, w1))
    blocks = 0
    for p in d["processes"]:
        for t in p["threads"]:
            per = {}
            for s, e, dep, f, cnt, busy, fl in t["items"]:
                per[dep] = per.get(dep, 0) + cnt
                blocks += 1 if fl & 4 else 0
            want = {}
            for ti, dep, name, s, e in calls:
                if ti == t["index"] and e > w0 and s < w1:
                    want[dep] = want.get(dep, 0) + 1
            check(per == want, "coarse window, thread %d: counts per depth %s equal the full "
                  "decode's %s" % (t["index"], per, want))
    check(blocks > 0, "the coarse window has summary blocks (%d)" % blocks)
    # one call: its duration and self time as the full decode has them
    c = [c for c in full if c["depth"] == 1 and c["function"] == "work"][0]
    r = api("/api/v1/runs/1/timeline/call?thread=%d&t=%d&depth=1"
            % (idx[c["tid"]], c["start"] + off + c["duration"] // 2))
    kids = [k for k in full if k["tid"] == c["tid"] and k["depth"] == 2 and
            k["start"] >= c["start"] and k["start"] < c["start"] + c["duration"]]
    print("     call: %d calls made (full decode: %d)" % (r["calls"], len(kids)))
    check(r["duration"] == c["duration"] and r["self"] == c["self"],
          "the call's duration %d and self %d equal the full decode's (%d, %d)"
          % (r["duration"], r["self"], c["duration"], c["self"]))
    check(r["function"]["line"] == 8, "the call's source line (mt.c:8)")
finally:
    srv.terminate()
    srv.wait(20)
print("decoder-timeline: %s" % ("FAILED (%d)" % fails if fails else "ok"))
sys.exit(1 if fails else 0)
