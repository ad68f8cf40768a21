/* Thread names as they change (docs/runtime.md, "Thread names"; docs/trace-format.md 4.18).
 *
 * A thread's THREAD start chunk names it as it was at its first event; servers name their
 * threads right after starting them (redis's io_thd_1, bio_close_file), so that name is most
 * often the process's. Each later change is a THREAD_NAME chunk in the thread's stream, as
 * perf records COMM: pthread_setname_np (of the caller or of another thread) and
 * prctl(PR_SET_NAME) are interposed here. A write to /proc/self/task/TID/comm is not seen
 * as it happens; the final flush reads the name of every thread still alive
 * (thread_name_at_end), so the last name is right whichever way it was set. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "soft_internal.h"

static void *_Atomic real_setname, *_Atomic real_prctl;

static int tracing_names(void)
{
    return rt.enabled && !rt.counting && atomic_load(&rt.active) &&
           !atomic_load(&rt.finishing) && (uint32_t)getpid() == rt.pid;
}

/* Queues a THREAD_NAME for ts. Caller holds thr_mu, and ts is not exiting (its tls is set):
 * the item then goes before the thread's exit item, which frees ts once written. */
static void queue_name(struct thread *ts, const char *name, uint64_t tsc)
{
    struct name_item *n = map_anon(sizeof(*n));
    if (!n)
        return; /* the name at exit is still read then */
    n->it.type = IT_NAME;
    n->ts = ts;
    n->tsc = tsc;
    strncpy(n->name, name, sizeof(n->name) - 1);
    push(&n->it);
}

/* ts names the thread the change applies to: found under thr_mu among the traced threads */
static void name_changed(pthread_t th, const char *name, uint64_t tsc)
{
    pthread_mutex_lock(&rt.thr_mu);
    for (struct thread *ts = rt.threads; ts; ts = ts->next)
        if (ts->tls && pthread_equal(ts->self, th)) {
            queue_name(ts, name, tsc);
            break;
        }
    pthread_mutex_unlock(&rt.thr_mu);
}

/* A thread that has not had its first event yet has no stream: its THREAD start chunk will
 * carry the new name. */
static void self_name_changed(void)
{
    if (!tracing_names() || !traced_thread())
        return;
    uint64_t tsc = rdtsc_();
    char name[16] = "";
    if (syscall(SYS_prctl, PR_GET_NAME, name, 0, 0, 0) != 0) /* as the kernel cut it */
        return;
    name[15] = 0;
    sigset_t old; /* a handler on this thread must not find thr_mu held by it */
    block_all_signals(&old);
    name_changed(pthread_self(), name, tsc);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

PTC_API int pthread_setname_np(pthread_t th, const char *name)
{
    int (*f)(pthread_t, const char *) =
        (int (*)(pthread_t, const char *))libc_fn(&real_setname, "pthread_setname_np");
    if (!f)
        return ENOSYS;
    uint64_t tsc = rdtsc_();
    int r = f(th, name);
    if (r)
        return r;
    if (pthread_equal(th, pthread_self())) {
        self_name_changed();
    } else if (tracing_names()) {
        char cut[16];
        strncpy(cut, name, 15);
        cut[15] = 0;
        sigset_t old;
        block_all_signals(&old);
        name_changed(th, cut, tsc);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    return 0;
}

/* prctl takes up to four more arguments, each an unsigned long in the system call */
PTC_API int prctl(int option, ...)
{
    va_list ap;
    va_start(ap, option);
    unsigned long a2 = va_arg(ap, unsigned long), a3 = va_arg(ap, unsigned long),
                  a4 = va_arg(ap, unsigned long), a5 = va_arg(ap, unsigned long);
    va_end(ap);
    int (*p)(int, ...) = (int (*)(int, ...))libc_fn(&real_prctl, "prctl");
    if (!p) {
        errno = ENOSYS;
        return -1;
    }
    int r = p(option, a2, a3, a4, a5);
    if (r == 0 && option == PR_SET_NAME) {
        int e = errno;
        self_name_changed();
        errno = e;
    }
    return r;
}

/* The final flush: the name of ts, still alive (or being ended by this flush), into its
 * exit_name, read from the kernel (the caller's own with prctl, which also holds a name set
 * through /proc). Async-signal-safe. */
void thread_name_at_end(struct thread *ts, int self)
{
    if (ts->exit_name[0])
        return; /* the thread's own exit read it */
    char name[17] = "";
    if (self) {
        if (syscall(SYS_prctl, PR_GET_NAME, name, 0, 0, 0) != 0)
            return;
    } else {
        char path[64];
        snprintf(path, sizeof(path), "/proc/self/task/%u/comm", ts->tid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return;
        ssize_t n = read(fd, name, 16);
        close(fd);
        if (n <= 0)
            return;
        name[n] = 0;
        if (name[n - 1] == '\n')
            name[n - 1] = 0;
    }
    name[15] = 0;
    memcpy(ts->exit_name, name, 16);
}
