/* ptcall export: decoded calls in another tool's format (outputs/registry.c lists them),
 * streaming, with the shared filters. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_budget.h"
#include "cli_view.h"
#include "ptc_outfile.h"
#include "commands.h"
#include "options.h"
#include "views.h"

#define CHROME_DEFAULT_LIMIT (200ull << 20) /* about what Perfetto UI loads of JSON */

static int run_export(struct cli_values *o)
{
    if (o->npos > 1)
        return cli_usage_error(CMD_EXPORT, "more than one trace file given");
    if (!o->npos)
        return cli_usage_error(CMD_EXPORT, "no trace file given");
    struct cli_args a = {.cmd = "export", .path = o->pos[0], .salvage = o->salvage, .threads = 1};
    const struct cli_filter *cf = &o->filter;
    if (o->export_.format < 0)
        return cli_usage_error(CMD_EXPORT, "--format is required");
    /* the option's words are the registry's names, in its order */
    const struct ptc_view_format *fmt = &ptc_export_formats[o->export_.format];
    const char *fmtname = fmt->name, *out = o->output;
    int weight = o->export_.weight, force = o->export_.force, r;
    int have_limit = cli_given(o, "--max-size") != 0;
    uint64_t limit = o->export_.max_size;
    if (weight == PTC_WEIGHT_TOTAL && (!strcmp(fmtname, "folded") || !strcmp(fmtname, "svg")))
        return cli_usage_error(CMD_EXPORT,
                               "--weight total would count time twice in a flame graph, "
                               "whose tools add a frame's line to its callers: use "
                               "--weight self, which makes a frame as wide as its total time");
    if (o->export_.svg_static && strcmp(fmtname, "svg"))
        return cli_usage_error(CMD_EXPORT, "--svg-static applies to --format svg only "
                                           "(the other formats carry no script)");
    if (!have_limit && !force && !strcmp(fmtname, "chrome"))
        limit = CHROME_DEFAULT_LIMIT;
    if (force)
        limit = 0;

    struct ptc_outfile of = {.fd = STDOUT_FILENO};
    int fd = STDOUT_FILENO;
    if (out && strcmp(out, "-")) {
        int e = ptc_outfile_open(&of, out, 0644); /* exports are ordinary files */
        if (e) {
            char what[4200];
            snprintf(what, sizeof(what), "cannot create %s: %s", out, strerror(-e));
            return cli_fail("export", what, "check the directory and its permissions");
        }
        fd = of.fd;
    } else {
        out = NULL;
    }
    struct ptc_wbuf w;
    if (ptc_wbuf_init(&w, fd, 1 << 20)) {
        if (out)
            ptc_outfile_abort(&of);
        return cli_fail("export", "out of memory", cli_advice(PTC_E_NOMEM));
    }
    w.limit = limit;
    struct cli_view_run vr = {.a = &a, .cf = cf, .fmt = fmt, .skip_aggregates = 1};
    vr.opts.out = &w;
    vr.opts.weight = weight;
    vr.opts.title = a.path;
    vr.opts.svg_static = o->export_.svg_static;
    int st = cli_view_run(&vr);
    int decoded = vr.s != NULL; /* else cli_decode() said what went wrong */
    struct ptc_totals t;
    memset(&t, 0, sizeof(t));
    if (decoded)
        ptc_session_totals(vr.s, &t);
    int wrote = ptc_wbuf_flush(&w) == 0;
    if (w.over_limit) {
        char what[200];
        snprintf(what, sizeof(what), "the %s export would exceed %llu %s", fmtname,
                 (unsigned long long)(limit >= (1u << 20) ? limit >> 20 : limit >> 10),
                 limit >= (1u << 20) ? "MiB" : "KiB");
        st = cli_fail("export", what,
                      "viewers do not load more: narrow it with --time START,END, "
                      "--function GLOB, --tid T, --max-depth D or --min-duration D, "
                      "or pass --max-size SIZE or --force");
    } else if (!wrote) {
        char what[300];
        snprintf(what, sizeof(what), "cannot write %s: %s", out ? out : "the output",
                 strerror(w.err));
        st = cli_fail("export", what, "check the disk or the output device");
    } else if (decoded && st && vr.view_status == PTC_VIEW_E_UNTIMED && !fmt->needs_time) {
        /* folded and svg weigh frames by time only when the trace has times */
        char what[200];
        snprintf(what, sizeof(what), "this trace is untimed and --weight %s needs times",
                 weight == PTC_WEIGHT_SELF ? "self" : "total");
        st = cli_fail("export", what,
                      "use --weight calls (the default), or record with per-event timestamps");
    } else if (decoded && st && vr.view_status != PTC_VIEW_E_UNTIMED) {
        st = cli_fail("export", "out of memory", cli_advice(PTC_E_NOMEM));
    } else if (decoded && fmt->needs_time && !t.timed) {
        char what[200];
        snprintf(what, sizeof(what), "this trace is untimed and the %s format needs times",
                 fmtname);
        st = cli_fail("export", what,
                      "record with per-event timestamps (the default), or export "
                      "--format folded or events");
    } else if (decoded && !vr.info.shown_calls && !vr.info.filtered &&
               !strcmp(fmtname, "speedscope")) {
        /* speedscope opens no file without a profile */
        st = cli_fail("export", "the trace holds no calls: a speedscope file needs at least one",
                      "check that the program ran instrumented code (ptcall report FILE)");
    } else if (decoded && (r = cli_filter_check(cf, "export", vr.s, t.timed))) {
        st = r;
    } else if (decoded && !vr.info.shown_calls && vr.info.filtered) {
        /* (unfiltered, an export shows every call there is: empty only for a trace of none) */
        cli_filter_explain_empty(cf, "export", vr.s, vr.info.last_time, t.has_timebase);
        st = 1;
    }
    if (!st && (a.damage || t.gaps || t.lost_events || !t.record_end))
        cli_print_quality(stderr, vr.s, &t);
    if (!st && a.damage)
        cli_warn_salvaged("export", "the export covers", a.damage_msg);
    /* within a budget: counted functions have no events, so no place in any export */
    if (!st && decoded)
        cli_print_budget(stderr, "ptcall export: note: ", vr.s);
    /* svg and chrome carry the ticker's period in the file; the others only figures */
    if (!st && decoded && t.timed && t.resolution_ns && strcmp(fmtname, "svg") &&
        strcmp(fmtname, "chrome"))
        cli_print_resolution_raw(stderr, "ptcall export: note: ", t.resolution_ns);
    ptc_wbuf_free(&w);
    cli_view_free(&vr);
    if (out && st) {
        ptc_outfile_abort(&of);
    } else if (out) {
        int e = ptc_outfile_commit(&of);
        if (e) {
            char what[4200];
            snprintf(what, sizeof(what), "cannot write %s: %s", out, strerror(-e));
            st = cli_fail("export", what, "check the disk, the directory and its permissions");
        }
    }
    return st;
}

int cmd_export(int argc, char **argv)
{
    struct cli_values o;
    int r = cli_parse(CMD_EXPORT, argc, argv, &o, 0);
    if (r != CLI_GO)
        return r;
    r = run_export(&o);
    cli_values_free(&o);
    return r;
}
