#!/usr/bin/env python3
"""pass-ccache: the compiler wrappers under a real ccache (docs/pass.md, "Compiler caches").

With PTCALL_CCACHE=ccache the wrapper compiles through ccache with a digest of the plugin, the
PTCALL_* settings and the include/exclude lists' contents as the compiler's identity. Each
change of those must be a cache miss, and every object the cache hands back must be the one
an uncached compilation makes (the instrumentation of the list as it is now); an unchanged
compilation must be a hit. In direct mode and in preprocessor mode (CCACHE_NODIRECT). A
ccache that runs the wrapper (CC="ccache ptcall-cc") cannot be told and is warned about.

usage: ccache_test.py BUILD_DIR WORK_DIR
"""
import os
import shutil
import subprocess
import sys

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)
    return cond


SRC = r"""
__attribute__((noinline)) int keep(int x) { return x * 3 + 1; }
__attribute__((noinline)) int drop(int x) { return x ^ 5; }
int main(int argc, char **argv) { (void)argv; return keep(argc) + drop(argc); }
"""


def main():
    build, work = (os.path.abspath(a) for a in sys.argv[1:3])
    ccache = shutil.which("ccache")
    if not ccache:
        print("SKIP: ccache is not installed (Debian: ccache; scripts/setup.sh installs it)")
        return 0
    cc = os.path.join(build, "bin", "ptcall-cc")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    os.chdir(work)
    with open("t.c", "w") as f:
        f.write(SRC)
    with open("list", "w") as f:
        f.write("keep\n")
    base = {k: v for k, v in os.environ.items()
            if not k.startswith("PTCALL_") and not k.startswith("CCACHE_")}
    base.update(CCACHE_DIR=os.path.join(work, "cache"), PTCALL_INCLUDE="list")

    def stats():
        out = subprocess.run([ccache, "--print-stats"], env=base, capture_output=True,
                             text=True).stdout
        d = dict(l.split("\t", 1) for l in out.splitlines() if "\t" in l)
        return int(d.get("direct_cache_hit", 0)) + int(d.get("preprocessed_cache_hit", 0))

    def compile(out, cached=True, **env):
        e = dict(base, **env)
        if cached:
            e["PTCALL_CCACHE"] = "ccache"
        before = stats()
        r = subprocess.run([cc, "-O1", "-c", "t.c", "-o", out], env=e, capture_output=True,
                           text=True)
        check(r.returncode == 0, "compile %s: %s" % (env, r.stderr))
        with open(out, "rb") as f:
            return f.read(), stats() > before

    def step(what, expect_hit, **env):
        got, hit = compile("cached.o", **env)
        want, _ = compile("fresh.o", cached=False, **env)
        check(hit == expect_hit, "%s: %s" % (what, "a hit" if expect_hit else "not a hit"))
        check(got == want, "%s: the object is the one an uncached compilation makes" % what)
        return got

    for mode, extra in [("direct", {}), ("preprocessor", {"CCACHE_NODIRECT": "1"})]:
        subprocess.run([ccache, "-C", "-z"], env=base, capture_output=True)
        with open("list", "w") as f:
            f.write("keep\n")
        first = step(mode + ": first compilation", False, **extra)
        step(mode + ": the same again", True, **extra)
        with open("list", "w") as f:
            f.write("keep\ndrop\n")     # the same file name, other contents
        second = step(mode + ": the include list's contents changed", False, **extra)
        check(first != second, mode + ": the list's change changes the object")
        step(mode + ": PTCALL_PLACEMENT=early", False, PTCALL_PLACEMENT="early", **extra)
        step(mode + ": PTCALL_GATED=0", False, PTCALL_GATED="0", **extra)
        # the plugin upgraded in place: a copy, then one byte more (an ELF file's loader
        # ignores what follows its last section)
        plugin = os.path.join(work, "ptcall-pass.so")
        shutil.copy(os.path.join(build, "pass", "ptcall-pass.so"), plugin)
        step(mode + ": another plugin file", False, PTCALL_PASS_PLUGIN=plugin, **extra)
        step(mode + ": that plugin again", True, PTCALL_PASS_PLUGIN=plugin, **extra)
        with open(plugin, "ab") as f:
            f.write(b"\0")
        step(mode + ": the plugin rebuilt (other bytes)", False, PTCALL_PASS_PLUGIN=plugin,
             **extra)

    # ccache running the wrapper: hashed before the wrapper runs; said on stderr
    r = subprocess.run([ccache, cc, "-O1", "-c", "t.c", "-o", "b.o"], env=base,
                       capture_output=True, text=True)
    check(r.returncode == 0 and "ccache runs ptcall-cc" in r.stderr and
          "PTCALL_CCACHE=ccache" in r.stderr, "ccache ptcall-cc: warned: %s" % r.stderr)
    print("pass-ccache: %d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
