/* Traces that do not hold a thread's whole life: an attach (`record --pid`) or a flight
 * recorder's snapshot (docs/trace-format.md 4.17, 4.19). The WINDOW chunk gives a thread's
 * span, the SNAPSHOT chunk why and where the snapshot was taken; stack.c starts calls
 * entered before a window at its start and closes frames open at its end. */
#include <stdlib.h>
#include <string.h>

#include "dec_tables.h"
#include "dec_window.h"

int ptc_window_of(const struct thread *t)
{
    return t->has_window || (t->proc && (t->proc->how == PTC_PROC_ATTACH ||
                                         t->proc->how == PTC_PROC_SNAPSHOT));
}

void ptc_window_set_end(struct thread *t, uint64_t tsc)
{
    /* a window's own end (an open end) wins over the chunks that come after it */
    if (t->has_window && (t->win.flags & PTC_WINDOW_F_OPEN_END) && t->win.tsc_to)
        tsc = t->win.tsc_to;
    t->end_tsc = tsc;
    t->has_end = 1;
}

int ptc_window_chunk(struct ptc_session *s, uint32_t pid, uint32_t tid, const void *payload,
                     size_t size)
{
    struct ptc_window w;
    if (size < sizeof(w))
        return ptc_session_set_error(s, PTC_E_CORRUPT, "WINDOW chunk of thread %u/%u is %zu "
                                     "bytes, shorter than its %zu-byte payload", pid, tid, size,
                                     sizeof(w));
    memcpy(&w, payload, sizeof(w));
    if (w.tsc_to && w.tsc_to < w.tsc_from)
        return ptc_session_set_error(s, PTC_E_CORRUPT, "WINDOW chunk of thread %u/%u ends "
                                     "(tsc %llu) before it begins (tsc %llu)", pid, tid,
                                     (unsigned long long)w.tsc_to,
                                     (unsigned long long)w.tsc_from);
    struct thread *t = ptc_thread_get(s, pid, tid);
    if (!t)
        return ptc_nomem(s);
    t->win = w;
    t->has_window = 1;
    if ((w.flags & PTC_WINDOW_F_OPEN_END) && w.tsc_to) {
        t->end_tsc = w.tsc_to;
        t->has_end = 1;
    }
    return 0;
}

int ptc_snapshot_chunk(struct ptc_session *s, uint32_t pid, const void *payload, size_t size)
{
    struct ptc_snapshot h;
    if (size < sizeof(h))
        return ptc_session_set_error(s, PTC_E_CORRUPT, "SNAPSHOT chunk of pid %u is %zu bytes, "
                                     "shorter than its %zu-byte header", pid, size, sizeof(h));
    memcpy(&h, payload, sizeof(h));
    const char *why = (const char *)payload + sizeof(h);
    size_t wn = size - sizeof(h);
    if (!wn || !memchr(why, 0, wn))
        return ptc_session_set_error(s, PTC_E_CORRUPT, "SNAPSHOT chunk of pid %u: its reason "
                                     "does not end with a NUL", pid);
    if (s->nshots == s->capshots) {
        uint32_t cap = s->capshots ? 2 * s->capshots : 4;
        struct ptc_snapshot_info *v = realloc(s->shots, (size_t)cap * sizeof(*v));
        if (!v)
            return ptc_nomem(s);
        s->shots = v;
        s->capshots = cap;
    }
    char *w = strdup(why);
    if (!w)
        return ptc_nomem(s);
    /* time is made at query time: the process's time base may come after this chunk */
    s->shots[s->nshots++] = (struct ptc_snapshot_info){.pid = pid, .kind = h.kind, .tid = h.tid,
                                                       .signo = h.signo, .addr = h.addr,
                                                       .time = h.tsc, .why = w};
    return 0;
}

void ptc_window_free(struct ptc_session *s)
{
    for (uint32_t i = 0; i < s->nshots; i++)
        free((char *)s->shots[i].why);
    free(s->shots);
    s->shots = NULL;
    s->nshots = s->capshots = 0;
}

uint32_t ptc_session_num_snapshots(const struct ptc_session *s) { return s ? s->nshots : 0; }

int ptc_session_snapshot(const struct ptc_session *s, uint32_t i, struct ptc_snapshot_info *out)
{
    if (!s || !out || i >= s->nshots)
        return -PTC_E_ARG;
    *out = s->shots[i];
    const struct proc *p = ptc_proc_find(s, out->pid);
    out->has_time = out->time != 0 && p && (s->timed_events || (s->file_flags & PTC_FILE_F_TIMED));
    out->time = out->has_time ? ptc_event_time(s, p, out->time) : 0;
    return 0;
}

const char *ptc_snapshot_kind_name(uint32_t kind)
{
    switch (kind) {
    case PTC_SNAP_API:
        return "API";
    case PTC_SNAP_EXTERNAL:
        return "external";
    case PTC_SNAP_CRASH:
        return "crash";
    case PTC_SNAP_TRIGGER:
        return "trigger";
    }
    return "unknown";
}

void ptc_session_windows(const struct ptc_session *s,
                         void (*fn)(void *ctx, const struct ptc_thread_window *w), void *ctx)
{
    int timed = s->timed_events != 0 || (s->file_flags & PTC_FILE_F_TIMED);
    PTC_HTABLE_EACH(&s->threads, struct thread, t) {
        int windowed = ptc_window_of(t);
        if (!t->proc || (!windowed && !t->before && !t->still_open))
            continue;
        struct ptc_thread_window w = {.pid = t->pid, .tid = t->tid, .windowed = windowed,
                                      .has_chunk = t->has_window,
                                      .entered_before = t->before,
                                      .still_open = t->still_open};
        uint64_t from = t->first_tsc, to = t->last;
        if (t->has_window) {
            w.flags = t->win.flags;
            w.lost_before = t->win.lost_before;
            from = t->win.tsc_from;
            if (t->win.tsc_to)
                to = t->win.tsc_to;
        } else if (t->has_end && t->end_tsc > to) {
            to = t->end_tsc;
        }
        w.has_time = timed && (t->has_window || t->has_first);
        if (w.has_time) {
            w.from = ptc_event_time(s, t->proc, from);
            w.to = ptc_event_time(s, t->proc, to >= from ? to : from);
        }
        fn(ctx, &w);
    }
}
