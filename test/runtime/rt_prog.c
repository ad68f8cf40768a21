/* Test program for the software backend, instrumented by hand (gen_stubs.py), so the runtime
 * is tested without the pass. Each mode produces a call sequence that test_runtime.py knows.
 *   rt_prog seq N            main: N x a()           a: aE bE bX bE bX aX  (b calls leaf? no)
 *   rt_prog threads T N      T threads, each N x a(); main: nothing
 *   rt_prog fork             a(); fork; child: 3 x c(), _exit(0) | exit(0); parent: 2 x b(), wait
 *   rt_prog exec N           N x a(), then exec itself as "seq N"
 *   rt_prog fexec N          the same through fexecve(open("/proc/self/exe"))
 *   rt_prog execat N         the same through execveat(AT_FDCWD, "/proc/self/exe")
 *   rt_prog vfork N          like fork, with vfork (the child runs c() 3 times and _exits)
 *   rt_prog crash N SIG      N x a(), then raise SIG inside c() (a real fault for SEGV);
 *                            with RT_CHAIN=1 a constructor that runs before the object
 *                            registers installs a handler that resets the action and re-raises
 *   rt_prog dlopen LIB N [T] T times (default 1): dlopen LIB, lib_entry(N) (N x lib_helper),
 *                            dlclose; then a()
 *   rt_prog atexit N         main returns; an atexit handler and a destructor each run a()
 *   rt_prog _exit N          N x a(), then _exit(3)
 *   rt_prog signals N        N x a() while SIGALRM handlers run sig_fn() (nested slow paths)
 *   rt_prog unit2 N          N x u2_f() (second unit, endbr64 stubs)
 *   rt_prog churn R T N      R rounds of T threads created and joined, each N x a()
 *   rt_prog crashmt N        2 threads loop a() forever; main: N x a(), then a fault in c()
 *                            (RT_CHAIN_LATE=1: main installs it, after the object registered)
 *   rt_prog recover N        main's SIGSEGV handler siglongjmps out of a fault in c(), then
 *                            N x a(); checks what sigaction reports meanwhile
 *   rt_prog bench N          N x leaf() in a tight loop, prints ns per call
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#include "rt_prog_stubs.h"

#define NOINLINE __attribute__((noinline))
static volatile long sink;

void u2_f(void);

NOINLINE void leaf(void)
{
    PTC_ENTER(leaf);
    sink++;
    PTC_EXIT(leaf);
}
NOINLINE void b(void)
{
    PTC_ENTER(b);
    sink += 2;
    PTC_EXIT(b);
}
NOINLINE void a(void)
{
    PTC_ENTER(a);
    b();
    b();
    PTC_EXIT(a);
}
NOINLINE void c(int sig)
{
    PTC_ENTER(c);
    if (sig == SIGSEGV)
        *(volatile int *)(uintptr_t)sink = 0; /* sink is small: a real fault */
    else if (sig)
        raise(sig);
    PTC_EXIT(c);
}
NOINLINE void sig_fn(int s)
{
    (void)s;
    PTC_ENTER(sig_fn);
    sink++;
    PTC_EXIT(sig_fn);
}
NOINLINE void dtor_fn(void)
{
    PTC_ENTER(dtor_fn);
    a();
    PTC_EXIT(dtor_fn);
}

static long n_arg;
static void *thread_main(void *p)
{
    (void)p;
    for (long i = 0; i < n_arg; i++)
        a();
    return NULL;
}

static void *spin_main(void *p)
{
    (void)p;
    for (;;)
        a();
    return NULL;
}

static void reraise(int sig)
{
    signal(sig, SIG_DFL);
    raise(sig);
}

/* priority 101 runs before the registration constructor (default priority) */
__attribute__((constructor(101))) static void chain_ctor(void)
{
    if (getenv("RT_CHAIN")) {
        signal(SIGSEGV, reraise);
        signal(SIGABRT, reraise);
    }
}

static sigjmp_buf recover_jb;
static void recover_handler(int sig)
{
    (void)sig;
    siglongjmp(recover_jb, 1);
}

static void at_exit_fn(void) { dtor_fn(); }
static int dtor_enabled;
__attribute__((destructor)) static void late_dtor(void)
{
    if (dtor_enabled)
        dtor_fn();
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    const char *mode = argv[1];
    if (getenv("RT_CHAIN_LATE"))
        signal(SIGSEGV, reraise);
    long n = argc > 2 ? atol(argv[2]) : 1;
    if (!strcmp(mode, "seq")) {
        for (long i = 0; i < n; i++)
            a();
    } else if (!strcmp(mode, "threads")) {
        long t = n;
        n_arg = argc > 3 ? atol(argv[3]) : 1;
        pthread_t th[256];
        if (t > 256)
            t = 256;
        for (long i = 0; i < t; i++)
            pthread_create(&th[i], NULL, thread_main, NULL);
        for (long i = 0; i < t; i++)
            pthread_join(th[i], NULL);
    } else if (!strcmp(mode, "fork") || !strcmp(mode, "vfork")) {
        a();
        /* vfork's child may only _exit; calling c() in it is fine here only because the
         * runtime turns vfork into fork (what this tests) */
        pid_t pid = mode[0] == 'v' ? vfork() : fork();
        if (pid == 0) {
            for (int i = 0; i < 3; i++)
                c(0);
            if (n == 2)
                exit(0);
            _exit(0);
        }
        for (int i = 0; i < 2; i++)
            b();
        int st;
        waitpid(pid, &st, 0);
        return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
    } else if (!strcmp(mode, "exec")) {
        for (long i = 0; i < n; i++)
            a();
        char buf[32];
        snprintf(buf, sizeof(buf), "%ld", n);
        execl("/proc/self/exe", argv[0], "seq", buf, (char *)NULL);
        perror("execl");
        return 1;
    } else if (!strcmp(mode, "fexec") || !strcmp(mode, "execat")) {
        for (long i = 0; i < n; i++)
            a();
        char buf[32];
        snprintf(buf, sizeof(buf), "%ld", n);
        char *args[] = {argv[0], "seq", buf, NULL};
        if (mode[0] == 'f') {
            int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
            fexecve(fd, args, environ);
        } else {
            execveat(AT_FDCWD, "/proc/self/exe", args, environ, 0);
        }
        perror(mode);
        return 1;
    } else if (!strcmp(mode, "crash")) {
        int sig = argc > 3 ? atoi(argv[3]) : SIGSEGV;
        for (long i = 0; i < n; i++)
            a();
        c(sig);
        return 0;
    } else if (!strcmp(mode, "dlopen")) {
        long k = argc > 3 ? atol(argv[3]) : 3, times = argc > 4 ? atol(argv[4]) : 1;
        for (long j = 0; j < times; j++) {
            void *h = dlopen(argv[2], RTLD_NOW);
            if (!h) {
                fprintf(stderr, "dlopen: %s\n", dlerror());
                return 1;
            }
            void (*entry)(long) = (void (*)(long))dlsym(h, "lib_entry");
            entry(k);
            dlclose(h);
        }
        a();
    } else if (!strcmp(mode, "atexit")) {
        atexit(at_exit_fn);
        dtor_enabled = 1;
        for (long i = 0; i < n; i++)
            a();
        return 0;
    } else if (!strcmp(mode, "_exit")) {
        for (long i = 0; i < n; i++)
            a();
        _exit(3);
    } else if (!strcmp(mode, "signals")) {
        signal(SIGALRM, sig_fn);
        struct itimerval it = {{0, 50}, {0, 50}};
        setitimer(ITIMER_REAL, &it, NULL);
        for (long i = 0; i < n; i++)
            a();
        struct itimerval off = {{0, 0}, {0, 0}};
        setitimer(ITIMER_REAL, &off, NULL);
        signal(SIGALRM, SIG_IGN);
    } else if (!strcmp(mode, "churn")) {
        long rounds = n, t = argc > 3 ? atol(argv[3]) : 4;
        n_arg = argc > 4 ? atol(argv[4]) : 10;
        pthread_t th[64];
        if (t > 64)
            t = 64;
        for (long r = 0; r < rounds; r++) {
            for (long i = 0; i < t; i++)
                pthread_create(&th[i], NULL, thread_main, NULL);
            for (long i = 0; i < t; i++)
                pthread_join(th[i], NULL);
        }
    } else if (!strcmp(mode, "crashmt")) {
        pthread_t th[2];
        for (int i = 0; i < 2; i++)
            pthread_create(&th[i], NULL, spin_main, NULL);
        usleep(20000);
        for (long i = 0; i < n; i++)
            a();
        c(SIGSEGV);
    } else if (!strcmp(mode, "recover")) {
        struct sigaction sa, cur;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = recover_handler;
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGSEGV, &sa, NULL) != 0 || sigaction(SIGSEGV, NULL, &cur) != 0 ||
            cur.sa_handler != recover_handler) {
            fprintf(stderr, "sigaction does not report the program's handler\n");
            return 1;
        }
        if (!sigsetjmp(recover_jb, 1))
            c(SIGSEGV);
        for (long i = 0; i < n; i++)
            a();
    } else if (!strcmp(mode, "unit2")) {
        for (long i = 0; i < n; i++)
            u2_f();
    } else if (!strcmp(mode, "bench")) {
        struct timespec t0, t1;
        for (long i = 0; i < 1000; i++)
            leaf();
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (long i = 0; i < n; i++)
            leaf();
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double ns = (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);
        printf("%.2f ns per call (2 events), %.2f ns per event\n", ns / n, ns / n / 2);
    } else {
        return 2;
    }
    return 0;
}
