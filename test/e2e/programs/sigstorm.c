/* A signal storm: a second thread sends SIGUSR1 to the main thread as fast as it can while
 * main calls tiny() N times (more while fewer than MIN_SIGNALS signals arrived, up to
 * MAX_STRETCH * N calls and MAX_SECONDS: on a loaded machine the second thread may start late, and how many signals a
 * running thread takes per second differs between systems: Debian 13's glibc and Debian 12's
 * on one kernel took about 3 times fewer), and the handler calls in_handler() twice. With call-site
 * trampolines (untimed recording) many signals land inside a trampoline's reservation; the
 * runtime must restart it, or the handler's events overwrite the interrupted one's (or the
 * reverse). Prints how often the handler ran, for the test to compare with the trace. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { MIN_SIGNALS = 2000, MAX_STRETCH = 60, MAX_SECONDS = 20 };

static volatile long sink;
static volatile sig_atomic_t handled;
static volatile int stop;
static pthread_t main_thread;

__attribute__((noinline)) int in_handler(int x) { return x + 1; }

static void on_usr1(int sig)
{
    (void)sig;
    handled++;
    sink += in_handler((int)handled);
    sink += in_handler(2);
}

__attribute__((noinline)) int tiny(int x) { return x * 3 + 1; }

static void *pester(void *arg)
{
    (void)arg;
    while (!stop)
        pthread_kill(main_thread, SIGUSR1);
    return NULL;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 3000000;
    struct sigaction sa = {0};
    sa.sa_handler = on_usr1;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGUSR1, &sa, NULL) != 0)
        return 2;
    main_thread = pthread_self();
    pthread_t t;
    if (pthread_create(&t, NULL, pester, NULL) != 0)
        return 2;
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long i = 0;
    for (;; i++) {
        if (i >= n && (i & 0xfffff) == 0) {
            if (handled >= MIN_SIGNALS || i >= MAX_STRETCH * n)
                break;
            clock_gettime(CLOCK_MONOTONIC, &now);
            if (now.tv_sec - t0.tv_sec >= MAX_SECONDS)
                break;
        }
        sink += tiny((int)i);
    }
    stop = 1;
    pthread_join(t, NULL); /* a signal still pending is delivered on the way back from it */
    printf("handled %d calls %ld\n", (int)handled, i);
    return 0;
}
