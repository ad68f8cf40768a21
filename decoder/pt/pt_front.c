/* Intel PT front-end: takes the chunks of a trace, keeps what decoding needs, and at every
 * PT_ROUND chunk (docs/trace-format-pt.md) decodes and feeds what has become safe, so that
 * memory is bounded by what the recorder drains in a couple of passes, not by the trace.
 * Without round markers (older recordings, imports) everything is fed at the end.
 * Attribution and feeding: pt_feed.c; sideband: pt_sideband.c; the streams: pt_fstream.c. */
#include <string.h>

#include "pt_front_int.h"

struct ptc_pt_front *ptc_pt_front_new(const struct ptc_pt_sink *sink, int mode)
{
    struct ptc_pt_front *f = calloc(1, sizeof(*f));
    if (!f)
        return NULL;
    f->sink = *sink;
    f->mode = mode;
    f->pkstats = 1;
    f->threads = 1;
    f->dc.mode = mode;
    return f;
}

void ptc_pt_front_set_packet_stats(struct ptc_pt_front *f, int on) { f->pkstats = on; }

void ptc_pt_front_set_threads(struct ptc_pt_front *f, int n) { f->threads = n < 1 ? 1 : n; }

static int cmp_range(const void *a, const void *b)
{
    const struct ptc_pt_range *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* a stub range (MODULE or PT_STUBS): the decoders classify TIP.PGE addresses with the
 * sorted, merged list (the same module in several processes overlaps) */
static int add_range(struct ptc_pt_front *f, uint64_t start, uint64_t end)
{
    struct ptc_pt_range r = {start, end};
    for (size_t i = 0; i < f->ranges.n; i++)
        if (f->ranges.v[i].start == start && f->ranges.v[i].end == end)
            return 0;
    if (VPUSH(f->ranges, r))
        return -PTC_E_NOMEM;
    f->mranges.n = 0;
    for (size_t i = 0; i < f->ranges.n; i++)
        if (VPUSH(f->mranges, f->ranges.v[i]))
            return -PTC_E_NOMEM;
    if (f->mranges.n > 1)
        qsort(f->mranges.v, f->mranges.n, sizeof(*f->mranges.v), cmp_range);
    size_t nr = 0;
    for (size_t i = 0; i < f->mranges.n; i++) {
        if (nr && f->mranges.v[i].start <= f->mranges.v[nr - 1].end) {
            if (f->mranges.v[i].end > f->mranges.v[nr - 1].end)
                f->mranges.v[nr - 1].end = f->mranges.v[i].end;
            continue;
        }
        f->mranges.v[nr++] = f->mranges.v[i];
    }
    f->mranges.n = nr;
    f->dc.ranges = f->mranges.v;
    f->dc.num_ranges = nr;
    for (size_t i = 0; i < f->streams.n; i++)
        if (f->streams.v[i]->dec)
            ptc_pt_sdec_set_ranges(f->streams.v[i]->dec, f->mranges.v, nr);
    return 0;
}

static int add_aux(struct ptc_pt_front *f, const struct ptc_chunk_header *h, const uint8_t *p,
                   size_t n)
{
    struct ptc_pt_aux a;
    memcpy(&a, p, sizeof(a));
    struct stream *s = ptc_front_stream(f, a.cpu, h->pid, h->tid);
    struct ptc_pt_sdec *d = s ? ptc_front_dec(f, s) : NULL;
    if (!d)
        return -PTC_E_NOMEM;
    size_t len = n - sizeof(a);
    s->aux_chunks++;
    uint64_t pos = ptc_pt_sdec_end(d);
    if (s->have_next && a.offset != s->next_aux) {
        /* bytes are missing here */
        int r = ptc_front_break(f, s, pos, a.offset > s->next_aux ? a.offset - s->next_aux : 0);
        if (r)
            return r;
    }
    struct auxmap m = {.aux_off = a.offset, .pos = pos, .len = len};
    if (VPUSH(s->map, m) || ptc_pt_sdec_append(d, p + sizeof(a), len))
        return -PTC_E_NOMEM;
    s->next_aux = a.offset + len;
    s->have_next = 1;
    /* truncated pieces whose bytes are now all here */
    size_t k = 0;
    for (size_t i = 0; i < s->dbreaks.n; i++) {
        const struct auxrec *t = &s->dbreaks.v[i];
        if (t->aux_off + t->size <= s->next_aux) {
            int r = ptc_front_break(f, s, ptc_front_aux_to_pos(s, t->aux_off + t->size), 0);
            if (r)
                return r;
        } else {
            s->dbreaks.v[k++] = *t;
        }
    }
    s->dbreaks.n = k;
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
        /* read into a copy and checked before it is taken: a damaged configuration skipped
         * by --salvage used to stay in f->cfg, and its shift of 70 reached the time
         * conversion (undefined behaviour) */
        struct ptc_pt_config cfg;
        memset(&cfg, 0, sizeof(cfg));
        uint32_t sz;
        memcpy(&sz, p, 4);
        memcpy(&cfg, p, sz < sizeof(cfg) ? (sz < n ? sz : n) : sizeof(cfg));
        /* the time conversion's shift is a shift count: more than 63 is damage, not a
         * configuration */
        if (cfg.time_shift > 63 || cfg.mtc_freq > 15)
            return -PTC_E_CORRUPT;
        f->cfg = cfg;
        f->have_cfg = 1;
        ptc_pt_dcfg_from_config(&f->dc, &f->cfg);
        f->dc.mode = f->mode;
        f->dc.ranges = f->mranges.v;
        f->dc.num_ranges = f->mranges.n;
        for (size_t i = 0; i < f->streams.n; i++) /* a config after the first bytes */
            if (f->streams.v[i]->dec)
                ptc_pt_sdec_set_config(f->streams.v[i]->dec, &f->dc);
        return 0;
    }
    case PTC_CHUNK_PT_AUX:
        if (n < sizeof(struct ptc_pt_aux))
            return -PTC_E_CORRUPT;
        return add_aux(f, h, p, n);
    case PTC_CHUNK_PT_SIDEBAND: {
        if (n < sizeof(struct ptc_pt_sideband))
            return -PTC_E_CORRUPT;
        struct ptc_pt_sideband sb;
        memcpy(&sb, p, sizeof(sb));
        return ptc_front_sideband(f, &sb, p + sizeof(sb), n - sizeof(sb));
    }
    case PTC_CHUNK_PT_GAP: {
        if (n < sizeof(struct ptc_pt_gap))
            return -PTC_E_CORRUPT;
        struct ptc_pt_gap g;
        memcpy(&g, p, sizeof(g));
        struct stream *s = ptc_front_stream(f, g.cpu, h->pid, h->tid);
        if (!s)
            return -PTC_E_NOMEM;
        return ptc_front_break(f, s, ptc_front_aux_to_pos(s, g.offset), g.lost_bytes);
    }
    case PTC_CHUNK_PT_STUBS: {
        if (n < sizeof(struct ptc_pt_stubs))
            return -PTC_E_CORRUPT;
        struct ptc_pt_stubs st;
        memcpy(&st, p, sizeof(st));
        return st.stubs_end > st.stubs_start ? add_range(f, st.stubs_start, st.stubs_end) : 0;
    }
    case PTC_CHUNK_PT_ROUND: {
        /* the round rule (trace_format_pt.h): pieces up to the largest record time seen
         * before the previous round are complete and in order */
        uint64_t horizon = f->round_prev_max;
        f->round_prev_max = f->sb_max;
        f->rounds++;
        return f->rounds > 1 ? ptc_front_process(f, horizon, 0) : 0;
    }
    case PTC_CHUNK_MODULE: {
        if (n < sizeof(struct ptc_module))
            return -PTC_E_CORRUPT;
        struct ptc_module m;
        memcpy(&m, p, sizeof(m));
        if (m.stubs_end > m.stubs_start) {
            int r = add_range(f, m.stubs_start, m.stubs_end);
            if (r)
                return r;
        }
        if (f->sink.add_module)
            return f->sink.add_module(f->sink.ctx, h->pid, payload, n);
        return 0;
    }
    default:
        return 0;
    }
}

int ptc_pt_front_finish(struct ptc_pt_front *f)
{
    if (f->finished)
        return 0;
    f->finished = 1;
    int rc = ptc_front_process(f, UINT64_MAX, 1);
    for (size_t si = 0; si < f->streams.n; si++) {
        struct stream *s = f->streams.v[si];
        struct ptc_pt_cpu_stats cs = {.cpu = s->cpu, .aux_chunks = s->aux_chunks,
                                      .sideband_bytes = s->sb_bytes,
                                      .sideband_records = s->sb_records};
        if (s->dec)
            cs.s = *ptc_pt_sdec_stats(s->dec);
        /* the gaps the feeding adds where a thread's bytes begin before any PSB (its
         * start is missing: a truncation) are this stream's too, so that the stream, the
         * thread and the total tables count the same gaps */
        cs.s.gaps += s->skip_gaps;
        cs.s.truncations += s->skip_gaps;
        if (VPUSH(f->cpu_stats, cs) && !rc)
            rc = -PTC_E_NOMEM;
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

uint64_t ptc_pt_front_rounds(const struct ptc_pt_front *f) { return f->rounds; }

size_t ptc_pt_front_held(const struct ptc_pt_front *f)
{
    size_t n = f->pending.cap * sizeof(*f->pending.v) + f->forks.cap * sizeof(*f->forks.v);
    for (size_t i = 0; i < f->streams.n; i++) {
        const struct stream *s = f->streams.v[i];
        n += s->map.cap * sizeof(*s->map.v) + s->tasks.cap * sizeof(*s->tasks.v) +
             s->dbreaks.cap * sizeof(*s->dbreaks.v);
        if (s->dec)
            n += ptc_pt_sdec_held(s->dec);
    }
    return n;
}

void ptc_pt_front_free(struct ptc_pt_front *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->streams.n; i++) {
        struct stream *s = f->streams.v[i];
        ptc_pt_sdec_free(s->dec);
        free(s->map.v);
        free(s->tasks.v);
        free(s->dbreaks.v);
        free(s);
    }
    free(f->streams.v);
    free(f->ranges.v);
    free(f->mranges.v);
    free(f->forks.v);
    free(f->pending.v);
    free(f->cpu_stats.v);
    free(f->thr_stats.v);
    free(f);
}

int ptc_pt_front_packets(const struct ptc_pt_front *f, size_t i, struct ptc_pt_pktstat *st)
{
    memset(st, 0, sizeof(*st));
    if (i >= f->streams.n)
        return -1;
    *st = f->streams.v[i]->pk; /* counted span by span while decoding */
    return 0;
}
