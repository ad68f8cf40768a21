/* What the analysis commands say about a record-time selection (`ptcall record --only/--skip`,
 * MODULE_ARMED chunks): a function that was not armed was not traced, so its count of 0 calls
 * means "not known", never "not called". Traces without a selection print nothing extra. */
#ifndef PTCALL_CLI_SELECT_H
#define PTCALL_CLI_SELECT_H

#include <stdio.h>

#include "ptcall/decode.h"

/* When s records a selection: one line "<prefix>traced: N of M functions (SPEC); ..." and
 * 1; else nothing and 0. */
int cli_print_selection(FILE *f, const char *prefix, const struct ptc_session *s);
/* When s records a selection: the JSON members
 *   ,\n<indent>"selection": {"spec": ..., "traced": N, "functions": M},
 *   \n<indent>"not_traced": [names...]
 * (the names of the functions not traced, in id order); else nothing. */
void cli_json_selection(FILE *f, const struct ptc_session *s, const char *indent);

#endif
