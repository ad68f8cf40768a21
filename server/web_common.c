/* What every API view shares: arguments, error documents, choosing runs (web.h,
 * web_internal.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_query_web.h"
#include "web_cache.h"
#include "web_internal.h"

const char *web_arg(const struct web_args *a, const char *key)
{
    const char *v = NULL;
    for (int i = 0; a && i < a->n; i++)
        if (!strcmp(a->k[i], key))
            v = a->v[i];
    return v;
}

void web_resp_free(struct web_resp *r)
{
    free(r->body);
    r->body = NULL;
    r->len = 0;
}

int web_error(struct web_resp *r, int status, const char *fmt, ...)
{
    char msg[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    struct sbuf b;
    sb_init(&b);
    sb_printf(&b, "{\"format_version\": %d, \"status\": %d, \"error\": ", WEB_API_VERSION,
              status);
    sb_json_str(&b, msg);
    sb_puts(&b, "}\n");
    web_resp_free(r);
    r->body = sb_take(&b, &r->len);
    r->status = status;
    r->type = "application/json; charset=utf-8";
    snprintf(r->message, sizeof(r->message), "%.511s", msg);
    return r->body ? 0 : -1;
}

int web_json_done(struct web_resp *r, struct sbuf *b)
{
    sb_puts(b, "}\n");
    web_resp_free(r);
    r->body = sb_take(b, &r->len);
    r->status = 200;
    r->type = "application/json; charset=utf-8";
    return r->body ? 0 : -1;
}

int web_db_fail(struct web_resp *r, struct db *d, int e)
{
    if (e == -DB_E_NOMEM)
        return -1;
    return web_error(r, 500, "the database failed: %s", d->err);
}

int64_t web_id_arg(const char *s, const char *what, struct web_resp *r)
{
    char *end;
    errno = 0;
    long long x = s && *s ? strtoll(s, &end, 10) : 0;
    if (!s || !*s || *end || x <= 0 || errno) {
        if (web_error(r, 400, "'%s' is not a %s (a whole number above 0)", s ? s : "", what))
            return -1;
        return 0;
    }
    return x;
}

int web_top_arg(const struct web_args *a, uint64_t dflt, uint64_t *top, struct web_resp *r)
{
    const char *t = web_arg(a, "top");
    *top = dflt;
    if (!t)
        return 0;
    char *end;
    *top = strtoull(t, &end, 10);
    if (!*t || *end || *t == '-')
        return web_error(r, 400, "top='%s' is not a whole number", t) ? -1 : 1;
    return 0;
}

static int ns_arg(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (!*s || *end || errno)
        return -1;
    *out = x;
    return 0;
}

int web_select(struct db *d, const struct web_args *a, struct db_ids *ids, struct web_resp *r)
{
    const char *tags[WEB_MAX_ARGS], *progs[WEB_MAX_ARGS];
    struct db_filter f;
    memset(&f, 0, sizeof(f));
    memset(ids, 0, sizeof(*ids));
    for (int i = 0; i < a->n; i++) {
        const char *k = a->k[i], *v = a->v[i];
        if (!strcmp(k, "tag")) {
            if (!*v || *v == '=')
                return web_error(r, 400, "tag '%s' has no name (tag=NAME or tag=NAME=VALUE)",
                                 v) ? -1 : 1;
            /* a tag no run has is an unknown object, not an empty answer: 404 */
            char name[512];
            const char *eq = strchr(v, '=');
            snprintf(name, sizeof(name), "%.*s", (int)(eq ? (size_t)(eq - v) : strlen(v)), v);
            int found = 0, e = db_wtag_exists(d, name, eq ? eq + 1 : NULL, &found);
            if (e)
                return web_db_fail(r, d, e) ? -1 : 1;
            if (!found)
                return web_error(r, 404, "no run has the tag %s", v) ? -1 : 1;
            tags[f.ntags++] = v;
        } else if (!strcmp(k, "program")) {
            progs[f.nprograms++] = v;
        } else if (!strcmp(k, "since") || !strcmp(k, "until")) {
            int64_t ns;
            if (ns_arg(v, &ns))
                return web_error(r, 400, "%s='%s' is not a time in ns since 1970", k, v) ? -1
                                                                                         : 1;
            if (*k == 's')
                f.has_since = 1, f.since_ns = ns;
            else
                f.has_until = 1, f.until_ns = ns;
        } else if (!strcmp(k, "runs")) {
            struct db_runs_spec spec;
            char err[300];
            if (db_runs_spec_parse(v, &spec, err, sizeof(err)))
                return web_error(r, 400, "runs='%s': %s", v, err) ? -1 : 1;
            db_runs_spec_free(&spec);
            f.runs = v;
        }
    }
    f.tags = tags;
    f.programs = progs;
    int e = db_select(d, &f, ids);
    if (e)
        return web_db_fail(r, d, e) ? -1 : 1;
    return 0;
}

/* here, below the views and web_trace_cached that answer it */
int web_run_gone(struct web_resp *r, int64_t id, const char *trace)
{
    return web_error(r, 410, "run %lld's trace file %s is gone: the trace file this run was "
                             "stored from is no longer the same file (moved, replaced or "
                             "unreadable): record it again and db add it; the run's figures "
                             "are still in the database",
                     (long long)id, trace);
}

/* r through the cache under key: answered from it, or from another thread's computation of
 * the same key, or computed here by make(c, arg, r) and handed to those waiting. */
static int through_cache(const struct web_ctx *c, const char *key, struct web_resp *r,
                         int (*make)(const struct web_ctx *c, const void *arg,
                                     struct web_resp *r),
                         const void *arg)
{
    struct web_flight *f = NULL;
    int got = web_cache_begin(c->cache, key, r, &f);
    if (got)
        return got < 0 ? -1 : 0;
    int rc = make(c, arg, r);
    web_cache_done(c->cache, f, rc ? NULL : r);
    return rc;
}

/* web_cached's computation as through_cache calls it */
struct view_call {
    struct db *d;
    int64_t id;
    const struct web_args *a;
    web_view_fn compute;
};

static int make_view(const struct web_ctx *c, const void *arg, struct web_resp *r)
{
    const struct view_call *v = arg;
    return v->compute(c, v->d, v->id, v->a, r);
}

int web_cached(const struct web_ctx *c, struct db *d, const char *view, int64_t id,
               const struct web_args *a, struct web_resp *r, web_view_fn compute)
{
    if (!c->cache)
        return compute(c, d, id, a, r);
    int64_t count = 0, max_id = 0;
    int e = db_wgeneration(d, &count, &max_id);
    if (e)
        return web_db_fail(r, d, e);
    struct sbuf key;
    sb_init(&key);
    sb_printf(&key, "%s %lld %lld %lld", view, (long long)id, (long long)count,
              (long long)max_id);
    for (int i = 0; i < a->n; i++)
        sb_printf(&key, "&%s=%s", a->k[i], a->v[i]);
    char *k = sb_take(&key, NULL);
    if (!k)
        return -1;
    struct view_call v = {d, id, a, compute};
    int rc = through_cache(c, k, r, make_view, &v);
    free(k);
    return rc;
}

/* web_trace_cached's computation as through_cache calls it */
struct trace_call {
    const struct db_run *run;
    int64_t id;
    const void *arg;
    web_trace_fn make;
};

static int make_trace(const struct web_ctx *c, const void *arg, struct web_resp *r)
{
    const struct trace_call *t = arg;
    return t->make(c, t->run, t->id, t->arg, r);
}

int web_trace_cached(const struct web_ctx *c, const struct db_run *run, int64_t id,
                     const char *what, web_trace_fn make, const void *arg, struct web_resp *r)
{
    if (!c->cache || !c->trace_same)
        return make(c, run, id, arg, r);
    /* the cache holds answers from the file the run was stored from: whatever is at the path
     * now is checked first, so a moved or replaced file gets its 410, never a cached graph */
    const char *hash = run->content_hash ? run->content_hash : "";
    if (!c->trace_same(run->trace, hash, (uint64_t)run->trace_bytes))
        return web_run_gone(r, id, run->trace);
    struct sbuf key;
    sb_init(&key);
    sb_printf(&key, "trace %s %lld %lld %s ", what, (long long)id, (long long)run->trace_bytes,
              hash);
    sb_puts(&key, run->trace ? run->trace : ""); /* the flame graph's title */
    char *k = sb_take(&key, NULL);
    if (!k)
        return -1;
    struct trace_call t = {run, id, arg, make};
    int rc = through_cache(c, k, r, make_trace, &t);
    free(k);
    return rc;
}
