/* libipt's query decoder as the decoder of record: turns PT bytes into the same abstract
 * events as the fast path (pt_fast.c). */
#include <intel-pt.h>
#include <string.h>

#include "pt_ipt_cfg.h"

static int push(struct ptc_pt_aevs *out, uint8_t type, int ip_valid, uint64_t ip,
                const struct pt_event *ev, uint64_t off)
{
    struct ptc_pt_aev e = {.type = type, .ip_valid = (uint8_t)ip_valid, .ip = ip, .off = off};
    if (ev && ev->has_tsc) {
        e.has_time = 1;
        e.tsc = ev->tsc;
    }
    return ptc_pt_aevs_push(out, &e);
}

/* Where the packets from offset from (a packet boundary) run past the end of the bytes c
 * covers (len of them): the cut packet's offset, or len when the last packet is whole. */
static uint64_t cut_packet(const struct pt_config *c, uint64_t len, uint64_t from)
{
    struct pt_packet_decoder *d = pt_pkt_alloc_decoder(c);
    if (!d)
        return len;
    uint64_t at = len;
    if (pt_pkt_sync_set(d, from) >= 0) {
        for (;;) {
            uint64_t off = 0;
            pt_pkt_get_offset(d, &off);
            struct pt_packet p;
            int s = pt_pkt_next(d, &p, sizeof(p));
            if (s == -pte_eos) {
                at = off;
                break;
            }
            if (s < 0)
                break; /* not a cut: the query decoder's business */
        }
    }
    pt_pkt_free_decoder(d);
    return at;
}

/* Where the packet an event binds to ends: from offset off (where the query decoder stood
 * when it had the event: that packet, or the MODE or timing packets before it) to the end of
 * the first packet of that kind - a TIP.PGE for an enable, the FUP an overflow resumes at or
 * else the OVF. The fast path gives its items that offset, and items are attributed to the
 * thread whose AUX piece holds their offset, so both must say the same. */
static uint64_t event_end(struct pt_packet_decoder *pk, uint64_t off, const struct pt_event *ev)
{
    enum pt_packet_type want;
    switch (ev->type) {
    case ptev_enabled:
        want = ppt_tip_pge;
        break;
    case ptev_overflow:
        want = ev->ip_suppressed ? ppt_ovf : ppt_fup;
        break;
    case ptev_disabled:
    case ptev_async_disabled:
        want = ppt_tip_pgd;
        break;
    default:
        return off;
    }
    if (pt_pkt_sync_set(pk, off) < 0)
        return off;
    /* no other packet of that kind lies between (libipt would have had its event first),
     * so the walks of a span's events cover it about once */
    for (;;) {
        struct pt_packet p;
        uint64_t at = 0;
        pt_pkt_get_offset(pk, &at);
        int n = pt_pkt_next(pk, &p, sizeof(p));
        if (n <= 0)
            break;
        if (p.type == want)
            return at + (uint64_t)n;
    }
    return off;
}

/* One event of libipt's as an abstract event at stream offset off. */
static int take_event(struct ptc_pt_aevs *out, const struct pt_event *ev, uint64_t off)
{
    if (ev->status_update) {
        /* PSB+ content: a synchronisation point */
        if (!out->n || out->v[out->n - 1].type != PTC_AEV_PSB)
            return push(out, PTC_AEV_PSB, 0, 0, NULL, off);
        return 0;
    }
    switch (ev->type) {
    case ptev_enabled:
        return push(out, PTC_AEV_ENABLE, 1, ev->variant.enabled.ip, ev, off);
    case ptev_disabled:
        return push(out, PTC_AEV_DISABLE, !ev->ip_suppressed, ev->variant.disabled.ip, ev, off);
    case ptev_async_disabled:
        return push(out, PTC_AEV_ASYNC_DISABLE, 1, ev->variant.async_disabled.at, ev, off);
    case ptev_overflow:
        return push(out, PTC_AEV_OVF, !ev->ip_suppressed, ev->variant.overflow.ip, ev, off);
    default:
        return 0;
    }
}

/* An undecodable stretch at the query decoder's position. A PSB whose PSB+ cannot be read
 * fails again when the resynchronisation lands on it: errors with nothing decoded between
 * them are one stretch (the fast path, which gives libipt only that span, sees one). */
static int push_error(struct ptc_pt_aevs *out, int status, struct pt_query_decoder *q,
                      uint64_t base)
{
    if (out->n && out->v[out->n - 1].type == PTC_AEV_ERROR)
        return 0;
    uint64_t off = 0;
    pt_qry_get_offset(q, &off);
    struct ptc_pt_aev e = {.type = PTC_AEV_ERROR, .err = status, .off = base + off};
    return ptc_pt_aevs_push(out, &e);
}

int ptc_pt_ipt_decode(const struct ptc_pt_dcfg *cfg, const uint8_t *buf, size_t len,
                      uint64_t base, int psb_at_end, struct ptc_pt_aevs *out)
{
    struct pt_config c;
    if (!len)
        return 0;
    ptc_pt_fill_config(&c, cfg, buf, len);
    struct pt_query_decoder *q = pt_qry_alloc_decoder(&c);
    struct pt_packet_decoder *pk = pt_pkt_alloc_decoder(&c);
    if (!q || !pk) {
        pt_qry_free_decoder(q);
        pt_pkt_free_decoder(pk);
        return -pte_nomem;
    }
    uint64_t ip, walk_from = 0; /* a packet boundary after the last event */
    int rc = 0;
    int status = pt_qry_sync_forward(q, &ip);
    if (status >= 0) {
        uint64_t so = 0;
        pt_qry_get_sync_offset(q, &so);
        walk_from = so;
        rc = push(out, PTC_AEV_PSB, 0, 0, NULL, base + so + 16);
    }
    while (status != -pte_eos && !rc) {
        if (status < 0) {
            rc = push_error(out, status, q, base);
            status = pt_qry_sync_forward(q, &ip);
            if (status >= 0 && !rc) {
                uint64_t so = 0;
                pt_qry_get_sync_offset(q, &so);
                walk_from = so;
                rc = push(out, PTC_AEV_PSB, 0, 0, NULL, base + so + 16);
            }
            continue;
        }
        if (status & pts_event_pending) {
            struct pt_event ev;
            /* pt_qry_event copies the event out before it reads on, and returns the error
             * of what follows it: an event filled in is one that happened */
            memset(&ev, 0xff, sizeof(ev));
            uint64_t off = 0;
            pt_qry_get_offset(q, &off);
            walk_from = off;
            status = pt_qry_event(q, &ev, sizeof(ev));
            if ((int)ev.type != -1)
                rc = take_event(out, &ev, base + event_end(pk, off, &ev));
            continue;
        }
        if (status & pts_eos)
            break;
        /* No event pending: consume control flow the stubs do not produce but a foreign
         * trace might (TNT, TIP). */
        int taken;
        int st = pt_qry_cond_branch(q, &taken);
        if (st == -pte_bad_query) {
            uint64_t tip;
            st = pt_qry_indirect_branch(q, &tip);
        }
        status = st;
    }
    if (!rc && psb_at_end && (!out->n || out->v[out->n - 1].type != PTC_AEV_ERROR)) {
        /* libipt ends a span the same way whether its last packet is whole or cut (a cut
         * timing packet even moves it to the end); before a PSB a cut packet means bytes
         * are missing (an overlap, a lost tail): an error */
        uint64_t cut = cut_packet(&c, len, walk_from);
        if (cut < len) {
            struct ptc_pt_aev e = {.type = PTC_AEV_ERROR, .err = -pte_eos, .off = base + cut};
            rc = ptc_pt_aevs_push(out, &e);
        }
    }
    pt_qry_free_decoder(q);
    pt_pkt_free_decoder(pk);
    return rc ? -pte_nomem : 0;
}
