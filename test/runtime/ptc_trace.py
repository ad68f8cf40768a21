#!/usr/bin/env python3
"""Minimal, independent reader of ptcall trace files (include/ptcall/trace_format.h) for the
runtime tests. Checks the framing strictly (magic, chunk sizes, padding, CRC, per-stream seq
from 0 without gaps) and decodes the chunks the software backend writes.

    python3 ptc_trace.py FILE            # summary per process and thread
    python3 ptc_trace.py --events FILE   # plus one line per event: pid tid func kind
"""
import struct
import sys
import zlib

CHUNK_NAMES = {1: "RECORD_INFO", 2: "PROCESS", 3: "TIMEBASE", 4: "MODULE", 5: "MODULE_UNLOAD",
               6: "THREAD", 7: "SOFT_EVENTS", 8: "LOSS", 9: "PROCESS_END", 10: "RECORD_END",
               11: "MODULE_ARMED", 23: "MODULE_BLOCKING"}
# 4 (PTC_STUB_CALL): a leaf's entry that stands for its return as well (untimed soft)
KINDS = {0: "E", 1: "X", 2: "U", 3: "L", 4: "C"}


class TraceError(Exception):
    pass


def varint(b, p):
    v = 0
    shift = 0
    while True:
        if p >= len(b) or shift > 63:
            raise TraceError("truncated varint")
        x = b[p]
        p += 1
        v |= (x & 0x7F) << shift
        shift += 7
        if not x & 0x80:
            return v, p


def unzigzag(v):
    return (v >> 1) ^ -(v & 1)


class Process:
    def __init__(self, pid):
        self.pid = pid
        self.info = None
        self.exe = None
        self.timebase = None
        self.modules = {}      # module_id -> dict
        self.stubs = {}        # stub id -> (func name, kind, module_id)
        self.unloaded = []
        self.threads = {}      # tid -> Thread
        self.end = None
        self.losses = []
        self.old_threads = []  # earlier threads whose tid was reused

    def names(self, tid):
        """Thread tid's events as 'func:E' / 'func:X' strings and control tuples."""
        out = []
        for ev, _ in self.threads[tid].events:
            if isinstance(ev, tuple):
                out.append(ev)
            else:
                f, k, _ = self.stubs[ev]
                if k == "C":
                    out += ["%s:E" % f, "%s:X" % f]
                else:
                    out.append("%s:%s" % (f, k))
        return out


class Thread:
    def __init__(self, tid):
        self.tid = tid
        self.start = None
        self.exit = None
        self.name = None
        self.events = []       # (stub id or control tuple, tsc)
        self.hits = 0
        self.loss = 0          # hits reported lost by LOSS control records
        self.forks = []
        self.chunks = 0
        self.bytes = 0         # encoded event bytes (payload after the fixed part)


class Trace:
    def __init__(self, path, keep_events=True):
        self.path = path
        self.procs = {}
        self.record_info = None
        self.record_end = None
        self.header = None
        self.chunk_counts = {}
        self.keep_events = keep_events
        self.order = []        # (type, pid, tid) in file order
        self.images = []       # processes replaced by exec (earlier images)
        self._read()

    def proc(self, pid):
        if pid not in self.procs:
            self.procs[pid] = Process(pid)
        return self.procs[pid]

    def _read(self):
        data = open(self.path, "rb").read()
        if len(data) < 64 or data[:8] != b"PTCALLTR":
            raise TraceError("bad file header")
        major, minor, hsize, created, backend, flags = struct.unpack_from("<HHIQII", data, 8)
        if major not in (1, 2) or hsize != 64:
            raise TraceError("bad version or header size")
        self.header = dict(backend=backend, flags=flags)
        p = 64
        seqs = {}
        while p < len(data):
            if len(data) - p < 24:
                raise TraceError("truncated chunk header at %d" % p)
            typ, cflags, size, pid, tid, seq, crc = struct.unpack_from("<HHIIIII", data, p)
            payload = data[p + 24:p + 24 + size]
            if len(payload) != size:
                raise TraceError("truncated payload at %d" % p)
            # format 2: the CRC goes on over the header's first 20 bytes
            want = zlib.crc32(payload)
            if major >= 2:
                want = zlib.crc32(data[p:p + 20], want)
            if want != crc:
                raise TraceError("CRC mismatch in chunk at %d (type %d)" % (p, typ))
            pad = (8 - size % 8) % 8
            if data[p + 24 + size:p + 24 + size + pad] != b"\0" * pad:
                raise TraceError("non-zero padding at %d" % p)
            if seq == 0 and (pid, tid) in seqs and (
                    (typ == 2 and tid == 0) or
                    (typ == 6 and struct.unpack_from("<I", payload, 0)[0] == 1)):
                # a new life of the stream: PROCESS (exec / pid reuse) restarts every stream of
                # the pid, THREAD start a reused tid (docs/trace-format.md 4.2, 4.6)
                for k in [k for k in seqs if k[0] == pid and (typ == 2 or k[1] == tid)]:
                    del seqs[k]
                if typ == 6 and pid in self.procs and tid in self.procs[pid].threads:
                    self.procs[pid].old_threads.append(self.procs[pid].threads.pop(tid))
            want = seqs.get((pid, tid), 0)
            if seq != want:
                raise TraceError("stream (%d,%d): seq %d, expected %d (type %s)"
                                 % (pid, tid, seq, want, CHUNK_NAMES.get(typ, typ)))
            seqs[(pid, tid)] = seq + 1
            self.chunk_counts[typ] = self.chunk_counts.get(typ, 0) + 1
            self.order.append((typ, pid, tid))
            self._chunk(typ, pid, tid, payload)
            p += 24 + size + pad

    def _chunk(self, typ, pid, tid, b):
        if typ == 1:
            backend, flags, start_ns, argc, _ = struct.unpack_from("<IIQII", b, 0)
            args = b[24:].split(b"\0")[:argc]
            self.record_info = dict(backend=backend, flags=flags, argv=[a.decode() for a in args])
        elif typ == 10:
            ws, flags, wall, child, _ = struct.unpack_from("<iIQII", b, 0)
            cpu = struct.unpack_from("<Q", b, 24)[0] if len(b) >= 32 else None  # minor 7
            self.record_end = dict(wait_status=ws, wall_ns=wall, child_pid=child, cpu_ns=cpu)
        elif typ == 2:
            ppid, how, ptid, flags, tsc, tns = struct.unpack_from("<IIIIQQ", b, 0)
            pr = self.proc(pid)
            if pr.info is not None:
                # a new image after exec: same pid, the old image ended with PROCESS_END(exec)
                if how != 3 or not pr.end or pr.end["how"] != 2:
                    raise TraceError("second PROCESS chunk for pid %d" % pid)
                self.images.append(pr)
                pr = self.procs[pid] = Process(pid)
            pr.info = dict(ppid=ppid, how=how, parent_tid=ptid, flags=flags, tsc=tsc)
            pr.exe = b[32:].split(b"\0")[0].decode()
        elif typ == 3:
            src, shift, _, mult, _, zero, hz = struct.unpack_from("<IHHIIQQ", b, 0)
            self.proc(pid).timebase = dict(source=src, shift=shift, mult=mult, zero=zero, hz=hz)
        elif typ == 4:
            (mid, first, nst, nfn, bias, s0, s1, ident, path, ssz) = struct.unpack_from(
                "<IIIIQQQQII", b, 0)
            o = 56
            stubs = [struct.unpack_from("<QIHH", b, o + 16 * i) for i in range(nst)]
            o += 16 * nst
            funcs = [struct.unpack_from("<IIII", b, o + 16 * i) for i in range(nfn)]
            o += 16 * nfn
            strs = b[o:o + ssz]
            if len(strs) != ssz or (ssz and strs[-1] != 0):
                raise TraceError("bad module strings")

            def s(off):
                if off >= ssz:
                    raise TraceError("module string offset out of range")
                return strs[off:strs.index(b"\0", off)].decode()
            pr = self.proc(pid)
            if pr.info is None:
                raise TraceError("MODULE before PROCESS for pid %d" % pid)
            names = [s(f[0]) for f in funcs]
            for i, st in enumerate(stubs):
                if not (s0 <= st[0] < s1) or (st[0] - s0) % 16:
                    raise TraceError("stub address outside the module's stub range")
                if st[1] >= nfn:
                    raise TraceError("stub function index out of range")
                pr.stubs[first + i] = (names[st[1]], KINDS.get(st[2], "?"), mid)
            pr.modules[mid] = dict(first=first, num_stubs=nst, num_funcs=nfn, path=s(path),
                                   identity=ident, funcs=names, bias=bias)
        elif typ == 5:
            mid, _, tsc = struct.unpack_from("<IIQ", b, 0)
            self.proc(pid).unloaded.append(mid)
        elif typ == 6:
            ev, _, tsc, events, dropped, waits, wait_ns = struct.unpack_from("<IIQQQQQ", b, 0)
            name = b[48:].split(b"\0")[0].decode()
            th = self.proc(pid).threads.setdefault(tid, Thread(tid))
            if ev == 1:
                if th.start is not None:
                    raise TraceError("second THREAD start for %d/%d" % (pid, tid))
                th.start = tsc
            elif ev == 2:
                if th.exit is not None:
                    raise TraceError("second THREAD exit for %d/%d" % (pid, tid))
                th.exit = dict(events=events, dropped=dropped, waits=waits, wait_ns=wait_ns)
            th.name = name
        elif typ == 7:
            start, end, nrec, flags = struct.unpack_from("<QQII", b, 0)
            pr = self.proc(pid)
            th = pr.threads.setdefault(tid, Thread(tid))
            if th.start is None:
                raise TraceError("SOFT_EVENTS before THREAD start for %d/%d" % (pid, tid))
            if th.exit is not None:
                raise TraceError("SOFT_EVENTS after THREAD exit for %d/%d" % (pid, tid))
            th.chunks += 1
            th.bytes += len(b) - 24
            timed = flags & 1
            p = 24
            tsc = start
            for _ in range(nrec):
                v, p = varint(b, p)
                if v >= 16:
                    sid = v - 16
                    if sid not in pr.stubs:
                        raise TraceError("unknown stub id %d in %d/%d" % (sid, pid, tid))
                    ev = sid
                    th.hits += 1
                elif v == 0:
                    n, p = varint(b, p)
                    th.loss += n
                    ev = ("LOSS", n)
                elif v == 1:
                    child, p = varint(b, p)
                    th.forks.append(child)
                    ev = ("FORK", child)
                else:
                    raise TraceError("unknown control record %d" % v)
                if timed:
                    d, p = varint(b, p)
                    tsc += unzigzag(d)
                if self.keep_events:
                    th.events.append((ev, tsc))
            if p != len(b):
                raise TraceError("SOFT_EVENTS: %d bytes after the last record" % (len(b) - p))
        elif typ == 8:
            kind, ltid, count, t0, t1 = struct.unpack_from("<IIQQQ", b, 0)
            self.proc(pid).losses.append(dict(kind=kind, tid=ltid, count=count,
                                              note=b[32:].split(b"\0")[0].decode()))
        elif typ == 9:
            how, status, tsc, events, dropped, waits = struct.unpack_from("<IiQQQQ", b, 0)
            pr = self.proc(pid)
            if pr.end is not None:
                raise TraceError("second PROCESS_END for %d" % pid)
            pr.end = dict(how=how, status=status, events=events, dropped=dropped, waits=waits)
        elif typ in CHUNK_NAMES:
            pass
        else:
            raise TraceError("unknown chunk type %d" % typ)

    def names(self, pid, tid):
        return self.procs[pid].names(tid)


def main():
    args = sys.argv[1:]
    events = "--events" in args
    args = [a for a in args if a != "--events"]
    t = Trace(args[0], keep_events=events)
    print("chunks:", {CHUNK_NAMES.get(k, k): v for k, v in sorted(t.chunk_counts.items())})
    for pid, pr in t.procs.items():
        if pid == 0:
            continue
        print("process %d: %s how=%s end=%s modules=%d" % (
            pid, pr.exe, pr.info and pr.info["how"], pr.end, len(pr.modules)))
        for tid, th in pr.threads.items():
            print("  thread %d %s: hits=%d loss=%d chunks=%d bytes=%d exit=%s" % (
                tid, th.name, th.hits, th.loss, th.chunks, th.bytes, th.exit))
            if events:
                for e in t.names(pid, tid):
                    print("    ", e)


if __name__ == "__main__":
    main()
