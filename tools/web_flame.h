/* A run's flame graph for the web views (ptcall serve, ptcall html): `ptcall export --format
 * svg` of its trace (outputs/svg.c), into memory. Widths by self time (calls when the trace
 * is untimed), as export's --weight self draws them. */
#ifndef PTCALL_WEB_FLAME_H
#define PTCALL_WEB_FLAME_H

#include <stddef.h>
#include <stdint.h>

/* web_flame_fn (server/web.h): 0 with *svg malloc'ed, 1 when the file at trace is not the
 * one the run was stored from (content_hash, bytes: missing, replaced, unreadable, changed
 * while decoded; one message for all), -1 when it cannot be decoded (the reason on stderr
 * too). */
int web_flame_svg(const char *trace, const char *content_hash, uint64_t bytes, char **svg,
                  size_t *len, char *err, size_t n);

/* Whether the open file fd is the stored trace: a regular file of that size and content hash
 * (a device or a pipe is never read). The timeline (web_timeline.c) checks with it too. */
int web_trace_same_file(int fd, const char *hex, uint64_t bytes);

#endif
