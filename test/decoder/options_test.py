#!/usr/bin/env python3
"""The option table of every ptcall command (tools/options.c), seen from the command line:

- the table checks itself (ptcall help --check);
- every command's --help (and -h) exits 0 and lists exactly the options the command
  accepts: the lists below are what each command accepted before the table existed, so a
  row lost or added by mistake shows here;
- values out of their documented range, bad words, missing values and unknown options
  exit 2 with one line naming the option, then the synopsis;
- --name=value and --name value give the same output.

usage: options_test.py --ptcall PTCALL --gen PTC_TESTGEN --work DIR
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

FILTERS = ["--pid", "--tid", "--function", "--exclude", "--max-depth", "--time",
           "--min-duration"]
OPTIONS = {
    "record": ["-o", "--output", "--backend", "--no-timestamps", "--clock", "--leaf-exits", "--counts", "--drop",
               "--buffer", "--ring", "--trigger", "--timing", "--snapshot", "--pid", "--duration",
               "--module", "--only", "--skip", "-q", "--quiet",
               "--overhead", "--pilot", "--governor", "--from-counts", "--from-db", "--count-rest",
               "--atomic-counts", "--no-blocking"]
              + ["--budget"],  # issue 28, PT
    "report": ["--top", "--sort", "--format", "--meta", "--stat", "--allow-different",
               "--threads", "--salvage", "--by", "--paths", "--min-share", "--min-calls"]
              + FILTERS,
    "diff": ["--sort", "--top", "--format", "--allow-different", "--threads", "--salvage"],
    "calls": ["--order", "--salvage"] + FILTERS,
    "graph": ["--min-calls", "--min-share", "--heat", "--threads", "--salvage"] + FILTERS,
    "export": ["--format", "-o", "--output", "--weight", "--max-size", "--force",
               "--svg-static", "--salvage"] + FILTERS,
    "stat": ["--decoder"],
    "import": ["-o", "--output", "--perf-data", "--thread-stream", "--cpu-stream", "--binary",
               "--pid", "--tid", "--timing", "--mtc-period", "--nom-freq", "--tsc-ratio",
               "--cpu", "--time-conv"],
    "arm": ["--off"],
    "snapshot": ["-o", "--output", "--why"],
    "calibrate": ["--format", "--env", "-q", "--quiet"],
    "help": ["--markdown", "--readme", "--env", "--check", "--man", "--man-pages",
             "--bash-completion"],
}

failures = []


def check(ok, what):
    print("%s %s" % ("ok  " if ok else "FAIL", what))
    if not ok:
        failures.append(what)


def run(*args, **kw):
    return subprocess.run([P, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, **kw)


def listed(help_text):
    """The option names the help's option lines start with ("  -o, --output FILE  ...")."""
    names = set()
    for line in help_text.splitlines():
        m = re.match(r"^  (-[\w-]+)(?:, (--[\w-]+))?(?=[ \n]|$)", line)
        if m:
            names.update(n for n in m.groups() if n)
    return names


def usage_error(args, *words):
    """args must exit 2 with 'ptcall CMD: ...words...: see 'ptcall CMD --help'' first, then
    the synopsis, and nothing on stdout."""
    r = run(*args)
    cmd = args[0]
    lines = r.stderr.splitlines()
    first = lines[0] if lines else ""
    ok = (r.returncode == 2 and first.startswith("ptcall %s: " % cmd)
          and first.endswith(": see 'ptcall %s --help'" % cmd)
          and all(w in first for w in words)
          and len(lines) >= 2 and lines[1].startswith("usage: ptcall %s " % cmd)
          and r.stdout == "")
    check(ok, "ptcall %s: exit 2 naming %s (got %d: %r)" % (" ".join(args), ", ".join(words),
                                                            r.returncode, r.stderr[:300]))


def same_output(a, b, what):
    ra, rb = run(*a), run(*b)
    check(ra.returncode == rb.returncode == 0 and ra.stdout == rb.stdout and ra.stdout,
          "%s: '%s' and '%s' give the same output (exit %d, %d)"
          % (what, " ".join(a), " ".join(b), ra.returncode, rb.returncode))


def main():
    global P
    ap = argparse.ArgumentParser()
    ap.add_argument("--ptcall", required=True)
    ap.add_argument("--gen", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    P = os.path.abspath(a.ptcall)
    gen = os.path.abspath(a.gen)
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    os.chdir(a.work)
    if subprocess.run([gen, "golden", "good.ptc"], stdout=subprocess.DEVNULL).returncode:
        sys.exit("FAIL: ptc_testgen golden")

    r = run("help", "--check")
    check(r.returncode == 0 and not r.stderr, "the option table passes its own checks: %r"
          % r.stderr)

    # --help of every command: exit 0, every option of its mask, nothing else
    for cmd, want in OPTIONS.items():
        r = run(cmd, "--help")
        have = listed(r.stdout)
        expected = set(want) | {"-h", "--help"}
        check(r.returncode == 0 and r.stdout.startswith("usage: ptcall %s " % cmd),
              "%s --help exits 0 with the usage" % cmd)
        check(have == expected, "%s --help lists its options: missing %s, unexpected %s"
              % (cmd, sorted(expected - have), sorted(have - expected)))
        check(run(cmd, "-h").stdout == r.stdout, "%s -h is --help" % cmd)
        check(run("help", cmd).stdout == r.stdout, "help %s is %s --help" % (cmd, cmd))
        check(all(len(l) <= 80 for l in r.stdout.splitlines()),
              "%s --help fits 80 columns" % cmd)
        usage_error([cmd, "--no-such-option"], "unknown option '--no-such-option'")
    r = run("--help")
    check(r.returncode == 0 and all(("  %s " % c) in r.stdout for c in OPTIONS),
          "ptcall --help lists every command")

    # ranges and values the table checks
    usage_error(["report", "good.ptc", "--top", "-1"], "--top")
    usage_error(["report", "--top", "-1", "good.ptc"], "--top")
    usage_error(["report", "good.ptc", "--top", "x"], "--top needs a number")
    usage_error(["record", "--buffer", "1K", "--", "/bin/true"], "--buffer", "4K", "256M")
    usage_error(["record", "--buffer", "100G", "--", "/bin/true"], "--buffer")
    usage_error(["record", "--buffer", "18014398509481985K", "--", "/bin/true"], "--buffer")
    usage_error(["record", "--buffer=1K", "--", "/bin/true"], "--buffer")
    usage_error(["record", "--backend", "warp", "--", "/bin/true"], "--backend", "auto")
    usage_error(["record", "--pid", "0"], "--pid")
    usage_error(["record", "--only", "", "--", "/bin/true"], "--only", "non-empty")
    usage_error(["record", "--skip", "a\nb", "--", "/bin/true"], "--skip", "newline")
    usage_error(["record", "--backend", "pt", "--pid", "1", "--only", "a*"], "--only", "--pid")
    usage_error(["record", "--duration", "1s", "--", "/bin/true"], "--duration", "--pid")
    usage_error(["record", "--pid", "1", "--duration", "soon"], "--duration")
    usage_error(["record", "--pid", "1", "/bin/true"], "--pid", "COMMAND")
    usage_error(["snapshot"], "no process id")
    usage_error(["graph", "good.ptc", "--min-share", "101"], "--min-share", "0 to 100")
    usage_error(["graph", "good.ptc", "--min-share", "-1"], "--min-share")
    usage_error(["report", "good.ptc", "--paths", "--min-share", "nan"], "--min-share")
    usage_error(["export", "good.ptc", "--format", "chrome", "--max-size", "0"], "--max-size")
    usage_error(["export", "good.ptc", "--format", "chrome", "--max-size", "99999999999G"],
                "--max-size")
    usage_error(["export", "good.ptc", "--format", "xml"], "--format", "chrome", "folded")
    usage_error(["export", "good.ptc", "--format", "folded", "--weight", "total"], "--weight")
    usage_error(["export", "good.ptc", "--format", "chrome", "--svg-static"], "--svg-static",
                "--format svg only")
    usage_error(["calls", "good.ptc", "--max-depth", "0"], "--max-depth")
    usage_error(["calls", "good.ptc", "--order", "random"], "--order", "time", "thread")
    usage_error(["calls", "good.ptc", "--time", "2s,1s"], "--time", "START <= END")
    usage_error(["calls", "good.ptc", "--min-duration", "10parsecs"], "--min-duration")
    usage_error(["calls", "good.ptc", "--function", ""], "--function")
    usage_error(["report", "good.ptc", "--threads", "1025"], "--threads", "0 to 1024")
    usage_error(["report", "good.ptc", "--stat", "median"], "--stat")
    usage_error(["report", "good.ptc", "--stat", "mean,"], "--stat")
    usage_error(["stat", "--decoder", "slow", "good.ptc"], "--decoder", "fast", "libipt")
    usage_error(["import", "-o", "x.ptc", "--mtc-period", "16", "--thread-stream", "t.pt"],
                "--mtc-period", "0 to 15")
    usage_error(["import", "-o", "x.ptc", "--cpu-stream", "zero:t.pt"], "--cpu-stream")
    # a CPU the per-thread marker could be mistaken for; a shift that is no shift count
    usage_error(["import", "-o", "x.ptc", "--cpu-stream", "4294967295:t.pt"], "--cpu-stream",
                "0..65535")
    usage_error(["import", "-o", "x.ptc", "--time-conv", "70:1:0", "--thread-stream", "t.pt"],
                "--time-conv", "SHIFT 0..63")
    usage_error(["import", "-o", "x.ptc", "--binary", "app@xyz", "--thread-stream", "t.pt"],
                "--binary", "hex")
    usage_error(["import", "-o", "x.ptc", "--pid", "4242x", "--thread-stream", "t.pt"], "--pid")
    usage_error(["import", "-o", "x.ptc", "--cpu", "6/85", "--thread-stream", "t.pt"], "--cpu")
    # a value that is missing, or given to a flag
    usage_error(["report", "good.ptc", "--top"], "--top needs a value")
    usage_error(["graph", "good.ptc", "--heat=1"], "--heat takes no value")
    # the cross-option rules the commands keep
    usage_error(["report", "good.ptc", "--min-calls", "3"], "--min-calls goes with --paths")
    usage_error(["report", "good.ptc", "good.ptc", "--by", "thread"], "--by reads one run")
    usage_error(["report", "good.ptc", "good.ptc", "--max-depth", "2"], "filters reads one run")
    usage_error(["import", "--thread-stream", "t.pt"], "-o OUT")
    usage_error(["arm"], "no process id")
    usage_error(["arm", "abc"], "bad pid")
    usage_error(["diff", "good.ptc"], "no NEW trace file")

    # --name=value is --name value; "--" ends the options
    same_output(["report", "good.ptc", "--top", "3", "--sort", "calls"],
                ["report", "good.ptc", "--top=3", "--sort=calls"], "report")
    same_output(["report", "good.ptc", "--stat", "mean", "--stat", "max,min"],
                ["report", "good.ptc", "--stat=mean,max", "--stat=min"], "report --stat")
    same_output(["graph", "good.ptc", "--min-calls", "2", "--heat"],
                ["graph", "good.ptc", "--min-calls=2", "--heat"], "graph")
    same_output(["calls", "good.ptc", "--max-depth", "2", "--order", "thread"],
                ["calls", "--max-depth=2", "--order=thread", "good.ptc"], "calls")
    same_output(["export", "good.ptc", "--format", "folded", "--function", "main"],
                ["export", "good.ptc", "--format=folded", "--function=main"], "export")
    same_output(["export", "good.ptc", "--format", "events", "--time", "0,1s"],
                ["export", "good.ptc", "--format=events", "--time=0,1s"], "export --time")
    same_output(["diff", "good.ptc", "good.ptc", "--sort", "calls", "--format", "csv"],
                ["diff", "good.ptc", "good.ptc", "--sort=calls", "--format=csv"], "diff")
    same_output(["stat", "good.ptc", "--decoder", "fast"],
                ["stat", "--decoder=fast", "good.ptc"], "stat")
    same_output(["report", "good.ptc"], ["report", "--", "good.ptc"], "report --")
    r = run("export", "good.ptc", "--format", "folded", "-o", "a.folded")
    r2 = run("export", "good.ptc", "--format", "folded", "--output=b.folded")
    check(r.returncode == r2.returncode == 0 and os.path.exists("a.folded")
          and open("a.folded").read() == open("b.folded").read(),
          "export -o FILE and --output=FILE write the same file")
    # the defaults the table sets: report's table shows 20 rows, graph --min-calls 1
    same_output(["graph", "good.ptc"], ["graph", "good.ptc", "--min-calls", "1"],
                "graph default --min-calls")
    same_output(["report", "good.ptc"], ["report", "good.ptc", "--format", "table",
                                         "--threads", "1"], "report defaults")

    if failures:
        print("%d checks failed" % len(failures))
        sys.exit(1)
    print("PASS: options")


if __name__ == "__main__":
    main()
