/* The threads of a stored run's trace for the run page (web_threads.h). */
#include "web_threads.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_common.h"
#include "db_hash.h"
#include "sbuf.h"
#include "web_flame.h"

struct thr {
    uint32_t pid, tid;
    uint64_t events, calls, gaps, lost, first, last;
    int timed;
};

struct acc {
    struct thr *v;
    size_t n, cap;
    int oom;
    struct db_hash_stream *hash;
};

/* Every call event, counted on its thread (found through the thread's own word: index + 1). */
static void on_call(void *ctx, const struct ptc_call_event *e)
{
    struct acc *a = ctx;
    size_t i = e->thread_user ? *e->thread_user : 0;
    if (!i) {
        if (a->n == a->cap) {
            size_t cap = a->cap ? 2 * a->cap : 16;
            struct thr *v = realloc(a->v, cap * sizeof(*v));
            if (!v) {
                a->oom = 1;
                return;
            }
            a->v = v;
            a->cap = cap;
        }
        a->v[a->n] = (struct thr){.pid = e->pid, .tid = e->tid};
        i = ++a->n;
        if (e->thread_user)
            *e->thread_user = i;
    }
    struct thr *t = &a->v[i - 1];
    t->events++;
    if (e->kind == PTC_CALL_RETURN)
        t->calls++;
    if (e->kind == PTC_CALL_GAP) {
        t->gaps++;
        t->lost += e->count;
    }
    if (e->has_time) {
        if (!t->timed || e->time < t->first)
            t->first = e->time;
        if (!t->timed || e->time > t->last)
            t->last = e->time;
        t->timed = 1;
    }
}

/* the decoder's bytes hashed again, as the flame graph does: a file changed meanwhile */
static int prepare(void *ctx, struct ptc_session *s)
{
    struct acc *a = ctx;
    ptc_session_set_read_hook(s, db_hash_stream_update, a->hash);
    return 0;
}

static int cmp_thr(const void *x, const void *y)
{
    const struct thr *p = x, *q = y;
    if (p->pid != q->pid)
        return p->pid < q->pid ? -1 : 1;
    return p->tid < q->tid ? -1 : p->tid > q->tid;
}

static void json_name(struct sbuf *b, const char *s)
{
    if (s && *s)
        sb_json_str(b, s);
    else
        sb_puts(b, "null");
}

int web_threads_json(const char *trace, const char *content_hash, uint64_t bytes, char **json,
                     size_t *len, char *err, size_t n)
{
    char path[PATH_MAX];
    int in = web_trace_open(trace, content_hash, bytes, path, sizeof(path), err, n);
    if (in < 0)
        return 1;
    web_decode_said(trace, "threads");
    struct acc a = {.v = NULL, .n = 0, .cap = 0, .oom = 0, .hash = db_hash_stream_new()};
    if (!a.hash) {
        close(in);
        snprintf(err, n, "out of memory");
        return -1;
    }
    struct cli_args ca = {.cmd = "serve", .path = path,
                          .threads = 1, .prepare = prepare, .prepare_ctx = &a};
    struct ptc_session *s = cli_decode(&ca, on_call, &a, NULL, NULL);
    close(in);
    char got[DB_HASH_HEX];
    uint64_t nb = 0;
    db_hash_stream_finish(a.hash, got, &nb);
    if (s && (nb != bytes || strcmp(got, content_hash))) {
        ptc_session_free(s);
        free(a.v);
        snprintf(err, n, "the trace file this run was stored from is no longer the same file "
                         "(moved, replaced or unreadable)");
        return 1;
    }
    if (!s || a.oom) {
        if (s)
            ptc_session_free(s);
        free(a.v);
        snprintf(err, n, "%s cannot be decoded for its threads (the server's standard error "
                         "says why)", trace);
        return -1;
    }
    qsort(a.v, a.n, sizeof(*a.v), cmp_thr);
    struct sbuf b;
    sb_init(&b);
    sb_puts(&b, "[");
    for (size_t i = 0; i < a.n; i++) {
        const struct thr *t = &a.v[i];
        sb_printf(&b, "%s{\"pid\": %u, \"tid\": %u, \"name\": ", i ? ",\n  " : "\n  ", t->pid,
                  t->tid);
        json_name(&b, ptc_session_thread_name(s, t->pid, t->tid));
        sb_puts(&b, ", \"process\": ");
        json_name(&b, ptc_session_process_name(s, t->pid));
        sb_printf(&b, ", \"events\": %llu, \"calls\": %llu, \"gaps\": %llu, \"lost_events\": %llu",
                  (unsigned long long)t->events, (unsigned long long)t->calls,
                  (unsigned long long)t->gaps, (unsigned long long)t->lost);
        if (t->timed)
            sb_printf(&b, ", \"first\": %llu, \"last\": %llu}", (unsigned long long)t->first,
                      (unsigned long long)t->last);
        else
            sb_puts(&b, ", \"first\": null, \"last\": null}");
    }
    sb_puts(&b, "]");
    ptc_session_free(s);
    free(a.v);
    *json = sb_take(&b, len);
    if (!*json) {
        snprintf(err, n, "out of memory");
        return -1;
    }
    return 0;
}
