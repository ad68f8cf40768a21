/* The views' constructors (one file each), for registry.c and the commands. */
#ifndef PTCALL_VIEWS_H
#define PTCALL_VIEWS_H

#include "output.h"

void *ptc_view_calls(const struct ptc_view_opts *o, const struct ptc_output_ops **ops);
/* Lines that came later than the reorder window could hold (time order). */
uint64_t ptc_view_calls_out_of_order(const void *view);
void *ptc_view_chrome(const struct ptc_view_opts *o, const struct ptc_output_ops **ops);
void *ptc_view_events_csv(const struct ptc_view_opts *o, const struct ptc_output_ops **ops);
void *ptc_view_events_jsonl(const struct ptc_view_opts *o, const struct ptc_output_ops **ops);
void *ptc_view_folded(const struct ptc_view_opts *o, const struct ptc_output_ops **ops);
void *ptc_view_paths(const struct ptc_view_opts *o, const struct ptc_output_ops **ops);
void *ptc_view_speedscope(const struct ptc_view_opts *o, const struct ptc_output_ops **ops);
void *ptc_view_perfetto(const struct ptc_view_opts *o, const struct ptc_output_ops **ops);
/* flame-json (flametree.c); _found: whether a tree matched opts.flame_thread (after end). */
void *ptc_view_flametree(const struct ptc_view_opts *o, const struct ptc_output_ops **ops);
int ptc_view_flametree_found(const void *view);
void *ptc_view_svg(const struct ptc_view_opts *o, const struct ptc_output_ops **ops);

/* How a call ended, as a word ("exit", "unwind", "repair", "landing", "broken", "end"). */
const char *ptc_out_how_name(unsigned how);

#endif
