#!/usr/bin/env python3
"""Side-by-side benchmark of ptcall against its peers; writes docs/benchmarks.md.

Every contestant runs the same workload binary built the way it needs, in one run of this
script, interleaved round-robin so that machine noise hits all of them alike. Results are
ratios against the uninstrumented build (median of --runs runs); absolute times are shown
only for reference. Then the decode comparison: one ≥100 M-event recording of the calls
workload decoded by `ptcall report`/`ptcall calls` beside `uftrace report`/`uftrace replay`,
and ptcall's Intel PT decoders beside libipt's on synthetic streams (build/test/pt/pt_decode_bench).

usage: bench/run.py [--build DIR] [--runs N] [--quick] [--out FILE] [--only SECTION,...] [--rebuild]
  SECTION: calls, threads, bzip2, lua, sqlite (overhead), untraced (the untraced builds of the real
  programs in paired rounds, and their instruction counts), arm-subset (Lua recorded with
  `ptcall record --only` of about 10 % of its functions, beside a full recording and the untraced
  builds), decode (trace decoding), pt (Intel PT decoding), facts (timestamp cost). Default: all.
  --quick: small inputs, 3 runs, ~3 minutes.
"""
import argparse
import json
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLANG = shutil.which("clang-14") or "clang"
LLVM_XRAY = shutil.which("llvm-xray-14") or shutil.which("llvm-xray")
SECTIONS = ("calls", "threads", "bzip2", "lua", "sqlite", "untraced", "arm-subset", "decode", "pt",
            "facts")
REBUILD = False


def sh(cmd, **kw):
    """Runs a command, failing loudly with its output."""
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    if r.returncode != 0:
        sys.exit("bench: command failed (%d): %s\n%s" % (r.returncode, " ".join(cmd), r.stdout[-3000:]))
    return r.stdout


def replace_block(path, name, text):
    """Puts text between <!-- NAME:begin --> and <!-- NAME:end --> in path (appended with the
    markers when they are not there yet): the other bench scripts' blocks of their figures."""
    begin, end = "<!-- %s:begin -->" % name, "<!-- %s:end -->" % name
    doc = open(path).read()
    block = "%s\n%s\n%s" % (begin, text.rstrip("\n"), end)
    if begin in doc and end in doc:
        doc = doc[:doc.index(begin)] + block + doc[doc.index(end) + len(end):]
    else:
        doc = doc.rstrip("\n") + "\n\n" + block + "\n"
    with open(path, "w") as f:
        f.write(doc)


def warm_cache(paths):
    """Reads every file under paths, off the clock. This VM pages out file pages left idle for a
    few seconds (a DAMON `pageout` scheme), so a trace written earlier in the run may be back on
    disk; a decoder timed on it would measure the disk, not the decoder."""
    for p in paths:
        files = [p] if os.path.isfile(p) else [os.path.join(r, f) for r, _, fs in os.walk(p) for f in fs]
        for name in files:
            with open(name, "rb") as fh:
                while fh.read(1 << 24):
                    pass


def timed_run(cmd, env=None, stdout=subprocess.DEVNULL, cwd=None, cpu=False, warm=()):
    """Wall time and peak RSS (KiB) of one run, and with cpu=True also its CPU time (user +
    sys). GNU time measures the RSS: a child forked from this Python process would report
    Python's own size as its peak. The files under warm are read first (warm_cache)."""
    rss_file = os.path.join(os.environ.get("TMPDIR", "/tmp"), "ptcall-bench-rss.%d" % os.getpid())
    warm_cache(warm)
    # Earlier runs' dirty pages go to disk first, off the clock: otherwise the kernel writes
    # one contestant's trace back (uftrace's are gigabytes) while the next one is timed.
    os.sync()
    t0 = time.perf_counter()
    r = subprocess.run(["/usr/bin/time", "-f", "%M %U %S", "-o", rss_file] + cmd, env=env, stdout=stdout,
                       stderr=subprocess.PIPE, cwd=cwd)
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        sys.exit("bench: %s exited %d\n%s" % (" ".join(cmd), r.returncode, r.stderr.decode(errors="replace")[-2000:]))
    with open(rss_file) as f:
        fields = f.read().split()
    os.unlink(rss_file)
    rss = int(fields[-3])
    if cpu:
        return dt, rss, float(fields[-2]) + float(fields[-1])
    return dt, rss


class Workload:
    def __init__(self, name, sources, args, cflags=(), ldflags=(), desc="", cmd_desc="", small_args=None,
                 small_desc=""):
        self.name, self.sources, self.args = name, list(sources), list(args)
        self.cflags, self.ldflags, self.desc, self.cmd_desc = list(cflags), list(ldflags), desc, cmd_desc
        # a smaller input of the same program, for instruction counts under valgrind (~50× slower)
        self.small_args, self.small_desc = small_args, small_desc


def mtime(p):
    return os.path.getmtime(p) if os.path.exists(p) else 0.0


def build(cc, wl, extra_cflags, extra_objs, out, deps=()):
    """Compiles and links wl with cc; skipped when out is newer than every input and was built
    by the same command (a stamp beside it), unless --rebuild."""
    os.makedirs(os.path.dirname(out), exist_ok=True)
    cmd = [cc, "-O2", "-g"] + wl.cflags + extra_cflags + wl.sources + extra_objs + ["-o", out] + wl.ldflags
    stamp = out + ".cmd"
    inputs = wl.sources + list(extra_objs) + list(deps) + [shutil.which(cc) or cc]
    if os.path.basename(cc).startswith("ptcall-"):  # the wrapper is a script: the pass is what changes
        inputs.append(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(cc))), "pass", "ptcall-pass.so"))
    if (not REBUILD and os.path.exists(out) and os.path.exists(stamp) and open(stamp).read() == json.dumps(cmd)
            and mtime(out) >= max(mtime(p) for p in inputs)):
        return out
    print("bench: building %s" % os.path.relpath(out, ROOT), file=sys.stderr)
    sh(cmd)
    with open(stamp, "w") as f:
        f.write(json.dumps(cmd))
    return out


def uftrace_calls(datadir):
    """Total calls in a uftrace data directory, from its own report."""
    return uftrace_calls_text(sh(["uftrace", "report", "-d", datadir, "--no-pager"]))


def uftrace_calls_text(out):
    total = 0
    for line in out.splitlines():
        cols = line.split()
        # "  Total time   Self time       Calls  Function"; rows: time unit time unit calls name
        if len(cols) >= 6 and cols[4].isdigit() and not cols[5].startswith("linux:"):
            total += int(cols[4])
    return total


def dir_bytes(path):
    if os.path.isfile(path):
        return os.path.getsize(path)
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def ptcall_events(ptcall, trace):
    out = sh([ptcall, "report", trace, "--format", "json", "--top", "0"])
    j = json.loads(out)
    return int(j["totals"]["events"])


def xray_files(d, prefix):
    return sorted(os.path.join(d, f) for f in os.listdir(d) if f.startswith(prefix))


def xray_basic_records(files):
    """XRay basic mode logs: a 32-byte file header, then fixed 32-byte records (one file per thread)."""
    return sum(max(os.path.getsize(f) - 32, 0) // 32 for f in files)


def xray_fdr_records(files, binary):
    """Function records in XRay FDR logs (variable-length records), counted by llvm-xray."""
    n = 0
    for f in files:
        p = subprocess.Popen([LLVM_XRAY, "convert", "--output-format=yaml", "-instr_map=" + binary, f],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for line in p.stdout:
            if "kind: function-" in line:
                n += 1
        if p.wait() != 0:
            sys.exit("bench: llvm-xray convert %s failed: %s" % (f, p.stderr.read()[-2000:]))
    return n


def fetch_source(pkg, dest):
    sh([os.path.join(ROOT, "scripts", "fetch-debian-source.sh"), pkg, dest])


def bzip2_input(bz, path, size):
    """Deterministic text of `size` bytes: bzip2's own sources and manual, repeated."""
    if not os.path.exists(path) or os.path.getsize(path) != size:
        parts = b"".join(open(os.path.join(bz, f), "rb").read() for f in sorted(os.listdir(bz))
                         if f.endswith((".c", ".h", ".xml", ".ps")))
        with open(path, "wb") as f:
            f.write((parts * (size // len(parts) + 1))[:size])
    return path


def lua_workload(work, wdir, quick):
    src = os.path.join(work, "lua5.4-src")
    fetch_source("lua5.4", src)
    inc = os.path.join(work, "lua5.4-include")
    os.makedirs(inc, exist_ok=True)
    hdr = os.path.join(inc, "lua5.4-deb-multiarch.h")
    if not os.path.exists(hdr):  # Debian's luaconf.h patch includes it; debian/rules generates it
        with open(hdr, "w") as f:
            f.write('#define DEB_HOST_MULTIARCH "x86_64-linux-gnu"\n')
    sdir = os.path.join(src, "src")
    sources = sorted(os.path.join(sdir, f) for f in os.listdir(sdir) if f.endswith(".c") and f != "luac.c")
    scale = "1" if quick else "12"
    version = open(os.path.join(src, "debian", "changelog")).readline().split()[1].strip("()")
    # Lua throws errors and yields coroutines with _longjmp, which uftrace 0.13 does not follow
    # (it crashes on the first coroutine yield); sigsetjmp(b, 0)/siglongjmp cost the same (no
    # signal mask saved) and uftrace handles them. Every contestant gets the same build flags.
    jmp = ["-Dluai_jmpbuf=sigjmp_buf", "-DLUAI_THROW(L,c)=siglongjmp((c)->b,1)",
           "-DLUAI_TRY(L,c,a)=if (sigsetjmp((c)->b,0) == 0) { a }"]
    script = os.path.join(wdir, "bench.lua")
    return Workload("lua", sources, [script, scale], cflags=["-DLUA_USE_LINUX", "-I" + inc, "-w"] + jmp,
                    ldflags=["-lm", "-ldl"],
                    desc="Lua %s interpreter (Debian source) running bench/workloads/bench.lua, scale %s "
                         "(recursion, table sort with a Lua comparator, strings, closures, metatables, coroutines)"
                    % (version, scale),
                    cmd_desc="lua bench/workloads/bench.lua %s" % scale, small_args=[script, "1"],
                    small_desc="`bench.lua 1`")


def sqlite_script(work, wdir, rows):
    sql = os.path.join(work, "bench-%d.sql" % rows)
    text = open(os.path.join(wdir, "bench.sql")).read().replace("@ROWS@", str(rows))
    if not os.path.exists(sql) or open(sql).read() != text:
        with open(sql, "w") as f:
            f.write(text)
    return sql


def sqlite_workload(work, wdir, quick):
    src = os.path.join(work, "sqlite3-src")
    fetch_source("sqlite3", src)
    amalg = os.path.join(work, "sqlite3-amalgamation")
    if not os.path.exists(os.path.join(amalg, "shell.c")):
        # Debian ships SQLite's full source tree; its makefile generates the amalgamation (needs tclsh)
        os.makedirs(amalg, exist_ok=True)
        print("bench: generating the SQLite amalgamation", file=sys.stderr)
        sh([os.path.join(src, "configure"), "--disable-tcl"], cwd=amalg)
        sh(["make", "sqlite3.c", "shell.c"], cwd=amalg)
    rows = 5000 if quick else 120000
    sql, sql_small = sqlite_script(work, wdir, rows), sqlite_script(work, wdir, 5000)
    version = open(os.path.join(src, "VERSION")).read().strip()
    return Workload("sqlite", [os.path.join(amalg, "sqlite3.c"), os.path.join(amalg, "shell.c")],
                    [":memory:", ".read " + sql], cflags=["-w"], ldflags=["-lm", "-ldl", "-lpthread"],
                    desc="SQLite %s shell (Debian source, amalgamation) running bench/workloads/bench.sql on an "
                         "in-memory database, %d rows (inserts, indexes, joins, group by, window functions, updates)"
                    % (version, rows),
                    cmd_desc="sqlite3 :memory: '.read bench.sql' (@ROWS@ = %d)" % rows,
                    small_args=[":memory:", ".read " + sql_small], small_desc="5000 rows")


def workloads_for(a, work, wdir, want):
    workloads = []
    fib_n, loop_n = ("27", "2000000") if a.quick else ("32", "30000000")
    if "calls" in want:
        workloads.append(Workload("calls", [os.path.join(wdir, "calls.c")], [fib_n, loop_n],
                                  desc="recursive fib(%s) + a loop calling a tiny function %s times" % (fib_n, loop_n),
                                  cmd_desc="calls %s %s" % (fib_n, loop_n)))
    if "threads" in want:
        rounds = "3" if a.quick else "20"
        workloads.append(Workload("threads", [os.path.join(wdir, "threads.c")], [rounds],
                                  cflags=["-pthread"], ldflags=["-pthread"],
                                  desc="4 threads: qsort with a comparator call-back + fib(18), per round",
                                  cmd_desc="threads %s" % rounds))
    if "bzip2" in want:
        bz = os.path.join(work, "bzip2-src")
        fetch_source("bzip2", bz)
        want_b = (1 if a.quick else 16) << 20
        bz_inp = bzip2_input(bz, os.path.join(work, "bzip2-input"), want_b)
        bz_small = bzip2_input(bz, os.path.join(work, "bzip2-input-1m"), 1 << 20)
        bz_src = [os.path.join(bz, f + ".c") for f in
                  ("blocksort", "huffman", "crctable", "randtable", "compress", "decompress", "bzlib", "bzip2")]
        workloads.append(Workload("bzip2", bz_src, ["-9", "-c", bz_inp], cflags=["-D_FILE_OFFSET_BITS=64", "-w"],
                                  desc="bzip2 1.0.8 (Debian source) compressing %d MiB of text" % (want_b >> 20),
                                  cmd_desc="bzip2 -9 -c INPUT (%d MiB)" % (want_b >> 20),
                                  small_args=["-9", "-c", bz_small], small_desc="1 MiB of the same text"))
    if "lua" in want:
        workloads.append(lua_workload(work, wdir, a.quick))
    if "sqlite" in want:
        workloads.append(sqlite_workload(work, wdir, a.quick))
    return workloads


def ptcall_deps(build_dir):
    return [os.path.join(build_dir, "pass", "ptcall-pass.so"), os.path.join(build_dir, "runtime", "libptcall.so"),
            os.path.join(build_dir, "bin", "ptcall-cc")]


def workload_bins(wl, work, tools, hooks, fdr_ctl):
    ptcc, build_dir = tools["ptcc"], tools["build_dir"]
    d = os.path.join(work, wl.name)
    os.makedirs(d, exist_ok=True)
    return {
        "base": build(CLANG, wl, [], [], os.path.join(d, "base")),
        "ptcall": build(ptcc, wl, [], [], os.path.join(d, "ptcall"), deps=ptcall_deps(build_dir)),
        "cyg-empty": build(CLANG, wl, ["-finstrument-functions"], [hooks["empty"]], os.path.join(d, "cyg-empty")),
        "cyg-log": build(CLANG, wl, ["-finstrument-functions"], [hooks["log"]], os.path.join(d, "cyg-log")),
        # one XRay binary for unpatched, basic and FDR; fdr_ctl only acts when XRAY_OPTIONS selects FDR
        "xray": build(CLANG, wl, ["-fxray-instrument", "-fxray-instruction-threshold=1"], [fdr_ctl],
                      os.path.join(d, "xray")),
        # one -pg binary: run plain it is gprof's (writes gmon.out), under uftrace record it is uftrace's
        "pg": build(CLANG, wl, ["-pg"], [], os.path.join(d, "pg")),
    }


def bench_workload(wl, work, tools, hooks, fdr_ctl, runs):
    ptcall = tools["ptcall"]
    d = os.path.join(work, wl.name)
    bins = workload_bins(wl, work, tools, hooks, fdr_ctl)
    trace = os.path.join(d, "run.ptc")
    trace_nt = os.path.join(d, "run-nots.ptc")
    uft = os.path.join(d, "uftrace.data")
    gdir = os.path.join(d, "gprof-run")
    os.makedirs(gdir, exist_ok=True)
    gmon = os.path.join(gdir, "gmon.out")
    env_basic = dict(os.environ, XRAY_OPTIONS="patch_premain=true xray_mode=xray-basic xray_logfile_base=%s"
                     % os.path.join(d, "xray-basic."))
    env_fdr = dict(os.environ, XRAY_OPTIONS="patch_premain=true xray_mode=xray-fdr xray_logfile_base=%s"
                   % os.path.join(d, "xray-fdr."), XRAY_FDR_OPTIONS="func_duration_threshold_us=0 grace_period_ms=1")
    contestants = [
        ("uninstrumented", [bins["base"]] + wl.args, None, None),
        ("ptcall untraced", [bins["ptcall"]] + wl.args, None, None),
        # call sites armed, stubs left `ret`: what the program pays under Intel PT (the
        # hardware's own cost aside)
        ("ptcall armed (PT's in-program cost)", [bins["ptcall"]] + wl.args,
         dict(os.environ, PTCALL_ARM="1"), None),
        ("ptcall soft, timestamps", [ptcall, "record", "-q", "-o", trace, "--", bins["ptcall"]] + wl.args, None, None),
        ("ptcall soft, no timestamps", [ptcall, "record", "-q", "--no-timestamps", "-o", trace_nt, "--",
                                        bins["ptcall"]] + wl.args, None, None),
        ("-finstrument-functions, empty hooks", [bins["cyg-empty"]] + wl.args, None, None),
        ("-finstrument-functions, logging hooks", [bins["cyg-log"]] + wl.args, None, None),
        ("XRay unpatched", [bins["xray"]] + wl.args, None, None),
        ("XRay basic mode", [bins["xray"]] + wl.args, env_basic, None),
        ("XRay FDR mode", [bins["xray"]] + wl.args, env_fdr, None),
        ("gprof (-pg, gmon.out)", [bins["pg"]] + wl.args, None, gdir),
        ("uftrace record", ["uftrace", "record", "-d", uft, bins["pg"]] + wl.args, None, None),
    ]
    times = {c[0]: [] for c in contestants}
    rss = {c[0]: 0 for c in contestants}
    for r in range(runs):
        for name, cmd, env, cwd in contestants:
            # every contestant starts without the previous run's output
            if name == "uftrace record":
                shutil.rmtree(uft, ignore_errors=True)
            for f in xray_files(d, "xray-"):
                os.unlink(f)
            if os.path.exists(gmon):
                os.unlink(gmon)
            own = {"ptcall soft, timestamps": trace, "ptcall soft, no timestamps": trace_nt}.get(name)
            if own and os.path.exists(own):
                os.unlink(own)
            dt, mx = timed_run(cmd, env=env, cwd=cwd)
            times[name].append(dt)
            rss[name] = max(rss[name], mx)
            if name == "XRay basic mode":  # keep the last run's logs for counting, out of the next runs' way
                basic_bytes = sum(os.path.getsize(f) for f in xray_files(d, "xray-basic."))
                basic_recs = xray_basic_records(xray_files(d, "xray-basic."))
            if name == "XRay FDR mode":
                fdr_files = xray_files(d, "xray-fdr.")
                if not fdr_files:
                    sys.exit("bench: XRay FDR mode wrote no log in %s" % d)
                if r == runs - 1:
                    fdr_bytes = sum(os.path.getsize(f) for f in fdr_files)
                    fdr_recs = xray_fdr_records(fdr_files, bins["xray"])
            if name == "gprof (-pg, gmon.out)":
                if not os.path.exists(gmon):
                    sys.exit("bench: gprof build wrote no gmon.out in %s" % gdir)
                gmon_bytes = os.path.getsize(gmon)
        print("bench: %s run %d/%d done" % (wl.name, r + 1, runs), file=sys.stderr)
    base = statistics.median(times["uninstrumented"])
    ev = ptcall_events(ptcall, trace)
    ev_nt = ptcall_events(ptcall, trace_nt)
    ucalls = uftrace_calls(uft)
    row = {}
    for name, _, _, _ in contestants:
        med = statistics.median(times[name])
        row[name] = {"median_s": med, "ratio": med / base, "rss_kib": rss[name]}

    def trace_info(name, nbytes, events, note=""):
        row[name].update(bytes=nbytes, events=events, bytes_per_event=nbytes / max(events, 1), note=note)

    trace_info("ptcall soft, timestamps", dir_bytes(trace), ev)
    trace_info("ptcall soft, no timestamps", dir_bytes(trace_nt), ev_nt, "leaf")
    trace_info("XRay basic mode", basic_bytes, basic_recs, "basic")
    trace_info("XRay FDR mode", fdr_bytes, fdr_recs, "fdr")
    trace_info("uftrace record", dir_bytes(uft), 2 * ucalls)
    # gmon.out is a PC histogram + call-arc table, not a trace: bytes per event of the -pg build's
    # instrumented calls (as counted by uftrace on the same binary), for scale only
    row["gprof (-pg, gmon.out)"].update(bytes=gmon_bytes, events=None, bytes_per_event=gmon_bytes / max(2 * ucalls, 1),
                                        note="gprof")
    return row


def quartiles(xs):
    q = statistics.quantiles(xs, n=4, method="inclusive") if len(xs) > 1 else [xs[0]] * 3
    return q[0], statistics.median(xs), q[2]


def instructions(binary, args, cwd, env=None):
    """Instructions one run executes, counted by valgrind's callgrind: the same count on every run
    of the same binary and input, whatever else the machine does. valgrind 3.19 cannot read
    clang 14's DWARF 5, so it runs a stripped copy. env: e.g. PTCALL_ARM=1 (the runtime patches
    call sites in the objects' constructors, before that code first runs)."""
    stripped = binary + ".stripped"
    if mtime(stripped) < mtime(binary):
        sh(["strip", "-o", stripped, binary])
    r = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", stripped] + args,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=cwd, text=True, env=env)
    m = re.search(r"Collected : (\d+)", r.stderr)
    if r.returncode != 0 or not m:
        sys.exit("bench: valgrind on %s failed (exit %d)\n%s" % (stripped, r.returncode, r.stderr[-2000:]))
    return int(m.group(1))


UNTRACED = (("uninstrumented", "base"), ("ptcall untraced", "ptcall"), ("XRay unpatched", "xray"))


def wall_and_cpu(cmd, cwd):
    """Wall time and CPU time (user + sys) of one run, the CPU time from wait4's rusage: to the
    microsecond, where GNU time's is to the hundredth of a second."""
    os.sync()  # earlier runs' dirty pages go to disk first, off the clock
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=cwd)
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    dt = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit("bench: %s exited %d\n%s" % (" ".join(cmd), p.returncode, err.decode(errors="replace")[-2000:]))
    return dt, ru.ru_utime + ru.ru_stime


def bench_untraced(wl, work, tools, hooks, fdr_ctl, rounds):
    """The untraced builds in paired rounds: each round runs the plain, ptcall and XRay builds back
    to back (in an order that rotates from round to round) and divides each time by the plain
    build's of the same round, so drift of the machine between rounds cancels; the figures are the
    medians of those per-round ratios, of wall and of CPU time. Then the instructions each build
    executes on a smaller input, which no noise moves."""
    d = os.path.join(work, wl.name)
    bins = workload_bins(wl, work, tools, hooks, fdr_ctl)
    wall = {n: [] for n, _ in UNTRACED}
    cpu = {n: [] for n, _ in UNTRACED}
    for r in range(rounds):
        order = UNTRACED[r % len(UNTRACED):] + UNTRACED[:r % len(UNTRACED)]
        got = {}
        for name, key in order:
            got[name] = wall_and_cpu([bins[key]] + wl.args, d)
        for name, _ in UNTRACED:
            wall[name].append(got[name][0] / got["uninstrumented"][0])
            cpu[name].append(got[name][1] / max(got["uninstrumented"][1], 1e-9))
        print("bench: %s untraced round %d/%d done" % (wl.name, r + 1, rounds), file=sys.stderr)
    res = {"rounds": rounds, "small_desc": wl.small_desc}
    for name, key in UNTRACED:
        res[name] = {"wall": quartiles(wall[name]), "cpu": quartiles(cpu[name]),
                     "wall_rounds": wall[name], "instructions": instructions(bins[key], wl.small_args, d)}
    return res


# `ptcall record --only` on Lua: the table, string, GC, object, tag-method and closure modules
# (luaH_ luaS_ luaC_ luaO_ luaT_ luaF_), about 10 % of the functions of the late-placed build
ARM_SUBSET_GLOBS = ("luaH_*", "luaS_*", "luaC_*", "luaO_*", "luaT_*", "luaF_*")


def arm_subset_contestants(ptcall, exe, base, args, d):
    """(name, command, env, own trace) of the arm-subset section, in round order."""
    only = [x for g in ARM_SUBSET_GLOBS for x in ("--only", g)]
    arm_only = dict(os.environ, PTCALL_ARM="1", PTCALL_ONLY="\n".join(ARM_SUBSET_GLOBS))
    t = {k: os.path.join(d, "subset-%s.ptc" % k) for k in ("full", "only", "full-nt", "only-nt")}
    return [
        ("uninstrumented", [base] + args, None, None),
        ("ptcall untraced", [exe] + args, None, None),
        ("armed, all (PT's in-program cost)", [exe] + args, dict(os.environ, PTCALL_ARM="1"), None),
        ("armed, --only (PT's in-program cost)", [exe] + args, arm_only, None),
        ("soft, timestamps, all", [ptcall, "record", "-q", "-o", t["full"], "--", exe] + args, None, t["full"]),
        ("soft, timestamps, --only", [ptcall, "record", "-q", "-o", t["only"]] + only + ["--", exe] + args,
         None, t["only"]),
        ("soft, no timestamps, all", [ptcall, "record", "-q", "--no-timestamps", "-o", t["full-nt"], "--", exe]
         + args, None, t["full-nt"]),
        ("soft, no timestamps, --only", [ptcall, "record", "-q", "--no-timestamps", "-o", t["only-nt"]] + only
         + ["--", exe] + args, None, t["only-nt"]),
    ]


def bench_arm_subset(a, work, wdir, tools, runs):
    """Lua recorded with --only of about 10 % of its functions, beside the full recording and the
    untraced builds, in paired rounds (every contestant once per round, in an order that rotates;
    each time divided by the uninstrumented build's of the same round; medians of those ratios).
    If the untraced functions cost what they cost untraced, the --only recording costs the
    untraced build plus its events at the full recording's cost per event: the section compares
    the two. Instructions (valgrind, smaller input) of the untraced and armed builds have no noise."""
    wl = lua_workload(work, wdir, a.quick)
    d = os.path.join(work, wl.name)
    base = build(CLANG, wl, [], [], os.path.join(d, "base"))
    exe = build(tools["ptcc"], wl, [], [], os.path.join(d, "ptcall"), deps=ptcall_deps(tools["build_dir"]))
    cont = arm_subset_contestants(tools["ptcall"], exe, base, wl.args, d)
    wall = {c[0]: [] for c in cont}
    cpu = {c[0]: [] for c in cont}
    for r in range(runs):
        got = {}
        for name, cmd, env, own in cont[r % len(cont):] + cont[:r % len(cont)]:
            if own and os.path.exists(own):
                os.unlink(own)
            os.sync()
            t0 = time.perf_counter()
            p = subprocess.run(["/usr/bin/time", "-f", "%U %S", "-o", os.path.join(d, "subset.time")] + cmd,
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=d)
            dt = time.perf_counter() - t0
            if p.returncode:
                sys.exit("bench: %s exited %d\n%s" % (" ".join(cmd), p.returncode, p.stderr.decode()[-2000:]))
            u, s_ = open(os.path.join(d, "subset.time")).read().split()[-2:]
            got[name] = (dt, float(u) + float(s_))
        for name, _, _, _ in cont:
            wall[name].append(got[name][0] / got["uninstrumented"][0])
            cpu[name].append(got[name][1] / max(got["uninstrumented"][1], 1e-9))
        print("bench: arm-subset round %d/%d done" % (r + 1, runs), file=sys.stderr)
    res = {"rounds": runs, "globs": list(ARM_SUBSET_GLOBS), "desc": wl.desc, "cmd_desc": wl.cmd_desc,
           "small_desc": wl.small_desc, "rows": {}}
    for name, cmd, env, own in cont:
        row = {"wall": quartiles(wall[name]), "cpu": quartiles(cpu[name])}
        if own:
            rep_ = json.loads(sh([tools["ptcall"], "report", own, "--format", "json", "--top", "0"]))
            row["events"] = int(rep_["totals"]["events"])
            # untimed, a leaf's call is one record (two events): the cost goes with records
            row["records"] = row["events"] - int(rep_["totals"]["whole_calls"])
            sel = rep_.get("selection")
            if sel:
                row["traced"], row["functions"] = sel["traced"], sel["functions"]
            else:
                row["functions"] = len(rep_["functions"]) + len(rep_["uncalled"])
        if name in ("uninstrumented", "ptcall untraced") or name.startswith("armed"):
            row["instructions"] = instructions(base if name == "uninstrumented" else exe, wl.small_args, d, env)
        res["rows"][name] = row
    return res


def bench_facts(work):
    """The cost of a timestamp here (bench/rdtsc_cost.c)."""
    exe = os.path.join(work, "rdtsc_cost")
    src = os.path.join(ROOT, "bench", "rdtsc_cost.c")
    if REBUILD or mtime(exe) < mtime(src):
        sh([CLANG, "-O2", src, "-o", exe])
    out = sh([exe])
    m = re.search(r"rdtsc ([\d.]+) ns, clock_gettime ([\d.]+) ns", out)
    return {"rdtsc_ns": float(m.group(1)), "clock_gettime_ns": float(m.group(2))}


def bench_decode(a, work, tools, runs):
    """One recording of the calls workload (≥100 M events on the full run) by ptcall soft (timed) and
    by uftrace record; then their analysis commands, single-threaded, interleaved, median of runs."""
    ptcall, ptcc = tools["ptcall"], tools["ptcc"]
    d = os.path.join(work, "decode")
    os.makedirs(d, exist_ok=True)
    fib_n, loop_n = ("25", "1000000") if a.quick else ("34", "45000000")  # ~108 M events
    wl = Workload("decode", [os.path.join(ROOT, "bench", "workloads", "calls.c")], [fib_n, loop_n])
    b_pt = build(ptcc, wl, [], [], os.path.join(d, "ptcall"), deps=ptcall_deps(tools["build_dir"]))
    b_pg = build(CLANG, wl, ["-pg"], [], os.path.join(d, "pg"))
    trace = os.path.join(d, "calls.ptc")
    uft = os.path.join(d, "uftrace.data")
    if os.path.exists(trace):
        os.unlink(trace)
    shutil.rmtree(uft, ignore_errors=True)
    rec = {}
    rec["ptcall record (soft, timestamps)"] = timed_run([ptcall, "record", "-q", "-o", trace, "--", b_pt] + wl.args)
    rec["uftrace record"] = timed_run(["uftrace", "record", "-d", uft, b_pg] + wl.args)
    print("bench: decode: recorded", file=sys.stderr)
    ev = ptcall_events(ptcall, trace)
    rep_out = os.path.join(d, "uftrace-report.txt")
    cmds = [
        ("ptcall report", "ptcall", [ptcall, "report", trace], "ptcall report calls.ptc"),
        ("uftrace report", "uftrace", ["uftrace", "report", "-d", uft, "--no-pager"], "uftrace report -d uftrace.data"),
        ("ptcall calls", "ptcall", [ptcall, "calls", trace], "ptcall calls calls.ptc > /dev/null"),
        ("ptcall calls --order thread", "ptcall", [ptcall, "calls", "--order", "thread", trace],
         "ptcall calls --order thread calls.ptc > /dev/null"),
        ("uftrace replay", "uftrace", ["uftrace", "replay", "-d", uft, "--no-pager"],
         "uftrace replay -d uftrace.data > /dev/null"),
        # the timeline and flame-graph exports beside uftrace's (issue: one way out)
        ("ptcall export chrome", "ptcall", [ptcall, "export", trace, "--format", "chrome", "--force"],
         "ptcall export calls.ptc --format chrome --force > /dev/null"),
        ("uftrace dump --chrome", "uftrace", ["uftrace", "dump", "-d", uft, "--chrome"],
         "uftrace dump -d uftrace.data --chrome > /dev/null"),
        ("ptcall export folded", "ptcall", [ptcall, "export", trace, "--format", "folded", "--weight", "self"],
         "ptcall export calls.ptc --format folded --weight self > /dev/null"),
        ("uftrace dump --flame-graph", "uftrace", ["uftrace", "dump", "-d", uft, "--flame-graph"],
         "uftrace dump -d uftrace.data --flame-graph > /dev/null"),
    ]
    times = {c[0]: [] for c in cmds}
    cpus = {c[0]: [] for c in cmds}
    rss = {c[0]: 0 for c in cmds}
    for r in range(runs):
        for name, who, cmd, _ in cmds:
            inp = [trace] if who == "ptcall" else [uft]
            if name == "uftrace report":
                with open(rep_out, "w") as f:
                    dt, mx, cp = timed_run(cmd, stdout=f, cpu=True, warm=inp)
            else:
                dt, mx, cp = timed_run(cmd, cpu=True, warm=inp)
            times[name].append(dt)
            cpus[name].append(cp)
            rss[name] = max(rss[name], mx)
            print("bench: decode: %s run %d/%d %.2f s" % (name, r + 1, runs, dt), file=sys.stderr)
    # The multi-threaded decode (`--threads`): a trace of the threads workload (4 busy threads),
    # decoded with one thread and with two; wall time, since that is what threads buy.
    wl_t = Workload("decode-threads", [os.path.join(ROOT, "bench", "workloads", "threads.c")],
                    ["2" if a.quick else "40"], ldflags=["-lpthread"])
    b_t = build(ptcc, wl_t, [], [], os.path.join(d, "ptcall-threads"),
                deps=ptcall_deps(tools["build_dir"]))
    trace_t = os.path.join(d, "threads.ptc")
    if os.path.exists(trace_t):
        os.unlink(trace_t)
    timed_run([ptcall, "record", "-q", "-o", trace_t, "--", b_t] + wl_t.args)
    ev_t = ptcall_events(ptcall, trace_t)
    cmds_t = [("ptcall report (threads trace)", [ptcall, "report", trace_t], "ptcall report threads.ptc"),
              ("ptcall report --threads 2 (threads trace)", [ptcall, "report", "--threads", "2", trace_t],
               "ptcall report --threads 2 threads.ptc")]
    times_t = {c[0]: [] for c in cmds_t}
    rss_t = {c[0]: 0 for c in cmds_t}
    for r in range(runs):
        for name, cmd, _ in cmds_t:
            dt, mx = timed_run(cmd, warm=[trace_t])
            times_t[name].append(dt)
            rss_t[name] = max(rss_t[name], mx)
            print("bench: decode: %s run %d/%d %.2f s" % (name, r + 1, runs, dt), file=sys.stderr)
    # Several runs: one `ptcall report` of 100 traces of one program (sum and mean) beside 100
    # `ptcall report` processes, one per trace (what reading them one by one costs).
    runs_dir = os.path.join(d, "runs")
    shutil.rmtree(runs_dir, ignore_errors=True)
    os.makedirs(runs_dir)
    small = ["18", "20000"] if a.quick else ["22", "200000"]
    for k in range(100):
        timed_run([ptcall, "record", "-q", "-o", os.path.join(runs_dir, "run%03d.ptc" % k), "--", b_pt] + small)
    traces = sorted(os.path.join(runs_dir, f) for f in os.listdir(runs_dir))
    multi = {"one": [], "loop": [], "args": small}
    for r in range(max(runs, 3)):
        warm_cache(traces)
        t0 = time.perf_counter()
        for f in traces:
            subprocess.run([ptcall, "report", f], stdout=subprocess.DEVNULL, check=True)
        multi["loop"].append(time.perf_counter() - t0)
        dt, _ = timed_run([ptcall, "report", "--stat", "mean", runs_dir], warm=traces)
        multi["one"].append(dt)
    multi["events"] = ptcall_events(ptcall, traces[0])
    print("bench: decode: 100 runs: one report %.2f s, 100 reports %.2f s (medians)"
          % (statistics.median(multi["one"]), statistics.median(multi["loop"])), file=sys.stderr)
    # Memory on a long trace: `ptcall report` of ≥ 10^9 events (fib(39) + 400 M tiny calls,
    # about 1.2 G events; a small one with --quick), peak RSS against the 98 M-event trace's.
    big_args = ["22", "2000000"] if a.quick else ["39", "400000000"]
    trace_b = os.path.join(d, "big.ptc")
    if os.path.exists(trace_b):
        os.unlink(trace_b)
    timed_run([ptcall, "record", "-q", "-o", trace_b, "--", b_pt] + big_args)
    ev_b = ptcall_events(ptcall, trace_b)
    dt_b, rss_b, cpu_b = timed_run([ptcall, "report", trace_b], cpu=True, warm=[trace_b])
    big = {"args": big_args, "events": ev_b, "bytes": dir_bytes(trace_b), "s": dt_b, "cpu_s": cpu_b,
           "rss_kib": rss_b}
    os.unlink(trace_b)
    print("bench: decode: big trace %d events, report %.2f s, %d KiB" % (ev_b, dt_b, rss_b), file=sys.stderr)
    uev = 2 * uftrace_calls_text(open(rep_out).read())
    # output sizes of the text-producing commands, once, off the clock (piped to wc -c)
    out_bytes = {}
    for name, who, cmd, _ in cmds:
        if name.startswith(("ptcall export", "uftrace dump", "ptcall calls", "uftrace replay")):
            p = subprocess.run(" ".join(shlex.quote(x) for x in cmd) + " | wc -c", shell=True,
                               capture_output=True, text=True)
            out_bytes[name] = int(p.stdout.split()[0]) if p.stdout.strip() else 0
    res = {"args": wl.args, "runs": runs, "events_ptcall": ev, "events_uftrace": uev,
           "bytes_ptcall": dir_bytes(trace), "bytes_uftrace": dir_bytes(uft), "record": {}, "rows": [],
           "big": big, "multi": multi}
    for name, (dt, mx) in rec.items():
        res["record"][name] = {"s": dt, "rss_kib": mx}
    for name, who, _, shown in cmds:
        med = statistics.median(times[name])
        n = ev if who == "ptcall" else uev
        res["rows"].append({"name": name, "cmd": shown, "events": n, "s": med, "rate": n / med / 1e6,
                            "rss_kib": rss[name], "cpu_rate": n / max(statistics.median(cpus[name]), 1e-9) / 1e6,
                            "out_bytes": out_bytes.get(name)})
    for name, _, shown in cmds_t:
        med = statistics.median(times_t[name])
        res["rows"].append({"name": name, "cmd": shown, "events": ev_t, "s": med, "rate": ev_t / med / 1e6,
                            "rss_kib": rss_t[name], "input": "soft trace, 4 threads"})
    return res


def paired_rounds(runs):
    """Rounds for a ratio taken as the median of per-round pairs: single rounds of a pair move by
    ±20 % on this shared VM, so the median needs more of them than a slowdown's median of runs."""
    return max(2 * runs + 1, 15)


def bench_pt(a, tools):
    """build/test/pt/pt_decode_bench HITS all [--suppressed]: parsed rows."""
    exe = os.path.join(tools["build_dir"], "test", "pt", "pt_decode_bench")
    if not os.access(exe, os.X_OK):
        print("bench: %s not built: PT decode section skipped" % exe, file=sys.stderr)
        return None
    hits = 2000000 if a.quick else 100000000
    rounds = 3 if a.quick else paired_rounds(a.runs)
    res = {"hits": hits, "tables": [], "rounds": rounds}
    for supp in (False, True):
        cmd = [exe, str(hits), "all", "--repeat", str(rounds)] + (["--suppressed"] if supp else [])
        print("bench: %s" % " ".join(cmd), file=sys.stderr)
        out_f = os.path.join(os.environ.get("TMPDIR", "/tmp"), "ptcall-bench-pt.%d" % os.getpid())
        with open(out_f, "w") as f:
            dt, mx = timed_run(cmd, stdout=f)
        out = open(out_f).read()
        os.unlink(out_f)
        rows = []
        for line in out.splitlines():
            by_round = re.match(r"(none|tsc|mtc|cyc)\s+par/1 wall by round:(.*)", line)
            if by_round and rows and rows[-1]["timing"] == by_round.group(1):
                rows[-1]["par_rounds"] = [float(x) for x in by_round.group(2).split()]
                continue
            cols = [c.strip() for c in line.split("|")]
            head = cols[0].split()
            if len(cols) < 8 or len(head) != 3 or head[0] not in ("none", "tsc", "mtc", "cyc"):
                continue
            cell = [[float(x) for x in c.split()] for c in cols[1:6]]
            ratio = [float(x.rstrip("x")) if x != "-" else None for x in cols[6].split()]
            # ratios: fast/query, fast/packet (CPU); par/1 wall, par/1 CPU, parts/1 wall,
            # par/parts wall (medians over rounds of each round's pair)
            rows.append({"timing": head[0], "mb": float(head[1]), "bph": float(head[2]),
                         "fast": cell[0], "par": cell[1], "parts": cell[2], "query": cell[3], "packet": cell[4],
                         "par_x": ratio[2], "parts_x": ratio[4], "par_of_parts": ratio[5],
                         "agree": cols[7].startswith("yes")})
        loads = re.findall(r"load average (?:before|after): ([\d.]+)", out)
        threads = re.search(r"parallel, (\d+) thr", out)
        res["tables"].append({"suppressed": supp, "cmd": " ".join(["build/test/pt/pt_decode_bench"] + cmd[1:]),
                              "rows": rows, "rss_kib": mx, "s": dt, "loads": loads,
                              "threads": int(threads.group(1)) if threads else 0})
    return res


def main():
    global REBUILD
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="small inputs, 3 runs (smoke test, ~2 minutes)")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    ap.add_argument("--only", default="", help="comma-separated: " + ",".join(SECTIONS))
    ap.add_argument("--rebuild", action="store_true", help="rebuild every workload binary")
    a = ap.parse_args()
    REBUILD = a.rebuild
    runs = 3 if a.quick else a.runs
    want = set(a.only.split(",")) if a.only else set(SECTIONS)
    bad = want - set(SECTIONS)
    if bad:
        sys.exit("bench: unknown section(s) %s: choose from %s" % (",".join(sorted(bad)), ",".join(SECTIONS)))
    build_dir = os.path.abspath(a.build)
    tools = {"ptcall": os.path.join(build_dir, "tools", "ptcall"), "ptcc": os.path.join(build_dir, "bin", "ptcall-cc"),
             "build_dir": build_dir}
    for tool in (tools["ptcall"], tools["ptcc"]):
        if not os.access(tool, os.X_OK):
            sys.exit("bench: %s not found: build ptcall first (scripts/build.sh)" % tool)
    if not LLVM_XRAY:
        sys.exit("bench: llvm-xray-14 not found (Debian package llvm-14; scripts/setup.sh installs it)")
    work = os.path.join(build_dir, "bench")
    os.makedirs(work, exist_ok=True)
    wdir = os.path.join(ROOT, "bench", "workloads")
    t_start = time.time()
    load_before = os.getloadavg()[0]

    def compile_obj(src, obj, flags):  # only when the source changed, so workloads are not relinked
        if REBUILD or mtime(obj) < mtime(src):
            sh([CLANG, "-O2", "-c", "-fPIC"] + flags + [src, "-o", obj])
        return obj

    hooks = {kind: compile_obj(os.path.join(wdir, "cyg_hooks.c"), os.path.join(work, "cyg_%s.o" % kind), flag)
             for kind, flag in (("empty", []), ("log", ["-DCYG_LOG"]))}
    fdr_ctl = compile_obj(os.path.join(wdir, "xray_fdr_ctl.c"), os.path.join(work, "xray_fdr_ctl.o"), [])

    results = {}
    for wl in workloads_for(a, work, wdir, want):
        results[wl.name] = (wl, bench_workload(wl, work, tools, hooks, fdr_ctl, runs))
    untraced = {}
    if "untraced" in want:
        for wl in workloads_for(a, work, wdir, {"bzip2", "lua", "sqlite"}):
            untraced[wl.name] = bench_untraced(wl, work, tools, hooks, fdr_ctl, 5 if a.quick else paired_rounds(runs))
    subset = (bench_arm_subset(a, work, wdir, tools, 3 if a.quick else paired_rounds(runs))
              if "arm-subset" in want else None)
    facts = bench_facts(work) if "facts" in want else None
    decode = bench_decode(a, work, tools, min(runs, 3)) if "decode" in want else None
    pt = bench_pt(a, tools) if "pt" in want else None
    info = {"runs": runs, "elapsed_s": time.time() - t_start, "load": (load_before, os.getloadavg()[0])}
    with open(os.path.join(work, "results.json"), "w") as f:
        json.dump({"info": info, "overhead": {k: v[1] for k, v in results.items()}, "untraced": untraced,
                   "facts": facts, "decode": decode, "pt": pt, "arm_subset": subset}, f, indent=1)
    write_report(a, info, results, untraced, facts, decode, pt, subset)


def machine():
    cpu = "unknown"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                mem = ", %.0f GiB RAM" % (int(line.split()[1]) / 2**20)
    except OSError:
        pass
    return "%s, %d cores%s, Linux %s" % (cpu, os.cpu_count(), mem, platform.release())


def duration(s):
    return "%.0f s" % s if s < 120 else "%.0f minutes" % (s / 60)


def fmt_bytes(n):
    return "%.1f" % (n / 1e6) if n >= 1e5 else "%.3f" % (n / 1e6)


def overhead_tables(results, lines):
    for name, (wl, row) in results.items():
        lines.append("### %s: %s\n" % (name, wl.desc))
        lines.append("Command: `%s`.\n" % wl.cmd_desc)
        lines.append("| contestant | slowdown (× uninstrumented) | median s | trace MB | bytes/event | events in trace | peak RSS MiB |")
        lines.append("|---|---:|---:|---:|---:|---:|---:|")
        for cname, r in row.items():
            tb = fmt_bytes(r["bytes"]) if "bytes" in r else ""
            bpe = ("%.2f" if r.get("bytes_per_event", 1) >= 0.01 else "%.4f") % r["bytes_per_event"] \
                if "bytes_per_event" in r else ""
            evs = "%d" % r["events"] if r.get("events") is not None else ""
            mark = {"gprof": " ¹", "basic": " ²", "fdr": " ³", "leaf": " ⁴"}.get(r.get("note", ""), "")
            if r.get("note") == "gprof":
                evs = "—"
            lines.append("| %s | %.2f | %.3f | %s | %s%s | %s | %.1f |"
                         % (cname, r["ratio"], r["median_s"], tb, bpe, mark, evs, r["rss_kib"] / 1024))
        u = row["uftrace record"]
        t = row["ptcall soft, timestamps"]
        n = row["ptcall soft, no timestamps"]
        lines.append("")
        lines.append("Against uftrace: timed slowdown %.3f of uftrace's, untimed %.3f of uftrace's, "
                     "bytes per event %.3f of uftrace's. Overhead (slowdown − 1): timed %.3f, untimed %.3f of uftrace's.\n"
                     % (t["ratio"] / u["ratio"], n["ratio"] / u["ratio"], t["bytes_per_event"] / u["bytes_per_event"],
                        (t["ratio"] - 1) / (u["ratio"] - 1), (n["ratio"] - 1) / (u["ratio"] - 1)))
    if results:
        lines.append("¹ gprof writes a PC-sample histogram and a caller→callee arc table (`gmon.out`), not a trace: "
                     "its size depends on the code size and the number of distinct arcs, not on the number of calls. "
                     "bytes/event is `gmon.out` divided by twice the calls uftrace counts on the same `-pg` binary "
                     "(so bytes per call is twice the figure), for scale only.  ")
        lines.append("² XRay basic mode's default `func_duration_threshold_us=5` drops every call shorter than 5 µs "
                     "from the log (after paying for it): *events in trace* is what the log holds, 32-byte records.  ")
        lines.append("³ XRay FDR mode (`func_duration_threshold_us=0`: keep every call) is a flight recorder: it keeps "
                     "only the newest `buffer_max` × `buffer_size` = 100 × 16 KiB of records and overwrites older ones; "
                     "*events in trace* is the function records in the log, counted by `llvm-xray convert`.  ")
        lines.append("⁴ ptcall without timestamps records the call of a function that calls nothing (a leaf) as one "
                     "record, and leaves its exit sleds unarmed: *events in trace* counts the events the decoder gives "
                     "(entry and return of every call, as `ptcall report` counts them), so bytes/event is per decoded "
                     "event, as uftrace's is per entry or exit record.\n")


def targets_section(results, facts, lines):
    if "calls" not in results:
        return
    row = results["calls"][1]
    u, t, n = row["uftrace record"], row["ptcall soft, timestamps"], row["ptcall soft, no timestamps"]
    ut = row["ptcall untraced"]
    lines.append("### Against the foundation issue's targets (calls workload of this run)\n")
    lines.append("| target | measured | met |")
    lines.append("|---|---|---|")
    r1 = t["ratio"] / u["ratio"]
    lines.append("| soft tracing with per-event timestamps: slowdown ≤ 1/4 of uftrace's | %.2f ÷ %.2f = %.3f | %s |"
                 % (t["ratio"], u["ratio"], r1, "yes" if r1 <= 0.25 else "**no**"))
    r2 = n["ratio"] / u["ratio"]
    lines.append("| counts-and-sequence (no timestamps): slowdown ≤ 1/20 of uftrace's | %.2f ÷ %.2f = %.3f | %s |"
                 % (n["ratio"], u["ratio"], r2, "yes" if r2 <= 0.05 else "**no**"))
    o1, o2 = (t["ratio"] - 1) / (u["ratio"] - 1), (n["ratio"] - 1) / (u["ratio"] - 1)
    lines.append("| the same two read as added time (slowdown − 1): ≤ 1/4 and ≤ 1/20 of uftrace's | "
                 "%.2f ÷ %.2f = %.3f timed, %.2f ÷ %.2f = %.3f untimed | %s, %s |"
                 % (t["ratio"] - 1, u["ratio"] - 1, o1, n["ratio"] - 1, u["ratio"] - 1, o2,
                    "yes" if o1 <= 0.25 else "**no**", "yes" if o2 <= 0.05 else "**no**"))
    b1, b2 = t["bytes_per_event"] / u["bytes_per_event"], n["bytes_per_event"] / u["bytes_per_event"]
    lines.append("| bytes per event ≤ 1/3 of uftrace's | %.2f ÷ %.2f = %.3f timed, %.2f ÷ %.2f = %.3f untimed | %s |"
                 % (t["bytes_per_event"], u["bytes_per_event"], b1, n["bytes_per_event"], u["bytes_per_event"], b2,
                    "yes" if max(b1, b2) <= 1 / 3 else "**no**"))
    parts = []
    for name, (wl, r) in results.items():
        parts.append("%s %.2f× vs %.2f× and %.2f×" % (name, r["ptcall untraced"]["ratio"],
                                                    r["-finstrument-functions, empty hooks"]["ratio"],
                                                    r["XRay unpatched"]["ratio"]))
    lines.append("| untraced instrumented build beside `-finstrument-functions` (empty) and XRay (unpatched) | %s | reported |"
                 % "; ".join(parts))
    lines.append("")
    ev = n.get("events") or 1
    per_ev_nt = (n["median_s"] - ut["median_s"]) / ev * 1e9
    per_ev_t = (t["median_s"] - ut["median_s"]) / ev * 1e9
    lines.append("Per event on this run (calls workload, median time minus the untraced build's, divided by the %d "
                 "events): %.1f ns untimed, %.1f ns timed. The untraced ptcall build alone is %.2f× the uninstrumented "
                 "one here; the 1/20 target allows a total of %.2f ÷ 20 = %.2f×." % (ev, per_ev_nt, per_ev_t, ut["ratio"], u["ratio"], u["ratio"] / 20))
    if facts:
        lines[-1] += (" A timestamp costs %.1f ns per `rdtsc` and %.1f ns per `clock_gettime` on this machine "
                     "(`bench/rdtsc_cost.c`), which bounds the timed mode." % (facts["rdtsc_ns"], facts["clock_gettime_ns"]))
    lines.append("")


def untraced_section(untraced, lines):
    if not untraced:
        return
    rounds = next(iter(untraced.values()))["rounds"]
    lines.append("## Untraced builds, paired rounds\n")
    lines.append("The uninstrumented, ptcall untraced and XRay unpatched builds of the tables above, %d rounds: "
                 "each round runs the three back to back (the order rotates between rounds) and divides each "
                 "one's time by the uninstrumented build's of the same round; a cell is the median of those "
                 "per-round ratios, with the first and third quartile. Instructions: one run of each build on a "
                 "smaller input under `valgrind --tool=callgrind` (the same count every time).\n" % rounds)
    lines.append("| workload | build | wall ÷ uninstrumented (q1–q3) | CPU ÷ uninstrumented (q1–q3) | "
                 "instructions (smaller input) | instructions ÷ uninstrumented |")
    lines.append("|---|---|---|---|---:|---:|")
    for k, u in untraced.items():
        base_ins = u["uninstrumented"]["instructions"]
        for name, _ in UNTRACED:
            r = u[name]
            lines.append("| %s | %s | %.3f (%.3f–%.3f) | %.3f (%.3f–%.3f) | %d | %.4f |"
                         % (k if name == "uninstrumented" else "", name, r["wall"][1], r["wall"][0], r["wall"][2],
                            r["cpu"][1], r["cpu"][0], r["cpu"][2], r["instructions"],
                            r["instructions"] / base_ins))
    lines.append("")
    lines.append("Smaller inputs for the instruction counts: %s.\n"
                 % "; ".join("%s %s" % (k, u["small_desc"]) for k, u in untraced.items()))


def untraced_target_row(untraced):
    """The untraced target from the paired rounds. Met only when the instructions are within 3 %
    too: single runs of the same binary move by ±20 % on this VM, so 15 rounds leave the wall
    median a few per cent uncertain (its quartiles are shown); the instruction count does not
    move, and a nop costs at most what any instruction costs."""
    def ins(u, name):
        return u[name]["instructions"] / u["uninstrumented"]["instructions"]
    got = "; ".join("%s %.3f× (q1–q3 %.3f–%.3f; XRay unpatched %.3f×), instructions %.3f× (XRay %.3f×)"
                    % (k, u["ptcall untraced"]["wall"][1], u["ptcall untraced"]["wall"][0],
                       u["ptcall untraced"]["wall"][2], u["XRay unpatched"]["wall"][1],
                       ins(u, "ptcall untraced"), ins(u, "XRay unpatched"))
                    for k, u in untraced.items())
    got += " — wall: median of %d paired rounds" % next(iter(untraced.values()))["rounds"]
    ok = all(u["ptcall untraced"]["wall"][1] <= 1.03 and ins(u, "ptcall untraced") <= 1.03
             for u in untraced.values())
    return ("untraced instrumented build ≤ 1.03× the uninstrumented one on the real programs (wall, and "
            "instructions)", got, ok)


def perf_targets_section(results, untraced, decode, pt, lines):
    """The performance issue's numbers, from this run's figures."""
    rows = []
    if pt and pt["tables"]:
        tb = pt["tables"][0]
        none = next((r for r in tb["rows"] if r["timing"] == "none"), None)
        if none:
            f, q = none["fast"][0], none["query"][0]
            rows.append(("PT decode, one thread, timing-free stream: ≥ 100 M stub hits/s and ≥ 8× libipt's query decoder",
                         "%.1f M hits/s, %.1f× (libipt query %.1f)" % (f, f / q, q), f >= 100 and f / q >= 8))
            rows.append(("PT decode with both cores: ≥ 1.8× the single-thread rate",
                         "%.2f× (median of %d rounds, wall; rounds %s); %d independent parts, no order kept: %.2f×"
                         % (none["par_x"], len(none.get("par_rounds", [])) or 1,
                            "–".join("%.2f" % x for x in (min(none.get("par_rounds", [none["par_x"]])),
                                                           max(none.get("par_rounds", [none["par_x"]])))),
                            tb["threads"], none["parts_x"]), none["par_x"] >= 1.8))
    if decode:
        rr = {r["name"]: r for r in decode["rows"]}
        r = rr.get("ptcall report")
        if r:
            rows.append(("soft-trace decode, one thread: ≥ 200 M events/s",
                         "%.1f M events/s of CPU (%.1f wall)" % (r["cpu_rate"], r["rate"]), r["cpu_rate"] >= 200))
        mu = decode.get("multi")
        if mu:
            x = statistics.median(mu["one"]) / statistics.median(mu["loop"])
            rows.append(("`ptcall report` over 100 traces ≤ 1.2× the time of reading them one by one",
                         "%.2f×" % x, x <= 1.2))
        for p_, u_, want in (("ptcall calls", "uftrace replay", 10), ("ptcall export chrome", "uftrace dump --chrome", 5),
                             ("ptcall export folded", "uftrace dump --flame-graph", 5)):
            if p_ in rr and u_ in rr:
                x = rr[p_]["rate"] / rr[u_]["rate"]
                rows.append(("`%s` ≥ %d× `%s`, events per second" % (p_, want, u_), "%.1f×" % x, x >= want))
        t1, t2 = rr.get("ptcall report (threads trace)"), rr.get("ptcall report --threads 2 (threads trace)")
        if t1 and t2:
            rows.append(("soft-trace decode with both cores (4-thread trace)", "%.2f× the one-thread wall rate"
                         % (t2["rate"] / t1["rate"]), None))
        b = decode.get("big")
        if b:
            rows.append(("memory: `ptcall report` of a 10⁹-event trace ≤ 64 MiB + the function table",
                         "%.1f MiB peak RSS on %d events" % (b["rss_kib"] / 1024, b["events"]), b["rss_kib"] <= 64 * 1024))
    if "calls" in results:
        row = results["calls"][1]
        u, t, n = row["uftrace record"], row["ptcall soft, timestamps"], row["ptcall soft, no timestamps"]
        rows.append(("soft tracing, calls workload: ≤ 1/4 of uftrace's slowdown with timestamps",
                     "%.3f" % (t["ratio"] / u["ratio"]), t["ratio"] / u["ratio"] <= 0.25))
        rows.append(("soft tracing, calls workload: ≤ 1/20 of uftrace's slowdown without timestamps",
                     "%.3f" % (n["ratio"] / u["ratio"]), n["ratio"] / u["ratio"] <= 0.05))
    real = [(k, r) for k, (wl, r) in results.items() if k in ("bzip2", "lua", "sqlite")]
    if untraced:
        rows.append(untraced_target_row(untraced))
        if real:
            rows.append(("the same in the overhead tables above (median of the runs, unpaired)",
                         "; ".join("%s %.2f× (XRay unpatched %.2f×)" % (k, r["ptcall untraced"]["ratio"],
                                                                        r["XRay unpatched"]["ratio"]) for k, r in real),
                         None))
    elif real:
        rows.append(("untraced instrumented build ≤ 1.03× the uninstrumented one on the real programs",
                     "; ".join("%s %.2f× (XRay unpatched %.2f×)" % (k, r["ptcall untraced"]["ratio"],
                                                                    r["XRay unpatched"]["ratio"]) for k, r in real),
                     all(r["ptcall untraced"]["ratio"] <= 1.03 for _, r in real)))
    if not rows:
        return
    lines.append("## Against the performance issue's targets (this run)\n")
    lines.append("| target | measured | met |")
    lines.append("|---|---|---|")
    for what, got, ok in rows:
        lines.append("| %s | %s | %s |" % (what, got, "reported" if ok is None else "yes" if ok else "**no**"))
    lines.append("")


def decode_section(a, decode, pt, lines):
    if not decode and not pt:
        return
    lines.append("## Decoding speed\n")
    if decode:
        ev = decode["events_ptcall"]
        lines.append("One recording of `calls %s` (the calls workload; %s) by each tracer, "
                     "then its analysis commands (each on one thread, except `ptcall calls`: it decides its lines on the decoder's thread and formats them on a second one, so its wall rate is above its CPU rate), run %d times interleaved with stdout to a file "
                     "or `/dev/null` (median). ptcall's trace: %d events, %.1f MB (%.2f bytes/event); uftrace's: %d "
                     "events, %.1f MB (%.2f bytes/event).\n"
                     % (" ".join(decode["args"]), "--quick size" if a.quick else "%.1f M events" % (ev / 1e6),
                        decode["runs"], ev, decode["bytes_ptcall"] / 1e6,
                        decode["bytes_ptcall"] / max(ev, 1), decode["events_uftrace"], decode["bytes_uftrace"] / 1e6,
                        decode["bytes_uftrace"] / max(decode["events_uftrace"], 1)))
        lines.append("Recording (one run each): %s.\n" % "; ".join(
            "%s %.2f s, peak RSS %.1f MiB" % (k, v["s"], v["rss_kib"] / 1024) for k, v in decode["record"].items()))
    lines.append("| decoder | input | command | events | s (wall) | M events/s (wall) | M events/s (CPU) | × ptcall report | peak RSS MiB |")
    lines.append("|---|---|---|---:|---:|---:|---:|---:|---:|")
    ref = None
    if decode:
        ref = decode["rows"][0]["rate"]
        for r in decode["rows"]:
            lines.append("| %s | %s | `%s` | %d | %.2f | %.1f | %s | %.3f | %.1f |"
                         % (r["name"], r.get("input", "soft trace" if r["name"].startswith("ptcall") else "uftrace.data"),
                            r["cmd"], r["events"], r["s"], r["rate"],
                            "%.1f" % r["cpu_rate"] if "cpu_rate" in r else "",
                            r["rate"] / ref, r["rss_kib"] / 1024))
    if pt and pt["tables"] and pt["tables"][0]["rows"]:
        tb = pt["tables"][0]
        row = next((x for x in tb["rows"] if x["timing"] == "tsc"), tb["rows"][0])
        hits = pt["hits"]
        for label, key, col in (("ptcall PT fast path, 1 thread", "fast", 0),
                                ("ptcall PT parallel, %d threads (wall)" % tb["threads"], "par", 1),
                                ("libipt query decoder", "query", 0), ("libipt packet decoder", "packet", 0)):
            rate = row[key][col]
            lines.append("| %s | synthetic PT, --timing %s | `%s` | %d | %.2f | %s | %s | %s | %.1f\\* |"
                         % (label, row["timing"], tb["cmd"], hits, hits / rate / 1e6,
                            "%.1f" % rate if col else "", "" if col else "%.1f" % rate,
                            "%.3f" % (rate / ref) if ref else "", tb["rss_kib"] / 1024))
    if decode:
        rr = {r["name"]: r for r in decode["rows"]}
        lines.append("")
        lines.append("ptcall ÷ uftrace, events per second: `report` %.1f×, `calls` vs `replay` %.2f×; peak RSS %.1f vs "
                     "%.1f MiB and %.1f vs %.1f MiB."
                     % (rr["ptcall report"]["rate"] / rr["uftrace report"]["rate"],
                        rr["ptcall calls"]["rate"] / rr["uftrace replay"]["rate"],
                        rr["ptcall report"]["rss_kib"] / 1024, rr["uftrace report"]["rss_kib"] / 1024,
                        rr["ptcall calls"]["rss_kib"] / 1024, rr["uftrace replay"]["rss_kib"] / 1024))
        if "ptcall export chrome" in rr:
            lines.append("")
            lines.append("Exports, events per second and output bytes (each command once more, piped to `wc -c`):\n")
            lines.append("| ptcall | uftrace | ptcall ÷ uftrace, events/s | output bytes, ptcall / uftrace |")
            lines.append("|---|---|---:|---|")
            for p_, u_ in (("ptcall calls", "uftrace replay"), ("ptcall calls --order thread", "uftrace replay"),
                           ("ptcall export chrome", "uftrace dump --chrome"),
                           ("ptcall export folded", "uftrace dump --flame-graph")):
                if p_ in rr and u_ in rr:
                    lines.append("| `%s` | `%s` | %.1f× | %s / %s |" % (
                        rr[p_]["cmd"], rr[u_]["cmd"], rr[p_]["rate"] / rr[u_]["rate"],
                        "{:,}".format(rr[p_].get("out_bytes") or 0), "{:,}".format(rr[u_].get("out_bytes") or 0)))
        mu = decode.get("multi")
        if mu:
            one, loop = statistics.median(mu["one"]), statistics.median(mu["loop"])
            lines.append("")
            lines.append("Several runs: 100 recordings of `calls %s` (%d events each); `ptcall report --stat mean "
                         "runs/` (one process, every trace summed and averaged) took %.2f s, 100 `ptcall report "
                         "runNNN.ptc` processes %.2f s (medians of %d rounds): **%.2f×** the one-by-one time."
                         % (" ".join(mu["args"]), mu["events"], one, loop, len(mu["one"]), one / loop))
        b = decode.get("big")
        if b:
            lines.append("")
            lines.append("Long trace: `ptcall record` of `calls %s` (%d events, %.2f GB), then `ptcall report`: %.1f s wall, "
                         "%.1f M events/s of CPU, peak RSS **%.1f MiB** (%.1f MiB on the %d-event trace above): memory "
                         "does not grow with the trace."
                         % (" ".join(b["args"]), b["events"], b["bytes"] / 1e9, b["s"], b["events"] / max(b["cpu_s"], 1e-9) / 1e6,
                            b["rss_kib"] / 1024, rr["ptcall report"]["rss_kib"] / 1024, decode["events_ptcall"]))
    lines.append("")
    if pt:
        lines.append("\\* The PT rows come from one `pt_decode_bench` process that holds the whole synthetic stream in "
                     "memory (%d M stub hits; that is most of its peak RSS) and decodes it with each decoder in turn; "
                     "single-thread rates are of CPU time, the parallel one of wall time. Hits are stub hits, one per "
                     "entry or exit event, like the soft trace's events.\n" % (pt["hits"] // 1000000))
    if pt:
        lines.append("### Intel PT decoding, all timing modes (`%s`)\n" % pt["tables"][0]["cmd"].replace(" all", " all [--suppressed]"))
        lines.append("Synthetic stub-filtered streams of %d M hits written with libipt's encoder (no machine here "
                     "has Intel PT), decoded in one run by ptcall's fast path (one thread, and PSB spans split over "
                     "worker threads), libipt's query decoder and libipt's packet decoder, on the same bytes. M hits/s "
                     "of CPU time (single-threaded columns) and of wall time (parallel).\n" % (pt["hits"] // 1000000))
        for tb in pt["tables"]:
            lines.append("%s (load average before/after: %s; %.0f s, peak RSS %.0f MiB):\n"
                         % ("Suppressed exit IPs (`--suppressed`; what interrupts inside a stub and some CPUs give)"
                            if tb["suppressed"] else "Exit packets with the return address (what `ret` from a stub gives)",
                            "/".join(tb["loads"]), tb["s"], tb["rss_kib"] / 1024))
            lines.append("| --timing | bytes/hit | fast path | parallel, %d threads (wall) | libipt query | libipt packet | "
                         "fast ÷ query | fast ÷ packet | parallel ÷ fast (wall) | %d parts ÷ fast (wall) | "
                         "all decoders agree |" % (tb["threads"], tb["threads"]))
            lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
            for r in tb["rows"]:
                lines.append("| %s | %.2f | %.1f | %.1f | %.1f | %.1f | %.1f× | %.1f× | %.2f× | %.2f× | %s |"
                             % (r["timing"], r["bph"], r["fast"][0], r["par"][1], r["query"][0], r["packet"][0],
                                r["fast"][0] / r["query"][0], r["fast"][0] / r["packet"][0], r["par_x"], r["parts_x"],
                                "yes" if r["agree"] else "**NO**"))
            lines.append("")
        lines.append("Fast path, parallel and parts run %d rounds in turn on the same bytes (libipt's decoders once); "
                     "each cell is the median round's, and each ÷ is the median over rounds of that round's pair, so "
                     "a slow spell of the shared machine falls on both sides of a ratio. *Parts*: the stream cut at "
                     "PSBs into one part per thread, each decoded by the fast path on its own thread with no order "
                     "kept and nothing shared: what the cores give to independent work on this machine, the ceiling "
                     "for the parallel decode.\n" % pt["rounds"])


def arm_subset_section(subset, lines):
    if not subset:
        return
    rows = subset["rows"]
    only = rows["soft, timestamps, --only"]
    pct = 100.0 * only["traced"] / only["functions"]
    lines.append("## Arming a subset: `ptcall record --only` on Lua\n")
    lines.append("%s. `--only %s`: %d of %d functions traced (%.1f %%). %d paired rounds: each round runs "
                 "every contestant once (the order rotates between rounds) and divides its time by the "
                 "uninstrumented build's of the same round; a cell is the median of those ratios, with the "
                 "first and third quartile. Instructions: one run on a smaller input (%s) under "
                 "`valgrind --tool=callgrind`.\n"
                 % (subset["desc"], " --only ".join("'%s'" % g for g in subset["globs"]), only["traced"],
                    only["functions"], pct, subset["rounds"], subset["small_desc"]))
    lines.append("| contestant | wall ÷ uninstrumented (q1–q3) | CPU ÷ uninstrumented (q1–q3) | events | "
                 "records | instructions (smaller input) | instructions ÷ uninstrumented |")
    lines.append("|---|---|---|---:|---:|---:|---:|")
    base_ins = rows["uninstrumented"].get("instructions")
    for name, r in rows.items():
        ins = r.get("instructions")
        lines.append("| %s | %.3f (%.3f–%.3f) | %.3f (%.3f–%.3f) | %s | %s | %s | %s |"
                     % (name, r["wall"][1], r["wall"][0], r["wall"][2], r["cpu"][1], r["cpu"][0], r["cpu"][2],
                        r.get("events", ""), r.get("records", ""), ins if ins else "",
                        "%.4f" % (ins / base_ins) if ins else ""))
    lines.append("")
    # if the functions left out cost what they cost untraced, a --only recording costs the untraced
    # build plus its records at the full recording's cost per record
    # (wall and CPU: the drain thread's CPU time includes watching its queue between buffers)
    for kind in ("timestamps", "no timestamps"):
        full, sub = rows["soft, %s, all" % kind], rows["soft, %s, --only" % kind]
        share = sub["records"] / max(full["records"], 1)
        got = []
        for m in ("wall", "cpu"):
            un = rows["ptcall untraced"][m][1]
            got.append("%s: predicted %.3f×, measured %.3f× (full %.3f×, untraced %.3f×)"
                       % (m if m == "wall" else "CPU", un + (full[m][1] - un) * share, sub[m][1],
                          full[m][1], un))
        lines.append("- soft, %s: the --only recording has %.1f %% of the full recording's records; the "
                     "untraced build + that share of the full recording's extra time: %s."
                     % (kind, 100.0 * share, "; ".join(got)))
    ia, io_, iu = (rows[k].get("instructions") for k in ("armed, all (PT's in-program cost)",
                                                         "armed, --only (PT's in-program cost)",
                                                         "ptcall untraced"))
    if ia and io_ and iu:
        lines.append("- armed for Intel PT (stubs `ret`): arming all functions adds %d instructions to the "
                     "untraced build's, arming the --only subset %d (%.1f %% of it)."
                     % (ia - iu, io_ - iu, 100.0 * (io_ - iu) / max(ia - iu, 1)))
    lines.append("")


def write_report(a, info, results, untraced, facts, decode, pt, subset=None):
    lines = []
    cmdline = "python3 bench/run.py" + (" --quick" if a.quick else "") + ("" if a.runs == 5 or a.quick else " --runs %d" % a.runs)
    if a.only:
        cmdline += " --only " + a.only
    lines.append("## Results of `%s`\n" % cmdline)
    lines.append("Machine: %s. Date: %s. Load average %.2f at the start, %.2f at the end. %d runs per contestant, "
                 "interleaved; median. The whole run took %s.\n"
                 % (machine(), time.strftime("%Y-%m-%d"), info["load"][0], info["load"][1], info["runs"],
                    duration(info["elapsed_s"])))
    if results:
        lines.append("## Tracing overhead, side by side\n")
        overhead_tables(results, lines)
        targets_section(results, facts, lines)
    elif facts:
        lines.append("Timestamp cost (`bench/rdtsc_cost.c`): %.1f ns per `rdtsc`, %.1f ns per `clock_gettime`.\n"
                     % (facts["rdtsc_ns"], facts["clock_gettime_ns"]))
    untraced_section(untraced, lines)
    arm_subset_section(subset, lines)
    decode_section(a, decode, pt, lines)
    perf_targets_section(results or {}, untraced, decode, pt, lines)
    text = "\n".join(lines) + "\n"
    print(text)
    begin, end = "<!-- bench/run.py begin -->", "<!-- bench/run.py end -->"
    old = open(a.out).read() if os.path.exists(a.out) else "# Benchmarks\n\n%s\n%s\n" % (begin, end)
    if begin not in old:
        old += "\n%s\n%s\n" % (begin, end)
    pre, rest = old.split(begin, 1)
    post = rest.split(end, 1)[1]
    # figures of an older run kept for sections a partial (--only) run did not cover: a complete run
    # replaces them all
    pb, pe = "<!-- previous run begin -->", "<!-- previous run end -->"
    if not a.only and pb in post and pe in post:
        post = post.split(pb, 1)[0].rstrip("\n") + "\n" + post.split(pe, 1)[1]
    with open(a.out, "w") as f:
        f.write(pre + begin + "\n" + text + end + post)


if __name__ == "__main__":
    main()
