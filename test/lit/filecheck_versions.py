#!/usr/bin/env python3
# FileCheck with the check prefixes of this LLVM release (lit.cfg.py, "Check prefixes by
# LLVM release"): for every prefix P the test names (CHECK when it names none), P-TAG is
# checked too for each TAG of this release, and P-TAG1-TAG2 for two of them in that order.
# A line that reads the same on every release keeps its plain prefix; one that differs is
# written once per variant.
#
#   filecheck_versions.py TAGS ALL_TAGS FILECHECK ARGS...
#
# TAGS: this release's tags; ALL_TAGS: every tag of the table. --allow-unused-prefixes lets a
# file leave out the variants it does not need; what it would catch is checked here instead:
# each prefix the test names has check lines, and no P-WORD: line names a tag that does not
# exist (a misspelt tag would otherwise be a line that is never checked).
import os
import re
import sys

DIRECTIVE = r"(?:NEXT|SAME|LABEL|DAG|NOT|EMPTY|COUNT-\d+)"


def main(argv):
    tags = [t for t in argv[1].split(",") if t]
    known = [t for t in argv[2].split(",") if t]
    filecheck, args = argv[3], argv[4:]
    bases, rest, i = [], [], 0
    while i < len(args):
        m = re.fullmatch(r"--?check-prefix(?:es)?(?:=(.*))?", args[i])
        if m:
            value = m.group(1)
            if value is None:
                i += 1
                value = args[i]
            bases += value.split(",")
        else:
            rest.append(args[i])
        i += 1
    if not bases:
        bases = ["CHECK"]
    me = os.path.basename(sys.argv[0])
    positional = [a for a in rest if not a.startswith("-")]
    if positional:
        with open(positional[0], encoding="utf-8", errors="replace") as f:
            text = f.read()
        pairs_known = {f"{a}-{b}" for a in known for b in known if a != b}
        for p in bases:
            q = re.escape(p)
            if not re.search(rf"(?<![\w-]){q}(-[\w-]+)?:", text):
                sys.stderr.write(f"{me}: no check lines with prefix {p} in {positional[0]}\n")
                return 2
            for m in re.finditer(rf"(?<![\w-]){q}-([\w-]+):", text):
                word = re.sub(rf"-{DIRECTIVE}$", "", m.group(1))
                if re.fullmatch(DIRECTIVE, word) or word in known or word in pairs_known:
                    continue
                line = text.count("\n", 0, m.start()) + 1
                sys.stderr.write(f"{me}: {positional[0]}:{line}: {p}-{word} names no tag of "
                                 f"lit.cfg.py's LLVM_CHECK_TAGS ({', '.join(known)})\n")
                return 2
    pairs = [f"{a}-{b}" for i, a in enumerate(tags) for b in tags[i + 1:]]
    prefixes = bases + [f"{p}-{t}" for p in bases for t in tags + pairs]
    cmd = [filecheck, "--allow-unused-prefixes", "--check-prefixes=" + ",".join(prefixes)]
    os.execvp(filecheck, cmd + rest)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
