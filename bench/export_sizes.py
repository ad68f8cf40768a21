#!/usr/bin/env python3
"""Sizes of `ptcall export` per event, and speedscope's load time, on a big trace (issue 27
item 5; docs/benchmarks.md, *Export sizes and speedscope's load time*). Not run by ctest.

  /usr/bin/python3 bench/export_sizes.py [--build build] [--events 10000000] [--work DIR] [--chrome-in-speedscope]

Compiles a loop of small instrumented calls (main -> outer(i) -> 4 x inner(i), so 5 calls, 10
events, per iteration) with BUILD's ptcall-cc, records it (about --events events), exports it
as chrome (--force: past the 200 MiB cap), speedscope and perfetto, and prints each file's size
and bytes per event (events = 2 x the report's calls) and the time each export took. Then it
opens the speedscope file in speedscope (web/node_modules/speedscope, served locally) in
headless Chromium and times it from the page's request until speedscope shows the profile
(its Sandwich table), as test/outputs/viewer_test.py drives it; with --chrome-in-speedscope the
chrome file too (the issue measured 657 s for 2.06 M events: give it a limit). Run it with
Debian's python3 (python3-selenium).
"""
import argparse
import json
import os
import subprocess
import sys
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(SRC, "test", "outputs"))

PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
static volatile unsigned sink;
__attribute__((noinline)) void inner(unsigned i) { sink += i; }
__attribute__((noinline)) void outer(unsigned i)
{
    for (unsigned k = 0; k < 4; k++)
        inner(i + k);
}
int main(int argc, char **argv)
{
    unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], 0, 10) : 1000000;
    for (unsigned i = 0; i < n; i++)
        outer(i);
    printf("%u\n", sink);
    return 0;
}
"""


def run(cmd, **kw):
    t = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)
    if p.returncode:
        sys.exit(f"{cmd!r} failed ({p.returncode}): {p.stderr.decode(errors='replace')[:500]}")
    return p, time.monotonic() - t


def load_in_speedscope(path, limit):
    import viewer_test as vt
    for v in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        os.environ.pop(v, None)
    os.environ["NO_PROXY"] = os.environ["no_proxy"] = "127.0.0.1,localhost"
    opts = argparse.Namespace(chromium=os.environ.get("PTCALL_CHROMIUM", "/usr/bin/chromium"),
                              chromedriver=os.environ.get("PTCALL_CHROMEDRIVER", "/usr/bin/chromedriver"),
                              load_timeout=limit, timeout=limit + 60)
    art = os.path.join(os.path.dirname(path), "speedscope-" + os.path.basename(path))
    os.makedirs(art, exist_ok=True)
    sess = vt.Session(opts, art)
    try:
        rel = vt.find_speedscope(None)
        server, data = sess.serve(rel, path)
        br = sess.browser()
        url = f"{server.origin}/index.html#profileURL={urllib.parse.quote(data, safe='')}&view=sandwich"
        t0 = time.monotonic()
        br.driver.get(url)
        while time.monotonic() - t0 < limit:
            try:  # the call waits while the page's script runs (the import): 30 s at most
                st = br.script(vt.JS_SANDWICH) or {}
            except Exception:
                continue
            if st.get("frames"):
                dt = time.monotonic() - t0
                br.screenshot(os.path.join(art, "loaded.png"))
                return dt, st
            if st.get("error"):
                return None, st
            time.sleep(0.25)
        return None, {"error": f"not shown within {limit} s"}
    finally:
        sess.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(SRC, "build"))
    ap.add_argument("--events", type=int, default=10_000_000)
    ap.add_argument("--work", default="/tmp/ptcall-export-sizes")
    ap.add_argument("--load-limit", type=int, default=300, help="seconds speedscope gets to load")
    ap.add_argument("--chrome-in-speedscope", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    ptcall = os.path.join(a.build, "tools", "ptcall")
    src = os.path.join(a.work, "loop.c")
    with open(src, "w") as f:
        f.write(PROGRAM)
    exe = os.path.join(a.work, "loop")
    run([os.path.join(a.build, "bin", "ptcall-cc"), "-O1", "-g", "-o", exe, src])
    trace = os.path.join(a.work, "loop.ptc")
    _, dt = run([ptcall, "record", "-q", "-o", trace, "--", exe, str(a.events // 10)])
    rep, _ = run([ptcall, "report", trace, "--format", "json"])
    calls = sum(f["calls"] for f in json.loads(rep.stdout)["functions"])
    events = 2 * calls
    print(f"trace: {trace}: {os.path.getsize(trace):,} bytes, {calls:,} calls, {events:,} events "
          f"({os.path.getsize(trace) / events:.2f} bytes per event), recorded in {dt:.1f} s")
    outs = {}
    for fmt, name, extra in (("chrome", "loop.trace.json", ["--force"]),
                             ("speedscope", "loop.speedscope.json", []),
                             ("perfetto", "loop.pftrace", [])):
        out = os.path.join(a.work, name)
        _, dt = run([ptcall, "export", trace, "--format", fmt, "-o", out, *extra])
        size = os.path.getsize(out)
        outs[fmt] = out
        print(f"{fmt:10} {size:>14,} bytes  {size / events:6.1f} bytes per event  "
              f"exported in {dt:.1f} s")
    todo = [("speedscope", outs["speedscope"])]
    if a.chrome_in_speedscope:
        todo.append(("chrome", outs["chrome"]))
    for fmt, path in todo:
        dt, st = load_in_speedscope(path, a.load_limit)
        if dt is None:
            print(f"speedscope on the {fmt} export: not loaded ({st.get('error')})")
        else:
            print(f"speedscope on the {fmt} export: shown in {dt:.1f} s "
                  f"({st.get('profileCount')} profile(s), {st.get('frames')} frames)")


if __name__ == "__main__":
    main()
