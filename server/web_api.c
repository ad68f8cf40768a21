/* The API's router and the pages' objects (web.h): /api/v1/... paths to their views, page
 * paths to what they show (a page naming an unknown run or function is a 404 too). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_query_web.h"
#include "web_campaign.h"
#include "web_internal.h"
#include "web_page_campaign.h"

/* "/PREFIX/ID[/REST]": the id (0 with a 400 response, -1 no memory) and where REST starts. */
static int64_t id_after(const char *path, size_t prefix, const char **rest, struct web_resp *r)
{
    char num[32];
    const char *s = path + prefix, *slash = strchr(s, '/');
    size_t n = slash ? (size_t)(slash - s) : strlen(s);
    snprintf(num, sizeof(num), "%.*s", (int)(n < sizeof(num) ? n : sizeof(num) - 1), s);
    *rest = s + n;
    return web_id_arg(num, "run or function id", r);
}

int web_api(const struct web_ctx *c, struct db *d, const char *path, const struct web_args *a,
            struct web_resp *r)
{
    const char *rest;
    int64_t id;
    if (!strcmp(path, "/api/v1/runs") || !strcmp(path, "/api/v1/runs/"))
        return web_api_runs(c, d, a, r);
    if (!strcmp(path, "/api/v1/hot"))
        return web_api_hot(c, d, a, r);
    if (!strcmp(path, "/api/v1/diff"))
        return web_api_diff(c, d, a, r);
    if (!strncmp(path, "/api/v1/runs/", 13)) {
        if ((id = id_after(path, 13, &rest, r)) <= 0)
            return id < 0 ? -1 : 0;
        if (!*rest)
            return web_api_run(c, d, id, a, r);
        if (!strcmp(rest, "/flame.svg"))
            return web_api_flame(c, d, id, r);
        /* the call graph for a layout (api_callgraph.c) */
        if (!strcmp(rest, "/callgraph"))
            return web_api_callgraph(c, d, id, a, r);
        if (!strcmp(rest, "/threads")) /* api_threads.c */
            return web_api_threads(c, d, id, r);
        /* the flame graph's trees, per thread and all threads (issue 27 item 2) */
        if (!strcmp(rest, "/flame.json"))
            return web_api_flame_json(c, d, id, a, r);
        /* the timeline (api_timeline.c) */
        if (!strcmp(rest, "/timeline") || !strcmp(rest, "/timeline/call"))
            return web_api_timeline(c, d, id, rest[9] == '/', a, r);
    }
    if (!strncmp(path, "/api/v1/functions/", 18)) {
        if ((id = id_after(path, 18, &rest, r)) <= 0)
            return id < 0 ? -1 : 0;
        if (!*rest)
            return web_api_function(c, d, id, a, r);
    }
    /* campaigns (api_campaign*.c) */
    if (!strcmp(path, "/api/v1/campaigns") || !strcmp(path, "/api/v1/campaigns/"))
        return web_api_campaigns(c, d, a, r);
    if (!strcmp(path, "/api/v1/campaigns/compare"))
        return web_api_campaign_compare(c, d, a, r);
    if (!strncmp(path, "/api/v1/campaigns/", 18)) {
        if ((id = id_after(path, 18, &rest, r)) <= 0)
            return id < 0 ? -1 : 0;
        if (!*rest)
            return web_api_campaign(c, d, id, a, r);
    }
    if (!strncmp(path, "/api/", 5) && strncmp(path, "/api/v1/", 8))
        return web_error(r, 404, "this ptcall answers API version %d (/api/v%d/...)",
                         WEB_API_VERSION, WEB_API_VERSION);
    return web_error(r, 404, "no such page or API document: %s", path);
}

static int run_exists(struct db *d, int64_t id, struct web_resp *r)
{
    struct db_run *run = NULL;
    int64_t v[1] = {id};
    struct db_ids ids = {v, 1};
    int e = db_runs_get(d, &ids, 0, &run);
    if (e == -DB_E_STOP)
        return web_error(r, 404, "no run %lld in the database", (long long)id) ? -1 : 1;
    if (e)
        return web_db_fail(r, d, e) ? -1 : 1;
    db_runs_free(run, 1);
    return 0;
}

int web_page_of(struct db *d, const char *path, const struct web_args *a, enum web_page *kind,
                struct web_resp *r)
{
    const char *rest;
    int64_t id;
    *kind = WP_NONE;
    int cs = web_page_campaign(path, a, kind, r);
    if (cs != 2)
        return cs;
    if (!strcmp(path, "/") || !strcmp(path, "/runs") || !strcmp(path, "/hot")) {
        /* the runs these pages would choose: an unknown tag is a 404 here as in the API */
        struct db_ids ids;
        int s = web_select(d, a, &ids, r);
        if (s)
            return s;
        db_ids_free(&ids);
        *kind = strcmp(path, "/hot") ? WP_RUNS : WP_HOT;
        return 0;
    }
    if (!strcmp(path, "/diff")) {
        for (int i = 0; i < 2; i++) {
            const char *v = web_arg(a, i ? "new" : "base");
            if (!v) /* the page lets one choose the two runs */
                continue;
            if ((id = web_id_arg(v, "run id", r)) <= 0)
                return id < 0 ? -1 : 1;
            int s = run_exists(d, id, r);
            if (s)
                return s;
        }
        *kind = WP_DIFF;
        return 0;
    }
    if (!strncmp(path, "/runs/", 6)) {
        if ((id = id_after(path, 6, &rest, r)) <= 0)
            return id < 0 ? -1 : 1;
        int tl = !strcmp(rest, "/timeline"); /* the run's timeline page */
        int s = *rest && !tl ? 2 : run_exists(d, id, r);
        if (s == 2)
            return web_error(r, 404, "no such page: %s", path) ? -1 : 1;
        if (s)
            return s;
        *kind = tl ? WP_TIMELINE : WP_RUN;
        return 0;
    }
    if (!strncmp(path, "/functions/", 11)) {
        if ((id = id_after(path, 11, &rest, r)) <= 0)
            return id < 0 ? -1 : 1;
        if (*rest)
            return web_error(r, 404, "no such page: %s", path) ? -1 : 1;
        struct db_func_out f;
        int found = 0, e = db_wfunction(d, id, &f, &found);
        if (e)
            return web_db_fail(r, d, e) ? -1 : 1;
        if (!found)
            return web_error(r, 404, "no function %lld in the database", (long long)id) ? -1
                                                                                        : 1;
        db_wfunction_free(&f);
        *kind = WP_FUNCTION;
        return 0;
    }
    return web_error(r, 404, "no such page: %s", path) ? -1 : 1;
}
