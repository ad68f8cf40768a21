/* Sessions: their lifetime, hooks and chunk handlers, and the end of the input. The lower
 * floors (docs/architecture.md) hold their data: tables (tables.c), module tables
 * (modules.c), shadow stacks (stack.c), thread feeds and fork points (fork.c); errors.c
 * writes their error messages. */
#include <stdlib.h>

#include "dec_budget.h"
#include "dec_fork.h"
#include "dec_stack.h"
#include "dec_tables.h"
#include "dec_window.h"

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
    if (!s->finished) /* decoding stopped early: the handlers release what they hold */
        for (int i = 0; i < s->nhandlers; i++)
            if (s->handlers[i].finish)
                s->handlers[i].finish(s->handlers[i].ctx, NULL);
    ptc_tables_free(s);
    free(s->edges);
    for (uint32_t i = 0; i < s->argc; i++)
        free(s->argv[i]);
    free(s->argv);
    for (uint32_t i = 0; i < s->nmodlist; i++)
        free((char *)s->modlist[i].path);
    free(s->modlist);
    for (uint32_t i = 0; i < s->nrefused; i++) {
        free((char *)s->refused[i].path);
        free((char *)s->refused[i].reason);
    }
    free(s->refused);
    for (uint32_t i = 0; i < s->ncauses; i++)
        free((char *)s->causes[i].what);
    free(s->causes);
    ptc_window_free(s);
    ptc_budget_free(s);
    free(s);
}

void ptc_session_set_read_hook(struct ptc_session *s, void (*fn)(void *ctx, const void *data,
                                                                 size_t n),
                               void *ctx)
{
    s->read_hook = fn;
    s->read_hook_ctx = ctx;
}

void ptc_session_set_call_hook(struct ptc_session *s, ptc_call_hook hook, void *ctx)
{
    s->hook = hook;
    s->hook_ctx = ctx;
}

void ptc_session_set_hit_hook(struct ptc_session *s, ptc_hit_hook hook, void *ctx)
{
    s->hit_hook = hook;
    s->hit_ctx = ctx;
}

void ptc_session_hits_only(struct ptc_session *s) { s->hits_only = s->no_aggregates = 1; }

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

void ptc_session_skip_aggregates(struct ptc_session *s) { s->no_aggregates = 1; }
