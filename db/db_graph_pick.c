/* Which functions a call graph shows (db_graph_pick.h). */
#include "db_graph_pick.h"

#include <stdlib.h>
#include <string.h>

/* Edges by caller (out) or by callee (in), self-calls left out: a recursive function is
 * not its own caller for the roots and paths. */
struct adj {
    size_t *start;               /* nn + 1 */
    size_t *edge;                /* edge indexes */
};

static int adj_make(const struct dbg_edge *e, size_t ne, size_t nn, int by_callee,
                    struct adj *a)
{
    a->start = calloc(nn + 1, sizeof(*a->start));
    a->edge = malloc((ne ? ne : 1) * sizeof(*a->edge));
    if (!a->start || !a->edge)
        return -1;
    for (size_t i = 0; i < ne; i++)
        if (e[i].caller != e[i].callee)
            a->start[(by_callee ? e[i].callee : e[i].caller) + 1]++;
    for (size_t i = 0; i < nn; i++)
        a->start[i + 1] += a->start[i];
    size_t *fill = malloc((nn ? nn : 1) * sizeof(*fill));
    if (!fill)
        return -1;
    memcpy(fill, a->start, nn * sizeof(*fill));
    for (size_t i = 0; i < ne; i++)
        if (e[i].caller != e[i].callee)
            a->edge[fill[by_callee ? e[i].callee : e[i].caller]++] = i;
    free(fill);
    return 0;
}

static void adj_free(struct adj *a)
{
    free(a->start);
    free(a->edge);
}

struct ctx {
    const struct dbg_node *n;
    const struct dbg_edge *e;
    const struct dbg_opts *o;
    struct adj in, out;
};

static uint64_t weight(const struct ctx *c, size_t i)
{
    return c->o->timed ? c->n[i].total : c->n[i].calls;
}

static int over_share(const struct ctx *c, size_t i, uint64_t all)
{
    if (!c->n[i].calls)
        return 0;
    if (c->o->min_share <= 0)
        return 1;
    return all && (double)weight(c, i) >= c->o->min_share * (double)all;
}

/* a candidate with its weight: qsort has no context argument */
struct cand {
    uint64_t w;
    size_t i;
};

static int cmp_weight(const void *x, const void *y)
{
    const struct cand *a = x, *b = y;
    if (a->w != b->w)
        return a->w > b->w ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

/* The node v and the heaviest callers above it up to a shown node or a root, into path
 * (its length returned); mark flags the walk's nodes so that a cycle ends it. */
static size_t path_up(const struct ctx *c, const unsigned char *keep, size_t v, size_t *path,
                      unsigned char *mark)
{
    size_t k = 0;
    for (;;) {
        path[k++] = v;
        mark[v] = 1;
        size_t best = (size_t)-1;
        for (size_t j = c->in.start[v]; j < c->in.start[v + 1]; j++) {
            size_t u = c->e[c->in.edge[j]].caller;
            if (mark[u])
                continue;
            if (keep[u]) { /* joins the shown graph: the path ends here */
                best = (size_t)-1;
                break;
            }
            if (best == (size_t)-1 || weight(c, u) > weight(c, best))
                best = u;
        }
        if (best == (size_t)-1)
            break;
        v = best;
    }
    for (size_t i = 0; i < k; i++)
        mark[path[i]] = 0;
    return k;
}

static void pick_all(const struct ctx *c, size_t nn, uint64_t all, struct cand *order,
                     size_t *path, unsigned char *mark, struct dbg_pick *p)
{
    for (size_t i = 0; i < nn; i++)
        if (c->n[i].calls && c->in.start[i] == c->in.start[i + 1] &&
            c->out.start[i] != c->out.start[i + 1]) {
            p->keep[i] = 1;
            p->nodes++;
        }
    size_t nc = 0;
    for (size_t i = 0; i < nn; i++)
        if (over_share(c, i, all))
            order[nc++] = (struct cand){weight(c, i), i};
    if (nc)
        qsort(order, nc, sizeof(*order), cmp_weight);
    for (size_t i = 0; i < nc; i++) {
        if (p->keep[order[i].i])
            continue;
        size_t k = path_up(c, p->keep, order[i].i, path, mark);
        if (c->o->max_nodes && p->nodes + k > c->o->max_nodes) {
            for (size_t j = i; j < nc; j++)
                p->cut += !p->keep[order[j].i];
            break;
        }
        for (size_t j = 0; j < k; j++)
            p->keep[path[j]] = 1;
        p->nodes += k;
    }
}

/* Breadth first from f over callers (up) or callees (down) into flag. */
static void reach(const struct ctx *c, const struct adj *a, int up, size_t f, uint64_t all,
                  unsigned char *flag, size_t *queue, struct dbg_pick *p)
{
    size_t head = 0, tail = 0;
    flag[f] = 1;
    queue[tail++] = f;
    while (head < tail) {
        size_t v = queue[head++];
        for (size_t j = a->start[v]; j < a->start[v + 1]; j++) {
            size_t u = up ? c->e[a->edge[j]].caller : c->e[a->edge[j]].callee;
            if (flag[u])
                continue;
            /* callers always (the paths from the roots); callees over the share */
            if (!up && !over_share(c, u, all))
                continue;
            if (!up && c->o->max_nodes && p->nodes >= c->o->max_nodes) {
                p->cut++;
                continue;
            }
            flag[u] = 1;
            queue[tail++] = u;
            if (!p->keep[u]) {
                p->keep[u] = 1;
                p->nodes++;
            }
        }
    }
}

int dbg_pick(const struct dbg_node *n, size_t nn, const struct dbg_edge *e, size_t ne,
             const struct dbg_opts *o, struct dbg_pick *out)
{
    memset(out, 0, sizeof(*out));
    struct ctx c = {n, e, o, {NULL, NULL}, {NULL, NULL}};
    struct cand *order = malloc((nn ? nn : 1) * sizeof(*order));
    size_t *path = malloc((nn ? nn : 1) * sizeof(*path));
    unsigned char *mark = calloc(nn ? nn : 1, 1), *down = calloc(nn ? nn : 1, 1);
    out->keep = calloc(nn ? nn : 1, 1);
    out->keep_edge = calloc(ne ? ne : 1, 1);
    int bad = !order || !path || !mark || !down || !out->keep || !out->keep_edge ||
              adj_make(e, ne, nn, 1, &c.in) || adj_make(e, ne, nn, 0, &c.out);
    if (!bad) {
        for (size_t i = 0; i < nn; i++)
            out->all += o->timed ? n[i].self : n[i].calls;
        if (o->has_focus && o->focus < nn) {
            out->keep[o->focus] = 1;
            out->nodes = 1;
            reach(&c, &c.in, 1, o->focus, out->all, mark, path, out);
            reach(&c, &c.out, 0, o->focus, out->all, down, path, out);
            /* an edge between two callers, or two callees, is on a path through the focus */
            for (size_t i = 0; i < ne; i++)
                out->keep_edge[i] = (mark[e[i].caller] && mark[e[i].callee]) ||
                                    (down[e[i].caller] && down[e[i].callee]);
        } else {
            pick_all(&c, nn, out->all, order, path, mark, out);
            for (size_t i = 0; i < ne; i++)
                out->keep_edge[i] = out->keep[e[i].caller] && out->keep[e[i].callee];
        }
        for (size_t i = 0; i < ne; i++)
            out->edges += out->keep_edge[i];
    }
    free(order);
    free(path);
    free(mark);
    free(down);
    adj_free(&c.in);
    adj_free(&c.out);
    if (bad) {
        dbg_pick_free(out);
        return -1;
    }
    return 0;
}

void dbg_pick_free(struct dbg_pick *p)
{
    free(p->keep);
    free(p->keep_edge);
    p->keep = p->keep_edge = NULL;
}
