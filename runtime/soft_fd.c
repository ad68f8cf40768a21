/* The trace file's descriptor belongs to the runtime, not to the program. Programs that close
 * every descriptor they did not open (daemons, sandboxes, `close_range(3, ~0U, 0)`) or dup2
 * another file onto it used to cut the trace off: every later chunk failed with EBADF, or
 * went into the program's file. close, close_range, closefrom, dup2 and dup3 are interposed:
 * the trace's descriptor moves to another number first (the program gets the number it
 * asked for, closed or replaced), and a range it falls in is closed around it. Only a raw
 * system call bypasses this (docs/runtime.md). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "soft_internal.h"

#ifndef SYS_close_range
#define SYS_close_range 436
#endif

static int (*real_close)(int);
static int (*real_dup2)(int, int);
static int (*real_dup3)(int, int, int);

/* libc's, for its cancellation point; the system call before the constructor ran */
static int sys_close(int fd) { return real_close ? real_close(fd) : (int)syscall(SYS_close, fd); }

__attribute__((constructor(101))) static void resolve_fd_functions(void)
{
    real_close = (int (*)(int))dlsym(RTLD_NEXT, "close");
    real_dup2 = (int (*)(int, int))dlsym(RTLD_NEXT, "dup2");
    real_dup3 = (int (*)(int, int, int))dlsym(RTLD_NEXT, "dup3");
}

/* Every chunk write holds drain_mu or proc_mu: holding both, nobody writes meanwhile. A
 * caller that already holds one (a signal handler interrupting the runtime) cannot have
 * them within the bound: then the descriptor stays where it is. */
static int lock_writers(void)
{
    uint64_t t0 = mono_ns();
    while (pthread_mutex_trylock(&rt.drain_mu) != 0) {
        if (mono_ns() - t0 > 1000000000ull)
            return -1;
        sched_yield();
    }
    while (pthread_mutex_trylock(&rt.proc_mu) != 0) {
        if (mono_ns() - t0 > 1000000000ull) {
            pthread_mutex_unlock(&rt.drain_mu);
            return -1;
        }
        sched_yield();
    }
    return 0;
}

static void unlock_writers(void)
{
    pthread_mutex_unlock(&rt.proc_mu);
    pthread_mutex_unlock(&rt.drain_mu);
}

/* Moves the trace's descriptor off number fd (which the program wants). 1 when it moved (fd
 * is now free), 0 when fd is not the trace's, -1 when it could not move (the caller then
 * leaves fd alone and says it was done). */
static int move_trace_fd(int fd)
{
    if (fd < 0 || fd != __atomic_load_n(&rt.fd, __ATOMIC_ACQUIRE))
        return 0;
    if (lock_writers() < 0)
        return -1;
    int moved = 0;
    if (fd == rt.fd) {
        int to = fcntl(fd, F_DUPFD_CLOEXEC, fd < 900 ? 900 : fd + 1);
        if (to < 0)
            to = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (to >= 0) {
            __atomic_store_n(&rt.fd, to, __ATOMIC_RELEASE);
            sys_close(fd);
            moved = 1;
        } else {
            moved = -1;
        }
    }
    unlock_writers();
    return moved;
}

PTC_API int close(int fd)
{
    if (move_trace_fd(fd) != 0)
        return 0; /* moved and closed, or (locks not to be had) kept: either way, closed to
                     the program */
    return sys_close(fd);
}

PTC_API int close_range(unsigned first, unsigned last, int flags)
{
    int fd = __atomic_load_n(&rt.fd, __ATOMIC_ACQUIRE);
    if (fd < 0 || (unsigned)fd < first || (unsigned)fd > last || (flags & CLOSE_RANGE_CLOEXEC))
        return (int)syscall(SYS_close_range, first, last, flags);
    /* around the trace's descriptor: it stays where it is, and open */
    int r = 0;
    if ((unsigned)fd > first)
        r = (int)syscall(SYS_close_range, first, (unsigned)fd - 1, flags);
    if (r == 0 && (unsigned)fd < last)
        r = (int)syscall(SYS_close_range, (unsigned)fd + 1, last, flags);
    return r;
}

PTC_API void closefrom(int lowfd)
{
    close_range(lowfd < 0 ? 0u : (unsigned)lowfd, ~0u, 0);
}

PTC_API int dup2(int oldfd, int newfd)
{
    if (oldfd != newfd && move_trace_fd(newfd) < 0) {
        errno = EBUSY; /* dup2's own word for "try again" on Linux */
        return -1;
    }
    return real_dup2 ? real_dup2(oldfd, newfd) : (int)syscall(SYS_dup2, oldfd, newfd);
}

PTC_API int dup3(int oldfd, int newfd, int flags)
{
    if (oldfd != newfd && move_trace_fd(newfd) < 0) {
        errno = EBUSY;
        return -1;
    }
    return real_dup3 ? real_dup3(oldfd, newfd, flags)
                     : (int)syscall(SYS_dup3, oldfd, newfd, flags);
}

int close_trace_fd(void)
{
    int fd = rt.fd;
    rt.fd = -1;
    return fd >= 0 ? sys_close(fd) : 0;
}
