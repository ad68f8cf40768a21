/* A budget's pilot (pilot_test.py): a main loop whose functions are called at very different
 * rates, and a second thread with functions of its own (no function is called by both
 * threads at once: counting's increments are not locked). The leaves do some 30 ns of work,
 * so counting costs a few per cent and the test's budget sits well between that and tracing
 * everything whatever the machine's load (with one-instruction leaves counting took 15 to
 * 26 %, against a 25 % budget). argv[1]: rounds. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static volatile long sink;

static inline __attribute__((always_inline)) long work(long x)
{
    for (int i = 0; i < 24; i++) {
        x = x * 31 + i;
        __asm__ volatile("" : "+r"(x)); /* or the compiler folds the loop to one multiply */
    }
    return x;
}

__attribute__((noinline)) long hot(long x) { return work(x) * 3 + 1; }
__attribute__((noinline)) long warm(long x)
{
    long s = 0;
    for (int i = 0; i < 40; i++)
        s += hot(x + i);
    return s;
}
__attribute__((noinline)) long cold(long x)
{
    long s = 0;
    for (int i = 0; i < 20; i++)
        s += warm(x + i);
    return s;
}
__attribute__((noinline)) long rare(long x) { return cold(x) + 1; }
__attribute__((noinline)) long t_leaf(long x) { return work(x) ^ 5; }
__attribute__((noinline)) long t_step(long x)
{
    long s = 0;
    for (int i = 0; i < 30; i++)
        s += t_leaf(x + i);
    return s;
}

static long rounds;

static void *side(void *arg)
{
    (void)arg;
    long s = 0;
    for (long i = 0; i < rounds * 20; i++)
        s += t_step(i);
    sink = s;
    return NULL;
}

int main(int argc, char **argv)
{
    rounds = argc > 1 ? atol(argv[1]) : 20000;
    pthread_t t;
    pthread_create(&t, NULL, side, NULL);
    long s = 0;
    for (long i = 0; i < rounds; i++)
        s += rare(i);
    pthread_join(t, NULL);
    sink += s;
    printf("done %ld\n", rounds);
    return 0;
}
