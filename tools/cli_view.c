/* cli_view.h */
#include "cli_view.h"

#include <stdio.h>
#include <stdlib.h>

static int prepare(void *ctx, struct ptc_session *s)
{
    struct cli_view_run *r = ctx;
    r->s = s;
    r->opts.s = s;
    r->view = r->make(&r->opts, &r->ops);
    if (!r->view)
        return 1;
    struct ptc_out_run run = {.ops = r->ops, .view = r->view};
    if (r->cf)
        run.filter = r->cf->f;
    r->driver = ptc_out_driver_new(&run, s, r->a->path);
    if (r->skip_aggregates)
        ptc_session_skip_aggregates(s);
    return r->driver ? 0 : 1;
}

int cli_view_run(struct cli_view_run *r)
{
    if (!r->make)
        r->make = r->fmt->make;
    r->a->prepare = prepare;
    r->a->prepare_ctx = r;
    r->s = cli_decode(r->a, NULL, NULL, NULL, NULL);
    if (!r->s) {
        r->s = NULL; /* cli_decode freed it */
        if (r->driver) {
            ptc_out_driver_free(r->driver);
            r->driver = NULL;
        }
        if (r->view && r->ops && r->ops->free)
            r->ops->free(r->view);
        r->view = NULL;
        return 1;
    }
    r->view_status = ptc_out_driver_finish(r->driver, &r->info);
    if (r->cf && r->cf->f.have_window && r->info.last_time > r->cf->f.win_end && r->info.timed)
        fprintf(stderr, "ptcall %s: note: --time only selects what is shown: the whole trace was "
                        "decoded, because each thread's stack at the window's start comes from "
                        "its events before it, and the trace has no index of where a thread's "
                        "events lie in time (the drain writes a thread's buffer when it is full)\n",
                r->a->cmd);
    return r->view_status ? 1 : 0;
}

void cli_view_free(struct cli_view_run *r)
{
    ptc_out_driver_free(r->driver);
    r->driver = NULL;
    if (r->view && r->ops && r->ops->free)
        r->ops->free(r->view);
    r->view = NULL;
    ptc_session_free(r->s);
    r->s = NULL;
}
