/* A program whose threads do not all end before it does (test/window/window_test.py): one
 * blocks in pthread_cond_wait and one sleeps while main returns, and a worker calls nested
 * functions for a while so that a cut of its events (window_cut) falls mid-stack.
 * usage: window_main [MS]  (how long main waits before it returns; 300 by default) */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static volatile int sink;

__attribute__((noinline)) static int leaf(int x)
{
    sink += x;
    return x * 3;
}

__attribute__((noinline)) static int mid(int x)
{
    int s = 0;
    for (int i = 0; i < 4; i++)
        s += leaf(x + i);
    return s;
}

__attribute__((noinline)) static int work(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += mid(i);
    return s;
}

__attribute__((noinline)) static void wait_forever(void)
{
    pthread_mutex_lock(&mu);
    for (;;) /* nobody signals: the thread is blocked here when main returns */
        pthread_cond_wait(&cv, &mu);
}

__attribute__((noinline)) static void *blocked_thread(void *arg)
{
    work(200);
    wait_forever();
    return arg;
}

__attribute__((noinline)) static void nap(void) { sleep(100); }

__attribute__((noinline)) static void *sleeper_thread(void *arg)
{
    work(100);
    nap();
    return arg;
}

__attribute__((noinline)) static void *worker(void *arg)
{
    work(3000);
    return arg;
}

int main(int argc, char **argv)
{
    int ms = argc > 1 ? atoi(argv[1]) : 300;
    pthread_t b, s, w;
    if (pthread_create(&b, NULL, blocked_thread, NULL) ||
        pthread_create(&s, NULL, sleeper_thread, NULL) || pthread_create(&w, NULL, worker, NULL))
        return 1;
    pthread_join(w, NULL);
    work(2000);
    usleep((useconds_t)ms * 1000);
    work(100);
    return 0; /* the blocked and the sleeping thread are still inside their calls */
}
