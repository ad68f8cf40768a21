#!/usr/bin/env python3
"""Software-backend tests: run the hand-instrumented rt_prog under libptcall (directly with
the PTCALL_* environment, or through `ptcall record`) and check the trace chunk by chunk with
the independent reader ptc_trace.py. One case per invocation (ctest runtime-CASE).

    test_runtime.py CASE --prog rt_prog --linked rt_prog_linked --lib librt_lib.so
                         --rt libptcall.so --ptcall ptcall --tmp DIR
"""
import argparse
import os
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ptc_trace import Trace  # noqa: E402

# These cases compare exact event sequences of the program's own functions; the C library's
# blocking calls (recorded since trace format 2.6) are e2e-blocking's (blocking_test.py).
os.environ.setdefault("PTCALL_BLOCKING", "0")

A_CALL = ["a:E", "b:E", "b:X", "b:E", "b:X", "a:X"]
PROCESS_START, PROCESS_FORK, PROCESS_EXEC = 1, 2, 3
END_EXIT, END_EXEC, END_SIGNAL, END__EXIT = 1, 2, 3, 4


class Failure(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)


class Ctx:
    def __init__(self, a):
        self.a = a
        os.makedirs(a.tmp, exist_ok=True)
        self.out = os.path.join(a.tmp, a.case + ".ptc")

    def run(self, args, env_extra=None, preload=True, expect_rc=0, timeout=240):
        if os.path.exists(self.out):
            os.unlink(self.out)
        env = dict(os.environ)
        env.update(PTCALL_BACKEND="soft", PTCALL_OUTPUT=self.out)
        if preload:
            env["LD_PRELOAD"] = self.a.rt
        env.update(env_extra or {})
        p = subprocess.run(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=timeout)
        sys.stdout.write(p.stdout.decode(errors="replace"))
        sys.stderr.write(p.stderr.decode(errors="replace"))
        if expect_rc is not None:
            check(p.returncode == expect_rc,
                  "%s: exit status %d, expected %d" % (args, p.returncode, expect_rc))
        return p

    def trace(self):
        return Trace(self.out)


def only_process(t):
    procs = [p for pid, p in t.procs.items() if pid != 0]
    check(len(procs) == 1, "expected one process, got %d" % len(procs))
    return procs[0]


def check_process_common(pr, how_start, how_end, status=0):
    check(pr.info is not None, "no PROCESS chunk")
    check(pr.info["how"] == how_start, "PROCESS how %s, expected %s" % (pr.info["how"], how_start))
    check(pr.timebase is not None and pr.timebase["mult"] > 0, "no TIMEBASE")
    check(len(pr.modules) >= 1, "no MODULE chunk")
    check(pr.end is not None, "no PROCESS_END")
    check(pr.end["how"] == how_end, "PROCESS_END how %s, expected %s" % (pr.end["how"], how_end))
    check(pr.end["status"] == status, "PROCESS_END status %s, expected %s" % (pr.end["status"], status))
    for tid, th in pr.threads.items():
        check(th.start is not None, "thread %d: no THREAD start" % tid)
        check(th.exit is not None, "thread %d: no THREAD exit" % tid)
        check(th.exit["events"] == th.hits,
              "thread %d: THREAD exit says %d events, stream has %d" % (tid, th.exit["events"], th.hits))
        check(th.exit["dropped"] == th.loss,
              "thread %d: THREAD exit says %d dropped, LOSS records say %d" % (tid, th.exit["dropped"], th.loss))
    tot = sum(th.hits for th in pr.threads.values())
    check(pr.end["events"] == tot, "PROCESS_END events %d, threads %d" % (pr.end["events"], tot))


def events_of(t, pr, tid=None):
    if tid is None:
        tids = [x for x, th in pr.threads.items() if th.hits or th.events]
        check(len(tids) == 1, "expected one thread with events, got %s" % tids)
        tid = tids[0]
    return pr.names(tid)  # resolved against this image's stub table


def check_periodic_with_loss(evs, period, what):
    """evs is `period` repeated, with some events replaced by ('LOSS', n) records: every event
    must be at the position the losses say. Returns (hits, lost)."""
    pos = 0
    hits = lost = 0
    for e in evs:
        if isinstance(e, tuple):
            check(e[0] == "LOSS", "%s: unexpected control record %s" % (what, e))
            pos += e[1]
            lost += e[1]
            continue
        check(e == period[pos % len(period)],
              "%s: event %d is %s, expected %s" % (what, pos, e, period[pos % len(period)]))
        pos += 1
        hits += 1
    return hits, lost


def case_seq(c):
    p = c.run([c.a.prog, "seq", "1000"], {"PTCALL_DEBUG": "1"})
    check(b"generated id handler" in p.stderr, "the generated (r10) id handler was not used")
    t = c.trace()
    pr = only_process(t)
    check_process_common(pr, PROCESS_START, END_EXIT)
    evs = events_of(t, pr)
    check(evs == A_CALL * 1000, "sequence differs from 1000 x a()")
    check(t.header["flags"] & 1, "file header not TIMED")
    m = pr.modules[0]
    check(m["num_stubs"] == 16 and m["num_funcs"] == 8, "module: %s" % m)
    check(m["path"].endswith("rt_prog"), "module path %s" % m["path"])
    th = next(iter(pr.threads.values()))
    print("bytes/event %.2f" % (th.bytes / th.hits))
    check(th.bytes / th.hits <= 5.0, "more than 5 bytes per event")
    # timestamps go forward
    tscs = [ts for _, ts in th.events]
    check(all(b >= a for a, b in zip(tscs, tscs[1:])), "timestamps not monotonic")


def case_untimed(c):
    p = c.run([c.a.prog, "seq", "1000"], {"PTCALL_TIMESTAMPS": "0", "PTCALL_DEBUG": "1"})
    check(b"generated id handler" in p.stderr, "the generated (r10) id handler was not used")
    t = c.trace()
    pr = only_process(t)
    check_process_common(pr, PROCESS_START, END_EXIT)
    check(events_of(t, pr) == A_CALL * 1000, "sequence differs")
    th = next(iter(pr.threads.values()))
    check(th.bytes / th.hits <= 1.01, "untimed: %.2f bytes per event" % (th.bytes / th.hits))


def threads_case(c, env, nthreads, n, expect_loss):
    c.run([c.a.prog, "threads", str(nthreads), str(n)], env)
    t = c.trace()
    pr = only_process(t)
    check_process_common(pr, PROCESS_START, END_EXIT)
    workers = [tid for tid, th in pr.threads.items() if tid != pr.pid]
    check(len(workers) == nthreads, "%d worker threads, expected %d" % (len(workers), nthreads))
    tot_lost = tot_waits = 0
    for tid in workers:
        evs = events_of(t, pr, tid)
        hits, lost = check_periodic_with_loss(evs, A_CALL, "thread %d" % tid)
        check(hits + lost == 6 * n, "thread %d: %d hits + %d lost != %d" % (tid, hits, lost, 6 * n))
        if not expect_loss:
            check(lost == 0, "thread %d lost %d events in wait mode" % (tid, lost))
        tot_lost += lost
        tot_waits += pr.threads[tid].exit["waits"]
    print("threads: lost %d, waits %d" % (tot_lost, tot_waits))
    return tot_lost, tot_waits


def case_threads(c):
    threads_case(c, {}, 8, 20000, False)


def case_waits(c):
    lost, waits = threads_case(c, {"PTCALL_BUFFER": "4K", "PTCALL_BUFFERS": "2"}, 4, 100000, False)
    check(waits > 0, "no waits with 4 KiB buffers")


def case_drop(c):
    lost, waits = threads_case(c, {"PTCALL_MODE": "drop", "PTCALL_BUFFER": "4K",
                                   "PTCALL_BUFFERS": "2"}, 4, 200000, True)
    # the only waits allowed: at thread exit, for a buffer to hold the final LOSS record
    check(waits <= 4, "drop mode waited %d times" % waits)
    t = c.trace()
    check(t.header["flags"] & 2, "file header not DROP")
    check(lost > 0, "drop mode dropped nothing (machine too fast for the test?)")


def case_drop_main(c):
    # the main thread drops; its last drops are reported at the final flush
    n = 300000
    c.run([c.a.prog, "seq", str(n)], {"PTCALL_MODE": "drop", "PTCALL_BUFFER": "4K",
                                       "PTCALL_BUFFERS": "2"})
    t = c.trace()
    pr = only_process(t)
    check_process_common(pr, PROCESS_START, END_EXIT)
    hits, lost = check_periodic_with_loss(events_of(t, pr), A_CALL, "main")
    print("main thread: %d recorded, %d dropped" % (hits, lost))
    check(hits + lost == 6 * n, "%d + %d != %d" % (hits, lost, 6 * n))


def case_fork(c, exit_mode=False, mode="fork"):
    c.run([c.a.prog, mode, "2" if exit_mode else "1"])
    t = c.trace()
    procs = [p for pid, p in t.procs.items() if pid != 0]
    check(len(procs) == 2, "expected 2 processes, got %d" % len(procs))
    parent = next(p for p in procs if p.info["how"] == PROCESS_START)
    child = next(p for p in procs if p.info["how"] == PROCESS_FORK)
    check_process_common(parent, PROCESS_START, END_EXIT)
    check_process_common(child, PROCESS_FORK, END_EXIT if exit_mode else END__EXIT)
    check(child.info["ppid"] == parent.pid, "child's ppid %d != %d" % (child.info["ppid"], parent.pid))
    check(child.info["parent_tid"] == parent.pid, "child's parent_tid")
    pe = events_of(t, parent)
    want = A_CALL + [("FORK", child.pid)] + ["b:E", "b:X"] * 2
    check(pe == want, "parent events %s, expected %s" % (pe, want))
    ce = events_of(t, child)
    check(ce == ["c:E", "c:X"] * 3, "child events %s" % ce)
    check(len(child.modules) == 1, "child has no MODULE chunk of its own")


def case_fork_exit(c):
    case_fork(c, exit_mode=True)


def case_vfork(c):
    case_fork(c, mode="vfork")


def case_exec(c, mode="exec"):
    c.run([c.a.prog, mode, "2"])
    t = c.trace()
    check(len(t.images) == 1, "expected one image replaced by exec, got %d" % len(t.images))
    old = t.images[0]
    new = t.procs[old.pid]
    check_process_common(old, PROCESS_START, END_EXEC)
    check_process_common(new, PROCESS_EXEC, END_EXIT)
    check(events_of(t, old) == A_CALL * 2, "events before exec")
    check(events_of(t, new) == A_CALL * 2, "events after exec")


def case_crash(c, sig):
    p = c.run([c.a.prog, "crash", "3", str(sig)], expect_rc=None)
    check(p.returncode == -sig, "exit status %d, expected death by signal %d" % (p.returncode, sig))
    t = c.trace()
    pr = only_process(t)
    check_process_common(pr, PROCESS_START, END_SIGNAL, sig)
    check(events_of(t, pr) == A_CALL * 3 + ["c:E"], "events before the crash")


def case_crash_chain(c, env=None):
    # the program has its own handler, which resets the action to the default and re-raises:
    # the runtime writes what it has, calls it, sees the reset and ends the record
    p = c.run([c.a.prog, "crash", "3", str(int(signal.SIGSEGV))], env or {"RT_CHAIN": "1"},
              expect_rc=None)
    check(p.returncode == -signal.SIGSEGV, "exit status %d" % p.returncode)
    t = c.trace()
    pr = only_process(t)
    check_process_common(pr, PROCESS_START, END_SIGNAL, signal.SIGSEGV)
    check(events_of(t, pr) == A_CALL * 3 + ["c:E"], "events before the crash")


def case_crash_handler_late(c):
    # the handler is installed by main, after the runtime's: it still runs, and is chained to
    case_crash_chain(c, {"RT_CHAIN_LATE": "1"})


def case_crash_recover(c):
    # a handler that recovers (siglongjmp): tracing goes on, the process ends normally
    c.run([c.a.prog, "recover", "2"])
    t = c.trace()
    pr = only_process(t)
    check_process_common(pr, PROCESS_START, END_EXIT)
    check(events_of(t, pr) == ["c:E"] + A_CALL * 2, "events %s" % events_of(t, pr))


def case_crash_segv(c):
    case_crash(c, signal.SIGSEGV)


def case_crash_abort(c):
    case_crash(c, signal.SIGABRT)


def all_threads(pr):
    return list(pr.threads.items()) + [(th.tid, th) for th in pr.old_threads]


def case_churn(c):
    rounds, nthreads, n = 40, 8, 500
    c.run([c.a.prog, "churn", str(rounds), str(nthreads), str(n)], {"PTCALL_BUFFER": "4K"})
    t = c.trace()
    pr = only_process(t)
    check_process_common(pr, PROCESS_START, END_EXIT)
    workers = [(tid, th) for tid, th in all_threads(pr) if th.hits]
    check(len(workers) == rounds * nthreads,
          "%d threads with events, expected %d" % (len(workers), rounds * nthreads))
    for tid, th in workers:
        evs = []
        for ev, _ in th.events:
            evs.append(ev if isinstance(ev, tuple) else "%s:%s" % pr.stubs[ev][:2])
        check(evs == A_CALL * n, "thread %d: wrong sequence (%d events)" % (tid, len(evs)))
        check(th.exit is not None and th.exit["events"] == 6 * n, "thread %d: THREAD exit" % tid)
    print("%d threads, %d reused tids" % (len(workers), len(pr.old_threads)))


def case_crash_threads(c):
    p = c.run([c.a.prog, "crashmt", "1000"], expect_rc=None)
    check(p.returncode == -signal.SIGSEGV, "exit status %d" % p.returncode)
    t = c.trace()
    pr = only_process(t)
    check(pr.end and pr.end["how"] == END_SIGNAL and pr.end["status"] == signal.SIGSEGV,
          "PROCESS_END: %s" % pr.end)
    main = events_of(t, pr, pr.pid)
    check(main == A_CALL * 1000 + ["c:E"], "main thread's events before the fault")
    for tid, th in pr.threads.items():
        check(th.exit is not None, "thread %d: no THREAD exit" % tid)
        if tid == pr.pid:
            continue
        # the workers were running during the flush: their streams are whole a() calls,
        # possibly cut at the end, with any unwritten reservation reported as lost
        evs = events_of(t, pr, tid)
        hits, lost = check_periodic_with_loss(evs, A_CALL, "worker %d" % tid)
        check(hits > 0, "worker %d recorded nothing" % tid)


def case_dlopen(c):
    c.run([c.a.prog, "dlopen", c.a.lib, "3"])
    t = c.trace()
    pr = only_process(t)
    check_process_common(pr, PROCESS_START, END_EXIT)
    check(len(pr.modules) == 2, "expected 2 modules")
    lib = [m for m in pr.modules.values() if m["path"].endswith("librt_lib.so")]
    check(len(lib) == 1, "no module for the library: %s" % [m["path"] for m in pr.modules.values()])
    check(1 in pr.unloaded, "no MODULE_UNLOAD for the library")
    want = ["lib_entry:E"] + ["lib_helper:E", "lib_helper:X"] * 3 + ["lib_entry:X"] + A_CALL
    check(events_of(t, pr) == want, "events %s" % events_of(t, pr))
    # the unload comes after the library's events and before the program's exit
    order = [typ for typ, pid, tid in t.order if pid == pr.pid]
    check(order.index(5) < order.index(9), "MODULE_UNLOAD after PROCESS_END")


def case_dlopen_twice(c):
    c.run([c.a.prog, "dlopen", c.a.lib, "2", "2"])
    t = c.trace()
    pr = only_process(t)
    check_process_common(pr, PROCESS_START, END_EXIT)
    libs = sorted(mid for mid, m in pr.modules.items() if m["path"].endswith("librt_lib.so"))
    check(len(libs) == 2, "expected the library registered twice, got modules %s" % libs)
    check(all(mid in pr.unloaded for mid in libs), "both loads must be unloaded")
    one = ["lib_entry:E"] + ["lib_helper:E", "lib_helper:X"] * 2 + ["lib_entry:X"]
    check(events_of(t, pr) == one + one + A_CALL, "events %s" % events_of(t, pr))
    # the second load's events use the second module's stub ids
    th = pr.threads[pr.pid]
    ids = [ev for ev, _ in th.events if not isinstance(ev, tuple)]
    mods = [pr.stubs[i][2] for i in ids]
    check(mods[:6] == [libs[0]] * 6 and mods[6:12] == [libs[1]] * 6, "module of each event: %s" % mods)


def case_timebase(c):
    c.run([c.a.prog, "seq", "10"], {"PTCALL_TIMEBASE": "calibrated"})
    cal = only_process(c.trace()).timebase
    c.run([c.a.prog, "seq", "10"])
    perf = only_process(c.trace()).timebase
    print("calibrated %s\nperf page  %s" % (cal, perf))
    check(cal["source"] == 2 and cal["mult"] > 0, "calibrated time base")
    if perf["source"] == 1:
        check(abs(cal["hz"] - perf["hz"]) < perf["hz"] * 0.02, "calibrated TSC rate off by > 2%")


def case_atexit(c):
    c.run([c.a.prog, "atexit", "1"])
    t = c.trace()
    pr = only_process(t)
    check_process_common(pr, PROCESS_START, END_EXIT)
    dt = ["dtor_fn:E"] + A_CALL + ["dtor_fn:X"]
    check(events_of(t, pr) == A_CALL + dt + dt,
          "events of atexit handlers and destructors missing: %s" % events_of(t, pr))


def case__exit(c):
    c.run([c.a.prog, "_exit", "2"], expect_rc=3)
    t = c.trace()
    pr = only_process(t)
    check_process_common(pr, PROCESS_START, END__EXIT, 3)
    check(events_of(t, pr) == A_CALL * 2, "events")


def case_signals(c):
    c.run([c.a.prog, "signals", "300000"])
    t = c.trace()
    pr = only_process(t)
    check_process_common(pr, PROCESS_START, END_EXIT)
    evs = events_of(t, pr)
    sig = [e for e in evs if e in ("sig_fn:E", "sig_fn:X")]
    rest = [e for e in evs if e not in ("sig_fn:E", "sig_fn:X")]
    hits, lost = check_periodic_with_loss(
        [e for e in rest if not isinstance(e, tuple)], A_CALL, "main flow")
    print("signal handler events %d, lost %d" % (len(sig), pr.threads[pr.pid].loss))
    check(hits == 6 * 300000, "main-flow events %d" % hits)
    check(len(sig) > 0, "no signal handler events")
    # handler events pair up except where a LOSS record says one was lost
    check(len(sig) % 2 == 0 or pr.threads[pr.pid].loss > 0, "unpaired handler events")


def case_unit2(c):
    c.run([c.a.prog, "unit2", "5"])
    t = c.trace()
    pr = only_process(t)
    check_process_common(pr, PROCESS_START, END_EXIT)
    check(events_of(t, pr) == ["u2_f:E", "u2_g:E", "u2_g:X", "u2_f:X"] * 5, "events")
    check(len(pr.modules) == 1, "two units of one object must make one module")


def case_linked(c):
    c.run([c.a.linked, "seq", "10"], preload=False)
    t = c.trace()
    pr = only_process(t)
    check_process_common(pr, PROCESS_START, END_EXIT)
    check(events_of(t, pr) == A_CALL * 10, "events")


def case_inactive(c):
    # the runtime is loaded but not asked to trace: nothing happens, no file
    env = dict(os.environ, LD_PRELOAD=c.a.rt)
    env.pop("PTCALL_BACKEND", None)
    out = os.path.join(c.a.tmp, "inactive.ptc")
    if os.path.exists(out):
        os.unlink(out)
    env["PTCALL_OUTPUT"] = out
    p = subprocess.run([c.a.prog, "bench", "1000000"], env=env, stdout=subprocess.PIPE)
    check(p.returncode == 0, "untraced run failed")
    check(not os.path.exists(out), "trace file written while inactive")
    print(p.stdout.decode().strip(), "(untraced)")


def case_uninstrumented(c):
    # an uninstrumented program under the runtime: nothing written, nothing broken
    c.run(["/bin/sh", "-c", "exit 0"])
    check(not os.path.exists(c.out), "trace written for an uninstrumented program")


def record(c, args, expect_rc=0):
    p = subprocess.run([c.a.ptcall, "record"] + args, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=240)
    err = p.stderr.decode(errors="replace")
    sys.stdout.write(p.stdout.decode(errors="replace"))
    sys.stderr.write(err)
    if expect_rc is not None:
        check(p.returncode == expect_rc, "ptcall record %s: status %d, expected %d"
              % (args, p.returncode, expect_rc))
    return p.returncode, err


def case_record_cli(c):
    out = c.out
    rc, err = record(c, ["-o", out, "--backend", "soft", "--", c.a.prog, "seq", "100"])
    check("events" in err and "bytes/event" in err, "no summary line: %r" % err)
    t = Trace(out)
    check(t.record_info and t.record_info["argv"] == [c.a.prog, "seq", "100"], "RECORD_INFO")
    check(t.record_end and t.record_end["wait_status"] == 0, "RECORD_END")
    pr = only_process(t)
    check_process_common(pr, PROCESS_START, END_EXIT)
    check(events_of(t, pr) == A_CALL * 100, "events")
    # options, exit status propagation, quiet
    rc, err = record(c, ["-q", "-o", out, "--backend", "soft", "--no-timestamps", "--drop",
                         "--buffer", "64K", c.a.prog, "_exit", "1"], expect_rc=3)
    check(err == "", "-q printed: %r" % err)
    t = Trace(out)
    check(t.header["flags"] == 2, "flags %d (expected DROP, untimed)" % t.header["flags"])
    rc, err = record(c, ["-q", "-o", out, "--backend", "soft", "--", c.a.prog, "crash", "1", "11"],
                     expect_rc=128 + 11)
    # auto: falls back to soft (with a notice) when PT is unavailable or not built
    rc, err = record(c, ["-o", out, "--", c.a.prog, "seq", "3"], expect_rc=None)
    check(rc == 0, "auto backend failed")
    # a program started through a shell and fork+exec still traces (LD_PRELOAD is inherited)
    rc, err = record(c, ["-q", "-o", out, "--backend", "soft", "/bin/sh", "-c",
                         "%s seq 2; %s fork" % (c.a.prog, c.a.prog)])
    t = Trace(out)
    check(len([p for pid, p in t.procs.items() if pid]) == 3, "expected 3 traced processes")


def case_record_errors(c):
    noexec = os.path.join(c.a.tmp, "noexec.sh")
    with open(noexec, "w") as f:
        f.write("#!/bin/sh\n")
    os.chmod(noexec, 0o644)
    bad = [
        (["--bogus", "--", "/bin/true"], "unknown option"),
        ([], "missing command"),
        (["--"], "missing command"),
        (["--", "/nonexistent/prog"], "not found"),
        (["--", "no-such-command-ptcall"], "not found"),
        (["--", noexec], "not executable"),
        (["-o", "/nonexistent-dir/x.ptc", "--backend", "soft", "--", "/bin/true"], "cannot"),
        (["--backend", "soft", "--buffer", "lots", "--", "/bin/true"], "buffer"),
        (["--backend", "warp", "--", "/bin/true"], "backend"),
    ]
    for args, words in bad:
        rc, err = record(c, args, expect_rc=None)
        check(rc != 0, "ptcall record %s succeeded" % args)
        lines = [l for l in err.splitlines() if l.strip()]
        check(len(lines) >= 1 and words in err, "ptcall record %s: message %r lacks %r" % (args, err, words))
    # an uninstrumented command runs, then ptcall says how to instrument it
    rc, err = record(c, ["-o", c.out, "--backend", "soft", "--", "/bin/true"], expect_rc=None)
    check(rc != 0 and "no ptcall-instrumented code" in err and "ptcall-cc" in err,
          "uninstrumented: status %d, %r" % (rc, err))


CASES = {
    "seq": case_seq, "untimed": case_untimed, "threads": case_threads, "waits": case_waits,
    "drop": case_drop, "fork": case_fork, "fork-exit": case_fork_exit, "exec": case_exec,
    "fexec": lambda c: case_exec(c, "fexec"), "execat": lambda c: case_exec(c, "execat"),
    "vfork": case_vfork,
    "crash-segv": case_crash_segv, "crash-abort": case_crash_abort, "dlopen": case_dlopen,
    "atexit": case_atexit, "_exit": case__exit, "signals": case_signals, "unit2": case_unit2,
    "linked": case_linked, "crash-handler-late": case_crash_handler_late,
    "crash-recover": case_crash_recover, "crash-chain": case_crash_chain, "drop-main": case_drop_main, "dlopen-twice": case_dlopen_twice, "timebase": case_timebase, "churn": case_churn, "crash-threads": case_crash_threads, "inactive": case_inactive, "uninstrumented": case_uninstrumented,
    "record-cli": case_record_cli, "record-errors": case_record_errors,
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=sorted(CASES))
    for opt in ("prog", "linked", "lib", "rt", "ptcall", "tmp"):
        ap.add_argument("--" + opt, required=True)
    a = ap.parse_args()
    try:
        CASES[a.case](Ctx(a))
    except Failure as e:
        print("FAIL runtime-%s: %s" % (a.case, e))
        return 1
    print("PASS runtime-%s" % a.case)
    return 0


if __name__ == "__main__":
    sys.exit(main())
