/* The one way out: every view of decoded calls (the call sequence, timelines, flame graphs,
 * event rows, filtered aggregates) implements struct ptc_output_ops in one file of this
 * folder, and the driver (driver.c) feeds it. The driver sits on the session's call hook
 * and does, once for every view, what each would otherwise redo: the path from the root
 * of each call, self time, the filters (process, thread, function, depth, time window,
 * minimum duration) and the order of events. Adding a format is one file here and one row
 * in registry.c. */
#ifndef PTCALL_OUTPUT_H
#define PTCALL_OUTPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ptcall/decode.h"
#include "wbuf.h"

/* One event as a view sees it. Times are on the recording's time scale (ns when the trace
 * has a time base, else TSC ticks) and relative to the recording's start (info->origin
 * subtracted). */
struct ptc_out_event {
    uint32_t pid, tid;
    uint32_t depth;         /* 0 = the outermost frame shown (after --function) */
    uint32_t func;          /* function id; UINT32_MAX where none (gap, fork) */
    const uint32_t *path;   /* enter/return: depth + 1 function ids, root first, ending
                               with func */
    uint64_t time;          /* when it happened: enter: entry; return: the return */
    uint64_t start;         /* return: the entry's time */
    uint64_t dur;           /* return: duration */
    uint64_t self;          /* return: duration minus time in callees that were shown */
    uint64_t count;         /* gap: events lost (0 unknown); fork: the child's pid;
                               forked: frames inherited from the parent; mark: the label's
                               id (ptc_session_mark_label); landing: the frames left other
                               than by their exit since the thread's last entry or exit (0:
                               nothing unwound, as at the first return of setjmp) */
    uint8_t kind;           /* enum ptc_call_kind (decode.h) */
    uint8_t how;            /* return: enum ptc_return_how */
    uint8_t has_time;
    uint8_t inherited;      /* a frame inherited across fork: its enter (given right after
                               the FORKED event, outermost first; not a call) and its return */
    uint8_t before;         /* return of a call entered before its thread's window began (an
                               attach, a snapshot): no enter preceded it, start is the window's
                               start, count its level then (1: innermost); a lower bound */
    uintptr_t *thread_user; /* a word per (view, thread), starts 0: the view's own state */
    uint32_t *frame_user;   /* enter/return: a word per frame for the view (0 at the frame's
                               enter; still 0 at the return of a frame whose enter the view
                               never saw, e.g. one inherited across fork) */
    const uint32_t *parent_user; /* enter/return: the caller's word; NULL at depth 0 */
};

/* What the filters keep (options shared by export, calls, report and graph). */
struct ptc_out_filter {
    int have_pid, have_tid;
    uint32_t pid, tid;
    const char **funcs;     /* --function GLOB: only these and what they call */
    int nfuncs;
    const char **excludes;  /* --exclude GLOB: not these, nor what they call */
    int nexcludes;
    uint32_t max_depth;     /* --max-depth D: depth < D (0: no limit) */
    int have_window;        /* --time START,END: calls that start inside [START, END] */
    uint64_t win_start, win_end;
    uint64_t min_dur;       /* --min-duration D: calls that last at least D */
};

/* Facts a view may print at begin and end. */
struct ptc_out_info {
    const struct ptc_session *s;
    const char *trace;      /* the trace file's path */
    int timed;              /* events carry times */
    int ns;                 /* times are ns (else ticks) */
    uint64_t origin;        /* the recording's start, already subtracted from every time */
    const struct ptc_out_filter *filter;
    int filtered;           /* any filter is set */
    /* at end: */
    uint64_t shown_calls;   /* enter events handed to the view */
    uint64_t shown_marks;   /* mark events handed to the view */
    uint64_t last_time;     /* the latest event's time (relative): the trace's span */
};

/* What a view's begin returns when the trace lacks what it needs (times), so the command
 * can say so; nothing has been written then. Other non-zero returns: out of memory, or a
 * write error the view's buffer holds. */
#define PTC_VIEW_E_UNTIMED 3

struct ptc_output_ops {
    const char *name;
    int (*begin)(void *view, const struct ptc_out_info *info);
    int (*thread_start)(void *view, const struct ptc_out_event *e);
    int (*enter)(void *view, const struct ptc_out_event *e);
    int (*ret)(void *view, const struct ptc_out_event *e);
    int (*gap)(void *view, const struct ptc_out_event *e);
    /* fork (PTC_CALL_FORK, in the parent), forked (PTC_CALL_FORKED, a child's start) and
     * spawn (PTC_CALL_SPAWN, in the parent: posix_spawn; the child inherits nothing) */
    int (*fork)(void *view, const struct ptc_out_event *e);
    /* unmatched exits and landing pads (NULL: not shown) */
    int (*note)(void *view, const struct ptc_out_event *e);
    /* ptcall_mark(label) (PTC_CALL_MARK): count = the label's id (ptc_session_mark_label),
     * depth = the shown stack's depth there (NULL: not shown) */
    int (*mark)(void *view, const struct ptc_out_event *e);
    int (*thread_end)(void *view, uint32_t pid, uint32_t tid, uintptr_t *thread_user);
    int (*end)(void *view, const struct ptc_out_info *info);
    void (*free)(void *view);
};

/* Thresholds and layout of the hot-paths view (paths.c). */
enum ptc_paths_format { PTC_PATHS_TABLE = 0, PTC_PATHS_CSV = 1, PTC_PATHS_JSON = 2 };
struct ptc_paths_opts {
    uint64_t min_calls;     /* a path with at least this many calls passes (0: not used) */
    double min_share;       /* a path with at least this % of the time (untimed: of the
                               calls) passes */
    uint64_t top;           /* at most this many rows (0: all) */
    int format;             /* enum ptc_paths_format */
};

/* How views are made: one row per format (registry.c). */
struct ptc_view_opts {
    struct ptc_wbuf *out;   /* where the view writes */
    const struct ptc_session *s;
    int weight;             /* enum ptc_weight, for views that weigh frames */
    int by;                 /* enum ptc_by (aggregate.h), for aggregates */
    const struct ptc_paths_opts *paths;
    const char *title;
    int order;              /* enum ptc_order, for views that print lines */
    size_t reorder_window;  /* lines held to put threads in time order (0: default) */
    const char *flame_thread; /* flame-json: the trees written: "all" (the threads merged), a
                                 TID, or NULL (every thread's and all) */
    int svg_static;         /* svg: no script (zoom, search), for pages that show it as an image */
};
/* AUTO: time order when the trace has times */
enum ptc_order { PTC_ORDER_THREAD = 0, PTC_ORDER_TIME = 1, PTC_ORDER_AUTO = 2 };
enum ptc_weight { PTC_WEIGHT_CALLS = 0, PTC_WEIGHT_SELF = 1, PTC_WEIGHT_TOTAL = 2 };

struct ptc_view_format {
    const char *name;
    const char *summary;
    int needs_time;         /* refuses untimed traces */
    /* Makes the view (returns NULL when out of memory). */
    void *(*make)(const struct ptc_view_opts *o, const struct ptc_output_ops **ops);
};
/* The formats of `ptcall export`, NULL-terminated by name. */
extern const struct ptc_view_format ptc_export_formats[];
const struct ptc_view_format *ptc_view_format_find(const char *name);

/* Matches a shell glob (fnmatch) against a function's display name, its short name (C++
 * parameters dropped) and its linkage name. */
int ptc_out_glob_match(const char *glob, const struct ptc_func_info *fi);

/* The driver. */
struct ptc_out_run {
    const struct ptc_output_ops *ops;
    void *view;
    struct ptc_out_filter filter;
};
struct ptc_out_driver;
/* Makes a driver for run (copied; the strings it points to must outlive it) on session s,
 * whose call hook and thread-end hook it sets. Returns NULL when out of memory. */
struct ptc_out_driver *ptc_out_driver_new(const struct ptc_out_run *run, struct ptc_session *s,
                                          const char *trace);
/* After decoding: hands out what is held, calls end. Returns 0, or the first non-zero
 * status a view returned (write errors). info gets the final figures when not NULL. */
int ptc_out_driver_finish(struct ptc_out_driver *d, struct ptc_out_info *info);
/* Whether a view failed during decoding (the rest of the events were not shown). */
int ptc_out_driver_failed(const struct ptc_out_driver *d);
void ptc_out_driver_free(struct ptc_out_driver *d);

/* Name helpers shared by views. */
/* A demangled C++ name without its parameter list and qualifiers ("ns::f(int) const" ->
 * "ns::f"), in buf; the name itself when there is nothing to drop. */
const char *ptc_out_short_name(const char *name, char *buf, size_t n);
const char *ptc_out_base(const char *path);

#endif
