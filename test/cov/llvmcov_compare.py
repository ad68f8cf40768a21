#!/usr/bin/env python3
"""ptcall cov's per-input and union function sets against llvm-cov's, on the same inputs.

For every input of an AFL++ output directory (queue, crashes, hangs):
  - ptcall: `ptcall cov run --afl DIR -- PTCALL_TARGET @@` (early placement: source-level
    functions), then `ptcall cov report --format json`: the functions each input reached;
  - llvm-cov: LLVM_TARGET (clang -fprofile-instr-generate -fcoverage-mapping) run on the
    input, `llvm-profdata merge`, `llvm-cov export -format=text`: the functions whose
    execution count is non-zero.
Functions are keyed `source-file-basename:name` on both sides: llvm-cov names a static
function `file.c:name` and gives its files (the first is the function's own), ptcall has the
linkage name and the file (static functions of the same name in two files, such as zlib's
fixedtables in inflate.c and infback.c, stay apart). Any difference fails, printed per input with the functions and
which side has them, unless EXPECTED explains it by name and cause.

usage: llvmcov_compare.py --ptcall PTCALL --ptcall-target BIN --llvm-target BIN --afl DIR
                          --work DIR [--llvm-profdata P] [--llvm-cov C] [--timeout MS]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

# the LLVM release ptcall was built for (ctest sets it; docs/pass.md, LLVM versions)
LLVM_BIN = os.environ.get("PTCALL_LLVM_BIN", "/usr/lib/llvm-14/bin")

# Functions the two tools may disagree on, with why. Empty: on this harness and zlib 1.2.13
# (-O1, early placement) the sets are equal for every input; a name appearing here must say
# the cause (docs/cov.md, "Checked against llvm-cov").
EXPECTED = {}


def key(path, name):
    return "%s:%s" % (os.path.basename(path), name)


def llvm_sets(args, inputs):
    """{input name: set of functions with a non-zero count} from llvm-cov export."""
    work = os.path.join(args.work, "llvm")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    sets = {}
    for i, (name, path) in enumerate(inputs):
        raw = os.path.join(work, "%d.profraw" % i)
        prof = os.path.join(work, "%d.profdata" % i)
        env = dict(os.environ, LLVM_PROFILE_FILE=raw)
        try:
            subprocess.run([args.llvm_target, path], env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=args.timeout / 1000.0)
        except subprocess.TimeoutExpired:
            pass  # a hang: killed, like ptcall's run; it wrote no profile (see below)
        if not os.path.exists(raw):
            # crashes and hangs write no profile (the runtime writes at exit): no set
            sets[name] = None
            continue
        subprocess.run([args.llvm_profdata, "merge", "-sparse", "-o", prof, raw], check=True)
        out = subprocess.run([args.llvm_cov, "export", "-format=text", "-skip-expansions",
                              "-instr-profile", prof, args.llvm_target], check=True,
                             capture_output=True, text=True).stdout
        fs = json.loads(out)["data"][0]["functions"]
        sets[name] = {key(f["filenames"][0], f["name"].split(":", 1)[-1])
                      for f in fs if f["count"] > 0}
        os.unlink(raw)
        os.unlink(prof)
    return sets


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ptcall", required=True)
    ap.add_argument("--ptcall-target", required=True)
    ap.add_argument("--llvm-target", required=True)
    ap.add_argument("--afl", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--llvm-profdata", default=os.path.join(LLVM_BIN, "llvm-profdata"))
    ap.add_argument("--llvm-cov", default=os.path.join(LLVM_BIN, "llvm-cov"))
    ap.add_argument("--timeout", type=int, default=1000)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    ptcov = os.path.join(args.work, "zlib.ptcov")
    subprocess.run([args.ptcall, "cov", "run", "--timeout", str(args.timeout), "-o", ptcov,
                    "--afl", args.afl, "--", args.ptcall_target, "@@"], check=True)
    rep = json.loads(subprocess.run([args.ptcall, "cov", "report", "--format", "json", ptcov],
                                    check=True, capture_output=True, text=True).stdout)
    names = [key(f["file"], f["linkage_name"]) for f in rep["functions"]]
    ours = {}
    inputs = []
    for inp in rep["inputs"]:
        ours[inp["name"]] = (inp, {names[i] for i in inp["functions"]})
        inputs.append((inp["name"], os.path.join(args.afl, inp["name"])))
    if len(inputs) < 50:
        print("FAIL: only %d inputs in %s" % (len(inputs), args.afl))
        return 1
    theirs = llvm_sets(args, inputs)

    bad = 0
    compared = 0
    union_ours, union_theirs = set(), set()
    explained = {}
    for name, _ in inputs:
        inp, a = ours[name]
        b = theirs[name]
        if b is None:
            # no profile: llvm-cov cannot say; ptcall still has the counts up to the crash
            if inp["outcome"] == "exited":
                print("FAIL: %s exited (%d) but wrote no profile" % (name, inp["value"]))
                bad += 1
            continue
        compared += 1
        union_ours |= a
        union_theirs |= b
        only_a = {f for f in a - b if f not in EXPECTED}
        only_b = {f for f in b - a if f not in EXPECTED}
        for f in (a ^ b) & set(EXPECTED):
            explained[f] = explained.get(f, 0) + 1
        if only_a or only_b:
            bad += 1
            if bad <= 20:
                print("DIFF %s: only ptcall: %s; only llvm-cov: %s" %
                      (name, sorted(only_a), sorted(only_b)))
    ua = {f for f in union_ours - union_theirs if f not in EXPECTED}
    ub = {f for f in union_theirs - union_ours if f not in EXPECTED}
    if ua or ub:
        bad += 1
        print("DIFF union: only ptcall: %s; only llvm-cov: %s" % (sorted(ua), sorted(ub)))
    for f, n in sorted(explained.items()):
        print("explained: %s differs on %d inputs: %s" % (f, n, EXPECTED[f]))
    print("%d inputs (%d compared: the others crashed or hung, llvm-cov has no profile for "
          "them), union %d functions (ptcall) / %d (llvm-cov), of %d instrumented; %d differ"
          % (len(inputs), compared, len(union_ours), len(union_theirs), len(names), bad))
    if compared < 50:
        print("FAIL: too few inputs compared")
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
