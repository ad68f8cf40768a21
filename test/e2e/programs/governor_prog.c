/* A budget's governor (governor_test.py): a program whose start is unlike the rest of its
 * run. For its first phase (argv[1] ms, longer than the pilot) it calls a heavy function,
 * calm(), and now and then a tiny one, burst(): the pilot sees burst() cheap and traces it.
 * Then, for argv[2] ms, it calls burst() millions of times, whose events then cost far more
 * than the budget. A second thread (argv[3] = 1) calls side_leaf() steadily throughout. The
 * program counts its own calls and prints them at the end: the trace's calls must equal
 * these, whatever the governor did, and the burst phase's rate, which tracing burst() slows
 * down: over the phase's wall time, and over the process's CPU time in its last third (after
 * a demotion, and not lowered by a loaded machine; run it without the second thread). argv[4] = N > 0: during the burst phase, every N ms a child is forked that calls
 * burst() CHILD_CALLS times and leaves with _exit (some fall in a demotion's grace). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHILD_CALLS 1000

static volatile long sink;
static long n_calm, n_burst, n_side;
static volatile int stop_side;

static long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* the process's CPU time, us (the tracer's threads included): a rate by it does not fall
 * when the machine is loaded */
static long cpu_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (long)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

static inline __attribute__((always_inline)) long work(long x, int n)
{
    for (int i = 0; i < n; i++) {
        x = x * 31 + i;
        __asm__ volatile("" : "+r"(x)); /* or the compiler folds the loop */
    }
    return x;
}

__attribute__((noinline)) long burst(long x) { return work(x, 40) ^ 3; }
__attribute__((noinline)) long calm(long x) { return work(x, 20000) + 1; }
__attribute__((noinline)) long side_leaf(long x) { return work(x, 4000) * 5; }

static void *side(void *arg)
{
    (void)arg;
    long s = 0;
    while (!stop_side) {
        s += side_leaf(n_side);
        n_side++;
    }
    sink = s;
    return NULL;
}

int main(int argc, char **argv)
{
    long calm_ms = argc > 1 ? atol(argv[1]) : 400, burst_ms = argc > 2 ? atol(argv[2]) : 1500;
    int threaded = argc > 3 && atoi(argv[3]);
    long fork_ms = argc > 4 ? atol(argv[4]) : 0, children = 0, next_fork = 0;
    pthread_t t;
    if (threaded && pthread_create(&t, NULL, side, NULL) != 0)
        return 1;
    long s = 0, t0 = now_ms();
    for (long i = 0; now_ms() - t0 < calm_ms; i++) {
        s += calm(i);
        n_calm++;
        if (i % 16 == 0) {
            s += burst(i);
            n_burst++;
        }
    }
    t0 = now_ms();
    long burst0 = n_burst, took, late_calls = -1, late_cpu = 0;
    for (long i = 0;; i++) {
        s += burst(i);
        n_burst++;
        if ((i & 4095) != 0)
            continue;
        if ((took = now_ms() - t0) >= burst_ms)
            break;
        if (late_calls < 0 && took >= burst_ms - burst_ms / 3) { /* the last third */
            late_calls = n_burst;
            late_cpu = cpu_us();
        }
        if (fork_ms > 0 && took >= next_fork) {
            next_fork = took + fork_ms;
            pid_t c = fork();
            if (c == 0) {
                long cs = 0;
                for (long k = 0; k < CHILD_CALLS; k++)
                    cs += burst(k);
                sink = cs;
                _exit(0);
            }
            children += c > 0;
            while (waitpid(-1, NULL, WNOHANG) > 0) /* reaped as they end */
                ;
        }
    }
    while (children && waitpid(-1, NULL, 0) > 0)
        ;
    if (threaded) {
        stop_side = 1;
        pthread_join(t, NULL);
    }
    sink += s;
    printf("calls calm %ld burst %ld side_leaf %ld\n", n_calm, n_burst, n_side);
    long late_took = late_calls >= 0 ? cpu_us() - late_cpu : 0;
    printf("burst phase %ld calls/ms\n", took ? (n_burst - burst0) / took : 0);
    printf("last third %ld calls/ms of CPU\n",
           late_took > 0 ? (n_burst - late_calls) * 1000 / late_took : 0);
    printf("children %ld calling burst %d times each\n", children, CHILD_CALLS);
    return 0;
}
