/* GET /api/v1/campaigns/compare?a=SEL&b=SEL (docs/web.md, *Comparing campaigns*): two groups
 * of trials (campaigns chosen by tag:K=V, tag:K, or a list of ids 1,2,3), each trial's final
 * coverage, each group's summary and median curve, and the two-sided Mann-Whitney U test
 * with Vargha-Delaney A12 between the groups' final function coverage (and block coverage,
 * when every trial counts blocks), as FuzzBench reports them (db/db_stats.c). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_campaign.h"
#include "db_conn.h"
#include "db_stats.h"
#include "web_campaign.h"
#include "web_internal.h"

#define MAX_IDS 1000
#define CURVE_POINTS 400 /* the median curve's times at most (a grid over the union's) */

struct group {
    const char *label;
    struct db_campaign *v;
    size_t n;
    double *fin_f, *fin_b;
    int blocks;                 /* every trial counts blocks */
    struct db_cpoint **curve;
    size_t *ncurve;
};

/* sel into g->v: 0, 1 with a 400/404 response, -1 when it could not be made. */
static int select_group(struct db *d, const char *arg, const char *sel, struct group *g,
                        struct web_resp *r)
{
    struct db_cfilter f = {0};
    const char *tag[1];
    int64_t ids[MAX_IDS];
    if (!strncmp(sel, "tag:", 4)) {
        if (!sel[4] || sel[4] == '=')
            return web_error(r, 400, "%s=%s: give tag:NAME=VALUE or tag:NAME", arg, sel) ? -1 : 1;
        tag[0] = sel + 4;
        f.tags = tag;
        f.ntags = 1;
    } else {
        size_t n = 0;
        for (const char *p = sel; *p;) {
            char *end;
            errno = 0;
            long long v = strtoll(p, &end, 10);
            if (end == p || v <= 0 || errno || (*end && *end != ',') || n == MAX_IDS)
                return web_error(r, 400, "%s=%s: give tag:NAME=VALUE or campaign ids "
                                         "(1,2,3; at most %d)", arg, sel, MAX_IDS) ? -1 : 1;
            ids[n++] = v;
            p = *end ? end + 1 : end;
        }
        if (!n)
            return web_error(r, 400, "%s is empty: give tag:NAME=VALUE or campaign ids (1,2,3)",
                             arg) ? -1 : 1;
        f.ids = ids;
        f.nids = n;
    }
    int e = db_campaigns_get(d, &f, &g->v, &g->n);
    if (e)
        return web_db_fail(r, d, e) ? -1 : 1;
    if (!g->n)
        return web_error(r, 404, "%s=%s: no campaign of the database matches", arg, sel) ? -1 : 1;
    return 0;
}

static void summary_json(struct sbuf *b, double *v, size_t n)
{
    struct db_summary s;
    db_summary_of(v, n, &s);
    const double x[7] = {s.median, s.q1, s.q3, s.min, s.max, s.mean, s.stddev};
    static const char *const names[7] = {"median", "q1", "q3", "min", "max", "mean", "stddev"};
    sb_puts(b, "{");
    for (int i = 0; i < 7; i++) {
        sb_printf(b, "%s\"%s\": ", i ? ", " : "", names[i]);
        if (isnan(x[i]))
            sb_puts(b, "null");
        else
            sb_json_num(b, x[i]);
    }
    sb_puts(b, "}");
}

static int64_t value_at(const struct db_cpoint *p, size_t n, int64_t t)
{
    size_t lo = 0, hi = n; /* the last point at or before t */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (p[mid].t_ms <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? p[lo - 1].functions : 0;
}

static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return a < b ? -1 : a > b;
}

/* The median over the trials of functions reached at each time of a grid over all the
 * trials' curve times (all of them when they are few). */
static void median_curve(struct sbuf *b, const struct group *g)
{
    size_t total = 0;
    for (size_t i = 0; i < g->n; i++)
        total += g->ncurve[i];
    int64_t *t = malloc((total + 1) * sizeof(*t));
    double *v = malloc((g->n + 1) * sizeof(*v));
    sb_puts(b, "[");
    if (t && v) {
        size_t k = 0;
        for (size_t i = 0; i < g->n; i++)
            for (size_t j = 0; j < g->ncurve[i]; j++)
                t[k++] = g->curve[i][j].t_ms;
        if (k > 1)
            qsort(t, k, sizeof(*t), cmp_i64);
        size_t u = 0;
        for (size_t i = 0; i < k; i++)
            if (!u || t[u - 1] != t[i])
                t[u++] = t[i];
        size_t step = u > CURVE_POINTS ? (u + CURVE_POINTS - 1) / CURVE_POINTS : 1;
        int first = 1;
        for (size_t i = 0; i < u; i += step) {
            /* the last time always: the curve ends where the last trial's last gain is */
            size_t at = i + step >= u ? u - 1 : i;
            for (size_t j = 0; j < g->n; j++)
                v[j] = (double)value_at(g->curve[j], g->ncurve[j], t[at]);
            struct db_summary s;
            db_summary_of(v, g->n, &s);
            sb_printf(b, "%s[%lld, ", first ? "" : ", ", (long long)t[at]);
            sb_json_num(b, s.median);
            sb_puts(b, "]");
            first = 0;
            if (at == u - 1)
                break;
        }
    }
    sb_puts(b, "]");
    free(t);
    free(v);
}

static void test_json(struct sbuf *b, const double *x, size_t nx, const double *y, size_t ny)
{
    struct db_mwu m;
    if (db_mann_whitney(x, nx, y, ny, &m)) {
        sb_puts(b, "null");
        return;
    }
    sb_puts(b, "{\"name\": \"Mann-Whitney U (two-sided)\", \"u\": ");
    sb_json_num(b, m.u);
    sb_puts(b, ", \"p\": ");
    sb_json_num(b, m.p);
    sb_printf(b, ", \"method\": \"%s\", \"a12\": ", m.exact ? "exact" : "normal");
    sb_json_num(b, m.a12);
    sb_printf(b, ", \"significant_at_0_05\": %s, \"n\": [%zu, %zu]}",
              m.p < 0.05 ? "true" : "false", nx, ny);
}

static void group_free(struct group *g)
{
    for (size_t i = 0; g->curve && i < g->n; i++)
        free(g->curve[i]);
    free(g->curve);
    free(g->ncurve);
    free(g->fin_f);
    free(g->fin_b);
    db_campaigns_free(g->v, g->n);
}

static int load_group(struct db *d, struct group *g)
{
    g->fin_f = malloc(g->n * sizeof(double));
    g->fin_b = malloc(g->n * sizeof(double));
    g->curve = calloc(g->n, sizeof(*g->curve));
    g->ncurve = calloc(g->n, sizeof(*g->ncurve));
    if (!g->fin_f || !g->fin_b || !g->curve || !g->ncurve)
        return db_fail(d, DB_E_NOMEM, "out of memory");
    g->blocks = 1;
    for (size_t i = 0; i < g->n; i++) {
        g->fin_f[i] = (double)g->v[i].functions_reached;
        g->fin_b[i] = (double)g->v[i].blocks_reached;
        if (g->v[i].blocks_total < 0)
            g->blocks = 0;
        int e = db_campaign_curve(d, g->v[i].id, &g->curve[i], &g->ncurve[i]);
        if (e)
            return e;
    }
    return 0;
}

int web_api_campaign_compare(const struct web_ctx *c, struct db *d, const struct web_args *a,
                             struct web_resp *r)
{
    struct group g[2] = {{0}, {0}};
    int rc = 0, s = 0;
    for (int k = 0; k < 2 && !s; k++) {
        const char *arg = k ? "b" : "a", *sel = web_arg(a, arg);
        if (!sel) {
            s = web_error(r, 400, "give a=SEL and b=SEL (SEL: tag:NAME=VALUE or campaign ids "
                                  "1,2,3)") ? -1 : 1;
            break;
        }
        g[k].label = sel;
        s = select_group(d, arg, sel, &g[k], r);
    }
    if (!s && strcmp(g[0].v[0].program, g[1].v[0].program))
        s = web_error(r, 400, "a= is of program %s and b= of %s: compare campaigns of one "
                              "program", g[0].v[0].program, g[1].v[0].program) ? -1 : 1;
    for (int k = 0; k < 2 && !s; k++) {
        int e = load_group(d, &g[k]);
        if (e)
            s = web_db_fail(r, d, e) ? -1 : 1;
    }
    if (s) {
        rc = s < 0 ? -1 : 0;
        goto out;
    }
    struct sbuf b;
    sb_init(&b);
    web_json_head(&b, c, "campaigns_compare");
    sb_puts(&b, ", \"groups\": [");
    for (int k = 0; k < 2; k++) {
        struct group *x = &g[k];
        sb_puts(&b, k ? ",\n  {\"label\": " : "\n  {\"label\": ");
        sb_json_str(&b, x->label);
        sb_puts(&b, ", \"trials\": [");
        for (size_t i = 0; i < x->n; i++) {
            sb_printf(&b, "%s{\"id\": %lld, \"name\": ", i ? ", " : "", (long long)x->v[i].id);
            sb_json_str(&b, x->v[i].name);
            sb_printf(&b, ", \"functions\": %lld, \"blocks\": ",
                      (long long)x->v[i].functions_reached);
            if (x->v[i].blocks_total < 0)
                sb_puts(&b, "null");
            else
                sb_printf(&b, "%lld", (long long)x->v[i].blocks_reached);
            sb_puts(&b, "}");
        }
        double *tmp = malloc(x->n * sizeof(double));
        sb_puts(&b, "], \"functions\": ");
        if (tmp) {
            memcpy(tmp, x->fin_f, x->n * sizeof(double));
            summary_json(&b, tmp, x->n);
        } else {
            sb_puts(&b, "null");
        }
        sb_puts(&b, ", \"blocks\": ");
        if (tmp && x->blocks) {
            memcpy(tmp, x->fin_b, x->n * sizeof(double));
            summary_json(&b, tmp, x->n);
        } else {
            sb_puts(&b, "null");
        }
        free(tmp);
        sb_puts(&b, ", \"median_curve\": ");
        median_curve(&b, x);
        sb_puts(&b, "}");
    }
    sb_puts(&b, "],\n\"test\": ");
    test_json(&b, g[0].fin_f, g[0].n, g[1].fin_f, g[1].n);
    sb_puts(&b, ",\n\"test_blocks\": ");
    if (g[0].blocks && g[1].blocks)
        test_json(&b, g[0].fin_b, g[0].n, g[1].fin_b, g[1].n);
    else
        sb_puts(&b, "null");
    rc = web_json_done(r, &b);
out:
    group_free(&g[0]);
    group_free(&g[1]);
    return rc;
}
