/* The ticker clock (test/e2e/ticker_test.py). work() calls leaf() 1000 times (far shorter
 * than a tick together) and slow() once (a 2 ms sleep: many ticks). "plain": main calls
 * work() 3 times; "threads": 3 threads call it 3 times each; "fork": the parent calls it
 * once, then forks, and the child calls it twice (its clock must go on: its own ticker). */
#include <pthread.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "e2e.h"
static volatile long sink;
NOINLINE void leaf(long x) { sink += x; }
NOINLINE void slow(void)
{
    struct timespec t = {0, 2000000};
    nanosleep(&t, 0);
}
NOINLINE void work(void)
{
    for (long i = 0; i < 1000; i++)
        leaf(i);
    slow();
}
static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 3; i++)
        work();
    return 0;
}
NOINLINE int run(const char *mode)
{
    if (!strcmp(mode, "threads")) {
        pthread_t t[3];
        for (int i = 0; i < 3; i++)
            if (pthread_create(&t[i], 0, worker, 0))
                return 1;
        for (int i = 0; i < 3; i++)
            pthread_join(t[i], 0);
        return 0;
    }
    if (!strcmp(mode, "fork")) {
        work();
        pid_t pid = fork();
        if (pid < 0)
            return 1;
        if (pid == 0) {
            work();
            work();
            _exit(0);
        }
        int st;
        waitpid(pid, &st, 0);
        return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
    }
    for (int i = 0; i < 3; i++)
        work();
    return 0;
}
int main(int argc, char **argv) { return NOTAIL(run(argc > 1 ? argv[1] : "plain")); }
