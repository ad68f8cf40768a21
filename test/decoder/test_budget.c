/* ptc_budget_choose (common/ptc_budget.h): the cheapest functions first within the budget,
 * the floor of counting, the candidates only, and bad models refused. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ptc_budget.h"

static int failures;
#define CHECK(c)                                                                         \
    do {                                                                                 \
        if (!(c)) {                                                                      \
            fprintf(stderr, "%s:%d: FAIL: %s\n", __FILE__, __LINE__, #c);                \
            failures++;                                                                  \
        }                                                                                \
    } while (0)

#define C PTC_BUDGET_F_CANDIDATE
#define T PTC_BUDGET_F_TRACED

int main(void)
{
    /* calls over the span: 1000, 10, 100000, 0, 50 (not a candidate) */
    struct ptc_budget_func f[5] = {
        {1000, 2, C}, {10, 2, C}, {100000, 2, C}, {0, 2, C}, {50, 2, 0}};
    struct ptc_budget_model m = {.per_event = 10, .per_count = 1, .budget = 0};
    struct ptc_budget_result r;

    /* counting the candidates costs 101010: a budget below it traces nothing */
    m.budget = 101009;
    CHECK(ptc_budget_choose(&m, f, 5, &r) == 0);
    CHECK(r.outcome == PTC_BUDGET_BELOW_COUNTING && r.traced == 0 && r.candidates == 4);
    CHECK(r.cost_counting == 101010 && r.calls_total == 101010);
    for (int i = 0; i < 5; i++)
        CHECK(!(f[i].flags & T));

    /* room for the uncalled one, the 10-call one (+190) and the 1000-call one (+19000) */
    m.budget = 101010 + 190 + 19000;
    CHECK(ptc_budget_choose(&m, f, 5, &r) == 0);
    CHECK(r.outcome == PTC_BUDGET_OK && r.traced == 3 && r.calls_traced == 1010);
    CHECK((f[0].flags & T) && (f[1].flags & T) && !(f[2].flags & T) && (f[3].flags & T));
    CHECK(!(f[4].flags & T)); /* never a non-candidate */
    CHECK(fabs(r.cost_chosen - m.budget) < 1e-6);

    /* one less: the 1000-call one no longer fits */
    m.budget -= 1;
    CHECK(ptc_budget_choose(&m, f, 5, &r) == 0);
    CHECK(r.traced == 2 && !(f[0].flags & T) && (f[1].flags & T) && (f[3].flags & T));

    /* everything fits */
    m.budget = 1e12;
    CHECK(ptc_budget_choose(&m, f, 5, &r) == 0);
    CHECK(r.outcome == PTC_BUDGET_ALL && r.traced == 4 && r.cost_all == 2020200);

    /* a leaf whose exit is unarmed costs one event per call */
    struct ptc_budget_func g[2] = {{100, 1, C}, {60, 2, C}};
    m = (struct ptc_budget_model){.per_event = 1, .per_count = 0, .budget = 100};
    CHECK(ptc_budget_choose(&m, g, 2, &r) == 0);
    CHECK((g[0].flags & T) && !(g[1].flags & T));

    /* nothing to choose from */
    CHECK(ptc_budget_choose(&m, NULL, 0, &r) == 0 && r.outcome == PTC_BUDGET_ALL);

    /* bad models */
    m.per_event = NAN;
    errno = 0;
    CHECK(ptc_budget_choose(&m, g, 2, &r) == -1 && errno == EINVAL);
    m.per_event = 1;
    m.budget = -1;
    CHECK(ptc_budget_choose(&m, g, 2, &r) == -1 && errno == EINVAL);
    CHECK(ptc_budget_choose(&m, NULL, 2, &r) == -1);

    if (failures)
        return 1;
    printf("budget: all checks passed\n");
    return 0;
}
