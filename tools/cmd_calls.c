/* ptcall calls: the indented call sequence (uftrace-replay-like), through the calls view. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_budget.h"
#include "cli_select.h"
#include "cli_view.h"
#include "commands.h"
#include "options.h"
#include "views.h"

static int skip_crc(void *ctx, const struct ptc_chunk_header *h)
{
    (void)ctx;
    (void)h;
    return 1;
}

/* Whether the trace holds the events of one thread only (soft traces; 0 when unsure: Intel
 * PT streams, errors). Time order then is file order, and merging lines by time would only
 * cost a copy of each and memory for the window: one pass over the chunk headers decides. */
static int one_thread(const char *path)
{
    struct ptc_reader *r;
    if (ptc_reader_open(&r, path)) {
        ptc_reader_close(r);
        return 0;
    }
    ptc_reader_set_crc_skip(r, skip_crc, NULL);
    struct ptc_chunk c;
    uint32_t pid = 0, tid = 0;
    int seen = 0, rc, one = 1;
    while (one && (rc = ptc_reader_next(r, &c)) == 1) {
        uint16_t type = c.h.type;
        if (type >= PTC_CHUNK_PT_FIRST && type <= PTC_CHUNK_PT_LAST)
            one = 0;
        else if (type == PTC_CHUNK_SOFT_EVENTS || type == PTC_CHUNK_THREAD) {
            if (seen && (c.h.pid != pid || c.h.tid != tid))
                one = 0;
            pid = c.h.pid;
            tid = c.h.tid;
            seen = 1;
        }
    }
    ptc_reader_close(r);
    return one && seen && rc == 0;
}

static int run_calls(struct cli_values *o)
{
    if (o->npos > 1)
        return cli_usage_error(CMD_CALLS, "more than one trace file given");
    if (!o->npos)
        return cli_usage_error(CMD_CALLS, "no trace file given");
    struct cli_args a = {.cmd = "calls", .path = o->pos[0], .salvage = o->salvage, .threads = 1};
    const struct cli_filter *cf = &o->filter;
    /* --order time|thread; not given: time for timed traces, thread for untimed ones */
    int order = o->calls.order < 0 ? PTC_ORDER_AUTO
                : o->calls.order == 0 ? PTC_ORDER_TIME : PTC_ORDER_THREAD;
    if (order != PTC_ORDER_THREAD && one_thread(a.path))
        order = PTC_ORDER_THREAD; /* the same lines in the same order */
    int r;
    struct ptc_wbuf w;
    if (ptc_wbuf_init(&w, STDOUT_FILENO, 1 << 18))
        return cli_fail("calls", "out of memory", cli_advice(PTC_E_NOMEM));
    struct cli_view_run v = {.a = &a, .cf = cf, .make = ptc_view_calls, .skip_aggregates = 1};
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
    if (!ferr && (r = cli_filter_check(cf, "calls", v.s, t.timed))) {
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
        if (t.timed && t.resolution_ns)
            cli_print_resolution(stdout, "# note: ", t.resolution_ns);
        /* at the end, as the quality notes: the lines above are the calls of these only */
        cli_print_selection(stdout, "# note: ", v.s);
        /* within a budget: the counted functions' calls are not among the lines above */
        cli_print_budget(stdout, "# note: ", v.s);
        if (a.damage) {
            printf("warning: salvaged from a damaged trace: %s\n", a.damage_msg);
            cli_warn_salvaged("calls", "the output covers", a.damage_msg);
        }
    }
    if (cf->f.nfuncs || cf->f.have_window)
        if (!v.info.shown_calls)
            cli_filter_explain_empty(cf, "calls", v.s, v.info.last_time, t.has_timebase);
    ptc_wbuf_free(&w);
    cli_view_free(&v);
    if (ferr) {
        fprintf(stderr, "ptcall calls: cannot write the output: %s: check the output device\n",
                strerror(w.err));
        return 1;
    }
    return cli_flush_output("calls", "the output");
}

int cmd_calls(int argc, char **argv)
{
    struct cli_values o;
    int r = cli_parse(CMD_CALLS, argc, argv, &o, 0);
    if (r != CLI_GO)
        return r;
    r = run_calls(&o);
    cli_values_free(&o);
    return r;
}
