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
