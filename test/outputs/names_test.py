#!/usr/bin/env python3
"""Names in every output (docs/reliability.md, "Names in every output"; docs/usage.md,
"Names in outputs").

  names_test.py hostile BUILD SRC WORK   (ctest outputs-hostile-names)
      Compiles hostile_names.c (asm labels: bytes that are not UTF-8, a newline, terminal
      escape sequences, =HYPERLINK("..."), +, -, @, a tab, quotes, a backslash, ';', markup,
      DEL, U+009B; #line: a source path with an invalid byte, an ESC and a newline) with
      BUILD's ptcall-cc, and hostile_long.cpp (a 200,014-character C++ name, no -g: no source
      line) with ptcall-c++; records the program twice, to a trace file whose name is hostile
      too. Then every output, each read by its real parser:
        report (table, csv, json), report --paths (table, csv, json), diff (table, csv,
        json), calls, export chrome (json), jsonl, events (csv), folded, svg (xml.etree),
        graph (`dot -Tsvg`, its SVG through xml.etree; noted when graphviz is missing),
        html (its JSON data and the flame graph's SVG), db add + db list (json, csv, table)
        and db show.
      Each name must come out as the format's escaping writes it (common/ptc_escape.c): JSON
      and XML with U+FFFD for bytes that are not UTF-8, XML without characters XML 1.0
      forbids, CSV with formula-like cells behind a ', a line left empty where it is not
      known; text outputs (tables, calls, folded, graph comments) valid UTF-8 without any
      raw control character but the line ends, names as visible escapes (\\n, \\x1b, \\xff),
      one row per function.
  names_test.py clones BUILD SRC WORK    (ctest outputs-clone-names)
      A C++20 coroutine (clones_prog.cpp: counter(int) and its (.resume) and (.destroy)
      parts) and foo(int) with a (.cold) and a (.llvm.4242) clone (asm labels), compiled by
      ptcall-c++ -std=c++20: calls, folded stacks and the svg keep them apart, with the
      report's calls each.
  names_test.py landing BUILD SRC WORK   (ctest outputs-landing)
      test/e2e/programs/longjmp.c and exceptions.cpp: `calls` says "(F resumes at a landing
      pad: N frames unwound)" only where frames were unwound (the longjmp's return, the catch),
      never at the first return of setjmp.

Exit status: 0 passed, 1 failed.
"""
import base64
import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from viewer_test import short_name  # noqa: E402  (the exports' short names)

failures = []


def say(*a):
    print(*a, flush=True)


def check(cond, what):
    say(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)
    return cond


def run(cmd, ok=(0,), **kw):
    """Runs cmd (str or bytes arguments); returns the CompletedProcess with bytes output."""
    p = subprocess.run(cmd, capture_output=True, **kw)
    if p.returncode not in ok:
        shown = " ".join(repr(c) if isinstance(c, bytes) else str(c) for c in cmd)
        say(f"command failed ({p.returncode}): {shown[:300]}\n"
            f"{p.stderr.decode('utf-8', 'replace').strip()[-1500:]}")
    return p


# ---------------------------------------------------------------------------------------------
# what each format makes of a name (common/ptc_escape.c), from the name's bytes

def pieces(b):
    """(str, None) for each character of b that is well-formed UTF-8, (None, byte) for each
    byte that starts none, as common/ptc_escape.c reads b."""
    i = 0
    while i < len(b):
        c = b[i]
        if c < 0x80:
            yield chr(c), None
            i += 1
            continue
        k = 2 if 0xc2 <= c <= 0xdf else 3 if 0xe0 <= c <= 0xef else 4 if 0xf0 <= c <= 0xf4 else 0
        if k and i + k <= len(b):
            try:
                yield b[i:i + k].decode("utf-8"), None
                i += k
                continue
            except UnicodeDecodeError:
                pass
        yield None, c
        i += 1


def as_json(b):
    """The string a JSON parser reads: U+FFFD for each byte that is not UTF-8."""
    return "".join(s if s is not None else "\ufffd" for s, _ in pieces(b))


def as_xml(b):
    """The text an XML parser reads: U+FFFD also for what XML 1.0 does not allow."""
    out = []
    for s, _ in pieces(b):
        if s is None or (ord(s) < 0x20 and s not in "\t\n\r") or s in "\ufffe\uffff":
            out.append("\ufffd")
        else:
            out.append(s)
    return "".join(out)


def as_csv(b):
    """The value a CSV reader reads: as_json, and ' before a formula-like start (OWASP)."""
    v = as_json(b)
    return "'" + v if b[:1] in (b"=", b"+", b"-", b"@", b"\t", b"\r") else v


def as_text(b):
    """A text output's form: control characters, DEL, C1 controls and invalid bytes as
    visible escapes."""
    out = []
    for s, byte in pieces(b):
        if s is None:
            out.append("\\x%02x" % byte)
        elif s in "\n\t\r":
            out.append({"\n": "\\n", "\t": "\\t", "\r": "\\r"}[s])
        elif ord(s) < 0x20 or ord(s) == 0x7f:
            out.append("\\x%02x" % ord(s))
        elif 0x80 <= ord(s) <= 0x9f:
            out.append("\\u%04x" % ord(s))
        else:
            out.append(s)
    return "".join(out)


def short(b, n=1024):
    """outputs/driver.c ptc_out_short_name of b (which works on bytes): names of n bytes or
    more as they are."""
    if len(b) >= n:
        return b
    return short_name(b.decode("latin-1")).encode("latin-1")


def text_ok(what, data):
    """Text output: valid UTF-8, no raw control character but '\\n'. Returns the text."""
    try:
        s = data.decode("utf-8")
    except UnicodeDecodeError as e:
        check(False, f"{what}: valid UTF-8 ({e})")
        return None
    bad = sorted({c for c in s if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) <= 0x9f})
    check(not bad, f"{what}: no raw control characters{'' if not bad else ': ' + repr(bad)}")
    return s


def json_doc(what, data):
    try:
        return json.loads(data)  # bytes: must be UTF-8
    except ValueError as e:
        check(False, f"{what}: parses as JSON ({str(e)[:200]})")
        return None


def csv_rows(what, data):
    """Rows of a CSV output as dicts (header first), or None."""
    csv.field_size_limit(sys.maxsize)
    try:
        rows = list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))
    except (UnicodeDecodeError, csv.Error) as e:
        check(False, f"{what}: parses as CSV ({str(e)[:200]})")
        return None
    head, body = rows[0], rows[1:]
    check(all(len(r) == len(head) for r in body),
          f"{what}: every row has the header's {len(head)} fields")
    return [dict(zip(head, r)) for r in body]


def xml_doc(what, data):
    try:
        return ET.fromstring(data)
    except ET.ParseError as e:
        check(False, f"{what}: well-formed XML ({e})")
        return None


# ---------------------------------------------------------------------------------------------
# hostile names

NAMES = [b"bad\xff\xfename", b"new\nline", b"esc\x1b[31mred\x1b[0m",
         b'=HYPERLINK("http://x","y")', b"+plus", b"-minus", b"@at",
         b'tab\tq"uote\\back;semi,comma<amp&>\x7f\xc2\x9bcsi']
LONG = b"int take<" + b"A" * 100000 + b">(" + b"A" * 100000 + b")"
OTHERS = [b"main", b"long_name_entry", LONG]
ALL = NAMES + OTHERS
PATH = b"dir\xff\x1b/file\nname.c"
# functions after #line in hostile_names.c, and without a source line (hostile_long.cpp)
IN_PATH = {b'=HYPERLINK("http://x","y")', b"+plus", b"-minus", b"@at", NAMES[-1], b"main"}
NO_LINE = {b"long_name_entry", LONG}
TRACE_NAME = b"trace\xff\x1b]0;title\x07=1.ptc"  # a hostile file name for the trace


def build_hostile(build, src, work):
    cc, cxx = os.path.join(build, "bin", "ptcall-cc"), os.path.join(build, "bin", "ptcall-c++")
    ptcall = os.path.join(build, "tools", "ptcall")
    here = os.path.join(src, "test", "outputs")
    exe = os.path.join(work, "hostile")
    objs = [os.path.join(work, "hostile_names.o"), os.path.join(work, "hostile_long.o")]
    if (run([cc, "-O1", "-g", "-c", os.path.join(here, "hostile_names.c"), "-o", objs[0]])
            .returncode or
            run([cxx, "-O1", "-c", os.path.join(here, "hostile_long.cpp"), "-o", objs[1]])
            .returncode or
            run([cxx, *objs, "-o", exe]).returncode):
        raise SystemExit("FAIL: cannot build the hostile program")
    traces = []
    for name in (os.fsencode(work) + b"/" + TRACE_NAME, os.fsencode(work) + b"/second.ptc"):
        if run([ptcall, "record", "-q", "-o", name, "--", exe]).returncode:
            raise SystemExit("FAIL: cannot record the hostile program")
        traces.append(name)
    return ptcall, traces


def names_of_rows(rows, key):
    return {r[key] for r in rows}


def check_text_names(what, text, names, form=as_text):
    """Every name's text form is in the output, and no row was broken in two."""
    missing = [n for n in names if form(n) not in text]
    check(not missing, f"{what}: every name shown escaped"
          + ("" if not missing else f" (missing {[m[:40] for m in missing]})"))


def hostile(build, src, work):
    ptcall, (trace, second) = build_hostile(build, src, work)
    pt = lambda *a, ok=(0,): run([ptcall, *a], ok=ok)  # noqa: E731

    # report: table, csv, json
    p = pt("report", trace)
    t = text_ok("report (table)", p.stdout)
    if t is not None:
        check_text_names("report (table)", t, ALL)
        rows = [l for l in t.split("\n") if l.endswith("[hostile]")]
        check(len(rows) == len(ALL), f"report (table): one row per function ({len(rows)})")
        check(as_text(TRACE_NAME) in t.split("\n")[0], "report (table): the trace's name escaped")
    rows = csv_rows("report --format csv", pt("report", trace, "--format", "csv").stdout)
    if rows is not None:
        got = {r["function"]: r for r in rows}
        check(set(got) == {as_csv(n) for n in ALL},
              "report --format csv: names as a CSV reader reads them (formula cells behind ')")
        check(all(got[as_csv(n)]["file"] == as_csv(PATH) for n in IN_PATH),
              "report --format csv: the source path with its U+FFFD, ESC and newline")
        check(all(got[as_csv(n)]["line"] == "" for n in NO_LINE) and
              all(got[as_csv(n)]["line"].isdigit() for n in set(ALL) - NO_LINE),
              "report --format csv: line empty where it is not known, a number elsewhere")
    d = json_doc("report --format json", pt("report", trace, "--format", "json").stdout)
    if d is not None:
        got = {f["name"]: f for f in d["functions"]}
        check(set(got) == {as_json(n) for n in ALL}, "report --format json: every name")
        check(all(got[as_json(n)]["file"] == as_json(PATH) for n in IN_PATH),
              "report --format json: the source path")
        check(d["trace"].endswith(as_json(TRACE_NAME)), "report --format json: the trace's name")

    # report --paths
    t = text_ok("report --paths", pt("report", trace, "--paths", "--min-share", "0").stdout)
    if t is not None:
        check_text_names("report --paths", t, [short(n).replace(b";", b":") for n in ALL])
    rows = csv_rows("report --paths --format csv",
                    pt("report", trace, "--paths", "--min-share", "0", "--format", "csv").stdout)
    if rows is not None:
        leaves = {r["path"].split(";")[-1] for r in rows}
        want = {as_text(short(n)).replace(";", ":") for n in ALL}
        check(leaves == want, "report --paths --format csv: every path's frames")
    d = json_doc("report --paths --format json",
                 pt("report", trace, "--paths", "--min-share", "0", "--format", "json").stdout)
    if d is not None:
        check({p["path"][-1] for p in d["paths"]} == {as_json(n) for n in ALL},
              "report --paths --format json: every function on a path")

    # diff
    t = text_ok("diff (table)", pt("diff", trace, second).stdout)
    if t is not None:
        check_text_names("diff (table)", t, ALL)
    rows = csv_rows("diff --format csv", pt("diff", trace, second, "--format", "csv").stdout)
    if rows is not None:
        check(names_of_rows(rows, "function") == {as_csv(n) for n in ALL},
              "diff --format csv: every name")
    d = json_doc("diff --format json", pt("diff", trace, second, "--format", "json").stdout)
    if d is not None:
        check({f["name"] for f in d["functions"]} == {as_json(n) for n in ALL},
              "diff --format json: every name")

    # calls
    t = text_ok("calls", pt("calls", trace).stdout)
    if t is not None:
        check_text_names("calls", t, [short(n, 4096) for n in ALL])
        calls = [l for l in t.split("\n") if "|" in l and not l.startswith("#")]
        enters = sum(1 for l in calls if l.endswith("() {") or l.endswith("();"))
        check(enters == 1 + 3 * (len(NAMES) + 2),
              f"calls: one line per call, none broken ({enters})")

    # export
    d = json_doc("export --format chrome", pt("export", trace, "--format", "chrome").stdout)
    if d is not None:
        got = {e["name"] for e in d["traceEvents"] if e["ph"] == "B"}
        check(got == {as_json(n) for n in ALL}, "export --format chrome: every name")
    # speedscope: frames named as JSON reads them; perfetto: names as text (valid UTF-8, no
    # control characters: PTC_ESC_TEXT), decoded by protoc against Perfetto's own proto
    d = json_doc("export --format speedscope",
                 pt("export", trace, "--format", "speedscope").stdout)
    if d is not None:
        check({f["name"] for f in d["shared"]["frames"]} == {as_json(n) for n in ALL},
              "export --format speedscope: every name")
    if shutil.which("protoc"):
        import perfetto_check
        pf = os.path.join(work, "hostile.pftrace")
        with open(pf, "wb") as f:
            f.write(pt("export", trace, "--format", "perfetto").stdout)
        m = perfetto_check.Model(perfetto_check.decode(src, pf))
        check(not m.errors, "export --format perfetto: sequences, interning, nesting"
              + ("" if not m.errors else ": " + "; ".join(m.errors[:3])))
        names = set()
        for n in {x[1] for x in m.slices}:
            try:
                names.add(n.decode("utf-8"))
            except UnicodeDecodeError:
                check(False, f"export --format perfetto: a name that is not UTF-8 ({n[:40]!r})")
        check(names == {as_text(n) for n in ALL},
              "export --format perfetto: every name as text (escaped, valid UTF-8)")
        check(perfetto_check.per_function(m).keys() == {x[1] for x in m.slices},
              "export --format perfetto: every slice's name resolved")
    else:
        print("note protoc missing: the perfetto export's names are not checked")
    try:
        docs = [json.loads(l) for l in pt("export", trace, "--format", "jsonl").stdout.splitlines()]
    except ValueError as e:
        docs = None
        check(False, f"export --format jsonl: every line parses as JSON ({str(e)[:200]})")
    if docs is not None:
        check({x["function"] for x in docs} == {as_json(n) for n in ALL},
              "export --format jsonl: every line parses, every name")
        check({x["file"] for x in docs if x["function"] == "@at"} == {as_json(PATH)},
              "export --format jsonl: the source path")
    rows = csv_rows("export --format events", pt("export", trace, "--format", "events").stdout)
    if rows is not None:
        check(names_of_rows(rows, "function") == {as_csv(n) for n in ALL},
              "export --format events: every name (formula cells behind ')")
        check(all(r["line"] == "" for r in rows if r["function"] in
                  {as_csv(n) for n in NO_LINE}), "export --format events: unknown line empty")
    for weight in ("calls", "self"):
        t = text_ok(f"export --format folded --weight {weight}",
                    pt("export", trace, "--format", "folded", "--weight", weight).stdout)
        if t is not None:
            lines = [l for l in t.split("\n") if l]
            ok = all(re.fullmatch(r".* \d+", l) for l in lines)
            frames = {f for l in lines for f in l.rsplit(" ", 1)[0].split(";")}
            want = {as_text(short(n)).replace(";", ":") for n in ALL}
            check(ok and frames == want,
                  f"export --format folded --weight {weight}: `frames weight` lines, names escaped")
    svg = pt("export", trace, "--format", "svg", "--weight", "calls").stdout
    root = xml_doc("export --format svg", svg)
    if root is not None:
        ns = "{http://www.w3.org/2000/svg}"
        got = {g.get("data-name") for g in root.iter(ns + "g") if g.get("class") == "frame"}
        check(got - {"all"} == {as_xml(short(n)) for n in ALL},
              "export --format svg: parses, data-name of every frame as the name")

    # graph: dot reads it
    p = pt("graph", trace)
    t = text_ok("graph", p.stdout)
    if t is not None:
        check(sum(1 for l in t.split("\n") if "[label=" in l and "->" not in l) == len(ALL),
              "graph: one node line per function")
    dot = shutil.which("dot")
    if dot:
        g = run([dot, "-Tsvg"], input=p.stdout)
        check(g.returncode == 0 and not g.stderr.strip(),
              f"graph: dot -Tsvg reads it without complaint "
              f"{g.stderr.decode('utf-8', 'replace')[:200]}")
        root = xml_doc("graph | dot -Tsvg", g.stdout)
        if root is not None:
            texts = " ".join("".join(e.itertext()) for e in root.iter()
                             if e.tag.endswith("text"))
            check(all(as_text(n) in texts for n in NAMES),
                  "graph | dot -Tsvg: every name drawn as escaped text")
    else:
        say("note graphviz's dot is missing (scripts/setup.sh installs it): graph not drawn")

    # html: the page's data is JSON, its flame graph SVG
    html = os.path.join(work, "report.html")
    if not pt("html", trace, "-o", html).returncode:
        page = open(html, "rb").read()
        m = re.search(rb'<script type="application/json" id="ptcall-data">(.*?)</script>', page,
                      re.S)
        d = json_doc("html: the page's data", m.group(1)) if m else None
        check(m is not None, "html: holds its data block")
        if d is not None:
            hot = d.get("/api/v1/hot", {})
            got = {f["name"] for f in hot.get("functions", [])}
            check(got == {as_json(n) for n in ALL}, "html: every name in the hot functions")
            for k, v in d.items():
                if k.endswith("flame.svg"):
                    uri = v["svg_data_uri"]
                    root = xml_doc("html: the flame graph",
                                   base64.b64decode(uri.split(",", 1)[1]))
                    check(root is not None, "html: the flame graph parses as XML")

    # the runs database
    db = os.path.join(work, "runs.db")
    if os.path.exists(db):
        os.remove(db)
    tag = b'=HYPERLINK("http://x","y")\xff\x1b[0m'
    if not run([ptcall, "db", "add", "--db", db, b"--tag", b"k=" + tag, trace]).returncode:
        d = json_doc("db list --format json", pt("db", "list", "--db", db, "--format", "json").stdout)
        if d is not None:
            r = d["runs"][0]
            check(r["trace"].endswith(as_json(TRACE_NAME)) and r["tags"] == {"k": as_json(tag)},
                  "db list --format json: the trace's name and the tag")
        rows = csv_rows("db list --format csv", pt("db", "list", "--db", db, "--format", "csv").stdout)
        if rows is not None:
            check(rows[0]["tags"] == "k=" + as_json(tag) and
                  rows[0]["trace"].endswith(as_json(TRACE_NAME)),
                  "db list --format csv: the tag and the trace's name")
        t = text_ok("db list", pt("db", "list", "--db", db).stdout)
        if t is not None:
            check("k=" + as_text(tag) in t, "db list: the tag escaped")
        t = text_ok("db show", pt("db", "show", "1", "--db", db, "--top", "0").stdout)
        if t is not None:
            check_text_names("db show", t, ALL)
            check(as_text(TRACE_NAME) in t, "db show: the trace's name escaped")


# ---------------------------------------------------------------------------------------------
# clone suffixes

def clones(build, src, work):
    cxx = os.path.join(build, "bin", "ptcall-c++")
    ptcall = os.path.join(build, "tools", "ptcall")
    exe, trace = os.path.join(work, "clones"), os.path.join(work, "clones.ptc")
    if run([cxx, "-std=c++20", "-O1", "-g", os.path.join(HERE, "clones_prog.cpp"), "-o", exe]) \
            .returncode or run([ptcall, "record", "-q", "-o", trace, "--", exe, "5"]).returncode:
        raise SystemExit("FAIL: cannot build or record the coroutine program")
    rep = json.loads(run([ptcall, "report", trace, "--format", "json"]).stdout)
    calls = {f["name"]: f["calls"] for f in rep["functions"]}
    parts = {"counter(int)": "counter", "counter(int) (.resume)": "counter (.resume)",
             "counter(int) (.destroy)": "counter (.destroy)", "foo(int)": "foo",
             "foo(int) (.cold)": "foo (.cold)", "foo(int) (.llvm.4242)": "foo (.llvm.4242)"}
    if not check(set(parts) <= set(calls),
                 f"report: the coroutine's ramp, resume and destroy functions, foo and its "
                 f"clones ({sorted(calls)})"):
        return
    want = {short: calls[name] for name, short in parts.items()}
    check([calls[p] for p in parts] == [1, 6, 1, 1, 2, 3],
          f"report: the calls the program made ({[calls[p] for p in parts]})")
    # calls: one line per call, named apart
    lines = run([ptcall, "calls", trace]).stdout.decode().split("\n")
    got = {}
    for l in lines:
        m = re.search(r"\|\s+(.*)\(\);$", l)
        if m:
            got[m.group(1)] = got.get(m.group(1), 0) + 1
    check({k: v for k, v in got.items() if k != "main"} == want,
          f"calls: counter, counter (.resume), counter (.destroy), foo, foo (.cold), "
          f"foo (.llvm.4242) apart ({got})")
    folded = run([ptcall, "export", trace, "--format", "folded", "--weight", "calls"]).stdout
    got = {}
    for l in folded.decode().split("\n"):
        if l:
            path, w = l.rsplit(" ", 1)
            got[path.split(";")[-1]] = got.get(path.split(";")[-1], 0) + int(w)
    check({k: v for k, v in got.items() if k != "main"} == want,
          f"export --format folded: each apart with its calls ({got})")
    root = ET.fromstring(run([ptcall, "export", trace, "--format", "svg", "--weight",
                              "calls"]).stdout)
    frames = {g.get("data-name") for g in root.iter("{http://www.w3.org/2000/svg}g")}
    check(set(want) <= frames, "export --format svg: a frame for each of them")


# ---------------------------------------------------------------------------------------------
# landing pads

def landing(build, src, work):
    progs = os.path.join(src, "test", "e2e", "programs")
    ptcall = os.path.join(build, "tools", "ptcall")
    for prog, tool, want in (
            ("longjmp.c", "ptcall-cc", [("jumper", 2)]),
            ("exceptions.cpp", "ptcall-c++", [("catcher", 2)])):
        exe = os.path.join(work, prog.split(".")[0])
        trace = exe + ".ptc"
        if run([os.path.join(build, "bin", tool), "-O1", "-g", "-I", progs,
                os.path.join(progs, prog), "-o", exe]).returncode or \
                run([ptcall, "record", "-q", "-o", trace, "--", exe]).returncode:
            check(False, f"{prog}: builds and records")
            continue
        text = run([ptcall, "calls", trace]).stdout.decode()
        notes = re.findall(r"\((\S+) resumes at a landing pad(.*)\)", text)
        got = []
        for name, rest in notes:
            m = re.fullmatch(r": (\d+) frames? unwound", rest)
            got.append((name, int(m.group(1)) if m else None))
        check(got == want, f"{prog}: a landing pad is named only where frames were unwound, "
                           f"with how many: {got} (want {want})")


def main():
    if len(sys.argv) != 5 or sys.argv[1] not in ("hostile", "clones", "landing"):
        raise SystemExit(__doc__)
    mode, build, src, work = sys.argv[1:]
    os.makedirs(work, exist_ok=True)
    {"hostile": hostile, "clones": clones, "landing": landing}[mode](build, src, work)
    say(f"{mode}: {len(failures)} failed")
    for f in failures:
        say("  FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
