#!/usr/bin/env python3
"""pass-e2e: build small C / C++ programs with the build-tree wrappers ptcall-cc / ptcall-c++
at several optimisation levels and link modes, run them, and check the instrumented ELF:

  (a) `objdump -d -j ptcall_stubs`: every 16-byte slot is one stub, `ret` (or `endbr64; ret`
      under CET) followed by int3 padding; the section is 16-aligned and a multiple of 16;
  (b) `readelf -r`: no dynamic relocation lands in ptcall_map (nor are there any text
      relocations to the stubs);
  (c) the ptcall_map blobs parsed from the file: magic, version, sizes, offsets, flags; every
      stub_rel resolves to a 16-byte slot of ptcall_stubs, one record per slot; the soft slot
      resolves into writable zero-initialised data; every expected function is in the
      function table by name, the opted-out ones are not; every entry stub is called from code
      or, with sleds (the default), every entry of ptcall_sites is a 5-byte nop inside one
      aligned 8-byte word of code that names a stub of the map, and no code calls a stub;
  (d) no __cyg_profile_* reference survives (the no_instrument_function channel).

The programs link without the runtime (PTCALL_NO_RUNTIME=1): the weak reference to
__ptcall_register_object keeps them valid, so this test does not depend on runtime/.

usage: run_pass_e2e.py BUILD_DIR SOURCE_DIR WORK_DIR [filter-substring]
"""
import bisect
import os
import re
import shutil
import struct
import subprocess
import sys

MAGIC = 0x4D435450
VERSION = 8  # map version 8: the call graph (7: blocks, only with -fptcall-cov, not built here)
HDR = struct.Struct("<IHHIIQIIIIIIqIIqq")  # struct ptcall_map_header
STUB = struct.Struct("<qIHH")              # struct ptcall_map_stub
FUNC = struct.Struct("<IIII")              # struct ptcall_map_func
SITE = struct.Struct("<ii")               # struct ptcall_map_site
assert HDR.size == 80 and STUB.size == 16 and FUNC.size == 16 and SITE.size == 8
F_EARLY, F_EXITS, F_CET, F_R11, F_SLEDS, F_R10, F_RET = 1, 2, 4, 16, 32, 64, 128
F_UNGATED = 0x100  # test-only: the configuration turns the sleds off
SLED_NOP = bytes([0x0F, 0x1F, 0x44, 0x00, 0x00])
KINDS = {0: "entry", 1: "exit", 2: "unwind", 3: "landing"}
F_LEAF = 0x100  # stub record kind flag (v4): the function calls nothing

C_EXPECT = ["leaf_add", "fib", "classify", "tail_target", "tail_caller", "jumper",
            "use_setjmp", "static_helper", "apply", "main", "second_unit",
            "third_unit"]
C_ABSENT = ["not_instrumented_cyg", "not_instrumented_annot"]
CXX_EXPECT = ["pe2e::thrower", "pe2e::with_cleanup", "pe2e::catcher", "pe2e::rethrower",
              "pe2e::Acc<long>::add", "pe2e::second_cxx_unit", "main"]
LIB_EXPECT = ["lib_entry", "lib_inner"]

failures = []


def fail(cfg, msg):
    failures.append(f"[{cfg}] {msg}")
    print(f"FAIL [{cfg}] {msg}")


def run(cmd, env=None, cwd=None):
    p = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    if p.returncode != 0:
        raise RuntimeError(f"command failed ({p.returncode}): {' '.join(cmd)}\n{p.stdout}{p.stderr}")
    return p.stdout


class Elf:
    def __init__(self, path):
        self.path = path
        self.data = open(path, "rb").read()
        self.sections = {}
        out = run(["readelf", "-SW", path])
        for line in out.splitlines():
            m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+(\S+)\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)"
                         r"\s+[0-9a-f]+\s+(\S*)\s+\d+\s+\d+\s+(\d+)", line)
            if m:
                name, typ, addr, off, size, flags, align = m.groups()
                self.sections[name] = dict(type=typ, addr=int(addr, 16), off=int(off, 16),
                                           size=int(size, 16), flags=flags, align=int(align))

    def sec_bytes(self, name):
        s = self.sections[name]
        return self.data[s["off"]:s["off"] + s["size"]]

    def bytes_at(self, addr, n):
        for s in self.sections.values():
            if s["type"] == "PROGBITS" and s["addr"] <= addr and addr + n <= s["addr"] + s["size"]:
                return self.data[s["off"] + addr - s["addr"]:s["off"] + addr - s["addr"] + n]
        return None

    def section_at(self, addr):
        for name, s in self.sections.items():
            if "A" in s["flags"] and s["addr"] <= addr < s["addr"] + max(s["size"], 1):
                return name
        return None


def check_stubs(cfg, elf, cet):
    """(a): one stub per 16-byte slot, ret / endbr64+ret then int3 padding."""
    sec = elf.sections.get("ptcall_stubs")
    if not sec:
        fail(cfg, "no ptcall_stubs section")
        return 0
    if sec["addr"] % 16 or sec["size"] % 16 or sec["align"] < 16:
        fail(cfg, f"ptcall_stubs not 16-aligned/sized: {sec}")
    if "X" not in sec["flags"] or "W" in sec["flags"]:
        fail(cfg, f"ptcall_stubs flags {sec['flags']}")
    out = run(["objdump", "-d", "--no-show-raw-insn", "-j", "ptcall_stubs", elf.path])
    slots = {}
    for line in out.splitlines():
        m = re.match(r"\s*([0-9a-f]+):\s+(\S.*)$", line)
        if not m:
            continue
        addr = int(m.group(1), 16)
        insn = m.group(2).split("#")[0].strip().split()[0]
        slots.setdefault(addr - (addr - sec["addr"]) % 16, []).append((addr, insn))
    nslots = sec["size"] // 16
    if len(slots) != nslots:
        fail(cfg, f"{len(slots)} decoded slots, section holds {nslots}")
    want = ["endbr64", "ret"] if cet else ["ret"]
    for base, insns in sorted(slots.items()):
        names = [i for _, i in insns]
        head, pad = names[:len(want)], names[len(want):]
        if head != want or insns[0][0] != base or any(p not in ("int3", "nop") for p in pad):
            fail(cfg, f"stub slot {base:#x} is {names}")
    return nslots


def check_dynrelocs(cfg, elf):
    """(b): no dynamic relocation into ptcall_map (or ptcall_stubs)."""
    m = elf.sections["ptcall_map"]
    s = elf.sections["ptcall_stubs"]
    out = run(["readelf", "-rW", elf.path])
    n = 0
    for line in out.splitlines():
        mm = re.match(r"([0-9a-f]{8,16})\s+[0-9a-f]+\s+(R_X86_64_\S+)", line)
        if not mm:
            continue
        off = int(mm.group(1), 16)
        n += 1
        for name, sec in (("ptcall_map", m), ("ptcall_stubs", s)):
            if sec["addr"] <= off < sec["addr"] + sec["size"]:
                fail(cfg, f"dynamic relocation {mm.group(2)} at {off:#x} in {name}")
    if "W" in m["flags"] or "A" not in m["flags"]:
        fail(cfg, f"ptcall_map flags are {m['flags']}, want A (read-only)")
    return n


def check_map(cfg, elf, expect, absent, flags_want, nslots, nblobs=None):
    """(c): parse the blobs."""
    sec = elf.sections["ptcall_map"]
    data = elf.sec_bytes("ptcall_map")
    stubs_sec = elf.sections["ptcall_stubs"]
    pos = 0
    names = set()
    stub_targets = {}
    entries = set()
    slots = {}
    blobs = 0
    sites_tables = set()
    leaves = set()
    while pos < len(data):
        if pos % 8:
            fail(cfg, f"blob at {pos} not 8-aligned")
            return set(), {}, {}, set(), set()
        (magic, version, hsize, total, flags, uhash, ns, nf, soff, foff, stroff, strsize,
         slot_rel, srcname, ext, sites_rel, sites_end_rel) = HDR.unpack_from(data, pos)
        where = f"blob@{pos}"
        if magic != MAGIC or version != VERSION or hsize != 80:
            fail(cfg, f"{where}: magic {magic:#x} version {version} header_size {hsize}")
            return set(), {}, {}, set(), set()
        if total % 8 or pos + total > len(data):
            fail(cfg, f"{where}: total_size {total}")
            return set(), {}, {}, set(), set()
        if flags & F_SLEDS:
            sites_tables.add((sec["addr"] + pos + 64 + sites_rel,
                              sec["addr"] + pos + 72 + sites_end_rel))
        elif sites_rel or sites_end_rel:
            fail(cfg, f"{where}: sled table fields {sites_rel} {sites_end_rel} without F_SLEDS")
        # version 6: the sizes-and-callees extension right after the function table
        ext_size, ncallees = struct.unpack_from("<II", data, pos + ext) if ext else (0, 0)
        # version 8: the call-graph part right after the extension (no blocks here)
        graph = struct.unpack_from("<I", data, pos + ext + 12)[0] if ext else 0
        gsize, nicalls, ntaken, gblocks, nsuccs = (
            struct.unpack_from("<IIIII", data, pos + graph) if graph else (0, 0, 0, 0, 0))
        if soff != 80 or foff != soff + 16 * ns or ext != foff + 16 * nf or \
                ext_size != 16 + 16 * nf + 8 * ncallees or graph != ext + ext_size or \
                gsize != (24 + 24 * nf + 16 * nicalls + 16 * ntaken + 7) // 8 * 8 or \
                gblocks or nsuccs or stroff != graph + gsize or \
                stroff + strsize > total or total - (stroff + strsize) >= 8:
            fail(cfg, f"{where}: offsets {soff} {foff} {ext} {ext_size} {graph} {gsize} "
                      f"{stroff} {strsize} {total}")
        for i in range(ncallees):
            cfunc, cname = struct.unpack_from("<II", data, pos + ext + 16 + 16 * nf + 8 * i)
            if (cfunc != 0xffffffff and cfunc >= nf) or cname >= strsize:
                fail(cfg, f"{where}: callee {i} ({cfunc}, {cname})")
        if flags != flags_want:
            fail(cfg, f"{where}: flags {flags:#x}, want {flags_want:#x}")
        if uhash == 0:
            fail(cfg, f"{where}: unit_hash 0")
        strings = data[pos + stroff:pos + stroff + strsize]

        def s(off):
            if off >= len(strings):
                fail(cfg, f"{where}: string offset {off} out of range")
                return ""
            return strings[off:strings.index(b"\0", off)].decode()
        s(srcname)
        slot = sec["addr"] + pos + 48 + slot_rel
        slot_sec = elf.section_at(slot)
        if slot_sec not in (".bss", ".data") or slot % 8:
            fail(cfg, f"{where}: soft slot {slot:#x} in {slot_sec}")
        unit_stubs = set()
        funcs = []
        for i in range(nf):
            name, link, file, line = FUNC.unpack_from(data, pos + foff + 16 * i)
            funcs.append((s(name), s(link), s(file), line))
            names.add(s(name))
        for i in range(ns):
            field = pos + soff + 16 * i
            rel, fidx, raw_kind, site = STUB.unpack_from(data, field)
            kind, leaf = raw_kind & 0xff, raw_kind & ~0xff
            if leaf not in (0, F_LEAF) or (leaf and kind not in (0, 1)):
                fail(cfg, f"{where}: stub {i} kind field {raw_kind:#x}")
            target = sec["addr"] + field + rel
            if not (stubs_sec["addr"] <= target < stubs_sec["addr"] + stubs_sec["size"]) or \
                    (target - stubs_sec["addr"]) % 16:
                fail(cfg, f"{where}: stub {i} -> {target:#x} not a ptcall_stubs slot")
            if target in stub_targets:
                fail(cfg, f"{where}: stub {i} -> {target:#x} shared with {stub_targets[target]}")
            if fidx >= nf or kind not in KINDS or (kind == 0 and site != 0):
                fail(cfg, f"{where}: stub {i} func {fidx} kind {kind} site {site}")
                continue
            stub_targets[target] = (funcs[fidx][0], KINDS[kind], site)
            unit_stubs.add(target)
            if kind == 0:
                entries.add(target)
        # one entry per function
        ents = [STUB.unpack_from(data, pos + soff + 16 * i) for i in range(ns)]
        per_func = [sum(1 for e in ents if e[1] == f and e[2] & 0xff == 0) for f in range(nf)]
        # the leaf flag is a fact about the function: on all its records or on none
        for f in range(nf):
            marks = {e[2] & F_LEAF for e in ents if e[1] == f}
            if len(marks) > 1:
                fail(cfg, f"{where}: function {f} has the leaf flag on some records only")
            if marks == {F_LEAF}:
                leaves.add(funcs[f][0])
        if any(c != 1 for c in per_func):
            fail(cfg, f"{where}: entry stubs per function {per_func}")
        if not (flags & F_EXITS) and any(e[2] != 0 for e in ents):  # nor a leaf flag
            fail(cfg, f"{where}: non-entry stubs although exits are off")
        for t in unit_stubs:
            slots[t] = slot
        blobs += 1
        pos += total
    if nblobs is not None and blobs != nblobs:
        fail(cfg, f"{blobs} map blobs, want {nblobs}")
    if len(stub_targets) != nslots:
        fail(cfg, f"map describes {len(stub_targets)} stubs, section holds {nslots} slots")
    short = {n.split("(")[0] for n in names}
    for e in expect:
        if e not in short:
            fail(cfg, f"function {e} missing from the map (have {sorted(short)})")
    for a in absent:
        if a in short:
            fail(cfg, f"function {a} is instrumented but opted out")
    if len(sites_tables) > 1:
        fail(cfg, f"units name different sled tables {sorted(sites_tables)}")
    # main calls functions in every test program: never a leaf; with exits, every object
    # but the shared-library test's main program has a leaf
    if "main" in leaves:
        fail(cfg, "main carries the leaf flag")
    if flags_want & F_EXITS and not leaves and expect != ["main"]:
        fail(cfg, "no function carries the leaf flag")
    return entries, stub_targets, slots, sites_tables, leaves


def check_sleds(cfg, elf, tables, targets):
    """(d) sleds: the object's ptcall_sites table is the section the map names; every entry
    is a 5-byte nop inside one aligned 8-byte word of an executable section, whose stub is
    a stub of the map. Returns the stubs reached by a sled (what arming would call) and the
    sleds' addresses."""
    reached, sleds = set(), []
    if not tables:
        return reached, sleds, 0
    (start, end), = tables
    sec = elf.sections.get("ptcall_sites")
    if not sec or sec["addr"] != start or sec["addr"] + sec["size"] != end:
        fail(cfg, f"map's sled table {start:#x}-{end:#x} is not the ptcall_sites section {sec}")
        return reached, sleds, 0
    data = elf.sec_bytes("ptcall_sites")
    rets = 0
    for i in range(len(data) // SITE.size):
        site_rel, stub_rel = SITE.unpack_from(data, i * SITE.size)
        at = start + i * SITE.size
        site, stub = at + site_rel, at + 4 + stub_rel
        code = elf.bytes_at(site, 5)
        where = elf.section_at(site)
        if "X" not in elf.sections.get(where, {}).get("flags", ""):
            fail(cfg, f"sled {i} at {site:#x} is in {where}, not in code")
        if stub & 1:
            # a ret sled (map v5): the function's ret, then 4 bytes nothing executes, and
            # only an exit stub behind it
            stub &= ~1
            rets += 1
            if code != b"\xc3\xcc\xcc\xcc\xcc":
                fail(cfg, f"ret sled {i} at {site:#x} ({where}) holds {code!r}, not ret + int3 x 4")
            if stub in targets and targets[stub][1] != "exit":
                fail(cfg, f"ret sled {i} at {site:#x} names a {targets[stub][1]} stub")
        else:
            if code != SLED_NOP:
                fail(cfg, f"sled {i} at {site:#x} ({where}) holds {code!r}, not the nop")
            if site % 8 > 3:
                fail(cfg, f"sled {i} at {site:#x} straddles an 8-byte boundary")
            sleds.append(site)
        if stub not in targets:
            fail(cfg, f"sled {i} at {site:#x} names {stub:#x}, not a stub of the map")
        reached.add(stub)
    return reached, sleds, rets


def check_sled_insns(cfg, elf, starts, sleds):
    """(d) each sled is the end of one instruction, which begins with at most 4 CS prefixes
    (0x2e) where the sled would otherwise straddle 8 bytes: no alignment nop of its own, and
    nothing that arming's 5-byte store could cut in two."""
    starts = sorted(starts)
    for site in sleds:
        i = bisect.bisect_right(starts, site) - 1
        if i < 0:
            fail(cfg, f"sled at {site:#x} is outside the disassembled code")
            continue
        at = starts[i]
        pre = (elf.bytes_at(at, site - at) or b"?") if site > at else b""
        if site - at > 4 or pre.strip(b"\x2e"):
            fail(cfg, f"sled at {site:#x} is inside the instruction at {at:#x}, not the end of a "
                      f"prefixed nop ({pre.hex()})")
        if i + 1 < len(starts) and starts[i + 1] < site + 5:
            fail(cfg, f"an instruction starts at {starts[i + 1]:#x}, inside the sled at {site:#x}")


def check_calls(cfg, elf, entries, targets, slots, expect, early, reached=None, sleds=()):
    """every entry stub is called from code (the asm call survived the optimiser) or, with
    sleds, reached by a sled of the table; with sleds no code calls a stub until armed."""
    out = run(["objdump", "-d", "--no-show-raw-insn", elf.path])
    called = set()
    cur = None
    funcs = []  # per function: list of (addr, text)
    for line in out.splitlines():
        m = re.match(r"Disassembly of section (\S+):", line)
        if m:
            cur = m.group(1)
            continue
        if cur == "ptcall_stubs":
            continue
        if re.match(r"[0-9a-f]+ <.*>:$", line):
            funcs.append([])
            continue
        m = re.match(r"\s*([0-9a-f]+):\s+(.*)$", line)
        if m and funcs:
            funcs[-1].append((int(m.group(1), 16), m.group(2)))
    if sleds:
        check_sled_insns(cfg, elf, [addr for ins in funcs for addr, _ in ins], sleds)
    for ins in funcs:
        for addr, text in ins:
            m = re.match(r"call\S*\s+([0-9a-f]+)\b", text)
            if not m or int(m.group(1), 16) not in targets:
                continue
            t = int(m.group(1), 16)
            called.add(t)
            if reached is not None:
                fail(cfg, f"stub {t:#x} {targets[t]} called at {addr:#x} although sites are sleds")
    if reached is not None:
        called = reached
    # an inline (linkonce_odr) function emitted by several units keeps one body at link time
    # but every unit's stubs: at least one entry stub per function name must be called
    by_name = {}
    for t, (fn, kind, site) in targets.items():
        if kind == "entry":
            by_name.setdefault(fn, []).append(t)
    missing = [fn for fn, ts in by_name.items() if not any(t in called for t in ts)]
    if early:
        # early placement describes functions the optimiser later deleted (inlined
        # everywhere, or unused linkonce_odr): only the expected functions must be called
        missing = [fn for fn in missing if fn.split("(")[0] in expect]
    if missing:
        fail(cfg, f"entry stubs never called: {missing[:8]}")
    return called


def check_nocyg(cfg, elf):
    out = run(["nm", "-a", elf.path])
    if "__cyg_profile" in out:
        fail(cfg, "__cyg_profile_* reference left in the binary")


def check_binary(cfg, path, expect, absent, flags_want, cet=False, want_kinds=(), nblobs=None,
                 lto=False):
    elf = Elf(path)
    for need in ("ptcall_stubs", "ptcall_map"):
        if need not in elf.sections:
            fail(cfg, f"section {need} missing")
            return
    nslots = check_stubs(cfg, elf, cet)
    check_dynrelocs(cfg, elf)
    entries, targets, slots, tables, leaves = check_map(cfg, elf, expect, absent, flags_want,
                                                        nslots, nblobs)
    reached, sleds, rets = (check_sleds(cfg, elf, tables, targets) if flags_want & F_SLEDS
                            else (None, [], 0))
    # exits before a plain ret move behind it wherever the code generator ran in the compiler
    # (not under LTO, where the linker generates the code and the IR sleds stay)
    if flags_want & F_RET and not lto and not rets:
        fail(cfg, "no ret sleds although exits and sleds are on")
    called = check_calls(cfg, elf, entries, targets, slots, expect, bool(flags_want & F_EARLY),
                         reached, sleds)
    check_nocyg(cfg, elf)
    kinds = {}
    for t, (fn, kind, site) in targets.items():
        kinds.setdefault(kind, 0)
        kinds[kind] += 1
    for k in want_kinds:
        if not kinds.get(k):
            fail(cfg, f"no {k} stubs in the map ({kinds})")
        elif not any(targets[t][1] == k and t in called for t in targets):
            fail(cfg, f"no {k} stub is called from code")
    print(f"ok   [{cfg}] {len(targets)} stubs {kinds}, {len(entries)} functions, "
          f"{len(leaves)} leaves, {rets} ret sleds")


def main():
    build, src, work = sys.argv[1:4]
    flt = sys.argv[4] if len(sys.argv) > 4 else ""
    cc = os.path.join(build, "bin", "ptcall-cc")
    cxx = os.path.join(build, "bin", "ptcall-c++")
    inc = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(src))), "include")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("PTCALL_"):
            del env[k]
    env["PTCALL_NO_RUNTIME"] = "1"
    lld = shutil.which(os.path.join(os.environ.get("PTCALL_LLVM_BIN", "/usr/lib/llvm-14/bin"), "ld.lld")) or shutil.which("ld.lld")

    configs = [
        ("O0", ["-O0"], F_EXITS),
        ("O1", ["-O1"], F_EXITS),
        ("O2", ["-O2"], F_EXITS),
        ("O3", ["-O3"], F_EXITS),
        ("O2-g", ["-O2", "-g"], F_EXITS),
        ("O2-early", ["-O2", "-fptcall-placement=early"], F_EXITS | F_EARLY),
        ("O2-noexits", ["-O2", "-fptcall-no-exits"], 0),
        ("O2-ungated", ["-O2", "-fptcall-ungated"], F_EXITS | F_UNGATED),
        ("O2-cet", ["-O2", "-fcf-protection=full"], F_EXITS | F_CET),
        ("O2-pie", ["-O2", "-fPIE", "-pie"], F_EXITS),
        ("O2-nopie", ["-O2", "-fno-pic", "-no-pie"], F_EXITS),
        ("O2-fsections-gc", ["-O2", "-ffunction-sections", "-fdata-sections",
                             "-Wl,--gc-sections"], F_EXITS),
        # MergeFunctions must not fold the (otherwise identical) stubs
        ("O2-mergefunc", ["-O2", "-Xclang", "-fmerge-functions"], F_EXITS),
    ]
    if shutil.which("ld.gold"):
        configs += [
            ("O2-gold-gc", ["-O2", "-fuse-ld=gold", "-ffunction-sections", "-Wl,--gc-sections"],
             F_EXITS),
        ]
    if lld:
        configs += [
            ("O2-flto-lld", ["-O2", "-flto", "-fuse-ld=lld"], F_EXITS),
            ("O2-thinlto-lld", ["-O2", "-flto=thin", "-fuse-ld=lld"], F_EXITS),
            ("O0-flto-lld", ["-O0", "-flto", "-fuse-ld=lld"], F_EXITS),
            ("O2-lld-gc", ["-O2", "-fuse-ld=lld", "-ffunction-sections", "-Wl,--gc-sections"],
             F_EXITS),
            # identical code folding must not fold the ptcall_stubs sections of two units
            ("O2-lld-icf", ["-O2", "-fuse-ld=lld", "-ffunction-sections", "-Wl,--icf=all"],
             F_EXITS),
            ("O2-flto-mergefunc-lld", ["-O2", "-flto", "-fuse-ld=lld", "-Xclang",
                                       "-fmerge-functions"], F_EXITS),
        ]
    else:
        print("note: ld.lld not found, LTO configurations skipped")

    progs = [
        ("c", cc, ["prog.c", "prog2.c", "prog3.c"], C_EXPECT, C_ABSENT, ["exit", "landing"]),
        ("c++", cxx, ["prog.cpp", "prog2.cpp"], CXX_EXPECT, [], ["exit", "landing", "unwind"]),
    ]
    for lang, drv, sources, expect, absent, kinds in progs:
        for name, flags, fl in configs:
            cfg = f"{lang} {name}"
            if flt and flt not in cfg:
                continue
            exe = os.path.join(work, f"{lang}-{name}".replace("+", "x"))
            try:
                # two-step (compile, then link) for half the configurations, one step otherwise
                paths = [os.path.join(src, s) for s in sources]
                if name in ("O1", "O3", "O2-flto-lld", "O2-thinlto-lld"):
                    objs = []
                    for i, p in enumerate(paths):
                        objs.append(f"{exe}.{i}.o")
                        run([drv, "-I", inc] + flags + ["-c", p, "-o", objs[-1]], env=env)
                    run([drv] + flags + objs + ["-o", exe], env=env)
                else:
                    run([drv, "-I", inc] + flags + paths + ["-o", exe], env=env)
                out = run([exe], env=env)
                if "total=" not in out:
                    fail(cfg, f"unexpected output {out!r}")
            except RuntimeError as e:
                fail(cfg, str(e))
                continue
            want = list(kinds) if fl & F_EXITS else []
            fl = (fl & ~F_UNGATED if fl & F_UNGATED else fl | F_SLEDS) | F_R11 | F_R10
            if fl & F_SLEDS and fl & F_EXITS:
                fl |= F_RET
            check_binary(cfg, exe, expect, absent, fl, cet=bool(fl & F_CET), want_kinds=want,
                         nblobs=len(sources), lto="-flto" in " ".join(flags))

    # shared object + executable, both instrumented: each has its own stubs and map
    for name, flags in (("shared-O2", ["-O2"]), ("shared-O0", ["-O0"]),
                        ("shared-O2-flto-lld", ["-O2", "-flto", "-fuse-ld=lld"] if lld else None)):
        if flags is None or (flt and flt not in name):
            continue
        so = os.path.join(work, f"lib{name}.so")
        exe = os.path.join(work, f"main-{name}")
        try:
            run([cc] + flags + ["-shared", "-fPIC", os.path.join(src, "lib.c"), "-o", so], env=env)
            run([cc] + flags + [os.path.join(src, "libmain.c"), so, "-o", exe,
                                "-Wl,-rpath," + work], env=env)
            run([exe], env=env)
        except RuntimeError as e:
            fail(name, str(e))
            continue
        both = F_EXITS | F_SLEDS | F_R11 | F_R10 | F_RET
        lto = "-flto" in flags
        check_binary(name + " lib", so, LIB_EXPECT, [], both, want_kinds=["exit"], nblobs=1,
                     lto=lto)
        check_binary(name + " exe", exe, ["main"], [], both, want_kinds=["exit"], nblobs=1,
                     lto=lto)
        # each object binds its own section bounds at static link time: no dynamic
        # relocation names them, and none is exported with default visibility
        for obj in (so, exe):
            rel = run(["readelf", "-rW", obj])
            if re.search(r"__(start|stop)_ptcall_", rel):
                fail(name, f"dynamic relocation against section bounds in {obj}:\n{rel}")
            for line in run(["readelf", "--dyn-syms", "-W", obj]).splitlines():
                if re.search(r"__(start|stop)_ptcall_", line) and "HIDDEN" not in line:
                    fail(name, f"section bound exported from {obj}: {line}")

    if failures:
        print(f"\n{len(failures)} failure(s)")
        return 1
    print("\nall pass-e2e checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
