#!/usr/bin/env python3
"""pt-bandwidth-budget: `ptcall bandwidth TRACE --budget RATE[,AUX]` on a real soft trace.

  bandwidth_budget.py PTCALL PTCALL_CC BW_BUDGET_CHECK WORKDIR

A program of 12 functions called 2^k times each (and a caller) is recorded with the soft
backend. For several budgets:
- the chosen set's simulated rate is within RATE and nothing is lost in the buffer model;
- the set is ptc_budget_choose's choice recomputed here (bw_budget_check) from the calls
  `ptcall report` counts, 2 hits a call, the mtc configuration's bytes per hit as
  `ptcall bandwidth` without a budget reports them, and the budget RATE x span x scale;
- `ptcall bandwidth --only` on the chosen set simulates the same bytes the choice reports.
Bad input: a malformed RATE or AUX (exit 2, one line), a rate below what any function costs
(one line, nothing traced); `ptcall record --budget` without Intel PT (one line naming the
bandwidth command; SKIP on a machine that has Intel PT).
"""
import json
import os
import shutil
import subprocess
import sys

fails = 0

SRC = r"""
#include <stdio.h>
#include <stdlib.h>
#define F(k) __attribute__((noinline)) unsigned long f##k(unsigned long x) { return x * 3 + k; }
F(0) F(1) F(2) F(3) F(4) F(5) F(6) F(7) F(8) F(9) F(10) F(11)
typedef unsigned long (*fn)(unsigned long);
static fn tab[12] = {f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11};
volatile unsigned long sink;
__attribute__((noinline)) void driver(unsigned rounds)
{
    for (unsigned r = 0; r < rounds; r++)
        for (int k = 0; k < 12; k++)
            for (unsigned long i = 0; i < (1ul << k); i++)
                sink += tab[k](i);
}
int main(int argc, char **argv)
{
    driver(argc > 1 ? (unsigned)atoi(argv[1]) : 20);
    printf("%lu\n", sink);
    return 0;
}
"""


def check(ok, what):
    global fails
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        fails += 1
    return ok


def run(*args, ok=(0,)):
    p = subprocess.run([str(a) for a in args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    if p.returncode not in ok:
        print(f"     {' '.join(map(str, args))}: exit {p.returncode}\n{p.stderr[-2000:]}")
    return p


def main():
    if len(sys.argv) != 5:
        raise SystemExit(__doc__)
    ptcall, cc, checker, work = sys.argv[1:5]
    if not os.access(cc, os.X_OK):
        print(f"SKIP: {cc} is not built (the LLVM pass component)")
        return 0
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    src = os.path.join(work, "fans.c")
    with open(src, "w") as f:
        f.write(SRC)
    prog = os.path.join(work, "fans")
    if run(cc, "-O1", "-o", prog, src).returncode:
        return 1
    trace = os.path.join(work, "fans.ptc")
    if run(ptcall, "record", "--backend", "soft", "-q", "-o", trace, "--", prog, "40").returncode:
        print("SKIP: the soft backend cannot record here")
        return 0

    rep = json.loads(run(ptcall, "report", trace, "--format", "json").stdout)
    calls = {fn["name"]: fn["calls"] for fn in rep["functions"]}
    check(calls.get("f11") == 40 * 2048 and calls.get("f0") == 40, "report counts the calls")
    base = json.loads(run(ptcall, "bandwidth", trace, "--timing", "mtc", "--format",
                          "json").stdout)
    mode = base["modes"][0]
    per_hit = mode["bytes"] / base["hits"]
    span_s = base["span_ns"] / 1e9
    all_rate = mode["bytes"] / span_s
    print(f"     all functions: {mode['bytes']} bytes, {per_hit:.3f} B/hit, {all_rate:.0f} B/s")

    chose_some = 0
    for frac in (0.05, 0.2, 0.5, 0.8):
        rate = int(all_rate * frac)
        p = run(ptcall, "bandwidth", trace, "--budget", f"{rate},1M", "--format", "json")
        if not check(p.returncode == 0, f"--budget {rate},1M runs"):
            continue
        bc = json.loads(p.stdout)["budget_choice"]
        traced = sorted(fn["name"] for fn in bc["functions"] if fn["traced"])
        chose_some += bool(traced)
        if bc["nothing_fits"]:
            # below the floor: MTC flows while any traced thread runs
            check(not traced and bc["chosen"]["bytes"] == 0 and bc["fits"]
                  and "below what tracing any function costs" in p.stderr,
                  f"{frac}: below the timing packets' floor: nothing traced, said "
                  f"({p.stderr.strip()[:200]})")
            continue
        check(bc["timing"] == "mtc" and bc["aux_bytes"] == 1 << 20, f"{frac}: mtc, AUX 1M")
        check(bc["fits"] and bc["chosen"]["bytes_per_s"] <= rate and bc["chosen"]["lost"] == 0,
              f"{frac}: simulated {bc['chosen']['bytes_per_s']:.0f} B/s <= {rate}, 0 lost "
              f"({len(traced)} traced, {bc['calls_kept']:.3f} of the calls)")
        m = bc["model"]
        check(abs(m["per_event"] - per_hit) < 1e-9 * per_hit and m["per_count"] == 0,
              f"{frac}: per_event = the mtc configuration's bytes per hit")
        check(abs(m["budget"] - rate * span_s * m["scale"]) <= 1e-6 * max(1, m["budget"]),
              f"{frac}: budget = RATE x span x scale ({m['scale']:.4g}, {m['rounds']} rounds)")
        # ptc_budget_choose on the report's counts, in the choice's function order
        names = [fn["name"] for fn in bc["functions"]]
        inp = "".join(f"{calls.get(n, 0)} 2\n" for n in names)
        ref = subprocess.run([checker, repr(m["per_event"]), "0", repr(m["budget"])],
                             input=inp, stdout=subprocess.PIPE, text=True)
        lines = ref.stdout.split()
        want = sorted(n for n, t in zip(names, lines[1:]) if t == "1")
        check(ref.returncode == 0 and traced == want,
              f"{frac}: the choice is ptc_budget_choose's ({traced} vs {want})")
        if traced:
            args = [a for n in traced for a in ("--only", n)]
            sim = json.loads(run(ptcall, "bandwidth", trace, "--timing", "mtc", *args,
                                 "--format", "json").stdout)
            check(sim["modes"][0]["bytes"] == bc["chosen"]["bytes"],
                  f"{frac}: --only the chosen set simulates the same bytes "
                  f"({sim['modes'][0]['bytes']})")
    check(chose_some >= 2, "some budgets trace some functions")

    # table output names the choice
    p = run(ptcall, "bandwidth", trace, "--budget", f"{int(all_rate * 0.3)}")
    check("within a budget of" in p.stdout and "within the budget" in p.stdout,
          "the table has the budget section")

    # bad input
    for bad in ("abc", "0", "10M,100", "10M,", ",4M", "-5M"):
        p = run(ptcall, "bandwidth", trace, "--budget", bad, ok=(2,))
        lines = [x for x in p.stderr.splitlines() if x.strip()]
        check(p.returncode == 2 and len(lines) >= 1 and "RATE[,AUX]" in p.stderr,
              f"--budget {bad!r}: exit 2, says RATE[,AUX] ({lines[:1]})")
    p = run(ptcall, "bandwidth", trace, "--budget", "1", "--format", "json")
    bc = json.loads(p.stdout)["budget_choice"] if p.returncode == 0 else {}
    check(p.returncode == 0 and "below what tracing any function costs" in p.stderr
          and bc.get("calls_traced") == 0 and bc.get("traced") == 0,
          "--budget 1: one line, nothing traced")
    p = run(ptcall, "record", "--budget", "10M", "-o", os.path.join(work, "x.ptc"), "--", prog,
            "1", ok=(0, 1))
    if os.path.exists("/sys/bus/event_source/devices/intel_pt/type"):
        print("SKIP record --budget's refusal: this machine has Intel PT")
    else:
        check(p.returncode == 1 and "no Intel PT on this machine" in p.stderr
              and "ptcall bandwidth TRACE --budget RATE" in p.stderr
              and not os.path.exists(os.path.join(work, "x.ptc")),
              f"record --budget without Intel PT: {p.stderr.strip()[:160]}")
    p = run(ptcall, "record", "--backend", "soft", "--budget", "10M", "-o",
            os.path.join(work, "y.ptc"), "--", prog, "1", ok=(1,))
    check(p.returncode == 1 and "--overhead" in p.stderr, "record --backend soft --budget: refused")
    print(f"{fails} failure(s)")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
