"""A small writer of the chunks a trace recorded within a budget adds (issue 28): MODULE_COUNTED,
COUNTS (flags END, PILOT) and BUDGET, into a copy of a real soft trace. It encodes the format as
docs/trace-format.md 2.5 states it (include/ptcall/trace_format.h: struct ptc_module_counted,
struct ptc_counts, struct ptc_budget; the chunk CRC of section 3), while the runtime that writes
such traces (MIXED, record --overhead) is being written: the end-to-end check on real mixed
traces comes with it. test/real/ptc_chunks.py reads the chunks."""
import struct
import sys
import zlib
import os

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "real"))
import ptc_chunks  # noqa: E402

MODULE, MODULE_UNLOAD, THREAD, SOFT_EVENTS, PROCESS_END, MODULE_ARMED, COUNTS = 4, 5, 6, 7, 9, 11, 12
BUDGET, MODULE_COUNTED = 19, 20
F_OPTIONAL = 0x1
COUNTS_END, COUNTS_PILOT = 0x2, 0x8
KIND_OVERHEAD, SRC_PILOT = 1, 1


def chunk(typ, pid, tid, seq, payload, flags=F_OPTIONAL):
    """One chunk: header, payload, zero padding to 8 bytes; CRC of the payload then of the 20
    header bytes before the CRC field (format 2.x)."""
    head = struct.pack("<HHIIII", typ, flags, len(payload), pid, tid, seq)
    crc = zlib.crc32(head, zlib.crc32(payload)) & 0xffffffff
    return head + struct.pack("<I", crc) + payload + b"\0" * ((8 - len(payload) % 8) % 8)


def module_funcs(payload):
    """(module_id, identity, [function display names by index]) of a MODULE chunk."""
    mid, _first, nstubs, nfuncs, _bias, _lo, _hi, ident, _path, ssize = struct.unpack_from("<IIIIQQQQII", payload)
    at = 56 + 16 * nstubs
    strings = payload[at + 16 * nfuncs:at + 16 * nfuncs + ssize]
    names = []
    for i in range(nfuncs):
        off = struct.unpack_from("<I", payload, at + 16 * i)[0]
        names.append(strings[off:strings.index(b"\0", off)].decode())
    return mid, ident, names


def bitmap(n, on):
    b = bytearray((n + 7) // 8)
    for i in on:
        b[i // 8] |= 1 << (i % 8)
    return bytes(b)


def module_counted(mid, nfuncs, counted, reserved=0):
    return struct.pack("<IIII", mid, nfuncs, len(counted), reserved) + bitmap(nfuncs, counted)


def counts(segment, flags, tsc, mid, ident, calls, label=b""):
    return (struct.pack("<IIIIQQ", segment, flags, 1, len(label) + 1, tsc, 0) +
            struct.pack("<IIQ", mid, len(calls), ident) + b"".join(struct.pack("<Q", c) for c in calls) +
            label + b"\0")


def budget(tsc, note, limit=0.05, predicted=0.04, pilot_ns=200000000, candidates=4, traced=3,
           calls_total=0, calls_traced=0, outcome=0, kind=KIND_OVERHEAD, source=SRC_PILOT):
    n = note.encode() + b"\0"
    return (struct.pack("<IIdddddQQQQQQII", kind, source, limit, 0.0, 9.5, 1.2, predicted, tsc, pilot_ns,
                        candidates, traced, calls_total, calls_traced, outcome, len(n)) + n)


def rewrite(src, dst, drop_events, extra_after_armed, extra_before_end):
    """Copies trace src to dst: the first drop_events SOFT_EVENTS chunks of the (one) thread are
    left out and the thread's later chunks renumbered (its events then begin mid-stack, as after
    a pilot); extra_after_armed(chunks) gives (type, payload) chunks to put after MODULE_ARMED
    (process-level, seq renumbered), extra_before_end those before the process's end (its
    first MODULE_UNLOAD or PROCESS_END: the modules are still loaded there). Returns the
    start_tsc of the first event chunk kept."""
    with open(src, "rb") as f:
        head = f.read(64)
    out = [head]
    all_chunks = ptc_chunks.chunks(src)
    dropped, first_kept, seqs, ended = 0, None, {}, False

    def emit(typ, flags, pid, tid, payload):
        key = (pid, tid)
        seq = seqs.get(key, 0)
        seqs[key] = seq + 1
        out.append(chunk(typ, pid, tid, seq, payload, flags))

    for typ, flags, pid, tid, _seq, p in all_chunks:
        if typ == SOFT_EVENTS and dropped < drop_events:
            dropped += 1
            continue
        if typ == SOFT_EVENTS and first_kept is None:
            first_kept = struct.unpack_from("<Q", p, 0)[0]
    for typ, flags, pid, tid, _seq, p in all_chunks:
        if typ == SOFT_EVENTS and drop_events > 0:
            drop_events -= 1
            continue
        if typ in (MODULE_UNLOAD, PROCESS_END) and not ended:
            ended = True
            for t, pl in extra_before_end(all_chunks, first_kept):
                emit(t, F_OPTIONAL, pid, 0, pl)
        emit(typ, flags, pid, tid, p)
        if typ == MODULE_ARMED:
            for t, pl in extra_after_armed(all_chunks, first_kept):
                emit(t, F_OPTIONAL, pid, 0, pl)
    with open(dst, "wb") as f:
        f.write(b"".join(out))
    return first_kept
