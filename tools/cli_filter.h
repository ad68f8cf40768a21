/* The filters shared by export, calls, report and graph (--pid, --tid, --function,
 * --exclude, --max-depth, --time, --min-duration): their values (parsed by options.c) and
 * the checks made once the trace is decoded. */
#ifndef PTCALL_CLI_FILTER_H
#define PTCALL_CLI_FILTER_H

#include "cli_common.h"
#include "output.h"

#define CLI_FILTER_MAX_GLOBS 64

struct cli_filter {
    struct ptc_out_filter f;    /* what the output driver applies; f.funcs and f.excludes
                                   point into the lists below */
    struct cli_list funcs;      /* --function GLOB, in order */
    struct cli_list excludes;   /* --exclude GLOB */
    const char *window_text;    /* --time as given, for messages */
};

/* Whether any filter is set. */
int cli_filter_any(const struct cli_filter *cf);
/* After decoding: whether filters that need times were given for an untimed trace. Prints
 * what is wrong and returns 1; 0 when all is well. */
int cli_filter_check(const struct cli_filter *cf, const char *cmd, const struct ptc_session *s,
                     int timed);
/* Says (on stderr) why nothing was shown: globs that match no function, a window outside
 * the trace's time range (last = the last event's time). */
void cli_filter_explain_empty(const struct cli_filter *cf, const char *cmd,
                              const struct ptc_session *s, uint64_t last, int ns);

#endif
