#!/usr/bin/env python3
"""Call-site sleds (docs/map-format.md): every call site is a 5-byte nop until armed.

A program of two units plus a linked instrumented shared library runs in five states; while
it waits on stdin, the test reads from /proc/PID/mem every sled listed in the objects'
ptcall_sites sections (parsed here from the ELF files, relocated with /proc/PID/maps) and
every unit's `__ptcall_soft_slot` (found with nm):
  untraced                  every sled the nop, every slot 0
  PTCALL_ARM=1              every sled `call <its stub>` (stubs stay `ret`: external perf / PT)
  PTCALL_BACKEND=pt         the same (what `ptcall record --backend pt` sets)
  ptcall record (soft)      every sled `call <its stub>`, every slot the soft handler's address,
                            and the trace holds every call
  untraced + `ptcall arm PID`        every sled armed; then `ptcall arm --off PID`: every sled
                                     the nop again
  PTCALL_BACKEND=pt + PTCALL_ONLY / PTCALL_SKIP (`ptcall record --backend pt --only/--skip`)
                            only the chosen functions' sleds call their stubs, the others stay
                            nops (so under Intel PT they never enter the stub section)
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


def sled_offsets(path):
    """(sled, stub) file-relative addresses of every ptcall_sites entry, from the ELF file."""
    out = run(["readelf", "-SW", path])
    for line in out.splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+ptcall_sites\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)", line)
        if m:
            addr, off, size = (int(x, 16) for x in m.groups())
            data = open(path, "rb").read()[off:off + size]
            # bit 0 of the stub marks a ret sled (map v5): kept in the tuple, as the kind
            return [(addr + 8 * i + struct.unpack_from("<i", data, 8 * i)[0],
                     addr + 8 * i + 4 + struct.unpack_from("<i", data, 8 * i + 4)[0])
                    for i in range(size // 8)]
    sys.exit("FAIL: %s has no ptcall_sites section" % path)


def funcs_at(path, sites):
    """The function (symbol table) holding each sled: the pass puts a function's sleds, ret
    sleds too, inside its body."""
    syms = []
    for line in run(["nm", "--defined-only", "-S", path]).splitlines():
        f = line.split()
        if len(f) == 4 and f[2] in "tT":
            syms.append((int(f[0], 16), int(f[1], 16), f[3]))
    out = []
    for site, _ in sites:
        hit = [n for a, sz, n in syms if a <= site < a + sz]
        out.append(hit[0] if hit else "?")
    return out


def load_base(pid, path):
    real = os.path.realpath(path)
    for line in open("/proc/%d/maps" % pid):
        f = line.split()
        if len(f) >= 6 and f[5] == real and int(f[2], 16) == 0:
            return int(f[0].split("-")[0], 16)
    sys.exit("FAIL: %s not mapped in %d" % (path, pid))


def slots_of(pid, objs):
    """Every unit slot's value, and every sled's state: 'nop', 'call' (to its own stub) or
    the bytes found. A ret sled reads 'nop' while its opcode byte is `ret` (the 4 bytes
    after it are not executed, and keep the last rel32 once disarmed) and 'call' while it
    is `jmp <its stub>`: the stub's ret returns to the caller."""
    vals, sleds = [], []
    with open("/proc/%d/mem" % pid, "rb") as mem:
        for path, offs, sites, pie in objs:
            base = load_base(pid, path) if pie else 0
            for off in offs:
                mem.seek(base + off)
                vals.append(struct.unpack("<Q", mem.read(8))[0])
            for site, stub in sites:
                mem.seek(base + site)
                b = mem.read(5)
                if stub & 1:
                    stub &= ~1
                    if b[0] == 0xC3:
                        sleds.append("nop")
                    elif b[0] == 0xE9 and struct.unpack("<i", b[1:])[0] == stub - (site + 5):
                        sleds.append("call")
                    else:
                        sleds.append(b.hex())
                elif b == bytes([0x0F, 0x1F, 0x44, 0x00, 0x00]):
                    sleds.append("nop")
                elif b[0] == 0xE8 and struct.unpack("<i", b[1:])[0] == stub - (site + 5):
                    sleds.append("call")
                else:
                    sleds.append(b.hex())
    return vals, sleds


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
    objs = [(exe, slot_offsets(exe), sled_offsets(exe), True),
            (lib, slot_offsets(lib), sled_offsets(lib), True)]
    nslots = sum(len(o[1]) for o in objs)
    nsleds = sum(len(o[2]) for o in objs)
    if nslots != 3:
        sys.exit("FAIL: expected 3 unit slots (2 units + library), nm found %d" % nslots)
    if nsleds < 8:  # main, arm_main_work, arm_unit2, arm_lib: an entry and an exit each
        sys.exit("FAIL: expected at least 8 sleds, the ptcall_sites sections list %d" % nsleds)
    nrets = sum(1 for o in objs for _, stub in o[2] if stub & 1)
    if not nrets:
        sys.exit("FAIL: no ret sleds: the exits before a plain ret should have moved behind it")
    NOPS, CALLS = ["nop"] * nsleds, ["call"] * nsleds
    env = {k: v for k, v in os.environ.items() if not k.startswith("PTCALL_")}
    failures = []
    outputs = {}

    (vals, sleds), outputs["untraced"] = probe([exe], env, objs)
    if vals != [0] * nslots or sleds != NOPS:
        failures.append("untraced: slots %s, sleds %s, want all 0 and nops" % (vals, sleds))
    for name, extra in (("arm", {"PTCALL_ARM": "1"}), ("pt", {"PTCALL_BACKEND": "pt"})):
        (vals, sleds), outputs[name] = probe([exe], dict(env, **extra), objs)
        if sleds != CALLS:
            failures.append("%s: sleds %s, want every one calling its stub" % (extra, sleds))
    # a selection: only the chosen functions' sleds are armed, for Intel PT as for soft
    sled_funcs = funcs_at(exe, objs[0][2]) + funcs_at(lib, objs[1][2])
    if "?" in sled_funcs:
        failures.append("sleds outside any function: %s" % sled_funcs)
    for sel, chosen in (({"PTCALL_ONLY": "arm_lib\narm_unit*"}, {"arm_lib", "arm_unit2"}),
                        ({"PTCALL_ONLY": "arm_*", "PTCALL_SKIP": "arm_main*"},
                         {"arm_lib", "arm_unit2"}),
                        ({"PTCALL_SKIP": "main"}, {"arm_lib", "arm_unit2", "arm_main_work"})):
        want = ["call" if f in chosen else "nop" for f in sled_funcs]
        for base in ({"PTCALL_BACKEND": "pt"}, {"PTCALL_ARM": "1"}):
            (vals, sleds), outputs["pt-sel"] = probe([exe], dict(env, **base, **sel), objs)
            if sleds != want:
                failures.append("%s %s: sleds %s, want %s (functions %s)"
                                % (base, sel, sleds, want, sled_funcs))
    trace = os.path.join(d, "arm.ptc")
    (vals, sleds), outputs["soft"] = probe(
        [ptcall, "record", "-q", "--backend", "soft", "-o", trace, "--", exe], env, objs)
    if any(v in (0, 1) for v in vals) or len(set(vals)) != 1 or sleds != CALLS:
        failures.append("soft: slots %s, sleds %s, want one handler address in all and calls"
                        % ([hex(v) for v in vals], sleds))
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
        armed = slots_of(pid, objs)[1]
        run([ptcall, "arm", "--off", str(pid)])
        return [before[1], armed, slots_of(pid, objs)[1]]
    vals, outputs["arm-cli"] = probe([exe], env, objs, arm_cycle)
    if vals != [NOPS, CALLS, NOPS]:
        failures.append("ptcall arm / arm --off: sleds %s, want nops, calls, nops" % vals)
    for args, rc, msg in (([], 2, "usage: ptcall arm"), (["999999999"], 1, "no process"),
                          (["abc"], 2, "bad pid"), ([str(os.getpid())], 1, "no gated ptcall-instrumented code")):
        r = subprocess.run([ptcall, "arm"] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if r.returncode != rc or msg not in r.stderr or len(r.stderr.strip().splitlines()) > 6:
            failures.append("ptcall arm %s: rc %d, stderr %r; want rc %d and %r" % (args, r.returncode, r.stderr, rc, msg))
    if failures:
        sys.exit("FAIL arm:\n" + "\n".join(failures))
    print("PASS arm: %d sleds: nops untraced, calls armed (PTCALL_ARM, backend pt, ptcall arm, "
          "soft), nops again after arm --off, only the chosen functions' with PTCALL_ONLY/SKIP; "
          "%d unit slots hold the handler when soft" % (nsleds, nslots))


if __name__ == "__main__":
    main()
