/* One call of a thread at a time and depth (ptc_tl_call_at, ptcall/timeline.h), exact however
 * long it runs at a bounded cost: the chunk holding the time is decoded to tell which call it
 * is; a call that spans chunks is then counted in three parts: its first chunks decoded (up
 * to the budget: its callees by function), its middle from the index's per-chunk summaries
 * of the depth below it (every call that returned there at that depth is its callee), and
 * the chunk it returns in, decoded from the stack the index kept at that chunk's start. */
#include <stdlib.h>
#include <string.h>

#include "dec_tables.h"
#include "dec_timeline.h"

enum { LOCATE, COUNT };

struct finder {
    int mode;               /* LOCATE: the call running at t; COUNT: the first call to return */
    uint32_t track, depth;
    uint64_t t;
    int found, past, entered;
    int done;               /* the decode may stop */
    struct ptc_tl_call *out; /* children, calls; on found: func, start, end */
    uint64_t child_total;
    struct ptc_session *s;
};

static void child_add(struct ptc_tl_call *c, uint32_t func, uint64_t dur)
{
    c->calls++;
    c->children_calls++;
    for (uint32_t k = 0; k < c->nchildren; k++)
        if (c->children[k].func == func) {
            c->children[k].calls++;
            c->children[k].total += dur;
            return;
        }
    if (c->nchildren < PTC_TL_MAX_CHILDREN) {
        c->children[c->nchildren].func = func;
        c->children[c->nchildren].calls = 1;
        c->children[c->nchildren].total = dur;
        c->nchildren++;
    }
}

static void reset(struct finder *f)
{
    struct ptc_tl_call *o = f->out;
    o->calls = o->children_calls = 0;
    o->nchildren = 0;
    f->child_total = 0;
}

static void on_find_call(void *ctx, const struct ptc_call_event *e)
{
    struct finder *f = ctx;
    if (*e->thread_user != f->track + 1 || f->done)
        return;
    if (e->kind == PTC_CALL_ENTER && e->depth == f->depth) {
        reset(f);
        f->entered = 1;
        if (f->mode == LOCATE && e->time > f->t)
            f->past = 1;
    } else if (e->kind == PTC_CALL_RETURN && e->depth == f->depth + 1) {
        uint64_t dur = e->time - tl_popped_start(f->s, e);
        child_add(f->out, e->func, dur);
        f->child_total += dur;
    } else if (e->kind == PTC_CALL_RETURN && e->depth == f->depth) {
        uint64_t start = tl_popped_start(f->s, e), dur = e->time - start;
        /* COUNT: t is the call's start; a call at its depth before it returns first */
        if (f->mode == COUNT ? start >= f->t : start <= f->t && f->t < e->time + (dur == 0)) {
            f->found = 1;
            f->out->func = e->func;
            f->out->start = start;
            f->out->end = e->time;
        } else if (f->mode == LOCATE && start > f->t) {
            f->past = 1;
        } else {
            reset(f); /* returned before t: the next call at that depth may be it */
            f->entered = 0;
        }
    } else if (f->mode == LOCATE && e->kind == PTC_CALL_RETURN && e->depth < f->depth &&
               e->time > f->t) {
        f->past = 1; /* its caller returned: no call at that depth at t */
    }
    f->done = f->found || f->past;
}

static int by_total(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)((const char *)a + 16);
    const uint64_t y = *(const uint64_t *)((const char *)b + 16);
    return x > y ? -1 : x < y;
}

/* Whether point p's stack holds, at depth d, the frame that began at ticks start. */
static int holds(const struct ptc_tl *x, const struct tl_point *p, uint32_t d, uint64_t start)
{
    return p->depth > d && x->frames[p->frame_at + d].start == start;
}

/* Decodes points [k0, k1] of thread (relative indexes) in a fresh session with finder f (its
 * mode, out and counts set by the caller); on a call still open at the end, *open_start and
 * *open_end are its times and *open_func its function (else *open_func is UINT32_MAX). */
static int decode_range(const struct ptc_tl *x, const char *trace, uint32_t thread, uint64_t k0,
                        uint64_t k1, struct finder *f, uint32_t *open_func, uint64_t *open_start,
                        uint64_t *open_end, char *err, size_t n)
{
    const struct tl_thr *th = &x->thr[thread];
    uint64_t np = k1 - k0 + 1;
    struct pick *pk = malloc(np * sizeof(*pk));
    struct ptc_session *s = ptc_session_new();
    int rc = 0;
    *open_func = UINT32_MAX;
    if (!pk || !s) {
        rc = tl_fail(err, n, -PTC_E_NOMEM, "out of memory");
    } else {
        for (uint64_t j = 0; j < np; j++) {
            const struct tl_point *q = &x->pts[th->point_at + k0 + j];
            pk[j] = (struct pick){.offset = q->offset, .index = q->index, .thread = thread,
                                  .point = th->point_at + k0 + j};
        }
        ptc_session_skip_aggregates(s);
        ptc_session_set_call_hook(s, on_find_call, f);
        f->s = s;
        rc = tl_decode_picks(x, s, trace, pk, np, &f->done, err, n);
        struct thread *tt = rc || f->done ? NULL : ptc_thread_find(s, th->pid, th->tid);
        if (tt && tt->started && tt->depth > f->depth) {
            const struct frame *fr = &tt->frames[f->depth];
            *open_func = fr->func;
            *open_start = ptc_event_time(s, tt->proc, fr->start);
            *open_end = ptc_event_time(s, tt->proc, tt->last);
        }
    }
    free(pk);
    ptc_session_free(s);
    f->s = NULL;
    return rc;
}

int ptc_tl_call_at(const struct ptc_tl *x, const char *trace, uint32_t thread, uint64_t t,
                   uint32_t depth, uint64_t budget, struct ptc_tl_call *out, char *err, size_t n)
{
    *err = 0;
    memset(out, 0, sizeof(*out));
    out->depth = depth;
    if (thread >= x->h.nthreads)
        return tl_fail(err, n, -PTC_E_ARG, "no thread %u in this trace", thread);
    if (!budget)
        budget = TL_DEFAULT_BUDGET;
    const struct tl_thr *th = &x->thr[thread];
    const struct tl_point *P = x->pts + th->point_at;
    if (!th->npoints)
        return 1;
    /* the chunk holding t: decoded alone to tell which call runs there */
    uint64_t k = tl_first_reaching(x, thread, t);
    if (k >= th->npoints)
        k = th->npoints - 1;
    if (k > 0 && P[k].t0 > t)
        k--;
    struct finder f = {.mode = LOCATE, .track = thread, .depth = depth, .t = t, .out = out};
    uint32_t ofunc;
    uint64_t ostart = 0, oend = 0;
    int rc = decode_range(x, trace, thread, k, k, &f, &ofunc, &ostart, &oend, err, n);
    if (rc)
        return rc;
    if (f.past || (!f.found && (ofunc == UINT32_MAX || ostart > t)))
        return 1;
    if (!(f.found && f.entered)) { /* it spans chunks: where it began, where it returns */
        uint64_t start = f.found ? out->start : ostart;
        uint64_t ke = k, kr = k;
        if (!f.entered && P[k].depth > depth) {
            uint64_t st = x->frames[P[k].frame_at + depth].start;
            while (ke > 0 && holds(x, &P[ke - 1], depth, st))
                ke--;
            if (ke > 0)
                ke--; /* the chunk it was entered in */
        }
        if (!f.found && k + 1 < th->npoints && P[k + 1].depth > depth) {
            uint64_t st = x->frames[P[k + 1].frame_at + depth].start;
            while (kr + 1 < th->npoints && holds(x, &P[kr + 1], depth, st))
                kr++;
        }
        /* its first chunks, as many as the budget allows (all when the depth below it has
         * no summaries) */
        uint64_t kp = ke, bytes = P[ke].bytes;
        int sums = depth + 1 < PTC_TL_SUM_DEPTH;
        while (kp < kr && (!sums || bytes + P[kp + 1].bytes <= budget))
            bytes += P[++kp].bytes;
        memset(out, 0, sizeof(*out));
        out->depth = depth;
        f = (struct finder){.mode = COUNT, .track = thread, .depth = depth, .t = start,
                            .out = out};
        if ((rc = decode_range(x, trace, thread, ke, kp, &f, &ofunc, &ostart, &oend, err, n)))
            return rc;
        uint64_t child_total = f.child_total;
        if (!f.found && kp < kr) {
            for (uint64_t j = kp + 1; j < kr; j++) { /* its middle, from the summaries */
                const struct tl_point *p = &P[j];
                if (p->nsum > depth + 1) {
                    const struct tl_sum *sm = &x->sums[p->sum_at + depth + 1];
                    out->calls += sm->count;
                    child_total += sm->busy;
                }
            }
            /* the chunk it returns in (or its thread's last), from the index's stack */
            struct finder g = {.mode = COUNT, .track = thread, .depth = depth, .t = start,
                               .out = out};
            if ((rc = decode_range(x, trace, thread, kr, kr, &g, &ofunc, &ostart, &oend, err,
                                   n)))
                return rc;
            child_total += g.child_total;
            f.found = g.found;
        }
        if (!f.found) {
            if (ofunc == UINT32_MAX)
                return 1;
            out->func = ofunc; /* still open where its thread's trace ends */
            out->end = oend;
            out->open = 1;
        }
        out->start = start;
        out->dur = out->end - out->start;
        out->self = out->dur > child_total ? out->dur - child_total : 0;
    } else {
        out->dur = out->end - out->start;
        out->self = out->dur > f.child_total ? out->dur - f.child_total : 0;
    }
    out->blocking = ptc_tl_func_blocking(x, out->func);
    qsort(out->children, out->nchildren, sizeof(out->children[0]), by_total);
    return 0;
}
