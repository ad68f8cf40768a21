#!/usr/bin/env python3
"""Counted and traced in one run (docs/runtime.md, *Tracing within a budget*), software backend.

select_main.c (threads, a fork, a function pointer, recursion, a dlopen'd library) is recorded
with `record --counts` (the reference: every function's exact calls), with plain `--only`, and
counted beside tracing:

- `--only 'a*' --count-rest`: every function's calls (its COUNTS calls + its entries in the
  events, summed by `ptcall report`) equal the counting run's exactly; the calls in the COUNTS
  chunks (read here with test/real/ptc_chunks.py) are exactly the calls of the functions
  --only left out; every MODULE_ARMED is followed by a MODULE_COUNTED whose bits are the
  functions left out; every process ends with an END COUNTS segment; the traced functions'
  per-thread enter/return sequences equal the plain `--only 'a*'` run's.
- PTCALL_TRACE_SET=FILE with --only 'a*': the listed candidates are traced (their sequences
  equal a plain --only run of exactly those), the other candidates counted exactly, the
  functions --only leaves out neither; and its bad files: missing, a wrong first line, a name
  that matches no function: one line each, and what was done instead.

Timed, and untimed (--untimed: call-site trampolines beside counting trampolines).

usage: mixed_test.py --build BUILD --work DIR [--untimed]
"""
import argparse
import json
import os
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "real"))
import ptc_chunks  # noqa: E402
from select_test import sequences  # noqa: E402

# The reference runs are compared with selections, which leave the C library's blocking
# calls out (trace format 2.6): e2e-blocking (blocking_test.py) covers those.
os.environ.setdefault("PTCALL_BLOCKING", "0")

CHUNK_MODULE, CHUNK_MODULE_ARMED, CHUNK_COUNTS, CHUNK_PROCESS_END = 4, 11, 12, 9
CHUNK_MODULE_COUNTED = 20
COUNTS_F_END = 0x2


def run(cmd, ok=(0,), env=None, **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                       **kw)
    if r.returncode not in ok:
        sys.exit("FAIL: %s exited %d\n%s%s" % (" ".join(cmd), r.returncode, r.stdout[-3000:],
                                                r.stderr[-3000:]))
    return r


class Case:
    def __init__(self, a):
        b = os.path.abspath(a.build)
        self.ptcall = os.path.join(b, "tools", "ptcall")
        cc = os.path.join(b, "bin", "ptcall-cc")
        self.d = os.path.join(os.path.abspath(a.work), "mixed" + ("-untimed" if a.untimed else ""))
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

    def record(self, name, opts, env_add=None, timing=True):
        trace = os.path.join(self.d, name + ".ptc")
        for f in (trace, os.path.join(self.d, name + ".ran")):
            if os.path.exists(f):
                os.unlink(f)
        env = dict(os.environ)
        env.update(env_add or {})
        r = run([self.ptcall, "record", "--backend", "soft", "-o", trace] +
                (self.untimed if timing else []) + opts +
                ["--", self.exe, "./libselplug.so", os.path.join(self.d, name + ".ran")],
                env=env, cwd=self.d)
        return trace, r

    def report(self, trace):
        return json.loads(run([self.ptcall, "report", trace, "--format", "json", "--top",
                               "0"]).stdout)

    def calls(self, trace):
        seqs = sequences(run([self.ptcall, "calls", trace, "--order", "thread"]).stdout)
        return sorted(tuple(s) for s in seqs.values() if s)

    def fail(self, msg):
        print("FAIL: " + msg)
        self.failures.append(msg)


def counts_of(rep):
    return {f["name"]: int(f["calls"]) for f in rep["functions"]}


def bits_set(payload):
    module_id, num_funcs, n, _ = struct.unpack_from("<IIII", payload, 0)
    bits = payload[16:16 + (num_funcs + 7) // 8]
    got = sum(bin(b).count("1") for b in bits)
    return module_id, num_funcs, n, got


def chunk_facts(c, tag, trace):
    """Checks the chunk order and returns (calls in all COUNTS chunks, counted functions per
    process summed over its MODULE_COUNTED chunks of the main process)."""
    cl = ptc_chunks.chunks(trace)
    total, counted = 0, {}
    ends = {}
    for i, (typ, _f, pid, _tid, _seq, p) in enumerate(cl):
        if typ == CHUNK_MODULE_ARMED:
            # its MODULE_COUNTED follows (other threads' event chunks may fall between),
            # before the process's next MODULE chunk
            nxt = None
            for j in range(i + 1, len(cl)):
                if cl[j][2] == pid and cl[j][0] in (CHUNK_MODULE, CHUNK_MODULE_COUNTED):
                    nxt = cl[j]
                    break
            if not nxt or nxt[0] != CHUNK_MODULE_COUNTED:
                c.fail("%s: MODULE_ARMED of pid %d not followed by MODULE_COUNTED" % (tag, pid))
                continue
            mid, nf, n, got = bits_set(nxt[5])
            amid, anf, an, agot = bits_set(p)
            if (mid, nf) != (amid, anf) or n != got or an != agot:
                c.fail("%s: MODULE_COUNTED %s vs MODULE_ARMED %s" % (tag, (mid, nf, n, got),
                                                                     (amid, anf, an, agot)))
            # a function is traced or counted, never both
            ab = p[16:16 + (nf + 7) // 8]
            cb = nxt[5][16:16 + (nf + 7) // 8]
            if any(x & y for x, y in zip(ab, cb)):
                c.fail("%s: a function both armed and counted in module %d" % (tag, mid))
            counted.setdefault(pid, 0)
            counted[pid] += n
        elif typ == CHUNK_COUNTS:
            seg, flags, nm, lsize, _tsc = struct.unpack_from("<IIIIQ", p, 0)
            at = 32  # struct ptc_counts
            nfs = []
            for k in range(nm):
                _mid, nf = struct.unpack_from("<II", p, at + 16 * k)  # ptc_counts_module
                nfs.append(nf)
            at += 16 * nm
            calls = struct.unpack_from("<%dQ" % sum(nfs), p, at) if sum(nfs) else ()
            total += sum(calls)
            if flags & COUNTS_F_END:
                ends[pid] = ends.get(pid, 0) + 1
        elif typ == CHUNK_PROCESS_END and ends.get(pid, 0) != 1:
            c.fail("%s: pid %d ended with %d END COUNTS segments, want 1" % (tag, pid,
                                                                           ends.get(pid, 0)))
    return total, counted


def check_count_rest(c, ref):
    tag = "--only 'a*' --count-rest"
    trace, _ = c.record("count-rest", ["--only", "a*", "--count-rest"])
    plain, _ = c.record("only-a", ["--only", "a*"])
    got = counts_of(c.report(trace))
    if got != ref:
        c.fail("%s: calls %s, want the counting run's %s" % (tag, got, ref))
    traced = {n for n in ref if n.startswith("a")}
    want_counted = sum(v for n, v in ref.items() if n not in traced)
    total, counted = chunk_facts(c, tag, trace)
    if total != want_counted:
        c.fail("%s: COUNTS chunks hold %d calls, want %d (the functions --only left out)" %
               (tag, total, want_counted))
    if not counted or min(counted.values()) == 0:
        c.fail("%s: MODULE_COUNTED says %s functions counted" % (tag, counted))
    if c.calls(trace) != c.calls(plain):
        c.fail("%s: the traced functions' sequences differ from plain --only's" % tag)
    print("count-rest: %d calls of %d functions equal --counts; %d in COUNTS chunks" %
          (sum(got.values()), len(got), total))


def check_trace_set(c, ref):
    listed = ["alpha", "aworker", "aplug_entry", "arec"]
    path = os.path.join(c.d, "set.txt")
    with open(path, "w") as f:
        f.write("ptcall-trace-set 1\n# chosen by hand\n" + "\n".join(listed) + "\n")
    tag = "PTCALL_TRACE_SET"
    trace, r = c.record("trace-set", ["--only", "a*"], {"PTCALL_TRACE_SET": path})
    if "PTCALL_TRACE_SET" in r.stderr:
        c.fail("%s: the runtime complained: %s" % (tag, r.stderr))
    rep = c.report(trace)
    got = counts_of(rep)
    cands = {n for n in ref if n.startswith("a")}
    want = {n: v for n, v in ref.items() if n in cands}
    if got != want:
        c.fail("%s: calls %s, want the counting run's for the candidates %s" % (tag, got, want))
    total, _ = chunk_facts(c, tag, trace)
    want_counted = sum(v for n, v in want.items() if n not in listed)
    if total != want_counted:
        c.fail("%s: COUNTS chunks hold %d calls, want %d" % (tag, total, want_counted))
    plain, _ = c.record("only-listed", [x for n in listed for x in ("--only", n)] +
                        ["--module", c.lib])
    if c.calls(trace) != c.calls(plain):
        c.fail("%s: the listed functions' sequences differ from plain --only's" % tag)
    print("trace set: %d listed traced, %d calls counted" % (len(listed), total))

    # bad files: each one line, and every candidate counted, none traced
    bad = {
        "missing": (os.path.join(c.d, "no-such-set.txt"), None, "cannot read it"),
        "header": (os.path.join(c.d, "bad-header.txt"), "alpha\nbeta\n",
                   "its first line is not 'ptcall-trace-set 1'"),
    }
    for name, (p, text, line) in bad.items():
        if text is not None:
            with open(p, "w") as f:
                f.write(text)
        elif os.path.exists(p):
            os.unlink(p)
        trace, r = c.record("bad-" + name, ["--only", "a*"], {"PTCALL_TRACE_SET": p})
        said = [x for x in r.stderr.splitlines() if "PTCALL_TRACE_SET" in x]
        if len(said) != 1 or line not in said[0] or "counting every candidate" not in said[0]:
            c.fail("bad set %s: stderr %r, want one line with %r" % (name, r.stderr, line))
        rep = c.report(trace)
        if counts_of(rep) != want or rep["totals"]["events"] != 0:
            c.fail("bad set %s: calls %s, events %d; want every candidate counted, none "
                   "traced" % (name, counts_of(rep), rep["totals"]["events"]))
    p = os.path.join(c.d, "unmatched.txt")
    with open(p, "w") as f:
        f.write("ptcall-trace-set 1\nalpha\nno_such_function\n")
    trace, r = c.record("bad-unmatched", ["--only", "a*"], {"PTCALL_TRACE_SET": p})
    said = [x for x in r.stderr.splitlines() if "PTCALL_TRACE_SET" in x]
    if len(said) != 1 or "'no_such_function' names no function" not in said[0]:
        c.fail("unmatched name: stderr %r" % r.stderr)
    if counts_of(c.report(trace)) != want:
        c.fail("unmatched name: calls differ from the counting run's")
    print("trace set: bad files said in one line each")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--untimed", action="store_true")
    c = Case(ap.parse_args())
    ref_trace, _ = c.record("counts", ["--counts"], timing=False)
    ref = counts_of(c.report(ref_trace))
    if len(ref) < 10:
        sys.exit("FAIL: the counting run counted only %s" % ref)
    check_count_rest(c, ref)
    check_trace_set(c, ref)
    # refused combinations: one usage line
    r = run([c.ptcall, "record", "--counts", "--count-rest", "-o", os.path.join(c.d, "x.ptc"),
             "--", c.exe], ok=(2,))
    if "--count-rest" not in r.stderr:
        c.fail("--counts --count-rest: %r" % r.stderr)
    # modes that cannot count beside tracing: one line each, the program runs
    for env_add, line in (({"PTCALL_BACKEND": "pt", "PTCALL_COUNT_REST": "1"},
                           "PTCALL_COUNT_REST is ignored under Intel PT"),
                          ({"PTCALL_RING": "1M", "PTCALL_TRACE_SET": "/nonexistent"},
                           "PTCALL_TRACE_SET is ignored with PTCALL_RING"),
                          ({"PTCALL_COUNT_REST": "1"},
                           "PTCALL_COUNT_REST is ignored in a program started without ptcall")):
        env = {k: v for k, v in os.environ.items() if not k.startswith("PTCALL_")}
        env.update(env_add)
        r = run([c.exe, c.lib, os.path.join(c.d, "ignored.ran")], env=env, cwd=c.d)
        said = [x for x in r.stderr.splitlines() if x.startswith("ptcall")]
        if len(said) != 1 or line not in said[0]:
            c.fail("%s: stderr %r, want one line %r" % (env_add, r.stderr, line))
    if c.failures:
        sys.exit("FAIL: %d checks" % len(c.failures))
    print("PASS")


if __name__ == "__main__":
    main()
