/* Internal to the parallel decode (pt_par.c: several streams, merged by time;
 * pt_par_relay.c: one stream, handed out in order by the threads that decoded it). */
#ifndef PTC_PT_PAR_INT_H
#define PTC_PT_PAR_INT_H

#include "ptc_pt_decode.h"

/* Adds the figures of s to t. Inline, so that pt_par_relay.c, which pt_par.c calls, does not
 * call back up into pt_par.c for it. */
static inline void ptc_pt_par_add_stats(struct ptc_pt_stream_stats *t,
                                        const struct ptc_pt_stream_stats *s)
{
    t->bytes += s->bytes;
    t->hits += s->hits;
    t->gaps += s->gaps;
    t->ovf += s->ovf;
    t->truncations += s->truncations;
    t->lost_bytes += s->lost_bytes;
    t->decode_errors += s->decode_errors;
    t->resumes += s->resumes;
    t->stray += s->stray;
    t->spans += s->spans;
    t->spans_libipt += s->spans_libipt;
    t->skipped_bytes += s->skipped_bytes;
}

int ptc_pt_par_relay(const struct ptc_pt_dcfg *cfg, struct ptc_pt_par_stream *s,
                     int nthreads, size_t piece_bytes, ptc_pt_par_fn fn, void *ctx);

#endif
