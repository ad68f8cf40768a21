/* perf_event_attr for user-space Intel PT of a launched command (or an attached process),
 * built from the format files and validated against caps/ the way the kernel's
 * pt_event_valid() does, so that a bad combination fails here with a clear message instead
 * of EINVAL from perf_event_open. */
#include <stdio.h>
#include <string.h>

#include "ptc_pt_rec.h"
#include "ptcall/trace_format_pt.h"

/* the valid value in bitmap nearest to want (lower wins on ties), or -1 */
static int nearest(int64_t bitmap, int want)
{
    if (bitmap <= 0)
        return -1;
    for (int d = 0; d < 16; d++) {
        if (want - d >= 0 && (bitmap >> (want - d)) & 1)
            return want - d;
        if (want + d < 16 && (bitmap >> (want + d)) & 1)
            return want + d;
    }
    return -1;
}

int ptc_pt_build_attrs(const struct ptc_pt_pmu *pmu, const struct ptc_pt_attr_req *req,
                       int attach, struct ptc_pt_attrs *out, char *why, size_t why_size)
{
    memset(out, 0, sizeof(*out));
    struct perf_event_attr *a = &out->pt;
    a->size = sizeof(*a);
    a->type = pmu->type;
    uint64_t cfg = 0;
    enum record_timing t = req->timing == TIMING_DEFAULT ? TIMING_MTC : req->timing;

    /* pt,branch: BranchEn as asked (on) when the kernel knows the pass-through bit */
    if (ptc_pt_pmu_format(pmu, "pt") && ptc_pt_pmu_format(pmu, "branch")) {
        ptc_pt_pmu_set(pmu, &cfg, "pt", 1);
        ptc_pt_pmu_set(pmu, &cfg, "branch", 1);
    }
    /* noretcomp: every ret (the stub's exit) gives TIP.PGD with the target */
    if (!ptc_pt_pmu_set(pmu, &cfg, "noretcomp", 1))
        out->flags |= PTC_PT_F_NORETCOMP;
    if (t >= TIMING_TSC) {
        if (ptc_pt_pmu_set(pmu, &cfg, "tsc", 1)) {
            snprintf(why, why_size, "--timing %s needs the 'tsc' format term, which %s/format "
                                    "lacks; use --timing none",
                     t == TIMING_TSC ? "tsc" : t == TIMING_MTC ? "mtc" : "cyc", pmu->root);
            return -1;
        }
        out->flags |= PTC_PT_F_TSC;
    }
    if (t >= TIMING_MTC) {
        if (pmu->mtc != 1 || pmu->mtc_periods <= 0 || !ptc_pt_pmu_format(pmu, "mtc")) {
            snprintf(why, why_size, "--timing %s needs MTC packets, which this CPU does not "
                                    "support (caps/mtc=%lld, caps/mtc_periods=%llx); use "
                                    "--timing tsc",
                     t == TIMING_MTC ? "mtc" : "cyc", (long long)pmu->mtc,
                     (unsigned long long)(pmu->mtc_periods < 0 ? 0 : pmu->mtc_periods));
            return -1;
        }
        int p = req->mtc_period >= 0 ? req->mtc_period : nearest(pmu->mtc_periods, 3);
        if (p < 0 || !((pmu->mtc_periods >> p) & 1)) {
            snprintf(why, why_size, "mtc_period %d is not valid on this CPU (caps/mtc_periods "
                                    "= %llx)",
                     req->mtc_period, (unsigned long long)pmu->mtc_periods);
            return -1;
        }
        ptc_pt_pmu_set(pmu, &cfg, "mtc", 1);
        if (ptc_pt_pmu_set(pmu, &cfg, "mtc_period", (uint64_t)p)) {
            snprintf(why, why_size, "%s/format/mtc_period is missing", pmu->root);
            return -1;
        }
        out->mtc_freq = (uint8_t)p;
        out->flags |= PTC_PT_F_MTC;
    }
    if (t >= TIMING_CYC) {
        if (pmu->psb_cyc != 1 || !ptc_pt_pmu_format(pmu, "cyc")) {
            snprintf(why, why_size, "--timing cyc needs cycle-accurate mode, which this CPU "
                                    "does not support (caps/psb_cyc=%lld); use --timing mtc",
                     (long long)pmu->psb_cyc);
            return -1;
        }
        int th = req->cyc_thresh >= 0 ? req->cyc_thresh : 0;
        if (th && !((pmu->cycle_thresholds >> th) & 1)) {
            snprintf(why, why_size, "cyc_thresh %d is not valid on this CPU "
                                    "(caps/cycle_thresholds = %llx)",
                     th, (unsigned long long)pmu->cycle_thresholds);
            return -1;
        }
        ptc_pt_pmu_set(pmu, &cfg, "cyc", 1);
        if (th)
            ptc_pt_pmu_set(pmu, &cfg, "cyc_thresh", (uint64_t)th);
        out->cyc_thresh = (uint8_t)th;
        out->flags |= PTC_PT_F_CYC;
    }
    /* PSB frequency: sync points are where decoding resumes after a loss; ask for the
     * densest the CPU allows (a stub-filtered trace is small anyway) */
    if (pmu->psb_cyc == 1 && ptc_pt_pmu_format(pmu, "psb_period")) {
        int p = req->psb_period >= 0 ? req->psb_period : nearest(pmu->psb_periods, 0);
        if (req->psb_period >= 0 && p && !((pmu->psb_periods >> p) & 1)) {
            snprintf(why, why_size, "psb_period %d is not valid on this CPU (caps/psb_periods"
                                    " = %llx)",
                     p, (unsigned long long)pmu->psb_periods);
            return -1;
        }
        if (p > 0)
            ptc_pt_pmu_set(pmu, &cfg, "psb_period", (uint64_t)p);
        out->psb_period = (uint8_t)(p > 0 ? p : 0);
    }
    a->config = cfg;
    a->exclude_kernel = 1;
    a->exclude_hv = 1;
    a->disabled = 1;
    a->enable_on_exec = attach ? 0 : 1;
    a->inherit = attach ? 0 : 1;
    a->sample_period = 1;
    a->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
                     PERF_SAMPLE_IDENTIFIER;
    a->sample_id_all = 1;
    a->read_format = PERF_FORMAT_ID;
    /* sideband on the PT event itself too: ITRACE_START, AUX and SWITCH belong to it */
    a->context_switch = 1;
    a->aux_watermark = 0; /* set by the recorder to a quarter of the AUX buffer */

    /* the tracking event: mmap (needed for filter re-resolution on every exec mmap), mmap2,
     * comm, task; it keeps running when the PT event is disabled for a snapshot */
    struct perf_event_attr *d = &out->dummy;
    d->size = sizeof(*d);
    d->type = PERF_TYPE_SOFTWARE;
    d->config = PERF_COUNT_SW_DUMMY;
    d->exclude_kernel = 1;
    d->exclude_hv = 1;
    d->disabled = 1;
    d->enable_on_exec = attach ? 0 : 1;
    d->inherit = attach ? 0 : 1;
    d->mmap = 1;
    d->mmap2 = 1;
    d->comm = 1;
    d->comm_exec = 1;
    d->task = 1;
    d->sample_period = 1;
    d->sample_type = a->sample_type;
    d->sample_id_all = 1;
    d->read_format = PERF_FORMAT_ID;
    if (req->snapshot)
        out->flags |= PTC_PT_F_SNAPSHOT;
    return 0;
}
