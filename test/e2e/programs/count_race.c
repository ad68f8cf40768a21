/* Counting from several threads at once (counts_atomic_test.py): every thread calls shared()
 * argv[2] times, all at the same moment (a barrier), and a function of its own as often, so
 * that unlocked counters lose increments and locked ones must not. argv[1]: threads. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static volatile long sink;
static long calls;
static pthread_barrier_t start;

__attribute__((noinline)) long shared(long x) { return x + 1; }
__attribute__((noinline)) long own(long x) { return x ^ 3; }

static void *worker(void *arg)
{
    (void)arg;
    long s = 0;
    pthread_barrier_wait(&start);
    for (long i = 0; i < calls; i++)
        s += shared(i) + own(i);
    sink += s;
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 2;
    calls = argc > 2 ? atol(argv[2]) : 1000000;
    if (n < 1 || n > 64 || calls < 1) {
        fprintf(stderr, "usage: count_race THREADS CALLS\n");
        return 2;
    }
    pthread_t t[64];
    pthread_barrier_init(&start, NULL, (unsigned)n);
    for (int i = 0; i < n; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    printf("%d threads x %ld calls\n", n, calls);
    return 0;
}
