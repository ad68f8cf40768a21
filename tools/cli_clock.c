/* Times of a trace recorded with the ticker clock (issue 28, docs/runtime.md *The ticker
 * clock*): each event's time is the clock word the runtime's ticker thread last stored, so an
 * interval is known to one period, and one shorter than a period may read 0. Such a time is
 * printed as "< PERIOD", never as an exact figure. */
#include <stdio.h>

#include "cli_common.h"
#include "ptc_clock.h"

void cli_fmt_time_res(char *buf, size_t n, uint64_t v, int ns, uint32_t resolution_ns)
{
    if (ns && resolution_ns && v < resolution_ns) {
        char p[32];
        snprintf(buf, n, "< %s", ptc_clock_period_text(resolution_ns, p, sizeof(p)));
        return;
    }
    cli_fmt_time(buf, n, v, ns);
}

void cli_print_resolution(FILE *f, const char *prefix, uint32_t resolution_ns)
{
    char p[32];
    fprintf(f,
            "%stimes to %s: ticker clock (each event carries the clock a runtime thread "
            "advanced every %s; a time under %s is shown as \"< %s\")\n",
            prefix, ptc_clock_period_text(resolution_ns, p, sizeof(p)), p, p, p);
}

void cli_print_resolution_raw(FILE *f, const char *prefix, uint32_t resolution_ns)
{
    char p[32];
    fprintf(f,
            "%stimes to %s: ticker clock (each event carries the clock a runtime thread "
            "advanced every %s): the figures are known to one period, and a duration or self "
            "time under %s may read 0\n",
            prefix, ptc_clock_period_text(resolution_ns, p, sizeof(p)), p, p);
}
