/* speedscope's own file format (https://www.speedscope.app/file-format-schema.json): one
 * "evented" profile per thread, named after the thread, whose events open ("O") and close
 * ("C") frames at times on the trace's scale; the frames (name, file, line) are shared by
 * all profiles. speedscope reads this format in one pass, where it sorts Chrome JSON's
 * events first (its import of the chrome export grows with the square of the events).
 *
 * A profile's events must be one thread's, in order, properly nested, but the decoder hands
 * threads out interleaved: each thread's events are kept in a buffer of its own, which spills
 * into one temporary file in chunks, and the profiles are written at the end, thread after
 * thread. Memory grows with the threads alive, never with the trace's length.
 *
 * A call entered before its thread's window began (an attach, a snapshot) returns without an
 * enter: every event of its thread before its return happened inside it, so its "O" goes at
 * the head of the profile at the window's start (outermost first), known only when the thread
 * ends. Calls still open at the end are closed there by the driver; the profile's name says
 * how many. speedscope has no instant events: marks, gaps and forks are counted in the
 * file's "ptcall" object, not shown. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "views.h"

#define SPILL_AT (256u << 10) /* a thread's buffer goes to the spill file past this */

struct ss_chunk {
    uint64_t off, len;
};

struct ss_thread {
    uint32_t pid, tid;
    struct ptc_wbuf buf;      /* ",{...}" per event, in memory until spilled */
    int have_buf;
    struct ss_chunk *chunks;
    size_t nchunks, capchunks;
    uint64_t nevents;
    uint32_t *before;         /* frames of calls entered before the window, innermost first */
    size_t nbefore, capbefore;
    uint64_t before_at;       /* the window's start */
    uint64_t first, last;     /* times of its first and last event */
    int have_time;
    uint64_t still_open;
    struct ss_thread *next;
};

struct ss_view {
    struct ptc_wbuf *w;
    const struct ptc_session *s;
    int ns;
    uint32_t *frame_of;       /* per function: its frame index + 1 (0: no frame yet) */
    uint32_t nfuncs;
    uint32_t *frames;         /* per frame: its function */
    uint32_t nframes, capframes;
    struct ss_thread *threads, **tail;
    FILE *spill;
    uint64_t spilled;
    uint64_t marks, gaps, forks, before_calls, still_open;
};

static int frame_index(struct ss_view *v, uint32_t func, uint32_t *idx)
{
    if (func >= v->nfuncs) { /* functions are numbered densely: grow to the one asked */
        uint32_t n = v->nfuncs ? v->nfuncs : 256;
        while (n <= func)
            n *= 2;
        uint32_t *m = realloc(v->frame_of, (size_t)n * sizeof(*m));
        if (!m)
            return 1;
        memset(m + v->nfuncs, 0, (size_t)(n - v->nfuncs) * sizeof(*m));
        v->frame_of = m;
        v->nfuncs = n;
    }
    if (!v->frame_of[func]) {
        if (v->nframes == v->capframes) {
            uint32_t nc = v->capframes ? v->capframes * 2 : 256;
            uint32_t *f = realloc(v->frames, (size_t)nc * sizeof(*f));
            if (!f)
                return 1;
            v->frames = f;
            v->capframes = nc;
        }
        v->frames[v->nframes++] = func;
        v->frame_of[func] = v->nframes;
    }
    *idx = v->frame_of[func] - 1;
    return 0;
}

static int ss_begin(void *view, const struct ptc_out_info *info)
{
    struct ss_view *v = view;
    if (!info->timed) /* an evented profile is times: refuse before writing anything */
        return PTC_VIEW_E_UNTIMED;
    v->ns = info->ns;
    return 0;
}

static int ss_thread_start(void *view, const struct ptc_out_event *e)
{
    struct ss_view *v = view;
    struct ss_thread *t = calloc(1, sizeof(*t));
    if (!t)
        return 1;
    t->pid = e->pid;
    t->tid = e->tid;
    *v->tail = t;
    v->tail = &t->next;
    *e->thread_user = (uintptr_t)t;
    return 0;
}

/* Moves what t's buffer holds to the end of the spill file. */
static int spill(struct ss_view *v, struct ss_thread *t)
{
    if (!t->buf.len)
        return 0;
    if (!v->spill && !(v->spill = tmpfile()))
        return 1;
    if (t->nchunks == t->capchunks) {
        size_t nc = t->capchunks ? t->capchunks * 2 : 8;
        struct ss_chunk *c = realloc(t->chunks, nc * sizeof(*c));
        if (!c)
            return 1;
        t->chunks = c;
        t->capchunks = nc;
    }
    if (fwrite(t->buf.buf, 1, t->buf.len, v->spill) != t->buf.len)
        return 1;
    t->chunks[t->nchunks].off = v->spilled;
    t->chunks[t->nchunks].len = t->buf.len;
    t->nchunks++;
    v->spilled += t->buf.len;
    t->buf.len = 0;
    return 0;
}

static void see(struct ss_thread *t, uint64_t at)
{
    if (!t->have_time || at < t->first)
        t->first = at;
    if (!t->have_time || at > t->last)
        t->last = at;
    t->have_time = 1;
}

static int put_event(struct ss_view *v, const struct ptc_out_event *e, const char *type,
                     uint64_t at)
{
    struct ss_thread *t = (struct ss_thread *)*e->thread_user;
    uint32_t idx;
    if (!t || frame_index(v, e->func, &idx))
        return 1;
    if (!t->have_buf) {
        if (ptc_wbuf_init(&t->buf, -1, 8192))
            return 1;
        t->have_buf = 1;
    }
    struct ptc_wbuf *b = &t->buf;
    ptc_wb_str(b, type);
    ptc_wb_u64(b, idx);
    ptc_wb_str(b, ",\"at\":");
    ptc_wb_u64(b, at);
    ptc_wb_char(b, '}');
    if (b->err)
        return 1;
    see(t, at);
    t->nevents++;
    return b->len >= SPILL_AT ? spill(v, t) : 0;
}

static int ss_enter(void *view, const struct ptc_out_event *e)
{
    return put_event(view, e, ",{\"type\":\"O\",\"frame\":", e->time);
}

static int ss_ret(void *view, const struct ptc_out_event *e)
{
    struct ss_view *v = view;
    struct ss_thread *t = (struct ss_thread *)*e->thread_user;
    if (!t)
        return 1;
    if (e->before) {
        uint32_t idx;
        if (frame_index(v, e->func, &idx))
            return 1;
        if (t->nbefore == t->capbefore) {
            size_t nc = t->capbefore ? t->capbefore * 2 : 8;
            uint32_t *b = realloc(t->before, nc * sizeof(*b));
            if (!b)
                return 1;
            t->before = b;
            t->capbefore = nc;
        }
        t->before[t->nbefore++] = idx;
        t->before_at = e->start;
        v->before_calls++;
        see(t, e->start);
    }
    if (e->how == PTC_RET_END) {
        t->still_open++;
        v->still_open++;
    }
    return put_event(v, e, ",{\"type\":\"C\",\"frame\":", e->time);
}

static int ss_gap(void *view, const struct ptc_out_event *e)
{
    (void)e;
    ((struct ss_view *)view)->gaps++;
    return 0;
}

static int ss_fork(void *view, const struct ptc_out_event *e)
{
    if (e->kind == PTC_CALL_FORK || e->kind == PTC_CALL_SPAWN)
        ((struct ss_view *)view)->forks++;
    return 0;
}

static int ss_mark(void *view, const struct ptc_out_event *e)
{
    (void)e;
    ((struct ss_view *)view)->marks++;
    return 0;
}

/* A thread that ended keeps only its spilled chunks: its buffer's memory goes back. */
static int ss_thread_end(void *view, uint32_t pid, uint32_t tid, uintptr_t *user)
{
    struct ss_view *v = view;
    struct ss_thread *t = (struct ss_thread *)*user;
    (void)pid;
    (void)tid;
    if (!t || !t->have_buf)
        return 0;
    int r = spill(v, t);
    ptc_wbuf_free(&t->buf);
    t->have_buf = 0;
    return r;
}

static void put_count_note(struct ptc_wbuf *w, uint64_t n, const char *one, const char *many)
{
    ptc_wb_str(w, " [");
    ptc_wb_u64(w, n);
    ptc_wb_str(w, n == 1 ? one : many);
    ptc_wb_char(w, ']');
}

/* "NAME (pid P, tid T)", and what a viewer should know about the thread's calls. */
static void put_profile_name(struct ss_view *v, const struct ss_thread *t)
{
    struct ptc_wbuf *w = v->w;
    const char *tn = ptc_session_thread_name(v->s, t->pid, t->tid);
    char ids[64];
    ptc_wb_char(w, '"');
    if (tn && *tn) {
        ptc_wb_json_chars(w, tn);
    } else {
        snprintf(ids, sizeof(ids), "thread %u", t->tid);
        ptc_wb_str(w, ids);
    }
    snprintf(ids, sizeof(ids), " (pid %u, tid %u)", t->pid, t->tid);
    ptc_wb_str(w, ids);
    if (t->nbefore)
        put_count_note(w, t->nbefore, " call entered before the trace began: opened at its start",
                       " calls entered before the trace began: opened at its start");
    if (t->still_open)
        put_count_note(w, t->still_open, " call still open at the end: closed there",
                       " calls still open at the end: closed there");
    ptc_wb_char(w, '"');
}

/* The events of t: the opens of calls entered before its window (outermost first), then
 * what was spilled, then what its buffer holds; each event written as ",{...}", the first
 * comma left out. */
static int put_events(struct ss_view *v, struct ss_thread *t)
{
    struct ptc_wbuf *w = v->w;
    int skip = 1;
    for (size_t i = t->nbefore; i-- > 0;) {
        ptc_wb_str(w, skip ? "{\"type\":\"O\",\"frame\":" : ",{\"type\":\"O\",\"frame\":");
        skip = 0;
        ptc_wb_u64(w, t->before[i]);
        ptc_wb_str(w, ",\"at\":");
        ptc_wb_u64(w, t->before_at);
        ptc_wb_char(w, '}');
    }
    if (t->nchunks && fflush(v->spill))
        return 1;
    char tmp[65536];
    for (size_t i = 0; i < t->nchunks; i++) {
        uint64_t off = t->chunks[i].off, left = t->chunks[i].len;
        while (left) {
            size_t k = left < sizeof(tmp) ? (size_t)left : sizeof(tmp);
            ssize_t r = pread(fileno(v->spill), tmp, k, (off_t)off);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                return 1;
            ptc_wb_put(w, tmp + skip, (size_t)r - (size_t)skip);
            skip = 0;
            off += (uint64_t)r;
            left -= (uint64_t)r;
        }
    }
    if (t->have_buf && t->buf.len)
        ptc_wb_put(w, t->buf.buf + skip, t->buf.len - (size_t)skip);
    return 0;
}

static int ss_end(void *view, const struct ptc_out_info *info)
{
    struct ss_view *v = view;
    struct ptc_wbuf *w = v->w;
    ptc_wb_str(w, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n"
                  "\"exporter\":\"ptcall export --format speedscope\",\"name\":");
    ptc_wb_json_str(w, ptc_out_base(info->trace));
    ptc_wb_str(w, ",\"activeProfileIndex\":0,\n\"profiles\":[");
    int first = 1;
    for (struct ss_thread *t = v->threads; t; t = t->next) {
        if (!t->nevents)
            continue;
        ptc_wb_str(w, first ? "\n{\"type\":\"evented\",\"name\":" : ",\n{\"type\":\"evented\",\"name\":");
        first = 0;
        put_profile_name(v, t);
        ptc_wb_str(w, ",\"unit\":\"");
        ptc_wb_str(w, v->ns ? "nanoseconds" : "none");
        ptc_wb_str(w, "\",\"startValue\":");
        ptc_wb_u64(w, t->first);
        ptc_wb_str(w, ",\"endValue\":");
        ptc_wb_u64(w, t->last);
        ptc_wb_str(w, ",\"events\":[\n");
        if (put_events(v, t))
            return 1;
        ptc_wb_str(w, "]}");
        if (w->err || w->over_limit)
            return 1;
    }
    ptc_wb_str(w, "],\n\"shared\":{\"frames\":[");
    for (uint32_t i = 0; i < v->nframes; i++) {
        const struct ptc_func_info *fi = ptc_session_func(v->s, v->frames[i]);
        ptc_wb_str(w, i ? ",\n{\"name\":" : "\n{\"name\":");
        ptc_wb_json_str(w, fi ? fi->name : "?");
        if (fi && fi->file && *fi->file) {
            ptc_wb_str(w, ",\"file\":");
            ptc_wb_json_str(w, fi->file);
            if (fi->line) {
                ptc_wb_str(w, ",\"line\":");
                ptc_wb_u64(w, fi->line);
            }
        }
        ptc_wb_char(w, '}');
    }
    /* what speedscope does not show, for whoever reads the file */
    struct ptc_totals tot;
    ptc_session_totals(info->s, &tot);
    ptc_wb_str(w, "]},\n\"ptcall\":{\"format_version\":1,\"trace\":");
    ptc_wb_json_str(w, info->trace);
    ptc_wb_str(w, ",\"time_unit\":\"");
    ptc_wb_str(w, v->ns ? "ns" : "ticks");
    ptc_wb_str(w, "\",\"calls\":");
    ptc_wb_u64(w, info->shown_calls);
    ptc_wb_str(w, ",\"marks_not_shown\":");
    ptc_wb_u64(w, v->marks);
    ptc_wb_str(w, ",\"gaps\":");
    ptc_wb_u64(w, tot.gaps);
    ptc_wb_str(w, ",\"lost_events\":");
    ptc_wb_u64(w, tot.lost_events);
    ptc_wb_str(w, ",\"forks_and_spawns\":");
    ptc_wb_u64(w, v->forks);
    ptc_wb_str(w, ",\"entered_before\":");
    ptc_wb_u64(w, v->before_calls);
    ptc_wb_str(w, ",\"still_open\":");
    ptc_wb_u64(w, v->still_open);
    ptc_wb_str(w, ",\"complete\":");
    ptc_wb_str(w, ptc_totals_complete(&tot) && !tot.gaps && !tot.lost_events ? "true" : "false");
    ptc_wb_str(w, ",\"filtered\":");
    ptc_wb_str(w, info->filtered ? "true" : "false");
    ptc_wb_str(w, "}}\n");
    return w->err || w->over_limit ? 1 : 0;
}

static void ss_free(void *view)
{
    struct ss_view *v = view;
    struct ss_thread *t = v->threads;
    while (t) {
        struct ss_thread *n = t->next;
        if (t->have_buf)
            ptc_wbuf_free(&t->buf);
        free(t->chunks);
        free(t->before);
        free(t);
        t = n;
    }
    if (v->spill)
        fclose(v->spill);
    free(v->frame_of);
    free(v->frames);
    free(v);
}

static const struct ptc_output_ops speedscope_ops = {
    .name = "speedscope",
    .begin = ss_begin,
    .thread_start = ss_thread_start,
    .enter = ss_enter,
    .ret = ss_ret,
    .gap = ss_gap,
    .fork = ss_fork,
    .mark = ss_mark,
    .thread_end = ss_thread_end,
    .end = ss_end,
    .free = ss_free,
};

void *ptc_view_speedscope(const struct ptc_view_opts *o, const struct ptc_output_ops **ops)
{
    struct ss_view *v = calloc(1, sizeof(*v));
    if (!v)
        return NULL;
    v->w = o->out;
    v->s = o->s;
    v->tail = &v->threads;
    *ops = &speedscope_ops;
    return v;
}
