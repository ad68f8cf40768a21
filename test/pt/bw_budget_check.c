/* pt-bandwidth-budget's reference: ptc_budget_choose on the figures the test gives it.
 *   bw_budget_check PER_EVENT PER_COUNT BUDGET < lines "CALLS EVENTS_PER_CALL"
 * prints the outcome, then one line per input line: 1 traced, 0 not. */
#include <stdio.h>
#include <stdlib.h>

#include "ptc_budget.h"

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: bw_budget_check PER_EVENT PER_COUNT BUDGET < CALLS EPC lines\n");
        return 2;
    }
    struct ptc_budget_model m = {strtod(argv[1], NULL), strtod(argv[2], NULL),
                                 strtod(argv[3], NULL)};
    size_t n = 0, cap = 64;
    struct ptc_budget_func *f = malloc(cap * sizeof(*f));
    unsigned long long calls;
    unsigned epc;
    while (f && scanf("%llu %u", &calls, &epc) == 2) {
        if (n == cap && !(f = realloc(f, (cap *= 2) * sizeof(*f))))
            break;
        f[n++] = (struct ptc_budget_func){calls, epc, PTC_BUDGET_F_CANDIDATE};
    }
    struct ptc_budget_result r;
    if (!f || ptc_budget_choose(&m, f, n, &r)) {
        fprintf(stderr, "bw_budget_check: ptc_budget_choose failed\n");
        return 1;
    }
    printf("%d\n", (int)r.outcome);
    for (size_t i = 0; i < n; i++)
        printf("%d\n", (f[i].flags & PTC_BUDGET_F_TRACED) != 0);
    free(f);
    return 0;
}
