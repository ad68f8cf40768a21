/* cli_view.h */
#include "cli_view.h"

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
