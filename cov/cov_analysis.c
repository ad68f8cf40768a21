/* What `cov report` and `cov diff` show, computed once over a data set whose inputs are in
 * campaign order (cov_data_sort_inputs): the union, per module and per source file; per
 * function the first input that reached it and how many did; per input what it reached
 * first; the curve of functions reached over campaign time; the blockers. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cov.h"

void cov_analysis_free(struct cov_analysis *a)
{
    free(a->inputs_reaching);
    free(a->first_input);
    free(a->calls);
    free(a->new_count);
    free(a->curve);
    free(a->modules);
    free(a->files);
    free(a->blockers);
    cov_blocks_analysis_free(&a->blk);
    memset(a, 0, sizeof(*a));
}

static int by_name(const void *pa, const void *pb)
{
    const struct cov_group *a = pa, *b = pb;
    return strcmp(a->name, b->name);
}

/* Groups by source file: sorted (file, reached) pairs folded into one row per file. */
static int group_files(struct cov_analysis *a)
{
    const struct cov_data *d = a->d;
    struct cov_group *g = malloc(((size_t)d->nfuncs + 1) * sizeof(*g));
    if (!g)
        return -ENOMEM;
    for (uint32_t i = 0; i < d->nfuncs; i++) {
        g[i].name = d->funcs[i].file ? d->funcs[i].file : "";
        g[i].funcs = 1;
        g[i].reached = a->inputs_reaching[i] > 0;
    }
    qsort(g, d->nfuncs, sizeof(*g), by_name);
    uint32_t k = 0;
    for (uint32_t i = 0; i < d->nfuncs; i++) {
        if (k && !strcmp(g[k - 1].name, g[i].name)) {
            g[k - 1].funcs++;
            g[k - 1].reached += g[i].reached;
        } else {
            g[k++] = g[i];
        }
    }
    a->files = g;
    a->nfiles = k;
    return 0;
}

static int by_unreached_code(const void *pa, const void *pb)
{
    const struct cov_blocker *a = pa, *b = pb;
    if (a->insns != b->insns)
        return a->insns > b->insns ? -1 : 1;
    if (a->blocks != b->blocks)
        return a->blocks > b->blocks ? -1 : 1;
    if (a->nunreached != b->nunreached)
        return a->nunreached > b->nunreached ? -1 : 1;
    return a->func < b->func ? -1 : a->func > b->func;
}

/* Reached functions with direct callees never reached, ranked by the callees' size: where a
 * fuzzer stops short (Fuzz Introspector's "blockers"). A callee's size is its own, not what
 * lies behind it: the callees of an unreached callee are counted at their own callers. */
static int blockers(struct cov_analysis *a)
{
    const struct cov_data *d = a->d;
    a->have_sizes = d->nmodules > 0;
    for (uint32_t m = 0; m < d->nmodules; m++)
        if (!d->modules[m].has_callees)
            a->have_sizes = 0;
    struct cov_blocker *b = malloc(((size_t)d->nfuncs + 1) * sizeof(*b));
    if (!b)
        return -ENOMEM;
    uint32_t nb = 0;
    for (uint32_t i = 0; i < d->nfuncs; i++) {
        const struct cov_func *f = &d->funcs[i];
        if (!a->inputs_reaching[i] || !f->ncallees)
            continue;
        struct cov_blocker x = {i, 0, 0, 0};
        for (uint32_t k = 0; k < f->ncallees; k++) {
            uint32_t c = f->callees[k];
            if (c < d->nfuncs && !a->inputs_reaching[c]) {
                x.nunreached++;
                x.insns += d->funcs[c].insns;
                x.blocks += d->funcs[c].blocks;
            }
        }
        if (x.nunreached)
            b[nb++] = x;
    }
    qsort(b, nb, sizeof(*b), by_unreached_code);
    a->blockers = b;
    a->nblockers = nb;
    return 0;
}

int cov_analyse(const struct cov_data *d, struct cov_analysis *a)
{
    memset(a, 0, sizeof(*a));
    a->d = d;
    size_t nf = (size_t)d->nfuncs + 1, ni = (size_t)d->ninputs + 1;
    a->inputs_reaching = calloc(nf, sizeof(*a->inputs_reaching));
    a->first_input = malloc(nf * sizeof(*a->first_input));
    a->calls = calloc(nf, sizeof(*a->calls));
    a->new_count = calloc(ni, sizeof(*a->new_count));
    a->curve = malloc(ni * sizeof(*a->curve));
    a->modules = calloc((size_t)d->nmodules + 1, sizeof(*a->modules));
    if (!a->inputs_reaching || !a->first_input || !a->calls || !a->new_count || !a->curve ||
        !a->modules) {
        cov_analysis_free(a);
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < d->nfuncs; i++)
        a->first_input[i] = UINT32_MAX;
    for (uint32_t i = 0; i < d->ninputs; i++) {
        const struct cov_input *in = &d->inputs[i];
        if (in->outcome < 4)
            a->counted[in->outcome]++;
        for (uint32_t k = 0; k < in->nhits; k++) {
            uint32_t f = in->hits[k].func;
            a->calls[f] += in->hits[k].count;
            if (a->inputs_reaching[f]++ == 0) {
                a->first_input[f] = i;
                a->new_count[i]++;
                a->reached++;
            }
        }
        if (a->new_count[i])
            a->curve[a->ncurve++] = (struct cov_point){in->time_ms, i, a->reached};
    }
    a->nmodules_g = d->nmodules;
    for (uint32_t m = 0; m < d->nmodules; m++) {
        a->modules[m].name = d->modules[m].path;
        a->modules[m].funcs = d->modules[m].nfuncs;
        for (uint32_t j = 0; j < d->modules[m].nfuncs; j++)
            a->modules[m].reached += a->inputs_reaching[d->modules[m].first + j] > 0;
    }
    if (group_files(a) || blockers(a) || cov_analyse_blocks(d, &a->blk)) {
        cov_analysis_free(a);
        return -ENOMEM;
    }
    return 0;
}

/* ---- diff ------------------------------------------------------------------------- */

struct key {
    const char *mod, *linkage, *file;
    uint32_t func;
    int side;
};

static int key_cmp(const void *pa, const void *pb)
{
    const struct key *a = pa, *b = pb;
    int c = strcmp(a->mod, b->mod);
    if (!c)
        c = strcmp(a->linkage, b->linkage);
    if (!c)
        c = strcmp(a->file, b->file);
    if (!c)
        c = a->side - b->side;
    return c;
}

int cov_diff(const struct cov_analysis *a, const struct cov_analysis *b,
             struct cov_diff_row **rows, uint32_t *nrows, uint32_t *common)
{
    const struct cov_analysis *s[2] = {a, b};
    size_t n = (size_t)a->d->nfuncs + b->d->nfuncs;
    struct key *k = malloc((n + 1) * sizeof(*k));
    struct cov_diff_row *r = malloc((n + 1) * sizeof(*r));
    if (!k || !r) {
        free(k);
        free(r);
        return -ENOMEM;
    }
    size_t m = 0;
    for (int side = 0; side < 2; side++) {
        const struct cov_data *d = s[side]->d;
        for (uint32_t i = 0; i < d->nfuncs; i++)
            if (s[side]->inputs_reaching[i])
                /* not by module: two campaigns' binaries are often named apart (an
                 * AFL++ build, a ptcall build); linkage name and file tell functions apart */
                k[m++] = (struct key){"",
                                      d->funcs[i].linkage ? d->funcs[i].linkage : "",
                                      d->funcs[i].file ? d->funcs[i].file : "", i, side};
    }
    qsort(k, m, sizeof(*k), key_cmp);
    uint32_t nr = 0, both = 0;
    for (size_t i = 0; i < m;) {
        size_t j = i + 1;
        while (j < m && !strcmp(k[j].mod, k[i].mod) && !strcmp(k[j].linkage, k[i].linkage) &&
               !strcmp(k[j].file, k[i].file))
            j++;
        int sides = 0;
        for (size_t x = i; x < j; x++)
            sides |= 1 << k[x].side;
        if (sides == 3) {
            both++;
        } else {
            int side = sides == 1 ? 0 : 1;
            r[nr++] = (struct cov_diff_row){k[i].func, side,
                                            s[side]->inputs_reaching[k[i].func]};
        }
        i = j;
    }
    free(k);
    /* A's only functions first (the sort above put them in key order within each side) */
    struct cov_diff_row *o = malloc(((size_t)nr + 1) * sizeof(*o));
    if (!o) {
        free(r);
        return -ENOMEM;
    }
    uint32_t no = 0;
    for (int side = 0; side < 2; side++)
        for (uint32_t i = 0; i < nr; i++)
            if (r[i].side == side)
                o[no++] = r[i];
    free(r);
    *rows = o;
    *nrows = no;
    *common = both;
    return 0;
}
