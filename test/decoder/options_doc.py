#!/usr/bin/env python3
"""docs/options.md and the README's option summary are generated from ptcall's option table
(tools/options.c): this test regenerates both and fails, with a diff, when either is out of
date. --update rewrites them (docs/options.md whole, README.md only between its markers).

usage: options_doc.py --ptcall PTCALL --src SRC_DIR [--update]
"""
import argparse
import difflib
import os
import subprocess
import sys

BEGIN = "<!-- options:begin -->"
END = "<!-- options:end -->"


def generate(ptcall, what):
    r = subprocess.run([ptcall, "help", what], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    if r.returncode != 0:
        sys.exit("FAIL: ptcall help %s exited %d: %s" % (what, r.returncode, r.stderr))
    return r.stdout


def readme_block(text):
    """(before, block, after) of README.md around the markers; block without them."""
    b, e = text.find(BEGIN), text.find(END)
    if b < 0 or e < b:
        return None
    b += len(BEGIN)
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
    if a.update:
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
                             ("README.md (between the options markers)", block, parts[1])):
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
    print("PASS: docs/options.md and the README's option summary match the option table")


if __name__ == "__main__":
    main()
