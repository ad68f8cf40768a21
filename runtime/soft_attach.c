/* Attach and detach (issue 31, docs/runtime.md, *Attaching to a running process*): a program
 * started without ptcall keeps each registered object while inactive (soft_register.c), and
 * a recorder's request over the control channel (soft_ctl.c) switches tracing on into the
 * trace descriptor it handed over, then off again, any number of times.
 *
 * Attach is start-up's activation for a traced run: PROCESS (how PTC_PROC_ATTACH) and
 * TIMEBASE, the drain, MODULE and MODULE_ARMED chunks, stubs patched and sites armed.
 * Detach undoes it without stopping a thread of the program: sites disarmed and stubs back to
 * `ret` first (no new event after that), then the final flush's machinery (every queued and
 * every current buffer, what cannot be written a LOSS), a WINDOW per thread, PROCESS_END how
 * PTC_END_DETACH; the drain stops, the descriptor is closed, the threads' state is reset. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "soft_attach.h"
#include "soft_internal.h"

static int signals_installed;

/* Whether drain_start's thread is gone: it stops once it sees `finishing`. */
static int drain_stopped(uint64_t ns)
{
    uint64_t t0 = mono_ns();
    while (atomic_load(&rt.drain_running)) {
        if (mono_ns() - t0 > ns)
            return 0;
        futex_(&rt.qseq, FUTEX_WAKE, 1, NULL); /* it may be asleep */
        struct timespec nap = {0, 200 * 1000};
        nanosleep(&nap, NULL);
    }
    return 1;
}

int attach_start(int fd, const char *only, const char *skip, char *why, size_t n)
{
    if (!rt.enabled || !rt.attachable) {
        snprintf(why, n, "this process cannot be attached to (its runtime is not in attach "
                         "mode)");
        return -1;
    }
    pthread_mutex_lock(&rt.reg_mu);
    if (atomic_load(&rt.active) || atomic_load(&rt.finishing)) {
        pthread_mutex_unlock(&rt.reg_mu);
        snprintf(why, n, "the process is %s", atomic_load(&rt.active) ? "being traced already"
                                                                     : "ending");
        return -1;
    }
    if (select_set(only, skip, why, n) < 0) {
        pthread_mutex_unlock(&rt.reg_mu);
        return -1;
    }
    /* away from the low descriptors programs like to close or dup2 over (soft_fd.c) */
    int hi = fcntl(fd, F_DUPFD_CLOEXEC, 900);
    if (hi < 0)
        hi = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (hi < 0) {
        pthread_mutex_unlock(&rt.reg_mu);
        snprintf(why, n, "cannot keep the trace descriptor: %s", strerror(errno));
        return -1;
    }
    snprintf(rt.output, sizeof(rt.output), "(the trace of the attached recorder)");
    recording_counters_reset();
    rt.pid = (uint32_t)getpid();
    rt.start_how = PTC_PROC_ATTACH;
    rt.parent_tid = 0;
    if (!rt.tb.source)
        timebase_init(); /* once: the TSC's rate does not change */
    if (ticker_start() < 0) { /* PTCALL_CLOCK=ticker (soft_ticker.c) */
        snprintf(why, n, "cannot start the ticker thread (see the program's stderr)");
        close(hi);
        pthread_mutex_unlock(&rt.reg_mu);
        return -1;
    }
    rt.attach_tsc = rdtsc_();
    __atomic_store_n(&rt.keep_from, KEEP_ARMING, __ATOMIC_SEQ_CST);
    threads_reset_for_attach(1);
    __atomic_store_n(&rt.fd, hi, __ATOMIC_RELEASE);
    write_process_start();
    if (drain_start() < 0) {
        snprintf(why, n, "cannot start the drain thread (see the program's stderr)");
        close_trace_fd();
        pthread_mutex_unlock(&rt.reg_mu);
        return -1;
    }
    if (!signals_installed) {
        signals_installed = 1;
        install_signals(); /* kept while detached: with nothing active they only chain */
    }
    wrap_program_handlers(); /* before any event (soft_resume.c); idempotent */
    atomic_store(&rt.active, 1);
    uint64_t t0 = rt.debug ? mono_ns() : 0;
    objects_attach();
    /* the window starts now: every entry and exit is armed (soft_drain.c's encode drops the
     * records before it; KEEP_SETTING makes it wait for the value rather than guess) */
    __atomic_store_n(&rt.keep_from, KEEP_SETTING, __ATOMIC_SEQ_CST);
    rt.attach_tsc = rdtsc_();
    __atomic_store_n(&rt.keep_from, rt.attach_tsc, __ATOMIC_SEQ_CST);
    if (rt.debug) /* what attaching costs the program: its code pages copied on write */
        warn("ptcall[%u]: attach: sites armed in %.1f ms", rt.pid, (double)(mono_ns() - t0) / 1e6);
    pthread_mutex_unlock(&rt.reg_mu);
    return 0;
}

int attach_stop(struct attach_totals *tot)
{
    memset(tot, 0, sizeof(*tot));
    uint64_t t0 = mono_ns();
    pthread_mutex_lock(&rt.reg_mu);
    if (!atomic_load(&rt.active)) {
        pthread_mutex_unlock(&rt.reg_mu);
        return -1;
    }
    /* the window ends where disarming starts (rt.keep_until: later records are dropped),
     * and no new event comes once the code is back: what is buffered then is the window */
    __atomic_store_n(&rt.keep_until, rdtsc_(), __ATOMIC_SEQ_CST);
    objects_detach();
    if (finish_detach() < 0) {
        /* the process is ending: its own final flush writes the trace's end */
        pthread_mutex_unlock(&rt.reg_mu);
        return -1;
    }
    if (!drain_stopped(2000000000ull))
        warn("ptcall: detach: the drain thread did not stop within 2 s; detached anyway");
    tot->events = rt.tot_events;
    tot->dropped = rt.tot_dropped;
    tot->threads = rt.attach_threads;
    tot->write_errors = atomic_load(&rt.write_errors);
    threads_reset_for_attach(0);
    __atomic_store_n(&rt.keep_from, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&rt.keep_until, 0, __ATOMIC_SEQ_CST);
    /* every chunk is written (the flush holds drain_mu and proc_mu while writing) */
    close_trace_fd();
    rt.start_how = 0;
    atomic_store(&rt.active, 0);
    atomic_store(&rt.finishing, FINISH_NONE);
    pthread_mutex_unlock(&rt.reg_mu);
    tot->detach_ns = mono_ns() - t0;
    return 0;
}

void attach_after_fork(void)
{
    /* soft_lifecycle.c's handler ran first (mutexes new, `finishing` set for good): an
     * attached parent's stubs and sites go back in the child */
    if (!rt.attachable || !atomic_load(&rt.active))
        return;
    pthread_mutex_lock(&rt.reg_mu);
    objects_detach();
    atomic_store(&rt.active, 0);
    pthread_mutex_unlock(&rt.reg_mu);
}
