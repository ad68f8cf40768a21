/* The runs database's schema: its versions, the migrations between them, and opening a
 * database (connect, check the version, migrate). docs/db.md describes every table. */
#ifndef PTCALL_DB_SCHEMA_H
#define PTCALL_DB_SCHEMA_H

#include <stdint.h>

#include "db_backend.h"

/* The schema version this ptcall writes. A database of an older version is migrated when
 * opened; a newer one is refused (DB_E_VERSION). */
#define DB_SCHEMA_VERSION 7

/* The per-run counters of trace quality, in the order of their columns in `runs` (the
 * names of ptcall report's JSON totals). */
enum {
    DB_C_EVENTS, DB_C_WHOLE_CALLS, DB_C_CALLS, DB_C_THREADS, DB_C_PROCESSES, DB_C_GAPS,
    DB_C_MISSING_CHUNKS, DB_C_LOST_EVENTS, DB_C_LOST_PT_UNITS, DB_C_REPAIRS, DB_C_UNWOUND,
    DB_C_UNMATCHED, DB_C_BROKEN_FRAMES, DB_C_OPEN_AT_END, DB_C_BAD_STUBS, DB_C_FORK_UNKNOWN,
    DB_C_LOSSY_THREADS, DB_C_UNFINISHED_PROCESSES, DB_NCOUNTERS
};
extern const char *const db_counter_names[DB_NCOUNTERS];
/* Version 5: counters of traces that do not hold a thread's whole life (attach, snapshots;
 * docs/usage.md, Windows), columns of `runs` after the others (0 in runs added before). */
enum { DB_W_ENTERED_BEFORE, DB_W_STILL_OPEN, DB_W_WINDOW_THREADS, DB_NWINDOW };
extern const char *const db_window_names[DB_NWINDOW];

/* The highest schema_version taken for one a later ptcall may have written (a release adds
 * one at a time): a version above it, or below 1, was never written by any ptcall. */
#define DB_SCHEMA_PLAUSIBLE 1000

enum db_mode {
    DB_READ,   /* to read: the database must exist, and the connection writes nothing (an
                * older schema is migrated first, on a connection of its own, which needs
                * write access: -DB_E_READONLY without it) */
    DB_CHANGE, /* to change an existing database (db rm) */
    DB_WRITE,  /* create the file (SQLite) and the tables when missing */
};
/* Connects to url (db_conn.h) and brings its schema to DB_SCHEMA_VERSION: creates it in an
 * empty database (DB_WRITE), migrates an older one, refuses a newer one (DB_E_VERSION), a
 * version no ptcall writes (DB_E_DAMAGED) or a database with other tables (DB_E_FOREIGN).
 * Concurrent openers migrate one at a time. Returns 0 or -DB_E_* with d->err set (and d
 * closed). */
int db_open(struct db *d, const char *url, enum db_mode mode);
void db_close(struct db *d);
/* The schema version of an open database (0: none): 0, or -DB_E_FOREIGN (other tables),
 * -DB_E_DAMAGED (an empty schema_version, or a version no ptcall writes), -DB_E_*. */
int db_read_version(struct db *d, int *version);

#endif
