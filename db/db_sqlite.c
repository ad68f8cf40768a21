/* The SQLite backend of the runs database (libsqlite3). Many processes may write one file at
 * once: the database runs in WAL mode (readers never wait for the writer) and every write
 * transaction starts with BEGIN IMMEDIATE, so that a writer waits for the write lock at its
 * start (up to the busy timeout) instead of failing half-way when it upgrades a read lock. */
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "db_backend.h"

/* How long a writer waits for another one (8 concurrent `db add`s of large traces each hold
 * the lock for well under a second; a minute leaves room for a slow disk). */
#define BUSY_TIMEOUT_MS 60000
/* Prepared statements kept per connection: the fixed ones, and the multi-row INSERTs of
 * db_ingest.c in their few batch sizes. */
#define CACHE_MAX 96
#define MAX_COLS 64
/* A statement without parameters longer than this carries its values in its text (lists of
 * run ids): made for one answer, it is not kept, so that it does not push the others out. */
#define ONE_OFF_LEN 512

struct cached {
    char *sql;
    uint64_t hash;           /* of sql, so that a lookup compares few strings */
    sqlite3_stmt *st;
    int n;                   /* parameters */
};

struct sq {
    sqlite3 *db;
    struct cached cache[CACHE_MAX];
    int ncache;
};

static int code_of(int rc)
{
    switch (rc & 0xff) {
    case SQLITE_CONSTRAINT:
        return DB_E_CONSTRAINT;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return DB_E_BUSY;
    case SQLITE_NOMEM:
        return DB_E_NOMEM;
    case SQLITE_READONLY:
        return DB_E_READONLY;
    default:
        return DB_E_FAIL;
    }
}

/* Whether the file system holding d's file has no room left: SQLite says "disk I/O error"
 * when it cannot grow its WAL index on a full disk, "database or disk is full" elsewhere. */
static int disk_full(const struct db *d)
{
    char dir[sizeof(d->where)];
    snprintf(dir, sizeof(dir), "%s", d->where);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof(dir), ".");
    else if (slash == dir)
        dir[1] = 0;
    else
        *slash = 0;
    struct statvfs v;
    /* a few pages: SQLite needs more than one to go on */
    return !statvfs(dir, &v) && (uint64_t)v.f_bavail * v.f_frsize < 64 * 1024;
}

static int sq_fail(struct db *d, int rc, const char *what)
{
    struct sq *q = d->h;
    const char *msg = q && q->db ? sqlite3_errmsg(q->db) : sqlite3_errstr(rc);
    if (((rc & 0xff) == SQLITE_FULL || (rc & 0xff) == SQLITE_IOERR) && disk_full(d))
        return db_fail(d, DB_E_FULL, "%s: the file system holding %s is full (%s)", what,
                       d->where, msg);
    if ((rc & 0xff) == SQLITE_NOTADB)
        return db_fail(d, DB_E_FOREIGN, "%s is not an SQLite database (%s)", d->where, msg);
    if ((rc & 0xff) == SQLITE_BUSY)
        return db_fail(d, DB_E_BUSY,
                       "%s: another process held the database's write lock for more than %d s "
                       "(%s)",
                       what, BUSY_TIMEOUT_MS / 1000, msg);
    return db_fail(d, code_of(rc), "%s: %s", what, msg);
}

static void sq_close(struct db *d)
{
    struct sq *q = d->h;
    if (!q)
        return;
    for (int i = 0; i < q->ncache; i++) {
        sqlite3_finalize(q->cache[i].st);
        free(q->cache[i].sql);
    }
    sqlite3_close(q->db);
    free(q);
    d->h = NULL;
}

/* Turns on WAL. Switching a new file to WAL takes its exclusive lock from a read lock, which
 * SQLite does not wait for (the busy handler is not called where waiting could deadlock), so
 * writers that open a new file at once get SQLITE_BUSY here: they wait and try again, up to
 * the busy timeout. Once the file is in WAL mode this takes no lock. */
static int set_wal(sqlite3 *db)
{
    int rc;
    for (int waited = 0;; waited += 5) {
        rc = sqlite3_exec(db, "PRAGMA journal_mode=WAL", NULL, NULL, NULL);
        if ((rc & 0xff) != SQLITE_BUSY || waited >= BUSY_TIMEOUT_MS)
            return rc;
        sqlite3_sleep(5);
    }
}

/* Checkpoints. After a commit SQLite copies the WAL back into the database (from 1,000 pages
 * on, as its own default does: PASSIVE, waiting for nobody), but it starts the WAL from its
 * beginning again only when no connection reads from it, which writers that follow one
 * another without a pause never allow: the WAL then grows without end (3 GB beside a 390 MB
 * database after 650 runs of 5,000 functions added by 8 writers at once, bench/db.py). So the
 * commit that finds it longer than WAL_TRUNCATE_PAGES waits for the readers to move on (up to
 * the busy timeout, holding other writers back meanwhile) and truncates it. A checkpoint that
 * cannot finish is tried again at a later commit: the commit itself has happened already. */
#define WAL_PASSIVE_PAGES 1000
#define WAL_TRUNCATE_PAGES 16384

static int on_wal(void *arg, sqlite3 *db, const char *name, int pages)
{
    (void)arg;
    if (pages >= WAL_TRUNCATE_PAGES)
        sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
    else if (pages >= WAL_PASSIVE_PAGES)
        sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
    return SQLITE_OK;
}

/* A new database file, created 0600 before SQLite opens it: it holds command lines and
 * paths, as traces do (which are 0600 too); SQLite would create it 0644 (its WAL files take
 * the database file's mode). O_EXCL: an existing file is opened as it is, never chmod'ed (it
 * may be someone else's). */
static int create_private(struct db *d, const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0) {
        close(fd);
        return 0;
    }
    if (errno == EEXIST)
        return 0;
    return db_fail(d, DB_E_CONNECT, "cannot open %s (to create it): %s", path, strerror(errno));
}

/* Whether this process may write path and the directory it is in (where SQLite puts the
 * WAL and its index, PATH-wal and PATH-shm). */
static int may_write(const char *path)
{
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, sizeof(dir), ".");
    else if (slash == path)
        snprintf(dir, sizeof(dir), "/");
    else
        snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
    return !access(path, W_OK) && !access(dir, W_OK | X_OK);
}

static int exists(const char *path, const char *suffix)
{
    char p[4200];
    snprintf(p, sizeof(p), "%s%s", path, suffix);
    return !access(p, F_OK);
}

/* "file:PATH?QUERY" with PATH percent-encoded as an SQLite URI needs ('?', '#', '%' and
 * anything unusual). NULL when out of memory. */
static char *file_uri(const char *path, const char *query)
{
    size_t n = strlen(path);
    char *u = malloc(3 * n + strlen(query) + 8);
    if (!u)
        return NULL;
    char *p = u + sprintf(u, "file:");
    for (const unsigned char *c = (const unsigned char *)path; *c; c++) {
        if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
            strchr("/-._~", *c))
            *p++ = (char)*c;
        else
            p += sprintf(p, "%%%02X", *c);
    }
    sprintf(p, "?%s", query);
    return u;
}

/* Opens path to read only. SQLite's readers of a WAL database write its index (PATH-shm) and
 * create PATH-wal when missing: a reader that may not write the file must not make them,
 * since files it leaves behind belong to it and the owner's next writer cannot use them. So
 * a file this process may write (its own, or root's reading) is opened as a writer opens it
 * but refuses every change (query_only), so that SQLite removes the WAL files at the end as
 * it does for writers (a read-only connection would leave them); another's, whose writer
 * has the WAL open now (both files there), is read through that WAL without writing its
 * index (readonly_shm: the index is rebuilt in memory); and one no writer has open is read
 * as an immutable file (nothing locked or created; the connection sees the file as it was:
 * d->frozen). */
static int open_read(struct db *d, struct sq *q, const char *path)
{
    if (may_write(path)) {
        int rc = sqlite3_open_v2(path, &q->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
                                 NULL);
        return rc == SQLITE_OK ? sqlite3_exec(q->db, "PRAGMA query_only=1", NULL, NULL, NULL)
                               : rc;
    }
    int live = exists(path, "-wal") && exists(path, "-shm");
    char *uri = file_uri(path, live ? "mode=ro&readonly_shm=1" : "immutable=1");
    if (!uri)
        return SQLITE_NOMEM;
    int rc = sqlite3_open_v2(uri, &q->db,
                             SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, NULL);
    free(uri);
    d->frozen = !live;
    return rc;
}

static int sq_open(struct db *d, const char *path, int how)
{
    if (how != DB_HOW_CREATE && access(path, F_OK))
        return db_fail(d, DB_E_NOSCHEMA, "there is no database %s", path);
    if (how == DB_HOW_CREATE) {
        int e = create_private(d, path);
        if (e)
            return e;
    }
    struct sq *q = calloc(1, sizeof(*q));
    if (!q)
        return db_fail(d, DB_E_NOMEM, "out of memory");
    d->h = q;
    d->readonly = how == DB_HOW_READ;
    int rc = how == DB_HOW_READ ? open_read(d, q, path)
                                : sqlite3_open_v2(path, &q->db,
                                                  SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
                                                  NULL);
    if (rc != SQLITE_OK) {
        int e = db_fail(d, rc == SQLITE_NOMEM ? DB_E_NOMEM : DB_E_CONNECT, "cannot open %s: %s",
                        path, q->db ? sqlite3_errmsg(q->db) : sqlite3_errstr(rc));
        sq_close(d);
        return e;
    }
    /* SQLite opens a file it may not write read-only without saying so: a writer must know
     * before its first statement */
    if (how != DB_HOW_READ && sqlite3_db_readonly(q->db, "main") == 1) {
        int e = db_fail(d, DB_E_READONLY, "%s is read-only to this user (%s)", path,
                        access(path, W_OK) ? strerror(errno) : "its directory or file system");
        sq_close(d);
        return e;
    }
    sqlite3_busy_timeout(q->db, BUSY_TIMEOUT_MS);
    sqlite3_wal_hook(q->db, on_wal, NULL);
    /* foreign keys are per connection, and make `db rm` cascade as PostgreSQL does; WAL
     * (sq_setup_write) waits until the file is known to be ptcall's */
    rc = sqlite3_exec(q->db, "PRAGMA foreign_keys=ON", NULL, NULL, NULL);
    /* In WAL mode NORMAL syncs at checkpoints, not at every commit: a killed process still
     * loses nothing it committed and never leaves half a run, and the database stays sound
     * through a power loss, which may take back the last runs added (their traces can be
     * added again). FULL would add an fsync to every `db add`: tens of ms on this VM's
     * disk, several per cent of `report`'s time on a 10^8-event trace (docs/db.md). */
    if (rc == SQLITE_OK && how != DB_HOW_READ)
        rc = sqlite3_exec(q->db, "PRAGMA synchronous=NORMAL", NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
        int e = sq_fail(d, rc, "cannot set up the database");
        sq_close(d);
        return e;
    }
    return 0;
}

/* WAL is a property of the file (kept once set, which changes its header): set by writers
 * of an empty or a ptcall database only, never by readers. */
static int sq_setup_write(struct db *d)
{
    struct sq *q = d->h;
    int rc = set_wal(q->db);
    return rc == SQLITE_OK ? 0 : sq_fail(d, rc, "cannot set up the database");
}

static uint64_t hash_of(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a 64 */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* SQL names its parameters $1, $2, ... (PostgreSQL's way); SQLite takes the same numbers
 * written ?1, ?2, ... and then binds parameter N at index N. As "$N" SQLite would treat them
 * as names, looked up one by one in a list while it parses: quadratic in a multi-row INSERT
 * of hundreds of parameters. The SQL of this file has no '$' but in parameters. NULL when
 * out of memory. */
static char *sqlite_params(const char *sql)
{
    char *s = strdup(sql);
    for (char *p = s; p && *p; p++)
        if (*p == '$' && p[1] >= '0' && p[1] <= '9')
            *p = '?';
    return s;
}

/* The prepared statement of sql in *c: from the cache, else prepared (and cached while there
 * is room; *owned set when the caller must release it with release()). */
static int stmt(struct db *d, const char *sql, int nparam, struct cached *c, int *owned)
{
    struct sq *q = d->h;
    *owned = 0;
    uint64_t h = hash_of(sql);
    for (int i = 0; i < q->ncache; i++)
        if (q->cache[i].hash == h && !strcmp(q->cache[i].sql, sql)) {
            *c = q->cache[i];
            return 0;
        }
    memset(c, 0, sizeof(*c));
    int keep = q->ncache < CACHE_MAX && (nparam > 0 || strlen(sql) <= ONE_OFF_LEN);
    char *text = sqlite_params(sql);
    if (!text)
        return db_fail(d, DB_E_NOMEM, "out of memory");
    int rc = sqlite3_prepare_v3(q->db, text, -1, keep ? SQLITE_PREPARE_PERSISTENT : 0, &c->st,
                                NULL);
    free(text);
    if (rc != SQLITE_OK)
        return sq_fail(d, rc, "cannot prepare a statement");
    c->n = sqlite3_bind_parameter_count(c->st);
    if (keep && (c->sql = strdup(sql))) {
        c->hash = h;
        q->cache[q->ncache++] = *c;
        return 0;
    }
    *owned = 1;
    return 0;
}

static void release(struct cached *c)
{
    sqlite3_finalize(c->st);
}

static int bind(struct db *d, const struct cached *c, int n, const struct db_val *p)
{
    if (c->n != n)
        return db_fail(d, DB_E_FAIL, "a statement takes %d parameters and was given %d (a "
                                     "ptcall bug)",
                       c->n, n);
    for (int i = 0; i < n; i++) {
        int k = i + 1;
        int rc = p[i].type == DB_INT    ? sqlite3_bind_int64(c->st, k, p[i].i)
                 : p[i].type == DB_TEXT ? sqlite3_bind_text(c->st, k, p[i].s, -1, SQLITE_STATIC)
                 : p[i].type == DB_REAL ? sqlite3_bind_double(c->st, k, p[i].d)
                                        : sqlite3_bind_null(c->st, k);
        if (rc != SQLITE_OK)
            return sq_fail(d, rc, "cannot bind a value");
    }
    return 0;
}

static int sq_query(struct db *d, const char *sql, int n, const struct db_val *param,
                    db_row_fn fn, void *ctx)
{
    struct cached c;
    int owned = 0, e = stmt(d, sql, n, &c, &owned);
    if (e) {
        if (owned)
            release(&c);
        return e;
    }
    sqlite3_stmt *st = c.st;
    if ((e = bind(d, &c, n, param)))
        goto out;
    for (;;) {
        int rc = sqlite3_step(st);
        if (rc == SQLITE_DONE)
            break;
        if (rc != SQLITE_ROW) {
            e = sq_fail(d, rc, "a statement failed");
            break;
        }
        if (!fn)
            continue;
        struct db_val col[MAX_COLS];
        int nc = sqlite3_column_count(st);
        if (nc > MAX_COLS)
            nc = MAX_COLS;
        for (int c = 0; c < nc; c++) {
            switch (sqlite3_column_type(st, c)) {
            case SQLITE_NULL:
                col[c] = DB_NUL;
                break;
            case SQLITE_INTEGER:
                col[c] = DB_I(sqlite3_column_int64(st, c));
                break;
            case SQLITE_FLOAT:
                col[c] = DB_R(sqlite3_column_double(st, c));
                break;
            default:
                col[c] = (struct db_val){.type = DB_TEXT,
                                         .s = (const char *)sqlite3_column_text(st, c)};
                if (!col[c].s)
                    col[c] = DB_NUL;
            }
        }
        int r = fn(ctx, nc, col);
        if (r) {
            e = r < 0 ? r : -DB_E_STOP;
            break;
        }
    }
out:
    if (owned) {
        release(&c);
    } else {
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
    }
    return e;
}

static int sq_exec(struct db *d, const char *sql, int n, const struct db_val *param)
{
    return sq_query(d, sql, n, param, NULL, NULL);
}

static int plain(struct db *d, const char *sql, const char *what)
{
    struct sq *q = d->h;
    int rc = sqlite3_exec(q->db, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? 0 : sq_fail(d, rc, what);
}

static int sq_begin(struct db *d)
{
    return plain(d, "BEGIN IMMEDIATE", "cannot start a transaction");
}

/* Deferred: in WAL mode the snapshot is taken at the first read and kept to the end. */
static int sq_begin_read(struct db *d)
{
    return plain(d, "BEGIN", "cannot start a transaction");
}

static int sq_commit(struct db *d)
{
    return plain(d, "COMMIT", "cannot commit");
}

static int sq_rollback(struct db *d)
{
    struct sq *q = d->h;
    if (sqlite3_get_autocommit(q->db)) /* SQLite rolled back already (some errors do) */
        return 0;
    return plain(d, "ROLLBACK", "cannot roll back");
}

const struct db_ops db_sqlite_ops = {
    .name = "sqlite",
    /* AUTOINCREMENT: a removed run's id is never given to another run */
    .id_column = "INTEGER PRIMARY KEY AUTOINCREMENT",
    .tables_sql = "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE "
                  "'sqlite_%'",
    .schema_lock_sql = NULL, /* BEGIN IMMEDIATE is exclusive among writers */
    .open = sq_open,
    .setup_write = sq_setup_write,
    .begin = sq_begin,
    .begin_read = sq_begin_read,
    .commit = sq_commit,
    .rollback = sq_rollback,
    .exec = sq_exec,
    .query = sq_query,
    .close = sq_close,
};
