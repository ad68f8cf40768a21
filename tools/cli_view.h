/* Running a view (outputs/) over a trace for a command: decoding through the output driver,
 * with the shared filters, and the checks every such command makes. */
#ifndef PTCALL_CLI_VIEW_H
#define PTCALL_CLI_VIEW_H

#include "cli_common.h"
#include "cli_filter.h"
#include "output.h"

struct cli_view_run {
    struct cli_args *a;
    const struct cli_filter *cf;
    int skip_aggregates;                /* the command reads no per-function figures of the
                                           session (export, calls) */
    /* makes the view once the session exists */
    const struct ptc_view_format *fmt;  /* or: */
    void *(*make)(const struct ptc_view_opts *o, const struct ptc_output_ops **ops);
    struct ptc_view_opts opts;          /* out, weight, by, title; s is filled in */
    /* results */
    struct ptc_session *s;
    void *view;
    const struct ptc_output_ops *ops;
    struct ptc_out_driver *driver;
    struct ptc_out_info info;
    int view_status;                    /* the driver's status: 0, PTC_VIEW_E_UNTIMED (the
                                           view refused an untimed trace), or another
                                           failure of a view */
};

/* Decodes and runs the view. Returns 0, or the exit status after printing why (decoding
 * failed, out of memory, a view failed); r->s stays valid on 0 (free with
 * cli_view_free()). */
int cli_view_run(struct cli_view_run *r);
void cli_view_free(struct cli_view_run *r);

#endif
