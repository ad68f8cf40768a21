/* Internal to the parallel decode (pt_par.c: several streams, merged by time;
 * pt_par_relay.c: one stream, handed out in order by the threads that decoded it). */
#ifndef PTC_PT_PAR_INT_H
#define PTC_PT_PAR_INT_H

#include "ptc_pt_decode.h"

void ptc_pt_par_add_stats(struct ptc_pt_stream_stats *t, const struct ptc_pt_stream_stats *s);

int ptc_pt_par_relay(const struct ptc_pt_dcfg *cfg, struct ptc_pt_par_stream *s,
                     int nthreads, size_t piece_bytes, ptc_pt_par_fn fn, void *ctx);

#endif
