/* The web views of the runs database (docs/web.md): one JSON API, versioned, behind every
 * page, and the pages themselves (HTML shells that the script web/app/app.js fills from the
 * API). The same functions answer HTTP requests (web_http.c, `ptcall serve`) and write the
 * self-contained report (`ptcall html`), so both show the same figures. */
#ifndef PTCALL_WEB_H
#define PTCALL_WEB_H

#include <stddef.h>
#include <stdint.h>

#include "db_backend.h"
#include "sbuf.h"

#define WEB_API_VERSION 1
#define WEB_MAX_ARGS 32

/* A request's query arguments, in order (a name may repeat: tag=a=1&tag=b). */
struct web_args {
    int n;
    const char *k[WEB_MAX_ARGS], *v[WEB_MAX_ARGS];
    int dropped; /* arguments past WEB_MAX_ARGS (the request is refused: none is ignored) */
};
const char *web_arg(const struct web_args *a, const char *key); /* the last one, or NULL */

/* The flame graph of a stored run's trace file as SVG (outputs/svg.c through the tools'
 * decoding, which the server does not call itself: tools/ hands this in), made only from the
 * file the run was stored from (its content hash and size). 0 with *svg malloc'ed, 1 when
 * the file at trace is not that one (missing, replaced, unreadable: one message for all), -1
 * on another failure (err says why). */
typedef int (*web_flame_fn)(const char *trace, const char *content_hash, uint64_t bytes,
                            char **svg, size_t *len, char *err, size_t n);

/* The threads of a stored run's trace file as a JSON array (docs/web.md, Threads), made only
 * from the file the run was stored from, as web_flame_fn: 0 with *json malloc'ed, 1 when the
 * file is not that one, -1 on another failure. */
typedef int (*web_threads_fn)(const char *trace, const char *content_hash, uint64_t bytes,
                              char **json, size_t *len, char *err, size_t n);
/* The flame trees of the same file as JSON (outputs/flametree.c, docs/web.md "Flame tree"):
 * thread is "all", a TID, or NULL (every tree); weight "calls", "self" or "total". The returns
 * of web_flame_fn, and 2 when the trace has no times (weight other than calls), 3 when no
 * thread of the trace is TID. */
typedef int (*web_flame_json_fn)(const char *trace, const char *content_hash, uint64_t bytes,
                                 const char *thread, const char *weight, char **json,
                                 size_t *len, char *err, size_t n);
/* A run's timeline (docs/web.md, /api/v1/runs/ID/timeline): what the tools' decoding of the
 * trace answers for a window (kind WEB_TL_WINDOW: arguments t0, t1, px, threads) or one call
 * (WEB_TL_CALL: thread, t, depth), as a JSON document in *json; the same checks of the file
 * as web_flame_fn; tl_ctx is web_ctx's timeline_ctx. 0, 1 (not the run's file), 2 (bad arguments: err says which), 3 (no such
 * call), or -1. */
enum { WEB_TL_WINDOW = 0, WEB_TL_CALL = 1 };
typedef int (*web_timeline_fn)(void *tl_ctx, const char *trace, const char *content_hash, uint64_t bytes,
                               int kind, const struct web_args *a, char **json, size_t *len,
                               char *err, size_t n);

/* Whether the file at trace is the one a run was stored from (a regular file of that size
 * and content hash, as web_flame_fn checks it): 1 or 0. The server asks before it answers
 * from its cache, which keeps what was made from that file only (web_cache.h). */
typedef int (*web_trace_same_fn)(const char *trace, const char *content_hash, uint64_t bytes);

struct web_cache;

struct web_ctx {
    const char *where;        /* the database, for the answers (no password) */
    web_flame_fn flame;       /* NULL: no flame graphs */
    struct web_cache *cache;  /* answers kept and computed once (web_cache.h; NULL: none) */
    web_threads_fn threads;   /* NULL: no thread tables */
    web_flame_json_fn flame_json; /* NULL: no flame trees */
    web_timeline_fn timeline; /* NULL: no timelines */
    void *timeline_ctx;       /* its first argument (the tools' cache of open indexes) */
    web_trace_same_fn trace_same; /* NULL: nothing made from a trace file is cached */
};

struct web_resp {
    int status;               /* 200, 400, 404, 410, 500 */
    const char *type;         /* Content-Type */
    char *body;               /* malloc'ed */
    size_t len;
    char message[512];        /* an error's message as text (web_error), for error pages */
};
void web_resp_free(struct web_resp *r);

/* Answers GET path?args from d: an API document (/api/v1/...) or a flame graph
 * (/api/v1/runs/ID/flame.svg). Returns 0 (with *r filled, an error document included) or
 * -1 when out of memory. */
int web_api(const struct web_ctx *c, struct db *d, const char *path, const struct web_args *a,
            struct web_resp *r);

/* What a page shows: its kind and the object it names; 0, or an error response in *r
 * (404 for an unknown run or function). */
enum web_page { WP_RUNS, WP_HOT, WP_FUNCTION, WP_RUN, WP_DIFF,
                WP_CAMPAIGNS, WP_CAMPAIGN, WP_CAMPAIGN_COMPARE, /* web_page_campaign.c */
                WP_TIMELINE, /* /runs/ID/timeline (web/app/timeline.js) */
                WP_NONE };
int web_page_of(struct db *d, const char *path, const struct web_args *a, enum web_page *kind,
                struct web_resp *r);

/* The Content-Security-Policy of every answer: nothing but ptcall's own script and styles,
 * no inline script, no plugins, no framing, no requests elsewhere. 'wasm-unsafe-eval' lets
 * the call graph's Graphviz (WebAssembly, served from 'self') compile; it allows no eval. */
/* d3-flame-graph 5.0.0 (web/package-lock.json) adds its own styles as a <style> element when it
 * loads: that one text (its SHA-256) may apply, nothing else inline. The flame test fails on
 * the console error if another version changes it. */
#define WEB_CSP_FLAMEGRAPH_STYLE "'sha256-PjPkXjWPssRCMzB6p5SnF25xrwIH7ThbVHWlE+SG1DE='"
#define WEB_CSP                                                                                 \
    "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' "               \
    WEB_CSP_FLAMEGRAPH_STYLE "; img-src 'self' data:; "                                          \
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

/* Errors as documents: {"format_version": 1, "status": S, "error": "what"}. */
int web_error(struct web_resp *r, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A finished JSON document into r (status 200), or -1 when b ran out of memory. */
int web_json_done(struct web_resp *r, struct sbuf *b);

#endif
