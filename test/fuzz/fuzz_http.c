/* libFuzzer target: what the web server makes of a request's path and query (server/): the
 * input is "PATH?QUERY" as a client sends it; the query is split and unescaped as
 * libmicrohttpd does it (its MHD_http_unescape), then the API's router and views (web_api)
 * and the pages' router (web_page_of) answer it from a small sound database made at the
 * start (two runs of two programs). Holds them to: no crash, leak or sanitizer report; every
 * answer a whole JSON document with a status the API documents; never 500 (the database is
 * sound: a 500 is a bug of the server's). Seeds: seeds.sh http. */
#include <microhttpd.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db_ingest.h"
#include "db_schema.h"
#include "web.h"

static struct db db;
static int ready;

static void add_run(int k)
{
    static const struct db_module_in mods[2][1] = {{{"/bin/demo", 1, 3, NULL}},
                                                   {{"/bin/other", 2, 2, NULL}}};
    const struct db_func_in funcs[3] = {
        {"main", "main", "demo.c", k ? "/bin/other" : "/bin/demo", 3, 1, 900, 100, "traced", 0},
        {"work", "work", "demo.c", k ? "/bin/other" : "/bin/demo", 9, 10 + (uint64_t)k, 800, 800, "traced",
         k}, /* the second run's work was demoted by a budget's governor (schema 7) */
        {"<b>&\"x'", "_Z1xv", "x.c", "/bin/demo", 1, 2, 5, 5, "traced", 0}};
    const struct db_edge_in edges[2] = {{0, 1, 10}, {0, 2, 2}};
    const struct db_tag tags[2] = {{"input", k ? "2" : "1"}, {"build", "O2"}};
    char hash[33];
    snprintf(hash, sizeof(hash), "%032x", k + 1);
    struct db_run_in r = {.content_hash = hash, .trace = "/nonexistent/run.ptc",
                          .trace_bytes = 100, .program = k ? "other" : "demo",
                          .program_path = k ? "/bin/other" : "/bin/demo", .command = "demo 1",
                          .host = "h", .added_ns = 1000 + k, .has_start = 1,
                          .start_ns = 500 + k, .backend = "soft", .time_unit = "ns",
                          .complete = 1, .timed = 1, .total_time = 1000, .tags = tags,
                          .ntags = 2, .mods = mods[k], .nmods = 1, .funcs = funcs,
                          .nfuncs = k ? 2 : 3, .edges = edges, .nedges = k ? 1 : 2,
                          .demoted_functions = (uint64_t)k, .budget_demotions = (uint64_t)k};
    int64_t id, existing;
    if (db_ingest(&db, &r, &id, &existing))
        abort();
}

static void setup(void)
{
    char dir[] = "/tmp/ptcall-fuzz-http-XXXXXX";
    if (!mkdtemp(dir))
        abort();
    char path[256];
    snprintf(path, sizeof(path), "%s/runs.db", dir);
    if (db_open(&db, path, DB_WRITE))
        abort();
    add_run(0);
    add_run(1);
    db_close(&db);
    if (db_open(&db, path, DB_READ)) /* as the server reads it */
        abort();
    ready = 1;
}

static void check(const struct web_resp *r)
{
    int st = r->status;
    if ((st != 200 && st != 400 && st != 404 && st != 409 && st != 410) || !r->body ||
        r->len < 3 || r->body[0] != '{' || r->body[r->len - 1] != '\n')
        __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!ready)
        setup();
    if (size > 4096)
        return 0;
    char *buf = malloc(size + 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = 0; /* MHD hands C strings: a path ends at its first NUL */
    char *q = strchr(buf, '?');
    if (q)
        *q++ = 0;
    MHD_http_unescape(buf);
    struct web_args a;
    memset(&a, 0, sizeof(a));
    for (char *p = q; p && *p;) {
        char *amp = strchr(p, '&');
        if (amp)
            *amp = 0;
        char *eq = strchr(p, '=');
        if (eq)
            *eq++ = 0;
        MHD_http_unescape(p);
        if (eq)
            MHD_http_unescape(eq);
        if (a.n < WEB_MAX_ARGS) {
            a.k[a.n] = p;
            a.v[a.n] = eq ? eq : "";
            a.n++;
        } else {
            a.dropped++;
        }
        p = amp ? amp + 1 : NULL;
    }
    struct web_ctx c = {.where = "fuzz", .flame = NULL, .cache = NULL};
    struct web_resp r = {0};
    if (!strncmp(buf, "/api/", 5)) {
        if (!web_api(&c, &db, buf, &a, &r))
            check(&r);
    } else {
        enum web_page kind;
        int rc = web_page_of(&db, buf, &a, &kind, &r);
        if (rc == 1)
            check(&r);
        else if (rc == 0 && (kind == WP_NONE || r.body))
            __builtin_trap(); /* a page, or an error: never both or neither */
    }
    web_resp_free(&r);
    free(buf);
    return 0;
}
