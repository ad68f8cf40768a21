/* A program run as services are (serve_test.py): it serves until it is signalled, names its
 * threads after they start, or dies of a sanitizer's report.
 *
 *   serve_prog wait READY   handlers for SIGTERM/SIGINT/SIGHUP/SIGQUIT: the first one ends the
 *                           loop; prints "got signal N" and exits 20 + N
 *   serve_prog die READY    no handlers: the signal's default action ends it
 *   serve_prog names        threads named after their first event; one renamed twice, one
 *                           renamed by main; one still running at exit
 *   serve_prog overflow     a heap overflow (built with -fsanitize=address: ASan stops it)
 *   serve_prog ubsan        a signed overflow (-fsanitize=undefined, halt_on_error=1)
 *
 * READY is a file written (with the pid) once the loop runs. */
#define _GNU_SOURCE
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t got;
static volatile int sink;

__attribute__((noinline)) static void serve_one(int i) { sink += i; }

__attribute__((noinline)) static void serve_loop(const char *ready)
{
    FILE *f = fopen(ready, "w");
    if (!f)
        exit(3);
    fprintf(f, "%d\n", (int)getpid());
    fclose(f);
    for (int i = 0; !got; i++) {
        serve_one(i);
        struct timespec d = {0, 1000000};
        nanosleep(&d, NULL);
    }
}

static void on_signal(int sig) { got = sig; }

__attribute__((noinline)) static void tick(void) { sink++; }

static pthread_barrier_t renamed;   /* the threads have named themselves */
static pthread_barrier_t may_exit;  /* main read the names: the short-lived threads end */
static volatile int stop_long;

/* renamed twice: pthread_setname_np, then prctl */
static void *twice(void *arg)
{
    (void)arg;
    tick();
    pthread_setname_np(pthread_self(), "first_name");
    tick();
    prctl(PR_SET_NAME, "second_name", 0, 0, 0);
    tick();
    pthread_barrier_wait(&renamed);
    pthread_barrier_wait(&may_exit);
    tick();
    return NULL;
}

/* names itself once and runs until the process exits (as a server's io thread does) */
static void *long_lived(void *arg)
{
    (void)arg;
    tick();
    pthread_setname_np(pthread_self(), "io_thd_1");
    tick();
    pthread_barrier_wait(&renamed);
    while (!stop_long) {
        tick();
        struct timespec d = {0, 1000000};
        nanosleep(&d, NULL);
    }
    return NULL;
}

/* named by main through its pthread_t */
static void *named_by_main(void *arg)
{
    (void)arg;
    tick();
    pthread_barrier_wait(&renamed);
    pthread_barrier_wait(&may_exit);
    tick();
    return NULL;
}

/* names itself by writing its /proc comm file: seen by the final flush only */
static void *proc_comm(void *arg)
{
    (void)arg;
    tick();
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/task/%d/comm", (int)gettid());
    FILE *f = fopen(path, "w");
    if (f) {
        fputs("comm_writer", f);
        fclose(f);
    }
    tick();
    pthread_barrier_wait(&renamed);
    while (!stop_long) {
        tick();
        struct timespec d = {0, 1000000};
        nanosleep(&d, NULL);
    }
    return NULL;
}

static int names(void)
{
    pthread_barrier_init(&renamed, NULL, 5);
    pthread_barrier_init(&may_exit, NULL, 3);
    pthread_t a, b, c, d;
    tick();
    pthread_create(&a, NULL, twice, NULL);
    pthread_create(&b, NULL, long_lived, NULL);
    pthread_create(&c, NULL, named_by_main, NULL);
    pthread_create(&d, NULL, proc_comm, NULL);
    pthread_barrier_wait(&renamed);
    pthread_setname_np(c, "by_main");
    pthread_barrier_wait(&may_exit);
    pthread_join(a, NULL);
    pthread_join(c, NULL);
    tick();
    /* b and d still run: exit reads their names */
    exit(0);
}

__attribute__((noinline)) static int overflow(void)
{
    tick();
    char *p = malloc(16);
    tick();
    int v = p[16 + (int)(sink & 1)]; /* one past the end: ASan's heap-buffer-overflow */
    free(p);
    return v;
}

__attribute__((noinline)) static int signed_overflow(int x)
{
    tick();
    return x + INT_MAX; /* -fsanitize=undefined: signed integer overflow */
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    if (!strcmp(argv[1], "wait") && argc > 2) {
        signal(SIGTERM, on_signal);
        signal(SIGINT, on_signal);
        signal(SIGHUP, on_signal);
        signal(SIGQUIT, on_signal);
        serve_loop(argv[2]);
        printf("got signal %d\n", (int)got);
        return 20 + got;
    }
    if (!strcmp(argv[1], "die") && argc > 2) {
        serve_loop(argv[2]);
        return 0;
    }
    if (!strcmp(argv[1], "names"))
        return names();
    if (!strcmp(argv[1], "overflow"))
        return overflow() ? 0 : 0;
    if (!strcmp(argv[1], "ubsan"))
        return signed_overflow(argc) > 0 ? 0 : 0;
    return 2;
}
