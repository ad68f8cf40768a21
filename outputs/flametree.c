/* A flame graph as data (docs/web.md, "Flame tree"; docs/schema/flame-tree.schema.json): one
 * calling-context tree per thread, named by the thread's name, and the threads' trees
 * merged into an "all threads" tree that says it is a sum over threads (threads run at once:
 * its times can exceed the run's duration). Each node is {name, value, calls, self, total,
 * children}; value is the node's width by the chosen weight. The web pages draw it with
 * d3-flame-graph (web/app/flame.js); `ptcall export --format flame-json` writes it. */
#include <stdlib.h>
#include <string.h>

#include "cct.h"
#include "views.h"

/* Trees with more nodes than this lose their narrowest ones (value under the root's / this):
 * a browser draws a few tens of thousands of frames at most. Each omission is counted. */
#define MAX_NODES 50000u

struct ft_thread {
    uint32_t pid, tid;
    struct ptc_cct t;
};

struct ft_view {
    struct ptc_wbuf *w;
    const struct ptc_session *s;
    int weight, ns, timed, filtered;
    const char *select;     /* "all", a TID, or NULL: every tree */
    struct ft_thread **th;
    size_t nth, cap;
    int found;              /* a tree matched select */
};

static int ft_begin(void *view, const struct ptc_out_info *info)
{
    struct ft_view *v = view;
    if (v->weight != PTC_WEIGHT_CALLS && !info->timed)
        return PTC_VIEW_E_UNTIMED;
    v->ns = info->ns;
    v->timed = info->timed;
    v->filtered = info->filtered;
    return 0;
}

/* The thread's tree, made at its first event (kept in the thread's word). */
static struct ft_thread *thread_of(struct ft_view *v, const struct ptc_out_event *e)
{
    if (*e->thread_user)
        return (struct ft_thread *)*e->thread_user;
    if (v->nth == v->cap) {
        size_t nc = v->cap ? v->cap * 2 : 16;
        struct ft_thread **n = realloc(v->th, nc * sizeof(*n));
        if (!n)
            return NULL;
        v->th = n;
        v->cap = nc;
    }
    struct ft_thread *t = calloc(1, sizeof(*t));
    if (!t || ptc_cct_init(&t->t)) {
        free(t);
        return NULL;
    }
    t->pid = e->pid;
    t->tid = e->tid;
    v->th[v->nth++] = t;
    *e->thread_user = (uintptr_t)t;
    return t;
}

static int ft_event(void *view, const struct ptc_out_event *e)
{
    struct ft_thread *t = thread_of(view, e);
    return t ? ptc_cct_feed(&t->t, e) : 1;
}

/* Adds tree src into dst, path by path (nodes come after their parents). 0, or 1 when out
 * of memory. */
static int merge(struct ptc_cct *dst, const struct ptc_cct *src)
{
    uint32_t *map = malloc((size_t)src->n * sizeof(*map));
    if (!map)
        return 1;
    map[PTC_CCT_ROOT] = PTC_CCT_ROOT;
    for (uint32_t i = 1; i < src->n; i++) {
        const struct ptc_cct_node *s = &src->nodes[i];
        uint32_t d = ptc_cct_child(dst, map[s->parent], s->func);
        if (!d) {
            free(map);
            return 1;
        }
        map[i] = d;
        dst->nodes[d].calls += s->calls;
        dst->nodes[d].self += s->self;
        dst->nodes[d].total += s->total;
        dst->nodes[d].open += s->open;
    }
    free(map);
    return 0;
}

/* Per node: its value (calls: calls in its subtree; self: self time in its subtree; total:
 * its total time, at least its children's) and its children in the order first called. */
struct layout {
    uint64_t *value;
    uint32_t *kids, *first, *nkids;
};

static void layout_free(struct layout *l)
{
    free(l->value);
    free(l->kids);
    free(l->first);
    free(l->nkids);
}

static int layout(const struct ptc_cct *t, int weight, struct layout *l)
{
    uint32_t n = t->n;
    l->value = calloc(n, sizeof(*l->value));
    l->kids = malloc((size_t)n * sizeof(*l->kids));
    l->first = calloc(n, sizeof(*l->first));
    l->nkids = calloc(n, sizeof(*l->nkids));
    if (!l->value || !l->kids || !l->first || !l->nkids) {
        layout_free(l);
        return 1;
    }
    /* nodes are created after their parents: a reverse walk sums subtrees */
    uint64_t *kidsum = calloc(n, sizeof(*kidsum));
    if (!kidsum) {
        layout_free(l);
        return 1;
    }
    for (uint32_t i = n; i-- > 0;) {
        const struct ptc_cct_node *nd = &t->nodes[i];
        uint64_t own = i == PTC_CCT_ROOT ? 0 : weight == PTC_WEIGHT_CALLS ? nd->calls
                                            : weight == PTC_WEIGHT_SELF   ? nd->self
                                                                          : 0;
        if (weight == PTC_WEIGHT_TOTAL)
            l->value[i] = i != PTC_CCT_ROOT && nd->total > kidsum[i] ? nd->total : kidsum[i];
        else
            l->value[i] = own + kidsum[i];
        if (i != PTC_CCT_ROOT) {
            kidsum[nd->parent] += l->value[i];
            l->nkids[nd->parent]++;
        }
    }
    free(kidsum);
    uint32_t off = 0;
    for (uint32_t i = 0; i < n; i++) {
        l->first[i] = off;
        off += l->nkids[i];
    }
    /* the sibling list holds the newest first: fill each run from its end */
    for (uint32_t i = 0; i < n; i++) {
        uint32_t k = l->first[i] + l->nkids[i];
        for (uint32_t c = t->nodes[i].first_child; c; c = t->nodes[c].next_sibling)
            l->kids[--k] = c;
    }
    return 0;
}

/* blocked: the node is a call of the runtime's [blocking] module (trace format 2.6): time
 * spent waiting, not running, which the pages colour apart */
static void put_fields(struct ft_view *v, const struct ptc_cct_node *nd, uint64_t value,
                       int blocked)
{
    struct ptc_wbuf *w = v->w;
    ptc_wb_str(w, ", \"value\": ");
    ptc_wb_u64(w, value);
    ptc_wb_str(w, ", \"calls\": ");
    ptc_wb_u64(w, nd->calls);
    ptc_wb_str(w, ", \"self\": ");
    if (v->timed)
        ptc_wb_u64(w, nd->self);
    else
        ptc_wb_str(w, "null");
    ptc_wb_str(w, ", \"total\": ");
    if (v->timed)
        ptc_wb_u64(w, nd->total);
    else
        ptc_wb_str(w, "null");
    if (nd->open) { /* its thread's trace ended inside it: its times are lower bounds */
        ptc_wb_str(w, ", \"still_open\": ");
        ptc_wb_u64(w, nd->open);
    }
    if (blocked)
        ptc_wb_str(w, ", \"blocked\": true");
}

/* One tree as nested nodes under a root named label. 0, or 1 when out of memory. */
static int put_tree(struct ft_view *v, const struct ptc_cct *t, const char *label)
{
    struct ptc_wbuf *w = v->w;
    struct layout l;
    memset(&l, 0, sizeof(l));
    if (layout(t, v->weight, &l))
        return 1;
    uint64_t rootw = l.value[PTC_CCT_ROOT];
    uint64_t floor = t->n > MAX_NODES ? rootw / MAX_NODES : 0;
    /* depth-first, each node's children by index into l.kids */
    uint32_t *stack = malloc((size_t)t->n * sizeof(*stack)), *next = calloc(t->n, sizeof(*next));
    unsigned char *wrote = calloc(t->n, 1); /* a child of it was written: a comma first */
    if (!stack || !next || !wrote) {
        free(stack);
        free(next);
        free(wrote);
        layout_free(&l);
        return 1;
    }
    uint64_t omitted = 0, shown = 0;
    struct ptc_cct_node rootnd;
    memset(&rootnd, 0, sizeof(rootnd));
    for (uint32_t k = 0; k < l.nkids[PTC_CCT_ROOT]; k++) { /* outermost calls */
        const struct ptc_cct_node *c = &t->nodes[l.kids[l.first[PTC_CCT_ROOT] + k]];
        rootnd.calls += c->func == PTC_CCT_BEFORE ? 0 : c->calls;
        rootnd.total += c->total;
    }
    ptc_wb_str(w, "{\"name\": ");
    ptc_wb_json_script_str(w, label);
    put_fields(v, &rootnd, rootw, 0);
    ptc_wb_str(w, ", \"children\": [");
    uint32_t sp = 0;
    stack[sp++] = PTC_CCT_ROOT;
    char nb[1024];
    while (sp) {
        uint32_t id = stack[sp - 1];
        if (next[id] == l.nkids[id]) { /* done: close it */
            ptc_wb_str(w, "]}");
            sp--;
            continue;
        }
        uint32_t c = l.kids[l.first[id] + next[id]];
        next[id]++;
        if (!l.value[c] || l.value[c] <= floor) {
            omitted++;
            continue;
        }
        shown++;
        const struct ptc_cct_node *nd = &t->nodes[c];
        ptc_wb_str(w, wrote[id] ? ",\n{\"name\": " : "\n{\"name\": ");
        wrote[id] = 1;
        ptc_wb_json_script_str(w, ptc_cct_func_name(v->s, nd->func, nb, sizeof(nb)));
        put_fields(v, nd, l.value[c], ptc_session_func_blocking(v->s, nd->func));
        ptc_wb_str(w, ", \"children\": [");
        stack[sp++] = c;
    }
    ptc_wb_str(w, ", \"nodes\": ");
    ptc_wb_u64(w, shown);
    ptc_wb_str(w, ", \"omitted_nodes\": ");
    ptc_wb_u64(w, omitted);
    free(stack);
    free(next);
    free(wrote);
    layout_free(&l);
    return 0;
}

/* The thread's label: its recorded name, else its tid. */
static void thread_label(const struct ft_view *v, const struct ft_thread *t, char *b, size_t n)
{
    const char *name = v->s ? ptc_session_thread_name(v->s, t->pid, t->tid) : NULL;
    if (name && *name)
        snprintf(b, n, "%s (thread %u)", name, t->tid);
    else
        snprintf(b, n, "thread %u", t->tid);
}

static int selected(const struct ft_view *v, const struct ft_thread *t)
{
    if (!v->select)
        return 1;
    char tid[16];
    snprintf(tid, sizeof(tid), "%u", t->tid);
    return !strcmp(v->select, tid);
}

static void put_counted(struct ft_view *v)
{
    struct ptc_func_states st;
    ptc_wb_str(v->w, ",\n\"counted\": ");
    if (!v->s || (ptc_session_func_states(v->s, &st), !st.mixed)) {
        ptc_wb_str(v->w, "null");
        return;
    }
    /* recorded within a budget: counted functions have calls but no events (no frames) */
    ptc_wb_str(v->w, "{\"traced_functions\": ");
    ptc_wb_u64(v->w, st.traced);
    ptc_wb_str(v->w, ", \"counted_functions\": ");
    ptc_wb_u64(v->w, st.counted);
    ptc_wb_str(v->w, ", \"demoted_functions\": ");
    ptc_wb_u64(v->w, st.demoted);
    ptc_wb_str(v->w, ", \"note\": \"counted functions (calls only, no events) are not in these "
                     "trees; their calls, exact, are in ptcall report");
    /* a governor's demotion: the function is in the trees with its calls up to it only */
    if (st.demoted)
        ptc_wb_str(v->w, ". Functions the budget's governor demoted are here with their calls "
                         "until then; their later calls were counted");
    ptc_wb_str(v->w, "\"}");
}

static int ft_end(void *view, const struct ptc_out_info *info)
{
    struct ft_view *v = view;
    struct ptc_wbuf *w = v->w;
    (void)info;
    ptc_wb_str(w, "{\"format\": \"ptcall-flame-tree\", \"format_version\": 1, \"weight\": ");
    ptc_wb_str(w, v->weight == PTC_WEIGHT_CALLS ? "\"calls\"" :
                  v->weight == PTC_WEIGHT_SELF ? "\"self\"" : "\"total\"");
    ptc_wb_str(w, ", \"time_unit\": ");
    ptc_wb_str(w, !v->timed ? "null" : v->ns ? "\"ns\"" : "\"ticks\"");
    ptc_wb_str(w, ", \"value_unit\": ");
    ptc_wb_str(w, v->weight == PTC_WEIGHT_CALLS ? "\"calls\"" : v->ns ? "\"ns\"" : "\"ticks\"");
    ptc_wb_str(w, ", \"filtered\": ");
    ptc_wb_str(w, v->filtered ? "true" : "false");
    ptc_wb_str(w, ", \"selected\": ");
    ptc_wb_json_script_str(w, v->select ? v->select : "every");
    put_counted(v);
    /* every thread, for a picker, with its figures whatever was selected */
    ptc_wb_str(w, ",\n\"threads\": [");
    char label[400];
    for (size_t i = 0; i < v->nth; i++) {
        const struct ft_thread *t = v->th[i];
        const char *name = v->s ? ptc_session_thread_name(v->s, t->pid, t->tid) : NULL;
        const char *proc = v->s ? ptc_session_process_name(v->s, t->pid) : NULL;
        uint64_t calls = 0, self = 0, total = 0;
        for (uint32_t k = 1; k < t->t.n; k++) {
            calls += t->t.nodes[k].func == PTC_CCT_BEFORE ? 0 : t->t.nodes[k].calls;
            self += t->t.nodes[k].self;
            if (t->t.nodes[k].parent == PTC_CCT_ROOT)
                total += t->t.nodes[k].total;
        }
        ptc_wb_str(w, i ? ",\n {\"pid\": " : "\n {\"pid\": ");
        ptc_wb_u64(w, t->pid);
        ptc_wb_str(w, ", \"tid\": ");
        ptc_wb_u64(w, t->tid);
        ptc_wb_str(w, ", \"name\": ");
        if (name)
            ptc_wb_json_script_str(w, name);
        else
            ptc_wb_str(w, "null");
        ptc_wb_str(w, ", \"process\": ");
        if (proc)
            ptc_wb_json_script_str(w, proc);
        else
            ptc_wb_str(w, "null");
        thread_label(v, t, label, sizeof(label));
        ptc_wb_str(w, ", \"label\": ");
        ptc_wb_json_script_str(w, label);
        ptc_wb_str(w, ", \"calls\": ");
        ptc_wb_u64(w, calls);
        ptc_wb_str(w, ", \"self\": ");
        if (v->timed)
            ptc_wb_u64(w, self);
        else
            ptc_wb_str(w, "null");
        ptc_wb_str(w, ", \"total\": ");
        if (v->timed)
            ptc_wb_u64(w, total);
        else
            ptc_wb_str(w, "null");
        ptc_wb_str(w, "}");
    }
    ptc_wb_str(w, "],\n\"trees\": [");
    int any = 0;
    for (size_t i = 0; i < v->nth; i++) {
        const struct ft_thread *t = v->th[i];
        if (!selected(v, t))
            continue;
        v->found = 1;
        ptc_wb_str(w, any++ ? ",\n{\"thread\": {\"pid\": " : "\n{\"thread\": {\"pid\": ");
        ptc_wb_u64(w, t->pid);
        ptc_wb_str(w, ", \"tid\": ");
        ptc_wb_u64(w, t->tid);
        ptc_wb_str(w, "}, \"summed_threads\": 1, \"root\": ");
        thread_label(v, t, label, sizeof(label));
        if (put_tree(v, &t->t, label))
            return 1;
        ptc_wb_str(w, "}");
    }
    if (!v->select || !strcmp(v->select, "all")) {
        /* the threads' trees merged: said to be a sum, with how many threads it adds */
        struct ptc_cct all;
        if (ptc_cct_init(&all))
            return 1;
        for (size_t i = 0; i < v->nth; i++)
            if (merge(&all, &v->th[i]->t)) {
                ptc_cct_free(&all);
                return 1;
            }
        v->found = 1;
        snprintf(label, sizeof(label), "all threads (sum over %zu thread%s)", v->nth,
                 v->nth == 1 ? "" : "s");
        ptc_wb_str(w, any ? ",\n{\"thread\": \"all\", \"summed_threads\": " :
                            "\n{\"thread\": \"all\", \"summed_threads\": ");
        ptc_wb_u64(w, v->nth);
        ptc_wb_str(w, ", \"note\": \"the threads' trees added up: threads that ran at the same "
                      "time each count their own time, so times can exceed the run's "
                      "duration\", \"root\": ");
        int e = put_tree(v, &all, label);
        ptc_cct_free(&all);
        if (e)
            return 1;
        ptc_wb_str(w, "}");
    }
    ptc_wb_str(w, "]}\n");
    return 0;
}

static void ft_free(void *view)
{
    struct ft_view *v = view;
    for (size_t i = 0; i < v->nth; i++) {
        ptc_cct_free(&v->th[i]->t);
        free(v->th[i]);
    }
    free(v->th);
    free(v);
}

static const struct ptc_output_ops ft_ops = {
    .name = "flame-json",
    .begin = ft_begin,
    .enter = ft_event,
    .ret = ft_event,
    .end = ft_end,
    .free = ft_free,
};

void *ptc_view_flametree(const struct ptc_view_opts *o, const struct ptc_output_ops **ops)
{
    struct ft_view *v = calloc(1, sizeof(*v));
    if (!v)
        return NULL;
    v->w = o->out;
    v->s = o->s;
    v->weight = o->weight;
    v->select = o->flame_thread;
    *ops = &ft_ops;
    return v;
}

int ptc_view_flametree_found(const void *view)
{
    return ((const struct ft_view *)view)->found;
}
