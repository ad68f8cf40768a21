/* A run's timeline for ptcall serve (web_timeline_fn, server/web.h): the trace's index
 * (ptcall/timeline.h) built once into $XDG_CACHE_HOME/ptcall/timeline/HASH.tlx (else
 * ~/.cache/...), keyed by the run's content hash, then windows and calls decoded from it. */
#ifndef PTCALL_WEB_TIMELINE_H
#define PTCALL_WEB_TIMELINE_H

#include "web.h"

struct web_tl_cache;
/* What web_timeline_json's tl_ctx points to: the server's open indexes and the decode budget
 * ($PTCALL_TIMELINE_BUDGET: event bytes an answer decodes at most). */
struct web_tl_serve {
    struct web_tl_cache *cache;
    uint64_t budget;
};
int web_timeline_json(void *tl_ctx, const char *trace, const char *content_hash, uint64_t bytes, int kind,
                      const struct web_args *a, char **json, size_t *len, char *err, size_t n);

#endif
