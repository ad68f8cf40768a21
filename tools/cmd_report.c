/* ptcall report: per-function calls, inclusive and self time, hottest first. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "commands.h"

static const char USAGE[] =
    "usage: ptcall report FILE [--top N] [--sort calls|self|total] [--format table|csv|json]\n"
    "                          [--threads N] [--salvage]\n"
    "  --top N       show the N hottest functions (default 20 for table, all for csv/json;\n"
    "                0 = all)\n"
    "  --sort KEY    calls, self or total (default total, or calls for untimed traces)\n"
    "  --format F    table (for people), csv or json (versioned, see docs/usage.md)\n"
    "  --threads N   decode with N threads, one per traced thread at most (default 1;\n"
    "                0 = one per CPU); the output is the same\n"
    "  --salvage     analyse what precedes damage in a truncated or corrupt trace\n";

enum sort_key { SORT_DEFAULT, SORT_CALLS, SORT_SELF, SORT_TOTAL };
enum fmt { FMT_TABLE, FMT_CSV, FMT_JSON };

struct row {
    uint32_t id;
    const struct ptc_func_info *fi;
    struct ptc_func_stats st;
};

static enum sort_key g_sort;

static int cmp_row(const void *a, const void *b)
{
    const struct row *x = a, *y = b;
    uint64_t kx, ky;
    switch (g_sort) {
    case SORT_SELF:
        kx = x->st.self, ky = y->st.self;
        break;
    case SORT_TOTAL:
        kx = x->st.total, ky = y->st.total;
        break;
    default:
        kx = x->st.calls, ky = y->st.calls;
        break;
    }
    if (kx != ky)
        return kx > ky ? -1 : 1;
    if (x->st.calls != y->st.calls)
        return x->st.calls > y->st.calls ? -1 : 1;
    int c = strcmp(x->fi->name, y->fi->name);
    if (c)
        return c;
    return x->id < y->id ? -1 : x->id > y->id;
}

static double pct(uint64_t v, uint64_t total) { return total ? 100.0 * (double)v / (double)total : 0.0; }

static void print_table(const char *path, struct ptc_session *s, const struct ptc_totals *t,
                        struct row *rows, size_t n, size_t shown)
{
    int timed = t->timed;
    int ns = t->has_timebase;
    printf("# ptcall report of %s: %s backend, %llu process%s, %llu thread%s, %llu events, "
           "%llu calls\n",
           path, cli_backend_name(t->backend), (unsigned long long)t->processes,
           t->processes == 1 ? "" : "es", (unsigned long long)t->threads,
           t->threads == 1 ? "" : "s", (unsigned long long)t->events,
           (unsigned long long)t->calls);
    if (!timed)
        printf("# untimed trace (recorded without per-event timestamps): no time columns\n");
    else if (!ns)
        printf("# no time base in the trace: times are in TSC ticks\n");
    else {
        char b[32];
        cli_fmt_time(b, sizeof(b), t->total_time, 1);
        printf("# time in traced functions: %s (shares are of this total)\n", b);
    }
    if (timed)
        printf("%12s %14s %7s %14s %7s  %s\n", "calls", "total", "total%", "self", "self%",
               "function [module]");
    else
        printf("%12s  %s\n", "calls", "function [module]");
    for (size_t i = 0; i < shown; i++) {
        const struct row *r = &rows[i];
        if (timed) {
            char tb[32], sb[32];
            cli_fmt_time(tb, sizeof(tb), r->st.total, ns);
            cli_fmt_time(sb, sizeof(sb), r->st.self, ns);
            printf("%12llu %14s %6.1f%% %14s %6.1f%%  %s [%s]\n",
                   (unsigned long long)r->st.calls, tb, pct(r->st.total, t->total_time), sb,
                   pct(r->st.self, t->total_time), r->fi->name, cli_base(r->fi->module));
        } else {
            printf("%12llu  %s [%s]\n", (unsigned long long)r->st.calls, r->fi->name,
                   cli_base(r->fi->module));
        }
    }
    if (shown < n)
        printf("(%zu more function%s called; --top 0 shows all)\n", n - shown,
               n - shown == 1 ? "" : "s");
    printf("events %llu, threads %llu, processes %llu, gaps %llu, repairs %llu, unwound %llu, "
           "unmatched %llu, losses %llu\n",
           (unsigned long long)t->events, (unsigned long long)t->threads,
           (unsigned long long)t->processes, (unsigned long long)t->gaps,
           (unsigned long long)t->repairs, (unsigned long long)t->unwound,
           (unsigned long long)t->unmatched, (unsigned long long)t->lost_events);
    if (t->whole_calls)
        printf("(%llu calls of leaf functions were recorded as one record each, and count as two events: "
               "entry and return)\n", (unsigned long long)t->whole_calls);
    cli_print_quality(stdout, s, t);
}

static void print_csv(const char *path, const struct ptc_totals *t, struct row *rows,
                      size_t shown)
{
    const char *unit = !t->timed ? "none" : t->has_timebase ? "ns" : "ticks";
    printf("# ptcall report csv format_version=1 trace=");
    cli_csv_str(stdout, path);
    printf(" time_unit=%s events=%llu threads=%llu processes=%llu gaps=%llu repairs=%llu "
           "unwound=%llu unmatched=%llu lost_events=%llu\n",
           unit, (unsigned long long)t->events, (unsigned long long)t->threads,
           (unsigned long long)t->processes, (unsigned long long)t->gaps,
           (unsigned long long)t->repairs, (unsigned long long)t->unwound,
           (unsigned long long)t->unmatched, (unsigned long long)t->lost_events);
    printf("rank,function,linkage_name,module,file,line,calls,total,self,total_pct,self_pct\n");
    for (size_t i = 0; i < shown; i++) {
        const struct row *r = &rows[i];
        printf("%zu,", i + 1);
        cli_csv_str(stdout, r->fi->name);
        putchar(',');
        cli_csv_str(stdout, r->fi->linkage_name);
        putchar(',');
        cli_csv_str(stdout, r->fi->module);
        putchar(',');
        cli_csv_str(stdout, r->fi->file);
        printf(",%u,%llu,", r->fi->line, (unsigned long long)r->st.calls);
        if (t->timed)
            printf("%llu,%llu,%.2f,%.2f\n", (unsigned long long)r->st.total,
                   (unsigned long long)r->st.self, pct(r->st.total, t->total_time),
                   pct(r->st.self, t->total_time));
        else
            printf(",,,\n");
    }
}

static void print_json(const char *path, struct ptc_session *s, const struct ptc_totals *t,
                       struct row *rows, size_t shown, int damage, const char *damage_msg)
{
    const char *unit = !t->timed ? "none" : t->has_timebase ? "ns" : "ticks";
    printf("{\n  \"format_version\": 1,\n  \"tool\": \"ptcall report\",\n  \"trace\": ");
    cli_json_str(stdout, path);
    printf(",\n  \"backend\": \"%s\",\n  \"timed\": %s,\n  \"time_unit\": \"%s\",\n",
           cli_backend_name(t->backend), t->timed ? "true" : "false", unit);
    printf("  \"totals\": {\"events\": %llu, \"whole_calls\": %llu, \"calls\": %llu, \"threads\": %llu, "
           "\"processes\": %llu, \"gaps\": %llu, \"missing_chunks\": %llu, \"lost_events\": "
           "%llu, \"lost_pt_units\": %llu, \"repairs\": %llu, \"unwound\": %llu, \"unmatched\": "
           "%llu, \"broken_frames\": %llu, \"open_at_end\": %llu, \"bad_stubs\": %llu, "
           "\"fork_unknown\": %llu, \"lossy_threads\": %llu, \"complete\": %s, ",
           (unsigned long long)t->events, (unsigned long long)t->whole_calls,
           (unsigned long long)t->calls, (unsigned long long)t->threads,
           (unsigned long long)t->processes, (unsigned long long)t->gaps,
           (unsigned long long)t->missing_chunks,
           (unsigned long long)t->lost_events, (unsigned long long)t->lost_other,
           (unsigned long long)t->repairs, (unsigned long long)t->unwound,
           (unsigned long long)t->unmatched, (unsigned long long)t->broken_frames,
           (unsigned long long)t->open_at_end, (unsigned long long)t->bad_stubs,
           (unsigned long long)t->fork_unknown, (unsigned long long)t->lossy_threads,
           t->record_end && !damage ? "true" : "false");
    if (t->timed)
        printf("\"total_time\": %llu},\n", (unsigned long long)t->total_time);
    else
        printf("\"total_time\": null},\n");
    printf("  \"damage\": ");
    if (damage)
        cli_json_str(stdout, damage_msg);
    else
        printf("null");
    printf(",\n  \"functions\": [");
    for (size_t i = 0; i < shown; i++) {
        const struct row *r = &rows[i];
        printf("%s\n    {\"name\": ", i ? "," : "");
        cli_json_str(stdout, r->fi->name);
        printf(", \"linkage_name\": ");
        cli_json_str(stdout, r->fi->linkage_name);
        printf(", \"module\": ");
        cli_json_str(stdout, r->fi->module);
        printf(", \"file\": ");
        cli_json_str(stdout, r->fi->file);
        printf(", \"line\": %u, \"calls\": %llu, ", r->fi->line,
               (unsigned long long)r->st.calls);
        if (t->timed)
            printf("\"total\": %llu, \"self\": %llu, \"total_pct\": %.2f, \"self_pct\": %.2f}",
                   (unsigned long long)r->st.total, (unsigned long long)r->st.self,
                   pct(r->st.total, t->total_time), pct(r->st.self, t->total_time));
        else
            printf("\"total\": null, \"self\": null, \"total_pct\": null, \"self_pct\": null}");
    }
    printf("\n  ],\n  \"uncalled\": [");
    int first = 1;
    uint32_t nf = ptc_session_num_funcs(s);
    for (uint32_t id = 0; id < nf; id++) {
        struct ptc_func_stats st;
        ptc_session_func_stats(s, id, &st);
        if (st.calls)
            continue;
        printf("%s", first ? "" : ", ");
        cli_json_str(stdout, ptc_session_func(s, id)->name);
        first = 0;
    }
    printf("]\n}\n");
}

int cmd_report(int argc, char **argv)
{
    static const char *const sort_keys[] = {"calls", "self", "total", NULL};
    static const char *const formats[] = {"table", "csv", "json", NULL};
    struct cli_args a = {.cmd = "report", .usage = USAGE, .threads = 1};
    const char *v;
    uint64_t top = 0;
    int have_top = 0;
    enum fmt fmt = FMT_TABLE;
    g_sort = SORT_DEFAULT;
    for (int i = 1; i < argc; i++) {
        int r, k;
        if ((r = cli_flag_value(argc, argv, &i, "--top", &v))) {
            if (r < 0 || cli_parse_u64(v, &top))
                return cli_usage_error("report", USAGE, "--top needs a number");
            have_top = 1;
        } else if ((r = cli_flag_choice(argc, argv, &i, "--sort", sort_keys, &k))) {
            if (r < 0)
                return cli_usage_error("report", USAGE, "--sort takes calls, self or total");
            g_sort = (enum sort_key)(SORT_CALLS + k);
        } else if ((r = cli_flag_choice(argc, argv, &i, "--format", formats, &k))) {
            if (r < 0)
                return cli_usage_error("report", USAGE, "--format takes table, csv or json");
            fmt = (enum fmt)(FMT_TABLE + k);
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
    if (g_sort == SORT_DEFAULT)
        g_sort = t.timed ? SORT_TOTAL : SORT_CALLS;
    if ((g_sort == SORT_SELF || g_sort == SORT_TOTAL) && !t.timed) {
        ptc_session_free(s);
        return cli_fail("report", "--sort self/total needs times and this trace is untimed",
                        "use --sort calls, or record with per-event timestamps");
    }
    uint32_t nf = ptc_session_num_funcs(s);
    struct row *rows = malloc((nf ? nf : 1) * sizeof(*rows));
    if (!rows) {
        ptc_session_free(s);
        return cli_fail("report", "out of memory", cli_advice(PTC_E_NOMEM));
    }
    size_t n = 0;
    for (uint32_t id = 0; id < nf; id++) {
        rows[n].id = id;
        rows[n].fi = ptc_session_func(s, id);
        ptc_session_func_stats(s, id, &rows[n].st);
        if (rows[n].st.calls || rows[n].st.total)
            n++;
    }
    qsort(rows, n, sizeof(*rows), cmp_row);
    if (!have_top)
        top = fmt == FMT_TABLE ? 20 : 0;
    size_t shown = top && top < n ? (size_t)top : n;
    static char outbuf[1 << 16];
    setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
    if (a.damage)
        cli_warn_salvaged("report", "the figures cover", a.damage_msg);
    switch (fmt) {
    case FMT_TABLE:
        print_table(path, s, &t, rows, n, shown);
        if (a.damage)
            printf("warning: salvaged from a damaged trace: %s\n", a.damage_msg);
        break;
    case FMT_CSV:
        print_csv(path, &t, rows, shown);
        break;
    case FMT_JSON:
        print_json(path, s, &t, rows, shown, a.damage, a.damage_msg);
        break;
    }
    free(rows);
    ptc_session_free(s);
    return cli_flush_output("report", "the report");
}
