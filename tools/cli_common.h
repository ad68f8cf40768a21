/* Helpers shared by `ptcall report`, `ptcall calls` and `ptcall graph` (decoder component). */
#ifndef PTCALL_CLI_COMMON_H
#define PTCALL_CLI_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ptcall/decode.h"

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
/* Matches "--name WORD" and "--name=WORD" with WORD one of words (NULL-terminated);
 * returns 1 and sets *k to WORD's index, 0 if argv[*i] is another flag, -1 if the value is
 * missing or not one of words. */
int cli_flag_choice(int argc, char **argv, int *i, const char *name, const char *const *words,
                    int *k);
/* What every analysis command takes besides its own options (FILE, --salvage, --help),
 * and what salvage lost. */
struct cli_args {
    const char *cmd, *usage;
    const char *path;
    int salvage;
    unsigned threads;       /* --threads N of report and graph: decode threads (0 = one
                             * per CPU); 1 when the command has no such option */
    /* called by cli_decode() once the session exists, before decoding: sets up a view's
     * driver on it; returns 0, or non-zero to stop (out of memory) */
    int (*prepare)(void *ctx, struct ptc_session *s);
    void *prepare_ctx;
    int damage;             /* set by cli_decode(): error code of the damage, 0 if none */
    char damage_msg[512];   /* and what was lost */
};
#define CLI_ARG_TAKEN (-1)
/* Takes arg, which none of the command's own options matched. Returns CLI_ARG_TAKEN to go
 * on, else the command's exit status: 0 after printing the usage for --help, 2 after a
 * usage error (an unknown option, a second trace file). */
int cli_take_arg(struct cli_args *a, const char *arg);
/* Matches "--threads N" (report, graph): returns 1 after setting a->threads, 0 if argv[*i]
 * is another flag, or the command's exit status 2 after a usage error. */
int cli_take_threads(int argc, char **argv, int *i, struct cli_args *a);
/* After the last argument: 0, or 2 after the usage error when no trace file was given. */
int cli_args_done(const struct cli_args *a);
/* Decodes a->path into a new session (with the Intel PT front-end attached when linked
 * in). On failure prints "ptcall CMD: <what is wrong>: <what to do>" and returns NULL.
 * With a->salvage, damage ends (or skips) the input instead: a->damage and a->damage_msg
 * say what was lost, and the caller must say so. *early (if not NULL) gets the session
 * before decoding starts, for hooks that look up function names. */
struct ptc_session *cli_decode(struct cli_args *a, ptc_call_hook hook, void *hook_ctx,
                               void (*end_hook)(void *, uint32_t, uint32_t, uintptr_t *),
                               struct ptc_session **early);
/* The stderr warning that the output of a salvaged trace is partial; covers says what
 * ("the graph covers"). */
void cli_warn_salvaged(const char *cmd, const char *covers, const char *damage_msg);
/* Flushes stdout: 0, or 1 after saying that the output (what) cannot be written. */
int cli_flush_output(const char *cmd, const char *what);
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
