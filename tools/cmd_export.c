/* ptcall export: decoded calls in another tool's format (outputs/registry.c lists them),
 * streaming, with the shared filters. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_view.h"
#include "commands.h"
#include "views.h"

#define CHROME_DEFAULT_LIMIT (200ull << 20) /* what Perfetto UI and chrome://tracing load */

static char USAGE[4096];

static void make_usage(void)
{
    size_t n = (size_t)snprintf(USAGE, sizeof(USAGE),
                                "usage: ptcall export FILE --format F [-o OUT] [--weight calls|self] "
                                "[filters]\n"
                                "                    [--max-size SIZE | --force] [--salvage]\n"
                                "Formats:\n");
    for (const struct ptc_view_format *f = ptc_export_formats; f->name && n < sizeof(USAGE); f++)
        n += (size_t)snprintf(USAGE + n, sizeof(USAGE) - n, "  %-8s %s\n", f->name, f->summary);
    if (n < sizeof(USAGE))
        snprintf(USAGE + n, sizeof(USAGE) - n,
                 "  -o OUT          write to OUT (made whole or not at all); default stdout\n"
                 "  --weight W      folded, svg: calls (default) or self (frame width = time)\n"
                 "  --max-size SIZE stop when the output would exceed SIZE (e.g. 500M); chrome's\n"
                 "                  default is 200M, what trace viewers load\n"
                 "  --force         no size limit\n"
                 "  --salvage       export what precedes damage in a truncated or corrupt trace\n"
                 "%s"
                 "See docs/usage.md (ptcall export, Filters).\n",
                 CLI_FILTER_USAGE);
}

static int parse_size(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    if (!s || !*s || *s == '-')
        return -1;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return -1;
    unsigned shift = 0;
    if (*end == 'K' || *end == 'k')
        shift = 10, end++;
    else if (*end == 'M' || *end == 'm')
        shift = 20, end++;
    else if (*end == 'G' || *end == 'g')
        shift = 30, end++;
    if (*end || (shift && v > (UINT64_MAX >> shift)))
        return -1;
    *out = (uint64_t)v << shift;
    return 0;
}

/* Opens a temporary file beside out, renamed over it only when the export is whole. */
static int open_tmp(const char *out, char *tmp, size_t n)
{
    if ((size_t)snprintf(tmp, n, "%s.tmp-XXXXXX", out) >= n) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = mkstemp(tmp);
    if (fd >= 0)
        fchmod(fd, 0644 & ~(mode_t)0); /* mkstemp makes 0600: exports are ordinary files */
    return fd;
}

int cmd_export(int argc, char **argv)
{
    make_usage();
    static const char *const weights[] = {"calls", "self", "total", NULL};
    struct cli_args a = {.cmd = "export", .usage = USAGE, .threads = 1};
    struct cli_filter cf;
    cli_filter_init(&cf);
    const char *out = NULL, *fmtname = NULL, *v;
    const struct ptc_view_format *fmt = NULL;
    int weight = PTC_WEIGHT_CALLS, force = 0, have_limit = 0;
    uint64_t limit = 0;
    for (int i = 1; i < argc; i++) {
        int r, k;
        if ((r = cli_filter_take(&cf, argc, argv, &i, "export", USAGE))) {
            if (r != 1)
                return r;
        } else if ((r = cli_flag_value(argc, argv, &i, "--format", &v))) {
            if (r < 0 || !(fmt = ptc_view_format_find(v)))
                return cli_usage_error("export", USAGE, "--format takes one of the formats "
                                                        "listed below");
            fmtname = v;
        } else if ((r = cli_flag_value(argc, argv, &i, "-o", &v)) ||
                   (r = cli_flag_value(argc, argv, &i, "--output", &v))) {
            if (r < 0 || !*v)
                return cli_usage_error("export", USAGE, "-o needs a file name");
            out = v;
        } else if ((r = cli_flag_choice(argc, argv, &i, "--weight", weights, &k))) {
            if (r < 0)
                return cli_usage_error("export", USAGE, "--weight takes calls or self");
            weight = k;
        } else if ((r = cli_flag_value(argc, argv, &i, "--max-size", &v))) {
            if (r < 0 || parse_size(v, &limit) || !limit)
                return cli_usage_error("export", USAGE,
                                       "--max-size needs a size such as 500M or 2G");
            have_limit = 1;
        } else if (!strcmp(argv[i], "--force")) {
            force = 1;
        } else if ((r = cli_take_arg(&a, argv[i])) != CLI_ARG_TAKEN) {
            return r;
        }
    }
    int r = cli_args_done(&a);
    if (r)
        return r;
    if (!fmt)
        return cli_usage_error("export", USAGE, "--format is required");
    if (weight == PTC_WEIGHT_TOTAL && (!strcmp(fmtname, "folded") || !strcmp(fmtname, "svg")))
        return cli_usage_error("export", USAGE,
                               "--weight total would count time twice in a flame graph, "
                               "whose tools add a frame's line to its callers: use "
                               "--weight self, which makes a frame as wide as its total time");
    if (!have_limit && !force && !strcmp(fmtname, "chrome"))
        limit = CHROME_DEFAULT_LIMIT;
    if (force)
        limit = 0;

    char tmp[4096];
    int fd = STDOUT_FILENO;
    if (out && strcmp(out, "-")) {
        fd = open_tmp(out, tmp, sizeof(tmp));
        if (fd < 0) {
            char what[4200];
            snprintf(what, sizeof(what), "cannot create %s: %s", out, strerror(errno));
            return cli_fail("export", what, "check the directory and its permissions");
        }
    } else {
        out = NULL;
    }
    struct ptc_wbuf w;
    if (ptc_wbuf_init(&w, fd, 1 << 20)) {
        if (out) {
            close(fd);
            unlink(tmp);
        }
        return cli_fail("export", "out of memory", cli_advice(PTC_E_NOMEM));
    }
    w.limit = limit;
    struct cli_view_run vr = {.a = &a, .cf = &cf, .fmt = fmt};
    vr.opts.out = &w;
    vr.opts.weight = weight;
    vr.opts.title = a.path;
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
    } else if (decoded && st) {
        st = cli_fail("export", "out of memory", cli_advice(PTC_E_NOMEM));
    } else if (decoded && fmt->needs_time && !t.timed) {
        st = cli_fail("export", "this trace is untimed and the chrome format needs times",
                      "record with per-event timestamps (the default), or export "
                      "--format folded or events");
    } else if (decoded && (r = cli_filter_check(&cf, "export", vr.s, t.timed))) {
        st = r;
    } else if (decoded && !vr.info.shown_calls && (vr.info.filtered || t.calls)) {
        cli_filter_explain_empty(&cf, "export", vr.s, vr.info.last_time, t.has_timebase);
        st = 1;
    }
    if (!st && (a.damage || t.gaps || t.lost_events || !t.record_end))
        cli_print_quality(stderr, vr.s, &t);
    if (!st && a.damage)
        cli_warn_salvaged("export", "the export covers", a.damage_msg);
    ptc_wbuf_free(&w);
    cli_view_free(&vr);
    if (out) {
        if (!st && fsync(fd) && errno != EINVAL) {
            char what[4200];
            snprintf(what, sizeof(what), "cannot write %s: %s", out, strerror(errno));
            st = cli_fail("export", what, "check the disk");
        }
        if (close(fd) && !st) {
            char what[4200];
            snprintf(what, sizeof(what), "cannot write %s: %s", out, strerror(errno));
            st = cli_fail("export", what, "check the disk");
        }
        if (!st && rename(tmp, out)) {
            char what[4200];
            snprintf(what, sizeof(what), "cannot create %s: %s", out, strerror(errno));
            st = cli_fail("export", what, "check the directory and its permissions");
        }
        if (st)
            unlink(tmp);
    }
    return st;
}
