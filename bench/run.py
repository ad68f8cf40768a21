#!/usr/bin/env python3
"""Side-by-side benchmark of ptcall against its peers; writes docs/benchmarks.md.

Every contestant runs the same workload binary built the way it needs, in one run of this
script, interleaved round-robin so that machine noise hits all of them alike. Results are
ratios against the uninstrumented build (median of --runs runs); absolute times are shown
only for reference.

usage: bench/run.py [--build DIR] [--runs N] [--quick] [--out FILE] [--only WORKLOAD,...]
"""
import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLANG = shutil.which("clang-14") or "clang"


def sh(cmd, **kw):
    """Runs a command, failing loudly with its output."""
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    if r.returncode != 0:
        sys.exit("bench: command failed (%d): %s\n%s" % (r.returncode, " ".join(cmd), r.stdout[-3000:]))
    return r.stdout


def timed_run(cmd, env=None, stdout=subprocess.DEVNULL):
    """Wall time and peak RSS (KiB) of one run. GNU time measures the RSS: a child forked
    from this Python process would report Python's own size as its peak."""
    rss_file = os.path.join(os.environ.get("TMPDIR", "/tmp"), "ptcall-bench-rss.%d" % os.getpid())
    t0 = time.perf_counter()
    r = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss_file] + cmd, env=env, stdout=stdout,
                       stderr=subprocess.PIPE)
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        sys.exit("bench: %s exited %d\n%s" % (" ".join(cmd), r.returncode, r.stderr.decode(errors="replace")[-2000:]))
    with open(rss_file) as f:
        rss = int(f.read().split()[-1])
    os.unlink(rss_file)
    return dt, rss


class Workload:
    def __init__(self, name, sources, args, cflags=(), ldflags=(), stdin=None, desc=""):
        self.name, self.sources, self.args = name, list(sources), list(args)
        self.cflags, self.ldflags, self.stdin, self.desc = list(cflags), list(ldflags), stdin, desc


def build(cc, wl, extra_cflags, extra_objs, out):
    os.makedirs(os.path.dirname(out), exist_ok=True)
    sh([cc, "-O2", "-g"] + wl.cflags + extra_cflags + wl.sources + extra_objs + ["-o", out] + wl.ldflags)
    return out


def uftrace_calls(datadir):
    """Total calls in a uftrace data directory, from its own report."""
    out = sh(["uftrace", "report", "-d", datadir, "--no-pager"])
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="small inputs, 3 runs (smoke test)")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    runs = 3 if a.quick else a.runs
    build_dir = os.path.abspath(a.build)
    ptcall = os.path.join(build_dir, "tools", "ptcall")
    ptcc = os.path.join(build_dir, "bin", "ptcall-cc")
    for tool in (ptcall, ptcc):
        if not os.access(tool, os.X_OK):
            sys.exit("bench: %s not found: build ptcall first (scripts/build.sh)" % tool)
    work = os.path.join(build_dir, "bench")
    os.makedirs(work, exist_ok=True)
    wdir = os.path.join(ROOT, "bench", "workloads")

    hooks = {}
    for kind, flag in (("empty", []), ("log", ["-DCYG_LOG"])):
        o = os.path.join(work, "cyg_%s.o" % kind)
        sh([CLANG, "-O2", "-c", "-fPIC"] + flag + [os.path.join(wdir, "cyg_hooks.c"), "-o", o])
        hooks[kind] = o

    workloads = []
    fib_n, loop_n = ("27", "2000000") if a.quick else ("32", "30000000")
    workloads.append(Workload("calls", [os.path.join(wdir, "calls.c")], [fib_n, loop_n],
                              desc="recursive fib(%s) + a loop calling a tiny function %s times" % (fib_n, loop_n)))
    workloads.append(Workload("threads", [os.path.join(wdir, "threads.c")], ["3" if a.quick else "20"],
                              cflags=["-pthread"], ldflags=["-pthread"],
                              desc="4 threads: qsort with a comparator call-back + fib(18), per round"))
    bz = os.path.join(work, "bzip2-src")
    sh([os.path.join(ROOT, "scripts", "fetch-debian-source.sh"), "bzip2", bz])
    bz_inp = os.path.join(work, "bzip2-input")
    want = (2 if a.quick else 16) << 20
    if not os.path.exists(bz_inp) or os.path.getsize(bz_inp) != want:
        # deterministic text: bzip2's own sources and manual, repeated
        parts = b"".join(open(os.path.join(bz, f), "rb").read() for f in sorted(os.listdir(bz))
                         if f.endswith((".c", ".h", ".xml", ".ps")))
        with open(bz_inp, "wb") as f:
            f.write((parts * (want // len(parts) + 1))[:want])
    bz_src = [os.path.join(bz, f + ".c") for f in
              ("blocksort", "huffman", "crctable", "randtable", "compress", "decompress", "bzlib", "bzip2")]
    workloads.append(Workload("bzip2", bz_src, ["-9", "-c", bz_inp], cflags=["-D_FILE_OFFSET_BITS=64", "-w"],
                              desc="bzip2 1.0.8 (Debian source) compressing %d MiB of text" % (want >> 20)))
    if a.only:
        keep = set(a.only.split(","))
        workloads = [w for w in workloads if w.name in keep]

    results = {}
    for wl in workloads:
        d = os.path.join(work, wl.name)
        os.makedirs(d, exist_ok=True)
        bins = {
            "base": build(CLANG, wl, [], [], os.path.join(d, "base")),
            "ptcall": build(ptcc, wl, [], [], os.path.join(d, "ptcall")),
            "cyg-empty": build(CLANG, wl, ["-finstrument-functions"], [hooks["empty"]], os.path.join(d, "cyg-empty")),
            "cyg-log": build(CLANG, wl, ["-finstrument-functions"], [hooks["log"]], os.path.join(d, "cyg-log")),
            "xray": build(CLANG, wl, ["-fxray-instrument", "-fxray-instruction-threshold=1"], [], os.path.join(d, "xray")),
            "pg": build(CLANG, wl, ["-pg"], [], os.path.join(d, "pg")),
        }
        trace = os.path.join(d, "run.ptc")
        trace_nt = os.path.join(d, "run-nots.ptc")
        uft = os.path.join(d, "uftrace.data")
        xlog = os.path.join(d, "xray-log.")
        env_xray = dict(os.environ, XRAY_OPTIONS="patch_premain=true xray_mode=xray-basic xray_logfile_base=%s" % xlog)
        contestants = [
            ("uninstrumented", [bins["base"]] + wl.args, None),
            ("ptcall untraced", [bins["ptcall"]] + wl.args, None),
            ("ptcall soft, timestamps", [ptcall, "record", "-q", "-o", trace, "--", bins["ptcall"]] + wl.args, None),
            ("ptcall soft, no timestamps", [ptcall, "record", "-q", "--no-timestamps", "-o", trace_nt, "--", bins["ptcall"]] + wl.args, None),
            ("-finstrument-functions, empty hooks", [bins["cyg-empty"]] + wl.args, None),
            ("-finstrument-functions, logging hooks", [bins["cyg-log"]] + wl.args, None),
            ("XRay unpatched", [bins["xray"]] + wl.args, None),
            ("XRay basic mode", [bins["xray"]] + wl.args, env_xray),
            ("uftrace record", ["uftrace", "record", "-d", uft, bins["pg"]] + wl.args, None),
        ]
        times = {c[0]: [] for c in contestants}
        rss = {c[0]: 0 for c in contestants}
        for r in range(runs):
            for name, cmd, env in contestants:
                if name == "uftrace record":
                    shutil.rmtree(uft, ignore_errors=True)
                for f in os.listdir(d):
                    if f.startswith("xray-log."):
                        os.unlink(os.path.join(d, f))
                dt, mx = timed_run(cmd, env=env)
                times[name].append(dt)
                rss[name] = max(rss[name], mx)
            print("bench: %s run %d/%d done" % (wl.name, r + 1, runs), file=sys.stderr)
        base = statistics.median(times["uninstrumented"])
        ev = ptcall_events(ptcall, trace)
        ev_nt = ptcall_events(ptcall, trace_nt)
        ucalls = uftrace_calls(uft)
        row = {}
        for name, _, _ in contestants:
            med = statistics.median(times[name])
            row[name] = {"median_s": med, "ratio": med / base, "rss_kib": rss[name]}
        row["ptcall soft, timestamps"]["bytes_per_event"] = dir_bytes(trace) / max(ev, 1)
        row["ptcall soft, timestamps"]["events"] = ev
        row["ptcall soft, no timestamps"]["bytes_per_event"] = dir_bytes(trace_nt) / max(ev_nt, 1)
        row["ptcall soft, no timestamps"]["events"] = ev_nt
        row["uftrace record"]["bytes_per_event"] = dir_bytes(uft) / max(2 * ucalls, 1)
        row["uftrace record"]["events"] = 2 * ucalls
        results[wl.name] = (wl, row)

    write_report(a, runs, results)


def machine():
    cpu = "unknown"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return "%s, %d cores, Linux %s" % (cpu, os.cpu_count(), platform.release())


def write_report(a, runs, results):
    lines = []
    cmdline = "bench/run.py" + (" --quick" if a.quick else "") + ("" if a.runs == 5 else " --runs %d" % a.runs)
    lines.append("## Tracing overhead, side by side (`%s`)\n" % cmdline)
    lines.append("Machine: %s. Date: %s. %d runs per contestant, interleaved; median.\n"
                 % (machine(), time.strftime("%Y-%m-%d"), runs))
    for name, (wl, row) in results.items():
        lines.append("### %s: %s\n" % (name, wl.desc))
        lines.append("| contestant | slowdown (× uninstrumented) | median s | bytes/event | events | peak RSS MiB |")
        lines.append("|---|---:|---:|---:|---:|---:|")
        for cname, r in row.items():
            bpe = "%.2f" % r["bytes_per_event"] if "bytes_per_event" in r else ""
            evs = "%d" % r["events"] if "events" in r else ""
            lines.append("| %s | %.2f | %.3f | %s | %s | %.1f |" % (cname, r["ratio"], r["median_s"], bpe, evs, r["rss_kib"] / 1024))
        u = row["uftrace record"]
        t = row["ptcall soft, timestamps"]
        n = row["ptcall soft, no timestamps"]
        lines.append("")
        lines.append("Against uftrace: timed slowdown %.3f of uftrace's, untimed %.3f of uftrace's, "
                     "bytes per event %.3f of uftrace's. Overhead (slowdown − 1): timed %.3f, untimed %.3f of uftrace's.\n"
                     % (t["ratio"] / u["ratio"], n["ratio"] / u["ratio"], t["bytes_per_event"] / u["bytes_per_event"],
                        (t["ratio"] - 1) / (u["ratio"] - 1), (n["ratio"] - 1) / (u["ratio"] - 1)))
    text = "\n".join(lines) + "\n"
    print(text)
    begin, end = "<!-- bench/run.py begin -->", "<!-- bench/run.py end -->"
    old = open(a.out).read() if os.path.exists(a.out) else "# Benchmarks\n\n%s\n%s\n" % (begin, end)
    if begin not in old:
        old += "\n%s\n%s\n" % (begin, end)
    pre, rest = old.split(begin, 1)
    post = rest.split(end, 1)[1]
    with open(a.out, "w") as f:
        f.write(pre + begin + "\n" + text + end + post)


if __name__ == "__main__":
    main()
