/* The policy of a parallel decode (par.c runs it): which worker decodes which thread, and
 * which chunks a worker leaves to the others. Threads go to the worker with the fewest
 * event bytes so far, decided from chunk headers that every worker sees in the same order,
 * so all agree without talking to each other. What cannot be split makes a worker give up
 * (par.c then decodes serially). */
#include <string.h>

#include "dec_par.h"
#include "dec_tables.h"

/* The worker a new thread goes to (the least loaded so far). */
static uint32_t assign(struct ptc_session *s)
{
    /* threads often announce themselves (THREAD START) before any of their events: ties
     * of load go to the worker with fewer threads */
    uint32_t best = 0;
    for (uint32_t k = 1; k < s->par_n; k++)
        if (s->par_load[k] < s->par_load[best] ||
            (s->par_load[k] == s->par_load[best] && s->par_nthr[k] < s->par_nthr[best]))
            best = k;
    s->par_nthr[best]++;
    return best;
}

/* Thread (pid, tid), added if new, with its worker. In a worker every thread is first met
 * here -- the reader's CRC filter (par.c) asks ptc_par_owns() about each event chunk,
 * ptc_par_filter() sees every chunk of a thread before it is decoded, and a LOSS chunk
 * names its thread through ptc_par_owns() -- so threads get their workers in file order,
 * the same in every worker. */
static struct thread *par_thread(struct ptc_session *s, uint32_t pid, uint32_t tid)
{
    struct thread *t = ptc_thread_get(s, pid, tid);
    if (t && !t->assigned) {
        t->owner = assign(s);
        t->assigned = 1;
    }
    return t;
}

int ptc_par_owns(struct ptc_session *s, uint32_t pid, uint32_t tid)
{
    struct thread *t = par_thread(s, pid, tid); /* every worker adds it, in file order */
    if (!t)
        return ptc_nomem(s);
    return t->owner == s->par_k;
}

static int give_up(struct ptc_session *s, const char *why)
{
    return ptc_session_set_error(s, PTC_E_UNSUPPORTED, "parallel decode: %s", why);
}

int ptc_par_filter(struct ptc_session *s, const struct ptc_chunk *c)
{
    if (*s->par_stop)
        return give_up(s, "another worker gave up");
    if (s->backend != PTC_BACKEND_SOFT || c->h.type >= PTC_CHUNK_PT_FIRST)
        return give_up(s, "not a soft trace");
    if (c->h.type == PTC_CHUNK_PROCESS && c->h.payload_size >= 8) {
        uint32_t how;
        memcpy(&how, (const uint8_t *)c->payload + 4, 4);
        if (how == PTC_PROC_FORK)
            return give_up(s, "fork");
    }
    if (!c->h.tid)
        return 1;
    struct thread *t = par_thread(s, c->h.pid, c->h.tid);
    if (!t)
        return ptc_nomem(s);
    if (c->h.type == PTC_CHUNK_SOFT_EVENTS)
        s->par_load[t->owner] += c->h.payload_size;
    return t->owner == s->par_k;
}
