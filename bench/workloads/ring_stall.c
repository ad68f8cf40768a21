/* The stall a snapshot of the rings costs the program (bench/ring.py, section stall).
 * usage: ring_stall THREADS CALLS_PER_THREAD
 * THREADS threads (the main one among them) each make CALLS_PER_THREAD calls of a tiny function,
 * enough to fill their rings, then wait at a barrier; with every thread alive and idle, the main
 * thread takes one snapshot and prints how long the call took (CLOCK_MONOTONIC around it), then
 * lets the threads finish. Built twice:
 *   with ptcall-cc: ptcall_snapshot(why) of <ptcall/ptcall.h>, run with PTCALL_RING=SIZE and
 *     PTCALL_SNAPSHOT_DIR (the snapshot is written to a file there, inside the call);
 *   with -DUSE_FUNTRACE and funtrace's runtime: funtrace_pause_and_get_snapshot() (copies the
 *     rings to memory; writing them is a separate call) and, in a second phase,
 *     funtrace_pause_and_write_current_snapshot() (straight to funtrace.raw, as SIGTRAP does),
 *     run with FUNTRACE_LOG_BUF_SIZE=log2(SIZE).
 * Output: one line per measured call, "NAME_ns N". */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#ifdef USE_FUNTRACE
#include "funtrace.h"
#else
#include <ptcall/ptcall.h>
#endif

#define NOINLINE __attribute__((noinline))

static volatile unsigned long sink;
static unsigned long calls_per_thread;
static pthread_barrier_t filled, done;

NOINLINE void tiny(unsigned long x) { sink += x; }

NOINLINE void fill(void)
{
    for (unsigned long i = 0; i < calls_per_thread; i++)
        tiny(i);
}

static void *worker(void *arg)
{
    (void)arg;
    fill();
    pthread_barrier_wait(&filled);
    pthread_barrier_wait(&done);
    return NULL;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void take_snapshots(void)
{
    uint64_t t0 = now_ns();
#ifdef USE_FUNTRACE
    struct funtrace_snapshot *s = funtrace_pause_and_get_snapshot();
    uint64_t t1 = now_ns();
    funtrace_free_snapshot(s);
    printf("get_ns %llu\n", (unsigned long long)(t1 - t0));
    t0 = now_ns();
    funtrace_pause_and_write_current_snapshot();
    t1 = now_ns();
    printf("write_ns %llu\n", (unsigned long long)(t1 - t0));
#else
    (void)ptcall_snapshot("bench/ring.py stall");
    uint64_t t1 = now_ns();
    printf("snapshot_ns %llu\n", (unsigned long long)(t1 - t0));
#endif
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: ring_stall THREADS CALLS_PER_THREAD\n");
        return 2;
    }
    unsigned threads = (unsigned)strtoul(argv[1], NULL, 10);
    calls_per_thread = strtoul(argv[2], NULL, 10);
    if (threads < 1 || threads > 1024) {
        fprintf(stderr, "ring_stall: THREADS must be 1 to 1024\n");
        return 2;
    }
    pthread_t *t = calloc(threads, sizeof *t);
    if (!t || pthread_barrier_init(&filled, NULL, threads) || pthread_barrier_init(&done, NULL, threads)) {
        fprintf(stderr, "ring_stall: out of memory\n");
        return 1;
    }
    for (unsigned i = 1; i < threads; i++)
        if (pthread_create(&t[i], NULL, worker, NULL)) {
            fprintf(stderr, "ring_stall: pthread_create failed\n");
            return 1;
        }
#ifdef USE_FUNTRACE
    /* funtrace measures the TSC's rate when its state is first used (up to 100 ms, or a popen of
     * dmesg): off the clock, as in a program that has run a while */
    (void)funtrace_ticks_per_second();
#endif
    fill();
    pthread_barrier_wait(&filled);
    take_snapshots();
    pthread_barrier_wait(&done);
    for (unsigned i = 1; i < threads; i++)
        pthread_join(t[i], NULL);
    free(t);
    return 0;
}
