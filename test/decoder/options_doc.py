#!/usr/bin/env python3
"""docs/options.md and the README's option summary are generated from ptcall's option table
(tools/options.c), and docs/runtime.md's environment table from the variables' table
(common/ptc_env.c): this test regenerates them and fails, with a diff, when one is out of
date. --update rewrites them (docs/options.md whole, README.md and docs/runtime.md only
between their markers).

usage: options_doc.py --ptcall PTCALL --src SRC_DIR [--update]
"""
import argparse
import difflib
import os
import subprocess
import sys

BEGIN = "<!-- options:begin -->"
END = "<!-- options:end -->"
ENV_BEGIN = "<!-- env:begin -->"
ENV_END = "<!-- env:end -->"


def generate(ptcall, what):
    r = subprocess.run([ptcall, "help", what], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    if r.returncode != 0:
        sys.exit("FAIL: ptcall help %s exited %d: %s" % (what, r.returncode, r.stderr))
    return r.stdout


def readme_block(text, begin=BEGIN, end=END):
    """(before, block, after) of a text around the markers; block without them."""
    b, e = text.find(begin), text.find(end)
    if b < 0 or e < b:
        return None
    b += len(begin)
    return text[:b], text[b:e], text[e:]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ptcall", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--update", action="store_true")
    a = ap.parse_args()
    doc_path = os.path.join(a.src, "docs", "options.md")
    readme_path = os.path.join(a.src, "README.md")
    doc = generate(a.ptcall, "--markdown")
    block = "\n" + generate(a.ptcall, "--readme")
    with open(readme_path) as f:
        readme = f.read()
    parts = readme_block(readme)
    if parts is None:
        sys.exit("FAIL: README.md has no '%s' ... '%s' block" % (BEGIN, END))
    old_doc = open(doc_path).read() if os.path.exists(doc_path) else ""
    runtime_path = os.path.join(a.src, "docs", "runtime.md")
    env_block = "\n" + generate(a.ptcall, "--env")
    with open(runtime_path) as f:
        env_parts = readme_block(f.read(), ENV_BEGIN, ENV_END)
    if env_parts is None:
        sys.exit("FAIL: docs/runtime.md has no '%s' ... '%s' block" % (ENV_BEGIN, ENV_END))
    if a.update:
        if env_parts[1] != env_block:
            with open(runtime_path, "w") as f:
                f.write(env_parts[0] + env_block + env_parts[2])
            print("rewrote the environment table of", runtime_path)
        if old_doc != doc:
            with open(doc_path, "w") as f:
                f.write(doc)
            print("rewrote", doc_path)
        if parts[1] != block:
            # re-read right before writing: others may edit the rest of the README meanwhile
            with open(readme_path) as f:
                parts = readme_block(f.read())
            with open(readme_path, "w") as f:
                f.write(parts[0] + block + parts[2])
            print("rewrote the options block of", readme_path)
        return
    fail = False
    for name, want, have in (("docs/options.md", doc, old_doc),
                             ("README.md (between the options markers)", block, parts[1]),
                             ("docs/runtime.md (between the env markers)", env_block,
                              env_parts[1])):
        if want != have:
            fail = True
            print("FAIL: %s is out of date with the option table:" % name)
            sys.stdout.writelines(difflib.unified_diff(
                have.splitlines(True), want.splitlines(True), "%s (as it is)" % name,
                "%s (from ptcall help)" % name))
    if fail:
        print("run: python3 test/decoder/options_doc.py --update --ptcall build/tools/ptcall "
              "--src .")
        sys.exit(1)
    print("PASS: docs/options.md, the README's option summary and docs/runtime.md's "
          "environment table match their tables")


if __name__ == "__main__":
    main()
