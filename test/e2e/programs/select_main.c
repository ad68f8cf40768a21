/* For `ptcall record --only/--skip` (test/e2e/select_test.py): functions whose names start
 * with a and b call each other across threads, a fork, a function pointer, recursion and a
 * dlopen'd library (select_plugin.c), so that a selection leaves traced functions calling
 * untraced ones and the reverse. argv: the plugin's path, and a file it creates first (the
 * test checks that a refused --only never ran the program). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
#include "e2e.h"

static volatile int sink;

NOINLINE static void alpha_leaf(int x) { sink += x; }
NOINLINE static void beta(int n)
{
    for (int i = 0; i < n; i++)
        alpha_leaf(i);
}
NOINLINE static int alpha(int n)
{
    alpha_leaf(n);
    beta(n);
    alpha_leaf(-n);
    return NOTAIL(sink);
}
NOINLINE static int arec(int n) { return n <= 1 ? n : NOTAIL(arec(n - 1) + 1); }
NOINLINE static int add1(int x) { return x + 1; }
NOINLINE static int bsub(int x) { return x - 1; }
NOINLINE static int apply(int (*f)(int), int x) { return NOTAIL(f(x)); }
NOINLINE static void *aworker(void *arg)
{
    int n = (int)(long)arg;
    for (int i = 0; i < n; i++) {
        alpha(i % 3);
        bsub(i);
    }
    return NULL;
}
NOINLINE static int bthreads(void)
{
    pthread_t t[2];
    for (long i = 0; i < 2; i++)
        if (pthread_create(&t[i], NULL, aworker, (void *)(10 * (i + 1))))
            return 1;
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    return 0;
}
NOINLINE static int bfork(void)
{
    pid_t p = fork();
    if (p == 0) {
        alpha(2);
        _exit(0);
    }
    int st = 0;
    waitpid(p, &st, 0);
    return st;
}
NOINLINE static int aplugin(const char *path)
{
    void *h = dlopen(path, RTLD_NOW);
    if (!h) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    int (*entry)(int) = (int (*)(int))dlsym(h, "aplug_entry");
    int r = entry ? entry(4) : 1;
    dlclose(h);
    return r < 0;
}
int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    FILE *f = fopen(argv[2], "w"); /* the program ran */
    if (f)
        fclose(f);
    alpha(3);
    sink += arec(5);
    sink += apply(add1, 1) + apply(bsub, 1);
    if (bthreads() || bfork())
        return 1;
    return aplugin(argv[1]);
}
