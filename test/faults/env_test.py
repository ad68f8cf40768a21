#!/usr/bin/env python3
"""runtime-env: the runtime's configuration and its trace file, as a user can get them wrong
or an attacker can steer them (docs/runtime.md, Environment; docs/reliability.md).

  env_test.py PTCALL PTCALL_CC WORKDIR

- A value a variable does not take is refused with one line naming it, and nothing is traced
  (PTCALL_MODE=DROP used to mean wait, PTCALL_TIMESTAMPS=maybe timed); accepted spellings
  (PTCALL_TIMESTAMPS=no) do what they say. The program itself always runs and exits 0.
- PTCALL_OUTPUT: a relative name is the starting directory's (it used to trace nothing,
  silently); a symbolic link is not followed; an existing file that is not a trace is left
  as it was; a new trace is mode 0600.
- `ptcall record -o` and `ptcall import -o` refuse a symbolic link and leave its target as it
  was; record's trace is mode 0600; record of a program without instrumented code leaves no
  file behind.
"""
import json
import os
import stat
import subprocess
import sys

from faultlib import Checks, build_faulty, calls_of, report, run

check = Checks()


def runtime_env(**kw):
    """The environment of a program traced without ptcall record (soft backend)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PTCALL_")}
    env["PTCALL_BACKEND"] = "soft"
    env.update(kw)
    return env


def calls_in(ptcall, trace):
    p = run([ptcall, "report", trace, "--format", "json", "--top", "0", "--salvage"])
    if p.returncode != 0:
        return None, None
    doc = json.loads(p.stdout)
    return sum(f["calls"] for f in doc["functions"] if f["name"] == "work"), doc


def main():
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    ptcall, cc, work = sys.argv[1:4]
    prog = build_faulty(cc, work)
    if prog is None:
        return 0
    n = 1000
    trace = os.path.join(work, "t.ptc")

    # invalid values: refused, named, nothing traced; the program runs
    for var, value, says in (("PTCALL_MODE", "DROP", "not one of wait|drop"),
                             ("PTCALL_TIMESTAMPS", "maybe", "not a yes/no value"),
                             ("PTCALL_BUFFER", "1K", "out of range"),
                             ("PTCALL_BUFFER", "12X", "not a size"),
                             ("PTCALL_BUFFERS", "65", "out of range"),
                             ("PTCALL_FLUSH_MS", "-5", "not a decimal number"),
                             ("PTCALL_LEAF_EXITS", "2", "not a yes/no value"),
                             ("PTCALL_BACKEND", "Soft", "not one of soft|pt")):
        if os.path.exists(trace):
            os.unlink(trace)
        p = run([prog, "ok", n], env=runtime_env(PTCALL_OUTPUT=trace, **{var: value}))
        check(p.returncode == 0, "%s=%s: the program runs and exits 0: %d" % (var, value,
                                                                              p.returncode))
        check("%s=%s: %s" % (var, value, says) in p.stderr and "not tracing" in p.stderr,
              "%s=%s: refused, named: %s" % (var, value, p.stderr.strip()[:160]))
        check(not os.path.exists(trace), "%s=%s: no trace written" % (var, value))

    # accepted spellings do what they say
    for value, timed in (("no", False), ("off", False), ("1", True), ("", True)):
        if os.path.exists(trace):
            os.unlink(trace)
        p = run([prog, "ok", n], env=runtime_env(PTCALL_OUTPUT=trace, PTCALL_TIMESTAMPS=value))
        got, doc = calls_in(ptcall, trace)
        check(p.returncode == 0 and got == n, "PTCALL_TIMESTAMPS=%r: traced, %s calls" % (value, got))
        table = run([ptcall, "report", trace, "--salvage"]).stdout
        check(("untimed trace" in table) != timed,
              "PTCALL_TIMESTAMPS=%r: %s" % (value, "timed" if timed else "untimed"))

    # a relative PTCALL_OUTPUT is the starting directory's; the trace is 0600
    sub = os.path.join(work, "cwd")
    os.makedirs(sub)
    p = run([prog, "ok", n], env=runtime_env(PTCALL_OUTPUT="rel.ptc"), cwd=sub)
    rel = os.path.join(sub, "rel.ptc")
    got, _ = calls_in(ptcall, rel) if os.path.exists(rel) else (None, None)
    check(got == n, "relative PTCALL_OUTPUT: traced into the starting directory (%s calls)" % got)
    if os.path.exists(rel):
        check(stat.S_IMODE(os.stat(rel).st_mode) == 0o600, "runtime's new trace is mode 0600: %o"
              % stat.S_IMODE(os.stat(rel).st_mode))

    # a symbolic link is not followed; a file that is not a trace is left alone
    victim = os.path.join(work, "victim")
    link = os.path.join(work, "link.ptc")
    with open(victim, "w") as f:
        f.write("precious\n")
    os.symlink(victim, link)
    p = run([prog, "ok", n], env=runtime_env(PTCALL_OUTPUT=link))
    check(p.returncode == 0 and "symbolic link" in p.stderr,
          "PTCALL_OUTPUT symlink: refused: %s" % p.stderr.strip()[:160])
    check(open(victim).read() == "precious\n", "PTCALL_OUTPUT symlink: its target unchanged")
    p = run([prog, "ok", n], env=runtime_env(PTCALL_OUTPUT=victim))
    check(p.returncode == 0 and "is not a ptcall trace" in p.stderr,
          "PTCALL_OUTPUT naming a non-trace file: refused: %s" % p.stderr.strip()[:160])
    check(open(victim).read() == "precious\n", "PTCALL_OUTPUT non-trace file: unchanged")
    p = run([prog, "ok", n], env=runtime_env())
    check(p.returncode == 0 and "without PTCALL_OUTPUT" in p.stderr,
          "PTCALL_BACKEND=soft without PTCALL_OUTPUT: said")

    # ptcall record / import -o
    env = {k: v for k, v in os.environ.items() if not k.startswith("PTCALL_")}
    p = run([ptcall, "record", "-q", "-o", link, "--", prog, "ok", n], env=env)
    check(p.returncode == 1 and "symbolic link" in p.stderr,
          "record -o symlink: exit 1, said: %d %s" % (p.returncode, p.stderr.strip()[-160:]))
    check(open(victim).read() == "precious\n", "record -o symlink: its target unchanged")
    raw = os.path.join(work, "raw.bin")
    with open(raw, "wb") as f:
        f.write(b"\x02\x82" * 8)
    p = run([ptcall, "import", "-o", link, "--thread-stream", raw, "--binary", prog], env=env)
    check(p.returncode != 0 and "symbolic link" in p.stderr,
          "import -o symlink: refused: %d %s" % (p.returncode, p.stderr.strip()[-160:]))
    check(open(victim).read() == "precious\n", "import -o symlink: its target unchanged")
    if os.path.exists(trace):
        os.unlink(trace)
    p = run([ptcall, "record", "-q", "-o", trace, "--", prog, "ok", n], env=env)
    check(p.returncode == 0 and stat.S_IMODE(os.stat(trace).st_mode) == 0o600,
          "record's trace is mode 0600: %o" % stat.S_IMODE(os.stat(trace).st_mode))
    plain = os.path.join(work, "plain")
    with open(plain + ".c", "w") as f:
        f.write("int main(void) { return 0; }\n")
    if run(["cc", "-o", plain, plain + ".c"]).returncode == 0:
        out = os.path.join(work, "plain.ptc")
        p = run([ptcall, "record", "-q", "--backend", "soft", "-o", out, "--", plain], env=env)
        check(p.returncode == 1 and "no ptcall-instrumented code" in p.stderr,
              "record of an uninstrumented program: exit 1, said")
        check(not os.path.exists(out), "record of an uninstrumented program: no file left")
    else:
        print("SKIP: no C compiler for the uninstrumented program")
    print("runtime-env: %d failure(s)" % check.fails)
    return 1 if check.fails else 0


if __name__ == "__main__":
    sys.exit(main())
