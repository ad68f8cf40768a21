/* /api/v1/runs/ID/threads: the threads of a run, from the trace file it was stored from
 * (docs/web.md, Threads). The database keeps per-function figures, not threads, so they come
 * from the file through the tools' decoding, handed in as web_ctx.threads, with the flame
 * graph's rule: only the very file the run was stored from (410 otherwise). */
#include <stdlib.h>
#include <string.h>

#include "web_internal.h"

int web_api_threads(const struct web_ctx *c, struct db *d, int64_t id, struct web_resp *r)
{
    int64_t v[1] = {id};
    struct db_ids ids = {v, 1};
    struct db_run *run;
    int e = db_runs_get(d, &ids, 0, &run);
    if (e == -DB_E_STOP)
        return web_error(r, 404, "no run %lld in the database", (long long)id);
    if (e)
        return web_db_fail(r, d, e);
    if (!c->threads) {
        db_runs_free(run, 1);
        return web_error(r, 404, "this server reads no trace files for threads");
    }
    char err[800] = "";
    char *arr = NULL;
    size_t len = 0;
    int f = c->threads(run->trace, run->content_hash, (uint64_t)run->trace_bytes, &arr, &len,
                       err, sizeof(err));
    int rc;
    if (f == 1) /* the flame graph's answer, word for word: it tells nothing about the path */
        rc = web_error(r, 410, "run %lld's trace file %s is gone: the trace file this run was "
                               "stored from is no longer the same file (moved, replaced or "
                               "unreadable): record it again and db add it; the run's figures "
                               "are still in the database",
                       (long long)id, run->trace);
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
    db_runs_free(run, 1);
    return rc;
}
