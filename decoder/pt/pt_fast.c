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
    int psb_seen = fs->psb_seen;
    uint64_t nev = fs->nev;
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
        if (!in_psb && !fup_pending && !ovf_pending && !in->have_resume && !in->first_open &&
            cfg->num_ranges == 1 && len - pos > 9) {
            /* the steady state of a stub trace (pt_steady.c). Nothing there changes the
             * interpretation state but the output queue. */
            struct ptc_steady st = {.buf = buf, .pos = pos, .lim = len - 9, .base = base,
                                    .last_ip = last_ip, .rs = cfg->ranges[0].start,
                                    .rl = cfg->ranges[0].end - cfg->ranges[0].start,
                                    .mtc_mul = mul, .q = in->q, .qn = in->qn,
                                    .qcap = in->qcap};
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
                if (op != 0x1d)
                    return PTC_FAST_FAIL;
                pos = end; /* FUP in PSB+: status only */
                continue;
            }
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
                nev++;
                if (ptc_interp_enable(cfg, in, ip, base + end, HT, TNOW))
                    return NOMEM;
            } else if (fup_pending) {
                nev++;
                ptc_interp_async_disable(in, 1, fup_ip);
                fup_pending = 0;
            }
            /* a plain TIP.PGD changes nothing the interpretation keeps (it only ends a
             * resume window, which only FUP+TIP.PGD opens and TIP.PGE closes) */
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
                    if (shift < 64)
                        v |= (uint64_t)(x >> 1) << shift;
                    shift += 7;
                    if (!(x & 1))
                        break;
                    if (n > 10)
                        return PTC_FAST_FAIL;
                }
            }
            if (in_psb)
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
                if (ovf_pending) {
                    EMIT_OVF(0, 0, ovf_off);
                    ovf_pending = 0;
                }
                if (fup_pending)
                    return PTC_FAST_FAIL;
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
                *consumed = pos;
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
            if (t_tma(cfg, time, (uint32_t)p[2] | (uint32_t)p[3] << 8,
                      (uint32_t)p[5] | ((uint32_t)(p[6] & 1) << 8)))
                return PTC_FAST_FAIL;
            pos += 7;
            continue;
        case 0xf3: /* OVF */
            if (in_psb || fup_pending || ovf_pending)
                return PTC_FAST_FAIL;
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
    /* the end of the segment ends the span */
span_end:
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
    fs->in_psb = 0;
    fs->psb_seen = (uint8_t)psb_seen;
    return *consumed == len && final ? PTC_FAST_MORE : PTC_FAST_PSB;
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
    fs->psb_seen = (uint8_t)psb_seen;
    return PTC_FAST_MORE;
#undef HT
#undef TNOW
#undef EMIT_OVF
}
