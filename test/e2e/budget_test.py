#!/usr/bin/env python3
"""Tracing within a budget, the tools' side (docs/usage.md "Tracing within a budget"):

  calibrate        `ptcall calibrate` runs the real calibration program: sane figures (each
                   mode's median within its min..max, counting cheaper than a timed event),
                   quick, cached in $XDG_CACHE_HOME/ptcall/costs.json (JSON, keyed by CPU,
                   kernel and libptcall build id), --env prints PTCALL_COSTS; a cache file
                   ptcall did not write is left as it is (and said)
  --overhead       record passes PTCALL_OVERHEAD, PTCALL_PILOT_MS and PTCALL_COSTS (the event
                   cost of the timing mode in use, from the cache) to an instrumented program
                   that prints them; with no cache it calibrates first and says so
  --from-counts    the PTCALL_TRACE_SET file written next to -o equals ptc_budget_choose's
                   choice recomputed here from the counts trace, the cached costs and the run's
                   CPU time (RECORD_END cpu_ns); no pilot variables
  bad input        one line each: PCT malformed or out of range, --pilot 0 without previous
                   counts, --only, a program too short for its pilot, --from-counts of another
                   build or of a trace without COUNTS, a budget below counting, --backend pt,
                   --counts, --ring, --from-* without --overhead, a trace set file ptcall did
                   not write

usage: budget_test.py --build BUILD --work DIR
"""
import argparse
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FAILS = []


def run(cmd, ok=(0,), env=None, **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, **kw)
    if ok is not None and r.returncode not in ok:
        sys.exit("FAIL: %s exited %d\n%s%s" % (" ".join(cmd), r.returncode, r.stdout[-3000:],
                                                r.stderr[-3000:]))
    return r


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL: " + what)


def one_line(r, pattern, what):
    """pattern is in exactly one line of stderr."""
    lines = [l for l in r.stderr.splitlines() if re.search(pattern, l)]
    check(len(lines) == 1, "%s: want one line matching %r on stderr, got:\n%s" % (what, pattern, r.stderr))


def envs(r):
    return dict(re.findall(r"^ENV (\w+)=(.*)$", r.stdout, re.M))


def record_end_times(path):
    """RECORD_END's wall_ns and cpu_ns (minor 7; None before)."""
    d = open(path, "rb").read()
    hsize = struct.unpack_from("<I", d, 12)[0]
    off, wall, cpu = hsize, None, None
    while off + 24 <= len(d):
        t, fl, sz = struct.unpack_from("<HHI", d, off)
        if t == 10:
            wall = struct.unpack_from("<iIQ", d, off + 24)[2]
            cpu = struct.unpack_from("<Q", d, off + 48)[0] if sz >= 32 else None
        off += 24 + sz + (-sz % 8)
    return wall, cpu


def budget_chunks(path):
    """(kind, source, limit, traced, candidates, outcome, note) of each BUDGET chunk (type 19)."""
    d = open(path, "rb").read()
    off, out = struct.unpack_from("<I", d, 12)[0], []
    while off + 24 <= len(d):
        t, fl, sz = struct.unpack_from("<HHI", d, off)
        if t == 19:
            p = off + 24
            kind, source, limit = struct.unpack_from("<IId", d, p)
            cand, traced = struct.unpack_from("<QQ", d, p + 64)
            outcome, nsz = struct.unpack_from("<II", d, p + 96)
            note = d[p + 104:p + 104 + nsz].split(b"\0")[0].decode()
            out.append((kind, source, limit, traced, cand, outcome, note))
        off += 24 + sz + (-sz % 8)
    return out


def choose(funcs, per_event, per_count, budget):
    """common/ptc_budget.c's ptc_budget_choose over (name, calls), 2 events per call."""
    counting = sum(c * per_count for _, c in funcs)
    if counting > budget:
        return set(), "below"
    chosen, cost = set(), counting
    for i, (name, calls) in sorted(enumerate(funcs), key=lambda x: (x[1][1] * 2, x[0])):
        extra = calls * (2 * per_event - per_count)
        if cost + extra > budget:
            break
        cost += extra
        chosen.add(name)
    return chosen, "ok"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    b = os.path.abspath(a.build)
    ptcall = os.path.join(b, "tools", "ptcall")
    cc = os.path.join(b, "bin", "ptcall-cc")
    d = os.path.join(os.path.abspath(a.work), "budget")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    prog = os.path.join(d, "budget_prog")
    other = os.path.join(d, "budget_prog_other")
    src = os.path.join(HERE, "programs", "budget_prog.c")
    run([cc, "-O2", "-g", src, "-o", prog])
    run([cc, "-O2", "-g", "-DBP_OTHER_BUILD", src, "-o", other])
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("PTCALL_"):
            del env[k]
    env["XDG_CACHE_HOME"] = os.path.join(d, "cache")
    cache = os.path.join(d, "cache", "ptcall", "costs.json")

    # ---- calibrate
    t0 = time.monotonic()
    r = run([ptcall, "calibrate", "--format", "json"], env=env)
    took = time.monotonic() - t0
    out = json.loads(r.stdout)
    check(out["format_version"] == 1 and out["tool"] == "ptcall calibrate", "calibrate json header")
    try:
        import jsonschema
        schema = json.load(open(os.path.join(HERE, "..", "..", "docs", "schema", "calibrate.schema.json")))
        jsonschema.validate(out, schema)
        bad = dict(out, ns_per_event={"timed": {"ns": "fast"}})
        try:
            jsonschema.validate(bad, schema)
            check(False, "calibrate.schema.json accepts a figure that is not a number")
        except jsonschema.ValidationError:
            pass
    except ImportError:
        print("note: python3-jsonschema missing: calibrate --format json not checked against its schema")
    ev = out["ns_per_event"]
    for mode in ("timed", "untimed"):
        f = ev.get(mode)
        check(f and f["ns"] is not None and 0.1 < f["ns"] < 1000 and f["min"] <= f["ns"] <= f["max"],
              "calibrate: %s figure not sane: %r" % (mode, f))
    if "ticker" in ev and ev["ticker"]["ns"] is None:
        check(ev["ticker"]["why"], "calibrate: a skipped ticker mode says why")
    cnt = out["ns_per_count"]
    check(cnt["ns"] is not None and -2 < cnt["ns"] < ev["timed"]["ns"] * 2,
          "calibrate: counting's figure not sane next to a timed event's: %r %r" % (cnt, ev["timed"]))
    # a locked increment (lock incq) costs several ns where a plain one costs about 1
    locked = out.get("ns_per_count_atomic") or {}
    check(locked.get("ns") is not None and locked["ns"] > cnt["ns"] and
          locked["ns"] < ev["timed"]["ns"] * 4,
          "calibrate: the locked count's figure not sane next to the plain one: %r %r" % (locked, cnt))
    check(took < 40, "calibrate took %.1f s (about 3.5 s on an idle machine)" % took)
    print("calibrate: %.1f s: timed %.2f, untimed %.2f ns/event, count %.2f ns/call" %
          (took, ev["timed"]["ns"], ev["untimed"]["ns"], cnt["ns"]))
    check(os.path.isfile(cache), "calibrate: no cache file at %s" % cache)
    cached = json.loads(open(cache).read())
    check(cached["format"] == "ptcall-costs" and cached["version"] == 1 and len(cached["entries"]) == 1,
          "cache: format/entries: %r" % cached)
    entry = cached["entries"][0]
    check(entry["libptcall_build_id"] == out["libptcall_build_id"] and
          entry["ns_per_event"]["timed"]["ns"] == round(ev["timed"]["ns"], 3),
          "cache entry is not the figures printed: %r" % entry)
    r = run([ptcall, "calibrate", "--env"], env=env)
    m = re.fullmatch(r"PTCALL_COSTS=event=([0-9.]+),count=(-?[0-9.]+)\n", r.stdout)
    check(m, "calibrate --env: %r" % r.stdout)
    cached = json.loads(open(cache).read())
    entry = cached["entries"][0]
    check(len(cached["entries"]) == 1, "cache: a second calibration of the same key adds an entry")
    if m:
        check(abs(float(m.group(1)) - entry["ns_per_event"]["timed"]["ns"]) < 0.006 and
              abs(float(m.group(2)) - entry["ns_per_count"]["ns"]) < 0.006,
              "calibrate --env is not the cached timed figure: %r %r" % (r.stdout, entry))
    # a file at the cache's path that ptcall did not write is left as it is
    foreign_env = dict(env, XDG_CACHE_HOME=os.path.join(d, "foreign"))
    os.makedirs(os.path.join(d, "foreign", "ptcall"))
    foreign = os.path.join(d, "foreign", "ptcall", "costs.json")
    open(foreign, "w").write('{"mine": true}\n')
    r = run([ptcall, "calibrate"], env=foreign_env)
    check(open(foreign).read() == '{"mine": true}\n', "calibrate replaced a file it did not write")
    one_line(r, r"was not written by ptcall: left as it is", "foreign cache")

    timed, untimed, count = (entry["ns_per_event"]["timed"]["ns"], entry["ns_per_event"]["untimed"]["ns"],
                             entry["ns_per_count"]["ns"])
    # the environment is read as the runtime reads it: "yes" is on, a bad clock one line
    r = run([ptcall, "calibrate", "--env"], env=dict(env, PTCALL_COUNT_ATOMIC="yes"))
    e2 = json.loads(open(cache).read())["entries"][0]
    m = re.fullmatch(r"PTCALL_COSTS=event=([0-9.]+),count=(-?[0-9.]+)\n", r.stdout)
    check(m and abs(float(m.group(2)) - e2["ns_per_count_atomic"]["ns"]) < 0.006,
          "PTCALL_COUNT_ATOMIC=yes calibrate --env is not the locked figure: %r" % r.stdout)
    r = run([ptcall, "calibrate", "--env"], ok=(1,), env=dict(env, PTCALL_CLOCK="bogus"))
    one_line(r, r"PTCALL_CLOCK: clock 'bogus' is not tsc or ticker", "calibrate --env, bad clock")
    # calibrate measures again each time: the figures are the cache's after it
    r = run([ptcall, "calibrate", "--env"], env=dict(env, PTCALL_COUNT_ATOMIC="1"))
    entry = json.loads(open(cache).read())["entries"][0]
    timed, untimed, count, locked = (entry["ns_per_event"]["timed"]["ns"],
                                     entry["ns_per_event"]["untimed"]["ns"],
                                     entry["ns_per_count"]["ns"],
                                     entry["ns_per_count_atomic"]["ns"])
    m = re.fullmatch(r"PTCALL_COSTS=event=([0-9.]+),count=(-?[0-9.]+)\n", r.stdout)
    # printed with 2 decimals of the measured figure, cached with 3: within rounding
    check(m and abs(float(m.group(1)) - timed) < 0.006 and abs(float(m.group(2)) - locked) < 0.006,
          "PTCALL_COUNT_ATOMIC=1 calibrate --env is not the locked figure: %r, timed %.3f, "
          "locked %.3f" % (r.stdout, timed, locked))

    def rec(opts, args=("100000",), ok=(0,), e=env, name="t.ptc"):
        return run([ptcall, "record", "--backend", "soft", "-o", os.path.join(d, name)] + opts +
                   ["--", prog] + list(args), ok=ok, env=e, cwd=d)

    # ---- record --overhead: the variables, from the cache
    r = rec(["--overhead", "5"])
    v = envs(r)
    check(v.get("PTCALL_OVERHEAD") == "5" and v.get("PTCALL_PILOT_MS") == "200" and
          v.get("PTCALL_GOVERNOR_MS") == "200" and
          v.get("PTCALL_COSTS") == "event=%.2f,count=%.2f" % (timed, count) and
          v.get("PTCALL_TRACE_SET") == "(unset)",
          "record --overhead 5: variables %r, cache timed %.3f count %.3f" % (v, timed, count))
    one_line(r, r"--overhead 5%%: pilot 200 ms, governor every 200 ms, costs timed %.1f ns/event, count %.1f ns/call "
             r"\(calibrated \d{4}-\d\d-\d\d\)" % (timed, count), "record --overhead line")
    check("calibrated first" not in r.stderr, "record --overhead calibrated with a cache present")
    r = rec(["--overhead", "2.5%", "--pilot", "50ms", "--no-timestamps"])
    v = envs(r)
    check(v.get("PTCALL_OVERHEAD") == "2.5" and v.get("PTCALL_PILOT_MS") == "50" and
          v.get("PTCALL_COSTS") == "event=%.2f,count=%.2f" % (untimed, count),
          "record --overhead 2.5%% --pilot 50ms --no-timestamps: %r" % v)
    # --atomic-counts: the locked count's figure
    r = rec(["--overhead", "5", "--atomic-counts"])
    m = re.fullmatch(r"event=([0-9.]+),count=(-?[0-9.]+)", envs(r).get("PTCALL_COSTS", ""))
    check(m and abs(float(m.group(1)) - timed) < 0.006 and abs(float(m.group(2)) - locked) < 0.006,
          "record --overhead 5 --atomic-counts: %r, locked %.3f" % (envs(r), locked))
    one_line(r, r"count \(locked\) %.1f ns/call" % locked, "record --overhead --atomic-counts line")
    # a cache entry from before the locked figure: measured again, not refused
    old = json.loads(open(cache).read())
    for e_ in old["entries"]:
        e_.pop("ns_per_count_atomic", None)
    with open(cache, "w") as f:
        f.write('{"format": "ptcall-costs", "version": 1, "entries": [\n' +
                ",\n".join(json.dumps(e_) for e_ in old["entries"]) + "\n]}\n")
    r = rec(["--overhead", "5", "--atomic-counts"])
    check(envs(r).get("PTCALL_COSTS", "").startswith("event=") and
          "ns_per_count_atomic" in open(cache).read(),
          "an old cache entry without the locked figure was not measured again: %r" % envs(r))
    cached = json.loads(open(cache).read())["entries"][0]
    timed, untimed, count, locked = (cached["ns_per_event"]["timed"]["ns"],
                                     cached["ns_per_event"]["untimed"]["ns"],
                                     cached["ns_per_count"]["ns"],
                                     cached["ns_per_count_atomic"]["ns"])
    # no cache yet: calibrates first, says so, caches
    fresh = dict(env, XDG_CACHE_HOME=os.path.join(d, "fresh"))
    r = rec(["--overhead", "5"], e=fresh)
    one_line(r, r"calibrated first, in [0-9.]+ s", "record --overhead without a cache")
    check(os.path.isfile(os.path.join(d, "fresh", "ptcall", "costs.json")), "record did not cache")
    check(envs(r).get("PTCALL_COSTS", "(unset)").startswith("event="), "record without cache: no costs")
    # no budget option: the caller's own variables go through (they are the runtime's, for a
    # program started by its service manager too: docs/runtime.md); with --overhead, record's
    # replace them
    r = rec([], e=dict(env, PTCALL_OVERHEAD="9", PTCALL_TRACE_SET="/x"))
    check(envs(r).get("PTCALL_OVERHEAD") == "9" and envs(r).get("PTCALL_TRACE_SET") == "/x",
          "record without --overhead did not pass the caller's PTCALL_OVERHEAD/TRACE_SET: %r" % envs(r))
    r = rec(["--overhead", "5"], e=dict(env, PTCALL_OVERHEAD="9", PTCALL_TRACE_SET="/x"))
    check(envs(r).get("PTCALL_OVERHEAD") == "5" and envs(r).get("PTCALL_TRACE_SET") == "(unset)",
          "record --overhead 5 kept the caller's PTCALL_OVERHEAD/TRACE_SET: %r" % envs(r))

    # ---- --from-counts: the trace set is ptc_budget_choose's choice
    counts = os.path.join(d, "counts.ptc")
    run([ptcall, "record", "--backend", "soft", "--counts", "-o", counts, "--", prog, "1000000"],
        env=env, cwd=d)
    rep = json.loads(run([ptcall, "report", counts, "--format", "json", "--top", "0"], env=env).stdout)
    funcs = [(f["name"], int(f["calls"])) for f in rep["functions"]]
    threads = max(1, int(rep.get("totals", {}).get("threads", 1) or 1))
    wall, cpu = record_end_times(counts)
    # the span is the run's CPU time (RECORD_END's cpu_ns), not wall time x threads
    check(cpu is not None and 0 < cpu <= wall * threads * 1.2 + 20e6,
          "RECORD_END's cpu_ns not sane: cpu %r, wall %r, threads %d" % (cpu, wall, threads))
    for pct in ("3", "30"):
        name = "fc%s.ptc" % pct
        setf = os.path.join(d, name + ".trace-set")
        r = rec(["--overhead", pct, "--from-counts", counts], name=name)
        v = envs(r)
        check(v.get("PTCALL_TRACE_SET") == setf and v.get("PTCALL_OVERHEAD") == "(unset)" and
              v.get("PTCALL_PILOT_MS") == "(unset)", "--from-counts %s: variables %r" % (pct, v))
        lines = open(setf).read().splitlines()
        check(lines[0] == "ptcall-trace-set 1", "trace set first line: %r" % lines[:1])
        got = {l for l in lines[1:] if l and not l.startswith("#")}
        want, _ = choose(funcs, timed, count, float(pct) / 100 * cpu)
        called = {n for n, c in funcs if c}
        check(got & called == want, "--from-counts %s: trace set %r, recomputed %r (calls %r, cpu %d ns)"
              % (pct, sorted(got), sorted(want), funcs, cpu))
        one_line(r, r"--overhead %s%%: from the counts of .* \(its CPU time [0-9.]+ s\): \d+ of \d+ "
                 r"functions traced.*predicted" % pct, "--from-counts line")
        # the trace says the budget and its choice (BUDGET, source 2 PREVIOUS), as a pilot's
        bc = budget_chunks(os.path.join(d, name))
        check(len(bc) == 1 and bc[0][:2] == (1, 2) and abs(bc[0][2] - float(pct) / 100) < 1e-9
              and bc[0][3] == len(got) and "from the counts of" in bc[0][6],
              "--from-counts %s: BUDGET chunks %r, want one of source PREVIOUS tracing %d" %
              (pct, bc, len(got)))
        print("--from-counts %s%%: traced %s" % (pct, sorted(got & called)))

    # ---- --from-db: the same choice from the runs database's figures of the run
    db = os.path.join(d, "runs.db")
    plain = os.path.join(d, "plain.ptc")
    run([ptcall, "record", "--backend", "soft", "-o", plain, "--", prog, "1000"], env=env, cwd=d)
    run([ptcall, "db", "add", "--db", db, plain], env=env)  # an older run of the build: not chosen
    run([ptcall, "db", "add", "--db", db, counts], env=env)
    import sqlite3
    con = sqlite3.connect(db)
    rid, dur, thr = con.execute("SELECT id, duration_ns, threads FROM runs WHERE trace = ?",
                                (os.path.abspath(counts),)).fetchone()
    dbf = [(n, c) for n, c in con.execute(
        "SELECT f.name, rf.calls FROM run_functions rf JOIN functions f ON f.id = rf.function_id "
        "WHERE rf.run_id = ?", (rid,))]
    con.close()
    name = "fdb.ptc"
    r = rec(["--overhead", "30", "--from-db", db], name=name)
    setf = os.path.join(d, name + ".trace-set")
    check(envs(r).get("PTCALL_TRACE_SET") == setf, "--from-db: variables %r" % envs(r))
    got = {l for l in open(setf).read().splitlines()[1:] if l and not l.startswith("#")}
    want, _ = choose(dbf, timed, count, 0.30 * dur * max(1, thr))
    check(got & {n for n, c in dbf if c} == want,
          "--from-db: trace set %r, recomputed %r (run %d: %r, %d ns x %d)" % (sorted(got), sorted(want), rid, dbf, dur, thr))
    one_line(r, r"--overhead 30%%: from run %d of .*functions traced" % rid, "--from-db line")
    r = run([ptcall, "record", "--backend", "soft", "-o", os.path.join(d, "odb.ptc"), "--overhead", "5",
             "--from-db", db, "--", other, "1000"], ok=(1,), env=env, cwd=d)
    one_line(r, r"--from-db .*no run of this build", "--from-db of another build")

    # ---- bad input, one line each
    for bad in ("0", "101", "abc", "5x", "-3"):
        r = rec(["--overhead", bad], ok=(2,))
        one_line(r, r"--overhead.*above 0 and at most 100", "--overhead %s" % bad)
    r = rec(["--overhead", "5", "--pilot", "0"])
    one_line(r, r"--pilot 0 and no --from-counts: nothing to choose from; using a pilot of 200 ms", "--pilot 0")
    check(envs(r).get("PTCALL_PILOT_MS") == "200", "--pilot 0: PILOT_MS %r" % envs(r))
    r = rec(["--overhead", "5", "--only", "bp_*"])
    one_line(r, r"with --only: the budget chooses among --only's functions", "--only")
    r = rec(["--overhead", "5"], args=("10",))
    one_line(r, r"ended \d+ ms into its pilot, .*: counts only, nothing traced", "short program")
    check(r.stderr.rstrip().splitlines()[-1].find("into its pilot") >= 0, "the short-pilot line is not at the end")
    r = run([ptcall, "record", "--backend", "soft", "-o", os.path.join(d, "ob.ptc"), "--overhead", "5",
             "--from-counts", counts, "--", other, "1000"], ok=(1,), env=env, cwd=d)
    one_line(r, r"--from-counts .*another build than", "another build")
    r = rec(["--overhead", "5", "--from-counts", plain], ok=(1,))
    one_line(r, r"holds no counts \(no COUNTS chunk\)", "trace without COUNTS")
    r = rec(["--overhead", "0.0001", "--from-counts", counts], name="below.ptc")
    one_line(r, r"counting alone costs .* every function counted, none traced", "below counting")
    lines = open(os.path.join(d, "below.ptc.trace-set")).read().splitlines()
    check([l for l in lines[1:] if not l.startswith("#")] == [], "below counting: the trace set lists %r" % lines)
    r = run([ptcall, "record", "--backend", "pt", "--overhead", "5", "--", prog], ok=(2,), env=env, cwd=d)
    one_line(r, r"Intel PT's is --budget RATE", "--backend pt")
    r = rec(["--overhead", "5", "--counts"])
    one_line(r, r"with --counts: .*recording counts only", "--counts")
    check(envs(r).get("PTCALL_OVERHEAD") == "(unset)", "--counts: the budget passed on")
    r = rec(["--overhead", "5", "--ring", "1M"], ok=(2,))
    one_line(r, r"--overhead chooses what a command traces from its start: leave out --ring", "--ring")
    r = rec(["--from-counts", counts], ok=(2,))
    one_line(r, r"--from-counts goes with --overhead", "--from-counts alone")
    r = rec(["--from-db", db], ok=(2,))
    one_line(r, r"--from-db goes with --overhead", "--from-db alone")
    r = rec(["--pilot", "1s"], ok=(2,))
    one_line(r, r"--pilot goes with --overhead", "--pilot alone")
    r = rec(["--overhead", "5", "--from-counts", counts, "--from-db", db], ok=(2,))
    one_line(r, r"--from-counts and --from-db are two sources", "both sources")
    r = run([ptcall, "record", "--backend", "soft", "--overhead", "5", "--pid", str(os.getpid())],
            ok=(2,), env=env, cwd=d)
    one_line(r, r"leave out --pid", "--pid")
    theirs = os.path.join(d, "theirs.ptc.trace-set")
    open(theirs, "w").write("my notes\n")
    r = rec(["--overhead", "5", "--from-counts", counts], ok=(1,), name="theirs.ptc")
    one_line(r, r"exists and was not written by ptcall record: left as it is", "foreign trace set")
    check(open(theirs).read() == "my notes\n", "a trace set file ptcall did not write was replaced")

    if FAILS:
        sys.exit("%d failure(s)" % len(FAILS))
    print("ok")


if __name__ == "__main__":
    main()
