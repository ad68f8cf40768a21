#!/usr/bin/env python3
"""Real-program test: bzip2 1.0.8 from Debian's source package, built with ptcall-cc, run on
bzip2's own fixed sample inputs (compress sample1.ref, decompress sample2.bz2, test
sample3.bz2: three processes exec'd by one shell), traced with the soft backend. Every
function's call count must equal an independent oracle's on the same inputs:

  --placement early: clang's PGO function entry counts (-fprofile-instr-generate), which
                     count every source function before inlining, as early placement does;
  --placement late:  Valgrind callgrind's call counts on the very same instrumented binary
                     (it sees the machine code, so inlined functions are absent from both).

usage: bzip2_oracle.py --build BUILD --work DIR --placement early|late
"""
import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
UNITS = ["blocksort", "huffman", "crctable", "randtable", "compress", "decompress", "bzlib", "bzip2"]


def llvm_tool(name):
    """A tool of the LLVM release ptcall was built for (ctest sets PTCALL_LLVM_BIN)."""
    return os.path.join(os.environ.get("PTCALL_LLVM_BIN", "/usr/lib/llvm-14/bin"), name)


def run(cmd, **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    if r.returncode != 0:
        sys.exit("FAIL: %s exited %d\n%s%s" % (" ".join(cmd), r.returncode, r.stdout[-2000:], r.stderr[-2000:]))
    return r.stdout


def valgrind_reads(binary):
    """Whether valgrind can read the debug information of binary and what it loads (valgrind
    3.19 gives up on clang 14's DWARF 5: a build of ptcall made with clang, such as a sanitizer
    build, has a libptcall.so it cannot read). Returns (ok, valgrind's words)."""
    p = subprocess.run(["valgrind", "--tool=none", "-q", binary, "--help"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    return "Possibly corrupted debuginfo" not in p.stderr, p.stderr[-600:]


def build(cc, src, out, flags):
    objs = []
    for u in UNITS:
        o = "%s.%s.o" % (out, u)
        run([cc, "-O2", "-g", "-w", "-D_FILE_OFFSET_BITS=64"] + flags + ["-c", os.path.join(src, u + ".c"), "-o", o])
        objs.append(o)
    run([cc] + flags + objs + ["-o", out])
    return out


def workload(binary, src, work):
    """The fixed inputs, as one shell command line run in `work`."""
    s = lambda f: os.path.join(src, f)
    return ["/bin/sh", "-c",
            "set -e; B='%s'; $B -1c < %s > c1.bz2; cmp c1.bz2 %s; $B -dc < %s > d2; cmp d2 %s; $B -t %s"
            % (binary, s("sample1.ref"), s("sample1.bz2"), s("sample2.bz2"), s("sample2.ref"), s("sample3.bz2"))]


def ptcall_counts(ptcall, trace):
    j = json.loads(run([ptcall, "report", trace, "--format", "json", "--top", "0"]))
    counts = collections.Counter()
    for f in j["functions"]:
        counts[f["name"]] += int(f["calls"])
    return counts, j


def pgo_counts(profdata):
    out = run([llvm_tool("llvm-profdata"), "show", "--all-functions", "--counts", profdata])
    counts, name = collections.Counter(), None
    for line in out.splitlines():
        m = re.match(r"^  (\S.*):$", line)
        if m:
            name = m.group(1).split(":")[-1]  # "file.c:static_fn" -> static_fn
            continue
        m = re.match(r"^\s+Function count: (\d+)", line)
        if m and name:
            counts[name] += int(m.group(1))
    return counts


def callgrind_counts(outfiles, functions):
    """Calls into each function, summed over callers, from callgrind's output files."""
    counts = collections.Counter()
    for path in outfiles:
        names, cfn = {}, None
        for line in open(path, errors="replace"):
            m = re.match(r"^c?fn=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
            if m:
                if m.group(2):
                    names[m.group(1)] = m.group(2)
                if line.startswith("cfn="):
                    cfn = names.get(m.group(1))
                continue
            m = re.match(r"^calls=(\d+) ", line)
            if m and cfn is not None:
                counts[cfn] += int(m.group(1))
                cfn = None
    return collections.Counter({k: v for k, v in counts.items() if k in functions})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--placement", choices=["early", "late"], required=True)
    a = ap.parse_args()
    build_dir = os.path.abspath(a.build)
    ptcall = os.path.join(build_dir, "tools", "ptcall")
    ptcc = os.path.join(build_dir, "bin", "ptcall-cc")
    work = os.path.abspath(os.path.join(a.work, a.placement))
    os.makedirs(work, exist_ok=True)
    src = os.path.join(os.path.abspath(a.work), "bzip2-src")
    run([os.path.join(ROOT, "scripts", "fetch-debian-source.sh"), "bzip2", src])

    # DWARF 4: Valgrind 3.19 cannot read the DWARF 5 that clang 14 emits by default
    traced = build(ptcc, src, os.path.join(work, "bzip2-ptcall"), ["-gdwarf-4", "-fptcall-placement=" + a.placement])
    trace = os.path.join(work, "run.ptc")
    # --no-blocking: the oracles count the program's own functions; the runtime's [blocking]
    # pseudo-functions (read, write, ...) would be matched against libc's internal calls too
    run([ptcall, "record", "-q", "--backend", "soft", "--no-blocking", "-o", trace, "--"] +
        workload(traced, src, work), cwd=work)
    got, report = ptcall_counts(ptcall, trace)
    if report["totals"].get("processes", 0) < 3:
        sys.exit("FAIL: expected 3 traced bzip2 processes, report says %s" % report["totals"])

    if a.placement == "early":
        oracle_bin = build(llvm_tool("clang"), src, os.path.join(work, "bzip2-pgo"), ["-fprofile-instr-generate"])
        for f in os.listdir(work):
            if f.endswith(".profraw"):
                os.unlink(os.path.join(work, f))
        env = dict(os.environ, LLVM_PROFILE_FILE=os.path.join(work, "pgo-%p.profraw"))
        run(workload(oracle_bin, src, work), cwd=work, env=env)
        raws = [os.path.join(work, f) for f in os.listdir(work) if f.endswith(".profraw")]
        run([llvm_tool("llvm-profdata"), "merge", "-o", os.path.join(work, "pgo.profdata")] + raws)
        want = pgo_counts(os.path.join(work, "pgo.profdata"))
        oracle = "clang PGO function entry counts"
    else:
        ok, why = valgrind_reads(traced)
        if not ok:
            print("SKIP: valgrind cannot read the debug information of the program or of "
                  "libptcall.so (a clang-built ptcall: valgrind 3.19 does not read clang 14's "
                  "DWARF 5); the early placement's PGO oracle still runs:\n" + why)
            return 0
        for f in os.listdir(work):
            if f.startswith("callgrind.out"):
                os.unlink(os.path.join(work, f))
        vg = "valgrind --tool=callgrind --callgrind-out-file=%s/callgrind.out.%%p -q %s" % (work, traced)
        run(workload(vg, src, work), cwd=work)
        outs = [os.path.join(work, f) for f in os.listdir(work) if f.startswith("callgrind.out")]
        # functions the pass instrumented, as the trace's function tables list them
        instrumented = {f["name"] for f in report["functions"]} | set(report.get("uncalled", []))
        want = callgrind_counts(outs, instrumented)
        # main is entered from libc's start code, which callgrind attributes like any call
        oracle = "Valgrind callgrind call counts"

    called = {k for k, v in want.items() if v} | {k for k, v in got.items() if v}
    bad = sorted(k for k in called if got.get(k, 0) != want.get(k, 0))
    for k in sorted(called):
        print("%-28s ptcall %10d  oracle %10d%s" % (k, got.get(k, 0), want.get(k, 0), "   MISMATCH" if k in bad else ""))
    print("%d functions called; %d mismatches against %s" % (len(called), len(bad), oracle))
    # after inlining (late) fewer functions remain than the source has (early)
    if len(called) < (50 if a.placement == "early" else 20):
        sys.exit("FAIL: only %d functions called: the workload did not run as expected" % len(called))
    if bad:
        sys.exit("FAIL: call counts differ from %s for: %s" % (oracle, ", ".join(bad)))
    print("PASS: bzip2 (%s placement): every function's call count equals %s" % (a.placement, oracle))


if __name__ == "__main__":
    main()
