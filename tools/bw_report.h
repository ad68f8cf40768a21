/* What `ptcall bandwidth` found and how it is written: table, csv, json (docs/bandwidth.md,
 * docs/schema/bandwidth.schema.json). */
#ifndef PTCALL_BW_REPORT_H
#define PTCALL_BW_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "ptc_select.h"
#include "ptsim.h"

struct cli_values;
struct ptc_pt_measured;
struct bw_budget;

/* A buffer drained at a rate: what it would lose. */
struct bw_loss {
    uint64_t lost, lossy_bins;
    double first_s, last_s;     /* first and last second with a loss, since the start */
    double peak;                /* most bytes the buffer held */
};

/* Full control-flow tracing, estimated (bw_full.c). */
#define BW_FULL_NTYPES 14
struct bw_full {
    int have;
    char source[512];           /* how the branch counts were obtained */
    char note[512];             /* what the estimate assumes, in a sentence */
    uint64_t branches_cond, branches_indirect, calls_indirect, returns, insns;
    struct {
        const char *name;
        uint64_t count[PTC_SIM_MAX_MODES], bytes[PTC_SIM_MAX_MODES];
    } types[BW_FULL_NTYPES];
    int ntypes;
    uint64_t total[PTC_SIM_MAX_MODES];
    struct bw_loss loss[PTC_SIM_MAX_MODES];
    struct bw_full_func { const char *name; uint64_t bytes; } *funcs; /* by bytes, mode 0 */
    size_t nfuncs;
};

struct bw_report {
    const char *path;
    struct ptc_sim_cfg cfg;
    struct ptc_session *s;
    struct ptc_sim *sim;
    int pt_trace;
    struct ptc_pt_measured *measured;   /* PT trace: its packets as recorded */
    int measured_timing;                /* ... under this configuration */
    const struct ptc_select *only;
    uint64_t top;
    /* --drain */
    double drain, aux;
    struct bw_loss loss[PTC_SIM_MAX_MODES];
    uint64_t *loss_fbytes[PTC_SIM_MAX_MODES]; /* per function: bytes in the lossy bins */
    uint32_t loss_nfuncs[PTC_SIM_MAX_MODES];
    struct bw_full full;
    const struct bw_budget *choice;     /* --budget (bw_budget.h); NULL: not asked */
};

void bw_report_init(struct bw_report *r);
void bw_report_free(struct bw_report *r);
/* Keeps the per-function bytes of mode i's lossy bins (a copy). 0, or 1 (out of memory,
 * said). */
int bw_report_loss_funcs(struct bw_report *r, int i, const struct ptc_session *s,
                         const uint64_t *fbytes, uint32_t nfuncs);
/* format: 0 table, 1 csv, 2 json. Returns 0, or -1 when out of memory. */
int bw_report_write(const struct bw_report *r, int format, FILE *f);

/* bw_full.c: the full-PT estimate from --callgrind FILE or by running argv[0..argc) under
 * callgrind; nothing when neither is given. 0, or 1 after saying what went wrong. */
int bw_full_estimate(struct bw_report *r, const struct cli_values *v, const char *const *argv,
                     int argc);

#endif
