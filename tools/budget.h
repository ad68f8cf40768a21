/* `ptcall calibrate` and `ptcall record --overhead` (docs/usage.md, Tracing within a
 * budget): the tools' side of the measured cost model (runtime/pt/ptc_costs.h) and of the
 * choice from a previous run's counts (common/ptc_budget.h). */
#ifndef PTCALL_BUDGET_H
#define PTCALL_BUDGET_H

#include <stddef.h>

#include "ptc_costs.h"

struct cli_values;
struct record_options;

/* The costs for the libptcall that record preloads: from the cache, or measured (measure
 * set: always) and cached. *measured says which. 0, or -1 after printing an error. Notices
 * (a cache that cannot be written) are printed unless quiet. */
int budget_costs_get(int measure, int quiet, struct ptc_costs *c, int *measured);

/* record --overhead: checks the budget's options against the others (one line each on a
 * conflict, return 2: a usage error; 1: an error), sets PTCALL_OVERHEAD, PTCALL_PILOT_MS,
 * PTCALL_COSTS or PTCALL_TRACE_SET for the command and says what was chosen. exe is the
 * command's executable (--from-counts checks its build). 0 to go on (also when there is no
 * budget). */
int record_budget_prepare(const struct cli_values *v, const struct record_options *o,
                          const char *exe, const char *trace_path);

/* After the run: what the runtime said about the budget (a pilot's choice, a program that
 * ended before its pilot did, each governor's demotion), at the end. */
void record_budget_finish(const struct cli_values *v, const struct record_options *o,
                          const char *trace_path);

#endif
