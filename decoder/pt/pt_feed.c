/* Feeding of the PT front-end: decodes what is safe, gives every stub hit and gap to the
 * thread that owned its bytes, and feeds per-thread events, in each thread's order, to the
 * sink (docs/pt.md "Threads", "Streaming").
 *
 *  - per-thread streams belong to the thread named in their chunk headers: fed as decoded;
 *  - per-CPU streams: every PERF_RECORD_AUX names, through its sample_id, the task that was
 *    running when the kernel closed that piece [aux_offset, aux_offset + size) (it closes
 *    it when the task is scheduled out, so every piece has one owner); pieces are fed in
 *    the order of their record times across CPUs, so a thread that migrates gets its events
 *    in order. With round markers a piece is fed once its time is safe; without, at the end;
 *  - bytes no AUX record covers go, by item time, to the task that PERF_RECORD_SWITCH /
 *    ITRACE_START say was running on that CPU (or the last one known); bytes after the last
 *    record of a CPU wait for the end of the trace and are merged by time there. */
#include <string.h>

#include "pt_front_int.h"

static struct ptc_pt_thread_stats *thread_stat(struct ptc_pt_front *f, uint32_t pid,
                                               uint32_t tid)
{
    for (size_t i = 0; i < f->thr_stats.n; i++)
        if (f->thr_stats.v[i].pid == pid && f->thr_stats.v[i].tid == tid)
            return &f->thr_stats.v[i];
    struct ptc_pt_thread_stats t = {.pid = pid, .tid = tid};
    if (VPUSH(f->thr_stats, t))
        return NULL;
    return &f->thr_stats.v[f->thr_stats.n - 1];
}

static int flush(struct ptc_pt_front *f)
{
    if (!f->fn)
        return 0;
    int r = f->sink.feed ? f->sink.feed(f->sink.ctx, f->fpid, f->ftid, f->fbuf, f->fn) : 0;
    f->fn = 0;
    return r < 0 ? r : 0;
}

/* Events are batched per thread: a different thread's event sends the batch first. */
static int feed_to(struct ptc_pt_front *f, uint32_t pid, uint32_t tid)
{
    if (f->fvalid && f->fpid == pid && f->ftid == tid)
        return 0;
    int r = flush(f);
    if (r)
        return r;
    f->fpid = pid;
    f->ftid = tid;
    f->fvalid = 1;
    f->fstat = thread_stat(f, pid, tid);
    return f->fstat ? 0 : -PTC_E_NOMEM;
}

static int forks_upto(struct ptc_pt_front *f, uint32_t pid, uint32_t tid, uint64_t t);

static int emit(struct ptc_pt_front *f, uint32_t pid, uint32_t tid, int known,
                const struct ptc_pt_item *it)
{
    if (!known) {
        f->unattributed++;
        if (it->kind == PTC_PT_ITEM_GAP && f->sink.loss) {
            struct ptc_loss l = {.kind = it->why == PTC_PT_WHY_OVF ? PTC_LOSS_PT_OVERFLOW
                                                                    : PTC_LOSS_PT_TRUNCATED,
                                 .count = it->count, .tsc_from = it->tsc, .tsc_to = it->tsc};
            f->sink.loss(f->sink.ctx, 0, &l, "Intel PT gap outside any known thread");
        }
        return 0;
    }
    int r = feed_to(f, pid, tid);
    if (r)
        return r;
    if (f->forks.n && it->has_time) {
        /* a fork by this thread that happened before this item comes first */
        uint64_t t = ptc_pt_tsc_to_perf(&f->cfg, it->tsc);
        r = forks_upto(f, pid, tid, t ? t - 1 : 0);
        if (r)
            return r;
    }
    struct ptc_ev ev = {.has_time = it->has_time, .tsc = it->tsc,
                        .size = (uint16_t)it->reserved2};
    if (it->kind == PTC_PT_ITEM_HIT) {
        uint32_t id;
        if (!f->sink.lookup || f->sink.lookup(f->sink.ctx, pid, it->ip, &id) < 0) {
            f->unmapped++;
            return 0;
        }
        ev.type = PTC_EV_HIT;
        ev.stub_id = id;
        f->fstat->hits++;
    } else {
        ev.type = PTC_EV_GAP;
        ev.count = 0;
        f->fstat->gaps++;
    }
    f->fbuf[f->fn++] = ev;
    if (f->fn == sizeof(f->fbuf) / sizeof(f->fbuf[0]))
        return flush(f);
    return 0;
}

/* PTC_EV_FORK for every fork by thread pid/tid at or before perf time t (all if t is ~0) */
static int forks_upto(struct ptc_pt_front *f, uint32_t pid, uint32_t tid, uint64_t t)
{
    for (size_t i = 0; i < f->forks.n; i++) {
        struct forkrec *k = &f->forks.v[i];
        if (k->done || k->ppid != pid || k->ptid != tid)
            continue;
        if (k->time > t)
            break; /* sorted by time */
        k->done = 1;
        int r = feed_to(f, pid, tid);
        if (r)
            return r;
        struct ptc_ev ev = {.type = PTC_EV_FORK, .count = k->pid};
        f->fbuf[f->fn++] = ev;
        if (f->fn == sizeof(f->fbuf) / sizeof(f->fbuf[0])) {
            r = flush(f);
            if (r)
                return r;
        }
    }
    return 0;
}

/* owner of an item by time, from the switch records of its CPU */
static int owner_by_time(const struct ptc_pt_front *f, const struct stream *s,
                         const struct ptc_pt_item *it, uint32_t *pid, uint32_t *tid)
{
    if (!s->tasks.n)
        return 0;
    if (!it->has_time) {
        *pid = s->tasks.v[0].pid;
        *tid = s->tasks.v[0].tid;
        return 1;
    }
    uint64_t t = ptc_pt_tsc_to_perf(&f->cfg, it->tsc);
    size_t lo = 0, hi = s->tasks.n;
    while (lo < hi) { /* last task event with time <= t */
        size_t mid = (lo + hi) / 2;
        if (s->tasks.v[mid].time <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    const struct taskev *e = lo ? &s->tasks.v[lo - 1] : &s->tasks.v[0];
    *pid = e->pid;
    *tid = e->tid;
    return 1;
}

/* next item of a stream: 1, or 0 when nothing more can be decoded now, <0 error */
static int sread(struct ptc_pt_front *f, struct stream *s, struct ptc_pt_item *it)
{
    if (s->have_peek) {
        *it = s->peek;
        s->have_peek = 0;
        return 1;
    }
    struct ptc_pt_sdec *d = ptc_front_dec(f, s);
    if (!d)
        return -PTC_E_NOMEM;
    if (f->threads > 1 && !ptc_pt_sdec_queued(d) && ptc_pt_sdec_undecoded(d) &&
        ptc_front_predecode(f))
        return -PTC_E_NOMEM;
    int r = ptc_pt_sdec_next(d, it);
    return r < 0 ? -PTC_E_NOMEM : r;
}

/* Feeds the items up to stream position limit, to (pid, tid) or by time when pid is
 * UINT32_MAX. Returns 1 when done, 0 when the decoder must wait for more bytes, <0. */
static int feed_upto(struct ptc_pt_front *f, struct stream *s, uint64_t limit, uint32_t pid,
                     uint32_t tid, int final)
{
    struct ptc_pt_item it;
    int r;
    while ((r = sread(f, s, &it)) > 0) {
        if (it.off > limit) {
            s->peek = it;
            s->have_peek = 1;
            return 1;
        }
        uint32_t p = pid, t = tid;
        int known = 1;
        /* the event's size: stream bytes since the previous item */
        uint64_t d = it.off >= s->last_item_off ? it.off - s->last_item_off : 0;
        it.reserved2 = (uint32_t)(d < 65535 ? d : 65535);
        s->last_item_off = it.off;
        if (p == UINT32_MAX)
            known = owner_by_time(f, s, &it, &p, &t);
        if ((r = emit(f, p, t, known, &it)))
            return r;
    }
    if (r < 0)
        return r;
    /* nothing more now: every whole packet is decoded unless libipt waits for a span */
    return final || ptc_pt_sdec_caught_up(s->dec);
}

/* Makes the decoder look at least up to the stream position of the next item (so that its
 * skip regions are known there). */
static int look_ahead(struct ptc_pt_front *f, struct stream *s)
{
    if (s->have_peek)
        return 0;
    int r = sread(f, s, &s->peek);
    if (r < 0)
        return r;
    s->have_peek = r > 0;
    return 0;
}

static int end_of_piece(struct ptc_pt_front *f, uint32_t pid, uint32_t tid, uint64_t bytes,
                        uint64_t fork_time)
{
    int rc = 0;
    if (f->forks.n)
        rc = forks_upto(f, pid, tid, fork_time);
    struct ptc_pt_thread_stats *ts = thread_stat(f, pid, tid);
    if (ts)
        ts->bytes += bytes;
    f->fstat = NULL;
    f->fvalid = 0;
    return rc ? rc : flush(f);
}

/* One AUX piece. Returns 1 when fed, 0 when it has to wait, <0 error. */
static int feed_piece(struct ptc_pt_front *f, struct auxrec *a, int final)
{
    struct stream *s = f->streams.v[a->stream];
    if (!ptc_front_dec(f, s))
        return -PTC_E_NOMEM;
    uint64_t start = ptc_front_aux_to_pos(s, a->aux_off);
    uint64_t end = ptc_front_aux_to_pos(s, a->aux_off + a->size);
    int r;
    if (a->phase == 0) {
        if (start > s->prev_end) {
            /* bytes before this piece that no record covers: by time */
            if ((r = feed_upto(f, s, start, UINT32_MAX, 0, final)) <= 0)
                return r;
            if ((r = flush(f)))
                return r;
            f->fvalid = 0;
        }
        a->phase = 1;
    }
    if (a->phase == 1) {
        if ((r = look_ahead(f, s)))
            return r;
        if (ptc_pt_sdec_in_skip(s->dec, start)) {
            /* this piece begins in bytes the decoder had to skip */
            struct ptc_pt_item g = {.kind = PTC_PT_ITEM_GAP, .why = PTC_PT_WHY_TRUNCATED,
                                    .off = start};
            if ((r = emit(f, a->pid, a->tid, 1, &g)))
                return r;
            s->skip_gaps++;
        }
        a->phase = 2;
    }
    if ((r = feed_upto(f, s, end, a->pid, a->tid, final)) <= 0)
        return r;
    s->prev_end = end;
    s->last_unit_time = a->time;
    uint64_t held = ptc_pt_sdec_end(s->dec);
    r = end_of_piece(f, a->pid, a->tid, (end > held ? held : end) - start, a->time);
    return r ? r : 1;
}

static int cmp_piece(const void *x_, const void *y_)
{
    const struct auxrec *x = x_, *y = y_;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    if (x->stream != y->stream)
        return x->stream < y->stream ? -1 : 1;
    if (x->aux_off != y->aux_off)
        return x->aux_off < y->aux_off ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* per-thread streams: everything decoded so far is that thread's */
static int feed_thread_stream(struct ptc_pt_front *f, struct stream *s, int final)
{
    int r;
    if (!s->skip_checked) {
        if ((r = look_ahead(f, s)))
            return r;
        if (!s->have_peek && !final)
            return 0; /* nothing decoded yet: check the start later */
        if (ptc_pt_sdec_in_skip(s->dec, 0)) {
            struct ptc_pt_item g = {.kind = PTC_PT_ITEM_GAP, .why = PTC_PT_WHY_TRUNCATED};
            if ((r = emit(f, s->pid, s->tid, 1, &g)))
                return r;
            s->skip_gaps++;
        }
        s->skip_checked = 1;
    }
    if ((r = feed_upto(f, s, UINT64_MAX, s->pid, s->tid, final)) < 0)
        return r;
    if (!final)
        return flush(f);
    return end_of_piece(f, s->pid, s->tid, ptc_pt_sdec_end(s->dec), UINT64_MAX);
}

/* bytes after the last AUX record of each CPU: merge the streams by item time (the end) */
static int feed_tails(struct ptc_pt_front *f)
{
    int rc = 0;
    while (!rc) {
        struct stream *best = NULL;
        struct ptc_pt_item bit;
        for (size_t si = 0; si < f->streams.n; si++) {
            struct stream *s = f->streams.v[si];
            if (s->cpu == PTC_PT_CPU_THREAD)
                continue;
            if ((rc = look_ahead(f, s)))
                break;
            if (!s->have_peek)
                continue;
            const struct ptc_pt_item *it = &s->peek;
            if (!best || (!it->has_time && bit.has_time) ||
                (it->has_time && bit.has_time && it->tsc < bit.tsc)) {
                best = s;
                bit = *it;
            }
        }
        if (!best || rc)
            break;
        best->have_peek = 0;
        uint32_t pid = 0, tid = 0;
        int known = owner_by_time(f, best, &bit, &pid, &tid);
        rc = emit(f, pid, tid, known, &bit);
    }
    return rc;
}

/* drops what no later piece can need: the AUX map before the last piece fed, task
 * switches older than the last one before it, forks already placed */
static void trim(struct ptc_pt_front *f)
{
    for (size_t si = 0; si < f->streams.n; si++) {
        struct stream *s = f->streams.v[si];
        size_t k = 0;
        while (k + 1 < s->map.n && s->map.v[k].pos + s->map.v[k].len <= s->prev_end)
            k++;
        if (k) {
            s->map_base = s->map.v[k - 1].pos + s->map.v[k - 1].len;
            VDROP(s->map, k);
        }
        if (s->last_unit_time) {
            size_t j = 0; /* keep the last switch at or before the last piece, and one more */
            while (j + 2 < s->tasks.n && s->tasks.v[j + 2].time <= s->last_unit_time)
                j++;
            VDROP(s->tasks, j);
        }
    }
    size_t k = 0;
    for (size_t i = 0; i < f->forks.n; i++)
        if (!f->forks.v[i].done)
            f->forks.v[k++] = f->forks.v[i];
    f->forks.n = k;
}

int ptc_front_process(struct ptc_pt_front *f, uint64_t horizon, int final)
{
    int rc = 0;
    if (final)
        for (size_t si = 0; si < f->streams.n; si++)
            if (f->streams.v[si]->dec)
                ptc_pt_sdec_finish(f->streams.v[si]->dec);
    if (f->pending.n > 1)
        qsort(f->pending.v, f->pending.n, sizeof(*f->pending.v), cmp_piece);
    size_t i = 0;
    for (; i < f->pending.n; i++) {
        struct auxrec *a = &f->pending.v[i];
        if (!final && a->time > horizon)
            break;
        struct stream *s = f->streams.v[a->stream];
        if (!final && (!s->have_next || s->next_aux < a->aux_off + a->size))
            break; /* its bytes are not all here yet */
        int r = feed_piece(f, a, final);
        if (r < 0)
            return r;
        if (r == 0)
            break; /* resumes there at the next round */
    }
    VDROP(f->pending, i);
    for (size_t si = 0; si < f->streams.n && !rc; si++)
        if (f->streams.v[si]->cpu == PTC_PT_CPU_THREAD && f->streams.v[si]->dec)
            rc = feed_thread_stream(f, f->streams.v[si], final);
    if (!rc && final) {
        rc = feed_tails(f);
        for (size_t k = 0; k < f->forks.n && !rc; k++)
            if (!f->forks.v[k].done)
                rc = forks_upto(f, f->forks.v[k].ppid, f->forks.v[k].ptid, UINT64_MAX);
        if (!rc)
            rc = flush(f);
    }
    if (!rc)
        trim(f);
    return rc;
}
