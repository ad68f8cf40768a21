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
- record -o of a device, a FIFO or a file that is not a trace is refused and the path left as
  it was (record used to unlink a device node and put a trace in its place: as root, /dev/null
  for the whole machine; a FIFO hung); an earlier trace is replaced (users record to the same
  name again); export and html write into a device rather than renaming a file over it.
- A set-user-ID program ignores its caller's PTCALL_* (the runtime used to create root-owned
  files wherever PTCALL_OUTPUT said): run as nobody, nothing is created and one line says why;
  the same program without the set-user-ID bit is traced for nobody (so the runtime does load).
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
    not_regular_outputs(ptcall, prog, work, env, n)
    setuid_ignores_caller(ptcall, prog, work, n)
    print("runtime-env: %d failure(s)" % check.fails)
    return 1 if check.fails else 0


def is_char_device(path):
    try:
        return stat.S_ISCHR(os.lstat(path).st_mode)
    except OSError:
        return False


def not_regular_outputs(ptcall, prog, work, env, n):
    """record/import/export/html -o of paths that are not regular files, or not traces."""
    # a device node of the test's own (mknod needs root): never the machine's /dev/null,
    # which a regression would delete
    dev = os.path.join(work, "null-device")
    try:
        os.mknod(dev, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except OSError as e:
        print("SKIP: record -o DEVICE: cannot make a device node here (%s)" % e)
        dev = None
    if dev:
        p = run([ptcall, "record", "-q", "-o", dev, "--", prog, "ok", n], env=env)
        check(p.returncode == 1 and "is a character device, not a trace file" in p.stderr,
              "record -o DEVICE: exit 1, said: %d %s" % (p.returncode, p.stderr.strip()[-200:]))
        check(is_char_device(dev), "record -o DEVICE: the device node is still there")
        p = run([ptcall, "record", "-q", "--backend", "soft", "-o", dev, "--", "true"], env=env)
        check(is_char_device(dev), "record -o DEVICE of an uninstrumented program: the device "
              "node is still there")
    fifo = os.path.join(work, "fifo")
    os.mkfifo(fifo)
    try:
        p = run([ptcall, "record", "-q", "-o", fifo, "--", prog, "ok", n], env=env, timeout=20)
    except subprocess.TimeoutExpired:
        p = subprocess.CompletedProcess([], -1, "", "(hung for 20 s)")
    check(p.returncode == 1 and "is a FIFO, not a trace file" in p.stderr,
          "record -o FIFO: exit 1 at once, said: %d %s" % (p.returncode, p.stderr.strip()[-200:]))
    check(stat.S_ISFIFO(os.lstat(fifo).st_mode), "record -o FIFO: the FIFO is still there")
    other = os.path.join(work, "notes.txt")
    with open(other, "w") as f:
        f.write("precious\n")
    p = run([ptcall, "record", "-q", "-o", other, "--", prog, "ok", n], env=env)
    check(p.returncode == 1 and "is not a ptcall trace" in p.stderr,
          "record -o over a file that is not a trace: refused: %s" % p.stderr.strip()[-200:])
    check(open(other, "rb").read() == b"precious\n", "record -o over a non-trace file: unchanged")
    p = run([ptcall, "import", "-o", other, "--thread-stream", other, "--binary", prog], env=env)
    check(p.returncode != 0 and open(other, "rb").read() == b"precious\n",
          "import -o over a non-trace file: refused, unchanged")
    again = os.path.join(work, "again.ptc")
    for i in range(2):
        p = run([ptcall, "record", "-q", "-o", again, "--", prog, "ok", n + i], env=env)
        got, _ = calls_in(ptcall, again)
        check(p.returncode == 0 and got == n + i,
              "record -o an earlier trace: replaced (%d): %s calls" % (i, got))
    if dev:
        for cmd in (["export", again, "--format", "folded", "-o", dev],
                    ["html", again, "-o", dev]):
            p = run([ptcall] + cmd, env=env)
            check(p.returncode == 0 and is_char_device(dev),
                  "%s -o DEVICE: written into it, the device node kept: %d %s"
                  % (cmd[0], p.returncode, p.stderr.strip()[-160:]))


def setuid_ignores_caller(ptcall, prog, work, n):
    """An instrumented set-user-ID root program run by nobody with PTCALL_OUTPUT naming a
    directory only root may write."""
    import shutil
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        print("SKIP: set-user-ID check needs root and setpriv (util-linux)")
        return
    if os.statvfs(work).f_flag & os.ST_NOSUID:
        print("SKIP: set-user-ID check: %s is mounted nosuid" % work)
        return
    # every directory up to work must let nobody through
    d = os.path.abspath(work)
    while d != "/":
        if not os.stat(d).st_mode & stat.S_IXOTH:
            print("SKIP: set-user-ID check: nobody cannot reach %s (%s)" % (work, d))
            return
        d = os.path.dirname(d)
    sub = os.path.join(work, "suid")
    os.makedirs(sub)
    os.chmod(sub, 0o1777)
    prog_suid, prog_plain = os.path.join(sub, "faulty-suid"), os.path.join(sub, "faulty-plain")
    for dst, mode in ((prog_suid, 0o4755), (prog_plain, 0o755)):
        shutil.copy(prog, dst)
        os.chown(dst, 0, 0)
        os.chmod(dst, mode)
    secret = os.path.join(work, "root-only")
    os.makedirs(secret)
    os.chmod(secret, 0o700)
    nobody = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
    target = os.path.join(secret, "created-by-nobody.ptc")
    p = run(nobody + [prog_suid, "ok", n], env=runtime_env(PTCALL_OUTPUT=target))
    check(p.returncode == 0, "set-user-ID program run by nobody: runs, exit 0: %d %s"
          % (p.returncode, p.stderr.strip()[-200:]))
    check(not os.path.exists(target),
          "set-user-ID program: nobody's PTCALL_OUTPUT did not create a root-owned file")
    check("ignored: this is a set-user-ID or set-group-ID program" in p.stderr,
          "set-user-ID program: one line says why nothing is traced: %s" % p.stderr.strip()[-200:])
    fd_target = os.path.join(secret, "counts-by-nobody")
    p = run(nobody + [prog_suid, "ok", n],
            env=runtime_env(PTCALL_COUNTS="1", PTCALL_OUTPUT=fd_target))
    check(not os.path.exists(fd_target), "set-user-ID program: counting mode ignored too")
    mine = os.path.join(sub, "nobody.ptc")
    p = run(nobody + [prog_plain, "ok", n], env=runtime_env(PTCALL_OUTPUT=mine))
    got, _ = calls_in(ptcall, mine) if os.path.exists(mine) else (None, None)
    check(got == n, "the same program without the set-user-ID bit is traced for nobody: %s calls"
          % got)


if __name__ == "__main__":
    sys.exit(main())
