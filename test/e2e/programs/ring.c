/* The flight recorder's test program (test/e2e/ring_test.py): threads whose last calls are
 * known, then a snapshot, a crash or a slow call.
 *   ring snap          3 workers + main; main calls ptcall_snapshot while the workers wait
 *   ring segv|abort    3 workers wait after their last calls; main crashes in crash_here
 *   ring handler       a SIGSEGV handler of the program recovers (siglongjmp), then a snapshot
 *   ring trigger N     N calls of handle(); call N/2 sleeps 300 ms (the slow request)
 *   ring loop N        N calls of a tiny function (per-event cost)
 *   ring big N         N calls of a tiny function, then one snapshot, timed (its stall)
 *   ring busy          3 workers call step() without pause while main takes a snapshot */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ptcall/ptcall.h"

#define WORKERS 3

static pthread_barrier_t ready, done;
static volatile int sink;

__attribute__((noinline)) static void tiny(int i) { sink += i; }
__attribute__((noinline)) static void step(int i) { tiny(i); }
__attribute__((noinline)) static void last_call_0(void) { sink += 100; }
__attribute__((noinline)) static void last_call_1(void) { sink += 101; }
__attribute__((noinline)) static void last_call_2(void) { sink += 102; }
__attribute__((noinline)) static void main_last(void) { sink += 1; }

static volatile int busy_stop;

static void *busy_worker(void *arg)
{
    (void)arg;
    for (int i = 0; !busy_stop; i++)
        step(i);
    return NULL;
}

static void *worker(void *arg)
{
    int k = (int)(long)arg;
    for (int i = 0; i < 20000; i++)
        step(i);
    if (k == 0)
        last_call_0();
    else if (k == 1)
        last_call_1();
    else
        last_call_2();
    pthread_barrier_wait(&ready);
    pthread_barrier_wait(&done);
    return NULL;
}

__attribute__((noinline)) static void crash_here(const char *how)
{
    if (!strcmp(how, "abort"))
        abort();
    volatile int *p = (volatile int *)(long)(sink * 0); /* NULL */
    *p = 1;
}

__attribute__((noinline)) static void handle(int i, int slow_at)
{
    if (i == slow_at) {
        struct timespec d = {0, 300 * 1000 * 1000};
        nanosleep(&d, NULL);
    }
    tiny(i);
}

static sigjmp_buf recover;
static void on_segv(int sig)
{
    (void)sig;
    siglongjmp(recover, 1);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* This thread's CPU time: what a snapshot costs it, whatever else the machine runs. */
static double thread_cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "snap";
    long n = argc > 2 ? atol(argv[2]) : 10000;
    if (!strcmp(mode, "trigger")) {
        for (long i = 0; i < n; i++)
            handle((int)i, (int)(n / 2));
        printf("trigger: %ld calls\n", n);
        return 0;
    }
    if (!strcmp(mode, "handler")) {
        signal(SIGSEGV, on_segv);
        if (!sigsetjmp(recover, 1))
            crash_here("segv");
        main_last();
        printf("recovered\n");
        ptcall_snapshot("after recovery");
        return 0;
    }
    if (!strcmp(mode, "loop") || !strcmp(mode, "big")) {
        double t0 = now_s();
        for (long i = 0; i < n; i++)
            tiny((int)i);
        double t1 = now_s();
        printf("loop: %ld calls in %.3f s: %.2f ns per call\n", n, t1 - t0, (t1 - t0) * 1e9 / n);
        if (!strcmp(mode, "big")) {
            t0 = now_s();
            double c0 = thread_cpu_s();
            ptcall_snapshot("big");
            double c1 = thread_cpu_s();
            printf("snapshot: %.3f ms, cpu %.3f ms\n", (now_s() - t0) * 1e3, (c1 - c0) * 1e3);
        }
        return 0;
    }
    if (!strcmp(mode, "busy")) {
        pthread_t b[WORKERS];
        for (long k = 0; k < WORKERS; k++)
            pthread_create(&b[k], NULL, busy_worker, (void *)k);
        struct timespec d = {0, 100 * 1000 * 1000};
        nanosleep(&d, NULL);
        double t0 = now_s();
        ptcall_snapshot("busy");
        printf("snapshot: %.3f ms\n", (now_s() - t0) * 1e3);
        nanosleep(&d, NULL);
        busy_stop = 1;
        for (int k = 0; k < WORKERS; k++)
            pthread_join(b[k], NULL);
        return 0;
    }
    pthread_barrier_init(&ready, NULL, WORKERS + 1);
    pthread_barrier_init(&done, NULL, WORKERS + 1);
    pthread_t t[WORKERS];
    for (long k = 0; k < WORKERS; k++)
        pthread_create(&t[k], NULL, worker, (void *)k);
    pthread_barrier_wait(&ready);
    for (int i = 0; i < 1000; i++)
        step(i);
    main_last();
    if (!strcmp(mode, "snap")) {
        ptcall_snapshot("from main");
    } else {
        fflush(stdout);
        crash_here(mode);
    }
    pthread_barrier_wait(&done);
    for (int k = 0; k < WORKERS; k++)
        pthread_join(t[k], NULL);
    printf("snap: done\n");
    return 0;
}
