/* ptcall arm [--off] PID: arms (or disarms) the gated call sites of a running process, so
 * that an Intel PT recorder attached to it -- `perf record -e intel_pt//u --filter ... -p PID`
 * or `ptcall record --pid PID` (which arms by itself) -- sees the stubs run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "ptc_record_options.h"

static void arm_usage(FILE *out)
{
    fprintf(out, "usage: ptcall arm [--off] PID\n\n"
                 "Arms the call sites of the ptcall-instrumented code in running process PID so\n"
                 "that its stubs run (for an Intel PT recorder attached to it); --off disarms\n"
                 "them again. A process started with PTCALL_ARM=1 is armed from the start.\n");
}

int cmd_arm(int argc, char **argv)
{
    int on = 1, pid = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            arm_usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--off")) {
            on = 0;
        } else if (argv[i][0] == '-' || pid) {
            fprintf(stderr, "ptcall arm: unexpected argument '%s'\n", argv[i]);
            arm_usage(stderr);
            return 2;
        } else {
            char *end;
            long v = strtol(argv[i], &end, 10);
            if (*end || v <= 0 || v > 0x3fffffff) {
                fprintf(stderr, "ptcall arm: bad pid '%s'\n", argv[i]);
                return 2;
            }
            pid = (int)v;
        }
    }
    if (!pid) {
        arm_usage(stderr);
        return 2;
    }
    if (!arm_process) {
        fprintf(stderr, "ptcall arm: this ptcall was built without the Intel PT recorder (libelf)\n");
        return 1;
    }
    char why[512];
    int changed = 0, gated = 0;
    if (arm_process(pid, on, &changed, &gated, why, sizeof(why)) < 0) {
        fprintf(stderr, "ptcall arm: %s\n", why);
        return 1;
    }
    if (!gated) {
        fprintf(stderr, "ptcall arm: process %d has no gated ptcall-instrumented code (built with "
                        "ptcall-cc? -fptcall-ungated code needs no arming)\n", pid);
        return 1;
    }
    fprintf(stderr, "ptcall arm: process %d: %d of %d units %s\n", pid, changed, gated,
            on ? "armed (the others were already armed)" : "disarmed (the others were not armed)");
    return 0;
}
