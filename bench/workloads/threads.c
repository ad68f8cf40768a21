/* Multi-threaded workload: 4 threads, each sorting with a comparator call-back and
 * computing fib, so calls happen on every thread at once. Usage: threads [ROUNDS]. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

NOINLINE unsigned long fib(unsigned n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

NOINLINE int cmp(const void *a, const void *b)
{
    unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
    return (x > y) - (x < y);
}

static unsigned rounds = 20;

NOINLINE void *worker(void *arg)
{
    unsigned seed = (unsigned)(size_t)arg * 2654435761u + 1;
    enum { N = 20000 };
    unsigned *v = malloc(N * sizeof(*v));
    unsigned long acc = 0;
    if (!v)
        return NULL;
    for (unsigned r = 0; r < rounds; r++) {
        for (unsigned i = 0; i < N; i++)
            v[i] = seed = seed * 1103515245u + 12345u;
        qsort(v, N, sizeof(*v), cmp);
        acc += v[N / 2] + fib(18);
    }
    free(v);
    return (void *)acc;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        rounds = (unsigned)strtoul(argv[1], NULL, 10);
    pthread_t t[4];
    unsigned long sum = 0;
    for (size_t i = 0; i < 4; i++)
        if (pthread_create(&t[i], NULL, worker, (void *)i))
            return 1;
    for (size_t i = 0; i < 4; i++) {
        void *r;
        pthread_join(t[i], &r);
        sum += (unsigned long)r;
    }
    printf("threads: %lu\n", sum);
    return 0;
}
