/* The call graph a reachability analysis needs (map version 8, .ptcov record 8 CALLGRAPH;
 * docs/cov.md, *Reachability and the frontier*): kept beside the data set in flat arrays
 * that grow as the maps or the file are read. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cov.h"

struct cov_graph *cov_graph_get(struct cov_data *d)
{
    if (!d->graph) {
        d->graph = calloc(1, sizeof(*d->graph));
        if (d->graph && !(d->graph->icall_start = calloc(1, sizeof(uint32_t)))) {
            free(d->graph);
            d->graph = NULL;
        }
    }
    return d->graph;
}

/* Makes room for need elements in each of the arrays sharing *cap. 0 or -ENOMEM. */
static int room(uint32_t need, uint32_t *cap, void **a, size_t ea, void **b, size_t eb)
{
    if (need <= *cap)
        return 0;
    uint32_t nc = *cap ? *cap : 64;
    while (nc < need) {
        if (nc > UINT32_MAX / 2)
            return -ENOMEM;
        nc *= 2;
    }
    void *x = realloc(*a, (size_t)nc * ea);
    if (!x)
        return -ENOMEM;
    *a = x;
    if (b) {
        void *y = realloc(*b, (size_t)nc * eb);
        if (!y)
            return -ENOMEM;
        *b = y;
    }
    *cap = nc;
    return 0;
}

int cov_graph_add_func(struct cov_graph *g, uint32_t flags, uint64_t type_id, uint32_t n,
                       const uint64_t *types, const uint32_t *blocks)
{
    uint32_t cf = g->cap_funcs;
    if (room(g->nfuncs + 1, &cf, (void **)&g->flags, 1, (void **)&g->type_id, 8))
        return -ENOMEM;
    if (cf != g->cap_funcs) {
        uint32_t *s = realloc(g->icall_start, ((size_t)cf + 1) * sizeof(*s));
        if (!s)
            return -ENOMEM;
        g->icall_start = s;
        g->cap_funcs = cf;
    }
    if ((uint64_t)g->nicalls + n > UINT32_MAX ||
        room(g->nicalls + n, &g->cap_icalls, (void **)&g->icall_type, 8,
             (void **)&g->icall_block, 4))
        return -ENOMEM;
    g->flags[g->nfuncs] = (uint8_t)flags;
    g->type_id[g->nfuncs] = type_id;
    if (n) {
        memcpy(g->icall_type + g->nicalls, types, (size_t)n * 8);
        memcpy(g->icall_block + g->nicalls, blocks, (size_t)n * 4);
    }
    g->nicalls += n;
    g->icall_start[++g->nfuncs] = g->nicalls;
    return 0;
}

int cov_graph_add_block(struct cov_graph *g, uint32_t n, const uint32_t *succs)
{
    if (!g->succ_start && !(g->succ_start = calloc(64, sizeof(uint32_t))))
        return -ENOMEM;
    if (!g->cap_blocks)
        g->cap_blocks = 63;
    if (g->nblocks + 1 > g->cap_blocks) {
        uint32_t nc = g->cap_blocks * 2 + 1;
        uint32_t *s = realloc(g->succ_start, ((size_t)nc + 1) * sizeof(*s));
        if (!s)
            return -ENOMEM;
        g->succ_start = s;
        g->cap_blocks = nc;
    }
    if ((uint64_t)g->nsuccs + n > UINT32_MAX ||
        room(g->nsuccs + n, &g->cap_succs, (void **)&g->succs, 4, NULL, 0))
        return -ENOMEM;
    if (n)
        memcpy(g->succs + g->nsuccs, succs, (size_t)n * 4);
    g->nsuccs += n;
    g->succ_start[++g->nblocks] = g->nsuccs;
    return 0;
}

int cov_graph_add_name(struct cov_graph *g, const char *name)
{
    if (room(g->ntaken_names + 1, &g->cap_names, (void **)&g->taken_names, sizeof(char *), NULL,
             0))
        return -ENOMEM;
    if (!(g->taken_names[g->ntaken_names] = strdup(name)))
        return -ENOMEM;
    g->ntaken_names++;
    return 0;
}
