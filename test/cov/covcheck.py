"""What the cov test scripts share: failures recorded as they are found, a command run with its
output kept, a line of a source found by its text (test/cov/*_test.py import it from beside
them)."""
import subprocess

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)
    return cond


def run(args, **kw):
    # errors="replace": a damaged file's names may hold any bytes (the table and CSV show them)
    return subprocess.run(args, capture_output=True, text=True, errors="replace", **kw)


def line_of(src_lines, needle):
    """The 1-based number of the first line holding needle."""
    for i, l in enumerate(src_lines):
        if needle in l:
            return i + 1
    raise SystemExit("'%s' is in no line of the source" % needle)
