/* Sessions: their lifetime, error messages, hooks and chunk handlers, and the end of the
 * input. The tables (tables.c), module tables (modules.c), shadow stacks (stack.c), fork
 * handling (fork.c), chunk dispatch (chunk.c) and queries (analyses.c) work on them. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "decode_internal.h"

static const char *const errnames[] = {
    [PTC_OK] = "success",
    [PTC_E_IO] = "read error",
    [PTC_E_FORMAT] = "not a ptcall trace file",
    [PTC_E_VERSION] = "unsupported trace format version",
    [PTC_E_TRUNCATED] = "truncated trace",
    [PTC_E_CORRUPT] = "corrupt trace",
    [PTC_E_NOMEM] = "out of memory",
    [PTC_E_NOMODULE] = "the trace holds no instrumented module",
    [PTC_E_BADSTUB] = "event names an unknown stub",
    [PTC_E_ARG] = "invalid argument",
    [PTC_E_UNSUPPORTED] = "unsupported trace content",
};

const char *ptc_strerror(int err)
{
    if (err < 0)
        err = -err;
    if (err >= 0 && (size_t)err < sizeof(errnames) / sizeof(errnames[0]) && errnames[err])
        return errnames[err];
    return "unknown error";
}

int ptc_session_set_error(struct ptc_session *s, int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->msg, sizeof(s->msg), fmt, ap);
    va_end(ap);
    return -err;
}

const char *ptc_session_errmsg(const struct ptc_session *s) { return s ? s->msg : ""; }

struct ptc_session *ptc_session_new(void)
{
    struct ptc_session *s = calloc(1, sizeof(*s));
    if (s)
        s->src_name = "trace";
    return s;
}

void ptc_session_free(struct ptc_session *s)
{
    if (!s)
        return;
    ptc_tables_free(s);
    free(s->edges);
    free(s);
}

void ptc_session_set_call_hook(struct ptc_session *s, ptc_call_hook hook, void *ctx)
{
    s->hook = hook;
    s->hook_ctx = ctx;
}

void ptc_session_set_thread_end_hook(struct ptc_session *s,
                                     void (*fn)(void *ctx, uint32_t pid, uint32_t tid,
                                                uintptr_t *thread_user),
                                     void *ctx)
{
    s->end_hook = fn;
    s->end_hook_ctx = ctx;
}

int ptc_session_set_chunk_handler(struct ptc_session *s, uint16_t first, uint16_t last,
                                  ptc_chunk_fn fn, ptc_finish_fn finish, void *ctx)
{
    if (!s || !fn || first > last || s->nhandlers == PTC_MAX_HANDLERS)
        return -PTC_E_ARG;
    struct handler *h = &s->handlers[s->nhandlers++];
    h->first = first;
    h->last = last;
    h->fn = fn;
    h->finish = finish;
    h->ctx = ctx;
    return 0;
}

int ptc_session_finish(struct ptc_session *s)
{
    if (s->finished)
        return 0;
    s->finished = 1;
    int err = 0;
    for (int i = 0; i < s->nhandlers; i++)
        if (s->handlers[i].finish) {
            int e = s->handlers[i].finish(s->handlers[i].ctx, s);
            if (e && !err)
                err = e;
        }
    PTC_HTABLE_EACH(&s->threads, struct thread, t)
        if (t->waiting)
            ptc_fork_give_up(s, t);
    PTC_HTABLE_EACH(&s->threads, struct thread, t)
        if (t->started)
            ptc_thread_end(s, t);
    return err;
}
