/* A program that ends in the way its first argument names, after making calls (each call of
 * work() is two events): for the fault suite (faults_test.py).
 *   faulty MODE CALLS
 * MODE: ok, fail (exit 3), kill (SIGKILL itself), segv, abort, _exit, thread_exit (exit() from
 * a second thread while the first still calls)
 *   faulty slow FILE
 * calls work() 10 times every 100 us until killed, keeping in FILE (shared memory) how many
 * calls it made and when it started: for the SIGKILL loss bound (faults_test.py) */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>
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

/* What the test reads after killing the program; calls is updated after each batch. */
struct progress {
    volatile long calls;
    volatile double t0; /* CLOCK_MONOTONIC seconds */
    volatile int pid;
};

static int slow(const char *file)
{
    int fd = open(file, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || ftruncate(fd, sizeof(struct progress)) != 0)
        return 2;
    struct progress *p = mmap(NULL, sizeof(*p), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
        return 2;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    p->t0 = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
    p->pid = (int)getpid();
    for (;;) {
        calls(10);
        p->calls += 10;
        usleep(100);
    }
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "ok";
    if (!strcmp(mode, "slow"))
        return argc > 2 ? slow(argv[2]) : 2;
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
