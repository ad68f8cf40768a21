#!/usr/bin/env python3
"""pt-bandwidth-cli: `ptcall bandwidth` and `ptcall stat`'s bytes per function on a real program.

  bandwidth_cli.py PTCALL PTCALL_CC SRC WORKDIR

1. A real program (SRC, built non-PIE with ptcall-cc) is recorded with the soft backend.
2. `ptcall bandwidth --format json`: one TIP.PGE and one TIP.PGD per hit in every timing
   configuration, the functions' bytes add up to the hit bytes, rates are there.
3. The round trip: `--emit` writes the simulated mtc stream with libipt's encoder; `ptcall
   import` reads it as the Intel PT trace of that thread; the PT front-end decodes it to the
   same calls as the soft trace (`ptcall report`), and `ptcall bandwidth` on the imported trace
   predicts, from its decoded hits, exactly the packets it holds (measured == predicted).
4. Bad input: an untimed trace refuses mtc/cyc and computes the rest; --only that matches
   nothing; a missing file.
5. `ptcall stat` ends with the bytes per function.
"""
import json
import os
import re
import shutil
import subprocess
import sys

fails = 0


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
    ptcall, cc, src, work = sys.argv[1:5]
    if not os.access(cc, os.X_OK):
        print(f"SKIP: {cc} is not built (the LLVM pass component)")
        return 0
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    prog = os.path.join(work, "calls")
    if run(cc, "-O1", "-no-pie", "-fno-pie", "-o", prog, src).returncode:
        print("SKIP: ptcall-cc cannot build the program non-PIE here")
        return 0
    soft = os.path.join(work, "soft.ptc")
    if run(ptcall, "record", "--backend", "soft", "-q", "-o", soft, "--", prog, "18", "20000").returncode:
        print("SKIP: the soft backend cannot record here")
        return 0

    # 2. the figures of the soft trace
    p = run(ptcall, "bandwidth", soft, "--format", "json")
    doc = json.loads(p.stdout) if p.returncode == 0 else None
    if check(doc is not None, "bandwidth --format json on a soft trace"):
        hits = doc["hits"]
        check(hits > 40000, f"{hits} hits simulated")
        check([m["timing"] for m in doc["modes"]] == ["none", "tsc", "mtc", "cyc"],
              "the four timing configurations by default")
        for m in doc["modes"]:
            pk = m["packets"]
            check(pk["TIP.PGE"]["count"] == hits and pk["TIP.PGD"]["count"] == hits,
                  f"{m['timing']}: one TIP.PGE and one TIP.PGD per hit")
            fb = sum(f["entry_bytes"] + f["exit_bytes"] for f in m["functions"])
            check(fb == m["hit_bytes"], f"{m['timing']}: functions' bytes {fb} == hit bytes")
            check(m["bytes"] == sum(v["bytes"] for v in pk.values()),
                  f"{m['timing']}: bytes == the sum over packet types")
            check(m["bytes_per_s"]["mean"] and m["bytes_per_s"]["mean"] > 0,
                  f"{m['timing']}: a mean rate")
        check("MTC" not in doc["modes"][0]["packets"] and "MTC" in doc["modes"][2]["packets"],
              "MTC in mtc only, not in none")
        check("CYC" in doc["modes"][3]["packets"], "CYC in cyc")
        ra = doc["model"]["return_addresses"]
        # the exits of the outermost frame (main) return into uninstrumented code: assumed
        check(ra["assumed"] <= 4 and ra["call_sites"] > hits // 4,
              f"return addresses from the binary's call sites: {ra}")

    # 3. the round trip through libipt's encoder, ptcall import and the PT front-end
    emit = os.path.join(work, "emit")
    p = run(ptcall, "bandwidth", soft, "--timing", "mtc", "--emit", emit, "--format", "json")
    streams = sorted(os.listdir(emit)) if os.path.isdir(emit) else []
    if check(p.returncode == 0 and len(streams) == 1 and streams[0].startswith("mtc-"),
             f"--emit wrote one stream: {streams}"):
        sim = json.loads(p.stdout)["modes"][0]
        pid, tid = re.match(r"mtc-(\d+)-(\d+)\.pt", streams[0]).groups()
        size = os.path.getsize(os.path.join(emit, streams[0]))
        check(size == sim["bytes"], f"the stream's {size} bytes are the {sim['bytes']} simulated")
        imp = os.path.join(work, "imported.ptc")
        p = run(ptcall, "import", "-o", imp, "--thread-stream", os.path.join(emit, streams[0]),
                "--pid", pid, "--tid", tid, "--binary", prog, "--timing", "mtc",
                "--mtc-period", "3", "--tsc-ratio", "100:1")
        if check(p.returncode == 0, "ptcall import of the emitted stream"):
            a = run(ptcall, "report", soft, "--format", "json")
            b = run(ptcall, "report", imp, "--format", "json")
            fa = {f["name"]: f["calls"] for f in json.loads(a.stdout)["functions"]}
            fb = {f["name"]: f["calls"] for f in json.loads(b.stdout)["functions"]} if b.returncode == 0 else {}
            check(fa == fb, f"the imported PT trace has the soft trace's calls: {fb}")
            # import does not record the PSB period the stream was written with (16K)
            p = run(ptcall, "bandwidth", imp, "--timing", "mtc", "--psb-period", "16K",
                    "--format", "json")
            if check(p.returncode == 0, "bandwidth on the imported Intel PT trace"):
                d = json.loads(p.stdout)
                meas, pred = d.get("measured", {}).get("packets", {}), d["modes"][0]["packets"]
                # an MTC between the stream's last TIP.PGE and its TIP.PGD (a crystal boundary
                # crossed during the last stub) follows every decoded time: the prediction
                # from decoded hits cannot place it (docs/bandwidth.md); at most one per stream
                mm, pm = meas.get("MTC", {}), pred.get("MTC", {})
                extra = mm.get("count", 0) - pm.get("count", 0)
                rest = lambda d: {k: v for k, v in d.items() if k != "MTC"}
                check(rest(meas) == rest(pred) and extra in (0, 1) and
                      mm.get("bytes", 0) - pm.get("bytes", 0) == 2 * extra,
                      f"measured packets == predicted (MTC: at most the last stub's one more): "
                      f"{meas} vs {pred}")

    # 4. bad input
    untimed = os.path.join(work, "untimed.ptc")
    run(ptcall, "record", "--backend", "soft", "-q", "--no-timestamps", "-o", untimed, "--", prog, "12", "100")
    p = run(ptcall, "bandwidth", untimed, "--format", "json")
    check(p.returncode == 0 and "not simulating 'mtc'" in p.stderr and "not simulating 'cyc'" in p.stderr,
          "untimed: mtc and cyc refused with the reason")
    if p.returncode == 0:
        d = json.loads(p.stdout)
        check([m["timing"] for m in d["modes"]] == ["none", "tsc"] and d["span_ns"] == 0,
              "untimed: none and tsc computed, no span")
    p = run(ptcall, "bandwidth", untimed, "--timing", "cyc", ok=(1,))
    check(p.returncode == 1 and "nothing to simulate" in p.stderr, "untimed --timing cyc: an error")
    p = run(ptcall, "bandwidth", soft, "--only", "no_such_function*", ok=(1,))
    check(p.returncode == 1 and "--only matches no function" in p.stderr, "--only that matches nothing")
    p = run(ptcall, "bandwidth", soft, "--only", "fib", "--format", "json")
    if check(p.returncode == 0, "--only fib"):
        d = json.loads(p.stdout)
        names = {f["name"] for f in d["modes"][0]["functions"]}
        check(names == {"fib"} and d["hits_left_out"] > 0, f"--only fib: only fib's bytes ({names})")
    p = run(ptcall, "bandwidth", os.path.join(work, "missing.ptc"), ok=(1,))
    check(p.returncode == 1 and "missing.ptc" in p.stderr, "a missing file: says which")

    # 5. stat's bytes per function
    p = run(ptcall, "stat", soft)
    check(p.returncode == 0 and "bytes per function" in p.stdout and re.search(r"\btiny\b", p.stdout),
          "ptcall stat: bytes per function")
    print(f"pt-bandwidth-cli: {fails} failure(s)")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
