/* The API answers' cache (web_cache.h): a few entries, first in first out. */
#include "web_cache.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct entry {
    char *key, *body;
    size_t len;
};

struct web_cache {
    pthread_mutex_t mu, work;
    struct entry *e;
    size_t n, next;
};

struct web_cache *web_cache_new(size_t entries)
{
    struct web_cache *c = calloc(1, sizeof(*c));
    if (!c || !(c->e = calloc(entries, sizeof(*c->e)))) {
        free(c);
        return NULL;
    }
    c->n = entries;
    pthread_mutex_init(&c->mu, NULL);
    pthread_mutex_init(&c->work, NULL);
    return c;
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
    pthread_mutex_destroy(&c->mu);
    pthread_mutex_destroy(&c->work);
    free(c);
}

char *web_cache_get(struct web_cache *c, const char *key, size_t *len)
{
    char *out = NULL;
    pthread_mutex_lock(&c->mu);
    for (size_t i = 0; i < c->n; i++) {
        if (c->e[i].key && !strcmp(c->e[i].key, key)) {
            if ((out = malloc(c->e[i].len + 1))) {
                memcpy(out, c->e[i].body, c->e[i].len + 1);
                *len = c->e[i].len;
            }
            break;
        }
    }
    pthread_mutex_unlock(&c->mu);
    return out;
}

void web_cache_put(struct web_cache *c, const char *key, const char *body, size_t len)
{
    char *k = strdup(key), *b = malloc(len + 1);
    if (!k || !b) {
        free(k);
        free(b);
        return;
    }
    memcpy(b, body, len);
    b[len] = 0;
    pthread_mutex_lock(&c->mu);
    struct entry *e = &c->e[c->next];
    c->next = (c->next + 1) % c->n;
    free(e->key);
    free(e->body);
    e->key = k;
    e->body = b;
    e->len = len;
    pthread_mutex_unlock(&c->mu);
}

void web_cache_lock(struct web_cache *c)
{
    pthread_mutex_lock(&c->work);
}

void web_cache_unlock(struct web_cache *c)
{
    pthread_mutex_unlock(&c->work);
}
