/* Parallel decode (DESIGN decision 6): per-CPU streams and the PSB-delimited pieces inside
 * them decode independently on worker threads; the calling thread joins the pieces of each
 * stream in order and merges the streams by time.
 *
 * Why pieces are independent: at a PSB the last IP is reset, PSB+ restates the time (TSC,
 * TMA, CBR) and the "suspect IP" state ends. The one thing that crosses a PSB is an
 * interrupt taken on a stub (FUP + TIP.PGD, then PSB, then the resume TIP.PGE): a piece
 * decodes its first TIP.PGE as a hit and remembers it, and the join drops that hit when
 * the previous piece ended inside such an interrupt at the same stub. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "pt_interp.h"
#include "pt_par_int.h"

struct piece {
    size_t stream;
    uint64_t a, b;             /* stream positions: [a, b) starts at a PSB (or at 0) */
    struct ptc_pt_sdec *d;     /* decoded piece, until the consumer is done with it */
    int state;                 /* 0 waiting, 1 being decoded, 2 done, 3 failed */
    double frac;               /* a / stream length: the decode order */
};

struct par {
    const struct ptc_pt_dcfg *cfg;
    struct ptc_pt_par_stream *s;
    struct piece *p;
    size_t np, next;
    size_t ready, window;      /* pieces decoded and not yet consumed, and their limit */
    int stop;
    struct ptc_pt_sdec **spare; /* decoders of consumed pieces, for reuse */
    size_t nspare, spare_cap;
    pthread_mutex_t mu;
    /* Two conditions, each signalled only when its waiter can go on: wake-ups are system
     * calls, and on a VM they cost tens of microseconds - per piece, that was 15% */
    pthread_cond_t cv_work;    /* the window has room again (workers wait) */
    pthread_cond_t cv_cons;    /* the piece the consumer waits for is decoded */
    const struct piece *want;  /* that piece */
    int work_waiting;
};

/* called with the mutex held; decodes without it */
static struct ptc_pt_sdec *decode_piece(struct par *x, const struct piece *pc)
{
    struct ptc_pt_sdec *d = x->nspare ? x->spare[--x->nspare] : NULL;
    pthread_mutex_unlock(&x->mu);
    const struct ptc_pt_par_stream *st = &x->s[pc->stream];
    if (d)
        ptc_pt_sdec_reuse_at(d, st->buf + pc->a, (size_t)(pc->b - pc->a), pc->a,
                             pc->b < st->len);
    else
        d = ptc_pt_sdec_new_at(x->cfg, st->buf + pc->a, (size_t)(pc->b - pc->a), pc->a,
                               pc->b < st->len);
    if (d && ptc_pt_sdec_run_piece(d, pc->a > 0)) {
        ptc_pt_sdec_free(d);
        d = NULL;
    }
    pthread_mutex_lock(&x->mu);
    return d;
}

/* a consumed piece's decoder goes back for reuse (mutex held) */
static void retire(struct par *x, struct ptc_pt_sdec *d)
{
    if (x->nspare == x->spare_cap) {
        size_t c = x->spare_cap ? 2 * x->spare_cap : 8;
        void *v = realloc(x->spare, c * sizeof(*x->spare));
        if (!v) {
            ptc_pt_sdec_free(d);
            return;
        }
        x->spare = v;
        x->spare_cap = c;
    }
    x->spare[x->nspare++] = d;
}

/* Takes the next piece nobody has taken and decodes it (mutex held). Returns 0 when there
 * is none. */
static int take_one(struct par *x)
{
    while (x->next < x->np && x->p[x->next].state != 0)
        x->next++; /* the consumer took it */
    if (x->next >= x->np)
        return 0;
    struct piece *pc = &x->p[x->next++];
    pc->state = 1;
    struct ptc_pt_sdec *d = decode_piece(x, pc);
    pc->d = d;
    pc->state = d ? 2 : 3;
    x->ready++;
    if (x->want == pc)
        pthread_cond_signal(&x->cv_cons);
    return 1;
}

static void *worker(void *arg)
{
    struct par *x = arg;
    pthread_mutex_lock(&x->mu);
    for (;;) {
        while (!x->stop && x->ready >= x->window) {
            x->work_waiting++; /* keep memory bounded: wait for the consumer */
            pthread_cond_wait(&x->cv_work, &x->mu);
            x->work_waiting--;
        }
        if (x->stop || !take_one(x))
            break;
    }
    pthread_mutex_unlock(&x->mu);
    return NULL;
}

/* cut points: PSBs about piece_bytes apart */
static int plan(struct par *x, size_t ns, size_t piece_bytes)
{
    size_t cap = 16;
    x->p = malloc(cap * sizeof(*x->p));
    if (!x->p)
        return -1;
    for (size_t i = 0; i < ns; i++) {
        const struct ptc_pt_par_stream *s = &x->s[i];
        uint64_t a = 0;
        while (a < s->len) {
            size_t t = (size_t)a + piece_bytes;
            uint64_t b = t >= s->len ? s->len : ptc_pt_find_span_psb(s->buf, s->len, t);
            if (x->np == cap) {
                cap *= 2;
                void *v = realloc(x->p, cap * sizeof(*x->p));
                if (!v)
                    return -1;
                x->p = v;
            }
            x->p[x->np++] = (struct piece){.stream = i, .a = a, .b = b,
                                           .frac = (double)a / (double)s->len};
            a = b;
        }
    }
    return 0;
}

/* decode order: by how far into its stream a piece starts, so streams advance together */
static int cmp_piece(const void *l, const void *r)
{
    const struct piece *x = l, *y = r;
    if (x->frac != y->frac)
        return x->frac < y->frac ? -1 : 1;
    if (x->stream != y->stream)
        return x->stream < y->stream ? -1 : 1;
    return x->a < y->a ? -1 : x->a > y->a;
}

struct cursor {
    size_t *order;             /* indexes of this stream's pieces, in stream order */
    size_t n, k;               /* pieces, current one */
    const struct ptc_pt_item *it;
    int open;                  /* the current piece is joined (it may have no items) */
    size_t i, m;               /* position in the current piece's items */
    int have_resume;           /* resume state at the end of the pieces joined so far */
    uint64_t resume_ip;
    size_t drop;               /* item index in the current piece that was a resume */
};

/* Makes the cursor's current item valid: waits for pieces, joins them. 1 = item, 0 = the
 * stream is finished, -1 = a piece failed. Called with the mutex held. */
static int head(struct par *x, struct cursor *c, size_t si)
{
    while (c->i >= c->m) {
        if (c->open) { /* done with the current piece */
            struct piece *pc = &x->p[c->order[c->k]];
            retire(x, pc->d);
            pc->d = NULL;
            c->it = NULL;
            c->open = 0;
            c->k++;
            x->ready--;
            if (x->work_waiting)
                pthread_cond_signal(&x->cv_work);
        }
        if (c->k >= c->n)
            return 0;
        struct piece *pc = &x->p[c->order[c->k]];
        if (pc->state == 0) {
            /* not taken yet (workers are ahead elsewhere, or the window is full): decoding
             * it here means the consumer never waits for a piece nobody decodes */
            pc->state = 1;
            struct ptc_pt_sdec *d = decode_piece(x, pc);
            pc->d = d;
            pc->state = d ? 2 : 3;
            x->ready++;
        }
        x->want = pc;
        while (pc->state < 2) {
            /* a worker has it: rather than sleep, decode a later piece meanwhile (the
             * calling thread is one of the nthreads) */
            if (x->ready + 1 < x->window && take_one(x))
                continue;
            pthread_cond_wait(&x->cv_cons, &x->mu);
        }
        x->want = NULL;
        if (pc->state == 3)
            return -1;
        const struct ptc_pt_interp *in = ptc_pt_sdec_interp(pc->d);
        struct ptc_pt_stream_stats st = *ptc_pt_sdec_stats(pc->d);
        c->drop = SIZE_MAX;
        if (in->first_seen && in->first_item != SIZE_MAX && c->have_resume &&
            c->resume_ip == in->first_ip) {
            c->drop = in->first_item; /* serially, this TIP.PGE ends an interrupt */
            st.hits--;
            st.resumes++;
        }
        if (in->touched) {
            c->have_resume = in->have_resume;
            c->resume_ip = in->resume_ip;
        }
        ptc_pt_par_add_stats(&x->s[si].st, &st);
        c->it = in->q;
        c->open = 1;
        c->m = in->qn;
        c->i = 0;
        if (c->drop == 0)
            c->i = 1; /* the piece's first item was a resume */
    }
    return 1;
}

int ptc_pt_par_decode(const struct ptc_pt_dcfg *cfg, struct ptc_pt_par_stream *s, size_t ns,
                      int nthreads, size_t piece_bytes, ptc_pt_par_fn fn, void *ctx)
{
    struct par x;
    memset(&x, 0, sizeof(x));
    x.cfg = cfg;
    x.s = s;
    if (nthreads < 1)
        nthreads = 1;
    if (ns == 1 && nthreads > 1) /* nothing to merge: pt_par_relay.c */
        return ptc_pt_par_relay(cfg, s, nthreads, piece_bytes ? piece_bytes : (1u << 20), fn,
                                ctx);
    x.window = 4 * (size_t)nthreads;
    for (size_t i = 0; i < ns; i++)
        memset(&s[i].st, 0, sizeof(s[i].st));
    struct cursor *cur = calloc(ns ? ns : 1, sizeof(*cur));
    pthread_t *th = calloc((size_t)nthreads, sizeof(*th));
    int rc = -1, started = 0;
    if (!cur || !th || plan(&x, ns, piece_bytes ? piece_bytes : (1u << 20)))
        goto out;
    qsort(x.p, x.np, sizeof(*x.p), cmp_piece);
    for (size_t i = 0; i < ns; i++) {
        cur[i].order = malloc((x.np ? x.np : 1) * sizeof(size_t));
        if (!cur[i].order)
            goto out;
        cur[i].drop = SIZE_MAX;
    }
    for (size_t k = 0; k < x.np; k++) {
        struct cursor *c = &cur[x.p[k].stream];
        c->order[c->n++] = k; /* within a stream the sort kept stream order */
    }
    pthread_mutex_init(&x.mu, NULL);
    pthread_cond_init(&x.cv_work, NULL);
    pthread_cond_init(&x.cv_cons, NULL);
    for (int t = 0; t + 1 < nthreads; t++) { /* the calling thread is the last one */
        if (pthread_create(&th[t], NULL, worker, &x))
            break; /* fewer helpers: slower, not wrong */
        started++;
    }
    pthread_mutex_lock(&x.mu);
    rc = 0;
    for (;;) {
        /* the stream whose next item is earliest; untimed items go at once */
        size_t best = SIZE_MAX;
        for (size_t i = 0; i < ns && !rc; i++) {
            int h = head(&x, &cur[i], i);
            if (h < 0)
                rc = -1;
            if (h <= 0)
                continue;
            const struct ptc_pt_item *it = &cur[i].it[cur[i].i];
            if (!it->has_time) {
                best = i;
                break;
            }
            if (best == SIZE_MAX || it->tsc < cur[best].it[cur[best].i].tsc)
                best = i;
        }
        if (rc || best == SIZE_MAX)
            break;
        /* deliver a run of this stream's items up to the next stream's head time without
         * the lock: workers must not wait on the consumer's callbacks */
        struct cursor *c = &cur[best];
        uint64_t limit = UINT64_MAX;
        for (size_t i = 0; i < ns; i++)
            if (i != best && cur[i].open && cur[i].i < cur[i].m && cur[i].it[cur[i].i].has_time &&
                cur[i].it[cur[i].i].tsc < limit)
                limit = cur[i].it[cur[i].i].tsc;
        pthread_mutex_unlock(&x.mu);
        size_t j = c->i;
        while (j < c->m && !(ns > 1 && c->it[j].has_time && c->it[j].tsc > limit))
            j++;
        if (j == c->i)
            j++; /* the head itself is the earliest */
        if (c->drop >= c->i && c->drop < j) {
            /* serially this TIP.PGE was the end of an interrupt: leave it out */
            if (c->drop > c->i)
                rc = fn(ctx, best, c->it + c->i, c->drop - c->i);
            c->i = c->drop + 1;
        }
        if (!rc && j > c->i)
            rc = fn(ctx, best, c->it + c->i, j - c->i);
        if (j > c->i)
            c->i = j;
        pthread_mutex_lock(&x.mu);
        if (rc)
            break;
    }
    x.stop = 1;
    pthread_cond_broadcast(&x.cv_work);
    pthread_mutex_unlock(&x.mu);
    for (int t = 0; t < started; t++)
        pthread_join(th[t], NULL);
    pthread_mutex_destroy(&x.mu);
    pthread_cond_destroy(&x.cv_work);
    pthread_cond_destroy(&x.cv_cons);
out:
    for (size_t k = 0; k < x.np; k++)
        ptc_pt_sdec_free(x.p[k].d);
    for (size_t k = 0; k < x.nspare; k++)
        ptc_pt_sdec_free(x.spare[k]);
    free(x.spare);
    if (cur)
        for (size_t i = 0; i < ns; i++)
            free(cur[i].order);
    free(cur);
    free(th);
    free(x.p);
    return rc;
}
