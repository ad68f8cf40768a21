#!/usr/bin/env python3
"""The exports of real recordings in real viewers, and the JSON outputs against their schemas.

  viewers.py viewers BUILD SRC WORK ARTEFACTS   (ctest outputs-viewers)
      Compiles test/e2e/programs threads, recursion, fork, longjmp (C), exceptions (C++) and a
      program whose functions are named with < > & " ' (C++), with BUILD's ptcall-cc/ptcall-c++,
      records each with BUILD's ptcall, exports chrome, speedscope, folded (calls, self) and svg
      (calls, self), and runs test/outputs/viewer_test.py on them in one headless Chromium:
      speedscope (chrome, speedscope, folded) and svg, each against `ptcall report --format
      json` of the same trace.
      Screenshots and browser logs go to ARTEFACTS/<program>-<export>/.
  viewers.py schemas BUILD SRC WORK             (ctest outputs-schemas)
      Writes every JSON output (report of one run and of several, diff, export chrome and
      jsonl, report --meta) of real recordings, timed and untimed, and validates each against
      docs/schema/*.schema.json with viewer_test.py schema; then breaks one output per schema
      and checks that the validation fails.

Exit status: 0 passed, 1 failed, 77 skipped (Chromium, chromedriver, selenium, speedscope or
python3-jsonschema missing: a line starting with 'SKIP:' says which; scripts/setup.sh installs
them all).
"""
import json
import os
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))
DEBIAN_PYTHON = "/usr/bin/python3"

# Functions whose display names carry the characters that break markup and JSON when they are
# not escaped: a template argument list with '&', operator<, a literal operator with '"', and a
# C function whose symbol (an asm label) is an HTML tag pair.
HOSTILE_CPP = r"""
// Functions whose display names carry < > & " ' (see test/outputs/viewers.py).
#define NOINLINE __attribute__((noinline))
static volatile int sink;
struct A { int v; };
template <class T> NOINLINE void f(T x) { sink += x; }
NOINLINE bool operator<(const A &a, const A &b) { return a.v < b.v; }
NOINLINE unsigned long long operator"" _q(unsigned long long x) { return x + sink; }
extern "C" NOINLINE void script_tag(void) __asm__("</title><script>alert('x&y')</script>");
extern "C" void script_tag(void) { sink += 7; }
int main()
{
    int i = 1;
    f<int &>(i);
    A a{1}, b{2};
    sink += a < b;
    sink += 42_q;
    script_tag();
    return 0;
}
"""
HOSTILE_CHARS = set("<>&\"'")

failures = []


def say(*a):
    print(*a, flush=True)


def check(cond, what):
    say(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)
    return cond


def run(cmd, ok=(0,), **kw):
    """Runs cmd, prints it; returns the CompletedProcess (text)."""
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    dt = time.monotonic() - t0
    shown = " ".join(os.path.relpath(c) if os.path.isabs(c) and len(c) > 40 else c for c in map(str, cmd))
    if p.returncode not in ok:
        say(f"command failed ({p.returncode}, {dt:.1f} s): {shown}\n{p.stderr.strip()[-2000:]}")
    return p


def viewer_python():
    """The python3 that sees Debian's python3-selenium / python3-jsonschema."""
    return DEBIAN_PYTHON if os.path.exists(DEBIAN_PYTHON) else sys.executable


def has_module(py, mod):
    return subprocess.run([py, "-c", f"import {mod}"], capture_output=True).returncode == 0


class Build:
    def __init__(self, build, src, work):
        self.build, self.src, self.work = build, src, work
        self.ptcall = os.path.join(build, "tools", "ptcall")
        self.cc = os.path.join(build, "bin", "ptcall-cc")
        self.cxx = os.path.join(build, "bin", "ptcall-c++")
        self.progs = os.path.join(src, "test", "e2e", "programs")
        for exe in (self.ptcall, self.cc, self.cxx):
            if not os.access(exe, os.X_OK):
                raise SystemExit(f"FAIL: {exe} is missing: build the project first")

    def compile(self, name, source, cxx=False):
        exe = os.path.join(self.work, name)
        cmd = [self.cxx if cxx else self.cc, "-O1", "-g", "-I", self.progs, source, "-o", exe]
        if not cxx:
            cmd.append("-lpthread")
        return exe if run(cmd).returncode == 0 else None

    def record(self, exe, name, *opts, args=()):
        trace = os.path.join(self.work, f"{name}.ptc")
        p = run([self.ptcall, "record", "-q", "-o", trace, *opts, "--", exe, *args])
        return trace if p.returncode == 0 and os.path.isfile(trace) else None

    def ptc(self, *args, out=None, ok=(0,)):
        """ptcall ARGS; with out, stdout is written to that file. Returns the process."""
        p = run([self.ptcall, *map(str, args)], ok=ok)
        if out is not None and p.returncode in ok:
            with open(out, "w", encoding="utf-8") as f:
                f.write(p.stdout)
        return p

    def programs(self, with_hostile=True):
        """Compiles and records the programs: {name: trace}. exceptions.cpp is optional."""
        traces = {}
        for name in ("threads", "recursion", "fork", "longjmp"):
            exe = self.compile(name, os.path.join(self.progs, f"{name}.c"))
            trace = exe and self.record(exe, name)
            check(trace is not None, f"{name}.c compiled with ptcall-cc and recorded")
            if trace:
                traces[name] = trace
        exe = self.compile("exceptions", os.path.join(self.progs, "exceptions.cpp"), cxx=True)
        trace = exe and self.record(exe, "exceptions")
        if trace:
            traces["exceptions"] = trace
            say("ok   exceptions.cpp compiled with ptcall-c++ and recorded")
        else:
            say("note exceptions.cpp did not compile or record here: left out")
        if with_hostile:
            src = os.path.join(self.work, "hostile.cpp")
            with open(src, "w") as f:
                f.write(HOSTILE_CPP)
            exe = self.compile("hostile", src, cxx=True)
            trace = exe and self.record(exe, "hostile")
            check(trace is not None, "hostile.cpp (names with < > & \" ') compiled with ptcall-c++ and recorded")
            if trace:
                traces["hostile"] = trace
        return traces


# ---------------------------------------------------------------------------------------------
# outputs-viewers

def skip_viewers(src):
    chromium = os.environ.get("PTCALL_CHROMIUM", "/usr/bin/chromium")
    driver = os.environ.get("PTCALL_CHROMEDRIVER", "/usr/bin/chromedriver")
    speedscope = os.path.join(src, "web", "node_modules", "speedscope", "dist", "release", "index.html")
    missing = []
    if not os.access(chromium, os.X_OK):
        missing.append(f"{chromium} (Debian package chromium)")
    if not os.access(driver, os.X_OK):
        missing.append(f"{driver} (Debian package chromium-driver)")
    if not has_module(viewer_python(), "selenium"):
        missing.append(f"selenium for {viewer_python()} (Debian package python3-selenium)")
    if not os.path.isfile(speedscope):
        missing.append(f"{speedscope} (npm ci --prefix web)")
    return missing


def hostile_files(names, chrome_path, svg_path):
    """The exports of the hostile names, read without a browser: JSON parses and keeps each name
    byte for byte; the svg parses as XML, holds only the flame graph's elements, and shows each
    name as text (its frame's data-name, <title> and label)."""
    hostile = [n for n in names if HOSTILE_CHARS & set(n)]
    check(len(hostile) >= 4, f"hostile: the report names {len(hostile)} functions with < > & \" ': {hostile}")
    try:
        with open(chrome_path, encoding="utf-8") as f:
            doc = json.load(f)
        ok = True
    except ValueError as e:
        ok = False
        check(False, f"hostile: {os.path.basename(chrome_path)} parses as JSON: {e}")
    if ok:
        begun = {e.get("name") for e in doc["traceEvents"] if e.get("ph") == "B"}
        check(begun == set(names), f"hostile: {os.path.basename(chrome_path)} parses as JSON and names "
              f"every function as the report does" + ("" if begun == set(names) else
                                                      f": {sorted(begun ^ set(names))}"))
    sys.path.insert(0, HERE)
    from viewer_test import short_name  # the svg's names: without C++ parameter lists
    try:
        root = ET.parse(svg_path).getroot()
    except ET.ParseError as e:
        check(False, f"hostile: {os.path.basename(svg_path)} parses as XML: {e}")
        return
    ns = "{http://www.w3.org/2000/svg}"
    kinds = {el.tag.replace(ns, "") for el in root.iter()}
    from viewer_test import svg_script_text  # ptcall's own script, the one allowed
    scripts = [el.text for el in root.iter(ns + "script")]
    check(kinds <= {"svg", "style", "rect", "text", "g", "title", "script"} and
          all(t == svg_script_text() for t in scripts) and len(scripts) <= 1,
          f"hostile: {os.path.basename(svg_path)} parses as XML and holds only svg, style, rect, "
          f"text, g, title elements and ptcall's own script: {sorted(kinds)}")
    shown = {}
    for g in root.iter(ns + "g"):
        n = g.get("data-name")
        t = g.find(ns + "title")
        label = g.find(ns + "text")
        shown[n] = ((t.text or "") if t is not None else None, (label.text or "") if label is not None else None)
    want = {short_name(n) for n in hostile}
    bad = [n for n in want if n not in shown or not (shown[n][0] or "").startswith(n + " (")
           or (shown[n][1] is not None and shown[n][1] != n and not shown[n][1].endswith(".."))]
    check(not bad, f"hostile: the svg shows {sorted(want)} as text in data-name, <title> and label"
          + (f": not {bad}" if bad else ""))


def viewers(b, artefacts):
    missing = skip_viewers(b.src)
    if missing:
        say("SKIP: outputs-viewers needs " + "; ".join(missing) + ": run scripts/setup.sh")
        return SKIP
    t0 = time.monotonic()
    traces = b.programs()
    say(f"recorded {len(traces)} programs in {time.monotonic() - t0:.1f} s")
    jobs = []
    for name, trace in traces.items():
        ex = lambda suffix: os.path.join(b.work, f"{name}.{suffix}")
        rep = ex("report.json")
        made = b.ptc("report", trace, "--format", "json", out=rep).returncode == 0
        for fmt, suffix, extra in (("chrome", "trace.json", ()),
                                   ("speedscope", "speedscope.json", ()),
                                   ("folded", "calls.folded", ("--weight", "calls")),
                                   ("folded", "self.folded", ("--weight", "self")),
                                   ("svg", "calls.svg", ("--weight", "calls")),
                                   ("svg", "self.svg", ("--weight", "self"))):
            made &= b.ptc("export", trace, "--format", fmt, *extra, "-o", ex(suffix)).returncode == 0
        if not check(made, f"{name}: report --format json, export chrome, folded and svg (calls, self)"):
            continue
        art = lambda what: os.path.join(artefacts, f"{name}-{what}")
        jobs += [
            {"name": f"{name} chrome in speedscope", "mode": "speedscope", "profile": ex("trace.json"),
             "report": rep, "artefacts": art("chrome-speedscope")},
            {"name": f"{name} speedscope format in speedscope", "mode": "speedscope",
             "profile": ex("speedscope.json"), "report": rep, "chrome": ex("trace.json"),
             "artefacts": art("speedscope-format")},
            {"name": f"{name} folded by self time in speedscope", "mode": "speedscope",
             "profile": ex("self.folded"), "report": rep, "folded_weight": "self",
             "chrome": ex("trace.json"), "artefacts": art("folded-self-speedscope")},
            {"name": f"{name} folded by calls in speedscope", "mode": "speedscope",
             "profile": ex("calls.folded"), "report": rep, "folded_weight": "calls",
             "artefacts": art("folded-calls-speedscope")},
            {"name": f"{name} svg by self time", "mode": "svg", "svg": ex("self.svg"), "report": rep,
             "tree": ex("self.folded"), "chrome": ex("trace.json"), "artefacts": art("svg-self")},
            {"name": f"{name} svg by calls", "mode": "svg", "svg": ex("calls.svg"), "report": rep,
             "tree": ex("calls.folded"), "artefacts": art("svg-calls")},
        ]
        if name == "hostile":
            with open(rep, encoding="utf-8") as f:
                names = [fn["name"] for fn in json.load(f)["functions"]]
            hostile_files(names, ex("trace.json"), ex("calls.svg"))
    jobs_file = os.path.join(b.work, "viewer-jobs.json")
    with open(jobs_file, "w") as f:
        json.dump({"jobs": jobs}, f, indent=1)
    cmd = [viewer_python(), os.path.join(HERE, "viewer_test.py"), "batch", jobs_file,
           "--artefacts", artefacts, "--timeout", "300"]
    say("run: " + " ".join(cmd))
    t1 = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    with open(os.path.join(artefacts, "viewer_test.log"), "w") as f:
        f.write(p.stdout)
    # the checks that failed, and the summary; the whole log is in ARTEFACTS/viewer_test.log
    for line in p.stdout.splitlines():
        if line.startswith(("== ", "FAIL", "ERROR", "batch:", "  ok", "  FAIL", "  ERROR", "note")):
            say(line)
    say(f"viewer_test.py batch: exit {p.returncode} after {time.monotonic() - t1:.1f} s "
        f"(log: {os.path.join(artefacts, 'viewer_test.log')})")
    check(p.returncode == 0, f"viewer_test.py batch: {len(jobs)} jobs pass")
    return 0


# ---------------------------------------------------------------------------------------------
# outputs-schemas

def schemas(b):
    py = viewer_python()
    if not has_module(py, "jsonschema"):
        say(f"SKIP: outputs-schemas needs python3-jsonschema for {py}: run scripts/setup.sh")
        return SKIP
    sdir = os.path.join(b.src, "docs", "schema")
    traces = b.programs(with_hostile=False)
    w = lambda n: os.path.join(b.work, n)
    threads = traces.get("threads")
    if not threads:
        return 0
    # more runs: a second run of threads, an untimed one, a truncated one
    threads2 = b.record(os.path.join(b.work, "threads"), "threads2")
    untimed = b.record(os.path.join(b.work, "threads"), "untimed", "--no-timestamps")
    fork_untimed = b.record(os.path.join(b.work, "fork"), "fork-untimed", "--no-timestamps")
    check(bool(threads2 and untimed and fork_untimed), "threads recorded again, and untimed (--no-timestamps)")
    # posix_spawn: a SPAWN chunk (report's totals.spawns, chrome's instant "spawn")
    faulty = b.compile("faulty", os.path.join(b.src, "test", "faults", "faulty.c"))
    spawn = faulty and b.record(faulty, "spawn", args=("spawn", "50"))
    check(spawn is not None, "test/faults/faulty.c compiled and `faulty spawn 50` recorded")
    cut = w("cut.ptc")
    with open(threads, "rb") as f:
        data = f.read()
    with open(cut, "wb") as f:
        f.write(data[:len(data) * 2 // 3])
    # a synthetic trace with gaps, lost events, repairs, unwinds and a fork (test/decoder)
    gen = os.path.join(b.build, "test", "decoder", "ptc_testgen")
    golden = None
    if os.access(gen, os.X_OK) and run([gen, "golden", w("golden.ptc")]).returncode == 0:
        golden = w("golden.ptc")
    timed = [t for t in traces.values()] + [t for t in (golden, spawn) if t]
    every = timed + [t for t in (untimed, fork_untimed) if t]

    outputs = {}  # schema file -> [(output file, pointer)]

    def out(schema, name, *args, ok=(0,), pointer=""):
        p = b.ptc(*args, out=w(name), ok=ok)
        if check(p.returncode in ok and os.path.getsize(w(name)) > 0, f"wrote {name}: ptcall {' '.join(map(os.path.basename, map(str, args)))}"):
            outputs.setdefault(schema + pointer, []).append(w(name))

    base = lambda t: os.path.basename(t)[:-4]
    for t in every:
        out("report.schema.json", f"{base(t)}.report.json", "report", t, "--format", "json")
        out("events-jsonl.schema.json", f"{base(t)}.jsonl", "export", t, "--format", "jsonl")
        out("report-paths.schema.json", f"{base(t)}.paths.json", "report", t, "--paths", "--format", "json")
        out("report.schema.json", f"{base(t)}.by-thread.json", "report", t, "--by", "thread", "--format", "json")
        out("report.schema.json", f"{base(t)}.filtered.json", "report", t, "--max-depth", "2", "--format", "json")
    for t in every:
        out("bandwidth.schema.json", f"{base(t)}.bandwidth.json", "bandwidth", t, "--format", "json")
    for t in timed:
        out("chrome-trace.schema.json", f"{base(t)}.trace.json", "export", t, "--format", "chrome")
        out("bandwidth.schema.json", f"{base(t)}.budget.json", "bandwidth", t, "--format", "json",
            "--drain", "1M", "--aux", "4K", "--only", "*")
    # --meta objects, damage (salvaged), filters
    for t in (threads, untimed):
        meta = w(f"{base(t)}.meta.json")
        if check(b.ptc("report", t, "--format", "csv", "--meta", meta).returncode == 0 and os.path.isfile(meta),
                 f"wrote {os.path.basename(meta)}: ptcall report --format csv --meta"):
            outputs.setdefault("report.schema.json#/$defs/meta", []).append(meta)
    out("report.schema.json", "cut.report.json", "report", cut, "--format", "json", "--salvage")
    out("chrome-trace.schema.json", "cut.trace.json", "export", cut, "--format", "chrome", "--salvage")
    out("chrome-trace.schema.json", "fork-depth2.trace.json", "export", traces.get("fork", threads),
        "--format", "chrome", "--max-depth", "2")
    out("events-jsonl.schema.json", "cut.jsonl", "export", cut, "--format", "jsonl", "--salvage")
    # several runs (format_version 2), diff
    if threads2 and untimed:
        runs = "report-runs.schema.json"
        out(runs, "runs.report.json", "report", threads, threads2, "--format", "json",
            "--stat", "mean,min,max,stddev")
        out(runs, "runs-mixed.report.json", "report", threads, untimed, "--format", "json",
            "--stat", "mean,stddev")
        out(runs, "runs-salvaged.report.json", "report", threads, cut, w("threads"), "--format", "json",
            "--salvage")
        meta = w("runs.meta.json")
        if check(b.ptc("report", threads, threads2, "--format", "csv", "--meta", meta).returncode == 0,
                 "wrote runs.meta.json: ptcall report A B --format csv --meta"):
            outputs.setdefault(runs + "#/$defs/meta", []).append(meta)
        out("diff.schema.json", "diff.json", "diff", threads, threads2, "--format", "json")
        out("diff.schema.json", "diff-untimed.json", "diff", threads, untimed, "--format", "json")
        if "recursion" in traces and "fork" in traces:
            out("diff.schema.json", "diff-different.json", "diff", traces["recursion"], traces["fork"],
                "--format", "json", "--allow-different")
    # the hand-written samples in test/outputs/samples
    sam = os.path.join(HERE, "samples")
    outputs.setdefault("report.schema.json", []).append(os.path.join(sam, "demo.report.json"))
    outputs.setdefault("chrome-trace.schema.json", []).append(os.path.join(sam, "demo.trace.json"))
    outputs.setdefault("events-jsonl.schema.json", []).append(os.path.join(sam, "demo.jsonl"))

    vt = os.path.join(HERE, "viewer_test.py")
    for schema, files in outputs.items():
        p = subprocess.run([py, vt, "schema", os.path.join(sdir, schema), *files],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for line in p.stdout.splitlines():
            if not line.startswith("ok ") or len(files) < 3:
                say("  " + line)
        check(p.returncode == 0, f"{schema}: {len(files)} outputs valid")

    # each schema must reject an output that breaks it
    def broken(schema, src, name, edit, lines=False):
        if not src or not os.path.isfile(src):
            return
        with open(src, encoding="utf-8") as f:
            text = f.read()
        if lines:
            first = json.loads(text.splitlines()[0])
            edit(first)
            text = json.dumps(first) + "\n"
        else:
            doc = json.loads(text)
            edit(doc)
            text = json.dumps(doc)
        path = w("broken-" + name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        p = subprocess.run([py, vt, "schema", os.path.join(sdir, schema), path],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        why = next((l.strip() for l in p.stdout.splitlines() if l.startswith("     ")), p.stdout.strip()[-200:])
        check(p.returncode == 1, f"{schema} rejects {name}: {why}")

    def drop_calls(d):
        del d["totals"]["calls"]
    broken("report.schema.json", w("threads.report.json"), "report-without-totals-calls.json", drop_calls)
    broken("report.schema.json", w("untimed.report.json"), "untimed-report-with-a-time.json",
           lambda d: d["functions"][0].update(total=5))
    broken("report.schema.json#/$defs/meta", w("threads.meta.json"), "meta-version-2.json",
           lambda d: d.update(format_version=2))
    broken("report-runs.schema.json", w("runs.report.json"), "runs-version-1.json",
           lambda d: d.update(format_version=1))
    broken("report-runs.schema.json", w("runs.report.json"), "runs-stat-as-string.json",
           lambda d: d["functions"][0].update(calls_mean="1.00"))
    broken("diff.schema.json", w("diff.json"), "diff-status-changed.json",
           lambda d: d["functions"][0].update(status="changed"))
    broken("chrome-trace.schema.json", w("threads.trace.json"), "chrome-begin-without-name.json",
           lambda d: next(e for e in d["traceEvents"] if e["ph"] == "B").pop("name"))
    broken("chrome-trace.schema.json", w("threads.trace.json"), "chrome-calls-as-number.json",
           lambda d: d["otherData"].update(calls=int(d["otherData"]["calls"])))
    broken("bandwidth.schema.json", w("threads.bandwidth.json"), "bandwidth-mode-unknown.json",
           lambda d: d["modes"][0].update(timing="pt"))
    broken("bandwidth.schema.json", w("untimed.bandwidth.json"), "bandwidth-untimed-with-rate.json",
           lambda d: d["modes"][0]["bytes_per_s"].update(mean=5.0))
    broken("events-jsonl.schema.json", w("threads.jsonl"), "jsonl-self-as-string.jsonl",
           lambda d: d.update(self=str(d["self"])), lines=True)
    broken("events-jsonl.schema.json", w("untimed.jsonl"), "jsonl-untimed-with-start.jsonl",
           lambda d: d.update(start=0), lines=True)
    return 0


def main():
    if len(sys.argv) < 5 or sys.argv[1] not in ("viewers", "schemas") or \
            (sys.argv[1] == "viewers" and len(sys.argv) != 6):
        raise SystemExit(__doc__)
    mode, build, src, work = sys.argv[1:5]
    build, src, work = map(os.path.abspath, (build, src, work))
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    os.chdir(work)
    b = Build(build, src, work)
    t0 = time.monotonic()
    if mode == "viewers":
        artefacts = os.path.abspath(sys.argv[5])
        shutil.rmtree(artefacts, ignore_errors=True)
        os.makedirs(artefacts)
        rc = viewers(b, artefacts)
    else:
        rc = schemas(b)
    if rc == SKIP:
        return SKIP
    say(f"{mode}: {len(failures)} failed, {time.monotonic() - t0:.1f} s")
    for f in failures:
        say(f"  FAIL {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
