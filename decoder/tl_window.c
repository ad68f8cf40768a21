/* Windows of a trace at a level of detail, and single calls, decoded from the timeline's
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

#define DEFAULT_BUDGET (8ull << 20)


/* The entry time of the call a RETURN event e just popped, converted as its exit time is, so
 * that durations are differences of times as every other view (outputs/driver.c) has them. */
static uint64_t popped_start(struct ptc_session *s, const struct ptc_call_event *e)
{
    struct thread *t = ptc_thread_find(s, e->pid, e->tid);
    if (!t || e->depth >= t->cap)
        return e->time - e->dur;
    return ptc_event_time(s, t->proc, t->frames[e->depth].start);
}

/* The first point of thread i whose events reach t (points are in time order). */
static uint64_t first_reaching(const struct ptc_tl *x, uint32_t i, uint64_t t)
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

struct pick {               /* an event chunk to decode */
    uint64_t offset, index;
    uint32_t thread;
    uint64_t point;         /* absolute index into x->pts */
};

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

/* Decodes the setup chunks and picks[0, np) (sorted) into s, whose call hook collects; the
 * hook's per-thread word is the track + 1. stop, when it becomes nonzero, ends the decode
 * after the chunk that set it. */
static int decode_picks(const struct ptc_tl *x, struct ptc_session *s, const char *trace,
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

static void flush(struct lod *l, uint32_t i, struct pend *p)
{
    if (!p->on || l->rc)
        return;
    if (p->it.count > 1)
        p->it.flags |= PTC_TL_BLOCK;
    l->rc = l->fn(l->ctx, i, &p->it);
    p->on = 0;
}

/* One call or block (count > 1) of track i into the view: itself when a pixel wide or
 * more, else merged with its narrow neighbours at its depth. */
static void lod_add(struct lod *l, uint32_t i, const struct ptc_tl_item *it)
{
    if (l->rc)
        return;
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
            l->rc = l->fn(l->ctx, i, it);
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
    lod_call(l, (uint32_t)(u - 1), e->func, e->depth, popped_start(l->s, e), e->time, 0);
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
        for (uint64_t k = first_reaching(x, i, q->t0);
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
    struct lod l = {.q = q, .fn = fn, .ctx = ctx, .ntracks = nt};
    l.pend = calloc(nt ? nt : 1, sizeof(*l.pend));
    l.npend = calloc(nt ? nt : 1, sizeof(*l.npend));
    /* the chunks to decode, and whether the index may answer instead */
    uint64_t bytes = 0, npick = 0;
    int summary_ok = 1;
    uint64_t per_px = (q->t1 - q->t0) / q->px;
    for (uint32_t i = 0; i < nt; i++) {
        if (q->threads && !q->threads[i])
            continue;
        const struct tl_thr *th = &x->thr[i];
        for (uint64_t k0 = first_reaching(x, i, q->t0), k = k0;
             k < th->npoints && (k == k0 || x->pts[th->point_at + k].t0 < q->t1); k++) {
            bytes += x->pts[th->point_at + k].bytes;
            npick++;
        }
        if (th->big_min > per_px)
            summary_ok = 0; /* calls a pixel wide would be missing */
    }
    uint64_t budget = q->decode_budget ? q->decode_budget : DEFAULT_BUDGET;
    int rc = 0;
    if (!l.pend || !l.npend) {
        rc = tl_fail(err, n, -PTC_E_NOMEM, "out of memory");
    } else if (bytes > budget && summary_ok) {
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
                for (uint64_t k0 = first_reaching(x, i, q->t0), k = k0;
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
            rc = decode_picks(x, s, trace, pk, np, &stop, err, n);
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
                    uint64_t last = ptc_event_time(s, t->proc, t->last);
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

/* ---- one call ---- */

struct finder {
    uint32_t track, depth;
    uint64_t t;
    int found, past;
    int done;               /* found or past: the decode may stop */
    struct ptc_tl_call *out;
    uint64_t child_total;
    struct ptc_session *s;
};

static void child_add(struct ptc_tl_call *c, uint32_t func, uint64_t dur)
{
    c->calls++;
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

static void on_find_call(void *ctx, const struct ptc_call_event *e)
{
    struct finder *f = ctx;
    if (*e->thread_user != f->track + 1 || f->found || f->past)
        return;
    if (e->kind == PTC_CALL_ENTER && e->depth == f->depth) {
        uint32_t d = f->depth;
        memset(f->out, 0, sizeof(*f->out));
        f->out->depth = d;
        f->child_total = 0;
        if (e->time > f->t)
            f->past = 1;
    } else if (e->kind == PTC_CALL_RETURN && e->depth == f->depth + 1) {
        uint64_t dur = e->time - popped_start(f->s, e);
        child_add(f->out, e->func, dur);
        f->child_total += dur;
    } else if (e->kind == PTC_CALL_RETURN && e->depth == f->depth) {
        uint64_t start = popped_start(f->s, e), dur = e->time - start;
        if (start <= f->t && f->t < e->time + (dur == 0)) {
            f->found = 1;
            f->out->func = e->func;
            f->out->start = start;
            f->out->end = e->time;
            f->out->dur = dur;
            f->out->self = dur > f->child_total ? dur - f->child_total : 0;
        } else if (start > f->t) {
            f->past = 1;
        }
    } else if (e->kind == PTC_CALL_RETURN && e->depth < f->depth && e->time > f->t) {
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

int ptc_tl_call_at(const struct ptc_tl *x, const char *trace, uint32_t thread, uint64_t t,
                   uint32_t depth, struct ptc_tl_call *out, char *err, size_t n)
{
    *err = 0;
    memset(out, 0, sizeof(*out));
    if (thread >= x->h.nthreads)
        return tl_fail(err, n, -PTC_E_ARG, "no thread %u in this trace", thread);
    const struct tl_thr *th = &x->thr[thread];
    if (!th->npoints)
        return 1;
    /* the chunk in which that call was entered: walk back while it is on the stack */
    uint64_t k = first_reaching(x, thread, t);
    if (k >= th->npoints)
        k = th->npoints - 1;
    if (k > 0 && x->pts[th->point_at + k].t0 > t)
        k--;
    const struct tl_point *p = &x->pts[th->point_at + k];
    if (p->depth > depth) {
        uint64_t start = x->frames[p->frame_at + depth].start;
        while (k > 0) {
            const struct tl_point *q = &x->pts[th->point_at + k - 1];
            k--;
            if (!(q->depth > depth && x->frames[q->frame_at + depth].start == start))
                break;
        }
    }
    /* decode from there until it returned */
    uint64_t npk = th->npoints - k;
    struct pick *pk = malloc(npk * sizeof(*pk));
    struct ptc_session *s = ptc_session_new();
    struct finder f = {.track = thread, .depth = depth, .t = t, .out = out, .s = s};
    int rc = 0;
    if (!pk || !s) {
        rc = tl_fail(err, n, -PTC_E_NOMEM, "out of memory");
    } else {
        for (uint64_t j = 0; j < npk; j++) {
            const struct tl_point *q = &x->pts[th->point_at + k + j];
            pk[j] = (struct pick){.offset = q->offset, .index = q->index, .thread = thread,
                                  .point = th->point_at + k + j};
        }
        ptc_session_skip_aggregates(s);
        ptc_session_set_call_hook(s, on_find_call, &f);
        out->depth = depth;
        rc = decode_picks(x, s, trace, pk, npk, &f.done, err, n);
        if (!rc && !f.found && !f.past) { /* still open where its thread's trace ends */
            struct thread *tt = ptc_thread_find(s, th->pid, th->tid);
            if (tt && tt->started && tt->depth > depth) {
                struct frame *fr = &tt->frames[depth];
                out->func = fr->func;
                out->start = ptc_event_time(s, tt->proc, fr->start);
                out->end = ptc_event_time(s, tt->proc, tt->last);
                if (out->start <= t) {
                    out->dur = out->end - out->start;
                    out->self = out->dur > f.child_total ? out->dur - f.child_total : 0;
                    out->open = 1;
                    f.found = 1;
                }
            }
        }
    }
    free(pk);
    ptc_session_free(s);
    if (rc)
        return rc;
    if (!f.found)
        return 1;
    qsort(out->children, out->nchildren, sizeof(out->children[0]), by_total);
    return 0;
}
