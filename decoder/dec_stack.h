/* Floor 2 (stack.c): shadow stacks and call accounting -- how the events of a thread that
 * is ready for them change its stack and the session's figures. Starting threads, fork
 * points and held events are one floor up (fork.c). */
#ifndef PTC_DEC_STACK_H
#define PTC_DEC_STACK_H

#include "dec_core.h"

/* Calls the call hook (s->hook, which must be set) with one event of t; inherited holds the
 * frame's FR_INHERITED and FR_BEFORE flags. */
PTC_NOINLINE void ptc_emit(struct ptc_session *s, struct thread *t, uint8_t kind, uint8_t how,
                           uint32_t depth, uint32_t func, uint64_t dur, uint64_t count,
                           int inherited);
/* Starts t's stack from a copy of n frames inherited across fork. Returns 0 or -PTC_E_*. */
int ptc_thread_start_from(struct ptc_session *s, struct thread *t, const struct frame *fr,
                          uint32_t n);
/* Applies ev[0..n) to t, which is started and not waiting, up to the first FORK event: a
 * fork point is fork.c's to handle. *done is the number applied (n when there is no FORK);
 * the hits and timed hits among them are added to *hits and *timed, which the caller adds
 * to the totals once its whole batch went through. Returns 0 or -PTC_E_*. */
int ptc_stack_apply(struct ptc_session *s, struct thread *t, const struct ptc_ev *ev, size_t n,
                    size_t *done, uint64_t *hits, uint64_t *timed);
/* Closes t's open frames and drops its stack (deferred while t waits for a fork point). */
void ptc_thread_end(struct ptc_session *s, struct thread *t);
/* Counts one call on the edge caller -> callee when it is not the caller's cached edge,
 * and makes it the cached one. Returns 0 or -PTC_E_NOMEM. */
PTC_NOINLINE int ptc_edge_count(struct ptc_session *s, uint32_t caller, uint32_t callee);
/* Adds count calls on caller -> callee (merging workers). Returns 0 or -PTC_E_NOMEM. */
int ptc_edge_add_count(struct ptc_session *s, uint32_t caller, uint32_t callee, uint64_t count);
/* Applies one stub hit of t at time t->last (any kind, any stack state; bad ids are gaps).
 * Does not count it in the event totals. Returns 0 or -PTC_E_*. */
PTC_NOINLINE int ptc_thread_hit(struct ptc_session *s, struct thread *t, uint32_t id);
/* The soft front-end's general loop: every hit through ptc_thread_hit's code, which a call
 * hook needs (soft_fast.c's specialised loop is compared with it in the tests); same
 * contract as ptc_thread_soft_fast() (dec_soft.h). */
int ptc_thread_soft_hooked(struct ptc_session *s, struct thread *t, const uint8_t **pp,
                           const uint8_t *end, int timed, uint64_t *tsc, uint64_t *records);

/* Counts a batch of n decoded soft records of thread t (both soft loops end with it). */
static inline void ptc_count_batch(struct ptc_session *s, struct thread *t, uint64_t n, int timed,
                                   uint64_t *records)
{
    *records += n;
    t->events += n;
    s->tot.events += n;
    if (timed)
        s->timed_events += n;
    else
        s->untimed_events += n;
}

/* Counts n whole-call records (PTC_STUB_CALL) of thread t: each stands for an exit too, one
 * event more than ptc_count_batch counted for it. */
static inline void ptc_count_whole(struct ptc_session *s, struct thread *t, uint64_t n)
{
    s->tot.whole_calls += n;
    s->tot.events += n;
    t->events += n;
}

static inline int ptc_thread_ready(const struct thread *t)
{
    return t->started && !t->ended && !t->waiting;
}

#endif
