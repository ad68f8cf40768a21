/* Which functions a call graph shows (ptcall graph's DOT, the web API's
 * /api/v1/runs/ID/callgraph): one routine, so both choose the same nodes. Pure: it works
 * on figures its caller read (from a decoded trace or from the runs database). */
#ifndef PTCALL_DB_GRAPH_PICK_H
#define PTCALL_DB_GRAPH_PICK_H

#include <stddef.h>
#include <stdint.h>

struct dbg_node {
    uint64_t calls, self, total; /* self and total: 0 when the run has no times */
};
struct dbg_edge {
    size_t caller, callee;       /* indexes into the nodes */
    uint64_t calls;
};
struct dbg_opts {
    double min_share;            /* 0..1 of the run's time (by calls when untimed) */
    size_t max_nodes;            /* 0: no cap */
    int timed;                   /* weigh by total time; else by calls */
    int has_focus;
    size_t focus;                /* a node index: it, its callers up, its callees down */
};
struct dbg_pick {
    unsigned char *keep;         /* per node: 1 shown */
    unsigned char *keep_edge;    /* per edge: 1 shown */
    size_t nodes, edges;         /* how many are shown */
    size_t cut;                  /* nodes over min_share the cap left out */
    uint64_t all;                /* the share's denominator: the sum of self (or calls) */
};

/* Chooses the nodes: those whose inclusive share (total / all, or calls / all calls when
 * untimed) is at least min_share, heaviest first up to max_nodes, always with the roots
 * (functions with callees and no caller but themselves) and the heaviest path of callers
 * from a root to each chosen node; edges among them. With a focus: only the focus, every
 * function that calls it (transitively) and every one it calls (transitively, over
 * min_share), and the edges on paths through it. 0, or -1 when out of memory. */
int dbg_pick(const struct dbg_node *n, size_t nn, const struct dbg_edge *e, size_t ne,
             const struct dbg_opts *o, struct dbg_pick *out);
void dbg_pick_free(struct dbg_pick *p);

#endif
