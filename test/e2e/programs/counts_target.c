/* counts_test.py's target: reads one input (the file argv[1], else stdin) and calls by it.
 *   "N"        main, parse once, work N times (leaf N times, through work)
 *   "hang"     spins forever (a fork-server timeout)
 *   "crash"    work 3 times, then a SIGSEGV
 *   "fork N"   a child calls work N times, the parent waits and calls work once
 *   "mark N M" work N times, ptcall_mark("one"), work M times
 *   "threads"  4 threads, thread k calls its own function k+1 times */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptcall/ptcall.h"

volatile int sink;
__attribute__((noinline)) int leaf(int x) { sink += x; return x * 3 + 1; }
__attribute__((noinline)) int work(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += leaf(i);
    return s;
}
__attribute__((noinline)) int parse(const char *s) { sink++; return atoi(s); }
__attribute__((noinline)) void spin(void) { for (;;) sink++; }
__attribute__((noinline)) void boom(void) { *(volatile int *)(sink - sink) = 1; }
__attribute__((noinline)) void t0(void) { sink++; }
__attribute__((noinline)) void t1(void) { sink++; }
__attribute__((noinline)) void t2(void) { sink++; }
__attribute__((noinline)) void t3(void) { sink++; }
static void (*const tf[4])(void) = {t0, t1, t2, t3};
static void *thread_main(void *arg)
{
    long k = (long)arg;
    for (long i = 0; i <= k; i++)
        tf[k]();
    return NULL;
}

int main(int argc, char **argv)
{
    char buf[256] = "";
    FILE *f = argc > 1 ? fopen(argv[1], "r") : stdin;
    if (!f || !fgets(buf, sizeof(buf), f))
        buf[0] = 0;
    if (!strncmp(buf, "hang", 4))
        spin();
    if (!strncmp(buf, "crash", 5)) {
        work(3);
        boom();
    }
    if (!strncmp(buf, "fork", 4)) {
        pid_t p = fork();
        if (p == 0) {
            work(parse(buf + 5));
            exit(0);
        }
        waitpid(p, NULL, 0);
        work(1);
        return 0;
    }
    if (!strncmp(buf, "mark", 4)) {
        int n = 0, m = 0;
        sscanf(buf + 5, "%d %d", &n, &m);
        work(n);
        ptcall_mark("one");
        work(m);
        return 0;
    }
    if (!strncmp(buf, "threads", 7)) {
        pthread_t th[4];
        for (long k = 0; k < 4; k++)
            pthread_create(&th[k], NULL, thread_main, (void *)k);
        for (int k = 0; k < 4; k++)
            pthread_join(th[k], NULL);
        return 0;
    }
    printf("%d\n", work(parse(buf)));
    return 0;
}
