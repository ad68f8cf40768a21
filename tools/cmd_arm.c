/* ptcall arm [--off] PID: arms (or disarms) the gated call sites of a running process, so
 * that an Intel PT recorder attached to it -- `perf record -e intel_pt//u --filter ... -p PID`
 * or `ptcall record --pid PID` (which arms by itself) -- sees the stubs run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "options.h"
#include "ptc_record_options.h"

static void warn_arm(void *ctx, const char *msg)
{
    (void)ctx;
    fprintf(stderr, "ptcall arm: warning: %s\n", msg);
}

/* Exit status: 0 when every gated unit found is in the wanted state; 1 on a failure (said on
 * stderr: no such process, permission denied, exited meanwhile, ...), when there is nothing
 * to arm, or when an object was left alone because its file is not the mapped one. */
static int run_arm(const struct cli_values *v)
{
    int on = !v->arm.off, pid = 0;
    if (!v->npos)
        return cli_usage_error(CMD_ARM, "no process id given");
    if (v->npos > 1)
        return cli_usage_error(CMD_ARM, "unexpected argument '%s'", v->pos[1]);
    char *end;
    long n = strtol(v->pos[0], &end, 10);
    if (*end || n <= 0 || n > 0x3fffffff)
        return cli_usage_error(CMD_ARM, "bad pid '%s'", v->pos[0]);
    pid = (int)n;
    if (!arm_process_ex) {
        fprintf(stderr, "ptcall arm: this ptcall was built without the Intel PT recorder (libelf)\n");
        return 1;
    }
    char why[1024];
    struct arm_result res;
    if (arm_process_ex(pid, on, &res, warn_arm, NULL, why, sizeof(why)) < 0) {
        fprintf(stderr, "ptcall arm: %s\n", why);
        return 1;
    }
    /* An object left alone (its file is not the one mapped) may have held instrumented code:
     * the status says the process is not wholly armed, after the warnings said why. */
    if (!res.gated) {
        if (res.skipped)
            fprintf(stderr, "ptcall arm: process %d: nothing %s; %d object%s left alone (above)\n",
                    pid, on ? "armed" : "disarmed", res.skipped, res.skipped > 1 ? "s" : "");
        else
            fprintf(stderr, "ptcall arm: process %d has no gated ptcall-instrumented code (built "
                            "with ptcall-cc? -fptcall-ungated code needs no arming)\n", pid);
        return 1;
    }
    fprintf(stderr, "ptcall arm: process %d: %d of %d units %s", pid, res.changed, res.gated,
            on ? "armed (the others were already armed)" : "disarmed (the others were not armed)");
    if (res.skipped)
        fprintf(stderr, "; %d object%s left alone (above)", res.skipped,
                res.skipped > 1 ? "s" : "");
    fputc('\n', stderr);
    return res.skipped ? 1 : 0;
}

int cmd_arm(int argc, char **argv)
{
    struct cli_values v;
    int r = cli_parse(CMD_ARM, argc, argv, &v, 0);
    if (r != CLI_GO)
        return r;
    r = run_arm(&v);
    cli_values_free(&v);
    return r;
}
