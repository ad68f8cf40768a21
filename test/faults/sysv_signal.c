/* A program built with _POSIX_C_SOURCE, as zstd is: glibc's signal() is then __sysv_signal
 * (one-shot handlers, installed again by the handler), and its threads install handlers with
 * it. Prints how often the handler ran. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

static volatile sig_atomic_t handled;

__attribute__((noinline)) static void on_signal_work(void) { handled++; }

static void on_usr1(int sig)
{
    signal(sig, on_usr1); /* System V: the handler was reset when it ran */
    on_signal_work();
}

static void on_usr2(int sig) { (void)sig; }

/* threads install handlers of their own with it (one-shot: reset when delivered, so only one
 * thread raises the signal that is handled, as System V programs must) */
static void *worker(void *arg)
{
    (void)arg;
    return signal(SIGUSR2, on_usr2) == SIG_ERR ? (void *)1 : NULL;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000;
    if (signal(SIGUSR1, on_usr1) == SIG_ERR)
        return 2;
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        if (pthread_create(&t[i], NULL, worker, NULL) != 0)
            return 2;
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    for (long i = 0; i < n; i++)
        raise(SIGUSR1);
    printf("handled %d\n", (int)handled);
    return 0;
}
