/* Fast path: a specialised Intel PT packet parser for stub-filtered traces.
 *
 * It understands PAD, PSB, PSBEND, TIP.PGE, TIP.PGD, FUP, TSC, TMA, MTC, CYC, CBR, MODE and
 * OVF, which is all a trace filtered to ptcall_stubs contains, and reproduces the event
 * semantics of libipt's query decoder for them (IP decompression against the last IP, reset
 * at PSB and - as libipt does - at OVF; OVF binding to a following FUP; timing with libipt's
 * TSC/TMA/MTC rules). Anything else makes it return -1 so that the caller hands the span to
 * libipt. Packet layouts: Intel SDM Vol. 3C "Intel Processor Trace", packet tables. */
#include <stdlib.h>
#include <string.h>

#include "ptc_pt_decode.h"

int ptc_pt_aevs_push(struct ptc_pt_aevs *a, const struct ptc_pt_aev *e)
{
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 256;
        void *v = realloc(a->v, cap * sizeof(*a->v));
        if (!v)
            return -1;
        a->v = v;
        a->cap = cap;
    }
    a->v[a->n++] = *e;
    return 0;
}

static const uint8_t psb_pattern[16] = {0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
                                        0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82};

size_t ptc_pt_find_psb(const uint8_t *buf, size_t len, size_t pos)
{
    while (pos + 16 <= len) {
        const uint8_t *p = memchr(buf + pos, 0x02, len - pos - 15);
        if (!p)
            return len;
        size_t at = (size_t)(p - buf);
        if (!memcmp(p, psb_pattern, 16))
            return at;
        pos = at + 1;
    }
    return len;
}

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

static inline uint64_t ip_update(uint64_t last, uint64_t payload, int ipb)
{
    switch (ipb) {
    case 1:
        return (last & ~0xffffULL) | (payload & 0xffffULL);
    case 2:
        return (last & ~0xffffffffULL) | (payload & 0xffffffffULL);
    case 3:
        return (uint64_t)(((int64_t)(payload << 16)) >> 16);
    case 4:
        return (last & ~0xffffffffffffULL) | (payload & 0xffffffffffffULL);
    case 6:
        return payload;
    default:
        return last;
    }
}

static const int8_t ipb_len[8] = {0, 2, 4, 6, 6, -1, 8, -1};

#define EMIT(tp, ipv, ipval, offv)                                                         \
    do {                                                                                   \
        struct ptc_pt_aev e_ = {.type = (tp), .ip_valid = (ipv), .ip = (ipval),            \
                                .off = base + (offv)};                                     \
        if (time->have_tsc) {                                                              \
            e_.has_time = 1;                                                               \
            e_.tsc = t_now(cfg, time);                                                     \
        }                                                                                  \
        if (out->n < out->cap)                                                             \
            out->v[out->n++] = e_;                                                         \
        else if (ptc_pt_aevs_push(out, &e_))                                               \
            return -1;                                                                     \
    } while (0)

int ptc_pt_fast_span(const struct ptc_pt_dcfg *cfg, const uint8_t *buf, size_t len,
                     uint64_t base, struct ptc_pt_ftime *time, struct ptc_pt_aevs *out,
                     size_t *consumed)
{
    size_t pos = 0;
    uint64_t last_ip = 0;
    int in_psb = 0, fup_pending = 0, ovf_pending = 0, psb_seen = 0;
    uint64_t fup_ip = 0;
    size_t ovf_pos = 0;
    struct ptc_pt_ftime ovf_time;
    memset(&ovf_time, 0, sizeof(ovf_time));
    const uint64_t mul = cfg->cpuid_0x15_eax && cfg->cpuid_0x15_ebx &&
                                 cfg->cpuid_0x15_ebx % cfg->cpuid_0x15_eax == 0
                             ? cfg->cpuid_0x15_ebx / cfg->cpuid_0x15_eax
                             : 0;
    const int use_mtc = !((cfg->flags & PTC_PT_F_CYC) && cfg->nom_freq);

    while (pos < len) {
        const uint8_t *p = buf + pos;
        uint8_t b = p[0];
        size_t avail = len - pos;
        if (b == 0x59 && avail >= 2 && !in_psb) { /* MTC: the most frequent packet */
            if (use_mtc && t_mtc(cfg, time, p[1], mul))
                return -1;
            pos += 2;
            continue;
        }
        if ((b & 3) == 3) { /* CYC */
            uint64_t v = b >> 3;
            size_t n = 1;
            if (b & 4) {
                unsigned shift = 5;
                for (;;) {
                    if (n >= avail)
                        goto truncated;
                    uint8_t x = p[n++];
                    if (shift < 64)
                        v |= (uint64_t)(x >> 1) << shift;
                    shift += 7;
                    if (!(x & 1))
                        break;
                    if (n > 10)
                        return -1;
                }
            }
            if (in_psb)
                return -1;
            time->cyc_sum += v;
            pos += n;
            continue;
        }
        if (b == 0x00) { /* PAD */
            pos++;
            continue;
        }
        if (b & 1) {
            uint8_t op = b & 0x1f;
            if (op == 0x11 || op == 0x01 || op == 0x1d) { /* TIP.PGE, TIP.PGD, FUP */
                int ipb = b >> 5;
                int n = ipb_len[ipb];
                if (n < 0)
                    return -1;
                if ((size_t)(1 + n) > avail)
                    goto truncated;
                uint64_t ip = last_ip;
                int valid = ipb != 0;
                if (valid) {
                    ip = ip_update(last_ip, avail >= 9 ? rd_le8(p + 1, n) : rd_le(p + 1, n), ipb);
                    last_ip = ip;
                }
                size_t end = pos + 1 + (size_t)n;
                if (in_psb) {
                    if (op != 0x1d)
                        return -1;
                    pos = end; /* FUP in PSB+: status only */
                    continue;
                }
                if (op == 0x1d) { /* FUP */
                    if (!valid || fup_pending)
                        return -1;
                    if (ovf_pending) {
                        struct ptc_pt_ftime now = *time;
                        *time = ovf_time; /* libipt times the overflow at the OVF */
                        EMIT(PTC_AEV_OVF, 1, ip, end);
                        *time = now;
                        ovf_pending = 0;
                    } else {
                        fup_pending = 1;
                        fup_ip = ip;
                    }
                    pos = end;
                    continue;
                }
                if (ovf_pending) {
                    if (op == 0x01)
                        return -1; /* libipt: bad context */
                    struct ptc_pt_ftime now = *time;
                    *time = ovf_time;
                    EMIT(PTC_AEV_OVF, 0, 0, ovf_pos);
                    *time = now;
                    ovf_pending = 0;
                }
                if (op == 0x11) {
                    if (fup_pending || !valid)
                        return -1;
                    EMIT(PTC_AEV_ENABLE, 1, ip, end);
                } else if (fup_pending) {
                    EMIT(PTC_AEV_ASYNC_DISABLE, 1, fup_ip, end);
                    fup_pending = 0;
                }
                /* a plain TIP.PGD changes nothing the interpretation keeps (it only ends a
                 * resume window, which only FUP+TIP.PGD opens and TIP.PGE closes), so the
                 * fast path does not emit it */
                pos = end;
                continue;
            }
            if (b == 0x19) { /* TSC */
                if (avail < 8)
                    goto truncated;
                t_tsc(time, rd_le(p + 1, 7));
                pos += 8;
                continue;
            }
            if (b == 0x59) { /* MTC */
                if (avail < 2)
                    goto truncated;
                if (in_psb)
                    return -1;
                if (use_mtc && t_mtc(cfg, time, p[1], mul))
                    return -1;
                pos += 2;
                continue;
            }
            if (b == 0x99) { /* MODE */
                if (avail < 2)
                    goto truncated;
                if (ovf_pending) {
                    struct ptc_pt_ftime now = *time;
                    *time = ovf_time;
                    EMIT(PTC_AEV_OVF, 0, 0, ovf_pos);
                    *time = now;
                    ovf_pending = 0;
                }
                if (fup_pending)
                    return -1;
                pos += 2;
                continue;
            }
            return -1;
        }
        if (b != 0x02)
            return -1; /* TNT-8 */
        if (avail < 2)
            goto truncated;
        switch (p[1]) {
        case 0x82: /* PSB */
            if (avail < 16)
                goto truncated;
            if (memcmp(p, psb_pattern, 16))
                return -1;
            if (psb_seen) {
                *consumed = pos;
                goto end;
            }
            psb_seen = 1;
            if (fup_pending || ovf_pending)
                return -1;
            in_psb = 1;
            last_ip = 0;
            EMIT(PTC_AEV_PSB, 0, 0, pos + 16);
            pos += 16;
            continue;
        case 0x23: /* PSBEND */
            if (!in_psb)
                return -1;
            in_psb = 0;
            pos += 2;
            continue;
        case 0x03: /* CBR */
            if (avail < 4)
                goto truncated;
            if (!p[2])
                return -1;
            if (ovf_pending || fup_pending)
                return -1; /* keep libipt's exact handling for the rare cases */
            if ((cfg->flags & PTC_PT_F_CYC) && time->cbr && time->cbr != p[2]) {
                /* frequency change: restart the CYC sum at the current estimate */
                time->cyc_base_tsc = t_now(cfg, time);
                time->cyc_sum = 0;
            }
            time->cbr = p[2];
            pos += 4;
            continue;
        case 0x73: /* TMA */
            if (avail < 7)
                goto truncated;
            if (t_tma(cfg, time, (uint32_t)p[2] | (uint32_t)p[3] << 8,
                      (uint32_t)p[5] | ((uint32_t)(p[6] & 1) << 8)))
                return -1;
            pos += 7;
            continue;
        case 0xf3: /* OVF */
            if (in_psb || fup_pending || ovf_pending)
                return -1;
            ovf_pending = 1;
            ovf_time = *time;
            ovf_pos = pos + 2;
            last_ip = 0; /* libipt resets its last IP at OVF */
            pos += 2;
            continue;
        default:
            return -1;
        }
    }
    *consumed = len;
end:
    if (fup_pending || in_psb)
        return -1;
    if (ovf_pending) {
        struct ptc_pt_ftime now = *time;
        *time = ovf_time;
        EMIT(PTC_AEV_OVF, 0, 0, ovf_pos);
        *time = now;
    }
    return 0;
truncated:
    /* The stream ends inside a packet: let libipt have the span (it treats that as the
     * end of the trace); the caller records the truncation from byte counts. */
    return -1;
}
