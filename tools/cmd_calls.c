/* ptcall calls: the indented call sequence (uftrace-replay-like), through the calls view. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_view.h"
#include "commands.h"
#include "views.h"

static char USAGE[2048];

static void make_usage(void)
{
    snprintf(USAGE, sizeof(USAGE),
             "usage: ptcall calls FILE [--order time|thread] [filters] [--salvage]\n"
             "  --order time    lines of all threads in time order (default for timed traces)\n"
             "  --order thread  each thread's lines in its own order, threads as the trace\n"
             "                  holds them (default for untimed traces)\n"
             "  --salvage       show what precedes damage in a truncated or corrupt trace\n"
             "%s"
             "Columns: time since the traced program started, duration (at a function's end),\n"
             "pid/tid, and the call tree. A leaf call is one line 'f();'. See docs/usage.md.\n",
             CLI_FILTER_USAGE);
}

int cmd_calls(int argc, char **argv)
{
    make_usage();
    static const char *const orders[] = {"thread", "time", NULL};
    struct cli_args a = {.cmd = "calls", .usage = USAGE, .threads = 1};
    struct cli_filter cf;
    cli_filter_init(&cf);
    int order = PTC_ORDER_AUTO;
    for (int i = 1; i < argc; i++) {
        int r, k;
        if ((r = cli_filter_take(&cf, argc, argv, &i, "calls", USAGE))) {
            if (r != 1)
                return r;
        } else if ((r = cli_flag_choice(argc, argv, &i, "--order", orders, &k))) {
            if (r < 0)
                return cli_usage_error("calls", USAGE, "--order takes time or thread");
            order = k;
        } else if ((r = cli_take_arg(&a, argv[i])) != CLI_ARG_TAKEN) {
            return r;
        }
    }
    int r = cli_args_done(&a);
    if (r)
        return r;
    struct ptc_wbuf w;
    if (ptc_wbuf_init(&w, STDOUT_FILENO, 1 << 18))
        return cli_fail("calls", "out of memory", cli_advice(PTC_E_NOMEM));
    struct cli_view_run v = {.a = &a, .cf = &cf, .make = ptc_view_calls};
    v.opts.out = &w;
    v.opts.order = order;
    int st = cli_view_run(&v);
    if (st) {
        if (w.written || w.len) {
            ptc_wb_str(&w, "# INCOMPLETE: decoding stopped at damage in the trace (see the "
                           "error on stderr)\n");
        }
        ptc_wbuf_flush(&w);
        ptc_wbuf_free(&w);
        cli_view_free(&v);
        return 1;
    }
    struct ptc_totals t;
    ptc_session_totals(v.s, &t);
    int ferr = ptc_wbuf_flush(&w);
    if (!ferr && (r = cli_filter_check(&cf, "calls", v.s, t.timed))) {
        ptc_wbuf_free(&w);
        cli_view_free(&v);
        return r;
    }
    if (!ferr) {
        uint64_t late = ptc_view_calls_out_of_order(v.view);
        if (late)
            printf("# note: %llu lines came later than the reorder window (%u lines) could "
                   "hold and are out of time order; use --order thread for each thread's own "
                   "order\n",
                   (unsigned long long)late, 1u << 18);
        cli_print_quality(stdout, v.s, &t);
        if (a.damage) {
            printf("warning: salvaged from a damaged trace: %s\n", a.damage_msg);
            cli_warn_salvaged("calls", "the output covers", a.damage_msg);
        }
    }
    if (cf.f.nfuncs || cf.f.have_window)
        if (!v.info.shown_calls)
            cli_filter_explain_empty(&cf, "calls", v.s, v.info.last_time, t.has_timebase);
    ptc_wbuf_free(&w);
    cli_view_free(&v);
    if (ferr) {
        fprintf(stderr, "ptcall calls: cannot write the output: %s: check the output device\n",
                strerror(w.err));
        return 1;
    }
    return cli_flush_output("calls", "the output");
}
