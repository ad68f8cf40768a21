/* Blocked time (issue 27 item 6, blocking_test.py): a thread pool whose worker waits on a
 * condition variable between tasks, a pipe read that blocks until another thread writes, a
 * nanosleep, a waitpid of a child that sleeps. Each blocking function of the program's own
 * is noinline so the report names it. Return values and errno of the C library's functions
 * are checked (on good and on bad arguments): any difference exits 1. Prints "ok". */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TASKS 3
#define TASK_GAP_MS 40   /* main waits this long before each task: the worker waits */
#define TASK_SPIN_MS 20  /* each task runs this long: the worker runs */
#define PIPE_DELAY_MS 40 /* the writer thread writes after this long: the read blocks */
#define NAP_MS 50
#define CHILD_MS 30

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int pending, stop;
static volatile unsigned long sink;

static void fail(const char *what)
{
    fprintf(stderr, "blocking: %s\n", what);
    exit(1);
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void sleep_ms(int ms)
{
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0)
        if (errno != EINTR)
            fail("nanosleep");
}

__attribute__((noinline)) void busy_work(void)
{
    double end = now_ms() + TASK_SPIN_MS;
    while (now_ms() < end)
        for (int i = 0; i < 1000; i++)
            sink += (unsigned long)i * 7u;
}

__attribute__((noinline)) void *pool_thread(void *arg)
{
    (void)arg;
    for (;;) {
        if (pthread_mutex_lock(&mu) != 0)
            fail("pthread_mutex_lock");
        while (!pending && !stop)
            if (pthread_cond_wait(&cv, &mu) != 0)
                fail("pthread_cond_wait");
        if (!pending && stop) {
            pthread_mutex_unlock(&mu);
            return NULL;
        }
        pending--;
        pthread_mutex_unlock(&mu);
        busy_work();
    }
}

__attribute__((noinline)) void submit_tasks(void)
{
    for (int i = 0; i < TASKS; i++) {
        sleep_ms(TASK_GAP_MS);
        pthread_mutex_lock(&mu);
        pending++;
        pthread_cond_signal(&cv);
        pthread_mutex_unlock(&mu);
    }
    sleep_ms(TASK_SPIN_MS + 10); /* the last task runs, then the worker waits again */
    pthread_mutex_lock(&mu);
    stop = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

static int pipe_fds[2];

__attribute__((noinline)) void *pipe_writer(void *arg)
{
    (void)arg;
    sleep_ms(PIPE_DELAY_MS);
    if (write(pipe_fds[1], "x", 1) != 1)
        fail("write");
    return NULL;
}

__attribute__((noinline)) void read_pipe(void)
{
    pthread_t w;
    if (pipe(pipe_fds) != 0 || pthread_create(&w, NULL, pipe_writer, NULL) != 0)
        fail("pipe");
    char c = 0;
    errno = 1234; /* a successful call leaves errno alone */
    ssize_t n = read(pipe_fds[0], &c, 1);
    if (n != 1 || c != 'x' || errno != 1234)
        fail("read: return value or errno changed");
    if (pthread_join(w, NULL) != 0)
        fail("pthread_join");
    close(pipe_fds[0]);
    close(pipe_fds[1]);
}

__attribute__((noinline)) void nap(void)
{
    struct timespec t = {0, NAP_MS * 1000000L}, rem = {7, 7};
    errno = 4321;
    int r = nanosleep(&t, &rem);
    if (r != 0 || errno != 4321)
        fail("nanosleep: return value or errno changed");
}

__attribute__((noinline)) void wait_child(void)
{
    pid_t p = fork();
    if (p < 0)
        fail("fork");
    if (p == 0) {
        usleep(CHILD_MS * 1000);
        _exit(7);
    }
    int st = 0;
    pid_t r = waitpid(p, &st, 0);
    if (r != p || !WIFEXITED(st) || WEXITSTATUS(st) != 7)
        fail("waitpid: return value or status changed");
}

/* Failing calls: the C library's -1 and errno come back unchanged */
__attribute__((noinline)) void bad_calls(void)
{
    char c;
    errno = 0;
    if (read(-1, &c, 1) != -1 || errno != EBADF)
        fail("read(-1): not -1/EBADF");
    struct timespec bad = {0, 2000000000L};
    errno = 0;
    if (nanosleep(&bad, NULL) != -1 || errno != EINVAL)
        fail("nanosleep(bad): not -1/EINVAL");
    errno = 0;
    if (waitpid(-1, NULL, WNOHANG) != -1 || errno != ECHILD)
        fail("waitpid: not -1/ECHILD");
    struct timespec past = {0, 0};
    pthread_mutex_lock(&mu);
    int r = pthread_cond_timedwait(&cv, &mu, &past);
    pthread_mutex_unlock(&mu);
    if (r != ETIMEDOUT)
        fail("pthread_cond_timedwait: not ETIMEDOUT");
}

int main(void)
{
    pthread_t pool;
    if (pthread_create(&pool, NULL, pool_thread, NULL) != 0)
        fail("pthread_create");
    submit_tasks();
    if (pthread_join(pool, NULL) != 0)
        fail("pthread_join");
    read_pipe();
    nap();
    wait_child();
    bad_calls();
    printf("ok\n");
    return 0;
}
