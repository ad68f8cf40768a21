/* The entry of a thread's events, and fork children: the child's first thread starts from
 * a copy of the forking thread's shadow stack. The parent's FORK record and the child's
 * first events may come in either order: a snapshot waits for the child, or the child's
 * events wait (held, with a bound over all children) for the fork point. Replaying held
 * events feeds them again, so the feed and the fork points live in this one file; the
 * shadow stack below (stack.c) applies everything else. */
#include <stdlib.h>
#include <string.h>

#include "dec_fork.h"
#include "dec_stack.h"
#include "dec_tables.h"

static int release_held(struct ptc_session *s, struct thread *t)
{
    struct ptc_ev *held = t->held;
    size_t n = t->nheld;
    t->held = NULL;
    t->nheld = t->capheld = 0;
    t->waiting = 0;
    s->held_total -= n;
    int e = n ? ptc_thread_feed(s, t, held, n) : 0;
    free(held);
    return e;
}

/* Replays what t held, then ends t if it ended while waiting. */
static int stop_waiting(struct ptc_session *s, struct thread *t)
{
    int e = release_held(s, t);
    if (t->end_pending)
        ptc_thread_end(s, t);
    return e;
}

int ptc_fork_give_up(struct ptc_session *s, struct thread *t)
{
    if (t->nheld)
        s->tot.fork_unknown++;
    return stop_waiting(s, t);
}

/* The fork point of child pid is known: t is the forking thread. Returns 0 or -PTC_E_*. */
static int fork_point(struct ptc_session *s, struct thread *t, uint32_t child_pid, uint64_t tsc)
{
    if (s->hook)
        ptc_emit(s, t, PTC_CALL_FORK, 0, t->depth, UINT32_MAX, 0, child_pid, 0);
    struct proc *cp = ptc_proc_get(s, child_pid);
    if (!cp)
        return ptc_nomem(s);
    struct thread *ct = ptc_thread_find(s, child_pid, child_pid);
    if (ct && ct->waiting) {
        ct->last = tsc; /* tsc is the forking thread's last time */
        int e = ptc_thread_start_from(s, ct, t->frames, t->depth);
        if (e)
            return e;
        for (uint32_t i = 0; i < ct->depth; i++)
            ct->frames[i].start = tsc;
        ct->last = tsc;
        return stop_waiting(s, ct);
    }
    if (ct && ct->started)
        return 0; /* the child already runs without it (documented) */
    free(cp->snap);
    cp->snap = NULL;
    cp->snap_n = 0;
    cp->snap_valid = 1;
    if (t->depth) {
        cp->snap = malloc(t->depth * sizeof(*cp->snap));
        if (!cp->snap)
            return ptc_nomem(s);
        memcpy(cp->snap, t->frames, t->depth * sizeof(*cp->snap));
        for (uint32_t i = 0; i < t->depth; i++)
            cp->snap[i].start = tsc;
        cp->snap_n = t->depth;
    }
    return 0;
}

/* First events of t: a fork child's first thread starts from its parent's stack, or
 * waits for it. Returns 0 or -PTC_E_*. */
static int thread_start(struct ptc_session *s, struct thread *t)
{
    t->started = 1;
    struct proc *p = t->proc;
    if (t->tid != t->pid)
        return 0;
    if (p->snap_valid) {
        if (p->snap_n)
            t->last = p->snap[0].start;
        int e = ptc_thread_start_from(s, t, p->snap, p->snap_n);
        free(p->snap);
        p->snap = NULL;
        p->snap_valid = 0;
        return e;
    }
    if (p->how != PTC_PROC_FORK)
        return 0;
    struct proc *pp = ptc_proc_find(s, p->ppid);
    if (pp && pp->have_process && !pp->ended)
        t->waiting = 1;
    else
        s->tot.fork_unknown++;
    return 0;
}

/* Holds events of a thread that waits for its fork point. Returns 0 or -PTC_E_*. */
static int fork_hold(struct ptc_session *s, struct thread *t, const struct ptc_ev *ev, size_t n)
{
    if (s->held_total + n > PTC_FORK_BUFFER_MAX) { /* stop waiting: bounded memory */
        s->tot.fork_unknown++;
        int e = release_held(s, t);
        return e ? e : ptc_thread_feed(s, t, ev, n);
    }
    if (t->nheld + n > t->capheld) {
        size_t nc = t->capheld ? t->capheld : 1024;
        while (nc < t->nheld + n)
            nc *= 2;
        struct ptc_ev *nh = realloc(t->held, nc * sizeof(*nh));
        if (!nh)
            return ptc_nomem(s);
        t->held = nh;
        t->capheld = nc;
    }
    memcpy(t->held + t->nheld, ev, n * sizeof(*ev));
    t->nheld += n;
    s->held_total += n;
    return 0;
}

/* A FORK event of t. Returns 0 or -PTC_E_*. */
static int fork_event(struct ptc_session *s, struct thread *t, const struct ptc_ev *e)
{
    if (s->par_n > 1) /* the child's stack comes from this thread: not splittable */
        return ptc_session_set_error(s, PTC_E_UNSUPPORTED, "parallel decode: fork");
    if (s->hit_hook)
        s->hit_hook(s->hit_ctx, t->pid, t->tid, e, 1);
    if (e->has_time)
        t->last = e->tsc;
    if (e->count > UINT32_MAX)
        return ptc_session_set_error(s, PTC_E_CORRUPT, "fork record names pid %llu",
                                     (unsigned long long)e->count);
    return fork_point(s, t, (uint32_t)e->count, t->last);
}

int ptc_thread_feed(struct ptc_session *s, struct thread *t, const struct ptc_ev *ev, size_t n)
{
    if (unlikely(!t->started || t->ended)) {
        if (t->ended) { /* events after the thread ended: a new life, from an empty stack */
            t->ended = 0;
            s->tot.threads++;
        }
        /* a new life's first event opens its first mark segment */
        t->has_seg_from = n && ev[0].has_time;
        t->seg_from = n ? ev[0].tsc : 0;
        /* and its window: where calls entered before it start (docs/trace-format.md 4.19) */
        t->has_first = t->has_seg_from;
        t->first_tsc = t->seg_from;
        t->base_child = 0;
        t->has_end = 0;
        t->gapped = 0;
        if (!t->started) {
            s->tot.threads++;
            int e = thread_start(s, t);
            if (e)
                return e;
        }
    }
    if (unlikely(t->waiting))
        return fork_hold(s, t, ev, n);
    /* the hits are counted once the whole batch went through: a failed batch is not */
    uint64_t hits = 0, timed = 0;
    for (size_t i = 0; i < n;) {
        size_t done;
        int r = ptc_stack_apply(s, t, ev + i, n - i, &done, &hits, &timed);
        if (r)
            return r;
        i += done;
        if (i < n && (r = fork_event(s, t, &ev[i++]))) /* stopped at a FORK event */
            return r;
    }
    t->events += hits;
    s->tot.events += hits;
    s->timed_events += timed;
    s->untimed_events += hits - timed;
    return 0;
}

int ptc_session_feed(struct ptc_session *s, uint32_t pid, uint32_t tid,
                     const struct ptc_ev *ev, size_t n)
{
    if (!s || (!ev && n))
        return -PTC_E_ARG;
    struct thread *t = ptc_thread_get(s, pid, tid);
    if (!t)
        return ptc_nomem(s);
    return ptc_thread_feed(s, t, ev, n);
}
