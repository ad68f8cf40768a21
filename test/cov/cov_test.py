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

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)
    return cond


def run(args, **kw):
    # errors="replace": a damaged file's names may hold any bytes (the table and CSV show them)
    return subprocess.run(args, capture_output=True, text=True, errors="replace", **kw)


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
    open("corpus/empty", "wb").close()
    os.symlink("nowhere", "corpus/dangling")
    want = {"corpus/in-a": {"main", "f_a"}, "corpus/in-b": {"main", "f_b"},
            "corpus/in-c": {"main", "crash"}, "corpus/in-h": {"main", "hang"},
            "corpus/in-x": {"main"}, "corpus/in-z": {"main"}}

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
        for what in ["corpus/empty: empty", "corpus/sub: a directory",
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
        check(times == {"corpus/in-%s" % c: 10000 * k for k, c in enumerate("abchxz")},
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
    check(r.returncode == 0 and r.stdout.splitlines()[1].startswith("main,main,") and
          r.stdout.splitlines()[1].split(",")[5] == "3", "blockers csv: %s" % r.stdout)
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
        out, p = bytearray(b[:8]) + (1).to_bytes(4, "little") + (16).to_bytes(4, "little"), hs
        while p < len(b):
            q, ln, shift = p + 1, 0, 0
            while True:
                ln |= (b[q] & 0x7f) << shift
                shift += 7
                q += 1
                if not b[q - 1] & 0x80:
                    break
            out += b[p:q + ln]
            p = q + ln + 4  # the CRC
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

    if failures:
        print("%d checks failed" % len(failures))
        return 1
    print("all cov checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
