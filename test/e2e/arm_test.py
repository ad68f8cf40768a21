#!/usr/bin/env python3
"""Gated call sites (docs/map-format.md): every instrumented unit's slot is its arm gate.

A program of two units plus a linked instrumented shared library runs in four states; while
it waits on stdin, the test reads every `__ptcall_soft_slot` (found independently with nm,
relocated with /proc/PID/maps) from /proc/PID/mem:
  untraced                  every slot 0 (call sites skip their stubs)
  PTCALL_ARM=1              every slot 1 (armed, stubs stay `ret`: external perf / PT)
  PTCALL_BACKEND=pt         every slot 1 (what `ptcall record --backend pt` sets)
  ptcall record (soft)      every slot the soft handler's address (not 0, not 1), and the
                            trace holds every call
  untraced + `ptcall arm PID`        every slot 1; then `ptcall arm --off PID`: every slot 0
The program's output must be the same in all states. `ptcall arm` refuses a missing pid, a
process with no instrumented code and bad arguments with one-line errors.
"""
import argparse
import json
import os
import re
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd, **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    if r.returncode:
        sys.exit("FAIL: %s exited %d\n%s%s" % (" ".join(cmd), r.returncode, r.stdout, r.stderr))
    return r.stdout


def slot_offsets(path):
    """File-relative addresses of every unit's slot, from the symbol table."""
    out = run(["nm", "--defined-only", path])
    offs = [int(l.split()[0], 16) for l in out.splitlines() if l.endswith(" __ptcall_soft_slot")]
    return offs


def load_base(pid, path):
    real = os.path.realpath(path)
    for line in open("/proc/%d/maps" % pid):
        f = line.split()
        if len(f) >= 6 and f[5] == real and int(f[2], 16) == 0:
            return int(f[0].split("-")[0], 16)
    sys.exit("FAIL: %s not mapped in %d" % (path, pid))


def slots_of(pid, objs):
    vals = []
    with open("/proc/%d/mem" % pid, "rb") as mem:
        for path, offs, pie in objs:
            base = load_base(pid, path) if pie else 0
            for off in offs:
                mem.seek(base + off)
                vals.append(struct.unpack("<Q", mem.read(8))[0])
    return vals


def probe(cmd, env, objs, while_waiting=None):
    p = subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    first = p.stdout.readline()
    if not first.startswith("ready"):
        p.kill()
        sys.exit("FAIL: program did not start: %r" % first)
    # under `ptcall record` the traced program is a child of ptcall
    pid = p.pid
    kids = "/proc/%d/task/%d/children" % (pid, pid)
    if os.path.exists(kids) and open(kids).read().split():
        pid = int(open(kids).read().split()[0])
    vals = slots_of(pid, objs)
    if while_waiting:
        vals = while_waiting(pid, vals)
    rest, _ = p.communicate("go\n", timeout=60)
    if p.returncode:
        sys.exit("FAIL: %s exited %d" % (" ".join(cmd), p.returncode))
    return vals, first + rest


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    b = os.path.abspath(a.build)
    cc = os.path.join(b, "bin", "ptcall-cc")
    ptcall = os.path.join(b, "tools", "ptcall")
    d = os.path.join(os.path.abspath(a.work), "arm")
    os.makedirs(d, exist_ok=True)
    src = os.path.join(HERE, "programs")
    lib = os.path.join(d, "libarm.so")
    exe = os.path.join(d, "arm_main")
    run([cc, "-O2", "-fPIC", "-shared", os.path.join(src, "arm_lib.c"), "-o", lib])
    run([cc, "-O2", os.path.join(src, "arm_main.c"), os.path.join(src, "arm_unit2.c"), lib,
         "-Wl,-rpath," + d, "-o", exe])
    objs = [(exe, slot_offsets(exe), True), (lib, slot_offsets(lib), True)]
    nslots = sum(len(o[1]) for o in objs)
    if nslots != 3:
        sys.exit("FAIL: expected 3 unit slots (2 units + library), nm found %d" % nslots)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PTCALL_")}
    failures = []
    outputs = {}

    vals, outputs["untraced"] = probe([exe], env, objs)
    if vals != [0] * nslots:
        failures.append("untraced: slots %s, want all 0" % vals)
    vals, outputs["arm"] = probe([exe], dict(env, PTCALL_ARM="1"), objs)
    if vals != [1] * nslots:
        failures.append("PTCALL_ARM=1: slots %s, want all 1" % vals)
    vals, outputs["pt"] = probe([exe], dict(env, PTCALL_BACKEND="pt"), objs)
    if vals != [1] * nslots:
        failures.append("PTCALL_BACKEND=pt: slots %s, want all 1" % vals)
    trace = os.path.join(d, "arm.ptc")
    vals, outputs["soft"] = probe([ptcall, "record", "-q", "--backend", "soft", "-o", trace, "--", exe],
                                  env, objs)
    if any(v in (0, 1) for v in vals) or len(set(vals)) != 1:
        failures.append("soft: slots %s, want one handler address in all" % [hex(v) for v in vals])
    rep = json.loads(run([ptcall, "report", trace, "--format", "json", "--top", "0"]))
    counts = {f["name"]: int(f["calls"]) for f in rep["functions"]}
    want = {"main": 1, "arm_main_work": 2, "arm_unit2": 2, "arm_lib": 2}
    if counts != want:
        failures.append("soft trace counts %s, want %s" % (counts, want))
    if len(set(outputs.values())) != 1:
        failures.append("outputs differ between states: %s" % outputs)
    # arming from outside: ptcall arm PID / --off PID
    def arm_cycle(pid, before):
        run([ptcall, "arm", str(pid)])
        armed = slots_of(pid, objs)
        run([ptcall, "arm", "--off", str(pid)])
        return [before, armed, slots_of(pid, objs)]
    vals, outputs["arm-cli"] = probe([exe], env, objs, arm_cycle)
    if vals != [[0] * nslots, [1] * nslots, [0] * nslots]:
        failures.append("ptcall arm / arm --off: slots %s, want 0s, 1s, 0s" % vals)
    for args, rc, msg in (([], 2, "usage: ptcall arm"), (["999999999"], 1, "no process"),
                          (["abc"], 2, "bad pid"), ([str(os.getpid())], 1, "no gated ptcall-instrumented code")):
        r = subprocess.run([ptcall, "arm"] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if r.returncode != rc or msg not in r.stderr or len(r.stderr.strip().splitlines()) > 6:
            failures.append("ptcall arm %s: rc %d, stderr %r; want rc %d and %r" % (args, r.returncode, r.stderr, rc, msg))
    if failures:
        sys.exit("FAIL arm:\n" + "\n".join(failures))
    print("PASS arm: %d unit slots: 0 untraced, 1 armed (PTCALL_ARM, backend pt, ptcall arm), "
          "handler when soft" % nslots)


if __name__ == "__main__":
    main()
