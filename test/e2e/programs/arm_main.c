/* Arm-state probe: calls into a second unit and a linked shared library, then waits for a
 * line on stdin so that arm_test.py can read the units' slots from /proc/PID/mem. */
#include <stdio.h>
#include "e2e.h"
int arm_unit2(int x);
int arm_lib(int x);
NOINLINE int arm_main_work(int x) { return arm_unit2(x) + arm_lib(x); }
int main(void)
{
    int r = arm_main_work(2);
    printf("ready %d\n", r);
    fflush(stdout);
    char line[16];
    if (!fgets(line, sizeof line, stdin))
        return 1;
    printf("done %d\n", arm_main_work(3));
    return 0;
}
