/* A program with a known call structure for the call graph's browser test
 * (test/web/callgraph_test.py): two roots (main, and the thread's start routine worker),
 * a chain main -> work -> helper -> leaf_a, a function called from two places (leaf_a, from
 * work and helper), a callee of both roots (leaf_b), a cold function (cold_fn) and a
 * recursive one (rec). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void spin(unsigned long n)
{
    for (unsigned long i = 0; i < n; i++)
        sink += i;
}

__attribute__((noinline)) void leaf_a(void)
{
    spin(200000);
}

__attribute__((noinline)) void leaf_b(void)
{
    spin(300000);
}

__attribute__((noinline)) void helper(void)
{
    leaf_a();
    spin(50000);
}

__attribute__((noinline)) int rec(int n)
{
    spin(20000);
    return n ? rec(n - 1) + 1 : 0;
}

__attribute__((noinline)) void work(int i)
{
    leaf_a();
    helper();
    if (i % 4 == 0)
        leaf_b();
    rec(3);
}

__attribute__((noinline)) void cold_fn(void)
{
    sink++;
}

__attribute__((noinline)) void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 20; i++)
        leaf_b();
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 40;
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL))
        return 1;
    for (int i = 0; i < n; i++)
        work(i);
    cold_fn();
    pthread_join(t, NULL);
    printf("%lu\n", sink);
    return 0;
}
