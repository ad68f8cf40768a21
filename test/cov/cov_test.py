#!/usr/bin/env python3
"""End-to-end tests of `ptcall cov run|report|diff` (docs/cov.md) on test/cov/cov_target.c
built with ptcall-cc (early placement), and on the AFL++ queue subset in test/cov/data
(written by afl-fuzz 4.04c, bench/cov/zlib-campaign.sh).

Each input's function set is known from the target's source, so every check compares the
report's sets, outcomes and campaign times with what must be; the JSON outputs are validated
against docs/schema/cov-*.schema.json (python3-jsonschema).

usage: cov_test.py BUILD_DIR SOURCE_DIR WORK_DIR
"""
import json
import os
import shutil
import subprocess
import sys

from covcheck import check, failures, ptcov_records, run  # beside this script


def main():
    build, src, work = (os.path.abspath(a) for a in sys.argv[1:4])
    ptcall = os.path.join(build, "tools", "ptcall")
    cc = os.path.join(build, "bin", "ptcall-cc")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    os.chdir(work)
    target_c = os.path.join(src, "test", "cov", "cov_target.c")
    env = dict(os.environ, PTCALL_PLACEMENT="early")
    subprocess.run([cc, "-O1", "-g", target_c, "-o", "target"], check=True, env=env)
    subprocess.run([cc, "-O1", "-g", "-DVARIANT=2", target_c, "-o", "target2"], check=True,
                   env=env)
    subprocess.run([os.path.join(os.environ.get("PTCALL_LLVM_BIN", "/usr/lib/llvm-14/bin"), "clang"), "-O1", "-DPLAIN", target_c, "-o", "plain"], check=True)

    try:
        import jsonschema
    except ImportError:
        jsonschema = None
        print("note: python3-jsonschema missing: the JSON outputs are not validated")

    def validate(doc, schema):
        if jsonschema:
            with open(os.path.join(src, "docs", "schema", schema)) as f:
                jsonschema.validate(doc, json.load(f))

    # the corpus: one input per path of the target, and what a corpus should not hold
    os.makedirs("corpus/sub")
    t0 = 1700000000
    for i, (name, data) in enumerate([("in-a", b"a1"), ("in-b", b"b22"), ("in-c", b"c"),
                                      ("in-h", b"h"), ("in-x", b"x"), ("in-z", b"zz")]):
        with open("corpus/" + name, "wb") as f:
            f.write(data)
        os.utime("corpus/" + name, (t0 + 10 * i, t0 + 10 * i))
    # an empty file is an input (libFuzzer runs the empty input; it was skipped)
    open("corpus/empty", "wb").close()
    os.utime("corpus/empty", (t0 + 60, t0 + 60))
    os.symlink("nowhere", "corpus/dangling")
    want = {"corpus/in-a": {"main", "f_a"}, "corpus/in-b": {"main", "f_b"},
            "corpus/in-c": {"main", "crash"}, "corpus/in-h": {"main", "hang"},
            "corpus/in-x": {"main"}, "corpus/in-z": {"main"}, "corpus/empty": {"main"}}

    # a target not built with ptcall: refused before any input runs
    r = run([ptcall, "cov", "run", "-o", "plain.ptcov", "--corpus", "corpus", "--", "./plain"],
            env=dict(os.environ, COV_RAN=os.path.join(work, "ran")))
    check(r.returncode == 1 and "was not built with ptcall" in r.stderr,
          "plain target: exit 1 and 'not built with ptcall' (%d, %s)" % (r.returncode, r.stderr))
    check(not os.path.exists("ran") and not os.path.exists("plain.ptcov"),
          "plain target: it ran or a .ptcov was written")

    def report(ptcov, *extra):
        r = run([ptcall, "cov", "report", ptcov, "--format", "json"] + list(extra))
        check(r.returncode == 0, "report %s: exit %d %s" % (ptcov, r.returncode, r.stderr))
        doc = json.loads(r.stdout)
        validate(doc, "cov-report.schema.json")
        return doc

    def sets(doc):
        names = [f["name"] for f in doc["functions"]]
        return {i["name"]: {names[k] for k in i["functions"]} for i in doc["inputs"]}

    def by_name(doc):
        return {i["name"]: i for i in doc["inputs"]}

    results = {}
    for mode, extra, tail in [("stdin", [], []), ("file-jobs2", ["--jobs", "2"], ["@@"]),
                              ("exec", ["--exec"], ["@@"])]:
        out = mode + ".ptcov"
        r = run([ptcall, "cov", "run", "--timeout", "300", "-o", out, "--corpus", "corpus"] +
                extra + ["--", "./target"] + tail)
        check(r.returncode == 0, "%s: exit %d: %s" % (mode, r.returncode, r.stderr))
        check("corpus/empty" not in r.stderr, "%s: the empty input was skipped: %s" %
              (mode, r.stderr))
        for what in ["corpus/sub: a directory",
                     "corpus/dangling: No such file"]:
            check("skipping " + what in r.stderr, "%s: no 'skipping %s' in %s" % (mode, what,
                                                                                 r.stderr))
        check(("exec per input" in r.stderr) == (mode == "exec"),
              "%s: the summary names the wrong way of running: %s" % (mode, r.stderr))
        doc = report(out)
        results[mode] = doc
        check(sets(doc) == want, "%s: per-input sets %s, want %s" % (mode, sets(doc), want))
        ins = by_name(doc)
        check(ins["corpus/in-c"]["outcome"] == "signal" and ins["corpus/in-c"]["value"] == 11,
              "%s: the crash is not signal 11: %s" % (mode, ins["corpus/in-c"]))
        check(ins["corpus/in-h"]["outcome"] == "timeout",
              "%s: the hang is not a timeout: %s" % (mode, ins["corpus/in-h"]))
        check(ins["corpus/in-x"]["outcome"] == "exited" and ins["corpus/in-x"]["value"] == 3,
              "%s: in-x did not exit 3: %s" % (mode, ins["corpus/in-x"]))
        check(doc["union"] == {"functions": 5, "reached": 5}, "%s: union %s" % (mode,
                                                                                 doc["union"]))
        # campaign time from file times, and what each input reached first
        times = {i["name"]: i["time_ms"] for i in doc["inputs"]}
        check(times == dict({"corpus/in-%s" % c: 10000 * k for k, c in enumerate("abchxz")},
                            **{"corpus/empty": 60000}),
              "%s: campaign times %s" % (mode, times))
        names = [f["name"] for f in doc["functions"]]
        firsts = {i["name"]: {names[k] for k in i["first"]} for i in doc["inputs"]}
        check(firsts["corpus/in-a"] == {"main", "f_a"} and firsts["corpus/in-b"] == {"f_b"} and
              firsts["corpus/in-z"] == set(), "%s: first reached %s" % (mode, firsts))
        curve = [(p["time_ms"], p["reached"]) for p in doc["curve"]]
        check(curve == [(0, 2), (10000, 3), (20000, 4), (30000, 5)],
              "%s: curve %s" % (mode, curve))
        check(not doc["never_reached"], "%s: never reached %s" % (mode, doc["never_reached"]))

    # a libFuzzer-style harness (ptcall-cc -fptcall-fuzz-driver): one process per batch,
    # an input per mark; the crash's and the hang's functions from their closing segments
    subprocess.run([cc, "-O1", "-g", "-fptcall-fuzz-driver",
                    os.path.join(src, "test", "cov", "cov_harness.c"), "-o", "harness"],
                   check=True, env=env)
    r = run([ptcall, "cov", "run", "--timeout", "300", "-o", "lf.ptcov", "--corpus", "corpus",
             "--", "./harness"])
    check(r.returncode == 0 and "libFuzzer-style" in r.stderr, "libFuzzer: %d %s" %
          (r.returncode, r.stderr))
    doc = report("lf.ptcov")
    lf_want = {k: {"LLVMFuzzerTestOneInput" if f == "main" else f for f in v}
               for k, v in want.items()}
    check(sets(doc) == lf_want, "libFuzzer: per-input sets %s, want %s" % (sets(doc), lf_want))
    ins = by_name(doc)
    check(ins["corpus/in-c"]["outcome"] == "signal" and ins["corpus/in-c"]["value"] == 11 and
          ins["corpus/in-h"]["outcome"] == "timeout", "libFuzzer: outcomes %s" % ins)

    # the other views
    r = run([ptcall, "cov", "report", "stdin.ptcov"])
    check(r.returncode == 0 and "functions reached: 5 of 5" in r.stdout and
          "signal 11 (SEGV)" in r.stdout, "table: %s" % r.stdout[:500])
    r = run([ptcall, "cov", "report", "stdin.ptcov", "--format", "csv"])
    lines = r.stdout.splitlines()
    check(r.returncode == 0 and lines[0].startswith("name,linkage_name,module,file,line,reached")
          and len(lines) == 6, "csv: %s" % r.stdout)
    r = run([ptcall, "cov", "report", "stdin.ptcov", "--format", "html"])
    check(r.returncode == 0 and "5 of 5 instrumented functions reached" in r.stdout and
          ("new uPlot(" in r.stdout or "<polyline" in r.stdout) and r.stdout.rstrip().endswith(
              "</html>"), "html: %s" % r.stdout[:300])

    # the page in a real browser: uPlot draws the curve on a canvas (or the SVG fallback is
    # there when the build had no uPlot)
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser:
        with open("report.html", "w") as f:
            f.write(r.stdout)
        dom = run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom",
                   "file://" + os.path.join(work, "report.html")], timeout=120).stdout
        if "new uPlot(" in r.stdout:
            check('<div class="uplot' in dom and "<canvas" in dom,
                  "html: Chromium drew no uPlot chart: %s" % dom[:300])
        else:
            check("<polyline" in dom, "html: no SVG curve in Chromium's DOM")
    else:
        print("note: no chromium: the HTML page is not loaded in a browser")

    # a subset corpus never reaches some functions; --blockers lists main (its callees)
    os.makedirs("only-a")
    shutil.copy("corpus/in-a", "only-a/in-a")
    os.makedirs("only-b")
    shutil.copy("corpus/in-b", "only-b/in-b")
    for d in ["only-a", "only-b"]:
        r = run([ptcall, "cov", "run", "-o", d + ".ptcov", "--corpus", d, "--", "./target"])
        check(r.returncode == 0, "%s: %s" % (d, r.stderr))
    doc = report("only-a.ptcov")
    names = [f["name"] for f in doc["functions"]]
    check({names[k] for k in doc["never_reached"]} == {"f_b", "crash", "hang"},
          "never reached: %s" % doc["never_reached"])
    # blockers (map version 6: main's direct callees and their sizes)
    doc = report("only-a.ptcov", "--blockers")
    bl = [(names[b["function"]], {names[k] for k in b["unreached_callees"]},
           b["unreached_insns"] > 0, b["unreached_blocks"] >= 3) for b in doc["blockers"]]
    check(doc["blockers_sized"] and bl == [("main", {"f_b", "crash", "hang"}, True, True)],
          "blockers: %s" % doc["blockers"])
    r = run([ptcall, "cov", "report", "only-a.ptcov", "--blockers", "--format", "csv"])
    # the CSV gives the frontier (one row per never-reached callee of reached code)
    rows = [ln.split(",") for ln in r.stdout.splitlines()[1:]]
    check(r.returncode == 0 and r.stdout.startswith("name,linkage_name,") and
          sorted(x[0] for x in rows) == ["crash", "f_b", "hang"] and
          all(x[6] == "main" for x in rows), "frontier csv: %s" % r.stdout)
    r = run([ptcall, "cov", "diff", "only-a.ptcov", "only-b.ptcov", "--format", "json"])
    check(r.returncode == 0, "diff: %s" % r.stderr)
    d = json.loads(r.stdout)
    validate(d, "cov-diff.schema.json")
    only = sorted((x["only_in"], x["name"]) for x in d["only"])
    check(only == [("A", "f_a"), ("B", "f_b")] and d["both"] == 1, "diff: %s" % d)

    # a .ptcov of another build, damaged and foreign files
    r = run([ptcall, "cov", "report", "stdin.ptcov", "--binary", "./target2"])
    check(r.returncode == 1 and "build ids do not match" in r.stderr,
          "--binary of another build: %d %s" % (r.returncode, r.stderr))
    r = run([ptcall, "cov", "report", "stdin.ptcov", "--binary", "./target"])
    check(r.returncode == 0, "--binary of the same build: %s" % r.stderr)
    with open("stdin.ptcov", "rb") as f:
        data = f.read()
    with open("cut.ptcov", "wb") as f:
        f.write(data[:len(data) - 5])
    r = run([ptcall, "cov", "report", "cut.ptcov"])
    check(r.returncode == 1 and "truncated" in r.stderr, "truncated: %s" % r.stderr)
    r = run([ptcall, "cov", "report", target_c])
    check(r.returncode == 1 and "not a .ptcov file" in r.stderr, "foreign: %s" % r.stderr)
    # every cut of the file is refused, and damaged bytes never crash the reader
    with open("only-a.ptcov", "rb") as f:
        small = f.read()
    for cut in range(len(small)):
        with open("cut.ptcov", "wb") as f:
            f.write(small[:cut])
        r = run([ptcall, "cov", "report", "cut.ptcov", "--format", "json", "--blockers"])
        if not check(r.returncode == 1 and r.stderr.startswith("ptcall cov report: "),
                     "cut at %d of %d: exit %d %s" % (cut, len(small), r.returncode, r.stderr)):
            break
    import random
    rnd = random.Random(18)
    for k in range(300):
        b = bytearray(small)
        for _ in range(rnd.randint(1, 4)):
            b[rnd.randrange(16, len(b))] = rnd.randrange(256)
        with open("bad.ptcov", "wb") as f:
            f.write(b)
        r = subprocess.run([ptcall, "cov", "report", "bad.ptcov", "--format", "json",
                            "--blockers"], capture_output=True)
        r.stderr = r.stderr.decode("utf-8", "replace")
        ok = r.returncode in (0, 1)
        if ok and r.returncode == 0:
            try:
                # still valid JSON in strict UTF-8 (names that are not UTF-8: U+FFFD)
                json.loads(r.stdout.decode("utf-8"))
            except ValueError as ex:
                ok = False
                r.stderr = "invalid JSON: %s" % ex
        if not check(ok, "damaged file %d: exit %d %s" % (k, r.returncode, r.stderr[-300:])):
            with open("bad-%d.ptcov" % k, "wb") as f:
                f.write(b)
            break

    # every single flipped bit of a real .ptcov is refused (version 2: CRCs over the header
    # and each record), in-process by the reader itself (test/cov/ptcov_flip.c)
    flip = os.path.join(build, "test", "cov", "ptcov_flip")
    for f in ["only-a.ptcov", "stdin.ptcov"]:
        r = run([flip, f])
        print(r.stdout.strip())
        check(r.returncode == 0, "bit flips of %s: %s" % (f, r.stdout[-600:]))
    # through the command: a flip names the damaged record and its bytes
    b = bytearray(small)
    b[len(b) // 2] ^= 0x10
    with open("bad.ptcov", "wb") as f:
        f.write(b)
    r = run([ptcall, "cov", "report", "bad.ptcov"])
    check(r.returncode == 1 and "fails its checksum" in r.stderr and "record" in r.stderr and
          r.stderr.count("\n") == 1, "a flipped bit: %s" % r.stderr)

    # version 1 (no CRC) is still read, with a note; the same figures as version 2
    def to_v1(b):
        hs = int.from_bytes(b[12:16], "little")
        out = bytearray(b[:8]) + (1).to_bytes(4, "little") + (16).to_bytes(4, "little")
        for _, p, end in ptcov_records(b, hs):
            out += b[p:end]  # without the CRC
        return bytes(out)
    with open("v1.ptcov", "wb") as f:
        f.write(to_v1(small))
    r1 = run([ptcall, "cov", "report", "v1.ptcov", "--format", "json"])
    r2 = run([ptcall, "cov", "report", "only-a.ptcov", "--format", "json"])
    check(r1.returncode == 0 and "version 1 .ptcov, which has no checksum" in r1.stderr and
          r2.returncode == 0 and "no checksum" not in r2.stderr,
          "version 1: %d %s / %s" % (r1.returncode, r1.stderr, r2.stderr))
    if r1.returncode == 0 and r2.returncode == 0:
        d1, d2 = json.loads(r1.stdout), json.loads(r2.stdout)
        d1.pop("ptcov", None)
        d2.pop("ptcov", None)
        check(d1 == d2, "version 1 and 2 read apart")

    # AFL++ output directories: another layout is refused with what was expected; the queue
    # subset AFL++ wrote is read with kinds and the time: of its names
    r = run([ptcall, "cov", "run", "-o", "x.ptcov", "--afl", "corpus", "--", "./target"])
    check(r.returncode == 1 and "expected corpus/NAME/queue/" in r.stderr,
          "afl layout: %s" % r.stderr)
    afl = os.path.join(src, "test", "cov", "data", "afl-zlib")
    r = run([ptcall, "cov", "run", "-o", "afl.ptcov", "--afl", afl, "--", "./target", "@@"])
    check(r.returncode == 0, "afl: %s" % r.stderr)
    doc = report("afl.ptcov")
    entries = sorted(os.listdir(os.path.join(afl, "default", "queue")))
    entries = [e for e in entries if not e.startswith(".")]
    check(len(doc["inputs"]) == len(entries), "afl: %d inputs of %d entries" %
          (len(doc["inputs"]), len(entries)))
    for i in doc["inputs"]:
        base = i["name"].rsplit("/", 1)[-1]
        field = [p for p in base.split(",") if p.startswith("time:")]
        check(i["kind"] == "queue" and field and i["time_ms"] == int(field[0][5:]),
              "afl: %s read as %s at %s" % (i["name"], i["kind"], i["time_ms"]))
    ts = [i["time_ms"] for i in doc["inputs"]]
    check(ts == sorted(ts), "afl: inputs not in campaign order")

    # two AFL++ instances (-M main, -S sec) with crashes/ and hangs/, as afl-fuzz 4.04c wrote
    # them for an afl-clang-fast build of cov_target.c (test/cov/data/afl-toy: 20 s each)
    toy = os.path.join(src, "test", "cov", "data", "afl-toy")
    r = run([ptcall, "cov", "run", "--timeout", "300", "-o", "toy.ptcov", "--afl", toy, "--",
             "./target", "@@"])
    check(r.returncode == 0, "afl-toy: %s" % r.stderr)
    doc = report("toy.ptcov")
    expect = {}
    for inst in ["main", "sec"]:
        for sub, kind in [("queue", "queue"), ("crashes", "crash"), ("hangs", "hang")]:
            for e in os.listdir(os.path.join(toy, inst, sub)):
                if not e.startswith(".") and e != "README.txt":
                    expect["%s/%s/%s" % (inst, sub, e)] = kind
    got = {i["name"]: i["kind"] for i in doc["inputs"]}
    check(got == expect, "afl-toy: inputs %s, want %s" % (got, expect))
    check(sum(k == "crash" for k in got.values()) == 2 and
          sum(k == "hang" for k in got.values()) == 2, "afl-toy: kinds %s" % got)
    for i in doc["inputs"]:
        if i["kind"] == "crash":
            check(i["outcome"] == "signal" and i["value"] == 11,
                  "afl-toy: AFL++'s crash %s ran as %s" % (i["name"], i))
        if i["kind"] == "hang":
            check(i["outcome"] == "timeout", "afl-toy: AFL++'s hang %s ran as %s" % (i["name"],
                                                                                 i))
        field = [p for p in i["name"].rsplit("/", 1)[-1].split(",") if p.startswith("time:")]
        check(i["time_ms"] == int(field[0][5:]), "afl-toy: time of %s" % i["name"])

    universe_checks(ptcall, cc, src, work, report, validate, run_browser=browser)

    if failures:
        print("%d checks failed" % len(failures))
        return 1
    print("all cov checks passed")
    return 0


def universe_checks(ptcall, cc, src, work, report, validate, run_browser):
    """Issue 29, the universe and the small items: a late build refused (--allow-late to go
    on) and its universe said by report and diff; functions one build never instrumented
    told apart in cov diff; each unreached callee once in the blockers; --afl FILE; a crash
    before main; the curve drawn to the campaign's end."""
    target_c = os.path.join(src, "test", "cov", "cov_target.c")
    late_env = {k: v for k, v in os.environ.items() if k != "PTCALL_PLACEMENT"}
    subprocess.run([cc, "-O1", "-g", target_c, "-o", "target-late"], check=True, env=late_env)

    # a late build: refused before any input runs, with what to do, in one line
    r = run([ptcall, "cov", "run", "-o", "late.ptcov", "--corpus", "corpus", "--",
             "./target-late"])
    check(r.returncode == 1 and "late placement" in r.stderr and "-fptcall-cov" in r.stderr
          and "--allow-late" in r.stderr and
          r.stderr.count("\n") == 1 and not os.path.exists("late.ptcov"),
          "late build: refused in one line: %d %s" % (r.returncode, r.stderr))
    r = run([ptcall, "cov", "run", "--allow-late", "--timeout", "300", "-o", "late.ptcov",
             "--corpus", "corpus", "--", "./target-late"])
    check(r.returncode == 0 and "late placement" in r.stderr,
          "late build with --allow-late: %d %s" % (r.returncode, r.stderr))
    late = report("late.ptcov")
    early = report("stdin.ptcov")
    check(late.get("universe", {}).get("placement") == "late" and
          early.get("universe", {}).get("placement") == "early" and
          late["modules"][0].get("placement") == "late" and
          late["modules"][0].get("units_late", 0) >= 1 and
          early["modules"][0].get("units_early", 0) >= 1,
          "json universe: late %s, early %s" % (late.get("universe"), early.get("universe")))
    r = run([ptcall, "cov", "report", "late.ptcov"])
    check("universe: functions that survived inlining (late placement): functions inlined "
          "before the pass ran are not counted" in r.stdout, "table, late: %s" % r.stdout[:400])
    r = run([ptcall, "cov", "report", "stdin.ptcov"])
    check("universe: source-level functions (early placement)" in r.stdout,
          "table, early: %s" % r.stdout[:400])
    r = run([ptcall, "cov", "report", "late.ptcov", "--format", "html"])
    check('<p id="universe">Counted: functions that survived inlining' in r.stdout,
          "html, late: no universe")

    # an instrumented library built late under an early target: refused too, once runner 0
    # has found it; with --allow-late the file's universe is mixed
    with open("liblate.c", "w") as f:
        f.write("static int helper(int x) { return x + 3; }\n"
                "int lib_fn(int x) { return helper(x) * 2; }\n")
    with open("uselib.c", "w") as f:
        f.write("#include <unistd.h>\nint lib_fn(int);\nint main(void) { char b[8]; "
                "int n = (int)read(0, b, sizeof b); return lib_fn(n) > 100; }\n")
    subprocess.run([cc, "-O1", "-g", "-fPIC", "-shared", "liblate.c", "-o", "liblate.so"],
                   check=True, env=late_env)
    subprocess.run([cc, "-O1", "-g", "uselib.c", "-L.", "-llate", "-Wl,-rpath," + work, "-o",
                    "uselib"], check=True, env=dict(os.environ, PTCALL_PLACEMENT="early"))
    r = run([ptcall, "cov", "run", "-o", "lib.ptcov", "--corpus", "only-a", "--", "./uselib"])
    check(r.returncode == 1 and "liblate.so was built with late placement" in r.stderr and
          not os.path.exists("lib.ptcov"), "late library: %d %s" % (r.returncode, r.stderr))
    r = run([ptcall, "cov", "run", "--allow-late", "-o", "lib.ptcov", "--corpus", "only-a",
             "--", "./uselib"])
    doc = report("lib.ptcov") if r.returncode == 0 else {}
    check(doc.get("universe", {}).get("placement") == "mixed" and
          [m.get("placement") for m in doc["modules"]] == ["early", "late"],
          "late library, --allow-late: %s" % (doc.get("modules") or r.stderr))

    # a .ptcov without record 6 (as written before it): read, its universe "not recorded"
    with open("stdin.ptcov", "rb") as f:
        b = f.read()
    out, seen = bytearray(b[:20]), []
    for rtype, p, end in ptcov_records(b, 20):
        seen.append(rtype)
        if rtype != 6:
            out += b[p:end + 4]  # with its CRC
    with open("no6.ptcov", "wb") as f:
        f.write(bytes(out))
    doc = report("no6.ptcov")
    r = run([ptcall, "cov", "report", "no6.ptcov"])
    check(6 in seen and doc.get("universe", {}).get("placement") == "unknown" and
          "universe: not recorded" in r.stdout and doc["union"] == early["union"],
          "a .ptcov without record 6: %s %s" % (seen, doc.get("universe")))

    # cov diff: f_a and f_b were inlined away in the late build: not "only reached by A"
    late_names = {f["name"] for f in late["functions"]}
    r = run([ptcall, "cov", "diff", "stdin.ptcov", "late.ptcov", "--format", "json"])
    d = json.loads(r.stdout) if r.returncode == 0 else {"only": []}
    validate(d, "cov-diff.schema.json")
    rows = {x["name"]: x.get("instrumented_in_other") for x in d["only"]}
    want_rows = {n: False for n in ("f_a", "f_b") if n not in late_names}
    check(want_rows and all(rows.get(n) is False for n in want_rows) and
          d["a"].get("placement") == "early" and d["b"].get("placement") == "late",
          "diff early/late: rows %s (late build has %s)" % (rows, sorted(late_names)))
    r = run([ptcall, "cov", "diff", "stdin.ptcov", "late.ptcov"])
    check("reached by A, not instrumented in B's build" in r.stdout and
          "different functions" in r.stdout and "counted: source-level functions" in r.stdout,
          "diff table: %s" % r.stdout)
    r = run([ptcall, "cov", "diff", "stdin.ptcov", "late.ptcov", "--format", "csv"])
    check(r.stdout.splitlines()[0].endswith(",other_build") and
          any(l.endswith(",not instrumented") for l in r.stdout.splitlines()),
          "diff csv: %s" % r.stdout)
    # two early runs: nothing "not instrumented"
    r = run([ptcall, "cov", "diff", "only-a.ptcov", "only-b.ptcov", "--format", "json"])
    d = json.loads(r.stdout)
    check(all(x.get("instrumented_in_other") is True for x in d["only"]),
          "diff of one build: %s" % d["only"])

    # one source built in two directories: the map says "sub/cov_target.c" (below the
    # compiling directory) in one, the absolute path in the other: the same functions
    os.makedirs("sub", exist_ok=True)
    shutil.copy(target_c, "sub/cov_target.c")
    early_env = dict(os.environ, PTCALL_PLACEMENT="early")
    subprocess.run([cc, "-O1", "-g", "sub/cov_target.c", "-o", "t-rel"], check=True,
                   env=early_env)
    subprocess.run([cc, "-O1", "-g", os.path.join(work, "sub", "cov_target.c"), "-o",
                    os.path.join(work, "t-abs")], check=True, env=early_env, cwd="/")
    for t in ["t-rel", "t-abs"]:
        r = run([ptcall, "cov", "run", "-o", t + ".ptcov", "--corpus", "only-a", "--", "./" + t])
        check(r.returncode == 0, "%s: %s" % (t, r.stderr))
    files = {report(t + ".ptcov")["functions"][0]["file"] for t in ["t-rel", "t-abs"]}
    r = run([ptcall, "cov", "diff", "t-rel.ptcov", "t-abs.ptcov", "--format", "json"])
    d = json.loads(r.stdout) if r.returncode == 0 else {}
    check(len(files) == 2 and d.get("both") == 2 and d.get("only") == [],
          "diff of one source built in two directories (files %s): %s" % (files, d))

    # blockers: rare is called by p1 and p2 (both reached): listed once, with both callers
    subprocess.run([cc, "-O1", "-g", os.path.join(src, "test", "cov", "cov_blockers.c"), "-o",
                    "blk"], check=True, env=dict(os.environ, PTCALL_PLACEMENT="early"))
    os.makedirs("blk-corpus", exist_ok=True)
    with open("blk-corpus/x", "wb") as f:
        f.write(b"x")
    r = run([ptcall, "cov", "run", "-o", "blk.ptcov", "--corpus", "blk-corpus", "--", "./blk"])
    check(r.returncode == 0, "blockers target: %s" % r.stderr)
    doc = report("blk.ptcov", "--blockers")
    names = [f["name"] for f in doc["functions"]]
    listed = [names[c] for b in doc["blockers"] for c in b["unreached_callees"]]
    check(sorted(listed) == ["rare", "rare2"], "blockers: each callee once: %s" % listed)
    for b in doc["blockers"]:
        for c, callers in zip(b["unreached_callees"], b.get("callers", [])):
            if names[c] == "rare":
                check(sorted(names[k] for k in callers) == ["p1", "p2"],
                      "blockers: rare's callers %s" % callers)
    check(doc["blockers"] and names[doc["blockers"][0]["function"]] == "p1" and
          all("callers" in b for b in doc["blockers"]),
          "blockers: p1 first (rare and rare2): %s" % doc["blockers"])
    # the table's frontier (which replaced its blockers list): rare once, with both callers
    r = run([ptcall, "cov", "report", "blk.ptcov", "--blockers"])
    bl = r.stdout[r.stdout.find("frontier:"):r.stdout.find("branches where")]
    import re
    check(len(re.findall(r" rare\b", bl)) == 1 and "rare  <- p1, p2" in bl and
          "rare2  <- p1" in bl, "frontier table: %s" % bl)

    # --afl with a file: what was expected, not "Invalid argument"
    r = run([ptcall, "cov", "run", "-o", "x.ptcov", "--afl", "corpus/in-a", "--", "./target"])
    check(r.returncode == 1 and "Invalid argument" not in r.stderr and
          "corpus/in-a is a file, not a directory" in r.stderr and "--corpus" in r.stderr,
          "--afl FILE: %s" % r.stderr)

    # a crash in a constructor: before main, said with the signal and the target's last line
    subprocess.run([cc, "-O1", "-g", os.path.join(src, "test", "cov", "cov_ctor.c"), "-o",
                    "ctor"], check=True, env=dict(os.environ, PTCALL_PLACEMENT="early"))
    r = run([ptcall, "cov", "run", "-o", "ctor.ptcov", "--corpus", "corpus", "--", "./ctor"])
    check(r.returncode == 1 and "died by signal 11 (SEGV) before main" in r.stderr and
          "about to crash in a constructor" in r.stderr and
          "did not start a fork server" not in r.stderr and not os.path.exists("ctor.ptcov"),
          "constructor crash: %d %s" % (r.returncode, r.stderr))

    # the curve to the campaign's end: AFL++'s run_time (420 s) on the zlib subset, whose
    # last new function comes far earlier
    afl = os.path.join(src, "test", "cov", "data", "afl-zlib")
    r = run([ptcall, "cov", "run", "-o", "aflend.ptcov", "--afl", afl, "--", "./target", "@@"])
    check(r.returncode == 0, "afl end: %s" % r.stderr)
    doc = report("aflend.ptcov")
    check(doc.get("campaign_end_ms") == 420000 and doc["curve"][-1]["time_ms"] < 420000,
          "campaign end: %s, last curve point %s" % (doc.get("campaign_end_ms"),
                                                     doc["curve"][-1]))
    r = run([ptcall, "cov", "report", "aflend.ptcov"])
    check("7m00s" in r.stdout and "the campaign's end" in r.stdout, "table end: %s" %
          r.stdout[:1500])
    r = run([ptcall, "cov", "report", "aflend.ptcov", "--format", "html"])
    if "new uPlot(" in r.stdout and run_browser:
        with open("end.html", "w") as f:
            f.write(r.stdout)
        dom = run([run_browser, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom",
                   "file://" + os.path.join(work, "end.html")], timeout=120).stdout
        m = re.search(r'data-x-max="([0-9.]+)"', dom)
        check(m and float(m.group(1)) >= 420, "html: uPlot's x axis ends at %s, want the "
              "campaign's end (420 s)" % (m.group(1) if m else None))
    else:
        check('<polyline' in r.stdout and '420.0s' in r.stdout, "html svg: no end at 420 s")


if __name__ == "__main__":
    sys.exit(main())
