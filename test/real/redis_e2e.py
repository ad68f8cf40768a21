#!/usr/bin/env python3
"""A real service end to end (issue 31, item 5): redis-server from Debian's source package,
built with ptcall-cc, serving on 127.0.0.1, driven by a client that checks every reply.

Parts (--part):
  serve   redis-server started without ptcall: 10,000 SETs and 10,000 GETs by this script's own
          RESP client (every reply checked against what was set), then redis-benchmark
          (redis-tools); then the same server under `ptcall record`: 1,000 GETs give exactly
          1,000 calls of getCommand in `ptcall report`.
  attach  redis-server started without ptcall serves a client that checks every reply while
          `ptcall record --pid PID --duration 500ms` attaches and detaches 20 times: every
          request answered, the server alive, each trace decodes, says ATTACH ... DETACH and is
          complete (no lost events, no missing chunks) and holds getCommand calls.
  ring    `ptcall record --ring 1M --trigger 'debugCommand>20ms'` of redis-server: 10,000
          requests (SET, GET, `DEBUG SLEEP 0`), one of them `DEBUG SLEEP 0.05`: every request
          answered, exactly one trigger snapshot, and it holds that one slow debugCommand.
  crash   test/real/programs/crash_threads.c (three threads in loops, the main one stores
          through 0x10) run with PTCALL_RING and PTCALL_SNAPSHOT_DIR, without ptcall record:
          it dies of SIGSEGV as it would have, and the crash snapshot marks the faulting thread
          and address and shows each thread's last calls.
The parts after serve need issue 31's features; until this build has them (record's --help
names --duration for attach, --ring and --trigger for ring and crash) they print "SKIP: ..."
and pass. redis-server is built once per build tree (build/test/real/redis/, a stamp of the
command and the pass) and reused by later runs; the build says how long it took.

Under the sanitizer suite (--sanitize) the redis parts say SKIP: the redis build would add a third
to the suite's build time, and what it tests (the pass, the runtime) is not sanitized there.

usage: redis_e2e.py --build BUILD --work DIR --part serve|attach|ring|crash [--sanitize]
"""
import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import ptc_chunks  # noqa: E402


def fail(msg):
    sys.exit("FAIL: " + msg)


def skip(msg):
    print("SKIP: " + msg)
    sys.exit(0)


def run(cmd, **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    if r.returncode != 0:
        fail("%s exited %d\n%s" % (" ".join(cmd), r.returncode, r.stdout[-3000:]))
    return r.stdout


def run_json(cmd):
    """stdout only: the notes a trace's window gets (snapshots, attach) go to stderr"""
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        fail("%s exited %d\n%s%s" % (" ".join(cmd), r.returncode, r.stdout[-3000:], r.stderr[-3000:]))
    return r.stdout


# ---------------------------------------------------------------- building redis-server

def build_redis(build, work):
    """redis-server of Debian's redis source package, built with ptcall-cc (deps too: hiredis and
    Lua are compiled into the server), libc malloc, no TLS, no systemd. Once per build tree:
    reused while the stamp (the command, the pass's size and time) matches."""
    src = os.path.join(work, "redis-src")
    run([os.path.join(ROOT, "scripts", "fetch-debian-source.sh"), "redis", src])
    ptcc = os.path.join(build, "bin", "ptcall-cc")
    pass_so = os.path.join(build, "pass", "ptcall-pass.so")
    cmd = ["make", "-C", os.path.join(src, "src"), "redis-server", "-j%d" % max(os.cpu_count() or 1, 1),
           "CC=" + ptcc, "MALLOC=libc", "BUILD_TLS=no", "USE_SYSTEMD=no", "OPTIMIZATION=-O2", "V=1"]
    st = os.stat(pass_so)
    stamp_text = json.dumps({"cmd": cmd[:3] + cmd[4:], "pass": [st.st_size, st.st_mtime]})
    exe = os.path.join(src, "src", "redis-server")
    stamp = exe + ".ptcall-stamp"
    if os.path.exists(exe) and os.path.exists(stamp) and open(stamp).read() == stamp_text:
        print("redis-server: reused %s (built earlier with this pass)" % exe)
        return exe, src
    if os.path.exists(stamp) or os.path.exists(exe):  # another pass or command: everything again
        subprocess.run(["make", "-C", src, "distclean"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t0 = time.monotonic()
    run(cmd)
    print("redis-server: built with ptcall-cc in %.0f s (%s)" % (time.monotonic() - t0, " ".join(cmd)))
    with open(stamp, "w") as f:
        f.write(stamp_text)
    return exe, src


# ---------------------------------------------------------------- the server and its clients

def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def server_args(exe, port, d, extra=()):
    return [exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
            "--daemonize", "no", "--dir", d, "--logfile", os.path.join(d, "redis-%d.log" % port)] + list(extra)


class Resp:
    """A RESP2 client of its own (so that every reply is checked, not counted by a tool)."""

    def __init__(self, port, timeout=30):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.buf = b""

    def send(self, *cmds):
        out = []
        for c in cmds:
            out.append(b"*%d\r\n" % len(c))
            for a in c:
                a = a if isinstance(a, bytes) else str(a).encode()
                out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        self.s.sendall(b"".join(out))

    def _line(self):
        while b"\r\n" not in self.buf:
            data = self.s.recv(65536)
            if not data:
                raise ConnectionError("the server closed the connection")
            self.buf += data
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def reply(self):
        line = self._line()
        t, rest = line[:1], line[1:]
        if t in (b"+", b"-"):
            return (t.decode(), rest.decode())
        if t == b":":
            return int(rest)
        if t == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                data = self.s.recv(65536)
                if not data:
                    raise ConnectionError("the server closed the connection")
                self.buf += data
            v, self.buf = self.buf[:n], self.buf[n + 2:]
            return v
        if t == b"*":
            return [self.reply() for _ in range(int(rest))]
        raise ValueError("bad reply %r" % line)

    def call(self, *args):
        self.send(args)
        return self.reply()

    def close(self):
        self.s.close()


def wait_ready(port, proc, what, timeout=20):
    t_end = time.monotonic() + timeout
    while time.monotonic() < t_end:
        if proc.poll() is not None:
            fail("%s exited %s before it served" % (what, proc.returncode))
        try:
            c = Resp(port, timeout=2)
            if c.call("PING") == ("+", "PONG"):
                c.close()
                return
        except OSError:
            time.sleep(0.05)
    fail("%s did not answer PING on 127.0.0.1:%d in %d s" % (what, port, timeout))


def requests(c, cmds, check, batch=100):
    """Sends cmds pipelined in batches; check(i, cmd, reply) for every reply, in order."""
    for b in range(0, len(cmds), batch):
        part = cmds[b:b + batch]
        c.send(*part)
        for k, cmd in enumerate(part):
            check(b + k, cmd, c.reply())


def set_get(c, n, tag):
    def ok(i, cmd, rep):
        if cmd[0] == "SET" and rep != ("+", "OK"):
            fail("SET %s answered %r" % (cmd[1], rep))
        if cmd[0] == "GET" and rep != ("v%s:%d" % (tag, int(cmd[1].split(":")[-1]))).encode():
            fail("GET %s answered %r" % (cmd[1], rep))
    requests(c, [("SET", "k%s:%d" % (tag, i), "v%s:%d" % (tag, i)) for i in range(n)], ok)
    requests(c, [("GET", "k%s:%d" % (tag, i)) for i in range(n)], ok)


def shutdown(port, proc, what):
    try:
        c = Resp(port, timeout=5)
        c.send(("SHUTDOWN", "NOSAVE"))
        try:
            c.reply()
        except (ConnectionError, OSError):
            pass  # SHUTDOWN closes the connection without a reply when it succeeds
    except OSError:
        pass
    try:
        return proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        fail("%s did not exit after SHUTDOWN" % what)


def report(ptcall, trace):
    return json.loads(run_json([ptcall, "report", trace, "--format", "json", "--top", "0"]))


def calls_of(rep, name):
    return sum(int(f["calls"]) for f in rep["functions"] if f["name"] == name)


def record_help(ptcall):
    return subprocess.run([ptcall, "record", "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True).stdout


# ---------------------------------------------------------------- parts

def part_serve(a, ptcall, exe, d):
    port = free_port()
    srv = subprocess.Popen(server_args(exe, port, d), stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    wait_ready(port, srv, "redis-server (without ptcall)")
    c = Resp(port)
    set_get(c, 10000, "s")
    bench = run(["redis-benchmark", "-h", "127.0.0.1", "-p", str(port), "-n", "20000", "-c", "8",
                 "-t", "set,get,incr,lpush,lpop", "--csv"])
    rows = [r for r in bench.splitlines() if r.startswith('"')]
    if len(rows) < 6:  # the header and five tests
        fail("redis-benchmark said:\n%s" % bench)
    info = c.call("INFO", "commandstats").decode()
    m = re.search(r"cmdstat_get:calls=(\d+)", info)
    if not m or int(m.group(1)) < 10000 + 20000:
        fail("INFO commandstats counts %s GETs, expected at least 30000" % (m.group(1) if m else "no"))
    c.close()
    st = shutdown(port, srv, "redis-server")
    if st != 0:
        fail("redis-server exited %d after SHUTDOWN" % st)
    print("serve: 20000 requests checked, redis-benchmark: %d tests, %s GETs served" % (len(rows) - 1, m.group(1)))
    # the same server recorded from its start: exact counts
    trace = os.path.join(d, "serve.ptc")
    if os.path.exists(trace):
        os.unlink(trace)
    port = free_port()
    srv = subprocess.Popen([ptcall, "record", "-q", "-o", trace, "--"] + server_args(exe, port, d),
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wait_ready(port, srv, "ptcall record -- redis-server")
    c = Resp(port)
    set_get(c, 1000, "r")
    c.close()
    shutdown(port, srv, "ptcall record -- redis-server")
    if srv.returncode != 0:
        fail("ptcall record of redis-server exited %d: %s" % (srv.returncode, srv.stderr.read()[-2000:]))
    rep = report(ptcall, trace)
    if calls_of(rep, "getCommand") != 1000 or calls_of(rep, "setCommand") != 1000:
        fail("the trace has %d getCommand and %d setCommand calls, expected 1000 each"
             % (calls_of(rep, "getCommand"), calls_of(rep, "setCommand")))
    if not rep["totals"]["complete"] or rep["totals"]["lost_events"]:
        fail("the trace of redis-server is not complete: %s" % rep["totals"])
    print("serve: under ptcall record, 1000 GETs = 1000 getCommand calls; %d threads, %d events"
          % (rep["totals"]["threads"], rep["totals"]["events"]))


class Load(threading.Thread):
    """A client sending SET/GET pairs until stopped, checking every reply."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.c, self.stop, self.n, self.error = Resp(port), threading.Event(), 0, None

    def run(self):
        try:
            i = 0
            while not self.stop.is_set():
                set_get(self.c, 50, "L%d_" % i)
                self.n += 100
                i += 1
        except Exception as e:  # noqa: BLE001 (reported by the test)
            self.error = e


def part_attach(a, ptcall, exe, d):
    port = free_port()
    srv = subprocess.Popen(server_args(exe, port, d), stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    wait_ready(port, srv, "redis-server (without ptcall)")
    load = Load(port)
    load.start()
    try:
        for k in range(20):
            trace = os.path.join(d, "attach-%02d.ptc" % k)
            if os.path.exists(trace):
                os.unlink(trace)
            n0 = load.n
            r = subprocess.run([ptcall, "record", "-q", "--pid", str(srv.pid), "--duration", "500ms", "-o", trace],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
            if r.returncode != 0:
                fail("attach %d: ptcall record --pid exited %d: %s" % (k, r.returncode, r.stdout[-2000:]))
            if srv.poll() is not None:
                fail("attach %d: redis-server died (status %s)" % (k, srv.returncode))
            if load.error:
                fail("attach %d: the client failed: %s" % (k, load.error))
            s = ptc_chunks.summary(trace)
            ways = [(p["how"], p["end"]) for p in s["processes"]]
            if ways != [("attach", "detach")]:
                fail("attach %d: the trace's process began/ended as %s, expected [('attach', 'detach')]" % (k, ways))
            rep = report(ptcall, trace)
            t = rep["totals"]
            if not t["complete"] or t["lost_events"] or t["missing_chunks"] or t.get("gaps"):
                fail("attach %d: the trace is not complete for its window: %s" % (k, t))
            if calls_of(rep, "processCommand") == 0:
                fail("attach %d: no processCommand call in the trace, though %d requests were served during it"
                     % (k, load.n - n0))
            print("attach %d: %d events, %d processCommand calls, %d requests served meanwhile"
                  % (k, t["events"], calls_of(rep, "processCommand"), load.n - n0))
    finally:
        load.stop.set()
        load.join(timeout=30)
    if load.error:
        fail("the client failed: %s" % load.error)
    c = Resp(port)
    set_get(c, 100, "after")
    c.close()
    st = shutdown(port, srv, "redis-server")
    if st != 0:
        fail("redis-server exited %d after SHUTDOWN" % st)
    print("attach: 20 attaches and detaches; %d requests, every reply checked" % load.n)


def part_ring(a, ptcall, exe, d):
    trace = os.path.join(d, "ring.ptc")
    snapdir = os.path.join(d, "ring-snapshots")
    os.makedirs(snapdir, exist_ok=True)
    for f in [trace] + [os.path.join(snapdir, x) for x in os.listdir(snapdir)]:
        if os.path.exists(f):
            os.unlink(f)
    port = free_port()
    cmd = [ptcall, "record", "-q", "--ring", "1M", "--trigger", "debugCommand>20ms", "-o", trace, "--"] + \
        server_args(exe, port, d, ["--enable-debug-command", "yes"])
    srv = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           env=dict(os.environ, PTCALL_SNAPSHOT_DIR=snapdir))
    wait_ready(port, srv, "ptcall record --ring -- redis-server")
    slow_at = 7000
    cmds = []
    for i in range(10000):
        if i == slow_at:
            cmds.append(("DEBUG", "SLEEP", "0.05"))
        elif i % 50 == 0:
            cmds.append(("DEBUG", "SLEEP", "0"))
        elif i % 2:
            cmds.append(("SET", "ring:%d" % i, str(i)))
        else:
            cmds.append(("GET", "ring:%d" % (i - 1)))

    def ok(i, cmd, rep):
        want = {"DEBUG": ("+", "OK"), "SET": ("+", "OK")}.get(cmd[0], str(i - 1).encode())
        if rep != want:
            fail("request %d %s answered %r, expected %r" % (i, " ".join(cmd), rep, want))
    c = Resp(port)
    requests(c, cmds, ok, batch=1)  # one at a time, as requests of a service come
    c.close()
    shutdown(port, srv, "ptcall record --ring -- redis-server")
    if srv.returncode != 0:
        fail("ptcall record --ring exited %d: %s" % (srv.returncode, srv.stderr.read()[-2000:]))
    files = [f for f in [trace] + sorted(os.path.join(snapdir, x) for x in os.listdir(snapdir)) if os.path.exists(f)]
    triggered = [(f, s) for f in files for s in ptc_chunks.summary(f)["snapshots"] if s["kind"] == "trigger"]
    if len(triggered) != 1:
        fail("%d trigger snapshots in %s, expected exactly 1 (the one slow request among 10,000)"
             % (len(triggered), files))
    f, snap = triggered[0]
    rows = [json.loads(r) for r in run_json([ptcall, "export", f, "--format", "jsonl", "-o", "-"]).splitlines() if r]
    slow = [r for r in rows if r["function"] == "debugCommand" and (r["duration"] or 0) >= 20000000]
    if len(slow) != 1:
        fail("the trigger snapshot %s holds %d debugCommand calls of 20 ms or more, expected 1" % (f, len(slow)))
    print("ring: 10,000 requests answered; one trigger snapshot (%s: %r) with the slow debugCommand (%.1f ms)"
          % (os.path.basename(f), snap["why"], slow[0]["duration"] / 1e6))


def part_crash(a, ptcall, d):
    exe = os.path.join(d, "crash_threads")
    run([os.path.join(a.build, "bin", "ptcall-cc"), "-O1", "-g", "-pthread",
         os.path.join(HERE, "programs", "crash_threads.c"), "-o", exe])
    snapdir = os.path.join(d, "crash-snapshots")
    os.makedirs(snapdir, exist_ok=True)
    for x in os.listdir(snapdir):
        os.unlink(os.path.join(snapdir, x))
    env = dict(os.environ, PTCALL_RING="256K", PTCALL_SNAPSHOT_DIR=snapdir)
    p = subprocess.run([exe], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, timeout=120)
    if p.returncode != -signal.SIGSEGV:
        fail("crash_threads ended with %d, expected to die of SIGSEGV (-11) as it does without ptcall\n%s"
             % (p.returncode, p.stderr[-2000:]))
    tids = {}
    for line in p.stdout.splitlines():
        _, name, tid = line.split()
        tids[name] = int(tid)
    files = [os.path.join(snapdir, x) for x in sorted(os.listdir(snapdir))]
    crashes = [(f, s) for f in files for s in ptc_chunks.summary(f)["snapshots"] if s["kind"] == "crash"]
    if len(crashes) != 1:
        fail("%d crash snapshots in %s (%s), expected 1" % (len(crashes), snapdir, files))
    f, snap = crashes[0]
    if snap["signo"] != signal.SIGSEGV or snap["addr"] != 0x10 or snap["tid"] != tids["main"]:
        fail("the crash snapshot says signal %d at %#x in thread %d; expected SIGSEGV at 0x10 in %d"
             % (snap["signo"], snap["addr"], snap["tid"], tids["main"]))
    rows = [json.loads(r) for r in run_json([ptcall, "export", f, "--format", "jsonl", "-o", "-"]).splitlines() if r]
    by_tid = {}
    for r in rows:
        by_tid.setdefault(r["tid"], []).append(r)
    expect = {"main": "crash_here", "a": "leaf_a", "b": "leaf_b", "c": "leaf_c"}
    for name, fn in expect.items():
        got = by_tid.get(tids[name], [])
        if not any(r["function"] == fn for r in got):
            fail("thread %s (%d): the crash snapshot shows no call of %s among its last calls (%s)"
                 % (name, tids[name], fn, sorted({r["function"] for r in got})))
    open_main = [r for r in by_tid[tids["main"]] if r["function"] == "crash_here"]
    if open_main[-1]["ended"] != "end":
        fail("crash_here should be still open at the snapshot's end, its row says ended=%s" % open_main[-1]["ended"])
    print("crash: SIGSEGV as without ptcall; the snapshot %s marks thread %d at 0x10 and shows the last calls of "
          "all 4 threads" % (os.path.basename(f), snap["tid"]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--part", required=True, choices=("serve", "attach", "ring", "crash"))
    ap.add_argument("--sanitize", action="store_true", help="ptcall's tools are built with ASan+UBSan")
    a = ap.parse_args()
    a.build = os.path.abspath(a.build)
    ptcall = os.path.join(a.build, "tools", "ptcall")
    d = os.path.join(os.path.abspath(a.work), "redis")
    os.makedirs(d, exist_ok=True)
    # the parts that need issue 31's features say so before anything is built
    needs = {"attach": (["--duration"], "attach and detach: soft attach"),
             "ring": (["--ring", "--trigger"], "ring mode with a trigger"),
             "crash": (["--ring"], "crash snapshot: ring mode")}
    if a.part in needs:
        h = record_help(ptcall)
        missing = [o for o in needs[a.part][0] if o not in h]
        if missing:
            skip("%s is not in this build (`ptcall record --help` has no %s)" % (needs[a.part][1], "/".join(missing)))
    if a.part == "crash":
        part_crash(a, ptcall, d)
        return
    if a.sanitize:
        # the pass and the runtime are the same as in the regular build (neither is sanitized):
        # the regular suite's run of this part covers them, and the sanitized tools read
        # real servers' traces in the other real and e2e tests
        skip("redis-server is not built under the sanitizer suite (its build takes about 2.5 CPU-minutes, a "
             "third more than the whole suite's build); the regular suite runs this part")
    for tool in ("redis-benchmark",):
        if not shutil.which(tool):
            fail("%s not found: it is in Debian's redis-tools package (scripts/setup.sh installs it)" % tool)
    exe, _ = build_redis(a.build, d)
    {"serve": part_serve, "attach": part_attach, "ring": part_ring}[a.part](a, ptcall, exe, d)


if __name__ == "__main__":
    main()
