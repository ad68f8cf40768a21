/* GET /api/v1/runs/ID: one run, its functions (hottest by self time first, or by calls when
 * untimed; top=N, default 100, 0 all) and the call graph among them (its edges);
 * GET /api/v1/runs/ID/flame.svg: its flame graph, made from the trace file the database
 * names when it is still the file the run was stored from (410 when it is not);
 * GET /api/v1/runs/ID/flame.json: the same graph's trees, per thread or all threads. */
#include <stdlib.h>
#include <string.h>

#include "web_internal.h"

static int cmp_self(const void *x, const void *y)
{
    const struct db_func_out *a = x, *b = y;
    uint64_t p = a->timed ? a->self : a->calls, q = b->timed ? b->self : b->calls;
    if (p != q)
        return p > q ? -1 : 1;
    if (a->calls != b->calls)
        return a->calls > b->calls ? -1 : 1;
    return strcmp(a->name ? a->name : "", b->name ? b->name : "");
}

static int cmp_edge(const void *x, const void *y)
{
    const struct db_edge_out *a = x, *b = y;
    if (a->calls != b->calls)
        return a->calls > b->calls ? -1 : 1;
    return a->caller != b->caller ? (a->caller < b->caller ? -1 : 1)
                                  : (a->callee < b->callee ? -1 : a->callee > b->callee);
}

static int cmp_id(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return a < b ? -1 : a > b;
}

/* Whether id is among the shown functions' ids (sorted). */
static int shown(const int64_t *ids, size_t n, int64_t id)
{
    return bsearch(&id, ids, n, sizeof(id), cmp_id) != NULL;
}

static int get_run(struct db *d, int64_t id, int mods, struct db_run **run, struct web_resp *r)
{
    int64_t v[1] = {id};
    struct db_ids ids = {v, 1};
    int e = db_runs_get(d, &ids, mods, run);
    if (e == -DB_E_STOP)
        return web_error(r, 404, "no run %lld in the database", (long long)id) ? -1 : 1;
    if (e)
        return web_db_fail(r, d, e) ? -1 : 1;
    return 0;
}

int web_api_run(const struct web_ctx *c, struct db *d, int64_t id, const struct web_args *a,
                struct web_resp *r)
{
    uint64_t top;
    int bad = web_top_arg(a, 100, &top, r);
    if (bad)
        return bad < 0 ? -1 : 0;
    struct db_run *run;
    int s = get_run(d, id, 1, &run, r);
    if (s)
        return s < 0 ? -1 : 0;
    struct db_func_out *fn = NULL;
    struct db_edge_out *ed = NULL;
    size_t nf = 0, ne = 0;
    int e = db_run_functions(d, id, &fn, &nf);
    if (!e)
        e = db_run_edges(d, id, &ed, &ne);
    if (e) {
        db_runs_free(run, 1);
        db_funcs_free(fn, nf);
        free(ed);
        return web_db_fail(r, d, e);
    }
    if (nf) /* a run without functions has no array: qsort of NULL is undefined */
        qsort(fn, nf, sizeof(*fn), cmp_self);
    if (ne)
        qsort(ed, ne, sizeof(*ed), cmp_edge);
    size_t ns = top && top < nf ? (size_t)top : nf;
    int64_t *ids = malloc((ns ? ns : 1) * sizeof(*ids));
    if (!ids) {
        db_runs_free(run, 1);
        db_funcs_free(fn, nf);
        free(ed);
        return -1;
    }
    for (size_t i = 0; i < ns; i++)
        ids[i] = fn[i].id;
    if (ns)
        qsort(ids, ns, sizeof(*ids), cmp_id);
    struct sbuf b;
    sb_init(&b);
    web_json_head(&b, c, "run");
    sb_puts(&b, ", \"run\": ");
    web_json_run(&b, run);
    sb_printf(&b, ", \"sort\": \"%s\", \"functions\": [", run->timed ? "self" : "calls");
    for (size_t i = 0; i < ns; i++) {
        sb_puts(&b, i ? ",\n  {" : "\n  {");
        web_json_func_id(&b, &fn[i]);
        sb_puts(&b, ", \"module_path\": ");
        sb_json_str(&b, fn[i].module_path);
        sb_printf(&b, ", \"calls\": %llu, \"state\": ", (unsigned long long)fn[i].calls);
        sb_json_str(&b, fn[i].state ? fn[i].state : "traced");
        sb_printf(&b, ", \"demoted\": %s, \"total\": ", fn[i].demoted ? "true" : "false");
        web_json_u(&b, fn[i].timed, fn[i].total);
        sb_puts(&b, ", \"self\": ");
        web_json_u(&b, fn[i].timed, fn[i].self);
        sb_puts(&b, "}");
    }
    sb_printf(&b, "], \"more\": %zu, \"edges\": [", nf - ns);
    size_t k = 0;
    for (size_t i = 0; i < ne; i++) {
        if (!shown(ids, ns, ed[i].caller) || !shown(ids, ns, ed[i].callee))
            continue;
        sb_printf(&b, "%s{\"caller_id\": %lld, \"callee_id\": %lld, \"calls\": %llu}",
                  k++ ? ", " : "", (long long)ed[i].caller, (long long)ed[i].callee,
                  (unsigned long long)ed[i].calls);
    }
    sb_printf(&b, "], \"flame_graph\": \"/api/v%d/runs/%lld/flame.svg\"", WEB_API_VERSION,
              (long long)id);
    sb_printf(&b, ", \"flame_tree\": \"/api/v%d/runs/%lld/flame.json\"", WEB_API_VERSION,
              (long long)id);
    free(ids);
    db_runs_free(run, 1);
    db_funcs_free(fn, nf);
    free(ed);
    return web_json_done(r, &b);
}

int web_run_get(struct db *d, int64_t id, struct db_run **run, struct web_resp *r)
{
    return get_run(d, id, 0, run, r);
}

/* The answer when the callback cannot make the run's flame graph from its trace file: one
 * answer whatever is at the path now (the 410 rule of docs/web.md: it tells nothing about
 * the path), for flame.svg and flame.json alike. */
static int flame_failed(int f, int64_t id, const struct db_run *run, const char *err,
                        struct web_resp *r)
{
    if (f == 1)
        return web_run_gone(r, id, run->trace);
    return web_error(r, 500, "run %lld's flame graph: %s", (long long)id, err);
}

/* The flame graph as SVG from the run's trace file (web_trace_fn). */
static int make_flame(const struct web_ctx *c, const struct db_run *run, int64_t id,
                      const void *arg, struct web_resp *r)
{
    (void)arg;
    char err[800] = "";
    char *svg = NULL;
    size_t len = 0;
    int f = c->flame(run->trace, run->content_hash, (uint64_t)run->trace_bytes, &svg, &len, err,
                     sizeof(err));
    if (f)
        return flame_failed(f, id, run, err, r);
    web_resp_free(r);
    r->status = 200;
    r->type = "image/svg+xml";
    r->body = svg;
    r->len = len;
    return 0;
}

int web_api_flame(const struct web_ctx *c, struct db *d, int64_t id, struct web_resp *r)
{
    struct db_run *run;
    int s = get_run(d, id, 0, &run, r);
    if (s)
        return s < 0 ? -1 : 0;
    int rc = !c->flame ? web_error(r, 404, "this server makes no flame graphs")
                       : web_trace_cached(c, run, id, "flame.svg", make_flame, NULL, r);
    db_runs_free(run, 1);
    return rc;
}

/* flame.json's arguments, as the view takes them: thread "all", a TID or NULL (every), and
 * the weight */
struct tree_args {
    const char *thread, *weight, *asked; /* asked: thread as given (its 404 names it) */
};

/* The flame trees as JSON from the run's trace file (web_trace_fn). */
static int make_tree(const struct web_ctx *c, const struct db_run *run, int64_t id,
                     const void *arg, struct web_resp *r)
{
    const struct tree_args *t = arg;
    char err[800] = "";
    char *tree = NULL;
    size_t len = 0;
    int f = c->flame_json(run->trace, run->content_hash, (uint64_t)run->trace_bytes, t->thread,
                          t->weight, &tree, &len, err, sizeof(err));
    int rc;
    if (f == 2)
        rc = web_error(r, 409, "run %lld's trace has no times: its flame graph is weighed by "
                               "calls only (weight=calls)", (long long)id);
    else if (f == 3)
        rc = web_error(r, 404, "run %lld has no thread %s (the answer for thread=all lists its "
                               "threads)", (long long)id, t->asked);
    else if (f)
        rc = flame_failed(f, id, run, err, r);
    else {
        struct sbuf b;
        sb_init(&b);
        web_json_head(&b, c, "flame");
        sb_printf(&b, ", \"run_id\": %lld, \"flame\": ", (long long)id);
        /* the view writes names as every answer does (< > & as \u escapes: ptcall html's
         * script block holding the answers cannot be ended by a name) */
        sb_add(&b, tree, len);
        rc = web_json_done(r, &b);
    }
    free(tree);
    return rc;
}

int web_api_flame_json(const struct web_ctx *c, struct db *d, int64_t id,
                       const struct web_args *a, struct web_resp *r)
{
    const char *thread = web_arg(a, "thread"), *weight = web_arg(a, "weight");
    if (thread && strcmp(thread, "all") && strcmp(thread, "every") &&
        (!*thread || strspn(thread, "0123456789") != strlen(thread) || strlen(thread) > 10))
        return web_error(r, 400, "thread=%.64s: give a thread id (a number), all or every",
                         thread);
    if (weight && strcmp(weight, "calls") && strcmp(weight, "self") && strcmp(weight, "total"))
        return web_error(r, 400, "weight=%.64s: give calls, self or total", weight);
    struct db_run *run;
    int s = get_run(d, id, 0, &run, r);
    if (s)
        return s < 0 ? -1 : 0;
    if (!c->flame_json) {
        db_runs_free(run, 1);
        return web_error(r, 404, "this server makes no flame graphs");
    }
    struct tree_args t = {!thread ? "all" : strcmp(thread, "every") ? thread : NULL,
                          weight ? weight : run->timed ? "self" : "calls", thread};
    char what[96]; /* the key: the arguments as the view takes them (thread=all is no thread) */
    snprintf(what, sizeof(what), "flame.json thread=%s weight=%s", t.thread ? t.thread : "every",
             t.weight);
    int rc = web_trace_cached(c, run, id, what, make_tree, &t, r);
    db_runs_free(run, 1);
    return rc;
}
