/* Intel PT front-end: collects the PT chunks of a trace, parses sideband, decodes every
 * stream and feeds per-thread events, in each thread's time order, to a sink.
 *
 * Attribution of stream bytes to threads (docs/pt.md "Threads"):
 *  - per-thread streams belong to the thread named in their chunk headers;
 *  - per-CPU streams: every PERF_RECORD_AUX names, through its sample_id, the task that was
 *    running when the kernel closed that piece of AUX data [aux_offset, aux_offset+size)
 *    (the kernel closes it when the task is scheduled out, so every piece has one owner);
 *    pieces are processed in the order of their record times across CPUs, so a thread that
 *    migrates gets its events in order;
 *  - bytes no AUX record covers go, by item time, to the task that PERF_RECORD_SWITCH /
 *    ITRACE_START say was running on that CPU (or the last one known).
 */
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "ptc_pt_decode.h"

#define VEC(T)                                                                             \
    struct {                                                                               \
        T *v;                                                                              \
        size_t n, cap;                                                                     \
    }
#define VPUSH(vec, val)                                                                    \
    ({                                                                                     \
        int r_ = 0;                                                                        \
        if ((vec).n == (vec).cap) {                                                        \
            size_t c_ = (vec).cap ? (vec).cap * 2 : 16;                                    \
            void *p_ = realloc((vec).v, c_ * sizeof(*(vec).v));                            \
            if (!p_)                                                                       \
                r_ = -1;                                                                   \
            else {                                                                         \
                (vec).v = p_;                                                              \
                (vec).cap = c_;                                                            \
            }                                                                              \
        }                                                                                  \
        if (!r_)                                                                           \
            (vec).v[(vec).n++] = (val);                                                    \
        r_;                                                                                \
    })

struct auxmap { uint64_t aux_off, pos, len; };
struct auxrec { uint64_t aux_off, size, flags, time; uint32_t pid, tid; };
struct taskev { uint64_t time; uint32_t pid, tid; int in; };
struct gaprec { uint64_t aux_off, lost; uint32_t kind; };
struct forkrec { uint64_t time; uint32_t ppid, ptid, pid; int done; };

struct stream {
    uint32_t cpu, pid, tid;
    VEC(uint8_t) buf;
    VEC(struct auxmap) map;
    VEC(struct auxrec) aux;
    VEC(struct taskev) tasks;
    VEC(struct gaprec) gaps;
    VEC(struct ptc_pt_break) breaks;
    uint64_t next_aux;
    int have_next;
    struct ptc_pt_sdec *dec;
    VEC(struct ptc_pt_break) skips; /* [pos, lost=end): bytes before a resync PSB */
    struct ptc_pt_item peek;
    int have_peek, eof;
    uint64_t aux_chunks, sb_bytes, sb_records;
    uint32_t cur_pid, cur_tid; /* owner for bytes outside AUX records */
    int have_cur;
};

struct ptc_pt_front {
    struct ptc_pt_sink sink;
    int mode;
    struct ptc_pt_config cfg;
    int have_cfg;
    VEC(struct stream *) streams;
    VEC(struct ptc_pt_range) ranges;
    VEC(struct forkrec) forks; /* process forks, sorted by time at finish */
    VEC(struct ptc_pt_cpu_stats) cpu_stats;
    VEC(struct ptc_pt_thread_stats) thr_stats;
    uint64_t unmapped, unattributed;
    /* feeding */
    uint32_t fpid, ftid;
    int fvalid;
    struct ptc_ev fbuf[1024];
    size_t fn;
    struct ptc_pt_thread_stats *fstat;
};

struct ptc_pt_front *ptc_pt_front_new(const struct ptc_pt_sink *sink, int mode)
{
    struct ptc_pt_front *f = calloc(1, sizeof(*f));
    if (!f)
        return NULL;
    f->sink = *sink;
    f->mode = mode;
    return f;
}

static struct stream *get_stream(struct ptc_pt_front *f, uint32_t cpu, uint32_t pid,
                                 uint32_t tid)
{
    for (size_t i = 0; i < f->streams.n; i++) {
        struct stream *s = f->streams.v[i];
        if (s->cpu == cpu && (cpu != PTC_PT_CPU_THREAD || (s->pid == pid && s->tid == tid)))
            return s;
    }
    struct stream *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->cpu = cpu;
    s->pid = pid;
    s->tid = tid;
    if (VPUSH(f->streams, s)) {
        free(s);
        return NULL;
    }
    return s;
}

static size_t trailer_size(uint64_t st)
{
    size_t n = 0;
    if (st & PERF_SAMPLE_TID)
        n += 8;
    if (st & PERF_SAMPLE_TIME)
        n += 8;
    if (st & PERF_SAMPLE_ID)
        n += 8;
    if (st & PERF_SAMPLE_STREAM_ID)
        n += 8;
    if (st & PERF_SAMPLE_CPU)
        n += 8;
    if (st & PERF_SAMPLE_IDENTIFIER)
        n += 8;
    return n;
}

struct sid { uint32_t pid, tid, cpu; uint64_t time; int have_tid, have_time, have_cpu; };

static void parse_trailer(const uint8_t *p, uint64_t st, struct sid *s)
{
    memset(s, 0, sizeof(*s));
    if (st & PERF_SAMPLE_TID) {
        memcpy(&s->pid, p, 4);
        memcpy(&s->tid, p + 4, 4);
        s->have_tid = 1;
        p += 8;
    }
    if (st & PERF_SAMPLE_TIME) {
        memcpy(&s->time, p, 8);
        s->have_time = 1;
        p += 8;
    }
    if (st & PERF_SAMPLE_ID)
        p += 8;
    if (st & PERF_SAMPLE_STREAM_ID)
        p += 8;
    if (st & PERF_SAMPLE_CPU) {
        memcpy(&s->cpu, p, 4);
        s->have_cpu = 1;
    }
}

static int add_sideband(struct ptc_pt_front *f, const struct ptc_pt_sideband *sb,
                        const uint8_t *p, size_t n)
{
    size_t tsz = trailer_size(sb->sample_type);
    struct stream *s0 = get_stream(f, sb->cpu, 0, 0);
    if (!s0)
        return -PTC_E_NOMEM;
    s0->sb_bytes += n;
    size_t off = 0;
    while (off + sizeof(struct perf_event_header) <= n) {
        struct perf_event_header h;
        memcpy(&h, p + off, sizeof(h));
        if (h.size < sizeof(h) || off + h.size > n)
            return -PTC_E_CORRUPT;
        const uint8_t *r = p + off + sizeof(h);
        size_t body = h.size - sizeof(h);
        struct sid sid;
        memset(&sid, 0, sizeof(sid));
        if (h.type != PERF_RECORD_SAMPLE && body >= tsz)
            parse_trailer(r + body - tsz, sb->sample_type, &sid);
        struct stream *s = s0;
        if (sid.have_cpu && sb->cpu != PTC_PT_CPU_THREAD && sid.cpu != sb->cpu) {
            s = get_stream(f, sid.cpu, 0, 0);
            if (!s)
                return -PTC_E_NOMEM;
        }
        s0->sb_records++;
        int r_ = 0;
        switch (h.type) {
        case PERF_RECORD_AUX:
            if (body >= 24) {
                struct auxrec a;
                memcpy(&a.aux_off, r, 8);
                memcpy(&a.size, r + 8, 8);
                memcpy(&a.flags, r + 16, 8);
                a.time = sid.time;
                a.pid = sid.pid;
                a.tid = sid.tid;
                r_ = VPUSH(s->aux, a);
            }
            break;
        case PERF_RECORD_FORK:
            if (body >= 24) {
                /* {pid, ppid, tid, ptid, time}: a new process when pid != ppid */
                struct forkrec k;
                uint32_t v[4];
                memcpy(v, r, 16);
                memcpy(&k.time, r + 16, 8);
                k.pid = v[0];
                k.ppid = v[1];
                k.ptid = v[3];
                k.done = 0;
                if (v[0] != v[1] && v[2] == v[0])
                    r_ = VPUSH(f->forks, k);
            }
            break;
        case PERF_RECORD_ITRACE_START:
            if (body >= 8) {
                struct taskev t = {.time = sid.time, .in = 1};
                memcpy(&t.pid, r, 4);
                memcpy(&t.tid, r + 4, 4);
                r_ = VPUSH(s->tasks, t);
            }
            break;
        case PERF_RECORD_SWITCH:
            if (sid.have_tid) {
                struct taskev t = {.time = sid.time, .pid = sid.pid, .tid = sid.tid,
                                   .in = !(h.misc & PERF_RECORD_MISC_SWITCH_OUT)};
                r_ = VPUSH(s->tasks, t);
            }
            break;
        case PERF_RECORD_SWITCH_CPU_WIDE:
            if (body >= 8) {
                /* next_prev: on switch-out the next task, on switch-in the previous one;
                 * the sample_id names the task on the other side */
                struct taskev t = {.time = sid.time, .in = 1};
                if (h.misc & PERF_RECORD_MISC_SWITCH_OUT) {
                    memcpy(&t.pid, r, 4);
                    memcpy(&t.tid, r + 4, 4);
                } else {
                    t.pid = sid.pid;
                    t.tid = sid.tid;
                }
                r_ = VPUSH(s->tasks, t);
            }
            break;
        default:
            break;
        }
        if (r_)
            return -PTC_E_NOMEM;
        off += h.size;
    }
    return 0;
}

int ptc_pt_front_chunk(struct ptc_pt_front *f, const struct ptc_chunk_header *h,
                       const void *payload)
{
    const uint8_t *p = payload;
    size_t n = h->payload_size;
    switch (h->type) {
    case PTC_CHUNK_PT_CONFIG: {
        if (n < 8)
            return -PTC_E_CORRUPT;
        memset(&f->cfg, 0, sizeof(f->cfg));
        uint32_t sz;
        memcpy(&sz, p, 4);
        memcpy(&f->cfg, p, sz < sizeof(f->cfg) ? (sz < n ? sz : n) : sizeof(f->cfg));
        f->have_cfg = 1;
        return 0;
    }
    case PTC_CHUNK_PT_AUX: {
        if (n < sizeof(struct ptc_pt_aux))
            return -PTC_E_CORRUPT;
        struct ptc_pt_aux a;
        memcpy(&a, p, sizeof(a));
        struct stream *s = get_stream(f, a.cpu, h->pid, h->tid);
        if (!s)
            return -PTC_E_NOMEM;
        size_t len = n - sizeof(a);
        s->aux_chunks++;
        if (s->have_next && a.offset != s->next_aux) {
            struct ptc_pt_break b = {.pos = s->buf.n, .why = PTC_PT_WHY_TRUNCATED,
                                     .lost = a.offset > s->next_aux ? a.offset - s->next_aux
                                                                    : 0};
            if (VPUSH(s->breaks, b))
                return -PTC_E_NOMEM;
        }
        struct auxmap m = {.aux_off = a.offset, .pos = s->buf.n, .len = len};
        if (VPUSH(s->map, m))
            return -PTC_E_NOMEM;
        if (s->buf.n + len > s->buf.cap) {
            size_t c = s->buf.cap ? s->buf.cap : 65536;
            while (c < s->buf.n + len)
                c *= 2;
            void *v = realloc(s->buf.v, c);
            if (!v)
                return -PTC_E_NOMEM;
            s->buf.v = v;
            s->buf.cap = c;
        }
        memcpy(s->buf.v + s->buf.n, p + sizeof(a), len);
        s->buf.n += len;
        s->next_aux = a.offset + len;
        s->have_next = 1;
        return 0;
    }
    case PTC_CHUNK_PT_SIDEBAND: {
        if (n < sizeof(struct ptc_pt_sideband))
            return -PTC_E_CORRUPT;
        struct ptc_pt_sideband sb;
        memcpy(&sb, p, sizeof(sb));
        return add_sideband(f, &sb, p + sizeof(sb), n - sizeof(sb));
    }
    case PTC_CHUNK_PT_GAP: {
        if (n < sizeof(struct ptc_pt_gap))
            return -PTC_E_CORRUPT;
        struct ptc_pt_gap g;
        memcpy(&g, p, sizeof(g));
        struct stream *s = get_stream(f, g.cpu, h->pid, h->tid);
        if (!s)
            return -PTC_E_NOMEM;
        struct gaprec r = {.aux_off = g.offset, .lost = g.lost_bytes, .kind = g.kind};
        return VPUSH(s->gaps, r) ? -PTC_E_NOMEM : 0;
    }
    case PTC_CHUNK_PT_STUBS: {
        if (n < sizeof(struct ptc_pt_stubs))
            return -PTC_E_CORRUPT;
        struct ptc_pt_stubs st;
        memcpy(&st, p, sizeof(st));
        if (st.stubs_end > st.stubs_start) {
            struct ptc_pt_range r = {st.stubs_start, st.stubs_end};
            if (VPUSH(f->ranges, r))
                return -PTC_E_NOMEM;
        }
        return 0;
    }
    case PTC_CHUNK_MODULE: {
        if (n < sizeof(struct ptc_module))
            return -PTC_E_CORRUPT;
        struct ptc_module m;
        memcpy(&m, p, sizeof(m));
        if (m.stubs_end > m.stubs_start) {
            struct ptc_pt_range r = {m.stubs_start, m.stubs_end};
            if (VPUSH(f->ranges, r))
                return -PTC_E_NOMEM;
        }
        if (f->sink.add_module)
            return f->sink.add_module(f->sink.ctx, h->pid, payload, n);
        return 0;
    }
    default:
        return 0;
    }
}

static void vsort(void *v, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    if (n > 1)
        qsort(v, n, size, cmp);
}

static int cmp_range(const void *a, const void *b)
{
    const struct ptc_pt_range *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static int cmp_fork(const void *a, const void *b)
{
    const struct forkrec *x = a, *y = b;
    return x->time < y->time ? -1 : x->time > y->time;
}

static int cmp_break(const void *a, const void *b)
{
    const struct ptc_pt_break *x = a, *y = b;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static int cmp_auxrec(const void *a, const void *b)
{
    const struct auxrec *x = a, *y = b;
    return x->aux_off < y->aux_off ? -1 : x->aux_off > y->aux_off;
}

static int cmp_task(const void *a, const void *b)
{
    const struct taskev *x = a, *y = b;
    return x->time < y->time ? -1 : x->time > y->time;
}

/* stream position of an AUX offset (the end of the data that precedes it) */
static uint64_t aux_to_pos(const struct stream *s, uint64_t aux)
{
    uint64_t pos = 0;
    for (size_t i = 0; i < s->map.n; i++) { /* chunks are few; linear is fine */
        const struct auxmap *m = &s->map.v[i];
        if (aux < m->aux_off)
            break;
        if (aux <= m->aux_off + m->len)
            return m->pos + (aux - m->aux_off);
        pos = m->pos + m->len;
    }
    return pos;
}

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
    if (!f->fvalid || f->fpid != pid || f->ftid != tid) {
        int r = flush(f);
        if (r)
            return r;
        f->fpid = pid;
        f->ftid = tid;
        f->fvalid = 1;
        f->fstat = thread_stat(f, pid, tid);
        if (!f->fstat)
            return -PTC_E_NOMEM;
    }
    if (f->forks.n && it->has_time) {
        /* a fork by this thread that happened before this item comes first */
        uint64_t t = ptc_pt_tsc_to_perf(&f->cfg, it->tsc);
        int r = forks_upto(f, pid, tid, t ? t - 1 : 0);
        if (r)
            return r;
    }
    struct ptc_ev ev = {.has_time = it->has_time, .tsc = it->tsc};
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
        if (!f->fvalid || f->fpid != pid || f->ftid != tid) {
            int r = flush(f);
            if (r)
                return r;
            f->fpid = pid;
            f->ftid = tid;
            f->fvalid = 1;
            f->fstat = thread_stat(f, pid, tid);
            if (!f->fstat)
                return -PTC_E_NOMEM;
        }
        struct ptc_ev ev = {.type = PTC_EV_FORK, .count = k->pid};
        f->fbuf[f->fn++] = ev;
        if (f->fn == sizeof(f->fbuf) / sizeof(f->fbuf[0])) {
            int r = flush(f);
            if (r)
                return r;
        }
    }
    return 0;
}

static int sread(struct stream *s, struct ptc_pt_item *it)
{
    if (s->have_peek) {
        *it = s->peek;
        s->have_peek = 0;
        return 1;
    }
    if (s->eof)
        return 0;
    int r = ptc_pt_sdec_next(s->dec, it);
    if (r <= 0)
        s->eof = 1;
    return r;
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

struct unit { uint64_t time; uint64_t end_pos, start_pos; size_t stream; uint32_t pid, tid; };

static int cmp_unit(const void *a, const void *b)
{
    const struct unit *x = a, *y = b;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    if (x->stream != y->stream)
        return x->stream < y->stream ? -1 : 1;
    return x->end_pos < y->end_pos ? -1 : x->end_pos > y->end_pos;
}

int ptc_pt_front_finish(struct ptc_pt_front *f)
{
    int rc = 0;
    struct ptc_pt_dcfg dc;
    ptc_pt_dcfg_from_config(&dc, &f->cfg);
    vsort(f->forks.v, f->forks.n, sizeof(*f->forks.v), cmp_fork);
    vsort(f->ranges.v, f->ranges.n, sizeof(*f->ranges.v), cmp_range);
    size_t nr = 0; /* merge overlapping ranges (the same module in several processes) */
    for (size_t i = 0; i < f->ranges.n; i++) {
        if (nr && f->ranges.v[i].start <= f->ranges.v[nr - 1].end) {
            if (f->ranges.v[i].end > f->ranges.v[nr - 1].end)
                f->ranges.v[nr - 1].end = f->ranges.v[i].end;
            continue;
        }
        f->ranges.v[nr++] = f->ranges.v[i];
    }
    f->ranges.n = nr;
    dc.ranges = f->ranges.v;
    dc.num_ranges = f->ranges.n;
    dc.mode = f->mode;
    VEC(struct unit) units = {0};

    for (size_t si = 0; si < f->streams.n; si++) {
        struct stream *s = f->streams.v[si];
        vsort(s->aux.v, s->aux.n, sizeof(*s->aux.v), cmp_auxrec);
        vsort(s->tasks.v, s->tasks.n, sizeof(*s->tasks.v), cmp_task);
        /* breaks from GAP chunks and from TRUNCATED AUX records */
        for (size_t i = 0; i < s->gaps.n; i++) {
            struct ptc_pt_break b = {.pos = aux_to_pos(s, s->gaps.v[i].aux_off),
                                     .lost = s->gaps.v[i].lost,
                                     .why = PTC_PT_WHY_TRUNCATED};
            if (VPUSH(s->breaks, b))
                return -PTC_E_NOMEM;
        }
        for (size_t i = 0; i < s->aux.n; i++)
            if (s->aux.v[i].flags & (PERF_AUX_FLAG_TRUNCATED | PERF_AUX_FLAG_PARTIAL)) {
                struct ptc_pt_break b = {
                    .pos = aux_to_pos(s, s->aux.v[i].aux_off + s->aux.v[i].size),
                    .why = PTC_PT_WHY_TRUNCATED};
                if (VPUSH(s->breaks, b))
                    return -PTC_E_NOMEM;
            }
        vsort(s->breaks.v, s->breaks.n, sizeof(*s->breaks.v), cmp_break);
        size_t nb = 0; /* merge breaks at the same position */
        for (size_t i = 0; i < s->breaks.n; i++) {
            if (nb && s->breaks.v[nb - 1].pos == s->breaks.v[i].pos) {
                if (s->breaks.v[i].lost > s->breaks.v[nb - 1].lost)
                    s->breaks.v[nb - 1].lost = s->breaks.v[i].lost;
                continue;
            }
            s->breaks.v[nb++] = s->breaks.v[i];
        }
        s->breaks.n = nb;
        for (size_t i = 0; i <= s->breaks.n; i++) {
            uint64_t a = i ? s->breaks.v[i - 1].pos : 0;
            uint64_t e = i < s->breaks.n ? s->breaks.v[i].pos : s->buf.n;
            uint64_t psb = ptc_pt_find_psb(s->buf.v, (size_t)e, (size_t)a);
            if (psb > a) {
                struct ptc_pt_break k = {.pos = a, .lost = psb};
                if (VPUSH(s->skips, k))
                    return -PTC_E_NOMEM;
            }
        }
        s->dec = ptc_pt_sdec_new(&dc, s->buf.v, s->buf.n, s->breaks.v, s->breaks.n);
        if (!s->dec)
            return -PTC_E_NOMEM;
        if (s->cpu == PTC_PT_CPU_THREAD) {
            struct unit u = {.time = UINT64_MAX, .end_pos = s->buf.n, .stream = si,
                             .pid = s->pid, .tid = s->tid};
            if (VPUSH(units, u))
                return -PTC_E_NOMEM;
            continue;
        }
        uint64_t prev_end = 0;
        for (size_t i = 0; i < s->aux.n; i++) {
            const struct auxrec *a = &s->aux.v[i];
            if (!a->size)
                continue;
            struct unit u = {.time = a->time, .stream = si, .pid = a->pid, .tid = a->tid,
                             .start_pos = aux_to_pos(s, a->aux_off),
                             .end_pos = aux_to_pos(s, a->aux_off + a->size)};
            if (u.start_pos > prev_end) {
                /* bytes before this record that no record covers: by time */
                struct unit g = {.time = a->time, .stream = si, .start_pos = prev_end,
                                 .end_pos = u.start_pos, .pid = UINT32_MAX};
                if (VPUSH(units, g))
                    return -PTC_E_NOMEM;
            }
            if (VPUSH(units, u))
                return -PTC_E_NOMEM;
            prev_end = u.end_pos;
        }
        /* the rest of the stream: by time */
        struct unit g = {.time = UINT64_MAX - 1, .stream = si, .start_pos = prev_end,
                         .end_pos = UINT64_MAX, .pid = UINT32_MAX};
        if (VPUSH(units, g))
            return -PTC_E_NOMEM;
    }
    vsort(units.v, units.n, sizeof(*units.v), cmp_unit);

    for (size_t ui = 0; ui < units.n && !rc; ui++) {
        const struct unit *u = &units.v[ui];
        struct stream *s = f->streams.v[u->stream];
        struct ptc_pt_item it;
        int r;
        if (u->time == UINT64_MAX - 1)
            continue; /* the rest of per-CPU streams: merged by time below */
        if (u->pid != UINT32_MAX) {
            for (size_t k = 0; k < s->skips.n; k++)
                if (u->start_pos >= s->skips.v[k].pos && u->start_pos < s->skips.v[k].lost) {
                    /* this piece begins in bytes the decoder had to skip */
                    struct ptc_pt_item g = {.kind = PTC_PT_ITEM_GAP,
                                            .why = PTC_PT_WHY_TRUNCATED,
                                            .off = u->start_pos};
                    if ((rc = emit(f, u->pid, u->tid, 1, &g)))
                        break;
                }
            if (rc)
                break;
        }
        while ((r = sread(s, &it)) > 0) {
            if (it.off > u->end_pos) {
                s->peek = it;
                s->have_peek = 1;
                break;
            }
            uint32_t pid = u->pid, tid = u->tid;
            int known = 1;
            if (pid == UINT32_MAX)
                known = owner_by_time(f, s, &it, &pid, &tid);
            if ((rc = emit(f, pid, tid, known, &it)))
                break;
        }
        if (r < 0)
            rc = -PTC_E_NOMEM;
        if (!rc && u->pid != UINT32_MAX && f->forks.n)
            rc = forks_upto(f, u->pid, u->tid, u->time);
        if (!rc && u->pid != UINT32_MAX) {
            struct ptc_pt_thread_stats *ts = thread_stat(f, u->pid, u->tid);
            if (ts)
                ts->bytes += (u->end_pos > s->buf.n ? s->buf.n : u->end_pos) - u->start_pos;
            f->fstat = NULL;
            f->fvalid = 0;
            if ((rc = flush(f)))
                break;
        }
    }
    /* bytes after the last AUX record of each CPU: merge the streams by item time */
    while (!rc) {
        struct stream *best = NULL;
        struct ptc_pt_item bit;
        for (size_t si = 0; si < f->streams.n; si++) {
            struct stream *s = f->streams.v[si];
            if (s->cpu == PTC_PT_CPU_THREAD)
                continue;
            struct ptc_pt_item it;
            int r = sread(s, &it);
            if (r < 0) {
                rc = -PTC_E_NOMEM;
                break;
            }
            if (r == 0)
                continue;
            s->peek = it;
            s->have_peek = 1;
            if (!best || (!it.has_time && bit.has_time) ||
                (it.has_time && bit.has_time && it.tsc < bit.tsc)) {
                best = s;
                bit = it;
            }
        }
        if (!best || rc)
            break;
        best->have_peek = 0;
        uint32_t pid = 0, tid = 0;
        int known = owner_by_time(f, best, &bit, &pid, &tid);
        rc = emit(f, pid, tid, known, &bit);
    }
    for (size_t i = 0; i < f->forks.n && !rc; i++)
        if (!f->forks.v[i].done)
            rc = forks_upto(f, f->forks.v[i].ppid, f->forks.v[i].ptid, UINT64_MAX);
    if (!rc)
        rc = flush(f);
    free(units.v);
    for (size_t si = 0; si < f->streams.n; si++) {
        struct stream *s = f->streams.v[si];
        struct ptc_pt_cpu_stats cs = {.cpu = s->cpu, .s = *ptc_pt_sdec_stats(s->dec),
                                      .aux_chunks = s->aux_chunks,
                                      .sideband_bytes = s->sb_bytes,
                                      .sideband_records = s->sb_records};
        VPUSH(f->cpu_stats, cs);
    }
    return rc;
}

size_t ptc_pt_front_cpus(const struct ptc_pt_front *f, const struct ptc_pt_cpu_stats **out)
{
    *out = f->cpu_stats.v;
    return f->cpu_stats.n;
}

size_t ptc_pt_front_threads(const struct ptc_pt_front *f,
                            const struct ptc_pt_thread_stats **out)
{
    *out = f->thr_stats.v;
    return f->thr_stats.n;
}

const struct ptc_pt_config *ptc_pt_front_config(const struct ptc_pt_front *f)
{
    return f->have_cfg ? &f->cfg : NULL;
}

uint64_t ptc_pt_front_unmapped(const struct ptc_pt_front *f) { return f->unmapped; }
uint64_t ptc_pt_front_unattributed(const struct ptc_pt_front *f) { return f->unattributed; }

void ptc_pt_front_free(struct ptc_pt_front *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->streams.n; i++) {
        struct stream *s = f->streams.v[i];
        ptc_pt_sdec_free(s->dec);
        free(s->buf.v);
        free(s->map.v);
        free(s->aux.v);
        free(s->tasks.v);
        free(s->gaps.v);
        free(s->breaks.v);
        free(s->skips.v);
        free(s);
    }
    free(f->streams.v);
    free(f->ranges.v);
    free(f->forks.v);
    free(f->cpu_stats.v);
    free(f->thr_stats.v);
    free(f);
}

int ptc_pt_front_packets(const struct ptc_pt_front *f, size_t i, struct ptc_pt_pktstat *st)
{
    memset(st, 0, sizeof(*st));
    if (i >= f->streams.n)
        return -1;
    const struct stream *s = f->streams.v[i];
    /* segment by segment: a break means the bytes do not continue */
    uint64_t a = 0;
    for (size_t k = 0; k <= s->breaks.n; k++) {
        uint64_t e = k < s->breaks.n ? s->breaks.v[k].pos : s->buf.n;
        if (e > a && ptc_pt_count_packets(s->buf.v + a, (size_t)(e - a), st))
            return -1;
        a = e;
    }
    return 0;
}
