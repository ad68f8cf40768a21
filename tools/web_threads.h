/* A run's threads for the web views (ptcall serve, ptcall html): per thread of its trace file
 * (pid, tid, name, process, call events, calls, gaps and the events they lost, first and last
 * event time), as a JSON array (docs/web.md, Threads). */
#ifndef PTCALL_WEB_THREADS_H
#define PTCALL_WEB_THREADS_H

#include <stddef.h>
#include <stdint.h>

/* web_threads_fn (server/web.h): 0 with *json malloc'ed, 1 when the file at trace is not the
 * one the run was stored from (one message for all, as the flame graph's), -1 otherwise. */
int web_threads_json(const char *trace, const char *content_hash, uint64_t bytes, char **json,
                     size_t *len, char *err, size_t n);

#endif
