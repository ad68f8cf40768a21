"""A second, independent reader of the chunk layer of ptcall's trace format (docs/trace-format.md
sections 1-4), for the checks of the end-to-end tests: which processes a trace holds and how
they began and ended (PROCESS how: START, ..., ATTACH, SNAPSHOT; PROCESS_END how: ..., DETACH,
SNAPSHOT) and what its SNAPSHOT chunks say (kind, thread, signal, address, why). It checks the
magic, sizes and padding; CRCs and event payloads are the reference reader's business
(`ptcall report`)."""
import struct

CHUNK_PROCESS, CHUNK_PROCESS_END, CHUNK_SNAPSHOT, CHUNK_WINDOW = 2, 9, 16, 18
PROC_HOW = {1: "start", 2: "fork", 3: "exec", 4: "attach", 5: "snapshot"}
END_HOW = {1: "exit", 2: "exec", 3: "signal", 4: "_exit", 5: "detach", 6: "snapshot"}
SNAP_KIND = {1: "api", 2: "external", 3: "crash", 4: "trigger"}


class FormatError(Exception):
    pass


def chunks(path):
    """(type, flags, pid, tid, seq, payload) of every chunk of the file, in file order."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 64 or data[:8] != b"PTCALLTR":
        raise FormatError("%s: not a ptcall trace file" % path)
    off = struct.unpack_from("<I", data, 12)[0]
    out = []
    while off < len(data):
        if off + 24 > len(data):
            raise FormatError("%s: truncated in a chunk header at byte %d" % (path, off))
        typ, flags, size, pid, tid, seq, _crc = struct.unpack_from("<HHIIIII", data, off)
        end = off + 24 + size
        if typ == 0 or end > len(data):
            raise FormatError("%s: bad chunk (type %d, %d bytes) at byte %d" % (path, typ, size, off))
        out.append((typ, flags, pid, tid, seq, data[off + 24:end]))
        off = end + (8 - size % 8) % 8
    return out


def summary(path):
    """{"processes": [{pid, how, time_ns, end}], "snapshots": [{pid, kind, tid, signo, addr, why}],
    "windows": number of WINDOW chunks} of one trace file."""
    procs, snaps, windows = {}, [], 0
    order = []
    for typ, _flags, pid, tid, _seq, p in chunks(path):
        if typ == CHUNK_PROCESS and len(p) >= 32:
            how = struct.unpack_from("<I", p, 4)[0]
            procs[pid] = {"pid": pid, "how": PROC_HOW.get(how, how), "time_ns": struct.unpack_from("<Q", p, 24)[0],
                          "end": None}
            order.append(pid)
        elif typ == CHUNK_PROCESS_END and len(p) >= 4 and pid in procs:
            how = struct.unpack_from("<I", p, 0)[0]
            procs[pid]["end"] = END_HOW.get(how, how)
        elif typ == CHUNK_SNAPSHOT and len(p) >= 32:
            kind, stid, _tsc, signo, _res, addr = struct.unpack_from("<IIQiIQ", p, 0)
            why = p[32:].split(b"\0", 1)[0].decode(errors="replace")
            snaps.append({"pid": pid, "kind": SNAP_KIND.get(kind, kind), "tid": stid, "signo": signo, "addr": addr,
                          "why": why})
        elif typ == CHUNK_WINDOW:
            windows += 1
    return {"processes": [procs[p] for p in order], "snapshots": snaps, "windows": windows}
