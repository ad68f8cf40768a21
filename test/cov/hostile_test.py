#!/usr/bin/env python3
"""cov-hostile: `ptcall cov run` on hostile corpora and targets (docs/reliability.md,
*Coverage*). Each case must give a clear one-line message, no hang, no crash:

- a FIFO, a symbolic-link loop, a socket, names that are not UTF-8, in a corpus and in an
  AFL++ queue: each skipped with one line (names escaped); empty files (one named with a
  newline) are inputs, run like any other;
- an AFL++ instance whose fuzzer_stats is a FIFO (cov run waited on it for ever): said, and
  its entries without time: get the unknown time (-1; null in the JSON view), as do entries
  older than the instance's start (they were placed at 0);
- a 2 GiB sparse input: run (the target sees its first bytes) while ptcall's peak RSS stays
  small (it was read whole: 2 GiB of memory);
- a target whose input leaves a grandchild calling instrumented code: the grandchild is
  killed when the input ends, a line says so, and no later input is credited with its calls
  (they were, silently), with the fork server and with --exec.

usage: hostile_test.py BUILD_DIR SOURCE_DIR WORK_DIR
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

from covcheck import check, failures  # test/cov/covcheck.py, beside this script


def run(args, timeout=120, **kw):
    try:
        return subprocess.run(args, capture_output=True, timeout=timeout, **kw)
    except subprocess.TimeoutExpired as ex:
        return subprocess.CompletedProcess(args, "timeout", ex.stdout or b"", ex.stderr or b"")


def lines_ok(stderr):
    """Every line of ptcall's stderr is one of its own messages (no name broke a line)."""
    return all(l.startswith(b"ptcall cov") for l in stderr.splitlines() if l.strip())


def main():
    build, src, work = (os.path.abspath(a) for a in sys.argv[1:4])
    ptcall = os.path.join(build, "tools", "ptcall")
    cc = os.path.join(build, "bin", "ptcall-cc")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    os.chdir(work)
    env = dict(os.environ, PTCALL_PLACEMENT="early")
    subprocess.run([cc, "-O1", "-g", os.path.join(src, "test", "cov", "cov_target.c"), "-o",
                    "target"], check=True, env=env)
    subprocess.run([cc, "-O1", "-g", os.path.join(src, "test", "cov", "cov_orphan.c"), "-o",
                    "orphan"], check=True, env=env)

    def report(ptcov):
        r = run([ptcall, "cov", "report", ptcov, "--format", "json"])
        check(r.returncode == 0, "report %s: %s" % (ptcov, r.stderr))
        doc = json.loads(r.stdout.decode("utf-8"))
        names = [f["name"] for f in doc["functions"]]
        return {i["name"]: ({names[k] for k in i["functions"]}, i["time_ms"])
                for i in doc["inputs"]}

    # ---- a hostile plain corpus ----------------------------------------------------------
    os.makedirs("corpus")
    with open("corpus/in-a", "wb") as f:
        f.write(b"a1")
    os.mkfifo("corpus/fifo")
    os.symlink("loop2", "corpus/loop1")
    os.symlink("loop1", "corpus/loop2")
    os.symlink("in-a", "corpus/link-to-a")          # a link to a regular file is an input
    sock = socket.socket(socket.AF_UNIX)
    sock.bind("corpus/sock")
    open(b"corpus/empty\nname", "wb").close()
    open(b"corpus/e-\xff\xc2\x85\\-\x1b[2J", "wb").close()   # not UTF-8, C1, \\, an escape
    with open(b"corpus/nl\nb", "wb") as f:
        f.write(b"b22")
    with open(b"corpus/bad-\xff\xfe-utf8", "wb") as f:
        f.write(b"x")
    with open("corpus/sparse", "wb") as f:           # 2 GiB, one block of data
        f.write(b"a")
        f.truncate(2 << 30)
    # ptcall's own peak RSS, measured by a parent that waits for nothing else. The work file
    # on this file system (copy_file_range) and on a tmpfs (/dev/shm: EXDEV, so read and
    # write through the 64 KiB buffer)
    meter = ("import resource, subprocess, sys; p = subprocess.run(sys.argv[1:]); "
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, p.returncode)")
    tmps = [work] + (["/dev/shm"] if os.path.isdir("/dev/shm") and
                     os.access("/dev/shm", os.W_OK) else [])
    for tmp in tmps:
        t0 = time.time()
        r = run([sys.executable, "-c", meter, ptcall, "cov", "run", "--timeout", "2000", "-o",
                 "corpus.ptcov", "--corpus", "corpus", "--", "./target"], timeout=300,
                env=dict(os.environ, TMPDIR=tmp))
        secs = time.time() - t0
        err = r.stderr
        print(err.decode("utf-8", "replace"))
        ok = r.returncode == 0
        rss_kb, rc = (int(x) for x in r.stdout.split()) if ok else (0, -1)
        check(ok and rc == 0, "hostile corpus, work file in %s: ran (%s %s, %.1f s)" %
              (tmp, r.returncode, rc, secs))
        for want in [b"skipping corpus/fifo: not a regular file (a FIFO)",
                     b"skipping corpus/loop1: Too many levels of symbolic links",
                     b"skipping corpus/loop2: Too many levels of symbolic links",
                     b"skipping corpus/sock: not a regular file (a socket)"]:
            check(want in err, "hostile corpus: said %s" % want.decode())
        # empty files are inputs (libFuzzer runs the empty input): not skipped
        check(b"skipping corpus/empty" not in err and b"skipping corpus/e-" not in err,
              "hostile corpus: empty files not skipped")
        check(lines_ok(err), "hostile corpus: every stderr line is one of ptcall's")
        # the target (not ptcall) reads at most 63 bytes of it: what ptcall holds is its own
        check(0 < rss_kb < 200 * 1024, "a 2 GiB sparse input, work file in %s: ptcall cov "
              "run's peak RSS %d KiB (< 200 MiB)" % (tmp, rss_kb))
        if rc == 0:
            got = report("corpus.ptcov")
            sets = {k: v[0] for k, v in got.items()}
            want = {"corpus/in-a": {"main", "f_a"}, "corpus/link-to-a": {"main", "f_a"},
                    "corpus/nl\nb": {"main", "f_b"}, "corpus/bad-\ufffd\ufffd-utf8": {"main"},
                    "corpus/sparse": {"main", "f_a"}, "corpus/empty\nname": {"main"},
                    "corpus/e-\ufffd\u0085\\-\x1b[2J": {"main"}}
            check(sets == want, "hostile corpus: inputs and sets %s" % sets)

    # ---- a hostile AFL++ directory --------------------------------------------------------
    q = "afl/default/queue"
    os.makedirs(q)
    with open(q + "/id:000000,time:5,execs:1,orig:seed", "wb") as f:
        f.write(b"a")
    with open(q + "/id:000001,sync:other,src:000003", "wb") as f:   # no time:
        f.write(b"b")
    os.mkfifo(q + "/id:000002,time:9,fifo")
    with open(q.encode() + b"/id:000003,time:7,\nnl\xff", "wb") as f:
        f.write(b"x")
    open(q + "/id:000004,time:8,empty", "wb").close()   # an empty queue entry: run too
    os.mkfifo("afl/default/fuzzer_stats")
    r = run([ptcall, "cov", "run", "-o", "afl.ptcov", "--afl", "afl", "--", "./target"],
            timeout=60)
    err = r.stderr
    print(err.decode("utf-8", "replace"))
    check(r.returncode == 0, "fuzzer_stats a FIFO: no hang, exit 0 (%s)" % r.returncode)
    check(b"afl/default/fuzzer_stats: not a regular file" in err,
          "fuzzer_stats a FIFO: said so")
    check(b"skipping default/queue/id:000002,time:9,fifo: not a regular file (a FIFO)" in err,
          "a FIFO in the queue: skipped, said")
    check(lines_ok(err), "afl: every stderr line is one of ptcall's")
    if r.returncode == 0:
        got = report("afl.ptcov")
        times = {k: v[1] for k, v in got.items()}
        check(times == {"default/queue/id:000000,time:5,execs:1,orig:seed": 5,
                        "default/queue/id:000001,sync:other,src:000003": None,
                        "default/queue/id:000003,time:7,\nnl\ufffd": 7,
                        "default/queue/id:000004,time:8,empty": 8},
              "afl: times, the one without time: unknown (-1 in the file, null in JSON): %s"
              % times)
    # a readable fuzzer_stats that starts after the entry was written: unknown, not 0
    os.unlink("afl/default/fuzzer_stats")
    with open("afl/default/fuzzer_stats", "w") as f:
        f.write("start_time        : %d\n" % (int(time.time()) + 3600))
    # and mixed with a plain corpus, whose file times must not place it either
    os.makedirs("plain")
    with open("plain/p", "wb") as f:
        f.write(b"a")
    r = run([ptcall, "cov", "run", "-o", "afl2.ptcov", "--afl", "afl", "--corpus", "plain",
             "--", "./target"], timeout=60)
    check(r.returncode == 0, "afl + corpus: %s" % r.stderr.decode("utf-8", "replace"))
    if r.returncode == 0:
        got = report("afl2.ptcov")
        t = got.get("default/queue/id:000001,sync:other,src:000003", (None, None))[1]
        check(t is None, "afl entry older than the instance's start: time %s, want unknown "
              "(null)" % t)
        check(got.get("plain/p", (None, None))[1] == 0, "a plain corpus file still at 0")

    # ---- a grandchild left calling instrumented code -------------------------------------
    os.makedirs("orph")
    with open("orph/in-g", "wb") as f:
        f.write(b"g")
    for k in range(5):
        with open("orph/in-x%d" % k, "wb") as f:
            f.write(b"x")
    for mode, extra in [("fork server", []), ("exec", ["--exec"])]:
        pidfile = os.path.join(work, "orphans")
        if os.path.exists(pidfile):
            os.unlink(pidfile)
        r = run([ptcall, "cov", "run", "-o", "orph.ptcov", "--corpus", "orph"] + extra +
                ["--", "./orphan"], env=dict(os.environ, COV_PIDFILE=pidfile), timeout=60)
        err = r.stderr
        print(err.decode("utf-8", "replace"))
        check(r.returncode == 0, "%s: grandchild: exit %s" % (mode, r.returncode))
        check(b"ptcall cov run: orph/in-g left 1 process running after it ended" in err,
              "%s: the input that left a process is named" % mode)
        time.sleep(0.2)
        pids = [int(x) for x in open(pidfile).read().split()] if os.path.exists(pidfile) else []
        alive = []
        for p in pids:
            try:
                with open("/proc/%d/stat" % p) as f:
                    if f.read().split(") ")[1][0] != "Z":
                        alive.append(p)
            except OSError:
                pass
        check(pids and not alive, "%s: the grandchild %s is gone (alive: %s)" % (mode, pids,
                                                                                 alive))
        for p in alive:   # today's code leaves it running for ever
            os.kill(p, signal.SIGKILL)
        if r.returncode == 0:
            got = report("orph.ptcov")
            later = {k: v[0] for k, v in got.items() if k != "orph/in-g"}
            check(all(v == {"main"} for v in later.values()),
                  "%s: no later input credited with the grandchild's calls: %s" % (mode, later))

    print("cov-hostile: %d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
