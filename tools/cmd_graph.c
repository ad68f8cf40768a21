/* ptcall graph: the dynamic call graph in Graphviz DOT. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"
#include "cli_budget.h"
#include "cli_select.h"
#include "cli_view.h"
#include "commands.h"
#include "db_graph_pick.h"
#include "options.h"

static int cmp_edge(const void *a, const void *b)
{
    const struct ptc_edge *x = a, *y = b;
    if (x->caller != y->caller)
        return x->caller < y->caller ? -1 : 1;
    return x->callee < y->callee ? -1 : x->callee > y->callee;
}

/* White to red by share (0..1). */
static void heat_colour(double share, char *out, size_t n)
{
    if (share < 0)
        share = 0;
    if (share > 1)
        share = 1;
    /* a square-root ramp: small shares still show a tint */
    double r = share, x = share;
    for (int i = 0; i < 20 && x > 0; i++)
        x = 0.5 * (x + r / x);
    unsigned gb = (unsigned)(255.0 - 200.0 * x);
    snprintf(out, n, "#ff%02x%02x", gb, gb);
}

/* The nodes: db_graph_pick's choice (the web API's /callgraph makes the same one) over the
 * edges with at least min_calls calls; then a function with fewer than min_calls calls that
 * no kept edge touches goes. keep: per function id, 1 shown. */
static int pick_nodes(const struct ptc_session *s, const struct ptc_agg_group *g,
                      const struct ptc_totals *t, const struct ptc_edge *edges, size_t ne,
                      uint64_t min_calls, double min_share, char *keep)
{
    uint32_t nf = ptc_session_num_funcs(s);
    struct dbg_node *gn = calloc(nf ? nf : 1, sizeof(*gn));
    struct dbg_edge *ge = malloc((ne ? ne : 1) * sizeof(*ge));
    size_t *which = malloc((ne ? ne : 1) * sizeof(*which));
    struct dbg_pick p;
    memset(&p, 0, sizeof(p));
    struct dbg_opts o = {.min_share = min_share / 100.0, .max_nodes = 0, .timed = t->timed};
    size_t k = 0;
    int rc = -1;
    if (!gn || !ge || !which)
        goto out;
    for (uint32_t id = 0; id < nf && id < g->nfuncs; id++)
        gn[id] = (struct dbg_node){g->st[id].calls, t->timed ? g->st[id].self : 0,
                                   t->timed ? g->st[id].total : 0};
    for (size_t i = 0; i < ne; i++)
        if (edges[i].count >= min_calls && edges[i].caller < nf && edges[i].callee < nf) {
            ge[k] = (struct dbg_edge){edges[i].caller, edges[i].callee, edges[i].count};
            which[k++] = i;
        }
    if (dbg_pick(gn, nf, ge, k, &o, &p))
        goto out;
    for (uint32_t id = 0; id < nf; id++)
        keep[id] = p.keep[id] && gn[id].calls >= min_calls;
    for (size_t i = 0; i < k; i++)
        if (p.keep_edge[i])
            keep[edges[which[i]].caller] = keep[edges[which[i]].callee] = 1;
    rc = 0;
out:
    dbg_pick_free(&p);
    free(gn);
    free(ge);
    free(which);
    return rc;
}

static int print_graph(const char *path, const struct ptc_session *s, const struct ptc_totals *t,
                       const struct ptc_agg *agg, uint64_t min_calls, double min_share, int heat,
                       const struct cli_args *a, int filtered)
{
    const struct ptc_agg_group *g = &agg->groups[0];
    uint32_t nf = ptc_session_num_funcs(s);
    struct ptc_edge *edges = malloc((agg->nedges ? agg->nedges : 1) * sizeof(*edges));
    char *keep = calloc(nf ? nf : 1, 1);
    if (!edges || !keep) {
        free(edges);
        free(keep);
        return cli_fail("graph", "out of memory", cli_advice(PTC_E_NOMEM));
    }
    memcpy(edges, agg->edges, agg->nedges * sizeof(*edges));
    size_t ne = agg->nedges;
    qsort(edges, ne, sizeof(*edges), cmp_edge);
    uint64_t all_time = 0, all_calls = 0, max_edge = 1;
    for (uint32_t id = 0; id < nf && id < g->nfuncs; id++) {
        all_time += g->st[id].self;
        all_calls += g->st[id].calls;
    }
    struct ptc_func_stats zero = {0, 0, 0, 0};
#define ST(id) ((id) < g->nfuncs ? &g->st[id] : &zero)
    if (pick_nodes(s, g, t, edges, ne, min_calls, min_share, keep)) {
        free(edges);
        free(keep);
        return cli_fail("graph", "out of memory", cli_advice(PTC_E_NOMEM));
    }
    for (size_t i = 0; i < ne; i++)
        if (edges[i].count >= min_calls && keep[edges[i].caller] && keep[edges[i].callee] &&
            edges[i].count > max_edge)
            max_edge = edges[i].count;
    printf("// ptcall graph format_version=1: dynamic call graph of ");
    cli_text_str(stdout, path); /* one line: a comment ends at the line's end */
    printf("\n// nodes: functions (label: name, calls%s); edges: caller -> callee, label = calls\n",
           t->timed ? ", inclusive time" : "");
    if (filtered)
        printf("// filtered: the figures count only the calls the filters keep\n");
    cli_print_selection(stdout, "// ", s);
    /* within a budget: a counted function's node has calls but no edges and no time */
    cli_print_budget(stdout, "// ", s);
    if (t->lost_events || t->gaps)
        printf("// warning: %llu events lost at %llu gap(s): counts are lower bounds\n",
               (unsigned long long)t->lost_events, (unsigned long long)t->gaps);
    if (a->damage)
        printf("// warning: salvaged from a damaged trace: %s\n", a->damage_msg);
    printf("digraph ptcall {\n  node [shape=box, fontname=\"monospace\"%s];\n",
           heat ? ", style=filled" : "");
    for (uint32_t id = 0; id < nf; id++) {
        if (!keep[id])
            continue;
        const struct ptc_func_info *fi = ptc_session_func(s, id);
        const struct ptc_func_stats *st = ST(id);
        char tb[32] = "";
        /* a function counted within a budget has calls only: no time, never 0 ns */
        if (t->timed && ptc_session_func_state(s, id) == PTC_FUNC_TRACED) {
            char b[28];
            cli_fmt_time(b, sizeof(b), st->total, t->has_timebase);
            snprintf(tb, sizeof(tb), "\\n%s", b);
        } else if (ptc_session_func_state(s, id) == PTC_FUNC_COUNTED) {
            snprintf(tb, sizeof(tb), "\\ncounted");
        }
        /* the name escaped for a label (common/ptc_escape.h; a long one cut), then lines of
         * figures: \n is a line break of Graphviz's labels */
        printf("  f%u [label=\"", id);
        cli_dot_chars(stdout, fi->name);
        printf("\\n%llu call%s%s\", tooltip=", (unsigned long long)st->calls,
               st->calls == 1 ? "" : "s", tb);
        cli_dot_str(stdout, fi->module);
        if (heat) {
            char col[16];
            double share = t->timed ? (all_time ? (double)st->total / (double)all_time : 0)
                                    : (all_calls ? (double)st->calls / (double)all_calls : 0);
            heat_colour(share, col, sizeof(col));
            printf(", fillcolor=\"%s\"", col);
        }
        printf("];\n");
    }
    for (size_t i = 0; i < ne; i++)
        if (edges[i].count >= min_calls && keep[edges[i].caller] && keep[edges[i].callee]) {
            printf("  f%u -> f%u [label=\"%llu\"", edges[i].caller, edges[i].callee,
                   (unsigned long long)edges[i].count);
            if (heat)
                printf(", penwidth=%.2f",
                       1.0 + 4.0 * (double)edges[i].count / (double)max_edge);
            printf("];\n");
        }
    printf("}\n");
#undef ST
    free(edges);
    free(keep);
    return 0;
}

static int run_graph(struct cli_values *o)
{
    if (o->npos > 1)
        return cli_usage_error(CMD_GRAPH, "more than one trace file given");
    if (!o->npos)
        return cli_usage_error(CMD_GRAPH, "no trace file given");
    struct cli_args a = {.cmd = "graph", .path = o->pos[0], .salvage = o->salvage,
                         .threads = o->threads};
    const struct cli_filter *cf = &o->filter;
    uint64_t min_calls = o->min_calls;
    double min_share = o->min_share;
    int heat = o->graph.heat, r;
    int filtered = cli_filter_any(cf);
    struct cli_view_run vr = {.a = &a, .cf = cf, .make = ptc_view_aggregate};
    struct ptc_agg own;
    const struct ptc_agg *agg;
    struct ptc_session *s;
    if (filtered) {
        a.threads = 1;
        if (cli_view_run(&vr)) {
            cli_view_free(&vr);
            return 1;
        }
        s = vr.s;
        agg = ptc_view_aggregate_result(vr.view);
    } else {
        s = cli_decode(&a, NULL, NULL, NULL, NULL);
        if (!s)
            return 1;
        if (ptc_agg_from_session(&own, s)) {
            ptc_session_free(s);
            return cli_fail("graph", "out of memory", cli_advice(PTC_E_NOMEM));
        }
        agg = &own;
    }
    struct ptc_totals t;
    ptc_session_totals(s, &t);
    if (filtered && (r = cli_filter_check(cf, "graph", s, t.timed))) {
        cli_view_free(&vr);
        return r;
    }
    static char outbuf[1 << 16];
    setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
    r = print_graph(a.path, s, &t, agg, min_calls, min_share, heat, &a, filtered);
    if (filtered && !vr.info.shown_calls)
        cli_filter_explain_empty(cf, "graph", s, vr.info.last_time, t.has_timebase);
    if (a.damage)
        cli_warn_salvaged("graph", "the graph covers", a.damage_msg);
    if (filtered) {
        cli_view_free(&vr);
    } else {
        ptc_agg_free(&own);
        ptc_session_free(s);
    }
    return r ? r : cli_flush_output("graph", "the graph");
}

int cmd_graph(int argc, char **argv)
{
    struct cli_values o;
    int r = cli_parse(CMD_GRAPH, argc, argv, &o, 0);
    if (r != CLI_GO)
        return r;
    r = run_graph(&o);
    cli_values_free(&o);
    return r;
}
