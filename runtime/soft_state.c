/* The runtime's state, one per process (struct runtime_state, soft_internal.h), what the
 * CPU offers the handlers' slow path for saving registers, and the C library's functions
 * behind the interposed ones. The bottom floor of runtime/: everything reads it, it calls
 * nothing of the runtime. */
#define _GNU_SOURCE
#include <cpuid.h>
#include <dlfcn.h>

#include "soft_internal.h"

struct runtime_state rt = {
    .reg_mu = PTHREAD_MUTEX_INITIALIZER,
    .drain_mu = PTHREAD_MUTEX_INITIALIZER,
    .thr_mu = PTHREAD_MUTEX_INITIALIZER,
    .proc_mu = PTHREAD_MUTEX_INITIALIZER,
    .fd = -1,
    .counts_fd = -1,
    .fs_ctl = -1,
    .fs_harness_fd = -1,
    .fs_st = -1,
};

uint64_t *ptc_counters; /* counting mode (soft_counts.c): COUNTERS_MAX counters */
uint64_t *ptc_blocks;   /* counting mode, map v7: BLOCKS_MAX block counters */

uint64_t ptc_xsave_size = 512 + 64; /* fxsave64, unless xsave_init finds XSAVE */
uint8_t ptc_use_xsave;

void xsave_init(void)
{
    unsigned a, b, c, d;
    if (__get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 27)) /* OSXSAVE */ &&
        __get_cpuid_max(0, NULL) >= 0xd) {
        __cpuid_count(0xd, 0, a, b, c, d);
        if (b >= 576) {
            ptc_xsave_size = ((uint64_t)b + 63) & ~(uint64_t)63;
            ptc_use_xsave = 1;
        }
    }
}

void *libc_fn(void *_Atomic *cache, const char *name)
{
    void *f = atomic_load(cache);
    if (!f) {
        f = dlsym(RTLD_NEXT, name);
        atomic_store(cache, f);
    }
    return f;
}

/* A new recording in this process (a fork child's own, an attach's) starts its counters at
 * zero: PROCESS_END's totals and PTCALL_DEBUG's figures are its own. */
void recording_counters_reset(void)
{
    rt.proc_seq = 0;
    rt.marks = 0;
    rt.tot_events = rt.tot_dropped = rt.tot_waits = 0;
    rt.drain_tsc = rt.drain_records = rt.drain_chunks = rt.drain_bytes = 0;
    rt.drain_spin_ns = rt.drain_cpu_ns = rt.drain_given_up = rt.drain_live_flushes = 0;
    atomic_store(&rt.drain_wakes, 0);
    atomic_store(&rt.late_events, 0);
    atomic_store(&rt.write_errors, 0);
    atomic_store(&rt.write_owed, 0);
    atomic_store(&rt.write_lost_records, 0);
    rt.write_first_errno = 0;
}
