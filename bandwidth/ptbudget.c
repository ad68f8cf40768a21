/* The Intel PT budget's inputs from a simulation (ptbudget.h). */
#include "ptbudget.h"

#include <errno.h>
#include <stdlib.h>

int ptc_bw_budget_funcs(const struct ptc_sim *sim, int (*candidate)(void *, uint32_t),
                        void *ctx, struct ptc_budget_func **out, size_t *n)
{
    uint32_t nf = ptc_sim_nfuncs(sim);
    const uint64_t *h = ptc_sim_fhits(sim);
    struct ptc_budget_func *f = calloc(nf ? nf : 1, sizeof(*f));
    if (!f) {
        errno = ENOMEM;
        return -1;
    }
    for (uint32_t i = 0; i < nf; i++) {
        uint64_t entries = h ? h[2 * (size_t)i] : 0, exits = h ? h[2 * (size_t)i + 1] : 0;
        f[i].calls = entries;
        f[i].events_per_call = entries && !exits ? 1 : 2;
        f[i].flags = !candidate || candidate(ctx, i) ? PTC_BUDGET_F_CANDIDATE : 0;
    }
    *out = f;
    *n = nf;
    return 0;
}

int ptc_bw_budget_model(const struct ptc_sim *sim, double rate, double scale,
                        struct ptc_budget_model *m)
{
    struct ptc_sim_totals t;
    ptc_sim_totals(sim, &t);
    const struct ptc_sim_mode *md = ptc_sim_mode(sim, 0);
    if (!t.span_ns || !t.hits || !md)
        return -1;
    m->per_event = (double)md->total / (double)t.hits;
    m->per_count = 0;
    m->budget = rate * ((double)t.span_ns / 1e9) * scale;
    return 0;
}
