/* Helpers shared by `ptcall report`, `ptcall calls` and `ptcall graph` (decoder component). */
#ifndef PTCALL_CLI_COMMON_H
#define PTCALL_CLI_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ptcall/decode.h"

/* Decodes path into a new session (with the Intel PT front-end attached when linked in).
 * On failure prints "ptcall CMD: <what is wrong>: <what to do>" and returns NULL. With
 * salvage, damage ends (or skips) the input instead: *damage gets the error code (0 if
 * none) and damage_msg what was lost; the caller must say so. *early (if not NULL) gets
 * the session before decoding starts, for hooks that look up function names. */
struct ptc_session *cli_decode(const char *cmd, const char *path, int salvage,
                               ptc_call_hook hook, void *hook_ctx,
                               void (*end_hook)(void *, uint32_t, uint32_t, uintptr_t *),
                               struct ptc_session **early, int *damage, char *damage_msg,
                               size_t damage_len);
/* One-line error: "ptcall CMD: what: advice". Returns 1. */
int cli_fail(const char *cmd, const char *what, const char *advice);
/* What to do about a decoder error. */
const char *cli_advice(int err);
/* Usage error: prints "ptcall CMD: msg" and the usage text; returns 2. */
int cli_usage_error(const char *cmd, const char *usage, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Parses a non-negative integer; returns 0 or -1. */
int cli_parse_u64(const char *s, uint64_t *out);
/* Matches "--name VALUE" and "--name=VALUE"; returns 1 and sets *val (advancing *i), 0 if
 * argv[*i] is another flag, -1 if the value is missing. */
int cli_flag_value(int argc, char **argv, int *i, const char *name, const char **val);
/* A duration: "12.345 ms" (ns input) or "1234 ticks" (no time base). */
void cli_fmt_time(char *buf, size_t n, uint64_t v, int ns);
/* Writes s as a JSON string literal / CSV field / DOT string (quoted). */
void cli_json_str(FILE *f, const char *s);
void cli_csv_str(FILE *f, const char *s);
void cli_dot_str(FILE *f, const char *s);
/* A demangled C++ name without its parameter list and qualifiers ("ns::f(int) const" ->
 * "ns::f"), in buf; the name itself when there is nothing to drop. */
const char *cli_short_name(const char *name, char *buf, size_t n);
/* Basename of a path. */
const char *cli_base(const char *path);
/* Footer lines about losses and repairs (table outputs), to f. */
void cli_print_quality(FILE *f, const struct ptc_session *s, const struct ptc_totals *t);
const char *cli_backend_name(uint32_t backend);

#endif
