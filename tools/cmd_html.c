/* ptcall html: the web page's views of a few runs as one self-contained HTML file. The
 * traces are stored in a temporary runs database exactly as `ptcall db add` stores them,
 * the same API views as `ptcall serve` answer every page's questions, and the answers, the
 * script and the chart library go into the file (docs/web.md). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ptc_outfile.h"
#include "cli_common.h"
#include "commands.h"
#include "db_cli.h"
#include "db_collect.h"
#include "db_conn.h"
#include "db_hash.h"
#include "db_ingest.h"
#include "db_query.h"
#include "db_schema.h"
#include "options.h"
#include "sbuf.h"
#include "web.h"
#include "web_flame.h"
#include "web_threads.h"
#include "web_page.h"
#include "web_static.h"

#define FUNCTION_PAGES 500 /* the hottest functions get a page of their own in the file */
#define DIFF_ALL_PAIRS 6   /* up to this many runs, every pair is compared; else neighbours */

/* Stores one trace in d as db add does. 0, or 1 after saying why not. */
static int add_trace(struct db *d, const char *path, const struct db_tag *tags, size_t ntags)
{
    struct db_hash *h = db_hash_start(path);
    if (!h)
        return cli_fail("html", "out of memory", cli_advice(PTC_E_NOMEM));
    struct cli_args a = {.cmd = "html", .path = path, .threads = 1};
    struct ptc_session *s = cli_decode(&a, NULL, NULL, NULL, NULL);
    char hex[DB_HASH_HEX], err[600];
    uint64_t bytes = 0;
    int hrc = db_hash_finish(h, hex, &bytes, err, sizeof(err));
    if (!s)
        return 1;
    if (hrc) {
        ptc_session_free(s);
        return cli_fail("html", err, "check the file and its permissions");
    }
    struct db_collected c;
    memset(&c, 0, sizeof(c));
    if (db_collect(&c, s, path, hex, bytes)) {
        ptc_session_free(s);
        return cli_fail("html", "out of memory", cli_advice(PTC_E_NOMEM));
    }
    c.in.tags = tags;
    c.in.ntags = ntags;
    int64_t id = 0, existing = 0;
    int e = db_ingest(d, &c.in, &id, &existing);
    db_collected_free(&c);
    ptc_session_free(s);
    if (e == -DB_E_CONSTRAINT) {
        char what[700];
        snprintf(what, sizeof(what), "%s is the same trace as one given before it", path);
        return cli_fail("html", what, "give each trace once");
    }
    if (e)
        return cli_fail("html", d->err, "check the temporary directory ($TMPDIR)");
    return 0;
}

/* The answer to path?args as "PATH": DOCUMENT in the data object. */
static int put_answer(struct sbuf *b, const struct web_ctx *c, struct db *d, const char *key,
                      const char *path, const struct web_args *a, int *first)
{
    struct web_resp r = {0};
    if (web_api(c, d, path, a, &r))
        return -1;
    sb_puts(b, *first ? "\n" : ",\n");
    *first = 0;
    sb_json_str(b, key);
    sb_puts(b, ": ");
    /* a document's final newline is whitespace, and every string in it came through
     * sb_json_str: no "<" that could end the script block */
    sb_add(b, r.body, r.len);
    web_resp_free(&r);
    return 0;
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void put_base64(struct sbuf *b, const unsigned char *p, size_t n)
{
    char q[4];
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0) |
                     (i + 2 < n ? p[i + 2] : 0);
        q[0] = b64[v >> 18];
        q[1] = b64[(v >> 12) & 63];
        q[2] = i + 1 < n ? b64[(v >> 6) & 63] : '=';
        q[3] = i + 2 < n ? b64[v & 63] : '=';
        sb_add(b, q, 4);
    }
}

/* A run's flame graph as {"svg_data_uri": "data:image/svg+xml;base64,..."}: an <img> shows
 * it, and an image never runs script. */
static void put_flame(struct sbuf *b, int64_t id, const struct db_run *run)
{
    char *svg = NULL, err[800];
    size_t len = 0;
    int rc = web_flame_svg(run->trace, run->content_hash, (uint64_t)run->trace_bytes, &svg, &len,
                           err, sizeof(err));
    sb_printf(b, ",\n\"/api/v%d/runs/%lld/flame.svg\": ", WEB_API_VERSION, (long long)id);
    if (rc) {
        sb_puts(b, "{\"status\": 410, \"error\": ");
        sb_json_str(b, err);
        sb_puts(b, "}");
        return;
    }
    sb_puts(b, "{\"svg_data_uri\": \"data:image/svg+xml;base64,");
    put_base64(b, (const unsigned char *)svg, len);
    sb_puts(b, "\"}");
    free(svg);
}

struct fids {
    int64_t v[FUNCTION_PAGES];
    size_t n;
};

/* The function ids of the hot answer (its "id" fields at the start of each function). */
static void hot_ids(const char *body, struct fids *f)
{
    const char *p = body;
    while (f->n < FUNCTION_PAGES && (p = strstr(p, "{\"rank\": "))) {
        const char *q = strstr(p, "\"id\": ");
        if (!q)
            break;
        f->v[f->n++] = strtoll(q + 6, NULL, 10);
        p = q;
    }
}

static int build(struct db *d, const struct web_static *st, const char *out, size_t ntraces)
{
    struct web_ctx c = {.where = "ptcall html", .flame = NULL, .flame_json = web_flame_json,
                        .cache = NULL, .threads = web_threads_json};
    struct sbuf data;
    sb_init(&data);
    sb_puts(&data, "{");
    int first = 1;
    struct web_args none = {0}, all = {.n = 1, .k = {"top"}, .v = {"0"}};
    int bad = put_answer(&data, &c, d, "/api/v1/runs", "/api/v1/runs", &none, &first);
    /* the hot answer: every function, which is what the page's table lists in the file */
    struct web_resp hot = {0};
    if (web_api(&c, d, "/api/v1/hot", &all, &hot)) {
        sb_free(&data);
        return cli_fail("html", "out of memory", cli_advice(PTC_E_NOMEM));
    }
    sb_puts(&data, ",\n\"/api/v1/hot\": ");
    sb_add(&data, hot.body, hot.len);
    struct fids f = {.n = 0};
    hot_ids(hot.body, &f);
    web_resp_free(&hot);
    struct db_filter flt;
    memset(&flt, 0, sizeof(flt));
    struct db_ids ids;
    struct db_run *runs = NULL;
    if (db_select(d, &flt, &ids) || db_runs_get(d, &ids, 0, &runs)) {
        sb_free(&data);
        return cli_fail("html", d->err, "report this as a ptcall bug");
    }
    /* the hot page shows one program by default (the picker's): each program's answer */
    for (size_t i = 0; i < ids.n; i++) {
        size_t k = 0;
        while (k < i && strcmp(runs[k].program, runs[i].program))
            k++;
        if (k < i)
            continue;
        struct sbuf key;
        sb_init(&key);
        sb_printf(&key, "/api/v%d/hot?program=%s", WEB_API_VERSION, runs[i].program);
        struct web_args pa = {.n = 2, .k = {"program", "top"}, .v = {runs[i].program, "0"}};
        bad |= key.oom ? -1 : put_answer(&data, &c, d, key.p, "/api/v1/hot", &pa, &first);
        sb_free(&key);
    }
    char path[128];
    for (size_t i = 0; i < ids.n; i++) {
        snprintf(path, sizeof(path), "/api/v1/runs/%lld", (long long)ids.v[i]);
        bad |= put_answer(&data, &c, d, path, path, &none, &first);
        put_flame(&data, ids.v[i], &runs[i]);
        /* the call graph (the page lays it out with the inlined Graphviz; focus is worked
         * out in the page from this answer) */
        snprintf(path, sizeof(path), "/api/v1/runs/%lld/callgraph", (long long)ids.v[i]);
        bad |= put_answer(&data, &c, d, path, path, &none, &first);
        snprintf(path, sizeof(path), "/api/v1/runs/%lld/threads", (long long)ids.v[i]);
        bad |= put_answer(&data, &c, d, path, path, &none, &first);
        /* the interactive flame graph's trees (web/app/flame.js): every thread's and all
         * threads', one answer per weight */
        static const char *const weights[3] = {"calls", "self", "total"};
        for (int w = 0; w < 3; w++) {
            char key[160];
            snprintf(path, sizeof(path), "/api/v1/runs/%lld/flame.json", (long long)ids.v[i]);
            snprintf(key, sizeof(key), "%s?weight=%s", path, weights[w]);
            struct web_args fa = {.n = 2, .k = {"thread", "weight"}, .v = {"every", weights[w]}};
            bad |= put_answer(&data, &c, d, key, path, &fa, &first);
        }
    }
    for (size_t i = 0; i < f.n; i++) {
        snprintf(path, sizeof(path), "/api/v1/functions/%lld", (long long)f.v[i]);
        bad |= put_answer(&data, &c, d, path, path, &none, &first);
    }
    for (size_t i = 0; i < ids.n; i++) {
        for (size_t j = 0; j < ids.n; j++) {
            if (i == j || (ids.n > DIFF_ALL_PAIRS && j != i + 1))
                continue;
            char key[128], base[24], nw[24];
            snprintf(base, sizeof(base), "%lld", (long long)ids.v[i]);
            snprintf(nw, sizeof(nw), "%lld", (long long)ids.v[j]);
            snprintf(key, sizeof(key), "/api/v1/diff?base=%s&new=%s", base, nw);
            struct web_args a = {.n = 2, .k = {"base", "new"}, .v = {base, nw}};
            bad |= put_answer(&data, &c, d, key, "/api/v1/diff", &a, &first);
        }
    }
    sb_puts(&data, "}");
    db_runs_free(runs, ids.n);
    db_ids_free(&ids);
    if (bad) {
        sb_free(&data);
        return cli_fail("html", "out of memory", cli_advice(PTC_E_NOMEM));
    }
    size_t dlen;
    char *dj = sb_take(&data, &dlen);
    unsigned char rnd[16];
    char nonce[33];
    /* the nonce only has to be unguessable to whoever named the functions */
    if (!dj || getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
        free(dj);
        return cli_fail("html", "out of memory or no random bytes", cli_advice(PTC_E_NOMEM));
    }
    for (int i = 0; i < 16; i++)
        sprintf(nonce + 2 * i, "%02x", rnd[i]);
    struct sbuf page;
    sb_init(&page);
    web_page_inline(&page, st, nonce, dj, dlen);
    free(dj);
    size_t plen;
    char *html = sb_take(&page, &plen);
    if (!html)
        return cli_fail("html", "out of memory", cli_advice(PTC_E_NOMEM));
    /* written whole or not at all, and never over a device (common/ptc_outfile.h) */
    struct ptc_outfile of;
    int e = ptc_outfile_open(&of, out, 0644);
    if (!e)
        e = ptc_outfile_write(&of, html, plen);
    free(html);
    if (!e)
        e = ptc_outfile_commit(&of);
    else
        ptc_outfile_abort(&of);
    if (e) {
        char what[4300];
        snprintf(what, sizeof(what), "cannot write %s: %s", out, strerror(-e));
        return cli_fail("html", what, "check the directory and its permissions");
    }
    printf("ptcall html: %s (%zu run%s; open it in a browser, no server needed)\n", out,
           ntraces, ntraces == 1 ? "" : "s");
    return 0;
}

static int html_with_tags(const struct cli_values *v, const char *exe, char *dir, size_t dirn,
                          const struct db_tag *tags);

static int run_html(const struct cli_values *v, const char *exe)
{
    if (!v->npos)
        return cli_usage_error(CMD_HTML, "no trace file given");
    char dir[4200], err[1200];
    struct db_tag *tags = NULL;
    char **names = NULL;
    int te = db_cli_tags(v->db.tags.v, v->db.tags.n, &tags, &names, err, sizeof(err));
    if (te) {
        db_cli_tags_free(tags, names, v->db.tags.n);
        return te == -1 ? cli_usage_error(CMD_HTML, "%s", err)
                        : cli_fail("html", "out of memory", cli_advice(PTC_E_NOMEM));
    }
    int rc = html_with_tags(v, exe, dir, sizeof(dir), tags);
    db_cli_tags_free(tags, names, v->db.tags.n);
    return rc;
}

static int html_with_tags(const struct cli_values *v, const char *exe, char *dir, size_t dirn,
                          const struct db_tag *tags)
{
    char err[1200];
    web_static_dir(exe, dir, dirn);
    struct web_static st;
    if (web_static_load(dir, &st, err, sizeof(err)))
        return cli_fail("html", err, "reinstall ptcall, or build it (its data directory holds "
                                     "the page's script); $PTCALL_WEB_DIR names another");
    const char *tmpdir = getenv("TMPDIR");
    char dbpath[4200];
    snprintf(dbpath, sizeof(dbpath), "%s/ptcall-html-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    int fd = mkstemp(dbpath);
    if (fd < 0) {
        web_static_free(&st);
        char what[4300];
        snprintf(what, sizeof(what), "cannot create a temporary database %s: %s", dbpath,
                 strerror(errno));
        return cli_fail("html", what, "check $TMPDIR");
    }
    close(fd);
    struct db d;
    int rc = 0, e = db_open(&d, dbpath, DB_WRITE);
    if (e) {
        rc = cli_fail("html", d.err, "check $TMPDIR");
    } else {
        for (int i = 0; i < v->npos && !rc; i++)
            rc = add_trace(&d, v->pos[i], tags, (size_t)v->db.tags.n);
        if (!rc)
            rc = build(&d, &st, v->output, (size_t)v->npos);
        db_close(&d);
    }
    /* the temporary database and SQLite's journal files beside it */
    char side[4300];
    unlink(dbpath);
    snprintf(side, sizeof(side), "%s-wal", dbpath);
    unlink(side);
    snprintf(side, sizeof(side), "%s-shm", dbpath);
    unlink(side);
    web_static_free(&st);
    return rc;
}

int cmd_html(int argc, char **argv)
{
    struct cli_values v;
    int r = cli_parse(CMD_HTML, argc, argv, &v, 0);
    if (r != CLI_GO)
        return r;
    r = run_html(&v, argv[0]);
    cli_values_free(&v);
    return r;
}
