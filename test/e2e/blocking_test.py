#!/usr/bin/env python3
"""Blocked time (issue 27 item 6; docs/runtime.md "Blocking calls", trace format 2.6), on
programs/blocking.c built with ptcall-cc (a pool thread waiting on a condition variable, a
pipe read that blocks, nanosleep, waitpid of a child; it checks return values and errno):

  plain      run without ptcall: "ok" (the wrappers forward; nothing else happens)
  recorded   ptcall record: the program still says "ok" (errno and return values unchanged);
             report --format json lists the [blocking] pseudo-functions with "blocking": true;
             pool_thread's blocked time is most of its wall time (it waits ~90 ms) and more
             than its running time, busy_work runs ~60 ms and is never blocked; read_pipe,
             nap and wait_child are blocked about as long as they waited (40, 50, 30 ms),
             within tolerances for a loaded machine; a MODULE_BLOCKING chunk names the
             [blocking] module; the text report has a blocked column and labels the calls
  exports    the SVG flame graph marks the blocking frames (data-blocked, a blue-grey fill)
             and no program frame; chrome's events of blocking calls have the category
             "blocked", the program's their module's
  off        PTCALL_BLOCKING=0 and record --no-blocking: no blocking pseudo-function, no
             MODULE_BLOCKING chunk, the program still "ok"
  bad        PTCALL_BLOCKING=maybe: one line naming it, the program runs untraced (no trace)

usage: blocking_test.py --build BUILD --work DIR
"""
import argparse
import json
import os
import struct
import subprocess
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
MODULE, MODULE_BLOCKING = 4, 23
MS = 1000000
failures = []


def run(cmd, ok=(0,), **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    if r.returncode not in ok:
        sys.exit("FAIL: %s exited %d\n%s%s" % (" ".join(cmd), r.returncode, r.stdout[-3000:],
                                                r.stderr[-3000:]))
    return r


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)
    return cond


def chunk_types(path):
    """Chunk types of the trace, CRCs checked."""
    d = open(path, "rb").read()
    assert d[:8] == b"PTCALLTR", path
    hsize = struct.unpack_from("<I", d, 12)[0]
    off, out = hsize, []
    while off < len(d):
        t, fl, sz, pid, tid, seq, crc = struct.unpack_from("<HHIIIII", d, off)
        p = d[off + 24:off + 24 + sz]
        assert zlib.crc32(d[off:off + 20], zlib.crc32(p)) == crc, "CRC at %d" % off
        out.append((t, fl, p))
        off += 24 + sz + (8 - sz % 8) % 8
    return out


def report(ptcall, trace):
    return json.loads(run([ptcall, "report", trace, "--format", "json", "--top", "0"]).stdout)


def by_name(rep):
    out = {}
    for f in rep["functions"]:
        out.setdefault(f["name"], []).append(f)
    return out


def case_recorded(ptcall, exe, d):
    trace = os.path.join(d, "blocking.ptc")
    r = run([ptcall, "record", "-o", trace, "--", exe])
    check("ok" in r.stdout, "recorded: the program did not say ok: %r %r" % (r.stdout, r.stderr))
    types = chunk_types(trace)
    blk = [p for t, fl, p in types if t == MODULE_BLOCKING]
    check(blk and all(fl & 1 for t, fl, p in types if t == MODULE_BLOCKING),
          "recorded: no optional MODULE_BLOCKING chunk")
    rep = report(ptcall, trace)
    fns = by_name(rep)
    blocking = {f["name"] for f in rep["functions"] if f.get("blocking")}
    for name in ("pthread_cond_wait", "read", "nanosleep", "waitpid"):
        check(name in blocking, "recorded: no blocking pseudo-function %s (have %s)" %
              (name, sorted(blocking)))
    for f in rep["functions"]:
        if f.get("blocking"):
            check(f["module"] == "[blocking]", "recorded: %s in module %r" % (f["name"], f["module"]))
            check(f["running"] == 0 and f["blocked"] == f["self"],
                  "recorded: blocking %s: running %s blocked %s self %s" %
                  (f["name"], f["running"], f["blocked"], f["self"]))

    def one(name):
        v = [f for f in fns.get(name, []) if not f.get("blocking")]
        check(len(v) == 1, "recorded: %d program functions %s" % (len(v), name))
        return v[0] if v else {"self": 0, "blocked": 0, "running": 0, "total": 0}

    pool, busy = one("pool_thread"), one("busy_work")
    # the worker waits ~40 ms before the first task, ~20 ms before each of the others and
    # ~10 ms after the last: ~90 ms blocked; its tasks (busy_work, a callee) run ~60 ms
    check(pool["blocked"] >= 70 * MS, "recorded: pool_thread blocked %d ns < 70 ms" % pool["blocked"])
    # its self time as it was (running + blocked) is most of it waiting
    check(pool["blocked"] >= 0.8 * (pool["blocked"] + pool["running"]),
          "recorded: pool_thread blocked %d, running %d: not mostly blocked" %
          (pool["blocked"], pool["running"]))
    check(busy["blocked"] == 0 and busy["running"] >= 50 * MS,
          "recorded: busy_work blocked %d running %d (runs ~60 ms, never blocked)" %
          (busy["blocked"], busy["running"]))
    for name, ms in (("read_pipe", 40), ("nap", 50), ("wait_child", 30)):
        f = one(name)
        # a loaded machine wakes late, never early: at least 90 % of the wait, at most +500 ms
        check(0.9 * ms * MS <= f["blocked"] <= (ms + 500) * MS,
              "recorded: %s blocked %.1f ms, waited %d ms" % (name, f["blocked"] / MS, ms))
        check(f["blocked"] > f["running"],
              "recorded: %s blocked %d <= running %d" % (name, f["blocked"], f["running"]))
    text = run([ptcall, "report", trace, "--top", "0"]).stdout
    check(" blocked " in text.splitlines()[0] or any(
        l.lstrip().startswith("calls") and "blocked" in l for l in text.splitlines()),
        "recorded: text report has no blocked column:\n" + text[:2000])
    check("pthread_cond_wait [[blocking]] (blocking call" in text,
          "recorded: text report does not label the blocking calls:\n" + text[:3000])
    svg = os.path.join(d, "flame.svg")
    run([ptcall, "export", trace, "--format", "svg", "-o", svg])
    import xml.etree.ElementTree as ET
    frames = [g for g in ET.parse(svg).iter() if g.get("class") == "frame"]
    marked = {g.get("data-name") for g in frames if g.get("data-blocked") == "1"}
    check("pthread_cond_wait" in marked and "nanosleep" in marked and
          not marked & {"pool_thread", "busy_work", "main"},
          "exports: SVG frames marked blocked: %s" % sorted(marked))
    for g in frames:
        if g.get("data-blocked") == "1":
            fill = [r.get("fill") for r in g if r.tag.endswith("rect")]
            rgb = [int(x) for x in fill[0][4:-1].split(",")] if fill else [0, 0, 0]
            check(rgb[2] > rgb[0], "exports: blocking frame %s fill %s is not blue-grey" %
                  (g.get("data-name"), fill))
    chrome = os.path.join(d, "chrome.json")
    run([ptcall, "export", trace, "--format", "chrome", "-o", chrome])
    cats = {(e.get("name"), e.get("cat")) for e in json.load(open(chrome))["traceEvents"]
            if e.get("ph") == "B"}
    check(("pthread_cond_wait", "blocked") in cats and ("read", "blocked") in cats and
          ("busy_work", "blocking_prog") in cats,
          "exports: chrome categories %s" % sorted(c for c in cats if c[0] in
                                                   ("pthread_cond_wait", "read", "busy_work")))
    # --by thread computes its figures from the calls: the same split (ns rounded per call)
    th = json.loads(run([ptcall, "report", trace, "--format", "json", "--by", "thread",
                         "--top", "0"]).stdout)
    pools = [f for g in th["groups"] for f in g["functions"] if f["name"] == "pool_thread"]
    check(len(pools) == 1 and abs(pools[0]["blocked"] - pool["blocked"]) <= 1000,
          "recorded: --by thread pool_thread %s, whole trace %d" %
          ([f["blocked"] for f in pools], pool["blocked"]))


def case_off(ptcall, exe, d):
    for name, env, extra in (("PTCALL_BLOCKING=0", {"PTCALL_BLOCKING": "0"}, []),
                             ("--no-blocking", {}, ["--no-blocking"])):
        trace = os.path.join(d, "off%d.ptc" % len(extra))
        r = run([ptcall, "record", "-o", trace] + extra + ["--", exe],
                env=dict(os.environ, **env))
        check("ok" in r.stdout, "%s: the program did not say ok" % name)
        check(not [1 for t, fl, p in chunk_types(trace) if t == MODULE_BLOCKING],
              "%s: a MODULE_BLOCKING chunk" % name)
        rep = report(ptcall, trace)
        check(not [f for f in rep["functions"] if f.get("blocking") or
                   f["module"] == "[blocking]"], "%s: blocking pseudo-functions" % name)
        pool = [f for f in rep["functions"] if f["name"] == "pool_thread"]
        busy = [f for f in rep["functions"] if f["name"] == "busy_work"]
        # its waits are its self time again: all but its one callee's time, and at least one
        # of main's 40 ms gaps (under load busy_work runs longer and the waits shrink: 65 ms
        # of 146 in a CI run, where a fixed 70 ms failed)
        check(pool and busy and pool[0]["blocked"] == 0 and pool[0]["self"] >= 40 * MS and
              abs(pool[0]["self"] - (pool[0]["total"] - busy[0]["total"])) <= 1000,
              "%s: pool_thread %s, busy_work %s (its waits are its self time again)" %
              (name, pool, busy))


def case_bad(exe, d):
    trace = os.path.join(d, "bad.ptc")
    r = run([exe], env=dict(os.environ, PTCALL_BACKEND="soft", PTCALL_OUTPUT=trace,
                            PTCALL_BLOCKING="maybe"))
    check(r.stdout == "ok\n", "bad: the program did not say ok: %r" % r.stdout)
    check("PTCALL_BLOCKING=maybe" in r.stderr and "not tracing" in r.stderr and
          len(r.stderr.strip().splitlines()) == 1, "bad: stderr %r" % r.stderr)
    check(not os.path.exists(trace), "bad: a trace was written")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    d = os.path.join(a.work, "blocking")
    os.makedirs(d, exist_ok=True)
    ptcall = os.path.join(a.build, "tools", "ptcall")
    exe = os.path.join(d, "blocking_prog")
    run([os.path.join(a.build, "bin", "ptcall-cc"), "-O2", "-pthread",
         os.path.join(HERE, "programs", "blocking.c"), "-o", exe])
    r = run([exe])
    check(r.stdout == "ok\n", "plain: %r %r" % (r.stdout, r.stderr))
    case_recorded(ptcall, exe, d)
    case_off(ptcall, exe, d)
    case_bad(exe, d)
    if failures:
        sys.exit("%d failure(s)" % len(failures))
    print("blocking: all cases passed")


if __name__ == "__main__":
    main()
