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
    cov_reach_free(&a->reach);
    free(a->inputs_reaching);
    free(a->first_input);
    free(a->calls);
    free(a->new_count);
    free(a->curve);
    free(a->modules);
    free(a->files);
    free(a->blockers);
    free(a->blocker_callees);
    free(a->callers_start);
    free(a->callers);
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

/* The reached direct callers of every function never reached (a CSR index): what the
 * blockers list shows beside each unreached callee. A caller that calls a callee from
 * several places is listed once. */
static int index_callers(struct cov_analysis *a)
{
    const struct cov_data *d = a->d;
    uint32_t *start = calloc((size_t)d->nfuncs + 2, sizeof(*start));
    if (!start)
        return -ENOMEM;
    size_t total = 0;
    for (uint32_t i = 0; i < d->nfuncs; i++)
        if (a->inputs_reaching[i])
            for (uint32_t k = 0; k < d->funcs[i].ncallees; k++) {
                uint32_t c = d->funcs[i].callees[k];
                if (c < d->nfuncs && !a->inputs_reaching[c]) {
                    start[c + 1]++;
                    total++;
                }
            }
    for (uint32_t i = 0; i < d->nfuncs; i++)
        start[i + 1] += start[i];
    uint32_t *list = malloc((total + 1) * sizeof(*list));
    uint32_t *fill = malloc(((size_t)d->nfuncs + 1) * sizeof(*fill));
    if (!list || !fill) {
        free(start);
        free(list);
        free(fill);
        return -ENOMEM;
    }
    memcpy(fill, start, (size_t)d->nfuncs * sizeof(*fill));
    for (uint32_t i = 0; i < d->nfuncs; i++)
        if (a->inputs_reaching[i])
            for (uint32_t k = 0; k < d->funcs[i].ncallees; k++) {
                uint32_t c = d->funcs[i].callees[k];
                /* callers come in order, so a repeat is the last one written */
                if (c < d->nfuncs && !a->inputs_reaching[c] &&
                    !(fill[c] > start[c] && list[fill[c] - 1] == i))
                    list[fill[c]++] = i;
            }
    /* close the gaps repeats left: compact each list to its start */
    uint32_t w = 0;
    for (uint32_t c = 0; c < d->nfuncs; c++) {
        uint32_t from = start[c], to = fill[c];
        start[c] = w;
        for (uint32_t k = from; k < to; k++)
            list[w++] = list[k];
    }
    start[d->nfuncs] = w;
    free(fill);
    a->callers_start = start;
    a->callers = list;
    return 0;
}

/* Reached functions with direct callees never reached, ranked by the callees' size: where a
 * fuzzer stops short (Fuzz Introspector's "blockers"). A callee's size is its own, not what
 * lies behind it: the callees of an unreached callee are counted at their own callers. Each
 * unreached callee is listed once, under the highest-ranked of its reached callers (its
 * other callers are shown beside it): a callee called from 30 places was 30 rows. */
static int blockers(struct cov_analysis *a)
{
    const struct cov_data *d = a->d;
    a->have_sizes = d->nmodules > 0;
    for (uint32_t m = 0; m < d->nmodules; m++)
        if (!d->modules[m].has_callees)
            a->have_sizes = 0;
    if (index_callers(a))
        return -ENOMEM;
    struct cov_blocker *b = malloc(((size_t)d->nfuncs + 1) * sizeof(*b));
    uint32_t *claimed = calloc((size_t)d->nfuncs + 1, sizeof(*claimed));
    uint32_t *cl = malloc(((size_t)a->callers_start[d->nfuncs] + 1) * sizeof(*cl));
    if (!b || !claimed || !cl) {
        free(b);
        free(claimed);
        free(cl);
        return -ENOMEM;
    }
    /* first every caller with all its unreached callees, ranked as before ... */
    uint32_t nb = 0;
    for (uint32_t i = 0; i < d->nfuncs; i++) {
        const struct cov_func *f = &d->funcs[i];
        if (!a->inputs_reaching[i] || !f->ncallees)
            continue;
        struct cov_blocker x = {i, 0, 0, 0, 0};
        for (uint32_t k = 0; k < f->ncallees; k++) {
            uint32_t c = f->callees[k];
            if (c < d->nfuncs && !a->inputs_reaching[c] && claimed[c] != i + 1) {
                claimed[c] = i + 1;   /* a callee called twice counts once */
                x.nunreached++;
                x.insns += d->funcs[c].insns;
                x.blocks += d->funcs[c].blocks;
            }
        }
        if (x.nunreached)
            b[nb++] = x;
    }
    qsort(b, nb, sizeof(*b), by_unreached_code);
    /* ... then, in that order, each takes the callees no caller above it took, and the
     * rows are ranked again by what they kept */
    memset(claimed, 0, ((size_t)d->nfuncs + 1) * sizeof(*claimed));
    uint32_t kept = 0, ncl = 0;
    for (uint32_t j = 0; j < nb; j++) {
        struct cov_blocker x = {b[j].func, 0, 0, 0, ncl};
        const struct cov_func *f = &d->funcs[x.func];
        for (uint32_t k = 0; k < f->ncallees; k++) {
            uint32_t c = f->callees[k];
            if (c < d->nfuncs && !a->inputs_reaching[c] && !claimed[c]) {
                claimed[c] = 1;
                cl[ncl++] = c;
                x.nunreached++;
                x.insns += d->funcs[c].insns;
                x.blocks += d->funcs[c].blocks;
            }
        }
        if (x.nunreached)
            b[kept++] = x;
    }
    qsort(b, kept, sizeof(*b), by_unreached_code);
    free(claimed);
    a->blockers = b;
    a->nblockers = kept;
    a->blocker_callees = cl;
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
    a->end_ms = d->campaign_ms >= 0 ? d->campaign_ms : -1;
    for (uint32_t i = 0; i < d->ninputs; i++) {
        const struct cov_input *in = &d->inputs[i];
        if (in->outcome < 4)
            a->counted[in->outcome]++;
        if (in->time_ms > a->end_ms)
            a->end_ms = in->time_ms;
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
    if (group_files(a) || blockers(a) || cov_analyse_blocks(d, &a->blk) ||
        cov_reach_compute(d, a->inputs_reaching, &a->blk, &a->reach)) {
        cov_analysis_free(a);
        return -ENOMEM;
    }
    return 0;
}

/* ---- diff ------------------------------------------------------------------------- */

struct key {
    const char *linkage, *file, *base;   /* base: the file's last path component */
    uint32_t func;
    int side;
    int reached;              /* some input of that side reached it */
};

static int key_cmp(const void *pa, const void *pb)
{
    const struct key *a = pa, *b = pb;
    int c = strcmp(a->linkage, b->linkage);
    if (!c)
        c = strcmp(a->base, b->base);
    if (!c)
        c = strcmp(a->file, b->file);
    if (!c)
        c = a->side - b->side;
    return c;
}

/* Whether two source paths name the same file as far as their texts tell: equal, or one the
 * other's tail after a '/'. The pass writes a file relative to the directory it was compiled
 * in when it lies below it, so one source built in two directories reads "src/trees.c" in
 * one build and "/work/z/src/trees.c" in the other (every function of such a pair was listed
 * as one side's only). */
static int same_file(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la < lb) {
        const char *t = a;
        a = b;
        b = t;
        size_t u = la;
        la = lb;
        lb = u;
    }
    return !strcmp(a + (la - lb), b) && (la == lb || a[la - lb - 1] == '/');
}

int cov_diff(const struct cov_analysis *a, const struct cov_analysis *b,
             struct cov_diff_row **rows, uint32_t *nrows, uint32_t *common)
{
    const struct cov_analysis *s[2] = {a, b};
    size_t n = (size_t)a->d->nfuncs + b->d->nfuncs;
    struct key *k = malloc((n + 1) * sizeof(*k));
    struct cov_diff_row *r = malloc((n + 1) * sizeof(*r));
    size_t *rep = malloc((n + 1) * sizeof(*rep));
    if (!k || !r || !rep) {
        free(k);
        free(r);
        free(rep);
        return -ENOMEM;
    }
    /* every instrumented function of both sides, reached or not: a function one side reached
     * and the other build never instrumented (inlined away in a late build, another version
     * of the code) is not a function only that campaign's inputs reach */
    size_t m = 0;
    for (int side = 0; side < 2; side++) {
        const struct cov_data *d = s[side]->d;
        for (uint32_t i = 0; i < d->nfuncs; i++) {
            /* not by module: two campaigns' binaries are often named apart (an
             * AFL++ build, a ptcall build); linkage name and file tell functions apart */
            const char *file = d->funcs[i].file ? d->funcs[i].file : "";
            const char *slash = strrchr(file, '/');
            k[m++] = (struct key){d->funcs[i].linkage ? d->funcs[i].linkage : "", file,
                                  slash ? slash + 1 : file, i, side,
                                  s[side]->inputs_reaching[i] > 0};
        }
    }
    qsort(k, m, sizeof(*k), key_cmp);
    uint32_t nr = 0, both = 0;
    for (size_t i = 0; i < m;) {
        /* a group: one linkage name in files of one base name; within it, the functions
         * whose paths agree (same_file) are one function */
        size_t j = i + 1;
        while (j < m && !strcmp(k[j].linkage, k[i].linkage) && !strcmp(k[j].base, k[i].base))
            j++;
        for (size_t x = i; x < j; x++) {
            rep[x] = x;
            for (size_t y = i; y < x; y++)
                if (rep[y] == y && same_file(k[x].file, k[y].file)) {
                    rep[x] = y;
                    break;
                }
        }
        for (size_t c = i; c < j; c++) {
            if (rep[c] != c)
                continue;
            int present = 0, reached = 0;
            uint32_t func[2] = {0, 0};
            for (size_t x = c; x < j; x++) {
                if (rep[x] != c)
                    continue;
                present |= 1 << k[x].side;
                if (k[x].reached && !(reached & (1 << k[x].side)))
                    func[k[x].side] = k[x].func;
                reached |= k[x].reached << k[x].side;
            }
            if (reached == 3) {
                both++;
            } else if (reached) {
                int side = reached == 1 ? 0 : 1;
                r[nr++] = (struct cov_diff_row){func[side], side,
                                                s[side]->inputs_reaching[func[side]],
                                                (present >> (1 - side)) & 1};
            }
        }
        i = j;
    }
    free(rep);
    free(k);
    /* A's first, then B's; on each side the functions the other build has (and its inputs
     * never reached) before those it never instrumented (the sort above put them in key
     * order within each group) */
    struct cov_diff_row *o = malloc(((size_t)nr + 1) * sizeof(*o));
    if (!o) {
        free(r);
        return -ENOMEM;
    }
    uint32_t no = 0;
    for (int side = 0; side < 2; side++)
        for (int inst = 1; inst >= 0; inst--)
            for (uint32_t i = 0; i < nr; i++)
                if (r[i].side == side && r[i].instrumented_other == inst)
                    o[no++] = r[i];
    free(r);
    *rows = o;
    *nrows = no;
    *common = both;
    return 0;
}
