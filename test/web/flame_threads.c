/* Two threads with names of their own for the flame graph's browser test (flame_test.py):
 * "crunch" calls crunch_leaf ROUNDS times under crunch_outer; the main thread calls
 * main_leaf (through main_outer) a fixed number of times. ROUNDS (argv[1]) changes
 * crunch_leaf's time only, for the differential flame graph. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;

/* inlined: each leaf does its own work (a call of it would be a tail call: the leaf's
 * frame would end before it) */
static inline __attribute__((always_inline)) void spin(unsigned long n)
{
    for (unsigned long i = 0; i < n; i++)
        sink += i * 2654435761u;
}

__attribute__((noinline)) void crunch_leaf(void) { spin(20000); }

__attribute__((noinline)) void crunch_outer(int rounds)
{
    for (int i = 0; i < rounds; i++)
        crunch_leaf();
}

__attribute__((noinline)) void main_leaf(void) { spin(5000); }

__attribute__((noinline)) void main_outer(void)
{
    for (int i = 0; i < 40; i++)
        main_leaf();
}

static void *worker(void *arg)
{
    pthread_setname_np(pthread_self(), "crunch");
    crunch_outer(*(int *)arg);
    return NULL;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 100;
    pthread_t t;
    if (pthread_create(&t, NULL, worker, &rounds))
        return 1;
    main_outer();
    pthread_join(t, NULL);
    printf("%lu\n", sink);
    return 0;
}
