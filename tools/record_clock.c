/* `ptcall record --clock`: the runtime's ticker clock (docs/runtime.md, *The ticker clock*).
 * Only the software backend's timed events have a clock to choose. */
#include "record_clock.h"

#include <stdio.h>
#include <stdlib.h>

#include "options.h"
#include "ptc_clock.h"

int record_clock_option(const char *text, struct record_options *o)
{
    char err[200];
    o->clock_ns = 0;
    if (ptc_clock_parse(text, &o->clock_ns, err, sizeof(err)) < 0)
        return cli_usage_error(CMD_RECORD, "--clock: %s", err);
    if (!o->clock_ns)
        return 0;
    if (!o->timed)
        return cli_usage_error(CMD_RECORD, "--clock %s times events, and --no-timestamps "
                                           "records none: leave out one of them",
                               text);
    if (o->counts)
        return cli_usage_error(CMD_RECORD, "--clock %s times events, and --counts records "
                                           "counts only: leave out one of them",
                               text);
    if (o->attach_pid)
        return cli_usage_error(CMD_RECORD,
                               "--clock applies to a program ptcall starts: a running process "
                               "keeps the clock its runtime chose at its start (start it with "
                               "PTCALL_CLOCK=%s)",
                               text);
    if (o->backend == RECORD_PT)
        return cli_usage_error(CMD_RECORD, "--clock %s is the software backend's: leave out "
                                           "--backend pt",
                               text);
    o->backend = RECORD_SOFT; /* the ticker is the runtime's: Intel PT has its own timing */
    return 0;
}

void set_clock_env(const struct record_options *o)
{
    char buf[48];
    if (!o->clock_ns) {
        setenv("PTCALL_CLOCK", "tsc", 1);
        return;
    }
    snprintf(buf, sizeof(buf), "ticker:%uns", o->clock_ns);
    setenv("PTCALL_CLOCK", buf, 1);
}
