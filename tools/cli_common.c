/* Helpers shared by report/calls/graph. */
#define _GNU_SOURCE /* sigabbrev_np */
#include "cli_common.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "ptc_escape.h"
#include "ptc_pt_decode.h"

int cli_fail(const char *cmd, const char *what, const char *advice)
{
    fflush(stdout);
    fprintf(stderr, "ptcall %s: %s: %s\n", cmd, what, advice);
    return 1;
}

const char *cli_advice(int err)
{
    switch (err < 0 ? -err : err) {
    case PTC_E_IO:
        return "check the path and its permissions";
    case PTC_E_FORMAT:
        return "give a trace file written by 'ptcall record'";
    case PTC_E_VERSION:
        return "read it with the ptcall version that recorded it";
    case PTC_E_TRUNCATED:
        return "the recording was cut short; rerun with --salvage to analyse what precedes "
               "the damage";
    case PTC_E_CORRUPT:
        return "the file is damaged; rerun with --salvage to skip the damaged chunks";
    case PTC_E_NOMEM:
        return "free some memory and retry";
    case PTC_E_NOMODULE:
        return "build the program with ptcall-cc (or ptcall-c++) and record it again";
    case PTC_E_UNSUPPORTED:
        return "read it with a newer ptcall";
    default:
        return "report this as a ptcall bug";
    }
}

void cli_warn_salvaged(const char *cmd, const char *covers, const char *damage_msg)
{
    fprintf(stderr, "ptcall %s: warning: salvaged: %s; %s only what precedes the damage (or "
                    "the undamaged chunks)\n",
            cmd, damage_msg, covers);
}

int cli_flush_output(const char *cmd, const char *what)
{
    if (!fflush(stdout) && !ferror(stdout))
        return 0;
    fprintf(stderr, "ptcall %s: cannot write %s: check the output device\n", cmd, what);
    return 1;
}

void cli_fmt_time(char *buf, size_t n, uint64_t v, int ns)
{
    if (!ns) {
        snprintf(buf, n, "%llu ticks", (unsigned long long)v);
        return;
    }
    if (v < 1000)
        snprintf(buf, n, "%llu ns", (unsigned long long)v);
    else if (v < 1000000)
        snprintf(buf, n, "%.3f us", (double)v / 1e3);
    else if (v < 1000000000)
        snprintf(buf, n, "%.3f ms", (double)v / 1e6);
    else
        snprintf(buf, n, "%.3f s", (double)v / 1e9);
}

/* The one escaping of every output (common/ptc_escape.h). */
void cli_json_str(FILE *f, const char *s)
{
    ptc_fput_json(f, s ? s : "");
}

void cli_csv_str(FILE *f, const char *s)
{
    ptc_fput_csv(f, s);
}

/* Graphviz reads no quoted string longer than 16,384 bytes: a name in a DOT string is cut
 * after CLI_DOT_MAX bytes, where "..." says so. */
#define CLI_DOT_MAX 4096

struct dot_budget {
    FILE *f;
    size_t left;
    int cut;
};

static void put_dot(void *ctx, const char *s, size_t n)
{
    struct dot_budget *b = ctx;
    if (b->cut)
        return;
    if (n <= b->left) {
        fwrite(s, 1, n, b->f);
        b->left -= n;
        return;
    }
    b->cut = 1;
    if (memchr(s, '\\', n)) /* an escape: whole or not at all (a lone \ escapes the quote) */
        return;
    size_t k = b->left;
    while (k && ((unsigned char)s[k] & 0xc0) == 0x80)
        k--; /* not inside a character */
    fwrite(s, 1, k, b->f);
}

void cli_dot_chars(FILE *f, const char *s)
{
    struct dot_budget b = {f, CLI_DOT_MAX, 0};
    if (s)
        ptc_escape(s, strlen(s), PTC_ESC_DOT, put_dot, &b);
    if (b.cut)
        fputs("...", f);
}

void cli_dot_str(FILE *f, const char *s)
{
    fputc('"', f);
    cli_dot_chars(f, s);
    fputc('"', f);
}

void cli_text_str(FILE *f, const char *s)
{
    ptc_fput_text(f, s);
}

struct counted {
    FILE *f;
    size_t n;
};

static void put_counted(void *ctx, const char *s, size_t n)
{
    struct counted *c = ctx;
    fwrite(s, 1, n, c->f);
    c->n += n;
}

void cli_text_pad(FILE *f, const char *s, int width)
{
    struct counted c = {f, 0};
    if (s)
        ptc_escape(s, strlen(s), PTC_ESC_TEXT, put_counted, &c);
    for (; c.n < (size_t)(width > 0 ? width : 0); c.n++)
        fputc(' ', f);
}

const char *cli_backend_name(uint32_t backend)
{
    switch (backend) {
    case PTC_BACKEND_SOFT:
        return "soft";
    case PTC_BACKEND_PT:
        return "pt";
    case PTC_BACKEND_IMPORT:
        return "import";
    default:
        return "unknown";
    }
}

struct lossy_ctx {
    FILE *f;
    int n;
};

static void print_lossy(void *ctx, uint32_t pid, uint32_t tid, uint64_t lost, uint64_t gaps)
{
    struct lossy_ctx *c = ctx;
    if (c->n < 8)
        fprintf(c->f, "%s%u/%u", c->n ? ", " : "", pid, tid);
    else if (c->n == 8)
        fprintf(c->f, ", ...");
    (void)lost;
    (void)gaps;
    c->n++;
}

int cli_command_end(int32_t wait_status, char *out, size_t n)
{
    int ws = (int)wait_status;
    if (WIFEXITED(ws))
        snprintf(out, n, "exited %d", WEXITSTATUS(ws));
    else if (WIFSIGNALED(ws))
        snprintf(out, n, "was killed by signal %d (SIG%s)%s", WTERMSIG(ws),
                 sigabbrev_np(WTERMSIG(ws)) ? sigabbrev_np(WTERMSIG(ws)) : "?",
                 WCOREDUMP(ws) ? ", core dumped" : "");
    else
        return 0;
    return 1;
}

#define UNFINISHED_SHOWN 8

struct unfinished_ctx {
    FILE *f;
    const struct ptc_totals *t;
    size_t n;
    int has_origin;
    uint64_t origin;
};

/* One thread of a process that did not close its trace: where its record stops. */
static void print_unfinished(void *ctx, uint32_t pid, uint32_t tid, uint64_t events,
                             int has_time, uint64_t last)
{
    struct unfinished_ctx *c = ctx;
    if (c->n++ >= UNFINISHED_SHOWN)
        return;
    fprintf(c->f, "warning:   %u/%u: %llu events recorded", pid, tid, (unsigned long long)events);
    if (has_time && c->has_origin && last >= c->origin) {
        if (c->t->has_timebase)
            fprintf(c->f, ", the last at %.3f ms", (double)(last - c->origin) / 1e6);
        else
            fprintf(c->f, ", the last at tick %llu", (unsigned long long)(last - c->origin));
    }
    fprintf(c->f, "; what it did after is lost\n");
}

void cli_print_refused(FILE *f, const struct ptc_session *s, const char *prefix)
{
    uint32_t n = ptc_session_num_refused(s);
    if (!n)
        return;
    fprintf(f, "%s%u instrumented object%s not traced (", prefix, n, n == 1 ? " was" : "s were");
    for (uint32_t i = 0; i < n; i++) {
        struct ptc_refused_object r;
        if (ptc_session_refused(s, i, &r) == 0) {
            fputs(i ? "; " : "", f);
            cli_text_str(f, r.path);
            fprintf(f, ": %s", r.reason);
        }
    }
    fprintf(f, "): %s functions are missing from every figure, which are lower bounds\n",
            n == 1 ? "its" : "their");
}

void cli_print_quality(FILE *f, const struct ptc_session *s, const struct ptc_totals *t)
{
    if (t->lost_events || t->gaps || t->lost_other) {
        fprintf(f, "warning: ");
        if (t->lost_events)
            fprintf(f, "%llu events lost", (unsigned long long)t->lost_events);
        else
            fprintf(f, "events lost (count unknown)");
        fprintf(f, " at %llu gap%s", (unsigned long long)t->gaps, t->gaps == 1 ? "" : "s");
        if (t->missing_chunks)
            fprintf(f, " (%llu chunk%s missing)", (unsigned long long)t->missing_chunks,
                    t->missing_chunks == 1 ? "" : "s");
        if (t->lost_other)
            fprintf(f, ", %llu units of Intel PT data lost", (unsigned long long)t->lost_other);
        fprintf(f, ": figures for thread%s ", t->lossy_threads == 1 ? "" : "s");
        struct lossy_ctx c = {f, 0};
        ptc_session_lossy_threads(s, print_lossy, &c);
        if (!c.n)
            fprintf(f, "(all)");
        fprintf(f, " (pid/tid) are lower bounds; %llu open frame%s closed at gaps\n",
                (unsigned long long)t->broken_frames, t->broken_frames == 1 ? " was" : "s were");
    }
    if (t->repairs)
        fprintf(f, "note: %llu frame%s popped because %s exit was skipped (longjmp, or an "
                   "exception without unwind stubs): repaired\n",
                (unsigned long long)t->repairs, t->repairs == 1 ? "" : "s",
                t->repairs == 1 ? "its" : "their");
    if (t->unwound)
        fprintf(f, "note: %llu frame%s popped by landing pads (exceptions caught, longjmp "
                   "targets)\n",
                (unsigned long long)t->unwound, t->unwound == 1 ? "" : "s");
    if (t->governed)
        fprintf(f, "note: %llu call%s of functions a budget's governor demoted ended without "
                   "%s exit or exited after it counted them (calls stay exact)\n",
                (unsigned long long)t->governed, t->governed == 1 ? "" : "s",
                t->governed == 1 ? "its" : "their");
    if (t->unmatched)
        fprintf(f, "note: %llu exit%s of functions not on the shadow stack ignored\n",
                (unsigned long long)t->unmatched, t->unmatched == 1 ? "" : "s");
    if (t->bad_stubs)
        fprintf(f, "warning: %llu events named stubs no module has (treated as gaps)\n",
                (unsigned long long)t->bad_stubs);
    if (t->fork_unknown)
        fprintf(f, "warning: %llu fork child%s started without its parent's stack (fork point "
                   "not in the trace)\n",
                (unsigned long long)t->fork_unknown, t->fork_unknown == 1 ? "" : "ren");
    if (t->open_at_end)
        fprintf(f, "note: %llu frame%s still open at thread or process end (closed when the "
                   "thread's trace ended: its exit, the program's exit for a thread still "
                   "running or blocked, a detach or snapshot; their times are lower bounds)\n",
                (unsigned long long)t->open_at_end, t->open_at_end == 1 ? " was" : "s were");
    cli_print_windows(f, s, t);
    /* a snapshot is written by the process itself (its PROCESS_END SNAPSHOT is its end): no
     * recorder ran to write a RECORD_END */
    if (!t->record_end && ptc_session_num_snapshots(s) == 0)
        fprintf(f, "warning: the trace has no RECORD_END chunk: the recording was interrupted "
                   "and may miss its last events\n");
    if (t->unfinished_processes) {
        fprintf(f, "warning: INCOMPLETE: %llu process%s ended without closing %s trace (killed "
                   "by a signal the runtime cannot catch, such as SIGKILL, or a write error): "
                   "%s last events are lost, how many is not known, and the figures are lower "
                   "bounds\n",
                (unsigned long long)t->unfinished_processes,
                t->unfinished_processes == 1 ? "" : "es",
                t->unfinished_processes == 1 ? "its" : "their",
                t->unfinished_processes == 1 ? "its" : "their");
        struct unfinished_ctx c = {f, t, 0, 0, 0};
        c.has_origin = ptc_session_origin(s, &c.origin) == 0;
        ptc_session_unfinished_threads(s, print_unfinished, &c);
        if (c.n > UNFINISHED_SHOWN)
            fprintf(f, "warning:   ... and %zu more threads (--format json lists every one)\n",
                    c.n - UNFINISHED_SHOWN);
    }
    if (t->unclosed_threads)
        fprintf(f, "warning: INCOMPLETE: %llu thread%s of processes that closed their trace "
                   "%s no THREAD exit chunk: the end of %s stream may be missing (the runtime "
                   "could not finish %s at exit), and the figures are lower bounds\n",
                (unsigned long long)t->unclosed_threads, t->unclosed_threads == 1 ? "" : "s",
                t->unclosed_threads == 1 ? "has" : "have",
                t->unclosed_threads == 1 ? "its" : "their",
                t->unclosed_threads == 1 ? "it" : "them");
    if (t->refused_objects)
        cli_print_refused(f, s, "warning: INCOMPLETE: ");
    char how[96];
    if (t->record_end && cli_command_end(t->wait_status, how, sizeof(how)) && strcmp(how, "exited 0"))
        fprintf(f, "note: the command %s\n", how);
    cli_print_end_causes(f, s, "note: ");
}

void cli_print_end_causes(FILE *f, const struct ptc_session *s, const char *prefix)
{
    uint32_t n = ptc_session_num_end_causes(s);
    for (uint32_t i = 0; i < n; i++) {
        struct ptc_end_cause_info c;
        if (ptc_session_end_cause(s, i, &c) != 0 || c.kind != PTC_CAUSE_SANITIZER)
            continue;
        fprintf(f, "%sprocess %u was stopped by ", prefix, c.pid);
        cli_text_str(f, c.what);
        fprintf(f, " (exit status %d): its report is on the program's stderr; the trace holds "
                   "the calls up to it\n", c.status);
    }
}

struct ptc_session *cli_decode(struct cli_args *a, ptc_call_hook hook, void *hook_ctx,
                               void (*end_hook)(void *, uint32_t, uint32_t, uintptr_t *),
                               struct ptc_session **early)
{
    const char *cmd = a->cmd;
    a->damage = 0;
    struct ptc_session *s = ptc_session_new();
    if (!s) {
        cli_fail(cmd, "out of memory", cli_advice(PTC_E_NOMEM));
        return NULL;
    }
    if (ptc_pt_attach) {
        int e = a->pt_measured ? ptc_pt_attach_measured(s, a->pt_measured) : ptc_pt_attach(s);
        if (e) {
            cli_fail(cmd, ptc_session_errmsg(s)[0] ? ptc_session_errmsg(s) : ptc_strerror(e),
                     cli_advice(e));
            ptc_session_free(s);
            return NULL;
        }
    }
    if (early)
        *early = s;
    if (a->prepare && a->prepare(a->prepare_ctx, s)) {
        cli_fail(cmd, "out of memory", cli_advice(PTC_E_NOMEM));
        ptc_session_free(s);
        return NULL;
    }
    if (hook)
        ptc_session_set_call_hook(s, hook, hook_ctx);
    if (end_hook)
        ptc_session_set_thread_end_hook(s, end_hook, hook_ctx);
    unsigned flags = a->salvage ? PTC_DECODE_SALVAGE : 0;
    int rc = a->threads == 1 ? ptc_decode_file(s, a->path, flags)
                             : ptc_decode_file_threads(s, a->path, flags, a->threads);
    int salvageable = rc == -PTC_E_TRUNCATED || rc == -PTC_E_CORRUPT ||
                      rc == -PTC_E_UNSUPPORTED || rc == -PTC_E_IO;
    if (rc && !(a->salvage && salvageable && ptc_session_num_funcs(s))) {
        cli_fail(cmd, ptc_session_errmsg(s)[0] ? ptc_session_errmsg(s) : ptc_strerror(rc),
                 a->salvage && salvageable
                     ? "nothing can be salvaged: no module table survived the damage"
                     : cli_advice(rc));
        ptc_session_free(s);
        return NULL;
    }
    if (rc) {
        a->damage = rc;
        snprintf(a->damage_msg, sizeof(a->damage_msg), "%s", ptc_session_errmsg(s));
    }
    if (!ptc_session_num_funcs(s)) {
        char what[PTC_REFUSED_PATH_MAX + PTC_REFUSED_REASON_MAX + 700];
        const char *advice = cli_no_module(what, sizeof(what), a->path, s);
        cli_fail(cmd, what, advice);
        ptc_session_free(s);
        return NULL;
    }
    return s;
}

const char *cli_no_module(char *what, size_t n, const char *path, const struct ptc_session *s)
{
    uint32_t nref = ptc_session_num_refused(s);
    struct ptc_refused_object r;
    if (!nref || ptc_session_refused(s, 0, &r)) {
        snprintf(what, n, "%s holds no instrumented module", path);
        return cli_advice(PTC_E_NOMODULE);
    }
    /* the program was instrumented: the runtime left every object of it untraced */
    snprintf(what, n, "%s holds no traced module: the runtime refused %u instrumented "
                      "object%s (%s: %s%s)", path, nref, nref == 1 ? "" : "s", r.path,
             r.reason, nref > 1 ? "; ..." : "");
    return "see the runtime's warnings when it ran (docs/reliability.md); rebuild the object "
           "with ptcall-cc and record again";
}

void cli_csv_func(FILE *f, const char *name, const char *linkage, const char *module,
                  const char *file, uint32_t line)
{
    cli_csv_str(f, name);
    fputc(',', f);
    cli_csv_str(f, linkage);
    fputc(',', f);
    cli_csv_str(f, module);
    fputc(',', f);
    cli_csv_str(f, file);
    if (line) /* 0: not known, an empty field (JSON says 0) */
        fprintf(f, ",%u", line);
    else
        fputc(',', f);
}

void cli_json_func(FILE *f, const char *name, const char *linkage, const char *module,
                   const char *file, uint32_t line)
{
    fputs("\"name\": ", f);
    cli_json_str(f, name);
    fputs(", \"linkage_name\": ", f);
    cli_json_str(f, linkage);
    fputs(", \"module\": ", f);
    cli_json_str(f, module);
    fputs(", \"file\": ", f);
    cli_json_str(f, file);
    fprintf(f, ", \"line\": %u", line);
}
