/* pt-par: span-split decode equality. For random multi-CPU traces (test/pt/ptgen.c: OVF,
 * interrupts on stubs across PSBs, truncations, PAD, foreign packets, every timing mode),
 * each CPU's bytes are decoded
 *   - serially with the fast path (the reference),
 *   - serially with libipt's query decoder only (decoder of record),
 *   - in parallel (1, 2 and 3 worker threads, pieces of a few PSB spans, so that nearly
 *     every PSB is a cut), all CPUs at once (merged by time) and each CPU's stream alone
 *     (a single stream is handed out by the decoding threads in turn, pt_par_relay.c),
 * and the parallel result must equal the serial one item for item (kind, reason, IP,
 * stream offset, time), libipt's must give the same items (times too, except with CYC,
 * where libipt estimates its own way: docs/pt.md), and the merge across CPUs must be in
 * time order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptc_pt_decode.h"
#include "ptgen.h"

struct items {
    struct ptc_pt_item *v;
    size_t n, cap;
};

static void push(struct items *a, const struct ptc_pt_item *it)
{
    if (a->n == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 256;
        a->v = realloc(a->v, a->cap * sizeof(*a->v));
        if (!a->v)
            abort();
    }
    a->v[a->n++] = *it;
}

struct streams {
    uint8_t *buf[8];
    size_t len[8], cap[8];
};

static int add_chunk(void *ctx, const struct ptc_chunk_header *h, const void *p)
{
    struct streams *s = ctx;
    if (h->type != PTC_CHUNK_PT_AUX)
        return 0;
    struct ptc_pt_aux a;
    memcpy(&a, p, sizeof(a));
    if (a.cpu >= 8)
        return 0;
    size_t n = h->payload_size - sizeof(a);
    if (s->len[a.cpu] + n > s->cap[a.cpu]) {
        s->cap[a.cpu] = (s->len[a.cpu] + n) * 2;
        s->buf[a.cpu] = realloc(s->buf[a.cpu], s->cap[a.cpu]);
        if (!s->buf[a.cpu])
            abort();
    }
    memcpy(s->buf[a.cpu] + s->len[a.cpu], (const uint8_t *)p + sizeof(a), n);
    s->len[a.cpu] += n;
    return 0;
}

static void serial(const struct ptc_pt_dcfg *cfg, const uint8_t *b, size_t n, struct items *out)
{
    struct ptc_pt_sdec *d = ptc_pt_sdec_new(cfg, b, n, NULL, 0);
    struct ptc_pt_item it;
    while (ptc_pt_sdec_next(d, &it) > 0)
        push(out, &it);
    ptc_pt_sdec_free(d);
}

struct merged {
    struct items per[8];
    uint64_t last_tsc;
    int order_ok;
};

static int collect(void *ctx, size_t stream, const struct ptc_pt_item *v, size_t n)
{
    struct merged *m = ctx;
    for (size_t i = 0; i < n; i++) {
        const struct ptc_pt_item *it = &v[i];
        push(&m->per[stream], it);
        if (it->has_time) {
            if (it->tsc < m->last_tsc)
                m->order_ok = 0;
            m->last_tsc = it->tsc;
        }
    }
    return 0;
}

/* offsets: libipt reports an event at the start of the packets it binds to, the fast path
 * after them, so they are compared only between fast-path decodes */
static int same(const struct ptc_pt_item *x, const struct ptc_pt_item *y, int times, int offs)
{
    return x->kind == y->kind && x->why == y->why && (!offs || x->off == y->off) &&
           (x->kind != PTC_PT_ITEM_HIT || x->ip == y->ip) && x->has_time == y->has_time &&
           (!times || x->tsc == y->tsc);
}

static int compare(const char *what, const struct items *ref, const struct items *got,
                   int times, int offs)
{
    size_t m = ref->n < got->n ? ref->n : got->n;
    for (size_t i = 0; i < m; i++)
        if (!same(&ref->v[i], &got->v[i], times, offs)) {
            printf("FAIL %s: item %zu: expected kind %d why %d ip %llx off %llu time %d:%llu, "
                   "got kind %d why %d ip %llx off %llu time %d:%llu\n",
                   what, i, ref->v[i].kind, ref->v[i].why, (unsigned long long)ref->v[i].ip,
                   (unsigned long long)ref->v[i].off, ref->v[i].has_time,
                   (unsigned long long)ref->v[i].tsc, got->v[i].kind, got->v[i].why,
                   (unsigned long long)got->v[i].ip, (unsigned long long)got->v[i].off,
                   got->v[i].has_time, (unsigned long long)got->v[i].tsc);
            return 1;
        }
    if (ref->n != got->n) {
        printf("FAIL %s: %zu items expected, %zu decoded\n", what, ref->n, got->n);
        return 1;
    }
    return 0;
}

static int monotonic(const struct items *a)
{
    uint64_t t = 0;
    for (size_t i = 0; i < a->n; i++)
        if (a->v[i].has_time) {
            if (a->v[i].tsc < t)
                return 0;
            t = a->v[i].tsc;
        }
    return 1;
}

static int run(const struct ptgen_opts *o, const char *path, uint64_t *nitems)
{
    struct ptgen_result r;
    if (ptgen_write(o, path, &r)) {
        printf("FAIL: cannot write %s\n", path);
        return 1;
    }
    struct streams S;
    memset(&S, 0, sizeof(S));
    struct ptc_file_header fh;
    char err[256];
    if (ptc_pt_read_file(path, &fh, add_chunk, &S, err, sizeof(err))) {
        printf("FAIL: %s\n", err);
        return 1;
    }
    struct ptc_pt_range rg[4];
    for (int i = 0; i < r.nmods; i++) {
        rg[i].start = r.mods[i].start;
        rg[i].end = r.mods[i].start + 16ull * r.mods[i].nstubs;
    }
    for (int i = 0; i < r.nmods; i++) /* sorted, as the front-end gives them */
        for (int j = i + 1; j < r.nmods; j++)
            if (rg[j].start < rg[i].start) {
                struct ptc_pt_range t = rg[i];
                rg[i] = rg[j];
                rg[j] = t;
            }
    struct ptc_pt_dcfg cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.flags = (o->timing >= PTGEN_TSC ? PTC_PT_F_TSC : 0) |
                (o->timing >= PTGEN_MTC ? PTC_PT_F_MTC : 0) |
                (o->timing >= PTGEN_CYC ? PTC_PT_F_CYC : 0);
    cfg.mtc_freq = 3;
    cfg.nom_freq = 24;
    cfg.cpuid_0x15_eax = 1;
    cfg.cpuid_0x15_ebx = 40;
    cfg.ranges = rg;
    cfg.num_ranges = (size_t)r.nmods;
    int bad = 0, ns = o->ncpus, all_mono = 1;
    struct items ref[8], ipt[8];
    memset(ref, 0, sizeof(ref));
    memset(ipt, 0, sizeof(ipt));
    struct ptc_pt_par_stream ps[8];
    char what[128];
    for (int c = 0; c < ns; c++) {
        cfg.mode = PTC_PT_MODE_FAST;
        serial(&cfg, S.buf[c], S.len[c], &ref[c]);
        cfg.mode = PTC_PT_MODE_LIBIPT;
        serial(&cfg, S.buf[c], S.len[c], &ipt[c]);
        snprintf(what, sizeof(what), "seed %llu timing %d cpu %d libipt vs fast",
                 (unsigned long long)o->seed, o->timing, c);
        bad |= compare(what, &ref[c], &ipt[c], o->timing != PTGEN_CYC, 0);
        all_mono &= monotonic(&ref[c]);
        ps[c].buf = S.buf[c];
        ps[c].len = S.len[c];
        *nitems += ref[c].n;
    }
    cfg.mode = PTC_PT_MODE_FAST;
    for (int threads = 1; threads <= 3 && !bad; threads++) {
        struct merged m;
        memset(&m, 0, sizeof(m));
        m.order_ok = 1;
        size_t piece = (size_t)o->psb_period * (size_t)threads; /* a cut at most PSBs */
        if (ptc_pt_par_decode(&cfg, ps, (size_t)ns, threads, piece, collect, &m)) {
            printf("FAIL: ptc_pt_par_decode failed\n");
            bad = 1;
        }
        for (int c = 0; c < ns && !bad; c++) {
            snprintf(what, sizeof(what), "seed %llu timing %d cpu %d parallel (%d threads)",
                     (unsigned long long)o->seed, o->timing, c, threads);
            bad |= compare(what, &ref[c], &m.per[c], 1, 1);
        }
        if (!bad && all_mono && !m.order_ok) {
            printf("FAIL seed %llu: the merge across CPUs is not in time order\n",
                   (unsigned long long)o->seed);
            bad = 1;
        }
        for (int c = 0; c < 8; c++)
            free(m.per[c].v);
    }
    /* every CPU's stream alone: one stream takes the relay (pt_par_relay.c), where the
     * threads that decoded the pieces hand them out in turn, with the same join fix-up */
    for (int c = 0; c < ns && !bad; c++)
        for (int threads = 2; threads <= 3 && !bad; threads++) {
            struct merged m;
            memset(&m, 0, sizeof(m));
            m.order_ok = 1;
            size_t piece = (size_t)o->psb_period * (size_t)(threads - 1);
            struct ptc_pt_par_stream one = ps[c];
            if (ptc_pt_par_decode(&cfg, &one, 1, threads, piece, collect, &m)) {
                printf("FAIL: ptc_pt_par_decode (one stream) failed\n");
                bad = 1;
            }
            snprintf(what, sizeof(what), "seed %llu timing %d cpu %d alone (%d threads)",
                     (unsigned long long)o->seed, o->timing, c, threads);
            bad |= compare(what, &ref[c], &m.per[0], 1, 1);
            uint64_t want = 0;
            for (size_t i = 0; i < ref[c].n; i++)
                want += ref[c].v[i].kind == PTC_PT_ITEM_HIT;
            if (!bad && (one.st.hits != want || ps[c].st.hits != want)) {
                printf("FAIL %s: %llu hits counted alone, %llu with the other streams, "
                       "%llu items\n", what, (unsigned long long)one.st.hits,
                       (unsigned long long)ps[c].st.hits, (unsigned long long)want);
                bad = 1;
            }
            free(m.per[0].v);
        }
    for (int c = 0; c < 8; c++) {
        free(ref[c].v);
        free(ipt[c].v);
        free(S.buf[c]);
    }
    ptgen_free(&r);
    return bad;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 100;
    char path[256];
    snprintf(path, sizeof(path), "%s/pt-par-%d.ptc", argc > 2 ? argv[2] : "/tmp", (int)getpid());
    int failures = 0, runs = 0;
    uint64_t items = 0;
    for (int seed = 1; seed <= n && failures < 5; seed++)
        for (int timing = 0; timing <= 3 && failures < 5; timing++) {
            struct ptgen_opts o;
            ptgen_default(&o, (uint64_t)seed + 7000);
            o.timing = timing;
            o.ncpus = 1 + seed % 4;
            o.psb_period = seed % 3 == 0 ? 64 : 256;
            if (seed % 5 == 2)
                o.p_foreign = 20;
            if (seed % 4 == 1)
                o.tail_cut = 1;
            o.p_intr = 60; /* many interrupts, many of them across a PSB */
            failures += run(&o, path, &items);
            runs++;
        }
    unlink(path);
    printf("%s: %d traces, %llu items, parallel == serial == libipt, %d failed\n",
           failures ? "FAIL" : "PASS", runs, (unsigned long long)items, failures);
    return failures ? 1 : 0;
}
