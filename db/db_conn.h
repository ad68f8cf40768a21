/* Connecting to a runs database by its URL, and what every other file of db/ does with a
 * connection: single values, transactions with retries (docs/db.md). */
#ifndef PTCALL_DB_CONN_H
#define PTCALL_DB_CONN_H

#include "db_backend.h"

/* --db's default: $PTCALL_DB, else "ptcall.db" in the current directory. */
const char *db_default_url(void);
/* Whether url names a PostgreSQL database (postgresql://, postgres://). */
int db_url_is_pg(const char *url);
/* Opens url: postgresql://... or postgres://... through libpq, anything else (a path, or
 * sqlite:PATH) as an SQLite file, as how says (enum db_how). d->where gets the URL without
 * its password. Returns 0 or -DB_E_* with d->err set; d is closed again on failure. */
int db_connect(struct db *d, const char *url, enum db_how how);
void db_disconnect(struct db *d);
/* The first column of the first row of a query as an integer: 0 with *found 1, or 0 with
 * *found 0 when there is no row (or it is NULL), or -DB_E_*. */
int db_value(struct db *d, const char *sql, int n, const struct db_val *p, int64_t *out,
             int *found);
/* Runs fn(d, ctx) in one write transaction and commits; rolls back when fn fails, and
 * runs it again (up to 5 times) when the backend says the transaction may be retried
 * (a PostgreSQL deadlock or serialization failure). Returns fn's or the commit's error. */
int db_transaction(struct db *d, int (*fn)(struct db *d, void *ctx), void *ctx);
/* "1,2,3": run or function ids this database made go into SQL as integer literals (a
 * parameter list would be limited in length). NULL when out of memory. */
char *db_id_list(const int64_t *v, size_t n);
/* A result column as an integer (PostgreSQL may give numbers as text), 0 when NULL. */
int64_t db_int_of(const struct db_val *v);
/* A copy of a text column, NULL when it is NULL; sets *nomem when out of memory. */
char *db_dup_text(const struct db_val *v, int *nomem);
/* Runs fn(d, ctx) in one read-only transaction, so that all its statements see the same
 * snapshot (inside a transaction already: in that one). Returns fn's error, or the
 * backend's. */
int db_snapshot(struct db *d, int (*fn)(struct db *d, void *ctx), void *ctx);

/* Multi-row statements (db_conn.c): at most DB_BATCH rows each, in power-of-two batches. */
#define DB_BATCH 128
#define DB_ROW_MAX 8   /* parameters per row */
/* The size of the next batch of the n rows left. */
size_t db_batch_of(size_t n);
/* head, then rows copies of tmpl joined by ", ", then tail, into a new string; in tmpl, #k
 * (k = 1..9) stands for the row's k-th of ncol parameters: $(row * ncol + k). NULL when out
 * of memory. */
char *db_multi_row(const char *head, const char *tmpl, int ncol, size_t rows,
                   const char *tail);
/* Fills the parameters of row i of ctx (ncol of them) into p. */
typedef void (*db_fill_fn)(const void *ctx, size_t i, struct db_val *p);
/* Executes head tmpl... tail over rows [0, n) of ctx, in batches. 0 or -DB_E_*. */
int db_exec_rows(struct db *d, size_t n, const void *ctx, const char *head, const char *tmpl,
                 int ncol, const char *tail, db_fill_fn fill);

#endif
