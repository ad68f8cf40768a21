/* The fast path's steady-state loop: between two PSBs a stub-filtered trace is TIP.PGE into
 * a stub, TIP.PGD back out, and timing packets (MTC, CYC), nothing else. This loop decodes
 * exactly those into hits and stops before anything else (PSB+, FUP, OVF, TSC, a TIP.PGE
 * outside the stub range ...), which the general parser in pt_fast.c handles.
 *
 * Why it is a function of its own: the general parser keeps a dozen values live, and
 * inside it this loop ran out of registers (its bounds and the range were reloaded from
 * the stack on every packet). Here everything it needs is a local.
 *
 * Where the time goes: the address of the next packet depends on the length of this one,
 * so one header-byte load plus the length computation per packet is the loop's critical
 * path; everything else (IP decompression, the hit's time, the item store) runs beside it.
 * So: no branch depends on the IP compression (random from one packet to the next), the
 * length comes from a register table, and a CYC-timed hit multiplies instead of divides. */
#include "pt_ftime.h"

/* The loop, instantiated once per way of timing a hit (cyc: CYC-based, else the TSC), so
 * that each instance keeps only what it needs in registers. */
static inline __attribute__((always_inline)) int
steady(const struct ptc_pt_dcfg *cfg, struct ptc_pt_ftime *time, struct ptc_steady *s,
       const int cyc)
{
    const uint8_t *p = s->buf + s->pos;
    const uint8_t *const lim = s->buf + s->lim;
    /* an item's stream offset is its end pointer plus this */
    const uint64_t off_adj = s->base - (uint64_t)(uintptr_t)s->buf;
    const uint64_t rs = s->rs, rl = s->rl;
    /* no queue yet (NULL): no room, and no arithmetic on NULL (undefined) */
    struct ptc_pt_item *o = s->q ? s->q + s->qn : NULL;
    struct ptc_pt_item *const qend = s->q ? s->q + s->qcap : NULL;
    uint64_t last_ip = s->last_ip;
    /* a hit's time (t_now): from CYC (CBR does not change in here), else the TSC, which
     * only MTC moves in here; only a TSC sets have_tsc: not in here */
    const int timed = time->have_tsc;
    const int use_mtc = !cyc && !((cfg->flags & PTC_PT_F_CYC) && cfg->nom_freq);
    const unsigned no_cyc = !(cfg->flags & PTC_PT_F_CYC), skd007 = s->skd007;
    const uint64_t cyc_base = time->cyc_base_tsc, nom = cfg->nom_freq;
    const struct ptc_recip cbr = recip_init(cyc ? time->cbr : 1);
    uint64_t cyc_sum = time->cyc_sum, tsc_now = timed ? time->tsc : 0;
    int rc = 0;

    while (p < lim) {
        const unsigned b = p[0];
        if (b == 0x01) {
            /* TIP.PGD with a suppressed IP, tested apart: a predicted branch lets the CPU
             * go on to the next packet before this one's length is computed */
            p++;
            continue;
        }
        if ((b & 3) == 3) { /* CYC: one or two bytes, without a branch on which */
            const unsigned ext = (b >> 2) & 1, b1 = p[1];
            if ((ext & b1) | no_cyc)
                break; /* three bytes or more, or not configured: the general parser */
            if (skd007 && ext && b1 == 0x02 && p[2] == 0xf3)
                break; /* SKD007: the general parser leaves it to libipt */
            cyc_sum += (uint64_t)(b >> 3) | ((uint64_t)(b1 >> 1) << 5 & -(uint64_t)ext);
            p += 1 + ext;
            continue;
        }
        /* decoded before the packet type is known (both IP packets need it; 9 bytes are
         * readable at p): no branch on the compression, which is as good as random */
        const unsigned ipb = b >> 5;
        const uint64_t ip = ip_decomp(last_ip, rd_le8(p + 1, 8), ipb);
        const uint8_t *const next = p + 1 + IPB_LEN(ipb);
        if ((b & 0x1f) == 0x11) { /* TIP.PGE */
            if (!((IPB_OK_PGE >> ipb) & 1) || ip - rs >= rl || o == qend)
                break; /* no IP, not a stub (the general parser decides), queue full */
            last_ip = ip;
            o->kind = PTC_PT_ITEM_HIT;
            o->has_time = (uint8_t)timed;
            o->why = o->reserved = 0;
            o->reserved2 = 0;
            o->ip = ip;
            o->tsc = cyc && timed ? cyc_base + recip_div(&cbr, cyc_sum * nom) : tsc_now;
            o->off = (uint64_t)(uintptr_t)next + off_adj;
            o->count = 0;
            o++;
            p = next;
            continue;
        }
        if ((b & 0x1f) == 0x01) { /* TIP.PGD, with the return address or suppressed */
            if (!((IPB_OK_PGD >> ipb) & 1))
                break;
            last_ip = ip; /* IPBytes 0 keeps every bit */
            p = next;
            continue;
        }
        if (b == 0x59) { /* MTC */
            if (use_mtc) {
                if (t_mtc(cfg, time, p[1], s->mtc_mul)) {
                    rc = -1;
                    break;
                }
                tsc_now = timed ? time->tsc : 0;
            }
            p += 2;
            continue;
        }
        if (b != 0x00) /* PAD goes on, anything else stops */
            break;
        p++;
    }
    time->cyc_sum = cyc_sum;
    s->pos = (size_t)(p - s->buf);
    s->qn = (size_t)(o - s->q);
    s->last_ip = last_ip;
    return rc;
}

int ptc_pt_steady(const struct ptc_pt_dcfg *cfg, struct ptc_pt_ftime *time,
                  struct ptc_steady *s)
{
    if ((cfg->flags & PTC_PT_F_CYC) && cfg->nom_freq && time->cbr)
        return steady(cfg, time, s, 1);
    return steady(cfg, time, s, 0);
}
