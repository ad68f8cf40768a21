/* The sample_id trailer of perf's non-sample records (perf_event_attr.sample_id_all): the
 * fields of sample_type's TID, TIME, ID, STREAM_ID, CPU and IDENTIFIER bits, 8 bytes each,
 * at the end of the record. One reading for the PT front-end's sideband (pt_sideband.c) and
 * the perf.data reader (perf_data.c). */
#ifndef PTC_PERF_SAMPLE_H
#define PTC_PERF_SAMPLE_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

/* The sample_type bits that put a field in the trailer. */
#define PTC_PERF_SAMPLE_ID_BITS                                                              \
    (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |              \
     PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

struct ptc_perf_sid {
    uint32_t pid, tid, cpu;
    uint64_t time;
    int have_tid, have_time, have_cpu;
};

/* Bytes of the trailer for sample_type st. */
size_t ptc_perf_trailer_size(uint64_t st);
/* Reads the trailer that starts at p (ptc_perf_trailer_size(st) bytes). */
void ptc_perf_parse_trailer(const uint8_t *p, uint64_t st, struct ptc_perf_sid *s);

#endif
