#!/usr/bin/env python3
"""Campaigns at scale (issue 30 item 4; docs/benchmarks.md, *Campaigns: merging and the
campaign API*): `ptcall cov merge` of 10 machines x 10,000 inputs, and the campaign API over
100 campaigns x 10,000 inputs.

What is real and what is replicated, plainly: the per-input coverage is REAL, measured once by
`ptcall cov run` of the zlib harness (-fptcall-cov: functions and blocks) over the real AFL++
queue of bench/cov/zlib-campaign.sh (WORKDIR/out, 200 entries with their time:). The parts
are made from that one measured file by replication: part k (host "host-k") holds 10,000
inputs, the measured ones repeated (copy c's campaign times shifted by c x the campaign's
length), each with a content hash of its own except the first copy of the queue, whose hashes
all parts share (the seeds every machine starts from: duplicates across machines). For the
database, campaign c draws its own random 80-100 % of the measured queue before repeating it
(so that trials differ), tagged fuzzer=a (even c) or fuzzer=b (odd c).

usage: bench/cov/campaign_bench.py WORKDIR PTCALL_BUILD_DIR [--machines 10] [--inputs 10000]
                                   [--campaigns 100] [--repeat 10] [--out DIR]
  WORKDIR as bench/cov/bench.py's: WORKDIR/ptcall/zlib_fuzz (bench/cov/zlib-build.sh WORKDIR
  ptcall BUILD) and WORKDIR/out (bench/cov/zlib-campaign.sh WORKDIR). Writes WORKDIR/campaign/.
"""
import argparse
import hashlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
import urllib.request
import zlib


def leb(v):
    out = bytearray()
    while True:
        b = v & 0x7f
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def get_leb(b, i):
    v, shift = 0, 0
    while True:
        v |= (b[i] & 0x7f) << shift
        shift += 7
        i += 1
        if not b[i - 1] & 0x80:
            return v, i


def zz(n):
    return (n << 1) ^ (n >> 63) if n >= 0 else ((-n) << 1) - 1


def unzz(v):
    return (v >> 1) ^ -(v & 1)


def records(path):
    b = open(path, "rb").read()
    hs = int.from_bytes(b[12:16], "little")
    out, p = [], hs
    while p < len(b):
        ln, q = get_leb(b, p + 1)
        out.append((b[p], b[q:q + ln]))
        p = q + ln + 4
    return b[:hs], out


def rec(t, payload):
    head = bytes([t]) + leb(len(payload))
    return head + payload + (zlib.crc32(head + payload) & 0xffffffff).to_bytes(4, "little")


def s(x):
    x = x.encode()
    return leb(len(x)) + x


class Base:
    """The measured file: static records, and per input (name, time, rest of INPUT, blocks
    record's rest or None)."""

    def __init__(self, path):
        self.header, recs = records(path)
        self.static, self.inputs = [], []
        for t, p in recs:
            if t in (1, 2, 4, 6, 7):
                self.static.append((t, p))
            elif t == 3:
                ln, i = get_leb(p, 0)
                name = p[i:i + ln].decode()
                i += ln
                start = i
                for _ in range(3):  # kind, outcome, value
                    _, i = get_leb(p, i)
                fixed = p[start:i]
                tv, i = get_leb(p, i)
                self.inputs.append([name, unzz(tv), fixed, p[i:], None])
            elif t == 5:
                _, i = get_leb(p, 0)
                self.inputs[-1][4] = p[i:]
        self.end_ms = max(max(x[1] for x in self.inputs), 1)

    def write(self, path, host, inputs):
        """inputs: [(base index, name, time_ms, hash bytes)]"""
        with open(path, "wb") as f:
            f.write(self.header)
            for t, p in self.static:
                if t == 1:
                    f.write(rec(t, p))
                    f.write(rec(9, leb(0) + s(host) + s("") + leb(int(time.time())) +
                                leb(zz(max(x[2] for x in inputs)))))
                else:
                    f.write(rec(t, p))
            buf = []
            for k, (bi, name, t_ms, h) in enumerate(inputs):
                _, _, fixed, rest, blocks = self.inputs[bi]
                buf.append(rec(3, s(name) + fixed + leb(zz(t_ms)) + rest))
                if blocks is not None:
                    buf.append(rec(5, leb(k) + blocks))
                buf.append(rec(10, leb(k) + h + leb(0)))
                if len(buf) > 4096:
                    f.write(b"".join(buf))
                    buf = []
            f.write(b"".join(buf))
            f.write(rec(0, leb(len(inputs))))


def part_inputs(base, k, n, chosen=None, shared_first=True):
    idx = chosen if chosen is not None else list(range(len(base.inputs)))
    out = []
    c = 0
    while len(out) < n:
        for bi in idx:
            if len(out) == n:
                break
            name, t, *_ = base.inputs[bi]
            shared = shared_first and c == 0
            h = hashlib.blake2b(("%s/%d/%d" % ("seed" if shared else "h%d" % k, c, bi)).encode(),
                                digest_size=16).digest()
            d, _, f = name.rpartition("/")
            out.append((bi, "%s/r%d-%s" % (d, c, f) if c and d else "r%d-%s" % (c, f) if c
                        else name,
                        t + c * base.end_ms, h))
        c += 1
    return out


def timed(args):
    t = time.monotonic()
    p = subprocess.run(["/usr/bin/time", "-f", "%M"] + args, capture_output=True, text=True)
    dt = time.monotonic() - t
    if p.returncode:
        sys.exit("%s: exit %d: %s" % (" ".join(args[:3]), p.returncode, p.stderr[-500:]))
    rss = int(p.stderr.strip().splitlines()[-1])
    return dt, rss, p.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("work")
    ap.add_argument("build")
    ap.add_argument("--machines", type=int, default=10)
    ap.add_argument("--inputs", type=int, default=10000)
    ap.add_argument("--campaigns", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--out", help="where the files go (default WORKDIR/campaign)")
    a = ap.parse_args()
    work, build = os.path.abspath(a.work), os.path.abspath(a.build)
    ptcall = os.path.join(build, "tools", "ptcall")
    target = os.path.join(work, "ptcall", "zlib_fuzz")
    if not os.access(target, os.X_OK) or not os.path.isdir(os.path.join(work, "out")):
        sys.exit("campaign_bench: needs %s (bench/cov/zlib-build.sh WORKDIR ptcall BUILD) and "
                 "WORKDIR/out (bench/cov/zlib-campaign.sh WORKDIR)" % target)
    out = os.path.abspath(a.out) if a.out else os.path.join(work, "campaign")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    os.chdir(out)
    # the one real measurement
    dt, rss, _ = timed([ptcall, "cov", "run", "-o", "base.ptcov", "--afl",
                        os.path.join(work, "out"), "--", target, "@@"])
    base = Base("base.ptcov")
    print("measured: cov run over the real queue: %d inputs in %.2f s (base.ptcov, %d bytes)" %
          (len(base.inputs), dt, os.path.getsize("base.ptcov")))

    # ---- merge: machines x inputs ----
    parts = []
    for k in range(a.machines):
        p = "part%d.ptcov" % k
        base.write(p, "host-%d" % k, part_inputs(base, k, a.inputs))
        parts.append(p)
    size = sum(os.path.getsize(p) for p in parts)
    runs = []
    for _ in range(3):
        dt, rss, so = timed([ptcall, "cov", "merge", "-o", "merged.ptcov"] + parts)
        runs.append((dt, rss))
    print(so.strip())
    med = statistics.median(r[0] for r in runs)
    print("merge: %d machines x %d inputs (%.0f MB of .ptcov) -> %d bytes: %.2f s median of 3 "
          "(%s), max RSS %.0f MB" % (a.machines, a.inputs, size / 1e6,
                                     os.path.getsize("merged.ptcov"), med,
                                     ", ".join("%.2f" % r[0] for r in runs),
                                     max(r[1] for r in runs) / 1024))
    r = subprocess.run([ptcall, "cov", "report", "--format", "json", "merged.ptcov"],
                       capture_output=True, text=True)
    doc = json.loads(r.stdout)
    print("merged file: %d inputs, report reads it" % len(doc["inputs"]))

    # ---- the database: the machines' parts as one campaign, then campaigns x inputs ----
    db = os.path.join(out, "campaigns.db")
    adds = []
    for p in parts:
        dt, _, _ = timed([ptcall, "cov", "add", "--db", db, "--campaign", "machines", "--tag",
                          "fuzzer=m", p])
        adds.append(dt)
        os.remove(p)
    print("cov add: %d parts of one campaign (one per machine): %.2f s median per add (max "
          "%.2f)" % (len(parts), statistics.median(adds), max(adds)))
    rng = random.Random(30)
    adds = []
    for c in range(a.campaigns):
        chosen = sorted(rng.sample(range(len(base.inputs)),
                                   int(len(base.inputs) * rng.uniform(0.8, 1.0))))
        p = "c%d.ptcov" % c
        base.write(p, "host-%d" % (c % a.machines),
                   part_inputs(base, 1000 + c, a.inputs, chosen, shared_first=False))
        dt, _, _ = timed([ptcall, "cov", "add", "--db", db, "--campaign", "trial-%03d" % c,
                          "--tag", "fuzzer=%s" % "ab"[c % 2], p])
        adds.append(dt)
        os.remove(p)
    print("cov add: %d campaigns x %d inputs into SQLite: %.2f s median per add (max %.2f), "
          "database %.0f MB" % (a.campaigns, a.inputs, statistics.median(adds), max(adds),
                                os.path.getsize(db) / 1e6))
    srv = subprocess.Popen([ptcall, "serve", "--db", db, "--listen", "127.0.0.1:0"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = srv.stdout.readline().split()[2].rstrip("/")
        mid = a.campaigns // 2 + 2
        for path in ("/api/v1/campaigns", "/api/v1/campaigns?tag=fuzzer=a",
                     "/api/v1/campaigns/1",
                     "/api/v1/campaigns/%d" % mid, "/api/v1/campaigns/%d?top=0" % mid,
                     "/api/v1/campaigns/compare?a=tag:fuzzer=a&b=tag:fuzzer=b"):
            times, nbytes = [], 0
            for _ in range(a.repeat):
                t = time.monotonic()
                with urllib.request.urlopen(url + path, timeout=60) as resp:
                    nbytes = len(resp.read())
                    st = resp.status
                times.append((time.monotonic() - t) * 1000)
            print("GET %-58s %d, %7d bytes: median %6.1f ms, max %6.1f ms (%d times)" %
                  (path, st, nbytes, statistics.median(times), max(times), a.repeat))
    finally:
        srv.terminate()
        srv.communicate(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
