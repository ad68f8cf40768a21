/* The time base of the process's TSC values (the TIMEBASE chunk, docs/runtime.md): the
 * kernel's TSC-to-perf-clock conversion when perf_event_open works (the clock of PT
 * sideband), else a calibration against CLOCK_MONOTONIC with the same formula. */
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "ptc_env.h"
#include "soft_internal.h"

/* A (TSC, CLOCK_MONOTONIC) pair: the clock read between two TSC reads, from the tightest of a
 * few tries (a try during which the thread was interrupted or preempted is wide, and lost). */
static void clock_pair(uint64_t *tsc, uint64_t *ns)
{
    /* the first pair is taken as it comes, so that both outputs are always written */
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 8; i++) {
        uint64_t a = __rdtsc(), n = mono_ns(), b = __rdtsc(); /* the real TSC, ticker or not */
        if (i == 0 || b - a < best) {
            best = b - a;
            *tsc = a + (b - a) / 2;
            *ns = n;
        }
    }
}

/* How long the calibration spins, on the program's time at its first traced event. Each end
 * is known to within about half a clock read (20-50 ns here): 0.02 % of the rate at most. */
#define CALIBRATION_NS 250000u

void timebase_init(void)
{
    struct ptc_timebase tb;
    memset(&tb, 0, sizeof(tb));
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof(attr));
    attr.size = sizeof(attr);
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_DUMMY;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    attr.disabled = 1;
    uint64_t calibrated; /* PTCALL_TIMEBASE=calibrated: skip perf (tests) */
    char err[160];
    if (ptc_env_get(PTC_ENV_TIMEBASE, &calibrated, NULL, err, sizeof(err)) < 0) {
        warn("ptcall: %s: using perf", err);
        calibrated = 0;
    }
    int fd = calibrated
                 ? -1
                 : (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd >= 0) {
        long pg = sysconf(_SC_PAGESIZE);
        struct perf_event_mmap_page *p = mmap(NULL, (size_t)pg, PROT_READ, MAP_SHARED, fd, 0);
        if (p != MAP_FAILED) {
            for (int tries = 0; tries < 1000; tries++) {
                uint32_t seq = p->lock;
                __atomic_thread_fence(__ATOMIC_ACQUIRE);
                int ok = p->cap_user_time && p->cap_user_time_zero;
                tb.time_shift = p->time_shift;
                tb.time_mult = p->time_mult;
                tb.time_zero = p->time_zero;
                __atomic_thread_fence(__ATOMIC_ACQUIRE);
                if (p->lock == seq) {
                    if (ok)
                        tb.source = PTC_TIME_PERF_PAGE;
                    break;
                }
            }
            munmap(p, (size_t)pg);
        }
        close(fd);
    }
    if (tb.source == PTC_TIME_PERF_PAGE && tb.time_mult) {
        /* ns per tick = mult / 2^shift */
        tb.tsc_hz = (uint64_t)((1e9 * (double)(1ull << tb.time_shift)) / tb.time_mult);
    } else {
        /* calibrate against CLOCK_MONOTONIC */
        uint64_t t0, n0, t1, n1;
        clock_pair(&t0, &n0);
        while (mono_ns() - n0 < CALIBRATION_NS)
            ;
        clock_pair(&t1, &n1);
        double hz = (double)(t1 - t0) * 1e9 / (double)(n1 - n0);
        tb.source = PTC_TIME_CALIBRATED;
        tb.time_shift = 31;
        while (tb.time_shift > 0 && 1e9 / hz * (double)(1ull << tb.time_shift) >= 4294967295.0)
            tb.time_shift--;
        tb.time_mult = (uint32_t)(1e9 / hz * (double)(1ull << tb.time_shift));
        uint64_t quot = t1 >> tb.time_shift, rem = t1 & ((1ull << tb.time_shift) - 1);
        uint64_t conv = quot * tb.time_mult + ((rem * tb.time_mult) >> tb.time_shift);
        tb.time_zero = n1 - conv;
        tb.tsc_hz = (uint64_t)hz;
    }
    if (ticker_period_ns()) { /* the same formula; events are known to a period */
        tb.source = PTC_TIME_TICKER;
        tb.reserved1 = ticker_period_ns();
    }
    rt.tb = tb;
}
