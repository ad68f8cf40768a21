/* A small cache of API answers shared by the server's threads, with one computation per
 * question at a time (single flight). The hot-function ranking over a thousand runs reads
 * millions of rows, and a run's flame graph or threads table decodes its whole trace (2.2 s
 * for 20.9 M events), while the answers change rarely: 16 clients asking the same new question
 * at once get one computation's answer, the first asker's, and later askers the cached copy.
 * Different questions are computed side by side. What makes an answer valid is in its key
 * (web_cached: the database's generation; web_trace_cached: the run's trace file, which is
 * checked before every answer), so a stale answer is never found under it.
 *
 * Bounded by entries and by bytes (a flame graph may take megabytes): the least recently used
 * answers make room, and an answer larger than a quarter of the byte bound is not kept (those
 * who waited for it still get it). */
#ifndef PTCALL_WEB_CACHE_H
#define PTCALL_WEB_CACHE_H

#include <stddef.h>

#include "web.h"

#define WEB_CACHE_ENTRIES 64
#define WEB_CACHE_BYTES (64u << 20)

struct web_cache;
struct web_flight;
struct web_cache *web_cache_new(size_t entries, size_t bytes);
void web_cache_free(struct web_cache *c);
/* The answer to key: 1 with r filled from the cache, or from the computation of the same key
 * that another thread was making (this one waited for it: whatever its status); 0 when the
 * caller is to compute it and hand it to web_cache_done(*f) (meanwhile other threads asking
 * key wait; other keys do not); -1 out of memory. */
int web_cache_begin(struct web_cache *c, const char *key, struct web_resp *r,
                    struct web_flight **f);
/* Ends the caller's flight: a copy of its answer r to those waiting, and into the cache when
 * its status is 200 and it fits. r NULL (no answer, out of memory): a waiter computes it. */
void web_cache_done(struct web_cache *c, struct web_flight *f, const struct web_resp *r);

#endif
