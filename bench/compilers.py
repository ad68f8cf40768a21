#!/usr/bin/env python3
"""The same programs built by two LLVM releases (docs/pass.md, *LLVM versions*): do they give
the same events, and what does ptcall cost on each? bzip2, Lua 5.4 and SQLite (bench/run.py's
Debian-source workloads) are built with the ptcall-cc of each --build tree (its LLVM release
read from the tree's CMakeCache, else from `ptcall-cc --version`).

counts: each build, with PTCALL_PLACEMENT early and late (`-fptcall-placement=`), runs the
  workload once (twice, to see that a binary repeats itself) under `ptcall record --counts`
  (exact calls per function, docs/runtime.md *Counting mode*), and the per-function counts of
  the two releases are compared. Early placement counts source-level calls before inlining: the
  counts of every function both maps hold must be equal, and the script exits 1 when one
  differs without a listed reason. Late placement instruments what survives inlining: the
  functions whose counts differ, or that only one release kept, are listed with the reason the
  evidence gives (the function's early-placement count, whether the other binary still has the
  symbol (nm), compiler-generated clone suffixes).
costs: per release, the uninstrumented build (plain clang-N -O2), the untraced ptcall build and
  the armed run (`ptcall record`, soft backend, timestamps) in paired rounds (all six in each
  round, the order rotating; each time divided by the same release's uninstrumented time of
  the same round; medians of those ratios), and the instructions (valgrind callgrind, the
  smaller input) of the uninstrumented and untraced builds.

Lua is built with -Dluai_makeseed(L)=0u: its string-hash seed otherwise mixes time(NULL) and
the addresses of a local, the state and lua_newstate (ASLR and each binary's layout), so two
runs of one binary hash, and so call, differently; and with -Dl_randomizePivot()=0u: table.sort
otherwise reseeds its pivot choice from clock() and time() after an unbalanced partition. Writes the block between
<!-- compilers:begin/end --> in docs/benchmarks.md (--no-write: print only); the comparison's
full lists go to WORK/compilers.json.

usage: python3 bench/compilers.py --build build --build build-llvm19 [--runs 5] [--quick]
         [--only counts,costs] [--work DIR] [--no-write]
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# bench/run.py's workloads, builds and paired rounds: the script's own folder is first on
# sys.path, so its sibling imports as a module (its main() runs only as a script)
import run as R  # noqa: E402

PROGRAMS = ("bzip2", "lua", "sqlite")
PLACEMENTS = ("early", "late")
# suffixes LLVM (and GCC) give the copies of a function it makes: outlined cold parts, partial
# inlining, IPA-SRA, constant propagation, function specialisation, LTO renames
# (`foo.cold.1` in the symbol table and the report's linkage names, `foo (.cold.1)` in its names)
CLONE = re.compile(r" \(\.[^)]*\)$|\.(cold|part|isra|constprop|specialized|llvm|lto_priv|clone)(\.|$)")
# Lua's two sources of run-to-run variation (see the docstring), fixed
LUA_FLAGS = ["-Dl_randomizePivot()=0u", "-Dluai_makeseed(L)=0u"]
# Calls that depend on addresses, not on the compiler's inlining, read from the program's source:
# program -> (the functions, their caller whose source-level count must be equal on both
# releases for the reason to hold, the reason)
ADDRESS_DEPENDENT = {
    "lua": ({"luaS_newlstr", "internshrstr", "luaS_hash"}, "luaS_new",
            "luaS_new's string cache (lstring.c) is indexed by the C string's address modulo 53, so "
            "which of its calls miss and create the string (luaS_newlstr -> internshrstr -> luaS_hash) "
            "depends on where each binary puts its string constants and where it is loaded; luaS_new's "
            "own count is equal"),
}


class Tree:
    """One ptcall build tree: its tools and the LLVM release it was built for."""

    def __init__(self, path):
        self.dir = os.path.abspath(path)
        self.ptcall = os.path.join(self.dir, "tools", "ptcall")
        self.ptcc = os.path.join(self.dir, "bin", "ptcall-cc")
        for tool in (self.ptcall, self.ptcc):
            if not os.access(tool, os.X_OK):
                sys.exit("compilers: %s not found: build that tree first (PTCALL_LLVM=N scripts/build.sh)" % tool)
        self.llvm = self.release()
        self.clang = shutil.which("clang-%d" % self.llvm) or "/usr/lib/llvm-%d/bin/clang" % self.llvm
        if not os.access(self.clang, os.X_OK):
            sys.exit("compilers: clang-%d not found: the uninstrumented builds need it (scripts/setup.sh)" % self.llvm)
        self.name = "LLVM %d" % self.llvm

    def release(self):
        cache = os.path.join(self.dir, "CMakeCache.txt")
        if os.path.exists(cache):
            m = re.search(r"^PTCALL_LLVM_MAJOR_CACHED:\w+=(\d+)$", open(cache).read(), re.M)
            if m:
                return int(m.group(1))
        m = re.search(r"clang version (\d+)\.", R.sh([self.ptcc, "--version"]))
        if not m:
            sys.exit("compilers: cannot tell the LLVM release of %s (no PTCALL_LLVM_MAJOR_CACHED in its "
                     "CMakeCache.txt, no 'clang version' from ptcall-cc --version)" % self.dir)
        return int(m.group(1))


def build(cc, wl, extra, out, deps=()):
    """R.build, tried three times a minute apart: a tree whose plugin is being rebuilt fails for
    a moment, and the compile is what fails then, not the workload."""
    for attempt in range(3):
        try:
            return R.build(cc, wl, extra, [], out, deps=deps)
        except SystemExit as e:
            if attempt == 2:
                raise
            print("compilers: build of %s failed, retrying in 60 s (%s)" % (out, str(e).splitlines()[0]),
                  file=sys.stderr)
            time.sleep(60)


def binaries(wl, work, tree):
    d = os.path.join(work, wl.name, "llvm%d" % tree.llvm)
    deps = R.ptcall_deps(tree.dir)
    return {"base": build(tree.clang, wl, [], os.path.join(d, "base")),
            "early": build(tree.ptcc, wl, ["-fptcall-placement=early"], os.path.join(d, "ptcall-early"), deps),
            "late": build(tree.ptcc, wl, ["-fptcall-placement=late"], os.path.join(d, "ptcall-late"), deps)}


def base_name(name):
    m = CLONE.search(name)
    return name[:m.start()] if m else name


def counts_run(tree, exe, args, cwd, out):
    """Calls per function of one counting-mode run, by name (static functions of one name in
    several files are summed), with the functions the map holds that were never called as 0."""
    if os.path.exists(out):
        os.unlink(out)
    cmd = [tree.ptcall, "record", "-q", "--counts", "-o", out, "--", exe] + args
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=cwd)  # bzip2 -c: binary
    if r.returncode != 0:
        sys.exit("compilers: %s exited %d\n%s" % (" ".join(cmd), r.returncode, r.stderr.decode(errors="replace")[-2000:]))
    rep = json.loads(R.sh([tree.ptcall, "report", out, "--format", "json", "--top", "0"]))
    os.unlink(out)
    if not rep["totals"].get("complete", True):
        sys.exit("compilers: the counts of %s are incomplete (%s)" % (exe, out))
    calls = {}
    for f in rep["functions"]:
        n = f.get("linkage_name") or f["name"]  # the symbol's own name, as nm shows it
        calls[n] = calls.get(n, 0) + int(f["calls"])
    for n in rep["uncalled"]:
        calls.setdefault(n, 0)
    return calls


def symbols(exe):
    """The function names an executable defines, clones included."""
    out = R.sh(["nm", "--defined-only", exe])
    return {p[2] for p in (line.split() for line in out.splitlines()) if len(p) == 3 and p[1] in "tTwW"}


def merge_clones(calls):
    """Counts by source function: a clone's calls are its origin's, and the clones are named."""
    merged, clones = {}, {}
    for n, c in calls.items():
        b = base_name(n)
        merged[b] = merged.get(b, 0) + c
        if b != n:
            clones.setdefault(b, []).append(n)
    return merged, clones


def compare(a, b, early, program):
    """Per function, the counts of runs a and b (dicts of tree, calls, repeat, symbols), with a
    reason for every difference; early: the early-placement counts of the same two trees (for
    the late comparison's reasons), or None for the early comparison itself."""
    ca, cla = merge_clones(a["calls"])
    cb, clb = merge_clones(b["calls"])
    va = {base_name(n) for n, c in a["calls"].items() if a["repeat"].get(n) != c}
    vb = {base_name(n) for n, c in b["calls"].items() if b["repeat"].get(n) != c}
    sa, sb = {base_name(s) for s in a["symbols"]}, {base_name(s) for s in b["symbols"]}
    na, nb = a["tree"].name, b["tree"].name
    equal, differ, only = [], [], []
    src = early or {"a": ca, "b": cb}  # source-level counts
    addr_funcs, addr_caller, addr_why = ADDRESS_DEPENDENT.get(program, (set(), None, None))
    for f in sorted(set(ca) | set(cb)):
        reasons = []
        if f in va or f in vb:
            reasons.append("its count varies between two runs of the %s binary"
                           % " and the ".join(x for x, v in ((na, va), (nb, vb)) if f in v))
        for x, cl in ((na, cla), (nb, clb)):
            if f in cl:
                reasons.append("%s made %s (counted with it)" % (x, ", ".join(sorted(cl[f]))))
        e = (early["a"].get(f), early["b"].get(f)) if early else (None, None)
        if f in ca and f in cb:
            if ca[f] == cb[f]:
                equal.append(f)
                continue
            if (f in addr_funcs and src["a"].get(addr_caller) is not None
                    and src["a"].get(addr_caller) == src["b"].get(addr_caller)):
                reasons.append(addr_why)
            if early and e[0] is not None and e[0] == e[1]:
                if max(ca[f], cb[f]) == e[0]:
                    low = na if ca[f] < cb[f] else nb
                    reasons.append("%s inlined it into some callers: %d of its %d source-level calls "
                                   "(early placement) were inlined" % (low, e[0] - min(ca[f], cb[f]), e[0]))
                elif max(ca[f], cb[f]) < e[0]:
                    reasons.append("both inlined it into some callers, at different sites: %d source-level "
                                   "calls (early placement)" % e[0])
            differ.append({"function": f, "a": ca[f], "b": cb[f], "early": e[0] if early else None,
                           "reasons": reasons})
            continue
        has, lacks, c, lsyms = (na, nb, ca[f], sb) if f in ca else (nb, na, cb[f], sa)
        if f in lsyms:
            reasons.append("%s's binary has the symbol but its map does not list it" % lacks)
        elif early:
            ec = e[1] if f in ca else e[0]  # the lacking release's own early count
            if ec is None:
                reasons.append("not in %s's binary nor its early map: not emitted (unused)" % lacks)
            elif ec > 0:
                reasons.append("%s inlined it everywhere (%d source-level calls, early placement; no symbol)"
                               % (lacks, ec))
            else:
                reasons.append("%s removed it (never called, early placement; no symbol)" % lacks)
        else:
            reasons.append("not in %s's binary (no symbol)" % lacks)
        only.append({"function": f, "kept_by": has, "calls": c, "reasons": reasons})
    return {"equal": equal, "differ": differ, "only": only}


def counts_section(wl, work, trees, bins):
    """The early and late comparisons of one program."""
    cwd = os.path.join(work, wl.name)
    runs = {}
    for pl in PLACEMENTS:
        for t in trees:
            exe = bins[t.llvm][pl]
            out = os.path.join(cwd, "counts-llvm%d-%s.ptc" % (t.llvm, pl))
            first = counts_run(t, exe, wl.args, cwd, out)
            runs[(pl, t.llvm)] = {"tree": t, "calls": first, "repeat": counts_run(t, exe, wl.args, cwd, out),
                                  "symbols": symbols(exe)}
        print("compilers: %s counts, %s placement done" % (wl.name, pl), file=sys.stderr)
    a, b = trees
    res = {}
    res["early"] = compare(runs[("early", a.llvm)], runs[("early", b.llvm)], None, wl.name)
    ea = merge_clones(runs[("early", a.llvm)]["calls"])[0]
    eb = merge_clones(runs[("early", b.llvm)]["calls"])[0]
    res["late"] = compare(runs[("late", a.llvm)], runs[("late", b.llvm)], {"a": ea, "b": eb}, wl.name)
    for pl in PLACEMENTS:
        res[pl]["calls"] = {t.name: sum(runs[(pl, t.llvm)]["calls"].values()) for t in trees}
        res[pl]["functions"] = {t.name: len(runs[(pl, t.llvm)]["calls"]) for t in trees}
    return res


def costs_section(wl, work, trees, bins, rounds):
    """Paired rounds of the uninstrumented, untraced and armed runs of every release."""
    cwd = os.path.join(work, wl.name)
    cont = []
    for t in trees:
        trace = os.path.join(cwd, "armed-llvm%d.ptc" % t.llvm)
        cont += [(t, "uninstrumented", [bins[t.llvm]["base"]] + wl.args, None),
                 (t, "ptcall untraced", [bins[t.llvm]["late"]] + wl.args, None),
                 (t, "ptcall armed (soft, timestamps)",
                  [t.ptcall, "record", "-q", "-o", trace, "--", bins[t.llvm]["late"]] + wl.args, trace)]
    wall = {(t.llvm, n): [] for t, n, _, _ in cont}
    cpu = {(t.llvm, n): [] for t, n, _, _ in cont}
    for r in range(rounds):
        got = {}
        for t, n, cmd, trace in cont[r % len(cont):] + cont[:r % len(cont)]:
            if trace and os.path.exists(trace):
                os.unlink(trace)
            got[(t.llvm, n)] = R.wall_and_cpu(cmd, cwd)
        for t, n, _, _ in cont:
            b = got[(t.llvm, "uninstrumented")]
            wall[(t.llvm, n)].append(got[(t.llvm, n)][0] / b[0])
            cpu[(t.llvm, n)].append(got[(t.llvm, n)][1] / max(b[1], 1e-9))
        print("compilers: %s costs round %d/%d done" % (wl.name, r + 1, rounds), file=sys.stderr)
    for t, n, _, trace in cont:
        if trace and os.path.exists(trace):
            os.unlink(trace)
    res = {}
    for t in trees:
        rows = {}
        for _, n, _, _ in cont[:3]:
            rows[n] = {"wall": R.quartiles(wall[(t.llvm, n)]), "cpu": R.quartiles(cpu[(t.llvm, n)])}
        for n, key in (("uninstrumented", "base"), ("ptcall untraced", "late")):
            rows[n]["instructions"] = R.instructions(bins[t.llvm][key], wl.small_args, cwd)
        res[t.name] = rows
    return res


def fmt_list(items, fmt):
    return "; ".join(fmt(x) for x in items) if items else "none"


def report(a, trees, progs, info):
    na, nb = trees[0].name, trees[1].name
    cmd = "python3 bench/compilers.py " + " ".join("--build %s" % p for p in a.build_args)
    cmd += "".join((" --quick" if a.quick else "", " --runs %d" % a.runs if a.runs != 5 else "",
                    " --only " + a.only if a.only else ""))
    lines = ["`%s` (%s, %s; load average %.2f at the start, %.2f at the end; %s). %s built by `%s` "
             "and `%s` (ptcall trees `%s`, `%s`)." %
             (cmd, time.strftime("%Y-%m-%d"), R.machine(), info["load"][0], info["load"][1],
              R.duration(info["elapsed_s"]), "Programs (bench/run.py's workloads%s)" % (", small inputs" if a.quick else ""),
              trees[0].clang, trees[1].clang, trees[0].dir, trees[1].dir), ""]
    for wl, r in progs:
        lines.append("- %s: `%s`" % (wl.desc, wl.cmd_desc))
    lines.append("")
    if any("counts" in r for _, r in progs):
        lines.append("### Calls per function (`ptcall record --counts`), %s beside %s\n" % (na, nb))
        lines.append("Each binary ran twice; *equal*: functions both maps hold with the same count (both runs); "
                     "*differ*: both hold it, counts differ; *only*: one map holds it. Clones (`.cold`, "
                     "`.part`, `.specialized` ...) count as their origin.\n")
        lines.append("| program | placement | functions %s / %s | calls %s / %s | equal | differ | differ without a reason | only %s | only %s |"
                     % (na, nb, na, nb, na, nb))
        lines.append("|---|---|---:|---:|---:|---:|---:|---:|---:|")
        for wl, r in progs:
            for pl in PLACEMENTS:
                c = r["counts"][pl]
                lines.append("| %s | %s | %d / %d | %d / %d | %d | %d | %d | %d | %d |" % (
                    wl.name, pl, c["functions"][na], c["functions"][nb], c["calls"][na], c["calls"][nb],
                    len(c["equal"]), len(c["differ"]), sum(1 for d in c["differ"] if not d["reasons"]),
                    sum(1 for o in c["only"] if o["kept_by"] == na), sum(1 for o in c["only"] if o["kept_by"] == nb)))
        lines.append("")
        for wl, r in progs:
            for pl in PLACEMENTS:
                c = r["counts"][pl]
                if not c["differ"] and not c["only"]:
                    continue
                lines.append("<details><summary>%s, %s placement: %d differ, %d only one kept</summary>\n"
                             % (wl.name, pl, len(c["differ"]), len(c["only"])))
                for d in c["differ"]:
                    lines.append("- `%s`: %s %d, %s %d%s — %s" % (
                        d["function"], na, d["a"], nb, d["b"],
                        "" if d["early"] is None else " (early %d)" % d["early"],
                        "; ".join(d["reasons"]) or "**no reason found**"))
                for o in sorted(c["only"], key=lambda o: (o["kept_by"], -o["calls"], o["function"])):
                    lines.append("- `%s`: only %s, %d calls — %s" % (o["function"], o["kept_by"], o["calls"],
                                                                 "; ".join(o["reasons"])))
                lines.append("\n</details>\n")
    if any("costs" in r for _, r in progs):
        rounds = info["rounds"]
        lines.append("### Untraced and armed costs per release\n")
        lines.append("%d paired rounds: each round runs the six contestants (three per release) back to back, "
                     "the order rotating between rounds, and divides each time by the same release's "
                     "uninstrumented time of that round; a cell is the median of those per-round ratios "
                     "(first–third quartile). Instructions: one run on the smaller input under "
                     "`valgrind --tool=callgrind`.\n" % rounds)
        lines.append("| program | release | contestant | wall ÷ uninstrumented (q1–q3) | CPU ÷ uninstrumented (q1–q3) | "
                     "instructions (smaller input) | ÷ uninstrumented |")
        lines.append("|---|---|---|---|---|---:|---:|")
        for wl, r in progs:
            for i, t in enumerate(trees):
                rows = r["costs"][t.name]
                base_ins = rows["uninstrumented"]["instructions"]
                for j, (n, x) in enumerate(rows.items()):
                    ins = x.get("instructions")
                    lines.append("| %s | %s | %s | %.3f (%.3f–%.3f) | %.3f (%.3f–%.3f) | %s | %s |" % (
                        wl.name if i == 0 and j == 0 else "", t.name if j == 0 else "", n,
                        x["wall"][1], x["wall"][0], x["wall"][2], x["cpu"][1], x["cpu"][0], x["cpu"][2],
                        ins if ins else "", "%.4f" % (ins / base_ins) if ins else ""))
        lines.append("")
        lines.append("Between releases, uninstrumented: %s.\n" % "; ".join(
            "%s %s executes %.4f× the instructions of %s" % (
                wl.name, nb, r["costs"][nb]["uninstrumented"]["instructions"]
                / r["costs"][na]["uninstrumented"]["instructions"], na) for wl, r in progs))
        lines.append("Smaller inputs for the instruction counts: %s.\n"
                     % "; ".join("%s %s" % (wl.name, wl.small_desc) for wl, _ in progs))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", action="append", default=[], help="a ptcall build tree (twice)")
    ap.add_argument("--runs", type=int, default=5, help="paired rounds: bench/run.py's rule (max(2N+1, 15))")
    ap.add_argument("--quick", action="store_true", help="small inputs, 3 paired rounds (a few minutes)")
    ap.add_argument("--only", default="", help="counts, costs, or both (default)")
    ap.add_argument("--work", default=os.path.join(ROOT, "build-compilers"),
                    help="where the workloads are fetched and built (default: ./build-compilers)")
    ap.add_argument("--no-write", action="store_true")
    a = ap.parse_args()
    a.build_args = a.build or ["build", "build-llvm19"]
    trees = [Tree(p) for p in a.build_args]
    if len(trees) != 2 or trees[0].llvm == trees[1].llvm:
        sys.exit("compilers: give two --build trees of different LLVM releases (got %s)"
                 % ", ".join("%s (LLVM %d)" % (t.dir, t.llvm) for t in trees))
    want = set(a.only.split(",")) if a.only else {"counts", "costs"}
    if want - {"counts", "costs"}:
        sys.exit("compilers: --only takes counts, costs or both")
    work = os.path.abspath(a.work)
    os.makedirs(work, exist_ok=True)
    wdir = os.path.join(ROOT, "bench", "workloads")
    rounds = 3 if a.quick else R.paired_rounds(a.runs)
    t0, load0 = time.time(), os.getloadavg()[0]
    progs = []
    for wl in R.workloads_for(argparse.Namespace(quick=a.quick), work, wdir, set(PROGRAMS)):
        if wl.name == "lua":
            wl.cflags.extend(LUA_FLAGS)
        bins = {t.llvm: binaries(wl, work, t) for t in trees}
        r = {}
        if "counts" in want:
            r["counts"] = counts_section(wl, work, trees, bins)
        if "costs" in want:
            r["costs"] = costs_section(wl, work, trees, bins, rounds)
        progs.append((wl, r))
    info = {"load": (load0, os.getloadavg()[0]), "elapsed_s": time.time() - t0, "rounds": rounds}
    with open(os.path.join(work, "compilers.json"), "w") as f:
        json.dump({"info": info, "trees": [{"dir": t.dir, "llvm": t.llvm} for t in trees],
                   "programs": {wl.name: r for wl, r in progs}}, f, indent=1)
    text = report(a, trees, progs, info)
    print(text)
    if not a.no_write:
        R.replace_block(os.path.join(ROOT, "docs", "benchmarks.md"), "compilers", text)
    bad = [(wl.name, d["function"]) for wl, r in progs if "counts" in r
           for d in r["counts"]["early"]["differ"] if not d["reasons"]]
    if bad:
        sys.exit("compilers: early placement: %d function(s) both releases keep differ in count without a "
                 "reason: %s" % (len(bad), ", ".join("%s:%s" % x for x in bad[:20])))


if __name__ == "__main__":
    main()
