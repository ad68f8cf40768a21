/* GET /api/v1/functions/ID: one function over the chosen runs: its calls, total and self time
 * in each run (0 in a run that did not call it: every chosen run is a point of the line
 * chart), and its callers and callees with the calls along each edge. */
#include <stdlib.h>

#include "db_query_web.h"
#include "web_internal.h"

static void edges_json(struct sbuf *b, const struct db_wedge *w, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        sb_printf(b, "%s{\"id\": %lld, \"name\": ", i ? ", " : "", (long long)w[i].other);
        sb_json_str(b, w[i].name ? w[i].name : "");
        sb_printf(b, ", \"calls\": %llu, \"runs\": %u}", (unsigned long long)w[i].calls,
                  w[i].runs);
    }
}

static int compute(const struct web_ctx *c, struct db *d, int64_t id, const struct web_args *a,
                   struct web_resp *r)
{
    struct db_func_out f;
    int found, e = db_wfunction(d, id, &f, &found);
    if (e)
        return web_db_fail(r, d, e);
    if (!found)
        return web_error(r, 404, "no function %lld in the database", (long long)id);
    struct db_ids ids;
    int s = web_select(d, a, &ids, r);
    if (s) {
        db_wfunction_free(&f);
        return s < 0 ? -1 : 0;
    }
    struct db_run *runs = NULL;
    struct db_wpoint *pt = NULL;
    struct db_wedge *callers = NULL, *callees = NULL;
    size_t np = 0, ncr = 0, nce = 0;
    e = db_runs_get(d, &ids, 0, &runs);
    if (!e)
        e = db_wfunction_runs(d, id, &ids, &pt, &np);
    if (!e)
        e = db_wfunction_edges(d, id, &ids, 1, &callers, &ncr);
    if (!e)
        e = db_wfunction_edges(d, id, &ids, 0, &callees, &nce);
    int rc;
    if (e) {
        rc = web_db_fail(r, d, e);
        goto out;
    }
    struct sbuf b;
    sb_init(&b);
    web_json_head(&b, c, "function");
    sb_puts(&b, ", \"function\": {");
    web_json_func_id(&b, &f);
    sb_puts(&b, "}, \"runs\": [");
    size_t k = 0;
    for (size_t i = 0; i < ids.n; i++) {
        const struct db_run *run = &runs[i];
        while (k < np && pt[k].run < run->id)
            k++;
        const struct db_wpoint *p = k < np && pt[k].run == run->id ? &pt[k] : NULL;
        sb_printf(&b, "%s{\"run\": %lld, \"start_ns\": ", i ? ",\n  " : "\n  ",
                  (long long)run->id);
        if (run->has_start)
            sb_printf(&b, "%lld", (long long)run->start_ns);
        else
            sb_puts(&b, "null");
        sb_puts(&b, ", \"program\": ");
        sb_json_str(&b, run->program);
        sb_printf(&b, ", \"called\": %s, \"demoted\": %s, \"calls\": %llu, \"total\": ",
                  p ? "true" : "false", p && p->demoted ? "true" : "false",
                  (unsigned long long)(p ? p->calls : 0));
        /* counted there (a budget): calls only, null times, never 0 */
        int timed = run->timed && (!p || p->timed);
        web_json_u(&b, timed, p ? p->total : 0);
        sb_puts(&b, ", \"self\": ");
        web_json_u(&b, timed, p ? p->self : 0);
        sb_puts(&b, ", \"time_unit\": ");
        sb_json_str(&b, run->time_unit);
        sb_puts(&b, "}");
    }
    sb_puts(&b, "], \"callers\": [");
    edges_json(&b, callers, ncr);
    sb_puts(&b, "], \"callees\": [");
    edges_json(&b, callees, nce);
    sb_puts(&b, "]");
    rc = web_json_done(r, &b);
out:
    db_runs_free(runs, runs ? ids.n : 0);
    free(pt);
    db_wedges_free(callers, ncr);
    db_wedges_free(callees, nce);
    db_ids_free(&ids);
    db_wfunction_free(&f);
    return rc;
}

int web_api_function(const struct web_ctx *c, struct db *d, int64_t id,
                     const struct web_args *a, struct web_resp *r)
{
    /* its callers are found by scanning every chosen run's edges: worth keeping */
    return web_cached(c, d, "function", id, a, r, compute);
}
