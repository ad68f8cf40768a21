/* Shadow stacks and call accounting, the hot path: every stub hit of every thread passes
 * through apply_hit(). Calls, inclusive and self time per function, and caller->callee
 * edges are counted as frames are pushed and popped; all of it stays in this one file so
 * that the compiler can inline push/pop/leave into the feeding loops. */
#include <stdlib.h>
#include <string.h>

#include "dec_stack.h"
#include "dec_tables.h"
#include "ptc_varint.h"

/* ---------------------------------------------------------------- edges */

static inline uint32_t edge_hash(uint64_t key)
{
    return (uint32_t)((key * 0x9E3779B97F4A7C15ULL) >> 32);
}

static int edges_grow(struct ptc_session *s)
{
    for (uint32_t i = 0; i < s->nfuncs; i++) { /* the cached slots move */
        struct ecache *ec = &s->ecache[i];
        if (ec->callee1)
            s->edges[ec->slot].count += ec->pending;
        ec->callee1 = 0;
        ec->pending = 0;
    }
    uint32_t nc = s->ecap ? s->ecap * 2 : 256;
    struct edge_slot *ne = malloc((size_t)nc * sizeof(*ne));
    if (!ne)
        return -1;
    for (uint32_t i = 0; i < nc; i++) {
        ne[i].key = UINT64_MAX;
        ne[i].count = 0;
    }
    for (uint32_t i = 0; i < s->ecap; i++) {
        if (s->edges[i].key == UINT64_MAX)
            continue;
        uint32_t b = edge_hash(s->edges[i].key) & (nc - 1);
        while (ne[b].key != UINT64_MAX)
            b = (b + 1) & (nc - 1);
        ne[b] = s->edges[i];
    }
    free(s->edges);
    s->edges = ne;
    s->ecap = nc;
    return 0;
}

/* Counts one caller->callee call; returns the edge's slot or UINT32_MAX (out of memory). */
static PTC_NOINLINE uint32_t edge_add(struct ptc_session *s, uint32_t caller, uint32_t callee)
{
    uint64_t key = (uint64_t)caller << 32 | callee;
    if ((s->nedges + 1) * 2 > s->ecap && edges_grow(s))
        return UINT32_MAX;
    uint32_t mask = s->ecap - 1;
    uint32_t b = edge_hash(key) & mask;
    struct edge_slot *e = s->edges;
    while (e[b].key != key) {
        if (e[b].key == UINT64_MAX) {
            e[b].key = key;
            s->nedges++;
            break;
        }
        b = (b + 1) & mask;
    }
    e[b].count++;
    return b;
}

int ptc_edge_add_count(struct ptc_session *s, uint32_t caller, uint32_t callee, uint64_t count)
{
    if (!count)
        return 0;
    uint32_t slot = edge_add(s, caller, callee); /* counts one */
    if (slot == UINT32_MAX)
        return ptc_nomem(s);
    s->edges[slot].count += count - 1;
    return 0;
}

PTC_NOINLINE int ptc_edge_count(struct ptc_session *s, uint32_t caller, uint32_t callee)
{
    struct ecache *ec = &s->ecache[caller];
    if (ec->callee1) {
        s->edges[ec->slot].count += ec->pending;
        ec->callee1 = 0;
        ec->pending = 0;
    }
    uint32_t slot = edge_add(s, caller, callee); /* may rehash: after the flush */
    if (slot == UINT32_MAX)
        return ptc_nomem(s);
    ec->callee1 = callee + 1;
    ec->slot = slot;
    return 0;
}

/* ---------------------------------------------------------------- shadow stacks */

PTC_NOINLINE void ptc_emit(struct ptc_session *s, struct thread *t, uint8_t kind, uint8_t how,
                           uint32_t depth, uint32_t func, uint64_t dur, uint64_t count,
                           int inherited)
{
    struct ptc_call_event e;
    e.pid = t->pid;
    e.tid = t->tid;
    e.depth = depth;
    e.func = func;
    e.kind = kind;
    e.how = how;
    e.has_time = s->timed_events != 0 || (s->file_flags & PTC_FILE_F_TIMED);
    e.inherited = (uint8_t)((unsigned)inherited & FR_INHERITED);
    e.before = (uint8_t)(((unsigned)inherited & FR_BEFORE) != 0);
    e.time = ptc_event_time(s, t->proc, t->last);
    e.dur = dur;
    if (t->proc->has_tb)
        e.dur = ptc_ticks_to_ns(&t->proc->tb, dur);
    else if (s->has_tb)
        e.dur = ptc_ticks_to_ns(&s->tb, dur);
    e.count = count;
    e.thread_user = &t->user;
    s->hook(s->hook_ctx, &e);
}

/* A timed mark closes its thread's current segment (since its previous mark or first
 * event): its time goes to the label's figures (ptc_session_mark_stats), in ns as the
 * hook's durations are. */
static PTC_NOINLINE void mark_segment(struct ptc_session *s, struct thread *t,
                                      const struct ptc_ev *e)
{
    if (t->has_seg_from && e->tsc >= t->seg_from && e->count < s->nmarks) {
        uint64_t dur = e->tsc - t->seg_from;
        if (t->proc->has_tb)
            dur = ptc_ticks_to_ns(&t->proc->tb, dur);
        else if (s->has_tb)
            dur = ptc_ticks_to_ns(&s->tb, dur);
        struct mark_label *m = &s->marks[e->count];
        if (!m->segments || dur < m->seg_min)
            m->seg_min = dur;
        if (dur > m->seg_max)
            m->seg_max = dur;
        m->segments++;
        m->seg_total += dur;
    }
    t->seg_from = e->tsc;
    t->has_seg_from = 1;
}

static int active_grow(struct thread *t, uint32_t f)
{
    uint32_t nc = t->nactive ? t->nactive : 256;
    while (nc <= f)
        nc *= 2;
    uint32_t *na = realloc(t->active, nc * sizeof(*na));
    if (!na)
        return -1;
    memset(na + t->nactive, 0, (nc - t->nactive) * sizeof(*na));
    t->active = na;
    t->nactive = nc;
    return 0;
}

static int frames_grow(struct thread *t)
{
    uint32_t nc = t->cap ? t->cap * 2 : 64;
    if (nc > PTC_MAX_DEPTH)
        nc = PTC_MAX_DEPTH;
    if (nc <= t->cap)
        return -1;
    struct frame *nf = realloc(t->frames, nc * sizeof(*nf));
    if (!nf)
        return -1;
    t->frames = nf;
    t->cap = nc;
    return 0;
}

/* Pops the top frame at time now. */
static PTC_INLINE void pop(struct ptc_session *s, struct thread *t, uint64_t now, uint8_t how)
{
    struct frame *fr = &t->frames[--t->depth];
    uint32_t f = fr->func;
    uint64_t dur = now > fr->start ? now - fr->start : 0;
    if (--t->active[f] == 0 && !s->no_aggregates)
        s->fstats[f].total += dur;
    if (!s->no_aggregates)
        s->fstats[f].self += dur - (fr->child < dur ? fr->child : dur);
    if (t->depth)
        t->frames[t->depth - 1].child += dur;
    if (unlikely(fr->flags & FR_BLOCKING) && t->depth && !s->no_aggregates)
        s->fstats[t->frames[t->depth - 1].func].blocked += dur;
    if (!t->depth)
        t->base_child += dur; /* a call entered before the window that returns later holds it */
    if (unlikely(s->hook != NULL))
        ptc_emit(s, t, PTC_CALL_RETURN, how, t->depth, f, dur, 0, (int)(fr->flags & FR_INHERITED));
}

/* Closes every open frame at the last event's time (a gap or the end). */
static void close_all(struct ptc_session *s, struct thread *t, uint8_t how)
{
    uint64_t n = t->depth;
    while (t->depth)
        pop(s, t, t->last, how);
    if (how == PTC_RET_BROKEN)
        s->tot.broken_frames += n;
    else
        s->tot.open_at_end += n;
}

static PTC_NOINLINE void gap(struct ptc_session *s, struct thread *t, uint64_t count)
{
    close_all(s, t, PTC_RET_BROKEN);
    t->gapped = 1;
    s->tot.gaps++;
    s->tot.lost_events += count;
    t->gaps++;
    t->lost += count;
    if (s->hook)
        ptc_emit(s, t, PTC_CALL_GAP, 0, 0, UINT32_MAX, 0, count, 0);
}

static PTC_INLINE int push(struct ptc_session *s, struct thread *t, uint32_t f)
{
    if (unlikely(t->depth == t->cap) && frames_grow(t)) {
        if (t->cap >= PTC_MAX_DEPTH) { /* absurd depth: treat as broken, never crash */
            gap(s, t, 0);
        } else {
            return ptc_session_set_error(s, PTC_E_NOMEM, "out of memory (stack of %u frames)",
                                         t->depth);
        }
    }
    if (unlikely(f >= t->nactive) && active_grow(t, f))
        return ptc_nomem(s);
    struct frame *fr = &t->frames[t->depth];
    fr->func = f;
    fr->flags = 0;
    fr->start = t->last;
    fr->child = 0;
    t->active[f]++;
    if (s->no_aggregates)
        goto pushed;
    s->fstats[f].calls++;
    if (t->depth) {
        struct ecache *ec = &s->ecache[fr[-1].func];
        int e;
        if (likely(ec->callee1 == f + 1))
            ec->pending++;
        else if ((e = ptc_edge_count(s, fr[-1].func, f)))
            return e;
    }
pushed:
    t->depth++;
    if (unlikely(s->hook != NULL))
        ptc_emit(s, t, PTC_CALL_ENTER, 0, t->depth - 1, f, 0, 0, 0);
    return 0;
}

static PTC_INLINE int on_stack(const struct thread *t, uint32_t f)
{
    return f < t->nactive && t->active[f];
}

/* An exit, unwind or landing of f, which is not on the stack: counted and ignored.
 * Returns 1 in that case, 0 when f is on the stack. */
static int not_on_stack(struct ptc_session *s, struct thread *t, uint32_t f)
{
    if (on_stack(t, f))
        return 0;
    s->tot.unmatched++;
    if (s->hook)
        ptc_emit(s, t, PTC_CALL_UNMATCHED, 0, t->depth, f, 0, 0, 0);
    return 1;
}

/* Pops the frames above the topmost activation of f (which is on the stack), counting
 * them in *popped. */
static void pop_above(struct ptc_session *s, struct thread *t, uint32_t f, uint8_t how,
                      uint64_t *popped)
{
    while (t->frames[t->depth - 1].func != f) {
        pop(s, t, t->last, how);
        (*popped)++;
    }
}

/* ---- windows: calls entered before a thread's trace began (docs/trace-format.md 4.19) */

/* Whether t's events may begin mid-stack: its process was attached to or snapshotted, or
 * its WINDOW chunk says so, or a budget's pilot counted its calls before events began (the
 * calls open when the pilot ended return in the trace; BUDGET chunk, budget.c). */
static int midstack(const struct thread *t)
{
    return t->proc->how == PTC_PROC_ATTACH || t->proc->how == PTC_PROC_SNAPSHOT ||
           (t->has_window && (t->win.flags & PTC_WINDOW_F_MIDSTACK)) || t->proc->pilot;
}

/* The exit (or unwind) of f on t's empty stack in a window that began mid-stack: a call
 * entered before the window. It is a call from the window's start (WINDOW's tsc_from, else
 * the thread's first event) to now, with the time of the calls at depth 0 since the previous
 * such return as its callees' (they ran inside it). No frame: nothing else was open. */
static void before_return(struct ptc_session *s, struct thread *t, uint32_t f, uint8_t how)
{
    uint64_t from = t->has_window   ? t->win.tsc_from
                    : t->proc->pilot ? t->proc->pilot_tsc /* events began when it ended */
                    : t->has_first   ? t->first_tsc
                                     : t->last;
    uint64_t now = t->last;
    uint64_t dur = now > from ? now - from : 0;
    uint64_t child = t->base_child < dur ? t->base_child : dur;
    t->before++;
    s->tot.entered_before++;
    if (!s->no_aggregates) {
        /* after a pilot its entry was counted (the PILOT COUNTS segment): not a second call */
        s->fstats[f].calls += !t->proc->pilot;
        s->fstats[f].total += dur;
        s->fstats[f].self += dur - child;
    }
    t->base_child = dur; /* all of it ran inside the next call out, entered before too */
    if (unlikely(s->hook != NULL))
        ptc_emit(s, t, PTC_CALL_RETURN, how, 0, f, dur, t->before, FR_BEFORE);
}

/* Whether an event of f on t comes after a budget's governor demoted f (docs/trace-format.md
 * 4.20): f's entries then jump to its counter while its exits stay armed a moment, so an
 * exit may have no entry, and a call in flight may end without its exit. Untimed traces
 * cannot say when: every such event of a demoted function counts. */
static int governed(const struct ptc_session *s, const struct thread *t, uint32_t f)
{
    return s->funcs[f].demoted && t->proc->governor_tsc &&
           (!s->timed_events || t->last >= t->proc->governor_tsc);
}

/* Exit (or unwind) of f when f is not on top. */
static PTC_NOINLINE void leave_slow(struct ptc_session *s, struct thread *t, uint32_t f,
                                    uint8_t how)
{
    if (governed(s, t, f) && !on_stack(t, f)) {
        s->tot.governed++; /* the exit of a call its counter took */
        return;
    }
    if (!t->depth && !t->gapped && midstack(t)) {
        before_return(s, t, f, how);
        return;
    }
    if (not_on_stack(s, t, f))
        return;
    while (t->frames[t->depth - 1].func != f) {
        /* a demoted function's call in flight whose exit was disarmed ends here */
        int g = governed(s, t, t->frames[t->depth - 1].func);
        pop(s, t, t->last, PTC_RET_REPAIR);
        if (g)
            s->tot.governed++;
        else
            s->tot.repairs++;
    }
    pop(s, t, t->last, how);
}

static PTC_INLINE void leave(struct ptc_session *s, struct thread *t, uint32_t f, uint8_t how)
{
    if (likely(t->depth && t->frames[t->depth - 1].func == f))
        pop(s, t, t->last, how);
    else
        leave_slow(s, t, f, how);
}

static PTC_NOINLINE void landing(struct ptc_session *s, struct thread *t, uint32_t f)
{
    if (governed(s, t, f) && !on_stack(t, f)) {
        s->tot.governed++;
        return;
    }
    if (not_on_stack(s, t, f))
        return;
    pop_above(s, t, f, PTC_RET_LANDING, &s->tot.unwound);
    if (s->hook)
        ptc_emit(s, t, PTC_CALL_LANDING, 0, t->depth - 1, f, 0, 0, 0);
}

int ptc_thread_start_from(struct ptc_session *s, struct thread *t, const struct frame *fr,
                          uint32_t n)
{
    while (t->cap < n)
        if (frames_grow(t))
            return ptc_nomem(s);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t f = fr[i].func;
        if (f >= t->nactive && active_grow(t, f))
            return ptc_nomem(s);
        t->frames[i] = fr[i];
        t->frames[i].child = 0;
        t->frames[i].flags |= FR_INHERITED;
        t->active[f]++;
    }
    t->depth = n;
    if (s->hook)
        ptc_emit(s, t, PTC_CALL_FORKED, 0, n, UINT32_MAX, 0, 0, 0);
    return 0;
}

static PTC_INLINE int apply_hit(struct ptc_session *s, struct thread *t,
                                 const struct stubent *stubs, uint32_t nstubs, uint32_t id)
{
    if (unlikely(id >= nstubs)) {
        s->tot.bad_stubs++;
        gap(s, t, 0);
        return 0;
    }
    const struct stubent se = stubs[id];
    switch (se.kind) {
    case PTCALL_STUB_ENTRY:
        return push(s, t, se.func);
    case PTCALL_STUB_EXIT:
        leave(s, t, se.func, PTC_RET_EXIT);
        return 0;
    case PTCALL_STUB_UNWIND:
        leave(s, t, se.func, PTC_RET_UNWIND);
        return 0;
    case STUB_BLOCK_ENTRY: { /* a blocking call (blocking.c) */
        int r = push(s, t, se.func);
        if (likely(!r) && t->depth && t->frames[t->depth - 1].func == se.func)
            t->frames[t->depth - 1].flags |= FR_BLOCKING;
        return r;
    }
    case STUB_BLOCK_EXIT:
        leave(s, t, se.func, PTC_RET_EXIT);
        return 0;
    case PTCALL_STUB_LANDING:
        landing(s, t, se.func);
        return 0;
    case PTC_STUB_CALL: { /* the call and its return */
        ptc_count_whole(s, t, 1);
        int r = push(s, t, se.func);
        if (likely(!r))
            leave(s, t, se.func, PTC_RET_EXIT);
        return r;
    }
    default: /* STUB_NONE: an id inside the table that no module defines */
        s->tot.bad_stubs++;
        gap(s, t, 0);
        return 0;
    }
}

/* Reads a varint of at most 2 bytes at *pp, which is before end. Returns 0, or -1 when it
 * is longer or cut off (then *v and *pp are unchanged). */
static PTC_INLINE int get_short_varint(const uint8_t **pp, const uint8_t *end, uint32_t *v)
{
    const uint8_t *p = *pp;
    uint32_t x = *p++;
    if (unlikely(x >= 0x80)) {
        if (p >= end || *p >= 0x80)
            return -1;
        x = (x & 0x7f) | (uint32_t)*p++ << 7;
    }
    *v = x;
    *pp = p;
    return 0;
}

PTC_NOINLINE int ptc_thread_hit(struct ptc_session *s, struct thread *t, uint32_t id)
{
    return apply_hit(s, t, t->proc->stubs, t->proc->nstubs, id);
}

/* The soft fast path for sessions with a call hook (see dec_stack.h). */
int ptc_thread_soft_hooked(struct ptc_session *s, struct thread *t, const uint8_t **pp,
                           const uint8_t *end, int timed, uint64_t *tsc, uint64_t *records)
{
    const uint8_t *p = *pp;
    const struct stubent *stubs = t->proc->stubs;
    uint32_t nstubs = t->proc->nstubs;
    uint64_t n = 0, now = *tsc;
    int r = 0;
    struct ptc_ev batch[256]; /* for the hit hook */
    size_t nb = 0;
    const int only = s->hits_only;
    while (p < end) {
        const uint8_t *rec = p;
        uint32_t v, d;
        if (unlikely(get_short_varint(&p, end, &v)) || unlikely(v < PTC_SOFT_ID_BASE)) {
            p = rec;
            break;
        }
        if (timed) {
            if (unlikely(p >= end) || unlikely(get_short_varint(&p, end, &d))) {
                p = rec;
                break;
            }
            now += (uint64_t)ptc_unzigzag(d);
            t->last = now;
        }
        n++;
        if (s->hit_hook) {
            batch[nb++] = (struct ptc_ev){.type = PTC_EV_HIT, .has_time = (uint8_t)timed,
                                          .size = (uint16_t)(p - rec),
                                          .stub_id = v - PTC_SOFT_ID_BASE,
                                          .tsc = timed ? now : 0};
            if (nb == sizeof(batch) / sizeof(batch[0])) {
                s->hit_hook(s->hit_ctx, t->pid, t->tid, batch, nb);
                nb = 0;
            }
            if (only)
                continue;
        }
        r = apply_hit(s, t, stubs, nstubs, v - PTC_SOFT_ID_BASE);
        if (unlikely(r))
            break;
    }
    if (nb)
        s->hit_hook(s->hit_ctx, t->pid, t->tid, batch, nb);
    *pp = p;
    *tsc = now;
    ptc_count_batch(s, t, n, timed, records);
    return r;
}

int ptc_stack_apply(struct ptc_session *s, struct thread *t, const struct ptc_ev *ev, size_t n,
                    size_t *done, uint64_t *hits, uint64_t *timed)
{
    struct proc *p = t->proc;
    const struct stubent *stubs = p->stubs;
    uint32_t nstubs = p->nstubs;
    uint64_t nhits = 0, ntimed = 0;
    size_t i = 0;
    int r = 0;
    if (unlikely(s->hit_hook != NULL)) {
        size_t k = 0;
        while (k < n && ev[k].type != PTC_EV_FORK)
            k++;
        if (k)
            s->hit_hook(s->hit_ctx, t->pid, t->tid, ev, k);
        if (s->hits_only) { /* count, keep the last time; no stack */
            for (; i < k; i++) {
                nhits += ev[i].type == PTC_EV_HIT;
                ntimed += ev[i].type == PTC_EV_HIT && ev[i].has_time;
                s->tot.gaps += ev[i].type == PTC_EV_GAP;
                if (ev[i].has_time)
                    t->last = ev[i].tsc;
            }
            *done = i;
            *hits += nhits;
            *timed += ntimed;
            return 0;
        }
    }
    for (; i < n; i++) {
        const struct ptc_ev *e = &ev[i];
        if (likely(e->type == PTC_EV_HIT)) {
            nhits++;
            if (e->has_time) {
                t->last = e->tsc;
                ntimed++;
            }
            if (unlikely((r = apply_hit(s, t, stubs, nstubs, e->stub_id))))
                break;
        } else if (e->type == PTC_EV_GAP) {
            gap(s, t, e->count);
            if (e->has_time)
                t->last = e->tsc;
        } else if (e->type == PTC_EV_FORK) {
            break;
        } else if (e->type == PTC_EV_MARK) { /* a place on the timeline; nothing changes */
            if (e->has_time) {
                mark_segment(s, t, e);
                t->last = e->tsc;
            }
            if (s->hook)
                ptc_emit(s, t, PTC_CALL_MARK, 0, t->depth, UINT32_MAX, 0, e->count, 0);
        } else if (e->type == PTC_EV_SPAWN) { /* a new program: nothing is inherited */
            if (e->has_time && e->tsc >= t->last)
                t->last = e->tsc;
            if (s->hook)
                ptc_emit(s, t, PTC_CALL_SPAWN, 0, t->depth, UINT32_MAX, 0, e->count, 0);
        } else {
            r = ptc_session_set_error(s, PTC_E_ARG, "event of unknown type %u", e->type);
            break;
        }
    }
    *done = i;
    *hits += nhits;
    *timed += ntimed;
    return r;
}

void ptc_thread_end(struct ptc_session *s, struct thread *t)
{
    if (t->waiting) { /* the parent's fork record may still come: end after the replay */
        t->end_pending = 1;
        return;
    }
    t->end_pending = 0;
    if (t->ended)
        return;
    /* frames still open when the thread's trace ended (blocked at the program's exit, a
     * detach, a snapshot) ran until then, not until its last event */
    if (t->depth && t->has_end && t->has_first && t->end_tsc > t->last)
        t->last = t->end_tsc;
    if (t->has_end) {
        t->still_open += t->depth;
        s->tot.still_open += t->depth;
    }
    close_all(s, t, PTC_RET_END);
    t->ended = 1;
    if (s->end_hook)
        s->end_hook(s->end_hook_ctx, t->pid, t->tid, &t->user);
    /* keep the small struct (counters); drop what grows */
    free(t->frames);
    t->frames = NULL;
    t->cap = 0;
    free(t->active);
    t->active = NULL;
    t->nactive = 0;
}

int ptc_session_add_loss(struct ptc_session *s, uint32_t pid, const struct ptc_loss *loss,
                         const char *note)
{
    (void)note;
    if (!s || !loss)
        return -PTC_E_ARG;
    if (loss->kind == PTC_LOSS_DROPPED || loss->kind == PTC_LOSS_CRASH ||
        loss->kind == PTC_LOSS_WRITE)
        s->tot.lost_events += loss->count;
    else
        s->tot.lost_other += loss->count;
    if (loss->tid) {
        struct thread *t = ptc_thread_get(s, pid, loss->tid);
        if (!t)
            return ptc_nomem(s);
        if (loss->kind == PTC_LOSS_DROPPED || loss->kind == PTC_LOSS_CRASH ||
            loss->kind == PTC_LOSS_WRITE)
            t->lost += loss->count;
        else
            t->gaps++;
    }
    return 0;
}
