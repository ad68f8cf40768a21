/* The soft front-end: floor 3 (soft_fast.c) its fast loop, floor 4 (soft.c) the
 * PTC_CHUNK_SOFT_EVENTS decoder that drives it. */
#ifndef PTC_DEC_SOFT_H
#define PTC_DEC_SOFT_H

#include "dec_core.h"

/* Applies the records at *pp directly to a started thread that is not waiting for a fork
 * point, while they are stub hits; stops before a control record (LOSS, FORK) or an
 * undecodable one (and the hooked loop before any value longer than 2 bytes), leaving *pp
 * there. Adds the hits to *records and the deltas to *tsc. Returns 0 or -PTC_E_*. Sessions
 * with a call hook take ptc_thread_soft_hooked() (stack.c). */
int ptc_thread_soft_fast(struct ptc_session *s, struct thread *t, const uint8_t **pp,
                         const uint8_t *end, int timed, uint64_t *tsc, uint64_t *records);
/* One PTC_CHUNK_SOFT_EVENTS chunk. Returns 0 or -PTC_E_*. */
int ptc_soft_chunk(struct ptc_session *s, const struct ptc_chunk *c);

#endif
