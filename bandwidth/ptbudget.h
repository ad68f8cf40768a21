/* The Intel PT budget (`--budget RATE[,AUX]`, docs/bandwidth.md "Tracing within a budget"):
 * from a simulation of every candidate function's stub hits, the inputs of ptc_budget_choose
 * (common/ptc_budget.h) in bytes. A function's calls are its entry hits; it costs 2 hits a
 * call (entry and exit), 1 when it had entries and no exit hit (a leaf whose exit stayed
 * unarmed); a hit costs the configuration's average bytes per hit; counting costs nothing
 * (Intel PT counts nothing: an untraced function is simply not traced). */
#ifndef PTC_PTBUDGET_H
#define PTC_PTBUDGET_H

#include <stddef.h>
#include <stdint.h>

#include "ptc_budget.h"
#include "ptsim.h"

/* One function per slot of the simulator (f[func], n = ptc_sim_nfuncs): calls and events
 * per call from the hits of mode 0, PTC_BUDGET_F_CANDIDATE where candidate(ctx, func) says
 * so (NULL: every function). *out is malloc'ed (free it). 0, or -1 (ENOMEM). */
int ptc_bw_budget_funcs(const struct ptc_sim *sim, int (*candidate)(void *, uint32_t),
                        void *ctx, struct ptc_budget_func **out, size_t *n);

/* The model for rate bytes/s over the simulation's span, times scale (<= 1: the budget is
 * tightened when the chosen set's simulated stream exceeds it): per_event = mode 0's bytes
 * per hit (every byte, the passing of time's and PSB+'s included), per_count = 0. 0, or -1
 * when the simulation has no timed span or no hit (a rate cannot be kept without times). */
int ptc_bw_budget_model(const struct ptc_sim *sim, double rate, double scale,
                        struct ptc_budget_model *m);

#endif
