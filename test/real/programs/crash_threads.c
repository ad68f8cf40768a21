/* The crash snapshot's test program (test/real/redis_e2e.py, part crash): three worker threads
 * each call their own leaf function in a loop; once every worker has made calls, the main thread
 * calls crash_here(), which stores through a bad pointer (SIGSEGV at address 0x10, on purpose).
 * Each thread prints "thread NAME TID" first, so the test knows whose calls are whose. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static volatile unsigned long sink;
static atomic_int started;

NOINLINE void leaf_a(unsigned long x) { sink += x; }
NOINLINE void leaf_b(unsigned long x) { sink += 2 * x; }
NOINLINE void leaf_c(unsigned long x) { sink += 3 * x; }

static void announce(const char *name)
{
    printf("thread %s %d\n", name, (int)gettid());
    fflush(stdout);
}

NOINLINE void spin(const char *name, void (*leaf)(unsigned long))
{
    announce(name);
    for (unsigned long i = 0;; i++) {
        leaf(i);
        if (i == 1000)
            atomic_fetch_add(&started, 1);
        if (i % 4096 == 0)
            usleep(100);
    }
}

static void *worker_a(void *arg) { (void)arg; spin("a", leaf_a); return NULL; }
static void *worker_b(void *arg) { (void)arg; spin("b", leaf_b); return NULL; }
static void *worker_c(void *arg) { (void)arg; spin("c", leaf_c); return NULL; }

NOINLINE void crash_here(volatile int *p)
{
    *p = 1; /* p is 0x10: SIGSEGV */
}

int main(void)
{
    pthread_t t[3];
    void *(*fn[3])(void *) = {worker_a, worker_b, worker_c};
    announce("main");
    for (int i = 0; i < 3; i++)
        if (pthread_create(&t[i], NULL, fn[i], NULL)) {
            fprintf(stderr, "crash_threads: pthread_create failed\n");
            return 1;
        }
    while (atomic_load(&started) < 3)
        usleep(1000);
    crash_here((volatile int *)0x10);
    return 0;
}
