/* A small cache of API answers shared by the server's threads: the hot-function ranking
 * over a thousand runs reads millions of rows, while the runs change rarely. Keys carry
 * the database's generation (db_wgeneration), so an added or removed run is never answered
 * from the cache. */
#ifndef PTCALL_WEB_CACHE_H
#define PTCALL_WEB_CACHE_H

#include <stddef.h>

struct web_cache;
struct web_cache *web_cache_new(size_t entries);
void web_cache_free(struct web_cache *c);
/* A malloc'ed copy of the body cached under key, or NULL. */
char *web_cache_get(struct web_cache *c, const char *key, size_t *len);
/* Keeps a copy (the oldest entry makes room). Out of memory: nothing is kept. */
void web_cache_put(struct web_cache *c, const char *key, const char *body, size_t len);
/* One computation at a time (the others wait, then find its answer in the cache), so that
 * 16 clients asking at once do not compute the same ranking 16 times side by side. */
void web_cache_lock(struct web_cache *c);
void web_cache_unlock(struct web_cache *c);

#endif
