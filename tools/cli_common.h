/* Helpers shared by the analysis commands: errors, decoding a trace, formatting. Their
 * options are parsed by options.c. */
#ifndef PTCALL_CLI_COMMON_H
#define PTCALL_CLI_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ptcall/decode.h"

struct ptc_pt_measured;

/* One-line error: "ptcall CMD: what: advice". Returns 1. */
int cli_fail(const char *cmd, const char *what, const char *advice);
/* What to do about a decoder error. */
const char *cli_advice(int err);
/* Every value of a repeatable option, in the order given (options.h fills it). */
struct cli_list {
    const char **v;
    int n;
};
/* How an analysis command decodes a trace (from its options: options.h), and what salvage
 * lost. */
struct cli_args {
    const char *cmd;
    const char *path;
    int salvage;
    unsigned threads;       /* --threads N of report and graph: decode threads (0 = one
                             * per CPU); 1 when the command has no such option */
    /* called by cli_decode() once the session exists, before decoding: sets up a view's
     * driver on it; returns 0, or non-zero to stop (out of memory) */
    int (*prepare)(void *ctx, struct ptc_session *s);
    void *prepare_ctx;
    struct ptc_pt_measured *pt_measured; /* Intel PT packets by type are counted into it
                                            (ptc_pt_attach_measured) when not NULL */
    int damage;             /* set by cli_decode(): error code of the damage, 0 if none */
    char damage_msg[512];   /* and what was lost */
};
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
/* The ticker clock (issue 28, cli_clock.c): a time below the clock's resolution (ns; 0: the
 * TSC per event) is not shown as exact but as "< 10 us"; others as cli_fmt_time. */
void cli_fmt_time_res(char *buf, size_t n, uint64_t v, int ns, uint32_t resolution_ns);
/* "PREFIXtimes to 10 us: ticker clock (...)" and a newline. */
void cli_print_resolution(FILE *f, const char *prefix, uint32_t resolution_ns);
/* The same for outputs that carry raw figures (events, jsonl, folded): a 0 may be under it */
void cli_print_resolution_raw(FILE *f, const char *prefix, uint32_t resolution_ns);
/* Writes s as a JSON string literal / CSV field / DOT string (quoted) / a name in a text
 * table, through the one escaping of every output (common/ptc_escape.h). */
void cli_json_str(FILE *f, const char *s);
void cli_csv_str(FILE *f, const char *s);
void cli_dot_str(FILE *f, const char *s);
/* The inside of a DOT string (Graphviz reads none over 16,384 bytes: cut after 4,096 bytes,
 * with "..."). */
void cli_dot_chars(FILE *f, const char *s);
void cli_text_str(FILE *f, const char *s);
/* cli_text_str, then spaces up to width bytes (printf's "%-Ns" for a name in a column). */
void cli_text_pad(FILE *f, const char *s, int width);
/* A function's identity in the report's columns: CSV `name,linkage_name,module,file,line`,
 * JSON `"name": ..., "linkage_name": ..., "module": ..., "file": ..., "line": N` (no
 * separator before or after). */
void cli_csv_func(FILE *f, const char *name, const char *linkage, const char *module,
                  const char *file, uint32_t line);
void cli_json_func(FILE *f, const char *name, const char *linkage, const char *module,
                   const char *file, uint32_t line);
/* Footer lines about losses and repairs (table outputs), to f. */
void cli_print_quality(FILE *f, const struct ptc_session *s, const struct ptc_totals *t);
/* The trace's refused objects (MODULE_REFUSED: instrumented objects the runtime left
 * untraced), on one line after prefix, with each one's path and reason; nothing if none. */
void cli_print_refused(FILE *f, const struct ptc_session *s, const char *prefix);
/* One line per process a sanitizer stopped (END_CAUSE chunks), each starting with prefix. */
void cli_print_end_causes(FILE *f, const struct ptc_session *s, const char *prefix);
/* cli_window.c: traces that do not hold a thread's whole life (attach, snapshots): the
 * snapshot, each thread's window, the calls entered before it (text notes, for
 * cli_print_quality), and the report's "windows" and "snapshots" JSON members (each
 * starting with ",\n  "). */
void cli_print_windows(FILE *f, const struct ptc_session *s, const struct ptc_totals *t);
void cli_json_windows(FILE *f, const struct ptc_session *s);
/* A decoded trace without functions: what to say (in what, n bytes) and the advice to give.
 * When the runtime refused every instrumented object (MODULE_REFUSED), it says so. */
const char *cli_no_module(char *what, size_t n, const char *path, const struct ptc_session *s);
/* How the recorded command ended (RECORD_END's wait status) as "exited N" or "was killed by
 * signal N (SIGX)[, core dumped]" in out; 0 when the status says neither. */
int cli_command_end(int32_t wait_status, char *out, size_t n);
const char *cli_backend_name(uint32_t backend);

#endif
