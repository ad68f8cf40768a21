/* The timeline's index in memory (tl_index.c builds, saves and loads it; tl_window.c decodes
 * windows from it). Its arrays are the file's (docs/timeline-index.md), read whole. */
#ifndef PTC_DEC_TIMELINE_H
#define PTC_DEC_TIMELINE_H

#include <stdint.h>

#include "dec_core.h"
#include "ptcall/timeline.h"

#define TL_MAGIC "PTCTLIX\n"

struct tl_header {
    char magic[8];
    uint32_t version, header_size;
    uint64_t trace_bytes;
    uint64_t t0, t1;
    uint32_t nthreads, nfuncs;
    uint64_t npoints, nframes, nsums, nbigs, nsetup, nmarks, nlabels, nstr;
};

struct tl_frame {           /* struct frame at a chunk's start: ticks */
    uint32_t func, flags;
    uint64_t start, child;
};

struct tl_sum {             /* calls of one depth that returned in one chunk */
    uint32_t func, pad;     /* the function with most time (a weighted majority vote) */
    uint64_t count, busy;   /* calls, their ns */
};

struct tl_point {           /* one event chunk of a thread */
    uint64_t offset, index; /* the chunk's file offset and number */
    uint64_t t0, t1;        /* ns: its start time, its last event */
    uint64_t bytes;         /* its payload's size */
    uint64_t calls;         /* calls that returned in it */
    uint64_t frame_at;      /* the stack at its start: frames[frame_at, + depth) */
    uint64_t sum_at;        /* its summaries: sums[sum_at, + nsum), by depth */
    uint32_t depth, nsum;
    uint32_t started;       /* the thread had events before it (else it starts as usual) */
    uint32_t pad;
};

struct tl_big {             /* a call at least big_min long: drawn by whole-run views */
    uint64_t start, end;    /* ns */
    uint32_t func, depth;
};

struct tl_thr {
    uint32_t pid, tid;
    uint32_t name, process; /* string offsets */
    uint64_t point_at, npoints, big_at, nbig;
    uint64_t first, last, calls;
    uint64_t big_min;       /* ns: every call this long or longer is in its bigs */
};

struct tl_setup {           /* a chunk every window decode reads (not events, not marks) */
    uint64_t offset, index;
};

#define TL_FUNC_BLOCKING 0x1u /* a function of the runtime's module "[blocking]" */
struct tl_funcent {
    uint32_t name, file, line, flags;
};

struct ptc_tl {
    struct tl_header h;
    struct tl_thr *thr;
    struct tl_point *pts;
    struct tl_frame *frames;
    struct tl_sum *sums;
    struct tl_big *bigs;
    struct tl_setup *setup;
    struct tl_funcent *funcs;
    struct ptc_tl_mark *marks;
    uint32_t *labels;
    char *str;
};

/* Writes the message into err and returns rc: the index's and the window's one way to fail
 * (tl_index.c) */
int tl_fail(char *err, size_t n, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#define TL_DEFAULT_BUDGET (4ull << 20) /* event bytes a window or a call decodes at most */

struct pick {               /* an event chunk to decode */
    uint64_t offset, index;
    uint32_t thread;
    uint64_t point;         /* absolute index into x->pts */
};
/* Decodes the setup chunks and picks[0, np) (sorted) into s, whose call hook collects; the
 * hook's per-thread word is the track + 1. stop, when it becomes nonzero, ends the decode
 * after the chunk that set it (tl_window.c). */
int tl_decode_picks(const struct ptc_tl *x, struct ptc_session *s, const char *trace,
                    const struct pick *pk, size_t np, const int *stop, char *err, size_t n);
/* The first point of thread i whose events reach t (points are in time order). */
uint64_t tl_first_reaching(const struct ptc_tl *x, uint32_t i, uint64_t t);

/* The entry time of the call a RETURN event e just popped, converted as its exit time is, so
 * that durations are differences of times as every other view (outputs/driver.c) has them
 * (tl_index.c). */
uint64_t tl_popped_start(struct ptc_session *s, const struct ptc_call_event *e);

#endif
