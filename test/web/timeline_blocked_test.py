#!/usr/bin/env python3
"""web-timeline-blocked: the timeline's blocked state (issue 27 item 6) in headless Chromium,
on test/e2e/programs/blocking.c built with ptcall-cc and recorded with its blocking calls
(trace format 2.6: a pool thread in pthread_cond_wait, a pipe read, nanosleep, waitpid): the
API marks the [blocking] pseudo-functions ("blocking": true) and their items (flag 8), the
page draws them hatched blue-grey (pixels read back from the canvas) with a legend entry,
and a click on the nap's nanosleep says "blocked in nanosleep" with the duration `ptcall
export --format jsonl` has. Screenshots in --artefacts."""
import argparse, json, os, shutil, subprocess, sys, time

ap = argparse.ArgumentParser()
ap.add_argument("--build", required=True)
ap.add_argument("--src", required=True)
ap.add_argument("--work", required=True)
ap.add_argument("--artefacts", required=True)
a = ap.parse_args()
for dname in (a.work, a.artefacts):
    shutil.rmtree(dname, ignore_errors=True)
    os.makedirs(dname)
ptcall = os.path.join(a.build, "tools", "ptcall")
fails = 0


def check(cond, what):
    global fails
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    fails += 0 if cond else 1


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True, **kw).stdout


exe, trace, db = (os.path.join(a.work, n) for n in ("blocking", "b.ptrace", "db.sqlite"))
sh([os.path.join(a.build, "bin", "ptcall-cc"), "-O2", "-pthread",
    os.path.join(a.src, "test/e2e/programs/blocking.c"), "-o", exe])
sh([ptcall, "record", "-q", "--backend", "soft", "-o", trace, "--", exe], cwd=a.work)
sh([ptcall, "db", "add", "--db", db, trace])
full = [json.loads(l) for l in sh([ptcall, "export", trace, "--format", "jsonl"]).splitlines()]
rep = json.loads(sh([ptcall, "report", trace, "--format", "json", "--top", "0"]))
blocking = {f["name"] for f in rep["functions"] if f.get("blocking")}
check({"pthread_cond_wait", "nanosleep", "read", "waitpid"} <= blocking,
      "report names the blocking pseudo-functions: %s" % sorted(blocking))

from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.options import Options  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402

srv = subprocess.Popen([ptcall, "serve", "--db", db, "--listen", "127.0.0.1:0"],
                       stdout=subprocess.PIPE, text=True,
                       env=dict(os.environ, XDG_CACHE_HOME=os.path.join(a.work, "cache")))
url = srv.stdout.readline().split()[2].rstrip("/")
o = Options()
o.binary_location = shutil.which("chromium")
for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
    o.add_argument(arg)
d = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=o)
d.set_window_size(1400, 1000)


def wait(cond_js, what, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        if d.execute_script("return " + cond_js):
            return True
        time.sleep(0.02)
    check(False, what + ": not within %d s" % timeout)
    return False


def shot(name):
    d.save_screenshot(os.path.join(a.artefacts, "timeline-blocked-%s.png" % name))


try:
    d.get(url + "/runs/1/timeline")
    wait("document.body.dataset.ready === '1' && !!window.ptcallTimelineData()", "first view")
    shot("first")
    data = d.execute_script("return window.ptcallTimelineData()")
    fns = data["functions"]
    marked = {f["name"] for f in fns.values() if f.get("blocking")}
    check(marked and marked <= blocking and "nanosleep" in marked,
          "the API marks the blocking functions: %s" % sorted(marked))
    check(not any(f.get("blocking") for f in fns.values() if f["name"] not in blocking),
          "no program function is marked blocking")
    items = [(t, i) for p in data["processes"] for t in p["threads"] for i in t["items"]]
    flagged = [i for t, i in items if i[6] & 8]
    check(flagged and all(fns[str(i[3])].get("blocking") for i in flagged) and
          all(i[6] & 8 for t, i in items if not i[6] & 4 and fns[str(i[3])].get("blocking")),
          "items of blocking calls, and only those, have flag 8 (%d)" % len(flagged))
    check(int(d.execute_script("return document.body.dataset.blocked") or 0) == len(flagged),
          "the page drew them as blocked (%s)" % d.execute_script(
              "return document.body.dataset.blocked"))
    key = d.find_element("id", "timeline-key-blocked")
    check("blocked" in key.text, "the legend explains the blocked state: %r" % key.text)
    # the nap's nanosleep (main thread, depth 2, ~50 ms): where it is drawn
    nap = [c for c in full if c["function"] == "nap"][0]
    ns = [c for c in full if c["function"] == "nanosleep" and c["tid"] == nap["tid"] and
          nap["start"] <= c["start"] < nap["start"] + nap["duration"]][0]
    main = [c for c in full if c["function"] == "main" and c["tid"] == nap["tid"]][0]
    tracks = [t for p in data["processes"] for t in p["threads"]]
    mt = [t for t in tracks if t["tid"] == nap["tid"]][0]
    it0 = [i for i in mt["items"] if i[2] == 0 and not i[6] & 4]
    off = it0[0][0] - main["start"]
    c0 = ns["start"] + off + ns["duration"] // 2
    y = 0
    for t in tracks:
        depth = max([i[2] for i in t["items"]] + [0]) + 1
        if t is mt:
            y += 18 + 2 * 14 + 7
            break
        y += 18 + depth * 14 + 6
    lay = d.execute_script("var r = document.getElementById('timeline-canvas')"
                           ".getBoundingClientRect(); return [r.width, r.height];")
    x = (c0 - data["t0"]) * lay[0] / (data["t1"] - data["t0"])
    px = d.execute_script("""
        var g = document.getElementById('timeline-canvas').getContext('2d');
        var out = [];
        for (var dx = 0; dx < 6; dx++)
          out.push(Array.from(g.getImageData(arguments[0] + dx, arguments[1], 1, 1).data));
        return out;""", int(x), int(y))
    blue = [p for p in px if abs(p[0] - 0x81) < 8 and abs(p[1] - 0x93) < 8 and abs(p[2] - 0xa8) < 8]
    light = [p for p in px if p[0] > 0xd0 and p[2] > 0xe0]
    check(blue and light, "the nanosleep is drawn hatched blue-grey: %s" % px)
    canvas = d.find_element("id", "timeline-canvas")
    ActionChains(d).move_to_element_with_offset(canvas, int(x - lay[0] / 2),
                                                int(y - lay[1] / 2)).click().perform()
    wait("document.body.dataset.callReady === '1'", "the clicked call's details")
    dd = {e.get_attribute("data-key"): e.text for e in d.find_elements("css selector",
                                                                        "#timeline-call dd")}
    msg = d.find_elements("id", "timeline-blocked")
    check(msg and msg[0].text.startswith("blocked in nanosleep"),
          "the click says %r" % (msg[0].text if msg else None))
    check(dd.get("function") == "nanosleep" and dd.get("duration_ns") == str(ns["duration"]),
          "the clicked call: %s, %s ns (jsonl: nanosleep, %d ns)"
          % (dd.get("function"), dd.get("duration_ns"), ns["duration"]))
    shot("click")
finally:
    d.quit()
    srv.terminate()
    srv.wait(20)
print("web-timeline-blocked: %s" % ("FAILED (%d)" % fails if fails else "ok"))
sys.exit(1 if fails else 0)
