/* Interpretation of decoded PT events into stub hits and gaps (docs/pt.md "What is a hit"),
 * as inline functions: the fast path applies them while it parses (one pass, no
 * intermediate events), the libipt path applies them to libipt's events (pt_interp.c). Both
 * must follow exactly these rules; the agreement tests hold them to it. */
#ifndef PTC_PT_INTERP_H
#define PTC_PT_INTERP_H

#include <stdint.h>
#include <stdlib.h>

#include "ptc_pt_decode.h"

static inline int ptc_in_stubs(const struct ptc_pt_dcfg *c, uint64_t ip)
{
    if (c->num_ranges == 1)
        return ip - c->ranges[0].start < c->ranges[0].end - c->ranges[0].start;
    size_t lo = 0, hi = c->num_ranges;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ip < c->ranges[mid].start)
            hi = mid;
        else if (ip >= c->ranges[mid].end)
            lo = mid + 1;
        else
            return 1;
    }
    return 0;
}

int ptc_pt_interp_grow(struct ptc_pt_interp *in);

static inline int ptc_interp_push(struct ptc_pt_interp *in, const struct ptc_pt_item *it)
{
    if (in->qn == in->qcap && ptc_pt_interp_grow(in))
        return -1;
    in->q[in->qn++] = *it;
    if (it->has_time) {
        in->last_tsc = it->tsc;
        in->have_last = 1;
    }
    if (it->kind == PTC_PT_ITEM_HIT)
        in->st->hits++;
    else
        in->st->gaps++;
    return 0;
}

static inline int ptc_interp_gap(struct ptc_pt_interp *in, uint8_t why, uint64_t off,
                                 int has_time, uint64_t tsc)
{
    struct ptc_pt_item it = {.kind = PTC_PT_ITEM_GAP, .why = why, .off = off,
                             .has_time = (uint8_t)has_time, .tsc = has_time ? tsc : 0};
    return ptc_interp_push(in, &it);
}

static inline int ptc_interp_hit(struct ptc_pt_interp *in, uint64_t ip, uint64_t off,
                                 int has_time, uint64_t tsc)
{
    struct ptc_pt_item it = {.kind = PTC_PT_ITEM_HIT, .ip = ip, .off = off,
                             .has_time = (uint8_t)has_time, .tsc = has_time ? tsc : 0};
    return ptc_interp_push(in, &it);
}

/* Anything but an ENABLE settles the resume state a piece starts with (parallel decode). */
static inline void ptc_interp_settle(struct ptc_pt_interp *in)
{
    in->first_open = 0;
    in->touched = 1;
}

static inline int ptc_interp_enable(const struct ptc_pt_dcfg *c, struct ptc_pt_interp *in,
                                    uint64_t ip, uint64_t off, int has_time, uint64_t tsc)
{
    int r = 0;
    if (ptc_in_stubs(c, ip)) {
        if (in->first_open) {
            /* whether this is a resume depends on the previous piece: decide later */
            in->first_open = 0;
            in->first_seen = 1;
            in->first_ip = ip;
            in->first_item = in->qn;
        }
        if (in->have_resume && in->resume_ip == ip)
            in->st->resumes++; /* back from an interrupt taken on the stub */
        else
            r = ptc_interp_hit(in, ip, off, has_time, tsc);
    } else {
        in->first_open = 0;
        if (in->suspect)
            r = ptc_interp_gap(in, PTC_PT_WHY_SUSPECT, off, has_time, tsc);
        else
            in->st->stray++;
    }
    in->have_resume = 0;
    in->touched = 1;
    return r;
}

static inline void ptc_interp_async_disable(struct ptc_pt_interp *in, int ip_valid,
                                            uint64_t ip)
{
    ptc_interp_settle(in);
    in->have_resume = (uint8_t)ip_valid;
    in->resume_ip = ip;
}

static inline int ptc_interp_ovf(const struct ptc_pt_dcfg *c, struct ptc_pt_interp *in,
                                 int ip_valid, uint64_t ip, uint64_t off, int has_time,
                                 uint64_t tsc)
{
    ptc_interp_settle(in);
    in->st->ovf++;
    in->have_resume = 0;
    in->suspect = 1;
    int r = ptc_interp_gap(in, PTC_PT_WHY_OVF, off, has_time, tsc);
    if (!r && ip_valid && ptc_in_stubs(c, ip))
        r = ptc_interp_hit(in, ip, off, has_time, tsc);
    return r;
}

static inline int ptc_interp_error(struct ptc_pt_interp *in, uint64_t off, int has_time,
                                   uint64_t tsc)
{
    ptc_interp_settle(in);
    in->st->decode_errors++;
    in->have_resume = 0;
    in->suspect = 1;
    return ptc_interp_gap(in, PTC_PT_WHY_DECODE, off, has_time, tsc);
}

#endif
