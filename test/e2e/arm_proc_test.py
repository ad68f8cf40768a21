#!/usr/bin/env python3
"""`ptcall arm PID` against processes it must not, or cannot simply, arm (docs/pt.md, *Arming*).

--case errors: every failure says what happened, and the status is 1:
  a process of another user (started as uid 65534, armed as uid 65533)   "permission denied"
  its own process that is not dumpable (prctl(PR_SET_DUMPABLE, 0))      "permission denied"
  a root process armed by an unprivileged user                           "permission denied"
  a zombie (exited, not reaped)                                          "has exited"
  no such process                                                        "no process"
and the owner of a process (not root) still arms it: every sled calls its stub.

--case replaced: the program's file is replaced on disk while it runs, then `ptcall arm PID`:
  rename   a different instrumented binary renamed over it (maps: "(deleted)")
  rm       the file removed (maps: "(deleted)", no file at the path)
  bind     a different binary bind-mounted over the path, in a private mount namespace
           (maps shows the path without "(deleted)"; the path opens the other file)
each armed as root (which reads the mapped object through /proc/PID/map_files: every sled of
the original layout must call its stub, then `arm --off` puts the nops back) and as the
process's unprivileged owner (who cannot: the program's sleds must stay nops, stderr must say
the binary was replaced on disk, the status must be 1; its library, not replaced, is armed).
In every case the program's read-only mappings (code, constants) may differ afterwards only
inside its own sleds (nothing was written at the replacement's addresses), and the program
still runs to its end.
Parts that need root (setpriv, mount namespaces) say SKIP when they cannot run; not root, the
permission case arms a process of another user if there is one.
"""
import argparse
import os
import shutil
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from arm_test import run, sled_offsets  # noqa: E402

NOBODY, OTHER = 65534, 65533
NODUMP_C = r"""#include <stdio.h>
#include <sys/prctl.h>
int main(void)
{
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0))
        return 1;
    printf("ready\n");
    fflush(stdout);
    char line[16];
    if (!fgets(line, sizeof line, stdin))
        return 1;
    printf("done\n");
    return 0;
}
"""


def as_user(uid):
    """The command prefix that runs as uid (no supplementary groups), or [] for ourselves."""
    if uid is None or uid == os.geteuid():
        return []
    return ["setpriv", "--reuid=%d" % uid, "--regid=%d" % uid, "--clear-groups"]


def mapping(pid, path):
    """(base, [(lo, hi)] of its read-only mappings: code and constants) of the object mapped
    from path, whether or not it was deleted since (the maps line then ends with
    ' (deleted)'). Writable ones are left out: the program may still be binding its PLT."""
    base, xs = None, []
    for line in open("/proc/%d/maps" % pid):
        f = line.rstrip("\n").split(None, 5)
        if len(f) < 6 or f[5] not in (path, path + " (deleted)"):
            continue
        lo, hi = (int(x, 16) for x in f[0].split("-"))
        if int(f[2], 16) == 0 and base is None:
            base = lo
        if f[1][0] == "r" and f[1][1] != "w":
            xs.append((lo, hi))
    if base is None:
        sys.exit("FAIL: %s not mapped in %d" % (path, pid))
    return base, xs


def sled_states(pid, path, sites):
    """'nop', 'call' (to its stub) or the bytes, for each sled of the object mapped from path
    (sites from the mapped file's ELF, arm_test.sled_offsets)."""
    base, _ = mapping(pid, path)
    out = []
    with open("/proc/%d/mem" % pid, "rb") as mem:
        for site, stub in sites:
            mem.seek(base + site)
            b = mem.read(5)
            ret, stub = stub & 1, stub & ~1
            rel = struct.unpack("<i", b[1:])[0]
            if (b[0] == 0xC3) if ret else b == b"\x0f\x1f\x44\x00\x00":
                out.append("nop")  # a ret sled's 4 bytes after c3 keep the last rel32
            elif b[0] == (0xE9 if ret else 0xE8) and site + 5 + rel == stub:
                out.append("call")
            else:
                out.append(b.hex())
    return out


def code_of(pid, path):
    """The bytes of the object's read-only mappings (code, constants, its ptcall sections),
    by address: only what ptcall arm writes may change them."""
    _, xs = mapping(pid, path)
    with open("/proc/%d/mem" % pid, "rb") as mem:
        res = {}
        for lo, hi in xs:
            mem.seek(lo)
            res[lo] = mem.read(hi - lo)
    return res


def stray_writes(before, after, base, sites):
    """Addresses where the code changed outside the sleds of the mapped layout."""
    allowed = set()
    for site, _ in sites:
        allowed.update(range(base + site, base + site + 5))
    bad = []
    for lo, old in before.items():
        new = after.get(lo, b"")
        for i in range(min(len(old), len(new))):
            if old[i] != new[i] and lo + i not in allowed:
                bad.append(hex(lo + i))
    return bad


class Target:
    """The probe program, started (as uid) and waiting on stdin."""

    def __init__(self, exe, uid=None, env=None):
        self.p = subprocess.Popen(as_user(uid) + [exe], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, env=env)
        first = self.p.stdout.readline()
        if not first.startswith("ready"):
            self.p.kill()
            sys.exit("FAIL: %s did not start: %r" % (exe, first))
        self.pid = self.p.pid  # setpriv execs the program: same pid

    def finish(self):
        out, _ = self.p.communicate("go\n", timeout=60)
        return self.p.returncode, out


def ptcall_arm(ptcall, pid, uid=None, off=False, prefix=()):
    cmd = list(prefix) + as_user(uid) + [ptcall, "arm"] + (["--off"] if off else []) + [str(pid)]
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def build(b, d, pad=False):
    """The probe (arm_main, arm_unit2, libarm.so) in d; with pad, the replacement binary."""
    cc = os.path.join(b, "bin", "ptcall-cc")
    src = os.path.join(HERE, "programs")
    lib = os.path.join(d, "libarm.so")
    if not os.path.exists(lib):
        run([cc, "-O2", "-fPIC", "-shared", os.path.join(src, "arm_lib.c"), "-o", lib])
    exe = os.path.join(d, "arm_pad_main" if pad else "arm_main")
    srcs = ([os.path.join(src, "arm_pad.c")] if pad else []) + \
        [os.path.join(src, "arm_main.c"), os.path.join(src, "arm_unit2.c")]
    run([cc, "-O2"] + srcs + [lib, "-Wl,-rpath," + d, "-o", exe])
    return exe, lib


def workdir(a, name):
    d = os.path.join(os.path.abspath(a.work), name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    os.chmod(d, 0o755)  # the other users run the programs from here
    return d


def check_error(failures, what, r, want, unwanted=None):
    err = r.stderr.strip()
    if r.returncode != 1 or want not in err.lower() or (unwanted and unwanted in err.lower()) \
            or len(err.splitlines()) != 1:
        failures.append("%s: rc %d, stderr %r; want rc 1 and one line saying %r"
                        % (what, r.returncode, err, want))
    else:
        print("ok %s: %s" % (what, err))


def case_errors(a, b, ptcall, env):
    failures = []
    d = workdir(a, "arm-errors")
    exe, lib = build(b, d)
    sites = sled_offsets(exe)
    root = os.geteuid() == 0
    if root and not shutil.which("setpriv"):
        print("SKIP the cases of other users: no setpriv (util-linux)")
    elif root:
        # another user's process, armed by a third user
        t = Target(exe, NOBODY, env)
        r = ptcall_arm(ptcall, t.pid, OTHER)
        check_error(failures, "uid %d arming uid %d's process" % (OTHER, NOBODY), r,
                    "permission denied", "no process")
        if "as root" not in r.stderr:
            failures.append("permission denied: stderr %r does not say to run as root" % r.stderr)
        # its owner may: every sled armed, through the path (no /proc/PID/map_files for them)
        r = ptcall_arm(ptcall, t.pid, NOBODY)
        st = sled_states(t.pid, exe, sites)
        if r.returncode or set(st) != {"call"}:
            failures.append("the owner arming its process: rc %d, stderr %r, sleds %s; want 0 "
                            "and every sled calling its stub" % (r.returncode, r.stderr, st))
        rc, out = t.finish()
        if rc or "done" not in out:
            failures.append("the armed program exited %d: %r" % (rc, out))
        # a process that made itself not dumpable: only root may arm it, not even its owner
        nd_src = os.path.join(d, "nodump.c")
        with open(nd_src, "w") as f:
            f.write(NODUMP_C)
        nodump = os.path.join(d, "nodump")
        run([os.path.join(b, "bin", "ptcall-cc"), "-O2", nd_src, "-o", nodump])
        t = Target(nodump, NOBODY, env)
        r = ptcall_arm(ptcall, t.pid, NOBODY)
        check_error(failures, "uid %d arming its own process that is not dumpable" % NOBODY, r,
                    "permission denied", "no process")
        if "not dumpable" not in r.stderr:
            failures.append("not dumpable: stderr %r does not say so" % r.stderr)
        t.finish()
        # a root process, armed by an unprivileged user
        t = Target(exe, None, env)
        r = ptcall_arm(ptcall, t.pid, NOBODY)
        check_error(failures, "uid %d arming a root process" % NOBODY, r, "permission denied",
                    "no process")
        t.finish()
    else:
        # not root: a process of another user, if there is one (pid 1 often is)
        other = []
        for p in sorted((p for p in os.listdir("/proc") if p.isdigit()), key=int):
            try:
                if os.stat("/proc/" + p).st_uid != os.geteuid():
                    other.append(p)
            except OSError:
                pass  # it exited meanwhile
        if other:
            r = ptcall_arm(ptcall, int(other[0]))
            check_error(failures, "arming process %s of another user" % other[0], r,
                        "permission denied", "no process")
        else:
            print("SKIP permission denied: not root, and no process of another user")
    # a zombie: exited, not yet reaped
    z = subprocess.Popen(["true"])
    for _ in range(200):
        state = open("/proc/%d/stat" % z.pid).read().rsplit(")", 1)[1].split()[0]
        if state == "Z":
            break
        time.sleep(0.01)
    r = ptcall_arm(ptcall, z.pid)
    check_error(failures, "arming a zombie", r, "has exited")
    z.wait()
    r = ptcall_arm(ptcall, 999999999)
    check_error(failures, "arming no process", r, "no process")
    return failures


def case_replaced(a, b, ptcall, env):
    failures = []
    d = workdir(a, "arm-replaced")
    orig, lib = build(b, d)
    other, _ = build(b, d, pad=True)
    sites = sled_offsets(orig)
    lib_sites = sled_offsets(lib)
    if sled_offsets(other)[0] == sites[0]:
        sys.exit("FAIL: the replacement's sleds are where the original's are: pad did not move them")
    root = os.geteuid() == 0
    unshare_ok = root and shutil.which("unshare") and subprocess.run(
        ["unshare", "-m", "--propagation", "private", "true"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
    if not root:
        who = [("owner", None)]
    elif shutil.which("setpriv"):
        who = [("root", None), ("owner", NOBODY)]
    else:
        print("SKIP replaced, armed as the process's unprivileged owner: no setpriv (util-linux)")
        who = [("root", None)]
    ran = 0
    for mode in ("rename", "rm", "bind"):
        for name, uid in who:
            if mode == "bind" and not unshare_ok:
                print("SKIP replaced %s as %s: needs root and unshare -m" % (mode, name))
                continue
            ran += 1
            label = "%s, armed as %s" % (mode, name)
            victim = os.path.join(d, "victim")
            if os.path.exists(victim):
                os.unlink(victim)
            shutil.copy2(orig, victim)
            os.chmod(victim, 0o755)
            t = Target(victim, uid, env)
            base, _ = mapping(t.pid, victim)
            before = code_of(t.pid, victim)
            prefix = ()
            if mode == "rename":
                tmp = victim + ".new"
                shutil.copy2(other, tmp)
                os.rename(tmp, victim)
            elif mode == "rm":
                os.unlink(victim)
            else:
                prefix = ("unshare", "-m", "--propagation", "private", "sh", "-c",
                          'mount --bind "$0" "$1" && shift && exec "$@"', other, victim)
            r = ptcall_arm(ptcall, t.pid, uid, prefix=prefix)
            st = sled_states(t.pid, victim, sites)
            lst = sled_states(t.pid, lib, lib_sites)
            stray = stray_writes(before, code_of(t.pid, victim), base, sites)
            if stray:
                failures.append("%s: memory written outside the program's sleds at %s (stderr %r)"
                                % (label, stray[:8], r.stderr))
            if name == "root":
                if r.returncode or set(st) != {"call"} or set(lst) != {"call"}:
                    failures.append("%s: rc %d, stderr %r, sleds %s, library %s; want 0 and every "
                                    "sled of the mapped object armed"
                                    % (label, r.returncode, r.stderr, st, lst))
                r = ptcall_arm(ptcall, t.pid, uid, off=True, prefix=prefix)
                st = sled_states(t.pid, victim, sites)
                if r.returncode or set(st) != {"nop"}:
                    failures.append("%s: arm --off: rc %d, stderr %r, sleds %s; want the nops back"
                                    % (label, r.returncode, r.stderr, st))
            else:
                if r.returncode != 1 or "replaced on disk" not in r.stderr or set(st) != {"nop"} \
                        or set(lst) != {"call"}:
                    failures.append("%s: rc %d, stderr %r, sleds %s, library %s; want rc 1, "
                                    "'replaced on disk', the program's sleds left alone and the "
                                    "library's armed" % (label, r.returncode, r.stderr, st, lst))
            rc, out = t.finish()
            if rc or "done" not in out:
                failures.append("%s: the program exited %d: %r" % (label, rc, out))
            if not failures:
                print("ok %s: rc %d: %s" % (label, r.returncode, r.stderr.strip()))
    if not ran:
        failures.append("no case ran")
    return failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--case", choices=("errors", "replaced"), required=True)
    a = ap.parse_args()
    b = os.path.abspath(a.build)
    ptcall = os.path.join(b, "tools", "ptcall")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PTCALL_")}
    failures = (case_errors if a.case == "errors" else case_replaced)(a, b, ptcall, env)
    if failures:
        sys.exit("FAIL arm %s:\n" % a.case + "\n".join(failures))
    print("PASS arm %s" % a.case)


if __name__ == "__main__":
    main()
