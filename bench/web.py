#!/usr/bin/python3
"""The web views' speed (`ptcall serve`, docs/web.md) against issue 17's targets:

  A database of 1,000 runs x 5,000 functions, made through the real path: a generated C
  program of 5,000 functions (each run calls every one of them, 1 to 4 times by its seed,
  from a dispatch loop), built with ptcall-cc, recorded 1,000 times with the soft backend,
  and stored with `ptcall db add` (two writers, tags seed parity and batch). Then, with
  `ptcall serve` on it:

  api      /api/v1/hot over all runs (the hot-function page's document): the first answer
           (function_stats and the medians of the functions shown) and later ones (the
           server's cache, which the database's generation keys), median of 20; the first
           answers ranked by median and over half of the runs (both read every chosen run's
           figures). Target: < 100 ms.
  page     the hot-function page over all runs in headless Chromium: from navigation start to
           the table and bar chart filled (app.js's data-ready-ms), median of 10 loads.
           Target: < 300 ms.
  clients  16 clients at once, each fetching every page, the API document behind it and the
           static files 5 times: errors (target 0) and latency.

Writes the block between <!-- web-speed:begin/end --> in docs/benchmarks.md.

usage: bench/web.py [--build DIR] [--runs N] [--functions N] [--no-write]
"""
import argparse
import concurrent.futures
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sh(cmd, **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    if r.returncode:
        sys.exit("bench/web: %s failed (%d): %s" % (" ".join(cmd), r.returncode, r.stdout[-2000:]))
    return r.stdout


def gen_program(path, nfunc):
    with open(path, "w") as f:
        f.write("/* bench/web.py: %d functions, each called 1-4 times by the seed */\n" % nfunc)
        f.write("#include <stdio.h>\n#include <stdlib.h>\n")
        for i in range(nfunc):
            f.write("__attribute__((noinline)) unsigned f%d(unsigned x) { return x * %du + "
                    "(x >> 3) + %du; }\n" % (i, 2 * i + 1, i))
        f.write("typedef unsigned (*fn)(unsigned);\nstatic fn const T[%d] = {\n" % nfunc)
        f.write(",\n".join("f%d" % i for i in range(nfunc)))
        f.write("};\nint main(int argc, char **argv)\n{\n"
                "    unsigned seed = argc > 1 ? (unsigned)atoi(argv[1]) : 1, acc = 0;\n"
                "    for (unsigned i = 0; i < %du; i++) {\n"
                "        unsigned h = (i + 1) * 2654435761u ^ seed * 40503u;\n"
                "        for (unsigned k = 0; k <= (h >> 13) %% 4; k++)\n"
                "            acc = T[i](acc);\n"
                "    }\n    printf(\"%%u\\n\", acc);\n    return 0;\n}\n" % nfunc)


def get(url):
    t = time.perf_counter()
    try:
        with urllib.request.urlopen(url, timeout=120) as r:
            body = r.read()
            st = r.status
    except urllib.error.HTTPError as e:
        body, st = e.read(), e.code
    except OSError as e:  # a timeout or a refused connection is an error of that request
        body, st = str(e).encode(), "error"
    return st, body, time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--functions", type=int, default=5000)
    ap.add_argument("--no-write", action="store_true")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    ptcall = os.path.join(build, "tools", "ptcall")
    work = os.path.join(build, "bench", "web")
    os.makedirs(os.path.join(work, "traces"), exist_ok=True)
    src, exe = os.path.join(work, "many.c"), os.path.join(work, "many")
    db = os.path.join(work, "web-%d-%d.db" % (a.runs, a.functions))
    t0 = time.time()
    if not os.path.exists(db):
        gen_program(src, a.functions)
        sh([os.path.join(build, "bin", "ptcall-cc"), "-O1", "-g", src, "-o", exe])
        traces = [os.path.join(work, "traces", "run-%04d.ptc" % i) for i in range(a.runs)]

        def rec(i):
            if not os.path.exists(traces[i]):
                sh([ptcall, "record", "-q", "--backend", "soft", "-o", traces[i], "--", exe,
                    str(i + 1)], cwd=work)
        with concurrent.futures.ThreadPoolExecutor(2) as ex:
            list(ex.map(rec, range(a.runs)))
        t_rec = time.time() - t0
        tmp = db + ".tmp"
        for f in (tmp, tmp + "-wal", tmp + "-shm"):
            if os.path.exists(f):
                os.unlink(f)
        half = a.runs // 2
        procs = [subprocess.Popen([ptcall, "db", "add", "--db", tmp, "--tag", "batch=%d" % b,
                                   "--tag", "half=%s" % ("first" if b == 0 else "second")] +
                                  traces[b * half:(b + 1) * half if b == 0 else a.runs],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                 for b in (0, 1)]
        for p in procs:
            if p.wait():
                sys.exit("bench/web: db add failed: " + p.stderr.read()[-2000:])
        os.rename(tmp, db)
        for suf in ("-wal", "-shm"):
            if os.path.exists(tmp + suf):
                os.rename(tmp + suf, db + suf)
        print("bench/web: recorded %d runs in %.0f s, stored them in %.0f s" %
              (a.runs, t_rec, time.time() - t0 - t_rec), flush=True)
    nruns = len(json.loads(sh([ptcall, "db", "list", "--db", db, "--format", "json"]))["runs"])
    size = os.path.getsize(db)

    p = subprocess.Popen([ptcall, "serve", "--db", db, "--listen", "127.0.0.1:0"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    t_start = time.perf_counter()
    url = p.stdout.readline().split()[2].rstrip("/")
    try:
        # the page's own question, which the server computes when it starts (this waits for
        # that), then the first answer of a question it has not been asked (the same runs
        # chosen by a filter)
        get(url + "/api/v1/hot")
        startup = time.perf_counter() - t_start
        def cpu():  # the server's CPU seconds so far (a shared machine's wall times wander)
            f = open("/proc/%d/stat" % p.pid).read().rsplit(")", 1)[1].split()
            return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
        c0 = cpu()
        st, body, cold = get(url + "/api/v1/hot?runs=all")
        cold_cpu = cpu() - c0
        assert st == 200, body[:300]
        hot = json.loads(body)
        nfun = hot["more"] + len(hot["functions"])
        # the same question again, and the page's question (warmed at start), 20 times each
        warm = [get(url + "/api/v1/hot?runs=all")[2] for _ in range(20)]
        page_api = [get(url + "/api/v1/hot")[2] for _ in range(20)]
        st, body, _ = get(url + "/api/v1/hot?runs=all&stat=median&sort=calls")
        cold_median = _
        # half of the runs (a tag): no summary over all runs serves it, every chosen run's
        # figures are read
        st, body, cold_half = get(url + "/api/v1/hot?tag=half=first")
        assert st == 200, body[:300]
        # the page in a browser
        sys.path.insert(0, os.path.join(ROOT, "test", "web"))
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service
        o = Options()
        o.binary_location = shutil.which("chromium")
        for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
            o.add_argument(arg)
        d = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=o)
        d.set_window_size(1400, 1100)
        loads = []
        for i in range(11):
            d.get(url + "/hot")
            end = time.time() + 60
            while time.time() < end and not d.execute_script(
                    "return document.body.dataset.ready === '1'"):
                time.sleep(0.01)
            ms = float(d.execute_script("return document.body.dataset.readyMs"))
            rows = d.execute_script("return document.querySelectorAll('#hot tbody tr').length")
            if i:  # the first load also fetches the static files
                loads.append(ms)
        d.save_screenshot(os.path.join(work, "hot-1000x5000.png"))
        d.quit()
        # 16 clients
        fid = hot["functions"][0]["id"]
        paths = ["/runs", "/api/v1/runs", "/hot", "/api/v1/hot", "/functions/%d" % fid,
                 "/api/v1/functions/%d" % fid, "/runs/1", "/api/v1/runs/1",
                 "/api/v1/runs/1/flame.svg", "/diff?base=1&new=2", "/api/v1/diff?base=1&new=2",
                 "/static/app.js", "/static/uPlot.iife.min.js", "/static/app.css",
                 "/static/uPlot.min.css"]

        def client(k):
            res = []
            for _ in range(5):
                for q in paths[k % len(paths):] + paths[:k % len(paths)]:
                    st, body, t = get(url + q)
                    res.append((q, st, t))
            return res
        t = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(16) as ex:
            allres = [x for r in ex.map(client, range(16)) for x in r]
        wall = time.perf_counter() - t
        errors = [(q, st) for q, st, _ in allres if st != 200]
        if errors:
            print("bench/web: failed requests: %s" % errors[:10], flush=True)
        lat = sorted(x[2] for x in allres)
        per_path = {}
        for q, st, tt in allres:
            per_path.setdefault(q.split("?")[0].split("/")[1] if not q.startswith("/api") else
                                "/".join(q.split("?")[0].split("/")[:4]), []).append(tt)
        # 16 real browsers at once, each loading every page and waiting until it is filled
        pages = ["/runs", "/hot", "/functions/%d" % fid, "/runs/1", "/diff?base=1&new=2"]

        def browser_client(k):
            bad, times = [], []
            try:
                bd = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=o)
            except Exception as e:  # noqa: BLE001 (a browser that cannot start is an error)
                return [("start", str(e)[:100])], []
            try:
                bd.set_page_load_timeout(300)
                for q in pages[k % len(pages):] + pages[:k % len(pages)]:
                    t = time.perf_counter()
                    bd.get(url + q)
                    end = time.time() + 300
                    while time.time() < end and not bd.execute_script(
                            "return document.body.dataset.ready === '1' || "
                            "!!document.getElementById('error')"):
                        time.sleep(0.02)
                    times.append(time.perf_counter() - t)
                    if bd.execute_script("return !!document.getElementById('error') || "
                                         "document.body.dataset.ready !== '1'"):
                        bad.append((q, bd.execute_script(
                            "var e = document.getElementById('error'); return e ? "
                            "e.textContent : 'not filled'")))
            finally:
                bd.quit()
            return bad, times
        t = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(16) as ex:
            bres = list(ex.map(browser_client, range(16)))
        bwall = time.perf_counter() - t
        berrors = [b for r in bres for b in r[0]]
        btimes = sorted(x for r in bres for x in r[1])
        if berrors:
            print("bench/web: browser errors: %s" % berrors[:10], flush=True)
        hwm = [l.split()[1] for l in open("/proc/%d/status" % p.pid) if l.startswith("VmHWM")]
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(30)

    def ms(x):
        return "%.1f ms" % (x * 1000)
    cpu = [l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")]
    lines = [
        "%s, %s, %d cores, load average %.1f at the end (the machine is shared)." %
        (time.strftime("%Y-%m-%d"), cpu[0] if cpu else "?", os.cpu_count(), os.getloadavg()[0]),
        "",
        "Database: %d runs x %d functions (each run calls all %d), %s, SQLite file of %.0f MB "
        "(bench/web.py: a generated 5,000-function program built with ptcall-cc -O1, recorded "
        "%d times with --backend soft, stored by two `ptcall db add` processes)." %
        (nruns, nfun, a.functions, "%d rows in run_functions" % (nruns * nfun), size / 1e6, nruns),
        "",
        "| measure | result | target |",
        "|---|---|---|",
        "| server start to the page's own question (`/api/v1/hot`, all runs) answered: computed "
        "once at start | %s | - |" % ms(startup),
        "| `/api/v1/hot` over all runs, first answer of a new question (sum, mean, max, min, "
        "stddev of 3 measures from function_stats, the medians of the 50 shown from the index "
        "of run_functions by function) | %s (the server's CPU: %s) | < 100 ms |" %
        (ms(cold), ms(cold_cpu)),
        "| `/api/v1/hot?stat=median&sort=calls` over all runs, first answer (ranked by every "
        "function's median: every run's figures read) | %s | - |" % ms(cold_median),
        "| `/api/v1/hot?tag=half=first` (%d runs), first answer (every chosen run's figures "
        "read) | %s | - |" % (nruns // 2, ms(cold_half)),
        "| `/api/v1/hot` over all runs, later answers (median of 20; the page's own question is "
        "computed when the server starts) | %s (max %s) | < 100 ms |" %
        (ms(statistics.median(page_api)), ms(max(page_api))),
        "| the same question with a filter, asked again (median of 20) | %s | < 100 ms |" %
        ms(statistics.median(warm)),
        "| hot-function page over all runs in headless Chromium, navigation start to table and "
        "bar chart filled (median of 10 loads, %d rows) | %.0f ms (max %.0f ms) | < 300 ms |" %
        (rows, statistics.median(loads), max(loads)),
        "| 16 clients at once, every page + API document + static file, 5 rounds each (%d "
        "requests in %.1f s) | %d errors; latency median %s, 95th percentile %s, max %s | 0 "
        "errors |" % (len(allres), wall, len(errors), ms(lat[len(lat) // 2]),
                      ms(lat[int(len(lat) * 0.95)]), ms(lat[-1])),
        "| 16 headless Chromium browsers at once, each loading every page (runs, hot functions, "
        "a function, a run with its flame graph, a diff) until filled (%d page loads in %.1f s "
        "on %d cores) | %d errors; load median %s, max %s | 0 errors |" %
        (len(btimes), bwall, os.cpu_count(), len(berrors), ms(btimes[len(btimes) // 2]) if
         btimes else "-", ms(btimes[-1]) if btimes else "-"),
        "| the server's peak memory (VmHWM) | %.0f MB | - |" % (int(hwm[0]) / 1024),
    ]
    text = "\n".join(lines)
    print(text)
    if not a.no_write:
        path = os.path.join(ROOT, "docs", "benchmarks.md")
        begin, end = "<!-- web-speed:begin -->", "<!-- web-speed:end -->"
        doc = open(path).read()
        block = "%s\n%s\n%s" % (begin, text, end)
        if begin in doc and end in doc:
            doc = doc[:doc.index(begin)] + block + doc[doc.index(end) + len(end):]
        else:  # a new section after the runs database's
            sec = ("## Web views: `ptcall serve` over 1,000 runs x 5,000 functions\n\n"
                   "`python3 bench/web.py --build BUILD` (docs/web.md):\n\n" + block + "\n\n")
            at = doc.find("<!-- db-speed:end -->")
            at = doc.find("\n## ", at) + 1 if at >= 0 and doc.find("\n## ", at) >= 0 else len(doc)
            doc = doc[:at] + sec + doc[at:]
        with open(path, "w") as f:
            f.write(doc)


if __name__ == "__main__":
    main()
