/* Reading the runs database (db_query.h). Sets of runs travel as lists of ids: the filters
 * that SQL expresses in both dialects (times, tags) run in the database, the globs over
 * program names run here with fnmatch, as every other glob of ptcall does. */
#define _GNU_SOURCE /* qsort_r, strndup */
#include "db_query.h"

#include <ctype.h>
#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "db_conn.h"

const char *const db_meas_names[DB_NMEAS] = {"calls", "total", "self"};
const char *const db_stat_names[DB_NSTATS + 1] = {"sum", "mean",   "median", "max",
                                                  "min", "stddev", NULL};

/* ---- --runs SPEC ------------------------------------------------------------------------ */

static int parse_id(const char *s, size_t n, int64_t *out)
{
    if (!n || n > 18)
        return -1;
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return v > 0 ? 0 : -1;
}

int db_runs_spec_parse(const char *spec, struct db_runs_spec *out, char *err, size_t n)
{
    memset(out, 0, sizeof(*out));
    size_t items = 1;
    for (const char *p = spec; *p; p++)
        items += *p == ',';
    out->range = calloc(items, sizeof(*out->range));
    if (!out->range) {
        snprintf(err, n, "out of memory");
        return -1;
    }
    for (const char *p = spec;;) {
        size_t len = strcspn(p, ",");
        const char *q = p;
        size_t m = len;
        while (m && isspace((unsigned char)*q))
            q++, m--;
        while (m && isspace((unsigned char)q[m - 1]))
            m--;
        const char *dash = memchr(q, '-', m);
        int64_t a, b;
        if (m == 3 && !strncmp(q, "all", 3)) {
            out->all = 1;
        } else if (m > 5 && !strncmp(q, "last:", 5) && !parse_id(q + 5, m - 5, &a)) {
            out->last = a;
        } else if (dash && !parse_id(q, (size_t)(dash - q), &a) &&
                   !parse_id(dash + 1, m - (size_t)(dash - q) - 1, &b) && a <= b) {
            out->range[out->nrange][0] = a;
            out->range[out->nrange++][1] = b;
        } else if (!dash && !parse_id(q, m, &a)) {
            out->range[out->nrange][0] = out->range[out->nrange][1] = a;
            out->nrange++;
        } else {
            snprintf(err, n,
                     "takes all, run ids and ranges (3,5-9) and last:N, comma-separated; "
                     "'%.*s' is none of them",
                     (int)(m < 60 ? m : 60), q);
            db_runs_spec_free(out);
            return -1;
        }
        if (!p[len])
            break;
        p += len + 1;
    }
    if (out->all)
        out->nrange = 0; /* all, with ids: all (last:N still applies) */
    return 0;
}

void db_runs_spec_free(struct db_runs_spec *s)
{
    free(s->range);
    memset(s, 0, sizeof(*s));
}

/* ---- choosing runs ---------------------------------------------------------------------- */

struct cand {
    struct db_ids *ids;
    size_t cap;
    const struct db_filter *f;
    int nomem;
};

static int on_candidate(void *ctx, int ncol, const struct db_val *col)
{
    struct cand *c = ctx;
    if (ncol < 3)
        return 0;
    if (c->f->nprograms) {
        int hit = 0;
        for (int i = 0; i < c->f->nprograms && !hit; i++)
            hit = (col[1].type == DB_TEXT && !fnmatch(c->f->programs[i], col[1].s, 0)) ||
                  (col[2].type == DB_TEXT && !fnmatch(c->f->programs[i], col[2].s, 0));
        if (!hit)
            return 0;
    }
    if (c->ids->n == c->cap) {
        size_t nc = c->cap ? c->cap * 2 : 64;
        int64_t *v = realloc(c->ids->v, nc * sizeof(*v));
        if (!v) {
            c->nomem = 1;
            return -DB_E_NOMEM;
        }
        c->ids->v = v;
        c->cap = nc;
    }
    c->ids->v[c->ids->n++] = col[0].i;
    return 0;
}

int db_select(struct db *d, const struct db_filter *f, struct db_ids *out)
{
    memset(out, 0, sizeof(*out));
    struct db_runs_spec spec = {.all = 1};
    char err[200];
    if (f->runs && db_runs_spec_parse(f->runs, &spec, err, sizeof(err)))
        return db_fail(d, DB_E_FAIL, "--runs %s", err);
    size_t cap = 512 + (size_t)f->ntags * 160;
    char *sql = malloc(cap);
    struct db_val *p = calloc((size_t)f->ntags * 2 + 2, sizeof(*p));
    if (!sql || !p) {
        free(sql);
        free(p);
        db_runs_spec_free(&spec);
        return db_fail(d, DB_E_NOMEM, "out of memory");
    }
    int np = 0;
    size_t k = (size_t)snprintf(sql, cap, "SELECT id, program, program_path FROM runs WHERE 1 = 1");
    if (f->has_since) {
        p[np++] = DB_I(f->since_ns);
        k += (size_t)snprintf(sql + k, cap - k, " AND COALESCE(start_ns, added_ns) >= $%d", np);
    }
    if (f->has_until) {
        p[np++] = DB_I(f->until_ns);
        k += (size_t)snprintf(sql + k, cap - k, " AND COALESCE(start_ns, added_ns) < $%d", np);
    }
    /* NAME=VALUE points into the caller's string: the name is copied out */
    char **names = calloc((size_t)f->ntags + 1, sizeof(*names));
    int nomem = !names;
    for (int i = 0; !nomem && i < f->ntags; i++) {
        const char *t = f->tags[i], *eq = strchr(t, '=');
        if (!(names[i] = strndup(t, eq ? (size_t)(eq - t) : strlen(t)))) {
            nomem = 1;
            break;
        }
        p[np++] = DB_S(names[i]);
        k += (size_t)snprintf(sql + k, cap - k,
                              " AND EXISTS (SELECT 1 FROM run_tags t WHERE t.run_id = runs.id "
                              "AND t.name = $%d",
                              np);
        if (eq) {
            p[np++] = DB_S(eq + 1);
            k += (size_t)snprintf(sql + k, cap - k, " AND t.value = $%d", np);
        }
        k += (size_t)snprintf(sql + k, cap - k, ")");
    }
    snprintf(sql + k, cap - k, " ORDER BY id");
    struct cand c = {out, 0, f, 0};
    int e = !nomem ? d->ops->query(d, sql, np, p, on_candidate, &c)
                   : db_fail(d, DB_E_NOMEM, "out of memory");
    if (e == -DB_E_NOMEM && c.nomem)
        db_fail(d, DB_E_NOMEM, "out of memory");
    for (int i = 0; names && i < f->ntags; i++)
        free(names[i]);
    free(names);
    free(sql);
    free(p);
    if (!e && spec.nrange) {
        size_t m = 0;
        for (size_t i = 0; i < out->n; i++)
            for (size_t r = 0; r < spec.nrange; r++)
                if (out->v[i] >= spec.range[r][0] && out->v[i] <= spec.range[r][1]) {
                    out->v[m++] = out->v[i];
                    break;
                }
        out->n = m;
    }
    if (!e && spec.last && (size_t)spec.last < out->n) {
        memmove(out->v, out->v + out->n - (size_t)spec.last, (size_t)spec.last * sizeof(*out->v));
        out->n = (size_t)spec.last;
    }
    db_runs_spec_free(&spec);
    if (e)
        db_ids_free(out);
    return e;
}

void db_ids_free(struct db_ids *ids)
{
    free(ids->v);
    memset(ids, 0, sizeof(*ids));
}

/* ---- runs --------------------------------------------------------------------------------- */

struct runs_ctx {
    const struct db_ids *ids;
    struct db_run *out;
    int nomem;
};

static struct db_run *run_of(struct runs_ctx *c, int64_t id)
{
    for (size_t i = 0; i < c->ids->n; i++)
        if (c->ids->v[i] == id)
            return &c->out[i];
    return NULL;
}

#define RUN_COLS                                                                           \
    "id, content_hash, trace, trace_bytes, program, program_path, command, host, added_ns, "    \
    "start_ns, duration_ns, exit_status, signal, core_dumped, backend, time_unit"
#define RUN_FIXED 16

static int on_run(void *ctx, int ncol, const struct db_val *col)
{
    struct runs_ctx *c = ctx;
    if (ncol < RUN_FIXED + DB_NCOUNTERS + 7 + DB_NWINDOW + 10)
        return 0;
    struct db_run *r = run_of(c, col[0].i);
    if (!r)
        return 0;
    int *nm = &c->nomem;
    r->id = col[0].i;
    r->content_hash = db_dup_text(&col[1], nm);
    r->trace = db_dup_text(&col[2], nm);
    r->trace_bytes = db_int_of(&col[3]);
    r->program = db_dup_text(&col[4], nm);
    r->program_path = db_dup_text(&col[5], nm);
    r->command = db_dup_text(&col[6], nm);
    r->host = db_dup_text(&col[7], nm);
    r->added_ns = db_int_of(&col[8]);
    r->has_start = col[9].type != DB_NULL;
    r->start_ns = db_int_of(&col[9]);
    r->has_duration = col[10].type != DB_NULL;
    r->duration_ns = db_int_of(&col[10]);
    r->has_exit = col[11].type != DB_NULL;
    r->exit_status = (int)db_int_of(&col[11]);
    r->has_signal = col[12].type != DB_NULL;
    r->signal = (int)db_int_of(&col[12]);
    r->core_dumped = (int)db_int_of(&col[13]);
    r->backend = db_dup_text(&col[14], nm);
    r->time_unit = db_dup_text(&col[15], nm);
    const struct db_val *x = col + RUN_FIXED;
    for (int i = 0; i < DB_NCOUNTERS; i++)
        r->counters[i] = (uint64_t)db_int_of(&x[i]);
    x += DB_NCOUNTERS;
    r->complete = (int)db_int_of(&x[0]);
    r->lossy = (int)db_int_of(&x[1]);
    r->timed = r->time_unit && strcmp(r->time_unit, "none");
    r->total_time = (uint64_t)db_int_of(&x[2]);
    r->selection = db_dup_text(&x[3], nm);
    r->has_traced = x[4].type != DB_NULL;
    r->traced_functions = (uint64_t)db_int_of(&x[4]);
    r->functions = (uint64_t)db_int_of(&x[5]);
    r->edges = (uint64_t)db_int_of(&x[6]);
    for (int i = 0; i < DB_NWINDOW; i++)
        r->window[i] = (uint64_t)db_int_of(&x[7 + i]);
    x += 7 + DB_NWINDOW; /* schema 6: within a budget */
    r->counted_functions = (uint64_t)db_int_of(&x[0]);
    r->counted_calls = (uint64_t)db_int_of(&x[1]);
    r->has_budget = x[2].type != DB_NULL;
    r->budget_kind = db_dup_text(&x[2], nm);
    r->budget_source = db_dup_text(&x[3], nm);
    r->budget_limit = x[4].type == DB_REAL ? x[4].d : (double)db_int_of(&x[4]);
    r->budget_predicted = x[5].type == DB_REAL ? x[5].d : (double)db_int_of(&x[5]);
    r->budget_outcome = db_dup_text(&x[6], nm);
    r->budget_note = db_dup_text(&x[7], nm);
    r->demoted_functions = (uint64_t)db_int_of(&x[8]); /* schema 7: a budget's governor */
    r->budget_demotions = (uint64_t)db_int_of(&x[9]);
    return *nm ? -DB_E_NOMEM : 0;
}

static int on_tag(void *ctx, int ncol, const struct db_val *col)
{
    struct runs_ctx *c = ctx;
    struct db_run *r = ncol >= 3 ? run_of(c, col[0].i) : NULL;
    if (!r)
        return 0;
    struct db_tag_out *t = realloc(r->tags, (r->ntags + 1) * sizeof(*t));
    if (!t)
        return -DB_E_NOMEM;
    r->tags = t;
    t[r->ntags].name = db_dup_text(&col[1], &c->nomem);
    t[r->ntags].value = db_dup_text(&col[2], &c->nomem);
    r->ntags++;
    return c->nomem ? -DB_E_NOMEM : 0;
}

static int on_module(void *ctx, int ncol, const struct db_val *col)
{
    struct runs_ctx *c = ctx;
    struct db_run *r = ncol >= 4 ? run_of(c, col[0].i) : NULL;
    if (!r)
        return 0;
    struct db_module_out *m = realloc(r->mods, (r->nmods + 1) * sizeof(*m));
    if (!m)
        return -DB_E_NOMEM;
    r->mods = m;
    m[r->nmods].path = db_dup_text(&col[1], &c->nomem);
    m[r->nmods].identity = db_dup_text(&col[2], &c->nomem);
    m[r->nmods].functions = db_int_of(&col[3]);
    m[r->nmods].build_id = ncol >= 5 ? db_dup_text(&col[4], &c->nomem) : NULL;
    r->nmods++;
    return c->nomem ? -DB_E_NOMEM : 0;
}

int db_runs_get(struct db *d, const struct db_ids *ids, int with_modules, struct db_run **out)
{
    *out = NULL;
    if (!ids->n)
        return 0;
    struct db_run *v = calloc(ids->n, sizeof(*v));
    char *list = db_id_list(ids->v, ids->n);
    size_t cap = (list ? strlen(list) : 0) + 2048;
    char *sql = malloc(cap);
    if (!v || !list || !sql) {
        free(v);
        free(list);
        free(sql);
        return db_fail(d, DB_E_NOMEM, "out of memory");
    }
    struct runs_ctx c = {ids, v, 0};
    int k = snprintf(sql, cap, "SELECT " RUN_COLS);
    for (int i = 0; i < DB_NCOUNTERS; i++)
        k += snprintf(sql + k, cap - (size_t)k, ", %s", db_counter_names[i]);
    k += snprintf(sql + k, cap - (size_t)k,
                  ", complete, lossy, total_time, selection, traced_functions, functions, edges");
    for (int i = 0; i < DB_NWINDOW; i++)
        k += snprintf(sql + k, cap - (size_t)k, ", %s", db_window_names[i]);
    k += snprintf(sql + k, cap - (size_t)k,
                  ", counted_functions, counted_calls, budget_kind, budget_source, budget_limit, "
                  "budget_predicted, budget_outcome, budget_note, demoted_functions, "
                  "budget_demotions");
    snprintf(sql + k, cap - (size_t)k, " FROM runs WHERE id IN (%s)", list);
    int e = d->ops->query(d, sql, 0, NULL, on_run, &c);
    if (!e) {
        snprintf(sql, cap,
                 "SELECT run_id, name, value FROM run_tags WHERE run_id IN (%s) ORDER BY "
                 "run_id, name",
                 list);
        e = d->ops->query(d, sql, 0, NULL, on_tag, &c);
    }
    if (!e && with_modules) {
        snprintf(sql, cap,
                 "SELECT run_id, path, identity, functions, build_id FROM run_modules WHERE "
                 "run_id IN "
                 "(%s) ORDER BY run_id, idx",
                 list);
        e = d->ops->query(d, sql, 0, NULL, on_module, &c);
    }
    free(sql);
    free(list);
    if (e == -DB_E_NOMEM)
        db_fail(d, DB_E_NOMEM, "out of memory");
    for (size_t i = 0; !e && i < ids->n; i++)
        if (v[i].id != ids->v[i])
            e = db_fail(d, DB_E_STOP, "no run %lld", (long long)ids->v[i]);
    if (e) {
        db_runs_free(v, ids->n);
        return e;
    }
    *out = v;
    return 0;
}

void db_runs_free(struct db_run *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++) {
        struct db_run *r = &v[i];
        free(r->content_hash);
        free(r->trace);
        free(r->program);
        free(r->program_path);
        free(r->command);
        free(r->host);
        free(r->backend);
        free(r->time_unit);
        free(r->selection);
        free(r->budget_kind);
        free(r->budget_source);
        free(r->budget_outcome);
        free(r->budget_note);
        for (size_t k = 0; k < r->ntags; k++) {
            free(r->tags[k].name);
            free(r->tags[k].value);
        }
        free(r->tags);
        for (size_t k = 0; k < r->nmods; k++) {
            free(r->mods[k].path);
            free(r->mods[k].identity);
            free(r->mods[k].build_id);
        }
        free(r->mods);
    }
    free(v);
}

/* ---- a run's functions and edges ------------------------------------------------------- */

struct vec {
    void *v;
    size_t n, cap, size;
    int nomem;
};

static void *vec_add(struct vec *x)
{
    if (x->n == x->cap) {
        size_t nc = x->cap ? x->cap * 2 : 256;
        void *v = realloc(x->v, nc * x->size);
        if (!v) {
            x->nomem = 1;
            return NULL;
        }
        x->v = v;
        x->cap = nc;
    }
    void *p = (char *)x->v + x->n++ * x->size;
    memset(p, 0, x->size);
    return p;
}

/* id, name, linkage_name, module, file, line [, module_path, calls, total, self[, state[,
 * demoted]]] */
static int fill_func(struct db_func_out *f, int ncol, const struct db_val *col, int *nm)
{
    f->id = col[0].i;
    f->name = db_dup_text(&col[1], nm);
    f->linkage_name = db_dup_text(&col[2], nm);
    f->module = db_dup_text(&col[3], nm);
    f->file = db_dup_text(&col[4], nm);
    f->line = (uint32_t)db_int_of(&col[5]);
    if (ncol >= 10) {
        f->module_path = db_dup_text(&col[6], nm);
        f->calls = (uint64_t)db_int_of(&col[7]);
        f->timed = col[8].type != DB_NULL;
        f->total = (uint64_t)db_int_of(&col[8]);
        f->self = (uint64_t)db_int_of(&col[9]);
    }
    if (ncol >= 11)
        f->state = db_dup_text(&col[10], nm);
    if (ncol >= 12)
        f->demoted = db_int_of(&col[11]) != 0;
    return *nm ? -DB_E_NOMEM : 0;
}

static int on_func(void *ctx, int ncol, const struct db_val *col)
{
    struct vec *x = ctx;
    struct db_func_out *f = ncol >= 6 ? vec_add(x) : NULL;
    if (!f)
        return x->nomem ? -DB_E_NOMEM : 0;
    return fill_func(f, ncol, col, &x->nomem);
}

int db_run_functions(struct db *d, int64_t id, struct db_func_out **out, size_t *n)
{
    struct vec x = {NULL, 0, 0, sizeof(struct db_func_out), 0};
    int e = d->ops->query(d,
                          "SELECT f.id, f.name, f.linkage_name, f.module, f.file, f.line, m.path, "
                          "rf.calls, rf.total, rf.self, rf.state, rf.demoted FROM run_functions rf "
                          "JOIN functions f ON f.id = rf.function_id LEFT JOIN run_modules m ON "
                          "m.run_id = rf.run_id AND m.idx = rf.module_idx WHERE rf.run_id = $1",
                          1, (struct db_val[]){DB_I(id)}, on_func, &x);
    if (e) {
        db_funcs_free(x.v, x.n);
        return e == -DB_E_NOMEM ? db_fail(d, DB_E_NOMEM, "out of memory") : e;
    }
    *out = x.v;
    *n = x.n;
    return 0;
}

void db_funcs_free(struct db_func_out *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++) {
        free(v[i].name);
        free(v[i].linkage_name);
        free(v[i].module);
        free(v[i].file);
        free(v[i].module_path);
        free(v[i].state);
    }
    free(v);
}

static int on_edge(void *ctx, int ncol, const struct db_val *col)
{
    struct vec *x = ctx;
    struct db_edge_out *e = ncol >= 3 ? vec_add(x) : NULL;
    if (!e)
        return x->nomem ? -DB_E_NOMEM : 0;
    *e = (struct db_edge_out){col[0].i, col[1].i, (uint64_t)db_int_of(&col[2])};
    return 0;
}

int db_run_edges(struct db *d, int64_t id, struct db_edge_out **out, size_t *n)
{
    struct vec x = {NULL, 0, 0, sizeof(struct db_edge_out), 0};
    int e = d->ops->query(d,
                          "SELECT caller_id, callee_id, calls FROM run_edges WHERE run_id = $1",
                          1, (struct db_val[]){DB_I(id)}, on_edge, &x);
    if (e) {
        free(x.v);
        return e == -DB_E_NOMEM ? db_fail(d, DB_E_NOMEM, "out of memory") : e;
    }
    *out = x.v;
    *n = x.n;
    return 0;
}

/* ---- removing runs ------------------------------------------------------------------------ */

struct maxima {
    int64_t *fid;            /* functions whose maximum the removed run may hold */
    size_t n, cap;
};

static int on_max_candidate(void *ctx, int ncol, const struct db_val *col)
{
    struct maxima *m = ctx;
    if (ncol < 1)
        return 0;
    if (m->n == m->cap) {
        size_t nc = m->cap ? m->cap * 2 : 64;
        int64_t *v = realloc(m->fid, nc * sizeof(*v));
        if (!v)
            return -DB_E_NOMEM;
        m->fid = v;
        m->cap = nc;
    }
    m->fid[m->n++] = col[0].i;
    return 0;
}

struct extremes {
    int64_t v[6];            /* maxima of calls, total, self, then their minima */
};

static int on_extremes(void *ctx, int ncol, const struct db_val *col)
{
    struct extremes *t = ctx;
    for (int i = 0; i < 6 && i < ncol; i++)
        t->v[i] = db_int_of(&col[i]);
    return 1;
}

/* Takes run id's figures out of function_stats (db_schema.c, versions 2 and 3) and its
 * edges out of edge_stats (version 3) before the run goes: its sums and squares subtracted, and the maxima and minima it held found again
 * among the other runs of its time unit (an extreme another run equals stays as it is, which
 * the search finds too). */
static int unaccount(struct db *d, int64_t id, const char *unit)
{
    struct db_val p[2] = {DB_I(id), DB_S(unit)};
    struct maxima m = {NULL, 0, 0};
    int e = d->ops->query(d,
                          "SELECT rf.function_id FROM run_functions rf JOIN function_stats s ON "
                          "s.function_id = rf.function_id AND s.time_unit = $2 WHERE rf.run_id "
                          "= $1 AND (rf.calls = s.calls_max OR COALESCE(rf.total, 0) = "
                          "s.total_max OR COALESCE(rf.self, 0) = s.self_max OR rf.calls = "
                          "s.calls_min OR COALESCE(rf.total, 0) = s.total_min OR "
                          "COALESCE(rf.self, 0) = s.self_min)",
                          2, p, on_max_candidate, &m);
    if (e == -DB_E_NOMEM)
        e = db_fail(d, DB_E_NOMEM, "out of memory");
    if (!e)
        e = d->ops->exec(d,
                         "UPDATE function_stats SET runs = function_stats.runs - 1, "
                         "calls_sum = function_stats.calls_sum - rf.calls, "
                         "total_sum = function_stats.total_sum - COALESCE(rf.total, 0), "
                         "self_sum = function_stats.self_sum - COALESCE(rf.self, 0), "
                         "calls_sq = function_stats.calls_sq - "
                         "CAST(rf.calls AS DOUBLE PRECISION) * rf.calls, "
                         "total_sq = function_stats.total_sq - "
                         "COALESCE(CAST(rf.total AS DOUBLE PRECISION) * rf.total, 0), "
                         "self_sq = function_stats.self_sq - "
                         "COALESCE(CAST(rf.self AS DOUBLE PRECISION) * rf.self, 0) "
                         "FROM run_functions rf WHERE rf.run_id = $1 AND "
                         "function_stats.function_id = rf.function_id AND "
                         "function_stats.time_unit = $2",
                         2, p);
    for (size_t i = 0; i < m.n && !e; i++) {
        struct extremes t = {{0, 0, 0, 0, 0, 0}};
        struct db_val q[3] = {DB_I(m.fid[i]), DB_S(unit), DB_I(id)};
        e = d->ops->query(d,
                          "SELECT MAX(rf.calls), MAX(COALESCE(rf.total, 0)), "
                          "MAX(COALESCE(rf.self, 0)), MIN(rf.calls), MIN(COALESCE(rf.total, 0)), "
                          "MIN(COALESCE(rf.self, 0)) FROM run_functions rf JOIN runs r ON r.id = "
                          "rf.run_id WHERE rf.function_id = $1 AND r.time_unit = $2 AND "
                          "rf.run_id <> $3",
                          3, q, on_extremes, &t);
        if (e == -DB_E_STOP)
            e = 0;
        if (!e)
            e = d->ops->exec(d,
                             "UPDATE function_stats SET calls_max = $3, total_max = $4, "
                             "self_max = $5, calls_min = $6, total_min = $7, self_min = $8 "
                             "WHERE function_id = $1 AND time_unit = $2",
                             8,
                             (struct db_val[]){q[0], q[1], DB_I(t.v[0]), DB_I(t.v[1]),
                                               DB_I(t.v[2]), DB_I(t.v[3]), DB_I(t.v[4]),
                                               DB_I(t.v[5])});
    }
    free(m.fid);
    if (!e)
        e = d->ops->exec(d,
                         "DELETE FROM function_stats WHERE runs = 0 AND time_unit = $2 AND "
                         "function_id IN (SELECT function_id FROM run_functions WHERE run_id = "
                         "$1)",
                         2, p);
    /* edge_stats (version 3): the run's edges subtracted, the edges no run has left gone */
    if (!e)
        e = d->ops->exec(d,
                         "UPDATE edge_stats SET runs = edge_stats.runs - 1, "
                         "calls_sum = edge_stats.calls_sum - e.calls FROM run_edges e WHERE "
                         "e.run_id = $1 AND edge_stats.caller_id = e.caller_id AND "
                         "edge_stats.callee_id = e.callee_id",
                         1, p);
    if (!e)
        e = d->ops->exec(d,
                         "DELETE FROM edge_stats WHERE runs = 0 AND caller_id IN (SELECT "
                         "caller_id FROM run_edges WHERE run_id = $1)",
                         1, p);
    return e;
}

struct unit_of {
    char unit[16];
    int found;
};

static int on_unit_of(void *ctx, int ncol, const struct db_val *col)
{
    struct unit_of *u = ctx;
    if (ncol >= 1 && col[0].type == DB_TEXT) {
        snprintf(u->unit, sizeof(u->unit), "%s", col[0].s);
        u->found = 1;
    }
    return 1;
}

static int remove_all(struct db *d, void *ctx)
{
    const struct db_ids *ids = ctx;
    for (size_t i = 0; i < ids->n; i++) {
        struct unit_of u = {"", 0};
        int e = d->ops->query(d, "SELECT time_unit FROM runs WHERE id = $1", 1,
                              (struct db_val[]){DB_I(ids->v[i])}, on_unit_of, &u);
        if (e == -DB_E_STOP)
            e = 0;
        if (!e && !u.found)
            e = db_fail(d, DB_E_STOP, "no run %lld", (long long)ids->v[i]);
        if (!e)
            e = unaccount(d, ids->v[i], u.unit);
        if (!e)
            e = d->ops->exec(d, "DELETE FROM runs WHERE id = $1", 1,
                             (struct db_val[]){DB_I(ids->v[i])});
        if (e)
            return e;
    }
    return 0;
}

int db_remove(struct db *d, const struct db_ids *ids)
{
    return db_transaction(d, remove_all, (void *)ids);
}

/* ---- hot functions over runs ------------------------------------------------------------
 * Two ways to the same figures. Over all the runs of the database (what the ranking is asked
 * for most) without medians, function_stats has every function's sums and maxima ready: one
 * row per function. Otherwise each chosen run's rows of run_functions are read (one statement
 * per run, so that no back end holds millions of rows at once) and gathered per function in
 * a hash table here; medians keep every value of a function until the end. Both run in one
 * read-only transaction (db_snapshot), so that a run added or removed meanwhile is in all
 * of the answer's statements or in none. */

struct units {
    int n;                   /* 0: no run, 1: one unit, 2: more than one */
    int none;                /* a run is untimed */
    char unit[8];            /* the first run's */
};

/* The time unit of one chosen run. */
static int on_unit(void *ctx, int ncol, const struct db_val *col)
{
    struct units *u = ctx;
    if (ncol < 1 || col[0].type != DB_TEXT)
        return 0;
    u->none |= !strcmp(col[0].s, "none");
    if (!u->n) {
        snprintf(u->unit, sizeof(u->unit), "%s", col[0].s);
        u->n = 1;
    } else if (strcmp(u->unit, col[0].s)) {
        u->n = 2;
    }
    return 0;
}

struct names {
    struct db_hot *h;
    int nomem;
};

static int cmp_hot_id(const void *x, const void *y)
{
    const struct db_hot_fn *a = x, *b = y;
    return a->f.id < b->f.id ? -1 : a->f.id > b->f.id;
}

static int on_name(void *ctx, int ncol, const struct db_val *col)
{
    struct names *c = ctx;
    if (ncol < 6)
        return 0;
    struct db_hot_fn key = {.f.id = col[0].i};
    struct db_hot_fn *f = bsearch(&key, c->h->fn, c->h->n, sizeof(key), cmp_hot_id);
    if (!f)
        return 0;
    return fill_func(&f->f, 6, col, &c->nomem);
}

struct gather {
    struct db_hot *h;
    /* open-addressing table of function ids -> index in h->fn (+1; 0: empty) */
    uint32_t *slot;
    size_t cap;
    size_t fcap;
    int median;
    uint64_t (**vals)[DB_NMEAS]; /* median: per function, its value in each run that has it */
    int nomem;
};

static size_t hash_id(int64_t id, size_t cap)
{
    return (size_t)(((uint64_t)id * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
}

/* The function id's entry of h->fn, added (zeroed) when new; NULL when out of memory. */
static struct db_hot_fn *entry(struct gather *g, int64_t id)
{
    struct db_hot *h = g->h;
    if ((h->n + 1) * 2 > g->cap) {
        size_t nc = g->cap ? g->cap * 2 : 8192;
        uint32_t *t = calloc(nc, sizeof(*t));
        if (!t)
            return NULL;
        for (size_t i = 0; i < h->n; i++) {
            size_t k = hash_id(h->fn[i].f.id, nc);
            while (t[k])
                k = (k + 1) & (nc - 1);
            t[k] = (uint32_t)i + 1;
        }
        free(g->slot);
        g->slot = t;
        g->cap = nc;
    }
    size_t k = hash_id(id, g->cap);
    while (g->slot[k]) {
        struct db_hot_fn *f = &h->fn[g->slot[k] - 1];
        if (f->f.id == id)
            return f;
        k = (k + 1) & (g->cap - 1);
    }
    if (h->n == g->fcap) {
        size_t nc = g->fcap ? g->fcap * 2 : 1024;
        struct db_hot_fn *v = realloc(h->fn, nc * sizeof(*v));
        if (!v)
            return NULL;
        h->fn = v;
        if (g->median) {
            void *m = realloc(g->vals, nc * sizeof(*g->vals));
            if (!m)
                return NULL;
            g->vals = m;
            memset(g->vals + g->fcap, 0, (nc - g->fcap) * sizeof(*g->vals));
        }
        g->fcap = nc;
    }
    g->slot[k] = (uint32_t)h->n + 1;
    struct db_hot_fn *f = &h->fn[h->n++];
    memset(f, 0, sizeof(*f));
    f->f.id = id;
    return f;
}

/* A row (function_id, calls, total, self) of one run. */
static int on_figure(void *ctx, int ncol, const struct db_val *col)
{
    struct gather *g = ctx;
    if (ncol < 4)
        return 0;
    struct db_hot_fn *f = entry(g, col[0].i);
    if (!f || (g->median && !(g->vals[f - g->h->fn] ||
                              (g->vals[f - g->h->fn] = malloc(g->h->nruns *
                                                              sizeof(**g->vals)))))) {
        g->nomem = 1;
        return -DB_E_NOMEM;
    }
    for (int m = 0; m < DB_NMEAS; m++) {
        uint64_t v = (uint64_t)db_int_of(&col[1 + m]);
        double x = (double)v;
        f->v[m][DB_STAT_SUM] += x;
        f->v[m][DB_STAT_STDDEV] += x * x; /* the sum of squares until finish_stats() */
        if (x > f->v[m][DB_STAT_MAX])
            f->v[m][DB_STAT_MAX] = x;
        if (!f->runs || x < f->v[m][DB_STAT_MIN])
            f->v[m][DB_STAT_MIN] = x;
        if (g->median)
            g->vals[f - g->h->fn][f->runs][m] = v;
    }
    f->runs++;
    return 0;
}

/* The k-th smallest of v[0..n) (k < n), moving v's values about (quickselect: a full sort of
 * every function's values would cost more than reading them). */
static uint64_t kth(uint64_t *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        uint64_t a = v[lo], b = v[lo + (hi - lo) / 2], c = v[hi];
        uint64_t pivot = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
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

/* The median of nruns values of which the count in vals are the non-zero ones (a run
 * without the function counts as 0): in the sorted order, the zeros come first. Of an even
 * number, the mean of the middle two. */
static double median_of(uint64_t *vals, uint32_t count, size_t nruns)
{
    size_t zeros = nruns - count, hi = nruns / 2;
    if (hi < zeros) /* both middles are zeros */
        return 0.0;
    double upper = (double)kth(vals, count, hi - zeros);
    if (nruns % 2)
        return upper;
    double lower = 0.0;
    if (hi - 1 >= zeros) {
        /* kth() left the hi - zeros values below it in front: the largest of them */
        uint64_t m = 0;
        for (size_t i = 0; i < hi - zeros; i++)
            if (vals[i] > m)
                m = vals[i];
        lower = (double)m;
    }
    return (lower + upper) / 2;
}

static double real_of(const struct db_val *v)
{
    return v->type == DB_REAL ? v->d : v->type == DB_INT ? (double)v->i
                                   : v->type == DB_TEXT ? strtod(v->s, NULL) : 0.0;
}

/* A row of function_stats (function_id, runs, then calls, total and self's sums, maxima,
 * minima and sums of squares), one per time unit, then the function's identity: the units
 * of one function add up (when they differ, only calls are shown, as the scan gives them). */
#define STATS_COLS 14
static int on_stats(void *ctx, int ncol, const struct db_val *col)
{
    struct gather *g = ctx;
    if (ncol < STATS_COLS)
        return 0;
    struct db_hot_fn *f = entry(g, col[0].i);
    if (!f) {
        g->nomem = 1;
        return -DB_E_NOMEM;
    }
    uint32_t before = f->runs;
    f->runs += (uint32_t)db_int_of(&col[1]);
    for (int m = 0; m < DB_NMEAS; m++) {
        double max = (double)(uint64_t)db_int_of(&col[5 + m]);
        double min = (double)(uint64_t)db_int_of(&col[8 + m]);
        f->v[m][DB_STAT_SUM] += (double)(uint64_t)db_int_of(&col[2 + m]);
        f->v[m][DB_STAT_STDDEV] += real_of(&col[11 + m]);
        if (max > f->v[m][DB_STAT_MAX])
            f->v[m][DB_STAT_MAX] = max;
        if (!before || min < f->v[m][DB_STAT_MIN])
            f->v[m][DB_STAT_MIN] = min;
    }
    /* the function's identity, once (a function of two time units has two rows) */
    if (ncol >= STATS_COLS + 5 && !f->f.name) {
        struct db_val idcol[6] = {col[0],
                                  col[STATS_COLS],
                                  col[STATS_COLS + 1],
                                  col[STATS_COLS + 2],
                                  col[STATS_COLS + 3],
                                  col[STATS_COLS + 4]};
        if (fill_func(&f->f, 6, idcol, &g->nomem))
            return -DB_E_NOMEM;
    }
    return 0;
}

/* The means, standard deviations and minima over nruns runs, a run without the function
 * counting as 0, from the sums, sums of squares and minima over the runs that called it.
 * The standard deviation is the sample's (divisor nruns - 1; 0 for one run), as `report
 * --stat stddev` computes it: the same runs give the same figure everywhere. */
static void finish_stats(struct db_hot_fn *f, size_t nruns)
{
    for (int m = 0; m < DB_NMEAS; m++) {
        double *v = f->v[m];
        double mean = v[DB_STAT_SUM] / (double)nruns;
        double var = nruns < 2 ? 0.0
                               : (v[DB_STAT_STDDEV] - mean * v[DB_STAT_SUM]) / (double)(nruns - 1);
        v[DB_STAT_MEAN] = mean;
        v[DB_STAT_STDDEV] = var > 0 ? sqrt(var) : 0.0; /* rounding can take it below 0 */
        if (f->runs < nruns)
            v[DB_STAT_MIN] = 0.0;
    }
}

struct present {
    const int64_t *want;     /* the chosen ids, ascending and distinct */
    size_t n, got;
    int64_t missing;         /* the first id not in the database, 0: none */
    struct units u;
};

/* A row (id, time_unit) of the chosen runs, ascending id. */
static int on_present(void *ctx, int ncol, const struct db_val *col)
{
    struct present *p = ctx;
    if (ncol < 2)
        return 0;
    while (p->got < p->n && p->want[p->got] < col[0].i && !p->missing)
        p->missing = p->want[p->got++];
    if (p->got < p->n && p->want[p->got] == col[0].i) {
        p->got++;
        return on_unit(&p->u, 1, col + 1);
    }
    return 0; /* a run not chosen (every run is read when there are as many as ids) */
}

static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return a < b ? -1 : a > b;
}

struct hot_job {
    const struct db_ids *ids; /* ascending, distinct */
    const struct db_hot_ask *ask;
    struct db_hot *out;
};

static void rank_by(struct db_hot *h, int stat, int meas);

/* The names of the functions found, by id (function_stats brings them with the figures);
 * leaves out->fn sorted by id. */
static int hot_names(struct db *d, struct db_hot *out)
{
    qsort(out->fn, out->n, sizeof(*out->fn), cmp_hot_id);
    int64_t *fid = malloc(out->n * sizeof(*fid));
    char *flist = NULL;
    if (fid) {
        for (size_t i = 0; i < out->n; i++)
            fid[i] = out->fn[i].f.id;
        flist = db_id_list(fid, out->n);
        free(fid);
    }
    char *nsql = flist ? malloc(strlen(flist) + 128) : NULL;
    if (!nsql) {
        free(flist);
        return db_fail(d, DB_E_NOMEM, "out of memory");
    }
    sprintf(nsql, "SELECT id, name, linkage_name, module, file, line FROM functions WHERE id IN (%s)",
            flist);
    struct names nc = {out, 0};
    int e = d->ops->query(d, nsql, 0, NULL, on_name, &nc);
    free(nsql);
    free(flist);
    if (e == -DB_E_NOMEM || nc.nomem)
        e = db_fail(d, DB_E_NOMEM, "out of memory");
    return e;
}

/* The medians of fn[0..n) from the values g gathered (g->vals[i]: function i's value in each
 * run that called it). */
static int hot_medians(struct db *d, struct gather *g, struct db_hot_fn *fn, size_t n)
{
    size_t nruns = g->h->nruns;
    uint64_t *col = malloc((nruns ? nruns : 1) * sizeof(*col));
    if (!col)
        return db_fail(d, DB_E_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        struct db_hot_fn *f = &fn[i];
        for (int m = 0; m < DB_NMEAS; m++) {
            for (uint32_t k = 0; k < f->runs; k++)
                col[k] = g->vals[i][k][m];
            f->v[m][DB_STAT_MEDIAN] = median_of(col, f->runs, nruns);
        }
    }
    free(col);
    return 0;
}

/* A row (function_id, run_id, calls, total, self) of one of the top functions. */
struct top_vals {
    struct db_hot_fn *fn;    /* the top functions, sorted by id here */
    size_t n;
    const struct db_ids *keep; /* the chosen runs (ascending), NULL: every run */
    uint64_t (**vals)[DB_NMEAS];
    uint32_t *got;
    size_t nruns;
};

static int on_top_value(void *ctx, int ncol, const struct db_val *col)
{
    struct top_vals *t = ctx;
    if (ncol < 5)
        return 0;
    int64_t run = db_int_of(&col[1]);
    if (t->keep && !bsearch(&run, t->keep->v, t->keep->n, sizeof(run), cmp_i64))
        return 0;
    struct db_hot_fn key = {.f.id = col[0].i};
    struct db_hot_fn *f = bsearch(&key, t->fn, t->n, sizeof(key), cmp_hot_id);
    if (!f)
        return 0;
    size_t i = (size_t)(f - t->fn);
    if (t->got[i] >= t->nruns)
        return 0; /* cannot be: one row per run and function */
    for (int m = 0; m < DB_NMEAS; m++)
        t->vals[i][t->got[i]][m] = (uint64_t)db_int_of(&col[2 + m]);
    t->got[i]++;
    return 0;
}

/* The medians of the first k functions of the ranking only: their rows of the chosen runs,
 * found by the function index (k functions of 1,000 runs: k thousand rows, where every
 * function's medians need every row). */
static int top_medians(struct db *d, struct db_hot *out, const struct db_ids *ids, int every,
                       size_t k)
{
    if (!k)
        return 0;
    struct db_hot_fn *top = malloc(k * sizeof(*top));
    int64_t *fid = calloc(k, sizeof(*fid));
    struct top_vals t = {top, k, every ? NULL : ids, calloc(k, sizeof(*t.vals)),
                         calloc(k, sizeof(*t.got)), out->nruns};
    char *flist = NULL, *sql = NULL;
    int e = 0;
    if (top && fid && t.vals && t.got) {
        memcpy(top, out->fn, k * sizeof(*top));
        qsort(top, k, sizeof(*top), cmp_hot_id);
        for (size_t i = 0; i < k; i++)
            fid[i] = top[i].f.id;
        flist = db_id_list(fid, k);
        sql = flist ? malloc(strlen(flist) + 128) : NULL;
        for (size_t i = 0; i < k && sql; i++)
            if (!(t.vals[i] = malloc((out->nruns ? out->nruns : 1) * sizeof(**t.vals))))
                e = db_fail(d, DB_E_NOMEM, "out of memory");
    }
    if (!sql && !e)
        e = db_fail(d, DB_E_NOMEM, "out of memory");
    if (!e) {
        sprintf(sql, "SELECT function_id, run_id, calls, total, self FROM run_functions WHERE "
                     "function_id IN (%s)", flist);
        e = d->ops->query(d, sql, 0, NULL, on_top_value, &t);
    }
    if (!e) {
        struct gather g = {.h = out, .vals = t.vals};
        for (size_t i = 0; i < k; i++)
            top[i].runs = t.got[i]; /* as db_hot counted them: the same snapshot */
        e = hot_medians(d, &g, top, k);
    }
    /* back into the ranking's order */
    for (size_t i = 0; !e && i < k; i++) {
        struct db_hot_fn *f = bsearch(&out->fn[i], top, k, sizeof(*top), cmp_hot_id);
        for (int m = 0; f && m < DB_NMEAS; m++)
            out->fn[i].v[m][DB_STAT_MEDIAN] = f->v[m][DB_STAT_MEDIAN];
    }
    for (size_t i = 0; t.vals && i < k; i++)
        free(t.vals[i]);
    free(t.vals);
    free(t.got);
    free(sql);
    free(flist);
    free(fid);
    free(top);
    return e;
}

static int hot_in_snapshot(struct db *d, void *ctx)
{
    struct hot_job *hj = ctx;
    const struct db_ids *ids = hj->ids;
    const struct db_hot_ask *ask = hj->ask;
    struct db_hot *out = hj->out;
    /* every function's medians are read with the figures: when they rank, or all are asked */
    int all_medians = ask->stat == DB_STAT_MEDIAN || ask->medians == SIZE_MAX;
    char *list = db_id_list(ids->v, ids->n);
    size_t cap = (list ? strlen(list) : 0) + 512;
    char *sql = malloc(cap);
    struct gather g = {out, NULL, 0, 0, all_medians, NULL, 0};
    int e = 0;
    if (!list || !sql) {
        e = db_fail(d, DB_E_NOMEM, "out of memory");
        goto out;
    }
    /* the chosen runs are all there (in this snapshot), and their time units: when there are
     * as many runs as ids, every run is read and matched (no list of ids in the SQL), else
     * the chosen ones */
    int64_t total;
    int found;
    if ((e = db_value(d, "SELECT COUNT(*) FROM runs", 0, NULL, &total, &found)))
        goto out;
    struct present pr = {ids->v, ids->n, 0, 0, {0, 0, ""}};
    int every = found && (size_t)total == ids->n;
    if (every)
        e = d->ops->query(d, "SELECT id, time_unit FROM runs ORDER BY id", 0, NULL, on_present,
                          &pr);
    else {
        snprintf(sql, cap, "SELECT id, time_unit FROM runs WHERE id IN (%s) ORDER BY id", list);
        e = d->ops->query(d, sql, 0, NULL, on_present, &pr);
    }
    if (e)
        goto out;
    if (!pr.missing && pr.got < pr.n)
        pr.missing = pr.want[pr.got];
    if (pr.missing) {
        e = db_fail(d, DB_E_STOP, "no run %lld", (long long)pr.missing);
        goto out;
    }
    out->timed = pr.u.n == 1 && !pr.u.none;
    out->mixed = pr.u.n > 1;
    snprintf(out->time_unit, sizeof(out->time_unit), "%s", out->timed ? pr.u.unit : "none");
    int from_stats = every && !all_medians;
    if (from_stats) {
        /* the names come with the figures: one statement */
        e = d->ops->query(d,
                          "SELECT s.function_id, s.runs, s.calls_sum, s.total_sum, s.self_sum, "
                          "s.calls_max, s.total_max, s.self_max, s.calls_min, s.total_min, "
                          "s.self_min, s.calls_sq, s.total_sq, s.self_sq, f.name, "
                          "f.linkage_name, f.module, f.file, f.line FROM function_stats s JOIN "
                          "functions f ON f.id = s.function_id",
                          0, NULL, on_stats, &g);
    } else {
        for (size_t i = 0; i < ids->n && !e; i++)
            e = d->ops->query(d,
                              "SELECT function_id, calls, total, self FROM run_functions WHERE "
                              "run_id = $1",
                              1, (struct db_val[]){DB_I(ids->v[i])}, on_figure, &g);
    }
    if (e == -DB_E_NOMEM || g.nomem) {
        e = db_fail(d, DB_E_NOMEM, "out of memory");
        goto out;
    }
    if (e || !out->n)
        goto out;
    for (size_t i = 0; i < out->n; i++)
        finish_stats(&out->fn[i], out->nruns);
    if (all_medians && (e = hot_medians(d, &g, out->fn, out->n)))
        goto out;
    if (!from_stats && (e = hot_names(d, out)))
        goto out;
    rank_by(out, ask->stat, ask->meas >= 0 ? ask->meas : out->timed ? DB_M_SELF : DB_M_CALLS);
    if (!all_medians && ask->medians)
        e = top_medians(d, out, ids, every, ask->medians < out->n ? ask->medians : out->n);
out:
    for (size_t i = 0; g.vals && i < g.fcap; i++)
        free(g.vals[i]);
    free(g.vals);
    free(g.slot);
    free(sql);
    free(list);
    return e;
}

int db_hot(struct db *d, const struct db_ids *ids, const struct db_hot_ask *ask,
           struct db_hot *out)
{
    memset(out, 0, sizeof(*out));
    snprintf(out->time_unit, sizeof(out->time_unit), "none");
    if (!ids->n)
        return 0;
    /* a run given twice is one run */
    struct db_ids u = {malloc(ids->n * sizeof(*ids->v)), 0};
    if (!u.v)
        return db_fail(d, DB_E_NOMEM, "out of memory");
    memcpy(u.v, ids->v, ids->n * sizeof(*ids->v));
    qsort(u.v, ids->n, sizeof(*u.v), cmp_i64);
    for (size_t i = 0; i < ids->n; i++)
        if (!u.n || u.v[u.n - 1] != u.v[i])
            u.v[u.n++] = u.v[i];
    out->nruns = u.n;
    struct hot_job hj = {&u, ask, out};
    int e = db_snapshot(d, hot_in_snapshot, &hj);
    free(u.v);
    if (e)
        db_hot_free(out);
    return e;
}

struct rank {
    int stat, meas;
};

static int cmp_rank(const void *x, const void *y, void *ctx)
{
    const struct rank *k = ctx;
    const struct db_hot_fn *a = x, *b = y;
    double p = a->v[k->meas][k->stat], q = b->v[k->meas][k->stat];
    if (p != q)
        return p > q ? -1 : 1;
    p = a->v[DB_M_CALLS][DB_STAT_SUM];
    q = b->v[DB_M_CALLS][DB_STAT_SUM];
    if (p != q)
        return p > q ? -1 : 1;
    int c = strcmp(a->f.name ? a->f.name : "", b->f.name ? b->f.name : "");
    return c ? c : (a->f.id < b->f.id ? -1 : a->f.id > b->f.id);
}

static void rank_by(struct db_hot *h, int stat, int meas)
{
    struct rank k = {stat, meas};
    qsort_r(h->fn, h->n, sizeof(*h->fn), cmp_rank, &k);
}

void db_hot_free(struct db_hot *h)
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
