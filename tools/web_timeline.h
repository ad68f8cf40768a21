/* A run's timeline for ptcall serve (web_timeline_fn, server/web.h): the trace's index
 * (ptcall/timeline.h) built once into $XDG_CACHE_HOME/ptcall/timeline/HASH.tlx (else
 * ~/.cache/...), keyed by the run's content hash, then windows and calls decoded from it. */
#ifndef PTCALL_WEB_TIMELINE_H
#define PTCALL_WEB_TIMELINE_H

#include "web.h"

int web_timeline_json(const char *trace, const char *content_hash, uint64_t bytes, int kind,
                      const struct web_args *a, char **json, size_t *len, char *err, size_t n);

#endif
