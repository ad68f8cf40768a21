/* record --overhead (budget_test.py): functions called 1, 7, N/100, N/10 and N times, so that
 * a budget takes the rare ones and leaves the hot ones counted; prints the budget variables
 * ptcall record gave it. Usage: budget_prog [N] (default 1000000). */
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;

__attribute__((noinline)) void bp_hot(unsigned long x) { sink += x; }
__attribute__((noinline)) void bp_warm(unsigned long x) { sink += 2 * x; }
__attribute__((noinline)) void bp_cool(unsigned long x) { sink += 3 * x; }
__attribute__((noinline)) void bp_cold(unsigned long x) { sink += 5 * x; }
#ifdef BP_OTHER_BUILD
__attribute__((noinline)) void bp_other(unsigned long x) { sink += 7 * x; }
#endif

int main(int argc, char **argv)
{
    unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000ul;
    const char *vars[] = {"PTCALL_OVERHEAD", "PTCALL_PILOT_MS", "PTCALL_COSTS", "PTCALL_TRACE_SET",
                          "PTCALL_GOVERNOR_MS"};
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        const char *v = getenv(vars[i]);
        printf("ENV %s=%s\n", vars[i], v ? v : "(unset)");
    }
    for (unsigned long i = 0; i < n; i++)
        bp_hot(i);
    for (unsigned long i = 0; i < n / 10; i++)
        bp_warm(i);
    for (unsigned long i = 0; i < n / 100; i++)
        bp_cool(i);
    for (unsigned long i = 0; i < 7; i++)
        bp_cold(i);
#ifdef BP_OTHER_BUILD
    bp_other(1);
#endif
    return 0;
}
