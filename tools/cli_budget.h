/* What the analysis commands say about a trace recorded within a budget (issue 28; record
 * --overhead / --budget, MODULE_COUNTED and BUDGET chunks): each function was traced, counted
 * (exact calls, no times) or neither, and the budget, its outcome and note. Traces without
 * counted functions or a budget print nothing extra. docs/usage.md, "Traces recorded within a
 * budget". */
#ifndef PTCALL_CLI_BUDGET_H
#define PTCALL_CLI_BUDGET_H

#include <stdio.h>

#include "ptcall/decode.h"

/* Whether s is such a trace (ptc_func_states.mixed). */
int cli_budget_mixed(const struct ptc_session *s);
/* Its lines, each starting with prefix: the budget (one line per BUDGET chunk, its note on
 * the next), then "functions: N traced, C counted ..., calls: T of A traced (P %)". Returns
 * the lines' count (0 for other traces). */
int cli_print_budget(FILE *f, const char *prefix, const struct ptc_session *s);
/* The same in one line without the notes (for comments in exports): "" for other traces.
 * Writes at most n bytes (NUL included) into buf. */
void cli_budget_summary(char *buf, size_t n, const struct ptc_session *s);
/* The JSON members
 *   ,\n<indent>"budget": {...} | null,\n<indent>"function_states": {...} | null
 * (docs/schema/report.schema.json); always written, null for other traces. */
void cli_json_budget(FILE *f, const struct ptc_session *s, const char *indent);
/* "traced", "counted", "neither" (JSON and CSV). */
const char *cli_state_word(int state);

#endif
