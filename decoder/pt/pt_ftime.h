/* Pieces of the fast path shared by its general parser (pt_fast.c) and its steady-state
 * loop (pt_steady.c): little-endian reads, libipt's time arithmetic for TSC/TMA/MTC, the
 * CYC time estimate, and IP decompression. Internal to decoder/pt. */
#ifndef PTC_PT_FTIME_H
#define PTC_PT_FTIME_H

#include <stdint.h>
#include <string.h>

#include "ptc_pt_decode.h"

static inline uint64_t rd_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    memcpy(&v, p, (size_t)n); /* little-endian host (x86-64 only) */
    return v;
}

/* n payload bytes at p when 8 bytes are readable there (one unaligned load) */
static inline uint64_t rd_le8(const uint8_t *p, int n)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return n == 8 ? v : v & ((1ULL << (8 * n)) - 1);
}

/* libipt pt_time_update_tsc */
static inline void t_tsc(struct ptc_pt_ftime *t, uint64_t tsc)
{
    t->have_tsc = 1;
    t->have_tma = 0;
    t->have_mtc = 0;
    t->tsc = t->base = tsc;
    t->ctc = 0;
    t->fc = 0;
    t->cyc_base_tsc = tsc;
    t->cyc_sum = 0;
}

/* libipt pt_time_update_tma; returns -1 where libipt fails */
static inline int t_tma(const struct ptc_pt_dcfg *c, struct ptc_pt_ftime *t, uint32_t ctc,
                        uint32_t fc)
{
    if (!t->have_tsc || t->have_tma || t->have_mtc)
        return -1;
    uint32_t mtc_hi = (uint32_t)c->mtc_freq + 8;
    uint32_t mask = (1u << mtc_hi) - 1u;
    t->have_tma = 1;
    t->base -= fc;
    t->fc += fc;
    if (mtc_hi <= 16)
        t->have_mtc = 1;
    t->ctc = ctc & mask;
    return 0;
}

/* libipt pt_time_update_mtc (errors are ignored like pt_qry_apply_mtc does for config).
 * mul = cpuid_0x15_ebx / cpuid_0x15_eax when that is exact (then (d * ebx) / eax == d * mul),
 * else 0. */
static inline int t_mtc(const struct ptc_pt_dcfg *c, struct ptc_pt_ftime *t, uint8_t payload,
                        uint64_t mul)
{
    if (t->have_tsc && !t->have_tma)
        return 0;
    uint64_t base = t->base;
    uint32_t last_ctc = t->ctc;
    uint32_t ctc = (uint32_t)payload << c->mtc_freq;
    int have_mtc = t->have_mtc;
    t->have_mtc = 1;
    t->fc = 0;
    t->ctc = ctc;
    if (!have_mtc) {
        if (!t->have_tma)
            return 0;
        if (last_ctc & ~0xffffu)
            return -1;
        uint32_t ctc_lo = ctc & 0xffffu, ctc_hi = ctc & ~0xffffu;
        if (ctc_lo < last_ctc) {
            ctc_hi -= 1u << 16;
            ctc_hi &= 0xffu << c->mtc_freq;
        }
        last_ctc |= ctc_hi;
    }
    if (ctc < last_ctc) {
        ctc += 1u << (c->mtc_freq + 8);
        if (ctc < last_ctc)
            return -1; /* libipt: -pte_bad_packet, counted as lost MTC */
    }
    uint32_t delta = ctc - last_ctc;
    if (mul)
        base += (uint64_t)delta * mul;
    else if (c->cpuid_0x15_eax && c->cpuid_0x15_ebx)
        base += ((uint64_t)delta * c->cpuid_0x15_ebx) / c->cpuid_0x15_eax;
    else
        return 0;
    t->tsc = t->base = base;
    return 0;
}

static inline uint64_t t_now(const struct ptc_pt_dcfg *c, const struct ptc_pt_ftime *t)
{
    if ((c->flags & PTC_PT_F_CYC) && c->nom_freq && t->cbr)
        return t->cyc_base_tsc + (t->cyc_sum * c->nom_freq) / t->cbr;
    return t->tsc;
}

/* floor(n / d) for a divisor d of 1..255 fixed for a while (the CBR ratio), by one
 * multiplication: with m = floor((2^64 - 1) / d) + 1 the error e = m * d - 2^64 is at most
 * d, and floor(n * m / 2^64) = floor(n / d) whenever n * e < 2^64, so for every n < 2^56;
 * larger n (never seen: CYC sums restart at every TSC) divide. It replaces a 64-bit
 * division per CYC-timed hit. */
struct ptc_recip { uint64_t m; uint32_t d; };
static inline struct ptc_recip recip_init(uint32_t d)
{
    struct ptc_recip r = {d > 1 ? ~0ULL / d + 1 : 0, d};
    return r;
}
static inline uint64_t recip_div(const struct ptc_recip *r, uint64_t n)
{
    if (r->d <= 1 || (n >> 56))
        return r->d ? n / r->d : 0;
    return (uint64_t)(((unsigned __int128)n * r->m) >> 64);
}

/* Bits of the last IP that an IP packet keeps, by its IPBytes field (SDM "IP compression");
 * 3 (sign-extended 48 bits) is handled apart, 5 and 7 are reserved. */
static const uint64_t ip_keep[8] = {~0ULL, ~0xffffULL, ~0xffffffffULL, 0,
                                    ~0xffffffffffffULL, 0, 0, 0};
static const int8_t ipb_len[8] = {0, 2, 4, 6, 6, -1, 8, -1};

/* The steady-state loop decodes IPs without branches (the compression of consecutive
 * packets is as good as random, so any branch on it mispredicts): the kept bits come from
 * ip_keep, and IPBytes 3 is sign-extended from bit 47 by a shift pair that is a no-op for
 * the others. The payload length comes from a nibble table in a register rather than from
 * memory: it is on the loop's critical path (the next packet's address depends on it). */
#define IPB_LEN(ipb) ((0x08066420u >> ((ipb) * 4)) & 0xfu)
#define IPB_OK_PGE 0x5eu /* IPBytes 1, 2, 3, 4, 6: TIP.PGE must carry an IP */
#define IPB_OK_PGD 0x5fu /* and 0 (suppressed) for TIP.PGD */
static inline uint64_t ip_decomp(uint64_t last, uint64_t raw, unsigned ipb)
{
    uint64_t keep = ip_keep[ipb];
    unsigned sh = (unsigned)(ipb == 3) << 4;
    uint64_t ip = (last & keep) | (raw & ~keep);
    return (uint64_t)((int64_t)(ip << sh) >> sh);
}


/* The steady-state loop (pt_steady.c): what it reads and what it leaves behind. */
struct ptc_steady {
    const uint8_t *buf;
    size_t pos, lim;            /* parses packets starting before lim; 9 bytes readable there */
    uint64_t base;              /* stream offset of buf[0] */
    uint64_t last_ip;
    uint64_t rs, rl;            /* the one stub range: [rs, rs + rl) */
    uint64_t mtc_mul;           /* t_mtc's mul */
    struct ptc_pt_item *q;      /* hits go to q[qn..qcap) */
    size_t qn, qcap;
    int skd007;                 /* the CPU has erratum SKD007 (PTC_PT_ERRATUM_SKD007) */
};
/* Parses from s->pos while the packets are the steady state of a stub trace (TIP.PGE into
 * the stub range, TIP.PGD, MTC, one- or two-byte CYC, PAD) and stops before anything else,
 * at lim, or when the queue is full. Returns 0, or -1 where libipt would fail (an MTC). */
int ptc_pt_steady(const struct ptc_pt_dcfg *cfg, struct ptc_pt_ftime *time,
                  struct ptc_steady *s);

#endif
