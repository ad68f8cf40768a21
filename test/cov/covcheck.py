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


def ptcov_records(b, start):
    """The records of a .ptcov's bytes b from offset start (the header's size), as
    (type, first byte, end of the payload): a record is a type byte, a LEB128 length, the
    payload, then (version 2) a 4-byte CRC after the payload's end."""
    p = start
    while p < len(b):
        q, ln, shift = p + 1, 0, 0
        while True:
            ln |= (b[q] & 0x7f) << shift
            shift += 7
            q += 1
            if not b[q - 1] & 0x80:
                break
        yield b[p], p, q + ln
        p = q + ln + 4
