/* The timeline's index (dec_timeline.h, docs/timeline-index.md): built by one streaming pass
 * over the trace (memory grows with its chunks and threads, not its events), saved whole
 * through a temporary file, and loaded. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dec_chunk.h"
#include "dec_tables.h"
#include "dec_timeline.h"

#define BIG_CAP 4096        /* a thread's calls kept for whole-run views, at most */

struct vec {
    void *p;
    uint64_t n, cap;
};

static int vec_push(struct vec *v, const void *item, size_t size)
{
    if (v->n == v->cap) {
        uint64_t cap = v->cap ? v->cap * 2 : 64;
        void *q = realloc(v->p, cap * size);
        if (!q)
            return -1;
        v->p = q;
        v->cap = cap;
    }
    memcpy((char *)v->p + v->n * size, item, size);
    v->n++;
    return 0;
}

struct bthr {
    struct tl_thr t;
    struct vec pts, frames, sums, bigs;
    uint64_t cur;           /* its current point + 1 (0: none yet) */
    uint64_t weight[PTC_TL_SUM_DEPTH]; /* the vote of the current point's dominant functions */
};

struct build {
    struct ptc_session *s;
    struct vec thr;         /* struct bthr */
    struct vec setup, marks, str;
    int nomem;
};

static uint32_t str_add(struct build *b, const char *s)
{
    uint32_t at = (uint32_t)b->str.n;
    size_t n = strlen(s ? s : "") + 1;
    for (size_t i = 0; i < n; i++)
        if (vec_push(&b->str, s && i + 1 < n ? &s[i] : "", 1))
            b->nomem = 1;
    return at;
}

static void big_prune(struct bthr *t)
{
    struct tl_big *g = t->bigs.p;
    uint64_t k = 0;
    for (uint64_t i = 0; i < t->bigs.n; i++)
        if (g[i].end - g[i].start >= t->t.big_min)
            g[k++] = g[i];
    t->bigs.n = k;
}

static void on_call(void *ctx, const struct ptc_call_event *e)
{
    struct build *b = ctx;
    uintptr_t u = *e->thread_user;
    if (!u)
        return;
    struct bthr *t = (struct bthr *)b->thr.p + (u - 1);
    if (e->kind == PTC_CALL_MARK) {
        struct ptc_tl_mark m = {.time = e->time, .thread = (uint32_t)(u - 1),
                                .label = (uint32_t)e->count};
        if (vec_push(&b->marks, &m, sizeof(m)))
            b->nomem = 1;
        return;
    }
    if (e->kind != PTC_CALL_RETURN || !t->cur)
        return;
    struct tl_point *p = (struct tl_point *)t->pts.p + (t->cur - 1);
    /* the difference of converted times, as windows and calls have it: a call's self time
     * from the summaries is then the same as from a decode */
    uint64_t start = tl_popped_start(b->s, e), dur = e->time - start;
    p->calls++;
    t->t.calls++;
    if (e->time > t->t.last)
        t->t.last = e->time;
    if (e->depth < PTC_TL_SUM_DEPTH) {
        while (p->nsum <= e->depth) {
            struct tl_sum z = {0};
            t->weight[p->nsum] = 0;
            if (vec_push(&t->sums, &z, sizeof(z))) {
                b->nomem = 1;
                return;
            }
            p->nsum++;
        }
        struct tl_sum *s = (struct tl_sum *)t->sums.p + p->sum_at + e->depth;
        uint64_t *w = &t->weight[e->depth];
        s->count++;
        s->busy += dur;
        if (s->count == 1 || s->func == e->func) {
            s->func = e->func;
            *w += dur;
        } else if (*w >= dur) {
            *w -= dur;
        } else {
            s->func = e->func;
            *w = dur - *w;
        }
    }
    if (dur >= t->t.big_min) {
        struct tl_big g = {.start = start, .end = e->time, .func = e->func,
                           .depth = e->depth};
        if (vec_push(&t->bigs, &g, sizeof(g)))
            b->nomem = 1;
        while (t->bigs.n > BIG_CAP) { /* keep the longest: the threshold doubles */
            t->t.big_min = t->t.big_min ? t->t.big_min * 2 : 1;
            big_prune(t);
        }
    }
}

static struct bthr *bthread(struct build *b, struct thread *th)
{
    if (!th->user) {
        struct bthr z;
        memset(&z, 0, sizeof(z));
        z.t.pid = th->pid;
        z.t.tid = th->tid;
        z.t.first = UINT64_MAX;
        z.t.big_min = 1000;
        if (vec_push(&b->thr, &z, sizeof(z)))
            return NULL;
        th->user = (uintptr_t)b->thr.n;
    }
    return (struct bthr *)b->thr.p + (th->user - 1);
}

/* A new point for an event chunk c of thread th: where it is, and the stack it starts with. */
static int point_begin(struct build *b, const struct ptc_chunk *c, struct thread *th)
{
    struct bthr *t = bthread(b, th);
    if (!t)
        return -1;
    struct ptc_soft_events h;
    memcpy(&h, c->payload, sizeof(h));
    struct tl_point p;
    memset(&p, 0, sizeof(p));
    p.offset = c->offset;
    p.index = c->index;
    p.bytes = c->h.payload_size;
    p.started = (uint32_t)th->started;
    p.depth = th->started ? th->depth : 0;
    p.frame_at = t->frames.n;
    p.sum_at = t->sums.n;
    p.t0 = ptc_event_time(b->s, th->proc, h.start_tsc);
    p.t1 = p.t0;
    for (uint32_t i = 0; i < p.depth; i++) {
        struct tl_frame f = {.func = th->frames[i].func, .flags = th->frames[i].flags,
                             .start = th->frames[i].start, .child = th->frames[i].child};
        if (vec_push(&t->frames, &f, sizeof(f)))
            return -1;
    }
    if (vec_push(&t->pts, &p, sizeof(p)))
        return -1;
    t->cur = t->pts.n;
    if (p.t0 < t->t.first)
        t->t.first = p.t0;
    return 0;
}

static void point_end(struct build *b, struct thread *th)
{
    struct bthr *t = (struct bthr *)b->thr.p + (th->user - 1);
    struct tl_point *p = (struct tl_point *)t->pts.p + (t->cur - 1);
    uint64_t last = ptc_event_time(b->s, th->proc, th->last);
    p->t1 = last > p->t0 ? last : p->t0;
    if (p->t1 > t->t.last)
        t->t.last = p->t1;
}

int tl_fail(char *err, size_t n, int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, n, fmt, ap);
    va_end(ap);
    return rc;
}

uint64_t tl_popped_start(struct ptc_session *s, const struct ptc_call_event *e)
{
    struct thread *t = ptc_thread_find(s, e->pid, e->tid);
    if (!t || e->depth >= t->cap)
        return e->time - e->dur;
    return ptc_event_time(s, t->proc, t->frames[e->depth].start);
}

static int scan(struct build *b, const char *trace, char *err, size_t n)
{
    struct ptc_reader *r;
    int rc = ptc_reader_open(&r, trace);
    if (!r)
        return tl_fail(err, n, -PTC_E_NOMEM, "out of memory");
    if (rc) {
        tl_fail(err, n, rc, "%s", ptc_reader_errmsg(r));
        ptc_reader_close(r);
        return rc;
    }
    b->s->src_name = trace;
    const struct ptc_file_header *fh = ptc_reader_header(r);
    b->s->backend = fh->backend;
    b->s->file_flags = fh->flags;
    b->s->created_ns = fh->created_ns;
    struct ptc_chunk c;
    while ((rc = ptc_reader_next(r, &c)) == 1) {
        uint16_t type = c.h.type;
        struct thread *th = NULL;
        if (type >= PTC_CHUNK_PT_FIRST && type <= PTC_CHUNK_PT_LAST) {
            rc = tl_fail(err, n, -PTC_E_UNSUPPORTED, "%s is an Intel PT trace: the timeline reads "
                      "soft-backend traces only (record without --backend pt)", trace);
            break;
        }
        if (type == PTC_CHUNK_SOFT_EVENTS && c.h.tid &&
            c.h.payload_size >= sizeof(struct ptc_soft_events)) {
            struct ptc_soft_events h;
            memcpy(&h, c.payload, sizeof(h));
            if (!(h.flags & PTC_SOFT_F_TIMED)) {
                rc = tl_fail(err, n, -PTC_E_UNSUPPORTED, "%s has no times (recorded untimed): a "
                          "timeline needs them; record it again with times", trace);
                break;
            }
            if (!(th = ptc_thread_get(b->s, c.h.pid, c.h.tid)) || point_begin(b, &c, th)) {
                rc = tl_fail(err, n, -PTC_E_NOMEM, "out of memory");
                break;
            }
        } else if (type != PTC_CHUNK_MARK) {
            struct tl_setup su = {.offset = c.offset, .index = c.index};
            if (vec_push(&b->setup, &su, sizeof(su))) {
                rc = tl_fail(err, n, -PTC_E_NOMEM, "out of memory");
                break;
            }
            if (c.h.tid) /* its thread gets its track's word before the chunk names it */
                bthread(b, ptc_thread_get(b->s, c.h.pid, c.h.tid));
        } else if (c.h.tid) {
            bthread(b, ptc_thread_get(b->s, c.h.pid, c.h.tid));
        }
        int e = ptc_session_chunk(b->s, &c);
        if (e) {
            rc = tl_fail(err, n, e, "%s", ptc_session_errmsg(b->s));
            break;
        }
        if (th)
            point_end(b, th);
        if (b->nomem) {
            rc = tl_fail(err, n, -PTC_E_NOMEM, "out of memory");
            break;
        }
    }
    if (rc < 0 && !*err)
        tl_fail(err, n, rc, "%s", ptc_reader_errmsg(r));
    ptc_reader_close(r);
    if (rc < 0)
        return rc;
    int e = ptc_session_finish(b->s);
    if (e)
        return tl_fail(err, n, e, "%s", ptc_session_errmsg(b->s));
    return b->nomem ? tl_fail(err, n, -PTC_E_NOMEM, "out of memory") : 0;
}

static int wr(FILE *f, const void *p, size_t size, uint64_t count)
{
    return count && fwrite(p, size, (size_t)count, f) != count ? -1 : 0;
}

static int mark_cmp(const void *a, const void *b)
{
    const struct ptc_tl_mark *x = a, *y = b;
    return x->time < y->time ? -1 : x->time > y->time;
}

static int save(struct build *b, const char *out, uint64_t trace_bytes, char *err, size_t n)
{
    struct tl_header h;
    memset(&h, 0, sizeof(h));
    memcpy(h.magic, TL_MAGIC, 8);
    h.version = PTC_TL_VERSION;
    h.header_size = sizeof(h);
    h.trace_bytes = trace_bytes;
    h.t0 = UINT64_MAX;
    h.nthreads = (uint32_t)b->thr.n;
    struct bthr *bt = b->thr.p;
    /* the arrays of all threads, one after the other; strings after the rest */
    for (uint32_t i = 0; i < h.nthreads; i++) {
        struct bthr *t = &bt[i];
        t->t.name = str_add(b, ptc_session_thread_name(b->s, t->t.pid, t->t.tid));
        t->t.process = str_add(b, ptc_session_process_name(b->s, t->t.pid));
        t->t.point_at = h.npoints;
        t->t.npoints = t->pts.n;
        t->t.big_at = h.nbigs;
        t->t.nbig = t->bigs.n;
        struct tl_point *p = t->pts.p;
        for (uint64_t k = 0; k < t->pts.n; k++) {
            p[k].frame_at += h.nframes;
            p[k].sum_at += h.nsums;
        }
        h.npoints += t->pts.n;
        h.nframes += t->frames.n;
        h.nsums += t->sums.n;
        h.nbigs += t->bigs.n;
        if (t->pts.n && t->t.first < h.t0)
            h.t0 = t->t.first;
        if (t->pts.n && t->t.last > h.t1)
            h.t1 = t->t.last;
        if (!t->pts.n)
            t->t.first = 0;
    }
    if (h.t0 == UINT64_MAX)
        h.t0 = 0;
    h.nfuncs = ptc_session_num_funcs(b->s);
    struct tl_funcent *fe = calloc(h.nfuncs ? h.nfuncs : 1, sizeof(*fe));
    uint32_t nl = ptc_session_num_mark_labels(b->s);
    uint32_t *lab = calloc(nl ? nl : 1, sizeof(*lab));
    if (!fe || !lab) {
        free(fe);
        free(lab);
        return tl_fail(err, n, -PTC_E_NOMEM, "out of memory");
    }
    for (uint32_t i = 0; i < h.nfuncs; i++) {
        const struct ptc_func_info *fi = ptc_session_func(b->s, i);
        fe[i].name = str_add(b, fi ? fi->name : "?");
        fe[i].file = str_add(b, fi ? fi->file : "");
        fe[i].line = fi ? fi->line : 0;
        fe[i].flags = ptc_session_func_blocking(b->s, i) ? TL_FUNC_BLOCKING : 0;
    }
    for (uint32_t i = 0; i < nl; i++)
        lab[i] = str_add(b, ptc_session_mark_label(b->s, i));
    h.nlabels = nl;
    h.nsetup = b->setup.n;
    h.nmarks = b->marks.n;
    if (b->marks.n)
        qsort(b->marks.p, b->marks.n, sizeof(struct ptc_tl_mark), mark_cmp);
    h.nstr = b->str.n;
    char tmp[4200];
    snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", out, (long)getpid());
    FILE *f = b->nomem ? NULL : fopen(tmp, "wbx");
    int bad = !f;
    if (f) {
        bad |= wr(f, &h, sizeof(h), 1);
        for (uint32_t i = 0; i < h.nthreads; i++)
            bad |= wr(f, &bt[i].t, sizeof(struct tl_thr), 1);
        for (uint32_t i = 0; i < h.nthreads; i++)
            bad |= wr(f, bt[i].pts.p, sizeof(struct tl_point), bt[i].pts.n);
        for (uint32_t i = 0; i < h.nthreads; i++)
            bad |= wr(f, bt[i].frames.p, sizeof(struct tl_frame), bt[i].frames.n);
        for (uint32_t i = 0; i < h.nthreads; i++)
            bad |= wr(f, bt[i].sums.p, sizeof(struct tl_sum), bt[i].sums.n);
        for (uint32_t i = 0; i < h.nthreads; i++)
            bad |= wr(f, bt[i].bigs.p, sizeof(struct tl_big), bt[i].bigs.n);
        bad |= wr(f, b->setup.p, sizeof(struct tl_setup), b->setup.n);
        bad |= wr(f, fe, sizeof(*fe), h.nfuncs);
        bad |= wr(f, b->marks.p, sizeof(struct ptc_tl_mark), b->marks.n);
        bad |= wr(f, lab, sizeof(*lab), nl);
        bad |= wr(f, b->str.p, 1, b->str.n);
        bad |= fclose(f) != 0;
    }
    free(fe);
    free(lab);
    if (bad || rename(tmp, out)) {
        int e = errno;
        unlink(tmp);
        return tl_fail(err, n, -PTC_E_IO, "cannot write the timeline index %s: %s", out,
                    b->nomem ? "out of memory" : strerror(e));
    }
    return 0;
}

int ptc_tl_build(const char *trace, const char *out, char *err, size_t n)
{
    *err = 0;
    struct build b;
    memset(&b, 0, sizeof(b));
    if (!(b.s = ptc_session_new()))
        return tl_fail(err, n, -PTC_E_NOMEM, "out of memory");
    ptc_session_skip_aggregates(b.s);
    ptc_session_set_call_hook(b.s, on_call, &b);
    int rc = scan(&b, trace, err, n);
    if (!rc) {
        FILE *f = fopen(trace, "rb");
        uint64_t size = 0;
        if (f && !fseek(f, 0, SEEK_END))
            size = (uint64_t)ftell(f);
        if (f)
            fclose(f);
        rc = save(&b, out, size, err, n);
    }
    struct bthr *bt = b.thr.p;
    for (uint64_t i = 0; i < b.thr.n; i++) {
        free(bt[i].pts.p);
        free(bt[i].frames.p);
        free(bt[i].sums.p);
        free(bt[i].bigs.p);
    }
    free(b.thr.p);
    free(b.setup.p);
    free(b.marks.p);
    free(b.str.p);
    ptc_session_free(b.s);
    return rc;
}

/* ---- loading ---- */

static int rd(FILE *f, void **p, size_t size, uint64_t count)
{
    if (count > (1ull << 40) / size)
        return -1;
    *p = malloc(count ? (size_t)(size * count) : 1);
    return !*p || (count && fread(*p, size, (size_t)count, f) != count) ? -1 : 0;
}

void ptc_tl_free(struct ptc_tl *x)
{
    if (!x)
        return;
    free(x->thr);
    free(x->pts);
    free(x->frames);
    free(x->sums);
    free(x->bigs);
    free(x->setup);
    free(x->funcs);
    free(x->marks);
    free(x->labels);
    free(x->str);
    free(x);
}

/* Whether the arrays point inside each other: a damaged file must not send a read astray. */
static int consistent(const struct ptc_tl *x)
{
    const struct tl_header *h = &x->h;
    if (h->nstr == 0 || x->str[h->nstr - 1])
        return 0;
    for (uint32_t i = 0; i < h->nthreads; i++) {
        const struct tl_thr *t = &x->thr[i];
        if (t->point_at > h->npoints || t->npoints > h->npoints - t->point_at ||
            t->big_at > h->nbigs || t->nbig > h->nbigs - t->big_at || t->name >= h->nstr ||
            t->process >= h->nstr)
            return 0;
    }
    for (uint64_t k = 0; k < h->npoints; k++) {
        const struct tl_point *p = &x->pts[k];
        if (p->frame_at > h->nframes || p->depth > h->nframes - p->frame_at ||
            p->sum_at > h->nsums || p->nsum > h->nsums - p->sum_at || p->nsum > PTC_TL_SUM_DEPTH)
            return 0;
    }
    for (uint32_t i = 0; i < h->nfuncs; i++)
        if (x->funcs[i].name >= h->nstr || x->funcs[i].file >= h->nstr)
            return 0;
    for (uint64_t i = 0; i < h->nmarks; i++)
        if (x->marks[i].thread >= h->nthreads)
            return 0;
    for (uint64_t i = 0; i < h->nlabels; i++)
        if (x->labels[i] >= h->nstr)
            return 0;
    return 1;
}

int ptc_tl_load(const char *path, struct ptc_tl **out, char *err, size_t n)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return tl_fail(err, n, -PTC_E_IO, "cannot open the timeline index %s: %s", path,
                    strerror(errno));
    struct ptc_tl *x = calloc(1, sizeof(*x));
    int rc = 0;
    if (!x)
        rc = tl_fail(err, n, -PTC_E_NOMEM, "out of memory");
    else if (fread(&x->h, sizeof(x->h), 1, f) != 1 || memcmp(x->h.magic, TL_MAGIC, 8))
        rc = tl_fail(err, n, -PTC_E_FORMAT, "%s is not a ptcall timeline index", path);
    else if (x->h.version != PTC_TL_VERSION || x->h.header_size != sizeof(x->h))
        rc = tl_fail(err, n, -PTC_E_VERSION, "%s is a timeline index of version %u, not %u: "
                  "build it again", path, x->h.version, PTC_TL_VERSION);
    else if (rd(f, (void **)&x->thr, sizeof(*x->thr), x->h.nthreads) ||
             rd(f, (void **)&x->pts, sizeof(*x->pts), x->h.npoints) ||
             rd(f, (void **)&x->frames, sizeof(*x->frames), x->h.nframes) ||
             rd(f, (void **)&x->sums, sizeof(*x->sums), x->h.nsums) ||
             rd(f, (void **)&x->bigs, sizeof(*x->bigs), x->h.nbigs) ||
             rd(f, (void **)&x->setup, sizeof(*x->setup), x->h.nsetup) ||
             rd(f, (void **)&x->funcs, sizeof(*x->funcs), x->h.nfuncs) ||
             rd(f, (void **)&x->marks, sizeof(*x->marks), x->h.nmarks) ||
             rd(f, (void **)&x->labels, sizeof(*x->labels), x->h.nlabels) ||
             rd(f, (void **)&x->str, 1, x->h.nstr) || !consistent(x))
        rc = tl_fail(err, n, -PTC_E_CORRUPT, "the timeline index %s is damaged or cut short: "
                  "delete it and it is built again", path);
    fclose(f);
    if (rc) {
        ptc_tl_free(x);
        return rc;
    }
    *out = x;
    return 0;
}

uint32_t ptc_tl_num_threads(const struct ptc_tl *x) { return x->h.nthreads; }

void ptc_tl_thread(const struct ptc_tl *x, uint32_t i, struct ptc_tl_thread_info *out)
{
    const struct tl_thr *t = &x->thr[i];
    out->pid = t->pid;
    out->tid = t->tid;
    out->name = x->str + t->name;
    out->process = x->str + t->process;
    out->first = t->first;
    out->last = t->last;
    out->chunks = t->npoints;
    out->calls = t->calls;
}

void ptc_tl_span(const struct ptc_tl *x, uint64_t *t0, uint64_t *t1)
{
    *t0 = x->h.t0;
    *t1 = x->h.t1;
}

uint32_t ptc_tl_num_funcs(const struct ptc_tl *x) { return x->h.nfuncs; }

void ptc_tl_func(const struct ptc_tl *x, uint32_t id, const char **name, const char **file,
                 uint32_t *line)
{
    if (id >= x->h.nfuncs) {
        *name = "?";
        *file = "";
        *line = 0;
        return;
    }
    *name = x->str + x->funcs[id].name;
    *file = x->str + x->funcs[id].file;
    *line = x->funcs[id].line;
}

int ptc_tl_func_blocking(const struct ptc_tl *x, uint32_t id)
{
    return id < x->h.nfuncs && (x->funcs[id].flags & TL_FUNC_BLOCKING);
}

uint64_t ptc_tl_bytes(const struct ptc_tl *x)
{
    const struct tl_header *h = &x->h;
    return sizeof(*x) + h->nthreads * sizeof(struct tl_thr) + h->npoints * sizeof(struct tl_point) +
           h->nframes * sizeof(struct tl_frame) + h->nsums * sizeof(struct tl_sum) +
           h->nbigs * sizeof(struct tl_big) + h->nsetup * sizeof(struct tl_setup) +
           h->nfuncs * sizeof(struct tl_funcent) + h->nmarks * sizeof(struct ptc_tl_mark) +
           h->nlabels * sizeof(uint32_t) + h->nstr;
}

uint64_t ptc_tl_num_marks(const struct ptc_tl *x) { return x->h.nmarks; }
const struct ptc_tl_mark *ptc_tl_marks(const struct ptc_tl *x) { return x->marks; }

const char *ptc_tl_mark_label(const struct ptc_tl *x, uint32_t label)
{
    return label < x->h.nlabels ? x->str + x->labels[label] : "";
}
