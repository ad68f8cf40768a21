/* A run's flame graph for the web views (ptcall serve, ptcall html): `ptcall export --format
 * svg --svg-static` of its trace (outputs/svg.c: no script), into memory. Widths by self
 * time (calls when the trace is untimed), as export's --weight self draws them. */
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

/* Set (from PTCALL_TEST_SERVE_DECODES): every decoding of a run's trace for serve is said
 * on stderr (web_decode_said). */
extern int web_say_decodes;
/* 'ptcall serve: decoding TRACE for WHAT' on stderr when web_say_decodes is set. */
void web_decode_said(const char *trace, const char *what);

/* Whether the open file fd is a stored run's trace: a regular file of that size and content
 * hash (XXH3-128, db add's); a device or a pipe is never read. web_threads.c checks so too. */
int web_trace_same_file(int fd, const char *content_hash, uint64_t bytes);
/* web_trace_same_fn (server/web.h): whether the file at trace is the stored run's (opened
 * as web_trace_open opens it, checked by web_trace_same_file): 1 or 0. */
int web_trace_same(const char *trace, const char *content_hash, uint64_t bytes);
/* Opens the stored trace and checks it is the run's file (web_trace_same_file): the open
 * descriptor, with src set to the path the decoder should read (the descriptor's own
 * /proc/self/fd path, so what the trace path names by now is never read), or -1 with the
 * one answer for a file that is gone in err. */
int web_trace_open(const char *trace, const char *content_hash, uint64_t bytes, char *src,
                   size_t srcn, char *err, size_t n);
/* web_flame_json_fn (server/web.h): the flame trees (outputs/flametree.c) of the same file. */
int web_flame_json(const char *trace, const char *content_hash, uint64_t bytes,
                   const char *thread, const char *weight, char **json, size_t *len, char *err,
                   size_t n);

#endif
