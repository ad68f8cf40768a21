/* The web views' queries (db_query_web.h; the hot-function ranking is db_hot's). SQL in the
 * dialect both back ends take; run ids go into the SQL as integer literals, as db_query.c
 * does (they are this database's own). */
#include "db_query_web.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_conn.h"

/* ---- one function ------------------------------------------------------------------------- */

struct wone {
    struct db_func_out *f;
    int found, nomem;
};

static int on_wone(void *ctx, int ncol, const struct db_val *col)
{
    struct wone *c = ctx;
    if (ncol < 6 || c->found)
        return 0;
    c->found = 1;
    c->f->id = col[0].i;
    c->f->name = db_dup_text(&col[1], &c->nomem);
    c->f->linkage_name = db_dup_text(&col[2], &c->nomem);
    c->f->module = db_dup_text(&col[3], &c->nomem);
    c->f->file = db_dup_text(&col[4], &c->nomem);
    c->f->line = (uint32_t)db_int_of(&col[5]);
    return c->nomem ? -DB_E_NOMEM : 0;
}

int db_wfunction(struct db *d, int64_t fid, struct db_func_out *out, int *found)
{
    memset(out, 0, sizeof(*out));
    struct wone c = {out, 0, 0};
    struct db_val p[1] = {DB_I(fid)};
    int e = d->ops->query(d, "SELECT id, name, linkage_name, module, file, line FROM functions "
                             "WHERE id = $1", 1, p, on_wone, &c);
    if (e == -DB_E_NOMEM || c.nomem)
        e = db_fail(d, DB_E_NOMEM, "out of memory");
    *found = !e && c.found;
    if (e)
        db_wfunction_free(out);
    return e;
}

void db_wfunction_free(struct db_func_out *f)
{
    free(f->name);
    free(f->linkage_name);
    free(f->module);
    free(f->file);
    free(f->module_path);
    memset(f, 0, sizeof(*f));
}

struct wpoints {
    struct db_wpoint *v;
    size_t n, cap;
};

static int on_wpoint(void *ctx, int ncol, const struct db_val *col)
{
    struct wpoints *c = ctx;
    if (ncol < 4)
        return 0;
    if (c->n == c->cap) {
        size_t nc = c->cap ? c->cap * 2 : 64;
        void *v = realloc(c->v, nc * sizeof(*c->v));
        if (!v)
            return -DB_E_NOMEM;
        c->v = v;
        c->cap = nc;
    }
    struct db_wpoint *p = &c->v[c->n++];
    p->run = db_int_of(&col[0]);
    p->calls = (uint64_t)db_int_of(&col[1]);
    p->timed = col[2].type != DB_NULL;
    p->total = (uint64_t)db_int_of(&col[2]);
    p->self = (uint64_t)db_int_of(&col[3]);
    p->demoted = ncol > 4 && db_int_of(&col[4]) != 0;
    return 0;
}

int db_wfunction_runs(struct db *d, int64_t fid, const struct db_ids *ids,
                      struct db_wpoint **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (!ids->n)
        return 0;
    char *list = db_id_list(ids->v, ids->n);
    char *sql = list ? malloc(strlen(list) + 200) : NULL;
    if (!sql) {
        free(list);
        return db_fail(d, DB_E_NOMEM, "out of memory");
    }
    sprintf(sql, "SELECT run_id, calls, total, self, demoted FROM run_functions WHERE "
                 "function_id = $1 AND run_id IN (%s) ORDER BY run_id", list);
    struct wpoints c = {NULL, 0, 0};
    struct db_val p[1] = {DB_I(fid)};
    int e = d->ops->query(d, sql, 1, p, on_wpoint, &c);
    free(sql);
    free(list);
    if (e) {
        free(c.v);
        return e == -DB_E_NOMEM ? db_fail(d, DB_E_NOMEM, "out of memory") : e;
    }
    *out = c.v;
    *n = c.n;
    return 0;
}

struct wedges {
    struct db_wedge *v;
    size_t n, cap;
    int nomem;
};

static int on_wedge(void *ctx, int ncol, const struct db_val *col)
{
    struct wedges *c = ctx;
    if (ncol < 4)
        return 0;
    if (c->n == c->cap) {
        size_t nc = c->cap ? c->cap * 2 : 32;
        void *v = realloc(c->v, nc * sizeof(*c->v));
        if (!v)
            return -DB_E_NOMEM;
        c->v = v;
        c->cap = nc;
    }
    struct db_wedge *w = &c->v[c->n++];
    w->other = db_int_of(&col[0]);
    w->name = db_dup_text(&col[1], &c->nomem);
    w->calls = (uint64_t)db_int_of(&col[2]);
    w->runs = (uint32_t)db_int_of(&col[3]);
    return c->nomem ? -DB_E_NOMEM : 0;
}

struct edges_job {
    int64_t fid;
    const struct db_ids *ids;
    int callers;
    struct wedges *c;
};

static int edges_in_snapshot(struct db *d, void *ctx)
{
    struct edges_job *j = ctx;
    const char *other = j->callers ? "caller_id" : "callee_id",
               *self = j->callers ? "callee_id" : "caller_id";
    /* over every run, edge_stats has the sums (one row per edge, where run_edges has one per
     * edge and run); ids are distinct, so as many as the runs are all of them */
    int64_t nall = 0;
    int found = 0;
    int e = db_value(d, "SELECT COUNT(*) FROM runs", 0, NULL, &nall, &found);
    if (e)
        return e;
    char *list = NULL, *sql;
    if (found && (size_t)nall == j->ids->n) {
        sql = malloc(400);
        if (sql)
            snprintf(sql, 400,
                     "SELECT s.%s, f.name, s.calls_sum, s.runs FROM edge_stats s JOIN functions f "
                     "ON f.id = s.%s WHERE s.%s = $1 ORDER BY s.calls_sum DESC, f.name",
                     other, other, self);
    } else {
        list = db_id_list(j->ids->v, j->ids->n);
        sql = list ? malloc(strlen(list) + 400) : NULL;
        if (sql)
            sprintf(sql,
                    "SELECT e.%s, f.name, SUM(e.calls), COUNT(*) FROM run_edges e JOIN functions "
                    "f ON f.id = e.%s WHERE e.%s = $1 AND e.run_id IN (%s) GROUP BY e.%s, f.name "
                    "ORDER BY SUM(e.calls) DESC, f.name",
                    other, other, self, list, other);
    }
    free(list);
    if (!sql)
        return db_fail(d, DB_E_NOMEM, "out of memory");
    struct db_val p[1] = {DB_I(j->fid)};
    e = d->ops->query(d, sql, 1, p, on_wedge, j->c);
    free(sql);
    return e == -DB_E_NOMEM || j->c->nomem ? db_fail(d, DB_E_NOMEM, "out of memory") : e;
}

int db_wfunction_edges(struct db *d, int64_t fid, const struct db_ids *ids, int callers,
                       struct db_wedge **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (!ids->n)
        return 0;
    struct wedges c = {NULL, 0, 0, 0};
    struct edges_job j = {fid, ids, callers, &c};
    int e = db_snapshot(d, edges_in_snapshot, &j);
    if (e) {
        db_wedges_free(c.v, c.n);
        return e;
    }
    *out = c.v;
    *n = c.n;
    return 0;
}

void db_wedges_free(struct db_wedge *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        free(v[i].name);
    free(v);
}

int db_wtag_exists(struct db *d, const char *name, const char *value, int *found)
{
    int64_t x;
    struct db_val p[2] = {DB_S(name), DB_S(value)};
    return value ? db_value(d, "SELECT 1 FROM run_tags WHERE name = $1 AND value = $2 LIMIT 1",
                            2, p, &x, found)
                 : db_value(d, "SELECT 1 FROM run_tags WHERE name = $1 LIMIT 1", 1, p, &x,
                            found);
}

int db_wgeneration(struct db *d, int64_t *count, int64_t *max_id)
{
    int found;
    int e = db_value(d, "SELECT COUNT(*) FROM runs", 0, NULL, count, &found);
    if (!e)
        e = db_value(d, "SELECT MAX(id) FROM runs", 0, NULL, max_id, &found);
    if (!e && !found)
        *max_id = 0;
    return e;
}
