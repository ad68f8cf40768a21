#!/usr/bin/env python3
"""Servers as they are run (issue 31 item 4; docs/usage.md "Stopping a recording", "Thread
names", "Sanitizers"): serve_prog.c built with ptcall-cc, recorded with `ptcall record`, the
trace read chunk by chunk and through `ptcall report`.

  serve_test.py PTCALL PTCALL_CC WORK signals   kill of record: passed on, trace finished
  serve_test.py PTCALL PTCALL_CC WORK names     thread names at start, their changes, at exit
  serve_test.py PTCALL PTCALL_CC WORK sanitizer a program stopped by ASan (and UBSan)
"""
import os
import signal
import struct
import subprocess
import sys
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faultlib import Checks, report, run  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
PROCESS, THREAD, PROCESS_END, RECORD_END, THREAD_NAME, END_CAUSE = 2, 6, 9, 10, 17, 22


def chunks(path):
    """(type, flags, pid, tid, payload) of every chunk, CRCs checked."""
    d = open(path, "rb").read()
    if d[:8] != b"PTCALLTR":
        return []
    hsize = struct.unpack_from("<I", d, 12)[0]
    off, out = hsize, []
    while off + 24 <= len(d):
        t, fl, sz, pid, tid, seq, crc = struct.unpack_from("<HHIIIII", d, off)
        p = d[off + 24:off + 24 + sz]
        if len(p) != sz or zlib.crc32(d[off:off + 20], zlib.crc32(p)) != crc:
            out.append(("bad", 0, pid, tid, b""))
            break
        out.append((t, fl, pid, tid, p))
        off += 24 + sz + (8 - sz % 8) % 8
    return out


def build(cc, work, name, *flags):
    exe = os.path.join(work, name)
    p = run([cc, "-O1", "-g", "-pthread", *flags, "-o", exe, os.path.join(HERE, "serve_prog.c")])
    if p.returncode:
        print(p.stderr)
        return None
    return exe


def wait_file(path, secs):
    t0 = time.time()
    while time.time() - t0 < secs:
        if os.path.exists(path) and open(path).read().endswith("\n"):
            return int(open(path).read())
        time.sleep(0.02)
    return None


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def signals(ptcall, prog, work, check):
    """kill of record, as a script or a service manager does it: the command gets the
    signal, record waits for it and ends the trace (PROCESS_END, RECORD_END), and record's
    status is the command's."""
    cases = [("wait", signal.SIGTERM), ("wait", signal.SIGINT), ("wait", signal.SIGHUP),
             ("wait", signal.SIGQUIT), ("die", signal.SIGTERM), ("die", signal.SIGINT),
             ("die", signal.SIGHUP)]
    for mode, sig in cases:
        what = "%s %s" % (mode, sig.name)
        trace = os.path.join(work, "sig-%s-%s.ptc" % (mode, sig.name))
        ready = os.path.join(work, "ready-%s-%s" % (mode, sig.name))
        for f in (trace, ready):
            if os.path.exists(f):
                os.unlink(f)
        # its own session: the signal comes from kill, not from a terminal
        rec = subprocess.Popen([ptcall, "record", "-q", "-o", trace, "--", prog, mode, ready],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
        pid = wait_file(ready, 20)
        if not check(pid is not None, "%s: the program started" % what):
            rec.kill()
            rec.communicate()
            continue
        os.kill(rec.pid, sig)  # record only, as `kill PID` does
        try:
            out, err = rec.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            # an orphaned program holds record's pipes open: end it first
            if alive(pid):
                check(False, "%s: the program was left running (orphaned): pid %d" % (what, pid))
                os.kill(pid, signal.SIGKILL)
            rec.kill()
            rec.communicate()
            check(False, "%s: record ended within 30 s" % what)
            continue
        if alive(pid):
            check(False, "%s: the program was left running (orphaned): pid %d" % (what, pid))
            os.kill(pid, signal.SIGKILL)
            continue
        check(True, "%s: the program is not left running" % what)
        want = 20 + sig if mode == "wait" else 128 + sig
        check(rec.returncode == want, "%s: record's status %s is the command's (%d)%s"
              % (what, rec.returncode, want, "" if rec.returncode == want else ": " + err.strip()))
        if mode == "wait":
            check(out.strip() == "got signal %d" % sig,
                  "%s: the program got the signal (%r)" % (what, out.strip()))
        types = [c[0] for c in chunks(trace)]
        ends = [struct.unpack_from("<Ii", c[4]) for c in chunks(trace) if c[0] == PROCESS_END]
        want_end = (1, want) if mode == "wait" else (3, int(sig))  # EXIT status / SIGNAL N
        check(ends == [want_end], "%s: PROCESS_END %s, want %s" % (what, ends, want_end))
        check(types and types[-1] == RECORD_END, "%s: the trace ends with RECORD_END" % what)
        if types and types[-1] == RECORD_END:
            ws = struct.unpack_from("<i", [c for c in chunks(trace) if c[0] == RECORD_END][0][4])[0]
            check(os.waitstatus_to_exitcode(ws) == (want if mode == "wait" else -sig),
                  "%s: RECORD_END's wait status %#x" % (what, ws))
        doc, rerr = report(ptcall, trace)
        check(doc is not None and doc["totals"]["complete"] and
              any(f["name"] == "serve_one" and f["calls"] > 0 for f in doc["functions"]),
              "%s: report reads a complete trace with serve_one's calls%s"
              % (what, "" if doc else ": " + rerr.strip()))
        check(not err.strip(), "%s: record said nothing (%r)" % (what, err.strip()))

    # a signal sent to record twice: passed on twice, the trace finished once
    trace = os.path.join(work, "sig-twice.ptc")
    ready = os.path.join(work, "ready-twice")
    for f in (trace, ready):
        if os.path.exists(f):
            os.unlink(f)
    rec = subprocess.Popen([ptcall, "record", "-q", "-o", trace, "--", prog, "die", ready],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           start_new_session=True)
    pid = wait_file(ready, 20)
    if check(pid is not None, "twice: the program started"):
        os.kill(rec.pid, signal.SIGINT)
        os.kill(rec.pid, signal.SIGINT)
        try:
            out, err = rec.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
            rec.kill()
            rec.communicate()
        check(rec.returncode == 128 + signal.SIGINT and not alive(pid),
              "twice: record ended with the command (%s)" % rec.returncode)
        types = [c[0] for c in chunks(trace)]
        check(types.count(PROCESS_END) == 1 and types[-1] == RECORD_END,
              "twice: one PROCESS_END and RECORD_END")


def main():
    ptcall, cc, work, part = sys.argv[1:5]
    if not os.access(cc, os.X_OK):
        print("SKIP: %s is not built (the LLVM pass component)" % cc)
        return 0
    work = os.path.join(work, part)
    os.makedirs(work, exist_ok=True)
    check = Checks()
    prog = build(cc, work, "serve_prog")
    if not check(prog is not None, "ptcall-cc builds serve_prog.c"):
        return 1
    if part == "signals":
        signals(ptcall, prog, work, check)
    elif part == "names":
        names(ptcall, prog, work, check)
    elif part == "sanitizer":
        sanitizer(ptcall, cc, work, check)
    else:
        print("unknown part %s" % part)
        return 2
    print("%d failures" % check.fails)
    return 1 if check.fails else 0


def cstr(b):
    return b[:b.index(b"\0")].decode() if b"\0" in b else None


def names(ptcall, prog, work, check):
    """Threads that name themselves after starting (pthread_setname_np, prctl, a write to
    /proc/self/task/TID/comm), one named by main, two still running at exit: each THREAD
    start chunk names the thread as it began, each change is a THREAD_NAME chunk, the exit
    chunks of the threads alive at exit say their names then, and report names each thread
    by its last name and says what it was renamed from."""
    trace = os.path.join(work, "names.ptc")
    if os.path.exists(trace):
        os.unlink(trace)
    p = run([ptcall, "record", "-q", "-o", trace, "--", prog, "names"], timeout=60)
    if not check(p.returncode == 0, "record of the naming program: status %d %s"
                 % (p.returncode, p.stderr.strip())):
        return
    base = os.path.basename(prog)[:15]
    start, exitn, changes = {}, {}, {}
    for t, fl, pid, tid, pay in chunks(trace):
        if t == THREAD:
            ev = struct.unpack_from("<I", pay)[0]
            (start if ev == 1 else exitn)[tid] = cstr(pay[48:])
        elif t == THREAD_NAME:
            check(fl & 1, "THREAD_NAME chunk of %d is optional" % tid)
            changes.setdefault(tid, []).append(cstr(pay[8:]))
    check(len(start) == 5, "5 threads started: %s" % start)
    check(set(start.values()) == {base},
          "every thread is named %r at its first event (it named itself later): %s"
          % (base, sorted(start.values())))
    by_last = {}
    for tid in start:
        hist = changes.get(tid, [])
        by_last[(hist[-1] if hist else exitn.get(tid))] = (tid, hist)
    check(by_last.get("second_name", (0, []))[1] == ["first_name", "second_name"],
          "renamed twice: THREAD_NAME first_name then second_name: %s" % changes)
    check(by_last.get("io_thd_1", (0, []))[1] == ["io_thd_1"],
          "the long-lived thread's pthread_setname_np is a THREAD_NAME: %s" % changes)
    check(by_last.get("by_main", (0, []))[1] == ["by_main"],
          "a thread named by main through its pthread_t: %s" % changes)
    comm = [tid for tid in start if exitn.get(tid) == "comm_writer"]
    check(len(comm) == 1 and not changes.get(comm[0]),
          "the thread that wrote its /proc comm, alive at exit, is named so in its exit "
          "chunk: %s" % exitn)
    io = by_last.get("io_thd_1", (0,))[0]
    check(exitn.get(io) == "io_thd_1", "the long-lived thread's exit chunk (read by the "
          "final flush) names it io_thd_1: %s" % exitn)

    doc, err = report(ptcall, trace, "--by", "thread")
    if not check(doc is not None, "report --by thread reads it %s" % err.strip()):
        return
    got = {(g["name"], tuple(g["renamed_from"])) for g in doc["groups"]}
    want = {(base, ()), ("second_name", (base, "first_name")), ("io_thd_1", (base,)),
            ("by_main", (base,)), ("comm_writer", (base,))}
    check(got == want, "report --by thread JSON names each thread by its last name, with "
          "what it was renamed from: %s" % sorted(got))
    tab = run([ptcall, "report", trace, "--by", "thread"]).stdout
    check('"second_name" (renamed from "%s", "first_name")' % base in tab,
          "the table says it: %s" % [l for l in tab.splitlines() if l.startswith("## ")])
    ch = run([ptcall, "export", trace, "--format", "chrome", "-o", "-"])
    tnames = set()
    if ch.returncode == 0:
        import json
        ev = json.loads(ch.stdout)
        ev = ev["traceEvents"] if isinstance(ev, dict) else ev
        tnames = {e["args"]["name"] for e in ev if e.get("name") == "thread_name"}
    check(tnames == {base, "second_name", "io_thd_1", "by_main", "comm_writer"},
          "chrome export names the threads by their last names: %s %s"
          % (sorted(tnames), ch.stderr.strip()))


def sanitizer(ptcall, cc, work, check):
    """A program stopped by a sanitizer's report (a raw exit system call, no signal): the
    runtime's death callback ends the trace (END_CAUSE naming the sanitizer, PROCESS_END
    with the exit status), record and report name the cause."""
    cases = [("address", "overflow", {}, "AddressSanitizer", (4, 1), 1),
             ("address", "overflow", {"ASAN_OPTIONS": "exitcode=7"}, "AddressSanitizer",
              (4, 7), 7),
             ("address", "overflow", {"ASAN_OPTIONS": "abort_on_error=1"}, "AddressSanitizer",
              (3, 6), 128 + 6),
             ("undefined", "ubsan", {"UBSAN_OPTIONS": "halt_on_error=1"},
              "UndefinedBehaviorSanitizer", (4, 1), 1)]
    built = {}
    for i, (san, mode, env, name, want_end, want_status) in enumerate(cases):
        what = "%s %s %s" % (san, mode, env)
        if san not in built:
            built[san] = build(cc, work, "serve_" + san, "-fsanitize=" + san)
        prog = built[san]
        if not check(prog is not None, "%s: ptcall-cc -fsanitize=%s builds it" % (what, san)):
            continue
        trace = os.path.join(work, "san-%d.ptc" % i)
        if os.path.exists(trace):
            os.unlink(trace)
        e = dict(os.environ)
        e.update(env)
        p = run([ptcall, "record", "-o", trace, "--", prog, mode], env=e, timeout=120)
        check(p.returncode == want_status, "%s: record's status %d is the program's (%d)"
              % (what, p.returncode, want_status))
        lines = [l for l in p.stderr.splitlines() if l.startswith("ptcall:")]
        check(any(("was stopped by %s (exit status %d)" % (name, want_end[1])) in l
                  for l in lines) and not any("INCOMPLETE" in l for l in lines),
              "%s: record names the cause, and the trace is not incomplete: %s" % (what, lines))
        ch = chunks(trace)
        causes = [(struct.unpack_from("<Ii", c[4]), cstr(c[4][16:])) for c in ch
                  if c[0] == END_CAUSE]
        check(causes == [((1, want_end[1]), name)], "%s: END_CAUSE %s" % (what, causes))
        ends = [struct.unpack_from("<Ii", c[4]) for c in ch if c[0] == PROCESS_END]
        check(ends == [want_end], "%s: PROCESS_END %s, want %s" % (what, ends, want_end))
        check(ch and ch[-1][0] == RECORD_END, "%s: RECORD_END ends the trace" % what)
        doc, err = report(ptcall, trace)
        fn = "overflow" if mode == "overflow" else "signed_overflow"
        check(doc is not None and doc["totals"]["complete"] and
              any(f["name"] == fn and f["calls"] == 1 for f in doc["functions"]) and
              any(f["name"] == "tick" and f["calls"] >= 1 for f in doc["functions"]),
              "%s: report: complete, with %s and tick called before the report %s"
              % (what, fn, err.strip()))
        ppid = ([c[2] for c in ch if c[0] == PROCESS_END] or [0])[0]
        check(doc is not None and doc.get("end_causes") ==
              [{"pid": ppid, "kind": "sanitizer", "cause": name, "exit_status": want_end[1]}],
              "%s: report JSON's end_causes: %s" % (what, doc and doc.get("end_causes")))
        tab = run([ptcall, "report", trace])
        check(("note: process %d was stopped by %s (exit status %d)"
               % (ppid, name, want_end[1])) in tab.stdout,
              "%s: report's table names the cause: %s" % (
                  what, [l for l in tab.stdout.splitlines() if l.startswith("note")]))


if __name__ == "__main__":
    sys.exit(main())
