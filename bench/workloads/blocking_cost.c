/* bench/blocking_cost.py's workload: the cost of one call into an interposed blocking
 * function of the C library (docs/runtime.md, *Blocking calls*). Prints ns per call of
 *   poll0     poll(NULL, 0, 0): a system call that returns at once (recorded: an entry and an
 *             exit record per call)
 *   mutex     pthread_mutex_lock + unlock of a free mutex (the wrapper's trylock path: no
 *             record, no system call)
 *   sem       sem_post + sem_wait of a semaphore that is never 0: sem_wait returns without a
 *             system call, so its entry and exit records are most of what a recorded call adds
 * each the best of 5 timed loops of N calls (argv[1], default 200000; mutex, sem 10 x N). */
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

__attribute__((noinline)) double loop_poll(long n)
{
    double t0 = now_ns();
    for (long i = 0; i < n; i++)
        if (poll(NULL, 0, 0) != 0)
            abort();
    return (now_ns() - t0) / (double)n;
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) double loop_mutex(long n)
{
    double t0 = now_ns();
    for (long i = 0; i < n; i++) {
        pthread_mutex_lock(&mu);
        pthread_mutex_unlock(&mu);
    }
    return (now_ns() - t0) / (double)n;
}

static sem_t sem;

__attribute__((noinline)) double loop_sem(long n)
{
    double t0 = now_ns();
    for (long i = 0; i < n; i++) {
        sem_post(&sem);
        if (sem_wait(&sem) != 0)
            abort();
    }
    return (now_ns() - t0) / (double)n;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 200000;
    double bp = 1e18, bm = 1e18, bs = 1e18;
    if (sem_init(&sem, 0, 1) != 0)
        abort();
    for (int r = 0; r < 5; r++) {
        double p = loop_poll(n), m = loop_mutex(10 * n), s = loop_sem(10 * n);
        bp = p < bp ? p : bp;
        bm = m < bm ? m : bm;
        bs = s < bs ? s : bs;
    }
    printf("poll0 %.1f\nmutex %.2f\nsem %.2f\n", bp, bm, bs);
    return 0;
}
