/* Chunk dispatch: every CRC-checked chunk takes its place in its (pid, tid) sequence, then
 * goes to a registered handler (Intel PT) or to the handler of its type here
 * (docs/trace-format.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dec_blocking.h"
#include "dec_budget.h"
#include "dec_chunk.h"
#include "dec_fork.h"
#include "dec_modules.h"
#include "dec_par.h"
#include "dec_soft.h"
#include "dec_stack.h"
#include "dec_tables.h"
#include "dec_window.h"

/* Copies the chunk's fixed-size payload header into out. Returns 0, or -PTC_E_CORRUPT
 * when the payload is shorter than n. */
static int take(struct ptc_session *s, const struct ptc_chunk *c, void *out, size_t n,
                const char *what)
{
    if (c->h.payload_size >= n) {
        memcpy(out, c->payload, n);
        return 0;
    }
    return ptc_session_set_error(s, PTC_E_CORRUPT,
                                 "%s is corrupt: %s chunk %llu at byte %llu has %u payload "
                                 "bytes, fewer than the %zu it needs",
                                 s->src_name, what, (unsigned long long)c->index,
                                 (unsigned long long)c->offset, c->h.payload_size, n);
}

/* The process the chunk belongs to, added if new. Returns 0 or -PTC_E_NOMEM. */
static int chunk_proc(struct ptc_session *s, const struct ptc_chunk *c, struct proc **p)
{
    *p = ptc_proc_get(s, c->h.pid);
    return *p ? 0 : ptc_nomem(s);
}

/* A new life of a thread (tid reuse, or its process's): the old one ends first. */
static void thread_restart(struct ptc_session *s, struct thread *t)
{
    if (t->waiting)
        ptc_fork_give_up(s, t);
    if (t->started)
        ptc_thread_end(s, t);
    t->seq_seen = 0;
    t->next_seq = 0;
    t->started = 0;
    t->ended = 0;
    t->exit_seen = 0;
}

/* A new life of a process (exec, or pid reuse): its old threads end, its tables reset. */
static void proc_reset(struct ptc_session *s, struct proc *p)
{
    for (struct thread *t = p->threads; t; t = t->pnext)
        thread_restart(s, t);
    ptc_proc_drop_modules(p);
    p->seq_seen = 0;
    p->next_seq = 0;
    p->ended = 0;
}

/* seq continuity of the chunk's (pid, tid) stream; a thread stream's gap is fed as a GAP. */
static int check_seq(struct ptc_session *s, const struct ptc_chunk *c)
{
    uint32_t seq = c->h.seq;
    uint32_t *next;
    int *seen;
    struct thread *t = NULL;
    if (c->h.tid == 0) {
        struct proc *p;
        int e = chunk_proc(s, c, &p);
        if (e)
            return e;
        if (c->h.type == PTC_CHUNK_PROCESS && p->seq_seen && seq == 0)
            proc_reset(s, p);
        next = &p->next_seq;
        seen = &p->seq_seen;
    } else {
        t = ptc_thread_get(s, c->h.pid, c->h.tid);
        if (!t)
            return ptc_nomem(s);
        if (c->h.type == PTC_CHUNK_THREAD && t->seq_seen && seq == 0 &&
            c->h.payload_size >= 4 && !memcmp(c->payload, &(uint32_t){PTC_THREAD_START}, 4))
            thread_restart(s, t); /* tid reuse: a new thread with the same id */
        next = &t->next_seq;
        seen = &t->seq_seen;
    }
    uint32_t want = *seen ? *next : 0;
    *seen = 1;
    *next = seq + 1;
    if (seq == want)
        return 0;
    uint64_t missing = seq > want ? (uint64_t)(seq - want) : 0;
    if (!t && !ptc_par_primary(s))
        return 0; /* a process stream's gap: counted by worker 0 */
    s->tot.missing_chunks += missing ? missing : 1;
    if (t) {
        struct ptc_ev ev = {.type = PTC_EV_GAP};
        return ptc_thread_feed(s, t, &ev, 1);
    }
    s->tot.gaps++;
    return 0;
}

static const char *payload_str(const struct ptc_chunk *c, size_t at)
{
    if (at >= c->h.payload_size)
        return "";
    const char *p = (const char *)c->payload + at;
    return memchr(p, 0, c->h.payload_size - at) ? p : "";
}

/* Replaces *slot with a copy of str (names of processes and threads, for views). */
static int keep_str(struct ptc_session *s, char **slot, const char *str)
{
    if (*slot && !strcmp(*slot, str))
        return 0;
    char *c = strdup(str);
    if (!c)
        return ptc_nomem(s);
    free(*slot);
    *slot = c;
    return 0;
}

/* A chunk type no handler and no case here takes. */
static int on_unknown(struct ptc_session *s, const struct ptc_chunk *c)
{
    uint16_t type = c->h.type;
    if (c->h.flags & PTC_CHUNK_F_OPTIONAL) {
        if (c->h.tid || ptc_par_primary(s))
            s->tot.skipped_chunks++;
        return 0;
    }
    if (type >= PTC_CHUNK_PT_FIRST && type <= PTC_CHUNK_PT_LAST)
        return ptc_session_set_error(s, PTC_E_UNSUPPORTED,
                                     "%s holds Intel PT data (chunk %llu, type %u) and this "
                                     "ptcall was built without the Intel PT decoder",
                                     s->src_name, (unsigned long long)c->index, type);
    return ptc_session_set_error(s, PTC_E_UNSUPPORTED,
                                 "%s: chunk %llu at byte %llu has type %u, which this "
                                 "ptcall does not know and which is marked required",
                                 s->src_name, (unsigned long long)c->index,
                                 (unsigned long long)c->offset, type);
}

/* RECORD_INFO's command line, kept for ptc_session_recording(): as many of its argc strings
 * as the payload holds whole (the figures do not depend on it, so a short list is no error). */
static int keep_argv(struct ptc_session *s, const struct ptc_chunk *c,
                     const struct ptc_record_info *ri)
{
    size_t at = sizeof(*ri), size = c->h.payload_size;
    uint32_t n = 0;
    for (size_t k = at; n < ri->argc && k < size; n++) {
        const char *p = memchr((const char *)c->payload + k, 0, size - k);
        if (!p)
            break;
        k = (size_t)(p - (const char *)c->payload) + 1;
    }
    char **v = calloc((size_t)n + 1, sizeof(*v));
    if (!v)
        return ptc_nomem(s);
    for (uint32_t i = 0; i < n; i++) {
        v[i] = strdup((const char *)c->payload + at);
        if (!v[i]) {
            for (uint32_t j = 0; j < i; j++)
                free(v[j]);
            free(v);
            return ptc_nomem(s);
        }
        at += strlen(v[i]) + 1;
    }
    for (uint32_t i = 0; i < s->argc; i++)
        free(s->argv[i]);
    free(s->argv);
    s->argv = v;
    s->argc = n;
    s->has_info = 1;
    return 0;
}

static int on_record_info(struct ptc_session *s, const struct ptc_chunk *c)
{
    struct ptc_record_info ri;
    int e = take(s, c, &ri, sizeof(ri), "RECORD_INFO");
    if (e)
        return e;
    s->backend = ri.backend;
    s->file_flags |= ri.flags;
    return keep_argv(s, c, &ri);
}

static int on_process(struct ptc_session *s, const struct ptc_chunk *c)
{
    struct ptc_process pr;
    struct proc *p;
    int e = take(s, c, &pr, sizeof(pr), "PROCESS");
    if (e || (e = chunk_proc(s, c, &p)))
        return e;
    p->have_process = 1;
    if (!s->have_origin) {
        s->have_origin = 1;
        s->origin_pid = c->h.pid;
        s->origin_tsc = pr.tsc;
    }
    p->ppid = pr.ppid;
    p->how = pr.how;
    if ((e = keep_str(s, &p->exe, payload_str(c, sizeof(pr)))))
        return e;
    p->parent_tid = pr.parent_tid;
    if (pr.how == PTC_PROC_FORK) {
        struct proc *pp = ptc_proc_find(s, pr.ppid);
        if (pp && pp != p) {
            /* a child forked after a demotion keeps it, and its calls in flight (4.20) */
            p->governor_tsc = pp->governor_tsc;
            return ptc_proc_inherit_modules(s, p, pp);
        }
    }
    return 0;
}

static int on_timebase(struct ptc_session *s, const struct ptc_chunk *c)
{
    struct ptc_timebase tb;
    struct proc *p;
    int e = take(s, c, &tb, sizeof(tb), "TIMEBASE");
    if (e)
        return e;
    if (tb.time_shift > 63)
        return ptc_session_set_error(s, PTC_E_CORRUPT,
                                     "%s is corrupt: TIMEBASE chunk %llu has shift %u",
                                     s->src_name, (unsigned long long)c->index, tb.time_shift);
    if ((e = chunk_proc(s, c, &p)))
        return e;
    p->tb = tb;
    p->has_tb = 1;
    /* the ticker clock: no interval is known to better than its period */
    if (tb.source == PTC_TIME_TICKER && tb.reserved1 > s->resolution_ns)
        s->resolution_ns = tb.reserved1;
    if (!s->has_tb) {
        s->tb = tb;
        s->has_tb = 1;
    }
    return 0;
}

/* A payload parser's error e, with where the chunk is: the parsers know only the payload. */
static int say_where(struct ptc_session *s, const struct ptc_chunk *c, int e)
{
    if (e == -PTC_E_CORRUPT) {
        char tmp[sizeof(s->msg)];
        snprintf(tmp, sizeof(tmp), "%s", s->msg);
        ptc_session_set_error(s, PTC_E_CORRUPT, "%s is corrupt: chunk %llu at byte %llu: %s",
                              s->src_name, (unsigned long long)c->index,
                              (unsigned long long)c->offset, tmp);
    }
    return e;
}

static int on_module(struct ptc_session *s, const struct ptc_chunk *c)
{
    return say_where(s, c, ptc_session_add_module(s, c->h.pid, c->payload, c->h.payload_size));
}

static int on_module_armed(struct ptc_session *s, const struct ptc_chunk *c)
{
    return say_where(s, c, ptc_module_armed(s, c->h.pid, c->payload, c->h.payload_size));
}

static int on_module_counted(struct ptc_session *s, const struct ptc_chunk *c)
{
    return say_where(s, c, ptc_module_counted(s, c->h.pid, c->payload, c->h.payload_size));
}

static int on_module_blocking(struct ptc_session *s, const struct ptc_chunk *c)
{
    return say_where(s, c, ptc_module_blocking(s, c->h.pid, c->payload, c->h.payload_size));
}

static int on_budget(struct ptc_session *s, const struct ptc_chunk *c)
{
    return say_where(s, c, ptc_budget_chunk(s, c->h.pid, c->payload, c->h.payload_size));
}

const char *ptc_session_mark_label(const struct ptc_session *s, uint64_t id)
{
    return s && id < s->nmarks ? s->marks[id].label : "";
}

uint32_t ptc_session_num_mark_labels(const struct ptc_session *s) { return s ? s->nmarks : 0; }

int ptc_session_mark_stats(const struct ptc_session *s, uint32_t id, struct ptc_mark_stats *out)
{
    if (!s || id >= s->nmarks)
        return -PTC_E_ARG;
    out->label = s->marks[id].label;
    out->marks = s->marks[id].marks;
    out->counted_calls = s->marks[id].counted_calls;
    out->segments = s->marks[id].segments;
    out->segment_total = s->marks[id].seg_total;
    out->segment_min = s->marks[id].seg_min;
    out->segment_max = s->marks[id].seg_max;
    return 0;
}

/* A MARK chunk (ptcall_mark in a trace): the label counted, a PTC_EV_MARK fed to its thread,
 * which follows the thread's events written before it in the file. */
static int mark_chunk(struct ptc_session *s, uint32_t pid, const void *payload, size_t size)
{
    struct ptc_mark m;
    if (size < sizeof(m))
        return ptc_session_set_error(s, PTC_E_CORRUPT, "MARK chunk of pid %u is %zu bytes, shorter than its header", pid,
                              size);
    memcpy(&m, payload, sizeof(m));
    const char *label = (const char *)payload + sizeof(m);
    if (!m.label_size || sizeof(m) + (uint64_t)m.label_size != size || label[m.label_size - 1])
        return ptc_session_set_error(s, PTC_E_CORRUPT, "MARK chunk of pid %u: a %u-byte label does not fill its %zu "
                              "bytes", pid, m.label_size, size);
    struct thread *t = ptc_thread_find(s, pid, m.tid);
    /* parallel decode: the worker that decodes the thread's events places (and counts) the
     * mark; a mark of a thread no worker decodes is worker 0's */
    if (s->par_n > 1) {
        int own = t ? ptc_par_owns(s, pid, m.tid) : ptc_par_primary(s);
        if (own <= 0)
            return own;
    }
    uint32_t id;
    int r = ptc_mark_add(s, label, &(struct mark_label){.marks = 1}, &id);
    if (r || !t)
        return r; /* a thread that recorded nothing before its mark: counted, not placed */
    /* untimed, the thread's last time stays what its events said */
    struct ptc_ev ev = {.type = PTC_EV_MARK, .has_time = (s->file_flags & PTC_FILE_F_TIMED) != 0,
                        .tsc = m.tsc, .count = id};
    return ptc_thread_feed(s, t, &ev, 1);
}

static int on_mark(struct ptc_session *s, const struct ptc_chunk *c)
{
    return say_where(s, c, mark_chunk(s, c->h.pid, c->payload, c->h.payload_size));
}

/* A SPAWN chunk (posix_spawn in a trace): a PTC_EV_SPAWN fed to its thread, placed as a mark
 * is. The child is a new program: it starts from an empty stack, and its own PROCESS chunk
 * (how START) names this process as its parent. */
static int spawn_chunk(struct ptc_session *s, uint32_t pid, const void *payload, size_t size)
{
    struct ptc_spawn sp;
    if (size < sizeof(sp))
        return ptc_session_set_error(s, PTC_E_CORRUPT,
                                     "SPAWN chunk of pid %u is %zu bytes, shorter than its header",
                                     pid, size);
    memcpy(&sp, payload, sizeof(sp));
    const char *path = (const char *)payload + sizeof(sp);
    if (!sp.path_size || sp.path_size > 4096 || sizeof(sp) + (uint64_t)sp.path_size != size ||
        path[sp.path_size - 1])
        return ptc_session_set_error(s, PTC_E_CORRUPT,
                                     "SPAWN chunk of pid %u: a %u-byte path does not fill its %zu "
                                     "bytes", pid, sp.path_size, size);
    if (!sp.child_pid || sp.child_pid == pid)
        return ptc_session_set_error(s, PTC_E_CORRUPT, "SPAWN chunk of pid %u names child pid %u",
                                     pid, sp.child_pid);
    struct thread *t = ptc_thread_find(s, pid, sp.tid);
    if (s->par_n > 1) { /* the worker that decodes the thread's events places it */
        int own = t ? ptc_par_owns(s, pid, sp.tid) : ptc_par_primary(s);
        if (own <= 0)
            return own;
    }
    s->tot.spawns++;
    if (!t)
        return 0; /* a thread that recorded nothing before it: counted, not placed */
    struct ptc_ev ev = {.type = PTC_EV_SPAWN,
                        .has_time = (s->file_flags & PTC_FILE_F_TIMED) != 0,
                        .tsc = sp.tsc, .count = sp.child_pid};
    return ptc_thread_feed(s, t, &ev, 1);
}

static int on_spawn(struct ptc_session *s, const struct ptc_chunk *c)
{
    return say_where(s, c, spawn_chunk(s, c->h.pid, c->payload, c->h.payload_size));
}

static int on_counts(struct ptc_session *s, const struct ptc_chunk *c)
{
    return say_where(s, c, ptc_counts_chunk(s, c->h.pid, c->payload, c->h.payload_size));
}

static int on_module_unload(struct ptc_session *s, const struct ptc_chunk *c)
{
    struct ptc_module_unload u;
    struct proc *p;
    int e = take(s, c, &u, sizeof(u), "MODULE_UNLOAD");
    if (e || (e = chunk_proc(s, c, &p)))
        return e;
    for (uint32_t i = 0; i < p->nmods; i++)
        if (p->mods[i].module_id == u.module_id)
            p->mods[i].unloaded = 1;
    return 0;
}

/* The thread's name is now name: the one before joins its earlier names (views show the last
 * and may say what it was renamed from; docs/usage.md, "Thread names"). */
static int rename_thread(struct ptc_session *s, struct thread *t, const char *name)
{
    if (!t->name || !*t->name)
        return keep_str(s, &t->name, name);
    if (!strcmp(t->name, name))
        return 0;
    char **r = realloc(t->renamed, (t->nrenamed + 1) * sizeof(*r));
    char *c = strdup(name);
    if (!r || !c) {
        if (r)
            t->renamed = r;
        free(c);
        return ptc_nomem(s);
    }
    t->renamed = r;
    r[t->nrenamed++] = t->name;
    t->name = c;
    return 0;
}

/* 2.4, optional: the thread's name changed at tsc (the runtime's pthread_setname_np and
 * prctl(PR_SET_NAME)); chunks of a thread come in the order of its changes. */
static int on_thread_name(struct ptc_session *s, const struct ptc_chunk *c)
{
    struct ptc_thread_name tn;
    int e = take(s, c, &tn, sizeof(tn), "THREAD_NAME");
    if (e)
        return e;
    const char *name = payload_str(c, sizeof(tn));
    if (!c->h.tid || !*name)
        return 0; /* nothing a view could use; the chunk is optional */
    struct thread *t = ptc_thread_get(s, c->h.pid, c->h.tid);
    return t ? rename_thread(s, t, name) : ptc_nomem(s);
}

static int on_thread(struct ptc_session *s, const struct ptc_chunk *c)
{
    struct ptc_thread th;
    int e = take(s, c, &th, sizeof(th), "THREAD");
    if (e)
        return e;
    if (c->h.tid == 0)
        return ptc_session_set_error(s, PTC_E_CORRUPT,
                                     "%s is corrupt: THREAD chunk %llu has tid 0",
                                     s->src_name, (unsigned long long)c->index);
    const char *name = payload_str(c, sizeof(th));
    if (*name) {
        struct thread *t = ptc_thread_get(s, c->h.pid, c->h.tid);
        if (t && th.event == PTC_THREAD_START && t->exit_seen) { /* a new life of the tid */
            for (uint32_t k = 0; k < t->nrenamed; k++)
                free(t->renamed[k]);
            t->nrenamed = 0;
            free(t->name);
            t->name = NULL;
        }
        if (!t || (e = rename_thread(s, t, name)))
            return t ? e : ptc_nomem(s);
    }
    if (th.event == PTC_THREAD_EXIT) {
        struct thread *t = ptc_thread_get(s, c->h.pid, c->h.tid);
        if (!t)
            return ptc_nomem(s);
        t->exit_seen = 1;
        if (t->started) {
            ptc_window_set_end(t, th.tsc); /* frames still open ran until its exit */
            ptc_thread_end(s, t);
        }
    }
    return 0;
}

static int on_loss(struct ptc_session *s, const struct ptc_chunk *c)
{
    struct ptc_loss l;
    int e = take(s, c, &l, sizeof(l), "LOSS");
    if (e)
        return e;
    if (s->par_n > 1) { /* a thread's loss is its worker's, the others are worker 0's */
        int own = l.tid ? ptc_par_owns(s, c->h.pid, l.tid) : ptc_par_primary(s);
        if (own <= 0)
            return own;
    }
    return ptc_session_add_loss(s, c->h.pid, &l, payload_str(c, sizeof(l)));
}

static int on_process_end(struct ptc_session *s, const struct ptc_chunk *c)
{
    struct ptc_process_end pe;
    struct proc *p;
    int e = take(s, c, &pe, sizeof(pe), "PROCESS_END");
    if (e || (e = chunk_proc(s, c, &p)))
        return e;
    for (struct thread *t = p->threads; t; t = t->pnext)
        if (t->started) {
            if (!t->ended)
                ptc_window_set_end(t, pe.tsc); /* it ran until its process's trace ended */
            ptc_thread_end(s, t);
        }
    p->ended = 1;
    p->end_how = pe.how;
    return 0;
}

static int on_window(struct ptc_session *s, const struct ptc_chunk *c)
{
    if (!c->h.tid)
        return ptc_session_set_error(s, PTC_E_CORRUPT, "%s is corrupt: WINDOW chunk %llu has "
                                     "tid 0", s->src_name, (unsigned long long)c->index);
    return say_where(s, c, ptc_window_chunk(s, c->h.pid, c->h.tid, c->payload,
                                            c->h.payload_size));
}

static int on_snapshot(struct ptc_session *s, const struct ptc_chunk *c)
{
    return say_where(s, c, ptc_snapshot_chunk(s, c->h.pid, c->payload, c->h.payload_size));
}

static int on_record_end(struct ptc_session *s, const struct ptc_chunk *c)
{
    struct ptc_record_end re;
    int e = take(s, c, &re, sizeof(re), "RECORD_END");
    if (e)
        return e;
    s->record_end = 1;
    s->wait_status = re.wait_status;
    s->wall_ns = re.wall_ns;
    struct ptc_record_end_cpu cpu = {0};
    if (c->h.payload_size >= sizeof(re) + sizeof(cpu))
        memcpy(&cpu, c->payload + sizeof(re), sizeof(cpu));
    s->cpu_ns = cpu.cpu_ns;
    return 0;
}

/* A MODULE_REFUSED chunk (docs/trace-format.md 4.16): the object is kept in the session's
 * list of refused objects. Sizes must add up to the payload exactly and each string must end
 * with its only NUL: a damaged chunk would otherwise name another object, or none. */
static int refused_chunk(struct ptc_session *s, uint32_t pid, const void *payload, size_t size)
{
    struct ptc_module_refused m;
    if (size < sizeof(m))
        return ptc_session_set_error(s, PTC_E_CORRUPT, "MODULE_REFUSED chunk of pid %u is %zu "
                                     "bytes, shorter than its %zu-byte header", pid, size,
                                     sizeof(m));
    memcpy(&m, payload, sizeof(m));
    const char *path = (const char *)payload + sizeof(m);
    if (m.path_size < 2 || m.path_size > PTC_REFUSED_PATH_MAX || m.reason_size < 2 ||
        m.reason_size > PTC_REFUSED_REASON_MAX ||
        sizeof(m) + (uint64_t)m.path_size + m.reason_size != size)
        return ptc_session_set_error(s, PTC_E_CORRUPT, "MODULE_REFUSED chunk of pid %u: a "
                                     "%u-byte path and a %u-byte reason do not fill its %zu "
                                     "bytes (each 2 to %u/%u)", pid, m.path_size,
                                     m.reason_size, size, PTC_REFUSED_PATH_MAX,
                                     PTC_REFUSED_REASON_MAX);
    const char *reason = path + m.path_size;
    int bad_path = strnlen(path, m.path_size) != m.path_size - 1u;
    if (bad_path || strnlen(reason, m.reason_size) != m.reason_size - 1u)
        return ptc_session_set_error(s, PTC_E_CORRUPT, "MODULE_REFUSED chunk of pid %u: its "
                                     "%s does not end with its only NUL", pid,
                                     bad_path ? "path" : "reason");
    if (s->nrefused == s->caprefused) {
        uint32_t cap = s->caprefused ? 2 * s->caprefused : 4;
        struct ptc_refused_object *v = realloc(s->refused, (size_t)cap * sizeof(*v));
        if (!v)
            return ptc_nomem(s);
        s->refused = v;
        s->caprefused = cap;
    }
    char *p = strdup(path), *r = strdup(reason);
    if (!p || !r) {
        free(p);
        free(r);
        return ptc_nomem(s);
    }
    s->refused[s->nrefused++] = (struct ptc_refused_object){.pid = pid, .tsc = m.tsc,
                                                            .path = p, .reason = r};
    return 0;
}

static int on_module_refused(struct ptc_session *s, const struct ptc_chunk *c)
{
    return say_where(s, c, refused_chunk(s, c->h.pid, c->payload, c->h.payload_size));
}

/* 2.4, optional, process-level: what ended the process (a sanitizer). The worker that reads
 * process-level chunks for views keeps it (every worker sees them). */
static int on_end_cause(struct ptc_session *s, const struct ptc_chunk *c)
{
    struct ptc_end_cause ec;
    int e = take(s, c, &ec, sizeof(ec), "END_CAUSE");
    if (e || !ptc_par_primary(s))
        return e;
    char *what = strdup(payload_str(c, sizeof(ec)));
    struct ptc_end_cause_info *v = realloc(s->causes, (s->ncauses + 1) * sizeof(*v));
    if (!what || !v) {
        free(what);
        if (v)
            s->causes = v;
        return ptc_nomem(s);
    }
    s->causes = v;
    v[s->ncauses++] = (struct ptc_end_cause_info){
        .pid = c->h.pid, .kind = ec.kind, .status = ec.status, .what = what};
    return 0;
}

uint32_t ptc_session_num_end_causes(const struct ptc_session *s) { return s ? s->ncauses : 0; }

int ptc_session_end_cause(const struct ptc_session *s, uint32_t i, struct ptc_end_cause_info *out)
{
    if (!s || !out || i >= s->ncauses)
        return -PTC_E_ARG;
    *out = s->causes[i];
    return 0;
}

uint32_t ptc_session_num_refused(const struct ptc_session *s) { return s ? s->nrefused : 0; }

int ptc_session_refused(const struct ptc_session *s, uint32_t i, struct ptc_refused_object *out)
{
    if (!s || !out || i >= s->nrefused)
        return -PTC_E_ARG;
    *out = s->refused[i];
    return 0;
}

/* Indexed by type up to the last core type this reader knows; a type in range without a
 * handler here (NULL) is one this reader does not know (on_unknown: skipped when optional,
 * refused when required). */
static int (*const by_type[PTC_CHUNK_MODULE_BLOCKING + 1])(struct ptc_session *s,
                                                     const struct ptc_chunk *c) = {
    [PTC_CHUNK_RECORD_INFO] = on_record_info,
    [PTC_CHUNK_PROCESS] = on_process,
    [PTC_CHUNK_TIMEBASE] = on_timebase,
    [PTC_CHUNK_MODULE] = on_module,
    [PTC_CHUNK_MODULE_UNLOAD] = on_module_unload,
    [PTC_CHUNK_THREAD] = on_thread,
    [PTC_CHUNK_SOFT_EVENTS] = ptc_soft_chunk,
    [PTC_CHUNK_LOSS] = on_loss,
    [PTC_CHUNK_PROCESS_END] = on_process_end,
    [PTC_CHUNK_RECORD_END] = on_record_end,
    [PTC_CHUNK_MODULE_ARMED] = on_module_armed,
    [PTC_CHUNK_COUNTS] = on_counts,
    [PTC_CHUNK_MARK] = on_mark,
    [PTC_CHUNK_SPAWN] = on_spawn,
    [PTC_CHUNK_MODULE_REFUSED] = on_module_refused,
    [PTC_CHUNK_THREAD_NAME] = on_thread_name,
    [PTC_CHUNK_END_CAUSE] = on_end_cause,
    [PTC_CHUNK_SNAPSHOT] = on_snapshot,
    [PTC_CHUNK_WINDOW] = on_window,
    [PTC_CHUNK_BUDGET] = on_budget,
    [PTC_CHUNK_MODULE_COUNTED] = on_module_counted,
    [PTC_CHUNK_MODULE_BLOCKING] = on_module_blocking,
};

int ptc_session_chunk(struct ptc_session *s, const struct ptc_chunk *c)
{
    s->chunk_index = c->index;
    s->chunk_offset = c->offset;
    if (unlikely(s->par_n > 1)) {
        int r = ptc_par_filter(s, c);
        if (r <= 0)
            return r;
    }
    if (c->h.tid || ptc_par_primary(s))
        s->tot.chunks++;
    uint16_t type = c->h.type;
    /* every chunk, whoever decodes it, takes a place in its (pid, tid) sequence */
    int e = check_seq(s, c);
    if (e)
        return e;
    for (int i = 0; i < s->nhandlers; i++)
        if (type >= s->handlers[i].first && type <= s->handlers[i].last)
            return s->handlers[i].fn(s->handlers[i].ctx, s, &c->h, c->payload);
    if (type >= sizeof(by_type) / sizeof(by_type[0]) || type == 0 || !by_type[type])
        return on_unknown(s, c);
    return by_type[type](s, c);
}
