/* Floor 2 (window.c): traces that do not hold a thread's whole life (docs/trace-format.md
 * 4.17 and 4.19): WINDOW and SNAPSHOT chunks into the session's tables, and the queries
 * views ask about them. The shadow stacks' side (calls entered before a window, frames
 * closed at its end) is stack.c's. */
#ifndef PTC_DEC_WINDOW_H
#define PTC_DEC_WINDOW_H

#include "dec_core.h"

/* A WINDOW chunk's payload for thread (pid, tid). Returns 0 or -PTC_E_*. */
int ptc_window_chunk(struct ptc_session *s, uint32_t pid, uint32_t tid, const void *payload,
                     size_t size);
/* A SNAPSHOT chunk's payload for process pid. Returns 0 or -PTC_E_*. */
int ptc_snapshot_chunk(struct ptc_session *s, uint32_t pid, const void *payload, size_t size);
/* When thread t's trace ended while it may still have run (its THREAD exit chunk, its
 * process's PROCESS_END, its WINDOW's end): its open frames close then. */
void ptc_window_set_end(struct thread *t, uint64_t tsc);
/* Whether t is a window of its thread's life (attach, snapshot, WINDOW chunk). */
int ptc_window_of(const struct thread *t);
/* Frees the session's snapshot list. */
void ptc_window_free(struct ptc_session *s);

#endif
