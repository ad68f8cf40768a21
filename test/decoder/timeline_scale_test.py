#!/usr/bin/env python3
"""decoder-timeline-scale: the timeline's answers at a bounded cost, through `ptcall serve`'s
API on a real multi-threaded trace, with a tiny decode budget ($PTCALL_TIMELINE_BUDGET) so that
the small trace behaves as a huge one: a click on the longest calls (main, work) is exact
(duration, self, calls made equal `ptcall export --format jsonl`'s) though only part of it is
decoded (children_calls < calls); a window past the budget is drawn from the index; the
server keeps the index open (its file deleted is not built again) and still notices a trace
changed (built again) or gone (410); first requests at once build it once; a damaged index is built again, never read; bad
arguments get 400 with a one-line message."""
import argparse, json, os, shutil, subprocess, sys, urllib.error, urllib.request

ap = argparse.ArgumentParser()
ap.add_argument("--ptcall", required=True)
ap.add_argument("--cc", required=True)
ap.add_argument("--src", required=True)
ap.add_argument("--work", required=True)
a = ap.parse_args()
W = a.work
shutil.rmtree(W, ignore_errors=True)
os.makedirs(W)
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
copy = os.path.join(W, "copy.ptrace")
db = os.path.join(W, "db.sqlite")
env = dict(os.environ, PTCALL_BUFFER_SIZE="16384", PTCALL_BLOCKING="0")
sh([a.ptcall, "record", "-q", "--backend", "soft", "-o", trace, "--", exe, "4000"], env=env)
sh([a.ptcall, "record", "-q", "--backend", "soft", "-o", copy, "--", exe, "300"], env=env)
sh([a.ptcall, "db", "add", "--db", db, trace])
sh([a.ptcall, "db", "add", "--db", db, copy])
full = [json.loads(l) for l in sh([a.ptcall, "export", trace, "--format", "jsonl"]).splitlines()]
cache = os.path.join(W, "cache")
idxdir = os.path.join(cache, "ptcall", "timeline")


def serve(budget="4096"):
    env = dict(os.environ, XDG_CACHE_HOME=cache, PTCALL_TIMELINE_BUDGET=budget)
    p = subprocess.Popen([a.ptcall, "serve", "--db", db, "--listen", "127.0.0.1:0"],
                         stdout=subprocess.PIPE, text=True, env=env)
    return p, p.stdout.readline().split()[2].rstrip("/")


def api(url, path):
    try:
        with urllib.request.urlopen(url + path, timeout=120) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def indexes():
    return sorted(os.listdir(idxdir)) if os.path.isdir(idxdir) else []


srv, url = serve()
try:
    # the trace's first requests at once: one builds the index, the others wait for it (two builds
    # in one process would write the same temporary file)
    # (a race on main's code: three rounds, the trace touched before each so that its index
    # is built again)
    import threading, time
    got = []
    for r in range(3):
        os.utime(trace, (time.time() + r + 1, time.time() + r + 1))
        th = [threading.Thread(target=lambda: got.append(api(url, "/api/v1/runs/1/timeline")))
              for _ in range(8)]
        for t in th:
            t.start()
        for t in th:
            t.join()
    check([g[0] for g in got] == [200] * 24, "3 x 8 first requests at once: all answered (%s)"
          % [(g[0], g[1].get("error")) for g in got if g[0] != 200][:2])
    s, whole = api(url, "/api/v1/runs/1/timeline?px=1000")
    check(s == 200 and whole["summarised"], "the whole run past the budget is drawn from the "
          "index (status %d, summarised %s)" % (s, whole.get("summarised")))
    T0, T1 = whole["span"]
    threads = {t["index"]: t for p in whole["processes"] for t in p["threads"]}
    tids = {i: t["tid"] for i, t in threads.items()}
    # the full decode's times are since the recording began: the offset from a worker's
    # outermost call, which no window clips
    calls = full
    for ti, t in threads.items():
        top = [c for c in calls if c["tid"] == t["tid"] and c["depth"] == 0]
        items0 = [it for it in t["items"] if it[2] == 0 and not it[6] & 4]
        if len(top) == 1 and len(items0) == 1:
            off = items0[0][0] - top[0]["start"]
            break
    for ti in sorted(threads):
        for depth in (0, 1):
            # the middle of the thread's first call at this depth: the middle of the thread
            # may fall in main's wait in pthread_join, where it has no call at depth 1 (a
            # worker scheduled late made main wait 5 of its 7.6 ms in a CI run)
            first = [k for k in calls if k["tid"] == tids[ti] and k["depth"] == depth]
            mid = (first[0]["start"] + off + first[0]["duration"] // 2 if first else
                   (threads[ti]["first"] + threads[ti]["last"]) // 2)
            s, c = api(url, "/api/v1/runs/1/timeline/call?thread=%d&t=%d&depth=%d"
                       % (ti, mid, depth))
            want = [k for k in calls if k["tid"] == tids[ti] and k["depth"] == depth and
                    k["start"] + off <= mid < k["start"] + off + k["duration"]]
            kids = [k for k in calls if k["tid"] == tids[ti] and k["depth"] == depth + 1 and
                    want and want[0]["start"] <= k["start"] and
                    k["start"] + k["duration"] <= want[0]["start"] + want[0]["duration"]]
            ok = (s == 200 and len(want) == 1 and c["duration"] == want[0]["duration"] and
                  c["self"] == want[0]["self"] and c["calls"] == len(kids) and
                  c["function"]["name"] == want[0]["function"])
            check(ok, "thread %d depth %d: %s's duration %s, self %s, calls %s equal the full "
                  "decode's (%s)" % (ti, depth, c.get("function", {}).get("name"),
                                     c.get("duration"), c.get("self"), c.get("calls"),
                                     [(w["function"], w["duration"], w["self"], len(kids))
                                      for w in want]))
            if depth == 1:
                check(s == 200 and 0 < c.get("children_calls", -1) < c["calls"],
                      "thread %d: work's callees broken down for part of its calls only "
                      "(%s of %s): the middle came from the index" %
                      (ti, c.get("children_calls"), c.get("calls")))
    mid = (T0 + T1) // 2
    # the index stays open in the server: its file deleted is not built again
    before = indexes()
    for f in before:
        os.unlink(os.path.join(idxdir, f))
    s, _ = api(url, "/api/v1/runs/1/timeline?px=1000")
    check(s == 200 and indexes() == [], "the index kept open answers (its file deleted: %d, "
          "files %s)" % (s, indexes()))
    # the trace touched (same bytes, later time): the open index is not trusted, the file
    # hashed again and the index built again
    os.utime(trace)
    s, again = api(url, "/api/v1/runs/1/timeline?px=1000")
    check(s == 200 and indexes() == before and again["processes"] == whole["processes"],
          "a trace modified since is checked and its index built again (%d, %s)"
          % (s, indexes()))
    # a trace gone after it was stored, or replaced by other bytes of its size: 410, even
    # with its index open
    s, _ = api(url, "/api/v1/runs/2/timeline?px=1000")
    check(s == 200, "the copy's timeline (%d)" % s)
    data = open(copy, "rb").read()
    os.unlink(copy)
    s, e = api(url, "/api/v1/runs/2/timeline?px=1000")
    check(s == 410 and "\n" not in e.get("error", "\n"), "trace gone: 410 (%d: %s)"
          % (s, e.get("error")))
    with open(copy, "wb") as f:
        f.write(data[:-100] + bytes(100))
    s, e = api(url, "/api/v1/runs/2/timeline/call?thread=0&t=%d&depth=0" % mid)
    check(s == 410, "trace replaced by other bytes of its size: 410 (%d: %s)"
          % (s, e.get("error")))
    # bad arguments: 400 and one line
    for q in ("?t0=%d&t1=%d" % (T1, T0), "?px=0", "?px=1000000000", "?t0=abc", "?t1=-5",
              "?threads=99", "?threads=x", "/call?thread=99&t=%d&depth=0" % mid,
              "/call?thread=0&t=abc&depth=0", "/call?thread=0&t=%d" % mid,
              "/call?thread=0&t=%d&depth=99999999999" % mid):
        s, e = api(url, "/api/v1/runs/1/timeline" + q)
        msg = e.get("error", "")
        check(s == 400 and msg and "\n" not in msg, "%s: 400, %r" % (q, msg))
finally:
    srv.terminate()
    srv.wait(20)

# a damaged index (another server, nothing open): built again from the trace, never read
for how in ("garbage", "cut"):
    for f in indexes():
        p = os.path.join(idxdir, f)
        b = open(p, "rb").read()
        with open(p, "wb") as o:
            o.write(b[:8] + os.urandom(len(b) - 8) if how == "garbage" else b[:len(b) // 2])
    srv, url = serve()
    try:
        s, w = api(url, "/api/v1/runs/1/timeline?px=1000")
        check(s == 200 and w["processes"] == whole["processes"],
              "index %s: built again, the same answer (%d)" % (how, s))
        check(all(open(os.path.join(idxdir, f), "rb").read(8) == b"PTCTLIX\n" and
                  os.path.getsize(os.path.join(idxdir, f)) > 1000 for f in indexes()),
              "index %s: the file is whole again" % how)
    finally:
        srv.terminate()
        srv.wait(20)

# at most 4 indexes stay open, the least recently used dropped first: with 5 more runs seen in
# turn and their files deleted, only the first one's is built again when asked again
extra = []
for k in range(5):
    t = os.path.join(W, "x%d.ptrace" % k)
    sh([a.ptcall, "record", "-q", "--backend", "soft", "-o", t, "--", exe, str(50 + k)], env=env)
    sh([a.ptcall, "db", "add", "--db", db, t])
    extra.append(3 + k)  # runs 3..7
srv, url = serve()
try:
    for r in extra:
        api(url, "/api/v1/runs/%d/timeline?px=100" % r)
    for f in indexes():
        os.unlink(os.path.join(idxdir, f))
    statuses = []
    for r in extra[1:]:  # the 4 kept: answered from memory, no file written
        statuses.append(api(url, "/api/v1/runs/%d/timeline?px=100" % r)[0])
    kept = indexes()
    statuses.append(api(url, "/api/v1/runs/%d/timeline?px=100" % extra[0])[0])
    check(statuses == [200] * 5 and kept == [] and len(indexes()) == 1,
          "4 indexes kept open, the least recently used built again (%s, %s, %s)"
          % (statuses, kept, indexes()))
finally:
    srv.terminate()
    srv.wait(20)

# the budget itself is checked
r = subprocess.run([a.ptcall, "serve", "--db", db, "--listen", "127.0.0.1:0"],
                   env=dict(os.environ, PTCALL_TIMELINE_BUDGET="lots"), capture_output=True,
                   text=True, timeout=30)
check(r.returncode != 0 and "PTCALL_TIMELINE_BUDGET" in r.stderr and r.stderr.count("\n") <= 2,
      "a bad $PTCALL_TIMELINE_BUDGET is refused: %r" % r.stderr.strip())
print("%d failure(s)" % fails)
sys.exit(1 if fails else 0)
