/* Checks of the shared filters once a trace is decoded (cli_filter.h); options.c parses
 * them. */
#include "cli_filter.h"

#include <string.h>

int cli_filter_any(const struct cli_filter *cf)
{
    const struct ptc_out_filter *f = &cf->f;
    return f->have_pid || f->have_tid || f->nfuncs || f->nexcludes || f->max_depth ||
           f->have_window || f->min_dur;
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
        if (!any_match(cf->funcs.v[i], s))
            fprintf(stderr, "ptcall %s: --function '%s' matches no function of the trace: "
                            "see 'ptcall report --top 0' for the names\n",
                    cmd, cf->funcs.v[i]);
    if (cf->f.have_window && cf->f.win_start > last) {
        char b[40];
        cli_fmt_time(b, sizeof(b), last, ns);
        fprintf(stderr, "ptcall %s: the window --time %s lies outside the trace, which spans "
                        "0 to %s after the recording started\n",
                cmd, cf->window_text, b);
    }
    fprintf(stderr, "ptcall %s: no call matches the filters: widen or drop them\n", cmd);
}
