/* Four threads; thread i calls leaf() 1000*(i+1) times. Main calls spawn() once. */
#include <pthread.h>
#include "e2e.h"
static volatile int sink;
NOINLINE void leaf(int x) { sink += x; }
NOINLINE void *worker(void *arg)
{
    int n = 1000 * (int)(long)arg;
    for (int i = 0; i < n; i++)
        leaf(i);
    return 0;
}
NOINLINE int spawn(void)
{
    pthread_t t[4];
    for (long i = 0; i < 4; i++)
        if (pthread_create(&t[i], 0, worker, (void *)(i + 1)))
            return 1;
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], 0);
    return 0;
}
int main(void) { return NOTAIL(spawn()); }
