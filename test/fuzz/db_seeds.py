#!/usr/bin/env python3
"""Seeds of fuzz_db (a runs database file): every frozen schema version of test/db/schema/
(each with a run in it) as SQLite files of small pages (512 bytes: a database of a few
kilobytes the fuzzer can mutate), in rollback and WAL mode, with a few runs more, and
hostile variants (schema versions no ptcall writes, a newer one, a foreign table, names that
are markup).

usage: db_seeds.py SRC_DIR OUT_DIR
"""
import glob
import os
import sqlite3
import sys


def make(path, sql, wal=False, extra=()):
    if os.path.exists(path):
        os.remove(path)
    con = sqlite3.connect(path)
    con.execute("PRAGMA page_size=512")
    con.executescript(sql)
    for s in extra:
        con.execute(s)
    con.commit()
    if wal:
        con.execute("PRAGMA journal_mode=WAL")
    con.execute("VACUUM")
    con.close()


def main():
    src, out = sys.argv[1:3]
    os.makedirs(out, exist_ok=True)
    n = 0
    for f in sorted(glob.glob(os.path.join(src, "test", "db", "schema", "v*.sqlite.sql"))):
        v = os.path.basename(f).split(".")[0]
        sql = open(f).read()
        make(os.path.join(out, "%s.db" % v), sql)
        make(os.path.join(out, "%s-wal.db" % v), sql, wal=True)
        n += 2
    cur = open(sorted(glob.glob(os.path.join(src, "test", "db", "schema", "v*.sqlite.sql")))[-1]).read()
    more = [
        "INSERT INTO runs SELECT 2, 'ab' || content_hash, '/t/<script>.ptc', trace_bytes, '<img src=x>', "
        "program_path, command, host, added_ns + 1, start_ns, duration_ns, NULL, 9, 1, backend, 'ticks', "
        "events, whole_calls, calls, threads, processes, gaps, missing_chunks, lost_events, lost_pt_units, "
        "repairs, unwound, unmatched, broken_frames, open_at_end, bad_stubs, fork_unknown, lossy_threads, "
        "unfinished_processes, 0, 1, total_time, 'main*', 1, functions, edges, entered_before, "
        "still_open, window_threads, counted_functions, counted_calls, budget_kind, budget_source, "
        "budget_limit, budget_predicted, budget_pilot_ns, budget_candidates, budget_traced, "
        "budget_outcome, budget_note, demoted_functions, budget_demotions FROM runs WHERE id = 1",
        "INSERT INTO run_tags VALUES (2, 'in\"put', 'a&b')",
        "INSERT INTO run_functions SELECT 2, function_id, module_idx, calls * 3, total, self, state, "
        "demoted FROM run_functions",
        "INSERT INTO run_edges SELECT 2, caller_id, callee_id, calls FROM run_edges",
        "INSERT INTO run_modules SELECT 2, idx, path, identity, functions, NULL FROM run_modules",
    ]
    make(os.path.join(out, "two-runs.db"), cur, extra=more)
    for name, stmt in (("version-neg", "UPDATE schema_version SET version = -1"),
                       ("version-huge", "UPDATE schema_version SET version = 2147483648"),
                       ("version-newer", "UPDATE schema_version SET version = 4"),
                       ("version-text", "UPDATE schema_version SET version = 'x'"),
                       ("version-none", "DELETE FROM schema_version"),
                       ("foreign", "CREATE TABLE notes (x INTEGER)")):
        make(os.path.join(out, name + ".db"), cur, extra=[stmt])
        n += 1
    open(os.path.join(out, "empty.db"), "wb").close()
    print("db_seeds.py: %d database seed(s)" % (n + 2))


if __name__ == "__main__":
    main()
