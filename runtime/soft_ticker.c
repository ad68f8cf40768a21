/* The ticker clock (PTCALL_CLOCK=ticker[:US], docs/runtime.md *The ticker clock*): a runtime
 * thread stores the TSC into ptc_clock every period, and timed events load that word instead
 * of executing rdtsc (soft_handler.S, the *_ticker handlers). The word is written by one
 * thread and read by all: it sits alone on its cache line, so each tick costs every reading
 * core one miss and nothing else shares the line.
 *
 * The thread sleeps with clock_nanosleep on absolute deadlines (no drift) and a timer slack
 * of 1 ns (the default 50 us slack would stretch every period). When it is descheduled, or a
 * wake-up comes late, the word stalls and the events of that gap share one time; it then
 * resumes from the next deadline after now (no burst of catch-up ticks). Every value stored
 * is a real TSC reading, so the TIMEBASE formula turns it into ns and times stay monotonic.
 *
 * rdtsc_() (soft_internal.h) reads the word too while the ticker is on, so that every record
 * of a thread's stream (control records, buffer ends, marks) is on the same clock as its
 * events. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "ptc_clock.h"
#include "ptc_env.h"
#include "soft_internal.h"

#define period_ns ptc_ticker_period
static _Atomic unsigned gen;      /* the running ticker's generation: an older one stops */
static _Atomic uint64_t ticks, late, cpu_ns; /* for PTCALL_DEBUG */

int ticker_config(void)
{
    const char *s = NULL;
    char err[200];
    if (ptc_env_get(PTC_ENV_CLOCK, NULL, &s, err, sizeof(err)) < 0 ||
        ptc_clock_parse(s, &period_ns, err, sizeof(err)) < 0) {
        warn("ptcall: PTCALL_CLOCK: %s: not tracing (docs/runtime.md lists the values)", err);
        return -1;
    }
    if (period_ns && !rt.timed) {
        warn("ptcall: PTCALL_CLOCK=%s needs timed events, and PTCALL_TIMESTAMPS=0: not "
             "tracing (drop one of them)",
             s);
        return -1;
    }
    ptc_ticker_on = period_ns != 0;
    if (ptc_ticker_on)
        __atomic_store_n(&ptc_clock.word, __rdtsc(), __ATOMIC_RELEASE);
    return 0;
}

static void ts_add(struct timespec *t, uint64_t ns)
{
    uint64_t n = (uint64_t)t->tv_nsec + ns;
    t->tv_sec += (time_t)(n / 1000000000u);
    t->tv_nsec = (long)(n % 1000000000u);
}

static int ts_before(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

static void note_cpu(void)
{
    struct timespec c;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c) == 0)
        atomic_store(&cpu_ns, (uint64_t)c.tv_sec * 1000000000u + (uint64_t)c.tv_nsec);
}

static void *ticker_main(void *arg)
{
    unsigned my = (unsigned)(uintptr_t)arg;
    block_all_signals(NULL);
    ptc_tls.state = TS_IGNORE; /* instrumented code reached from here is not traced */
    syscall(SYS_prctl, PR_SET_NAME, "ptcall-ticker", 0, 0, 0);
    syscall(SYS_prctl, PR_SET_TIMERSLACK, 1ul, 0, 0, 0);
    struct timespec next, now;
    clock_gettime(CLOCK_MONOTONIC, &next);
    /* the first tick at once: ticker_start waits for it */
    __atomic_store_n(&ptc_clock.word, __rdtsc(), __ATOMIC_RELEASE);
    atomic_fetch_add_explicit(&ticks, 1, memory_order_release);
    while (atomic_load_explicit(&gen, memory_order_relaxed) == my &&
           !atomic_load_explicit(&rt.finishing, memory_order_relaxed)) {
        ts_add(&next, period_ns);
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) != 0)
            ;
        __atomic_store_n(&ptc_clock.word, __rdtsc(), __ATOMIC_RELEASE);
        atomic_fetch_add_explicit(&ticks, 1, memory_order_relaxed);
        clock_gettime(CLOCK_MONOTONIC, &now);
        struct timespec due = next;
        ts_add(&due, period_ns);
        if (!ts_before(&now, &due)) { /* a whole period or more late: start again from now */
            atomic_fetch_add_explicit(&late, 1, memory_order_relaxed);
            next = now;
        }
        if (!(atomic_load_explicit(&ticks, memory_order_relaxed) & 1023))
            note_cpu();
    }
    note_cpu();
    return NULL;
}

int ticker_start(void)
{
    if (!ptc_ticker_on)
        return 0;
    /* fresh before the first record of this activation (a fork child's word is the parent's
     * at fork; an attach's is the last detach's) */
    __atomic_store_n(&ptc_clock.word, __rdtsc(), __ATOMIC_RELEASE);
    unsigned my = atomic_fetch_add(&gen, 1) + 1; /* a ticker of an earlier attach stops */
    atomic_store(&ticks, 0);
    atomic_store(&late, 0);
    atomic_store(&cpu_ns, 0);
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&a, 64 << 10);
    sigset_t old;
    block_all_signals(&old);
    pthread_t th;
    int r = pthread_create(&th, &a, ticker_main, (void *)(uintptr_t)my);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&a);
    if (r) {
        warn("ptcall: cannot start the ticker thread: %s", strerror(r));
        return -1;
    }
    /* tracing starts once the thread runs: a new thread may wait milliseconds for a core
     * (4 ms under ASan here; a whole 6.5 ms run in a loaded CI run, every event at time 0).
     * Bounded: a thread that gets no core for 200 ms stalls the clock as a descheduled one
     * does, and that is said (PTCALL_DEBUG) rather than waited for. */
    for (int i = 0; i < 4000 && !atomic_load_explicit(&ticks, memory_order_acquire); i++) {
        struct timespec d = {0, 50 * 1000};
        nanosleep(&d, NULL);
    }
    return 0;
}

void ticker_stats(uint64_t *n_ticks, uint64_t *n_late, uint64_t *n_cpu_ns)
{
    *n_ticks = atomic_load(&ticks);
    *n_late = atomic_load(&late);
    *n_cpu_ns = atomic_load(&cpu_ns);
}
