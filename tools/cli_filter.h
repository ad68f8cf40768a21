/* The filters shared by export, calls, report and graph (--pid, --tid, --function,
 * --exclude, --max-depth, --time, --min-duration), parsed in one place. */
#ifndef PTCALL_CLI_FILTER_H
#define PTCALL_CLI_FILTER_H

#include "output.h"

#define CLI_FILTER_MAX_GLOBS 64

struct cli_filter {
    struct ptc_out_filter f;
    const char *funcs[CLI_FILTER_MAX_GLOBS];
    const char *excludes[CLI_FILTER_MAX_GLOBS];
    const char *window_text;    /* --time as given, for messages */
};

/* The usage lines of the filters. */
extern const char CLI_FILTER_USAGE[];

void cli_filter_init(struct cli_filter *cf);
/* Matches one filter option at argv[*i]: returns 1 when taken, 0 when argv[*i] is another
 * option, or 2 after printing a usage error. */
int cli_filter_take(struct cli_filter *cf, int argc, char **argv, int *i, const char *cmd,
                    const char *usage);
/* Parses a duration: a number with an optional unit ns, us, ms or s (default ns). */
int cli_parse_duration(const char *s, uint64_t *ns);
/* After decoding: whether filters that need times were given for an untimed trace, and
 * whether each --function glob names some function of the session. Prints what is wrong
 * and returns 1; 0 when all is well. */
int cli_filter_check(const struct cli_filter *cf, const char *cmd, const struct ptc_session *s,
                     int timed);
/* Says (on stderr) why nothing was shown: globs that match no function, a window outside
 * the trace's time range (last = the last event's time). */
void cli_filter_explain_empty(const struct cli_filter *cf, const char *cmd,
                              const struct ptc_session *s, uint64_t last, int ns);

#endif
