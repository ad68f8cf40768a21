#!/usr/bin/python3
"""Loads ptcall's exports into real viewers and checks what they show.

  viewer_test.py speedscope PROFILE REPORT --artefacts DIR [--folded-weight self|calls] [--chrome FILE]
      PROFILE is a `ptcall export --format chrome` file (begin/end events) or a folded file,
      REPORT a `ptcall report --format json` file of the same trace. speedscope's own release
      build (web/node_modules/speedscope, installed by scripts/setup.sh) and PROFILE are served
      from http://127.0.0.1:PORT/ and opened in headless Chromium; the figures are read from the
      page (the Sandwich view's table, every profile = every pid/tid in turn) and compared with
      REPORT.
  viewer_test.py svg SVG [--report REPORT] [--tree FOLDED] [--chrome FILE] --artefacts DIR
      SVG is a `ptcall export --format svg` flame graph (widths by calls or by time, as its
      <svg data-weight> says): parsed as XML, rendered by headless Chromium, frames measured
      with getBBox() (rendered geometry, not the attributes as written), widths checked to
      nest, the document checked to hold nothing but the expected elements; with --tree (the
      folded export of the same trace and weight) every frame is checked against the calling
      context tree, with --report the per-function figures too.
  viewer_test.py batch JOBS.json --artefacts DIR
      Runs the speedscope and svg jobs listed in JOBS.json ({"jobs": [{"name", "mode", ...}]},
      the options above by their long names) in one Chromium and one local server.
  viewer_test.py schema SCHEMA[#/POINTER] FILE... [--lines]
      Validates JSON documents (or JSON Lines: --lines, or files named *.jsonl / *.ndjson) against
      a JSON Schema (Draft 2020-12 or 7, as the schema's $schema says), or against the subschema
      at POINTER (e.g. report.schema.json#/$defs/meta).

Prints one line per check ('ok   ...' or 'FAIL ...'), then 'MODE: N passed, N failed'.
Exit status: 0 all checks passed, 1 a check failed, 2 the test could not run (missing Chromium,
chromedriver, speedscope or selenium; unreadable input; time limit reached; page never loaded).
Only 127.0.0.1 is used. Everything is bounded by --timeout (default 110 s; batch: 300 s).
"""

import argparse
import http.server
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import xml.etree.ElementTree as ET
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEBIAN_PYTHON = "/usr/bin/python3"
SVG_NS = "http://www.w3.org/2000/svg"
# outputs/svg.c leaves out frames narrower than this (their weight stays in the parent's)
SVG_MIN_WIDTH_PX = 0.1


class Infra(Exception):
    """The test could not run (exit 2): not a mismatch of the figures."""


class Deadline(Exception):
    pass


# ---------------------------------------------------------------------------------------------
# reporting

class Checks:
    def __init__(self, mode):
        self.mode = mode
        self.passed = 0
        self.failed = 0

    def ok(self, what):
        self.passed += 1
        print(f"ok   {what}", flush=True)

    def fail(self, what):
        self.failed += 1
        print(f"FAIL {what}", flush=True)

    def check(self, cond, what):
        (self.ok if cond else self.fail)(what)
        return cond

    def note(self, what):
        print(f"note {what}", flush=True)

    def summary(self):
        print(f"{self.mode}: {self.passed} passed, {self.failed} failed", flush=True)
        return 0 if self.failed == 0 else 1


def load_json(path, what):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise Infra(f"cannot read {what} {path}: {e}")


# ---------------------------------------------------------------------------------------------
# names

_QUALIFIERS = (" const", " volatile", " &&", " &", " noexcept")


def _clone_suffixes(name):
    """Where the clone suffixes at the end of a demangled name start (common/ptc_select.c
    clone_suffixes): LLVM's " (.resume)", " (.cold)", " (.llvm.123)", GNU's " [clone .cold]"."""
    end = len(name)
    while end and name[end - 1] in ")]":
        opening = "(" if name[end - 1] == ")" else "["
        i = end - 1
        while i > 0 and name[i - 1] not in "()[]":
            i -= 1
        if i < 2 or name[i - 1] != opening or name[i - 2] != " ":
            break
        if not (name[i] == "." if opening == "(" else name.startswith("clone .", i)):
            break
        end = i - 2
    return end


def text_escape(name):
    r"""A name as the text outputs write it (common/ptc_escape.c, PTC_ESC_TEXT): \n, \t, \r,
    other control characters and DEL as \xHH, C1 controls as \u0080..\u009f."""
    out = []
    for ch in name:
        c = ord(ch)
        if ch in "\n\t\r":
            out.append({"\n": "\\n", "\t": "\\t", "\r": "\\r"}[ch])
        elif c < 0x20 or c == 0x7f:
            out.append("\\x%02x" % c)
        elif 0x80 <= c <= 0x9f:
            out.append("\\u%04x" % c)
        else:
            out.append(ch)
    return "".join(out)


def short_name(name, folded=False):
    """The name the folded and svg exports show for a function whose display name is `name`
    (outputs/driver.c ptc_out_short_name): a demangled C++ name without its parameter list and
    trailing qualifiers ("ns::f(int) const" -> "ns::f"), a clone's suffixes kept
    ("f(int) (.cold)" -> "f (.cold)"); other names as they are. In folded stacks
    (outputs/cct.c) a name is escaped as in text outputs and ';' becomes ':', so that lines
    stay parseable."""
    s = name
    if len(name.encode("utf-8", "surrogateescape")) < 1024:
        cut_at = _clone_suffixes(name)
        s, suffix = name[:cut_at], name[cut_at:]
        again = True
        while again:
            again = False
            for q in _QUALIFIERS:
                if len(s) > len(q) and s.endswith(q):
                    s = s[:-len(q)]
                    again = True
        cut = None
        if s.endswith(")"):
            depth = 0
            for i in range(len(s) - 1, -1, -1):
                if s[i] == ")":
                    depth += 1
                elif s[i] == "(":
                    depth -= 1
                    if depth == 0:
                        cut = s[:i] + suffix if i > 0 else None
                        break
        s = cut if cut is not None else name
    if folded:
        s = text_escape(s).replace(";", ":")
    return s


NAMERS = {
    "full": lambda n: n,                          # chrome: the display name
    "short": lambda n: short_name(n),             # svg
    "folded": lambda n: short_name(n, True),      # folded stacks
}


# ---------------------------------------------------------------------------------------------
# the report (ptcall report --format json)

def load_report(path, namer=NAMERS["full"]):
    """The report's functions by the name a viewer shows (namer): {name: {calls, total, self}}.
    Rows that show under one name (same name in two modules or files; C++ overloads, which
    folded stacks and svg flame graphs show without parameters) are added up."""
    rep = load_json(path, "report")
    if not isinstance(rep, dict) or not isinstance(rep.get("functions"), list):
        raise Infra(f"{path}: not a `ptcall report --format json` file (no functions[])")
    funcs = {}
    dups = set()
    for f in rep["functions"]:
        name = f.get("name")
        if not isinstance(name, str):
            raise Infra(f"{path}: a functions[] row without a name: {f}")
        name = namer(name)
        row = {"calls": f.get("calls"), "total": f.get("total"), "self": f.get("self")}
        if name in funcs:
            # the viewers key frames by name only, so the rows are added up
            dups.add(name)
            old = funcs[name]
            for k in row:
                if old[k] is None or row[k] is None:
                    old[k] = None
                else:
                    old[k] += row[k]
        else:
            funcs[name] = row
    return rep, funcs, dups


# ---------------------------------------------------------------------------------------------
# what the exported files hold (read here, independently of the viewers)

class ChromeFile:
    """A Chrome Trace Event file as ptcall exports it: per call a "B" event at its entry (name,
    cat) and an "E" at its return; "i" events for gaps and forks; "M" names. The frames a fork
    child starts inside get a "B" at the fork's time, outermost first, in the child's thread
    before anything else: they are the parent's calls, not the child's. The nesting is
    rebuilt per pid/tid from the file's order."""

    def __init__(self, path, doc):
        self.path = path
        self.other = doc.get("otherData") if isinstance(doc, dict) else None
        events = doc.get("traceEvents") if isinstance(doc, dict) else doc
        self.events = events
        self.calls = Counter()          # B events that are calls
        self.frames = Counter()         # every B event (calls and inherited frames)
        self.callee_frames = Counter()  # B events directly inside a frame of this name
        self.inherited = 0
        self.unnamed_ends = 0           # E events without "name"
        self.mismatched_ends = []       # E events whose name is not that of the open frame
        self.ends_with_args = Counter()  # E events with args, by args
        self.problems = []              # structural faults of the file
        forks = {}
        for e in events:
            if isinstance(e, dict) and e.get("ph") == "i" and e.get("name") == "fork":
                child = (e.get("args") or {}).get("child_pid")
                if child is not None:
                    forks[child] = e.get("ts")
        stacks, leading, last = {}, {}, {}
        for i, e in enumerate(events):
            if not isinstance(e, dict) or e.get("ph") not in ("B", "E"):
                continue
            key = (e.get("pid"), e.get("tid"))
            ts = e.get("ts")
            if not isinstance(ts, (int, float)) or isinstance(ts, bool):
                self.problems.append(f"event {i} has no numeric ts: {e}")
                continue
            if key in last and ts < last[key]:
                self.problems.append(f"event {i} ({e.get('ph')} at {ts}) goes back in time in "
                                     f"pid/tid {key[0]}/{key[1]} (previous {last[key]})")
            last[key] = ts
            st = stacks.setdefault(key, [])
            if e["ph"] == "B":
                name = e.get("name")
                if not isinstance(name, str):
                    self.problems.append(f"event {i}: a B event without a name: {e}")
                    name = "(unnamed)"
                inherited = leading.get(key, True) and key[0] in forks and ts == forks[key[0]]
                if not inherited:
                    leading[key] = False
                if st:
                    self.callee_frames[st[-1][0]] += 1
                self.frames[name] += 1
                if inherited:
                    self.inherited += 1
                else:
                    self.calls[name] += 1
                st.append((name, ts))
            else:
                leading[key] = False
                if isinstance(e.get("args"), dict):
                    self.ends_with_args[json.dumps(e["args"], sort_keys=True)] += 1
                if not st:
                    self.problems.append(f"event {i}: an E event with no frame open in pid/tid "
                                         f"{key[0]}/{key[1]}")
                    continue
                name, start = st.pop()
                if "name" not in e:
                    self.unnamed_ends += 1
                elif e["name"] != name:
                    self.mismatched_ends.append(f"event {i}: E {e['name']!r} ends {name!r}")
                if ts < start:
                    self.problems.append(f"event {i}: {name!r} ends at {ts}, before its start {start}")
        for key, st in stacks.items():
            if st:
                self.problems.append(f"pid/tid {key[0]}/{key[1]}: {len(st)} frames never end "
                                     f"({[n for n, _ in st][:5]})")
        self.n_begin = sum(self.frames.values())


def read_chrome(path):
    """A ChromeFile, or None when path is not Chrome trace JSON."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return None
    events = doc.get("traceEvents") if isinstance(doc, dict) else doc
    if not isinstance(events, list):
        return None
    return ChromeFile(path, doc)


def read_speedscope(path):
    """The document of a speedscope-format file (`ptcall export --format speedscope`), or None."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or not str(doc.get("$schema", "")).startswith(
            "https://www.speedscope.app/file-format-schema"):
        return None
    return doc


def speedscope_file_checks(doc, name, checks):
    """The file before the viewer: evented profiles whose events are in order and nested.
    Returns function name -> calls (opens)."""
    frames = doc["shared"]["frames"]
    calls, problems = {}, []
    for prof in doc["profiles"]:
        stack, last = [], prof.get("startValue", 0)
        for e in prof["events"]:
            if e["at"] < last:
                problems.append(f"{prof['name']}: time goes back at {e}")
            last = e["at"]
            if e["type"] == "O":
                stack.append(e["frame"])
                n = frames[e["frame"]]["name"]
                calls[n] = calls.get(n, 0) + 1
            elif not stack or stack.pop() != e["frame"]:
                problems.append(f"{prof['name']}: {e} closes a frame not on top")
        if stack:
            problems.append(f"{prof['name']}: {len(stack)} frames left open")
    checks.check(prof_ok := not problems and all(p["type"] == "evented" for p in doc["profiles"]),
                 f"{name}: evented profiles, events in order and nested"
                 + ("" if prof_ok else f": {problems[:3]}"))
    return calls


def chrome_thread_names(path):
    """'NAME (pid P, tid T)' for each thread of a chrome export (its metadata)."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError, TypeError):
        return None
    return sorted(f"{e['args']['name']} (pid {e['pid']}, tid {e['tid']})"
                  for e in doc["traceEvents"] if e.get("ph") == "M" and e["name"] == "thread_name")


FOLDED_RE = re.compile(r"^(.*) (\d+)$")


def read_folded(path):
    """Folded stacks: {path tuple: weight} and the lines speedscope's reader would drop (it
    takes `/^(.*) (\\d+)$/`, integer weights only)."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except (OSError, ValueError) as e:
        raise Infra(f"cannot read {path}: {e}")
    stacks, bad = {}, []
    for no, line in enumerate(lines, 1):
        if not line.strip():
            continue
        m = FOLDED_RE.match(line)
        if not m:
            bad.append(f"line {no}: {line[:80]!r}")
            continue
        p = tuple(m.group(1).split(";"))
        stacks[p] = stacks.get(p, 0) + int(m.group(2))
    return stacks, bad


class Tree:
    """The calling-context tree of folded stacks: node = path from the outermost frame;
    own = the weight of the path's line, weight = own plus the weights of its subtree."""

    def __init__(self, stacks):
        self.own = dict(stacks)
        self.weight = {}
        for p, w in stacks.items():
            for i in range(1, len(p) + 1):
                self.weight[p[:i]] = self.weight.get(p[:i], 0) + w
        self.root_weight = sum(stacks.values())

    def figures(self):
        """Per function: (total = weight of its nodes with no ancestor of the same name,
        own = the sum of its nodes' own weights)."""
        tot, own = Counter(), Counter()
        for p, w in self.weight.items():
            f = p[-1]
            own[f] += self.own.get(p, 0)
            if f not in p[:-1]:
                tot[f] += w
        return tot, own

    def callees(self):
        out = {}
        for p in self.weight:
            if len(p) > 1:
                out.setdefault(p[-2], set()).add(p[-1])
        return out


# Why the times get a tolerance of 1 ns per frame, on top of the rounding of what a viewer
# shows. The exports (outputs/driver.c) convert each event's TSC value to ns on its own
# (floor(ticks x mult >> shift)) and take a call's duration as end - start of the converted
# times, so that a call's start plus its duration is its end and calls that follow each other
# meet exactly; `ptcall report` adds up each function's ticks and converts the sum once. A
# converted time is up to 1 ns below the exact one, so each duration is within 1 ns of the
# exact value (either way), and a function's total over its calls can differ from the
# report's by up to `calls x 1 ns`. In full:
#   total: frames(f) x 1 ns + 1 ns. frames(f) = its calls, plus the frames a fork child starts
#          inside (they count from the fork, another converted time); the 1 ns is the report's
#          own single conversion;
#   self:  (frames(f) + callee frames(f)) x 1 ns + 1 ns: self time is a frame's duration minus
#          the durations of the frames directly inside it, each of which can be 1 ns off.
# frames(f) and callee frames(f) are counted in a chrome export of the same trace when one is
# at hand (--chrome, or the profile itself), else taken as the report's calls of f and of the
# functions the profile shows f calling (each an upper bound). Traces without a time base
# (ticks) are not converted: no tolerance then.
class Tolerance:
    def __init__(self, funcs, namer, rep, chrome=None, callees=None):
        self.ns = rep.get("time_unit") == "ns"
        self.frames, self.callee_frames = Counter(), Counter()
        if chrome is not None:
            for n, c in chrome.frames.items():
                self.frames[namer(n)] += c
            for n, c in chrome.callee_frames.items():
                self.callee_frames[namer(n)] += c
            self.source = f"frames counted in {os.path.basename(chrome.path)}"
        else:
            for n, f in funcs.items():
                self.frames[n] = f["calls"] or 0
            for n, cs in (callees or {}).items():
                self.callee_frames[n] = sum((funcs.get(c) or {}).get("calls") or 0 for c in cs)
            self.source = "frames taken as the report's calls"

    def total(self, f):
        return (self.frames[f] + 1) if self.ns else 0

    def self_(self, f):
        return (self.frames[f] + self.callee_frames[f] + 1) if self.ns else 0


# ---------------------------------------------------------------------------------------------
# HTTP server on 127.0.0.1 (a thread of this process)

class Server:
    """Serves root_dir (changeable between jobs) at / and the given files at /data/NAME;
    records every request."""

    def __init__(self, root_dir, files=None):
        self.root_dir = root_dir
        self.files = dict(files or {})  # name -> path
        self.requests = []
        server = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *a, **kw):
                super().__init__(*a, directory=server.root_dir, **kw)

            def translate_path(self, path):
                # the root as it is now: Chromium opens connections ahead of its requests, so a
                # handler can be made (at accept) while an earlier job's root is still set
                self.directory = server.root_dir
                p = urllib.parse.unquote(urllib.parse.urlsplit(path).path)
                if p.startswith("/data/"):
                    return server.files.get(p[len("/data/"):], os.path.join(server.root_dir, ".nonexistent"))
                return super().translate_path(path)

            def do_GET(self):
                if self.path == "/favicon.ico" and not os.path.isfile(os.path.join(server.root_dir, "favicon.ico")):
                    self.send_response(204)  # no icon, and no 404 in the browser's console
                    self.end_headers()
                    return
                super().do_GET()

            def end_headers(self):
                self.send_header("Cache-Control", "no-store")
                super().end_headers()

            def log_request(self, code="-", size="-"):
                server.requests.append((self.command, self.path, int(code) if str(code).isdigit() else code))

            def log_message(self, *a):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.origin = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.2},
                                       name="viewer-http", daemon=True)
        self.thread.start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)
        if self.thread.is_alive():
            print("warning: the HTTP server thread did not stop within 5 s", file=sys.stderr)


# ---------------------------------------------------------------------------------------------
# headless Chromium through chromedriver

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    # speedscope draws its flame charts with WebGL; without a GPU, Chromium's automatic fallback
    # to its software renderer (SwiftShader) is deprecated ("use --enable-unsafe-swiftshader")
    "--enable-unsafe-swiftshader",
    "--no-proxy-server", "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
    "--disable-default-apps", "--disable-extensions", "--no-default-browser-check",
    "--lang=en-US", "--force-device-scale-factor=1", "--window-size=1280,900",
]
WINDOW = (1280, 900)
TALL_WINDOW = (1280, 3000)


class Browser:
    def __init__(self, args, artefacts):
        for exe, pkg in ((args.chromium, "chromium"), (args.chromedriver, "chromium-driver")):
            if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
                raise Infra(f"{exe} is missing: install Debian's {pkg} package (scripts/setup.sh does)")
        try:
            from selenium import webdriver
            from selenium.webdriver.chrome.service import Service
            from selenium.webdriver.remote.remote_connection import RemoteConnection
        except ImportError as e:
            raise Infra(f"selenium is missing ({e}): install Debian's python3-selenium "
                        f"and run this with {DEBIAN_PYTHON}")
        # every request to chromedriver is bounded; the overall deadline is the SIGALRM watchdog
        RemoteConnection.set_timeout(30)
        self.profile_dir = tempfile.mkdtemp(prefix="ptcall-chromium-")
        self.driver = None
        opts = webdriver.ChromeOptions()
        opts.binary_location = args.chromium
        for f in CHROMIUM_FLAGS:
            opts.add_argument(f)
        opts.add_argument(f"--user-data-dir={self.profile_dir}")
        opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        # an alert (speedscope's "Unrecognized format!") stays open and fails every command, so
        # that its text is reported instead of being dismissed unseen
        opts.set_capability("unhandledPromptBehavior", "ignore")
        # chromedriver in a session of its own, so that its Chromium processes can be ended as
        # one process group (by chromedriver's own pid) if quitting fails
        self.service = Service(args.chromedriver, log_path=os.path.join(artefacts, "chromedriver.log"),
                               popen_kw={"start_new_session": True})
        try:
            self.driver = webdriver.Chrome(service=self.service, options=opts)
        except BaseException as e:
            if not isinstance(e, Exception):  # the deadline
                self.close()
                raise
            self.close()
            raise Infra(f"could not start {args.chromium} through {args.chromedriver}: "
                        f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''} "
                        f"(see {artefacts}/chromedriver.log)")
        self.driver.set_page_load_timeout(30)
        self.driver.set_script_timeout(20)
        caps = self.driver.capabilities
        print(f"browser: {caps.get('browserName')} {caps.get('browserVersion')}, chromedriver "
              f"{caps.get('chrome', {}).get('chromedriverVersion', '?').split(' ')[0]}", flush=True)

    def reset(self):
        """Between jobs: no alert, an empty page, the usual window, the console read out."""
        try:
            self.driver.switch_to.alert.dismiss()
        except Exception:
            pass
        self.driver.get("about:blank")
        self.driver.set_window_size(*WINDOW)
        self.console_log()

    def alive(self):
        try:
            self.driver.execute_script("return 1")
            return True
        except Exception:
            return False

    def console_log(self):
        try:
            return self.driver.get_log("browser")
        except Exception:
            return []

    def close(self):
        """Quits Chromium and chromedriver; never waits more than about 15 s."""
        if self.driver is not None:
            t = threading.Thread(target=self._quit, daemon=True)
            t.start()
            t.join(10)
        proc = getattr(self.service, "process", None)
        if proc is not None:
            if proc.poll() is None:
                t = threading.Thread(target=self.service.stop, daemon=True)
                t.start()
                t.join(5)
            try:  # whatever is left of chromedriver's process group (its Chromium)
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                proc.wait(2)
            except subprocess.TimeoutExpired:
                pass
        shutil.rmtree(self.profile_dir, ignore_errors=True)

    def _quit(self):
        try:
            self.driver.quit()
        except Exception:
            pass

    def script(self, js, *a):
        """execute_script; an alert the page raised is reported as Infra with its text."""
        from selenium.common.exceptions import UnexpectedAlertPresentException
        try:
            return self.driver.execute_script(js, *a)
        except UnexpectedAlertPresentException as e:
            raise Infra(f"the page raised an alert: {e.alert_text!r}")

    def async_script(self, js, *a):
        from selenium.common.exceptions import UnexpectedAlertPresentException
        try:
            return self.driver.execute_async_script(js, *a)
        except UnexpectedAlertPresentException as e:
            raise Infra(f"the page raised an alert: {e.alert_text!r}")

    def settle(self):
        """Waits for three animation frames (the page's renders after a state change)."""
        self.async_script("const done = arguments[arguments.length - 1];"
                          "requestAnimationFrame(() => requestAnimationFrame(() => "
                          "requestAnimationFrame(() => setTimeout(done, 50))));")

    def press(self, key):
        from selenium.webdriver.common.action_chains import ActionChains
        ActionChains(self.driver).send_keys(key).perform()

    def screenshot(self, path):
        if not self.driver.save_screenshot(path):
            raise Infra(f"could not save a screenshot to {path}")
        print(f"screenshot: {path}", flush=True)

    def only_local_resources(self, origin, checks):
        urls = self.script("return performance.getEntriesByType('resource').map(e => e.name)"
                           ".concat([location.href])")
        foreign = [u for u in urls if not (u.startswith(origin + "/") or u.startswith("data:")
                                           or u.startswith("blob:"))]
        checks.check(not foreign, f"page loaded {len(urls)} resources, all from {origin}"
                     + (f"; others: {foreign[:5]}" if foreign else ""))


def wait_for(deadline_s, what, fn, interval=0.1):
    """Polls fn() until it returns something true; raises Infra after deadline_s."""
    end = time.monotonic() + deadline_s
    while True:
        v = fn()
        if v:
            return v
        if time.monotonic() > end:
            raise Infra(f"timed out after {deadline_s} s waiting for {what}")
        time.sleep(interval)


# ---------------------------------------------------------------------------------------------
# speedscope

def find_speedscope(explicit):
    if explicit:
        if not os.path.isfile(os.path.join(explicit, "index.html")):
            raise Infra(f"{explicit} has no index.html")
        return explicit
    pkg = os.path.join(ROOT, "web", "node_modules", "speedscope")
    if not os.path.isdir(pkg):
        raise Infra(f"{pkg} is missing: run scripts/setup.sh (npm ci --prefix web)")
    preferred = os.path.join(pkg, "dist", "release")
    if os.path.isfile(os.path.join(preferred, "index.html")):
        return preferred
    for d, _, files in os.walk(pkg):
        if "index.html" in files and any(f.startswith("speedscope") and f.endswith(".js") for f in files):
            return d
    raise Infra(f"no built speedscope (index.html beside speedscope-*.js) under {pkg}")


# Finds the Sandwich view's table (src/views/profile-table-view.tsx in speedscope 1.25): a header
# <table> whose last <th> is "Symbol Name", followed by the ScrollableListView <div> that renders
# only the rows in view. Its first child <div> is (number of frames) x 20 px high; each row is a
# <tr> of three <td>: "total (pct)", "self (pct)", the frame name. The row's index is its offset
# in that child / 20 px.
JS_SANDWICH_FIND = r"""
function sandwich() {
  const out = {};
  const body = document.body;
  out.text = body ? body.innerText.slice(0, 400) : '';
  if (/Something went wrong/.test(out.text)) { out.error = 'speedscope shows "Something went wrong"'; return [out]; }
  const th = Array.from(document.querySelectorAll('th')).find(t => t.textContent.trim().endsWith('Symbol Name'));
  if (!th) return [out];
  const header = th.closest('table');
  const scroller = header && header.nextElementSibling;
  if (!scroller || !scroller.firstElementChild) return [out];
  const content = scroller.firstElementChild;
  out.rowHeight = 20;
  out.frames = Math.round(content.getBoundingClientRect().height / out.rowHeight);
  out.scrollHeight = scroller.scrollHeight;
  out.clientHeight = scroller.clientHeight;
  out.scrollTop = scroller.scrollTop;
  // "(2/3)" after the profile's name in the toolbar when the file holds several profiles
  const spans = Array.from(document.querySelectorAll('span'));
  const idx = spans.map(s => /^\((\d+)\/(\d+)\)$/.exec(s.textContent.trim())).find(m => m);
  out.profileIndex = idx ? +idx[1] : 1;
  out.profileCount = idx ? +idx[2] : 1;
  const nameSpan = idx ? spans.find(s => s.children.length && /\(\d+\/\d+\)$/.test(s.textContent.trim())) : null;
  out.profileName = nameSpan ? nameSpan.textContent.trim() : '';
  return [out, scroller, content];
}
"""

JS_SANDWICH = JS_SANDWICH_FIND + r"""
return sandwich()[0];
"""

# Scrolls the table to arguments[0] px, waits until the rows in view are rendered (at most 30
# animation frames), returns them with their indexes.
JS_SANDWICH_ROWS = JS_SANDWICH_FIND + r"""
const done = arguments[arguments.length - 1];
const want = arguments[0];
let [out, scroller, content] = sandwich();
if (!scroller) { done(out); return; }
scroller.scrollTop = want;
let frames = 0;
function collect() {
  [out, scroller, content] = sandwich();
  const top = content.getBoundingClientRect().top;
  out.rows = [];
  for (const tr of scroller.querySelectorAll('tr')) {
    const td = tr.querySelectorAll('td');
    if (td.length !== 3) continue;
    out.rows.push({index: Math.round((tr.getBoundingClientRect().top - top) / out.rowHeight),
                   total: td[0].textContent.trim(), self: td[1].textContent.trim(),
                   name: td[2].textContent});
  }
  const first = Math.floor(scroller.scrollTop / out.rowHeight);
  const last = Math.min(out.frames - 1, Math.floor((scroller.scrollTop + scroller.clientHeight - 1) / out.rowHeight));
  const have = new Set(out.rows.map(r => r.index));
  let complete = true;
  for (let i = first; i <= last; i++) if (!have.has(i)) { complete = false; break; }
  if (complete || ++frames > 30) { out.complete = complete; done(out); }
  else requestAnimationFrame(collect);
}
requestAnimationFrame(collect);
"""

UNIT_NS = {"ns": 1.0, "µs": 1e3, "μs": 1e3, "us": 1e3, "ms": 1e6, "s": 1e9}


def parse_shown(text, raw_unit):
    """speedscope's formatValue(): TimeFormatter ('1.23ms', '456.00µs', '2:05') or, for unitless
    profiles (folded), Number.toLocaleString() ('2,007'), then ' (45%)'. Returns (value in ns or
    raw units, half of the last shown digit = the rounding tolerance)."""
    m = re.match(r"^\s*(.*?)\s*\(([^)]*)\)\s*$", text)
    if not m:
        raise ValueError(f"unexpected cell {text!r}")
    v = m.group(1)
    neg = v.startswith("-")
    v = v.lstrip("-")
    if raw_unit:
        s = v.replace(",", "")
        val = float(s)
        dec = len(s.split(".")[1]) if "." in s else 0
        tol = 0.5 * 10 ** -dec if dec else 0.5
        # toLocaleString shows at most 3 decimals
        return (-val if neg else val), max(tol, 0.0005)
    mm = re.match(r"^(\d+):(\d\d)$", v)
    if mm:  # minutes:seconds, both floored
        val = (int(mm.group(1)) * 60 + int(mm.group(2))) * 1e9
        return (-val if neg else val), 1e9
    mu = re.match(r"^([0-9.]+)\s*(ns|µs|μs|us|ms|s)$", v)
    if not mu:
        raise ValueError(f"unexpected value {v!r} in cell {text!r}")
    num, unit = mu.group(1), mu.group(2)
    dec = len(num.split(".")[1]) if "." in num else 0
    scale = UNIT_NS[unit]
    val = float(num) * scale
    return (-val if neg else val), 0.5 * 10 ** -dec * scale


def split_args_suffix(shown):
    """speedscope names a trace event's frame `name + " " + JSON.stringify(args)` when the event
    has args (src/import/trace-event.ts getEventId). Returns (name, args-suffix or None)."""
    i = shown.find(" {")
    while i >= 0:
        tail = shown[i + 1:]
        try:
            if isinstance(json.loads(tail), dict):
                return shown[:i], tail
        except ValueError:
            pass
        i = shown.find(" {", i + 1)
    return shown, None



def read_profile_table(br, load_timeout):
    """Every row of the Sandwich table of the profile on screen, in order; the table renders only
    the rows in view, so it is scrolled through, one view at a time."""
    st = br.script(JS_SANDWICH)
    n = st["frames"]
    rows = {}
    top = 0
    end = time.monotonic() + load_timeout
    while True:
        got = br.async_script(JS_SANDWICH_ROWS, top)
        if not got.get("rows") and n:
            raise Infra(f"the Sandwich table has no rows in view at {top} px: {got.get('text', '')[:200]!r}")
        for r in got["rows"]:
            rows[r["index"]] = r
        if top + got["clientHeight"] >= got["scrollHeight"]:
            break
        top += max(got["clientHeight"] - st["rowHeight"], st["rowHeight"])
        if time.monotonic() > end:
            raise Infra("timed out reading the Sandwich table")
    br.async_script(JS_SANDWICH_ROWS, 0)
    missing = [i for i in range(n) if i not in rows]
    if missing:
        raise Infra(f"read {len(rows)} of the {n} rows of the Sandwich table (missing rows {missing[:10]})")
    return st, [rows[i] for i in range(n)]




class Session:
    """The local server and the one Chromium that every job of a run shares (started when the
    first job needs them)."""

    def __init__(self, opts, log_dir):
        self.opts = opts
        self.log_dir = log_dir
        self.server = None
        self.br = None
        self.empty = None
        self.njobs = 0

    def serve(self, root, path):
        """Serves path as /data/JOB/NAME with root at /; returns (server, the file's URL path)."""
        if root is None:
            if self.empty is None:
                self.empty = tempfile.mkdtemp(prefix="ptcall-viewer-www-")
            root = self.empty
        if self.server is None:
            self.server = Server(root)
        self.server.root_dir = root
        self.njobs += 1
        key = f"{self.njobs}/{os.path.basename(path)}"
        self.server.files[key] = os.path.abspath(path)
        return self.server, "data/" + key

    def browser(self):
        if self.br is None:
            os.makedirs(self.log_dir, exist_ok=True)
            self.br = Browser(self.opts, self.log_dir)
        else:
            self.br.reset()
        return self.br

    def close(self):
        signal.alarm(0)  # the cleanup is bounded by itself
        if self.br is not None:
            self.br.close()
            self.br = None
        if self.server is not None:
            self.server.stop()
            self.server = None
        if self.empty:
            shutil.rmtree(self.empty, ignore_errors=True)


def console_problems(log):
    """speedscope's import warnings that mean it built a different call tree than the file's
    (src/import/trace-event.ts): an end event it ignored, or frames it closed itself."""
    dropped, closed, substituted = [], [], []
    for l in log:
        m = l.get("message", "")
        if "Tried to end" in m and ("Doing nothing instead" in m or "stack was empty" in m):
            dropped.append(m)
        elif "was still open at end of profile" in m:
            closed.append(m)
        elif "Tried to end" in m and "instead" in m:
            substituted.append(m)
    return dropped, closed, substituted


def short_msg(m, n=160):
    m = re.sub(r"^\S+ \d+:\d+ ", "", m)  # the script's URL and position
    if m.startswith('"'):
        try:
            m = json.loads(m)  # chromedriver quotes console.warn's string
        except ValueError:
            pass
    return m if len(m) <= n else m[:n] + "..."


def run_speedscope(job, checks, sess):
    ss = read_speedscope(job.profile) if os.path.isfile(job.profile) else None
    chrome = read_chrome(job.profile) if os.path.isfile(job.profile) and ss is None else None
    namer = NAMERS["full"] if chrome is not None or ss is not None else NAMERS["folded"]
    rep, funcs, dups = load_report(job.report, namer)
    # folded stacks: speedscope shows unitless weights
    raw_unit = chrome is None and ss is None
    for name in sorted(dups):
        checks.note(f"the report has several functions shown as {name!r} (other modules or files, "
                    f"or C++ overloads in folded stacks): their rows are added up, as the viewer "
                    f"shows one frame per name")
    if not rep.get("timed") or rep.get("time_unit") != "ns":
        raise Infra(f"{job.report}: time_unit is {rep.get('time_unit')!r}: the speedscope check "
                    f"needs a timed report in ns")
    if not os.path.isfile(job.profile):
        raise Infra(f"no such file: {job.profile}")
    name = os.path.basename(job.profile)
    # speedscope picks the importer by file name first (src/import/index.ts): these names make it
    # read a Trace Event Format file as something else and fail
    if ss is None and re.search(r"\.chrome\.json$|Trace-\d{8}T\d{6}|Profile-\d{8}T\d{6}|\.speedscope\.json$", name):
        checks.note(f"speedscope reads a file named {name!r} as a Chrome DevTools / speedscope "
                    f"profile by its name, not as Trace Event Format: expect it to fail")
    tree = None
    ss_calls = None
    if ss is not None:
        ss_calls = speedscope_file_checks(ss, name, checks)
    elif chrome is not None:
        # the file itself, before the viewer: the shape speedscope needs
        checks.check(not chrome.problems, f"{name}: begin and end events pair up per thread and "
                     f"time never goes back" + (f": {chrome.problems[:3]}" if chrome.problems else ""))
        # speedscope 1.25 (src/import/trace-event.ts) ends a frame only on an "E" event whose
        # name is the open frame's: it ignores an unnamed "E" ("Tried to end "(unnamed)" when
        # "f" was on the top of the stack. Doing nothing instead") and closes what is left open
        # at the end of the profile
        checks.check(chrome.unnamed_ends == 0 and not chrome.mismatched_ends,
                     f"{name}: every E event names the frame it ends (speedscope ignores one that "
                     f"does not)" + (f": {chrome.unnamed_ends} of {sum(chrome.frames.values())} E "
                                     f"events have no name" if chrome.unnamed_ends else "")
                     + (f"; {chrome.mismatched_ends[:3]}" if chrome.mismatched_ends else ""))
        if chrome.ends_with_args:
            checks.note(f"{name}: {sum(chrome.ends_with_args.values())} E events carry args "
                        f"({dict(list(chrome.ends_with_args.items())[:3])}): speedscope keys a "
                        f"frame by name and args, warns and ends the open frame")
        od = chrome.other if isinstance(chrome.other, dict) else {}
        want = od.get("calls")
        try:
            want = int(want)
        except (TypeError, ValueError):
            want = None
        got = sum(chrome.calls.values())
        checks.check(want is not None and got == want,
                     f"{name}: {got} begin events are calls ({chrome.inherited} more are frames "
                     f"fork children start inside), otherData.calls says {od.get('calls')!r}")
    else:
        stacks, bad = read_folded(job.profile)
        checks.check(not bad, f"{name}: every line is 'frames weight' with an integer weight "
                     f"(speedscope drops other lines)" + (f": {bad[:3]}" if bad else ""))
        tree = Tree(stacks)
        checks.note(f"{name} is not Chrome trace JSON: read as folded stacks weighted by "
                    f"{'calls' if job.folded_weight == 'calls' else 'time (' + str(rep.get('time_unit')) + ')'}"
                    f" (--folded-weight); names compared without C++ parameter lists")
    structure = chrome if chrome is not None else (read_chrome(job.chrome) if job.chrome else None)
    if job.chrome and structure is None:
        raise Infra(f"--chrome {job.chrome} is not Chrome trace JSON")
    tol = Tolerance(funcs, namer, rep, structure, tree.callees() if tree else None)
    shown_profiles = []
    rel = find_speedscope(job.speedscope_dir)
    version = "?"
    try:
        with open(os.path.join(rel, "release.txt")) as f:
            version = f.readline().strip()
    except OSError:
        pass
    print(f"speedscope: {version} from {rel}", flush=True)

    server, data = sess.serve(rel, job.profile)
    first_request = len(server.requests)
    br = sess.browser()
    url = f"{server.origin}/index.html#profileURL={urllib.parse.quote(data, safe='')}&view=sandwich"
    print(f"open: {url}", flush=True)
    br.driver.get(url)

    def loaded():
        st = br.script(JS_SANDWICH) or {}
        if st.get("error"):
            raise Infra(st["error"])
        return st if st.get("frames") else None
    try:
        st = wait_for(job.load_timeout, "speedscope to show the profile's Sandwich table", loaded)
    except Infra as e:
        log = br.console_log()
        msgs = [l["message"] for l in log if (l.get("level") in ("SEVERE", "WARNING")
                or "Failed" in l.get("message", "") or "Importing" in l.get("message", ""))
                and "GL Driver Message" not in l.get("message", "")]
        try:
            br.screenshot(os.path.join(job.artefacts, "speedscope-failed.png"))
        except Exception:
            pass
        failed = [r for r in server.requests[first_request:] if r[2] not in (200, 204)]
        raise Infra(f"{e}; console: {msgs[-5:]}" + (f"; failed requests: {failed[:5]}" if failed else ""))
    checks.ok(f"speedscope loaded {name}: {st['profileCount']} profile(s), "
              f"{st['frames']} frames in the first")
    requests = server.requests[first_request:]
    served = [r for r in requests if r[1].startswith("/data/")]
    checks.check(any(r[2] == 200 for r in served),
                 f"the profile was fetched from the local server ({served[:1]})")
    bad = [r for r in requests if r[2] not in (200, 204)]
    checks.check(not bad, "every request to the local server succeeded" + (f": {bad}" if bad else ""))
    br.only_local_resources(server.origin, checks)

    # screenshots: the Sandwich view, and the time-ordered flame chart (WebGL) of profile 1
    br.settle()
    br.screenshot(os.path.join(job.artefacts, "speedscope-sandwich-1.png"))
    br.press("1")
    br.settle()
    time.sleep(0.2)
    br.screenshot(os.path.join(job.artefacts, "speedscope-time-order-1.png"))
    br.press("3")
    wait_for(10, "the Sandwich view again", lambda: br.script(JS_SANDWICH).get("frames"))
    # a tall window shows more rows at once: fewer scroll steps through long tables
    br.driver.set_window_size(*TALL_WINDOW)

    page = {}      # function name -> [total, self, tol_total, tol_self, profiles, shown totals, shown selfs]
    shown_by_func = {}  # function name -> {profile: set of shown frame names}
    count = st["profileCount"]
    for i in range(1, count + 1):
        if i > 1:
            br.press("n")
            wait_for(10, f"profile {i}/{count}",
                     lambda: br.script(JS_SANDWICH).get("profileIndex") == i)
            wait_for(10, f"profile {i}'s table", lambda: br.script(JS_SANDWICH).get("frames"))
            if i <= 4:
                br.driver.set_window_size(*WINDOW)
                br.settle()
                br.screenshot(os.path.join(job.artefacts, f"speedscope-sandwich-{i}.png"))
                br.driver.set_window_size(*TALL_WINDOW)
        st, rows = read_profile_table(br, job.load_timeout)
        pname = re.sub(r"\s*\(\d+/\d+\)$", "", st.get("profileName") or name)
        print(f"profile {i}/{count}: {pname}: {len(rows)} frames", flush=True)
        shown_profiles.append(pname)
        for r in rows:
            base, suffix = split_args_suffix(r["name"]) if chrome is not None else (r["name"], None)
            if suffix is not None and job.strict_names:
                checks.fail(f"speedscope names the frame {r['name']!r}, not {base!r}: the events' "
                            f"args become part of the name (--strict-names)")
            shown_by_func.setdefault(base, {}).setdefault(i, set()).add(r["name"])
            t, tt = parse_shown(r["total"], raw_unit)
            s, ts = parse_shown(r["self"], raw_unit)
            acc = page.setdefault(base, [0.0, 0.0, 0.0, 0.0, 0, [], []])
            acc[0] += t
            acc[1] += s
            acc[2] += tt
            acc[3] += ts
            acc[4] += 1
            acc[5].append(r["total"].split(" (")[0])
            acc[6].append(r["self"].split(" (")[0])

    with_args = sorted(f for f, per in shown_by_func.items()
                       if any(sh != f for names in per.values() for sh in names))
    if with_args:
        example = next(sh for names in shown_by_func[with_args[0]].values() for sh in names
                       if sh != with_args[0])
        checks.note(f"speedscope shows trace events with args as `name {{args}}`, e.g. {example!r} "
                    f"({len(with_args)} of {len(shown_by_func)} functions); compared by the name before the args")
    for f, per in sorted(shown_by_func.items()):
        split = {p: names for p, names in per.items() if len(names) > 1}
        if split:
            p, names = next(iter(split.items()))
            checks.fail(f"function {f!r} is split into {len(names)} frames in speedscope profile {p} "
                        f"because its events' args differ: {sorted(names)[:3]}")

    names_page, names_rep = set(page), set(funcs)
    checks.check(names_page == names_rep,
                 f"frame names: {len(names_page)} on the page, {len(names_rep)} functions in the report"
                 + (f"; only on the page: {sorted(names_page - names_rep)[:10]}" if names_page - names_rep else "")
                 + (f"; only in the report: {sorted(names_rep - names_page)[:10]}" if names_rep - names_page else ""))
    unit = "" if raw_unit else " ns"
    by_calls = raw_unit and job.folded_weight == "calls"
    if not by_calls and tol.ns:
        checks.note(f"times: within 1 ns per frame ({tol.source}) plus the rounding shown: the "
                    f"exports convert each event's time to ns, the report each function's sum")
    for f in sorted(names_page & names_rep, key=lambda f: (-(funcs[f]["total"] or 0), f)):
        tot, slf, tol_t, tol_s, nprof, shown_t, shown_s = page[f]
        pairs = [("total", "total", tot, tol_t + tol.total(f), shown_t),
                 ("self", "self", slf, tol_s + tol.self_(f), shown_s)]
        if by_calls:
            # folded by calls: a stack's weight is its calls, so a function's self weight is
            # its calls; its total weight (calls of its subtree) has no figure in the report
            pairs = [("calls", "calls", slf, tol_s, shown_s)]
        for label, field, got, t, shown in pairs:
            want = funcs[f][field]
            if want is None:
                checks.fail(f"{field:5} {f}: the report has no {field} (untimed?)")
                continue
            t = t + 1e-9 * abs(want) + 1e-6
            checks.check(abs(got - want) <= t,
                         f"{label:5} {f}: page {' + '.join(shown)} = {got:.6g}{unit} (±{t:.3g}), "
                         f"report {field} {want}{unit}")
    # Call counts: speedscope shows none. Its Sandwich table has total and self weight only;
    # the time-ordered flame chart draws one box per call, but on a WebGL canvas, not in the
    # DOM; the left-heavy chart and the speedscope JSON export merge calls. So the counts are
    # checked from the file that speedscope loaded (one 'B' event per call), not from the page.
    if chrome is not None:
        for f in sorted(names_rep, key=lambda f: (-(funcs[f]["total"] or 0), f)):
            got, want = chrome.calls.get(f, 0), funcs[f]["calls"]
            checks.check(got == want, f"calls {f}: {got} B events in {name} (speedscope shows no "
                         f"call counts; frames a fork child starts inside not counted), report {want}")
    elif ss_calls is not None:
        for f in sorted(names_rep, key=lambda f: (-(funcs[f]["total"] or 0), f)):
            # the frames a fork child starts inside open too (at the fork), as chrome's B events
            inh = (structure.frames.get(f, 0) - structure.calls.get(f, 0)) if structure else 0
            got, want = ss_calls.get(f, 0), funcs[f]["calls"]
            checks.check(got == want + inh, f"calls {f}: {got} open events in {name} (speedscope "
                         f"shows no call counts), report {want}"
                         + (f" + {inh} frames fork children start inside" if inh else ""))
    elif not by_calls:
        checks.note("call counts: not in folded stacks by time, and speedscope shows none: not checked")
    if ss is not None:
        want = sorted(p["name"] for p in ss["profiles"])
        if count > 1:
            checks.check(sorted(shown_profiles) == want,
                         f"speedscope shows one profile per thread, named as the file names them "
                         f"({shown_profiles})")
        else:  # one profile: the toolbar shows the file's name, not the profile's
            checks.check(count == len(want), f"speedscope shows the file's one profile ({want})")
            shown_profiles = want
        threads = chrome_thread_names(job.chrome) if job.chrome else None
        if threads is not None:
            checks.check(sorted(re.sub(r" \[.*\]$", "", p) for p in shown_profiles) == threads,
                         f"the profiles are the threads of the chrome export of the same trace "
                         f"({threads})")
    log = br.console_log()
    with open(os.path.join(job.artefacts, "speedscope-console.log"), "w") as f:
        for l in log:
            f.write(f"{l.get('level')} {l.get('message')}\n")
    dropped, closed, substituted = console_problems(log)
    checks.check(not dropped and not closed,
                 "speedscope built the file's call tree: it ignored no end event and closed no frame "
                 "itself" + (f": {len(dropped)} ignored, e.g. {short_msg(dropped[0])!r}" if dropped else "")
                 + (f"; {len(closed)} closed at the end, e.g. {short_msg(closed[0])!r}" if closed else ""))
    if substituted:
        checks.note(f"speedscope warned {len(substituted)} times that an end event's name and args "
                    f"differ from the open frame's, e.g. {short_msg(substituted[0])!r}")
    severe = [l["message"] for l in log if l.get("level") == "SEVERE"]
    checks.check(not severe, "no errors in the browser console" + (f": {severe[:3]}" if severe else ""))


# ---------------------------------------------------------------------------------------------
# svg flame graph

JS_SVG = r"""
const root = document.documentElement;
const out = {root: root.localName, ns: root.namespaceURI, frames: []};
const pe = document.querySelector('parsererror');  // Chromium's page for a file that is not well-formed XML
if (pe) { out.parseError = pe.textContent.slice(0, 300); return out; }
// everything the document holds: element kinds, and attributes that run or load something
out.elements = {};
out.badAttrs = [];
for (const el of document.getElementsByTagName('*')) {
  const k = (el.namespaceURI || '') + ' ' + el.localName;
  out.elements[k] = (out.elements[k] || 0) + 1;
  for (const a of el.attributes)
    if (/^on/i.test(a.localName) || /href$/i.test(a.localName) || /^(src|style)$/i.test(a.localName))
      out.badAttrs.push(el.localName + ' ' + a.name + '=' + a.value.slice(0, 60));
}
out.scripts = Array.from(document.getElementsByTagNameNS('http://www.w3.org/2000/svg', 'script'))
  .map(s => s.textContent);
if (root.localName !== 'svg') return out;
const vb = root.viewBox && root.viewBox.baseVal;
out.width = (vb && vb.width) ? vb.width : root.width.baseVal.value;
out.height = (vb && vb.height) ? vb.height : root.height.baseVal.value;
const r = root.getBoundingClientRect();
out.rendered = [r.width, r.height];
out.weightKind = root.getAttribute('data-weight');
for (const g of root.querySelectorAll('g.frame')) {
  const f = {name: g.getAttribute('data-name'), weight: g.getAttribute('data-weight'),
             depth: g.getAttribute('data-depth')};
  const rect = g.querySelector('rect');
  if (rect) { const b = rect.getBBox(); f.bbox = [b.x, b.y, b.width, b.height];
              const c = rect.getBoundingClientRect(); f.client = [c.width, c.height]; }
  const title = g.querySelector('title');
  f.title = title ? title.textContent : null;
  const text = g.querySelector('text');
  f.hasText = !!text;
  if (text) { f.text = text.textContent; const b = text.getBBox(); f.textBox = [b.x, b.width]; }
  out.frames.push(f);
}
return out;
"""

# the elements a ptcall flame graph consists of (outputs/svg.c): nothing that loads, and no
# script but ptcall's own (outputs/svg_script.js: zoom and search; none with --svg-static)
SVG_ELEMENTS = {"svg", "style", "rect", "text", "g", "title", "script"}


def svg_script_text():
    with open(os.path.join(ROOT, "outputs", "svg_script.js"), encoding="utf-8") as f:
        return "\n" + f.read()  # svg.c writes it after a newline, inside CDATA

# "name (N calls, X%)" when widths are calls, "name (1.234 ms, X%)" when they are time
TITLE_RE = re.compile(r"^(.*) \((?:(\d+) calls?|([0-9.]+) ?(ns|us|µs|μs|ms|s)), ([0-9.]+)%\)$", re.S)


def svg_xml_names(path, checks):
    """Parses the file with Python's XML parser (not Chromium's): the data-name of every frame,
    or None when it is not well-formed."""
    try:
        doc = ET.parse(path)
    except ET.ParseError as e:
        checks.fail(f"{os.path.basename(path)} is well-formed XML (xml.etree): {e}")
        return None
    root = doc.getroot()
    names = [g.get("data-name") for g in root.iter(f"{{{SVG_NS}}}g") if "frame" in (g.get("class") or "").split()]
    checks.ok(f"{os.path.basename(path)} is well-formed XML (xml.etree): <{root.tag.split('}')[-1]}>, "
              f"{len(names)} frames")
    return names


def run_svg(job, checks, sess):
    funcs = None
    namer = NAMERS["short"]
    rep = {}
    if job.report:
        rep, funcs, dups = load_report(job.report, namer)
        for n in sorted(dups):
            checks.note(f"the report has several functions shown as {n!r} (other modules or files, or "
                        f"C++ overloads: the flame graph shows names without parameters): their rows are added up")
    if not os.path.isfile(job.svg):
        raise Infra(f"no such file: {job.svg}")
    name = os.path.basename(job.svg)
    xml_names = svg_xml_names(job.svg, checks)
    tree = None
    if job.tree:
        stacks, bad = read_folded(job.tree)
        if bad:
            raise Infra(f"--tree {job.tree}: lines that are not 'frames weight': {bad[:3]}")
        # the folded file names frames as the svg does, but with ';' made ':'
        tree = Tree(stacks)
    structure = read_chrome(job.chrome) if job.chrome else None
    if job.chrome and structure is None:
        raise Infra(f"--chrome {job.chrome} is not Chrome trace JSON")
    server, data = sess.serve(None, job.svg)
    br = sess.browser()
    url = f"{server.origin}/{urllib.parse.quote(data)}"
    print(f"open: {url}", flush=True)
    br.driver.get(url)
    doc = wait_for(job.load_timeout, "the SVG document",
                   lambda: br.script("return document.readyState === 'complete' && document.documentElement"
                                     " ? true : null") and br.script(JS_SVG))
    if doc.get("parseError"):
        checks.fail(f"{name} is not well-formed XML: Chromium says {doc['parseError']!r}")
        br.screenshot(os.path.join(job.artefacts, "flamegraph-failed.png"))
        return
    if not checks.check(doc["root"] == "svg" and doc["ns"] == SVG_NS,
                        f"document element is <svg> in the SVG namespace (got <{doc['root']}> {doc['ns']})"):
        return
    others = {k: v for k, v in doc["elements"].items()
              if k.split(" ")[0] != SVG_NS or k.split(" ")[1] not in SVG_ELEMENTS}
    foreign = [t[:80] for t in doc["scripts"] if t != svg_script_text()]
    checks.check(not others and len(doc["scripts"]) <= 1 and not foreign and not doc["badAttrs"],
                 f"the page holds only {sorted(SVG_ELEMENTS)} elements "
                 f"({sum(doc['elements'].values())}), no script but ptcall's own "
                 f"(outputs/svg_script.js), no event handler, link or style "
                 f"attribute" + (f": also {others}" if others else "")
                 + (f"; {len(doc['scripts'])} scripts, other than ptcall's: {foreign}"
                    if foreign or len(doc["scripts"]) > 1 else "")
                 + (f"; {doc['badAttrs'][:3]}" if doc["badAttrs"] else ""))
    if xml_names is not None:
        dom_names = [f["name"] for f in doc["frames"]]
        checks.check(dom_names == xml_names, f"Chromium and xml.etree read the same {len(dom_names)} "
                     f"frame names" + ("" if dom_names == xml_names else
                                       f": {[(a, b) for a, b in zip(dom_names, xml_names) if a != b][:3]}"))
    W = float(doc["width"])
    # the whole drawing in the screenshot
    br.driver.set_window_size(int(max(800, min(4000, doc["rendered"][0] + 40))),
                              int(max(300, min(4000, doc["rendered"][1] + 160))))
    br.settle()
    br.screenshot(os.path.join(job.artefacts, "flamegraph.png"))
    frames = doc["frames"]
    if not checks.check(frames, f"{len(frames)} g.frame elements"):
        return
    bad = []
    for f in frames:
        problems = []
        if not f.get("bbox"):
            problems.append("no <rect>")
        elif not (f["bbox"][2] > 0 and f["bbox"][3] > 0 and f["client"][0] > 0 and f["client"][1] > 0):
            problems.append(f"empty rect bbox {f['bbox']}")
        if f["title"] is None:
            problems.append("no <title>")
        try:
            f["w8"] = float(f["weight"])
            f["d"] = int(f["depth"])
        except (TypeError, ValueError):
            problems.append(f"data-weight {f['weight']!r} / data-depth {f['depth']!r} not numbers")
        if problems:
            bad.append(f"{f.get('name')!r}: {', '.join(problems)}")
    checks.check(not bad, "every frame has a rendered <rect> (getBBox non-zero), <title>, "
                 "data-weight, data-depth" + (f": {bad[:5]}" if bad else ""))
    if bad:
        return
    roots = [f for f in frames if f["d"] == 0]
    if not checks.check(len(roots) == 1, f"one root frame (depth 0): {len(roots)}"):
        return
    root = roots[0]
    rx, _, rw, _ = root["bbox"]
    margin_r = W - (rx + rw)
    checks.check(abs(rx - margin_r) <= 0.5 and rw > 0.5 * W,
                 f"root frame {root['name']!r} spans the full width: x={rx:.2f} width={rw:.2f} of "
                 f"{W:g} (margins {rx:.2f} left, {margin_r:.2f} right)")
    outside = [f["name"] for f in frames
               if f["bbox"][0] < rx - 0.5 or f["bbox"][0] + f["bbox"][2] > rx + rw + 0.5]
    checks.check(not outside, "every frame lies within the root horizontally"
                 + (f": not {outside[:5]}" if outside else ""))
    rows_y = {}
    for f in frames:
        rows_y.setdefault(f["d"], set()).add(round(f["bbox"][1], 1))
    checks.check(all(len(ys) == 1 for ys in rows_y.values()),
                 f"frames of one depth share one row ({len(rows_y)} rows)")

    # parents: the frame one level up under the frame's left edge
    by_depth = {}
    for f in frames:
        by_depth.setdefault(f["d"], []).append(f)
    orphans, spills = [], []
    for f in frames:
        f["children"] = []
    for f in sorted(frames, key=lambda f: f["d"]):
        if f["d"] == 0:
            f["parent"] = None
            f["path"] = ()
            continue
        x0, x1 = f["bbox"][0], f["bbox"][0] + f["bbox"][2]
        cands = [p for p in by_depth.get(f["d"] - 1, [])
                 if p["bbox"][0] - 0.5 <= x0 < p["bbox"][0] + p["bbox"][2]]
        if not cands:
            orphans.append(f"{f['name']!r} at depth {f['d']} x={x0:.2f}..{x1:.2f}")
            f["parent"] = None
            f["path"] = None
            continue
        p = min(cands, key=lambda p: abs(p["bbox"][0] - x0))
        f["parent"] = p
        f["path"] = None if p.get("path") is None else p["path"] + (f["name"],)
        p["children"].append(f)
        if x1 > p["bbox"][0] + p["bbox"][2] + 0.5:
            spills.append(f"{f['name']!r} at depth {f['d']} ends at {x1:.2f}, its parent "
                          f"{p['name']!r} at {p['bbox'][0] + p['bbox'][2]:.2f}")
    checks.check(not orphans, "every frame but the root sits on a parent frame one level down"
                 + (f": not {orphans[:5]}" if orphans else ""))
    checks.check(not spills, "every frame lies within its parent horizontally (±0.5 px)"
                 + (f": not {spills[:5]}" if spills else ""))
    over = []
    for p in frames:
        if p["children"]:
            sw = sum(c["bbox"][2] for c in p["children"])
            if sw > p["bbox"][2] + 0.5:
                over.append(f"{p['name']!r} depth {p['d']}: children {sw:.2f} px > {p['bbox'][2]:.2f} px")
            sweight = sum(c["w8"] for c in p["children"])
            if sweight > p["w8"] * (1 + 1e-9) + 1e-9:
                over.append(f"{p['name']!r} depth {p['d']}: children weigh {sweight:g} > {p['w8']:g}")
    checks.check(not over, "children's widths (and weights) add up to at most their parent's"
                 + (f": {over[:5]}" if over else ""))
    scale = rw / root["w8"] if root["w8"] > 0 else 0
    skew = [f"{f['name']!r}: {f['bbox'][2]:.2f} px for weight {f['w8']:g} (expected {f['w8'] * scale:.2f})"
            for f in frames if abs(f["bbox"][2] - f["w8"] * scale) > 0.5 + 1e-6 * f["bbox"][2]]
    checks.check(not skew, "widths are proportional to data-weight (±0.5 px)" + (f": {skew[:5]}" if skew else ""))
    # what the widths are: the <svg>'s data-weight ("calls", or "self" = time in ns), else
    # what the tooltips say
    kind = (doc.get("weightKind") or "").strip()
    titles = [TITLE_RE.match((f["title"] or "").strip()) for f in frames]
    if kind not in ("calls", "self", "time"):
        kind = "calls" if titles and all(m and m.group(2) for m in titles) else "self"
        checks.note(f"the <svg> has no data-weight=calls|self: widths taken as {kind} from the tooltips")
    kind = "calls" if kind == "calls" else "time"
    print(f"widths: {kind}", flush=True)
    badt, zero = [], []
    for f, m in zip(frames, titles):
        form = "name (N calls, X%)" if kind == "calls" else "name (T unit, X%)"
        if not m or (kind == "calls") != bool(m.group(2)):
            badt.append(f"{f['name']!r}: tooltip {f['title']!r} is not '{form}'")
            continue
        if m.group(1) != f["name"]:
            badt.append(f"{f['name']!r}: tooltip names {m.group(1)!r}")
        if kind == "calls":
            if int(m.group(2)) != f["w8"]:
                badt.append(f"{f['name']!r}: tooltip {m.group(2)} calls, data-weight {f['w8']:g}")
        else:
            num, unit = m.group(3), m.group(4)
            dec = len(num.split(".")[1]) if "." in num else 0
            step = 10 ** -dec * UNIT_NS[unit]
            shown = float(num) * UNIT_NS[unit]
            # rounded or truncated to the last digit shown
            if abs(shown - f["w8"]) > step + 1e-9 * f["w8"]:
                badt.append(f"{f['name']!r}: tooltip {num} {unit}, data-weight {f['w8']:g} ns")
            if shown == 0 and f["w8"] > 0:
                zero.append(f"{f['name']!r} {f['title']!r} for {f['w8']:g} ns")
        pct = m.group(5)
        dec = len(pct.split(".")[1]) if "." in pct else 0
        want = 100.0 * f["w8"] / root["w8"] if root["w8"] else 0
        if abs(float(pct) - want) > 0.5 * 10 ** -dec + 1e-9:
            badt.append(f"{f['name']!r}: tooltip {pct}% but weight share {want:.4f}%")
    checks.check(not badt, f"tooltips read '{'name (N calls, X%)' if kind == 'calls' else 'name (T unit, X%)'}'"
                 f" with the frame's name, data-weight and share" + (f": {badt[:5]}" if badt else ""))
    if zero:
        checks.note(f"{len(zero)} tooltips show 0 for a non-zero time (too coarse a unit), e.g. {zero[:3]}")
    unlabelled = [f"{f['name']!r} ({f['bbox'][2]:.0f} px)" for f in frames
                  if not f.get("text") and f["bbox"][2] >= 100]
    checks.check(not unlabelled, "every frame at least 100 px wide has a label"
                 + (f": not {unlabelled[:5]}" if unlabelled else ""))
    badl = [f"{f['name']!r}: label {f['text']!r}" for f in frames
            if f.get("text") and not (f["text"] == f["name"] or
                                      (f["text"].endswith("..") and f["name"].startswith(f["text"][:-2])))]
    checks.check(not badl, "labels are the name, a prefix of it ending '..', or empty"
                 + (f": {badl[:5]}" if badl else ""))
    spill = [f"{f['name']!r} ({f['textBox'][1]:.1f} px of text in {f['bbox'][2]:.1f} px)" for f in frames
             if f.get("text") and f["textBox"][1] > f["bbox"][2] + 1]
    if spill:
        checks.note(f"labels wider than their frame as rendered with this machine's fonts: {spill[:5]}")

    syn = funcs is None or root["name"] not in funcs  # a root named after no function ("all")
    fold = lambda n: n.replace(";", ":").replace("\n", " ")
    if tree is not None:
        # every frame is a node of the calling-context tree of the folded export of the same
        # trace and weight, with its weight; the nodes left out are narrower than 0.1 px
        wrong, missing, narrow = [], [], 0
        drawn = set()
        for f in frames:
            if f is root:
                if root["w8"] != tree.root_weight:
                    wrong.append(f"root {root['name']!r}: data-weight {root['w8']:g}, the tree's "
                                 f"{tree.root_weight}")
                continue
            if f.get("path") is None:
                continue  # an orphan: failed above
            p = tuple(fold(n) for n in f["path"])
            drawn.add(p)
            if tree.weight.get(p) != f["w8"]:
                wrong.append(f"{' > '.join(f['path'])}: data-weight {f['w8']:g}, the tree's "
                             f"{tree.weight.get(p, 'none')}")
        px = rw / tree.root_weight if tree.root_weight else 0
        for p, w in tree.weight.items():
            if p in drawn:
                continue
            if w * px >= SVG_MIN_WIDTH_PX + 1e-9:
                missing.append(f"{' > '.join(p)} ({w} = {w * px:.2f} px)")
            else:
                narrow += 1
        checks.check(not wrong and not missing,
                     f"the frames are the nodes of {os.path.basename(job.tree)}'s calling-context tree "
                     f"with their weights ({len(drawn)} drawn; {narrow} narrower than "
                     f"{SVG_MIN_WIDTH_PX} px left out)" + (f": {wrong[:4]}" if wrong else "")
                     + (f"; missing {missing[:4]}" if missing else ""))
    if funcs is not None:
        if tree is not None:
            # the figures of the whole tree: the frames checked above, and the ones left out
            tot, slf = tree.figures()
            where = f"the tree of {os.path.basename(job.tree)}"
            # the folded file's names are the svg's with ';' made ':' (outputs/cct.c)
            unfold = {fold(n): n for n in funcs}
            tot = Counter({unfold.get(n, n): v for n, v in tot.items()})
            slf = Counter({unfold.get(n, n): v for n, v in slf.items()})
            callees = {unfold.get(a, a): {unfold.get(c, c) for c in cs} for a, cs in tree.callees().items()}
        else:
            # a frame's weight is inclusive: its own share is the weight its children leave
            tot, slf = Counter(), Counter()
            for f in frames:
                if f is root and syn:
                    continue
                n = f["name"]
                slf[n] += f["w8"] - sum(c["w8"] for c in f["children"])
                a, outer = f["parent"], True
                while a is not None:
                    if a["name"] == n:
                        outer = False
                        break
                    a = a["parent"]
                if outer:
                    tot[n] += f["w8"]
            where = "data-weight (less the children's)"
            callees = {}
            for f in frames:
                if f["parent"] is not None and not (f["parent"] is root and syn):
                    callees.setdefault(f["parent"]["name"], set()).add(f["name"])
        names = set(slf) | set(tot)
        if tree is None:
            # frames narrower than 0.1 px may be left out (and their weight stays in the parent)
            gone = set(funcs) - names
            if gone:
                checks.note(f"functions with no frame (narrower than {SVG_MIN_WIDTH_PX} px?): "
                            f"{sorted(gone)[:10]}; give --tree to check what was left out")
            names_ok = names <= set(funcs)
        else:
            names_ok = names == set(funcs)
        checks.check(names_ok,
                     f"frame names: {len(names)} in {where}"
                     + (f" (root {root['name']!r} is synthetic)" if syn else "")
                     + f", {len(funcs)} functions in the report"
                     + (f"; only in the graph: {sorted(names - set(funcs))[:10]}" if names - set(funcs) else "")
                     + (f"; only in the report: {sorted(set(funcs) - names)[:10]}"
                        if tree is not None and set(funcs) - names else ""))
        tol = Tolerance(funcs, namer, rep, structure, callees)
        if kind != "calls" and tol.ns:
            checks.note(f"times: within 1 ns per frame ({tol.source})"
                        + (" plus what frames left out could hold" if tree is None else "")
                        + ": the exports convert each event's time to ns, the report each function's sum")
        # without the tree, the weight of frames left out (each under 0.1 px) is unknown
        lost = 0.0
        if tree is None and root["w8"] > 0:
            lost = SVG_MIN_WIDTH_PX * root["w8"] / rw * max(0, sum((funcs[n]["calls"] or 0) for n in funcs)
                                                           - len(frames) + 1)
        for n in sorted(names & set(funcs), key=lambda n: (-(funcs[n]["total"] or 0), n)):
            if kind == "calls":
                # widths are calls: a frame's own calls are the weight its children leave
                checks.check(abs(slf[n] - funcs[n]["calls"]) <= lost,
                             f"calls {n}: {slf[n]:g} from {where}, report {funcs[n]['calls']}")
                continue
            for field, got, t in (("total", tot[n], tol.total(n)), ("self", slf[n], tol.self_(n))):
                want = funcs[n][field]
                if want is None:
                    checks.note(f"{field} {n}: the report has none (untimed)")
                    continue
                t = t + lost + 1e-9 * abs(want)
                checks.check(abs(got - want) <= t,
                             f"{field:5} {n}: {got:g} from {where}, report {want} (±{t:.3g})")
    severe = [l["message"] for l in br.console_log() if l.get("level") == "SEVERE"]
    checks.check(not severe, "no errors in the browser console" + (f": {severe[:3]}" if severe else ""))


# ---------------------------------------------------------------------------------------------
# JSON Schema

def run_schema(args, checks):
    try:
        import jsonschema
        from jsonschema import validators
    except ImportError as e:
        raise Infra(f"jsonschema is missing ({e}): install Debian's python3-jsonschema")
    path, _, pointer = args.schema.partition("#")
    schema = load_json(path, "schema")
    cls = validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.exceptions.SchemaError as e:
        raise Infra(f"{path} is not a valid {cls.__name__} schema: {e.message}")
    if pointer:
        # the subschema at the pointer, its references resolved in the whole schema
        node = schema
        for part in pointer.strip("/").split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, dict) or part not in node:
                raise Infra(f"{path} has nothing at #{pointer}")
            node = node[part]
        keep = {k: schema[k] for k in ("$schema", "$id", "$defs", "definitions") if k in schema}
        schema = dict(keep, **{"$ref": "#" + pointer})
    fc = getattr(cls, "FORMAT_CHECKER", None) or jsonschema.FormatChecker()
    validator = cls(schema, format_checker=fc)
    print(f"schema: {args.schema} ({cls.__name__})", flush=True)
    for path in args.files:
        lines = args.lines or path.endswith((".jsonl", ".ndjson"))
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except (OSError, ValueError) as e:
            raise Infra(f"cannot read {path}: {e}")
        docs = []
        if lines:
            for no, line in enumerate(text.splitlines(), 1):
                if line.strip():
                    docs.append((f"{path}:{no}", line))
        else:
            docs.append((path, text))
        errors = []
        for where, src in docs:
            try:
                doc = json.loads(src)
            except ValueError as e:
                errors.append(f"{where}: not JSON: {e}")
                continue
            for err in sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))[:5]:
                loc = "/" + "/".join(str(p) for p in err.absolute_path)
                errors.append(f"{where}: at {loc}: {err.message[:200]}")
        if errors:
            checks.fail(f"{path}: {len(errors)} error(s)")
            for e in errors[:20]:
                print(f"     {e}", flush=True)
        elif not docs:
            checks.fail(f"{path}: no JSON {'lines' if lines else 'document'}")
        else:
            checks.ok(f"{path}: {len(docs)} {'line(s)' if lines else 'document'} valid")


# ---------------------------------------------------------------------------------------------
# jobs

JOB_DEFAULTS = {"report": None, "tree": None, "chrome": None, "folded_weight": "self",
                "strict_names": False, "speedscope_dir": None}


def run_job(job, sess, timeout=None):
    """Runs one speedscope or svg job; returns its exit status (0, 1, or 2 = could not run)."""
    checks = Checks(job.mode)
    os.makedirs(job.artefacts, exist_ok=True)
    try:
        if timeout:
            signal.alarm(max(10, timeout))
        (run_speedscope if job.mode == "speedscope" else run_svg)(job, checks, sess)
    except Deadline:
        raise
    except Exception as e:
        if not isinstance(e, Infra):  # a bug here, or something the page did unexpectedly
            import traceback
            traceback.print_exc()
        why = str(e) if isinstance(e, Infra) else f"{type(e).__name__}: {str(e).strip()[:300]}"
        print(f"ERROR: {job.mode}: {why}", flush=True)
        checks.failed += 1  # the test did not run to its end: a failure, not a pass
        checks.summary()
        return 2
    finally:
        if timeout:
            signal.alarm(0)
    return checks.summary()


def load_jobs(path, defaults):
    spec = load_json(path, "job list")
    jobs = spec.get("jobs") if isinstance(spec, dict) else None
    if not isinstance(jobs, list) or not jobs:
        raise Infra(f"{path}: no jobs ({{\"jobs\": [...]}})")
    out = []
    for i, j in enumerate(jobs):
        if not isinstance(j, dict) or j.get("mode") not in ("speedscope", "svg"):
            raise Infra(f"{path}: job {i} has no mode speedscope|svg: {j}")
        need = ("profile", "report") if j["mode"] == "speedscope" else ("svg",)
        if any(k not in j for k in need):
            raise Infra(f"{path}: job {i} ({j['mode']}) needs {', '.join(need)}")
        ns = argparse.Namespace(**dict(JOB_DEFAULTS, **defaults))
        for k, v in j.items():
            setattr(ns, k.replace("-", "_"), v)
        ns.name = j.get("name") or f"job {i + 1}"
        ns.artefacts = j.get("artefacts") or os.path.join(defaults["artefacts"], re.sub(r"[^\w.-]+", "-", ns.name))
        out.append(ns)
    return out


def run_batch(args):
    jobs = load_jobs(args.jobs, {"artefacts": args.artefacts, "load_timeout": args.load_timeout,
                                 "chromium": args.chromium, "chromedriver": args.chromedriver})
    sess = Session(args, args.artefacts)
    results = []
    start = time.monotonic()
    try:
        for job in jobs:
            print(f"== {job.name}: {job.mode} {getattr(job, 'profile', None) or job.svg}", flush=True)
            t0 = time.monotonic()
            rc = run_job(job, sess)
            results.append((job.name, rc, time.monotonic() - t0))
            if rc == 2 and sess.br is not None and not sess.br.alive():
                print("ERROR: the browser is gone: the other jobs are not run", flush=True)
                break
    finally:
        sess.close()
    failed = [n for n, rc, _ in results if rc == 1]
    broken = [n for n, rc, _ in results if rc == 2] + [j.name for j in jobs[len(results):]]
    print(f"batch: {len(jobs)} jobs in {time.monotonic() - start:.1f} s: "
          f"{len(results) - len(failed) - len(broken)} passed, {len(failed)} failed, "
          f"{len(broken)} could not run" + (f"; failed: {failed}" if failed else "")
          + (f"; could not run: {broken}" if broken else ""), flush=True)
    for n, rc, t in results:
        print(f"  {('ok' if rc == 0 else 'FAIL' if rc == 1 else 'ERROR'):5} {t:5.1f} s  {n}", flush=True)
    return 2 if broken else 1 if failed else 0


# ---------------------------------------------------------------------------------------------

def reexec_with_debian_python_if_needed(mode):
    """Debian's python3-selenium/python3-jsonschema live in /usr/lib/python3/dist-packages, which
    another python3 on PATH (pyenv) does not see: run under /usr/bin/python3 then."""
    mod = "jsonschema" if mode == "schema" else "selenium"
    try:
        __import__(mod)
        return
    except ImportError:
        pass
    if os.path.realpath(sys.executable) != os.path.realpath(DEBIAN_PYTHON) and os.path.exists(DEBIAN_PYTHON) \
            and not os.environ.get("PTCALL_VIEWER_REEXEC"):
        os.environ["PTCALL_VIEWER_REEXEC"] = "1"
        os.execv(DEBIAN_PYTHON, [DEBIAN_PYTHON, os.path.abspath(__file__)] + sys.argv[1:])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="mode", required=True)

    def browser_opts(p, timeout=110):
        p.add_argument("--artefacts", required=True, help="directory for screenshots and logs (created)")
        p.add_argument("--chromium", default=os.environ.get("PTCALL_CHROMIUM", "/usr/bin/chromium"))
        p.add_argument("--chromedriver", default=os.environ.get("PTCALL_CHROMEDRIVER", "/usr/bin/chromedriver"))
        p.add_argument("--timeout", type=int, default=timeout, help=f"whole test, seconds (default {timeout})")
        p.add_argument("--load-timeout", type=int, default=30, help="waiting for the page, seconds")

    p = sub.add_parser("speedscope", help="load a chrome export into speedscope, compare with a report")
    p.add_argument("profile")
    p.add_argument("report")
    p.add_argument("--speedscope-dir", help="speedscope's built files (default: web/node_modules/speedscope/dist/release)")
    p.add_argument("--folded-weight", choices=("self", "calls"), default="self",
                   help="a folded PROFILE's weights: self time in the report's unit (default) or calls "
                        "(ptcall export --format folded --weight self|calls)")
    p.add_argument("--chrome", help="a chrome export of the same trace, for the time tolerance of a "
                                    "folded PROFILE (frames and callee frames per function)")
    p.add_argument("--strict-names", action="store_true",
                   help="fail when speedscope shows a frame's name with the event's args appended")
    browser_opts(p)
    p = sub.add_parser("svg", help="render an svg flame graph, check its geometry")
    p.add_argument("svg")
    p.add_argument("--report")
    p.add_argument("--tree", help="the folded export of the same trace and --weight: the whole "
                                  "calling-context tree, frames left out included")
    p.add_argument("--chrome", help="a chrome export of the same trace, for the time tolerance")
    browser_opts(p)
    p = sub.add_parser("batch", help="run speedscope and svg jobs from a JSON list in one browser")
    p.add_argument("jobs")
    browser_opts(p, 300)
    p = sub.add_parser("schema", help="validate JSON / JSON Lines files against a JSON Schema")
    p.add_argument("schema")
    p.add_argument("files", nargs="+")
    p.add_argument("--lines", action="store_true", help="the files are JSON Lines")
    args = ap.parse_args()

    reexec_with_debian_python_if_needed(args.mode)
    for v in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        os.environ.pop(v, None)
    os.environ["NO_PROXY"] = os.environ["no_proxy"] = "127.0.0.1,localhost"

    checks = Checks(args.mode)
    start = time.monotonic()

    def on_alarm(signum, frame):
        raise Deadline()
    sess = None
    try:
        if args.mode == "schema":
            run_schema(args, checks)
        else:
            os.makedirs(args.artefacts, exist_ok=True)
            signal.signal(signal.SIGALRM, on_alarm)
            signal.alarm(max(10, args.timeout))
            if args.mode == "batch":
                return run_batch(args)
            args.name = args.mode
            for k, v in JOB_DEFAULTS.items():
                if not hasattr(args, k):
                    setattr(args, k, v)
            sess = Session(args, args.artefacts)
            (run_speedscope if args.mode == "speedscope" else run_svg)(args, checks, sess)
    except (Deadline, Infra, Exception) as e:
        signal.alarm(0)
        if isinstance(e, Deadline):
            why = f"time limit of {args.timeout} s reached"
        elif isinstance(e, Infra):
            why = str(e)
        else:  # a bug here, or something the page did that this script does not expect
            import traceback
            traceback.print_exc()
            why = f"{type(e).__name__}: {e}"
        print(f"ERROR: {args.mode}: {why}", flush=True)
        checks.failed += 1  # the test did not run to its end: a failure, not a pass
        checks.summary()
        return 2
    finally:
        signal.alarm(0)
        if sess is not None:
            sess.close()
    print(f"time: {time.monotonic() - start:.1f} s", flush=True)
    return checks.summary()


if __name__ == "__main__":
    sys.exit(main())
