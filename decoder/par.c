/* Parallel decode of a soft trace, split by threads: the shadow stacks of different threads
 * never meet (docs/trace-format.md section 7), so each of N workers -- a full session of its
 * own -- reads the whole file, keeps the process-level state (modules, processes, time bases,
 * sequence numbers) like a serial decode, but decodes (and CRC-checks) only the event chunks
 * of the threads given to it; the workers' figures are then added up. Which thread goes to
 * which worker, and what a worker skips, is par_policy.c's.
 *
 * What cannot be split -- a fork (the child's stack is its parent thread's), Intel PT
 * chunks, damage of any kind -- makes a worker give up, and the file is decoded serially
 * instead, so results and error messages are always exactly the serial ones. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dec_file.h"
#include "dec_par.h"
#include "dec_stack.h"
#include "dec_tables.h"

unsigned ptc_session_decode_threads(const struct ptc_session *s)
{
    return s->par_used ? s->par_used : 1;
}

static int give_up(struct ptc_session *s, const char *why)
{
    return ptc_session_set_error(s, PTC_E_UNSUPPORTED, "parallel decode: %s", why);
}

/* The reader's CRC filter: another worker checks (and decodes) this chunk. */
static int skip_crc(void *ctx, const struct ptc_chunk_header *h)
{
    struct ptc_session *s = ctx;
    return h->tid && h->type == PTC_CHUNK_SOFT_EVENTS && ptc_par_owns(s, h->pid, h->tid) == 0;
}

struct worker {
    struct ptc_session *s;
    const char *path;
    volatile int *stop;
    pthread_t th;
    int rc;
};

static void *work(void *arg)
{
    struct worker *w = arg;
    struct ptc_reader *r;
    int rc = ptc_reader_open(&r, w->path);
    if (!r) {
        w->rc = -PTC_E_NOMEM;
    } else {
        ptc_reader_set_crc_skip(r, skip_crc, w->s);
        w->rc = ptc_decode_reader(w->s, r, rc, 0, w->path);
    }
    if (w->rc)
        *w->stop = 1;
    return NULL;
}

/* Adds worker w's figures to d (worker 0). Returns 0 or -PTC_E_*. */
static int merge(struct ptc_session *d, const struct ptc_session *w)
{
    if (w->nfuncs != d->nfuncs) /* cannot happen: both read the same MODULE chunks */
        return give_up(d, "function tables differ");
    for (uint32_t f = 0; f < w->nfuncs; f++) {
        d->fstats[f].calls += w->fstats[f].calls;
        d->fstats[f].total += w->fstats[f].total;
        d->fstats[f].self += w->fstats[f].self;
        d->fstats[f].blocked += w->fstats[f].blocked;
    }
    struct ptc_edge *e;
    size_t n = ptc_session_edges(w, &e); /* with the calls pending in its edge cache */
    if (n == (size_t)-1)
        return ptc_nomem(d);
    for (size_t i = 0; i < n; i++)
        if (ptc_edge_add_count(d, e[i].caller, e[i].callee, e[i].count)) {
            free(e);
            return ptc_nomem(d);
        }
    free(e);
    struct ptc_totals *a = &d->tot;
    const struct ptc_totals *b = &w->tot;
    a->events += b->events;
    a->whole_calls += b->whole_calls;
    a->chunks += b->chunks;
    a->threads += b->threads;
    a->gaps += b->gaps;
    a->lost_events += b->lost_events;
    a->lost_other += b->lost_other;
    a->missing_chunks += b->missing_chunks;
    a->repairs += b->repairs;
    a->unwound += b->unwound;
    a->unmatched += b->unmatched;
    a->governed += b->governed;
    a->broken_frames += b->broken_frames;
    a->open_at_end += b->open_at_end;
    a->bad_stubs += b->bad_stubs;
    a->fork_unknown += b->fork_unknown;
    a->spawns += b->spawns;
    a->entered_before += b->entered_before;
    a->still_open += b->still_open;
    a->skipped_chunks += b->skipped_chunks;
    for (uint32_t i = 0; i < w->nmarks; i++) { /* ids are per worker: only counts matter */
        uint32_t id;
        if (ptc_mark_add(d, w->marks[i].label, &w->marks[i], &id))
            return ptc_nomem(d);
    }
    d->timed_events += w->timed_events;
    d->untimed_events += w->untimed_events;
    PTC_HTABLE_EACH(&w->threads, const struct thread, x)
        if (x->owner == w->par_k) {
            struct thread *y = ptc_thread_find(d, x->pid, x->tid);
            if (!y)
                return give_up(d, "thread tables differ");
            y->events += x->events;
            y->lost += x->lost;
            y->gaps += x->gaps;
            /* its window, which only its worker read (ptc_session_windows) */
            y->before += x->before;
            y->still_open += x->still_open;
            y->has_window = x->has_window;
            y->win = x->win;
            y->first_tsc = x->first_tsc;
            y->has_first = x->has_first;
            y->last = x->last;
            y->end_tsc = x->end_tsc;
            y->has_end = x->has_end;
        }
    return 0;
}

/* Moves worker 0's tables into s, keeping what the caller set on s (chunk handlers). */
static void adopt(struct ptc_session *s, struct ptc_session *w0)
{
    struct ptc_session keep = *s;
    *s = *w0;
    memcpy(s->handlers, keep.handlers, sizeof(s->handlers));
    s->nhandlers = keep.nhandlers;
    s->hook = keep.hook;
    s->hook_ctx = keep.hook_ctx;
    s->hit_hook = keep.hit_hook;
    s->hit_ctx = keep.hit_ctx;
    s->end_hook = keep.end_hook;
    s->end_hook_ctx = keep.end_hook_ctx;
    s->par_n = 0;
    s->par_k = 0;
    s->par_stop = NULL;
    s->finished = 0; /* so that the handlers' finish callbacks run */
    free(w0);        /* the shell: its tables are s's now */
}

int ptc_decode_file_threads(struct ptc_session *s, const char *path, unsigned flags,
                            unsigned nthreads)
{
    if (!s || !path)
        return -PTC_E_ARG;
    if (nthreads == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        nthreads = n > 0 ? (unsigned)n : 1;
    }
    if (nthreads > PTC_PAR_MAX)
        nthreads = PTC_PAR_MAX;
    /* what needs the serial order of every event, or a session already in use */
    if (nthreads < 2 || (flags & PTC_DECODE_SALVAGE) || s->hook || s->end_hook || s->hit_hook ||
        s->nfuncs ||
        s->tot.chunks)
        return ptc_decode_file(s, path, flags);
    struct worker w[PTC_PAR_MAX];
    volatile int stop = 0;
    unsigned started = 0, made = 0;
    int ok = 1;
    for (; made < nthreads; made++) {
        w[made].s = ptc_session_new();
        if (!w[made].s) {
            ok = 0;
            break;
        }
        w[made].s->par_k = made;
        w[made].s->par_n = nthreads;
        w[made].s->par_stop = &stop;
        w[made].path = path;
        w[made].stop = &stop;
        w[made].rc = 0;
    }
    for (unsigned k = 1; ok && k < nthreads; k++, started++)
        if (pthread_create(&w[k].th, NULL, work, &w[k])) {
            stop = 1;
            ok = 0;
            break;
        }
    if (ok)
        work(&w[0]); /* worker 0 on this thread */
    for (unsigned k = 1; k <= started; k++)
        pthread_join(w[k].th, NULL);
    for (unsigned k = 0; ok && k < nthreads; k++)
        if (w[k].rc)
            ok = 0;
    unsigned used = 0;
    for (unsigned k = 0; ok && k < nthreads; k++)
        used += w[k].s->tot.events != 0;
    for (unsigned k = 1; ok && k < nthreads; k++)
        if (merge(w[0].s, w[k].s))
            ok = 0;
    for (unsigned k = ok ? 1 : 0; k < made; k++)
        ptc_session_free(w[k].s);
    if (!ok) /* decode serially: the exact serial result, or error */
        return ptc_decode_file(s, path, flags);
    adopt(s, w[0].s);
    s->par_used = used;
    return ptc_session_finish(s);
}
