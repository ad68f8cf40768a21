/* The call sequence view (`ptcall calls`): one line per call, indented by depth, uftrace
 * replay's layout; a call with no callee shown is one line "f();".
 *
 * Two threads: the decoder's calls the view's callbacks, which decide the lines (a call is
 * one line or two, names are looked up) and hand them over as records in batches
 * (common/ptc_pipe.h); a second thread formats and writes them. Formatting is two thirds of
 * the work, so the two halves run side by side. */
#include <stdlib.h>
#include <string.h>

#include "linemerge.h"
#include "ptc_clock.h"
#include "ptc_pipe.h"
#include "strcache.h"
#include "output.h"

/* Per thread: the call entered and not yet known to be a leaf (the deciding side's), the
 * thread's "pid/tid" column (set once, before any line), and its queue of lines in time
 * order (the formatting side's). */
struct cthread {
    uint32_t func, depth;
    uint64_t time;
    int valid;
    uint32_t pid, tid;
    struct cthread *all;    /* every thread's state, freed with the view (the formatting
                               side may still be writing a thread's lines when it ends) */
    /* the formatting side's, a cache line apart: the two threads never write one line */
    _Alignas(64) char ptid[48]; /* 16 bytes over its longest: ptc_wb_put_padded() */
    size_t ptid_len;
    struct ptc_lm_queue *q;
};

struct calls_view {
    /* set before the lines start, read by both sides */
    struct ptc_wbuf *out;
    const struct ptc_session *s;
    int timed, ns;
    uint32_t resolution_ns; /* the ticker clock (issue 28): a duration under it is "< PERIOD" */
    int order;
    size_t window;
    /* the deciding side's: names, and the batch being filled */
    struct ptc_strcache names;      /* short names by function id */
    struct ptc_pipe *pipe;
    struct lbatch *fill;
    int drained;
    struct cthread *threads;        /* every thread's state (cthread.all) */
    /* the formatting side's, a cache line apart (written once per line) */
    _Alignas(64) struct ptc_wbuf *w; /* where lines are written: out, or scratch in time order */
    int started;
    struct timecol {        /* the TIME column of the last line, as text */
        char s[16];
        uint64_t last;
        int valid;
    } tcol;
    uint64_t lines;
    int failed;                     /* out of memory: the end says so */
    /* time order: each line goes to scratch, then to its thread's queue */
    struct ptc_wbuf scratch;
    struct ptc_linemerge merge;
    struct ptc_lm_queue *line_q;    /* queue of the line in scratch */
    uint64_t key;                   /* and its time */
};

/* Zeroed memory on a cache line of its own (the structs above are 64-aligned). */
static void *zalloc64(size_t n)
{
    n = (n + 63) & ~(size_t)63;
    void *p = aligned_alloc(64, n);
    if (p)
        memset(p, 0, n);
    return p;
}

/* A line, decided; formatted by format_line(). */
enum line_kind { L_ENTER, L_LEAF, L_RET, L_GAP, L_FORK, L_FORKED, L_SPAWN, L_UNMATCHED, L_LANDING,
                 L_MARK };
struct line {
    uint8_t kind;           /* enum line_kind */
    uint8_t how;            /* L_LEAF, L_RET: enum ptc_return_how */
    uint8_t inherited;      /* L_RET of a frame inherited across fork */
    uint8_t has_dur;
    uint8_t before;         /* L_RET of a call entered before the trace began; count: level */
    uint32_t depth;
    struct cthread *t;
    const char *name;       /* strcache'd: stable until the view is freed */
    size_t name_len;
    uint64_t time, dur, count;
};
#define LINES_PER_BATCH 4096
struct lbatch {
    size_t n;
    struct line l[LINES_PER_BATCH];
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

/* The function's name as uftrace shows it: C++ parameter lists dropped ("f() {", not
 * "f(int)() {"), made safe for a text line (control characters and bytes that are not UTF-8
 * as visible escapes); NULL when out of memory. */
static const char *name_of(struct calls_view *c, uint32_t id, size_t *len)
{
    const char *n = ptc_strcache_get(&c->names, id, len);
    if (!n) {
        char buf[4096];
        const struct ptc_func_info *f = ptc_session_func(c->s, id);
        const char *sh = f ? ptc_out_short_name(f->name, buf, sizeof(buf)) : "?";
        struct ptc_wbuf tmp;
        if (ptc_wbuf_init(&tmp, -1, 8192))
            return NULL;
        ptc_wb_esc(&tmp, sh, strlen(sh), PTC_ESC_TEXT);
        *len = tmp.len;
        n = tmp.err ? NULL : ptc_strcache_set(&c->names, id, tmp.buf, tmp.len);
        ptc_wbuf_free(&tmp);
    }
    return n;
}

static void format_batch(void *view, void *slot);

static int calls_begin(void *view, const struct ptc_out_info *info)
{
    struct calls_view *c = view;
    c->timed = info->timed;
    c->ns = info->ns;
    struct ptc_totals t;
    ptc_session_totals(info->s, &t);
    c->resolution_ns = t.resolution_ns;
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
    if (!(c->pipe = ptc_pipe_new(sizeof(struct lbatch), 4, format_batch, c)))
        return 1;
    c->fill = ptc_pipe_slot(c->pipe);
    c->fill->n = 0;
    return 0;
}

/* A duration as people read it: "40 ns", "1.250 us", "3.000 ms", "1.500 s"; under the ticker
 * clock's period "< 100 us", never an exact 0 the clock cannot tell. */
static void put_dur(struct ptc_wbuf *w, uint64_t v, int ns, uint32_t resolution_ns)
{
    char tmp[40];
    if (ns && resolution_ns && v < resolution_ns) {
        ptc_wb_str(w, "< ");
        ptc_wb_str(w, ptc_clock_period_text(resolution_ns, tmp, sizeof(tmp)));
        return;
    }
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

static struct cthread *thread_of(struct calls_view *c, const struct ptc_out_event *e)
{
    struct cthread *t = (struct cthread *)*e->thread_user;
    if (!t) {
        t = zalloc64(sizeof(*t));
        if (!t)
            return NULL;
        t->all = c->threads;
        c->threads = t;
        t->pid = e->pid;
        t->tid = e->tid;
        t->ptid_len = (size_t)snprintf(t->ptid, sizeof(t->ptid), "%u/%u", e->pid, e->tid);
        *e->thread_user = (uintptr_t)t;
    }
    return t;
}

/* The TIME column in seconds ("%16.9f") of a new time ns into tc->s; 0, or -1 when it does
 * not fit 16 characters. */
static int time_full(struct timecol *tc, uint64_t ns)
{
    uint64_t sec = ns / 1000000000u;
    uint32_t frac = (uint32_t)(ns % 1000000000u);
    int i = 15;
    for (int k = 0; k < 9; k++, frac /= 10)
        tc->s[i--] = (char)('0' + frac % 10);
    tc->s[i--] = '.';
    do {
        if (i < 0)
            return -1;
        tc->s[i--] = (char)('0' + sec % 10);
        sec /= 10;
    } while (sec);
    while (i >= 0)
        tc->s[i--] = ' ';
    tc->last = ns;
    return 0;
}

/* Writes the TIME column. Consecutive lines are close in time: the text of the last one is
 * advanced by the difference, digit by digit from the right, which changes a few digits
 * instead of formatting all of them. */
static void put_time(struct calls_view *c, uint64_t ns)
{
    struct timecol *tc = &c->tcol;
    if (tc->valid && ns >= tc->last && ns - tc->last < 1000000000u) {
        uint64_t d = ns - tc->last;
        int i = 15;
        while (d && i >= 0) {
            if (tc->s[i] == '.')
                i--;
            unsigned v = (tc->s[i] == ' ' ? 0u : (unsigned)(tc->s[i] - '0')) + (unsigned)(d % 10);
            d /= 10;
            if (v >= 10) {
                v -= 10;
                d++;
            }
            tc->s[i--] = (char)('0' + v);
        }
        tc->valid = !d; /* a carry out of 16 characters: written in full below */
        tc->last = ns;
    } else {
        tc->valid = time_full(tc, ns) == 0;
    }
    if (tc->valid)
        ptc_wb_put(c->w, tc->s, 16);
    else
        ptc_wb_sec9(c->w, ns, 16);
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
            put_time(c, time);
        else
            ptc_wb_u64w(w, time, 16);
        ptc_wb_char(w, ' ');
        if (dur) {
            /* at most 26 bytes ("18446744073709551615 ticks"), in an array with room for
             * the 16-byte moves of ptc_wb_put_padded(); never grown, though on the stack */
            char db[64];
            struct ptc_wbuf tmpw = {.fd = -1, .buf = db, .cap = 40};
            put_dur(&tmpw, *dur, c->ns, c->resolution_ns);
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

/* ---- the formatting side: one line, as text -------------------------------------------- */

static const char *const why[] = {"", "unwound by an exception",
                                  "exit skipped: longjmp or exception",
                                  "popped by a landing pad",
                                  "events lost: ends at the last event before the gap",
                                  "still open at the end: ran until its thread's trace ended"};

static int format_line(struct calls_view *c, const struct line *l)
{
    struct cthread *t = l->t;
    if (prefix(c, t, l->time, l->has_dur ? &l->dur : NULL))
        return 1;
    struct ptc_wbuf *w = c->w;
    const char *wh = l->how < 6 ? why[l->how] : "";
    switch (l->kind) {
    case L_ENTER:
        indent(w, l->depth);
        ptc_wb_put_padded(w, l->name, l->name_len);
        ptc_wb_put(w, "() {\n", 5);
        break;
    case L_LEAF:
        indent(w, l->depth);
        ptc_wb_put_padded(w, l->name, l->name_len);
        if (*wh) {
            ptc_wb_put(w, "(); /* ", 7);
            ptc_wb_str(w, wh);
            ptc_wb_put(w, " */\n", 4);
        } else {
            ptc_wb_put(w, "();\n", 4);
        }
        break;
    case L_RET: {
        const char *inh = l->before     ? (c->timed ? "entered before the trace began: time "
                                                      "since the window's start"
                                                    : "entered before the trace began")
                          : !l->inherited ? ""
                          : c->timed    ? "inherited across fork: time since the fork"
                                        : "inherited across fork";
        indent(w, l->depth);
        ptc_wb_str(w, "} /* ");
        ptc_wb_put_padded(w, l->name, l->name_len);
        if (*wh) {
            ptc_wb_str(w, ": ");
            ptc_wb_str(w, wh);
        }
        if (*inh) {
            ptc_wb_str(w, *wh ? ", " : ": ");
            ptc_wb_str(w, inh);
        }
        if (l->before) { /* its place in the stack when the window opened */
            ptc_wb_str(w, " (level ");
            ptc_wb_u64(w, l->count);
            ptc_wb_str(w, " of the stack open then, 1 innermost)");
        }
        ptc_wb_str(w, " */\n");
        break;
    }
    case L_GAP:
        if (l->count) {
            ptc_wb_str(w, " --- ");
            ptc_wb_u64(w, l->count);
            ptc_wb_str(w, " events lost here: the stack restarts empty ---\n");
        } else {
            ptc_wb_str(w, " --- events missing here: the stack restarts empty ---\n");
        }
        break;
    case L_FORK:
        ptc_wb_str(w, " --- fork: child process ");
        ptc_wb_u64(w, l->count);
        ptc_wb_str(w, " ---\n");
        break;
    case L_SPAWN:
        ptc_wb_str(w, " --- spawn: child process ");
        ptc_wb_u64(w, l->count);
        ptc_wb_str(w, " ---\n");
        break;
    case L_FORKED:
        ptc_wb_str(w, " --- fork child: continues with ");
        ptc_wb_u64(w, l->count);
        ptc_wb_str(w, l->count == 1 ? " frame of its parent's stack ---\n"
                                    : " frames of its parent's stack ---\n");
        break;
    case L_MARK: /* name: the label, owned by the session (NUL-terminated) */
        indent(w, l->depth);
        ptc_wb_str(w, "/* mark: ");
        /* escaped as inside a JSON string: a label is the program's own string, and a
         * newline in it would start a line that looks like a call */
        ptc_wb_json_chars(w, l->name);
        ptc_wb_str(w, " */\n");
        break;
    case L_UNMATCHED:
        indent(w, l->depth);
        ptc_wb_str(w, "(exit of ");
        ptc_wb_put_padded(w, l->name, l->name_len);
        ptc_wb_str(w, ", which is not on the stack: ignored)\n");
        break;
    default: /* L_LANDING */
        indent(w, l->depth);
        ptc_wb_char(w, '(');
        ptc_wb_put_padded(w, l->name, l->name_len);
        ptc_wb_str(w, " resumes at a landing pad: ");
        ptc_wb_u64(w, l->count);
        ptc_wb_str(w, l->count == 1 ? " frame unwound)\n" : " frames unwound)\n");
        break;
    }
    return 0;
}

static void format_batch(void *view, void *slot)
{
    struct calls_view *c = view;
    const struct lbatch *b = slot;
    for (size_t i = 0; i < b->n; i++)
        if (format_line(c, &b->l[i]))
            c->failed = 1; /* out of memory: the end says so */
}

/* ---- the deciding side: the driver's callbacks ------------------------------------------ */

/* Room for one more line in the batch being filled. */
static struct line *new_line(struct calls_view *c, enum line_kind kind, struct cthread *t,
                             uint64_t time)
{
    if (c->fill->n == LINES_PER_BATCH) {
        c->fill = ptc_pipe_put(c->pipe);
        c->fill->n = 0;
    }
    struct line *l = &c->fill->l[c->fill->n++];
    memset(l, 0, sizeof(*l));
    l->kind = (uint8_t)kind;
    l->t = t;
    l->time = time;
    return l;
}

/* A line naming function func; 1 when out of memory. */
static int named_line(struct calls_view *c, enum line_kind kind, struct cthread *t,
                      uint64_t time, uint32_t depth, uint32_t func, struct line **out)
{
    size_t len;
    const char *n = name_of(c, func, &len);
    if (!n)
        return 1;
    struct line *l = new_line(c, kind, t, time);
    l->depth = depth;
    l->name = n;
    l->name_len = len;
    *out = l;
    return 0;
}

/* The call pending in the thread (a function entered, not yet known to be a leaf) becomes
 * an "f() {" line. */
static int flush_pending(struct calls_view *c, struct cthread *t)
{
    if (!t->valid)
        return 0;
    t->valid = 0;
    struct line *l;
    return named_line(c, L_ENTER, t, t->time, t->depth, t->func, &l);
}

static int calls_enter(void *view, const struct ptc_out_event *e)
{
    struct calls_view *c = view;
    if (e->inherited) /* the FORKED line said how many */
        return 0;
    struct cthread *t = thread_of(c, e);
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
    struct calls_view *c = view;
    struct cthread *t = thread_of(c, e);
    if (!t)
        return 1;
    struct line *l;
    if (t->valid && t->func == e->func && t->depth == e->depth) {
        t->valid = 0;
        if (named_line(c, L_LEAF, t, t->time, e->depth, e->func, &l))
            return 1;
    } else if (flush_pending(c, t) || named_line(c, L_RET, t, e->time, e->depth, e->func, &l)) {
        return 1;
    }
    l->how = e->how;
    l->inherited = e->inherited;
    l->before = e->before;
    l->count = e->count;
    l->has_dur = (uint8_t)c->timed;
    l->dur = e->dur;
    return 0;
}

static int calls_gap(void *view, const struct ptc_out_event *e)
{
    struct calls_view *c = view;
    struct cthread *t = thread_of(c, e);
    if (!t || flush_pending(c, t))
        return 1;
    new_line(c, L_GAP, t, e->time)->count = e->count;
    return 0;
}

static int calls_fork(void *view, const struct ptc_out_event *e)
{
    struct calls_view *c = view;
    struct cthread *t = thread_of(c, e);
    if (!t || flush_pending(c, t))
        return 1;
    enum line_kind k = e->kind == PTC_CALL_FORK    ? L_FORK
                       : e->kind == PTC_CALL_SPAWN ? L_SPAWN
                                                   : L_FORKED;
    new_line(c, k, t, e->time)->count = e->count;
    return 0;
}

static int calls_mark(void *view, const struct ptc_out_event *e)
{
    struct calls_view *c = view;
    struct cthread *t = thread_of(c, e);
    if (!t || flush_pending(c, t))
        return 1;
    struct line *l = new_line(c, L_MARK, t, e->time);
    l->depth = e->depth;
    l->name = ptc_session_mark_label(c->s, e->count);
    l->name_len = strlen(l->name);
    return 0;
}

static int calls_note(void *view, const struct ptc_out_event *e)
{
    struct calls_view *c = view;
    /* a landing stub after nothing was unwound: the first return of setjmp (or a catch
     * reached again without a throw), where there is nothing to say */
    if (e->kind == PTC_CALL_LANDING && !e->count)
        return 0;
    struct cthread *t = thread_of(c, e);
    struct line *l;
    if (!t || flush_pending(c, t) ||
        named_line(c, e->kind == PTC_CALL_UNMATCHED ? L_UNMATCHED : L_LANDING, t, e->time,
                   e->depth, e->func, &l))
        return 1;
    l->count = e->count;
    return 0;
}

static int calls_thread_end(void *view, uint32_t pid, uint32_t tid, uintptr_t *user)
{
    (void)view;
    (void)pid;
    (void)tid;
    *user = 0; /* a new life of the thread gets a new state; this one goes with the view */
    return 0;
}

/* Every line decided is formatted (idempotent). */
static void drain(struct calls_view *c)
{
    if (!c->pipe || c->drained)
        return;
    if (c->fill->n)
        c->fill = ptc_pipe_put(c->pipe);
    ptc_pipe_drain(c->pipe);
    c->drained = 1;
}

static int calls_end(void *view, const struct ptc_out_info *info)
{
    struct calls_view *c = view;
    drain(c);
    if (c->failed || commit_line(c))
        return 1;
    if (c->order == PTC_ORDER_TIME)
        ptc_lm_flush(&c->merge);
    struct ptc_totals t;
    ptc_session_totals(c->s, &t);
    if (!c->lines && t.counts_segments && !t.events) {
        /* counting mode kept how often, not in what order: say where the counts are */
        ptc_wb_str(c->out, "# counts only (record --counts): no call sequence; "
                           "ptcall report shows the calls per function\n");
    } else if (!c->lines) {
        ptc_wb_str(c->out, "# no calls");
        ptc_wb_str(c->out, info->filtered ? " for the selected threads and functions\n" : "\n");
    }
    return 0;
}

static void calls_free(void *view)
{
    struct calls_view *c = view;
    drain(c); /* what was decided before an error is shown */
    ptc_pipe_free(c->pipe);
    if (c->order == PTC_ORDER_TIME)
        ptc_lm_free(&c->merge);
    ptc_strcache_free(&c->names);
    ptc_wbuf_free(&c->scratch);
    for (struct cthread *t = c->threads, *n; t; t = n) {
        n = t->all;
        free(t);
    }
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
    .mark = calls_mark,
    .thread_end = calls_thread_end,
    .end = calls_end,
    .free = calls_free,
};

void *ptc_view_calls(const struct ptc_view_opts *o, const struct ptc_output_ops **ops)
{
    struct calls_view *c = zalloc64(sizeof(*c));
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
