/* Connecting by URL and the helpers the schema, ingest and query files share. */
#include "db_conn.h"

#include <stdlib.h>
#include <string.h>

const char *db_default_url(void)
{
    const char *e = getenv("PTCALL_DB");
    return e && *e ? e : "ptcall.db";
}

int db_url_is_pg(const char *url)
{
    return !strncmp(url, "postgresql://", 13) || !strncmp(url, "postgres://", 11);
}

/* url into out with the password (user:PASSWORD@, password=...) replaced by ***: messages
 * name the database, they must not print its secret. */
static void mask_password(const char *url, char *out, size_t n)
{
    snprintf(out, n, "%s", url);
    char *auth = strstr(out, "://");
    if (auth) {
        auth += 3;
        char *end = auth + strcspn(auth, "/?");
        char *at = memchr(auth, '@', (size_t)(end - auth));
        char *colon = at ? memchr(auth, ':', (size_t)(at - auth)) : NULL;
        if (colon) {
            char rest[512];
            snprintf(rest, sizeof(rest), "%s", at);
            snprintf(colon, n - (size_t)(colon - out), ":***%s", rest);
        }
    }
    char *pw = strstr(out, "password=");
    if (pw) {
        pw += 9;
        char rest[512];
        snprintf(rest, sizeof(rest), "%s", pw + strcspn(pw, "&"));
        snprintf(pw, n - (size_t)(pw - out), "***%s", rest);
    }
}

int db_connect(struct db *d, const char *url, enum db_how how)
{
    memset(d, 0, sizeof(*d));
    const char *target = url;
    if (db_url_is_pg(url)) {
        d->ops = &db_pg_ops;
    } else {
        d->ops = &db_sqlite_ops;
        if (!strncmp(target, "sqlite://", 9))
            target += 9;
        else if (!strncmp(target, "sqlite:", 7))
            target += 7;
        if (!*target)
            return db_fail(d, DB_E_CONNECT, "'%s' names no file", url);
    }
    mask_password(url, d->where, sizeof(d->where));
    if (d->ops == &db_sqlite_ops)
        snprintf(d->where, sizeof(d->where), "%s", target);
    int e = d->ops->open(d, target, (int)how);
    if (e)
        d->ops->close(d);
    return e;
}

void db_disconnect(struct db *d)
{
    if (d->ops && d->h)
        d->ops->close(d);
}

struct one {
    int64_t v;
    int found;
};

char *db_id_list(const int64_t *v, size_t n)
{
    char *s = malloc(n * 21 + 2);
    if (!s)
        return NULL;
    size_t k = 0;
    s[0] = 0;
    for (size_t i = 0; i < n; i++)
        k += (size_t)sprintf(s + k, "%s%lld", i ? "," : "", (long long)v[i]);
    return s;
}

int64_t db_int_of(const struct db_val *v)
{
    return v->type == DB_INT ? v->i : v->type == DB_TEXT ? strtoll(v->s, NULL, 10) : 0;
}

char *db_dup_text(const struct db_val *v, int *nomem)
{
    if (v->type != DB_TEXT)
        return NULL;
    char *s = strdup(v->s);
    if (!s)
        *nomem = 1;
    return s;
}

static int take_one(void *ctx, int ncol, const struct db_val *col)
{
    struct one *o = ctx;
    if (ncol > 0 && (col[0].type == DB_INT || col[0].type == DB_TEXT)) {
        o->v = db_int_of(&col[0]);
        o->found = 1;
    }
    return 1; /* the first row is all we want */
}

int db_value(struct db *d, const char *sql, int n, const struct db_val *p, int64_t *out,
             int *found)
{
    struct one o = {0, 0};
    int e = d->ops->query(d, sql, n, p, take_one, &o);
    if (e == -DB_E_STOP)
        e = 0;
    *out = o.v;
    *found = o.found;
    return e;
}

#define RETRIES 5

int db_transaction(struct db *d, int (*fn)(struct db *d, void *ctx), void *ctx)
{
    int e = 0;
    for (int attempt = 0; attempt < RETRIES; attempt++) {
        if ((e = d->ops->begin(d)))
            return e;
        d->in_txn = 1;
        e = fn(d, ctx);
        if (!e)
            e = d->ops->commit(d);
        if (!e) {
            d->in_txn = 0;
            return 0;
        }
        char keep[sizeof(d->err)];
        memcpy(keep, d->err, sizeof(keep));
        d->ops->rollback(d); /* its own failure is not the news: the first error is */
        memcpy(d->err, keep, sizeof(keep));
        d->in_txn = 0;
        if (e != -DB_E_RETRY)
            return e;
    }
    return e;
}

int db_snapshot(struct db *d, int (*fn)(struct db *d, void *ctx), void *ctx)
{
    if (d->in_txn)
        return fn(d, ctx);
    int e = d->ops->begin_read(d);
    if (e)
        return e;
    d->in_txn = 1;
    e = fn(d, ctx);
    char keep[sizeof(d->err)];
    memcpy(keep, d->err, sizeof(keep));
    /* nothing was written: commit and rollback end it alike; after a failure PostgreSQL
     * takes only a rollback */
    int end = e ? d->ops->rollback(d) : d->ops->commit(d);
    d->in_txn = 0;
    if (e)
        memcpy(d->err, keep, sizeof(keep));
    return e ? e : end;
}

/* ---- multi-row statements ------------------------------------------------------------
 * A run of 5,000 functions is 5,000 rows in each of run_functions and function_stats and as
 * many edges (a campaign part as many first reaches): one statement per row would be one
 * round trip each to a PostgreSQL server. Rows go in batches of up to DB_BATCH rows per
 * statement instead, in sizes that are powers of two (128, 64, ..., 1), so that each kind of
 * statement has at most 8 texts, which the back ends prepare once per connection. */

size_t db_batch_of(size_t n)
{
    size_t b = DB_BATCH;
    while (b > n)
        b /= 2;
    return b;
}

/* head, then rows copies of tmpl joined by ", ", then tail, into a new string; in tmpl, #k
 * (k = 1..9) stands for the row's k-th of ncol parameters: $(row * ncol + k). NULL when out
 * of memory. */
char *db_multi_row(const char *head, const char *tmpl, int ncol, size_t rows,
                       const char *tail)
{
    size_t cap = strlen(head) + strlen(tail) + rows * (strlen(tmpl) * 3 + 4) + 1;
    char *sql = malloc(cap);
    if (!sql)
        return NULL;
    size_t k = (size_t)snprintf(sql, cap, "%s", head);
    for (size_t r = 0; r < rows; r++) {
        if (r)
            k += (size_t)snprintf(sql + k, cap - k, ", ");
        for (const char *t = tmpl; *t; t++) {
            if (*t == '#' && t[1] >= '1' && t[1] <= '9') {
                k += (size_t)snprintf(sql + k, cap - k, "$%zu", r * (size_t)ncol +
                                                                     (size_t)(t[1] - '0'));
                t++;
            } else {
                sql[k++] = *t;
            }
        }
    }
    snprintf(sql + k, cap - k, "%s", tail);
    return sql;
}

int db_exec_rows(struct db *d, size_t n, const void *ctx, const char *head, const char *tmpl,
                 int ncol, const char *tail, db_fill_fn fill)
{
    struct db_val p[DB_BATCH * DB_ROW_MAX];
    if (ncol < 1 || ncol > DB_ROW_MAX)
        return db_fail(d, DB_E_FAIL, "a row of %d parameters (a ptcall bug)", ncol);
    for (size_t at = 0; at < n;) {
        size_t rows = db_batch_of(n - at);
        char *sql = db_multi_row(head, tmpl, ncol, rows, tail);
        if (!sql)
            return db_fail(d, DB_E_NOMEM, "out of memory");
        for (size_t r = 0; r < rows; r++)
            fill(ctx, at + r, p + r * (size_t)ncol);
        int e = d->ops->exec(d, sql, (int)(rows * (size_t)ncol), p);
        free(sql);
        if (e)
            return e;
        at += rows;
    }
    return 0;
}
