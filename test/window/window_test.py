#!/usr/bin/env python3
"""Traces that do not hold a thread's whole life (docs/usage.md, "Windows: attach and
snapshots"; docs/trace-format.md 4.19), on real traces of window_main.c.

blocked: the program returns while one thread is blocked in pthread_cond_wait and another
sleeps. Their open calls must be closed when the process's trace ended, not at the thread's
last event (issue 31 item 4: a thread that waited 4.4 s showed 12 us), and be marked still
open in report, calls, events, chrome and svg, and stored by db add (and in ptcall html).

attach, snapshot: window_cut (test/window/window_cut.c) cuts each thread's events of the
same real trace as an attach (from the middle on) and as a snapshot of a wrapped ring (a span
in the middle, taken on a crash) would hold them. The calls of the cut trace must be exactly
the uncut trace's calls inside each thread's window: those that returned in it (the ones
entered before it marked, starting at the window's start), and, for the snapshot, those
still open at its end (closed there). No exit is counted unmatched. Every view says so.
The real producers (record --pid, the flight recorder) are tested by their own tests.

usage: window_test.py --build BUILD --work DIR [--case blocked|attach|snapshot]
"""
import argparse
import csv
import io
import json
import os
import re
import subprocess
import sys
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMAS = os.path.join(os.path.dirname(os.path.dirname(HERE)), "docs", "schema")
WAIT_MS = 400
failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
        print("FAIL: " + msg)


def run(cmd, ok=(0,), **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    if r.returncode not in ok:
        sys.exit("FAIL: %s exited %d\n%s%s" % (" ".join(cmd), r.returncode, r.stdout[-3000:],
                                                r.stderr[-3000:]))
    return r


def schema_errors(name, doc):
    try:
        import jsonschema
    except ImportError:
        print("note: python3-jsonschema not installed: %s not validated" % name)
        return []
    with open(os.path.join(SCHEMAS, name)) as f:
        schema = json.load(f)
    v = jsonschema.validators.validator_for(schema)(schema)
    return ["%s: %s at %s" % (name, e.message, list(e.path)) for e in v.iter_errors(doc)]


class Tools:
    def __init__(self, a):
        b = os.path.abspath(a.build)
        self.ptcall = os.path.join(b, "tools", "ptcall")
        self.cut = os.path.join(b, "test", "window", "window_cut")
        self.d = os.path.join(os.path.abspath(a.work), "window")
        os.makedirs(self.d, exist_ok=True)
        self.exe = os.path.join(self.d, "window_main")
        run([os.path.join(b, "bin", "ptcall-cc"), "-O1", "-g", "-pthread",
             os.path.join(HERE, "window_main.c"), "-o", self.exe])
        self.trace = os.path.join(self.d, "whole.ptc")
        run([self.ptcall, "record", "--backend", "soft", "-o", self.trace, "--", self.exe,
             str(WAIT_MS)], cwd=self.d)

    def report(self, trace):
        doc = json.loads(run([self.ptcall, "report", trace, "--format", "json", "--top",
                              "0"]).stdout)
        for e in schema_errors("report.schema.json", doc):
            check(False, e)
        return doc

    def text(self, *args):
        r = run([self.ptcall] + list(args))
        return r.stdout + r.stderr

    def export(self, trace, fmt, *opts):
        out = os.path.join(self.d, os.path.basename(trace) + "." + fmt)
        r = run([self.ptcall, "export", trace, "--format", fmt, "-o", out] + list(opts))
        with open(out) as f:
            return f.read(), r.stderr

    def events(self, trace):
        text, _ = self.export(trace, "jsonl")
        rows = [json.loads(l) for l in text.splitlines() if l.strip()]
        for r in rows[:2000]:
            for e in schema_errors("events-jsonl.schema.json", r):
                check(False, e)
                break
        return rows

    def chrome(self, trace):
        text, _ = self.export(trace, "chrome")
        doc = json.loads(text)
        for e in schema_errors("chrome-trace.schema.json", doc)[:5]:
            check(False, e)
        return doc


def db_and_html(t, trace, name, tot):
    """db add stores the window's counts (schema 5) and the HTML page carries them."""
    import sqlite3
    db = os.path.join(t.d, name + ".db")
    if os.path.exists(db):
        os.unlink(db)
    run([t.ptcall, "db", "add", "--db", db, trace])
    con = sqlite3.connect(db)
    got = con.execute("SELECT entered_before, still_open, window_threads FROM runs").fetchall()
    con.close()
    want = [(tot["entered_before"], tot["still_open"], tot["window_threads"])]
    check(got == want, "%s: db add stored %s, report says %s" % (name, got, want))
    page = os.path.join(t.d, name + ".html")
    run([t.ptcall, "html", trace, "-o", page])
    with open(page) as f:
        html = f.read()
    # the run's JSON is in the page (quotes as they are, or escaped inside a string)
    counts = re.search(r'entered_before\\?": (\d+), \\?"still_open\\?": (\d+), '
                       r'\\?"window_threads\\?": (\d+)', html)
    check(counts is not None and tuple(map(int, counts.groups())) == want[0] and
          "call(s) entered before the" in html and "still open at the end" in html,
          "%s: the HTML page does not carry the window's counts %s" % (name, want))


def case_blocked(t):
    rep = t.report(t.trace)
    tot = rep["totals"]
    check(tot["still_open"] >= 4, "blocked: still_open %d, want the blocked and the sleeping "
          "threads' open calls (4 or more)" % tot["still_open"])
    check(tot["unmatched"] == 0 and tot["entered_before"] == 0,
          "blocked: a whole trace has no unmatched exits nor calls entered before it")
    rows = t.events(t.trace)
    floor = WAIT_MS * 1e6 * 0.8
    for fn in ("wait_forever", "blocked_thread", "nap", "sleeper_thread"):
        got = [r for r in rows if r["function"] == fn]
        check(len(got) == 1, "blocked: %s has %d rows, want 1" % (fn, len(got)))
        if got:
            check(got[0]["ended"] == "end", "blocked: %s ended %s, want end (still open)" %
                  (fn, got[0]["ended"]))
            # closed at the process's end, not at its thread's last event: it waited while
            # main slept WAIT_MS
            check(got[0]["duration"] >= floor, "blocked: %s lasted %.3f ms, want at least "
                  "%.0f ms (it was blocked until the program's end)" %
                  (fn, got[0]["duration"] / 1e6, floor / 1e6))
    calls = t.text("calls", t.trace)
    check(re.search(r"(\} /\* wait_forever: |wait_forever\(\); /\* )still open at the end", calls)
          is not None,
          "blocked: calls does not mark wait_forever still open")
    check("closed when the thread's trace ended" in calls,
          "blocked: calls does not say how open frames were closed")
    doc = t.chrome(t.trace)
    ends = [e for e in doc["traceEvents"] if e.get("ph") == "E" and e.get("name") == "wait_forever"]
    check(len(ends) == 1 and ends[0].get("args", {}).get("still_open") is True,
          "blocked: chrome's end of wait_forever lacks args.still_open")
    # flame graphs keep each function's widths (a still open call's time is its own) and say
    # it in the frame's title
    svg, _ = t.export(t.trace, "svg", "--weight", "self")
    check(re.search(r'data-name="wait_forever"[^>]* data-still-open="1"', svg) is not None,
          "blocked: the flame graph does not say wait_forever was still open")
    db_and_html(t, t.trace, "blocked", tot)
    text = t.text("report", t.trace)
    check("summed over" in text, "blocked: report does not say its time is a sum over threads")
    by = t.text("report", t.trace, "--by", "thread")
    check(re.search(r"in traced functions \(the shares below are of it\)", by) is not None,
          "blocked: report --by thread gives no per-thread time")


def cut(t, name, *args):
    out = os.path.join(t.d, name + ".ptc")
    r = run([t.cut, t.trace, out] + list(args))
    wins = {}
    for line in r.stdout.splitlines():
        pid, tid, kept, before, after, _, _ = map(int, line.split())
        wins[tid] = (kept, before, after)
    return out, wins


def key(r):
    return (r["tid"], r["function"])


def compare(t, name, whole, cutrows, windows, snapshot):
    """cutrows must be whole's calls inside each thread's window."""
    win = {w["tid"]: w for w in windows}
    want, got = Counter(), Counter()
    for r in whole:
        w = win.get(r["tid"])
        if not w:
            continue
        lo, hi = w["from"], w["to"]
        start, end = r["start"], r["start"] + r["duration"]
        if r["ended"] == "end":  # closed at its thread's end, not by an event
            if start >= lo and not snapshot:
                want[key(r) + ("whole", start, r["duration"])] += 1
            elif lo <= start <= hi and snapshot:
                want[key(r) + ("open", start)] += 1
            continue
        if lo <= end <= hi:
            if start >= lo:
                want[key(r) + ("whole", start, r["duration"])] += 1
            else:
                want[key(r) + ("before", end)] += 1
        elif lo <= start <= hi and end > hi:
            want[key(r) + ("open", start)] += 1
    for r in cutrows:
        start, end = r["start"], r["start"] + r["duration"]
        if r.get("entered_before"):
            w = win[r["tid"]]
            check(abs(start - w["from"]) <= 2, "%s: %s entered before the window starts at %d, "
                  "not at the window's start %d" % (name, r["function"], start, w["from"]))
            # its end is the uncut call's end (times from the same ticks, +-1 ns rounding)
            got[key(r) + ("before", end)] += 1
        elif r["ended"] == "end" and snapshot:
            got[key(r) + ("open", start)] += 1
        else:
            got[key(r) + ("whole", start, r["duration"])] += 1
    # an end that rounds 1 ns apart: match the rest with a tolerance
    missing, extra = want - got, got - want
    for k in list(missing):
        if k[2] != "before":
            continue
        for d in (-2, -1, 1, 2):
            j = k[:3] + (k[3] + d,)
            while missing[k] and extra[j]:
                missing[k] -= 1
                extra[j] -= 1
    missing, extra = +missing, +extra
    check(not missing and not extra, "%s: cut calls differ from the whole trace's calls in the "
          "window: missing %s, extra %s" % (name, list(missing.items())[:5],
                                             list(extra.items())[:5]))
    nbefore = sum(v for k, v in want.items() if k[2] == "before")
    check(nbefore > 0, "%s: no call was entered before a window: the cut did not fall "
          "mid-stack" % name)
    return nbefore


def case_window(t, name, snapshot):
    whole = t.events(t.trace)
    if snapshot:
        cutargs = ["--how", "snapshot", "--from", "0.3", "--to", "0.7", "--wrapped", "--crash",
                   "11"]
    else:
        cutargs = ["--how", "attach", "--from", "0.5"]
    out, wins = cut(t, name, *cutargs)
    rep = t.report(out)
    tot = rep["totals"]
    rows = t.events(out)
    nbefore = compare(t, name, whole, rows, rep["windows"], snapshot)
    check(tot["entered_before"] == nbefore == sum(1 for r in rows if r["entered_before"]),
          "%s: entered_before %d, events mark %d, the whole trace says %d" %
          (name, tot["entered_before"], sum(1 for r in rows if r["entered_before"]), nbefore))
    check(tot["unmatched"] == 0 and tot["repairs"] == 0,
          "%s: %d unmatched exits, %d repairs: calls entered before the window are neither" %
          (name, tot["unmatched"], tot["repairs"]))
    check(tot["window_threads"] == len(wins), "%s: window_threads %d, want %d" %
          (name, tot["window_threads"], len(wins)))
    check(not tot["unclosed_threads"] and tot["complete"],
          "%s: a window's threads without their exit are not an incomplete trace" % name)
    # the report's calls per function (the fast path, no hook) are the events' rows
    per = Counter(r["function"] for r in rows)
    got = {f["name"]: f["calls"] for f in rep["functions"] if f["calls"]}
    check(got == dict(per), "%s: report calls %s differ from the events' %s" % (name, got,
                                                                               dict(per)))
    db_and_html(t, out, name, tot)
    for w in rep["windows"]:
        kept, before, after = wins[w["tid"]]
        check(w["windowed"] and w["window_chunk"], "%s: %d's window not read" % (name, w["tid"]))
        if snapshot:
            check(w["wrapped"] and w["lost_before"] == before and w["open_end"],
                  "%s: thread %d: wrapped %s lost_before %d (want %d) open_end %s" %
                  (name, w["tid"], w["wrapped"], w["lost_before"], before, w["open_end"]))
    text = t.text("report", out)
    check(re.search(r"note: \d+ threads? traced in a window of (its|their) life", text) and
          re.search(r"call(s were| was) entered before the trace began", text),
          "%s: report does not say the trace is a window with calls entered before it" % name)
    check(re.search(r"note:   \d+/\d+: window [\d.]+ ms to [\d.]+ ms", text) is not None,
          "%s: report does not say where each thread's window starts and ends" % name)
    if snapshot:
        check(re.search(r"snapshot of process \d+ \(crash\) taken on SIGSEGV at 0xdeadbeef in "
                        r"thread \d+", text) is not None,
              "%s: report does not say the snapshot was taken on SIGSEGV" % name)
        check(re.search(r"its ring wrapped: \d+ events lost before it", text) is not None,
              "%s: report does not say the ring wrapped" % name)
        check(len(rep["snapshots"]) == 1 and rep["snapshots"][0]["signal"] == 11,
              "%s: report JSON snapshots %s" % (name, rep["snapshots"]))
    # a loss inside the window: an exit on an empty stack after it may be of a call entered
    # inside the window, before the loss: unmatched, not entered before the trace
    gapped, _ = cut(t, name + "-gap", *(cutargs + ["--gap", "0.5"]))
    gtot = t.report(gapped)["totals"]
    check(gtot["gaps"] >= 1 and gtot["unmatched"] > 0 and
          gtot["entered_before"] <= tot["entered_before"] <=
          gtot["entered_before"] + gtot["unmatched"],
          "%s: after a loss in the window, exits on an empty stack are unmatched (gaps %d, "
          "unmatched %d, entered before %d of %d)" % (name, gtot["gaps"], gtot["unmatched"],
                                                      gtot["entered_before"],
                                                      tot["entered_before"]))
    calls = t.text("calls", out)
    check(re.search(r"\} /\* \w+: entered before the trace began: time since the window's start "
                    r"\(level \d+", calls) is not None,
          "%s: calls does not mark calls entered before the trace" % name)
    doc = t.chrome(out)
    xs = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
    check(len(xs) == nbefore and all(e["args"]["entered_before_trace"] for e in xs),
          "%s: chrome has %d complete events for %d calls entered before" % (name, len(xs),
                                                                               nbefore))
    names = Counter(e["name"] for e in doc["traceEvents"] if e.get("ph") == "i")
    check(names["trace window begins"] == len(wins) and names["trace window ends"] == len(wins),
          "%s: chrome's window instants %s" % (name, dict(names)))
    folded, _ = t.export(out, "folded")
    check(re.search(r"^\[entered before the trace began\];\w+ \d+$", folded, re.M) is not None,
          "%s: folded does not put calls entered before under their pseudo-root" % name)
    svg, _ = t.export(out, "svg")
    check("[entered before the trace began]" in svg, "%s: svg does not show them" % name)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--case", default="all")
    a = ap.parse_args()
    t = Tools(a)
    if a.case in ("all", "blocked"):
        case_blocked(t)
    if a.case in ("all", "attach"):
        case_window(t, "attach", False)
    if a.case in ("all", "snapshot"):
        case_window(t, "snapshot", True)
    if failures:
        sys.exit("%d failure(s)" % len(failures))
    print("ok")


if __name__ == "__main__":
    main()
