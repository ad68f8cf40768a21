/* A calling-context tree: one node per distinct call path (root ... function), with its
 * calls, self and total time, built from enter and return events. Memory grows with the
 * number of distinct paths, never with the trace's length. The folded-stack and flame-graph
 * views and `report --paths` read it. */
#ifndef PTCALL_CCT_H
#define PTCALL_CCT_H

#include <stddef.h>
#include <stdint.h>

#include "output.h"

#define PTC_CCT_ROOT 0u
/* A pseudo-function of traces that do not hold a thread's whole life (docs/usage.md,
 * "Windows: attach and snapshots"): calls entered before the trace began hang under a root
 * frame of this name, since their callers are not in the trace (their own figures stay
 * theirs: a flame graph's widths still add up to each function's). Calls still open at the
 * end are counted in their node's open. */
#define PTC_CCT_BEFORE (UINT32_MAX - 1)
/* The name of node func for views: a function's short name (buf holds it), a pseudo-frame's
 * label, or "?". */
const char *ptc_cct_func_name(const struct ptc_session *s, uint32_t func, char *buf, size_t n);

struct ptc_cct_node {
    uint32_t parent;        /* PTC_CCT_ROOT for outermost frames */
    uint32_t func;          /* UINT32_MAX for the root */
    uint32_t depth;         /* 1 for outermost frames, 0 for the root */
    uint32_t first_child, next_sibling; /* 0: none (node 0 is the root, never a child) */
    uint32_t hot_func, hot_child;       /* the child last looked up: a loop calls the same
                                           callee again and again (hot_child 0: none) */
    uint64_t calls, self, total;
    uint64_t open;          /* of its calls, those still open when their thread's trace ended */
};

struct ptc_cct {
    struct ptc_cct_node *nodes;
    uint32_t n, cap;
    uint64_t *hkeys;        /* open addressing: parent << 32 | func */
    uint32_t *hvals;
    uint32_t hcap;
};

int ptc_cct_init(struct ptc_cct *t);
void ptc_cct_free(struct ptc_cct *t);
/* The child of parent for func, added if new. Returns its id, or 0 when out of memory. */
uint32_t ptc_cct_child(struct ptc_cct *t, uint32_t parent, uint32_t func);

/* Feeds one enter or return event (others are ignored). Returns 0, or 1 when out of
 * memory. The node of each open frame is kept in the frame's word (e->frame_user). */
int ptc_cct_feed(struct ptc_cct *t, const struct ptc_out_event *e);

/* Writes the names on the path of node (root first), separated by sep, to w; ';' inside a
 * name becomes ':' so that folded lines stay parseable. */
void ptc_cct_put_path(const struct ptc_cct *t, const struct ptc_session *s, uint32_t node,
                      struct ptc_wbuf *w, const char *sep);

#endif
