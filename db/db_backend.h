/* The runs database's one backend interface (docs/db.md): a small table of functions that
 * each backend (db_sqlite.c, db_pg.c) implements, so that the schema, ingest and queries are
 * written once. SQL is written in the dialect both accept; parameters are $1, $2, ... in
 * both (SQLite binds them by name), values travel as struct db_val. No ORM, no SQL parser. */
#ifndef PTCALL_DB_BACKEND_H
#define PTCALL_DB_BACKEND_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Error codes (returned negated by the functions below). */
enum db_err {
    DB_OK = 0,
    DB_E_FAIL = 1,       /* the statement failed (message in db->err) */
    DB_E_CONSTRAINT = 2, /* a UNIQUE constraint refused the row */
    DB_E_RETRY = 3,      /* deadlock or serialization failure: retry the transaction */
    DB_E_BUSY = 4,       /* another writer held the lock longer than the busy timeout */
    DB_E_CONNECT = 5,    /* cannot open or connect */
    DB_E_NOMEM = 6,
    DB_E_STOP = 7,       /* a row callback asked to stop (not an error of the database) */
    DB_E_VERSION = 8,    /* the schema is newer than this ptcall's */
    DB_E_NOSCHEMA = 9,   /* no ptcall database there (read-only commands) */
    DB_E_FOREIGN = 10,   /* the database holds tables that are not ptcall's */
    DB_E_DAMAGED = 11,   /* its schema_version is one no ptcall writes: damaged, or not ptcall's */
    DB_E_READONLY = 12,  /* it must be migrated (or written) and this process may only read it */
    DB_E_FULL = 13,      /* the file system holding it is full */
    DB_E_ENCODING = 14,  /* the server refused bytes that are not in its encoding (PostgreSQL) */
};

enum db_type { DB_NULL = 0, DB_INT = 1, DB_TEXT = 2, DB_REAL = 3 };
struct db_val {
    int type;            /* enum db_type */
    int64_t i;
    const char *s;
    double d;            /* DB_REAL: DOUBLE PRECISION columns (sums of squares) */
};
#define DB_I(v) ((struct db_val){.type = DB_INT, .i = (int64_t)(v)})
#define DB_R(v) ((struct db_val){.type = DB_REAL, .d = (double)(v)})
static inline struct db_val db_text_or_null(const char *s)
{
    return (struct db_val){.type = s ? DB_TEXT : DB_NULL, .s = s};
}
#define DB_S(v) db_text_or_null(v)
#define DB_NUL ((struct db_val){.type = DB_NULL})

/* The most parameters one statement takes (multi-row INSERTs of 128 rows of up to 6). */
#define DB_MAX_PARAMS 1024

/* A result row: ncol values, valid during the call. Returns 0 to go on, or non-zero to stop
 * (the query then returns -DB_E_STOP, or the callback's own negative code). */
typedef int (*db_row_fn)(void *ctx, int ncol, const struct db_val *col);

struct db;

/* How a connection is opened. */
enum db_how {
    DB_HOW_READ,   /* to read only: the connection writes nothing, not even SQLite's WAL files
                    * beside a file this user may not write */
    DB_HOW_WRITE,  /* to read and write an existing database (-DB_E_READONLY if it cannot) */
    DB_HOW_CREATE, /* as DB_HOW_WRITE, creating a new SQLite file (mode 0600) when missing */
};

struct db_ops {
    const char *name;          /* "sqlite", "postgresql" */
    /* the column definition of an auto-numbered 64-bit primary key */
    const char *id_column;
    /* the names of the database's tables, one per row (to tell an empty database, an
     * older ptcall database and a foreign one apart) */
    const char *tables_sql;
    /* run inside a schema transaction so that concurrent openers migrate one at a time
     * (NULL: the transaction itself is exclusive) */
    const char *schema_lock_sql;
    /* opens target (a file path, a postgresql:// URL) as how says (enum db_how). Sets d->h
     * (and d->readonly, d->frozen); on failure d->err says why. Returns 0 or -DB_E_*. */
    int (*open)(struct db *d, const char *target, int how);
    /* once the database is known to be empty or ptcall's, before the first write: what a
     * writer's connection needs that changes the file (SQLite: WAL mode); NULL: nothing. A
     * foreign database is refused untouched. */
    int (*setup_write)(struct db *d);
    int (*begin)(struct db *d);       /* a write transaction */
    /* a read-only transaction that sees one snapshot of the database from its first
     * statement to its end (commit or rollback ends it), so that the several statements of
     * one answer agree with each other while writers go on */
    int (*begin_read)(struct db *d);
    int (*commit)(struct db *d);
    int (*rollback)(struct db *d);
    /* a statement without result rows (or whose rows are ignored) */
    int (*exec)(struct db *d, const char *sql, int n, const struct db_val *param);
    /* a statement whose rows go to fn, in order */
    int (*query)(struct db *d, const char *sql, int n, const struct db_val *param, db_row_fn fn,
                 void *ctx);
    void (*close)(struct db *d);
};

struct db {
    const struct db_ops *ops;
    void *h;                   /* the backend's connection */
    char where[512];           /* what was opened, for messages (a URL without password) */
    char err[1024];            /* the last error, one line */
    int in_txn;
    int readonly;              /* opened with DB_HOW_READ: nothing may be written */
    /* the connection reads the file as it was when opened and never sees later changes
     * (SQLite's immutable mode, for a file this user may not write while no writer has it
     * open): open a new one for a later question */
    int frozen;
};

extern const struct db_ops db_sqlite_ops;
extern const struct db_ops db_pg_ops;

/* Sets d->err (printf-style) and returns -code. The message is one line whatever it quotes:
 * SQLite's messages quote names from the file (a damaged or hostile database may hold a
 * newline or a terminal's escape in them), so control characters become spaces. */
static inline int db_fail(struct db *d, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline int db_fail(struct db *d, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->err, sizeof(d->err), fmt, ap);
    va_end(ap);
    for (char *p = d->err; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = ' ';
    return -code;
}

#endif
