/* The timeline indexes ptcall serve keeps open (web_timeline.c): at most a few, and at most so
 * many bytes of them, the least recently used dropped first; each kept with the identity of
 * the trace file it was checked against (device, inode, size, modification and change
 * times), so that a trace replaced or changed since is never answered from it. Shared by the
 * server's threads (one lock); an index in use is freed only when its last user lets go. */
#ifndef PTCALL_WEB_TL_CACHE_H
#define PTCALL_WEB_TL_CACHE_H

#include <stdint.h>
#include <sys/stat.h>

#include "ptcall/timeline.h"

#define WEB_TL_CACHE_COUNT 4            /* indexes kept at most */
#define WEB_TL_CACHE_BYTES (256ull << 20) /* their bytes (ptc_tl_bytes) at most */

struct web_tl_cache;

/* NULL when out of memory. */
struct web_tl_cache *web_tl_cache_new(uint32_t max_count, uint64_t max_bytes);
void web_tl_cache_free(struct web_tl_cache *c);
/* The index kept under key for a trace file whose fstat is st, held for the caller (give it
 * back with web_tl_cache_release); NULL when there is none (one kept for another identity is
 * dropped). */
struct ptc_tl *web_tl_cache_get(struct web_tl_cache *c, const char *key, const struct stat *st);
/* Hands x, loaded for key and st, to the cache, which owns it from then on: 0, and it stays
 * held for the caller (web_tl_cache_release); one bigger than the byte bound is not kept but
 * freed at its release. -1 (out of memory): the caller still owns x. */
int web_tl_cache_put(struct web_tl_cache *c, const char *key, const struct stat *st,
                     struct ptc_tl *x);
void web_tl_cache_release(struct web_tl_cache *c, struct ptc_tl *x);
/* One builder at a time: two requests of a trace never write its index at once. */
void web_tl_cache_build_lock(struct web_tl_cache *c);
void web_tl_cache_build_unlock(struct web_tl_cache *c);
/* What is kept: indexes and their bytes (for tests and the benchmark's notes). */
void web_tl_cache_stats(struct web_tl_cache *c, uint32_t *count, uint64_t *bytes);

#endif
