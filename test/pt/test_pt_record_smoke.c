/* pt-record-smoke: record_pt() against a fixture sysfs tree on a machine without Intel PT:
 * discovery, attribute building, ELF/filter setup and the fork/pipe dance run for real;
 * perf_event_open then fails (no such PMU type here) and record_pt must say so in one line,
 * release the held child without running the command, and return -1 - no hang, no zombie. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptc_pt_rec.h"

int main(int argc, char **argv)
{
    if (argc < 4)
        return 2;
    struct stat st;
    if (!stat("/sys/bus/event_source/devices/intel_pt", &st)) {
        printf("SKIP: this machine has Intel PT; the smoke test is for machines without it\n");
        return 77;
    }
    setenv("PTCALL_PT_SYSFS", argv[1], 1);
    char marker[512];
    snprintf(marker, sizeof(marker), "%s.ran", argv[3]);
    unlink(marker);
    /* the command would create the marker if it ever ran */
    char *args[] = {"/bin/sh", "-c", NULL, NULL};
    char script[600];
    snprintf(script, sizeof(script), "touch %s", marker);
    args[2] = script;
    struct record_options o;
    memset(&o, 0, sizeof(o));
    o.output = argv[3];
    o.timing = TIMING_MTC;
    o.argv = args;
    const char *mods[1] = {argv[2]};
    o.modules = mods;
    o.num_modules = 1;
    int ws = 0;
    int r = record_pt(&o, &ws);
    int zombie = waitpid(-1, NULL, WNOHANG) > 0;
    int ran = !access(marker, F_OK);
    printf("record_pt returned %d; command ran: %s; unreaped child: %s\n", r, ran ? "yes" : "no",
           zombie ? "yes" : "no");
    int ok = r == -1 && !ran && !zombie;
    printf("%s\n", ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}
