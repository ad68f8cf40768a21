/* GET /api/v1/diff?base=A&new=B: two runs compared, per function, as `ptcall diff` compares
 * two traces: before, after and the change of calls, total and self time; functions matched
 * by the database's dictionary key (module base name, linkage name, file), which is how diff
 * matches them; new and gone functions marked. Largest absolute change of sort
 * (calls|self|total; default total, calls when a run is untimed) first; top=N (default 100,
 * 0 all). Runs that share no instrumented module are refused (409), as `ptcall diff`
 * refuses them, unless allow_different=1. */
#define _GNU_SOURCE /* qsort_r */
#include <stdlib.h>
#include <string.h>

#include "ptcall/trace_format.h"
#include "web_internal.h"

struct row {
    const struct db_func_out *b, *n;
    uint64_t v[2][3]; /* base/new x calls/total/self */
};

static uint64_t mabs(uint64_t a, uint64_t b)
{
    return a > b ? a - b : b - a;
}

static int cmp_fid(const void *x, const void *y)
{
    const struct db_func_out *a = x, *b = y;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* qsort_r: the server answers on several threads at once */
static int cmp_row(const void *x, const void *y, void *ctx)
{
    const struct row *a = x, *b = y;
    int sort_meas = *(const int *)ctx;
    uint64_t p = mabs(a->v[0][sort_meas], a->v[1][sort_meas]);
    uint64_t q = mabs(b->v[0][sort_meas], b->v[1][sort_meas]);
    if (p != q)
        return p > q ? -1 : 1;
    const struct db_func_out *fa = a->n ? a->n : a->b, *fb = b->n ? b->n : b->b;
    return strcmp(fa->name ? fa->name : "", fb->name ? fb->name : "");
}

static int load(struct db *d, int64_t id, struct db_run **run, struct db_func_out **fn,
                size_t *n, struct web_resp *r)
{
    int64_t v[1] = {id};
    struct db_ids ids = {v, 1};
    int e = db_runs_get(d, &ids, 1, run);
    if (e == -DB_E_STOP)
        return web_error(r, 404, "no run %lld in the database", (long long)id) ? -1 : 1;
    if (!e)
        e = db_run_functions(d, id, fn, n);
    if (e)
        return web_db_fail(r, d, e) ? -1 : 1;
    if (*n) /* a run without functions has no array: qsort of NULL is undefined */
        qsort(*fn, *n, sizeof(**fn), cmp_fid);
    return 0;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* Whether the two runs share an instrumented module (by base name), as `ptcall diff`
 * decides that two traces are runs of one program. */
static int related(const struct db_run *a, const struct db_run *b)
{
    /* the runtime's [blocking] module is in every traced program: it relates no two */
    for (size_t i = 0; i < a->nmods; i++)
        for (size_t j = 0; j < b->nmods; j++)
            if (strcmp(a->mods[i].path, PTC_BLOCKING_MODULE_PATH) &&
                !strcmp(base_name(a->mods[i].path), base_name(b->mods[j].path)))
                return 1;
    return 0;
}

/* "demo, libx.so" (up to 4 names, then how many): a run's modules for a message. */
static void mod_names(const struct db_run *r, char *buf, size_t n)
{
    size_t k = 0;
    buf[0] = 0;
    for (size_t i = 0; i < r->nmods && k < n; i++) {
        int w = i < 4 ? snprintf(buf + k, n - k, "%s%s", i ? ", " : "", base_name(r->mods[i].path))
                      : snprintf(buf + k, n - k, ", ... (%zu modules)", r->nmods);
        k += w > 0 ? (size_t)w : 0;
        if (i >= 4)
            break;
    }
}

static void side(struct sbuf *b, const struct row *w, int m, int timed)
{
    static const char *const nm[3] = {"calls", "total", "self"};
    sb_printf(b, ", \"%s\": ", nm[m]);
    if (m && !timed) {
        sb_puts(b, "null");
        return;
    }
    sb_printf(b, "{\"base\": %llu, \"new\": %llu, \"change\": %lld}",
              (unsigned long long)w->v[0][m], (unsigned long long)w->v[1][m],
              (long long)(w->v[1][m] - w->v[0][m]));
}

int web_api_diff(const struct web_ctx *c, struct db *d, const struct web_args *a,
                 struct web_resp *r)
{
    int64_t id[2];
    const char *names[2] = {"base", "new"};
    for (int i = 0; i < 2; i++) {
        const char *v = web_arg(a, names[i]);
        if (!v)
            return web_error(r, 400, "give base=RUN and new=RUN");
        if (!(id[i] = web_id_arg(v, "run id", r)))
            return 0;
        if (id[i] < 0)
            return -1;
    }
    uint64_t top;
    int bad = web_top_arg(a, 100, &top, r);
    if (bad)
        return bad < 0 ? -1 : 0;
    struct db_run *run[2] = {NULL, NULL};
    struct db_func_out *fn[2] = {NULL, NULL};
    size_t nf[2] = {0, 0};
    struct row *rows = NULL;
    int rc = 0;
    for (int i = 0; i < 2; i++) {
        int s = load(d, id[i], &run[i], &fn[i], &nf[i], r);
        if (s) {
            rc = s < 0 ? -1 : 0;
            goto out;
        }
    }
    /* runs of unrelated programs have nothing to compare function by function: refused,
     * as ptcall diff refuses them, unless asked (allow_different=1, diff's
     * --allow-different) */
    const char *ad = web_arg(a, "allow_different");
    if (ad && strcmp(ad, "0") && strcmp(ad, "1")) {
        rc = web_error(r, 400, "allow_different='%s': give 1 or 0", ad);
        goto out;
    }
    if (!(ad && !strcmp(ad, "1")) && !related(run[0], run[1])) {
        char ma[300], mb[300];
        mod_names(run[0], ma, sizeof(ma));
        mod_names(run[1], mb, sizeof(mb));
        rc = web_error(r, 409, "runs %lld (%s) and %lld (%s) have no instrumented module in "
                               "common (%s; %s): they look like runs of different programs: "
                               "choose runs of one program, or add allow_different=1 to match "
                               "their functions by name anyway",
                       (long long)id[0], run[0]->program, (long long)id[1], run[1]->program, ma,
                       mb);
        goto out;
    }
    int timed = run[0]->timed && run[1]->timed && !strcmp(run[0]->time_unit, run[1]->time_unit);
    int sort = timed ? 1 : 0;
    const char *sv = web_arg(a, "sort");
    if (sv) {
        sort = !strcmp(sv, "calls") ? 0 : !strcmp(sv, "total") ? 1 : !strcmp(sv, "self") ? 2 : -1;
        if (sort < 0) {
            rc = web_error(r, 400, "sort='%s': give calls, self or total", sv);
            goto out;
        }
        if (sort && !timed) {
            rc = web_error(r, 400, "sort=%s: the two runs have no comparable times: sort by "
                                   "calls", sv);
            goto out;
        }
    }
    rows = calloc(nf[0] + nf[1] + 1, sizeof(*rows));
    if (!rows) {
        rc = -1;
        goto out;
    }
    size_t n = 0, i = 0, j = 0;
    while (i < nf[0] || j < nf[1]) { /* a merge of the two runs' functions by id */
        struct row *w = &rows[n++];
        if (j >= nf[1] || (i < nf[0] && fn[0][i].id < fn[1][j].id))
            w->b = &fn[0][i++];
        else if (i >= nf[0] || fn[1][j].id < fn[0][i].id)
            w->n = &fn[1][j++];
        else
            w->b = &fn[0][i++], w->n = &fn[1][j++];
        for (int s = 0; s < 2; s++) {
            const struct db_func_out *f = s ? w->n : w->b;
            if (f) {
                w->v[s][0] = f->calls;
                w->v[s][1] = f->total;
                w->v[s][2] = f->self;
            }
        }
    }
    qsort_r(rows, n, sizeof(*rows), cmp_row, &sort);
    size_t shown = top && top < n ? (size_t)top : n;
    struct sbuf b;
    sb_init(&b);
    web_json_head(&b, c, "diff");
    sb_puts(&b, ", \"base\": ");
    web_json_run(&b, run[0]);
    sb_puts(&b, ", \"new\": ");
    web_json_run(&b, run[1]);
    sb_printf(&b, ", \"timed\": %s, \"sort\": \"%s\", \"functions\": [", timed ? "true" : "false",
              sort == 0 ? "calls" : sort == 1 ? "total" : "self");
    for (size_t k = 0; k < shown; k++) {
        const struct row *w = &rows[k];
        sb_puts(&b, k ? ",\n  {" : "\n  {");
        web_json_func_id(&b, w->n ? w->n : w->b);
        sb_printf(&b, ", \"status\": \"%s\"", !w->b ? "new" : !w->n ? "gone" : "both");
        for (int m = 0; m < 3; m++)
            side(&b, w, m, timed);
        sb_puts(&b, "}");
    }
    sb_printf(&b, "], \"more\": %zu", n - shown);
    rc = web_json_done(r, &b);
out:
    free(rows);
    for (int s = 0; s < 2; s++) {
        if (run[s])
            db_runs_free(run[s], 1);
        db_funcs_free(fn[s], nf[s]);
    }
    return rc;
}
