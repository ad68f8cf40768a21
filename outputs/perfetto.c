/* Perfetto's protobuf trace (a `Trace` of `TracePacket`s, protos/perfetto/trace/
 * perfetto_trace.proto): a track per process (ProcessDescriptor) and per thread
 * (ThreadDescriptor, with the thread's name), and per call a TrackEvent slice begin at its
 * entry and a slice end at its return; marks, gaps, forks and spawns are instant events.
 *
 * Small per event, as the Perfetto SDK writes it: each thread is a packet sequence of its own
 * (trusted_packet_sequence_id), whose defaults (TracePacketDefaults) name its track and an
 * incremental clock (sequence-scoped clock 64, tied to BOOTTIME by a ClockSnapshot), so that a
 * packet's timestamp is the delta from the sequence's last one; event names are interned
 * (InternedData.event_names, iid = the function's id + 1) the first time a sequence uses
 * them. A begin costs about 13 bytes, an end 11. Times are ns since the recording's start
 * (ticks, taken as ns, for a trace without a time base).
 *
 * Calls entered before a thread's window (an attach, a snapshot) return without an enter:
 * their slices go on a child track of the thread ("entered before the trace began") with
 * absolute times, written when the thread ends (outermost first), since their begin precedes
 * events already written. Calls still open at the end, and calls that ended other than by
 * their exit, have a debug annotation on their end (still_open, ended). */
#include <stdlib.h>
#include <string.h>

#include "protoenc.h"
#include "views.h"

/* perfetto_trace.proto's field numbers */
enum {
    TRACE_PACKET = 1,
    TP_TIMESTAMP = 8, TP_SEQ_ID = 10, TP_TRACK_EVENT = 11, TP_INTERNED = 12,
    TP_SEQ_FLAGS = 13, TP_CLOCK_ID = 58, TP_DEFAULTS = 59, TP_TRACK_DESCRIPTOR = 60,
    TP_CLOCK_SNAPSHOT = 6,
    CS_CLOCKS = 1, CLK_ID = 1, CLK_TIMESTAMP = 2, CLK_INCREMENTAL = 3,
    DEF_CLOCK_ID = 58, DEF_TRACK_EVENT = 11, TED_TRACK_UUID = 11,
    TD_UUID = 1, TD_NAME = 2, TD_PROCESS = 3, TD_THREAD = 4, TD_PARENT = 5,
    PD_PID = 1, PD_NAME = 6, THD_PID = 1, THD_TID = 2, THD_NAME = 5,
    TE_TYPE = 9, TE_NAME_IID = 10, TE_TRACK_UUID = 11, TE_NAME = 23, TE_DEBUG = 4,
    DA_NAME = 10, DA_BOOL = 2, DA_UINT = 3, DA_STRING = 6,
    ID_EVENT_NAMES = 2, EN_IID = 1, EN_NAME = 2,
};
enum { SLICE_BEGIN = 1, SLICE_END = 2, INSTANT = 3 };
enum { SEQ_CLEARED = 1, SEQ_NEEDS = 2 };
enum { CLOCK_BOOTTIME = 6, CLOCK_INCREMENTAL = 64 };

struct pf_before {
    uint32_t func;
    uint64_t end;
    unsigned how;
};

struct pf_thread {
    uint32_t pid, tid, seq;
    uint64_t last;            /* the incremental clock's value */
    uint8_t *interned;        /* a bit per function: its name is interned on this sequence */
    uint32_t ninterned;       /* bits the bitmap holds */
    char *name;               /* the name its descriptor gave (NULL: none) */
    struct pf_before *before; /* calls entered before the window, innermost first */
    size_t nbefore, capbefore;
    uint64_t before_at;
    struct pf_thread *next;
};

struct pf_view {
    struct ptc_wbuf *w;
    const struct ptc_session *s;
    struct ptc_pb p;          /* the packet being made */
    struct pf_thread *threads, **tail;
    uint32_t nseq;
    uint32_t *pids;           /* processes given a track */
    size_t npids, cappids;
};

static uint64_t thread_uuid(uint32_t pid, uint32_t tid)
{
    return (1ull << 62) | ((uint64_t)pid << 32) | tid;
}
static uint64_t process_uuid(uint32_t pid) { return (1ull << 61) | pid; }
static uint64_t before_uuid(uint32_t pid, uint32_t tid)
{
    return (1ull << 60) | ((uint64_t)pid << 32) | tid;
}

/* Starts a packet of t's sequence. */
static size_t packet_open(struct pf_view *v, const struct pf_thread *t)
{
    v->p.len = 0;
    v->p.err = 0;
    size_t at = ptc_pb_open(&v->p, TRACE_PACKET);
    ptc_pb_uint(&v->p, TP_SEQ_ID, t->seq);
    return at;
}

/* Ends the packet and writes it out. */
static int packet_close(struct pf_view *v, size_t at)
{
    ptc_pb_close(&v->p, at);
    if (v->p.err)
        return 1;
    ptc_wb_put(v->w, (const char *)v->p.buf, v->p.len);
    return v->w->err || v->w->over_limit ? 1 : 0;
}

static void thread_descriptor(struct pf_view *v, const struct pf_thread *t, const char *name)
{
    size_t td = ptc_pb_open(&v->p, TP_TRACK_DESCRIPTOR);
    ptc_pb_uint(&v->p, TD_UUID, thread_uuid(t->pid, t->tid));
    ptc_pb_uint(&v->p, TD_PARENT, process_uuid(t->pid));
    size_t th = ptc_pb_open(&v->p, TD_THREAD);
    ptc_pb_uint(&v->p, THD_PID, t->pid);
    ptc_pb_uint(&v->p, THD_TID, t->tid);
    if (name && *name)
        ptc_pb_text(&v->p, THD_NAME, name);
    ptc_pb_close(&v->p, th);
    ptc_pb_close(&v->p, td);
}

static int have_pid(struct pf_view *v, uint32_t pid, int *seen)
{
    for (size_t i = 0; i < v->npids; i++)
        if (v->pids[i] == pid) {
            *seen = 1;
            return 0;
        }
    *seen = 0;
    if (v->npids == v->cappids) {
        size_t nc = v->cappids ? v->cappids * 2 : 16;
        uint32_t *n = realloc(v->pids, nc * sizeof(*n));
        if (!n)
            return 1;
        v->pids = n;
        v->cappids = nc;
    }
    v->pids[v->npids++] = pid;
    return 0;
}

static int pf_begin(void *view, const struct ptc_out_info *info)
{
    (void)view;
    return info->timed ? 0 : PTC_VIEW_E_UNTIMED; /* slices need times */
}

/* A thread's sequence: its state cleared, its defaults (track, incremental clock), its
 * process's and its own track, and the clock tied to BOOTTIME at its first event. */
static int pf_thread_start(void *view, const struct ptc_out_event *e)
{
    struct pf_view *v = view;
    struct pf_thread *t = calloc(1, sizeof(*t));
    if (!t)
        return 1;
    t->pid = e->pid;
    t->tid = e->tid;
    t->seq = ++v->nseq;
    t->last = e->time;
    *v->tail = t;
    v->tail = &t->next;
    *e->thread_user = (uintptr_t)t;

    size_t at = packet_open(v, t);
    ptc_pb_uint(&v->p, TP_SEQ_FLAGS, SEQ_CLEARED);
    size_t d = ptc_pb_open(&v->p, TP_DEFAULTS);
    ptc_pb_uint(&v->p, DEF_CLOCK_ID, CLOCK_INCREMENTAL);
    size_t ted = ptc_pb_open(&v->p, DEF_TRACK_EVENT);
    ptc_pb_uint(&v->p, TED_TRACK_UUID, thread_uuid(t->pid, t->tid));
    ptc_pb_close(&v->p, ted);
    ptc_pb_close(&v->p, d);
    if (packet_close(v, at))
        return 1;

    int seen;
    if (have_pid(v, t->pid, &seen))
        return 1;
    if (!seen) {
        const char *exe = ptc_session_process_name(v->s, t->pid);
        at = packet_open(v, t);
        size_t td = ptc_pb_open(&v->p, TP_TRACK_DESCRIPTOR);
        ptc_pb_uint(&v->p, TD_UUID, process_uuid(t->pid));
        size_t pd = ptc_pb_open(&v->p, TD_PROCESS);
        ptc_pb_uint(&v->p, PD_PID, t->pid);
        ptc_pb_text(&v->p, PD_NAME, exe && *exe ? ptc_out_base(exe) : "process");
        ptc_pb_close(&v->p, pd);
        ptc_pb_close(&v->p, td);
        if (packet_close(v, at))
            return 1;
    }

    const char *tn = ptc_session_thread_name(v->s, t->pid, t->tid);
    if (tn && *tn && !(t->name = strdup(tn)))
        return 1;
    at = packet_open(v, t);
    thread_descriptor(v, t, tn);
    if (packet_close(v, at))
        return 1;

    at = packet_open(v, t);
    ptc_pb_uint(&v->p, TP_CLOCK_ID, CLOCK_BOOTTIME);
    ptc_pb_uint(&v->p, TP_TIMESTAMP, t->last);
    size_t cs = ptc_pb_open(&v->p, TP_CLOCK_SNAPSHOT);
    size_t c = ptc_pb_open(&v->p, CS_CLOCKS);
    ptc_pb_uint(&v->p, CLK_ID, CLOCK_BOOTTIME);
    ptc_pb_uint(&v->p, CLK_TIMESTAMP, t->last);
    ptc_pb_close(&v->p, c);
    c = ptc_pb_open(&v->p, CS_CLOCKS);
    ptc_pb_uint(&v->p, CLK_ID, CLOCK_INCREMENTAL);
    ptc_pb_uint(&v->p, CLK_TIMESTAMP, t->last);
    ptc_pb_uint(&v->p, CLK_INCREMENTAL, 1);
    ptc_pb_close(&v->p, c);
    ptc_pb_close(&v->p, cs);
    return packet_close(v, at);
}

/* A packet of e's thread at e's time (a delta on the sequence's clock). */
static size_t event_open(struct pf_view *v, struct pf_thread *t, uint64_t time)
{
    size_t at = packet_open(v, t);
    ptc_pb_uint(&v->p, TP_SEQ_FLAGS, SEQ_NEEDS);
    /* times never go back within a thread; were one to, it is shown at the last time */
    ptc_pb_uint(&v->p, TP_TIMESTAMP, time > t->last ? time - t->last : 0);
    if (time > t->last)
        t->last = time;
    return at;
}

/* The name of func as an iid, interned on t's sequence by this packet if it is new there. */
static int name_iid(struct pf_view *v, struct pf_thread *t, uint32_t func, uint64_t *iid)
{
    if (func >= t->ninterned) {
        uint32_t n = t->ninterned ? t->ninterned : 1024;
        while (n <= func)
            n *= 2;
        uint8_t *b = realloc(t->interned, n / 8);
        if (!b)
            return 1;
        memset(b + t->ninterned / 8, 0, (n - t->ninterned) / 8);
        t->interned = b;
        t->ninterned = n;
    }
    *iid = (uint64_t)func + 1;
    if (t->interned[func / 8] & (1u << (func % 8)))
        return 0;
    t->interned[func / 8] |= (uint8_t)(1u << (func % 8));
    const struct ptc_func_info *fi = ptc_session_func(v->s, func);
    size_t id = ptc_pb_open(&v->p, TP_INTERNED);
    size_t en = ptc_pb_open(&v->p, ID_EVENT_NAMES);
    ptc_pb_uint(&v->p, EN_IID, *iid);
    ptc_pb_text(&v->p, EN_NAME, fi ? fi->name : "?");
    ptc_pb_close(&v->p, en);
    ptc_pb_close(&v->p, id);
    return 0;
}

static void debug_str(struct pf_view *v, const char *name, const char *value)
{
    size_t da = ptc_pb_open(&v->p, TE_DEBUG);
    ptc_pb_str(&v->p, DA_NAME, name);
    ptc_pb_str(&v->p, DA_STRING, value);
    ptc_pb_close(&v->p, da);
}

static void debug_uint(struct pf_view *v, const char *name, uint64_t value)
{
    size_t da = ptc_pb_open(&v->p, TE_DEBUG);
    ptc_pb_str(&v->p, DA_NAME, name);
    ptc_pb_uint(&v->p, DA_UINT, value);
    ptc_pb_close(&v->p, da);
}

/* How a call that did not end by its exit ended, on its slice's end. */
static void how_notes(struct pf_view *v, unsigned how)
{
    if (!how)
        return;
    debug_str(v, "ended", ptc_out_how_name(how));
    if (how == PTC_RET_END) {
        size_t da = ptc_pb_open(&v->p, TE_DEBUG);
        ptc_pb_str(&v->p, DA_NAME, "still_open");
        ptc_pb_uint(&v->p, DA_BOOL, 1);
        ptc_pb_close(&v->p, da);
    }
}

static int pf_enter(void *view, const struct ptc_out_event *e)
{
    struct pf_view *v = view;
    struct pf_thread *t = (struct pf_thread *)*e->thread_user;
    uint64_t iid;
    size_t at = event_open(v, t, e->time);
    if (name_iid(v, t, e->func, &iid))
        return 1;
    size_t te = ptc_pb_open(&v->p, TP_TRACK_EVENT);
    ptc_pb_uint(&v->p, TE_TYPE, SLICE_BEGIN);
    ptc_pb_uint(&v->p, TE_NAME_IID, iid);
    ptc_pb_close(&v->p, te);
    return packet_close(v, at);
}

static int pf_ret(void *view, const struct ptc_out_event *e)
{
    struct pf_view *v = view;
    struct pf_thread *t = (struct pf_thread *)*e->thread_user;
    if (e->before) { /* kept for the thread's end (above) */
        if (t->nbefore == t->capbefore) {
            size_t nc = t->capbefore ? t->capbefore * 2 : 8;
            struct pf_before *b = realloc(t->before, nc * sizeof(*b));
            if (!b)
                return 1;
            t->before = b;
            t->capbefore = nc;
        }
        t->before[t->nbefore].func = e->func;
        t->before[t->nbefore].end = e->time;
        t->before[t->nbefore].how = e->how;
        t->nbefore++;
        t->before_at = e->start;
        return 0;
    }
    size_t at = event_open(v, t, e->time);
    size_t te = ptc_pb_open(&v->p, TP_TRACK_EVENT);
    ptc_pb_uint(&v->p, TE_TYPE, SLICE_END);
    how_notes(v, e->how);
    ptc_pb_close(&v->p, te);
    return packet_close(v, at);
}

static int instant(struct pf_view *v, const struct ptc_out_event *e, const char *prefix,
                   const char *name, const char *what, uint64_t n)
{
    struct pf_thread *t = (struct pf_thread *)*e->thread_user;
    size_t at = event_open(v, t, e->time);
    size_t te = ptc_pb_open(&v->p, TP_TRACK_EVENT);
    ptc_pb_uint(&v->p, TE_TYPE, INSTANT);
    ptc_pb_text2(&v->p, TE_NAME, prefix, name);
    if (what)
        debug_uint(v, what, n);
    ptc_pb_close(&v->p, te);
    return packet_close(v, at);
}

static int pf_gap(void *view, const struct ptc_out_event *e)
{
    return instant(view, e, "gap: events lost", "", "events_lost", e->count);
}

static int pf_fork(void *view, const struct ptc_out_event *e)
{
    if (e->kind == PTC_CALL_FORK)
        return instant(view, e, "fork", "", "child_pid", e->count);
    if (e->kind == PTC_CALL_SPAWN)
        return instant(view, e, "spawn", "", "child_pid", e->count);
    return 0;
}

static int pf_mark(void *view, const struct ptc_out_event *e)
{
    struct pf_view *v = view;
    return instant(v, e, "mark: ", ptc_session_mark_label(v->s, e->count), "depth", e->depth);
}

/* The calls entered before t's window, on a track of their own under t's: begins outermost
 * first at the window's start, ends innermost first, in absolute times. */
static int before_track(struct pf_view *v, struct pf_thread *t)
{
    if (!t->nbefore)
        return 0;
    size_t at = packet_open(v, t);
    size_t td = ptc_pb_open(&v->p, TP_TRACK_DESCRIPTOR);
    ptc_pb_uint(&v->p, TD_UUID, before_uuid(t->pid, t->tid));
    ptc_pb_uint(&v->p, TD_PARENT, thread_uuid(t->pid, t->tid));
    ptc_pb_str(&v->p, TD_NAME, "entered before the trace began");
    ptc_pb_close(&v->p, td);
    if (packet_close(v, at))
        return 1;
    for (size_t k = 0; k < 2 * t->nbefore; k++) {
        int begin = k < t->nbefore;
        const struct pf_before *b = begin ? &t->before[t->nbefore - 1 - k]
                                          : &t->before[k - t->nbefore];
        uint64_t iid;
        at = packet_open(v, t);
        ptc_pb_uint(&v->p, TP_SEQ_FLAGS, SEQ_NEEDS);
        ptc_pb_uint(&v->p, TP_CLOCK_ID, CLOCK_BOOTTIME);
        ptc_pb_uint(&v->p, TP_TIMESTAMP, begin ? t->before_at : b->end);
        if (begin && name_iid(v, t, b->func, &iid))
            return 1;
        size_t te = ptc_pb_open(&v->p, TP_TRACK_EVENT);
        ptc_pb_uint(&v->p, TE_TYPE, begin ? SLICE_BEGIN : SLICE_END);
        ptc_pb_uint(&v->p, TE_TRACK_UUID, before_uuid(t->pid, t->tid));
        if (begin) {
            ptc_pb_uint(&v->p, TE_NAME_IID, iid);
            size_t da = ptc_pb_open(&v->p, TE_DEBUG);
            ptc_pb_str(&v->p, DA_NAME, "entered_before_trace");
            ptc_pb_uint(&v->p, DA_BOOL, 1);
            ptc_pb_close(&v->p, da);
        } else {
            how_notes(v, b->how);
        }
        ptc_pb_close(&v->p, te);
        if (packet_close(v, at))
            return 1;
    }
    t->nbefore = 0;
    return 0;
}

static int pf_thread_end(void *view, uint32_t pid, uint32_t tid, uintptr_t *user)
{
    (void)pid;
    (void)tid;
    struct pf_thread *t = (struct pf_thread *)*user;
    return t ? before_track(view, t) : 0;
}

/* Names a thread got after its first event: its track again, with the name it ended with. */
static int pf_end(void *view, const struct ptc_out_info *info)
{
    struct pf_view *v = view;
    (void)info;
    for (struct pf_thread *t = v->threads; t; t = t->next) {
        if (before_track(v, t)) /* a thread the session left open */
            return 1;
        const char *tn = ptc_session_thread_name(v->s, t->pid, t->tid);
        if (!tn || !*tn || (t->name && !strcmp(t->name, tn)))
            continue;
        size_t at = packet_open(v, t);
        thread_descriptor(v, t, tn);
        if (packet_close(v, at))
            return 1;
    }
    return v->w->err || v->w->over_limit ? 1 : 0;
}

static void pf_free(void *view)
{
    struct pf_view *v = view;
    struct pf_thread *t = v->threads;
    while (t) {
        struct pf_thread *n = t->next;
        free(t->interned);
        free(t->name);
        free(t->before);
        free(t);
        t = n;
    }
    ptc_pb_free(&v->p);
    free(v->pids);
    free(v);
}

static const struct ptc_output_ops perfetto_ops = {
    .name = "perfetto",
    .begin = pf_begin,
    .thread_start = pf_thread_start,
    .enter = pf_enter,
    .ret = pf_ret,
    .gap = pf_gap,
    .fork = pf_fork,
    .mark = pf_mark,
    .thread_end = pf_thread_end,
    .end = pf_end,
    .free = pf_free,
};

void *ptc_view_perfetto(const struct ptc_view_opts *o, const struct ptc_output_ops **ops)
{
    struct pf_view *v = calloc(1, sizeof(*v));
    if (!v)
        return NULL;
    v->w = o->out;
    v->s = o->s;
    v->tail = &v->threads;
    ptc_pb_init(&v->p);
    *ops = &perfetto_ops;
    return v;
}
