/* `--budget RATE[,AUX]` for Intel PT (docs/bandwidth.md, "Tracing within a budget"): which
 * functions to trace so that the simulated stub-filtered stream of a trace's run stays
 * within RATE bytes per second and loses nothing in an AUX buffer drained at RATE. Used by
 * `ptcall bandwidth TRACE --budget` and, from a previous run's trace, by `ptcall record
 * --budget` (Intel PT backend). */
#ifndef PTCALL_BW_BUDGET_H
#define PTCALL_BW_BUDGET_H

#include <stdint.h>
#include <stdio.h>

#include "bw_report.h"
#include "ptc_budget.h"
#include "ptc_select.h"
#include "ptsim.h"

struct bw_budget {
    double rate, aux;              /* bytes/s; AUX bytes per stream */
    int timing;                    /* the configuration chosen for (enum ptc_sim_timing) */
    double span_s;                 /* the run's span (every candidate's hits) */
    struct ptc_budget_model model; /* as given to ptc_budget_choose, the last round's */
    double scale;                  /* model.budget = rate * span_s * scale */
    int rounds;                    /* choices made (each one tighter than the last) */
    struct ptc_budget_result res;
    struct ptc_budget_func *f;     /* per simulator function slot */
    size_t n;
    struct ptc_session *s;         /* names of f's slots */
    uint64_t all_bytes, chosen_bytes;
    double all_rate, chosen_rate;  /* bytes / span_s */
    struct bw_loss all_loss, chosen_loss;
    int fits;                      /* chosen_rate <= rate and nothing lost */
    int nothing_fits;              /* no non-empty choice fitted: none is traced */
    double cheapest_rate;          /* the cheapest function that ran, traced alone, B/s */
    uint32_t cheapest;             /* its slot */
    double smallest_rate;          /* the last non-empty choice's simulated B/s */
    int have_full;                 /* the full-PT estimate for this timing: */
    double full_rate;              /* its bytes / span_s */
};

/* Replays bytes per bin (bin_s seconds each) against a buffer of aux bytes drained at drain
 * bytes/s; marks in mask (when not NULL) the bins that lost bytes. */
void bw_replay(const uint64_t *bins, size_t n, double bin_s, double drain, double aux,
               struct bw_loss *L, uint8_t *mask);

/* Chooses for trace path under cfg (its first timing is the one chosen for), the candidates
 * being sel's functions (NULL or inactive: all). 0, or 1 after saying what went wrong
 * (cmd names the command in the message). */
int bw_budget_run(const char *cmd, const char *path, const struct ptc_sim_cfg *cfg,
                  const struct ptc_select *sel, double rate, double aux, struct bw_budget *b);
/* The full-PT estimate of r (mode with b->timing), for the crossover. */
void bw_budget_full(struct bw_budget *b, const struct bw_report *r);
void bw_budget_free(struct bw_budget *b);

/* The report's budget section: table (format 0), json (2: a member "budget_choice",
 * written after a comma by the caller), csv (1: rows kind budget). */
void bw_budget_write(const struct bw_budget *b, int format, uint64_t top, FILE *f);

#endif
