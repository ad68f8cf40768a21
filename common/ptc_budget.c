/* Choosing which functions to trace within a budget (ptc_budget.h). */
#include "ptc_budget.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct ranked {
    uint64_t events; /* calls * events_per_call */
    size_t index;
};

/* cheapest to trace first: fewer events, then the lower index (stable, reproducible) */
static int by_events(const void *a, const void *b)
{
    const struct ranked *x = a, *y = b;
    if (x->events != y->events)
        return x->events < y->events ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static int bad_figure(double v) { return isnan(v) || v < 0; }

int ptc_budget_choose(const struct ptc_budget_model *m, struct ptc_budget_func *f, size_t n,
                      struct ptc_budget_result *r)
{
    if (!m || !r || (n && !f) || bad_figure(m->per_event) || bad_figure(m->per_count) ||
        bad_figure(m->budget)) {
        errno = EINVAL;
        return -1;
    }
    memset(r, 0, sizeof(*r));
    struct ranked *order = malloc((n ? n : 1) * sizeof(*order));
    if (!order) {
        errno = ENOMEM;
        return -1;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        f[i].flags &= ~PTC_BUDGET_F_TRACED;
        if (!(f[i].flags & PTC_BUDGET_F_CANDIDATE))
            continue;
        order[k].events = f[i].calls * f[i].events_per_call;
        order[k++].index = i;
        r->calls_total += f[i].calls;
        r->cost_counting += (double)f[i].calls * m->per_count;
        r->cost_all += (double)f[i].calls * f[i].events_per_call * m->per_event;
    }
    r->candidates = k;
    r->cost_chosen = r->cost_counting;
    if (r->cost_counting > m->budget) {
        r->outcome = PTC_BUDGET_BELOW_COUNTING;
        free(order);
        return 0;
    }
    if (k > 1)
        qsort(order, k, sizeof(*order), by_events);
    for (size_t j = 0; j < k; j++) {
        struct ptc_budget_func *g = &f[order[j].index];
        double extra = (double)g->calls * ((double)g->events_per_call * m->per_event -
                                            m->per_count);
        /* the order is by events, so every later function costs at least as much */
        if (r->cost_chosen + extra > m->budget)
            break;
        r->cost_chosen += extra;
        g->flags |= PTC_BUDGET_F_TRACED;
        r->traced++;
        r->calls_traced += g->calls;
    }
    r->outcome = r->traced == k ? PTC_BUDGET_ALL : PTC_BUDGET_OK;
    free(order);
    return 0;
}
