/* The demo traced by scripts/demo.sh: a little of everything a function tracer must show —
 * recursion, calls through function pointers, a library call-back (qsort) and threads. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

static NOINLINE unsigned long fib(unsigned n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

static NOINLINE int by_value(const void *a, const void *b)
{
    unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
    return (x > y) - (x < y);
}

static NOINLINE unsigned checksum(const unsigned *v, size_t n)
{
    unsigned h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ v[i]) * 16777619u;
    return h;
}

static NOINLINE void sort_numbers(size_t n)
{
    unsigned *v = malloc(n * sizeof(*v));
    if (!v)
        exit(1);
    unsigned x = 12345;
    for (size_t i = 0; i < n; i++)
        v[i] = x = x * 1103515245u + 12345u;
    qsort(v, n, sizeof(*v), by_value);
    printf("sorted %zu numbers, checksum %08x\n", n, checksum(v, n));
    free(v);
}

static NOINLINE void *worker(void *arg)
{
    unsigned n = (unsigned)(size_t)arg;
    printf("worker: fib(%u) = %lu\n", n, fib(n));
    return NULL;
}

int main(int argc, char **argv)
{
    unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 20;
    pthread_t t[2];
    for (size_t i = 0; i < 2; i++)
        if (pthread_create(&t[i], NULL, worker, (void *)(size_t)(n - 2 + i)) != 0)
            return 1;
    sort_numbers(1000);
    for (size_t i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("main: fib(%u) = %lu\n", n, fib(n));
    return 0;
}
