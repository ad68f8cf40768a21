#!/usr/bin/python3
"""`ptcall serve` against hostile clients and hostile databases (docs/web.md, *Safety*;
docs/reliability.md, *The runs database and the web server*). Everything runs on 127.0.0.1,
bounded in count and in time, and stops by itself; no browser is needed.

  web_hostile.py --build BUILD --work DIR [--ptcall PATH] [--attack-seconds S]

Builds examples/demo.c and test/web/hostile.c with ptcall-cc, records runs of both, stores
them with `ptcall db add` and serves the database. Then:

  - starvation: 300 connections that send a request header one byte every half second and
    300 idle sockets (each reconnected when the server closes it; at most 6,000 connections
    in all, for --attack-seconds, 20 by default), while a normal client asks for a page and
    an API document every 0.3 s: every normal request must be answered within 3 s, and the
    server must still answer afterwards;
  - path, query, header and connection abuse: long and odd paths, ../ and %00, too many
    query arguments, odd values, a body on a GET, methods other than GET, a huge header,
    garbage instead of HTTP, half-closed sockets: each answered with its status (no 500),
    and the server answers normally afterwards;
  - a run's flame graph only from the trace it was stored from: the trace recorded again to
    the same name, a run pointed at /etc/passwd, /dev/zero, a directory or a missing file all
    answer 410 with one and the same message (nothing tells whether a path exists); the
    untouched run still gets its SVG;
  - the diff of runs of two unrelated programs is refused (409) as `ptcall diff` refuses
    them, and compared with allow_different=1;
  - `ptcall serve` of a PostgreSQL URL where no server listens says what to check about the
    server (not that 'ptcall db add' makes a database).

Prints 'ok   ...' / 'FAIL ...' per check and exits 1 when one failed.
"""

import argparse
import json
import os
import resource
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
fails = 0


def check(ok, what, detail=""):
    global fails
    print(("ok   " if ok else "FAIL ") + what + ("" if ok or not detail else ": " + detail),
          flush=True)
    if not ok:
        fails += 1
    return ok


def run(cmd, **kw):
    return subprocess.run([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, **kw)


class Server:
    def __init__(self, ptcall, db, work, name="serve"):
        self.log = os.path.join(work, name + ".stderr")
        # stderr to a file: a pipe nobody reads would stop the server once full
        self.p = subprocess.Popen([ptcall, "serve", "--db", db, "--listen", "127.0.0.1:0"],
                                  stdout=subprocess.PIPE, stderr=open(self.log, "w"), text=True)
        line = self.p.stdout.readline()
        if "http://" not in line:
            self.p.kill()
            raise SystemExit("FAIL ptcall serve did not start: %s %s" % (line, open(self.log).read()))
        self.url = line.split()[2].rstrip("/")
        self.port = int(self.url.rsplit(":", 1)[1])

    def get(self, path, timeout=10):
        try:
            with urllib.request.urlopen(self.url + path, timeout=timeout) as r:
                return r.status, r.headers, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.headers, e.read()

    def api(self, path, timeout=10):
        try:
            st, _, body = self.get(path, timeout)
        except Exception as e:  # noqa: BLE001 - a timeout or a closed connection is an answer too
            return None, {"error": "%s: %s" % (type(e).__name__, e)}
        try:
            return st, json.loads(body)
        except ValueError:
            return st, {"body": body[:200]}

    def raw(self, data, timeout=5, shut=True):
        """data sent as it is; the answer's bytes (b"" when the server closed at once)."""
        s = socket.create_connection(("127.0.0.1", self.port), timeout=timeout)
        try:
            s.sendall(data)
            if shut:
                s.shutdown(socket.SHUT_WR)
            out = b""
            while True:
                try:
                    k = s.recv(65536)
                except (ConnectionResetError, socket.timeout):
                    break
                if not k:
                    break
                out += k
            return out
        finally:
            s.close()

    def alive(self):
        return self.p.poll() is None

    def stop(self):
        self.p.send_signal(signal.SIGTERM)
        try:
            rc = self.p.wait(20)
        except subprocess.TimeoutExpired:
            self.p.kill()
            rc = "killed"
        return rc


def status_of(raw):
    line = raw.split(b"\r\n", 1)[0].split()
    return int(line[1]) if len(line) >= 2 and line[1].isdigit() else None


# ---- starvation ------------------------------------------------------------------------------

def attack(srv, seconds, slow_n=300, idle_n=300, max_conns=6000):
    """slow_n slow-header and idle_n idle connections held open (each reconnected when the
    server closes it) for seconds, while a client asks normally. Returns the normal requests'
    (ok, latency, what) and how many attack connections were made."""
    stop = time.time() + seconds
    made = [0]
    lock = threading.Lock()

    def connect():
        with lock:
            if made[0] >= max_conns:
                return None
            made[0] += 1
        try:
            s = socket.socket()
            s.setblocking(False)
            s.connect_ex(("127.0.0.1", srv.port))
            return s
        except OSError:
            return None

    slow = [connect() for _ in range(slow_n)]
    idle = [connect() for _ in range(idle_n)]
    header = b"GET /api/v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 4000
    pos = [0] * slow_n
    results = []

    def normal():
        k = 0
        while time.time() < stop:
            path = ("/runs", "/api/v1/runs", "/api/v1/hot")[k % 3]
            k += 1
            t0 = time.time()
            try:
                st, _, body = srv.get(path, timeout=3)
                results.append((st == 200, time.time() - t0, "%s: %d" % (path, st)))
            except Exception as e:  # noqa: BLE001 - any failure of a normal request counts
                results.append((False, time.time() - t0, "%s: %s" % (path, e)))
            time.sleep(0.3)

    t = threading.Thread(target=normal)
    time.sleep(1.0)  # the attack in place first
    t.start()
    while time.time() < stop:
        for i, s in enumerate(slow):
            if s is None:
                slow[i] = connect()
                pos[i] = 0
                continue
            try:
                s.send(header[pos[i] % len(header):pos[i] % len(header) + 1])
                pos[i] += 1
            except (BlockingIOError, InterruptedError):
                pass
            except OSError:
                s.close()
                slow[i] = connect()
                pos[i] = 0
        for i, s in enumerate(idle):
            if s is None:
                idle[i] = connect()
                continue
            try:
                if s.recv(1, socket.MSG_PEEK) == b"":
                    raise OSError("closed")
            except (BlockingIOError, InterruptedError):
                pass
            except OSError:
                s.close()
                idle[i] = connect()
        time.sleep(0.5)
    t.join()
    for s in slow + idle:
        if s is not None:
            s.close()
    return results, made[0]


def starvation(srv, seconds):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, 4096) if hard != resource.RLIM_INFINITY else 4096
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    results, made = attack(srv, seconds)
    bad = [r for r in results if not r[0] or r[1] > 3.0]
    worst = max((r[1] for r in results), default=0)
    check(results and not bad and srv.alive(),
          "starvation: %d normal requests during %d s of 300 slow-header and 300 idle "
          "connections (%d attack connections in all): all answered, the slowest in %.2f s"
          % (len(results), seconds, made, worst),
          "%d of %d failed or were late: %s" % (len(bad), len(results),
                                                 "; ".join("%s (%.1f s)" % (r[2], r[1]) for r in bad[:4])))
    time.sleep(0.5)
    st, _ = srv.api("/api/v1/runs", timeout=5)
    check(st == 200, "after the attack the server answers at once", str(st))


# ---- abuse -----------------------------------------------------------------------------------

def abuse(srv):
    cases = [
        ("/" + "a" * 100000, (404, 414, 431)),
        ("/static/../../../../etc/passwd", (404,)),
        ("/static/%2e%2e/%2e%2e/etc/passwd", (404,)),
        ("/api/v1/runs/1%00/flame.svg", (400, 404)),
        ("/api/v1/runs/-1", (400,)),
        ("/api/v1/runs/99999999999999999999999", (400,)),
        ("/api/v1/runs/0x10", (400,)),
        ("/api/v1/runs/1/../../x", (404,)),
        ("/api/v1/functions/%ff%fe", (400,)),
        ("/api/v1/hot?top=-1", (400,)),
        ("/api/v1/hot?top=99999999999999999999999", (400, 200)),
        ("/api/v1/hot?stat=%3Cscript%3E", (400,)),
        ("/api/v1/hot?sort=", (400,)),
        ("/api/v1/hot?since=abc", (400,)),
        ("/api/v1/hot?until=99999999999999999999999", (400,)),
        ("/api/v1/hot?runs=1-", (400,)),
        ("/api/v1/hot?runs=" + "1," * 5000 + "1", (200, 400)),
        ("/api/v1/hot?tag=", (400,)),
        ("/api/v1/hot?tag=%00", (400, 404)),
        ("/api/v1/hot?program=%ff%fe%fd", (200, 404)),
        ("/api/v1/hot?" + "&".join("tag=a%d" % i for i in range(40)), (400,)),
        ("/api/v1/diff?base=1", (400,)),
        ("/api/v1/diff?base=1&new=1&allow_different=yes", (400,)),
        ("/api/v1/diff?base=1&new=999", (404,)),
        ("/api/v2/runs", (404,)),
        ("/runs/1/x", (404,)),
        ("/diff?base=abc", (400,)),
        ("/%", (400, 404)),
    ]
    bad = []
    for path, want in cases:
        try:
            st, _, body = srv.get(path, timeout=20)
        except Exception as e:  # noqa: BLE001
            st, body = str(e), b""
        if st not in want:
            bad.append("%s: %s (want %s)" % (path[:60], st, want))
    check(not bad and srv.alive(), "%d odd paths and queries: each answered with its status, no 500"
          % len(cases), "; ".join(bad[:5]))

    raws = [
        (b"POST /api/v1/runs HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello", (405,)),
        (b"DELETE /api/v1/runs/1 HTTP/1.1\r\nHost: x\r\n\r\n", (405,)),
        (b"GET /api/v1/runs HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000\r\n\r\nab", (400,)),
        (b"GET /api/v1/runs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n", (400,)),
        (b"GET /api/v1/runs HTTP/1.1\r\nHost: x\r\n" + b"X-A: " + b"b" * 200000 + b"\r\n\r\n", (431, 413, 400, None)),
        (b"GET /api/v1/runs HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-%d: y\r\n" % i for i in range(5000)) + b"\r\n", (431, 413, 400, None)),
        (b"\x00\x01\x02\x03garbage\r\n\r\n", (400, None)),
        (b"GET /\r\n\r\n", (400, 505, None)),
        (b"GET / HTTP/9.9\r\nHost: x\r\n\r\n", (505, 400, None)),
        (b"GET /api/v1/runs HTTP/1.1\r\nHost: x\r\n\r\n" * 50, (200,)),
        (b"", (None,)),
    ]
    bad = []
    for data, want in raws:
        try:
            out = srv.raw(data, timeout=15)
        except OSError as e:
            out = str(e).encode()
        st = status_of(out)
        if st not in want:
            bad.append("%r...: %s (want %s)" % (data[:40], st, want))
    check(not bad and srv.alive(), "%d raw requests (methods, a body on a GET, huge headers, "
          "garbage, pipelining, nothing at all): each answered as it should be" % len(raws),
          "; ".join(bad[:5]))
    # half-closed and reset sockets, in a burst
    for i in range(200):
        s = socket.create_connection(("127.0.0.1", srv.port), timeout=5)
        if i % 2:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        s.sendall(b"GET /api/v1/hot HTTP/1.1\r\nHost: x\r\n\r\n")
        s.close()
    st, _, _ = srv.get("/api/v1/runs", timeout=10)
    check(st == 200 and srv.alive(), "200 clients that ask and leave at once (half of them by "
          "a reset): the server still answers")


# ---- flame graphs ----------------------------------------------------------------------------

GONE = "is no longer the same file"


def flames(srv, db, traces, demo, work, ptcall):
    ids = {r[1]: r[0] for r in sqlite3.connect(db).execute("SELECT id, trace FROM runs")}
    good = ids[traces["d16"]]
    st, h, body = srv.get("/api/v1/runs/%d/flame.svg" % good, timeout=60)
    check(st == 200 and h.get("Content-Type", "").startswith("image/svg+xml") and b"<svg" in body,
          "the flame graph of a run whose trace is untouched: SVG")
    # recorded again to the same name: another program's (or another input's) trace
    victim = traces["d18"]
    vid = ids[victim]
    shutil.copy(victim, victim + ".orig")
    p = run([ptcall, "record", "-q", "-o", victim, "--", demo, "12"])
    answers = {}
    if check(p.returncode == 0, "the trace of run %d recorded again to the same name" % vid):
        answers["recorded again"] = srv.api("/api/v1/runs/%d/flame.svg" % vid, timeout=60)
    # runs pointed elsewhere (the database is another input the server must not trust)
    con = sqlite3.connect(db)
    points = {"/etc/passwd": "/etc/passwd", "/dev/zero": "/dev/zero", "a directory": work,
              "a missing file": os.path.join(work, "nonexistent.ptc"),
              "a FIFO": os.path.join(work, "fifo")}
    os.mkfifo(points["a FIFO"])
    other = ids[traces["d20"]]
    for what, path in points.items():
        con.execute("UPDATE runs SET trace = ? WHERE id = ?", (path, other))
        con.commit()
        t0 = time.time()
        answers[what] = srv.api("/api/v1/runs/%d/flame.svg" % other, timeout=30)
        answers[what][1]["took"] = time.time() - t0
    con.execute("UPDATE runs SET trace = ? WHERE id = ?", (traces["d20"], other))
    con.commit()
    con.close()
    msgs = set()
    bad = []
    for what, (st, doc) in answers.items():
        err = doc.get("error", "")
        msgs.add(err.replace(str(vid), "N").replace(str(other), "N").split(" is gone")[1] if " is gone" in err else err)
        if st != 410 or GONE not in err or "record it again and db add it" not in err or doc.get("took", 0) > 10:
            bad.append("%s: %s %s" % (what, st, err[:150]))
    check(not bad and len(msgs) == 1,
          "flame graphs of runs whose trace path is now another recording, /etc/passwd, "
          "/dev/zero, a directory, a missing file or a FIFO: 410 with one message (%d cases)"
          % len(answers), "; ".join(bad[:4]) + (" messages differ: %s" % msgs if len(msgs) > 1 else ""))
    st, _ = srv.api("/api/v1/runs/%d" % vid)
    check(st == 200, "... that run's figures are still served")
    shutil.move(victim + ".orig", victim)
    st, h, body = srv.get("/api/v1/runs/%d/flame.svg" % vid, timeout=60)
    check(st == 200 and b"<svg" in body, "... and its flame graph again once its own trace is back")


# ---- diff and messages -----------------------------------------------------------------------

def diff(srv, db, traces):
    ids = {r[1]: r[0] for r in sqlite3.connect(db).execute("SELECT id, trace FROM runs")}
    a, b, h = ids[traces["d16"]], ids[traces["d20"]], ids[traces["hostile"]]
    st, doc = srv.api("/api/v1/diff?base=%d&new=%d" % (a, b))
    check(st == 200 and doc.get("functions"), "diff of two runs of one program: 200")
    st, doc = srv.api("/api/v1/diff?base=%d&new=%d" % (a, h))
    err = doc.get("error", "")
    check(st == 409 and "no instrumented module in common" in err and "different programs" in err
          and "allow_different=1" in err,
          "diff of runs of two unrelated programs: refused (409) as ptcall diff refuses them",
          "%s %s" % (st, err[:200]))
    st, doc = srv.api("/api/v1/diff?base=%d&new=%d&allow_different=1" % (a, h))
    check(st == 200 and doc.get("functions"), "... compared with allow_different=1")


def pg_down(ptcall, work):
    p = run([ptcall, "serve", "--db", "postgresql://ptcall@127.0.0.1:1/runs", "--listen",
             "127.0.0.1:0"], timeout=60)
    check(p.returncode == 1 and "check that the PostgreSQL server runs" in p.stderr and
          "db add' makes a database" not in p.stderr and p.stderr.count("\n") == 1,
          "serve of a PostgreSQL server that is down: one line saying what to check about the "
          "server", p.stderr.strip()[:300])


# ---- main ------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--ptcall")
    ap.add_argument("--attack-seconds", type=int, default=20)
    a = ap.parse_args()
    ptcall = a.ptcall or os.path.join(a.build, "tools", "ptcall")
    cc = os.path.join(a.build, "bin", "ptcall-cc")
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    demo, hostile = os.path.join(a.work, "demo"), os.path.join(a.work, "hostile")
    for src, out in (("examples/demo.c", demo), ("test/web/hostile.c", hostile)):
        p = run([cc, "-O1", "-o", out, os.path.join(ROOT, src)])
        if p.returncode:
            print("FAIL cannot build %s: %s" % (src, p.stderr[-1000:]))
            return 1
    traces = {}
    for name, cmd in (("d16", [demo, "16"]), ("d18", [demo, "18"]), ("d20", [demo, "20"]),
                      ("hostile", [hostile, "50"])):
        out = os.path.join(a.work, name + ".ptc")
        p = run([ptcall, "record", "-q", "-o", out, "--"] + cmd)
        if p.returncode or not os.path.exists(out):
            print("FAIL cannot record %s: %s" % (name, p.stderr[-1000:]))
            return 1
        traces[name] = out
    db = os.path.join(a.work, "runs.db")
    p = run([ptcall, "db", "add", "--db", db] + list(traces.values()))
    if p.returncode:
        print("FAIL db add: %s" % p.stderr)
        return 1
    pg_down(ptcall, a.work)
    srv = Server(ptcall, db, a.work)
    try:
        diff(srv, db, traces)
        abuse(srv)
        flames(srv, db, traces, demo, a.work, ptcall)
        starvation(srv, a.attack_seconds)
    finally:
        rc = srv.stop()
    check(rc == 0, "ptcall serve stops cleanly on SIGTERM", "exit %s" % rc)
    print("%d failed" % fails if fails else "all passed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
