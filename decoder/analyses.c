/* Queries on a session: per-function figures, caller->callee edges, totals, and the
 * threads whose figures are lower bounds. Counters are kept in TSC ticks; they become ns
 * here when the trace has a time base. */
#include <stdlib.h>
#include <string.h>

#include "dec_tables.h"

void ptc_session_func_stats(const struct ptc_session *s, uint32_t id, struct ptc_func_stats *o)
{
    memset(o, 0, sizeof(*o));
    if (id >= s->nfuncs)
        return;
    o->calls = s->fstats[id].calls;
    o->total = s->fstats[id].total;
    o->self = s->fstats[id].self;
    o->blocked = s->fstats[id].blocked;
    if (s->has_tb) {
        o->total = ptc_ticks_to_ns(&s->tb, o->total);
        o->self = ptc_ticks_to_ns(&s->tb, o->self);
        o->blocked = ptc_ticks_to_ns(&s->tb, o->blocked);
    }
}

int ptc_session_func_traced(const struct ptc_session *s, uint32_t id)
{
    if (id >= s->nfuncs)
        return 0;
    const struct func *f = &s->funcs[id];
    return f->unarmed < f->in_modules || !f->in_modules;
}

void ptc_session_selection(const struct ptc_session *s, struct ptc_selection *out)
{
    out->selected = s->selection != NULL;
    out->spec = s->selection ? s->selection : "";
    out->funcs = s->nfuncs;
    out->traced = 0;
    for (uint32_t id = 0; id < s->nfuncs; id++)
        out->traced += ptc_session_func_traced(s, id) != 0;
}

size_t ptc_session_edges(const struct ptc_session *s, struct ptc_edge **out)
{
    *out = malloc((s->nedges ? s->nedges : 1) * sizeof(**out));
    if (!*out)
        return (size_t)-1;
    size_t n = 0;
    for (uint32_t i = 0; i < s->ecap; i++)
        if (s->edges[i].key != UINT64_MAX) {
            (*out)[n].caller = (uint32_t)(s->edges[i].key >> 32);
            (*out)[n].callee = (uint32_t)s->edges[i].key;
            (*out)[n].count = s->edges[i].count;
            const struct ecache *ec = &s->ecache[(*out)[n].caller];
            if (ec->callee1 == (*out)[n].callee + 1 && ec->slot == i)
                (*out)[n].count += ec->pending; /* calls not yet flushed into the table */
            n++;
        }
    return n;
}

int ptc_session_timebase(const struct ptc_session *s, uint32_t pid, struct ptc_timebase *out)
{
    const struct proc *p = ptc_proc_find(s, pid);
    if (p && p->has_tb)
        *out = p->tb;
    else if (s->has_tb)
        *out = s->tb;
    else
        return -PTC_E_ARG;
    return 0;
}

int ptc_session_origin(const struct ptc_session *s, uint64_t *time)
{
    const struct proc *p = s->have_origin ? ptc_proc_find(s, s->origin_pid) : NULL;
    if (!p || !s->origin_tsc)
        return -PTC_E_ARG;
    *time = ptc_event_time(s, p, s->origin_tsc);
    return 0;
}

int ptc_totals_complete(const struct ptc_totals *t)
{
    return t->record_end && !t->unfinished_processes && !t->unclosed_threads &&
           !t->refused_objects;
}

void ptc_session_totals(const struct ptc_session *s, struct ptc_totals *t)
{
    *t = s->tot;
    t->blocking = s->has_blocking != 0;
    t->processes = 0;
    t->unfinished_processes = 0;
    PTC_HTABLE_EACH(&s->procs, struct proc, p) {
        if (p->pid && (p->have_process || p->threads))
            t->processes++;
        /* only the soft runtime ends its processes' traces; the Intel PT recorder and import
         * write no PROCESS_END */
        if (s->backend == PTC_BACKEND_SOFT && p->have_process && !p->ended)
            t->unfinished_processes++;
    }
    /* every worker of a parallel decode reads every THREAD chunk: worker 0's tables (these,
     * after the merge) know each thread's exit */
    t->unclosed_threads = 0;
    if (s->backend == PTC_BACKEND_SOFT)
        PTC_HTABLE_EACH(&s->threads, struct thread, x)
            if (x->seq_seen && !x->exit_seen && x->proc && x->proc->have_process &&
                x->proc->ended && x->proc->end_how != PTC_END_DETACH &&
                x->proc->end_how != PTC_END_SNAPSHOT) /* a window's threads go on running */
                t->unclosed_threads++;
    t->window_threads = 0;
    PTC_HTABLE_EACH(&s->threads, struct thread, x)
        if (x->proc && x->seq_seen &&
            (x->has_window || x->proc->how == PTC_PROC_ATTACH || x->proc->how == PTC_PROC_SNAPSHOT))
            t->window_threads++;
    /* read by every worker of a parallel decode (process-level chunks): worker 0's list */
    t->refused_objects = s->nrefused;
    t->calls = 0;
    for (uint32_t i = 0; i < s->nfuncs; i++)
        t->calls += s->fstats[i].calls;
    t->lossy_threads = 0;
    PTC_HTABLE_EACH(&s->threads, struct thread, x)
        if (x->lost || x->gaps)
            t->lossy_threads++;
    t->total_time = 0;
    for (uint32_t i = 0; i < s->nfuncs; i++)
        t->total_time += s->fstats[i].self;
    if (s->has_tb)
        t->total_time = ptc_ticks_to_ns(&s->tb, t->total_time);
    t->backend = s->backend;
    t->file_flags = s->file_flags;
    t->timed = s->timed_events != 0;
    t->has_timebase = s->has_tb;
    t->resolution_ns = s->resolution_ns;
    t->record_end = s->record_end;
    t->wait_status = s->wait_status;
}

void ptc_session_lossy_threads(const struct ptc_session *s,
                               void (*fn)(void *ctx, uint32_t pid, uint32_t tid, uint64_t lost,
                                          uint64_t gaps),
                               void *ctx)
{
    PTC_HTABLE_EACH(&s->threads, struct thread, x)
        if (x->lost || x->gaps)
            fn(ctx, x->pid, x->tid, x->lost, x->gaps);
}

void ptc_session_unfinished_threads(const struct ptc_session *s,
                                    void (*fn)(void *ctx, uint32_t pid, uint32_t tid,
                                               uint64_t events, int has_time, uint64_t last),
                                    void *ctx)
{
    if (s->backend != PTC_BACKEND_SOFT) /* as ptc_session_totals counts them */
        return;
    PTC_HTABLE_EACH(&s->procs, struct proc, p) {
        if (!p->have_process || p->ended)
            continue;
        for (const struct thread *t = p->threads; t; t = t->pnext) {
            int has_time = s->timed_events && t->last;
            fn(ctx, p->pid, t->tid, t->events, has_time,
               has_time ? ptc_event_time(s, p, t->last) : 0);
        }
    }
}

const char *ptc_session_process_name(const struct ptc_session *s, uint32_t pid)
{
    const struct proc *p = ptc_proc_find(s, pid);
    return p ? p->exe : NULL;
}

const char *ptc_session_thread_name(const struct ptc_session *s, uint32_t pid, uint32_t tid)
{
    const struct thread *t = ptc_thread_find(s, pid, tid);
    return t ? t->name : NULL;
}

size_t ptc_session_thread_renamed(const struct ptc_session *s, uint32_t pid, uint32_t tid,
                                  const char *const **names)
{
    const struct thread *t = ptc_thread_find(s, pid, tid);
    *names = t ? (const char *const *)t->renamed : NULL;
    return t ? t->nrenamed : 0;
}

void ptc_session_recording(const struct ptc_session *s, struct ptc_recording *out)
{
    const struct proc *p = s->have_origin ? ptc_proc_find(s, s->origin_pid) : NULL;
    *out = (struct ptc_recording){.created_ns = s->created_ns,
                                  .has_info = s->has_info,
                                  .argc = s->argc,
                                  .argv = (const char *const *)s->argv,
                                  .has_end = s->record_end,
                                  .wall_ns = s->wall_ns,
                                  .cpu_ns = s->cpu_ns,
                                  .first_exe = p ? p->exe : NULL};
}

size_t ptc_session_modules(const struct ptc_session *s, const struct ptc_module_desc **out)
{
    *out = s->modlist;
    return s->nmodlist;
}
