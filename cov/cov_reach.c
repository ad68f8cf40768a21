/* Reachability from the harness entry and the frontier (docs/cov.md, *Reachability and the
 * frontier*). The call graph is the map's: each function's direct callees (version 6), and
 * each call through a pointer resolved to every address-taken function whose type id is the
 * call's (version 8). A never-reached function is reachable when a path leads to it from the
 * entry or from any reached function (code that ran is reachable by definition), else
 * unreachable from the harness. The frontier is the never-reached functions that reached
 * functions call, each with the never-reached code behind it; and, with block successors,
 * the reached blocks whose successor never ran. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cov.h"

void cov_reach_free(struct cov_reach *r)
{
    free(r->cls);
    free(r->no_path);
    free(r->front);
    free(r->callers);
    free(r->bfront);
    memset(r, 0, sizeof(*r));
}

/* The graph as out-edges per function (CSR), each edge's kind. */
struct edges {
    uint32_t *start;   /* nfuncs + 1 */
    uint32_t *to;
    uint8_t *ind;      /* 1: through a pointer */
    uint32_t n, cap;
};

static int push_edge(struct edges *e, uint32_t to, uint8_t ind)
{
    if (e->n == e->cap) {
        uint32_t nc = e->cap ? e->cap * 2 : 1024;
        uint32_t *t = realloc(e->to, (size_t)nc * sizeof(*t));
        if (!t)
            return -ENOMEM;
        e->to = t;
        uint8_t *k = realloc(e->ind, nc);
        if (!k)
            return -ENOMEM;
        e->ind = k;
        e->cap = nc;
    }
    e->to[e->n] = to;
    e->ind[e->n++] = ind;
    return 0;
}

struct taken {
    uint64_t type;
    uint32_t func;
};
static int by_type(const void *a, const void *b)
{
    const struct taken *x = a, *y = b;
    return x->type < y->type ? -1 : x->type > y->type ? 1 : (x->func > y->func) - (x->func < y->func);
}

static const struct cov_data *sort_d;
static int by_linkage(const void *a, const void *b)
{
    return strcmp(sort_d->funcs[*(const uint32_t *)a].linkage,
                  sort_d->funcs[*(const uint32_t *)b].linkage);
}

/* Which functions have their address taken: the map's flag, or a name some unit took. */
static int taken_set(const struct cov_data *d, uint8_t *tk)
{
    const struct cov_graph *g = d->graph;
    for (uint32_t i = 0; i < d->nfuncs && i < g->nfuncs; i++)
        tk[i] = (g->flags[i] & COV_GRAPH_TAKEN) != 0;
    if (!g->ntaken_names)
        return 0;
    uint32_t *idx = malloc(((size_t)d->nfuncs + 1) * sizeof(*idx));
    if (!idx)
        return -ENOMEM;
    for (uint32_t i = 0; i < d->nfuncs; i++)
        idx[i] = i;
    sort_d = d;   /* reports are made on one thread */
    if (d->nfuncs > 1)
        qsort(idx, d->nfuncs, sizeof(*idx), by_linkage);
    for (uint32_t k = 0; k < g->ntaken_names; k++) {
        const char *name = g->taken_names[k];
        uint32_t lo = 0, hi = d->nfuncs;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (strcmp(d->funcs[idx[mid]].linkage, name) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        /* every function of that name (one external symbol; a static one of the same name
         * elsewhere is taken too: an over-approximation) */
        for (; lo < d->nfuncs && !strcmp(d->funcs[idx[lo]].linkage, name); lo++)
            tk[idx[lo]] = 1;
    }
    free(idx);
    return 0;
}

static int build_edges(const struct cov_data *d, struct edges *e)
{
    const struct cov_graph *g = d->graph;
    uint32_t nf = d->nfuncs, nt = 0;
    uint8_t *tk = calloc((size_t)nf + 1, 1);
    struct taken *t = NULL;
    uint32_t *stamp = calloc((size_t)nf + 1, sizeof(*stamp));
    int rc = -ENOMEM;
    if (!(e->start = calloc((size_t)nf + 1, sizeof(*e->start))) || !tk || !stamp)
        goto out;
    if (g) {
        if (taken_set(d, tk))
            goto out;
        if (!(t = malloc(((size_t)nf + 1) * sizeof(*t))))
            goto out;
        for (uint32_t i = 0; i < nf && i < g->nfuncs; i++)
            if (tk[i])
                t[nt++] = (struct taken){g->type_id[i], i};
        if (nt > 1)
            qsort(t, nt, sizeof(*t), by_type);
    }
    for (uint32_t f = 0; f < nf; f++) {
        e->start[f] = e->n;
        const struct cov_func *fn = &d->funcs[f];
        for (uint32_t k = 0; k < fn->ncallees; k++)
            if (fn->callees[k] < nf && stamp[fn->callees[k]] != f + 1) {
                stamp[fn->callees[k]] = f + 1;
                if (push_edge(e, fn->callees[k], 0))
                    goto out;
            }
        if (!g || f >= g->nfuncs)
            continue;
        for (uint32_t k = g->icall_start[f]; k < g->icall_start[f + 1]; k++) {
            uint64_t ty = g->icall_type[k];
            uint32_t lo = 0, hi = nt;
            while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (t[mid].type < ty)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            for (; lo < nt && t[lo].type == ty; lo++)
                if (stamp[t[lo].func] != f + 1) {
                    stamp[t[lo].func] = f + 1;
                    if (push_edge(e, t[lo].func, 1))
                        goto out;
                }
        }
    }
    e->start[nf] = e->n;
    rc = 0;
out:
    free(tk);
    free(t);
    free(stamp);
    return rc;
}

/* Marks in seen (value mark) what the queue's functions reach through functions ok allows
 * (ok NULL: all). q holds the roots (nq of them) and has room for every function. */
static void walk(const struct edges *e, uint32_t *q, uint32_t nq, uint32_t *seen, uint32_t mark,
                 const uint8_t *cls_ok)
{
    for (uint32_t h = 0; h < nq; h++) {
        uint32_t f = q[h];
        for (uint32_t k = e->start[f]; k < e->start[f + 1]; k++) {
            uint32_t c = e->to[k];
            if (seen[c] == mark || (cls_ok && !cls_ok[c]))
                continue;
            seen[c] = mark;
            q[nq++] = c;
        }
    }
}

struct pair {
    uint32_t callee, caller;
    uint8_t ind;
};
static int by_pair(const void *a, const void *b)
{
    const struct pair *x = a, *y = b;
    if (x->callee != y->callee)
        return x->callee < y->callee ? -1 : 1;
    return (x->caller > y->caller) - (x->caller < y->caller);
}
static int by_front(const void *a, const void *b)
{
    const struct cov_frontier *x = a, *y = b;
    if (x->insns != y->insns)
        return x->insns > y->insns ? -1 : 1;
    if (x->funcs != y->funcs)
        return x->funcs > y->funcs ? -1 : 1;
    return (x->callee > y->callee) - (x->callee < y->callee);
}
static int by_bfront(const void *a, const void *b)
{
    const struct cov_bfrontier *x = a, *y = b;
    if (x->lines != y->lines)
        return x->lines > y->lines ? -1 : 1;
    if (x->blocks != y->blocks)
        return x->blocks > y->blocks ? -1 : 1;
    return (x->succ > y->succ) - (x->succ < y->succ);
}

/* Functions' blocks as CSR (blocks are listed function by function, but not assumed so). */
static int func_blocks(const struct cov_data *d, uint32_t **start, uint32_t **list)
{
    uint32_t *s = calloc((size_t)d->nfuncs + 2, sizeof(*s));
    uint32_t *l = malloc(((size_t)d->nblocks + 1) * sizeof(*l));
    if (!s || !l) {
        free(s);
        free(l);
        return -ENOMEM;
    }
    for (uint32_t b = 0; b < d->nblocks; b++)
        s[d->blocks[b].func + 2]++;
    for (uint32_t f = 0; f < d->nfuncs; f++)
        s[f + 2] += s[f + 1];
    for (uint32_t b = 0; b < d->nblocks; b++)
        l[s[d->blocks[b].func + 1]++] = b;
    *start = s;
    *list = l;
    return 0;
}

/* Distinct lines of block b not yet stamped with mark: counted and stamped. */
static uint32_t new_lines(const struct cov_data *d, const struct cov_blocks_analysis *blk,
                          uint32_t b, uint32_t *lstamp, uint32_t mark)
{
    uint32_t n = 0;
    const struct cov_block *k = &d->blocks[b];
    for (uint32_t j = 0; j < k->nlines; j++) {
        uint32_t u = blk->uline_of[k->first_line + j];
        if (lstamp[u] != mark) {
            lstamp[u] = mark;
            n++;
        }
    }
    return n;
}

static int function_frontier(const struct cov_data *d, const uint32_t *inputs_reaching,
                             const struct cov_blocks_analysis *blk, const struct edges *e,
                             struct cov_reach *r, uint32_t *q, uint32_t *seen)
{
    uint32_t nf = d->nfuncs, np = 0;
    struct pair *p = malloc(((size_t)e->n + 1) * sizeof(*p));
    uint8_t *unreached = calloc((size_t)nf + 1, 1);
    uint32_t *fbs = NULL, *fbl = NULL;
    uint32_t *lstamp = calloc((size_t)blk->nulines + 1, sizeof(*lstamp));
    int rc = -ENOMEM;
    if (!p || !unreached || !lstamp || (blk->nblocks && func_blocks(d, &fbs, &fbl)))
        goto out;
    for (uint32_t f = 0; f < nf; f++) {
        unreached[f] = !inputs_reaching[f];
        if (unreached[f])
            continue;
        for (uint32_t k = e->start[f]; k < e->start[f + 1]; k++)
            if (!inputs_reaching[e->to[k]])
                p[np++] = (struct pair){e->to[k], f, e->ind[k]};
    }
    if (np > 1)
        qsort(p, np, sizeof(*p), by_pair);
    if (!(r->front = malloc(((size_t)np + 1) * sizeof(*r->front))) ||
        !(r->callers = malloc(((size_t)np + 1) * sizeof(*r->callers))))
        goto out;
    memset(seen, 0, ((size_t)nf + 1) * sizeof(*seen));
    uint32_t mark = 0;
    for (uint32_t i = 0; i < np;) {
        struct cov_frontier x = {p[i].callee, i, 0, 1, 0, 0, 0, 0};
        uint32_t j = i;
        for (; j < np && p[j].callee == p[i].callee; j++) {
            r->callers[j] = p[j].caller;
            x.indirect &= p[j].ind;
        }
        x.ncallers = j - i;
        /* the never-reached functions behind the callee, itself included */
        seen[x.callee] = ++mark;
        q[0] = x.callee;
        uint32_t nq = 1;
        for (uint32_t h = 0; h < nq; h++) {
            uint32_t f = q[h];
            for (uint32_t k = e->start[f]; k < e->start[f + 1]; k++) {
                uint32_t c = e->to[k];
                if (unreached[c] && seen[c] != mark) {
                    seen[c] = mark;
                    q[nq++] = c;
                }
            }
        }
        x.funcs = nq;
        for (uint32_t h = 0; h < nq; h++) {
            uint32_t f = q[h];
            x.insns += d->funcs[f].insns;
            if (!blk->nblocks) {
                x.blocks += d->funcs[f].blocks;
                continue;
            }
            x.blocks += fbs[f + 1] - fbs[f];
            for (uint32_t k = fbs[f]; k < fbs[f + 1]; k++)
                x.lines += new_lines(d, blk, fbl[k], lstamp, mark);
        }
        r->front[r->nfront++] = x;
        i = j;
    }
    if (r->nfront > 1)
        qsort(r->front, r->nfront, sizeof(*r->front), by_front);
    rc = 0;
out:
    free(p);
    free(unreached);
    free(fbs);
    free(fbl);
    free(lstamp);
    return rc;
}

static struct cov_line last_line(const struct cov_data *d, uint32_t b)
{
    const struct cov_block *k = &d->blocks[b];
    if (!k->nlines)
        return (struct cov_line){UINT32_MAX, 0};
    return d->lines[k->first_line + k->nlines - 1];
}

static int block_frontier(const struct cov_data *d, const struct cov_blocks_analysis *blk,
                          struct cov_reach *r)
{
    const struct cov_graph *g = d->graph;
    uint32_t nb = d->nblocks;
    uint32_t *bseen = calloc((size_t)nb + 1, sizeof(*bseen));
    uint32_t *q = malloc(((size_t)nb + 1) * sizeof(*q));
    uint32_t *lstamp = calloc((size_t)blk->nulines + 1, sizeof(*lstamp));
    uint8_t *taken = calloc((size_t)nb + 1, 1);
    uint32_t cap = 0, mark = 0;
    int rc = -ENOMEM;
    if (!bseen || !q || !lstamp || !taken)
        goto out;
    for (uint32_t b = 0; b < nb; b++) {
        if (!blk->inputs[b])
            continue;
        for (uint32_t k = g->succ_start[b]; k < g->succ_start[b + 1]; k++) {
            uint32_t s = g->succs[k];
            if (blk->inputs[s] || taken[s])
                continue;
            taken[s] = 1;   /* each never-run successor once, under its first reached block */
            struct cov_bfrontier x = {b, s, 0, 0, last_line(d, b), {UINT32_MAX, 0}};
            bseen[s] = ++mark;
            q[0] = s;
            uint32_t nq = 1;
            for (uint32_t h = 0; h < nq; h++) {
                uint32_t c = q[h];
                x.lines += new_lines(d, blk, c, lstamp, mark);
                if (x.to.file == UINT32_MAX && d->blocks[c].nlines)
                    x.to = d->lines[d->blocks[c].first_line];
                for (uint32_t j = g->succ_start[c]; j < g->succ_start[c + 1]; j++) {
                    uint32_t t = g->succs[j];
                    if (!blk->inputs[t] && bseen[t] != mark) {
                        bseen[t] = mark;
                        q[nq++] = t;
                    }
                }
            }
            x.blocks = nq;
            if (r->nbfront == cap) {
                uint32_t nc = cap ? cap * 2 : 256;
                struct cov_bfrontier *v = realloc(r->bfront, (size_t)nc * sizeof(*v));
                if (!v)
                    goto out;
                r->bfront = v;
                cap = nc;
            }
            r->bfront[r->nbfront++] = x;
        }
    }
    if (r->nbfront > 1)
        qsort(r->bfront, r->nbfront, sizeof(*r->bfront), by_bfront);
    /* then exclusive: largest first, each row keeps the never-run blocks no row above it
     * kept, and a row whose successor an earlier row holds goes (a loop of one macro line
     * made dozens of rows over the same blocks) */
    memset(taken, 0, (size_t)nb + 1);
    uint32_t kept = 0;
    for (uint32_t i = 0; i < r->nbfront; i++) {
        struct cov_bfrontier x = r->bfront[i];
        if (taken[x.succ])
            continue;
        x.blocks = x.lines = 0;
        x.to = (struct cov_line){UINT32_MAX, 0};
        taken[x.succ] = 1;
        q[0] = x.succ;
        uint32_t nq = 1;
        ++mark;
        for (uint32_t h = 0; h < nq; h++) {
            uint32_t c = q[h];
            x.lines += new_lines(d, blk, c, lstamp, mark);
            if (x.to.file == UINT32_MAX && d->blocks[c].nlines)
                x.to = d->lines[d->blocks[c].first_line];
            for (uint32_t j = g->succ_start[c]; j < g->succ_start[c + 1]; j++) {
                uint32_t t = g->succs[j];
                if (!blk->inputs[t] && !taken[t]) {
                    taken[t] = 1;
                    q[nq++] = t;
                }
            }
        }
        x.blocks = nq;
        r->bfront[kept++] = x;
    }
    r->nbfront = kept;
    if (r->nbfront > 1)
        qsort(r->bfront, r->nbfront, sizeof(*r->bfront), by_bfront);
    rc = 0;
out:
    free(bseen);
    free(q);
    free(lstamp);
    free(taken);
    return rc;
}

static uint32_t find_entry(const struct cov_data *d)
{
    static const char *const names[] = {"LLVMFuzzerTestOneInput", "main"};
    for (int n = 0; n < 2; n++)
        for (uint32_t i = 0; i < d->nfuncs; i++)
            if (d->funcs[i].linkage && !strcmp(d->funcs[i].linkage, names[n]))
                return i;
    return UINT32_MAX;
}

int cov_reach_compute(const struct cov_data *d, const uint32_t *inputs_reaching,
                      const struct cov_blocks_analysis *blk, struct cov_reach *r)
{
    memset(r, 0, sizeof(*r));
    uint32_t nf = d->nfuncs;
    struct edges e = {0};
    uint32_t *q = malloc(((size_t)nf + 1) * sizeof(*q));
    uint32_t *seen = calloc((size_t)nf + 1, sizeof(*seen));
    int rc = -ENOMEM;
    r->cls = calloc((size_t)nf + 1, 1);
    r->no_path = calloc((size_t)nf + 1, 1);
    if (!q || !seen || !r->cls || !r->no_path || build_edges(d, &e))
        goto out;
    r->entry = find_entry(d);
    r->indirect = d->graph && d->graph->modules_with == d->nmodules && d->nmodules;
    r->have_succs = d->graph && d->graph->nblocks == d->nblocks && d->nblocks &&
                    blk->nblocks == d->nblocks;
    /* from the entry alone (mark 1): what the graph explains */
    uint32_t nq = 0;
    if (r->entry != UINT32_MAX) {
        seen[r->entry] = 1;
        q[nq++] = r->entry;
    }
    walk(&e, q, nq, seen, 1, NULL);
    for (uint32_t f = 0; f < nf; f++)
        if (inputs_reaching[f] && seen[f] != 1) {
            r->unexplained++;
            r->no_path[f] = 1;
        }
    /* then from reached code too (mark 2): it ran, so what it calls can run */
    nq = 0;
    for (uint32_t f = 0; f < nf; f++)
        if (seen[f] == 1 || inputs_reaching[f]) {
            seen[f] = 2;
            q[nq++] = f;
        }
    walk(&e, q, nq, seen, 2, NULL);
    for (uint32_t f = 0; f < nf; f++) {
        if (inputs_reaching[f])
            r->cls[f] = COV_R_REACHED;
        else if (seen[f] == 2)
            r->cls[f] = COV_R_REACHABLE, r->nreachable++;
        else
            r->cls[f] = COV_R_UNREACHABLE, r->nunreachable++;
    }
    if (function_frontier(d, inputs_reaching, blk, &e, r, q, seen))
        goto out;
    if (r->have_succs && block_frontier(d, blk, r))
        goto out;
    rc = 0;
out:
    free(e.start);
    free(e.to);
    free(e.ind);
    free(q);
    free(seen);
    if (rc)
        cov_reach_free(r);
    return rc;
}
