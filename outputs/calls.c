/* The call sequence view (`ptcall calls`): one line per call, indented by depth, uftrace
 * replay's layout; a call with no callee shown is one line "f();". */
#include <stdlib.h>
#include <string.h>

#include "linemerge.h"
#include "strcache.h"
#include "output.h"

/* Per thread: the call entered and not yet known to be a leaf, the thread's "pid/tid"
 * column, and its queue of lines (time order). */
struct cthread {
    uint32_t func, depth;
    uint64_t time;
    int valid;
    uint32_t pid, tid;
    char ptid[48];          /* 16 bytes over its longest: ptc_wb_put_padded() */
    size_t ptid_len;
    struct ptc_lm_queue *q;
};

struct calls_view {
    struct ptc_wbuf *w;     /* where lines are written: out, or scratch in time order */
    struct ptc_wbuf *out;
    const struct ptc_session *s;
    int timed, ns;
    int started;
    uint64_t lines;
    struct ptc_strcache names;      /* short names by function id */
    /* time order: each line goes to scratch, then to its thread's queue */
    int order;
    size_t window;
    struct ptc_wbuf scratch;
    struct ptc_linemerge merge;
    struct ptc_lm_queue *line_q;    /* queue of the line in scratch */
    uint64_t key;                   /* and its time */
};

/* Time order: the line in scratch (if any) joins its thread's queue. Returns 0, or 1 when
 * out of memory. */
static int commit_line(struct calls_view *c)
{
    if (c->order != PTC_ORDER_TIME || !c->scratch.len)
        return 0;
    int r = ptc_lm_push(&c->merge, c->line_q, c->key, c->scratch.buf, c->scratch.len);
    c->scratch.len = 0;
    return r ? 1 : 0;
}

/* Writes the function's name as uftrace shows it: C++ parameter lists dropped ("f() {",
 * not "f(int)() {"). */
static void put_name(struct calls_view *c, uint32_t id)
{
    size_t len;
    const char *n = ptc_strcache_get(&c->names, id, &len);
    if (!n) {
        char buf[4096];
        const struct ptc_func_info *f = ptc_session_func(c->s, id);
        const char *sh = f ? ptc_out_short_name(f->name, buf, sizeof(buf)) : "?";
        len = strlen(sh);
        if (!(n = ptc_strcache_set(&c->names, id, sh, len))) {
            ptc_wb_put(c->w, sh, len);
            return;
        }
    }
    ptc_wb_put_padded(c->w, n, len);
}

static int calls_begin(void *view, const struct ptc_out_info *info)
{
    struct calls_view *c = view;
    c->timed = info->timed;
    c->ns = info->ns;
    if (c->order == PTC_ORDER_AUTO)
        c->order = c->timed ? PTC_ORDER_TIME : PTC_ORDER_THREAD;
    if (c->order == PTC_ORDER_TIME) {
        if (!c->timed) {
            c->order = PTC_ORDER_THREAD; /* nothing to order by */
        } else {
            if (ptc_wbuf_init(&c->scratch, -1, 4096))
                return 1;
            ptc_lm_init(&c->merge, c->out, c->window);
            c->w = &c->scratch;
        }
    }
    return 0;
}

/* A duration as people read it: "40 ns", "1.250 us", "3.000 ms", "1.500 s". */
static void put_dur(struct ptc_wbuf *w, uint64_t v, int ns)
{
    char tmp[40];
    if (!ns) {
        ptc_wb_u64(w, v);
        ptc_wb_str(w, " ticks");
        return;
    }
    if (v < 1000) {
        ptc_wb_u64(w, v);
        ptc_wb_str(w, " ns");
    } else if (v < 1000000) { /* exact: three decimals of us are the ns */
        ptc_wb_fixed(w, v, 3, 0);
        ptc_wb_str(w, " us");
    } else {
        int n = snprintf(tmp, sizeof(tmp), v < 1000000000 ? "%.3f ms" : "%.3f s",
                         (double)v / (v < 1000000000 ? 1e6 : 1e9));
        ptc_wb_put(w, tmp, (size_t)n);
    }
}

static struct cthread *thread_of(const struct ptc_out_event *e)
{
    struct cthread *t = (struct cthread *)*e->thread_user;
    if (!t) {
        t = calloc(1, sizeof(*t));
        if (!t)
            return NULL;
        t->pid = e->pid;
        t->tid = e->tid;
        t->ptid_len = (size_t)snprintf(t->ptid, sizeof(t->ptid), "%u/%u", e->pid, e->tid);
        *e->thread_user = (uintptr_t)t;
    }
    return t;
}

/* Starts a line of thread t at time: the columns before the call tree. */
static int prefix(struct calls_view *c, struct cthread *t, uint64_t time, const uint64_t *dur)
{
    if (!c->started) {
        c->started = 1;
        if (c->timed)
            ptc_wb_str(c->out, c->ns ? "#        TIME(s)     DURATION        PID/TID  FUNCTION\n"
                                     : "#    TIME(ticks)     DURATION        PID/TID  FUNCTION\n");
        else
            ptc_wb_str(c->out, "#       PID/TID  FUNCTION (untimed trace: no times)\n");
    }
    if (c->order == PTC_ORDER_TIME) {
        if (commit_line(c))
            return 1;
        if (!t->q && !(t->q = ptc_lm_queue(&c->merge)))
            return 1;
        c->line_q = t->q;
        c->key = time;
    }
    struct ptc_wbuf *w = c->w;
    if (c->timed) {
        if (c->ns)
            ptc_wb_sec9(w, time, 16);
        else
            ptc_wb_u64w(w, time, 16);
        ptc_wb_char(w, ' ');
        if (dur) {
            /* at most 26 bytes ("18446744073709551615 ticks"), in an array with room for
             * the 16-byte moves of ptc_wb_put_padded(); never grown, though on the stack */
            char db[64];
            struct ptc_wbuf tmpw = {.fd = -1, .buf = db, .cap = 40};
            put_dur(&tmpw, *dur, c->ns);
            if (tmpw.len < 12)
                ptc_wb_spaces(w, 12 - tmpw.len);
            char *o = ptc_wb_room(w, 32);
            __builtin_memcpy(o, db, 16);
            __builtin_memcpy(o + 16, db + 16, 16);
            w->len += tmpw.len;
        } else {
            ptc_wb_spaces(w, 12);
        }
        ptc_wb_char(w, ' ');
        if (t->ptid_len < 14)
            ptc_wb_spaces(w, 14 - t->ptid_len);
    } else if (t->ptid_len < 15) {
        ptc_wb_spaces(w, 15 - t->ptid_len);
    }
    ptc_wb_put_padded(w, t->ptid, t->ptid_len);
    ptc_wb_put(w, " |", 2);
    c->lines++;
    return 0;
}

static void indent(struct ptc_wbuf *w, uint32_t depth)
{
    ptc_wb_spaces(w, (size_t)depth * 2 + 1);
}

static int flush_pending(struct calls_view *c, struct cthread *t)
{
    if (!t->valid)
        return 0;
    t->valid = 0;
    if (prefix(c, t, t->time, NULL))
        return 1;
    indent(c->w, t->depth);
    put_name(c, t->func);
    ptc_wb_put(c->w, "() {\n", 5);
    return 0;
}

/* Starts the line of an event other than a call: the call pending in the thread (a
 * function entered, not yet known to be a leaf) is shown first. */
static int event_line(struct calls_view *c, struct cthread *t, uint64_t time)
{
    return flush_pending(c, t) || prefix(c, t, time, NULL);
}

static int calls_enter(void *view, const struct ptc_out_event *e)
{
    struct calls_view *c = view;
    if (e->inherited) /* the FORKED line said how many */
        return 0;
    struct cthread *t = thread_of(e);
    if (!t || flush_pending(c, t))
        return 1;
    t->valid = 1;
    t->func = e->func;
    t->depth = e->depth;
    t->time = e->time;
    return 0;
}

static int calls_ret(void *view, const struct ptc_out_event *e)
{
    static const char *const why[] = {"", "unwound by an exception",
                                      "exit skipped: longjmp or exception",
                                      "popped by a landing pad",
                                      "events lost: ends at the last event before the gap",
                                      "still open at the end"};
    struct calls_view *c = view;
    struct cthread *t = thread_of(e);
    if (!t)
        return 1;
    const char *wh = e->how < 6 ? why[e->how] : "";
    const char *inh = !e->inherited ? ""
                      : c->timed    ? "inherited across fork: time since the fork"
                                    : "inherited across fork";
    const uint64_t *dur = c->timed ? &e->dur : NULL;
    if (t->valid && t->func == e->func && t->depth == e->depth) {
        t->valid = 0;
        if (prefix(c, t, t->time, dur))
            return 1;
        struct ptc_wbuf *w = c->w;
        indent(w, e->depth);
        put_name(c, e->func);
        if (*wh) {
            ptc_wb_put(w, "(); /* ", 7);
            ptc_wb_str(w, wh);
            ptc_wb_put(w, " */\n", 4);
        } else {
            ptc_wb_put(w, "();\n", 4);
        }
        return 0;
    }
    if (flush_pending(c, t) || prefix(c, t, e->time, dur))
        return 1;
    struct ptc_wbuf *w = c->w;
    indent(w, e->depth);
    ptc_wb_str(w, "} /* ");
    put_name(c, e->func);
    if (*wh) {
        ptc_wb_str(w, ": ");
        ptc_wb_str(w, wh);
    }
    if (*inh) {
        ptc_wb_str(w, *wh ? ", " : ": ");
        ptc_wb_str(w, inh);
    }
    ptc_wb_str(w, " */\n");
    return 0;
}

static int calls_gap(void *view, const struct ptc_out_event *e)
{
    struct calls_view *c = view;
    struct cthread *t = thread_of(e);
    if (!t || event_line(c, t, e->time))
        return 1;
    if (e->count) {
        ptc_wb_str(c->w, " --- ");
        ptc_wb_u64(c->w, e->count);
        ptc_wb_str(c->w, " events lost here: the stack restarts empty ---\n");
    } else {
        ptc_wb_str(c->w, " --- events missing here: the stack restarts empty ---\n");
    }
    return 0;
}

static int calls_fork(void *view, const struct ptc_out_event *e)
{
    struct calls_view *c = view;
    struct cthread *t = thread_of(e);
    if (!t || event_line(c, t, e->time))
        return 1;
    if (e->kind == PTC_CALL_FORK) {
        ptc_wb_str(c->w, " --- fork: child process ");
        ptc_wb_u64(c->w, e->count);
        ptc_wb_str(c->w, " ---\n");
    } else {
        ptc_wb_str(c->w, " --- fork child: continues with ");
        ptc_wb_u64(c->w, e->count);
        ptc_wb_str(c->w, e->count == 1 ? " frame of its parent's stack ---\n"
                                       : " frames of its parent's stack ---\n");
    }
    return 0;
}

static int calls_note(void *view, const struct ptc_out_event *e)
{
    struct calls_view *c = view;
    struct cthread *t = thread_of(e);
    if (!t || event_line(c, t, e->time))
        return 1;
    indent(c->w, e->depth);
    if (e->kind == PTC_CALL_UNMATCHED) {
        ptc_wb_str(c->w, "(exit of ");
        put_name(c, e->func);
        ptc_wb_str(c->w, ", which is not on the stack: ignored)\n");
    } else {
        ptc_wb_char(c->w, '(');
        put_name(c, e->func);
        ptc_wb_str(c->w, " resumes at a landing pad)\n");
    }
    return 0;
}

static int calls_thread_end(void *view, uint32_t pid, uint32_t tid, uintptr_t *user)
{
    (void)view;
    (void)pid;
    (void)tid;
    free((void *)*user);
    *user = 0;
    return 0;
}

static int calls_end(void *view, const struct ptc_out_info *info)
{
    struct calls_view *c = view;
    if (commit_line(c))
        return 1;
    if (c->order == PTC_ORDER_TIME)
        ptc_lm_flush(&c->merge);
    if (!c->lines) {
        ptc_wb_str(c->out, "# no calls");
        ptc_wb_str(c->out, info->filtered ? " for the selected threads and functions\n" : "\n");
    }
    return 0;
}

static void calls_free(void *view)
{
    struct calls_view *c = view;
    if (c->order == PTC_ORDER_TIME)
        ptc_lm_free(&c->merge);
    ptc_strcache_free(&c->names);
    ptc_wbuf_free(&c->scratch);
    free(c);
}

static const struct ptc_output_ops calls_ops = {
    .name = "calls",
    .begin = calls_begin,
    .enter = calls_enter,
    .ret = calls_ret,
    .gap = calls_gap,
    .fork = calls_fork,
    .note = calls_note,
    .thread_end = calls_thread_end,
    .end = calls_end,
    .free = calls_free,
};

void *ptc_view_calls(const struct ptc_view_opts *o, const struct ptc_output_ops **ops)
{
    struct calls_view *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->w = c->out = o->out;
    c->s = o->s;
    c->order = o->order;
    c->window = o->reorder_window ? o->reorder_window : (size_t)1 << 18;
    *ops = &calls_ops;
    return c;
}

uint64_t ptc_view_calls_out_of_order(const void *view)
{
    return ((const struct calls_view *)view)->merge.out_of_order;
}
