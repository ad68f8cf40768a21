/* The output driver: from the session's call hook to a view's callbacks. It keeps, per
 * thread, the frames the decoder reports (function, start, time in shown callees, whether
 * the filters show it), so that views get the path from the root and self time without
 * rebuilding stacks, and it applies the filters in one place. */
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "ptc_select.h"

#define HOT static inline __attribute__((always_inline))
#define KIND_THREAD_END 200 /* the driver's own kind: a thread's end */

struct dframe {
    uint32_t func;
    uint8_t shown;          /* the filters keep it */
    uint8_t emitted;        /* its enter went out (min-duration holds it back until then) */
    uint8_t inherited;
    uint32_t user;          /* the view's word for this frame (ptc_out_event.frame_user) */
    uint64_t start;         /* relative time */
    uint64_t child;         /* time in emitted callees */
};

struct dthread {
    uint32_t pid, tid;
    int selected;           /* --pid/--tid keep it */
    int started;            /* thread_start went out */
    int ended;
    struct dframe *fr;
    uint32_t *path;
    uint32_t cap, depth;
    int32_t froot;          /* depth of the outermost --function match on the stack, -1 */
    int32_t xroot;          /* depth of the outermost --exclude match, -1 */
    uint64_t unwound;       /* frames left other than by their exit (unwound, repaired,
                               popped by a landing pad) since the last entry or exit: what a
                               landing pad resumes after (0 at a setjmp's first return) */
    uintptr_t view_user;
    struct dthread *next;
};

struct forksnap {
    uint32_t child;
    uint32_t n;
    struct dframe *fr;
    uint32_t *path;
    struct forksnap *next;
};

struct ptc_out_driver {
    struct ptc_out_run run;
    struct ptc_session *s;
    struct ptc_out_info info;
    int have_base;
    uint64_t base;
    int begun;              /* the view's begin went out */
    int failed;
    int status;
    struct dthread *threads;
    struct forksnap *forks;
    uint8_t *fmatch, *xmatch;   /* per function: 0 unknown, 1 match, 2 no */
    uint32_t nmatch;
};

/* A view failed (status r) or memory ran out (1): the remaining events are not shown. */
static int fail(struct ptc_out_driver *d, int r)
{
    d->failed = 1;
    d->status = r;
    return r;
}

/* ------------------------------------------------------------------ names and globs */

const char *ptc_out_base(const char *path)
{
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
}

/* The one rule for globs over function names lives in common/ptc_select.c, where
 * `ptcall record --only/--skip` and the runtime use it too. */
const char *ptc_out_short_name(const char *name, char *buf, size_t n)
{
    return ptc_func_short_name(name, buf, n);
}

int ptc_out_glob_match(const char *glob, const struct ptc_func_info *fi)
{
    return ptc_glob_func(glob, fi->name, fi->linkage_name);
}

static int grow_match(struct ptc_out_driver *d, uint32_t f)
{
    uint32_t nc = d->nmatch ? d->nmatch : 256;
    while (nc <= f)
        nc *= 2;
    uint8_t *a = realloc(d->fmatch, nc), *b;
    if (!a)
        return -1;
    d->fmatch = a;
    b = realloc(d->xmatch, nc);
    if (!b)
        return -1;
    d->xmatch = b;
    memset(d->fmatch + d->nmatch, 0, nc - d->nmatch);
    memset(d->xmatch + d->nmatch, 0, nc - d->nmatch);
    d->nmatch = nc;
    return 0;
}

static int any_glob(const char **globs, int n, const struct ptc_func_info *fi)
{
    for (int i = 0; i < n; i++)
        if (ptc_out_glob_match(globs[i], fi))
            return 1;
    return 0;
}

/* Whether func matches the --function (which = 0) or --exclude (1) globs. */
static int matches(struct ptc_out_driver *d, uint32_t func, int which)
{
    const struct ptc_out_filter *f = &d->run.filter;
    if (func == UINT32_MAX || (which ? !f->nexcludes : !f->nfuncs))
        return 0;
    if (func >= d->nmatch && grow_match(d, func)) {
        fail(d, 1); /* out of memory: said by the command, not a silently short output */
        return 0;
    }
    uint8_t *m = which ? &d->xmatch[func] : &d->fmatch[func];
    if (!*m) {
        const struct ptc_func_info *fi = ptc_session_func(d->s, func);
        int hit = fi && (which ? any_glob(f->excludes, f->nexcludes, fi)
                               : any_glob(f->funcs, f->nfuncs, fi));
        *m = hit ? 1 : 2;
    }
    return *m == 1;
}

/* ------------------------------------------------------------------ threads */

static int frames_reserve(struct dthread *t, uint32_t n)
{
    if (n <= t->cap)
        return 0;
    uint32_t nc = t->cap ? t->cap : 64;
    while (nc < n)
        nc *= 2;
    struct dframe *fr = realloc(t->fr, (size_t)nc * sizeof(*fr));
    if (!fr)
        return -1;
    t->fr = fr;
    uint32_t *p = realloc(t->path, (size_t)nc * sizeof(*p));
    if (!p)
        return -1;
    t->path = p;
    t->cap = nc;
    return 0;
}

static struct dthread *thread_new(struct ptc_out_driver *d, const struct ptc_call_event *e)
{
    struct dthread *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->pid = e->pid;
    t->tid = e->tid;
    t->froot = t->xroot = -1;
    const struct ptc_out_filter *f = &d->run.filter;
    t->selected = (!f->have_pid || f->pid == e->pid) && (!f->have_tid || f->tid == e->tid);
    t->next = d->threads;
    d->threads = t;
    *e->thread_user = (uintptr_t)t;
    return t;
}

HOT struct dthread *thread_of(struct ptc_out_driver *d, const struct ptc_call_event *e)
{
    struct dthread *t = (struct dthread *)*e->thread_user;
    return t ? t : thread_new(d, e);
}

/* Recomputes the --function and --exclude roots of frames [0, depth). */
static void find_roots(struct ptc_out_driver *d, struct dthread *t)
{
    t->froot = t->xroot = -1;
    for (uint32_t i = 0; i < t->depth; i++) {
        if (t->froot < 0 && matches(d, t->fr[i].func, 0))
            t->froot = (int32_t)i;
        if (t->xroot < 0 && matches(d, t->fr[i].func, 1))
            t->xroot = (int32_t)i;
    }
}

/* ------------------------------------------------------------------ handing out */

HOT int deliver(struct ptc_out_driver *d, const struct ptc_out_event *e, struct dthread *t)
{
    const struct ptc_output_ops *o = d->run.ops;
    void *v = d->run.view;
    switch (e->kind) {
    case PTC_CALL_ENTER:
        d->info.shown_calls += !e->inherited;
        return o->enter ? o->enter(v, e) : 0;
    case PTC_CALL_RETURN:
        return o->ret ? o->ret(v, e) : 0;
    case PTC_CALL_GAP:
        return o->gap ? o->gap(v, e) : 0;
    case PTC_CALL_FORK:
    case PTC_CALL_FORKED:
    case PTC_CALL_SPAWN:
        return o->fork ? o->fork(v, e) : 0;
    case PTC_CALL_UNMATCHED:
    case PTC_CALL_LANDING:
        return o->note ? o->note(v, e) : 0;
    case PTC_CALL_MARK:
        d->info.shown_marks++;
        return o->mark ? o->mark(v, e) : 0;
    case KIND_THREAD_END:
        return o->thread_end ? o->thread_end(v, t->pid, t->tid, &t->view_user) : 0;
    }
    return 0;
}

/* The view's begin, once, when the first event goes out (or at the end): by then the
 * session knows whether the trace is timed and has a time base. */
static int begin(struct ptc_out_driver *d)
{
    if (d->begun)
        return 0;
    d->begun = 1;
    struct ptc_totals tot;
    ptc_session_totals(d->s, &tot);
    d->info.ns = tot.has_timebase;
    if (tot.timed)
        d->info.timed = 1;
    int r = d->run.ops->begin ? d->run.ops->begin(d->run.view, &d->info) : 0;
    if (r) {
        fail(d, r);
    }
    return r;
}

HOT int emit(struct ptc_out_driver *d, struct ptc_out_event *e, struct dthread *t)
{
    if (d->failed)
        return -1;
    e->thread_user = &t->view_user;
    int r;
    if (__builtin_expect(!d->begun, 0) && (r = begin(d)))
        return r;
    if (__builtin_expect(!t->started, 0) && e->kind != KIND_THREAD_END) {
        t->started = 1;
        struct ptc_out_event ts = *e;
        ts.path = NULL;
        if (d->run.ops->thread_start && (r = d->run.ops->thread_start(d->run.view, &ts))) {
            return fail(d, r);
        }
    }
    if ((r = deliver(d, e, t))) {
        fail(d, r);
    }
    return r;
}

/* The enter event of frame i of t. */
HOT int emit_enter(struct ptc_out_driver *d, struct dthread *t, uint32_t i, int has_time,
                      int inherited)
{
    struct dframe *fr = &t->fr[i];
    uint32_t root = t->froot >= 0 ? (uint32_t)t->froot : 0;
    struct ptc_out_event e = {
        .pid = t->pid, .tid = t->tid, .depth = i - root, .func = fr->func,
        .path = t->path + root, .time = fr->start, .start = fr->start,
        .kind = PTC_CALL_ENTER, .has_time = (uint8_t)has_time, .inherited = (uint8_t)inherited,
        .frame_user = &fr->user, .parent_user = i > root ? &t->fr[i - 1].user : NULL,
    };
    fr->emitted = 1;
    return emit(d, &e, t);
}

/* ------------------------------------------------------------------ the hook */

static void set_base(struct ptc_out_driver *d, uint64_t abs)
{
    uint64_t origin;
    d->have_base = 1;
    d->base = ptc_session_origin(d->s, &origin) == 0 && origin <= abs ? origin : abs;
    d->info.origin = d->base;
}

HOT uint64_t rel_time(struct ptc_out_driver *d, uint64_t abs)
{
    if (__builtin_expect(!d->have_base, 0))
        set_base(d, abs);
    return abs > d->base ? abs - d->base : 0;
}

/* Frame dep of t for func from start, on top of the stack. inherited: a frame whose enter
 * the driver did not see (its enter counts as gone out). */
HOT struct dframe *open_frame(struct dthread *t, uint32_t dep, uint32_t func, uint64_t start,
                              int inherited)
{
    struct dframe *fr = &t->fr[dep];
    fr->func = func;
    fr->start = start;
    fr->child = 0;
    fr->emitted = (uint8_t)inherited;
    fr->inherited = (uint8_t)inherited;
    fr->user = 0;
    t->path[dep] = func;
    t->depth = dep + 1;
    return fr;
}

HOT int shown_here(const struct ptc_out_driver *d, const struct dthread *t, uint32_t depth,
                      uint64_t start)
{
    if (!d->info.filtered)
        return 1;
    const struct ptc_out_filter *f = &d->run.filter;
    if (f->nfuncs && t->froot < 0)
        return 0;
    if (t->xroot >= 0)
        return 0;
    uint32_t rel = depth - (t->froot >= 0 ? (uint32_t)t->froot : 0);
    if (f->max_depth && rel >= f->max_depth)
        return 0;
    if (f->have_window && (start < f->win_start || start > f->win_end))
        return 0;
    return 1;
}

HOT void on_enter(struct ptc_out_driver *d, struct dthread *t, const struct ptc_call_event *ce,
                     uint64_t now)
{
    uint32_t dep = ce->depth;
    if (__builtin_expect(dep + 1 > t->cap, 0) && frames_reserve(t, dep + 1)) {
        fail(d, 1);
        return;
    }
    t->depth = dep; /* the decoder's depth is the truth */
    t->unwound = 0;
    if (t->froot >= (int32_t)dep)
        t->froot = -1;
    if (t->xroot >= (int32_t)dep)
        t->xroot = -1;
    struct dframe *fr = open_frame(t, dep, ce->func, now, 0);
    if (d->run.filter.nfuncs && t->froot < 0 && matches(d, ce->func, 0))
        t->froot = (int32_t)dep;
    if (d->run.filter.nexcludes && t->xroot < 0 && matches(d, ce->func, 1))
        t->xroot = (int32_t)dep;
    fr->shown = (uint8_t)(t->selected && shown_here(d, t, dep, now));
    if (fr->shown && !d->run.filter.min_dur)
        emit_enter(d, t, dep, ce->has_time, 0);
}

HOT void on_return(struct ptc_out_driver *d, struct dthread *t, const struct ptc_call_event *ce,
                      uint64_t now)
{
    uint32_t dep = ce->depth;
    t->unwound = ce->how == PTC_RET_EXIT ? 0 : t->unwound + 1;
    if (dep >= t->depth || t->fr[dep].func != ce->func) {
        /* a frame the driver did not see enter (inherited without a snapshot): make one */
        if (frames_reserve(t, dep + 1)) {
            fail(d, 1);
            return;
        }
        for (uint32_t i = t->depth; i < dep; i++) {
            t->fr[i] = (struct dframe){.func = UINT32_MAX, .emitted = 1};
            t->path[i] = UINT32_MAX;
        }
        struct dframe *fr = open_frame(t, dep, ce->func, ce->dur <= now ? now - ce->dur : 0, 1);
        find_roots(d, t);
        fr->shown = (uint8_t)(t->selected && shown_here(d, t, dep, fr->start));
    }
    struct dframe *fr = &t->fr[dep];
    /* the duration between the converted times of entry and return, not the decoder's
     * converted tick count: then a call's start plus its duration is its end, exactly, and
     * calls that follow each other in a thread meet without overlap */
    uint64_t dur = now >= fr->start ? now - fr->start : 0;
    int out = fr->shown;
    /* --min-duration holds an enter back until its return; a frame whose enter went out
     * (a callee that lasted long enough, or inherited across fork) returns in any case */
    if (out && d->run.filter.min_dur && dur < d->run.filter.min_dur && !fr->emitted)
        out = 0;
    if (out) {
        uint32_t root = t->froot >= 0 ? (uint32_t)t->froot : 0;
        if (d->run.filter.min_dur) /* enters held back by --min-duration go out first */
            for (uint32_t i = root; i <= dep; i++)
                if (t->fr[i].shown && !t->fr[i].emitted)
                    emit_enter(d, t, i, ce->has_time, 0);
        struct ptc_out_event e = {
            .pid = t->pid, .tid = t->tid, .depth = dep - root, .func = ce->func,
            .path = t->path + root, .time = now, .start = fr->start, .dur = dur,
            .self = dur > fr->child ? dur - fr->child : 0, .kind = PTC_CALL_RETURN,
            .how = ce->how, .has_time = ce->has_time, .inherited = ce->inherited,
            .before = ce->before, .count = ce->before ? ce->count : 0,
            .frame_user = &fr->user, .parent_user = dep > root ? &t->fr[dep - 1].user : NULL,
        };
        emit(d, &e, t);
        if (dep > 0)
            t->fr[dep - 1].child += dur;
    }
    t->depth = dep;
    if (t->froot >= (int32_t)dep)
        t->froot = -1;
    if (t->xroot >= (int32_t)dep)
        t->xroot = -1;
}

static void save_fork(struct ptc_out_driver *d, struct dthread *t, uint32_t child)
{
    struct forksnap *f = calloc(1, sizeof(*f));
    if (!f)
        return; /* the child then shows its inherited frames without names */
    f->child = child;
    f->n = t->depth;
    if (t->depth) {
        f->fr = malloc(t->depth * sizeof(*f->fr));
        f->path = malloc(t->depth * sizeof(*f->path));
        if (!f->fr || !f->path) {
            free(f->fr);
            free(f->path);
            free(f);
            return;
        }
        memcpy(f->fr, t->fr, t->depth * sizeof(*f->fr));
        memcpy(f->path, t->path, t->depth * sizeof(*f->path));
    }
    f->next = d->forks;
    d->forks = f;
}

static void start_forked(struct ptc_out_driver *d, struct dthread *t, uint32_t n, uint64_t now)
{
    struct forksnap **pp = &d->forks, *f;
    while ((f = *pp) && f->child != t->pid)
        pp = &f->next;
    if (frames_reserve(t, n + 1)) {
        fail(d, 1);
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (f && i < f->n) {
            t->fr[i] = f->fr[i];
            t->path[i] = f->path[i];
        } else {
            t->fr[i] = (struct dframe){.func = UINT32_MAX};
            t->path[i] = UINT32_MAX;
        }
        t->fr[i].start = now; /* inherited frames' times count from the fork */
        t->fr[i].child = 0;
        t->fr[i].user = 0;
        t->fr[i].emitted = 1;
        t->fr[i].inherited = 1;
    }
    t->depth = n;
    find_roots(d, t);
    for (uint32_t i = 0; i < n; i++)
        t->fr[i].shown = (uint8_t)(t->selected && shown_here(d, t, i, now));
    if (f) {
        *pp = f->next;
        free(f->fr);
        free(f->path);
        free(f);
    }
}

static void hook(void *ctx, const struct ptc_call_event *ce)
{
    struct ptc_out_driver *d = ctx;
    if (d->failed)
        return;
    struct dthread *t = thread_of(d, ce);
    if (!t) {
        fail(d, 1);
        return;
    }
    if (!d->info.timed && ce->has_time)
        d->info.timed = 1;
    /* an untimed trace's events carry no time worth converting: all are 0 */
    uint64_t now = ce->has_time ? rel_time(d, ce->time) : 0;
    if (now > d->info.last_time)
        d->info.last_time = now;
    switch (ce->kind) {
    case PTC_CALL_ENTER:
        on_enter(d, t, ce, now);
        return;
    case PTC_CALL_RETURN:
        on_return(d, t, ce, now);
        return;
    case PTC_CALL_FORKED:
        start_forked(d, t, ce->depth, now);
        break;
    case PTC_CALL_GAP:
        t->depth = 0;
        t->froot = t->xroot = -1;
        t->unwound = 0;
        break;
    case PTC_CALL_FORK:
        save_fork(d, t, (uint32_t)ce->count);
        break;
    default:
        break;
    }
    /* a landing pad's note says how many frames it resumes after (none: the first return
     * of setjmp, which passes the landing stub too) */
    uint64_t unwound = t->unwound;
    if (ce->kind == PTC_CALL_LANDING)
        t->unwound = 0;
    if (!t->selected)
        return;
    struct ptc_out_event e;
    memset(&e, 0, sizeof(e));
    e.pid = t->pid;
    e.tid = t->tid;
    e.func = ce->func;
    e.time = now;
    e.count = ce->kind == PTC_CALL_FORKED   ? ce->depth
              : ce->kind == PTC_CALL_LANDING ? unwound
                                             : ce->count;
    e.kind = ce->kind;
    e.has_time = ce->has_time;
    if (ce->kind == PTC_CALL_UNMATCHED || ce->kind == PTC_CALL_LANDING ||
        ce->kind == PTC_CALL_MARK) {
        uint32_t dep = ce->depth;
        if (!shown_here(d, t, dep < t->depth ? dep : t->depth, now))
            return;
        e.depth = dep - (t->froot >= 0 ? (uint32_t)t->froot : 0);
    }
    emit(d, &e, t);
    if (ce->kind == PTC_CALL_FORKED) /* the frames the child starts inside, outermost first */
        for (uint32_t i = 0; i < t->depth; i++)
            if (t->fr[i].shown)
                emit_enter(d, t, i, ce->has_time, 1);
}

static void thread_end_hook(void *ctx, uint32_t pid, uint32_t tid, uintptr_t *user)
{
    struct ptc_out_driver *d = ctx;
    struct dthread *t = (struct dthread *)*user;
    (void)pid;
    (void)tid;
    if (!t || t->ended)
        return;
    t->ended = 1;
    if (t->started && !d->failed) {
        struct ptc_out_event e;
        memset(&e, 0, sizeof(e));
        e.pid = t->pid;
        e.tid = t->tid;
        e.kind = KIND_THREAD_END;
        emit(d, &e, t);
    }
    free(t->fr);
    free(t->path);
    t->fr = NULL;
    t->path = NULL;
    t->cap = t->depth = 0;
}

/* ------------------------------------------------------------------ lifetime */

struct ptc_out_driver *ptc_out_driver_new(const struct ptc_out_run *run, struct ptc_session *s,
                                          const char *trace)
{
    struct ptc_out_driver *d = calloc(1, sizeof(*d));
    if (!d)
        return NULL;
    d->run = *run;
    d->s = s;
    const struct ptc_out_filter *f = &run->filter;
    d->info.s = s;
    d->info.trace = trace;
    d->info.filter = &d->run.filter;
    d->info.filtered = f->have_pid || f->have_tid || f->nfuncs || f->nexcludes ||
                       f->max_depth || f->have_window || f->min_dur;
    struct ptc_totals tot;
    ptc_session_totals(s, &tot);
    d->info.ns = tot.has_timebase;
    ptc_session_set_call_hook(s, hook, d);
    ptc_session_set_thread_end_hook(s, thread_end_hook, d);
    return d;
}

int ptc_out_driver_finish(struct ptc_out_driver *d, struct ptc_out_info *info)
{
    if (!d->failed)
        begin(d);
    for (struct dthread *t = d->threads; t && !d->failed; t = t->next) {
        uintptr_t user = (uintptr_t)t;
        thread_end_hook(d, t->pid, t->tid, &user); /* threads the session left open */
    }
    int r = d->status;
    if (!d->failed && d->run.ops->end)
        r = d->run.ops->end(d->run.view, &d->info);
    if (info)
        *info = d->info;
    return r;
}

int ptc_out_driver_failed(const struct ptc_out_driver *d) { return d->failed; }

void ptc_out_driver_free(struct ptc_out_driver *d)
{
    if (!d)
        return;
    while (d->threads) {
        struct dthread *t = d->threads;
        d->threads = t->next;
        free(t->fr);
        free(t->path);
        free(t);
    }
    while (d->forks) {
        struct forksnap *f = d->forks;
        d->forks = f->next;
        free(f->fr);
        free(f->path);
        free(f);
    }
    free(d->fmatch);
    free(d->xmatch);
    free(d);
}
