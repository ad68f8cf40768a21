#!/usr/bin/env python3
"""ctest cov-shapes: every common fuzzing-harness shape measured right per input, or refused
(docs/cov.md, "Harness shapes"; issue 29).

A second real target, Debian's libyaml 0.2.5 (`apt-get source libyaml`; exit 77 when it cannot
be had), parsed by one LLVMFuzzerTestOneInput (shapes/yaml_toi.c), built with ptcall-cc (early
placement) five ways: its own main given the input by @@, the same by stdin, libFuzzer's main
(-fsanitize=fuzzer, the clang ptcall-cc wraps), ptcall's fuzz driver, and an AFL++
persistent/deferred harness (shapes/yaml_afl.c: __AFL_INIT, __AFL_LOOP, TESTCASE_BUF/LEN).
Each input's set of libyaml and harness functions must equal llvm-cov's (clang
-fprofile-instr-generate, the same sources, one run per input). Then: a stripped harness
whose main is not instrumented is refused (cannot tell who calls TestOneInput); a forgotten @@
is said; a harness that runs TestOneInput twice per input is said; @@ twice is refused;
libFuzzer's main is forked at the harness's entry (its start-up runs once for all inputs).

usage: shapes_test.py BUILD_DIR SOURCE_DIR WORK_DIR
"""
import json
import os
import shutil
import subprocess
import sys
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import llvmcov_compare  # noqa: E402  (llvm_sets: llvm-cov's per-input function sets)

build, src, work = (os.path.abspath(a) for a in sys.argv[1:4])
LLVM_BIN = os.environ.get("PTCALL_LLVM_BIN", "/usr/lib/llvm-14/bin")
PTCALL = os.path.join(build, "tools", "ptcall")
CC = os.path.join(build, "bin", "ptcall-cc")
HERE = os.path.join(src, "test", "cov", "shapes")
LIB = ["api", "reader", "scanner", "parser", "loader"]
# the functions compared: libyaml's and the harness's TestOneInput (not each shape's main)
FILES = {s + ".c" for s in LIB} | {"yaml_toi.c"}
DEFS = ["-DYAML_VERSION_MAJOR=0", "-DYAML_VERSION_MINOR=2", "-DYAML_VERSION_PATCH=5",
        '-DYAML_VERSION_STRING="0.2.5"']
failures = []


def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        failures.append(what)


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def fetch():
    ysrc = os.path.join(work, "src")
    if os.path.exists(os.path.join(ysrc, "include", "yaml.h")):
        return ysrc
    dl = os.path.join(work, "dl")
    shutil.rmtree(dl, ignore_errors=True)
    os.makedirs(dl)
    r = subprocess.run(["apt-get", "source", "--download-only", "libyaml"], cwd=dl,
                       capture_output=True)
    tars = [f for f in os.listdir(dl) if f.startswith("libyaml_") and ".orig.tar" in f]
    if r.returncode or not tars:
        print("cov-shapes: cannot fetch Debian's libyaml sources (apt-get source libyaml; "
              "needs deb-src)")
        sys.exit(77)
    tmp = ysrc + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    sh(["tar", "xf", os.path.join(dl, tars[0]), "-C", tmp, "--strip-components=1"])
    os.rename(tmp, ysrc)
    return ysrc


def build_all(ysrc):
    inc = ["-I" + os.path.join(ysrc, "include")]
    env = dict(os.environ, PTCALL_PLACEMENT="early")
    out = {}
    for kind, cc, flags in (("pt", CC, []),
                            ("llvm", os.path.join(LLVM_BIN, "clang"),
                             ["-fprofile-instr-generate", "-fcoverage-mapping"])):
        d = os.path.join(work, kind)
        os.makedirs(d, exist_ok=True)
        objs = []
        for s in LIB:
            o = os.path.join(d, s + ".o")
            sh([cc, "-O1", "-g"] + flags + DEFS + inc +
               ["-c", os.path.join(ysrc, "src", s + ".c"), "-o", o], env=env)
            objs.append(o)
        out[kind] = (d, objs)
    d, objs = out["pt"]
    toi = os.path.join(HERE, "yaml_toi.c")

    def link(name, extra):
        exe = os.path.join(d, name)
        r = subprocess.run([CC, "-O1", "-g"] + DEFS + inc + [toi] + extra + objs +
                           ["-o", exe], env=env, capture_output=True, text=True)
        check(r.returncode == 0, "ptcall-cc builds %s: %s" % (name, r.stderr.strip()[-300:]))
        return exe
    t = {
        "own": link("own", [os.path.join(HERE, "yaml_main.c")]),
        "libfuzzer": link("libfuzzer", ["-fsanitize=fuzzer", os.path.join(HERE, "lf_init.c")]),
        "driver": link("driver", ["-fptcall-fuzz-driver"]),
        "afl": link("afl", [os.path.join(HERE, "yaml_afl.c")]),
    }
    # the ambiguous one: main compiled without ptcall, symbols stripped
    mo = os.path.join(d, "plain_main.o")
    sh([os.path.join(LLVM_BIN, "clang"), "-O1", "-c", os.path.join(HERE, "yaml_main.c"),
        "-o", mo])
    t["stripped"] = link("stripped", [mo])
    sh(["strip", "-s", t["stripped"]])
    ld, lobjs = out["llvm"]
    t["llvm"] = os.path.join(ld, "own")
    sh([os.path.join(LLVM_BIN, "clang"), "-O1", "-g", "-fprofile-instr-generate",
        "-fcoverage-mapping"] + DEFS + inc + [toi, os.path.join(HERE, "yaml_main.c")] +
       lobjs + ["-o", t["llvm"]])
    return t


CORPUS = [
    b"a: 1\nb: [x, y]\n",
    b"- foo\n- bar: {k: v}\n",
    b'key: "unterminated\n',
    b"%YAML 1.1\n---\n!!str &a x\n--- *a\n",
    b"{a: [1, 2, {b: c}], d: |\n  text\n}\n",
    b": : :\n\t-",
    b"x",
    b"? complex\n: value\n...\n",
    b"%TAG !e! tag:example.com,2000:\n--- !e!foo 'single ''quoted'''\n",
    b"anchors: &x [1]\nref: *y\n",
    b"> folded\n  more\n\n",
    b"\xef\xbb\xbf- utf8 bom\n",
    b"\xff\xfe-\x00 \x00a\x00\n\x00",
    b"[unclosed, {\n",
]


def cov_run(target_argv, name, extra=(), env=None):
    out = os.path.join(work, name + ".ptcov")
    if os.path.exists(out):
        os.unlink(out)
    r = subprocess.run([PTCALL, "cov", "run", "-o", out, "--corpus", corpus] + list(extra) +
                       ["--"] + target_argv, capture_output=True, text=True, timeout=300,
                       env=env)
    return r, out


def sets_of(ptcov):
    rep = json.loads(sh([PTCALL, "cov", "report", "--format", "json", ptcov],
                        capture_output=True, text=True).stdout)
    keys = [llvmcov_compare.key(f["file"], f["linkage_name"]) for f in rep["functions"]]
    return {os.path.basename(i["name"]): ({keys[k] for k in i["functions"]
                                            if keys[k].split(":")[0] in FILES}, i)
            for i in rep["inputs"]}


def check_harness_fork(t, inputs, theirs):
    """libFuzzer's main forked at the harness (docs/cov.md, "The fork server at the harness"):
    its start-up (LLVMFuzzerInitialize, shapes/lf_init.c, logs each) runs once for all the
    inputs, counted in none of them; one process per input (--exec) runs it per input. Each
    input's set still equals llvm-cov's, and an input takes a quarter of the time or less (12
    to 20 times less measured alone; 8.6 times less on a loaded CI machine, where a tenth
    failed: the count of start-ups above is the exact check, the time a coarse one)."""
    res = {}
    for mode, extra in (("fork", ["--jobs", "1"]), ("exec", ["--exec", "--jobs", "1"])):
        log = os.path.join(work, "init-%s.log" % mode)
        if os.path.exists(log):
            os.unlink(log)
        r, out = cov_run([t["libfuzzer"]], "lf-" + mode, extra,
                         env=dict(os.environ, SHAPES_INIT_LOG=log))
        inits = open(log).read().count("init\n") if os.path.exists(log) else 0
        rep = json.loads(sh([PTCALL, "cov", "report", "--format", "json", out],
                            capture_output=True, text=True).stdout) if r.returncode == 0 else {}
        ins = rep.get("inputs", [])
        us = sorted(i["exec_us"] for i in ins)
        names = [f["name"] for f in rep.get("functions", [])]
        init_in = sum("LLVMFuzzerInitialize" in [names[k] for k in i["functions"]] for i in ins)
        rate = [l for l in r.stderr.splitlines() if " inputs in " in l]
        print("  %s: %d inputs, LLVMFuzzerInitialize ran %d times, median %d us per input; %s"
              % (mode, len(ins), inits, us[len(us) // 2] if us else -1,
                 rate[-1].split(": ", 1)[1][:60] if rate else ""))
        res[mode] = (r.returncode, inits, us[len(us) // 2] if us else 0, init_in)
    check(res["fork"][:2] == (0, 1) and res["fork"][3] == 0,
          "forked at the harness: libFuzzer's start-up ran once for %d inputs, in no input's "
          "set (status, runs, -, inputs with it: %s)" % (len(inputs), res["fork"]))
    check(res["exec"][:2] == (0, len(inputs)) and res["exec"][3] == len(inputs),
          "one process per input: its start-up ran for each (%s)" % (res["exec"],))
    check(res["fork"][2] * 4 <= res["exec"][2],
          "an input forked at the harness takes a quarter of the time or less: %d us against "
          "%d us" % (res["fork"][2], res["exec"][2]))
    ours = sets_of(os.path.join(work, "lf-fork.ptcov"))
    bad = [n for n, _ in inputs if n not in ours or ours[n][0] != theirs[n]]
    check(not bad, "forked at the harness: %d of %d inputs' sets equal llvm-cov's"
          % (len(inputs) - len(bad), len(inputs)))


def check_reach(ptcov):
    """Reachability from the harness (docs/cov.md, "Reachability and the frontier"): the
    harness only parses (yaml_parser_load over a string), so libyaml's other entry points
    (the emitter, the document and event builders, yaml_parser_scan, the file input) are
    unreachable from it, never "not reached"; what the parser leaves unreached is reachable,
    and yaml_file_read_handler (address taken, of the read handler's type) is reachable
    through the reader's call by pointer only. Before, the blockers list named 2 small error
    setters and nothing told these apart."""
    rep = json.loads(sh([PTCALL, "cov", "report", "--format", "json", "--frontier", ptcov],
                        capture_output=True, text=True).stdout)
    fs = rep.get("functions", [])
    reach = rep.get("reachability", {})
    cls = reach.get("classes", [])
    never = [(f["name"], os.path.basename(f["file"]), cls[i] if i < len(cls) else None)
             for i, f in enumerate(fs) if i in set(rep.get("never_reached", []))]
    api_reachable = {"yaml_stack_extend", "yaml_file_read_handler"}
    wrong = [(n, c) for n, file, c in never
             if (file == "api.c" and n not in api_reachable or n == "yaml_parser_scan")
             != (c == "unreachable")]
    unreach = sum(c == "unreachable" for _, _, c in never)
    print("  libyaml: %d never reached: %d unreachable, %d reachable; frontier %s" %
          (len(never), unreach, len(never) - unreach,
           [fs[x["function"]]["name"] for x in reach.get("frontier", [])[:4]]))
    check(reach.get("indirect_calls") is True and not wrong and unreach >= 30,
          "libyaml: the entry points the harness never calls (%d) are unreachable, what the "
          "parser leaves is reachable: wrong %s" % (unreach, wrong))
    fr = {fs[x["function"]]["name"]: x for x in reach.get("frontier", [])}
    rh = fr.get("yaml_file_read_handler", {})
    check(rh.get("by_pointer_only") is True and
          [fs[c]["name"] for c in rh.get("callers", [])] == ["yaml_parser_update_raw_buffer"],
          "libyaml: yaml_file_read_handler is reached by pointer from the reader: %s" % rh)
    top = reach.get("frontier", [{}])[0]
    check(top.get("insns_behind", 0) > 100 and "error" not in fs[top["function"]]["name"],
          "libyaml: the frontier's first row is parser code, not an error setter: %s" % top)


def main():
    global corpus
    os.makedirs(work, exist_ok=True)
    for tool in ("clang", "llvm-profdata", "llvm-cov"):
        if not os.access(os.path.join(LLVM_BIN, tool), os.X_OK):
            print("cov-shapes: %s not found in %s" % (tool, LLVM_BIN))
            return 77
    t = build_all(fetch())
    corpus = os.path.join(work, "corpus")
    shutil.rmtree(corpus, ignore_errors=True)
    os.makedirs(corpus)
    inputs = []
    for i, data in enumerate(CORPUS):
        p = os.path.join(corpus, "in%02d" % i)
        with open(p, "wb") as f:
            f.write(data)
        inputs.append(("in%02d" % i, p))
    args = types.SimpleNamespace(
        work=os.path.join(work, "llvmcmp"), llvm_target=t["llvm"], timeout=5000,
        llvm_profdata=os.path.join(LLVM_BIN, "llvm-profdata"),
        llvm_cov=os.path.join(LLVM_BIN, "llvm-cov"))
    theirs = {n: {k for k in s if k.split(":")[0] in FILES}
              for n, s in llvmcov_compare.llvm_sets(args, inputs).items()}
    check(all(theirs[n] for n, _ in inputs), "llvm-cov has a set for every input")

    shapes = [
        ("own main, @@", [t["own"], "@@"], "a harness with its own main"),
        ("own main, stdin", [t["own"]], "a harness with its own main"),
        ("libFuzzer's main", [t["libfuzzer"]], "libFuzzer's main"),
        ("libFuzzer's main, @@", [t["libfuzzer"], "-runs=1", "@@"], "libFuzzer's main"),
        ("ptcall's driver", [t["driver"]], "ptcall's fuzz driver"),
        ("ptcall's driver, @@ among flags", [t["driver"], "-x=1", "@@", "-y=2"],
         "ptcall's fuzz driver"),
        ("AFL++ persistent", [t["afl"]], "__AFL_LOOP"),
    ]
    for i, (label, argv, said) in enumerate(shapes):
        r, out = cov_run(argv, "shape%d" % i)
        check(r.returncode == 0 and said in r.stderr and "other than once" not in r.stderr
              and "never read" not in r.stderr,
              "%s: run, its shape said (%s): %d %s" % (label, said, r.returncode,
                                                       r.stderr.strip()[-600:]))
        if r.returncode:
            continue
        table = sh([PTCALL, "cov", "report", out], capture_output=True, text=True).stdout
        check("  the target: " in table and said in table,
              "%s: cov report says how it ran (the HARNESS record)" % label)
        ours = sets_of(out)
        bad = [n for n, _ in inputs
               if n not in ours or ours[n][0] != theirs[n] or ours[n][1]["outcome"] != "exited"]
        for n in bad[:3]:
            a = ours.get(n, (set(), {}))[0]
            print("  %s: only ptcall %s; only llvm-cov %s" % (n, sorted(a - theirs[n]),
                                                              sorted(theirs[n] - a)))
        check(not bad, "%s: %d of %d inputs' function sets equal llvm-cov's" %
              (label, len(inputs) - len(bad), len(inputs)))

    check_reach(os.path.join(work, "shape0.ptcov"))
    # the JSON view's harness (docs/schema/cov-report.schema.json)
    hs = []
    for i in (0, 2, 4, 6):
        rep = json.loads(sh([PTCALL, "cov", "report", "--format", "json",
                             os.path.join(work, "shape%d.ptcov" % i)],
                            capture_output=True, text=True).stdout)
        h = rep.get("harness", {})
        hs.append((h.get("shape"), h.get("afl_loop"), h.get("afl_init")))
    check(hs == [("own_main", False, False), ("libfuzzer", False, False),
                 ("driver", False, False), ("own_main", True, True)],
          "the JSON report's harness for own main, libFuzzer, driver, AFL++: %s" % hs)
    # libFuzzer's main stripped: told by the weak references its runtime leaves in .dynsym
    lfs = os.path.join(work, "pt", "libfuzzer-stripped")
    shutil.copyfile(t["libfuzzer"], lfs)
    os.chmod(lfs, 0o755)
    sh(["strip", "-s", lfs])
    r, out = cov_run([lfs], "lf-stripped")
    check(r.returncode == 0 and "the target: libFuzzer's main" in r.stderr,
          "a stripped libFuzzer build is told: %s" % r.stderr.strip()[-300:])
    # refused: who calls TestOneInput cannot be told
    r, out = cov_run([t["stripped"], "@@"], "stripped")
    check(r.returncode == 1 and "cannot tell who calls LLVMFuzzerTestOneInput" in r.stderr
          and not os.path.exists(out), "a stripped harness with an uninstrumented main is "
          "refused: %d %s" % (r.returncode, r.stderr.strip()))
    # a forgotten @@: the target reads a fixed file, never its stdin
    fixed = inputs[0][1]
    r, out = cov_run([t["own"], fixed], "forgot")
    check("never read its standard input" in r.stderr and "put @@ where the path goes"
          in r.stderr, "a forgotten @@ is said: %s" % r.stderr.strip()[-400:])
    # TestOneInput twice per input (the input and a fixed file): said, per input and in all
    r, out = cov_run([t["own"], "@@", fixed], "twice")
    check("ran LLVMFuzzerTestOneInput 2 times" in r.stderr and
          "%d inputs ran LLVMFuzzerTestOneInput other than once (0 never, %d more than once"
          % (len(inputs), len(inputs)) in r.stderr,
          "TestOneInput run twice per input is said: %s" % r.stderr.strip()[-500:])
    # libFuzzer's main told to run each file twice (-runs=2): one process per input (--exec)
    # runs it twice, said for every input; forked at the harness, a second call ends the
    # child, so each input runs once
    r, out = cov_run([t["libfuzzer"], "-runs=2", "@@"], "lf-runs2", ["--exec"])
    check("ran LLVMFuzzerTestOneInput 2 times" in r.stderr and
          "%d inputs ran LLVMFuzzerTestOneInput other than once" % len(inputs) in r.stderr,
          "libFuzzer's main running each input twice is said: %s" % r.stderr.strip()[-300:])
    r, out = cov_run([t["libfuzzer"], "-runs=2", "@@"], "lf-runs2-fs")
    check(r.returncode == 0 and "other than once" not in r.stderr and "forked at the "
          "harness" in r.stderr, "forked at the harness, -runs=2 runs each input once: %s"
          % r.stderr.strip()[-300:])
    check_harness_fork(t, inputs, theirs)
    # forked at the harness, but the harness never runs (-help=1): one line, nothing run
    r, out = cov_run([t["libfuzzer"], "-help=1", "@@"], "lf-help")
    check(r.returncode == 1 and "the program ended without calling LLVMFuzzerTestOneInput"
          in r.stderr and not os.path.exists(out),
          "a harness never called is said, no input run: %d %s" % (r.returncode,
                                                                    r.stderr.strip()[-300:]))
    # @@ twice, and @@ for a harness that reads its input through __AFL_FUZZ_TESTCASE_*
    r, out = cov_run([t["own"], "@@", "@@"], "twice-at")
    check(r.returncode == 1 and "@@ is in the command 2 times" in r.stderr,
          "@@ twice refused: %s" % r.stderr.strip())
    r, out = cov_run([t["afl"], "@@"], "afl-at")
    check(r.returncode == 1 and "remove @@" in r.stderr,
          "@@ with __AFL_FUZZ_TESTCASE_BUF refused: %s" % r.stderr.strip())
    # libFuzzer's main and a crash: a signal, as in every shape (libFuzzer's own handler made
    # it exit status 77), no artifact in the current directory
    crash = os.path.join(work, "pt", "crash")
    sh([CC, "-O1", "-g", "-fsanitize=fuzzer", os.path.join(HERE, "crash_toi.c"), "-o", crash],
       env=dict(os.environ, PTCALL_PLACEMENT="early"))
    cc = os.path.join(work, "crash-corpus")
    cwd = os.path.join(work, "crash-cwd")
    for d in (cc, cwd):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    for name, data in (("a", b"crash!"), ("b", b"fine")):
        with open(os.path.join(cc, name), "wb") as f:
            f.write(data)
    out = os.path.join(work, "crash.ptcov")
    r = subprocess.run([PTCALL, "cov", "run", "-o", out, "--corpus", cc, "--", crash],
                       capture_output=True, text=True, cwd=cwd, timeout=120)
    rep = json.loads(sh([PTCALL, "cov", "report", "--format", "json", out],
                        capture_output=True, text=True).stdout) if r.returncode == 0 else {}
    names = [f["name"] for f in rep.get("functions", [])]
    got = {os.path.basename(i["name"]): (i["outcome"], i["value"],
                                         sorted(names[k] for k in i["functions"]))
           for i in rep.get("inputs", [])}
    check(r.returncode == 0 and not os.listdir(cwd) and "a" in got and
          got["a"][:2] == ("signal", 6),
          "libFuzzer's main: abort() is recorded as signal 6 (%s), nothing left in the current "
          "directory (%s)" % (got.get("a"), os.listdir(cwd)))
    check(r.returncode == 0 and "boom" in got.get("a", ("", 0, []))[2] and
          got.get("b") == ("exited", 0, ["LLVMFuzzerTestOneInput"]),
          "libFuzzer's main: each input's functions (%s)" % got)
    print("%d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
