/* ptcall_mark (include/ptcall/ptcall.h, docs/cov.md "Marks"): in counting mode it closes a
 * COUNTS segment (soft_counts.c); in a trace of events it writes a MARK chunk on the calling
 * thread's timeline. */
#define _GNU_SOURCE
#include <string.h>

#include "soft_internal.h"

/* ptcall_mark in a trace of events: a MARK chunk (docs/trace-format.md 4.14) behind the
 * calling thread's events so far: its current buffer goes to the drain and everything queued
 * is written first, so that in file order the mark follows them. */
static void trace_mark(const char *label)
{
    if (rt.fd < 0)
        return;
    if (!label)
        label = "";
    size_t lsize = strlen(label) + 1;
    if (lsize > 4096)
        lsize = 4096;
    hand_over_current(traced_thread());
    if (flush_queued() != 0)
        return; /* the drain did not answer: a mark in the wrong place would mislead */
    char lab[4096];
    memcpy(lab, label, lsize - 1);
    lab[lsize - 1] = 0;
    pthread_mutex_lock(&rt.proc_mu);
    struct ptc_mark m = {.tid = gettid_(), .index = rt.marks++, .tsc = rdtsc_(),
                         .label_size = (uint32_t)lsize};
    struct iovec v[2] = {{&m, sizeof(m)}, {lab, lsize}};
    write_chunk_flags(PTC_CHUNK_MARK, PTC_CHUNK_F_OPTIONAL, 0, &rt.proc_seq, v, 2);
    if (rt.mixed) /* the counted functions' segment ends at the mark too */
        counts_write_segment(PTC_COUNTS_F_MARK, lab);
    pthread_mutex_unlock(&rt.proc_mu);
}

/* ptcall_mark (include/ptcall/ptcall.h): in counting mode the segment since the last mark
 * ends here and is written at once, so an input that crashes the process later cannot take
 * it along. Without a trace file (a shared counts file only) nothing: the counters keep the
 * whole run. Not counting: a MARK chunk on the thread's timeline (trace_mark). */
PTC_API void __ptcall_mark(const char *label)
{
    if (!rt.enabled || rt.ring || !atomic_load(&rt.active) || atomic_load(&rt.finishing))
        return; /* the flight recorder writes at snapshots only */
    if (!rt.counting) {
        trace_mark(label);
        return;
    }
    pthread_mutex_lock(&rt.proc_mu);
    counts_write_segment(PTC_COUNTS_F_MARK, label);
    pthread_mutex_unlock(&rt.proc_mu);
}
