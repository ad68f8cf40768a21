/* Choosing which functions to trace within a budget (docs/runtime.md, Tracing within a
 * budget): `ptcall record --overhead PCT` (software backend: nanoseconds of the program's CPU
 * time) and `--budget RATE` (Intel PT: bytes of trace). The runtime calls it at the end of a
 * pilot (counting every function first), `ptcall record` with the counts of a previous run.
 *
 * The model: every candidate function that is not traced is counted (a counting trampoline
 * per call, per_count), a traced one costs events_per_call events per call (per_event). A
 * function's marginal cost of being traced is calls * (events_per_call * per_event -
 * per_count). The cheapest functions are taken first, so the choice keeps as many functions
 * traced as the budget allows; ties go to the lower index, so the choice is reproducible.
 *
 * Nothing here allocates but ptc_budget_choose's one ranking array; no global state.
 */
#ifndef PTC_BUDGET_H
#define PTC_BUDGET_H

#include <stddef.h>
#include <stdint.h>

/* per function, in */
#define PTC_BUDGET_F_CANDIDATE 0x1u /* passes --only/--skip: may be traced (else never) */
/* per function, out */
#define PTC_BUDGET_F_TRACED 0x2u    /* chosen: trace it; a candidate not chosen is counted */

/* A trace set that record --overhead chose (docs/runtime.md, the trace set file) carries
 * two comment lines the runtime reads for its BUDGET chunk: who chose, and what */
#define PTC_TRACE_SET_WRITTEN_BY "# written by "
#define PTC_TRACE_SET_BUDGET "# budget overhead "

struct ptc_budget_func {
    uint64_t calls;           /* calls over the span the model's budget is for */
    uint32_t events_per_call; /* 2 (entry and exit), 1 (a leaf whose exit stays unarmed) */
    uint32_t flags;           /* PTC_BUDGET_F_* */
};

/* All three in one unit (ns of CPU time, or bytes), over the span the calls were counted
 * over: budget = fraction * span's CPU ns, or rate * span's seconds. */
struct ptc_budget_model {
    double per_event; /* one traced event (timed, untimed, ticker clock; or PT bytes per hit) */
    double per_count; /* one counted call (0 when untraced functions are not counted) */
    double budget;    /* what the chosen set may cost, counting included */
};

enum ptc_budget_outcome {
    PTC_BUDGET_OK = 0,             /* the chosen set's cost is within the budget */
    PTC_BUDGET_ALL = 1,            /* every candidate fits: all are traced */
    PTC_BUDGET_BELOW_COUNTING = 2, /* counting the candidates alone exceeds the budget: none
                                      is traced, all counted (the cheapest exact choice) */
};

struct ptc_budget_result {
    enum ptc_budget_outcome outcome;
    size_t candidates;      /* functions with PTC_BUDGET_F_CANDIDATE */
    size_t traced;          /* of them, chosen */
    uint64_t calls_total;   /* calls of the candidates */
    uint64_t calls_traced;  /* calls of the chosen */
    double cost_counting;   /* what counting every candidate costs (the floor) */
    double cost_all;        /* what tracing every candidate would cost */
    double cost_chosen;     /* what the chosen set costs, its counting included */
};

/* Sets PTC_BUDGET_F_TRACED on the chosen functions of f[0..n) (and clears it on the others)
 * and fills r. 0, or -1 with errno ENOMEM (nothing chosen) or EINVAL (a negative or NaN
 * model figure, or a NULL argument with n > 0). */
int ptc_budget_choose(const struct ptc_budget_model *m, struct ptc_budget_func *f, size_t n,
                      struct ptc_budget_result *r);

#endif
