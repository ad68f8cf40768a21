/* Windows of a trace at a level of detail decoded from the timeline's
 * index (ptcall/timeline.h): only the chunks of the wanted threads that overlap the window,
 * each thread started from the stack its first chunk begins with; every other chunk the
 * index names as setup (processes, modules, threads) is read in file order before them. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dec_chunk.h"
#include "dec_stack.h"
#include "dec_tables.h"
#include "dec_timeline.h"



uint64_t tl_first_reaching(const struct ptc_tl *x, uint32_t i, uint64_t t)
{
    const struct tl_thr *th = &x->thr[i];
    uint64_t lo = 0, hi = th->npoints;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (x->pts[th->point_at + mid].t1 < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* ---- a decode of chosen chunks ---- */

static int pick_cmp(const void *a, const void *b)
{
    const struct pick *x = a, *y = b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Starts thread t of track i at point p: the stack the index kept, its times in ticks. */
static int seed(struct ptc_session *s, struct thread *t, const struct ptc_tl *x,
                const struct tl_point *p)
{
    if (t->started || !p->started)
        return 0;
    t->started = 1;
    if (!p->depth)
        return 0;
    struct frame *fr = malloc(p->depth * sizeof(*fr));
    if (!fr)
        return ptc_nomem(s);
    for (uint32_t k = 0; k < p->depth; k++) {
        const struct tl_frame *f = &x->frames[p->frame_at + k];
        fr[k] = (struct frame){.func = f->func, .flags = f->flags, .start = f->start,
                               .child = f->child};
        if (f->func >= s->nfuncs) {
            free(fr);
            return ptc_session_set_error(s, PTC_E_CORRUPT, "the timeline index names function "
                                         "%u, which the trace does not have", f->func);
        }
    }
    int e = ptc_thread_start_from(s, t, fr, p->depth);
    for (uint32_t k = 0; !e && k < p->depth; k++) { /* times in callees so far, its flags */
        t->frames[k].child = fr[k].child;
        t->frames[k].flags = fr[k].flags;
    }
    t->last = p->depth ? fr[p->depth - 1].start : 0;
    free(fr);
    return e;
}

int tl_decode_picks(const struct ptc_tl *x, struct ptc_session *s, const char *trace,
                        const struct pick *pk, size_t np, const int *stop, char *err, size_t n)
{
    if (!np)
        return 0;
    struct ptc_reader *r;
    int rc = ptc_reader_open(&r, trace);
    if (!r)
        return tl_fail(err, n, -PTC_E_NOMEM, "out of memory");
    if (rc) {
        tl_fail(err, n, rc, "%s", ptc_reader_errmsg(r));
        ptc_reader_close(r);
        return rc;
    }
    s->src_name = trace;
    const struct ptc_file_header *fh = ptc_reader_header(r);
    s->backend = fh->backend;
    s->file_flags = fh->flags;
    s->created_ns = fh->created_ns;
    uint64_t last = pk[np - 1].offset, su = 0;
    size_t k = 0;
    while (!rc && k < np && !*stop) {
        int is_setup = su < x->h.nsetup && x->setup[su].offset < pk[k].offset;
        uint64_t off = is_setup ? x->setup[su].offset : pk[k].offset;
        uint64_t idx = is_setup ? x->setup[su].index : pk[k].index;
        if (off > last)
            break;
        struct ptc_chunk c;
        if ((rc = ptc_reader_seek(r, off, idx)) || (rc = ptc_reader_next(r, &c)) != 1) {
            tl_fail(err, n, rc ? rc : -PTC_E_TRUNCATED, "%s: %s", trace,
                 rc ? ptc_reader_errmsg(r) : "it ends where its timeline index has a chunk: "
                 "it changed since the index was built");
            rc = rc ? rc : -PTC_E_TRUNCATED;
            break;
        }
        rc = 0;
        struct thread *t = c.h.tid ? ptc_thread_get(s, c.h.pid, c.h.tid) : NULL;
        if (c.h.tid && !t) {
            rc = tl_fail(err, n, -PTC_E_NOMEM, "out of memory");
            break;
        }
        if (t) { /* chunks left out in between are not missing */
            t->seq_seen = 1;
            t->next_seq = c.h.seq;
        }
        if (!is_setup) {
            if (c.h.type != PTC_CHUNK_SOFT_EVENTS || !t) {
                rc = tl_fail(err, n, -PTC_E_CORRUPT, "%s: chunk %llu is not the events its "
                          "timeline index says: the trace changed since the index was built",
                          trace, (unsigned long long)idx);
                break;
            }
            t->user = pk[k].thread + 1;
            if ((rc = seed(s, t, x, &x->pts[pk[k].point]))) {
                tl_fail(err, n, rc, "%s", ptc_session_errmsg(s));
                break;
            }
            k++;
        } else {
            su++;
        }
        if ((rc = ptc_session_chunk(s, &c)))
            tl_fail(err, n, rc, "%s", ptc_session_errmsg(s));
    }
    ptc_reader_close(r);
    return rc;
}

/* ---- level of detail ---- */

struct pend {               /* calls narrower than a pixel being merged, at one depth */
    struct ptc_tl_item it;
    uint64_t w;             /* the dominant function's vote */
    int on;
};

struct lod {
    const struct ptc_tl *x;
    const struct ptc_tl_query *q;
    ptc_tl_emit_fn fn;
    void *ctx;
    struct pend **pend;     /* per track, per depth */
    uint32_t *npend;
    uint32_t ntracks;
    int rc;
    struct ptc_session *s;
};

static int wide(const struct lod *l, uint64_t a, uint64_t b)
{
    return (b - a) * (unsigned __int128)l->q->px >= (l->q->t1 - l->q->t0);
}

/* An item out to the view, marked blocked when its function (a block's dominant one) is a
 * blocking call's. */
static void emit(struct lod *l, uint32_t i, struct ptc_tl_item *it)
{
    if (ptc_tl_func_blocking(l->x, it->func))
        it->flags |= PTC_TL_BLOCKED;
    l->rc = l->fn(l->ctx, i, it);
}

static void flush(struct lod *l, uint32_t i, struct pend *p)
{
    if (!p->on || l->rc)
        return;
    if (p->it.count > 1)
        p->it.flags |= PTC_TL_BLOCK;
    emit(l, i, &p->it);
    p->on = 0;
}

/* One call or block (count > 1) of track i into the view: itself when a pixel wide or
 * more, else merged with its narrow neighbours at its depth. */
static void lod_add(struct lod *l, uint32_t i, const struct ptc_tl_item *in)
{
    if (l->rc)
        return;
    struct ptc_tl_item one = *in, *it = &one;
    if (it->depth >= l->npend[i]) {
        uint32_t cap = it->depth + 16;
        struct pend *np = realloc(l->pend[i], cap * sizeof(*np));
        if (!np) {
            l->rc = -PTC_E_NOMEM;
            return;
        }
        memset(np + l->npend[i], 0, (cap - l->npend[i]) * sizeof(*np));
        l->pend[i] = np;
        l->npend[i] = cap;
    }
    struct pend *p = &l->pend[i][it->depth];
    if (wide(l, it->start, it->end)) {
        flush(l, i, p);
        if (!l->rc)
            emit(l, i, it);
        return;
    }
    if (p->on && !wide(l, p->it.end, it->start > p->it.end ? it->start : p->it.end)) {
        p->it.end = it->end > p->it.end ? it->end : p->it.end;
        p->it.count += it->count;
        p->it.busy += it->busy;
        p->it.flags |= it->flags & PTC_TL_CLIP_RIGHT;
        uint64_t d = it->busy;
        if (p->it.func == it->func)
            p->w += d;
        else if (p->w >= d)
            p->w -= d;
        else {
            p->it.func = it->func;
            p->w = d - p->w;
        }
        return;
    }
    flush(l, i, p);
    p->it = *it;
    p->w = it->busy;
    p->on = 1;
}

static void lod_flush_all(struct lod *l)
{
    for (uint32_t i = 0; i < l->ntracks; i++)
        for (uint32_t d = 0; d < l->npend[i]; d++)
            flush(l, i, &l->pend[i][d]);
}

/* A call [start, end) of track i clipped to the window. */
static void lod_call(struct lod *l, uint32_t i, uint32_t func, uint32_t depth, uint64_t start,
                     uint64_t end, unsigned flags)
{
    const struct ptc_tl_query *q = l->q;
    if (end <= q->t0 || start >= q->t1 || (end == start && start < q->t0))
        return;
    struct ptc_tl_item it = {.start = start, .end = end, .count = 1, .func = func,
                             .depth = depth, .flags = flags};
    if (it.start < q->t0) {
        it.start = q->t0;
        it.flags |= PTC_TL_CLIP_LEFT;
    }
    if (it.end > q->t1) {
        it.end = q->t1;
        it.flags |= PTC_TL_CLIP_RIGHT;
    }
    it.busy = it.end - it.start;
    lod_add(l, i, &it);
}

static void on_window_call(void *ctx, const struct ptc_call_event *e)
{
    struct lod *l = ctx;
    uintptr_t u = *e->thread_user;
    if (e->kind != PTC_CALL_RETURN || !u || u > l->ntracks)
        return;
    lod_call(l, (uint32_t)(u - 1), e->func, e->depth, tl_popped_start(l->s, e), e->time, 0);
}

/* The index's answer for a wide window: each thread's long calls, and its chunks' summaries
 * as blocks. */
static int from_summaries(const struct ptc_tl *x, struct lod *l)
{
    const struct ptc_tl_query *q = l->q;
    for (uint32_t i = 0; i < x->h.nthreads && !l->rc; i++) {
        if (q->threads && !q->threads[i])
            continue;
        const struct tl_thr *th = &x->thr[i];
        for (uint64_t k = tl_first_reaching(x, i, q->t0);
             k < th->npoints && x->pts[th->point_at + k].t0 < q->t1 && !l->rc; k++) {
            const struct tl_point *p = &x->pts[th->point_at + k];
            for (uint32_t d = 0; d < p->nsum; d++) {
                const struct tl_sum *s = &x->sums[p->sum_at + d];
                if (!s->count)
                    continue;
                struct ptc_tl_item it = {.start = p->t0 > q->t0 ? p->t0 : q->t0,
                                         .end = p->t1 < q->t1 ? p->t1 : q->t1,
                                         .count = s->count, .busy = s->busy, .func = s->func,
                                         .depth = d, .flags = PTC_TL_BLOCK};
                if (it.end <= it.start)
                    it.end = it.start + 1;
                lod_add(l, i, &it);
            }
        }
        lod_flush_all(l);
        for (uint64_t k = 0; k < th->nbig && !l->rc; k++) {
            const struct tl_big *g = &x->bigs[th->big_at + k];
            if (g->end > q->t0 && g->start < q->t1 && wide(l, g->start, g->end))
                lod_call(l, i, g->func, g->depth, g->start, g->end, 0);
        }
        lod_flush_all(l);
    }
    return l->rc;
}

int ptc_tl_window(const struct ptc_tl *x, const char *trace, const struct ptc_tl_query *q,
                  ptc_tl_emit_fn fn, void *ctx, int *summarised, char *err, size_t n)
{
    *err = 0;
    *summarised = 0;
    if (q->t1 <= q->t0 || q->px < 1 || q->px > 100000)
        return tl_fail(err, n, -PTC_E_ARG, "a window needs t0 < t1 and 1 <= px <= 100000");
    uint32_t nt = x->h.nthreads;
    struct lod l = {.x = x, .q = q, .fn = fn, .ctx = ctx, .ntracks = nt};
    l.pend = calloc(nt ? nt : 1, sizeof(*l.pend));
    l.npend = calloc(nt ? nt : 1, sizeof(*l.npend));
    /* the chunks to decode, and whether the index may answer instead */
    uint64_t bytes = 0, npick = 0;
    for (uint32_t i = 0; i < nt; i++) {
        if (q->threads && !q->threads[i])
            continue;
        const struct tl_thr *th = &x->thr[i];
        for (uint64_t k0 = tl_first_reaching(x, i, q->t0), k = k0;
             k < th->npoints && (k == k0 || x->pts[th->point_at + k].t0 < q->t1); k++) {
            bytes += x->pts[th->point_at + k].bytes;
            npick++;
        }
    }
    uint64_t budget = q->decode_budget ? q->decode_budget : TL_DEFAULT_BUDGET;
    int rc = 0;
    if (!l.pend || !l.npend) {
        rc = tl_fail(err, n, -PTC_E_NOMEM, "out of memory");
    } else if (bytes > budget) {
        /* the index answers, however wide the window: calls shorter than a thread's big_min
         * but wider than a pixel are in its summary blocks (zoom in to see them) */
        *summarised = 1;
        if ((rc = from_summaries(x, &l)))
            tl_fail(err, n, rc, "%s", rc == -PTC_E_NOMEM ? "out of memory" : "the view stopped");
    } else {
        struct pick *pk = malloc((npick ? npick : 1) * sizeof(*pk));
        struct ptc_session *s = ptc_session_new();
        size_t np = 0;
        if (!pk || !s) {
            rc = tl_fail(err, n, -PTC_E_NOMEM, "out of memory");
        } else {
            for (uint32_t i = 0; i < nt; i++) {
                if (q->threads && !q->threads[i])
                    continue;
                const struct tl_thr *th = &x->thr[i];
                /* the first chunk reaching the window even when it begins after it: the
                 * stack it starts with holds the calls that span the window (a thread
                 * descheduled or blocked meanwhile) */
                for (uint64_t k0 = tl_first_reaching(x, i, q->t0), k = k0;
                     k < th->npoints && (k == k0 || x->pts[th->point_at + k].t0 < q->t1);
                     k++) {
                    const struct tl_point *p = &x->pts[th->point_at + k];
                    pk[np++] = (struct pick){.offset = p->offset, .index = p->index,
                                             .thread = i, .point = th->point_at + k};
                }
            }
            qsort(pk, np, sizeof(*pk), pick_cmp);
            ptc_session_skip_aggregates(s);
            ptc_session_set_call_hook(s, on_window_call, &l);
            l.s = s;
            int stop = 0;
            rc = tl_decode_picks(x, s, trace, pk, np, &stop, err, n);
            if (!rc && l.rc)
                rc = tl_fail(err, n, l.rc, "the view stopped");
            /* calls still open at the window's end (or the trace's) */
            for (uint32_t i = 0; !rc && i < nt; i++) {
                if (q->threads && !q->threads[i])
                    continue;
                struct thread *t = ptc_thread_find(s, x->thr[i].pid, x->thr[i].tid);
                if (!t || t->user != i + 1 || !t->started)
                    continue;
                for (uint32_t d = 0; d < t->depth; d++) {
                    uint64_t st = ptc_event_time(s, t->proc, t->frames[d].start);
                    /* the window's chunks may end before the thread's last event (its next
                     * chunk starts past t1): the index knows where the thread ends, and a
                     * call still open then lasts until there, as in a whole decode */
                    uint64_t last = ptc_event_time(s, t->proc, t->last);
                    if (x->thr[i].last > last)
                        last = x->thr[i].last;
                    int open_past = last >= q->t1;
                    lod_call(&l, i, t->frames[d].func, d, st, open_past ? q->t1 + 1 : last,
                             open_past ? PTC_TL_CLIP_RIGHT : 0);
                }
            }
            lod_flush_all(&l);
            if (!rc && l.rc)
                rc = tl_fail(err, n, l.rc, "the view stopped");
        }
        free(pk);
        ptc_session_free(s);
    }
    for (uint32_t i = 0; l.pend && i < nt; i++)
        free(l.pend[i]);
    free(l.pend);
    free(l.npend);
    return rc;
}
