#!/usr/bin/env python3
"""Issue 31's costs, side by side (docs/benchmarks.md, section "Flight recorders and attaching").

Sections:
  ring    per-event cost of keeping only the newest events per thread in memory: ptcall's ring
          mode (PTCALL_RING=SIZE) beside funtrace's per-thread rings (yosefk/funtrace, built
          here) and XRay FDR mode, with ptcall's timed soft trace (written to a file) for scale;
          on the calls, Lua and SQLite workloads bench/run.py builds, in paired rounds (every
          contestant once per round, in an order that rotates; each time divided by the
          uninstrumented build's of the same round; medians of those ratios).
  stall   the stall a snapshot costs the program per MiB of rings: one snapshot taken in a
          program whose THREADS threads have filled SIZE rings (bench/workloads/ring_stall.c):
          ptcall_snapshot(why) beside funtrace_pause_and_get_snapshot() and
          funtrace_pause_and_write_current_snapshot().
  attach  `ptcall record --pid PID --duration D` on a running program with 100,000 sleds started
          without ptcall (generated here): command to first event, and detach time (SIGINT to
          the recorder's exit), the target checked alive and still running afterwards.

A part whose ptcall feature this build lacks (ring mode, ptcall_snapshot, soft attach) prints
a line "... not available in this build: WHY" and is reported as such, not measured.

usage: bench/ring.py [--build DIR] [--quick] [--runs N] [--only SECTION,...]
                     [--workloads calls,lua,sqlite] [--funtrace DIR] [--out FILE] [--rebuild]
  --quick: small inputs, 3 rounds, one stall size, 10 attaches (a smoke test of the script).
  --funtrace: a funtrace checkout or git directory (default: build/bench/funtrace-src if it is
  there, else `git clone` of https://github.com/yosefk/funtrace at FUNTRACE_COMMIT).
"""
import argparse
import copy
import json
import os
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as R  # noqa: E402  (the workloads, builds and helpers of bench/run.py)

ROOT = R.ROOT
SECTIONS = ("ring", "stall", "attach")
WORKLOADS = ("calls", "lua", "sqlite")
FUNTRACE_URL = "https://github.com/yosefk/funtrace"
FUNTRACE_COMMIT = "5e5cd21d4aa451378f7ac58aeb018dbcff0dc778"  # 2025-03-23, the version measured
RING_SIZE = "1M"  # per thread, both ptcall and funtrace (funtrace's default, FUNTRACE_LOG_BUF_SIZE=20)
SLEDS = 100000
NOT_AVAILABLE = "not available in this build"
INCLUDE = os.path.join(ROOT, "include")  # <ptcall/ptcall.h>


def log(msg):
    print("bench/ring: " + msg, file=sys.stderr)


# ---------------------------------------------------------------- funtrace

def funtrace_checkout(a, work):
    """A source tree of funtrace: --funtrace (a checkout, or a git directory whose HEAD is
    exported), or build/bench/funtrace-src, or a clone of FUNTRACE_URL at FUNTRACE_COMMIT."""
    dest = os.path.join(work, "funtrace-src")
    src = a.funtrace
    if src and os.path.exists(os.path.join(src, "funtrace.cpp")):
        return os.path.abspath(src)
    if os.path.exists(os.path.join(dest, "funtrace.cpp")):
        return dest
    os.makedirs(dest, exist_ok=True)
    if src:  # a git directory (a bare mirror): export its HEAD
        gitdir = src if os.path.exists(os.path.join(src, "HEAD")) else os.path.join(src, ".git")
        p = subprocess.run("git --git-dir=%s archive HEAD | tar -x -C %s" % (gitdir, dest), shell=True,
                           stderr=subprocess.PIPE, text=True)
        if p.returncode:
            sys.exit("bench/ring: cannot export funtrace from %s: %s" % (src, p.stderr.strip()))
    else:
        log("cloning %s" % FUNTRACE_URL)
        p = subprocess.run(["git", "clone", "-q", FUNTRACE_URL, dest], stderr=subprocess.PIPE, text=True)
        if p.returncode == 0:
            p = subprocess.run(["git", "-C", dest, "checkout", "-q", FUNTRACE_COMMIT], stderr=subprocess.PIPE,
                               text=True)
        if p.returncode:
            sys.exit("bench/ring: cannot get funtrace (%s); clone %s yourself and pass --funtrace DIR"
                     % (p.stderr.strip().splitlines()[-1:], FUNTRACE_URL))
    return dest


def funtrace_runtime(src, work):
    """funtrace.cpp compiled as its compiler wrappers do (compiler-wrappers/funtrace-finstr-clang++:
    clang, -finstrument-functions-after-inlining in the program, the runtime linked into the
    executable with its dynamic list), without the ftrace scheduler events (they need
    /sys/kernel/tracing, and no other contestant records scheduling): the object, and the flags
    an instrumented program is compiled and linked with."""
    obj = os.path.join(work, "funtrace.o")
    cpp = os.path.join(src, "funtrace.cpp")
    if R.REBUILD or R.mtime(obj) < R.mtime(cpp):
        log("building funtrace's runtime")
        R.sh([shutil.which("clang++-14") or "clang++", "-O2", "-g", "-pthread",
              "-std=c++11", "-DFUNTRACE_FTRACE_EVENTS_IN_BUF=0", "-I" + src, "-c", cpp, "-o", obj])
    cflags = ["-finstrument-functions-after-inlining", "-pthread", "-I" + src]
    ldflags = [obj, "-Wl,--dynamic-list=" + os.path.join(src, "funtrace.dyn"), "-lstdc++", "-ldl", "-pthread"]
    return obj, cflags, ldflags


def with_ldflags(wl, extra):
    w = copy.copy(wl)
    w.ldflags = list(wl.ldflags) + list(extra)
    return w


# ---------------------------------------------------------------- feature probes

_probe_cache = {}


def ring_probe(tools, work):
    """Whether this build's runtime has ring mode: a program calling ptcall_snapshot() compiles
    with ptcall-cc and, run with PTCALL_RING and PTCALL_SNAPSHOT_DIR, leaves a snapshot there
    that `ptcall report` reads. Returns (True, "") or (False, why)."""
    if "ring" in _probe_cache:
        return _probe_cache["ring"]
    d = os.path.join(work, "ring-probe")
    os.makedirs(d, exist_ok=True)
    src = os.path.join(d, "probe.c")
    with open(src, "w") as f:
        f.write('#include <ptcall/ptcall.h>\n__attribute__((noinline)) int f(int x) { return x + 1; }\n'
                'int main(void) { int s = 0; for (int i = 0; i < 100; i++) s += f(i);\n'
                '  (void)ptcall_snapshot("probe"); return s == 5050 ? 0 : 1; }\n')
    exe = os.path.join(d, "probe")
    r = subprocess.run([tools["ptcc"], "-O1", "-Werror=implicit-function-declaration", "-I" + INCLUDE, src,
                        "-o", exe], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if r.returncode:
        res = (False, "ptcall_snapshot() does not compile with ptcall-cc (%s)" % (r.stdout.strip().splitlines() or
                                                                                   ["?"])[0][:160])
    else:
        snap = os.path.join(d, "snapshots")
        for f in os.listdir(snap) if os.path.isdir(snap) else []:
            os.unlink(os.path.join(snap, f))
        os.makedirs(snap, exist_ok=True)
        env = dict(os.environ, PTCALL_RING="64K", PTCALL_SNAPSHOT_DIR=snap)
        r = subprocess.run([exe], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        files = [os.path.join(snap, f) for f in os.listdir(snap)]
        if r.returncode or not files:
            res = (False, "PTCALL_RING=64K with ptcall_snapshot() left no snapshot in PTCALL_SNAPSHOT_DIR "
                          "(exit %d%s)" % (r.returncode, (": " + r.stdout.strip()[:160]) if r.stdout.strip() else ""))
        else:
            rep = subprocess.run([tools["ptcall"], "report", files[0], "--format", "json"], stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True)
            res = (True, "") if rep.returncode == 0 else (False, "its snapshot does not decode: %s"
                                                          % rep.stdout.strip()[:160])
    _probe_cache["ring"] = res
    return res


def attach_probe(tools):
    """Whether `ptcall record --pid` attaches to a soft (software backend) process: record's
    help names --duration, which the soft attach brings (--pid alone is Intel PT's)."""
    r = subprocess.run([tools["ptcall"], "record", "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if "--duration" not in r.stdout:
        return False, "`ptcall record --help` has no --duration (no soft attach: --pid is Intel PT's only)"
    return True, ""


# ---------------------------------------------------------------- ring: per-event cost

def ring_bins(wl, work, tools, fdr_ctl, ft):
    d = os.path.join(work, wl.name)
    os.makedirs(d, exist_ok=True)
    _, ft_cflags, ft_ldflags = ft
    return {
        "base": R.build(R.CLANG, wl, [], [], os.path.join(d, "base")),
        "ptcall": R.build(tools["ptcc"], wl, [], [], os.path.join(d, "ptcall"), deps=R.ptcall_deps(tools["build_dir"])),
        "xray": R.build(R.CLANG, wl, ["-fxray-instrument", "-fxray-instruction-threshold=1"], [fdr_ctl],
                        os.path.join(d, "xray")),
        "funtrace": R.build(R.CLANG, with_ldflags(wl, ft_ldflags), ft_cflags, [], os.path.join(d, "funtrace"),
                            deps=[ft[0]]),
    }


def bench_ring(a, wl, work, tools, fdr_ctl, ft, rounds):
    d = os.path.join(work, wl.name)
    bins = ring_bins(wl, work, tools, fdr_ctl, ft)
    trace = os.path.join(d, "ring-soft.ptc")
    snapdir = os.path.join(d, "ring-snapshots")
    os.makedirs(snapdir, exist_ok=True)
    ftdir = os.path.join(d, "funtrace-run")
    os.makedirs(ftdir, exist_ok=True)
    env_fdr = dict(os.environ, XRAY_OPTIONS="patch_premain=true xray_mode=xray-fdr xray_logfile_base=%s"
                   % os.path.join(d, "ring-xray-fdr."), XRAY_FDR_OPTIONS="func_duration_threshold_us=0 grace_period_ms=1")
    env_ft = dict(os.environ, FUNTRACE_LOG_BUF_SIZE="20")
    ok, why = ring_probe(tools, work)
    cont = [
        ("uninstrumented", [bins["base"]] + wl.args, None, None),
        ("ptcall soft, timestamps (to a file)", [tools["ptcall"], "record", "-q", "-o", trace, "--", bins["ptcall"]]
         + wl.args, None, None),
        ("funtrace ring (1 MiB per thread)", [bins["funtrace"]] + wl.args, env_ft, ftdir),
        ("XRay FDR mode", [bins["xray"]] + wl.args, env_fdr, None),
    ]
    ring_name = "ptcall ring, PTCALL_RING=%s" % RING_SIZE
    if ok:
        cont.append((ring_name, [bins["ptcall"]] + wl.args,
                     dict(os.environ, PTCALL_RING=RING_SIZE, PTCALL_SNAPSHOT_DIR=snapdir), None))
    else:
        log("%s: %s %s: %s" % (wl.name, ring_name, NOT_AVAILABLE, why))
    ratios = {c[0]: [] for c in cont}
    base_t = []
    for r in range(rounds):
        got = {}
        for name, cmd, env, cwd in cont[r % len(cont):] + cont[:r % len(cont)]:
            # only before the run that writes it: the events are counted from the last one
            # (removed before every contestant, it survived only when that run came last)
            if trace in cmd and os.path.exists(trace):
                os.unlink(trace)
            for f in R.xray_files(d, "ring-xray-fdr."):
                os.unlink(f)
            got[name] = R.timed_run(cmd, env=env, cwd=cwd)[0]
        for name in got:
            ratios[name].append(got[name] / got["uninstrumented"])
        base_t.append(got["uninstrumented"])
        log("%s: round %d/%d done" % (wl.name, r + 1, rounds))
    events = R.ptcall_events(tools["ptcall"], trace)
    base = statistics.median(base_t)
    res = {"desc": wl.desc, "cmd_desc": wl.cmd_desc, "rounds": rounds, "events": events, "base_s": base,
           "rows": {}, "ring": {"name": ring_name, "available": ok, "why": why}}
    for name, _, _, _ in cont:
        q = R.quartiles(ratios[name])
        res["rows"][name] = {"ratio": q, "ns_per_event": (q[1] - 1.0) * base / max(events, 1) * 1e9}
    return res


def ring_section(results, lines):
    lines.append("### Per-event cost of a flight recorder\n")
    lines.append("Paired rounds: each round runs every contestant once, in an order that rotates, and divides "
                 "its wall time by the uninstrumented build's of the same round; the figures are the medians "
                 "(and quartiles) of those ratios. ns per event = (median ratio − 1) × the uninstrumented "
                 "build's median time ÷ the events of ptcall's timed soft trace of the same run (calls and "
                 "returns), for every contestant: funtrace and XRay place their hooks after inlining too, but "
                 "their events are not counted here, so their figures are per ptcall event). Rings are %s per thread; funtrace and ptcall's ring write nothing "
                 "unless a snapshot is asked for, XRay FDR flushes its buffers at exit "
                 "(bench/workloads/xray_fdr_ctl.c), the timed soft trace writes every event to a file.\n"
                 % RING_SIZE)
    for name, res in results.items():
        lines.append("**%s**: %s; `%s`; %d rounds; %s events; uninstrumented %.3f s.\n"
                     % (name, res["desc"], res["cmd_desc"], res["rounds"], "{:,}".format(res["events"]),
                        res["base_s"]))
        lines.append("| contestant | ratio (median) | quartiles | ns per event |")
        lines.append("|---|---:|---|---:|")
        for cname, row in res["rows"].items():
            q = row["ratio"]
            ns = "" if cname == "uninstrumented" else "%.1f" % row["ns_per_event"]
            lines.append("| %s | %.2f× | %.2f–%.2f | %s |" % (cname, q[1], q[0], q[2], ns))
        if not res["ring"]["available"]:
            lines.append("| %s | %s | | |" % (res["ring"]["name"], NOT_AVAILABLE))
        lines.append("")
        if not res["ring"]["available"]:
            lines.append("ptcall's ring mode: %s (%s).\n" % (NOT_AVAILABLE, res["ring"]["why"]))


# ---------------------------------------------------------------- stall: snapshot cost per MiB

def size_bytes(s):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(s[:-1]) * mult[s[-1]] if s[-1] in mult else int(s)


def bench_stall(a, work, tools, ft, runs):
    d = os.path.join(work, "stall")
    os.makedirs(d, exist_ok=True)
    src = os.path.join(ROOT, "bench", "workloads", "ring_stall.c")
    wl = R.Workload("stall", [src], [], cflags=["-pthread", "-I" + INCLUDE], ldflags=["-pthread"])
    exe_ft = R.build(R.CLANG, with_ldflags(wl, ft[2]), ft[1] + ["-DUSE_FUNTRACE"], [], os.path.join(d, "funtrace"),
                     deps=[ft[0]])
    ok, why = ring_probe(tools, work)
    exe_pt = None
    if ok:
        exe_pt = R.build(tools["ptcc"], wl, [], [], os.path.join(d, "ptcall"), deps=R.ptcall_deps(tools["build_dir"]))
    else:
        log("stall: ptcall_snapshot %s: %s" % (NOT_AVAILABLE, why))
    grid = [(2, "1M")] if a.quick else [(1, "1M"), (4, "1M"), (1, "16M"), (4, "16M"), (16, "4M")]
    snapdir = os.path.join(d, "snapshots")
    rows = []
    for threads, size in grid:
        nbytes = size_bytes(size)
        calls = nbytes // 4  # at most 8 bytes a call in either ring: every ring wraps at least once
        mib = threads * nbytes / float(1 << 20)
        row = {"threads": threads, "size": size, "mib": mib, "ptcall_ns": [], "ft_get_ns": [], "ft_write_ns": []}
        for _ in range(runs):
            out = R.sh([exe_ft, str(threads), str(calls)], cwd=d,
                       env=dict(os.environ, FUNTRACE_LOG_BUF_SIZE=str(nbytes.bit_length() - 1)))
            vals = dict(line.split() for line in out.splitlines() if line.endswith(tuple("0123456789")))
            row["ft_get_ns"].append(int(vals["get_ns"]))
            row["ft_write_ns"].append(int(vals["write_ns"]))
            os.unlink(os.path.join(d, "funtrace.raw"))
            if exe_pt:
                os.makedirs(snapdir, exist_ok=True)
                for f in os.listdir(snapdir):
                    os.unlink(os.path.join(snapdir, f))
                out = R.sh([exe_pt, str(threads), str(calls)], cwd=d,
                           env=dict(os.environ, PTCALL_RING=size, PTCALL_SNAPSHOT_DIR=snapdir))
                vals = dict(line.split() for line in out.splitlines() if line.startswith("snapshot_ns"))
                row["ptcall_ns"].append(int(vals["snapshot_ns"]))
                if not os.listdir(snapdir):
                    sys.exit("bench/ring: stall: ptcall_snapshot wrote nothing in %s" % snapdir)
        for k in ("ptcall_ns", "ft_get_ns", "ft_write_ns"):
            row[k] = statistics.median(row[k]) if row[k] else None
        log("stall: %d threads × %s: ptcall %s, funtrace get %.0f µs, write %.0f µs"
            % (threads, size, NOT_AVAILABLE if row["ptcall_ns"] is None else "%.0f µs" % (row["ptcall_ns"] / 1e3),
               row["ft_get_ns"] / 1e3, row["ft_write_ns"] / 1e3))
        rows.append(row)
    return {"runs": runs, "rows": rows, "ptcall": {"available": ok, "why": why}}


def stall_section(stall, lines):
    lines.append("### The stall a snapshot costs, per MiB of rings\n")
    lines.append("`bench/workloads/ring_stall.c`: THREADS threads fill rings of SIZE each, then wait, alive; the "
                 "main thread times one snapshot call (CLOCK_MONOTONIC around it); median of %d runs. ptcall: "
                 "`ptcall_snapshot(why)` with `PTCALL_RING=SIZE`: the call holds every ring, reads the clock "
                 "and hands the request to the runtime's snapshot writer thread, which writes the file to "
                 "`PTCALL_SNAPSHOT_DIR` while the program runs on (docs/runtime.md, *The stall*; a thread "
                 "that would overwrite a buffer not read yet waits for it). funtrace: `funtrace_pause_and_get_snapshot()` (a copy "
                 "in memory; writing it is another call) and `funtrace_pause_and_write_current_snapshot()` "
                 "(to `funtrace.raw`), with `FUNTRACE_LOG_BUF_SIZE`=log2(SIZE). Target (issue 31): at most "
                 "1 ms per 16 MiB.\n" % stall["runs"])
    lines.append("| threads × SIZE | MiB | ptcall_snapshot | per 16 MiB | funtrace get | per 16 MiB | "
                 "funtrace write | per 16 MiB |")
    lines.append("|---|---:|---:|---:|---:|---:|---:|---:|")

    def cell(ns, mib):
        if ns is None:
            return "%s | " % NOT_AVAILABLE
        return "%.0f µs | %.0f µs" % (ns / 1e3, ns / 1e3 * 16 / mib)
    for r in stall["rows"]:
        lines.append("| %d × %s | %g | %s | %s | %s |" % (r["threads"], r["size"], r["mib"], cell(r["ptcall_ns"], r["mib"]),
                                                      cell(r["ft_get_ns"], r["mib"]), cell(r["ft_write_ns"], r["mib"])))
    lines.append("")
    if not stall["ptcall"]["available"]:
        lines.append("ptcall_snapshot: %s (%s).\n" % (NOT_AVAILABLE, stall["ptcall"]["why"]))


# ---------------------------------------------------------------- attach: latency and detach

def sleds_program(d, n, ptcc, build_dir):
    """A program with n instrumented functions (n sleds), in 20 units, and a main loop that
    calls one of them and `beat` about every 50 µs, printing its pid first. Built once."""
    exe = os.path.join(d, "sleds")
    units = 20
    per = n // units
    srcs = []
    for u in range(units):
        p = os.path.join(d, "sleds%02d.c" % u)
        srcs.append(p)
        if not os.path.exists(p):
            with open(p, "w") as f:
                f.write("/* generated by bench/ring.py */\n")
                for k in range(u * per, (u + 1) * per):
                    f.write("__attribute__((noinline)) unsigned long f%d(unsigned long x) { return x * %d + %d; }\n"
                            % (k, k | 1, k))
                f.write("typedef unsigned long (*fn)(unsigned long);\nconst fn table%02d[] = {%s};\n"
                        % (u, ",".join("f%d" % k for k in range(u * per, (u + 1) * per))))
    main = os.path.join(d, "sleds_main.c")
    text = ("/* generated by bench/ring.py */\n#include <stdio.h>\n#include <time.h>\n#include <unistd.h>\n"
            "typedef unsigned long (*fn)(unsigned long);\n")
    text += "".join("extern const fn table%02d[%d];\n" % (u, per) for u in range(units))
    text += "static const fn *tables[] = {%s};\n" % ",".join("table%02d" % u for u in range(units))
    text += ("volatile unsigned long sink;\n__attribute__((noinline)) void beat(unsigned long i) { sink += i; }\n"
             "int main(void) {\n  printf(\"ready %%d\\n\", (int)getpid()); fflush(stdout);\n"
             "  struct timespec ts = {0, 50000};\n"
             "  for (unsigned long i = 0;; i++) {\n"
             "    sink += tables[i %% %d][(i / %d) %% %d](i); beat(i);\n"
             "    if (i %% 20000 == 0) { printf(\"iter %%lu\\n\", i); fflush(stdout); }\n"
             "    nanosleep(&ts, 0);\n  }\n}\n" % (units, units, per))
    if not os.path.exists(main) or open(main).read() != text:  # rewritten, it would be rebuilt (minutes)
        with open(main, "w") as f:
            f.write(text)
    srcs.append(main)
    wl = R.Workload("sleds", srcs, [])
    return R.build(ptcc, wl, ["-O1"], [], exe, deps=R.ptcall_deps(build_dir))


def read_process_time_ns(trace):
    """CLOCK_MONOTONIC of the first PROCESS chunk (docs/trace-format.md 4.2: `time_ns`, the
    moment of its `tsc`, from which `ptcall calls` counts its times), or None."""
    with open(trace, "rb") as f:
        data = f.read()
    if data[:8] != b"PTCALLTR":
        return None
    off = struct.unpack_from("<I", data, 12)[0]
    while off + 24 <= len(data):
        typ, _, size = struct.unpack_from("<HHI", data, off)
        if typ == 2 and size >= 32:
            return struct.unpack_from("<Q", data, off + 24 + 24)[0]
        off += 24 + size + (8 - size % 8) % 8
    return None


def first_event_ns(ptcall, trace):
    """The earliest call start of `ptcall export --format jsonl` (ns since the trace's origin;
    docs/usage.md, events / jsonl), or None."""
    out = R.sh([ptcall, "export", trace, "--format", "jsonl", "-o", "-"])
    starts = [json.loads(r)["start"] for r in out.splitlines() if r.strip()]
    starts = [s for s in starts if s is not None]
    return min(starts) if starts else None


def bench_attach(a, work, tools, times):
    ok, why = attach_probe(tools)
    res = {"available": ok, "why": why, "sleds": SLEDS, "rows": []}
    if not ok:
        log("attach: %s: %s" % (NOT_AVAILABLE, why))
        return res
    d = os.path.join(work, "attach")
    os.makedirs(d, exist_ok=True)
    exe = sleds_program(d, SLEDS, tools["ptcc"], tools["build_dir"])
    target = subprocess.Popen([exe], stdout=subprocess.PIPE, text=True)
    try:
        line = target.stdout.readline()
        if not line.startswith("ready "):
            sys.exit("bench/ring: attach: the target said %r" % line)
        pid = target.pid
        for k in range(times):
            trace = os.path.join(d, "attach-%02d.ptc" % k)
            if os.path.exists(trace):
                os.unlink(trace)
            t0 = time.monotonic_ns()
            rec = subprocess.Popen([tools["ptcall"], "record", "-q", "--pid", str(pid), "--duration", "10s",
                                    "-o", trace], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            time.sleep(0.3)
            t1 = time.monotonic_ns()
            rec.send_signal(signal.SIGINT)
            out, _ = rec.communicate(timeout=30)
            t2 = time.monotonic_ns()
            if rec.returncode != 0:
                res["available"], res["why"] = False, "`ptcall record --pid` exited %d: %s" % (
                    rec.returncode, out.strip().splitlines()[-1:] or "")
                log("attach: %s" % res["why"])
                return res
            if target.poll() is not None:
                sys.exit("bench/ring: attach: the target died (status %s) after attach %d" % (target.returncode, k))
            origin = read_process_time_ns(trace)
            first = first_event_ns(tools["ptcall"], trace)
            lat = (origin + first - t0) if origin is not None and first is not None else None
            res["rows"].append({"attach_ns": lat, "detach_ns": t2 - t1, "events": R.ptcall_events(tools["ptcall"], trace)})
            log("attach %d/%d: first event %s after the command, detach %.1f ms"
                % (k + 1, times, "?" if lat is None else "%.1f ms" % (lat / 1e6), (t2 - t1) / 1e6))
        # the target goes on after the last detach
        seen = target.stdout.readline()
        if target.poll() is not None or not seen:
            sys.exit("bench/ring: attach: the target stopped after detaching")
    finally:
        target.kill()
        target.wait()
    lats = [r["attach_ns"] for r in res["rows"] if r["attach_ns"] is not None]
    res["attach_ms"] = R.quartiles([x / 1e6 for x in lats]) if lats else None
    res["detach_ms"] = R.quartiles([r["detach_ns"] / 1e6 for r in res["rows"]])
    return res


def attach_section(att, lines):
    lines.append("### Attaching to a running program\n")
    lines.append("A generated program with %s instrumented functions (%s sleds, built with ptcall-cc -O1) "
                 "started without ptcall, calling one of them and `beat` every ~50 µs. Each time: "
                 "`ptcall record --pid PID --duration 10s`, SIGINT after 0.3 s. Command to first event: "
                 "CLOCK_MONOTONIC of the trace's first call (its PROCESS chunk's `time_ns` + the first start "
                 "in `ptcall export --format jsonl`) minus the moment the command was started. Detach: SIGINT to "
                 "the recorder's exit (sleds disarmed, trace finished). Target (issue 31): attach under 50 ms.\n"
                 % ("{:,}".format(att["sleds"]), "{:,}".format(att["sleds"])))
    if not att["available"]:
        lines.append("Attach and detach: %s (%s).\n" % (NOT_AVAILABLE, att["why"]))
        return
    lines.append("| measure | median | quartiles | attaches |")
    lines.append("|---|---:|---|---:|")
    for name, key in (("command to first event", "attach_ms"), ("detach", "detach_ms")):
        q = att.get(key)
        if q:
            lines.append("| %s | %.1f ms | %.1f–%.1f ms | %d |" % (name, q[1], q[0], q[2], len(att["rows"])))
    lines.append("")


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default="", help="comma-separated: " + ",".join(SECTIONS))
    ap.add_argument("--workloads", default=",".join(WORKLOADS), help="ring section: " + ",".join(WORKLOADS))
    ap.add_argument("--funtrace", default="", help="funtrace checkout or git directory")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    ap.add_argument("--rebuild", action="store_true")
    a = ap.parse_args()
    R.REBUILD = a.rebuild
    want = set(a.only.split(",")) if a.only else set(SECTIONS)
    wls = set(a.workloads.split(","))
    if want - set(SECTIONS) or wls - set(WORKLOADS):
        sys.exit("bench/ring: unknown section or workload: sections %s, workloads %s"
                 % (",".join(SECTIONS), ",".join(WORKLOADS)))
    build_dir = os.path.abspath(a.build)
    tools = {"ptcall": os.path.join(build_dir, "tools", "ptcall"), "ptcc": os.path.join(build_dir, "bin", "ptcall-cc"),
             "build_dir": build_dir}
    for tool in (tools["ptcall"], tools["ptcc"]):
        if not os.access(tool, os.X_OK):
            sys.exit("bench/ring: %s not found: build ptcall first (scripts/build.sh)" % tool)
    work = os.path.join(build_dir, "bench")
    os.makedirs(work, exist_ok=True)
    wdir = os.path.join(ROOT, "bench", "workloads")
    rounds = 3 if a.quick else R.paired_rounds(a.runs)
    t_start = time.time()
    load_before = os.getloadavg()[0]
    ft = None
    if want & {"ring", "stall"}:
        ft = funtrace_runtime(funtrace_checkout(a, work), work)
    ring = {}
    if "ring" in want:
        fdr_ctl = os.path.join(work, "xray_fdr_ctl.o")
        src = os.path.join(wdir, "xray_fdr_ctl.c")
        if R.REBUILD or R.mtime(fdr_ctl) < R.mtime(src):
            R.sh([R.CLANG, "-O2", "-c", "-fPIC", src, "-o", fdr_ctl])
        qa = argparse.Namespace(quick=a.quick)
        for wl in R.workloads_for(qa, work, wdir, wls):
            ring[wl.name] = bench_ring(a, wl, work, tools, fdr_ctl, ft, rounds)
    stall = bench_stall(a, work, tools, ft, 3 if a.quick else a.runs) if "stall" in want else None
    att = bench_attach(a, work, tools, 10 if a.quick else 20) if "attach" in want else None
    with open(os.path.join(work, "ring-results.json"), "w") as f:
        json.dump({"ring": ring, "stall": stall, "attach": att}, f, indent=1)
    lines = ["## Flight recorders and attaching (`python3 bench/ring.py%s%s`)\n"
             % (" --quick" if a.quick else "", (" --only " + a.only) if a.only else ""),
             "Machine: %s. Date: %s. Load average %.2f at the start, %.2f at the end. The run took %s. "
             "funtrace %s (%s), its runtime linked into the program as its `funtrace-finstr-clang++` wrapper "
             "does (clang `-finstrument-functions-after-inlining`), ftrace events off.\n"
             % (R.machine(), time.strftime("%Y-%m-%d"), load_before, os.getloadavg()[0],
                R.duration(time.time() - t_start), FUNTRACE_COMMIT[:12], FUNTRACE_URL)]
    if ring:
        ring_section(ring, lines)
    if stall:
        stall_section(stall, lines)
    if att:
        attach_section(att, lines)
    text = "\n".join(lines) + "\n"
    print(text)
    if not os.path.exists(a.out):
        with open(a.out, "w") as f:
            f.write("# Benchmarks\n")
    R.replace_block(a.out, "bench/ring.py", text)


if __name__ == "__main__":
    main()
