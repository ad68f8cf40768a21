#!/usr/bin/env python3
"""ptcall cov's per-input and union function sets, and line coverage, against llvm-cov's,
on the same inputs.

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

Lines (the ptcall target built with -fptcall-cov: block counters, map version 7): per input,
the source lines both attribute -- lines llvm-cov has a count for (its lcov export's DA
records) and ptcall has a block for -- must be covered on both sides or on neither. How many
lines each attributes, and those only one does, are printed (docs/cov.md, "Checked against
llvm-cov").

usage: llvmcov_compare.py --ptcall PTCALL --ptcall-target BIN --llvm-target BIN --afl DIR
                          --work DIR [--llvm-profdata P] [--llvm-cov C] [--timeout MS]
"""
import argparse
import json
import os
import re
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


def lcov_lines(text):
    """{(path, line): count} of an lcov tracefile (SF and DA records)."""
    out, sf = {}, None
    for ln in text.splitlines():
        if ln.startswith("SF:"):
            sf = ln[3:]
        elif ln.startswith("DA:") and sf is not None:
            line, count = ln[3:].split(",")[:2]
            out[(sf, int(line))] = int(count)
    return out


def llvm_sets(args, inputs, lines=None):
    """{input name: set of functions with a non-zero count} from llvm-cov export; with lines,
    also {input name: {(path, line): count}} (llvm-cov's line coverage)."""
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
        if lines is not None:
            lines[name] = lcov_lines(subprocess.run(
                [args.llvm_cov, "export", "-format=lcov", "-instr-profile", prof,
                 args.llvm_target], check=True, capture_output=True, text=True).stdout)
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
    ap.add_argument("--lines", action="store_true",
                    help="compare line coverage too (a -fptcall-cov ptcall target)")
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
    blocks = rep.get("blocks")
    if args.lines and not blocks:
        print("FAIL: %s has no blocks and lines (was it built with -fptcall-cov?)" %
              args.ptcall_target)
        return 1
    their_lines = {} if args.lines else None
    theirs = llvm_sets(args, inputs, their_lines)

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
    if args.lines:
        bad += compare_lines(rep, blocks, their_lines)
    return 1 if bad else 0


# Lines the two tools disagree on for a cause that is not a line's kind (below), with why.
EXPECTED_LINES = {
    "deflate.c:1783": "llvm-cov shows 0 for the statement right after deflate_stored's "
                      "do-while loop (left by break) while the next line shows the loop's "
                      "count: the line ran (ptcall's block for it and for 1784 is one block)",
}
LABEL = re.compile(r"^(case\b.*|default|[A-Za-z_]\w*)\s*:$")


def code_lines_before(text, line):
    """The code lines before line (1-based), nearest first, comment lines skipped."""
    for i in range(line - 2, -1, -1):
        s = text[i].split("//")[0].strip()
        if not s or s.startswith("*") or s.startswith("/*") or s.endswith("*/"):
            continue
        yield s


def line_kind(path, line):
    """What a source line is, for the explanation of a difference: a line holding only a
    closing brace (its code is the end of a scope: cleanups, the jump out, which the two tools
    attribute differently), the continuation of a statement begun on an earlier line
    (llvm-cov counts a line covered when a region spanning it ran, even if the part on the line
    did not), or other."""
    try:
        with open(path, errors="replace") as f:
            text = f.read().split("\n")
    except OSError:
        return "source not found"
    s = text[line - 1].split("/*")[0].strip() if line - 1 < len(text) else ""
    if s.startswith("}"):
        return "closing brace"
    before = [p for p in code_lines_before(text, line) if not p.startswith("#")][:2]
    prev = before[0] if before else ""
    prev2 = before[1] if len(before) > 1 else ""
    # a label (case X:, default:, name:) begins a statement: the line before it ends one
    label = LABEL.match(prev) and (not prev2 or prev2[-1] in ";{}:")
    if prev and (prev[-1] not in ";{}:" or (prev[-1] == ":" and not label)):
        return "continuation of a statement"
    return "other"


def compare_lines(rep, blocks, their_lines):
    """Per input: on the lines both attribute, covered on both sides or on neither."""
    files = [f["file"] for f in blocks["files"]]
    table = blocks["table"]
    ptc_all = {(files[fi], ln) for b in table for fi, ln in b["lines"]}
    llvm_all = set()
    for d in their_lines.values():
        llvm_all |= set(d)
    both = ptc_all & llvm_all
    print("lines: ptcall attributes %d, llvm-cov %d, both %d (only ptcall %d, only llvm-cov %d)"
          % (len(ptc_all), len(llvm_all), len(both), len(ptc_all - llvm_all),
             len(llvm_all - ptc_all)))
    for what, extra in (("only ptcall", ptc_all - llvm_all), ("only llvm-cov", llvm_all - ptc_all)):
        sample = sorted(extra)[:12]
        print("  %s, e.g.: %s" % (what, ", ".join("%s:%d" % (os.path.basename(f), l)
                                               for f, l in sample)))
    bad = compared = equal = 0
    union_p, union_l = set(), set()
    diff_lines = {}  # (path, line, side) -> inputs
    unexplained = 0
    # per input, the lines both attribute less closing braces and continuation lines: the
    # lines whose code is the line's own, where both tools must agree
    strict_equal = 0
    for inp in rep["inputs"]:
        d = their_lines.get(inp["name"])
        if d is None:
            continue
        compared += 1
        bi = blocks["inputs"][inp["id"]]
        covered_p = {(files[fi], ln) for k in bi["reached"] for fi, ln in table[k]["lines"]}
        covered_l = {k for k, c in d.items() if c > 0}
        union_p |= covered_p & both
        union_l |= covered_l & both
        diff = (covered_p & both) ^ (covered_l & both)
        if all(line_kind(f, l) not in ("other", "source not found") or
               "%s:%d" % (os.path.basename(f), l) in EXPECTED_LINES for f, l in diff):
            strict_equal += 1
        for f, l in diff:
            k = (f, l, "ptcall" if (f, l) in covered_p else "llvm-cov")
            diff_lines[k] = diff_lines.get(k, 0) + 1
        if diff:
            bad += 1
            if bad <= 10:
                print("LINES DIFF %s: only ptcall covered: %s; only llvm-cov covered: %s" % (
                    inp["name"],
                    sorted("%s:%d" % (os.path.basename(f), l) for f, l in diff & covered_p)[:10],
                    sorted("%s:%d" % (os.path.basename(f), l) for f, l in diff & covered_l)[:10]))
        else:
            equal += 1
    kinds = {}
    for (f, l, side), n in sorted(diff_lines.items()):
        kind = line_kind(f, l)
        name = "%s:%d" % (os.path.basename(f), l)
        if kind == "other" and name in EXPECTED_LINES:
            kind = "explained: " + EXPECTED_LINES[name]
        elif kind == "other":
            unexplained += 1
        kinds[(kind, side)] = kinds.get((kind, side), 0) + 1
        print("  covered only by %s on %d inputs: %s:%d (%s)" % (side, n, os.path.basename(f),
                                                                  l, kind))
    for (kind, side), n in sorted(kinds.items()):
        print("lines covered only by %s: %d %s" % (side, n, kind))
    print("lines: %d of %d inputs cover the same of the %d lines both attribute; union %d "
          "(ptcall) / %d (llvm-cov) covered" % (equal, compared, len(both), len(union_p),
                                                len(union_l)))
    print("lines: %d of %d inputs cover the same lines once closing braces, continuation "
          "lines and the lines of EXPECTED_LINES are left out" % (strict_equal, compared))
    if unexplained:
        print("FAIL: %d lines differ for no known cause (above: 'other')" % unexplained)
    if len(both) < 0.5 * len(ptc_all) or compared < 50:
        print("FAIL: too few lines both attribute")
        return 1
    return 1 if unexplained or strict_equal != compared else 0


if __name__ == "__main__":
    sys.exit(main())
