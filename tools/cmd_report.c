/* ptcall report: per-function calls, inclusive and self time, hottest first. */
#define _GNU_SOURCE /* qsort_r: the sort key travels with the call, not in a global */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "aggregate.h"
#include "cli_budget.h"
#include "cli_common.h"
#include "cli_select.h"
#include "cli_view.h"
#include "views.h"
#include "commands.h"
#include "options.h"
#include "runs.h"

enum sort_key { SORT_DEFAULT, SORT_CALLS, SORT_SELF, SORT_TOTAL };
enum fmt { FMT_TABLE, FMT_CSV, FMT_JSON };

struct row {
    uint32_t id;
    const struct ptc_func_info *fi;
    struct ptc_func_stats st;
    int state;      /* enum ptc_func_state: a counted function has calls, no times */
    int blocking;   /* a pseudo-function of the module [blocking] (trace format 2.6) */
    int demoted;    /* traced until a budget's governor demoted it, counted after (2.8) */
};

static int cmp_row(const void *a, const void *b, void *ctx)
{
    const struct row *x = a, *y = b;
    uint64_t kx, ky;
    switch (*(const enum sort_key *)ctx) {
    case SORT_SELF:
        kx = x->st.self, ky = y->st.self;
        break;
    case SORT_TOTAL:
        kx = x->st.total, ky = y->st.total;
        break;
    default:
        kx = x->st.calls, ky = y->st.calls;
        break;
    }
    if (kx != ky)
        return kx > ky ? -1 : 1;
    if (x->st.calls != y->st.calls)
        return x->st.calls > y->st.calls ? -1 : 1;
    int c = strcmp(x->fi->name, y->fi->name);
    if (c)
        return c;
    return x->id < y->id ? -1 : x->id > y->id;
}

static double pct(uint64_t v, uint64_t total) { return total ? 100.0 * (double)v / (double)total : 0.0; }

static void print_rows(const struct ptc_totals *t, struct row *rows, size_t n, size_t shown,
                       int mixed);

/* A table's last column, "function [module]": names from binaries and paths, escaped to stay
 * one line that sends the terminal nothing (cli_text_str). */
static void print_name(const char *name, const char *module)
{
    cli_text_str(stdout, name);
    printf(" [");
    cli_text_str(stdout, ptc_out_base(module));
    printf("]");
}

/* The table's header lines. */
static void print_head(const char *path, const struct ptc_session *s, const struct ptc_totals *t)
{
    int timed = t->timed;
    int ns = t->has_timebase;
    printf("# ptcall report of ");
    cli_text_str(stdout, path);
    printf(": %s backend, %llu process%s, %llu thread%s, %llu events, %llu calls\n",
           cli_backend_name(t->backend), (unsigned long long)t->processes,
           t->processes == 1 ? "" : "es", (unsigned long long)t->threads,
           t->threads == 1 ? "" : "s", (unsigned long long)t->events,
           (unsigned long long)t->calls);
    cli_print_selection(stdout, "# ", s);
    int mixed = cli_print_budget(stdout, "# ", s) > 0; /* says its counted calls itself */
    if (t->counts_segments && !mixed)
        printf("# counts only (record --counts): %llu calls from %llu COUNTS segment%s; no "
               "times, no call graph\n", (unsigned long long)t->counted_calls,
               (unsigned long long)t->counts_segments, t->counts_segments == 1 ? "" : "s");
    if (t->counts_segments && !t->events)
        ; /* the line above says why there are no time columns */
    else if (!timed)
        printf("# untimed trace (recorded without per-event timestamps): no time columns\n");
    else if (!ns)
        printf("# no time base in the trace: times are in TSC ticks\n");
    else {
        char b[32];
        cli_fmt_time(b, sizeof(b), t->total_time, 1);
        /* each thread's calls add their time: the sum over threads, said so (a thread's
         * outermost function shows that thread's part of the sum, not 100 %) */
        if (t->threads > 1)
            printf("# time in traced functions, summed over %llu threads: %s (shares are of this "
                   "sum: a function running the whole time in one of them shows that thread's "
                   "part of it; report --by thread shows each thread apart)\n",
                   (unsigned long long)t->threads, b);
        else
            printf("# time in traced functions: %s (shares are of this total)\n", b);
        if (t->resolution_ns)
            cli_print_resolution(stdout, "# ", t->resolution_ns);
        if (t->blocking)
            printf("# blocked: time a function spent in calls into the C library's blocking "
                   "functions (waits, I/O, sleeps), which its self time leaves out; those calls "
                   "are the functions of the module [blocking]\n");
    }
}

/* The table's column header and rows (one group's, with --by). A trace recorded within a
 * budget (mixed) says each function's state; a counted function has no times ("-"). */
static void print_rows(const struct ptc_totals *t, struct row *rows, size_t n, size_t shown,
                       int mixed)
{
    int timed = t->timed, ns = t->has_timebase;
    const char *state_head = mixed ? "state    " : "";
    int blk = timed && t->blocking; /* the blocked column (report_blocked.c) */
    if (timed)
        printf("%12s %14s %7s %14s %7s%s  %s%s\n", "calls", "total", "total%", "self", "self%",
               blk ? "        blocked" : "", state_head, "function [module]");
    else
        printf("%12s  %s%s\n", "calls", state_head, "function [module]");
    for (size_t i = 0; i < shown; i++) {
        const struct row *r = &rows[i];
        if (timed && mixed && r->state != PTC_FUNC_TRACED) {
            printf("%12llu %14s %7s %14s %7s  ", (unsigned long long)r->st.calls, "-", "-", "-",
                   "-");
        } else if (timed) {
            char tb[32], sb[32];
            cli_fmt_time_res(tb, sizeof(tb), r->st.total, ns, t->resolution_ns);
            cli_fmt_time_res(sb, sizeof(sb), r->st.self, ns, t->resolution_ns);
            printf("%12llu %14s %6.1f%% %14s %6.1f%%", (unsigned long long)r->st.calls, tb,
                   pct(r->st.total, t->total_time), sb, pct(r->st.self, t->total_time));
            if (blk) {
                char bb[32];
                cli_fmt_time_res(bb, sizeof(bb), r->st.blocked, ns, t->resolution_ns);
                printf(" %14s", r->st.blocked ? bb : "-");
            }
            printf("  ");
        } else {
            printf("%12llu  ", (unsigned long long)r->st.calls);
        }
        if (mixed)
            printf("%-8s ", r->demoted ? "demoted" : ptc_func_state_name(r->state));
        print_name(r->fi->name, r->fi->module);
        if (r->blocking)
            printf(" (blocking call: waited, not ran)");
        printf("\n");
    }
    if (shown < n)
        printf("(%zu more function%s called; --top 0 shows all)\n", n - shown,
               n - shown == 1 ? "" : "s");
}

/* The table's footer: totals and trace quality. */
static void print_footer(struct ptc_session *s, const struct ptc_totals *t)
{
    printf("events %llu, threads %llu, processes %llu, gaps %llu, repairs %llu, unwound %llu, "
           "unmatched %llu, losses %llu\n",
           (unsigned long long)t->events, (unsigned long long)t->threads,
           (unsigned long long)t->processes, (unsigned long long)t->gaps,
           (unsigned long long)t->repairs, (unsigned long long)t->unwound,
           (unsigned long long)t->unmatched, (unsigned long long)t->lost_events);
    if (t->whole_calls)
        printf("(%llu calls of leaf functions were recorded as one record each, and count as two events: "
               "entry and return)\n", (unsigned long long)t->whole_calls);
    cli_print_quality(stdout, s, t);
}

/* Plain RFC 4180: the header is the first line, so csv readers (Python's csv.DictReader,
 * pandas) take it as the header; the metadata goes to --meta FILE. */
static void print_csv(const struct ptc_totals *t, struct row *rows, size_t shown,
                      const struct ptc_agg_group *g, int header, int mixed)
{
    if (header)
        printf("%srank,function,linkage_name,module,file,line,calls,total,self,total_pct,"
               "self_pct%s\n", g ? "pid,tid," : "", mixed ? ",state" : "");
    for (size_t i = 0; i < shown; i++) {
        const struct row *r = &rows[i];
        if (g)
            printf("%u,%u,", g->pid, g->tid);
        printf("%zu,", i + 1);
        cli_csv_func(stdout, r->fi->name, r->fi->linkage_name, r->fi->module, r->fi->file,
                     r->fi->line);
        printf(",%llu,", (unsigned long long)r->st.calls);
        if (t->timed && r->state == PTC_FUNC_TRACED)
            printf("%llu,%llu,%.2f,%.2f", (unsigned long long)r->st.total,
                   (unsigned long long)r->st.self, pct(r->st.total, t->total_time),
                   pct(r->st.self, t->total_time));
        else
            printf(",,,");
        printf(mixed ? ",%s\n" : "\n", cli_state_word(r->state));
    }
}

/* "command": how the recorded command ended (RECORD_END), or null when the trace does not
 * say (no RECORD_END: the recording was interrupted, or another tool wrote the trace) */
static void json_command(FILE *f, const struct ptc_totals *t)
{
    int ws = (int)t->wait_status;
    fprintf(f, ",\n  \"command\": ");
    if (!t->record_end || !(WIFEXITED(ws) || WIFSIGNALED(ws)))
        fprintf(f, "null");
    else if (WIFEXITED(ws))
        fprintf(f, "{\"exit_status\": %d, \"signal\": null, \"core_dumped\": false}",
                WEXITSTATUS(ws));
    else
        fprintf(f, "{\"exit_status\": null, \"signal\": %d, \"core_dumped\": %s}",
                WTERMSIG(ws), WCOREDUMP(ws) ? "true" : "false");
}

/* "end_causes": processes a sanitizer stopped (END_CAUSE chunks), [] when none */
static void json_end_causes(FILE *f, const struct ptc_session *s)
{
    fprintf(f, ",\n  \"end_causes\": [");
    uint32_t n = ptc_session_num_end_causes(s);
    for (uint32_t i = 0; i < n; i++) {
        struct ptc_end_cause_info c;
        if (ptc_session_end_cause(s, i, &c) != 0)
            continue;
        fprintf(f, "%s{\"pid\": %u, \"kind\": \"%s\", \"cause\": ", i ? ", " : "", c.pid,
                c.kind == PTC_CAUSE_SANITIZER ? "sanitizer" : "other");
        cli_json_str(f, c.what);
        fprintf(f, ", \"exit_status\": %d}", c.status);
    }
    fprintf(f, "]");
}

struct unfinished_json {
    FILE *f;
    size_t n;
    int has_origin;
    uint64_t origin;
};

/* "unfinished": a thread of a process that did not close its trace, where its record stops
 * (last_event: time since the trace's origin, in time_unit; null when not known) */
static void json_unfinished(void *ctx, uint32_t pid, uint32_t tid, uint64_t events,
                            int has_time, uint64_t last)
{
    struct unfinished_json *u = ctx;
    fprintf(u->f, "%s{\"pid\": %u, \"tid\": %u, \"events\": %llu, \"last_event\": ",
            u->n++ ? ", " : "", pid, tid, (unsigned long long)events);
    if (has_time && u->has_origin && last >= u->origin)
        fprintf(u->f, "%llu}", (unsigned long long)(last - u->origin));
    else
        fprintf(u->f, "null}");
}

/* ---- marks (ptcall_mark) ------------------------------------------------------------- */

static int cmp_mark(const void *a, const void *b)
{
    const struct ptc_mark_stats *x = a, *y = b;
    if (x->marks != y->marks)
        return x->marks > y->marks ? -1 : 1;
    return strcmp(x->label, y->label);
}

/* The trace's mark labels, most marked first (then by label, for a stable order). Returns 0
 * with *out (NULL when none; the caller frees it) and *n, or -1 when out of memory. */
static int mark_rows(const struct ptc_session *s, struct ptc_mark_stats **out, uint32_t *n)
{
    *out = NULL;
    *n = ptc_session_num_mark_labels(s);
    if (!*n)
        return 0;
    struct ptc_mark_stats *m = malloc(*n * sizeof(*m));
    if (!m)
        return -1;
    for (uint32_t i = 0; i < *n; i++)
        ptc_session_mark_stats(s, i, &m[i]);
    qsort(m, *n, sizeof(*m), cmp_mark);
    *out = m;
    return 0;
}

/* The table's marks: how often each label was marked and, per label, the segments its
 * marks closed (counting mode: calls per segment; timed traces: time per segment). */
static void print_marks(const struct ptc_mark_stats *m, uint32_t n, uint64_t top,
                        const struct ptc_totals *t)
{
    if (!n)
        return;
    uint64_t all = 0;
    int timed = 0, counted = t->counts_segments != 0;
    for (uint32_t i = 0; i < n; i++) {
        all += m[i].marks;
        timed |= m[i].segments != 0;
    }
    printf("\n# marks (ptcall_mark): %llu, %u label%s\n", (unsigned long long)all, n,
           n == 1 ? "" : "s");
    if (counted)
        printf("%12s %14s  %s\n", "marks", "calls/segment", "label");
    else if (timed)
        printf("%12s %14s %14s %14s  %s\n", "marks", "segment mean", "min", "max", "label");
    else
        printf("%12s  %s\n", "marks", "label");
    uint32_t shown = top && top < n ? (uint32_t)top : n;
    for (uint32_t i = 0; i < shown; i++) {
        const struct ptc_mark_stats *r = &m[i];
        printf("%12llu ", (unsigned long long)r->marks);
        if (counted) {
            printf("%14.1f ", r->marks ? (double)r->counted_calls / (double)r->marks : 0.0);
        } else if (timed && r->segments) {
            char a[32], lo[32], hi[32];
            cli_fmt_time(a, sizeof(a), r->segment_total / r->segments, t->has_timebase);
            cli_fmt_time(lo, sizeof(lo), r->segment_min, t->has_timebase);
            cli_fmt_time(hi, sizeof(hi), r->segment_max, t->has_timebase);
            printf("%14s %14s %14s ", a, lo, hi);
        } else if (timed) {
            printf("%14s %14s %14s ", "-", "-", "-");
        }
        /* quoted and escaped: a label is the program's string (newlines, quotes) */
        printf(" ");
        cli_json_str(stdout, r->label);
        printf("\n");
    }
    if (shown < n)
        printf("(%u more label%s; --top 0 shows all)\n", n - shown, n - shown == 1 ? "" : "s");
}

/* The table's marks section. Returns 0, or 1 after saying that memory ran out. */
static int table_marks(const struct ptc_session *s, uint64_t top, const struct ptc_totals *t)
{
    struct ptc_mark_stats *m;
    uint32_t n;
    if (mark_rows(s, &m, &n))
        return cli_fail("report", "out of memory", cli_advice(PTC_E_NOMEM));
    print_marks(m, n, top, t);
    free(m);
    return 0;
}

/* "marks": per label, most marked first; the segment figures are null where unknown. */
static void json_marks(FILE *f, const struct ptc_session *s, const struct ptc_totals *t)
{
    struct ptc_mark_stats *m;
    uint32_t n;
    fprintf(f, ",\n  \"marks\": [");
    if (mark_rows(s, &m, &n)) /* out of memory: the labels unsorted, without a copy */
        m = NULL;
    n = ptc_session_num_mark_labels(s);
    for (uint32_t i = 0; i < n; i++) {
        struct ptc_mark_stats one;
        if (m)
            one = m[i];
        else
            ptc_session_mark_stats(s, i, &one);
        const struct ptc_mark_stats *r = &one;
        fprintf(f, "%s\n    {\"label\": ", i ? "," : "");
        cli_json_str(f, r->label);
        fprintf(f, ", \"marks\": %llu, \"counted_calls\": ", (unsigned long long)r->marks);
        if (t->counts_segments)
            fprintf(f, "%llu", (unsigned long long)r->counted_calls);
        else
            fprintf(f, "null");
        fprintf(f, ", \"segments\": %llu, ", (unsigned long long)r->segments);
        if (r->segments)
            fprintf(f, "\"segment_total\": %llu, \"segment_min\": %llu, \"segment_max\": %llu}",
                    (unsigned long long)r->segment_total, (unsigned long long)r->segment_min,
                    (unsigned long long)r->segment_max);
        else
            fprintf(f, "\"segment_total\": null, \"segment_min\": null, \"segment_max\": null}");
    }
    fprintf(f, "%s]", n ? "\n  " : "");
    free(m);
}

/* "refused_objects": the instrumented objects the runtime left untraced (MODULE_REFUSED),
 * whose functions no figure holds. */
static void json_refused(FILE *f, const struct ptc_session *s)
{
    uint32_t n = ptc_session_num_refused(s);
    fprintf(f, ",\n  \"refused_objects\": [");
    for (uint32_t i = 0; i < n; i++) {
        struct ptc_refused_object r;
        if (ptc_session_refused(s, i, &r))
            continue;
        fprintf(f, "%s\n    {\"pid\": %u, \"path\": ", i ? "," : "", r.pid);
        cli_json_str(f, r.path);
        fprintf(f, ", \"reason\": ");
        cli_json_str(f, r.reason);
        fprintf(f, "}");
    }
    fprintf(f, "%s]", n ? "\n  " : "");
}

/* The JSON report's fields before "functions" (also the single-run --meta object). */
static void json_head(FILE *f, const char *path, const struct ptc_session *s,
                      const struct ptc_totals *t, int damage, const char *damage_msg)
{
    const char *unit = !t->timed ? "none" : t->has_timebase ? "ns" : "ticks";
    fprintf(f, "{\n  \"format_version\": 1,\n  \"tool\": \"ptcall report\",\n  \"trace\": ");
    cli_json_str(f, path);
    fprintf(f, ",\n  \"backend\": \"%s\",\n  \"timed\": %s,\n  \"time_unit\": \"%s\",\n",
            cli_backend_name(t->backend), t->timed ? "true" : "false", unit);
    /* the ticker clock (issue 28): times are the clock word's, known to this */
    if (t->timed && t->resolution_ns)
        fprintf(f, "  \"time_resolution_ns\": %u,\n", t->resolution_ns);
    else
        fprintf(f, "  \"time_resolution_ns\": null,\n");
    fprintf(f, "  \"totals\": {\"events\": %llu, \"whole_calls\": %llu, \"calls\": %llu, \"threads\": %llu, "
            "\"processes\": %llu, \"gaps\": %llu, \"missing_chunks\": %llu, \"lost_events\": "
            "%llu, \"lost_pt_units\": %llu, \"repairs\": %llu, \"unwound\": %llu, \"unmatched\": "
            "%llu, \"broken_frames\": %llu, \"open_at_end\": %llu, \"bad_stubs\": %llu, "
            "\"fork_unknown\": %llu, \"lossy_threads\": %llu, \"unfinished_processes\": %llu, "
            "\"unclosed_threads\": %llu, \"spawns\": %llu, \"entered_before\": %llu, "
            "\"still_open\": %llu, \"window_threads\": %llu, \"governed\": %llu, ",
            (unsigned long long)t->events, (unsigned long long)t->whole_calls,
            (unsigned long long)t->calls, (unsigned long long)t->threads,
            (unsigned long long)t->processes, (unsigned long long)t->gaps,
            (unsigned long long)t->missing_chunks,
            (unsigned long long)t->lost_events, (unsigned long long)t->lost_other,
            (unsigned long long)t->repairs, (unsigned long long)t->unwound,
            (unsigned long long)t->unmatched, (unsigned long long)t->broken_frames,
            (unsigned long long)t->open_at_end, (unsigned long long)t->bad_stubs,
            (unsigned long long)t->fork_unknown, (unsigned long long)t->lossy_threads,
            (unsigned long long)t->unfinished_processes,
            (unsigned long long)t->unclosed_threads, (unsigned long long)t->spawns,
            (unsigned long long)t->entered_before, (unsigned long long)t->still_open,
            (unsigned long long)t->window_threads, (unsigned long long)t->governed);
    /* counting mode, and traces of events with counted functions (within a budget) */
    if (t->counts_segments || cli_budget_mixed(s))
        fprintf(f, "\"counted_calls\": %llu, \"counts_segments\": %llu, ",
                (unsigned long long)t->counted_calls, (unsigned long long)t->counts_segments);
    fprintf(f, "\"complete\": %s, ",
            ptc_totals_complete(t) && !damage ? "true" : "false");
    if (t->timed)
        fprintf(f, "\"total_time\": %llu},\n", (unsigned long long)t->total_time);
    else
        fprintf(f, "\"total_time\": null},\n");
    fprintf(f, "  \"damage\": ");
    if (damage)
        cli_json_str(f, damage_msg);
    else
        fprintf(f, "null");
    json_command(f, t);
    struct unfinished_json u = {f, 0, 0, 0};
    u.has_origin = ptc_session_origin(s, &u.origin) == 0;
    fprintf(f, ",\n  \"unfinished\": [");
    ptc_session_unfinished_threads(s, json_unfinished, &u);
    fprintf(f, "]");
    json_refused(f, s);
    json_end_causes(f, s);
    cli_json_windows(f, s);
    json_marks(f, s, t);
    cli_json_selection(f, s, "  ");
    cli_json_budget(f, s, "  ");
}

/* --by thread: the thread's names (docs/usage.md, "Thread names"). A group is named by the
 * last name its thread had, as perf and uftrace name a task; the names before it are said,
 * so that a thread that named itself after starting is recognised under either. */
static void table_renamed(const struct ptc_session *s, uint32_t pid, uint32_t tid)
{
    const char *const *was;
    size_t n = ptc_session_thread_renamed(s, pid, tid, &was);
    for (size_t i = 0; i < n; i++) {
        printf(i ? ", \"" : " (renamed from \"");
        cli_text_str(stdout, was[i]);
        printf("\"");
    }
    if (n)
        printf(")");
}

/* `"name": "last" | null, "renamed_from": ["first", ...], ` */
static void json_thread_names(const struct ptc_session *s, uint32_t pid, uint32_t tid)
{
    const char *name = ptc_session_thread_name(s, pid, tid);
    printf("\"name\": ");
    if (name && *name)
        cli_json_str(stdout, name);
    else
        printf("null");
    const char *const *was;
    size_t n = ptc_session_thread_renamed(s, pid, tid, &was);
    printf(", \"renamed_from\": [");
    for (size_t i = 0; i < n; i++) {
        printf(i ? ", " : "");
        cli_json_str(stdout, was[i]);
    }
    printf("], ");
}

static void json_functions(const struct ptc_totals *t, struct row *rows, size_t shown,
                           const char *indent)
{
    for (size_t i = 0; i < shown; i++) {
        const struct row *r = &rows[i];
        printf("%s\n%s{", i ? "," : "", indent);
        cli_json_func(stdout, r->fi->name, r->fi->linkage_name, r->fi->module, r->fi->file,
                      r->fi->line);
        printf(", \"calls\": %llu, \"state\": \"%s\", ", (unsigned long long)r->st.calls,
               cli_state_word(r->state));
        printf("\"blocking\": %s, ", r->blocking ? "true" : "false");
        if (r->demoted)
            printf("\"demoted\": true, ");
        if (t->timed && r->state == PTC_FUNC_TRACED) /* counted: calls only, never 0 ns */
            printf("\"total\": %llu, \"self\": %llu, \"total_pct\": %.2f, \"self_pct\": %.2f, "
                   "\"running\": %llu, \"blocked\": %llu}",
                   (unsigned long long)r->st.total, (unsigned long long)r->st.self,
                   pct(r->st.total, t->total_time), pct(r->st.self, t->total_time),
                   (unsigned long long)(r->blocking ? 0 : r->st.self),
                   (unsigned long long)(r->blocking ? r->st.self : r->st.blocked));
        else
            printf("\"total\": null, \"self\": null, \"total_pct\": null, \"self_pct\": null, "
                   "\"running\": null, \"blocked\": null}");
    }
}

static void json_uncalled(struct ptc_session *s)
{
    printf("\n  ],\n  \"uncalled\": [");
    int first = 1;
    uint32_t nf = ptc_session_num_funcs(s);
    for (uint32_t id = 0; id < nf; id++) {
        struct ptc_func_stats st;
        ptc_session_func_stats(s, id, &st);
        /* neither traced nor counted: in "not_traced"; a counted one's 0 calls are exact */
        if (st.calls || ptc_session_func_state(s, id) == PTC_FUNC_NEITHER)
            continue;
        printf("%s", first ? "" : ", ");
        cli_json_str(stdout, ptc_session_func(s, id)->name);
        first = 0;
    }
    printf("]\n}\n");
}

static void print_json(const char *path, struct ptc_session *s, const struct ptc_totals *t,
                       struct row *rows, size_t shown, int damage, const char *damage_msg,
                       int filtered)
{
    json_head(stdout, path, s, t, damage, damage_msg);
    if (filtered)
        printf(",\n  \"filtered\": true");
    printf(",\n  \"functions\": [");
    json_functions(t, rows, shown, "    ");
    json_uncalled(s);
}

/* ---- --meta FILE ----------------------------------------------------------------------- */

/* Writes the metadata object with fn to path. Returns 0, or 1 after saying why it cannot be
 * written (a write error must not pass silently: the csv alone looks complete). */
static int write_meta(const char *path, void (*fn)(FILE *f, const void *ctx), const void *ctx)
{
    char what[1200];
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(what, sizeof(what), "cannot write the metadata file %s: %s", path,
                 strerror(errno));
        return cli_fail("report", what, "check the path and its permissions");
    }
    fn(f, ctx);
    int bad = ferror(f);
    errno = 0;
    if (fclose(f) || bad) {
        snprintf(what, sizeof(what), "cannot write the metadata file %s: %s", path,
                 errno ? strerror(errno) : "write error");
        return cli_fail("report", what, "check the output device");
    }
    return 0;
}

struct single_meta {
    const char *path;
    const struct ptc_session *s;
    const struct ptc_totals *t;
    int damage;
    const char *damage_msg;
};

static void single_meta(FILE *f, const void *ctx)
{
    const struct single_meta *m = ctx;
    json_head(f, m->path, m->s, m->t, m->damage, m->damage_msg);
    fprintf(f, "\n}\n");
}

/* ---- several runs ---------------------------------------------------------------------- */

struct multi {
    const struct runs_agg *g;
    const int *stats; /* enum runs_stat, in the order given */
    int nstats;
    int timed, ns;
    uint64_t total_time;
};

#define SUM(g, field) runs_agg_sum((g), offsetof(struct ptc_totals, field))

static int cmp_fn(const void *a, const void *b, void *ctx)
{
    const struct runs_fn *x = *(const struct runs_fn *const *)a;
    const struct runs_fn *y = *(const struct runs_fn *const *)b;
    enum sort_key sort = *(const enum sort_key *)ctx;
    int m = sort == SORT_SELF ? RUNS_SELF : sort == SORT_TOTAL ? RUNS_TOTAL : RUNS_CALLS;
    if (x->sum[m] != y->sum[m])
        return x->sum[m] > y->sum[m] ? -1 : 1;
    if (x->sum[RUNS_CALLS] != y->sum[RUNS_CALLS])
        return x->sum[RUNS_CALLS] > y->sum[RUNS_CALLS] ? -1 : 1;
    int c = strcmp(x->name, y->name);
    if (c)
        return c;
    size_t n = x->keylen < y->keylen ? x->keylen : y->keylen;
    c = memcmp(x->key, y->key, n);
    return c ? c : (x->keylen > y->keylen) - (x->keylen < y->keylen);
}

static int integral_stat(int st) { return st == RUNS_STAT_MIN || st == RUNS_STAT_MAX; }

static void table_stat(const struct multi *mu, const struct runs_fn *f, int m, int st)
{
    double v = runs_fn_stat(mu->g, f, m, st);
    if (m == RUNS_CALLS) {
        if (integral_stat(st))
            printf(" %12.0f", v);
        else
            printf(" %12.2f", v);
        return;
    }
    char b[32];
    cli_fmt_time(b, sizeof(b), (uint64_t)(v + 0.5), mu->ns);
    printf(" %14s", b);
}

static void print_runs_table(const struct multi *mu, const struct runs_fn **rows, size_t n,
                             size_t shown)
{
    const struct runs_agg *g = mu->g;
    uint64_t procs = SUM(g, processes), threads = SUM(g, threads);
    printf("# ptcall report of %zu run%s: %s backend, %llu process%s, %llu thread%s, %llu "
           "events, %llu calls (summed over the runs)\n",
           g->nread, g->nread == 1 ? "" : "s", runs_agg_backend(g), (unsigned long long)procs, procs == 1 ? "" : "es",
           (unsigned long long)threads, threads == 1 ? "" : "s",
           (unsigned long long)SUM(g, events), (unsigned long long)SUM(g, calls));
    printf("# runs:");
    size_t listed = 0;
    for (size_t i = 0; i < g->nrun; i++) {
        if (g->run[i].skipped)
            continue;
        if (listed++ == 8) {
            printf(" ... (%zu in all; --format json lists them)", g->nread);
            break;
        }
        printf("%s ", listed > 1 ? "," : "");
        cli_text_str(stdout, g->run[i].path);
    }
    printf("\n");
    if (g->mixed_units)
        printf("# the runs differ in timing (untimed, TSC ticks, ns): times cannot be added "
               "up, so calls only\n");
    else if (!mu->timed)
        printf("# untimed traces (recorded without per-event timestamps): no time columns\n");
    else if (!mu->ns)
        printf("# no time base in the traces: times are in TSC ticks\n");
    else {
        char b[32];
        cli_fmt_time(b, sizeof(b), mu->total_time, 1);
        printf("# time in traced functions: %s over the %zu run%s (shares are of this "
               "total)\n",
               b, g->nread, g->nread == 1 ? "" : "s");
    }
    size_t selective = runs_agg_count_selective(g);
    if (selective)
        printf("# %zu of the %zu runs traced only some functions (record --only/--skip; "
               "--format json has each run's selection): a function counts only in the runs "
               "that traced it\n",
               selective, g->nread);
    if (mu->nstats) {
        printf("# per-run statistics over the %zu run%s (", g->nread, g->nread == 1 ? "" : "s");
        for (int k = 0; k < mu->nstats; k++)
            printf("%s%s", k ? ", " : "", runs_stat_names[mu->stats[k]]);
        printf("): a run without the function counts as 0\n");
    }
    printf("%5s %12s", "runs", "calls");
    if (mu->timed)
        printf(" %14s %7s %14s %7s", "total", "total%", "self", "self%");
    for (int k = 0; k < mu->nstats; k++) {
        char h[32];
        for (int m = 0; m < (mu->timed ? RUNS_NMEAS : 1); m++) {
            snprintf(h, sizeof(h), "%s_%s", runs_meas_names[m], runs_stat_names[mu->stats[k]]);
            printf(m == RUNS_CALLS ? " %12s" : " %14s", h);
        }
    }
    printf("  %s\n", "function [module]");
    for (size_t i = 0; i < shown; i++) {
        const struct runs_fn *f = rows[i];
        printf("%5u %12llu", f->runs, (unsigned long long)f->sum[RUNS_CALLS]);
        if (mu->timed) {
            char tb[32], sb[32];
            cli_fmt_time(tb, sizeof(tb), f->sum[RUNS_TOTAL], mu->ns);
            cli_fmt_time(sb, sizeof(sb), f->sum[RUNS_SELF], mu->ns);
            printf(" %14s %6.1f%% %14s %6.1f%%", tb, pct(f->sum[RUNS_TOTAL], mu->total_time), sb,
                   pct(f->sum[RUNS_SELF], mu->total_time));
        }
        for (int k = 0; k < mu->nstats; k++)
            for (int m = 0; m < (mu->timed ? RUNS_NMEAS : 1); m++)
                table_stat(mu, f, m, mu->stats[k]);
        printf("  ");
        print_name(f->name, f->module);
        if (f->untraced_runs)
            printf(" (not traced in %u run%s)", f->untraced_runs,
                   f->untraced_runs == 1 ? "" : "s");
        printf("\n");
    }
    if (shown < n)
        printf("(%zu more function%s called; --top 0 shows all)\n", n - shown,
               n - shown == 1 ? "" : "s");
    printf("runs %zu, events %llu, threads %llu, processes %llu, gaps %llu, repairs %llu, "
           "unwound %llu, unmatched %llu, losses %llu\n",
           g->nread, (unsigned long long)SUM(g, events), (unsigned long long)threads,
           (unsigned long long)procs, (unsigned long long)SUM(g, gaps),
           (unsigned long long)SUM(g, repairs), (unsigned long long)SUM(g, unwound),
           (unsigned long long)SUM(g, unmatched), (unsigned long long)SUM(g, lost_events));
    size_t lossy = runs_agg_count_lossy(g);
    if (lossy) {
        /* losses are never mixed in silently: name every lossy run (the first ten here) */
        printf("warning: %zu of %zu runs are lossy or incomplete, and their figures are lower "
               "bounds (included in the sums; --format csv/json count them per function in "
               "lossy_runs):\n",
               lossy, g->nread);
        size_t k = 0;
        for (size_t i = 0; i < g->nrun; i++) {
            const struct runs_run *r = &g->run[i];
            if (r->skipped || !runs_run_lossy(r))
                continue;
            if (k++ == 10) {
                printf("warning:   ... (%zu more; --format json lists every run)\n", lossy - 10);
                break;
            }
            char d[1024];
            runs_describe_quality(r, d, sizeof(d));
            printf("warning:   ");
            cli_text_str(stdout, r->path);
            printf(": %s\n", d);
        }
    }
    for (size_t i = 0; i < g->nrun; i++)
        if (g->run[i].skipped) {
            printf("warning: left out ");
            cli_text_str(stdout, g->run[i].path);
            printf(": %s\n", g->run[i].skipped);
        }
    uint64_t rep = SUM(g, repairs), unw = SUM(g, unwound), unm = SUM(g, unmatched),
             open = SUM(g, open_at_end);
    if (rep)
        printf("note: %llu frame%s popped because %s exit was skipped (longjmp, or an "
               "exception without unwind stubs): repaired\n",
               (unsigned long long)rep, rep == 1 ? "" : "s", rep == 1 ? "its" : "their");
    if (unw)
        printf("note: %llu frame%s popped by landing pads (exceptions caught, longjmp targets)\n",
               (unsigned long long)unw, unw == 1 ? "" : "s");
    if (unm)
        printf("note: %llu exit%s of functions not on the shadow stack ignored\n",
               (unsigned long long)unm, unm == 1 ? "" : "s");
    if (open)
        printf("note: %llu frame%s still open at thread or process end (closed at the "
               "thread's last event)\n",
               (unsigned long long)open, open == 1 ? " was" : "s were");
}

static void csv_stat(const struct multi *mu, const struct runs_fn *f, int m, int st)
{
    if (m != RUNS_CALLS && !mu->timed) {
        printf(",");
        return;
    }
    double v = runs_fn_stat(mu->g, f, m, st);
    if (integral_stat(st))
        printf(",%.0f", v);
    else
        printf(",%.2f", v);
}

static void print_runs_csv(const struct multi *mu, const struct runs_fn **rows, size_t shown)
{
    printf("rank,function,linkage_name,module,file,line,runs,lossy_runs,calls,total,self,"
           "total_pct,self_pct");
    for (int k = 0; k < mu->nstats; k++)
        for (int m = 0; m < RUNS_NMEAS; m++)
            printf(",%s_%s", runs_meas_names[m], runs_stat_names[mu->stats[k]]);
    /* only then: the csv of runs that traced everything keeps its columns */
    int selective = runs_agg_count_selective(mu->g) != 0;
    printf("%s\n", selective ? ",untraced_runs" : "");
    for (size_t i = 0; i < shown; i++) {
        const struct runs_fn *f = rows[i];
        printf("%zu,", i + 1);
        cli_csv_func(stdout, f->name, f->linkage_name, f->module, f->file, f->line);
        printf(",%u,%u,%llu,", f->runs, f->lossy_runs, (unsigned long long)f->sum[RUNS_CALLS]);
        if (mu->timed)
            printf("%llu,%llu,%.2f,%.2f", (unsigned long long)f->sum[RUNS_TOTAL],
                   (unsigned long long)f->sum[RUNS_SELF], pct(f->sum[RUNS_TOTAL], mu->total_time),
                   pct(f->sum[RUNS_SELF], mu->total_time));
        else
            printf(",,,");
        for (int k = 0; k < mu->nstats; k++)
            for (int m = 0; m < RUNS_NMEAS; m++)
                csv_stat(mu, f, m, mu->stats[k]);
        if (selective)
            printf(",%u", f->untraced_runs);
        printf("\n");
    }
}

/* The multi-run JSON's fields before "functions" (also the multi-run --meta object). */
static void runs_json_head(FILE *f, const void *ctx)
{
    const struct multi *mu = ctx;
    const struct runs_agg *g = mu->g;
    fprintf(f, "{\n  \"format_version\": 2,\n  \"tool\": \"ptcall report\",\n  \"runs\": [");
    size_t k = 0;
    for (size_t i = 0; i < g->nrun; i++) {
        const struct runs_run *r = &g->run[i];
        if (r->skipped)
            continue;
        fprintf(f, "%s\n    ", k++ ? "," : "");
        runs_json_run(f, r);
    }
    fprintf(f, "\n  ],\n  \"skipped\": [");
    k = 0;
    for (size_t i = 0; i < g->nrun; i++) {
        const struct runs_run *r = &g->run[i];
        if (!r->skipped)
            continue;
        fprintf(f, "%s\n    {\"trace\": ", k++ ? "," : "");
        cli_json_str(f, r->path);
        fprintf(f, ", \"error\": ");
        cli_json_str(f, r->skipped);
        fprintf(f, "}");
    }
    fprintf(f, "%s],\n  \"backend\": \"%s\",\n  \"timed\": %s,\n  \"time_unit\": \"%s\",\n"
               "  \"mixed_time_units\": %s,\n  \"stats\": [",
            k ? "\n  " : "", runs_agg_backend(g), mu->timed ? "true" : "false",
            runs_unit_name(g->unit), g->mixed_units ? "true" : "false");
    for (int s = 0; s < mu->nstats; s++)
        fprintf(f, "%s\"%s\"", s ? ", " : "", runs_stat_names[mu->stats[s]]);
    fprintf(f, "],\n");
    fprintf(f, "  \"totals\": {\"runs\": %zu, \"lossy_runs\": %zu, \"incomplete_runs\": %zu, "
               "\"events\": %llu, \"whole_calls\": %llu, \"calls\": %llu, \"threads\": %llu, "
               "\"processes\": %llu, \"gaps\": %llu, \"missing_chunks\": %llu, \"lost_events\": "
               "%llu, \"lost_pt_units\": %llu, \"repairs\": %llu, \"unwound\": %llu, \"unmatched\": "
               "%llu, \"broken_frames\": %llu, \"open_at_end\": %llu, \"bad_stubs\": %llu, "
               "\"fork_unknown\": %llu, \"lossy_threads\": %llu, \"complete\": %s, ",
            g->nread, runs_agg_count_lossy(g), runs_agg_count_incomplete(g),
            (unsigned long long)SUM(g, events), (unsigned long long)SUM(g, whole_calls),
            (unsigned long long)SUM(g, calls), (unsigned long long)SUM(g, threads),
            (unsigned long long)SUM(g, processes), (unsigned long long)SUM(g, gaps),
            (unsigned long long)SUM(g, missing_chunks), (unsigned long long)SUM(g, lost_events),
            (unsigned long long)SUM(g, lost_other), (unsigned long long)SUM(g, repairs),
            (unsigned long long)SUM(g, unwound), (unsigned long long)SUM(g, unmatched),
            (unsigned long long)SUM(g, broken_frames), (unsigned long long)SUM(g, open_at_end),
            (unsigned long long)SUM(g, bad_stubs), (unsigned long long)SUM(g, fork_unknown),
            (unsigned long long)SUM(g, lossy_threads),
            runs_agg_count_incomplete(g) || k ? "false" : "true");
    if (mu->timed)
        fprintf(f, "\"total_time\": %llu}", (unsigned long long)mu->total_time);
    else
        fprintf(f, "\"total_time\": null}");
}

static void runs_meta(FILE *f, const void *ctx)
{
    runs_json_head(f, ctx);
    fprintf(f, "\n}\n");
}

/* The names of the functions called in no run: those that some run traced (untraced 0), or
 * those that no run traced (untraced 1: their calls are not known). */
static void runs_json_names(const struct runs_agg *g, int untraced)
{
    int first = 1;
    for (size_t i = 0; i < g->nfn; i++) {
        const struct runs_fn *f = &g->fn[i];
        if (f->runs || (f->untraced_runs == g->nread) != untraced)
            continue;
        printf("%s", first ? "" : ", ");
        cli_json_str(stdout, f->name);
        first = 0;
    }
}

static void print_runs_json(const struct multi *mu, const struct runs_fn **rows, size_t shown)
{
    const struct runs_agg *g = mu->g;
    runs_json_head(stdout, mu);
    printf(",\n  \"functions\": [");
    for (size_t i = 0; i < shown; i++) {
        const struct runs_fn *f = rows[i];
        printf("%s\n    {", i ? "," : "");
        cli_json_func(stdout, f->name, f->linkage_name, f->module, f->file, f->line);
        printf(", \"runs\": %u, \"lossy_runs\": %u, \"calls\": %llu, ", f->runs, f->lossy_runs,
               (unsigned long long)f->sum[RUNS_CALLS]);
        if (mu->timed)
            printf("\"total\": %llu, \"self\": %llu, \"total_pct\": %.2f, \"self_pct\": %.2f",
                   (unsigned long long)f->sum[RUNS_TOTAL], (unsigned long long)f->sum[RUNS_SELF],
                   pct(f->sum[RUNS_TOTAL], mu->total_time),
                   pct(f->sum[RUNS_SELF], mu->total_time));
        else
            printf("\"total\": null, \"self\": null, \"total_pct\": null, \"self_pct\": null");
        for (int k = 0; k < mu->nstats; k++)
            for (int m = 0; m < RUNS_NMEAS; m++) {
                int st = mu->stats[k];
                printf(", \"%s_%s\": ", runs_meas_names[m], runs_stat_names[st]);
                if (m != RUNS_CALLS && !mu->timed)
                    printf("null");
                else if (integral_stat(st))
                    printf("%.0f", runs_fn_stat(g, f, m, st));
                else
                    printf("%.2f", runs_fn_stat(g, f, m, st));
            }
        if (runs_agg_count_selective(g))
            printf(", \"untraced_runs\": %u", f->untraced_runs);
        printf("}");
    }
    printf("\n  ],\n  \"uncalled\": [");
    runs_json_names(g, 0);
    printf("]");
    if (runs_agg_count_selective(g)) {
        printf(",\n  \"not_traced\": [");
        runs_json_names(g, 1);
        printf("]");
    }
    printf("\n}\n");
}

/* What the command line asked for. */
struct report_opts {
    enum sort_key sort;     /* SORT_DEFAULT: total for timed traces, calls for untimed */
    uint64_t top;
    int have_top;
    enum fmt fmt;
    const char *meta;
    int allow_different;
    const int *stats;
    int nstats;
    int by;                 /* enum ptc_by */
    int paths;              /* --paths */
    struct ptc_paths_opts po;
    const struct cli_filter *cf;
};

static int report_runs(const struct report_opts *o, const struct cli_args *a,
                       const struct runs_paths *paths)
{
    struct runs_agg g;
    struct runs_ref ref = {0};
    runs_agg_init(&g);
    struct runs_opts ro = {.cmd = "report",
                           .salvage = a->salvage,
                           .threads = a->threads,
                           .allow_different = o->allow_different,
                           .nfiles = paths->n,
                           .ref = &ref};
    const struct runs_fn **rows = NULL;
    int rc = 0;
    for (size_t i = 0; i < paths->n && !rc; i++)
        rc = runs_agg_add_file(&g, &ro, paths->v[i]);
    if (rc)
        goto out;
    if (!g.nread) {
        rc = cli_fail("report", "none of the traces could be read",
                      "see the warnings above: give trace files written by 'ptcall record'");
        goto out;
    }
    struct multi mu = {.g = &g, .stats = o->stats, .nstats = o->nstats};
    mu.timed = g.unit != RUNS_UNTIMED;
    mu.ns = g.unit == RUNS_NS;
    mu.total_time = mu.timed ? SUM(&g, total_time) : 0;
    enum sort_key sort = o->sort;
    if (sort == SORT_DEFAULT)
        sort = mu.timed ? SORT_TOTAL : SORT_CALLS;
    if ((sort == SORT_SELF || sort == SORT_TOTAL) && !mu.timed) {
        rc = cli_fail("report",
                      g.mixed_units ? "--sort self/total needs times and the runs differ in "
                                      "timing (untimed, TSC ticks, ns)"
                                    : "--sort self/total needs times and these traces are untimed",
                      "use --sort calls, or give runs recorded with the same timing");
        goto out;
    }
    rows = malloc((g.nfn ? g.nfn : 1) * sizeof(*rows));
    if (!rows) {
        rc = cli_fail("report", "out of memory", cli_advice(PTC_E_NOMEM));
        goto out;
    }
    size_t n = 0;
    for (size_t i = 0; i < g.nfn; i++)
        if (g.fn[i].runs)
            rows[n++] = &g.fn[i];
    qsort_r(rows, n, sizeof(*rows), cmp_fn, &sort);
    uint64_t top = o->have_top ? o->top : o->fmt == FMT_TABLE ? 20 : 0;
    size_t shown = top && top < n ? (size_t)top : n;
    if (o->meta && (rc = write_meta(o->meta, runs_meta, &mu)))
        goto out;
    static char outbuf[1 << 16];
    setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
    for (size_t i = 0; i < g.nrun; i++)
        if (g.run[i].damage)
            fprintf(stderr, "ptcall report: warning: salvaged: %s; the figures of %s cover only "
                            "what precedes the damage (or the undamaged chunks)\n",
                    g.run[i].damage_msg, g.run[i].path);
    size_t lossy = runs_agg_count_lossy(&g);
    if (o->fmt == FMT_CSV && lossy)
        /* the csv has no room for it: say so where a person sees it */
        fprintf(stderr, "ptcall report: warning: %zu of %zu runs are lossy or incomplete: their "
                        "figures are lower bounds (lossy_runs counts them per function; --meta "
                        "FILE lists the runs)\n",
                lossy, g.nread);
    switch (o->fmt) {
    case FMT_TABLE:
        print_runs_table(&mu, rows, n, shown);
        break;
    case FMT_CSV:
        print_runs_csv(&mu, rows, shown);
        break;
    case FMT_JSON:
        print_runs_json(&mu, rows, shown);
        break;
    }
    rc = cli_flush_output("report", "the report");
out:
    free(rows);
    runs_agg_free(&g);
    runs_ref_free(&ref);
    return rc;
}

/* The rows of one group's figures (st[id] for id < nst; the session's own without st). */
static struct row *make_rows(struct ptc_session *s, const struct ptc_func_stats *st, uint32_t nst,
                             enum sort_key sort, size_t *n)
{
    uint32_t nf = ptc_session_num_funcs(s);
    struct row *rows = malloc((nf ? nf : 1) * sizeof(*rows));
    if (!rows)
        return NULL;
    *n = 0;
    for (uint32_t id = 0; id < nf; id++) {
        struct row *r = &rows[*n];
        r->id = id;
        r->fi = ptc_session_func(s, id);
        r->state = ptc_session_func_state(s, id);
        r->blocking = ptc_session_func_blocking(s, id);
        r->demoted = ptc_session_func_demoted(s, id);
        if (!st)
            ptc_session_func_stats(s, id, &r->st);
        else if (id < nst)
            r->st = st[id];
        else
            memset(&r->st, 0, sizeof(r->st));
        if (r->st.calls || r->st.total)
            (*n)++;
    }
    qsort_r(rows, *n, sizeof(*rows), cmp_row, &sort);
    return rows;
}

static int cmp_group(const void *a, const void *b)
{
    const struct ptc_agg_group *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* --paths: the hot-paths view over the (filtered) calls. */
static int report_paths(const struct report_opts *o, struct cli_args *a)
{
    struct ptc_wbuf w;
    if (ptc_wbuf_init(&w, 1, 1 << 16))
        return cli_fail("report", "out of memory", cli_advice(PTC_E_NOMEM));
    struct ptc_paths_opts po = o->po;
    po.top = o->have_top ? o->top : o->fmt == FMT_TABLE ? 20 : 0;
    po.format = o->fmt == FMT_TABLE ? PTC_PATHS_TABLE : o->fmt == FMT_CSV ? PTC_PATHS_CSV
                                                                         : PTC_PATHS_JSON;
    struct cli_view_run vr = {.a = a, .cf = o->cf, .make = ptc_view_paths};
    vr.opts.out = &w;
    vr.opts.paths = &po;
    int rc = cli_view_run(&vr);
    if (ptc_wbuf_flush(&w) && !rc) {
        fprintf(stderr, "ptcall report: cannot write the report: %s: check the output device\n",
                strerror(w.err));
        rc = 1;
    }
    if (!rc) {
        struct ptc_totals t;
        ptc_session_totals(vr.s, &t);
        if ((rc = cli_filter_check(o->cf, "report", vr.s, t.timed)) == 0) {
            if (o->fmt == FMT_TABLE) {
                cli_print_quality(stdout, vr.s, &t);
                cli_print_selection(stdout, "note: ", vr.s);
                cli_print_budget(stdout, "note: ", vr.s);
            } else if (t.lost_events || t.gaps || t.lost_other)
                cli_print_quality(stderr, vr.s, &t);
            if (vr.info.filtered && !vr.info.shown_calls)
                cli_filter_explain_empty(o->cf, "report", vr.s, vr.info.last_time,
                                         t.has_timebase);
            if (a->damage)
                cli_warn_salvaged("report", "the figures cover", a->damage_msg);
            rc = cli_flush_output("report", "the report");
        }
    }
    ptc_wbuf_free(&w);
    cli_view_free(&vr);
    return rc;
}

static int report_one(const struct report_opts *o, struct cli_args *a)
{
    if (o->paths)
        return report_paths(o, a);
    const char *path = a->path;
    const struct ptc_out_filter *f = &o->cf->f;
    int filtered = f->have_pid || f->have_tid || f->nfuncs || f->nexcludes || f->max_depth ||
                   f->have_window || f->min_dur;
    struct cli_view_run vr = {.a = a, .cf = o->cf, .make = ptc_view_aggregate};
    vr.opts.by = o->by;
    struct ptc_session *s;
    const struct ptc_agg *agg = NULL;
    if (filtered || o->by) {
        /* the figures from the call stream: per group, or only what the filters keep */
        a->threads = 1;
        if (cli_view_run(&vr)) {
            cli_view_free(&vr);
            return 1;
        }
        s = vr.s;
        agg = ptc_view_aggregate_result(vr.view);
    } else if (!(s = cli_decode(a, NULL, NULL, NULL, NULL))) {
        return 1;
    }
    int rc = 0;
    struct row *rows = NULL;
    struct ptc_totals t;
    ptc_session_totals(s, &t);
    enum sort_key sort = o->sort;
    if (sort == SORT_DEFAULT)
        sort = t.timed ? SORT_TOTAL : SORT_CALLS;
    if ((sort == SORT_SELF || sort == SORT_TOTAL) && !t.timed) {
        rc = cli_fail("report", "--sort self/total needs times and this trace is untimed",
                      "use --sort calls, or record with per-event timestamps");
        goto out;
    }
    if ((rc = cli_filter_check(o->cf, "report", s, t.timed)))
        goto out;
    uint64_t top = o->have_top ? o->top : o->fmt == FMT_TABLE ? 20 : 0;
    if (o->meta) {
        struct single_meta m = {path, s, &t, a->damage, a->damage_msg};
        if (write_meta(o->meta, single_meta, &m)) {
            rc = 1;
            goto out;
        }
    }
    static char outbuf[1 << 16];
    setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
    if (a->damage)
        cli_warn_salvaged("report", "the figures cover", a->damage_msg);
    /* nor which functions were traced: say it where a person sees it */
    if (o->fmt == FMT_CSV) {
        cli_print_selection(stderr, "ptcall report: note: ", s);
        cli_print_budget(stderr, "ptcall report: note: ", s);
    }
    /* the csv carries no totals: a lossy trace must still not pass silently */
    if (o->fmt == FMT_CSV && (t.lost_events || t.gaps || t.lost_other || t.lossy_threads))
        fprintf(stderr, "ptcall report: warning: %s has gaps or lost events: the figures "
                        "of %llu thread%s are lower bounds (--meta FILE gives the totals)\n",
                path, (unsigned long long)t.lossy_threads, t.lossy_threads == 1 ? "" : "s");
    if (o->by) {
        static const char *const byname[] = {"", "thread", "process"};
        struct ptc_agg_group *groups = agg->ngroups ? malloc(agg->ngroups * sizeof(*groups)) : NULL;
        if (agg->ngroups && !groups) {
            rc = cli_fail("report", "out of memory", cli_advice(PTC_E_NOMEM));
            goto out;
        }
        if (agg->ngroups)
            memcpy(groups, agg->groups, agg->ngroups * sizeof(*groups));
        qsort(groups, agg->ngroups, sizeof(*groups), cmp_group);
        if (o->fmt == FMT_TABLE) {
            print_head(path, s, &t);
            if (filtered)
                printf("# filtered: the figures count only the calls the filters keep\n");
        } else if (o->fmt == FMT_JSON) {
            json_head(stdout, path, s, &t, a->damage, a->damage_msg);
            printf(",\n  \"filtered\": %s,\n  \"by\": \"%s\",\n  \"groups\": [",
                   filtered ? "true" : "false", byname[o->by]);
        }
        for (size_t gi = 0; gi < agg->ngroups; gi++) {
            const struct ptc_agg_group *g = &groups[gi];
            size_t n;
            free(rows);
            if (!(rows = make_rows(s, g->st, g->nfuncs, sort, &n))) {
                free(groups);
                rc = cli_fail("report", "out of memory", cli_advice(PTC_E_NOMEM));
                goto out;
            }
            size_t shown = top && top < n ? (size_t)top : n;
            if (o->fmt == FMT_TABLE) {
                if (o->by == PTC_BY_THREAD)
                    printf("\n## thread %u/%u (pid/tid)", g->pid, g->tid);
                else
                    printf("\n## process %u", g->pid);
                const char *name = o->by == PTC_BY_THREAD ? ptc_session_thread_name(s, g->pid, g->tid)
                                                          : ptc_session_process_name(s, g->pid);
                if (name && *name) {
                    printf(" \"");
                    cli_text_str(stdout, o->by == PTC_BY_PROCESS ? ptc_out_base(name) : name);
                    printf("\"");
                }
                /* shares of the group's own time: a thread's outermost function at 100 % */
                struct ptc_totals gt = t;
                gt.total_time = 0;
                for (uint32_t fi = 0; fi < g->nfuncs; fi++)
                    gt.total_time += g->st[fi].self;
                if (o->by == PTC_BY_THREAD)
                    table_renamed(s, g->pid, g->tid);
                printf(": %llu calls", (unsigned long long)g->calls);
                if (t.timed) {
                    char gb[32];
                    cli_fmt_time(gb, sizeof(gb), gt.total_time, t.has_timebase);
                    printf(", %s in traced functions (the shares below are of it)", gb);
                }
                printf("\n");
                print_rows(&gt, rows, n, shown, cli_budget_mixed(s));
            } else if (o->fmt == FMT_CSV) {
                print_csv(&t, rows, shown, g, gi == 0, cli_budget_mixed(s));
            } else {
                printf("%s\n    {\"pid\": %u, \"tid\": %u, ", gi ? "," : "", g->pid,
                       o->by == PTC_BY_THREAD ? g->tid : 0);
                if (o->by == PTC_BY_THREAD)
                    json_thread_names(s, g->pid, g->tid);
                printf("\"calls\": %llu, \"functions\": [", (unsigned long long)g->calls);
                json_functions(&t, rows, shown, "      ");
                printf("\n    ]}");
            }
        }
        free(groups);
        if (o->fmt == FMT_TABLE) {
            if ((rc = table_marks(s, top, &t)))
                goto out;
            printf("\n");
            print_footer(s, &t);
        } else if (o->fmt == FMT_JSON) {
            json_uncalled(s); /* closes "groups" as it closes "functions" */
        }
    } else {
        size_t n;
        const struct ptc_agg_group *g = agg ? &agg->groups[0] : NULL;
        if (!(rows = make_rows(s, g ? g->st : NULL, g ? g->nfuncs : 0, sort, &n))) {
            rc = cli_fail("report", "out of memory", cli_advice(PTC_E_NOMEM));
            goto out;
        }
        size_t shown = top && top < n ? (size_t)top : n;
        switch (o->fmt) {
        case FMT_TABLE:
            print_head(path, s, &t);
            if (filtered)
                printf("# filtered: the figures count only the calls the filters keep\n");
            print_rows(&t, rows, n, shown, cli_budget_mixed(s));
            if ((rc = table_marks(s, top, &t)))
                goto out;
            print_footer(s, &t);
            if (a->damage)
                printf("warning: salvaged from a damaged trace: %s\n", a->damage_msg);
            break;
        case FMT_CSV:
            print_csv(&t, rows, shown, NULL, 1, cli_budget_mixed(s));
            break;
        case FMT_JSON:
            print_json(path, s, &t, rows, shown, a->damage, a->damage_msg, filtered);
            break;
        }
    }
    if (filtered && !vr.info.shown_calls)
        cli_filter_explain_empty(o->cf, "report", s, vr.info.last_time, t.has_timebase);
    rc = cli_flush_output("report", "the report");
out:
    free(rows);
    if (agg)
        cli_view_free(&vr);
    else
        ptc_session_free(s);
    return rc;
}

static int run_report(struct cli_values *v)
{
    struct cli_args a = {.cmd = "report", .salvage = v->salvage, .threads = v->threads};
    struct report_opts o = {.top = v->top,
                            .have_top = cli_given(v, "--top") != 0,
                            .fmt = (enum fmt)(FMT_TABLE + v->format),
                            .meta = v->report.meta,
                            .allow_different = v->allow_different,
                            .stats = v->report.stats.v,
                            .nstats = v->report.stats.n,
                            .by = v->report.by < 0 ? PTC_BY_NONE
                                  : v->report.by == 0 ? PTC_BY_THREAD : PTC_BY_PROCESS,
                            .paths = v->report.paths,
                            .cf = &v->filter};
    o.po.min_share = v->min_share;
    o.po.min_calls = v->min_calls;
    /* --sort calls|self|total; not given: total for timed traces, calls for untimed */
    o.sort = v->sort < 0 ? SORT_DEFAULT : (enum sort_key)(SORT_CALLS + v->sort);
    /* the last option given that reads one run only (or goes with --paths) names the
     * conflict, as the user sees it */
    const char *single_only = NULL, *paths_only = NULL;
    int at = 0, k;
    if ((k = cli_given_filter(v)) > at)
        at = k, single_only = "filters";
    if ((k = cli_given(v, "--by")) > at)
        at = k, single_only = "--by";
    if ((k = cli_given(v, "--paths")) > at)
        at = k, single_only = "--paths";
    at = 0;
    if ((k = cli_given(v, "--min-calls")) > at)
        at = k, paths_only = "--min-calls";
    if ((k = cli_given(v, "--min-share")) > at)
        at = k, paths_only = "--min-share";
    if (!v->npos)
        return cli_usage_error(CMD_REPORT, "no trace file given");
    a.path = v->pos[0];
    struct runs_paths paths = {0};
    int rc = 0;
    for (int i = 0; i < v->npos; i++)
        if ((rc = runs_paths_add(&paths, "report", v->pos[i])))
            goto out;
    /* one trace file keeps the format_version 1 output; several runs (or asking for
     * per-run statistics) take the multi-run one */
    if (paths_only && !o.paths) {
        rc = cli_usage_error(CMD_REPORT, "%s goes with --paths", paths_only);
        goto out;
    }
    if (o.paths && o.by) {
        rc = cli_usage_error(CMD_REPORT, "--paths and --by do not combine");
        goto out;
    }
    if ((paths.n > 1 || paths.dirs || o.nstats) && single_only) {
        rc = cli_usage_error(CMD_REPORT, "%s reads one run: give one trace file", single_only);
        goto out;
    }
    if (paths.n > 1 || paths.dirs || o.nstats)
        rc = report_runs(&o, &a, &paths);
    else
        rc = report_one(&o, &a);
out:
    runs_paths_free(&paths);
    return rc;
}

int cmd_report(int argc, char **argv)
{
    struct cli_values v;
    int r = cli_parse(CMD_REPORT, argc, argv, &v, 0);
    if (r != CLI_GO)
        return r;
    r = run_report(&v);
    cli_values_free(&v);
    return r;
}
