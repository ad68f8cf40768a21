/* ptcall graph: the dynamic call graph in Graphviz DOT. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"
#include "cli_view.h"
#include "commands.h"

static char USAGE[2600];

static void make_usage(void)
{
    snprintf(USAGE, sizeof(USAGE),
             "usage: ptcall graph FILE [--min-calls N] [--min-share P] [--heat] [filters]\n"
             "                    [--threads N] [--salvage]\n"
             "  --min-calls N  leave out edges called fewer than N times, and functions called fewer\n"
             "                 than N times that no kept edge touches (default 1)\n"
             "  --min-share P  leave out functions whose inclusive time is below P %% of the time\n"
             "                 in traced functions, and their edges (timed traces)\n"
             "  --heat         colour functions by their share of the time (or of the calls,\n"
             "                 untimed) and draw busier edges thicker\n"
             "  --threads N    decode with N threads, one per traced thread at most (default 1;\n"
             "                 0 = one per CPU; not with filters); the output is the same\n"
             "  --salvage      graph what precedes damage in a truncated or corrupt trace\n"
             "%s"
             "Writes DOT to stdout: ptcall graph run.ptc | dot -Tsvg > run.svg\n",
             CLI_FILTER_USAGE);
}

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
    struct ptc_func_stats zero = {0, 0, 0};
#define ST(id) ((id) < g->nfuncs ? &g->st[id] : &zero)
    /* a function too cold for --min-share goes, with its edges */
    char *cold = calloc(nf ? nf : 1, 1);
    if (!cold) {
        free(edges);
        free(keep);
        return cli_fail("graph", "out of memory", cli_advice(PTC_E_NOMEM));
    }
    for (uint32_t id = 0; id < nf; id++)
        if (min_share > 0 && t->timed &&
            (!all_time || 100.0 * (double)ST(id)->total / (double)all_time < min_share))
            cold[id] = 1;
    for (uint32_t id = 0; id < nf; id++)
        if (ST(id)->calls && ST(id)->calls >= min_calls && !cold[id])
            keep[id] = 1;
    for (size_t i = 0; i < ne; i++)
        if (edges[i].count >= min_calls && !cold[edges[i].caller] && !cold[edges[i].callee]) {
            keep[edges[i].caller] = keep[edges[i].callee] = 1;
            if (edges[i].count > max_edge)
                max_edge = edges[i].count;
        }
    printf("// ptcall graph format_version=1: dynamic call graph of ");
    for (const char *p = path; *p; p++)
        putchar(*p == '\n' ? ' ' : *p);
    printf("\n// nodes: functions (label: name, calls%s); edges: caller -> callee, label = calls\n",
           t->timed ? ", inclusive time" : "");
    if (filtered)
        printf("// filtered: the figures count only the calls the filters keep\n");
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
        char label[1200], tb[32] = "";
        if (t->timed) {
            char b[28];
            cli_fmt_time(b, sizeof(b), st->total, t->has_timebase);
            snprintf(tb, sizeof(tb), "\n%s", b);
        }
        snprintf(label, sizeof(label), "%s\n%llu call%s%s", fi->name,
                 (unsigned long long)st->calls, st->calls == 1 ? "" : "s", tb);
        printf("  f%u [label=", id);
        cli_dot_str(stdout, label);
        printf(", tooltip=");
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
    free(cold);
    free(edges);
    free(keep);
    return 0;
}

int cmd_graph(int argc, char **argv)
{
    make_usage();
    struct cli_args a = {.cmd = "graph", .usage = USAGE, .threads = 1};
    struct cli_filter cf;
    cli_filter_init(&cf);
    const char *v;
    uint64_t min_calls = 1;
    double min_share = 0;
    int heat = 0;
    for (int i = 1; i < argc; i++) {
        int r;
        if ((r = cli_filter_take(&cf, argc, argv, &i, "graph", USAGE))) {
            if (r != 1)
                return r;
        } else if ((r = cli_flag_value(argc, argv, &i, "--min-calls", &v))) {
            if (r < 0 || cli_parse_u64(v, &min_calls))
                return cli_usage_error("graph", USAGE, "--min-calls needs a number");
        } else if ((r = cli_flag_value(argc, argv, &i, "--min-share", &v))) {
            char *end;
            min_share = r > 0 ? strtod(v, &end) : -1;
            if (r < 0 || *end || !(min_share >= 0 && min_share <= 100))
                return cli_usage_error("graph", USAGE, "--min-share needs a percentage 0..100");
        } else if (!strcmp(argv[i], "--heat")) {
            heat = 1;
        } else if ((r = cli_take_threads(argc, argv, &i, &a))) {
            if (r != 1)
                return r;
        } else if ((r = cli_take_arg(&a, argv[i])) != CLI_ARG_TAKEN) {
            return r;
        }
    }
    int r = cli_args_done(&a);
    if (r)
        return r;
    int filtered = cf.f.have_pid || cf.f.have_tid || cf.f.nfuncs || cf.f.nexcludes ||
                   cf.f.max_depth || cf.f.have_window || cf.f.min_dur;
    struct cli_view_run vr = {.a = &a, .cf = &cf, .make = ptc_view_aggregate};
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
    if (filtered && (r = cli_filter_check(&cf, "graph", s, t.timed))) {
        cli_view_free(&vr);
        return r;
    }
    static char outbuf[1 << 16];
    setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
    r = print_graph(a.path, s, &t, agg, min_calls, min_share, heat, &a, filtered);
    if (filtered && !vr.info.shown_calls)
        cli_filter_explain_empty(&cf, "graph", s, vr.info.last_time, t.has_timebase);
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
