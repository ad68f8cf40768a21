/* What the API views share (web_filter.c, web_json.c) and their entry points, one file each. */
#ifndef PTCALL_WEB_INTERNAL_H
#define PTCALL_WEB_INTERNAL_H

#include "db_query.h"
#include "web.h"

/* The runs a request chooses: tag=NAME[=VALUE] (repeatable), program=GLOB (repeatable),
 * since=NS, until=NS (ns since 1970), runs=SPEC (as db --runs). 0 with ids filled (maybe
 * none), 1 with an error response in r (400 bad value, 404 a tag no run has), -1 on a
 * database failure (r: 500). */
int web_select(struct db *d, const struct web_args *a, struct db_ids *ids, struct web_resp *r);
/* A positive whole number argument, or 0 with a 400 response in r when it is not one. */
int64_t web_id_arg(const char *s, const char *what, struct web_resp *r);
/* top=N (0: all; dflt when not given) into *top: 0, or 1 with a 400 response in r, or -1
 * when the response could not be made. */
int web_top_arg(const struct web_args *a, uint64_t dflt, uint64_t *top, struct web_resp *r);
/* A database failure as a 500 response; returns 0 (a response was made) or -1 (no memory). */
int web_db_fail(struct web_resp *r, struct db *d, int e);

/* An answer through the server's cache (c->cache; none: computed every time): keyed by
 * view, id, the arguments and the database's generation, so an added or removed run is
 * never answered from it; one computation per key at a time (web_cache.h), so clients
 * asking the same new question at once wait for the first's answer. */
typedef int (*web_view_fn)(const struct web_ctx *c, struct db *d, int64_t id,
                           const struct web_args *a, struct web_resp *r);
int web_cached(const struct web_ctx *c, struct db *d, const char *view, int64_t id,
               const struct web_args *a, struct web_resp *r, web_view_fn compute);

/* An answer made from a run's trace file (its flame graph, flame trees, threads) through the
 * server's cache: the file at run->trace is checked first (c->trace_same; not the run's file:
 * the 410 of web_run_gone, as the decoding would answer), then the answer is looked up under
 * what (the view and the arguments that change it, as the view takes them), the run's id,
 * trace path, size and content hash; one computation per key at a time. Without a cache or
 * c->trace_same (ptcall html): make(c, run, id, arg, r) every time. */
typedef int (*web_trace_fn)(const struct web_ctx *c, const struct db_run *run, int64_t id,
                            const void *arg, struct web_resp *r);
int web_trace_cached(const struct web_ctx *c, const struct db_run *run, int64_t id,
                     const char *what, web_trace_fn make, const void *arg, struct web_resp *r);

/* The document's opening fields: {"format_version": 1, "api": "NAME", "database": ... */
void web_json_head(struct sbuf *b, const struct web_ctx *c, const char *api);
/* A run as db list's JSON shows it (docs/db.md). */
void web_json_run(struct sbuf *b, const struct db_run *r);
/* A function's identity fields ("id", "name", "linkage_name", "module", "file", "line"). */
void web_json_func_id(struct sbuf *b, const struct db_func_out *f);
/* A nullable whole number. */
void web_json_u(struct sbuf *b, int has, uint64_t v);

int web_api_runs(const struct web_ctx *c, struct db *d, const struct web_args *a,
                 struct web_resp *r);
int web_api_run(const struct web_ctx *c, struct db *d, int64_t id, const struct web_args *a,
                struct web_resp *r);
/* The 410 answer for a run whose trace file is not the one it was stored from (flame graph,
 * timeline); returns web_error's value. */
int web_run_gone(struct web_resp *r, int64_t id, const char *trace);
/* Run id without its modules: 0, 1 with a 404/500 response in r, -1 no memory. */
int web_run_get(struct db *d, int64_t id, struct db_run **run, struct web_resp *r);
/* GET /api/v1/runs/ID/timeline and .../timeline/call (api_timeline.c). */
int web_api_timeline(const struct web_ctx *c, struct db *d, int64_t id, int call,
                     const struct web_args *a, struct web_resp *r);
int web_api_flame(const struct web_ctx *c, struct db *d, int64_t id, struct web_resp *r);
/* api_callgraph.c */
int web_api_callgraph(const struct web_ctx *c, struct db *d, int64_t id,
                      const struct web_args *a, struct web_resp *r);
/* api_threads.c */
int web_api_threads(const struct web_ctx *c, struct db *d, int64_t id, struct web_resp *r);
/* GET /api/v1/runs/ID/flame.json?thread=TID|all&weight=calls|self|total (api_run.c) */
int web_api_flame_json(const struct web_ctx *c, struct db *d, int64_t id,
                       const struct web_args *a, struct web_resp *r);
int web_api_hot(const struct web_ctx *c, struct db *d, const struct web_args *a,
                struct web_resp *r);
int web_api_function(const struct web_ctx *c, struct db *d, int64_t id,
                     const struct web_args *a, struct web_resp *r);
int web_api_diff(const struct web_ctx *c, struct db *d, const struct web_args *a,
                 struct web_resp *r);

#endif
