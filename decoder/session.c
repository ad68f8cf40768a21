/* Sessions: per-process module tables, per-thread shadow stacks, and the analyses that
 * run on them (per-function calls/inclusive/self time, caller->callee edges, loss and
 * repair counters). Memory grows with processes, threads, stack depth and functions. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode_internal.h"
#include "ptc_varint.h"

static const char *const errnames[] = {
    [PTC_OK] = "success",
    [PTC_E_IO] = "read error",
    [PTC_E_FORMAT] = "not a ptcall trace file",
    [PTC_E_VERSION] = "unsupported trace format version",
    [PTC_E_TRUNCATED] = "truncated trace",
    [PTC_E_CORRUPT] = "corrupt trace",
    [PTC_E_NOMEM] = "out of memory",
    [PTC_E_NOMODULE] = "the trace holds no instrumented module",
    [PTC_E_BADSTUB] = "event names an unknown stub",
    [PTC_E_ARG] = "invalid argument",
    [PTC_E_UNSUPPORTED] = "unsupported trace content",
};

const char *ptc_strerror(int err)
{
    if (err < 0)
        err = -err;
    if (err >= 0 && (size_t)err < sizeof(errnames) / sizeof(errnames[0]) && errnames[err])
        return errnames[err];
    return "unknown error";
}

int ptc_session_set_error(struct ptc_session *s, int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->msg, sizeof(s->msg), fmt, ap);
    va_end(ap);
    return -err;
}

const char *ptc_session_errmsg(const struct ptc_session *s) { return s ? s->msg : ""; }

struct ptc_session *ptc_session_new(void)
{
    struct ptc_session *s = calloc(1, sizeof(*s));
    if (s)
        s->src_name = "trace";
    return s;
}

static void free_module(struct module *m)
{
    free(m->addr);
    free(m->ids);
}

static void free_thread(struct thread *t)
{
    free(t->frames);
    free(t->active);
    free(t->held);
    free(t);
}

void ptc_session_free(struct ptc_session *s)
{
    if (!s)
        return;
    for (uint32_t i = 0; i < s->nfuncs; i++) {
        free((char *)s->funcs[i].info.name);
        free((char *)s->funcs[i].info.linkage_name);
        free((char *)s->funcs[i].info.file);
        free((char *)s->funcs[i].info.module);
    }
    free(s->funcs);
    free(s->fstats);
    free(s->fhash);
    free(s->edges);
    for (uint32_t i = 0; i < s->thash_cap; i++)
        for (struct thread *t = s->thash ? s->thash[i] : NULL, *n; t; t = n) {
            n = t->hnext;
            free_thread(t);
        }
    free(s->thash);
    for (uint32_t i = 0; i < s->phash_cap; i++)
        for (struct proc *p = s->phash ? s->phash[i] : NULL, *n; p; p = n) {
            n = p->hnext;
            for (uint32_t m = 0; m < p->nmods; m++)
                free_module(&p->mods[m]);
            free(p->mods);
            free(p->stubs);
            free(p->snap);
            free(p);
        }
    free(s->phash);
    free(s);
}

/* ---------------------------------------------------------------- processes/threads */

static inline uint32_t hash32(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return (uint32_t)k;
}

struct proc *ptc_proc_get(struct ptc_session *s, uint32_t pid)
{
    if (s->phash_cap) {
        for (struct proc *p = s->phash[hash32(pid) & (s->phash_cap - 1)]; p; p = p->hnext)
            if (p->pid == pid)
                return p;
    }
    if (s->nprocs * 2 >= s->phash_cap) {
        uint32_t nc = s->phash_cap ? s->phash_cap * 2 : 64;
        struct proc **nh = calloc(nc, sizeof(*nh));
        if (!nh)
            return NULL;
        for (uint32_t i = 0; i < s->phash_cap; i++)
            for (struct proc *p = s->phash[i], *n; p; p = n) {
                n = p->hnext;
                uint32_t b = hash32(p->pid) & (nc - 1);
                p->hnext = nh[b];
                nh[b] = p;
            }
        free(s->phash);
        s->phash = nh;
        s->phash_cap = nc;
    }
    struct proc *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->pid = pid;
    uint32_t b = hash32(pid) & (s->phash_cap - 1);
    p->hnext = s->phash[b];
    s->phash[b] = p;
    s->nprocs++;
    return p;
}

static struct proc *proc_find(const struct ptc_session *s, uint32_t pid)
{
    if (!s->phash_cap)
        return NULL;
    for (struct proc *p = s->phash[hash32(pid) & (s->phash_cap - 1)]; p; p = p->hnext)
        if (p->pid == pid)
            return p;
    return NULL;
}

static struct thread *thread_find(const struct ptc_session *s, uint32_t pid, uint32_t tid)
{
    if (!s->thash_cap)
        return NULL;
    uint64_t key = (uint64_t)pid << 32 | tid;
    for (struct thread *t = s->thash[hash32(key) & (s->thash_cap - 1)]; t; t = t->hnext)
        if (t->pid == pid && t->tid == tid)
            return t;
    return NULL;
}

struct thread *ptc_thread_get(struct ptc_session *s, uint32_t pid, uint32_t tid)
{
    struct thread *t = thread_find(s, pid, tid);
    if (t)
        return t;
    struct proc *p = ptc_proc_get(s, pid);
    if (!p)
        return NULL;
    if (s->nthreads * 2 >= s->thash_cap) {
        uint32_t nc = s->thash_cap ? s->thash_cap * 2 : 64;
        struct thread **nh = calloc(nc, sizeof(*nh));
        if (!nh)
            return NULL;
        for (uint32_t i = 0; i < s->thash_cap; i++)
            for (struct thread *x = s->thash[i], *n; x; x = n) {
                n = x->hnext;
                uint32_t b = hash32((uint64_t)x->pid << 32 | x->tid) & (nc - 1);
                x->hnext = nh[b];
                nh[b] = x;
            }
        free(s->thash);
        s->thash = nh;
        s->thash_cap = nc;
    }
    t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->pid = pid;
    t->tid = tid;
    t->proc = p;
    t->pnext = p->threads;
    p->threads = t;
    uint32_t b = hash32((uint64_t)pid << 32 | tid) & (s->thash_cap - 1);
    t->hnext = s->thash[b];
    s->thash[b] = t;
    s->nthreads++;
    return t;
}

/* ---------------------------------------------------------------- functions */

static uint64_t func_key(const char *module, const char *linkage, const char *file)
{
    uint64_t h = PTC_FNV1A64_INIT;
    h = ptc_fnv1a64(h, module, strlen(module) + 1);
    h = ptc_fnv1a64(h, linkage, strlen(linkage) + 1);
    h = ptc_fnv1a64(h, file, strlen(file) + 1);
    return h;
}

static int fhash_grow(struct ptc_session *s)
{
    uint32_t nc = s->fhash_cap ? s->fhash_cap * 2 : 1024;
    uint32_t *nh = calloc(nc, sizeof(*nh));
    if (!nh)
        return -1;
    for (uint32_t i = 0; i < s->nfuncs; i++) {
        uint32_t b = (uint32_t)s->funcs[i].key_hash & (nc - 1);
        while (nh[b])
            b = (b + 1) & (nc - 1);
        nh[b] = i + 1;
    }
    free(s->fhash);
    s->fhash = nh;
    s->fhash_cap = nc;
    return 0;
}

static char *dupstr(const char *x)
{
    size_t n = strlen(x) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, x, n);
    return d;
}

/* Returns the id of (module, linkage name, file), adding it; UINT32_MAX if out of memory. */
static uint32_t func_intern(struct ptc_session *s, const char *module, const char *name,
                            const char *linkage, const char *file, uint32_t line)
{
    if (!*linkage)
        linkage = name;
    uint64_t key = func_key(module, linkage, file);
    if ((s->nfuncs + 1) * 2 > s->fhash_cap && fhash_grow(s))
        return UINT32_MAX;
    uint32_t b = (uint32_t)key & (s->fhash_cap - 1);
    while (s->fhash[b]) {
        struct func *f = &s->funcs[s->fhash[b] - 1];
        if (f->key_hash == key && !strcmp(f->info.linkage_name, linkage) &&
            !strcmp(f->info.module, module) && !strcmp(f->info.file, file))
            return s->fhash[b] - 1;
        b = (b + 1) & (s->fhash_cap - 1);
    }
    if (s->nfuncs == s->capfuncs) {
        uint32_t nc = s->capfuncs ? s->capfuncs * 2 : 256;
        struct func *nf = realloc(s->funcs, nc * sizeof(*nf));
        if (!nf)
            return UINT32_MAX;
        s->funcs = nf;
        struct fstat *ns = realloc(s->fstats, nc * sizeof(*ns));
        if (!ns)
            return UINT32_MAX;
        s->fstats = ns;
        s->capfuncs = nc;
    }
    struct func *f = &s->funcs[s->nfuncs];
    f->key_hash = key;
    f->info.name = dupstr(name);
    f->info.linkage_name = dupstr(linkage);
    f->info.file = dupstr(file);
    f->info.module = dupstr(module);
    f->info.line = line;
    if (!f->info.name || !f->info.linkage_name || !f->info.file || !f->info.module) {
        free((char *)f->info.name);
        free((char *)f->info.linkage_name);
        free((char *)f->info.file);
        free((char *)f->info.module);
        return UINT32_MAX;
    }
    memset(&s->fstats[s->nfuncs], 0, sizeof(struct fstat));
    s->fhash[b] = s->nfuncs + 1;
    return s->nfuncs++;
}

uint32_t ptc_session_num_funcs(const struct ptc_session *s) { return s->nfuncs; }

const struct ptc_func_info *ptc_session_func(const struct ptc_session *s, uint32_t id)
{
    return id < s->nfuncs ? &s->funcs[id].info : NULL;
}

static uint64_t ticks_to_ns(const struct ptc_timebase *tb, uint64_t t)
{
    unsigned sh = tb->time_shift;
    uint64_t q = sh ? t >> sh : t;
    uint64_t r = sh ? t & ((1ULL << sh) - 1) : 0;
    return q * tb->time_mult + ((r * tb->time_mult) >> sh);
}

static uint64_t tsc_to_ns(const struct ptc_timebase *tb, uint64_t tsc)
{
    return tb->time_zero + ticks_to_ns(tb, tsc);
}

void ptc_session_func_stats(const struct ptc_session *s, uint32_t id, struct ptc_func_stats *o)
{
    memset(o, 0, sizeof(*o));
    if (id >= s->nfuncs)
        return;
    o->calls = s->fstats[id].calls;
    o->total = s->fstats[id].total;
    o->self = s->fstats[id].self;
    if (s->has_tb) {
        o->total = ticks_to_ns(&s->tb, o->total);
        o->self = ticks_to_ns(&s->tb, o->self);
    }
}

/* ---------------------------------------------------------------- edges */

static inline uint32_t edge_hash(uint64_t key)
{
    return (uint32_t)((key * 0x9E3779B97F4A7C15ULL) >> 32);
}

static int edges_grow(struct ptc_session *s)
{
    uint32_t nc = s->ecap ? s->ecap * 2 : 256;
    struct edge_slot *ne = malloc((size_t)nc * sizeof(*ne));
    if (!ne)
        return -1;
    for (uint32_t i = 0; i < nc; i++) {
        ne[i].key = UINT64_MAX;
        ne[i].count = 0;
    }
    for (uint32_t i = 0; i < s->ecap; i++) {
        if (s->edges[i].key == UINT64_MAX)
            continue;
        uint32_t b = edge_hash(s->edges[i].key) & (nc - 1);
        while (ne[b].key != UINT64_MAX)
            b = (b + 1) & (nc - 1);
        ne[b] = s->edges[i];
    }
    free(s->edges);
    s->edges = ne;
    s->ecap = nc;
    return 0;
}

/* Counts one caller->callee call; returns the edge's slot or UINT32_MAX (out of memory). */
static PTC_NOINLINE uint32_t edge_add(struct ptc_session *s, uint32_t caller, uint32_t callee)
{
    uint64_t key = (uint64_t)caller << 32 | callee;
    if ((s->nedges + 1) * 2 > s->ecap && edges_grow(s))
        return UINT32_MAX;
    uint32_t mask = s->ecap - 1;
    uint32_t b = edge_hash(key) & mask;
    struct edge_slot *e = s->edges;
    while (e[b].key != key) {
        if (e[b].key == UINT64_MAX) {
            e[b].key = key;
            s->nedges++;
            break;
        }
        b = (b + 1) & mask;
    }
    e[b].count++;
    return b;
}

size_t ptc_session_edges(const struct ptc_session *s, struct ptc_edge **out)
{
    *out = malloc((s->nedges ? s->nedges : 1) * sizeof(**out));
    if (!*out)
        return (size_t)-1;
    size_t n = 0;
    for (uint32_t i = 0; i < s->ecap; i++)
        if (s->edges[i].key != UINT64_MAX) {
            (*out)[n].caller = (uint32_t)(s->edges[i].key >> 32);
            (*out)[n].callee = (uint32_t)s->edges[i].key;
            (*out)[n].count = s->edges[i].count;
            n++;
        }
    return n;
}

/* ---------------------------------------------------------------- shadow stacks */

static inline uint64_t hook_time(const struct ptc_session *s, const struct proc *p, uint64_t t);

int ptc_session_origin(const struct ptc_session *s, uint64_t *time)
{
    const struct proc *p = s->have_origin ? proc_find(s, s->origin_pid) : NULL;
    if (!p || !s->origin_tsc)
        return -PTC_E_ARG;
    *time = hook_time(s, p, s->origin_tsc);
    return 0;
}

static inline uint64_t hook_time(const struct ptc_session *s, const struct proc *p, uint64_t t)
{
    if (p->has_tb)
        return tsc_to_ns(&p->tb, t);
    if (s->has_tb)
        return tsc_to_ns(&s->tb, t);
    return t;
}

static PTC_NOINLINE void emit(struct ptc_session *s, struct thread *t, uint8_t kind, uint8_t how,
                 uint32_t depth, uint32_t func, uint64_t dur, uint64_t count, int inherited)
{
    struct ptc_call_event e;
    e.pid = t->pid;
    e.tid = t->tid;
    e.depth = depth;
    e.func = func;
    e.kind = kind;
    e.how = how;
    e.has_time = s->timed_events != 0 || (s->file_flags & PTC_FILE_F_TIMED);
    e.inherited = (uint8_t)inherited;
    e.time = hook_time(s, t->proc, t->last);
    e.dur = dur;
    if (t->proc->has_tb)
        e.dur = ticks_to_ns(&t->proc->tb, dur);
    else if (s->has_tb)
        e.dur = ticks_to_ns(&s->tb, dur);
    e.count = count;
    e.thread_user = &t->user;
    s->hook(s->hook_ctx, &e);
}

static int active_grow(struct thread *t, uint32_t f)
{
    uint32_t nc = t->nactive ? t->nactive : 256;
    while (nc <= f)
        nc *= 2;
    uint32_t *na = realloc(t->active, nc * sizeof(*na));
    if (!na)
        return -1;
    memset(na + t->nactive, 0, (nc - t->nactive) * sizeof(*na));
    t->active = na;
    t->nactive = nc;
    return 0;
}

static int frames_grow(struct thread *t)
{
    uint32_t nc = t->cap ? t->cap * 2 : 64;
    if (nc > PTC_MAX_DEPTH)
        nc = PTC_MAX_DEPTH;
    if (nc <= t->cap)
        return -1;
    struct frame *nf = realloc(t->frames, nc * sizeof(*nf));
    if (!nf)
        return -1;
    t->frames = nf;
    t->cap = nc;
    return 0;
}

/* Pops the top frame at time now. */
static PTC_INLINE void pop(struct ptc_session *s, struct thread *t, uint64_t now, uint8_t how)
{
    struct frame *fr = &t->frames[--t->depth];
    uint32_t f = fr->func;
    uint64_t dur = now > fr->start ? now - fr->start : 0;
    struct fstat *st = &s->fstats[f];
    st->self += dur - (fr->child < dur ? fr->child : dur);
    if (--t->active[f] == 0)
        st->total += dur;
    if (t->depth)
        t->frames[t->depth - 1].child += dur;
    if (unlikely(s->hook != NULL))
        emit(s, t, PTC_CALL_RETURN, how, t->depth, f, dur, 0, (fr->flags & FR_INHERITED) != 0);
}

/* Closes every open frame at the last event's time (a gap or the end). */
static void close_all(struct ptc_session *s, struct thread *t, uint8_t how)
{
    uint64_t n = t->depth;
    while (t->depth)
        pop(s, t, t->last, how);
    if (how == PTC_RET_BROKEN)
        s->tot.broken_frames += n;
    else
        s->tot.open_at_end += n;
}

static PTC_NOINLINE void gap(struct ptc_session *s, struct thread *t, uint64_t count)
{
    close_all(s, t, PTC_RET_BROKEN);
    s->tot.gaps++;
    s->tot.lost_events += count;
    t->gaps++;
    t->lost += count;
    if (s->hook)
        emit(s, t, PTC_CALL_GAP, 0, 0, UINT32_MAX, 0, count, 0);
}

static PTC_INLINE int push(struct ptc_session *s, struct thread *t, uint32_t f)
{
    if (unlikely(t->depth == t->cap) && frames_grow(t)) {
        if (t->cap >= PTC_MAX_DEPTH) { /* absurd depth: treat as broken, never crash */
            gap(s, t, 0);
        } else {
            return ptc_session_set_error(s, PTC_E_NOMEM, "out of memory (stack of %u frames)",
                                         t->depth);
        }
    }
    if (unlikely(f >= t->nactive) && active_grow(t, f))
        return ptc_session_set_error(s, PTC_E_NOMEM, "out of memory");
    struct frame *fr = &t->frames[t->depth];
    fr->func = f;
    fr->flags = 0;
    fr->start = t->last;
    fr->child = 0;
    fr->last_callee = UINT32_MAX;
    t->active[f]++;
    s->fstats[f].calls++;
    if (t->depth) {
        struct frame *up = fr - 1;
        uint64_t key = (uint64_t)up->func << 32 | f;
        uint32_t b;
        if (up->last_callee == f && s->edges[up->last_edge].key == key) {
            s->edges[up->last_edge].count++;
        } else if (likely(s->ecap) &&
                   s->edges[b = edge_hash(key) & (s->ecap - 1)].key == key) {
            s->edges[b].count++; /* first probe hits: the common case */
            up->last_callee = f;
            up->last_edge = b;
        } else {
            uint32_t slot = edge_add(s, up->func, f);
            if (slot == UINT32_MAX)
                return ptc_session_set_error(s, PTC_E_NOMEM, "out of memory");
            up->last_callee = f;
            up->last_edge = slot;
        }
    }
    t->depth++;
    if (unlikely(s->hook != NULL))
        emit(s, t, PTC_CALL_ENTER, 0, t->depth - 1, f, 0, 0, 0);
    return 0;
}

/* Exit (or unwind) of f when f is not on top. */
static PTC_NOINLINE void leave_slow(struct ptc_session *s, struct thread *t, uint32_t f,
                                    uint8_t how)
{
    if (f >= t->nactive || !t->active[f]) {
        s->tot.unmatched++;
        if (s->hook)
            emit(s, t, PTC_CALL_UNMATCHED, 0, t->depth, f, 0, 0, 0);
        return;
    }
    while (t->frames[t->depth - 1].func != f) {
        pop(s, t, t->last, PTC_RET_REPAIR);
        s->tot.repairs++;
    }
    pop(s, t, t->last, how);
}

static PTC_INLINE void leave(struct ptc_session *s, struct thread *t, uint32_t f, uint8_t how)
{
    if (likely(t->depth && t->frames[t->depth - 1].func == f))
        pop(s, t, t->last, how);
    else
        leave_slow(s, t, f, how);
}

static PTC_NOINLINE void landing(struct ptc_session *s, struct thread *t, uint32_t f)
{
    if (f >= t->nactive || !t->active[f]) {
        s->tot.unmatched++;
        if (s->hook)
            emit(s, t, PTC_CALL_UNMATCHED, 0, t->depth, f, 0, 0, 0);
        return;
    }
    while (t->frames[t->depth - 1].func != f) {
        pop(s, t, t->last, PTC_RET_LANDING);
        s->tot.unwound++;
    }
    if (s->hook)
        emit(s, t, PTC_CALL_LANDING, 0, t->depth - 1, f, 0, 0, 0);
}

static int start_from(struct ptc_session *s, struct thread *t, const struct frame *fr,
                      uint32_t n)
{
    while (t->cap < n)
        if (frames_grow(t))
            return ptc_session_set_error(s, PTC_E_NOMEM, "out of memory");
    for (uint32_t i = 0; i < n; i++) {
        uint32_t f = fr[i].func;
        if (f >= t->nactive && active_grow(t, f))
            return ptc_session_set_error(s, PTC_E_NOMEM, "out of memory");
        t->frames[i] = fr[i];
        t->frames[i].child = 0;
        t->frames[i].flags |= FR_INHERITED;
        t->frames[i].last_callee = UINT32_MAX;
        t->active[f]++;
    }
    t->depth = n;
    if (s->hook)
        emit(s, t, PTC_CALL_FORKED, 0, n, UINT32_MAX, 0, 0, 0);
    return 0;
}

static int release_held(struct ptc_session *s, struct thread *t);

/* Stops waiting for a fork point that will not come: replays from an empty stack. */
static int give_up_waiting(struct ptc_session *s, struct thread *t)
{
    if (t->nheld)
        s->tot.fork_unknown++;
    int e = release_held(s, t);
    if (t->end_pending)
        ptc_thread_end(s, t);
    return e;
}

static int release_held(struct ptc_session *s, struct thread *t)
{
    struct ptc_ev *held = t->held;
    size_t n = t->nheld;
    t->held = NULL;
    t->nheld = t->capheld = 0;
    t->waiting = 0;
    s->held_total -= n;
    int e = n ? ptc_thread_feed(s, t, held, n) : 0;
    free(held);
    return e;
}

/* The fork point of child pid is known: t is the forking thread. */
static int fork_point(struct ptc_session *s, struct thread *t, uint32_t child_pid,
                      uint64_t tsc, int has_time)
{
    if (s->hook)
        emit(s, t, PTC_CALL_FORK, 0, t->depth, UINT32_MAX, 0, child_pid, 0);
    struct proc *cp = ptc_proc_get(s, child_pid);
    if (!cp)
        return ptc_session_set_error(s, PTC_E_NOMEM, "out of memory");
    struct thread *ct = thread_find(s, child_pid, child_pid);
    if (ct && ct->waiting) {
        ct->last = tsc;
        int e = start_from(s, ct, t->frames, t->depth);
        if (e)
            return e;
        (void)has_time; /* tsc is the forking thread's last time */
        for (uint32_t i = 0; i < ct->depth; i++)
            ct->frames[i].start = tsc;
        ct->last = tsc;
        e = release_held(s, ct);
        if (ct->end_pending)
            ptc_thread_end(s, ct);
        return e;
    }
    if (ct && ct->started)
        return 0; /* the child already runs without it (documented) */
    free(cp->snap);
    cp->snap = NULL;
    cp->snap_n = 0;
    cp->snap_valid = 1;
    if (t->depth) {
        cp->snap = malloc(t->depth * sizeof(*cp->snap));
        if (!cp->snap)
            return ptc_session_set_error(s, PTC_E_NOMEM, "out of memory");
        memcpy(cp->snap, t->frames, t->depth * sizeof(*cp->snap));
        for (uint32_t i = 0; i < t->depth; i++)
            cp->snap[i].start = tsc;
        cp->snap_n = t->depth;
    }
    return 0;
}

/* First events of a thread: a fork child's first thread starts from the parent's stack. */
static int thread_start(struct ptc_session *s, struct thread *t)
{
    t->started = 1;
    struct proc *p = t->proc;
    if (t->tid != t->pid)
        return 0;
    if (p->snap_valid) {
        if (p->snap_n)
            t->last = p->snap[0].start;
        int e = start_from(s, t, p->snap, p->snap_n);
        free(p->snap);
        p->snap = NULL;
        p->snap_valid = 0;
        return e;
    }
    if (p->how != PTC_PROC_FORK)
        return 0;
    struct proc *pp = proc_find(s, p->ppid);
    if (pp && pp->have_process && !pp->ended)
        t->waiting = 1;
    else
        s->tot.fork_unknown++;
    return 0;
}

static int hold(struct ptc_session *s, struct thread *t, const struct ptc_ev *ev, size_t n)
{
    if (s->held_total + n > PTC_FORK_BUFFER_MAX) { /* stop waiting: bounded memory */
        s->tot.fork_unknown++;
        int e = release_held(s, t);
        return e ? e : ptc_thread_feed(s, t, ev, n);
    }
    if (t->nheld + n > t->capheld) {
        size_t nc = t->capheld ? t->capheld : 1024;
        while (nc < t->nheld + n)
            nc *= 2;
        struct ptc_ev *nh = realloc(t->held, nc * sizeof(*nh));
        if (!nh)
            return ptc_session_set_error(s, PTC_E_NOMEM, "out of memory");
        t->held = nh;
        t->capheld = nc;
    }
    memcpy(t->held + t->nheld, ev, n * sizeof(*ev));
    t->nheld += n;
    s->held_total += n;
    return 0;
}

static PTC_INLINE int apply_hit(struct ptc_session *s, struct thread *t,
                                 const struct stubent *stubs, uint32_t nstubs, uint32_t id)
{
    if (unlikely(id >= nstubs)) {
        s->tot.bad_stubs++;
        gap(s, t, 0);
        return 0;
    }
    const struct stubent se = stubs[id];
    switch (se.kind) {
    case PTCALL_STUB_ENTRY:
        return push(s, t, se.func);
    case PTCALL_STUB_EXIT:
        leave(s, t, se.func, PTC_RET_EXIT);
        return 0;
    case PTCALL_STUB_UNWIND:
        leave(s, t, se.func, PTC_RET_UNWIND);
        return 0;
    case PTCALL_STUB_LANDING:
        landing(s, t, se.func);
        return 0;
    default: /* STUB_NONE: an id inside the table that no module defines */
        s->tot.bad_stubs++;
        gap(s, t, 0);
        return 0;
    }
}

/* Soft front-end fast path (see decode_internal.h). */
int ptc_thread_soft_fast(struct ptc_session *s, struct thread *t, const uint8_t **pp,
                         const uint8_t *end, int timed, uint64_t *tsc, uint64_t *records)
{
    const uint8_t *p = *pp;
    const struct stubent *stubs = t->proc->stubs;
    uint32_t nstubs = t->proc->nstubs;
    uint64_t n = 0, now = *tsc;
    int r = 0;
    while (p < end) {
        const uint8_t *rec = p;
        uint32_t v = *p++;
        if (unlikely(v >= 0x80)) {
            if (p >= end || *p >= 0x80) {
                p = rec;
                break;
            }
            v = (v & 0x7f) | (uint32_t)*p++ << 7;
        }
        if (unlikely(v < PTC_SOFT_ID_BASE)) {
            p = rec;
            break;
        }
        if (timed) {
            if (unlikely(p >= end)) {
                p = rec;
                break;
            }
            uint32_t d = *p++;
            if (unlikely(d >= 0x80)) {
                if (p >= end || *p >= 0x80) {
                    p = rec;
                    break;
                }
                d = (d & 0x7f) | (uint32_t)*p++ << 7;
            }
            now += (uint64_t)ptc_unzigzag(d);
            t->last = now;
        }
        n++;
        r = apply_hit(s, t, stubs, nstubs, v - PTC_SOFT_ID_BASE);
        if (unlikely(r))
            break;
    }
    *pp = p;
    *tsc = now;
    *records += n;
    t->events += n;
    s->tot.events += n;
    if (timed)
        s->timed_events += n;
    else
        s->untimed_events += n;
    return r;
}

int ptc_thread_feed(struct ptc_session *s, struct thread *t, const struct ptc_ev *ev, size_t n)
{
    if (unlikely(!t->started || t->ended)) {
        if (t->ended) { /* events after the thread ended: a new life, from an empty stack */
            t->ended = 0;
            s->tot.threads++;
        }
        if (!t->started) {
            s->tot.threads++;
            int e = thread_start(s, t);
            if (e)
                return e;
        }
    }
    if (unlikely(t->waiting))
        return hold(s, t, ev, n);
    struct proc *p = t->proc;
    const struct stubent *stubs = p->stubs;
    uint32_t nstubs = p->nstubs;
    uint64_t hits = 0, timed = 0;
    for (size_t i = 0; i < n; i++) {
        const struct ptc_ev *e = &ev[i];
        if (likely(e->type == PTC_EV_HIT)) {
            hits++;
            if (e->has_time) {
                t->last = e->tsc;
                timed++;
            }
            int r = apply_hit(s, t, stubs, nstubs, e->stub_id);
            if (unlikely(r))
                return r;
        } else if (e->type == PTC_EV_GAP) {
            gap(s, t, e->count);
            if (e->has_time)
                t->last = e->tsc;
        } else if (e->type == PTC_EV_FORK) {
            if (e->has_time)
                t->last = e->tsc;
            if (e->count > UINT32_MAX)
                return ptc_session_set_error(s, PTC_E_CORRUPT, "fork record names pid %llu",
                                             (unsigned long long)e->count);
            int r = fork_point(s, t, (uint32_t)e->count, t->last, e->has_time);
            if (r)
                return r;
        } else {
            return ptc_session_set_error(s, PTC_E_ARG, "event of unknown type %u", e->type);
        }
    }
    t->events += hits;
    s->tot.events += hits;
    s->timed_events += timed;
    s->untimed_events += hits - timed;
    return 0;
}

int ptc_session_feed(struct ptc_session *s, uint32_t pid, uint32_t tid,
                     const struct ptc_ev *ev, size_t n)
{
    if (!s || (!ev && n))
        return -PTC_E_ARG;
    struct thread *t = ptc_thread_get(s, pid, tid);
    if (!t)
        return ptc_session_set_error(s, PTC_E_NOMEM, "out of memory");
    return ptc_thread_feed(s, t, ev, n);
}

void ptc_thread_end(struct ptc_session *s, struct thread *t)
{
    if (t->waiting) { /* the parent's fork record may still come: end after the replay */
        t->end_pending = 1;
        return;
    }
    t->end_pending = 0;
    if (t->ended)
        return;
    close_all(s, t, PTC_RET_END);
    t->ended = 1;
    if (s->end_hook)
        s->end_hook(s->end_hook_ctx, t->pid, t->tid, &t->user);
    /* keep the small struct (counters); drop what grows */
    free(t->frames);
    t->frames = NULL;
    t->cap = 0;
    free(t->active);
    t->active = NULL;
    t->nactive = 0;
}

void ptc_session_set_call_hook(struct ptc_session *s, ptc_call_hook hook, void *ctx)
{
    s->hook = hook;
    s->hook_ctx = ctx;
}

void ptc_session_set_thread_end_hook(struct ptc_session *s,
                                     void (*fn)(void *ctx, uint32_t pid, uint32_t tid,
                                                uintptr_t *thread_user),
                                     void *ctx)
{
    s->end_hook = fn;
    s->end_hook_ctx = ctx;
}

int ptc_session_set_chunk_handler(struct ptc_session *s, uint16_t first, uint16_t last,
                                  ptc_chunk_fn fn, ptc_finish_fn finish, void *ctx)
{
    if (!s || !fn || first > last || s->nhandlers == PTC_MAX_HANDLERS)
        return -PTC_E_ARG;
    struct handler *h = &s->handlers[s->nhandlers++];
    h->first = first;
    h->last = last;
    h->fn = fn;
    h->finish = finish;
    h->ctx = ctx;
    return 0;
}

int ptc_session_finish(struct ptc_session *s)
{
    if (s->finished)
        return 0;
    s->finished = 1;
    int err = 0;
    for (int i = 0; i < s->nhandlers; i++)
        if (s->handlers[i].finish) {
            int e = s->handlers[i].finish(s->handlers[i].ctx, s);
            if (e && !err)
                err = e;
        }
    for (uint32_t i = 0; i < s->thash_cap; i++)
        for (struct thread *t = s->thash[i]; t; t = t->hnext)
            if (t->waiting)
                give_up_waiting(s, t);
    for (uint32_t i = 0; i < s->thash_cap; i++)
        for (struct thread *t = s->thash[i]; t; t = t->hnext)
            if (t->started)
                ptc_thread_end(s, t);
    return err;
}

/* ---------------------------------------------------------------- modules */

static int cmp_u64idx(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

#define CORRUPT_MODULE(...) ptc_session_set_error(s, PTC_E_CORRUPT, __VA_ARGS__)

static int str_ok(const char *strings, uint32_t size, uint32_t off)
{
    return off < size && memchr(strings + off, 0, size - off) != NULL;
}

int ptc_session_add_module(struct ptc_session *s, uint32_t pid, const void *payload, size_t size)
{
    struct ptc_module m;
    if (!s || (!payload && size))
        return -PTC_E_ARG;
    if (size < sizeof(m))
        return CORRUPT_MODULE("module chunk of pid %u is %zu bytes, shorter than its header",
                              pid, size);
    memcpy(&m, payload, sizeof(m));
    uint64_t need = sizeof(m) + (uint64_t)m.num_stubs * sizeof(struct ptc_module_stub) +
                    (uint64_t)m.num_funcs * sizeof(struct ptc_module_func) + m.strings_size;
    if (need > size)
        return CORRUPT_MODULE("module chunk of pid %u: %u stubs, %u functions and %u bytes "
                              "of strings do not fit its %zu bytes",
                              pid, m.num_stubs, m.num_funcs, m.strings_size, size);
    if ((uint64_t)m.first_stub_id + m.num_stubs > PTC_MAX_STUBS_PER_PROC)
        return CORRUPT_MODULE("module chunk of pid %u: stub ids %u..%u are implausible", pid,
                              m.first_stub_id, m.first_stub_id + m.num_stubs);
    const uint8_t *base = payload;
    const uint8_t *stubp = base + sizeof(m);
    const uint8_t *funcp = stubp + (size_t)m.num_stubs * sizeof(struct ptc_module_stub);
    const char *strings = (const char *)(funcp + (size_t)m.num_funcs * sizeof(struct ptc_module_func));
    if (!str_ok(strings, m.strings_size, m.path))
        return CORRUPT_MODULE("module chunk of pid %u: its path is not a string", pid);
    const char *path = strings + m.path;
    struct proc *p = ptc_proc_get(s, pid);
    if (!p)
        return ptc_session_set_error(s, PTC_E_NOMEM, "out of memory");
    /* function ids */
    uint32_t *ids = malloc((m.num_funcs ? m.num_funcs : 1) * sizeof(*ids));
    if (!ids)
        return ptc_session_set_error(s, PTC_E_NOMEM, "out of memory");
    for (uint32_t i = 0; i < m.num_funcs; i++) {
        struct ptc_module_func f;
        memcpy(&f, funcp + (size_t)i * sizeof(f), sizeof(f));
        if (!str_ok(strings, m.strings_size, f.name) ||
            !str_ok(strings, m.strings_size, f.linkage_name) ||
            !str_ok(strings, m.strings_size, f.file)) {
            free(ids);
            return CORRUPT_MODULE("module chunk of pid %u (%s): function %u has a bad string "
                                  "offset", pid, path, i);
        }
        ids[i] = func_intern(s, path, strings + f.name, strings + f.linkage_name,
                             strings + f.file, f.line);
        if (ids[i] == UINT32_MAX) {
            free(ids);
            return ptc_session_set_error(s, PTC_E_NOMEM, "out of memory");
        }
    }
    /* check the stubs before changing anything */
    for (uint32_t i = 0; i < m.num_stubs; i++) {
        struct ptc_module_stub st;
        memcpy(&st, stubp + (size_t)i * sizeof(st), sizeof(st));
        if (st.func >= m.num_funcs || st.kind > PTCALL_STUB_LANDING) {
            free(ids);
            return CORRUPT_MODULE("module chunk of pid %u (%s): stub %u names function %u "
                                  "of %u, kind %u",
                                  pid, path, i, st.func, m.num_funcs, st.kind);
        }
    }
    uint32_t end = m.first_stub_id + m.num_stubs;
    if (end > p->nstubs) {
        struct stubent *ns = realloc(p->stubs, (size_t)end * sizeof(*ns));
        if (!ns) {
            free(ids);
            return ptc_session_set_error(s, PTC_E_NOMEM, "out of memory");
        }
        for (uint32_t i = p->nstubs; i < end; i++)
            ns[i] = (struct stubent){.func = 0, .kind = STUB_NONE, .valid = 0, .site = 0};
        p->stubs = ns;
        p->nstubs = end;
    }
    struct module mod = {.module_id = m.module_id, .first_stub = m.first_stub_id,
                         .num_stubs = m.num_stubs, .lo = m.stubs_start, .hi = m.stubs_end};
    uint64_t *pairs = malloc(((size_t)m.num_stubs ? m.num_stubs : 1) * 2 * sizeof(uint64_t));
    mod.addr = malloc(((size_t)m.num_stubs ? m.num_stubs : 1) * sizeof(uint64_t));
    mod.ids = malloc(((size_t)m.num_stubs ? m.num_stubs : 1) * sizeof(uint32_t));
    if (!pairs || !mod.addr || !mod.ids) {
        free(pairs);
        free_module(&mod);
        free(ids);
        return ptc_session_set_error(s, PTC_E_NOMEM, "out of memory");
    }
    for (uint32_t i = 0; i < m.num_stubs; i++) {
        struct ptc_module_stub st;
        memcpy(&st, stubp + (size_t)i * sizeof(st), sizeof(st));
        struct stubent *se = &p->stubs[m.first_stub_id + i];
        se->func = ids[st.func];
        se->kind = (uint8_t)st.kind;
        se->site = st.site;
        se->valid = 1;
        pairs[2 * i] = st.address;
        pairs[2 * i + 1] = m.first_stub_id + i;
    }
    qsort(pairs, m.num_stubs, 2 * sizeof(uint64_t), cmp_u64idx);
    for (uint32_t i = 0; i < m.num_stubs; i++) {
        mod.addr[i] = pairs[2 * i];
        mod.ids[i] = (uint32_t)pairs[2 * i + 1];
    }
    free(pairs);
    free(ids);
    /* a module re-announced under the same id replaces the old entry */
    for (uint32_t i = 0; i < p->nmods; i++)
        if (p->mods[i].module_id == m.module_id && !p->mods[i].unloaded) {
            free_module(&p->mods[i]);
            p->mods[i] = mod;
            return 0;
        }
    if (p->nmods == p->capmods) {
        uint32_t nc = p->capmods ? p->capmods * 2 : 8;
        struct module *nm = realloc(p->mods, nc * sizeof(*nm));
        if (!nm) {
            free_module(&mod);
            return ptc_session_set_error(s, PTC_E_NOMEM, "out of memory");
        }
        p->mods = nm;
        p->capmods = nc;
    }
    p->mods[p->nmods++] = mod;
    return 0;
}

int ptc_session_lookup_stub(const struct ptc_session *s, uint32_t pid, uint64_t ip,
                            uint32_t *stub_id)
{
    const struct proc *p = s ? proc_find(s, pid) : NULL;
    if (!p)
        return -PTC_E_BADSTUB;
    for (uint32_t i = p->nmods; i-- > 0;) { /* newest first: a reloaded address wins */
        const struct module *m = &p->mods[i];
        if (m->unloaded || ip < m->lo || ip >= m->hi)
            continue;
        size_t lo = 0, hi = m->num_stubs;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (m->addr[mid] < ip)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < m->num_stubs && m->addr[lo] == ip) {
            *stub_id = m->ids[lo];
            return 0;
        }
    }
    return -PTC_E_BADSTUB;
}

/* A fork child without module chunks of its own resolves stubs with its parent's tables. */
static int inherit_modules(struct ptc_session *s, struct proc *c, const struct proc *pp)
{
    if (c->nmods || !pp->nstubs)
        return 0;
    free(c->stubs);
    free(c->mods);
    c->nstubs = 0;
    c->capmods = 0;
    c->stubs = malloc((size_t)pp->nstubs * sizeof(*c->stubs));
    c->mods = calloc(pp->nmods ? pp->nmods : 1, sizeof(*c->mods));
    if (!c->stubs || !c->mods)
        return ptc_session_set_error(s, PTC_E_NOMEM, "out of memory");
    memcpy(c->stubs, pp->stubs, (size_t)pp->nstubs * sizeof(*c->stubs));
    c->nstubs = pp->nstubs;
    c->capmods = pp->nmods ? pp->nmods : 1;
    for (uint32_t i = 0; i < pp->nmods; i++) {
        struct module m = pp->mods[i];
        m.addr = malloc(((size_t)m.num_stubs ? m.num_stubs : 1) * sizeof(uint64_t));
        m.ids = malloc(((size_t)m.num_stubs ? m.num_stubs : 1) * sizeof(uint32_t));
        if (!m.addr || !m.ids) {
            free_module(&m);
            return ptc_session_set_error(s, PTC_E_NOMEM, "out of memory");
        }
        memcpy(m.addr, pp->mods[i].addr, (size_t)m.num_stubs * sizeof(uint64_t));
        memcpy(m.ids, pp->mods[i].ids, (size_t)m.num_stubs * sizeof(uint32_t));
        c->mods[c->nmods++] = m;
    }
    if (pp->has_tb && !c->has_tb) {
        c->has_tb = 1;
        c->tb = pp->tb;
    }
    return 0;
}

/* ---------------------------------------------------------------- losses, totals */

int ptc_session_add_loss(struct ptc_session *s, uint32_t pid, const struct ptc_loss *loss,
                         const char *note)
{
    (void)note;
    if (!s || !loss)
        return -PTC_E_ARG;
    if (loss->kind == PTC_LOSS_DROPPED || loss->kind == PTC_LOSS_CRASH)
        s->tot.lost_events += loss->count;
    else
        s->tot.lost_other += loss->count;
    if (loss->tid) {
        struct thread *t = ptc_thread_get(s, pid, loss->tid);
        if (!t)
            return ptc_session_set_error(s, PTC_E_NOMEM, "out of memory");
        if (loss->kind == PTC_LOSS_DROPPED || loss->kind == PTC_LOSS_CRASH)
            t->lost += loss->count;
        else
            t->gaps++;
    }
    return 0;
}

void ptc_session_totals(const struct ptc_session *s, struct ptc_totals *t)
{
    *t = s->tot;
    t->processes = 0;
    for (uint32_t i = 0; i < s->phash_cap; i++)
        for (struct proc *p = s->phash[i]; p; p = p->hnext)
            if (p->pid && (p->have_process || p->threads))
                t->processes++;
    t->calls = 0;
    for (uint32_t i = 0; i < s->nfuncs; i++)
        t->calls += s->fstats[i].calls;
    t->lossy_threads = 0;
    for (uint32_t i = 0; i < s->thash_cap; i++)
        for (struct thread *x = s->thash[i]; x; x = x->hnext)
            if (x->lost || x->gaps)
                t->lossy_threads++;
    t->total_time = 0;
    for (uint32_t i = 0; i < s->nfuncs; i++)
        t->total_time += s->fstats[i].self;
    if (s->has_tb)
        t->total_time = ticks_to_ns(&s->tb, t->total_time);
    t->backend = s->backend;
    t->file_flags = s->file_flags;
    t->timed = s->timed_events != 0;
    t->has_timebase = s->has_tb;
    t->record_end = s->record_end;
    t->wait_status = s->wait_status;
}

void ptc_session_lossy_threads(const struct ptc_session *s,
                               void (*fn)(void *ctx, uint32_t pid, uint32_t tid, uint64_t lost,
                                          uint64_t gaps),
                               void *ctx)
{
    for (uint32_t i = 0; i < s->thash_cap; i++)
        for (struct thread *x = s->thash[i]; x; x = x->hnext)
            if (x->lost || x->gaps)
                fn(ctx, x->pid, x->tid, x->lost, x->gaps);
}

/* ---------------------------------------------------------------- chunk dispatch */

static int need(struct ptc_session *s, const struct ptc_chunk *c, size_t n, const char *what)
{
    if (c->h.payload_size >= n)
        return 0;
    return ptc_session_set_error(s, PTC_E_CORRUPT,
                                 "%s is corrupt: %s chunk %llu at byte %llu has %u payload "
                                 "bytes, fewer than the %zu it needs",
                                 s->src_name, what, (unsigned long long)c->index,
                                 (unsigned long long)c->offset, c->h.payload_size, n);
}

/* A new life of a process (exec, or pid reuse): its old threads end, its tables reset. */
static void proc_reset(struct ptc_session *s, struct proc *p)
{
    for (struct thread *t = p->threads; t; t = t->pnext) {
        if (t->waiting)
            give_up_waiting(s, t);
        if (t->started)
            ptc_thread_end(s, t);
        t->seq_seen = 0;
        t->next_seq = 0;
        t->started = 0;
        t->ended = 0;
    }
    for (uint32_t m = 0; m < p->nmods; m++)
        free_module(&p->mods[m]);
    p->nmods = 0;
    free(p->stubs);
    p->stubs = NULL;
    p->nstubs = 0;
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
        struct proc *p = ptc_proc_get(s, c->h.pid);
        if (!p)
            return ptc_session_set_error(s, PTC_E_NOMEM, "out of memory");
        if (c->h.type == PTC_CHUNK_PROCESS && p->seq_seen && seq == 0)
            proc_reset(s, p);
        next = &p->next_seq;
        seen = &p->seq_seen;
    } else {
        t = ptc_thread_get(s, c->h.pid, c->h.tid);
        if (!t)
            return ptc_session_set_error(s, PTC_E_NOMEM, "out of memory");
        if (c->h.type == PTC_CHUNK_THREAD && t->seq_seen && seq == 0 &&
            c->h.payload_size >= 4 && !memcmp(c->payload, &(uint32_t){PTC_THREAD_START}, 4)) {
            if (t->waiting)
                give_up_waiting(s, t);
            if (t->started) /* tid reuse: a new thread with the same id */
                ptc_thread_end(s, t);
            t->started = 0;
            t->ended = 0;
            t->seq_seen = 0;
        }
        next = &t->next_seq;
        seen = &t->seq_seen;
    }
    uint32_t want = *seen ? *next : 0;
    *seen = 1;
    *next = seq + 1;
    if (seq == want)
        return 0;
    uint64_t missing = seq > want ? (uint64_t)(seq - want) : 0;
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

int ptc_session_chunk(struct ptc_session *s, const struct ptc_chunk *c)
{
    s->chunk_index = c->index;
    s->chunk_offset = c->offset;
    s->tot.chunks++;
    uint16_t type = c->h.type;
    /* every chunk, whoever decodes it, takes a place in its (pid, tid) sequence */
    int e = check_seq(s, c);
    if (e)
        return e;
    for (int i = 0; i < s->nhandlers; i++)
        if (type >= s->handlers[i].first && type <= s->handlers[i].last)
            return s->handlers[i].fn(s->handlers[i].ctx, s, &c->h, c->payload);
    if (type > PTC_CHUNK_RECORD_END || type == 0) {
        if (c->h.flags & PTC_CHUNK_F_OPTIONAL) {
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
    const uint8_t *pl = c->payload;
    switch (type) {
    case PTC_CHUNK_RECORD_INFO: {
        struct ptc_record_info ri;
        if ((e = need(s, c, sizeof(ri), "RECORD_INFO")))
            return e;
        memcpy(&ri, pl, sizeof(ri));
        s->backend = ri.backend;
        s->file_flags |= ri.flags;
        return 0;
    }
    case PTC_CHUNK_PROCESS: {
        struct ptc_process pr;
        if ((e = need(s, c, sizeof(pr), "PROCESS")))
            return e;
        memcpy(&pr, pl, sizeof(pr));
        struct proc *p = ptc_proc_get(s, c->h.pid);
        if (!p)
            return ptc_session_set_error(s, PTC_E_NOMEM, "out of memory");
        p->have_process = 1;
        if (!s->have_origin) {
            s->have_origin = 1;
            s->origin_pid = c->h.pid;
            s->origin_tsc = pr.tsc;
        }
        p->ppid = pr.ppid;
        p->how = pr.how;
        p->parent_tid = pr.parent_tid;
        if (pr.how == PTC_PROC_FORK) {
            struct proc *pp = proc_find(s, pr.ppid);
            if (pp && pp != p)
                return inherit_modules(s, p, pp);
        }
        return 0;
    }
    case PTC_CHUNK_TIMEBASE: {
        struct ptc_timebase tb;
        if ((e = need(s, c, sizeof(tb), "TIMEBASE")))
            return e;
        memcpy(&tb, pl, sizeof(tb));
        if (tb.time_shift > 63)
            return ptc_session_set_error(s, PTC_E_CORRUPT,
                                         "%s is corrupt: TIMEBASE chunk %llu has shift %u",
                                         s->src_name, (unsigned long long)c->index,
                                         tb.time_shift);
        struct proc *p = ptc_proc_get(s, c->h.pid);
        if (!p)
            return ptc_session_set_error(s, PTC_E_NOMEM, "out of memory");
        p->tb = tb;
        p->has_tb = 1;
        if (!s->has_tb) {
            s->tb = tb;
            s->has_tb = 1;
        }
        return 0;
    }
    case PTC_CHUNK_MODULE:
        e = ptc_session_add_module(s, c->h.pid, pl, c->h.payload_size);
        if (e == -PTC_E_CORRUPT) {
            char tmp[sizeof(s->msg)];
            snprintf(tmp, sizeof(tmp), "%s", s->msg);
            ptc_session_set_error(s, PTC_E_CORRUPT, "%s is corrupt: chunk %llu at byte %llu: %s",
                                  s->src_name, (unsigned long long)c->index,
                                  (unsigned long long)c->offset, tmp);
        }
        return e;
    case PTC_CHUNK_MODULE_UNLOAD: {
        struct ptc_module_unload u;
        if ((e = need(s, c, sizeof(u), "MODULE_UNLOAD")))
            return e;
        memcpy(&u, pl, sizeof(u));
        struct proc *p = ptc_proc_get(s, c->h.pid);
        if (!p)
            return ptc_session_set_error(s, PTC_E_NOMEM, "out of memory");
        for (uint32_t i = 0; i < p->nmods; i++)
            if (p->mods[i].module_id == u.module_id)
                p->mods[i].unloaded = 1;
        return 0;
    }
    case PTC_CHUNK_THREAD: {
        struct ptc_thread th;
        if ((e = need(s, c, sizeof(th), "THREAD")))
            return e;
        memcpy(&th, pl, sizeof(th));
        if (c->h.tid == 0)
            return ptc_session_set_error(s, PTC_E_CORRUPT,
                                         "%s is corrupt: THREAD chunk %llu has tid 0",
                                         s->src_name, (unsigned long long)c->index);
        if (th.event == PTC_THREAD_EXIT) {
            struct thread *t = ptc_thread_get(s, c->h.pid, c->h.tid);
            if (!t)
                return ptc_session_set_error(s, PTC_E_NOMEM, "out of memory");
            if (t->started)
                ptc_thread_end(s, t);
        }
        return 0;
    }
    case PTC_CHUNK_SOFT_EVENTS:
        return ptc_soft_chunk(s, c);
    case PTC_CHUNK_LOSS: {
        struct ptc_loss l;
        if ((e = need(s, c, sizeof(l), "LOSS")))
            return e;
        memcpy(&l, pl, sizeof(l));
        return ptc_session_add_loss(s, c->h.pid, &l, payload_str(c, sizeof(l)));
    }
    case PTC_CHUNK_PROCESS_END: {
        struct ptc_process_end pe;
        if ((e = need(s, c, sizeof(pe), "PROCESS_END")))
            return e;
        struct proc *p = ptc_proc_get(s, c->h.pid);
        if (!p)
            return ptc_session_set_error(s, PTC_E_NOMEM, "out of memory");
        for (struct thread *t = p->threads; t; t = t->pnext)
            if (t->started)
                ptc_thread_end(s, t);
        p->ended = 1;
        return 0;
    }
    case PTC_CHUNK_RECORD_END: {
        struct ptc_record_end re;
        if ((e = need(s, c, sizeof(re), "RECORD_END")))
            return e;
        memcpy(&re, pl, sizeof(re));
        s->record_end = 1;
        s->wait_status = re.wait_status;
        return 0;
    }
    }
    return 0;
}
