/* Per-stream decoding: segments between gaps, spans between PSBs, fast path with libipt
 * fallback, interpretation into stub hits and gaps.
 *
 * Streaming: bytes are appended as they arrive and decoded as far as whole packets go; the
 * decoder keeps only the bytes of the current span (libipt may need to decode it again
 * from its PSB), the cut packet at the end, and the fast path's state. A span the fast path
 * gives up on after it already handed out its first items is decoded again by libipt, and
 * only libipt's events after the last byte the fast path had handed out count. libipt
 * itself needs whole spans, so in libipt-only mode (and for such a span) the decoder waits
 * for the next PSB, the next gap or the end of the stream. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pt_interp.h"

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
    const uint8_t *buf;     /* buf[0] is stream position base */
    uint8_t *own;           /* streaming: the window we own (== buf) */
    size_t cap;
    uint64_t base, end;     /* bytes [base, end) are held */
    int final;              /* no more bytes will be appended */
    struct ptc_pt_break *breaks;
    size_t nb, bcap, bi;    /* breaks before bi have been passed */
    struct ptc_pt_break passed; /* the last break passed */
    int have_passed;
    int seg_started;        /* the current segment found its first PSB */
    uint64_t seg_start, pos;
    uint64_t span_start;
    uint64_t span_end;      /* the PSB that ends the current span, once found */
    int span_end_known;
    uint64_t scanned;       /* the search for span_end has looked below here */
    int psb_after;          /* the bytes end where a PSB begins (a parallel piece) */
    int fallback;           /* the current span needs libipt */
    uint64_t committed_ev;  /* events of the span the fast path handed out before failing */
    int blocked;            /* waits for more bytes (libipt needs the whole span) */
    struct ptc_pt_fstate fs;
    struct ptc_pt_interp in;
    size_t qi;
    int accumulate;         /* parallel pieces: keep every item in the queue */
    struct ptc_pt_aevs aevs;
    struct ptc_pt_stream_stats st;
    struct ptc_pt_pktstat *pk;
    struct ptc_pt_break *skips; /* [pos, lost = end) skipped before a segment's PSB */
    size_t nskip, skcap;
};

static struct ptc_pt_sdec *sdec_alloc(const struct ptc_pt_dcfg *cfg)
{
    struct ptc_pt_sdec *d = calloc(1, sizeof(*d));
    if (!d)
        return NULL;
    d->cfg = *cfg;
    d->in.st = &d->st;
    d->in.first_item = SIZE_MAX;
    return d;
}

struct ptc_pt_sdec *ptc_pt_sdec_new_at(const struct ptc_pt_dcfg *cfg, const uint8_t *buf,
                                       size_t len, uint64_t base, int psb_after)
{
    struct ptc_pt_sdec *d = sdec_alloc(cfg);
    if (!d)
        return NULL;
    d->buf = buf;
    d->base = d->seg_start = d->pos = base;
    d->end = base + len;
    d->final = 1;
    d->psb_after = psb_after;
    d->st.bytes = len;
    return d;
}

struct ptc_pt_sdec *ptc_pt_sdec_new(const struct ptc_pt_dcfg *cfg, const uint8_t *buf,
                                    size_t len, const struct ptc_pt_break *breaks,
                                    size_t num_breaks)
{
    struct ptc_pt_sdec *d = ptc_pt_sdec_new_at(cfg, buf, len, 0, 0);
    if (!d)
        return NULL;
    for (size_t i = 0; i < num_breaks; i++)
        if (ptc_pt_sdec_add_break(d, &breaks[i])) {
            ptc_pt_sdec_free(d);
            return NULL;
        }
    return d;
}

struct ptc_pt_sdec *ptc_pt_sdec_new_stream(const struct ptc_pt_dcfg *cfg)
{
    return sdec_alloc(cfg);
}

void ptc_pt_sdec_set_config(struct ptc_pt_sdec *d, const struct ptc_pt_dcfg *cfg)
{
    d->cfg = *cfg;
}

void ptc_pt_sdec_set_ranges(struct ptc_pt_sdec *d, const struct ptc_pt_range *r, size_t n)
{
    d->cfg.ranges = r;
    d->cfg.num_ranges = n;
}

void ptc_pt_sdec_count_packets(struct ptc_pt_sdec *d, struct ptc_pt_pktstat *st)
{
    d->pk = st;
}

uint64_t ptc_pt_sdec_end(const struct ptc_pt_sdec *d) { return d->end; }

/* the oldest byte still needed: the current span's PSB (for libipt), else pos */
static uint64_t keep_from(const struct ptc_pt_sdec *d)
{
    return d->seg_started && d->span_start < d->pos ? d->span_start : d->pos;
}

int ptc_pt_sdec_append(struct ptc_pt_sdec *d, const void *p, size_t n)
{
    if (!n)
        return 0;
    d->blocked = 0;
    uint64_t keep = keep_from(d);
    size_t used = (size_t)(d->end - d->base);
    if (used + n > d->cap && keep > d->base) {
        /* drop what is decoded before growing */
        size_t drop = (size_t)(keep - d->base);
        memmove(d->own, d->own + drop, used - drop);
        d->base = keep;
        used -= drop;
    }
    if (used + n > d->cap) {
        size_t c = d->cap ? d->cap : 65536;
        while (c < used + n)
            c *= 2;
        void *v = realloc(d->own, c);
        if (!v)
            return -1;
        d->own = v;
        d->cap = c;
    }
    memcpy(d->own + used, p, n);
    d->buf = d->own;
    d->end += n;
    d->st.bytes += n;
    return 0;
}

int ptc_pt_sdec_add_break(struct ptc_pt_sdec *d, const struct ptc_pt_break *b)
{
    d->blocked = 0;
    if (d->nb == d->bcap) {
        size_t c = d->bcap ? d->bcap * 2 : 8;
        void *v = realloc(d->breaks, c * sizeof(*d->breaks));
        if (!v)
            return -1;
        d->breaks = v;
        d->bcap = c;
    }
    if (d->bi && d->bi == d->nb) { /* every break so far is passed: reuse the array */
        d->nb = d->bi = 0;
    }
    struct ptc_pt_break k = *b;
    if (d->have_passed && k.pos == d->passed.pos) {
        /* the same gap, reported again after the decoder passed it (a TRUNCATED record,
         * then the jump in AUX offsets when the next bytes come): one gap */
        if (k.lost > d->passed.lost) {
            d->st.lost_bytes += k.lost - d->passed.lost;
            d->passed.lost = k.lost;
        }
        return 0;
    }
    if (k.pos < d->pos)
        k.pos = d->pos; /* already decoded past it (should not happen): break here */
    size_t i = d->nb;
    while (i > d->bi && d->breaks[i - 1].pos > k.pos) {
        d->breaks[i] = d->breaks[i - 1];
        i--;
    }
    if (i > d->bi && d->breaks[i - 1].pos == k.pos) { /* the same gap reported twice */
        if (k.lost > d->breaks[i - 1].lost)
            d->breaks[i - 1].lost = k.lost;
        memmove(&d->breaks[i], &d->breaks[i + 1], (d->nb - i) * sizeof(*d->breaks));
        return 0;
    }
    d->breaks[i] = k;
    d->nb++;
    return 0;
}

void ptc_pt_sdec_finish(struct ptc_pt_sdec *d)
{
    d->final = 1;
    d->blocked = 0;
}

static uint64_t seg_end(const struct ptc_pt_sdec *d)
{
    return d->bi < d->nb ? d->breaks[d->bi].pos : d->end;
}

static int seg_final(const struct ptc_pt_sdec *d) { return d->bi < d->nb || d->final; }

/* first PSB at or after stream position from, before to (or to) */
static uint64_t psb_in(const struct ptc_pt_sdec *d, uint64_t from, uint64_t to)
{
    if (from >= to)
        return to;
    return d->base + ptc_pt_find_psb(d->buf, (size_t)(to - d->base), (size_t)(from - d->base));
}

static void count_packets(struct ptc_pt_sdec *d, uint64_t a, uint64_t b, int psb_at_b)
{
    if (d->pk && b > a)
        (void)ptc_pt_count_packets(&d->cfg, d->buf + (a - d->base), (size_t)(b - a), psb_at_b,
                                   d->pk);
}

static int add_skip(struct ptc_pt_sdec *d, uint64_t a, uint64_t b)
{
    if (d->pk)
        d->pk->unsynced_bytes += b - a;
    if (d->nskip && d->skips[d->nskip - 1].lost == a) {
        d->skips[d->nskip - 1].lost = b;
        return 0;
    }
    if (d->nskip == d->skcap) {
        /* old regions are never asked about again: keep the recent ones */
        if (d->nskip >= 64) {
            memmove(d->skips, d->skips + 32, (d->nskip - 32) * sizeof(*d->skips));
            d->nskip -= 32;
        } else {
            size_t c = d->skcap ? d->skcap * 2 : 8;
            void *v = realloc(d->skips, c * sizeof(*d->skips));
            if (!v)
                return -1;
            d->skips = v;
            d->skcap = c;
        }
    }
    d->skips[d->nskip].pos = a;
    d->skips[d->nskip].lost = b;
    d->skips[d->nskip].why = 0;
    d->nskip++;
    return 0;
}

int ptc_pt_sdec_in_skip(const struct ptc_pt_sdec *d, uint64_t pos)
{
    for (size_t i = d->nskip; i-- > 0;)
        if (pos >= d->skips[i].pos && pos < d->skips[i].lost)
            return 1;
    return !d->seg_started && pos >= d->seg_start && d->end > d->seg_start;
}

/* A span begins at the PSB at stream position at. Nothing of the fast path's state crosses
 * it, time included ("the decoder should never need to retain any information across a
 * PSB": Intel SDM Vol. 3C, "Decoder Synchronization (PSB+)"; the PSB+ restates the time):
 * libipt decodes a span from its PSB with a fresh decoder, and so do the parallel decode's
 * pieces, so a span decodes the same whoever decodes it and wherever the bytes before it
 * were cut. */
static void start_span(struct ptc_pt_sdec *d, uint64_t at)
{
    d->span_start = d->pos = at;
    d->span_end_known = 0;
    d->scanned = at + 16;
    d->fallback = 0;
    memset(&d->fs, 0, sizeof(d->fs));
    d->committed_ev = 0;
    d->st.spans++;
}

/* The PSB at or after stream position from, before to (ptc_pt_find_span_psb: the PSBs of
 * a run of PSB patterns are at its end); to when there is none. *unknown: there is a pattern,
 * but its run reaches to and more bytes may come (!final), so which of its patterns is a PSB
 * is not known yet; *pattern is then where it begins. */
static uint64_t span_psb_in(const struct ptc_pt_sdec *d, uint64_t from, uint64_t to, int final,
                            int *unknown, uint64_t *pattern)
{
    *unknown = 0;
    uint64_t q = psb_in(d, from, to);
    if (q >= to)
        return to;
    size_t len = (size_t)(to - d->base), k = (size_t)(q - d->base);
    if (!final && k + ptc_pt_psb_tail(d->buf + k, len - k) == len) {
        *unknown = 1;
        *pattern = q;
        return to;
    }
    return d->base + ptc_pt_run_psb(d->buf, len, k);
}

/* Looks for the PSB that ends the current span (the next after its own), up to se. */
static void find_span_end(struct ptc_pt_sdec *d, uint64_t se, int sf)
{
    if (d->span_end_known)
        return;
    uint64_t from = d->scanned >= d->span_start + 31 ? d->scanned - 15 : d->span_start + 16;
    int unknown;
    uint64_t pattern;
    uint64_t psb = span_psb_in(d, from, se, sf, &unknown, &pattern);
    if (psb < se) {
        d->span_end = psb;
        d->span_end_known = 1;
    } else if (unknown) {
        if (pattern > d->scanned)
            d->scanned = pattern; /* look there again when the run has ended */
    } else if (se > d->scanned) {
        d->scanned = se;
    }
}

/* libipt over [span_start, to), after the events the fast path already handed out;
 * psb_at_to: a PSB begins at to (a packet cut there is an error, not the end) */
static int libipt_span(struct ptc_pt_sdec *d, uint64_t to, int psb_at_to, uint64_t skip_events)
{
    d->aevs.n = 0;
    if (ptc_pt_ipt_decode(&d->cfg, d->buf + (d->span_start - d->base),
                          (size_t)(to - d->span_start), d->span_start, psb_at_to, &d->aevs) < 0)
        return -1;
    if (ptc_pt_interp_aevs(&d->cfg, &d->in, &d->aevs, skip_events))
        return -1;
    d->aevs.n = 0;
    return 0;
}

/* One step of decoding. Returns 1 after progress, 0 when it needs more bytes (or is at the
 * end), -1 on error. */
static int step(struct ptc_pt_sdec *d)
{
    uint64_t se = seg_end(d);
    int sf = seg_final(d);
    if (d->pos >= se && !(sf && d->seg_started && d->span_start < se)) {
        /* (a span still open at the segment's end is finished below: an OVF or FUP may
         * wait for the packet after it) */
        if (!sf)
            return 0;
        if (d->bi >= d->nb)
            return 0; /* the end */
        /* pass the break: the bytes after it do not continue the ones before */
        const struct ptc_pt_break *b = &d->breaks[d->bi++];
        d->passed = *b;
        d->have_passed = 1;
        d->st.truncations++;
        d->st.lost_bytes += b->lost;
        ptc_interp_settle(&d->in);
        d->in.have_resume = 0;
        if (ptc_interp_gap(&d->in, (uint8_t)(b->why ? b->why : PTC_PT_WHY_TRUNCATED), b->pos,
                           d->in.have_last, d->in.last_tsc))
            return -1;
        d->seg_started = 0;
        d->seg_start = d->pos = b->pos;
        return 1;
    }
    if (!d->seg_started) {
        /* bytes before the segment's first PSB cannot be decoded (last IP and time are
         * unknown): skip them */
        int unknown;
        uint64_t pattern;
        uint64_t psb = span_psb_in(d, d->pos, se, sf, &unknown, &pattern);
        if (unknown) { /* the PSB is in a run of patterns still growing: not before it */
            if (pattern == d->pos)
                return 0;
            d->st.skipped_bytes += pattern - d->pos;
            if (add_skip(d, d->pos, pattern))
                return -1;
            d->pos = pattern;
            return 1;
        }
        if (psb < se) {
            d->st.skipped_bytes += psb - d->pos;
            if (psb > d->pos && add_skip(d, d->pos, psb))
                return -1;
            d->seg_started = 1;
            memset(&d->fs, 0, sizeof(d->fs));
            start_span(d, psb);
            return 1;
        }
        uint64_t to = sf ? se : (se > d->pos + 15 ? se - 15 : d->pos); /* a PSB may straddle */
        if (to > d->pos) {
            d->st.skipped_bytes += to - d->pos;
            if (add_skip(d, d->pos, to))
                return -1;
            d->pos = to;
            return 1;
        }
        return 0;
    }
    if (d->blocked)
        return 0;
    if (d->cfg.mode != PTC_PT_MODE_LIBIPT && !d->fallback) {
        /* bytes that may belong to a run of PSB patterns whose rest has not arrived must
         * wait: which of them is a PSB, and so whether a packet decoded there now is one a
         * PSB cuts, is known only once the run has ended (ptc_pt_fast_run) */
        uint64_t lim = sf ? se : se - ptc_pt_psb_tail(d->buf + (d->pos - d->base),
                                                      (size_t)(se - d->pos));
        size_t qn0 = d->in.qn, consumed = 0;
        struct ptc_pt_interp saved = d->in;
        struct ptc_pt_stream_stats saved_st = d->st; /* hits the fast path counts */
        uint64_t ev0 = d->fs.nev;
        int r = ptc_pt_fast_run(&d->cfg, &d->fs, &d->in, d->buf + (d->pos - d->base),
                                (size_t)(lim - d->pos), d->pos, sf, &consumed);
        uint64_t at = d->pos + consumed;
        /* a packet before at ran into the PSB that ends the span: the fast path stopped at
         * a pattern that is not that PSB, or went on past it (and must not hand out what it
         * made of those bytes: libipt has an error there) */
        size_t held = (size_t)(lim - d->base), s0 = (size_t)(d->span_start - d->base),
               a0 = (size_t)(at - d->base);
        if ((r == PTC_FAST_PSB && !ptc_pt_psb_ends_span(d->buf, held, s0, a0)) ||
            (r == PTC_FAST_MORE && !sf && ptc_pt_psb_ran_into(d->buf, held, s0, a0)))
            r = PTC_FAST_FAIL;
        if (r == PTC_FAST_PSB) {
            count_packets(d, d->span_start, at, 1);
            start_span(d, at);
            return 1;
        }
        if (r == PTC_FAST_MORE) {
            d->pos = at;
            if (!sf)
                return consumed > 0;
            /* the segment's end ends the span */
            count_packets(d, d->span_start, se, d->psb_after && d->bi >= d->nb);
            d->span_start = se;
            return 1;
        }
        if (r == PTC_FAST_NOMEM)
            return -1;
        /* not for the fast path: forget what this call produced */
        saved.q = d->in.q;
        saved.qcap = d->in.qcap;
        d->in = saved;
        d->in.qn = qn0;
        d->st = saved_st; /* libipt counts this span's hits again */
        d->fallback = 1;
        d->committed_ev = ev0;
    }
    /* libipt: whole spans, to the next PSB pattern (the first at least 16 bytes after the
     * span's own), found before it decodes them, so that a packet running into that PSB is
     * one cut packet - an error - as for the fast path and the parallel decode's pieces */
    find_span_end(d, se, sf);
    uint64_t to;
    int psb_at; /* a PSB begins at to */
    if (d->span_end_known) {
        to = d->span_end;
        psb_at = 1;
    } else if (sf) {
        to = se;
        psb_at = d->psb_after && d->bi >= d->nb;
    } else {
        d->blocked = 1;
        return 0;
    }
    if (d->cfg.mode == PTC_PT_MODE_FAST_ONLY) {
        ptc_interp_error(&d->in, d->span_start, 0, 0);
    } else {
        if (d->cfg.mode != PTC_PT_MODE_LIBIPT)
            d->st.spans_libipt++;
        if (libipt_span(d, to, psb_at, d->committed_ev))
            return -1;
    }
    count_packets(d, d->span_start, to, psb_at);
    if (psb_at && to < se)
        start_span(d, to);
    else
        d->pos = d->span_start = to;
    d->fallback = 0;
    return 1;
}

/* Once every queued item was taken, the queue starts again from its beginning. */
static void rewind_drained_queue(struct ptc_pt_sdec *d)
{
    if (d->qi == d->in.qn) {
        d->qi = d->in.qn = 0;
        d->in.first_item = SIZE_MAX;
    }
}

static int refill(struct ptc_pt_sdec *d)
{
    if (!d->accumulate)
        rewind_drained_queue(d);
    while (d->qi == d->in.qn || d->accumulate) {
        int r = step(d);
        if (r < 0)
            return -1;
        if (!r)
            break;
    }
    return 0;
}

int ptc_pt_sdec_next(struct ptc_pt_sdec *d, struct ptc_pt_item *out)
{
    if (d->qi == d->in.qn) {
        if (refill(d))
            return -1;
        if (d->qi == d->in.qn)
            return 0;
    }
    *out = d->in.q[d->qi++];
    return 1;
}

long ptc_pt_sdec_batch(struct ptc_pt_sdec *d, const struct ptc_pt_item **items)
{
    if (d->qi == d->in.qn) {
        if (refill(d))
            return -1;
        if (d->qi == d->in.qn)
            return 0;
    }
    *items = d->in.q + d->qi;
    long n = (long)(d->in.qn - d->qi);
    d->qi = d->in.qn;
    return n;
}

/* pt_par.c: reuse a decoder (and its queue's memory: fresh memory for every piece costs
 * page faults, which serialise threads) for another piece of a complete stream */
void ptc_pt_sdec_reuse_at(struct ptc_pt_sdec *d, const uint8_t *buf, size_t len,
                          uint64_t base, int psb_after)
{
    struct ptc_pt_item *q = d->in.q;
    size_t qcap = d->in.qcap;
    struct ptc_pt_aevs aevs = d->aevs;
    struct ptc_pt_dcfg cfg = d->cfg;
    free(d->own);
    free(d->breaks);
    free(d->skips);
    memset(d, 0, sizeof(*d));
    d->cfg = cfg;
    d->in.q = q;
    d->in.qcap = qcap;
    d->in.st = &d->st;
    d->in.first_item = SIZE_MAX;
    d->aevs = aevs;
    d->aevs.n = 0;
    d->buf = buf;
    d->base = d->seg_start = d->pos = base;
    d->end = base + len;
    d->final = 1;
    d->psb_after = psb_after;
    d->st.bytes = len;
}

/* pt_par.c: decode a whole piece into the queue; the piece starts in the state given */
int ptc_pt_sdec_run_piece(struct ptc_pt_sdec *d, int first_open)
{
    ptc_pt_sdec_begin_piece(d, first_open);
    return refill(d);
}

void ptc_pt_sdec_begin_piece(struct ptc_pt_sdec *d, int first_open)
{
    d->accumulate = 1;
    d->in.first_open = (uint8_t)first_open;
}

int ptc_pt_sdec_piece_step(struct ptc_pt_sdec *d)
{
    /* items go only once taken, so a queue not yet handed out is never rewound */
    rewind_drained_queue(d);
    return step(d);
}

size_t ptc_pt_sdec_take(struct ptc_pt_sdec *d, const struct ptc_pt_item **items)
{
    size_t n = d->in.qn - d->qi;
    *items = d->in.q ? d->in.q + d->qi : NULL; /* no queue yet: nothing, and no NULL + 0 */
    d->qi = d->in.qn;
    return n;
}

int ptc_pt_sdec_caught_up(const struct ptc_pt_sdec *d) { return !d->blocked; }

int ptc_pt_sdec_prefetch(struct ptc_pt_sdec *d, size_t max_bytes)
{
    rewind_drained_queue(d);
    uint64_t stop = d->pos + max_bytes;
    while (d->pos < stop) {
        int r = step(d);
        if (r < 0)
            return -1;
        if (!r)
            break;
    }
    return 0;
}

size_t ptc_pt_sdec_queued(const struct ptc_pt_sdec *d) { return d->in.qn - d->qi; }

uint64_t ptc_pt_sdec_undecoded(const struct ptc_pt_sdec *d)
{
    return d->end > d->pos && !d->blocked ? d->end - d->pos : 0;
}

const struct ptc_pt_stream_stats *ptc_pt_sdec_stats(const struct ptc_pt_sdec *d)
{
    return &d->st;
}

const struct ptc_pt_interp *ptc_pt_sdec_interp(const struct ptc_pt_sdec *d) { return &d->in; }

size_t ptc_pt_sdec_held(const struct ptc_pt_sdec *d)
{
    return d->cap + d->in.qcap * sizeof(*d->in.q) + d->aevs.cap * sizeof(*d->aevs.v) +
           d->bcap * sizeof(*d->breaks) + d->skcap * sizeof(*d->skips);
}

void ptc_pt_sdec_free(struct ptc_pt_sdec *d)
{
    if (!d)
        return;
    free(d->own);
    free(d->breaks);
    free(d->skips);
    free(d->in.q);
    free(d->aevs.v);
    free(d);
}
