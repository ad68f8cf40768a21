#!/usr/bin/env python3
"""The source view of `ptcall cov report --format html` (docs/cov.md, *The source view*):
test/cov/cov_target.c built with `ptcall-cc -fptcall-cov`, three inputs whose paths through
it are known from its source ('a' runs f_a, 'b' f_b, 'z' neither), then per line of the page:
the hits and the class (ran / never ran / no code) the source says it must have. Then the
sources taken away (the page says they are not readable and still lists every line with code
and its hits) and a source replaced by a FIFO (said, never waited on). The page is loaded in
headless Chromium when there is one.

usage: source_view_test.py BUILD_DIR SOURCE_DIR WORK_DIR
"""
import html
import os
import re
import shutil
import subprocess
import sys

from covcheck import check, failures, line_of  # test/cov/covcheck.py, beside this script


ROW = re.compile(r'<tr(?: class=(hit|miss))?><td class=n>(\d+)</td><td(?: class=n)?>(\d*)</td>'
                 r'<td>(.*?)</td></tr>')


def rows(page):
    """{line: (class, hits, text)} of the page's source tables."""
    page = page[page.find('<h2 id="source">'):] if '<h2 id="source">' in page else ""
    return {int(m.group(2)): (m.group(1) or "", m.group(3), html.unescape(m.group(4)))
            for m in ROW.finditer(page)}


def main():
    build, src, work = (os.path.abspath(a) for a in sys.argv[1:4])
    ptcall = os.path.join(build, "tools", "ptcall")
    cc = os.path.join(build, "bin", "ptcall-cc")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, "corpus"))
    os.chdir(work)
    # the source copied beside the test: it is taken away below
    shutil.copy(os.path.join(src, "test", "cov", "cov_target.c"), "target.c")
    subprocess.run([cc, "-fptcall-cov", "-O1", "target.c", "-o", "target"], check=True)
    for name, data in [("in-a", b"a"), ("in-b", b"bb"), ("in-z", b"zz")]:
        with open(os.path.join("corpus", name), "wb") as f:
            f.write(data)
    subprocess.run([ptcall, "cov", "run", "-o", "c.ptcov", "--corpus", "corpus", "--",
                    "./target", "@@"], check=True, capture_output=True)

    def page():
        r = subprocess.run([ptcall, "cov", "report", "--format", "html", "c.ptcov"],
                           capture_output=True, text=True, timeout=60)
        check(r.returncode == 0, "report --format html failed: %s" % r.stderr)
        return r.stdout

    src_lines = open("target.c").read().split("\n")
    p = page()
    got = rows(p)
    expect = [  # (text on the line, class, hits)
        ("static int f_a(int x)", "hit", "1"),       # one input of three
        ("static int f_b(int x)", "hit", "1"),
        ("static void crash(void)", "miss", "0"),    # no input crashes
        ("r = f_a((int)n);", "hit", "1"),
        ("int r = 0;", "hit", "3"),                  # every input
        ("crash();", "miss", "0"),
        ("hang();", "miss", "0"),
        ("n = read(0, b, sizeof(b) - 1);", "miss", "0"),  # @@: stdin never read
        ("#ifdef PLAIN", "", ""),                    # no code of its own
    ]
    for text, cls, hits in expect:
        n = line_of(src_lines, text)
        check(got.get(n, (None,))[:2] == (cls, hits),
              "line %d (%s): want %s %s, got %s" % (n, text, cls or "no code", hits, got.get(n)))
        check(got.get(n, ("", "", ""))[2] == src_lines[n - 1],
              "line %d: the page's text is not the source's" % n)
    check(len(got) == len(src_lines) - (src_lines[-1] == ""),
          "every line of the source is shown (%d of %d)" % (len(got), len(src_lines)))
    m = re.search(r"(\d+) of (\d+) lines with code reached", p)
    hit_rows = sum(1 for v in got.values() if v[0] == "hit")
    code_rows = sum(1 for v in got.values() if v[0])
    check(m and (int(m.group(1)), int(m.group(2))) == (hit_rows, code_rows),
          "the summary's figures are the rows': %s against %d of %d" %
          (m and m.group(0), hit_rows, code_rows))

    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser:
        with open("report.html", "w") as f:
            f.write(p)
        dom = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                              "--dump-dom", "file://" + os.path.join(work, "report.html")],
                             capture_output=True, text=True, timeout=120).stdout
        check(dom.count('class="miss"') == sum(1 for v in got.values() if v[0] == "miss") and
              '<details id="src' in dom, "Chromium's DOM lacks the source rows")
    else:
        print("note: no chromium: the HTML page is not loaded in a browser")

    # the source taken away: said, and the lines with code still listed with their hits
    os.rename("target.c", "moved.c")
    p = page()
    check("The source is not readable here (No such file or directory)" in p,
          "a missing source is not said")
    got = rows(p)
    check(len(got) == code_rows and all(v[0] for v in got.values()),
          "without the source: the %d lines with code, got %d rows" % (code_rows, len(got)))
    # a FIFO where the source was: said, never opened for a blocking read
    os.mkfifo("target.c")
    p = page()                                   # times out (60 s) if it waits on the FIFO
    check("The source is not readable here (not a regular file)" in p, "a FIFO is not said")
    os.unlink("target.c")

    # without -fptcall-cov there are no lines: no source section
    subprocess.run([cc, "-fptcall-placement=early", "-O1", "moved.c", "-o", "plain"],
                   check=True)
    subprocess.run([ptcall, "cov", "run", "-o", "p.ptcov", "--corpus", "corpus", "--",
                    "./plain", "@@"], check=True, capture_output=True)
    r = subprocess.run([ptcall, "cov", "report", "--format", "html", "p.ptcov"],
                       capture_output=True, text=True)
    check(r.returncode == 0 and 'id="source"' not in r.stdout,
          "a build without blocks has a source section")

    print("source view: %d checks failed" % len(failures) if failures else "source view: ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
