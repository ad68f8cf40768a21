/* The soft front-end's specialised loop: stub hits straight from the chunk bytes to the
 * shadow stack, for sessions without a call hook (report, graph, stat-like queries).
 *
 * Why a second loop: ptc_thread_soft_hooked() keeps the stack in struct thread and
 * re-reads depth, last time, the frame array and the hook through pointers on every event,
 * because any store into the statistics might alias them. Here the stack's state lives in
 * locals (registers) and only the two cases that make up almost every event are done
 * inline: the ENTRY of a function with room on the stack and a cached caller->callee edge,
 * the whole CALL of a leaf (untimed traces) with a cached edge, and the EXIT of the function
 * on top. Everything else (unwind, landing, repairs,
 * unmatched exits, bad ids, stack growth, edge misses) writes the locals back and goes
 * through ptc_thread_hit(), the one general implementation, so that the semantics stay in
 * stack.c. A session with a call hook takes the general loop, so test/decoder/test_fastpath.c
 * compares the two by decoding the same traces with and without a no-op hook. */
#include "dec_soft.h"
#include "dec_stack.h"
#include "ptc_varint.h"

/* A record whose id or time delta has the high bit set (2..10 bytes): decodes the id (v)
 * and delta at p. Returns the end of the record, or NULL when it is cut off or longer than
 * a varint may be (the caller leaves it to soft.c, which reports it). */
static PTC_NOINLINE const uint8_t *long_record(const uint8_t *p, const uint8_t *end, int timed,
                                               uint64_t *v, uint64_t *d)
{
    *d = 0;
    if (ptc_varint_get(&p, end, v) || (timed && ptc_varint_get(&p, end, d)))
        return NULL;
    if (*v >= PTC_SOFT_ID_BASE && *v - PTC_SOFT_ID_BASE > UINT32_MAX)
        return NULL; /* an id out of range: corrupt */
    return p;
}

/* The stack of the thread being decoded, held in locals; sync() and load() move it from
 * and to struct thread around calls into stack.c. */
struct cursor {
    struct frame *fr;
    uint32_t depth, cap;
    uint32_t top;           /* fr[depth - 1].func, kept apart: the next entry's caller */
    uint32_t *active;
    uint32_t nactive;
};

static PTC_INLINE void load(struct cursor *c, const struct thread *t)
{
    c->fr = t->frames;
    c->depth = t->depth;
    c->cap = t->cap;
    c->top = t->depth ? t->frames[t->depth - 1].func : UINT32_MAX;
    c->active = t->active;
    c->nactive = t->nactive;
}

/* timed is a constant in each instantiation below: untimed traces skip all time keeping
 * (their deltas are absent, so every duration is 0 unless an earlier timed chunk of the
 * same thread left frames open with an older start time; that case is kept exact). */
static PTC_INLINE int soft_loop(struct ptc_session *s, struct thread *t, const uint8_t **pp,
                                const uint8_t *end, const int timed, uint64_t *tsc,
                                uint64_t *records)
{
    const uint8_t *p = *pp;
    const struct stubent *const stubs = t->proc->stubs;
    const uint32_t nstubs = t->proc->nstubs;
    struct fstat *fs = s->fstats;
    struct ecache *ecs = s->ecache;
    struct cursor c;
    load(&c, t);
    uint64_t now = timed ? *tsc : t->last, n = 0, base = t->base_child, whole = 0;
    int r = 0;
    while (likely(p < end)) {
        uint64_t v = p[0], d = 0;
        const uint8_t *q = p + 1;
        if (timed) {
            if (likely(q < end))
                d = *q++;
            else
                d = 0x80; /* cut off: long_record() says so */
        }
        if (unlikely((v | d) & 0x80)) {
            q = long_record(p, end, timed, &v, &d);
            if (!q)
                break;
        }
        if (unlikely(v < PTC_SOFT_ID_BASE))
            break; /* a control record: soft.c */
        uint64_t id = v - PTC_SOFT_ID_BASE;
        if (timed)
            now += (uint64_t)ptc_unzigzag(d);
        n++;
        p = q;
        struct stubent se = id < nstubs ? stubs[id] : (struct stubent){.kind = STUB_NONE};
        uint32_t f = se.func;
        if (se.kind == PTCALL_STUB_ENTRY) {
            if (likely(c.depth && c.depth < c.cap && f < c.nactive)) {
                struct ecache *ec = &ecs[c.top];
                if (likely(ec->callee1 == f + 1)) {
                    ec->pending++;
                    c.top = f;
                    struct frame *fr = &c.fr[c.depth++];
                    fr->func = f;
                    fr->flags = 0;
                    fr->start = now;
                    fr->child = 0;
                    c.active[f]++;
                    fs[f].calls++;
                    continue;
                }
            }
        } else if (se.kind == PTC_STUB_CALL) {
            /* a leaf's call and return in one record: its calls and the edge from the
             * caller; no frame (the duration is 0, and so is what it adds to the caller) */
            if (likely(c.depth && f < c.nactive)) {
                struct ecache *ec = &ecs[c.top];
                if (likely(ec->callee1 == f + 1)) {
                    ec->pending++;
                    fs[f].calls++;
                    whole++;
                    continue;
                }
            }
        } else if (se.kind == PTCALL_STUB_EXIT) {
            if (likely(c.top == f)) { /* top is UINT32_MAX on an empty stack */
                struct frame *fr = &c.fr[--c.depth];
                uint32_t left = --c.active[f];
                if (timed || unlikely(now != fr->start)) {
                    uint64_t dur = now > fr->start ? now - fr->start : 0;
                    struct fstat *st = &fs[f];
                    st->self += dur - (fr->child < dur ? fr->child : dur);
                    st->total += left ? 0 : dur;
                    /* the caller's child time; at depth 0, that of a call entered
                     * before the window that may return later (stack.c) */
                    *(c.depth ? &fr[-1].child : &base) += dur;
                }
                c.top = c.depth ? fr[-1].func : UINT32_MAX;
                continue;
            }
        }
        /* everything else: the general code, on the thread's own fields */
        t->depth = c.depth;
        t->last = now;
        t->base_child = base;
        r = ptc_thread_hit(s, t, (uint32_t)id);
        base = t->base_child;
        load(&c, t);
        fs = s->fstats;
        ecs = s->ecache;
        if (unlikely(r))
            break;
    }
    t->depth = c.depth;
    t->base_child = base;
    if (timed && n) /* untouched without a hit: a gap record that follows closes at the last one */
        t->last = now;
    *pp = p;
    if (timed)
        *tsc = now;
    ptc_count_batch(s, t, n, timed, records);
    ptc_count_whole(s, t, whole);
    return r;
}

int ptc_thread_soft_fast(struct ptc_session *s, struct thread *t, const uint8_t **pp,
                         const uint8_t *end, int timed, uint64_t *tsc, uint64_t *records)
{
    if (s->hook || s->hit_hook)
        return ptc_thread_soft_hooked(s, t, pp, end, timed, tsc, records);
    return timed ? soft_loop(s, t, pp, end, 1, tsc, records)
                 : soft_loop(s, t, pp, end, 0, tsc, records);
}
