/* `ptcall record --clock tsc|ticker[:PERIOD]` (issue 28, record_clock.c). */
#ifndef PTC_RECORD_CLOCK_H
#define PTC_RECORD_CLOCK_H

#include "ptc_record_options.h"

/* Parses --clock into o->clock_ns and refuses what cannot honour it (--no-timestamps,
 * --counts, --pid, --backend pt). Call after o's other fields are set. 0, or the exit status
 * of a usage error after its line. */
int record_clock_option(const char *text, struct record_options *o);

/* PTCALL_CLOCK for the command's runtime. */
void set_clock_env(const struct record_options *o);

#endif
