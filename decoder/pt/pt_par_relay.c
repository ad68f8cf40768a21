/* Parallel decode of one stream (ptc_pt_par_decode with ns == 1): a relay.
 *
 * Every thread (the calling one and nthreads - 1 workers) repeatedly claims the next piece
 * of the stream (PSB to PSB, about piece_bytes), decodes it into its own decoder's queue,
 * waits for its turn - the previous piece's items handed out - and then hands its items to
 * fn itself, applies the join's one fix-up (pt_par.c: a first TIP.PGE that ends an
 * interrupt the previous piece began) and passes the turn on.
 *
 * Why not one merging thread, as for several streams: with a single stream there is
 * nothing to merge, only an order to keep, and a merging thread made every item cross from
 * the core that decoded it to the core that delivers it - 40 bytes per hit read back from
 * another core's cache, which cost as much as decoding it and left the parallel decode
 * slower than one thread. Here items are handed out while they are still in the cache of
 * the thread that wrote them, and threads meet once per piece, not per item. Memory stays
 * bounded: AHEAD pieces per thread. fn calls never overlap and keep the order; they come
 * from whichever thread holds the turn (the mutex orders each call after the one before). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "pt_interp.h"
#include "pt_par_int.h"

struct relay {
    const struct ptc_pt_dcfg *cfg;
    struct ptc_pt_par_stream *s;
    size_t piece_bytes;
    ptc_pt_par_fn fn;
    void *ctx;
    pthread_mutex_t mu;     /* claims, the turn and what the delivered pieces leave */
    pthread_cond_t cv;      /* the turn moved (or stop) */
    uint64_t next_start;    /* where the next unclaimed piece starts */
    uint64_t claimed;       /* pieces claimed so far */
    _Atomic uint64_t turn;  /* the piece whose items go out next (written under mu) */
    atomic_int stop;
    int sleepers;           /* threads in cv_wait */
    int rc;
    int have_resume;        /* resume state at the end of the pieces delivered so far */
    uint64_t resume_ip;
};

/* The next piece: [*a, *b), its number; 0 when the stream is done. */
static int claim(struct relay *r, uint64_t *k, uint64_t *a, uint64_t *b)
{
    const struct ptc_pt_par_stream *s = r->s;
    pthread_mutex_lock(&r->mu);
    int ok = !atomic_load(&r->stop) && r->next_start < s->len;
    if (ok) {
        *k = r->claimed++;
        *a = r->next_start;
        size_t t = (size_t)*a + r->piece_bytes;
        *b = t >= s->len ? s->len : ptc_pt_find_psb(s->buf, s->len, t);
        r->next_start = *b;
    }
    pthread_mutex_unlock(&r->mu);
    return ok;
}

/* Waits until piece k may go out. Spins first: the wait is usually the other thread
 * handing out its piece, shorter than a sleep and wake-up (system calls, slow on a VM).
 * But briefly (a few microseconds): when the thread it waits for is not running (a
 * shared machine), every spin is CPU taken from it. */
#define SPIN 256
static int wait_turn(struct relay *r, uint64_t k)
{
    for (int i = 0; i < SPIN; i++) {
        if (atomic_load_explicit(&r->turn, memory_order_acquire) == k)
            return !atomic_load(&r->stop);
        if (atomic_load_explicit(&r->stop, memory_order_relaxed))
            return 0;
        __builtin_ia32_pause();
    }
    pthread_mutex_lock(&r->mu);
    r->sleepers++;
    while (atomic_load(&r->turn) != k && !atomic_load(&r->stop))
        pthread_cond_wait(&r->cv, &r->mu);
    r->sleepers--;
    pthread_mutex_unlock(&r->mu);
    return !atomic_load(&r->stop);
}

static void pass_turn(struct relay *r, uint64_t k, int rc)
{
    pthread_mutex_lock(&r->mu);
    if (rc) {
        if (!r->rc)
            r->rc = rc;
        atomic_store(&r->stop, 1);
    }
    atomic_store_explicit(&r->turn, k + 1, memory_order_release);
    if (r->sleepers)
        pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

/* Hands piece d's items to fn (the turn is ours). */
static int deliver(struct relay *r, const struct ptc_pt_sdec *d)
{
    const struct ptc_pt_interp *in = ptc_pt_sdec_interp(d);
    struct ptc_pt_stream_stats st = *ptc_pt_sdec_stats(d);
    size_t drop = SIZE_MAX;
    if (in->first_seen && in->first_item != SIZE_MAX && r->have_resume &&
        r->resume_ip == in->first_ip) {
        drop = in->first_item; /* serially, this TIP.PGE ends an interrupt */
        st.hits--;
        st.resumes++;
    }
    if (in->touched) {
        r->have_resume = in->have_resume;
        r->resume_ip = in->resume_ip;
    }
    ptc_pt_par_add_stats(&r->s->st, &st);
    int rc = 0;
    size_t n = in->qn;
    if (drop < n) {
        if (drop > 0)
            rc = r->fn(r->ctx, 0, in->q, drop);
        if (!rc && drop + 1 < n)
            rc = r->fn(r->ctx, 0, in->q + drop + 1, n - drop - 1);
    } else if (n) {
        rc = r->fn(r->ctx, 0, in->q, n);
    }
    return rc;
}

/* Pieces a thread holds: the oldest waits for its turn while the next is decoded, so a
 * thread whose turn has not come works on instead of waiting (the other thread may be
 * handing out its piece, or be descheduled on a shared machine). */
#define AHEAD 2

struct held {
    struct ptc_pt_sdec *d;
    uint64_t k;
    int rc;
};

static int turn_is(struct relay *r, uint64_t k)
{
    return atomic_load_explicit(&r->turn, memory_order_acquire) == k;
}

static void *run(void *arg)
{
    struct relay *r = arg;
    struct held h[AHEAD];      /* claimed and decoded, oldest first */
    struct ptc_pt_sdec *spare[AHEAD];
    int n = 0, nspare = 0;
    for (;;) {
        while (n && turn_is(r, h[0].k) && !atomic_load(&r->stop)) {
            int rc = h[0].rc ? h[0].rc : deliver(r, h[0].d);
            pass_turn(r, h[0].k, rc);
            if (h[0].d)
                spare[nspare++] = h[0].d;
            memmove(&h[0], &h[1], (size_t)(--n) * sizeof(h[0]));
        }
        if (atomic_load(&r->stop))
            break;
        uint64_t k, a, b;
        if (n < AHEAD && claim(r, &k, &a, &b)) {
            const uint8_t *p = r->s->buf + a;
            struct ptc_pt_sdec *d = nspare ? spare[--nspare] : NULL;
            if (d)
                ptc_pt_sdec_reuse_at(d, p, (size_t)(b - a), a);
            else
                d = ptc_pt_sdec_new_at(r->cfg, p, (size_t)(b - a), a);
            h[n].d = d;
            h[n].k = k;
            h[n].rc = d ? ptc_pt_sdec_run_piece(d, a > 0) : -1;
            n++;
            continue;
        }
        if (!n || !wait_turn(r, h[0].k))
            break; /* the stream is done, or stop */
    }
    for (int i = 0; i < n; i++)
        ptc_pt_sdec_free(h[i].d);
    for (int i = 0; i < nspare; i++)
        ptc_pt_sdec_free(spare[i]);
    return NULL;
}

int ptc_pt_par_relay(const struct ptc_pt_dcfg *cfg, struct ptc_pt_par_stream *s,
                     int nthreads, size_t piece_bytes, ptc_pt_par_fn fn, void *ctx)
{
    struct relay r;
    memset(&r, 0, sizeof(r));
    r.cfg = cfg;
    r.s = s;
    r.piece_bytes = piece_bytes;
    r.fn = fn;
    r.ctx = ctx;
    atomic_init(&r.turn, 0);
    atomic_init(&r.stop, 0);
    memset(&s->st, 0, sizeof(s->st));
    pthread_t *th = calloc((size_t)nthreads, sizeof(*th));
    if (!th)
        return -1;
    pthread_mutex_init(&r.mu, NULL);
    pthread_cond_init(&r.cv, NULL);
    int started = 0;
    for (int t = 0; t + 1 < nthreads; t++) { /* the calling thread is the last one */
        if (pthread_create(&th[t], NULL, run, &r))
            break; /* fewer helpers: slower, not wrong */
        started++;
    }
    run(&r);
    for (int t = 0; t < started; t++)
        pthread_join(th[t], NULL);
    pthread_mutex_destroy(&r.mu);
    pthread_cond_destroy(&r.cv);
    free(th);
    return r.rc;
}
