/* A small multi-threaded program whose threads have names (pthread_setname_np): the run
 * page's thread table is checked against `ptcall report --format json`'s threads
 * (test/web/tables_test.py). Thread k calls leaf() 1000 * (k + 1) times. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

#define NTHREADS 3

static volatile unsigned sink;

__attribute__((noinline)) static unsigned leaf(unsigned x)
{
    return x * 2654435761u;
}

__attribute__((noinline)) static void work(unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        sink += leaf(i);
}

static void *thread_main(void *arg)
{
    unsigned k = (unsigned)(unsigned long)arg;
    char name[16];
    snprintf(name, sizeof(name), "worker-%u", k);
    pthread_setname_np(pthread_self(), name);
    work(1000 * (k + 1));
    return NULL;
}

int main(void)
{
    pthread_t t[NTHREADS];
    for (unsigned k = 0; k < NTHREADS; k++)
        if (pthread_create(&t[k], NULL, thread_main, (void *)(unsigned long)k))
            return 1;
    for (unsigned k = 0; k < NTHREADS; k++)
        pthread_join(t[k], NULL);
    work(10);
    printf("%u\n", sink);
    return 0;
}
