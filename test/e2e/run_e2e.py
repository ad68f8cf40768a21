#!/usr/bin/env python3
"""End-to-end: build a program with ptcall-cc, record it with the software backend, and check
that `ptcall report` and `ptcall calls` give exactly the expected counts and call trees.

usage: run_e2e.py --build BUILD --work DIR CASE [--opt -O2] [--extra-flags "..."]
"""
import argparse
import json
import os
import re
import subprocess
import sys

from cases import CASES, parse_tree

# These cases compare exact event sequences of the program's own functions; the C library's
# blocking calls (recorded since trace format 2.6) are e2e-blocking's (blocking_test.py).
os.environ.setdefault("PTCALL_BLOCKING", "0")

HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd, ok=(0,), **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    if r.returncode not in ok:
        sys.exit("FAIL: %s exited %d\n%s%s" % (" ".join(cmd), r.returncode, r.stdout[-3000:], r.stderr[-3000:]))
    return r


def threads_from_calls(text):
    """Per (pid/tid), the call tree printed by `ptcall calls`, as parse_tree() would give it.
    Frames inherited across fork have no opening line: they are filled in from their closing
    line ('} /* f: inherited across fork */')."""
    trees = {}
    for line in text.splitlines():
        if line.startswith("#") or "|" not in line:
            continue
        left, right = line.split("|", 1)
        tid = left.split()[-1]
        body = right.lstrip(" ")
        depth = (len(right) - len(body) - 1) // 2
        root, stack = trees.setdefault(tid, ([], []))
        m_open = re.match(r"^([^\s(]+)\(\) \{$", body)
        m_leaf = re.match(r"^([^\s(]+)\(\);", body)
        m_close = re.match(r"^\} /\* ([^\s:*]+)", body)
        if not (m_open or m_leaf or m_close):
            continue
        if m_close:
            # the frame being closed sits at `depth`; an inherited one was never opened
            while len(stack) <= depth:
                node = ("?", [])
                (stack[-1][1] if stack else root).append(node)
                stack.append(node)
            node = stack[depth]
            if node[0] == "?":
                idx = (stack[depth - 1][1] if depth else root).index(node)
                named = (m_close.group(1), node[1])
                (stack[depth - 1][1] if depth else root)[idx] = named
                stack[depth] = named
            del stack[depth:]
            continue
        while len(stack) < depth:
            node = ("?", [])
            (stack[-1][1] if stack else root).append(node)
            stack.append(node)
        del stack[depth:]
        node = ((m_open or m_leaf).group(1), [])
        (stack[-1][1] if stack else root).append(node)
        if m_open:
            stack.append(node)
    return {tid: root for tid, (root, _) in trees.items()}


def show(tree):
    return " ".join(n + ("(%s)" % show(k) if k else "") for n, k in tree)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--opt", default="-O2")
    ap.add_argument("--extra-flags", default="")
    ap.add_argument("--untimed", action="store_true", help="record without timestamps (trampolines)")
    ap.add_argument("case")
    a = ap.parse_args()
    case = CASES[a.case]
    b = os.path.abspath(a.build)
    ptcall = os.path.join(b, "tools", "ptcall")
    cc = os.path.join(b, "bin", "ptcall-c++" if case.get("cxx") else "ptcall-cc")
    tag = (a.case + a.opt + a.extra_flags + ("-untimed" if a.untimed else "")).replace(" ", "").replace("=", "")
    d = os.path.abspath(os.path.join(a.work, tag))
    os.makedirs(d, exist_ok=True)
    flags = [a.opt, "-g"] + a.extra_flags.split() + case.get("cflags", [])
    for lib, srcs in case.get("shared", {}).items():
        run([cc] + flags + ["-fPIC", "-shared"] + [os.path.join(HERE, "programs", s) for s in srcs]
            + ["-o", os.path.join(d, lib)])
    exe = os.path.join(d, a.case)
    run([cc] + flags + [os.path.join(HERE, "programs", s) for s in case["src"]] + ["-o", exe]
        + case.get("ldflags", []))
    trace = os.path.join(d, "run.ptc")
    args = [x.format(dir=d) for x in case.get("args", [])]
    want_status = case.get("status", 0)
    untimed = ["--no-timestamps"] if a.untimed else []
    r = run([ptcall, "record", "-q", "--backend", "soft", "-o", trace] + untimed + ["--", exe] + args,
            ok=(want_status,), cwd=d)
    failures = []

    rep = json.loads(run([ptcall, "report", trace, "--format", "json", "--top", "0"]).stdout)
    counts = {}
    for f in rep["functions"]:
        short = f["name"].split("(")[0]  # C++ display names carry their parameter lists
        counts[short] = counts.get(short, 0) + int(f["calls"])
    if counts != case["counts"]:
        failures.append("counts: got %s, want %s" % (counts, case["counts"]))
    if rep["totals"].get("processes") != case.get("processes", 1):
        failures.append("processes: got %s, want %s" % (rep["totals"].get("processes"), case.get("processes", 1)))
    for f in rep["functions"]:
        if not f["module"].startswith("/"):
            failures.append("%s: module path %s is not absolute" % (f["name"], f["module"]))
        for m in case.get("modules", []):
            if f["name"].startswith("plugin_") and not f["module"].endswith(m):
                failures.append("%s should be in module %s, report says %s" % (f["name"], m, f["module"]))

    calls = run([ptcall, "calls", trace]).stdout
    got = sorted(show(t) for t in threads_from_calls(calls).values())
    expected = case["threads"]
    if a.opt != "-O0" and "threads_optimised" in case:
        expected = case["threads_optimised"]
    want = sorted(show(parse_tree(t)) for t in expected)
    if got != want:
        failures.append("call trees differ:\n  got:  %s\n  want: %s" % ("\n        ".join(x[:300] for x in got),
                                                                      "\n        ".join(x[:300] for x in want)))
    whole = rep["totals"]["whole_calls"]
    if a.untimed:
        # untimed, a leaf's call is one record: with its exits recorded too (--leaf-exits) the
        # run must read the same, call for call, from records that are all plain
        trace2 = os.path.join(d, "run-leaf-exits.ptc")
        run([ptcall, "record", "-q", "--backend", "soft", "-o", trace2, "--no-timestamps",
             "--leaf-exits", "--", exe] + args, ok=(want_status,), cwd=d)
        rep2 = json.loads(run([ptcall, "report", trace2, "--format", "json", "--top", "0"]).stdout)
        if rep2["totals"]["whole_calls"] != 0:
            failures.append("--leaf-exits: %d whole calls" % rep2["totals"]["whole_calls"])
        if rep2["totals"]["events"] != rep["totals"]["events"]:
            failures.append("events: %d, with --leaf-exits %d" % (rep["totals"]["events"],
                                                                 rep2["totals"]["events"]))
        calls2 = run([ptcall, "calls", trace2]).stdout
        if sorted(show(t) for t in threads_from_calls(calls2).values()) != got:
            failures.append("call trees differ with --leaf-exits")
        # `ptcall stat` counts records: each leaf call is one record fewer than with its exits
        st1, st2 = (run([ptcall, "stat", t]).stdout for t in (trace, trace2))
        rec = [int(m.group(1)) if m else -1
               for m in (re.search(r"total: (\d+) records", x) for x in (st1, st2))]
        if rec[1] - rec[0] != whole:
            failures.append("stat: %d records, %d with --leaf-exits: the difference is not the %d "
                            "leaf calls" % (rec[0], rec[1], whole))
        if whole and "a leaf's call is one record" not in st1:
            failures.append("stat does not say a leaf's call is one record:\n" + st1[-600:])
    elif whole:
        failures.append("timed trace with %d whole calls" % whole)
    if failures:
        print(calls[:4000])
        sys.exit("FAIL %s %s %s:\n%s" % (a.case, a.opt, a.extra_flags, "\n".join(failures)))
    print("PASS %s %s %s%s: %d functions, %d threads exact, %d leaf calls as one record" %
          (a.case, a.opt, a.extra_flags, " untimed" if a.untimed else "", len(counts), len(got), whole))


if __name__ == "__main__":
    main()
