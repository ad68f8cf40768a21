/* The PostgreSQL backend of the runs database (libpq). Many machines write one database: each
 * run is one transaction (READ COMMITTED); concurrent writers meet only on the functions
 * dictionary, which db_ingest.c fills in one global order, and a deadlock or serialization
 * failure comes back as DB_E_RETRY for the caller to retry the transaction. Statements are
 * prepared once per connection and run with text parameters. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "db_backend.h"
#include "db_pg_lib.h"

/* Statements prepared per connection (as db_sqlite.c keeps them, and for the same reason
 * one-off statements are not: a long statement without parameters carries its values). */
#define CACHE_MAX 96
#define MAX_COLS 64
#define ONE_OFF_LEN 512

/* type OIDs (catalog/pg_type_d.h, a server header): int8, int2, int4 */
#define OID_INT8 20
#define OID_INT2 21
#define OID_INT4 23
#define OID_FLOAT8 701

struct cached {
    char *sql;
    uint64_t hash;
    char name[16];
};

struct pg {
    PGconn *c;
    struct cached cache[CACHE_MAX];
    int ncache;
};

/* libpq's messages end in a newline and may span lines: one line for ours, "; " between.
 * s has room for n bytes. */
static void one_line(char *s, size_t n)
{
    char out[1024] = "";
    size_t k = 0;
    for (const char *p = s; *p && k + 3 < sizeof(out); p++) {
        if (*p == '\n') {
            while (p[1] == ' ' || p[1] == '\t')
                p++;
            if (p[1]) {
                out[k++] = ';';
                out[k++] = ' ';
            }
            continue;
        }
        out[k++] = *p == '\t' ? ' ' : *p;
    }
    while (k && out[k - 1] == ' ')
        k--;
    if (k >= n)
        k = n - 1;
    memcpy(s, out, k);
    s[k] = 0;
}

static int pg_result_fail(struct db *d, PGresult *r, const char *what)
{
    struct pg *g = d->h;
    const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
    char msg[700];
    snprintf(msg, sizeof(msg), "%s", r ? PQresultErrorMessage(r) : PQerrorMessage(g->c));
    if (!msg[0])
        snprintf(msg, sizeof(msg), "%s", PQerrorMessage(g->c));
    one_line(msg, sizeof(msg));
    int code = DB_E_FAIL;
    if (PQstatus(g->c) == CONNECTION_BAD)
        code = DB_E_CONNECT;
    else if (state && !strcmp(state, "23505"))
        code = DB_E_CONSTRAINT;
    else if (state && (!strcmp(state, "40001") || !strcmp(state, "40P01")))
        code = DB_E_RETRY;
    else if (state && !strcmp(state, "25006")) /* read_only_sql_transaction */
        code = DB_E_READONLY;
    else if (state && !strcmp(state, "22021")) /* character_not_in_repertoire */
        code = DB_E_ENCODING;
    if (code == DB_E_CONNECT)
        return db_fail(d, code, "%s: lost the connection to %s: %s", what, d->where, msg);
    return db_fail(d, code, "%s: %s", what, msg);
}

static void pg_close(struct db *d)
{
    struct pg *g = d->h;
    if (!g)
        return;
    for (int i = 0; i < g->ncache; i++)
        free(g->cache[i].sql);
    PQfinish(g->c);
    free(g);
    d->h = NULL;
}

/* NOTICEs (CREATE TABLE IF NOT EXISTS of an existing table) are not for the user. */
static void quiet(void *arg, const char *message)
{
    (void)arg;
    (void)message;
}

static int plain(struct db *d, const char *sql, const char *what);

static int pg_open(struct db *d, const char *url, int how)
{
    /* the database itself must exist (DB_HOW_CREATE as DB_HOW_WRITE): its tables are made by
     * the schema */
    char why[512];
    if (db_pg_lib_load(why, sizeof(why)) < 0)
        return db_fail(d, DB_E_CONNECT, "cannot open %s: %s", d->where, why);
    struct pg *g = calloc(1, sizeof(*g));
    if (!g)
        return db_fail(d, DB_E_NOMEM, "out of memory");
    d->h = g;
    g->c = PQconnectdb(url);
    if (!g->c) {
        pg_close(d);
        return db_fail(d, DB_E_NOMEM, "out of memory");
    }
    if (PQstatus(g->c) != CONNECTION_OK) {
        char msg[700];
        snprintf(msg, sizeof(msg), "%s", PQerrorMessage(g->c));
        one_line(msg, sizeof(msg));
        pg_close(d);
        return db_fail(d, DB_E_CONNECT, "cannot connect to %s: %s", d->where, msg);
    }
    PQsetNoticeProcessor(g->c, quiet, NULL);
    /* a reader's session writes nothing, whatever it is asked */
    d->readonly = how == DB_HOW_READ;
    if (d->readonly) {
        int e = plain(d, "SET default_transaction_read_only = on", "cannot set up the session");
        if (e) {
            pg_close(d);
            return e;
        }
    }
    return 0;
}

static int pg_query(struct db *d, const char *sql, int n, const struct db_val *param,
                    db_row_fn fn, void *ctx)
{
    struct pg *g = d->h;
    if (n > DB_MAX_PARAMS)
        return db_fail(d, DB_E_FAIL, "a statement with %d parameters (a ptcall bug)", n);
    char nums[DB_MAX_PARAMS][32];
    const char *val[DB_MAX_PARAMS];
    for (int i = 0; i < n; i++) {
        if (param[i].type == DB_INT) {
            snprintf(nums[i], sizeof(nums[i]), "%lld", (long long)param[i].i);
            val[i] = nums[i];
        } else if (param[i].type == DB_REAL) {
            snprintf(nums[i], sizeof(nums[i]), "%.17g", param[i].d); /* exact: 17 digits */
            val[i] = nums[i];
        } else {
            val[i] = param[i].type == DB_TEXT ? param[i].s : NULL;
        }
    }
    const char *name = NULL;
    uint64_t h = 1469598103934665603ull; /* FNV-1a 64 of sql */
    for (const char *p = sql; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    for (int i = 0; i < g->ncache && !name; i++)
        if (g->cache[i].hash == h && !strcmp(g->cache[i].sql, sql))
            name = g->cache[i].name;
    if (!name && g->ncache < CACHE_MAX && (n > 0 || strlen(sql) <= ONE_OFF_LEN)) {
        struct cached *c = &g->cache[g->ncache];
        c->hash = h;
        snprintf(c->name, sizeof(c->name), "ptc%d", g->ncache);
        PGresult *r = PQprepare(g->c, c->name, sql, n, NULL);
        if (!r || PQresultStatus(r) != PGRES_COMMAND_OK) {
            int e = pg_result_fail(d, r, "cannot prepare a statement");
            PQclear(r);
            return e;
        }
        PQclear(r);
        if (!(c->sql = strdup(sql))) {
            /* prepared but not remembered: its name is taken by the next one, which
             * PostgreSQL refuses; so stop here */
            return db_fail(d, DB_E_NOMEM, "out of memory");
        }
        g->ncache++;
        name = c->name;
    }
    PGresult *r = name ? PQexecPrepared(g->c, name, n, val, NULL, NULL, 0)
                       : PQexecParams(g->c, sql, n, NULL, val, NULL, NULL, 0);
    ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
        int e = pg_result_fail(d, r, "a statement failed");
        PQclear(r);
        return e;
    }
    int e = 0;
    if (fn && st == PGRES_TUPLES_OK) {
        int rows = PQntuples(r), nc = PQnfields(r);
        if (nc > MAX_COLS)
            nc = MAX_COLS;
        Oid type[MAX_COLS];
        for (int c = 0; c < nc; c++)
            type[c] = PQftype(r, c);
        for (int i = 0; i < rows && !e; i++) {
            struct db_val col[MAX_COLS];
            for (int c = 0; c < nc; c++) {
                if (PQgetisnull(r, i, c))
                    col[c] = DB_NUL;
                else if (type[c] == OID_INT8 || type[c] == OID_INT4 || type[c] == OID_INT2)
                    col[c] = DB_I(strtoll(PQgetvalue(r, i, c), NULL, 10));
                else if (type[c] == OID_FLOAT8)
                    col[c] = DB_R(strtod(PQgetvalue(r, i, c), NULL));
                else
                    col[c] = (struct db_val){.type = DB_TEXT, .s = PQgetvalue(r, i, c)};
            }
            int k = fn(ctx, nc, col);
            if (k)
                e = k < 0 ? k : -DB_E_STOP;
        }
    }
    PQclear(r);
    return e;
}

static int pg_exec(struct db *d, const char *sql, int n, const struct db_val *param)
{
    return pg_query(d, sql, n, param, NULL, NULL);
}

static int plain(struct db *d, const char *sql, const char *what)
{
    struct pg *g = d->h;
    PGresult *r = PQexec(g->c, sql);
    ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    int e = st == PGRES_COMMAND_OK ? 0 : pg_result_fail(d, r, what);
    PQclear(r);
    return e;
}

static int pg_begin(struct db *d)
{
    return plain(d, "BEGIN", "cannot start a transaction");
}

/* REPEATABLE READ: every statement of the transaction sees the snapshot of its first one. */
static int pg_begin_read(struct db *d)
{
    return plain(d, "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY",
                 "cannot start a transaction");
}

static int pg_commit(struct db *d)
{
    return plain(d, "COMMIT", "cannot commit");
}

static int pg_rollback(struct db *d)
{
    return plain(d, "ROLLBACK", "cannot roll back");
}

const struct db_ops db_pg_ops = {
    .name = "postgresql",
    .id_column = "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
    .tables_sql = "SELECT CAST(table_name AS TEXT) FROM information_schema.tables WHERE "
                  "table_schema = current_schema()",
    /* any fixed key: every ptcall opening the database migrates under it */
    .schema_lock_sql = "SELECT pg_advisory_xact_lock(7466361700)",
    .open = pg_open,
    .begin = pg_begin,
    .begin_read = pg_begin_read,
    .commit = pg_commit,
    .rollback = pg_rollback,
    .exec = pg_exec,
    .query = pg_query,
    .close = pg_close,
};
