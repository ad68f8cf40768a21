/* aggregate.h */
#include "aggregate.h"

#include <stdlib.h>
#include <string.h>

/* Per thread: how many activations of each function are open, so that a recursive
 * function's total counts only its outermost activation (as the decoder's does). */
struct athread {
    uint32_t *active;
    uint32_t nactive;
    size_t group;
};

struct agg_view {
    const struct ptc_session *s;
    struct ptc_agg a;
    int failed;
};

void ptc_agg_free(struct ptc_agg *a)
{
    for (size_t i = 0; i < a->ngroups; i++)
        free(a->groups[i].st);
    free(a->groups);
    free(a->edges);
    free(a->ehash);
    memset(a, 0, sizeof(*a));
}

static struct ptc_agg_group *group_add(struct ptc_agg *a, uint32_t pid, uint32_t tid)
{
    if (a->ngroups == a->capgroups) {
        size_t nc = a->capgroups ? a->capgroups * 2 : 8;
        struct ptc_agg_group *g = realloc(a->groups, nc * sizeof(*g));
        if (!g)
            return NULL;
        a->groups = g;
        a->capgroups = nc;
    }
    struct ptc_agg_group *g = &a->groups[a->ngroups++];
    memset(g, 0, sizeof(*g));
    g->pid = pid;
    g->tid = tid;
    return g;
}

static int group_reserve(struct ptc_agg_group *g, uint32_t f)
{
    if (f < g->nfuncs)
        return 0;
    uint32_t nc = g->nfuncs ? g->nfuncs : 256;
    while (nc <= f)
        nc *= 2;
    struct ptc_func_stats *st = realloc(g->st, (size_t)nc * sizeof(*st));
    if (!st)
        return -1;
    memset(st + g->nfuncs, 0, (size_t)(nc - g->nfuncs) * sizeof(*st));
    g->st = st;
    g->nfuncs = nc;
    return 0;
}

static uint32_t ehash(uint64_t k) { return (uint32_t)((k * 0x9E3779B97F4A7C15ULL) >> 32); }

static int edge_add(struct ptc_agg *a, uint32_t caller, uint32_t callee, uint64_t n)
{
    uint64_t key = (uint64_t)caller << 32 | callee;
    if ((a->nedges + 1) * 2 > a->ehcap) {
        size_t nc = a->ehcap ? a->ehcap * 2 : 256;
        uint64_t *h = calloc(nc, sizeof(*h));
        if (!h)
            return -1;
        for (size_t i = 0; i < a->nedges; i++) {
            const struct ptc_edge *e = &a->edges[i];
            size_t b = ehash((uint64_t)e->caller << 32 | e->callee) & (nc - 1);
            while (h[b])
                b = (b + 1) & (nc - 1);
            h[b] = i + 1;
        }
        free(a->ehash);
        a->ehash = h;
        a->ehcap = nc;
    }
    size_t b = ehash(key) & (a->ehcap - 1);
    while (a->ehash[b]) {
        struct ptc_edge *e = &a->edges[a->ehash[b] - 1];
        if (e->caller == caller && e->callee == callee) {
            e->count += n;
            return 0;
        }
        b = (b + 1) & (a->ehcap - 1);
    }
    if (a->nedges == a->capedges) {
        size_t nc = a->capedges ? a->capedges * 2 : 256;
        struct ptc_edge *ne = realloc(a->edges, nc * sizeof(*ne));
        if (!ne)
            return -1;
        a->edges = ne;
        a->capedges = nc;
    }
    a->edges[a->nedges] = (struct ptc_edge){caller, callee, n};
    a->ehash[b] = ++a->nedges;
    return 0;
}

int ptc_agg_from_session(struct ptc_agg *a, const struct ptc_session *s)
{
    memset(a, 0, sizeof(*a));
    uint32_t nf = ptc_session_num_funcs(s);
    struct ptc_agg_group *g = group_add(a, 0, 0);
    if (!g || (nf && group_reserve(g, nf - 1)))
        goto oom;
    for (uint32_t id = 0; id < nf; id++) {
        ptc_session_func_stats(s, id, &g->st[id]);
        g->calls += g->st[id].calls;
    }
    struct ptc_edge *edges;
    size_t ne = ptc_session_edges(s, &edges);
    if (ne == (size_t)-1)
        goto oom;
    a->edges = edges;
    a->nedges = a->capedges = ne;
    return 0;
oom:
    ptc_agg_free(a);
    return -1;
}

static struct athread *athread_of(struct agg_view *v, const struct ptc_out_event *e)
{
    struct athread *t = (struct athread *)*e->thread_user;
    if (t)
        return t;
    t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    struct ptc_agg *a = &v->a;
    uint32_t pid = a->by ? e->pid : 0, tid = a->by == PTC_BY_THREAD ? e->tid : 0;
    size_t i = 0;
    while (i < a->ngroups && (a->groups[i].pid != pid || a->groups[i].tid != tid))
        i++;
    if (i == a->ngroups && !group_add(a, pid, tid)) {
        free(t);
        return NULL;
    }
    t->group = i;
    *e->thread_user = (uintptr_t)t;
    return t;
}

/* The event's thread state and group, with room for its function; NULL when out of
 * memory. */
static struct ptc_agg_group *group_for(struct agg_view *v, const struct ptc_out_event *e,
                                       struct athread **tp)
{
    struct athread *t = athread_of(v, e);
    if (!t)
        return NULL;
    struct ptc_agg_group *g = &v->a.groups[t->group];
    if (group_reserve(g, e->func))
        return NULL;
    *tp = t;
    return g;
}

static int agg_enter(void *view, const struct ptc_out_event *e)
{
    struct agg_view *v = view;
    if (e->inherited) /* not a call: counted in the parent */
        return 0;
    struct athread *t;
    struct ptc_agg_group *g = group_for(v, e, &t);
    if (!g)
        return 1;
    g->st[e->func].calls++;
    g->calls++;
    if (e->depth && edge_add(&v->a, e->path[e->depth - 1], e->func, 1))
        return 1;
    if (e->func >= t->nactive) {
        uint32_t nc = t->nactive ? t->nactive : 256;
        while (nc <= e->func)
            nc *= 2;
        uint32_t *na = realloc(t->active, (size_t)nc * sizeof(*na));
        if (!na)
            return 1;
        memset(na + t->nactive, 0, (size_t)(nc - t->nactive) * sizeof(*na));
        t->active = na;
        t->nactive = nc;
    }
    t->active[e->func]++;
    return 0;
}

static int agg_ret(void *view, const struct ptc_out_event *e)
{
    struct agg_view *v = view;
    struct athread *t;
    struct ptc_agg_group *g = group_for(v, e, &t);
    if (!g)
        return 1;
    if (e->before) { /* a call whose enter came before the window: counted at its return */
        g->st[e->func].calls++;
        g->calls++;
    }
    g->st[e->func].self += e->self;
    /* a blocking call's time is its caller's blocked time (trace format 2.6) */
    if (e->depth && ptc_session_func_blocking(v->s, e->func)) {
        uint32_t caller = e->path[e->depth - 1];
        if (group_reserve(g, caller))
            return 1;
        g->st[caller].blocked += e->dur;
    }
    /* outermost activation only; a frame entered before this thread's events began (or
     * inherited) has no count and is outermost by definition */
    if (e->func < t->nactive && t->active[e->func]) {
        if (--t->active[e->func] == 0)
            g->st[e->func].total += e->dur;
    } else {
        g->st[e->func].total += e->dur;
    }
    return 0;
}

static int agg_thread_end(void *view, uint32_t pid, uint32_t tid, uintptr_t *user)
{
    (void)view;
    (void)pid;
    (void)tid;
    struct athread *t = (struct athread *)*user;
    if (t) {
        free(t->active);
        free(t);
        *user = 0;
    }
    return 0;
}

static void agg_free(void *view)
{
    struct agg_view *v = view;
    ptc_agg_free(&v->a);
    free(v);
}

static const struct ptc_output_ops agg_ops = {
    .name = "aggregate",
    .enter = agg_enter,
    .ret = agg_ret,
    .thread_end = agg_thread_end,
    .free = agg_free,
};

void *ptc_view_aggregate(const struct ptc_view_opts *o, const struct ptc_output_ops **ops)
{
    struct agg_view *v = calloc(1, sizeof(*v));
    if (!v)
        return NULL;
    v->s = o->s;
    v->a.by = o->by;
    if (!o->by && !group_add(&v->a, 0, 0)) {
        free(v);
        return NULL;
    }
    *ops = &agg_ops;
    return v;
}

const struct ptc_agg *ptc_view_aggregate_result(const void *view)
{
    return &((const struct agg_view *)view)->a;
}
