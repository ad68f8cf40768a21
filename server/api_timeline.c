/* GET /api/v1/runs/ID/timeline?t0=&t1=&px=&threads= and /api/v1/runs/ID/timeline/call?thread=
 * &t=&depth= (docs/web.md): a run's timeline, decoded from its trace file by the tools'
 * web_timeline_fn (the server does not decode), after the flame graph's check of the file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "web_internal.h"

int web_api_timeline(const struct web_ctx *c, struct db *d, int64_t id, int call,
                     const struct web_args *a, struct web_resp *r)
{
    struct db_run *run;
    int s = web_run_get(d, id, &run, r);
    if (s)
        return s < 0 ? -1 : 0;
    if (!c->timeline) {
        db_runs_free(run, 1);
        return web_error(r, 404, "this server makes no timelines (ptcall html's report has none: "
                                 "use ptcall serve)");
    }
    char err[800] = "";
    char *json = NULL;
    size_t len = 0;
    int f = c->timeline(c->timeline_ctx, run->trace, run->content_hash, (uint64_t)run->trace_bytes,
                        call ? WEB_TL_CALL : WEB_TL_WINDOW, a, &json, &len, err, sizeof(err));
    int rc;
    if (f == 1)
        rc = web_run_gone(r, id, run->trace);
    else if (f == 2)
        rc = web_error(r, 400, "run %lld's timeline: %s", (long long)id, err);
    else if (f == 3)
        rc = web_error(r, 404, "run %lld's timeline: %s", (long long)id, err);
    else if (f)
        rc = web_error(r, 500, "run %lld's timeline: %s", (long long)id, err);
    else {
        web_resp_free(r);
        r->status = 200;
        r->type = "application/json; charset=utf-8";
        r->body = json;
        r->len = len;
        rc = 0;
    }
    db_runs_free(run, 1);
    return rc;
}
