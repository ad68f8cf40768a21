/* attach test target: worker threads call instrumented functions until stdin closes */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static atomic_int stop;
static atomic_long rounds, bad;
static volatile long N = 100;
static int busy; /* "busy": the workers never sleep (buffers fill faster than a slow drain) */

__attribute__((noinline)) long leaf(long x) { return x * 3 + 1; }
__attribute__((noinline)) long mid(long x) { return leaf(x) + leaf(x + 1); }
__attribute__((noinline)) long work(long n)
{
    long s = 0;
    for (long i = 0; i < n; i++)
        s += mid(i);
    return s;
}

static void *worker(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop)) {
        if (work(N) != 30200) /* the sum over i < 100 of 6i + 5 */
            atomic_fetch_add(&bad, 1);
        atomic_fetch_add(&rounds, 1);
        if (!busy) {
            struct timespec t = {0, 200000};
            nanosleep(&t, NULL);
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int nthreads = 4;
    if (argc > 1 && !strcmp(argv[1], "nodump"))
        prctl(PR_SET_DUMPABLE, 0);
    if (argc > 1 && !strcmp(argv[1], "exec") && argc > 2) { /* exec self after argv[2] ms */
        usleep(atoi(argv[2]) * 1000);
        execl("/proc/self/exe", argv[0], (char *)NULL);
        return 3;
    }
    if (argc > 1 && !strcmp(argv[1], "exit") && argc > 2) {
        pthread_t t;
        pthread_create(&t, NULL, worker, NULL);
        usleep(atoi(argv[2]) * 1000);
        printf("exiting\n");
        return 7;
    }
    if (argc > 1 && !strcmp(argv[1], "busy"))
        busy = 1;
    pthread_t t[16];
    for (int i = 0; i < nthreads; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    char line[64];
    while (fgets(line, sizeof line, stdin))
        ;
    atomic_store(&stop, 1);
    for (int i = 0; i < nthreads; i++)
        pthread_join(t[i], NULL);
    printf("rounds>0 %d bad %ld\n", atomic_load(&rounds) > 0, atomic_load(&bad));
    return 0;
}
