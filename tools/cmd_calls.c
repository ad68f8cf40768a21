/* ptcall calls: the indented call sequence of each thread, streaming (uftrace-replay-like). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "commands.h"

static const char USAGE[] =
    "usage: ptcall calls FILE [--tid T] [--pid P] [--max-depth D] [--salvage]\n"
    "  --tid T        only thread T\n"
    "  --pid P        only process P\n"
    "  --max-depth D  only calls less than D levels deep (1 = outermost only)\n"
    "  --salvage      show what precedes damage in a truncated or corrupt trace\n"
    "Columns: time since the traced program started, duration (at a function's end),\n"
    "pid/tid, and the call tree. A leaf call is one line 'f();'. See docs/usage.md.\n";

struct pending {
    uint32_t func, depth;
    uint64_t time;
    int valid;
};

struct calls_ctx {
    struct ptc_session *s;
    uint64_t tid, pid, max_depth;
    int have_tid, have_pid;
    int timed, ns;     /* decided at the first event */
    int init, started;
    uint64_t base;     /* time zero: the first process's start, else the first event shown */
    uint64_t lines;
    uint32_t last_pid, last_tid;
};

/* Function names as uftrace shows them: C++ parameter lists dropped ("f() {", not
 * "f(int)() {"). */
static const char *fname(struct calls_ctx *c, uint32_t id)
{
    static char buf[4096];
    const struct ptc_func_info *f = ptc_session_func(c->s, id);
    return f ? cli_short_name(f->name, buf, sizeof(buf)) : "?";
}

static void prefix(struct calls_ctx *c, const struct ptc_call_event *e, uint64_t time,
                   const char *dur)
{
    if (!c->started) {
        c->started = 1;
        /* time zero is the program's start, so that threads whose chunks come later in
         * the file do not show negative times */
        uint64_t origin;
        c->base = ptc_session_origin(c->s, &origin) == 0 && origin <= time ? origin : time;
        if (c->timed)
            printf("#%15s %12s %14s  %s\n", c->ns ? "TIME(s)" : "TIME(ticks)", "DURATION",
                   "PID/TID", "FUNCTION");
        else
            printf("#%14s  %s\n", "PID/TID", "FUNCTION (untimed trace: no times)");
    }
    char pt[32];
    snprintf(pt, sizeof(pt), "%u/%u", e->pid, e->tid);
    if (c->timed) {
        int64_t rel = (int64_t)(time - c->base);
        if (c->ns)
            printf("%16.9f %12s %14s |", (double)rel / 1e9, dur, pt);
        else
            printf("%16lld %12s %14s |", (long long)rel, dur, pt);
    } else {
        printf("%15s |", pt);
    }
    c->lines++;
}

static void indent(uint32_t depth)
{
    for (uint32_t i = 0; i < depth; i++)
        fputs("  ", stdout);
    putchar(' ');
}

static void flush_pending(struct calls_ctx *c, const struct ptc_call_event *e, struct pending *p)
{
    if (!p || !p->valid)
        return;
    prefix(c, e, p->time, "");
    indent(p->depth);
    printf("%s() {\n", fname(c, p->func));
    p->valid = 0;
}

/* Starts the line of an event other than a call: the call pending in the thread (a
 * function entered, not yet known to be a leaf) is shown first. */
static void event_line(struct calls_ctx *c, const struct ptc_call_event *e, struct pending *p)
{
    flush_pending(c, e, p);
    prefix(c, e, e->time, "");
}

static void hook(void *ctx, const struct ptc_call_event *e)
{
    struct calls_ctx *c = ctx;
    if ((c->have_tid && e->tid != c->tid) || (c->have_pid && e->pid != c->pid))
        return;
    if (!c->init) {
        struct ptc_totals t;
        ptc_session_totals(c->s, &t);
        c->init = 1;
        c->ns = t.has_timebase;
        c->timed = e->has_time;
    }
    struct pending *p = (struct pending *)*e->thread_user;
    if (!p) {
        p = calloc(1, sizeof(*p));
        if (!p)
            return;
        *e->thread_user = (uintptr_t)p;
    }
    int shown = !c->max_depth || e->depth < c->max_depth;
    char dur[40] = "";
    switch (e->kind) {
    case PTC_CALL_ENTER:
        if (!shown)
            return;
        flush_pending(c, e, p);
        p->valid = 1;
        p->func = e->func;
        p->depth = e->depth;
        p->time = e->time;
        return;
    case PTC_CALL_RETURN: {
        if (!shown)
            return;
        if (c->timed)
            cli_fmt_time(dur, sizeof(dur), e->dur, c->ns);
        static const char *const why[] = {"", "unwound by an exception",
                                          "exit skipped: longjmp or exception",
                                          "popped by a landing pad",
                                          "events lost: ends at the last event before the gap",
                                          "still open at the end"};
        const char *w = e->how < 6 ? why[e->how] : "";
        const char *inh = !e->inherited ? ""
                          : c->timed    ? "inherited across fork: time since the fork"
                                        : "inherited across fork";
        if (p->valid && p->func == e->func && p->depth == e->depth) {
            p->valid = 0;
            prefix(c, e, p->time, dur);
            indent(e->depth);
            printf("%s();%s%s%s\n", fname(c, e->func), *w ? " /* " : "", w, *w ? " */" : "");
            return;
        }
        flush_pending(c, e, p);
        prefix(c, e, e->time, dur);
        indent(e->depth);
        printf("} /* %s%s%s%s%s */\n", fname(c, e->func), *w ? ": " : "", w,
               *inh ? (*w ? ", " : ": ") : "", inh);
        return;
    }
    case PTC_CALL_GAP:
        event_line(c, e, p);
        if (e->count)
            printf(" --- %llu events lost here: the stack restarts empty ---\n",
                   (unsigned long long)e->count);
        else
            printf(" --- events missing here: the stack restarts empty ---\n");
        return;
    case PTC_CALL_UNMATCHED:
        if (!shown)
            return;
        event_line(c, e, p);
        indent(e->depth);
        printf("(exit of %s, which is not on the stack: ignored)\n", fname(c, e->func));
        return;
    case PTC_CALL_FORK:
        event_line(c, e, p);
        printf(" --- fork: child process %llu ---\n", (unsigned long long)e->count);
        return;
    case PTC_CALL_FORKED:
        event_line(c, e, p);
        printf(" --- fork child: continues with %u frame%s of its parent's stack ---\n",
               e->depth, e->depth == 1 ? "" : "s");
        return;
    case PTC_CALL_LANDING:
        if (!shown)
            return;
        event_line(c, e, p);
        indent(e->depth);
        printf("(%s resumes at a landing pad)\n", fname(c, e->func));
        return;
    }
}

static void thread_end(void *ctx, uint32_t pid, uint32_t tid, uintptr_t *user)
{
    (void)ctx;
    (void)pid;
    (void)tid;
    free((void *)*user);
    *user = 0;
}

int cmd_calls(int argc, char **argv)
{
    struct cli_args a = {.cmd = "calls", .usage = USAGE, .threads = 1};
    const char *v;
    struct calls_ctx c;
    memset(&c, 0, sizeof(c));
    for (int i = 1; i < argc; i++) {
        int r;
        if ((r = cli_flag_value(argc, argv, &i, "--tid", &v))) {
            if (r < 0 || cli_parse_u64(v, &c.tid))
                return cli_usage_error("calls", USAGE, "--tid needs a thread id");
            c.have_tid = 1;
        } else if ((r = cli_flag_value(argc, argv, &i, "--pid", &v))) {
            if (r < 0 || cli_parse_u64(v, &c.pid))
                return cli_usage_error("calls", USAGE, "--pid needs a process id");
            c.have_pid = 1;
        } else if ((r = cli_flag_value(argc, argv, &i, "--max-depth", &v))) {
            if (r < 0 || cli_parse_u64(v, &c.max_depth) || !c.max_depth)
                return cli_usage_error("calls", USAGE, "--max-depth needs a number >= 1");
        } else if ((r = cli_take_arg(&a, argv[i])) != CLI_ARG_TAKEN) {
            return r;
        }
    }
    int r = cli_args_done(&a);
    if (r)
        return r;
    static char outbuf[1 << 16];
    setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
    struct ptc_session *s = cli_decode(&a, hook, &c, thread_end, &c.s);
    if (!s) {
        if (c.lines) {
            printf("# INCOMPLETE: decoding stopped at damage in the trace (see the error on "
                   "stderr)\n");
            fflush(stdout);
        }
        return 1;
    }
    if (!c.lines)
        printf("# no calls%s\n", c.have_tid || c.have_pid ? " for the selected threads" : "");
    struct ptc_totals t;
    ptc_session_totals(s, &t);
    cli_print_quality(stdout, s, &t);
    if (a.damage) {
        printf("warning: salvaged from a damaged trace: %s\n", a.damage_msg);
        cli_warn_salvaged("calls", "the output covers", a.damage_msg);
    }
    ptc_session_free(s);
    return cli_flush_output("calls", "the output");
}
