/* GET /api/v1/runs/ID/callgraph: the run's call graph for a layout (the page lays it out
 * with Graphviz): the functions chosen by inclusive share with the roots and the paths to
 * them (db_graph_pick.h, the choice `ptcall graph` makes too), each with flat (self) and
 * cumulative (total) figures and shares, and the edges among them; focus=FUNCTION_ID keeps
 * that function, its callers up to the roots and its callees down. From the database alone:
 * no trace file is read. */
#include <stdlib.h>
#include <string.h>

#include "db_graph_pick.h"
#include "web_internal.h"

#define CG_MIN_SHARE 0.005       /* pprof's nodefraction */
#define CG_MAX_NODES 80

static int cmp_fid(const void *x, const void *y)
{
    const struct db_func_out *a = x, *b = y;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* The index of function id in fn (sorted by id), or nf when it is not there. */
static size_t index_of(const struct db_func_out *fn, size_t nf, int64_t id)
{
    struct db_func_out k;
    memset(&k, 0, sizeof(k));
    k.id = id;
    const struct db_func_out *f = nf ? bsearch(&k, fn, nf, sizeof(*fn), cmp_fid) : NULL;
    return f ? (size_t)(f - fn) : nf;
}

/* min_share=F (0..1), max_nodes=N (0: no cap), focus=ID: 0, or 1 with a 400 in r, or -1. */
static int args(const struct web_args *a, struct dbg_opts *o, int64_t *focus, struct web_resp *r)
{
    const char *s = web_arg(a, "min_share"), *m = web_arg(a, "max_nodes"),
               *f = web_arg(a, "focus");
    char *end;
    o->min_share = CG_MIN_SHARE;
    o->max_nodes = CG_MAX_NODES;
    *focus = 0;
    if (s) {
        o->min_share = strtod(s, &end);
        if (!*s || *end || !(o->min_share >= 0 && o->min_share <= 1))
            return web_error(r, 400, "min_share='%s' is not a fraction from 0 to 1 (0.005 is "
                                     "half a percent of the run's time)", s) ? -1 : 1;
    }
    if (m) {
        unsigned long long v = strtoull(m, &end, 10);
        if (!*m || *end || *m == '-')
            return web_error(r, 400, "max_nodes='%s' is not a whole number (0: no cap)", m)
                       ? -1 : 1;
        o->max_nodes = (size_t)v;
    }
    if (f && (*focus = web_id_arg(f, "focus function id", r)) <= 0)
        return *focus < 0 ? -1 : 1;
    return 0;
}

/* a share with the digits a percentage to two decimals needs (sb_json_num keeps two) */
static void put_share(struct sbuf *b, uint64_t v, uint64_t all)
{
    sb_printf(b, "%.6g", all ? (double)v / (double)all : 0.0);
}

static int write_graph(struct sbuf *b, const struct db_run *run, const struct db_func_out *fn,
                        size_t nf, const struct db_edge_out *ed, const struct dbg_edge *ge,
                        size_t ne, const struct dbg_opts *o, int64_t focus,
                        const struct dbg_pick *p)
{
    sb_printf(b, ", \"run_id\": %lld, \"weight\": \"%s\", \"time_unit\": ", (long long)run->id,
              o->timed ? "total" : "calls");
    sb_json_str(b, run->time_unit);
    sb_printf(b, ", \"min_share\": %.6g", o->min_share);
    sb_printf(b, ", \"max_nodes\": %zu, \"focus\": ", o->max_nodes);
    if (focus)
        sb_printf(b, "%lld", (long long)focus);
    else
        sb_puts(b, "null");
    sb_printf(b, ", \"all\": %llu, \"functions_in_run\": %zu, \"cut\": %zu, \"nodes\": [",
              (unsigned long long)p->all, nf, p->cut);
    unsigned char *caller = calloc(nf ? nf : 1, 1);
    if (!caller)
        return -1;
    for (size_t i = 0; i < ne; i++)
        if (ge[i].caller != ge[i].callee)
            caller[ge[i].callee] = 1;
    size_t k = 0;
    for (size_t i = 0; i < nf; i++) {
        if (!p->keep[i])
            continue;
        const struct db_func_out *f = &fn[i];
        int timed = o->timed && f->timed;
        sb_puts(b, k++ ? ",\n  {" : "\n  {");
        web_json_func_id(b, f);
        sb_printf(b, ", \"calls\": %llu, \"state\": ", (unsigned long long)f->calls);
        sb_json_str(b, f->state ? f->state : "traced");
        sb_printf(b, ", \"demoted\": %s, \"self\": ", f->demoted ? "true" : "false");
        web_json_u(b, timed, f->self);
        sb_puts(b, ", \"total\": ");
        web_json_u(b, timed, f->total);
        sb_puts(b, ", \"self_share\": ");
        if (timed)
            put_share(b, f->self, p->all);
        else
            sb_puts(b, "null");
        sb_puts(b, ", \"total_share\": ");
        if (timed)
            put_share(b, f->total, p->all);
        else
            sb_puts(b, "null");
        sb_puts(b, ", \"calls_share\": ");
        if (o->timed)
            sb_puts(b, "null");
        else
            put_share(b, f->calls, p->all);
        sb_printf(b, ", \"root\": %s}", !caller[i] ? "true" : "false");
    }
    sb_puts(b, "], \"edges\": [");
    k = 0;
    for (size_t i = 0; i < ne; i++)
        if (p->keep_edge[i])
            sb_printf(b, "%s{\"caller_id\": %lld, \"callee_id\": %lld, \"calls\": %llu}",
                      k++ ? ",\n  " : "\n  ", (long long)ed[i].caller, (long long)ed[i].callee,
                      (unsigned long long)ed[i].calls);
    sb_puts(b, "]");
    free(caller);
    return 0;
}

int web_api_callgraph(const struct web_ctx *c, struct db *d, int64_t id,
                      const struct web_args *a, struct web_resp *r)
{
    struct dbg_opts o;
    memset(&o, 0, sizeof(o));
    int64_t focus;
    int bad = args(a, &o, &focus, r);
    if (bad)
        return bad < 0 ? -1 : 0;
    struct db_run *run;
    int64_t v[1] = {id};
    struct db_ids ids = {v, 1};
    int e = db_runs_get(d, &ids, 0, &run);
    if (e == -DB_E_STOP)
        return web_error(r, 404, "no run %lld in the database", (long long)id);
    if (e)
        return web_db_fail(r, d, e);
    struct db_func_out *fn = NULL;
    struct db_edge_out *ed = NULL;
    size_t nf = 0, ne = 0;
    e = db_run_functions(d, id, &fn, &nf);
    if (!e)
        e = db_run_edges(d, id, &ed, &ne);
    if (e) {
        db_runs_free(run, 1);
        db_funcs_free(fn, nf);
        free(ed);
        return web_db_fail(r, d, e);
    }
    if (nf)
        qsort(fn, nf, sizeof(*fn), cmp_fid);
    o.timed = run->timed;
    int rc = 0;
    struct dbg_node *gn = malloc((nf ? nf : 1) * sizeof(*gn));
    struct dbg_edge *ge = malloc((ne ? ne : 1) * sizeof(*ge));
    struct dbg_pick p;
    memset(&p, 0, sizeof(p));
    if (!gn || !ge) {
        rc = -1;
        goto out;
    }
    for (size_t i = 0; i < nf; i++)
        gn[i] = (struct dbg_node){fn[i].calls, fn[i].timed ? fn[i].self : 0,
                                  fn[i].timed ? fn[i].total : 0};
    size_t kept = 0;
    for (size_t i = 0; i < ne; i++) {
        size_t x = index_of(fn, nf, ed[i].caller), y = index_of(fn, nf, ed[i].callee);
        if (x == nf || y == nf) /* an edge to a function the run does not list: not drawn */
            continue;
        ed[kept] = ed[i];
        ge[kept++] = (struct dbg_edge){x, y, ed[i].calls};
    }
    ne = kept;
    if (focus) {
        o.has_focus = 1;
        o.focus = index_of(fn, nf, focus);
        if (o.focus == nf) {
            rc = web_error(r, 404, "function %lld is not called in run %lld: choose one from "
                                   "the run's functions (GET /api/v%d/runs/%lld)",
                           (long long)focus, (long long)id, WEB_API_VERSION, (long long)id);
            goto out;
        }
    }
    if (dbg_pick(gn, nf, ge, ne, &o, &p)) {
        rc = -1;
        goto out;
    }
    struct sbuf b;
    sb_init(&b);
    web_json_head(&b, c, "callgraph");
    if (write_graph(&b, run, fn, nf, ed, ge, ne, &o, focus, &p)) {
        sb_free(&b);
        rc = -1;
        goto out;
    }
    rc = web_json_done(r, &b);
out:
    dbg_pick_free(&p);
    free(gn);
    free(ge);
    db_runs_free(run, 1);
    db_funcs_free(fn, nf);
    free(ed);
    return rc;
}
