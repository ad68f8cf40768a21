/* Per-stream decoding: segments between gaps, spans between PSBs, fast path with libipt
 * fallback, and the interpretation of abstract events into stub hits and gaps. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptc_pt_decode.h"

void ptc_pt_dcfg_from_config(struct ptc_pt_dcfg *d, const struct ptc_pt_config *c)
{
    memset(d, 0, sizeof(*d));
    d->flags = c->flags;
    d->mtc_freq = c->mtc_freq;
    d->nom_freq = c->nom_freq;
    d->cpu_family = c->cpu_vendor == 1 ? c->cpu_family : 0;
    d->cpu_model = c->cpu_model;
    d->cpu_stepping = c->cpu_stepping;
    d->cpuid_0x15_eax = c->cpuid_0x15_eax;
    d->cpuid_0x15_ebx = c->cpuid_0x15_ebx;
}

struct ptc_pt_sdec {
    struct ptc_pt_dcfg cfg;
    const uint8_t *buf;
    size_t len;
    struct ptc_pt_break *breaks;
    size_t nbreaks;
    size_t seg;        /* current segment: [seg_start(seg), seg_end(seg)) */
    size_t pos;
    int seg_started;
    int done;
    struct ptc_pt_item *q;
    size_t qn, qi, qcap;
    struct ptc_pt_aevs aevs;
    struct ptc_pt_ftime ftime;
    uint64_t resume_ip;
    int have_resume, suspect;
    uint64_t last_tsc; /* time of the last item: gaps at breaks get it */
    int have_last;
    struct ptc_pt_stream_stats st;
};

static inline int in_stubs(const struct ptc_pt_dcfg *c, uint64_t ip)
{
    if (c->num_ranges == 1)
        return ip >= c->ranges[0].start && ip < c->ranges[0].end;
    size_t lo = 0, hi = c->num_ranges;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ip < c->ranges[mid].start)
            hi = mid;
        else if (ip >= c->ranges[mid].end)
            lo = mid + 1;
        else
            return 1;
    }
    return 0;
}

static inline int qpush(struct ptc_pt_sdec *d, const struct ptc_pt_item *it)
{
    if (it->has_time) {
        d->last_tsc = it->tsc;
        d->have_last = 1;
    }
    if (d->qn == d->qcap) {
        size_t cap = d->qcap ? d->qcap * 2 : 256;
        void *v = realloc(d->q, cap * sizeof(*d->q));
        if (!v)
            return -1;
        d->q = v;
        d->qcap = cap;
    }
    d->q[d->qn++] = *it;
    if (it->kind == PTC_PT_ITEM_HIT)
        d->st.hits++;
    else
        d->st.gaps++;
    return 0;
}

static int gap(struct ptc_pt_sdec *d, const struct ptc_pt_aev *e, uint8_t why, uint64_t off,
               uint64_t count)
{
    struct ptc_pt_item it = {.kind = PTC_PT_ITEM_GAP, .why = why, .off = off, .count = count};
    if (e && e->has_time) {
        it.has_time = 1;
        it.tsc = e->tsc;
    }
    return qpush(d, &it);
}

static int hit(struct ptc_pt_sdec *d, const struct ptc_pt_aev *e)
{
    struct ptc_pt_item it = {.kind = PTC_PT_ITEM_HIT, .ip = e->ip, .off = e->off,
                             .has_time = e->has_time, .tsc = e->tsc};
    return qpush(d, &it);
}

/* The interpretation shared by both decoders (docs/pt.md "What is a hit"). */
static int interpret(struct ptc_pt_sdec *d)
{
    const struct ptc_pt_dcfg *c = &d->cfg;
    static int debug = -1;
    if (debug < 0)
        debug = getenv("PTCALL_PT_DEBUG") != NULL;
    for (size_t i = 0; i < d->aevs.n; i++) {
        const struct ptc_pt_aev *e = &d->aevs.v[i];
        if (debug)
            fprintf(stderr, "aev %d ip %d:%llx off %llu time %d:%llu\n", e->type, e->ip_valid,
                    (unsigned long long)e->ip, (unsigned long long)e->off, e->has_time,
                    (unsigned long long)e->tsc);
        int r = 0;
        switch (e->type) {
        case PTC_AEV_PSB:
            d->suspect = 0;
            break;
        case PTC_AEV_ENABLE:
            if (in_stubs(c, e->ip)) {
                if (d->have_resume && d->resume_ip == e->ip)
                    d->st.resumes++; /* back from an interrupt taken on the stub */
                else
                    r = hit(d, e);
            } else if (d->suspect) {
                r = gap(d, e, PTC_PT_WHY_SUSPECT, e->off, 0);
            } else {
                d->st.stray++;
            }
            d->have_resume = 0;
            break;
        case PTC_AEV_DISABLE:
            d->have_resume = 0;
            break;
        case PTC_AEV_ASYNC_DISABLE:
            d->have_resume = e->ip_valid;
            d->resume_ip = e->ip;
            break;
        case PTC_AEV_OVF:
            d->st.ovf++;
            d->have_resume = 0;
            d->suspect = 1;
            r = gap(d, e, PTC_PT_WHY_OVF, e->off, 0);
            if (!r && e->ip_valid && in_stubs(c, e->ip))
                r = hit(d, e);
            break;
        case PTC_AEV_ERROR:
            d->st.decode_errors++;
            d->have_resume = 0;
            d->suspect = 1;
            r = gap(d, e, PTC_PT_WHY_DECODE, e->off, 0);
            break;
        }
        if (r)
            return -1;
    }
    d->aevs.n = 0;
    return 0;
}

struct ptc_pt_sdec *ptc_pt_sdec_new(const struct ptc_pt_dcfg *cfg, const uint8_t *buf,
                                    size_t len, const struct ptc_pt_break *breaks,
                                    size_t num_breaks)
{
    struct ptc_pt_sdec *d = calloc(1, sizeof(*d));
    if (!d)
        return NULL;
    d->cfg = *cfg;
    d->buf = buf;
    d->len = len;
    if (num_breaks) {
        d->breaks = malloc(num_breaks * sizeof(*breaks));
        if (!d->breaks) {
            free(d);
            return NULL;
        }
        memcpy(d->breaks, breaks, num_breaks * sizeof(*breaks));
        d->nbreaks = num_breaks;
    }
    d->st.bytes = len;
    return d;
}

static size_t seg_start(const struct ptc_pt_sdec *d, size_t s)
{
    return s == 0 ? 0 : (size_t)d->breaks[s - 1].pos;
}

static size_t seg_end(const struct ptc_pt_sdec *d, size_t s)
{
    return s < d->nbreaks ? (size_t)d->breaks[s].pos : d->len;
}

static int refill(struct ptc_pt_sdec *d)
{
    d->qn = d->qi = 0;
    while (!d->qn && !d->done) {
        if (d->seg > d->nbreaks) {
            d->done = 1;
            break;
        }
        size_t end = seg_end(d, d->seg);
        if (!d->seg_started) {
            d->seg_started = 1;
            size_t start = seg_start(d, d->seg);
            if (d->seg > 0) {
                const struct ptc_pt_break *b = &d->breaks[d->seg - 1];
                d->st.truncations++;
                d->st.lost_bytes += b->lost;
                d->have_resume = 0;
                struct ptc_pt_aev last = {.has_time = (uint8_t)d->have_last, .tsc = d->last_tsc};
                if (gap(d, &last, (uint8_t)(b->why ? b->why : PTC_PT_WHY_TRUNCATED), b->pos,
                        b->lost))
                    return -1;
            }
            size_t psb = ptc_pt_find_psb(d->buf, end, start);
            d->st.skipped_bytes += psb - start;
            d->pos = psb;
            memset(&d->ftime, 0, sizeof(d->ftime));
        }
        if (d->pos >= end) {
            d->seg++;
            d->seg_started = 0;
            continue;
        }
        d->st.spans++;
        if (d->cfg.mode == PTC_PT_MODE_LIBIPT) {
            if (ptc_pt_ipt_decode(&d->cfg, d->buf + d->pos, end - d->pos, d->pos, &d->aevs) < 0)
                return -1;
            d->pos = end;
        } else {
            size_t consumed = 0;
            struct ptc_pt_ftime saved = d->ftime;
            if (ptc_pt_fast_span(&d->cfg, d->buf + d->pos, end - d->pos, d->pos, &d->ftime,
                                 &d->aevs, &consumed) == 0) {
                d->pos += consumed;
            } else {
                d->aevs.n = 0;
                d->ftime = saved;
                size_t next = ptc_pt_find_psb(d->buf, end, d->pos + 16);
                if (d->cfg.mode == PTC_PT_MODE_FAST_ONLY) {
                    struct ptc_pt_aev e = {.type = PTC_AEV_ERROR, .off = d->pos};
                    ptc_pt_aevs_push(&d->aevs, &e);
                } else {
                    d->st.spans_libipt++;
                    if (ptc_pt_ipt_decode(&d->cfg, d->buf + d->pos, next - d->pos, d->pos,
                                          &d->aevs) < 0)
                        return -1;
                }
                d->pos = next;
            }
        }
        if (interpret(d))
            return -1;
    }
    return 0;
}

int ptc_pt_sdec_next(struct ptc_pt_sdec *d, struct ptc_pt_item *out)
{
    if (d->qi == d->qn) {
        if (d->done)
            return 0;
        if (refill(d))
            return -1;
        if (d->qi == d->qn)
            return 0;
    }
    *out = d->q[d->qi++];
    return 1;
}

long ptc_pt_sdec_batch(struct ptc_pt_sdec *d, const struct ptc_pt_item **items)
{
    if (d->qi == d->qn) {
        if (d->done)
            return 0;
        if (refill(d))
            return -1;
        if (d->qi == d->qn)
            return 0;
    }
    *items = d->q + d->qi;
    long n = (long)(d->qn - d->qi);
    d->qi = d->qn;
    return n;
}

const struct ptc_pt_stream_stats *ptc_pt_sdec_stats(const struct ptc_pt_sdec *d)
{
    return &d->st;
}

void ptc_pt_sdec_free(struct ptc_pt_sdec *d)
{
    if (!d)
        return;
    free(d->breaks);
    free(d->q);
    free(d->aevs.v);
    free(d);
}
