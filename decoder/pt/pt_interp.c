/* The interpretation (pt_interp.h) applied to libipt's abstract events, and the output
 * queue's growth. */
#include <stdio.h>
#include <stdlib.h>

#include "pt_interp.h"

int ptc_pt_interp_grow(struct ptc_pt_interp *in)
{
    size_t cap = in->qcap ? in->qcap * 2 : 1024;
    void *v = realloc(in->q, cap * sizeof(*in->q));
    if (!v)
        return -1;
    in->q = v;
    in->qcap = cap;
    return 0;
}

int ptc_pt_interp_aevs(const struct ptc_pt_dcfg *c, struct ptc_pt_interp *in,
                       const struct ptc_pt_aevs *a, uint64_t skip_events)
{
    /* read every time (once per libipt span): worker threads call this too */
    const int debug = getenv("PTCALL_PT_DEBUG") != NULL;
    for (size_t i = 0; i < a->n; i++) {
        const struct ptc_pt_aev *e = &a->v[i];
        if (debug)
            fprintf(stderr, "aev %d ip %d:%llx off %llu time %d:%llu%s\n", e->type,
                    e->ip_valid, (unsigned long long)e->ip, (unsigned long long)e->off,
                    e->has_time, (unsigned long long)e->tsc,
                    skip_events ? " (given by the fast path)" : "");
        /* a span the fast path gave up on after its first bytes were already handed out:
         * libipt decodes it again from its PSB and only what follows counts */
        if (skip_events) {
            if (e->type == PTC_AEV_ENABLE || e->type == PTC_AEV_ASYNC_DISABLE ||
                e->type == PTC_AEV_OVF)
                skip_events--;
            continue;
        }
        int r = 0;
        switch (e->type) {
        case PTC_AEV_PSB:
            in->suspect = 0;
            break;
        case PTC_AEV_ENABLE:
            r = ptc_interp_enable(c, in, e->ip, e->off, e->has_time, e->tsc);
            break;
        case PTC_AEV_DISABLE:
            ptc_interp_settle(in);
            in->have_resume = 0;
            break;
        case PTC_AEV_ASYNC_DISABLE:
            ptc_interp_async_disable(in, e->ip_valid, e->ip);
            break;
        case PTC_AEV_OVF:
            r = ptc_interp_ovf(c, in, e->ip_valid, e->ip, e->off, e->has_time, e->tsc);
            break;
        case PTC_AEV_ERROR:
            r = ptc_interp_error(in, e->off, e->has_time, e->tsc);
            break;
        }
        if (r)
            return -1;
    }
    return 0;
}
