/* A pipe of batches between two threads (ptc_pipe.h): a ring of slots, a mutex and two
 * condition variables; the producer waits only when every slot is full, the worker only when
 * none is. */
#include "ptc_pipe.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

struct ptc_pipe {
    unsigned char *slots;
    size_t size;
    unsigned n, head, count;  /* slots [head, head + count) are full, in order */
    void *cur;                /* the producer's slot */
    void (*consume)(void *ctx, void *slot);
    void *ctx;
    int threaded, done;
    pthread_mutex_t mu;
    pthread_cond_t get, put;
    pthread_t worker;
};

static void *slot_at(const struct ptc_pipe *p, unsigned i) { return p->slots + (size_t)i * p->size; }

static void *work(void *arg)
{
    struct ptc_pipe *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (!p->count && !p->done)
            pthread_cond_wait(&p->get, &p->mu);
        if (!p->count) {
            pthread_mutex_unlock(&p->mu);
            return NULL;
        }
        void *s = slot_at(p, p->head);
        pthread_mutex_unlock(&p->mu);
        p->consume(p->ctx, s);
        pthread_mutex_lock(&p->mu);
        p->head = (p->head + 1) % p->n;
        p->count--;
        pthread_cond_signal(&p->put);
        pthread_mutex_unlock(&p->mu);
    }
}

struct ptc_pipe *ptc_pipe_new(size_t slot_size, unsigned nslots,
                              void (*consume)(void *ctx, void *slot), void *ctx)
{
    struct ptc_pipe *p = calloc(1, sizeof(*p));
    if (!p || nslots < 2 || !(p->slots = malloc(slot_size * nslots))) {
        free(p);
        return NULL;
    }
    p->size = slot_size;
    p->n = nslots;
    p->cur = p->slots;
    p->consume = consume;
    p->ctx = ctx;
    if (pthread_mutex_init(&p->mu, NULL) == 0) {
        pthread_cond_init(&p->get, NULL);
        pthread_cond_init(&p->put, NULL);
        p->threaded = pthread_create(&p->worker, NULL, work, p) == 0;
        if (!p->threaded) {
            pthread_cond_destroy(&p->get);
            pthread_cond_destroy(&p->put);
            pthread_mutex_destroy(&p->mu);
        }
    }
    return p;
}

void *ptc_pipe_slot(struct ptc_pipe *p) { return p->cur; }

void *ptc_pipe_put(struct ptc_pipe *p)
{
    if (!p->threaded) { /* one thread: consume it now, fill it again */
        p->consume(p->ctx, p->cur);
        return p->cur;
    }
    pthread_mutex_lock(&p->mu);
    p->count++;
    pthread_cond_signal(&p->get);
    while (p->count == p->n)
        pthread_cond_wait(&p->put, &p->mu);
    p->cur = slot_at(p, (p->head + p->count) % p->n);
    pthread_mutex_unlock(&p->mu);
    return p->cur;
}

void ptc_pipe_drain(struct ptc_pipe *p)
{
    if (!p || !p->threaded)
        return;
    pthread_mutex_lock(&p->mu);
    p->done = 1;
    pthread_cond_signal(&p->get);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->worker, NULL);
    pthread_cond_destroy(&p->get);
    pthread_cond_destroy(&p->put);
    pthread_mutex_destroy(&p->mu);
    p->threaded = 0;
}

void ptc_pipe_free(struct ptc_pipe *p)
{
    if (!p)
        return;
    ptc_pipe_drain(p);
    free(p->slots);
    free(p);
}
