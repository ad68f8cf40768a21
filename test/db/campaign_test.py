#!/usr/bin/env python3
"""Campaigns (issue 30 item 3; docs/cov.md *Many machines*, docs/db.md *Campaigns*, docs/web.md
*Campaigns*) on real .ptcov files of real `cov run`s of test/cov/cov_target.c (built with
ptcall-cc -fptcall-cov) over the AFL++ output test/cov/data/afl-toy, against SQLite or a real
PostgreSQL server this script starts (db_test.py's classes):

- `cov run` writes ORIGIN (this host) and one INPUT_HASH per input, equal to xxhsum -H2 of it;
- `cov merge` of two machines' parts (the second run under another host name: unshare -u):
  inputs of the same content left out (the earliest kept) and counted, names HOST:..., each
  machine's instances apart; files of two builds refused naming the module and both files; a
  file without hashes merged by name and said; -o never replaces a file that is not a .ptcov;
- `cov add` / `db add` of a .ptcov: a campaign's totals equal the union `cov report` computes
  on the merged file (functions and blocks); the same content twice, another program, another
  build: refused with one line, nothing stored; 8 processes adding parts of one campaign at once
  lose nothing and the totals equal the union recomputed from the stored first reaches;
- the API: /api/v1/campaigns, /campaigns/ID and /campaigns/compare validated against
  docs/schema/web.schema.json, their figures equal the database's and the reports'.

usage: campaign_test.py sqlite|postgres BUILD_DIR SRC_DIR WORK_DIR
"""
import json
import os
import shutil
import subprocess
import sys
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import db_test  # noqa: E402  (SQLite, Postgres, check, run, xxh128)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cov"))
from covcheck import ptcov_records  # noqa: E402  (test/cov/covcheck.py)

check = db_test.check
run = db_test.run
SKIP = 77


def records(path):
    """The header and [(type, payload bytes, the whole record)] of a version-2 .ptcov, by
    covcheck's one walker of a .ptcov's records."""
    b = open(path, "rb").read()
    hs = int.from_bytes(b[12:16], "little")
    out = []
    for typ, start, end in ptcov_records(b, hs):
        q = start + 1
        while b[q] & 0x80:     # past the length's LEB128 bytes to the payload
            q += 1
        out.append((typ, b[q + 1:end], b[start:end + 4]))
    return b[:hs], out


def leb(b, i):
    v, shift = 0, 0
    while True:
        v |= (b[i] & 0x7f) << shift
        shift += 7
        i += 1
        if not b[i - 1] & 0x80:
            return v, i


class Server:
    def __init__(self, ptcall, db):
        self.p = subprocess.Popen([ptcall, "serve", "--db", db, "--listen", "127.0.0.1:0"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.p.stdout.readline()
        if "http://" not in line:
            raise SystemExit("FAIL ptcall serve did not start: %s %s" % (line, self.p.stderr.read()))
        self.url = line.split()[2].rstrip("/")

    def api(self, path):
        try:
            with urllib.request.urlopen(self.url + path, timeout=60) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    def stop(self):
        self.p.terminate()
        self.p.communicate(timeout=30)


def main():
    if len(sys.argv) != 5 or sys.argv[1] not in ("sqlite", "postgres"):
        sys.exit(__doc__)
    backend, build, src, work = sys.argv[1], *(os.path.abspath(a) for a in sys.argv[2:5])
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    os.chdir(work)
    ptcall = os.path.join(build, "tools", "ptcall")
    cc = os.path.join(build, "bin", "ptcall-cc")
    if not os.access(cc, os.X_OK):
        print("SKIP: %s is not built" % cc)
        return SKIP
    B = db_test.SQLite(work) if backend == "sqlite" else db_test.Postgres(work)
    if backend == "postgres" and not B.start():
        B.stop()
        return SKIP if B.tmp is None else 1
    try:
        return checks(ptcall, cc, src, work, B)
    finally:
        B.stop()


def cov_run(ptcall, out, afl, target="./target", host=None):
    cmd = [ptcall, "cov", "run", "--timeout", "300", "-o", out, "--afl", afl, "--", target, "@@"]
    if host:
        # another machine: a UTS namespace of its own with another host name
        cmd = ["unshare", "-u", "sh", "-c", 'hostname "$0" && exec "$@"', host] + cmd
    p = run(cmd)
    check(p.returncode == 0 and os.path.isfile(out), "cov run -o %s%s: %s" %
          (out, " as host " + host if host else "", p.stderr.strip()[-300:]))
    return p.returncode == 0


def report(ptcall, path):
    p = run([ptcall, "cov", "report", "--format", "json", path])
    return json.loads(p.stdout) if p.returncode == 0 else None


FRONT_KEEP = 100  # frontier rows stored per part (tools/cov_campaign_reach.c)


def want_frontier(rep):
    """(unreachable, reachable_not_reached, total, rows) of `cov report --format json`'s
    reachability: the rows the database keeps, each callee by identity, callers by name."""
    fs = rep["functions"]
    r = rep["reachability"]
    rows = []
    for x in r["frontier"][:FRONT_KEEP]:
        f = fs[x["function"]]
        rows.append((f["linkage_name"] or "", f["name"], f["file"] or "", f["line"],
                     bool(x["by_pointer_only"]), [fs[c]["name"] for c in x["callers"]],
                     x["functions_behind"], x["insns_behind"], x["blocks_behind"],
                     x.get("lines_behind")))
    return r["unreachable"], r["reachable_not_reached"], len(r["frontier"]), rows


def stored_frontier(B, url, part):
    """The same from the database's campaign_reach, campaign_frontier and its callers (None:
    no such tables or no row for the part)."""
    try:
        head = B.sql(url, "SELECT unreachable, reachable_not_reached, frontier_total FROM "
                          "campaign_reach WHERE part_id = %d" % part)
        rows = B.sql(url, "SELECT pos, linkage_name, name, file, line, by_pointer_only, "
                          "functions_behind, insns_behind, blocks_behind, lines_behind FROM "
                          "campaign_frontier WHERE part_id = %d ORDER BY pos" % part)
        callers = B.sql(url, "SELECT pos, name FROM campaign_frontier_callers WHERE part_id = %d "
                             "ORDER BY pos, idx" % part)
    except Exception as e:  # the tables missing (a database without the frontier)
        print("  (%s)" % str(e).strip()[:200])
        return None
    if not head:
        return None
    by = {}
    for pos, name in callers:
        by.setdefault(pos, []).append(name)
    return (*head[0], [(ln, n, f, line, bool(bp), by.get(pos, []), fb, ib, bb,
                        None if lb in (None, "") else lb)
                       for pos, ln, n, f, line, bp, fb, ib, bb, lb in rows])


def api_frontier(fr):
    """The same from the API's campaign.frontier."""
    return (fr["unreachable"], fr["reachable_not_reached"], fr["total"],
            [(x["linkage_name"], x["name"], x["file"], x["line"], x["by_pointer_only"],
              x["callers"], x["functions_behind"], x["insns_behind"], x["blocks_behind"],
              x["lines_behind"]) for x in fr["rows"]])


def checks(ptcall, cc, src, work, B):
    target_c = os.path.join(src, "test", "cov", "cov_target.c")
    os.makedirs("v2")
    # target2: another program; v2/target: another build of the same program
    for out, extra in (("target", []), ("target2", ["-DVARIANT=2"]),
                       ("v2/target", ["-DVARIANT=2"])):
        p = run([cc, "-fptcall-cov", "-O1", *extra, target_c, "-o", out])
        if not check(p.returncode == 0, "ptcall-cc -fptcall-cov %s: %s" % (out, p.stderr[-300:])):
            return 1
    toy = os.path.join(src, "test", "cov", "data", "afl-toy")
    hostname = os.uname().nodename

    # ---- ORIGIN and INPUT_HASH ----
    if not cov_run(ptcall, "a.ptcov", toy):
        return 1
    _, recs = records("a.ptcov")
    origins = [r for r in recs if r[0] == 9]
    hashes = [r for r in recs if r[0] == 10]
    ninputs = sum(1 for r in recs if r[0] == 3)
    if check(len(origins) == 1, "a.ptcov has one ORIGIN record (%d)" % len(origins)):
        n, i = leb(origins[0][1], 0)
        ln, i = leb(origins[0][1], i)
        host = origins[0][1][i:i + ln].decode()
        check(host == hostname, "ORIGIN names this host: %r (%r)" % (host, hostname))
    check(len(hashes) == ninputs and ninputs > 0, "one INPUT_HASH per INPUT (%d of %d)" %
          (len(hashes), ninputs))
    doc = report(ptcall, "a.ptcov")
    names = [i["name"] for i in doc["inputs"]] if doc else []
    # INPUT_HASH i follows INPUT i; the file's inputs are in cov run's order (the report's too
    # after its sort): compare the set of (name, hash)
    order = [r for r in recs if r[0] in (3, 10)]
    pairs = []
    for k, r in enumerate(order):
        if r[0] == 10 and k and order[k - 1][0] == 3:
            ln, j = leb(order[k - 1][1], 0)
            nm = order[k - 1][1][j:j + ln].decode()
            _, j = leb(r[1], 0)
            pairs.append((nm, r[1][j:j + 16].hex()))
    if db_test.XXHSUM:
        bad = [(nm, h) for nm, h in pairs if db_test.xxh128(os.path.join(toy, nm)) != h]
        check(pairs and not bad, "INPUT_HASH equals xxhsum -H2 of each of %d inputs (wrong: %s)"
              % (len(pairs), bad[:2]))
    else:
        print("note: xxhsum is missing: INPUT_HASH is not checked against it")

    # ---- cov merge: two machines ----
    # the second machine's AFL++ directory: the same instance names, the same first inputs
    # (the same content, found later there), and one input of its own
    shutil.copytree(toy, "toy-b")
    q = "toy-b/main/queue/"
    first = sorted(os.listdir(q))[0]
    os.rename(q + first, q + first.replace("time:0,", "time:5000,"))
    with open(q + "id:000009,src:000001,time:2500,execs:99,op:havoc,+cov", "wb") as f:
        f.write(b"b22 only here")
    unshare_ok = run(["unshare", "-u", "true"]).returncode == 0
    if not unshare_ok:
        print("note: unshare -u is refused here: the second part runs under this host name")
    if not cov_run(ptcall, "b.ptcov", "toy-b", host="hostb" if unshare_ok else None):
        return 1
    hb = "hostb" if unshare_ok else hostname
    p = run([ptcall, "cov", "merge", "-o", "m.ptcov", "a.ptcov", "b.ptcov"])
    na, nb = len(report(ptcall, "a.ptcov")["inputs"]), len(report(ptcall, "b.ptcov")["inputs"])
    check(p.returncode == 0 and "duplicates by content left out" in p.stdout,
          "cov merge says the duplicates: %s %s" % (p.stdout.strip(), p.stderr.strip()))
    m = report(ptcall, "m.ptcov")
    if check(m is not None, "cov report reads the merged file"):
        mnames = [i["name"] for i in m["inputs"]]
        def contents(d):  # what cov run reads: NAME/{queue,crashes,hangs}/id:*
            return {open(os.path.join(d, i, k, f), "rb").read() for i in os.listdir(d)
                    for k in ("queue", "crashes", "hangs") if os.path.isdir(os.path.join(d, i, k))
                    for f in os.listdir(os.path.join(d, i, k)) if f.startswith("id:")}
        distinct = len(contents(toy) | contents("toy-b"))
        check(len(mnames) == distinct and ("%d duplicates" % (na + nb - distinct)) in p.stdout,
              "merged: %d inputs, one per distinct content (%d), %d said left out" %
              (len(mnames), distinct, na + nb - distinct))
        check(all(n.startswith(hostname + ":") or n.startswith(hb + ":") for n in mnames),
              "merged names carry their host: %s" % mnames[:3])
        if unshare_ok:
            # b's inputs are a's contents at the same or later times (its seed at 5000 ms):
            # the earliest, a's, are kept, and b's own one
            fromb = [n for n in mnames if n.startswith("hostb:")]
            check(len(fromb) == 1 and fromb[0].startswith("hostb:main/queue/id:000009"),
                  "of b only its own input is kept, as hostb:main/queue/...: %s" % fromb)
        # union: the merged file reaches what a and b reach together
        ra, rb = report(ptcall, "a.ptcov"), report(ptcall, "b.ptcov")

        def reached(r):
            return {f["linkage_name"] for f in r["functions"] if f.get("inputs", 0) > 0}
        check(reached(m) == reached(ra) | reached(rb), "merged functions = union of a and b")
    _, mrecs = records("m.ptcov")
    check(sum(1 for r in mrecs if r[0] == 9) == 2, "the merged file has one ORIGIN per part")

    # different builds: refused, naming the module and both files; nothing written
    cov_run(ptcall, "v2.ptcov", toy, target="./v2/target")
    p = run([ptcall, "cov", "merge", "-o", "bad.ptcov", "a.ptcov", "v2.ptcov"])
    line = p.stderr.strip()
    check(p.returncode == 1 and "\n" not in line and "different builds" in line and "target"
          in line and "a.ptcov" in line and "v2.ptcov" in line and not os.path.exists("bad.ptcov"),
          "merge of two builds refused in one line naming module and files: %s" % line)
    # a file of before INPUT_HASH/ORIGIN (records 9 and 10 cut out): merged by name, said
    hdr, arecs = records("a.ptcov")
    with open("old.ptcov", "wb") as f:
        f.write(hdr + b"".join(r[2] for r in arecs if r[0] not in (9, 10)))
    p = run([ptcall, "cov", "merge", "-o", "m2.ptcov", "old.ptcov", "a.ptcov"])
    check(p.returncode == 0 and "matched by instance and name" in p.stdout,
          "a file without hashes is merged by name, and that is said: %s" % p.stdout.strip())
    # -o onto a file that is not a .ptcov: refused, untouched
    with open("notes.txt", "w") as f:
        f.write("mine\n")
    p = run([ptcall, "cov", "merge", "-o", "notes.txt", "a.ptcov", "b.ptcov"])
    check(p.returncode == 1 and "not a .ptcov" in p.stderr and open("notes.txt").read() == "mine\n",
          "cov merge -o never replaces a file that is not a .ptcov: %s" % p.stderr.strip())

    # ---- the database ----
    url = B.fresh("camp")
    p = run([ptcall, "cov", "add", "--db", url, "--campaign", "c1", "--tag", "fuzzer=afl",
             "a.ptcov"])
    check(p.returncode == 0 and "campaign 1" in p.stdout, "cov add a.ptcov: %s %s" %
          (p.stdout.strip(), p.stderr.strip()))
    p = run([ptcall, "db", "add", "--db", url, "--campaign", "c1", "b.ptcov"])
    check(p.returncode == 0 and "part 2" in p.stdout, "db add of a .ptcov adds a part: %s %s" %
          (p.stdout.strip(), p.stderr.strip()))
    # the frontier: each part's, as `cov report` computes it on that part's .ptcov
    for part, f in ((1, "a.ptcov"), (2, "b.ptcov")):
        want = want_frontier(report(ptcall, f))
        got = stored_frontier(B, url, part)
        check(got == want, "part %d's stored frontier (%d of %d rows; %d unreachable, "
              "%d reachable) = cov report --format json's reachability of %s%s" %
              (part, len(want[3]), want[2], want[0], want[1], f,
               "" if got == want else ": %s != %s" % (got and got[:3], want[:3])))
    # a target with a known frontier (test/cov/cov_reach.c, as cov-reach runs it): two parts
    # of campaign "reach", the second reaching rare (an 'R' input): its frontier is another; each
    # stored as cov report computes it
    reach_c = os.path.join(src, "test", "cov", "cov_reach.c")
    p = run([cc, "-O0", "-fptcall-cov", reach_c, "-o", "reach"])
    check(p.returncode == 0, "ptcall-cc -fptcall-cov builds cov_reach.c: %s" % p.stderr[-300:])
    for k, inputs in ((1, (("a", b"hxy1"),)), (2, (("a", b"hxy1"), ("b", b"bxyz"), ("r", b"Rxy")))):
        os.makedirs("reach-corpus%d" % k)
        for name, data in inputs:
            with open(os.path.join("reach-corpus%d" % k, name), "wb") as f:
                f.write(data)
        p = run([ptcall, "cov", "run", "-o", "reach%d.ptcov" % k, "--corpus", "reach-corpus%d" % k,
                 "--", "./reach", "@@"])
        check(p.returncode == 0, "cov run of cov_reach.c, part %d: %s" % (k, p.stderr[-300:]))
        p = run([ptcall, "cov", "add", "--db", url, "--campaign", "reach", "reach%d.ptcov" % k])
        check(p.returncode == 0, "cov add reach%d.ptcov: %s" % (k, p.stderr.strip()))
        want = want_frontier(report(ptcall, "reach%d.ptcov" % k))
        (pid,), = B.sql(url, "SELECT id FROM campaign_parts WHERE file = 'reach%d.ptcov'" % k)
        got = stored_frontier(B, url, pid)
        check(len(want[3]) >= 1 and got == want,
              "reach%d.ptcov's stored frontier (%d rows, first %s; %d unreachable, %d "
              "reachable) = cov report --format json's reachability%s" %
              (k, len(want[3]), want[3][0][1] if want[3] else None, want[0], want[1],
               "" if got == want else ": %s != %s" % (got, want)))
    # a program whose name is not UTF-8: cov add's summary line shows the byte as \xff
    # (docs/usage.md, *Names in outputs*), as the other text outputs do; it wrote it raw.
    # A PostgreSQL database in UTF8 refuses the bytes as a text parameter (`invalid byte
    # sequence for encoding "UTF8"`): the part is refused whole, with what to do
    raw = os.path.join(os.fsencode(work), b"raw\xffname")
    p = run([cc, "-fptcall-cov", "-O1", target_c, "-o", os.fsdecode(raw)])
    if B.name == "sqlite" and \
            check(p.returncode == 0, "ptcall-cc builds raw\\xffname: %s" % p.stderr[-300:]) and \
            cov_run(ptcall, "raw.ptcov", toy, target=os.fsdecode(raw)):
        q = subprocess.run([ptcall, "cov", "add", "--db", url, "--campaign", "rawname",
                            "raw.ptcov"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        check(q.returncode == 0 and b"raw\\xffname" in q.stdout and b"\xff" not in q.stdout,
              "cov add of a program named raw\\xffname says it as \\xff: %r %r" %
              (q.stdout, q.stderr))
    if B.name != "sqlite" and p.returncode == 0 and \
            cov_run(ptcall, "raw.ptcov", toy, target=os.fsdecode(raw)):
        # a UTF8 server refuses the name: said as such, with what to do, nothing stored
        q = run([ptcall, "cov", "add", "--db", url, "--campaign", "rawname", "raw.ptcov"])
        check(q.returncode != 0 and "is not UTF-8" in q.stderr and "SQL_ASCII" in q.stderr
              and "ptcall bug" not in q.stderr and
              not B.sql(url, "SELECT id FROM campaigns WHERE name = 'rawname'"),
              "cov add of raw\\xffname into a UTF8 PostgreSQL says the name is not UTF-8 "
              "and what to do, and stores nothing: %s" % q.stderr.strip())
    # a .ptcov without the call graph (record 8 cut out): no frontier stored
    hdr, arecs = records("a.ptcov")
    with open("nograph.ptcov", "wb") as f:
        f.write(hdr + b"".join(r[2] for r in arecs if r[0] != 8))
    p = run([ptcall, "cov", "add", "--db", url, "--campaign", "nograph", "nograph.ptcov"])
    check(p.returncode == 0, "cov add of a .ptcov without record 8: %s" % p.stderr.strip())
    try:
        (ng,), = B.sql(url, "SELECT count(*) FROM campaign_reach r JOIN campaign_parts p ON "
                            "p.id = r.part_id WHERE p.file = 'nograph.ptcov'")
    except Exception as e:  # no campaign_reach table
        ng = str(e).strip()[:200]
    check(ng == 0, "a part without a call graph stores no frontier (%s rows)" % ng)
    (fr, br, parts, inputs), = B.sql(url, "SELECT functions_reached, blocks_reached, parts, "
                                          "inputs FROM campaigns WHERE name = 'c1'")
    mf = {f["linkage_name"] for f in m["functions"] if f.get("inputs", 0) > 0}
    check(fr == len(mf), "campaign c1's functions reached (%d) = the merged file's union (%d)" %
          (fr, len(mf)))
    mb = m.get("blocks", {}).get("reached") if isinstance(m.get("blocks"), dict) else None
    if mb is not None:
        check(br == mb, "campaign c1's blocks reached (%s) = the merged file's union (%s)" % (br, mb))
    check(parts == 2 and inputs == na + nb, "c1: 2 parts, %d inputs (%s, %s)" % (na + nb, parts,
                                                                               inputs))
    # refusals: one line each, nothing stored
    before = B.sql(url, "SELECT count(*) FROM campaign_parts")
    for args, words, what in (
            (["--campaign", "c1", "a.ptcov"], "stored already", "the same content twice"),
            (["--campaign", "c1", "v2.ptcov"], "build", "another build"),
    ):
        p = run([ptcall, "cov", "add", "--db", url] + args)
        line = p.stderr.strip()
        check(p.returncode == 1 and words in line and "\n" not in line, "cov add of %s refused "
              "in one line: %s" % (what, line))
    # another program: the same source built under another name
    shutil.copy("target2", "other")
    cov_run(ptcall, "other.ptcov", toy, target="./other")
    p = run([ptcall, "cov", "add", "--db", url, "--campaign", "c1", "other.ptcov"])
    line = p.stderr.strip()
    check(p.returncode == 1 and "is of program target" in line and "\n" not in line,
          "a part of another program refused in one line: %s" % line)
    check(B.sql(url, "SELECT count(*) FROM campaign_parts") == before,
          "the refused parts stored nothing")

    # a plain corpus whose names hold colons: one instance, "corpus" (names were split at a
    # colon as if a merged file's HOST: prefix: each input an instance of its own)
    os.makedirs("colons")
    for nm, data in (("r1-id:000001,time:5", b"a1"), ("x:y", b"b22"), ("plain", b"zz")):
        with open("colons/" + nm, "wb") as f:
            f.write(data)
    p = run([ptcall, "cov", "run", "-o", "colons.ptcov", "--corpus", "colons", "--", "./target",
             "@@"])
    p = run([ptcall, "cov", "add", "--db", url, "--campaign", "colons", "colons.ptcov"])
    inst = B.sql(url, "SELECT i.name FROM campaign_instances i JOIN campaign_parts p ON p.id = "
                      "i.part_id JOIN campaigns c ON c.id = p.campaign_id WHERE c.name = 'colons'")
    check(p.returncode == 0 and [r[0] for r in inst] == ["corpus"],
          "a corpus with colons in its names is one instance, 'corpus': %s" % inst)

    # ---- many writers at once: 8 parts of one campaign ----
    files = []
    for w in range(8):
        d = "toy-w%d" % w
        shutil.copytree(toy, d)
        with open(d + "/main/queue/id:000100,src:000000,time:%d,execs:1,op:x" % (100 + w), "wb") as f:
            f.write(b"a" + bytes([48 + w]) * (w + 1))
        if cov_run(ptcall, "w%d.ptcov" % w, d):
            files.append("w%d.ptcov" % w)
    procs = [subprocess.Popen([ptcall, "cov", "add", "--db", url, "--campaign", "many", f],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for f in files]
    outs = [pr.communicate(timeout=600) + (pr.returncode,) for pr in procs]
    check(all(o[2] == 0 for o in outs), "8 concurrent cov add of one campaign: all stored (%s)" %
          [o[1].strip() for o in outs if o[2]])
    (parts, cfr, cbr), = B.sql(url, "SELECT parts, functions_reached, blocks_reached FROM "
                                    "campaigns WHERE name = 'many'")
    (ufr,), = B.sql(url, "SELECT count(DISTINCT function_id) FROM campaign_firsts f JOIN "
                         "campaigns c ON c.id = f.campaign_id WHERE c.name = 'many'")
    (ubr,), = B.sql(url, "SELECT count(DISTINCT block) FROM campaign_block_firsts f JOIN "
                         "campaigns c ON c.id = f.campaign_id WHERE c.name = 'many'")
    check(parts == len(files) and cfr == ufr and cbr == ubr,
          "after the concurrent adds: %d parts (%d), totals %s/%s = the union of the stored "
          "first reaches %s/%s" % (parts, len(files), cfr, cbr, ufr, ubr))

    # ---- trials for the comparison: each wN.ptcov its own campaign ----
    # (a file of 'many' again would be refused: the same content; cov merge of one file
    # makes a copy of its own, its names under their host)
    for w in range(len(files)):
        run([ptcall, "cov", "merge", "-o", "t%d.ptcov" % w, files[w]])
        p = run([ptcall, "cov", "add", "--db", url, "--campaign", "trial%d" % w, "--tag",
                 "fuzzer=%s" % ("x" if w < 4 else "y"), "t%d.ptcov" % w])
        check(p.returncode == 0, "trial %d stored: %s" % (w, p.stderr.strip()))

    # ---- cov list, cov show ----
    p = run([ptcall, "cov", "list", "--db", url, "--format", "json", "--tag", "fuzzer=afl"])
    lst = json.loads(p.stdout) if p.returncode == 0 else {}
    check([c["name"] for c in lst.get("campaigns", [])] == ["c1"] and
          lst["campaigns"][0]["functions_reached"] == len(mf),
          "cov list --tag fuzzer=afl --format json: c1 only, its figures (%s)" % p.stderr.strip())
    p = run([ptcall, "cov", "list", "--db", url, "--format", "csv"])
    rows = p.stdout.splitlines()
    check(p.returncode == 0 and rows[0].startswith("campaign,name,program") and
          any(r.split(",")[1] == "many" and r.split(",")[4] == str(len(files)) for r in rows[1:]),
          "cov list --format csv: a row per campaign, 'many' with %d parts" % len(files))
    cid = lst["campaigns"][0]["id"] if lst.get("campaigns") else 1
    p = run([ptcall, "cov", "show", "--db", url, str(cid), "--top", "0", "--format", "csv"])
    check(p.returncode == 0 and len(p.stdout.splitlines()) == 1 + len(mf),
          "cov show --format csv: one row per function reached (%d)" % len(mf))
    p = run([ptcall, "cov", "show", "--db", url, "999"])
    check(p.returncode == 1 and "no campaign 999" in p.stderr, "cov show 999: %s" %
          p.stderr.strip())

    # ---- the API ----
    schema = None
    try:
        import jsonschema
        schema = json.load(open(os.path.join(src, "docs", "schema", "web.schema.json")))
    except ImportError:
        print("note: python3-jsonschema is missing: the API documents are not validated")

    def valid(doc, d, what):
        if schema is None:
            return
        s = dict(schema)
        s["$ref"] = "#/$defs/" + d
        s.pop("anyOf", None)
        try:
            jsonschema.validate(doc, s)
            check(True, "%s validates against web.schema.json#/$defs/%s" % (what, d))
        except jsonschema.ValidationError as e:
            check(False, "%s: %s" % (what, str(e)[:400]))

    srv = Server(ptcall, url)
    try:
        st, doc = srv.api("/api/v1/campaigns")
        check(st == 200, "GET /api/v1/campaigns: %s" % st)
        valid(doc, "campaigns", "/api/v1/campaigns")
        c1 = [c for c in doc["campaigns"] if c["name"] == "c1"]
        if check(len(c1) == 1, "c1 is listed"):
            c1 = c1[0]
            check(c1["functions_reached"] == len(mf) and c1["parts"] == 2 and
                  sorted(c1["hosts"]) == sorted({hostname, hb}) and c1["tags"] == {"fuzzer": "afl"},
                  "c1 as listed: %s" % {k: c1[k] for k in ("functions_reached", "parts", "hosts",
                                                           "tags")})
        st, doc = srv.api("/api/v1/campaigns?tag=fuzzer=x")
        check(st == 200 and sorted(c["name"] for c in doc["campaigns"]) ==
              ["trial%d" % w for w in range(min(4, len(files)))], "tag=fuzzer=x keeps trials 0-3")
        st, doc = srv.api("/api/v1/campaigns?program=nomatch*")
        check(st == 200 and doc["campaigns"] == [], "program=nomatch* keeps none")
        st, doc = srv.api("/api/v1/campaigns/%d?top=0" % c1["id"])
        check(st == 200, "GET /api/v1/campaigns/ID: %s" % st)
        valid(doc, "campaign", "/api/v1/campaigns/ID")
        c = doc["campaign"]
        u = c["curves"]["union"]
        check(u and u[-1][1] == len(mf) and all(u[k][0] < u[k + 1][0] and u[k][1] <= u[k + 1][1]
                                                for k in range(len(u) - 1)),
              "the union curve rises to the functions reached: %s" % u[-3:])
        check(sorted(h["host"] for h in c["curves"]["hosts"]) == sorted({hostname, hb}) and
              len(c["curves"]["instances"]) == 4, "curves per host (2) and instance (2 x main, sec)")
        firsts = {f["name"] for f in c["functions"]}
        check(len(c["functions"]) == len(mf),
              "every reached function listed with its first reach (%d)" % len(firsts))
        # the frontier shown: the latest part's that has one, part 2 (b.ptcov)
        fr = c.get("frontier")
        want = want_frontier(report(ptcall, "b.ptcov"))
        ok = isinstance(fr, dict) and fr.get("part") == 2 and fr.get("host") == hb
        check(ok and api_frontier(fr) == want,
              "campaign.frontier is part 2's (%s, host %s) and equals cov report's reachability "
              "of b.ptcov: %s" % (fr and fr.get("part"), fr and fr.get("host"),
                                  "ok" if ok and api_frontier(fr) == want else
                                  "%s != %s" % (ok and api_frontier(fr)[:3], want[:3])))
        rc = [x for x in srv.api("/api/v1/campaigns")[1]["campaigns"] if x["name"] == "reach"]
        if check(len(rc) == 1, "the campaign of cov_reach.c is listed"):
            st, doc = srv.api("/api/v1/campaigns/%d" % rc[0]["id"])
            valid(doc, "campaign", "/api/v1/campaigns/ID (with a frontier)")
            fr = doc["campaign"]["frontier"] if st == 200 else None
            (pid,), = B.sql(url, "SELECT id FROM campaign_parts WHERE file = 'reach2.ptcov'")
            want = want_frontier(report(ptcall, "reach2.ptcov"))
            check(isinstance(fr, dict) and fr["part"] == pid and api_frontier(fr) == want,
                  "campaign reach: campaign.frontier is its latest part's (%d) and equals cov "
                  "report's reachability of reach2.ptcov (%d rows): %s" %
                  (pid, len(want[3]), fr if not isinstance(fr, dict) else
                   "ok" if api_frontier(fr) == want else "%s != %s" % (api_frontier(fr), want)))
        ng = [x for x in srv.api("/api/v1/campaigns")[1]["campaigns"] if x["name"] == "nograph"]
        if check(len(ng) == 1, "the campaign without a call graph is listed"):
            st, doc = srv.api("/api/v1/campaigns/%d" % ng[0]["id"])
            check(st == 200 and doc["campaign"]["frontier"] is None,
                  "no part with a call graph: campaign.frontier is null (%s)" %
                  (doc.get("campaign") or {}).get("frontier"))
        st, doc = srv.api("/api/v1/campaigns/compare?a=tag:fuzzer=x&b=tag:fuzzer=y")
        check(st == 200, "GET /api/v1/campaigns/compare: %s %s" % (st, doc.get("error")))
        valid(doc, "campaigns_compare", "/api/v1/campaigns/compare")
        if st == 200:
            check([len(g["trials"]) for g in doc["groups"]] == [4, 4] and
                  doc["test"]["name"] == "Mann-Whitney U (two-sided)" and
                  0 <= doc["test"]["p"] <= 1, "compare: 4 trials a side, the test: %s" % doc["test"])
        for path, status, words in (
                ("/api/v1/campaigns/999", 404, "no campaign 999"),
                ("/api/v1/campaigns/compare?a=1", 400, "give a=SEL and b=SEL"),
                ("/api/v1/campaigns/compare?a=x&b=1", 400, "give tag:NAME=VALUE or campaign ids"),
                ("/api/v1/campaigns/compare?a=tag:fuzzer=zz&b=1", 404, "no campaign"),
                ("/api/v1/campaigns?tag==x", 400, "tag=NAME")):
            st, doc = srv.api(path)
            check(st == status and words in doc.get("error", ""), "%s: %s %s" %
                  (path, st, doc.get("error")))
    finally:
        srv.stop()
    if check.fails:
        print("%d failures" % check.fails)
        return 1
    print("all campaign checks passed (%s)" % B.name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
