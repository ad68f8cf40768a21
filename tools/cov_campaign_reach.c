/* A campaign part's reachability and frontier for the runs database (cov_campaign.h; docs/db.md,
 * *The frontier*): computed by cov/ as `cov report` computes it, handed to db/ as plain rows
 * (db/ reads no .ptcov and calls no cov/). */
#include <stdlib.h>
#include <string.h>

#include "cov.h"
#include "cov_campaign.h"

/* Rows kept per part: the page and the API show the head of the ranking; the counts say how
 * many there were. */
#define FRONT_KEEP 100

static const char *or_empty(const char *s)
{
    return s ? s : "";
}

int cov_campaign_reach(const struct cov_data *d, struct db_campaign_in *c,
                       struct cov_reach_rows *m)
{
    memset(m, 0, sizeof(*m));
    /* without record 8 the graph is direct calls only and misclassifies callbacks: no
     * frontier is stored rather than a wrong one */
    if (!d->graph || !d->graph->modules_with)
        return 0;
    struct cov_analysis a;
    if (cov_analyse(d, &a))
        return -1;
    const struct cov_reach *r = &a.reach;
    size_t n = r->nfront < FRONT_KEEP ? r->nfront : FRONT_KEEP, ncall = 0;
    for (size_t i = 0; i < n; i++)
        ncall += r->front[i].ncallers;
    m->front = calloc(n + 1, sizeof(*m->front));
    m->callers = calloc(ncall + 1, sizeof(*m->callers));
    if (!m->front || !m->callers) {
        cov_analysis_free(&a);
        return -1;
    }
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        const struct cov_frontier *x = &r->front[i];
        const struct cov_func *fn = &d->funcs[x->callee];
        for (uint32_t k = 0; k < x->ncallers; k++)
            m->callers[at + k] = cov_func_name(d, r->callers[x->first_caller + k]);
        /* names point into d, which outlives the add */
        m->front[i] = (struct db_cfront){
            or_empty(fn->linkage), cov_func_name(d, x->callee), or_empty(fn->file), fn->line,
            x->indirect, m->callers + at, x->ncallers, x->funcs, (int64_t)x->insns,
            (int64_t)x->blocks, a.blk.nblocks ? (int64_t)x->lines : -1};
        at += x->ncallers;
    }
    c->has_reach = 1;
    c->indirect_calls = r->indirect;
    c->unreachable = r->nunreachable;
    c->reachable_not_reached = r->nreachable;
    c->frontier_total = r->nfront;
    c->front = m->front;
    c->nfront = n;
    cov_analysis_free(&a);
    return 0;
}

void cov_reach_rows_free(struct cov_reach_rows *m)
{
    free(m->front);
    free(m->callers);
}
