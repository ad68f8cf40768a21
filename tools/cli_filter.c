/* Parsing and checking of the shared filters (cli_filter.h). */
#include "cli_filter.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"

const char CLI_FILTER_USAGE[] =
    "Filters:\n"
    "  --pid P / --tid T      only process P / thread T\n"
    "  --function GLOB        only calls of matching functions and what they call (repeatable;\n"
    "                         depths then count from the matching frame)\n"
    "  --exclude GLOB         leave out matching functions and what they call (repeatable)\n"
    "  --max-depth D          only calls less than D levels deep (1 = outermost only)\n"
    "  --time START,END       only calls that start in this window, times since the recording\n"
    "                         started, with a unit: ns (default), us, ms, s (e.g. 1.5s,2s)\n"
    "  --min-duration D       only calls that last at least D (e.g. 10us)\n"
    "GLOBs are shell patterns matched against the name, the name without C++ parameters, and\n"
    "the linkage name.\n";

void cli_filter_init(struct cli_filter *cf)
{
    memset(cf, 0, sizeof(*cf));
    cf->f.funcs = cf->funcs;
    cf->f.excludes = cf->excludes;
}

int cli_parse_duration(const char *s, uint64_t *ns)
{
    if (!s || !*s || *s == '-' || *s == '+')
        return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || v < 0)
        return -1;
    double mul;
    if (!*end || !strcmp(end, "ns"))
        mul = 1;
    else if (!strcmp(end, "us"))
        mul = 1e3;
    else if (!strcmp(end, "ms"))
        mul = 1e6;
    else if (!strcmp(end, "s"))
        mul = 1e9;
    else
        return -1;
    v *= mul;
    if (v >= 1.8e19)
        return -1;
    *ns = (uint64_t)(v + 0.5);
    return 0;
}

int cli_filter_take(struct cli_filter *cf, int argc, char **argv, int *i, const char *cmd,
                    const char *usage)
{
    struct ptc_out_filter *f = &cf->f;
    const char *v;
    uint64_t n;
    int r;
    if ((r = cli_flag_value(argc, argv, i, "--pid", &v))) {
        if (r < 0 || cli_parse_u64(v, &n) || n > UINT32_MAX)
            return cli_usage_error(cmd, usage, "--pid needs a process id");
        f->have_pid = 1;
        f->pid = (uint32_t)n;
    } else if ((r = cli_flag_value(argc, argv, i, "--tid", &v))) {
        if (r < 0 || cli_parse_u64(v, &n) || n > UINT32_MAX)
            return cli_usage_error(cmd, usage, "--tid needs a thread id");
        f->have_tid = 1;
        f->tid = (uint32_t)n;
    } else if ((r = cli_flag_value(argc, argv, i, "--function", &v))) {
        if (r < 0 || !*v)
            return cli_usage_error(cmd, usage, "--function needs a name or glob");
        if (f->nfuncs == CLI_FILTER_MAX_GLOBS)
            return cli_usage_error(cmd, usage, "at most %d --function globs",
                                   CLI_FILTER_MAX_GLOBS);
        cf->funcs[f->nfuncs++] = v;
    } else if ((r = cli_flag_value(argc, argv, i, "--exclude", &v))) {
        if (r < 0 || !*v)
            return cli_usage_error(cmd, usage, "--exclude needs a name or glob");
        if (f->nexcludes == CLI_FILTER_MAX_GLOBS)
            return cli_usage_error(cmd, usage, "at most %d --exclude globs",
                                   CLI_FILTER_MAX_GLOBS);
        cf->excludes[f->nexcludes++] = v;
    } else if ((r = cli_flag_value(argc, argv, i, "--max-depth", &v))) {
        if (r < 0 || cli_parse_u64(v, &n) || !n || n > UINT32_MAX)
            return cli_usage_error(cmd, usage, "--max-depth needs a number >= 1");
        f->max_depth = (uint32_t)n;
    } else if ((r = cli_flag_value(argc, argv, i, "--min-duration", &v))) {
        if (r < 0 || cli_parse_duration(v, &f->min_dur))
            return cli_usage_error(cmd, usage,
                                   "--min-duration needs a duration such as 10us or 2ms");
    } else if ((r = cli_flag_value(argc, argv, i, "--time", &v))) {
        char a[64], b[64];
        const char *comma = r > 0 ? strchr(v, ',') : NULL;
        if (!comma || (size_t)(comma - v) >= sizeof(a) || strlen(comma + 1) >= sizeof(b))
            return cli_usage_error(cmd, usage, "--time needs START,END (e.g. 1s,2.5s)");
        memcpy(a, v, (size_t)(comma - v));
        a[comma - v] = 0;
        strcpy(b, comma + 1);
        if (cli_parse_duration(a, &f->win_start) || cli_parse_duration(b, &f->win_end) ||
            f->win_end < f->win_start)
            return cli_usage_error(cmd, usage,
                                   "--time needs START,END with START <= END (e.g. 1s,2.5s)");
        f->have_window = 1;
        cf->window_text = v;
    } else {
        return 0;
    }
    return 1;
}

static int any_match(const char *glob, const struct ptc_session *s)
{
    uint32_t nf = ptc_session_num_funcs(s);
    for (uint32_t id = 0; id < nf; id++)
        if (ptc_out_glob_match(glob, ptc_session_func(s, id)))
            return 1;
    return 0;
}

int cli_filter_check(const struct cli_filter *cf, const char *cmd, const struct ptc_session *s,
                     int timed)
{
    (void)s;
    if (!timed && (cf->f.have_window || cf->f.min_dur))
        return cli_fail(cmd, "--time and --min-duration need times, and this trace is untimed",
                        "drop them, or record with per-event timestamps (the default)");
    return 0;
}

void cli_filter_explain_empty(const struct cli_filter *cf, const char *cmd,
                              const struct ptc_session *s, uint64_t last, int ns)
{
    for (int i = 0; i < cf->f.nfuncs; i++)
        if (!any_match(cf->funcs[i], s))
            fprintf(stderr, "ptcall %s: --function '%s' matches no function of the trace: "
                            "see 'ptcall report --top 0' for the names\n",
                    cmd, cf->funcs[i]);
    if (cf->f.have_window && cf->f.win_start > last) {
        char b[40];
        cli_fmt_time(b, sizeof(b), last, ns);
        fprintf(stderr, "ptcall %s: the window --time %s lies outside the trace, which spans "
                        "0 to %s after the recording started\n",
                cmd, cf->window_text, b);
    }
    fprintf(stderr, "ptcall %s: no call matches the filters: widen or drop them\n", cmd);
}
