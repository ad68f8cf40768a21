#!/usr/bin/env python3
"""Counting mode, marks, the fuzz driver and the fork server (docs/runtime.md "Counting
mode", docs/cov.md), on programs built with ptcall-cc:

  record --counts   every function's calls exact (also with call-site trampolines off, and
                    equal to a timed trace's; with --only, the chosen function's alone), COUNTS chunks read here independently of the
                    decoder (CRC, layout, flags, labels); report/calls/stat say counts only
  marks             one segment per ptcall_mark with its label and index, counted from 0
                    again; in a trace of events (timed, untimed) a `/* mark: label */` line of
                    `ptcall calls` between the calls before and after it; a crash after a mark: the marked segments are in the file and the
                    last one is flagged CRASH; a fork child's segment is its own
  fuzz driver       one segment per input file (directories: regular files, sorted), the
                    label its path, LLVMFuzzerInitialize once, a crashing input last
  fork server       fs_harness speaks protocol v1: hello, per-input counts exact for known
                    inputs by file and by stdin, a hang killed and reported, a crash's wait
                    status, 300 inputs, the server's exit 0 at EOF; a program that is not
                    instrumented still serves (no modules); PTCALL_COUNTS_FD alone: one run
                    laid out in the shared file
  no runtime        a program calling ptcall_mark that is built without libptcall runs

usage: counts_test.py --build BUILD --work DIR --harness FS_HARNESS
"""
import argparse
import json
import mmap
import os
import signal
import struct
import subprocess
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
COUNTS = 12
F_MARK, F_END, F_CRASH = 1, 2, 4


def run(cmd, ok=(0,), **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    if r.returncode not in ok:
        sys.exit("FAIL: %s exited %d\n%s%s" % (" ".join(cmd), r.returncode, r.stdout[-3000:],
                                                r.stderr[-3000:]))
    return r


def check(cond, what):
    if not cond:
        sys.exit("FAIL: " + what)


def chunks(path):
    """(type, flags, pid, payload) of every chunk, CRCs checked (format 2.x)."""
    d = open(path, "rb").read()
    check(d[:8] == b"PTCALLTR", "%s: not a trace" % path)
    major, minor, hsize = struct.unpack_from("<HHI", d, 8)
    check(major == 2 and minor >= 1, "%s: format %d.%d, want 2.1 or later (COUNTS chunks)"
          % (path, major, minor))
    off, out = hsize, []
    while off < len(d):
        t, fl, sz, pid, tid, seq, crc = struct.unpack_from("<HHIIIII", d, off)
        p = d[off + 24:off + 24 + sz]
        check(zlib.crc32(d[off:off + 20], zlib.crc32(p)) == crc, "%s: CRC of chunk at %d" % (path, off))
        out.append((t, fl, pid, p))
        off += 24 + sz + (8 - sz % 8) % 8
    return out


def module_funcs(payload):
    """Function names of a MODULE chunk, in table order."""
    (mid, first, nstubs, nfuncs, bias, s0, s1, ident, path, ssize) = struct.unpack_from("<IIIIQQQQII", payload, 0)
    strings = payload[56 + 16 * nstubs + 16 * nfuncs:]
    names = []
    for i in range(nfuncs):
        name = struct.unpack_from("<I", payload, 56 + 16 * nstubs + 16 * i)[0]
        names.append(strings[name:strings.index(b"\0", name)].decode())
    return mid, ident, names


def segments(path):
    """Per pid: [(segment, flags, label, {function: calls})] from the COUNTS chunks."""
    mods, out = {}, {}
    for t, fl, pid, p in chunks(path):
        if t == 4:
            mid, ident, names = module_funcs(p)
            mods[(pid, mid)] = (ident, names)
        if t != COUNTS:
            continue
        check(fl & 1, "COUNTS chunk without the OPTIONAL flag")
        seg, flags, nm, lsize, tsc, res = struct.unpack_from("<IIIIQQ", p, 0)
        at = 32 + 16 * nm
        calls = {}
        for i in range(nm):
            mid, nf, ident = struct.unpack_from("<IIQ", p, 32 + 16 * i)
            mident, names = mods[(pid, mid)]
            check(ident == mident and nf == len(names), "COUNTS module %d differs from its MODULE" % mid)
            for k, n in enumerate(struct.unpack_from("<%dQ" % nf, p, at)):
                if n:
                    calls[names[k]] = calls.get(names[k], 0) + n
            at += 8 * nf
        check(at + lsize == len(p) and p[-1] == 0, "COUNTS chunk size")
        out.setdefault(pid, []).append((seg, flags, p[at:-1].decode(), calls))
    return out


def report(ptcall, trace):
    r = json.loads(run([ptcall, "report", trace, "--format", "json", "--top", "0"]).stdout)
    return {f["name"]: f["calls"] for f in r["functions"]}, r["totals"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--harness", required=True)
    a = ap.parse_args()
    work = os.path.join(a.work, "counts")
    os.makedirs(work, exist_ok=True)
    cc = os.path.join(a.build, "bin", "ptcall-cc")
    ptcall = os.path.join(a.build, "tools", "ptcall")
    rtlib = os.path.join(a.build, "runtime", "libptcall.so")
    inc = "-I" + os.path.join(os.path.dirname(os.path.dirname(HERE)), "include")
    prog = os.path.join(work, "target")
    run([cc, "-O2", "-g", inc, os.path.join(HERE, "programs", "counts_target.c"), "-o", prog, "-lpthread"])
    trace = os.path.join(work, "t.ptc")

    # --- record --counts: exact, with and without trampolines, equal to a timed trace ------
    want = {"main": 1, "parse": 1, "work": 1, "leaf": 7}
    inp = os.path.join(work, "seven")
    open(inp, "w").write("7\n")
    for env in ({}, {"PTCALL_TRAMPOLINES": "0"}):
        r = run([ptcall, "record", "--counts", "-o", trace, "--", prog, inp], env=dict(os.environ, **env))
        check("calls counted in 1 process, 1 segment" in r.stderr, "record's summary: " + r.stderr)
        got, tot = report(ptcall, trace)
        check(got == want, "record --counts %s: %s, want %s" % (env, got, want))
        check(tot["counted_calls"] == 10 and tot["counts_segments"] == 1 and tot["events"] == 0,
              "report totals %s" % tot)
        segs = segments(trace)
        check(len(segs) == 1 and list(segs.values())[0] == [(0, F_END, "", want)], "segments %s" % segs)
    run([ptcall, "record", "-o", os.path.join(work, "timed.ptc"), "--", prog, inp])
    got, _ = report(ptcall, os.path.join(work, "timed.ptc"))
    check(got == want, "the timed trace's calls %s differ from counting's %s" % (got, want))
    text = run([ptcall, "report", trace]).stdout
    check("# counts only (record --counts): 10 calls from 1 COUNTS segment" in text, "report: " + text)
    check("counts only" in run([ptcall, "calls", trace]).stdout, "calls says counts only")
    check("COUNTS 1" in run([ptcall, "stat", trace]).stdout, "stat names COUNTS chunks")
    # --only: the other functions are not counted, and the report says they were not traced
    run([ptcall, "record", "--counts", "--only", "leaf", "-o", trace, "--", prog, inp])
    got, tot = report(ptcall, trace)
    check(got == {"leaf": 7}, "--counts --only leaf: %s" % got)
    check("traced: 1 of" in run([ptcall, "report", trace]).stdout, "--only said in the report")
    r = run([ptcall, "record", "--counts", "--backend", "pt", "-o", trace, "--", prog, inp], ok=(2,))
    check("--counts" in r.stderr, "--counts --backend pt refused: " + r.stderr)
    print("ok: record --counts")

    # --- marks, crash after marks, threads, fork ---------------------------------------------
    open(inp, "w").write("mark 2 5\n")
    run([ptcall, "record", "--counts", "-o", trace, "--", prog, inp])
    (segs,) = segments(trace).values()
    check(segs == [(0, F_MARK, "one", {"main": 1, "work": 1, "leaf": 2}),
                   (1, F_END, "", {"work": 1, "leaf": 5})], "mark segments %s" % segs)
    open(inp, "w").write("crash\n")
    r = run([ptcall, "record", "--counts", "-o", trace, "--", prog, inp], ok=(128 + 11,))
    (segs,) = segments(trace).values()
    check(segs == [(0, F_END | F_CRASH, "", {"main": 1, "work": 1, "leaf": 3, "boom": 1})],
          "crash segment %s" % segs)
    open(inp, "w").write("threads\n")
    run([ptcall, "record", "--counts", "-o", trace, "--", prog, inp])
    got, _ = report(ptcall, trace)
    check(got == {"main": 1, "thread_main": 4, "t0": 1, "t1": 2, "t2": 3, "t3": 4}, "threads %s" % got)
    open(inp, "w").write("fork 4\n")
    run([ptcall, "record", "--counts", "-o", trace, "--", prog, inp])
    segs = segments(trace)
    check(len(segs) == 2, "fork: %d processes" % len(segs))
    parent, child = sorted(segs.values(), key=lambda s: "main" in s[0][3], reverse=True)
    check(parent == [(0, F_END, "", {"main": 1, "work": 1, "leaf": 1})] and
          child == [(0, F_END, "", {"parse": 1, "work": 1, "leaf": 4})], "fork %s" % segs)
    # in a trace of events a mark is a line of `ptcall calls` on its thread's timeline
    open(inp, "w").write("mark 2 3\n")
    for flags in ([], ["--no-timestamps"]):
        run([ptcall, "record"] + flags + ["-o", trace, "--", prog, inp])
        body = [l.split("|", 1)[1].strip() for l in run([ptcall, "calls", trace]).stdout.splitlines()
                if "|" in l and not l.startswith("#")]
        want_calls = ["main() {", "work() {", "leaf();", "leaf();", "} /* work */", "/* mark: one */",
                      "work() {", "leaf();", "leaf();", "leaf();", "} /* work */", "} /* main */"]
        check(body == want_calls, "trace mark %s: %s" % (flags, body))
        check("MARK 1" in run([ptcall, "stat", trace]).stdout, "stat names MARK chunks")
        got, _ = report(ptcall, trace)
        check(got == {"main": 1, "work": 2, "leaf": 5}, "trace with a mark: %s" % got)
    print("ok: marks, crash, threads, fork")

    # --- the fuzz driver -----------------------------------------------------------------
    fuzz = os.path.join(work, "fuzz")
    run([cc, "-O2", "-fptcall-fuzz-driver", os.path.join(HERE, "programs", "counts_fuzz.c"), "-o", fuzz])
    corpus = os.path.join(work, "corpus")
    os.makedirs(os.path.join(corpus, "subdir"), exist_ok=True)
    for name, data in (("2-b", "bx"), ("1-a", "a1"), ("3-empty", "")):
        open(os.path.join(corpus, name), "w").write(data)
    crash = os.path.join(work, "crash-input")
    open(crash, "w").write("crash")
    r = run([fuzz, corpus], ok=(0,))  # no runtime attached: runs, marks nothing
    r = run([ptcall, "record", "--counts", "-o", trace, "--", fuzz, corpus, "-runs=1",
             os.path.join(corpus, "1-a"), crash, os.path.join(corpus, "2-b")], ok=(128 + 11,))
    check("subdir is not a regular file; skipped" in r.stderr, "the driver skips directories: " + r.stderr)
    (segs,) = segments(trace).values()
    c = lambda n: os.path.join(corpus, n)
    init = {"LLVMFuzzerInitialize": 1}
    one = {"LLVMFuzzerTestOneInput": 1}
    check(segs == [(0, F_MARK, c("1-a"), dict(init, parse_a=1, **one)),
                   (1, F_MARK, c("2-b"), dict(parse_b=2, **one)),
                   (2, F_MARK, c("3-empty"), one),
                   (3, F_MARK, c("1-a"), dict(parse_a=1, **one)),
                   (4, F_END | F_CRASH, "", dict(boom=1, **one))], "fuzz driver segments %s" % segs)
    print("ok: fuzz driver")

    # --- the fork server -------------------------------------------------------------------
    env = dict(os.environ, PTCALL_RUNTIME=rtlib)
    # the counters' order is the MODULE chunk's function table (docs/cov.md)
    open(inp, "w").write("1\n")
    run([ptcall, "record", "--counts", "-o", trace, "--", prog, inp])
    names = [module_funcs(p)[2] for t, fl, pid, p in chunks(trace) if t == 4][0]

    def serve(inputs, args, timeout=300, funcs=names):
        r = run([a.harness, str(timeout), os.path.join(work, "fs-in"), "--"] + args,
                input="".join(i + "\n" for i in inputs), env=env)
        lines = r.stdout.splitlines()
        check(lines[0] == "hello=0x50465301" and lines[-1] == "server=0", "protocol: " + r.stdout + r.stderr)
        res = []
        for line in lines[1:-1]:
            if not line.startswith("status="):
                continue  # the target's own output
            st, hang, counts = line.split(" ", 2)
            vec = counts.split("=", 1)[1]
            calls = {}
            if vec and vec != "none":
                mod, nums = vec.split(";")[0].split(":")
                calls = {funcs[k]: int(n) for k, n in enumerate(nums.split(",")) if int(n)}
            res.append((int(st.split("=")[1]), int(hang.split("=")[1]), calls))
        return res

    base = lambda n: {"main": 1, "parse": 1, "work": 1, **({"leaf": n} if n else {})}
    for args in ([prog, os.path.join(work, "fs-in")], [prog]):  # by file (@@), by stdin
        got = serve(["3", "5", "hang", "crash", "0", "mark 1 2"], args)
        check(got[0] == (0, 0, base(3)) and got[1] == (0, 0, base(5)), "fs counts %s" % got[:2])
        check(got[2][0] == signal.SIGKILL and got[2][1] == 1 and got[2][2] == {"main": 1, "spin": 1},
              "fs hang %s" % (got[2],))
        check(got[3][0] & 0x7f == signal.SIGSEGV and got[3][2] == {"main": 1, "work": 1, "leaf": 3, "boom": 1},
              "fs crash %s" % (got[3],))
        check(got[4] == (0, 0, base(0)), "fs zero %s" % (got[4],))
        # without a trace file a mark writes nothing and zeroes nothing: the whole run's calls
        check(got[5] == (0, 0, {"main": 1, "work": 2, "leaf": 3}), "fs mark %s" % (got[5],))
    many = [str(i % 7) for i in range(300)]
    got = serve(many, [prog, os.path.join(work, "fs-in")])
    check(len(got) == 300 and all(g == (0, 0, base(i % 7)) for i, g in enumerate(got)), "300 inputs")
    plain = os.path.join(work, "plain")
    run(["cc", "-O2", inc, os.path.join(HERE, "programs", "counts_target.c"), "-o", plain, "-lpthread"])
    got = serve(["2"], [plain, os.path.join(work, "fs-in")])
    check(got == [(0, 0, {})], "a plain program serves without modules: %s" % got)
    # PTCALL_COUNTS_FD alone: one run in the shared layout
    fd = os.memfd_create("counts", 0)
    open(inp, "w").write("4\n")
    run([prog, inp], env=dict(env, LD_PRELOAD=rtlib, PTCALL_COUNTS_FD=str(fd)), pass_fds=(fd,))
    size = os.fstat(fd).st_size
    m = mmap.mmap(fd, size, prot=mmap.PROT_READ)
    magic, ver, hsz, total, nm, pid, nc, moff, soff, ssz, _, coff, nb, boff = struct.unpack_from(
        "<8sIIQIIQIIIIQQQ", m, 0)
    # version 2: block counters after the function counters (none: not built -fptcall-cov)
    check(magic == b"PTCCOUNT" and ver == 2 and hsz == 80 and total == size and nm == 1 and
          coff % 4096 == 0 and coff + 8 * nc <= total and nb == 0, "counts file header")
    ident, first, nf, path, mid, _ = struct.unpack_from("<QQIIII", m, moff)
    check(m[soff + path:m.find(b"\0", soff + path)].decode() == prog, "counts file module path")
    vec = struct.unpack_from("<%dQ" % nf, m, coff + 8 * first)
    check({names[k]: n for k, n in enumerate(vec) if n} == base(4), "counts file counts %s" % (vec,))
    # the child's exit path: at once when main returns and the program has no exit handlers
    # (stdio still flushed), the whole way with one (it runs and counts)
    ex, log = os.path.join(work, "fs_exit"), os.path.join(work, "fs_exit.log")
    run([cc, "-O1", "-g", os.path.join(HERE, "programs", "fs_exit.c"), "-o", ex])
    run([ptcall, "record", "--counts", "-o", trace, "--", ex, inp, log])
    ex_names = [module_funcs(p)[2] for t, fl, pid, p in chunks(trace) if t == 4][0]
    open(log, "w").close()
    got = serve(["plain", "atexit", "plain"], [ex, os.path.join(work, "fs-in"), log], funcs=ex_names)
    check(open(log).read() == "ran plain\nran atexit\nran plain\n", "fs stdio flushed: %r" % open(log).read())
    check(got[0] == (0, 0, {"main": 1}) and got[2] == got[0], "fs exit without handlers %s" % got)
    # the whole way: the handler and the destructor run (fini runs only there)
    check(got[1] == (0, 0, {"main": 1, "on_exit_handler": 1, "bye": 1, "fini": 1}),
          "fs exit with a handler %s" % (got[1],))
    print("ok: fork server, counts file, exit path")

    # --- the deferred fork server: setup once, before ptcall_forkserver_start ---------------
    dfr, dlog = os.path.join(work, "fs_defer"), os.path.join(work, "fs_defer.log")
    run([cc, "-O1", "-g", inc, os.path.join(HERE, "programs", "fs_defer.c"), "-o", dfr])
    dcorp = os.path.join(work, "defer-corpus")
    os.makedirs(dcorp, exist_ok=True)
    for k, body in enumerate(("a", "b", "a", "b", "b")):
        open(os.path.join(dcorp, "in%d" % k), "w").write(body + "\n")

    def cov_sets(extra, args):
        open(dlog, "w").close()
        out = os.path.join(work, "defer.ptcov")
        # --allow-late: a default (late) build, whose universe this test does not look at
        r = run([ptcall, "cov", "run", "--allow-late", "-o", out, "--corpus", dcorp] + extra + ["--", dfr, "@@"] + args,
                ok=(0, 1))
        if r.returncode:
            return r, None
        doc = json.loads(run([ptcall, "cov", "report", "--format", "json", out]).stdout)
        name = {f["id"]: f["name"] for f in doc["functions"]}
        return r, {os.path.basename(i["name"]): sorted(name[f] for f in i["functions"]) for i in doc["inputs"]}

    r, sets = cov_sets(["--deferred"], [dlog])
    want = {"in%d" % k: ["on_" + b] for k, b in enumerate("abab" "b")}
    check(sets == want, "deferred: each input reached its own function only (setup and main "
                        "ran before the fork point): %s" % sets)
    check(open(dlog).read() == "init\n", "deferred: setup ran once for 5 inputs: %r" % open(dlog).read())
    r, sets = cov_sets([], [dlog])
    check(sets and all(s == sorted(["main", "setup", "on_" + b]) for s, b in
                       zip((sets["in%d" % k] for k in range(5)), "abab" "b")) and
          open(dlog).read() == "init\n" * 5,
          "not deferred: setup runs and counts in every child (%s)" % sets)
    r, sets = cov_sets(["--deferred"], [dlog, "nostart"])
    check(r.returncode == 1 and sets is None and "ptcall_forkserver_start" in r.stderr,
          "deferred, the target never calls ptcall_forkserver_start(): exit 1, said: %s"
          % r.stderr.strip()[-300:])
    r = run([ptcall, "cov", "run", "-o", os.path.join(work, "x.ptcov"), "--corpus", dcorp,
             "--deferred", "--exec", "--", dfr, "@@", dlog], ok=(2,))
    check("--deferred" in r.stderr, "--deferred with --exec: a usage error: " + r.stderr.strip())
    print("ok: deferred fork server")

    # --- no runtime: ptcall_mark is a no-op ------------------------------------------------
    open(inp, "w").write("mark 1 1\n")
    run([plain, inp])
    print("ok: no runtime")


if __name__ == "__main__":
    main()
