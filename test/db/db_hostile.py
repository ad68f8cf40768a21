#!/usr/bin/env python3
"""The runs database (SQLite) given hostile or unusual files (docs/db.md, *Errors*;
docs/reliability.md, *The runs database and the web server*), on real traces of a real
program (examples/demo.c built with ptcall-cc):

- schema_version -1, 0, 2^31, 2^40, text, and a newer version: `db list`, `db add`, `db query`
  and `serve` refuse with one line (damaged / which ptcall to use), never a signal;
- damaged files: random bytes, a database cut in half, pages overwritten, a foreign SQLite
  database, an empty schema_version: one line each, no signal, the file left as it was;
- read-only: a 0444 file, another user's 0644 file in a directory the reader may not write
  and in a sticky shared one, a database whose writer has it open now (its WAL not yet
  checkpointed): `db list/query/show` and `serve` read them as another user (setpriv), write
  nothing beside them, and see the writer's last run; `db add`/`db rm` say the file is
  read-only; an older schema that must be migrated says so; a read-only mount (SKIP when no
  tmpfs can be mounted);
- a new database is created 0600 (its WAL files too), an existing one keeps its mode;
- a full disk (a small tmpfs; SKIP when none can be mounted): `db add` says so, the database
  stays sound and keeps every run stored before;
- locked: a writer holding the write lock for 3 s: readers answer meanwhile, a `db add`
  waits and then stores its run;
- `db add` of a damaged trace names what works (report --salvage), not an option db add
  lacks;
- standard deviations: `report --stat stddev`, `db query --stat stddev` and the web API's
  give the same figures (the sample's, n-1).

usage: db_hostile.py BUILD_DIR SRC_DIR WORK_DIR [--ptcall PATH]
Prints 'ok   ...' / 'FAIL ...' / 'SKIP ...' per check; exits 1 when one failed.
"""
import json
import os
import pwd
import random
import shutil
import signal
import sqlite3
import stat
import statistics
import subprocess
import sys
import threading
import time
import urllib.request

fails = 0


def check(ok, what, detail=""):
    global fails
    print(("ok   " if ok else "FAIL ") + what + ("" if ok or not detail else ": " + detail), flush=True)
    if not ok:
        fails += 1
    return ok


def skip(what):
    print("SKIP " + what, flush=True)


def run(cmd, user=None, timeout=120):
    pre = []
    if user:
        pre = ["setpriv", "--reuid=%d" % user.pw_uid, "--regid=%d" % user.pw_gid, "--clear-groups"]
    env = dict(os.environ)
    env.pop("PTCALL_DB", None)
    return subprocess.run(pre + [str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, env=env, timeout=timeout)


def one_line(p):
    return p.stderr.count("\n") == 1 and p.stderr.startswith("ptcall ")


def no_signal(p):
    return p.returncode >= 0


class Env:
    def __init__(self, build, src, work, ptcall):
        self.ptcall = ptcall or os.path.join(build, "tools", "ptcall")
        self.cc = os.path.join(build, "bin", "ptcall-cc")
        self.src, self.work = src, work

    def p(self, *args, user=None, timeout=120):
        return run([self.ptcall] + list(args), user=user, timeout=timeout)

    def db(self, url, sub, *args, user=None):
        return self.p("db", sub, "--db", url, *args, user=user)


def set_version(path, v):
    con = sqlite3.connect(path)
    con.execute("UPDATE schema_version SET version = ?", (v,))
    con.commit()
    con.close()


def serve_once(env, url, path, user=None):
    """(status, document or None, stderr) of one GET against `ptcall serve --db url`, or the
    server's exit and message when it does not start."""
    pre = []
    if user:
        pre = ["setpriv", "--reuid=%d" % user.pw_uid, "--regid=%d" % user.pw_gid, "--clear-groups"]
    errf = open(os.path.join(env.work, "serve.stderr"), "w+")
    p = subprocess.Popen(pre + [env.ptcall, "serve", "--db", url, "--listen", "127.0.0.1:0"],
                         stdout=subprocess.PIPE, stderr=errf, text=True)
    line = p.stdout.readline()
    if "http://" not in line:
        p.wait(30)
        errf.seek(0)
        return None, None, errf.read(), p.returncode
    base = line.split()[2].rstrip("/")
    try:
        with urllib.request.urlopen(base + path, timeout=30) as r:
            st, body = r.status, r.read()
    except urllib.error.HTTPError as e:
        st, body = e.code, e.read()
    p.send_signal(signal.SIGTERM)
    p.wait(30)
    errf.seek(0)
    try:
        doc = json.loads(body)
    except ValueError:
        doc = None
    return st, doc, errf.read(), p.returncode


# ---- checks ----------------------------------------------------------------------------------

def versions(env, base, traces):
    con = sqlite3.connect(base)
    newer = con.execute("SELECT max(version) FROM schema_version").fetchone()[0] + 1  # this ptcall's + 1
    con.close()
    for v, kind in ((-1, "damaged"), (0, "damaged"), (2 ** 31, "damaged"), (2 ** 40, "damaged"),
                    ("abc", "damaged"), (newer, "newer")):
        path = os.path.join(env.work, "v.db")
        shutil.copy(base, path)
        set_version(path, v)
        outs = [env.db(path, "list"), env.db(path, "add", traces[2]), env.db(path, "query")]
        st, doc, err, rc = serve_once(env, path, "/api/v1/runs")
        want = ("no ptcall writes", "damaged or is not a ptcall runs database") if kind == "damaged" \
            else ("has schema version %d and this ptcall knows versions up to %d" % (newer, newer - 1),
                  "a newer ptcall wrote it",
                  "'ptcall --version' is newer than")
        ok = all(p.returncode == 1 and one_line(p) and all(w in p.stderr for w in want) for p in outs)
        ok = ok and st is None and rc == 1 and all(w in err for w in want)
        check(ok, "schema_version %r: db list, add, query and serve refuse with one line (%s)"
              % (v, kind), " | ".join((p.stderr.strip() or "exit %d" % p.returncode)[:160] for p in outs)
              + " | serve: %s %s" % (rc, err.strip()[:160]))


def damaged(env, base):
    good = open(base, "rb").read()
    rnd = random.Random(25)
    cases = {
        "random bytes": bytes(rnd.randrange(256) for _ in range(8192)),
        "an empty file": b"",
        "the first half of a database": good[:len(good) // 2],
        "pages overwritten with random bytes": good[:4096] + bytes(rnd.randrange(256) for _ in range(len(good) - 4096)),
        "the SQLite header alone": good[:100],
        # found by fuzz-db: SQLite's message quotes an index name that holds a newline
        "a schema whose names hold a newline": open(os.path.join(env.src, "test", "fuzz", "regress", "db",
                                                                 "newline-in-index-name.db"), "rb").read(),
    }
    for what, data in cases.items():
        path = os.path.join(env.work, "damaged.db")
        for sfx in ("", "-wal", "-shm"):
            if os.path.exists(path + sfx):
                os.remove(path + sfx)
        open(path, "wb").write(data)
        outs = [env.db(path, sub) for sub in ("list", "query")] + [env.db(path, "show", "1")]
        ok = all(no_signal(p) and p.returncode == 1 and one_line(p) for p in outs)
        check(ok and open(path, "rb").read() == data,
              "a database file of %s: db list, query, show say so in one line, no crash, the file "
              "left as it was" % what, " | ".join(("%d %s" % (p.returncode, p.stderr.strip()))[:200] for p in outs))
    # a foreign SQLite database and an empty schema_version table
    for what, sql, want in (("a foreign SQLite database", "CREATE TABLE notes (x INTEGER)", "not a ptcall runs database"),
                            ("an empty schema_version", "CREATE TABLE schema_version (version INTEGER NOT NULL)",
                             "empty schema_version")):
        path = os.path.join(env.work, "foreign.db")
        if os.path.exists(path):
            os.remove(path)
        con = sqlite3.connect(path)
        con.execute(sql)
        con.commit()
        con.close()
        before = open(path, "rb").read()
        outs = [env.db(path, "list"), env.db(path, "add", env.work + "/d16.ptc")]
        check(all(p.returncode == 1 and one_line(p) and want in p.stderr for p in outs) and
              open(path, "rb").read() == before,
              "%s: refused in one line (%s), left as it was" % (what, want),
              " | ".join(p.stderr.strip()[:200] for p in outs))


def modes(env, traces):
    path = os.path.join(env.work, "new.db")
    p = env.db(path, "add", traces[0])
    m = stat.S_IMODE(os.stat(path).st_mode)
    check(p.returncode == 0 and m == 0o600, "a new database is created 0600 (it holds command lines "
          "and paths, as traces do)", "mode %o: %s" % (m, p.stderr.strip()))
    # while a writer has it open, its WAL files take the same mode
    con = sqlite3.connect(path)
    con.execute("BEGIN IMMEDIATE")
    side = [stat.S_IMODE(os.stat(path + s).st_mode) for s in ("-wal", "-shm") if os.path.exists(path + s)]
    con.rollback()
    con.close()
    check(side and all(x == 0o600 for x in side), "... and its WAL files too (%s)" % ", ".join("%o" % x for x in side))
    outs = [env.db(path, "list"), env.db(path, "query"), env.db(path, "show", "1")]
    left = [s for s in ("-wal", "-shm") if os.path.exists(path + s)]
    check(all(p.returncode == 0 for p in outs) and not left,
          "its owner's db list, query and show (read-only) leave no WAL files beside it", str(left))
    mine = os.path.join(env.work, "mine.db")
    open(mine, "wb").close()
    os.chmod(mine, 0o640)
    p = env.db(mine, "add", traces[0])
    check(p.returncode == 0 and stat.S_IMODE(os.stat(mine).st_mode) == 0o640,
          "an existing (empty) file given as the database keeps its mode (0640)", p.stderr.strip())


def readonly(env, base, traces, old_schema):
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        skip("read-only databases of another user: not root or no setpriv (util-linux): "
             "cannot run as another user")
        return
    nobody = pwd.getpwnam("nobody")
    root = os.path.join(env.work, "ro")
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    os.chmod(root, 0o755)
    ids = [r["id"] for r in json.loads(env.db(base, "list", "--format", "json").stdout)["runs"]]
    cases = {}
    # root's 0644 file in root's 0755 directory: the reader may write neither
    d = os.path.join(root, "theirs")
    os.makedirs(d)
    shutil.copy(base, os.path.join(d, "runs.db"))
    os.chmod(os.path.join(d, "runs.db"), 0o644)
    cases["another user's 0644 file in a directory the reader may not write"] = d
    # the same in a sticky directory everyone may write (/tmp): SQLite would create its WAL
    # files there as the reader, which the owner's writers could not use afterwards
    d = os.path.join(root, "shared")
    os.makedirs(d)
    os.chmod(d, 0o1777)
    shutil.copy(base, os.path.join(d, "runs.db"))
    os.chmod(os.path.join(d, "runs.db"), 0o644)
    cases["another user's 0644 file in a shared sticky directory"] = d
    # the reader's own 0444 file in its own directory
    d = os.path.join(root, "own0444")
    os.makedirs(d)
    shutil.copy(base, os.path.join(d, "runs.db"))
    os.chmod(os.path.join(d, "runs.db"), 0o444)
    os.chown(d, nobody.pw_uid, nobody.pw_gid)
    os.chown(os.path.join(d, "runs.db"), nobody.pw_uid, nobody.pw_gid)
    os.chmod(d, 0o555)
    cases["a 0444 file in a read-only directory of the reader's own"] = d
    for what, d in cases.items():
        path = os.path.join(d, "runs.db")
        before = sorted(os.listdir(d))
        lst = env.db(path, "list", "--format", "json", user=nobody)
        qry = env.db(path, "query", "--format", "json", user=nobody)
        show = env.db(path, "show", str(ids[0]), user=nobody)
        st, doc, err, rc = serve_once(env, path, "/api/v1/runs", user=nobody)
        got = json.loads(lst.stdout)["runs"] if lst.returncode == 0 else []
        ok = (lst.returncode == 0 and qry.returncode == 0 and show.returncode == 0 and
              [r["id"] for r in got] == ids and st == 200 and doc and len(doc.get("runs", [])) == len(ids))
        check(ok, "%s: db list, query, show and serve read it as another user" % what,
              " | ".join(p.stderr.strip()[:200] for p in (lst, qry, show)) + " | serve %s %s" % (st, err.strip()[:200]))
        check(sorted(os.listdir(d)) == before, "... and leave nothing beside it",
              "%s -> %s" % (before, sorted(os.listdir(d))))
        add = env.db(path, "add", traces[2], user=nobody)
        rm = env.db(path, "rm", str(ids[0]), user=nobody)
        check(all(p.returncode == 1 and one_line(p) and "read-only" in p.stderr for p in (add, rm)),
              "... db add and db rm say it is read-only to this user",
              " | ".join(p.stderr.strip()[:200] for p in (add, rm)))
    # a database whose writer has it open now: the reader sees the writer's last commit,
    # which is still in the WAL
    d = os.path.join(root, "live")
    os.makedirs(d)
    path = os.path.join(d, "runs.db")
    shutil.copy(base, path)
    os.chmod(path, 0o644)
    con = sqlite3.connect(path)
    con.execute("PRAGMA wal_autocheckpoint=0")
    con.execute("UPDATE runs SET program = 'renamed-by-writer' WHERE id = ?", (ids[0],))
    con.commit()
    before = sorted(os.listdir(d))
    lst = env.db(path, "list", "--format", "json", user=nobody)
    got = json.loads(lst.stdout)["runs"] if lst.returncode == 0 else []
    check(lst.returncode == 0 and any(r["program"] == "renamed-by-writer" for r in got) and
          sorted(os.listdir(d)) == before,
          "another user's database that its writer has open (its last commit in the WAL): read "
          "as another user, the commit seen, nothing written", lst.stderr.strip()[:300])
    con.close()
    # an older schema, which must be migrated, read-only
    d = os.path.join(root, "old")
    os.makedirs(d)
    path = os.path.join(d, "runs.db")
    con = sqlite3.connect(path)
    con.executescript(open(old_schema).read())
    con.close()
    os.chmod(path, 0o644)
    lst = env.db(path, "list", user=nobody)
    check(lst.returncode == 1 and one_line(lst) and "must be migrated first" in lst.stderr and
          "read-only" in lst.stderr,
          "an older schema in a file the reader may not write: one line saying it must be migrated "
          "and is read-only", lst.stderr.strip()[:300])
    lst = env.db(path, "list")
    check(lst.returncode == 0, "... its owner's db list migrates it", lst.stderr.strip()[:300])
    # a read-only mount
    mnt = os.path.join(root, "mnt")
    os.makedirs(mnt)
    if run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", mnt]).returncode:
        skip("a read-only mount: cannot mount a tmpfs here (not privileged)")
        return
    try:
        shutil.copy(base, os.path.join(mnt, "runs.db"))
        if run(["mount", "-o", "remount,ro", mnt]).returncode:
            skip("a read-only mount: cannot remount the tmpfs read-only")
            return
        path = os.path.join(mnt, "runs.db")
        lst = env.db(path, "list", "--format", "json")
        add = env.db(path, "add", traces[2])
        check(lst.returncode == 0 and len(json.loads(lst.stdout)["runs"]) == len(ids) and
              add.returncode == 1 and one_line(add) and "read-only" in add.stderr,
              "a database on a read-only mount: db list reads it (as root), db add says it is read-only",
              (lst.stderr + add.stderr).strip()[:300])
    finally:
        if run(["umount", mnt]).returncode:
            run(["umount", "-l", mnt])


def full_disk(env, traces):
    if os.geteuid() != 0:
        skip("a full disk: not root, cannot mount a small tmpfs")
        return
    mnt = os.path.join(env.work, "full")
    os.makedirs(mnt, exist_ok=True)
    if run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", mnt]).returncode:
        skip("a full disk: cannot mount a tmpfs here (not privileged)")
        return
    try:
        path = os.path.join(mnt, "runs.db")
        first = env.db(path, "add", traces[0])
        filler = os.path.join(mnt, "filler")
        try:
            with open(filler, "wb") as f:
                while True:
                    f.write(b"\0" * 4096)
                    f.flush()
        except OSError:
            pass
        p = env.db(path, "add", traces[1], traces[2])
        os.remove(filler)  # room for SQLite's own reader (its WAL index) below
        con = sqlite3.connect(path)
        try:
            rows = con.execute("SELECT count(*) FROM runs").fetchone()[0]
            sound = con.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        finally:
            con.close()
        lines = p.stderr.strip().splitlines()
        check(first.returncode == 0 and p.returncode == 1 and no_signal(p) and
              all("full" in x for x in lines[:2]) and rows == 1 and sound,
              "a full disk: db add says the disk is full (one line per trace), the database keeps "
              "the run stored before and is sound", (first.stderr + p.stderr).strip()[:400])
        p = env.db(path, "add", traces[1])
        check(p.returncode == 0, "... and takes the run once there is room", p.stderr.strip()[:200])
    finally:
        if run(["umount", mnt]).returncode:
            run(["umount", "-l", mnt])


def locked(env, base, traces):
    path = os.path.join(env.work, "locked.db")
    shutil.copy(base, path)
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("BEGIN IMMEDIATE")
    con.execute("UPDATE runs SET host = host")
    t0 = time.time()
    out = {}

    def adder():
        out["add"] = env.db(path, "add", traces[2])
        out["took"] = time.time() - t0
    th = threading.Thread(target=adder)
    th.start()
    time.sleep(0.5)
    lst = env.db(path, "list")
    listed = time.time() - t0
    time.sleep(2.5)
    con.execute("COMMIT")
    con.close()
    th.join(120)
    check(lst.returncode == 0 and listed < 3, "a writer holding the write lock: db list answers "
          "meanwhile (%.1f s)" % listed, lst.stderr.strip()[:200])
    check(out.get("add") and out["add"].returncode == 0 and out["took"] >= 2.5,
          "... a db add waits for it and stores its run (%.1f s)" % out.get("took", 0),
          out.get("add") and out["add"].stderr.strip()[:200])


def salvage_hint(env, traces):
    data = open(traces[1], "rb").read()
    cut = os.path.join(env.work, "cut.ptc")
    open(cut, "wb").write(data[:len(data) - 100])
    bad = os.path.join(env.work, "bad.ptc")
    b = bytearray(data)
    b[len(b) // 2] ^= 0xFF
    open(bad, "wb").write(bytes(b))
    path = os.path.join(env.work, "salvage.db")
    outs = [env.db(path, "add", cut), env.db(path, "add", bad), env.db(path, "add", "--threads", "2", bad)]
    check(all(p.returncode == 1 and one_line(p) and "rerun with --salvage" not in p.stderr and
              "report --salvage" in p.stderr and "nothing was stored" in p.stderr for p in outs),
          "db add of a cut or corrupt trace: nothing stored, and it names report --salvage (db add "
          "stores whole traces only)", " | ".join(p.stderr.strip()[:200] for p in outs))


def stddev(env, traces):
    path = os.path.join(env.work, "stddev.db")
    env.db(path, "add", *traces)
    rep = env.p("report", *traces, "--stat", "stddev", "--format", "json", "--top", "0")
    q = env.db(path, "query", "--stat", "stddev", "--format", "json", "--top", "0")
    st, doc, err, rc = serve_once(env, path, "/api/v1/hot?top=0")
    if not check(rep.returncode == 0 and q.returncode == 0 and st == 200,
                 "report --stat stddev, db query --stat stddev and /api/v1/hot of %d runs" % len(traces),
                 (rep.stderr + q.stderr + err)[:300]):
        return
    r = {f["linkage_name"]: f for f in json.loads(rep.stdout)["functions"]}
    d = {f["linkage_name"]: f for f in json.loads(q.stdout)["functions"]}
    w = {f["linkage_name"]: f for f in doc["functions"]}
    bad = []
    for k in r:
        for m in ("calls", "total", "self"):
            a = r[k]["%s_stddev" % m]
            b = d.get(k, {}).get("%s_stddev" % m)
            c = (w.get(k, {}).get(m) or {}).get("stddev")
            if b is None or c is None or abs(a - b) > 0.006 or abs(a - c) > 0.006:
                bad.append("%s %s: report %s, db query %s, web %s" % (k, m, a, b, c))
    sample = statistics.stdev([x for x in (1, 2, 3)])
    check(r and set(r) == set(d) == set(w) and not bad,
          "the same runs give the same standard deviation (the sample's, n-1) in report, db query "
          "and the web API (%d functions x 3 measures)" % len(r), "; ".join(bad[:4]))
    table = env.db(path, "query", "--stat", "stddev")
    check("stddev(n-1)" in table.stdout, "db query's table names it in the column header (stddev(n-1))",
          table.stdout.splitlines()[3][:200] if len(table.stdout.splitlines()) > 3 else table.stdout)
    del sample


def main():
    args = sys.argv[1:]
    ptcall = None
    if "--ptcall" in args:
        i = args.index("--ptcall")
        ptcall = args[i + 1]
        del args[i:i + 2]
    if len(args) != 3:
        sys.exit(__doc__)
    build, src, work = args
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    os.chmod(work, 0o755)
    env = Env(build, src, work, ptcall)
    demo = os.path.join(work, "demo")
    p = run([env.cc, "-O1", "-o", demo, os.path.join(src, "examples", "demo.c")])
    if not check(p.returncode == 0, "built examples/demo.c with ptcall-cc", p.stderr[-500:]):
        return 1
    traces = []
    for n in (16, 17, 18, 20):
        t = os.path.join(work, "d%d.ptc" % n)
        p = env.p("record", "-q", "-o", t, "--", demo, str(n))
        if not check(p.returncode == 0, "recorded demo %d" % n, p.stderr[-300:]):
            return 1
        os.chmod(t, 0o644)
        traces.append(t)
    base = os.path.join(work, "base.db")
    p = env.db(base, "add", traces[0], traces[1])
    if not check(p.returncode == 0, "a database of 2 runs", p.stderr):
        return 1
    os.chmod(work, 0o755)
    versions(env, base, traces)
    damaged(env, base)
    modes(env, traces)
    readonly(env, base, traces, os.path.join(src, "test", "db", "schema", "v2.sqlite.sql"))
    full_disk(env, traces)
    locked(env, base, traces)
    salvage_hint(env, traces)
    stddev(env, traces)
    print("%d failed" % fails if fails else "all passed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
