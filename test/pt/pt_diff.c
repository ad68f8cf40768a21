/* The differential check of the PT decoders (pt_diff.h). */
#include "pt_diff.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct ptc_pt_range diff_range = {PT_DIFF_STUBS,
                                               PT_DIFF_STUBS + 16ull * PT_DIFF_NSTUBS};

size_t pt_diff_config(const uint8_t *p, size_t n, struct ptc_pt_dcfg *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->ranges = &diff_range;
    cfg->num_ranges = 1;
    if (n < 4)
        return 0;
    /* byte 0: timing flags (tsc, mtc, cyc) in bits 0-1 and a CPU in bits 2-4 - one of each
     * set of errata libipt 2.0.5's pt_cpu_errata gives, so that every workaround of its
     * query decoder meets the fast path (docs/pt.md, "Errata"); byte 1: MTC period and
     * nominal frequency; bytes 2-3: the TSC:ART ratio */
    static const uint32_t timing[4] = {0, PTC_PT_F_TSC, PTC_PT_F_TSC | PTC_PT_F_MTC,
                                       PTC_PT_F_TSC | PTC_PT_F_MTC | PTC_PT_F_CYC};
    static const struct { uint8_t model, stepping; } cpus[8] = {
        {0, 0},
        {85, 4}, /* Skylake server: SKZ84, BDM70, SKD022, SKL014 */
        {61, 0}, /* Broadwell: BDM70, BDM64 */
        {78, 3}, /* Skylake client: SKD007, SKD010, BDM70, SKD022, SKL014, SKL168 */
        {92, 9}, /* Apollo Lake: APL11, APL12 */
        {0, 0}, {0, 0}, {0, 0}};
    cfg->flags = timing[p[0] & 3];
    unsigned k = (p[0] >> 2) & 7;
    if (cpus[k].model) {
        cfg->cpu_family = 6;
        cfg->cpu_model = cpus[k].model;
        cfg->cpu_stepping = cpus[k].stepping;
    }
    cfg->mtc_freq = p[1] & 15;
    cfg->nom_freq = (uint8_t)(p[1] >> 4 ? 4 * (p[1] >> 4) : 0);
    cfg->cpuid_0x15_eax = p[2] & 7 ? (uint32_t)(p[2] & 7) : 0;
    cfg->cpuid_0x15_ebx = p[3];
    return 4;
}

void pt_diff_out_free(struct pt_diff_out *o)
{
    free(o->v);
    memset(o, 0, sizeof(*o));
}

static int out_push(struct pt_diff_out *o, const struct ptc_pt_item *it, size_t n)
{
    if (o->n + n > o->cap) {
        size_t c = o->cap ? o->cap : 256;
        while (c < o->n + n)
            c *= 2;
        void *v = realloc(o->v, c * sizeof(*o->v));
        if (!v)
            return -1;
        o->v = v;
        o->cap = c;
    }
    memcpy(o->v + o->n, it, n * sizeof(*it));
    o->n += n;
    return 0;
}

static int drain(struct ptc_pt_sdec *d, struct pt_diff_out *o)
{
    const struct ptc_pt_item *it;
    long n;
    while ((n = ptc_pt_sdec_batch(d, &it)) > 0)
        if (out_push(o, it, (size_t)n))
            return -1;
    return n < 0 ? -1 : 0;
}

int pt_diff_decode(const struct ptc_pt_dcfg *cfg_in, int mode, const uint8_t *buf, size_t len,
                   struct pt_diff_out *out)
{
    struct ptc_pt_dcfg cfg = *cfg_in;
    cfg.mode = mode;
    memset(out, 0, sizeof(*out));
    struct ptc_pt_sdec *d = ptc_pt_sdec_new(&cfg, buf, len, NULL, 0);
    if (!d)
        return -1;
    int rc = drain(d, out);
    out->st = *ptc_pt_sdec_stats(d);
    ptc_pt_sdec_free(d);
    return rc;
}

/* the fast path fed in pieces of 1 to 64 bytes, taking items after every piece */
static int decode_streaming(const struct ptc_pt_dcfg *cfg_in, int mode, const uint8_t *buf,
                            size_t len, uint32_t seed, struct pt_diff_out *out)
{
    struct ptc_pt_dcfg cfg = *cfg_in;
    cfg.mode = mode;
    memset(out, 0, sizeof(*out));
    struct ptc_pt_sdec *d = ptc_pt_sdec_new_stream(&cfg);
    if (!d)
        return -1;
    int rc = 0;
    uint32_t x = seed | 1;
    for (size_t pos = 0; pos < len && !rc;) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        size_t k = 1 + x % 64;
        if (k > len - pos)
            k = len - pos;
        rc = ptc_pt_sdec_append(d, buf + pos, k) ? -1 : drain(d, out);
        pos += k;
    }
    if (!rc) {
        ptc_pt_sdec_finish(d);
        rc = drain(d, out);
    }
    out->st = *ptc_pt_sdec_stats(d);
    ptc_pt_sdec_free(d);
    return rc;
}

static int par_collect(void *ctx, size_t stream, const struct ptc_pt_item *it, size_t n)
{
    (void)stream;
    return out_push(ctx, it, n);
}

static int decode_parallel(const struct ptc_pt_dcfg *cfg_in, int threads, size_t piece,
                           const uint8_t *buf, size_t len, struct pt_diff_out *out)
{
    struct ptc_pt_dcfg cfg = *cfg_in;
    cfg.mode = PTC_PT_MODE_FAST;
    memset(out, 0, sizeof(*out));
    struct ptc_pt_par_stream s = {.buf = buf, .len = len};
    int rc = ptc_pt_par_decode(&cfg, &s, 1, threads, piece, par_collect, out);
    out->st = s.st;
    return rc ? -1 : 0;
}

static const char *kind_name(const struct ptc_pt_item *it)
{
    if (it->kind == PTC_PT_ITEM_HIT)
        return "hit";
    static const char *const why[] = {"gap?", "gap(ovf)", "gap(truncated)", "gap(decode)",
                                      "gap(suspect)"};
    return why[it->why < 5 ? it->why : 0];
}

static void describe(char *s, size_t n, const struct ptc_pt_item *it)
{
    if (!it) {
        snprintf(s, n, "nothing");
        return;
    }
    snprintf(s, n, "%s ip %#llx time %d:%llu off %llu", kind_name(it),
             (unsigned long long)it->ip, it->has_time, (unsigned long long)it->tsc,
             (unsigned long long)it->off);
}

/* 0 when b says what a says; else 1 and why. Times are compared unless cyc: with CYC
 * timing the fast path sums CYC deltas exactly while libipt estimates them through its
 * calibration (docs/pt.md: off by tens of cycles, sometimes going backwards), and the
 * estimate depends on how much of the stream libipt saw (a span the fast path handed over
 * after its first items went out is libipt's from there on), so only whether an item has a
 * time can agree there. */
static int compare(const char *an, const struct pt_diff_out *a, const char *bn,
                   const struct pt_diff_out *b, int cyc, char *why, size_t wn)
{
    size_t n = a->n > b->n ? a->n : b->n;
    for (size_t i = 0; i < n; i++) {
        const struct ptc_pt_item *x = i < a->n ? &a->v[i] : NULL,
                                 *y = i < b->n ? &b->v[i] : NULL;
        int same = x && y && x->kind == y->kind && x->off == y->off &&
                   x->has_time == y->has_time &&
                   (!x->has_time || cyc || x->tsc == y->tsc) &&
                   (x->kind == PTC_PT_ITEM_HIT ? x->ip == y->ip : x->why == y->why);
        if (!same) {
            char dx[128], dy[128];
            describe(dx, sizeof(dx), x);
            describe(dy, sizeof(dy), y);
            snprintf(why, wn, "item %zu of %zu/%zu: %s gives %s, %s gives %s", i, a->n, b->n,
                     an, dx, bn, dy);
            return 1;
        }
    }
    const struct ptc_pt_stream_stats *s = &a->st, *t = &b->st;
#define SAME(f)                                                                            \
    if (s->f != t->f) {                                                                    \
        snprintf(why, wn, "%s: %s counts %llu, %s %llu", #f, an, (unsigned long long)s->f,  \
                 bn, (unsigned long long)t->f);                                            \
        return 1;                                                                          \
    }
    SAME(hits)
    SAME(gaps)
    SAME(ovf)
    SAME(decode_errors)
    SAME(truncations)
    SAME(resumes)
    SAME(stray)
    SAME(skipped_bytes)
#undef SAME
    return 0;
}

int pt_diff_run(const struct ptc_pt_dcfg *cfg, const uint8_t *buf, size_t len,
                uint32_t split_seed, char *why, size_t why_size)
{
    struct pt_diff_out ref, fast, o;
    memset(&fast, 0, sizeof(fast));
    int rc = pt_diff_decode(cfg, PTC_PT_MODE_LIBIPT, buf, len, &ref);
    for (int k = 0; k < 6 && !rc; k++) {
        const char *name = "";
        switch (k) {
        case 0:
            name = "fast path";
            rc = pt_diff_decode(cfg, PTC_PT_MODE_FAST, buf, len, &o);
            break;
        case 1:
            name = "libipt, streaming";
            rc = decode_streaming(cfg, PTC_PT_MODE_LIBIPT, buf, len, split_seed * 7 + 1, &o);
            break;
        case 2:
            name = "fast path, streaming";
            rc = decode_streaming(cfg, PTC_PT_MODE_FAST, buf, len, split_seed, &o);
            break;
        case 3:
            name = "parallel, 1 thread";
            rc = decode_parallel(cfg, 1, 16 + split_seed % 256, buf, len, &o);
            break;
        case 4:
            name = "parallel, 2 threads";
            rc = decode_parallel(cfg, 2, 16 + (split_seed >> 8) % 256, buf, len, &o);
            break;
        case 5:
            name = "parallel, 3 threads";
            rc = decode_parallel(cfg, 3, 16 + (split_seed >> 16) % 64, buf, len, &o);
            break;
        }
        if (!rc)
            rc = compare(k < 2 ? "libipt" : "fast path", k < 2 ? &ref : &fast, name, &o,
                         k < 3 && (cfg->flags & PTC_PT_F_CYC), why, why_size);
        if (k == 0 && !rc) {
            fast = o; /* the parallel decodes are the fast path's, times included */
            continue;
        }
        pt_diff_out_free(&o);
    }
    pt_diff_out_free(&ref);
    pt_diff_out_free(&fast);
    return rc;
}
