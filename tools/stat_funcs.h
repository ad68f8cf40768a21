/* `ptcall stat`'s bytes per function: what each function's stub hits took in the trace. */
#ifndef PTCALL_STAT_FUNCS_H
#define PTCALL_STAT_FUNCS_H

#include <stdio.h>

/* Decodes path once more and prints the top functions by the trace bytes their hits took
 * (soft: their event records; Intel PT: the stream bytes from the previous hit of the same
 * stream to each of theirs). 0, or 1 after saying what went wrong. */
int stat_bytes_per_function(const char *path, unsigned top, FILE *out);

#endif
