/* /api/v1/runs/ID/threads: the threads of a run, from the trace file it was stored from
 * (docs/web.md, Threads). The database keeps per-function figures, not threads, so they come
 * from the file through the tools' decoding, handed in as web_ctx.threads, with the flame
 * graph's rule: only the very file the run was stored from (410 otherwise). */
#include <stdlib.h>
#include <string.h>

#include "web_internal.h"

/* The threads table from the run's trace file (web_trace_fn). */
static int make_threads(const struct web_ctx *c, const struct db_run *run, int64_t id,
                        const void *arg, struct web_resp *r)
{
    (void)arg;
    char err[800] = "";
    char *arr = NULL;
    size_t len = 0;
    int f = c->threads(run->trace, run->content_hash, (uint64_t)run->trace_bytes, &arr, &len,
                       err, sizeof(err));
    int rc;
    if (f == 1) /* the flame graph's answer, word for word: it tells nothing about the path */
        rc = web_run_gone(r, id, run->trace);
    else if (f)
        rc = web_error(r, 500, "run %lld's threads: %s", (long long)id, err);
    else {
        struct sbuf b;
        sb_init(&b);
        web_json_head(&b, c, "threads");
        sb_printf(&b, ", \"run\": %lld, \"time_unit\": ", (long long)id);
        sb_json_str(&b, run->time_unit ? run->time_unit : "ns");
        sb_puts(&b, ", \"threads\": ");
        sb_add(&b, arr, len);
        rc = web_json_done(r, &b);
    }
    free(arr);
    return rc;
}

int web_api_threads(const struct web_ctx *c, struct db *d, int64_t id, struct web_resp *r)
{
    struct db_run *run;
    int s = web_run_get(d, id, &run, r);
    if (s)
        return s < 0 ? -1 : 0;
    int rc = !c->threads ? web_error(r, 404, "this server reads no trace files for threads")
                         : web_trace_cached(c, run, id, "threads", make_threads, NULL, r);
    db_runs_free(run, 1);
    return rc;
}
