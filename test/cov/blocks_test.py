#!/usr/bin/env python3
"""Blocks and lines of `ptcall cov` (docs/cov.md, "Blocks and lines") on test/cov/cov_target.c
built with `ptcall-cc -O1 -fptcall-cov` (no -g: the wrapper adds the line table).

The target's input picks its path, so each input's source lines are known from its source:
'a' runs the line calling f_a and f_a's line, not f_b's; 'b' the reverse; 'x' the `return 3`
line; 'c' the crash call and crash's line (then SIGSEGV); 'z' none of them. Checked per input
with the fork server and with --exec: the lines reached, block counts (each reached block
ran once: the target has no loop), that blocks reached imply their functions, the union
and per-file figures, the JSON against docs/schema/cov-report.schema.json, the lcov
tracefile read by genhtml (its index.html figures equal the report's), the .ptcov round trip
(BLOCKS and INPUT_BLOCKS records) and every flipped bit of it refused, a plain ptcall-cc build
without block counters (no "blocks" in the report, lcov refused with one line), and map
version 8 in the binary (version 7 brought the blocks).

usage: blocks_test.py BUILD_DIR SOURCE_DIR WORK_DIR
"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys

from covcheck import check, failures, line_of, run  # test/cov/covcheck.py, beside this script


def map_header(path):
    """(version, flags) of the first ptcall_map blob of an ELF file."""
    data = open(path, "rb").read()
    i = data.find(b"PTCM")
    magic, version, hsize, total, flags = struct.unpack_from("<IHHII", data, i)
    return version, flags


def main():
    build, src, work = (os.path.abspath(a) for a in sys.argv[1:4])
    ptcall = os.path.join(build, "tools", "ptcall")
    cc = os.path.join(build, "bin", "ptcall-cc")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    os.chdir(work)
    target_c = os.path.join(src, "test", "cov", "cov_target.c")
    text = open(target_c).read().split("\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PTCALL_")}
    env.update({k: os.environ[k] for k in ("PTCALL_LLVM_BIN",) if k in os.environ})
    r = run([cc, "-O1", "-fptcall-cov", target_c, "-o", "target"], env=env)
    if not check(r.returncode == 0, "ptcall-cc -fptcall-cov builds the target: " + r.stderr):
        return 1
    subprocess.run([cc, "-O1", target_c, "-o", "plain"], check=True, env=env)
    v, flags = map_header("target")
    check(v == 8 and flags & 0x100 and flags & 0x1,
          "a -fptcall-cov build has map version 8 with BLOCKS and EARLY (%d, %#x)" % (v, flags))
    v, flags = map_header("plain")
    check(not flags & 0x100, "a plain ptcall-cc build has no block counters (%#x)" % flags)

    L = {
        "call_a": line_of(text, "r = f_a("),
        "call_b": line_of(text, "r = f_b("),
        "ret3": line_of(text, "return 3;"),
        "call_crash": line_of(text, "        crash();"),
        "f_a": line_of(text, "static int f_a"),
        "f_b": line_of(text, "static int f_b"),
        "crash": line_of(text, "static void crash"),
        "hang": line_of(text, "static void hang"),
        "if_a": line_of(text, "b[0] == 'a')"),
    }
    # which of those lines each input runs (main's tests of b[0] run in every input up to
    # the crash)
    want = {
        "in_a": {"call_a", "f_a", "if_a"},
        "in_b": {"call_b", "f_b", "if_a"},
        "in_x": {"ret3", "if_a"},
        "in_z": {"if_a"},
        "in_c": {"call_crash", "crash", "if_a"},
    }
    os.makedirs("corpus")
    for name in want:
        with open(os.path.join("corpus", name), "w") as f:
            f.write(name[3])

    try:
        import jsonschema
    except ImportError:
        jsonschema = None
        print("note: python3-jsonschema missing: the JSON output is not validated")

    reports = {}
    for mode in ([], ["--exec"]):
        tag = "exec" if mode else "fsrv"
        out = "%s.ptcov" % tag
        r = run([ptcall, "cov", "run", "-o", out, "--corpus", "corpus"] + mode + ["--", "./target"])
        if not check(r.returncode == 0, "%s: cov run: %s" % (tag, r.stderr)):
            continue
        r = run([ptcall, "cov", "report", "--format", "json", out])
        if not check(r.returncode == 0, "%s: cov report json: %s" % (tag, r.stderr)):
            continue
        rep = json.loads(r.stdout)
        reports[tag] = rep
        if jsonschema:
            with open(os.path.join(src, "docs", "schema", "cov-report.schema.json")) as f:
                jsonschema.validate(rep, json.load(f))
        b = rep.get("blocks")
        if not check(b is not None, "%s: the report has blocks and lines" % tag):
            continue
        files = [f["file"] for f in b["files"]]
        check(files == [target_c], "%s: the lines are in %s: %s" % (tag, target_c, files))
        funcs = {f["id"]: f["name"] for f in rep["functions"]}
        for inp in rep["inputs"]:
            name = os.path.basename(inp["name"])
            bi = b["inputs"][inp["id"]]
            lines = {ln for k in bi["reached"] for _, ln in b["table"][k]["lines"]}
            for key, ln in L.items():
                if key in ("hang",):
                    check(ln not in lines, "%s: %s reached hang's line" % (tag, name))
                    continue
                should = key in want[name]
                check((ln in lines) == should, "%s: %s %s line %d (%s)" % (
                    tag, name, "did not reach" if should else "reached", ln, key))
            check(bi["lines"] == len(lines), "%s: %s counts %d lines, its blocks hold %d" % (
                tag, name, bi["lines"], len(lines)))
            check(bi["blocks"] == len(bi["reached"]) and bi["blocks"] > 0,
                  "%s: %s blocks %d" % (tag, name, bi["blocks"]))
            check(all(c == 1 for c in bi["counts"]),
                  "%s: %s: every block ran once (no loops): %s" % (tag, name, bi["counts"]))
            # a block reached implies its function reached
            bf = {b["table"][k]["function"] for k in bi["reached"]}
            check(bf == set(inp["functions"]), "%s: %s: the blocks' functions %s are the "
                  "functions reached %s" % (tag, name, sorted(funcs[i] for i in bf),
                                           sorted(funcs[i] for i in inp["functions"])))
        # the union
        reached = sum(1 for t in b["table"] if t["inputs"])
        check(b["reached"] == reached, "%s: union blocks %d, table %d" % (tag, b["reached"],
                                                                           reached))
        covered = {(l["file"], l["line"]) for l in b["lines_list"] if l["inputs"]}
        check(b["lines_reached"] == len(covered), "%s: union lines" % tag)
        check((0, L["hang"]) not in covered and (0, L["f_a"]) in covered,
              "%s: union covers f_a's line, not hang's" % tag)
        check(b["lines"] > b["lines_reached"] > 0, "%s: some lines never reached" % tag)
        # per function: main reached but not all its blocks; hang none
        per = {f["function"]: f for f in b["functions"]}
        main_id = [i for i, n in funcs.items() if n == "main"][0]
        check(0 < per[main_id]["reached"] < per[main_id]["blocks"],
              "%s: main: some blocks never reached" % tag)

    if "fsrv" in reports and "exec" in reports:
        a, e = reports["fsrv"]["blocks"], reports["exec"]["blocks"]
        check(a["inputs"] == e["inputs"] and a["table"] == e["table"],
              "fork server and --exec give the same blocks per input")

    # the table view's section
    r = run([ptcall, "cov", "report", "fsrv.ptcov"])
    check("blocks reached:" in r.stdout and "where the fuzzer stops" in r.stdout,
          "the table has the blocks-and-lines section")

    # lcov for genhtml
    r = run([ptcall, "cov", "report", "--format", "lcov", "fsrv.ptcov"])
    check(r.returncode == 0 and "end_of_record" in r.stdout, "lcov written: " + r.stderr)
    with open("cov.info", "w") as f:
        f.write(r.stdout)
    da = [tuple(map(int, m.groups())) for m in re.finditer(r"^DA:(\d+),(\d+)$", r.stdout, re.M)]
    b = reports.get("fsrv", {}).get("blocks", {})
    check(len(da) == b.get("lines") and sum(1 for _, c in da if c) == b.get("lines_reached"),
          "lcov DA records match the report's lines")
    check(("FNDA:0,hang" in r.stdout) and ("FNDA:5,main" in r.stdout),
          "lcov FNDA: hang 0 calls, main 5")
    genhtml = shutil.which("genhtml")
    if check(genhtml is not None, "genhtml (Debian's lcov package) is installed"):
        g = run([genhtml, "-q", "-o", "html", "cov.info"])
        check(g.returncode == 0 and not g.stderr.strip(), "genhtml reads it: " + g.stderr)
        if os.path.exists("html/index.html"):
            idx = open("html/index.html").read()
            nums = re.findall(r'headerCovTableEntry[A-Za-z]*">([0-9.]+)', idx)
            check(nums[:2] == [str(b.get("lines_reached")), str(b.get("lines"))],
                  "genhtml's index.html: lines %s, want %s of %s" % (
                      nums[:2], b.get("lines_reached"), b.get("lines")))

    # .ptcov: every flipped bit of a file with BLOCKS and INPUT_BLOCKS records is refused
    flip = os.path.join(build, "test", "cov", "ptcov_flip")
    if os.path.exists(flip):
        r = run([flip, "fsrv.ptcov"])
        check(r.returncode == 0, "ptcov_flip: every flipped bit refused: " + r.stdout[-500:])

    # a plain build: no blocks in the report, lcov refused with one line
    r = run([ptcall, "cov", "run", "-o", "plain.ptcov", "--allow-late", "--corpus", "corpus", "--",
             "./plain"])
    check(r.returncode == 0, "plain: cov run")
    rep = json.loads(run([ptcall, "cov", "report", "--format", "json", "plain.ptcov"]).stdout)
    check("blocks" not in rep, "plain: no blocks in the report")
    r = run([ptcall, "cov", "report", "--format", "lcov", "plain.ptcov"])
    check(r.returncode == 1 and "-fptcall-cov" in r.stderr and r.stderr.count("\n") == 1,
          "plain: lcov refused with one line: " + r.stderr)

    # a libFuzzer-style harness through ptcall's driver: with -fptcall-cov it runs one input
    # per fork-server child (its batches' trace holds functions only), so its blocks count;
    # its function sets are the batch path's (the same harness without blocks)
    harness = os.path.join(src, "test", "cov", "cov_harness.c")
    r = run([cc, "-O1", "-fptcall-cov", "-fptcall-fuzz-driver", harness, "-o", "harness"],
            env=env)
    r2 = run([cc, "-O1", "-fptcall-placement=early", "-fptcall-fuzz-driver", harness, "-o",
              "harness-fn"], env=env)
    if check(r.returncode == 0 and r2.returncode == 0, "harness builds: " + r.stderr + r2.stderr):
        r = run([ptcall, "cov", "run", "-o", "h.ptcov", "--corpus", "corpus", "--", "./harness"])
        check(r.returncode == 0 and "fork server" in r.stderr,
              "driver with blocks: one input per fork-server child: " + r.stderr)
        r = run([ptcall, "cov", "run", "-o", "hf.ptcov", "--corpus", "corpus", "--",
                 "./harness-fn"])
        check(r.returncode == 0 and "batches" in r.stderr,
              "driver without blocks: batches: " + r.stderr)
        rep = json.loads(run([ptcall, "cov", "report", "--format", "json", "h.ptcov"]).stdout)
        fn = json.loads(run([ptcall, "cov", "report", "--format", "json", "hf.ptcov"]).stdout)

        def fsets(doc):
            names = {f["id"]: f["name"] for f in doc["functions"]}
            return {i["name"]: ({names[k] for k in i["functions"]}, i["outcome"])
                    for i in doc["inputs"]}
        check(fsets(rep) == fsets(fn), "driver: the fork server's sets and outcomes are the "
              "batches': %s against %s" % (fsets(rep), fsets(fn)))
        blk = rep.get("blocks", {})
        iname = {i["id"]: i["name"] for i in rep["inputs"]}
        per = {iname[i["input"]]: i["blocks"] for i in blk.get("inputs", [])}
        check(blk and all(per.get(n, 0) > 0 for n in fsets(rep)) and
              per.get("corpus/in_a", 0) > per.get("corpus/in_z", 0),
              "driver: every input reached blocks, 'a' more than 'z': %s" % per)

    print("blocks_test: %d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
