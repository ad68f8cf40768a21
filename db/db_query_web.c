/* The web views' queries (db_query_web.h). SQL in the dialect both back ends take; run ids
 * go into the SQL as integer literals, as db_query.c does (they are this database's own). */
#define _GNU_SOURCE /* qsort_r */
#include "db_query_web.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_conn.h"

const char *const db_wstat_names[DB_NW] = {"sum", "mean", "median", "max", "min", "stddev"};

static char *id_list(const int64_t *v, size_t n)
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

static int64_t int_of(const struct db_val *v)
{
    return v->type == DB_INT ? v->i : v->type == DB_TEXT ? strtoll(v->s, NULL, 10) : 0;
}

static char *dup_text(const struct db_val *v, int *nomem)
{
    if (v->type != DB_TEXT)
        return NULL;
    char *s = strdup(v->s);
    if (!s)
        *nomem = 1;
    return s;
}

/* ---- hot functions ------------------------------------------------------------------------ */

/* One function's values while the rows stream in: the rows come in run order, so every
 * function's values are kept until the end (for the median). */
struct wacc {
    int64_t id;
    uint64_t (*vals)[DB_NMEAS];
    uint32_t n, cap;
};

struct whot_ctx {
    struct wacc *a;          /* open-addressing table keyed by function id */
    size_t cap, used;
    int nomem;
    const struct db_ids *keep; /* reading the whole table: the runs to keep (ascending) */
};

static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return a < b ? -1 : a > b;
}

static struct wacc *slot_of(struct whot_ctx *c, int64_t id)
{
    if (c->used * 2 >= c->cap) {
        size_t nc = c->cap ? c->cap * 2 : 4096;
        struct wacc *t = calloc(nc, sizeof(*t));
        if (!t)
            return NULL;
        for (size_t i = 0; i < c->cap; i++) {
            if (!c->a[i].id)
                continue;
            size_t h = ((uint64_t)c->a[i].id * 0x9e3779b97f4a7c15ull) & (nc - 1);
            while (t[h].id)
                h = (h + 1) & (nc - 1);
            t[h] = c->a[i];
        }
        free(c->a);
        c->a = t;
        c->cap = nc;
    }
    size_t h = ((uint64_t)id * 0x9e3779b97f4a7c15ull) & (c->cap - 1);
    while (c->a[h].id && c->a[h].id != id)
        h = (h + 1) & (c->cap - 1);
    if (!c->a[h].id) {
        c->a[h].id = id;
        c->used++;
    }
    return &c->a[h];
}

static int on_wfigure(void *ctx, int ncol, const struct db_val *col)
{
    struct whot_ctx *c = ctx;
    if (ncol < 5)
        return 0;
    int64_t run = int_of(&col[4]);
    if (c->keep && !bsearch(&run, c->keep->v, c->keep->n, sizeof(run), cmp_i64))
        return 0;
    struct wacc *a = slot_of(c, col[0].i);
    if (!a)
        return -DB_E_NOMEM;
    if (a->n == a->cap) {
        uint32_t nc = a->cap ? a->cap * 2 : 4;
        void *v = realloc(a->vals, nc * sizeof(*a->vals));
        if (!v)
            return -DB_E_NOMEM;
        a->vals = v;
        a->cap = nc;
    }
    for (int m = 0; m < DB_NMEAS; m++)
        a->vals[a->n][m] = (uint64_t)int_of(&col[1 + m]);
    a->n++;
    return 0;
}

/* The k-th smallest of v[0..n) (0-based), reordering v: quickselect, O(n) on average. A
 * full sort of every function's values cost most of the ranking over 1,000 runs. */
static uint64_t kth(uint64_t *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        uint64_t pivot = v[lo + (hi - lo) / 2];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot)
                i++;
            while (v[j] > pivot)
                j--;
            if (i <= j) {
                uint64_t t = v[i];
                v[i] = v[j];
                v[j] = t;
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return v[k];
    }
    return v[k];
}

/* The statistics of one measure: count values given, nruns - count zeros. */
static void stats_of(uint64_t *v, uint32_t count, size_t nruns, double *out)
{
    double sum = 0, sq = 0, mx = 0, mn = count < nruns ? 0 : (count ? (double)v[0] : 0);
    for (uint32_t i = 0; i < count; i++) {
        double x = (double)v[i];
        sum += x;
        sq += x * x;
        if (x > mx)
            mx = x;
        if (x < mn)
            mn = x;
    }
    double mean = nruns ? sum / (double)nruns : 0;
    double var = nruns ? sq / (double)nruns - mean * mean : 0;
    out[DB_W_SUM] = sum;
    out[DB_W_MEAN] = mean;
    out[DB_W_MAX] = mx;
    out[DB_W_MIN] = mn;
    out[DB_W_STDDEV] = var > 0 ? sqrt(var) : 0; /* population, as report --stat stddev */
    /* the i-th smallest of the nruns values, of which nruns - count are zeros */
    size_t zeros = nruns - count;
#define AT(i) ((i) < zeros ? 0.0 : (double)kth(v, count, (i) - zeros))
    out[DB_W_MEDIAN] = !nruns ? 0 : nruns % 2 ? AT(nruns / 2)
                                              : (AT(nruns / 2 - 1) + AT(nruns / 2)) / 2;
#undef AT
}

struct wunits {
    int n, none;
    char unit[8];
};

static int on_wunit(void *ctx, int ncol, const struct db_val *col)
{
    struct wunits *u = ctx;
    if (ncol < 1 || col[0].type != DB_TEXT)
        return 0;
    u->n++;
    u->none |= !strcmp(col[0].s, "none");
    snprintf(u->unit, sizeof(u->unit), "%s", col[0].s);
    return 0;
}

static int cmp_whot_id(const void *x, const void *y)
{
    const struct db_whot_fn *a = x, *b = y;
    return a->f.id < b->f.id ? -1 : a->f.id > b->f.id;
}

struct wnames {
    struct db_whot *h;
    int nomem;
};

static int on_wname(void *ctx, int ncol, const struct db_val *col)
{
    struct wnames *c = ctx;
    if (ncol < 6)
        return 0;
    struct db_whot_fn key = {.f.id = col[0].i};
    struct db_whot_fn *f = bsearch(&key, c->h->fn, c->h->n, sizeof(key), cmp_whot_id);
    if (!f)
        return 0;
    f->f.name = dup_text(&col[1], &c->nomem);
    f->f.linkage_name = dup_text(&col[2], &c->nomem);
    f->f.module = dup_text(&col[3], &c->nomem);
    f->f.file = dup_text(&col[4], &c->nomem);
    f->f.line = (uint32_t)int_of(&col[5]);
    return c->nomem ? -DB_E_NOMEM : 0;
}

int db_whot(struct db *d, const struct db_ids *ids, struct db_whot *out)
{
    memset(out, 0, sizeof(*out));
    out->nruns = ids->n;
    snprintf(out->time_unit, sizeof(out->time_unit), "none");
    if (!ids->n)
        return 0;
    char *list = id_list(ids->v, ids->n);
    size_t cap = (list ? strlen(list) : 0) + 256;
    char *sql = malloc(cap);
    struct whot_ctx c = {NULL, 0, 0, 0, NULL};
    char *flist = NULL;
    int e = 0;
    if (!list || !sql) {
        e = db_fail(d, DB_E_NOMEM, "out of memory");
        goto out;
    }
    struct wunits u = {0, 0, ""};
    snprintf(sql, cap, "SELECT DISTINCT time_unit FROM runs WHERE id IN (%s)", list);
    if ((e = d->ops->query(d, sql, 0, NULL, on_wunit, &u)))
        goto out;
    out->timed = u.n == 1 && !u.none;
    out->mixed = u.n > 1;
    snprintf(out->time_unit, sizeof(out->time_unit), "%s", out->timed ? u.unit : "none");
    /* no ORDER BY: the rows come in the table's order (by run), grouped here in a hash
     * table, which costs less than sorting millions of rows in the database. Most of the
     * runs: the whole table read in order, the others' rows skipped here, which costs about
     * half of looking up each chosen run's rows by the index */
    int64_t nall = 0;
    int found = 0;
    if ((e = db_value(d, "SELECT COUNT(*) FROM runs", 0, NULL, &nall, &found)))
        goto out;
    int sorted = 1;
    for (size_t i = 1; i < ids->n; i++)
        sorted &= ids->v[i - 1] < ids->v[i];
    if (found && sorted && ids->n * 4 >= (size_t)nall * 3) {
        c.keep = ids;
        snprintf(sql, cap, "SELECT function_id, calls, total, self, run_id FROM run_functions");
    } else {
        snprintf(sql, cap, "SELECT function_id, calls, total, self, run_id FROM run_functions "
                           "WHERE run_id IN (%s)", list);
    }
    e = d->ops->query(d, sql, 0, NULL, on_wfigure, &c);
    if (e == -DB_E_NOMEM || (!e && c.nomem))
        e = db_fail(d, DB_E_NOMEM, "out of memory");
    if (e || !c.used)
        goto out;
    if (!(out->fn = calloc(c.used, sizeof(*out->fn)))) {
        e = db_fail(d, DB_E_NOMEM, "out of memory");
        goto out;
    }
    uint64_t *col = NULL;
    for (size_t i = 0; i < c.cap; i++) {
        struct wacc *a = &c.a[i];
        if (!a->id)
            continue;
        struct db_whot_fn *f = &out->fn[out->n++];
        f->f.id = a->id;
        f->runs = a->n;
        uint64_t *nc = realloc(col, (a->n ? a->n : 1) * sizeof(*col));
        if (!nc) {
            free(col);
            e = db_fail(d, DB_E_NOMEM, "out of memory");
            goto out;
        }
        col = nc;
        for (int m = 0; m < DB_NMEAS; m++) {
            for (uint32_t k = 0; k < a->n; k++)
                col[k] = a->vals[k][m];
            stats_of(col, a->n, ids->n, f->v[m]);
        }
    }
    free(col);
    qsort(out->fn, out->n, sizeof(*out->fn), cmp_whot_id);
    int64_t *fid = malloc(out->n * sizeof(*fid));
    if (fid) {
        for (size_t i = 0; i < out->n; i++)
            fid[i] = out->fn[i].f.id;
        flist = id_list(fid, out->n);
        free(fid);
    }
    char *nsql = flist ? malloc(strlen(flist) + 128) : NULL;
    if (!nsql) {
        e = db_fail(d, DB_E_NOMEM, "out of memory");
        goto out;
    }
    sprintf(nsql, "SELECT id, name, linkage_name, module, file, line FROM functions WHERE id IN "
                  "(%s)", flist);
    struct wnames nc = {out, 0};
    e = d->ops->query(d, nsql, 0, NULL, on_wname, &nc);
    free(nsql);
    if (e == -DB_E_NOMEM || nc.nomem)
        e = db_fail(d, DB_E_NOMEM, "out of memory");
out:
    for (size_t i = 0; i < c.cap; i++)
        free(c.a[i].vals);
    free(c.a);
    free(flist);
    free(sql);
    free(list);
    if (e)
        db_whot_free(out);
    return e;
}

struct wrank {
    int stat, meas;
};

static int cmp_wrank(const void *x, const void *y, void *ctx)
{
    const struct wrank *k = ctx;
    const struct db_whot_fn *a = x, *b = y;
    double p = a->v[k->meas][k->stat], q = b->v[k->meas][k->stat];
    if (p != q)
        return p > q ? -1 : 1;
    p = a->v[DB_M_CALLS][DB_W_SUM];
    q = b->v[DB_M_CALLS][DB_W_SUM];
    if (p != q)
        return p > q ? -1 : 1;
    int c = strcmp(a->f.name ? a->f.name : "", b->f.name ? b->f.name : "");
    return c ? c : (a->f.id < b->f.id ? -1 : a->f.id > b->f.id);
}

void db_whot_rank(struct db_whot *h, int stat, int meas)
{
    struct wrank k = {stat, meas};
    qsort_r(h->fn, h->n, sizeof(*h->fn), cmp_wrank, &k);
}

void db_whot_free(struct db_whot *h)
{
    for (size_t i = 0; h->fn && i < h->n; i++) {
        struct db_func_out *f = &h->fn[i].f;
        free(f->name);
        free(f->linkage_name);
        free(f->module);
        free(f->file);
        free(f->module_path);
    }
    free(h->fn);
    memset(h, 0, sizeof(*h));
}

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
    c->f->name = dup_text(&col[1], &c->nomem);
    c->f->linkage_name = dup_text(&col[2], &c->nomem);
    c->f->module = dup_text(&col[3], &c->nomem);
    c->f->file = dup_text(&col[4], &c->nomem);
    c->f->line = (uint32_t)int_of(&col[5]);
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
    p->run = int_of(&col[0]);
    p->calls = (uint64_t)int_of(&col[1]);
    p->timed = col[2].type != DB_NULL;
    p->total = (uint64_t)int_of(&col[2]);
    p->self = (uint64_t)int_of(&col[3]);
    return 0;
}

int db_wfunction_runs(struct db *d, int64_t fid, const struct db_ids *ids,
                      struct db_wpoint **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (!ids->n)
        return 0;
    char *list = id_list(ids->v, ids->n);
    char *sql = list ? malloc(strlen(list) + 200) : NULL;
    if (!sql) {
        free(list);
        return db_fail(d, DB_E_NOMEM, "out of memory");
    }
    sprintf(sql, "SELECT run_id, calls, total, self FROM run_functions WHERE function_id = $1 "
                 "AND run_id IN (%s) ORDER BY run_id", list);
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
    w->other = int_of(&col[0]);
    w->name = dup_text(&col[1], &c->nomem);
    w->calls = (uint64_t)int_of(&col[2]);
    w->runs = (uint32_t)int_of(&col[3]);
    return c->nomem ? -DB_E_NOMEM : 0;
}

int db_wfunction_edges(struct db *d, int64_t fid, const struct db_ids *ids, int callers,
                       struct db_wedge **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (!ids->n)
        return 0;
    char *list = id_list(ids->v, ids->n);
    char *sql = list ? malloc(strlen(list) + 400) : NULL;
    if (!sql) {
        free(list);
        return db_fail(d, DB_E_NOMEM, "out of memory");
    }
    const char *other = callers ? "caller_id" : "callee_id", *self = callers ? "callee_id"
                                                                             : "caller_id";
    sprintf(sql, "SELECT e.%s, f.name, SUM(e.calls), COUNT(*) FROM run_edges e JOIN functions f "
                 "ON f.id = e.%s WHERE e.%s = $1 AND e.run_id IN (%s) GROUP BY e.%s, f.name "
                 "ORDER BY SUM(e.calls) DESC, f.name",
            other, other, self, list, other);
    struct wedges c = {NULL, 0, 0, 0};
    struct db_val p[1] = {DB_I(fid)};
    int e = d->ops->query(d, sql, 1, p, on_wedge, &c);
    free(sql);
    free(list);
    if (e) {
        db_wedges_free(c.v, c.n);
        return e == -DB_E_NOMEM ? db_fail(d, DB_E_NOMEM, "out of memory") : e;
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
