/* The API answers' cache and its single flights (web_cache.h): a few entries, the least
 * recently used make room; one flight per key being computed, which its waiters hold. */
#include "web_cache.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct entry {
    char *key, *body; /* key NULL: a free slot */
    size_t len;
    const char *type; /* a static Content-Type, as web_resp's */
    uint64_t used;    /* when last answered from (c->clock) */
};

/* A key being computed: its first asker computes, the others wait for done and copy ans. */
struct web_flight {
    struct web_flight *next;
    char *key;
    int waiters;  /* threads holding it: it is freed by the last one to let go */
    int done;     /* web_cache_done has handed its answer (or none) */
    int answered; /* ans holds an answer */
    struct web_resp ans;
};

struct web_cache {
    pthread_mutex_t mu;
    pthread_cond_t landed; /* a flight is done (every waiter checks its own) */
    struct entry *e;
    size_t n, bytes, max_bytes;
    uint64_t clock;
    struct web_flight *flights;
};

struct web_cache *web_cache_new(size_t entries, size_t bytes)
{
    struct web_cache *c = calloc(1, sizeof(*c));
    if (!c || !entries || !(c->e = calloc(entries, sizeof(*c->e)))) {
        free(c);
        return NULL;
    }
    c->n = entries;
    c->max_bytes = bytes;
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->landed, NULL);
    return c;
}

static void flight_free(struct web_flight *f)
{
    free(f->key);
    free(f->ans.body);
    free(f);
}

void web_cache_free(struct web_cache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++) {
        free(c->e[i].key);
        free(c->e[i].body);
    }
    free(c->e);
    while (c->flights) { /* none once the server's threads are stopped */
        struct web_flight *f = c->flights;
        c->flights = f->next;
        flight_free(f);
    }
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->landed);
    free(c);
}

/* A copy of len bytes with a 0 after them (bodies are read as strings too), or NULL. */
static char *dup_body(const char *body, size_t len)
{
    char *p = malloc(len + 1);
    if (p) {
        memcpy(p, body, len);
        p[len] = 0;
    }
    return p;
}

/* r as a copy of the answer status/type/body: 1, or -1 out of memory. */
static int answer(struct web_resp *r, int status, const char *type, const char *body,
                  size_t len, const char *message)
{
    char *p = dup_body(body, len);
    if (!p)
        return -1;
    free(r->body); /* web_resp_free's job, which is on a floor above (web_common.c) */
    r->status = status;
    r->type = type;
    r->body = p;
    r->len = len;
    snprintf(r->message, sizeof(r->message), "%.511s", message);
    return 1;
}

static struct entry *find(struct web_cache *c, const char *key)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->e[i].key && !strcmp(c->e[i].key, key))
            return &c->e[i];
    return NULL;
}

static void drop(struct web_cache *c, struct entry *e)
{
    c->bytes -= e->len;
    free(e->key);
    free(e->body);
    memset(e, 0, sizeof(*e));
}

/* A free slot, made by dropping the least recently used entries until len more bytes fit. */
static struct entry *room(struct web_cache *c, size_t len)
{
    for (;;) {
        struct entry *lru = NULL, *free_slot = NULL;
        for (size_t i = 0; i < c->n; i++) {
            struct entry *e = &c->e[i];
            if (!e->key)
                free_slot = e;
            else if (!lru || e->used < lru->used)
                lru = e;
        }
        if (!lru || (free_slot && c->bytes + len <= c->max_bytes))
            return free_slot; /* !lru: every slot is free (and len fits: web_cache_done) */
        drop(c, lru);
    }
}

/* Keeps key and body (both malloc'ed: the cache owns them now). Under c->mu. */
static void put(struct web_cache *c, char *key, char *body, size_t len, const char *type)
{
    struct entry *old = find(c, key);
    if (old)
        drop(c, old);
    struct entry *e = room(c, len);
    if (!e) { /* no slot at all: not kept */
        free(key);
        free(body);
        return;
    }
    *e = (struct entry){key, body, len, type, ++c->clock};
    c->bytes += len;
}

static struct web_flight *flight_of(struct web_cache *c, const char *key)
{
    struct web_flight *f = c->flights;
    while (f && strcmp(f->key, key))
        f = f->next;
    return f;
}

/* Waits for f's answer and copies it into r: 1, 0 when it had none, -1 out of memory. Under
 * c->mu (released while waiting and copying: f stays while this thread holds it). */
static int wait_for(struct web_cache *c, struct web_flight *f, struct web_resp *r)
{
    f->waiters++;
    while (!f->done)
        pthread_cond_wait(&c->landed, &c->mu);
    pthread_mutex_unlock(&c->mu);
    const struct web_resp *a = &f->ans;
    int got = f->answered ? answer(r, a->status, a->type, a->body, a->len, a->message) : 0;
    pthread_mutex_lock(&c->mu);
    if (!--f->waiters)
        flight_free(f);
    return got;
}

int web_cache_begin(struct web_cache *c, const char *key, struct web_resp *r,
                    struct web_flight **out)
{
    int rc = 0;
    pthread_mutex_lock(&c->mu);
    for (;;) {
        struct entry *e = find(c, key);
        if (e) {
            e->used = ++c->clock;
            rc = answer(r, 200, e->type, e->body, e->len, "");
            break;
        }
        struct web_flight *f = flight_of(c, key);
        if (!f) { /* nobody computes it: this thread does */
            f = calloc(1, sizeof(*f));
            if (!f || !(f->key = strdup(key))) {
                free(f);
                rc = -1;
                break;
            }
            f->waiters = 1;
            f->next = c->flights;
            c->flights = f;
            *out = f;
            break;
        }
        if ((rc = wait_for(c, f, r))) /* none: its computer ran out of memory; ask again */
            break;
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

static void unlink_flight(struct web_cache *c, struct web_flight *f)
{
    struct web_flight **p = &c->flights;
    while (*p != f)
        p = &(*p)->next;
    *p = f->next;
}

void web_cache_done(struct web_cache *c, struct web_flight *f, const struct web_resp *r)
{
    int ok = r && r->body;
    /* copies are made outside the lock: a flame graph may be megabytes */
    char *key = NULL, *body = NULL;
    if (ok && r->status == 200 && r->len <= c->max_bytes / 4) {
        key = strdup(f->key);
        body = dup_body(r->body, r->len);
    }
    pthread_mutex_lock(&c->mu);
    unlink_flight(c, f); /* who asks from now on finds the cache, or computes anew */
    if (key && body)
        put(c, key, body, r->len, r->type);
    else {
        free(key);
        free(body);
    }
    int waiting = f->waiters > 1;
    pthread_mutex_unlock(&c->mu);
    if (ok && waiting) /* nobody can join f now: its waiters are all there */
        f->answered = answer(&f->ans, r->status, r->type, r->body, r->len, r->message) == 1;
    pthread_mutex_lock(&c->mu);
    f->done = 1;
    pthread_cond_broadcast(&c->landed);
    if (!--f->waiters)
        flight_free(f);
    pthread_mutex_unlock(&c->mu);
}
