/* The sample_id trailer of perf records (perf_sample.h). */
#include <linux/perf_event.h>
#include <string.h>

#include "perf_sample.h"

size_t ptc_perf_trailer_size(uint64_t st)
{
    size_t n = 0;
    if (st & PERF_SAMPLE_TID)
        n += 8;
    if (st & PERF_SAMPLE_TIME)
        n += 8;
    if (st & PERF_SAMPLE_ID)
        n += 8;
    if (st & PERF_SAMPLE_STREAM_ID)
        n += 8;
    if (st & PERF_SAMPLE_CPU)
        n += 8;
    if (st & PERF_SAMPLE_IDENTIFIER)
        n += 8;
    return n;
}

void ptc_perf_parse_trailer(const uint8_t *p, uint64_t st, struct ptc_perf_sid *s)
{
    memset(s, 0, sizeof(*s));
    if (st & PERF_SAMPLE_TID) {
        memcpy(&s->pid, p, 4);
        memcpy(&s->tid, p + 4, 4);
        s->have_tid = 1;
        p += 8;
    }
    if (st & PERF_SAMPLE_TIME) {
        memcpy(&s->time, p, 8);
        s->have_time = 1;
        p += 8;
    }
    if (st & PERF_SAMPLE_ID)
        p += 8;
    if (st & PERF_SAMPLE_STREAM_ID)
        p += 8;
    if (st & PERF_SAMPLE_CPU) {
        memcpy(&s->cpu, p, 4);
        s->have_cpu = 1;
    }
}
