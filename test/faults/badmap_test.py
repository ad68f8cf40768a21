#!/usr/bin/env python3
"""runtime-bad-map: a ptcall_map that passes every check a reader can make without the loaded
object, but names a soft-handler slot or a call-site table outside the object, or a slot in
its read-only code, leaves that object untraced with one warning; the program runs on and
its other objects are traced (docs/reliability.md, docs/runtime.md "Registration").

  badmap_test.py PTCALL PTCALL_CC MAP_CHECK LIBPTCALL WORKDIR

badmap.c and badmap_lib.c are built with ptcall-cc; copies get their ptcall_map damaged
(every unit's field, so that the units still agree): soft_slot_rel 64 TiB further (past the
end of user space from where objects load), soft_slot_rel pointing at .text, sites_rel and
sites_end_rel 64 TiB further, the first call-site entry's sled 1.5 GiB lower. MAP_CHECK
shows that each damaged map passes ptc_map_scan without the object. Each copy runs under
`ptcall record --backend soft` (timed and untimed: the untimed runtime builds trampolines
from the table first), with PTCALL_BACKEND=soft set directly, arm-only (PTCALL_ARM=1), and
armed from outside while it waits (`ptcall arm PID`, which writes through /proc/PID/mem: the
object is left alone with a warning). Asserted: the program's output, exactly one line of the
runtime on stderr naming the object and the damaged field, and a trace without that object:
`ptcall stat` counts one module, `ptcall report` has none of its functions and every call of
the other object's. The runtime used to crash (SIGSEGV in patch_unit or sites_switch).

The trace says the object was refused (a MODULE_REFUSED chunk, docs/trace-format.md 4.16):
`ptcall report` warns that it was not traced, with its path and the warning's reason, its
JSON lists it in `refused_objects` and says `complete: false`, `ptcall stat` lists it, and
`ptcall record` says the trace is INCOMPLETE and exits 125 (the command succeeded). Traces
used to read as complete, with the object's functions silently missing.

$PTCALL_RUNTIME, if set, is the runtime under test instead of LIBPTCALL (to show the old
behaviour).
"""
import os
import shutil
import struct
import subprocess
import sys

from faultlib import Checks, report, run

# the ELF section table reader of the fuzz_map seeds: name -> (name, type, flags, addr,
# offset, size, ...)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fuzz"))
from map_seeds import sections  # noqa: E402

check = Checks()

MAGIC = 0x4D435450
F_SLEDS = 0x20
SLOT_REL, SITES_REL, SITES_END_REL = 48, 64, 72  # offsets in struct ptcall_map_header
FAR = 0x4000_0000_0000  # 64 TiB

EXPECT = "ok %d %d\n" % (sum(i ^ 5 for i in range(100)), sum(3 * i + 1 for i in range(50)))
MAIN_FUNCS = {"main": 1, "main_work": 100}
LIB_FUNCS = {"lib_entry": 1, "lib_work": 50}


def damage(src, dst, how):
    """Copies ELF object src to dst with every map unit's field changed (how: slot-far,
    slot-text, sites-far), or the first call-site entry (sled-far). Returns the number of
    units (entries) changed."""
    b = bytearray(open(src, "rb").read())
    sec = sections(b)
    if how == "sled-far":  # the first entry of ptcall_sites: its sled 1.5 GiB lower
        off = sec["ptcall_sites"][4]
        rel, = struct.unpack_from("<i", b, off)
        struct.pack_into("<i", b, off, rel - 0x6000_0000)
        open(dst, "wb").write(b)
        os.chmod(dst, 0o755)
        return 1
    addr, off, size = sec["ptcall_map"][3], sec["ptcall_map"][4], sec["ptcall_map"][5]
    text = (sec[".text"][3] + 7) & ~7
    pos, changed = 0, 0
    while pos < size:
        if b[off + pos] == 0:  # zero padding between blobs
            pos += 1
            continue
        magic, version, _, total, flags = struct.unpack_from("<IHHII", b, off + pos)
        assert magic == MAGIC and total >= 8, "not a map blob at %d" % pos
        at = off + pos
        if how == "slot-far":
            rel, = struct.unpack_from("<q", b, at + SLOT_REL)
            struct.pack_into("<q", b, at + SLOT_REL, rel + FAR)
            changed += 1
        elif how == "slot-text":
            struct.pack_into("<q", b, at + SLOT_REL, text - (addr + pos + SLOT_REL))
            changed += 1
        elif how == "sites-far" and version >= 3 and flags & F_SLEDS:
            for field in (SITES_REL, SITES_END_REL):
                rel, = struct.unpack_from("<q", b, at + field)
                struct.pack_into("<q", b, at + field, rel + FAR)
            changed += 1
        pos += total
    open(dst, "wb").write(b)
    os.chmod(dst, 0o755)
    return changed


def build(cc, work):
    """The program and its library, built with ptcall-cc in work/good; False after SKIP."""
    if not os.access(cc, os.X_OK):
        print("SKIP: %s is not built (the LLVM pass component)" % cc)
        return False
    here = os.path.dirname(os.path.abspath(__file__))
    good = os.path.join(work, "good")
    os.makedirs(good)
    lib = os.path.join(good, "libbadmap.so")
    p = run([cc, "-O1", "-fPIC", "-shared", "-o", lib, os.path.join(here, "badmap_lib.c")])
    q = p.returncode == 0 and run([cc, "-O1", "-o", os.path.join(good, "badmap"),
                                   os.path.join(here, "badmap.c"), "-L", good, "-lbadmap"])
    if p.returncode or q.returncode:
        print("SKIP: ptcall-cc cannot build the program: %s" % (p.stderr + (q.stderr if q else "")))
        return False
    return True


def ptcall_lines(stderr):
    return [l for l in stderr.splitlines() if l.startswith("ptcall")]


def refusal_reason(warning, victim):
    """The reason of the runtime's warning `ptcall: PATH: REASON; not traced`, which the
    trace's MODULE_REFUSED chunk repeats."""
    head, tail = "ptcall: %s: " % victim, "; not traced"
    if warning.startswith(head) and warning.endswith(tail):
        return warning[len(head):-len(tail)]
    return None


def check_trace(ptcall, trace, what, traced, untraced, victim, reason):
    """The trace holds one module, every call of the traced object's functions, none of the
    damaged object's, and says that object was refused with the warning's reason: stat lists
    it, report's text warns, its JSON lists it in refused_objects and is not complete. The
    process closed its trace (a trace the runtime wrote on its own has no RECORD_END)."""
    st = run([ptcall, "stat", trace])
    check(st.returncode == 0 and "modules: 1," in st.stdout,
          "%s: the trace holds one module: %s" % (what, [l for l in st.stdout.splitlines()
                                                         if "modules" in l]))
    said = "%s: %s" % (victim, reason)
    refused = [l for l in st.stdout.splitlines() if said in l]
    check("refused: 1 instrumented object was not traced" in st.stdout and len(refused) == 1 and
          refused[0].strip().startswith("pid "),
          "%s: stat lists the refused object with its reason: %s"
          % (what, [l for l in st.stdout.splitlines() if "refused" in l or victim in l]))
    doc, err = report(ptcall, trace)
    if not check(doc is not None, "%s: report reads the trace: %s" % (what, err.strip()[:200])):
        return
    calls = {f["name"]: f["calls"] for f in doc["functions"]}
    named = set(calls) | set(doc.get("uncalled", []))
    mods = {f["module"] for f in doc["functions"]}
    t = doc["totals"]
    check(t["unfinished_processes"] == 0 and t["unclosed_threads"] == 0 and
          all(calls.get(n) == c for n, c in traced.items()),
          "%s: closed, every call of the traced object: %s" % (what, calls))
    check(not (named & set(untraced)) and victim not in mods,
          "%s: nothing of %s in the report: %s" % (what, os.path.basename(victim), sorted(named)))
    ref = doc.get("refused_objects")
    check(t["complete"] is False and isinstance(ref, list) and len(ref) == 1 and
          ref[0].get("path") == victim and ref[0].get("reason") == reason and
          isinstance(ref[0].get("pid"), int) and ref[0]["pid"] > 0,
          "%s: JSON: complete false, refused_objects names the object and the reason: %s %s"
          % (what, t["complete"], ref))
    text = run([ptcall, "report", trace])
    lines = [l for l in text.stdout.splitlines() if "instrumented object was not traced" in l]
    check(text.returncode == 0 and len(lines) == 1 and
          ("(%s): its functions are missing from every figure" % said) in lines[0],
          "%s: report's text warns that the object was not traced, and why: %s"
          % (what, lines or text.stderr.strip()[:200]))


def one_case(work, how, victim_name):
    good = os.path.join(work, "good")
    d = os.path.join(work, "%s-%s" % (how, "lib" if victim_name.endswith(".so") else "exe"))
    os.makedirs(d)
    for f in ("badmap", "libbadmap.so"):
        shutil.copy2(os.path.join(good, f), os.path.join(d, f))
    victim = os.path.join(d, victim_name)
    n = damage(os.path.join(good, victim_name), victim, how)
    what = "%s in %s" % (how, victim_name)
    check(n > 0, "%s: %d map units damaged" % (what, n))
    return d, victim, what


def expect_run(p, what, victim, field, says, status=0):
    """The program ran whole, with one warning of the runtime naming the object; returns that
    warning. Under `ptcall record` (status 125) record's own last line says the trace is
    incomplete because the object was not traced."""
    rc = p.returncode
    check(rc == status, "%s: exit %d (%s)" % (what, status, "signal %d" % -rc if rc < 0 else rc))
    check(p.stdout == EXPECT, "%s: the program's output: %r" % (what, p.stdout[:80]))
    lines = ptcall_lines(p.stderr)
    if status == 125:
        rec = lines[-1:] if lines and lines[-1].startswith("ptcall: the trace is INCOMPLETE") \
            else []
        lines = lines[:-1] if rec else lines
        check(len(rec) == 1 and "1 instrumented object was not traced (%s: " % victim in rec[0]
              and field in rec[0],
              "%s: record says the trace is INCOMPLETE, naming the object: %s" % (what, rec))
    check(len(lines) == 1 and victim in lines[0] and field in lines[0] and says in lines[0],
          "%s: one warning naming the object, %s and '%s': %s" % (what, field, says, lines))
    return lines[0] if len(lines) == 1 else ""


def arm_from_outside(ptcall, prog, env, what, victim, field):
    """`ptcall arm PID` of the program waiting untraced: the damaged object is left alone with
    one warning, the other one armed (status 1: not wholly armed); the program runs on."""
    what += ", ptcall arm PID"
    proc = subprocess.Popen([prog, "wait"], env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ready = proc.stdout.readline()
    a = run([ptcall, "arm", proc.pid]) if ready == "ready\n" else None
    out, err = proc.communicate("go\n", timeout=60)
    if not check(a is not None, "%s: the program waits: %r %s" % (what, ready, err[:200])):
        return
    warnings = [l for l in a.stderr.splitlines() if "warning" in l]
    check(a.returncode == 1 and len(warnings) == 1 and victim in warnings[0] and
          field in warnings[0] and "not armed" in warnings[0] and
          "1 of 1 units armed" in a.stderr and "1 object left alone" in a.stderr,
          "%s: status 1, one warning naming the object and %s, the other object armed: %d %s"
          % (what, field, a.returncode, a.stderr.strip()))
    check(proc.returncode == 0 and out == EXPECT and not ptcall_lines(err),
          "%s: the program runs on: %s %r" % (what, proc.returncode, out))


def main():
    if len(sys.argv) != 6:
        raise SystemExit(__doc__)
    ptcall, cc, map_check, rt, work = sys.argv[1:6]
    rt = os.environ.get("PTCALL_RUNTIME") or rt
    work = os.path.realpath(work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    if not build(cc, work):
        return 0
    base = {k: v for k, v in os.environ.items() if not k.startswith("PTCALL_")}
    # the checks count the program's modules, not the runtime's [blocking] one
    base["PTCALL_BLOCKING"] = "0"
    if os.environ.get("PTCALL_RUNTIME"):
        base["PTCALL_RUNTIME"] = rt

    # the undamaged copies: both objects traced, nothing said
    good = os.path.join(work, "good")
    trace = os.path.join(work, "good.ptc")
    env = dict(base, LD_LIBRARY_PATH=good)
    p = run([ptcall, "record", "-q", "--backend", "soft", "-o", trace, "--",
             os.path.join(good, "badmap")], env=env)
    st = run([ptcall, "stat", trace])
    check(p.returncode == 0 and p.stdout == EXPECT and not ptcall_lines(p.stderr) and
          "modules: 2," in st.stdout, "undamaged: traced, 2 modules, no warning: %d %s"
          % (p.returncode, ptcall_lines(p.stderr)))

    for how, victim_name, field in (("slot-far", "libbadmap.so", "soft_slot_rel"),
                                    ("slot-text", "libbadmap.so", "soft_slot_rel"),
                                    ("sites-far", "libbadmap.so", "sites_rel"),
                                    ("sled-far", "libbadmap.so", "a call site outside"),
                                    ("sites-far", "badmap", "sites_rel")):
        d, victim, what = one_case(work, how, victim_name)
        mc = run([map_check, victim])
        check(mc.returncode == 0, "%s: passes ptc_map_scan without the object: %s"
              % (what, (mc.stdout + mc.stderr).strip()))
        if victim_name == "badmap":
            traced, untraced = LIB_FUNCS, MAIN_FUNCS
        else:
            traced, untraced = MAIN_FUNCS, LIB_FUNCS
        env = dict(base, LD_LIBRARY_PATH=d)
        prog = os.path.join(d, "badmap")
        for timing in ([], ["--no-timestamps"]):
            w = "%s, record%s" % (what, " untimed" if timing else "")
            trace = os.path.join(d, "record%s.ptc" % ("-untimed" if timing else ""))
            p = run([ptcall, "record", "-q", "--backend", "soft", *timing, "-o", trace, "--",
                     prog], env=env)
            # the trace lacks an object's functions: incomplete, though the command succeeded
            warning = expect_run(p, w, victim, field, "not traced", status=125)
            if p.returncode == 125:
                check_trace(ptcall, trace, w, traced, untraced, victim,
                            refusal_reason(warning, victim))
        # the runtime on its own, as a program started without ptcall record runs it
        trace = os.path.join(d, "direct.ptc")
        p = run([prog], env=dict(env, LD_PRELOAD=rt, PTCALL_BACKEND="soft", PTCALL_OUTPUT=trace))
        warning = expect_run(p, what + ", PTCALL_BACKEND=soft", victim, field, "not traced")
        if p.returncode == 0:
            check_trace(ptcall, trace, what + ", PTCALL_BACKEND=soft", traced, untraced, victim,
                        refusal_reason(warning, victim))
        # arm-only (an external Intel PT recorder): the object's call sites stay disarmed
        p = run([prog], env=dict(env, LD_PRELOAD=rt, PTCALL_ARM="1"))
        expect_run(p, what + ", PTCALL_ARM=1", victim, field, "stay disarmed")
        arm_from_outside(ptcall, prog, env, what, victim, field)

    # every instrumented object refused: the trace still says why it holds nothing
    d = os.path.join(work, "both")
    os.makedirs(d)
    damage(os.path.join(good, "libbadmap.so"), os.path.join(d, "libbadmap.so"), "slot-far")
    damage(os.path.join(good, "badmap"), os.path.join(d, "badmap"), "sites-far")
    trace = os.path.join(d, "record.ptc")
    p = run([ptcall, "record", "-q", "--backend", "soft", "-o", trace, "--",
             os.path.join(d, "badmap")], env=dict(base, LD_LIBRARY_PATH=d))
    lines = ptcall_lines(p.stderr)
    check(p.returncode == 125 and p.stdout == EXPECT and len(lines) == 3 and
          "2 instrumented objects were not traced" in lines[-1],
          "both objects damaged: record 125, two warnings and INCOMPLETE: %d %s"
          % (p.returncode, lines))
    st = run([ptcall, "stat", trace])
    check("modules: 0," in st.stdout and "refused: 2 instrumented objects" in st.stdout,
          "both objects damaged: stat lists no module and 2 refused: %s"
          % [l for l in st.stdout.splitlines() if "modules" in l or "refused" in l])
    r = run([ptcall, "report", trace])
    check(r.returncode == 1 and "the runtime refused 2 instrumented objects" in r.stderr,
          "both objects damaged: report says every object was refused: %d %s"
          % (r.returncode, r.stderr.strip()[:300]))

    print("%d check(s) failed" % check.fails if check.fails else "all checks passed")
    return 1 if check.fails else 0


if __name__ == "__main__":
    sys.exit(main())
