/* linemerge.h */
#include "linemerge.h"

#include <stdlib.h>
#include <string.h>

struct lrec {
    uint64_t key, seq;
    size_t len;
};

struct ptc_lm_queue {
    char *bytes;
    size_t bhead, btail, bcap;
    struct lrec *recs;
    size_t rhead, rtail, rcap;
    size_t pos;                 /* index in the heap, or SIZE_MAX */
    struct ptc_lm_queue *next;
};

void ptc_lm_init(struct ptc_linemerge *m, struct ptc_wbuf *out, size_t window)
{
    memset(m, 0, sizeof(*m));
    m->out = out;
    m->window = window ? window : 1;
}

struct ptc_lm_queue *ptc_lm_queue(struct ptc_linemerge *m)
{
    struct ptc_lm_queue *q = calloc(1, sizeof(*q));
    if (!q)
        return NULL;
    q->pos = SIZE_MAX;
    q->next = m->all;
    m->all = q;
    return q;
}

static int before(const struct ptc_lm_queue *a, const struct ptc_lm_queue *b)
{
    const struct lrec *x = &a->recs[a->rhead], *y = &b->recs[b->rhead];
    return x->key != y->key ? x->key < y->key : x->seq < y->seq;
}

static void place(struct ptc_linemerge *m, size_t i, struct ptc_lm_queue *q)
{
    m->heap[i] = q;
    q->pos = i;
}

static void sift_up(struct ptc_linemerge *m, size_t i)
{
    struct ptc_lm_queue *q = m->heap[i];
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!before(q, m->heap[p]))
            break;
        place(m, i, m->heap[p]);
        i = p;
    }
    place(m, i, q);
}

static void sift_down(struct ptc_linemerge *m, size_t i)
{
    struct ptc_lm_queue *q = m->heap[i];
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, c = l;
        if (l >= m->nheap)
            break;
        if (r < m->nheap && before(m->heap[r], m->heap[l]))
            c = r;
        if (!before(m->heap[c], q))
            break;
        place(m, i, m->heap[c]);
        i = c;
    }
    place(m, i, q);
}

/* The smaller head key of the heap's second and third queues (the next to compete with
 * the first): UINT64_MAX when the first is alone. */
static const struct lrec *runner_up(const struct ptc_linemerge *m)
{
    const struct lrec *best = NULL;
    for (size_t i = 1; i <= 2 && i < m->nheap; i++) {
        const struct ptc_lm_queue *q = m->heap[i];
        const struct lrec *r = &q->recs[q->rhead];
        if (!best || r->key < best->key || (r->key == best->key && r->seq < best->seq))
            best = r;
    }
    return best;
}

/* Writes up to k of the earliest held lines. The first queue's lines go out in one copy
 * while they come before every other queue's first line: a one-thread trace's lines leave
 * in large blocks. */
static void pop(struct ptc_linemerge *m, size_t k)
{
    while (k && m->nheap) {
        struct ptc_lm_queue *q = m->heap[0];
        const struct lrec *other = runner_up(m);
        size_t from = q->bhead, bytes = 0;
        do {
            struct lrec *r = &q->recs[q->rhead];
            if (other && (r->key > other->key || (r->key == other->key && r->seq > other->seq)))
                break;
            if (r->key < m->last_out)
                m->out_of_order++;
            else
                m->last_out = r->key;
            bytes += r->len;
            q->rhead++;
            m->held--;
            k--;
        } while (k && q->rhead < q->rtail);
        ptc_wb_put(m->out, q->bytes + from, bytes);
        q->bhead += bytes;
        if (q->rhead == q->rtail) {
            q->rhead = q->rtail = q->bhead = q->btail = 0;
            q->pos = SIZE_MAX;
            if (--m->nheap) {
                place(m, 0, m->heap[m->nheap]);
                sift_down(m, 0);
            }
        } else {
            sift_down(m, 0);
        }
    }
}

static int reserve(void **buf, size_t *head, size_t *tail, size_t *cap, size_t need,
                   size_t unit)
{
    if (*tail + need <= *cap)
        return 0;
    if (*head && *head >= *cap / 2) { /* move what is held to the front: amortised, half is free */
        memmove(*buf, (char *)*buf + *head * unit, (*tail - *head) * unit);
        *tail -= *head;
        *head = 0;
        if (*tail + need <= *cap)
            return 0;
    }
    size_t nc = *cap ? *cap * 2 : 64;
    while (nc < *tail + need)
        nc *= 2;
    void *n = realloc(*buf, nc * unit);
    if (!n)
        return -1;
    *buf = n;
    *cap = nc;
    return 0;
}

int ptc_lm_push(struct ptc_linemerge *m, struct ptc_lm_queue *q, uint64_t key, const char *text,
                size_t len)
{
    if (m->held >= m->window)
        pop(m, m->window / 8 + 1);
    if (reserve((void **)&q->bytes, &q->bhead, &q->btail, &q->bcap, len, 1) ||
        reserve((void **)&q->recs, &q->rhead, &q->rtail, &q->rcap, 1, sizeof(*q->recs)))
        return -1;
    memcpy(q->bytes + q->btail, text, len);
    q->btail += len;
    q->recs[q->rtail++] = (struct lrec){key, m->seq++, len};
    m->held++;
    if (q->pos == SIZE_MAX) {
        if (m->nheap == m->capheap) {
            size_t nc = m->capheap ? m->capheap * 2 : 16;
            struct ptc_lm_queue **h = realloc(m->heap, nc * sizeof(*h));
            if (!h)
                return -1;
            m->heap = h;
            m->capheap = nc;
        }
        place(m, m->nheap++, q);
        sift_up(m, q->pos);
    }
    return 0;
}

void ptc_lm_flush(struct ptc_linemerge *m)
{
    pop(m, SIZE_MAX);
}

void ptc_lm_free(struct ptc_linemerge *m)
{
    while (m->all) {
        struct ptc_lm_queue *q = m->all;
        m->all = q->next;
        free(q->bytes);
        free(q->recs);
        free(q);
    }
    free(m->heap);
    m->heap = NULL;
    m->nheap = 0;
}
