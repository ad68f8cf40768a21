/* The call-heavy microbenchmark: recursive fib plus a loop calling a tiny function.
 * Usage: calls [FIB_N [LOOP_COUNT]] (defaults 30 and 20000000). About 1.35 M + 20 M calls
 * with the defaults, so per-call costs dominate everything else. */
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

NOINLINE unsigned long fib(unsigned n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

static volatile unsigned long sink;
NOINLINE void tiny(unsigned long x) { sink += x; }

NOINLINE void loop(unsigned long count)
{
    for (unsigned long i = 0; i < count; i++)
        tiny(i);
}

int main(int argc, char **argv)
{
    unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 30;
    unsigned long count = argc > 2 ? strtoul(argv[2], NULL, 10) : 20000000ul;
    unsigned long f = fib(n);
    loop(count);
    printf("fib(%u) = %lu, sink = %lu\n", n, f, sink);
    return 0;
}
