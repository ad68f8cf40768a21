/* The calibration program of `ptcall calibrate` (pt_costs.c): built at build time with the
 * project's pass (ptcall-cc, without linking libptcall: the calibration preloads it), it
 * calls one tiny function CALLS times and prints the process's CPU time over that loop, so
 * that a plain run and a traced run differ by what the tracing cost. The drain thread's CPU
 * time during the loop is in the figure, as it is in the budget of a real program.
 * Usage: ptcall-calib [CALLS] (default 1000000). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) void ptcall_calib_leaf(unsigned long x) { sink += x; }

__attribute__((noinline)) static void calib_loop(unsigned long n)
{
    for (unsigned long i = 0; i < n; i++)
        ptcall_calib_leaf(i);
}

static unsigned long long cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

int main(int argc, char **argv)
{
    unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000ul;
    unsigned long long a = cpu_ns();
    calib_loop(n);
    unsigned long long b = cpu_ns();
    printf("ptcall-calib cpu_ns=%llu calls=%lu\n", b - a, n);
    return 0;
}
