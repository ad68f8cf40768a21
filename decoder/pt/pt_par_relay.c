/* Parallel decode of one stream (ptc_pt_par_decode with ns == 1): a relay.
 *
 * Every thread (the calling one and nthreads - 1 workers) repeatedly claims the next piece
 * of the stream (PSB to PSB, about piece_bytes), decodes it into its own decoder's queue,
 * waits for its turn - the previous piece's items handed out - and then hands its items to
 * fn itself, applies the join's one fix-up (pt_par.c: a first TIP.PGE that ends an
 * interrupt the previous piece began) and passes the turn on. When the turn comes while the
 * piece is still being decoded, the rest goes out span by span (decode_claimed).
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
        *b = t >= s->len ? s->len : ptc_pt_find_span_psb(s->buf, s->len, t);
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

/* Where in d's queue the first hit is one serially ending an interrupt the previous pieces
 * began (SIZE_MAX: none); valid while the piece's first items have not been taken. */
static size_t resume_item(const struct relay *r, const struct ptc_pt_sdec *d)
{
    const struct ptc_pt_interp *in = ptc_pt_sdec_interp(d);
    if (in->first_seen && in->first_item != SIZE_MAX && r->have_resume &&
        r->resume_ip == in->first_ip)
        return in->first_item;
    return SIZE_MAX;
}

/* Hands n items to fn, leaving out item drop (the turn is ours). */
static int hand_out(struct relay *r, const struct ptc_pt_item *q, size_t n, size_t drop)
{
    int rc = 0;
    if (drop < n) {
        if (drop > 0)
            rc = r->fn(r->ctx, 0, q, drop);
        if (!rc && drop + 1 < n)
            rc = r->fn(r->ctx, 0, q + drop + 1, n - drop - 1);
    } else if (n) {
        rc = r->fn(r->ctx, 0, q, n);
    }
    return rc;
}

/* A piece is all out: its counts join the stream's, and its end state is where the next
 * piece starts (the turn is ours). */
static void piece_out(struct relay *r, const struct ptc_pt_sdec *d, int dropped)
{
    const struct ptc_pt_interp *in = ptc_pt_sdec_interp(d);
    struct ptc_pt_stream_stats st = *ptc_pt_sdec_stats(d);
    if (dropped) { /* serially, that TIP.PGE ended an interrupt */
        st.hits--;
        st.resumes++;
    }
    if (in->touched) {
        r->have_resume = in->have_resume;
        r->resume_ip = in->resume_ip;
    }
    ptc_pt_par_add_stats(&r->s->st, &st);
}

/* Hands a decoded piece's items to fn (the turn is ours). */
static int deliver(struct relay *r, struct ptc_pt_sdec *d)
{
    size_t drop = resume_item(r, d);
    const struct ptc_pt_item *q;
    size_t n = ptc_pt_sdec_take(d, &q);
    piece_out(r, d, drop != SIZE_MAX);
    return hand_out(r, q, n, drop);
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

/* one thread's pieces: decoded and waiting for their turn, oldest first; and decoders of
 * pieces handed out, for reuse */
struct hand {
    struct held h[AHEAD];
    int n;
    struct ptc_pt_sdec *spare[AHEAD + 1];
    int nspare;
};

static int turn_is(struct relay *r, uint64_t k)
{
    return atomic_load_explicit(&r->turn, memory_order_acquire) == k;
}

/* Hands out the held pieces whose turn has come, in order. */
static void deliver_held(struct relay *r, struct hand *t)
{
    while (t->n && turn_is(r, t->h[0].k) && !atomic_load(&r->stop)) {
        int rc = t->h[0].rc ? t->h[0].rc : deliver(r, t->h[0].d);
        pass_turn(r, t->h[0].k, rc);
        if (t->h[0].d)
            t->spare[t->nspare++] = t->h[0].d;
        memmove(&t->h[0], &t->h[1], (size_t)(--t->n) * sizeof(t->h[0]));
    }
}

/* Decodes piece k a span at a time (first_open: it starts at a cut, where the pieces before
 * decide what its first TIP.PGE is). Between spans, held
 * pieces whose turn has come go out; once piece k's own turn comes - and whether its
 * first hit ends an interrupt is known - what it has decoded goes out, and from then on
 * each span's items as soon as they are decoded, still in this core's L1 cache: handing
 * out a whole decoded piece reads back from L2 four times its bytes (40-byte items), a
 * tenth of a thread's time. Returns 1 when the piece went out (its turn passed), 0 when it
 * is decoded and waits to be held, -1 when its decode failed before it went out. */
static int decode_claimed(struct relay *r, struct hand *t, struct ptc_pt_sdec *d, uint64_t k,
                          int first_open)
{
    ptc_pt_sdec_begin_piece(d, first_open);
    const struct ptc_pt_interp *in = ptc_pt_sdec_interp(d);
    int going = 0, dropped = 0, rc = 0;
    for (;;) {
        int s = ptc_pt_sdec_piece_step(d);
        if (s < 0 && !going)
            return -1;
        if (s < 0) {
            rc = -1;
            break;
        }
        if (!going) {
            deliver_held(r, t);
            if (!t->n && !in->first_open && turn_is(r, k) && !atomic_load(&r->stop)) {
                size_t drop = resume_item(r, d);
                dropped = drop != SIZE_MAX;
                const struct ptc_pt_item *q;
                size_t n = ptc_pt_sdec_take(d, &q);
                going = 1;
                if ((rc = hand_out(r, q, n, drop)))
                    break;
            }
        } else {
            const struct ptc_pt_item *q;
            size_t n = ptc_pt_sdec_take(d, &q);
            if ((rc = hand_out(r, q, n, SIZE_MAX)))
                break;
        }
        if (!s)
            break;
    }
    if (!going)
        return 0;
    piece_out(r, d, dropped);
    pass_turn(r, k, rc);
    return 1;
}

static void *run(void *arg)
{
    struct relay *r = arg;
    struct hand t;
    t.n = t.nspare = 0;
    for (;;) {
        deliver_held(r, &t);
        if (atomic_load(&r->stop))
            break;
        uint64_t k, a, b;
        if (t.n < AHEAD && claim(r, &k, &a, &b)) {
            const uint8_t *p = r->s->buf + a;
            struct ptc_pt_sdec *d = t.nspare ? t.spare[--t.nspare] : NULL;
            if (d)
                ptc_pt_sdec_reuse_at(d, p, (size_t)(b - a), a, b < r->s->len);
            else
                d = ptc_pt_sdec_new_at(r->cfg, p, (size_t)(b - a), a, b < r->s->len);
            int got = d ? decode_claimed(r, &t, d, k, a > 0) : -1;
            if (got == 1) {
                t.spare[t.nspare++] = d;
                continue;
            }
            t.h[t.n++] = (struct held){d, k, got};
            continue;
        }
        if (!t.n || !wait_turn(r, t.h[0].k))
            break; /* the stream is done, or stop */
    }
    for (int i = 0; i < t.n; i++)
        ptc_pt_sdec_free(t.h[i].d);
    for (int i = 0; i < t.nspare; i++)
        ptc_pt_sdec_free(t.spare[i]);
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
