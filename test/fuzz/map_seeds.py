#!/usr/bin/env python3
"""Seeds for fuzz_map: objects the suite builds, as the loader lays them out.

  map_seeds.py OUTDIR OBJECT...

For every ELF object with a ptcall_map section: its PT_LOAD segments placed by virtual address
from the lowest one (bytes past a segment's file size are zero, as the loader leaves them),
so that the map's relative fields (stubs, the soft-handler slot, the call-site table) resolve
inside the image as they do in the process; then a 16-byte header (fuzz_map.c): the offsets
and sizes, in the image, of ptcall_map and ptcall_stubs. Objects without a map are skipped;
the number of seeds written is printed.
"""
import os
import struct
import sys

LIMIT = 1 << 20  # larger images would make slow fuzz inputs


def sections(b):
    shoff, = struct.unpack_from("<Q", b, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 0x3a)
    hdrs = [struct.unpack_from("<IIQQQQIIQQ", b, shoff + i * shentsize) for i in range(shnum)]
    strtab = hdrs[shstrndx]
    out = {}
    for h in hdrs:
        start = strtab[4] + h[0]
        name = b[start:b.index(b"\0", start)].decode("latin-1")
        out[name] = h  # name, type, flags, addr, offset, size, ...
    return out


def image(path):
    b = open(path, "rb").read()
    if b[:4] != b"\x7fELF" or b[4] != 2 or b[5] != 1:
        return None
    sec = sections(b)
    if "ptcall_map" not in sec or "ptcall_stubs" not in sec:
        return None
    phoff, = struct.unpack_from("<Q", b, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", b, 0x36)
    loads = []
    for i in range(phnum):
        p_type, _, off, vaddr, _, filesz, memsz, _ = struct.unpack_from("<IIQQQQQQ", b, phoff + i * phentsize)
        if p_type == 1:
            loads.append((vaddr, off, filesz, memsz))
    if not loads:
        return None
    lo = min(v for v, _, _, _ in loads)
    hi = max(v + m for v, _, _, m in loads)
    if hi - lo > LIMIT:
        return None
    img = bytearray(hi - lo)
    for v, off, fs, _ in loads:
        img[v - lo:v - lo + fs] = b[off:off + fs]
    m, s = sec["ptcall_map"], sec["ptcall_stubs"]
    hdr = struct.pack("<IIII", m[3] - lo, m[5], s[3] - lo, (s[5] + 15) & ~15)
    return hdr + bytes(img)


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    n = 0
    for path in sys.argv[2:]:
        try:
            seed = image(path)
        except (OSError, struct.error, ValueError, IndexError):
            seed = None
        if seed:
            with open(os.path.join(out, "map-%d-%s" % (n, os.path.basename(path))), "wb") as f:
                f.write(seed)
            n += 1
    print("map_seeds: %d seed(s) from %d object(s)" % (n, len(sys.argv) - 2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
