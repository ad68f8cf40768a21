/* Lines of many threads merged into time order. Each thread's lines arrive in their own
 * time order but threads arrive interleaved as the trace's chunks hold them; lines wait in
 * a queue per thread, and the earliest head goes out once `window` lines are held. A line
 * that arrives later than an earlier line already out is counted, never dropped. A
 * one-thread trace costs a copy per line and no sorting. */
#ifndef PTCALL_LINEMERGE_H
#define PTCALL_LINEMERGE_H

#include <stddef.h>
#include <stdint.h>

#include "wbuf.h"

struct ptc_lm_queue;

struct ptc_linemerge {
    struct ptc_wbuf *out;
    size_t window, held;
    uint64_t seq, last_out, out_of_order;
    struct ptc_lm_queue **heap;    /* non-empty queues by their first line's time */
    size_t nheap, capheap;
    struct ptc_lm_queue *all;      /* every queue, to free */
};

void ptc_lm_init(struct ptc_linemerge *m, struct ptc_wbuf *out, size_t window);
/* A queue for one thread (owned by m). NULL when out of memory. */
struct ptc_lm_queue *ptc_lm_queue(struct ptc_linemerge *m);
/* Holds a line of q with time key. Returns 0, or -1 when out of memory. */
int ptc_lm_push(struct ptc_linemerge *m, struct ptc_lm_queue *q, uint64_t key, const char *text,
                size_t len);
/* Writes out every line held, in time order. */
void ptc_lm_flush(struct ptc_linemerge *m);
void ptc_lm_free(struct ptc_linemerge *m);

#endif
