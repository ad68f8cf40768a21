/* The connection guard (web_conns.h). Connections are few (hundreds at most): one list in the
 * order they started waiting, scanned linearly under one mutex. */
#include "web_conns.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

enum state {
    WAITING,  /* no request yet (or the last one done): idle, or its header coming in */
    HANDLING, /* the header is whole and the request is being answered */
    SENDING,  /* the answer is queued */
    EVICTED,  /* shut down by the guard, not yet closed by its thread */
};

struct web_conn {
    struct web_conn *prev, *next;
    int fd;
    enum state st;
    int line;          /* the request line arrived */
    uint64_t since_ms; /* when it started waiting, or sending */
};

struct web_conns {
    struct web_conns_cfg cfg;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t reaper;
    int stop;
    struct web_conn *head, *tail; /* oldest first, by since_ms */
    unsigned live;                /* not evicted */
    unsigned long evicted, timed_out;
};

static uint64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

static void unlink_conn(struct web_conns *g, struct web_conn *c)
{
    if (c->prev)
        c->prev->next = c->next;
    else
        g->head = c->next;
    if (c->next)
        c->next->prev = c->prev;
    else
        g->tail = c->prev;
    c->prev = c->next = NULL;
}

static void append(struct web_conns *g, struct web_conn *c)
{
    c->prev = g->tail;
    c->next = NULL;
    if (g->tail)
        g->tail->next = c;
    else
        g->head = c;
    g->tail = c;
}

/* Ends c: its thread sees the socket's end (reads 0, writes fail) and closes it, telling
 * web_conns_closed(), which frees c. Under g->mu, so the socket is still open (MHD says a
 * connection is closed before it closes its socket). */
static void evict(struct web_conns *g, struct web_conn *c)
{
    shutdown(c->fd, SHUT_RDWR);
    unlink_conn(g, c);
    c->st = EVICTED;
    g->live--;
}

static void *reap(void *arg)
{
    struct web_conns *g = arg;
    pthread_mutex_lock(&g->mu);
    while (!g->stop) {
        uint64_t t = now_ms();
        for (struct web_conn *c = g->head, *next; c; c = next) {
            next = c->next;
            uint64_t age = t - c->since_ms;
            int late = c->st == WAITING ? age >= (c->line ? g->cfg.header_ms : g->cfg.idle_ms)
                       : c->st == SENDING ? age >= g->cfg.send_ms
                                          : 0;
            if (late) {
                evict(g, c);
                g->timed_out++;
            }
        }
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 100 * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&g->cv, &g->mu, &until);
    }
    pthread_mutex_unlock(&g->mu);
    return NULL;
}

struct web_conns *web_conns_new(const struct web_conns_cfg *cfg)
{
    struct web_conns *g = calloc(1, sizeof(*g));
    if (!g)
        return NULL;
    g->cfg = *cfg;
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->cv, NULL);
    if (pthread_create(&g->reaper, NULL, reap, g)) {
        pthread_cond_destroy(&g->cv);
        pthread_mutex_destroy(&g->mu);
        free(g);
        return NULL;
    }
    return g;
}

void web_conns_free(struct web_conns *g)
{
    if (!g)
        return;
    pthread_mutex_lock(&g->mu);
    g->stop = 1;
    pthread_cond_signal(&g->cv);
    pthread_mutex_unlock(&g->mu);
    pthread_join(g->reaper, NULL);
    /* the server is stopped: every connection was closed and freed */
    pthread_cond_destroy(&g->cv);
    pthread_mutex_destroy(&g->mu);
    free(g);
}

struct web_conn *web_conns_opened(struct web_conns *g, int fd)
{
    struct web_conn *c = calloc(1, sizeof(*c));
    pthread_mutex_lock(&g->mu);
    if (g->live >= g->cfg.soft_limit) {
        /* the oldest waiting connection goes, else the oldest being sent (a client that
         * reads its answer slowly); a request being answered is never cut */
        struct web_conn *v = NULL;
        for (struct web_conn *k = g->head; k && !v; k = k->next)
            if (k->st == WAITING)
                v = k;
        for (struct web_conn *k = g->head; k && !v; k = k->next)
            if (k->st == SENDING)
                v = k;
        if (v) {
            evict(g, v);
            g->evicted++;
        }
    }
    if (c) {
        c->fd = fd;
        c->st = WAITING;
        c->since_ms = now_ms();
        append(g, c);
        g->live++;
    }
    pthread_mutex_unlock(&g->mu);
    return c;
}

void web_conns_request_line(struct web_conns *g, struct web_conn *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&g->mu);
    c->line = 1;
    pthread_mutex_unlock(&g->mu);
}

/* c's state becomes st, counted from now (and last in the list's order). */
static void move(struct web_conns *g, struct web_conn *c, enum state st)
{
    if (!c)
        return;
    pthread_mutex_lock(&g->mu);
    if (c->st != EVICTED) {
        unlink_conn(g, c);
        c->st = st;
        c->line = 0;
        c->since_ms = now_ms();
        append(g, c);
    }
    pthread_mutex_unlock(&g->mu);
}

void web_conns_handling(struct web_conns *g, struct web_conn *c)
{
    move(g, c, HANDLING);
}

void web_conns_sending(struct web_conns *g, struct web_conn *c)
{
    move(g, c, SENDING);
}

void web_conns_request_done(struct web_conns *g, struct web_conn *c)
{
    move(g, c, WAITING);
}

void web_conns_closed(struct web_conns *g, struct web_conn *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&g->mu);
    if (c->st != EVICTED) {
        unlink_conn(g, c);
        g->live--;
    }
    pthread_mutex_unlock(&g->mu);
    free(c);
}

void web_conns_counts(struct web_conns *g, unsigned *open, unsigned long *evicted,
                      unsigned long *timed_out)
{
    pthread_mutex_lock(&g->mu);
    *open = g->live;
    *evicted = g->evicted;
    *timed_out = g->timed_out;
    pthread_mutex_unlock(&g->mu);
}
