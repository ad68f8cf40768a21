/* The open timeline indexes of ptcall serve (web_tl_cache.h). */
#include "web_tl_cache.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct entry {
    char key[72];
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime, ctime;
    struct ptc_tl *x;
    uint64_t bytes, used;   /* used: the cache's clock at its last get */
    uint32_t refs;
    int kept;               /* 0: dropped from the cache, freed at its last release */
};

struct web_tl_cache {
    pthread_mutex_t mu, build;
    struct entry *e;        /* kept ones and dropped ones still held */
    uint32_t n, cap, max_count;
    uint64_t max_bytes, clock;
};

struct web_tl_cache *web_tl_cache_new(uint32_t max_count, uint64_t max_bytes)
{
    struct web_tl_cache *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    pthread_mutex_init(&c->mu, NULL);
    pthread_mutex_init(&c->build, NULL);
    c->max_count = max_count;
    c->max_bytes = max_bytes;
    return c;
}

void web_tl_cache_free(struct web_tl_cache *c)
{
    if (!c)
        return;
    for (uint32_t i = 0; i < c->n; i++)
        ptc_tl_free(c->e[i].x);
    free(c->e);
    pthread_mutex_destroy(&c->mu);
    pthread_mutex_destroy(&c->build);
    free(c);
}

static int same(const struct entry *e, const struct stat *st)
{
    return e->dev == st->st_dev && e->ino == st->st_ino && e->size == st->st_size &&
           e->mtime.tv_sec == st->st_mtim.tv_sec && e->mtime.tv_nsec == st->st_mtim.tv_nsec &&
           e->ctime.tv_sec == st->st_ctim.tv_sec && e->ctime.tv_nsec == st->st_ctim.tv_nsec;
}

/* Removes entry i when nobody holds it (the last one moves into its place). */
static void reap(struct web_tl_cache *c, uint32_t i)
{
    if (c->e[i].kept || c->e[i].refs)
        return;
    ptc_tl_free(c->e[i].x);
    c->e[i] = c->e[--c->n];
}

static void drop(struct web_tl_cache *c, uint32_t i)
{
    c->e[i].kept = 0;
    reap(c, i);
}

struct ptc_tl *web_tl_cache_get(struct web_tl_cache *c, const char *key, const struct stat *st)
{
    struct ptc_tl *x = NULL;
    pthread_mutex_lock(&c->mu);
    for (uint32_t i = 0; i < c->n; i++) {
        struct entry *e = &c->e[i];
        if (!e->kept || strcmp(e->key, key))
            continue;
        if (same(e, st)) {
            e->refs++;
            e->used = ++c->clock;
            x = e->x;
        } else {
            drop(c, i); /* the trace changed since: never answered from it again */
        }
        break;
    }
    pthread_mutex_unlock(&c->mu);
    return x;
}

static uint64_t kept_bytes(const struct web_tl_cache *c, uint32_t *count)
{
    uint64_t b = 0;
    *count = 0;
    for (uint32_t i = 0; i < c->n; i++)
        if (c->e[i].kept) {
            b += c->e[i].bytes;
            (*count)++;
        }
    return b;
}

int web_tl_cache_put(struct web_tl_cache *c, const char *key, const struct stat *st,
                     struct ptc_tl *x)
{
    uint64_t bytes = ptc_tl_bytes(x);
    pthread_mutex_lock(&c->mu);
    for (uint32_t i = 0; i < c->n; i++) /* another request's copy of the same: the older goes */
        if (c->e[i].kept && !strcmp(c->e[i].key, key)) {
            drop(c, i);
            break;
        }
    int keep = bytes <= c->max_bytes && strlen(key) < sizeof(c->e[0].key);
    /* the least recently used go first, until this one fits */
    for (;;) {
        uint32_t count;
        uint64_t b = kept_bytes(c, &count);
        if (!keep || (count < c->max_count && b + bytes <= c->max_bytes))
            break;
        uint32_t lru = UINT32_MAX;
        for (uint32_t i = 0; i < c->n; i++)
            if (c->e[i].kept && (lru == UINT32_MAX || c->e[i].used < c->e[lru].used))
                lru = i;
        if (lru == UINT32_MAX)
            break;
        drop(c, lru);
    }
    if (c->n == c->cap) {
        uint32_t cap = c->cap ? c->cap * 2 : 8;
        struct entry *ne = realloc(c->e, cap * sizeof(*ne));
        if (!ne) {
            pthread_mutex_unlock(&c->mu);
            return -1;
        }
        c->e = ne;
        c->cap = cap;
    }
    struct entry *e = &c->e[c->n++];
    memset(e, 0, sizeof(*e));
    snprintf(e->key, sizeof(e->key), "%s", key);
    e->dev = st->st_dev;
    e->ino = st->st_ino;
    e->size = st->st_size;
    e->mtime = st->st_mtim;
    e->ctime = st->st_ctim;
    e->x = x;
    e->bytes = bytes;
    e->used = ++c->clock;
    e->refs = 1;
    e->kept = keep;
    pthread_mutex_unlock(&c->mu);
    return 0;
}

void web_tl_cache_release(struct web_tl_cache *c, struct ptc_tl *x)
{
    pthread_mutex_lock(&c->mu);
    for (uint32_t i = 0; i < c->n; i++)
        if (c->e[i].x == x) {
            if (c->e[i].refs)
                c->e[i].refs--;
            reap(c, i);
            break;
        }
    pthread_mutex_unlock(&c->mu);
}

void web_tl_cache_build_lock(struct web_tl_cache *c) { pthread_mutex_lock(&c->build); }
void web_tl_cache_build_unlock(struct web_tl_cache *c) { pthread_mutex_unlock(&c->build); }

void web_tl_cache_stats(struct web_tl_cache *c, uint32_t *count, uint64_t *bytes)
{
    pthread_mutex_lock(&c->mu);
    *bytes = kept_bytes(c, count);
    pthread_mutex_unlock(&c->mu);
}
