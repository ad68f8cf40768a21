/* GET /api/v1/runs: the runs the filters choose, with their tags and trace quality. */
#include "web_internal.h"

int web_api_runs(const struct web_ctx *c, struct db *d, const struct web_args *a,
                 struct web_resp *r)
{
    struct db_ids ids;
    int s = web_select(d, a, &ids, r);
    if (s)
        return s < 0 ? -1 : 0;
    struct db_run *runs = NULL;
    int e = db_runs_get(d, &ids, 0, &runs);
    if (e) {
        db_ids_free(&ids);
        return web_db_fail(r, d, e);
    }
    struct sbuf b;
    sb_init(&b);
    web_json_head(&b, c, "runs");
    sb_puts(&b, ", \"runs\": [");
    for (size_t i = 0; i < ids.n; i++) {
        sb_puts(&b, i ? ",\n  " : "\n  ");
        web_json_run(&b, &runs[i]);
    }
    sb_puts(&b, "]");
    db_runs_free(runs, ids.n);
    db_ids_free(&ids);
    return web_json_done(r, &b);
}
