/* ptcall graph: the dynamic call graph in Graphviz DOT. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "commands.h"

static const char USAGE[] =
    "usage: ptcall graph FILE [--min-calls N] [--threads N] [--salvage]\n"
    "  --min-calls N  leave out edges called fewer than N times, and functions called fewer\n"
    "                 than N times that no kept edge touches (default 1)\n"
    "  --threads N    decode with N threads, one per traced thread at most (default 1;\n"
    "                 0 = one per CPU); the output is the same\n"
    "  --salvage      graph what precedes damage in a truncated or corrupt trace\n"
    "Writes DOT to stdout: ptcall graph run.ptc | dot -Tsvg > run.svg\n";

static int cmp_edge(const void *a, const void *b)
{
    const struct ptc_edge *x = a, *y = b;
    if (x->caller != y->caller)
        return x->caller < y->caller ? -1 : 1;
    return x->callee < y->callee ? -1 : x->callee > y->callee;
}

int cmd_graph(int argc, char **argv)
{
    struct cli_args a = {.cmd = "graph", .usage = USAGE, .threads = 1};
    const char *v;
    uint64_t min_calls = 1;
    for (int i = 1; i < argc; i++) {
        int r;
        if ((r = cli_flag_value(argc, argv, &i, "--min-calls", &v))) {
            if (r < 0 || cli_parse_u64(v, &min_calls))
                return cli_usage_error("graph", USAGE, "--min-calls needs a number");
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
    const char *path = a.path;
    struct ptc_session *s = cli_decode(&a, NULL, NULL, NULL, NULL);
    if (!s)
        return 1;
    struct ptc_totals t;
    ptc_session_totals(s, &t);
    struct ptc_edge *edges;
    size_t ne = ptc_session_edges(s, &edges);
    uint32_t nf = ptc_session_num_funcs(s);
    char *keep = calloc(nf ? nf : 1, 1);
    if (ne == (size_t)-1 || !keep) {
        free(keep);
        ptc_session_free(s);
        return cli_fail("graph", "out of memory", cli_advice(PTC_E_NOMEM));
    }
    qsort(edges, ne, sizeof(*edges), cmp_edge);
    for (uint32_t id = 0; id < nf; id++) {
        struct ptc_func_stats st;
        ptc_session_func_stats(s, id, &st);
        if (st.calls && st.calls >= min_calls)
            keep[id] = 1;
    }
    for (size_t i = 0; i < ne; i++)
        if (edges[i].count >= min_calls)
            keep[edges[i].caller] = keep[edges[i].callee] = 1;
    static char outbuf[1 << 16];
    setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
    printf("// ptcall graph format_version=1: dynamic call graph of ");
    for (const char *p = path; *p; p++)
        putchar(*p == '\n' ? ' ' : *p);
    printf("\n// nodes: functions (label: name, calls%s); edges: caller -> callee, label = calls\n",
           t.timed ? ", inclusive time" : "");
    if (t.lost_events || t.gaps)
        printf("// warning: %llu events lost at %llu gap(s): counts are lower bounds\n",
               (unsigned long long)t.lost_events, (unsigned long long)t.gaps);
    if (a.damage)
        printf("// warning: salvaged from a damaged trace: %s\n", a.damage_msg);
    printf("digraph ptcall {\n  node [shape=box, fontname=\"monospace\"];\n");
    for (uint32_t id = 0; id < nf; id++) {
        if (!keep[id])
            continue;
        const struct ptc_func_info *fi = ptc_session_func(s, id);
        struct ptc_func_stats st;
        ptc_session_func_stats(s, id, &st);
        char label[1200], tb[32] = "";
        if (t.timed) {
            char b[28];
            cli_fmt_time(b, sizeof(b), st.total, t.has_timebase);
            snprintf(tb, sizeof(tb), "\n%s", b);
        }
        snprintf(label, sizeof(label), "%s\n%llu call%s%s", fi->name,
                 (unsigned long long)st.calls, st.calls == 1 ? "" : "s", tb);
        printf("  f%u [label=", id);
        cli_dot_str(stdout, label);
        printf(", tooltip=");
        cli_dot_str(stdout, fi->module);
        printf("];\n");
    }
    for (size_t i = 0; i < ne; i++)
        if (edges[i].count >= min_calls)
            printf("  f%u -> f%u [label=\"%llu\"];\n", edges[i].caller, edges[i].callee,
                   (unsigned long long)edges[i].count);
    printf("}\n");
    if (a.damage)
        cli_warn_salvaged("graph", "the graph covers", a.damage_msg);
    free(edges);
    free(keep);
    ptc_session_free(s);
    return cli_flush_output("graph", "the graph");
}
