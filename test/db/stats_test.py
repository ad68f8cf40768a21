#!/usr/bin/env python3
"""The campaign comparison's statistics (db/db_stats.c, docs/web.md *Comparing campaigns*)
against scipy's and numpy's: the two-sided Mann-Whitney U test (U, p and whether the exact
distribution or the normal approximation was used, by scipy's 'auto' rule), Vargha-Delaney A12
(from its definition, pair by pair), median and quartiles (numpy.percentile's default), mean
and the sample standard deviation, on samples with and without ties, small and large.

usage: stats_test.py STATS_CHECK  (SKIP, 77, without scipy)
"""
import json
import os
import random
import subprocess
import sys

try:
    import numpy as np
    from scipy import stats
except ImportError:
    # Debian's python3-scipy is for /usr/bin/python3: run there when this one lacks it
    if os.path.exists("/usr/bin/python3") and os.path.realpath(sys.executable) != \
            os.path.realpath("/usr/bin/python3") and not os.environ.get("STATS_TEST_REEXEC"):
        os.environ["STATS_TEST_REEXEC"] = "1"
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    print("SKIP: scipy is missing (Debian: python3-scipy; scripts/setup.sh installs it)")
    sys.exit(77)

CHECK = sys.argv[1]
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def close(a, b, rel=1e-9, absolute=1e-12):
    return abs(a - b) <= max(absolute, rel * max(abs(a), abs(b)))


def a12(x, y):
    gt = sum(1 for a in x for b in y if a > b)
    eq = sum(1 for a in x for b in y if a == b)
    return (gt + eq / 2) / (len(x) * len(y))


def run(name, x, y):
    out = subprocess.run([CHECK, ",".join(repr(float(v)) for v in x),
                          ",".join(repr(float(v)) for v in y)],
                         capture_output=True, text=True, check=True).stdout
    got = json.loads(out)
    ref = stats.mannwhitneyu(x, y, alternative="two-sided", method="auto")
    ties = len(set(list(x) + list(y))) < len(x) + len(y)
    exact = not ties and (len(x) <= 8 or len(y) <= 8)
    check(close(got["u"], ref.statistic), "%s: U %g (scipy %g)" % (name, got["u"], ref.statistic))
    check(close(got["p"], ref.pvalue, rel=1e-7), "%s: p %.10g (scipy %.10g)" %
          (name, got["p"], ref.pvalue))
    check(got["exact"] == int(exact), "%s: method %s (scipy's auto: %s)" %
          (name, "exact" if got["exact"] else "normal", "exact" if exact else "asymptotic"))
    check(close(got["a12"], a12(x, y)), "%s: A12 %g (pairs %g)" % (name, got["a12"], a12(x, y)))
    for key, v in (("x", x), ("y", y)):
        s = got[key]
        want = {"median": np.percentile(v, 50), "q1": np.percentile(v, 25),
                "q3": np.percentile(v, 75), "min": min(v), "max": max(v), "mean": np.mean(v),
                "stddev": np.std(v, ddof=1) if len(v) > 1 else -1.0}
        bad = [k for k in want if not close(s[k], float(want[k]))]
        check(not bad, "%s: summary of %s %s" % (name, key, "agrees with numpy" if not bad else
                                                    "differs in %s: %s vs %s" % (
                                                        bad, [s[k] for k in bad],
                                                        [float(want[k]) for k in bad])))


rng = random.Random(30)
run("small, no ties (exact)", [101, 104, 99, 110, 108], [95, 97, 100, 93, 96, 98])
run("small, one sided completely (exact)", [10, 11, 12], [1, 2, 3, 4])
run("8 against 20, no ties (exact)", rng.sample(range(1000), 8), rng.sample(range(1000, 3000), 20))
run("small with ties (normal)", [88, 88, 90, 91, 88], [88, 87, 86, 88, 85])
run("all equal (normal, p 1)", [5, 5, 5], [5, 5, 5, 5])
run("FuzzBench-sized, 20 trials each, ties", [rng.randint(80, 95) for _ in range(20)],
    [rng.randint(84, 99) for _ in range(20)])
run("large, no ties (normal)", rng.sample(range(100000), 40), rng.sample(range(50000, 150000), 35))
run("one trial each", [3], [4])
run("fractions, interleaved", [0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5],
    [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0])
if failures:
    print("%d failures" % len(failures))
    sys.exit(1)
print("all agree with scipy")
