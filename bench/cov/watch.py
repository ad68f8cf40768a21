#!/usr/bin/env python3
"""`ptcall cov run --watch` behind a live AFL++ campaign (docs/benchmarks.md, "Watching a live
campaign"): its lag and its CPU share.

For each --cpu value: one afl-fuzz instance (Debian's afl++, one core) on the zlib harness
(bench/cov/zlib_harness.c over Debian's zlib, bench/cov/zlib-build.sh) runs for --seconds
from the seeds of bench/cov/zlib-campaign.sh, while `ptcall cov run --watch --until-idle`
follows it with the ptcall-cc -fptcall-cov build at its defaults (--save-every 5s, nice 19)
and that --cpu. This script polls every 0.5 s from outside:

  lag        per entry: the first poll at which `cov report` of the .ptcov holds it, minus
             the entry file's modification time, or the watch's start for older files (the
             seeds AFL++ links into its queue) (so it includes --save-every and the 0.5 s
             poll); the watcher's own figure (file time to the write holding the result) is
             quoted from its summary line
  CPU share  the watcher's CPU time with everything it waited for (the fork server and the
             target's runs: wait4's rusage) over the wall time it ran
  campaign   afl-fuzz's execs_done at the end (fuzzer_stats), to compare runs

Figures go to --out (JSON) and a table on stdout. The machine's load matters: say it.

usage: bench/cov/watch.py WORKDIR PTCALL_BUILD_DIR [--seconds 600] [--cpu 1,0.25]
                          [--out WORKDIR/watch.json]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time


def entries(outdir):
    out = {}
    for inst in os.listdir(outdir) if os.path.isdir(outdir) else []:
        for sub in ("queue", "crashes", "hangs"):
            d = os.path.join(outdir, inst, sub)
            for n in os.listdir(d) if os.path.isdir(d) else []:
                if not n.startswith(".") and n != "README.txt":
                    out["%s/%s/%s" % (inst, sub, n)] = os.path.join(d, n)
    return out


def stats(path):
    kv = {}
    try:
        for line in open(path):
            k, _, v = line.partition(":")
            kv[k.strip()] = v.strip()
    except OSError:
        pass
    return kv


def one(args, work, cpu):
    ptcall = os.path.join(args.build, "tools", "ptcall")
    out = os.path.join(work, "watch-out-%s" % cpu)
    ptcov = os.path.join(work, "watch-%s.ptcov" % cpu)
    shutil.rmtree(out, ignore_errors=True)
    for p in (ptcov,):
        if os.path.exists(p):
            os.unlink(p)
    env = dict(os.environ, AFL_SKIP_CPUFREQ="1", AFL_NO_UI="1",
               AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES="1")
    afl = subprocess.Popen(["afl-fuzz", "-i", os.path.join(work, "seeds"), "-o", out, "-V",
                            str(args.seconds), "-t", "200", "--",
                            os.path.join(work, "afl", "zlib_fuzz"), "@@"],
                           env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while not os.path.isdir(out) and afl.poll() is None:
        time.sleep(0.05)
    t0 = time.time()
    errf = os.path.join(work, "watch-%s.err" % cpu)
    w = subprocess.Popen([ptcall, "cov", "run", "--watch", "--until-idle", "--cpu", str(cpu),
                          "--afl", out, "-o", ptcov, "--",
                          os.path.join(work, "ptcall", "zlib_fuzz"), "@@"],
                         stderr=open(errf, "w"))
    first_file, first_in = {}, {}
    rc = cpu_s = None
    while time.time() - t0 < args.seconds * 3 + 120:
        pid, status, ru = os.wait4(w.pid, os.WNOHANG)
        if pid:
            rc, cpu_s = os.waitstatus_to_exitcode(status), ru.ru_utime + ru.ru_stime
            break
        afl.poll()
        now = time.time()
        for name, path in entries(out).items():
            if name not in first_file:
                try:
                    first_file[name] = min(now, os.stat(path).st_mtime)
                except OSError:
                    pass
        if os.path.exists(ptcov):
            r = subprocess.run([ptcall, "cov", "report", "--format", "json", ptcov],
                               capture_output=True, text=True)
            if r.returncode == 0:
                for i in json.loads(r.stdout)["inputs"]:
                    first_in.setdefault(i["name"], now)
        time.sleep(0.5)
    wall = time.time() - t0
    if rc is None:
        w.kill()
        _, status, ru = os.wait4(w.pid, 0)
        rc, cpu_s = "killed", ru.ru_utime + ru.ru_stime
    afl.wait()
    # from the file's time, or the watch's start for older files (AFL++ links the seeds into
    # the queue with their times)
    lags = sorted(max(0.0, first_in[n] - max(first_file[n], t0)) for n in first_in
                  if n in first_file)
    said = [l for l in open(errf).read().splitlines() if "watch ended" in l]
    st = stats(os.path.join(out, "default", "fuzzer_stats"))
    return {
        "cpu_option": cpu, "seconds": args.seconds, "exit": rc, "entries": len(first_in),
        "lag_median_s": statistics.median(lags) if lags else None,
        "lag_p90_s": lags[int(len(lags) * 0.9)] if lags else None,
        "lag_max_s": lags[-1] if lags else None,
        "watcher_cpu_s": cpu_s, "watcher_wall_s": wall, "cpu_share": cpu_s / wall,
        "afl_execs_done": st.get("execs_done"), "watcher_says": said[0] if said else None,
        "load_before": os.getloadavg()[0],
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("work")
    ap.add_argument("build")
    ap.add_argument("--seconds", type=int, default=600)
    ap.add_argument("--cpu", default="1,0.25")
    ap.add_argument("--out")
    args = ap.parse_args()
    work = os.path.abspath(args.work)
    args.build = os.path.abspath(args.build)
    here = os.path.dirname(os.path.abspath(__file__))
    for kind in ("afl", "ptcall"):
        r = subprocess.run(["sh", os.path.join(here, "zlib-build.sh"), work, kind, args.build],
                           stdout=subprocess.DEVNULL)
        if r.returncode:
            return r.returncode
    if not os.path.isdir(os.path.join(work, "seeds")):
        # the campaign script writes the seeds (and runs afl-fuzz briefly, unused here)
        subprocess.run(["sh", os.path.join(here, "zlib-campaign.sh"), work, "2"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rows = [one(args, work, c) for c in args.cpu.split(",")]
    out = args.out or os.path.join(work, "watch.json")
    with open(out, "w") as f:
        json.dump(rows, f, indent=1)
    print("%-6s %8s %10s %8s %8s %10s %12s" % ("--cpu", "entries", "lag median", "lag p90",
                                                "lag max", "CPU share", "afl execs"))
    for r in rows:
        print("%-6s %8d %9.2fs %7.2fs %7.2fs %9.1f%% %12s" % (
            r["cpu_option"], r["entries"], r["lag_median_s"] or -1, r["lag_p90_s"] or -1,
            r["lag_max_s"] or -1, 100 * r["cpu_share"], r["afl_execs_done"]))
        print("  " + (r["watcher_says"] or "(no summary)"))
    print("figures: " + out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
