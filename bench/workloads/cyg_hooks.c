/* -finstrument-functions hooks for the benchmark. Built WITHOUT instrumentation.
 * empty: the cheapest possible hooks. log: append (fn, caller, tsc) to a thread-local
 * buffer, the way a minimal -finstrument-functions tracer would, rewinding when full
 * (the cost of the writes is what matters here, not keeping the data). */
#include <stdint.h>
#include <x86intrin.h>

#ifdef CYG_LOG
struct rec { void *fn; uint64_t tsc; };
#define NREC (1u << 16)
static __thread struct rec buf[NREC];
static __thread unsigned pos;
static inline void log_event(void *fn, int exit)
{
    buf[pos].fn = (void *)((uintptr_t)fn | (uintptr_t)exit);
    buf[pos].tsc = __rdtsc();
    pos = (pos + 1) & (NREC - 1);
}
void __cyg_profile_func_enter(void *fn, void *caller) { (void)caller; log_event(fn, 0); }
void __cyg_profile_func_exit(void *fn, void *caller) { (void)caller; log_event(fn, 1); }
#else
void __cyg_profile_func_enter(void *fn, void *caller) { (void)fn; (void)caller; }
void __cyg_profile_func_exit(void *fn, void *caller) { (void)fn; (void)caller; }
#endif
