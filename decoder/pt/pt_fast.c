/* Fast path: a specialised Intel PT packet parser for stub-filtered traces.
 *
 * Speed: it interprets while it parses (stub hits go straight into the output queue, no
 * intermediate events), and hands the steady state of a stub trace (TIP.PGE, TIP.PGD,
 * timing) to a loop of its own (pt_steady.c); this file is the general parser around it,
 * for PSB+, FUP, OVF and everything else that is rare. It is resumable at any packet boundary (struct ptc_pt_fstate), so a stream can be decoded as it
 * arrives.
 *
 * It understands PAD, PSB, PSBEND, TIP.PGE, TIP.PGD, FUP, TSC, TMA, MTC, CYC, CBR, MODE and
 * OVF, which is all a trace filtered to ptcall_stubs contains, and reproduces the event
 * semantics of libipt's query decoder for them (IP decompression against the last IP, reset
 * at PSB and - as libipt does - at OVF; OVF binding to a following FUP; timing with libipt's
 * TSC/TMA/MTC rules). Anything else makes it return -1 so that the caller hands the span to
 * libipt. Packet layouts: Intel SDM Vol. 3C "Intel Processor Trace", packet tables. */
#include <stdlib.h>
#include <string.h>

#include "pt_ftime.h"
#include "pt_interp.h"

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

/* A PSB is 16 bytes of period 2, so the bytes at any two offsets 8 apart inside one are
 * the same, 0x02 or 0x82. The search reads one byte in 8 (and the one 8 after it) and
 * looks closer only where that holds: a stub trace is full of 0x02 bytes (IPs, CYC), and
 * a byte-by-byte search cost a third of the fast path's time. */
size_t ptc_pt_find_psb(const uint8_t *buf, size_t len, size_t pos)
{
    if (len < 16 || pos > len - 16)
        return len;
    const size_t last = len - 16; /* the last offset a PSB can begin at */
    for (size_t s = pos; s + 8 < len; s += 8) {
        if ((buf[s] & 0x7f) != 0x02) /* one predictable test for almost every sample */
            continue;
        if (buf[s + 8] != buf[s])
            continue;
        /* the first sample inside a PSB at p is s with p <= s <= p + 7 */
        size_t a = s >= pos + 7 ? s - 7 : pos, b = s < last ? s : last;
        for (size_t p = a; p <= b; p++)
            if (buf[p] == 0x02 && !memcmp(buf + p, psb_pattern, 16))
                return p;
    }
    return len;
}

/* The end of the run of 02 82 pairs that begins at p, within len. */
static size_t pair_run_end(const uint8_t *buf, size_t len, size_t p)
{
    while (len - p >= 2 && buf[p] == 0x02 && buf[p + 1] == 0x82)
        p += 2;
    return p;
}

size_t ptc_pt_run_psb(const uint8_t *buf, size_t len, size_t q)
{
    /* the run's PSBs end where it ends: whatever of it lies before them (less than 16
     * bytes: no packet ends in more of the pattern) is the tail of the packet before */
    return q + (pair_run_end(buf, len, q) - q) % 16;
}

size_t ptc_pt_find_span_psb(const uint8_t *buf, size_t len, size_t pos)
{
    size_t q = ptc_pt_find_psb(buf, len, pos);
    return q < len ? ptc_pt_run_psb(buf, len, q) : len;
}

int ptc_pt_psb_ends_span(const uint8_t *buf, size_t len, size_t span_start, size_t at)
{
    if (ptc_pt_run_psb(buf, len, at) != at)
        return 0; /* a pattern that begins in the packet before the PSB */
    /* a PSB 16 bytes before it, after the span's own, is the span's end: a packet ran
     * over it and ended where it looks like a PSB again */
    return !(at > span_start + 16 && pair_run_end(buf, at, at - 16) == at);
}

int ptc_pt_psb_ran_into(const uint8_t *buf, size_t len, size_t span_start, size_t at)
{
    /* a packet that runs into a PSB ends less than 16 bytes into it (none is longer), and
     * what follows it there is no packet the fast path takes: at is less than 16 bytes on */
    size_t from = at >= span_start + 16 ? at - 15 : span_start + 1;
    for (size_t q = from; q < at && len >= 16 && q <= len - 16; q++)
        if (buf[q] == 0x02 && !memcmp(buf + q, psb_pattern, 16))
            return ptc_pt_run_psb(buf, len, q) < at; /* one run: the first pattern decides */
    return 0;
}

size_t ptc_pt_psb_tail(const uint8_t *buf, size_t len)
{
    size_t k = len && buf[len - 1] == 0x02; /* a lone 02: the next byte may be 82 */
    while (len - k >= 2 && buf[len - k - 2] == 0x02 && buf[len - k - 1] == 0x82)
        k += 2;
    return k;
}

#define NOMEM PTC_FAST_NOMEM

int ptc_pt_fast_run(const struct ptc_pt_dcfg *cfg, struct ptc_pt_fstate *fs,
                    struct ptc_pt_interp *in, const uint8_t *buf, size_t len, uint64_t base,
                    int final, size_t *consumed)
{
    size_t pos = 0;
    /* the state lives in locals while parsing: stores into the item queue could otherwise
     * alias it (uint8_t), and the compiler would reload it after every hit */
    uint64_t last_ip = fs->last_ip, fup_ip = fs->fup_ip, ovf_off = fs->ovf_off;
    int in_psb = fs->in_psb, fup_pending = fs->fup_pending, ovf_pending = fs->ovf_pending;
    int psb_seen = fs->psb_seen, mode_pending = fs->mode_pending;
    uint64_t nev = fs->nev;
    /* libipt's errata workarounds (pt_cpu_errata) that change what the packets this parser
     * takes mean: where one could apply, the span goes to libipt */
    const unsigned errata = ptc_pt_errata(cfg);
    /* Without CYCEn the processor writes no CYC packet (Intel SDM Vol. 3C, "Intel Processor
     * Trace", Cycle Count Packet: dependencies IA32_RTIT_CTL.CYCEn && TriggerEn); libipt has
     * no such setting and applies every CYC it meets to its time (libipt 2.0.5
     * pt_qry_decode_cyc -> pt_qry_apply_cyc, once calibrated from CBR and nom_freq or from
     * MTC). A CYC in a trace configured without CYC is not what the hardware writes, so the
     * span goes to libipt, and both decoders give libipt's reading of it. */
    const int cyc_ok = (cfg->flags & PTC_PT_F_CYC) != 0;
    struct ptc_pt_ftime *time = &fs->time;
    const uint64_t mul = cfg->cpuid_0x15_eax && cfg->cpuid_0x15_ebx &&
                                 cfg->cpuid_0x15_ebx % cfg->cpuid_0x15_eax == 0
                             ? cfg->cpuid_0x15_ebx / cfg->cpuid_0x15_eax
                             : 0;
    const int use_mtc = !((cfg->flags & PTC_PT_F_CYC) && cfg->nom_freq);
#define HT ((int)time->have_tsc)
#define TNOW (time->have_tsc ? t_now(cfg, time) : 0)
    /* libipt times an overflow at the OVF packet (the time saved there) */
#define EMIT_OVF(ipv, ipval, offv)                                                         \
    do {                                                                                   \
        nev++;                                                                             \
        if (ptc_interp_ovf(cfg, in, (ipv), (ipval), (offv), fs->ovf_time.have_tsc,         \
                           fs->ovf_time.have_tsc ? t_now(cfg, &fs->ovf_time) : 0))         \
            return NOMEM;                                                                  \
    } while (0)

    while (pos < len) {
        if (!in_psb && !fup_pending && !ovf_pending && !mode_pending && !in->have_resume &&
            !in->first_open && cfg->num_ranges == 1 && len - pos > 9) {
            /* the steady state of a stub trace (pt_steady.c). Nothing there changes the
             * interpretation state but the output queue. */
            struct ptc_steady st = {.buf = buf, .pos = pos, .lim = len - 9, .base = base,
                                    .last_ip = last_ip, .rs = cfg->ranges[0].start,
                                    .rl = cfg->ranges[0].end - cfg->ranges[0].start,
                                    .mtc_mul = mul, .q = in->q, .qn = in->qn,
                                    .qcap = in->qcap,
                                    .skd007 = (errata & PTC_PT_ERRATUM_SKD007) != 0};
            int r = ptc_pt_steady(cfg, time, &st);
            size_t qn0 = in->qn, qn = st.qn;
            pos = st.pos;
            last_ip = st.last_ip;
            if (qn != qn0) {
                nev += qn - qn0;
                in->st->hits += qn - qn0;
                in->touched = 1;
                if (in->q[qn - 1].has_time) {
                    in->last_tsc = in->q[qn - 1].tsc;
                    in->have_last = 1;
                }
                in->qn = qn;
            }
            if (r)
                return PTC_FAST_FAIL;
            if (pos >= len)
                break;
        }
        const uint8_t *p = buf + pos;
        uint8_t b = p[0];
        size_t avail = len - pos;
        uint8_t op = b & 0x1f;
        if (op == 0x11 || op == 0x01 || op == 0x1d) { /* TIP.PGE, TIP.PGD, FUP: first */
            int ipb = b >> 5;
            int n = ipb_len[ipb];
            if (n < 0)
                return PTC_FAST_FAIL;
            if ((size_t)(1 + n) > avail)
                goto truncated;
            uint64_t ip = last_ip;
            int valid = ipb != 0;
            if (valid) {
                uint64_t raw = avail >= 9 ? rd_le8(p + 1, 8) : rd_le(p + 1, n);
                ip = ipb == 3 ? (uint64_t)(((int64_t)(raw << 16)) >> 16)
                              : (last_ip & ip_keep[ipb]) | (raw & ~ip_keep[ipb]);
                last_ip = ip;
            }
            size_t end = pos + 1 + (size_t)n;
            if (in_psb) {
                /* FUP in PSB+: status only; BDM70: libipt may ignore it (when a TIP.PGE
                 * follows), and then not its IP either */
                if (op != 0x1d || (errata & PTC_PT_ERRATUM_BDM70))
                    return PTC_FAST_FAIL;
                pos = end;
                continue;
            }
            if (mode_pending && op != 0x11)
                return PTC_FAST_FAIL; /* libipt binds the MODE.Exec to it: no disable event */
            if (op == 0x1d) { /* FUP */
                if (!valid || fup_pending)
                    return PTC_FAST_FAIL;
                if (ovf_pending) {
                    EMIT_OVF(1, ip, base + end);
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
                    return PTC_FAST_FAIL; /* libipt: bad context */
                EMIT_OVF(0, 0, ovf_off);
                ovf_pending = 0;
            }
            if (op == 0x11) {
                if (fup_pending || !valid)
                    return PTC_FAST_FAIL;
                mode_pending = 0; /* the MODE.Exec is libipt's event after the enable */
                nev++;
                if (ptc_interp_enable(cfg, in, ip, base + end, HT, TNOW))
                    return NOMEM;
            } else if (fup_pending) {
                nev++;
                ptc_interp_async_disable(in, 1, fup_ip);
                fup_pending = 0;
            } else {
                /* a plain TIP.PGD: libipt's disable event, which ends a resume window (the
                 * steady loop sees them only when there is none) */
                ptc_interp_settle(in);
                in->have_resume = 0;
            }
            pos = end;
            continue;
        }
        if (b == 0x59 && avail >= 2 && !in_psb) { /* MTC */
            if (use_mtc && t_mtc(cfg, time, p[1], mul))
                return PTC_FAST_FAIL;
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
                    if (n > 9)
                        return PTC_FAST_FAIL; /* libipt: over 64 bits, a bad packet */
                    v |= (uint64_t)(x >> 1) << shift;
                    shift += 7;
                    if (!(x & 1))
                        break;
                }
            }
            if (in_psb || !cyc_ok)
                return PTC_FAST_FAIL;
            /* SKD007: libipt takes a two-byte CYC whose last byte could begin an OVF that
             * follows as a cut CYC and the OVF */
            if ((errata & PTC_PT_ERRATUM_SKD007) && n == 2 && p[1] == 0x02 && avail > 2 &&
                p[2] == 0xf3)
                return PTC_FAST_FAIL;
            time->cyc_sum += v;
            pos += n;
            continue;
        }
        if (b == 0x00) { /* PAD */
            pos++;
            continue;
        }
        if (b & 1) {
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
                    return PTC_FAST_FAIL;
                if (use_mtc && t_mtc(cfg, time, p[1], mul))
                    return PTC_FAST_FAIL;
                pos += 2;
                continue;
            }
            if (b == 0x99) { /* MODE */
                if (avail < 2)
                    goto truncated;
                /* only MODE.Exec (leaf 0) is in a stub trace; libipt refuses unknown leaves
                 * and binds MODE.TSX to a FUP */
                if (p[1] & 0xe0)
                    return PTC_FAST_FAIL;
                if (ovf_pending) {
                    EMIT_OVF(0, 0, ovf_off);
                    ovf_pending = 0;
                }
                if (fup_pending || mode_pending)
                    return PTC_FAST_FAIL;
                /* outside PSB+ libipt binds it to the next TIP (a TIP.PGE here) */
                mode_pending = !in_psb;
                pos += 2;
                continue;
            }
            return PTC_FAST_FAIL;
        }
        if (b != 0x02)
            return PTC_FAST_FAIL; /* TNT-8 */
        if (avail < 2)
            goto truncated;
        switch (p[1]) {
        case 0x82: /* PSB */
            if (avail < 16)
                goto truncated;
            if (memcmp(p, psb_pattern, 16))
                return PTC_FAST_FAIL;
            if (psb_seen) {
                *consumed = pos; /* the next span's PSB, if the caller finds no other */
                goto span_end;
            }
            psb_seen = 1;
            if (fup_pending || ovf_pending)
                return PTC_FAST_FAIL;
            in_psb = 1;
            last_ip = 0;
            in->suspect = 0; /* a PSB resynchronises: no more suspect IPs */
            pos += 16;
            continue;
        case 0x23: /* PSBEND */
            if (!in_psb)
                return PTC_FAST_FAIL;
            in_psb = 0;
            pos += 2;
            continue;
        case 0x03: /* CBR */
            if (avail < 4)
                goto truncated;
            if (!p[2])
                return PTC_FAST_FAIL;
            if (ovf_pending || fup_pending)
                return PTC_FAST_FAIL; /* keep libipt's exact handling for the rare cases */
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
            if (p[4] || (p[6] & 0xfe))
                return PTC_FAST_FAIL; /* reserved bits set: libipt's bad packet */
            if (t_tma(cfg, time, (uint32_t)p[2] | (uint32_t)p[3] << 8,
                      (uint32_t)p[5] | ((uint32_t)(p[6] & 1) << 8)))
                return PTC_FAST_FAIL;
            pos += 7;
            continue;
        case 0xf3: /* OVF */
            /* SKD010, APL11, APL12: libipt looks ahead for what resolved the overflow */
            if (in_psb || fup_pending || ovf_pending ||
                (errata & (PTC_PT_ERRATUM_SKD010 | PTC_PT_ERRATUM_APL11 |
                           PTC_PT_ERRATUM_APL12)))
                return PTC_FAST_FAIL;
            mode_pending = 0; /* libipt resets its event queue at OVF */
            ovf_pending = 1;
            fs->ovf_time = *time;
            ovf_off = base + pos + 2;
            last_ip = 0; /* libipt resets its last IP at OVF */
            pos += 2;
            continue;
        default:
            return PTC_FAST_FAIL;
        }
    }
    *consumed = len;
    if (!final)
        goto save;
span_end: /* the end of the span: a PSB, or the end of the segment */
    if (fup_pending || in_psb)
        return PTC_FAST_FAIL;
    if (ovf_pending) {
        EMIT_OVF(0, 0, ovf_off);
        ovf_pending = 0;
    }
    fs->last_ip = last_ip;
    fs->nev = nev;
    fs->fup_pending = 0;
    fs->ovf_pending = 0;
    fs->mode_pending = 0;
    fs->in_psb = 0;
    fs->psb_seen = (uint8_t)psb_seen;
    return *consumed < len ? PTC_FAST_PSB : PTC_FAST_MORE;
truncated:
    if (final)
        /* The stream ends inside a packet: let libipt have the span (it treats that as the
         * end of the trace); the caller records the truncation from byte counts. */
        return PTC_FAST_FAIL;
    *consumed = pos; /* the rest of the packet comes with the next bytes */
save:
    fs->last_ip = last_ip;
    fs->nev = nev;
    fs->fup_ip = fup_ip;
    fs->ovf_off = ovf_off;
    fs->in_psb = (uint8_t)in_psb;
    fs->fup_pending = (uint8_t)fup_pending;
    fs->ovf_pending = (uint8_t)ovf_pending;
    fs->mode_pending = (uint8_t)mode_pending;
    fs->psb_seen = (uint8_t)psb_seen;
    return PTC_FAST_MORE;
#undef HT
#undef TNOW
#undef EMIT_OVF
}
