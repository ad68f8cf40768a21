#!/usr/bin/env python3
"""ptcall_mark on the timelines and in the summaries (docs/usage.md, "Marks").

  marks_test.py files BUILD SRC WORK              (ctest outputs-marks)
      Compiles test/outputs/marks_prog.c with BUILD's ptcall-cc: two threads mark with four
      labels (one hostile: quotes, backslash, </script>, non-ASCII, a newline, a tab; one
      empty), inside calls and outside them, then 100 labels once each, and write what they
      marked. Records it with
      `ptcall record --backend soft` (timed), --no-timestamps and --counts, then checks:
        - export --format chrome parses as JSON; each mark is an instant ("ph": "i", "s": "t")
          named "mark: LABEL" with args.mark the exact label, on the thread that marked it, as
          many per label as the program made, at a time within its thread's calls and at the
          stack depth the begin/end events give there; otherData.marks counts them; the file
          is valid against docs/schema/chrome-trace.schema.json (python3-jsonschema; noted
          when missing); --tid keeps only that thread's marks;
        - `ptcall calls`: one line `/* mark: LABEL */` per mark, the label JSON-escaped;
        - report --format json: "marks" per label equals what the program made, with one
          timed segment per mark (the timed trace), none untimed; counted_calls per label
          (--counts) add up to at most totals.counted_calls; valid against
          report.schema.json; the table lists each label quoted and escaped.
  marks_test.py viewer BUILD SRC WORK ARTEFACTS   (ctest outputs-marks-viewer)
      The same timed recording's chrome export opened in speedscope in headless Chromium
      (viewer_test.py): its call tree equals the report's although the file holds the
      marks' instants (speedscope shows no instant events: the marks are not drawn there).
      Exit 77 when Chromium, chromedriver, selenium or speedscope are missing.

Exit status: 0 passed, 1 failed, 77 skipped.
"""
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import viewers  # noqa: E402  (Build, check, run, the viewer prerequisites)

from viewers import check, say  # noqa: E402


def made_marks(path):
    """{label: marks} as the program wrote them (one JSON object per line)."""
    with open(path, encoding="utf-8") as f:
        return {o["label"]: o["marks"] for o in map(json.loads, f)}


RECORDINGS = (("timed", ()), ("untimed", ("--no-timestamps",)), ("counts", ("--counts",)))


def differ(got, made):
    """What differs between two {label: marks}, shortly ("" when equal)."""
    bad = sorted(set(got) | set(made), key=repr)
    bad = [(k, got.get(k), made.get(k)) for k in bad if got.get(k) != made.get(k)]
    return "" if not bad else f": (label, got, made) {bad[:6]}"


def build_and_record(b, kinds=RECORDINGS):
    """Compiles marks_prog.c and records it: {kind: (trace, made)} for timed, untimed, counts."""
    exe = os.path.join(b.work, "marks")
    src = os.path.join(b.src, "test", "outputs", "marks_prog.c")
    inc = os.path.join(b.src, "include")
    p = viewers.run([b.cc, "-O1", "-g", "-I", inc, src, "-o", exe, "-lpthread"])
    if not check(p.returncode == 0, "marks_prog.c compiled with ptcall-cc"):
        return {}
    out = {}
    for kind, opts in kinds:
        trace = os.path.join(b.work, f"marks-{kind}.ptc")
        made = os.path.join(b.work, f"made-{kind}.jsonl")
        p = viewers.run([b.ptcall, "record", "-q", "--backend", "soft", *opts, "-o", trace, "--",
                         exe, made])
        if check(p.returncode == 0 and os.path.isfile(trace) and os.path.isfile(made),
                 f"marks_prog recorded with --backend soft {' '.join(opts)}"):
            out[kind] = (trace, made_marks(made))
    return out


def thread_walk(events):
    """Per (pid, tid): the B/E events' times and, for each mark instant, the number of frames
    open there (the events in file order: the export writes each thread's in time order)."""
    per = {}
    for e in events:
        key = (e.get("pid"), e.get("tid"))
        st = per.setdefault(key, {"times": [], "open": 0, "marks": []})
        if e["ph"] == "B":
            st["open"] += 1
            st["times"].append(e["ts"])
        elif e["ph"] == "E":
            st["open"] -= 1
            st["times"].append(e["ts"])
        elif e["ph"] == "i" and e["name"].startswith("mark: "):
            st["marks"].append((e, st["open"]))
    return per


def check_chrome(b, trace, made, schema_py):
    path = os.path.join(b.work, "marks.trace.json")
    if not check(b.ptc("export", trace, "--format", "chrome", "-o", path).returncode == 0,
                 "export --format chrome"):
        return
    try:
        with open(path, "rb") as f:
            doc = json.loads(f.read().decode("utf-8"))  # strict UTF-8, strict JSON
    except (ValueError, UnicodeDecodeError) as e:
        check(False, f"marks.trace.json parses as UTF-8 JSON: {e}")
        return
    evs = doc["traceEvents"]
    marks = [e for e in evs if e.get("ph") == "i" and e.get("name", "").startswith("mark: ")]
    got = {}
    for e in marks:
        got[e["args"]["mark"]] = got.get(e["args"]["mark"], 0) + 1
    check(got == made, f"chrome: {len(marks)} marks, per label as the program made them{differ(got, made)}")
    check(all(e["name"] == "mark: " + e["args"]["mark"] and e["s"] == "t" for e in marks),
          "chrome: each mark is a thread instant named \"mark: \" + its exact label")
    check(doc["otherData"].get("marks") == str(len(marks)),
          f"chrome: otherData.marks = {doc['otherData'].get('marks')} (instants: {len(marks)})")
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in evs
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    per = thread_walk(evs)
    worker_tid = None
    for key, st in per.items():
        if not st["marks"]:
            continue
        lo, hi = min(st["times"]), max(st["times"])
        inside = all(lo <= e["ts"] <= hi for e, _ in st["marks"])
        check(inside, f"chrome: the {len(st['marks'])} marks of thread {key} lie within its "
                      f"calls [{lo}, {hi}] us")
        wrong = [(e["args"]["mark"], e["args"]["depth"], n) for e, n in st["marks"]
                 if e["args"]["depth"] != n]
        check(not wrong, f"chrome: thread {key}: each mark's args.depth is the number of frames "
                         f"open there (label, depth, open): {wrong[:6]}")
        labels = {e["args"]["mark"] for e, _ in st["marks"]}
        if labels == {"worker"}:
            worker_tid = key[1]
        else:
            check("worker" not in labels, f"chrome: thread {key} ({names.get(key)}) has only "
                                          f"its own marks ({len(labels)} labels)")
    frames = [e["args"]["depth"] for e in marks if e["args"]["mark"] == "frame"]
    check(frames and all(d == 2 for d in frames),
          f"chrome: the marks made inside frame() (main > frame) have depth 2: {frames}")
    if check(worker_tid is not None, "chrome: the worker's marks are on a thread of their own"):
        sub = os.path.join(b.work, "marks-worker.trace.json")
        if b.ptc("export", trace, "--format", "chrome", "--tid", worker_tid, "-o", sub).returncode == 0:
            with open(sub, encoding="utf-8") as f:
                only = [e["args"]["mark"] for e in json.load(f)["traceEvents"]
                        if e.get("ph") == "i" and e["name"].startswith("mark: ")]
            check(only == ["worker"] * made["worker"], f"chrome --tid {worker_tid}: only the "
                                                       f"worker's marks: {only}")
    if schema_py:
        validate(b, schema_py, "chrome-trace.schema.json", path)


def validate(b, py, schema, path):
    p = subprocess.run([py, os.path.join(HERE, "viewer_test.py"), "schema",
                        os.path.join(b.src, "docs", "schema", schema), path],
                       capture_output=True, text=True)
    check(p.returncode == 0, f"{os.path.basename(path)} is valid against {schema}"
          + ("" if p.returncode == 0 else ": " + p.stdout.strip()[-1500:]))


def report_json(b, trace, name):
    path = os.path.join(b.work, name)
    if b.ptc("report", trace, "--format", "json", out=path).returncode != 0:
        check(False, f"report --format json of {os.path.basename(trace)}")
        return None, path
    with open(path, encoding="utf-8") as f:
        return json.load(f), path


def check_reports(b, recs, schema_py):
    for kind, (trace, made) in recs.items():
        rep, path = report_json(b, trace, f"marks-{kind}.report.json")
        if rep is None:
            continue
        got = {m["label"]: m["marks"] for m in rep["marks"]}
        check(got == made, f"report ({kind}): {len(got)} labels, marks per label as the program "
                           f"made them{differ(got, made)}")
        order = [(-m["marks"], m["label"]) for m in rep["marks"]]
        check(order == sorted(order), f"report ({kind}): most marked first, then by label")
        if kind == "timed":
            ok = all(m["segments"] == m["marks"] and m["segment_min"] <= m["segment_max"]
                     and m["segment_min"] * m["segments"] <= m["segment_total"]
                     <= m["segment_max"] * m["segments"] for m in rep["marks"])
            check(ok, f"report (timed): a timed segment per mark, min <= mean <= max")
            check(all(m["counted_calls"] is None for m in rep["marks"]),
                  "report (timed): counted_calls null outside counting mode")
            # the parallel decode (a worker per thread) merges its workers' marks
            figs = []
            for n in ("1", "4"):
                p = b.ptc("report", trace, "--format", "json", "--threads", n)
                figs.append(json.loads(p.stdout)["marks"] if p.returncode == 0 else None)
            check(figs[0] == figs[1] == rep["marks"],
                  "report (timed): the same marks decoded serially (--threads 1) and in parallel")
        elif kind == "untimed":
            check(all(m["segments"] == 0 and m["segment_total"] is None for m in rep["marks"]),
                  "report (untimed): no segment times")
        else:
            total = rep["totals"].get("counted_calls", 0)
            per = [m["counted_calls"] for m in rep["marks"]]
            check(all(isinstance(c, int) for c in per) and sum(per) <= total and per[0] > 0,
                  f"report (counts): calls per label add up to {sum(per)}, at most "
                  f"counted_calls {total}")
        if schema_py:
            validate(b, schema_py, "report.schema.json", path)
        table = b.ptc("report", trace, "--top", "0").stdout
        seen = {}
        for ln in table.splitlines():
            if ln.endswith('"') and ln.split()[0].isdigit():  # `MARKS [figures]  "LABEL"`
                seen[json.loads(ln[ln.index('"'):])] = int(ln.split()[0])
        check(seen == made, f"report ({kind}) table: one line per label with its marks, the "
                            f"label quoted and escaped{differ(seen, made)}")


def check_calls(b, trace, made):
    """`ptcall calls`: one line `/* mark: LABEL */` per mark, the label escaped as in JSON."""
    p = b.ptc("calls", trace)
    got, broken = {}, []
    for ln in p.stdout.splitlines():
        if "/* mark: " in ln:
            body = ln[ln.index("/* mark: ") + 9:]
            if not body.endswith(" */"):
                broken.append(ln)
                continue
            lab = json.loads('"' + body[:-3] + '"')
            got[lab] = got.get(lab, 0) + 1
    check(not broken, f"calls: each mark is one line ending ' */': {broken}")
    check(got == made, f"calls: mark lines per label, labels unescaped{differ(got, made)}")


def files(b):
    recs = build_and_record(b)
    if "timed" not in recs:
        return 0
    py = viewers.viewer_python()
    schema_py = py if viewers.has_module(py, "jsonschema") else None
    if not schema_py:
        say("note python3-jsonschema is missing: the schema checks are left out")
    check_chrome(b, *recs["timed"], schema_py)
    check_calls(b, *recs["timed"])
    check_reports(b, recs, schema_py)
    return 0


def viewer(b, artefacts):
    missing = viewers.skip_viewers(b.src)
    if missing:
        say("SKIP: outputs-marks-viewer needs " + "; ".join(missing) + ": run scripts/setup.sh")
        return viewers.SKIP
    recs = build_and_record(b, RECORDINGS[:1])
    if "timed" not in recs:
        return 0
    trace = recs["timed"][0]
    prof = os.path.join(b.work, "marks.trace.json")
    rep = os.path.join(b.work, "marks.report.json")
    made = b.ptc("export", trace, "--format", "chrome", "-o", prof).returncode == 0
    made &= b.ptc("report", trace, "--format", "json", out=rep).returncode == 0
    if not check(made, "export --format chrome and report --format json"):
        return 0
    with open(prof, encoding="utf-8") as f:
        n = sum(1 for e in json.load(f)["traceEvents"] if e.get("ph") == "i")
    check(n > 0, f"the export holds {n} instant events (the marks)")
    cmd = [viewers.viewer_python(), os.path.join(HERE, "viewer_test.py"), "speedscope", prof, rep,
           "--artefacts", os.path.join(artefacts, "marks-chrome-speedscope")]
    say("run: " + " ".join(cmd))
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for line in p.stdout.splitlines():
        if line.startswith(("FAIL", "ERROR", "note", "speedscope:")):
            say(line)
    check(p.returncode == 0, "speedscope opens the chrome export with marks and shows the "
                             "report's call tree (viewer_test.py speedscope)")
    return 0


def main():
    if len(sys.argv) < 5 or sys.argv[1] not in ("files", "viewer") or \
            (sys.argv[1] == "viewer" and len(sys.argv) != 6):
        raise SystemExit(__doc__)
    mode, build, src, work = sys.argv[1:5]
    build, src, work = map(os.path.abspath, (build, src, work))
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    os.chdir(work)
    b = viewers.Build(build, src, work)
    if mode == "files":
        rc = files(b)
    else:
        artefacts = os.path.abspath(sys.argv[5])
        os.makedirs(artefacts, exist_ok=True)
        rc = viewer(b, artefacts)
    if rc == viewers.SKIP:
        return rc
    say(f"marks {mode}: {len(viewers.failures)} failed")
    for f in viewers.failures:
        say(f"  FAIL {f}")
    return 1 if viewers.failures else 0


if __name__ == "__main__":
    sys.exit(main())
