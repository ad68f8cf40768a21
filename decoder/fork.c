/* Fork children: the child's first thread starts from a copy of the forking thread's
 * shadow stack. The parent's FORK record and the child's first events may come in either
 * order: a snapshot waits for the child, or the child's events wait (held, with a bound
 * over all children) for the fork point. */
#include <stdlib.h>
#include <string.h>

#include "decode_internal.h"

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

int ptc_fork_point(struct ptc_session *s, struct thread *t, uint32_t child_pid, uint64_t tsc)
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

int ptc_thread_start(struct ptc_session *s, struct thread *t)
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

int ptc_fork_hold(struct ptc_session *s, struct thread *t, const struct ptc_ev *ev, size_t n)
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
