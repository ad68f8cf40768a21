/* runtime-bad-map's program (badmap_test.py): calls into itself and into libbadmap.so, whose
 * ptcall_map sections the test damages, and prints what it computed, so that a run whose
 * runtime wrote or patched memory it should not have shows up as a crash or a wrong sum.
 * With an argument it first says "ready" and waits for a line on stdin (ptcall arm PID). */
#include <stdio.h>

int lib_entry(int n);

__attribute__((noinline)) static int main_work(int x) { return x ^ 5; }

int main(int argc, char **argv)
{
    if (argc > 1) { /* "wait": until a line on stdin, for ptcall arm PID */
        char line[16];
        printf("ready\n");
        fflush(stdout);
        if (!fgets(line, sizeof(line), stdin))
            return 2;
    }
    int s = 0;
    for (int i = 0; i < 100; i++)
        s += main_work(i);
    printf("ok %d %d\n", s, lib_entry(50));
    return 0;
}
