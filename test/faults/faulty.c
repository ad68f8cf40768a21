/* A program that ends in the way its first argument names, after making calls (each call of
 * work() is two events): for the fault suite (faults_test.py).
 *   faulty MODE CALLS
 * MODE: ok, fail (exit 3), kill (SIGKILL itself), segv, abort, _exit, thread_exit (exit() from
 * a second thread while the first still calls) */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile long sink;

__attribute__((noinline)) static long work(long x)
{
    sink += x;
    return x * 2 + 1;
}

static void calls(long n)
{
    for (long i = 0; i < n; i++)
        work(i);
}

static void *exiter(void *arg)
{
    calls((long)arg);
    exit(4);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "ok";
    long n = argc > 2 ? atol(argv[2]) : 100000;
    calls(n);
    printf("made %ld calls\n", n);
    fflush(stdout);
    if (!strcmp(mode, "fail"))
        return 3;
    if (!strcmp(mode, "kill"))
        raise(SIGKILL);
    if (!strcmp(mode, "segv"))
        *(volatile int *)(uintptr_t)8 = 1;
    if (!strcmp(mode, "abort"))
        abort();
    if (!strcmp(mode, "_exit"))
        _exit(5);
    if (!strcmp(mode, "thread_exit")) {
        pthread_t t;
        pthread_create(&t, NULL, exiter, (void *)n);
        for (;;)
            calls(1000);
    }
    return 0;
}
