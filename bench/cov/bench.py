#!/usr/bin/env python3
"""Coverage of a fuzzing queue, timed three ways (docs/benchmarks.md, "Fuzzing-campaign
coverage"):

  ptcall     `ptcall cov run` (fork server, 1 job; and --exec: one exec per input) on the
             ptcall build (ptcall-cc -fptcall-cov: per-input functions, blocks and lines),
             and on the functions-only build (early placement, no block counters)
  llvm-cov   per input: run the -fprofile-instr-generate -fcoverage-mapping build, then
             `llvm-profdata-14 merge` + `llvm-cov-14 export` (what afl-cov-style tools do to
             get per-input function sets); also the cheapest such pipeline, run +
             `llvm-profdata-14 show --all-functions` on the raw profile
  afl-showmap `afl-showmap -C` over the queue (AFL++'s forkserver coverage collection, edges
             only, no per-input sets) on the afl-clang-fast build

The queue is WORKDIR/out/default/queue from bench/cov/zlib-campaign.sh, made into a corpus of
at least --inputs files by repeating its entries (copies named rN-<entry>): the campaign's
real inputs, each run several times. The llvm-cov pipelines take ~0.1 s per input, so they run
on --llvm-sample inputs (every k-th of the corpus) and their rate is given per input.

With --rounds N, `ptcall cov run` (1 job) on both builds and `afl-showmap -C` also run N
times each in rotation over the same corpus, each under `perf stat` (CPU time, page faults, context
switches of the process and all it starts), and the table gives per round and as medians the
inputs/s, the CPU time per input and the ratio of the two (--paired-only: nothing else).

usage: bench/cov/bench.py WORKDIR PTCALL_BUILD_DIR [--inputs 10000] [--llvm-sample 1000]
                          [--rounds 5] [--paired-only]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def timed(args, **kw):
    t = time.monotonic()
    r = subprocess.run(args, **kw)
    return time.monotonic() - t, r


def perf_stat(args, env=None):
    """Runs args under perf stat: (wall s, task-clock s, page faults, context switches)."""
    with tempfile.NamedTemporaryFile("r", suffix=".perf") as out:
        t, r = timed(["perf", "stat", "-x,", "-o", out.name,
                      "-e", "task-clock,page-faults,context-switches", "--"] + args,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        if r.returncode:
            sys.exit("%s failed (status %d)" % (args[0], r.returncode))
        v = {}
        for line in out:
            f = line.strip().split(",")
            if len(f) > 2 and f[0] and not line.startswith("#"):
                v[f[2]] = float(f[0])
    return t, v["task-clock"] / 1000, v["page-faults"], v["context-switches"]


def paired(work, ptcall, corpus, n, rounds):
    """cov run on the -fptcall-cov build (blocks and lines), cov run on the functions-only
    build and afl-showmap -C in alternation, rounds times each (the order rotates)."""
    def cov(kind):
        return [ptcall, "cov", "run", "-o", os.path.join(work, "bench.ptcov"), "--corpus",
                corpus, "--", os.path.join(work, kind, "zlib_fuzz"), "@@"]
    runs = [("cov run, blocks (-fptcall-cov)", cov("ptcall"), None),
            ("cov run, functions only", cov("ptcall-fn"), None),
            ("afl-showmap -C", ["afl-showmap", "-C", "-q", "-i", corpus, "-o",
                                os.path.join(work, "showmap"), "-t", "1000", "--",
                                os.path.join(work, "afl", "zlib_fuzz"), "@@"],
             dict(os.environ, AFL_QUIET="1"))]
    load0 = os.getloadavg()
    res = {label: [] for label, _, _ in runs}
    for r in range(rounds):
        k = r % len(runs)
        for label, args, env in runs[k:] + runs[:k]:
            res[label].append(perf_stat(args, env))
    load1 = os.getloadavg()
    print("\npaired rounds: %d inputs each run, %d rounds, the order rotating every round; "
          "load average %.1f before, %.1f after" % (n, rounds, load0[0], load1[0]))
    labels = [label for label, _, _ in runs]
    print("| round | " + " | ".join("%s inputs/s | CPU µs/input" % l for l in labels) +
          " | blocks / afl-showmap (CPU) | blocks / functions (CPU) |")
    print("|---:|" + "---:|---:|" * len(labels) + "---:|---:|")
    a, f, b = (res[l] for l in labels)
    med = statistics.median
    for i in range(rounds):
        print("| %d | " % (i + 1) + " | ".join("%.0f | %.1f" % (n / res[l][i][0],
                                                             res[l][i][1] * 1e6 / n)
                                                for l in labels) +
              " | %.2f | %.2f |" % (a[i][1] / b[i][1], a[i][1] / f[i][1]))
    print("| median | " + " | ".join("%.0f | %.1f" % (med(n / x[0] for x in res[l]),
                                                      med(x[1] * 1e6 / n for x in res[l]))
                                     for l in labels) +
          " | %.2f | %.2f |" % (med(x[1] / y[1] for x, y in zip(a, b)),
                                med(x[1] / y[1] for x, y in zip(a, f))))
    for label, xs in res.items():
        print("%s: per input %.1f page faults, %.2f context switches (medians)" % (
            label, med(x[2] / n for x in xs), med(x[3] / n for x in xs)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("work")
    ap.add_argument("build")
    ap.add_argument("--inputs", type=int, default=10000)
    ap.add_argument("--llvm-sample", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=0)
    ap.add_argument("--paired-only", action="store_true")
    a = ap.parse_args()
    work, build = os.path.abspath(a.work), os.path.abspath(a.build)
    here = os.path.dirname(os.path.abspath(__file__))
    ptcall = os.path.join(build, "tools", "ptcall")
    for kind in ["afl", "ptcall", "ptcall-fn", "llvmcov"]:
        if not os.path.exists(os.path.join(work, kind, "zlib_fuzz")):
            subprocess.run([os.path.join(here, "zlib-build.sh"), work, kind, build], check=True,
                           stdout=subprocess.DEVNULL)
    queue = os.path.join(work, "out", "default", "queue")
    entries = sorted(e for e in os.listdir(queue) if not e.startswith("."))
    corpus = os.path.join(work, "bench-corpus")
    shutil.rmtree(corpus, ignore_errors=True)
    os.makedirs(corpus)
    reps = -(-a.inputs // len(entries))
    for r in range(reps):
        for e in entries:
            os.link(os.path.join(queue, e), os.path.join(corpus, "r%d-%s" % (r, e)))
    files = sorted(os.listdir(corpus))
    n = len(files)
    print("corpus: %d inputs (%d queue entries x %d), %.1f KiB" %
          (n, len(entries), reps, sum(os.path.getsize(os.path.join(corpus, f))
                                       for f in files) / 1024))
    if a.rounds > 0:
        paired(work, ptcall, corpus, n, a.rounds)
        if a.paired_only:
            return 0
    res = {}
    dn = subprocess.DEVNULL
    for label, kind, extra in [
            ("ptcall cov run (fork server, 1 job)", "ptcall", []),
            ("ptcall cov run, functions-only build (no block counters)", "ptcall-fn", []),
            ("ptcall cov run --jobs 2", "ptcall", ["--jobs", "2"]),
            ("ptcall cov run --exec (exec per input)", "ptcall", ["--exec"])]:
        out = os.path.join(work, "bench.ptcov")
        t, r = timed([ptcall, "cov", "run", "-o", out, "--corpus", corpus] + extra +
                     ["--", os.path.join(work, kind, "zlib_fuzz"), "@@"], stderr=dn)
        if r.returncode:
            sys.exit("%s failed" % label)
        res[label] = (n, t)
    t, r = timed(["afl-showmap", "-C", "-q", "-i", corpus, "-o", os.path.join(work, "showmap"),
                  "-t", "1000", "--", os.path.join(work, "afl", "zlib_fuzz"), "@@"],
                 stdout=dn, stderr=dn, env=dict(os.environ, AFL_QUIET="1"))
    res["afl-showmap -C"] = (n, t)

    # --llvm-sample 0: every input (about 0.1-0.15 s each: half an hour for 10,000)
    sample = files if a.llvm_sample <= 0 else files[::max(1, n // a.llvm_sample)][:a.llvm_sample]
    lbin = os.path.join(work, "llvmcov", "zlib_fuzz")
    tmp = os.path.join(work, "llvm-bench")
    os.makedirs(tmp, exist_ok=True)
    raw, prof = os.path.join(tmp, "x.profraw"), os.path.join(tmp, "x.profdata")
    env = dict(os.environ, LLVM_PROFILE_FILE=raw)
    t0 = time.monotonic()
    for f in sample:
        subprocess.run([lbin, os.path.join(corpus, f)], env=env, stdout=dn, stderr=dn)
        subprocess.run(["llvm-profdata-14", "merge", "-sparse", "-o", prof, raw], check=True)
        subprocess.run(["llvm-cov-14", "export", "-format=text", "-skip-expansions",
                        "-instr-profile", prof, lbin], check=True, stdout=dn)
    res["llvm-cov per input (run, llvm-profdata merge, llvm-cov export)"] = (
        len(sample), time.monotonic() - t0)
    t0 = time.monotonic()
    for f in sample:
        subprocess.run([lbin, os.path.join(corpus, f)], env=env, stdout=dn, stderr=dn)
        subprocess.run(["llvm-profdata-14", "show", "--all-functions", raw], check=True,
                       stdout=dn)
    res["llvm per input, cheapest (run, llvm-profdata show --all-functions)"] = (
        len(sample), time.monotonic() - t0)

    base = res["ptcall cov run (fork server, 1 job)"]
    rate0 = base[0] / base[1]
    print("\n| how | inputs | seconds | inputs/s | ptcall (1 job) is |")
    print("|---|---:|---:|---:|---:|")
    for label, (k, t) in res.items():
        rate = k / t
        print("| %s | %d | %.2f | %.0f | %.1f× |" % (label, k, t, rate, rate0 / rate))
    return 0


if __name__ == "__main__":
    sys.exit(main())
