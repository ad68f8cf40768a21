/* `ptcall record --budget RATE[,AUX]`, Intel PT's budget (record_budget_pt.h). */
#include "record_budget_pt.h"

#include <string.h>

#include "bw_budget.h"
#include "cli_common.h"
#include "ptc_record_options.h"

int record_budget_check(const struct cli_values *v)
{
    if (!v->have_budget)
        return 0;
    if (v->record.backend == 1) { /* --backend soft */
        fprintf(stderr, "ptcall record: --budget RATE is a bandwidth for Intel PT; the software "
                        "backend's budget is --overhead PCT\n");
        return 1;
    }
    char why[256] = "Intel PT support is not built into this ptcall";
    if (!pt_available || !record_pt || pt_available(why, sizeof(why)) != 1) {
        fprintf(stderr,
                "ptcall record: no Intel PT on this machine: %s; use 'ptcall bandwidth TRACE "
                "--budget RATE' to see what it would choose\n",
                why);
        return 1;
    }
    return 0;
}

int record_budget_choose(const struct cli_values *v, const char *counts_path,
                         const struct ptc_select *sel, FILE *out)
{
    struct ptc_sim_cfg cfg;
    ptc_sim_cfg_default(&cfg);
    /* v->timing: none, tsc, mtc, cyc from 0 (options' order, enum ptc_sim_timing's) */
    cfg.timing[0] = v->timing < 0 ? PTC_SIM_MTC : v->timing;
    cfg.nmodes = 1;
    struct bw_budget b;
    double aux = (double)(v->budget.aux ? v->budget.aux : 4u << 20);
    if (bw_budget_run("record", counts_path, &cfg, sel, (double)v->budget.rate, aux, &b))
        return 1;
    fprintf(out, "ptcall-trace-set 1\n# ptcall record --budget %.0f,%.0f from %s: %.1f%% of "
                 "the calls, simulated %.0f B/s\n",
            b.rate, b.aux, counts_path,
            b.res.calls_total ? 100.0 * (double)b.res.calls_traced / (double)b.res.calls_total
                              : 0.0,
            b.chosen_rate);
    for (size_t i = 0; i < b.n; i++) {
        if (!(b.f[i].flags & PTC_BUDGET_F_TRACED) || !b.f[i].calls)
            continue;
        const struct ptc_func_info *fi = ptc_session_func(b.s, (uint32_t)i);
        if (!fi)
            continue;
        const char *name = fi->linkage_name && *fi->linkage_name ? fi->linkage_name : fi->name;
        if (name)
            fprintf(out, "%s\n", name);
    }
    bw_budget_free(&b);
    return 0;
}
