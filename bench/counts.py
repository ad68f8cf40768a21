#!/usr/bin/env python3
"""Counting mode's cost (docs/runtime.md, *Counting mode*) beside the other ways to count
function calls, on the calls workload, Lua and SQLite (bench/run.py's workloads and builds):

  base           clang -O2, not instrumented
  untraced       the ptcall-cc build, run plainly (its sleds are nops)
  counts         the same binary, ptcall record --counts (one counter increment per call)
  soft untimed   the same binary, ptcall record --no-timestamps (a trace of every call)
  soft timed     the same binary, ptcall record (a TSC per event)
  sancov-func    clang -fsanitize-coverage=func,trace-pc-guard with an empty
                 __sanitizer_cov_trace_pc_guard (a call per function entry)
  profile-gen    clang -fprofile-instr-generate (a counter increment per function and per
                 branch region; the profile written at exit to a file, not merged)

Each contestant runs --runs times in interleaved rounds; the table gives the median wall time
and the median of the per-round ratios to base. Writes the block between
<!-- counts:begin/end --> in docs/benchmarks.md (--no-write: print only).

usage: python3 bench/counts.py [--build BUILD] [--runs 7] [--quick] [--no-write]
"""
import argparse
import json
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# bench/run.py's workloads, builds and paired rounds: the script's own folder is first on
# sys.path, so its sibling imports as a module (its main() runs only as a script)
import run as R  # noqa: E402

EMPTY_GUARD = """#include <stdint.h>
void __sanitizer_cov_trace_pc_guard_init(uint32_t *start, uint32_t *stop) { (void)start; (void)stop; }
void __sanitizer_cov_trace_pc_guard(uint32_t *guard) { (void)guard; }
"""

NAMES = ["base", "untraced", "counts", "soft untimed", "soft timed", "sancov-func", "profile-gen"]


def contestants(wl, work, tools, guard_obj):
    d = os.path.join(work, wl.name)
    base = R.build(R.CLANG, wl, [], [], os.path.join(d, "base"))
    pt = R.build(tools["ptcc"], wl, [], [], os.path.join(d, "ptcall"), deps=R.ptcall_deps(tools["build_dir"]))
    san = R.build(R.CLANG, wl, ["-fsanitize-coverage=func,trace-pc-guard"], [guard_obj],
                  os.path.join(d, "sancov-func"))
    prof = R.build(R.CLANG, wl, ["-fprofile-instr-generate"], [], os.path.join(d, "profile-gen"),
                   deps=[])
    ptcall = tools["ptcall"]
    out = os.path.join(d, "counts.ptc")
    rec = lambda *flags: [ptcall, "record", "-q", "-o", out] + list(flags) + ["--", pt] + wl.args
    prof_env = dict(os.environ, LLVM_PROFILE_FILE=os.path.join(d, "profile-gen.profraw"))
    return {
        "base": ([base] + wl.args, None),
        "untraced": ([pt] + wl.args, None),
        "counts": (rec("--counts"), None),
        "soft untimed": (rec("--no-timestamps"), None),
        "soft timed": (rec(), None),
        "sancov-func": ([san] + wl.args, None),
        "profile-gen": ([prof] + wl.args, prof_env),
    }


def bench(wl, work, tools, guard_obj, runs):
    cmds = contestants(wl, work, tools, guard_obj)
    cwd = os.path.join(work, wl.name)
    times = {n: [] for n in NAMES}
    for _ in range(runs):
        for n in NAMES:
            cmd, env = cmds[n]
            dt, _ = R.timed_run(cmd, env=env, cwd=cwd)
            times[n].append(dt)
    ratios = {n: statistics.median(t / b for t, b in zip(times[n], times["base"])) for n in NAMES}
    # the calls counting mode counted: its events per second for the table
    calls = R.sh([tools["ptcall"], "report", os.path.join(cwd, "counts.ptc"), "--format", "json", "--top", "1"])
    ncalls = json.loads(calls)["totals"]["calls"]
    return {"median": {n: statistics.median(times[n]) for n in NAMES}, "ratio": ratios, "calls": ncalls}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-write", action="store_true")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    tools = {"ptcall": os.path.join(build, "tools", "ptcall"), "ptcc": os.path.join(build, "bin", "ptcall-cc"),
             "build_dir": build}
    work = os.path.join(build, "bench")
    os.makedirs(work, exist_ok=True)
    guard_src = os.path.join(work, "sancov_empty_guard.c")
    if not os.path.exists(guard_src) or open(guard_src).read() != EMPTY_GUARD:
        with open(guard_src, "w") as f:
            f.write(EMPTY_GUARD)
    guard_obj = os.path.join(work, "sancov_empty_guard.o")
    if R.mtime(guard_obj) < R.mtime(guard_src):  # not every run: the sancov builds would relink
        R.sh([R.CLANG, "-O2", "-c", guard_src, "-o", guard_obj])
    wdir = os.path.join(ROOT, "bench", "workloads")
    qa = argparse.Namespace(quick=a.quick)
    t0 = time.time()
    load0 = os.getloadavg()[0]
    res = []
    for wl in R.workloads_for(qa, work, wdir, {"calls", "lua", "sqlite"}):
        r = bench(wl, work, tools, guard_obj, a.runs)
        res.append((wl, r))
        print("%s: %s" % (wl.name, ", ".join("%s %.2fx" % (n, r["ratio"][n]) for n in NAMES)), file=sys.stderr)
    lines = ["`python3 bench/counts.py --runs %d%s` (%s, %s, load average %.2f → %.2f, %.0f s): each "
             "contestant %d times in interleaved rounds; ratio = median of the per-round ratios to "
             "`base` (the same sources, clang-14 -O2, not instrumented)." %
             (a.runs, " --quick" if a.quick else "", time.strftime("%Y-%m-%d"), R.machine(), load0,
              os.getloadavg()[0], time.time() - t0, a.runs), ""]
    lines.append("| workload | calls | base s | " + " | ".join(NAMES[1:]) + " |")
    lines.append("|---|---:|---:|" + "---:|" * (len(NAMES) - 1))
    for wl, r in res:
        cells = []
        for n in NAMES[1:]:
            cell = "%.2f×" % r["ratio"][n]
            cells.append("**%s**" % cell if n == "counts" else cell)
        lines.append("| %s (`%s`) | %d | %.2f | %s |" % (wl.name, wl.cmd_desc, r["calls"], r["median"]["base"],
                                                       " | ".join(cells)))
    text = "\n".join(lines) + "\n"
    print(text)
    if not a.no_write:
        R.replace_block(os.path.join(ROOT, "docs", "benchmarks.md"), "counts", text)


if __name__ == "__main__":
    main()
