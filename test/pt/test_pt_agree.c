/* pt-agree: the fast PT path and libipt agree (DESIGN decision 7) on streams a stub trace
 * never holds: cut packets, packets overlapping a PSB, CYC without CYC enabled, errata,
 * damaged PSB+, and mutations of ptgen's streams. Every case goes through pt_diff_run
 * (fast path, libipt alone, streaming, parallel: the same hits, times, gaps and errors),
 * and the cases the issue named are also held to what they must decode to. The packet
 * statistics (`ptcall stat`) and the front-end's per-stream and per-thread gap counts are
 * checked on such streams too.
 *
 *   test_pt_agree [MUTATED_STREAMS] [DIR]
 */
#include <intel-pt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pt_check.h"
#include "pt_diff.h"
#include "ptgen.h"

/* ---- streams, packet by packet (libipt's encoder) ------------------------------------ */

struct sbuf {
    uint8_t b[8192];
    size_t n;
};

static void raw(struct sbuf *s, const void *p, size_t n)
{
    memcpy(s->b + s->n, p, n);
    s->n += n;
}

static size_t pkt(struct sbuf *s, const struct pt_packet *p)
{
    struct pt_config c;
    pt_config_init(&c);
    c.begin = s->b + s->n;
    c.end = s->b + sizeof(s->b);
    struct pt_encoder *e = pt_alloc_encoder(&c);
    int r = e ? pt_enc_next(e, p) : -1;
    pt_free_encoder(e);
    if (r < 0) {
        printf("FAIL: cannot encode packet type %d\n", p->type);
        exit(1);
    }
    s->n += (size_t)r;
    return (size_t)r;
}

static void p0(struct sbuf *s, enum pt_packet_type t)
{
    struct pt_packet p = {.type = t};
    pkt(s, &p);
}

static void tsc(struct sbuf *s, uint64_t v)
{
    struct pt_packet p = {.type = ppt_tsc};
    p.payload.tsc.tsc = v;
    pkt(s, &p);
}

static void cbr(struct sbuf *s, uint8_t r)
{
    struct pt_packet p = {.type = ppt_cbr};
    p.payload.cbr.ratio = r;
    pkt(s, &p);
}

static void tma(struct sbuf *s, uint16_t ctc, uint16_t fc)
{
    struct pt_packet p = {.type = ppt_tma};
    p.payload.tma.ctc = ctc;
    p.payload.tma.fc = fc;
    pkt(s, &p);
}

static void mtc(struct sbuf *s, uint8_t ctc)
{
    struct pt_packet p = {.type = ppt_mtc};
    p.payload.mtc.ctc = ctc;
    pkt(s, &p);
}

static void cyc(struct sbuf *s, uint64_t v)
{
    struct pt_packet p = {.type = ppt_cyc};
    p.payload.cyc.value = v;
    pkt(s, &p);
}

static size_t ip(struct sbuf *s, enum pt_packet_type t, uint64_t a, enum pt_ip_compression c)
{
    struct pt_packet p = {.type = t};
    p.payload.ip.ipc = c;
    p.payload.ip.ip = a;
    return pkt(s, &p);
}

#define STUB(i) (PT_DIFF_STUBS + 16ull * (i))

/* PSB+ as the hardware writes it: PSB, TSC, (TMA), CBR, PSBEND */
static void psb_plus(struct sbuf *s, uint64_t t, int with_tma)
{
    p0(s, ppt_psb);
    tsc(s, t);
    if (with_tma)
        tma(s, 0, 0);
    cbr(s, 24);
    p0(s, ppt_psbend);
}

/* a call of stub i: TIP.PGE into it, TIP.PGD out with a suppressed IP */
static void hit(struct sbuf *s, uint32_t i)
{
    ip(s, ppt_tip_pge, STUB(i), pt_ipc_sext_48);
    ip(s, ppt_tip_pgd, 0, pt_ipc_suppressed);
}

/* ---- checks --------------------------------------------------------------------------- */

static struct ptc_pt_dcfg cfg_of(uint32_t flags, uint16_t family, uint8_t model)
{
    static const struct ptc_pt_range r = {PT_DIFF_STUBS, PT_DIFF_STUBS + 16ull * PT_DIFF_NSTUBS};
    struct ptc_pt_dcfg c;
    memset(&c, 0, sizeof(c));
    c.flags = flags;
    c.mtc_freq = 3;
    c.nom_freq = 24;
    c.cpuid_0x15_eax = 1;
    c.cpuid_0x15_ebx = 40;
    c.cpu_family = family;
    c.cpu_model = model;
    c.ranges = &r;
    c.num_ranges = 1;
    return c;
}

/* every decoder agrees on buf, for several ways of cutting it */
static void agree(const char *what, const struct ptc_pt_dcfg *c, const uint8_t *b, size_t n)
{
    for (uint32_t seed = 1; seed < 40; seed += 3) {
        char why[512];
        int r = pt_diff_run(c, b, n, seed * 2654435761u, why, sizeof(why));
        CHECK(r == 0, "%s: the decoders disagree (split seed %u): %s", what, seed,
              r > 0 ? why : "a decoder failed");
        if (r)
            return;
    }
}

struct want {
    int kind;      /* PTC_PT_ITEM_HIT / GAP */
    uint32_t what; /* stub index, or gap reason */
    int has_time;
    uint64_t tsc;
};

/* the items of both serial decoders are exactly w[0..n) */
static void expect(const char *what, const struct ptc_pt_dcfg *c, const uint8_t *b, size_t len,
                   const struct want *w, size_t n, uint64_t decode_errors)
{
    for (int mode = 0; mode < 2; mode++) {
        struct pt_diff_out o;
        CHECK(!pt_diff_decode(c, mode, b, len, &o), "%s: decode", what);
        const char *m = mode ? "libipt" : "fast path";
        CHECK(o.n == n, "%s (%s): %zu items, want %zu", what, m, o.n, n);
        for (size_t i = 0; i < n && i < o.n; i++) {
            const struct ptc_pt_item *it = &o.v[i];
            int ok = it->kind == w[i].kind && it->has_time == w[i].has_time &&
                     (!w[i].has_time || it->tsc == w[i].tsc) &&
                     (it->kind == PTC_PT_ITEM_HIT ? it->ip == STUB(w[i].what)
                                                  : it->why == w[i].what);
            CHECK(ok, "%s (%s): item %zu is %s %llx/%u time %d:%llu, want %s %u time %d:%llu",
                  what, m, i, it->kind == PTC_PT_ITEM_HIT ? "hit" : "gap",
                  (unsigned long long)it->ip, it->why, it->has_time,
                  (unsigned long long)it->tsc, w[i].kind == PTC_PT_ITEM_HIT ? "hit" : "gap",
                  w[i].what, w[i].has_time, (unsigned long long)w[i].tsc);
        }
        CHECK(o.st.decode_errors == decode_errors, "%s (%s): %llu decode errors, want %llu",
              what, m, (unsigned long long)o.st.decode_errors,
              (unsigned long long)decode_errors);
        pt_diff_out_free(&o);
    }
}

#define HIT(i, t) {PTC_PT_ITEM_HIT, (i), 1, (t)}
#define GAP(why) {PTC_PT_ITEM_GAP, (why), 0, 0}

/* ---- the cases the issue named --------------------------------------------------------- */

/* A TIP.PGE cut short by a PSB: the fast path used to split there into two spans and no
 * gap, libipt's continuous decode found one span, a gap and an error. Now: the cut packet is
 * one decode error, and the next span starts at the PSB with its own time. */
static void cut_before_psb(void)
{
    struct sbuf s = {.n = 0};
    psb_plus(&s, 1000, 0);
    hit(&s, 1);
    struct sbuf t = {.n = 0};
    ip(&t, ppt_tip_pge, STUB(2), pt_ipc_sext_48);
    raw(&s, t.b, 3); /* 3 of its 7 bytes */
    psb_plus(&s, 5000, 0);
    hit(&s, 3);
    struct ptc_pt_dcfg c = cfg_of(PTC_PT_F_TSC, 0, 0);
    static const struct want w[] = {HIT(1, 1000), GAP(PTC_PT_WHY_DECODE), HIT(3, 5000)};
    expect("cut packet before a PSB", &c, s.b, s.n, w, 3, 1);
    agree("cut packet before a PSB", &c, s.b, s.n);
}

/* A packet whose payload runs into a PSB (a TSC that swallows the PSB's first 4 bytes):
 * libipt reported a decode error; the fast path none, and the hits after the PSB came out
 * with the time of the swallowing TSC, earlier than the PSB+'s. Now both report the gap and
 * start again at the PSB with its time. */
static void overlap_psb(void)
{
    struct sbuf s = {.n = 0};
    psb_plus(&s, 1000, 0);
    hit(&s, 1);
    static const uint8_t tsc_head[] = {0x19, 0x10, 0x00, 0x00}; /* a TSC, 3 of 7 bytes */
    raw(&s, tsc_head, sizeof(tsc_head));
    psb_plus(&s, 900000, 0);
    hit(&s, 4);
    hit(&s, 5);
    struct ptc_pt_dcfg c = cfg_of(PTC_PT_F_TSC, 0, 0);
    static const struct want w[] = {HIT(1, 1000), GAP(PTC_PT_WHY_DECODE), HIT(4, 900000),
                                    HIT(5, 900000)};
    expect("packet overlapping a PSB", &c, s.b, s.n, w, 4, 1);
    agree("packet overlapping a PSB", &c, s.b, s.n);
    /* the same with the PSB+ of the next span later on: parallel pieces cut there */
    struct sbuf l = {.n = 0};
    for (int k = 0; k < 20; k++) {
        psb_plus(&l, 1000 + 100000ull * (uint64_t)k, 0);
        hit(&l, (uint32_t)k);
        if (k % 3 == 1)
            raw(&l, tsc_head, 1 + (size_t)k % 4);
    }
    agree("packets overlapping PSBs, many spans", &c, l.b, l.n);
}

/* CYC packets in a stream configured without CYC (the hardware writes none without
 * CYCEn): the fast path ignored them, libipt applied them to its times. Both now give
 * libipt's reading. */
static void cyc_unconfigured(void)
{
    struct sbuf s = {.n = 0};
    psb_plus(&s, 100000, 1);
    for (uint32_t k = 0; k < 6; k++) {
        cyc(&s, 300 + 50 * k);
        mtc(&s, (uint8_t)(k + 1));
        cyc(&s, 40);
        hit(&s, k);
    }
    struct ptc_pt_dcfg c = cfg_of(PTC_PT_F_TSC | PTC_PT_F_MTC, 0, 0);
    agree("CYC packets without CYC configured", &c, s.b, s.n);
    struct pt_diff_out o;
    CHECK(!pt_diff_decode(&c, PTC_PT_MODE_FAST, s.b, s.n, &o), "decode");
    CHECK(o.st.spans_libipt == 1, "CYC without CYC: the span goes to libipt (%llu of %llu)",
          (unsigned long long)o.st.spans_libipt, (unsigned long long)o.st.spans);
    pt_diff_out_free(&o);
}

/* "bytes outside PSB sync" used to stop counting at a packet error with no PSB after it */
static void unsynced_after_error(void)
{
    struct sbuf s = {.n = 0};
    static const uint8_t junk[] = {0x55, 0x12, 0x34, 0x02, 0x00};
    raw(&s, junk, sizeof(junk));
    psb_plus(&s, 1000, 0);
    hit(&s, 1);
    size_t bad = s.n;
    static const uint8_t tail[] = {0x02, 0xc6, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88};
    raw(&s, tail, sizeof(tail)); /* an unknown extended opcode, then no PSB */
    struct ptc_pt_dcfg c = cfg_of(PTC_PT_F_TSC, 0, 0);
    struct ptc_pt_pktstat st;
    memset(&st, 0, sizeof(st));
    CHECK(!ptc_pt_count_packets(&c, s.b, s.n, 0, &st), "count packets");
    CHECK(st.unsynced_bytes == sizeof(junk) + (s.n - bad),
          "bytes outside PSB sync: %llu, want %zu (%zu before the PSB, %zu from the error)",
          (unsigned long long)st.unsynced_bytes, sizeof(junk) + (s.n - bad), sizeof(junk),
          s.n - bad);
    CHECK(st.errors == 1, "packet errors: %llu, want 1", (unsigned long long)st.errors);
    /* the stream decoder counts the same, span by span */
    struct ptc_pt_pktstat st2;
    memset(&st2, 0, sizeof(st2));
    struct ptc_pt_sdec *d = ptc_pt_sdec_new(&c, s.b, s.n, NULL, 0);
    ptc_pt_sdec_count_packets(d, &st2);
    struct ptc_pt_item it;
    while (ptc_pt_sdec_next(d, &it) > 0)
        ;
    CHECK(st2.unsynced_bytes == st.unsynced_bytes && st2.errors == st.errors,
          "stream decoder: %llu bytes outside PSB sync, %llu errors; want %llu, %llu",
          (unsigned long long)st2.unsynced_bytes, (unsigned long long)st2.errors,
          (unsigned long long)st.unsynced_bytes, (unsigned long long)st.errors);
    ptc_pt_sdec_free(d);
    agree("error with no PSB after it", &c, s.b, s.n);
}

/* SKZ84 (family 6 model 85): a TMA with reserved bits set is a known corruption that
 * libipt skips. The packet statistics did not tell libipt the CPU, so they counted an error
 * and lost sync where the decoders went on. */
static void errata_in_packet_stats(void)
{
    struct sbuf s = {.n = 0};
    psb_plus(&s, 1000, 1);
    hit(&s, 1);
    static const uint8_t bad_tma[] = {0x02, 0x73, 0x10, 0x00, 0x01, 0x00, 0x00};
    raw(&s, bad_tma, sizeof(bad_tma));
    static const uint8_t pad = 0;
    raw(&s, &pad, 1); /* SKZ84: libipt skips 8 bytes */
    hit(&s, 2);
    struct ptc_pt_dcfg c = cfg_of(PTC_PT_F_TSC | PTC_PT_F_MTC, 6, 85);
    struct ptc_pt_pktstat st;
    memset(&st, 0, sizeof(st));
    CHECK(!ptc_pt_count_packets(&c, s.b, s.n, 0, &st), "count packets");
    CHECK(st.errors == 0 && st.unsynced_bytes == 0 && st.count[ppt_invalid] == 1,
          "SKZ84 on 6/85: %llu errors, %llu unsynced bytes, %llu invalid packets; want 0, 0, 1",
          (unsigned long long)st.errors, (unsigned long long)st.unsynced_bytes,
          (unsigned long long)st.count[ppt_invalid]);
    static const struct want w[] = {HIT(1, 1000), HIT(2, 1000)};
    expect("SKZ84 TMA", &c, s.b, s.n, w, 2, 0);
    agree("SKZ84 TMA", &c, s.b, s.n);
    /* without the erratum it is an error for all of them */
    struct ptc_pt_dcfg n = cfg_of(PTC_PT_F_TSC | PTC_PT_F_MTC, 0, 0);
    memset(&st, 0, sizeof(st));
    ptc_pt_count_packets(&n, s.b, s.n, 0, &st);
    CHECK(st.errors == 1, "bad TMA without SKZ84: %llu errors, want 1",
          (unsigned long long)st.errors);
    agree("bad TMA", &n, s.b, s.n);
}

/* The parallel decode cut streams at PSBs and started each piece without a time, while the
 * serial decode carried the time of the span before across a PSB+ that restates none:
 * hits after such a PSB+ had a (stale) time serially and none in parallel. A span now
 * starts from its PSB alone, as libipt starts one. */
static void psb_without_tsc(void)
{
    struct sbuf s = {.n = 0};
    psb_plus(&s, 1000, 0);
    hit(&s, 1);
    for (int k = 0; k < 8; k++) {
        p0(&s, ppt_psb);
        cbr(&s, 24);
        p0(&s, ppt_psbend);
        hit(&s, (uint32_t)(2 + k));
        static const uint8_t pads[40];
        raw(&s, pads, sizeof(pads)); /* pieces of the parallel decode cut between them */
    }
    struct ptc_pt_dcfg c = cfg_of(PTC_PT_F_TSC, 0, 0);
    static const struct want w[] = {HIT(1, 1000), {PTC_PT_ITEM_HIT, 2, 0, 0},
                                    {PTC_PT_ITEM_HIT, 3, 0, 0}, {PTC_PT_ITEM_HIT, 4, 0, 0},
                                    {PTC_PT_ITEM_HIT, 5, 0, 0}, {PTC_PT_ITEM_HIT, 6, 0, 0},
                                    {PTC_PT_ITEM_HIT, 7, 0, 0}, {PTC_PT_ITEM_HIT, 8, 0, 0},
                                    {PTC_PT_ITEM_HIT, 9, 0, 0}};
    expect("PSB+ without a TSC", &c, s.b, s.n, w, 9, 0);
    agree("PSB+ without a TSC (serial and parallel)", &c, s.b, s.n);
}

/* ---- what the differential search found (pt_diff, fuzz_pt_diff) ----------------------- */

static void found(void)
{
    struct ptc_pt_dcfg c = cfg_of(PTC_PT_F_TSC | PTC_PT_F_MTC, 0, 0);
    struct sbuf s;
    /* a MODE packet with an unknown leaf: libipt's bad packet, the fast path took it */
    s.n = 0;
    psb_plus(&s, 1000, 1);
    static const uint8_t mode_bad[] = {0x99, 0xc3};
    raw(&s, mode_bad, 2);
    hit(&s, 1);
    agree("MODE with an unknown leaf", &c, s.b, s.n);
    /* a MODE.Exec bound to a TIP.PGD: libipt gives no disable event there */
    s.n = 0;
    psb_plus(&s, 1000, 1);
    static const uint8_t fup1[] = {0x3d, 0x10, 0x10}; /* FUP, 16-bit IP: 0x401010 */
    ip(&s, ppt_tip_pge, STUB(1), pt_ipc_sext_48);
    raw(&s, fup1, sizeof(fup1));
    ip(&s, ppt_tip_pgd, 0, pt_ipc_suppressed); /* an interrupt on stub 1 */
    static const uint8_t mode_exec[] = {0x99, 0x01};
    raw(&s, mode_exec, 2);
    ip(&s, ppt_tip_pgd, 0, pt_ipc_suppressed);
    ip(&s, ppt_tip_pge, STUB(1), pt_ipc_sext_48);
    ip(&s, ppt_tip_pgd, 0, pt_ipc_suppressed);
    agree("MODE.Exec then TIP.PGD", &c, s.b, s.n);
    /* a TMA with reserved bits set */
    s.n = 0;
    psb_plus(&s, 1000, 0);
    static const uint8_t tma_bad[] = {0x02, 0x73, 0x00, 0x00, 0x00, 0x00, 0x02};
    raw(&s, tma_bad, sizeof(tma_bad));
    hit(&s, 1);
    agree("TMA with reserved bits", &c, s.b, s.n);
    /* a damaged PSB after an interrupt on a stub: libipt filled in the asynchronous disable
     * and then returned the error of the bytes after it */
    s.n = 0;
    psb_plus(&s, 1000, 1);
    hit(&s, 2);
    ip(&s, ppt_tip_pge, STUB(1), pt_ipc_sext_48);
    raw(&s, fup1, sizeof(fup1));
    ip(&s, ppt_tip_pgd, 0, pt_ipc_suppressed);
    mtc(&s, 1);
    size_t bad = s.n;
    psb_plus(&s, 2000, 1);
    s.b[bad + 15] = 0x83; /* the PSB's last byte */
    psb_plus(&s, 3000, 1);
    ip(&s, ppt_tip_pge, STUB(1), pt_ipc_sext_48);
    ip(&s, ppt_tip_pgd, 0, pt_ipc_suppressed);
    static const struct want w[] = {HIT(2, 1000), HIT(1, 1000), GAP(PTC_PT_WHY_DECODE),
                                    HIT(1, 3000)};
    expect("event before a damaged PSB", &c, s.b, s.n, w, 4, 1);
    agree("event before a damaged PSB", &c, s.b, s.n);
    /* a PSB+ that cannot be read: libipt failed on it twice (two errors, one stretch) */
    s.n = 0;
    psb_plus(&s, 1000, 1);
    hit(&s, 1);
    p0(&s, ppt_psb);
    static const uint8_t junk[] = {0x02, 0xc6, 0x00};
    raw(&s, junk, sizeof(junk));
    psb_plus(&s, 2000, 1);
    hit(&s, 2);
    static const struct want w2[] = {HIT(1, 1000), GAP(PTC_PT_WHY_DECODE), HIT(2, 2000)};
    expect("unreadable PSB+", &c, s.b, s.n, w2, 3, 1);
    agree("unreadable PSB+", &c, s.b, s.n);
    /* an OVF at the very end of the stream: the streaming decode lost its gap */
    s.n = 0;
    psb_plus(&s, 1000, 1);
    hit(&s, 1);
    p0(&s, ppt_ovf);
    agree("OVF at the end", &c, s.b, s.n);
    /* a CYC of nine extension bytes (more than 64 bits: libipt's bad packet) */
    struct ptc_pt_dcfg cc = cfg_of(PTC_PT_F_TSC | PTC_PT_F_MTC | PTC_PT_F_CYC, 0, 0);
    s.n = 0;
    psb_plus(&s, 1000, 1);
    static const uint8_t long_cyc[] = {0x07, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x02};
    raw(&s, long_cyc, sizeof(long_cyc));
    hit(&s, 1);
    agree("CYC over 64 bits", &cc, s.b, s.n);
    /* SKD007 (family 6 model 78): a CYC overlapping an OVF */
    struct ptc_pt_dcfg sk = cfg_of(PTC_PT_F_TSC | PTC_PT_F_MTC | PTC_PT_F_CYC, 6, 78);
    s.n = 0;
    psb_plus(&s, 1000, 1);
    hit(&s, 1);
    static const uint8_t cyc_ovf[] = {0x07, 0x02, 0xf3};
    raw(&s, cyc_ovf, sizeof(cyc_ovf));
    ip(&s, ppt_tip_pge, STUB(3), pt_ipc_sext_48);
    ip(&s, ppt_tip_pgd, 0, pt_ipc_suppressed);
    agree("SKD007", &sk, s.b, s.n);
    /* fuzz_pt_diff: a MODE.Exec, then 120 PADs, then the TIP.PGE it binds to: libipt stood
     * at the MODE when it had the enable, and the hit's offset (which decides whose AUX piece
     * it is in) must be where the TIP.PGE ends, as the fast path says */
    s.n = 0;
    psb_plus(&s, 1000, 1);
    raw(&s, mode_exec, 2);
    for (int k = 0; k < 120; k++)
        p0(&s, ppt_pad);
    hit(&s, 5);
    agree("MODE.Exec, PADs, TIP.PGE", &c, s.b, s.n);
    /* BDM70 (family 6 model 61): a FUP in PSB+ followed by TIP.PGE */
    struct ptc_pt_dcfg bd = cfg_of(PTC_PT_F_TSC, 6, 61);
    s.n = 0;
    p0(&s, ppt_psb);
    tsc(&s, 1000);
    cbr(&s, 24);
    ip(&s, ppt_fup, 0x7f0000001234ull, pt_ipc_sext_48);
    p0(&s, ppt_psbend);
    ip(&s, ppt_tip_pge, STUB(1) & 0xffff, pt_ipc_update_16);
    ip(&s, ppt_tip_pgd, 0, pt_ipc_suppressed);
    agree("BDM70", &bd, s.b, s.n);
}

/* ptc_pt_find_psb reads one byte in 8: it must find what a byte-by-byte search finds */
static void psb_search(void)
{
    static const uint8_t psb[16] = {2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82,
                                    2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82};
    uint64_t x = 7;
    uint8_t b[300];
    for (int round = 0; round < 20000; round++) {
        for (size_t i = 0; i < sizeof(b); i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            b[i] = (x & 3) == 0 ? 0x02 : (x & 3) == 1 ? 0x82 : (uint8_t)(x >> 8);
        }
        size_t len = 16 + (size_t)(x >> 20) % (sizeof(b) - 16);
        for (int k = 0; k < 3; k++) { /* PSBs (and runs, and cut ones) at random places */
            x = x * 6364136223846793005ull + 1;
            size_t at = (size_t)(x >> 33) % len, n = 1 + (size_t)(x >> 13) % 20;
            for (size_t j = 0; j < n && at + j < len; j++)
                b[at + j] = psb[j % 16];
        }
        size_t pos = (size_t)(x >> 40) % len;
        size_t want = len;
        for (size_t p = pos; p + 16 <= len; p++)
            if (!memcmp(b + p, psb, 16)) {
                want = p;
                break;
            }
        size_t got = ptc_pt_find_psb(b, len, pos);
        CHECK(got == want, "PSB search in %zu bytes from %zu: %zu, want %zu", len, pos, got,
              want);
        if (got != want)
            return;
    }
}

/* Runs of PSB patterns: a PSB is where a run of 02 82 pairs ends, less 16 bytes (or 32, ...
 * for consecutive PSBs); less than 16 bytes of a run before that are the tail of the packet
 * before. The search took the run's first pattern, 2 bytes before the PSB when a packet
 * ended in 02 82 (pt_decode_bench's CYC stream: a TIP.PGD to ...8202), and both decoders
 * reported a decode error in a stream the hardware could have written. */
static void psb_runs(void)
{
    uint8_t b[80];
    memset(b, 0x19, sizeof(b));
    /* the pattern from 14, PSB from 16 to 32 */
    for (int i = 14; i < 32; i++)
        b[i] = i % 2 ? 0x82 : 0x02;
    CHECK(ptc_pt_find_psb(b, sizeof(b), 0) == 14, "the first pattern");
    CHECK(ptc_pt_run_psb(b, sizeof(b), 14) == 16, "the PSB of a run of 18 bytes");
    CHECK(ptc_pt_find_span_psb(b, sizeof(b), 0) == 16, "the span's PSB");
    CHECK(ptc_pt_find_span_psb(b, sizeof(b), 17) == sizeof(b), "no PSB after 17");
    CHECK(ptc_pt_psb_ends_span(b, sizeof(b), 0, 16) && !ptc_pt_psb_ends_span(b, sizeof(b), 0, 14),
          "the span ends at 16, not at 14");
    /* consecutive PSBs from 16 (and the 2 bytes before): both are PSBs, a span that began
     * before them ends at the first, one that began at the first at the second */
    for (int i = 32; i < 48; i++)
        b[i] = i % 2 ? 0x82 : 0x02;
    CHECK(ptc_pt_run_psb(b, sizeof(b), 14) == 16 && ptc_pt_run_psb(b, sizeof(b), 26) == 32,
          "consecutive PSBs");
    CHECK(ptc_pt_psb_ends_span(b, sizeof(b), 16, 32) && !ptc_pt_psb_ends_span(b, sizeof(b), 0, 32),
          "the second PSB ends the first's span, not one before it (a packet ran over that)");
    /* bytes that may still grow the run are held back, a lone 02 among them */
    CHECK(ptc_pt_psb_tail(b, 48) == 34 && ptc_pt_psb_tail(b, 49) == 0 &&
              ptc_pt_psb_tail(b, 47) == 33,
          "the tail of a run: %zu %zu %zu", ptc_pt_psb_tail(b, 48), ptc_pt_psb_tail(b, 49),
          ptc_pt_psb_tail(b, 47));
    b[48] = 0x02;
    CHECK(ptc_pt_psb_tail(b, 49) == 35, "a lone 02 after a run: %zu", ptc_pt_psb_tail(b, 49));
    /* a pattern whose run the bytes end in: the rule takes the end of the bytes for its end */
    CHECK(ptc_pt_run_psb(b, 30, 14) == 14, "a run cut at 30: %zu", ptc_pt_run_psb(b, 30, 14));
    /* where the fast path stopped after a packet ran into a PSB: 4 bytes into the one at 16,
     * not after a pattern that begins 2 bytes before it */
    CHECK(ptc_pt_psb_ran_into(b, 48, 0, 20) && !ptc_pt_psb_ran_into(b, 48, 0, 16) &&
              !ptc_pt_psb_ran_into(b, 48, 16, 20),
          "a packet that ran into a PSB");
}

/* The stream of psb_runs as the hardware writes it: a hit, a TIP.PGD whose 16-bit IP is
 * 0x8202, then PSB+ and more hits: no gap, no error, every hit timed by its span - whoever
 * decodes it, in whatever pieces. */
static void packet_ending_like_a_psb(void)
{
    struct ptc_pt_dcfg c = cfg_of(PTC_PT_F_TSC, 0, 0);
    for (int consecutive = 0; consecutive < 2; consecutive++) {
        struct sbuf s = {.n = 0};
        psb_plus(&s, 1000, 0);
        ip(&s, ppt_tip_pge, STUB(1), pt_ipc_sext_48);
        ip(&s, ppt_tip_pgd, 0x7f0000008202ull, pt_ipc_update_16); /* 0x21 0x02 0x82 */
        if (consecutive)
            p0(&s, ppt_psb); /* a PSB with no PSB+, then the next (libipt takes both) */
        psb_plus(&s, 5000, 0);
        hit(&s, 2);
        ip(&s, ppt_tip_pge, STUB(3), pt_ipc_sext_48);
        ip(&s, ppt_tip_pgd, 0x7f0000008202ull, pt_ipc_update_16);
        psb_plus(&s, 9000, 0);
        hit(&s, 4);
        static const struct want w[] = {HIT(1, 1000), HIT(2, 5000), HIT(3, 5000),
                                        HIT(4, 9000)};
        expect(consecutive ? "02 82 before consecutive PSBs" : "a packet ending in 02 82",
               &c, s.b, s.n, w, 4, 0);
        agree(consecutive ? "02 82 before consecutive PSBs" : "a packet ending in 02 82",
              &c, s.b, s.n);
    }
}

/* fuzz_pt_raw: after a bad packet (here a PSB+ cut short by the next PSB, and a TMA with
 * reserved bits on a CPU with SKZ84) libipt's packet decoder looks for the next PSB from 15
 * bytes back, so the PSB it finds can begin before the bad packet: the bytes outside PSB
 * sync went negative (2^64 - 1) */
static void unsynced_resync_back(void)
{
    static const uint8_t b[] = {
        0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
        0x02, 0x82, 0x19, 0xa2, 0x95, 0xa6, 0x3b, 0x00, 0x00, 0x00, 0x02, 0x73, 0xbd, 0xc3,
        0x00, 0x1a, 0x00, 0x02, 0x03, 0x18, 0x00, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02,
        0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x19, 0xa2, 0x95, 0xa6, 0x3b,
        0x00, 0x00, 0x00, 0x02, 0x73, 0xbd, 0xc3, 0x9f, 0x7f, 0x04};
    static const uint8_t cfg4[4] = {0x07, 0x63, 0x2d, 0x28};
    struct ptc_pt_dcfg c;
    pt_diff_config(cfg4, 4, &c);
    struct ptc_pt_pktstat st;
    memset(&st, 0, sizeof(st));
    struct ptc_pt_sdec *d = ptc_pt_sdec_new(&c, b, sizeof(b), NULL, 0);
    ptc_pt_sdec_count_packets(d, &st);
    struct ptc_pt_item it;
    while (ptc_pt_sdec_next(d, &it) > 0)
        ;
    ptc_pt_sdec_free(d);
    CHECK(st.unsynced_bytes <= sizeof(b), "bytes outside PSB sync: %llu of %zu",
          (unsigned long long)st.unsynced_bytes, sizeof(b));
    agree("resynchronisation 15 bytes back", &c, b, sizeof(b));
}

/* ---- the front-end: the same gaps in every table --------------------------------------- */

struct counts { uint64_t gaps, hits; };
static int f_lookup(void *ctx, uint32_t pid, uint64_t a, uint32_t *id)
{
    (void)ctx;
    (void)pid;
    if (a < PT_DIFF_STUBS || a >= STUB(PT_DIFF_NSTUBS))
        return -1;
    *id = (uint32_t)((a - PT_DIFF_STUBS) / 16);
    return 0;
}
static int f_feed(void *ctx, uint32_t pid, uint32_t tid, const struct ptc_ev *ev, size_t n)
{
    struct counts *c = ctx;
    (void)pid;
    (void)tid;
    for (size_t i = 0; i < n; i++) {
        c->gaps += ev[i].type == PTC_EV_GAP;
        c->hits += ev[i].type == PTC_EV_HIT;
    }
    return 0;
}

static int chunk(struct ptc_pt_front *f, uint16_t type, uint32_t pid, uint32_t tid,
                 const void *a, size_t an, const void *b, size_t bn)
{
    uint8_t p[16384];
    memcpy(p, a, an);
    if (bn)
        memcpy(p + an, b, bn);
    struct ptc_chunk_header h = {.type = type, .pid = pid, .tid = tid,
                                 .payload_size = (uint32_t)(an + bn)};
    return ptc_pt_front_chunk(f, &h, p);
}

/* A per-thread stream that begins before its first PSB (`ptcall import --thread-stream`
 * of such bytes, or of random bytes): the gap the thread gets used to be missing from the
 * per-stream table and the total (`ptcall stat` said 0 gaps, `ptcall report` 1). */
static void front_gaps(const char *what, const uint8_t *b, size_t n, int threads)
{
    struct counts got = {0, 0};
    struct ptc_pt_sink sink = {.ctx = &got, .lookup = f_lookup, .feed = f_feed};
    struct ptc_pt_front *f = ptc_pt_front_new(&sink, PTC_PT_MODE_FAST);
    ptc_pt_front_set_threads(f, threads);
    struct ptc_pt_config pc;
    memset(&pc, 0, sizeof(pc));
    pc.size = sizeof(pc);
    pc.flags = PTC_PT_F_TSC;
    struct ptc_pt_stubs stubs = {.stubs_start = PT_DIFF_STUBS, .stubs_end = STUB(PT_DIFF_NSTUBS)};
    struct ptc_pt_aux aux = {.cpu = PTC_PT_CPU_THREAD, .offset = 0};
    int e = chunk(f, PTC_CHUNK_PT_CONFIG, 0, 0, &pc, sizeof(pc), NULL, 0);
    e = e ? e : chunk(f, PTC_CHUNK_PT_STUBS, 7, 0, &stubs, sizeof(stubs), NULL, 0);
    e = e ? e : chunk(f, PTC_CHUNK_PT_AUX, 7, 7, &aux, sizeof(aux), b, n);
    e = e ? e : ptc_pt_front_finish(f);
    CHECK(!e, "%s: front-end error %d", what, e);
    const struct ptc_pt_cpu_stats *cs;
    const struct ptc_pt_thread_stats *ts;
    size_t nc = ptc_pt_front_cpus(f, &cs), nt = ptc_pt_front_threads(f, &ts);
    uint64_t sg = 0, tg = 0, sh = 0;
    for (size_t i = 0; i < nc; i++) {
        sg += cs[i].s.gaps;
        sh += cs[i].s.hits;
    }
    for (size_t i = 0; i < nt; i++)
        tg += ts[i].gaps;
    CHECK(sg == tg && tg == got.gaps && got.gaps >= 1,
          "%s: gaps per stream %llu, per thread %llu, fed %llu (want the same, at least 1)",
          what, (unsigned long long)sg, (unsigned long long)tg, (unsigned long long)got.gaps);
    CHECK(sh == got.hits, "%s: hits per stream %llu, fed %llu", what, (unsigned long long)sh,
          (unsigned long long)got.hits);
    ptc_pt_front_free(f);
}

static void front_cases(void)
{
    uint8_t rnd[4096];
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < sizeof(rnd); i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        rnd[i] = (uint8_t)x;
    }
    front_gaps("random bytes as a thread stream", rnd, sizeof(rnd), 1);
    struct sbuf s = {.n = 0};
    raw(&s, rnd, 100);
    psb_plus(&s, 1000, 0);
    hit(&s, 1);
    hit(&s, 2);
    front_gaps("bytes before the first PSB", s.b, s.n, 1);
    front_gaps("bytes before the first PSB, 2 threads", s.b, s.n, 2);
}

/* ---- mutations of ptgen's streams ------------------------------------------------------ */

static int mutated(int nstreams, const char *dir)
{
    char tmp[512];
    snprintf(tmp, sizeof(tmp), "%s/pt-agree-%d.ptc", dir, (int)getpid());
    int bad = 0, runs = 0;
    for (int seed = 1; seed <= nstreams && bad < 5; seed++) {
        struct ptgen_opts o;
        ptgen_default(&o, (uint64_t)seed);
        o.timing = seed % 4;
        o.ncpus = o.nprocs = o.threads = 1;
        o.p_trunc = 0;
        o.slices = 4;
        o.psb_period = 64 + seed % 200;
        o.mod0_start = PT_DIFF_STUBS;
        o.mod0_nstubs = PT_DIFF_NSTUBS;
        struct ptgen_result r;
        size_t len;
        uint8_t *b = ptgen_raw_stream(&o, tmp, &len, &r);
        CHECK(b != NULL, "ptgen seed %d", seed);
        if (!b)
            return 1;
        ptgen_free(&r);
        /* the config ptgen's streams are written for (pt_diff_config's bytes), on no CPU
         * or one of the four whose errata libipt works around */
        const uint8_t hdr[4] = {(uint8_t)(seed % 4 | (seed % 5) << 2), 0x63, 1, 40};
        struct ptc_pt_dcfg c;
        pt_diff_config(hdr, sizeof(hdr), &c);
        uint64_t x = (uint64_t)seed * 7919;
        uint8_t *m = malloc(len + 16);
        for (int k = 0; k < 20 && !bad; k++) {
            memcpy(m, b, len);
            size_t ml = len;
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            size_t at = (size_t)(x >> 20) % (len > 16 ? len - 8 : 1);
            switch (k % 4) {
            case 0: /* a flipped bit (none for k = 0: the stream as written) */
                if (k)
                    m[at] ^= (uint8_t)(1u << ((x >> 8) % 8));
                break;
            case 1: /* cut anywhere */
                ml = at;
                break;
            case 2: /* 1-6 bytes lost */
                if (len > 16) {
                    size_t d = 1 + (size_t)(x >> 50) % 6;
                    memmove(m + at, m + at + d, len - at - d);
                    ml -= d;
                }
                break;
            default: /* a byte replaced */
                m[at] = (uint8_t)(x >> 40);
                break;
            }
            char why[512];
            int rc = pt_diff_run(&c, m, ml, (uint32_t)x, why, sizeof(why));
            runs++;
            if (rc) {
                printf("FAIL: ptgen seed %d, mutation %d (%zu bytes): %s\n", seed, k, ml,
                       rc > 0 ? why : "a decoder failed");
                bad++;
            }
        }
        free(m);
        free(b);
    }
    printf("%d mutated streams, %d disagreements\n", runs, bad);
    return bad;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 100;
    const char *dir = argc > 2 ? argv[2] : "/tmp";
    psb_search();
    psb_runs();
    packet_ending_like_a_psb();
    cut_before_psb();
    overlap_psb();
    cyc_unconfigured();
    unsynced_after_error();
    errata_in_packet_stats();
    psb_without_tsc();
    found();
    unsynced_resync_back();
    front_cases();
    pt_check_fails += mutated(n, dir);
    printf("%s\n", pt_check_fails ? "FAIL" : "PASS");
    return pt_check_fails ? 1 : 0;
}
