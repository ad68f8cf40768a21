#!/usr/bin/env python3
"""pt-perf-data-real: `ptcall import --perf-data` on files the real `perf` wrote, and on
hostile edits of them.

  perf_data_real.py PTCALL WORKDIR

This machine's `perf record` (no Intel PT here: software events cpu-clock, task-clock,
page-faults) writes real headers and attribute tables: one, two and three events. The reader
must walk the attribute table at perf's stride (attr_size already includes the 16-byte ids
section: a three-event file read at the wrong stride misreads the third event's sample
layout) and say that the file holds no Intel PT data. A pipe-mode file (perf record -o -)
must be named as such. Hostile edits (attribute size 0, sections past the end, a record of
size 0, an AUXTRACE record whose size is 2^63, an AUXTRACE_INFO whose time_shift is 70) must
each give exit status 1 and one line saying what is wrong -- never a signal, a hang or
undefined behaviour (the sanitizer build runs this too).
"""
import os
import shutil
import struct
import subprocess
import sys

fails = 0


def check(ok, what):
    global fails
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        fails += 1


def perf_record(out, events, pipe=False):
    cmd = ["perf", "record", "-q"] + [x for e in events for x in ("-e", e)]
    cmd += ["-o", "-" if pipe else out, "--", "true"]
    with open(out, "wb") if pipe else open(os.devnull, "wb") as f:
        p = subprocess.run(cmd, stdout=f if pipe else subprocess.DEVNULL, stderr=subprocess.PIPE)
    return p.returncode == 0 and os.path.getsize(out) > 0


def imp(ptcall, work, data):
    try:
        p = subprocess.run([ptcall, "import", "-o", os.path.join(work, "out.ptc"), "--perf-data", data],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=20)
        return p.returncode, p.stderr.strip()
    except subprocess.TimeoutExpired:
        return "timeout", ""


def edited(src, dst, edit):
    b = bytearray(open(src, "rb").read())
    edit(b)
    with open(dst, "wb") as f:
        f.write(b)
    return dst


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    ptcall, work = sys.argv[1:3]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    if not shutil.which("perf"):
        print("SKIP: perf is not installed (Debian: linux-perf)")
        return 0
    files = {}
    for n, evs in ((1, ["cpu-clock"]), (2, ["cpu-clock", "task-clock"]),
                   (3, ["cpu-clock", "task-clock", "page-faults"])):
        f = os.path.join(work, "real-%d.data" % n)
        if not perf_record(f, evs):
            print("SKIP: perf record cannot record here (perf_event_paranoid?)")
            return 0
        files[n] = f
    for n, f in files.items():
        b = open(f, "rb").read()
        attr_size, asz = struct.unpack_from("<Q", b, 16)[0], struct.unpack_from("<Q", b, 32)[0]
        check(asz == n * attr_size, "perf wrote %d event(s): %d-byte table, %d-byte entries (ids included)"
              % (n, asz, attr_size))
        rc, err = imp(ptcall, work, f)
        check(rc == 1 and "holds no PERF_RECORD_AUXTRACE_INFO" in err,
              "%d event(s): read whole, no Intel PT in it, said: %s" % (n, err))
    pipe = os.path.join(work, "pipe.data")
    if perf_record(pipe, ["cpu-clock"], pipe=True):
        rc, err = imp(ptcall, work, pipe)
        check(rc == 1 and "pipe mode" in err, "a pipe-mode file is named as such: %s" % err)

    base = files[3]
    data_off, data_size = struct.unpack_from("<QQ", open(base, "rb").read(), 40)
    hostile = [
        ("attribute size 0", lambda b: struct.pack_into("<Q", b, 16, 0), "attribute table"),
        ("attribute table past the end", lambda b: struct.pack_into("<Q", b, 24, 1 << 63),
         "past the end"),
        ("attribute table size past the end", lambda b: struct.pack_into("<Q", b, 32, (1 << 64) - 8),
         "past the end"),
        ("a record of size 0", lambda b: struct.pack_into("<IHH", b, data_off, 9, 0, 0),
         "shorter than its 8-byte header (the record at file offset %d)" % data_off),
        # fuzz_perf_data: an AUXTRACE record without data (the reader added 0 bytes to no
        # buffer: NULL + 0, undefined behaviour the sanitizer build reports)
        ("an AUXTRACE record without data",
         lambda b: (struct.pack_into("<IHH", b, data_off, 71, 0, 48),
                    struct.pack_into("<Q", b, data_off + 8, 0)),
         "is corrupt"),
        ("an AUXTRACE record of 2^63 bytes",
         lambda b: (struct.pack_into("<IHH", b, data_off, 71, 0, 48),
                    struct.pack_into("<Q", b, data_off + 8, 1 << 63)),
         "runs past the data section"),
    ]
    feat0 = struct.unpack_from("<Q", open(base, "rb").read(), 72)[0]
    if feat0 >> 9 & 1:
        # fuzz_perf_data: a HEADER_CPUID section whose offset + size wraps around 2^64 passed
        # the bounds check and was read from far outside the file
        def cpuid_wraps(b):
            pos = data_off + data_size + 16 * bin(feat0 & 0x1ff).count("1")
            struct.pack_into("<QQ", b, pos, 1 << 63, (1 << 63) + 8)
        hostile.append(("a HEADER_CPUID section that wraps around", cpuid_wraps,
                        "holds no PERF_RECORD_AUXTRACE_INFO"))
    if data_size >= 16 + 8 * 17:
        def info(b):
            struct.pack_into("<IHH", b, data_off, 70, 0, 16 + 8 * 17)
            struct.pack_into("<II", b, data_off + 8, 1, 0)
            struct.pack_into("<17Q", b, data_off + 16, 8, 70, 1, 0, 1, 1 << 10, 1 << 11, 0, 0, 1,
                             1 << 9, 0xf << 14, 40, 1, 1 << 1, 24, 0)
        hostile.append(("an AUXTRACE_INFO time_shift of 70", info, "time_shift is 70"))

        # fuzz_perf_data: an MTC period mask wider than MTCFreq's 4 bits read a period of
        # 64, which the trace written from it then could not be decoded with
        def wide_mtc(b):
            info(b)
            struct.pack_into("<Q", b, data_off + 16 + 8 * 1, 10)          # time_shift 10
            struct.pack_into("<Q", b, data_off + 16 + 8 * 11, 0xff << 14)  # MTC_FREQ_BITS
            attrs = struct.unpack_from("<Q", b, 24)[0]  # the first event: intel_pt's type
            struct.pack_into("<I", b, attrs, 8)
            struct.pack_into("<Q", b, attrs + 8, 0x40 << 14)
        hostile.append(("an MTC period mask of 8 bits", wide_mtc, "MTC period"))
    for name, edit, want in hostile:
        f = edited(base, os.path.join(work, "hostile.data"), edit)
        rc, err = imp(ptcall, work, f)
        check(rc == 1 and want in err and "\n" not in err, "%s: exit 1, one line: %s" % (name, err))
    print("pt-perf-data-real: %d failure(s)" % fails)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
