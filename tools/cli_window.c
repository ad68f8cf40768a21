/* What every command that shows decoded calls says about traces that do not hold a thread's
 * whole life (docs/usage.md, "Windows: attach and snapshots"): where each thread's window
 * begins and ends, the calls entered before it and still open at its end, and the snapshot
 * that made the trace. Text notes for report, calls and export; JSON for report. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <string.h>

#include "cli_common.h"

#define WINDOWS_SHOWN 16

struct win_text {
    FILE *f;
    int ns, has_origin;
    uint64_t origin;
    size_t n;
};

/* A time on the recording's scale, relative to its start, into b. */
static const char *rel(char *b, size_t n, int ns, int has_origin, uint64_t origin, uint64_t t)
{
    uint64_t r = has_origin && t >= origin ? t - origin : t;
    if (ns)
        snprintf(b, n, "%.3f ms", (double)r / 1e6);
    else
        snprintf(b, n, "tick %" PRIu64, r);
    return b;
}

static void window_line(void *ctx, const struct ptc_thread_window *w)
{
    struct win_text *c = ctx;
    if (!w->windowed && !w->entered_before)
        return; /* a whole life: its frames still open are in the totals' note */
    if (c->n++ >= WINDOWS_SHOWN)
        return;
    fprintf(c->f, "note:   %u/%u: ", w->pid, w->tid);
    if (w->has_time) {
        char a[48], b[48];
        fprintf(c->f, "window %s to %s", rel(a, sizeof(a), c->ns, c->has_origin, c->origin, w->from),
                rel(b, sizeof(b), c->ns, c->has_origin, c->origin, w->to));
    } else {
        fprintf(c->f, "window (untimed)");
    }
    if (w->flags & PTC_WINDOW_F_WRAPPED)
        fprintf(c->f, ", its ring wrapped: %" PRIu64 " events lost before it", w->lost_before);
    fprintf(c->f, "; %" PRIu64 " call%s entered before it, %" PRIu64 " still open at its end\n",
            w->entered_before, w->entered_before == 1 ? "" : "s", w->still_open);
}

void cli_print_windows(FILE *f, const struct ptc_session *s, const struct ptc_totals *t)
{
    for (uint32_t i = 0; i < ptc_session_num_snapshots(s); i++) {
        struct ptc_snapshot_info si;
        if (ptc_session_snapshot(s, i, &si))
            continue;
        fprintf(f, "note: snapshot of process %u (%s)", si.pid, ptc_snapshot_kind_name(si.kind));
        if (si.kind == PTC_SNAP_CRASH && si.signo > 0) {
            const char *ab = sigabbrev_np(si.signo);
            if (ab)
                fprintf(f, " taken on SIG%s", ab);
            else
                fprintf(f, " taken on signal %d", si.signo);
            fprintf(f, " at 0x%" PRIx64, si.addr);
        }
        if (si.tid)
            fprintf(f, " in thread %u", si.tid);
        if (si.why && *si.why) {
            fprintf(f, ": ");
            cli_text_str(f, si.why);
        }
        fprintf(f, "\n");
    }
    if (!t->window_threads && t->entered_before) {
        /* no attach, no snapshot: a budget's pilot (BUDGET chunk) ended before the events
         * began, the calls it counted still open */
        fprintf(f, "note: %" PRIu64 " call%s entered during a budget's pilot (counted there) "
                   "returned in the trace: timed from the pilot's end (their times, and their "
                   "callers', are lower bounds)\n",
                t->entered_before, t->entered_before == 1 ? "" : "s");
    } else if (t->window_threads || t->entered_before) {
        fprintf(f, "note: %" PRIu64 " thread%s traced in a window of %s life (an attach or a "
                   "snapshot): %" PRIu64 " call%s entered before the trace began, timed from "
                   "their thread's window start (their times, and their callers', are lower "
                   "bounds)\n",
                t->window_threads, t->window_threads == 1 ? "" : "s",
                t->window_threads == 1 ? "its" : "their", t->entered_before,
                t->entered_before == 1 ? " was" : "s were");
        struct win_text c = {f, t->has_timebase, 0, 0, 0};
        c.has_origin = ptc_session_origin(s, &c.origin) == 0;
        ptc_session_windows(s, window_line, &c);
        if (c.n > WINDOWS_SHOWN)
            fprintf(f, "note:   ... and %zu more threads (report --format json lists every one)\n",
                    c.n - WINDOWS_SHOWN);
    }
}

struct win_json {
    FILE *f;
    size_t n;
    int has_origin;
    uint64_t origin;
};

static uint64_t rel_u(const struct win_json *c, uint64_t t)
{
    return c->has_origin && t >= c->origin ? t - c->origin : t;
}

static void window_json(void *ctx, const struct ptc_thread_window *w)
{
    struct win_json *c = ctx;
    fprintf(c->f, "%s\n    {\"pid\": %u, \"tid\": %u, \"windowed\": %s, \"from\": ",
            c->n++ ? "," : "", w->pid, w->tid, w->windowed ? "true" : "false");
    if (w->has_time) /* relative to the recording's start, as the other times */
        fprintf(c->f, "%" PRIu64 ", \"to\": %" PRIu64, rel_u(c, w->from), rel_u(c, w->to));
    else
        fprintf(c->f, "null, \"to\": null");
    fprintf(c->f, ", \"window_chunk\": %s, \"wrapped\": %s, \"lost_before\": %" PRIu64
                  ", \"open_end\": %s, \"entered_before\": %" PRIu64 ", \"still_open\": %" PRIu64
                  "}",
            w->has_chunk ? "true" : "false", (w->flags & PTC_WINDOW_F_WRAPPED) ? "true" : "false",
            w->lost_before, (w->flags & PTC_WINDOW_F_OPEN_END) ? "true" : "false",
            w->entered_before, w->still_open);
}

void cli_json_windows(FILE *f, const struct ptc_session *s)
{
    struct win_json c = {f, 0, 0, 0};
    c.has_origin = ptc_session_origin(s, &c.origin) == 0;
    fprintf(f, ",\n  \"windows\": [");
    ptc_session_windows(s, window_json, &c);
    fprintf(f, "%s],\n  \"snapshots\": [", c.n ? "\n  " : "");
    uint32_t n = ptc_session_num_snapshots(s);
    for (uint32_t i = 0; i < n; i++) {
        struct ptc_snapshot_info si;
        if (ptc_session_snapshot(s, i, &si))
            continue;
        fprintf(f, "%s\n    {\"pid\": %u, \"kind\": \"%s\", \"tid\": %u, \"signal\": %d, "
                   "\"address\": %" PRIu64 ", \"time\": ",
                i ? "," : "", si.pid, ptc_snapshot_kind_name(si.kind), si.tid, si.signo, si.addr);
        if (si.has_time)
            fprintf(f, "%" PRIu64, rel_u(&c, si.time));
        else
            fprintf(f, "null");
        fprintf(f, ", \"why\": ");
        cli_json_str(f, si.why ? si.why : "");
        fprintf(f, "}");
    }
    fprintf(f, "%s]", n ? "\n  " : "");
}
