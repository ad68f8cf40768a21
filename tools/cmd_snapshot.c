/* ptcall snapshot PID [-o FILE] [--why TEXT]: the flight-recorder rings of a running process,
 * asked for over its attach control channel (runtime/pt/attach_soft.c does the work;
 * docs/runtime.md, *Attaching to a running process*). */
#include <stdio.h>
#include <stdlib.h>

#include "commands.h"
#include "options.h"
#include "ptc_record_options.h"

static int run_snapshot(const struct cli_values *v)
{
    if (!v->npos)
        return cli_usage_error(CMD_SNAPSHOT, "no process id given");
    if (v->npos > 1)
        return cli_usage_error(CMD_SNAPSHOT, "unexpected argument '%s'", v->pos[1]);
    char *end;
    long n = strtol(v->pos[0], &end, 10);
    if (*end || n <= 0 || n > 0x3fffffff)
        return cli_usage_error(CMD_SNAPSHOT, "bad pid '%s'", v->pos[0]);
    if (!snapshot_soft) {
        fprintf(stderr, "ptcall snapshot: this ptcall was built without the recorder library "
                        "(libelf)\n");
        return 1;
    }
    if (snapshot_soft((int)n, v->output, v->snapshot.why) < 0)
        return 1;
    if (!v->quiet)
        fprintf(stderr, "ptcall snapshot: process %ld: %s\n", n, v->output);
    return 0;
}

int cmd_snapshot(int argc, char **argv)
{
    struct cli_values v;
    int r = cli_parse(CMD_SNAPSHOT, argc, argv, &v, 0);
    if (r != CLI_GO)
        return r;
    r = run_snapshot(&v);
    cli_values_free(&v);
    return r;
}
