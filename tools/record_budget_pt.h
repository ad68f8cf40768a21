/* `ptcall record --budget RATE[,AUX]` (Intel PT): the choice `ptcall bandwidth TRACE
 * --budget` makes, from a previous run's trace, as a trace set the runtime arms. */
#ifndef PTCALL_RECORD_BUDGET_PT_H
#define PTCALL_RECORD_BUDGET_PT_H

#include <stdio.h>

#include "options.h"
#include "ptc_select.h"

/* Refuses --budget where it cannot work: without Intel PT on this machine (with the
 * bandwidth command that shows the choice instead), or with the software backend. 0 when
 * --budget is not given or can go on, else 1 after one line on stderr. */
int record_budget_check(const struct cli_values *v);

/* Chooses, from the soft trace counts_path (a previous run of the same build), the functions
 * to trace within v->budget under the record's timing (v->timing; -1: mtc), the candidates
 * being sel's; writes them to out as a PTCALL_TRACE_SET file ("ptcall-trace-set 1", then
 * one function a line: its linkage name, else its display name). 0, or 1 after saying what
 * went wrong. */
int record_budget_choose(const struct cli_values *v, const char *counts_path,
                         const struct ptc_select *sel, FILE *out);

#endif
