#!/usr/bin/env python3
"""pt-leaf-exits: under Intel PT without timing a leaf's exit stays unarmed (issue 28, PT).

  leaf_exits.py PTCALL PTCALL_CC PT_MODULE_DUMP WORKDIR

1. The runtime in arm-only mode (PTCALL_BACKEND=pt, what `ptcall record --backend pt` sets)
   leaves the exit sleds of leaves as nops when PTCALL_TIMESTAMPS=0 (record --timing none),
   and arms them with timestamps or PTCALL_LEAF_EXITS=1 (PTCALL_DEBUG=1 says how many).
2. The recorder's MODULE chunk of the same file gives exactly those leaves' ENTRY stubs kind
   CALL (4) with PTC_MAP_BUILD_LEAF_CALLS, and none without it.
3. `ptcall record --backend pt --timing none` where there is no Intel PT: SKIP line.
"""
import os
import re
import shutil
import subprocess
import sys

SRC = r"""
#include <stdio.h>
volatile unsigned long sink;
__attribute__((noinline)) void leaf_a(unsigned long x) { sink += x; }
__attribute__((noinline)) unsigned long leaf_b(unsigned long x) { return x * 7; }
__attribute__((noinline)) void mid(unsigned long x) { leaf_a(x); sink += leaf_b(x); }
int main(void)
{
    for (unsigned long i = 0; i < 100; i++)
        mid(i);
    printf("%lu\n", sink);
    return 0;
}
"""
fails = 0


def check(ok, what):
    global fails
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        fails += 1


def main():
    ptcall, cc, dump, work = sys.argv[1:5]
    if not os.access(cc, os.X_OK):
        print(f"SKIP: {cc} is not built (the LLVM pass component)")
        return 0
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    src, prog = os.path.join(work, "leaves.c"), os.path.join(work, "leaves")
    open(src, "w").write(SRC)
    if subprocess.run([cc, "-O1", "-o", prog, src]).returncode:
        return 1

    def unarmed(**env):
        e = dict(os.environ, PTCALL_BACKEND="pt", PTCALL_DEBUG="1", **env)
        e.pop("PTCALL_OUTPUT", None)
        p = subprocess.run([prog], env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
        m = re.search(r"(\d+) leaf exits left unarmed", p.stderr)
        return (int(m.group(1)) if m else None), p.stdout

    n, out = unarmed(PTCALL_TIMESTAMPS="0")
    check(n == 2 and out.strip() == str(sum(i + 7 * i for i in range(100))),
          f"untimed arm-only: 2 leaf exits unarmed (leaf_a, leaf_b), output right (got {n})")
    n, _ = unarmed(PTCALL_TIMESTAMPS="1")
    check(n == 0, f"timed arm-only: every exit armed (got {n})")
    n, _ = unarmed(PTCALL_TIMESTAMPS="0", PTCALL_LEAF_EXITS="1")
    check(n == 0, f"untimed with PTCALL_LEAF_EXITS=1: every exit armed (got {n})")

    def kinds(flag):
        p = subprocess.run([dump, prog, flag], stdout=subprocess.PIPE, text=True)
        return p.returncode, [tuple(line.split(" ", 1)) for line in p.stdout.splitlines()]

    rc, with_leaf = kinds("1")
    calls = sorted(f for k, f in with_leaf if k == "4")
    check(rc == 0 and calls == ["leaf_a", "leaf_b"],
          f"recorder's MODULE, leaf calls: leaf_a and leaf_b's entries are CALL ({calls})")
    rc, plain = kinds("0")
    check(rc == 0 and not any(k == "4" for k, _ in plain) and len(plain) == len(with_leaf),
          "recorder's MODULE without the flag: no CALL stub")

    # the simulator's model of it: an untimed soft trace (leaves recorded as whole calls)
    # under `--timing none` alone is one TIP.PGE per leaf call, two per other call
    import json
    t = os.path.join(work, "soft-untimed.ptc")
    subprocess.run([ptcall, "record", "--backend", "soft", "--no-timestamps", "-q", "-o", t,
                    "--", prog], stdout=subprocess.PIPE)

    def pge(timing):
        p = subprocess.run([ptcall, "bandwidth", t, "--timing", timing, "--format", "json"],
                           stdout=subprocess.PIPE, text=True)
        d = json.loads(p.stdout)
        return d["modes"][0]["packets"]["TIP.PGE"]["count"], d["modes"][0]["bytes"]

    # main 1 + mid 100 calls (2 hits each), leaf_a and leaf_b 100 calls each (1 hit each)
    n1, b1 = pge("none")
    n2, b2 = pge("none,tsc")
    check(n1 == 2 * 101 + 200 and n2 == 2 * 301 and b1 < b2,
          f"bandwidth --timing none: {n1} TIP.PGE ({b1} B), 1 per leaf call; with tsc "
          f"(leaves' exits armed) {n2} ({b2} B)")

    if not os.path.exists("/sys/bus/event_source/devices/intel_pt/type"):
        # not "SKIP:" (ctest would count the whole test as skipped): the rest ran
        print("SKIP ptcall record --backend pt --timing none: no Intel PT on this machine")
    else:
        t = os.path.join(work, "pt.ptc")
        p = subprocess.run([ptcall, "record", "--backend", "pt", "--timing", "none", "-q", "-o",
                            t, "--", prog], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
        r = subprocess.run([ptcall, "report", t], stdout=subprocess.PIPE, text=True)
        check(p.returncode == 0 and "100  leaf_a" in r.stdout.replace("       ", " "),
              "record --backend pt --timing none: leaf_a's 100 calls from whole-call hits")
    print(f"{fails} failure(s)")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
