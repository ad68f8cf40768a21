/* Floor 2 (par_policy.c): the parallel decode's policy -- which worker decodes which
 * thread, and which chunks a worker skips. The driver that runs the workers is par.c, at
 * the top. */
#ifndef PTC_DEC_PAR_H
#define PTC_DEC_PAR_H

#include "dec_core.h"

/* Whether this session counts things that belong to no thread (process-level chunks):
 * always when serial, only worker 0 of a parallel decode. */
static inline int ptc_par_primary(const struct ptc_session *s) { return s->par_k == 0; }
/* Whether this session decodes the events of thread (pid, tid): 1, 0, or -PTC_E_NOMEM. */
int ptc_par_owns(struct ptc_session *s, uint32_t pid, uint32_t tid);
/* Before a chunk is processed in a parallel worker: 1 to process it, 0 to skip it (another
 * worker's thread), or -PTC_E_* to give up the parallel decode (what it cannot split). */
int ptc_par_filter(struct ptc_session *s, const struct ptc_chunk *c);

#endif
