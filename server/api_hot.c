/* GET /api/v1/hot: the hot functions over the chosen runs: per function the runs it was
 * called in and, for calls, total and self time, the sum, mean, median, max, min and
 * standard deviation over the runs (a run without the function counting as 0, as `ptcall
 * db query` and `ptcall report --stat` count it). sort=calls|self|total (default self, calls
 * when untimed), stat=sum|mean|median|max|min|stddev (what ranks, default sum), top=N
 * (default 50, 0 all). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_query.h"
#include "web_internal.h"

static int word_of(const char *v, const char *const *words, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(v, words[i]))
            return i;
    return -1;
}

static void stats_json(struct sbuf *b, const double *v, int has)
{
    if (!has) {
        sb_puts(b, "null");
        return;
    }
    sb_puts(b, "{");
    for (int s = 0; s < DB_NSTATS; s++) {
        sb_printf(b, "%s\"%s\": ", s ? ", " : "", db_stat_names[s]);
        sb_json_num(b, v[s]);
    }
    sb_puts(b, "}");
}

static int compute(const struct web_ctx *c, struct db *d, int64_t id, const struct web_args *a,
                   struct web_resp *r)
{
    (void)id;
    int sort = -1, stat = DB_STAT_SUM;
    uint64_t top;
    const char *v;
    if ((v = web_arg(a, "sort")) && (sort = word_of(v, db_meas_names, DB_NMEAS)) < 0)
        return web_error(r, 400, "sort='%s': give calls, self or total", v);
    if ((v = web_arg(a, "stat")) && (stat = word_of(v, db_stat_names, DB_NSTATS)) < 0)
        return web_error(r, 400, "stat='%s': give sum, mean, median, max, min or stddev", v);
    int bad = web_top_arg(a, 50, &top, r);
    if (bad)
        return bad < 0 ? -1 : 0;
    struct db_ids ids;
    int s = web_select(d, a, &ids, r);
    if (s)
        return s < 0 ? -1 : 0;
    if (!ids.n) {
        db_ids_free(&ids);
        return web_error(r, 404, "no run of the database matches the filters");
    }
    /* every statistic of each function shown; the medians (which need every run's figure)
     * of those shown only, unless they rank */
    struct db_hot_ask ask = {stat, sort, top ? (size_t)top : SIZE_MAX};
    struct db_hot h;
    int e = db_hot(d, &ids, &ask, &h);
    if (e) {
        db_ids_free(&ids);
        return web_db_fail(r, d, e);
    }
    if (sort < 0)
        sort = h.timed ? DB_M_SELF : DB_M_CALLS;
    if (sort != DB_M_CALLS && !h.timed) {
        db_ids_free(&ids);
        db_hot_free(&h);
        return web_error(r, 400, "sort=%s: the chosen runs have no comparable times (%s): "
                                 "sort by calls", db_meas_names[sort],
                         h.mixed ? "they mix time units" : "untimed");
    }
    size_t shown = top && top < h.n ? (size_t)top : h.n;
    struct sbuf b;
    sb_init(&b);
    web_json_head(&b, c, "hot");
    sb_printf(&b, ", \"nruns\": %zu, \"runs\": [", ids.n);
    for (size_t i = 0; i < ids.n; i++)
        sb_printf(&b, "%s%lld", i ? "," : "", (long long)ids.v[i]);
    sb_printf(&b, "], \"timed\": %s, \"time_unit\": \"%s\", \"mixed_time_units\": %s, "
                  "\"sort\": \"%s\", \"stat\": \"%s\", \"functions\": [",
              h.timed ? "true" : "false", h.time_unit, h.mixed ? "true" : "false",
              db_meas_names[sort], db_stat_names[stat]);
    for (size_t i = 0; i < shown; i++) {
        const struct db_hot_fn *f = &h.fn[i];
        sb_printf(&b, "%s{\"rank\": %zu, ", i ? ",\n  " : "\n  ", i + 1);
        web_json_func_id(&b, &f->f);
        sb_printf(&b, ", \"runs\": %u, \"calls\": ", f->runs);
        stats_json(&b, f->v[DB_M_CALLS], 1);
        sb_puts(&b, ", \"total\": ");
        stats_json(&b, f->v[DB_M_TOTAL], h.timed);
        sb_puts(&b, ", \"self\": ");
        stats_json(&b, f->v[DB_M_SELF], h.timed);
        sb_puts(&b, "}");
    }
    sb_printf(&b, "], \"more\": %zu", h.n - shown);
    db_hot_free(&h);
    db_ids_free(&ids);
    return web_json_done(r, &b);
}

int web_api_hot(const struct web_ctx *c, struct db *d, const struct web_args *a,
                struct web_resp *r)
{
    return web_cached(c, d, "hot", 0, a, r, compute);
}
