/* The timeline of a stored run's trace (web_timeline.h): the 410 check of web_flame.c, the
 * index in the cache directory, and the JSON documents of docs/web.md. */
#include "web_timeline.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ptcall/decode.h"
#include "ptcall/timeline.h"
#include "sbuf.h"
#include "web_flame.h"
#include "web_tl_cache.h"

#define GONE "the trace file this run was stored from is no longer the same file (moved, " \
             "replaced or unreadable)"

static int mkdirs(char *path)
{
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        int e = mkdir(path, 0700) && errno != EEXIST;
        *p = '/';
        if (e)
            return -1;
    }
    return mkdir(path, 0700) && errno != EEXIST ? -1 : 0;
}

static int cache_dir(char *buf, size_t n)
{
    const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (x && *x == '/')
        snprintf(buf, n, "%s/ptcall/timeline", x);
    else if (home && *home == '/')
        snprintf(buf, n, "%s/.cache/ptcall/timeline", home);
    else
        return -1;
    return mkdirs(buf);
}

static int hex_ok(const char *h)
{
    size_t k = 0;
    for (; h[k]; k++)
        if (!strchr("0123456789abcdef", h[k]))
            return 0;
    return k >= 16 && k < 64;
}

/* The index of the run's trace, open; the trace checked to be the run's. The whole file is
 * hashed when the index is built (and whenever the trace changed after it was); later
 * requests check its size and that it was not modified since: the index is then kept open
 * in the cache (web_tl_cache.h) with the file's identity, else loaded from the cache
 * directory. *held: 1 when the index is the cache's (web_tl_cache_release), 0 when the
 * caller frees it. 0, 1 (gone), -1. */
static int open_index(struct web_tl_cache *cache, const char *trace, const char *hex,
                      uint64_t bytes, struct ptc_tl **x, int *held, int *fd, char *src,
                      size_t nsrc, char *err, size_t n)
{
    *x = NULL;
    *held = 0;
    char dir[4096], idx[4200];
    if (!hex_ok(hex) || cache_dir(dir, sizeof(dir))) {
        snprintf(err, n, "no cache directory for the timeline's index ($XDG_CACHE_HOME or "
                         "$HOME/.cache): %s", strerror(errno));
        return -1;
    }
    snprintf(idx, sizeof(idx), "%s/%s.tlx", dir, hex);
    *fd = open(trace, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat ts, is;
    if (*fd < 0 || fstat(*fd, &ts) || !S_ISREG(ts.st_mode) || (uint64_t)ts.st_size != bytes) {
        snprintf(err, n, GONE);
        return 1;
    }
    snprintf(src, nsrc, "/proc/self/fd/%d", *fd);
    if (access(src, R_OK))
        snprintf(src, nsrc, "%s", trace);
    if ((*x = web_tl_cache_get(cache, hex, &ts))) {
        *held = 1;
        return 0;
    }
    web_tl_cache_build_lock(cache); /* one builder: the index's temporary file is per process */
    if ((*x = web_tl_cache_get(cache, hex, &ts))) { /* another request loaded it meanwhile */
        web_tl_cache_build_unlock(cache);
        *held = 1;
        return 0;
    }
    int fresh = !stat(idx, &is) && (is.st_mtim.tv_sec > ts.st_mtim.tv_sec ||
                                    (is.st_mtim.tv_sec == ts.st_mtim.tv_sec &&
                                     is.st_mtim.tv_nsec > ts.st_mtim.tv_nsec));
    int rc = fresh ? ptc_tl_load(idx, x, err, n) : -1;
    if (rc && !web_trace_same_file(*fd, hex, bytes)) {
        web_tl_cache_build_unlock(cache);
        snprintf(err, n, GONE);
        return 1;
    }
    if (rc) { /* none, older than the trace, damaged or of another version: built again */
        rc = ptc_tl_build(src, idx, err, n);
        if (!rc)
            rc = ptc_tl_load(idx, x, err, n);
    }
    if (!rc)
        *held = !web_tl_cache_put(cache, hex, &ts, *x);
    web_tl_cache_build_unlock(cache);
    return rc ? -1 : 0;
}

static int u64_arg(const struct web_args *a, const char *k, uint64_t *v, int need, char *err,
                   size_t n)
{
    const char *s = web_arg(a, k);
    if (!s || !*s) {
        if (need)
            snprintf(err, n, "the argument %s is missing", k);
        return need ? -1 : 1;
    }
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (*end || errno || *s == '-') {
        snprintf(err, n, "%s=%.40s is not a whole number", k, s);
        return -1;
    }
    *v = x;
    return 0;
}

struct items {
    struct ptc_tl_item *it;
    size_t n, cap;
};

/* Items an answer holds at most (about 50 bytes of JSON each): its memory does not grow with
 * the trace's threads or depth; past it, the answer says how many it left out. */
#define MAX_ITEMS 300000

struct collect {
    struct items *per;      /* per thread */
    uint64_t total, dropped;
    uint8_t *used;          /* per function */
    uint32_t nfuncs;
};

static int collect(void *ctx, uint32_t thread, const struct ptc_tl_item *it)
{
    struct collect *c = ctx;
    struct items *v = &c->per[thread];
    if (c->total >= MAX_ITEMS) {
        c->dropped++;
        return 0;
    }
    c->total++;
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 256;
        struct ptc_tl_item *p = realloc(v->it, cap * sizeof(*p));
        if (!p)
            return -PTC_E_NOMEM;
        v->it = p;
        v->cap = cap;
    }
    v->it[v->n++] = *it;
    if (it->func < c->nfuncs)
        c->used[it->func] = 1;
    return 0;
}

static void func_json(struct sbuf *b, const struct ptc_tl *x, uint32_t id)
{
    const char *name, *file;
    uint32_t line;
    ptc_tl_func(x, id, &name, &file, &line);
    sb_puts(b, "{\"name\": ");
    sb_json_str(b, name);
    sb_puts(b, ", \"file\": ");
    sb_json_str(b, file);
    sb_printf(b, ", \"line\": %u", line);
    if (ptc_tl_func_blocking(x, id))
        sb_puts(b, ", \"blocking\": true");
    sb_puts(b, "}");
}

static int window_json(const struct ptc_tl *x, const char *src, uint64_t budget,
                       const struct web_args *a,
                       struct sbuf *b, char *err, size_t n)
{
    uint64_t t0, t1, px = 1200;
    ptc_tl_span(x, &t0, &t1);
    uint64_t span0 = t0, span1 = t1 > t0 ? t1 : t0 + 1;
    t1 = span1;
    if (u64_arg(a, "t0", &t0, 0, err, n) < 0 || u64_arg(a, "t1", &t1, 0, err, n) < 0 ||
        u64_arg(a, "px", &px, 0, err, n) < 0)
        return 2;
    if (t1 <= t0 || px < 1 || px > 100000) {
        snprintf(err, n, "a window needs t0 < t1 and px from 1 to 100000");
        return 2;
    }
    uint32_t nt = ptc_tl_num_threads(x);
    uint8_t *want = NULL;
    const char *ts = web_arg(a, "threads");
    if (ts && *ts) { /* thread indexes, comma-separated */
        want = calloc(nt ? nt : 1, 1);
        if (!want)
            return -1;
        for (const char *p = ts; *p;) {
            char *end;
            unsigned long k = strtoul(p, &end, 10);
            if (end == p || k >= nt || (*end && *end != ',')) {
                free(want);
                snprintf(err, n, "threads=%.60s: give thread indexes below %u, separated by "
                                 "commas", ts, nt);
                return 2;
            }
            want[k] = 1;
            p = *end ? end + 1 : end;
        }
    }
    struct collect c = {.nfuncs = ptc_tl_num_funcs(x)};
    c.per = calloc(nt ? nt : 1, sizeof(*c.per));
    c.used = calloc(c.nfuncs ? c.nfuncs : 1, 1);
    struct ptc_tl_query q = {.t0 = t0, .t1 = t1, .px = (uint32_t)px, .threads = want,
                             .decode_budget = budget};
    int summarised = 0, rc = -1;
    if (c.per && c.used)
        rc = ptc_tl_window(x, src, &q, collect, &c, &summarised, err, n) ? -1 : 0;
    if (!rc) {
        sb_printf(b, "{\"format_version\": 1, \"span\": [%" PRIu64 ", %" PRIu64 "], "
                     "\"t0\": %" PRIu64 ", \"t1\": %" PRIu64 ", \"px\": %" PRIu64
                     ", \"summarised\": %s, \"dropped\": %" PRIu64 ", \"processes\": [",
                  span0, span1, t0, t1, px, summarised ? "true" : "false", c.dropped);
        /* threads grouped by process, in the order of their first appearance */
        uint8_t *done = calloc(nt ? nt : 1, 1);
        int firstp = 1;
        for (uint32_t i = 0; done && i < nt; i++) {
            if (done[i])
                continue;
            struct ptc_tl_thread_info ti;
            ptc_tl_thread(x, i, &ti);
            sb_printf(b, "%s{\"pid\": %u, \"name\": ", firstp ? "" : ", ", ti.pid);
            firstp = 0;
            sb_json_str(b, ti.process);
            sb_puts(b, ", \"threads\": [");
            int firstt = 1;
            for (uint32_t j = i; j < nt; j++) {
                struct ptc_tl_thread_info tj;
                ptc_tl_thread(x, j, &tj);
                if (tj.pid != ti.pid || done[j])
                    continue;
                done[j] = 1;
                sb_printf(b, "%s{\"index\": %u, \"tid\": %u, \"name\": ", firstt ? "" : ", ", j,
                          tj.tid);
                firstt = 0;
                sb_json_str(b, tj.name);
                sb_printf(b, ", \"first\": %" PRIu64 ", \"last\": %" PRIu64 ", \"calls\": %"
                          PRIu64 ", \"shown\": %s, \"items\": [", tj.first, tj.last, tj.calls,
                          !want || want[j] ? "true" : "false");
                for (size_t k = 0; k < c.per[j].n; k++) {
                    const struct ptc_tl_item *it = &c.per[j].it[k];
                    sb_printf(b, "%s[%" PRIu64 ",%" PRIu64 ",%u,%u,%" PRIu64 ",%" PRIu64 ",%u]",
                              k ? "," : "", it->start, it->end, it->depth, it->func, it->count,
                              it->busy, it->flags);
                }
                sb_puts(b, "]}");
            }
            sb_puts(b, "]}");
        }
        free(done);
        sb_puts(b, "], \"functions\": {");
        int firstf = 1;
        for (uint32_t f = 0; f < c.nfuncs; f++) {
            if (!c.used[f])
                continue;
            sb_printf(b, "%s\"%u\": ", firstf ? "" : ", ", f);
            firstf = 0;
            func_json(b, x, f);
        }
        sb_puts(b, "}, \"marks\": [");
        const struct ptc_tl_mark *m = ptc_tl_marks(x);
        uint64_t nm = ptc_tl_num_marks(x), shown = 0;
        for (uint64_t k = 0; k < nm && shown < 10000; k++) {
            if (m[k].time < t0 || m[k].time >= t1 || (want && !want[m[k].thread]))
                continue;
            sb_printf(b, "%s{\"time\": %" PRIu64 ", \"thread\": %u, \"label\": ",
                      shown ? ", " : "", m[k].time, m[k].thread);
            sb_json_str(b, ptc_tl_mark_label(x, m[k].label));
            sb_puts(b, "}");
            shown++;
        }
        sb_puts(b, "]}\n");
    }
    for (uint32_t i = 0; c.per && i < nt; i++)
        free(c.per[i].it);
    free(c.per);
    free(c.used);
    free(want);
    return rc;
}

static int call_json(const struct ptc_tl *x, const char *src, uint64_t budget,
                     const struct web_args *a,
                     struct sbuf *b, char *err, size_t n)
{
    uint64_t th, t, depth;
    if (u64_arg(a, "thread", &th, 1, err, n) || u64_arg(a, "t", &t, 1, err, n) ||
        u64_arg(a, "depth", &depth, 1, err, n))
        return 2;
    if (depth > UINT32_MAX) {
        snprintf(err, n, "depth=%" PRIu64 " is too deep: give a call's depth on its track",
                 depth);
        return 2;
    }
    if (th >= ptc_tl_num_threads(x)) {
        snprintf(err, n, "thread=%" PRIu64 ": this trace has threads 0 to %u", th,
                 ptc_tl_num_threads(x) - 1);
        return 2;
    }
    struct ptc_tl_call *c = malloc(sizeof(*c));
    if (!c)
        return -1;
    int rc = ptc_tl_call_at(x, src, (uint32_t)th, t, (uint32_t)depth, budget, c, err, n);
    if (rc == 1) {
        snprintf(err, n, "no call at depth %" PRIu64 " of thread %" PRIu64 " at time %" PRIu64,
                 depth, th, t);
        free(c);
        return 3;
    }
    if (rc) {
        free(c);
        return -1;
    }
    sb_printf(b, "{\"format_version\": 1, \"thread\": %" PRIu64 ", \"depth\": %u, \"function\": ",
              th, c->depth);
    func_json(b, x, c->func);
    sb_printf(b, ", \"start\": %" PRIu64 ", \"end\": %" PRIu64 ", \"duration\": %" PRIu64
                 ", \"self\": %" PRIu64 ", \"open\": %s, \"blocking\": %s, \"calls\": %" PRIu64
                 ", \"children_calls\": %" PRIu64 ", \"children\": [",
              c->start, c->end, c->dur, c->self, c->open ? "true" : "false",
              c->blocking ? "true" : "false", c->calls, c->children_calls);
    for (uint32_t k = 0; k < c->nchildren; k++) {
        sb_puts(b, k ? ", {\"function\": " : "{\"function\": ");
        func_json(b, x, c->children[k].func);
        sb_printf(b, ", \"calls\": %" PRIu64 ", \"total\": %" PRIu64 "}", c->children[k].calls,
                  c->children[k].total);
    }
    sb_puts(b, "]}\n");
    free(c);
    return 0;
}

int web_timeline_json(void *tl_ctx, const char *trace, const char *content_hash, uint64_t bytes, int kind,
                      const struct web_args *a, char **json, size_t *len, char *err, size_t n)
{
    const struct web_tl_serve *sv = tl_ctx;
    struct web_tl_cache *cache = sv->cache;
    struct ptc_tl *x;
    int fd = -1, held = 0;
    char src[4200];
    int rc = open_index(cache, trace, content_hash, bytes, &x, &held, &fd, src, sizeof(src),
                        err, n);
    if (rc) {
        if (fd >= 0)
            close(fd);
        return rc;
    }
    struct sbuf b;
    sb_init(&b);
    rc = kind == WEB_TL_CALL ? call_json(x, src, sv->budget, a, &b, err, n)
                             : window_json(x, src, sv->budget, a, &b, err, n);
    if (held)
        web_tl_cache_release(cache, x);
    else
        ptc_tl_free(x);
    close(fd);
    if (rc) {
        sb_free(&b);
        return rc;
    }
    *json = sb_take(&b, len);
    return *json ? 0 : -1;
}
