#!/usr/bin/env python3
"""ctest pass-llvm-choice: the LLVM release is chosen on purpose and a mismatch is refused.

  - CMake refuses, in one message naming what to install or set: PTCALL_LLVM that is not a
    number, a release older than 14, a release whose development files are missing;
  - the wrapper refuses a clang of another release (PTCALL_COMPILER) and a plugin of another
    release (PTCALL_PASS_PLUGIN), or a file that is no plugin, with exit status 2 and one line;
  - a clang of another release loading the plugin directly (-fpass-plugin) fails with the
    plugin's one line and clang's own error instead of a compiler crash.
The last two need a second clang installed (any release 14 to 25 but the build's): otherwise
they print SKIP, and the CMake checks still run.

usage: llvm_choice_test.py BUILD_DIR SOURCE_DIR WORK_DIR
"""
import os
import re
import shutil
import subprocess
import sys

build, src, work = (os.path.abspath(a) for a in sys.argv[1:4])
os.makedirs(work, exist_ok=True)
major = os.environ.get("PTCALL_LLVM_MAJOR", "")
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def run(cmd, env=None):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e,
                          cwd=work)


def configure(value):
    """CMake's answer, its message's line breaks (CMake wraps messages) made spaces."""
    d = os.path.join(work, "cfg-" + re.sub(r"\W", "_", value))
    shutil.rmtree(d, ignore_errors=True)
    r = run(["cmake", "-S", src, "-B", d, "-G", "Ninja", "-DPTCALL_LLVM=" + value])
    r.stderr = " ".join(r.stderr.split())
    return r


# ---- CMake's refusals
installed = [v for v in range(13, 26) if os.path.exists("/usr/lib/llvm-%d/lib/cmake/llvm/LLVMConfig.cmake" % v)]
r = configure("abc")
check(r.returncode != 0 and "is not a major version number" in r.stderr and "-DPTCALL_LLVM=19" in r.stderr,
      "PTCALL_LLVM=abc refused: " + " ".join(r.stderr.split())[:160])
r = configure("13")
check(r.returncode != 0 and "older than ptcall supports" in r.stderr and "llvm-14-dev" in r.stderr,
      "PTCALL_LLVM=13 refused: " + " ".join(r.stderr.split())[:160])
missing = next((v for v in range(14, 20) if v not in installed), None)
if missing is None:
    print("SKIP-PART: every release 14 to 19 is installed here; no missing one to refuse")
else:
    r = configure(str(missing))
    check(r.returncode != 0 and ("llvm-%d-dev" % missing) in r.stderr and "installed here:" in r.stderr,
          "PTCALL_LLVM=%d (not installed) refused: %s" % (missing, " ".join(r.stderr.split())[:200]))

# ---- the wrapper and the plugin against another release's clang
cc = os.path.join(build, "bin", "ptcall-cc")
plugin = os.path.join(build, "pass", "ptcall-pass.so")
prog = os.path.join(work, "p.c")
with open(prog, "w") as f:
    f.write("int main(void) { return 0; }\n")
with open(plugin, "rb") as f:
    tag = re.search(rb"ptcall-pass-for-llvm-(\d+)", f.read())
check(tag is not None and (not major or tag.group(1).decode() == major),
      "the plugin records its release (%s)" % (tag.group(0).decode() if tag else None))
r = run([cc, prog, "-o", "p"], {"PTCALL_PASS_PLUGIN": "/etc/hostname"})
check(r.returncode == 2 and "is not a ptcall pass plugin" in r.stderr and len(r.stderr.splitlines()) == 1,
      "a plugin that is no plugin refused: " + r.stderr.strip())
others = [v for v in installed if str(v) != major and v >= 14 and shutil.which("clang-%d" % v)]
if not others:
    print("SKIP: no clang of another LLVM release is installed (e.g. apt-get install clang-16):"
          " the mismatch checks did not run")
else:
    other = "clang-%d" % others[0]
    r = run([cc, prog, "-o", "p"], {"PTCALL_COMPILER": other})
    check(r.returncode == 2 and ("built for LLVM %s" % major) in r.stderr and "PTCALL_LLVM=%d" % others[0] in r.stderr
          and len(r.stderr.splitlines()) == 1 and not os.path.exists(os.path.join(work, "p")),
          "PTCALL_COMPILER=%s refused: %s" % (other, r.stderr.strip()))
    r = run([other, "-fpass-plugin=" + plugin, prog, "-o", "p2"])
    check(r.returncode != 0 and ("built for LLVM %s but the compiler runs LLVM %d" % (major, others[0])) in r.stderr
          and "PLEASE submit a bug report" not in r.stderr and "Stack dump" not in r.stderr,
          "%s -fpass-plugin= of LLVM %s: a clean refusal, no crash: %s" % (other, major, r.stderr.strip()[:300]))
    r = run([cc, prog, "-o", "p3"], {"PTCALL_COMPILER": "clang-" + major})
    check(r.returncode == 0, "PTCALL_COMPILER=clang-%s (the plugin's own release) accepted" % major)

if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("all passed")
