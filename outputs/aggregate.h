/* Per-function figures (calls, total, self) and caller -> callee edges computed from the
 * events a view is given: what `report` and `graph` show when filters are set, and the rows
 * of `report --by thread|process`. Without filters they read the session's own aggregates,
 * which the decoder computes faster; both give the same figures for the same calls. */
#ifndef PTCALL_AGGREGATE_H
#define PTCALL_AGGREGATE_H

#include "output.h"

enum ptc_by { PTC_BY_NONE = 0, PTC_BY_THREAD = 1, PTC_BY_PROCESS = 2 };

/* The figures of one group (all calls, one thread or one process). */
struct ptc_agg_group {
    uint32_t pid, tid;          /* tid 0 for a process, both 0 for all */
    uint32_t nfuncs;
    struct ptc_func_stats *st;  /* by function id */
    uint64_t calls;
};

struct ptc_agg {
    int by;
    struct ptc_agg_group *groups;
    size_t ngroups, capgroups;
    struct ptc_edge *edges;     /* over all groups */
    size_t nedges, capedges;
    uint64_t *ehash;            /* open addressing: edge index + 1, by caller << 32 | callee */
    size_t ehcap;
};

void *ptc_view_aggregate(const struct ptc_view_opts *o, const struct ptc_output_ops **ops);
/* The figures, once the driver has finished (owned by the view). */
const struct ptc_agg *ptc_view_aggregate_result(const void *view);
/* The same figures from a session's aggregates (no filters): one group. Returns 0, or -1
 * when out of memory. Free with ptc_agg_free(). */
int ptc_agg_from_session(struct ptc_agg *a, const struct ptc_session *s);
void ptc_agg_free(struct ptc_agg *a);

#endif
