/* libFuzzer target: a runs database file (SQLite) as db/ reads it and the web views show it.
 * The input is written to a file and opened as `ptcall db list/show/query` and `ptcall serve`
 * open one (db_open(DB_READ): the schema version checked, nothing written); then every
 * reading path runs over what it holds: the runs with their tags and modules, each run's
 * functions and edges, the hot-function statistics with medians, a function run by run and
 * its callers and callees, tags, the generation; and the API views over it. Holds them to:
 * no crash, leak or sanitizer report; every failure a one-line message; every API answer a
 * whole document with a status the API documents. Seeds: test/fuzz/db_seeds.py. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db_query.h"
#include "db_query_web.h"
#include "db_schema.h"
#include "web.h"

static char path[4096];

static void one_line(const struct db *d, int e)
{
    if (!e || e == -DB_E_STOP)
        return;
    /* every failure says what, in one line */
    if (!d->err[0] || strchr(d->err, '\n'))
        __builtin_trap();
}

static void answer(struct db *d, const char *p, const struct web_args *a)
{
    struct web_ctx c = {.where = "fuzz", .flame = NULL, .cache = NULL};
    struct web_resp r = {0};
    if (web_api(&c, d, p, a, &r)) {
        web_resp_free(&r);
        return; /* out of memory */
    }
    int st = r.status;
    if ((st != 200 && st != 400 && st != 404 && st != 409 && st != 410 && st != 500) || !r.body ||
        r.len < 3 || r.body[0] != '{' || r.body[r.len - 1] != '\n')
        __builtin_trap();
    web_resp_free(&r);
}

static void read_all(struct db *d)
{
    struct db_filter f;
    memset(&f, 0, sizeof(f));
    struct db_ids ids = {NULL, 0};
    int e = db_select(d, &f, &ids);
    one_line(d, e);
    if (e)
        return;
    struct db_run *runs = NULL;
    e = db_runs_get(d, &ids, 1, &runs);
    one_line(d, e);
    if (!e)
        db_runs_free(runs, ids.n);
    int64_t fids[4] = {1, 2, 3, 0};
    for (size_t i = 0; i < ids.n && i < 4; i++) {
        struct db_func_out *fn = NULL;
        size_t n = 0;
        e = db_run_functions(d, ids.v[i], &fn, &n);
        one_line(d, e);
        if (!e && n)
            fids[3] = fn[0].id;
        if (!e)
            db_funcs_free(fn, n);
        struct db_edge_out *ed = NULL;
        e = db_run_edges(d, ids.v[i], &ed, &n);
        one_line(d, e);
        free(ed);
    }
    struct db_hot h;
    memset(&h, 0, sizeof(h));
    struct db_hot_ask ask = {DB_STAT_SUM, -1, SIZE_MAX};
    e = db_hot(d, &ids, &ask, &h);
    one_line(d, e);
    db_hot_free(&h);
    memset(&h, 0, sizeof(h));
    struct db_hot_ask fast = {DB_STAT_STDDEV, 0, 0};
    e = db_hot(d, &ids, &fast, &h);
    one_line(d, e);
    db_hot_free(&h);
    for (int k = 0; k < 4; k++) {
        struct db_func_out fo;
        int found = 0;
        e = db_wfunction(d, fids[k], &fo, &found);
        one_line(d, e);
        if (!e && found)
            db_wfunction_free(&fo);
        struct db_wpoint *pt = NULL;
        size_t n = 0;
        e = db_wfunction_runs(d, fids[k], &ids, &pt, &n);
        one_line(d, e);
        free(pt);
        for (int callers = 0; callers < 2; callers++) {
            struct db_wedge *we = NULL;
            e = db_wfunction_edges(d, fids[k], &ids, callers, &we, &n);
            one_line(d, e);
            if (!e)
                db_wedges_free(we, n);
        }
    }
    int found = 0;
    one_line(d, db_wtag_exists(d, "input", NULL, &found));
    int64_t count = 0, max_id = 0;
    one_line(d, db_wgeneration(d, &count, &max_id));
    struct web_args none = {0};
    answer(d, "/api/v1/runs", &none);
    answer(d, "/api/v1/hot", &none);
    char p[96];
    if (ids.n) {
        snprintf(p, sizeof(p), "/api/v1/runs/%lld", (long long)ids.v[0]);
        answer(d, p, &none);
        /* the call graph, whole and focused on a function (api_callgraph.c) */
        snprintf(p, sizeof(p), "/api/v1/runs/%lld/callgraph", (long long)ids.v[0]);
        answer(d, p, &none);
        char fb[24];
        snprintf(fb, sizeof(fb), "%lld", (long long)fids[3]);
        struct web_args fa = {.n = 2, .k = {"focus", "min_share"}, .v = {fb, "0"}};
        answer(d, p, &fa);
        char b[24], n2[24];
        snprintf(b, sizeof(b), "%lld", (long long)ids.v[0]);
        snprintf(n2, sizeof(n2), "%lld", (long long)ids.v[ids.n - 1]);
        struct web_args a = {.n = 3, .k = {"base", "new", "allow_different"}, .v = {b, n2, "1"}};
        answer(d, "/api/v1/diff", &a);
    }
    snprintf(p, sizeof(p), "/api/v1/functions/%lld", (long long)fids[3]);
    answer(d, p, &none);
    db_ids_free(&ids);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!path[0]) {
        char dir[] = "/tmp/ptcall-fuzz-db-XXXXXX";
        if (!mkdtemp(dir))
            abort();
        snprintf(path, sizeof(path), "%s/runs.db", dir);
    }
    char side[4200];
    snprintf(side, sizeof(side), "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof(side), "%s-shm", path);
    unlink(side);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f))
        abort();
    struct db d;
    int e = db_open(&d, path, DB_READ);
    one_line(&d, e);
    if (e)
        return 0;
    read_all(&d);
    db_close(&d);
    return 0;
}
