/* The flight recorder's writer thread (docs/runtime.md, *The stall*): a snapshot that the
 * process outlives is asked for by a program thread (ptcall_snapshot(), a trigger), perhaps
 * in a signal handler or inside the runtime's slow path, and written by this thread, so the
 * asking thread only hands the request over: a few system calls, whatever the rings' size. A
 * fork, the way before, cost the caller 0.7-1.4 ms on the development VM.
 *
 * One request at a time: it travels with the snapshot lock (ring_lock), which the asking
 * thread takes and passes to the writer; the writer releases it when the file is written. The
 * request's fields are written before `posted` is set and read after it is seen. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <string.h>

#include "soft_internal.h"

#define WHY_MAX 1024

static _Atomic uint32_t posted;     /* 1: a request waits for the writer */
static _Atomic uint32_t writer_tid; /* 0: no writer in this process */
static _Atomic uint32_t writer_pid; /* the process the writer runs in (a fork child has none) */
static uint32_t job_kind, job_tid, job_ppid;
static uint64_t job_tsc;
static ring_write_fn job_write;
static char job_why[WHY_MAX];

static void *writer_main(void *arg)
{
    (void)arg;
    /* woken by the asking thread, it must not take that thread's CPU from it: a batch thread
     * does not preempt on wake-up */
    struct sched_param sp = {0};
    pthread_setschedparam(pthread_self(), SCHED_BATCH, &sp);
    atomic_store(&writer_tid, gettid_());
    for (;;) {
        while (!atomic_load(&posted))
            futex_(&posted, FUTEX_WAIT, 0, NULL);
        job_write(job_kind, job_why, job_tid, job_ppid, job_tsc);
        atomic_store(&posted, 0); /* before the lock: the next holder may post at once */
        ring_unlock();
        futex_(&posted, FUTEX_WAKE, INT32_MAX, NULL); /* ring_writer_wait */
    }
    return NULL;
}

int ring_writer_start(void)
{
    /* PTCALL_ATTACH=0 asks for no thread of the runtime's (a program that must stay single-
     * threaded): its snapshots are forked */
    if (!rt.ring_ctl)
        return -1;
    uint32_t pid = (uint32_t)getpid();
    if (atomic_load(&writer_pid) == pid && atomic_load(&writer_tid))
        return 0;
    /* a fork child: the parent's writer, and a request it held, are not here */
    if (atomic_load(&writer_pid) && atomic_load(&writer_pid) != pid) {
        if (atomic_load(&posted))
            ring_lock_give(0);
        atomic_store(&posted, 0);
    }
    atomic_store(&writer_tid, 0);
    atomic_store(&writer_pid, pid);
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&a, 256 << 10); /* write_snapshot_file's two PATH_MAX names */
    sigset_t old;
    block_all_signals(&old); /* the program's handlers never run on it */
    pthread_t th;
    int r = pthread_create(&th, &a, writer_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&a);
    if (r) {
        atomic_store(&writer_pid, 0);
        warn("ptcall: cannot start the snapshot writer thread: %s (snapshots are written by a "
             "forked child instead)", strerror(r));
        return -1;
    }
    /* its tid is known once it runs: a snapshot asked for before then forks */
    return 0;
}

int ring_writer_post(uint32_t kind, const char *why, uint64_t tsc, ring_write_fn write)
{
    uint32_t w = atomic_load(&writer_tid);
    if (!w || atomic_load(&writer_pid) != (uint32_t)getpid() || atomic_load(&posted))
        return -1;
    job_tsc = tsc;
    job_write = write;
    job_kind = kind;
    job_tid = gettid_();
    job_ppid = (uint32_t)getppid();
    size_t n = why ? strnlen(why, WHY_MAX - 1) : 0;
    memcpy(job_why, why ? why : "", n);
    job_why[n] = 0;
    ring_lock_give(w);
    atomic_store(&posted, 1);
    futex_(&posted, FUTEX_WAKE, 1, NULL);
    return 0;
}

void ring_writer_wait(void)
{
    uint64_t t0 = mono_ns();
    uint32_t v;
    while ((v = atomic_load(&posted)) && atomic_load(&writer_pid) == (uint32_t)getpid() &&
           mono_ns() - t0 < 2000ull * 1000 * 1000) {
        struct timespec to = {0, 50 * 1000 * 1000};
        futex_(&posted, FUTEX_WAIT, v, &to);
    }
}
