#!/usr/bin/env python3
"""faults: how a recording ends when the program or the machine does not end it well.

  faults_test.py PTCALL PTCALL_CC WORKDIR

For each fault (test/faults/faulty.c, built with ptcall-cc, soft backend): `ptcall record`'s
exit status, what its summary says, and what `ptcall report --format json` says of the trace
(`complete`, `unfinished_processes`), asserted exactly. docs/reliability.md lists the
guarantees these check.

- ok, fail (exit 3), segv, abort, _exit (5), exit() from a second thread while the first
  still calls (4): the runtime ends the trace (PROCESS_END); record's status is the program's;
  the trace is complete and holds every call (the second thread's case: at least the calls
  made before exit()).
- kill (SIGKILL): what the runtime cannot see coming. The status is the program's (137); the
  trace is marked incomplete (a process without its PROCESS_END) by record's message and by
  report (complete false, unfinished_processes 1, a warning).
- SIGKILL from outside, at random points, while the program calls slowly: the drain writes
  partly filled buffers every PTCALL_FLUSH_MS, so at most 100 ms of calls are lost (the calls
  the program counted in shared memory that the trace lacks, converted to time); the figure
  without the periodic flush is printed beside it.
- a full disk (a 512 KiB tmpfs the test mounts; SKIP where it cannot mount): record says the
  trace is INCOMPLETE and why, and exits 125 although the program succeeded; its summary counts
  the events the file holds; report refuses the truncated file and --salvage reads what is
  there, marked incomplete.
"""
import json
import os
import random
import re
import shutil
import signal
import struct
import subprocess
import sys
import time

fails = 0


def check(ok, what):
    global fails
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        fails += 1
    return ok


def run(cmd, **kw):
    return subprocess.run([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, **kw)


def report(ptcall, trace, *extra):
    p = run([ptcall, "report", trace, "--format", "json", "--top", "0", *extra])
    if p.returncode != 0:
        return None, p.stderr
    return json.loads(p.stdout), p.stderr


def calls_of(doc, name):
    return sum(f["calls"] for f in doc["functions"] if f["name"] == name)


def killed_loss(ptcall, prog, work, flush, secs):
    """Records `faulty slow`, kills it with SIGKILL after secs, and returns the milliseconds of
    calls it made that the trace lacks (None if it could not be measured)."""
    shm = os.path.join(work, "progress.bin")
    trace = os.path.join(work, "killed.ptc")
    for f in (shm, trace):
        if os.path.exists(f):
            os.unlink(f)
    env = dict(os.environ)
    env.pop("PTCALL_FLUSH_MS", None)
    if flush is not None:
        env["PTCALL_FLUSH_MS"] = flush
    rec = subprocess.Popen([ptcall, "record", "-q", "-o", trace, "--", prog, "slow", shm],
                           env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 10
    while not (os.path.exists(shm) and os.path.getsize(shm) >= 20):
        if time.monotonic() > deadline or rec.poll() is not None:
            rec.kill()
            rec.wait()
            return None
        time.sleep(0.01)
    time.sleep(secs)
    with open(shm, "rb") as f:
        _, t0, pid = struct.unpack("qdi", f.read(20))
    os.kill(pid, signal.SIGKILL)
    t1 = time.monotonic()
    with open(shm, "rb") as f:
        made = struct.unpack("qdi", f.read(20))[0]
    rec.communicate()
    check(rec.returncode == 128 + 9, "SIGKILL from outside: record exits 137: %d"
          % rec.returncode)
    doc, err = report(ptcall, trace)
    if doc is None or made <= 0:
        return None
    got = calls_of(doc, "work")
    check(got <= made, "SIGKILL: the trace holds no more calls than were made (%d of %d)"
          % (got, made))
    return (made - got) / (made / (t1 - t0)) * 1000.0


def main():
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    ptcall, cc, work = sys.argv[1:4]
    if not os.access(cc, os.X_OK):
        print("SKIP: %s is not built (the LLVM pass component)" % cc)
        return 0
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    prog = os.path.join(work, "faulty")
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "faulty.c")
    if run([cc, "-O1", "-pthread", "-o", prog, src]).returncode:
        print("SKIP: ptcall-cc cannot build %s" % src)
        return 0
    n = 50000

    # faults the runtime sees: the trace is whole
    for mode, status in (("ok", 0), ("fail", 3), ("segv", 128 + 11), ("abort", 128 + 6),
                         ("_exit", 5), ("thread_exit", 4)):
        trace = os.path.join(work, mode + ".ptc")
        p = run([ptcall, "record", "-q", "-o", trace, "--", prog, mode, n])
        check(p.returncode == status, "%s: record exits %d (the program's status): %d"
              % (mode, status, p.returncode))
        check("INCOMPLETE" not in p.stderr, "%s: record does not call the trace incomplete" % mode)
        doc, err = report(ptcall, trace)
        if check(doc is not None, "%s: report reads the trace" % mode):
            t = doc["totals"]
            check(t["complete"] and t["unfinished_processes"] == 0,
                  "%s: complete, no unfinished process" % mode)
            got = calls_of(doc, "work")
            # thread_exit: the main thread goes on calling until exit() ends it
            check(got == n if mode != "thread_exit" else got >= 2 * n,
                  "%s: every call of work() is there (%d)" % (mode, got))

    # faults it cannot see: the trace is marked incomplete
    for mode, status in (("kill", 128 + 9),):
        trace = os.path.join(work, mode + ".ptc")
        p = run([ptcall, "record", "-q", "-o", trace, "--", prog, mode, n])
        check(p.returncode == status, "%s: record exits %d (the program's status): %d"
              % (mode, status, p.returncode))
        check("INCOMPLETE" in p.stderr and "did not close" in p.stderr,
              "%s: record says the trace is incomplete: %s" % (mode, p.stderr.strip()[-160:]))
        doc, err = report(ptcall, trace)
        if check(doc is not None, "%s: report reads what the trace holds" % mode):
            t = doc["totals"]
            check(not t["complete"] and t["unfinished_processes"] == 1,
                  "%s: complete false, 1 unfinished process" % mode)
        table = run([ptcall, "report", trace])
        check("INCOMPLETE: 1 process ended without closing its trace" in table.stdout,
              "%s: report's table warns" % mode)

    # SIGKILL from outside while the program calls slowly (its buffer takes ~0.2 s to fill):
    # the drain writes partly filled buffers every PTCALL_FLUSH_MS (50 by default), so the
    # events lost are at most about that much of the run. Killed at random points of the
    # flush period; the loss is the calls the program counted that the trace lacks, in time.
    worst = []
    for flush, runs in ((None, 6), ("0", 1)):
        for i in range(runs):
            loss = killed_loss(ptcall, prog, work, flush, 0.4 + random.uniform(0, 0.2))
            if loss is None:
                check(False, "SIGKILL loss: the run could not be measured")
                break
            worst.append(loss) if flush is None else None
            if flush == "0":
                print("SIGKILL loss without the periodic flush: %.1f ms" % loss)
    if worst:
        print("SIGKILL loss with the default flush period, worst of %d: %.1f ms"
              % (len(worst), max(worst)))
        check(max(worst) <= 100.0, "SIGKILL loses at most 100 ms of events: %.1f ms"
              % max(worst))

    # a full disk
    mnt = os.path.join(work, "small")
    os.makedirs(mnt)
    if run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", mnt]).returncode != 0:
        print("SKIP: full disk: cannot mount a small tmpfs here (needs root)")
    else:
        try:
            trace = os.path.join(mnt, "full.ptc")
            p = run([ptcall, "record", "-o", trace, "--", prog, "ok", 1000000])
            check(p.returncode == 125, "full disk: record exits 125 although the program exited "
                  "0: %d" % p.returncode)
            check("No space left on device" in p.stderr and "INCOMPLETE" in p.stderr,
                  "full disk: record says why: %s" % p.stderr.strip().splitlines()[-1][:200])
            m = re.search(r"ptcall: (\d+) events in", p.stderr)
            check(m and int(m.group(1)) > 0, "full disk: the summary counts the events the file "
                  "holds (%s)" % (m.group(1) if m else "no summary"))
            bad = run([ptcall, "report", trace])
            check(bad.returncode == 1 and "truncated" in bad.stderr,
                  "full disk: report refuses the truncated file and says so")
            doc, err = report(ptcall, trace, "--salvage")
            if check(doc is not None, "full disk: report --salvage reads what is there"):
                check(not doc["totals"]["complete"], "full disk: salvaged, marked incomplete")
        finally:
            run(["umount", mnt])
    print("faults: %d failure(s)" % fails)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
