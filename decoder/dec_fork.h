/* Floor 3 (fork.c): the entry of a thread's events -- its first events, fork points, and
 * the events of fork children held until their fork point is known -- above the shadow
 * stacks (stack.c) that apply them. */
#ifndef PTC_DEC_FORK_H
#define PTC_DEC_FORK_H

#include "dec_core.h"

/* Feeds events of thread t, in its order. Returns 0 or -PTC_E_*. */
int ptc_thread_feed(struct ptc_session *s, struct thread *t, const struct ptc_ev *ev, size_t n);
/* Stops waiting for a fork point that will not come: replays from an empty stack. */
int ptc_fork_give_up(struct ptc_session *s, struct thread *t);

#endif
