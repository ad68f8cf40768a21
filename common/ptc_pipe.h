/* A pipe of batches between two threads: the producer fills fixed-size slots and hands them
 * over; a worker thread it starts consumes them in order. Splitting a stream's work over two
 * cores this way is what lets `ptcall bandwidth` and `ptcall calls` decode on one thread while
 * the other counts packets or formats lines. Without a second thread (pthread_create failed)
 * every slot is consumed on the producer's thread as it is handed over: the same result. */
#ifndef PTC_PIPE_H
#define PTC_PIPE_H

#include <stddef.h>

struct ptc_pipe;

/* A pipe of nslots slots of slot_size bytes, consumed by consume(ctx, slot). Returns NULL
 * when out of memory. */
struct ptc_pipe *ptc_pipe_new(size_t slot_size, unsigned nslots,
                              void (*consume)(void *ctx, void *slot), void *ctx);
/* The slot the producer fills (the same one until the next ptc_pipe_put). */
void *ptc_pipe_slot(struct ptc_pipe *p);
/* Hands the filled slot over and returns the next one to fill (waits while all are full). */
void *ptc_pipe_put(struct ptc_pipe *p);
/* Waits until every slot handed over is consumed and stops the worker. Idempotent; the
 * consumer's state may be read afterwards. */
void ptc_pipe_drain(struct ptc_pipe *p);
/* Drains and frees. */
void ptc_pipe_free(struct ptc_pipe *p);

#endif
