"""What the fault suite's scripts share (faults_test.py, env_test.py): checks that count
failures, running commands, reading `ptcall report --format json`, and building
test/faults/faulty.c with ptcall-cc."""
import json
import os
import shutil
import subprocess


class Checks:
    """Prints each check as ok/FAIL and counts the failures."""

    def __init__(self):
        self.fails = 0

    def __call__(self, ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            self.fails += 1
        return ok


def run(cmd, **kw):
    return subprocess.run([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, **kw)


def report(ptcall, trace, *extra):
    """(report's JSON, stderr), or (None, stderr) when report failed."""
    p = run([ptcall, "report", trace, "--format", "json", "--top", "0", *extra])
    if p.returncode != 0:
        return None, p.stderr
    return json.loads(p.stdout), p.stderr


def calls_of(doc, name):
    return sum(f["calls"] for f in doc["functions"] if f["name"] == name)


def build_faulty(cc, work):
    """A fresh work directory and faulty.c built in it with ptcall-cc: its path, or None after
    printing the SKIP line that says why not."""
    if not os.access(cc, os.X_OK):
        print("SKIP: %s is not built (the LLVM pass component)" % cc)
        return None
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    prog = os.path.join(work, "faulty")
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "faulty.c")
    if run([cc, "-O1", "-pthread", "-o", prog, src]).returncode:
        print("SKIP: ptcall-cc cannot build %s" % src)
        return None
    return prog


def without_thread_exit(src, dst, tid=None):
    """Copies trace src to dst without thread tid's (None: the first thread's) THREAD exit
    chunk (chunk type 6, event 2),
    the last of its stream: what a runtime that could not finish the thread at exit leaves
    (sequence numbers cannot show it). Returns whether such a chunk was found."""
    import struct
    data = open(src, "rb").read()
    out, off, found = [data[:64]], 64, False
    while off + 24 <= len(data):
        ctype, _, size, _, ctid, _, _ = struct.unpack_from("<HHIIIII", data, off)
        end = off + 24 + size + ((8 - size % 8) % 8)
        if (ctype == 6 and not found and (tid is None or ctid == tid) and
                struct.unpack_from("<I", data, off + 24)[0] == 2):
            found = True
        else:
            out.append(data[off:end])
        off = end
    open(dst, "wb").write(b"".join(out))
    return found
