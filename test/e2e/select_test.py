#!/usr/bin/env python3
"""`ptcall record --only/--skip` (docs/runtime.md, Choosing what to trace), software backend.

select_main.c (threads, a fork, a function pointer, recursion, a dlopen'd library) is recorded
once in full and then with selections. For each selection, the functions it chooses (the
test's own fnmatch over the full recording's names: display name or linkage name, --skip
winning) must have exactly the full recording's call counts, and every thread's sequence of
enters and returns of chosen functions (`ptcall calls --order thread`, threads compared as a
multiset: tids differ between runs) must be the full recording's sequence with the other
functions taken out. Then: the report, graph, calls, multi-run report and diff tell "not
traced" from "not called"; `--only` that matches nothing fails before the program runs (it
would create a file); a glob that only a dlopen'd library matches needs --module; the runtime
warns at exit about a glob that matched nothing. Timed, and untimed (call-site trampolines,
leaf calls as one record).

usage: select_test.py --build BUILD --work DIR [--untimed]
"""
import argparse
import fnmatch
import json
import os
import re
import subprocess
import sys

# The reference runs are compared with selections, which leave the C library's blocking
# calls out (trace format 2.6): e2e-blocking (blocking_test.py) covers those.
os.environ.setdefault("PTCALL_BLOCKING", "0")

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMAS = os.path.join(os.path.dirname(os.path.dirname(HERE)), "docs", "schema")


def schema_errors(name, doc):
    """Problems of doc against docs/schema/NAME (none when python3-jsonschema is missing)."""
    try:
        import jsonschema
    except ImportError:
        print("note: python3-jsonschema not installed: %s not validated" % name)
        return []
    with open(os.path.join(SCHEMAS, name)) as f:
        schema = json.load(f)
    v = jsonschema.validators.validator_for(schema)(schema)
    return ["%s: %s at %s" % (name, e.message, list(e.path)) for e in v.iter_errors(doc)]


def run(cmd, ok=(0,), **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    if r.returncode not in ok:
        sys.exit("FAIL: %s exited %d\n%s%s" % (" ".join(cmd), r.returncode, r.stdout[-3000:],
                                                r.stderr[-3000:]))
    return r


def sequences(calls_text):
    """Per thread (pid/tid), the list of ('>', f) enters and ('<', f) returns that
    `ptcall calls` prints: 'f() {' enters, 'f();' enters and returns, '} /* f ... */' returns
    (also a frame inherited across fork or closed at the end)."""
    seqs = {}
    for line in calls_text.splitlines():
        if line.startswith("#") or "|" not in line:
            continue
        left, body = line.split("|", 1)
        tid = left.split()[-1]
        body = body.strip()
        s = seqs.setdefault(tid, [])
        m = re.match(r"^([^\s(]+)\(\) \{$", body)
        if m:
            s.append((">", m.group(1)))
            continue
        m = re.match(r"^([^\s(]+)\(\);", body)
        if m:
            s += [(">", m.group(1)), ("<", m.group(1))]
            continue
        m = re.match(r"^\} /\* ([^\s:*]+)", body)
        if m:
            s.append(("<", m.group(1)))
    return seqs


def chosen(names, only, skip):
    """The names a selection chooses (C functions: display name = linkage name)."""
    def match(globs, n):
        return any(fnmatch.fnmatchcase(n, g) for g in globs)
    return {n for n in names if (not only or match(only, n)) and not match(skip, n)}


class Case:
    def __init__(self, a):
        b = os.path.abspath(a.build)
        self.ptcall = os.path.join(b, "tools", "ptcall")
        cc = os.path.join(b, "bin", "ptcall-cc")
        self.d = os.path.join(os.path.abspath(a.work), "select" + ("-untimed" if a.untimed else ""))
        os.makedirs(self.d, exist_ok=True)
        src = os.path.join(HERE, "programs")
        self.lib = os.path.join(self.d, "libselplug.so")
        self.exe = os.path.join(self.d, "select_main")
        run([cc, "-O2", "-g", "-fPIC", "-shared", os.path.join(src, "select_plugin.c"), "-o",
             self.lib])
        run([cc, "-O2", "-g", "-pthread", os.path.join(src, "select_main.c"), "-ldl", "-o",
             self.exe])
        self.untimed = ["--no-timestamps"] if a.untimed else []
        self.failures = []

    def record(self, name, opts, ok=(0,)):
        trace = os.path.join(self.d, name + ".ptc")
        marker = os.path.join(self.d, name + ".ran")
        if os.path.exists(marker):
            os.unlink(marker)
        r = run([self.ptcall, "record", "--backend", "soft", "-o", trace] + self.untimed + opts +
                ["--", self.exe, "./libselplug.so", marker], ok=ok, cwd=self.d)
        return trace, marker, r

    def report(self, trace):
        return json.loads(run([self.ptcall, "report", trace, "--format", "json", "--top", "0"]).stdout)

    def fail(self, msg):
        self.failures.append(msg)


def counts_of(rep):
    return {f["name"]: int(f["calls"]) for f in rep["functions"]}


def check_selection(c, full, only, skip, extra=()):
    """Records with the selection and compares with the full recording filtered afterwards."""
    opts = [x for g in only for x in ("--only", g)] + [x for g in skip for x in ("--skip", g)]
    tag = "sel-" + re.sub(r"[^a-z0-9]+", "_", " ".join(opts))
    trace, _, _ = c.record(tag, opts + list(extra))
    names = set(full["names"])
    want_set = chosen(names, only, skip)
    rep = c.report(trace)
    want_counts = {f: n for f, n in full["counts"].items() if f in want_set}
    got_counts = counts_of(rep)
    if got_counts != want_counts:
        c.fail("%s: counts %s, want %s" % (opts, got_counts, want_counts))
    sel = rep.get("selection")
    spec = " ".join("--%s '%s'" % (o, g) for o, gs in (("only", only), ("skip", skip)) for g in gs)
    if not sel or sel["spec"] != spec or sel["traced"] != len(want_set) or \
            sel["functions"] != len(names):
        c.fail("%s: selection %s, want spec %r, %d of %d traced" % (opts, sel, spec,
                                                                    len(want_set), len(names)))
    if sorted(rep.get("not_traced", [])) != sorted(names - want_set):
        c.fail("%s: not_traced %s, want %s" % (opts, rep.get("not_traced"), sorted(names - want_set)))
    if set(rep["uncalled"]) & (names - want_set):
        c.fail("%s: functions not traced listed as uncalled: %s" % (opts, rep["uncalled"]))
    # a thread that enters no chosen function records nothing: a fork child's frames
    # inherited from its parent then have no thread to close in (the full recording closes
    # them at the child's end), so such sequences are left out on both sides
    got_seq = sorted(s for s in sequences(run([c.ptcall, "calls", trace, "--order", "thread"]).stdout).values()
                     if any(e[0] == ">" for e in s))
    want_seq = sorted(s for s in ([e for e in seq if e[1] in want_set] for seq in full["seqs"])
                      if any(e[0] == ">" for e in s))
    if got_seq != want_seq:
        c.fail("%s: per-thread sequences differ:\n  got:  %s\n  want: %s"
               % (opts, [s[:12] for s in got_seq], [s[:12] for s in want_seq]))
    return trace, want_set, sum(want_counts.values())


def check_outputs(c, trace, full_trace, names, want_set):
    """Every output says which functions were traced; none shows them as called 0 times."""
    n, m = len(want_set), len(names)
    table = run([c.ptcall, "report", trace, "--top", "0"]).stdout
    if "# traced: %d of %d functions (--only 'a*')" % (n, m) not in table:
        c.fail("report table lacks the traced line:\n" + table[:600])
    for f in names - want_set:
        if re.search(r"\s%s \[" % re.escape(f), table):
            c.fail("report table shows %s, which was not traced" % f)
    graph = run([c.ptcall, "graph", trace]).stdout
    if "// traced: %d of %d functions" % (n, m) not in graph:
        c.fail("graph lacks the traced line:\n" + graph[:400])
    for f in names - want_set:
        if 'label="%s\\n' % f in graph:
            c.fail("graph has a node for %s, which was not traced" % f)
    calls = run([c.ptcall, "calls", trace]).stdout
    if "# note: traced: %d of %d" % (n, m) not in calls:
        c.fail("calls lacks the traced note")
    csv = run([c.ptcall, "report", trace, "--format", "csv"])
    if "traced: %d of %d" % (n, m) not in csv.stderr or csv.stdout.startswith("#"):
        c.fail("report csv: the note belongs on stderr: %r" % csv.stderr)
    # several runs: the full run and the selective one
    multi = json.loads(run([c.ptcall, "report", full_trace, trace, "--format", "json",
                            "--top", "0"]).stdout)
    for e in schema_errors("report-runs.schema.json", multi) + \
            schema_errors("report.schema.json", c.report(trace)) + \
            schema_errors("diff.schema.json", json.loads(run([c.ptcall, "diff", full_trace, trace,
                                                              "--format", "json"]).stdout)):
        c.fail(e)
    runs = multi["runs"]
    if "selection" in runs[0] or runs[1].get("selection", {}).get("traced") != n:
        c.fail("multi-run json: run selections %s" % [r.get("selection") for r in runs])
    for f in multi["functions"]:
        want = 1 if f["name"] in names - want_set else 0
        if f.get("untraced_runs") != want:
            c.fail("multi-run json: %s untraced_runs %s, want %d" % (f["name"], f.get("untraced_runs"), want))
    mt = run([c.ptcall, "report", full_trace, trace, "--top", "0"]).stdout
    if "1 of the 2 runs traced only some functions" not in mt or "(not traced in 1 run)" not in mt:
        c.fail("multi-run table does not say which functions a run did not trace:\n" + mt[:900])
    diff = run([c.ptcall, "diff", full_trace, trace, "--top", "0"]).stdout
    left = len([f for f in names - want_set if f in c.full_counts])
    if "note: %d functions left out" % left not in diff or " (gone)" in diff:
        c.fail("diff: functions not traced must be left out, not gone:\n" + diff[-900:])


def check_pt(c, full):
    """With Intel PT hardware: `--backend pt --only 'a*'` gives the chosen functions' calls, as
    the soft backend does (the arming itself is checked without hardware by e2e-arm)."""
    trace = os.path.join(c.d, "pt-only.ptc")
    r = subprocess.run([c.ptcall, "record", "--backend", "pt", "-o", trace, "--only", "a*", "--",
                        c.exe, "./libselplug.so", os.path.join(c.d, "pt.ran")],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=c.d)
    if r.returncode and "Intel PT not available" in r.stderr:
        print("SKIP: --backend pt --only: no Intel PT here (%s)" % r.stderr.strip().splitlines()[-1])
        return
    if r.returncode:
        c.fail("--backend pt --only: exit %d: %s" % (r.returncode, r.stderr[-600:]))
        return
    rep = c.report(trace)
    want = {f: n for f, n in full["counts"].items() if f in chosen(full["names"], ["a*"], [])}
    if counts_of(rep) != want or not rep.get("selection"):
        c.fail("--backend pt --only: counts %s, selection %s; want %s"
               % (counts_of(rep), rep.get("selection"), want))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--untimed", action="store_true")
    a = ap.parse_args()
    c = Case(a)

    full_trace, marker, _ = c.record("full", [])
    if not os.path.exists(marker):
        sys.exit("FAIL: the program did not run")
    rep = c.report(full_trace)
    if "selection" in rep or "not_traced" in rep:
        c.fail("a full recording reads as selective: %s" % rep.get("selection"))
    names = set(counts_of(rep)) | set(rep["uncalled"])
    c.full_counts = counts_of(rep)
    full = {"names": names, "counts": c.full_counts,
            "seqs": list(sequences(run([c.ptcall, "calls", full_trace, "--order", "thread"]).stdout).values())}
    for f in ("alpha", "alpha_leaf", "beta", "arec", "apply", "add1", "bsub", "aworker", "aplug_entry",
              "bplug_helper", "aplug_leaf", "main"):
        if f not in names:
            sys.exit("FAIL: the full recording lacks %s: %s" % (f, sorted(names)))

    traced = {}
    for only, skip, extra in ((["a*"], [], []),
                              ([], ["a*", "beta"], []),
                              (["a*", "b*"], ["alpha_leaf", "bplug_*"], []),
                              (["aplug_*"], [], ["--module", "./libselplug.so"])):
        t, ws, ncalls = check_selection(c, full, only, skip, extra)
        traced[(tuple(only), tuple(skip))] = (t, ws, ncalls)
    t, ws, _ = traced[(("a*",), ())]
    check_outputs(c, t, full_trace, names, ws)

    # --only that matches nothing: refused before the program starts
    _, marker, r = c.record("nomatch", ["--only", "nomatch"], ok=(1,))
    if os.path.exists(marker):
        c.fail("--only nomatch: the program ran")
    if not all(w in r.stderr for w in ("--only 'nomatch'", c.exe, "functions", "ptcall report")):
        c.fail("--only nomatch: the error should name the glob, the binary, its functions and "
               "'ptcall report': %r" % r.stderr)
    # only the dlopen'd library has it: refused without --module (the check cannot see it)
    _, marker, r = c.record("dlonly", ["--only", "aplug_*"], ok=(1,))
    if os.path.exists(marker) or "--module" not in r.stderr:
        c.fail("--only aplug_* without --module: ran %s, stderr %r" % (os.path.exists(marker), r.stderr))
    # a glob that matched nothing by the end: the runtime says so (once: not the fork child)
    _, _, r = c.record("skipnone", ["--only", "a*", "--skip", "zz*"])
    warns = [l for l in r.stderr.splitlines() if "--skip 'zz*' matched no function" in l]
    if len(warns) != 1:
        c.fail("--skip zz*: want one warning at exit, stderr %r" % r.stderr)
    # bad globs
    r = run([c.ptcall, "record", "--only", "", "--", c.exe], ok=(2,))
    if "--only needs a non-empty GLOB" not in r.stderr:
        c.fail("--only '': %r" % r.stderr)

    if not a.untimed:
        check_pt(c, full)

    if c.failures:
        sys.exit("FAIL select%s:\n%s" % (" untimed" if a.untimed else "", "\n".join(c.failures)))
    print("PASS select%s: %d functions; --only/--skip give exactly the chosen functions' calls "
          "(%s); outputs tell not traced from not called; --only nomatch refused before the run"
          % (" untimed" if a.untimed else "", len(names),
             ", ".join("%s: %d calls" % ("+".join(k[0]) + ("-" + "-".join(k[1]) if k[1] else ""), v[2])
                       for k, v in traced.items())))


if __name__ == "__main__":
    main()
