#!/usr/bin/env python3
"""ctest cov-reach: reachability from the harness and the frontier (docs/cov.md,
"Reachability and the frontier") on test/cov/cov_reach.c, whose unreachable code is known
from its source, built with `ptcall-cc -O0 -fptcall-cov` and run by `cov run` over a corpus
whose every input starts with an even byte and has no 'R' first and no 'Z' third.

Checked exactly: each never-reached function's class (api_unused/api_mid/api_deep and
cb_other unreachable: never called, and no call through a pointer of cb_other's type;
h_beta, cb_match, rare, rare_deep reachable, not reached); the frontier's rows, order,
callers, how each is called, and the functions and lines behind each (the lines from the
lcov tracefile's never-run lines of those functions); the branch frontier's top row (the
`d[2] == 'Z'` test, its first never-run line and the never-run lines behind it); the table;
map version 8 in the binary and record 8 in the .ptcov. A copy of the file without record 8
(as made before it) is read, counts direct calls only and says so: h_beta and cb_match are
then unreachable. The JSON is checked against docs/schema/cov-report.schema.json.

usage: reach_test.py BUILD_DIR SOURCE_DIR WORK_DIR
"""
import csv
import io
import json
import os
import shutil
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from covcheck import check, failures, line_of, ptcov_records, run  # noqa: E402

build, src, work = (os.path.abspath(a) for a in sys.argv[1:4])
ptcall = os.path.join(build, "tools", "ptcall")
cc = os.path.join(build, "bin", "ptcall-cc")
target_c = os.path.join(src, "test", "cov", "cov_reach.c")

UNREACHABLE = {"api_unused", "api_mid", "api_deep", "cb_other"}
REACHABLE = {"h_beta", "cb_match", "rare", "rare_deep"}
REACHED = {"main", "LLVMFuzzerTestOneInput", "dispatch", "h_alpha"}


def map_version(path):
    r = run(["objcopy", "-O", "binary", "--only-section=ptcall_map", path, path + ".map"])
    b = open(path + ".map", "rb").read() if r.returncode == 0 else b""
    return struct.unpack_from("<H", b, 4)[0] if len(b) >= 6 else 0


def report(ptcov, *extra):
    r = run([ptcall, "cov", "report", ptcov, "--format", "json"] + list(extra))
    check(r.returncode == 0, "report %s: %s" % (ptcov, r.stderr))
    return json.loads(r.stdout) if r.returncode == 0 else {}


def schema_check(doc, what):
    try:
        import jsonschema
    except ImportError:
        return
    schema = json.load(open(os.path.join(src, "docs", "schema", "cov-report.schema.json")))
    try:
        jsonschema.validate(doc, schema)
        check(True, "")
    except jsonschema.ValidationError as e:
        check(False, "%s: the JSON does not match its schema: %s" % (what, e.message))


def main():
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    os.chdir(work)
    src_lines = open(target_c).read().splitlines()
    r = run([cc, "-O0", "-fptcall-cov", target_c, "-o", "reach"])
    if not check(r.returncode == 0, "ptcall-cc -fptcall-cov builds cov_reach.c: %s" % r.stderr):
        return 1
    check(map_version("reach") == 8, "the binary's map is version 8: %d" % map_version("reach"))
    os.makedirs("corpus")
    for name, data in (("a", b"hxy1"), ("b", b"bxyz"), ("c", b"dd")):
        with open(os.path.join("corpus", name), "wb") as f:
            f.write(data)
    r = run([ptcall, "cov", "run", "-o", "r.ptcov", "--corpus", "corpus", "--", "./reach", "@@"])
    if not check(r.returncode == 0, "cov run: %s" % r.stderr):
        return 1
    raw = open("r.ptcov", "rb").read()
    types = [t for t, _, _ in ptcov_records(raw, 20)]
    check(8 in types and types.index(8) > types.index(4) and types.index(8) < types.index(3),
          "record 8 CALLGRAPH after MODULE and BLOCKS, before the inputs: %s" % types)

    doc = report("r.ptcov", "--frontier")
    schema_check(doc, "r.ptcov")
    fnames = [f["name"] for f in doc.get("functions", [])]

    class Names:  # an id the file does not have reads as "?" (the old code has no ids here)
        def __getitem__(self, i):
            return fnames[i] if isinstance(i, int) and 0 <= i < len(fnames) else "?"
    names = Names()
    reach = doc.get("reachability", {})
    cls = reach.get("classes", [])
    got = {c: {names[i] for i, k in enumerate(cls) if k == c}
           for c in ("reached", "reachable", "unreachable")}
    check(got == {"reached": REACHED, "reachable": REACHABLE, "unreachable": UNREACHABLE},
          "classes: %s" % got)
    check(reach.get("unreachable") == 4 and reach.get("reachable_not_reached") == 4 and
          reach.get("indirect_calls") is True and
          names[reach.get("entry")] == "LLVMFuzzerTestOneInput",
          "counts, entry and indirect calls: %s" % {k: reach.get(k) for k in
                                                    ("unreachable", "reachable_not_reached",
                                                     "indirect_calls", "entry")})
    check([names[i] for i in reach.get("reached_without_path", [])] == ["main"],
          "only main is reached without a path from the entry: %s"
          % reach.get("reached_without_path"))

    # the lines never run of each function, from the lcov tracefile (its DA records)
    r = run([ptcall, "cov", "report", "r.ptcov", "--format", "lcov"])
    da = {}
    for line in r.stdout.splitlines():
        if line.startswith("DA:"):
            ln, hits = line[3:].split(",")[:2]
            da[int(ln)] = int(hits)

    def unrun(first, last):
        return {ln for ln, h in da.items() if first <= ln <= last and h == 0}
    rare_lines = unrun(line_of(src_lines, "int rare_deep(int x)"),
                       line_of(src_lines, "int rare(int x)"))
    front = reach.get("frontier", [])
    rows = [(names[x["function"]], x["by_pointer_only"], sorted(names[c] for c in x["callers"]),
             x["functions_behind"]) for x in front]
    check(rows[:1] == [("rare", False, ["dispatch"], 2)] and
          sorted(rows[1:]) == [("cb_match", True, ["dispatch"], 1),
                               ("h_beta", True, ["dispatch"], 1)],
          "frontier: rare first (rare_deep behind it), then h_beta and cb_match by pointer: %s"
          % rows)
    check(front and front[0].get("lines_behind") == len(rare_lines) == 6,
          "frontier: the lines behind rare are rare's and rare_deep's (%s): %s"
          % (sorted(rare_lines), front[:1]))
    check(all(x["insns_behind"] > 0 and x["blocks_behind"] >= x["functions_behind"]
              for x in front), "frontier: sizes behind each row: %s" % front)

    # the branch where dispatch stops: `if (n > 3 && d[2] == 'Z')`, never true
    zline = line_of(src_lines, "d[2] == 'Z'")
    z_lines = unrun(zline + 1, line_of(src_lines, "    return r;") - 1)
    bf = reach.get("branch_frontier", [])
    top = bf[0] if bf else {}
    check(names[top.get("function")] == "dispatch" and
          (top.get("at") or {}).get("line") == zline and
          (top.get("first_unrun") or {}).get("line") == zline + 1 and
          top.get("lines_behind") == len(z_lines) and len(z_lines) >= 3,
          "branch frontier: dispatch stops at line %d, the %d lines behind it (%s) first: %s"
          % (zline, len(z_lines), sorted(z_lines), top))
    rline = line_of(src_lines, "d[0] == 'R'")
    check(any(names[b["function"]] == "dispatch" and b["at"]["line"] == rline and
              b["first_unrun"]["line"] == rline + 1 for b in bf),
          "branch frontier: the call of rare (line %d) is a row: %s" % (rline + 1, bf))

    # the table
    r = run([ptcall, "cov", "report", "r.ptcov", "--frontier"])
    t = r.stdout
    check("of 8 never-reached functions, 4 reachable, not reached; 4 unreachable from the "
          "harness" in t and "  unreachable  cb_other" in t and "frontier:" in t and
          "rare  <- dispatch" in t and "h_beta  <- (by pointer) dispatch" in t and
          "branches where reached functions stop" in t and "direct calls only" not in t,
          "table: %s" % t[t.find("reachability"):])
    check(r.stdout == run([ptcall, "cov", "report", "r.ptcov", "--blockers"]).stdout,
          "--blockers is --frontier")

    # the CSV view: the frontier's rows, as the JSON has them (it gave the blockers list)
    r = run([ptcall, "cov", "report", "r.ptcov", "--frontier", "--format", "csv"])
    crow = list(csv.DictReader(io.StringIO(r.stdout)))
    want = [(names[x["function"]], int(x["by_pointer_only"]),
             "; ".join(names[c] for c in x["callers"]), x["functions_behind"],
             x["insns_behind"], x["blocks_behind"], x.get("lines_behind")) for x in front]
    got = [(c.get("name"), int(c.get("by_pointer_only") or -1), c.get("callers"),
            int(c.get("functions_behind") or -1), int(c.get("insns_behind") or -1),
            int(c.get("blocks_behind") or -1), int(c.get("lines_behind") or -1))
           for c in crow]
    check(r.returncode == 0 and got == want and len(got) == 3,
          "csv --frontier: the frontier's rows as the JSON has them: %s != %s" % (got, want))

    # the HTML view: the classes and the frontier in place of the blockers list
    h = run([ptcall, "cov", "report", "r.ptcov", "--frontier", "--format", "html"]).stdout
    check("<h2>Reachability</h2>" in h and "<b>4 unreachable from the harness</b>" in h and
          "<h2>Frontier</h2>" in h and "<tr><td>rare</td><td class=n>2</td>" in h and
          "<h2>Branches where reached functions stop</h2>" in h and "<h2>Blockers</h2>" not in h,
          "html: reachability, frontier and branches: %s" % h[h.find("<h2>Reach"):][:600])

    # a file without record 8 (made before it): direct calls only, said
    out = bytearray(raw[:20])
    for typ, start, end in ptcov_records(raw, 20):
        if typ != 8:
            out += raw[start:end + 4]
    with open("old.ptcov", "wb") as f:
        f.write(out)
    old = report("old.ptcov", "--frontier").get("reachability", {})
    ocls = old.get("classes", [])
    check(old.get("indirect_calls") is False and
          {names[i] for i, k in enumerate(ocls) if k == "unreachable"} ==
          UNREACHABLE | {"h_beta", "cb_match"} and "branch_frontier" not in old,
          "without record 8: direct calls only (h_beta and cb_match unreachable): %s" % old)
    t = run([ptcall, "cov", "report", "old.ptcov", "--frontier"]).stdout
    check("direct calls only" in t and "branches where reached functions stop: not known" in t,
          "without record 8 the table says so: %s" % t[t.find("reachability"):])
    # a record 8 whose function count disagrees with the MODULE records: refused
    bad = bytearray(raw)
    for typ, start, end in ptcov_records(raw, 20):
        if typ == 8:
            p = start + 1
            while raw[p] & 0x80:
                p += 1
            p += 1   # the payload: varint modules, varint modules with, varint functions
            bad[p + 2] ^= 1
            import zlib
            crc = zlib.crc32(bytes(bad[start:end]))
            bad[end:end + 4] = struct.pack("<I", crc)
    with open("bad.ptcov", "wb") as f:
        f.write(bad)
    r = run([ptcall, "cov", "report", "bad.ptcov"])
    check(r.returncode != 0 and "damaged CALLGRAPH record" in r.stderr,
          "a CALLGRAPH record of another function count is refused: %s" % r.stderr)
    print("%d failed" % len(failures) if failures else "cov-reach: all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
