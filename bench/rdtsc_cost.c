/* What a timestamp costs on this machine: back-to-back rdtsc and clock_gettime, per call.
 * Build: cc -O2 bench/rdtsc_cost.c -o rdtsc_cost. The soft backend's timed mode pays one
 * rdtsc per event; uftrace pays a clock_gettime. */
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <x86intrin.h>

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(void)
{
    enum { N = 50000000, M = 10000000 };
    uint64_t sink = 0;
    double t0 = now_ns();
    for (int i = 0; i < N; i++)
        sink += __rdtsc();
    double t1 = now_ns();
    for (int i = 0; i < M; i++) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        sink += (uint64_t)t.tv_nsec;
    }
    double t2 = now_ns();
    printf("rdtsc %.2f ns, clock_gettime %.2f ns (%llu)\n", (t1 - t0) / N, (t2 - t1) / M,
           (unsigned long long)(sink & 1));
    return 0;
}
