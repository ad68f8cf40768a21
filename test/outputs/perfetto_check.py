#!/usr/bin/env python3
"""Checks `ptcall export --format perfetto` against Perfetto's own schema and against
`ptcall report --format json` of the same trace, and `--format speedscope` against
speedscope's file format and the same report.

  perfetto_check.py threads BUILD SRC WORK     (ctest outputs-perfetto)
      Compiles test/e2e/programs/threads.c (five threads: main and four workers calling
      leaf in a loop) with BUILD's ptcall-cc, records it, exports perfetto, decodes it with
      `protoc --decode=perfetto.protos.Trace` against test/third_party/perfetto's
      perfetto_trace.proto (Perfetto's merged proto, vendored), and checks: every packet on a
      sequence (trusted_packet_sequence_id) that starts with SEQ_INCREMENTAL_STATE_CLEARED and
      whose other packets say SEQ_NEEDS_INCREMENTAL_STATE; one process track per pid (its
      name the executable's), one thread track per pid/tid with the thread's name (those of
      the chrome export's metadata, another writer); every name_iid interned on its sequence
      before or in the packet that uses it; timestamps (deltas on the sequence's incremental
      clock, tied to BOOTTIME by its ClockSnapshot) never going back; slices properly nested
      per track; per function, slices = the report's calls and the summed durations of the
      outermost ones = its total within 1 ns per call; the bytes per event. Then ptc_testgen's
      golden trace (a gap with lost events, a repair, landing pads, a fork): still nested, the
      gap and the fork as instants, ends other than by exit annotated.
  perfetto_check.py speedscope BUILD SRC WORK  (ctest outputs-speedscope)
      The same trace exported as speedscope: valid against speedscope's
      file-format-schema.json (web/node_modules/speedscope, python3-jsonschema when installed),
      one evented profile per thread named after it, events in order and nested, frames with
      file and line, per function calls and total as the report's; an untimed trace is
      refused (exit 1, no file) and an existing file left as it was; the golden trace's
      three profiles nested, its gap and losses counted in the file's `ptcall` object.

Exit status: 0 passed, 1 failed, 77 skipped (protoc missing).
"""
import codecs
import json
import os
import shutil
import subprocess
import sys

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)
    return cond


def run(cmd, ok=(0,), **kw):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)
    if p.returncode not in ok:
        print(f"command {cmd!r} exited {p.returncode}: {p.stderr.decode(errors='replace')}")
    return p


# ------------------------------------------------------------------ protoc's text format

def parse_text(text):
    """protoc's text format as nested dicts: each field a list of values (dicts for
    messages, bytes for strings, int, bool or the enum's name)."""
    root, stack = {}, []
    cur = root
    for line in text.split("\n"):
        line = line.strip()
        if not line:
            continue
        if line == "}":
            cur = stack.pop()
        elif line.endswith("{"):
            m = {}
            cur.setdefault(line[:-1].strip(), []).append(m)
            stack.append(cur)
            cur = m
        else:
            k, v = line.split(":", 1)
            v = v.strip()
            if v.startswith('"'):
                val = codecs.escape_decode(v[1:-1].encode("latin-1"))[0]
            elif v in ("true", "false"):
                val = v == "true"
            else:
                try:
                    val = int(v)
                except ValueError:
                    val = v
            cur.setdefault(k, []).append(val)
    return root


def one(m, k, default=None):
    v = m.get(k)
    return v[0] if v else default


def decode(src, path):
    proto_dir = os.path.join(src, "test", "third_party", "perfetto")
    with open(path, "rb") as f:
        p = run(["protoc", "--decode=perfetto.protos.Trace", "-I", proto_dir,
                 "perfetto_trace.proto"], stdin=f)
    check(p.returncode == 0 and not p.stderr,
          f"protoc decodes {os.path.basename(path)} as perfetto.protos.Trace"
          + ("" if not p.stderr else ": " + p.stderr.decode(errors="replace")[:300]))
    return parse_text(p.stdout.decode("utf-8", errors="strict")).get("packet", [])


class Model:
    """What a trace processor reads from the packets: tracks, names, slices."""

    def __init__(self, packets):
        self.procs, self.threads, self.track_names = {}, {}, {}
        self.slices = []          # (track, name, begin, end, depth, args)
        self.instants = []        # (track, name, ts)
        self.errors = []
        seqs = {}
        stacks = {}
        for i, p in enumerate(packets):
            seq = one(p, "trusted_packet_sequence_id")
            if seq is None:
                self.errors.append(f"packet {i} has no trusted_packet_sequence_id")
                continue
            flags = one(p, "sequence_flags", 0)
            st = seqs.get(seq)
            if flags & 1:
                d = one(p, "trace_packet_defaults", {})
                st = seqs[seq] = {"names": {}, "clock": None, "last": None,
                                  "clock_id": one(d, "timestamp_clock_id"),
                                  "track": one(one(d, "track_event_defaults", {}),
                                               "track_uuid")}
            if st is None:
                self.errors.append(f"packet {i}: sequence {seq} used before it was cleared")
                continue
            td = one(p, "track_descriptor")
            if td:
                uuid = one(td, "uuid")
                if "process" in td:
                    pr = one(td, "process")
                    self.procs[uuid] = (one(pr, "pid"), one(pr, "process_name", b""))
                elif "thread" in td:
                    th = one(td, "thread")
                    self.threads[uuid] = (one(th, "pid"), one(th, "tid"),
                                          one(th, "thread_name", b""), one(td, "parent_uuid"))
                else:
                    self.track_names[uuid] = (one(td, "name", b""), one(td, "parent_uuid"))
            cs = one(p, "clock_snapshot")
            if cs:
                for c in cs.get("clocks", []):
                    if one(c, "is_incremental"):
                        st["clock"] = one(c, "clock_id")
                        st["last"] = one(c, "timestamp", 0)
            for idata in p.get("interned_data", []):
                for en in idata.get("event_names", []):
                    st["names"][one(en, "iid")] = one(en, "name", b"")
            te = one(p, "track_event")
            if te is None:
                continue
            if not flags & 2:
                self.errors.append(f"packet {i}: a track event without SEQ_NEEDS_INCREMENTAL_STATE")
            clock = one(p, "timestamp_clock_id", st["clock_id"])
            ts = one(p, "timestamp")
            if clock == 6:
                t = ts
            elif clock == st["clock"] and st["last"] is not None:
                t = st["last"] = st["last"] + ts
            else:
                self.errors.append(f"packet {i}: timestamp on clock {clock} without a snapshot")
                continue
            track = one(te, "track_uuid", st["track"])
            typ = one(te, "type")
            name = None
            if "name_iid" in te:
                iid = one(te, "name_iid")
                if iid not in st["names"]:
                    self.errors.append(f"packet {i}: name_iid {iid} not interned on sequence {seq}")
                name = st["names"].get(iid)
            elif "name" in te:
                name = one(te, "name")
            args = {one(a, "name").decode(): (one(a, "string_value") or one(a, "uint_value")
                                             or one(a, "bool_value"))
                    for a in te.get("debug_annotations", [])}
            stack = stacks.setdefault(track, [])
            if typ == "TYPE_SLICE_BEGIN":
                if stack and t < stack[-1][1]:
                    self.errors.append(f"packet {i}: a slice begins before its parent")
                stack.append([name, t, args])
            elif typ == "TYPE_SLICE_END":
                if not stack:
                    self.errors.append(f"packet {i}: a slice end without a begin on its track")
                    continue
                nm, b, a = stack.pop()
                if t < b:
                    self.errors.append(f"packet {i}: a slice ends before it began")
                a.update(args)
                self.slices.append((track, nm, b, t, len(stack), a))
            elif typ == "TYPE_INSTANT":
                self.instants.append((track, name, t, args))
        for track, stack in stacks.items():
            if stack:
                self.errors.append(f"track {track}: {len(stack)} slices never ended")


def per_function(m):
    """name -> [slices, total of the outermost ones]: the report's calls and total."""
    out, anc = {}, {}
    for track, name, b, e, depth, args in sorted(m.slices, key=lambda s: (s[0], s[2], s[4])):
        f = out.setdefault(name, [0, 0])
        f[0] += 1
        a = anc[track] = anc.get(track, [])[:depth]
        if name not in a:  # no enclosing call of the same function
            f[1] += e - b
        a.append(name)
    return out


# ------------------------------------------------------------------ the programs

def record_threads(build, src, work):
    os.makedirs(work, exist_ok=True)
    cc = os.path.join(build, "bin", "ptcall-cc")
    ptcall = os.path.join(build, "tools", "ptcall")
    exe = os.path.join(work, "threads")
    if run([cc, "-O1", "-g", "-o", exe, os.path.join(src, "test", "e2e", "programs", "threads.c"),
            "-lpthread"]).returncode:
        raise SystemExit("FAIL: cannot build threads.c")
    trace = os.path.join(work, "threads.ptc")
    if run([ptcall, "record", "-q", "-o", trace, "--", exe]).returncode:
        raise SystemExit("FAIL: cannot record threads")
    report = json.loads(run([ptcall, "report", trace, "--format", "json"]).stdout)
    return ptcall, trace, report


def chrome_threads(ptcall, trace, work):
    """(pid, tid) -> thread name and pid -> process name, from the chrome export."""
    out = os.path.join(work, "threads.trace.json")
    run([ptcall, "export", trace, "--format", "chrome", "-o", out])
    with open(out) as f:
        d = json.load(f)
    threads, procs, events = {}, {}, 0
    for e in d["traceEvents"]:
        if e.get("ph") == "M" and e["name"] == "thread_name":
            threads[(e["pid"], e["tid"])] = e["args"]["name"]
        elif e.get("ph") == "M" and e["name"] == "process_name":
            procs[e["pid"]] = e["args"]["name"]
        elif e.get("ph") in ("B", "E"):
            events += 1
    return threads, procs, events, os.path.getsize(out)


def check_against_report(what, funcs, report):
    want = {f["name"]: f for f in report["functions"] if f["calls"]}
    got = {(k.decode() if isinstance(k, bytes) else k): v for k, v in funcs.items()}
    check(set(got) == set(want), f"{what}: the functions are the report's ({sorted(got)})")
    for n, f in want.items():
        g = got.get(n, [0, 0])
        check(g[0] == f["calls"], f"{what}: {n}: {g[0]} calls, the report says {f['calls']}")
        check(abs(g[1] - f["total"]) <= f["calls"] + 1,
              f"{what}: {n}: total {g[1]} ns, the report's {f['total']} (within 1 ns per call)")


def perfetto_threads(build, src, work):
    ptcall, trace, report = record_threads(build, src, work)
    out = os.path.join(work, "threads.pftrace")
    p = run([ptcall, "export", trace, "--format", "perfetto", "-o", out])
    if not check(p.returncode == 0, "export --format perfetto"):
        return
    m = Model(decode(src, out))
    check(not m.errors, "packets: sequences, interning, clocks and nesting as Perfetto reads them"
          + ("" if not m.errors else ": " + "; ".join(m.errors[:5])))
    cthreads, cprocs, cevents, csize = chrome_threads(ptcall, trace, work)
    got_threads = {(pid, tid): name.decode() for pid, tid, name, _ in m.threads.values()}
    check(got_threads == cthreads,
          f"thread tracks: pid/tid and names as the chrome export's ({got_threads})")
    check(len(cthreads) == 5, f"five threads ({len(cthreads)})")
    got_procs = {pid: name.decode() for pid, name in m.procs.values()}
    check(got_procs == cprocs, f"process tracks: pid and name ({got_procs})")
    check(all(parent in m.procs and m.procs[parent][0] == pid
              for pid, tid, name, parent in m.threads.values()),
          "each thread track's parent is its process's track")
    slice_tracks = {s[0] for s in m.slices}
    check(slice_tracks <= set(m.threads), "every slice on a thread's track")
    check_against_report("perfetto", per_function(m), report)
    events = 2 * len(m.slices)
    size = os.path.getsize(out)
    check(events == cevents, f"as many begin and end events as the chrome export ({events})")
    check(size / events < 20, f"bytes per event: {size / events:.1f} (chrome: {csize / cevents:.1f})")
    golden(build, src, work, "perfetto")


def golden(build, src, work, fmt):
    """ptc_testgen's golden trace (a gap with lost events, a repair, landing pads, a fork whose
    child starts inside two frames): the export still nests, and says where events were lost."""
    gen = os.path.join(build, "test", "decoder", "ptc_testgen")
    ptcall = os.path.join(build, "tools", "ptcall")
    trace = os.path.join(work, "golden.ptc")
    if not os.path.exists(gen) or run([gen, "golden", trace]).returncode:
        print("note ptc_testgen missing: the golden trace is not checked")
        return
    out = os.path.join(work, "golden." + fmt)
    if not check(run([ptcall, "export", trace, "--format", fmt, "-o", out]).returncode == 0,
                 f"golden: export --format {fmt}"):
        return
    if fmt == "perfetto":
        m = Model(decode(src, out))
        check(not m.errors, "golden: nesting, interning, clocks" + ("" if not m.errors else ": " + "; ".join(m.errors[:3])))
        names = {n for _, n, _, _ in m.instants}
        check({b"gap: events lost", b"fork"} <= names, f"golden: the gap and the fork as instants ({names})")
        check(any(a.get("ended") for *_, a in m.slices), "golden: ends other than by exit annotated")
    else:
        with open(out) as f:
            d = json.load(f)
        errs = []
        for prof in d["profiles"]:
            stack = []
            for e in prof["events"]:
                if e["type"] == "O":
                    stack.append(e["frame"])
                elif not stack or stack.pop() != e["frame"]:
                    errs.append(prof["name"])
            if stack:
                errs.append(prof["name"])
        check(not errs and len(d["profiles"]) == 3, f"golden: three profiles, nested ({errs[:3]})")
        check(d["ptcall"]["gaps"] == 1 and d["ptcall"]["lost_events"] == 3 and
              d["ptcall"]["complete"] is False, f"golden: gaps and losses counted ({d['ptcall']})")


def speedscope_threads(build, src, work):
    ptcall, trace, report = record_threads(build, src, work)
    out = os.path.join(work, "threads.speedscope.json")
    p = run([ptcall, "export", trace, "--format", "speedscope", "-o", out])
    if not check(p.returncode == 0, "export --format speedscope"):
        return
    with open(out) as f:
        d = json.load(f)
    schema = os.path.join(src, "web", "node_modules", "speedscope", "dist", "release",
                          "file-format-schema.json")
    try:
        import jsonschema
        with open(schema) as f:
            jsonschema.Draft7Validator(json.load(f)).validate(d)
        check(True, "valid against speedscope's file-format-schema.json")
    except ImportError:
        print("note python3-jsonschema or speedscope missing: the schema is not checked")
    except FileNotFoundError:
        print("note web/node_modules/speedscope missing: the schema is not checked")
    except Exception as e:  # jsonschema.ValidationError
        check(False, f"valid against speedscope's file-format-schema.json: {str(e)[:300]}")
    cthreads, _, cevents, csize = chrome_threads(ptcall, trace, work)
    frames = d["shared"]["frames"]
    # the runtime's [blocking] pseudo-functions (pthread_join) have no source
    blocking = {f["name"] for f in report["functions"] if f.get("blocking")}
    check(all(f.get("file", "").endswith("threads.c") and f.get("line", 0) > 0
              for f in frames if f["name"] not in blocking),
          "frames carry file and line (the [blocking] pseudo-functions %s have none)"
          % sorted(blocking))
    names = [p["name"] for p in d["profiles"]]
    want = sorted(f"{n} (pid {pid}, tid {tid})" for (pid, tid), n in cthreads.items())
    check(sorted(names) == want, f"one evented profile per thread, named after it ({names})")
    funcs, errors, events = {}, [], 0
    for prof in d["profiles"]:
        check(prof["type"] == "evented" and prof["unit"] == "nanoseconds",
              f"{prof['name']}: evented, in nanoseconds")
        stack, last = [], prof["startValue"]
        for e in prof["events"]:
            events += 1
            if e["at"] < last:
                errors.append(f"{prof['name']}: time goes back at {e}")
            last = e["at"]
            if e["type"] == "O":
                stack.append((e["frame"], e["at"]))
            else:
                if not stack or stack[-1][0] != e["frame"]:
                    errors.append(f"{prof['name']}: {e} closes a frame not on top")
                    continue
                fr, b = stack.pop()
                n = frames[fr]["name"]
                f = funcs.setdefault(n, [0, 0])
                f[0] += 1
                if not any(frames[x[0]]["name"] == n for x in stack):
                    f[1] += e["at"] - b
        if stack:
            errors.append(f"{prof['name']}: {len(stack)} frames left open")
        if last > prof["endValue"]:
            errors.append(f"{prof['name']}: an event after endValue")
    check(not errors, "events in order, properly nested" + ("" if not errors else ": " + "; ".join(errors[:5])))
    check_against_report("speedscope", funcs, report)
    check(events == cevents, f"as many events as the chrome export's B and E ({events})")
    size = os.path.getsize(out)
    check(size / events < 50, f"bytes per event: {size / events:.1f} (chrome: {csize / cevents:.1f})")
    golden(build, src, work, "speedscope")

    # untimed: refused, nothing written, an existing file left as it was
    untimed = os.path.join(work, "untimed.ptc")
    run([ptcall, "record", "-q", "--no-timestamps", "-o", untimed, "--",
         os.path.join(work, "threads")])
    for fmt in ("speedscope", "perfetto"):
        keep = os.path.join(work, f"keep.{fmt}")
        with open(keep, "w") as f:
            f.write("not ptcall's\n")
        p = run([ptcall, "export", untimed, "--format", fmt, "-o", keep], ok=(1,))
        err = p.stderr.decode(errors="replace")
        check(p.returncode == 1 and f"untimed and the {fmt} format needs times" in err
              and err.count("\n") <= 2,
              f"{fmt}: an untimed trace is refused in one line ({err.strip()[:120]})")
        with open(keep) as f:
            check(f.read() == "not ptcall's\n", f"{fmt}: the existing -o file is left as it was")


def main():
    if len(sys.argv) != 5 or sys.argv[1] not in ("threads", "speedscope"):
        print(__doc__)
        return 2
    mode, build, src, work = sys.argv[1:]
    if mode == "threads" and not shutil.which("protoc"):
        print("SKIP: protoc missing (Debian's protobuf-compiler, scripts/setup.sh)")
        return 77
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    (perfetto_threads if mode == "threads" else speedscope_threads)(build, src, work)
    print(f"{mode}: {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
