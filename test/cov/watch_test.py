#!/usr/bin/env python3
"""`ptcall cov run --watch` (docs/cov.md, "Watching a live campaign") on test/cov/watch_target.c:
built with afl-clang-fast for afl-fuzz and with `ptcall-cc -fptcall-cov` for measuring.

1. A real afl-fuzz instance runs for about 35 s while the watch follows it (--until-idle): the
   .ptcov read at several moments is whole and says it is a live snapshot; at the end every
   entry of queue/, crashes/ and hangs/ is in the file exactly once, and each input's function
   set equals a plain `cov run` of the finished queue. The lag (an entry's file time to the
   first snapshot holding it, seen from outside) and the watcher's CPU share (wait4's rusage of
   the watcher and everything under it) are printed.
2. A libFuzzer-style corpus grown by this script, every entry about 20 ms of CPU, watched with
   --cpu 0.25: the CPU share stays near a quarter of one core, at nice 19; SIGINT ends it with
   exit 0.
3. Made-up AFL++ instances (fuzzer_stats with a live fuzzer_pid): a plateau (--plateau 2s) said
   once and its end when coverage grows; a new instance followed; an entry rewritten in place
   (as AFL++ trims one: measured again, its result replaced); an afl-cmin-like rewrite
   (entries gone said once, what was measured kept, new entries measured); an instance
   restarted (start_time changed, an id reused: the earlier result kept as NAME~START); an
   instance directory removed; a corpus directory removed; the output replaced by another
   process (never written over); --until-idle when the fuzzer_pid is gone.
4. Resuming on the same -o: nothing measured again; SIGTERM ends it with exit 0; --jobs 2
   capped at one runner, said. Refused with
   one line: an -o that is not a .ptcov (left as it was), an -o inside a watched directory,
   --watch without a directory, a
   directory that is not one, --cpu without --watch.

On the code before --watch existed every part fails: `cov run --watch` was a usage error.

usage: watch_test.py BUILD_DIR SOURCE_DIR WORK_DIR
"""
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import time

from covcheck import check, failures, ptcov_records, run  # test/cov/covcheck.py, beside this script


def report(ptcall, path):
    """(json, stderr) of `cov report --format json`, or (None, stderr)."""
    r = run([ptcall, "cov", "report", "--format", "json", path])
    if r.returncode:
        return None, r.stderr
    return json.loads(r.stdout), r.stderr


def sets(js):
    """name -> set of function names reached."""
    names = [f["name"] for f in js["functions"]]
    return {i["name"]: frozenset(names[k] for k in i["functions"]) for i in js["inputs"]}


def disk_entries(outdir):
    """The stored names of every entry of an AFL++ output directory's instances."""
    out = set()
    for inst in sorted(os.listdir(outdir)):
        for sub in ("queue", "crashes", "hangs"):
            d = os.path.join(outdir, inst, sub)
            if not os.path.isdir(d):
                continue
            for n in os.listdir(d):
                if not n.startswith(".") and n != "README.txt" and \
                        os.path.isfile(os.path.join(d, n)):
                    out.add("%s/%s/%s" % (inst, sub, n))
    return out


class Child:
    """A process waited for with wait4, for the CPU of it and everything it waited for (the
    fork server and the runs): Popen.poll would reap it without the rusage."""

    def __init__(self, args, **kw):
        self.p = subprocess.Popen(args, **kw)
        self.pid = self.p.pid
        self.rc = self.cpu = None

    def running(self):
        if self.rc is None:
            pid, status, ru = os.wait4(self.pid, os.WNOHANG)
            if pid:
                self.rc = os.waitstatus_to_exitcode(status)
                self.cpu = ru.ru_utime + ru.ru_stime
        return self.rc is None

    def wait(self, timeout=60):
        t0 = time.time()
        while self.running():
            if time.time() - t0 > timeout:
                self.p.kill()
            time.sleep(0.05)
        return self.rc, self.cpu

    def send_signal(self, sig):
        if self.running():
            os.kill(self.pid, sig)


def watch_cmd(ptcall, *args):
    return [ptcall, "cov", "run", "--watch", "--save-every", "500ms"] + list(args)


def live_afl(ptcall, work, t_afl, t_cov):
    """Part 1: a real afl-fuzz instance."""
    os.makedirs("seeds")
    with open("seeds/a", "w") as f:
        f.write("hello 12")
    env = dict(os.environ, AFL_SKIP_CPUFREQ="1", AFL_NO_UI="1", AFL_NO_AFFINITY="1",
               AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES="1", AFL_SHUFFLE_QUEUE="0",
               AFL_QUIET="1", AFL_SKIP_BIN_CHECK="0")
    # the fuzzer's target is not sanitized: afl-fuzz refuses to start under the sanitizer
    # suite's ASAN_OPTIONS ("Custom ASAN_OPTIONS set without abort_on_error=1")
    for k in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "MSAN_OPTIONS"):
        env.pop(k, None)
    afl = subprocess.Popen(["afl-fuzz", "-i", "seeds", "-o", "afl", "-V", "35", "--", t_afl,
                            "@@"], env=env, stdout=open("afl.log", "w"),
                           stderr=subprocess.STDOUT)
    while not os.path.isdir("afl") and afl.poll() is None:
        time.sleep(0.05)
    if not check(os.path.isdir("afl"), "afl-fuzz started (exit %s): %s" %
                 (afl.poll(), open("afl.log", errors="replace").read()[-600:])):
        return
    t_start = time.time()
    w = Child(watch_cmd(ptcall, "--afl", "afl", "--until-idle", "-o", "live.ptcov", "--", t_cov,
                        "@@"), stderr=open("live.err", "w"))
    first_file, first_in = {}, {}
    snapshots = valid = live_note = 0
    while w.running() and time.time() - t_start < 90:
        now = time.time()
        afl.poll()   # reaped as its shell would: a zombie's pid still answers kill(pid, 0)
        if os.path.isdir("afl"):
            for name in disk_entries("afl"):
                if name not in first_file:
                    try:
                        first_file[name] = min(now, os.stat(os.path.join("afl", name)).st_mtime)
                    except OSError:
                        pass
        if os.path.exists("live.ptcov"):
            snapshots += 1
            js, err = report(ptcall, "live.ptcov")
            if check(js is not None, "the .ptcov is whole at any moment: " + err.strip()):
                valid += 1
                live_note += "snapshot of a live campaign" in err
                for i in js["inputs"]:
                    first_in.setdefault(i["name"], now)
        time.sleep(0.3)
    rc, cpu = w.wait()
    wall = time.time() - t_start
    afl.wait(timeout=30)
    err = open("live.err").read()
    check(rc == 0, "the watch ends by itself when the instance stopped (--until-idle), exit 0 "
                   "(%s): %s" % (rc, err[-600:]))
    check(snapshots >= 5 and valid == snapshots,
          "the file was read whole at %d of %d moments (at least 5)" % (valid, snapshots))
    check(live_note >= 1, "a snapshot says it is of a live campaign (%d)" % live_note)
    js, err2 = report(ptcall, "live.ptcov")
    if not check(js is not None, "the final file reads: " + err2):
        return
    check("snapshot of a live campaign" not in err2, "the final file is not a live snapshot")
    names = [i["name"] for i in js["inputs"]]
    on_disk = disk_entries("afl")
    check(len(names) == len(set(names)), "every entry is in the file once (%d names, %d "
                                         "distinct)" % (len(names), len(set(names))))
    check(set(names) == on_disk, "every entry on disk is measured: missing %s, extra %s" %
          (sorted(on_disk - set(names))[:5], sorted(set(names) - on_disk)[:5]))
    check(len(on_disk) >= 5, "afl-fuzz wrote a queue (%d entries)" % len(on_disk))
    # every watched input carries its content hash (record 10), as cov run's do: cov merge
    # deduplicates the parts of many machines by it
    raw = open("live.ptcov", "rb").read()
    kinds = [t for t, _, _ in ptcov_records(raw, 20)]
    check(kinds.count(10) == len(names) and kinds.count(9) == 1,
          "the watch writes an INPUT_HASH per input (%d of %d) and one ORIGIN (%d)" %
          (kinds.count(10), len(names), kinds.count(9)))
    r = run([ptcall, "cov", "run", "--afl", "afl", "-o", "plain.ptcov", "--", t_cov, "@@"])
    check(r.returncode == 0, "a plain cov run of the finished queue: " + r.stderr)
    plain, _ = report(ptcall, "plain.ptcov")
    if plain:
        a, b = sets(js), sets(plain)
        diff = [n for n in a if a[n] != b.get(n)]
        check(not diff and a.keys() == b.keys(),
              "each input's function set equals a plain cov run's (%d differ: %s)" %
              (len(diff), diff[:3]))
    lags = [first_in[n] - max(first_file[n], t_start) for n in first_in if n in first_file]
    lags = [max(0.0, x) for x in lags]
    m = [l for l in err.splitlines() if "watch ended" in l]
    print("live AFL++ (default settings, --save-every 500ms): %d entries; lag seen from outside "
          "(0.3 s polls): median %.2f s, max %.2f s; watcher CPU %.2f s in %.1f s = %.1f%% of "
          "one core" % (len(names), statistics.median(lags) if lags else -1,
                        max(lags) if lags else -1, cpu, wall, 100 * cpu / wall))
    print("  the watcher says: " + (m[0] if m else "(no summary)"))
    check(lags and max(lags) < 10, "no entry lags more than 10 s behind its file")
    check(cpu / wall <= 1.05, "the watcher takes at most one core (%.2f)" % (cpu / wall))


def corpus_cpu(ptcall, t_cov):
    """Part 2: a corpus grown by a script, --cpu 0.25."""
    os.makedirs("corpus")
    t0 = time.time()
    w = Child(watch_cmd(ptcall, "--corpus", "corpus", "--cpu", "0.25", "-o", "corpus.ptcov",
                        "--", t_cov, "@@"), stderr=open("corpus.err", "w"))
    n = 120
    time.sleep(0.3)
    try:
        nice = os.getpriority(os.PRIO_PROCESS, w.pid)
    except OSError:
        nice = None
    check(nice == 19, "the watch runs at nice 19 by default (%s)" % nice)
    for k in range(n):
        with open("corpus/.tmp", "w") as f:
            f.write("SPIN %d" % k)
        os.rename("corpus/.tmp", "corpus/%040x" % k)   # libFuzzer names files by SHA-1
        time.sleep(0.02)
    done = 0
    while time.time() - t0 < 60:
        js, _ = report(ptcall, "corpus.ptcov") if os.path.exists("corpus.ptcov") else (None, "")
        done = len(js["inputs"]) if js else 0
        if done >= n:
            break
        time.sleep(0.5)
    w.send_signal(signal.SIGINT)
    rc, cpu = w.wait()
    wall = time.time() - t0
    err = open("corpus.err").read()
    check(rc == 0, "SIGINT ends the watch with exit 0 (%s): %s" % (rc, err[-400:]))
    js, _ = report(ptcall, "corpus.ptcov")
    names = [i["name"] for i in js["inputs"]] if js else []
    check(len(names) == n and len(set(names)) == n,
          "every corpus file measured once (%d of %d)" % (len(set(names)), n))
    share = cpu / wall
    m = [l for l in err.splitlines() if "watch ended" in l]
    print("corpus, --cpu 0.25, %d entries of ~20 ms CPU written in %.1f s: all measured after "
          "%.1f s; CPU %.2f s = %.1f%% of one core" % (n, n * 0.02, wall, cpu, 100 * share))
    print("  the watcher says: " + (m[0] if m else "(no summary)"))
    # unthrottled, the runs would take their CPU time at once; the spin's cost per entry
    # varies with the machine's load, so the spread is judged by the CPU they did take
    check(share <= 0.32, "--cpu 0.25 holds the watch near a quarter of one core (%.2f)" % share)
    check(cpu >= 0.5 and wall >= cpu / 0.25 * 0.8,
          "the runs were spread out (%.1f s for %.2f s of CPU)" % (wall, cpu))


def fake_instance(root, name, start, pid):
    d = os.path.join(root, name)
    for sub in ("queue", "crashes", "hangs"):
        os.makedirs(os.path.join(d, sub), exist_ok=True)
    with open(os.path.join(d, "fuzzer_stats"), "w") as f:
        f.write("start_time        : %d\nlast_update       : %d\nfuzzer_pid        : %d\n"
                "run_time          : 1\n" % (start, int(time.time()), pid))
    return d


def put(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.rename(path + ".tmp", path)


def wait_for(path, what, timeout=15):
    t0 = time.time()
    while time.time() - t0 < timeout:
        if what in open(path).read():
            return True
        time.sleep(0.1)
    return False


def bad_cases(ptcall, t_cov):
    """Part 3: made-up instances, each bad case said once."""
    fuzzer = subprocess.Popen(["sleep", "300"])   # the instances' fuzzer_pid
    start = int(time.time()) - 100
    m1 = fake_instance("fake", "m1", start, fuzzer.pid)
    for k in range(6):
        put(os.path.join(m1, "queue", "id:%06d,time:%d,op:havoc" % (k, k * 10)), "%d" % (k * 1111))
    os.makedirs("corp2")
    put("corp2/one", "hello world")
    w = subprocess.Popen(watch_cmd(ptcall, "--afl", "fake", "--corpus", "corp2", "--until-idle",
                                   "--plateau", "2s", "--poll", "200ms", "-o", "fake.ptcov",
                                   "--", t_cov, "@@"),
                         stderr=open("fake.err", "w"))
    e = "fake.err"
    check(wait_for(e, "plateau: no new function"), "the plateau is said (--plateau 2s)")
    put(os.path.join(m1, "queue", "id:000006,time:70,op:havoc"), "WATCH")
    check(wait_for(e, "coverage grows again"), "the end of the plateau is said")
    # a new instance
    s2 = fake_instance("fake", "s2", start, fuzzer.pid)
    put(os.path.join(s2, "queue", "id:000000,time:0,orig:x"), "abc def ghi")
    check(wait_for(e, "following a new AFL++ instance"), "a new instance is followed")
    time.sleep(1.5)
    # rewritten in place under its name (as AFL++ trims an entry): measured again, replaced
    put(os.path.join(s2, "queue", "id:000000,time:0,orig:x"), "WATCH")
    time.sleep(1.5)
    # afl-cmin-like: the queue rewritten, half its entries gone, one new
    tmp = os.path.join(m1, "queue.new")
    os.makedirs(tmp)
    for k in (0, 2, 4):
        n = "id:%06d,time:%d,op:havoc" % (k, k * 10)
        shutil.copy2(os.path.join(m1, "queue", n), os.path.join(tmp, n))
    put(os.path.join(tmp, "id:000010,time:200,op:cmin"), "Wx")
    # swapped in by renames (an rmtree in place would be seen half done, and said twice)
    os.rename(os.path.join(m1, "queue"), os.path.join(m1, "queue.old"))
    os.rename(tmp, os.path.join(m1, "queue"))
    shutil.rmtree(os.path.join(m1, "queue.old"))
    check(wait_for(e, "entries of"), "entries gone from a rewritten queue are said")
    time.sleep(1.5)
    # a restart: start_time changes, id:000000 is another input now
    fake_instance("fake", "m1", start + 50, fuzzer.pid)
    put(os.path.join(m1, "queue", "id:000000,time:0,op:havoc"), "WA restarted")
    check(wait_for(e, "restarted (start_time"), "an instance's restart is said")
    time.sleep(1.5)
    # an instance removed, a corpus directory removed
    shutil.rmtree(s2)
    check(wait_for(e, "is gone (its directory was removed)"), "a removed instance is said")
    shutil.rmtree("corp2")
    check(wait_for(e, "the corpus directory"), "a removed corpus directory is said")
    time.sleep(1.5)
    # another process replaces the output: never written over
    put("fake.ptcov", "not ours\n")
    put(os.path.join(m1, "queue", "id:000011,time:300,op:havoc"), "77777")
    check(wait_for(e, "was replaced by another process"), "a replaced output is said")
    time.sleep(1.5)
    fuzzer.kill()
    fuzzer.wait()
    try:
        rc = w.wait(timeout=30)
    except subprocess.TimeoutExpired:
        w.kill()
        rc = w.wait()
    err = open(e).read()
    print(err)
    check(rc == 0, "--until-idle ends the watch when the fuzzer_pid is gone (exit %s)" % rc)
    check(open("fake.ptcov").read() == "not ours\n", "the replaced output is left as it was")
    alt = "fake.ptcov.%d.ptcov" % w.pid
    js, rerr = report(ptcall, alt)
    if not check(js is not None, "the watch wrote %s instead: %s" % (alt, rerr)):
        return None
    names = {i["name"] for i in js["inputs"]}
    want = {"m1/queue/id:%06d,time:%d,op:havoc" % (k, k * 10) for k in range(1, 6)}
    want.add("m1/queue/id:000006,time:70,op:havoc")
    want |= {"m1/queue/id:000010,time:200,op:cmin", "m1/queue/id:000011,time:300,op:havoc",
             "s2/queue/id:000000,time:0,orig:x", "corp2/one",
             "m1/queue/id:000000,time:0,op:havoc~%d" % start,
             "m1/queue/id:000000,time:0,op:havoc"}
    check(names == want, "what was measured stays, the new is measured: missing %s, extra %s" %
          (sorted(want - names), sorted(names - want)))
    first = err[:err.find("coverage grows again")]
    check(first.count("plateau: no new function") == 1,
          "a plateau is said once until coverage grows again")
    s2set = sets(js).get("s2/queue/id:000000,time:0,orig:x", set())
    check("st_w" in s2set, "an entry rewritten in place is measured again, its result "
                           "replaced (%s)" % sorted(s2set))
    check("(1 again after a rewrite)" in err, "the rewrite is counted in the summary")
    # each plateau is said once, then its end: how many depends on the test's timing
    check(err.count("plateau: no new function") == err.count("coverage grows again") + 1 or
          err.count("plateau: no new function") == err.count("coverage grows again"),
          "each plateau is said once and ended once")
    for what in ("entries of",
                 "restarted (start_time", "is gone (its directory", "the corpus directory",
                 "was replaced by another"):
        check(err.count(what) == 1, "'%s' is said once (%d)" % (what, err.count(what)))
    return alt


def resume_and_refusals(ptcall, t_cov, alt):
    """Part 4."""
    os.makedirs("fake/m1/queue", exist_ok=True)
    before, _ = report(ptcall, alt)
    w = subprocess.Popen(watch_cmd(ptcall, "--afl", "fake", "--jobs", "2", "-o", alt, "--",
                                   t_cov, "@@"), stderr=open("resume.err", "w"))
    time.sleep(3)
    w.send_signal(signal.SIGTERM)
    rc = w.wait(timeout=30)
    err = open("resume.err").read()
    check(rc == 0, "SIGTERM ends the watch with exit 0 (%s): %s" % (rc, err))
    check("resuming from" in err and " 0 entries measured" in err,
          "resuming measures nothing again: " + err)
    check("--jobs 2 ignored" in err, "--jobs above 1 is capped with one line: " + err)
    after, _ = report(ptcall, alt)
    if before and after:
        check(sets(before) == sets(after), "the resumed file keeps every input's set")
    put("notours.txt", "keep me\n")
    r = run(watch_cmd(ptcall, "--afl", "fake", "--duration", "1s", "-o", "notours.txt", "--",
                      t_cov, "@@"))
    check(r.returncode == 1 and "not a whole .ptcov" in r.stderr and
          open("notours.txt").read() == "keep me\n",
          "an -o that is not a .ptcov is refused and kept: " + r.stderr)
    r = run(watch_cmd(ptcall, "--corpus", "fake/m1/queue", "--duration", "1s", "-o",
                      "fake/m1/queue/w.ptcov", "--", t_cov, "@@"))
    check(r.returncode == 1 and "inside a directory the watch follows" in r.stderr and
          not os.path.exists("fake/m1/queue/w.ptcov"),
          "an output inside a watched directory is refused: " + r.stderr)
    r = run([ptcall, "cov", "run", "--watch", "-o", "x.ptcov", "--", t_cov, "@@"])
    check(r.returncode == 2 and "--watch follows directories" in r.stderr,
          "--watch without a directory is refused: " + r.stderr)
    r = run(watch_cmd(ptcall, "--corpus", "nowhere", "-o", "x.ptcov", "--", t_cov, "@@"))
    check(r.returncode == 1 and "--corpus nowhere" in r.stderr,
          "a corpus directory that is not there is refused: " + r.stderr)
    r = run([ptcall, "cov", "run", "--cpu", "0.5", "--corpus", "fake", "-o", "x.ptcov", "--",
             t_cov, "@@"])
    check(r.returncode == 2 and "goes with --watch" in r.stderr,
          "--cpu without --watch is refused: " + r.stderr)


def main():
    build, src, work = (os.path.abspath(a) for a in sys.argv[1:4])
    ptcall = os.path.join(build, "tools", "ptcall")
    cc = os.path.join(build, "bin", "ptcall-cc")
    if not shutil.which("afl-fuzz") or not shutil.which("afl-clang-fast"):
        print("afl-fuzz or afl-clang-fast not installed (scripts/setup.sh): skipped")
        return 77
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    os.chdir(work)
    target_c = os.path.join(src, "test", "cov", "watch_target.c")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PTCALL_")}
    env.update({k: os.environ[k] for k in ("PTCALL_LLVM_BIN",) if k in os.environ})
    r = run([cc, "-O1", "-fptcall-cov", target_c, "-o", "t_cov"], env=env)
    if not check(r.returncode == 0, "ptcall-cc -fptcall-cov builds the target: " + r.stderr):
        return 1
    r = run(["afl-clang-fast", "-O1", target_c, "-o", "t_afl"], env=dict(env, AFL_QUIET="1"))
    if not check(r.returncode == 0, "afl-clang-fast builds the target: " + r.stderr):
        return 1
    t_cov, t_afl = os.path.abspath("t_cov"), os.path.abspath("t_afl")
    r = run([ptcall, "cov", "run", "--watch", "--help"])
    if not check(r.returncode == 0, "cov run knows --watch: " + r.stderr.strip()):
        return 1
    live_afl(ptcall, work, t_afl, t_cov)
    corpus_cpu(ptcall, t_cov)
    alt = bad_cases(ptcall, t_cov)
    if alt:
        resume_and_refusals(ptcall, t_cov, alt)
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
