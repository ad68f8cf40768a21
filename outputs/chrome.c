/* The Chrome Trace Event Format (JSON object form): each call as a begin and an end event
 * ("ph": "B" at its entry, "E" at its return), instant events for gaps and forks, and
 * process and thread names as metadata; each ptcall_mark an instant event named
 * "mark: LABEL" on its thread. Perfetto UI and speedscope open it; at about 92 bytes per
 * event, big traces go better as --format perfetto or speedscope. Times are microseconds
 * with ns decimals.
 *
 * Why B/E and not one complete event ("X", ts + dur) per call: viewers add ts and dur in
 * floating point, so a call that ends exactly where the next begins (0.1 + 0.2 > 0.3) or
 * where its caller ends is nested wrongly; begin and end events carry the exact times. The
 * frames a fork child starts inside get a begin at the fork, outermost first. No "args" on
 * begin events: speedscope makes them part of the frame's name. */
#include <stdlib.h>
#include <string.h>

#include "strcache.h"
#include "views.h"

struct chrome_view {
    struct ptc_wbuf *w;
    const struct ptc_session *s;
    int ns;
    int first;
    /* per function: `, "name": ..., "cat": ...}`; per thread (in thread_user): `, "pid":
     * P, "tid": T` */
    struct ptc_strcache funcs;
    struct pidtid {
        uint32_t pid, tid;
    } *seen;
    size_t nseen, capseen;
};

/* A time on the trace's scale as Trace Event microseconds. */
static void put_us(struct chrome_view *c, uint64_t t)
{
    if (c->ns)
        ptc_wb_fixed(c->w, t, 3, 0);
    else
        ptc_wb_u64(c->w, t); /* ticks: shown as if they were microseconds */
}

static void sep(struct chrome_view *c)
{
    if (c->first)
        c->first = 0;
    else
        ptc_wb_str(c->w, ",\n");
}

static int chrome_begin(void *view, const struct ptc_out_info *info)
{
    struct chrome_view *c = view;
    if (!info->timed) /* a timeline needs times: refuse before writing anything */
        return PTC_VIEW_E_UNTIMED;
    c->ns = info->ns;
    ptc_wb_str(c->w, "{\"traceEvents\": [\n");
    return 0;
}

static int chrome_thread_start(void *view, const struct ptc_out_event *e)
{
    struct chrome_view *c = view;
    if (c->nseen == c->capseen) {
        size_t nc = c->capseen ? c->capseen * 2 : 64;
        struct pidtid *n = realloc(c->seen, nc * sizeof(*n));
        if (!n)
            return 1;
        c->seen = n;
        c->capseen = nc;
    }
    c->seen[c->nseen].pid = e->pid;
    c->seen[c->nseen].tid = e->tid;
    c->nseen++;
    return 0;
}

/* `, "pid": P, "tid": T`, made once per thread. */
static const char *thread_frag(const struct ptc_out_event *e, size_t *len)
{
    char *f = (char *)*e->thread_user;
    if (!f) {
        char tmp[64];
        int n = snprintf(tmp, sizeof(tmp), ", \"pid\": %u, \"tid\": %u", e->pid, e->tid);
        if (!(f = malloc((size_t)n + 2)))
            return NULL;
        f[0] = (char)n; /* its length first: under 64 */
        memcpy(f + 1, tmp, (size_t)n + 1);
        *e->thread_user = (uintptr_t)f;
    }
    *len = (size_t)(unsigned char)f[0];
    return f + 1;
}

static int head(struct chrome_view *c, const struct ptc_out_event *e, const char *ph)
{
    struct ptc_wbuf *w = c->w;
    size_t tl;
    const char *tf = thread_frag(e, &tl);
    if (!tf)
        return 1;
    if (c->first)
        c->first = 0;
    else
        ptc_wb_put(w, ",\n", 2);
    ptc_wb_str(w, ph);
    put_us(c, e->time);
    ptc_wb_put(w, tf, tl);
    return 0;
}

/* `, "name": ..., "cat": ...` and what follows, made once per function. */
static int put_func(struct chrome_view *c, uint32_t func, const char *tail)
{
    struct ptc_wbuf *w = c->w;
    size_t len;
    const char *frag = ptc_strcache_get(&c->funcs, func, &len);
    if (!frag) {
        const struct ptc_func_info *fi = ptc_session_func(c->s, func);
        struct ptc_wbuf tmp;
        if (ptc_wbuf_init(&tmp, -1, 8192))
            return 1;
        ptc_wb_str(&tmp, ", \"name\": ");
        ptc_wb_json_str(&tmp, fi ? fi->name : "?");
        ptc_wb_str(&tmp, ", \"cat\": ");
        /* a blocking call (trace format 2.6): the category viewers colour and filter by */
        ptc_wb_json_str(&tmp, ptc_session_func_blocking(c->s, func) ? "blocked"
                              : fi                                  ? ptc_out_base(fi->module)
                                                                    : "?");
        len = tmp.len;
        frag = ptc_strcache_set(&c->funcs, func, tmp.buf, tmp.len);
        if (!frag) { /* no memory for the cache: write it as it is */
            ptc_wb_put(w, tmp.buf, tmp.len);
            ptc_wbuf_free(&tmp);
            ptc_wb_str(w, tail);
            return w->over_limit || w->err ? 1 : 0;
        }
        ptc_wbuf_free(&tmp);
    }
    ptc_wb_put_padded(w, frag, len);
    ptc_wb_str(w, tail);
    return w->over_limit || w->err ? 1 : 0;
}

static int chrome_enter(void *view, const struct ptc_out_event *e)
{
    struct chrome_view *c = view;
    if (head(c, e, "{\"ph\": \"B\", \"ts\": "))
        return 1;
    return put_func(c, e->func, "}");
}

/* A call entered before its thread's window began: one complete event from the window's
 * start (its begin would come after events it encloses, and a viewer that orders begins of
 * one time by their place in the file would nest it inside them). */
static int chrome_before(struct chrome_view *c, const struct ptc_out_event *e)
{
    struct ptc_wbuf *w = c->w;
    struct ptc_out_event x = *e;
    x.time = e->start;
    if (head(c, &x, "{\"ph\": \"X\", \"ts\": "))
        return 1;
    ptc_wb_str(w, ", \"dur\": ");
    put_us(c, e->dur);
    if (put_func(c, e->func, ", \"args\": {\"entered_before_trace\": true, \"level\": "))
        return 1;
    ptc_wb_u64(w, e->count);
    ptc_wb_str(w, ", \"ended\": \"");
    ptc_wb_str(w, ptc_out_how_name(e->how));
    ptc_wb_str(w, "\"}}");
    return w->over_limit || w->err ? 1 : 0;
}

static int chrome_ret(void *view, const struct ptc_out_event *e)
{
    struct chrome_view *c = view;
    struct ptc_wbuf *w = c->w;
    if (e->before)
        return chrome_before(c, e);
    if (head(c, e, "{\"ph\": \"E\", \"ts\": "))
        return 1;
    /* the name too: speedscope closes a frame only on an end event of the same name */
    if (!e->how)
        return put_func(c, e->func, "}");
    if (put_func(c, e->func, ", \"args\": {\"ended\": \""))
        return 1;
    ptc_wb_str(w, ptc_out_how_name(e->how));
    /* a call its thread's trace ended inside: it had not returned then */
    ptc_wb_str(w, e->how == PTC_RET_END ? "\", \"still_open\": true}}" : "\"}}");
    return w->over_limit || w->err ? 1 : 0;
}

static int chrome_thread_end(void *view, uint32_t pid, uint32_t tid, uintptr_t *user)
{
    (void)view;
    (void)pid;
    (void)tid;
    free((void *)*user);
    *user = 0;
    return 0;
}

/* The middle of an instant event on e's thread, from the end of its name to the start of its
 * args: the caller writes the name before and the args after. */
static void instant_body(struct chrome_view *c, const struct ptc_out_event *e)
{
    struct ptc_wbuf *w = c->w;
    ptc_wb_str(w, "\", \"ph\": \"i\", \"s\": \"t\", \"ts\": ");
    put_us(c, e->time);
    ptc_wb_str(w, ", \"pid\": ");
    ptc_wb_u64(w, e->pid);
    ptc_wb_str(w, ", \"tid\": ");
    ptc_wb_u64(w, e->tid);
    ptc_wb_str(w, ", \"args\": {");
}

static void instant(struct chrome_view *c, const struct ptc_out_event *e, const char *name,
                    uint64_t n, const char *what)
{
    struct ptc_wbuf *w = c->w;
    sep(c);
    ptc_wb_str(w, "{\"name\": \"");
    ptc_wb_str(w, name);
    instant_body(c, e);
    ptc_wb_str(w, "\"");
    ptc_wb_str(w, what);
    ptc_wb_str(w, "\": ");
    ptc_wb_u64(w, n);
    ptc_wb_str(w, "}}");
}

static int chrome_gap(void *view, const struct ptc_out_event *e)
{
    instant(view, e, "gap: events lost", e->count, "events_lost");
    return 0;
}

static int chrome_fork(void *view, const struct ptc_out_event *e)
{
    if (e->kind == PTC_CALL_FORK)
        instant(view, e, "fork", e->count, "child_pid");
    else if (e->kind == PTC_CALL_SPAWN)
        instant(view, e, "spawn", e->count, "child_pid");
    return 0;
}

/* A mark (ptcall_mark): an instant on its thread named after its label, which is the
 * program's own string (quotes, backslashes, control characters: escaped), and repeated in
 * args, where a viewer shows it whole beside the stack depth. */
static int chrome_mark(void *view, const struct ptc_out_event *e)
{
    struct chrome_view *c = view;
    struct ptc_wbuf *w = c->w;
    const char *label = ptc_session_mark_label(c->s, e->count);
    sep(c);
    ptc_wb_str(w, "{\"name\": \"mark: ");
    ptc_wb_json_chars(w, label);
    instant_body(c, e);
    ptc_wb_str(w, "\"mark\": ");
    ptc_wb_json_str(w, label);
    ptc_wb_str(w, ", \"depth\": ");
    ptc_wb_u64(w, e->depth);
    ptc_wb_str(w, "}}");
    return w->over_limit || w->err ? 1 : 0;
}

/* Where each thread's window began and ended (an attach, a snapshot; docs/trace-format.md
 * 4.19), as instant events on the thread, and each snapshot on the thread it names. */
struct win_ctx {
    struct chrome_view *c;
    const struct ptc_out_info *info;
};

static void window_instant(struct chrome_view *c, const struct ptc_out_info *info,
                           uint32_t pid, uint32_t tid, uint64_t t, const char *name)
{
    struct ptc_out_event e = {.pid = pid, .tid = tid,
                              .time = t > info->origin ? t - info->origin : 0};
    sep(c);
    ptc_wb_str(c->w, "{\"name\": \"");
    ptc_wb_str(c->w, name);
    instant_body(c, &e);
}

static void chrome_window(void *ctx, const struct ptc_thread_window *wd)
{
    struct win_ctx *x = ctx;
    struct chrome_view *c = x->c;
    struct ptc_wbuf *w = c->w;
    const struct ptc_out_filter *f = x->info->filter;
    if (!wd->windowed || !wd->has_time || (f->have_pid && f->pid != wd->pid) ||
        (f->have_tid && f->tid != wd->tid))
        return;
    window_instant(c, x->info, wd->pid, wd->tid, wd->from, "trace window begins");
    ptc_wb_str(w, "\"entered_before\": ");
    ptc_wb_u64(w, wd->entered_before);
    ptc_wb_str(w, ", \"events_lost_before\": ");
    ptc_wb_u64(w, wd->lost_before);
    ptc_wb_str(w, "}}");
    window_instant(c, x->info, wd->pid, wd->tid, wd->to, "trace window ends");
    ptc_wb_str(w, "\"still_open\": ");
    ptc_wb_u64(w, wd->still_open);
    ptc_wb_str(w, "}}");
}

static void chrome_snapshots(struct chrome_view *c, const struct ptc_out_info *info)
{
    struct ptc_wbuf *w = c->w;
    for (uint32_t i = 0; i < ptc_session_num_snapshots(c->s); i++) {
        struct ptc_snapshot_info si;
        if (ptc_session_snapshot(c->s, i, &si) || !si.has_time)
            continue;
        window_instant(c, info, si.pid, si.tid ? si.tid : si.pid, si.time, "snapshot");
        ptc_wb_str(w, "\"kind\": \"");
        ptc_wb_str(w, ptc_snapshot_kind_name(si.kind));
        ptc_wb_str(w, "\", \"why\": ");
        ptc_wb_json_str(w, si.why);
        ptc_wb_str(w, ", \"signal\": ");
        ptc_wb_u64(w, (uint64_t)(si.signo > 0 ? si.signo : 0));
        ptc_wb_str(w, ", \"address\": ");
        ptc_wb_u64(w, si.addr);
        ptc_wb_str(w, "}}");
    }
}

static int cmp_pidtid(const void *a, const void *b)
{
    const struct pidtid *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int chrome_end(void *view, const struct ptc_out_info *info)
{
    struct chrome_view *c = view;
    struct ptc_wbuf *w = c->w;
    /* by pid: each process named once, without looking back over every thread before it
     * (a program that starts 100,000 threads) */
    if (c->nseen) /* no thread shown: nothing to sort (and qsort wants a non-NULL array) */
        qsort(c->seen, c->nseen, sizeof(*c->seen), cmp_pidtid);
    for (size_t i = 0; i < c->nseen; i++) {
        const struct pidtid *p = &c->seen[i];
        if (!i || p->pid != c->seen[i - 1].pid) {
            const char *exe = ptc_session_process_name(c->s, p->pid);
            sep(c);
            ptc_wb_str(w, "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": ");
            ptc_wb_u64(w, p->pid);
            ptc_wb_str(w, ", \"args\": {\"name\": ");
            ptc_wb_json_str(w, exe && *exe ? ptc_out_base(exe) : "process");
            ptc_wb_str(w, "}}");
        }
        const char *tn = ptc_session_thread_name(c->s, p->pid, p->tid);
        sep(c);
        ptc_wb_str(w, "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": ");
        ptc_wb_u64(w, p->pid);
        ptc_wb_str(w, ", \"tid\": ");
        ptc_wb_u64(w, p->tid);
        ptc_wb_str(w, ", \"args\": {\"name\": ");
        if (tn && *tn) {
            ptc_wb_json_str(w, tn);
        } else {
            char b[32];
            snprintf(b, sizeof(b), "\"thread %u\"", p->tid);
            ptc_wb_str(w, b);
        }
        ptc_wb_str(w, "}}");
    }
    struct win_ctx wx = {c, info};
    ptc_session_windows(c->s, chrome_window, &wx);
    chrome_snapshots(c, info);
    struct ptc_totals t;
    ptc_session_totals(info->s, &t);
    ptc_wb_str(w, "\n], \"displayTimeUnit\": \"ns\", \"otherData\": {\"tool\": \"ptcall export\", "
                  "\"format_version\": \"1\", \"trace\": ");
    ptc_wb_json_str(w, info->trace);
    ptc_wb_str(w, ", \"time_unit\": \"");
    ptc_wb_str(w, info->ns ? "us" : "ticks");
    if (t.resolution_ns) { /* the ticker clock (issue 28): no time is finer than this */
        ptc_wb_str(w, "\", \"time_resolution_ns\": \"");
        ptc_wb_u64(w, t.resolution_ns);
    }
    ptc_wb_str(w, "\", \"calls\": \"");
    ptc_wb_u64(w, info->shown_calls);
    ptc_wb_str(w, "\", \"lost_events\": \"");
    ptc_wb_u64(w, t.lost_events);
    ptc_wb_str(w, "\", \"marks\": \"");
    ptc_wb_u64(w, info->shown_marks);
    ptc_wb_str(w, "\", \"gaps\": \"");
    ptc_wb_u64(w, t.gaps);
    ptc_wb_str(w, "\", \"entered_before\": \"");
    ptc_wb_u64(w, t.entered_before);
    ptc_wb_str(w, "\", \"still_open\": \"");
    ptc_wb_u64(w, t.still_open);
    ptc_wb_str(w, "\", \"complete\": \"");
    /* nothing missing: a complete trace (ptc_totals_complete) without gaps or losses */
    ptc_wb_str(w, ptc_totals_complete(&t) && !t.gaps && !t.lost_events ? "true" : "false");
    ptc_wb_str(w, "\", \"filtered\": \"");
    ptc_wb_str(w, info->filtered ? "true" : "false");
    ptc_wb_str(w, "\"}}\n");
    return 0;
}

static void chrome_free(void *view)
{
    struct chrome_view *c = view;
    ptc_strcache_free(&c->funcs);
    free(c->seen);
    free(c);
}

static const struct ptc_output_ops chrome_ops = {
    .name = "chrome",
    .begin = chrome_begin,
    .thread_start = chrome_thread_start,
    .enter = chrome_enter,
    .ret = chrome_ret,
    .gap = chrome_gap,
    .fork = chrome_fork,
    .mark = chrome_mark,
    .thread_end = chrome_thread_end,
    .end = chrome_end,
    .free = chrome_free,
};

void *ptc_view_chrome(const struct ptc_view_opts *o, const struct ptc_output_ops **ops)
{
    struct chrome_view *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->w = o->out;
    c->s = o->s;
    c->first = 1;
    *ops = &chrome_ops;
    return c;
}
